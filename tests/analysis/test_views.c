/*
 * test_views.c - the numbers of every view on small traces whose every value
 * is worked out by hand here: the union of overlapping ranges across
 * threads, ratios against the window (never over 100%), the ProfileStep
 * window, nesting, thread merge and --thread-sep, sort orders, CPU
 * utilisation, drops and damage, and the launcher's report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/runend.h"
#include "lib/analysis/summary.h"
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct view_opts default_opts = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_NS};

/* The row named name at depth in part p, or NULL. */
static const struct trow *row(const struct table *t, size_t p, const char *name, unsigned depth)
{
	assert_true(p < t->nparts);
	const struct tpart *part = &t->parts[p];
	for (size_t i = 0; i < part->nrows; i++) {
		const struct trow *r = &part->rows[i];
		if (r->depth == depth && r->cells[0].set && strcmp(r->cells[0].v.text, name) == 0)
			return r;
	}
	return NULL;
}

static const struct trow *must_row(const struct table *t, size_t p, const char *name,
				   unsigned depth)
{
	const struct trow *r = row(t, p, name, depth);
	if (!r)
		fail_msg("no row '%s' at depth %u in '%s'", name, depth, t->title);
	return r;
}

static size_t row_index(const struct table *t, size_t p, const char *name)
{
	for (size_t i = 0; i < t->parts[p].nrows; i++)
		if (strcmp(t->parts[p].rows[i].cells[0].v.text, name) == 0)
			return i;
	fail_msg("no row '%s'", name);
	return 0;
}

static void assert_near(double x, double y)
{
	if (fabs(x - y) > 1e-6 * (fabs(y) + 1))
		fail_msg("%.9g != %.9g", x, y);
}

/* Overview columns: 0 name, 1 calls, 2 time, 3 ratio.
 * UserDefined columns: 0 name, 1 calls, 2 total, 3 avg, 4 max, 5 min, 6 ratio. */

/* Two threads' Operator ranges overlap: they are merged before summing. */
static void test_overview_union_across_threads(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "union.gpdl", "h", 10, 1000);
	tb_thread(&b, 0, 10, "main");
	tb_thread(&b, 1, 11, "other");
	uint32_t op = tb_desc(&b, "matmul", TRACE_EV_OPERATOR);
	uint32_t busy = tb_desc(&b, "busy", TRACE_EV_USER_DEFINED);
	tb_range(&b, 0, op, 2000, 2000); /* [2000,4000) */
	tb_range(&b, 0, op, 6000, 1000); /* [6000,7000) */
	tb_range(&b, 1, op, 3000, 2000); /* [3000,5000) */
	tb_range(&b, 1, op, 6500, 100);  /* inside [6000,7000) */
	for (uint32_t t = 0; t < 2; t++) /* both threads busy the whole run */
		tb_range(&b, t, busy, 1000, 10000);
	const char *path = tb_close(&b, 11000);

	struct analysis a;
	tb_prepare(&a, &path, 1);
	assert_false(a.from_steps);
	assert_int_equal(a.window_ns, 10000);
	assert_int_equal(analysis_types(&a)[TRACE_EV_OPERATOR].calls, 4);
	assert_int_equal(analysis_types(&a)[TRACE_EV_OPERATOR].merged_ns, 3000 + 1000);
	assert_int_equal(analysis_types(&a)[TRACE_EV_USER_DEFINED].merged_ns, 10000);

	struct table *t = tb_view("overview", &a, &default_opts);
	const struct trow *whole = must_row(t, 0, "Whole run", 0);
	assert_near(whole->cells[2].v.ns, 10000);
	assert_near(whole->cells[3].v.pct, 100.0);
	const struct trow *r = must_row(t, 0, "Operator", 1);
	assert_int_equal(r->cells[1].v.count, 4);
	assert_near(r->cells[2].v.ns, 4000);
	assert_near(r->cells[3].v.pct, 40.0);
	r = must_row(t, 0, "UserDefined", 1);
	assert_near(r->cells[3].v.pct, 100.0); /* two threads, 200% summed: 100% merged */
	assert_true(row_index(t, 0, "UserDefined") < row_index(t, 0, "Operator")); /* by time */
	assert_int_equal(t->nparts, 1); /* no device half without device events */
	table_free(t);

	t = tb_view("userdefined", &a, &default_opts);
	r = must_row(t, 0, "busy", 0);
	assert_int_equal(r->cells[1].v.count, 2);
	assert_near(r->cells[2].v.ns, 20000); /* Total adds the calls up */
	assert_near(r->cells[6].v.pct, 100.0); /* Ratio never exceeds 100% */
	table_free(t);
	analysis_free(&a);
}

/* ProfileStep ranges make the window; times are clipped to it. */
static void test_step_window(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "steps.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, NULL);
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t x = tb_desc(&b, "x", TRACE_EV_USER_DEFINED);
	uint32_t y = tb_desc(&b, "y", TRACE_EV_USER_DEFINED);
	uint32_t z = tb_desc(&b, "z", TRACE_EV_USER_DEFINED);
	uint32_t fwd = tb_desc(&b, "Forward", TRACE_EV_FORWARD);
	tb_range(&b, 0, x, 1000, 2000);  /* [1000,3000): 1000 inside */
	tb_range(&b, 0, step, 2000, 2000); /* [2000,4000) */
	tb_range(&b, 0, step, 4000, 2000); /* [4000,6000): touches, merged */
	tb_range(&b, 0, y, 5500, 3000);  /* [5500,8500): 500 + 500 inside */
	tb_range(&b, 0, z, 6500, 1000);  /* [6500,7500): outside, not counted */
	tb_range(&b, 0, step, 8000, 1000); /* [8000,9000) */
	tb_range(&b, 0, fwd, 2500, 1000);
	const char *path = tb_close(&b, 20000);

	struct analysis a;
	tb_prepare(&a, &path, 1);
	assert_true(a.from_steps);
	assert_int_equal(a.steps, 3);
	assert_int_equal(a.window.n, 2);
	assert_int_equal(a.window_ns, 5000);

	struct table *t = tb_view("overview", &a, &default_opts);
	const struct trow *r = must_row(t, 0, "ProfileStep", 0);
	assert_int_equal(t->parts[0].rows[0].depth, 0);
	assert_ptr_equal(r, &t->parts[0].rows[0]); /* the reference row first */
	assert_int_equal(r->cells[1].v.count, 3);
	assert_near(r->cells[2].v.ns, 5000);
	assert_near(r->cells[3].v.pct, 100.0);
	r = must_row(t, 0, "UserDefined", 1);
	assert_int_equal(r->cells[1].v.count, 2); /* x and y; z lies outside */
	assert_near(r->cells[2].v.ns, 2000);
	assert_near(r->cells[3].v.pct, 40.0);
	r = must_row(t, 0, "Forward", 1);
	assert_near(r->cells[3].v.pct, 20.0);
	table_free(t);

	t = tb_view("userdefined", &a, &default_opts);
	r = must_row(t, 0, "x", 0);
	assert_near(r->cells[2].v.ns, 1000);
	r = must_row(t, 0, "y", 0);
	assert_near(r->cells[2].v.ns, 1000);
	assert_near(r->cells[6].v.pct, 20.0);
	assert_null(row(t, 0, "z", 0));
	table_free(t);
	analysis_free(&a);
}

/* A rank's two steps from s (us): step [s, s+10ms): Dataloader 1 ms,
 * Forward 3, Backward 5, Optimization 0.5, and 0.5 ms of nothing. */
static void rank_steps(struct tb *b, uint32_t thread, uint64_t s)
{
	uint32_t step = tb_desc(b, "ProfilerStep#", TRACE_EV_PROFILE_STEP);
	uint32_t dl = tb_desc(b, "Dataloader", TRACE_EV_DATALOADER);
	uint32_t fwd = tb_desc(b, "Forward", TRACE_EV_FORWARD);
	uint32_t bwd = tb_desc(b, "Backward", TRACE_EV_BACKWARD);
	uint32_t opt = tb_desc(b, "Optimization", TRACE_EV_OPTIMIZATION);
	const uint64_t ms = 1000000;
	for (uint64_t k = 0; k < 2; k++, s += 10 * ms) {
		tb_range(b, thread, dl, s, 1 * ms);
		tb_range(b, thread, fwd, s + 1 * ms, 3 * ms);
		tb_range(b, thread, bwd, s + 4 * ms, 5 * ms);
		tb_range(b, thread, opt, s + 9 * ms, ms / 2);
		tb_range(b, thread, step, s, 10 * ms);
	}
}

/* The phase shares of a job's Model and Overview views, checked against the
 * same expected values. */
static void check_job_phases(const struct analysis *a)
{
	static const char *const phases[] = {"Dataloader", "Forward", "Backward", "Optimization"};
	static const double want[] = {10.0, 30.0, 50.0, 5.0};
	struct table *model = tb_view("model", a, &default_opts);
	struct table *overview = tb_view("overview", a, &default_opts);
	double sum_m = 0, sum_o = 0;
	for (unsigned k = 0; k < 4; k++) {
		double m = must_row(model, 0, phases[k], 1)->cells[6].v.pct;
		double o = must_row(overview, 0, phases[k], 1)->cells[3].v.pct;
		assert_near(m, want[k]);
		assert_near(o, want[k]);
		sum_m += m;
		sum_o += o;
	}
	assert_true(sum_m <= 100.0 + 1e-9);
	assert_true(sum_o <= 100.0 + 1e-9);
	assert_near(must_row(model, 0, "Others", 1)->cells[6].v.pct, 5.0);
	assert_near(must_row(model, 0, "Others", 1)->cells[2].v.ns, 2.0 * 1000000); /* 4 x 0.5 ms */
	assert_near(must_row(overview, 0, "ProfileStep", 0)->cells[2].v.ns, 40.0 * 1000000);
	assert_near(must_row(overview, 0, "Forward", 1)->cells[2].v.ns, 12.0 * 1000000);
	table_free(model);
	table_free(overview);
}

/* Issue 25 item 9: two ranks half a step apart. United over the ranks,
 * Forward covered 75 % of the window and Backward 90 % (the shares of a
 * step added up to 215 %); each rank in its own steps, summed: 10 + 30 +
 * 50 + 5 = 95 %, in both views, whether the ranks are two files or two
 * processes of one launcher's file. */
static void test_job_phase_ratios(void **state)
{
	(void)state;
	const uint64_t ms = 1000000;
	const char *paths[2];
	for (int32_t r = 0; r < 2; r++) {
		struct tb b;
		char name[32];
		snprintf(name, sizeof(name), "phase-%d.gpdl", r);
		tb_open_rank(&b, name, "h", 100 + (uint32_t)r, 0, r, 2, 0);
		tb_thread(&b, 0, 100 + (uint32_t)r, "main");
		rank_steps(&b, 0, 100 * ms + (uint64_t)r * 5 * ms);
		paths[r] = tb_close(&b, 200 * ms);
	}
	struct analysis a;
	tb_prepare(&a, paths, 2);
	assert_int_equal(a.window_ns, 25 * ms); /* [100, 125) ms united */
	assert_int_equal(a.nparts_windowed, 2);
	assert_int_equal(a.parts_window_ns, 40 * ms);
	check_job_phases(&a);
	analysis_free(&a);

	/* one launcher's file: its process 1 and the ranks' processes 100, 101 */
	struct tb b;
	tb_open(&b, "phase-launcher.gpdl", "h", 1, 0);
	tb_process(&b, 100, 1, 0, 0, 0, 0, 2);
	tb_process(&b, 101, 1, 0, 0, 0, 1, 2);
	tb_thread_of(&b, 0, 100, 100, "main");
	tb_thread_of(&b, 1, 101, 101, "main");
	tb_thread_of(&b, 2, 1, 1, "launcher");
	rank_steps(&b, 0, 100 * ms);
	rank_steps(&b, 1, 105 * ms);
	tb_range(&b, 2, tb_desc(&b, "wait", TRACE_EV_USER_DEFINED), 50 * ms, 100 * ms);
	const char *path = tb_close(&b, 200 * ms);
	tb_prepare(&a, &path, 1);
	assert_int_equal(a.nparts, 3);
	assert_int_equal(a.nparts_windowed, 2);
	check_job_phases(&a);
	analysis_free(&a);
}

/* Written in end order, as the collector does; a Forward range between a
 * UserDefined parent and child does not break the tree. */
static const char *write_nested(void)
{
	struct tb b;
	tb_open(&b, "nested.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	tb_thread(&b, 1, 11, "worker");
	uint32_t A = tb_desc(&b, "A", TRACE_EV_USER_DEFINED);
	uint32_t B = tb_desc(&b, "B", TRACE_EV_USER_DEFINED);
	uint32_t C = tb_desc(&b, "C", TRACE_EV_USER_DEFINED);
	uint32_t M = tb_desc(&b, "M", TRACE_EV_USER_DEFINED);
	uint32_t F = tb_desc(&b, "Forward", TRACE_EV_FORWARD);
	tb_range(&b, 0, B, 1500, 1000);
	tb_range(&b, 0, C, 3200, 100);
	tb_mark(&b, 0, M, 3500);
	tb_range(&b, 0, B, 3000, 1000);
	tb_range(&b, 0, F, 1200, 3300);
	tb_range(&b, 0, A, 1000, 4000);
	tb_range(&b, 1, B, 2000, 500); /* a top-level B on the other thread */
	tb_range(&b, 1, A, 6000, 1000);
	return tb_close(&b, 10000);
}

static void test_userdefined_tree(void **state)
{
	(void)state;
	const char *path = write_nested();
	struct analysis a;
	tb_prepare(&a, &path, 1);
	struct table *t = tb_view("userdefined", &a, &default_opts);
	assert_int_equal(t->nparts, 1);
	assert_string_equal(t->parts[0].title, "Thread: All threads merged");
	const struct tpart *p = &t->parts[0];
	/* pre-order: A, B (under A), C, M (mark), then the top-level B */
	assert_int_equal(p->nrows, 5);
	const struct trow *r = &p->rows[0];
	assert_string_equal(r->cells[0].v.text, "A");
	assert_int_equal(r->depth, 0);
	assert_int_equal(r->cells[1].v.count, 2);
	assert_near(r->cells[2].v.ns, 5000);
	assert_near(r->cells[3].v.ns, 2500);
	assert_near(r->cells[4].v.ns, 4000);
	assert_near(r->cells[5].v.ns, 1000);
	assert_near(r->cells[6].v.pct, 50.0);
	r = &p->rows[1];
	assert_string_equal(r->cells[0].v.text, "B");
	assert_int_equal(r->depth, 1);
	assert_int_equal(r->cells[1].v.count, 2);
	assert_near(r->cells[2].v.ns, 2000);
	r = &p->rows[2];
	assert_string_equal(r->cells[0].v.text, "C");
	assert_int_equal(r->depth, 2);
	r = &p->rows[3];
	assert_string_equal(r->cells[0].v.text, "M");
	assert_int_equal(r->depth, 2);
	assert_true(r->flags & TROW_MARK);
	assert_int_equal(r->cells[1].v.count, 1);
	assert_false(r->cells[2].set); /* a mark has no time */
	r = &p->rows[4];
	assert_string_equal(r->cells[0].v.text, "B");
	assert_int_equal(r->depth, 0);
	assert_int_equal(r->cells[1].v.count, 1);
	table_free(t);

	struct view_opts sep = default_opts;
	sep.thread_sep = 1;
	t = tb_view("userdefined", &a, &sep);
	assert_int_equal(t->nparts, 2);
	assert_string_equal(t->parts[0].title, "Thread: 10 (main)");
	assert_string_equal(t->parts[1].title, "Thread: 11 (worker)");
	assert_true(t->parts[1].has_thread);
	assert_int_equal(t->parts[1].tid, 11);
	r = must_row(t, 0, "A", 0);
	assert_int_equal(r->cells[1].v.count, 1);
	assert_near(r->cells[2].v.ns, 4000);
	assert_non_null(row(t, 0, "B", 1));
	assert_null(row(t, 0, "B", 0));
	r = must_row(t, 1, "B", 0);
	assert_int_equal(r->cells[1].v.count, 1);
	assert_near(r->cells[2].v.ns, 500);
	assert_int_equal(t->parts[1].nrows, 2);
	table_free(t);
	analysis_free(&a);
}

static const char *write_sortable(void)
{
	struct tb b;
	tb_open(&b, "sort.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, NULL);
	uint32_t X = tb_desc(&b, "X", TRACE_EV_USER_DEFINED);
	uint32_t Y = tb_desc(&b, "Y", TRACE_EV_USER_DEFINED);
	uint32_t Z = tb_desc(&b, "Z", TRACE_EV_USER_DEFINED);
	uint64_t t = 1000;
	tb_range(&b, 0, X, t, 900); /* total 900, avg 900, max 900, min 900 */
	t += 1000;
	for (int i = 0; i < 10; i++, t += 200) /* total 1000, avg 100, max 100, min 100 */
		tb_range(&b, 0, Y, t, 100);
	tb_range(&b, 0, Z, t, 300); /* total 800, avg 400, max 500, min 300 */
	tb_range(&b, 0, Z, t + 1000, 500);
	return tb_close(&b, 100000);
}

static void assert_order(const struct analysis *a, enum sort_key key, const char *expect)
{
	struct view_opts o = default_opts;
	o.sort = key;
	struct table *t = tb_view("userdefined", a, &o);
	char got[16] = "";
	for (size_t i = 0; i < t->parts[0].nrows && i < 15; i++)
		got[i] = t->parts[0].rows[i].cells[0].v.text[0];
	assert_string_equal(got, expect);
	table_free(t);
}

static void test_sort_orders(void **state)
{
	(void)state;
	const char *path = write_sortable();
	struct analysis a;
	tb_prepare(&a, &path, 1);
	assert_order(&a, SORT_CPU_TOTAL, "YXZ");
	assert_order(&a, SORT_CPU_AVG, "XZY");
	assert_order(&a, SORT_CPU_MAX, "XZY");
	assert_order(&a, SORT_CPU_MIN, "YZX"); /* smallest minimum first */
	assert_order(&a, SORT_GPU_TOTAL, "YXZ"); /* no GPU time yet: CPU total decides */
	enum sort_key k;
	assert_int_equal(sort_key_parse("cpu-avg", &k), 0);
	assert_int_equal(k, SORT_CPU_AVG);
	assert_int_equal(sort_key_parse("gpu-min", &k), 0);
	assert_int_equal(sort_key_parse("total", &k), -1);
	analysis_free(&a);
}

/* The buffer lives on the heap, where the stream can update it after we return. */
struct membuf {
	char *buf;
	size_t len;
};

static char *render_text(const struct table *t, enum time_unit unit)
{
	struct membuf *m = calloc(1, sizeof(*m));
	FILE *f = open_memstream(&m->buf, &m->len);
	struct table_style st = {.unit = unit};
	table_render_text(t, f, &st);
	fclose(f);
	char *text = m->buf;
	free(m);
	return text;
}

static void test_time_units_and_text(void **state)
{
	(void)state;
	const char *path = write_sortable();
	struct analysis a;
	tb_prepare(&a, &path, 1);
	struct table *t = tb_view("userdefined", &a, &default_opts);
	static const struct {
		enum time_unit unit;
		const char *line;
	} cases[] = {
		{TIME_UNIT_NS, "1000.00 / 100.00 / 100.00 / 100.00 / 1.00"},
		{TIME_UNIT_US, "1.00 / 0.10 / 0.10 / 0.10 / 1.00"},
		/* no nonzero time as 0.00 (issue 25): two significant digits */
		{TIME_UNIT_MS, "0.0010 / 0.00010 / 0.00010 / 0.00010 / 1.00"},
		{TIME_UNIT_S, "0.0000010 / 0.00000010 / 0.00000010 / 0.00000010 / 1.00"},
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = render_text(t, cases[i].unit);
		char unit_line[32];
		snprintf(unit_line, sizeof(unit_line), "Time unit: %s\n", time_unit_name(cases[i].unit));
		assert_non_null(strstr(text, unit_line));
		if (!strstr(text, cases[i].line))
			fail_msg("no '%s' in\n%s", cases[i].line, text);
		assert_non_null(strstr(text, "CPU Total / Avg / Max / Min / Ratio(%)"));
		assert_non_null(strstr(text, "Thread: All threads merged"));
		/* the title centred in dashes, as wide as the rules */
		const char *title = strstr(text, "UserDefined Summary");
		assert_non_null(title);
		assert_true(title > text && title[-1] == '-');
		free(text);
	}
	enum time_unit u;
	assert_int_equal(time_unit_parse("us", &u), 0);
	assert_int_equal(u, TIME_UNIT_US);
	assert_int_equal(time_unit_parse("sec", &u), -1);
	table_free(t);
	analysis_free(&a);
}

static void test_long_names_cut(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "long.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, NULL);
	char name[200];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	uint32_t d = tb_desc(&b, name, TRACE_EV_USER_DEFINED);
	tb_range(&b, 0, d, 10, 10);
	const char *path = tb_close(&b, 100);
	struct analysis a;
	tb_prepare(&a, &path, 1);
	struct table *t = tb_view("userdefined", &a, &default_opts);
	char *text = render_text(t, TIME_UNIT_MS);
	assert_null(strstr(text, name));
	char cut[64];
	memset(cut, 'n', 57);
	strcpy(cut + 57, "...");
	assert_non_null(strstr(text, cut));
	free(text);
	table_free(t);
	analysis_free(&a);
}

static void test_cpu_utilisation(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "cpu.gpdl", "h", 42, 1000);
	tb_thread(&b, 0, 42, NULL);
	/* process 42: 100% over (1000,2000], 300% over (2000,4000] */
	tb_counter(&b, 2000, TRACE_CTR_CPU_PROCESS, 42, 100.0);
	tb_counter(&b, 4000, TRACE_CTR_CPU_PROCESS, 42, 300.0);
	/* process 43, a child: 50% throughout; its CPU adds to the process row */
	tb_counter(&b, 2000, TRACE_CTR_CPU_PROCESS, 43, 50.0);
	tb_counter(&b, 4000, TRACE_CTR_CPU_PROCESS, 43, 50.0);
	/* the system: 20% then 60% */
	tb_counter(&b, 2000, TRACE_CTR_CPU_SYSTEM, 0, 20.0);
	tb_counter(&b, 4000, TRACE_CTR_CPU_SYSTEM, 0, 60.0);
	const char *path = tb_close(&b, 4000);

	struct analysis a;
	tb_prepare(&a, &path, 1);
	assert_int_equal(a.window_ns, 3000);
	struct table *t = tb_view("device", &a, &default_opts);
	const struct trow *r = must_row(t, 0, "CPU(Process)", 0);
	assert_near(r->cells[1].v.pct, (100.0 * 1000 + 300.0 * 2000) / 3000 + 50.0);
	r = must_row(t, 0, "CPU(System)", 0);
	assert_near(r->cells[1].v.pct, (20.0 * 1000 + 60.0 * 2000) / 3000);
	char *text = render_text(t, TIME_UNIT_MS);
	assert_non_null(strstr(text, "CPU(Process) Utilization = "));
	assert_non_null(strstr(text, "CPU(System) Utilization = "));
	assert_non_null(strstr(text, "283.33"));
	free(text);
	table_free(t);
	analysis_free(&a);

	/* a step inside the second sample period: that sample alone */
	tb_open(&b, "cpu-step.gpdl", "h", 42, 1000);
	tb_thread(&b, 0, 42, NULL);
	tb_range(&b, 0, tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP), 2500, 1000);
	tb_counter(&b, 2000, TRACE_CTR_CPU_PROCESS, 42, 100.0);
	tb_counter(&b, 4000, TRACE_CTR_CPU_PROCESS, 42, 300.0);
	path = tb_close(&b, 4000);
	tb_prepare(&a, &path, 1);
	t = tb_view("device", &a, &default_opts);
	assert_near(must_row(t, 0, "CPU(Process)", 0)->cells[1].v.pct, 300.0);
	assert_false(must_row(t, 0, "CPU(System)", 0)->cells[1].set); /* no samples: "-" */
	table_free(t);
	analysis_free(&a);
}

static const char *write_troubled(void)
{
	struct tb b;
	tb_open(&b, "troubled.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, NULL);
	uint32_t d = tb_desc(&b, "r", TRACE_EV_USER_DEFINED);
	tb_range(&b, 0, d, 100, 10);
	tb_event(&b, 0, d, 200, 50, TRACE_EVF_OPEN_AT_EXIT);
	tb_event(&b, 0, d, 300, 0, TRACE_EVF_UNBALANCED_POP);
	tb_drops(&b, 0, 123);
	tb_flush(&b);
	for (int k = 0; k < 20; k++) {
		for (int i = 0; i < 50; i++)
			tb_range(&b, 0, d, 1000 + (uint64_t)(k * 50 + i) * 10, 5);
		tb_flush(&b);
	}
	return tb_close(&b, 100000);
}

static void test_drops_damage_flags(void **state)
{
	(void)state;
	const char *path = write_troubled();
	struct analysis a;
	tb_prepare(&a, &path, 1);
	assert_int_equal(a.dropped, 123);
	assert_int_equal(a.open_at_exit, 1);
	assert_int_equal(a.unbalanced_pops, 1);
	struct view_opts o = default_opts;
	struct table *t = view_trace(NULL, &a, &o);
	char *text = render_text(t, TIME_UNIT_MS);
	assert_non_null(strstr(text, "123 events were dropped"));
	assert_non_null(strstr(text, "1 ranges were still open at exit"));
	assert_non_null(strstr(text, "1 pops had no matching push"));
	free(text);
	table_free(t);
	/* the unbalanced pop is in no table */
	t = tb_view("userdefined", &a, &default_opts);
	assert_int_equal(must_row(t, 0, "r", 0)->cells[1].v.count, 1002);
	table_free(t);
	analysis_free(&a);

	size_t len;
	char *bytes = tb_slurp(path, &len);
	const char *cut = tb_path("troubled-cut.gpdl");
	FILE *f = fopen(cut, "wb");
	assert_int_equal(fwrite(bytes, 1, len * 2 / 3, f), len * 2 / 3);
	fclose(f);
	free(bytes);
	tb_prepare(&a, &cut, 1);
	assert_int_equal(a.damaged, 1);
	t = view_trace(NULL, &a, &o);
	text = render_text(t, TIME_UNIT_MS);
	char expect[600];
	snprintf(expect, sizeof(expect), "trace '%s' is damaged at offset %llu: ", cut,
		 (unsigned long long)a.store.files[0].damage_offset);
	if (!strstr(text, expect))
		fail_msg("no '%s' in\n%s", expect, text);
	assert_non_null(strstr(text, "; summarised up to there"));
	free(text);
	table_free(t);
	analysis_free(&a);
}

/* A host-only trace: the GPU views say they have no data, the others show
 * what the host ranges hold. */
static void test_host_only_views(void **state)
{
	(void)state;
	const char *path = write_sortable();
	struct analysis a;
	tb_prepare(&a, &path, 1);
	static const char *const no_data[] = {"distributed", "kernel", "memory", "nvprof"};
	for (unsigned i = 0; i < sizeof(no_data) / sizeof(no_data[0]); i++) {
		struct table *t = tb_view(no_data[i], &a, &default_opts);
		char *text = render_text(t, TIME_UNIT_MS);
		if (!strstr(text, "No data"))
			fail_msg("%s:\n%s", no_data[i], text);
		free(text);
		table_free(t);
	}
	struct table *t = tb_view("operator", &a, &default_opts);
	assert_int_equal(table_row_count(t), 0);
	table_free(t);
	t = tb_view("memory-manipulation", &a, &default_opts);
	assert_int_equal(table_row_count(t), 0);
	table_free(t);
	t = tb_view("model", &a, &default_opts); /* no steps, no phases: the run and Others */
	const struct trow *r = must_row(t, 0, "Whole run", 0);
	assert_near(r->cells[2].v.ns, 100000); /* the run: [0, 100000) */
	r = must_row(t, 0, "Others", 1);
	assert_near(r->cells[2].v.ns, 100000); /* the run: [0, 100000) */
	assert_near(r->cells[6].v.pct, 100.0);
	assert_near(r->cells[7].v.ns, 0);
	table_free(t);
	assert_null(view_find("bogus"));
	analysis_free(&a);
}

static void test_report(void **state)
{
	(void)state;
	const char *path = write_nested();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(runend_summary(path, f, 4242), 0);
	fclose(f);
	assert_non_null(strstr(buf, "==4242== Profiling result:\n"));
	assert_non_null(strstr(buf, "Time(%)"));
	/* A: 2 calls, 5 us total, of 10.9 us of all range time (A 5, Forward
	 * 3.3, B 2.5, C 0.1) */
	if (!strstr(buf, " 45.87%   5.0000us         2   2.5000us   1.0000us   4.0000us  A\n") ||
	    !strstr(buf, "==4242== Time(%) is of all range time"))
		fail_msg("unexpected report:\n%s", buf);
	assert_non_null(strstr(buf, "==4242== Events: 8 (1 marks), 0 dropped\n"));
	assert_non_null(strstr(buf, "==4242== Trace: "));
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(runend_summary(tb_path("nope.gpdl"), f, 7), -1);
	fclose(f);
	assert_non_null(strstr(buf, "==7== "));
	free(buf);

	char t[32];
	runend_format_time(t, sizeof(t), 9630500);
	assert_string_equal(t, "9.6305ms");
	runend_format_time(t, sizeof(t), 302);
	assert_string_equal(t, "302ns");
	runend_format_time(t, sizeof(t), 682280000);
	assert_string_equal(t, "682.28ms");
}

/* Steps are named one by one ("ProfileStep#3"): the end-of-run report
 * shows them as one ProfileStep row, so that twelve long steps do not push
 * the program's own ranges out of its top rows. */
static void test_report_steps(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "report-steps.gpdl", "h", 11, 0);
	tb_thread(&b, 0, 11, "main");
	uint32_t op = tb_desc(&b, "aten::mm", TRACE_EV_OPERATOR);
	for (unsigned k = 0; k < 12; k++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfileStep#%u", k);
		tb_range(&b, 0, tb_desc(&b, name, TRACE_EV_PROFILE_STEP), k * 10000, 10000);
		tb_range(&b, 0, op, k * 10000 + 1000, 2000);
	}
	const char *path = tb_close(&b, 120000);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(runend_summary(path, f, 11), 0);
	fclose(f);
	/* 12 steps of 10 us: 120 us, and 24 us of aten::mm: of 144 us */
	if (!strstr(buf, " 83.33%   120.00us        12   10.000us   10.000us   10.000us  ProfileStep\n") ||
	    !strstr(buf, " 16.67%   24.000us        12   2.0000us   2.0000us   2.0000us  aten::mm\n") ||
	    strstr(buf, "ProfileStep#"))
		fail_msg("unexpected report:\n%s", buf);
	free(buf);
}

/* No event at all: every table still prints, and says so. */
static void test_empty_trace(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "empty.gpdl", "h", 10, 500);
	const char *path = tb_close(&b, 500);
	struct analysis a;
	tb_prepare(&a, &path, 1);
	assert_int_equal(a.window_ns, 0);
	struct summary_opts o = {.view = default_opts, .format = SUMMARY_TEXT};
	struct membuf *m = calloc(1, sizeof(*m));
	FILE *f = open_memstream(&m->buf, &m->len);
	assert_int_equal(summary_write(&a, &o, f), 0);
	fclose(f);
	assert_non_null(strstr(m->buf, "No UserDefined ranges in the window."));
	assert_non_null(strstr(m->buf, "Whole run"));
	assert_non_null(strstr(m->buf, "This trace has no CPU utilisation samples"));
	free(m->buf);
	free(m);
	analysis_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overview_union_across_threads),
		cmocka_unit_test(test_step_window),
		cmocka_unit_test(test_job_phase_ratios),
		cmocka_unit_test(test_userdefined_tree),
		cmocka_unit_test(test_sort_orders),
		cmocka_unit_test(test_time_units_and_text),
		cmocka_unit_test(test_long_names_cut),
		cmocka_unit_test(test_cpu_utilisation),
		cmocka_unit_test(test_drops_damage_flags),
		cmocka_unit_test(test_host_only_views),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_report_steps),
		cmocka_unit_test(test_empty_trace),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
