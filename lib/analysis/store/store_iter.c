/* store_iter.c - the k-way merge of sorted tracks into one start order (store_iter.h). */
#include "lib/analysis/store/store_iter.h"

#include "common/error.h"

#include <stdlib.h>

static inline int head_before(const struct store_iter_head *a, const struct store_iter_head *b)
{
	if (a->start != b->start)
		return a->start < b->start;
	if (a->dur != b->dur)
		return a->dur > b->dur;
	return a->track < b->track;
}

static void sift_down(struct store_iter *it, uint32_t i)
{
	struct store_iter_head *h = it->heap;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= it->n)
			return;
		if (c + 1 < it->n && head_before(&h[c + 1], &h[c]))
			c++;
		if (!head_before(&h[c], &h[i]))
			return;
		struct store_iter_head tmp = h[i];
		h[i] = h[c];
		h[c] = tmp;
		i = c;
	}
}

static void head_load(const struct store *s, struct store_iter_head *h)
{
	const struct store_track *t = &s->tracks[h->track];
	h->start = t->start[h->pos];
	h->dur = t->dur[h->pos];
}

void store_iter_init(struct store_iter *it, const struct store *s, const uint32_t *tracks,
		     uint32_t ntracks)
{
	if (!tracks)
		ntracks = s->ntracks;
	it->s = s;
	it->n = 0;
	it->heap = xmalloc((ntracks ? ntracks : 1) * sizeof(*it->heap));
	for (uint32_t i = 0; i < ntracks; i++) {
		uint32_t tr = tracks ? tracks[i] : i;
		if (s->tracks[tr].n == 0)
			continue;
		struct store_iter_head *h = &it->heap[it->n++];
		h->track = tr;
		h->pos = 0;
		head_load(s, h);
	}
	for (uint32_t i = it->n / 2; i-- > 0;)
		sift_down(it, i);
}

int store_iter_next(struct store_iter *it, uint32_t *track, size_t *index)
{
	if (it->n == 0)
		return 0;
	struct store_iter_head *top = &it->heap[0];
	*track = top->track;
	*index = top->pos;
	if (++top->pos < it->s->tracks[top->track].n) {
		head_load(it->s, top);
	} else {
		it->heap[0] = it->heap[--it->n];
	}
	if (it->n > 1)
		sift_down(it, 0);
	return 1;
}

void store_iter_free(struct store_iter *it)
{
	free(it->heap);
	it->heap = NULL;
	it->n = 0;
}
