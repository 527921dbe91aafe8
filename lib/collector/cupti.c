/*
 * cupti.c - the CUDA injection entry point and CUPTI's activity machinery.
 *
 * The driver calls InitializeInjection at cuInit when CUDA_INJECTION64_PATH
 * names this library. It loads CUPTI with dlopen (never linked: one build runs
 * with and without CUDA), subscribes (which tells us when another CUPTI client
 * holds it, and holds it against others, as nsys does), has CUPTI stamp its
 * records on our clock, enables the activity kinds gprof-dl collects and hands
 * CUPTI a pool of activity buffers. Every completed buffer is converted record
 * by record (cupti_convert.c) into the ring of the thread that CUPTI completes
 * it on: its worker thread, or whichever thread flushes.
 *
 * Invariants:
 *  - The program runs on unchanged whatever CUPTI does: every failure ends in
 *    one RING_REC_GPU_STATUS record that names the cause and the fix (the
 *    launcher prints it) and leaves collection off. The collector never prints.
 *  - Injection happens once per process image; CUPTI is used only by the
 *    process that injected it (active_pid). A fork child, where CUDA does not
 *    survive, never touches it: its flushes do nothing.
 *  - Buffers come from a pool made at injection, so that a kernel launch that
 *    needs a fresh buffer does not wait on malloc; the pool grows one buffer
 *    at a time up to a cap, past which CUPTI is refused (it then drops records
 *    and counts them, and those counts reach the ring as RING_REC_GPU_DROPS).
 *  - Every entry point keeps errno, and conversion runs under coll_busy so that
 *    a signal handler's NVTX call on the same thread is dropped (counted), not
 *    interleaved with a half-written record.
 */
#include "lib/collector/cupti.h"
#include "lib/collector/collector.h"
#include "common/clock.h"

#include <cupti.h>

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUFFER_MB_DEFAULT 4u
#define BUFFERS_DEFAULT 8u
#define BUFFERS_MAX_DEFAULT 64u
#define FLUSH_MS_DEFAULT 200u
#define MAX_WAIT_NS 2000000000ull /* what a CUPTI thread waits for the launcher to make room */
#define STATUS_MAX RING_NAME_MAX /* the longest string a ring record names */

/* CUPTI's functions, with the toolkit's own prototypes. Optional ones (added
 * in later releases) may be NULL. */
static struct cupti_api {
	__typeof__(cuptiGetVersion) *GetVersion;
	__typeof__(cuptiGetResultString) *GetResultString;
	__typeof__(cuptiSubscribe) *Subscribe;
	__typeof__(cuptiUnsubscribe) *Unsubscribe;
	__typeof__(cuptiGetCallbackName) *GetCallbackName;
	__typeof__(cuptiSetThreadIdType) *SetThreadIdType;
	__typeof__(cuptiGetTimestamp) *GetTimestamp;
	__typeof__(cuptiActivityRegisterCallbacks) *ActivityRegisterCallbacks;
	__typeof__(cuptiActivityEnable) *ActivityEnable;
	__typeof__(cuptiActivityDisable) *ActivityDisable;
	__typeof__(cuptiActivityFlushAll) *ActivityFlushAll;
	__typeof__(cuptiActivityGetNextRecord) *ActivityGetNextRecord;
	__typeof__(cuptiActivityGetNumDroppedRecords) *ActivityGetNumDroppedRecords;
	/* optional */
	__typeof__(cuptiActivityFlushPeriod) *ActivityFlushPeriod;
	__typeof__(cuptiActivityRegisterTimestampCallback) *ActivityRegisterTimestampCallback;
	__typeof__(cuptiEnableCallback) *EnableCallback; /* --capture-range=cudaProfilerApi */
} api;

static _Atomic int injected;       /* InitializeInjection ran in this image */
static _Atomic uint32_t active_pid; /* the process CUPTI collects for; 0: none */
static struct coll_cupti_conv conv;
static char cupti_path[512];
static _Atomic int buffers_reported; /* the BUFFERS status was written */

/* ---- the buffer pool -------------------------------------------------------
 * A tiny mutex around a stack of free buffers: CUPTI asks from its own
 * threads, never from a signal handler, and the critical section is a few
 * loads and stores. */

static struct {
	pthread_mutex_t lock;
	uint8_t **free;
	uint32_t nfree, total, cap;
	size_t size;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint32_t env_uint(const char *name, uint32_t def, uint32_t lo, uint32_t hi)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || v < lo || v > hi) {
		coll_log("%s='%s' is not a number in [%u, %u]: %u is used", name, s, lo, hi, def);
		return def;
	}
	return (uint32_t)v;
}

/* malloc's alignment (16) is more than the 8 bytes CUPTI requires. */
static int pool_init(void)
{
	uint32_t mb = env_uint("GPROF_DL_CUPTI_BUFFER_MB", BUFFER_MB_DEFAULT, 1, 1024);
	uint32_t n = env_uint("GPROF_DL_CUPTI_BUFFERS", BUFFERS_DEFAULT, 1, 4096);
	uint32_t cap = env_uint("GPROF_DL_CUPTI_BUFFERS_MAX", BUFFERS_MAX_DEFAULT, 1, 4096);
	if (cap < n)
		cap = n;
	pool.size = (size_t)mb << 20;
	pool.cap = cap;
	pool.free = calloc(cap, sizeof(*pool.free));
	if (!pool.free)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *b = malloc(pool.size);
		if (!b)
			break;
		pool.free[pool.nfree++] = b;
	}
	pool.total = pool.nfree;
	coll_log("activity buffers: %u of %u MiB, at most %u", pool.total, mb, cap);
	return pool.total ? 0 : -1;
}

/* Collection did not start: the buffers CUPTI does not hold go back. */
static void pool_release(void)
{
	pthread_mutex_lock(&pool.lock);
	while (pool.nfree) {
		free(pool.free[--pool.nfree]);
		pool.total--;
	}
	pthread_mutex_unlock(&pool.lock);
}

static uint8_t *pool_get(void)
{
	uint8_t *b = NULL;
	uint32_t grown = 0;
	pthread_mutex_lock(&pool.lock);
	if (pool.nfree)
		b = pool.free[--pool.nfree];
	else if (pool.total < pool.cap)
		grown = ++pool.total; /* reserved: allocated outside the lock */
	pthread_mutex_unlock(&pool.lock);
	if (grown) {
		b = malloc(pool.size);
		if (b) {
			coll_log("activity buffer pool grew to %u buffers", grown);
		} else {
			pthread_mutex_lock(&pool.lock);
			pool.total--;
			pthread_mutex_unlock(&pool.lock);
		}
	}
	return b;
}

static void pool_put(uint8_t *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&pool.lock);
	if (pool.nfree < pool.cap) { /* always: a buffer out is one counted in total */
		pool.free[pool.nfree++] = b;
		b = NULL;
	}
	pthread_mutex_unlock(&pool.lock);
	free(b);
}

/* ---- CUPTI's callbacks ----------------------------------------------------- */

static int cupti_here(void)
{
	uint32_t pid = atomic_load_explicit(&active_pid, memory_order_acquire);
	return pid && pid == (uint32_t)getpid();
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	int saved = errno;
	uint8_t *b = pool_get();
	*buffer = b;
	*size = b ? pool.size : 0; /* none: CUPTI drops records and counts them */
	*max_records = 0;
	errno = saved;
}

static const char *result_string(CUptiResult r)
{
	const char *s = NULL;
	if (!api.GetResultString || api.GetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "an unknown CUPTI error";
	return s;
}

/* Records CUPTI lost: a DROPS record for them, and once per process the
 * status that says how to lose none. t is NULL when this thread cannot
 * write (then they are counted as events without a slot). */
static void report_drops(struct coll_thread *t, CUcontext ctx, uint32_t stream)
{
	size_t n = 0;
	if (api.ActivityGetNumDroppedRecords(ctx, stream, &n) != CUPTI_SUCCESS || !n)
		return;
	coll_log("CUPTI dropped %llu activity records", (unsigned long long)n);
	if (!t) {
		atomic_fetch_add_explicit(&coll.shm->no_slot_events, n, memory_order_relaxed);
		return;
	}
	struct ring_gpu_drops d = {
		.h = {RING_REC_GPU_DROPS, sizeof(d), 0},
		.dropped = n,
	};
	coll_emit_wait(t, &d, conv.max_wait_ns);
	int expect = 0;
	if (atomic_compare_exchange_strong(&buffers_reported, &expect, 1)) {
		char msg[STATUS_MAX];
		snprintf(msg, sizeof(msg),
			 "GPU data incomplete: CUPTI lost activity records for want of buffers: "
			 "raise GPROF_DL_CUPTI_BUFFER_MB (now %zu) or GPROF_DL_CUPTI_BUFFERS_MAX (now %u)",
			 pool.size >> 20, pool.cap);
		coll_gpu_status(RING_GPU_BUFFERS, msg, conv.max_wait_ns);
	}
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	(void)size;
	int saved = errno;
	if (!cupti_here() || !coll.shm) {
		pool_put(buffer);
		errno = saved;
		return;
	}
	/* A thread already inside the collector (a signal handler flushing in
	 * the middle of a record) must not write: its records are counted. The
	 * conversion sets coll_busy around each record itself. t NULL: the
	 * conversion counts what it would have written. */
	int busy = coll_busy;
	struct coll_thread *t = busy ? NULL : coll_thread();
	CUpti_Activity *r = NULL;
	while (buffer && api.ActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
		if (busy)
			coll_drop(coll_tls);
		else
			coll_cupti_convert(t, &conv, r);
	}
	report_drops(t, ctx, stream);
	pool_put(buffer);
	errno = saved;
}

/* The subscription holds CUPTI. Its only callbacks are those of
 * --capture-range=cudaProfilerApi: cudaProfilerStart/Stop and the driver's
 * cuProfilerStart/Stop (which the runtime's call in turn: the second of a
 * pair finds the window as the first left it, and does nothing). The window
 * changes as the call is entered, so that a Stop's own work is not in it. */
static void CUPTIAPI subscriber_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
					 const void *data)
{
	(void)userdata;
	const CUpti_CallbackData *cb = data;
	if (!cb || cb->callbackSite != CUPTI_API_ENTER || !cupti_here())
		return;
	int saved = errno;
	if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) ||
	    (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart))
		coll_window_capture(1, clock_now_ns());
	else if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) ||
		 (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop))
		coll_window_capture(0, clock_now_ns());
	errno = saved;
}

/* --capture-range=cudaProfilerApi: the four callbacks; 0, or -1 (logged)
 * when CUPTI cannot give them (then the window never opens, as a program
 * that never calls cudaProfilerStart). */
static int enable_profiler_callbacks(CUpti_SubscriberHandle sub)
{
	static const struct {
		CUpti_CallbackDomain domain;
		CUpti_CallbackId cbid;
	} cbs[] = {
		{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000},
		{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000},
		{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart},
		{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop},
	};
	if (!api.EnableCallback) {
		coll_log("--capture-range=cudaProfilerApi: this CUPTI has no cuptiEnableCallback");
		return -1;
	}
	for (size_t i = 0; i < sizeof(cbs) / sizeof(cbs[0]); i++) {
		CUptiResult r = api.EnableCallback(1, sub, cbs[i].domain, cbs[i].cbid);
		if (r != CUPTI_SUCCESS) {
			coll_log("cuptiEnableCallback(%u, %u): %s", (unsigned)cbs[i].domain, (unsigned)cbs[i].cbid,
				 result_string(r));
			return -1;
		}
	}
	return 0;
}

static uint64_t CUPTIAPI cupti_clock(void)
{
	return clock_now_ns();
}

static const char *api_name(void *ctx, int driver, uint32_t cbid)
{
	(void)ctx;
	const char *name = NULL;
	CUpti_CallbackDomain d = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	if (api.GetCallbackName(d, cbid, &name) != CUPTI_SUCCESS)
		return NULL;
	return name;
}

/* ---- flushes -------------------------------------------------------------- */

void coll_cupti_flush(void)
{
	if (!cupti_here())
		return;
	int saved = errno;
	CUptiResult r = api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (r != CUPTI_SUCCESS)
		coll_log("cuptiActivityFlushAll: %s", result_string(r));
	errno = saved;
}

/* Before fork: what CUPTI has completed reaches the ring now, from the parent.
 * Not forced: a forced flush hands over records still incomplete (kernels
 * running, their end not known yet), and a DataLoader forks often. */
static void cupti_prepare_fork(void)
{
	if (!cupti_here())
		return;
	int saved = errno;
	api.ActivityFlushAll(0);
	errno = saved;
}

/* ---- injection ------------------------------------------------------------ */

/* The C++ runtime's demangler for kernel names: the program's (a C++ or
 * PyTorch program has one), else libstdc++ loaded privately (a C program on
 * the static CUDA runtime has none; CUPTI carries its own C++ runtime
 * statically and exports nothing). Looked up here, at injection, never on
 * CUPTI's delivery path. NULL: names are kept mangled. */
static char *(*find_demangler(void))(const char *, char *, size_t *, int *)
{
	void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!f) {
		void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
		f = h ? dlsym(h, "__cxa_demangle") : NULL;
		coll_log("__cxa_demangle %s", f ? "from a private libstdc++" : "not found: kernel names stay mangled");
	}
	return (char *(*)(const char *, char *, size_t *, int *))f;
}

static const char *const cupti_names[] = {
	"libcupti.so.13",
	"libcupti.so.12",
	"libcupti.so",
	"/usr/local/cuda/lib64/libcupti.so.13",
	"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
};

/* dlerror's text without the path it starts with ("PATH: cannot open ..."). */
static const char *dlerror_reason(const char *path)
{
	const char *e = dlerror();
	if (!e)
		return "unknown error";
	size_t n = strlen(path);
	if (!strncmp(e, path, n) && e[n] == ':' && e[n + 1] == ' ')
		e += n + 2;
	return e;
}

/* Loads CUPTI: the one GPROF_DL_CUPTI_PATH names, else one the program has
 * loaded, else the first found (CUDA 12's first under CUDA 12's runtime). On
 * failure msg holds the status line. */
static void *cupti_load(char *msg, size_t len)
{
	const char *named = getenv("GPROF_DL_CUPTI_PATH");
	if (named && *named) {
		void *h = dlopen(named, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(msg, len,
				 "GPU data off: cannot load CUPTI '%s' named by --cupti-lib or GPROF_DL_CUPTI_PATH "
				 "(%s): name the CUDA toolkit's libcupti.so there",
				 named, dlerror_reason(named));
		return h;
	}
	size_t n = sizeof(cupti_names) / sizeof(cupti_names[0]);
	/* A CUPTI the program already loaded (a PyTorch wheel's own) is the one
	 * that matches its CUDA: two CUPTIs in one process would fight. */
	for (size_t i = 0; i < n; i++) {
		void *h = dlopen(cupti_names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
		if (h) {
			coll_log("'%s' is already loaded: using it", cupti_names[i]);
			return h;
		}
	}
	/* A program on CUDA 12's runtime gets CUDA 12's CUPTI first. */
	void *rt12 = dlopen("libcudart.so.12", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (rt12) {
		dlclose(rt12);
		void *h = dlopen("libcupti.so.12", RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
	}
	for (size_t i = 0; i < n; i++) {
		void *h = dlopen(cupti_names[i], RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
		coll_log("cannot load '%s': %s", cupti_names[i], dlerror_reason(cupti_names[i]));
	}
	snprintf(msg, len,
		 "GPU data off: CUPTI not found (libcupti.so.13, libcupti.so.12, libcupti.so, /usr/local/cuda): "
		 "install the CUDA toolkit's CUPTI (or the nvidia-cuda-cupti wheel) or name it with --cupti-lib");
	return NULL;
}

/* The name of the first required function h lacks, or NULL. */
static const char *cupti_resolve(void *h)
{
#define NEED(f)                                                                                    \
	do {                                                                                       \
		if (!(api.f = (__typeof__(api.f))dlsym(h, "cupti" #f)))                            \
			return "cupti" #f;                                                         \
	} while (0)
#define WANT(f) (api.f = (__typeof__(api.f))dlsym(h, "cupti" #f))
	NEED(GetVersion);
	NEED(GetResultString);
	NEED(Subscribe);
	NEED(Unsubscribe);
	NEED(GetCallbackName);
	NEED(SetThreadIdType);
	NEED(GetTimestamp);
	NEED(ActivityRegisterCallbacks);
	NEED(ActivityEnable);
	NEED(ActivityDisable);
	NEED(ActivityFlushAll);
	NEED(ActivityGetNextRecord);
	NEED(ActivityGetNumDroppedRecords);
	WANT(ActivityFlushPeriod);
	WANT(ActivityRegisterTimestampCallback);
	WANT(EnableCallback);
#undef NEED
#undef WANT
	return NULL;
}

/* The offset from CUPTI's clock to ours, from the closest of a few paired
 * reads. 0 with *ok = 0 when CUPTI has no clock to read. */
static int64_t cupti_clock_offset(int *ok)
{
	uint64_t best = UINT64_MAX;
	int64_t off = 0;
	*ok = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t c = 0, a = clock_now_ns();
		if (api.GetTimestamp(&c) != CUPTI_SUCCESS)
			continue;
		uint64_t b = clock_now_ns();
		if (b - a < best) {
			best = b - a;
			off = (int64_t)(a + (b - a) / 2) - (int64_t)c;
			*ok = 1;
		}
	}
	return off;
}

/* The kinds collected. A kind this CUPTI cannot enable is skipped, except
 * kernels: without them there is nothing to show. */
static const struct {
	CUpti_ActivityKind kind;
	const char *name;
	int needed;
} kinds[] = {
	{CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE", 0},
	{CUPTI_ACTIVITY_KIND_CONTEXT, "CONTEXT", 0},
	{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", 1},
	{CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", 0},
	{CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2", 0},
	{CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", 0},
	{CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2", 0},
	{CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", 0},
	{CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", 0},
	{CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", 0},
	{CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD", 0},
	{CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION", 0},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Whether CUPTI's error is the one that needs privileges: its status line. */
static int privileges_msg(CUptiResult r, char *msg, size_t len)
{
	if (r != CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		return 0;
	snprintf(msg, len,
		 "GPU data off: CUPTI needs GPU profiling privileges (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): "
		 "load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0 or run with "
		 "CAP_SYS_ADMIN (https://developer.nvidia.com/ERR_NVGPUCTRPERM)");
	return 1;
}

/* Enables the kinds; 0, or the status code with msg set. enabled[] says which
 * to disable again on a later failure. */
static unsigned cupti_enable(int enabled[NKINDS], char *msg, size_t len)
{
	for (size_t i = 0; i < NKINDS; i++) {
		CUptiResult r = api.ActivityEnable(kinds[i].kind);
		enabled[i] = r == CUPTI_SUCCESS;
		if (enabled[i])
			continue;
		if (privileges_msg(r, msg, len))
			return RING_GPU_PRIVILEGES;
		if (kinds[i].needed) {
			snprintf(msg, len,
				 "GPU data off: CUPTI cannot record kernels (cuptiActivityEnable(%s): %s; "
				 "CUPTI %u from '%s'): use the CUPTI of the toolkit the driver supports "
				 "(--cupti-lib), or run with --no-gpu",
				 kinds[i].name, result_string(r), conv.version, cupti_path);
			return RING_GPU_ERROR;
		}
		coll_log("activity kind %s not collected: %s", kinds[i].name, result_string(r));
	}
	return 0;
}

static void cupti_error_msg(char *msg, size_t len, const char *fn, CUptiResult r)
{
	snprintf(msg, len,
		 "GPU data off: %s failed with %s (CUPTI %u from '%s'): check that the NVIDIA driver "
		 "supports this CUPTI, or run with --no-gpu",
		 fn, result_string(r), conv.version, cupti_path);
}

/* Subscribes, sets CUPTI up and enables collection; 0 when collecting, else
 * the status code with msg set, CUPTI left as it was found. */
static unsigned cupti_start(char *msg, size_t len)
{
	CUpti_SubscriberHandle sub = NULL;
	CUptiResult r = api.Subscribe(&sub, subscriber_callback, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		snprintf(msg, len,
			 "GPU data off: another CUPTI client (torch.profiler, nsys, ncu, ...) holds CUPTI "
			 "in this process: profile with one tool at a time");
		return RING_GPU_SUBSCRIBER;
	}
	if (privileges_msg(r, msg, len))
		return RING_GPU_PRIVILEGES;
	if (r != CUPTI_SUCCESS) {
		cupti_error_msg(msg, len, "cuptiSubscribe", r);
		return RING_GPU_ERROR;
	}

	unsigned code = 0;
	int enabled[NKINDS] = {0};
	const char *fn = "cuptiSetThreadIdType";
	/* API records then carry the kernel's thread ids, as THREAD_START does. */
	r = api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (r == CUPTI_SUCCESS) {
		int ok = 0;
		if (api.ActivityRegisterTimestampCallback &&
		    api.ActivityRegisterTimestampCallback(cupti_clock) == CUPTI_SUCCESS) {
			conv.ts_offset = 0;
			ok = 1;
		} else {
			conv.ts_offset = cupti_clock_offset(&ok);
		}
		fn = "cuptiGetTimestamp";
		r = ok ? CUPTI_SUCCESS : CUPTI_ERROR_UNKNOWN;
	}
	if (r == CUPTI_SUCCESS) {
		fn = "cuptiActivityRegisterCallbacks";
		r = api.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	}
	if (r != CUPTI_SUCCESS) {
		if (!privileges_msg(r, msg, len))
			cupti_error_msg(msg, len, fn, r);
		code = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? RING_GPU_PRIVILEGES : RING_GPU_ERROR;
	} else {
		code = cupti_enable(enabled, msg, len);
	}
	if (code) {
		for (size_t i = 0; i < NKINDS; i++)
			if (enabled[i])
				api.ActivityDisable(kinds[i].kind);
		api.Unsubscribe(sub);
		return code;
	}
	if (coll_win.capture == COLL_CAPTURE_CUDA)
		enable_profiler_callbacks(sub);
	if (api.ActivityFlushPeriod) {
		uint32_t ms = env_uint("GPROF_DL_CUPTI_FLUSH_MS", FLUSH_MS_DEFAULT, 0, 3600000);
		r = api.ActivityFlushPeriod(ms);
		if (r != CUPTI_SUCCESS)
			coll_log("cuptiActivityFlushPeriod(%u): %s", ms, result_string(r));
	}
	return 0;
}

/* At injection, on the program's own thread (in cuInit): never waits. */
static void status(unsigned code, const char *msg)
{
	coll_log("%s", msg);
	coll_gpu_status(code, msg, 0);
}

static void inject(void)
{
	char msg[STATUS_MAX];
	void *h = cupti_load(msg, sizeof(msg));
	if (!h) {
		status(RING_GPU_NO_CUPTI, msg);
		return;
	}
	/* The file the loader found, for the status line. */
	struct link_map *lm = NULL;
	const char *named = getenv("GPROF_DL_CUPTI_PATH");
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
		snprintf(cupti_path, sizeof(cupti_path), "%s", lm->l_name);
	else
		snprintf(cupti_path, sizeof(cupti_path), "%s", named && *named ? named : "libcupti");
	const char *missing = cupti_resolve(h);
	if (missing) {
		snprintf(msg, sizeof(msg),
			 "GPU data off: '%s' is not a CUPTI this collector can use (it lacks %s): "
			 "name the CUDA toolkit's libcupti.so with --cupti-lib",
			 cupti_path, missing);
		dlclose(h);
		status(RING_GPU_NO_CUPTI, msg);
		return;
	}

	CUptiResult r = api.GetVersion(&conv.version);
	if (r != CUPTI_SUCCESS) {
		cupti_error_msg(msg, sizeof(msg), "cuptiGetVersion", r);
		status(RING_GPU_ERROR, msg);
		return;
	}
	if (conv.version < COLL_CUPTI_MIN_VERSION) {
		snprintf(msg, sizeof(msg),
			 "GPU data off: CUPTI %u from '%s' is older than CUDA 12's (%u): use the CUPTI of "
			 "CUDA 12 or later (--cupti-lib)",
			 conv.version, cupti_path, COLL_CUPTI_MIN_VERSION);
		status(RING_GPU_OLD_CUPTI, msg);
		return;
	}
	conv.api_name = api_name;
	conv.demangle = find_demangler();
	conv.max_wait_ns = MAX_WAIT_NS;
	if (pool_init() != 0) {
		snprintf(msg, sizeof(msg),
			 "GPU data off: no memory for CUPTI's activity buffers: lower GPROF_DL_CUPTI_BUFFER_MB "
			 "or GPROF_DL_CUPTI_BUFFERS");
		status(RING_GPU_ERROR, msg);
		return;
	}
	/* Before CUPTI can complete a buffer: its callback converts only for us. */
	atomic_store_explicit(&active_pid, (uint32_t)getpid(), memory_order_release);
	unsigned code = cupti_start(msg, sizeof(msg));
	if (code) {
		atomic_store_explicit(&active_pid, 0, memory_order_release);
		pool_release();
		status(code, msg);
		return;
	}
	pthread_atfork(cupti_prepare_fork, NULL, NULL);
	snprintf(msg, sizeof(msg), "CUPTI %u from %s", conv.version, cupti_path);
	status(RING_GPU_ON, msg);
}

COLL_EXPORT int InitializeInjection(void)
{
	int saved = errno;
	coll_init();
	int expect = 0;
	if (!coll_active() || !atomic_compare_exchange_strong(&injected, &expect, 1)) {
		errno = saved;
		return 1;
	}
	const char *off = getenv("GPROF_DL_NO_GPU");
	if (off && !strcmp(off, "1"))
		coll_log("GPROF_DL_NO_GPU=1: CUPTI not loaded");
	else
		inject();
	errno = saved;
	return 1;
}
