/*
 * collector.h - the parts of libgprof-dl-collector.so, as its files see each other.
 *
 * The collector runs inside the target. Its one job is to turn NVTX calls and
 * the life of threads and processes into records in the per-thread rings of
 * lib/ring/ring.h, which `gprof-dl run` drains. Invariants every file keeps:
 *
 *  - Inert unless attached to a valid ring (GPROF_DL_SHM): every interposed
 *    function is then a plain pass-through and InitializeInjectionNvtx2 says no.
 *  - The target's behaviour never changes: errno is preserved by every entry
 *    point, no signal disposition is touched, nothing is printed unless
 *    GPROF_DL_DEBUG=1 (and then only through coll_log, which is signal-safe).
 *  - Range hot path (push, pop, mark): no allocation, lock or system call. A
 *    thread's state is mapped once, at its start or at its first event, and
 *    reached through one initial-exec TLS pointer.
 *  - A thread writes only to its own slot. A string id is used only after this
 *    thread (or, for ids cached globally, some thread) wrote its STRING record;
 *    an event whose name could not be written is dropped and counted, never
 *    recorded with a wrong name.
 *  - The TLS push stack is the truth; its first RING_STACK_MAX entries (past
 *    those a fork child inherited) are mirrored into the slot (entry first,
 *    then depth with release order) so that the launcher can recover the
 *    ranges open when the process dies.
 *  - The recording window (window.c) is process-wide: while it is closed
 *    ("detail" off) only the gprof-dl domain's ProfileStep and Dataloader
 *    ranges and marks, and thread and process records, are written. Whether a
 *    pushed range is recorded is decided at its push and kept in its stack
 *    entry (COLL_OPEN_GATED): its pop follows the push whatever the window
 *    did in between.
 *  - The language bindings' interface (api.c, gprof-dl-api.h) pushes onto the
 *    same stack, in the gprof-dl domain, so NVTX pops of that domain and the
 *    interface's pops end each other's ranges.
 */
#ifndef GPDL_COLLECTOR_H
#define GPDL_COLLECTOR_H

#include "lib/collector/gprof-dl-nvtx.h"
#include "common/clock.h"
#include "lib/ring/ring.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define COLL_STACK_MAX 4096u          /* nesting kept per thread; deeper pushes are counted drops */
#define COLL_CACHE_SLOTS 2048u        /* per-thread string cache: a power of two */
#define COLL_CACHE_PROBES 4u
#define COLL_CACHE_ARENA (128u * 1024u) /* bytes of cached names; full: the cache starts over */
#define COLL_PTR_SLOTS 256u           /* front of the cache, by address: a power of two */
#define COLL_ID_BLOCK_MAX 1024u       /* string ids a thread takes at once, at most */

#define COLL_LIKELY(x) __builtin_expect(!!(x), 1)
#define COLL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define COLL_EXPORT __attribute__((visibility("default")))

/* Every entry point (NVTX's, the API's) keeps errno as the program left it. */
#define KEEP_ERRNO_BEGIN int saved_errno_ = errno
#define KEEP_ERRNO_END errno = saved_errno_

/* ---- strings ------------------------------------------------------------ */

/* A string the program registered (nvtxDomainRegisterString) or a domain's name
 * (nvtxDomainCreate). Handed to the program as its opaque handle; never freed,
 * so that a handle stays valid whatever the program does with it. */
struct coll_str {
	uint32_t magic;       /* COLL_STR_MAGIC or COLL_DOMAIN_MAGIC */
	_Atomic uint32_t id;  /* global string id once some thread wrote it; 0: not yet */
	uint32_t len;         /* bytes in text, at most RING_NAME_MAX */
	uint32_t flags;       /* TRACE_EVF_NAME_TRUNCATED when the text was cut */
	struct coll_str *next; /* registry chain */
	char text[];          /* NUL-terminated */
};

#define COLL_STR_MAGIC 0x53445047u    /* "GPDS" */
#define COLL_DOMAIN_MAGIC 0x44445047u /* "GPDD" */

/* A name as NVTX hands it over, not yet interned. */
enum coll_name_kind {
	COLL_NAME_NONE = 0, /* no message: the empty name */
	COLL_NAME_ASCII,    /* char *, UTF-8 or whatever bytes the program has */
	COLL_NAME_WIDE,     /* wchar_t *, converted to UTF-8 */
	COLL_NAME_REG,      /* struct coll_str * (a registered string) */
};

struct coll_name {
	int kind;
	const void *p;
};

/* ---- per-thread state --------------------------------------------------- */

/* Flags of coll_open.flags above the trace's 8: pushed while the window was
 * closed, so neither it nor its pop is recorded (the mirror's RING_OPEN_SKIP);
 * has a sequence number, shapes or samples (its pop writes RANGE_EXT; never
 * mirrored). One test of the flags tells a pop it has nothing special to do. */
#define COLL_OPEN_GATED RING_OPEN_SKIP
#define COLL_OPEN_EXT (1u << 30)

struct coll_open { /* one pushed range */
	uint64_t start_ns;
	uint32_t name_str, domain_str, category, flags; /* name_str 0: lost, already counted */
	uint32_t level; /* within its domain: what the push returned */
	uint32_t shapes_str; /* input shapes, 0: none */
	int64_t seq;         /* torch sequence number, < 0: none */
	uint64_t samples;    /* a step's samples, 0: unknown */
	const struct coll_str *domain; /* NVTX stacks are per domain; NULL: the default one */
};

struct coll_cache_ent {
	uint32_t hash, id; /* id 0: empty */
	uint32_t off, len; /* text in the arena */
};

/* Where a name was last seen: a string literal is found without hashing it,
 * still compared by content (the memory may hold another name by now). */
struct coll_ptr_ent {
	const char *p;
	uint32_t id, off, len, pad; /* id 0: empty */
};

struct coll_thread {
	struct ring_slot *slot; /* NULL: every slot was taken; events are counted, not written */
	uint32_t pid, tid;
	uint32_t depth;     /* entries in stack[] */
	uint32_t inherited; /* stack[0, inherited): pushed before a fork, the parent's to record */
	uint32_t overflow;  /* pushes beyond COLL_STACK_MAX, not recorded */
	uint32_t arena_used;
	/* String ids taken from the ring header's counter a block at a time
	 * (1, 2, 4, ... up to COLL_ID_BLOCK_MAX): [ids_next, ids_end) are this
	 * thread's to hand out, so that threads making new names do not all
	 * write that one cache line. A fork child starts with none. */
	uint32_t ids_next, ids_end, ids_block;
	uint32_t name_str; /* the name its last THREAD_NAME gave (string id); 0: none yet */
	struct coll_ptr_ent ptrs[COLL_PTR_SLOTS];
	struct coll_cache_ent cache[COLL_CACHE_SLOTS];
	char arena[COLL_CACHE_ARENA];
	struct coll_open stack[COLL_STACK_MAX];
};

/* Installed in coll_tls once a thread's state is gone (its end, process exit):
 * later events of that thread are counted in no_slot_events. */
#define COLL_THREAD_DEAD ((struct coll_thread *)1)

extern __thread struct coll_thread *coll_tls __attribute__((tls_model("initial-exec")));
/* Set while this thread is inside the collector: an NVTX call from a signal
 * handler that interrupted it is dropped (and counted), not interleaved. */
extern __thread volatile int coll_busy __attribute__((tls_model("initial-exec")));

/* ---- the process -------------------------------------------------------- */

struct collector {
	struct ring_shm *shm; /* NULL: inert */
	size_t shm_len;
	int shm_mapped;       /* 1: mapped from GPROF_DL_SHM, 0: handed in by a test */
	int debug;            /* GPROF_DL_DEBUG=1 */
	uint32_t pid;
	uint32_t cmdline_len;
	int key_ok;
	pthread_key_t key;    /* its destructor ends a thread */
	_Atomic int exited;   /* PROCESS_EXIT written for this process */
	_Atomic int exit_code_known;
	int exit_code;
	char cmdline[RING_NAME_MAX + 1];
};

extern struct collector coll;

static inline int coll_active(void)
{
	return coll.shm != NULL;
}

/* The domain named GPROF_DL_NVTX_DOMAIN once registered (there is one: the
 * registry is by content), else NULL. Its ranges take their event type from
 * their category. */
extern struct coll_str *_Atomic coll_gpdl;

static inline struct coll_str *coll_gpdl_domain(void)
{
	return atomic_load_explicit(&coll_gpdl, memory_order_relaxed);
}

/* Whether a range or mark of this domain and category is recorded whatever the
 * window: the gprof-dl domain's ProfileStep and Dataloader. */
static inline int coll_always(const struct coll_str *domain, uint32_t category)
{
	return domain && domain == coll_gpdl_domain() &&
	       (category == GPROF_DL_CAT_PROFILE_STEP || category == GPROF_DL_CAT_DATALOADER);
}

/* ---- window.c: the recording window --------------------------------------- */

/* coll_win.state bits. The OFF bits say why detail is off; HAS_TIME that a
 * --delay/--duration window must be checked against the clock; TORCH that
 * default-domain pushes are read as torch's emit_nvtx messages. State 0, the
 * usual one, costs a push one load and one branch. */
enum coll_win_bit {
	COLL_WIN_OFF_TIMER = 1u << 0,  /* --timer-only */
	COLL_WIN_OFF_PAUSED = 1u << 1, /* --paused, or stop(), until start() */
	COLL_WIN_OFF_STEP = 1u << 2,   /* the step is outside --steps A:B (or none yet) */
	COLL_WIN_OFF_TIME = 1u << 3,   /* the clock is outside --delay/--duration */
	COLL_WIN_OFF_CAPTURE = 1u << 4, /* outside the --capture-range (or none yet) */
	COLL_WIN_OFF_MASK = (1u << 5) - 1,
	COLL_WIN_HAS_TIME = 1u << 5,
	COLL_WIN_TORCH = 1u << 6,
	COLL_WIN_TORCH_NO_COMM = 1u << 7, /* with TORCH: communication calls are left out */
};

/* --capture-range: what opens and closes COLL_WIN_OFF_CAPTURE. */
enum coll_capture {
	COLL_CAPTURE_NONE = 0,
	COLL_CAPTURE_CUDA = 1, /* cudaProfilerStart/Stop (cupti.c's callbacks) */
	COLL_CAPTURE_NVTX = 2, /* the NVTX range --nvtx-capture names (nvtx.c) */
};

/* Changes of the capture (or --schedule's cycles) kept for the GPU records,
 * which CUPTI hands over long after their time: one of them is written only
 * when the window was open at its start. A ring of the newest changes. */
#define COLL_WIN_HISTORY 4096

struct coll_window {
	_Atomic uint32_t state;    /* enum coll_win_bit */
	volatile int detail;       /* !(state & OFF_MASK), for gprof_dl_api.detail */
	uint32_t options;          /* enum gprof_dl_option */
	uint64_t t_begin, t_end;   /* the time window [t_begin, t_end); t_end UINT64_MAX: no end */
	uint64_t step_a, step_b;   /* the step window [a, b); b UINT64_MAX: no end */
	int has_steps;
	_Atomic uint64_t nvtx_steps; /* ProfileStep ranges pushed through NVTX so far */
	/* --schedule (has_steps 0): torch.profiler.schedule's numbers over steps */
	int has_schedule;
	uint64_t sched_wait, sched_warmup, sched_active, sched_repeat, sched_skip;
	/* --capture-range */
	int capture;                /* enum coll_capture */
	int capture_repeat;         /* --capture-range-end=repeat: every range, not the first only */
	_Atomic int capture_done;   /* the first range ended (and not repeat): no more */
	_Atomic uint32_t ncaptures; /* capture ranges opened so far */
	char nvtx_name[256];        /* --nvtx-capture NAME */
	char nvtx_domain[256];      /* its @DOMAIN; "" the default domain, "*" any */
	uint64_t delay_ns, duration_ns; /* --delay, --duration as given (UINT64_MAX: none), for the trace */
	/* the window's open and closed times, for GPU records (tracked: a capture
	 * or a schedule is set) */
	int tracked;
	int open0;                  /* open before the first change */
	_Atomic int open;           /* open now */
	_Atomic uint32_t nhist;
	struct {
		uint64_t ts;
		int open;
	} hist[COLL_WIN_HISTORY];
};

extern struct coll_window coll_win;

/* Reads the window from the environment (GPROF_DL_TIMER_ONLY, _STEPS, _T0_NS,
 * _DELAY_NS, _DURATION_NS, _PAUSED, _RECORD_SHAPES, _NO_PYTHON): at process
 * start, not in a fork child, which keeps its parent's. */
void coll_window_init(void);
/* State with the time bit brought up to now (HAS_TIME set). */
uint32_t coll_window_refresh(uint32_t state, uint64_t now);
/* The same for callers with no state at hand (the API's now()). */
void coll_window_refresh_now(uint64_t now);
/* Step n begins; the NVTX ProfileStep push calls it with its own count. */
void coll_window_step(uint64_t n, uint64_t now);
/* start() (on != 0) and stop(). */
void coll_window_pause(int paused, uint64_t now);
/* torch_nvtx(on): on as gprof-dl-api.h says (GPROF_DL_TORCH_NVTX_NO_COMM) */
void coll_window_torch(int on);
/* The capture range begins (on) or ends at now: cudaProfilerStart/Stop, the
 * --nvtx-capture range's push and pop. No-op without a capture range. */
void coll_window_capture(int on, uint64_t now);
/* The mark that says which window this process records (a capture range or
 * a schedule; none else), at its start. */
void coll_window_describe(void);
/* Whether the window was open at ts (host clock): 1 when no capture or
 * schedule is tracked. For GPU records, judged after the fact. */
int coll_window_open_at(uint64_t ts);

/* Whether detail is on at now: one load while there is no window at all. */
static inline int coll_detail_at(uint32_t state, uint64_t now)
{
	if (COLL_LIKELY(!(state & (COLL_WIN_OFF_MASK | COLL_WIN_HAS_TIME))))
		return 1;
	if (state & COLL_WIN_HAS_TIME)
		state = coll_window_refresh(state, now);
	return !(state & COLL_WIN_OFF_MASK);
}

static inline uint32_t coll_window_state(void)
{
	return atomic_load_explicit(&coll_win.state, memory_order_relaxed);
}

/* ---- torch.c: torch's emit_nvtx messages ---------------------------------- */

/* What torch (torch/csrc/profiler/util.cpp, getNvtxStr) puts in an NVTX
 * message: "NAME", then any of ", seq = N", ", op_id = M", ", sizes = [[..]]",
 * ", input_op_ids = [..]". */
struct coll_torch_msg {
	const char *name;    /* NAME: the text before the first of the parts */
	size_t name_len;
	const char *shapes;  /* the sizes' value, NULL: none */
	size_t shapes_len;
	int64_t seq;         /* -1: none */
};

/* Bytes of an ASCII message the parser looks at (the shapes of a long input
 * list run to a few KiB; NAME and the shapes are then cut to RING_NAME_MAX). */
#define COLL_TORCH_MSG_MAX 65536u

/* Parses len bytes of s; always succeeds (a message with no part is NAME alone). */
void coll_torch_parse(const char *s, size_t len, struct coll_torch_msg *m);

/* ---- clock.c: the clock events are stamped with --------------------------- */

#define COLL_TSC_ANCHOR_NS 1000000ull /* a thread's anchor is used for about 1 ms */

struct coll_tsc {
	_Atomic uint64_t mult; /* ns per TSC cycle, 32.32 fixed point; 0: not measured yet */
	_Atomic uint64_t span; /* cycles in COLL_TSC_ANCHOR_NS */
	uint64_t base_tsc, base_ns; /* the process's start, where the rate is measured from */
	int usable;            /* the kernel keeps CLOCK_MONOTONIC on the TSC */
};

/* A thread's anchor: the TSC and the clock read together; and the last
 * value it was given. */
struct coll_clk {
	uint64_t tsc, ns, last;
};

extern struct coll_tsc coll_tsc;
extern __thread struct coll_clk coll_clk __attribute__((tls_model("initial-exec")));

/* Decides whether the TSC may be read (at process start). */
void coll_clock_init(void);
/* clock_gettime, and a new anchor for this thread. */
uint64_t coll_clock_slow(void);

/* CLOCK_MONOTONIC in ns, as clock_now_ns() but for a TSC read where the
 * kernel's clock is the TSC; never less than this thread's previous value. */
static inline uint64_t coll_clock_now(void)
{
#if defined(__x86_64__)
	uint64_t mult = atomic_load_explicit(&coll_tsc.mult, memory_order_relaxed);
	if (COLL_LIKELY(mult != 0)) {
		uint64_t d = __builtin_ia32_rdtsc() - coll_clk.tsc;
		if (COLL_LIKELY(d < atomic_load_explicit(&coll_tsc.span, memory_order_relaxed))) {
			uint64_t ns = coll_clk.ns + (uint64_t)(((unsigned __int128)d * mult) >> 32);
			if (COLL_UNLIKELY(ns < coll_clk.last))
				return coll_clk.last;
			coll_clk.last = ns;
			return ns;
		}
	}
#endif
	return coll_clock_slow();
}

/* ---- log.c -------------------------------------------------------------- */

/* Writes "gprof-dl collector[pid]: ..." to stderr when GPROF_DL_DEBUG=1.
 * Formats: %s %d %u %x %p, with l or ll before d u x. errno is preserved. */
void coll_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- strings.c ---------------------------------------------------------- */

/* Interns len bytes (len <= RING_NAME_MAX) through t's cache: the id, writing a
 * STRING record first on a miss; 0 when that record could not be written. */
uint32_t coll_intern(struct coll_thread *t, const char *s, size_t len);
/* The id of a name as NVTX gave it; 0 when it could not be written. Adds
 * TRACE_EVF_NAME_TRUNCATED to *flags when the name was cut. */
uint32_t coll_name_id(struct coll_thread *t, const struct coll_name *n, uint32_t *flags);
/* The id of a registered string or domain name, writing it on first use
 * (coll_str_id_slow). */
uint32_t coll_str_id_slow(struct coll_thread *t, struct coll_str *s);
static inline uint32_t coll_str_id(struct coll_thread *t, struct coll_str *s)
{
	uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
	return COLL_LIKELY(id) ? id : coll_str_id_slow(t, s);
}
/* Registers a string (magic COLL_STR_MAGIC) or finds the domain of that name
 * (COLL_DOMAIN_MAGIC). NULL when out of memory. */
struct coll_str *coll_str_register(uint32_t magic, const struct coll_name *n);
/* Bytes of s to keep: at most RING_NAME_MAX, not cutting a UTF-8 sequence.
 * Adds TRACE_EVF_NAME_TRUNCATED to *flags when that is less than all. */
size_t coll_ascii_len(const char *s, uint32_t *flags);
/* Converts a wide string to UTF-8 into out (RING_NAME_MAX + 1 bytes, NUL
 * written): its length. Invalid code points become U+FFFD. */
size_t coll_wide_to_utf8(const wchar_t *w, char *out, uint32_t *flags);
/* Bytes of s (len of them) to keep: at most RING_NAME_MAX, not cutting a
 * UTF-8 sequence. */
size_t coll_cut_len(const char *s, size_t len);
/* Empties t's cache (a fresh thread). */
void coll_cache_reset(struct coll_thread *t);
/* Forgets the ids of registered strings and domains: a new ring (tests). */
void coll_registry_forget(void);

/* ---- thread.c ----------------------------------------------------------- */

/* This thread's state, setting it up (and writing THREAD_START) on first use.
 * NULL when inert or when the state could not be had; such events are counted. */
struct coll_thread *coll_thread_slow(void);
static inline struct coll_thread *coll_thread(void)
{
	struct coll_thread *t = coll_tls;
	if (COLL_LIKELY((uintptr_t)t > 1))
		return t;
	return coll_thread_slow();
}
/* Maps and installs a fresh state for the calling thread, with a slot claimed
 * for (coll.pid, gettid()); writes nothing. NULL when out of memory. */
struct coll_thread *coll_thread_setup(void);
/* Writes THREAD_START for t. */
void coll_thread_started(struct coll_thread *t);
/* Writes THREAD_NAME (from prctl), THREAD_END and then exit_rec (when not
 * NULL, PROCESS_EXIT stamped with the thread's end) for t, releases its slot,
 * unmaps t and installs COLL_THREAD_DEAD. */
void coll_thread_finish(struct coll_thread *t, struct ring_process *exit_rec);
/* After fork, in the child: t gets a slot of its own and an empty mirror (see
 * coll_stack_inherit). */
void coll_thread_forked(struct coll_thread *t);
/* nvtxNameOsThread named tid: its end does not overwrite that name with the
 * kernel's (prctl) one. */
void coll_thread_named(uint32_t tid);
/* Looks up the real pthread_create, once. */
void coll_resolve_pthread(void);
/* Creates the key whose destructor ends threads. */
int coll_thread_init(void);

/* ---- emit.c: the bottom primitive ----------------------------------------- */

/* Counts an event that was not written (ring busy, name lost, too deep). */
void coll_drop(struct coll_thread *t);
/* An event from a thread with no state at all. */
void coll_drop_nothread(void);
/* Appends rec to t's ring, or counts it when t has no slot. 0 or -1. */
static inline int coll_emit(struct coll_thread *t, const void *rec)
{
	if (COLL_UNLIKELY(!t->slot)) {
		coll_drop_nothread();
		return -1;
	}
	return ring_write(coll.shm, t->slot, rec);
}

/* ---- record.c: writing -------------------------------------------------- */

/* After fork, in the child: the ranges on t's stack are its parent's (they
 * are recorded there): kept, so that levels and pops still match, but never
 * mirrored or written by the child. */
void coll_stack_inherit(struct coll_thread *t);
/* Writes the STRING record of a registered string or domain name now, so that
 * its id is defined before any event uses it. */
void coll_announce(struct coll_str *s);

/* The NVTX operations, domain NULL meaning the default domain. They return
 * what NVTX returns to the program. */
/* samples: an NVTX payload's count, used by a ProfileStep of the gprof-dl domain. */
int coll_push(struct coll_str *domain, const struct coll_name *n, uint32_t category, uint64_t samples);
int coll_pop(struct coll_str *domain);
void coll_mark(struct coll_str *domain, const struct coll_name *n, uint32_t category);
uint64_t coll_range_start(struct coll_str *domain, const struct coll_name *n, uint32_t category);
void coll_range_end(uint64_t id);
void coll_name_category(struct coll_str *domain, uint32_t category, const struct coll_name *n);
void coll_name_thread(uint32_t tid, const struct coll_name *n);

/* The interface's operations (gprof-dl-api.h): names are string ids, the
 * domain is the gprof-dl one. */
void coll_api_push(uint32_t category, uint32_t name, int64_t seq, uint32_t shapes);
void coll_api_pop(void);
void coll_api_range(uint32_t category, uint32_t name, uint64_t start_ns, uint64_t end_ns,
		    uint64_t samples);
void coll_api_mark(uint32_t category, uint32_t name);
uint32_t coll_api_string(const char *s, size_t len);
struct gprof_dl_comm;
void coll_api_comm(const struct gprof_dl_comm *c);
void coll_api_rank(int32_t rank, int32_t local_rank, int32_t world_size, uint32_t backend);
/* Writes RING_REC_PROCESS_RANK for this process (source: enum ring_rank_source). */
void coll_write_rank(struct coll_thread *t, unsigned source, int32_t rank, int32_t local_rank,
		     int32_t world_size, uint32_t backend);

/* ---- process.c ---------------------------------------------------------- */

/* Runs the process set-up once (attach, first thread, PROCESS_START); safe to
 * call from every entry point. */
void coll_init(void);
/* Writes this thread's end and PROCESS_EXIT (once per process). */
void coll_process_exit(void);

#endif
