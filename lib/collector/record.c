/*
 * record.c - NVTX operations as ring records: the collector's hot path.
 *
 * A push touches only this thread's state: it interns the name through the
 * thread's cache, stamps the time and puts the range on the TLS stack (and its
 * mirror in the slot). Nothing is written to the ring until the pop, which
 * writes the range once, complete. Every operation runs under coll_busy so
 * that a signal handler calling NVTX in the middle of one is dropped and
 * counted instead of interleaving its record with a half-written one.
 *
 * NVTX keeps one push stack per domain. Here a thread has one stack of all its
 * domains' ranges, each entry knowing its domain: a pop ends the newest range
 * of its domain, which is nearly always the top entry.
 */
#include "formats/trace/trace.h"
#include "lib/collector/collector.h"
#include "lib/common/clock.h"

#include <string.h>

int coll_emit(struct coll_thread *t, const void *rec)
{
	if (COLL_UNLIKELY(!t->slot)) {
		atomic_fetch_add_explicit(&coll.shm->no_slot_events, 1, memory_order_relaxed);
		return -1;
	}
	return ring_write(coll.shm, t->slot, rec);
}

void coll_drop(struct coll_thread *t)
{
	if ((uintptr_t)t > 1 && t->slot)
		atomic_fetch_add_explicit(&t->slot->dropped, 1, memory_order_relaxed);
	else
		coll_drop_nothread();
}

void coll_drop_nothread(void)
{
	struct ring_shm *shm = coll.shm;
	if (shm)
		atomic_fetch_add_explicit(&shm->no_slot_events, 1, memory_order_relaxed);
}

static inline struct coll_thread *enter(void)
{
	struct coll_thread *t = coll_thread();
	if (COLL_UNLIKELY(!t))
		return NULL;
	if (COLL_UNLIKELY(coll_busy)) {
		coll_drop(t);
		return NULL;
	}
	coll_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	return t;
}

static inline void leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	coll_busy = 0;
}

static inline uint32_t domain_id(struct coll_thread *t, struct coll_str *domain)
{
	return domain ? coll_str_id(t, domain) : 0;
}

/* Stack entry i is mirrored at i - inherited, while that is < RING_STACK_MAX. */
static void mirror_depth(struct coll_thread *t)
{
	uint32_t d = t->depth - t->inherited;
	atomic_store_explicit(&t->slot->depth, d < RING_STACK_MAX ? d : RING_STACK_MAX, memory_order_release);
}

static void mirror_entry(struct coll_thread *t, uint32_t i)
{
	const struct coll_open *o = &t->stack[i];
	struct ring_open_range *m = &t->slot->stack[i - t->inherited];
	m->start_ns = o->start_ns;
	m->name_str = o->name_str;
	m->domain_str = o->domain_str;
	m->category = o->category;
	m->flags = o->flags;
}

void coll_stack_inherit(struct coll_thread *t)
{
	t->inherited = t->depth;
	if (t->slot)
		mirror_depth(t);
}

void coll_announce(struct coll_str *s)
{
	struct coll_thread *t = enter();
	if (!t)
		return;
	if (t->slot)
		coll_str_id(t, s);
	leave();
}

int coll_push(struct coll_str *domain, const struct coll_name *n, uint32_t category)
{
	struct coll_thread *t = enter();
	if (!t)
		return -1;
	uint32_t flags = 0, name = 0, dom = 0, level = 0;
	if (COLL_LIKELY(t->slot != NULL)) {
		name = coll_name_id(t, n, &flags);
		dom = domain_id(t, domain);
	}
	for (uint32_t i = t->depth; i-- > 0;) {
		if (t->stack[i].domain == domain) {
			level = t->stack[i].level + 1;
			break;
		}
	}
	if (COLL_UNLIKELY(t->depth >= COLL_STACK_MAX)) {
		coll_drop(t);
		leave();
		return (int)(level + t->overflow++);
	}

	uint32_t d = t->depth;
	struct coll_open *o = &t->stack[d];
	o->start_ns = clock_now_ns();
	o->name_str = name;
	o->domain_str = dom;
	o->category = category;
	o->flags = flags;
	o->level = level;
	o->domain = domain;
	t->depth = d + 1;
	if (COLL_LIKELY(t->slot != NULL) && d - t->inherited < RING_STACK_MAX) {
		mirror_entry(t, d);
		atomic_store_explicit(&t->slot->depth, d + 1 - t->inherited, memory_order_release);
	}
	leave();
	return (int)level;
}

static void pop_unbalanced(struct coll_thread *t, struct coll_str *domain, uint64_t now)
{
	struct ring_mark m = {
		.h = {RING_REC_POP_UNBALANCED, sizeof(m), TRACE_EVF_UNBALANCED_POP},
		.ts_ns = now,
		.domain_str = t->slot ? domain_id(t, domain) : 0,
	};
	coll_emit(t, &m);
}

/* Takes entry i off the stack; the mirror never shows an entry twice. */
static void stack_remove(struct coll_thread *t, uint32_t i)
{
	uint32_t d = t->depth - 1;
	if (COLL_LIKELY(i == d && i >= t->inherited)) {
		t->depth = d;
		if (t->slot)
			mirror_depth(t);
		return;
	}
	if (i < t->inherited) { /* the entries above keep their mirror positions */
		memmove(&t->stack[i], &t->stack[i + 1], (d - i) * sizeof(t->stack[0]));
		t->inherited--;
		t->depth = d;
		return;
	}
	uint32_t m = i - t->inherited;
	if (t->slot && m < RING_STACK_MAX)
		atomic_store_explicit(&t->slot->depth, m, memory_order_release);
	memmove(&t->stack[i], &t->stack[i + 1], (d - i) * sizeof(t->stack[0]));
	t->depth = d;
	if (t->slot) {
		for (uint32_t k = i; k < d && k - t->inherited < RING_STACK_MAX; k++)
			mirror_entry(t, k);
		mirror_depth(t);
	}
}

int coll_pop(struct coll_str *domain)
{
	struct coll_thread *t = enter();
	if (!t)
		return -1;
	uint64_t now = clock_now_ns();
	if (COLL_UNLIKELY(t->overflow)) {
		int level = (int)(COLL_STACK_MAX + --t->overflow);
		coll_drop(t);
		leave();
		return level;
	}
	uint32_t i = t->depth;
	while (i > 0 && t->stack[i - 1].domain != domain)
		i--;
	if (COLL_UNLIKELY(i == 0)) {
		pop_unbalanced(t, domain, now);
		leave();
		return -1;
	}
	const struct coll_open *o = &t->stack[--i];
	int level = (int)o->level;
	if (COLL_UNLIKELY(i < t->inherited)) {
		/* pushed by the parent before the fork: recorded there */
	} else if (COLL_LIKELY(o->name_str != 0)) {
		struct ring_range r = {
			.h = {RING_REC_RANGE, sizeof(r), o->flags},
			.start_ns = o->start_ns,
			.end_ns = now,
			.name_str = o->name_str,
			.domain_str = o->domain_str,
			.category = o->category,
		};
		coll_emit(t, &r);
	} else if (!t->slot) {
		coll_drop(t);
	}
	/* else its name could not be written at the push: counted then */
	stack_remove(t, i);
	leave();
	return level;
}

void coll_mark(struct coll_str *domain, const struct coll_name *n, uint32_t category)
{
	struct coll_thread *t = enter();
	if (!t)
		return;
	if (COLL_UNLIKELY(!t->slot)) {
		coll_drop(t);
		leave();
		return;
	}
	uint32_t flags = TRACE_EVF_MARK;
	uint32_t name = coll_name_id(t, n, &flags);
	uint32_t dom = domain_id(t, domain);
	if (name) {
		struct ring_mark m = {
			.h = {RING_REC_MARK, sizeof(m), flags},
			.ts_ns = clock_now_ns(),
			.name_str = name,
			.domain_str = dom,
			.category = category,
		};
		coll_emit(t, &m);
	}
	leave();
}

uint64_t coll_range_start(struct coll_str *domain, const struct coll_name *n, uint32_t category)
{
	struct coll_thread *t = enter();
	if (!t)
		return 0;
	uint64_t id = atomic_fetch_add_explicit(&coll.shm->next_range_id, 1, memory_order_relaxed);
	if (COLL_UNLIKELY(!t->slot)) {
		coll_drop(t);
		leave();
		return id;
	}
	uint32_t flags = TRACE_EVF_START_END;
	uint32_t name = coll_name_id(t, n, &flags);
	uint32_t dom = domain_id(t, domain);
	if (name) {
		struct ring_range_start r = {
			.h = {RING_REC_RANGE_START, sizeof(r), flags},
			.id = id,
			.ts_ns = clock_now_ns(),
			.name_str = name,
			.domain_str = dom,
			.category = category,
		};
		coll_emit(t, &r);
	}
	leave();
	return id;
}

void coll_range_end(uint64_t id)
{
	if (!id) /* its start was not recorded: counted then */
		return;
	struct coll_thread *t = enter();
	if (!t)
		return;
	struct ring_range_end r = {
		.h = {RING_REC_RANGE_END, sizeof(r), 0},
		.id = id,
		.ts_ns = clock_now_ns(),
	};
	coll_emit(t, &r);
	leave();
}

void coll_name_category(struct coll_str *domain, uint32_t category, const struct coll_name *n)
{
	struct coll_thread *t = enter();
	if (!t)
		return;
	uint32_t flags = 0;
	uint32_t name = t->slot ? coll_name_id(t, n, &flags) : 0;
	uint32_t dom = t->slot ? domain_id(t, domain) : 0;
	if (name || !t->slot) {
		struct ring_category r = {
			.h = {RING_REC_CATEGORY, sizeof(r), flags},
			.domain_str = dom,
			.category = category,
			.name_str = name,
		};
		coll_emit(t, &r);
	}
	leave();
}

void coll_name_thread(uint32_t tid, const struct coll_name *n)
{
	struct coll_thread *t = enter();
	if (!t)
		return;
	uint32_t flags = 0;
	uint32_t name = t->slot ? coll_name_id(t, n, &flags) : 0;
	if (name || !t->slot) {
		struct ring_thread_name r = {
			.h = {RING_REC_THREAD_NAME, sizeof(r), flags},
			.tid = tid,
			.name_str = name,
		};
		coll_emit(t, &r);
	}
	coll_thread_named(tid);
	leave();
}
