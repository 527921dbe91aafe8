/*
 * view_userdefined.c - the UserDefined Summary: plain NVTX ranges (those
 * outside the gprof-dl domain) by name, as a tree: a row's children are the
 * UserDefined ranges that ran inside it on the same thread, so one name can
 * appear under several parents. All threads merged by default; one part per
 * thread with --thread-sep.
 *
 * A row aggregates by name path: Calls and the CPU Total/Avg/Max/Min of its
 * ranges clipped to the window, and CPU Ratio(%) = the time during which at
 * least one of them was open (their union across threads) / the window,
 * which never exceeds 100% where a sum over threads could. GPU Total/Avg/
 * Max/Min are over the same calls: the counted GPU work each launched,
 * children included; GPU Ratio(%) = GPU Total / all counted GPU work (a
 * row's ranges never nest in one another, so nothing counts twice). Marks
 * are rows of their own, at the place they were made, with calls and no time.
 */
#include "formats/trace/capture.h"
#include "lib/analysis/store/hostwalk.h"
#include "lib/analysis/views/view.h"
#include "lib/analysis/views/rowtree.h"

#include "common/error.h"

#include <stdlib.h>

enum { UC_NAME, UC_CALLS, UC_CPU, UC_GPU = UC_CPU + 5 };

static const struct tcol ud_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 6, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	VIEW_CPU_COLUMNS,
	VIEW_GPU_COLUMNS,
};

static int ud_open(void *ctx, struct hw_frame *f, const struct hw_stack *st)
{
	struct rt_tree *tr = ctx;
	const struct store *s = &tr->a->store;
	const struct store_track *t = &s->tracks[f->track];
	if (store_ev_type(s, t, f->event) != TRACE_EV_USER_DEFINED)
		return 0;
	uint32_t parent = st->n ? st->v[st->n - 1].node : RT_ROOT;
	f->node = rt_child(tr, parent, s->descs[store_ev_desc(t, f->event)].name, RT_RANGE);
	if (f->in_window)
		ivl_union_add(&tr->nodes[f->node].open, t->start[f->event],
			      store_ev_end(t, f->event));
	return 1;
}

static void ud_close(void *ctx, const struct hw_frame *f, const struct hw_stack *st)
{
	(void)st;
	struct rt_tree *tr = ctx;
	if (!f->in_window)
		return;
	time_stats_add(&tr->nodes[f->node].cpu, f->cpu);
	time_stats_add(&tr->nodes[f->node].gpu, f->gpu);
}

static void ud_instant(void *ctx, const struct hw_stack *st, uint32_t ti, uint32_t i,
		       const struct store_extra *x, int in_window)
{
	(void)x;
	if (!in_window)
		return;
	struct rt_tree *tr = ctx;
	const struct store *s = &tr->a->store;
	const struct store_track *t = &s->tracks[ti];
	if (store_ev_type(s, t, i) != TRACE_EV_USER_DEFINED ||
	    !(store_ev_flags(t, i) & TRACE_EVF_MARK))
		return;
	uint32_t name = s->descs[store_ev_desc(t, i)].name;
	if (capture_is_mark_name(names_get(&s->names, name)))
		return; /* the recording window's, said in the Trace Summary */
	uint32_t parent = st->n ? st->v[st->n - 1].node : RT_ROOT;
	uint32_t id = rt_child(tr, parent, name, RT_MARK);
	tr->nodes[id].instants++;
}

struct ud_rows {
	struct table *t;
	struct tpart *p;
};

static void ud_row(void *ctx, const struct rt_tree *tr, uint32_t id, unsigned depth)
{
	struct ud_rows *c = ctx;
	const struct rt_node *d = &tr->nodes[id];
	struct trow *r = tpart_add_row(c->t, c->p, depth);
	trow_text(r, UC_NAME, rt_name(tr, id));
	if (d->kind == RT_MARK) {
		r->flags |= TROW_MARK;
		trow_count(r, UC_CALLS, d->instants);
		return;
	}
	trow_count(r, UC_CALLS, d->cpu.calls);
	view_put_stats(r, UC_CPU, &d->cpu, analysis_ratio(tr->a, ivl_union_measure(&d->open)));
	view_put_stats(r, UC_GPU, &d->gpu, view_gpu_ratio(tr->a, d->gpu.total));
}

static const struct hw_visitor ud_visitor = {
	.open = ud_open,
	.close = ud_close,
	.instant = ud_instant,
	.types = 1u << TRACE_EV_USER_DEFINED,
};

/* The rows of a walk done, and the walk freed. */
static void ud_part_rows(struct table *t, const struct analysis *a, const struct view_opts *o,
			 const struct store_track *track, struct rt_tree *tr)
{
	rt_link(tr, o->sort);
	if (tr->nodes[RT_ROOT].nchildren) {
		struct ud_rows c = {t, view_thread_part(t, a, track)};
		rt_walk(tr, ud_row, &c);
	}
	rt_free(tr);
	free(tr);
}

static void ud_part(struct table *t, const struct analysis *a, const struct view_opts *o,
		    const struct store_track *track, const uint32_t *tracks, uint32_t ntracks)
{
	struct rt_tree *tr = xmalloc(sizeof(*tr));
	rt_init(tr, a);
	hostwalk_run(a, tracks, ntracks, &ud_visitor, tr);
	ud_part_rows(t, a, o, track, tr);
}

void *view_userdefined_walk(const struct view *v, const struct analysis *a,
			    const struct view_opts *o, struct hw_request *req)
{
	(void)v;
	if (o->thread_sep) /* a walk per thread */
		return NULL;
	struct rt_tree *tr = xmalloc(sizeof(*tr));
	rt_init(tr, a);
	*req = (struct hw_request){&ud_visitor, tr, NULL, 0};
	return tr;
}

struct table *view_userdefined(const struct view *v, const struct analysis *a,
			       const struct view_opts *o)
{
	return view_build_walked(v, a, o);
}

struct table *view_userdefined_end(const struct view *v, const struct analysis *a,
				   const struct view_opts *o, void *state)
{
	struct table *t = table_new(v->name, v->title, ud_cols, sizeof(ud_cols) / sizeof(ud_cols[0]));
	if (o->thread_sep) {
		for (uint32_t i = 0; i < a->store.ntracks; i++)
			if (a->store.tracks[i].kind == STORE_TRACK_HOST)
				ud_part(t, a, o, &a->store.tracks[i], &i, 1);
	} else {
		ud_part_rows(t, a, o, NULL, state);
	}
	table_set_empty(t, "No UserDefined ranges in the window.");
	const char *window = analysis_window_name(a);
	table_note(t, "Children ran inside their parent, on the same thread. Times are clipped to the "
		      "window: %s.",
		   window);
	table_note(t, "CPU Ratio(%%) = time during which at least one of the row's ranges was open, "
		      "merged across threads, / the window:");
	table_note(t, "it never exceeds 100%%, while CPU Total adds up every call.");
	table_note(t, "GPU time of a call = the GPU work launched inside it (children included); "
		      "GPU Ratio(%%) = GPU Total / all GPU work launched in the window.");
	table_note(t, "Rows ending in \"(mark)\" count instants (nvtxMark): calls, no time.");
	return t;
}
