/*
 * test_render.c - the summary as CSV and JSON, read back by real parsers:
 * libcsv's csv_parse() and yajl's tree parser. Counts and values must be
 * what the text shows, in the chosen time unit, with raw nanoseconds in JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/summary.h"
#include "tests/analysis/tracebuild.h"

#include <csv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

/* ---- the trace ------------------------------------------------------------ */

static const char *write_trace(void)
{
	struct tb b;
	tb_open(&b, "render.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	tb_thread(&b, 1, 11, "worker");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t A = tb_desc(&b, "A", TRACE_EV_USER_DEFINED);
	uint32_t B = tb_desc(&b, "B, with \"quotes\"", TRACE_EV_USER_DEFINED);
	uint32_t M = tb_desc(&b, "M", TRACE_EV_USER_DEFINED);
	uint32_t op = tb_desc(&b, "matmul", TRACE_EV_OPERATOR);
	tb_range(&b, 0, step, 0, 10000);
	tb_range(&b, 0, B, 1500, 1000);
	tb_mark(&b, 0, M, 3500);
	tb_range(&b, 0, B, 3000, 1000);
	tb_range(&b, 0, A, 1000, 4000);
	tb_range(&b, 1, A, 6000, 1000);
	tb_range(&b, 0, op, 5000, 2000);
	tb_range(&b, 1, op, 6000, 3000); /* overlaps: merged [5000, 9000) */
	tb_counter(&b, 10000, TRACE_CTR_CPU_PROCESS, 10, 150.0);
	tb_drops(&b, 1, 4);
	return tb_close(&b, 20000);
}

static char *summary_with(const char *path, enum summary_format format, enum time_unit unit,
			  int thread_sep, int op_detail)
{
	struct analysis a;
	char err[512];
	analysis_init(&a);
	if (analysis_load(&a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(&a);
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = unit,
					  .thread_sep = thread_sep, .op_detail = op_detail},
				 .format = format};
	char **buf = calloc(1, sizeof(*buf));
	size_t len = 0;
	FILE *f = open_memstream(buf, &len);
	assert_int_equal(summary_write(&a, &o, f), 0);
	fclose(f);
	analysis_free(&a);
	char *s = *buf;
	free(buf);
	return s;
}

static char *summary_to_string(const char *path, enum summary_format format, enum time_unit unit,
			       int thread_sep)
{
	return summary_with(path, format, unit, thread_sep, 0);
}

/* ---- CSV, through libcsv -------------------------------------------------- */

#define MAX_ROWS 64
#define MAX_FIELDS 40

/* One CSV table: f[0] the header, then the rows. */
struct csv_block {
	char *f[MAX_ROWS][MAX_FIELDS];
	int nf[MAX_ROWS];
	int nrows;
};

static void on_field(void *s, size_t len, void *data)
{
	struct csv_block *b = data;
	assert_true(b->nrows < MAX_ROWS && b->nf[b->nrows] < MAX_FIELDS);
	char *v = malloc(len + 1);
	memcpy(v, s, len);
	v[len] = '\0';
	b->f[b->nrows][b->nf[b->nrows]++] = v;
}

static void on_row(int c, void *data)
{
	(void)c;
	struct csv_block *b = data;
	b->nrows++;
}

static void block_free(struct csv_block *b)
{
	for (int r = 0; r <= b->nrows && r < MAX_ROWS; r++)
		for (int i = 0; i < b->nf[r]; i++)
			free(b->f[r][i]);
	free(b);
}

/* CSV table k of text (tables end at an empty line); each must have one
 * header row, "row,...", and rows of its width numbered from 1. */
static struct csv_block *csv_table_at(const char *text, int k)
{
	const char *p = text;
	for (int i = 0; *p; i++) {
		const char *end = strstr(p, "\r\n\r\n");
		assert_non_null(end); /* every table ends in an empty line */
		size_t len = (size_t)(end - p) + 2;
		if (i == k) {
			struct csv_block *b = calloc(1, sizeof(*b));
			struct csv_parser parser;
			assert_int_equal(csv_init(&parser, CSV_STRICT), 0);
			assert_int_equal(csv_parse(&parser, p, len, on_field, on_row, b), len);
			assert_int_equal(csv_fini(&parser, on_field, on_row, b), 0);
			csv_free(&parser);
			assert_true(b->nrows >= 1);
			assert_string_equal(b->f[0][0], "row");
			for (int r = 1; r < b->nrows; r++) {
				char id[16];
				snprintf(id, sizeof(id), "%d", r);
				assert_string_equal(b->f[r][0], id);
				assert_int_equal(b->nf[r], b->nf[0]);
			}
			return b;
		}
		p = end + 4;
	}
	fail_msg("no CSV table %d", k);
	return NULL;
}

static int csv_table_count(const char *text)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, "\r\n\r\n")); p += 4)
		n++;
	return n;
}

/* The CSV of one view: its tables only (no Trace Summary), table k. */
static struct csv_block *csv_view(const char *path, const char *view, enum time_unit unit,
				  int thread_sep, int k, int *ntables)
{
	struct analysis a;
	char err[512];
	analysis_init(&a);
	if (analysis_load(&a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(&a);
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = unit,
					  .thread_sep = thread_sep},
				 .format = SUMMARY_CSV};
	summary_add_view(&o, view_find(view));
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_int_equal(summary_write(&a, &o, f), 0);
	fclose(f);
	analysis_free(&a);
	if (ntables)
		*ntables = csv_table_count(text);
	struct csv_block *b = csv_table_at(text, k);
	free(text);
	return b;
}

/* The column named name; fails when there is none. */
static int csv_col(const struct csv_block *b, const char *name)
{
	for (int i = 0; i < b->nf[0]; i++)
		if (strcmp(b->f[0][i], name) == 0)
			return i;
	fail_msg("no CSV column '%s'", name);
	return -1;
}

static int csv_has_col(const struct csv_block *b, const char *name)
{
	for (int i = 0; i < b->nf[0]; i++)
		if (strcmp(b->f[0][i], name) == 0)
			return 1;
	return 0;
}

/* The first row whose column col holds value. */
static int csv_row_where(const struct csv_block *b, const char *col, const char *value)
{
	int c = csv_col(b, col);
	for (int r = 1; r < b->nrows; r++)
		if (c < b->nf[r] && strcmp(b->f[r][c], value) == 0)
			return r;
	fail_msg("no CSV row with %s '%s'", col, value);
	return -1;
}

static int csv_row(const struct csv_block *b, const char *name)
{
	return csv_row_where(b, "name", name);
}

static const char *cell(const struct csv_block *b, int r, const char *col)
{
	return b->f[r][csv_col(b, col)];
}

static void test_csv(void **state)
{
	(void)state;
	const char *path = write_trace();
	int n;
	struct csv_block *b = csv_view(path, "userdefined", TIME_UNIT_MS, 0, 0, &n);
	assert_int_equal(n, 1); /* one view, one table */
	/* one header row; the merged threads' part says nothing the text does not */
	static const char *const header[] = {
		"row",	       "name",	      "calls",	     "cpu_total_ms", "cpu_avg_ms",
		"cpu_max_ms",  "cpu_min_ms",  "cpu_ratio_pct", "gpu_total_ms", "gpu_avg_ms",
		"gpu_max_ms",  "gpu_min_ms",  "gpu_ratio_pct", "depth",	      "parent",
		"mark"};
	assert_int_equal(b->nf[0], 16);
	for (int i = 0; i < 16; i++)
		assert_string_equal(b->f[0][i], header[i]);
	int r = csv_row(b, "A");
	assert_string_equal(cell(b, r, "calls"), "2");
	assert_string_equal(cell(b, r, "cpu_total_ms"), "0.005000"); /* every digit to the ns */
	assert_string_equal(cell(b, r, "cpu_avg_ms"), "0.002500");
	assert_string_equal(cell(b, r, "cpu_max_ms"), "0.004000");
	assert_string_equal(cell(b, r, "cpu_min_ms"), "0.001000");
	assert_string_equal(cell(b, r, "cpu_ratio_pct"), "50.00");
	assert_string_equal(cell(b, r, "depth"), "0");
	assert_string_equal(cell(b, r, "parent"), "0");
	/* a child: its name as it is, its parent's row */
	int child = csv_row(b, "B, with \"quotes\"");
	assert_string_equal(cell(b, child, "calls"), "2");
	assert_string_equal(cell(b, child, "depth"), "1");
	assert_string_equal(cell(b, child, "parent"), b->f[r][0]);
	assert_string_equal(cell(b, child, "mark"), "0");
	int m = csv_row(b, "M");
	assert_string_equal(cell(b, m, "calls"), "1");
	assert_string_equal(cell(b, m, "cpu_total_ms"), ""); /* no time: an empty field */
	assert_string_equal(cell(b, m, "depth"), "2");
	assert_string_equal(cell(b, m, "parent"), b->f[child][0]);
	assert_string_equal(cell(b, m, "mark"), "1");
	block_free(b);

	b = csv_view(path, "overview", TIME_UNIT_MS, 0, 0, &n);
	assert_int_equal(n, 1); /* no GPU work: no device half */
	r = csv_row_where(b, "event_type", "Operator");
	assert_string_equal(cell(b, r, "section"), "host");
	assert_string_equal(cell(b, r, "calls"), "2");
	assert_string_equal(cell(b, r, "cpu_time_ms"), "0.004000");
	assert_string_equal(cell(b, r, "ratio_pct"), "40.00");
	assert_string_equal(cell(b, r, "depth"), "1");
	assert_string_equal(cell(b, r, "parent"), cell(b, csv_row_where(b, "event_type", "ProfileStep"), "row"));
	block_free(b);

	b = csv_view(path, "device", TIME_UNIT_MS, 0, 0, NULL);
	assert_string_equal(cell(b, csv_row_where(b, "device", "CPU(Process)"), "utilization_pct"),
			    "150.00");
	block_free(b);

	/* no view named: the Trace Summary first */
	char *text = summary_to_string(path, SUMMARY_CSV, TIME_UNIT_MS, 0);
	b = csv_table_at(text, 0);
	assert_string_equal(b->f[0][1], "file");
	assert_string_equal(cell(b, 1, "file"), path);
	assert_string_equal(cell(b, 1, "dropped"), "4");
	assert_int_equal(b->nrows, 2);
	block_free(b);
	free(text);

	/* --thread-sep: a thread's part is pid, tid and its name */
	b = csv_view(path, "userdefined", TIME_UNIT_NS, 1, 0, NULL);
	assert_string_equal(b->f[0][1], "pid");
	assert_string_equal(b->f[0][2], "tid");
	assert_string_equal(b->f[0][3], "thread");
	r = csv_row_where(b, "thread", "worker");
	assert_string_equal(cell(b, r, "name"), "A");
	assert_string_equal(cell(b, r, "tid"), "11");
	assert_string_equal(cell(b, r, "pid"), "10");
	assert_string_equal(cell(b, r, "cpu_total_ns"), "1000");
	assert_string_equal(cell(b, csv_row_where(b, "thread", "main"), "tid"), "10");
	block_free(b);
}

/* ---- JSON, through yajl ----------------------------------------------------- */

static yajl_val get(yajl_val v, const char **path)
{
	yajl_val r = yajl_tree_get(v, path, yajl_t_any);
	if (!r)
		fail_msg("no JSON value at '%s'", path[0]);
	return r;
}

static yajl_val key(yajl_val obj, const char *k)
{
	const char *path[] = {k, NULL};
	return get(obj, path);
}

static yajl_val at(yajl_val arr, size_t i)
{
	assert_true(YAJL_IS_ARRAY(arr));
	assert_true(i < YAJL_GET_ARRAY(arr)->len);
	return YAJL_GET_ARRAY(arr)->values[i];
}

static const char *str(yajl_val v)
{
	assert_true(YAJL_IS_STRING(v));
	const char *s = YAJL_GET_STRING(v);
	assert_non_null(s);
	return s;
}

static size_t len_of(yajl_val arr)
{
	assert_true(YAJL_IS_ARRAY(arr));
	return YAJL_GET_ARRAY(arr)->len;
}

static void assert_num(yajl_val v, double want)
{
	assert_true(YAJL_IS_NUMBER(v));
	if (fabs(YAJL_GET_DOUBLE(v) - want) > 1e-9 * (fabs(want) + 1))
		fail_msg("%.12g != %.12g", YAJL_GET_DOUBLE(v), want);
}

static yajl_val parse(const char *text)
{
	char errbuf[512];
	yajl_val doc = yajl_tree_parse(text, errbuf, sizeof(errbuf));
	if (!doc)
		fail_msg("JSON does not parse: %s", errbuf);
	return doc;
}

static void test_json(void **state)
{
	(void)state;
	const char *path = write_trace();
	char *text = summary_to_string(path, SUMMARY_JSON, TIME_UNIT_US, 0);
	yajl_val doc = parse(text);
	assert_string_equal(str(key(doc, "time_unit")), "us");
	yajl_val window = key(doc, "window");
	assert_string_equal(str(key(window, "source")), "ProfileStep");
	assert_num(key(window, "total_ns"), 10000);
	assert_num(key(window, "total"), 10);
	yajl_val events = key(doc, "events");
	assert_num(key(events, "total"), 8);
	assert_num(key(events, "marks"), 1);
	assert_num(key(events, "dropped"), 4);
	yajl_val trace = at(key(doc, "traces"), 0);
	assert_string_equal(str(key(trace, "path")), path);
	assert_true(YAJL_IS_NULL(key(trace, "damage")));

	yajl_val tables = key(doc, "tables");
	yajl_val ud = key(tables, "userdefined");
	assert_string_equal(str(key(ud, "title")), "UserDefined Summary");
	assert_int_equal(len_of(key(ud, "columns")), 12);
	assert_string_equal(str(key(at(key(ud, "columns"), 2), "key")), "cpu_total");
	yajl_val sec = at(key(ud, "sections"), 0);
	assert_string_equal(str(key(sec, "title")), "Thread: All threads merged");
	yajl_val rows = key(sec, "rows");
	assert_int_equal(len_of(rows), 1); /* A; B and M are its descendants */
	yajl_val A = at(rows, 0);
	assert_string_equal(str(key(A, "name")), "A");
	assert_num(key(A, "calls"), 2);
	assert_num(key(A, "cpu_total"), 5.0); /* us */
	assert_num(key(A, "cpu_total_ns"), 5000);
	assert_num(key(A, "cpu_avg"), 2.5);
	assert_num(key(A, "cpu_max_ns"), 4000);
	assert_num(key(A, "cpu_min_ns"), 1000);
	assert_num(key(A, "cpu_ratio"), 50.0);
	yajl_val B = at(key(A, "children"), 0);
	assert_string_equal(str(key(B, "name")), "B, with \"quotes\"");
	assert_num(key(B, "depth"), 1);
	assert_num(key(B, "calls"), 2);
	yajl_val M = at(key(B, "children"), 0);
	assert_string_equal(str(key(M, "name")), "M");
	assert_true(YAJL_IS_TRUE(key(M, "mark")));
	assert_num(key(M, "calls"), 1);
	assert_true(YAJL_IS_NULL(key(M, "cpu_total")));

	yajl_val ov = at(key(at(key(key(tables, "overview"), "sections"), 0), "rows"), 0);
	assert_string_equal(str(key(ov, "event_type")), "ProfileStep");
	assert_num(key(ov, "ratio"), 100.0);
	yajl_val kids = key(ov, "children");
	int found = 0;
	for (size_t i = 0; i < len_of(kids); i++) {
		yajl_val k = at(kids, i);
		if (strcmp(str(key(k, "event_type")), "Operator") == 0) {
			assert_num(key(k, "calls"), 2);
			assert_num(key(k, "cpu_time_ns"), 4000);
			assert_num(key(k, "ratio"), 40.0);
			found = 1;
		}
	}
	assert_true(found);
	yajl_val dev = at(key(at(key(key(tables, "device"), "sections"), 0), "rows"), 0);
	assert_string_equal(str(key(dev, "device")), "CPU(Process)");
	assert_num(key(dev, "utilization"), 150.0);
	yajl_tree_free(doc);
	free(text);

	text = summary_to_string(path, SUMMARY_JSON, TIME_UNIT_MS, 1);
	doc = parse(text);
	yajl_val secs = key(key(key(doc, "tables"), "userdefined"), "sections");
	assert_int_equal(len_of(secs), 2);
	yajl_val thread = key(at(secs, 1), "thread");
	assert_num(key(thread, "tid"), 11);
	assert_string_equal(str(key(thread, "name")), "worker");
	yajl_tree_free(doc);
	free(text);
}

static void test_json_escapes_any_bytes(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "bytes.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, NULL);
	uint32_t d = tb_desc(&b, "tab\there \"q\" back\\slash \x01 bad\xff utf8 \xc3\xa9",
			     TRACE_EV_USER_DEFINED);
	tb_range(&b, 0, d, 10, 10);
	const char *path = tb_close(&b, 100);
	char *text = summary_to_string(path, SUMMARY_JSON, TIME_UNIT_MS, 0);
	yajl_val doc = parse(text);
	const char *p[] = {"tables", "userdefined", "sections", NULL};
	yajl_val row = at(key(at(get(doc, p), 0), "rows"), 0);
	const char *name = str(key(row, "name"));
	assert_non_null(strstr(name, "tab\there \"q\" back\\slash \x01 bad"));
	assert_non_null(strstr(name, "\xc3\xa9"));
	yajl_tree_free(doc);
	free(text);
}

/* ---- the GPU views, on the golden trace (numbers: test_gpu_views.c) ---------------- */

static void test_gpu_csv(void **state)
{
	(void)state;
	const char *path = tb_gpu_trace();
	struct csv_block *b = csv_view(path, "kernel", TIME_UNIT_NS, 0, 0, NULL);
	static const char *const header[] = {
		"row",	      "name",	       "calls",	       "gpu_total_ns",
		"gpu_avg_ns", "gpu_max_ns",    "gpu_min_ns",   "gpu_ratio_pct",
		"blocks_per_sm", "est_achieved_occupancy_pct", "depth", "parent"};
	assert_int_equal(b->nf[0], 12);
	for (int i = 0; i < 12; i++)
		assert_string_equal(b->f[0][i], header[i]);
	int r = csv_row(b, "gemm");
	assert_string_equal(cell(b, r, "calls"), "2");
	assert_string_equal(cell(b, r, "gpu_total_ns"), "3000");
	assert_string_equal(cell(b, r, "gpu_avg_ns"), "1500");
	assert_string_equal(cell(b, r, "gpu_ratio_pct"), "32.09"); /* 3000 / 9350 */
	assert_string_equal(cell(b, r, "blocks_per_sm"), "6.67");  /* (2 x 2000 + 16 x 1000) / 3000 */
	assert_string_equal(cell(b, r, "est_achieved_occupancy_pct"), "33.33");
	r = csv_row(b, "ncclKernel_AllReduce");
	assert_string_equal(cell(b, r, "blocks_per_sm"), ""); /* no launch configuration */
	assert_string_equal(cell(b, r, "est_achieved_occupancy_pct"), "");
	block_free(b);

	b = csv_view(path, "model", TIME_UNIT_NS, 0, 0, NULL);
	r = csv_row(b, "Others");
	assert_string_equal(cell(b, r, "depth"), "1");
	assert_string_equal(cell(b, r, "calls"), ""); /* no calls */
	assert_string_equal(cell(b, r, "cpu_total_ns"), "4000");
	assert_string_equal(cell(b, r, "cpu_avg_ns"), "");
	/* T1's copy is in T0's Dataloader (test_gpu_views.c): fill, memset, DtoD */
	assert_string_equal(cell(b, r, "gpu_total_ns"), "400");
	assert_string_equal(cell(b, r, "gpu_ratio_pct"), "4.28");
	block_free(b);

	/* a device's facts: columns of its own, the same on each of its rows */
	b = csv_view(path, "memory", TIME_UNIT_NS, 0, 0, NULL);
	r = csv_row(b, "linear");
	assert_string_equal(cell(b, r, "section"), "GPU0");
	assert_string_equal(cell(b, r, "section_peak_in_use_bytes"), "105000");
	assert_string_equal(cell(b, r, "section_allocated_bytes"), "3800");
	assert_string_equal(cell(b, r, "section_freed_bytes"), "101500");
	assert_string_equal(cell(b, r, "calls"), "1");
	assert_string_equal(cell(b, r, "allocated_bytes"), "2000");
	assert_string_equal(cell(b, r, "freed_bytes"), "1500");
	assert_string_equal(cell(b, r, "increase_bytes"), "500");
	assert_string_equal(cell(b, r, "allocations"), "1");
	assert_string_equal(cell(b, r, "self_increase_bytes"), "-500"); /* its own free */
	for (int k = 1; k < b->nrows; k++)
		if (strcmp(cell(b, k, "section"), "GPU0") == 0)
			assert_string_equal(cell(b, k, "section_peak_in_use_bytes"), "105000");
	block_free(b);

	b = csv_view(path, "nvprof", TIME_UNIT_NS, 0, 0, NULL);
	r = csv_row(b, "cudaLaunchKernel");
	assert_string_equal(cell(b, r, "section"), "API calls");
	assert_string_equal(cell(b, r, "time_pct"), "43.80"); /* 600 / 1370 */
	assert_string_equal(cell(b, r, "time_ns"), "600");
	assert_string_equal(cell(b, r, "calls"), "6");
	assert_string_equal(cell(b, csv_row(b, "gemm"), "section"), "GPU activities");
	block_free(b);

	b = csv_view(path, "memory-manipulation", TIME_UNIT_NS, 0, 0, NULL);
	r = csv_row(b, "(no API call) DtoD (Device -> Device, sync)");
	assert_string_equal(cell(b, r, "cpu_total_ns"), "");
	assert_string_equal(cell(b, r, "gpu_total_ns"), "100");
	block_free(b);

	/* parts of other columns are tables of their own: the Overview's device half */
	int n;
	b = csv_view(path, "overview", TIME_UNIT_NS, 0, 1, &n);
	assert_int_equal(n, 2);
	assert_false(csv_has_col(b, "cpu_time_ns"));
	r = csv_row_where(b, "event_type", "Kernel");
	assert_string_equal(cell(b, r, "section"), "device");
	assert_true(strlen(cell(b, r, "gpu_time_ns")) > 0);
	block_free(b);
}

static void test_gpu_json(void **state)
{
	(void)state;
	char *text = summary_with(tb_gpu_trace(), SUMMARY_JSON, TIME_UNIT_US, 0, 1);
	yajl_val doc = parse(text);
	yajl_val tables = key(doc, "tables");

	yajl_val step = at(key(at(key(key(tables, "model"), "sections"), 0), "rows"), 0);
	assert_string_equal(str(key(step, "name")), "ProfileStep");
	assert_num(key(step, "gpu_total_ns"), 9250); /* T1's copy too: test_gpu_views.c */
	assert_num(key(step, "gpu_total"), 9.25);
	assert_num(key(step, "gpu_min_ns"), 0);
	yajl_val phases = key(step, "children");
	assert_int_equal(len_of(phases), 5);
	yajl_val others = at(phases, 4);
	assert_string_equal(str(key(others, "name")), "Others");
	assert_true(YAJL_IS_NULL(key(others, "calls")));
	assert_num(key(others, "cpu_total_ns"), 4000);
	assert_num(key(others, "gpu_ratio"), 100.0 * 400 / 9350);

	/* --op-detail: linear > matmul > gemm, GPU work with null CPU */
	yajl_val ops = key(at(key(key(tables, "operator"), "sections"), 0), "rows");
	yajl_val linear = at(ops, 0);
	assert_string_equal(str(key(linear, "name")), "linear");
	yajl_val mm = at(key(linear, "children"), 0);
	assert_string_equal(str(key(mm, "name")), "matmul");
	assert_num(key(mm, "cpu_ratio"), 100.0 * 1000 / 2600);
	yajl_val gemm = at(key(mm, "children"), 0);
	assert_string_equal(str(key(gemm, "name")), "gemm");
	assert_num(key(gemm, "depth"), 2);
	assert_true(YAJL_IS_NULL(key(gemm, "cpu_total")));
	assert_num(key(gemm, "gpu_total_ns"), 1000);
	assert_num(key(gemm, "gpu_ratio"), 100.0);

	yajl_val k = at(key(at(key(key(tables, "kernel"), "sections"), 0), "rows"), 0);
	assert_string_equal(str(key(k, "name")), "gemm");
	assert_num(key(k, "blocks_per_sm"), 20000.0 / 3000);
	assert_num(key(k, "est_achieved_occupancy"), 100000.0 / 3000);

	yajl_val gpu0 = at(key(key(tables, "memory"), "sections"), 0);
	assert_string_equal(str(key(gpu0, "label")), "GPU0");
	assert_num(key(key(gpu0, "facts"), "peak_in_use_bytes"), 105000);
	yajl_val lin = at(key(gpu0, "rows"), 1);
	assert_string_equal(str(key(lin, "name")), "linear");
	assert_num(key(lin, "self_increase"), -500);
	assert_num(key(lin, "allocated"), 2000);

	yajl_val dist = at(key(at(key(key(tables, "distributed"), "sections"), 0), "rows"), 0);
	assert_num(key(at(key(dist, "children"), 2), "total_time_ns"), 1200); /* Overlap */

	yajl_val dev = key(at(key(key(tables, "device"), "sections"), 0), "rows");
	assert_string_equal(str(key(at(dev, 2), "device")), "GPU0");
	assert_num(key(at(dev, 2), "utilization"), 100.0 * 6600 / 18000);

	yajl_val nv = key(key(tables, "nvprof"), "sections");
	assert_string_equal(str(key(at(nv, 0), "label")), "GPU activities");
	yajl_val first = at(key(at(nv, 0), "rows"), 0);
	assert_string_equal(str(key(first, "name")), "gemm");
	assert_num(key(first, "time_pct"), 100.0 * 3000 / 9350);
	assert_num(key(first, "avg_ns"), 1500);
	yajl_tree_free(doc);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_escapes_any_bytes),
		cmocka_unit_test(test_gpu_csv),
		cmocka_unit_test(test_gpu_json),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
