/* interval.c - the interval algebra of interval.h: sets, unions, intersections, measures. */
#include "lib/analysis/store/interval.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

void ivl_set_init(struct ivl_set *s)
{
	memset(s, 0, sizeof(*s));
}

void ivl_set_free(struct ivl_set *s)
{
	free(s->v);
	free(s->cum);
	memset(s, 0, sizeof(*s));
}

/* A change makes the prefix measures stale. */
static void ivl_set_touch(struct ivl_set *s)
{
	free(s->cum);
	s->cum = NULL;
}

static void ivl_set_push(struct ivl_set *s, uint64_t start, uint64_t end)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n].start = start;
	s->v[s->n].end = end;
	s->n++;
}

void ivl_set_add(struct ivl_set *s, uint64_t start, uint64_t end)
{
	ivl_set_touch(s);
	ivl_set_push(s, start, end < start ? start : end);
}

void ivl_set_add_sorted(struct ivl_set *s, uint64_t start, uint64_t end)
{
	ivl_set_touch(s);
	if (end < start)
		end = start;
	if (s->n && start <= s->v[s->n - 1].end) {
		if (end > s->v[s->n - 1].end)
			s->v[s->n - 1].end = end;
		return;
	}
	ivl_set_push(s, start, end);
}

static int ivl_cmp(const void *a, const void *b)
{
	const struct ivl *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

void ivl_set_normalize(struct ivl_set *s)
{
	ivl_set_touch(s);
	if (s->n < 2)
		return;
	qsort(s->v, s->n, sizeof(*s->v), ivl_cmp);
	size_t out = 0;
	for (size_t i = 1; i < s->n; i++) {
		if (s->v[i].start <= s->v[out].end) {
			if (s->v[i].end > s->v[out].end)
				s->v[out].end = s->v[i].end;
		} else {
			s->v[++out] = s->v[i];
		}
	}
	s->n = out + 1;
}

void ivl_set_seal(struct ivl_set *s)
{
	free(s->cum);
	s->cum = xmalloc((s->n + 1) * sizeof(*s->cum));
	s->cum[0] = 0;
	for (size_t i = 0; i < s->n; i++)
		s->cum[i + 1] = s->cum[i] + (s->v[i].end - s->v[i].start);
}

uint64_t ivl_set_measure(const struct ivl_set *s)
{
	if (s->cum)
		return s->cum[s->n];
	uint64_t m = 0;
	for (size_t i = 0; i < s->n; i++)
		m += s->v[i].end - s->v[i].start;
	return m;
}

/* The measure of s below t: |(-inf, t) ∩ s|. */
static uint64_t ivl_set_measure_below(const struct ivl_set *s, uint64_t t)
{
	size_t lo = 0, hi = s->n; /* first interval with end > t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t m = s->cum[lo];
	if (lo < s->n && t > s->v[lo].start)
		m += t - s->v[lo].start;
	return m;
}

uint64_t ivl_set_overlap(const struct ivl_set *s, uint64_t start, uint64_t end)
{
	if (end <= start || s->n == 0)
		return 0;
	if (!s->cum)
		BUG("ivl_set_overlap on a set that was not sealed");
	if (s->n == 1) { /* the common window: one span, or steps back to back */
		uint64_t a = start > s->v[0].start ? start : s->v[0].start;
		uint64_t b = end < s->v[0].end ? end : s->v[0].end;
		return b > a ? b - a : 0;
	}
	return ivl_set_measure_below(s, end) - ivl_set_measure_below(s, start);
}

int ivl_set_contains(const struct ivl_set *s, uint64_t t)
{
	size_t lo = 0, hi = s->n; /* first interval with end >= t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].end < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo].start <= t;
}

void ivl_set_union(const struct ivl_set *a, const struct ivl_set *b, struct ivl_set *out)
{
	ivl_set_init(out);
	size_t i = 0, j = 0;
	while (i < a->n || j < b->n) {
		const struct ivl *x;
		if (j >= b->n || (i < a->n && a->v[i].start <= b->v[j].start))
			x = &a->v[i++];
		else
			x = &b->v[j++];
		ivl_set_add_sorted(out, x->start, x->end);
	}
	ivl_set_seal(out);
}

void ivl_set_intersect(const struct ivl_set *a, const struct ivl_set *b, struct ivl_set *out)
{
	ivl_set_init(out);
	size_t i = 0, j = 0;
	while (i < a->n && j < b->n) {
		uint64_t s = a->v[i].start > b->v[j].start ? a->v[i].start : b->v[j].start;
		uint64_t e = a->v[i].end < b->v[j].end ? a->v[i].end : b->v[j].end;
		if (s < e)
			ivl_set_add_sorted(out, s, e);
		if (a->v[i].end < b->v[j].end)
			i++;
		else
			j++;
	}
	ivl_set_seal(out);
}

void ivl_set_subtract(const struct ivl_set *a, const struct ivl_set *b, struct ivl_set *out)
{
	ivl_set_init(out);
	size_t j = 0;
	for (size_t i = 0; i < a->n; i++) {
		uint64_t s = a->v[i].start, e = a->v[i].end;
		while (j < b->n && b->v[j].end <= s)
			j++;
		/* b's intervals from j on that start before e cut [s, e) */
		for (size_t q = j; q < b->n && b->v[q].start < e; q++) {
			if (b->v[q].start > s)
				ivl_set_add_sorted(out, s, b->v[q].start);
			if (b->v[q].end > s)
				s = b->v[q].end;
		}
		if (s < e)
			ivl_set_add_sorted(out, s, e);
	}
	ivl_set_seal(out);
}

void ivl_cursor_init(struct ivl_cursor *c, const struct ivl_set *s)
{
	c->s = s;
	c->i = 0;
}

void ivl_union_init(struct ivl_union *u, const struct ivl_set *clip)
{
	memset(u, 0, sizeof(*u));
	u->clip = clip;
	ivl_cursor_init(&u->at, clip);
}

/* The open run, measured inside clip. Runs close in start order, so the
 * cursor serves them; the run still open is measured without moving it. */
static uint64_t ivl_union_run(const struct ivl_union *u)
{
	if (!u->open)
		return 0;
	if (!u->clip)
		return u->run_end - u->run_start;
	return ivl_set_overlap(u->clip, u->run_start, u->run_end);
}

static uint64_t ivl_union_close(struct ivl_union *u)
{
	if (!u->open)
		return 0;
	if (!u->clip)
		return u->run_end - u->run_start;
	return ivl_cursor_overlap(&u->at, u->run_start, u->run_end);
}

void ivl_union_restart(struct ivl_union *u, uint64_t start, uint64_t end)
{
	if (end < start)
		end = start;
	u->measure += ivl_union_close(u);
	u->run_start = start;
	u->run_end = end;
	u->open = 1;
}

uint64_t ivl_union_measure(const struct ivl_union *u)
{
	return u->measure + ivl_union_run(u);
}
