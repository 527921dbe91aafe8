/*
 * fake_cupti.c - a TEST DOUBLE of CUPTI, for the collector's injection code
 * (lib/collector/cupti.c) only. gprof-dl itself never links or loads it: the
 * product uses NVIDIA's libcupti, dlopen'ed at run time. Nothing here is
 * linked against the real CUPTI; only the toolkit's headers are used, so that
 * every function has CUPTI's real prototype and every record CUPTI's real
 * struct (CUDA 13's versions: Kernel10, Memcpy6, Memset4, Memory4, API,
 * Device5).
 *
 * It behaves like CUPTI where the collector depends on it:
 *  - cuptiActivityRegisterCallbacks keeps the two buffer callbacks;
 *    cuptiActivityFlushAll asks for buffers through the first, fills them with
 *    the scenario's records (fake_cupti.h), of the enabled kinds only, and
 *    hands them back through the second; cuptiActivityGetNextRecord walks them.
 *  - A refused buffer (NULL, or too small) loses the record, counted, and
 *    cuptiActivityGetNumDroppedRecords reports the count once, as CUPTI does.
 *  - Timestamps come from the callback cuptiActivityRegisterTimestampCallback
 *    registered, else from CLOCK_REALTIME (CUPTI's own clock on Linux). Built
 *    with FAKE_NO_TS_CALLBACK it has no such function, like CUPTI before 12.x.
 *  - API records carry the injecting thread's kernel tid only after
 *    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), else its
 *    pthread id, as CUPTI does.
 *  - A scenario's records are made once per process, at its first flush, so a
 *    forked child that flushed would make (and write) its own.
 */
#include "tests/cupti/fake_cupti.h"

#include <cupti.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define MAX_KIND 128
#define MAX_HELD 4096

static char scenario[32] = "basic";
static CUpti_BuffersCallbackRequestFunc buffer_requested;
static CUpti_BuffersCallbackCompleteFunc buffer_completed;
static CUpti_TimestampCallbackFunc timestamp_cb;
static CUpti_ActivityThreadIdType tid_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
static int enabled[MAX_KIND];
static int subscribed;
static uint32_t caller_tid;         /* the thread that subscribed: it "made the calls" */
static unsigned long caller_pthread;
static pid_t made_pid;              /* the process whose records were made */
static size_t lost;                 /* records without a buffer, not reported yet */
static int extra_drops_reported;
static pthread_mutex_t deliver_lock = PTHREAD_MUTEX_INITIALIZER;

static int is(const char *name)
{
	return !strcmp(scenario, name);
}

static void fake_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fake_log(const char *fmt, ...)
{
	const char *path = getenv("FAKE_CUPTI_LOG");
	if (!path || !*path)
		return;
	int saved = errno;
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, line, (size_t)n) != n)
			n = 0;
		close(fd);
	}
	errno = saved;
}

__attribute__((constructor)) static void fake_load(void)
{
	const char *s = getenv("FAKE_CUPTI_SCENARIO");
	if (s && *s)
		snprintf(scenario, sizeof(scenario), "%s", s);
	fake_log("load %d %s", (int)getpid(), scenario);
}

static uint64_t fake_now(void)
{
	if (timestamp_cb)
		return timestamp_cb();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- filling buffers -------------------------------------------------------- */

struct held {
	uint8_t *buf;
	size_t size, used;
};

struct writer {
	struct held cur;
	int hold_all;   /* keep every buffer until the end (flood) */
	int nheld;
	struct held held[MAX_HELD];
};

static void complete(struct held *h)
{
	buffer_completed(NULL, 0, h->buf, h->size, h->used);
}

static void writer_retire(struct writer *w)
{
	if (!w->cur.buf)
		return;
	if (w->hold_all && w->nheld < MAX_HELD)
		w->held[w->nheld++] = w->cur;
	else
		complete(&w->cur);
	memset(&w->cur, 0, sizeof(w->cur));
}

static void writer_end(struct writer *w)
{
	writer_retire(w);
	for (int i = 0; i < w->nheld; i++)
		complete(&w->held[i]);
	w->nheld = 0;
}

/* Room for one record of size bytes, zeroed; NULL (counted as lost) when no
 * buffer was given. */
static void *record(struct writer *w, size_t size)
{
	if (!w->cur.buf || w->cur.used + size > w->cur.size) {
		writer_retire(w);
		uint8_t *b = NULL;
		size_t len = 0, max = 0;
		buffer_requested(&b, &len, &max);
		if (b && ((uintptr_t)b & 7u)) {
			fprintf(stderr, "fake-cupti: buffer %p is not 8-byte aligned\n", (void *)b);
			abort();
		}
		if (!b || len < size) {
			if (b) { /* too small to use: handed back empty */
				struct held h = {b, len, 0};
				complete(&h);
			}
			lost++;
			return NULL;
		}
		w->cur = (struct held){b, len, 0};
	}
	void *p = w->cur.buf + w->cur.used;
	w->cur.used += size;
	memset(p, 0, size);
	return p;
}

static uint32_t api_thread_id(void)
{
	return tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? caller_tid : (uint32_t)caller_pthread;
}

struct clockwork {
	uint64_t t;
	int fixed; /* the work follows its call at once, not at the flush (scenario "capture") */
};

/* The next record's start: records of a scenario follow each other. */
static uint64_t tick(struct clockwork *c)
{
	if (c->fixed)
		return c->t += FAKE_STEP_NS;
	uint64_t now = fake_now();
	c->t = now > c->t + FAKE_STEP_NS ? now : c->t + FAKE_STEP_NS;
	return c->t;
}

static void make_device(struct writer *w)
{
	CUpti_ActivityDevice5 *d = record(w, sizeof(*d));
	if (!d)
		return;
	d->kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d->globalMemorySize = 80ull << 30;
	d->numThreadsPerWarp = 32;
	d->coreClockRate = 1980000;
	d->numMultiprocessors = FAKE_SM_COUNT;
	d->maxWarpsPerMultiprocessor = 64;
	d->maxBlocksPerMultiprocessor = 32;
	d->maxSharedMemoryPerMultiprocessor = 233472;
	d->maxRegistersPerMultiprocessor = 65536;
	d->maxRegistersPerBlock = 65536;
	d->maxSharedMemoryPerBlock = 49152;
	d->maxThreadsPerBlock = 1024;
	d->computeCapabilityMajor = 9;
	d->computeCapabilityMinor = 0;
	d->id = 0;
	d->name = FAKE_DEVICE_NAME;
}

static void make_api(struct writer *w, struct clockwork *c, uint32_t correlation)
{
	CUpti_ActivityAPI *a = record(w, sizeof(*a));
	if (!a)
		return;
	a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	a->start = tick(c);
	a->end = a->start + FAKE_LEN_NS;
	a->processId = (uint32_t)getpid();
	a->threadId = api_thread_id();
	a->correlationId = correlation;
	a->returnValue = 0;
}

static void make_kernel_named(struct writer *w, struct clockwork *c, uint32_t correlation,
			      const char *name)
{
	CUpti_ActivityKernel10 *k = record(w, sizeof(*k));
	if (!k)
		return;
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->registersPerThread = 32;
	k->start = tick(c);
	k->end = k->start + FAKE_LEN_NS;
	k->completed = k->end;
	k->deviceId = 0;
	k->contextId = FAKE_CONTEXT;
	k->streamId = FAKE_STREAM;
	k->gridX = 4, k->gridY = 1, k->gridZ = 1;
	k->blockX = 256, k->blockY = 1, k->blockZ = 1;
	k->dynamicSharedMemory = 1024;
	k->correlationId = correlation;
	k->gridId = correlation;
	k->name = name;
}

static void make_kernel(struct writer *w, struct clockwork *c, uint32_t correlation)
{
	make_kernel_named(w, c, correlation, FAKE_KERNEL_NAME);
}

static void make_copy(struct writer *w, struct clockwork *c, uint32_t correlation)
{
	CUpti_ActivityMemcpy6 *m = record(w, sizeof(*m));
	if (!m)
		return;
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m->bytes = FAKE_COPY_BYTES;
	m->start = tick(c);
	m->end = m->start + FAKE_LEN_NS;
	m->deviceId = 0;
	m->contextId = FAKE_CONTEXT;
	m->streamId = FAKE_STREAM;
	m->correlationId = correlation;
}

static void make_set(struct writer *w, struct clockwork *c, uint32_t correlation)
{
	CUpti_ActivityMemset4 *m = record(w, sizeof(*m));
	if (!m)
		return;
	m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m->value = FAKE_SET_VALUE;
	m->bytes = FAKE_SET_BYTES;
	m->start = tick(c);
	m->end = m->start + FAKE_LEN_NS;
	m->deviceId = 0;
	m->contextId = FAKE_CONTEXT;
	m->streamId = FAKE_STREAM;
	m->correlationId = correlation;
	m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
}

static void make_memory(struct writer *w, struct clockwork *c, uint32_t correlation,
			CUpti_ActivityMemoryOperationType op)
{
	CUpti_ActivityMemory4 *m = record(w, sizeof(*m));
	if (!m)
		return;
	m->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m->memoryOperationType = op;
	m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m->correlationId = correlation;
	m->address = FAKE_ALLOC_ADDRESS;
	m->bytes = FAKE_ALLOC_BYTES;
	m->timestamp = tick(c);
	m->processId = (uint32_t)getpid();
	m->deviceId = 0;
	m->contextId = FAKE_CONTEXT;
}

static void make_basic(struct writer *w)
{
	struct clockwork c = {0};
	if (enabled[CUPTI_ACTIVITY_KIND_DEVICE])
		make_device(w);
	for (uint32_t i = 1; i <= FAKE_API_CALLS; i++) {
		if (enabled[CUPTI_ACTIVITY_KIND_RUNTIME])
			make_api(w, &c, i);
		if (enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL])
			make_kernel(w, &c, i);
	}
	if (enabled[CUPTI_ACTIVITY_KIND_MEMCPY])
		make_copy(w, &c, FAKE_API_CALLS + 1);
	if (enabled[CUPTI_ACTIVITY_KIND_MEMSET])
		make_set(w, &c, FAKE_API_CALLS + 2);
	if (enabled[CUPTI_ACTIVITY_KIND_MEMORY2]) {
		make_memory(w, &c, FAKE_API_CALLS + 3, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
		make_memory(w, &c, FAKE_API_CALLS + 4, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);
	}
}

/* ---- scenario "launches" ------------------------------------------------------ */

struct launch {
	uint64_t start, end; /* the runtime call, on CUPTI's clock */
	uint32_t tid;
	const char *name;    /* NULL: a copy */
};

static struct launch launches[FAKE_MAX_LAUNCHES];
static _Atomic int nlaunches;

FAKE_EXPORT void fake_cupti_launch(const char *mangled)
{
	int i = atomic_fetch_add(&nlaunches, 1);
	if (i >= FAKE_MAX_LAUNCHES)
		return;
	struct launch *l = &launches[i];
	l->start = fake_now();
	l->tid = tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? (uint32_t)syscall(SYS_gettid)
								   : (uint32_t)pthread_self();
	l->name = mangled;
	l->end = fake_now(); /* the call's own length: it ends inside the caller's range */
}

static void make_launches(struct writer *w)
{
	int n = atomic_load(&nlaunches);
	if (enabled[CUPTI_ACTIVITY_KIND_DEVICE])
		make_device(w);
	for (int i = 0; i < n && i < FAKE_MAX_LAUNCHES; i++) {
		const struct launch *l = &launches[i];
		uint32_t corr = 1000u + (uint32_t)i;
		if (enabled[CUPTI_ACTIVITY_KIND_RUNTIME]) {
			CUpti_ActivityAPI *a = record(w, sizeof(*a));
			if (a) {
				a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
				a->cbid = l->name ? CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
						  : CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020;
				a->start = l->start;
				a->end = l->end;
				a->processId = (uint32_t)getpid();
				a->threadId = l->tid;
				a->correlationId = corr;
			}
		}
		/* the work runs after its call: starts are tick()'s, at least now */
		struct clockwork c = {l->end, is("capture")};
		if (l->name && enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL])
			make_kernel_named(w, &c, corr, l->name);
		else if (!l->name && enabled[CUPTI_ACTIVITY_KIND_MEMCPY])
			make_copy(w, &c, corr);
	}
}

static void make_flood(struct writer *w)
{
	struct clockwork c = {0};
	w->hold_all = 1;
	if (!enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL])
		return;
	for (uint32_t i = 1; i <= FAKE_FLOOD_KERNELS; i++)
		make_kernel(w, &c, i);
}

/* Makes this process's records (once) and hands them over. */
static void deliver(void)
{
	if (!buffer_requested || !buffer_completed)
		return;
	pthread_mutex_lock(&deliver_lock);
	if (made_pid != getpid()) {
		made_pid = getpid();
		static struct writer w; /* large: not on a thread's stack */
		memset(&w, 0, sizeof(w));
		if (is("flood"))
			make_flood(&w);
		else if (is("launches") || is("capture"))
			make_launches(&w);
		else
			make_basic(&w);
		writer_end(&w);
	}
	pthread_mutex_unlock(&deliver_lock);
}

/* ---- the worker thread (scenario "worker") ------------------------------------ */

static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t worker_cond = PTHREAD_COND_INITIALIZER;
static uint64_t worker_asked, worker_done;
static int worker_started;

static void *worker_main(void *arg)
{
	(void)arg;
	fake_log("worker %d %ld", (int)getpid(), (long)syscall(SYS_gettid));
	pthread_mutex_lock(&worker_lock);
	for (;;) {
		while (worker_done == worker_asked)
			pthread_cond_wait(&worker_cond, &worker_lock);
		uint64_t upto = worker_asked;
		pthread_mutex_unlock(&worker_lock);
		deliver();
		pthread_mutex_lock(&worker_lock);
		worker_done = upto;
		pthread_cond_broadcast(&worker_cond);
	}
	return NULL;
}

/* The worker delivers; the flushing thread waits for it, as in CUPTI. */
static void deliver_by_worker(void)
{
	pthread_mutex_lock(&worker_lock);
	if (!worker_started) {
		pthread_t th;
		worker_started = pthread_create(&th, NULL, worker_main, NULL) == 0;
		if (worker_started)
			pthread_detach(th);
	}
	if (!worker_started) {
		pthread_mutex_unlock(&worker_lock);
		deliver();
		return;
	}
	uint64_t mine = ++worker_asked;
	pthread_cond_broadcast(&worker_cond);
	while (worker_done < mine)
		pthread_cond_wait(&worker_cond, &worker_lock);
	pthread_mutex_unlock(&worker_lock);
}

/* ---- CUPTI's functions --------------------------------------------------------- */

FAKE_EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = is("old") ? FAKE_OLD_VERSION : FAKE_VERSION;
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	static const struct {
		CUptiResult r;
		const char *s;
	} names[] = {
		{CUPTI_SUCCESS, "CUPTI_SUCCESS"},
		{CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER"},
		{CUPTI_ERROR_NOT_COMPATIBLE, "CUPTI_ERROR_NOT_COMPATIBLE"},
		{CUPTI_ERROR_NOT_SUPPORTED, "CUPTI_ERROR_NOT_SUPPORTED"},
		{CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"},
		{CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"},
		{CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED"},
		{CUPTI_ERROR_INVALID_KIND, "CUPTI_ERROR_INVALID_KIND"},
	};
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].r == result) {
			*str = names[i].s;
			return CUPTI_SUCCESS;
		}
	}
	*str = "CUPTI_ERROR_UNKNOWN";
	return CUPTI_SUCCESS;
}

/* ---- the callback API (scenario "capture") ------------------------------------- */

static CUpti_CallbackFunc subscriber_cb;
static void *subscriber_data;
static unsigned char cb_enabled[2][512]; /* [driver][cbid] */

FAKE_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
					    CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	int driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
	if (subscriber != (CUpti_SubscriberHandle)&subscribed || !subscribed ||
	    (!driver && domain != CUPTI_CB_DOMAIN_RUNTIME_API) || cbid >= 512)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cb_enabled[driver][cbid] = enable != 0;
	fake_log("enable-callback %d %u %u", driver, (unsigned)cbid, enable);
	return CUPTI_SUCCESS;
}

/* What CUDA does around an API call a subscriber enabled: the callback at
 * its entry and at its exit. */
static void api_call(int driver, uint32_t cbid, const char *name)
{
	if (!subscriber_cb || cbid >= 512 || !cb_enabled[driver][cbid])
		return;
	CUpti_CallbackData d;
	memset(&d, 0, sizeof(d));
	d.functionName = name;
	d.callbackSite = CUPTI_API_ENTER;
	subscriber_cb(subscriber_data, driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &d);
	d.callbackSite = CUPTI_API_EXIT;
	subscriber_cb(subscriber_data, driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &d);
}

/* cudaProfilerStart (on) or Stop as the runtime makes it: its own callback,
 * and inside it the driver's cuProfilerStart/Stop. */
FAKE_EXPORT void fake_cupti_profiler(int on)
{
	fake_log("profiler %d", on);
	api_call(0, on ? CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 : CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000,
		 on ? "cudaProfilerStart" : "cudaProfilerStop");
	api_call(1, on ? CUPTI_DRIVER_TRACE_CBID_cuProfilerStart : CUPTI_DRIVER_TRACE_CBID_cuProfilerStop,
		 on ? "cuProfilerStart" : "cuProfilerStop");
}

FAKE_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
				       void *userdata)
{
	subscriber_cb = callback;
	subscriber_data = userdata;
	if (!subscriber)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (is("subscriber") || subscribed) {
		fake_log("subscribe-refused %d", (int)getpid());
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	subscribed = 1;
	caller_tid = (uint32_t)syscall(SYS_gettid);
	caller_pthread = (unsigned long)pthread_self();
	*subscriber = (CUpti_SubscriberHandle)&subscribed;
	fake_log("subscribe %d", (int)getpid());
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	if (subscriber != (CUpti_SubscriberHandle)&subscribed || !subscribed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	subscribed = 0;
	fake_log("unsubscribe %d", (int)getpid());
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
	if (!name)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
		*name = "cudaLaunchKernel_v7000";
		return CUPTI_SUCCESS;
	}
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020) {
		*name = "cudaMemcpy_v3020";
		return CUPTI_SUCCESS;
	}
	*name = NULL;
	return CUPTI_ERROR_INVALID_PARAMETER;
}

FAKE_EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	tid_type = type;
	fake_log("thread-id-type %d", (int)type);
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*timestamp = fake_now();
	return CUPTI_SUCCESS;
}

#ifndef FAKE_NO_TS_CALLBACK
FAKE_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	if (!fn)
		return CUPTI_ERROR_INVALID_PARAMETER;
	timestamp_cb = fn;
	fake_log("timestamp-callback %d", (int)getpid());
	return CUPTI_SUCCESS;
}
#endif

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
						       CUpti_BuffersCallbackCompleteFunc completed)
{
	if (!requested || !completed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	buffer_requested = requested;
	buffer_completed = completed;
	fake_log("callbacks %d", (int)getpid());
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if ((int)kind <= 0 || (int)kind >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	if (is("refuse-privileges"))
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	if (is("no-kernels") && kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		return CUPTI_ERROR_NOT_COMPATIBLE;
	if (is("partial") && (kind == CUPTI_ACTIVITY_KIND_MEMORY2 || kind == CUPTI_ACTIVITY_KIND_OVERHEAD))
		return CUPTI_ERROR_NOT_SUPPORTED;
	enabled[kind] = 1;
	fake_log("enable %d", (int)kind);
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	if ((int)kind <= 0 || (int)kind >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	enabled[kind] = 0;
	fake_log("disable %d", (int)kind);
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	fake_log("flush %d %u", (int)getpid(), flag);
	if (!buffer_requested)
		return CUPTI_ERROR_INVALID_OPERATION;
	if (is("worker"))
		deliver_by_worker();
	else
		deliver();
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
	fake_log("flush-period %u", ms);
	return CUPTI_SUCCESS;
}

/* The size of each kind of record the double makes. */
static size_t record_size(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return sizeof(CUpti_ActivityMemory4);
	default:
		return 0;
	}
}

FAKE_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t off = 0;
	if (*record) {
		size_t size = record_size(*record);
		if (!size)
			return CUPTI_ERROR_INVALID_KIND;
		off = (size_t)((uint8_t *)*record - buffer) + size;
	}
	if (off + sizeof(CUpti_Activity) > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	CUpti_Activity *next = (CUpti_Activity *)(void *)(buffer + off);
	size_t size = record_size(next);
	if (!size || off + size > valid)
		return CUPTI_ERROR_INVALID_KIND;
	*record = next;
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream, size_t *dropped)
{
	(void)context, (void)stream;
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*dropped = lost;
	lost = 0;
	if (is("drops") && !extra_drops_reported) {
		extra_drops_reported = 1;
		*dropped += FAKE_DROPS;
	}
	return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiFinalize(void)
{
	fake_log("finalize %d", (int)getpid());
	return CUPTI_SUCCESS;
}
