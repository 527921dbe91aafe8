/*
 * test_advise_cpu.c - the rules of rules_cpu.c on synthetic traces
 * (tracebuild.h: 8 CPUs), every figure worked out here: 10 steps of 100 ms,
 * the step thread 60 ms on a CPU and 30 ms runnable but waiting in each (so
 * it ran 2/3 of its runnable time: 1.5 threads a core), CPU(Process) and
 * CPU(System) sampled every 100 ms. The program's busy threads are then
 * 1.5 x 8 x its share of the busy CPU; oversubscription at 10 of them (1.25 x
 * 8) and over, cpu-contention below, and never both.
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

/* Both rules' findings on the trace at path. */
static void run_cpu(const char *path, struct adv_list *out, struct adv_input *in,
		    struct analysis *a)
{
	const char *paths[] = {path};
	tb_prepare(a, paths, 1);
	adv_input_init(in, a, NULL, paths, 1, 0);
	memset(out, 0, sizeof(*out));
	adv_rule_cpu_contention.run(in, out);
	adv_rule_oversubscription.run(in, out);
}

static void assert_evidence(const struct adv_finding *f, const char *needle)
{
	for (unsigned k = 0; k < f->nevidence; k++)
		if (strstr(f->evidence[k], needle))
			return;
	for (unsigned k = 0; k < f->nevidence; k++)
		fprintf(stderr, "  evidence: %s\n", f->evidence[k]);
	fail_msg("no evidence line holds \"%s\"", needle);
}

/* pid 10 on host h, 10 steps of 100 ms from 10 ms, each cpu_ms on a CPU
 * and runq_ms waiting; samples at 100 ms, 200 ms, ... 1100 ms of the
 * program's CPU (proc, % of one core; < 0: none) and the host's (sys, %);
 * workers child processes alive through the run, and one that ended (at
 * 5 ms) before the steps. */
static const char *cpu_trace(const char *file, double cpu_ms, double runq_ms, double proc,
			     double sys, unsigned workers)
{
	struct tb b;
	tb_open(&b, file, "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	for (unsigned w = 0; w < workers; w++)
		tb_process(&b, 100 + w, 10, 0, 0, TRACE_EXIT_UNKNOWN, -1, -1);
	tb_process(&b, 99, 10, 0, 5 * TB_MS, 0, -1, -1);
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	for (uint64_t k = 0; k < 10; k++) {
		struct trace_event_ext x = {.sched_cpu_ns = (uint64_t)(cpu_ms * MS),
					    .sched_runq_ns = (uint64_t)(runq_ms * MS)};
		tb_ext(&b, 0, step, 10 * TB_MS + k * 100 * TB_MS, 100 * TB_MS, &x);
	}
	for (uint64_t k = 1; k <= 11 && proc >= 0; k++) {
		tb_counter(&b, k * 100 * TB_MS, TRACE_CTR_CPU_PROCESS, 10, proc);
		tb_counter(&b, k * 100 * TB_MS, TRACE_CTR_CPU_SYSTEM, 0, sys);
	}
	return tb_close(&b, 1100 * TB_MS);
}

/* 7.6 of the 8 CPUs the program's, all busy: its share 95 %, 1.5 x 8 x 0.95
 * = 11.4 busy threads: oversubscription, the 30 ms wait its saving; no
 * cpu-contention beside it. */
static void test_oversub_own_threads(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_cpu(cpu_trace("own.gpdl", 60, 30, 760, 100, 3), &out, &in, &a);
	assert_int_equal(out.n, 1);
	const struct adv_finding *f = &out.v[0];
	assert_string_equal(f->rule->id, "oversubscription");
	assert_near(f->saving_ns, 30 * MS, 1);
	assert_near(f->share, 30.0, 1e-9);
	assert_int_equal(f->severity, ADV_HIGH);
	assert_non_null(strstr(f->what, "about 11 busy threads on 8 CPUs"));
	assert_non_null(strstr(f->what, "30.0 % of its steps"));
	assert_evidence(f, "run-queue time 30.00 ms per step");
	assert_evidence(f, "used 760 % of a CPU (of 800 %), 95 % of the busy CPU; 100 % of all cores");
	assert_evidence(f, "4 processes of the program ran during the steps");
	assert_evidence(f, "an upper bound");
	assert_non_null(strstr(f->try_this, "set_num_threads"));
	assert_non_null(strstr(f->try_this, "num_workers"));
	assert_non_null(strstr(f->try_this, "nproc-per-node"));
	adv_list_free(&out);
	analysis_free(&a);
}

/* 2 of the 8 CPUs the program's: 3 busy threads, the others' doing:
 * cpu-contention as before, its evidence the program's 25 % share. */
static void test_others_contend(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_cpu(cpu_trace("others.gpdl", 60, 30, 200, 100, 0), &out, &in, &a);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.v[0].rule->id, "cpu-contention");
	assert_near(out.v[0].saving_ns, 30 * MS, 1);
	assert_evidence(&out.v[0], "used 200 % of a CPU, 25 % of the busy CPU (100 % of all cores");
	adv_list_free(&out);
	analysis_free(&a);
}

/* The bar: 6.6 cores the program's is 1.5 x 6.6 = 9.9 threads, under 10:
 * cpu-contention; 6.7 is 10.05: oversubscription. */
static void test_oversub_bar(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_cpu(cpu_trace("under.gpdl", 60, 30, 660, 100, 0), &out, &in, &a);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.v[0].rule->id, "cpu-contention");
	adv_list_free(&out);
	analysis_free(&a);
	run_cpu(cpu_trace("over.gpdl", 60, 30, 670, 100, 0), &out, &in, &a);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.v[0].rule->id, "oversubscription");
	assert_non_null(strstr(out.v[0].what, "about 10 busy threads"));
	adv_list_free(&out);
	analysis_free(&a);
}

/* Cores under 75 % busy are not filled by anyone's threads (the wait is
 * elsewhere: a quota, say): cpu-contention, though the program holds them
 * all. */
static void test_oversub_cores_idle(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_cpu(cpu_trace("idle.gpdl", 60, 30, 580, 74, 0), &out, &in, &a);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.v[0].rule->id, "cpu-contention");
	adv_list_free(&out);
	analysis_free(&a);
}

/* No samples: who held the cores is unknown, cpu-contention as before;
 * and no wait (5 ms a step): neither rule, whoever holds the cores. */
static void test_no_counters_no_wait(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list out;
	run_cpu(cpu_trace("nosamples.gpdl", 60, 30, -1, 0, 0), &out, &in, &a);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.v[0].rule->id, "cpu-contention");
	adv_list_free(&out);
	analysis_free(&a);
	run_cpu(cpu_trace("nowait.gpdl", 90, 5, 790, 100, 4), &out, &in, &a);
	assert_int_equal(out.n, 0);
	adv_list_free(&out);
	analysis_free(&a);
}

static void test_rule_described(void **state)
{
	(void)state;
	assert_ptr_equal(adv_rule_find("oversubscription"), &adv_rule_oversubscription);
	assert_true(strlen(adv_rule_oversubscription.definition) > 10);
	assert_non_null(strstr(adv_rule_oversubscription.threshold, "1.25"));
	assert_true(strlen(adv_rule_oversubscription.why) > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oversub_own_threads),
		cmocka_unit_test(test_others_contend),
		cmocka_unit_test(test_oversub_bar),
		cmocka_unit_test(test_oversub_cores_idle),
		cmocka_unit_test(test_no_counters_no_wait),
		cmocka_unit_test(test_rule_described),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tb_cleanup();
	return rc;
}
