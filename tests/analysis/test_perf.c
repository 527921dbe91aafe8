/*
 * test_perf.c - the Perf Summary (perf.h, view_perf.c): steps, the skip
 * rule, reader and batch costs, the reader ratio, ips in steps/s and in
 * samples/s, several traces pooled, and the view's text, CSV and JSON. The
 * traces are drawn in tracebuild.h; every number is worked out here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "formats/csv/csv_out.h"
#include "formats/json/json_writer.h"
#include "lib/analysis/views/perf.h"
#include "lib/analysis/summary.h"
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#define MS 1e6 /* ns */

static void assert_near(double x, double want)
{
	if (fabs(x - want) > 1e-9 * (fabs(want) + 1))
		fail_msg("%.12g != %.12g", x, want);
}

static void assert_stat(const struct perf_stat *s, double avg, double max, double min)
{
	assert_near(s->avg, avg);
	assert_near(s->max, max);
	assert_near(s->min, min);
}

/* perf_compute() on the given traces. */
static void measure(struct perf *p, const char *const *paths, unsigned n, unsigned skip)
{
	struct analysis a;
	tb_prepare(&a, paths, n);
	perf_compute(p, &a, skip);
	analysis_free(&a);
}

/* Trace a (tracebuild.h), default skip: 4 steps (the step of no length, the
 * mark and the nested ProfilerStep#9 are none), at most half skipped: 2.
 * Counted s2 (400 ms, reader 80) and s3 (500 ms, reader 100):
 *   reader_cost avg 90, max 100, min 80; batch_cost avg 450, max 500, min 400
 *   Reader Ratio = 180 / 900 = 20%
 *   ips (steps/s): 1/0.4 = 2.5, 1/0.5 = 2; avg = 2 / 0.9 s = 2.2222... */
static void test_default_skip_capped(void **state)
{
	(void)state;
	const char *paths[] = {tb_perf_a()};
	struct perf p;
	measure(&p, paths, 1, PERF_SKIP_DEFAULT);
	assert_int_equal(p.steps, 4);
	assert_int_equal(p.skipped, 2);
	assert_int_equal(p.counted, 2);
	assert_int_equal(p.files_without_steps, 0);
	assert_int_equal(p.by_samples, 0);
	assert_string_equal(perf_ips_unit(&p), "steps/s");
	/* the per-step array: what a baseline comparison reads */
	assert_int_equal(p.step[0].start_ns, 300 * MS);
	assert_int_equal(p.step[0].batch_ns, 400 * MS);
	assert_int_equal(p.step[0].reader_ns, 80 * MS);
	assert_int_equal(p.step[0].samples, 0);
	assert_int_equal(p.step[1].start_ns, 1000 * MS);
	assert_int_equal(p.step[1].batch_ns, 500 * MS);
	assert_int_equal(p.step[1].reader_ns, 100 * MS);
	assert_int_equal(p.batch_total_ns, 900 * MS);
	assert_int_equal(p.reader_total_ns, 180 * MS);
	assert_stat(&p.reader_ns, 90 * MS, 100 * MS, 80 * MS);
	assert_stat(&p.batch_ns, 450 * MS, 500 * MS, 400 * MS);
	assert_near(p.reader_ratio, 20.0);
	assert_stat(&p.ips, 2.0 / 0.9, 2.5, 2.0);
	perf_free(&p);

	/* a skip above half the steps is capped the same way */
	measure(&p, paths, 1, 3);
	assert_int_equal(p.skipped, 2);
	assert_int_equal(p.counted, 2);
	assert_near(p.reader_ratio, 20.0);
	perf_free(&p);
}

/* Trace a, --skip-steps 0: s0..s3, batch 100, 200, 400, 500 (1200 in all),
 * reader 0, 20, 80, 100 (200):
 *   reader_cost avg 50, max 100, min 0; batch_cost avg 300, max 500, min 100
 *   Reader Ratio = 200 / 1200 = 16.6667%
 *   ips: 10, 5, 2.5, 2; avg = 4 / 1.2 s = 3.3333...
 * --skip-steps 1: s1..s3, batch 1100, reader 200: ratio 18.1818%, reader
 * avg 66.667 (max 100, min 20), batch avg 366.667, ips avg 3 / 1.1 s. */
static void test_skip_option(void **state)
{
	(void)state;
	const char *paths[] = {tb_perf_a()};
	struct perf p;
	measure(&p, paths, 1, 0);
	assert_int_equal(p.steps, 4);
	assert_int_equal(p.skipped, 0);
	assert_int_equal(p.counted, 4);
	assert_stat(&p.reader_ns, 50 * MS, 100 * MS, 0);
	assert_stat(&p.batch_ns, 300 * MS, 500 * MS, 100 * MS);
	assert_near(p.reader_ratio, 100.0 / 6.0);
	assert_stat(&p.ips, 4.0 / 1.2, 10.0, 2.0);
	perf_free(&p);

	measure(&p, paths, 1, 1);
	assert_int_equal(p.skipped, 1);
	assert_int_equal(p.counted, 3);
	assert_int_equal(p.step[0].reader_ns, 20 * MS);
	assert_stat(&p.reader_ns, 200 * MS / 3, 100 * MS, 20 * MS);
	assert_stat(&p.batch_ns, 1100 * MS / 3, 500 * MS, 200 * MS);
	assert_near(p.reader_ratio, 100.0 * 200 / 1100);
	assert_stat(&p.ips, 3.0 / 1.1, 5.0, 2.0);
	perf_free(&p);
}

/* 25 steps lasting 1..25 ms: the default skips 10 (half would be 12);
 * counted 11..25 ms, 15 steps, 270 ms: batch avg 18, max 25, min 11; no
 * Dataloader: reader 0, ratio 0; ips avg 15 / 0.27 s, max 1000/11, min 40. */
static void test_default_skip_10(void **state)
{
	(void)state;
	const char *paths[] = {tb_perf_long()};
	struct perf p;
	measure(&p, paths, 1, PERF_SKIP_DEFAULT);
	assert_int_equal(p.steps, 25);
	assert_int_equal(p.skipped, 10);
	assert_int_equal(p.counted, 15);
	assert_int_equal(p.step[0].batch_ns, 11 * MS);
	assert_stat(&p.batch_ns, 18 * MS, 25 * MS, 11 * MS);
	assert_stat(&p.reader_ns, 0, 0, 0);
	assert_near(p.reader_ratio, 0.0);
	assert_stat(&p.ips, 15 / 0.27, 1000.0 / 11, 40.0);
	perf_free(&p);
}

/* a and b pooled, default skip: a skips 2 of 4, b 1 of 2; counted a's s2
 * (400, reader 80), s3 (500, 100; b's Dataloader at the same time is
 * another process's) and b's second step (600, 100):
 *   batch avg 500, max 600, min 400; reader avg 280/3, max 100, min 80
 *   Reader Ratio = 280 / 1500 = 18.6667%
 *   ips 2.5, 2, 1.6667; avg = 3 / 1.5 s = 2 */
static void test_pooled(void **state)
{
	(void)state;
	const char *paths[] = {tb_perf_a(), tb_perf_b()};
	struct perf p;
	measure(&p, paths, 2, PERF_SKIP_DEFAULT);
	assert_int_equal(p.steps, 6);
	assert_int_equal(p.skipped, 3);
	assert_int_equal(p.counted, 3);
	assert_int_equal(p.step[0].file, 0);
	assert_int_equal(p.step[1].file, 0);
	assert_int_equal(p.step[1].reader_ns, 100 * MS);
	assert_int_equal(p.step[2].file, 1);
	assert_int_equal(p.step[2].batch_ns, 600 * MS);
	assert_int_equal(p.step[2].reader_ns, 100 * MS);
	assert_stat(&p.batch_ns, 500 * MS, 600 * MS, 400 * MS);
	assert_stat(&p.reader_ns, 280 * MS / 3, 100 * MS, 80 * MS);
	assert_near(p.reader_ratio, 100.0 * 280 / 1500);
	assert_stat(&p.ips, 2.0, 2.5, 1.0 / 0.6);
	perf_free(&p);
}

/* Samples kept by the store, steps built by hand (no writer involved):
 * steps of 1 s (32 samples), 2 s (32), 0.5 s (16), skip 0:
 *   ips (samples/s): 32, 16, 32; avg = 80 / 3.5 s = 22.857...
 * A fourth step of 0.5 s without samples: steps/s, 1, 0.5, 2, 2; avg 4 / 4 s. */
static void store_samples(struct analysis *a, int all)
{
	analysis_init(a);
	struct store *s = &a->store;
	uint32_t f = store_add_file(s, "by-hand");
	uint32_t t = store_add_track(s, STORE_TRACK_HOST, f, 0);
	s->tracks[t].pid = 1;
	s->tracks[t].tid = 1;
	uint32_t step = store_desc_intern(s, "ProfileStep#3", 13, TRACE_EV_USER_DEFINED);
	struct trace_event_ext x = {.samples = 32};
	store_append_ext(s, t, 1000 * MS, 2000 * MS, step, 0, &x); /* out of order: sorted */
	store_append_ext(s, t, 0, 1000 * MS, step, 0, &x);
	x.samples = 16;
	store_append_ext(s, t, 3000 * MS, 500 * MS, step, 0, &x);
	if (!all)
		store_append(s, t, 3500 * MS, 500 * MS, step, 0);
	analysis_prepare(a);
}

static void test_samples_in_store(void **state)
{
	(void)state;
	struct analysis a;
	struct perf p;
	store_samples(&a, 1);
	perf_compute(&p, &a, 0);
	assert_int_equal(p.counted, 3);
	assert_int_equal(p.by_samples, 1);
	assert_string_equal(perf_ips_unit(&p), "samples/s");
	assert_int_equal(p.step[0].samples, 32);
	assert_int_equal(p.step[1].samples, 32);
	assert_int_equal(p.step[1].batch_ns, 2000 * MS);
	assert_int_equal(p.step[2].samples, 16);
	assert_int_equal(p.samples_total, 80);
	assert_stat(&p.ips, 80 / 3.5, 32.0, 16.0);
	perf_free(&p);
	analysis_free(&a);

	store_samples(&a, 0);
	perf_compute(&p, &a, 0);
	assert_int_equal(p.counted, 4);
	assert_int_equal(p.by_samples, 0);
	assert_string_equal(perf_ips_unit(&p), "steps/s");
	assert_stat(&p.ips, 1.0, 2.0, 0.5);
	perf_free(&p);
	analysis_free(&a);
}

/* The same through the trace writer and reader (trace 1.2 carries samples). */
static void test_samples_in_trace(void **state)
{
	(void)state;
#if TRACE_FORMAT_VERSION_MAJOR == 1 && TRACE_FORMAT_VERSION_MINOR < 2
	skip();
#else
	const char *all[] = {tb_perf_samples(1)}, *some[] = {tb_perf_samples(0)};
	struct perf p;
	measure(&p, all, 1, 0);
	assert_int_equal(p.counted, 3);
	assert_string_equal(perf_ips_unit(&p), "samples/s");
	assert_int_equal(p.samples_total, 80);
	assert_stat(&p.ips, 80 / 3.5, 32.0, 16.0);
	perf_free(&p);
	/* the default skip: 1 of 3 (half, rounded down); 2 s with 32, 0.5 s with 16 */
	measure(&p, all, 1, PERF_SKIP_DEFAULT);
	assert_int_equal(p.skipped, 1);
	assert_stat(&p.ips, 48 / 2.5, 32.0, 16.0);
	perf_free(&p);
	measure(&p, some, 1, 0);
	assert_int_equal(p.counted, 4);
	assert_string_equal(perf_ips_unit(&p), "steps/s");
	assert_stat(&p.ips, 1.0, 2.0, 0.5);
	perf_free(&p);
#endif
}

static void test_no_steps(void **state)
{
	(void)state;
	const char *paths[] = {tb_perf_nosteps()};
	struct perf p;
	measure(&p, paths, 1, PERF_SKIP_DEFAULT);
	assert_int_equal(p.steps, 0);
	assert_int_equal(p.counted, 0);
	assert_int_equal(p.files_without_steps, 1);
	assert_int_equal(p.first_without_steps, 0);
	assert_near(p.reader_ratio, 0.0);
	perf_free(&p);

	/* pooled with a trace that has steps: that one is still measured, and
	 * the one without is named */
	const char *two[] = {tb_perf_a(), tb_perf_nosteps()};
	measure(&p, two, 2, PERF_SKIP_DEFAULT);
	assert_int_equal(p.counted, 2);
	assert_int_equal(p.files_without_steps, 1);
	assert_int_equal(p.first_without_steps, 1);
	perf_free(&p);
}

/* ---- the view ----------------------------------------------------------- */

static char *summary_text(const char *const *paths, unsigned n, const struct summary_opts *o)
{
	struct analysis a;
	tb_prepare(&a, paths, n);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(summary_write(&a, o, f), 0);
	fclose(f);
	analysis_free(&a);
	return buf;
}

static void assert_contains(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("'%s' not in:\n%s", want, text);
}

static void test_view_text(void **state)
{
	(void)state;
	const char *paths[] = {tb_perf_a()};
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_S}};
	summary_add_view(&o, view_find("perf"));
	char *text = summary_text(paths, 1, &o);
	size_t n = strlen(text), want = strlen(tb_perf_a_text_s);
	assert_true(n > want); /* the Trace Summary, then the perf view's table */
	assert_string_equal(text + n - want, tb_perf_a_text_s);
	free(text);

	/* in ms, with --skip-steps 0 through the options */
	o.view.unit = TIME_UNIT_MS;
	o.view.skip_set = 1;
	o.view.skip_steps = 0;
	text = summary_text(paths, 1, &o);
	assert_contains(text, "reader_cost        50.00000           100.00000          0.00000\n");
	assert_contains(text, "batch_cost         300.00000          500.00000          100.00000\n");
	assert_contains(text, "ips                3.33333            10.00000           2.00000\n");
	assert_contains(text, "Reader Ratio: 16.667%\n");
	assert_contains(text, "Steps: 4 ProfileStep ranges; 0 skipped (the first 0 of each trace");
	free(text);

	/* pooled: a note says so */
	const char *two[] = {tb_perf_a(), tb_perf_b()};
	o.view.skip_set = 0;
	text = summary_text(two, 2, &o);
	assert_contains(text, "2 traces pooled: their counted steps are taken together.\n");
	assert_contains(text, "Reader Ratio: 18.667%\n");
	free(text);
}

/* In the default set only when the traces have steps; named, it says in one
 * line that there is nothing to measure. */
static void test_view_default_and_empty(void **state)
{
	(void)state;
	const char *with[] = {tb_perf_a()}, *without[] = {tb_perf_nosteps()};
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS}};
	char *text = summary_text(with, 1, &o);
	const char *perf = strstr(text, "Perf Summary"), *device = strstr(text, "Device Summary");
	assert_non_null(perf);
	assert_non_null(device);
	assert_true(perf < device); /* first, as Paddle prints it when it stops */
	free(text);

	text = summary_text(without, 1, &o);
	assert_null(strstr(text, "Perf Summary"));
	assert_non_null(strstr(text, "Device Summary"));
	free(text);

	summary_add_view(&o, view_find("perf"));
	text = summary_text(without, 1, &o);
	assert_contains(text, "Perf Summary-");
	assert_contains(text, "\nNo training steps (ProfileStep ranges) to measure.\n");
	assert_null(strstr(text, "reader_cost"));
	free(text);
}

static void test_view_csv(void **state)
{
	(void)state;
	const char *paths[] = {tb_perf_a()};
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS},
				 .format = SUMMARY_CSV};
	summary_add_view(&o, view_find("perf"));
	char *text = summary_text(paths, 1, &o);
	/* the view's two tables only: the times, the facts on each row; then the
	 * ips row, whose columns are numbers, as a table of its own */
	assert_string_equal(text,
			    "row,name,avg_ms,max_ms,min_ms,depth,parent,steps,skipped,counted,"
			    "reader_ratio\r\n"
			    "1,\"reader_cost\",90.000000,100.000000,80.000000,0,0,4,2,2,20.000000\r\n"
			    "2,\"batch_cost\",450.000000,500.000000,400.000000,0,0,4,2,2,20.000000\r\n"
			    "\r\n"
			    "row,section,name,avg,max,min,depth,parent\r\n"
			    "1,\"IPS Unit: steps/s\",\"ips\",2.22222,2.50000,2.00000,0,0\r\n"
			    "\r\n");
	free(text);
}

static yajl_val key(yajl_val obj, const char *k)
{
	const char *path[] = {k, NULL};
	yajl_val v = yajl_tree_get(obj, path, yajl_t_any);
	if (!v)
		fail_msg("no JSON value at '%s'", k);
	return v;
}

static yajl_val at(yajl_val arr, size_t i)
{
	assert_true(YAJL_IS_ARRAY(arr));
	assert_true(i < YAJL_GET_ARRAY(arr)->len);
	return YAJL_GET_ARRAY(arr)->values[i];
}

static void assert_num(yajl_val v, double want)
{
	assert_true(YAJL_IS_NUMBER(v));
	assert_near(YAJL_GET_DOUBLE(v), want);
}

static void test_view_json(void **state)
{
	(void)state;
	const char *paths[] = {tb_perf_a()};
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS},
				 .format = SUMMARY_JSON};
	summary_add_view(&o, view_find("perf"));
	char *text = summary_text(paths, 1, &o);
	char err[256];
	yajl_val doc = yajl_tree_parse(text, err, sizeof(err));
	if (!doc)
		fail_msg("JSON does not parse: %s", err);
	yajl_val perf = key(key(doc, "tables"), "perf");
	assert_string_equal(YAJL_GET_STRING(key(perf, "title")), "Perf Summary");
	assert_string_equal(YAJL_GET_STRING(key(perf, "time_unit")), "ms");
	yajl_val costs = at(key(perf, "sections"), 0);
	yajl_val facts = key(costs, "facts");
	assert_num(key(facts, "steps"), 4);
	assert_num(key(facts, "skipped"), 2);
	assert_num(key(facts, "counted"), 2);
	assert_num(key(facts, "reader_ratio"), 20.0);
	yajl_val reader = at(key(costs, "rows"), 0);
	assert_string_equal(YAJL_GET_STRING(key(reader, "name")), "reader_cost");
	assert_num(key(reader, "avg"), 90.0);
	assert_num(key(reader, "avg_ns"), 90e6);
	assert_num(key(reader, "max"), 100.0);
	assert_num(key(reader, "min_ns"), 80e6);
	yajl_val batch = at(key(costs, "rows"), 1);
	assert_string_equal(YAJL_GET_STRING(key(batch, "name")), "batch_cost");
	assert_num(key(batch, "avg"), 450.0);
	yajl_val ipspart = at(key(perf, "sections"), 1);
	assert_string_equal(YAJL_GET_STRING(key(ipspart, "label")), "IPS Unit: steps/s");
	assert_string_equal(YAJL_GET_STRING(key(at(key(ipspart, "columns"), 1), "kind")), "number");
	yajl_val ips = at(key(ipspart, "rows"), 0);
	assert_string_equal(YAJL_GET_STRING(key(ips, "name")), "ips");
	assert_num(key(ips, "avg"), 2.0 / 0.9);
	assert_num(key(ips, "max"), 2.5);
	assert_num(key(ips, "min"), 2.0);
	yajl_tree_free(doc);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_skip_capped),
		cmocka_unit_test(test_skip_option),
		cmocka_unit_test(test_default_skip_10),
		cmocka_unit_test(test_pooled),
		cmocka_unit_test(test_samples_in_store),
		cmocka_unit_test(test_samples_in_trace),
		cmocka_unit_test(test_no_steps),
		cmocka_unit_test(test_view_text),
		cmocka_unit_test(test_view_default_and_empty),
		cmocka_unit_test(test_view_csv),
		cmocka_unit_test(test_view_json),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
