/*
 * view_memory.c - the Memory Summary, as the PyTorch profiler's memory view:
 * the allocations and frees (Memory events) of each device and of the host,
 * one part each, by operator.
 *
 * A part's title gives the device's peak in use: the most bytes in use at
 * one time in the window. Bytes in use follow the events from the start of
 * the trace: the level an event reports (after it) where it reports one,
 * else the level before plus what it allocated or minus what it freed; a
 * level counts where the window saw it held (so the level a step starts
 * with counts, whatever happened before it).
 *
 * Rows: every operator (range of type Operator) inside which memory was
 * allocated or freed in the window, on the same thread; "(no operator)" for
 * what happened outside every operator. Allocated / Freed / Increase /
 * Allocations count everything inside the operator's calls, nested
 * operators' included (an operator inside itself counts once); the Self
 * columns only what happened directly in it, under no inner operator.
 * Increase = Allocated - Freed, so it can be negative. Calls: the operator's
 * calls in the window.
 *
 * Peak Increase: the most the device's bytes in use rose, during one call of
 * the operator, above their level when the call began: what the call needed
 * at once, inner operators included (an operator inside itself: its
 * outermost call). It follows the allocations and frees of the operator's
 * own thread, in the window: the level at the call's start is the one before
 * its first event on the device. Allocations on GPU streams (below) give it
 * nothing, having no call of their own to rise in.
 *
 * Allocations recorded on GPU streams (Memory instants on a stream track,
 * as imports of the PyTorch profiler's traces hold them) count too: in the
 * device's level in time order with the host threads' (a host thread's first
 * at one time), and in the rows of the operators around the host event gpu.h
 * ties them to (through their correlation id, or their external id); with
 * none, as "(no operator)".
 */
#include "lib/analysis/store/hostwalk.h"
#include "lib/analysis/views/view.h"
#include "lib/analysis/views/view_memory.h"
#include "lib/analysis/views/rowtree.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	YC_NAME,
	YC_CALLS,
	YC_ALLOC,
	YC_FREED,
	YC_INCREASE,
	YC_COUNT,
	YC_PEAK_INCREASE,
	YC_SELF_ALLOC,
	YC_SELF_FREED,
	YC_SELF_INCREASE,
	YC_SELF_COUNT,
};

#define TOTAL_GROUP "Allocated / Freed / Increase / Allocations"
#define SELF_GROUP "Self Allocated / Freed / Increase / Allocations"

/* Within a width (table.h): the counts go first, then the increases, then
 * the Self bytes; Allocated, Freed and Peak Increase stay. */
static const struct tcol mem_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 30, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	{"Allocated", "allocated", TCOL_BYTES, TOTAL_GROUP, 0, NULL, 0, "Alloc", 0, 0},
	{"Freed", "freed", TCOL_BYTES, TOTAL_GROUP, 0, NULL, 0, "Freed", 0, 0},
	{"Increase", "increase", TCOL_BYTES, TOTAL_GROUP, 0, NULL, 0, "Increase", 2, 0},
	{"Allocations", "allocations", TCOL_COUNT, TOTAL_GROUP, 0, NULL, 0, "Allocs", 3, 0},
	{"Peak Increase", "peak_increase", TCOL_BYTES, NULL, 0, NULL, 0, "Peak Incr", 0, 0},
	{"Self Allocated", "self_allocated", TCOL_BYTES, SELF_GROUP, 0, NULL, 0, "Self Alloc", 1, 0},
	{"Self Freed", "self_freed", TCOL_BYTES, SELF_GROUP, 0, NULL, 0, "Self Freed", 1, 0},
	{"Self Increase", "self_increase", TCOL_BYTES, SELF_GROUP, 0, NULL, 0, "Self Incr", 2, 0},
	{"Self Allocations", "self_allocations", TCOL_COUNT, SELF_GROUP, 0, NULL, 0, "Self Allocs", 3, 0},
};

struct mem_sums {
	int64_t allocated, freed;
	uint64_t allocations;
};

struct mem_row {
	struct mem_sums total, self;
	uint64_t stamp;
	int64_t peak_increase; /* the most over its calls */
	uint64_t call;         /* the frame of the call being followed (hw_frame.stamp) */
	int64_t call_base, call_max; /* that call's level at its start, and its highest */
};

/* One device (or the host): its rows by operator name. */
struct mem_dev {
	uint32_t host; /* hostname in the store's names */
	int32_t device; /* -1: host memory */
	struct rt_tree tr;
	struct mem_row *rows; /* by node */
	uint32_t nrows;
	struct mem_sums sums;
	int64_t level, peak; /* bytes in use after the last event, and the most in the window */
	uint64_t prev;       /* the last event's time */
	uint64_t events_in;  /* events in the window */
	/* the level after every event, when the walk keeps them (series) */
	struct view_memory_level *lv;
	size_t nlv, caplv;
};

/* A Memory instant on a GPU stream, for merging into the walk's time order. */
struct mem_stream_ev {
	uint64_t ts;
	uint32_t track, index;
};

struct mem_view {
	const struct analysis *a;
	struct mem_stream_ev *sev; /* sorted by time */
	size_t nsev, next_sev;
	struct names names;  /* row names */
	uint32_t *local;     /* store name id -> local id + 1 */
	struct rt_tree calls; /* operator calls in the window, by local name */
	struct mem_dev *devs;
	uint32_t ndevs;
	uint32_t no_op;      /* the local name "(no operator)" */
	uint64_t serial;
	uint64_t frames;     /* frames opened: their stamps */
	int series;          /* keep each device's levels (view_memory_pools()) */
};

static uint32_t local_name(struct mem_view *m, uint32_t store_name_id)
{
	uint32_t *slot = &m->local[store_name_id];
	if (!*slot) {
		const char *s = store_name(&m->a->store, store_name_id);
		*slot = names_intern(&m->names, s, strlen(s)) + 1;
	}
	return *slot - 1;
}

static struct mem_dev *mem_dev_of(struct mem_view *m, uint32_t host, int32_t device)
{
	for (uint32_t i = 0; i < m->ndevs; i++)
		if (m->devs[i].host == host && m->devs[i].device == device)
			return &m->devs[i];
	m->devs = xrealloc(m->devs, (m->ndevs + 1) * sizeof(*m->devs));
	struct mem_dev *d = &m->devs[m->ndevs++];
	memset(d, 0, sizeof(*d));
	d->host = host;
	d->device = device < 0 ? -1 : device;
	rt_init(&d->tr, m->a);
	d->tr.names = &m->names;
	return d;
}

static struct mem_row *mem_row_of(struct mem_dev *d, uint32_t name)
{
	uint32_t id = rt_child(&d->tr, RT_ROOT, name, RT_RANGE);
	if (id >= d->nrows) {
		uint32_t n = d->tr.cap;
		d->rows = xrealloc(d->rows, n * sizeof(*d->rows));
		memset(d->rows + d->nrows, 0, (n - d->nrows) * sizeof(*d->rows));
		d->nrows = n;
	}
	d->tr.nodes[id].instants++; /* visible */
	return &d->rows[id];
}

static void sums_add(struct mem_sums *s, int64_t bytes)
{
	if (bytes > 0) {
		s->allocated += bytes;
		s->allocations++;
	} else {
		s->freed -= bytes;
	}
}

/* The level went from before to after inside call (a frame's stamp) of r's
 * operator: a new call starts at before. */
static void peak_follow(struct mem_row *r, uint64_t call, int64_t before, int64_t after)
{
	if (r->call != call) {
		r->call = call;
		r->call_base = r->call_max = before;
	}
	if (after > r->call_max)
		r->call_max = after;
	if (r->call_max - r->call_base > r->peak_increase)
		r->peak_increase = r->call_max - r->call_base;
}

static uint32_t file_host(const struct mem_view *m, uint32_t track)
{
	const struct store *s = &m->a->store;
	return s->files[s->tracks[track].file].host;
}

static int mem_open(void *ctx, struct hw_frame *f, const struct hw_stack *st)
{
	(void)st;
	struct mem_view *m = ctx;
	const struct store *s = &m->a->store;
	const struct store_track *t = &s->tracks[f->track];
	if (store_ev_type(s, t, f->event) != TRACE_EV_OPERATOR)
		return 0;
	f->node = local_name(m, s->descs[store_ev_desc(t, f->event)].name);
	f->stamp = ++m->frames;
	if (f->in_window) {
		uint32_t id = rt_child(&m->calls, RT_ROOT, f->node, RT_RANGE);
		m->calls.nodes[id].cpu.calls++;
	}
	return 1;
}

/* The bytes in use, event by event in time order (the walk's), from the
 * start of the trace; a level counts where the window saw it held. */
static void mem_level(const struct mem_view *m, struct mem_dev *d, uint64_t ts,
		      const struct store_ext *x, int in_window)
{
	if (d->level > d->peak && ivl_set_overlap(&m->a->window, d->prev, ts) > 0)
		d->peak = d->level; /* held since the event before */
	d->level = x->u.memory.in_use ? (int64_t)x->u.memory.in_use : d->level + x->u.memory.bytes;
	if (in_window && d->level > d->peak)
		d->peak = d->level;
	d->prev = ts;
	if (!m->series)
		return;
	if (d->nlv == d->caplv) {
		d->caplv = d->caplv ? d->caplv * 2 : 256;
		d->lv = xrealloc(d->lv, d->caplv * sizeof(*d->lv));
	}
	d->lv[d->nlv++] = (struct view_memory_level){ts, d->level};
}

/* ---- allocations on GPU streams -------------------------------------------------- */

static int sev_cmp(const void *x, const void *y)
{
	const struct mem_stream_ev *a = x, *b = y;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

static void mem_collect_streams(struct mem_view *m)
{
	const struct store *s = &m->a->store;
	if (!m->a->gpu.stream_memory)
		return;
	m->sev = xmalloc(m->a->gpu.stream_memory * sizeof(*m->sev));
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE)
			continue;
		for (size_t i = 0; i < t->n && m->nsev < m->a->gpu.stream_memory; i++)
			if (store_ev_type(s, t, i) == TRACE_EV_MEMORY)
				m->sev[m->nsev++] = (struct mem_stream_ev){t->start[i], ti, (uint32_t)i};
	}
	qsort(m->sev, m->nsev, sizeof(*m->sev), sev_cmp);
}

/* The host event a stream's instant is tied to (gpu.h), or NULL. */
static const struct gpu_anchor *mem_anchor(const struct analysis *a, uint32_t ti, uint32_t i)
{
	const struct gpu_track *g = &a->gpu.tracks[ti];
	size_t lo = 0, hi = g->nanchors;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->anchors[mid].index < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->nanchors && g->anchors[lo].index == i ? &g->anchors[lo] : NULL;
}

static void mem_stream_event(struct mem_view *m, const struct mem_stream_ev *e)
{
	const struct analysis *a = m->a;
	const struct store *s = &a->store;
	const struct store_track *t = &s->tracks[e->track];
	const struct store_ext *x = store_ev_ext(t, e->index);
	if (!x || (!x->u.memory.bytes && !x->u.memory.in_use))
		return;
	uint64_t clipped;
	int in_window = analysis_clip(a, t, e->index, &clipped);
	struct mem_dev *d = mem_dev_of(m, file_host(m, e->track), x->u.memory.device);
	mem_level(m, d, e->ts, x, in_window);
	int64_t bytes = x->u.memory.bytes;
	if (!in_window || !bytes)
		return;
	d->events_in++;
	sums_add(&d->sums, bytes);
	/* the operators around the host event it is tied to, innermost first */
	const struct gpu_anchor *an = mem_anchor(a, e->track, e->index);
	int any = 0;
	m->serial++;
	if (an) {
		const struct store_track *h = &s->tracks[an->track];
		for (uint32_t p = an->ev; p != STORE_NONE; p = h->parent[p]) {
			if (store_ev_type(s, h, p) != TRACE_EV_OPERATOR)
				continue;
			struct mem_row *r =
				mem_row_of(d, local_name(m, s->descs[store_ev_desc(h, p)].name));
			if (!any)
				sums_add(&r->self, bytes);
			any = 1;
			if (r->stamp != m->serial) {
				r->stamp = m->serial;
				sums_add(&r->total, bytes);
			}
		}
	}
	if (!any) {
		sums_add(&mem_row_of(d, m->no_op)->self, bytes);
		sums_add(&mem_row_of(d, m->no_op)->total, bytes);
	}
}

/* The streams' instants before ts (all of them: UINT64_MAX), in time order. */
static void mem_streams_until(struct mem_view *m, uint64_t ts)
{
	while (m->next_sev < m->nsev && m->sev[m->next_sev].ts < ts)
		mem_stream_event(m, &m->sev[m->next_sev++]);
	if (ts == UINT64_MAX)
		while (m->next_sev < m->nsev)
			mem_stream_event(m, &m->sev[m->next_sev++]);
}

static void mem_instant(void *ctx, const struct hw_stack *st, uint32_t ti, uint32_t i,
			const struct store_extra *xr, int in_window)
{
	struct mem_view *m = ctx;
	const struct store *s = &m->a->store;
	const struct store_track *t = &s->tracks[ti];
	if (store_ev_type(s, t, i) != TRACE_EV_MEMORY)
		return;
	mem_streams_until(m, t->start[i]);
	const struct store_ext *x = store_extra_ext(t, xr);
	if (!x || (!x->u.memory.bytes && !x->u.memory.in_use))
		return;
	struct mem_dev *d = mem_dev_of(m, file_host(m, ti), x->u.memory.device);
	int64_t before = d->level;
	mem_level(m, d, t->start[i], x, in_window);
	int64_t bytes = x->u.memory.bytes;
	if (!in_window || !bytes)
		return;
	d->events_in++;
	sums_add(&d->sums, bytes);
	sums_add(&mem_row_of(d, st->n ? st->v[st->n - 1].node : m->no_op)->self, bytes);
	if (!st->n) {
		sums_add(&mem_row_of(d, m->no_op)->total, bytes);
		return;
	}
	m->serial++;
	for (size_t k = 0; k < st->n; k++) { /* outermost first */
		struct mem_row *r = mem_row_of(d, st->v[k].node);
		if (r->stamp != m->serial) {
			r->stamp = m->serial;
			sums_add(&r->total, bytes);
			peak_follow(r, st->v[k].stamp, before, d->level);
		}
	}
}

/* ---- rows ------------------------------------------------------------------------ */

static int dev_cmp(const void *x, const void *y)
{
	const struct mem_dev *a = x, *b = y;
	if ((a->device < 0) != (b->device < 0))
		return a->device < 0 ? 1 : -1; /* the host last */
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return (a->host > b->host) - (a->host < b->host);
}

struct row_item {
	const struct mem_dev *d;
	const struct names *names;
	uint32_t id;
};

static int row_cmp(const void *x, const void *y)
{
	const struct row_item *a = x, *b = y;
	const struct mem_row *ra = &a->d->rows[a->id], *rb = &b->d->rows[b->id];
	if (ra->total.allocated != rb->total.allocated)
		return ra->total.allocated > rb->total.allocated ? -1 : 1;
	if (ra->total.freed != rb->total.freed)
		return ra->total.freed > rb->total.freed ? -1 : 1;
	return strcmp(names_get(a->names, a->d->tr.nodes[a->id].name),
		      names_get(b->names, b->d->tr.nodes[b->id].name));
}

static void put_sums(struct trow *r, unsigned col, const struct mem_sums *s)
{
	trow_bytes(r, col, s->allocated);
	trow_bytes(r, col + 1, s->freed);
	trow_bytes(r, col + 2, s->allocated - s->freed);
	trow_count(r, col + 3, s->allocations);
}

/* "Host", "GPU0"; "GPU0 (host)" when the traces come from several hosts. */
static void mem_label(char *label, size_t size, const struct mem_view *m, const struct mem_dev *d,
		      int several_hosts)
{
	const char *host = store_name(&m->a->store, d->host);
	if (d->device < 0)
		snprintf(label, size, several_hosts ? "Host (%s)" : "Host", host);
	else if (several_hosts)
		snprintf(label, size, "GPU%d (%s)", d->device, host);
	else
		snprintf(label, size, "GPU%d", d->device);
}

static int mem_several_hosts(const struct mem_view *m)
{
	int several_hosts = 0;
	for (uint32_t k = 1; k < m->ndevs; k++)
		several_hosts |= m->devs[k].host != m->devs[0].host;
	return several_hosts;
}

static void mem_part(struct table *t, struct mem_view *m, struct mem_dev *d, int several_hosts)
{
	char label[300], title[600], peak[32], alloc[32], freed[32];
	mem_label(label, sizeof(label), m, d, several_hosts);
	snprintf(title, sizeof(title), "%s: peak %s in use, %s allocated, %s freed", label,
		 table_bytes_text(peak, sizeof(peak), d->peak),
		 table_bytes_text(alloc, sizeof(alloc), d->sums.allocated),
		 table_bytes_text(freed, sizeof(freed), d->sums.freed));
	struct tpart *p = table_add_part(t, title, label, NULL);
	tpart_fact(p, "peak_in_use_bytes", d->peak);
	tpart_fact(p, "allocated_bytes", d->sums.allocated);
	tpart_fact(p, "freed_bytes", d->sums.freed);
	struct row_item *items = xmalloc((d->tr.n ? d->tr.n : 1) * sizeof(*items));
	uint32_t n = 0;
	for (uint32_t id = 1; id < d->tr.n; id++)
		items[n++] = (struct row_item){d, &m->names, id};
	qsort(items, n, sizeof(*items), row_cmp);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t id = items[k].id, name = d->tr.nodes[id].name;
		struct trow *r = tpart_add_row(t, p, 0);
		trow_text(r, YC_NAME, names_get(&m->names, name));
		if (name != m->no_op) {
			uint32_t op = rt_child(&m->calls, RT_ROOT, name, RT_RANGE);
			trow_count(r, YC_CALLS, m->calls.nodes[op].cpu.calls);
		}
		put_sums(r, YC_ALLOC, &d->rows[id].total);
		put_sums(r, YC_SELF_ALLOC, &d->rows[id].self);
		if (name != m->no_op)
			trow_bytes(r, YC_PEAK_INCREASE, d->rows[id].peak_increase);
	}
	free(items);
}

static void mem_notes(struct table *t, const struct analysis *a)
{
	table_note(t, "Peak: the most bytes in use at one time in the window (%s), as the "
		      "allocations and frees recorded since the start of the trace tell.",
		   analysis_window_name(a));
	table_note(t, "Allocated / Freed / Increase / Allocations: inside the operator's calls, "
		      "inner operators included; Self: directly in it. Increase = Allocated - Freed.");
	table_note(t, "Peak Increase: the most bytes in use rose above their level at the start of "
		      "one of the operator's calls, during that call.");
}

static void mem_free(struct mem_view *m)
{
	for (uint32_t k = 0; k < m->ndevs; k++) {
		rt_free(&m->devs[k].tr);
		free(m->devs[k].rows);
		free(m->devs[k].lv);
	}
	free(m->devs);
	rt_free(&m->calls);
	free(m->sev);
	free(m->local);
	names_free(&m->names);
	free(m);
}

static const struct hw_visitor mem_visitor = {
	.open = mem_open,
	.instant = mem_instant,
	.types = 1u << TRACE_EV_OPERATOR | 1u << TRACE_EV_MEMORY,
	.skip_gpu = 1,
};

/* Before the walk. */
static struct mem_view *mem_begin(const struct analysis *a, int series)
{
	struct mem_view *m = xcalloc(1, sizeof(*m));
	m->a = a;
	m->series = series;
	names_init(&m->names);
	names_intern(&m->names, "", 0);
	m->no_op = names_intern(&m->names, "(no operator)", 13);
	m->local = xcalloc(a->store.names.count ? a->store.names.count : 1, sizeof(*m->local));
	rt_init(&m->calls, a);
	mem_collect_streams(m);
	return m;
}

/* After the walk: every device's rows and levels. */
static void mem_end(struct mem_view *m)
{
	const struct analysis *a = m->a;
	mem_streams_until(m, UINT64_MAX);
	for (uint32_t k = 0; k < m->ndevs; k++) { /* the level held after the last event */
		struct mem_dev *d = &m->devs[k];
		if (d->level > d->peak && ivl_set_overlap(&a->window, d->prev, UINT64_MAX) > 0)
			d->peak = d->level;
	}
	if (m->ndevs > 1)
		qsort(m->devs, m->ndevs, sizeof(*m->devs), dev_cmp);
}

/* The walk: every device's rows and levels. */
static struct mem_view *mem_build(const struct analysis *a, int series)
{
	struct mem_view *m = mem_begin(a, series);
	hostwalk_run(a, NULL, 0, &mem_visitor, m);
	mem_end(m);
	return m;
}

void *view_memory_walk(const struct view *v, const struct analysis *a, const struct view_opts *o,
		       struct hw_request *req)
{
	(void)v;
	(void)o;
	struct mem_view *m = mem_begin(a, 0);
	*req = (struct hw_request){&mem_visitor, m, NULL, 0};
	return m;
}

struct table *view_memory(const struct view *v, const struct analysis *a,
			  const struct view_opts *o)
{
	return view_build_walked(v, a, o);
}

struct table *view_memory_end(const struct view *v, const struct analysis *a,
			      const struct view_opts *o, void *state)
{
	(void)o;
	struct table *t = table_new(v->name, v->title, mem_cols,
				    sizeof(mem_cols) / sizeof(mem_cols[0]));
	struct mem_view *m = state;
	mem_end(m);
	int several_hosts = mem_several_hosts(m);
	for (uint32_t k = 0; k < m->ndevs; k++)
		if (m->devs[k].events_in)
			mem_part(t, m, &m->devs[k], several_hosts);
	table_set_empty(t, "No data: this trace has no memory allocation events in the window.");
	if (table_row_count(t))
		mem_notes(t, a);
	mem_free(m);
	return t;
}

/* ---- for the Operator view (view_memory.h) ------------------------------------------ */

struct view_memory_ops {
	struct mem_view *m;
	struct view_memory_op *by_name; /* by local name id */
	uint32_t n;
	int any; /* some device had events in the window */
};

struct view_memory_ops *view_memory_ops_new(const struct analysis *a)
{
	struct view_memory_ops *o = xcalloc(1, sizeof(*o));
	o->m = mem_build(a, 0);
	o->n = o->m->names.count;
	o->by_name = xcalloc(o->n ? o->n : 1, sizeof(*o->by_name));
	for (uint32_t k = 0; k < o->m->ndevs; k++) {
		const struct mem_dev *d = &o->m->devs[k];
		o->any |= d->events_in != 0;
		for (uint32_t id = 1; id < d->tr.n && id < d->nrows; id++) {
			uint32_t name = d->tr.nodes[id].name;
			if (name >= o->n)
				continue;
			struct view_memory_op *x = &o->by_name[name];
			const struct mem_row *r = &d->rows[id];
			x->allocated += r->total.allocated;
			x->freed += r->total.freed;
			x->allocations += r->total.allocations;
			x->self_allocated += r->self.allocated;
			x->self_freed += r->self.freed;
			x->self_allocations += r->self.allocations;
			if (r->peak_increase > x->peak_increase)
				x->peak_increase = r->peak_increase;
		}
	}
	return o;
}

int view_memory_ops_any(const struct view_memory_ops *o)
{
	return o && o->any;
}

const struct view_memory_op *view_memory_op(struct view_memory_ops *o, const char *name)
{
	static const struct view_memory_op none;
	if (!o || !name)
		return &none;
	uint32_t id = names_intern(&o->m->names, name, strlen(name));
	return id < o->n ? &o->by_name[id] : &none;
}

void view_memory_ops_free(struct view_memory_ops *o)
{
	if (!o)
		return;
	mem_free(o->m);
	free(o->by_name);
	free(o);
}

/* ---- for the Timeline view (view_memory.h) ------------------------------------------ */

void view_memory_pools(const struct analysis *a, struct view_memory_pools *p)
{
	struct mem_view *m = mem_build(a, 1);
	int several_hosts = mem_several_hosts(m);
	p->m = m;
	p->n = m->ndevs;
	p->v = xcalloc(m->ndevs ? m->ndevs : 1, sizeof(*p->v));
	for (uint32_t k = 0; k < m->ndevs; k++) {
		const struct mem_dev *d = &m->devs[k];
		mem_label(p->v[k].label, sizeof(p->v[k].label), m, d, several_hosts);
		p->v[k].device = d->device;
		p->v[k].host = d->host;
		p->v[k].peak = d->peak;
		p->v[k].shown = d->events_in != 0;
		p->v[k].levels = d->lv;
		p->v[k].n = d->nlv;
	}
}

void view_memory_pools_free(struct view_memory_pools *p)
{
	if (p->m)
		mem_free(p->m);
	free(p->v);
	memset(p, 0, sizeof(*p));
}
