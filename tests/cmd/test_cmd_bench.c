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
#include "tests/cmd/cmdrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif

/* Runs gprof-dl bench with args (NULL-terminated). */
static struct cmd_result bench(const char *const *args)
{
	return cmd_run(GPDL_BIN, "bench", args);
}

#define BENCH(...) bench((const char *const[]){__VA_ARGS__, NULL})

static void expect_usage(struct cmd_result r, const char *message)
{
	assert_int_equal(r.status, 2);
	assert_contains(r.err, message);
	assert_contains(r.err, "see 'gprof-dl bench --help'");
	assert_string_equal(r.out, "");
	cmd_result_free(&r);
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
	expect_usage(BENCH(t, "--format", "csv"), "unknown format 'csv' (text, json or github)");
	expect_usage(BENCH(t, "--baseline"), "needs a value");
	expect_usage(BENCH(t, "--max-regression", "-1"), "invalid --max-regression '-1'");
	expect_usage(BENCH(t, "--max-regression", "100"), "invalid --max-regression '100'");
	expect_usage(BENCH(t, "--max-regression", "5%"), "invalid --max-regression '5%'");
	expect_usage(BENCH(t, "--min-ips", "0"), "invalid --min-ips '0'");
	expect_usage(BENCH(t, "--min-ips", "nan"), "invalid --min-ips 'nan'");
	expect_usage(BENCH(t, "--confidence", "100"), "invalid --confidence '100'");
	expect_usage(BENCH(t, "--confidence", "40"), "invalid --confidence '40'");
	expect_usage(BENCH(t, "--skip", "x"), "invalid --skip-steps 'x'");

	struct cmd_result r = BENCH("--help");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: gprof-dl bench FILE... [--baseline FILE]... [--max-regression PCT]");
	assert_string_equal(r.err, "");
	cmd_result_free(&r);
}

static void test_bad_files(void **state)
{
	(void)state;
	const char *missing = tb_path("missing.gpdl");
	struct cmd_result r = BENCH(missing);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	char want[700];
	snprintf(want, sizeof(want), "'%s'", missing);
	assert_contains(r.err, want);
	assert_string_equal(r.out, "");
	cmd_result_free(&r);

	/* no step: exit 1, naming the file, even pooled with one that has steps */
	const char *none = tb_perf_nosteps();
	snprintf(want, sizeof(want),
		 "gprof-dl: '%s': no training steps (ProfileStep ranges) to measure\n", none);
	r = BENCH(none);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	cmd_result_free(&r);
	r = BENCH(tb_perf_a(), none, "--format", "json");
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	cmd_result_free(&r);
}

static void test_text(void **state)
{
	(void)state;
	const char *a = tb_perf_a();
	struct cmd_result r = BENCH(a);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	/* the Perf Summary as the summary view prints it, then the spread of
	 * ips: steps of 400 and 500 ms, 2 steps/s and 2.5 (median 2.25, p90
	 * 2 + 0.9 * 0.5); 2 blocks of one step: se = sqrt(((1 - 2/0.9 * 0.4)^2 +
	 * (1 - 2/0.9 * 0.5)^2) / 2) / 0.45 = 0.24691..., t(0.975, 1) = 12.7062 */
	size_t len = strlen(tb_perf_a_text_s);
	assert_int_equal(strncmp(r.out, tb_perf_a_text_s, len), 0);
	assert_string_equal(r.out + len, "\nMeasured: ips 2.2222 steps/s (95% CI -0.9151 .. 5.3596), "
					 "median 2.2500, p90 2.4500, over 2 steps of 1 run\n");
	cmd_result_free(&r);

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
	cmd_result_free(&r);
}

/* ---- JSON ------------------------------------------------------------------ */

static void assert_stat(yajl_val v, double avg, double max, double min)
{
	assert_true(YAJL_IS_OBJECT(v));
	/* ips also has its spread (test_ips_spread) */
	size_t len = YAJL_GET_OBJECT(v)->len;
	assert_true(len == 3 || len == 10);
	assert_string_equal(YAJL_GET_OBJECT(v)->keys[0], "avg");
	assert_string_equal(YAJL_GET_OBJECT(v)->keys[1], "max");
	assert_string_equal(YAJL_GET_OBJECT(v)->keys[2], "min");
	assert_jnum(jkey(v, "avg"), avg);
	assert_jnum(jkey(v, "max"), max);
	assert_jnum(jkey(v, "min"), min);
}

static yajl_val bench_json(struct cmd_result *r, const char *const *args)
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
	static const char *const keys[] = {
		"schema",       "files",       "steps",      "skipped", "counted", "ips_unit",
		"time_unit",    "reader_ratio", "reader_cost", "batch_cost", "ips",   "runs",
		"min_ips",      "gate"};
	size_t n = sizeof(keys) / sizeof(keys[0]);
	assert_int_equal(YAJL_GET_OBJECT(doc)->len, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(YAJL_GET_OBJECT(doc)->keys[i], keys[i]);
	assert_string_equal(jstr(jkey(doc, "schema")), "gprof-dl-bench/1");
	assert_string_equal(jstr(jkey(doc, "time_unit")), "s");
}

static void test_json(void **state)
{
	(void)state;
	const char *a = tb_perf_a();
	struct cmd_result r;
	/* trace a, default skip; --time-unit does not change the JSON (seconds) */
	yajl_val doc = bench_json(&r, (const char *const[]){a, "--format", "json", "--time-unit",
							    "us", NULL});
	assert_keys(doc);
	yajl_val files = jkey(doc, "files");
	assert_int_equal(YAJL_GET_ARRAY(files)->len, 1);
	assert_string_equal(jstr(YAJL_GET_ARRAY(files)->values[0]), a);
	assert_jnum(jkey(doc, "steps"), 4);
	assert_jnum(jkey(doc, "skipped"), 2);
	assert_jnum(jkey(doc, "counted"), 2);
	assert_string_equal(jstr(jkey(doc, "ips_unit")), "steps/s");
	assert_jnum(jkey(doc, "reader_ratio"), 20.0);
	assert_stat(jkey(doc, "reader_cost"), 0.09, 0.1, 0.08);
	assert_stat(jkey(doc, "batch_cost"), 0.45, 0.5, 0.4);
	assert_stat(jkey(doc, "ips"), 2.0 / 0.9, 2.5, 2.0);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	/* 25 steps of 1..25 ms: the default skips 10; 11..25 ms counted */
	doc = bench_json(&r, (const char *const[]){tb_perf_long(), "--format=json", NULL});
	assert_jnum(jkey(doc, "steps"), 25);
	assert_jnum(jkey(doc, "skipped"), 10);
	assert_jnum(jkey(doc, "counted"), 15);
	assert_jnum(jkey(doc, "reader_ratio"), 0.0);
	assert_stat(jkey(doc, "batch_cost"), 0.018, 0.025, 0.011);
	assert_stat(jkey(doc, "ips"), 15 / 0.27, 1000.0 / 11, 40.0);
	yajl_tree_free(doc);
	cmd_result_free(&r);
}

/* a and b pooled (test_perf.c): 6 steps, 3 skipped, 3 counted. */
static void test_pooled(void **state)
{
	(void)state;
	const char *a = tb_perf_a(), *b = tb_perf_b();
	struct cmd_result r;
	yajl_val doc = bench_json(&r, (const char *const[]){a, b, "--format", "json", NULL});
	assert_keys(doc);
	yajl_val files = jkey(doc, "files");
	assert_int_equal(YAJL_GET_ARRAY(files)->len, 2);
	assert_string_equal(jstr(YAJL_GET_ARRAY(files)->values[0]), a);
	assert_string_equal(jstr(YAJL_GET_ARRAY(files)->values[1]), b);
	assert_jnum(jkey(doc, "steps"), 6);
	assert_jnum(jkey(doc, "skipped"), 3);
	assert_jnum(jkey(doc, "counted"), 3);
	assert_jnum(jkey(doc, "reader_ratio"), 100.0 * 280 / 1500);
	assert_stat(jkey(doc, "reader_cost"), 0.28 / 3, 0.1, 0.08);
	assert_stat(jkey(doc, "batch_cost"), 0.5, 0.6, 0.4);
	assert_stat(jkey(doc, "ips"), 2.0, 2.5, 1.0 / 0.6);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	r = BENCH(a, b);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "2 traces pooled: their counted steps are taken together.\n");
	assert_contains(r.out, "Steps: 6 ProfileStep ranges; 3 skipped");
	cmd_result_free(&r);
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
	struct cmd_result r;
	yajl_val doc = bench_json(&r, (const char *const[]){tb_perf_samples(1), "--skip-steps", "0",
							    "--format", "json", NULL});
	assert_string_equal(jstr(jkey(doc, "ips_unit")), "samples/s");
	assert_jnum(jkey(doc, "counted"), 3);
	assert_stat(jkey(doc, "ips"), 80 / 3.5, 32.0, 16.0);
	assert_stat(jkey(doc, "batch_cost"), 3.5 / 3, 2.0, 0.5);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	doc = bench_json(&r, (const char *const[]){tb_perf_samples(0), "--skip-steps", "0",
						   "--format", "json", NULL});
	assert_string_equal(jstr(jkey(doc, "ips_unit")), "steps/s");
	assert_jnum(jkey(doc, "counted"), 4);
	assert_stat(jkey(doc, "ips"), 1.0, 2.0, 0.5);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	r = BENCH(tb_perf_samples(1), "--skip-steps", "0");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "IPS Unit: samples/s\n");
	assert_contains(r.out, "ips                22.85714           32.00000           16.00000\n");
	cmd_result_free(&r);
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
	struct cmd_result r;
	yajl_val doc = bench_json(&r, (const char *const[]){path, "--skip-steps", "0", "--format",
							    "json", NULL});
	assert_jnum(jkey(doc, "steps"), 2);
	assert_jnum(jkey(doc, "counted"), 2);
	assert_jnum(jkey(doc, "reader_ratio"), 100.0 * 30 / 400);
	assert_stat(jkey(doc, "batch_cost"), 0.2, 0.3, 0.1);
	assert_stat(jkey(doc, "reader_cost"), 0.015, 0.03, 0.0);
	assert_stat(jkey(doc, "ips"), 2 / 0.4, 10.0, 1 / 0.3);
	yajl_tree_free(doc);
	cmd_result_free(&r);
}


/* ---- the gate ---------------------------------------------------------------- */


/* A run of n training steps back to back, each of 64 samples, lasting
 * mean_ms * slow +- sd_ms * slow (normal, from seed): the same spread
 * relative to the mean whatever the slowdown. Returns the path. */
static const char *gate_run(const char *name, unsigned n, double mean_ms, double sd_ms,
			    double slow, uint64_t seed)
{
	struct tb b;
	tb_open(&b, name, "h", 100, 0);
	tb_thread(&b, 0, 100, "main");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	struct trace_event_ext x = {.samples = 64};
	uint64_t t = 0;
	for (unsigned k = 0; k < n; k++) {
		double ms = (mean_ms + sd_ms * tb_gauss(&seed)) * slow;
		uint64_t dur = (uint64_t)(ms > 1 ? ms * 1e6 : 1e6);
		tb_ext(&b, 0, step, t, dur, &x);
		t += dur;
	}
	return tb_close(&b, t);
}

/* Copies a path from tb_close's rotating buffers. */
static char *keep(const char *path)
{
	char *p = strdup(path);
	assert_non_null(p);
	return p;
}

struct gate_runs {
	char *base[3], *noise[3], *slow[3], *fast[3];
};

/* 3 runs a side of 60 steps of 100 ms +- 10 ms (10% per step): the
 * baseline, a rerun of the same distribution (other seeds), the same 10%
 * slower (ips down to 1/1.1 = -9.09%), and 10% faster (steps 0.9x: +11.1%). */
static void gate_make(struct gate_runs *g)
{
	char name[64];
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "base%d.gpdl", i);
		g->base[i] = keep(gate_run(name, 60, 100, 10, 1.0, 1000 + i));
		snprintf(name, sizeof(name), "noise%d.gpdl", i);
		g->noise[i] = keep(gate_run(name, 60, 100, 10, 1.0, 2000 + i));
		snprintf(name, sizeof(name), "slow%d.gpdl", i);
		g->slow[i] = keep(gate_run(name, 60, 100, 10, 1.1, 3000 + i));
		snprintf(name, sizeof(name), "fast%d.gpdl", i);
		g->fast[i] = keep(gate_run(name, 60, 100, 10, 0.9, 4000 + i));
	}
}

static void gate_free(struct gate_runs *g)
{
	for (int i = 0; i < 3; i++) {
		free(g->base[i]);
		free(g->noise[i]);
		free(g->slow[i]);
		free(g->fast[i]);
	}
}

/* Runs bench with JSON out, whatever its status; the document parsed. */
static yajl_val gate_json(struct cmd_result *r, const char *const *args)
{
	*r = bench(args);
	char err[256];
	yajl_val doc = yajl_tree_parse(r->out, err, sizeof(err));
	if (!doc)
		fail_msg("exit %d, JSON does not parse: %s\n%s\n%s", r->status, err, r->out, r->err);
	return doc;
}

#define G3(g, side) (g).side[0], (g).side[1], (g).side[2]

/* A 10% slowdown fails the gate, with a message that says by how much,
 * against what and how sure; a rerun of the same distribution passes; a
 * speed-up is an improvement. The default --max-regression is 5%. */
static void test_gate_verdicts(void **state)
{
	(void)state;
	struct gate_runs g;
	gate_make(&g);
	struct cmd_result r;
	yajl_val doc = gate_json(&r, (const char *const[]){G3(g, slow), "--baseline", g.base[0],
							   "--baseline", g.base[1], "--baseline",
							   g.base[2], "--format", "json", NULL});
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "gprof-dl: ips regressed by ");
	char want[600];
	snprintf(want, sizeof(want), "against '%s' and 2 more: ", g.base[0]);
	assert_contains(r.err, want);
	assert_contains(r.err, "more than --max-regression 5% at 95% confidence\n");
	double pct = jnum(jpath(doc, "comparison", "change_pct"));
	double lo = jnum(jpath(doc, "comparison", "ci_low_pct"));
	double hi = jnum(jpath(doc, "comparison", "ci_high_pct"));
	/* the true change is -9.09%; the interval holds it and lies below -5% */
	if (!(pct > -12 && pct < -6.5 && lo < -9.09 && hi > -9.09 && hi < -5))
		fail_msg("10%% slower: change %.3f%%, interval %.3f .. %.3f", pct, lo, hi);
	assert_string_equal(jstr(jpath(doc, "comparison", "verdict")), "regression");
	assert_jnum(jpath(doc, "comparison", "max_regression_pct"), 5);
	assert_jnum(jpath(doc, "comparison", "level"), 0.95);
	assert_true(YAJL_IS_FALSE(jpath(doc, "gate", "pass")));
	yajl_val failed = jpath(doc, "gate", "failed");
	assert_int_equal(YAJL_GET_ARRAY(failed)->len, 1);
	assert_string_equal(jstr(YAJL_GET_ARRAY(failed)->values[0]), "max_regression");
	/* the message quotes the JSON's numbers */
	snprintf(want, sizeof(want), "ips regressed by %.2f%% (95%% CI %.2f%% to %.2f%%)", -pct, -hi,
		 -lo);
	assert_contains(r.err, want);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	/* the same slowdown passes when 15% is allowed: "slower" */
	doc = gate_json(&r, (const char *const[]){G3(g, slow), "--baseline", g.base[0], "--baseline",
						  g.base[1], "--baseline", g.base[2],
						  "--max-regression", "15", "--format", "json", NULL});
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_string_equal(jstr(jpath(doc, "comparison", "verdict")), "slower");
	assert_true(YAJL_IS_TRUE(jpath(doc, "gate", "pass")));
	yajl_tree_free(doc);
	cmd_result_free(&r);

	/* noise of the same spread: no significant change, exit 0 */
	doc = gate_json(&r, (const char *const[]){G3(g, noise), "--baseline", g.base[0], "--baseline",
						  g.base[1], "--baseline", g.base[2], "--format",
						  "json", NULL});
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	pct = jnum(jpath(doc, "comparison", "change_pct"));
	lo = jnum(jpath(doc, "comparison", "ci_low_pct"));
	hi = jnum(jpath(doc, "comparison", "ci_high_pct"));
	if (!(lo < 0 && hi > 0 && fabs(pct) < 3 && hi - lo < 8))
		fail_msg("rerun: change %.3f%%, interval %.3f .. %.3f", pct, lo, hi);
	assert_string_equal(jstr(jpath(doc, "comparison", "verdict")), "unchanged");
	yajl_tree_free(doc);
	cmd_result_free(&r);

	/* each rerun alone against each baseline alone: never a failure */
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			r = BENCH(g.noise[i], "--baseline", g.base[j]);
			if (r.status != 0)
				fail_msg("rerun %d against base %d: exit %d: %s", i, j, r.status, r.err);
			assert_contains(r.out, "Verdict: no significant change: ips ");
			cmd_result_free(&r);
		}

	/* 10% faster steps: +11.1% ips, an improvement */
	r = BENCH(G3(g, fast), "--baseline", g.base[0], "--baseline", g.base[1], "--baseline",
		  g.base[2]);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_contains(r.out, "Verdict: improvement: ips rose by ");
	cmd_result_free(&r);

	/* the text report of the failure */
	r = BENCH(G3(g, slow), "--baseline", g.base[0], "--baseline", g.base[1], "--baseline",
		  g.base[2]);
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "\nMeasured: ips ");
	snprintf(want, sizeof(want), "\nBaseline '%s' and 2 more: ips ", g.base[0]);
	assert_contains(r.out, want);
	assert_contains(r.out, "over 150 steps of 3 runs\nChange in ips: -");
	assert_contains(r.out, "\nVerdict: regression: ips fell by ");
	assert_contains(r.out, "more than the 5% allowed, at 95% confidence\n");
	cmd_result_free(&r);
	gate_free(&g);
}

/* Runs pooled on each side: every counted step of every run, the ips the
 * ratio of all samples to all time; the baseline's JSON gives back exactly
 * what its traces gave. */
static void test_gate_pooled_and_json_baseline(void **state)
{
	(void)state;
	struct gate_runs g;
	gate_make(&g);
	struct cmd_result r;
	yajl_val base = gate_json(&r, (const char *const[]){G3(g, base), "--format", "json", NULL});
	assert_int_equal(r.status, 0);
	char *saved = keep(tb_path("baseline.json"));
	FILE *f = fopen(saved, "w");
	assert_non_null(f);
	fputs(r.out, f);
	assert_int_equal(fclose(f), 0);
	cmd_result_free(&r);

	/* the runs: 3 of 50 counted steps, their batch_ns and 64 samples each,
	 * adding up to the ips */
	yajl_val runs = jkey(base, "runs");
	assert_int_equal(YAJL_GET_ARRAY(runs)->len, 3);
	double samples = 0, ns = 0;
	for (int i = 0; i < 3; i++) {
		yajl_val run = YAJL_GET_ARRAY(runs)->values[i];
		assert_string_equal(jstr(jkey(run, "file")), g.base[i]);
		yajl_val b = jkey(run, "batch_ns"), s = jkey(run, "samples");
		assert_int_equal(YAJL_GET_ARRAY(b)->len, 50);
		assert_int_equal(YAJL_GET_ARRAY(s)->len, 50);
		for (size_t k = 0; k < 50; k++) {
			assert_true(YAJL_IS_INTEGER(YAJL_GET_ARRAY(b)->values[k]));
			assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(s)->values[k]), 64);
			ns += (double)YAJL_GET_INTEGER(YAJL_GET_ARRAY(b)->values[k]);
			samples += 64;
		}
	}
	assert_jnum(jkey(base, "counted"), 150);
	assert_jnum(jpath(base, "ips", "avg"), samples * 1e9 / ns);
	double med = jnum(jpath(base, "ips", "median")), p90 = jnum(jpath(base, "ips", "p90"));
	assert_true(jnum(jpath(base, "ips", "min")) < med && med < p90 && p90 < jnum(jpath(base, "ips", "max")));
	assert_true(jnum(jpath(base, "ips", "ci_low")) < jnum(jpath(base, "ips", "avg")));
	assert_true(jnum(jpath(base, "ips", "ci_high")) > jnum(jpath(base, "ips", "avg")));
	/* blocks of floor(sqrt(50)) = 7 steps, 7 a run */
	assert_jnum(jpath(base, "ips", "blocks"), 21);
	assert_jnum(jpath(base, "ips", "level"), 0.95);
	assert_true(jnum(jpath(base, "ips", "between_runs_sd")) >= 0);
	assert_true(YAJL_IS_NULL(jkey(base, "min_ips")));
	assert_true(YAJL_IS_TRUE(jpath(base, "gate", "pass")));

	/* against the traces, and against the JSON: the same numbers */
	yajl_val by_traces = gate_json(&r, (const char *const[]){G3(g, slow), "--baseline", g.base[0],
								 "--baseline", g.base[1], "--baseline",
								 g.base[2], "--format", "json", NULL});
	assert_int_equal(r.status, 1);
	cmd_result_free(&r);
	yajl_val by_json = gate_json(&r, (const char *const[]){G3(g, slow), "--baseline", saved,
							       "--format", "json", NULL});
	assert_int_equal(r.status, 1);
	char want[600];
	snprintf(want, sizeof(want), "against '%s': ", saved);
	assert_contains(r.err, want);
	cmd_result_free(&r);
	static const char *const cmp[] = {"change_pct", "ci_low_pct", "ci_high_pct"};
	for (size_t i = 0; i < 3; i++)
		assert_jnum(jpath(by_json, "comparison", cmp[i]), jnum(jpath(by_traces, "comparison", cmp[i])));
	assert_jnum(jpath(by_json, "baseline", "runs"), 3);
	assert_jnum(jpath(by_json, "baseline", "counted"), 150);
	assert_jnum(jpath(jpath(by_json, "baseline", "ips"), "avg", NULL), jnum(jpath(base, "ips", "avg")));
	assert_jnum(jpath(jpath(by_traces, "baseline", "ips"), "median", NULL), med);
	yajl_tree_free(by_traces);
	yajl_tree_free(by_json);
	yajl_tree_free(base);
	free(saved);
	gate_free(&g);
}

/* --min-ips: a floor on the average ips, alone or with a baseline. */
static void test_gate_floor(void **state)
{
	(void)state;
	/* tb_perf_long: 25 steps of 1..25 ms, 15 counted: 15 / 0.27 s = 55.56 steps/s */
	const char *t = tb_perf_long();
	struct cmd_result r = BENCH(t, "--min-ips", "60");
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, "gprof-dl: ips 55.5556 steps/s is below --min-ips 60 (average "
				   "over 15 counted steps)\n");
	assert_contains(r.out, "\nFloor: ips 55.5556 steps/s is below --min-ips 60\n");
	cmd_result_free(&r);
	r = BENCH(t, "--min-ips", "55.5");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_contains(r.out, "\nFloor: ips 55.5556 steps/s meets --min-ips 55.5\n");
	cmd_result_free(&r);
	yajl_val doc = gate_json(&r, (const char *const[]){t, "--min-ips", "60", "--format", "json",
							   NULL});
	assert_int_equal(r.status, 1);
	assert_jnum(jkey(doc, "min_ips"), 60);
	assert_true(YAJL_IS_FALSE(jpath(doc, "gate", "pass")));
	yajl_val failed = jpath(doc, "gate", "failed");
	assert_int_equal(YAJL_GET_ARRAY(failed)->len, 1);
	assert_string_equal(jstr(YAJL_GET_ARRAY(failed)->values[0]), "min_ips");
	yajl_tree_free(doc);
	cmd_result_free(&r);
	/* a baseline that passes does not lift the floor */
	r = BENCH(t, "--baseline", t, "--min-ips", "60");
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "Verdict: no significant change: ips +0.00% (95% CI -");
	assert_one_line(r.err);
	cmd_result_free(&r);
}

/* --format github: the array CI benchmark actions read; bigger is better
 * for every entry. */
static void test_gate_github(void **state)
{
	(void)state;
	struct cmd_result r;
	yajl_val arr = gate_json(&r, (const char *const[]){tb_perf_long(), "--format", "github", NULL});
	assert_int_equal(r.status, 0);
	assert_true(YAJL_IS_ARRAY(arr));
	assert_int_equal(YAJL_GET_ARRAY(arr)->len, 3);
	static const char *const names[] = {"ips", "ips median", "ips p90"};
	/* 15 steps of 11..25 ms: per-step ips 1000/k, ascending from k = 25;
	 * median at 7 (k = 18), p90 at 0.9 * 14 = 12.6, between k = 13 and 12 */
	const double values[] = {15 / 0.27, 1000.0 / 18, 1000.0 / 13 + 0.6 * (1000.0 / 12 - 1000.0 / 13)};
	for (size_t i = 0; i < 3; i++) {
		yajl_val e = YAJL_GET_ARRAY(arr)->values[i];
		assert_string_equal(YAJL_GET_OBJECT(e)->keys[0], "name");
		assert_string_equal(jstr(jkey(e, "name")), names[i]);
		assert_string_equal(jstr(jkey(e, "unit")), "steps/s");
		assert_jnum(jkey(e, "value"), values[i]);
		assert_true(YAJL_IS_STRING(jkey(e, "extra")));
	}
	const char *range = jstr(jkey(YAJL_GET_ARRAY(arr)->values[0], "range"));
	assert_true(strncmp(range, "\u00b1 ", strlen("\u00b1 ")) == 0);
	assert_true(atof(range + strlen("\u00b1 ")) > 0);
	assert_contains(jstr(jkey(YAJL_GET_ARRAY(arr)->values[0], "extra")), "15 steps of 1 run; 95% CI ");
	yajl_tree_free(arr);
	cmd_result_free(&r);
}

static void expect_error(struct cmd_result r, const char *message)
{
	if (r.status != 1)
		fail_msg("exit %d, not 1: %s", r.status, r.err);
	assert_one_line(r.err);
	assert_contains(r.err, message);
	cmd_result_free(&r);
}

/* A baseline that cannot serve: one line naming it, exit 1. */
static void test_gate_bad_baselines(void **state)
{
	(void)state;
	const char *t = tb_perf_long();
	char want[700];
	const char *none = tb_perf_nosteps();
	snprintf(want, sizeof(want), "'%s': no training steps", none);
	expect_error(BENCH(t, "--baseline", none), want);
	const char *missing = tb_path("missing.json");
	snprintf(want, sizeof(want), "'%s'", missing);
	expect_error(BENCH(t, "--baseline", missing), want);

	char *path = keep(tb_path("bad.json"));
	static const struct {
		const char *text, *message;
	} bad[] = {
		{"{\"schema\": \"gprof-dl-bench/1\", \"ips_unit\": \"steps/s\"", "not valid JSON"},
		{"{\"schema\": \"gprof-dl-bench/9\"}", "schema 'gprof-dl-bench/9', this gprof-dl reads"},
		{"{\"schema\": \"gprof-dl-bench/1\", \"ips_unit\": \"steps/s\"}", "no \"runs\" array"},
		{"{\"schema\": \"gprof-dl-bench/1\", \"ips_unit\": \"hz\", \"runs\": []}",
		 "\"ips_unit\" is neither"},
		{"{\"schema\": \"gprof-dl-bench/1\", \"ips_unit\": \"steps/s\", \"runs\": [{\"batch_ns\": "
		 "[1, -2]}]}",
		 "runs[0], step 1: batch_ns is not a positive integer"},
		{"{\"schema\": \"gprof-dl-bench/1\", \"ips_unit\": \"samples/s\", \"runs\": [{\"batch_ns\": "
		 "[1, 2]}]}",
		 "runs[0] needs a \"samples\" array"},
		{"{\"schema\": \"gprof-dl-bench/1\", \"ips_unit\": \"steps/s\", \"runs\": []}",
		 "no counted steps in its runs"},
		/* a unit that is not the measured runs' */
		{"{\"schema\": \"gprof-dl-bench/1\", \"ips_unit\": \"samples/s\", \"runs\": [{\"batch_ns\": "
		 "[1, 2], \"samples\": [4, 4]}]}",
		 "counts ips in samples/s, the runs measured in steps/s"},
		/* one step: no interval to compare */
		{"{\"schema\": \"gprof-dl-bench/1\", \"ips_unit\": \"steps/s\", \"runs\": [{\"batch_ns\": "
		 "[1000]}]}",
		 "1 counted step; a comparison needs at least 2 on each side"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(bad[i].text, f);
		assert_int_equal(fclose(f), 0);
		expect_error(BENCH(t, "--baseline", path), bad[i].message);
	}
	/* a JSON that is not ours is tried as a trace (a chrome trace imports) */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"schema\": \"other\"}", f);
	assert_int_equal(fclose(f), 0);
	snprintf(want, sizeof(want), "'%s'", path);
	expect_error(BENCH(t, "--baseline", path), want);
	free(path);
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
		cmocka_unit_test(test_gate_verdicts),
		cmocka_unit_test(test_gate_pooled_and_json_baseline),
		cmocka_unit_test(test_gate_floor),
		cmocka_unit_test(test_gate_github),
		cmocka_unit_test(test_gate_bad_baselines),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
