/*
 * target.c - a program the collector tests run under libgprof-dl-collector.so,
 * as `gprof-dl run` would: one scenario per run, named by argv[1].
 */
#include <nvtx3/nvToolsExt.h>

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
	if (!strcmp(what, "kill")) {
		nvtxRangePushA("k0");
		nvtxRangePushA("k1");
		raise(SIGKILL);
	}
	fprintf(stderr, "collector-target: unknown scenario '%s'\n", what);
	return 2;
}
