/*
 * launch.c - the command's process before it is the command (launch.h):
 * where the collector and its Python package are, the environment that
 * injects them, and the exec.
 */
#include "lib/recorder/launch.h"

#include "gpdl-config.h"
#include "common/error.h"
#include "lib/recorder/recorder.h"
#include "lib/ring/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

char *launch_collector_path(const char *self_dir)
{
	const char *env = getenv("GPROF_DL_COLLECTOR");
	char *path;
	if (env && *env) {
		path = xstrdup(env);
	} else {
		const char *dir = self_dir;
		path = xmalloc(strlen(dir) + strlen(GPDL_COLLECTOR_RELDIR) + strlen(GPDL_COLLECTOR_NAME) + 3);
		sprintf(path, "%s/%s/%s", dir, GPDL_COLLECTOR_RELDIR, GPDL_COLLECTOR_NAME);
	}
	char *real = realpath(path, NULL);
	if (!real)
		die_errno("cannot find the collector '%s'", path);
	free(path);
	return real;
}

char *launch_python_dir(const char *collector)
{
	const char *env = getenv("GPROF_DL_PYTHON_DIR");
	if (env && *env)
		return xstrdup(env);
	const char *slash = strrchr(collector, '/');
	size_t n = slash ? (size_t)(slash - collector) : 0;
	char *dir = xmalloc(n + 32);
	memcpy(dir, collector, n);
	strcpy(dir + n, "/gprof-dl/python");
	char *probe = xmalloc(strlen(dir) + 32);
	sprintf(probe, "%s/sitecustomize.py", dir);
	int ok = access(probe, R_OK) == 0;
	free(probe);
	if (!ok) {
		free(dir);
		return NULL;
	}
	return dir;
}

static void set_env_prepend(const char *name, const char *value)
{
	const char *old = getenv(name);
	if (!old || !*old) {
		setenv(name, value, 1);
		return;
	}
	char *v = xmalloc(strlen(value) + strlen(old) + 2);
	sprintf(v, "%s:%s", value, old);
	setenv(name, v, 1);
	free(v);
}

/* The child: wait for the launcher to hand over the rings' path, then
 * become CMD; nothing handed over (the trace could not be created): leave.
 * An exec failure is reported through err_fd (close-on-exec, so success
 * closes it). */
static void __attribute__((noreturn)) exec_target(char **argv, const char *collector, const char *pydir,
						  int gpu, int go_fd, int err_fd, int shm_fd)
{
	char shm[256];
	size_t n = 0;
	for (;;) {
		ssize_t k = read(go_fd, shm + n, sizeof(shm) - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(go_fd);
	if (!n)
		_exit(1);
	shm[n] = '\0';
	if (pydir)
		set_env_prepend("PYTHONPATH", pydir);
	set_env_prepend("LD_PRELOAD", collector);
	setenv("NVTX_INJECTION64_PATH", collector, 1);
	if (gpu)
		setenv("CUDA_INJECTION64_PATH", collector, 1);
	setenv(RING_ENV, shm, 1);
	/* inherited by the command, for its images that cannot open the path */
	char fdnum[16];
	snprintf(fdnum, sizeof(fdnum), "%d", shm_fd);
	if (fcntl(shm_fd, F_SETFD, 0) == 0)
		setenv(RING_FD_ENV, fdnum, 1);
	else
		unsetenv(RING_FD_ENV);
	execvp(argv[0], argv);
	int e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

void launch_target(void *ctx)
{
	struct launch_ctx *t = ctx;
	close(t->go[1]);
	close(t->err[0]);
	exec_target(t->argv, t->collector, t->pydir, t->gpu, t->go[0], t->err[1], t->shm_fd);
}

int launch_wait(struct guard *g, pid_t pid)
{
	pid_t p;
	int status = 0;
	struct rusage ru;
	for (;;) {
		int k = guard_reaped(g, &p, &status, &ru, 100);
		if (k < 0)
			return W_EXITCODE(1, 0);
		if (k > 0 && p == pid && !WIFSTOPPED(status) && !WIFCONTINUED(status))
			return status;
	}
}

int launch_supervise(struct recorder *rec, pid_t root, struct guard *g)
{
	int root_status = -1;
	recorder_spiller_start(rec);
	while (root_status < 0) {
		uint64_t drained = recorder_poll(rec);
		for (;;) {
			int status;
			struct rusage ru;
			pid_t p;
			int k = guard_reaped(g, &p, &status, &ru, 0);
			if (k < 0 && root_status < 0)
				root_status = W_EXITCODE(0, SIGKILL); /* none left, the root not told */
			if (k <= 0)
				break;
			if (WIFSTOPPED(status) || WIFCONTINUED(status))
				continue;
			recorder_process_reaped(rec, p, status, &ru);
			if (p == root)
				root_status = status;
		}
		/* A busy target fills a 1 MiB ring in about 2 ms: while records
		 * flow, poll again at once or soon; sleep longer only when idle,
		 * and then a ring half full wakes the launcher (ring_wait()). */
		if (root_status < 0 && drained < 64 * 1024 && !recorder_backlog(rec))
			recorder_wait(rec, (drained ? 200 : 2000) * 1000ull);
	}
	return root_status;
}
