/*
 * test_cmd_job.c - `gprof-dl bench` and `gprof-dl diff` over a distributed
 * job, as a user runs them: the built executable (GPDL_BIN) on synthetic
 * rank files (tracebuild.h: tb_open_rank), and on one file that holds both
 * ranks in its process table (a launcher's run).
 *
 * The figures are worked out by hand below; the job's definitions are
 * jobperf.h's and gprof-dl-bench(1)'s.
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

#define MS TB_MS

static struct cmd_result bench(const char *const *args)
{
	return cmd_run(GPDL_BIN, "bench", args);
}

static struct cmd_result diff(const char *const *args)
{
	return cmd_run(GPDL_BIN, "diff", args);
}

#define BENCH(...) bench((const char *const[]){__VA_ARGS__, NULL})
#define DIFF(...) diff((const char *const[]){__VA_ARGS__, NULL})

/* Copies a path from tb_close's rotating buffers. */
static char *keep(const char *path)
{
	char *p = strdup(path);
	assert_non_null(p);
	return p;
}

/* ---- the job's traces ---------------------------------------------------------- */

/* What one rank does: n steps back to back, step k lasting dur[k] ns with
 * samples samples (0: the step does not say), a Dataloader range of
 * reader_ns at its start and a gloo:all_reduce of comm_ns at its end, both
 * on the rank's main thread. */
struct rank_spec {
	const uint64_t *dur;
	unsigned n;
	uint64_t samples, reader_ns, comm_ns;
};

struct descs {
	uint32_t step, loader, allreduce;
};

static struct descs make_descs(struct tb *b)
{
	return (struct descs){tb_desc(b, "ProfileStep", TRACE_EV_PROFILE_STEP),
			      tb_desc(b, "Dataloader", TRACE_EV_DATALOADER),
			      tb_desc(b, "gloo:all_reduce", TRACE_EV_COMMUNICATION)};
}

static uint64_t write_steps(struct tb *b, const struct descs *d, uint32_t thread, uint64_t t,
			    const struct rank_spec *s)
{
	for (unsigned k = 0; k < s->n; k++) {
		if (s->samples) {
			struct trace_event_ext x = {.samples = s->samples};
			tb_ext(b, thread, d->step, t, s->dur[k], &x);
		} else {
			tb_range(b, thread, d->step, t, s->dur[k]);
		}
		if (s->reader_ns)
			tb_range(b, thread, d->loader, t, s->reader_ns);
		if (s->comm_ns)
			tb_comm(b, thread, d->allreduce, t + s->dur[k] - s->comm_ns, s->comm_ns, "0", k,
				4096, 2);
		t += s->dur[k];
	}
	return t;
}

/* Rank r of a world of 2 in its own file (pid 100 + r, host "h"). */
static char *rank_file(const char *name, int32_t rank, const struct rank_spec *s)
{
	struct tb b;
	uint32_t pid = 100 + (uint32_t)rank;
	tb_open_rank(&b, name, "h", pid, 1000 * MS, rank, 2, 0);
	tb_thread(&b, 0, pid, "main");
	struct descs d = make_descs(&b);
	uint64_t end = write_steps(&b, &d, 0, 1000 * MS, s);
	return keep(tb_close(&b, end + MS));
}

/* Both ranks in one file, as one `gprof-dl run` of a launcher writes it: the
 * launcher (pid 50, no rank), rank 0 (pid 51) and rank 1 (pid 52), each rank
 * on its own thread. */
static char *merged_file(const char *name, const struct rank_spec *r0, const struct rank_spec *r1)
{
	struct tb b;
	tb_open(&b, name, "h", 50, 1000 * MS);
	tb_process(&b, 51, 50, 1000 * MS, 0, TRACE_EXIT_UNKNOWN, 0, 2);
	tb_process(&b, 52, 50, 1000 * MS, 0, TRACE_EXIT_UNKNOWN, 1, 2);
	tb_thread_of(&b, 0, 50, 50, "launcher");
	tb_thread_of(&b, 1, 51, 51, "main");
	tb_thread_of(&b, 2, 52, 52, "main");
	struct descs d = make_descs(&b);
	uint64_t e0 = write_steps(&b, &d, 1, 1000 * MS, r0);
	uint64_t e1 = write_steps(&b, &d, 2, 1000 * MS, r1);
	return keep(tb_close(&b, (e0 > e1 ? e0 : e1) + MS));
}

/*
 * The job worked out by hand (--skip-steps 0):
 *   rank 0: steps of 100, 100, 100, 100 ms, 32 samples each, Dataloader 20 ms
 *           and all_reduce 10 ms in each
 *   rank 1: steps of 120, 80, 150, 100, 90 ms, 32 samples each, Dataloader
 *           10 ms and all_reduce 5 ms in each
 * Both start at 1000 ms; rank 0's steps end at 1100, 1200, 1300, 1400,
 * rank 1's at 1120, 1200, 1350, 1450, 1540. Rank 0 counted 4 steps, rank 1
 * 5: the job has steps 0-3. A job step runs from the last rank's end of the
 * one before (the first from the first start) to the last rank's end of
 * it: 120, 80, 150, 100 ms = 450 ms, the job's wall time over them, with
 * 64 samples each: job ips = 256 / 0.45 s = 568.88889 samples/s; per job
 * step 533.33, 800, 426.67, 640 (median 586.67, p90 752). reader_cost of a
 * job step: the longer, 20 ms: Reader Ratio 80 / 450 = 17.778%.
 * Rank 0: 128 samples / 0.4 s = 320 samples/s; rank 1: 160 / 0.54 s =
 * 296.29630 (all five of its steps count for it), batch_cost avg 108 ms.
 */
static const uint64_t dur0[] = {100 * MS, 100 * MS, 100 * MS, 100 * MS};
static const uint64_t dur1[] = {120 * MS, 80 * MS, 150 * MS, 100 * MS, 90 * MS};
static const struct rank_spec spec0 = {dur0, 4, 32, 20 * MS, 10 * MS};
static const struct rank_spec spec1 = {dur1, 5, 32, 10 * MS, 5 * MS};

struct hand_job {
	char *r0, *r1, *merged;
};

static struct hand_job hand_job(void)
{
	return (struct hand_job){rank_file("t-0.gpdl", 0, &spec0), rank_file("t-1.gpdl", 1, &spec1),
				 merged_file("t-merged.gpdl", &spec0, &spec1)};
}

static void hand_job_free(struct hand_job *h)
{
	free(h->r0);
	free(h->r1);
	free(h->merged);
}

/* ---- JSON helpers -------------------------------------------------------------- */

static yajl_val parse(const struct cmd_result *r)
{
	char err[256];
	yajl_val doc = yajl_tree_parse(r->out, err, sizeof(err));
	if (!doc)
		fail_msg("exit %d, JSON does not parse: %s\n%s\n%s", r->status, err, r->out, r->err);
	return doc;
}

static yajl_val ok_json(struct cmd_result *r, struct cmd_result run)
{
	*r = run;
	if (r->status != 0)
		fail_msg("exit %d: %s", r->status, r->err);
	assert_string_equal(r->err, "");
	return parse(r);
}

static void assert_stat(yajl_val v, double avg, double max, double min)
{
	assert_jnum(jkey(v, "avg"), avg);
	assert_jnum(jkey(v, "max"), max);
	assert_jnum(jkey(v, "min"), min);
}

/* The job's figures, from files that hold it (hand_job above). */
static void assert_hand_job(yajl_val doc)
{
	assert_string_equal(jstr(jkey(doc, "schema")), "gprof-dl-bench/1");
	assert_jnum(jkey(doc, "steps"), 9);
	assert_jnum(jkey(doc, "skipped"), 0);
	assert_jnum(jkey(doc, "counted"), 4);
	assert_string_equal(jstr(jkey(doc, "ips_unit")), "samples/s");
	assert_jnum(jkey(doc, "reader_ratio"), 100.0 * 80 / 450);
	assert_stat(jkey(doc, "batch_cost"), 0.1125, 0.15, 0.08);
	assert_stat(jkey(doc, "reader_cost"), 0.02, 0.02, 0.02);
	yajl_val ips = jkey(doc, "ips");
	assert_stat(ips, 256 / 0.45, 800, 64 / 0.15);
	assert_jnum(jkey(ips, "median"), (64 / 0.12 + 640) / 2);
	assert_jnum(jkey(ips, "p90"), 640 + 0.7 * 160);
	/* 2 blocks of 2 job steps: 128 samples in 0.2 s and in 0.25 s; the
	 * ratio estimator's se and Student's t for 1 degree of freedom */
	double R = 256 / 0.45, e = 128 - R * 0.2;
	double se = sqrt(2 * e * e / 2) / 0.225, t = tan(M_PI * 0.475);
	assert_jnum(jkey(ips, "blocks"), 2);
	assert_jnum(jkey(ips, "ci_low"), R - t * se);
	assert_jnum(jkey(ips, "ci_high"), R + t * se);
	/* the job's steps, as one run of 2 ranks: what a baseline reads */
	yajl_val runs = jkey(doc, "runs");
	assert_int_equal(jlen(runs), 1);
	assert_jnum(jkey(jelem(runs, 0), "ranks"), 2);
	static const double batch[] = {120 * MS, 80 * MS, 150 * MS, 100 * MS};
	yajl_val b = jkey(jelem(runs, 0), "batch_ns"), s = jkey(jelem(runs, 0), "samples");
	assert_int_equal(jlen(b), 4);
	for (size_t k = 0; k < 4; k++) {
		assert_jnum(jelem(b, k), batch[k]);
		assert_jnum(jelem(s, k), 64);
	}
	/* each rank over its own counted steps */
	yajl_val ranks = jkey(doc, "ranks");
	assert_int_equal(jlen(ranks), 2);
	yajl_val r0 = jelem(ranks, 0), r1 = jelem(ranks, 1);
	assert_jnum(jkey(r0, "rank"), 0);
	assert_jnum(jkey(r0, "steps"), 4);
	assert_jnum(jkey(r0, "counted"), 4);
	assert_stat(jkey(r0, "ips"), 320, 320, 320);
	assert_stat(jkey(r0, "batch_cost"), 0.1, 0.1, 0.1);
	assert_stat(jkey(r0, "reader_cost"), 0.02, 0.02, 0.02);
	assert_jnum(jkey(r0, "communication"), 0.01);
	assert_jnum(jkey(r1, "rank"), 1);
	assert_jnum(jkey(r1, "steps"), 5);
	assert_jnum(jkey(r1, "skipped"), 0);
	assert_jnum(jkey(r1, "counted"), 5);
	assert_stat(jkey(r1, "ips"), 160 / 0.54, 32 / 0.08, 32 / 0.15);
	assert_stat(jkey(r1, "batch_cost"), 0.108, 0.15, 0.08);
	assert_jnum(jkey(r1, "reader_ratio"), 100.0 * 50 / 540);
	assert_jnum(jkey(r1, "communication"), 0.005);
	assert_int_equal(jlen(jkey(r1, "batch_ns")), 5);
	assert_int_equal(jlen(jkey(r1, "samples")), 5);
}

/* ---- bench: the job's figures ----------------------------------------------------- */

static void test_bench_job_json(void **state)
{
	(void)state;
	struct hand_job h = hand_job();
	struct cmd_result r;
	/* the rank files in any order: by rank */
	yajl_val doc = ok_json(&r, BENCH(h.r1, h.r0, "--skip-steps", "0", "--format", "json"));
	assert_hand_job(doc);
	yajl_val files = jkey(doc, "files");
	assert_int_equal(jlen(files), 2);
	assert_string_equal(jstr(jelem(files, 0)), h.r1);
	assert_string_equal(jstr(jkey(jelem(jkey(doc, "ranks"), 0), "file")), h.r0);
	assert_jnum(jkey(jelem(jkey(doc, "ranks"), 1), "pid"), 101);
	/* the keys a single trace's object has, in their order, and "ranks"
	 * after "runs": a reader of the old object finds what it knew */
	static const char *const keys[] = {
		"schema",    "files",        "steps",       "skipped",    "counted", "ips_unit",
		"time_unit", "reader_ratio", "reader_cost", "batch_cost", "ips",     "runs",
		"ranks",     "min_ips",      "gate"};
	assert_int_equal(YAJL_GET_OBJECT(doc)->len, sizeof(keys) / sizeof(keys[0]));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_string_equal(YAJL_GET_OBJECT(doc)->keys[i], keys[i]);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	/* one file holding both ranks in its process table: the same figures */
	doc = ok_json(&r, BENCH(h.merged, "--skip-steps", "0", "--format", "json"));
	assert_hand_job(doc);
	assert_jnum(jkey(jelem(jkey(doc, "ranks"), 0), "pid"), 51);
	assert_jnum(jkey(jelem(jkey(doc, "ranks"), 1), "pid"), 52);
	assert_string_equal(jstr(jkey(jelem(jkey(doc, "ranks"), 1), "file")), h.merged);
	yajl_tree_free(doc);
	cmd_result_free(&r);
	hand_job_free(&h);
}

static void test_bench_job_text(void **state)
{
	(void)state;
	struct hand_job h = hand_job();
	struct cmd_result r = BENCH(h.r0, h.r1, "--skip-steps", "0", "--time-unit", "ms");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	/* the job's Perf Summary */
	assert_contains(r.out, "----Perf Summary----");
	assert_contains(r.out, "reader_cost        20.00000           20.00000           20.00000\n");
	assert_contains(r.out, "batch_cost         112.50000          150.00000          80.00000\n");
	assert_contains(r.out, "ips                568.88889          800.00000          426.66667\n");
	assert_contains(r.out, "Reader Ratio: 17.778%\n");
	assert_contains(r.out, "Steps: 9 ProfileStep ranges of 2 ranks; 0 skipped (the first 0 of "
			       "each rank, at most half of its steps); 4 job steps counted.\n");
	assert_contains(r.out, "The ranks counted different steps (rank 0: 0-3, rank 1: 0-4): the "
			       "job has steps 0-3 (4), those every rank counted;");
	/* the ranks */
	const char *ranks = strstr(r.out, "-Ranks-");
	assert_non_null(ranks);
	assert_contains(ranks, "0       4        320.00000          100.00000          20.00000\n");
	assert_contains(ranks, "1       5        296.29630          108.00000          10.00000\n");
	assert_null(strstr(ranks, "left out"));
	/* the job's ips with its interval, last */
	double R = 256 / 0.45, e = 128 - R * 0.2;
	double se = sqrt(e * e) / 0.225, t = tan(M_PI * 0.475);
	char want[512];
	snprintf(want, sizeof(want),
		 "\nMeasured: job ips 568.89 samples/s (95%% CI %.2f .. %.2f), median 586.67, p90 "
		 "752.00, over 4 steps of 1 run (a job of 2 ranks)\n",
		 R - t * se, R + t * se);
	assert_contains(r.out, want);
	assert_true(strstr(r.out, want) > ranks);
	cmd_result_free(&r);

	/* the merged file: the launcher's part is left out, and said so */
	r = BENCH(h.merged, "--skip-steps", "0");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "ips                568.88889          800.00000          426.66667\n");
	assert_contains(r.out, "1 part of no rank (a launcher, or a trace of a run that was not "
			       "distributed) left out.\n");
	cmd_result_free(&r);

	/* the default skip, per rank: 2 of rank 0's 4 steps, 2 of rank 1's 5;
	 * job steps 150 and 100 ms from 100, 100 and 150, 100, 90 */
	r = BENCH(h.r0, h.r1, "--time-unit", "ms");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "batch_cost         125.00000          150.00000          100.00000\n");
	assert_contains(r.out, "Steps: 9 ProfileStep ranges of 2 ranks; 4 skipped (the first 10 of "
			       "each rank, at most half of its steps); 2 job steps counted.\n");
	assert_contains(r.out, "(rank 0: 2-3, rank 1: 2-4)");
	/* rank 1: 96 samples in 340 ms */
	assert_contains(r.out, "1       3        282.35294          113.33333          10.00000\n");
	cmd_result_free(&r);
	hand_job_free(&h);
}

/* A rank whose steps do not say their samples: the job and every rank count
 * in steps/s. Job steps 120, 80, 150, 100 ms: 4 / 0.45 s. */
static void test_bench_job_steps_per_second(void **state)
{
	(void)state;
	struct rank_spec nosamples = spec1;
	nosamples.samples = 0;
	char *r0 = rank_file("u-0.gpdl", 0, &spec0), *r1 = rank_file("u-1.gpdl", 1, &nosamples);
	struct cmd_result r;
	yajl_val doc = ok_json(&r, BENCH(r0, r1, "--skip-steps", "0", "--format", "json"));
	assert_string_equal(jstr(jkey(doc, "ips_unit")), "steps/s");
	assert_stat(jkey(doc, "ips"), 4 / 0.45, 12.5, 1 / 0.15);
	assert_stat(jkey(jelem(jkey(doc, "ranks"), 0), "ips"), 10, 10, 10);
	assert_stat(jkey(jelem(jkey(doc, "ranks"), 1), "ips"), 5 / 0.54, 12.5, 1 / 0.15);
	assert_null(yajl_tree_get(jelem(jkey(doc, "runs"), 0), (const char *[]){"samples", NULL},
				  yajl_t_any));
	yajl_tree_free(doc);
	cmd_result_free(&r);
	free(r0);
	free(r1);
}

static void test_bench_job_errors(void **state)
{
	(void)state;
	struct hand_job h = hand_job();
	/* a rank with no step: named, with its rank */
	static const uint64_t none[1] = {0};
	struct rank_spec empty = {none, 0, 0, 0, 0};
	char *r1 = rank_file("e-1.gpdl", 1, &empty);
	struct cmd_result r = BENCH(h.r0, r1);
	assert_int_equal(r.status, 1);
	char want[700];
	snprintf(want, sizeof(want),
		 "gprof-dl: '%s' (rank 1): no training steps (ProfileStep ranges) to measure\n", r1);
	assert_string_equal(r.err, want);
	assert_string_equal(r.out, "");
	cmd_result_free(&r);
	/* the same rank twice on one side */
	r = BENCH(h.r0, h.r1, h.merged);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "the same rank 0 in '");
	assert_contains(r.err, "the files of one side are one job");
	cmd_result_free(&r);
	/* a baseline run that says it was made by no rank */
	char *bad = keep(tb_path("bad-ranks.json"));
	FILE *f = fopen(bad, "w");
	assert_non_null(f);
	fputs("{\"schema\": \"gprof-dl-bench/1\", \"ips_unit\": \"samples/s\", \"runs\": "
	      "[{\"ranks\": 0, \"batch_ns\": [1, 2], \"samples\": [4, 4]}]}",
	      f);
	assert_int_equal(fclose(f), 0);
	r = BENCH(h.r0, h.r1, "--baseline", bad);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "runs[0]: \"ranks\" is not a positive integer");
	cmd_result_free(&r);
	free(bad);
	free(r1);
	hand_job_free(&h);
}

/* ---- bench: the gate on the job ---------------------------------------------------- */


#define GATE_STEPS 60

/* A synchronous job of 2 ranks, 60 steps of 64 samples a rank: the steps'
 * common pace is 100 ms +- 5 ms (normal, from seed), rank 0 takes it as it
 * is and rank 1 slow1 times it. Writes prefix-0.gpdl and prefix-1.gpdl. */
static void gate_job(char *out[2], const char *prefix, double slow1, uint64_t seed)
{
	uint64_t d[2][GATE_STEPS];
	for (unsigned k = 0; k < GATE_STEPS; k++) {
		double ms = 100 + 5 * tb_gauss(&seed);
		d[0][k] = (uint64_t)(ms * 1e6);
		d[1][k] = (uint64_t)(ms * slow1 * 1e6);
	}
	char name[64];
	for (int r = 0; r < 2; r++) {
		struct rank_spec s = {d[r], GATE_STEPS, 64, 0, 0};
		snprintf(name, sizeof(name), "%s-%d.gpdl", prefix, r);
		out[r] = rank_file(name, r, &s);
	}
}

static void free2(char *p[2])
{
	free(p[0]);
	free(p[1]);
}

static char *save(const char *name, const char *text)
{
	char *path = keep(tb_path(name));
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Baseline: a balanced job (rank 1 1% faster than rank 0). Current: rank 1
 * 12% slower per step, rank 0 unchanged: each job step lasts rank 1's, the
 * job's ips falls by 1 - 1/1.12 = 10.7% (other seeds: another run). The
 * gate fails it, and passes a rerun of the balanced job. */
static void test_gate_job(void **state)
{
	(void)state;
	char *base[2], *slow[2], *rerun[2], *rerun2[2];
	gate_job(base, "gb", 0.99, 11);
	gate_job(slow, "gs", 1.12, 22);
	gate_job(rerun, "gr", 0.99, 33);
	gate_job(rerun2, "gq", 0.99, 44);
	struct cmd_result r = BENCH(slow[0], slow[1], "--baseline", base[0], "--baseline", base[1],
				    "--format", "json");
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	char want[700];
	snprintf(want, sizeof(want), "gprof-dl: job ips regressed by ");
	assert_contains(r.err, want);
	snprintf(want, sizeof(want), "against '%s' and 1 more: ", base[0]);
	assert_contains(r.err, want);
	assert_contains(r.err, "more than --max-regression 5% at 95% confidence\n");
	yajl_val doc = parse(&r);
	double pct = jnum(jpath(doc, "comparison", "change_pct"));
	double lo = jnum(jpath(doc, "comparison", "ci_low_pct"));
	double hi = jnum(jpath(doc, "comparison", "ci_high_pct"));
	if (!(pct > -14 && pct < -7.5 && lo < -10.7 && hi < -5))
		fail_msg("one rank 12%% slower: change %.3f%%, interval %.3f .. %.3f", pct, lo, hi);
	assert_string_equal(jstr(jpath(doc, "comparison", "verdict")), "regression");
	assert_true(YAJL_IS_FALSE(jpath(doc, "gate", "pass")));
	/* the baseline is one job: one run of 50 job steps */
	assert_jnum(jpath(doc, "baseline", "runs"), 1);
	assert_jnum(jpath(doc, "baseline", "counted"), 50);
	/* rank 1 is the slow one: its ips is 1/1.12 of rank 0's */
	yajl_val ranks = jkey(doc, "ranks");
	double ratio = jnum(jpath(jelem(ranks, 1), "ips", "avg")) / jnum(jpath(jelem(ranks, 0), "ips", "avg"));
	if (fabs(ratio - 1 / 1.12) > 1e-4)
		fail_msg("rank 1 / rank 0 ips %.6f, not 1/1.12", ratio);
	/* the message quotes the JSON's numbers */
	snprintf(want, sizeof(want), "job ips regressed by %.2f%% (95%% CI %.2f%% to %.2f%%)", -pct,
		 -hi, -lo);
	assert_contains(r.err, want);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	/* the text report says it of the job */
	r = BENCH(slow[0], slow[1], "--baseline", base[0], "--baseline", base[1]);
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "\nMeasured: job ips ");
	assert_contains(r.out, "over 50 steps of 1 run (a job of 2 ranks)\nBaseline '");
	assert_contains(r.out, "\nChange in job ips: -");
	assert_contains(r.out, "\nVerdict: regression: job ips fell by ");
	cmd_result_free(&r);

	/* an unchanged job passes */
	doc = ok_json(&r, BENCH(rerun[0], rerun[1], "--baseline", base[0], "--baseline", base[1],
				"--format", "json"));
	assert_string_equal(jstr(jpath(doc, "comparison", "verdict")), "unchanged");
	assert_true(YAJL_IS_TRUE(jpath(doc, "gate", "pass")));
	yajl_tree_free(doc);
	cmd_result_free(&r);

	/* the baseline's JSON, written from the job, compares job to job: the
	 * same numbers as its traces */
	yajl_val bdoc = ok_json(&r, BENCH(base[0], base[1], "--format", "json"));
	char *bjson = save("gate-base.json", r.out);
	cmd_result_free(&r);
	r = BENCH(slow[0], slow[1], "--baseline", base[0], "--baseline", base[1], "--format", "json");
	yajl_val by_traces = parse(&r);
	cmd_result_free(&r);
	r = BENCH(slow[0], slow[1], "--baseline", bjson, "--format", "json");
	assert_int_equal(r.status, 1);
	snprintf(want, sizeof(want), "against '%s': ", bjson);
	assert_contains(r.err, want);
	yajl_val by_json = parse(&r);
	cmd_result_free(&r);
	static const char *const cmp[] = {"change_pct", "ci_low_pct", "ci_high_pct"};
	for (size_t i = 0; i < 3; i++)
		assert_jnum(jpath(by_json, "comparison", cmp[i]), jnum(jpath(by_traces, "comparison", cmp[i])));
	assert_jnum(jpath(jpath(by_json, "baseline", "ips"), "avg", NULL), jnum(jpath(bdoc, "ips", "avg")));
	yajl_tree_free(by_traces);
	yajl_tree_free(by_json);

	/* several runs of the job as a baseline: each run's JSON */
	yajl_tree_free(ok_json(&r, BENCH(rerun2[0], rerun2[1], "--format", "json")));
	char *bjson2 = save("gate-base2.json", r.out);
	cmd_result_free(&r);
	r = BENCH(rerun[0], rerun[1], "--baseline", bjson, "--baseline", bjson2);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "ips ");
	assert_contains(r.out, "over 100 steps of 2 runs (jobs of 2 ranks)\n");
	assert_contains(r.out, "Verdict: no significant change: job ips ");
	cmd_result_free(&r);
	/* ... and not their traces: the same rank twice */
	r = BENCH(rerun[0], rerun[1], "--baseline", base[0], "--baseline", base[1], "--baseline",
		  rerun2[0], "--baseline", rerun2[1]);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "the same rank 0 in '");
	assert_contains(r.err, "compared through their JSON");
	cmd_result_free(&r);

	/* the floor applies to the job's ips */
	r = BENCH(slow[0], slow[1], "--min-ips", "100000");
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "gprof-dl: job ips ");
	assert_contains(r.err, " samples/s is below --min-ips 100000 (average over 50 counted job "
			       "steps)\n");
	assert_contains(r.out, "\nFloor: job ips ");
	cmd_result_free(&r);

	/* github: the job's figure */
	yajl_val arr = ok_json(&r, BENCH(base[0], base[1], "--format", "github"));
	assert_int_equal(jlen(arr), 3);
	assert_string_equal(jstr(jkey(jelem(arr, 0), "name")), "ips");
	assert_jnum(jkey(jelem(arr, 0), "value"), jnum(jpath(bdoc, "ips", "avg")));
	assert_contains(jstr(jkey(jelem(arr, 0), "extra")), "50 steps of a job of 2 ranks; 95% CI ");
	assert_jnum(jkey(jelem(arr, 1), "value"), jnum(jpath(bdoc, "ips", "median")));
	yajl_tree_free(arr);
	cmd_result_free(&r);

	yajl_tree_free(bdoc);
	free(bjson);
	free(bjson2);
	free2(base);
	free2(slow);
	free2(rerun);
	free2(rerun2);
}

/* ---- diff of two jobs ---------------------------------------------------------------- */

/*
 * A: both ranks 4 steps of 100 ms, 32 samples, all_reduce 10 ms a step.
 * B: both ranks 4 steps of 120 ms; rank 0's all_reduce 30 ms a step (it
 * waits for rank 1), rank 1's 10 ms. --skip-steps 0:
 *   rank 0: step 100 -> 120 ms (+20%), ips 320 -> 266.67 (-16.67%), comm 10 -> 30 ms
 *   rank 1: step 100 -> 120 ms, ips 320 -> 266.67, comm 10 -> 10 ms
 *   job:    step 100 -> 120 ms, ips 640 -> 533.33 (-16.67%)
 */
static const uint64_t d100[] = {100 * MS, 100 * MS, 100 * MS, 100 * MS};
static const uint64_t d120[] = {120 * MS, 120 * MS, 120 * MS, 120 * MS};

static void assert_diff_row(yajl_val row, const char *name, const char *status, double step_a,
			    double step_b, double ips_a, double ips_b, double comm_a, double comm_b)
{
	assert_string_equal(jstr(jkey(row, "name")), name);
	assert_string_equal(jstr(jkey(row, "status")), status);
	assert_jnum(jkey(row, "steps_a"), 4);
	assert_jnum(jkey(row, "steps_b"), 4);
	assert_jnum(jkey(row, "step_a_ns"), step_a);
	assert_jnum(jkey(row, "step_b_ns"), step_b);
	assert_jnum(jkey(row, "step_delta_ns"), step_b - step_a);
	assert_jnum(jkey(row, "step_delta_pct"), 100 * (step_b - step_a) / step_a);
	assert_jnum(jkey(row, "ips_a"), ips_a);
	assert_jnum(jkey(row, "ips_b"), ips_b);
	assert_jnum(jkey(row, "ips_delta"), ips_b - ips_a);
	assert_jnum(jkey(row, "ips_delta_pct"), 100 * (ips_b - ips_a) / ips_a);
	if (comm_a < 0) {
		assert_true(YAJL_IS_NULL(jkey(row, "comm_a")));
		assert_true(YAJL_IS_NULL(jkey(row, "comm_delta")));
		return;
	}
	assert_jnum(jkey(row, "comm_a_ns"), comm_a);
	assert_jnum(jkey(row, "comm_b_ns"), comm_b);
	assert_jnum(jkey(row, "comm_delta_ns"), comm_b - comm_a);
}

static void test_diff_jobs(void **state)
{
	(void)state;
	struct rank_spec a = {d100, 4, 32, 0, 10 * MS};
	struct rank_spec b0 = {d120, 4, 32, 0, 30 * MS}, b1 = {d120, 4, 32, 0, 10 * MS};
	char *a0 = rank_file("da-0.gpdl", 0, &a), *a1 = rank_file("da-1.gpdl", 1, &a);
	char *bb0 = rank_file("db-0.gpdl", 0, &b0), *bb1 = rank_file("db-1.gpdl", 1, &b1);
	char *am = merged_file("da-m.gpdl", &a, &a), *bm = merged_file("db-m.gpdl", &b0, &b1);
	struct cmd_result r;
	yajl_val doc = ok_json(&r, DIFF("--a", a0, a1, "--b", bb0, bb1, "--skip-steps", "0",
					"--format", "json"));
	/* the sides: each a job of 2 ranks, 8 steps (both ranks') */
	char name[1100];
	snprintf(name, sizeof(name), "%s, %s", a0, a1);
	assert_string_equal(jstr(jpath(doc, "a", "file")), name);
	assert_jnum(jpath(doc, "a", "ranks"), 2);
	assert_jnum(jpath(doc, "a", "steps"), 8);
	assert_int_equal(jlen(jpath(doc, "b", "files")), 2);
	assert_string_equal(jstr(jelem(jpath(doc, "b", "files"), 1)), bb1);
	/* the ranks, then the job */
	const char *path[] = {"tables", "ranks", "sections", NULL};
	yajl_val sections = yajl_tree_get(doc, path, yajl_t_array);
	assert_non_null(sections);
	yajl_val rows = jkey(jelem(sections, 0), "rows");
	assert_int_equal(jlen(rows), 3);
	assert_diff_row(jelem(rows, 0), "rank 0", "changed", 100 * MS, 120 * MS, 320, 128 / 0.48,
			10 * MS, 30 * MS);
	assert_diff_row(jelem(rows, 1), "rank 1", "changed", 100 * MS, 120 * MS, 320, 128 / 0.48,
			10 * MS, 10 * MS);
	assert_diff_row(jelem(rows, 2), "job", "changed", 100 * MS, 120 * MS, 640, 256 / 0.48, -1, -1);
	/* the tables come first, then the views over each whole job */
	yajl_val tables = jkey(doc, "tables");
	assert_string_equal(YAJL_GET_OBJECT(tables)->keys[0], "ranks");
	assert_string_equal(YAJL_GET_OBJECT(tables)->keys[1], "model");
	/* the Model view over both ranks: ProfileStep per step of a rank,
	 * 100 -> 120 ms */
	const char *mpath[] = {"tables", "model", "sections", NULL};
	yajl_val mrows = jkey(jelem(yajl_tree_get(doc, mpath, yajl_t_array), 0), "rows");
	int seen = 0;
	for (size_t i = 0; i < jlen(mrows); i++) {
		yajl_val row = jelem(mrows, i);
		if (strcmp(jstr(jkey(row, "name")), "ProfileStep") != 0)
			continue;
		assert_jnum(jkey(row, "calls_a"), 8);
		assert_jnum(jkey(row, "cpu_a_ns"), 100 * MS);
		assert_jnum(jkey(row, "cpu_b_ns"), 120 * MS);
		seen = 1;
	}
	assert_true(seen);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	/* merged files, A B as for two traces: the same ranks table */
	doc = ok_json(&r, DIFF(am, bm, "--skip-steps", "0", "--format", "json", "--view", "model"));
	sections = yajl_tree_get(doc, path, yajl_t_array);
	rows = jkey(jelem(sections, 0), "rows");
	assert_int_equal(jlen(rows), 3);
	assert_diff_row(jelem(rows, 0), "rank 0", "changed", 100 * MS, 120 * MS, 320, 128 / 0.48,
			10 * MS, 30 * MS);
	assert_diff_row(jelem(rows, 2), "job", "changed", 100 * MS, 120 * MS, 640, 256 / 0.48, -1, -1);
	assert_jnum(jpath(doc, "a", "ranks"), 2);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	/* text: the first line, then the Ranks Compared table (its full layout) */
	r = DIFF("--a", a0, a1, "--b", bb0, bb1, "--skip-steps", "0", "--view", "model", "--wide");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	char head[2400];
	snprintf(head, sizeof(head),
		 "Comparing A: '%s, %s' (a job of 2 ranks, 8 steps) with B: '%s, %s' (a job of 2 "
		 "ranks, 8 steps); times per step\n\n",
		 a0, a1, bb0, bb1);
	assert_int_equal(strncmp(r.out, head, strlen(head)), 0);
	assert_contains(r.out, "Ranks Compared");
	assert_contains(r.out, "rank 0      changed    4 / 4          100.00 / 120.00 / 20.00 / 20.00    ");
	assert_contains(r.out, "320.0000 / 266.6667 / -53.3333 / -16.67");
	assert_contains(r.out, "10.00 / 30.00 / 20.00 / 200.00\n");
	assert_contains(r.out, "job         changed    4 / 4          100.00 / 120.00 / 20.00 / 20.00    "
			       "640.0000 / 533.3333 / -106.6667 / -16.67    - / - / - / -\n");
	assert_true(strstr(r.out, "Ranks Compared") < strstr(r.out, "Model Summary"));
	cmd_result_free(&r);

	/* the same job on both sides: every row the same */
	doc = ok_json(&r, DIFF("--a", a0, a1, "--b", a1, a0, "--format", "json", "--view", "model"));
	rows = jkey(jelem(yajl_tree_get(doc, path, yajl_t_array), 0), "rows");
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(jstr(jkey(jelem(rows, i), "status")), "same");
	yajl_tree_free(doc);
	cmd_result_free(&r);

	/* a job against one trace: no ranks table, the views as for traces */
	const char *plain = tb_diff_trace("plain.gpdl", 300, 3, 10 * MS);
	doc = ok_json(&r, DIFF(am, plain, "--format", "json", "--view", "model"));
	assert_null(yajl_tree_get(doc, path, yajl_t_any));
	assert_jnum(jpath(doc, "a", "ranks"), 2);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	free(a0);
	free(a1);
	free(bb0);
	free(bb1);
	free(am);
	free(bm);
}

/* --a and --b: each file follows its side's option. */
static void test_diff_usage(void **state)
{
	(void)state;
	static const struct {
		const char *args[6];
		const char *message;
	} bad[] = {
		{{"x.gpdl", "--a", "y.gpdl", "--b", "z.gpdl", NULL},
		 "gprof-dl: 'x.gpdl' is given before --a or --b (with --a and --b, each file follows "
		 "the option of its side)\n"},
		{{"--a", "y.gpdl", "w.gpdl", NULL}, "gprof-dl: no files given for side B (--b FILE...)\n"},
		{{"--b", "y.gpdl", NULL}, "gprof-dl: no files given for side A (--a FILE...)\n"},
		{{"--a", NULL}, "gprof-dl: option '--a' needs a value\n"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cmd_result r = diff(bad[i].args);
		assert_int_equal(r.status, 2);
		assert_int_equal(strncmp(r.err, bad[i].message, strlen(bad[i].message)), 0);
		assert_contains(r.err, "see 'gprof-dl diff --help'");
		assert_string_equal(r.out, "");
		cmd_result_free(&r);
	}
	struct cmd_result r = DIFF("--help");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "gprof-dl diff --a FILE... --b FILE... [options]");
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bench_job_json),
		cmocka_unit_test(test_bench_job_text),
		cmocka_unit_test(test_bench_job_steps_per_second),
		cmocka_unit_test(test_bench_job_errors),
		cmocka_unit_test(test_gate_job),
		cmocka_unit_test(test_diff_jobs),
		cmocka_unit_test(test_diff_usage),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
