/*
 * gpu_target.c - a program test-cupti-inject runs under libgprof-dl-collector.so.
 *
 * It does what the CUDA driver does at cuInit when CUDA_INJECTION64_PATH names
 * a library: dlopen it and call its InitializeInjection (the driver wants 1).
 * Then some work, and an end chosen by argv[1]:
 *   (none)  return from main
 *   fork    fork a child that exits with 3, wait for it, then return
 *   _exit   end with _exit(5), stdout flushed first
 *   ops     (with NVTX) 4 steps, each an Operator range "aten::mm" that
 *           launches the gemm kernel twice and one "aten::copy_" that copies,
 *           reported to the CUPTI test double (scenario "launches") as a CUDA
 *           program's launches would reach CUPTI
 *   capture (with NVTX) 6 such steps, cudaProfilerStart/Stop around steps
 *           2-3 and 5 (scenario "capture")
 *   autograd (with NVTX) 4 steps as a PyTorch CUDA training loop runs them:
 *           Forward's "aten::mm" launches gemm twice on the main thread;
 *           during Backward (on the main thread) a second thread, as
 *           PyTorch's autograd engine, launches it 3 times inside an
 *           "autograd::engine::evaluate_function: MmBackward0" operator
 * Its stdout and exit status are the same with and without the collector.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/cupti/fake_cupti.h"
#if GPDL_TARGET_NVTX
#include "lib/collector/gprof-dl-nvtx.h"
#include <nvtx3/nvToolsExt.h>
#endif

static int inject(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	if (!path || !*path)
		return 0;
	void *h = dlopen(path, RTLD_NOW);
	int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
	if (!init) {
		fprintf(stderr, "gpu-target: no InitializeInjection in '%s'\n", path);
		return -1;
	}
	return init() == 1 ? 0 : -1;
}

#if GPDL_TARGET_NVTX
static void range(nvtxDomainHandle_t d, uint32_t category, const char *name)
{
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = category;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	nvtxDomainRangePushEx(d, &a);
}

/* The steps of "ops"; 0, or -1 when the double is not there to tell. */
/* A symbol of the CUPTI test double: the collector's copy when it loaded
 * one; else (a bare run) our own. NULL, said, when the double is not there. */
static void *fake_symbol(const char *name)
{
	const char *cupti = getenv("GPROF_DL_CUPTI_PATH");
	void *h = cupti ? dlopen(cupti, RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (!h && cupti)
		h = dlopen(cupti, RTLD_NOW | RTLD_LOCAL);
	void *sym = h ? dlsym(h, name) : NULL;
	if (!sym)
		fprintf(stderr, "gpu-target: no %s in '%s'\n", name, cupti ? cupti : "");
	return sym;
}

static int ops(void)
{
	fake_cupti_launch_fn launch = (fake_cupti_launch_fn)fake_symbol(FAKE_LAUNCH_SYMBOL);
	if (!launch)
		return -1;
	nvtxDomainHandle_t d = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
	for (int step = 0; step < 4; step++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfileStep#%d", step);
		range(d, GPROF_DL_CAT_PROFILE_STEP, name);
		range(d, GPROF_DL_CAT_OPERATOR, "aten::mm");
		launch(FAKE_GEMM_NAME);
		launch(FAKE_GEMM_NAME);
		nvtxDomainRangePop(d);
		range(d, GPROF_DL_CAT_OPERATOR, "aten::copy_");
		launch(NULL);
		nvtxDomainRangePop(d);
		nvtxDomainRangePop(d);
	}
	printf("ops: 4 steps\n");
	return 0;
}

static fake_cupti_launch_fn autograd_launch;

/* The autograd engine's thread: backward's kernels, launched from it. */
static void *autograd_engine(void *arg)
{
	nvtxDomainHandle_t d = arg;
	range(d, GPROF_DL_CAT_OPERATOR, "autograd::engine::evaluate_function: MmBackward0");
	for (int k = 0; k < 3; k++)
		autograd_launch(FAKE_GEMM_NAME);
	nvtxDomainRangePop(d);
	return NULL;
}

/* "autograd": see the top. */
static int autograd(void)
{
	autograd_launch = (fake_cupti_launch_fn)fake_symbol(FAKE_LAUNCH_SYMBOL);
	if (!autograd_launch)
		return -1;
	nvtxDomainHandle_t d = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
	for (int step = 0; step < 4; step++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfileStep#%d", step);
		range(d, GPROF_DL_CAT_PROFILE_STEP, name);
		range(d, GPROF_DL_CAT_FORWARD, "Forward");
		range(d, GPROF_DL_CAT_OPERATOR, "aten::mm");
		autograd_launch(FAKE_GEMM_NAME);
		autograd_launch(FAKE_GEMM_NAME);
		nvtxDomainRangePop(d);
		nvtxDomainRangePop(d);
		range(d, GPROF_DL_CAT_BACKWARD, "Backward");
		pthread_t t;
		if (pthread_create(&t, NULL, autograd_engine, d) != 0)
			return -1;
		pthread_join(t, NULL);
		nvtxDomainRangePop(d);
		nvtxDomainRangePop(d);
	}
	printf("autograd: 4 steps\n");
	return 0;
}

/* "capture": 6 steps as those of "ops"; cudaProfilerStart before step 2,
 * Stop after step 3, and again Start before step 5 and Stop after it. A
 * step waits 2 ms before it ends, so that its GPU work (FAKE_STEP_NS after
 * each call) begins well inside the window its calls were in. */
static int capture(void)
{
	fake_cupti_launch_fn launch = (fake_cupti_launch_fn)fake_symbol(FAKE_LAUNCH_SYMBOL);
	fake_cupti_profiler_fn profiler =
		(fake_cupti_profiler_fn)fake_symbol(FAKE_PROFILER_SYMBOL);
	if (!launch || !profiler)
		return -1;
	nvtxDomainHandle_t d = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
	struct timespec pause = {0, 2000000};
	for (int step = 0; step < 6; step++) {
		char name[32];
		if (step == 2 || step == 5)
			profiler(1);
		snprintf(name, sizeof(name), "ProfileStep#%d", step);
		range(d, GPROF_DL_CAT_PROFILE_STEP, name);
		range(d, GPROF_DL_CAT_OPERATOR, "aten::mm");
		launch(FAKE_GEMM_NAME);
		launch(FAKE_GEMM_NAME);
		nvtxDomainRangePop(d);
		range(d, GPROF_DL_CAT_OPERATOR, "aten::copy_");
		launch(NULL);
		nvtxDomainRangePop(d);
		nanosleep(&pause, NULL);
		nvtxDomainRangePop(d);
		if (step == 3 || step == 5)
			profiler(0);
	}
	printf("capture: 6 steps\n");
	return 0;
}
#endif

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	printf("hello from the gpu target\n");
	errno = 4242;
	if (inject() != 0)
		return 9;
	int e = errno;
	volatile unsigned long long sum = 0;
	for (unsigned long long i = 1; i <= 1000000; i++)
		sum += i;
	printf("sum %llu\n", (unsigned long long)sum);
	printf("errno %s\n", e == 4242 ? "kept" : "changed");
	if (!strcmp(mode, "fork")) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			return 8;
		if (pid == 0)
			exit(3);
		int status = 0;
		if (waitpid(pid, &status, 0) != pid)
			return 7;
		printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
#if GPDL_TARGET_NVTX
	if (!strcmp(mode, "ops") && ops() != 0)
		return 6;
	if (!strcmp(mode, "capture") && capture() != 0)
		return 6;
	if (!strcmp(mode, "autograd") && autograd() != 0)
		return 6;
#endif
	if (!strcmp(mode, "_exit")) {
		fflush(stdout);
		_exit(5);
	}
	return 0;
}
