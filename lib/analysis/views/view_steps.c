/*
 * view_steps.c - the Step Summary: the time of every training step, trace by
 * trace (rank by rank in a job), with the Model phases inside each step, for
 * a reader to plot step time over the run (`gprof-dl report`).
 *
 * The steps are the Perf Summary's (perf.h: ProfileStep ranges of each
 * file's host threads, in start order), the warm-up steps too: Counted says
 * which of a row's steps the Perf Summary counts (--skip-steps, never more
 * than half of a file's steps). A phase's time in a step is the union of
 * that phase's ranges on the file's host threads, clipped to the step;
 * Others is the step less the union of all four phases, never negative.
 *
 * Bounded: a part holds at most STEPS_PART_ROWS rows, and all parts
 * together STEPS_ALL_ROWS (a part at least STEPS_MIN_ROWS); a file with more
 * steps has them bucketed, consecutive steps in equal groups (the last may
 * be smaller), a row holding their means.
 *
 * Sorted (--sorted-by given): a row per step, the longest first by the
 * key (duration; a phase's time with dataloader, forward, backward,
 * optimization or others; the other views' keys sort by duration), ties in
 * step order, and only the as many longest steps as the part may hold rows:
 * so that --top N gives a trace's N slowest steps.
 */
#include "lib/analysis/views/perf.h"
#include "lib/analysis/views/view.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS_PART_ROWS 500u
/* about 430 bytes a row in compact JSON: 4,000 rows stay under 2 MB of a
 * report (formats/html), whatever the steps or ranks (up to 800 ranks) */
#define STEPS_ALL_ROWS 4000u
#define STEPS_MIN_ROWS 5u

enum { SC_NAME, SC_STEP, SC_STEPS, SC_START, SC_DURATION, SC_PHASE,
       SC_OTHERS = SC_PHASE + VIEW_NPHASES, SC_COUNTED };

/* Within a width (table.h): the first step and the count go first (the
 * name says both), then Counted, then Start. */
static const struct tcol steps_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 10, NULL},
	{"Step", "step", TCOL_COUNT, NULL, 0, NULL, 0, NULL, 4, 0},
	{"Steps", "steps", TCOL_COUNT, NULL, 0, NULL, 0, NULL, 4, 0},
	{"Start", "start", TCOL_TIME, NULL, 0, NULL, 0, NULL, 2, 0},
	{"Duration", "duration", TCOL_TIME, NULL, 0, NULL, 0, "Dur", 0, 0},
	{"Dataloader", "dataloader", TCOL_TIME, NULL, 0, NULL, 0, "Data", 0, 0},
	{"Forward", "forward", TCOL_TIME, NULL, 0, NULL, 0, "Fwd", 0, 0},
	{"Backward", "backward", TCOL_TIME, NULL, 0, NULL, 0, "Bwd", 0, 0},
	{"Optimization", "optimization", TCOL_TIME, NULL, 0, NULL, 0, "Opt", 0, 0},
	{"Others", "others", TCOL_TIME, NULL, 0, NULL, 0, NULL, 0, 0},
	{"Counted", "counted", TCOL_COUNT, NULL, 0, NULL, 0, NULL, 3, 0},
};

/* The phases' ranges of one file's host threads, merged: [k] phase k of
 * view_phases, [VIEW_NPHASES] all four. */
struct steps_file {
	struct ivl_set set[VIEW_NPHASES + 1];
};

struct steps_walk {
	const struct store *s;
	struct steps_file *files;
};

static void steps_range(void *ctx, uint32_t track, size_t i, unsigned type)
{
	struct steps_walk *w = ctx;
	const struct store_track *t = &w->s->tracks[track];
	struct steps_file *f = &w->files[t->file];
	for (unsigned k = 0; k < VIEW_NPHASES; k++) {
		if (view_phases[k] != type)
			continue;
		ivl_set_add(&f->set[k], t->start[i], store_ev_end(t, i));
		ivl_set_add(&f->set[VIEW_NPHASES], t->start[i], store_ev_end(t, i));
	}
}

/* A file with steps: its steps v[first .. first + n) of the found ones. */
struct steps_part {
	uint32_t file;
	int64_t rank; /* its rank, else its index among the files */
	size_t first, n;
};

static int part_cmp(const void *x, const void *y)
{
	const struct steps_part *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return (a->file > b->file) - (a->file < b->file);
}

/* One row: the means of steps [from, to) of part p (indices in the file). */
static void steps_row(struct table *t, struct tpart *tp, const struct steps_part *p,
		      const struct perf_found_step *v, const struct steps_file *f, size_t from,
		      size_t to, size_t skipped, uint64_t t0)
{
	double dur = 0, phase[VIEW_NPHASES] = {0}, others = 0;
	uint64_t counted = 0;
	for (size_t k = from; k < to; k++) {
		const struct perf_found_step *st = &v[p->first + k];
		uint64_t end = st->start + st->dur;
		dur += (double)st->dur;
		for (unsigned ph = 0; ph < VIEW_NPHASES; ph++)
			phase[ph] += (double)ivl_set_overlap(&f->set[ph], st->start, end);
		uint64_t covered = ivl_set_overlap(&f->set[VIEW_NPHASES], st->start, end);
		others += (double)(st->dur > covered ? st->dur - covered : 0);
		counted += k >= skipped;
	}
	double n = (double)(to - from);
	char name[64];
	if (to - from == 1)
		snprintf(name, sizeof(name), "step %zu", from);
	else
		snprintf(name, sizeof(name), "steps %zu-%zu", from, to - 1);
	struct trow *r = tpart_add_row(t, tp, 0);
	trow_text(r, SC_NAME, name);
	trow_count(r, SC_STEP, from);
	trow_count(r, SC_STEPS, to - from);
	trow_time(r, SC_START, (double)(v[p->first + from].start - t0));
	trow_time(r, SC_DURATION, dur / n);
	for (unsigned ph = 0; ph < VIEW_NPHASES; ph++)
		trow_time(r, SC_PHASE + ph, phase[ph] / n);
	trow_time(r, SC_OTHERS, others / n);
	trow_count(r, SC_COUNTED, counted);
}

/* A step's figure under the sort key (above). */
static uint64_t step_value(const struct perf_found_step *st, const struct steps_file *f,
			   enum sort_key key)
{
	uint64_t end = st->start + st->dur;
	if (key >= SORT_DATALOADER && key < SORT_DATALOADER + VIEW_NPHASES)
		return ivl_set_overlap(&f->set[key - SORT_DATALOADER], st->start, end);
	if (key == SORT_OTHERS) {
		uint64_t covered = ivl_set_overlap(&f->set[VIEW_NPHASES], st->start, end);
		return st->dur > covered ? st->dur - covered : 0;
	}
	return st->dur;
}

struct step_order {
	uint64_t value;
	size_t step;
};

/* The longest first; ties in step order. */
static int step_order_cmp(const void *x, const void *y)
{
	const struct step_order *a = x, *b = y;
	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	return (a->step > b->step) - (a->step < b->step);
}

/* Part p's steps as rows, sorted (above): at most cap of them. */
static size_t steps_sorted_rows(struct table *t, struct tpart *tp, const struct steps_part *p,
				const struct perf_found_step *v, const struct steps_file *f,
				enum sort_key key, size_t cap, size_t skipped, uint64_t t0)
{
	struct step_order *order = xmalloc((p->n ? p->n : 1) * sizeof(*order));
	for (size_t k = 0; k < p->n; k++)
		order[k] = (struct step_order){step_value(&v[p->first + k], f, key), k};
	qsort(order, p->n, sizeof(*order), step_order_cmp);
	size_t keep = p->n < cap ? p->n : cap;
	for (size_t k = 0; k < keep; k++)
		steps_row(t, tp, p, v, f, order[k].step, order[k].step + 1, skipped, t0);
	free(order);
	return keep;
}

static enum sort_key steps_key(const struct view_opts *o)
{
	return o->sort >= SORT_DURATION && o->sort <= SORT_OTHERS ? o->sort : SORT_DURATION;
}

static void steps_notes(struct table *t, unsigned skip, size_t bucketed, size_t cap)
{
	table_note(t, "A row per training step (ProfileStep range) of each trace, in start order "
		      "(--sorted-by: longest first); Start: since the earliest event of the traces.");
	table_note(t, "Dataloader / Forward / Backward / Optimization: the union of the phase's "
		      "ranges on the trace's host threads, clipped to the step; Others: the step "
		      "less the union of all four.");
	table_note(t, "Counted: the steps the Perf Summary counts (the first %u of each trace "
		      "are warm-up, never more than half; --skip-steps).",
		   skip);
	if (bucketed)
		table_note(t, "%zu trace(s) have more than %zu steps: their consecutive steps are "
			      "bucketed into equal groups (the last may be smaller), a row holding "
			      "the groups' means.",
			   bucketed, cap);
}

struct table *view_steps(const struct view *v, const struct analysis *a,
			 const struct view_opts *o)
{
	const struct store *s = &a->store;
	struct table *t = table_new(v->name, v->title, steps_cols,
				    sizeof(steps_cols) / sizeof(steps_cols[0]));
	t->keep_all = TABLE_KEEP_DATA; /* a series to plot: whole in CSV and JSON */
	table_set_empty(t, "No training steps (ProfileStep ranges) to show.");
	struct steps_walk w = {s, xcalloc(s->nfiles ? s->nfiles : 1, sizeof(*w.files))};
	for (uint32_t f = 0; f < s->nfiles; f++)
		for (unsigned k = 0; k <= VIEW_NPHASES; k++)
			ivl_set_init(&w.files[f].set[k]);
	struct perf_found_step *steps;
	size_t n = perf_find_steps(a, VIEW_PHASE_TYPES, steps_range, &w, &steps);
	for (uint32_t f = 0; f < s->nfiles; f++) {
		for (unsigned k = 0; k <= VIEW_NPHASES; k++) {
			ivl_set_normalize(&w.files[f].set[k]);
			ivl_set_seal(&w.files[f].set[k]);
		}
	}

	/* the files with steps, in rank order */
	struct steps_part *parts = xmalloc((s->nfiles ? s->nfiles : 1) * sizeof(*parts));
	uint32_t nparts = 0;
	int ranks = 1;
	for (size_t at = 0; at < n;) {
		size_t first = at;
		uint32_t f = steps[at].file;
		while (at < n && steps[at].file == f)
			at++;
		int32_t rank = s->files[f].rank;
		ranks &= rank >= 0;
		parts[nparts++] = (struct steps_part){f, rank >= 0 ? rank : (int64_t)f, first,
						       at - first};
	}
	if (!ranks) /* not every trace is a rank: the traces' order */
		for (uint32_t k = 0; k < nparts; k++)
			parts[k].rank = parts[k].file;
	qsort(parts, nparts, sizeof(*parts), part_cmp);

	uint64_t t0 = 0, t1;
	view_span(a, &t0, &t1);
	unsigned skip = PERF_SKIP_OF(o);
	size_t cap = nparts ? STEPS_ALL_ROWS / nparts : STEPS_PART_ROWS;
	if (cap < STEPS_MIN_ROWS)
		cap = STEPS_MIN_ROWS;
	if (cap > STEPS_PART_ROWS)
		cap = STEPS_PART_ROWS;
	size_t bucketed = 0, cut = 0;
	for (uint32_t k = 0; k < nparts; k++) {
		const struct steps_part *p = &parts[k];
		const struct store_file *file = &s->files[p->file];
		char title[1100];
		if (ranks)
			snprintf(title, sizeof(title), "Rank %d", file->rank);
		else
			snprintf(title, sizeof(title), "Trace: %s", file->path);
		struct tpart *tp = table_add_part(t, title, title, NULL);
		size_t per_row = p->n > cap && !o->sort_set ? (p->n + cap - 1) / cap : 1;
		size_t skipped = perf_skipped_of(skip, p->n);
		bucketed += per_row > 1;
		tpart_fact(tp, "rank", p->rank);
		tpart_fact(tp, "steps", (int64_t)p->n);
		tpart_fact(tp, "per_row", (int64_t)per_row);
		tpart_fact(tp, "skipped", (int64_t)skipped);
		if (o->sort_set) {
			cut += steps_sorted_rows(t, tp, p, steps, &w.files[p->file], steps_key(o), cap,
						 skipped, t0) < p->n;
			continue;
		}
		for (size_t from = 0; from < p->n; from += per_row) {
			size_t to = from + per_row < p->n ? from + per_row : p->n;
			steps_row(t, tp, p, steps, &w.files[p->file], from, to, skipped, t0);
		}
	}
	if (nparts)
		steps_notes(t, skip, bucketed, cap);
	if (nparts && o->sort_set)
		table_note(t, "Sorted by %s, longest first%s.", sort_key_names[steps_key(o)],
			   cut ? "; a trace with more steps than its rows shows its longest ones" : "");
	free(parts);
	free(steps);
	for (uint32_t f = 0; f < s->nfiles; f++)
		for (unsigned k = 0; k <= VIEW_NPHASES; k++)
			ivl_set_free(&w.files[f].set[k]);
	free(w.files);
	return t;
}
