/*
 * rowtree.c - see rowtree.h.
 */
#include "lib/analysis/views/rowtree.h"
#include "lib/analysis/views/durhist.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

static uint32_t rt_hash(uint32_t parent, uint32_t name, uint32_t shapes, unsigned kind)
{
	uint64_t k = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull;
	k ^= (uint64_t)shapes * 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(k >> 32) ^ kind;
}

static uint32_t rt_add(struct rt_tree *tr, uint32_t parent, uint32_t name, uint32_t shapes,
		       unsigned kind)
{
	if (tr->n == tr->cap) {
		tr->cap = tr->cap ? tr->cap * 2 : 64;
		tr->nodes = xrealloc(tr->nodes, (size_t)tr->cap * sizeof(*tr->nodes));
	}
	struct rt_node *d = &tr->nodes[tr->n];
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->shapes = shapes;
	d->parent = parent;
	d->kind = (uint8_t)kind;
	ivl_union_init(&d->open, &tr->a->window);
	return tr->n++;
}

static void rt_rehash(struct rt_tree *tr)
{
	uint32_t nslots = tr->nslots ? tr->nslots * 2 : 256;
	free(tr->slots);
	tr->slots = xcalloc(nslots, sizeof(*tr->slots));
	tr->nslots = nslots;
	for (uint32_t id = 1; id < tr->n; id++) {
		const struct rt_node *d = &tr->nodes[id];
		uint32_t i = rt_hash(d->parent, d->name, d->shapes, d->kind) & (nslots - 1);
		while (tr->slots[i])
			i = (i + 1) & (nslots - 1);
		tr->slots[i] = id;
	}
}

uint32_t rt_child(struct rt_tree *tr, uint32_t parent, uint32_t name, enum rt_kind kind)
{
	return rt_child_shapes(tr, parent, name, 0, kind);
}

uint32_t rt_child_shapes(struct rt_tree *tr, uint32_t parent, uint32_t name, uint32_t shapes,
			 enum rt_kind kind)
{
	if ((uint64_t)tr->n * 2 >= tr->nslots)
		rt_rehash(tr);
	uint32_t i = rt_hash(parent, name, shapes, kind) & (tr->nslots - 1);
	for (; tr->slots[i]; i = (i + 1) & (tr->nslots - 1)) {
		const struct rt_node *d = &tr->nodes[tr->slots[i]];
		if (d->parent == parent && d->name == name && d->shapes == shapes && d->kind == kind)
			return tr->slots[i];
	}
	uint32_t id = rt_add(tr, parent, name, shapes, kind);
	tr->slots[i] = id;
	return id;
}

void rt_init(struct rt_tree *tr, const struct analysis *a)
{
	memset(tr, 0, sizeof(*tr));
	tr->a = a;
	tr->names = &a->store.names;
	rt_add(tr, RT_ROOT, 0, 0, RT_RANGE);
}

void rt_hist_count(struct rt_tree *tr, uint32_t id, uint64_t ns)
{
	struct rt_node *d = &tr->nodes[id];
	if (!d->hist)
		d->hist = xcalloc(DURHIST_BUCKETS, sizeof(*d->hist));
	d->hist[durhist_bucket(ns)]++;
}

void rt_free(struct rt_tree *tr)
{
	for (uint32_t i = 0; i < tr->n; i++) {
		free(tr->nodes[i].children);
		free(tr->nodes[i].hist);
	}
	free(tr->nodes);
	free(tr->slots);
	memset(tr, 0, sizeof(*tr));
}

/* ---- order ------------------------------------------------------------------ */

/* qsort has no context argument in C11: each item carries it. */
struct rt_sort_item {
	const struct rt_tree *tr;
	enum sort_key key;
	uint32_t id;
};

static int rt_cmp(const void *x, const void *y)
{
	const struct rt_sort_item *ia = x, *ib = y;
	const struct rt_tree *tr = ia->tr;
	const struct rt_node *a = &tr->nodes[ia->id], *b = &tr->nodes[ib->id];
	static const int rank[] = {[RT_RANGE] = 0, [RT_GPU] = 2, [RT_MARK] = 1};
	if (a->kind != b->kind)
		return rank[a->kind] - rank[b->kind];
	int c;
	if (a->kind == RT_MARK) {
		c = (b->instants > a->instants) - (b->instants < a->instants);
	} else if (a->kind == RT_GPU) {
		enum sort_key k = ia->key == SORT_SELF       ? SORT_GPU_TOTAL
				  : ia->key < SORT_GPU_TOTAL ? ia->key + SORT_GPU_TOTAL
							     : ia->key;
		c = view_stats_cmp(k, &a->cpu, &b->cpu, &a->gpu, &b->gpu);
	} else {
		c = view_stats_cmp(ia->key, &a->cpu, &b->cpu, &a->gpu, &b->gpu);
	}
	if (c)
		return c;
	c = strcmp(names_get(tr->names, a->name), names_get(tr->names, b->name));
	if (!c && a->shapes != b->shapes)
		c = strcmp(names_get(tr->names, a->shapes), names_get(tr->names, b->shapes));
	return c ? c : (ia->id > ib->id) - (ia->id < ib->id);
}

static void rt_sort_children(const struct rt_tree *tr, struct rt_node *d, enum sort_key key)
{
	struct rt_sort_item *items = xmalloc(d->nchildren * sizeof(*items));
	for (uint32_t i = 0; i < d->nchildren; i++)
		items[i] = (struct rt_sort_item){tr, key, d->children[i]};
	qsort(items, d->nchildren, sizeof(*items), rt_cmp);
	for (uint32_t i = 0; i < d->nchildren; i++)
		d->children[i] = items[i].id;
	free(items);
}

void rt_link(struct rt_tree *tr, enum sort_key key)
{
	if (key > SORT_SELF) /* the Step Summary's keys: cpu-total here */
		key = SORT_CPU_TOTAL;
	/* A child is made after its parent: one backward pass settles visibility. */
	for (uint32_t id = tr->n; id-- > 1;) {
		struct rt_node *d = &tr->nodes[id];
		if (d->cpu.calls || d->gpu.calls || d->instants)
			d->visible = 1;
		if (d->visible)
			tr->nodes[d->parent].visible = 1;
	}
	uint32_t *count = xcalloc(tr->n, sizeof(*count));
	for (uint32_t id = 1; id < tr->n; id++)
		if (tr->nodes[id].visible)
			count[tr->nodes[id].parent]++;
	for (uint32_t id = 0; id < tr->n; id++) {
		free(tr->nodes[id].children);
		tr->nodes[id].children = count[id] ? xmalloc(count[id] * sizeof(uint32_t)) : NULL;
		tr->nodes[id].nchildren = 0;
	}
	free(count);
	for (uint32_t id = 1; id < tr->n; id++) {
		struct rt_node *d = &tr->nodes[id], *p = &tr->nodes[d->parent];
		if (d->visible)
			p->children[p->nchildren++] = id;
	}
	for (uint32_t id = 0; id < tr->n; id++)
		if (tr->nodes[id].nchildren > 1)
			rt_sort_children(tr, &tr->nodes[id], key);
}

/* Pre-order without recursion: nesting can be deep. */
void rt_walk(const struct rt_tree *tr, rt_row_fn fn, void *ctx)
{
	struct frame {
		uint32_t node, next;
	} *stack = xmalloc(16 * sizeof(*stack));
	size_t sp = 0, cap = 16;
	stack[sp++] = (struct frame){RT_ROOT, 0};
	while (sp) {
		struct frame *f = &stack[sp - 1];
		const struct rt_node *d = &tr->nodes[f->node];
		if (f->next == d->nchildren) {
			sp--;
			continue;
		}
		uint32_t child = d->children[f->next++];
		fn(ctx, tr, child, (unsigned)(sp - 1));
		if (sp == cap) {
			cap *= 2;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		stack[sp++] = (struct frame){child, 0};
	}
	free(stack);
}

int rt_rows(const struct rt_tree *tr, int with_cpu, view_name_row_fn fn, void *ctx)
{
	const struct rt_node *root = &tr->nodes[RT_ROOT];
	for (uint32_t k = 0; k < root->nchildren; k++) {
		const struct rt_node *d = &tr->nodes[root->children[k]];
		struct view_name_row r = {names_get(tr->names, d->name), with_cpu ? &d->cpu : NULL,
					  &d->gpu, d->hist};
		int rc = fn(ctx, &r);
		if (rc)
			return rc;
	}
	return 0;
}
