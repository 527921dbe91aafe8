/*
 * view_operator.c - the Operator Summary: operators (ranges of type
 * Operator) by name, with Calls, CPU Total/Avg/Max/Min/Ratio of their ranges
 * clipped to the window, and GPU Total/Avg/Max/Min/Ratio of the GPU work
 * each call launched, nested operators' included.
 *
 * Without --op-detail every operator has a row, nested ones too (an
 * operator called inside another counts in both rows; one that redispatches
 * to itself is one call: the walk never opens the folded range, store.h).
 * Self = CPU Total less the time of the operators called directly inside
 * (with --op-detail: of the rows nested under it), torch.profiler's
 * self_cpu_time_total. CPU Ratio = the union
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
#include "lib/analysis/views/view_memory.h"
#include "lib/analysis/views/rowtree.h"

#include "common/error.h"

#include <stdlib.h>

/* Self last: the columns before it keep the places they have always had */
enum {
	OC_NAME,
	OC_CALLS,
	OC_CPU,
	OC_GPU = OC_CPU + 5,
	OC_SELF = OC_GPU + 5,
	OC_SHAPES = OC_SELF + 2, /* --group-by shapes only */
	OC_COUNT
};

/* Memory (traces recorded with --profile-memory): after the rest, at
 * mem_col = the table's columns without them. */
enum { OM_ALLOC, OM_FREED, OM_PEAK, OM_COUNT };
#define MEM_GROUP "Memory Allocated / Freed / Peak Increase"
#define MEM_COLUMNS                                                                       \
	{"Mem Allocated", "mem_allocated", TCOL_BYTES, MEM_GROUP, 0, NULL, 0, "Alloc", 0, 0},  \
	{"Mem Freed", "mem_freed", TCOL_BYTES, MEM_GROUP, 0, NULL, 0, "Freed", 2, 0},          \
	{"Mem Peak Increase", "mem_peak_increase", TCOL_BYTES, MEM_GROUP, 0, NULL, 0, "Peak", 0, 0}

static const struct tcol op_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 52, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	VIEW_CPU_COLUMNS,
	VIEW_GPU_COLUMNS,
	VIEW_SELF_COLUMNS,
	{"Input Shapes", "input_shapes", TCOL_TEXT, NULL, 0, NULL},
	MEM_COLUMNS,
};

/* The same with memory and no shapes. */
static const struct tcol op_cols_mem[] = {
	{"Name", "name", TCOL_TEXT, NULL, 52, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	VIEW_CPU_COLUMNS,
	VIEW_GPU_COLUMNS,
	VIEW_SELF_COLUMNS,
	MEM_COLUMNS,
};

struct op_walk {
	struct rt_tree tr;
	int detail;
	int shapes; /* a row per (name, input shapes) */
	uint64_t serial;
	struct hw_visitor visitor;
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
	uint32_t shapes = w->shapes ? s->descs[store_ev_desc(t, f->event)].shapes : 0;
	f->node = rt_child_shapes(&w->tr, parent, name, shapes, RT_RANGE);
	f->stamp = 0; /* the time of the ranges followed directly inside it */
	if (f->in_window)
		ivl_union_add(&w->tr.nodes[f->node].open, t->start[f->event],
			      store_ev_end(t, f->event));
	return 1;
}

static void op_close(void *ctx, const struct hw_frame *f, const struct hw_stack *st)
{
	struct op_walk *w = ctx;
	/* Self time, as torch.profiler's key_averages counts it: what is left
	 * of the call once the calls directly inside it on its thread (the
	 * followed ranges: operators, or with --op-detail the rows under it)
	 * are taken out. Both lengths are clipped to the window. */
	if (st->n)
		st->v[st->n - 1].stamp += f->cpu;
	if (!f->in_window)
		return;
	struct time_stats *cpu = &w->tr.nodes[f->node].cpu;
	time_stats_add(cpu, f->cpu);
	rt_hist_add(&w->tr, f->node, f->cpu);
	cpu->self += f->cpu > f->stamp ? f->cpu - f->stamp : 0;
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
	struct view_memory_ops *mem; /* NULL: no memory columns */
	unsigned mem_col;
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
	if (d->shapes)
		trow_text(r, OC_SHAPES, names_get(tr->names, d->shapes));
	double cpu = up ? view_share(d->cpu.total, up->cpu.total)
			: analysis_ratio(a, ivl_union_measure(&d->open));
	double gpu = up ? view_share(d->gpu.total, up->gpu.total)
			: view_gpu_ratio(a, c->detail ? d->gpu.total : d->gpu_once);
	view_put_stats(r, OC_CPU, &d->cpu, cpu);
	if (d->cpu.calls) {
		trow_time(r, OC_SELF, (double)d->cpu.self);
		trow_time(r, OC_SELF + 1, (double)d->cpu.self / (double)d->cpu.calls);
	}
	view_put_stats(r, OC_GPU, &d->gpu, gpu);
	if (c->mem && !depth) {
		const struct view_memory_op *m = view_memory_op(c->mem, rt_name(tr, id));
		trow_bytes(r, c->mem_col + OM_ALLOC, m->allocated);
		trow_bytes(r, c->mem_col + OM_FREED, m->freed);
		trow_bytes(r, c->mem_col + OM_PEAK, m->peak_increase);
	}
}

/* A walk of the operators, its visitor ready. */
static struct op_walk *op_walk_new(const struct analysis *a, const struct view_opts *o)
{
	struct op_walk *w = xcalloc(1, sizeof(*w));
	/* Inside an operator every host range but the API calls is a row of
	 * its detail; without detail, only operators are. */
	w->visitor = (struct hw_visitor){
		.open = op_open,
		.close = op_close,
		.gpu = op_gpu,
		.types = o->op_detail ? ((1u << TRACE_EV_TYPE_COUNT) - 1) &
					       ~(1u << TRACE_EV_CUDA_RUNTIME)
				      : 1u << TRACE_EV_OPERATOR,
	};
	rt_init(&w->tr, a);
	w->detail = o->op_detail;
	w->shapes = o->group_shapes;
	return w;
}

/* The rows of a walk done, and the walk freed. */
static void op_part_rows(struct table *t, const struct analysis *a, const struct view_opts *o,
			 struct view_memory_ops *mem, unsigned mem_col,
			 const struct store_track *track, struct op_walk *w)
{
	rt_link(&w->tr, o->sort);
	if (w->tr.nodes[RT_ROOT].nchildren) {
		struct op_rows c = {t, view_thread_part(t, a, track), o->op_detail, mem, mem_col};
		rt_walk(&w->tr, op_row, &c);
	}
	rt_free(&w->tr);
	free(w);
}

static void op_part(struct table *t, const struct analysis *a, const struct view_opts *o,
		    struct view_memory_ops *mem, unsigned mem_col,
		    const struct store_track *track, const uint32_t *tracks, uint32_t ntracks)
{
	struct op_walk *w = op_walk_new(a, o);
	hostwalk_run(a, tracks, ntracks, &w->visitor, w);
	op_part_rows(t, a, o, mem, mem_col, track, w);
}

void *view_operator_walk(const struct view *v, const struct analysis *a,
			 const struct view_opts *o, struct hw_request *req)
{
	(void)v;
	if (o->thread_sep) /* a walk per thread */
		return NULL;
	struct op_walk *w = op_walk_new(a, o);
	*req = (struct hw_request){&w->visitor, w, NULL, 0};
	return w;
}

struct table *view_operator(const struct view *v, const struct analysis *a,
			    const struct view_opts *o)
{
	return view_build_walked(v, a, o);
}

struct table *view_operator_end(const struct view *v, const struct analysis *a,
				const struct view_opts *o, void *state)
{
	/* Memory by operator name, as the Memory Summary counts it: a row per
	 * name, so not with a row per thread or per shapes */
	struct view_memory_ops *mem = NULL;
	if (!o->thread_sep && !o->group_shapes && analysis_types(a)[TRACE_EV_MEMORY].marks) {
		mem = view_memory_ops_new(a);
		if (!view_memory_ops_any(mem)) {
			view_memory_ops_free(mem);
			mem = NULL;
		}
	}
	unsigned ncols = o->group_shapes ? OC_COUNT : OC_SHAPES;
	struct table *t = mem ? table_new(v->name, v->title, op_cols_mem, ncols + OM_COUNT)
			      : table_new(v->name, v->title, op_cols, ncols);
	if (o->thread_sep) {
		for (uint32_t i = 0; i < a->store.ntracks; i++)
			if (a->store.tracks[i].kind == STORE_TRACK_HOST)
				op_part(t, a, o, mem, ncols, &a->store.tracks[i], &i, 1);
	} else {
		op_part_rows(t, a, o, mem, ncols, NULL, state);
	}
	if (mem) {
		table_note(t, "Memory (--profile-memory): the bytes allocated and freed inside the "
			      "operator's calls, inner operators' included, and the most the bytes in use "
			      "rose during one call (Peak Increase), as the Memory Summary counts them%s.",
			   o->op_detail ? "; on the top rows" : "");
		view_memory_ops_free(mem);
	}
	table_set_empty(t, "No operators in the window.");
	table_note(t, "CPU: the operator's ranges clipped to the window (%s). GPU: the GPU work each "
		      "call launched, inner calls included.",
		   analysis_window_name(a));
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
	if (o->group_shapes)
		table_note(t, "A row per operator and input shapes (--group-by shapes, torch's "
			      "group_by_input_shape); calls recorded without shapes: Input Shapes \"-\".");
	table_note(t, "Self = CPU Total less the time of the %s directly inside its calls on their "
		      "threads (torch.profiler's self_cpu_time_total).",
		   o->op_detail ? "ranges nested" : "operators called");
	return t;
}

int view_operator_rows(const struct analysis *a, view_name_row_fn fn, void *ctx)
{
	const struct hw_visitor visitor = {
		.open = op_open, .close = op_close, .gpu = op_gpu, .types = 1u << TRACE_EV_OPERATOR};
	struct op_walk *w = xcalloc(1, sizeof(*w));
	rt_init(&w->tr, a);
	w->tr.hist = 1;
	hostwalk_run(a, NULL, 0, &visitor, w);
	rt_link(&w->tr, SORT_CPU_TOTAL);
	int rc = rt_rows(&w->tr, 1, fn, ctx);
	rt_free(&w->tr);
	free(w);
	return rc;
}
