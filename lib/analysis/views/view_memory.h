/*
 * view_memory.h - the Memory Summary's figures by operator, for another view
 * (the Operator view) to show beside its own: what view_memory.c finds,
 * summed over the devices (the host's and every GPU's), by operator name.
 *
 *     struct view_memory_ops *mo = view_memory_ops_new(a);
 *     if (view_memory_ops_any(mo))
 *             ... view_memory_op(mo, name)->self_allocated ...
 *     view_memory_ops_free(mo);
 *
 * The definitions are the Memory Summary's (view_memory.c, gprof-dl-summary(1)).
 */
#ifndef GPDL_ANALYSIS_VIEW_MEMORY_H
#define GPDL_ANALYSIS_VIEW_MEMORY_H

#include <stddef.h>
#include <stdint.h>

struct analysis;

struct view_memory_op {
	int64_t allocated, freed;      /* bytes, inside its calls, inner operators included */
	uint64_t allocations;
	int64_t self_allocated, self_freed; /* bytes, directly in it */
	uint64_t self_allocations;
	int64_t peak_increase;         /* bytes: the most of any device, over its calls */
};

struct view_memory_ops;

/* Walks a's Memory events once (a walk like the Memory Summary's). */
struct view_memory_ops *view_memory_ops_new(const struct analysis *a);
/* Whether any allocation or free lies in the window: without, a view leaves
 * its memory columns out. */
int view_memory_ops_any(const struct view_memory_ops *o);
/* The figures of the operator named name (all zero: none recorded). Valid
 * until view_memory_ops_free(). */
const struct view_memory_op *view_memory_op(struct view_memory_ops *o, const char *name);
void view_memory_ops_free(struct view_memory_ops *o);

/* Bytes in use over time, for the Timeline view: per memory pool (the
 * Memory view's devices, in its order: each GPU, then the host), the level
 * after each of its events, in time order, from the same walk. */
struct view_memory_level {
	uint64_t ts;
	int64_t in_use; /* bytes, after the event */
};

struct view_memory_pool {
	char label[300];  /* "GPU0", "Host": the Memory view's part label */
	int32_t device;   /* the GPU's id on its host, -1: host memory */
	uint32_t host;    /* its hostname in the store's names */
	int64_t peak;     /* the Memory view's peak in use (in the window) */
	int shown;        /* the Memory view has a part for it (events in the window) */
	const struct view_memory_level *levels;
	size_t n;
};

struct mem_view;
struct view_memory_pools {
	struct view_memory_pool *v;
	uint32_t n;
	struct mem_view *m; /* what the levels live in */
};

void view_memory_pools(const struct analysis *a, struct view_memory_pools *p);
void view_memory_pools_free(struct view_memory_pools *p);

#endif
