/*
 * cupti.h - GPU activity from CUPTI, as the collector's files see each other.
 *
 * Two parts, so that the conversion can be tested without CUPTI or a GPU:
 *
 *  - cupti.c: the CUDA injection entry point (InitializeInjection, which the
 *    driver calls at cuInit when CUDA_INJECTION64_PATH names this library),
 *    CUPTI loaded with dlopen (GPROF_DL_CUPTI_PATH, else libcupti.so.13, then
 *    .12, then libcupti.so), the activity kinds enabled, the buffers (a pool
 *    allocated at injection and recycled, so that a launch does not wait on an
 *    allocation), flushes (periodic through cuptiActivityFlushPeriod, before
 *    fork, at exit), CUPTI's dropped-record counts, and one status record
 *    (RING_REC_GPU_STATUS) saying why collection is off when it is. The
 *    collector never prints: the launcher prints the status line.
 *  - cupti_convert.c: one CUPTI activity record into its ring record (ring.h,
 *    RING_REC_GPU_*), written to the calling thread's ring.
 *
 * Record-struct versions. CUPTI hands records in the struct version of its
 * own release: CUDA 12's CUPTI (API version 19 and later below 130000)
 * Kernel9, Memcpy5, Memset4, Memory3, Synchronization, Overhead or Overhead2, Device4 or
 * 5; CUDA 13's (130000 and later) Kernel10, Memcpy6, Memset4, Memory4,
 * Synchronization2, Overhead3, Device5. Each newer version appends fields to
 * the one before, and every field the conversion reads lies in the common
 * prefix at the same offset in both (tests/collector/test_cupti_convert.c
 * checks the offsets against the toolkit's headers); fields a version appends
 * are read only when cv->version says the record has them.
 */
#ifndef GPDL_COLLECTOR_CUPTI_H
#define GPDL_COLLECTOR_CUPTI_H

#include <stddef.h>
#include <stdint.h>

struct coll_thread;

#define COLL_CUPTI_MIN_VERSION 19u     /* CUDA 12.0's CUPTI (18 is CUDA 11.8's) */
#define COLL_CUPTI_V13 130000u         /* CUDA 13's CUPTI numbers versions 130000 and up */

/* What the conversion needs to know about the CUPTI it reads. */
struct coll_cupti_conv {
	uint32_t version;  /* cuptiGetVersion() */
	int64_t ts_offset; /* added to CUPTI's timestamps; 0 when CUPTI stamps with our clock */
	/* The name of a runtime (driver == 0) or driver API function by callback
	 * id, as cuptiGetCallbackName gives it ("cudaLaunchKernel_v7000"); NULL
	 * when unknown. The conversion drops the "_vNNNN" suffix. */
	const char *(*api_name)(void *ctx, int driver, uint32_t cbid);
	void *api_ctx;
	/* A C++ demangler with __cxa_demangle's contract (malloc'd result, or
	 * NULL with *status != 0); NULL: names are kept as CUPTI gives them. */
	char *(*demangle)(const char *mangled, char *out, size_t *len, int *status);
	/* Wait at most this long for room in the ring before a record is
	 * dropped (and counted): CUPTI's threads, not the program's, convert. */
	uint64_t max_wait_ns;
};

/* Converts one CUPTI activity record (a CUpti_Activity *) into its ring
 * record, written to t's ring. 1 when written, 0 when the record is of a kind
 * or shape gprof-dl does not collect (ignored, not counted), -1 when it could
 * not be written (counted as dropped in t's slot). */
int coll_cupti_convert(struct coll_thread *t, const struct coll_cupti_conv *cv, const void *record);

/* Writes rec to t's ring, waiting up to max_wait_ns for the launcher to make
 * room. 0, or -1 when it still did not fit (counted as dropped). */
int coll_emit_wait(struct coll_thread *t, const void *rec, uint64_t max_wait_ns);

/* Writes a RING_REC_GPU_STATUS record (code: enum ring_gpu_status_code) with
 * the message, from the calling thread, waiting up to max_wait_ns for room
 * as a converted record does (a thread reporting CUPTI's drops has usually
 * just filled its ring). */
void coll_gpu_status(unsigned code, const char *msg, uint64_t max_wait_ns);

/* cupti.c: before fork (parent) and at process exit: hands every pending
 * activity buffer to the conversion. Safe to call when CUPTI is not in use,
 * and in a fork child (where it does nothing: CUDA does not survive fork). */
void coll_cupti_flush(void);

/* The injection entry point, called by the CUDA driver; exported. 1 on
 * success as the driver expects (0 tells it the injection failed; the
 * program runs on either way). */
int InitializeInjection(void);

#endif
