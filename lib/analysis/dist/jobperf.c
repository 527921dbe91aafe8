/*
 * jobperf.c - a job's throughput, rank by rank and as a whole (jobperf.h
 * says what each figure is): each rank measured alone, then its counted
 * steps lined up with the others' into the job's steps.
 */
#include "lib/analysis/dist/jobperf.h"

#include "common/progress.h"
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- measuring ------------------------------------------------------------- */

/* The rank's communication inside its counted steps (jobperf.h). */
static uint64_t comm_in_steps(const struct analysis *a, const struct perf *p)
{
	const struct store *s = &a->store;
	struct ivl_set set;
	ivl_set_init(&set);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		const uint8_t *flags = a->gpu.tracks ? a->gpu.tracks[ti].flags : NULL;
		for (size_t i = 0; i < t->n; i++) {
			if (store_ev_is_instant(t, i) || !t->dur[i])
				continue;
			int comm = t->kind == STORE_TRACK_HOST
					   ? (a->gpu.roles[store_ev_desc(t, i)] & ROLE_COMM_OP) != 0
					   : flags && (flags[i] & GPU_COMM);
			if (comm)
				ivl_set_add(&set, t->start[i], store_ev_end(t, i));
		}
	}
	ivl_set_normalize(&set);
	ivl_set_seal(&set);
	uint64_t ns = 0;
	for (size_t k = 0; k < p->counted; k++)
		ns += ivl_set_overlap(&set, p->step[k].start_ns,
				      p->step[k].start_ns + p->step[k].batch_ns);
	ivl_set_free(&set);
	return ns;
}

struct measure_ctx {
	struct jobperf *jp;
	const struct job *j;
	unsigned skip;
	const char *done;
};

/* Measures part p, loaded into a, into the job's rank p; -1 with err. */
static int measure_rank(void *ctx, uint32_t p, struct analysis *a, char *err, size_t errlen)
{
	struct measure_ctx *mc = ctx;
	const struct job_rank *jr = &mc->j->ranks[p];
	struct jobperf_rank *r = &mc->jp->ranks[p];
	mc->jp->nranks++;
	r->rank = jr->rank;
	r->part = p;
	r->file = xstrdup(mc->j->files[jr->file].path);
	r->pid = jr->pid;
	job_warn_damage(a, 0, mc->done);
	perf_compute(&r->perf, a, mc->skip);
	if (!r->perf.counted) {
		snprintf(err, errlen, "'%s' (rank %d): no training steps (ProfileStep ranges) to measure",
			 r->file, r->rank);
		return -1;
	}
	r->comm_ns = comm_in_steps(a, &r->perf);
	return 0;
}

/* The job's steps from the ranks' (jobperf.h): step number g of every rank
 * that counted it, from the last rank's end of the step before it (the
 * first: the first rank's start of it) to the last rank's end of it, so
 * that they add up to the job's wall time over those steps. */
void jobperf_line_up(struct jobperf *jp, unsigned skip)
{
	int by_samples = 1;
	uint64_t first = 0, last = UINT64_MAX;
	struct perf *jpf = &jp->perf;
	memset(jpf, 0, sizeof(*jpf));
	jpf->skip = skip;
	jpf->ranks = jp->nranks;
	for (uint32_t r = 0; r < jp->nranks; r++) {
		const struct perf *p = &jp->ranks[r].perf;
		by_samples &= p->by_samples;
		jp->counts_differ |= p->counted != jp->ranks[0].perf.counted ||
				     p->skipped != jp->ranks[0].perf.skipped;
		first = p->skipped > first ? p->skipped : first;
		last = p->skipped + p->counted < last ? p->skipped + p->counted : last;
		jpf->steps += p->steps;
		jpf->skipped += p->skipped;
	}
	/* one unit for the job and its ranks: a rank that knows its samples
	 * counts in steps/s when another does not */
	for (uint32_t r = 0; r < jp->nranks && !by_samples; r++) {
		struct perf *p = &jp->ranks[r].perf;
		if (!p->by_samples)
			continue;
		for (size_t k = 0; k < p->counted; k++)
			p->step[k].samples = 0;
		perf_finish(p);
	}
	size_t n = last > first && last != UINT64_MAX ? last - first : 0;
	for (uint32_t r = 0; r < jp->nranks; r++)
		n = jp->ranks[r].perf.counted ? n : 0;
	jp->first_step = first;
	jpf->counted = n;
	jpf->step = xcalloc(n ? n : 1, sizeof(*jpf->step));
	uint64_t prev_end = 0;
	for (size_t g = 0; g < n; g++) {
		struct perf_step *st = &jpf->step[g];
		uint64_t start = UINT64_MAX, end = 0;
		for (uint32_t r = 0; r < jp->nranks; r++) {
			const struct perf *p = &jp->ranks[r].perf;
			const struct perf_step *rs = &p->step[first + g - p->skipped];
			uint64_t e = rs->start_ns + rs->batch_ns;
			start = rs->start_ns < start ? rs->start_ns : start;
			if (r == 0 || e > end) {
				end = e;
				st->track = r;
			}
			if (rs->reader_ns > st->reader_ns)
				st->reader_ns = rs->reader_ns;
			st->samples += by_samples ? rs->samples : 0;
		}
		uint64_t from = g ? prev_end : start;
		st->start_ns = from;
		st->batch_ns = end > from ? end - from : 0;
		prev_end = end;
	}
	perf_finish(jpf);
}

int jobperf_measure(struct jobperf *jp, struct job *j, unsigned skip, const char *done,
		    char *err, size_t errlen)
{
	memset(jp, 0, sizeof(*jp));
	if (!j->nranks)
		BUG("jobperf_measure of a job with no rank");
	jp->ranks = xcalloc(j->nranks, sizeof(*jp->ranks));
	struct measure_ctx mc = {jp, j, skip, done};
	if (job_load_each(j, j->nranks, measure_rank, &mc, err, errlen) != 0) {
		progress_done();
		jobperf_free(jp);
		return -1;
	}
	jp->left_out = j->nparts - j->nranks;
	jobperf_of_job(jp, j);
	jobperf_line_up(jp, skip);
	return 0;
}

void jobperf_of_job(struct jobperf *jp, const struct job *j)
{
	jp->world_size = j->world_size;
	jp->nmissing = j->nmissing;
	jp->missing[0] = '\0';
	if (j->nmissing)
		job_missing_words(jp->missing, sizeof(jp->missing), j);
}

/* "Missing: ranks 2, 3 of 4 ...", in a table of the job. */
static void missing_note(struct table *t, const struct jobperf *jp)
{
	if (jp->nmissing)
		table_note(t, "Missing: %s of %d (no trace given for %s): the job's figures are the "
			      "others'.",
			   jp->missing, jp->world_size, jp->nmissing == 1 ? "it" : "them");
}

void jobperf_free(struct jobperf *jp)
{
	for (uint32_t r = 0; r < jp->nranks; r++) {
		free(jp->ranks[r].file);
		perf_free(&jp->ranks[r].perf);
	}
	free(jp->ranks);
	perf_free(&jp->perf);
	memset(jp, 0, sizeof(*jp));
}

/* ---- tables -------------------------------------------------------------- */

struct table *jobperf_table(const struct jobperf *jp, const char *id, const char *title)
{
	struct table *t = perf_table(&jp->perf, id, title, 1);
	missing_note(t, jp);
	if (!jp->counts_differ)
		return t;
	/* "rank 0: 10-39, rank 1: 10-29" */
	size_t cap = 64 + 48 * (size_t)jp->nranks, len = 0;
	char *counts = xmalloc(cap);
	counts[0] = '\0';
	for (uint32_t r = 0; r < jp->nranks; r++) {
		const struct perf *p = &jp->ranks[r].perf;
		len += (size_t)snprintf(counts + len, cap - len, "%srank %d: %llu-%llu", r ? ", " : "",
					jp->ranks[r].rank, (unsigned long long)p->skipped,
					(unsigned long long)(p->skipped + p->counted - 1));
	}
	if (jp->perf.counted)
		table_note(t,
			   "The ranks counted different steps (%s): the job has steps %llu-%llu (%zu), "
			   "those every rank counted; the others count for their rank only.",
			   counts, (unsigned long long)jp->first_step,
			   (unsigned long long)(jp->first_step + jp->perf.counted - 1), jp->perf.counted);
	else
		table_note(t, "The ranks counted different steps (%s): no step every rank counted.",
			   counts);
	free(counts);
	return t;
}

enum { RC_RANK, RC_STEPS, RC_IPS, RC_BATCH, RC_READER };

static const struct tcol rank_cols[] = {
	{"Rank", "rank", TCOL_COUNT, NULL, 6, NULL, 0},
	{"Steps", "steps", TCOL_COUNT, NULL, 7, NULL, 0},
	{"IPS", "ips", TCOL_REAL, NULL, 17, "ips", 5},
	{"Batch Cost Avg", "batch_cost", TCOL_TIME, NULL, 17, "batch_cost avg", 5},
	{"Reader Cost Avg", "reader_cost", TCOL_TIME, NULL, 17, "reader_cost avg", 5},
};

struct table *jobperf_ranks_table(const struct jobperf *jp)
{
	struct table *t =
		table_new("ranks", "Ranks", rank_cols, sizeof(rank_cols) / sizeof(rank_cols[0]));
	struct tpart *part = table_add_part(t, NULL, NULL, NULL);
	for (uint32_t r = 0; r < jp->nranks; r++) {
		const struct jobperf_rank *k = &jp->ranks[r];
		struct trow *row = tpart_add_row(t, part, 0);
		trow_count(row, RC_RANK, (uint64_t)k->rank);
		trow_count(row, RC_STEPS, k->perf.counted);
		trow_real(row, RC_IPS, k->perf.ips.avg);
		trow_time(row, RC_BATCH, k->perf.batch_ns.avg);
		trow_time(row, RC_READER, k->perf.reader_ns.avg);
	}
	table_note(t, "Per rank, over its own counted steps (the first %u of its steps skipped, at "
		      "most half): ips in %s, as the job's; batch_cost and reader_cost averages.",
		   jp->perf.skip, perf_ips_unit(&jp->perf));
	table_note(t, "The job's ips is not the sum of the ranks': a job step ends when the last "
		      "rank ends it, so the slowest rank sets the pace.");
	missing_note(t, jp);
	if (jp->left_out)
		table_note(t, "%u part%s of no rank (a launcher, or a trace of a run that was not "
			      "distributed) left out.",
			   jp->left_out, jp->left_out == 1 ? "" : "s");
	return t;
}

/* ---- two jobs compared ----------------------------------------------------- */

#define JD_GROUP(x) x " A / B / Delta / Delta(%)"
static const struct tcol diff_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 10, NULL, 0},
	{"Status", "status", TCOL_TEXT, NULL, 8, NULL, 0},
	{"Steps A", "steps_a", TCOL_COUNT, "Steps A / B", 12, NULL, 0},
	{"Steps B", "steps_b", TCOL_COUNT, "Steps A / B", 12, NULL, 0},
	{"Step A", "step_a", TCOL_TIME, JD_GROUP("Step"), 30, NULL, 0},
	{"Step B", "step_b", TCOL_TIME, JD_GROUP("Step"), 30, NULL, 0},
	{"Step Delta", "step_delta", TCOL_TIME, JD_GROUP("Step"), 30, NULL, 0},
	{"Step Delta(%)", "step_delta_pct", TCOL_PERCENT, JD_GROUP("Step"), 30, NULL, 0},
	{"IPS A", "ips_a", TCOL_REAL, JD_GROUP("IPS"), 30, NULL, 4},
	{"IPS B", "ips_b", TCOL_REAL, JD_GROUP("IPS"), 30, NULL, 4},
	{"IPS Delta", "ips_delta", TCOL_REAL, JD_GROUP("IPS"), 30, NULL, 4},
	{"IPS Delta(%)", "ips_delta_pct", TCOL_PERCENT, JD_GROUP("IPS"), 30, NULL, 0},
	{"Comm A", "comm_a", TCOL_TIME, JD_GROUP("Comm"), 30, NULL, 0},
	{"Comm B", "comm_b", TCOL_TIME, JD_GROUP("Comm"), 30, NULL, 0},
	{"Comm Delta", "comm_delta", TCOL_TIME, JD_GROUP("Comm"), 30, NULL, 0},
	{"Comm Delta(%)", "comm_delta_pct", TCOL_PERCENT, JD_GROUP("Comm"), 30, NULL, 0},
};

enum { JD_NAME, JD_STATUS, JD_STEPS_A, JD_STEPS_B, JD_STEP, JD_IPS = JD_STEP + 4,
       JD_COMM = JD_IPS + 4 };

/* What one side says of one row. */
struct jd_vals {
	int present;
	size_t steps;
	double step_ns, ips, comm_ns; /* comm_ns < 0: none */
};

static struct jd_vals rank_vals(const struct jobperf_rank *r)
{
	if (!r)
		return (struct jd_vals){0};
	return (struct jd_vals){1, r->perf.counted, r->perf.batch_ns.avg, r->perf.ips.avg,
				(double)r->comm_ns / (double)r->perf.counted};
}

/* A, B, Delta and Delta(%) of one figure from column col on. */
static void put_four(struct trow *row, unsigned col, int a_set, double a, int b_set, double b,
		     int time)
{
	void (*put)(struct trow *, unsigned, double) = time ? trow_time : trow_real;
	if (a_set)
		put(row, col, a);
	if (b_set)
		put(row, col + 1, b);
	if (!a_set || !b_set)
		return;
	put(row, col + 2, b - a);
	if (a != 0)
		trow_percent(row, col + 3, 100.0 * (b - a) / a);
}

static void diff_row(struct table *t, struct tpart *part, const char *name,
		     const struct jd_vals *a, const struct jd_vals *b, int ips_comparable)
{
	struct trow *row = tpart_add_row(t, part, 0);
	trow_text(row, JD_NAME, name);
	const char *status = !a->present ? "new"
			     : !b->present ? "vanished"
			     : a->steps == b->steps && a->step_ns == b->step_ns && a->ips == b->ips &&
					       a->comm_ns == b->comm_ns
				     ? "same"
				     : "changed";
	trow_text(row, JD_STATUS, status);
	if (a->present)
		trow_count(row, JD_STEPS_A, a->steps);
	if (b->present)
		trow_count(row, JD_STEPS_B, b->steps);
	put_four(row, JD_STEP, a->present, a->step_ns, b->present, b->step_ns, 1);
	/* ips in two units do not compare: each side's own, no delta */
	if (ips_comparable) {
		put_four(row, JD_IPS, a->present, a->ips, b->present, b->ips, 0);
	} else {
		if (a->present)
			trow_real(row, JD_IPS, a->ips);
		if (b->present)
			trow_real(row, JD_IPS + 1, b->ips);
	}
	put_four(row, JD_COMM, a->present && a->comm_ns >= 0, a->comm_ns,
		 b->present && b->comm_ns >= 0, b->comm_ns, 1);
}

struct table *jobperf_diff_table(const struct jobperf *a, const struct jobperf *b,
				 const char *name_a, const char *name_b)
{
	struct table *t = table_new("ranks", "Ranks Compared", diff_cols,
				    sizeof(diff_cols) / sizeof(diff_cols[0]));
	struct tpart *part = table_add_part(t, NULL, NULL, NULL);
	int comparable = a->perf.by_samples == b->perf.by_samples;
	/* both sides are sorted by rank: a merge */
	uint32_t i = 0, k = 0;
	char name[32];
	while (i < a->nranks || k < b->nranks) {
		const struct jobperf_rank *ra = i < a->nranks ? &a->ranks[i] : NULL;
		const struct jobperf_rank *rb = k < b->nranks ? &b->ranks[k] : NULL;
		if (ra && rb && ra->rank != rb->rank) {
			if (ra->rank < rb->rank)
				rb = NULL;
			else
				ra = NULL;
		}
		struct jd_vals va = rank_vals(ra), vb = rank_vals(rb);
		snprintf(name, sizeof(name), "rank %d", ra ? ra->rank : rb->rank);
		diff_row(t, part, name, &va, &vb, comparable);
		i += ra != NULL;
		k += rb != NULL;
	}
	struct jd_vals ja = {1, a->perf.counted, a->perf.batch_ns.avg, a->perf.ips.avg, -1};
	struct jd_vals jb = {1, b->perf.counted, b->perf.batch_ns.avg, b->perf.ips.avg, -1};
	diff_row(t, part, "job", &ja, &jb, comparable);
	table_note(t, "Ranks matched by rank: A ('%s'), B ('%s'). Delta = B - A; Delta(%%) = Delta "
		      "/ A.",
		   name_a, name_b);
	if (a->nmissing)
		table_note(t, "Missing in A: %s of %d.", a->missing, a->world_size);
	if (b->nmissing)
		table_note(t, "Missing in B: %s of %d.", b->missing, b->world_size);
	table_note(t, "Per rank, over its counted steps (the first %u of its steps skipped, at most "
		      "half): Step = avg batch_cost, IPS = avg ips, Comm = communication per step "
		      "(communication calls on its threads and communication on its GPUs, merged).",
		   a->perf.skip);
	table_note(t, "job: its job steps (step k of every rank, lasting as long as the slowest "
		      "rank's): Step = avg job step, IPS = the job's ips, as gprof-dl bench measures "
		      "them.");
	if (comparable)
		table_note(t, "IPS Unit: %s.", perf_ips_unit(&a->perf));
	else
		table_note(t, "IPS Unit: %s in A, %s in B: not compared.", perf_ips_unit(&a->perf),
			   perf_ips_unit(&b->perf));
	return t;
}
