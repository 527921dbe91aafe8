/*
 * view_operator.c - the Operator Summary: operators (ranges of type
 * Operator) by name, with Calls, CPU Total/Avg/Max/Min/Ratio of their ranges
 * clipped to the window, and GPU Total/Avg/Max/Min/Ratio of the GPU work
 * each call launched, nested operators' included.
 *
 * Without --op-detail every operator has a row, nested ones too (an
 * operator called inside another counts in both rows; one that redispatches
 * to itself is one call: the walk never opens the folded range, store.h).
 * CPU Ratio = the union
 * of the row's ranges / the window; GPU Ratio = the GPU work launched inside
 * at least one of its ranges, each piece once, / all counted GPU work. Both
 * stay within 100% when an operator nests in itself.
 *
 * With --op-detail the outermost operators are the rows, and under each what
 * ran inside it: the host ranges (inner operators, OperatorInner, user
 * ranges; not the CUDA API calls themselves) and, under the innermost range
 * that launched it, the GPU work by name, with "-" for CPU. A child's Ratio
 * is its share of its parent's total, as Paddle prints it.
 */
#include "lib/analysis/store/hostwalk.h"
#include "lib/analysis/views/view.h"
#include "lib/analysis/views/rowtree.h"

#include "common/error.h"

#include <stdlib.h>

enum { OC_NAME, OC_CALLS, OC_CPU, OC_GPU = OC_CPU + 5 };

static const struct tcol op_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 52, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	VIEW_CPU_COLUMNS,
	VIEW_GPU_COLUMNS,
};

struct op_walk {
	struct rt_tree tr;
	int detail;
	uint64_t serial;
};

static int op_open(void *ctx, struct hw_frame *f, const struct hw_stack *st)
{
	struct op_walk *w = ctx;
	const struct store *s = &w->tr.a->store;
	const struct store_track *t = &s->tracks[f->track];
	unsigned type = store_ev_type(s, t, f->event);
	uint32_t name = s->descs[store_ev_desc(t, f->event)].name;
	if (type != TRACE_EV_OPERATOR &&
	    (!w->detail || !st->n || type == TRACE_EV_CUDA_RUNTIME))
		return 0;
	uint32_t parent = w->detail && st->n ? st->v[st->n - 1].node : RT_ROOT;
	f->node = rt_child(&w->tr, parent, name, RT_RANGE);
	if (f->in_window)
		ivl_union_add(&w->tr.nodes[f->node].open, t->start[f->event],
			      store_ev_end(t, f->event));
	return 1;
}

static void op_close(void *ctx, const struct hw_frame *f, const struct hw_stack *st)
{
	(void)st;
	struct op_walk *w = ctx;
	if (!f->in_window)
		return;
	time_stats_add(&w->tr.nodes[f->node].cpu, f->cpu);
	time_stats_add(&w->tr.nodes[f->node].gpu, f->gpu);
}

static void op_gpu(void *ctx, const struct hw_stack *st, uint32_t track, uint32_t call,
		   uint32_t gtrack, uint32_t gi)
{
	(void)track;
	(void)call;
	struct op_walk *w = ctx;
	if (!st->n)
		return;
	const struct store *s = &w->tr.a->store;
	const struct store_track *gt = &s->tracks[gtrack];
	uint64_t ns = gt->dur[gi];
	if (w->detail) {
		uint32_t name = s->descs[store_ev_desc(gt, gi)].name;
		uint32_t id = rt_child(&w->tr, st->v[st->n - 1].node, name, RT_GPU);
		time_stats_add(&w->tr.nodes[id].gpu, ns);
		return;
	}
	w->serial++;
	for (size_t k = 0; k < st->n; k++)
		rt_gpu_once(&w->tr, st->v[k].node, w->serial, ns);
}

struct op_rows {
	struct table *t;
	struct tpart *p;
	int detail;
};

static void op_row(void *ctx, const struct rt_tree *tr, uint32_t id, unsigned depth)
{
	struct op_rows *c = ctx;
	const struct analysis *a = tr->a;
	const struct rt_node *d = &tr->nodes[id];
	const struct rt_node *up = d->parent != RT_ROOT ? &tr->nodes[d->parent] : NULL;
	struct trow *r = tpart_add_row(c->t, c->p, depth);
	trow_text(r, OC_NAME, rt_name(tr, id));
	if (d->kind == RT_GPU) {
		trow_count(r, OC_CALLS, d->gpu.calls);
		view_put_stats(r, OC_GPU, &d->gpu, view_share(d->gpu.total, up ? up->gpu.total : 0));
		return;
	}
	trow_count(r, OC_CALLS, d->cpu.calls);
	double cpu = up ? view_share(d->cpu.total, up->cpu.total)
			: analysis_ratio(a, ivl_union_measure(&d->open));
	double gpu = up ? view_share(d->gpu.total, up->gpu.total)
			: view_gpu_ratio(a, c->detail ? d->gpu.total : d->gpu_once);
	view_put_stats(r, OC_CPU, &d->cpu, cpu);
	view_put_stats(r, OC_GPU, &d->gpu, gpu);
}

static void op_part(struct table *t, const struct analysis *a, const struct view_opts *o,
		    const struct store_track *track, const uint32_t *tracks, uint32_t ntracks)
{
	/* Inside an operator every host range but the API calls is a row of
	 * its detail; without detail, only operators are. */
	const struct hw_visitor visitor = {
		.open = op_open,
		.close = op_close,
		.gpu = op_gpu,
		.types = o->op_detail ? ((1u << TRACE_EV_TYPE_COUNT) - 1) &
					       ~(1u << TRACE_EV_CUDA_RUNTIME)
				      : 1u << TRACE_EV_OPERATOR,
	};
	struct op_walk *w = xcalloc(1, sizeof(*w));
	rt_init(&w->tr, a);
	w->detail = o->op_detail;
	hostwalk_run(a, tracks, ntracks, &visitor, w);
	rt_link(&w->tr, o->sort);
	if (w->tr.nodes[RT_ROOT].nchildren) {
		struct op_rows c = {t, view_thread_part(t, a, track), o->op_detail};
		rt_walk(&w->tr, op_row, &c);
	}
	rt_free(&w->tr);
	free(w);
}

struct table *view_operator(const struct view *v, const struct analysis *a,
			    const struct view_opts *o)
{
	struct table *t = table_new(v->name, v->title, op_cols, sizeof(op_cols) / sizeof(op_cols[0]));
	if (o->thread_sep) {
		for (uint32_t i = 0; i < a->store.ntracks; i++)
			if (a->store.tracks[i].kind == STORE_TRACK_HOST)
				op_part(t, a, o, &a->store.tracks[i], &i, 1);
	} else {
		op_part(t, a, o, NULL, NULL, 0);
	}
	table_set_empty(t, "No operators in the window.");
	table_note(t, "CPU: the operator's ranges clipped to the window (%s). GPU: the GPU work each "
		      "call launched, inner calls included.",
		   a->from_steps ? "the ProfileStep ranges" : "the whole run");
	if (o->op_detail) {
		table_note(t, "Under each operator: the ranges that ran inside it, and the GPU work "
			      "(CPU \"-\") under the innermost range that launched it.");
		table_note(t, "A top row's Ratio(%%) is against the window (CPU) or all GPU work "
			      "launched in it (GPU); a child's is its share of its parent's Total.");
	} else {
		table_note(t, "CPU Ratio(%%) = the time at least one of the operator's ranges was open / "
			      "the window; GPU Ratio(%%) = the GPU work launched inside them, each "
			      "piece once, / all GPU work launched in the window.");
	}
	return t;
}
