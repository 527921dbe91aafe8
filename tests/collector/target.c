/*
 * target.c - a program the collector tests run under libgprof-dl-collector.so,
 * as `gprof-dl run` would: one scenario per run, named by argv[1].
 */
#include <nvtx3/nvToolsExt.h>

#include "lib/collector/gprof-dl-api.h"
#include "lib/collector/gprof-dl-nvtx.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int target_lib_range(const char *name);

static int basic(void)
{
	printf("hello from the target\n");
	fprintf(stderr, "a line on stderr\n");
	errno = 777;
	int outer = nvtxRangePushA("exe outer");
	int inner = target_lib_range("lib inner");
	nvtxDomainHandle_t d = nvtxDomainCreateA("target domain");
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "in domain";
	nvtxDomainRangePushEx(d, &a);
	nvtxDomainRangePop(d);
	nvtxRangePop();
	int e = errno;
	/* Levels say whether NVTX reached a tool: -2 when it did not. */
	printf("levels %s\n", outer == 0 && inner == 1 ? "tracked" : outer == -2 && inner == -2 ? "no-op" : "wrong");
	printf("errno %s\n", e == 777 ? "kept" : "changed");
	return 0;
}

static void *thread_main(void *arg)
{
	(void)arg;
	nvtxRangePushA("in thread");
	nvtxRangePop();
	return NULL;
}

static int threads(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, thread_main, NULL) != 0 || pthread_join(th, NULL) != 0)
		return 1;
	return 0;
}

static int forks(void)
{
	nvtxRangePushA("parent");
	pid_t c = fork();
	if (c < 0)
		return 1;
	if (c == 0) {
		nvtxRangePushA("child");
		nvtxRangePop();
		exit(0);
	}
	int status;
	if (waitpid(c, &status, 0) != c || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	nvtxRangePop();
	return 0;
}

static int execs(void)
{
	nvtxRangePushA("before exec");
	nvtxRangePop();
	fflush(stdout);
	execl("/proc/self/exe", "collector-target", "basic", (char *)NULL);
	return 1;
}

/* ---- the bindings' interface, the recording window, torch's messages ----- */

static const struct gprof_dl_api *find_api(void)
{
	gprof_dl_api_fn fn = (gprof_dl_api_fn)dlsym(RTLD_DEFAULT, GPROF_DL_API_SYMBOL);
	return fn ? fn(GPROF_DL_API_VERSION) : NULL;
}

static nvtxEventAttributes_t attr(const char *msg, uint32_t category)
{
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = category;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return a;
}

/* An NVTX step (16 samples) around a default-domain range; three steps made
 * through the interface, each with a Forward holding an operator, a mark and
 * an Operator made by torch_nvtx; then torch's messages with torch_nvtx on
 * and off. */
static int api_scenario(void)
{
	const struct gprof_dl_api *api = find_api();
	if (!api) {
		printf("no api\n");
		return 3;
	}
	nvtxDomainHandle_t d = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
	nvtxEventAttributes_t st = attr("nvtx step", GPROF_DL_CAT_PROFILE_STEP);
	st.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	st.payload.ullValue = 16;
	nvtxDomainRangePushEx(d, &st);
	nvtxRangePushA("nvtx inner");
	nvtxRangePop();
	nvtxDomainRangePop(d);

	uint32_t fwd = api->string("forward", 7), mm = api->string("aten::mm", 8);
	uint32_t shapes = api->string("[[2, 3], [3, 4]]", 16), tick = api->string("tick", 4);
	uint32_t step = api->string("ProfileStep", 11);
	for (int i = 0; i < 3; i++) {
		api->step((uint64_t)i);
		uint64_t t0 = api->now();
		api->push(GPROF_DL_CAT_FORWARD, fwd);
		api->op_push(mm, 10 + i, shapes);
		api->pop();
		api->pop();
		api->mark(GPROF_DL_CAT_OPTIMIZATION, tick);
		api->range(GPROF_DL_CAT_PROFILE_STEP, step, t0, api->now(), 32);
	}
	api->torch_nvtx(1);
	nvtxRangePushA("aten::relu, seq = 7, op_id = 99, sizes = [[4]]");
	nvtxRangePop();
	api->torch_nvtx(0);
	nvtxRangePushA("aten::relu, seq = 8, op_id = 100");
	nvtxRangePop();
	printf("api options %u detail %d\n", api->options(), *api->detail);
	return 0;
}

/* Run with --paused: ranges follow their push; then killed with ranges open,
 * one pushed while paused. */
static int window_kill_scenario(void)
{
	const struct gprof_dl_api *api = find_api();
	if (!api)
		return 3;
	nvtxRangePushA("pushed off, popped on");
	api->start();
	nvtxRangePop();
	nvtxRangePushA("pushed on, popped off");
	api->stop();
	nvtxRangePop();
	api->op_push(api->string("open off", 8), 1, 0);
	api->start();
	api->op_push(api->string("open on", 7), 5, api->string("[[8]]", 5));
	nvtxDomainHandle_t d = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
	nvtxEventAttributes_t st = attr("open step", GPROF_DL_CAT_PROFILE_STEP);
	st.payloadType = NVTX_PAYLOAD_TYPE_INT32;
	st.payload.iValue = 8;
	nvtxDomainRangePushEx(d, &st);
	fflush(stdout);
	raise(SIGKILL);
	return 1;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "basic";
	if (!strcmp(what, "basic"))
		return basic();
	if (!strcmp(what, "exit3")) {
		nvtxRangePushA("x");
		nvtxRangePop();
		exit(3);
	}
	if (!strcmp(what, "_exit5")) {
		nvtxMarkA("x");
		_exit(5);
	}
	if (!strcmp(what, "thread"))
		return threads();
	if (!strcmp(what, "fork"))
		return forks();
	if (!strcmp(what, "exec"))
		return execs();
	if (!strcmp(what, "api"))
		return api_scenario();
	if (!strcmp(what, "window-kill"))
		return window_kill_scenario();
	if (!strcmp(what, "kill")) {
		nvtxRangePushA("k0");
		nvtxRangePushA("k1");
		raise(SIGKILL);
	}
	fprintf(stderr, "collector-target: unknown scenario '%s'\n", what);
	return 2;
}
