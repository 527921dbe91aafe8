/*
 * test_advise_gc.c - the gc-pauses rule (rules_gc.c) on synthetic traces
 * (tracebuild.h), every number worked out here: collections on the step's
 * thread clipped to the steps, counted by generation where they begin, a
 * collection inside another counted once; other threads' collections, a
 * UserDefined range of the same name and an unknown generation left out;
 * just under the 5 %, and one long pause alone (under 5 % without its step).
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

static void run_rule(const char *path, unsigned skip, struct adv_list *out, struct adv_input *in,
		     struct analysis *a)
{
	const char *paths[] = {path};
	tb_prepare(a, paths, 1);
	adv_input_init(in, a, NULL, paths, 1, skip);
	memset(out, 0, sizeof(*out));
	adv_rule_gc_pauses.run(in, out);
}

static void assert_evidence(const struct adv_finding *f, const char *line)
{
	for (unsigned k = 0; k < f->nevidence; k++)
		if (strcmp(f->evidence[k], line) == 0)
			return;
	for (unsigned k = 0; k < f->nevidence; k++)
		fprintf(stderr, "  evidence: %s\n", f->evidence[k]);
	fail_msg("no evidence line \"%s\"", line);
}

/* 20 steps of 100 ms back to back on thread 0 (pid 10), from 10 ms. In each:
 * a generation-0 collection of 0.5 ms at +10 ms. In steps 3, 7, 11, 15 and
 * 19 (every == 4) a generation-2 one of gen2_ms at +40 ms; with every == 0,
 * one of gen2_ms in step 5 only. Also: a generation-1 collection of 2 ms
 * across the end of step 2 (1 ms in 2, 1 ms in 3); inside step 7's
 * generation 2, a generation 0 of 1 ms (counted with it); on thread 1 a
 * generation 1 of 50 ms in step 0 (another thread: not the step's); on
 * thread 0 a UserDefined "Python GC (generation 2)" of 40 ms in step 5 and
 * a PythonOp "Python GC (generation 7)" of 5 ms in step 6 (neither is a
 * collection). */
static const char *gc_trace(const char *file, double gen2_ms, unsigned every)
{
	struct tb b;
	tb_open(&b, file, "h", 10, 0);
	tb_thread(&b, 0, 10, "MainThread");
	tb_thread(&b, 1, 11, "other");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t g0 = tb_desc(&b, "Python GC (generation 0)", TRACE_EV_PYTHON_OP);
	uint32_t g1 = tb_desc(&b, "Python GC (generation 1)", TRACE_EV_PYTHON_OP);
	uint32_t g2 = tb_desc(&b, "Python GC (generation 2)", TRACE_EV_PYTHON_OP);
	uint32_t g7 = tb_desc(&b, "Python GC (generation 7)", TRACE_EV_PYTHON_OP);
	uint32_t user = tb_desc(&b, "Python GC (generation 2)", TRACE_EV_USER_DEFINED);
	uint64_t g2_ns = (uint64_t)(gen2_ms * TB_MS);
	for (uint64_t k = 0; k < 20; k++) {
		uint64_t s = 10 * TB_MS + k * 100 * TB_MS;
		tb_range(&b, 0, step, s, 100 * TB_MS);
		tb_range(&b, 0, g0, s + 10 * TB_MS, 500 * TB_US);
		if ((every && k % every == every - 1) || (!every && k == 5))
			tb_range(&b, 0, g2, s + 40 * TB_MS, g2_ns);
		if (k == 7)
			tb_range(&b, 0, g0, s + 41 * TB_MS, 1 * TB_MS);
		if (k == 2)
			tb_range(&b, 0, g1, s + 99 * TB_MS, 2 * TB_MS);
		if (k == 0)
			tb_range(&b, 1, g1, s + 20 * TB_MS, 50 * TB_MS);
		if (k == 5)
			tb_range(&b, 0, user, s + 50 * TB_MS, 40 * TB_MS);
		if (k == 6)
			tb_range(&b, 0, g7, s + 50 * TB_MS, 5 * TB_MS);
	}
	return tb_close(&b, 2100 * TB_MS);
}

/* Generation 2 of 30 ms every 4th step: 20 x 0.5 + 2 + 5 x 30 = 162 ms of
 * 2000 ms, 8.1 %; without step 3 (31.5 ms): 130.5 of 1900, 6.9 %. */
static void test_gc_fires(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(gc_trace("gc-30.gpdl", 30, 4), 0, &out, &in, &a);
	assert_int_equal(in.steps, 20);
	assert_int_equal(out.n, 1);
	const struct adv_finding *f = &out.v[0];
	assert_ptr_equal(f->rule, &adv_rule_gc_pauses);
	assert_near(f->saving_ns, 8.1 * MS, 1);
	assert_near(f->share, 8.1, 1e-9);
	assert_int_equal(f->severity, ADV_MEDIUM);
	assert_string_equal(f->what, "Python's garbage collector ran 8.1 % of the steps' time, on the "
				     "training thread: 8.10 ms per step");
	assert_evidence(f, "26 collections in 20 counted steps, 1.30 per step: generation 0 1.00, "
			   "generation 1 0.05, generation 2 0.25 per step");
	assert_evidence(f, "GC 8.10 ms per step: generation 0 0.50 ms, generation 1 0.10 ms, "
			   "generation 2 7.50 ms");
	assert_evidence(f, "the longest pause: 30.00 ms (generation 2), in step 3 of 100.00 ms");
	assert_evidence(f, "20 of the 20 counted steps collected; the most: 3 (31.50 ms of 100.00 ms), "
			   "7 (30.50 ms of 100.00 ms), 11 (30.50 ms of 100.00 ms), 15 (30.50 ms of "
			   "100.00 ms), 19 (30.50 ms of 100.00 ms), 2 (1.50 ms of 100.00 ms), ...");
	assert_non_null(strstr(f->try_this, "gc.freeze()"));
	assert_non_null(strstr(f->try_this, "gc.set_threshold()"));
	assert_non_null(strstr(f->try_this, "gc.disable()"));
	assert_non_null(strstr(f->command, "--view nvprof --view steps"));
	adv_list_free(&out);
	analysis_free(&a);
}

/* The first 8 steps warm-up: steps 8 to 19, generation 2 in 11, 15, 19:
 * 12 x 0.5 + 90 = 96 ms of 1200, 8 %; without step 11, 65.5 of 1100, 6.0 %. */
static void test_gc_skip(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(gc_trace("gc-skip.gpdl", 30, 4), 8, &out, &in, &a);
	assert_int_equal(in.steps, 12);
	assert_int_equal(out.n, 1);
	const struct adv_finding *f = &out.v[0];
	assert_near(f->saving_ns, 8.0 * MS, 1);
	assert_evidence(f, "15 collections in 12 counted steps, 1.25 per step: generation 0 1.00, "
			   "generation 1 0.00, generation 2 0.25 per step");
	assert_evidence(f, "the longest pause: 30.00 ms (generation 2), in step 11 of 100.00 ms");
	adv_list_free(&out);
	analysis_free(&a);
}

/* 17 ms: 10 + 2 + 85 = 97 ms of 2000, 4.85 %: under. 18 ms: 5.1 %, but
 * without step 3 (19.5 ms) 82.5 of 1900, 4.3 %: under. */
static void test_gc_under(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(gc_trace("gc-17.gpdl", 17, 4), 0, &out, &in, &a);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
	run_rule(gc_trace("gc-18.gpdl", 18, 4), 0, &out, &in, &a);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
	run_rule(gc_trace("gc-20.gpdl", 20, 4), 0, &out, &in, &a); /* 5.6 %, 4.8 % without: under */
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
	run_rule(gc_trace("gc-22.gpdl", 22, 4), 0, &out, &in, &a); /* 6.1 %, 5.3 % without: fires */
	assert_int_equal(out.n, 1);
	assert_near(out.v[0].saving_ns, 6.1 * MS, 1);
	adv_list_free(&out);
	analysis_free(&a);
}

/* One pause of 90 ms in step 5: 10 + 2 + 90 = 102 ms of 2000 ms (5.1 %),
 * but without step 5 11.5 of 1900 (0.6 %): one accident, no finding. */
static void test_gc_one_pause(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(gc_trace("gc-one.gpdl", 90, 0), 0, &out, &in, &a);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
}

/* No collection recorded (a trace of an older gprof-dl, or an import): silent. */
static void test_gc_none(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "gc-none.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "MainThread");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	for (uint64_t k = 0; k < 20; k++)
		tb_range(&b, 0, step, 10 * TB_MS + k * 100 * TB_MS, 100 * TB_MS);
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_rule(tb_close(&b, 2100 * TB_MS), 0, &out, &in, &a);
	assert_int_equal(in.steps, 20);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
}

static void test_gc_described(void **state)
{
	(void)state;
	assert_ptr_equal(adv_rule_find("gc-pauses"), &adv_rule_gc_pauses);
	assert_non_null(strstr(adv_rule_gc_pauses.threshold, "5 %"));
	assert_non_null(adv_rule_gc_pauses.why);
	assert_non_null(adv_rule_gc_pauses.definition);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gc_fires),     cmocka_unit_test(test_gc_skip),
		cmocka_unit_test(test_gc_under),     cmocka_unit_test(test_gc_one_pause),
		cmocka_unit_test(test_gc_none),      cmocka_unit_test(test_gc_described),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tb_cleanup();
	return rc;
}
