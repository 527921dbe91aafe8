/*
 * dist.c - a job's Distributed view measures (dist.h): each rank measured
 * alone, its calls matched across ranks, the steps split into parts once
 * the waits are known, the steps compared across ranks for the straggler
 * (verdict.h), the ranks that ended early.
 */
#include "lib/analysis/dist/dist.h"

#include "lib/analysis/views/perf.h"
#include "common/progress.h"
#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one rank --------------------------------------------------------------------- */

/* The run-queue time of a step's thread in it: 1 when known. */
static int step_sched(const struct perf_step *st, uint64_t *runq)
{
	*runq = st->cpu_ns ? st->runq_ns : 0;
	return st->cpu_ns != 0;
}

/* The counted step t lies in (index in r->step), or -1; with no steps, the
 * whole run (0) when t lies in it. */
struct slot_ctx {
	const struct dist_rank *r;
	const struct ivl_set *w;
};

static int32_t slot_of(void *ctx, uint64_t t)
{
	const struct slot_ctx *c = ctx;
	const struct dist_rank *r = c->r;
	if (!r->counted)
		return ivl_set_contains(c->w, t) ? 0 : -1;
	size_t lo = 0, hi = r->counted; /* the first step that starts after t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->step[mid].start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	const struct dist_step *st = &r->step[lo - 1];
	return t < st->start + st->len ? (int32_t)(lo - 1) : -1;
}

/* The sets of the rank's parts inside each step, and inside its calls'
 * windows (kept for the match). */
static void rank_step_sets(struct dist_rank *r, struct dist_sets *sets,
			   const struct collective_rank *cr, const struct ivl_set *w)
{
	for (size_t k = 0; k < r->counted; k++) {
		struct dist_step *st = &r->step[k];
		uint64_t a = st->start, b = st->start + st->len;
		st->data = ivl_set_overlap(&sets->data, a, b);
		st->comp = ivl_set_overlap(&sets->comp, a, b);
		st->comm = ivl_set_overlap(&sets->comm, a, b);
	}
	struct ivl_set q, qw;
	ivl_set_init(&q);
	for (size_t i = 0; i < cr->n; i++)
		if (cr->calls[i].step >= 0)
			ivl_set_add(&q, cr->calls[i].start_ns, cr->calls[i].start_ns + cr->calls[i].dur_ns);
	ivl_set_normalize(&q);
	ivl_set_seal(&q);
	ivl_set_intersect(&q, w, &qw);
	ivl_set_init(&r->in_calls.comp_all);
	ivl_set_init(&r->in_calls.comm_all);
	ivl_set_init(&r->in_calls.both_all);
	ivl_set_intersect(&sets->data, &qw, &r->in_calls.data);
	ivl_set_intersect(&sets->comp, &qw, &r->in_calls.comp);
	ivl_set_intersect(&sets->comm, &qw, &r->in_calls.comm);
	ivl_set_free(&q);
	ivl_set_free(&qw);
}

/* Measures rank r (index ri in cs) alone: its counted steps (perf_compute()
 * with skip, into *pf), their sets, its calls (into cs) and its sets inside
 * them; *u (u NULL: not wanted) gets, per counted step, the unions of its
 * computation, of its communication and of both inside the step, to free. */
static void rank_measure(struct dist_rank *r, struct collective_set *cs, uint32_t ri,
			 const struct analysis *a, unsigned skip, uint32_t group_size,
			 struct perf *pf, struct dist_map_step **pu)
{
	perf_compute(pf, a, skip);
	r->steps = pf->steps;
	r->skipped = pf->skipped;
	r->counted = pf->counted;
	r->nslots = pf->counted ? pf->counted : 1;
	r->step = xcalloc(r->nslots, sizeof(*r->step));
	struct ivl_set w;
	ivl_set_init(&w);
	for (size_t k = 0; k < pf->counted; k++) {
		const struct perf_step *ps = &pf->step[k];
		struct dist_step *st = &r->step[k];
		st->start = ps->start_ns;
		st->len = ps->batch_ns;
		st->samples = ps->samples;
		st->sched_known = step_sched(ps, &st->runq);
		r->sched_steps += st->sched_known;
		ivl_set_add(&w, st->start, st->start + st->len);
	}
	for (size_t k = 0; !pf->counted && k < a->window.n; k++)
		ivl_set_add(&w, a->window.v[k].start, a->window.v[k].end);
	ivl_set_normalize(&w);
	ivl_set_seal(&w);
	if (!pf->counted) { /* the whole run, as one slot */
		r->step[0].len = ivl_set_measure(&w);
		r->step[0].start = w.n ? w.v[0].start : 0;
	}
	dist_sources(a, &r->src);
	struct dist_sets sets;
	dist_walk(a, &w, &r->src, &r->f, &sets);
	struct dist_map_step *u = pu ? xcalloc(r->nslots, sizeof(*u)) : NULL;
	if (pu)
		*pu = u;
	for (size_t k = 0; u && k < pf->counted; k++) {
		uint64_t s0 = r->step[k].start, s1 = s0 + r->step[k].len;
		u[k].comp = ivl_set_overlap(&sets.comp_all, s0, s1);
		u[k].comm = ivl_set_overlap(&sets.comm_all, s0, s1);
		u[k].both = ivl_set_overlap(&sets.both_all, s0, s1);
	}

	struct slot_ctx sc = {r, &w};
	dist_rank_calls(cs, ri, a, &r->src, group_size, slot_of, &sc);
	rank_step_sets(r, &sets, &cs->ranks[ri], &w);
	dist_sets_free(&sets);
	ivl_set_free(&w);
}

static void dist_rank_measure(struct job_dist *d, uint32_t ri, const struct analysis *a)
{
	const struct job *j = d->j;
	const struct job_rank *jr = &j->ranks[ri];
	struct dist_rank *r = &d->r[ri];
	struct perf pf;
	rank_measure(r, &d->cs, ri, a, d->skip,
		     jr->world_size > 0 ? (uint32_t)jr->world_size : j->nranks, &pf, NULL);
	d->from_steps |= pf.counted > 0;

	const struct store_file *f = &a->store.files[0];
	r->start_ns = f->start_ns;
	r->end_ns = jr->end_ns ? jr->end_ns : f->events_end_ns;
	r->exit_status = jr->exit_status;
	r->exit_signal = jr->exit_signal;
	struct jobperf_rank *pr = &d->jp.ranks[ri];
	pr->rank = jr->rank;
	pr->part = ri;
	pr->file = xstrdup(j->files[jr->file].path);
	pr->pid = jr->pid;
	pr->perf = pf; /* moved */
}

void dist_map_rank(struct dist_map *m, const struct analysis *a, int32_t rank,
		   uint32_t group_size)
{
	memset(m, 0, sizeof(*m));
	collective_set_init(&m->cs, 1);
	m->cs.ranks[0].rank = rank;
	struct perf pf;
	rank_measure(&m->r, &m->cs, 0, a, 0, group_size, &pf, &m->u);
	m->first_step = pf.skipped;
	perf_free(&pf);
}

void dist_map_free(struct dist_map *m)
{
	free(m->r.step);
	dist_sets_free(&m->r.in_calls);
	collective_set_free(&m->cs);
	free(m->u);
	memset(m, 0, sizeof(*m));
}

/* ---- the parts, once the waits are known ---------------------------------------------- */

/* A call's wait is its first wait_ns: the rank came to the call early and
 * waited for the others before the transfer, which takes the fastest rank's
 * time. A rank's wait is the union of its calls' waits, each clipped to the
 * step it started in: calls that run at once (gloo's buckets on its two
 * threads) wait for the same rank at the same time, once. */
static void rank_waits(const struct dist_rank *r, const struct collective_rank *cr,
		       struct ivl_set *w)
{
	ivl_set_init(w);
	for (size_t i = 0; i < cr->n; i++) {
		const struct collective_call *c = &cr->calls[i];
		if (c->step < 0 || !c->wait_ns)
			continue;
		const struct dist_step *st = &r->step[c->step];
		uint64_t s = c->start_ns, e = s + c->wait_ns, step_end = st->start + st->len;
		if (s < step_end && e > step_end) /* GPU work may run past its call's step */
			e = step_end;
		if (e > s)
			ivl_set_add(w, s, e);
	}
	ivl_set_normalize(w);
	ivl_set_seal(w);
}

/* Takes the contention out of the host-side parts (dist.h), in proportion
 * to their size: on a rank with GPU work, data loading and host time first. */
static void carve_contention(double *part, double runq, double busy, int gpu)
{
	static const enum dist_part cpu[] = {DIST_DATA, DIST_COMP, DIST_COMM, DIST_HOST};
	static const enum dist_part gpu_first[] = {DIST_DATA, DIST_HOST};
	static const enum dist_part gpu_then[] = {DIST_COMP, DIST_COMM};
	const enum dist_part *groups[2] = {gpu ? gpu_first : cpu, gpu ? gpu_then : NULL};
	const size_t sizes[2] = {gpu ? 2 : 4, gpu ? 2 : 0};
	double left = fmin(runq, busy);
	part[DIST_CONTENTION] = 0;
	for (int gi = 0; gi < 2 && left > 0; gi++) {
		double total = 0;
		for (size_t i = 0; i < sizes[gi]; i++)
			total += part[groups[gi][i]];
		if (total <= 0)
			continue;
		double take = fmin(left, total);
		for (size_t i = 0; i < sizes[gi]; i++)
			part[groups[gi][i]] -= take * part[groups[gi][i]] / total;
		part[DIST_CONTENTION] += take;
		left -= take;
	}
}

/* Each counted step's wait and parts, and the rank's per step. */
static void rank_parts(struct dist_rank *r, const struct collective_rank *cr)
{
	struct ivl_set w, xd, xc, xm;
	rank_waits(r, cr, &w);
	ivl_set_intersect(&r->in_calls.data, &w, &xd);
	ivl_set_intersect(&r->in_calls.comp, &w, &xc);
	ivl_set_intersect(&r->in_calls.comm, &w, &xm);
	memset(r->part, 0, sizeof(r->part));
	for (size_t k = 0; k < r->nslots; k++) {
		struct dist_step *st = &r->step[k];
		uint64_t a = st->start, b = st->start + st->len;
		st->wait = ivl_set_overlap(&w, a, b);
		r->wait_ns += st->wait;
		if (!r->counted)
			continue;
		double *p = st->part;
		p[DIST_DATA] = (double)dist_sub0(st->data, ivl_set_overlap(&xd, a, b));
		p[DIST_COMP] = (double)dist_sub0(st->comp, ivl_set_overlap(&xc, a, b));
		p[DIST_COMM] = (double)dist_sub0(st->comm, ivl_set_overlap(&xm, a, b));
		double busy = (double)dist_sub0(st->len, st->wait);
		p[DIST_HOST] = fmax(0, busy - p[DIST_DATA] - p[DIST_COMP] - p[DIST_COMM]);
		carve_contention(p, (double)st->runq, busy, r->src.gpu_comp);
		for (int q = 0; q < DIST_NPARTS; q++)
			r->part[q] += p[q] / (double)r->counted;
	}
	ivl_set_free(&w);
	ivl_set_free(&xd);
	ivl_set_free(&xc);
	ivl_set_free(&xm);
	dist_sets_free(&r->in_calls);
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
		free(g->clock);
		g->clock = xstrdup(f->clock);
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

/* The steps every rank counted, by step number: from the latest first
 * counted step to the earliest last one; and the job's time for each (the
 * last rank's end of it less the last rank's end of the one before; the
 * first from the first rank's start), so that they add up to the job's
 * wall time over the compared steps. */
static void compared_steps(struct job_dist *d)
{
	d->no_steps = -1;
	uint64_t first = 0, last = UINT64_MAX;
	for (uint32_t ri = 0; ri < d->n; ri++) {
		const struct dist_rank *r = &d->r[ri];
		if (!r->counted) {
			if (d->no_steps < 0)
				d->no_steps = (int32_t)ri;
			continue;
		}
		first = r->skipped > first ? r->skipped : first;
		last = r->skipped + r->counted < last ? r->skipped + r->counted : last;
	}
	d->g0 = first;
	d->k = d->no_steps < 0 && last > first ? last - first : 0;
	d->job_step = xcalloc(d->k ? d->k : 1, sizeof(*d->job_step));
	uint64_t prev_end = UINT64_MAX;
	for (size_t g = 0; g < d->k; g++) {
		uint64_t start = UINT64_MAX, end = 0;
		for (uint32_t ri = 0; ri < d->n; ri++) {
			const struct dist_step *st = &d->r[ri].step[job_dist_slot(d, ri, g)];
			start = st->start < start ? st->start : start;
			end = st->start + st->len > end ? st->start + st->len : end;
		}
		uint64_t from = g ? prev_end : start;
		d->job_step[g] = (double)dist_sub0(end, from);
		prev_end = end;
	}
}

static void dist_straggler(struct job_dist *d)
{
	if (d->n < 2 || d->no_steps >= 0) {
		memset(&d->v, 0, sizeof(d->v));
		d->v.cand = -1;
		d->v.code = d->n < 2 ? DIST_ONE_RANK : DIST_NO_STEPS;
		return;
	}
	const uint32_t n = d->n;
	const size_t k = d->k;
	size_t cells = n * k > 0 ? n * k : 1;
	double *busy = xmalloc(cells * sizeof(*busy));
	double *wait = xmalloc(cells * sizeof(*wait));
	double *part = xmalloc(cells * DIST_NPARTS * sizeof(*part));
	double *runq = xmalloc(cells * sizeof(*runq));
	for (uint32_t ri = 0; ri < n; ri++)
		for (size_t g = 0; g < k; g++) {
			const struct dist_step *st = &d->r[ri].step[job_dist_slot(d, ri, g)];
			busy[ri * k + g] = (double)dist_sub0(st->len, st->wait);
			wait[ri * k + g] = (double)st->wait;
			runq[ri * k + g] = (double)st->runq;
			memcpy(&part[(ri * k + g) * DIST_NPARTS], st->part, sizeof(st->part));
		}
	struct dist_steps_in in = {n, k, busy, part, wait, d->job_step, runq};
	dist_verdict_compute(&d->v, &in);
	free(runq);
	free(busy);
	free(wait);
	free(part);
}

/* The op the other ranks waited in most. */
static uint32_t dist_wait_op(const struct job_dist *d, int32_t but)
{
	uint64_t *by_op = xcalloc(d->cs.names.count ? d->cs.names.count : 1, sizeof(*by_op));
	uint32_t best = 0;
	for (uint32_t ri = 0; ri < d->n; ri++) {
		const struct collective_rank *cr = &d->cs.ranks[ri];
		for (size_t k = 0; (int32_t)ri != but && k < cr->n; k++)
			if (cr->calls[k].step >= 0)
				by_op[cr->calls[k].op] += cr->calls[k].wait_ns;
	}
	for (uint32_t op = 1; op < d->cs.names.count; op++)
		if (by_op[op] > by_op[best])
			best = op;
	free(by_op);
	return best;
}

/* The median of the others' values v[o], o != but (v: n entries, scratch). */
static uint64_t others_median(const uint64_t *v, uint32_t n, uint32_t but, uint64_t *scratch)
{
	size_t m = 0;
	for (uint32_t o = 0; o < n; o++)
		if (o != but)
			scratch[m++] = v[o];
	if (!m)
		return 0;
	qsort(scratch, m, sizeof(*scratch), u64_cmp);
	return m % 2 ? scratch[m / 2] : scratch[m / 2 - 1] / 2 + scratch[m / 2] / 2;
}

/* Ranks that ended early: a non-zero exit status (a code, a signal, killed),
 * or an end more than the threshold before the median end of the others (2
 * median step times of the job; with no steps, 5% of the others' median
 * run) with fewer steps than the others' median: a rank that did all its
 * steps and left while rank 0 tore the job down ended in time. */
static void dist_ended_early(struct job_dist *d)
{
	const uint32_t n = d->n;
	uint64_t *steps = xmalloc((n ? n : 1) * sizeof(*steps));
	uint64_t *ends = xmalloc((n ? n : 1) * sizeof(*ends));
	uint64_t *runs = xmalloc((n ? n : 1) * sizeof(*runs));
	uint64_t *scratch = xmalloc((n ? n : 1) * sizeof(*scratch));
	size_t nsteps = 0;
	for (uint32_t ri = 0; ri < n; ri++)
		nsteps += d->r[ri].counted;
	uint64_t *st = xmalloc((nsteps ? nsteps : 1) * sizeof(*st));
	nsteps = 0;
	d->job_start = UINT64_MAX;
	for (uint32_t ri = 0; ri < n; ri++) {
		const struct dist_rank *r = &d->r[ri];
		for (size_t k = 0; k < r->counted; k++)
			st[nsteps++] = r->step[k].len;
		if (r->start_ns < d->job_start)
			d->job_start = r->start_ns;
		steps[ri] = r->steps;
		ends[ri] = r->end_ns;
		runs[ri] = dist_sub0(r->end_ns, r->start_ns);
	}
	qsort(st, nsteps, sizeof(*st), u64_cmp);
	d->median_step = nsteps ? st[nsteps / 2] : 0;
	free(st);
	for (uint32_t ri = 0; ri < n; ri++) {
		struct dist_rank *r = &d->r[ri];
		uint64_t others_steps = others_median(steps, n, ri, scratch);
		uint64_t others_end = others_median(ends, n, ri, scratch);
		uint64_t threshold = d->median_step ? 2 * d->median_step
						    : others_median(runs, n, ri, scratch) / 20;
		int status = r->exit_status != 0 && r->exit_status != TRACE_EXIT_UNKNOWN;
		int early = n > 1 && r->end_ns + threshold < others_end &&
			    (!nsteps || r->steps < others_steps);
		r->ended_early = status || early;
		d->ended_early += r->ended_early;
	}
	free(steps);
	free(ends);
	free(runs);
	free(scratch);
}

struct measure_ctx {
	struct job_dist *d;
	struct analysis *sum;
	struct sum_sets *ss;
	const char *done;
};

/* One part, loaded: into the Trace Summary's sums, and measured when a rank. */
static int measure_part(void *ctx, uint32_t p, struct analysis *a, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	struct measure_ctx *mc = ctx;
	job_warn_damage(a, 0, mc->done);
	progress_phase("measuring %u of %u parts", p + 1, mc->d->j->nparts);
	sum_add(mc->d, mc->sum, mc->ss, p, a);
	if (p < mc->d->j->nranks)
		dist_rank_measure(mc->d, p, a);
	return 0;
}

struct job_dist *job_dist_measure(struct job *j, unsigned skip, struct analysis *sum,
				  const char *done, char *err, size_t errlen)
{
	struct job_dist *d = xcalloc(1, sizeof(*d));
	d->j = j;
	d->skip = skip;
	d->n = j->nranks;
	d->r = xcalloc(d->n ? d->n : 1, sizeof(*d->r));
	d->sum_file = xcalloc(j->nfiles ? j->nfiles : 1, sizeof(*d->sum_file));
	collective_set_init(&d->cs, d->n);
	d->jp.ranks = xcalloc(d->n ? d->n : 1, sizeof(*d->jp.ranks));
	d->jp.nranks = d->n;
	d->jp.left_out = j->nparts - j->nranks;
	jobperf_of_job(&d->jp, j);
	for (uint32_t ri = 0; ri < d->n; ri++)
		d->cs.ranks[ri].rank = j->ranks[ri].rank;
	struct sum_sets ss;
	ivl_set_init(&ss.steps);
	ivl_set_init(&ss.runs);
	struct measure_ctx mc = {d, sum, &ss, done};
	if (job_load_each(j, j->nparts, measure_part, &mc, err, errlen) != 0) {
		ivl_set_free(&ss.steps);
		ivl_set_free(&ss.runs);
		job_dist_free(d);
		return NULL;
	}
	sum_finish(sum, &ss, j);
	ivl_set_free(&ss.steps);
	ivl_set_free(&ss.runs);
	progress_phase("matching the collectives of %u ranks", d->n);
	collective_match(&d->cs);
	for (uint32_t ri = 0; ri < d->n; ri++)
		rank_parts(&d->r[ri], &d->cs.ranks[ri]);
	compared_steps(d);
	dist_straggler(d);
	d->wait_op = dist_wait_op(d, d->v.cand);
	dist_ended_early(d);
	jobperf_line_up(&d->jp, skip);
	progress_done();
	return d;
}

int job_dist_from_steps(const struct job_dist *d)
{
	return d->from_steps;
}

void job_dist_step_list(char *buf, size_t size, const struct job_dist *d, const uint8_t *f,
			unsigned max)
{
	size_t used = 0;
	unsigned shown = 0;
	buf[0] = '\0';
	for (size_t g = 0; g < d->k && used < size; g++) {
		if (!f[g])
			continue;
		if (shown++ == max) {
			snprintf(buf + used, size - used, ", ...");
			return;
		}
		used += (size_t)snprintf(buf + used, size - used, "%s%llu", shown > 1 ? ", " : "",
					 (unsigned long long)(d->g0 + g));
	}
}

void job_dist_free(struct job_dist *d)
{
	if (!d)
		return;
	for (uint32_t ri = 0; ri < d->n; ri++) {
		free(d->r[ri].step);
		dist_sets_free(&d->r[ri].in_calls);
	}
	free(d->r);
	free(d->sum_file);
	free(d->job_step);
	dist_verdict_free(&d->v);
	jobperf_free(&d->jp);
	collective_set_free(&d->cs);
	free(d);
}
