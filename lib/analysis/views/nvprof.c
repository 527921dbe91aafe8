/*
 * nvprof.c - see nvprof.h.
 */
#include "lib/analysis/views/nvprof.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nv_build {
	struct nvprof_table *out;
	uint32_t *by_store_name; /* store name id -> row + 1 */
	size_t cap;
};

static uint32_t nv_row(struct nv_build *b, const char *name)
{
	struct nvprof_table *t = b->out;
	uint32_t id = names_intern(&t->names, name, strlen(name));
	if (id >= b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		while (cap <= id)
			cap *= 2;
		t->rows = xrealloc(t->rows, cap * sizeof(*t->rows));
		memset(t->rows + b->cap, 0, (cap - b->cap) * sizeof(*t->rows));
		b->cap = cap;
	}
	t->rows[id].name = id;
	if (id >= t->n)
		t->n = id + 1;
	return id;
}

/* The row of a store name, through a cache: one string hash per name, not per event. */
static uint32_t nv_row_of_store_name(struct nv_build *b, const struct store *s, uint32_t name)
{
	uint32_t *slot = &b->by_store_name[name];
	if (!*slot)
		*slot = nv_row(b, store_name(s, name)) + 1;
	return *slot - 1;
}

static void nv_begin(struct nv_build *b, const struct analysis *a, struct nvprof_table *out)
{
	memset(out, 0, sizeof(*out));
	names_init(&out->names);
	b->out = out;
	b->cap = 0;
	b->by_store_name = xcalloc(a->store.names.count ? a->store.names.count : 1, sizeof(uint32_t));
	nv_row(b, ""); /* id 0: unused */
}

/* qsort has no context argument in C11: each item carries it. */
struct nv_item {
	struct nvprof_row r;
	const struct names *names;
};

static int nv_item_cmp(const void *x, const void *y)
{
	const struct nv_item *a = x, *b = y;
	if (a->r.t.total != b->r.t.total)
		return a->r.t.total > b->r.t.total ? -1 : 1;
	return strcmp(names_get(a->names, a->r.name), names_get(b->names, b->r.name));
}

static void nv_end(struct nv_build *b)
{
	struct nvprof_table *t = b->out;
	struct nv_item *items = xmalloc((t->n ? t->n : 1) * sizeof(*items));
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (!t->rows[i].t.calls)
			continue;
		items[n++] = (struct nv_item){t->rows[i], &t->names};
		t->total_ns += t->rows[i].t.total;
	}
	qsort(items, n, sizeof(*items), nv_item_cmp);
	for (size_t i = 0; i < n; i++)
		t->rows[i] = items[i].r;
	t->n = n;
	free(items);
	free(b->by_store_name);
}

static void gpu_name(char *buf, size_t size, const struct store_track *t, size_t i,
		     unsigned type, struct store_extra_cursor *xc)
{
	const struct store_ext *x = store_extra_ext(t, store_extra_next(t, xc, i));
	if (type == TRACE_EV_MEMSET) {
		snprintf(buf, size, "[CUDA memset]");
	} else if (x && *gpu_copy_kind_name(x->u.copy.copy_kind)) {
		snprintf(buf, size, "[CUDA memcpy %s]", gpu_copy_kind_name(x->u.copy.copy_kind));
	} else {
		snprintf(buf, size, "[CUDA memcpy]");
	}
}

void nvprof_gpu_activities(const struct analysis *a, struct nvprof_table *out)
{
	const struct store *s = &a->store;
	struct nv_build b;
	nv_begin(&b, a, out);
	struct analysis_gpu_walk w;
	for (analysis_gpu_walk_init(&w, a); analysis_gpu_next(&w);) {
		uint32_t row;
		if (w.type == TRACE_EV_MEMCPY || w.type == TRACE_EV_MEMSET) {
			char name[64];
			gpu_name(name, sizeof(name), w.t, w.i, w.type, &w.xc);
			row = nv_row(&b, name);
		} else {
			row = nv_row_of_store_name(&b, s, s->descs[store_ev_desc(w.t, w.i)].name);
		}
		time_stats_add(&out->rows[row].t, w.t->dur[w.i]);
	}
	nv_end(&b);
}

void nvprof_api_calls(const struct analysis *a, struct nvprof_table *out)
{
	const struct store *s = &a->store;
	struct nv_build b;
	nv_begin(&b, a, out);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST)
			continue;
		struct ivl_cursor at;
		ivl_cursor_init(&at, &a->window);
		uint64_t clipped;
		for (size_t i = 0; i < t->n; i++) {
			if (store_ev_type(s, t, i) != TRACE_EV_CUDA_RUNTIME || store_ev_is_instant(t, i) ||
			    !analysis_clip_next(&at, t, i, &clipped))
				continue;
			uint32_t row = nv_row_of_store_name(&b, s, s->descs[store_ev_desc(t, i)].name);
			time_stats_add(&out->rows[row].t, clipped);
		}
	}
	nv_end(&b);
}

void nvprof_table_free(struct nvprof_table *t)
{
	free(t->rows);
	names_free(&t->names);
	memset(t, 0, sizeof(*t));
}
