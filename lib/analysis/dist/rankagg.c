/*
 * rankagg.c - the aggregate tables of the SQL exports (csv_agg.h,
 * formats/SQL-SCHEMA.md) for one rank: what gprof-dl's own analysis measures
 * of the rank's trace alone, on the host that holds it. The Distributed
 * view's per-rank figures (dist_map_rank(): steps, parts, communication
 * calls, the parts inside the calls) and the Operator and Kernel views' rows
 * of the rank (view_operator_rows(), view_kernel_rows()) with their calls
 * by duration; an engine finishes the job's views from them.
 */
#include "lib/analysis/dist/rankagg.h"

#include "lib/analysis/dist/collective.h"
#include "lib/analysis/dist/dist.h"
#include "lib/analysis/store/analysis.h"
#include "lib/analysis/store/names.h"
#include "lib/analysis/views/durhist.h"
#include "lib/analysis/views/view.h"

#include "common/error.h"

#include <stdint.h>
#include <stdlib.h>


#define AGG_INT(x) ((struct csv_agg_value){.kind = CSV_AGG_INT, .i = (int64_t)(x)})
#define AGG_TEXT(x) ((struct csv_agg_value){.kind = CSV_AGG_TEXT, .s = (x)})
#define AGG_NULL ((struct csv_agg_value){.kind = CSV_AGG_NULL})
#define AGG_KNOWN(known, x) ((known) ? AGG_INT(x) : AGG_NULL)

struct call_order {
	const struct collective_call *c;
	size_t at;
};

static int call_by_start(const void *x, const void *y)
{
	const struct call_order *a = x, *b = y;
	if (a->c->start_ns != b->c->start_ns)
		return a->c->start_ns < b->c->start_ns ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

static int agg_sets(const struct ivl_set *set, const char *part, int64_t off, csv_agg_emit_fn emit,
		    void *ctx)
{
	for (size_t k = 0; k < set->n; k++) {
		struct csv_agg_value v[] = {AGG_TEXT(part), AGG_INT((int64_t)set->v[k].start + off),
					    AGG_INT((int64_t)set->v[k].end + off)};
		if (emit(ctx, CSV_AGG_CALL_SETS, v, 3) != 0)
			return -1;
	}
	return 0;
}

/* The rows of rank m (measured by dist_map_rank()), times moved by off to
 * the job clock of the SQL exports. */
static int agg_rows(const struct dist_map *m, const char *host, const char *backend,
		    int32_t world_size, int64_t off, csv_agg_emit_fn emit, void *ctx)
{
	const struct dist_rank *r = &m->r;
	const struct collective_rank *cr = &m->cs.ranks[0];
	struct csv_agg_value rv[] = {
		AGG_TEXT(host),
		AGG_KNOWN(world_size > 0, world_size),
		AGG_INT(r->src.gpu_comp != 0),
		AGG_INT(r->src.gpu_comm != 0),
		AGG_INT(r->counted),
		AGG_INT(cr->n),
		backend && *backend ? AGG_TEXT(backend) : AGG_NULL,
	};
	if (emit(ctx, CSV_AGG_RANKS, rv, sizeof(rv) / sizeof(rv[0])) != 0)
		return -1;
	for (size_t k = 0; k < r->counted; k++) {
		const struct dist_step *st = &r->step[k];
		const struct dist_map_step *u = &m->u[k];
		uint64_t overlap = dist_sub0(u->comp + u->comm, u->both);
		struct csv_agg_value v[] = {
			AGG_INT(m->first_step + k),
			AGG_INT((int64_t)st->start + off),
			AGG_INT(st->len),
			AGG_KNOWN(st->samples, st->samples),
			AGG_INT(u->comp),
			AGG_INT(u->comm),
			AGG_INT(overlap),
			AGG_INT(dist_sub0(u->comm, overlap)),
			AGG_INT(st->data),
			AGG_INT(st->comp),
			AGG_INT(st->comm),
			AGG_INT(dist_sub0(st->len, st->data + st->comp + st->comm)),
			AGG_KNOWN(st->sched_known, st->runq),
		};
		if (emit(ctx, CSV_AGG_STEPS, v, sizeof(v) / sizeof(v[0])) != 0)
			return -1;
	}
	struct call_order *ord = xcalloc(cr->n ? cr->n : 1, sizeof(*ord));
	for (size_t i = 0; i < cr->n; i++)
		ord[i] = (struct call_order){&cr->calls[i], i};
	qsort(ord, cr->n, sizeof(*ord), call_by_start);
	int rc = 0;
	for (size_t i = 0; i < cr->n && rc == 0; i++) {
		const struct collective_call *c = ord[i].c;
		int in_step = c->step >= 0 && r->counted;
		struct csv_agg_value v[] = {
			AGG_INT(i),
			AGG_TEXT(names_get(&m->cs.names, c->pg)),
			AGG_KNOWN(c->seq1, c->seq1 - 1),
			AGG_TEXT(names_get(&m->cs.names, c->op)),
			c->dtype != COLLECTIVE_NONE ? AGG_TEXT(names_get(&m->cs.names, c->dtype))
						    : AGG_NULL,
			AGG_KNOWN(c->bytes, c->bytes),
			AGG_KNOWN(c->group_size, c->group_size),
			AGG_KNOWN(c->peer >= 0, c->peer),
			AGG_KNOWN(in_step, m->first_step + (uint64_t)c->step),
			AGG_INT((int64_t)c->start_ns + off),
			AGG_INT((int64_t)(c->start_ns + c->dur_ns) + off),
		};
		rc = emit(ctx, CSV_AGG_CALLS, v, sizeof(v) / sizeof(v[0]));
	}
	free(ord);
	if (rc == 0 && r->counted)
		rc = agg_sets(&r->in_calls.data, "data", off, emit, ctx) ||
		     agg_sets(&r->in_calls.comp, "comp", off, emit, ctx) ||
		     agg_sets(&r->in_calls.comm, "comm", off, emit, ctx) ? -1 : 0;
	return rc;
}

/* The rows of the Operator and Kernel views, and their histograms. */
struct names_emit {
	csv_agg_emit_fn emit;
	void *ctx;
	const char *kind; /* agg_durations.kind */
};

static int durations_emit(struct names_emit *x, const struct view_name_row *r)
{
	if (!r->hist)
		return 0;
	for (unsigned b = 0; b < DURHIST_BUCKETS; b++) {
		if (!r->hist[b])
			continue;
		uint64_t hi = durhist_hi(b);
		struct csv_agg_value v[] = {AGG_TEXT(x->kind), AGG_TEXT(r->name),
					    AGG_INT(durhist_lo(b)),
					    AGG_INT(hi > INT64_MAX ? INT64_MAX : hi),
					    AGG_INT(r->hist[b])};
		if (x->emit(x->ctx, CSV_AGG_DURATIONS, v, sizeof(v) / sizeof(v[0])) != 0)
			return -1;
	}
	return 0;
}

static int operator_emit(void *ctx, const struct view_name_row *r)
{
	struct names_emit *x = ctx;
	const struct time_stats *c = r->cpu, *g = r->gpu;
	if (!c->calls)
		return 0;
	struct csv_agg_value v[] = {
		AGG_TEXT(r->name), AGG_INT(c->calls), AGG_INT(c->total), AGG_INT(c->self),
		AGG_INT(c->min),   AGG_INT(c->max),   AGG_INT(g->total), AGG_INT(g->calls ? g->min : 0),
		AGG_INT(g->max),
	};
	if (x->emit(x->ctx, CSV_AGG_OPERATORS, v, sizeof(v) / sizeof(v[0])) != 0)
		return -1;
	return durations_emit(x, r);
}

static int kernel_emit(void *ctx, const struct view_name_row *r)
{
	struct names_emit *x = ctx;
	const struct time_stats *g = r->gpu;
	if (!g->calls)
		return 0;
	struct csv_agg_value v[] = {AGG_TEXT(r->name), AGG_INT(g->calls), AGG_INT(g->total),
				    AGG_INT(g->min), AGG_INT(g->max)};
	if (x->emit(x->ctx, CSV_AGG_KERNELS, v, sizeof(v) / sizeof(v[0])) != 0)
		return -1;
	return durations_emit(x, r);
}

static int agg_names(const struct analysis *a, csv_agg_emit_fn emit, void *ctx)
{
	struct names_emit ops = {emit, ctx, "operator"}, kernels = {emit, ctx, "kernel"};
	if (view_operator_rows(a, operator_emit, &ops) != 0 ||
	    view_kernel_rows(a, kernel_emit, &kernels) != 0)
		return -1;
	return 0;
}

int rankagg_part(struct job *j, uint32_t p, csv_agg_emit_fn emit, void *ctx)
{
	if (p >= j->nranks)
		return 0;
	const struct job_rank *jr = &j->ranks[p];
	char err[1024];
	struct analysis a;
	analysis_init(&a);
	if (job_load(j, p, &a, err, sizeof(err)) != 0) {
		analysis_free(&a);
		error("%s", err);
		return 1;
	}
	int32_t ws = j->world_size > 0 ? j->world_size : jr->world_size;
	struct dist_map m;
	dist_map_rank(&m, &a, jr->rank, ws > 0 ? (uint32_t)ws : j->nranks);
	/* the job clock of the SQL exports: Unix wall time (sql_opts()) */
	int64_t off = j->wall_clock ? 0 : j->files[jr->file].wall_offset_ns;
	int rc = agg_rows(&m, j->files[jr->file].host, jr->backend, ws, off, emit, ctx);
	dist_map_free(&m);
	if (rc == 0)
		rc = agg_names(&a, emit, ctx);
	analysis_free(&a);
	return rc;
}
