/*
 * dist.c - the Distributed view's measures (dist.h): one rank's
 * unions, and a job's ranks, calls, waits, straggler and early ends.
 */
#include "lib/analysis/dist/dist.h"

#include "lib/analysis/views/perf.h"
#include "lib/analysis/store/progress.h"
#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one rank's figures --------------------------------------------------------- */

void dist_sources(const struct analysis *a, struct dist_src *src)
{
	const struct store *s = &a->store;
	src->gpu_comp = a->gpu.has_gpu;
	src->gpu_comm = 0;
	for (uint32_t ti = 0; ti < s->ntracks && !src->gpu_comm; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE)
			continue;
		for (size_t i = 0; i < t->n && !src->gpu_comm; i++)
			src->gpu_comm = store_ev_is_gpu_work(s, t, i) &&
					(a->gpu.tracks[ti].flags[i] & GPU_COMM);
	}
}

void dist_walk(const struct analysis *a, const struct ivl_set *clip, const struct dist_src *src,
	       struct dist_fig *f)
{
	const struct store *s = &a->store;
	struct ivl_union comp, comm, busy, dl, active;
	ivl_union_init(&comp, clip);
	ivl_union_init(&comm, clip);
	ivl_union_init(&busy, clip);
	ivl_union_init(&dl, clip);
	ivl_union_init(&active, clip);
	uint64_t *comm_end = xcalloc(s->ntracks ? s->ntracks : 1, sizeof(*comm_end));
	struct store_iter it;
	uint32_t ti;
	size_t i;
	store_iter_init(&it, s, NULL, 0);
	while (store_iter_next(&it, &ti, &i)) {
		const struct store_track *t = &s->tracks[ti];
		if (store_ev_is_instant(t, i))
			continue;
		uint64_t start = t->start[i], end = store_ev_end(t, i);
		unsigned type = store_ev_type(s, t, i);
		if (t->kind == STORE_TRACK_DEVICE) {
			if (!trace_event_type_is_device(type))
				continue;
			int is_comm = (a->gpu.tracks[ti].flags[i] & GPU_COMM) != 0;
			if (is_comm && src->gpu_comm) {
				ivl_union_add(&comm, start, end);
				ivl_union_add(&busy, start, end);
			} else if (!is_comm && type == TRACE_EV_KERNEL && src->gpu_comp) {
				ivl_union_add(&comp, start, end);
				ivl_union_add(&busy, start, end);
			}
			continue;
		}
		if (a->gpu.roles[store_ev_desc(t, i)] & ROLE_COMM_OP) {
			if (!src->gpu_comm) {
				ivl_union_add(&comm, start, end);
				ivl_union_add(&busy, start, end);
			}
			ivl_union_add(&active, start, end);
			if (end > comm_end[ti])
				comm_end[ti] = end;
		} else if (type == TRACE_EV_OPERATOR) {
			ivl_union_add(&active, start, end);
			if (!src->gpu_comp && start >= comm_end[ti]) {
				ivl_union_add(&comp, start, end);
				ivl_union_add(&busy, start, end);
			}
		} else if (type == TRACE_EV_DATALOADER) {
			ivl_union_add(&dl, start, end);
			ivl_union_add(&active, start, end);
		}
	}
	store_iter_free(&it);
	free(comm_end);
	f->window_ns = ivl_set_measure(clip);
	f->comp = ivl_union_measure(&comp);
	f->comm = ivl_union_measure(&comm);
	f->busy = ivl_union_measure(&busy);
	f->dataloader = ivl_union_measure(&dl);
	f->host_active = ivl_union_measure(&active);
}

/* ---- a job, rank by rank ---------------------------------------------------------- */

static const char *const dist_cause_names[CAUSE_COUNT] = {
	"computation", "data loading", "host time outside operators", "its own communication",
};

/* The counted step a time lies in: its index, or -1. */
static int32_t step_of(const struct perf *pf, uint64_t t)
{
	size_t lo = 0, hi = pf->counted;
	while (lo < hi) { /* the first step that starts after t */
		size_t mid = lo + (hi - lo) / 2;
		if (pf->step[mid].start_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	const struct perf_step *st = &pf->step[lo - 1];
	return t < st->start_ns + st->batch_ns ? (int32_t)(lo - 1) : -1;
}

/* Where a call goes: its counted step; with no steps, the whole run (0). */
static int32_t call_slot(const struct perf *pf, const struct ivl_set *w, uint64_t t)
{
	if (pf->counted)
		return step_of(pf, t);
	return ivl_set_contains(w, t) ? 0 : -1;
}

/* Per desc: 1 when a host range of it is a communication call's execution
 * (type Communication, or named BACKEND:OP), the calls matched across ranks;
 * not c10d::* (torch 2's enqueue of the same call). */
static uint8_t *call_descs(const struct store *s)
{
	uint8_t *is = xcalloc(s->ndescs ? s->ndescs : 1, 1);
	for (uint32_t d = 0; d < s->ndescs; d++) {
		const char *name = store_name(s, s->descs[d].name);
		is[d] = s->descs[d].type == TRACE_EV_COMMUNICATION ||
			trace_name_comm_call(name, strlen(name)) != 0;
	}
	return is;
}

struct call_ctx {
	struct job_dist *d;
	uint32_t ri;
	const struct analysis *a;
	const struct perf *pf;
	const struct ivl_set *w;
	uint32_t group_size; /* where a call does not say: the rank's world size */
};

static void add_call(struct call_ctx *c, uint64_t start, uint64_t dur, uint64_t at,
		     const struct store_comm *cm, const char *op)
{
	const struct store *s = &c->a->store;
	struct coll_call k = {
		.start_ns = start,
		.dur_ns = dur,
		.seq1 = cm ? cm->seq1 : 0,
		.bytes = cm ? cm->bytes : 0,
		.group_size = cm && cm->group_size ? cm->group_size : c->group_size,
		.peer = cm ? cm->peer : -1,
		.step = call_slot(c->pf, c->w, at),
	};
	coll_add(&c->d->cs, c->ri, &k, op, cm ? store_name(s, cm->pg) : "");
}

/* A rank without GPU communication: its host calls, the outermost of each
 * thread. */
static void host_calls(struct call_ctx *c, const uint8_t *is_call)
{
	const struct store *s = &c->a->store;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST)
			continue;
		struct store_extra_cursor xc = {0};
		uint64_t call_end = 0;
		for (size_t i = 0; i < t->n; i++) {
			uint32_t d = store_ev_desc(t, i);
			if (!is_call[d] || store_ev_is_instant(t, i) || t->start[i] < call_end)
				continue;
			call_end = store_ev_end(t, i);
			const struct store_comm *cm = store_extra_comm(t, store_extra_next(t, &xc, i));
			add_call(c, t->start[i], t->dur[i], t->start[i], cm,
				 store_name(s, s->descs[d].name));
		}
	}
}

/* The outermost communication call around a launching call, or STORE_NONE. */
static uint32_t comm_call_of(const struct store_track *t, const uint8_t *is_call, uint32_t call)
{
	uint32_t found = STORE_NONE;
	for (uint32_t p = call; p != STORE_NONE; p = t->parent[p])
		if (is_call[store_ev_desc(t, p)] && !store_ev_is_instant(t, p))
			found = p;
	return found;
}

struct gpu_span {
	uint64_t start, end;
};

/* A rank with GPU communication: each host call's communication GPU work
 * (from its first start to its last end) is one call, with the host call's
 * details; communication work no call launched is a call of its own. */
static void gpu_calls(struct call_ctx *c, const uint8_t *is_call)
{
	const struct analysis *a = c->a;
	const struct store *s = &a->store;
	uint8_t **taken = xcalloc(s->ntracks ? s->ntracks : 1, sizeof(*taken));
	for (uint32_t ti = 0; ti < s->ntracks; ti++)
		if (s->tracks[ti].kind == STORE_TRACK_DEVICE)
			taken[ti] = xcalloc(s->tracks[ti].n ? s->tracks[ti].n : 1, 1);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		const struct gpu_track *h = &a->gpu.tracks[ti];
		if (t->kind != STORE_TRACK_HOST || !h->nlaunches)
			continue;
		uint32_t cur = STORE_NONE;
		struct gpu_span span = {0, 0};
		for (size_t k = 0; k <= h->nlaunches; k++) {
			uint32_t at = STORE_NONE;
			const struct gpu_launch *l = k < h->nlaunches ? &h->launches[k] : NULL;
			if (l && (a->gpu.tracks[l->track].flags[l->index] & GPU_COMM))
				at = comm_call_of(t, is_call, l->call);
			if (l && at == STORE_NONE)
				continue;
			if (at != cur && cur != STORE_NONE) {
				const char *op = store_name(s, s->descs[store_ev_desc(t, cur)].name);
				add_call(c, span.start, span.end - span.start, t->start[cur],
					 store_ev_comm(t, cur), op);
			}
			if (!l)
				break;
			const struct store_track *gt = &s->tracks[l->track];
			uint64_t ws = gt->start[l->index], we = store_ev_end(gt, l->index);
			if (at != cur)
				span = (struct gpu_span){ws, we};
			span.start = ws < span.start ? ws : span.start;
			span.end = we > span.end ? we : span.end;
			cur = at;
			taken[l->track][l->index] = 1;
		}
	}
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE)
			continue;
		for (size_t i = 0; i < t->n; i++)
			if (!taken[ti][i] && store_ev_is_gpu_work(s, t, i) &&
			    (a->gpu.tracks[ti].flags[i] & GPU_COMM))
				add_call(c, t->start[i], t->dur[i], t->start[i], store_ev_comm(t, i),
					 store_name(s, s->descs[store_ev_desc(t, i)].name));
		free(taken[ti]);
	}
	free(taken);
}

static void dist_rank_measure(struct job_dist *d, uint32_t ri, const struct analysis *a)
{
	const struct job *j = d->j;
	const struct job_rank *jr = &j->ranks[ri];
	struct dist_rank *r = &d->r[ri];
	struct perf pf;
	perf_compute(&pf, a, d->skip);
	r->steps = pf.steps;
	r->skipped = pf.skipped;
	r->counted = pf.counted;
	r->nslots = pf.counted ? pf.counted : 1;
	r->step_start = xcalloc(r->nslots, sizeof(*r->step_start));
	r->step_ns = xcalloc(r->nslots, sizeof(*r->step_ns));
	r->step_wait = xcalloc(r->nslots, sizeof(*r->step_wait));
	struct ivl_set w;
	ivl_set_init(&w);
	for (size_t k = 0; k < pf.counted; k++) {
		ivl_set_add(&w, pf.step[k].start_ns, pf.step[k].start_ns + pf.step[k].batch_ns);
		r->step_start[k] = pf.step[k].start_ns;
		r->step_ns[k] = pf.step[k].batch_ns;
	}
	for (size_t k = 0; !pf.counted && k < a->window.n; k++)
		ivl_set_add(&w, a->window.v[k].start, a->window.v[k].end);
	ivl_set_normalize(&w);
	ivl_set_seal(&w);
	if (!pf.counted) { /* the whole run, as one slot */
		r->step_ns[0] = ivl_set_measure(&w);
		r->step_start[0] = w.n ? w.v[0].start : 0;
	}
	d->from_steps |= pf.counted > 0;
	dist_sources(a, &r->src);
	dist_walk(a, &w, &r->src, &r->f);

	uint8_t *is_call = call_descs(&a->store);
	struct call_ctx c = {d, ri, a, &pf, &w,
			     jr->world_size > 0 ? (uint32_t)jr->world_size : j->nranks};
	if (r->src.gpu_comm)
		gpu_calls(&c, is_call);
	else
		host_calls(&c, is_call);
	free(is_call);

	const struct store_file *f = &a->store.files[0];
	r->start_ns = f->start_ns;
	r->end_ns = jr->end_ns ? jr->end_ns : f->events_end_ns;
	r->exit_status = jr->exit_status;
	ivl_set_free(&w);
	perf_free(&pf);
}

/* ---- the Trace Summary of what the parts read --------------------------------------- */

struct sum_sets {
	struct ivl_set steps, runs;
};

static void sum_add(struct job_dist *d, struct analysis *sum, struct sum_sets *ss, uint32_t p,
		    const struct analysis *a)
{
	const struct job *j = d->j;
	uint32_t jf = j->ranks[p].file;
	const struct store_file *f = &a->store.files[0];
	if (!d->sum_file[jf]) {
		uint32_t at = store_add_file(&sum->store, f->path);
		struct store_file *g = &sum->store.files[at];
		free(g->hostname);
		free(g->cmdline);
		g->hostname = xstrdup(f->hostname);
		g->cmdline = xstrdup(f->cmdline);
		g->pid = j->files[jf].pid;
		g->rank = j->files[jf].rank;
		g->ncpus = f->ncpus;
		g->wall_offset_ns = f->wall_offset_ns;
		g->size = f->size;
		g->start_ns = f->start_ns;
		g->end_ns = f->end_ns;
		if (f->damage) {
			g->damage = xstrdup(f->damage);
			g->damage_offset = f->damage_offset;
		}
		d->sum_file[jf] = at + 1;
	}
	struct store_file *g = &sum->store.files[d->sum_file[jf] - 1];
	g->events += f->events;
	g->marks += f->marks;
	g->open_at_exit += f->open_at_exit;
	g->unbalanced_pops += f->unbalanced_pops;
	g->dropped += f->dropped;
	sum->events += f->events;
	sum->marks += f->marks;
	sum->open_at_exit += f->open_at_exit;
	sum->unbalanced_pops += f->unbalanced_pops;
	sum->dropped += f->dropped;
	sum->steps += a->steps;
	for (size_t k = 0; a->from_steps && k < a->window.n; k++)
		ivl_set_add(&ss->steps, a->window.v[k].start, a->window.v[k].end);
	if (f->end_ns > f->start_ns)
		ivl_set_add(&ss->runs, f->start_ns, f->end_ns);
}

static void sum_finish(struct analysis *sum, struct sum_sets *ss, const struct job *j)
{
	sum->from_steps = sum->steps > 0;
	struct ivl_set *w = sum->from_steps ? &ss->steps : &ss->runs;
	ivl_set_normalize(w);
	ivl_set_seal(w);
	ivl_set_free(&sum->window);
	sum->window = *w; /* moved */
	ivl_set_init(w);
	sum->window_ns = ivl_set_measure(&sum->window);
	sum->store.wall_clock = j->wall_clock;
	sum->prepared = 1;
	for (uint32_t f = 0; f < sum->store.nfiles; f++)
		sum->damaged += sum->store.files[f].damage != NULL;
}

/* ---- across ranks ------------------------------------------------------------------- */

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double median_of(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A call's wait is its first wait_ns: the rank came to the call early and
 * waited for the others before the transfer, which takes the fastest rank's
 * time. A rank's wait is the union of its calls' waits, clipped to the step
 * each started in: calls that run at once (gloo's buckets on its two
 * threads) wait for the same rank at the same time, once. */
static void rank_wait_steps(struct dist_rank *r, const struct coll_rank *cr)
{
	int32_t run_k = -1;
	uint64_t run_s = 0, run_e = 0;
	for (size_t i = 0; i <= cr->n; i++) {
		const struct coll_call *c = i < cr->n ? &cr->calls[i] : NULL;
		if (c && (c->step < 0 || !c->wait_ns))
			continue;
		uint64_t s = 0, e = 0;
		int32_t k = c ? c->step : -1;
		if (c) {
			uint64_t step_end = r->counted ? r->step_start[k] + r->step_ns[k] : UINT64_MAX;
			s = c->start_ns;
			e = s + c->wait_ns;
			if (s < step_end && e > step_end) /* GPU work may run past its call's step */
				e = step_end;
			if (k == run_k && s <= run_e) {
				run_e = e > run_e ? e : run_e;
				continue;
			}
		}
		if (run_k >= 0)
			r->step_wait[run_k] += run_e - run_s;
		run_k = k;
		run_s = s;
		run_e = e;
	}
	for (size_t k = 0; k < r->nslots; k++)
		r->wait_ns += r->step_wait[k];
}

/* Each rank's wait, in all and per step, and its busy time per step, once
 * the calls are matched. */
static void dist_waits(struct job_dist *d)
{
	for (uint32_t ri = 0; ri < d->n; ri++) {
		struct dist_rank *r = &d->r[ri];
		rank_wait_steps(r, &d->cs.ranks[ri]);
		if (!r->counted)
			continue;
		double sum = 0, sq = 0, n = (double)r->counted;
		for (size_t k = 0; k < r->counted; k++) {
			double b = (double)dist_sub0(r->step_ns[k], r->step_wait[k]);
			sum += b;
			sq += b * b;
		}
		r->busy = sum / n;
		double var = r->counted > 1 ? (sq - sum * sum / n) / (n - 1) : 0;
		r->busy_var = (var > 0 ? var : 0) / n; /* of the mean */
	}
}

static double cause_value(const struct dist_rank *r, enum dist_cause c)
{
	switch (c) {
	case CAUSE_COMPUTATION:
		return dist_per_step(r, r->f.comp);
	case CAUSE_DATALOADER:
		return dist_per_step(r, r->f.dataloader);
	case CAUSE_OUTSIDE:
		return dist_per_step(r, dist_sub0(r->f.window_ns, r->f.host_active));
	default:
		return dist_per_step(r, dist_sub0(r->f.comm, r->wait_ns));
	}
}

/* The median over the ranks but one of a value. */
static double others_median(const struct job_dist *d, uint32_t but, double (*get)(const struct dist_rank *, int),
			    int arg)
{
	double *v = xmalloc(d->n * sizeof(*v));
	size_t n = 0;
	for (uint32_t ri = 0; ri < d->n; ri++)
		if (ri != but)
			v[n++] = get(&d->r[ri], arg);
	double m = median_of(v, n);
	free(v);
	return m;
}

static double get_busy(const struct dist_rank *r, int arg)
{
	(void)arg;
	return r->busy;
}

static double get_busy_var(const struct dist_rank *r, int arg)
{
	(void)arg;
	return r->busy_var;
}

static double get_cause(const struct dist_rank *r, int c)
{
	return cause_value(r, (enum dist_cause)c);
}

/* The op the other ranks waited in most. */
static uint32_t dist_wait_op(const struct job_dist *d, uint32_t but)
{
	uint64_t *by_op = xcalloc(d->cs.names.count ? d->cs.names.count : 1, sizeof(*by_op));
	uint32_t best = 0;
	for (uint32_t ri = 0; ri < d->n; ri++) {
		const struct coll_rank *cr = &d->cs.ranks[ri];
		for (size_t k = 0; ri != but && k < cr->n; k++)
			if (cr->calls[k].step >= 0)
				by_op[cr->calls[k].op] += cr->calls[k].wait_ns;
	}
	for (uint32_t op = 1; op < d->cs.names.count; op++)
		if (by_op[op] > by_op[best])
			best = op;
	free(by_op);
	return best;
}

/* The straggler rule (gprof-dl-summary(1)): a rank whose busy time per step
 * exceeds the median of the others' by more than 3 standard errors of the
 * difference and by more than 2% of that median, the largest such excess,
 * named when the others wait for it: their mean wait per step is at least
 * half the excess. */
static void dist_straggler(struct job_dist *d)
{
	d->cand = -1;
	d->no_steps = -1;
	if (d->n < 2) {
		d->verdict = VERDICT_ONE_RANK;
		return;
	}
	for (uint32_t ri = 0; ri < d->n; ri++) {
		if (!d->r[ri].counted) {
			d->verdict = VERDICT_NO_STEPS;
			d->no_steps = (int32_t)ri;
			return;
		}
	}
	double best = -INFINITY;
	for (uint32_t ri = 0; ri < d->n; ri++) {
		double m = others_median(d, ri, get_busy, 0);
		double excess = d->r[ri].busy - m;
		if (excess <= best)
			continue;
		best = excess;
		d->cand = (int32_t)ri;
		d->median = m;
		d->excess = excess;
		d->se = sqrt(d->r[ri].busy_var + others_median(d, ri, get_busy_var, 0));
	}
	const uint32_t c = (uint32_t)d->cand;
	double wait = 0;
	for (uint32_t ri = 0; ri < d->n; ri++)
		if (ri != c)
			wait += dist_per_step(&d->r[ri], d->r[ri].wait_ns);
	d->others_wait = wait / (double)(d->n - 1);
	d->cause = CAUSE_COMPUTATION;
	d->cause_excess = -INFINITY;
	for (int k = 0; k < CAUSE_COUNT; k++) {
		double e = cause_value(&d->r[c], (enum dist_cause)k) - others_median(d, c, get_cause, k);
		if (e > d->cause_excess) {
			d->cause_excess = e;
			d->cause = (enum dist_cause)k;
		}
	}
	d->wait_op = dist_wait_op(d, c);
	if (!(d->excess > 3 * d->se && d->excess > 0.02 * d->median))
		d->verdict = VERDICT_NOISE;
	else if (d->others_wait < d->excess / 2)
		d->verdict = VERDICT_UNCONFIRMED;
	else
		d->verdict = VERDICT_NAMED;
}

/* Ranks that ended early: a non-zero exit status (a code, a signal, killed),
 * or an end more than the threshold before the median end of the others (2
 * median step times of the job; with no steps, 5% of the others' median
 * run) with fewer steps than the others' median: a rank that did all its
 * steps and left while rank 0 tore the job down ended in time. */
static void dist_ended_early(struct job_dist *d)
{
	uint64_t *v = xmalloc((d->n ? d->n : 1) * sizeof(*v));
	size_t nsteps = 0;
	for (uint32_t ri = 0; ri < d->n; ri++)
		for (size_t k = 0; k < d->r[ri].counted; k++)
			nsteps++;
	uint64_t *st = xmalloc((nsteps ? nsteps : 1) * sizeof(*st));
	nsteps = 0;
	d->job_start = UINT64_MAX;
	for (uint32_t ri = 0; ri < d->n; ri++) {
		for (size_t k = 0; k < d->r[ri].counted; k++)
			st[nsteps++] = d->r[ri].step_ns[k];
		if (d->r[ri].start_ns < d->job_start)
			d->job_start = d->r[ri].start_ns;
	}
	qsort(st, nsteps, sizeof(*st), u64_cmp);
	d->median_step = nsteps ? st[nsteps / 2] : 0;
	free(st);
	for (uint32_t ri = 0; ri < d->n; ri++) {
		struct dist_rank *r = &d->r[ri];
		size_t n = 0;
		uint64_t runs = 0, steps;
		for (uint32_t o = 0; o < d->n; o++)
			if (o != ri)
				v[n++] = d->r[o].steps;
		qsort(v, n, sizeof(*v), u64_cmp);
		steps = n ? v[n / 2] : 0;
		n = 0;
		for (uint32_t o = 0; o < d->n; o++)
			if (o != ri)
				v[n++] = d->r[o].end_ns;
		qsort(v, n, sizeof(*v), u64_cmp);
		uint64_t others_end = n ? (n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2) : 0;
		n = 0;
		for (uint32_t o = 0; o < d->n; o++)
			if (o != ri)
				v[n++] = dist_sub0(d->r[o].end_ns, d->r[o].start_ns);
		qsort(v, n, sizeof(*v), u64_cmp);
		runs = n ? v[n / 2] : 0;
		uint64_t threshold = d->median_step ? 2 * d->median_step : runs / 20;
		int status = r->exit_status != 0 && r->exit_status != TRACE_EXIT_UNKNOWN;
		int early = n && r->end_ns + threshold < others_end && (!nsteps || r->steps < steps);
		r->ended_early = status || early;
		d->ended_early += r->ended_early;
	}
	free(v);
}

struct job_dist *job_dist_measure(struct job *j, const struct view_opts *o, struct analysis *sum,
				  const char *done, char *err, size_t errlen)
{
	struct job_dist *d = xcalloc(1, sizeof(*d));
	d->j = j;
	d->skip = o->skip_set ? o->skip_steps : PERF_SKIP_DEFAULT;
	d->n = j->nranks;
	d->r = xcalloc(d->n ? d->n : 1, sizeof(*d->r));
	d->sum_file = xcalloc(j->nfiles ? j->nfiles : 1, sizeof(*d->sum_file));
	coll_set_init(&d->cs, d->n);
	for (uint32_t ri = 0; ri < d->n; ri++)
		d->cs.ranks[ri].rank = j->ranks[ri].rank;
	struct sum_sets ss;
	ivl_set_init(&ss.steps);
	ivl_set_init(&ss.runs);
	for (uint32_t p = 0; p < j->nparts; p++) {
		struct analysis a;
		analysis_init(&a);
		if (job_load(j, p, &a, err, errlen) != 0) {
			analysis_free(&a);
			ivl_set_free(&ss.steps);
			ivl_set_free(&ss.runs);
			job_dist_free(d);
			return NULL;
		}
		job_warn_damage(&a, 0, done);
		progress_phase("measuring %u of %u parts", p + 1, j->nparts);
		sum_add(d, sum, &ss, p, &a);
		if (p < j->nranks)
			dist_rank_measure(d, p, &a);
		analysis_free(&a);
	}
	sum_finish(sum, &ss, j);
	ivl_set_free(&ss.steps);
	ivl_set_free(&ss.runs);
	progress_phase("matching the collectives of %u ranks", d->n);
	coll_match(&d->cs);
	dist_waits(d);
	dist_straggler(d);
	dist_ended_early(d);
	progress_done();
	return d;
}

int job_dist_from_steps(const struct job_dist *d)
{
	return d->from_steps;
}

void job_dist_free(struct job_dist *d)
{
	if (!d)
		return;
	for (uint32_t ri = 0; ri < d->n; ri++) {
		free(d->r[ri].step_start);
		free(d->r[ri].step_ns);
		free(d->r[ri].step_wait);
	}
	free(d->r);
	free(d->sum_file);
	coll_set_free(&d->cs);
	free(d);
}

const char *dist_cause_name(enum dist_cause c)
{
	return c < CAUSE_COUNT ? dist_cause_names[c] : "?";
}
