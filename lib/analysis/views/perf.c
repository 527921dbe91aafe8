/*
 * perf.c - the Perf Summary's numbers: steps, their reader and batch costs,
 * ips (perf.h says what each is).
 */
#include "lib/analysis/views/perf.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* The Dataloader ranges of one process (file, pid), merged. */
struct dl_group {
	uint32_t file, pid;
	struct ivl_set set;
};

struct find {
	struct perf_found_step *v;
	size_t n, cap;
};

static int is_step(const struct store *s, const struct store_track *t, size_t i)
{
	return store_ev_type(s, t, i) == TRACE_EV_PROFILE_STEP && !store_ev_is_instant(t, i) &&
	       t->dur[i] > 0 && !(store_ev_flags(t, i) & TRACE_EVF_OPEN_AT_EXIT);
}

/* A step inside another step of its thread is part of that one. */
static int nested_in_step(const struct store *s, const struct store_track *t, size_t i)
{
	for (uint32_t p = t->parent ? t->parent[i] : STORE_NONE; p != STORE_NONE; p = t->parent[p])
		if (is_step(s, t, p))
			return 1;
	return 0;
}

/* A step's samples and its thread's CPU and run-queue time (0: unknown). */
static void step_details(const struct store_track *t, size_t i, struct perf_found_step *f)
{
	const struct store_ext *x = store_ev_ext(t, i);
	f->samples = x ? x->u.step.samples : 0;
	f->cpu_ns = x ? x->u.step.cpu_ns : 0;
	f->runq_ns = x ? x->u.step.runq_ns : 0;
}

static void find_track(struct find *c, const struct store *s, uint32_t ti, unsigned types,
		       perf_range_fn range, void *ctx)
{
	const struct store_track *t = &s->tracks[ti];
	for (size_t i = 0; i < t->n; i++) {
		unsigned type = store_ev_type(s, t, i);
		if (type != TRACE_EV_PROFILE_STEP && ((types >> type) & 1)) {
			if (!store_ev_is_instant(t, i) && t->dur[i] > 0)
				range(ctx, ti, i, type);
			continue;
		}
		if (!is_step(s, t, i) || nested_in_step(s, t, i))
			continue;
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 64;
			c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
		}
		struct perf_found_step *f = &c->v[c->n++];
		*f = (struct perf_found_step){t->file, ti, (uint32_t)i, t->start[i], t->dur[i], 0, 0, 0};
		step_details(t, i, f);
	}
}

static int found_cmp(const void *x, const void *y)
{
	const struct perf_found_step *a = x, *b = y;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

size_t perf_find_steps(const struct analysis *a, unsigned types, perf_range_fn range, void *ctx,
		       struct perf_found_step **steps)
{
	const struct store *s = &a->store;
	struct find c = {0};
	if (!range)
		types = 0;
	for (uint32_t ti = 0; ti < s->ntracks; ti++)
		if (s->tracks[ti].kind == STORE_TRACK_HOST)
			find_track(&c, s, ti, types, range, ctx);
	if (c.n)
		qsort(c.v, c.n, sizeof(*c.v), found_cmp);
	*steps = c.v ? c.v : xmalloc(sizeof(**steps));
	return c.n;
}

struct dl_groups {
	const struct store *s;
	struct dl_group *g;
	uint32_t ng;
	uint32_t last_track, last_group; /* the track seen last, and its group */
};

static uint32_t group_of(struct dl_groups *c, uint32_t track)
{
	if (c->ng && c->last_track == track)
		return c->last_group;
	const struct store_track *t = &c->s->tracks[track];
	uint32_t k = 0;
	while (k < c->ng && !(c->g[k].file == t->file && c->g[k].pid == t->pid))
		k++;
	if (k == c->ng) {
		c->g = xrealloc(c->g, (c->ng + 1) * sizeof(*c->g));
		c->g[k].file = t->file;
		c->g[k].pid = t->pid;
		ivl_set_init(&c->g[k].set);
		c->ng++;
	}
	c->last_track = track;
	c->last_group = k;
	return k;
}

static void dl_range(void *ctx, uint32_t track, size_t i, unsigned type)
{
	(void)type;
	struct dl_groups *c = ctx;
	const struct store_track *t = &c->s->tracks[track];
	uint32_t k = group_of(c, track); /* before c->g is read: it may move */
	ivl_set_add(&c->g[k].set, t->start[i], store_ev_end(t, i));
}

static void stat_add(struct perf_stat *st, double v, int first)
{
	if (first || v > st->max)
		st->max = v;
	if (first || v < st->min)
		st->min = v;
}

void perf_finish(struct perf *p)
{
	p->by_samples = 0;
	p->batch_total_ns = p->reader_total_ns = p->samples_total = 0;
	p->reader_ratio = 0;
	memset(&p->reader_ns, 0, sizeof(p->reader_ns));
	memset(&p->batch_ns, 0, sizeof(p->batch_ns));
	memset(&p->ips, 0, sizeof(p->ips));
	if (!p->counted)
		return;
	int all_samples = 1;
	for (size_t k = 0; k < p->counted; k++) {
		const struct perf_step *s = &p->step[k];
		p->batch_total_ns += s->batch_ns;
		p->reader_total_ns += s->reader_ns;
		p->samples_total += s->samples;
		all_samples &= s->samples > 0;
		stat_add(&p->batch_ns, (double)s->batch_ns, k == 0);
		stat_add(&p->reader_ns, (double)s->reader_ns, k == 0);
	}
	p->by_samples = all_samples;
	for (size_t k = 0; k < p->counted; k++) {
		const struct perf_step *s = &p->step[k];
		double per = (p->by_samples ? (double)s->samples : 1.0) * 1e9 / (double)s->batch_ns;
		stat_add(&p->ips, per, k == 0);
	}
	double n = (double)p->counted, total = (double)p->batch_total_ns;
	p->batch_ns.avg = total / n;
	p->reader_ns.avg = (double)p->reader_total_ns / n;
	p->ips.avg = (p->by_samples ? (double)p->samples_total : n) * 1e9 / total;
	p->reader_ratio = 100.0 * (double)p->reader_total_ns / total;
	if (p->reader_ratio > 100.0)
		p->reader_ratio = 100.0;
}

void perf_compute(struct perf *p, const struct analysis *a, unsigned skip)
{
	const struct store *s = &a->store;
	memset(p, 0, sizeof(*p));
	p->skip = skip;
	struct dl_groups dl = {.s = s};
	struct perf_found_step *v;
	size_t n = perf_find_steps(a, 1u << TRACE_EV_DATALOADER, dl_range, &dl, &v);
	uint32_t *group = xmalloc((n ? n : 1) * sizeof(*group));
	for (size_t k = 0; k < n; k++)
		group[k] = group_of(&dl, v[k].track);
	for (uint32_t k = 0; k < dl.ng; k++) {
		ivl_set_normalize(&dl.g[k].set);
		ivl_set_seal(&dl.g[k].set);
	}
	p->steps = n;
	p->step = xmalloc((n ? n : 1) * sizeof(*p->step));
	size_t at = 0;
	for (uint32_t f = 0; f < s->nfiles; f++) {
		size_t first = at;
		while (at < n && v[at].file == f)
			at++;
		if (at == first && p->files_without_steps++ == 0)
			p->first_without_steps = f;
		size_t skipped = perf_skipped_of(skip, at - first);
		p->skipped += skipped;
		for (size_t k = first + skipped; k < at; k++) {
			const struct perf_found_step *r = &v[k];
			struct perf_step *st = &p->step[p->counted++];
			st->file = r->file;
			st->track = r->track;
			st->start_ns = r->start;
			st->batch_ns = r->dur;
			st->reader_ns = ivl_set_overlap(&dl.g[group[k]].set, r->start, r->start + r->dur);
			st->samples = r->samples;
			st->cpu_ns = r->cpu_ns;
			st->runq_ns = r->runq_ns;
		}
	}
	for (uint32_t k = 0; k < dl.ng; k++)
		ivl_set_free(&dl.g[k].set);
	free(dl.g);
	free(group);
	free(v);
	perf_finish(p);
}

void perf_runq(const struct perf *p, struct perf_runq *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < p->counted; i++) {
		const struct perf_step *s = &p->step[i];
		if (!s->cpu_ns)
			continue;
		out->known++;
		out->runq += s->runq_ns;
		out->cpu += s->cpu_ns;
		out->time += s->batch_ns;
		out->max = s->runq_ns > out->max ? s->runq_ns : out->max;
		out->over += 20 * s->runq_ns >= s->batch_ns;
	}
}

void perf_free(struct perf *p)
{
	free(p->step);
	memset(p, 0, sizeof(*p));
}

const char *perf_ips_unit(const struct perf *p)
{
	return p->by_samples ? "samples/s" : "steps/s";
}

/* ---- the table --------------------------------------------------------- */

enum { PC_NAME, PC_AVG, PC_MAX, PC_MIN };

/* Paddle's layout: an unnamed first column, lower-case avg, max, min, five
 * decimals. The ips row's columns are numbers where the costs' are times. */
static const struct tcol perf_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 17, "", 0},
	{"Avg", "avg", TCOL_TIME, NULL, 17, "avg", 5},
	{"Max", "max", TCOL_TIME, NULL, 17, "max", 5},
	{"Min", "min", TCOL_TIME, NULL, 17, "min", 5},
};
/* The ips row is no time: its own header, in its unit (perf_ips_unit()). */
static const struct tcol ips_cols_samples[] = {
	{"Name", "name", TCOL_TEXT, NULL, 17, "", 0},
	{"Avg", "avg", TCOL_REAL, NULL, 17, "avg(samples/s)", 5},
	{"Max", "max", TCOL_REAL, NULL, 17, "max(samples/s)", 5},
	{"Min", "min", TCOL_REAL, NULL, 17, "min(samples/s)", 5},
};
static const struct tcol ips_cols_steps[] = {
	{"Name", "name", TCOL_TEXT, NULL, 17, "", 0},
	{"Avg", "avg", TCOL_REAL, NULL, 17, "avg(steps/s)", 5},
	{"Max", "max", TCOL_REAL, NULL, 17, "max(steps/s)", 5},
	{"Min", "min", TCOL_REAL, NULL, 17, "min(steps/s)", 5},
};
#define PERF_NCOLS (sizeof(perf_cols) / sizeof(perf_cols[0]))

static void time_row(struct table *t, struct tpart *part, const char *name,
		     const struct perf_stat *st)
{
	struct trow *r = tpart_add_row(t, part, 0);
	trow_text(r, PC_NAME, name);
	trow_time(r, PC_AVG, st->avg);
	trow_time(r, PC_MAX, st->max);
	trow_time(r, PC_MIN, st->min);
}

/* A job's: what a job step is, and its figures. */
static void perf_job_notes(struct table *t, const struct perf *p)
{
	table_note(t,
		   "Steps: %llu ProfileStep ranges of %u rank%s; %llu skipped (the first %u of each "
		   "rank, at most half of its steps); %zu job steps counted.",
		   (unsigned long long)p->steps, p->ranks, p->ranks == 1 ? "" : "s",
		   (unsigned long long)p->skipped, p->skip, p->counted);
	table_note(t, "A job step: the step of the same number (ProfileStep#N) of every rank, for "
		      "the numbers every rank counted.");
	table_note(t, "batch_cost of a job step: from the last rank's end of the step before it (the "
		      "first: from the first rank's start) to the last rank's end of it, so that the "
		      "job steps add up to the job's wall time; reader_cost: the longest of the ranks' "
		      "reader_cost in it. avg over the job steps; max and min per job step. Reader "
		      "Ratio = all reader_cost / all batch_cost.");
	if (p->by_samples)
		table_note(t, "ips: the samples of the ranks' step summed / the job step's batch_cost; "
			      "avg = all samples / all batch_cost: the job's samples over its wall "
			      "time.");
	else
		table_note(t, "ips: 1 / a job step's batch_cost (not every step of every rank says "
			      "how many samples it processed); avg = job steps / all batch_cost.");
}

static void perf_notes(struct table *t, const struct perf *p, uint32_t nfiles)
{
	table_note(t, "Reader Ratio: %.3f%%", p->reader_ratio);
	table_note(t, "IPS Unit: %s", perf_ips_unit(p));
	if (p->ranks) {
		perf_job_notes(t, p);
		return;
	}
	table_note(t,
		   "Steps: %llu ProfileStep ranges; %llu skipped (the first %u of each trace, at most "
		   "half of its steps); %zu counted.",
		   (unsigned long long)p->steps, (unsigned long long)p->skipped, p->skip, p->counted);
	if (nfiles > 1)
		table_note(t, "%u traces pooled: their counted steps are taken together.", nfiles);
	table_note(t, "batch_cost: a step's length; reader_cost: the time a Dataloader range of its "
		      "process was open inside it. avg over the counted steps; max and min per step. "
		      "Reader Ratio = all reader_cost / all batch_cost.");
	if (p->by_samples)
		table_note(t, "ips: a step's samples / its batch_cost; avg = all samples / all "
			      "batch_cost.");
	else
		table_note(t, "ips: 1 / a step's batch_cost (not every step says how many samples it "
			      "processed); avg = counted steps / all batch_cost.");
}

struct table *perf_table(const struct perf *p, const char *id, const char *title,
			 uint32_t nfiles)
{
	struct table *t = table_new(id, title, perf_cols, PERF_NCOLS);
	if (!p->counted) {
		table_set_empty(t, "No training steps (ProfileStep ranges) to measure.");
		return t;
	}
	struct tpart *costs = table_add_part(t, NULL, NULL, NULL);
	tpart_fact(costs, "steps", (int64_t)p->steps);
	tpart_fact(costs, "skipped", (int64_t)p->skipped);
	tpart_fact(costs, "counted", (int64_t)p->counted);
	tpart_fact_real(costs, "reader_ratio", p->reader_ratio);
	time_row(t, costs, "reader_cost", &p->reader_ns);
	time_row(t, costs, "batch_cost", &p->batch_ns);
	char label[64];
	snprintf(label, sizeof(label), "IPS Unit: %s", perf_ips_unit(p));
	struct tpart *ips =
		table_add_part(t, NULL, label, p->by_samples ? ips_cols_samples : ips_cols_steps);
	struct trow *r = tpart_add_row(t, ips, 0);
	trow_text(r, PC_NAME, "ips");
	trow_real(r, PC_AVG, p->ips.avg);
	trow_real(r, PC_MAX, p->ips.max);
	trow_real(r, PC_MIN, p->ips.min);
	perf_notes(t, p, nfiles);
	return t;
}
