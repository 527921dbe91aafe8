/*
 * test_advise_gpu.c - the rules of the CUDA calls (rules_gpu.c): sync-calls
 * and pageable-copies, on the golden GPU trace (tracebuild.c draws it) and
 * on a synthetic loop whose steps hold what each rule looks for, or not.
 * Every figure is worked out in the comment above its test.
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

static void assert_near(double x, double want)
{
	if (fabs(x - want) > 1e-6 * (fabs(want) + 1))
		fail_msg("%.9g != %.9g", x, want);
}

/* The findings of rule r alone over the trace at path. */
static void run_rule(const struct adv_rule *r, const char *path, unsigned skip,
		     struct adv_input *in, struct analysis *a, struct adv_list *out,
		     const char **paths)
{
	paths[0] = path;
	tb_prepare(a, paths, 1);
	adv_input_init(in, a, NULL, paths, 1, skip);
	memset(out, 0, sizeof(*out));
	r->run(in, out);
}

static void assert_evidence(const struct adv_finding *f, unsigned k, const char *want)
{
	if (k >= f->nevidence)
		fail_msg("no evidence %u (of %u): want '%s'", k, f->nevidence, want);
	if (strcmp(f->evidence[k], want) != 0)
		fail_msg("evidence %u:\n got '%s'\nwant '%s'", k, f->evidence[k], want);
}

/*
 * The golden trace, no step skipped: steps [1000, 11000) and [12000, 20000),
 * median 9000 ns, 2 counted. Synchronous calls inside them: cudaMemcpy
 * [5860, 5980) (120 ns, under op to_cpu, through the GpuMemcpySync range)
 * and cudaStreamSynchronize [17500, 17900) (400 ns, under no operator):
 * 2 calls in 2 steps, 1 per step; 520 ns, 260 per step = 2.89 % of 9000:
 * over 2 %, so it fires, saving 260 ns (LOW). The cudaMemcpyAsync and
 * cudaMemsetAsync calls are not synchronous.
 */
static void test_sync_calls_golden(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list l;
	const char *paths[1];
	run_rule(&adv_rule_sync_calls, tb_gpu_trace(), 0, &in, &a, &l, paths);
	assert_int_equal(in.steps, 2);
	assert_int_equal(in.step_ns, 9000);
	assert_int_equal(l.n, 1);
	const struct adv_finding *f = &l.v[0];
	assert_ptr_equal(f->rule, &adv_rule_sync_calls);
	assert_near(f->saving_ns, 260);
	assert_near(f->share, 100.0 * 260 / 9000);
	assert_int_equal(f->severity, ADV_LOW);
	assert_string_equal(f->what, "1.0 synchronous CUDA calls per step hold the host 0.3 us per "
				     "step (2.9 % of the step)");
	assert_evidence(f, 0, "cudaStreamSynchronize: 0.50 calls per step, 0.4 us in all (0.2 us "
			      "per step)");
	assert_evidence(f, 1, "cudaMemcpy: 0.50 calls per step, 0.1 us in all (0.1 us per step)");
	assert_evidence(f, 2, "under the operators: (no operator) 0.4 us (1 call), to_cpu 0.1 us "
			      "(1 call)");
	assert_int_equal(f->nevidence, 4);
	assert_non_null(strstr(f->command, "--view memory-manipulation"));
	assert_non_null(strstr(f->try_this, ".item()"));
	adv_list_free(&l);
	analysis_free(&a);
}

/* The same, the first step skipped (--skip-steps 1): step 2 alone, 8000 ns;
 * cudaStreamSynchronize 400 ns in it: 1 call per step, 5 % (MEDIUM). */
static void test_sync_calls_golden_skip(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list l;
	const char *paths[1];
	run_rule(&adv_rule_sync_calls, tb_gpu_trace(), 1, &in, &a, &l, paths);
	assert_int_equal(in.steps, 1);
	assert_int_equal(in.step_ns, 8000);
	assert_int_equal(l.n, 1);
	assert_near(l.v[0].saving_ns, 400);
	assert_near(l.v[0].share, 5.0);
	assert_int_equal(l.v[0].severity, ADV_MEDIUM);
	assert_evidence(&l.v[0], 0, "cudaStreamSynchronize: 1.00 calls per step, 0.4 us in all (0.4 "
				    "us per step)");
	assert_evidence(&l.v[0], 1, "under the operators: (no operator) 0.4 us (1 call)");
	adv_list_free(&l);
	analysis_free(&a);
}

/* The golden trace's one pageable copy: cudaMemcpyAsync [1600, 1700) on
 * the worker thread, HtoD Pageable -> Device async, in step 1: 1 copy in 2
 * steps, 0.5 per step, below 1: no finding. (The cudaMemcpy DtoH to
 * pageable memory is synchronous: sync-calls' own.) */
static void test_pageable_golden(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list l;
	const char *paths[1];
	run_rule(&adv_rule_pageable_copies, tb_gpu_trace(), 0, &in, &a, &l, paths);
	assert_int_equal(l.n, 0);
	/* its figures, as if the run had had one step (of the median's
	 * length): the call 100 ns (over 1 % of 9000), the copy 500 ns, 8192
	 * bytes, under no operator (the worker's prefetch is UserDefined) */
	in.steps = 1;
	adv_rule_pageable_copies.run(&in, &l);
	assert_int_equal(l.n, 1);
	assert_near(l.v[0].saving_ns, 100);
	assert_evidence(&l.v[0], 0, "cudaMemcpyAsync: 1.00 calls per step, 8192 bytes per call, "
				    "calls 0.1 us and copies 0.5 us in all");
	assert_evidence(&l.v[0], 2, "under the operators: (no operator) 0.1 us (1 call)");
	adv_list_free(&l);
	analysis_free(&a);
}

/*
 * A loop of 4 steps of 1 ms each (ProfileStep [s, s+1 ms)), pid 20, thread
 * main, GPU0 stream 7; in each, times in us from s:
 *   aten::mm [10, 40) > cudaLaunchKernel [20, 30) -> gemm [50, 450)
 *   in steps k % pageable_every == 0 (0: never): aten::to [100, 180) >
 *     cudaMemcpyAsync [110, 160) -> HtoD Pageable -> Device async, 8192
 *     bytes, [200, 230)
 *   sync_us > 0: aten::item [600, 660) > aten::_local_scalar_dense
 *     [605, 655) > cudaStreamSynchronize [610, 610 + sync_us)
 */
static const char *gpu_loop(const char *name, unsigned pageable_every, unsigned sync_us)
{
	struct tb b;
	tb_open(&b, name, "h", 20, 0);
	tb_thread(&b, 0, 20, "main");
	tb_stream(&b, 1, 0, 7);
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t mm = tb_desc(&b, "aten::mm", TRACE_EV_OPERATOR);
	uint32_t to = tb_desc(&b, "aten::to", TRACE_EV_OPERATOR);
	uint32_t item = tb_desc(&b, "aten::item", TRACE_EV_OPERATOR);
	uint32_t scalar = tb_desc(&b, "aten::_local_scalar_dense", TRACE_EV_OPERATOR);
	uint32_t launch = tb_desc(&b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	uint32_t copy = tb_desc(&b, "cudaMemcpyAsync", TRACE_EV_CUDA_RUNTIME);
	uint32_t sync = tb_desc(&b, "cudaStreamSynchronize", TRACE_EV_CUDA_RUNTIME);
	uint32_t gemm = tb_desc(&b, "gemm", TRACE_EV_KERNEL);
	uint32_t htod = tb_desc(&b, "Memcpy HtoD (Pageable -> Device)", TRACE_EV_MEMCPY);
	uint64_t corr = 1;
	for (unsigned k = 0; k < 4; k++) {
		uint64_t s = k * TB_MS, c = corr++;
		/* in end order, as the collector writes */
		tb_call(&b, 0, launch, s + 20 * TB_US, 10 * TB_US, c);
		tb_range(&b, 0, mm, s + 10 * TB_US, 30 * TB_US);
		tb_kernel(&b, 1, gemm, s + 50 * TB_US, 400 * TB_US, c, 8, 256, 1, 32, 0, 0);
		if (pageable_every && k % pageable_every == 0) {
			uint64_t cc = corr++;
			tb_call(&b, 0, copy, s + 110 * TB_US, 50 * TB_US, cc);
			tb_range(&b, 0, to, s + 100 * TB_US, 80 * TB_US);
			tb_copy(&b, 1, htod, s + 200 * TB_US, 30 * TB_US, cc, TRACE_COPY_HTOD,
				TRACE_MEM_PAGEABLE, TRACE_MEM_DEVICE, 1, 8192);
		}
		if (sync_us) {
			tb_call(&b, 0, sync, s + 610 * TB_US, sync_us * TB_US, 0);
			tb_range(&b, 0, scalar, s + 605 * TB_US, 50 * TB_US);
			tb_range(&b, 0, item, s + 600 * TB_US, 60 * TB_US);
		}
		tb_range(&b, 0, step, s, TB_MS);
	}
	return tb_close(&b, 4 * TB_MS);
}

/* A pageable copy in every step: 4 copies in 4 steps of 1 ms; the calls 50
 * us per step (5 %, MEDIUM, the saving), the copies 30 us; 8192 bytes each,
 * 32768 in all; under aten::to. */
static void test_pageable_every_step(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list l;
	const char *paths[1];
	run_rule(&adv_rule_pageable_copies, gpu_loop("pageable.gpdl", 1, 0), 0, &in, &a, &l, paths);
	assert_int_equal(in.steps, 4);
	assert_int_equal(in.step_ns, TB_MS);
	assert_int_equal(l.n, 1);
	const struct adv_finding *f = &l.v[0];
	assert_near(f->saving_ns, 50 * TB_US);
	assert_near(f->share, 5.0);
	assert_int_equal(f->severity, ADV_MEDIUM);
	assert_string_equal(f->what, "1.0 asynchronous copies per step from or to pageable host "
				     "memory (synchronous in effect): the calls take 50.0 us per "
				     "step, the copies 30.0 us");
	assert_evidence(f, 0, "cudaMemcpyAsync: 1.00 calls per step, 8192 bytes per call, calls "
			      "200.0 us and copies 120.0 us in all");
	assert_evidence(f, 1, "4 copies, 32768 bytes in all, over 4 counted steps (median step "
			      "1.00 ms)");
	assert_evidence(f, 2, "under the operators: aten::to 200.0 us (4 calls)");
	assert_non_null(strstr(f->try_this, "pin_memory=True"));
	adv_list_free(&l);
	/* none of it is synchronous by name */
	memset(&l, 0, sizeof(l));
	adv_rule_sync_calls.run(&in, &l);
	assert_int_equal(l.n, 0);
	adv_list_free(&l);
	analysis_free(&a);
}

/* Every other step: 2 copies in 4 steps, 0.5 per step: no finding. */
static void test_pageable_every_other_step(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list l;
	const char *paths[1];
	run_rule(&adv_rule_pageable_copies, gpu_loop("pageable2.gpdl", 2, 0), 0, &in, &a, &l, paths);
	assert_int_equal(l.n, 0);
	adv_list_free(&l);
	analysis_free(&a);
}

/* .item() in every step: cudaStreamSynchronize 40 us under aten::item >
 * aten::_local_scalar_dense: 1 per step, 4 % of the step, saving 40 us;
 * the operator named is the outermost, aten::item. */
static void test_sync_item(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list l;
	const char *paths[1];
	run_rule(&adv_rule_sync_calls, gpu_loop("item.gpdl", 0, 40), 0, &in, &a, &l, paths);
	assert_int_equal(l.n, 1);
	const struct adv_finding *f = &l.v[0];
	assert_near(f->saving_ns, 40 * TB_US);
	assert_near(f->share, 4.0);
	assert_int_equal(f->severity, ADV_MEDIUM);
	assert_evidence(f, 0, "cudaStreamSynchronize: 1.00 calls per step, 160.0 us in all (40.0 us "
			      "per step)");
	assert_evidence(f, 1, "under the operators: aten::item 160.0 us (4 calls)");
	adv_list_free(&l);
	analysis_free(&a);
}

/* A short .item(): 15 us per step, 1.5 % of the step, below 2 %: none. */
static void test_sync_short(void **state)
{
	(void)state;
	struct analysis a;
	struct adv_input in;
	struct adv_list l;
	const char *paths[1];
	run_rule(&adv_rule_sync_calls, gpu_loop("short.gpdl", 0, 15), 0, &in, &a, &l, paths);
	assert_int_equal(l.n, 0);
	adv_list_free(&l);
	analysis_free(&a);
}

/* Launches only: neither rule says anything, through adv_run() too. */
static void test_clean_loop(void **state)
{
	(void)state;
	const char *paths[1] = {gpu_loop("clean.gpdl", 0, 0)};
	struct analysis a;
	tb_prepare(&a, paths, 1);
	struct adv_input in;
	adv_input_init(&in, &a, NULL, paths, 1, 0);
	struct adv_list l = {0};
	adv_run(&in, &l);
	for (size_t i = 0; i < l.n; i++) {
		assert_ptr_not_equal(l.v[i].rule, &adv_rule_sync_calls);
		assert_ptr_not_equal(l.v[i].rule, &adv_rule_pageable_copies);
	}
	adv_list_free(&l);
	analysis_free(&a);
}

/* A trace without steps: the rules per step say nothing. */
static void test_no_steps(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "nosteps.gpdl", "h", 30, 0);
	tb_thread(&b, 0, 30, "main");
	uint32_t sync = tb_desc(&b, "cudaDeviceSynchronize", TRACE_EV_CUDA_RUNTIME);
	for (unsigned k = 0; k < 10; k++)
		tb_call(&b, 0, sync, k * TB_MS, TB_MS / 2, 0);
	struct analysis a;
	struct adv_input in;
	struct adv_list l;
	const char *paths[1];
	run_rule(&adv_rule_sync_calls, tb_close(&b, 10 * TB_MS), 0, &in, &a, &l, paths);
	assert_int_equal(in.step_ns, 0);
	assert_int_equal(l.n, 0);
	adv_list_free(&l);
	analysis_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_calls_golden),
		cmocka_unit_test(test_sync_calls_golden_skip),
		cmocka_unit_test(test_pageable_golden),
		cmocka_unit_test(test_pageable_every_step),
		cmocka_unit_test(test_pageable_every_other_step),
		cmocka_unit_test(test_sync_item),
		cmocka_unit_test(test_sync_short),
		cmocka_unit_test(test_clean_loop),
		cmocka_unit_test(test_no_steps),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
