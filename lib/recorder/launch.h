/*
 * launch.h - the command's side of `gprof-dl run` until it is the command:
 * the collector library and its Python package found, then a child that
 * waits for the launcher to hand over the rings' path (nothing handed over:
 * the trace could not be created, so it leaves), puts the collector in its
 * environment (LD_PRELOAD, NVTX_INJECTION64_PATH, CUDA_INJECTION64_PATH
 * with gpu, PYTHONPATH, the rings' path and descriptor) and execs the
 * command. An exec failure is reported through the err pipe
 * (close-on-exec, so success closes it) as the errno. Then the launcher's
 * side: draining while the command runs (launch_supervise()).
 */
#ifndef GPDL_RECORDER_LAUNCH_H
#define GPDL_RECORDER_LAUNCH_H

#include "lib/recorder/guard.h"

#include <sys/types.h>

/* The collector library: $GPROF_DL_COLLECTOR, else beside gprof-dl
 * (self_dir) where the build and the install put it; its real path. Dies
 * with a message when it is not there. */
char *launch_collector_path(const char *self_dir);
/* The gprof_dl Python package beside the collector: <libdir>/gprof-dl/python
 * in the build tree and once installed ($GPROF_DL_PYTHON_DIR first). NULL
 * when it was not built. */
char *launch_python_dir(const char *collector);

/* What the command's process needs before it becomes the command. */
struct launch_ctx {
	char **argv;
	const char *collector, *pydir;
	int gpu, go[2], err[2], shm_fd;
};

/* The child's body (guard_start's, or a fork's): ctx is a struct launch_ctx.
 * Never returns. */
void launch_target(void *ctx);
/* The status of the command's process pid, once it ended (the others that
 * end meanwhile are not recorded: nothing ran yet). */
int launch_wait(struct guard *g, pid_t pid);
/* The launcher's side while the command runs: drains the rings until the
 * root process has ended, every descendant that ends on the way reaped (by
 * the guard, or by gprof-dl with --keep-target, g NULL) and told to the
 * recorder; the root's wait status. */
struct recorder;
int launch_supervise(struct recorder *rec, pid_t root, struct guard *g);

#endif
