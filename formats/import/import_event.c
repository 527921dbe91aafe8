/*
 * import_event.c - one traceEvents element, parsed, made a gprof-dl event:
 * classified (import_classify.h), put on its track, its details gathered
 * from args, and spilled; or made a name (metadata), a counter sample, or
 * counted as ignored.
 */
#include "formats/import/import_classify.h"
#include "formats/import/import_int.h"
#include "formats/import/import_tell.h"
#include "formats/trace/trace_format.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *span_ptr(const char *arena, const struct jspan *s)
{
	return s->set ? arena + s->off : NULL;
}

static int span_is(const char *arena, const struct jspan *s, const char *lit)
{
	size_t n = strlen(lit);
	return s->set && s->len == n && memcmp(arena + s->off, lit, n) == 0;
}

/* ---- ids ------------------------------------------------------------------ */

static uint32_t synth_id(struct import *im, uint32_t str)
{
	uint64_t *v = hmap_get(&im->synth, str, 0);
	if (v)
		return (uint32_t)*v;
	if (im->nsynth == im->synth_cap) {
		im->synth_cap = im->synth_cap ? im->synth_cap * 2 : 16;
		im->synth_strs = xrealloc(im->synth_strs, im->synth_cap * sizeof(*im->synth_strs));
	}
	uint32_t id = IMPORT_SYNTH_ID_BASE + im->nsynth;
	im->synth_strs[im->nsynth++] = str;
	hmap_put(&im->synth, str, 0, id);
	return id;
}

/* "stream 7", "stream 7 user": how Kineto before PyTorch 1.10 named a GPU
 * stream's tid. The length of the prefix before the number, or 0. */
static size_t stream_prefix(const char *s, size_t n)
{
	return n > 7 && strncasecmp(s, "stream ", 7) == 0 && s[7] >= '0' && s[7] <= '9' ? 7 : 0;
}

uint32_t import_id(struct import *im, const struct jid *id, const char *arena)
{
	if (id->kind == 1)
		return (uint32_t)id->num;
	if (id->kind != 2)
		return 0;
	/* "1234(C++)": Paddle's thread 1234, one track for its Python and C++
	 * events; "stream 7": old Kineto's stream 7 */
	const char *s = arena + id->s.off;
	size_t n = id->s.len, skip = stream_prefix(s, n), i = 0;
	s += skip;
	n -= skip;
	int neg = n > 0 && s[0] == '-';
	uint64_t v = 0;
	for (i = (size_t)neg; i < n && s[i] >= '0' && s[i] <= '9' && v <= UINT32_MAX; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	if (i > (size_t)neg && v <= UINT32_MAX)
		return neg ? (uint32_t)-(int64_t)v : (uint32_t)v;
	return synth_id(im, istrings_intern(&im->strs, s - skip, n + skip));
}

/* ---- metadata, devices, drops --------------------------------------------- */

static void import_metadata(struct import *im, const struct jevent *e, const char *arena)
{
	const struct jspan *name = &e->a.meta_name;
	if (!name->set)
		return;
	uint32_t str = istrings_intern(&im->strs, arena + name->off, name->len);
	uint32_t pid = import_id(im, &e->pid, arena);
	if (span_is(arena, &e->name, "process_name"))
		hmap_put(&im->proc_names, pid, 0, str);
	else if (span_is(arena, &e->name, "thread_name"))
		hmap_put(&im->thread_names, pid, import_id(im, &e->tid, arena), str);
}

void import_device(struct import *im, const struct trace_device *d)
{
	for (uint32_t i = 0; i < im->ndevs; i++) {
		if (im->devs[i].id == d->id) {
			im->devs[i] = *d; /* a later description of the same device wins */
			return;
		}
	}
	if (im->ndevs == im->devs_cap) {
		im->devs_cap = im->devs_cap ? im->devs_cap * 2 : 8;
		im->devs = xrealloc(im->devs, im->devs_cap * sizeof(*im->devs));
	}
	im->devs[im->ndevs++] = *d;
}

void import_drop(struct import *im, const struct import_drop *d)
{
	if (!d->dropped)
		return;
	if (im->ndrops == im->drops_cap) {
		im->drops_cap = im->drops_cap ? im->drops_cap * 2 : 8;
		im->drops = xrealloc(im->drops, im->drops_cap * sizeof(*im->drops));
	}
	im->drops[im->ndrops++] = *d;
}

void import_oproc(struct import *im, const struct import_oproc *p)
{
	if (im->noprocs == im->oprocs_cap) {
		im->oprocs_cap = im->oprocs_cap ? im->oprocs_cap * 2 : 8;
		im->oprocs = xrealloc(im->oprocs, im->oprocs_cap * sizeof(*im->oprocs));
	}
	im->oprocs[im->noprocs++] = *p;
}

void import_othread(struct import *im, const struct import_othread *t)
{
	if (im->nothreads == im->othreads_cap) {
		im->othreads_cap = im->othreads_cap ? im->othreads_cap * 2 : 16;
		im->othreads = xrealloc(im->othreads, im->othreads_cap * sizeof(*im->othreads));
	}
	im->othreads[im->nothreads++] = *t;
}

/* ---- what cannot be taken as it is ---------------------------------------- */

void import_fix(struct import *im, struct itrack *t, unsigned reason)
{
	if (t)
		t->fixes[reason]++;
	else
		im->fixes_untracked[reason]++;
	im->st.fixed[reason]++;
}

/* An event whose ts is there but unusable: 1 when it was counted as dropped. */
static int bad_ts(struct import *im, const struct jevent *e, struct itrack *t)
{
	if (e->have & JE_TS)
		return 0;
	if (e->have & JE_TS_RANGE)
		import_fix(im, t, TRACE_DROP_TIME_RANGE);
	else if (e->have & JE_TS_NAN)
		import_fix(im, t, TRACE_DROP_TIME_NAN);
	else
		return 0;
	return 1;
}

/* A range's duration in ns, repaired and counted when it cannot be taken as
 * it is: negative or no number (0), or ending past the largest time or
 * longer than a trace record holds (clamped). */
static int64_t range_dur(struct import *im, const struct jevent *e, struct itrack *t,
			 int64_t start)
{
	int64_t dur = e->have & JE_DUR ? e->dur : 0, end;
	if (e->have & JE_DUR_NAN) {
		import_fix(im, t, TRACE_DROP_DURATION_NAN);
		return 0;
	}
	if (dur < 0) {
		import_fix(im, t, TRACE_DROP_NEGATIVE_DURATION);
		return 0;
	}
	if ((e->have & JE_DUR_RANGE) || __builtin_add_overflow(start, dur, &end) ||
	    (uint64_t)dur > TRACE_EVENT_DUR_MAX) {
		import_fix(im, t, TRACE_DROP_DURATION_RANGE);
		int64_t room = start < 0 ? INT64_MAX : INT64_MAX - start;
		return (uint64_t)room > TRACE_EVENT_DUR_MAX ? (int64_t)TRACE_EVENT_DUR_MAX : room;
	}
	return dur;
}

/* ---- counters ------------------------------------------------------------- */

static int import_counter(struct import *im, const struct jevent *e, const char *arena)
{
	struct spill_counter c = {0};
	const char *name = span_ptr(arena, &e->name);

	if (name && (e->a.have & JA_VALUE) && bad_ts(im, e, NULL))
		return 0;
	if (!(e->have & JE_TS) || !name || !(e->a.have & JA_VALUE)) {
		im->st.ignored++;
		return 0;
	}
	for (unsigned id = 1; id < TRACE_CTR_COUNT; id++) {
		if (span_is(arena, &e->name, trace_counter_name(id))) {
			c.id = id;
			break;
		}
	}
	if (!c.id) {
		im->st.ignored++; /* only gprof-dl's own counters have a meaning here */
		return 0;
	}
	c.ts = e->ts;
	c.value = e->a.value;
	/* system-wide samples are exported under the root pid */
	c.pid = c.id == TRACE_CTR_CPU_SYSTEM ? 0 : import_id(im, &e->pid, arena);
	if (spill_put_counter(&im->spill, &c) < 0)
		return import_fail(im, "cannot write a temporary file in '%s': %s", import_tmpdir(),
				   strerror(im->spill.err));
	im->st.counters++;
	return 0;
}

/* ---- ranges and marks ----------------------------------------------------- */

static uint32_t category_number(struct import *im, uint32_t domain_str, const char *s, size_t n)
{
	uint32_t name_str = istrings_intern(&im->strs, s, n);
	uint64_t *v = hmap_get(&im->cat_ids, domain_str, name_str);
	if (v)
		return (uint32_t)*v;
	if (im->ncats == im->cats_cap) {
		im->cats_cap = im->cats_cap ? im->cats_cap * 2 : 16;
		im->cats = xrealloc(im->cats, im->cats_cap * sizeof(*im->cats));
	}
	uint32_t num = ++im->next_category;
	im->cats[im->ncats++] = (struct import_category){ domain_str, num, name_str };
	hmap_put(&im->cat_ids, domain_str, name_str, num);
	return num;
}

/* Kineto's [memory] instants: Device Type is c10's (0 CPU), Device Id -1
 * for host memory. */
static void memory_ext(const struct jargs *a, const char *arena, struct trace_event_ext *x)
{
	x->bytes = (uint64_t)a->bytes; /* a free is negative, as int64 */
	x->address = a->addr;
	x->total_allocated = a->total_alloc;
	x->device = -1;
	if (a->have & JA_DEVICE_TYPE) {
		if (a->device_type != 0) {
			x->device = (a->have & JA_DEVICE_ID) ? (int32_t)a->device_id : 0;
			x->dst_kind = TRACE_MEM_DEVICE;
		}
	} else if (a->have & JA_DEVICE_ID) {
		x->device = (int32_t)a->device_id;
		if (x->device >= 0)
			x->dst_kind = TRACE_MEM_DEVICE;
	} else if (a->place.set) {
		const char *gpu = strstr(arena + a->place.off, "gpu:");
		if (gpu) {
			x->device = (int32_t)strtol(gpu + 4, NULL, 10);
			x->dst_kind = TRACE_MEM_DEVICE;
		}
	}
}

static int event_ext(struct import *im, const struct jargs *a, uint8_t type, const char *name,
		     size_t namelen, const char *arena, struct trace_event_ext *x)
{
	memset(x, 0, sizeof(*x));
	x->external_id = a->have & JA_EXTERNAL_ID ? a->external_id : 0;
	x->correlation = a->have & JA_CORRELATION ? a->correlation : 0;
	/* Kineto's "Sequence number" and "Input Dims", a step's "samples" */
	x->has_seq = (a->have & JA_SEQ) != 0;
	x->seq_nr = x->has_seq ? a->seq : 0;
	x->samples = a->have & JA_SAMPLES ? a->samples : 0;
	if (a->shapes.set)
		x->shapes_str = istrings_intern(&im->strs, arena + a->shapes.off, a->shapes.len);
	switch (type) {
	case TRACE_EV_KERNEL:
	case TRACE_EV_COMMUNICATION:
		if (a->have & JA_GRID)
			memcpy(x->grid, a->grid, sizeof(x->grid));
		if (a->have & JA_BLOCK)
			memcpy(x->block, a->block, sizeof(x->block));
		x->registers = (uint32_t)(a->registers > UINT32_MAX ? UINT32_MAX : a->registers);
		/* Kineto and Paddle give static + dynamic as one "shared memory" */
		x->static_smem = (uint32_t)((a->have & JA_STATIC_SMEM) ? a->static_smem : a->smem);
		x->dynamic_smem = (uint32_t)a->dynamic_smem;
		break;
	case TRACE_EV_MEMCPY:
		x->bytes = (uint64_t)a->bytes;
		import_memcpy_kinds(name, namelen, &x->copy_kind, &x->src_kind, &x->dst_kind);
		x->src_kind = a->src_kind ? a->src_kind : x->src_kind;
		x->dst_kind = a->dst_kind ? a->dst_kind : x->dst_kind;
		x->is_async = (a->have & JA_ASYNC) != 0;
		break;
	case TRACE_EV_MEMSET:
		x->bytes = (uint64_t)a->bytes;
		x->dst_kind = a->dst_kind ? a->dst_kind : import_memset_kind(name, namelen);
		x->is_async = (a->have & JA_ASYNC) != 0;
		break;
	case TRACE_EV_MEMORY:
		memory_ext(a, arena, x);
		if (a->mem_kind)
			x->dst_kind = a->mem_kind;
		return 1;
	default:
		break;
	}
	if (type == TRACE_EV_COMMUNICATION)
		import_comm_ext(im, a, arena, x);
	static const struct trace_event_ext zero;
	return memcmp(x, &zero, sizeof(zero)) != 0;
}

/* The type and track kind: gprof-dl's own export names the type in args.type;
 * the older PyTorch profiler puts kernels under the pid "CUDA functions". */
static void event_class(struct import *im, const struct jevent *e, const char *arena, int mark,
			const char *name, size_t namelen, struct import_class *c, int *legacy_gpu)
{
	const char *cat = span_ptr(arena, &e->cat);
	int t;

	*legacy_gpu = 0;
	if (mark && namelen == 8 && memcmp(name, "[memory]", 8) == 0) {
		/* on a host thread, unless the args name a stream */
		c->type = TRACE_EV_MEMORY;
		c->stream = (e->a.have & JA_STREAM) != 0;
		c->known = 1;
		return;
	}
	if (!cat && im->array_form && e->pid.kind == 2 &&
	    span_is(arena, &e->pid.s, "CUDA functions")) {
		import_classify("kernel", 6, name, namelen, TRACE_EV_OPERATOR, c);
		*legacy_gpu = 1;
		return;
	}
	import_classify(cat, cat ? e->cat.len : 0, name, namelen,
			im->array_form ? TRACE_EV_OPERATOR : TRACE_EV_USER_DEFINED, c);
	if (c->known && cat && e->cat.len > 0 && cat[0] >= 'a' && cat[0] <= 'z')
		im->hdr.saw_kineto = 1;
	/* gprof-dl's own export: the type is args.type, the track kind the
	 * category's (a Communication operator stays on its host thread) */
	if (e->a.type.set && (t = import_type_by_name(arena + e->a.type.off, e->a.type.len)) >= 0) {
		if (!c->known)
			c->stream = trace_event_type_is_device((unsigned)t) != 0;
		c->type = (uint8_t)t;
		c->known = 1;
	}
}

static void track_times(struct itrack *t, int rel, int64_t start, int64_t end)
{
	if (rel) {
		if (!t->have_rel || start < t->min_rel)
			t->min_rel = start;
		if (!t->have_rel || end > t->max_rel)
			t->max_rel = end;
		t->have_rel = 1;
	} else {
		if (!t->have_abs || start < t->min_abs)
			t->min_abs = start;
		if (!t->have_abs || end > t->max_abs)
			t->max_abs = end;
		t->have_abs = 1;
	}
}

static void stream_ids(struct itrack *t, const struct jargs *a, int legacy_gpu)
{
	if (legacy_gpu) {
		t->device = t->tid; /* "tid": the device, in the older profiler */
		t->stream = 0;
		t->have_device = 1;
		return;
	}
	if (!t->have_device && (a->have & (JA_DEVICE | JA_STREAM))) {
		if (a->have & JA_DEVICE)
			t->device = (uint32_t)a->device;
		if (a->have & JA_STREAM)
			t->stream = a->stream;
		t->have_device = 1;
	}
	if (!t->context && (a->have & JA_CONTEXT))
		t->context = (uint32_t)a->context;
}

/* A record_param_comms range (the PyTorch profiler's account of a
 * collective), or a Communication event its details may complete
 * (import_comm.c). */
static void comm_refs(struct import *im, const struct jevent *e, const char *arena,
		      const struct import_class *c, struct spill_event *s, uint32_t pid,
		      size_t namelen)
{
	const char *name = e->name.set ? arena + e->name.off : "";
	struct import_comm_ref r = {
		.track = s->track,
		.pid = pid,
		.start = s->start,
		.end = import_sat_add(s->start, s->dur),
		.external_id = e->a.have & JA_EXTERNAL_ID ? e->a.external_id : 0,
		.on_stream = c->stream,
		.meta = -1,
	};
	if ((s->flags & (SPILL_EVF_PADDLE_REL | TRACE_EVF_MARK)) || !(e->have & JE_DUR))
		return;
	if (!c->stream && namelen == 18 && memcmp(name, "record_param_comms", 18) == 0) {
		const struct jspan *op = &e->a.coll_name;
		if (op->set)
			r.op_str = istrings_intern(&im->strs, arena + op->off, op->len);
		if (import_comm_ext(im, &e->a, arena, &r.x))
			import_comm_meta(im, &r);
	} else if (c->type == TRACE_EV_COMMUNICATION) {
		r.op_str = istrings_intern(&im->strs, name, namelen);
		import_comm_event(im, &r);
		s->flags |= SPILL_EVF_COMM;
	}
}

static int import_range(struct import *im, const struct jevent *e, const char *arena, int mark)
{
	struct import_class c;
	struct spill_event s = {0};
	const char *name = e->name.set ? arena + e->name.off : "";
	size_t namelen = e->name.set ? e->name.len : 0;
	int legacy_gpu;

	if (mark && span_is(arena, &e->scope, "g")) {
		im->st.ignored++; /* an instant of no thread */
		return 0;
	}
	if (!(e->have & (JE_TS | JE_TS_RANGE | JE_TS_NAN))) {
		import_fix(im, NULL, TRACE_DROP_NO_TIME);
		return 0;
	}
	event_class(im, e, arena, mark, name, namelen, &c, &legacy_gpu);
	if (e->tid.kind == 2) {
		size_t n = e->tid.s.len;
		const char *t = arena + e->tid.s.off;
		/* Paddle's host threads: "1234(C++)", "1234(Python)"; its
		 * Communication ranges are on them or on a stream */
		if ((n > 5 && !memcmp(t + n - 5, "(C++)", 5)) ||
		    (n > 8 && !memcmp(t + n - 8, "(Python)", 8))) {
			im->hdr.saw_paddle = 1;
			c.stream = 0;
		}
		if (stream_prefix(t, n)) {
			c.stream = 1; /* old Kineto's GPU work, its "User" ranges included */
			im->hdr.saw_kineto = 1;
		}
	}
	namelen = import_strip_paddle_suffix(name, namelen);
	if (!mark && !c.stream && (e->have & JE_TS) && !(e->a.have & JA_PADDLE_REL) &&
	    import_is_profiler_span(name, namelen)) {
		/* the profiler's window: the trace's recorded interval (emit) */
		int64_t end = import_sat_add(e->ts, (e->have & JE_DUR) && e->dur > 0 ? e->dur : 0);
		if (!im->have_span || e->ts < im->span_lo)
			im->span_lo = e->ts;
		if (!im->have_span || end > im->span_hi)
			im->span_hi = end;
		im->have_span = 1;
		return 0;
	}

	uint32_t pid = import_id(im, &e->pid, arena), tid = import_id(im, &e->tid, arena);
	uint8_t kind = c.stream ? TRACE_TRACK_STREAM : TRACE_TRACK_HOST;
	s.track = itracks_get(&im->tracks, kind, pid, tid);
	struct itrack *t = &im->tracks.t[s.track];
	if (bad_ts(im, e, t))
		return 0;
	if (e->have & JE_NAME_BAD)
		import_fix(im, t, TRACE_DROP_BAD_NAME);
	if (e->have & JE_ID_BAD)
		import_fix(im, t, TRACE_DROP_BAD_ID);
	if (e->have & JE_ARGS_BAD)
		import_fix(im, t, TRACE_DROP_BAD_ARGS);
	if (c.stream)
		stream_ids(t, &e->a, legacy_gpu);

	const struct jargs *a = &e->a;
	uint32_t domain = 0;
	if (a->domain.set)
		domain = istrings_intern(&im->strs, arena + a->domain.off, a->domain.len);
	uint32_t category = 0;
	if (a->category.set)
		category = category_number(im, domain, arena + a->category.off, a->category.len);
	else if (e->a.have & JA_CATEGORY_NUM)
		category = (uint32_t)e->a.category_num;
	/* gprof-dl's export names a copy as the PyTorch profiler does and keeps
	 * the recorded name aside */
	const char *dname = name;
	size_t dlen = namelen;
	if (e->a.recorded_name.set) {
		dname = arena + e->a.recorded_name.off;
		dlen = e->a.recorded_name.len;
	}
	s.desc = idescs_intern(&im->descs, istrings_intern(&im->strs, dname, dlen), domain,
			       category, c.type);

	s.flags = e->a.flags | (mark ? TRACE_EVF_MARK : 0);
	s.start = e->ts;
	s.dur = mark ? 0 : range_dur(im, e, t, e->ts);
	if (e->a.have & JA_PADDLE_REL) {
		int64_t base = import_sat_add(e->ts, e->a.paddle_rel == INT64_MIN ? INT64_MAX
									       : -e->a.paddle_rel);
		if (!im->have_paddle_base || base > im->paddle_base)
			im->paddle_base = base;
		im->have_paddle_base = 1;
		s.start = e->a.paddle_rel;
		s.flags |= SPILL_EVF_PADDLE_REL;
	}
	s.has_ext = event_ext(im, &e->a, c.type, name, namelen, arena, &s.ext);
	comm_refs(im, e, arena, &c, &s, pid, namelen);
	if (!c.stream && !(s.flags & (TRACE_EVF_MARK | SPILL_EVF_PADDLE_REL)))
		import_phase_range(im, s.track, c.type, name, namelen, s.start,
				   import_sat_add(s.start, s.dur));
	track_times(t, (s.flags & SPILL_EVF_PADDLE_REL) != 0, s.start,
		    import_sat_add(s.start, s.dur));
	t->events++;
	if (spill_put_event(&im->spill, &s) < 0)
		return import_fail(im, "cannot write a temporary file in '%s': %s", import_tmpdir(),
				   strerror(im->spill.err));
	im->st.events++;
	if (import_progress)
		import_progress(im->st.events);
	return 0;
}

/* ---- begin and end -------------------------------------------------------- */

/* The (pid, tid) key of a "B" or "E" event's thread. */
static uint64_t begin_key(struct import *im, const struct jevent *e, const char *arena,
			  uint64_t *tid)
{
	*tid = import_id(im, &e->tid, arena);
	return import_id(im, &e->pid, arena);
}

/* A "B": kept, with its strings, until the "E" of its thread. */
static int import_begin(struct import *im, const struct jevent *e, const char *arena,
			size_t arena_len)
{
	if (!(e->have & (JE_TS | JE_TS_RANGE | JE_TS_NAN))) {
		import_fix(im, NULL, TRACE_DROP_NO_TIME);
		return 0;
	}
	if (bad_ts(im, e, NULL))
		return 0;
	uint32_t i;
	if (im->free_begin) {
		i = im->free_begin - 1;
		im->free_begin = im->begins[i].prev;
	} else {
		if (im->nbegins == im->begins_cap) {
			im->begins_cap = im->begins_cap ? im->begins_cap * 2 : 16;
			im->begins = xrealloc(im->begins, im->begins_cap * sizeof(*im->begins));
		}
		i = im->nbegins++;
		im->begins[i].arena = NULL;
	}
	struct import_begin *b = &im->begins[i];
	uint64_t tid, pid = begin_key(im, e, arena, &tid);
	uint64_t *top = hmap_get(&im->begin_top, pid, tid);
	b->e = *e;
	b->prev = top ? (uint32_t)*top : 0;
	b->arena = xrealloc(b->arena, arena_len + 1);
	memcpy(b->arena, arena, arena_len);
	b->arena[arena_len] = '\0';
	hmap_put(&im->begin_top, pid, tid, (uint64_t)i + 1);
	return 0;
}

/* An "E": the range from its thread's innermost open "B" to here, that
 * event's name, category and args. */
static int import_end(struct import *im, const struct jevent *e, const char *arena)
{
	uint64_t tid, pid = begin_key(im, e, arena, &tid);
	uint64_t *top = hmap_get(&im->begin_top, pid, tid);
	if (!top || !*top) {
		import_fix(im, NULL, TRACE_DROP_END_WITHOUT_BEGIN);
		return 0;
	}
	uint32_t i = (uint32_t)*top - 1;
	struct import_begin *b = &im->begins[i];
	*top = b->prev;
	b->prev = im->free_begin;
	im->free_begin = i + 1;
	if (!(e->have & JE_TS)) {
		/* an end of no usable time: neither is imported */
		if (!(e->have & (JE_TS_RANGE | JE_TS_NAN)))
			import_fix(im, NULL, TRACE_DROP_NO_TIME);
		else
			bad_ts(im, e, NULL);
		import_fix(im, NULL, TRACE_DROP_BEGIN_WITHOUT_END);
		return 0;
	}
	struct jevent x = b->e;
	int64_t dur;
	x.have &= ~(uint32_t)(JE_DUR_RANGE | JE_DUR_NAN);
	x.have |= JE_DUR;
	if (__builtin_sub_overflow(e->ts, x.ts, &dur))
		x.have |= JE_DUR_RANGE;
	x.dur = dur;
	return import_range(im, &x, b->arena, 0);
}

void import_begins_end(struct import *im, int ok)
{
	for (uint32_t i = 0; i < im->nbegins; i++)
		free(im->begins[i].arena);
	uint64_t open = 0;
	for (uint32_t i = 0; ok && i < im->begin_top.cap; i++)
		for (uint64_t k = im->begin_top.e[i].value; im->begin_top.e[i].used && k;
		     k = im->begins[k - 1].prev)
			open++;
	for (uint64_t k = 0; k < open; k++)
		import_fix(im, NULL, TRACE_DROP_BEGIN_WITHOUT_END);
	free(im->begins);
	im->begins = NULL;
	im->nbegins = im->begins_cap = im->free_begin = 0;
	hmap_free(&im->begin_top);
}

int import_event(struct import *im, const struct jevent *e, const char *arena, size_t arena_len)
{
	char ph = e->ph.set && e->ph.len == 1 ? arena[e->ph.off] : 0;

	switch (ph) {
	case 'X':
		return import_range(im, e, arena, 0);
	case 'B':
		return import_begin(im, e, arena, arena_len);
	case 'E':
		return import_end(im, e, arena);
	case 'i':
	case 'I':
	case 'R':
		return import_range(im, e, arena, 1);
	case 'M':
		import_metadata(im, e, arena);
		return 0;
	case 'C':
		return import_counter(im, e, arena);
	case 's':
	case 't':
	case 'f':
		/* flows (ac2g, Paddle's "launch"): correlation ids tie the same */
		im->st.ignored++;
		return 0;
	default:
		if (!(e->have & JE_MEMBERS)) {
			im->st.ignored++; /* Paddle's closing {} */
			return 0;
		}
		/* async and object events, a "ph" missing or of no kind known */
		import_fix(im, NULL, TRACE_DROP_UNKNOWN_PHASE);
		return 0;
	}
}
