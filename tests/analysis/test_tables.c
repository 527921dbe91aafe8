/*
 * test_tables.c - tables a person reads (issue 17, part 1): every default
 * text table fits 100 columns (or the width asked for) on rich synthetic
 * traces, --wide keeps the full names, --top N keeps N rows and counts the
 * others, the Operator view's Self time on a nested trace worked out by
 * hand, GPU columns hidden in text (not in CSV or JSON) when there is no
 * GPU work, and the end-of-run report's Time(%) columns adding up to 100.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bench/trace/trace_gen.h"
#include "lib/analysis/runend.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/summary.h"
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MS 1000000ull

static void prepare(struct analysis *a, const char *path)
{
	char err[512];
	analysis_init(a);
	if (analysis_load(a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(a);
}

static struct summary_opts opts(unsigned width)
{
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS},
				 .fit = width != 0,
				 .width = width,
				 .top = -1};
	return o;
}

static void all_views(struct summary_opts *o)
{
	for (unsigned i = 0; i < view_registry_count; i++)
		summary_add_view(o, &view_registry[i]);
}

/* The summary of a as o asks, in a string to free. */
static char *render(const struct analysis *a, const struct summary_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(summary_write(a, o, f), 0);
	fclose(f);
	/* a copy: gcc -O2 took the texts found in buf for pointers to the
	 * local that open_memstream wrote (-Wdangling-pointer) */
	char *text = strdup(buf);
	free(buf);
	assert_non_null(text);
	return text;
}

/* The widest line of s in code points, and where it is. */
static unsigned widest(const char *s, const char **at)
{
	unsigned max = 0, w = 0;
	const char *line = s;
	*at = s;
	for (const char *p = s;; p++) {
		if (*p == '\n' || !*p) {
			if (w > max) {
				max = w;
				*at = line;
			}
			if (!*p)
				break;
			w = 0;
			line = p + 1;
			continue;
		}
		if (((unsigned char)*p & 0xc0) != 0x80)
			w++;
	}
	return max;
}

static void assert_fits(const char *text, unsigned width, const char *what)
{
	const char *at;
	unsigned w = widest(text, &at);
	if (w > width)
		fail_msg("%s: a line of %u columns (> %u):\n%.*s", what, w, width,
			 (int)(strchr(at, '\n') ? strchr(at, '\n') - at : (long)strlen(at)), at);
}

static unsigned count(const char *s, const char *what)
{
	unsigned n = 0;
	for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* JSON strings "op<digit>...": the ten operators' names. */
static unsigned count_op(const char *s)
{
	unsigned n = 0;
	for (const char *p = s; (p = strstr(p, "\"op")) != NULL; p += 3)
		n += p[3] >= '0' && p[3] <= '9';
	return n;
}

/* Lines of text that start with prefix and a digit ("op7 ..."). */
static unsigned lines_starting(const char *s, const char *prefix)
{
	unsigned n = 0;
	size_t len = strlen(prefix);
	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += strncmp(p, prefix, len) == 0 && p[len] >= '0' && p[len] <= '9';
	return n;
}

static const char *gen_trace(const char *name, unsigned flags)
{
	const char *path = tb_path(name);
	struct trace_gen_stats st;
	if (trace_gen_write_flags(path, 20000, 4, flags, &st) != 0)
		fail_msg("cannot write %s", path);
	return path;
}

/* ---- widths ------------------------------------------------------------------------ */

static void fits_all_ways(const struct analysis *a, unsigned width, const char *what)
{
	char label[128];
	for (unsigned mode = 0; mode < 4; mode++) {
		struct summary_opts o = opts(width);
		if (mode >= 1)
			all_views(&o);
		o.view.op_detail = mode == 2;
		o.view.thread_sep = mode == 3;
		char *text = render(a, &o);
		snprintf(label, sizeof(label), "%s, %u columns, mode %u", what, width, mode);
		assert_fits(text, width, label);
		assert_true(count(text, "Operator Summary") == 1);
		free(text);
	}
}

static void test_fit_rich(void **state)
{
	(void)state;
	struct analysis a;
	prepare(&a, gen_trace("rich-gpu.gpdl", TRACE_GEN_GPU));
	fits_all_ways(&a, 100, "GPU trace");
	fits_all_ways(&a, 80, "GPU trace");
	/* the widths are used, not merely not exceeded: the Operator view
	 * fills 100 columns with its names cut to fit */
	struct summary_opts o = opts(100);
	char *text = render(&a, &o);
	const char *at;
	assert_int_equal(widest(text, &at), 100);
	assert_true(count(text, "Total(ms)") >= 1);
	assert_true(count(text, "Self(ms)") == 1);
	assert_true(count(text, "\xe2\x80\xa6") >= 1); /* a name cut in the middle */
	free(text);
	/* --wide: Paddle's groups, wider than 100 */
	o = opts(0);
	text = render(&a, &o);
	assert_true(widest(text, &at) > 100);
	assert_true(count(text, "CPU Total / Avg / Max / Min / Ratio(%)") >= 1);
	free(text);
	analysis_free(&a);

	prepare(&a, gen_trace("rich-cpu.gpdl", 0));
	fits_all_ways(&a, 100, "CPU trace");
	fits_all_ways(&a, 80, "CPU trace");
	analysis_free(&a);
}

/* A rank of a job: steps, a collective, and operators with long names. */
static const char *rank_file(const char *name, int32_t rank)
{
	struct tb b;
	uint64_t start = 1000;
	tb_open_rank(&b, name, "h", 100 + (uint32_t)rank, start, rank, 2, 0);
	tb_thread(&b, 0, 100 + (uint32_t)rank, "main");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t ar = tb_desc(&b, "gloo:all_reduce", TRACE_EV_COMMUNICATION);
	uint32_t op[8];
	for (unsigned i = 0; i < 8; i++) {
		char n[160];
		snprintf(n, sizeof(n), "aten::convolution_backward_with_a_name_too_long_for_any_column_%u",
			 i);
		op[i] = tb_desc(&b, n, TRACE_EV_OPERATOR);
	}
	for (unsigned k = 0; k < 4; k++) {
		uint64_t s = start + k * 10 * MS;
		tb_range(&b, 0, step, s, 10 * MS);
		for (unsigned i = 0; i < 8; i++)
			tb_range(&b, 0, op[i], s + i * 500000, 400000);
		tb_comm(&b, 0, ar, s + 5 * MS, 2 * MS, "0", k, 4096, 2);
	}
	tb_process(&b, 100 + (uint32_t)rank, 1, start, start + 41 * MS, 0, rank, 2);
	return tb_close(&b, start + 45 * MS);
}

static void test_fit_job(void **state)
{
	(void)state;
	char p0[512], p1[512];
	snprintf(p0, sizeof(p0), "%s", rank_file("job-r0.gpdl", 0));
	snprintf(p1, sizeof(p1), "%s", rank_file("job-r1.gpdl", 1));
	const char *paths[] = {p0, p1};
	for (unsigned width = 80; width <= 100; width += 20) {
		struct job j;
		char err[512];
		if (job_open(&j, 2, (char **)paths, 0, err, sizeof(err)) != 0)
			fail_msg("%s", err);
		struct summary_opts o = opts(width);
		assert_true(summary_is_job(&j, &o));
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		assert_int_equal(summary_write_job(&j, &o, f, "summarised"), 0);
		fclose(f);
		assert_true(count(buf, "Distributed Summary") == 1);
		assert_true(count(buf, "Operator Summary") == 1);
		assert_fits(buf, width, "job");
		free(buf);
		job_free(&j);
	}
}

/* ---- names: cut in the middle, whole in --wide, CSV and JSON -------------------- */

#define LONG_NAME                                                                          \
	"aten::convolution_backward_overrideable_with_a_name_much_longer_than_a_column_"   \
	"of_any_table_backward"

static const char *long_name_trace(void)
{
	struct tb b;
	tb_open(&b, "long.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	tb_range(&b, 0, tb_desc(&b, LONG_NAME, TRACE_EV_OPERATOR), 0, 5 * MS);
	tb_range(&b, 0, tb_desc(&b, "aten::add", TRACE_EV_OPERATOR), 6 * MS, 1 * MS);
	return tb_close(&b, 10 * MS);
}

static void test_names(void **state)
{
	(void)state;
	struct analysis a;
	prepare(&a, long_name_trace());
	struct summary_opts o = opts(100);
	summary_add_view(&o, view_find("operator"));
	char *text = render(&a, &o);
	assert_fits(text, 100, "long name");
	assert_int_equal(count(text, LONG_NAME), 0);
	/* both ends of the name, the ellipsis between: "aten::conv…backward" */
	const char *cut = strstr(text, "\naten::conv");
	assert_non_null(cut);
	const char *dots = strstr(cut, "\xe2\x80\xa6"), *end = strchr(cut + 1, ' ');
	assert_true(dots && dots < end);
	assert_true(strncmp(end - strlen("table_backward"), "table_backward", 14) == 0);
	free(text);
	o.fit = 0; /* --wide */
	text = render(&a, &o);
	assert_int_equal(count(text, LONG_NAME), 1);
	free(text);
	for (unsigned fmt = SUMMARY_CSV; fmt <= SUMMARY_JSON; fmt++) {
		o = opts(0);
		o.format = (enum summary_format)fmt;
		summary_add_view(&o, view_find("operator"));
		text = render(&a, &o);
		assert_int_equal(count(text, LONG_NAME), 1);
		free(text);
	}
	analysis_free(&a);
}

/* ---- --top ------------------------------------------------------------------------- */

/* Ten operators op0..op9, op<i> (i + 1) ms long, each with an inner range. */
static const char *ten_ops_trace(void)
{
	struct tb b;
	tb_open(&b, "ten.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	uint64_t t = 0;
	for (unsigned i = 0; i < 10; i++) {
		char n[32];
		snprintf(n, sizeof(n), "op%u", i);
		tb_range(&b, 0, tb_desc(&b, n, TRACE_EV_OPERATOR), t, (i + 1) * MS);
		snprintf(n, sizeof(n), "op%u compute", i);
		tb_range(&b, 0, tb_desc(&b, n, TRACE_EV_OPERATOR_INNER), t + MS / 4, MS / 2);
		t += (i + 2) * MS;
	}
	return tb_close(&b, t);
}

static void test_top(void **state)
{
	(void)state;
	struct analysis a;
	prepare(&a, ten_ops_trace());
	for (int detail = 0; detail < 2; detail++) {
		struct summary_opts o = opts(100);
		o.top = 3;
		o.view.op_detail = detail;
		summary_add_view(&o, view_find("operator"));
		char *text = render(&a, &o);
		/* the three heaviest, op9 op8 op7, then the line that counts the rest */
		assert_int_equal(lines_starting(text, "op"), 3);
		assert_true(count(text, "\nop9 ") == 1 && count(text, "\nop8 ") == 1 &&
			    count(text, "\nop7 ") == 1 && count(text, "op6") == 0);
		/* a parent's children follow it and are no rows of their own */
		assert_int_equal(lines_starting(text, "  op"), detail ? 3 : 0);
		assert_int_equal(count(text, "... 7 more rows, --top 0 for all\n"), 1);
		free(text);

		o.top = 0; /* all of them */
		text = render(&a, &o);
		assert_int_equal(lines_starting(text, "op"), 10);
		assert_int_equal(count(text, "more row"), 0);
		free(text);

		o.top = -1; /* text: 30, more than there are */
		text = render(&a, &o);
		assert_int_equal(lines_starting(text, "op"), 10);
		free(text);
	}
	/* CSV and JSON: every row unless --top says otherwise */
	struct summary_opts o = opts(0);
	o.format = SUMMARY_JSON;
	summary_add_view(&o, view_find("operator"));
	char *text = render(&a, &o);
	assert_int_equal(count_op(text), 10);
	free(text);
	o.top = 2;
	text = render(&a, &o);
	assert_int_equal(count_op(text), 2);
	free(text);

	/* the model: the first n top-level rows, their children with them */
	struct view_opts vo = o.view;
	vo.op_detail = 1;
	const struct view *v = view_find("operator");
	struct table *t = v->build(v, &a, &vo);
	assert_int_equal(t->parts[0].nrows, 20);
	assert_int_equal(table_keep_top(t, 4), 6);
	assert_int_equal(t->parts[0].nrows, 8);
	assert_int_equal(t->parts[0].omitted, 6);
	table_free(t);
	analysis_free(&a);
}

/* ---- Self ------------------------------------------------------------------------------ */

/* Thread 0: P [0, 10) ms with C [2, 6) inside it; Big [20, 28). Thread 1:
 * C [3, 4), while P runs on thread 0: not P's child. */
static const char *nested_trace(void)
{
	struct tb b;
	tb_open(&b, "self.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	tb_thread(&b, 1, 11, "other");
	uint32_t p = tb_desc(&b, "P", TRACE_EV_OPERATOR);
	uint32_t c = tb_desc(&b, "C", TRACE_EV_OPERATOR);
	uint32_t big = tb_desc(&b, "Big", TRACE_EV_OPERATOR);
	tb_range(&b, 0, p, 0, 10 * MS);
	tb_range(&b, 0, c, 2 * MS, 4 * MS);
	tb_range(&b, 1, c, 3 * MS, 1 * MS);
	tb_range(&b, 0, big, 20 * MS, 8 * MS);
	return tb_close(&b, 30 * MS);
}

static int col_of(const struct table *t, const char *key)
{
	for (unsigned i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].key, key) == 0)
			return (int)i;
	fail_msg("no column %s", key);
	return -1;
}

static void assert_self(const struct table *t, size_t r, const char *name, double total_ms,
			double self_ms, unsigned depth)
{
	const struct trow *row = &t->parts[0].rows[r];
	if (strcmp(row->cells[0].v.text, name) != 0 || row->depth != depth)
		fail_msg("row %zu: %s at depth %u, not %s", r, row->cells[0].v.text, row->depth, name);
	int total = col_of(t, "cpu_total"), self = col_of(t, "self_total");
	int avg = col_of(t, "self_avg"), calls = col_of(t, "calls");
	assert_true(fabs(row->cells[total].v.ns - total_ms * MS) < 1);
	assert_true(fabs(row->cells[self].v.ns - self_ms * MS) < 1);
	assert_true(fabs(row->cells[avg].v.ns - self_ms * MS / (double)row->cells[calls].v.count) < 1);
}

static void test_self(void **state)
{
	(void)state;
	struct analysis a;
	prepare(&a, nested_trace());
	const struct view *v = view_find("operator");
	struct view_opts vo = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS};
	struct table *t = v->build(v, &a, &vo);
	assert_int_equal(t->parts[0].nrows, 3);
	assert_self(t, 0, "P", 10, 6, 0);   /* 10 less C's 4 on its thread */
	assert_self(t, 1, "Big", 8, 8, 0);
	assert_self(t, 2, "C", 5, 5, 0);    /* 4 + 1 */
	table_free(t);

	enum sort_key k;
	assert_int_equal(sort_key_parse("self", &k), 0);
	assert_int_equal(k, SORT_SELF);
	vo.sort = SORT_SELF;
	t = v->build(v, &a, &vo);
	assert_self(t, 0, "Big", 8, 8, 0);
	assert_self(t, 1, "P", 10, 6, 0);
	assert_self(t, 2, "C", 5, 5, 0);
	table_free(t);

	/* --op-detail: C under P; the rows' self times are the same */
	vo.op_detail = 1;
	vo.sort = SORT_CPU_TOTAL;
	t = v->build(v, &a, &vo);
	assert_self(t, 0, "P", 10, 6, 0);
	assert_self(t, 1, "C", 4, 4, 1);
	assert_self(t, 2, "Big", 8, 8, 0);
	assert_self(t, 3, "C", 1, 1, 0);
	table_free(t);

	/* the text says it: Self(ms) within a width, the Self group in --wide */
	struct summary_opts o = opts(100);
	o.view.sort = SORT_SELF;
	summary_add_view(&o, view_find("operator"));
	char *text = render(&a, &o);
	assert_true(count(text, "Self(ms)") == 1);
	assert_true(strstr(text, "\nBig ") < strstr(text, "\nP "));
	free(text);
	o.fit = 0;
	text = render(&a, &o);
	assert_true(count(text, "Self Total / Avg") == 1);
	free(text);
	analysis_free(&a);
}

/* ---- --group-by shapes ---------------------------------------------------------------- */

/* aten::mm: 3 calls of [[2, 3], [3, 4]], 2 of [[8, 8], [8, 8]], 1 without
 * shapes; aten::add: 1 of [[2, 3], [3, 4]]. */
static const char *shapes_trace(void)
{
	struct tb b;
	tb_open(&b, "shapes.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	uint32_t mm = tb_desc(&b, "aten::mm", TRACE_EV_OPERATOR);
	uint32_t add = tb_desc(&b, "aten::add", TRACE_EV_OPERATOR);
	const char *sa = "[[2, 3], [3, 4]]", *sb = "[[8, 8], [8, 8]]";
	struct trace_event_ext a = {.shapes_str = trace_writer_string(b.w, sa, strlen(sa))};
	struct trace_event_ext bb = {.shapes_str = trace_writer_string(b.w, sb, strlen(sb))};
	uint64_t t = 0;
	for (unsigned i = 0; i < 3; i++, t += 2 * MS)
		tb_ext(&b, 0, mm, t, MS, &a);
	for (unsigned i = 0; i < 2; i++, t += 2 * MS)
		tb_ext(&b, 0, mm, t, 3 * MS, &bb);
	tb_range(&b, 0, mm, t, MS / 2);
	t += MS;
	tb_ext(&b, 0, add, t, MS / 4, &a);
	return tb_close(&b, t + MS);
}

static const struct trow *shape_row(const struct table *t, const char *name, const char *shapes)
{
	int col = col_of(t, "input_shapes");
	for (size_t i = 0; i < t->parts[0].nrows; i++) {
		const struct trow *r = &t->parts[0].rows[i];
		if (strcmp(r->cells[0].v.text, name) != 0)
			continue;
		if (shapes ? r->cells[col].set && strcmp(r->cells[col].v.text, shapes) == 0
			   : !r->cells[col].set)
			return r;
	}
	fail_msg("no row %s %s", name, shapes ? shapes : "(no shapes)");
	return NULL;
}

static void test_group_shapes(void **state)
{
	(void)state;
	const char *path = shapes_trace();
	struct analysis a;
	char err[512];
	analysis_init(&a);
	a.store.by_shapes = 1;
	if (analysis_load(&a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(&a);
	const struct view *v = view_find("operator");
	struct view_opts vo = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS, .group_shapes = 1};
	struct table *t = v->build(v, &a, &vo);
	int calls = col_of(t, "calls"), total = col_of(t, "cpu_total");
	assert_int_equal(t->parts[0].nrows, 4);
	const struct trow *r = shape_row(t, "aten::mm", "[[2, 3], [3, 4]]");
	assert_int_equal(r->cells[calls].v.count, 3);
	assert_true(fabs(r->cells[total].v.ns - 3.0 * MS) < 1);
	r = shape_row(t, "aten::mm", "[[8, 8], [8, 8]]");
	assert_int_equal(r->cells[calls].v.count, 2);
	assert_true(fabs(r->cells[total].v.ns - 6.0 * MS) < 1);
	assert_int_equal(shape_row(t, "aten::mm", NULL)->cells[calls].v.count, 1);
	assert_int_equal(shape_row(t, "aten::add", "[[2, 3], [3, 4]]")->cells[calls].v.count, 1);
	table_free(t);
	/* by name, as key_averages() groups by default: one row of 6 calls */
	vo.group_shapes = 0;
	t = v->build(v, &a, &vo);
	assert_int_equal(t->parts[0].nrows, 2);
	assert_string_equal(t->parts[0].rows[0].cells[0].v.text, "aten::mm");
	assert_int_equal(t->parts[0].rows[0].cells[calls].v.count, 6);
	assert_int_equal(t->ncols, (unsigned)col_of(t, "self_avg") + 1); /* no shapes column */
	table_free(t);
	/* the text has the column, within 100 */
	struct summary_opts o = opts(100);
	o.view.group_shapes = 1;
	summary_add_view(&o, v);
	char *text = render(&a, &o);
	assert_int_equal(count(text, "Input Shapes"), 2); /* the header, a note */
	assert_int_equal(count(text, "[[8, 8], [8, 8]]"), 1);
	assert_fits(text, 100, "group by shapes");
	free(text);
	analysis_free(&a);
}

/* ---- no GPU work ----------------------------------------------------------------------- */

static void test_no_gpu(void **state)
{
	(void)state;
	struct analysis a;
	prepare(&a, gen_trace("nogpu.gpdl", 0));
	struct summary_opts o = opts(100);
	char *text = render(&a, &o);
	assert_int_equal(count(text, "no GPU work recorded: GPU columns hidden"), 1);
	assert_int_equal(count(text, "GPU("), 0);
	assert_int_equal(count(text, "GPU Avg"), 0);
	/* the views of GPU work alone, empty here, are left out */
	assert_int_equal(count(text, "Kernel Summary"), 0);
	assert_int_equal(count(text, "Memory Manipulation Summary"), 0);
	assert_int_equal(count(text, "nvprof Summary"), 0);
	assert_int_equal(count(text, "Operator Summary"), 1);
	free(text);
	/* asked for by name, a view prints */
	summary_add_view(&o, view_find("kernel"));
	text = render(&a, &o);
	assert_int_equal(count(text, "Kernel Summary"), 1);
	free(text);
	/* --wide, CSV and JSON keep them */
	o = opts(0);
	text = render(&a, &o);
	assert_int_equal(count(text, "GPU columns hidden"), 0);
	assert_true(count(text, "GPU Total / Avg / Max / Min / Ratio(%)") >= 3);
	free(text);
	o.format = SUMMARY_CSV;
	summary_add_view(&o, view_find("operator"));
	text = render(&a, &o);
	assert_true(strcasestr(text, "gpu_total") || strcasestr(text, "GPU Total"));
	assert_int_equal(count(text, "GPU columns hidden"), 0);
	free(text);
	o.format = SUMMARY_JSON;
	text = render(&a, &o);
	assert_true(count(text, "\"gpu_total\"") >= 1);
	free(text);
	analysis_free(&a);

	/* with GPU work: nothing hidden */
	prepare(&a, gen_trace("gpu.gpdl", TRACE_GEN_GPU));
	o = opts(100);
	text = render(&a, &o);
	assert_int_equal(count(text, "GPU columns hidden"), 0);
	assert_true(count(text, "GPU(ms)") >= 2);
	assert_int_equal(count(text, "Kernel Summary"), 1);
	free(text);
	analysis_free(&a);
}

/* ---- the end-of-run report ------------------------------------------------------------- */

/* The sum of each Time(%) column of the report: rows under a "Time(%)"
 * header, and the "... and N more names: P%" line after them. */
static unsigned report_sums(const char *text, double *sums, unsigned max)
{
	unsigned n = 0;
	const char *p = text;
	while ((p = strstr(p, "\nTime(%)")) != NULL && n < max) {
		double sum = 0;
		unsigned rows = 0;
		for (p = strchr(p + 1, '\n') + 1; *p && *p != '='; p = strchr(p, '\n') + 1) {
			sum += strtod(p, NULL);
			rows++;
		}
		const char *more = strstr(p, "more ");
		const char *eol = strchr(p, '\n');
		if (more && more < eol && strstr(more, "names: ") < eol)
			sum += strtod(strstr(more, "names: ") + 7, NULL);
		assert_true(rows > 0);
		sums[n++] = sum;
	}
	return n;
}

static void test_report_percent(void **state)
{
	(void)state;
	unsigned h[4];
	runend_percent((const uint64_t[]){1, 1, 1}, 3, 3, h);
	assert_int_equal(h[0] + h[1] + h[2], 10000);
	assert_int_equal(h[0], 3334);
	assert_int_equal(h[1], 3333);
	/* 2/3 and 1/3: 6666.67 rounds up, 3333.33 down */
	runend_percent((const uint64_t[]){2, 1}, 2, 3, h);
	assert_int_equal(h[0], 6667);
	assert_int_equal(h[1], 3333);
	runend_percent((const uint64_t[]){0, 0}, 2, 0, h);
	assert_int_equal(h[0] + h[1], 0);

	for (unsigned gpu = 0; gpu < 2; gpu++) {
		const char *path = gen_trace(gpu ? "report-gpu.gpdl" : "report-cpu.gpdl",
					     gpu ? TRACE_GEN_GPU : 0);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		assert_int_equal(runend_summary(path, f, 5), 0);
		fclose(f);
		double sums[8];
		unsigned n = report_sums(buf, sums, 8);
		assert_int_equal(n, gpu ? 3 : 1);
		for (unsigned i = 0; i < n; i++)
			if (fabs(sums[i] - 100.0) > 0.05)
				fail_msg("table %u: Time(%%) adds up to %.2f:\n%s", i, sums[i], buf);
		/* past the top rows, the others' share */
		assert_true(count(buf, "more range names: ") == 1);
		assert_int_equal(count(buf, "==5== Time(%) is of all "), n);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_rich), cmocka_unit_test(test_fit_job),
		cmocka_unit_test(test_names),    cmocka_unit_test(test_top),
		cmocka_unit_test(test_self),     cmocka_unit_test(test_group_shapes),
		cmocka_unit_test(test_no_gpu),
		cmocka_unit_test(test_report_percent),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tb_cleanup();
	return rc;
}
