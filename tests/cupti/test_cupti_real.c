/*
 * test_cupti_real.c - the collector's injection with the toolkit's own CUPTI
 * (GPDL_TEST_REAL_CUPTI, /usr/local/cuda/lib64/libcupti.so.13), skipped where
 * there is none. Needs no GPU: gpu-target calls InitializeInjection itself,
 * as the driver would. Without a driver CUPTI's calls fail; with one the
 * injection succeeds. Either way there is exactly one status record, a
 * failure's line says why collection is off, and the program runs unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/cupti/harness.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void assert_same_program(const struct gpu_run *r, const char *mode, int code)
{
	struct gpu_run bare;
	gpu_run(&bare, GPU_RUN_BARE, mode, NULL);
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != code)
		fail_msg("status 0x%x, wanted exit %d; stderr:\n%s", r->status, code, r->err);
	assert_string_equal(r->out, bare.out);
	assert_string_equal(r->err, bare.err);
	gpu_run_free(&bare);
}

/* path NULL: the collector searches (libcupti.so.13, .12, ...). */
static void run_real(const char *mode, int code, const char *path)
{
	struct gpu_run r;
	char env[4096];
	snprintf(env, sizeof(env), "GPROF_DL_CUPTI_PATH=%s", path ? path : "");
	const char *extra[] = {env, NULL};
	gpu_run(&r, GPU_RUN_RECORDING, mode, extra);
	assert_same_program(&r, mode, code);
	assert_int_equal(gpu_count(&r, 0, RING_REC_GPU_STATUS), 1);
	const struct ring_gpu_status *s = gpu_nth(&r, 0, RING_REC_GPU_STATUS, 0);
	const char *m = view_str(&r.v, s->msg_str);
	assert_non_null(m);
	print_message("status %u: %s\n", s->h.aux, m);
	if (s->h.aux == RING_GPU_ON) {
		assert_true(!strncmp(m, "CUPTI ", 6));
		assert_non_null(strstr(m, "libcupti.so"));
	} else {
		assert_true(s->h.aux == RING_GPU_ERROR || s->h.aux == RING_GPU_PRIVILEGES ||
			    (!path && s->h.aux == RING_GPU_NO_CUPTI));
		assert_true(!strncmp(m, "GPU data off: ", 14));
		assert_non_null(strstr(m, path ? path : "libcupti.so"));
		assert_int_equal(gpu_count_activity(&r, 0), 0);
	}
	assert_int_equal(gpu_count(&r, (uint32_t)r.pid, RING_REC_PROCESS_EXIT), 1);
	gpu_run_free(&r);
}

static void test_real_cupti(void **state)
{
	(void)state;
	run_real(NULL, 0, GPDL_TEST_REAL_CUPTI);
}

static void test_real_cupti_fork(void **state)
{
	(void)state;
	run_real("fork", 0, GPDL_TEST_REAL_CUPTI);
}

static void test_real_cupti_searched(void **state)
{
	(void)state;
	run_real(NULL, 0, NULL);
}

static void test_no_cupti(void **state)
{
	(void)state;
	print_message("no %s here: nothing to test\n", GPDL_TEST_REAL_CUPTI);
	skip();
}

int main(void)
{
	if (access(GPDL_TEST_REAL_CUPTI, R_OK) != 0) {
		const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_cupti)};
		cmocka_run_group_tests(tests, NULL, NULL);
		return 77; /* ctest: skipped */
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_cupti),
		cmocka_unit_test(test_real_cupti_fork),
		cmocka_unit_test(test_real_cupti_searched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
