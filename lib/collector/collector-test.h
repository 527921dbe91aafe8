/*
 * collector-test.h - hooks for the collector's unit tests, which link its
 * static library and drive it in-process through real NVTX calls.
 *
 * A test makes a ring (ring_shm_init over an anonymous shared mapping), attaches
 * the collector to it as the constructor would to the launcher's, makes NVTX
 * calls, detaches (as at process exit) and reads the slots back with
 * ring_read. Only the calling thread may be alive in the collector across
 * attach and detach.
 */
#ifndef GPDL_COLLECTOR_TEST_H
#define GPDL_COLLECTOR_TEST_H

#include "lib/ring/ring.h"

#include <stddef.h>
#include <stdint.h>

/* Writes PROCESS_START and the calling thread's THREAD_START into shm. 0, or
 * -1 when shm is not a valid ring. A ring already attached is detached first. */
int collector_test_attach(struct ring_shm *shm, size_t len);
/* Writes the calling thread's end and PROCESS_EXIT, releases its slot and
 * leaves the collector inert. */
void collector_test_detach(void);

/* The NVTX entry point (nvToolsExt's NvtxInitializeInjectionNvtxFunc_t). */
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id));

/* The bindings' interface (gprof-dl-api.h), as the library exports it. */
struct gprof_dl_api;
const struct gprof_dl_api *gprof_dl_api(uint32_t version);

#endif
