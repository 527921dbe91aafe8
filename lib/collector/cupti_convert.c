/*
 * cupti_convert.c - CUPTI activity records into ring records (cupti.h).
 *
 * CUPTI hands completed activity buffers to its own threads (or to the one
 * that flushes), and each record is converted here into the calling thread's
 * ring. That is not the program's hot path, so unlike record.c this code may
 * lock, allocate and wait: a record that finds the ring full waits a little
 * (cv->max_wait_ns) for the launcher to drain it before it is dropped, since
 * CUPTI's thread losing time costs the program nothing while a lost kernel
 * does.
 *
 * Records are read through the struct versions of the CUPTI the collector was
 * built against. Every field read here lies in the prefix CUDA 12's and CUDA
 * 13's versions share (the unit test checks the offsets), so either CUPTI's
 * records read the same.
 *
 * Names are strings of the ring like any other, interned through the
 * thread's cache (strings.c). What is cached here, per process, is what costs
 * more than a lookup: a kernel's demangled name (by CUPTI's name pointer,
 * stable for a function, and its content, since a module may be unloaded and
 * its memory reused) and an API function's name with CUPTI's "_vNNNN" suffix
 * dropped. Ids are not cached here: they belong to one ring, and a test, or a
 * fork child's new slot, may see another.
 */
#include "formats/trace/trace.h"
#include "lib/collector/collector.h"
#include "lib/collector/cupti.h"
#include "common/clock.h"

#include <cupti_activity.h>
#include <cupti_version.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The newest struct version of each kind in the headers built against. A
 * CUDA 12 toolkit (CUPTI API version below 130000) has no CUDA 13 version. */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 cupti_kernel;
typedef CUpti_ActivityMemcpy6 cupti_memcpy;
typedef CUpti_ActivityMemory4 cupti_memory;
typedef CUpti_ActivitySynchronization2 cupti_sync;
typedef CUpti_ActivityOverhead3 cupti_overhead;
typedef CUpti_ActivityDevice5 cupti_device;
#else
#if defined(__has_include)
#if __has_include(<cupti_activity_deprecated.h>)
#include <cupti_activity_deprecated.h>
#endif
#endif
typedef CUpti_ActivityKernel9 cupti_kernel;
typedef CUpti_ActivityMemcpy5 cupti_memcpy;
typedef CUpti_ActivityMemory3 cupti_memory;
typedef CUpti_ActivitySynchronization cupti_sync;
typedef CUpti_ActivityOverhead cupti_overhead; /* Overhead2 and 3 only append */
typedef CUpti_ActivityDevice4 cupti_device;
#endif
typedef CUpti_ActivityMemcpyPtoP4 cupti_p2p;
typedef CUpti_ActivityMemset4 cupti_memset;

/* ---- writing, with a wait for room ------------------------------------------ */

#define WAIT_FIRST_NS 200000ull  /* the first nap; each one doubles, */
#define WAIT_MAX_NS 2000000ull   /* up to this */

/* One record's budget of waiting: its name's STRING record and the record
 * itself share it, so a record waits at most max_ns in all. The clock is
 * read only once the ring is found full. */
struct wait {
	uint64_t max_ns, deadline, nap;
	int started;
};

static void wait_init(struct wait *w, uint64_t max_ns)
{
	w->max_ns = max_ns;
	w->deadline = 0;
	w->nap = WAIT_FIRST_NS;
	w->started = 0;
}

/* Waits until need bytes fit in t's ring or the budget is spent. */
static void wait_room(struct coll_thread *t, uint64_t need, struct wait *w)
{
	while (ring_space(coll.shm, t->slot) < need) {
		if (need > coll.shm->ring_bytes)
			return; /* never fits: ring_write counts it */
		uint64_t now = clock_now_ns();
		if (!w->started) {
			w->started = 1;
			w->deadline = now + w->max_ns < now ? UINT64_MAX : now + w->max_ns;
		}
		if (now >= w->deadline)
			return;
		uint64_t nap = w->deadline - now < w->nap ? w->deadline - now : w->nap;
		struct timespec ts = {(time_t)(nap / 1000000000u), (long)(nap % 1000000000u)};
		nanosleep(&ts, NULL); /* EINTR: the loop checks again */
		if (w->nap < WAIT_MAX_NS)
			w->nap = w->nap * 2 < WAIT_MAX_NS ? w->nap * 2 : WAIT_MAX_NS;
	}
}

static int emit(struct coll_thread *t, const void *rec, struct wait *w)
{
	wait_room(t, ((const struct ring_rec *)rec)->size, w);
	return ring_write(coll.shm, t->slot, rec);
}

/* The bytes a STRING record of len bytes takes. */
static uint64_t string_size(size_t len)
{
	return ring_rec_align(sizeof(struct ring_rec) + len + 1);
}

/* A name's id for a record of rec_size bytes to follow, waiting for room
 * for both; 0 when the STRING record did not fit (counted by ring_write). */
static uint32_t intern_wait(struct coll_thread *t, const char *s, size_t len, size_t rec_size,
			    struct wait *w)
{
	wait_room(t, string_size(len) + rec_size, w);
	return coll_intern(t, s, len);
}

/* The GPU entry points run under coll_busy like NVTX's (record.c), so that
 * an NVTX call from a signal handler interrupting a write on this thread is
 * dropped instead of interleaved. The previous value is restored, not
 * cleared: a flush may run from inside the collector (at exit). */
static int busy_begin(void)
{
	int was = coll_busy;
	coll_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return was;
}

static void busy_end(int was)
{
	atomic_signal_fence(memory_order_seq_cst);
	coll_busy = was;
}

int coll_emit_wait(struct coll_thread *t, const void *rec, uint64_t max_wait_ns)
{
	if ((uintptr_t)t <= 1) {
		coll_drop_nothread();
		return -1;
	}
	if (!t->slot)
		return coll_emit(t, rec); /* counts it in no_slot_events */
	KEEP_ERRNO_BEGIN;
	int was = busy_begin();
	struct wait w;
	wait_init(&w, max_wait_ns);
	int rc = emit(t, rec, &w);
	busy_end(was);
	KEEP_ERRNO_END;
	return rc;
}

void coll_gpu_status(unsigned code, const char *msg, uint64_t max_wait_ns)
{
	KEEP_ERRNO_BEGIN;
	struct coll_thread *t = coll_thread(); /* NULL: counted */
	if (!t)
		goto out;
	if (coll_busy) { /* a signal handler interrupted the collector */
		coll_drop(t);
		goto out;
	}
	busy_begin();
	if (!t->slot) {
		coll_drop(t);
	} else {
		if (!msg)
			msg = "";
		struct wait w;
		struct ring_gpu_status r;
		wait_init(&w, max_wait_ns);
		uint32_t id = intern_wait(t, msg, coll_cut_len(msg, strlen(msg)), sizeof(r), &w);
		if (id) {
			memset(&r, 0, sizeof(r));
			r.h = (struct ring_rec){RING_REC_GPU_STATUS, sizeof(r), code};
			r.msg_str = id;
			emit(t, &r, &w);
		}
	}
	busy_end(0);
out:
	KEEP_ERRNO_END;
}

/* ---- small conversions ------------------------------------------------------ */

/* CUPTI's time on the host clock; offset added modulo 2^64, so a negative
 * offset works as one. */
static inline uint64_t host_ns(const struct coll_cupti_conv *cv, uint64_t t)
{
	return t + (uint64_t)cv->ts_offset;
}

/* An interval, its end clamped to its start: CUPTI leaves end 0 (or earlier
 * than start) for work whose end it did not see. */
static void span(const struct coll_cupti_conv *cv, uint64_t start, uint64_t end, uint64_t *s, uint64_t *e)
{
	*s = host_ns(cv, start);
	*e = end < start ? *s : host_ns(cv, end);
}

/* Kinds the trace has no name for (a newer CUPTI's) are unknown. */
static uint8_t copy_kind(uint32_t k)
{
	return k <= TRACE_COPY_PTOP ? (uint8_t)k : TRACE_COPY_UNKNOWN;
}

static uint8_t memory_kind(uint32_t k)
{
	return k <= TRACE_MEM_MANAGED_STATIC ? (uint8_t)k : TRACE_MEM_UNKNOWN;
}

#define REC_INIT(r, kind_, aux_)                                  \
	do {                                                      \
		memset(&(r), 0, sizeof(r)); /* padding included */ \
		(r).h.kind = (kind_);                             \
		(r).h.size = sizeof(r);                           \
		(r).h.aux = (aux_);                               \
	} while (0)

/* ---- kernel names ----------------------------------------------------------- */

/* Demangled names by CUPTI's name pointer: open addressing over a few slots,
 * replacing one when they are all taken (that name is demangled again).
 * Entries are never freed but when replaced; the lock is held for lookups
 * and insertions, not for demangling. */
#define DM_SLOTS 1024u /* a power of two */
#define DM_PROBES 4u

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

struct dm_ent {
	const char *key;  /* CUPTI's pointer; NULL: empty */
	demangle_fn fn;   /* the demangler it was made with (NULL: none) */
	char *mangled;    /* the name as CUPTI gave it, to compare */
	char *text;       /* the name to record, cut to RING_NAME_MAX */
	uint32_t len, flags;
};

static struct dm_ent dm_cache[DM_SLOTS];
static pthread_mutex_t dm_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t dm_turn; /* which probe an insertion into full slots replaces */

static uint32_t dm_home(const char *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (DM_SLOTS - 1);
}

static int dm_lookup(const char *name, demangle_fn fn, char *out, uint32_t *len, uint32_t *flags)
{
	int found = 0;
	uint32_t home = dm_home(name);
	pthread_mutex_lock(&dm_lock);
	for (uint32_t i = 0; i < DM_PROBES; i++) {
		const struct dm_ent *e = &dm_cache[(home + i) & (DM_SLOTS - 1)];
		if (!e->key)
			break;
		if (e->key == name && e->fn == fn && strcmp(e->mangled, name) == 0) {
			memcpy(out, e->text, e->len);
			*len = e->len;
			*flags = e->flags;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&dm_lock);
	return found;
}

static void dm_insert(const char *name, demangle_fn fn, const char *text, uint32_t len, uint32_t flags)
{
	char *mangled = strdup(name), *copy = malloc(len + 1u);
	if (!mangled || !copy) { /* not cached: demangled again next time */
		free(mangled);
		free(copy);
		return;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';

	uint32_t home = dm_home(name);
	pthread_mutex_lock(&dm_lock);
	struct dm_ent *e = NULL;
	for (uint32_t i = 0; i < DM_PROBES && !e; i++) {
		struct dm_ent *c = &dm_cache[(home + i) & (DM_SLOTS - 1)];
		if (!c->key || (c->key == name && c->fn == fn))
			e = c;
	}
	if (!e)
		e = &dm_cache[(home + dm_turn++ % DM_PROBES) & (DM_SLOTS - 1)];
	char *old_mangled = e->mangled, *old_text = e->text;
	e->key = name;
	e->fn = fn;
	e->mangled = mangled;
	e->text = copy;
	e->len = len;
	e->flags = flags;
	pthread_mutex_unlock(&dm_lock);
	free(old_mangled);
	free(old_text);
}

/* A kernel's name to record into out (RING_NAME_MAX bytes): demangled when
 * it is a C++ name and a demangler was given, else as CUPTI gives it. Only
 * "_Z" names are handed to the demangler: __cxa_demangle also reads a bare
 * type encoding, which would turn a C kernel named "f" into "float". */
static uint32_t kernel_name(const struct coll_cupti_conv *cv, const char *name, char *out, uint32_t *flags)
{
	uint32_t len;
	if (dm_lookup(name, cv->demangle, out, &len, flags))
		return len;
	char *dm = NULL;
	if (cv->demangle && name[0] == '_' && name[1] == 'Z') {
		int status = -1;
		dm = cv->demangle(name, NULL, NULL, &status);
		if (status != 0) {
			free(dm);
			dm = NULL;
		}
	}
	const char *text = dm ? dm : name;
	size_t full = strlen(text);
	len = (uint32_t)coll_cut_len(text, full);
	*flags = len < full ? TRACE_EVF_NAME_TRUNCATED : 0;
	memcpy(out, text, len);
	free(dm);
	dm_insert(name, cv->demangle, out, len, *flags);
	return len;
}

/* ---- API names ---------------------------------------------------------- */

/* By (runtime or driver, callback id), published with a compare-and-swap:
 * CUPTI numbers its functions densely from 1, a few hundred of each. */
#define API_SLOTS 2048u

struct api_ent {
	uint32_t len, flags;
	char text[];
};

static struct api_ent *_Atomic api_cache[2][API_SLOTS];

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel", "cuMemAlloc_v2" ->
 * "cuMemAlloc": the length without a trailing "_v<digits>". */
static size_t api_base_len(const char *s, size_t len)
{
	size_t i = len;
	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i < len && i > 2 && s[i - 1] == 'v' && s[i - 2] == '_')
		return i - 2;
	return len;
}

/* The name into out (RING_NAME_MAX + 1 bytes). */
static uint32_t api_text(const struct coll_cupti_conv *cv, int driver, uint32_t cbid, char *out, uint32_t *flags)
{
	const char *n = cv->api_name ? cv->api_name(cv->api_ctx, driver, cbid) : NULL;
	*flags = 0;
	if (!n || !*n) {
		int k = snprintf(out, RING_NAME_MAX + 1, "CUDA %s API %u", driver ? "driver" : "runtime", cbid);
		return k > 0 ? (uint32_t)k : 0;
	}
	size_t full = api_base_len(n, strlen(n));
	size_t len = coll_cut_len(n, full);
	if (len < full)
		*flags = TRACE_EVF_NAME_TRUNCATED;
	memcpy(out, n, len);
	return (uint32_t)len;
}

/* The name of (driver, cbid): cached, or written into buf. */
static const char *api_name(const struct coll_cupti_conv *cv, int driver, uint32_t cbid, char *buf,
			    uint32_t *len, uint32_t *flags)
{
	struct api_ent *_Atomic *slot = cbid < API_SLOTS ? &api_cache[driver != 0][cbid] : NULL;
	struct api_ent *e = slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;
	if (e) {
		*len = e->len;
		*flags = e->flags;
		return e->text;
	}
	*len = api_text(cv, driver, cbid, buf, flags);
	if (!slot)
		return buf;
	e = malloc(sizeof(*e) + *len);
	if (!e)
		return buf;
	e->len = *len;
	e->flags = *flags;
	memcpy(e->text, buf, *len);
	struct api_ent *none = NULL;
	if (!atomic_compare_exchange_strong_explicit(slot, &none, e, memory_order_release, memory_order_acquire))
		free(e); /* another thread's is as good */
	return buf;
}

/* ---- one converter per kind ------------------------------------------------- */

static int conv_kernel(struct coll_thread *t, const struct coll_cupti_conv *cv, const cupti_kernel *k,
		       struct wait *w)
{
	struct ring_gpu_work r;
	REC_INIT(r, RING_REC_GPU_WORK, TRACE_EV_KERNEL);
	span(cv, k->start, k->end, &r.start_ns, &r.end_ns);
	r.correlation = k->correlationId;
	r.stream = k->streamId;
	r.device = k->deviceId;
	r.context = k->contextId;
	r.grid[0] = (uint32_t)k->gridX;
	r.grid[1] = (uint32_t)k->gridY;
	r.grid[2] = (uint32_t)k->gridZ;
	r.block[0] = (uint32_t)k->blockX;
	r.block[1] = (uint32_t)k->blockY;
	r.block[2] = (uint32_t)k->blockZ;
	r.registers = k->registersPerThread;
	r.static_smem = (uint32_t)k->staticSharedMemory;
	r.dynamic_smem = (uint32_t)k->dynamicSharedMemory;
	r.graph_id = k->graphId;
	if (k->name) {
		char name[RING_NAME_MAX];
		uint32_t len = kernel_name(cv, k->name, name, &r.flags);
		r.name_str = intern_wait(t, name, len, sizeof(r), w);
		if (!r.name_str)
			return -1; /* its STRING record did not fit: counted */
	}
	return emit(t, &r, w);
}

/* What copies, peer copies and sets share: the struct types differ, the
 * field names do not. */
#define WORK_COMMON(cv, m, r)                                                                     \
	do {                                                                                      \
		span(cv, (m)->start, (m)->end, &(r).start_ns, &(r).end_ns);                      \
		(r).correlation = (m)->correlationId;                                             \
		(r).stream = (m)->streamId;                                                       \
		(r).bytes = (m)->bytes;                                                           \
		(r).device = (m)->deviceId;                                                       \
		(r).context = (m)->contextId;                                                     \
		(r).graph_id = (m)->graphId;                                                      \
	} while (0)
#define COPY_KINDS(m, r)                                                                          \
	do {                                                                                      \
		(r).copy_kind = copy_kind((m)->copyKind);                                         \
		(r).src_kind = memory_kind((m)->srcKind);                                         \
		(r).dst_kind = memory_kind((m)->dstKind);                                         \
		(r).is_async = ((m)->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;              \
	} while (0)

static int conv_memcpy(struct coll_thread *t, const struct coll_cupti_conv *cv, const cupti_memcpy *m,
		       struct wait *w)
{
	struct ring_gpu_work r;
	REC_INIT(r, RING_REC_GPU_WORK, TRACE_EV_MEMCPY);
	WORK_COMMON(cv, m, r);
	COPY_KINDS(m, r);
	return emit(t, &r, w);
}

static int conv_p2p(struct coll_thread *t, const struct coll_cupti_conv *cv, const cupti_p2p *m,
		    struct wait *w)
{
	struct ring_gpu_work r;
	REC_INIT(r, RING_REC_GPU_WORK, TRACE_EV_MEMCPY);
	WORK_COMMON(cv, m, r);
	r.src_device = m->srcDeviceId;
	r.dst_device = m->dstDeviceId;
	COPY_KINDS(m, r);
	return emit(t, &r, w);
}

static int conv_memset(struct coll_thread *t, const struct coll_cupti_conv *cv, const cupti_memset *m,
		       struct wait *w)
{
	struct ring_gpu_work r;
	REC_INIT(r, RING_REC_GPU_WORK, TRACE_EV_MEMSET);
	WORK_COMMON(cv, m, r);
	r.dst_kind = memory_kind(m->memoryKind);
	r.is_async = (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
	r.value = m->value;
	return emit(t, &r, w);
}

static int conv_memory(struct coll_thread *t, const struct coll_cupti_conv *cv, const cupti_memory *m,
		       struct wait *w)
{
	struct ring_gpu_memory r;
	uint32_t op = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION ? RING_GPU_MEM_ALLOC
										      : RING_GPU_MEM_FREE;
	REC_INIT(r, RING_REC_GPU_MEMORY, op);
	r.ts_ns = host_ns(cv, m->timestamp);
	r.address = m->address;
	r.bytes = m->bytes;
	r.correlation = m->correlationId;
	/* CUPTI's "none" is all ones; the ring's is 0 */
	r.stream = m->streamId == CUPTI_INVALID_STREAM_ID ? 0 : m->streamId;
	r.device = m->deviceId;
	r.context = m->contextId == CUPTI_INVALID_CONTEXT_ID ? 0 : m->contextId;
	r.memory_kind = memory_kind(m->memoryKind);
	r.is_async = m->isAsync != 0;
	return emit(t, &r, w);
}

static int conv_api(struct coll_thread *t, const struct coll_cupti_conv *cv, const CUpti_ActivityAPI *a,
		    struct wait *w)
{
	int driver = a->kind == CUPTI_ACTIVITY_KIND_DRIVER;
	struct ring_gpu_api r;
	REC_INIT(r, RING_REC_GPU_API, driver ? RING_GPU_API_DRIVER : RING_GPU_API_RUNTIME);
	span(cv, a->start, a->end, &r.start_ns, &r.end_ns);
	r.correlation = a->correlationId;
	r.tid = a->threadId;
	r.cbid = a->cbid;
	r.result = (int32_t)a->returnValue;

	char buf[RING_NAME_MAX + 1];
	uint32_t len;
	const char *name = api_name(cv, driver, a->cbid, buf, &len, &r.flags);
	r.name_str = intern_wait(t, name, len, sizeof(r), w);
	if (!r.name_str)
		return -1;
	return emit(t, &r, w);
}

static int conv_sync(struct coll_thread *t, const struct coll_cupti_conv *cv, const cupti_sync *s,
		     struct wait *w)
{
	struct ring_gpu_sync r;
	/* enum ring_gpu_sync_type is CUPTI's CUpti_ActivitySynchronizationType */
	uint32_t type = (uint32_t)s->type;
	if (type > CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE)
		type = RING_GPU_SYNC_UNKNOWN;
	REC_INIT(r, RING_REC_GPU_SYNC, type);
	span(cv, s->start, s->end, &r.start_ns, &r.end_ns);
	r.correlation = s->correlationId;
	r.stream = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? UINT64_MAX : s->streamId;
	r.context = s->contextId;
	r.event = s->cudaEventId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->cudaEventId;
	return emit(t, &r, w);
}

/* CUpti_ActivityOverheadKind values, spelled as numbers so that a CUDA 12
 * toolkit's headers, which lack the newer ones, build this too. */
static const char *overhead_name(uint32_t kind)
{
	switch (kind) {
	case 1: return "driver compiler";                /* DRIVER_COMPILER */
	case 1u << 16: return "CUPTI buffer flush";      /* CUPTI_BUFFER_FLUSH */
	case 2u << 16: return "CUPTI instrumentation";   /* CUPTI_INSTRUMENTATION */
	case 3u << 16: return "CUPTI resource";          /* CUPTI_RESOURCE */
	case 4u << 16: return "module loading";          /* RUNTIME_TRIGGERED_MODULE_LOADING */
	case 5u << 16: return "lazy function loading";   /* LAZY_FUNCTION_LOADING */
	case 6u << 16: return "command buffer full";     /* COMMAND_BUFFER_FULL */
	case 7u << 16: return "CUPTI buffer request";    /* ACTIVITY_BUFFER_REQUEST */
	case 8u << 16: return "UVM activity init";       /* UVM_ACTIVITY_INIT */
	default: return "CUDA overhead";
	}
}

static int conv_overhead(struct coll_thread *t, const struct coll_cupti_conv *cv, const cupti_overhead *o,
			 struct wait *w)
{
	struct ring_gpu_overhead r;
	REC_INIT(r, RING_REC_GPU_OVERHEAD, (uint32_t)o->overheadKind);
	span(cv, o->start, o->end, &r.start_ns, &r.end_ns);
	switch (o->objectKind) {
	case CUPTI_ACTIVITY_OBJECT_PROCESS:
	case CUPTI_ACTIVITY_OBJECT_THREAD:
		r.tid = o->objectId.pt.threadId;
		break;
	case CUPTI_ACTIVITY_OBJECT_DEVICE:
	case CUPTI_ACTIVITY_OBJECT_CONTEXT:
	case CUPTI_ACTIVITY_OBJECT_STREAM:
		r.device = o->objectId.dcs.deviceId;
		break;
	default:
		break;
	}
	const char *name = overhead_name((uint32_t)o->overheadKind);
	r.name_str = intern_wait(t, name, strlen(name), sizeof(r), w);
	if (!r.name_str)
		return -1;
	return emit(t, &r, w);
}

static int conv_extcorr(struct coll_thread *t, const CUpti_ActivityExternalCorrelation *x, struct wait *w)
{
	struct ring_gpu_extcorr r;
	REC_INIT(r, RING_REC_GPU_EXTCORR, (uint32_t)x->externalKind);
	r.correlation = x->correlationId;
	r.external_id = x->externalId;
	return emit(t, &r, w);
}

static int conv_device(struct coll_thread *t, const cupti_device *d, struct wait *w)
{
	struct ring_gpu_device r;
	REC_INIT(r, RING_REC_GPU_DEVICE, 0);
	r.d.id = d->id;
	r.d.sm_count = d->numMultiprocessors;
	r.d.max_threads_per_sm = d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
	r.d.max_threads_per_block = d->maxThreadsPerBlock;
	r.d.max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
	r.d.warp_size = d->numThreadsPerWarp;
	r.d.regs_per_sm = d->maxRegistersPerMultiprocessor;
	r.d.regs_per_block = d->maxRegistersPerBlock;
	r.d.smem_per_sm = d->maxSharedMemoryPerMultiprocessor;
	r.d.smem_per_block = d->maxSharedMemoryPerBlock;
	r.d.clock_khz = d->coreClockRate;
	r.d.total_memory = d->globalMemorySize;
	r.d.cc_major = (uint16_t)d->computeCapabilityMajor;
	r.d.cc_minor = (uint16_t)d->computeCapabilityMinor;
	if (d->name) {
		r.d.name_str =
			intern_wait(t, d->name, coll_cut_len(d->name, strlen(d->name)), sizeof(r), w);
		if (!r.d.name_str)
			return -1;
	}
	return emit(t, &r, w);
}

/* ---- dispatch --------------------------------------------------------------- */

/* Whether gprof-dl records a ring record for a. */
static int collected(const CUpti_Activity *a)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_MEMCPY:
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
	case CUPTI_ACTIVITY_KIND_MEMSET:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return 1;
	case CUPTI_ACTIVITY_KIND_MEMORY2: {
		/* allocations and frees; pool operations and the like are not events */
		uint32_t op = ((const cupti_memory *)(const void *)a)->memoryOperationType;
		return op == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION ||
		       op == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	}
	default:
		return 0;
	}
}

/* The host time an activity record's work (or call) began at; 0 for the
 * records that belong to no moment (a device's properties, a correlation). */
static uint64_t begins(const struct coll_cupti_conv *cv, const CUpti_Activity *a)
{
	const void *p = a;
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return host_ns(cv, ((const cupti_kernel *)p)->start);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return host_ns(cv, ((const cupti_memcpy *)p)->start);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return host_ns(cv, ((const cupti_p2p *)p)->start);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return host_ns(cv, ((const cupti_memset *)p)->start);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return host_ns(cv, ((const cupti_memory *)p)->timestamp);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return host_ns(cv, ((const CUpti_ActivityAPI *)p)->start);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return host_ns(cv, ((const cupti_sync *)p)->start);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return host_ns(cv, ((const cupti_overhead *)p)->start);
	default:
		return 0;
	}
}

static int convert(struct coll_thread *t, const struct coll_cupti_conv *cv, const CUpti_Activity *a,
		   struct wait *w)
{
	const void *p = a;
	/* a capture range or schedule: only the work that began inside it */
	uint64_t at = COLL_UNLIKELY(coll_win.tracked) ? begins(cv, a) : 0;
	if (at && !coll_window_open_at(at))
		return 0;
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return conv_kernel(t, cv, p, w);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return conv_memcpy(t, cv, p, w);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return conv_p2p(t, cv, p, w);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return conv_memset(t, cv, p, w);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return conv_memory(t, cv, p, w);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return conv_api(t, cv, p, w);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return conv_sync(t, cv, p, w);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return conv_overhead(t, cv, p, w);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return conv_extcorr(t, p, w);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return conv_device(t, p, w);
	default:
		return 0;
	}
}

int coll_cupti_convert(struct coll_thread *t, const struct coll_cupti_conv *cv, const void *record)
{
	if (!record || !collected(record))
		return 0;
	if ((uintptr_t)t <= 1 || !t->slot) {
		coll_drop(t); /* no_slot_events */
		return -1;
	}
	KEEP_ERRNO_BEGIN;
	int was = busy_begin();
	struct wait w;
	wait_init(&w, cv->max_wait_ns);
	int rc = convert(t, cv, record, &w);
	busy_end(was);
	KEEP_ERRNO_END;
	return rc < 0 ? -1 : 1;
}
