/*
 * store_sort.h - one track of the store put in start order, nested, and its
 * foldable events marked (store_sort.c says how, and why in place).
 */
#ifndef GPDL_ANALYSIS_STORE_STORE_SORT_H
#define GPDL_ANALYSIS_STORE_STORE_SORT_H

#include "lib/analysis/store/store.h"

/* Sorting and nesting one track. The sort moves parent[] along with the
 * events when it is allocated (store_finish() carries the extras' positions
 * in it); it returns whether any event moved. */
int store_sort_track(struct store_track *t);
void store_nest_track(struct store_track *t);
/* Marks the events of a nested host track that fold into their parent. */
void store_fold_track(const struct store *s, struct store_track *t);

#endif
