/*
 * view_memcpy.c - the Memory Manipulation Summary: the host calls that
 * copied or set memory, and the GPU time of the copies and sets they made.
 *
 * Three kinds of rows, each with Calls, CPU Total/Avg/Max/Min/Ratio and GPU
 * Total/Avg/Max/Min/Ratio:
 *  - a CUDA API call that launched copies or sets, by its name and what it
 *    did: "cudaMemcpyAsync HtoD (Pinned -> Device, async)", "cudaMemsetAsync
 *    Memset (Device, async)": the direction (HtoD, DtoH, DtoD, ...), the
 *    memory at each end (pageable, pinned, device, ...), sync or async (as
 *    the copy says, or a call named "...Async...");
 *  - a framework's own copy range (a host range of type Memcpy or Memset,
 *    Paddle's "GpuMemcpySync:GPU->CPU"), by name, with the GPU work
 *    launched inside it;
 *  - copies and sets no call is known for: "(no API call) HtoD (...)",
 *    GPU time only.
 * CPU Ratio = the union of the row's calls / the window; GPU Ratio = the
 * row's GPU Total / all counted GPU work.
 */
#include "lib/analysis/store/hostwalk.h"
#include "lib/analysis/views/view.h"
#include "lib/analysis/views/rowtree.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { XC_NAME, XC_CALLS, XC_CPU, XC_GPU = XC_CPU + 5 };

static const struct tcol memcpy_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 35, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	VIEW_CPU_COLUMNS,
	VIEW_GPU_COLUMNS,
};

/* A row made here, by what names it: a small cache before the string. */
struct mm_key {
	uint32_t api; /* store desc of the call, or STORE_NONE */
	uint8_t type, copy_kind, src, dst, is_async, known;
	uint32_t node;
};

struct mm {
	struct rt_tree tr;
	struct names names; /* row names: the framework's and the ones made here */
	struct mm_key *keys;
	size_t nkeys;
	/* the call whose copies are being added up */
	uint32_t track, call, node;
	uint64_t gpu;
	int pending;
};

static int is_copy_type(unsigned type)
{
	return type == TRACE_EV_MEMCPY || type == TRACE_EV_MEMSET;
}

/* "HtoD (Pinned -> Device, async)", "Memset (Device, sync)". */
static void copy_what(char *buf, size_t size, unsigned type, const struct mm_key *k)
{
	const char *kind = type == TRACE_EV_MEMSET ? "Memset" : "Memcpy";
	const char *src = "", *dst = "", *sync = "";
	if (k->known) {
		if (type == TRACE_EV_MEMCPY && *gpu_copy_kind_name(k->copy_kind))
			kind = gpu_copy_kind_name(k->copy_kind);
		src = type == TRACE_EV_MEMCPY ? gpu_memory_kind_name(k->src) : "";
		dst = gpu_memory_kind_name(k->dst);
		sync = k->is_async ? "async" : "sync";
	}
	char ends[96] = "";
	if (*src && *dst)
		snprintf(ends, sizeof(ends), "%s -> %s, ", src, dst);
	else if (*dst)
		snprintf(ends, sizeof(ends), "%s, ", dst);
	if (*sync || *ends)
		snprintf(buf, size, "%s (%s%s)", kind, ends, *sync ? sync : "sync unknown");
	else
		snprintf(buf, size, "%s", kind);
}

static uint32_t mm_row(struct mm *m, uint32_t api, unsigned type, const struct store_ext *x)
{
	const struct store *s = &m->tr.a->store;
	struct mm_key k = {api, (uint8_t)type, 0, 0, 0, 0, x != NULL, 0};
	if (x) {
		k.copy_kind = x->u.copy.copy_kind;
		k.src = x->u.copy.src_kind;
		k.dst = x->u.copy.dst_kind;
		/* a trace that does not say (an import) still names the call */
		k.is_async = x->u.copy.is_async ||
			     (api != STORE_NONE && strstr(store_name(s, s->descs[api].name), "Async"));
	}
	for (size_t i = 0; i < m->nkeys; i++) {
		const struct mm_key *o = &m->keys[i];
		if (o->api == k.api && o->type == k.type && o->copy_kind == k.copy_kind &&
		    o->src == k.src && o->dst == k.dst && o->is_async == k.is_async &&
		    o->known == k.known)
			return o->node;
	}
	char what[160], name[1200];
	copy_what(what, sizeof(what), type, &k);
	snprintf(name, sizeof(name), "%s %s",
		 api == STORE_NONE ? "(no API call)" : store_name(s, s->descs[api].name), what);
	k.node = rt_child(&m->tr, RT_ROOT, names_intern(&m->names, name, strlen(name)), RT_RANGE);
	m->keys = xrealloc(m->keys, (m->nkeys + 1) * sizeof(*m->keys));
	m->keys[m->nkeys++] = k;
	return k.node;
}

static void mm_flush(struct mm *m)
{
	if (!m->pending)
		return;
	m->pending = 0;
	const struct analysis *a = m->tr.a;
	const struct store_track *t = &a->store.tracks[m->track];
	struct rt_node *d = &m->tr.nodes[m->node];
	uint64_t clipped;
	analysis_clip(a, t, m->call, &clipped);
	time_stats_add(&d->cpu, clipped);
	time_stats_add(&d->gpu, m->gpu);
	ivl_union_add(&d->open, t->start[m->call], store_ev_end(t, m->call));
}

static void mm_gpu(void *ctx, const struct hw_stack *st, uint32_t track, uint32_t call,
		   uint32_t gtrack, uint32_t gi)
{
	(void)st;
	struct mm *m = ctx;
	const struct store *s = &m->tr.a->store;
	const struct store_track *gt = &s->tracks[gtrack], *t = &s->tracks[track];
	unsigned type = store_ev_type(s, gt, gi);
	if (!is_copy_type(type))
		return;
	uint32_t node = mm_row(m, store_ev_desc(t, call), type, store_ev_ext(gt, gi));
	if (!m->pending || m->track != track || m->call != call || m->node != node) {
		mm_flush(m);
		m->pending = 1;
		m->track = track;
		m->call = call;
		m->node = node;
		m->gpu = 0;
	}
	m->gpu += gt->dur[gi];
}

static int mm_open(void *ctx, struct hw_frame *f, const struct hw_stack *st)
{
	(void)st;
	struct mm *m = ctx;
	const struct store *s = &m->tr.a->store;
	const struct store_track *t = &s->tracks[f->track];
	if (!is_copy_type(store_ev_type(s, t, f->event)))
		return 0;
	const char *name = store_name(s, s->descs[store_ev_desc(t, f->event)].name);
	f->node = rt_child(&m->tr, RT_ROOT, names_intern(&m->names, name, strlen(name)), RT_RANGE);
	if (f->in_window)
		ivl_union_add(&m->tr.nodes[f->node].open, t->start[f->event],
			      store_ev_end(t, f->event));
	return 1;
}

static void mm_close(void *ctx, const struct hw_frame *f, const struct hw_stack *st)
{
	(void)st;
	struct mm *m = ctx;
	if (!f->in_window)
		return;
	time_stats_add(&m->tr.nodes[f->node].cpu, f->cpu);
	time_stats_add(&m->tr.nodes[f->node].gpu, f->gpu);
}

/* Copies and sets that no known call launched. */
static void mm_unlinked(struct mm *m)
{
	struct analysis_gpu_walk w;
	for (analysis_gpu_walk_init(&w, m->tr.a); analysis_gpu_next(&w);) {
		if (!is_copy_type(w.type) || (w.flags & GPU_LINKED))
			continue;
		const struct store_ext *x = store_extra_ext(w.t, store_extra_next(w.t, &w.xc, w.i));
		uint32_t node = mm_row(m, STORE_NONE, w.type, x);
		time_stats_add(&m->tr.nodes[node].gpu, w.t->dur[w.i]);
	}
}

struct mm_rows {
	struct table *t;
	struct tpart *p;
};

static void mm_emit(void *ctx, const struct rt_tree *tr, uint32_t id, unsigned depth)
{
	struct mm_rows *c = ctx;
	const struct rt_node *d = &tr->nodes[id];
	struct trow *r = tpart_add_row(c->t, c->p, depth);
	trow_text(r, XC_NAME, rt_name(tr, id));
	trow_count(r, XC_CALLS, d->cpu.calls > d->gpu.calls ? d->cpu.calls : d->gpu.calls);
	view_put_stats(r, XC_CPU, &d->cpu, analysis_ratio(tr->a, ivl_union_measure(&d->open)));
	view_put_stats(r, XC_GPU, &d->gpu, view_gpu_ratio(tr->a, d->gpu.total));
}

static void mm_part(struct table *t, const struct analysis *a, const struct view_opts *o,
		    const struct store_track *track, const uint32_t *tracks, uint32_t ntracks)
{
	static const struct hw_visitor visitor = {
		.open = mm_open,
		.close = mm_close,
		.gpu = mm_gpu,
		.by_call = 1,
		.types = 1u << TRACE_EV_MEMCPY | 1u << TRACE_EV_MEMSET,
	};
	struct mm *m = xcalloc(1, sizeof(*m));
	rt_init(&m->tr, a);
	names_init(&m->names);
	names_intern(&m->names, "", 0);
	m->tr.names = &m->names;
	hostwalk_run(a, tracks, ntracks, &visitor, m);
	mm_flush(m);
	if (!track)
		mm_unlinked(m);
	rt_link(&m->tr, o->sort);
	if (m->tr.nodes[RT_ROOT].nchildren) {
		struct mm_rows c = {t, view_thread_part(t, a, track)};
		rt_walk(&m->tr, mm_emit, &c);
	}
	rt_free(&m->tr);
	names_free(&m->names);
	free(m->keys);
	free(m);
}

struct table *view_memcpy(const struct view *v, const struct analysis *a,
			  const struct view_opts *o)
{
	struct table *t = table_new(v->name, v->title, memcpy_cols,
				    sizeof(memcpy_cols) / sizeof(memcpy_cols[0]));
	if (o->thread_sep) {
		for (uint32_t i = 0; i < a->store.ntracks; i++)
			if (a->store.tracks[i].kind == STORE_TRACK_HOST)
				mm_part(t, a, o, &a->store.tracks[i], &i, 1);
	} else {
		mm_part(t, a, o, NULL, NULL, 0);
	}
	table_set_empty(t, "No memory copies or sets in the window.");
	if (!table_row_count(t))
		return t;
	table_note(t, "A CUDA call's row names what it did: direction, the memory at each end, sync "
		      "or async. A framework's copy range (type Memcpy or Memset) keeps its name.");
	table_note(t, "CPU: the calls clipped to the window (%s); CPU Ratio(%%) = the time at least "
		      "one was running / the window.",
		   analysis_window_name(a));
	table_note(t, "GPU: the copies and sets each call made; GPU Ratio(%%) = GPU Total / all GPU "
		      "work launched in the window. \"(no API call)\": work no call is known for.");
	return t;
}
