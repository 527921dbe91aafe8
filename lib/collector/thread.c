/*
 * thread.c - a thread's life as the collector sees it.
 *
 * Every thread gets its state once: a private anonymous mapping (never malloc,
 * so that it can happen in a signal handler or a fork child) holding its string
 * cache and push stack, a slot claimed for it, and a pthread key value whose
 * destructor writes the thread's name and end and releases the slot.
 *
 * Threads created with pthread_create while the collector is loaded start
 * through thread_start(), which sets their state up and writes THREAD_START
 * before the program's start routine runs. Threads the collector never saw
 * start (created before it was loaded, or by raw clone) are set up at their
 * first event.
 *
 * A thread's name is the kernel's (its comm, what pthread_setname_np and
 * prctl set: "pt_autograd_0", "PTThreadPool"), unless the program named it
 * through NVTX (gprof_dl's Python threads: "MainThread", "loader"). It is
 * written when a thread is first seen at its first event, each time the
 * thread names itself through pthread_setname_np (so that a name survives a
 * process that ends with _exit or a kill, when no thread end is written),
 * and at the thread's end. The recorder keeps the last.
 */
#include "lib/collector/collector.h"
#include "lib/collector/sched.h"
#include "common/clock.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread struct coll_thread *coll_tls __attribute__((tls_model("initial-exec")));
__thread volatile int coll_busy __attribute__((tls_model("initial-exec")));

static int thread_take_named(uint32_t tid);
static int thread_is_named(uint32_t tid);

/* THREAD_NAME for the calling thread t from name (at most 15 bytes, the
 * kernel's limit); caller holds coll_busy. Not when NVTX named it. */
static void thread_name_emit(struct coll_thread *t, const char *name)
{
	if (!t->slot || !*name || thread_is_named(t->tid))
		return;
	uint32_t id = coll_intern(t, name, strnlen(name, 16));
	if (!id || id == t->name_str)
		return; /* said already */
	t->name_str = id;
	struct ring_thread_name n = {
		.h = {RING_REC_THREAD_NAME, sizeof(n), 0},
		.tid = t->tid,
		.name_str = id,
	};
	coll_emit(t, &n);
}

static uint32_t current_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

struct coll_thread *coll_thread_setup(void)
{
	int saved = errno;
	struct coll_thread *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		coll_log("cannot map a thread's state (errno %d): its events are counted, not recorded", errno);
		errno = saved;
		return NULL;
	}
	t->pid = coll.pid;
	t->tid = current_tid();
	t->slot = ring_slot_claim(coll.shm, t->pid, t->tid);
	if (!t->slot) {
		atomic_fetch_add_explicit(&coll.shm->no_slot_threads, 1, memory_order_relaxed);
		coll_log("every slot is taken: thread %u is counted, not recorded", t->tid);
	}
	coll_tls = t;
	if (coll.key_ok)
		pthread_setspecific(coll.key, t);
	errno = saved;
	return t;
}

void coll_thread_started(struct coll_thread *t)
{
	if (!t->slot)
		return; /* the thread is counted in no_slot_threads, its events in no_slot_events */
	struct ring_thread r = {
		.h = {RING_REC_THREAD_START, sizeof(r), 0},
		.ts_ns = coll_clock_now(), /* the thread's events' clock */
		.pid = t->pid,
		.tid = t->tid,
	};
	coll_emit(t, &r);
}

struct coll_thread *coll_thread_slow(void)
{
	struct coll_thread *t = coll_tls;
	if ((uintptr_t)t > 1)
		return t;
	if (!coll.shm)
		return NULL;
	if (t == COLL_THREAD_DEAD || coll_busy) {
		coll_drop_nothread();
		return NULL;
	}
	coll_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	t = coll_thread_setup();
	if (t) {
		coll_thread_started(t);
		/* a thread the collector did not see start may be named already
		 * (created before it was loaded); the main thread's comm is the
		 * program's, which its end writes */
		char comm[17] = {0};
		if (t->tid != t->pid && prctl(PR_GET_NAME, comm, 0, 0, 0) == 0)
			thread_name_emit(t, comm);
	} else {
		coll_tls = COLL_THREAD_DEAD;
	}
	atomic_signal_fence(memory_order_seq_cst);
	coll_busy = 0;
	if (!t)
		coll_drop_nothread();
	return t;
}

void coll_thread_finish(struct coll_thread *t, struct ring_process *exit_rec)
{
	int saved = errno;
	char comm[17] = {0};
	prctl(PR_GET_NAME, comm, 0, 0, 0);

	coll_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	if (t->slot) {
		/* The kernel's name, unless the program gave one through NVTX. */
		uint32_t name = thread_take_named(t->tid) ? 0 : coll_intern(t, comm, strnlen(comm, 16));
		if (name && name != t->name_str) { /* not when said already */
			struct ring_thread_name n = {
				.h = {RING_REC_THREAD_NAME, sizeof(n), 0},
				.tid = t->tid,
				.name_str = name,
			};
			coll_emit(t, &n);
		}
		struct ring_thread e = {
			.h = {RING_REC_THREAD_END, sizeof(e), 0},
			.ts_ns = coll_clock_now(), /* the thread's events' clock */
			.pid = t->pid,
			.tid = t->tid,
		};
		coll_emit(t, &e);
		if (exit_rec) {
			exit_rec->ts_ns = e.ts_ns;
			coll_emit(t, exit_rec);
		}
		/* Ranges still open stay in the mirror: the launcher ends them here. */
		ring_slot_release(t->slot);
	}
	coll_tls = COLL_THREAD_DEAD;
	if (coll.key_ok)
		pthread_setspecific(coll.key, NULL);
	munmap(t, sizeof(*t));
	atomic_signal_fence(memory_order_seq_cst);
	coll_busy = 0;
	errno = saved;
}

void coll_thread_forked(struct coll_thread *t)
{
	t->pid = coll.pid;
	t->tid = current_tid();
	t->ids_next = t->ids_end = t->ids_block = 0; /* the parent hands those out */
	t->name_str = 0; /* the child's slot has no name yet */
	t->slot = ring_slot_claim(coll.shm, t->pid, t->tid);
	if (!t->slot) {
		atomic_fetch_add_explicit(&coll.shm->no_slot_threads, 1, memory_order_relaxed);
		coll_log("every slot is taken: thread %u is counted, not recorded", t->tid);
	}
	coll_stack_inherit(t);
}

/* Threads named through NVTX, by tid: a small table, filled with a
 * compare-and-swap; when it is full the kernel's name wins at the end. */
#define NAMED_MAX 256u
static _Atomic uint32_t named_tids[NAMED_MAX];

void coll_thread_named(uint32_t tid)
{
	if (!tid)
		return;
	for (uint32_t i = 0; i < NAMED_MAX; i++) {
		uint32_t cur = atomic_load_explicit(&named_tids[i], memory_order_relaxed);
		if (cur == tid)
			return;
		if (!cur && atomic_compare_exchange_strong(&named_tids[i], &cur, tid))
			return;
	}
}

static int thread_is_named(uint32_t tid)
{
	for (uint32_t i = 0; i < NAMED_MAX; i++)
		if (atomic_load_explicit(&named_tids[i], memory_order_relaxed) == tid)
			return 1;
	return 0;
}

/* Whether tid was named through NVTX; forgets it (tids are reused). */
static int thread_take_named(uint32_t tid)
{
	for (uint32_t i = 0; i < NAMED_MAX; i++) {
		uint32_t cur = tid;
		if (atomic_compare_exchange_strong(&named_tids[i], &cur, 0))
			return 1;
	}
	return 0;
}

/* pthread calls it with the value the thread set, at the thread's end
 * (pthread_exit and cancellation included). */
static void thread_key_destructor(void *p)
{
	coll_sched_thread_end();
	if (p != coll_tls || !coll.shm)
		return; /* already finished, or a stale value */
	coll_thread_finish(p, NULL);
}

int coll_thread_init(void)
{
	if (!coll.key_ok)
		coll.key_ok = pthread_key_create(&coll.key, thread_key_destructor) == 0;
	return coll.key_ok ? 0 : -1;
}

/* ---- pthread_create ----------------------------------------------------- */

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static _Atomic(pthread_create_fn) real_pthread_create;

struct thread_start_arg {
	void *(*fn)(void *);
	void *arg;
};

void coll_resolve_pthread(void)
{
	if (!atomic_load_explicit(&real_pthread_create, memory_order_acquire))
		atomic_store_explicit(&real_pthread_create, (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create"),
				      memory_order_release);
}

static void *thread_start(void *p)
{
	struct thread_start_arg a = *(struct thread_start_arg *)p;
	free(p);
	if (coll.shm && !coll_tls) {
		coll_busy = 1;
		atomic_signal_fence(memory_order_seq_cst);
		struct coll_thread *t = coll_thread_setup();
		if (t)
			coll_thread_started(t);
		atomic_signal_fence(memory_order_seq_cst);
		coll_busy = 0;
	}
	return a.fn(a.arg);
}

COLL_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int saved = errno;
	coll_init();
	coll_resolve_pthread();
	pthread_create_fn real = atomic_load_explicit(&real_pthread_create, memory_order_acquire);
	if (!real)
		return EAGAIN;
	struct thread_start_arg *a = coll_active() ? malloc(sizeof(*a)) : NULL;
	errno = saved;
	if (!a)
		return real(thread, attr, fn, arg);
	a->fn = fn;
	a->arg = arg;
	int rc = real(thread, attr, thread_start, a);
	if (rc != 0) {
		saved = errno;
		free(a);
		errno = saved;
	}
	return rc;
}

/* ---- pthread_setname_np ------------------------------------------------- */

typedef int (*pthread_setname_fn)(pthread_t, const char *);
static _Atomic(pthread_setname_fn) real_pthread_setname;

/* torch names its threads with it (c10::setThreadName: "pt_autograd_0",
 * "PTThreadPool"): the name goes into the trace as soon as it is set, when
 * a thread names itself. Another thread's name is read at its end. */
COLL_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
	pthread_setname_fn real = atomic_load_explicit(&real_pthread_setname, memory_order_acquire);
	if (!real) {
		real = (pthread_setname_fn)dlsym(RTLD_NEXT, "pthread_setname_np");
		if (!real)
			return ENOSYS;
		atomic_store_explicit(&real_pthread_setname, real, memory_order_release);
	}
	int rc = real(thread, name);
	if (rc != 0 || !coll_active() || !pthread_equal(thread, pthread_self()))
		return rc;
	int saved = errno;
	struct coll_thread *t = coll_thread();
	if (t && !coll_busy) {
		coll_busy = 1;
		atomic_signal_fence(memory_order_seq_cst);
		thread_name_emit(t, name);
		atomic_signal_fence(memory_order_seq_cst);
		coll_busy = 0;
	}
	errno = saved;
	return rc;
}
