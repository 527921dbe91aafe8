/*
 * test_csv_export.c - the CSV export of the fixture traces, read back with
 * libcsv's own parser: every file's header, and every column of every row,
 * against what the fixtures wrote (tests/chrome/trace_fixture.h), and a
 * two-rank trace's processes and collectives (format 1.3).
 *
 * The expected header rows are written out here, not taken from the
 * exporter, so that a change of schema fails this test until
 * formats/CSV-SCHEMA.md and this file say the same.
 */
#include "formats/csv/csv_export.h"
#include "formats/csv/csv_out.h"
#include "gpdl-config.h"
#include "tests/chrome/trace_fixture.h"

#include <csv.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define FFFD "\xef\xbf\xbd"
#define NONE NULL /* an unquoted empty field: the value does not apply */

/* ---- reading back -------------------------------------------------------- */

struct row {
	char **f; /* NULL entries: unquoted empty fields */
	size_t n;
};

struct table {
	struct row *rows;
	size_t n;
	struct row cur;
};

static void on_field(void *s, size_t len, void *data)
{
	struct table *t = data;
	t->cur.f = realloc(t->cur.f, (t->cur.n + 1) * sizeof(char *));
	assert_non_null(t->cur.f);
	char *v = NULL;
	if (s) {
		v = malloc(len + 1);
		assert_non_null(v);
		memcpy(v, s, len);
		v[len] = '\0';
	}
	t->cur.f[t->cur.n++] = v;
}

static void on_row(int c, void *data)
{
	(void)c;
	struct table *t = data;
	t->rows = realloc(t->rows, (t->n + 1) * sizeof(*t->rows));
	assert_non_null(t->rows);
	t->rows[t->n++] = t->cur;
	t->cur.f = NULL;
	t->cur.n = 0;
}

static struct table parse_csv(const char *text, size_t len)
{
	struct csv_parser p;
	struct table t = {0};
	/* strict: a stray quote is an error; NULL for unquoted empty fields, ""
	 * for quoted ones, which tells "none" from an empty name */
	assert_int_equal(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_EMPTY_IS_NULL), 0);
	if (csv_parse(&p, text, len, on_field, on_row, &t) != len)
		fail_msg("libcsv: %s", csv_strerror(csv_error(&p)));
	assert_int_equal(csv_fini(&p, on_field, on_row, &t), 0);
	csv_free(&p);
	return t;
}

static void table_free(struct table *t)
{
	for (size_t r = 0; r < t->n; r++) {
		for (size_t i = 0; i < t->rows[r].n; i++)
			free(t->rows[r].f[i]);
		free(t->rows[r].f);
	}
	free(t->rows);
}

struct exported {
	char *text[CSV_FILE_COUNT];
	size_t len[CSV_FILE_COUNT];
	struct table t[CSV_FILE_COUNT];
};

static void export_csv_opts(struct exported *x, const char *path,
			    const struct csv_export_opts *o)
{
	char err[512];
	FILE *outs[CSV_FILE_COUNT];
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	memset(x, 0, sizeof(*x));
	for (int i = 0; i < CSV_FILE_COUNT; i++)
		assert_non_null(outs[i] = open_memstream(&x->text[i], &x->len[i]));
	struct export_writer *w = o ? csv_export_new_opts(outs, o) : csv_export_new(outs);
	assert_int_equal(export_writer_run(w, r), 0);
	export_writer_destroy(w);
	trace_reader_close(r);
	for (int i = 0; i < CSV_FILE_COUNT; i++) {
		assert_int_equal(fclose(outs[i]), 0);
		x->t[i] = parse_csv(x->text[i], x->len[i]);
	}
}

static void export_csv(struct exported *x, const char *path)
{
	export_csv_opts(x, path, NULL);
}

static void exported_free(struct exported *x)
{
	for (int i = 0; i < CSV_FILE_COUNT; i++) {
		table_free(&x->t[i]);
		free(x->text[i]);
	}
}

/* ---- expected rows ------------------------------------------------------- */

#define MAXCOLS 40

struct want {
	char *f[MAXCOLS];
	size_t n;
};

static void w_str(struct want *w, const char *s)
{
	assert_true(w->n < MAXCOLS);
	w->f[w->n++] = s ? strdup(s) : NULL;
}

static void w_u64(struct want *w, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	w_str(w, buf);
}

static void w_i64(struct want *w, int64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	w_str(w, buf);
}

static void w_opt(struct want *w, uint64_t v) /* zero: none */
{
	if (v)
		w_u64(w, v);
	else
		w_str(w, NONE);
}

static void want_free(struct want *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->f[i]);
	w->n = 0;
}

/* Compares a row with the expected fields; a field starting with "~" is a
 * derived measure, written to the millionth. */
static void assert_row(const char *file, const struct row *r, struct want *w)
{
	if (r->n != w->n)
		fail_msg("%s: a row of %zu fields, want %zu", file, r->n, w->n);
	for (size_t i = 0; i < w->n; i++) {
		const char *got = r->f[i], *want = w->f[i];
		if (want && want[0] == '~' && got) {
			double g = strtod(got, NULL), v = strtod(want + 1, NULL);
			if (fabs(g - v) <= 0.5e-6 + 1e-12 * fabs(v))
				continue;
		} else if ((!got && !want) || (got && want && strcmp(got, want) == 0)) {
			continue;
		}
		fail_msg("%s: field %zu: got %s%s%s, want %s%s%s", file, i, got ? "'" : "",
			 got ? got : "(none)", got ? "'" : "", want ? "'" : "",
			 want ? want : "(none)", want ? "'" : "");
	}
	want_free(w);
}

static void assert_header(const struct table *t, enum csv_export_file f,
			  const char *const *names, size_t n)
{
	assert_true(t->n >= 1);
	const struct row *h = &t->rows[0];
	if (h->n != n)
		fail_msg("%s: %zu columns, want %zu", csv_export_file_names[f], h->n, n);
	for (size_t i = 0; i < n; i++)
		if (!h->f[i] || strcmp(h->f[i], names[i]) != 0)
			fail_msg("%s: column %zu is '%s', want '%s'", csv_export_file_names[f], i,
				 h->f[i] ? h->f[i] : "(none)", names[i]);
}

/* The schema, as formats/CSV-SCHEMA.md documents it. */
#define EV "start_ns", "end_ns", "dur_ns", "name", "type", "pid", "tid", "thread", "domain", \
	   "category", "open_at_exit", "unbalanced_pop", "start_end", "name_truncated"
#define GPU "device", "context", "stream", "correlation", "external_id"
static const char *const h_trace[] = {
	"format_version", "recorded_by", "exported_by", "host", "pid", "rank", "local_rank",
	"world_size", "dist_backend", "command_line", "clock_domain", "wall_offset_ns",
	"start_ns", "end_ns", "duration_ns", "ncpus", "sources", "events", "counters", "drops",
	"damage_offset", "damage_reason"};
static const char *const h_processes[] = {"pid", "ppid", "start_ns", "end_ns", "exit_status",
					  "killed", "rank", "local_rank", "world_size", "backend",
					  "command_line"};
static const char *const h_threads[] = {"thread", "kind", "pid", "tid", "name", "start_ns",
					"end_ns", "device", "context", "stream", "events",
					"dropped"};
static const char *const h_devices[] = {
	"id", "name", "sm_count", "max_threads_per_sm", "max_threads_per_block",
	"max_blocks_per_sm", "warp_size", "regs_per_sm", "regs_per_block", "smem_per_sm_bytes",
	"smem_per_block_bytes", "total_memory_bytes", "clock_khz", "cc_major", "cc_minor"};
static const char *const h_counters[] = {"ts_ns", "name", "counter_id", "pid", "value"};
static const char *const h_host[] = {EV, "correlation", "external_id", "seq_nr", "input_shapes",
				     "samples"};
static const char *const h_kernels[] = {
	EV, GPU, "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
	"registers_per_thread", "static_smem_bytes", "dynamic_smem_bytes", "blocks_per_sm",
	"warps_per_sm", "est_achieved_occupancy_pct"};
static const char *const h_memcpy[] = {EV, GPU, "bytes", "copy_kind", "src_kind", "dst_kind",
				       "async", "bandwidth_gbps"};
static const char *const h_memset[] = {EV, GPU, "bytes", "memory_kind", "async",
				       "bandwidth_gbps"};
static const char *const h_memory[] = {EV, "correlation", "external_id", "bytes", "address",
				       "device", "memory_kind", "total_allocated"};
static const char *const h_comm[] = {EV, "correlation", "external_id", "backend", "op", "bytes",
				     "coll_seq", "process_group", "group_size", "dtype", "peer"};
static const char *const h_steps[] = {"step",   "name",    "start_ns", "end_ns", "dur_ns",
				      "samples", "thread", "cpu_ns", "runq_ns"};
#define H(a) a, sizeof(a) / sizeof(a[0])

static void assert_headers(const struct exported *x)
{
	assert_header(&x->t[CSV_FILE_TRACE], CSV_FILE_TRACE, H(h_trace));
	assert_header(&x->t[CSV_FILE_PROCESSES], CSV_FILE_PROCESSES, H(h_processes));
	assert_header(&x->t[CSV_FILE_THREADS], CSV_FILE_THREADS, H(h_threads));
	assert_header(&x->t[CSV_FILE_DEVICES], CSV_FILE_DEVICES, H(h_devices));
	assert_header(&x->t[CSV_FILE_COUNTERS], CSV_FILE_COUNTERS, H(h_counters));
	assert_header(&x->t[CSV_FILE_RANGES], CSV_FILE_RANGES, H(h_host));
	assert_header(&x->t[CSV_FILE_OPERATORS], CSV_FILE_OPERATORS, H(h_host));
	assert_header(&x->t[CSV_FILE_RUNTIME], CSV_FILE_RUNTIME, H(h_host));
	assert_header(&x->t[CSV_FILE_MARKS], CSV_FILE_MARKS, H(h_host));
	assert_header(&x->t[CSV_FILE_KERNELS], CSV_FILE_KERNELS, H(h_kernels));
	assert_header(&x->t[CSV_FILE_MEMCPY], CSV_FILE_MEMCPY, H(h_memcpy));
	assert_header(&x->t[CSV_FILE_MEMSET], CSV_FILE_MEMSET, H(h_memset));
	assert_header(&x->t[CSV_FILE_MEMORY], CSV_FILE_MEMORY, H(h_memory));
	assert_header(&x->t[CSV_FILE_COMMUNICATION], CSV_FILE_COMMUNICATION, H(h_comm));
	assert_header(&x->t[CSV_FILE_STEPS], CSV_FILE_STEPS, H(h_steps));
}

static void assert_step_sched(const struct row *r, const char *step, const char *name,
			      uint64_t start, uint64_t dur, const char *samples, const char *thread,
			      const char *cpu, const char *runq)
{
	struct want w = {0};
	w_str(&w, step);
	w_str(&w, name);
	w_u64(&w, start);
	w_u64(&w, start + dur);
	w_u64(&w, dur);
	w_str(&w, samples);
	w_str(&w, thread);
	w_str(&w, cpu);
	w_str(&w, runq);
	assert_row("steps.csv", r, &w);
}

static void assert_step(const struct row *r, const char *step, const char *name, uint64_t start,
			uint64_t dur, const char *samples, const char *thread)
{
	assert_step_sched(r, step, name, start, dur, samples, thread, NONE, NONE);
}

/* An i32 whose negative values are none (ranks, exit statuses). */
static void w_rank(struct want *w, int64_t v)
{
	if (v >= 0)
		w_i64(w, v);
	else
		w_str(w, NONE);
}

/* The columns of processes.csv from exit_status to backend, as the trace's
 * reader reads process i of the fixture at path: the fixtures' writers give
 * their processes whatever rank fields they give them. */
static void w_proc_fields(struct want *w, const char *fixture, uint32_t i)
{
	char err[512], *path = fix_path(fixture);
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	assert_int_equal(trace_reader_run(r, NULL, NULL), 0);
	const struct trace_process *p = trace_reader_process(r, i);
	assert_non_null(p);
	w_rank(w, p->exit_status);
	w_u64(w, p->exit_status == TRACE_EXIT_KILLED);
	w_rank(w, p->rank);
	w_rank(w, p->local_rank);
	w_rank(w, p->world_size > 0 ? p->world_size : -1);
	w_str(w, p->backend_str ? trace_reader_string(r, p->backend_str) : NONE);
	trace_reader_close(r);
	free(path);
}

/* The data row of file f whose start_ns and thread are these; fails unless
 * exactly one. */
static const struct row *row_at(const struct exported *x, enum csv_export_file f,
				uint64_t start_ns, unsigned thread)
{
	char ts[32], th[16];
	snprintf(ts, sizeof(ts), "%" PRIu64, start_ns);
	snprintf(th, sizeof(th), "%u", thread);
	const struct row *found = NULL;
	const struct table *t = &x->t[f];
	for (size_t r = 1; r < t->n; r++) {
		if (strcmp(t->rows[r].f[0], ts) != 0 || strcmp(t->rows[r].f[7], th) != 0)
			continue;
		if (found)
			fail_msg("%s: two rows at %s on thread %s", csv_export_file_names[f], ts, th);
		found = &t->rows[r];
	}
	if (!found)
		fail_msg("%s: no row at %s on thread %s", csv_export_file_names[f], ts, th);
	return found;
}

static void common_cols(struct want *w, const char *name, const char *type, uint64_t start,
			uint64_t dur, uint64_t pid, uint64_t tid, unsigned thread,
			const char *domain, const char *category, unsigned flags)
{
	w_u64(w, start);
	w_u64(w, start + dur);
	w_u64(w, dur);
	w_str(w, name);
	w_str(w, type);
	w_u64(w, pid);
	w_u64(w, tid);
	w_u64(w, thread);
	w_str(w, domain);
	w_str(w, category);
	w_u64(w, (flags & TRACE_EVF_OPEN_AT_EXIT) != 0);
	w_u64(w, (flags & TRACE_EVF_UNBALANCED_POP) != 0);
	w_u64(w, (flags & TRACE_EVF_START_END) != 0);
	w_u64(w, (flags & TRACE_EVF_NAME_TRUNCATED) != 0);
}

/* ---- the GPU fixture ----------------------------------------------------- */

static enum csv_export_file gpu_file(const struct fixg_event *f)
{
	switch (f->type) {
	case TRACE_EV_KERNEL:
	case TRACE_EV_COMMUNICATION:
		return CSV_FILE_KERNELS;
	case TRACE_EV_MEMCPY:
		return CSV_FILE_MEMCPY;
	case TRACE_EV_MEMSET:
		return CSV_FILE_MEMSET;
	case TRACE_EV_MEMORY:
		return CSV_FILE_MEMORY;
	case TRACE_EV_OPERATOR:
		return CSV_FILE_OPERATORS;
	case TRACE_EV_CUDA_RUNTIME:
		return CSV_FILE_RUNTIME;
	default:
		return (f->flags & TRACE_EVF_MARK) ? CSV_FILE_MARKS : CSV_FILE_RANGES;
	}
}

/* Blocks per SM, warps per SM and occupancy, worked out in test_chrome_gpu.c
 * for the fixture's device: "~" marks a number compared numerically. */
static void kernel_measures(struct want *w, const char *name)
{
	if (!strcmp(name, "gemm_kernel")) {
		w_str(w, "2");
		w_str(w, "16");
		w_str(w, "25");
	} else if (!strcmp(name, "relu_kernel")) {
		char b[64];
		snprintf(b, sizeof(b), "~%.17g", 1024.0 / 132);
		w_str(w, b);
		snprintf(b, sizeof(b), "~%.17g", 4 * 1024.0 / 132);
		w_str(w, b);
		snprintf(b, sizeof(b), "~%.17g", 100 * (1024.0 / 132) * 128 / 2048);
		w_str(w, b);
	} else { /* nccl: 2 blocks of 512 on 132 SMs */
		char b[64];
		snprintf(b, sizeof(b), "~%.17g", 2.0 / 132);
		w_str(w, b);
		snprintf(b, sizeof(b), "~%.17g", 16 * 2.0 / 132);
		w_str(w, b);
		snprintf(b, sizeof(b), "~%.17g", 100 * (2.0 / 132) * 512 / 2048);
		w_str(w, b);
	}
}

static const char *kind_name(unsigned k)
{
	static const char *const n[] = {NULL, "Pageable", "Pinned", "Device"};
	assert_true(k < 4);
	return n[k];
}

static void gpu_ext_cols(struct want *w, const struct fixg_event *f, enum csv_export_file file)
{
	const struct trace_event_ext *x = &f->ext;
	char b[64];
	if (file == CSV_FILE_KERNELS || file == CSV_FILE_MEMCPY || file == CSV_FILE_MEMSET) {
		w_u64(w, FIXG_DEVICE);
		w_u64(w, FIXG_CONTEXT);
		w_u64(w, fixg_streams[f->track]);
	}
	w_opt(w, x->correlation);
	w_opt(w, x->external_id);
	switch (file) {
	case CSV_FILE_KERNELS:
		for (int i = 0; i < 3; i++)
			w_opt(w, x->grid[i]);
		for (int i = 0; i < 3; i++)
			w_opt(w, x->block[i]);
		w_opt(w, x->registers);
		w_u64(w, x->static_smem);
		w_u64(w, x->dynamic_smem);
		kernel_measures(w, f->name);
		break;
	case CSV_FILE_MEMCPY:
		w_u64(w, x->bytes);
		w_str(w, x->copy_kind == TRACE_COPY_HTOD ? "HtoD" : "DtoH");
		w_str(w, kind_name(x->src_kind));
		w_str(w, kind_name(x->dst_kind));
		w_u64(w, x->is_async);
		snprintf(b, sizeof(b), "~%.17g", (double)x->bytes / (double)f->dur_ns);
		w_str(w, b);
		break;
	case CSV_FILE_MEMSET:
		w_u64(w, x->bytes);
		w_str(w, kind_name(x->dst_kind));
		w_u64(w, x->is_async);
		snprintf(b, sizeof(b), "~%.17g", (double)x->bytes / (double)f->dur_ns);
		w_str(w, b);
		break;
	case CSV_FILE_MEMORY:
		w_i64(w, (int64_t)x->bytes);
		w_u64(w, x->address);
		w_i64(w, x->device);
		w_str(w, kind_name(x->dst_kind));
		w_opt(w, x->total_allocated);
		break;
	default: /* ranges, operators, runtime, marks: no sequence, shapes, samples */
		w_str(w, NONE);
		w_str(w, NONE);
		w_str(w, NONE);
		break;
	}
}

static int gpu_setup(void **state)
{
	char *path = fix_path("gpu.gpdl");
	assert_int_equal(fix_write_gpu(path), 0);
	struct exported *x = malloc(sizeof(*x));
	assert_non_null(x);
	export_csv(x, path);
	free(path);
	*state = x;
	return 0;
}

static int gpu_teardown(void **state)
{
	exported_free(*state);
	free(*state);
	fix_cleanup();
	return 0;
}

static void test_gpu_headers(void **state)
{
	assert_headers(*state);
}

static void test_gpu_events(void **state)
{
	const struct exported *x = *state;
	size_t per_file[CSV_FILE_COUNT] = {0};
	for (size_t k = 0; k < fixg_nevents; k++) {
		const struct fixg_event *f = &fixg_events[k];
		enum csv_export_file file = gpu_file(f);
		per_file[file]++;
		const struct row *r = row_at(x, file, FIX_START_NS + f->start_rel_ns, f->track);
		struct want w = {0};
		common_cols(&w, f->name, trace_event_type_name(f->type), FIX_START_NS + f->start_rel_ns,
			    f->dur_ns, FIXG_PID, f->track == FIXG_TRACK_HOST ? FIXG_PID : 0,
			    f->track, NONE, NONE, 0);
		if (f->has_ext) {
			gpu_ext_cols(&w, f, file);
		} else { /* a host file's five detail columns */
			for (int i = 0; i < 5; i++)
				w_str(&w, NONE);
		}
		assert_row(csv_export_file_names[file], r, &w);
	}
	/* nothing else in any event file; the two ProfileSteps are the steps */
	for (int i = CSV_FILE_RANGES; i <= CSV_FILE_COMMUNICATION; i++)
		assert_int_equal(x->t[i].n - 1, per_file[i]);
	assert_int_equal(x->t[CSV_FILE_STEPS].n - 1, 2);
	assert_int_equal(per_file[CSV_FILE_KERNELS], 5);
	assert_int_equal(per_file[CSV_FILE_MEMORY], 3);
	assert_int_equal(per_file[CSV_FILE_MARKS], 1);
}

static void test_gpu_tables(void **state)
{
	const struct exported *x = *state;
	struct want w = {0};
	/* trace.csv */
	assert_int_equal(x->t[CSV_FILE_TRACE].n, 2);
	const char *v[] = {FIX_FORMAT_VERSION, "0.1.0", ("gprof-dl " GPDL_VERSION), "gpu-host",
			   "200", "0", "0", "1", "nccl", "python train.py", "CLOCK_MONOTONIC"};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		w_str(&w, v[i]);
	w_i64(&w, FIX_WALL_OFFSET_NS);
	w_u64(&w, FIX_START_NS);
	w_u64(&w, FIXG_END_NS);
	w_u64(&w, FIXG_END_NS - FIX_START_NS);
	w_str(&w, "16");
	w_str(&w, "nvtx cupti");
	w_u64(&w, fixg_nevents);
	w_str(&w, "1");
	w_u64(&w, FIXG_DROPS);
	w_str(&w, NONE);
	w_str(&w, NONE);
	assert_row("trace.csv", &x->t[CSV_FILE_TRACE].rows[1], &w);

	/* processes.csv */
	assert_int_equal(x->t[CSV_FILE_PROCESSES].n, 2);
	w_u64(&w, FIXG_PID);
	w_str(&w, "1");
	w_u64(&w, FIX_START_NS);
	w_u64(&w, FIXG_END_NS);
	w_proc_fields(&w, "gpu.gpdl", 0);
	w_str(&w, "python train.py");
	assert_row("processes.csv", &x->t[CSV_FILE_PROCESSES].rows[1], &w);

	/* threads.csv: the host thread and the two streams */
	static const char *names[FIXG_TRACKS] = {"python", "", "nccl"};
	size_t events[FIXG_TRACKS] = {0};
	for (size_t k = 0; k < fixg_nevents; k++)
		events[fixg_events[k].track]++;
	assert_int_equal(x->t[CSV_FILE_THREADS].n, 1 + FIXG_TRACKS);
	for (unsigned i = 0; i < FIXG_TRACKS; i++) {
		int host = i == FIXG_TRACK_HOST;
		w_u64(&w, i);
		w_str(&w, host ? "host" : "stream");
		w_u64(&w, FIXG_PID);
		w_u64(&w, host ? FIXG_PID : 0);
		w_str(&w, names[i]);
		w_u64(&w, FIX_START_NS);
		w_u64(&w, FIXG_END_NS);
		if (host) {
			w_str(&w, NONE);
			w_str(&w, NONE);
			w_str(&w, NONE);
		} else {
			w_u64(&w, FIXG_DEVICE);
			w_u64(&w, FIXG_CONTEXT);
			w_u64(&w, fixg_streams[i]);
		}
		w_u64(&w, events[i]);
		w_u64(&w, i == FIXG_TRACK_S13 ? FIXG_DROPS : 0);
		assert_row("threads.csv", &x->t[CSV_FILE_THREADS].rows[1 + i], &w);
	}

	/* devices.csv */
	const struct trace_device *g = &fixg_device;
	assert_int_equal(x->t[CSV_FILE_DEVICES].n, 2);
	w_u64(&w, g->id);
	w_str(&w, fixg_device_name);
	const uint64_t dv[] = {g->sm_count, g->max_threads_per_sm, g->max_threads_per_block,
			       g->max_blocks_per_sm, g->warp_size, g->regs_per_sm,
			       g->regs_per_block, g->smem_per_sm, g->smem_per_block,
			       g->total_memory, g->clock_khz, g->cc_major, g->cc_minor};
	for (size_t i = 0; i < sizeof(dv) / sizeof(dv[0]); i++)
		w_u64(&w, dv[i]);
	assert_row("devices.csv", &x->t[CSV_FILE_DEVICES].rows[1], &w);

	/* counters.csv */
	assert_int_equal(x->t[CSV_FILE_COUNTERS].n, 2);
	w_u64(&w, FIX_START_NS + 10000000);
	w_str(&w, "CPU(Process)");
	w_u64(&w, TRACE_CTR_CPU_PROCESS);
	w_str(&w, "0");
	w_str(&w, "55.5");
	assert_row("counters.csv", &x->t[CSV_FILE_COUNTERS].rows[1], &w);
}

/* ---- the host fixture: names, domains, categories, flags ------------------ */

static int host_setup(void **state)
{
	char *path = fix_path("fixture.gpdl");
	assert_int_equal(fix_write(path), 0);
	struct exported *x = malloc(sizeof(*x));
	assert_non_null(x);
	export_csv(x, path);
	free(path);
	*state = x;
	return 0;
}

static void test_host_headers(void **state)
{
	assert_headers(*state);
}

static void test_host_events(void **state)
{
	static const uint64_t pids[FIX_THREADS] = {FIX_PID, FIX_PID, FIX_CHILD_PID};
	static const uint64_t tids[FIX_THREADS] = {FIX_PID, 102, FIX_CHILD_PID};
	const struct exported *x = *state;
	struct want w = {0};
	/* every byte value in a name: ill-formed UTF-8 reads as U+FFFD */
	for (unsigned b = 1; b <= FIX_BYTE_RANGES; b++) {
		char name[8];
		if (b < 0x80)
			snprintf(name, sizeof(name), "<%c>", (char)b);
		else
			snprintf(name, sizeof(name), "<%s>", FFFD);
		uint64_t start = FIX_START_NS + b * 1000 + 1;
		common_cols(&w, name, "UserDefined", start, b, FIX_PID, FIX_PID, 0, NONE, NONE, 0);
		for (int i = 0; i < 5; i++)
			w_str(&w, NONE);
		assert_row("ranges.csv", row_at(x, CSV_FILE_RANGES, start, 0), &w);
	}
	size_t marks = 0, ops = 0;
	for (size_t i = 0; i < fix_ncases; i++) {
		const struct fix_case *c = &fix_cases[i];
		enum csv_export_file f = (c->flags & TRACE_EVF_MARK) ? CSV_FILE_MARKS
					 : c->type == TRACE_EV_OPERATOR ? CSV_FILE_OPERATORS
									 : CSV_FILE_RANGES;
		marks += f == CSV_FILE_MARKS;
		ops += f == CSV_FILE_OPERATORS;
		const char *category = c->category == 3 ? "Forward-cat"
				       : c->category == 9 ? "9"
							  : NONE;
		uint64_t start = FIX_START_NS + c->start_rel_ns;
		common_cols(&w, c->expect, trace_event_type_name(c->type), start, c->dur_ns,
			    pids[c->thread], tids[c->thread], c->thread, c->domain, category,
			    c->flags);
		for (int i = 0; i < 5; i++)
			w_str(&w, NONE);
		assert_row(csv_export_file_names[f], row_at(x, f, start, c->thread), &w);
	}
	assert_int_equal(x->t[CSV_FILE_RANGES].n - 1, FIX_BYTE_RANGES + fix_ncases - marks - ops);
	assert_int_equal(x->t[CSV_FILE_MARKS].n - 1, marks);
	assert_int_equal(x->t[CSV_FILE_OPERATORS].n - 1, ops);
	/* its one ProfileStep, with a name in UTF-8, is steps.csv's one row */
	assert_int_equal(x->t[CSV_FILE_STEPS].n, 2);
	for (size_t i = 0; i < fix_ncases; i++) {
		const struct fix_case *c = &fix_cases[i];
		if (c->type != TRACE_EV_PROFILE_STEP)
			continue;
		char thread[16];
		snprintf(thread, sizeof(thread), "%u", c->thread);
		assert_step(&x->t[CSV_FILE_STEPS].rows[1], "0", c->expect,
			    FIX_START_NS + c->start_rel_ns, c->dur_ns, NONE, thread);
	}
	for (int f = CSV_FILE_RUNTIME; f <= CSV_FILE_COMMUNICATION; f++)
		if (f != CSV_FILE_MARKS)
			assert_int_equal(x->t[f].n, 1); /* a header and nothing else */
	assert_int_equal(x->t[CSV_FILE_DEVICES].n, 1);
}

static void test_host_tables(void **state)
{
	const struct exported *x = *state;
	struct want w = {0};
	/* counters, in file order */
	static const struct {
		uint64_t ts;
		const char *name, *id, *pid, *value;
	} ctr[] = {
		{1000000, "CPU(Process)", "1", "0", "10.5"},  {2000000, "CPU(Process)", "1", "0", "20.25"},
		{3000000, "CPU(Process)", "1", "0", "99"},    {1000000, "CPU(System)", "2", "0", "50"},
		{2000000, "CPU(System)", "2", "0", "75.125"}, {2500000, "RSS", "3", "101", "1048576"},
	};
	assert_int_equal(x->t[CSV_FILE_COUNTERS].n, 1 + sizeof(ctr) / sizeof(ctr[0]));
	for (size_t i = 0; i < sizeof(ctr) / sizeof(ctr[0]); i++) {
		w_u64(&w, FIX_START_NS + ctr[i].ts);
		w_str(&w, ctr[i].name);
		w_str(&w, ctr[i].id);
		w_str(&w, ctr[i].pid);
		w_str(&w, ctr[i].value);
		assert_row("counters.csv", &x->t[CSV_FILE_COUNTERS].rows[1 + i], &w);
	}
	/* processes: the child died of SIGKILL (137); the root's command line */
	assert_int_equal(x->t[CSV_FILE_PROCESSES].n, 3);
	const struct row *child = &x->t[CSV_FILE_PROCESSES].rows[2];
	w_u64(&w, FIX_CHILD_PID);
	w_u64(&w, FIX_PID);
	w_u64(&w, FIX_START_NS + 1000000000);
	w_u64(&w, FIX_START_NS + 4000000000);
	w_proc_fields(&w, "fixture.gpdl", 1);
	assert_string_equal(w.f[4], "137");
	w_str(&w, "worker");
	assert_row("processes.csv", child, &w);
	/* threads: the named one (quotes, backslash, control byte, bad byte),
	 * its events and drops; the child's unnamed thread that never ended */
	const struct row *t1 = &x->t[CSV_FILE_THREADS].rows[2];
	w_str(&w, "1");
	w_str(&w, "host");
	w_u64(&w, FIX_PID);
	w_str(&w, "102");
	w_str(&w, "worker \"1\" \\ \x01" FFFD);
	w_u64(&w, FIX_START_NS + 1000);
	w_u64(&w, FIX_END_NS);
	w_str(&w, NONE);
	w_str(&w, NONE);
	w_str(&w, NONE);
	w_str(&w, "6");
	w_u64(&w, FIX_DROPS);
	assert_row("threads.csv", t1, &w);
	const struct row *t2 = &x->t[CSV_FILE_THREADS].rows[3];
	assert_string_equal(t2->f[4], ""); /* quoted empty: a name that is empty */
	assert_null(t2->f[6]);             /* unquoted empty: no end */
	assert_string_equal(t2->f[10], "4");
	/* trace.csv: rank 3, not distributed otherwise */
	const struct row *tr = &x->t[CSV_FILE_TRACE].rows[1];
	assert_string_equal(tr->f[5], "3");
	assert_null(tr->f[7]);
	assert_null(tr->f[8]);
	assert_string_equal(tr->f[9], "./app --x \"quoted\"");
	assert_string_equal(tr->f[16], "nvtx python");
	assert_string_equal(tr->f[19], "5");
}

/* ---- what the rest depends on --------------------------------------------- */

static void test_route(void **state)
{
	(void)state;
	assert_int_equal(csv_export_route(TRACE_EV_COMMUNICATION, 0, 1), CSV_FILE_KERNELS);
	assert_int_equal(csv_export_route(TRACE_EV_COMMUNICATION, 0, 0), CSV_FILE_COMMUNICATION);
	assert_int_equal(csv_export_route(TRACE_EV_COMMUNICATION, TRACE_EVF_MARK, 0),
			 CSV_FILE_MARKS);
	assert_int_equal(csv_export_route(TRACE_EV_OPERATOR_INNER, 0, 0), CSV_FILE_OPERATORS);
	assert_int_equal(csv_export_route(TRACE_EV_OPERATOR, TRACE_EVF_MARK, 0), CSV_FILE_MARKS);
	assert_int_equal(csv_export_route(TRACE_EV_MEMORY, TRACE_EVF_MARK, 0), CSV_FILE_MEMORY);
	assert_int_equal(csv_export_route(TRACE_EV_FORWARD, 0, 0), CSV_FILE_RANGES);
	assert_int_equal(csv_export_route(TRACE_EV_TYPE_COUNT + 7, 0, 0), CSV_FILE_RANGES);
	assert_int_equal(csv_export_route(TRACE_EV_KERNEL, 0, 0), CSV_FILE_KERNELS);
}

static void test_utf8_clean(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"plain", "plain"},
		{"donn\xc3\xa9" "es \xf0\x9f\x9a\x80", "donn\xc3\xa9" "es \xf0\x9f\x9a\x80"},
		{"\xe2\x82 ", FFFD " "},                     /* truncated: one */
		{"\xed\xa0\x80", FFFD FFFD FFFD},            /* a surrogate: three */
		{"\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD},   /* above U+10FFFF */
		{"\xc0\xaf", FFFD FFFD},                     /* overlong */
		{"\xff", FFFD},
		{"a\xf0\x9f\x9a", "a" FFFD},                 /* cut at the end */
	};
	char buf[64];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = csv_utf8_clean(buf, cases[i].in, strlen(cases[i].in));
		assert_int_equal(n, strlen(cases[i].out));
		assert_string_equal(buf, cases[i].out);
	}
}

static void test_numbers(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	struct csv_out c;
	csv_out_init(&c, f);
	csv_out_fixed(&c, 2.0, 6);
	csv_out_fixed(&c, 4.194304, 6);
	csv_out_fixed(&c, -0.5, 6);
	csv_out_fixed(&c, 2.0 / 132, 6);
	csv_out_fixed(&c, -1e-7, 6); /* rounds to zero, without a sign */
	csv_out_fixed(&c, 1e300, 6); /* beyond integers: exact digits */
	csv_out_fixed(&c, NAN, 6);
	csv_out_uint(&c, UINT64_MAX);
	csv_out_int(&c, INT64_MIN);
	csv_out_double(&c, 0.1);
	csv_out_double(&c, 1048576.0);
	csv_out_text(&c, "a,\"b\"\n");
	csv_out_empty(&c);
	csv_out_end_row(&c);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(text, "2,4.194304,-0.5,0.015152,0,1e+300,,18446744073709551615,"
				  "-9223372036854775808,0.1,1048576,\"a,\"\"b\"\"\n\",\r\n");
	free(text);
}

/* Every number of digits, at its edges (10^k - 1, 10^k, 10^k + 1) and in
 * between, and the 8- and 16-digit seams of the writer's eight-digit steps:
 * the same text as printf's, buffered (in place) and not. */
static void test_uint_every_length(void **state)
{
	(void)state;
	uint64_t vals[200];
	size_t n = 0;
	vals[n++] = 0;
	for (uint64_t p = 1, k = 0; k < 20; k++, p *= 10) {
		vals[n++] = p - 1;
		vals[n++] = p;
		vals[n++] = p + 1;
		vals[n++] = p * 7 + 12345678 % p;
		if (p <= UINT64_MAX / 10 - 1)
			vals[n++] = p * 10 - 2;
	}
	vals[n++] = 10000000001234567ull; /* zeros inside the lower eight-digit runs */
	vals[n++] = 1000000000000000001ull;
	vals[n++] = 1700000000000000000ull;
	vals[n++] = UINT64_MAX;
	vals[n++] = UINT64_MAX - 1;
	char want[8192] = "";
	size_t at = 0;
	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(want + at, sizeof(want) - at, "%s%llu", i ? "," : "",
				       (unsigned long long)vals[i]);
	snprintf(want + at, sizeof(want) - at, "\r\n");
	for (int buffered = 0; buffered < 2; buffered++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		assert_non_null(f);
		struct csv_out c;
		if (buffered)
			csv_out_init_buffered(&c, f, 4096);
		else
			csv_out_init(&c, f);
		for (size_t i = 0; i < n; i++)
			csv_out_uint(&c, vals[i]);
		csv_out_end_row(&c);
		csv_out_release(&c);
		assert_int_equal(fclose(f), 0);
		assert_string_equal(text, want);
		free(text);
	}
}

/* ---- the ops fixture: sequence numbers, input shapes, samples (1.2) ------- */

static void test_ops_events(void **state)
{
	(void)state;
	char *path = fix_path("ops.gpdl");
	assert_int_equal(fix_write_ops(path), 0);
	struct exported x;
	export_csv(&x, path);
	free(path);
	assert_header(&x.t[CSV_FILE_OPERATORS], CSV_FILE_OPERATORS, H(h_host));
	size_t ops = 0, ranges = 0;
	for (size_t k = 0; k < fixo_nevents; k++) {
		const struct fixo_event *f = &fixo_events[k];
		enum csv_export_file file = f->type == TRACE_EV_OPERATOR ? CSV_FILE_OPERATORS
									 : CSV_FILE_RANGES;
		ops += file == CSV_FILE_OPERATORS;
		ranges += file == CSV_FILE_RANGES;
		uint64_t start = FIX_START_NS + f->start_rel_ns;
		char category[8];
		snprintf(category, sizeof(category), "%u", f->type);
		struct want w = {0};
		common_cols(&w, f->name, trace_event_type_name(f->type), start, f->dur_ns, FIXO_PID,
			    FIXO_PID, 0, "gprof-dl", category, 0);
		w_str(&w, NONE); /* correlation */
		w_str(&w, NONE); /* external_id */
		if (f->has_seq)
			w_i64(&w, f->seq);
		else
			w_str(&w, NONE);
		w_str(&w, f->shapes); /* quoted text: "" is an empty one */
		w_opt(&w, f->samples);
		const struct row *r = row_at(&x, file, start, 0);
		assert_row(csv_export_file_names[file], r, &w);
	}
	assert_int_equal(x.t[CSV_FILE_OPERATORS].n - 1, ops);
	assert_int_equal(x.t[CSV_FILE_RANGES].n - 1, ranges);
	/* an empty shapes string is quoted: not the same as none */
	const struct row *blank = row_at(&x, CSV_FILE_OPERATORS, FIX_START_NS + 8 * 1000000 + 1000, 0);
	assert_non_null(blank->f[17]);
	assert_string_equal(blank->f[17], "");
	exported_free(&x);
}

/* ---- steps.csv: the part's steps in start order ----------------------------- */

/* The ops fixture's two ProfilerSteps, numbered in start order with their
 * samples (64, then none); its Dataloader is no step. */
static void test_steps(void **state)
{
	(void)state;
	char *path = fix_path("ops-steps.gpdl");
	assert_int_equal(fix_write_ops(path), 0);
	struct exported x;
	export_csv(&x, path);
	assert_header(&x.t[CSV_FILE_STEPS], CSV_FILE_STEPS, H(h_steps));
	assert_int_equal(x.t[CSV_FILE_STEPS].n, 3);
	assert_step_sched(&x.t[CSV_FILE_STEPS].rows[1], "0", "ProfilerStep#0", FIX_START_NS, 10000000,
			  "64", "0", "7000000", "1500000");
	assert_step(&x.t[CSV_FILE_STEPS].rows[2], "1", "ProfilerStep#1", FIX_START_NS + 10000000,
		    10000000, NONE, "0");
	exported_free(&x);

	/* the SQL variant: times on the job clock, no rank column of its own */
	const struct csv_export_opts o = {.sql = 1, .time_offset_ns = -1000, .rank = 3};
	export_csv_opts(&x, path, &o);
	free(path);
	assert_step(&x.t[CSV_FILE_STEPS].rows[2], "1", "ProfilerStep#1",
		    FIX_START_NS + 10000000 - 1000, 10000000, NONE, "0");
	for (int f = 0; f < CSV_FILE_COUNT; f++) {
		const struct csv_column *cols;
		size_t n = csv_export_columns((enum csv_export_file)f, 1, &cols);
		const char *names[MAXCOLS];
		assert_true(n > 0 && n <= MAXCOLS);
		for (size_t k = 0; k < n; k++) {
			names[k] = cols[k].name;
			assert_string_not_equal(names[k], "rank");
		}
		assert_header(&x.t[f], (enum csv_export_file)f, names, n);
	}
	assert_int_equal(x.t[CSV_FILE_TRACE].rows[0].n, sizeof(h_trace) / sizeof(h_trace[0]) - 1);
	assert_int_equal(x.t[CSV_FILE_PROCESSES].rows[0].n,
			 sizeof(h_processes) / sizeof(h_processes[0]) - 1);
	const struct row *op = row_at(&x, CSV_FILE_OPERATORS, FIX_START_NS + 1000000 - 1000, 0);
	assert_int_equal(strtoull(op->f[1], NULL, 10), FIX_START_NS + 1100000 - 1000); /* end_ns */
	assert_string_equal(op->f[2], "100000");  /* a duration stays */
	assert_string_equal(csv_export_table_name(CSV_FILE_TRACE, 1), "ranks");
	assert_string_equal(csv_export_table_name(CSV_FILE_TRACE, 0), "trace");
	assert_string_equal(csv_export_table_name(CSV_FILE_STEPS, 1), "steps");
	exported_free(&x);
}

/* Nested, empty, unfinished and instant ProfileSteps are no steps, as the
 * analysis counts them; a UserDefined range with a step's name is one. */
static void test_steps_rule(void **state)
{
	(void)state;
	char *path = fix_path("steps-rule.gpdl");
	struct trace_writer *tw = trace_writer_open(path, 1);
	assert_non_null(tw);
	struct trace_header h = {
		.version_major = TRACE_FORMAT_VERSION_MAJOR,
		.version_minor = TRACE_FORMAT_VERSION_MINOR,
		.clock_domain = "CLOCK_MONOTONIC",
		.hostname = "h",
		.pid = 7,
		.rank = -1,
		.local_rank = -1,
		.world_size = -1,
		.dist_backend = "",
		.cmdline = "x",
		.start_ns = 1000,
	};
	assert_int_equal(trace_writer_header(tw, &h), 0);
	uint32_t name = trace_writer_string(tw, "t", 1);
	for (uint32_t k = 0; k < 2; k++) {
		struct trace_thread t = {.index = k, .pid = 7, .tid = 7 + k, .name_str = name,
					 .start_ns = 1000};
		assert_int_equal(trace_writer_thread(tw, &t), 0);
	}
	uint32_t step = trace_writer_desc(tw, trace_writer_string(tw, "ProfileStep", 11), 0, 0,
					  TRACE_EV_PROFILE_STEP);
	uint32_t named = trace_writer_desc(tw, trace_writer_string(tw, "ProfilerStep#5", 14), 0, 0,
					   TRACE_EV_USER_DEFINED);
	uint32_t odd = trace_writer_desc(tw, trace_writer_string(tw, "ProfilerStep#x", 14), 0, 0,
					 TRACE_EV_USER_DEFINED);
	const struct trace_event ev[] = {
		{.thread = 0, .desc = step, .start_ns = 5000, .dur_ns = 1000},   /* step 2 */
		{.thread = 0, .desc = step, .start_ns = 5100, .dur_ns = 100},    /* nested */
		{.thread = 0, .desc = named, .start_ns = 5500, .dur_ns = 500},   /* nested */
		{.thread = 0, .desc = step, .start_ns = 2000, .dur_ns = 1000},   /* step 0 */
		{.thread = 1, .desc = named, .start_ns = 3000, .dur_ns = 1500},  /* step 1 */
		{.thread = 1, .desc = odd, .start_ns = 7000, .dur_ns = 100},     /* no step */
		{.thread = 0, .desc = step, .start_ns = 8000, .dur_ns = 0},      /* empty */
		{.thread = 0, .desc = step, .start_ns = 9000, .dur_ns = 0, .flags = TRACE_EVF_MARK},
		{.thread = 1, .desc = step, .start_ns = 9500, .dur_ns = 100,
		 .flags = TRACE_EVF_OPEN_AT_EXIT},
	};
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		assert_int_equal(trace_writer_event(tw, &ev[i]), 0);
	assert_int_equal(trace_writer_close(tw, 20000), 0);
	struct exported x;
	export_csv(&x, path);
	free(path);
	assert_int_equal(x.t[CSV_FILE_STEPS].n, 4);
	assert_step(&x.t[CSV_FILE_STEPS].rows[1], "0", "ProfileStep", 2000, 1000, NONE, "0");
	assert_step(&x.t[CSV_FILE_STEPS].rows[2], "1", "ProfilerStep#5", 3000, 1500, NONE, "1");
	assert_step(&x.t[CSV_FILE_STEPS].rows[3], "2", "ProfileStep", 5000, 1000, NONE, "0");
	exported_free(&x);
}

/* ---- events of one desc: its fields are made once ------------------------ */

/* Every event repeats its desc's name, type, domain and category, whatever
 * the events of the same desc before it were; flags and times are its own. */
static void test_repeated_descs(void **state)
{
	(void)state;
	char *path = fix_path("repeats.gpdl");
	assert_int_equal(fix_write_repeats(path), 0);
	struct exported x;
	export_csv(&x, path);
	free(path);
	size_t n[CSV_FILE_COUNT] = {0};
	for (unsigned i = 0; i < FIXR_EVENTS; i++) {
		uint8_t flags = fixr_flags[i % FIXR_NFLAGS];
		enum csv_export_file file = flags & TRACE_EVF_MARK ? CSV_FILE_MARKS
					    : i % 2		 ? CSV_FILE_OPERATORS
								 : CSV_FILE_RANGES;
		n[file]++;
		uint64_t start = FIX_START_NS + fixr_start_rel(i);
		struct want w = {0};
		common_cols(&w, fixr_names[i % 2], i % 2 ? "Operator" : "UserDefined", start,
			    fixr_dur(i), FIX_PID, FIX_PID, 0, NONE, NONE, flags);
		for (int k = 0; k < 5; k++) /* ids, seq_nr, input_shapes, samples */
			w_str(&w, NONE);
		assert_row(csv_export_file_names[file], row_at(&x, file, start, 0), &w);
	}
	assert_int_equal(n[CSV_FILE_MARKS], 2 * FIXR_EVENTS / FIXR_NFLAGS);
	assert_int_equal(x.t[CSV_FILE_MARKS].n - 1, n[CSV_FILE_MARKS]);
	assert_int_equal(x.t[CSV_FILE_OPERATORS].n - 1, n[CSV_FILE_OPERATORS]);
	assert_int_equal(x.t[CSV_FILE_RANGES].n - 1, n[CSV_FILE_RANGES]);
	exported_free(&x);
}

/* csv_quote() is libcsv's csv_write() quoting, byte for byte. */
static void test_quote_as_libcsv(void **state)
{
	(void)state;
	char s[300], mine[2 * sizeof(s) + 2], theirs[2 * sizeof(s) + 2];
	unsigned seed = 12345;
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)(round % 7 == 0 ? round % 300 : round % 23);
		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			unsigned b = (seed >> 16) & 0xff;
			s[i] = (char)(b % 4 == 0 ? '"' : b);
		}
		size_t a = csv_quote(mine, s, len);
		size_t b = csv_write(theirs, sizeof(theirs), s, len);
		assert_int_equal(a, b);
		assert_memory_equal(mine, theirs, a);
	}
}

static void write_rows(struct csv_out *c)
{
	char text[5000];
	for (int r = 0; r < 200; r++) {
		csv_out_uint(c, UINT64_MAX - (uint64_t)r * 977);
		csv_out_int(c, INT64_MIN + r);
		csv_out_empty(c);
		memset(text, r % 2 ? '"' : 'x', sizeof(text) - 1);
		text[(size_t)r * 20 % (sizeof(text) - 1)] = '\xc3';
		text[sizeof(text) - 1 - (size_t)r * 20] = '\0';
		csv_out_text(c, text);
		csv_out_raw(c, "\"a\",", 4);
		csv_out_fixed(c, r * 0.125 - 3, 6);
		csv_out_uint(c, (uint64_t)r);
		if (r % 50 == 0)
			csv_out_field(c, "field, \"quoted\"");
		csv_out_end_row(c);
	}
}

/* The buffered output writes the bytes of the plain one, whatever falls
 * across its buffer's end, csv_out_field's stdio path included. */
static void test_buffered_same_bytes(void **state)
{
	(void)state;
	char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	FILE *fa = open_memstream(&a, &alen), *fb = open_memstream(&b, &blen);
	assert_non_null(fa);
	assert_non_null(fb);
	struct csv_out plain, buffered;
	csv_out_init(&plain, fa);
	csv_out_init_buffered(&buffered, fb, 4096);
	write_rows(&plain);
	write_rows(&buffered);
	assert_int_equal(csv_out_flush(&buffered), 0);
	assert_false(csv_out_error(&plain));
	assert_false(csv_out_error(&buffered));
	csv_out_release(&buffered);
	assert_int_equal(fclose(fa), 0);
	assert_int_equal(fclose(fb), 0);
	assert_true(alen > 200 * 4096);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(a);
	free(b);
}

/* ---- ranks and collectives (1.3) ------------------------------------------ */

/* A launcher's recording of two gloo ranks: processes.csv says which rank
 * each process is and how it ended; communication.csv has each call with
 * what matches it across ranks. */
static void test_comm_events(void **state)
{
	(void)state;
	char *path = fix_path("comm.gpdl");
	struct trace_writer *w = trace_writer_open(path, 1);
	assert_non_null(w);
	const struct trace_header h = { .clock_domain = "CLOCK_MONOTONIC", .pid = 500, .rank = -1,
					.local_rank = -1, .world_size = 2, .dist_backend = "gloo",
					.start_ns = 1000 };
	assert_int_equal(trace_writer_header(w, &h), 0);
	uint32_t gloo = trace_writer_string(w, "gloo", 4);
	uint32_t cmd = trace_writer_string(w, "python train.py", 15);
	uint32_t pg = trace_writer_string(w, "0", 1);
	uint32_t dt = trace_writer_string(w, "float", 5);
	const char *const names[] = { "gloo:all_reduce", "gloo:barrier", "gloo:send",
				      "NCCL:broadcast", "allreduce_hook" };
	uint32_t d[5];
	for (int i = 0; i < 5; i++)
		d[i] = trace_writer_desc(w, trace_writer_string(w, names[i], strlen(names[i])), 0, 0,
					 TRACE_EV_COMMUNICATION);
	const struct trace_process procs[3] = {
		{ 500, 1, 1000, 9000, 0, cmd, -1, -1, -1, 0 },
		{ 501, 500, 1100, 5000, TRACE_EXIT_KILLED, cmd, 0, 0, 2, gloo },
		{ 502, 500, 1100, 8000, 0, cmd, 1, 1, 2, gloo },
	};
	for (int i = 0; i < 3; i++)
		assert_int_equal(trace_writer_process(w, &procs[i]), 0);
	struct trace_thread t = { 0, 502, 510, 0, 1100, 0 };
	assert_int_equal(trace_writer_thread(w, &t), 0);
	const struct trace_event_ext x[5] = {
		{ .bytes = 4u << 20, .has_coll_seq = 1, .coll_seq = 7, .pg_str = pg,
		  .group_size = 2, .dtype_str = dt, .correlation = 3 },
		{ .has_coll_seq = 1, .coll_seq = 0, .pg_str = pg, .group_size = 2 },
		{ .bytes = 512, .has_coll_seq = 1, .coll_seq = 8, .pg_str = pg, .group_size = 2,
		  .dtype_str = dt, .has_peer = 1, .peer = 0 },
		{ .group_size = 8 },
		{ 0 },
	};
	for (uint32_t i = 0; i < 5; i++) {
		struct trace_event e = { 2000 + 100 * i, 50, d[i], 0, 0, &x[i] };
		assert_int_equal(trace_writer_event(w, &e), 0);
	}
	assert_int_equal(trace_writer_close(w, 9000), 0);

	struct exported ex;
	export_csv(&ex, path);
	free(path);
	assert_headers(&ex);
	/* {backend, op, bytes, coll_seq, process_group, group_size, dtype, peer} */
	static const char *const want[5][8] = {
		{ "gloo", "all_reduce", "4194304", "7", "0", "2", "float", NONE },
		{ "gloo", "barrier", "0", "0", "0", "2", NONE, NONE },
		{ "gloo", "send", "512", "8", "0", "2", "float", "0" },
		{ "NCCL", "broadcast", "0", NONE, NONE, "8", NONE, NONE },
		{ NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE },
	};
	assert_int_equal(ex.t[CSV_FILE_COMMUNICATION].n, 1 + 5);
	for (uint32_t i = 0; i < 5; i++) {
		struct want wr = {0};
		common_cols(&wr, names[i], "Communication", 2000 + 100 * i, 50, 502, 510, 0, NONE,
			    NONE, 0);
		w_opt(&wr, x[i].correlation);
		w_str(&wr, NONE);
		for (int k = 0; k < 8; k++)
			w_str(&wr, want[i][k]);
		assert_row("communication.csv", row_at(&ex, CSV_FILE_COMMUNICATION, 2000 + 100 * i, 0),
			   &wr);
	}
	assert_int_equal(ex.t[CSV_FILE_OPERATORS].n, 1);
	/* {exit_status, killed, rank, local_rank, world_size, backend} */
	static const char *const pw[3][6] = {
		{ "0", "0", NONE, NONE, NONE, NONE },
		{ NONE, "1", "0", "0", "2", "gloo" },
		{ "0", "0", "1", "1", "2", "gloo" },
	};
	assert_int_equal(ex.t[CSV_FILE_PROCESSES].n, 1 + 3);
	for (int i = 0; i < 3; i++) {
		struct want wr = {0};
		w_u64(&wr, procs[i].pid);
		w_u64(&wr, procs[i].ppid);
		w_u64(&wr, procs[i].start_ns);
		w_u64(&wr, procs[i].end_ns);
		for (int k = 0; k < 6; k++)
			w_str(&wr, pw[i][k]);
		w_str(&wr, "python train.py");
		assert_row("processes.csv", &ex.t[CSV_FILE_PROCESSES].rows[1 + i], &wr);
	}
	/* trace.csv: the launcher's file, of no one rank, in a world of 2 */
	const struct row *tr = &ex.t[CSV_FILE_TRACE].rows[1];
	assert_string_equal(tr->f[0], FIX_FORMAT_VERSION);
	assert_null(tr->f[5]);
	assert_null(tr->f[6]);
	assert_string_equal(tr->f[7], "2");
	assert_string_equal(tr->f[8], "gloo");
	exported_free(&ex);
}

static void test_write_error(void **state)
{
	(void)state;
	FILE *full = fopen("/dev/full", "w");
	if (!full)
		skip();
	char *path = fix_path("gpu-full.gpdl");
	assert_int_equal(fix_write_gpu(path), 0);
	char err[512];
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	FILE *outs[CSV_FILE_COUNT];
	for (int i = 0; i < CSV_FILE_COUNT; i++)
		outs[i] = full;
	setvbuf(full, NULL, _IONBF, 0); /* the first write fails, not the caller's flush */
	struct export_writer *w = csv_export_new(outs);
	assert_int_not_equal(export_writer_run(w, r), 0);
	export_writer_destroy(w);
	trace_reader_close(r);
	fclose(full);
	free(path);
}

int main(void)
{
	const struct CMUnitTest gpu[] = {
		cmocka_unit_test(test_gpu_headers),
		cmocka_unit_test(test_gpu_events),
		cmocka_unit_test(test_gpu_tables),
	};
	const struct CMUnitTest host[] = {
		cmocka_unit_test(test_host_headers),
		cmocka_unit_test(test_host_events),
		cmocka_unit_test(test_host_tables),
	};
	const struct CMUnitTest other[] = {
		cmocka_unit_test(test_route),
		cmocka_unit_test(test_utf8_clean),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_uint_every_length),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_ops_events),
		cmocka_unit_test(test_repeated_descs),
		cmocka_unit_test(test_quote_as_libcsv),
		cmocka_unit_test(test_buffered_same_bytes),
		cmocka_unit_test(test_comm_events),
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_steps_rule),
	};
	int failed = cmocka_run_group_tests_name("gpu", gpu, gpu_setup, gpu_teardown);
	failed += cmocka_run_group_tests_name("host", host, host_setup, gpu_teardown);
	failed += cmocka_run_group_tests_name("other", other, NULL, NULL);
	fix_cleanup();
	return failed;
}
