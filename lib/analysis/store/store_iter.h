/*
 * store_iter.h - the events of several tracks in one start order: a k-way
 * merge of the sorted tracks. This is how intervals of one type are united
 * across threads (and, later, streams) without copying or sorting them again.
 *
 * Order: start, then longer first, then track index. Each track's own events
 * come in their stored order, so its parents still precede their children.
 */
#ifndef GPDL_ANALYSIS_STORE_STORE_ITER_H
#define GPDL_ANALYSIS_STORE_STORE_ITER_H

#include "lib/analysis/store/store.h"

struct store_iter_head {
	uint64_t start, dur;
	uint32_t track;
	size_t pos;
};

struct store_iter {
	const struct store *s;
	struct store_iter_head *heap;
	uint32_t n;
};

/* Over the given tracks, or all of them when tracks is NULL. */
void store_iter_init(struct store_iter *it, const struct store *s, const uint32_t *tracks,
		     uint32_t ntracks);
/* The next event: 1 with its track and index, 0 at the end. */
int store_iter_next(struct store_iter *it, uint32_t *track, size_t *index);
void store_iter_free(struct store_iter *it);

#endif
