/*
 * test_advise_steps.c - the rules of rules_steps.c on synthetic traces
 * (tracebuild.h), every number worked out here: input-bound just under and
 * just over its 5 % (the saving the mean reader_cost per step), the
 * DataLoader's workers and iterator as evidence; jitter on a loop with two
 * slow steps (which, by how much, what ran longer), and no finding on steady
 * loops with noise, over many seeds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/advise/advise.h"
#include "lib/analysis/advise/rules.h"
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1e6 /* ns */

static void assert_near(double x, double want, double tol)
{
	if (fabs(x - want) > tol)
		fail_msg("%.9g != %.9g (within %g)", x, want, tol);
}

/* rule r's findings on the trace at path, --skip-steps skip. */
static void run_rule(const struct adv_rule *r, const char *path, unsigned skip,
		     struct adv_list *out, struct adv_input *in, struct analysis *a)
{
	const char *paths[] = {path};
	tb_prepare(a, paths, 1);
	adv_input_init(in, a, NULL, paths, 1, skip);
	memset(out, 0, sizeof(*out));
	r->run(in, out);
}

static int has_evidence(const struct adv_finding *f, const char *needle)
{
	for (unsigned k = 0; k < f->nevidence; k++)
		if (strstr(f->evidence[k], needle))
			return 1;
	return 0;
}

static void assert_evidence(const struct adv_finding *f, const char *needle)
{
	if (!has_evidence(f, needle)) {
		for (unsigned k = 0; k < f->nevidence; k++)
			fprintf(stderr, "  evidence: %s\n", f->evidence[k]);
		fail_msg("no evidence line holds \"%s\"", needle);
	}
}

/* ---- input-bound ---------------------------------------------------------------- */

/* 20 steps of 100 ms back to back on thread 0 of pid 10, each with a
 * Dataloader range of reader_us at its start (on thread 1, the loader, when
 * loader_thread); workers child processes alive through the run; the
 * Dataloader ranges named name. */
static const char *input_trace(const char *file, uint64_t reader_us, unsigned workers,
			       const char *name, int loader_thread)
{
	struct tb b;
	tb_open(&b, file, "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	if (loader_thread)
		tb_thread(&b, 1, 11, "loader");
	for (unsigned w = 0; w < workers; w++)
		tb_process(&b, 100 + w, 10, 1 * TB_MS, 0, TRACE_EXIT_UNKNOWN, -1, -1);
	tb_process(&b, 200, 99, 0, 0, TRACE_EXIT_UNKNOWN, -1, -1); /* not a child of 10 */
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t data = tb_desc(&b, name, TRACE_EV_DATALOADER);
	uint32_t fwd = tb_desc(&b, "Forward", TRACE_EV_FORWARD);
	for (uint64_t k = 0; k < 20; k++) {
		uint64_t s = 10 * TB_MS + k * 100 * TB_MS;
		tb_range(&b, 0, step, s, 100 * TB_MS);
		if (reader_us)
			tb_range(&b, loader_thread ? 1 : 0, data, s, reader_us * TB_US);
		tb_range(&b, 0, fwd, s + 10 * TB_MS, 50 * TB_MS);
	}
	return tb_close(&b, 2100 * TB_MS);
}

/* 4.9 % of each step: under the threshold, nothing. */
static void test_input_bound_under(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_input_bound, input_trace("in-49.gpdl", 4900, 0, "Dataloader", 0), 0, &out,
		 &in, &a);
	assert_int_equal(in.steps, 20);
	assert_int_equal(in.step_ns, 100 * TB_MS);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
}

/* 6 % of each step, no worker process: a finding, saving 6 ms a step. */
static void test_input_bound_over(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_input_bound, input_trace("in-6.gpdl", 6000, 0, "Dataloader", 0), 0, &out,
		 &in, &a);
	assert_int_equal(out.n, 1);
	const struct adv_finding *f = &out.v[0];
	assert_ptr_equal(f->rule, &adv_rule_input_bound);
	assert_near(f->saving_ns, 6 * MS, 1);
	assert_near(f->share, 6.0, 1e-9);
	assert_int_equal(f->severity, ADV_MEDIUM);
	assert_non_null(strstr(f->what, "6.0 % of the step"));
	assert_non_null(strstr(f->what, "up to 6.00 ms per step"));
	assert_evidence(f, "Reader Ratio 6.00 % over 20 counted steps (threshold 5 %)");
	assert_evidence(f, "reader_cost per step: mean 6.00 ms, max 6.00 ms; batch_cost mean 100.00 ms");
	assert_evidence(f, "worker processes: none in the trace (num_workers=0");
	assert_false(has_evidence(f, "pin_memory")); /* no GPU: pinning is not the point */
	assert_non_null(strstr(f->try_this, "num_workers > 0"));
	assert_non_null(strstr(f->command, "gprof-dl summary "));
	assert_non_null(strstr(f->command, "in-6.gpdl --view perf --view steps --sorted-by dataloader"));
	adv_list_free(&out);
	analysis_free(&a);
}

/* The skip: the first 10 steps left out, 10 counted, the same figures. And
 * two workers on a loader thread: named, and the advice is more workers. */
static void test_input_bound_workers(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_input_bound,
		 input_trace("in-w2.gpdl", 20000, 2,
			     "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 1),
		 10, &out, &in, &a);
	assert_int_equal(in.steps, 10);
	assert_int_equal(out.n, 1);
	const struct adv_finding *f = &out.v[0];
	assert_near(f->saving_ns, 20 * MS, 1);
	assert_int_equal(f->severity, ADV_HIGH);
	assert_evidence(f, "Reader Ratio 20.00 % over 10 counted steps");
	assert_evidence(f, "DataLoader iterator: _MultiProcessingDataLoaderIter (num_workers > 0)");
	assert_evidence(f, "worker processes: 2 child process(es)");
	assert_evidence(f, "(num_workers=2,");
	assert_non_null(strstr(f->try_this, "more DataLoader workers"));
	adv_list_free(&out);
	analysis_free(&a);
}

/* An imported torch.profiler trace's iterator name says num_workers=0. */
static void test_input_bound_single_iter(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_input_bound,
		 input_trace("in-single.gpdl", 30000, 0,
			     "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0),
		 0, &out, &in, &a);
	assert_int_equal(out.n, 1);
	assert_evidence(&out.v[0], "DataLoader iterator: _SingleProcessDataLoaderIter (num_workers=0)");
	assert_near(out.v[0].saving_ns, 30 * MS, 1);
	adv_list_free(&out);
	analysis_free(&a);
}

/* No Dataloader range at all; no step at all: nothing said. */
static void test_input_bound_no_data(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_input_bound, input_trace("in-none.gpdl", 0, 0, "Dataloader", 0), 0, &out,
		 &in, &a);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
	run_rule(&adv_rule_input_bound, tb_perf_nosteps(), 0, &out, &in, &a);
	assert_int_equal(in.steps, 0);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
}

/* ---- jitter --------------------------------------------------------------------- */

/* n steps back to back on thread 0 of pid 20: step k lasts dur_ms[k], with
 * a Forward range of 5 ms and a Dataloader of 1 ms (plus data_extra_ms[k]
 * when given) at its start; the rest is Others. */
static const char *jitter_trace(const char *file, unsigned n, const double *dur_ms,
				const double *data_extra_ms)
{
	struct tb b;
	tb_open(&b, file, "h", 20, 0);
	tb_thread(&b, 0, 20, "main");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t data = tb_desc(&b, "Dataloader", TRACE_EV_DATALOADER);
	uint32_t fwd = tb_desc(&b, "Forward", TRACE_EV_FORWARD);
	uint64_t s = 0;
	for (unsigned k = 0; k < n; k++) {
		uint64_t d = (uint64_t)llround(dur_ms[k] * MS);
		uint64_t dl = (uint64_t)llround((1 + (data_extra_ms ? data_extra_ms[k] : 0)) * MS);
		tb_range(&b, 0, step, s, d);
		tb_range(&b, 0, data, s, dl);
		tb_range(&b, 0, fwd, s + dl, 5 * TB_MS);
		s += d;
	}
	return tb_close(&b, s + TB_MS);
}

/* Loading that stalls a few steps: 30 steps of 40 ms with 1 ms of
 * Dataloader (2.5 %), 4 of them (5, 12, 19, 26) 20 ms longer in loading:
 * Reader Ratio 110 / 1280 = 8.6 %, over 5 %, but the median step loads
 * 2.5 %: no input-bound finding; jitter names the steps (20 ms over their
 * neighbours, beyond 40 % of 40 ms; 80 / 30 = 2.67 ms a step). */
static void test_input_bound_stalls(void **state)
{
	(void)state;
	double dur[30], extra[30];
	for (unsigned k = 0; k < 30; k++) {
		extra[k] = k % 7 == 5 ? 20 : 0;
		dur[k] = 40 + extra[k];
	}
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_input_bound, jitter_trace("in-stalls.gpdl", 30, dur, extra), 0, &out, &in,
		 &a);
	assert_int_equal(in.steps, 30);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
	run_rule(&adv_rule_jitter, jitter_trace("in-stalls2.gpdl", 30, dur, extra), 0, &out, &in, &a);
	assert_int_equal(out.n, 1);
	assert_evidence(&out.v[0], "the slow steps, every 7 steps: 5 (60.00 ms, +20.00 ms), 12 "
				   "(60.00 ms, +20.00 ms), 19 (60.00 ms, +20.00 ms), 26 (60.00 ms, "
				   "+20.00 ms)");
	assert_near(out.v[0].saving_ns, 80.0 * MS / 30, 1);
	assert_non_null(strstr(out.v[0].try_this, "prefetch"));
	adv_list_free(&out);
	analysis_free(&a);
}

/* 20 steps of 10 ms, steps 9 and 19 of 30 ms (their extra 20 ms in
 * Others): 2 slow steps, saving (2 * 20 ms) / 20 = 2 ms a step. */
static void test_jitter_two_slow(void **state)
{
	(void)state;
	double dur[20];
	for (unsigned k = 0; k < 20; k++)
		dur[k] = k % 10 == 9 ? 30 : 10;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_jitter, jitter_trace("jit-2.gpdl", 20, dur, NULL), 0, &out, &in, &a);
	assert_int_equal(out.n, 1);
	const struct adv_finding *f = &out.v[0];
	assert_ptr_equal(f->rule, &adv_rule_jitter);
	assert_near(f->saving_ns, 2 * MS, 1);
	assert_near(f->share, 20.0, 1e-6);
	assert_int_equal(f->severity, ADV_HIGH);
	assert_non_null(strstr(f->what, "2 of 20 steps"));
	assert_evidence(f, "median step 10.00 ms, MAD 0.000 ms");
	assert_evidence(f, "the median of the 2 steps each side of it) by over 4.00 ms");
	assert_evidence(f, "the slow steps: 9 (30.00 ms, +20.00 ms), 19 (30.00 ms, +20.00 ms)");
	assert_evidence(f, "their excess over their neighbours: 40.00 ms in all, over 20 counted "
			   "steps");
	assert_evidence(f, "what ran longer: Others +20.00 ms (24.00 ms in the slow steps, median "
			   "4.00 ms)");
	assert_non_null(strstr(f->try_this, "every N steps"));
	adv_list_free(&out);
	analysis_free(&a);
}

/* Three slow steps at a fixed period, whose extra time is Dataloader: the
 * period is named and the advice is prefetching. The skip counts steps 10
 * to 39; the slow ones are 14, 24 and 34 (+8 ms in data loading). */
static void test_jitter_periodic_data(void **state)
{
	(void)state;
	double dur[40], extra[40];
	for (unsigned k = 0; k < 40; k++) {
		dur[k] = k % 10 == 4 ? 18 : 10;
		extra[k] = k % 10 == 4 ? 8 : 0;
	}
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_jitter, jitter_trace("jit-data.gpdl", 40, dur, extra), 10, &out, &in, &a);
	assert_int_equal(in.steps, 30);
	assert_int_equal(out.n, 1);
	const struct adv_finding *f = &out.v[0];
	assert_near(f->saving_ns, 3 * 8 * MS / 30, 1);
	assert_evidence(f, "the slow steps, every 10 steps: 14 (18.00 ms, +8.00 ms), 24 (18.00 ms, "
			   "+8.00 ms), 34 (18.00 ms, +8.00 ms)");
	assert_evidence(f, "what ran longer: Dataloader +8.00 ms (9.00 ms in the slow steps, "
			   "median 1.00 ms)");
	assert_non_null(strstr(f->try_this, "prefetch"));
	adv_list_free(&out);
	analysis_free(&a);
}

/* A uniform variate in [-1, 1) (splitmix64). */
static double uniform(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) / (double)(1ull << 52) - 1.0;
}

/* Steady loops: 20 steps of 10 ms +- 3 % (uniform), and of 10 ms with a
 * normal noise of sigma 1 %, 200 seeds each: no finding at all. */
static void test_jitter_noise_clean(void **state)
{
	(void)state;
	unsigned findings = 0;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		double dur[20];
		uint64_t st = seed;
		for (unsigned k = 0; k < 20; k++)
			dur[k] = 10 * (1 + (seed % 2 ? 0.03 * uniform(&st) : 0.01 * tb_gauss(&st)));
		struct analysis a;
		struct adv_input in;
		struct adv_list out;
		run_rule(&adv_rule_jitter, jitter_trace("jit-noise.gpdl", 20, dur, NULL), 0, &out, &in,
			 &a);
		assert_int_equal(in.steps, 20);
		findings += (unsigned)out.n;
		adv_list_free(&out);
		analysis_free(&a);
	}
	assert_int_equal(findings, 0);
}

/* A noisy loop: 3 MADs, not the 40 % floor, decides. Deviations (ms) with
 * median 0 and median absolute deviation 1.5 (MAD 2.2239 ms scaled, 3
 * MADs 6.6717 ms): step 2 at +4 ms is 6 ms over its neighbours (-2, -2,
 * -2, -1: median -2), beyond the floor (4 ms) but within 3 MADs; step 19
 * at +24 ms is 22 ms over its neighbours (2, 2); saving 22 / 20 = 1.1 ms
 * (11 %). */
static void test_jitter_mad_decides(void **state)
{
	(void)state;
	static const double dev[20] = {-2, -2, 4, -2, -1, -4, -1, -1, 0, 0,
				       0, 0, 1, 1, 1, 2, -2, 2, 2, 24};
	double dur[20];
	for (unsigned k = 0; k < 20; k++)
		dur[k] = 10 + dev[k];
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_jitter, jitter_trace("jit-mad.gpdl", 20, dur, NULL), 0, &out, &in, &a);
	assert_int_equal(out.n, 1);
	const struct adv_finding *f = &out.v[0];
	assert_non_null(strstr(f->what, "1 of 20 steps"));
	assert_evidence(f, "median step 10.00 ms, MAD 2.224 ms");
	assert_evidence(f, "by over 6.67 ms");
	assert_evidence(f, "the slow steps: 19 (34.00 ms, +22.00 ms)");
	assert_near(f->saving_ns, 1.1 * MS, 1);
	adv_list_free(&out);
	analysis_free(&a);
}

/* One slow step in 40 that costs 19 ms / 40 = 0.475 ms a step, 4.75 % of
 * the 10 ms median: beyond 3 MADs and 40 %, but under the 5 % floor of the
 * saving: nothing. At 20 ms over (5 %): a finding. */
static void test_jitter_small_saving(void **state)
{
	(void)state;
	double dur[40];
	for (unsigned k = 0; k < 40; k++)
		dur[k] = k == 20 ? 29 : 10;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_jitter, jitter_trace("jit-small.gpdl", 40, dur, NULL), 0, &out, &in, &a);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
	dur[20] = 30;
	run_rule(&adv_rule_jitter, jitter_trace("jit-small2.gpdl", 40, dur, NULL), 0, &out, &in, &a);
	assert_int_equal(out.n, 1);
	assert_near(out.v[0].saving_ns, 20 * MS / 40, 1);
	assert_evidence(&out.v[0], "the slow steps: 20 (30.00 ms, +20.00 ms)");
	adv_list_free(&out);
	analysis_free(&a);
}

/* A machine busy for a while: 30 steps of 10 ms, steps 10 to 15 at 14 ms
 * (a burst 40 % slower, its excess 6 x 4 ms / 30 = 0.8 ms a step, over the
 * 5 % bar against the median): each of them is within 40 % of its
 * neighbours, so nothing; a step of 20 ms inside the burst stands out of
 * it by 6 ms over its neighbours (14 ms), and alone costs 0.2 ms a step:
 * under the bar, nothing either; at 30 ms (16 ms over, 0.53 ms a step) it
 * is a finding that names it alone. */
static void test_jitter_burst(void **state)
{
	(void)state;
	double dur[30];
	for (unsigned k = 0; k < 30; k++)
		dur[k] = k >= 10 && k <= 15 ? 14 : 10;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_jitter, jitter_trace("jit-burst.gpdl", 30, dur, NULL), 0, &out, &in, &a);
	assert_int_equal(in.steps, 30);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
	dur[12] = 20;
	run_rule(&adv_rule_jitter, jitter_trace("jit-burst2.gpdl", 30, dur, NULL), 0, &out, &in, &a);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
	dur[12] = 30;
	run_rule(&adv_rule_jitter, jitter_trace("jit-burst3.gpdl", 30, dur, NULL), 0, &out, &in, &a);
	assert_int_equal(out.n, 1);
	assert_evidence(&out.v[0], "the slow steps: 12 (30.00 ms, +16.00 ms)");
	assert_near(out.v[0].saving_ns, 16.0 * MS / 30, 1);
	adv_list_free(&out);
	analysis_free(&a);
}

/* Fewer than 8 counted steps: nothing, however slow one of them is. */
static void test_jitter_too_few(void **state)
{
	(void)state;
	double dur[7] = {10, 10, 10, 50, 10, 10, 10};
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(&adv_rule_jitter, jitter_trace("jit-few.gpdl", 7, dur, NULL), 0, &out, &in, &a);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
}

/* Both rules' texts are filled in (--rules lists them). */
static void test_rules_described(void **state)
{
	(void)state;
	const struct adv_rule *r[] = {&adv_rule_input_bound, &adv_rule_jitter};
	for (unsigned k = 0; k < 2; k++) {
		assert_non_null(r[k]->run);
		assert_true(strlen(r[k]->title) > 10);
		assert_true(strlen(r[k]->definition) > 10);
		assert_true(strlen(r[k]->threshold) > 5);
		assert_true(strlen(r[k]->why) > 10);
	}
	assert_string_equal(adv_rule_input_bound.id, "input-bound");
	assert_string_equal(adv_rule_jitter.id, "jitter");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_input_bound_under),
		cmocka_unit_test(test_input_bound_over),
		cmocka_unit_test(test_input_bound_workers),
		cmocka_unit_test(test_input_bound_single_iter),
		cmocka_unit_test(test_input_bound_no_data),
		cmocka_unit_test(test_input_bound_stalls),
		cmocka_unit_test(test_jitter_two_slow),
		cmocka_unit_test(test_jitter_periodic_data),
		cmocka_unit_test(test_jitter_noise_clean),
		cmocka_unit_test(test_jitter_mad_decides),
		cmocka_unit_test(test_jitter_small_saving),
		cmocka_unit_test(test_jitter_burst),
		cmocka_unit_test(test_jitter_too_few),
		cmocka_unit_test(test_rules_described),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tb_cleanup();
	return rc;
}
