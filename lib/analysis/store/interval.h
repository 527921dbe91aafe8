/*
 * interval.h - the interval algebra every view shares: sets of disjoint time
 * intervals, their union, intersection and measure, and the running union of
 * a stream of intervals in start order, measured inside a window.
 *
 * Intervals are half-open [start, end) in nanoseconds. An ivl_set holds
 * intervals sorted by start, pairwise disjoint and not touching (touching
 * ones are merged), so its measure is the sum of its lengths and never counts
 * a nanosecond twice: that is what makes a ratio against a window <= 100%.
 */
#ifndef GPDL_ANALYSIS_STORE_INTERVAL_H
#define GPDL_ANALYSIS_STORE_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

struct ivl {
	uint64_t start, end;
};

struct ivl_set {
	struct ivl *v;
	size_t n, cap;
	uint64_t *cum; /* cum[i]: measure of v[0..i); built by ivl_set_seal() */
};

void ivl_set_init(struct ivl_set *s);
void ivl_set_free(struct ivl_set *s);
/* Adds [start, end); starts must come in non-decreasing order. */
void ivl_set_add_sorted(struct ivl_set *s, uint64_t start, uint64_t end);
/* Appends [start, end) in any order; ivl_set_normalize() before use. */
void ivl_set_add(struct ivl_set *s, uint64_t start, uint64_t end);
/* Sorts and merges what ivl_set_add() put in. */
void ivl_set_normalize(struct ivl_set *s);
/* Builds the prefix measures that ivl_set_overlap() uses; call after the last add. */
void ivl_set_seal(struct ivl_set *s);
uint64_t ivl_set_measure(const struct ivl_set *s);
/* |[start, end) ∩ s|, in O(log n). The set must be sealed. */
uint64_t ivl_set_overlap(const struct ivl_set *s, uint64_t start, uint64_t end);
/* Whether t lies in the closure of one of the intervals (for instants). */
int ivl_set_contains(const struct ivl_set *s, uint64_t t);
/* out = a ∪ b, out = a ∩ b; out is (re)initialised and sealed. */
void ivl_set_union(const struct ivl_set *a, const struct ivl_set *b, struct ivl_set *out);
void ivl_set_intersect(const struct ivl_set *a, const struct ivl_set *b, struct ivl_set *out);
/* out = a minus b (what of a is not in b); out is (re)initialised and sealed. */
void ivl_set_subtract(const struct ivl_set *a, const struct ivl_set *b, struct ivl_set *out);

/* A place in a sealed set for queries whose starts never decrease: the
 * answers of ivl_set_overlap() and ivl_set_contains(), mostly without a
 * search (a window of thousands of steps, queried by millions of events). */
struct ivl_cursor {
	const struct ivl_set *s;
	size_t i; /* the first interval that ends at or after the last start */
};

void ivl_cursor_init(struct ivl_cursor *c, const struct ivl_set *s);

/* Inlined: every view asks once an event, and mostly finds the answer in
 * the interval it is at. */
static inline void ivl_cursor_seek(struct ivl_cursor *c, uint64_t start)
{
	const struct ivl_set *s = c->s;
	while (c->i < s->n && s->v[c->i].end < start)
		c->i++;
}

static inline uint64_t ivl_cursor_overlap(struct ivl_cursor *c, uint64_t start, uint64_t end)
{
	ivl_cursor_seek(c, start);
	const struct ivl_set *s = c->s;
	if (c->i == s->n || end <= start)
		return 0;
	const struct ivl *v = &s->v[c->i];
	if (end > v->end) /* reaches past this interval: the general case */
		return ivl_set_overlap(s, start, end);
	uint64_t a = start > v->start ? start : v->start;
	return end > a ? end - a : 0;
}

static inline int ivl_cursor_contains(struct ivl_cursor *c, uint64_t t)
{
	ivl_cursor_seek(c, t);
	return c->i < c->s->n && c->s->v[c->i].start <= t;
}

/* The union of a stream of intervals given in non-decreasing start order,
 * measured only inside clip (NULL: everywhere). Holds one open run. */
struct ivl_union {
	uint64_t run_start, run_end;
	int open;
	uint64_t measure; /* of the runs closed so far */
	const struct ivl_set *clip;
	struct ivl_cursor at;
};

void ivl_union_init(struct ivl_union *u, const struct ivl_set *clip);
/* Closes the open run and opens [start, end): ivl_union_add()'s slow path. */
void ivl_union_restart(struct ivl_union *u, uint64_t start, uint64_t end);
/* Inlined: the Overview adds every event of the window to a union or two. */
static inline void ivl_union_add(struct ivl_union *u, uint64_t start, uint64_t end)
{
	if (end < start)
		end = start;
	if (u->open && start <= u->run_end) {
		if (end > u->run_end)
			u->run_end = end;
		return;
	}
	ivl_union_restart(u, start, end);
}
/* The measure of the union inside clip; the union may go on afterwards. */
uint64_t ivl_union_measure(const struct ivl_union *u);

#endif
