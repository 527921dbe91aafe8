/*
 * store_sort.c - putting a track in start order and nesting its events.
 *
 * The collector stores a range when it ends, so a thread's events arrive
 * sorted by end: a range comes after everything it contains. Start order is
 * then a short move back per ancestor (about N x depth element moves), which
 * an insertion sort with a galloping search and memmove does in place, with
 * no scratch memory: the store's budget is under 2x the trace file, and a
 * radix sort's second copy of the arrays would not fit. Input far from that
 * order (an import, say) is detected by the moves it costs and sorted by an
 * in-place introsort instead.
 */
#include "lib/analysis/store.h"

#include "lib/common/error.h"

#include <stdlib.h>
#include <string.h>

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

void store_sort_track(struct store_track *t)
{
	size_t n = t->n;
	uint64_t budget = 16 * (uint64_t)n + 65536, moved = 0;
	for (size_t i = 1; i < n; i++) {
		if (!ev_before(t, i, i - 1))
			continue;
		size_t p = insert_position(t, i);
		moved += i - p;
		if (moved > budget) {
			int depth = 0;
			for (size_t m = n; m; m >>= 1)
				depth += 2;
			intro_sort(t, 0, n, depth);
			return;
		}
		uint64_t s = t->start[i], d = t->dur[i];
		uint32_t k = t->desc[i];
		memmove(t->start + p + 1, t->start + p, (i - p) * sizeof(*t->start));
		memmove(t->dur + p + 1, t->dur + p, (i - p) * sizeof(*t->dur));
		memmove(t->desc + p + 1, t->desc + p, (i - p) * sizeof(*t->desc));
		t->start[p] = s;
		t->dur[p] = d;
		t->desc[p] = k;
	}
}

void store_nest_track(struct store_track *t)
{
	free(t->parent);
	t->parent = xmalloc((t->n ? t->n : 1) * sizeof(*t->parent));
	uint32_t *stack = NULL;
	size_t sp = 0, cap = 0;
	for (size_t i = 0; i < t->n; i++) {
		uint64_t end = store_ev_end(t, i);
		/* The top started no later than i (sorted); it contains i unless it
		 * ends first. One that overlaps i only partly contains nothing that
		 * i does not, so it can go too. */
		while (sp && store_ev_end(t, stack[sp - 1]) < end)
			sp--;
		t->parent[i] = sp ? stack[sp - 1] : STORE_NONE;
		if (store_ev_is_instant(t, i))
			continue;
		if (sp == cap) {
			cap = cap ? cap * 2 : 64;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		stack[sp++] = (uint32_t)i;
	}
	free(stack);
}
