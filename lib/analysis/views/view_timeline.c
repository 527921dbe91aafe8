/*
 * view_timeline.c - the Timeline Summary: how busy each GPU was, and how
 * much memory each pool held, over the run, in equal bins, for a reader to
 * plot (`gprof-dl report`).
 *
 * The span is the traces' whole run, from the earliest event to the latest
 * end of one (view_span(): not the window), cut into TIMELINE_BINS equal
 * bins, more in a training run (bins at most a tenth of the mean step,
 * TIMELINE_STEP_BINS a step: a step's rise and fall of memory shows),
 * fewer when the span is short (a bin is at least TIMELINE_MIN_BIN_NS
 * wide) or the series many (TIMELINE_ALL_BINS in all). The last bin may reach past the span's end; nothing happens there.
 *
 * Utilisation: a part per GPU, the union of the work that keeps it busy as
 * the Device view counts it (its kernels and communication, merged across
 * its streams: analysis_gpu_busy()) inside each bin / the bin's width. The
 * bins' busy time adds up to the device's busy time over the span (fact
 * busy_ns), which is the Device view's when the window is the whole run
 * (no steps).
 *
 * Memory: a part per pool of the Memory view (each GPU, then the host), the
 * most bytes in use during each bin, following the Memory view's levels
 * (view_memory.h): the level carried into the bin and each level an event
 * in it left. peak_bytes is the Memory view's peak (in the window).
 */
#include "lib/analysis/views/view.h"
#include "lib/analysis/views/view_memory.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>

#define TIMELINE_BINS 100u
#define TIMELINE_MIN_BIN_NS 1000u
/* All series together: a job of many GPUs gets fewer bins per series (at
 * least TIMELINE_MIN_BINS), so that the table stays bounded. */
#define TIMELINE_ALL_BINS 10000u
#define TIMELINE_MIN_BINS 10u
/* Bins a step at least, in a run with steps (TIMELINE_ALL_BINS allowing). */
#define TIMELINE_STEP_BINS 10u

enum { TC_NAME, TC_START, TC_VALUE };

static const struct tcol busy_cols[] = {
	{"Bin", "name", TCOL_TEXT, NULL, 12, NULL},
	{"Start", "start", TCOL_TIME, NULL, 0, NULL},
	{"Busy (%)", "busy", TCOL_PERCENT, NULL, 0, NULL, 0, "Busy(%)", 0, 0},
};

static const struct tcol memory_cols[] = {
	{"Bin", "name", TCOL_TEXT, NULL, 12, NULL},
	{"Start", "start", TCOL_TIME, NULL, 0, NULL},
	{"In Use", "in_use", TCOL_BYTES, NULL, 0, NULL},
};

struct bins {
	uint64_t t0, t1, width;
	uint32_t n;
	enum time_unit unit;
};

static void bins_init(struct bins *b, const struct analysis *a, uint64_t t0, uint64_t t1,
		      enum time_unit unit, uint32_t series)
{
	uint64_t span = t1 - t0, nbins = TIMELINE_BINS;
	/* a training run: bins of at most a tenth of the mean step, so that a
	 * step's rise and fall of memory shows (within TIMELINE_ALL_BINS) */
	if (a->from_steps && a->steps && a->window_ns) {
		uint64_t step = a->window_ns / a->steps;
		uint64_t want = step >= TIMELINE_STEP_BINS
					? (span + step / TIMELINE_STEP_BINS - 1) / (step / TIMELINE_STEP_BINS)
					: TIMELINE_ALL_BINS;
		if (want > nbins)
			nbins = want;
	}
	uint64_t most = series ? TIMELINE_ALL_BINS / series : TIMELINE_ALL_BINS;
	if (most < nbins)
		nbins = most;
	if (nbins < TIMELINE_MIN_BINS)
		nbins = TIMELINE_MIN_BINS;
	b->t0 = t0;
	b->t1 = t1;
	b->unit = unit;
	b->width = (span + nbins - 1) / nbins;
	if (b->width < TIMELINE_MIN_BIN_NS)
		b->width = TIMELINE_MIN_BIN_NS;
	b->n = (uint32_t)((span + b->width - 1) / b->width);
	if (!b->n)
		b->n = 1;
}

/* ns in the time unit with the decimals that tell one bin from the next:
 * two, more when a bin is under a hundredth of the unit ("+0.0012 ms"). */
static const char *bin_time(char *buf, size_t size, const struct bins *b, uint64_t ns)
{
	double unit = time_unit_ns(b->unit), width = (double)b->width / unit;
	int decimals = 2;
	while (decimals < 9 && width * 100.0 < 1.0) {
		width *= 10.0;
		decimals++;
	}
	snprintf(buf, size, "%.*f %s", decimals, (double)ns / unit, time_unit_name(b->unit));
	return buf;
}

/* A row for bin k: "+12.30 ms", its start since t0. */
static struct trow *bin_row(struct table *t, struct tpart *p, const struct bins *b, uint32_t k)
{
	char name[64], at[48];
	uint64_t from = (uint64_t)k * b->width;
	snprintf(name, sizeof(name), "+%s", bin_time(at, sizeof(at), b, from));
	struct trow *r = tpart_add_row(t, p, 0);
	trow_text(r, TC_NAME, name);
	trow_time(r, TC_START, (double)from);
	return r;
}

static struct tpart *series_part(struct table *t, const char *kind, const char *title,
				 const char *label, const struct tcol *cols, const struct bins *b)
{
	char lb[400];
	snprintf(lb, sizeof(lb), "%s %s", kind, label);
	struct tpart *p = table_add_part(t, title, lb, cols);
	tpart_fact(p, "bin_ns", (int64_t)b->width);
	tpart_fact(p, "bins", b->n);
	return p;
}

/* The busy work of every device, merged: sets[d] sealed. */
static void busy_sets(const struct analysis *a, struct ivl_set *sets)
{
	const struct store *s = &a->store;
	for (uint32_t d = 0; d < s->ndevices; d++)
		ivl_set_init(&sets[d]);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE || t->dev == STORE_NONE)
			continue;
		for (size_t i = 0; i < t->n; i++) {
			unsigned type = store_ev_type(s, t, i);
			if (store_ev_is_instant(t, i) || !trace_event_type_is_device(type) ||
			    !analysis_gpu_busy(a, ti, i, type))
				continue;
			ivl_set_add(&sets[t->dev], t->start[i], store_ev_end(t, i));
		}
	}
	for (uint32_t d = 0; d < s->ndevices; d++) {
		ivl_set_normalize(&sets[d]);
		ivl_set_seal(&sets[d]);
	}
}

static void busy_part(struct table *t, const struct analysis *a, uint32_t d,
		      const struct ivl_set *set, const struct bins *b)
{
	char dev[300], title[400];
	view_device_name(dev, sizeof(dev), a, d);
	snprintf(title, sizeof(title), "%s utilization", dev);
	struct tpart *p = series_part(t, "utilization", title, dev, busy_cols, b);
	tpart_fact(p, "busy_ns", (int64_t)ivl_set_measure(set));
	for (uint32_t k = 0; k < b->n; k++) {
		uint64_t from = b->t0 + (uint64_t)k * b->width;
		struct trow *r = bin_row(t, p, b, k);
		trow_percent(r, TC_VALUE, view_share(ivl_set_overlap(set, from, from + b->width),
						     b->width));
	}
}

static void memory_part(struct table *t, const struct view_memory_pool *pool,
			const struct bins *b)
{
	char title[400];
	snprintf(title, sizeof(title), "Memory in use (%s)", pool->label);
	struct tpart *p = series_part(t, "memory", title, pool->label, memory_cols, b);
	tpart_fact(p, "peak_bytes", pool->peak);
	int64_t carried = 0;
	size_t e = 0;
	for (uint32_t k = 0; k < b->n; k++) {
		uint64_t end = b->t0 + (uint64_t)(k + 1) * b->width;
		int64_t most = carried;
		/* every event from here to the end of the bin (the last bin: all) */
		while (e < pool->n && (pool->levels[e].ts < end || k + 1 == b->n)) {
			carried = pool->levels[e++].in_use;
			if (carried > most)
				most = carried;
		}
		trow_bytes(bin_row(t, p, b, k), TC_VALUE, most);
	}
}

struct table *view_timeline(const struct view *v, const struct analysis *a,
			    const struct view_opts *o)
{
	const struct store *s = &a->store;
	struct table *t = table_new(v->name, v->title, busy_cols,
				    sizeof(busy_cols) / sizeof(busy_cols[0]));
	t->keep_all = TABLE_KEEP_DATA; /* a series to plot: whole in CSV and JSON */
	table_set_empty(t, "No GPU work and no memory allocation events recorded.");
	uint64_t t0, t1;
	struct view_memory_pools pools = {0};
	view_memory_pools(a, &pools);
	if (!view_span(a, &t0, &t1) || (!s->ndevices && !pools.n)) {
		view_memory_pools_free(&pools);
		return t;
	}
	struct bins b;
	bins_init(&b, a, t0, t1, o->unit, s->ndevices + pools.n);
	struct ivl_set *sets = xmalloc((s->ndevices ? s->ndevices : 1) * sizeof(*sets));
	busy_sets(a, sets);
	for (uint32_t d = 0; d < s->ndevices; d++)
		busy_part(t, a, d, &sets[d], &b);
	for (uint32_t d = 0; d < s->ndevices; d++)
		ivl_set_free(&sets[d]);
	free(sets);
	uint32_t npools = pools.n;
	for (uint32_t k = 0; k < npools; k++)
		memory_part(t, &pools.v[k], &b);
	view_memory_pools_free(&pools);
	char w[64];
	table_note(t, "The run, from the earliest event to the latest end of one, in %u bins of "
		      "%s.",
		   b.n, bin_time(w, sizeof(w), &b, b.width));
	if (s->ndevices)
		table_note(t, "Busy (%%): the time at least one kernel or communication of the GPU "
			      "ran, merged across its streams, inside the bin / the bin's width "
			      "(the Device view's utilisation, bin by bin).");
	if (npools)
		table_note(t, "In Use: the most bytes in use during the bin (the Memory view's "
			      "levels); peak_bytes: the Memory view's peak.");
	return t;
}
