/*
 * test_cupti_inject.c - the collector's CUDA injection (lib/collector/cupti.c)
 * under fake-cupti, a test double of CUPTI (fake_cupti.c).
 *
 * Each test runs gpu-target under libgprof-dl-collector.so, as `gprof-dl run`
 * would, with GPROF_DL_CUPTI_PATH naming the double and FAKE_CUPTI_SCENARIO
 * choosing what it does, then reads the ring back. The target's stdout and
 * exit status must be those of a run without the collector in every case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "formats/trace/trace.h"
#include "tests/cupti/fake_cupti.h"
#include "tests/cupti/harness.h"

#include <cupti.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define CUPTI_ENV "GPROF_DL_CUPTI_PATH=" GPDL_TEST_FAKE_CUPTI
#define CUPTI_NOTS_ENV "GPROF_DL_CUPTI_PATH=" GPDL_TEST_FAKE_CUPTI_NOTS

static const char *bare_out(const char *mode)
{
	static char out[3][4096];
	static const char *modes[3] = {"", "fork", "_exit"};
	static int done[3];
	int i = !mode ? 0 : !strcmp(mode, "fork") ? 1 : 2;
	if (!done[i]) {
		struct gpu_run r;
		gpu_run(&r, GPU_RUN_BARE, modes[i][0] ? modes[i] : NULL, NULL);
		snprintf(out[i], sizeof(out[i]), "%s", r.out);
		gpu_run_free(&r);
		done[i] = 1;
	}
	return out[i];
}

/* The program behaved as without the collector. */
static void assert_unchanged(const struct gpu_run *r, const char *mode, int code)
{
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != code)
		fail_msg("status 0x%x, wanted exit %d; stderr:\n%s", r->status, code, r->err);
	assert_string_equal(r->out, bare_out(mode));
	assert_non_null(strstr(r->out, "errno kept\n"));
}

/* The one status record of the run (there must be exactly one of code). */
static const struct ring_gpu_status *status_of(const struct gpu_run *r, unsigned code)
{
	const struct ring_gpu_status *found = NULL;
	for (size_t i = 0; i < gpu_count(r, 0, RING_REC_GPU_STATUS); i++) {
		const struct ring_gpu_status *s = gpu_nth(r, 0, RING_REC_GPU_STATUS, i);
		if (s->h.aux != code)
			continue;
		if (found)
			fail_msg("two status records of code %u", code);
		found = s;
	}
	if (!found)
		fail_msg("no status record of code %u", code);
	print_message("status %u: %s\n", code, view_str(&r->v, found->msg_str));
	return found;
}

static const char *status_msg(const struct gpu_run *r, unsigned code)
{
	const char *m = view_str(&r->v, status_of(r, code)->msg_str);
	assert_non_null(m);
	return m;
}

static void run_scenario(struct gpu_run *r, const char *scenario, const char *mode, const char *cupti_env,
			 const char *more1, const char *more2)
{
	char sc[64];
	snprintf(sc, sizeof(sc), "FAKE_CUPTI_SCENARIO=%s", scenario);
	const char *extra[] = {cupti_env, sc, more1, more2, NULL};
	gpu_run(r, GPU_RUN_RECORDING, mode, extra);
}

static void assert_in_run(const struct gpu_run *r, uint64_t t)
{
	if (t < r->t0 || t > r->t1)
		fail_msg("time %llu is outside the run [%llu, %llu]", (unsigned long long)t,
			 (unsigned long long)r->t0, (unsigned long long)r->t1);
}

/* What the basic scenario (fake_cupti.h) makes, as the ring must hold it, in
 * the slots of process pid. */
static void assert_basic(const struct gpu_run *r, uint32_t pid)
{
	assert_int_equal(gpu_count(r, pid, RING_REC_GPU_API), FAKE_API_CALLS);
	assert_int_equal(gpu_count(r, pid, RING_REC_GPU_WORK), FAKE_API_CALLS + 2);
	assert_int_equal(gpu_count(r, pid, RING_REC_GPU_MEMORY), 2);
	assert_int_equal(gpu_count(r, pid, RING_REC_GPU_DEVICE), 1);
	assert_int_equal(gpu_count(r, pid, RING_REC_GPU_DROPS), 0);
	assert_int_equal(gpu_dropped(r), 0);

	for (uint32_t i = 0; i < FAKE_API_CALLS; i++) {
		const struct ring_gpu_api *a = gpu_nth(r, pid, RING_REC_GPU_API, i);
		assert_int_equal(a->h.aux, RING_GPU_API_RUNTIME);
		assert_string_equal(view_str(&r->v, a->name_str), "cudaLaunchKernel");
		assert_int_equal(a->cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
		assert_int_equal(a->correlation, i + 1);
		assert_int_equal(a->tid, pid); /* the main thread's kernel tid: SYSTEM ids */
		assert_int_equal(a->result, 0);
		assert_in_run(r, a->start_ns);
		assert_int_equal(a->end_ns - a->start_ns, FAKE_LEN_NS);
	}
	size_t kernels = 0;
	for (size_t i = 0; i < gpu_count(r, pid, RING_REC_GPU_WORK); i++) {
		const struct ring_gpu_work *w = gpu_nth(r, pid, RING_REC_GPU_WORK, i);
		assert_in_run(r, w->start_ns);
		assert_int_equal(w->end_ns - w->start_ns, FAKE_LEN_NS);
		assert_int_equal(w->stream, FAKE_STREAM);
		assert_int_equal(w->context, FAKE_CONTEXT);
		switch (w->h.aux) {
		case TRACE_EV_KERNEL: {
			kernels++;
			assert_int_equal(w->correlation, kernels);
			const char *name = view_str(&r->v, w->name_str);
			assert_non_null(name);
			/* demangled when the process has a C++ runtime (UBSan's brings one) */
			if (strcmp(name, FAKE_KERNEL_NAME) && strcmp(name, "vecAdd(float*, float*, float*, int)"))
				fail_msg("kernel named '%s'", name);
			assert_int_equal(w->grid[0], 4);
			assert_int_equal(w->block[0], 256);
			assert_int_equal(w->registers, 32);
			assert_int_equal(w->dynamic_smem, 1024);
			assert_int_equal(w->bytes, 0);
			break;
		}
		case TRACE_EV_MEMCPY:
			assert_int_equal(w->bytes, FAKE_COPY_BYTES);
			assert_int_equal(w->copy_kind, TRACE_COPY_HTOD);
			assert_int_equal(w->src_kind, TRACE_MEM_PAGEABLE);
			assert_int_equal(w->dst_kind, TRACE_MEM_DEVICE);
			assert_int_equal(w->correlation, FAKE_API_CALLS + 1);
			break;
		case TRACE_EV_MEMSET:
			assert_int_equal(w->bytes, FAKE_SET_BYTES);
			assert_int_equal(w->value, FAKE_SET_VALUE);
			assert_int_equal(w->correlation, FAKE_API_CALLS + 2);
			break;
		default:
			fail_msg("work of type %u", w->h.aux);
		}
	}
	assert_int_equal(kernels, FAKE_API_CALLS);
	const struct ring_gpu_memory *alloc = gpu_nth(r, pid, RING_REC_GPU_MEMORY, 0);
	const struct ring_gpu_memory *release = gpu_nth(r, pid, RING_REC_GPU_MEMORY, 1);
	assert_int_equal(alloc->h.aux, RING_GPU_MEM_ALLOC);
	assert_int_equal(release->h.aux, RING_GPU_MEM_FREE);
	assert_int_equal(alloc->address, FAKE_ALLOC_ADDRESS);
	assert_int_equal(alloc->bytes, FAKE_ALLOC_BYTES);
	assert_in_run(r, alloc->ts_ns);
	assert_true(release->ts_ns > alloc->ts_ns);
	const struct ring_gpu_device *d = gpu_nth(r, pid, RING_REC_GPU_DEVICE, 0);
	assert_string_equal(view_str(&r->v, d->d.name_str), FAKE_DEVICE_NAME);
	assert_int_equal(d->d.sm_count, FAKE_SM_COUNT);
	assert_int_equal(d->d.cc_major, 9);
}

static void assert_on(const struct gpu_run *r, const char *path)
{
	char want[1024];
	snprintf(want, sizeof(want), "CUPTI %u from %s", FAKE_VERSION, path);
	assert_string_equal(status_msg(r, RING_GPU_ON), want);
	assert_int_equal(gpu_count(r, 0, RING_REC_GPU_STATUS), 1);
}

static void test_basic(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "basic", NULL, CUPTI_ENV, NULL, NULL);
	assert_unchanged(&r, NULL, 0);
	assert_on(&r, GPDL_TEST_FAKE_CUPTI);
	assert_basic(&r, (uint32_t)r.pid);
	/* our clock stamps CUPTI's records; API records carry kernel tids */
	assert_true(gpu_logged(&r, "thread-id-type 1"));
	char line[64];
	snprintf(line, sizeof(line), "timestamp-callback %d", (int)r.pid);
	assert_true(gpu_logged(&r, line));
	assert_true(gpu_logged(&r, "flush-period 200"));
	snprintf(line, sizeof(line), "flush %d %u", (int)r.pid, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	assert_true(gpu_logged(&r, line)); /* at exit */
	snprintf(line, sizeof(line), "enable %d", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	assert_true(gpu_logged(&r, line));
	assert_null(strstr(r.log, "unsubscribe"));
	assert_null(strstr(r.log, "disable"));
	gpu_run_free(&r);
}

/* Without cuptiActivityRegisterTimestampCallback the double stamps with
 * CLOCK_REALTIME, as CUPTI does: the measured offset must bring every time
 * into the run on CLOCK_MONOTONIC. */
static void test_clock_offset(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "basic", NULL, CUPTI_NOTS_ENV, "GPROF_DL_CUPTI_FLUSH_MS=50", NULL);
	assert_unchanged(&r, NULL, 0);
	assert_on(&r, GPDL_TEST_FAKE_CUPTI_NOTS);
	assert_null(strstr(r.log, "timestamp-callback"));
	assert_true(gpu_logged(&r, "flush-period 50"));
	assert_basic(&r, (uint32_t)r.pid);
	gpu_run_free(&r);
}

/* Buffers completed on CUPTI's own thread land in that thread's slot while
 * the flushing thread waits for it. */
static void test_worker_thread(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "worker", NULL, CUPTI_ENV, NULL, NULL);
	assert_unchanged(&r, NULL, 0);
	assert_on(&r, GPDL_TEST_FAKE_CUPTI);
	assert_basic(&r, (uint32_t)r.pid);
	const char *w = strstr(r.log, "worker ");
	assert_non_null(w);
	int pid = 0, tid = 0;
	assert_int_equal(sscanf(w, "worker %d %d", &pid, &tid), 2);
	assert_int_equal(pid, r.pid);
	assert_int_not_equal(tid, r.pid);
	const struct view_slot *ws = view_thread(&r.v, (uint32_t)pid, (uint32_t)tid);
	const struct view_slot *ms = view_thread(&r.v, (uint32_t)pid, (uint32_t)pid);
	assert_non_null(ws);
	assert_non_null(ms);
	assert_int_equal(view_count(ws, RING_REC_GPU_WORK), FAKE_API_CALLS + 2);
	assert_int_equal(view_count(ms, RING_REC_GPU_WORK), 0);
	assert_int_equal(view_check_defined_before_use(&r.v, ws, 0), 0);
	gpu_run_free(&r);
}

/* Records of one full-sized kernel each per record, in 1 MiB buffers. */
static size_t kernels_per_buffer(void)
{
	return (1u << 20) / sizeof(CUpti_ActivityKernel10);
}

static void assert_flood_kernels(const struct gpu_run *r, size_t n)
{
	assert_int_equal(gpu_count(r, (uint32_t)r->pid, RING_REC_GPU_WORK), n);
	/* in order, each once */
	for (size_t i = 0; i < n; i++) {
		const struct ring_gpu_work *w = gpu_nth(r, (uint32_t)r->pid, RING_REC_GPU_WORK, i);
		if (w->correlation != i + 1)
			fail_msg("kernel %zu has correlation %llu", i, (unsigned long long)w->correlation);
		assert_int_equal(w->h.aux, TRACE_EV_KERNEL);
	}
}

/* Far more than a 64 KiB slot holds, from one thread: the conversion waits
 * for the drainer instead of dropping, and the pool grows to the buffers
 * CUPTI holds at once. */
static void test_flood_back_pressure(void **state)
{
	(void)state;
	struct gpu_run r;
	const char *extra[] = {CUPTI_ENV, "FAKE_CUPTI_SCENARIO=flood", "GPROF_DL_CUPTI_BUFFER_MB=1",
			       "GPROF_DL_CUPTI_BUFFERS=2", "GPROF_DL_DEBUG=1", NULL};
	gpu_run(&r, GPU_RUN_RECORDING, NULL, extra);
	assert_unchanged(&r, NULL, 0);
	assert_on(&r, GPDL_TEST_FAKE_CUPTI);
	assert_flood_kernels(&r, FAKE_FLOOD_KERNELS);
	assert_int_equal(gpu_count(&r, 0, RING_REC_GPU_DROPS), 0);
	assert_int_equal(gpu_dropped(&r), 0);
	size_t per = kernels_per_buffer();
	unsigned need = (unsigned)((FAKE_FLOOD_KERNELS + per - 1) / per);
	assert_true(need > 2);
	char grew[96], over[96];
	snprintf(grew, sizeof(grew), "activity buffer pool grew to %u buffers", need);
	snprintf(over, sizeof(over), "activity buffer pool grew to %u buffers", need + 1);
	if (!strstr(r.err, grew) || strstr(r.err, over))
		fail_msg("wanted '%s' and no more in:\n%s", grew, r.err);
	gpu_run_free(&r);
}

/* Past GPROF_DL_CUPTI_BUFFERS_MAX the collector refuses buffers: CUPTI drops
 * and counts, and those counts reach the ring with the status that says
 * what to raise. Nothing is lost without being counted. */
static void test_buffer_cap(void **state)
{
	(void)state;
	struct gpu_run r;
	const char *extra[] = {CUPTI_ENV, "FAKE_CUPTI_SCENARIO=flood", "GPROF_DL_CUPTI_BUFFER_MB=1",
			       "GPROF_DL_CUPTI_BUFFERS=1", "GPROF_DL_CUPTI_BUFFERS_MAX=3", NULL};
	gpu_run(&r, GPU_RUN_RECORDING, NULL, extra);
	assert_unchanged(&r, NULL, 0);
	size_t got = 3 * kernels_per_buffer();
	assert_true(got < FAKE_FLOOD_KERNELS);
	assert_flood_kernels(&r, got);
	uint64_t lost = 0;
	for (size_t i = 0; i < gpu_count(&r, 0, RING_REC_GPU_DROPS); i++)
		lost += ((const struct ring_gpu_drops *)gpu_nth(&r, 0, RING_REC_GPU_DROPS, i))->dropped;
	assert_int_equal(lost, FAKE_FLOOD_KERNELS - got);
	const char *m = status_msg(&r, RING_GPU_BUFFERS);
	assert_non_null(strstr(m, "GPROF_DL_CUPTI_BUFFER_MB (now 1)"));
	assert_non_null(strstr(m, "GPROF_DL_CUPTI_BUFFERS_MAX (now 3)"));
	status_of(&r, RING_GPU_ON);
	assert_int_equal(gpu_count(&r, 0, RING_REC_GPU_STATUS), 2);
	assert_int_equal(gpu_dropped(&r), 0);
	gpu_run_free(&r);
}

static void test_drops(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "drops", NULL, CUPTI_ENV, NULL, NULL);
	assert_unchanged(&r, NULL, 0);
	assert_int_equal(gpu_count(&r, 0, RING_REC_GPU_DROPS), 1);
	const struct ring_gpu_drops *d = gpu_nth(&r, 0, RING_REC_GPU_DROPS, 0);
	assert_int_equal(d->dropped, FAKE_DROPS);
	status_of(&r, RING_GPU_ON);
	const char *m = status_msg(&r, RING_GPU_BUFFERS);
	assert_true(!strncmp(m, "GPU data incomplete: ", 21));
	assert_non_null(strstr(m, "GPROF_DL_CUPTI_BUFFER_MB"));
	assert_int_equal(gpu_count(&r, 0, RING_REC_GPU_STATUS), 2);
	assert_int_equal(gpu_count(&r, 0, RING_REC_GPU_WORK), FAKE_API_CALLS + 2);
	gpu_run_free(&r);
}

/* A kind CUPTI cannot enable is skipped; collection stays on. */
static void test_partial_kinds(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "partial", NULL, CUPTI_ENV, NULL, NULL);
	assert_unchanged(&r, NULL, 0);
	assert_on(&r, GPDL_TEST_FAKE_CUPTI);
	assert_int_equal(gpu_count(&r, 0, RING_REC_GPU_MEMORY), 0);
	assert_int_equal(gpu_count(&r, 0, RING_REC_GPU_API), FAKE_API_CALLS);
	assert_int_equal(gpu_count(&r, 0, RING_REC_GPU_WORK), FAKE_API_CALLS + 2);
	gpu_run_free(&r);
}

static void assert_off(const struct gpu_run *r)
{
	assert_unchanged(r, NULL, 0);
	assert_int_equal(gpu_count(r, 0, RING_REC_GPU_STATUS), 1);
	assert_int_equal(gpu_count_activity(r, 0), 0);
}

static void test_absent(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "basic", NULL, "GPROF_DL_CUPTI_PATH=/nonexistent/libcupti.so.13", NULL, NULL);
	assert_off(&r);
	const char *m = status_msg(&r, RING_GPU_NO_CUPTI);
	assert_true(!strncmp(m, "GPU data off: ", 14));
	assert_non_null(strstr(m, "'/nonexistent/libcupti.so.13' named by --cupti-lib or GPROF_DL_CUPTI_PATH"));
	assert_non_null(strstr(m, "No such file or directory"));
	assert_false(r.loaded);
	gpu_run_free(&r);
}

/* A library that is not CUPTI (the collector itself has none of its functions). */
static void test_not_cupti(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "basic", NULL, "GPROF_DL_CUPTI_PATH=" GPDL_TEST_COLLECTOR, NULL, NULL);
	assert_off(&r);
	const char *m = status_msg(&r, RING_GPU_NO_CUPTI);
	assert_non_null(strstr(m, "is not a CUPTI this collector can use (it lacks cuptiGetVersion)"));
	gpu_run_free(&r);
}

static void test_privileges(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "refuse-privileges", NULL, CUPTI_ENV, NULL, NULL);
	assert_off(&r);
	const char *m = status_msg(&r, RING_GPU_PRIVILEGES);
	assert_non_null(strstr(m, "NVreg_RestrictProfilingToAdminUsers=0"));
	assert_non_null(strstr(m, "CAP_SYS_ADMIN"));
	assert_non_null(strstr(m, "ERR_NVGPUCTRPERM"));
	char line[64];
	snprintf(line, sizeof(line), "unsubscribe %d", (int)r.pid);
	assert_true(gpu_logged(&r, line)); /* CUPTI left as found */
	assert_null(strstr(r.log, "flush "));
	gpu_run_free(&r);
}

static void test_subscriber(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "subscriber", NULL, CUPTI_ENV, NULL, NULL);
	assert_off(&r);
	assert_string_equal(status_msg(&r, RING_GPU_SUBSCRIBER),
			    "GPU data off: another CUPTI client (torch.profiler, nsys, ncu, ...) holds CUPTI "
			    "in this process: profile with one tool at a time");
	assert_null(strstr(r.log, "enable"));
	gpu_run_free(&r);
}

static void test_old(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "old", NULL, CUPTI_ENV, NULL, NULL);
	assert_off(&r);
	char want[1024];
	snprintf(want, sizeof(want),
		 "GPU data off: CUPTI 17 from '%s' is older than CUDA 12's (19): use the CUPTI of CUDA 12 "
		 "or later (--cupti-lib)",
		 GPDL_TEST_FAKE_CUPTI);
	assert_string_equal(status_msg(&r, RING_GPU_OLD_CUPTI), want);
	assert_null(strstr(r.log, "subscribe"));
	gpu_run_free(&r);
}

/* No kernels, nothing worth collecting: off, with every kind enabled so far
 * disabled again. */
static void test_no_kernels(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "no-kernels", NULL, CUPTI_ENV, NULL, NULL);
	assert_off(&r);
	const char *m = status_msg(&r, RING_GPU_ERROR);
	assert_non_null(strstr(m, "cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_NOT_COMPATIBLE"));
	char line[64];
	snprintf(line, sizeof(line), "disable %d", CUPTI_ACTIVITY_KIND_DEVICE);
	assert_true(gpu_logged(&r, line));
	snprintf(line, sizeof(line), "unsubscribe %d", (int)r.pid);
	assert_true(gpu_logged(&r, line));
	gpu_run_free(&r);
}

/* The parent's records are all there (flushed before the fork and at its
 * exit); the child never touches CUPTI, so it writes none. */
static void test_fork(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "basic", "fork", CUPTI_ENV, NULL, NULL);
	assert_unchanged(&r, "fork", 0);
	assert_non_null(strstr(r.out, "child exited 3\n"));
	assert_basic(&r, (uint32_t)r.pid);
	uint32_t child = 0;
	for (uint32_t i = 0; i < r.v.nslots; i++) {
		const struct ring_process *p = view_find(&r.v.slot[i], RING_REC_PROCESS_START, 0);
		if (p && p->ppid == (uint32_t)r.pid)
			child = p->pid;
	}
	assert_int_not_equal(child, 0);
	assert_int_equal(gpu_count_activity(&r, child), 0);
	assert_int_equal(gpu_count(&r, child, RING_REC_GPU_STATUS), 0);
	char line[64];
	snprintf(line, sizeof(line), "flush %d 0", (int)r.pid); /* before the fork */
	assert_true(gpu_logged(&r, line));
	snprintf(line, sizeof(line), "flush %u ", child);
	assert_null(strstr(r.log, line));
	gpu_run_free(&r);
}

/* _exit skips destructors: the collector's interposed _exit flushes. */
static void test_quick_exit(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "basic", "_exit", CUPTI_ENV, NULL, NULL);
	assert_unchanged(&r, "_exit", 5);
	assert_basic(&r, (uint32_t)r.pid);
	gpu_run_free(&r);
}

/* gprof-dl run --no-gpu: CUPTI is not even loaded, and nothing is said. */
static void test_no_gpu(void **state)
{
	(void)state;
	struct gpu_run r;
	run_scenario(&r, "basic", NULL, CUPTI_ENV, "GPROF_DL_NO_GPU=1", NULL);
	assert_unchanged(&r, NULL, 0);
	assert_false(r.loaded);
	assert_int_equal(gpu_count(&r, 0, RING_REC_GPU_STATUS), 0);
	assert_int_equal(gpu_count_activity(&r, 0), 0);
	assert_int_equal(gpu_count(&r, (uint32_t)r.pid, RING_REC_PROCESS_EXIT), 1);
	gpu_run_free(&r);
}

/* Without a ring the collector is inert: CUPTI is not loaded. */
static void test_inert(void **state)
{
	(void)state;
	struct gpu_run r;
	const char *extra[] = {CUPTI_ENV, "FAKE_CUPTI_SCENARIO=basic", NULL};
	gpu_run(&r, GPU_RUN_INERT, NULL, extra);
	assert_unchanged(&r, NULL, 0);
	assert_false(r.loaded);
	assert_string_equal(r.err, "");
	gpu_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_clock_offset),
		cmocka_unit_test(test_worker_thread),
		cmocka_unit_test(test_flood_back_pressure),
		cmocka_unit_test(test_buffer_cap),
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_partial_kinds),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_not_cupti),
		cmocka_unit_test(test_privileges),
		cmocka_unit_test(test_subscriber),
		cmocka_unit_test(test_old),
		cmocka_unit_test(test_no_kernels),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_quick_exit),
		cmocka_unit_test(test_no_gpu),
		cmocka_unit_test(test_inert),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
