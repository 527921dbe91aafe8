/*
 * harness.h - runs gpu-target under libgprof-dl-collector.so the way
 * `gprof-dl run` does (LD_PRELOAD, CUDA_INJECTION64_PATH, a ring in a memfd
 * named by GPROF_DL_SHM), with a thread draining the ring while the target
 * runs, as the launcher's recorder does: a target may write far more than a
 * slot holds. Then the records of every slot are read back as a struct view
 * (tests/collector/records.h).
 */
#ifndef GPDL_TESTS_CUPTI_HARNESS_H
#define GPDL_TESTS_CUPTI_HARNESS_H

#include "tests/collector/records.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum gpu_run_kind {
	GPU_RUN_BARE,      /* no collector at all */
	GPU_RUN_INERT,     /* collector injected, no ring */
	GPU_RUN_RECORDING, /* as under gprof-dl run */
};

struct gpu_run {
	struct ring_shm *shm;
	size_t len;
	int status;
	pid_t pid;
	uint64_t t0, t1; /* CLOCK_MONOTONIC around the target's whole life */
	char out[4096], err[65536];
	char log[65536]; /* what fake-cupti logged (FAKE_CUPTI_LOG) */
	int loaded;      /* fake-cupti's log exists: it was loaded */
	struct view v;
};

#define GPU_RING_SLOTS 16u
#define GPU_RING_BYTES (1u << 16)

/* Runs gpu-target with argv[1] = mode (NULL: none) and the extra environment
 * (NULL-terminated, may be NULL). */
void gpu_run(struct gpu_run *r, enum gpu_run_kind kind, const char *mode, const char *const *extra);
void gpu_run_free(struct gpu_run *r);

/* The pid of the thread whose records s holds (its THREAD_START), 0: none. */
uint32_t gpu_slot_pid(const struct view_slot *s);
/* Records of kind written by the processes pid (0: any), over every slot. */
size_t gpu_count(const struct gpu_run *r, uint32_t pid, uint16_t kind);
/* The nth of them, in slot order then ring order; NULL when fewer. */
const void *gpu_nth(const struct gpu_run *r, uint32_t pid, uint16_t kind, size_t nth);
/* Every GPU activity record (API, WORK, MEMORY, SYNC, OVERHEAD, EXTCORR,
 * DEVICE, DROPS), not STATUS. */
size_t gpu_count_activity(const struct gpu_run *r, uint32_t pid);
/* Records that did not fit, over every slot, and events of threads without one. */
uint64_t gpu_dropped(const struct gpu_run *r);
/* Whether line (a whole line) is in the fake's log. */
int gpu_logged(const struct gpu_run *r, const char *line);

#endif
