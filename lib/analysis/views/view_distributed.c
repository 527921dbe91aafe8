/*
 * view_distributed.c - the Distributed Summary.
 *
 * One program (one rank, or traces that are no job): Paddle's table over the
 * window,
 *
 *   Communication  the union of the communication: the communication GPU
 *                  work (gpu.h) where the trace has GPU work (none when none
 *                  of it is: its host calls, c10d::allreduce_ and the like,
 *                  only enqueue), else the host's communication calls
 *                  (gloo's run on host threads: analysis.h)
 *   Computation    the union of the other kernels where the trace has GPU
 *                  work, else of the host operators that are not
 *                  communication calls (nor inside one)
 *   Overlap        the time both ran: Communication + Computation - their union
 *
 * so that Computation + Communication - Overlap is the time at least one ran.
 * Ratios are against the window.
 *
 * A job of two ranks or more (job.h), read one rank at a time: per rank, its
 * counted steps (the perf view's skip) and over them computation,
 * communication, overlap, exposed communication (communication -
 * overlap), wait (collective.h: the time in its calls beyond the fastest
 * rank's, matched call by call), idle (the window - computation ∪
 * communication), busy (step - wait), each per step and as a share of the
 * rank's step time; per collective (op, backend, group size) its calls,
 * bytes, times and nccl-tests' bandwidths; the straggler, and the ranks
 * that ended early: measured in dist.c, printed here.
 */
#include "lib/analysis/views/view_distributed.h"
#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one program: Paddle's table ------------------------------------------------ */

static const struct tcol dist_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 25, NULL},
	{"Total Time", "total_time", TCOL_TIME, NULL, 25, NULL},
	{"Ratio (%)", "ratio", TCOL_PERCENT, NULL, 25, NULL},
};

static void dist_row(struct table *t, struct tpart *p, const struct analysis *a, const char *name,
		     unsigned depth, uint64_t ns)
{
	struct trow *r = tpart_add_row(t, p, depth);
	trow_text(r, 0, name);
	trow_time(r, 1, (double)ns);
	trow_percent(r, 2, analysis_ratio(a, ns));
}

struct table *view_distributed(const struct view *v, const struct analysis *a,
			       const struct view_opts *o)
{
	struct table *t = table_new(v->name, v->title, dist_cols,
				    sizeof(dist_cols) / sizeof(dist_cols[0]));
	analysis_types(a);
	if (!a->gpu.has_gpu && !a->host_comm.calls) {
		table_set_empty(t, "No data: this trace has no GPU work and no communication.");
		return t;
	}
	struct dist_src src;
	dist_sources(a, &src);
	uint64_t comm, comp, both;
	dist_program_fig(a, &src, &comm, &comp, &both);
	struct tpart *p = table_add_part(t, NULL, NULL, NULL);
	dist_row(t, p, a, a->gpu_window ? "GPU span" : a->from_steps ? "ProfileStep" : "Whole run", 0,
		 a->window_ns);
	dist_row(t, p, a, "Communication", 1, comm);
	dist_row(t, p, a, "Computation", 1, comp);
	dist_row(t, p, a, "Overlap", 1, both);
	if (src.gpu_comp) {
		table_note(t, "Communication: the time the GPU's communication ran, merged: NCCL/RCCL "
			      "work, Communication events on the GPU and the GPU work of communication "
			      "operators.");
		if (a->host_comm.calls)
			table_note(t, "The trace has GPU work, so its %llu host communication ranges "
				      "(c10d::*, record_param_comms, nccl:*, ...) count no communication: "
				      "they only enqueue the GPU's%s.",
				   (unsigned long long)a->host_comm.calls,
				   src.gpu_comm ? "" : ", and none of its GPU work is communication");
		table_note(t, "Computation: the time the other kernels ran, merged. Overlap: the time "
			      "both ran at once.");
	} else if (src.gpu_comp) {
		table_note(t, "Communication: the time a CPU backend ran its collectives on the "
			      "host, merged (gloo:*, mpi:*, ucc:* ranges): the trace has GPU work but "
			      "none of it is communication; its c10d::* and record_param_comms ranges "
			      "only enqueue.");
		table_note(t, "Computation: the time the kernels ran, merged. Overlap: the time both "
			      "ran at once.");
	} else {
		table_note(t, "Communication: the time the host's communication calls ran, merged "
			      "(Communication events such as gloo:all_reduce, which run on host "
			      "threads, and c10d::*, nccl:*, gloo:*, mpi:* and Paddle's c_* ranges): "
			      "the trace has no GPU work.");
		table_note(t, "Computation: the time host operators ran, merged (not the "
			      "communication calls, nor what starts inside one). Overlap: the time both "
			      "ran at once.");
	}
	table_note(t, "Computation + Communication - Overlap = the time at least one of them ran. "
		      "Ratio (%%) is against %s.",
		   analysis_window_name(a));
	view_note_gpu_totals(t, a, o->unit);
	return t;
}

/* ---- a job ------------------------------------------------------------------------------- */

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

/* ---- the per-rank table ----------------------------------------------------------------- */

enum {
	RC_RANK, RC_HOST, RC_STEPS, RC_MEAN, RC_MEDIAN, RC_P95, RC_BUSY, RC_WAIT, RC_COMP, RC_DATA,
	RC_OUTSIDE, RC_COMM, RC_CONTENTION, RC_COMM_TOTAL, RC_OVERLAP, RC_NOTE, RC_ENDED, RC_COUNT
};

/* What a text within 100 columns keeps (drop 0) and leaves out first (the
 * highest drop): the question is who held the job back, and why. */
static const struct tcol rank_cols[RC_COUNT] = {
	{"Rank", "rank", TCOL_COUNT, NULL, 4, NULL, 0, NULL, 0, 0},
	{"Host", "host", TCOL_TEXT, NULL, 4, NULL, 0, NULL, 8, 0},
	{"Steps", "steps", TCOL_COUNT, NULL, 5, NULL, 0, NULL, 0, 0},
	{"Step Mean", "step_mean", TCOL_TIME, NULL, 0, NULL, 0, "Step", 0, 0},
	{"Step Median", "step_median", TCOL_TIME, NULL, 0, NULL, 0, "Median", 7, 0},
	{"Step P95", "step_p95", TCOL_TIME, NULL, 0, NULL, 0, "P95", 7, 0},
	{"Busy", "busy", TCOL_TIME, NULL, 0, NULL, 0, "Busy", 0, 0},
	{"Wait", "wait", TCOL_TIME, NULL, 0, NULL, 0, "Wait", 0, 0},
	{"Computation", "computation", TCOL_TIME, NULL, 0, NULL, 0, "Comp", 0, 0},
	{"Data Loading", "data_loading", TCOL_TIME, NULL, 0, NULL, 0, "Data", 3, 0},
	{"Outside Operators", "outside", TCOL_TIME, NULL, 0, NULL, 0, "Outside", 4, 0},
	{"Communication", "communication", TCOL_TIME, NULL, 0, NULL, 0, "Comm", 0, 0},
	{"Contention", "contention", TCOL_TIME, NULL, 0, NULL, 0, "Contention", 2, 0},
	{"Comm Total", "comm_total", TCOL_TIME, NULL, 0, NULL, 0, "CommTotal", 6, 0},
	{"Overlap", "overlap", TCOL_TIME, NULL, 0, NULL, 0, "Overlap", 6, 0},
	{"Note", "note", TCOL_TEXT, NULL, 0, NULL, 0, NULL, 0, 0},
	{"Ended", "ended", TCOL_TIME, NULL, 0, NULL, 0, "Ended", 9, 0},
};

static void exit_words(char *buf, size_t size, int32_t status, int32_t signal)
{
	if (status == TRACE_EXIT_KILLED)
		snprintf(buf, size, "killed: died without exiting");
	else if (signal > 0)
		snprintf(buf, size, "killed by signal %d", signal);
	else if (signal < 0 && status > 128)
		snprintf(buf, size, "exit status %d: signal %d", status, status - 128);
	else if (status > 0)
		snprintf(buf, size, "exit status %d", status);
	else
		snprintf(buf, size, "exit status %s", status == 0 ? "0" : "unknown");
}

static void rank_row(struct table *t, struct tpart *part, const struct job_dist *d, uint32_t ri)
{
	const struct dist_rank *r = &d->r[ri];
	const struct job *j = d->j;
	struct trow *row = tpart_add_row(t, part, 0);
	trow_count(row, RC_RANK, (uint64_t)j->ranks[ri].rank);
	trow_text(row, RC_HOST, j->files[j->ranks[ri].file].host);
	trow_count(row, RC_STEPS, r->counted);
	if (r->counted) {
		uint64_t *v = xmalloc(r->counted * sizeof(*v));
		for (size_t k = 0; k < r->counted; k++)
			v[k] = r->step[k].len;
		qsort(v, r->counted, sizeof(*v), u64_cmp);
		size_t n = r->counted, p95 = (size_t)ceil(0.95 * (double)n);
		double median = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
		trow_time(row, RC_MEAN, (double)r->f.window_ns / (double)n);
		trow_time(row, RC_MEDIAN, median);
		trow_time(row, RC_P95, (double)v[p95 ? p95 - 1 : 0]);
		free(v);
		trow_time(row, RC_BUSY, (double)dist_sub0(r->f.window_ns, r->wait_ns) / (double)n);
		trow_time(row, RC_COMP, r->part[DIST_COMP]);
		trow_time(row, RC_DATA, r->part[DIST_DATA]);
		trow_time(row, RC_OUTSIDE, r->part[DIST_HOST]);
		trow_time(row, RC_COMM, r->part[DIST_COMM]);
		if (r->sched_steps)
			trow_time(row, RC_CONTENTION, r->part[DIST_CONTENTION]);
	}
	double per = (double)r->nslots;
	trow_time(row, RC_WAIT, (double)r->wait_ns / per);
	trow_time(row, RC_COMM_TOTAL, (double)r->f.comm / per);
	trow_time(row, RC_OVERLAP, (double)dist_sub0(r->f.comp + r->f.comm, r->f.busy) / per);
	char note[128] = "";
	if (d->v.code == DIST_NAMED && d->v.cand == (int32_t)ri)
		snprintf(note, sizeof(note), "straggler: %s%s", dist_part_brief(d->v.cause),
			 d->v.kind == DIST_KIND_INTERMITTENT ? ", intermittent" : "");
	if (r->ended_early)
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%sended early",
			 *note ? "; " : "");
	trow_text(row, RC_NOTE, note);
	if (r->end_ns)
		trow_time(row, RC_ENDED, (double)dist_sub0(r->end_ns, d->job_start));
}

/* "ranks 0, 2, 3", or "the 63 other ranks" beyond a few. */
static void others_words(char *buf, size_t size, const struct job_dist *d, uint32_t but)
{
	if (d->n - 1 > 8) {
		snprintf(buf, size, "the %u other ranks", d->n - 1);
		return;
	}
	size_t used = (size_t)snprintf(buf, size, "rank%s", d->n - 1 > 1 ? "s" : "");
	int first = 1;
	for (uint32_t ri = 0; ri < d->n && used < size; ri++) {
		if (ri == but)
			continue;
		used += (size_t)snprintf(buf + used, size - used, "%s %d", first ? "" : ",",
					 d->j->ranks[ri].rank);
		first = 0;
	}
}

/* The op as the line says it: "all_reduce" for "gloo:all_reduce". */
static const char *op_short(const char *op)
{
	size_t n = trace_name_comm_call(op, strlen(op));
	return n ? op + n + 1 : op;
}

/* A time in the unit, without the unit: "19.80". */
static const char *bare_time(char *buf, size_t size, double ns, enum time_unit u)
{
	snprintf(buf, size, "%.2f", ns / time_unit_ns(u));
	return buf;
}

/* "computation +19.80, CPU contention +0.21, ...": every part that is not
 * zero at the unit's precision (the largest at least), the largest excess
 * first. */
static void parts_words(char *buf, size_t size, const struct dist_verdict *v, enum time_unit u)
{
	int order[DIST_NPARTS];
	for (int p = 0; p < DIST_NPARTS; p++) {
		int k = p;
		for (; k > 0 && v->part[order[k - 1]] < v->part[p]; k--)
			order[k] = order[k - 1];
		order[k] = p;
	}
	size_t used = 0;
	int shown = 0;
	buf[0] = '\0';
	for (int i = 0; i < DIST_NPARTS && used < size; i++) {
		char b[64];
		double x = v->part[order[i]];
		bare_time(b, sizeof(b), fabs(x), u);
		if (shown && strspn(b, "0.") == strlen(b))
			continue; /* nothing at this precision */
		used += (size_t)snprintf(buf + used, size - used, "%s%s %s%s", shown++ ? ", " : "",
					 dist_part_name((enum dist_part)order[i]), x < 0 ? "-" : "+", b);
	}
}

static void straggler_note(struct table *t, const struct job_dist *d, enum time_unit u)
{
	const struct dist_verdict *v = &d->v;
	const struct job *j = d->j;
	char b1[64], b2[64], b3[64], b4[64], pw[32];
	switch (v->code) {
	case DIST_ONE_RANK:
		table_note(t, "No straggler: fewer than two ranks to compare.");
		return;
	case DIST_NO_STEPS:
		table_note(t, "No straggler: rank %d has no training steps (ProfileStep ranges) to "
			      "compare busy time per step by.",
			   j->ranks[d->no_steps].rank);
		return;
	case DIST_FEW_STEPS:
		table_note(t, "No straggler: only %zu step%s compared across the ranks (at least %d "
			      "are needed).",
			   v->k, v->k == 1 ? "" : "s", DIST_MIN_STEPS);
		return;
	default:
		break;
	}
	int32_t rank = j->ranks[v->cand].rank;
	dist_p_words(pw, sizeof(pw), v->p);
	if (v->code == DIST_NOISE && v->why == DIST_WHY_WITHIN) {
		table_note(t, "No straggler: rank %d was busier than the others' median in %zu of %zu "
			      "compared steps, but by %s in a typical step, within the noise (%s); "
			      "beyond it (%s) in %zu only (it cost the job %s per step, %.1f %% of its "
			      "step, mostly in those).",
			   rank, v->busier, v->seen,
			   view_time(b1, sizeof(b1), (uint64_t)llround(fmax(v->typical, 0)), u),
			   view_time(b2, sizeof(b2), (uint64_t)llround(v->floor), u),
			   view_time(b3, sizeof(b3), (uint64_t)llround(v->theta), u), v->beyond,
			   view_time(b4, sizeof(b4), (uint64_t)llround(v->cost), u), v->cost_pct);
		return;
	}
	if (v->code == DIST_NOISE) {
		table_note(t, "No straggler: no rank held the job back beyond the noise over %zu compared "
			      "steps (the largest cost: rank %d, %s per step, %.1f %% of the job's step, "
			      "%s; a straggler costs at least %.0f %% and p < %.2g).",
			   v->k, rank, view_time(b1, sizeof(b1), (uint64_t)llround(v->cost), u),
			   v->cost_pct, pw, 100 * DIST_MATERIAL, DIST_ALPHA);
		return;
	}
	if (v->code == DIST_UNCONFIRMED) {
		table_note(t, "No straggler: rank %d is busy %s per step more than the others' median "
			      "%s, but they wait only %s per step, less than half of it: nobody waits "
			      "for it.",
			   rank, view_time(b1, sizeof(b1), (uint64_t)llround(v->excess), u),
			   view_time(b2, sizeof(b2), (uint64_t)llround(v->median), u),
			   view_time(b3, sizeof(b3), (uint64_t)llround(v->others_wait), u));
		return;
	}
	char who[256], in[300] = "", steps[160], parts[512], held[200] = "", out[200] = "";
	others_words(who, sizeof(who), d, (uint32_t)v->cand);
	if (d->wait_op)
		snprintf(in, sizeof(in), " in %s", op_short(names_get(&d->cs.names, d->wait_op)));
	parts_words(parts, sizeof(parts), v, u);
	const char *kind = v->by_contention ? " (CPU contention)"
			   : v->kind == DIST_KIND_INTERMITTENT ? " (intermittent)" : "";
	if (v->kind == DIST_KIND_INTERMITTENT || v->nheld * 2 < v->k) {
		job_dist_step_list(steps, sizeof(steps), d, v->held, 12);
		snprintf(held, sizeof(held), "in %zu of %zu steps: %s", v->nheld, v->k, steps);
	} else {
		snprintf(held, sizeof(held), "in %zu of %zu steps", v->nheld, v->k);
	}
	if (v->outliers) {
		uint8_t *o = xcalloc(d->k ? d->k : 1, 1);
		for (size_t g = 0; g < d->k; g++)
			o[g] = !v->in[g];
		job_dist_step_list(steps, sizeof(steps), d, o, 8);
		free(o);
		snprintf(out, sizeof(out), " (%zu outlier step%s left out: %s)", v->outliers,
			 v->outliers == 1 ? "" : "s", steps);
	}
	table_note(t, "Straggler%s: rank %d held the job back %s (%s). %s busy %s per step vs the "
		      "others' median %s%s: +%s = %s; %s %s %s per step for it%s.",
		   kind, rank, held, pw,
		   v->kind == DIST_KIND_INTERMITTENT ? "In those steps" : "Over the steps",
		   view_time(b1, sizeof(b1), (uint64_t)llround(v->busy), u),
		   view_time(b2, sizeof(b2), (uint64_t)llround(v->median), u), out,
		   view_time(b3, sizeof(b3), (uint64_t)llround(fmax(v->excess, 0)), u), parts, who,
		   d->n > 2 ? "wait" : "waits",
		   view_time(b4, sizeof(b4), (uint64_t)llround(v->others_wait), u), in);
	table_note(t, "Its cost: the job would take %.1f %% less time per step (%s of %s) if rank %d "
		      "were as fast as the median of the others.",
		   v->cost_pct, view_time(b1, sizeof(b1), (uint64_t)llround(v->cost), u),
		   view_time(b2, sizeof(b2), (uint64_t)llround(v->job_step), u), rank);
	if (v->by_contention)
		table_note(t, "CPU contention: its step thread was runnable but not running (another "
			      "program, or too many threads, on its CPUs): no fault of its own work.");
}

/* The ranks that ended early, in the order they ended: when one rank dies,
 * its launcher stops the others, so the first to end is the one to look at. */
static uint32_t ended_order(const struct job_dist *d, uint32_t *order)
{
	uint32_t n = 0;
	for (uint32_t ri = 0; ri < d->n; ri++) {
		if (!d->r[ri].ended_early)
			continue;
		uint32_t k = n++;
		for (; k > 0 && d->r[order[k - 1]].end_ns > d->r[ri].end_ns; k--)
			order[k] = order[k - 1];
		order[k] = ri;
	}
	return n;
}

static void ended_notes(struct table *t, const struct job_dist *d, enum time_unit u)
{
	uint32_t *order = xmalloc((d->n ? d->n : 1) * sizeof(*order));
	uint32_t nended = ended_order(d, order);
	for (uint32_t k = 0; k < nended; k++) {
		uint32_t ri = order[k];
		const struct dist_rank *r = &d->r[ri];
		char words[64], at[64], before[64];
		exit_words(words, sizeof(words), r->exit_status, r->exit_signal);
		uint64_t others = 0;
		size_t n = 0;
		for (uint32_t o = 0; o < d->n; o++)
			if (o != ri && d->r[o].end_ns > r->end_ns) {
				others += d->r[o].end_ns - r->end_ns;
				n++;
			}
		table_note(t, "Ended early: rank %d%s at %s into the job (%s)%s%s%s.", d->j->ranks[ri].rank,
			   nended > 1 ? (k == 0 ? ", the first to end," : ", after it,") : "",
			   view_time(at, sizeof(at), dist_sub0(r->end_ns, d->job_start), u), words,
			   n ? ", " : "", n ? view_time(before, sizeof(before), others / n, u) : "",
			   n ? " before the others on average" : "");
	}
	free(order);
}

static void rank_facts(struct tpart *p, const struct job_dist *d)
{
	const struct dist_verdict *v = &d->v;
	const struct job *j = d->j;
	int named = v->code == DIST_NAMED, cand = v->cand >= 0;
	tpart_fact(p, "ranks", d->n);
	tpart_fact(p, "world_size", j->world_size);
	tpart_fact(p, "missing_ranks", j->nmissing);
	tpart_fact(p, "hosts", j->nhosts);
	tpart_fact(p, "wall_clock", j->wall_clock);
	tpart_fact(p, "skip_steps", d->skip);
	tpart_fact(p, "job_start_ns", (int64_t)d->job_start);
	tpart_fact(p, "steps_compared", (int64_t)d->k);
	tpart_fact(p, "straggler_rank", named ? j->ranks[v->cand].rank : -1);
	tpart_fact(p, "straggler_cause", named ? (int64_t)v->cause : -1);
	tpart_fact(p, "straggler_kind", named ? (int64_t)v->kind : 0);
	tpart_fact(p, "straggler_steps_held", named ? (int64_t)v->nheld : 0);
	tpart_fact(p, "straggler_excess_ns", named ? (int64_t)llround(v->part[v->cause]) : 0);
	tpart_fact(p, "candidate_rank", cand ? j->ranks[v->cand].rank : -1);
	tpart_fact_real(p, "straggler_p", cand ? v->p : 1);
	tpart_fact(p, "busy_excess_ns", cand ? (int64_t)llround(v->excess) : 0);
	static const char *const part_keys[DIST_NPARTS] = {
		"part_computation_ns", "part_data_loading_ns", "part_host_ns",
		"part_communication_ns", "part_contention_ns",
	};
	for (int q = 0; q < DIST_NPARTS; q++)
		tpart_fact(p, part_keys[q], cand ? (int64_t)llround(v->part[q]) : 0);
	tpart_fact(p, "others_median_busy_ns", cand ? (int64_t)llround(v->median) : 0);
	tpart_fact(p, "others_wait_ns", cand ? (int64_t)llround(v->others_wait) : 0);
	tpart_fact(p, "cost_ns", cand ? (int64_t)llround(v->cost) : 0);
	tpart_fact_real(p, "cost_pct", cand ? v->cost_pct : 0);
	tpart_fact(p, "job_step_ns", (int64_t)llround(v->job_step));
	tpart_fact(p, "noise_ns", (int64_t)llround(v->theta));
	tpart_fact(p, "ended_early", d->ended_early);
	uint32_t *order = xmalloc((d->n ? d->n : 1) * sizeof(*order));
	tpart_fact(p, "first_ended_rank", ended_order(d, order) ? j->ranks[order[0]].rank : -1);
	free(order);
	tpart_fact(p, "collective_calls", (int64_t)d->cs.nmatches);
	tpart_fact(p, "mismatches", (int64_t)d->cs.mismatches);
}

/* "Missing: ranks 2, 3 of 4." */
static void missing_note(struct table *t, const struct job *j)
{
	if (!j->nmissing)
		return;
	char list[256];
	job_missing_words(list, sizeof(list), j);
	table_note(t, "Missing: %s of %d (no trace given for %s); the figures are the others'.", list,
		   j->world_size, j->nmissing == 1 ? "it" : "them");
}

struct table *job_dist_table(const struct job_dist *d, const struct view *v,
			     const struct view_opts *o)
{
	const struct job *j = d->j;
	struct table *t = table_new(v->name, v->title, rank_cols, RC_COUNT);
	char clock[300], words[256];
	store_clock_words(words, sizeof(words), j->wall_clock, j->nhosts, j->clock,
			  j->nfiles ? j->files[0].host : "");
	snprintf(clock, sizeof(clock), "Clock: %s", words);
	struct tpart *p = table_add_part(t, clock, "ranks", NULL);
	rank_facts(p, d);
	for (uint32_t ri = 0; ri < d->n; ri++)
		rank_row(t, p, d, ri);
	missing_note(t, j);
	straggler_note(t, d, o->unit);
	ended_notes(t, d, o->unit);
	if (d->cs.mismatches)
		table_note(t, "%llu communication calls did not match across ranks (their ops differ "
			      "at the same call: %s); they count no wait.",
			   (unsigned long long)d->cs.mismatches, d->cs.mismatch_note);
	table_note(t, "Measured over each rank's counted steps (the first %u of its ProfileStep "
		      "ranges skipped, never more than half: --skip-steps), per step; a rank without "
		      "steps is measured over its whole run. Step numbers count from 0, as "
		      "ProfileStep#N.",
		   d->skip);
	table_note(t, "Step = Wait + Busy; Busy = Computation + Data Loading + Outside Operators + "
		      "Communication + Contention, disjoint: Wait is each call's time beyond the "
		      "fastest rank's (matched by process group and sequence number, else order); "
		      "Data Loading the Dataloader ranges; Computation the kernels (a rank with GPU "
		      "work) or host operators, not inside data loading nor wait; Communication its "
		      "own not overlapped (with GPU work, the GPU's communication alone: its host "
		      "communication calls only enqueue it; else its host communication calls); "
		      "Contention its step thread's time runnable but not running "
		      "(schedstat), taken out of the others; Outside Operators the rest.");
	table_note(t, "Comm Total: all its communication, merged; Overlap: communication and "
		      "computation at once (Paddle's figures). Ended: when its process ended, from the "
		      "job's start.");
	table_note(t, "Straggler rule: step by step, each rank's busy time against the median of the "
		      "others'; a rank is named when the time it cost the job is at least %.0f %% of "
		      "the job's step, a sign test over its steps (or a sign-flip test over those beyond "
		      "the noise) gives p < %.2g / %u ranks, and the others wait for it; "
		      "communication counts up to the step's least (the rest is waiting), CPU "
		      "contention is taken out first (gprof-dl-summary(1)).",
		   100 * DIST_MATERIAL, DIST_ALPHA, d->n);
	table_note(t, "A rank ended early: a non-zero exit status, killed, or fewer steps than the "
		      "others' median and an end more than 2 median step times (without steps, 5%% "
		      "of the others' median run) before the others' median end.");
	return t;
}

/* ---- the per-collective table ------------------------------------------------------------ */

enum { CC_OP, CC_BACKEND, CC_GROUP, CC_CALLS, CC_BYTES, CC_TOTAL, CC_MEAN, CC_WAIT, CC_ALGBW,
       CC_BUSBW, CC_COUNT };

/* Within 100 columns: the mean per call and the backend go first. */
static const struct tcol collective_cols[CC_COUNT] = {
	{"Collective", "collective", TCOL_TEXT, NULL, 10, NULL, 0, NULL, 0, 0},
	{"Backend", "backend", TCOL_TEXT, NULL, 7, NULL, 0, NULL, 2, 0},
	{"Group Size", "group_size", TCOL_COUNT, NULL, 0, NULL, 0, "Group", 0, 0},
	{"Calls", "calls", TCOL_COUNT, NULL, 0, NULL, 0, NULL, 0, 0},
	{"Bytes per Call", "bytes_per_call", TCOL_BYTES, NULL, 0, NULL, 0, "Bytes/Call", 0, 0},
	{"Total per Rank", "total_per_rank", TCOL_TIME, NULL, 0, NULL, 0, "Total", 0, 0},
	{"Mean", "mean", TCOL_TIME, NULL, 0, NULL, 0, "Mean", 3, 0},
	{"Wait per Rank", "wait_per_rank", TCOL_TIME, NULL, 0, NULL, 0, "Wait", 0, 0},
	{"Algbw (GB/s)", "algbw", TCOL_REAL, NULL, 0, NULL, 3, "Algbw(GB/s)", 0, 0},
	{"Busbw (GB/s)", "busbw", TCOL_REAL, NULL, 0, NULL, 3, "Busbw(GB/s)", 1, 0},
};

struct collective_row {
	uint32_t op;
	char backend[16];
	uint32_t group;
	uint64_t calls, members, bytes, dur, wait;
	uint32_t ranks, last_rank;
	double algo_bytes, min_ns;
};

static void call_backend(char *buf, size_t size, const char *op, const char *rank_backend)
{
	size_t n = trace_name_comm_call(op, strlen(op));
	if (n)
		snprintf(buf, size, "%.*s", (int)n, op);
	else if (trace_name_is_comm_work(op, strlen(op)))
		snprintf(buf, size, "nccl"); /* RCCL's kernels too: NCCL's API */
	else
		snprintf(buf, size, "%s", rank_backend);
	for (char *c = buf; *c; c++)
		*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
}

static struct collective_row *collective_row_of(struct collective_row **rows, size_t *n,
						uint32_t op, const char *backend, uint32_t group)
{
	for (size_t i = 0; i < *n; i++)
		if ((*rows)[i].op == op && (*rows)[i].group == group &&
		    strcmp((*rows)[i].backend, backend) == 0)
			return &(*rows)[i];
	*rows = xrealloc(*rows, (*n + 1) * sizeof(**rows));
	struct collective_row *r = &(*rows)[(*n)++];
	memset(r, 0, sizeof(*r));
	r->op = op;
	snprintf(r->backend, sizeof(r->backend), "%s", backend);
	r->group = group;
	r->last_rank = UINT32_MAX;
	return r;
}

static int collective_row_cmp(const void *x, const void *y)
{
	const struct collective_row *a = x, *b = y;
	double ta = a->ranks ? (double)a->dur / a->ranks : 0, tb = b->ranks ? (double)b->dur / b->ranks : 0;
	if (ta != tb)
		return ta > tb ? -1 : 1;
	return (a->op > b->op) - (a->op < b->op);
}

struct table *job_dist_collectives(const struct job_dist *d, const struct view_opts *o)
{
	(void)o;
	struct table *t = table_new("collectives", "Collective Summary", collective_cols, CC_COUNT);
	const struct collective_set *cs = &d->cs;
	uint8_t *seen = xcalloc(cs->nmatches ? cs->nmatches : 1, 1);
	struct collective_row *rows = NULL;
	size_t nrows = 0;
	for (uint32_t ri = 0; ri < d->n; ri++) {
		const struct collective_rank *cr = &cs->ranks[ri];
		for (size_t k = 0; k < cr->n; k++) {
			const struct collective_call *c = &cr->calls[k];
			if (c->step < 0)
				continue;
			const char *op = names_get(&cs->names, c->op);
			char backend[16];
			call_backend(backend, sizeof(backend), op, d->j->ranks[ri].backend);
			struct collective_row *r = collective_row_of(&rows, &nrows, c->op, backend, c->group_size);
			r->members++;
			r->bytes += c->bytes;
			r->dur += c->dur_ns;
			r->wait += c->wait_ns;
			if (r->last_rank != ri) {
				r->last_rank = ri;
				r->ranks++;
			}
			if (c->mismatch || seen[c->match])
				continue;
			seen[c->match] = 1;
			r->calls++;
			r->algo_bytes += collective_algo_bytes(op, c->bytes, c->group_size);
			r->min_ns += (double)cs->matches[c->match].min_ns;
		}
	}
	free(seen);
	if (!nrows) {
		table_set_empty(t, "No communication calls in the ranks' counted steps.");
		return t;
	}
	qsort(rows, nrows, sizeof(*rows), collective_row_cmp);
	struct tpart *p = table_add_part(t, NULL, "collectives", NULL);
	for (size_t i = 0; i < nrows; i++) {
		const struct collective_row *r = &rows[i];
		const char *op = names_get(&cs->names, r->op);
		struct trow *row = tpart_add_row(t, p, 0);
		trow_text(row, CC_OP, op_short(op)); /* the backend has its column */
		trow_text(row, CC_BACKEND, r->backend);
		trow_count(row, CC_GROUP, r->group);
		trow_count(row, CC_CALLS, r->calls);
		if (r->bytes)
			trow_bytes(row, CC_BYTES, (int64_t)(r->bytes / r->members));
		trow_time(row, CC_TOTAL, (double)r->dur / r->ranks);
		trow_time(row, CC_MEAN, (double)r->dur / (double)r->members);
		trow_time(row, CC_WAIT, (double)r->wait / r->ranks);
		if (r->algo_bytes > 0 && r->min_ns > 0) {
			double algbw = r->algo_bytes / r->min_ns; /* bytes per ns = GB/s */
			trow_real(row, CC_ALGBW, algbw);
			trow_real(row, CC_BUSBW, algbw * collective_bus_factor(op, r->group));
		}
	}
	free(rows);
	table_note(t, "One row per op, backend and group size (from the calls, else the rank's "
		      "world size), over the calls in the ranks' counted steps. Calls: collective "
		      "calls (one per matched call across ranks); Bytes per Call: what one rank "
		      "contributes; Total and Wait per Rank: the mean over the ranks of their sums; "
		      "Mean: per call and rank.");
	table_note(t, "Algbw = S / t and Busbw = Algbw x F as nccl-tests define them, summed over "
		      "the calls: t the fastest rank's duration of each call (the call without "
		      "waiting), S the buffer (the bytes, n x the bytes for all_gather), F = 2(n-1)/n "
		      "for all_reduce, (n-1)/n for all_gather, reduce_scatter and all_to_all, 1 "
		      "otherwise. kB, MB, GB = 10^3, 10^6, 10^9 bytes, here as everywhere.");
	return t;
}
