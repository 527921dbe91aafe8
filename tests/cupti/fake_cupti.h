/*
 * fake_cupti.h - what the CUPTI test double (fake_cupti.c) and the tests that
 * run under it (test_cupti_inject.c) agree on: the scenarios and the records
 * each one produces.
 *
 * FAKE_CUPTI_SCENARIO picks the scenario; FAKE_CUPTI_LOG, when set, names a
 * file the double appends one line per call of interest to ("load PID",
 * "subscribe PID", "flush PID FLAG", ...), so that a test can tell what the
 * collector asked of CUPTI and from which process.
 */
#ifndef GPDL_TESTS_CUPTI_FAKE_CUPTI_H
#define GPDL_TESTS_CUPTI_FAKE_CUPTI_H

/* Scenarios (FAKE_CUPTI_SCENARIO):
 *  basic              1 device, 3 cudaLaunchKernel calls and their 3 kernels,
 *                     1 copy HtoD of FAKE_COPY_BYTES, 1 set of FAKE_SET_BYTES,
 *                     1 allocation and its free: each only when its kind is
 *                     enabled. Made once per process, at its first flush.
 *  worker             basic, delivered by the double's own worker thread (as
 *                     CUPTI's periodic flush does), the flushing thread waiting.
 *  flood              FAKE_FLOOD_KERNELS kernels, every buffer held until the
 *                     last is full (CUPTI under load has several out at once).
 *  drops              basic; the first cuptiActivityGetNumDroppedRecords says
 *                     FAKE_DROPS more were lost.
 *  partial            basic, but MEMORY2 and OVERHEAD cannot be enabled.
 *  no-kernels         CONCURRENT_KERNEL cannot be enabled.
 *  refuse-privileges  cuptiActivityEnable says CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.
 *  subscriber         cuptiSubscribe says CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED.
 *  old                cuptiGetVersion says FAKE_OLD_VERSION.
 *  launches           1 device, then the launches the program reported through
 *                     fake_cupti_launch() while it ran, each a runtime call on
 *                     the calling thread at the time of the report and its
 *                     kernel (or HtoD copy of FAKE_COPY_BYTES) just after, on
 *                     FAKE_STREAM: what CUPTI would hand over for a program
 *                     that launched them.
 *  capture            launches, each piece of work FAKE_STEP_NS after its
 *                     call (not at the flush); fake_cupti_profiler() makes
 *                     the callbacks of cudaProfilerStart/Stop and the
 *                     driver's cuProfilerStart/Stop that the subscriber
 *                     enabled (cuptiEnableCallback), at entry and exit.
 */
#define FAKE_VERSION 130001u
#define FAKE_OLD_VERSION 17u
#define FAKE_API_CALLS 3
#define FAKE_COPY_BYTES 4096u
#define FAKE_SET_BYTES 256u
#define FAKE_SET_VALUE 0x5au
#define FAKE_ALLOC_BYTES (1u << 20)
#define FAKE_ALLOC_ADDRESS 0x7f0000200000ull
#define FAKE_DROPS 5u
#define FAKE_FLOOD_KERNELS 30000u
#define FAKE_KERNEL_NAME "_Z6vecAddPfS_S_i"
#define FAKE_DEVICE_NAME "Fake GPU"
#define FAKE_STREAM 7u
#define FAKE_CONTEXT 1u
#define FAKE_SM_COUNT 132u
#define FAKE_MAX_LAUNCHES 4096
#define FAKE_GEMM_NAME "_Z4gemmPKfS0_Pfi" /* gemm(float const*, float const*, float*, int) */

/* Exported by the double (scenario "launches"): the program says it launched
 * the kernel of that mangled name now (a copy when name is NULL). */
typedef void (*fake_cupti_launch_fn)(const char *mangled);
#define FAKE_LAUNCH_SYMBOL "fake_cupti_launch"

/* Exported by the double (scenario "capture"): the program calls
 * cudaProfilerStart (on) or cudaProfilerStop now. */
typedef void (*fake_cupti_profiler_fn)(int on);
#define FAKE_PROFILER_SYMBOL "fake_cupti_profiler"

/* Nanoseconds between the records of one scenario, and each one's length. */
#define FAKE_STEP_NS 1000u
#define FAKE_LEN_NS 500u

#endif
