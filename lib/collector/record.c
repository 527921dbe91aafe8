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
 *
 * The recording window (window.c) is asked once per event, with the time the
 * event reads anyway. A range pushed while it is closed goes on the stack all
 * the same (levels and pops must match) but flagged COLL_OPEN_GATED, with no
 * name interned: its pop writes nothing, and the launcher recovers nothing
 * from its mirror entry. A range pushed while it is open is written at its
 * pop whatever the window did meanwhile.
 *
 * A range with a torch sequence number, input shapes or a step's samples is
 * written as RING_REC_RANGE_EXT; every other one stays the smaller RANGE.
 */
#include "formats/trace/trace.h"
#include "lib/collector/collector.h"
#include "lib/collector/sched.h"
#include "lib/collector/gprof-dl-api.h"
#include "common/clock.h"

#include <string.h>

/* Every operation runs between these: the thread's state, or NULL (counted)
 * when it has none or a signal handler interrupted the collector. */
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

/* Whether an event of this domain and category at now falls outside the
 * recording window (and is not one recorded whatever the window). */
static inline int gated(const struct coll_str *domain, uint32_t category, uint64_t now)
{
	return !coll_detail_at(coll_window_state(), now) && !coll_always(domain, category);
}

static inline uint32_t domain_id(struct coll_thread *t, struct coll_str *domain)
{
	return domain ? coll_str_id(t, domain) : 0;
}

/* The name (returned) and domain (*dom) of a mark or a range start in t's
 * strings; 0 when the record is not written: t has no ring slot (a drop,
 * counted here) or the name could not be put (counted by coll_name_id). */
static inline uint32_t point_names(struct coll_thread *t, struct coll_str *domain,
				   const struct coll_name *n, uint32_t *flags, uint32_t *dom)
{
	if (COLL_UNLIKELY(!t->slot)) {
		coll_drop(t);
		return 0;
	}
	uint32_t name = coll_name_id(t, n, flags);
	*dom = domain_id(t, domain);
	return name;
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
	m->flags = o->flags & ~COLL_OPEN_EXT;
	m->seq = o->seq;
	m->samples = o->samples;
	m->shapes_str = o->shapes_str;
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

/* The text of a message, for torch's parser: NULL when it has none. */
static const char *message_text(const struct coll_name *n, char *buf, size_t *len)
{
	uint32_t cut = 0;
	switch (n->kind) {
	case COLL_NAME_ASCII:
		*len = strnlen(n->p, COLL_TORCH_MSG_MAX);
		return n->p;
	case COLL_NAME_WIDE:
		*len = coll_wide_to_utf8(n->p, buf, &cut);
		return buf;
	case COLL_NAME_REG:
		*len = ((const struct coll_str *)n->p)->len;
		return ((const struct coll_str *)n->p)->text;
	default:
		return NULL;
	}
}

/* A default-domain push read as torch's emit_nvtx message: an Operator of the
 * gprof-dl domain named NAME. 0 when the message is none or that domain's
 * name cannot be had (then the push is recorded as any other); -1 when it is
 * a communication call that the binding records itself (state has
 * COLL_WIN_TORCH_NO_COMM): left out as a push while detail is off. */
static int torch_push(struct coll_thread *t, uint32_t state, const struct coll_name *n, uint32_t *name,
		      uint32_t *flags, uint32_t *dom, int64_t *seq, uint32_t *shapes)
{
	char buf[RING_NAME_MAX + 1];
	size_t len;
	struct coll_torch_msg m;
	struct coll_str *gpdl = coll_gpdl_domain();
	const char *text = message_text(n, buf, &len);
	if (!text || !gpdl || !(*dom = coll_str_id(t, gpdl)))
		return 0;
	coll_torch_parse(text, len, &m);
	if (COLL_UNLIKELY(state & COLL_WIN_TORCH_NO_COMM) && trace_name_comm_call(m.name, m.name_len))
		return -1;
	size_t keep = coll_cut_len(m.name, m.name_len);
	if (keep < m.name_len)
		*flags |= TRACE_EVF_NAME_TRUNCATED;
	*name = coll_intern(t, m.name, keep);
	*shapes = m.shapes ? coll_intern(t, m.shapes, coll_cut_len(m.shapes, m.shapes_len)) : 0;
	*seq = m.seq;
	if (m.shapes && !*shapes) /* its STRING record did not fit: counted; drop the range too */
		*name = 0;
	return 1;
}

/* Puts a range on t's stack (and its mirror); the level NVTX returns. */
static inline __attribute__((always_inline)) int
push_entry(struct coll_thread *t, const struct coll_str *domain, uint64_t now, uint32_t name,
		      uint32_t dom, uint32_t category, uint32_t flags, int64_t seq, uint32_t shapes,
		      uint64_t samples)
{
	uint32_t level = 0;
	for (uint32_t i = t->depth; i-- > 0;) {
		if (t->stack[i].domain == domain) {
			level = t->stack[i].level + 1;
			break;
		}
	}
	if (COLL_UNLIKELY(t->depth >= COLL_STACK_MAX)) {
		coll_drop(t);
		return (int)(level + t->overflow++);
	}

	uint32_t d = t->depth;
	struct coll_open *o = &t->stack[d];
	o->start_ns = now;
	o->name_str = name;
	o->domain_str = dom;
	o->category = category;
	o->flags = flags | (seq >= 0 || shapes || samples ? COLL_OPEN_EXT : 0);
	o->level = level;
	o->shapes_str = shapes;
	o->seq = seq;
	o->samples = samples;
	o->domain = domain;
	t->depth = d + 1;
	if (COLL_LIKELY(t->slot != NULL) && d - t->inherited < RING_STACK_MAX) {
		mirror_entry(t, d);
		atomic_store_explicit(&t->slot->depth, d + 1 - t->inherited, memory_order_release);
	}
	return (int)level;
}

int coll_push(struct coll_str *domain, const struct coll_name *n, uint32_t category, uint64_t samples)
{
	struct coll_thread *t = enter();
	if (!t)
		return -1;
	uint64_t now = coll_clock_now();
	uint32_t state = coll_window_state();
	uint32_t flags = 0, name = 0, dom = 0, shapes = 0;
	int64_t seq = -1;
	if (COLL_UNLIKELY(domain != NULL) && domain == coll_gpdl_domain() &&
	    category == GPROF_DL_CAT_PROFILE_STEP) {
		/* a step begins: C programs get --steps from their NVTX steps */
		coll_window_step(atomic_fetch_add_explicit(&coll_win.nvtx_steps, 1, memory_order_relaxed), now);
		coll_sched_step(now);
		state = coll_window_state();
	} else {
		samples = 0;
	}
	if (COLL_UNLIKELY(!coll_detail_at(state, now)) && !coll_always(domain, category)) {
		flags = COLL_OPEN_GATED;
		samples = 0;
	} else if (COLL_LIKELY(t->slot != NULL)) {
		int k = COLL_UNLIKELY(state & COLL_WIN_TORCH) && !domain
				? torch_push(t, state, n, &name, &flags, &dom, &seq, &shapes)
				: 0;
		if (k > 0) {
			category = GPROF_DL_CAT_OPERATOR;
		} else if (k < 0) {
			flags = COLL_OPEN_GATED;
		} else {
			name = coll_name_id(t, n, &flags);
			dom = domain_id(t, domain);
		}
	}
	int level = push_entry(t, domain, now, name, dom, category, flags, seq, shapes, samples);
	leave();
	return level;
}

void coll_api_push(uint32_t category, uint32_t name, int64_t seq, uint32_t shapes)
{
	struct coll_str *gpdl = coll_gpdl_domain();
	struct coll_thread *t = gpdl ? enter() : NULL;
	if (!t)
		return;
	uint64_t now = coll_clock_now();
	uint32_t flags = 0, dom = 0;
	if (gated(gpdl, category, now)) {
		flags = COLL_OPEN_GATED;
		name = shapes = 0;
	} else if (t->slot) {
		if (!name)
			coll_drop(t); /* a name that could not be had: the range is lost */
		else if (!(dom = coll_str_id(t, gpdl)))
			name = 0; /* its STRING record did not fit: counted */
	}
	push_entry(t, gpdl, now, name, dom, category, flags, seq < 0 ? -1 : seq, shapes, 0);
	leave();
}

static void pop_unbalanced(struct coll_thread *t, struct coll_str *domain, uint64_t now)
{
	if (!coll_detail_at(coll_window_state(), now))
		return; /* a mark, of no category: not recorded while the window is closed */
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

/* A ProfileStep of the gprof-dl domain, complete, with its thread's CPU and
 * run-queue time over it where samples lie near its ends (sched.h). */
static void step_emit(struct coll_thread *t, uint64_t start, uint64_t end, uint32_t name,
		      uint32_t dom, uint32_t category, uint32_t flags, uint64_t samples)
{
	struct ring_step r = {
		.h = {RING_REC_STEP, sizeof(r), flags},
		.start_ns = start,
		.end_ns = end,
		.name_str = name,
		.domain_str = dom,
		.category = category,
		.samples = samples,
	};
	if (!coll_sched_span(start, end, &r.cpu_ns, &r.runq_ns))
		r.cpu_ns = r.runq_ns = 0;
	coll_emit(t, &r);
}

int coll_pop(struct coll_str *domain)
{
	struct coll_thread *t = enter();
	if (!t)
		return -1;
	uint64_t now = coll_clock_now();
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
	} else if (COLL_UNLIKELY(o->category == GPROF_DL_CAT_PROFILE_STEP) && domain &&
		   domain == coll_gpdl_domain() && !(o->flags & COLL_OPEN_GATED) && o->name_str) {
		coll_sched_sample_for(now, o->start_ns, now);
		step_emit(t, o->start_ns, now, o->name_str, o->domain_str, o->category,
			  o->flags & 0xffu, o->samples);
	} else if (COLL_UNLIKELY(o->flags & (COLL_OPEN_GATED | COLL_OPEN_EXT))) {
		/* pushed while the window was closed: not recorded, not a drop;
		 * else with details */
		if (!(o->flags & COLL_OPEN_GATED) && o->name_str) {
			struct ring_range_ext r = {
				.h = {RING_REC_RANGE_EXT, sizeof(r), o->flags & 0xffu},
				.start_ns = o->start_ns,
				.end_ns = now,
				.name_str = o->name_str,
				.domain_str = o->domain_str,
				.category = o->category,
				.shapes_str = o->shapes_str,
				.seq = o->seq,
				.samples = o->samples,
			};
			coll_emit(t, &r);
		}
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

/* A mark (range 0) or a range's start (range 1: returned, its id; 0 when it
 * is not recorded, and its end, given id 0, writes nothing either). */
static uint64_t point(struct coll_str *domain, const struct coll_name *n, uint32_t category,
		      int range)
{
	struct coll_thread *t = enter();
	if (!t)
		return 0;
	uint64_t now = coll_clock_now();
	if (gated(domain, category, now)) {
		leave();
		return 0;
	}
	uint64_t id =
		range ? atomic_fetch_add_explicit(&coll.shm->next_range_id, 1, memory_order_relaxed) : 0;
	uint32_t flags = range ? TRACE_EVF_START_END : TRACE_EVF_MARK, dom = 0;
	uint32_t name = point_names(t, domain, n, &flags, &dom);
	if (name && range) {
		struct ring_range_start r = {{RING_REC_RANGE_START, sizeof(r), flags}, id, now,
					     name, dom, category, 0};
		coll_emit(t, &r);
	} else if (name) {
		struct ring_mark m = {{RING_REC_MARK, sizeof(m), flags}, now, name, dom, category, 0};
		coll_emit(t, &m);
	}
	leave();
	return id;
}

void coll_mark(struct coll_str *domain, const struct coll_name *n, uint32_t category)
{
	point(domain, n, category, 0);
}

uint64_t coll_range_start(struct coll_str *domain, const struct coll_name *n, uint32_t category)
{
	return point(domain, n, category, 1);
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
		.ts_ns = coll_clock_now(),
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

/* ---- the interface's other operations -------------------------------------- */

void coll_api_pop(void)
{
	struct coll_str *gpdl = coll_gpdl_domain();
	if (gpdl)
		coll_pop(gpdl);
}

/* The gprof-dl domain's string id for a record of category on t, or 0 when
 * the event is not to be written (window closed, no slot, name lost). */
/* enter() for a range or a mark of the binding's API (the gprof-dl
 * domain): the thread (NULL: none), with *now, and *dom the domain's id in
 * its strings, 0 when nothing is written (outside the window; or a drop,
 * counted; or its STRING record did not fit, counted). */
static struct coll_thread *api_enter(uint32_t category, uint32_t name, uint64_t *now,
				     uint32_t *dom)
{
	struct coll_str *gpdl = coll_gpdl_domain();
	struct coll_thread *t = gpdl ? enter() : NULL;
	if (!t)
		return NULL;
	*now = coll_clock_now();
	*dom = 0;
	if (gated(gpdl, category, *now))
		return t;
	if (!t->slot || !name)
		coll_drop(t);
	else
		*dom = coll_str_id(t, gpdl);
	return t;
}

void coll_api_range(uint32_t category, uint32_t name, uint64_t start_ns, uint64_t end_ns,
		    uint64_t samples)
{
	uint64_t now;
	uint32_t dom;
	struct coll_thread *t = api_enter(category, name, &now, &dom);
	if (!t)
		return;
	if (dom && category == GPROF_DL_CAT_PROFILE_STEP) {
		/* recorded at its end or soon after: the step() that began the
		 * next one sampled that boundary, else now may serve */
		coll_sched_sample_for(now, start_ns, end_ns);
		step_emit(t, start_ns, end_ns, name, dom, category, 0, samples);
	} else if (dom && samples) {
		struct ring_range_ext r = {
			.h = {RING_REC_RANGE_EXT, sizeof(r), 0},
			.start_ns = start_ns,
			.end_ns = end_ns,
			.name_str = name,
			.domain_str = dom,
			.category = category,
			.seq = -1,
			.samples = samples,
		};
		coll_emit(t, &r);
	} else if (dom) {
		struct ring_range r = {
			.h = {RING_REC_RANGE, sizeof(r), 0},
			.start_ns = start_ns,
			.end_ns = end_ns,
			.name_str = name,
			.domain_str = dom,
			.category = category,
		};
		coll_emit(t, &r);
	}
	leave();
}

void coll_api_mark(uint32_t category, uint32_t name)
{
	uint64_t now;
	uint32_t dom;
	struct coll_thread *t = api_enter(category, name, &now, &dom);
	if (!t)
		return;
	if (dom) {
		struct ring_mark m = {
			.h = {RING_REC_MARK, sizeof(m), TRACE_EVF_MARK},
			.ts_ns = now,
			.name_str = name,
			.domain_str = dom,
			.category = category,
		};
		coll_emit(t, &m);
	}
	leave();
}

/* A collective's call, complete: recorded, like an operator, only while
 * detail is on. The strings are the binding's ids, defined already. */
void coll_api_comm(const struct gprof_dl_comm *c)
{
	struct coll_thread *t = c ? enter() : NULL;
	if (!t)
		return;
	if (!coll_detail_at(coll_window_state(), coll_clock_now())) {
		leave();
		return;
	}
	if (!t->slot || !c->name) {
		coll_drop(t);
		leave();
		return;
	}
	struct ring_comm r = {
		.h = {RING_REC_COMM, sizeof(r), 0},
		.start_ns = c->start_ns,
		.end_ns = c->end_ns,
		.name_str = c->name,
		.pg_str = c->pg,
		.dtype_str = c->dtype,
		.group_size = c->group_size,
		.seq = c->seq < 0 ? -1 : c->seq,
		.bytes = c->bytes,
		.peer = c->peer < 0 ? -1 : c->peer,
	};
	coll_emit(t, &r);
	leave();
}

void coll_write_rank(struct coll_thread *t, unsigned source, int32_t rank, int32_t local_rank,
		     int32_t world_size, uint32_t backend)
{
	struct ring_process_rank r = {
		.h = {RING_REC_PROCESS_RANK, sizeof(r), source},
		.pid = coll.pid,
		.rank = rank < 0 ? -1 : rank,
		.local_rank = local_rank < 0 ? -1 : local_rank,
		.world_size = world_size < 0 ? -1 : world_size,
		.backend_str = backend,
	};
	coll_emit(t, &r);
}

/* init_process_group's rank: a process record, whatever the window. */
void coll_api_rank(int32_t rank, int32_t local_rank, int32_t world_size, uint32_t backend)
{
	struct coll_thread *t = enter();
	if (!t)
		return;
	coll_write_rank(t, RING_RANK_INIT, rank, local_rank, world_size, backend);
	leave();
}

uint32_t coll_api_string(const char *s, size_t len)
{
	struct coll_thread *t = enter();
	if (!t)
		return 0;
	uint32_t id = 0;
	if (!s)
		s = "", len = 0;
	if (t->slot)
		id = coll_intern(t, s, coll_cut_len(s, len));
	leave();
	return id;
}
