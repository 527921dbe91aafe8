/*
 * rowtree.h - rows by name path, as the views with Calls and Total / Avg /
 * Max / Min / Ratio columns aggregate them: a node per (parent, name, kind),
 * so one name can appear under several parents; node 0 is the root.
 *
 * A node gathers the CPU time of its ranges (per call, clipped to the
 * window), their union (for a CPU Ratio that never exceeds 100%), their GPU
 * time (per call: the counted GPU work launched inside), the GPU work counted
 * once however many of its ranges were open around it (gpu_once: for a GPU
 * Ratio that never exceeds 100% when ranges of one name nest), and instants.
 * Kernel rows add the duration-weighted sums of blocks per SM and occupancy.
 *
 * Invariants: a child is made after its parent (ids grow down the tree);
 * after rt_link(), children are sorted and only visible nodes (those with
 * something in the window, or such a descendant) are linked.
 */
#ifndef GPDL_ANALYSIS_ROWTREE_H
#define GPDL_ANALYSIS_ROWTREE_H

#include "lib/analysis/views/view.h"

#define RT_ROOT 0u

enum rt_kind {
	RT_RANGE = 0, /* host ranges of one name */
	RT_MARK = 1,  /* instants of one name */
	RT_GPU = 2,   /* GPU work of one name */
};

struct rt_node {
	uint32_t name;
	uint32_t shapes; /* operators grouped by input shapes: theirs (0: none) */
	uint32_t parent;
	uint8_t kind;
	uint64_t instants;
	struct time_stats cpu, gpu;
	struct ivl_union open;
	uint64_t gpu_once;
	uint64_t stamp; /* the last GPU work counted in gpu_once */
	double w_ns, w_blocks, w_occupancy; /* kernels: weights and weighted sums */
	uint32_t *children;
	uint32_t nchildren;
	int visible;
	uint64_t *hist; /* with rt_tree.hist: the calls by duration (durhist.h) */
};

struct rt_tree {
	const struct analysis *a;
	const struct names *names; /* what node names are ids in: the store's by default */
	struct rt_node *nodes;
	uint32_t n, cap;
	uint32_t *slots;
	uint32_t nslots;
	int hist; /* keep each node's duration histogram (rt_hist_add) */
};

void rt_init(struct rt_tree *tr, const struct analysis *a);
void rt_free(struct rt_tree *tr);
/* The child of parent for (name, kind), made on first use. */
uint32_t rt_child(struct rt_tree *tr, uint32_t parent, uint32_t name, enum rt_kind kind);
/* The same for (name, input shapes, kind): shapes a name id, 0 none. */
uint32_t rt_child_shapes(struct rt_tree *tr, uint32_t parent, uint32_t name, uint32_t shapes,
			 enum rt_kind kind);
/* Counts GPU work number serial once in node id (serials start at 1). */
static inline void rt_gpu_once(struct rt_tree *tr, uint32_t id, uint64_t serial, uint64_t ns)
{
	struct rt_node *d = &tr->nodes[id];
	if (d->stamp != serial) {
		d->stamp = serial;
		d->gpu_once += ns;
	}
}
/* Counts a call of ns in node id's histogram, when the tree keeps them
 * (the views' walks call it for every call: the test stays inline). */
void rt_hist_count(struct rt_tree *tr, uint32_t id, uint64_t ns);
static inline void rt_hist_add(struct rt_tree *tr, uint32_t id, uint64_t ns)
{
	if (tr->hist)
		rt_hist_count(tr, id, ns);
}
/* Links the visible nodes under their parents, sorted by key: host ranges,
 * then marks, then GPU rows; GPU rows by the key's GPU counterpart. */
void rt_link(struct rt_tree *tr, enum sort_key key);

static inline const char *rt_name(const struct rt_tree *tr, uint32_t id)
{
	return names_get(tr->names, tr->nodes[id].name);
}

/* The root's visible children after rt_link(), in order, to fn as
 * view_name_rows (with_cpu: their CPU stats too): 0, or what fn returned
 * first that was not 0. */
int rt_rows(const struct rt_tree *tr, int with_cpu, view_name_row_fn fn, void *ctx);

/* Emits the visible nodes in pre-order (depth 0 under the root). */
typedef void (*rt_row_fn)(void *ctx, const struct rt_tree *tr, uint32_t id, unsigned depth);
void rt_walk(const struct rt_tree *tr, rt_row_fn fn, void *ctx);

#endif
