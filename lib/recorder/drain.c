/*
 * drain.c - reading the rings: each slot's records become the trace's
 * strings, descs, threads and events. A ring string id becomes a file string
 * (strmap), a (name, domain, category) a desc; a record that names a string
 * whose STRING record has not come (another thread's ring holds it) waits,
 * deferred, for a few polls before the name is given up on; a RangeStart
 * waits for its RangeEnd, which any thread may drain first. A slot whose
 * thread ended is finished: its open ranges are recovered from the slot's
 * push-stack mirror.
 *
 * This is the hot path: every record the program writes passes through
 * drain_slot() and handle_record(), so the tables here are arrays indexed
 * by ring id where they can be, and a name's first desc is kept beside it.
 */
#include "lib/recorder/recorder_int.h"

#include "common/clock.h"
#include "common/error.h"
#include "lib/collector/gprof-dl-nvtx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define DEFER_POLLS 3 /* polls a record waits for a string before it is named "<unknown>" */

/* ---- strings and descs ------------------------------------------------- */

#define STRMAP_IDS (((size_t)1 << 30) + 1) /* ring ids string_define() takes: 1 .. 2^30 */

/* A table of n entries of size bytes, zero, in address space reserved and
 * not committed: pages come, zero, as ids reach them, with no copy and no
 * memset. Small pages: a huge page's first touch clears 2 MiB at once, a
 * stall of milliseconds on a VM in which a program of a new name an event
 * fills its ring (bench-nvtx distinct, 1 thread, 10 interleaved rounds:
 * 13.9 % dropped with MADV_HUGEPAGE, 0.00 % without); 4 KiB ones cost a
 * fault per 1,024 names, spread out, and the launcher's CPU per distinct
 * event is the same (bench-recorder: 116-120 ns against 114-153). */
static void *strmap_reserve(size_t n, size_t size)
{
	void *p = mmap(NULL, n * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Grows the arrays indexed by ring string id to hold ring_id: all of the
 * ids at once where the address space can be reserved (strmap_mapped),
 * else by doubling. */
static void strmap_grow(struct recorder *r, uint32_t ring_id)
{
	if (!r->strmap_cap) {
		r->strmap = strmap_reserve(STRMAP_IDS, sizeof(*r->strmap));
		r->domfile = r->strmap ? strmap_reserve(STRMAP_IDS, sizeof(*r->domfile)) : NULL;
		r->rdescs = r->domfile ? strmap_reserve(STRMAP_IDS, sizeof(*r->rdescs)) : NULL;
		r->strcomm = r->rdescs ? strmap_reserve(STRMAP_IDS, 1) : NULL;
		r->strmap_mapped = 1;
		if (r->strcomm) {
			r->strmap_cap = STRMAP_IDS;
			return;
		}
		rec_strmap_free(r); /* what was reserved goes back: the tables grow instead */
	}
	size_t old = r->strmap_cap, cap = old ? old : 1024;
	while (cap <= ring_id)
		cap *= 2;
	r->strmap = xrealloc(r->strmap, cap * sizeof(*r->strmap));
	memset(r->strmap + old, 0, (cap - old) * sizeof(*r->strmap));
	r->domfile = xrealloc(r->domfile, cap * sizeof(*r->domfile));
	memset(r->domfile + old, 0, (cap - old) * sizeof(*r->domfile));
	r->rdescs = xrealloc(r->rdescs, cap * sizeof(*r->rdescs));
	memset(r->rdescs + old, 0, (cap - old) * sizeof(*r->rdescs));
	r->strcomm = xrealloc(r->strcomm, cap);
	memset(r->strcomm + old, 0, cap - old);
	r->strmap_cap = cap;
}

void rec_strmap_free(struct recorder *r)
{
	if (r->strmap_mapped) { /* some may not have been reserved */
		if (r->strmap)
			munmap(r->strmap, STRMAP_IDS * sizeof(*r->strmap));
		if (r->domfile)
			munmap(r->domfile, STRMAP_IDS * sizeof(*r->domfile));
		if (r->rdescs)
			munmap(r->rdescs, STRMAP_IDS * sizeof(*r->rdescs));
		if (r->strcomm)
			munmap(r->strcomm, STRMAP_IDS);
	} else {
		free(r->strmap);
		free(r->domfile);
		free(r->rdescs);
		free(r->strcomm);
	}
	r->strmap = NULL;
	r->domfile = NULL;
	r->rdescs = NULL;
	r->strcomm = NULL;
	r->strmap_mapped = 0;
	r->strmap_cap = 0;
}

/* A name from a ring becomes a string of the file, appended: ring ids are
 * not shared between threads' caches (nor processes' images), so a text may
 * come under several ids, and the readers take names by text. Nothing here
 * looks at the text but a few bytes: this runs for every new name the
 * target makes, as fast as it makes them. */
static void string_define(struct recorder *r, uint32_t ring_id, const char *s, size_t len)
{
	if (ring_id == 0 || ring_id > (1u << 30))
		return;
	if (ring_id >= r->strmap_cap)
		strmap_grow(r, ring_id);
	uint32_t id = trace_writer_string_append(r->w, s, len);
	if (!id) {
		/* the file is lost from here on: the name counts as known, so
		 * that records naming it are written (and fail, counted) rather
		 * than wait for it and be counted as names lost */
		write_failed(r);
		id = UINT32_MAX;
	}
	r->strmap[ring_id] = id;
	/* a backend's collective is "gloo:OP", "nccl:OP", "mpi:OP", "ucc:OP":
	 * a ':' third or fourth, else it cannot be one */
	int maybe_call = (len > 3 && s[3] == ':') || (len > 4 && s[4] == ':');
	r->strcomm[ring_id] = maybe_call && trace_name_comm_call(s, len) ? STR_COMM_CALL : 0;
}

/* A ring string used as a domain: one file id per text, whichever thread
 * or process named it, so that a domain's categories and the gprof-dl
 * domain are found by id. Interned by content, once per ring id. */
static uint32_t domain_file_id(struct recorder *r, uint32_t ring_id)
{
	if (ring_id == 0 || ring_id >= r->strmap_cap || !r->strmap[ring_id])
		return 0;
	if (r->domfile[ring_id])
		return r->domfile[ring_id];
	uint32_t id = r->strmap[ring_id];
	if (id != UINT32_MAX) {
		size_t len;
		const char *text = trace_writer_string_text(r->w, id, &len);
		char *copy = xmemdup0(text, len); /* the writer's arena may move as it interns */
		id = trace_writer_string(r->w, copy, len);
		if (!id) {
			write_failed(r);
			id = UINT32_MAX;
		} else if (len == strlen(GPROF_DL_NVTX_DOMAIN) && memcmp(copy, GPROF_DL_NVTX_DOMAIN, len) == 0) {
			r->gprofdl_domain = id;
		}
		free(copy);
	}
	r->domfile[ring_id] = id;
	return id;
}

/* A string id whose STRING record never came (it did not fit in a full ring):
 * name it by its id rather than lose the event. */
static void string_give_up(struct recorder *r, uint32_t ring_id)
{
	if (string_known(r, ring_id))
		return;
	char name[48];
	int n = snprintf(name, sizeof(name), "<unknown name %u>", ring_id);
	string_define(r, ring_id, name, (size_t)n);
	if (ring_id < r->strmap_cap)
		r->strcomm[ring_id] |= STR_GIVEN_UP;
	r->unknown_strings++;
}

/* The gprof-dl domain's categories are event types; an operator named as
 * a backend's collective ("gloo:all_reduce", the name torch's c10d gives
 * its work) is a Communication event. */
static uint8_t event_type_of(const struct recorder *r, uint32_t domain_file, uint32_t category,
			     uint32_t name_ring)
{
	if (!domain_file || domain_file != r->gprofdl_domain)
		return TRACE_EV_USER_DEFINED;
	if (category == GPROF_DL_CAT_OPERATOR && name_ring < r->strmap_cap &&
	    (r->strcomm[name_ring] & STR_COMM_CALL))
		return TRACE_EV_COMMUNICATION;
	if ((category >= GPROF_DL_CAT_PROFILE_STEP && category <= GPROF_DL_CAT_PYTHON_OP) ||
	    category == GPROF_DL_CAT_COMMUNICATION)
		return (uint8_t)category;
	return TRACE_EV_USER_DEFINED;
}

/* The desc of a ring name in a domain and category: nearly always the
 * name's first, kept beside it; a name that a new ring id has just defined
 * cannot have one yet, so it is appended with no lookup. */
static uint32_t desc_of(struct recorder *r, uint32_t name, uint32_t domain, uint32_t category)
{
	struct ring_desc *d = name < r->strmap_cap ? &r->rdescs[name] : NULL;
	if (d && d->desc && d->domain == domain && d->category == category)
		return d->desc;
	uint64_t k1 = (uint64_t)name | (uint64_t)domain << 32;
	uint64_t *v = d && d->desc ? hmap_get(&r->descs, k1, category) : NULL;
	if (v)
		return (uint32_t)*v;
	uint32_t dom = domain_file_id(r, domain);
	uint8_t type = event_type_of(r, dom, category, name);
	uint32_t nm = string_file_id(r, name);
	uint32_t id;
	if (d && !d->desc) {
		id = trace_writer_desc_append(r->w, nm, dom, category, type);
		*d = (struct ring_desc){id, domain, category};
	} else {
		id = trace_writer_desc(r->w, nm, dom, category, type);
		hmap_put(&r->descs, k1, category, id);
	}
	return id;
}

/* ---- threads and events ------------------------------------------------- */

/* A new track (pid, tid), not yet written. Invalidates pointers into threads. */
uint32_t rec_thread_add(struct recorder *r, uint32_t pid, uint32_t tid)
{
	if (r->nthreads == r->threads_cap) {
		r->threads_cap = r->threads_cap ? r->threads_cap * 2 : 64;
		r->threads = xrealloc(r->threads, r->threads_cap * sizeof(*r->threads));
	}
	struct rec_thread *t = &r->threads[r->nthreads];
	memset(t, 0, sizeof(*t));
	t->t.index = r->nthreads;
	t->t.pid = pid;
	t->t.tid = tid;
	t->prev = NO_THREAD;
	t->lo = UINT64_MAX;
	return r->nthreads++;
}

/* The slot's thread; or, when GPU records named (pid, tid) before its slot
 * was drained, the track made for them, so that a thread's calls and its
 * ranges share one track. */
static struct rec_thread *thread_of_slot(struct recorder *r, uint32_t slot_idx)
{
	struct slot_state *st = &r->slots[slot_idx];
	if (st->thread >= 0)
		return &r->threads[st->thread];
	struct ring_slot *slot = ring_shm_slot(r->shm, slot_idx);
	uint64_t *v = hmap_get(&r->tids, slot->pid, slot->tid);
	uint32_t i;
	if (v && !r->threads[*v].bound) {
		i = (uint32_t)*v;
	} else {
		uint32_t prev = v ? (uint32_t)*v : NO_THREAD; /* a tid the system reused */
		i = rec_thread_add(r, slot->pid, slot->tid);
		r->threads[i].t.start_ns = clock_now_ns();
		r->threads[i].prev = prev;
		hmap_put(&r->tids, slot->pid, slot->tid, i);
		/* now, not at its THREAD_START: a track GPU records make before
		 * that must not be written with an index the file skipped */
		thread_write(r, &r->threads[i]);
	}
	r->threads[i].bound = 1;
	st->thread = (int32_t)i;
	st->generation = slot->generation;
	st->dropped_seen = 0;
	return &r->threads[i];
}

static void event_write(struct recorder *r, uint64_t start, uint64_t end, uint32_t desc, uint32_t thread,
			uint8_t flags)
{
	event_write_ext(r, start, end, desc, thread, flags, NULL);
}

/* A range's details as the trace has them: torch's sequence number (< 0:
 * none), its input shapes (a ring string id, known), a step's samples. */
static const struct trace_event_ext *range_ext(const struct recorder *r, int64_t seq, uint32_t shapes,
					       uint64_t samples, struct trace_event_ext *x)
{
	if (seq < 0 && !shapes && !samples)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->has_seq = seq >= 0;
	x->seq_nr = seq >= 0 ? seq : 0;
	x->shapes_str = string_file_id(r, shapes);
	x->samples = samples;
	return x;
}

/* ---- record handling ---------------------------------------------------- */

static int names_known(const struct recorder *r, uint32_t a, uint32_t b, uint32_t c)
{
	return string_known(r, a) && string_known(r, b) && string_known(r, c);
}

static void range_end_matched(struct recorder *r, const struct pending_start *s, uint64_t end_ts, uint8_t extra)
{
	uint32_t desc = desc_of(r, s->name, s->domain, s->category);
	event_write(r, s->ts, end_ts, desc, s->thread, (uint8_t)(s->flags | TRACE_EVF_START_END | extra));
}

/* A collective's call (the bindings' comm()): a Communication event on the
 * thread that made it, its bytes and its call's identity in the details. */
static void comm_event(struct recorder *r, const struct rec_thread *t, const struct ring_comm *x)
{
	struct trace_event_ext ext;
	memset(&ext, 0, sizeof(ext));
	ext.bytes = x->bytes;
	ext.has_coll_seq = x->seq >= 0;
	ext.coll_seq = x->seq >= 0 ? (uint64_t)x->seq : 0;
	ext.pg_str = string_file_id(r, x->pg_str);
	ext.group_size = x->group_size;
	ext.dtype_str = string_file_id(r, x->dtype_str);
	ext.has_peer = x->peer >= 0;
	ext.peer = x->peer >= 0 ? x->peer : 0;
	uint32_t desc = rec_desc_typed(r, string_file_id(r, x->name_str), TRACE_EV_COMMUNICATION);
	event_write_ext(r, x->start_ns, x->end_ns, desc, t->t.index, 0, &ext);
}

/* An allocator's allocation or free (the bindings' memory()): a Memory
 * instant on the thread that made it, inside its operator, with the
 * allocator's own level; named "[memory]" as the GPU's (Kineto's name). */
static void memory_event(struct recorder *r, const struct rec_thread *t, const struct ring_memory *x)
{
	struct trace_event_ext ext;
	memset(&ext, 0, sizeof(ext));
	ext.bytes = (uint64_t)x->bytes;
	ext.address = x->address;
	ext.device = x->device < 0 ? -1 : x->device;
	ext.dst_kind = x->memory_kind;
	ext.total_allocated = x->total_allocated;
	if (!r->mem_desc)
		r->mem_desc = rec_desc_typed(r, trace_writer_string(r->w, "[memory]", 8), TRACE_EV_MEMORY);
	event_write_ext(r, x->ts_ns, x->ts_ns, r->mem_desc, t->t.index, TRACE_EVF_MARK, &ext);
}

#define DEFER_DONE UINT32_MAX /* a deferred record handled meanwhile */

/* Whether the PROCESS_START of pid waits among the deferred records: its
 * records that follow it (its rank, its output variables) are its image's,
 * not those of the image before an exec, and wait too. */
static int start_deferred(const struct recorder *r, uint32_t pid)
{
	for (size_t i = 0; i < r->ndeferred; i++) {
		const struct deferred *d = &r->deferred[i];
		const struct ring_rec *h = d->big ? (const void *)d->big : (const void *)d->rec;
		if (d->polls != DEFER_DONE && d->pid == pid && h->kind == RING_REC_PROCESS_START)
			return 1;
	}
	return 0;
}

/* A mark, or a pop that matched no push (a mark of its own name). */
static int mark_record(struct recorder *r, struct rec_thread *t, const struct ring_rec *h)
{
	const struct ring_mark *x = (const void *)h;
	if (!names_known(r, x->name_str, x->domain_str, 0))
		return 1;
	uint32_t name = x->name_str;
	uint8_t flags = (uint8_t)(h->aux | TRACE_EVF_MARK);
	uint32_t desc;
	if (h->kind == RING_REC_POP_UNBALANCED) {
		flags |= TRACE_EVF_UNBALANCED_POP;
		uint32_t s = trace_writer_string(r->w, "<pop without push>", 18);
		desc = trace_writer_desc(r->w, s, domain_file_id(r, x->domain_str), 0,
					 TRACE_EV_USER_DEFINED);
	} else {
		desc = desc_of(r, name, x->domain_str, x->category);
	}
	event_write(r, x->ts_ns, x->ts_ns, desc, t->t.index, flags);
	return 0;
}

/* A start/end range's start: written when its end is known, else kept. */
static int range_start_record(struct recorder *r, struct rec_thread *t, const struct ring_rec *h)
{
	const struct ring_range_start *x = (const void *)h;
	if (!names_known(r, x->name_str, x->domain_str, 0))
		return 1;
	struct pending_start s = {x->ts_ns, x->name_str, x->domain_str, x->category, h->aux, t->t.index};
	uint64_t *end = hmap_get(&r->ends, x->id, 0);
	if (end) { /* its End was drained first, from another thread's ring */
		range_end_matched(r, &s, *end, 0);
		hmap_del(&r->ends, x->id, 0);
		hmap_del(&r->end_threads, x->id, 0);
		return 0;
	}
	struct pending_start *p = xmalloc(sizeof(*p));
	*p = s;
	hmap_put(&r->starts, x->id, 0, (uint64_t)(uintptr_t)p);
	return 0;
}

/* A start/end range's end: the range written when its start is known, else kept. */
static int range_end_record(struct recorder *r, struct rec_thread *t, const struct ring_rec *h)
{
	const struct ring_range_end *x = (const void *)h;
	uint64_t *v = hmap_get(&r->starts, x->id, 0);
	if (v) {
		struct pending_start *p = (struct pending_start *)(uintptr_t)*v;
		range_end_matched(r, p, x->ts_ns, 0);
		free(p);
		hmap_del(&r->starts, x->id, 0);
	} else {
		hmap_put(&r->ends, x->id, 0, x->ts_ns);
		hmap_put(&r->end_threads, x->id, 0, t->t.index);
	}
	return 0;
}

/* nvtxNameOsThread may name any thread of this process. */
static int thread_name_record(struct recorder *r, struct rec_thread *t, const struct ring_rec *h)
{
	const struct ring_thread_name *x = (const void *)h;
	if (!string_known(r, x->name_str))
		return 1;
	for (uint32_t i = r->nthreads; i-- > 0;) {
		struct rec_thread *o = &r->threads[i];
		if (o->t.tid == x->tid && o->t.pid == t->t.pid) {
			o->t.name_str = string_file_id(r, x->name_str);
			thread_write(r, o);
			break;
		}
	}
	return 0;
}

/* The rank identity a process reported. */
static int process_rank_record(struct recorder *r, const struct ring_rec *h)
{
	const struct ring_process_rank *x = (const void *)h;
	if (h->size < sizeof(*x))
		return 0;
	if (!string_known(r, x->backend_str) || !string_known(r, x->job_str))
		return 1;
	struct rec_process *p = rec_process_find(r, x->pid, 0);
	if (!p || start_deferred(r, x->pid))
		return 1; /* its PROCESS_START waits for its command line */
	rec_process_identity(r, p, x);
	return 0;
}

/* A variable of the -o pattern, as a process reported it. */
static int process_var_record(struct recorder *r, const struct ring_rec *h)
{
	const struct ring_process_var *x = (const void *)h;
	struct rec_process *p = rec_process_find(r, x->pid, 0);
	unsigned i = h->aux & 0xffffu;
	if (h->size < sizeof(*x) || x->len > h->size - sizeof(*x) - 1 || i >= RING_VARS_MAX)
		return 0;
	if (!p || start_deferred(r, x->pid))
		return 1;
	if (h->aux & RING_VAR_FORKED) {
		if (p->vars_own)
			return 0; /* the image's own values, drained first, stand */
	} else {
		p->vars_own = 1;
	}
	free(p->vars[i]);
	p->vars[i] = NULL;
	if (h->aux & RING_VAR_SET) {
		p->vars[i] = xmalloc(x->len + 1);
		memcpy(p->vars[i], x + 1, x->len);
		p->vars[i][x->len] = '\0';
	}
	return 0;
}

/* A training step, written at its end (after its contents), with its
 * samples and its thread's CPU and run-queue time. */
static int step_record(struct recorder *r, struct rec_thread *t, const struct ring_rec *h)
{
	const struct ring_step *x = (const void *)h;
	struct trace_event_ext ext;
	if (h->size < sizeof(*x))
		return 0;
	if (!names_known(r, x->name_str, x->domain_str, 0))
		return 1;
	memset(&ext, 0, sizeof(ext));
	ext.samples = x->samples;
	ext.sched_cpu_ns = x->cpu_ns;
	ext.sched_runq_ns = x->cpu_ns ? x->runq_ns : 0;
	event_write_ext(r, x->start_ns, x->end_ns, desc_of(r, x->name_str, x->domain_str, x->category),
			t->t.index, (uint8_t)h->aux,
			ext.samples || ext.sched_cpu_ns ? &ext : NULL);
	return 0;
}

/* Returns 0 when handled, 1 when it names a string not seen yet (defer it). */
static int handle_record(struct recorder *r, uint32_t slot_idx, const struct ring_rec *h)
{
	struct rec_thread *t = thread_of_slot(r, slot_idx);
	switch (h->kind) {
	case RING_REC_STRING: {
		size_t max = h->size - sizeof(*h);
		const char *s = (const char *)(h + 1);
		string_define(r, h->aux, s, strnlen(s, max));
		return 0;
	}
	case RING_REC_RANGE: {
		const struct ring_range *x = (const void *)h;
		if (!names_known(r, x->name_str, x->domain_str, 0))
			return 1;
		event_write(r, x->start_ns, x->end_ns, desc_of(r, x->name_str, x->domain_str, x->category),
			    t->t.index, (uint8_t)h->aux);
		return 0;
	}
	case RING_REC_RANGE_EXT: {
		/* an operator with its sequence number and shapes, or a step with
		 * its samples; a step written at its end follows its contents */
		const struct ring_range_ext *x = (const void *)h;
		struct trace_event_ext ext;
		if (h->size < sizeof(*x))
			return 0;
		if (!names_known(r, x->name_str, x->domain_str, x->shapes_str))
			return 1;
		event_write_ext(r, x->start_ns, x->end_ns, desc_of(r, x->name_str, x->domain_str, x->category),
				t->t.index, (uint8_t)h->aux,
				range_ext(r, x->seq, x->shapes_str, x->samples, &ext));
		return 0;
	}
	case RING_REC_STEP:
		return step_record(r, t, h);
	case RING_REC_MARK:
	case RING_REC_POP_UNBALANCED:
		return mark_record(r, t, h);
	case RING_REC_RANGE_START:
		return range_start_record(r, t, h);
	case RING_REC_RANGE_END:
		return range_end_record(r, t, h);
	case RING_REC_CATEGORY: {
		const struct ring_category *x = (const void *)h;
		if (!names_known(r, x->domain_str, x->name_str, 0))
			return 1;
		struct trace_category c = {domain_file_id(r, x->domain_str), x->category, string_file_id(r, x->name_str)};
		if (trace_writer_category(r->w, &c) != 0)
			write_failed(r);
		r->cats = xrealloc(r->cats, (r->ncats + 1) * sizeof(*r->cats));
		r->cats[r->ncats++] = c;
		return 0;
	}
	case RING_REC_THREAD_START: {
		const struct ring_thread *x = (const void *)h;
		t->t.start_ns = x->ts_ns;
		t->t.pid = x->pid;
		t->t.tid = x->tid;
		thread_write(r, t);
		return 0;
	}
	case RING_REC_THREAD_END: {
		const struct ring_thread *x = (const void *)h;
		t->t.end_ns = x->ts_ns;
		thread_write(r, t);
		return 0;
	}
	case RING_REC_THREAD_NAME:
		return thread_name_record(r, t, h);
	case RING_REC_PROCESS_START: {
		const struct ring_process *x = (const void *)h;
		if (!string_known(r, x->cmdline_str))
			return 1;
		rec_process_started(r, x);
		return 0;
	}
	case RING_REC_COMM: {
		const struct ring_comm *x = (const void *)h;
		if (h->size < sizeof(*x))
			return 0;
		if (!names_known(r, x->name_str, x->pg_str, x->dtype_str))
			return 1;
		comm_event(r, t, x);
		return 0;
	}
	case RING_REC_MEMORY:
		if (h->size >= sizeof(struct ring_memory))
			memory_event(r, t, (const void *)h);
		return 0;
	case RING_REC_PROCESS_EXIT: {
		/* also drained once the process is known dead (rec_process_ended()) */
		const struct ring_process *x = (const void *)h;
		struct rec_process *p = rec_process_find(r, x->pid, 0);
		if (p && (p->alive || !p->p.end_ns || x->ts_ns < p->p.end_ns))
			p->p.end_ns = x->ts_ns;
		if (p) {
			p->exit_reported = 1;
			p->exit_code = h->aux & RING_EXIT_KNOWN ? (int32_t)(h->aux & 0xffu) : -1;
		}
		return 0;
	}
	case RING_REC_PROCESS_RANK:
		return process_rank_record(r, h);
	case RING_REC_PROCESS_VAR:
		return process_var_record(r, h);
	default:
		return 0; /* PAD, and kinds a newer collector may add */
	}
}

/* Any record of the slot; pid: the slot's when it was drained. */
static int dispatch_record(struct recorder *r, uint32_t slot_idx, uint32_t pid, const struct ring_rec *h)
{
	if (is_gpu_record(h->kind))
		return rec_gpu_record(r, pid, h);
	return handle_record(r, slot_idx, h);
}

static void defer_record(struct recorder *r, uint32_t slot_idx, uint32_t pid, const struct ring_rec *h)
{
	if (r->ndeferred == r->deferred_cap) {
		r->deferred_cap = r->deferred_cap ? r->deferred_cap * 2 : 64;
		r->deferred = xrealloc(r->deferred, r->deferred_cap * sizeof(*r->deferred));
	}
	struct deferred *d = &r->deferred[r->ndeferred++];
	d->slot = slot_idx;
	d->pid = pid;
	d->polls = 0;
	d->big = NULL;
	if (h->size <= sizeof(d->rec)) {
		memcpy(d->rec, h, h->size);
	} else {
		d->big = xmalloc(h->size);
		memcpy(d->big, h, h->size);
	}
}

static const uint32_t *record_string_ids(const struct ring_rec *h, unsigned *n)
{
	static uint32_t ids[3];
	*n = 0;
	switch (h->kind) {
	case RING_REC_RANGE: {
		const struct ring_range *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->domain_str, *n = 2;
		break;
	}
	case RING_REC_RANGE_EXT: {
		const struct ring_range_ext *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->domain_str, ids[2] = x->shapes_str, *n = 3;
		break;
	}
	case RING_REC_STEP: {
		const struct ring_step *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->domain_str, *n = 2;
		break;
	}
	case RING_REC_MARK:
	case RING_REC_POP_UNBALANCED: {
		const struct ring_mark *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->domain_str, *n = 2;
		break;
	}
	case RING_REC_RANGE_START: {
		const struct ring_range_start *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->domain_str, *n = 2;
		break;
	}
	case RING_REC_CATEGORY: {
		const struct ring_category *x = (const void *)h;
		ids[0] = x->domain_str, ids[1] = x->name_str, *n = 2;
		break;
	}
	case RING_REC_THREAD_NAME:
		ids[0] = ((const struct ring_thread_name *)(const void *)h)->name_str, *n = 1;
		break;
	case RING_REC_PROCESS_START:
		ids[0] = ((const struct ring_process *)(const void *)h)->cmdline_str, *n = 1;
		break;
	case RING_REC_GPU_API:
		ids[0] = ((const struct ring_gpu_api *)(const void *)h)->name_str, *n = 1;
		break;
	case RING_REC_GPU_WORK:
		ids[0] = ((const struct ring_gpu_work *)(const void *)h)->name_str, *n = 1;
		break;
	case RING_REC_GPU_OVERHEAD:
		ids[0] = ((const struct ring_gpu_overhead *)(const void *)h)->name_str, *n = 1;
		break;
	case RING_REC_GPU_DEVICE:
		ids[0] = ((const struct ring_gpu_device *)(const void *)h)->d.name_str, *n = 1;
		break;
	case RING_REC_GPU_STATUS:
		ids[0] = ((const struct ring_gpu_status *)(const void *)h)->msg_str, *n = 1;
		break;
	case RING_REC_COMM: {
		const struct ring_comm *x = (const void *)h;
		ids[0] = x->name_str, ids[1] = x->pg_str, ids[2] = x->dtype_str, *n = 3;
		break;
	}
	case RING_REC_PROCESS_RANK:
		ids[0] = ((const struct ring_process_rank *)(const void *)h)->backend_str;
		ids[1] = ((const struct ring_process_rank *)(const void *)h)->job_str, *n = 2;
		break;
	}
	return ids;
}

/* Records wait for the STRING record another thread's ring holds; after a few
 * polls, or at the end, the names that never came are given up on. */
static void retry_deferred(struct recorder *r, int final, int count)
{
	size_t keep = 0;
	for (size_t i = 0; i < r->ndeferred; i++) {
		struct deferred *d = &r->deferred[i];
		const struct ring_rec *h = d->big ? (const void *)d->big : (const void *)d->rec;
		if (final || (count && ++d->polls >= DEFER_POLLS)) {
			unsigned n;
			const uint32_t *ids = record_string_ids(h, &n);
			for (unsigned k = 0; k < n; k++)
				string_give_up(r, ids[k]);
		}
		if (dispatch_record(r, d->slot, d->pid, h) == 0) {
			free(d->big);
			d->polls = DEFER_DONE; /* for start_deferred(), until the array is packed */
			continue;
		}
		r->deferred[keep++] = *d;
	}
	r->ndeferred = keep;
}

/* ---- slots ---------------------------------------------------------------- */

/* Drains what the slot holds, at most limit bytes: all that a thread that
 * ended left, and no more than that of one that writes on as fast as it
 * is drained, which must not keep the launcher from the other slots and
 * from seeing processes end. A ring that backed up (the program writes
 * faster than its records are converted), or one whose slot has records
 * spilled already, joins the spill instead: copied out, converted later. */
static uint64_t drain_slot_upto(struct recorder *r, uint32_t slot_idx, uint64_t limit)
{
	struct ring_slot *slot = ring_shm_slot(r->shm, slot_idx);
	struct slot_state *st = &r->slots[slot_idx];
	uint64_t total = 0, chunk = limit < r->opts.ring_bytes ? limit : r->opts.ring_bytes;
	size_t n;

	if (st->thread >= 0 && st->generation != slot->generation)
		st->thread = -1; /* reused by a new thread: cannot happen before we free it */
	rec_spill_lock(r);
	if (st->spill_head || ring_pending(slot) >= SPILL_BACKLOG(r)) {
		total = rec_spill_append(r, slot_idx);
		if (total || st->spill_head) {
			rec_spill_unlock(r);
			return total;
		}
		/* no room to spill it: converted now, as before there was a spill */
	}
	/* (the spiller may take the ring between two reads: what it took
	 * comes before what is left, so the rest waits for the spill) */
	while (total < limit && !st->spill_head && (n = ring_read(r->shm, slot, r->buf, chunk)) > 0) {
		rec_spill_unlock(r);
		uint32_t pid = slot->pid;
		rec_gpu_prescan(r, pid, r->buf, n);
		for (size_t off = 0; off < n;) {
			const struct ring_rec *h = (const void *)(r->buf + off);
			if (h->size < sizeof(*h) || h->size > n - off)
				BUG("record of %u bytes at %zu of %zu drained", h->size, off, n);
			/* external ids were taken by rec_gpu_prescan() */
			if (h->kind != RING_REC_GPU_EXTCORR && dispatch_record(r, slot_idx, pid, h))
				defer_record(r, slot_idx, pid, h);
			off += h->size;
		}
		total += n;
		rec_spill_lock(r);
	}
	rec_spill_unlock(r);
	return total;
}

/* All a slot holds, two rings' worth at most (a thread that ended, a
 * process that is being ended). */
static uint64_t drain_slot(struct recorder *r, uint32_t slot_idx)
{
	return drain_slot_upto(r, slot_idx, 2 * r->opts.ring_bytes);
}

/* ---- the spill (spill.c keeps it; it is converted here) ------------------- */

#define SPILL_STEP (32u << 10)    /* bytes converted between looks at the rings */
#define SPILL_POLL_NS 2000000ull  /* conversion a poll does at most, before its other work */

/* Records of slot i's spill, oldest first, about budget bytes of them (whole
 * records), converted as drain_slot() would have. Returns the bytes. */
static uint32_t spill_step(struct recorder *r, uint32_t i, uint32_t budget)
{
	/* The chunk's bytes up to len are the spiller's no more (it appends
	 * after them); a chunk scanned is never sent to the file. */
	rec_spill_lock(r);
	struct spill_chunk *c = rec_spill_head(r, i);
	if (!c) {
		rec_spill_unlock(r);
		return 0;
	}
	const unsigned char *data = c->data;
	uint32_t len = c->len, scanned = c->scanned, start = c->done, done = start, pid = c->pid;
	c->scanned = len;
	rec_spill_unlock(r);
	if (scanned < len)
		rec_gpu_prescan(r, pid, data + scanned, len - scanned);
	while (done < len && done - start < budget) {
		const struct ring_rec *h = (const void *)(data + done);
		if (h->size < sizeof(*h) || h->size > len - done)
			BUG("record of %u bytes at %u of %u spilled", h->size, done, len);
		if (h->kind != RING_REC_GPU_EXTCORR && dispatch_record(r, i, pid, h))
			defer_record(r, i, pid, h);
		done += h->size;
	}
	rec_spill_lock(r);
	c->done = done;
	rec_spill_consumed(r, i, done - start);
	rec_spill_unlock(r);
	return done - start;
}

/* The rings that backed up join the spill, all but slot except's. */
static void spill_rings(struct recorder *r, uint32_t except)
{
	rec_spill_lock(r);
	rec_spill_rings(r, except);
	rec_spill_unlock(r);
}

/* Bytes spilled and not yet converted, over every slot. */
static uint64_t spill_pending(struct recorder *r)
{
	rec_spill_lock(r);
	uint64_t n = r->spill.pending;
	rec_spill_unlock(r);
	return n;
}

/* The first slot from i on (round the slots) with records spilled; i
 * itself when none has. */
static uint32_t spill_next_slot(struct recorder *r, uint32_t i)
{
	uint32_t n = r->shm->nslots;
	rec_spill_lock(r);
	for (uint32_t k = 0; k < n && !r->slots[i].spill_head; k++)
		i = (i + 1) % n;
	rec_spill_unlock(r);
	return i;
}

static int spill_has(struct recorder *r, uint32_t i)
{
	rec_spill_lock(r);
	int has = r->slots[i].spill_head != NULL;
	rec_spill_unlock(r);
	return has;
}

/* A poll's conversion: the slots' spills in turn, a step each, the rings
 * that back up meanwhile spilled, for SPILL_POLL_NS at most. Returns the
 * bytes converted. */
static uint64_t spill_work(struct recorder *r)
{
	uint64_t t0 = clock_now_ns(), now = t0, total = 0;
	uint32_t n = r->shm->nslots, i = r->spill.next % n;
	while (spill_pending(r) && now - t0 < SPILL_POLL_NS) {
		i = spill_next_slot(r, i);
		total += spill_step(r, i, SPILL_STEP);
		i = (i + 1) % n;
		spill_rings(r, UINT32_MAX);
		now = clock_now_ns();
	}
	r->spill.next = i;
	r->spill.convert_ns += now - t0;
	return total;
}

/* Everything spilled so far of slot only (UINT32_MAX: of every slot) is
 * converted; what the rings write meanwhile joins the spill after it (but
 * slot only's: the caller finishes that slot). */
static void spill_catch_up(struct recorder *r, uint32_t only)
{
	if (!spill_pending(r))
		return;
	uint64_t t0 = clock_now_ns();
	uint32_t lo = only == UINT32_MAX ? 0 : only, hi = only == UINT32_MAX ? r->shm->nslots : only + 1;
	uint64_t *goal = xcalloc(hi - lo, sizeof(*goal));
	rec_spill_lock(r);
	for (uint32_t i = lo; i < hi; i++)
		goal[i - lo] = r->slots[i].spill_bytes;
	rec_spill_unlock(r);
	for (uint32_t i = lo; i < hi; i++) {
		uint64_t done = 0;
		while (done < goal[i - lo] && spill_has(r, i)) {
			done += spill_step(r, i, SPILL_STEP);
			spill_rings(r, only);
		}
	}
	free(goal);
	r->spill.convert_ns += clock_now_ns() - t0;
}

/* The slot's thread is over (it ended, its process died or exec'd): ranges still
 * on its push stack become open-at-exit events ending at end_ns. */
static void finish_slot(struct recorder *r, uint32_t slot_idx, uint64_t end_ns)
{
	struct ring_slot *slot = ring_shm_slot(r->shm, slot_idx);
	rec_spill_lock(r);
	r->slots[slot_idx].finishing = 1; /* the spiller leaves it */
	rec_spill_unlock(r);
	/* twice: what a full spill left in the ring comes once its spill is
	 * converted (a thread that ended left a ring's worth at most) */
	for (int pass = 0; pass < 2; pass++) {
		drain_slot(r, slot_idx);
		spill_catch_up(r, slot_idx);
	}
	struct rec_thread *t = thread_of_slot(r, slot_idx);
	if (!t->t.end_ns)
		t->t.end_ns = end_ns;
	uint32_t depth = atomic_load_explicit(&slot->depth, memory_order_acquire);
	if (depth > RING_STACK_MAX)
		depth = RING_STACK_MAX;
	for (uint32_t d = 0; d < depth; d++) {
		const struct ring_open_range *o = &slot->stack[d];
		struct trace_event_ext ext;
		if (o->flags & RING_OPEN_SKIP)
			continue; /* pushed while the recording window was closed */
		string_give_up(r, o->name_str);
		string_give_up(r, o->domain_str);
		string_give_up(r, o->shapes_str);
		uint64_t end = t->t.end_ns > o->start_ns ? t->t.end_ns : o->start_ns;
		event_write_ext(r, o->start_ns, end, desc_of(r, o->name_str, o->domain_str, o->category),
				t->t.index, (uint8_t)(o->flags | TRACE_EVF_OPEN_AT_EXIT),
				range_ext(r, o->seq, o->shapes_str, o->samples, &ext));
	}
	rec_spill_lock(r);
	uint64_t dropped = atomic_load_explicit(&slot->dropped, memory_order_relaxed) +
			   r->slots[slot_idx].spill_lost;
	r->slots[slot_idx].spill_lost = 0;
	rec_spill_unlock(r);
	r->waited_ns += atomic_exchange_explicit(&slot->waited_ns, 0, memory_order_relaxed);
	if (dropped) {
		t->dropped += dropped;
		if (trace_writer_drops(r->w, t->t.index, dropped) != 0)
			write_failed(r);
	}
	thread_write(r, t);
	r->slots[slot_idx].thread = -1;
	rec_spill_lock(r);
	ring_slot_free(slot);
	r->slots[slot_idx].finishing = 0;
	rec_spill_unlock(r);
}

/* Every slot of pid is finished (the process ended). */
void rec_finish_process_slots(struct recorder *r, uint32_t pid, uint64_t end_ns)
{
	uint32_t used = atomic_load_explicit(&r->shm->slots_used, memory_order_acquire);
	for (uint32_t i = 0; i < used && i < r->shm->nslots; i++) {
		struct ring_slot *s = ring_shm_slot(r->shm, i);
		if (s->pid != pid || atomic_load_explicit(&s->state, memory_order_acquire) == RING_SLOT_FREE)
			continue;
		finish_slot(r, i, end_ns);
	}
}

/* After an exec, the threads of the old image are the slots of that pid whose
 * thread started before the exec: the new image's start after it. */
static void finish_exec_images(struct recorder *r)
{
	for (size_t k = 0; k < r->nexecs; k++) {
		uint32_t used = atomic_load_explicit(&r->shm->slots_used, memory_order_acquire);
		for (uint32_t i = 0; i < used && i < r->shm->nslots; i++) {
			struct ring_slot *s = ring_shm_slot(r->shm, i);
			if (s->pid != r->execs[k].pid ||
			    atomic_load_explicit(&s->state, memory_order_acquire) == RING_SLOT_FREE)
				continue;
			drain_slot(r, i);
			spill_catch_up(r, i);
			if (thread_of_slot(r, i)->t.start_ns < r->execs[k].ts)
				finish_slot(r, i, r->execs[k].ts);
		}
	}
	r->nexecs = 0;
}

/* Drains what every slot holds before a process counts as ended: its
 * PROCESS_START among it when the launcher had not seen it yet (and the
 * STRING its command line needs, which its parent may have written, in
 * its own slot, before the fork), an exec, its PROCESS_EXIT. So a start
 * drained late confirms the process rather than adds a second one. The
 * records that still wait for a string are tried again (not counted as a
 * poll: only polls give a string up). */
void rec_drain_pending(struct recorder *r)
{
	uint32_t used = atomic_load_explicit(&r->shm->slots_used, memory_order_acquire);
	for (uint32_t k = 0; k < used && k < r->shm->nslots; k++) {
		uint32_t state = atomic_load_explicit(&ring_shm_slot(r->shm, k)->state, memory_order_acquire);
		if (state == RING_SLOT_ACTIVE || state == RING_SLOT_EXITED)
			drain_slot(r, k);
	}
	spill_catch_up(r, UINT32_MAX);
	if (r->ndeferred)
		retry_deferred(r, 0, 0);
}

/* One pass over the slots, as a poll makes it: what each holds, the slots
 * of threads that ended finished, the old images of processes that exec'd
 * ended (only now: finishing drains), and another try for the records that
 * wait for a string (a poll, counted). Returns the bytes drained. */
uint64_t rec_drain(struct recorder *r)
{
	uint64_t total = 0;
	uint32_t used = atomic_load_explicit(&r->shm->slots_used, memory_order_acquire);
	for (uint32_t i = 0; i < used && i < r->shm->nslots; i++) {
		struct ring_slot *s = ring_shm_slot(r->shm, i);
		uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
		if (state == RING_SLOT_FREE || state == RING_SLOT_CLAIMING)
			continue;
		/* a poll converts a backlog's worth of a ring at most, then looks
		 * at the next: converting a whole ring takes longer than the
		 * program takes to fill the others (and this one) again */
		total += drain_slot_upto(r, i, SPILL_BACKLOG(r));
		if (state == RING_SLOT_EXITED)
			finish_slot(r, i, clock_now_ns());
	}
	if (r->nexecs)
		finish_exec_images(r);
	if (spill_pending(r))
		total += spill_work(r);
	/* a name may wait in the spill: none is given up on while it holds any */
	if (r->ndeferred)
		retry_deferred(r, 0, spill_pending(r) == 0);
	return total;
}

/* The end: every slot still in use is finished at end_ns, and the records
 * that still wait for a string are written with the names given up on. */
void rec_drain_final(struct recorder *r, uint64_t end_ns)
{
	for (uint32_t i = 0; i < r->shm->nslots; i++)
		if (atomic_load(&ring_shm_slot(r->shm, i)->state) != RING_SLOT_FREE)
			finish_slot(r, i, end_ns);
	retry_deferred(r, 1, 1);
}

/* ---- the end ---------------------------------------------------------------- */

void rec_finish_pending_ranges(struct recorder *r, uint64_t end_ns)
{
	for (size_t i = 0; i < r->starts.cap; i++) {
		if (!r->starts.e[i].used)
			continue;
		struct pending_start *p = (struct pending_start *)(uintptr_t)r->starts.e[i].value;
		uint64_t end = r->threads[p->thread].t.end_ns ? r->threads[p->thread].t.end_ns : end_ns;
		range_end_matched(r, p, end, TRACE_EVF_OPEN_AT_EXIT);
		free(p);
	}
	hmap_free(&r->starts);
	/* Ends whose start never came: recorded where they happened. */
	for (size_t i = 0; i < r->ends.cap; i++) {
		if (!r->ends.e[i].used)
			continue;
		uint64_t *th = hmap_get(&r->end_threads, r->ends.e[i].k1, 0);
		uint32_t s = trace_writer_string(r->w, "<range end without start>", 25);
		uint32_t desc = trace_writer_desc(r->w, s, 0, 0, TRACE_EV_USER_DEFINED);
		event_write(r, r->ends.e[i].value, r->ends.e[i].value, desc, th ? (uint32_t)*th : 0,
			    TRACE_EVF_MARK | TRACE_EVF_UNBALANCED_POP | TRACE_EVF_START_END);
	}
	hmap_free(&r->ends);
	hmap_free(&r->end_threads);
}
