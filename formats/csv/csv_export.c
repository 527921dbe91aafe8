/*
 * csv_export.c - the CSV exporter (see csv_export.h and formats/CSV-SCHEMA.md).
 *
 * Each event file's columns are the common ones (times, name, type, track,
 * NVTX domain and category, flags) followed by that kind's own. The column
 * lists below are the schema: a row writer writes exactly its file's columns,
 * in that order, which test_csv_export checks against these arrays' lengths.
 *
 * The row writers write through struct row, either to a CSV file (the fast
 * path, inline) or to a csv_value_sink (the sqlite export): one mapping of
 * trace fields to columns for every sink.
 */
#include "formats/csv/csv_export.h"

#include "formats/async_out.h"
#include "formats/csv/csv_out.h"
#include "gpdl-config.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))
/* Derived measures (blocks per SM, bandwidth, ...) to the millionth. */
#define MEASURE_DECIMALS 6
/* Each file's own buffer, which goes to its stream in big blocks. */
#define CSV_EXPORT_BUFFER (64u << 10)
/* Two of these each when a thread writes the file (formats/async_out.h),
 * which takes a full one as it is: few hand-overs, each a thread's wake. */
#define CSV_EXPORT_HANDED (256u << 10)

const char *const csv_export_file_names[CSV_FILE_COUNT] = {
	[CSV_FILE_TRACE] = "trace.csv",         [CSV_FILE_PROCESSES] = "processes.csv",
	[CSV_FILE_THREADS] = "threads.csv",     [CSV_FILE_DEVICES] = "devices.csv",
	[CSV_FILE_COUNTERS] = "counters.csv",   [CSV_FILE_RANGES] = "ranges.csv",
	[CSV_FILE_OPERATORS] = "operators.csv", [CSV_FILE_RUNTIME] = "runtime.csv",
	[CSV_FILE_MARKS] = "marks.csv",         [CSV_FILE_KERNELS] = "kernels.csv",
	[CSV_FILE_MEMCPY] = "memcpy.csv",       [CSV_FILE_MEMSET] = "memset.csv",
	[CSV_FILE_MEMORY] = "memory.csv",       [CSV_FILE_COMMUNICATION] = "communication.csv",
	[CSV_FILE_STEPS] = "steps.csv",
};

/* ---- the schema ---------------------------------------------------------- */

#define I CSV_COL_INT
#define R CSV_COL_REAL
#define T CSV_COL_TEXT
#define EVENT_COLUMNS                                                                     \
	{"start_ns", I}, {"end_ns", I}, {"dur_ns", I}, {"name", T}, {"type", T}, {"pid", I}, \
	{"tid", I}, {"thread", I}, {"domain", T}, {"category", T}, {"open_at_exit", I},     \
	{"unbalanced_pop", I}, {"start_end", I}, {"name_truncated", I}
#define GPU_COLUMNS                                                                       \
	{"device", I}, {"context", I}, {"stream", I}, {"correlation", I}, {"external_id", I}
#define TRACE_COLUMNS_1                                                                   \
	{"format_version", T}, {"recorded_by", T}, {"exported_by", T}, {"host", T}, {"pid", I}
#define TRACE_COLUMNS_2                                                                   \
	{"local_rank", I}, {"world_size", I}, {"dist_backend", T}, {"command_line", T},       \
	{"clock_domain", T}, {"wall_offset_ns", I}, {"start_ns", I}, {"end_ns", I},           \
	{"duration_ns", I}, {"ncpus", I}, {"sources", T}, {"events", I}, {"counters", I},     \
	{"drops", I}, {"damage_offset", I}, {"damage_reason", T}
#define PROCESS_COLUMNS_1                                                                 \
	{"pid", I}, {"ppid", I}, {"start_ns", I}, {"end_ns", I}, {"exit_status", I}, {"killed", I}
#define PROCESS_COLUMNS_2                                                                 \
	{"local_rank", I}, {"world_size", I}, {"backend", T}, {"command_line", T}

/* The SQL variant leaves out the rank columns: the part's rank replaces them. */
static const struct csv_column trace_cols[] = {TRACE_COLUMNS_1, {"rank", I}, TRACE_COLUMNS_2};
static const struct csv_column trace_sql_cols[] = {TRACE_COLUMNS_1, TRACE_COLUMNS_2};
static const struct csv_column process_cols[] = {PROCESS_COLUMNS_1, {"rank", I}, PROCESS_COLUMNS_2};
static const struct csv_column process_sql_cols[] = {PROCESS_COLUMNS_1, PROCESS_COLUMNS_2};
static const struct csv_column thread_cols[] = {
	{"thread", I}, {"kind", T}, {"pid", I},    {"tid", I},    {"name", T},   {"start_ns", I},
	{"end_ns", I}, {"device", I}, {"context", I}, {"stream", I}, {"events", I}, {"dropped", I},
};
static const struct csv_column device_cols[] = {
	{"id", I}, {"name", T}, {"sm_count", I}, {"max_threads_per_sm", I},
	{"max_threads_per_block", I}, {"max_blocks_per_sm", I}, {"warp_size", I},
	{"regs_per_sm", I}, {"regs_per_block", I}, {"smem_per_sm_bytes", I},
	{"smem_per_block_bytes", I}, {"total_memory_bytes", I}, {"clock_khz", I},
	{"cc_major", I}, {"cc_minor", I},
};
static const struct csv_column counter_cols[] = {
	{"ts_ns", I}, {"name", T}, {"counter_id", I}, {"pid", I}, {"value", R},
};
static const struct csv_column host_cols[] = {
	EVENT_COLUMNS,  {"correlation", I}, {"external_id", I}, {"seq_nr", I},
	{"input_shapes", T}, {"samples", I},
};
static const struct csv_column kernel_cols[] = {
	EVENT_COLUMNS,   GPU_COLUMNS,       {"grid_x", I},      {"grid_y", I},
	{"grid_z", I},   {"block_x", I},    {"block_y", I},     {"block_z", I},
	{"registers_per_thread", I}, {"static_smem_bytes", I}, {"dynamic_smem_bytes", I},
	{"blocks_per_sm", R}, {"warps_per_sm", R}, {"est_achieved_occupancy_pct", R},
};
static const struct csv_column memcpy_cols[] = {
	EVENT_COLUMNS, GPU_COLUMNS, {"bytes", I}, {"copy_kind", T}, {"src_kind", T},
	{"dst_kind", T}, {"async", I}, {"bandwidth_gbps", R},
};
static const struct csv_column memset_cols[] = {
	EVENT_COLUMNS, GPU_COLUMNS, {"bytes", I}, {"memory_kind", T}, {"async", I},
	{"bandwidth_gbps", R},
};
static const struct csv_column memory_cols[] = {
	EVENT_COLUMNS, {"correlation", I}, {"external_id", I}, {"bytes", I}, {"address", I},
	{"device", I}, {"memory_kind", T}, {"total_allocated", I},
};
static const struct csv_column comm_cols[] = {
	EVENT_COLUMNS,    {"correlation", I}, {"external_id", I}, {"backend", T}, {"op", T},
	{"bytes", I},     {"coll_seq", I},    {"process_group", T}, {"group_size", I},
	{"dtype", T},     {"peer", I},
};
static const struct csv_column step_cols[] = {
	{"step", I}, {"name", T}, {"start_ns", I}, {"end_ns", I}, {"dur_ns", I}, {"samples", I},
	{"thread", I}, {"cpu_ns", I}, {"runq_ns", I},
};
#undef I
#undef R
#undef T

static const struct {
	const struct csv_column *cols, *sql_cols;
	size_t n, sql_n;
} schema[CSV_FILE_COUNT] = {
#define SAME(a) a, a, N(a), N(a)
	[CSV_FILE_TRACE] = {trace_cols, trace_sql_cols, N(trace_cols), N(trace_sql_cols)},
	[CSV_FILE_PROCESSES] = {process_cols, process_sql_cols, N(process_cols), N(process_sql_cols)},
	[CSV_FILE_THREADS] = {SAME(thread_cols)},
	[CSV_FILE_DEVICES] = {SAME(device_cols)},
	[CSV_FILE_COUNTERS] = {SAME(counter_cols)},
	[CSV_FILE_RANGES] = {SAME(host_cols)},
	[CSV_FILE_OPERATORS] = {SAME(host_cols)},
	[CSV_FILE_RUNTIME] = {SAME(host_cols)},
	[CSV_FILE_MARKS] = {SAME(host_cols)},
	[CSV_FILE_KERNELS] = {SAME(kernel_cols)},
	[CSV_FILE_MEMCPY] = {SAME(memcpy_cols)},
	[CSV_FILE_MEMSET] = {SAME(memset_cols)},
	[CSV_FILE_MEMORY] = {SAME(memory_cols)},
	[CSV_FILE_COMMUNICATION] = {SAME(comm_cols)},
	[CSV_FILE_STEPS] = {SAME(step_cols)},
#undef SAME
};

size_t csv_export_columns(enum csv_export_file i, int sql, const struct csv_column **cols)
{
	if ((unsigned)i >= CSV_FILE_COUNT) {
		*cols = NULL;
		return 0;
	}
	*cols = sql ? schema[i].sql_cols : schema[i].cols;
	return sql ? schema[i].sql_n : schema[i].n;
}

const char *csv_export_table_name(enum csv_export_file i, int sql)
{
	static const char *const names[CSV_FILE_COUNT] = {
		[CSV_FILE_TRACE] = "trace",         [CSV_FILE_PROCESSES] = "processes",
		[CSV_FILE_THREADS] = "threads",     [CSV_FILE_DEVICES] = "devices",
		[CSV_FILE_COUNTERS] = "counters",   [CSV_FILE_RANGES] = "ranges",
		[CSV_FILE_OPERATORS] = "operators", [CSV_FILE_RUNTIME] = "runtime",
		[CSV_FILE_MARKS] = "marks",         [CSV_FILE_KERNELS] = "kernels",
		[CSV_FILE_MEMCPY] = "memcpy",       [CSV_FILE_MEMSET] = "memset",
		[CSV_FILE_MEMORY] = "memory",       [CSV_FILE_COMMUNICATION] = "communication",
		[CSV_FILE_STEPS] = "steps",
	};
	if ((unsigned)i >= CSV_FILE_COUNT)
		return NULL;
	return sql && i == CSV_FILE_TRACE ? "ranks" : names[i];
}

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

struct csv_step {
	uint64_t start_ns, dur_ns, samples;
	uint32_t desc, thread;
	uint64_t cpu_ns, runq_ns; /* its thread's over it (trace 2.1); cpu_ns 0: unknown */
};

struct csv_export {
	struct export_writer ops; /* first: export_writer_container() */
	struct csv_out files[CSV_FILE_COUNT];
	struct csv_value_sink sink; /* used when sinking (no files) */
	int sinking;
	struct csv_export_opts opts;
	struct trace_reader *reader;
	const struct trace_header *header;
	uint64_t *events, *drops; /* per thread index: grow with threads, not events */
	uint32_t nthreads;
	/* per desc id: its name and type fields, then its domain and category
	 * fields, as CSV (csv_desc()); grows with descs, not events */
	struct export_desc_cache descs;
	/* the part's ProfileStep ranges, for the steps file: a few per step */
	struct csv_step *steps;
	size_t nsteps, steps_cap;
	char *clean; /* a sink's text with ill-formed UTF-8 replaced */
	size_t clean_cap;
};

/* Where one row's values go: a CSV file (c), or the sink (c NULL). Every
 * row writer below writes through these, so the mapping of trace fields to
 * columns is the same for every sink. */
struct row {
	struct csv_out *c;
	struct csv_export *x;
};

static inline struct row row_begin(struct csv_export *x, enum csv_export_file f)
{
	if (x->sinking) {
		x->sink.row(x->sink.ctx, f);
		return (struct row){NULL, x};
	}
	return (struct row){&x->files[f], x};
}

/* 0, or -1 when the row's write failed. */
static inline int row_end(struct row *o)
{
	if (o->c) {
		csv_out_end_row(o->c);
		return o->c->error ? -1 : 0;
	}
	return o->x->sink.end_row(o->x->sink.ctx);
}

static inline void v_empty(struct row *o)
{
	if (o->c)
		csv_out_empty(o->c);
	else
		o->x->sink.null(o->x->sink.ctx);
}

static inline void v_uint(struct row *o, uint64_t v)
{
	if (o->c)
		csv_out_uint(o->c, v);
	else
		o->x->sink.u64(o->x->sink.ctx, v);
}

static inline void v_int(struct row *o, int64_t v)
{
	if (o->c)
		csv_out_int(o->c, v);
	else
		o->x->sink.i64(o->x->sink.ctx, v);
}

static void v_double(struct row *o, double v)
{
	if (o->c)
		csv_out_double(o->c, v);
	else if (isfinite(v))
		o->x->sink.real(o->x->sink.ctx, v);
	else
		o->x->sink.null(o->x->sink.ctx);
}

/* A derived measure, rounded to decimals places. */
static void v_fixed(struct row *o, double v, int decimals)
{
	if (o->c)
		csv_out_fixed(o->c, v, decimals);
	else if (isfinite(v) && fabs(v) < 1e15)
		o->x->sink.real(o->x->sink.ctx, round(v * pow(10, decimals)) / pow(10, decimals));
	else
		v_double(o, v);
}

static void sink_text(struct csv_export *x, const char *s)
{
	size_t len = strlen(s), i = 0;
	while (i < len && (unsigned char)s[i] < 0x80)
		i++;
	if (i < len && !utf8_valid(s + i, len - i)) {
		if (x->clean_cap < 3 * len + 1) {
			x->clean_cap = 3 * len + 1;
			x->clean = xrealloc(x->clean, x->clean_cap);
		}
		len = utf8_sanitize(x->clean, s, len);
		s = x->clean;
	}
	x->sink.text(x->sink.ctx, s, len);
}

static inline void v_text(struct row *o, const char *s)
{
	if (o->c)
		csv_out_text(o->c, s);
	else
		sink_text(o->x, s);
}

static inline void v_flag(struct row *o, unsigned flags, unsigned bit)
{
	if (o->c)
		csv_out_raw(o->c, flags & bit ? "1" : "0", 1);
	else
		o->x->sink.i64(o->x->sink.ctx, (flags & bit) != 0);
}

/* A time (not a duration): on the job clock in the SQL variant. */
static inline void v_time(struct row *o, uint64_t t)
{
	if (o->x->opts.sql)
		v_int(o, (int64_t)t + o->x->opts.time_offset_ns);
	else
		v_uint(o, t);
}

/* A number, or an empty field for the model's "none" (zero). */
static inline void uint_or_empty(struct row *o, uint64_t v)
{
	if (v)
		v_uint(o, v);
	else
		v_empty(o);
}

static void time_or_empty(struct row *o, uint64_t t)
{
	if (t)
		v_time(o, t);
	else
		v_empty(o);
}

static void text_or_empty(struct row *o, const char *s)
{
	if (s)
		v_text(o, s);
	else
		v_empty(o);
}

/* An int that is -1 (or below) for "none", such as a rank. */
static void int_or_empty(struct row *o, int32_t v)
{
	if (v >= 0)
		v_int(o, v);
	else
		v_empty(o);
}

static struct csv_export *csv_of(struct export_writer *w)
{
	return export_writer_container(w, struct csv_export);
}

static int failed(const struct csv_export *x)
{
	for (int i = 0; i < CSV_FILE_COUNT && !x->sinking; i++)
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

static int csv_begin(struct export_writer *w, struct trace_reader *r, const struct trace_header *h)
{
	struct csv_export *x = csv_of(w);
	export_desc_clear(&x->descs); /* desc ids are the reader's */
	x->nsteps = 0;
	x->reader = r;
	x->header = h;
	for (int i = 0; i < CSV_FILE_COUNT && !x->sinking; i++) {
		const struct csv_column *cols;
		size_t n = csv_export_columns((enum csv_export_file)i, x->opts.sql, &cols);
		for (size_t k = 0; k < n; k++) /* names that need no quoting */
			csv_out_raw(&x->files[i], cols[k].name, strlen(cols[k].name));
		csv_out_end_row(&x->files[i]);
	}
	return failed(x);
}

static void name_type_columns(struct row *o, const struct trace_desc *d)
{
	v_text(o, trace_reader_string(o->x->reader, d->name_str));
	v_text(o, trace_event_type_name(d->type));
}

static void domain_category_columns(struct row *o, const struct trace_desc *d)
{
	struct trace_reader *r = o->x->reader;
	if (d->domain_str)
		v_text(o, trace_reader_string(r, d->domain_str));
	else
		v_empty(o);
	const char *cat = d->category ? trace_reader_category_name(r, d->domain_str, d->category)
				      : NULL;
	if (cat)
		v_text(o, cat);
	else
		uint_or_empty(o, d->category);
}

/* A desc's fields, made once by the same calls as any row's, into memory:
 * every event of the desc repeats them. NULL when memory fails. */
static const struct export_desc_bytes *csv_desc(struct csv_export *x, uint32_t id,
						const struct trace_desc *d)
{
	struct export_desc_bytes *k = export_desc_at(&x->descs, id);
	if (k->bytes)
		return k;
	struct export_desc_mem m;
	if (!export_desc_open(&m))
		return NULL;
	struct csv_out mc;
	csv_out_init(&mc, m.f);
	struct row o = {&mc, x};
	name_type_columns(&o, d);
	export_desc_split(&m);
	mc.row_started = 0; /* the second run is a field list of its own */
	domain_category_columns(&o, d);
	return export_desc_close(&m, csv_out_error(&mc), k, 0) ? NULL : k;
}

static void event_columns(struct row *o, const struct trace_desc *d,
			  const struct trace_thread *t, const struct trace_event *e)
{
	const struct export_desc_bytes *k = o->c ? csv_desc(o->x, e->desc, d) : NULL;
	v_time(o, e->start_ns);
	v_time(o, e->start_ns + e->dur_ns);
	v_uint(o, e->dur_ns);
	if (k)
		csv_out_raw(o->c, k->bytes, k->first);
	else
		name_type_columns(o, d);
	v_uint(o, t->pid);
	v_uint(o, t->tid);
	v_uint(o, t->index);
	if (k)
		csv_out_raw(o->c, k->bytes + k->first, k->second);
	else
		domain_category_columns(o, d);
	v_flag(o, e->flags, TRACE_EVF_OPEN_AT_EXIT);
	v_flag(o, e->flags, TRACE_EVF_UNBALANCED_POP);
	v_flag(o, e->flags, TRACE_EVF_START_END);
	v_flag(o, e->flags, TRACE_EVF_NAME_TRUNCATED);
}

static const struct trace_event_ext no_ext;

static void ids(struct row *o, const struct trace_event_ext *ext)
{
	uint_or_empty(o, ext->correlation);
	uint_or_empty(o, ext->external_id);
}

static void gpu_columns(struct row *o, const struct trace_thread *t,
			const struct trace_event_ext *ext)
{
	if (t->kind == TRACE_TRACK_STREAM) {
		v_uint(o, t->device);
		v_uint(o, t->context);
		v_uint(o, t->stream);
	} else {
		v_empty(o);
		v_empty(o);
		v_empty(o);
	}
	ids(o, ext);
}

/* Ranges, operators, runtime calls and marks: ids, then 1.2's details. */
static void host_columns(struct row *o, const struct trace_event_ext *ext)
{
	ids(o, ext);
	if (ext->has_seq)
		v_int(o, ext->seq_nr);
	else
		v_empty(o);
	if (ext->shapes_str)
		v_text(o, trace_reader_string(o->x->reader, ext->shapes_str));
	else
		v_empty(o);
	uint_or_empty(o, ext->samples);
}

static void kind_or_empty(struct row *o, unsigned kind, const char *name)
{
	if (kind)
		v_text(o, name);
	else
		v_empty(o);
}

static void kernel_columns(struct row *o, const struct trace_thread *t,
			   const struct trace_event *e)
{
	const struct trace_event_ext *ext = e->ext ? e->ext : &no_ext;
	gpu_columns(o, t, ext);
	for (int i = 0; i < 3; i++)
		uint_or_empty(o, ext->grid[i]);
	for (int i = 0; i < 3; i++)
		uint_or_empty(o, ext->block[i]);
	uint_or_empty(o, ext->registers);
	if (e->ext) { /* zero bytes of shared memory is a fact, not an absence */
		v_uint(o, ext->static_smem);
		v_uint(o, ext->dynamic_smem);
	} else {
		v_empty(o);
		v_empty(o);
	}
	struct export_launch l;
	const struct trace_device *dev =
		t->kind == TRACE_TRACK_STREAM ? trace_reader_device_by_id(o->x->reader, t->device)
					      : NULL;
	if (e->ext && export_launch_measure(dev, ext, &l) == 0) {
		v_fixed(o, l.blocks_per_sm, MEASURE_DECIMALS);
		v_fixed(o, l.warps_per_sm, MEASURE_DECIMALS);
		if (l.occupancy_pct >= 0)
			v_fixed(o, l.occupancy_pct, MEASURE_DECIMALS);
		else
			v_empty(o);
	} else {
		v_empty(o);
		v_empty(o);
		v_empty(o);
	}
}

static void transfer_columns(struct row *o, const struct trace_thread *t,
			     const struct trace_event *e, int memcpy_kind)
{
	const struct trace_event_ext *ext = e->ext ? e->ext : &no_ext;
	gpu_columns(o, t, ext);
	if (!e->ext) {
		for (int i = memcpy_kind ? 6 : 4; i > 0; i--)
			v_empty(o);
		return;
	}
	v_uint(o, ext->bytes);
	if (memcpy_kind) {
		kind_or_empty(o, ext->copy_kind, trace_copy_kind_name(ext->copy_kind));
		kind_or_empty(o, ext->src_kind, trace_memory_kind_name(ext->src_kind));
	}
	kind_or_empty(o, ext->dst_kind, trace_memory_kind_name(ext->dst_kind));
	v_uint(o, ext->is_async != 0);
	if (e->dur_ns)
		v_fixed(o, export_bandwidth_gbps(ext->bytes, e->dur_ns), MEASURE_DECIMALS);
	else
		v_empty(o);
}

static void memory_columns(struct row *o, const struct trace_event *e)
{
	const struct trace_event_ext *ext = e->ext ? e->ext : &no_ext;
	ids(o, ext);
	if (!e->ext) {
		for (int i = 0; i < 5; i++)
			v_empty(o);
		return;
	}
	v_int(o, (int64_t)ext->bytes);
	v_uint(o, ext->address);
	v_int(o, ext->device);
	kind_or_empty(o, ext->dst_kind, trace_memory_kind_name(ext->dst_kind));
	uint_or_empty(o, ext->total_allocated);
}

/* A collective or point-to-point call on a host thread (1.3): the backend
 * and op its name gives (c10d's "gloo:all_reduce"), its bytes, and what
 * matches it across ranks. Bytes are a number whenever the call has
 * collective details (a barrier moves 0), else empty. */
static void comm_columns(struct row *o, const struct trace_desc *d, const struct trace_event *e)
{
	struct trace_reader *r = o->x->reader;
	const struct trace_event_ext *ext = e->ext ? e->ext : &no_ext;
	const char *name = trace_reader_string(r, d->name_str);
	size_t n = trace_name_comm_call(name, strlen(name));
	int is_call = ext->has_coll_seq || ext->pg_str || ext->group_size || ext->dtype_str ||
		      ext->has_peer;

	ids(o, ext);
	if (n) { /* a backend's name is a few letters: gloo, nccl, mpi, ucc */
		char backend[8];
		snprintf(backend, sizeof(backend), "%.*s", (int)n, name);
		v_text(o, backend);
		v_text(o, name + n + 1);
	} else {
		v_empty(o);
		v_empty(o);
	}
	if (is_call)
		v_uint(o, ext->bytes);
	else
		uint_or_empty(o, ext->bytes);
	if (ext->has_coll_seq)
		v_uint(o, ext->coll_seq);
	else
		v_empty(o);
	text_or_empty(o, ext->pg_str ? trace_reader_string(r, ext->pg_str) : NULL);
	uint_or_empty(o, ext->group_size);
	text_or_empty(o, ext->dtype_str ? trace_reader_string(r, ext->dtype_str) : NULL);
	if (ext->has_peer)
		v_int(o, ext->peer);
	else
		v_empty(o);
}

/* A ProfileStep, or a UserDefined range with a step's name: the analysis's
 * rule (trace_name_is_step()). */
static int is_step(struct csv_export *x, const struct trace_desc *d)
{
	if (d->type == TRACE_EV_PROFILE_STEP)
		return 1;
	if (d->type != TRACE_EV_USER_DEFINED)
		return 0;
	const char *name = trace_reader_string(x->reader, d->name_str);
	return trace_name_is_step(name, strlen(name));
}

/* A ProfileStep range that counts as a step (one with a length that ended,
 * as the analysis's): kept for the steps file at the end. */
static void step_keep(struct csv_export *x, const struct trace_event *e)
{
	if (x->nsteps == x->steps_cap) {
		x->steps_cap = x->steps_cap ? 2 * x->steps_cap : 64;
		x->steps = xrealloc(x->steps, x->steps_cap * sizeof(*x->steps));
	}
	x->steps[x->nsteps++] = (struct csv_step){
		e->start_ns, e->dur_ns, e->ext ? e->ext->samples : 0, e->desc, e->thread,
		e->ext ? e->ext->sched_cpu_ns : 0, e->ext ? e->ext->sched_runq_ns : 0,
	};
}

static int csv_event(struct export_writer *w, const struct trace_event *e)
{
	struct csv_export *x = csv_of(w);
	const struct trace_desc *d = trace_reader_desc(x->reader, e->desc);
	const struct trace_thread *t = trace_reader_thread(x->reader, e->thread);
	if (!d || !t)
		return 0; /* the reader promises both */
	if (e->thread >= x->nthreads)
		grow(x, e->thread);
	x->events[e->thread]++;
	enum csv_export_file f = csv_export_route(d->type, e->flags, t->kind == TRACE_TRACK_STREAM);
	if (f == CSV_FILE_RANGES && e->dur_ns && !(e->flags & TRACE_EVF_OPEN_AT_EXIT) &&
	    is_step(x, d))
		step_keep(x, e);
	struct row o = row_begin(x, f);
	event_columns(&o, d, t, e);
	switch (f) {
	case CSV_FILE_KERNELS:
		kernel_columns(&o, t, e);
		break;
	case CSV_FILE_MEMCPY:
		transfer_columns(&o, t, e, 1);
		break;
	case CSV_FILE_MEMSET:
		transfer_columns(&o, t, e, 0);
		break;
	case CSV_FILE_MEMORY:
		memory_columns(&o, e);
		break;
	case CSV_FILE_COMMUNICATION:
		comm_columns(&o, d, e);
		break;
	default:
		host_columns(&o, e->ext ? e->ext : &no_ext);
		break;
	}
	return row_end(&o);
}

static int csv_counter(struct export_writer *w, const struct trace_counter *ctr)
{
	struct row o = row_begin(csv_of(w), CSV_FILE_COUNTERS);
	v_time(&o, ctr->ts_ns);
	v_text(&o, trace_counter_name(ctr->id));
	v_uint(&o, ctr->id);
	v_uint(&o, ctr->pid);
	v_double(&o, ctr->value);
	return row_end(&o);
}

static int csv_drops(struct export_writer *w, uint32_t thread, uint64_t dropped)
{
	struct csv_export *x = csv_of(w);
	grow(x, thread);
	x->drops[thread] += dropped;
	return 0;
}

/* ---- the tables, at the end ---------------------------------------------- */

static int write_processes(struct csv_export *x)
{
	uint32_t n = trace_reader_process_count(x->reader);
	int rc = 0;
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		const struct trace_process *p = trace_reader_process(x->reader, i);
		/* the reader's table lists every part's processes; the SQL tables
		 * take each part's own, which its rank then says (the plain
		 * export lists the file's, with their rank column) */
		if (!p || (x->opts.sql && !export_writer_takes_pid(&x->ops, p->pid)))
			continue;
		struct row o = row_begin(x, CSV_FILE_PROCESSES);
		v_uint(&o, p->pid);
		v_uint(&o, p->ppid);
		v_time(&o, p->start_ns);
		time_or_empty(&o, p->end_ns);
		int_or_empty(&o, p->exit_status);
		v_uint(&o, p->exit_status == TRACE_EXIT_KILLED);
		if (!x->opts.sql)
			int_or_empty(&o, p->rank);
		int_or_empty(&o, p->local_rank);
		if (p->world_size > 0)
			v_int(&o, p->world_size);
		else
			v_empty(&o);
		text_or_empty(&o, p->backend_str ? trace_reader_string(x->reader, p->backend_str)
						 : NULL);
		v_text(&o, trace_reader_string(x->reader, p->cmdline_str));
		rc = row_end(&o);
	}
	return rc;
}

static int write_threads(struct csv_export *x)
{
	uint32_t n = trace_reader_thread_count(x->reader);
	int rc = 0;
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		const struct trace_thread *t = trace_reader_thread(x->reader, i);
		if (!t || (x->opts.sql && !export_writer_takes_pid(&x->ops, t->pid)))
			continue;
		int stream = t->kind == TRACE_TRACK_STREAM;
		struct row o = row_begin(x, CSV_FILE_THREADS);
		v_uint(&o, t->index);
		v_text(&o, stream ? "stream" : "host");
		v_uint(&o, t->pid);
		v_uint(&o, t->tid);
		v_text(&o, trace_reader_string(x->reader, t->name_str));
		v_time(&o, t->start_ns);
		time_or_empty(&o, t->end_ns);
		if (stream) {
			v_uint(&o, t->device);
			v_uint(&o, t->context);
			v_uint(&o, t->stream);
		} else {
			v_empty(&o);
			v_empty(&o);
			v_empty(&o);
		}
		v_uint(&o, i < x->nthreads ? x->events[i] : 0);
		v_uint(&o, i < x->nthreads ? x->drops[i] : 0);
		rc = row_end(&o);
	}
	return rc;
}

static int write_devices(struct csv_export *x)
{
	uint32_t n = trace_reader_device_count(x->reader);
	int rc = 0;
	for (uint32_t i = 0; i < n && rc == 0; i++) {
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
		struct row o = row_begin(x, CSV_FILE_DEVICES);
		v_uint(&o, d->id);
		v_text(&o, trace_reader_string(x->reader, d->name_str));
		for (size_t k = 0; k < N(v); k++)
			v_uint(&o, v[k]);
		rc = row_end(&o);
	}
	return rc;
}

static int write_trace(struct csv_export *x)
{
	const struct trace_header *h = x->header;
	struct row o = row_begin(x, CSV_FILE_TRACE);
	char buf[64];
	snprintf(buf, sizeof(buf), "%u.%u", h->version_major, h->version_minor);
	v_text(&o, buf);
	text_or_empty(&o, h->gprof_version);
	v_text(&o, "gprof-dl " GPDL_VERSION);
	text_or_empty(&o, h->hostname);
	v_uint(&o, h->pid);
	if (!x->opts.sql)
		int_or_empty(&o, h->rank);
	int_or_empty(&o, h->local_rank);
	if (h->world_size > 0)
		v_int(&o, h->world_size);
	else
		v_empty(&o);
	text_or_empty(&o, h->dist_backend && *h->dist_backend ? h->dist_backend : NULL);
	text_or_empty(&o, h->cmdline);
	text_or_empty(&o, h->clock_domain);
	v_int(&o, h->wall_offset_ns);
	v_time(&o, h->start_ns);
	time_or_empty(&o, h->end_ns);
	if (h->end_ns && h->end_ns >= h->start_ns)
		v_uint(&o, h->end_ns - h->start_ns);
	else
		v_empty(&o);
	v_uint(&o, h->ncpus);
	snprintf(buf, sizeof(buf), "%s%s%s", h->sources & TRACE_SRC_NVTX ? "nvtx " : "",
		 h->sources & TRACE_SRC_CUPTI ? "cupti " : "",
		 h->sources & TRACE_SRC_PYTHON ? "python " : "");
	if (*buf)
		buf[strlen(buf) - 1] = '\0';
	v_text(&o, buf);
	v_uint(&o, x->ops.events);
	v_uint(&o, x->ops.counters);
	v_uint(&o, trace_reader_total_drops(x->reader));
	uint64_t offset = 0;
	const char *damage = trace_reader_damage(x->reader, &offset);
	if (damage) {
		v_uint(&o, offset);
		v_text(&o, damage);
	} else {
		v_empty(&o);
		v_empty(&o);
	}
	return row_end(&o);
}

/* By thread, then start, the longer first: a step inside another of its
 * thread comes after it. */
static int step_cmp_thread(const void *a, const void *b)
{
	const struct csv_step *p = a, *q = b;
	if (p->thread != q->thread)
		return p->thread < q->thread ? -1 : 1;
	if (p->start_ns != q->start_ns)
		return p->start_ns < q->start_ns ? -1 : 1;
	return (p->dur_ns < q->dur_ns) - (p->dur_ns > q->dur_ns);
}

static int step_cmp(const void *a, const void *b)
{
	const struct csv_step *p = a, *q = b;
	if (p->start_ns != q->start_ns)
		return p->start_ns < q->start_ns ? -1 : 1;
	return (p->thread > q->thread) - (p->thread < q->thread);
}

/* Drops the steps that lie inside another step of their thread: part of
 * that one, as the analysis counts them (lib/analysis/views/perf.c). */
static void steps_unnest(struct csv_export *x)
{
	size_t kept = 0;
	uint64_t end = 0;
	if (x->nsteps > 1) /* no steps: NULL, which qsort must not get */
		qsort(x->steps, x->nsteps, sizeof(*x->steps), step_cmp_thread);
	for (size_t i = 0; i < x->nsteps; i++) {
		const struct csv_step *s = &x->steps[i];
		if (kept && x->steps[kept - 1].thread == s->thread && s->start_ns < end &&
		    s->start_ns + s->dur_ns <= end)
			continue;
		end = s->start_ns + s->dur_ns;
		x->steps[kept++] = *s;
	}
	x->nsteps = kept;
	if (x->nsteps > 1)
		qsort(x->steps, x->nsteps, sizeof(*x->steps), step_cmp);
}

/* The part's steps in start order, numbered from 0. */
static int write_steps(struct csv_export *x)
{
	int rc = 0;
	steps_unnest(x);
	for (size_t i = 0; i < x->nsteps && rc == 0; i++) {
		const struct csv_step *s = &x->steps[i];
		const struct trace_desc *d = trace_reader_desc(x->reader, s->desc);
		struct row o = row_begin(x, CSV_FILE_STEPS);
		v_uint(&o, i);
		v_text(&o, d ? trace_reader_string(x->reader, d->name_str) : "");
		v_time(&o, s->start_ns);
		v_time(&o, s->start_ns + s->dur_ns);
		v_uint(&o, s->dur_ns);
		uint_or_empty(&o, s->samples);
		v_uint(&o, s->thread);
		uint_or_empty(&o, s->cpu_ns);
		if (s->cpu_ns)
			v_uint(&o, s->runq_ns);
		else
			v_empty(&o);
		rc = row_end(&o);
	}
	return rc;
}

static int csv_end(struct export_writer *w)
{
	struct csv_export *x = csv_of(w);
	if (write_trace(x) || write_processes(x) || write_threads(x) || write_devices(x) ||
	    write_steps(x))
		return -1;
	if (x->sinking)
		return x->sink.end ? x->sink.end(x->sink.ctx) : 0;
	for (int i = 0; i < CSV_FILE_COUNT; i++)
		if (csv_out_flush(&x->files[i]) != 0 || csv_out_error(&x->files[i]))
			return -1;
	return 0;
}

static void csv_destroy(struct export_writer *w)
{
	struct csv_export *x = csv_of(w);
	for (int i = 0; i < CSV_FILE_COUNT && !x->sinking; i++)
		csv_out_release(&x->files[i]);
	export_desc_clear(&x->descs);
	free(x->events);
	free(x->drops);
	free(x->steps);
	free(x->clean);
	free(x);
}

static int hand(void *a, const char *block, size_t n)
{
	return async_out_hand(a, block, n);
}

static int hand_wait(void *a)
{
	return async_out_wait(a);
}

static struct csv_export *csv_export_alloc(const struct csv_export_opts *o)
{
	struct csv_export *x = xcalloc(1, sizeof(*x));
	x->ops = (struct export_writer){.name = "csv", .begin = csv_begin, .event = csv_event,
					.counter = csv_counter, .drops = csv_drops, .end = csv_end,
					.destroy = csv_destroy};
	x->opts = o ? *o : (struct csv_export_opts){.rank = -1};
	return x;
}

struct export_writer *csv_export_new_opts(FILE *const outs[CSV_FILE_COUNT],
					  const struct csv_export_opts *o)
{
	struct csv_export *x = csv_export_alloc(o);
	for (int i = 0; i < CSV_FILE_COUNT; i++) {
		struct async_out *a = async_out_of(outs[i]);
		if (a) /* its thread writes our buffers: no copy */
			csv_out_init_handed(&x->files[i], outs[i], CSV_EXPORT_HANDED, hand, hand_wait, a);
		else
			csv_out_init_buffered(&x->files[i], outs[i], CSV_EXPORT_BUFFER);
	}
	return &x->ops;
}

struct export_writer *csv_export_new(FILE *const outs[CSV_FILE_COUNT])
{
	return csv_export_new_opts(outs, NULL);
}

struct export_writer *csv_export_new_sink(const struct csv_value_sink *s,
					  const struct csv_export_opts *o)
{
	struct csv_export *x = csv_export_alloc(o);
	x->ops.name = "sql";
	x->sink = *s;
	x->sinking = 1;
	return &x->ops;
}
