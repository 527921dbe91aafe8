/*
 * store_sort.c - putting a track in start order and nesting its events.
 *
 * The collector stores a range when it ends, so a thread's events arrive
 * sorted by end: a range comes after everything it contains. Start order is
 * then a short move back per ancestor (about N x depth element moves), which
 * an insertion sort with a galloping search and memmove does in place, with
 * no scratch memory: the store's budget is under 2x the trace file, and a
 * radix sort's second copy of the arrays would not fit.
 *
 * GPU streams (and the API calls of a host thread) arrive differently: CUPTI
 * hands its records over buffer by buffer, so a track is sorted runs of
 * thousands of events whose times interleave. Insertion costs a run's length
 * per event there; when its moves exceed a budget, a natural merge sort takes
 * over: runs (extended to MERGE_MINRUN by insertion) merged pairwise, each
 * merge galloping past the part of either run already in place, so that its
 * scratch is only the overlap of the two (a few runs' worth). Input far from
 * any order (an import, say), whose overlaps would need more scratch than an
 * eighth of the track, is sorted by an in-place introsort instead.
 *
 * When parent[] is allocated before the sort, it moves with the events: the
 * store carries each event's extra index in it (store.c).
 */
#include "lib/analysis/store/store.h"
#include "lib/analysis/store/store_sort.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

#define MERGE_MINRUN 32
/* The merge sort's scratch, at most: an eighth of the track's events (3
 * bytes an event), and never less than 65536 events (1.5 MB). */
#define MERGE_SCRATCH_MIN 65536u

/* Whether event a goes before event b: earlier start, or longer at a tie. */
static inline int ev_before(const struct store_track *t, size_t a, size_t b)
{
	return t->start[a] < t->start[b] || (t->start[a] == t->start[b] && t->dur[a] > t->dur[b]);
}

static inline void ev_swap(struct store_track *t, size_t a, size_t b)
{
	uint64_t s = t->start[a], d = t->dur[a];
	uint32_t k = t->desc[a];
	t->start[a] = t->start[b];
	t->dur[a] = t->dur[b];
	t->desc[a] = t->desc[b];
	t->start[b] = s;
	t->dur[b] = d;
	t->desc[b] = k;
	if (t->parent) {
		uint32_t p = t->parent[a];
		t->parent[a] = t->parent[b];
		t->parent[b] = p;
	}
}

/* ---- in-place introsort, for input far from sorted --------------------- */

static void sift_down(struct store_track *t, size_t base, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && ev_before(t, base + child, base + child + 1))
			child++;
		if (!ev_before(t, base + root, base + child))
			return;
		ev_swap(t, base + root, base + child);
		root = child;
	}
}

static void heap_sort(struct store_track *t, size_t lo, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(t, lo, i, n);
	for (size_t end = n; end-- > 1;) {
		ev_swap(t, lo, lo + end);
		sift_down(t, lo, 0, end);
	}
}

static void small_sort(struct store_track *t, size_t lo, size_t hi)
{
	for (size_t i = lo + 1; i < hi; i++)
		for (size_t j = i; j > lo && ev_before(t, j, j - 1); j--)
			ev_swap(t, j, j - 1);
}

static void intro_sort(struct store_track *t, size_t lo, size_t hi, int depth)
{
	while (hi - lo > 16) {
		if (depth-- == 0) {
			heap_sort(t, lo, hi - lo);
			return;
		}
		size_t mid = lo + (hi - lo) / 2;
		/* median of three into lo */
		if (ev_before(t, mid, lo))
			ev_swap(t, mid, lo);
		if (ev_before(t, hi - 1, lo))
			ev_swap(t, hi - 1, lo);
		if (ev_before(t, hi - 1, mid))
			ev_swap(t, hi - 1, mid);
		ev_swap(t, lo, mid);
		size_t i = lo, j = hi;
		for (;;) { /* Hoare partition around t[lo] */
			do
				i++;
			while (i < hi && ev_before(t, i, lo));
			do
				j--;
			while (ev_before(t, lo, j));
			if (i >= j)
				break;
			ev_swap(t, i, j);
		}
		ev_swap(t, lo, j);
		if (j - lo < hi - j - 1) {
			intro_sort(t, lo, j, depth);
			lo = j + 1;
		} else {
			intro_sort(t, j + 1, hi, depth);
			hi = j;
		}
	}
	small_sort(t, lo, hi);
}

/* ---- natural merge sort, for sorted runs that interleave -------------- */

/* The columns of a track, or of the scratch: one event is one index in each. */
struct cols {
	uint64_t *start, *dur;
	uint32_t *desc, *parent; /* parent: NULL when nothing is carried */
};

static inline int col_before(const struct cols *a, size_t i, const struct cols *b, size_t j)
{
	return a->start[i] < b->start[j] || (a->start[i] == b->start[j] && a->dur[i] > b->dur[j]);
}

static void col_copy(const struct cols *d, size_t i, const struct cols *s, size_t j, size_t n)
{
	if (n <= 8) {
		for (size_t x = 0; x < n; x++) {
			d->start[i + x] = s->start[j + x];
			d->dur[i + x] = s->dur[j + x];
			d->desc[i + x] = s->desc[j + x];
			if (d->parent)
				d->parent[i + x] = s->parent[j + x];
		}
		return;
	}
	memcpy(d->start + i, s->start + j, n * sizeof(*d->start));
	memcpy(d->dur + i, s->dur + j, n * sizeof(*d->dur));
	memcpy(d->desc + i, s->desc + j, n * sizeof(*d->desc));
	if (d->parent)
		memcpy(d->parent + i, s->parent + j, n * sizeof(*d->parent));
}

struct scratch {
	struct cols c;
	size_t cap, max;
	int carry;
};

static int scratch_reserve(struct scratch *sc, size_t n)
{
	if (n <= sc->cap)
		return 1;
	if (n > sc->max)
		return 0;
	size_t cap = sc->cap ? sc->cap : 1024;
	while (cap < n)
		cap *= 2;
	sc->c.start = xrealloc(sc->c.start, cap * sizeof(*sc->c.start));
	sc->c.dur = xrealloc(sc->c.dur, cap * sizeof(*sc->c.dur));
	sc->c.desc = xrealloc(sc->c.desc, cap * sizeof(*sc->c.desc));
	if (sc->carry)
		sc->c.parent = xrealloc(sc->c.parent, cap * sizeof(*sc->c.parent));
	sc->cap = cap;
	return 1;
}

/* Searches in a sorted stretch [lo, hi) of c for the first position where a
 * predicate about the key event (kc, k) turns true:
 *   AFTER_KEY:   the key goes before the event there (c[p] > key)
 *   NOT_BEFORE:  the event there does not go before the key (c[p] >= key)
 * Exponential probes from the end the answer is expected near, then
 * bisection: a merge of mostly ordered runs finds long stretches in
 * O(log length). */
enum { AFTER_KEY, NOT_BEFORE };

static inline int pred(int which, const struct cols *c, size_t p, const struct cols *kc, size_t k)
{
	return which == AFTER_KEY ? col_before(kc, k, c, p) : !col_before(c, p, kc, k);
}

static size_t first_true(const struct cols *c, size_t lo, size_t hi, const struct cols *kc,
			 size_t k, int which, int from_end)
{
	size_t step = 1;
	if (from_end) {
		while (hi > lo) {
			size_t probe = hi - lo > step ? hi - step : lo;
			if (!pred(which, c, probe, kc, k)) {
				lo = probe + 1;
				break;
			}
			hi = probe;
			step *= 2;
		}
	} else {
		while (lo < hi) {
			size_t probe = hi - lo > step ? lo + step - 1 : hi - 1;
			if (pred(which, c, probe, kc, k)) {
				hi = probe;
				break;
			}
			lo = probe + 1;
			step *= 2;
		}
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pred(which, c, mid, kc, k))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Where runs interleave finely, stretches are a few events long: found by
 * looking at each (no search) and moved one by one (no memmove calls);
 * past GALLOP_AFTER events, the search takes over. */
#define GALLOP_AFTER 8

/* The first q in [j, hi) where the predicate holds, expected near j. */
static inline size_t stretch_up(const struct cols *c, size_t j, size_t hi, const struct cols *kc,
				size_t k, int which)
{
	size_t q = j, lim = hi - j > GALLOP_AFTER ? j + GALLOP_AFTER : hi;
	while (q < lim && !pred(which, c, q, kc, k))
		q++;
	return q == lim && q < hi ? first_true(c, q, hi, kc, k, which, 0) : q;
}

/* The first p in [lo, i) where the predicate holds, expected near i. */
static inline size_t stretch_down(const struct cols *c, size_t lo, size_t i,
				  const struct cols *kc, size_t k, int which)
{
	size_t p = i, lim = i - lo > GALLOP_AFTER ? i - GALLOP_AFTER : lo;
	while (p > lim && pred(which, c, p - 1, kc, k))
		p--;
	return p == lim && p > lo ? first_true(c, lo, p, kc, k, which, 1) : p;
}

static inline void col_put(const struct cols *d, size_t i, const struct cols *s, size_t j)
{
	d->start[i] = s->start[j];
	d->dur[i] = s->dur[j];
	d->desc[i] = s->desc[j];
	if (d->parent)
		d->parent[i] = s->parent[j];
}

static void col_move(const struct cols *c, size_t to, size_t from, size_t n)
{
	if (n <= GALLOP_AFTER) { /* in the direction that never overwrites what is still to move */
		if (to < from)
			for (size_t x = 0; x < n; x++)
				col_put(c, to + x, c, from + x);
		else
			for (size_t x = n; x-- > 0;)
				col_put(c, to + x, c, from + x);
		return;
	}
	memmove(c->start + to, c->start + from, n * sizeof(*c->start));
	memmove(c->dur + to, c->dur + from, n * sizeof(*c->dur));
	memmove(c->desc + to, c->desc + from, n * sizeof(*c->desc));
	if (c->parent)
		memmove(c->parent + to, c->parent + from, n * sizeof(*c->parent));
}

/* Merges the sorted runs [a, m) and [m, b), stably, moving stretches that
 * stay together as blocks. 0 when the scratch it needs is over the limit
 * (nothing has moved then). */
static int merge_runs(const struct cols *c, struct scratch *sc, size_t a, size_t m, size_t b)
{
	if (!col_before(c, m, c, m - 1))
		return 1; /* already in order */
	a = first_true(c, a, m, c, m, AFTER_KEY, 1);      /* A[.., a) stays */
	b = first_true(c, m, b, c, m - 1, NOT_BEFORE, 0); /* B[b, ..) stays */
	size_t na = m - a, nb = b - m;
	if (!scratch_reserve(sc, na < nb ? na : nb))
		return 0;
	const struct cols *s = &sc->c;
	if (na <= nb) { /* A' to scratch, merge forward */
		col_copy(s, 0, c, a, na);
		size_t i = 0, j = m, k = a;
		while (i < na && j < b) {
			/* B's events before S[i] move down as a block, then S's not after B[j] */
			size_t q = stretch_up(c, j, b, s, i, NOT_BEFORE);
			col_move(c, k, j, q - j);
			k += q - j;
			j = q;
			if (j == b)
				break;
			size_t p = stretch_up(s, i, na, c, j, AFTER_KEY);
			col_copy(c, k, s, i, p - i);
			k += p - i;
			i = p;
		}
		if (i < na)
			col_copy(c, k, s, i, na - i);
	} else { /* B' to scratch, merge backward */
		col_copy(s, 0, c, m, nb);
		size_t i = m, j = nb, k = b;
		while (i > a && j > 0) {
			/* A's events after S[j-1] move up as a block, then S's not before A[i-1] */
			size_t p = stretch_down(c, a, i, s, j - 1, AFTER_KEY);
			col_move(c, k - (i - p), p, i - p);
			k -= i - p;
			i = p;
			if (i == a)
				break;
			size_t q = stretch_down(s, 0, j, c, i - 1, NOT_BEFORE);
			col_copy(c, k - (j - q), s, q, j - q);
			k -= j - q;
			j = q;
		}
		if (j > 0)
			col_copy(c, a, s, 0, j);
	}
	return 1;
}

/* Sorts [lo, hi) of a short stretch by binary insertion. */
static void insertion_run(const struct cols *c, size_t lo, size_t sorted, size_t hi)
{
	for (size_t i = sorted; i < hi; i++) {
		if (!col_before(c, i, c, i - 1))
			continue;
		size_t p = first_true(c, lo, i, c, i, AFTER_KEY, 1);
		uint64_t st = c->start[i], du = c->dur[i];
		uint32_t de = c->desc[i], pa = c->parent ? c->parent[i] : 0;
		memmove(c->start + p + 1, c->start + p, (i - p) * sizeof(*c->start));
		memmove(c->dur + p + 1, c->dur + p, (i - p) * sizeof(*c->dur));
		memmove(c->desc + p + 1, c->desc + p, (i - p) * sizeof(*c->desc));
		c->start[p] = st;
		c->dur[p] = du;
		c->desc[p] = de;
		if (c->parent) {
			memmove(c->parent + p + 1, c->parent + p, (i - p) * sizeof(*c->parent));
			c->parent[p] = pa;
		}
	}
}

/* 0 when a merge would need more scratch than allowed: the caller sorts
 * another way (the events are a permutation of the input either way). */
static int merge_sort(struct store_track *t)
{
	const struct cols c = {t->start, t->dur, t->desc, t->parent};
	size_t n = t->n, nruns = 0;
	size_t *runs = xmalloc((n / MERGE_MINRUN + 2) * sizeof(*runs)); /* run starts */
	for (size_t i = 0; i < n;) {
		size_t end = i + 1;
		while (end < n && !col_before(&c, end, &c, end - 1))
			end++;
		if (end - i < MERGE_MINRUN) {
			size_t ext = i + MERGE_MINRUN < n ? i + MERGE_MINRUN : n;
			insertion_run(&c, i, end, ext);
			end = ext;
		}
		runs[nruns++] = i;
		i = end;
	}
	runs[nruns] = n;
	struct scratch sc = {.carry = t->parent != NULL,
			     .max = n / 8 > MERGE_SCRATCH_MIN ? n / 8 : MERGE_SCRATCH_MIN};
	int ok = 1;
	while (ok && nruns > 1) {
		size_t out = 0;
		for (size_t r = 0; r < nruns; r += 2) {
			if (r + 1 < nruns && ok)
				ok = merge_runs(&c, &sc, runs[r], runs[r + 1], runs[r + 2]);
			runs[out++] = runs[r];
		}
		runs[out] = n;
		nruns = out;
	}
	free(runs);
	free(sc.c.start);
	free(sc.c.dur);
	free(sc.c.desc);
	free(sc.c.parent);
	return ok;
}

/* ---- insertion by galloping search, for the usual near order ----------- */

/* The first position p in [0, i) where event i goes before event p; event i
 * is known to go before event i - 1. Gallops back from i - 1, then bisects. */
static size_t insert_position(const struct store_track *t, size_t i)
{
	size_t hi = i - 1, lo = 0, step = 1;
	while (step <= hi) {
		size_t probe = hi - step;
		if (!ev_before(t, i, probe)) {
			lo = probe + 1;
			break;
		}
		hi = probe;
		step *= 2;
	}
	while (lo < hi) { /* ev_before(i, hi) holds */
		size_t mid = lo + (hi - lo) / 2;
		if (ev_before(t, i, mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	return hi;
}

int store_sort_track(struct store_track *t)
{
	size_t n = t->n;
	uint64_t moved = 0;
	for (size_t i = 1; i < n; i++) {
		if (!ev_before(t, i, i - 1))
			continue;
		size_t p = insert_position(t, i);
		moved += i - p;
		/* About N x depth moves in all, at any point so far: more (runs that
		 * interleave) go to the merge sort at once. The last event may move
		 * back over everything (a range around the whole run). */
		if (moved > 16 * (uint64_t)i + 65536 + (i - p)) {
			if (merge_sort(t))
				return 1;
			int depth = 0;
			for (size_t m = n; m; m >>= 1)
				depth += 2;
			intro_sort(t, 0, n, depth);
			return 1;
		}
		uint64_t s = t->start[i], d = t->dur[i];
		uint32_t k = t->desc[i];
		memmove(t->start + p + 1, t->start + p, (i - p) * sizeof(*t->start));
		memmove(t->dur + p + 1, t->dur + p, (i - p) * sizeof(*t->dur));
		memmove(t->desc + p + 1, t->desc + p, (i - p) * sizeof(*t->desc));
		t->start[p] = s;
		t->dur[p] = d;
		t->desc[p] = k;
		if (t->parent) {
			uint32_t c = t->parent[i];
			memmove(t->parent + p + 1, t->parent + p, (i - p) * sizeof(*t->parent));
			t->parent[p] = c;
		}
	}
	return moved > 0;
}

void store_nest_track(struct store_track *t)
{
	t->parent = xrealloc(t->parent, (t->n ? t->n : 1) * sizeof(*t->parent));
	uint32_t *stack = NULL;
	size_t sp = 0, cap = 0;
	for (size_t i = 0; i < t->n; i++) {
		uint64_t end = store_ev_end(t, i);
		/* The top started no later than i (sorted); it contains i unless it
		 * ends first. One that overlaps i only partly contains nothing that
		 * i does not, so it can go too. */
		while (sp && store_ev_end(t, stack[sp - 1]) < end)
			sp--;
		/* A range of no duration right at a range's end starts after it
		 * (ranges are half-open): torch 1.13's whole microseconds put the
		 * next short call of a sibling there, no call of it. */
		size_t k = sp;
		if (t->dur[i] == 0 && !store_ev_is_instant(t, i))
			while (k && store_ev_end(t, stack[k - 1]) <= t->start[i] &&
			       t->dur[stack[k - 1]] > 0)
				k--;
		t->parent[i] = k ? stack[k - 1] : STORE_NONE;
		/* A range of no duration contains nothing (torch's rule): torch
		 * 1.13 writes whole microseconds, and short siblings that share
		 * a timestamp with duration 0 are not each other's calls. */
		if (store_ev_is_instant(t, i) || t->dur[i] == 0)
			continue;
		if (sp == cap) {
			cap = cap ? cap * 2 : 64;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		stack[sp++] = (uint32_t)i;
	}
	free(stack);
}

/* A child that keeps its parent from folding another: a range, not an
 * instant (a mark, an unbalanced pop, an allocation or a free). */
static int fold_counts(const struct store *s, const struct store_track *t, size_t i)
{
	return !store_ev_is_instant(t, i) && store_ev_type(s, t, i) != TRACE_EV_MEMORY;
}

static int bit_get(const uint8_t *v, size_t i)
{
	return (v[i >> 3] >> (i & 7)) & 1;
}

static void bit_set(uint8_t *v, size_t i)
{
	v[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* One pass counts each range's child ranges (one, or more: two bitmaps, a
 * quarter of a byte an event), a second folds the only children of their
 * name. Folding an event lifts its children to its parent, so a chain folds
 * in this one pass: each of its inner links is the only child of the link
 * above it, which is what this pass tests, and remains so after the fold. */
void store_fold_track(const struct store *s, struct store_track *t)
{
	free(t->folded);
	t->folded = NULL;
	if (t->kind != STORE_TRACK_HOST || t->n < 2)
		return;
	size_t bytes = (t->n + 7) / 8;
	uint8_t *one = xcalloc(2 * bytes, 1), *more = one + bytes;
	for (size_t i = 0; i < t->n; i++) {
		uint32_t p = t->parent[i];
		if (p == STORE_NONE || !fold_counts(s, t, i))
			continue;
		if (bit_get(one, p))
			bit_set(more, p);
		bit_set(one, p);
	}
	uint8_t *folded = NULL;
	for (size_t i = 0; i < t->n; i++) {
		uint32_t p = t->parent[i];
		if (p == STORE_NONE || bit_get(more, p) || store_ev_desc(t, p) != store_ev_desc(t, i) ||
		    !fold_counts(s, t, i))
			continue;
		if (!folded)
			folded = xcalloc(bytes, 1);
		bit_set(folded, i);
	}
	free(one);
	t->folded = folded;
}
