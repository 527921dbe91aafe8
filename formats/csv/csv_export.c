/*
 * csv_export.c - the CSV exporter (see csv_export.h and formats/CSV-SCHEMA.md).
 *
 * Each event file's columns are the common ones (times, name, type, track,
 * NVTX domain and category, flags) followed by that kind's own. The column
 * lists below are the schema: a row writer writes exactly its file's columns,
 * in that order, which test_csv_export checks against these arrays' lengths.
 */
#include "formats/csv/csv_export.h"

#include "formats/csv/csv_out.h"
#include "gpdl-config.h"
#include "lib/common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))
/* Derived measures (blocks per SM, bandwidth, ...) to the millionth. */
#define MEASURE_DECIMALS 6
/* Each file's own buffer, which goes to its stream in big blocks. */
#define CSV_EXPORT_BUFFER (64u << 10)

const char *const csv_export_file_names[CSV_FILE_COUNT] = {
	[CSV_FILE_TRACE] = "trace.csv",         [CSV_FILE_PROCESSES] = "processes.csv",
	[CSV_FILE_THREADS] = "threads.csv",     [CSV_FILE_DEVICES] = "devices.csv",
	[CSV_FILE_COUNTERS] = "counters.csv",   [CSV_FILE_RANGES] = "ranges.csv",
	[CSV_FILE_OPERATORS] = "operators.csv", [CSV_FILE_RUNTIME] = "runtime.csv",
	[CSV_FILE_MARKS] = "marks.csv",         [CSV_FILE_KERNELS] = "kernels.csv",
	[CSV_FILE_MEMCPY] = "memcpy.csv",       [CSV_FILE_MEMSET] = "memset.csv",
	[CSV_FILE_MEMORY] = "memory.csv",       [CSV_FILE_COMMUNICATION] = "communication.csv",
};

/* ---- the schema ---------------------------------------------------------- */

#define EVENT_COLUMNS                                                                   \
	"start_ns", "end_ns", "dur_ns", "name", "type", "pid", "tid", "thread", "domain",     \
	"category", "open_at_exit", "unbalanced_pop", "start_end", "name_truncated"
#define GPU_COLUMNS "device", "context", "stream", "correlation", "external_id"

static const char *const trace_cols[] = {
	"format_version", "recorded_by", "exported_by", "host", "pid", "rank", "local_rank",
	"world_size", "dist_backend", "command_line", "clock_domain", "wall_offset_ns",
	"start_ns", "end_ns", "duration_ns", "ncpus", "sources", "events", "counters", "drops",
	"damage_offset", "damage_reason",
};
static const char *const process_cols[] = {
	"pid", "ppid", "start_ns", "end_ns", "exit_status", "killed", "rank", "local_rank",
	"world_size", "backend", "command_line",
};
static const char *const thread_cols[] = {
	"thread", "kind", "pid", "tid", "name", "start_ns", "end_ns", "device", "context",
	"stream", "events", "dropped",
};
static const char *const device_cols[] = {
	"id", "name", "sm_count", "max_threads_per_sm", "max_threads_per_block",
	"max_blocks_per_sm", "warp_size", "regs_per_sm", "regs_per_block", "smem_per_sm_bytes",
	"smem_per_block_bytes", "total_memory_bytes", "clock_khz", "cc_major", "cc_minor",
};
static const char *const counter_cols[] = {"ts_ns", "name", "counter_id", "pid", "value"};
static const char *const host_cols[] = {EVENT_COLUMNS, "correlation", "external_id", "seq_nr",
					"input_shapes", "samples"};
static const char *const kernel_cols[] = {
	EVENT_COLUMNS, GPU_COLUMNS, "grid_x", "grid_y", "grid_z", "block_x", "block_y",
	"block_z", "registers_per_thread", "static_smem_bytes", "dynamic_smem_bytes",
	"blocks_per_sm", "warps_per_sm", "est_achieved_occupancy_pct",
};
static const char *const memcpy_cols[] = {
	EVENT_COLUMNS, GPU_COLUMNS, "bytes", "copy_kind", "src_kind", "dst_kind", "async",
	"bandwidth_gbps",
};
static const char *const memset_cols[] = {
	EVENT_COLUMNS, GPU_COLUMNS, "bytes", "memory_kind", "async", "bandwidth_gbps",
};
static const char *const memory_cols[] = {
	EVENT_COLUMNS, "correlation", "external_id", "bytes", "address", "device",
	"memory_kind", "total_allocated",
};
static const char *const comm_cols[] = {
	EVENT_COLUMNS, "correlation", "external_id", "backend", "op", "bytes", "coll_seq",
	"process_group", "group_size", "dtype", "peer",
};

static const struct {
	const char *const *names;
	size_t n;
} schema[CSV_FILE_COUNT] = {
	[CSV_FILE_TRACE] = {trace_cols, N(trace_cols)},
	[CSV_FILE_PROCESSES] = {process_cols, N(process_cols)},
	[CSV_FILE_THREADS] = {thread_cols, N(thread_cols)},
	[CSV_FILE_DEVICES] = {device_cols, N(device_cols)},
	[CSV_FILE_COUNTERS] = {counter_cols, N(counter_cols)},
	[CSV_FILE_RANGES] = {host_cols, N(host_cols)},
	[CSV_FILE_OPERATORS] = {host_cols, N(host_cols)},
	[CSV_FILE_RUNTIME] = {host_cols, N(host_cols)},
	[CSV_FILE_MARKS] = {host_cols, N(host_cols)},
	[CSV_FILE_KERNELS] = {kernel_cols, N(kernel_cols)},
	[CSV_FILE_MEMCPY] = {memcpy_cols, N(memcpy_cols)},
	[CSV_FILE_MEMSET] = {memset_cols, N(memset_cols)},
	[CSV_FILE_MEMORY] = {memory_cols, N(memory_cols)},
	[CSV_FILE_COMMUNICATION] = {comm_cols, N(comm_cols)},
};

enum csv_export_file csv_export_route(unsigned type, unsigned flags, int on_stream)
{
	switch (type) {
	case TRACE_EV_MEMORY:
		return CSV_FILE_MEMORY;
	case TRACE_EV_KERNEL:
		return CSV_FILE_KERNELS;
	case TRACE_EV_MEMCPY:
		return CSV_FILE_MEMCPY;
	case TRACE_EV_MEMSET:
		return CSV_FILE_MEMSET;
	case TRACE_EV_COMMUNICATION:
		if (on_stream)
			return CSV_FILE_KERNELS;
		break;
	default:
		break;
	}
	if (flags & TRACE_EVF_MARK)
		return CSV_FILE_MARKS;
	switch (type) {
	case TRACE_EV_OPERATOR:
	case TRACE_EV_OPERATOR_INNER:
		return CSV_FILE_OPERATORS;
	case TRACE_EV_COMMUNICATION:
		return CSV_FILE_COMMUNICATION;
	case TRACE_EV_CUDA_RUNTIME:
		return CSV_FILE_RUNTIME;
	default:
		return CSV_FILE_RANGES;
	}
}

/* ---- the writer ---------------------------------------------------------- */

struct csv_export {
	struct export_writer ops; /* first: export_writer_container() */
	struct csv_out files[CSV_FILE_COUNT];
	struct trace_reader *reader;
	const struct trace_header *header;
	uint64_t *events, *drops; /* per thread index: grow with threads, not events */
	uint32_t nthreads;
	/* per desc id: its name and type fields, then its domain and category
	 * fields, as CSV (csv_desc()); grows with descs, not events */
	struct csv_desc *descs;
	uint32_t ndescs;
};

struct csv_desc {
	char *bytes; /* NULL: not made yet */
	uint32_t name_type, domain_category; /* the two runs' lengths */
};

static struct csv_export *csv_of(struct export_writer *w)
{
	return export_writer_container(w, struct csv_export);
}

static int failed(const struct csv_export *x)
{
	for (int i = 0; i < CSV_FILE_COUNT; i++)
		if (x->files[i].error)
			return -1;
	return 0;
}

static void grow(struct csv_export *x, uint32_t thread)
{
	uint32_t n = x->nthreads; /* the two arrays grow alike */
	x->events = xgrow_zeroed(x->events, &n, thread, sizeof(*x->events));
	x->drops = xgrow_zeroed(x->drops, &x->nthreads, thread, sizeof(*x->drops));
}

static void descs_clear(struct csv_export *x)
{
	for (uint32_t i = 0; i < x->ndescs; i++)
		free(x->descs[i].bytes);
	free(x->descs);
	x->descs = NULL;
	x->ndescs = 0;
}

static int csv_begin(struct export_writer *w, struct trace_reader *r, const struct trace_header *h)
{
	struct csv_export *x = csv_of(w);
	descs_clear(x); /* desc ids are the reader's */
	x->reader = r;
	x->header = h;
	for (int i = 0; i < CSV_FILE_COUNT; i++)
		csv_out_header(&x->files[i], schema[i].names, schema[i].n);
	return failed(x);
}

/* A number, or an empty field for the model's "none" (zero). */
static void uint_or_empty(struct csv_out *c, uint64_t v)
{
	if (v)
		csv_out_uint(c, v);
	else
		csv_out_empty(c);
}

static void text_or_empty(struct csv_out *c, const char *s)
{
	if (s)
		csv_out_text(c, s);
	else
		csv_out_empty(c);
}

/* An int that is -1 (or below) for "none", such as a rank. */
static void int_or_empty(struct csv_out *c, int32_t v)
{
	if (v >= 0)
		csv_out_int(c, v);
	else
		csv_out_empty(c);
}

static void flag(struct csv_out *c, unsigned flags, unsigned bit)
{
	csv_out_raw(c, flags & bit ? "1" : "0", 1);
}

static void name_type_columns(struct csv_export *x, struct csv_out *c, const struct trace_desc *d)
{
	csv_out_text(c, trace_reader_string(x->reader, d->name_str));
	csv_out_text(c, trace_event_type_name(d->type));
}

static void domain_category_columns(struct csv_export *x, struct csv_out *c,
				    const struct trace_desc *d)
{
	if (d->domain_str)
		csv_out_text(c, trace_reader_string(x->reader, d->domain_str));
	else
		csv_out_empty(c);
	const char *cat = d->category ? trace_reader_category_name(x->reader, d->domain_str,
								    d->category)
				      : NULL;
	if (cat)
		csv_out_text(c, cat);
	else
		uint_or_empty(c, d->category);
}

/* A desc's fields, made once by the same calls as any row's, into memory:
 * every event of the desc repeats them. NULL when memory fails. */
static const struct csv_desc *csv_desc(struct csv_export *x, uint32_t id,
				       const struct trace_desc *d)
{
	x->descs = xgrow_zeroed(x->descs, &x->ndescs, id, sizeof(*x->descs));
	struct csv_desc *k = &x->descs[id];
	if (k->bytes)
		return k;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return NULL;
	struct csv_out mc;
	csv_out_init(&mc, m);
	name_type_columns(x, &mc, d);
	int bad = fflush(m) != 0;
	size_t first = len;
	mc.row_started = 0; /* the second run is a field list of its own */
	domain_category_columns(x, &mc, d);
	bad |= csv_out_error(&mc) || fclose(m) != 0;
	if (bad || len > UINT32_MAX) {
		free(text);
		return NULL;
	}
	*k = (struct csv_desc){text, (uint32_t)first, (uint32_t)(len - first)};
	return k;
}

static void event_columns(struct csv_export *x, struct csv_out *c, const struct trace_desc *d,
			  const struct trace_thread *t, const struct trace_event *e)
{
	const struct csv_desc *k = csv_desc(x, e->desc, d);
	csv_out_uint(c, e->start_ns);
	csv_out_uint(c, e->start_ns + e->dur_ns);
	csv_out_uint(c, e->dur_ns);
	if (k)
		csv_out_raw(c, k->bytes, k->name_type);
	else
		name_type_columns(x, c, d);
	csv_out_uint(c, t->pid);
	csv_out_uint(c, t->tid);
	csv_out_uint(c, t->index);
	if (k)
		csv_out_raw(c, k->bytes + k->name_type, k->domain_category);
	else
		domain_category_columns(x, c, d);
	flag(c, e->flags, TRACE_EVF_OPEN_AT_EXIT);
	flag(c, e->flags, TRACE_EVF_UNBALANCED_POP);
	flag(c, e->flags, TRACE_EVF_START_END);
	flag(c, e->flags, TRACE_EVF_NAME_TRUNCATED);
}

static const struct trace_event_ext no_ext;

static void ids(struct csv_out *c, const struct trace_event_ext *ext)
{
	uint_or_empty(c, ext->correlation);
	uint_or_empty(c, ext->external_id);
}

static void gpu_columns(struct csv_out *c, const struct trace_thread *t,
			const struct trace_event_ext *ext)
{
	if (t->kind == TRACE_TRACK_STREAM) {
		csv_out_uint(c, t->device);
		csv_out_uint(c, t->context);
		csv_out_uint(c, t->stream);
	} else {
		csv_out_empty(c);
		csv_out_empty(c);
		csv_out_empty(c);
	}
	ids(c, ext);
}

/* Ranges, operators, runtime calls and marks: ids, then 1.2's details. */
static void host_columns(struct csv_export *x, struct csv_out *c, const struct trace_event_ext *ext)
{
	ids(c, ext);
	if (ext->has_seq)
		csv_out_int(c, ext->seq_nr);
	else
		csv_out_empty(c);
	if (ext->shapes_str)
		csv_out_text(c, trace_reader_string(x->reader, ext->shapes_str));
	else
		csv_out_empty(c);
	uint_or_empty(c, ext->samples);
}

static void kind_or_empty(struct csv_out *c, unsigned kind, const char *name)
{
	if (kind)
		csv_out_text(c, name);
	else
		csv_out_empty(c);
}

static void kernel_columns(struct csv_export *x, struct csv_out *c, const struct trace_thread *t,
			   const struct trace_event *e)
{
	const struct trace_event_ext *ext = e->ext ? e->ext : &no_ext;
	gpu_columns(c, t, ext);
	for (int i = 0; i < 3; i++)
		uint_or_empty(c, ext->grid[i]);
	for (int i = 0; i < 3; i++)
		uint_or_empty(c, ext->block[i]);
	uint_or_empty(c, ext->registers);
	if (e->ext) { /* zero bytes of shared memory is a fact, not an absence */
		csv_out_uint(c, ext->static_smem);
		csv_out_uint(c, ext->dynamic_smem);
	} else {
		csv_out_empty(c);
		csv_out_empty(c);
	}
	struct export_launch l;
	const struct trace_device *dev =
		t->kind == TRACE_TRACK_STREAM ? trace_reader_device_by_id(x->reader, t->device)
					      : NULL;
	if (e->ext && export_launch_measure(dev, ext, &l) == 0) {
		csv_out_fixed(c, l.blocks_per_sm, MEASURE_DECIMALS);
		csv_out_fixed(c, l.warps_per_sm, MEASURE_DECIMALS);
		if (l.occupancy_pct >= 0)
			csv_out_fixed(c, l.occupancy_pct, MEASURE_DECIMALS);
		else
			csv_out_empty(c);
	} else {
		csv_out_empty(c);
		csv_out_empty(c);
		csv_out_empty(c);
	}
}

static void transfer_columns(struct csv_out *c, const struct trace_thread *t,
			     const struct trace_event *e, int memcpy_kind)
{
	const struct trace_event_ext *ext = e->ext ? e->ext : &no_ext;
	gpu_columns(c, t, ext);
	if (!e->ext) {
		for (int i = memcpy_kind ? 6 : 4; i > 0; i--)
			csv_out_empty(c);
		return;
	}
	csv_out_uint(c, ext->bytes);
	if (memcpy_kind) {
		kind_or_empty(c, ext->copy_kind, trace_copy_kind_name(ext->copy_kind));
		kind_or_empty(c, ext->src_kind, trace_memory_kind_name(ext->src_kind));
	}
	kind_or_empty(c, ext->dst_kind, trace_memory_kind_name(ext->dst_kind));
	csv_out_uint(c, ext->is_async != 0);
	if (e->dur_ns)
		csv_out_fixed(c, export_bandwidth_gbps(ext->bytes, e->dur_ns), MEASURE_DECIMALS);
	else
		csv_out_empty(c);
}

static void memory_columns(struct csv_out *c, const struct trace_event *e)
{
	const struct trace_event_ext *ext = e->ext ? e->ext : &no_ext;
	ids(c, ext);
	if (!e->ext) {
		for (int i = 0; i < 5; i++)
			csv_out_empty(c);
		return;
	}
	csv_out_int(c, (int64_t)ext->bytes);
	csv_out_uint(c, ext->address);
	csv_out_int(c, ext->device);
	kind_or_empty(c, ext->dst_kind, trace_memory_kind_name(ext->dst_kind));
	uint_or_empty(c, ext->total_allocated);
}

/* A collective or point-to-point call on a host thread (1.3): the backend
 * and op its name gives (c10d's "gloo:all_reduce"), its bytes, and what
 * matches it across ranks. Bytes are a number whenever the call has
 * collective details (a barrier moves 0), else empty. */
static void comm_columns(struct csv_export *x, struct csv_out *c, const struct trace_desc *d,
			 const struct trace_event *e)
{
	const struct trace_event_ext *ext = e->ext ? e->ext : &no_ext;
	const char *name = trace_reader_string(x->reader, d->name_str);
	size_t n = trace_name_comm_call(name, strlen(name));
	int is_call = ext->has_coll_seq || ext->pg_str || ext->group_size || ext->dtype_str ||
		      ext->has_peer;

	ids(c, ext);
	if (n) { /* a backend's name is a few letters: gloo, nccl, mpi, ucc */
		char backend[8];
		snprintf(backend, sizeof(backend), "%.*s", (int)n, name);
		csv_out_text(c, backend);
		csv_out_text(c, name + n + 1);
	} else {
		csv_out_empty(c);
		csv_out_empty(c);
	}
	if (is_call)
		csv_out_uint(c, ext->bytes);
	else
		uint_or_empty(c, ext->bytes);
	if (ext->has_coll_seq)
		csv_out_uint(c, ext->coll_seq);
	else
		csv_out_empty(c);
	text_or_empty(c, ext->pg_str ? trace_reader_string(x->reader, ext->pg_str) : NULL);
	uint_or_empty(c, ext->group_size);
	text_or_empty(c, ext->dtype_str ? trace_reader_string(x->reader, ext->dtype_str) : NULL);
	if (ext->has_peer)
		csv_out_int(c, ext->peer);
	else
		csv_out_empty(c);
}

static int csv_event(struct export_writer *w, const struct trace_event *e)
{
	struct csv_export *x = csv_of(w);
	const struct trace_desc *d = trace_reader_desc(x->reader, e->desc);
	const struct trace_thread *t = trace_reader_thread(x->reader, e->thread);
	if (!d || !t)
		return 0; /* the reader promises both */
	grow(x, e->thread);
	x->events[e->thread]++;
	enum csv_export_file f = csv_export_route(d->type, e->flags, t->kind == TRACE_TRACK_STREAM);
	struct csv_out *c = &x->files[f];
	event_columns(x, c, d, t, e);
	switch (f) {
	case CSV_FILE_KERNELS:
		kernel_columns(x, c, t, e);
		break;
	case CSV_FILE_MEMCPY:
		transfer_columns(c, t, e, 1);
		break;
	case CSV_FILE_MEMSET:
		transfer_columns(c, t, e, 0);
		break;
	case CSV_FILE_MEMORY:
		memory_columns(c, e);
		break;
	case CSV_FILE_COMMUNICATION:
		comm_columns(x, c, d, e);
		break;
	default:
		host_columns(x, c, e->ext ? e->ext : &no_ext);
		break;
	}
	csv_out_end_row(c);
	return c->error ? -1 : 0;
}

static int csv_counter(struct export_writer *w, const struct trace_counter *ctr)
{
	struct csv_out *c = &csv_of(w)->files[CSV_FILE_COUNTERS];
	csv_out_uint(c, ctr->ts_ns);
	csv_out_text(c, trace_counter_name(ctr->id));
	csv_out_uint(c, ctr->id);
	csv_out_uint(c, ctr->pid);
	csv_out_double(c, ctr->value);
	csv_out_end_row(c);
	return c->error ? -1 : 0;
}

static int csv_drops(struct export_writer *w, uint32_t thread, uint64_t dropped)
{
	struct csv_export *x = csv_of(w);
	grow(x, thread);
	x->drops[thread] += dropped;
	return 0;
}

/* ---- the tables, at the end ---------------------------------------------- */

static void write_processes(struct csv_export *x)
{
	struct csv_out *c = &x->files[CSV_FILE_PROCESSES];
	uint32_t n = trace_reader_process_count(x->reader);
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_process *p = trace_reader_process(x->reader, i);
		if (!p)
			continue;
		csv_out_uint(c, p->pid);
		csv_out_uint(c, p->ppid);
		csv_out_uint(c, p->start_ns);
		uint_or_empty(c, p->end_ns);
		int_or_empty(c, p->exit_status);
		csv_out_uint(c, p->exit_status == TRACE_EXIT_KILLED);
		int_or_empty(c, p->rank);
		int_or_empty(c, p->local_rank);
		if (p->world_size > 0)
			csv_out_int(c, p->world_size);
		else
			csv_out_empty(c);
		text_or_empty(c, p->backend_str ? trace_reader_string(x->reader, p->backend_str)
						: NULL);
		csv_out_text(c, trace_reader_string(x->reader, p->cmdline_str));
		csv_out_end_row(c);
	}
}

static void write_threads(struct csv_export *x)
{
	struct csv_out *c = &x->files[CSV_FILE_THREADS];
	uint32_t n = trace_reader_thread_count(x->reader);
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_thread *t = trace_reader_thread(x->reader, i);
		if (!t)
			continue;
		int stream = t->kind == TRACE_TRACK_STREAM;
		csv_out_uint(c, t->index);
		csv_out_text(c, stream ? "stream" : "host");
		csv_out_uint(c, t->pid);
		csv_out_uint(c, t->tid);
		csv_out_text(c, trace_reader_string(x->reader, t->name_str));
		csv_out_uint(c, t->start_ns);
		uint_or_empty(c, t->end_ns);
		if (stream) {
			csv_out_uint(c, t->device);
			csv_out_uint(c, t->context);
			csv_out_uint(c, t->stream);
		} else {
			csv_out_empty(c);
			csv_out_empty(c);
			csv_out_empty(c);
		}
		csv_out_uint(c, i < x->nthreads ? x->events[i] : 0);
		csv_out_uint(c, i < x->nthreads ? x->drops[i] : 0);
		csv_out_end_row(c);
	}
}

static void write_devices(struct csv_export *x)
{
	struct csv_out *c = &x->files[CSV_FILE_DEVICES];
	uint32_t n = trace_reader_device_count(x->reader);
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_device *d = trace_reader_device(x->reader, i);
		if (!d)
			continue;
		const uint64_t v[] = {
			d->sm_count,       d->max_threads_per_sm, d->max_threads_per_block,
			d->max_blocks_per_sm, d->warp_size,    d->regs_per_sm,
			d->regs_per_block, d->smem_per_sm,        d->smem_per_block,
			d->total_memory,   d->clock_khz,          d->cc_major,
			d->cc_minor,
		};
		csv_out_uint(c, d->id);
		csv_out_text(c, trace_reader_string(x->reader, d->name_str));
		for (size_t k = 0; k < N(v); k++)
			csv_out_uint(c, v[k]);
		csv_out_end_row(c);
	}
}

static void write_trace(struct csv_export *x)
{
	struct csv_out *c = &x->files[CSV_FILE_TRACE];
	const struct trace_header *h = x->header;
	char buf[64];
	snprintf(buf, sizeof(buf), "%u.%u", h->version_major, h->version_minor);
	csv_out_text(c, buf);
	text_or_empty(c, h->gprof_version);
	csv_out_text(c, "gprof-dl " GPDL_VERSION);
	text_or_empty(c, h->hostname);
	csv_out_uint(c, h->pid);
	int_or_empty(c, h->rank);
	int_or_empty(c, h->local_rank);
	if (h->world_size > 0)
		csv_out_int(c, h->world_size);
	else
		csv_out_empty(c);
	text_or_empty(c, h->dist_backend && *h->dist_backend ? h->dist_backend : NULL);
	text_or_empty(c, h->cmdline);
	text_or_empty(c, h->clock_domain);
	csv_out_int(c, h->wall_offset_ns);
	csv_out_uint(c, h->start_ns);
	uint_or_empty(c, h->end_ns);
	if (h->end_ns && h->end_ns >= h->start_ns)
		csv_out_uint(c, h->end_ns - h->start_ns);
	else
		csv_out_empty(c);
	csv_out_uint(c, h->ncpus);
	snprintf(buf, sizeof(buf), "%s%s%s", h->sources & TRACE_SRC_NVTX ? "nvtx " : "",
		 h->sources & TRACE_SRC_CUPTI ? "cupti " : "",
		 h->sources & TRACE_SRC_PYTHON ? "python " : "");
	if (*buf)
		buf[strlen(buf) - 1] = '\0';
	csv_out_text(c, buf);
	csv_out_uint(c, x->ops.events);
	csv_out_uint(c, x->ops.counters);
	csv_out_uint(c, trace_reader_total_drops(x->reader));
	uint64_t offset = 0;
	const char *damage = trace_reader_damage(x->reader, &offset);
	if (damage) {
		csv_out_uint(c, offset);
		csv_out_text(c, damage);
	} else {
		csv_out_empty(c);
		csv_out_empty(c);
	}
	csv_out_end_row(c);
}

static int csv_end(struct export_writer *w)
{
	struct csv_export *x = csv_of(w);
	write_trace(x);
	write_processes(x);
	write_threads(x);
	write_devices(x);
	for (int i = 0; i < CSV_FILE_COUNT; i++)
		if (csv_out_flush(&x->files[i]) != 0 || csv_out_error(&x->files[i]))
			return -1;
	return 0;
}

static void csv_destroy(struct export_writer *w)
{
	struct csv_export *x = csv_of(w);
	for (int i = 0; i < CSV_FILE_COUNT; i++)
		csv_out_release(&x->files[i]);
	descs_clear(x);
	free(x->events);
	free(x->drops);
	free(x);
}

struct export_writer *csv_export_new(FILE *const outs[CSV_FILE_COUNT])
{
	struct csv_export *x = xcalloc(1, sizeof(*x));
	x->ops.name = "csv";
	x->ops.begin = csv_begin;
	x->ops.event = csv_event;
	x->ops.counter = csv_counter;
	x->ops.drops = csv_drops;
	x->ops.end = csv_end;
	x->ops.destroy = csv_destroy;
	for (int i = 0; i < CSV_FILE_COUNT; i++)
		csv_out_init_buffered(&x->files[i], outs[i], CSV_EXPORT_BUFFER);
	return &x->ops;
}
