/*
 * store.c - building the event store: from trace files through the reader's
 * visitor, or event by event for tests and importers.
 */
#include "lib/analysis/store/store.h"
#include "lib/analysis/store/store_sort.h"

#include "formats/trace/trace_open.h"
#include "common/parallel.h"
#include "common/progress.h"
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void store_init(struct store *s)
{
	memset(s, 0, sizeof(*s));
	names_init(&s->names);
	names_intern(&s->names, "", 0); /* id 0: no name */
}

void store_free(struct store *s)
{
	for (uint32_t i = 0; i < s->ntracks; i++) {
		struct store_track *t = &s->tracks[i];
		free(t->start);
		free(t->dur);
		free(t->desc);
		free(t->parent);
		free(t->folded);
		free(t->extra);
		free(t->xid);
		free(t->xonly_ev);
		free(t->xonly_id);
		free(t->details);
		free(t->comm);
		free(t->steps);
	}
	for (uint32_t i = 0; i < s->nfiles; i++) {
		free(s->files[i].path);
		free(s->files[i].hostname);
		free(s->files[i].cmdline);
		free(s->files[i].clock);
		free(s->files[i].damage);
		free(s->files[i].devices);
	}
	free(s->devices);
	free(s->tracks);
	free(s->files);
	free(s->descs);
	free(s->desc_slots);
	free(s->counters);
	free(s->procs);
	names_free(&s->names);
	memset(s, 0, sizeof(*s));
}

uint32_t store_add_file(struct store *s, const char *path)
{
	s->files = xrealloc(s->files, (s->nfiles + 1) * sizeof(*s->files));
	struct store_file *f = &s->files[s->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	f->hostname = xstrdup("");
	f->cmdline = xstrdup("");
	f->clock = xstrdup("unknown");
	f->rank = -1;
	f->start_ns = UINT64_MAX;
	return s->nfiles++;
}

static uint32_t desc_hash(uint32_t name, unsigned type, uint32_t shapes)
{
	uint64_t k = ((uint64_t)name << 8 | type) * 0x9e3779b97f4a7c15ull;
	k ^= (uint64_t)shapes * 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(k >> 32);
}

static void desc_rehash(struct store *s)
{
	uint32_t nslots = s->desc_nslots ? s->desc_nslots * 2 : 256;
	free(s->desc_slots);
	s->desc_slots = xcalloc(nslots, sizeof(*s->desc_slots));
	s->desc_nslots = nslots;
	for (uint32_t id = 0; id < s->ndescs; id++) {
		const struct store_desc *d = &s->descs[id];
		uint32_t i = desc_hash(d->name, d->type, d->shapes) & (nslots - 1);
		while (s->desc_slots[i])
			i = (i + 1) & (nslots - 1);
		s->desc_slots[i] = id + 1;
	}
}

int store_is_step_name(const char *name, size_t len)
{
	return trace_name_is_step(name, len);
}

uint32_t store_desc_intern(struct store *s, const char *name, size_t len, unsigned type)
{
	return store_desc_intern_shapes(s, name, len, type, 0);
}

uint32_t store_desc_intern_shapes(struct store *s, const char *name, size_t len, unsigned type,
				  uint32_t shapes)
{
	if (type >= TRACE_EV_TYPE_COUNT)
		type = TRACE_EV_USER_DEFINED; /* a newer writer's type: keep the event */
	/* Imports type Paddle's and PyTorch's step ranges either way: the name
	 * decides, so that they make the window whichever way they came. */
	if (type == TRACE_EV_USER_DEFINED && store_is_step_name(name, len))
		type = TRACE_EV_PROFILE_STEP;
	uint32_t nid = names_intern(&s->names, name, len);
	if ((uint64_t)(s->ndescs + 1) * 2 > s->desc_nslots)
		desc_rehash(s);
	uint32_t i = desc_hash(nid, type, shapes) & (s->desc_nslots - 1);
	for (; s->desc_slots[i]; i = (i + 1) & (s->desc_nslots - 1)) {
		const struct store_desc *d = &s->descs[s->desc_slots[i] - 1];
		if (d->name == nid && d->type == type && d->shapes == shapes)
			return s->desc_slots[i] - 1;
	}
	if (s->ndescs >= STORE_MAX_DESCS)
		die("too many distinct event names in the traces (more than %u)", STORE_MAX_DESCS);
	if (s->ndescs == s->descs_cap) {
		s->descs_cap = s->descs_cap ? s->descs_cap * 2 : 64;
		s->descs = xrealloc(s->descs, (size_t)s->descs_cap * sizeof(*s->descs));
	}
	s->descs[s->ndescs].name = nid;
	s->descs[s->ndescs].type = (uint8_t)type;
	s->descs[s->ndescs].shapes = shapes;
	s->desc_slots[i] = s->ndescs + 1;
	return s->ndescs++;
}

uint32_t store_add_track(struct store *s, enum store_track_kind kind, uint32_t file,
			 uint32_t thread)
{
	if (s->ntracks == s->tracks_cap) {
		s->tracks_cap = s->tracks_cap ? s->tracks_cap * 2 : 16;
		s->tracks = xrealloc(s->tracks, (size_t)s->tracks_cap * sizeof(*s->tracks));
	}
	struct store_track *t = &s->tracks[s->ntracks];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->file = file;
	t->thread = thread;
	t->dev = STORE_NONE;
	return s->ntracks++;
}

void store_set_stream(struct store *s, uint32_t track, uint32_t device, uint32_t context,
		      uint64_t stream)
{
	struct store_track *t = &s->tracks[track];
	t->kind = STORE_TRACK_DEVICE;
	t->device = device;
	t->context = context;
	t->stream = stream;
}

void store_add_file_device(struct store *s, uint32_t file, const struct trace_device *d,
			   const char *name)
{
	struct store_file *f = &s->files[file];
	for (uint32_t i = 0; i < f->ndevices; i++) {
		if (f->devices[i].id == d->id) { /* described again: the later wins */
			f->devices[i] = *d;
			f->devices[i].name_str = names_intern(&s->names, name, strlen(name));
			return;
		}
	}
	f->devices = xrealloc(f->devices, (f->ndevices + 1) * sizeof(*f->devices));
	f->devices[f->ndevices] = *d;
	f->devices[f->ndevices].name_str = names_intern(&s->names, name, strlen(name));
	f->ndevices++;
}

static void track_grow(struct store_track *t)
{
	if (t->n >= STORE_MAX_TRACK_EVENTS)
		die("more than %u events on one thread", STORE_MAX_TRACK_EVENTS);
	/* Large arrays are mmap'ed by malloc and realloc moves them with mremap:
	 * no copy, and the untouched tail of the capacity is never resident.
	 * Small first: a trace may have 100,000 threads of one event. */
	size_t cap = t->cap ? t->cap * 2 : 8;
	if (cap > STORE_MAX_TRACK_EVENTS)
		cap = STORE_MAX_TRACK_EVENTS;
	t->start = xrealloc(t->start, cap * sizeof(*t->start));
	t->dur = xrealloc(t->dur, cap * sizeof(*t->dur));
	t->desc = xrealloc(t->desc, cap * sizeof(*t->desc));
	t->cap = cap;
}

/* Room for n more events: at least doubled, as track_grow(). */
static void track_reserve(struct store_track *t, size_t n)
{
	if (n > STORE_MAX_TRACK_EVENTS - t->n)
		die("more than %u events on one thread", STORE_MAX_TRACK_EVENTS);
	while (t->cap - t->n < n)
		track_grow(t);
}

/* The one way an event enters the store; inlined into the loader's hot path
 * (forced: left to itself, the compiler calls one shared copy). */
static inline __attribute__((always_inline)) void track_push(struct store *s, struct store_track *t, uint64_t start, uint64_t dur,
			      uint32_t desc, unsigned flags)
{
	struct store_file *f = &s->files[t->file];
	if (t->n == t->cap)
		track_grow(t);
	if (flags & (TRACE_EVF_MARK | TRACE_EVF_UNBALANCED_POP)) {
		dur = 0;
		if (flags & TRACE_EVF_UNBALANCED_POP)
			f->unbalanced_pops++;
		else
			f->marks++;
	}
	if (dur > UINT64_MAX - start)
		dur = UINT64_MAX - start;
	t->start[t->n] = start;
	t->dur[t->n] = dur;
	t->desc[t->n] = desc << 8 | (flags & STORE_EVF_TRACE);
	t->n++;
	f->events++;
	if (flags & TRACE_EVF_OPEN_AT_EXIT)
		f->open_at_exit++;
	if (start < f->start_ns)
		f->start_ns = start;
	if (start + dur > f->end_ns)
		f->end_ns = start + dur;
	if (start + dur > f->events_end_ns)
		f->events_end_ns = start + dur;
}

void store_append(struct store *s, uint32_t track, uint64_t start, uint64_t dur, uint32_t desc,
		  unsigned flags)
{
	track_push(s, &s->tracks[track], start, dur, desc, flags);
}

/* A Communication event's collective details: 1 when it carries any. */
static int comm_compact(unsigned type, const struct trace_event_ext *e, struct store_comm *c)
{
	if (type != TRACE_EV_COMMUNICATION ||
	    !(e->has_coll_seq || e->pg_str || e->group_size || e->dtype_str || e->has_peer ||
	      e->bytes))
		return 0;
	c->bytes = e->bytes;
	c->seq1 = e->has_coll_seq && e->coll_seq < UINT64_MAX ? e->coll_seq + 1 : 0;
	c->pg = e->pg_str;
	c->group_size = e->group_size;
	c->dtype = e->dtype_str;
	c->peer = e->has_peer && e->peer >= 0 ? e->peer : -1;
	return 1;
}

/* The details a view uses, in the member the event's type reads; 0 when the
 * event carries nothing of use. */
static int ext_compact(unsigned type, const struct trace_event_ext *e, struct store_ext *x)
{
	memset(x, 0, sizeof(*x));
	switch (type) {
	case TRACE_EV_KERNEL:
	case TRACE_EV_COMMUNICATION: {
		uint64_t blocks = (uint64_t)e->grid[0] * e->grid[1] * e->grid[2];
		uint64_t threads = (uint64_t)e->block[0] * e->block[1] * e->block[2];
		uint64_t smem = (uint64_t)e->static_smem + e->dynamic_smem;
		x->u.kernel.blocks = blocks;
		x->u.kernel.threads = threads > UINT32_MAX ? UINT32_MAX : (uint32_t)threads;
		x->u.kernel.smem = smem > UINT32_MAX ? UINT32_MAX : (uint32_t)smem;
		x->u.kernel.regs = e->registers > UINT16_MAX ? UINT16_MAX : (uint16_t)e->registers;
		return blocks || threads;
	}
	case TRACE_EV_MEMCPY:
	case TRACE_EV_MEMSET:
		x->u.copy.bytes = e->bytes;
		x->u.copy.copy_kind = e->copy_kind;
		x->u.copy.src_kind = e->src_kind;
		x->u.copy.dst_kind = e->dst_kind;
		x->u.copy.is_async = e->is_async ? 1 : 0;
		return 1;
	case TRACE_EV_MEMORY:
		x->u.memory.bytes = (int64_t)e->bytes;
		x->u.memory.in_use = e->total_allocated;
		x->u.memory.device = e->device;
		x->u.memory.kind = e->dst_kind;
		return 1;
	case TRACE_EV_PROFILE_STEP:
		x->u.step.samples = e->samples;
		x->u.step.cpu_ns = e->sched_cpu_ns;
		x->u.step.runq_ns = e->sched_runq_ns;
		return e->samples != 0 || e->sched_cpu_ns != 0;
	default:
		return 0;
	}
}

void store_append_ext(struct store *s, uint32_t track, uint64_t start, uint64_t dur,
		      uint32_t desc, unsigned flags, const struct trace_event_ext *ext)
{
	struct store_track *t = &s->tracks[track];
	size_t at = t->n;
	track_push(s, t, start, dur, desc, flags);
	if (!ext)
		return;
	struct store_ext x;
	struct store_comm cm;
	unsigned type = s->descs[desc].type;
	int comm = comm_compact(type, ext, &cm);
	int has = comm || ext_compact(type, ext, &x);
	/* the detail index shares its top bit with STORE_DETAIL_COMM */
	if (has && (comm ? t->ncomm : t->ndetails) >= STORE_DETAIL_COMM - 1)
		die("more than %u events with details on one thread", STORE_DETAIL_COMM - 1);
	if (!has && !ext->correlation) {
		if (!ext->external_id)
			return;
		/* an external id alone (an operator): beside the extras (store.h) */
		s->has_xid = 1;
		if (t->nxonly == t->xonly_cap) {
			t->xonly_cap = t->xonly_cap ? t->xonly_cap * 2 : 256;
			t->xonly_ev = xrealloc(t->xonly_ev, t->xonly_cap * sizeof(*t->xonly_ev));
			t->xonly_id = xrealloc(t->xonly_id, t->xonly_cap * sizeof(*t->xonly_id));
		}
		t->xonly_ev[t->nxonly] = (uint32_t)at;
		t->xonly_id[t->nxonly++] = ext->external_id;
		return;
	}
	if (t->nextra == t->extra_cap) {
		size_t cap = t->extra_cap ? t->extra_cap * 2 : 256;
		t->extra = xrealloc(t->extra, cap * sizeof(*t->extra));
		if (t->xid)
			t->xid = xrealloc(t->xid, cap * sizeof(*t->xid));
		t->extra_cap = cap;
	}
	struct store_extra *e = &t->extra[t->nextra];
	e->ev = (uint32_t)at;
	e->corr = ext->correlation;
	e->detail = STORE_NONE;
	/* The ids in one field where they fit (store.h): most events carry one
	 * of the two, the calls and their work two small ones. */
	uint64_t xid = ext->external_id, corr = ext->correlation, wide = 0;
	if (xid) {
		s->has_xid = 1;
		if (!corr) {
			e->corr = xid;
			t->desc[at] |= STORE_EVF_XID;
		} else if (xid <= UINT32_MAX && corr <= UINT32_MAX) {
			e->corr = xid << 32 | corr;
			t->desc[at] |= STORE_EVF_IDS32;
		} else {
			wide = xid;
			if (!t->xid) /* the track's first that does not fit */
				t->xid = xcalloc(t->extra_cap, sizeof(*t->xid));
		}
	}
	if (t->xid)
		t->xid[t->nextra] = wide;
	t->nextra++;
	if (comm) {
		if (t->ncomm == t->comm_cap) {
			t->comm_cap = t->comm_cap ? t->comm_cap * 2 : 64;
			t->comm = xrealloc(t->comm, t->comm_cap * sizeof(*t->comm));
		}
		e->detail = (uint32_t)t->ncomm | STORE_DETAIL_COMM;
		t->comm[t->ncomm++] = cm;
	} else if (has) {
		if (t->ndetails == t->details_cap) {
			t->details_cap = t->details_cap ? t->details_cap * 2 : 256;
			t->details = xrealloc(t->details, t->details_cap * sizeof(*t->details));
		}
		e->detail = (uint32_t)t->ndetails;
		t->details[t->ndetails++] = x;
	}
}

const struct store_extra *store_ev_extra(const struct store_track *t, size_t i)
{
	size_t lo = 0, hi = t->nextra;
	if (t->nextra == t->n) /* every event has one: the k-th is event k */
		return t->nextra ? &t->extra[i] : NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->extra[mid].ev < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nextra && t->extra[lo].ev == i ? &t->extra[lo] : NULL;
}

const struct store_ext *store_ev_ext(const struct store_track *t, size_t i)
{
	return store_extra_ext(t, store_ev_extra(t, i));
}

const struct store_comm *store_ev_comm(const struct store_track *t, size_t i)
{
	return store_extra_comm(t, store_ev_extra(t, i));
}

void store_add_process(struct store *s, uint32_t file, const struct trace_process *p)
{
	struct store_process sp = {file, p->pid, p->ppid, p->start_ns, p->end_ns, p->exit_status,
				   p->rank, p->exit_signal};
	for (uint32_t i = 0; i < s->nprocs; i++) {
		if (s->procs[i].file == file && s->procs[i].pid == p->pid &&
		    s->procs[i].start_ns == p->start_ns) {
			s->procs[i] = sp;
			return;
		}
	}
	if (s->nprocs == s->procs_cap) {
		s->procs_cap = s->procs_cap ? s->procs_cap * 2 : 16;
		s->procs = xrealloc(s->procs, s->procs_cap * sizeof(*s->procs));
	}
	s->procs[s->nprocs++] = sp;
}

void store_add_counter(struct store *s, const struct store_counter *c)
{
	if (s->ncounters == s->counters_cap) {
		s->counters_cap = s->counters_cap ? s->counters_cap * 2 : 256;
		s->counters = xrealloc(s->counters, s->counters_cap * sizeof(*s->counters));
	}
	s->counters[s->ncounters++] = *c;
}

/* ---- loading through the reader ---------------------------------------- */

struct load_ctx {
	struct store *s;
	struct trace_reader *r;
	uint32_t file;
	const struct trace_pids *pids; /* NULL: every process */
	uint32_t *thread_track; /* thread index -> track + 1; LOAD_SKIP: not loaded */
	size_t nthreads;
	uint32_t *desc_map;     /* file desc id -> store desc + 1 */
	size_t ndescs;
	uint64_t drops;         /* of the threads loaded */
	uint64_t other_drops;   /* of the threads left out */
};

#define LOAD_SKIP UINT32_MAX

/* Whether a process goes into the part being loaded. */
static int load_wants(const struct load_ctx *c, uint32_t pid)
{
	return trace_pids_has(c->pids, pid);
}

/* The reader checked every index against its tables, so the maps only grow
 * to the sizes of those tables. */
static uint32_t *map_slot(uint32_t **map, size_t *n, uint32_t index)
{
	if (index >= *n) {
		size_t m = *n ? *n : 64;
		while (m <= index)
			m *= 2;
		*map = xrealloc(*map, m * sizeof(**map));
		memset(*map + *n, 0, (m - *n) * sizeof(**map));
		*n = m;
	}
	return &(*map)[index];
}

/* The thread's track, or LOAD_SKIP when its process is left out. */
static uint32_t load_track(struct load_ctx *c, uint32_t thread)
{
	uint32_t *slot = map_slot(&c->thread_track, &c->nthreads, thread);
	if (*slot == LOAD_SKIP)
		return LOAD_SKIP;
	if (!*slot) {
		const struct trace_thread *th = trace_reader_thread(c->r, thread);
		if (th && !load_wants(c, th->pid)) {
			*slot = LOAD_SKIP;
			return LOAD_SKIP;
		}
		*slot = store_add_track(c->s, STORE_TRACK_HOST, c->file, thread) + 1;
		if (th && th->kind == TRACE_TRACK_STREAM)
			store_set_stream(c->s, *slot - 1, th->device, th->context, th->stream);
	}
	return *slot - 1;
}

static uint32_t load_desc(struct load_ctx *c, uint32_t id)
{
	uint32_t *slot = map_slot(&c->desc_map, &c->ndescs, id);
	if (!*slot) {
		const struct trace_desc *d = trace_reader_desc(c->r, id);
		const char *name = d ? trace_reader_string(c->r, d->name_str) : "";
		*slot = store_desc_intern(c->s, name, strlen(name),
					  d ? d->type : TRACE_EV_USER_DEFINED) + 1;
	}
	return *slot - 1;
}

/* The desc of desc's name and type with the input shapes of the file's
 * string id shapes_str (summary --group-by shapes). */
static uint32_t load_desc_shapes(struct load_ctx *c, uint32_t desc, uint32_t shapes_str)
{
	const char *shapes = trace_reader_string(c->r, shapes_str);
	uint32_t sid = names_intern(&c->s->names, shapes, strlen(shapes));
	const struct store_desc *d = &c->s->descs[desc];
	const char *name = names_get(&c->s->names, d->name);
	return store_desc_intern_shapes(c->s, name, strlen(name), d->type, sid);
}

/* A collective's string ids, from the file's to the store's names. */
static void load_comm_names(struct load_ctx *c, const struct trace_event_ext *e,
			    struct trace_event_ext *out)
{
	*out = *e;
	const char *pg = trace_reader_string(c->r, e->pg_str);
	const char *dtype = trace_reader_string(c->r, e->dtype_str);
	out->pg_str = e->pg_str ? names_intern(&c->s->names, pg, strlen(pg)) : 0;
	out->dtype_str = e->dtype_str ? names_intern(&c->s->names, dtype, strlen(dtype)) : 0;
}

static int load_event(void *ctx, const struct trace_event *e)
{
	struct load_ctx *c = ctx;
	/* Both maps are filled after an id's first event: then two loads. */
	uint32_t track = e->thread < c->nthreads ? c->thread_track[e->thread] : 0;
	uint32_t desc = e->desc < c->ndescs ? c->desc_map[e->desc] : 0;
	if (track == LOAD_SKIP)
		return 0;
	track = track ? track - 1 : load_track(c, e->thread);
	if (track == LOAD_SKIP)
		return 0;
	desc = desc ? desc - 1 : load_desc(c, e->desc);
	if (c->s->by_shapes && e->ext && e->ext->shapes_str)
		desc = load_desc_shapes(c, desc, e->ext->shapes_str);
	if (e->ext && (e->ext->pg_str || e->ext->dtype_str)) {
		struct trace_event_ext x;
		load_comm_names(c, e->ext, &x);
		store_append_ext(c->s, track, e->start_ns, e->dur_ns, desc, e->flags, &x);
	} else if (e->ext)
		store_append_ext(c->s, track, e->start_ns, e->dur_ns, desc, e->flags, e->ext);
	else
		track_push(c->s, &c->s->tracks[track], e->start_ns, e->dur_ns, desc, e->flags);
	progress_tick(c->s->files[c->file].events, "events");
	return 0;
}

/* The events of one EVNT or EVNS chunk (trace_visitor.events): what
 * load_event() does with each, with the track looked up once, room made
 * once, and the file's counts kept in locals. */
static int load_events(void *ctx, const struct trace_event *ev, size_t n)
{
	struct load_ctx *c = ctx;
	struct store *s = c->s;
	uint32_t track = ev[0].thread < c->nthreads ? c->thread_track[ev[0].thread] : 0;
	if (track == LOAD_SKIP)
		return 0;
	track = track ? track - 1 : load_track(c, ev[0].thread);
	if (track == LOAD_SKIP)
		return 0;
	struct store_track *t = &s->tracks[track];
	track_reserve(t, n);
	struct store_file *f = &s->files[t->file];
	uint64_t lo = f->start_ns, hi = f->end_ns, ehi = f->events_end_ns;
	uint64_t marks = 0, pops = 0, open = 0;
	uint64_t *start = t->start + t->n, *dur = t->dur + t->n;
	uint32_t *desc = t->desc + t->n;
	for (size_t k = 0; k < n; k++) {
		const struct trace_event *e = &ev[k];
		uint32_t d = e->desc < c->ndescs ? c->desc_map[e->desc] : 0;
		d = d ? d - 1 : load_desc(c, e->desc);
		uint64_t b = e->start_ns, len = e->dur_ns;
		unsigned flags = e->flags;
		if (flags & (TRACE_EVF_MARK | TRACE_EVF_UNBALANCED_POP)) {
			len = 0;
			if (flags & TRACE_EVF_UNBALANCED_POP)
				pops++;
			else
				marks++;
		}
		if (len > UINT64_MAX - b)
			len = UINT64_MAX - b;
		open += (flags & TRACE_EVF_OPEN_AT_EXIT) != 0;
		start[k] = b;
		dur[k] = len;
		desc[k] = d << 8 | (flags & STORE_EVF_TRACE);
		if (b < lo)
			lo = b;
		if (b + len > hi)
			hi = b + len;
		if (b + len > ehi)
			ehi = b + len;
	}
	t->n += n;
	f->events += n;
	f->marks += marks;
	f->unbalanced_pops += pops;
	f->open_at_exit += open;
	f->start_ns = lo;
	f->end_ns = hi;
	f->events_end_ns = ehi;
	for (size_t k = 0; k < n; k += 64)
		progress_tick(f->events, "events");
	return 0;
}

static int load_device(void *ctx, const struct trace_device *d)
{
	struct load_ctx *c = ctx;
	store_add_file_device(c->s, c->file, d, trace_reader_string(c->r, d->name_str));
	return 0;
}

static int load_counter(void *ctx, const struct trace_counter *tc)
{
	struct load_ctx *c = ctx;
	if (tc->pid && !load_wants(c, tc->pid))
		return 0;
	struct store_counter sc = {tc->ts_ns, c->file, tc->id, tc->pid, tc->value};
	store_add_counter(c->s, &sc);
	return 0;
}

static int load_drops(void *ctx, uint32_t thread, uint64_t dropped)
{
	struct load_ctx *c = ctx;
	uint32_t track = trace_reader_thread(c->r, thread) ? load_track(c, thread) : STORE_NONE;
	if (track == LOAD_SKIP) {
		c->other_drops += dropped;
		return 0;
	}
	c->drops += dropped;
	if (track != STORE_NONE)
		c->s->tracks[track].dropped += dropped;
	return 0;
}

static int load_process(void *ctx, const struct trace_process *p)
{
	struct load_ctx *c = ctx;
	if (load_wants(c, p->pid))
		store_add_process(c->s, c->file, p);
	return 0;
}

static void load_finish_file(struct load_ctx *c)
{
	struct store *s = c->s;
	struct store_file *f = &s->files[c->file];
	const struct trace_header *h = trace_reader_header(c->r);
	if (h) {
		free(f->hostname);
		free(f->cmdline);
		f->hostname = xstrdup(h->hostname ? h->hostname : "");
		f->cmdline = xstrdup(h->cmdline ? h->cmdline : "");
		free(f->clock);
		f->clock = xstrdup(h->clock_domain && *h->clock_domain ? h->clock_domain : "unknown");
		f->pid = h->pid;
		f->rank = h->rank;
		f->ncpus = h->ncpus;
		f->wall_offset_ns = h->wall_offset_ns;
		if (h->start_ns < f->start_ns)
			f->start_ns = h->start_ns;
		if (h->end_ns > f->end_ns)
			f->end_ns = h->end_ns;
	}
	if (f->start_ns == UINT64_MAX)
		f->start_ns = f->end_ns; /* no events and no header times: an empty run */
	for (uint32_t i = 0; i < s->ntracks; i++) {
		struct store_track *t = &s->tracks[i];
		const struct trace_thread *th;
		if (t->file != c->file || !(th = trace_reader_thread(c->r, t->thread)))
			continue;
		t->pid = th->pid;
		t->tid = th->tid;
		const char *name = trace_reader_string(c->r, th->name_str);
		t->name = names_intern(&s->names, name, strlen(name));
		if (th->kind == TRACE_TRACK_STREAM)
			store_set_stream(s, i, th->device, th->context, th->stream);
	}
	/* a part has its threads' drops; the rest of a file (exclude) those
	 * no thread claims too */
	uint64_t total = trace_reader_total_drops(c->r), claimed = c->drops + c->other_drops;
	if (!c->pids)
		f->dropped = total > c->drops ? total : c->drops;
	else
		f->dropped = c->drops + (c->pids->exclude && total > claimed ? total - claimed : 0);
	for (unsigned why = 0; why <= TRACE_DROP_REASON_COUNT; why++)
		f->drop_reasons[why] = trace_reader_drops_by_reason(c->r, why);
	f->size = trace_reader_file_size(c->r);
	uint64_t off = 0;
	const char *damage = trace_reader_damage(c->r, &off);
	if (damage) {
		f->damage = xstrdup(damage);
		f->damage_offset = off;
	}
}

int store_load(struct store *s, const char *path, char *err, size_t errlen)
{
	return store_load_part(s, path, NULL, err, errlen);
}

int store_load_part(struct store *s, const char *path, const struct trace_pids *pids, char *err,
		    size_t errlen)
{
	/* a chrome-trace JSON file (PyTorch's, Paddle's) is imported on the fly */
	struct trace_reader *r = trace_open_any(path, err, errlen);
	if (!r)
		return -1;
	struct load_ctx c = {.s = s, .r = r, .file = store_add_file(s, path), .pids = pids};
	struct trace_visitor v = {
		.process = load_process,
		.event = load_event,
		.counter = load_counter,
		.drops = load_drops,
		.device = load_device,
		.events = load_events,
	};
	int rc = trace_reader_run(r, &v, &c);
	load_finish_file(&c);
	free(c.thread_track);
	free(c.desc_map);
	trace_reader_close(r);
	if (rc != 0) {
		snprintf(err, errlen, "'%s': cannot read the trace", path);
		return -1;
	}
	return 0;
}

/* ---- one clock, sorted, nested ----------------------------------------- */

static uint64_t shifted(uint64_t t, int64_t shift)
{
	if (shift < 0)
		return t > (uint64_t)-shift ? t + (uint64_t)shift : 0;
	return t < UINT64_MAX - (uint64_t)shift ? t + (uint64_t)shift : UINT64_MAX;
}

const char *store_clock(const struct store *s)
{
	for (uint32_t i = 1; i < s->nfiles; i++)
		if (strcmp(s->files[i].clock, s->files[0].clock) != 0)
			return NULL;
	return s->nfiles ? s->files[0].clock : "unknown";
}

const char *store_clock_words(char *buf, size_t size, int wall, uint32_t nhosts, const char *clock,
			      const char *host)
{
	if (wall && !clock)
		snprintf(buf, size, "Unix wall time, each trace by its recorded wall clock offset "
				    "(%u host%s, their clocks differ)", nhosts, nhosts == 1 ? "" : "s");
	else if (wall)
		snprintf(buf, size, "Unix wall time, each trace by its recorded wall clock offset "
				    "(%u hosts)", nhosts);
	else if (clock && strcmp(clock, "CLOCK_REALTIME") == 0)
		snprintf(buf, size, "the wall clock they were recorded on (CLOCK_REALTIME, Unix time)");
	else if (clock && strcmp(clock, "CLOCK_MONOTONIC") == 0 && host && *host)
		snprintf(buf, size, "the shared CLOCK_MONOTONIC of host %s", host);
	else if (clock && strcmp(clock, "CLOCK_MONOTONIC") == 0)
		snprintf(buf, size, "a shared CLOCK_MONOTONIC (they name no host)");
	else
		snprintf(buf, size, "the traces' own clock, as they are (they name none)");
	return buf;
}

/* Files from one host on one clock are compared as they are; files from
 * several hosts, or on clocks that differ (a recorded trace and an imported
 * one), are compared in wall time. */
static void store_one_clock(struct store *s)
{
	for (uint32_t i = 1; i < s->nfiles; i++)
		if (strcmp(s->files[i].hostname, s->files[0].hostname) != 0 ||
		    strcmp(s->files[i].clock, s->files[0].clock) != 0)
			s->wall_clock = 1;
	if (!s->wall_clock)
		return;
	for (uint32_t i = 0; i < s->nfiles; i++) {
		struct store_file *f = &s->files[i];
		f->shift_ns = f->wall_offset_ns;
		f->start_ns = shifted(f->start_ns, f->shift_ns);
		f->end_ns = shifted(f->end_ns, f->shift_ns);
		if (f->events_end_ns)
			f->events_end_ns = shifted(f->events_end_ns, f->shift_ns);
	}
	for (uint32_t i = 0; i < s->nprocs; i++) {
		struct store_process *p = &s->procs[i];
		int64_t shift = s->files[p->file].shift_ns;
		p->start_ns = shifted(p->start_ns, shift);
		if (p->end_ns) /* 0: never seen to end */
			p->end_ns = shifted(p->end_ns, shift);
	}
	for (uint32_t i = 0; i < s->ntracks; i++) {
		struct store_track *t = &s->tracks[i];
		int64_t shift = s->files[t->file].shift_ns;
		for (size_t j = 0; j < t->n; j++) {
			t->start[j] = shifted(t->start[j], shift);
			if (t->dur[j] > UINT64_MAX - t->start[j])
				t->dur[j] = UINT64_MAX - t->start[j];
		}
	}
	for (size_t i = 0; i < s->ncounters; i++)
		s->counters[i].ts_ns = shifted(s->counters[i].ts_ns, s->files[s->counters[i].file].shift_ns);
}

struct track_size {
	size_t n;
	uint32_t track;
};

struct finish_job {
	struct store *s;
	struct track_size *order; /* largest first */
};

/* The sort moved each event's extra index along in parent[] (an external
 * id alone: nextra + its index in xonly_ev[]): the extras are put in the new
 * event order, each with its new index, in place and with no scratch:
 * parent[] (rewritten by the nesting next) becomes the map from each new
 * position to the old one. The lone external ids only take their events'
 * new indices: nothing moves them. */
static void extras_follow(struct store_track *t, int moved)
{
	if (moved) {
		uint32_t *from = t->parent;
		const size_t nx = t->nextra;
		size_t k = 0;
		for (size_t i = 0; i < t->n; i++) {
			uint32_t p = t->parent[i];
			if (p == STORE_NONE)
				continue;
			if (p >= nx) {
				t->xonly_ev[p - nx] = (uint32_t)i;
				continue;
			}
			t->extra[p].ev = (uint32_t)i; /* its event's new index */
			from[k++] = p;                /* k <= i: read before written */
		}
		for (size_t start = 0; start < t->nextra; start++) {
			if (from[start] == start)
				continue; /* in place, or moved with an earlier cycle */
			/* one cycle of the permutation: each place takes its entry */
			struct store_extra first = t->extra[start];
			uint64_t first_xid = t->xid ? t->xid[start] : 0;
			size_t at = start;
			for (;;) {
				size_t src = from[at];
				from[at] = (uint32_t)at;
				if (src == start)
					break;
				t->extra[at] = t->extra[src];
				if (t->xid)
					t->xid[at] = t->xid[src];
				at = src;
			}
			t->extra[at] = first;
			if (t->xid)
				t->xid[at] = first_xid;
		}
	}
	if (t->nextra < t->extra_cap) {
		t->extra = xrealloc(t->extra, t->nextra * sizeof(*t->extra));
		if (t->xid)
			t->xid = xrealloc(t->xid, t->nextra * sizeof(*t->xid));
	}
	t->extra_cap = t->nextra;
	if (t->nxonly < t->xonly_cap) {
		t->xonly_ev = xrealloc(t->xonly_ev, t->nxonly * sizeof(*t->xonly_ev));
		t->xonly_id = xrealloc(t->xonly_id, t->nxonly * sizeof(*t->xonly_id));
		t->xonly_cap = t->nxonly;
	}
	if (t->ndetails && t->ndetails < t->details_cap) {
		t->details = xrealloc(t->details, t->ndetails * sizeof(*t->details));
		t->details_cap = t->ndetails;
	}
	if (t->ncomm && t->ncomm < t->comm_cap) {
		t->comm = xrealloc(t->comm, t->ncomm * sizeof(*t->comm));
		t->comm_cap = t->ncomm;
	}
}

/* A host thread's ProfileStep ranges (store.h: steps). */
static void store_find_steps(const struct store *s, struct store_track *t)
{
	free(t->steps);
	t->steps = NULL;
	t->nsteps = 0;
	if (t->kind != STORE_TRACK_HOST)
		return;
	size_t cap = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (store_ev_type(s, t, i) != TRACE_EV_PROFILE_STEP || store_ev_is_instant(t, i))
			continue;
		if (t->nsteps == cap) {
			cap = cap ? cap * 2 : 64;
			t->steps = xrealloc(t->steps, cap * sizeof(*t->steps));
		}
		t->steps[t->nsteps++] = (uint32_t)i;
	}
}

static void finish_track(void *ctx, unsigned i)
{
	struct finish_job *job = ctx;
	struct store_track *t = &job->s->tracks[job->order[i].track];
	const int ids = t->nextra || t->nxonly;
	if (ids) {
		free(t->parent);
		t->parent = xmalloc(t->n * sizeof(*t->parent));
		for (size_t k = 0; k < t->n; k++)
			t->parent[k] = STORE_NONE;
		for (size_t k = 0; k < t->nextra; k++)
			t->parent[t->extra[k].ev] = (uint32_t)k;
		for (size_t k = 0; k < t->nxonly; k++) /* below n: no STORE_NONE */
			t->parent[t->xonly_ev[k]] = (uint32_t)(t->nextra + k);
	}
	int moved = store_sort_track(t);
	if (ids)
		extras_follow(t, moved);
	store_nest_track(t);
	store_fold_track(job->s, t);
	store_find_steps(job->s, t);
}

/* The GPUs the streams run on, one per (host, device id): the ranks of one
 * host that share a GPU share its row. Properties come from the first file
 * that describes the device. */
static uint32_t store_device_of(struct store *s, uint32_t host, uint32_t id)
{
	for (uint32_t d = 0; d < s->ndevices; d++)
		if (s->devices[d].host == host && s->devices[d].id == id)
			return d;
	s->devices = xrealloc(s->devices, (s->ndevices + 1) * sizeof(*s->devices));
	struct store_device *d = &s->devices[s->ndevices];
	memset(d, 0, sizeof(*d));
	d->host = host;
	d->id = id;
	return s->ndevices++;
}

static void store_find_devices(struct store *s)
{
	for (uint32_t f = 0; f < s->nfiles; f++) {
		struct store_file *file = &s->files[f];
		uint32_t host = names_intern(&s->names, file->hostname, strlen(file->hostname));
		file->host = host;
		for (uint32_t k = 0; k < file->ndevices; k++) {
			uint32_t at = store_device_of(s, host, file->devices[k].id);
			struct store_device *d = &s->devices[at];
			if (d->known)
				continue;
			d->known = 1;
			d->props = file->devices[k];
			d->name = d->props.name_str;
		}
		for (uint32_t i = 0; i < s->ntracks; i++)
			if (s->tracks[i].file == f && s->tracks[i].kind == STORE_TRACK_DEVICE)
				s->tracks[i].dev = store_device_of(s, host, s->tracks[i].device);
	}
}

static int track_larger(const void *x, const void *y)
{
	const struct track_size *a = x, *b = y;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return (a->track > b->track) - (a->track < b->track);
}

void store_finish(struct store *s)
{
	if (s->finished)
		return;
	store_one_clock(s);
	store_find_devices(s);
	/* Tracks are independent: sorted and nested side by side, largest first
	 * so that the longest one does not start last. */
	struct finish_job job = {s, xmalloc((s->ntracks ? s->ntracks : 1) * sizeof(*job.order))};
	for (uint32_t i = 0; i < s->ntracks; i++)
		job.order[i] = (struct track_size){s->tracks[i].n, i};
	qsort(job.order, s->ntracks, sizeof(*job.order), track_larger);
	parallel_for(s->ntracks, finish_track, &job);
	free(job.order);
	s->finished = 1;
}

uint64_t store_drops_not_ring(const struct store *s)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < s->nfiles; i++)
		for (unsigned why = 1; why <= TRACE_DROP_REASON_COUNT; why++)
			if (trace_drop_reason_is_loss(why))
				n += s->files[i].drop_reasons[why];
	return n;
}

int store_counter_cmp(const void *x, const void *y)
{
	const struct store_counter *a = x, *b = y;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->ts_ns > b->ts_ns) - (a->ts_ns < b->ts_ns);
}
