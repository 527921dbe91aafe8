/*
 * test_cmd_bench.c - `gprof-dl bench` as a user runs it: the built
 * executable (GPDL_BIN), its exit status, its stderr, its text table and its
 * JSON object read back by yajl. The traces are tracebuild.h's; their
 * numbers are worked out in tests/analysis/test_perf.c and again here.
 *
 * Statuses under test: 2 usage (one line and a pointer to --help), 1 a file
 * that is not a trace or holds no training step (one line naming it), 0
 * printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/analysis/tracebuild.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif

struct result {
	int status;
	char *out, *err;
};

/* Runs gprof-dl bench with args (NULL-terminated). */
static struct result bench(const char *const *args)
{
	const char *out = tb_path("stdout.txt"), *err = tb_path("stderr.txt");
	const char *argv[32] = {GPDL_BIN, "bench"};
	size_t n = 2;
	for (; args[n - 2] && n < 31; n++)
		argv[n] = args[n - 2];
	argv[n] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(99);
		execv(GPDL_BIN, (char *const *)argv);
		_exit(98);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	struct result r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
			   tb_slurp(out, NULL), tb_slurp(err, NULL)};
	return r;
}

#define BENCH(...) bench((const char *const[]){__VA_ARGS__, NULL})

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static void assert_contains(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("'%s' not in:\n%s", want, text);
}

/* One line on stderr, "gprof-dl: ..." */
static void assert_one_line(const char *err)
{
	if (strncmp(err, "gprof-dl: ", 10) != 0 || !strchr(err, '\n') || strchr(err, '\n')[1])
		fail_msg("not one 'gprof-dl: ' line: %s", err);
}

static void expect_usage(struct result r, const char *message)
{
	assert_int_equal(r.status, 2);
	assert_contains(r.err, message);
	assert_contains(r.err, "see 'gprof-dl bench --help'");
	assert_string_equal(r.out, "");
	result_free(&r);
}

static void test_usage(void **state)
{
	(void)state;
	const char *t = tb_perf_a();
	expect_usage(bench((const char *const[]){NULL}), "no trace file given");
	expect_usage(BENCH(t, "--bogus"), "unknown option '--bogus'");
	expect_usage(BENCH(t, "--skip-steps"), "needs a value");
	expect_usage(BENCH(t, "--skip-steps", "x"), "invalid --skip-steps 'x'");
	expect_usage(BENCH(t, "--skip-steps", "-1"), "invalid --skip-steps '-1'");
	expect_usage(BENCH(t, "--skip-steps", "3s"), "invalid --skip-steps '3s'");
	expect_usage(BENCH(t, "--skip-steps", "99999999999"), "invalid --skip-steps");
	expect_usage(BENCH(t, "--time-unit", "h"), "unknown time unit 'h'");
	expect_usage(BENCH(t, "--format", "csv"), "unknown format 'csv' (text or json)");

	struct result r = BENCH("--help");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: gprof-dl bench FILE... [--skip-steps K]");
	assert_string_equal(r.err, "");
	result_free(&r);
}

static void test_bad_files(void **state)
{
	(void)state;
	const char *missing = tb_path("missing.gpdl");
	struct result r = BENCH(missing);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	char want[700];
	snprintf(want, sizeof(want), "'%s'", missing);
	assert_contains(r.err, want);
	assert_string_equal(r.out, "");
	result_free(&r);

	/* no step: exit 1, naming the file, even pooled with one that has steps */
	const char *none = tb_perf_nosteps();
	snprintf(want, sizeof(want),
		 "gprof-dl: '%s': no training steps (ProfileStep ranges) to measure\n", none);
	r = BENCH(none);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	result_free(&r);
	r = BENCH(tb_perf_a(), none, "--format", "json");
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	result_free(&r);
}

static void test_text(void **state)
{
	(void)state;
	const char *a = tb_perf_a();
	struct result r = BENCH(a);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_string_equal(r.out, tb_perf_a_text_s);
	result_free(&r);

	/* --skip-steps 0 --time-unit ms: reader 50 / 100 / 0, batch 300 / 500 / 100,
	 * ips 4 / 1.2 s, 10, 2; ratio 200 / 1200 */
	r = BENCH(a, "--skip-steps", "0", "--time-unit", "ms");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "Time unit: ms\n");
	assert_contains(r.out, "reader_cost        50.00000           100.00000          0.00000\n");
	assert_contains(r.out, "batch_cost         300.00000          500.00000          100.00000\n");
	assert_contains(r.out, "ips                3.33333            10.00000           2.00000\n");
	assert_contains(r.out, "Reader Ratio: 16.667%\n");
	assert_contains(r.out, "Steps: 4 ProfileStep ranges; 0 skipped (the first 0 of each trace");
	result_free(&r);
}

/* ---- JSON ------------------------------------------------------------------ */

static yajl_val key(yajl_val obj, const char *k)
{
	const char *path[] = {k, NULL};
	yajl_val v = yajl_tree_get(obj, path, yajl_t_any);
	if (!v)
		fail_msg("no JSON value at '%s'", k);
	return v;
}

static void assert_num(yajl_val v, double want)
{
	assert_true(YAJL_IS_NUMBER(v));
	if (fabs(YAJL_GET_DOUBLE(v) - want) > 1e-9 * (fabs(want) + 1))
		fail_msg("%.12g != %.12g", YAJL_GET_DOUBLE(v), want);
}

static const char *str(yajl_val v)
{
	assert_true(YAJL_IS_STRING(v));
	return YAJL_GET_STRING(v);
}

static void assert_stat(yajl_val v, double avg, double max, double min)
{
	assert_true(YAJL_IS_OBJECT(v));
	assert_int_equal(YAJL_GET_OBJECT(v)->len, 3);
	assert_num(key(v, "avg"), avg);
	assert_num(key(v, "max"), max);
	assert_num(key(v, "min"), min);
}

static yajl_val bench_json(struct result *r, const char *const *args)
{
	*r = bench(args);
	if (r->status != 0)
		fail_msg("exit %d: %s", r->status, r->err);
	assert_string_equal(r->err, "");
	char err[256];
	yajl_val doc = yajl_tree_parse(r->out, err, sizeof(err));
	if (!doc)
		fail_msg("JSON does not parse: %s\n%s", err, r->out);
	assert_true(YAJL_IS_OBJECT(doc));
	return doc;
}

/* The keys, in order: the stable schema. */
static void assert_keys(yajl_val doc)
{
	static const char *const keys[] = {"schema",      "files",       "steps",     "skipped",
					   "counted",     "ips_unit",    "time_unit", "reader_ratio",
					   "reader_cost", "batch_cost",  "ips"};
	size_t n = sizeof(keys) / sizeof(keys[0]);
	assert_int_equal(YAJL_GET_OBJECT(doc)->len, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(YAJL_GET_OBJECT(doc)->keys[i], keys[i]);
	assert_string_equal(str(key(doc, "schema")), "gprof-dl-bench/1");
	assert_string_equal(str(key(doc, "time_unit")), "s");
}

static void test_json(void **state)
{
	(void)state;
	const char *a = tb_perf_a();
	struct result r;
	/* trace a, default skip; --time-unit does not change the JSON (seconds) */
	yajl_val doc = bench_json(&r, (const char *const[]){a, "--format", "json", "--time-unit",
							    "us", NULL});
	assert_keys(doc);
	yajl_val files = key(doc, "files");
	assert_int_equal(YAJL_GET_ARRAY(files)->len, 1);
	assert_string_equal(str(YAJL_GET_ARRAY(files)->values[0]), a);
	assert_num(key(doc, "steps"), 4);
	assert_num(key(doc, "skipped"), 2);
	assert_num(key(doc, "counted"), 2);
	assert_string_equal(str(key(doc, "ips_unit")), "steps/s");
	assert_num(key(doc, "reader_ratio"), 20.0);
	assert_stat(key(doc, "reader_cost"), 0.09, 0.1, 0.08);
	assert_stat(key(doc, "batch_cost"), 0.45, 0.5, 0.4);
	assert_stat(key(doc, "ips"), 2.0 / 0.9, 2.5, 2.0);
	yajl_tree_free(doc);
	result_free(&r);

	/* 25 steps of 1..25 ms: the default skips 10; 11..25 ms counted */
	doc = bench_json(&r, (const char *const[]){tb_perf_long(), "--format=json", NULL});
	assert_num(key(doc, "steps"), 25);
	assert_num(key(doc, "skipped"), 10);
	assert_num(key(doc, "counted"), 15);
	assert_num(key(doc, "reader_ratio"), 0.0);
	assert_stat(key(doc, "batch_cost"), 0.018, 0.025, 0.011);
	assert_stat(key(doc, "ips"), 15 / 0.27, 1000.0 / 11, 40.0);
	yajl_tree_free(doc);
	result_free(&r);
}

/* a and b pooled (test_perf.c): 6 steps, 3 skipped, 3 counted. */
static void test_pooled(void **state)
{
	(void)state;
	const char *a = tb_perf_a(), *b = tb_perf_b();
	struct result r;
	yajl_val doc = bench_json(&r, (const char *const[]){a, b, "--format", "json", NULL});
	assert_keys(doc);
	yajl_val files = key(doc, "files");
	assert_int_equal(YAJL_GET_ARRAY(files)->len, 2);
	assert_string_equal(str(YAJL_GET_ARRAY(files)->values[0]), a);
	assert_string_equal(str(YAJL_GET_ARRAY(files)->values[1]), b);
	assert_num(key(doc, "steps"), 6);
	assert_num(key(doc, "skipped"), 3);
	assert_num(key(doc, "counted"), 3);
	assert_num(key(doc, "reader_ratio"), 100.0 * 280 / 1500);
	assert_stat(key(doc, "reader_cost"), 0.28 / 3, 0.1, 0.08);
	assert_stat(key(doc, "batch_cost"), 0.5, 0.6, 0.4);
	assert_stat(key(doc, "ips"), 2.0, 2.5, 1.0 / 0.6);
	yajl_tree_free(doc);
	result_free(&r);

	r = BENCH(a, b);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "2 traces pooled: their counted steps are taken together.\n");
	assert_contains(r.out, "Steps: 6 ProfileStep ranges; 3 skipped");
	result_free(&r);
}

/* Steps that know their samples (trace 1.2): samples/s. 32 in 1 s, 32 in
 * 2 s, 16 in 0.5 s: 32, 16, 32 samples/s, avg 80 / 3.5 s. With a fourth step
 * that does not say: steps/s, 1, 0.5, 2, 2; avg 4 / 4 s. */
static void test_samples(void **state)
{
	(void)state;
#if TRACE_FORMAT_VERSION_MAJOR == 1 && TRACE_FORMAT_VERSION_MINOR < 2
	skip();
#else
	struct result r;
	yajl_val doc = bench_json(&r, (const char *const[]){tb_perf_samples(1), "--skip-steps", "0",
							    "--format", "json", NULL});
	assert_string_equal(str(key(doc, "ips_unit")), "samples/s");
	assert_num(key(doc, "counted"), 3);
	assert_stat(key(doc, "ips"), 80 / 3.5, 32.0, 16.0);
	assert_stat(key(doc, "batch_cost"), 3.5 / 3, 2.0, 0.5);
	yajl_tree_free(doc);
	result_free(&r);

	doc = bench_json(&r, (const char *const[]){tb_perf_samples(0), "--skip-steps", "0",
						   "--format", "json", NULL});
	assert_string_equal(str(key(doc, "ips_unit")), "steps/s");
	assert_num(key(doc, "counted"), 4);
	assert_stat(key(doc, "ips"), 1.0, 2.0, 0.5);
	yajl_tree_free(doc);
	result_free(&r);

	r = BENCH(tb_perf_samples(1), "--skip-steps", "0");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "IPS Unit: samples/s\n");
	assert_contains(r.out, "ips                22.85714           32.00000           16.00000\n");
	result_free(&r);
#endif
}

/* A PyTorch profiler trace, read as it is: ProfilerStep#N user annotations
 * (steps by their name) of 100 ms and 300 ms, a Paddle-style Dataloader
 * category range of 30 ms in the second; --skip-steps 0. */
static void test_imported_json(void **state)
{
	(void)state;
	const char *path = tb_path("torch.json");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"traceEvents\": [\n"
	      "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#0\", \"pid\": 7,"
	      " \"tid\": 7, \"ts\": 1000, \"dur\": 100000},\n"
	      "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 7,"
	      " \"tid\": 7, \"ts\": 101000, \"dur\": 300000},\n"
	      "{\"ph\": \"X\", \"cat\": \"Dataloader\", \"name\": \"Dataloader\", \"pid\": 7,"
	      " \"tid\": 7, \"ts\": 101000, \"dur\": 30000}\n"
	      "]}\n",
	      f);
	assert_int_equal(fclose(f), 0);
	struct result r;
	yajl_val doc = bench_json(&r, (const char *const[]){path, "--skip-steps", "0", "--format",
							    "json", NULL});
	assert_num(key(doc, "steps"), 2);
	assert_num(key(doc, "counted"), 2);
	assert_num(key(doc, "reader_ratio"), 100.0 * 30 / 400);
	assert_stat(key(doc, "batch_cost"), 0.2, 0.3, 0.1);
	assert_stat(key(doc, "reader_cost"), 0.015, 0.03, 0.0);
	assert_stat(key(doc, "ips"), 2 / 0.4, 10.0, 1 / 0.3);
	yajl_tree_free(doc);
	result_free(&r);
}

static int teardown(void **state)
{
	(void)state;
	tb_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_pooled),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_imported_json),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
