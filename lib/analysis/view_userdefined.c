/*
 * view_userdefined.c - the UserDefined Summary: plain NVTX ranges (those
 * outside the gprof-dl domain) by name, as a tree: a row's children are the
 * UserDefined ranges that ran inside it on the same thread, so one name can
 * appear under several parents. All threads merged by default; one part per
 * thread with --thread-sep.
 *
 * A row aggregates by name path: Calls and the CPU Total/Avg/Max/Min of its
 * ranges clipped to the window, and Ratio(%) = the time during which at
 * least one of them was open (their union across threads) / the window,
 * which never exceeds 100% where a sum over threads could. Marks are rows of
 * their own, at the place they were made, with calls and no time.
 */
#include "lib/analysis/view.h"

#include "lib/analysis/store_iter.h"
#include "lib/common/error.h"

#include <stdlib.h>
#include <string.h>

enum { UC_NAME, UC_CALLS, UC_CPU };

static const struct tcol ud_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 6, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	VIEW_CPU_COLUMNS,
};

#define UD_ROOT 0u

struct ud_node {
	uint32_t name;
	uint32_t parent;
	int mark;
	uint64_t instants; /* marks in the window */
	struct time_stats cpu;
	struct ivl_union open; /* when at least one of its ranges is open */
	uint32_t *children;
	uint32_t nchildren;
	int visible;
};

struct ud_tree {
	const struct analysis *a;
	struct ivl_cursor at; /* events come in start order */
	struct ud_node *nodes; /* nodes[0] is the root */
	uint32_t n, cap;
	uint32_t *slots; /* (parent, name, mark) -> node */
	uint32_t nslots;
};

struct ud_open { /* a UserDefined range open on a track, and its node */
	uint32_t event, node;
};

struct ud_stack {
	struct ud_open *v;
	size_t n, cap;
};

static uint32_t ud_hash(uint32_t parent, uint32_t name, int mark)
{
	uint64_t k = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 32) ^ (uint32_t)mark;
}

static uint32_t ud_add_node(struct ud_tree *tr, uint32_t parent, uint32_t name, int mark)
{
	if (tr->n == tr->cap) {
		tr->cap = tr->cap ? tr->cap * 2 : 64;
		tr->nodes = xrealloc(tr->nodes, (size_t)tr->cap * sizeof(*tr->nodes));
	}
	struct ud_node *d = &tr->nodes[tr->n];
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->parent = parent;
	d->mark = mark;
	ivl_union_init(&d->open, &tr->a->window);
	return tr->n++;
}

static void ud_rehash(struct ud_tree *tr)
{
	uint32_t nslots = tr->nslots ? tr->nslots * 2 : 256;
	free(tr->slots);
	tr->slots = xcalloc(nslots, sizeof(*tr->slots));
	tr->nslots = nslots;
	for (uint32_t id = 1; id < tr->n; id++) {
		const struct ud_node *d = &tr->nodes[id];
		uint32_t i = ud_hash(d->parent, d->name, d->mark) & (nslots - 1);
		while (tr->slots[i])
			i = (i + 1) & (nslots - 1);
		tr->slots[i] = id;
	}
}

/* The child of parent for (name, mark), made on first use. */
static uint32_t ud_child(struct ud_tree *tr, uint32_t parent, uint32_t name, int mark)
{
	if ((uint64_t)tr->n * 2 >= tr->nslots)
		ud_rehash(tr);
	uint32_t i = ud_hash(parent, name, mark) & (tr->nslots - 1);
	for (; tr->slots[i]; i = (i + 1) & (tr->nslots - 1)) {
		const struct ud_node *d = &tr->nodes[tr->slots[i]];
		if (d->parent == parent && d->name == name && d->mark == mark)
			return tr->slots[i];
	}
	uint32_t id = ud_add_node(tr, parent, name, mark);
	tr->slots[i] = id;
	return id;
}

static void ud_init(struct ud_tree *tr, const struct analysis *a)
{
	memset(tr, 0, sizeof(*tr));
	tr->a = a;
	ivl_cursor_init(&tr->at, &a->window);
	ud_add_node(tr, UD_ROOT, 0, 0);
}

static void ud_free(struct ud_tree *tr)
{
	for (uint32_t i = 0; i < tr->n; i++)
		free(tr->nodes[i].children);
	free(tr->nodes);
	free(tr->slots);
}

/* The innermost UserDefined range around event i (marks never contain). */
static uint32_t ud_parent_event(const struct store *s, const struct store_track *t, size_t i)
{
	uint32_t p = t->parent[i];
	while (p != STORE_NONE && store_ev_type(s, t, p) != TRACE_EV_USER_DEFINED)
		p = t->parent[p];
	return p;
}

static void ud_event(struct ud_tree *tr, struct ud_stack *st, const struct store_track *t, size_t i)
{
	const struct store *s = &tr->a->store;
	unsigned flags = store_ev_flags(t, i);
	int mark = (flags & TRACE_EVF_MARK) != 0;
	uint32_t p = ud_parent_event(s, t, i);
	/* The ranges still open on this track are p and its UserDefined ancestors. */
	while (st->n && st->v[st->n - 1].event != p)
		st->n--;
	uint32_t parent = st->n ? st->v[st->n - 1].node : UD_ROOT;
	uint32_t node = ud_child(tr, parent, s->descs[store_ev_desc(t, i)].name, mark);
	if (!mark) {
		if (st->n == st->cap) {
			st->cap = st->cap ? st->cap * 2 : 16;
			st->v = xrealloc(st->v, st->cap * sizeof(*st->v));
		}
		st->v[st->n++] = (struct ud_open){(uint32_t)i, node};
	}
	uint64_t clipped;
	if (!analysis_clip_next(&tr->at, t, i, &clipped))
		return;
	struct ud_node *d = &tr->nodes[node];
	if (mark) {
		d->instants++;
		return;
	}
	time_stats_add(&d->cpu, clipped);
	ivl_union_add(&d->open, t->start[i], store_ev_end(t, i));
}

/* Aggregates the UserDefined events of the given tracks (NULL: all). */
static void ud_build(struct ud_tree *tr, const uint32_t *tracks, uint32_t ntracks)
{
	const struct store *s = &tr->a->store;
	struct ud_stack *stacks = xcalloc(s->ntracks ? s->ntracks : 1, sizeof(*stacks));
	struct store_iter it;
	store_iter_init(&it, s, tracks, ntracks);
	uint32_t ti;
	size_t i;
	while (store_iter_next(&it, &ti, &i)) {
		const struct store_track *t = &s->tracks[ti];
		if (store_ev_type(s, t, i) != TRACE_EV_USER_DEFINED ||
		    (store_ev_flags(t, i) & TRACE_EVF_UNBALANCED_POP))
			continue;
		ud_event(tr, &stacks[ti], t, i);
	}
	store_iter_free(&it);
	for (uint32_t k = 0; k < s->ntracks; k++)
		free(stacks[k].v);
	free(stacks);
}

/* ---- from the tree to rows ---------------------------------------------- */

/* qsort has no context argument in C11: each item carries it. */
struct ud_sort_item {
	const struct ud_tree *tr;
	enum sort_key key;
	uint32_t id;
};

static int ud_child_cmp(const void *x, const void *y)
{
	const struct ud_sort_item *ia = x, *ib = y;
	const struct ud_tree *tr = ia->tr;
	const struct ud_node *a = &tr->nodes[ia->id], *b = &tr->nodes[ib->id];
	if (a->mark != b->mark)
		return a->mark - b->mark; /* ranges, then marks */
	int c = a->mark ? (b->instants > a->instants) - (b->instants < a->instants)
			: view_stats_cmp(ia->key, &a->cpu, &b->cpu, NULL, NULL);
	if (c)
		return c;
	c = strcmp(store_name(&tr->a->store, a->name), store_name(&tr->a->store, b->name));
	return c ? c : (ia->id > ib->id) - (ia->id < ib->id);
}

static void ud_sort_children(const struct ud_tree *tr, struct ud_node *d, enum sort_key key)
{
	struct ud_sort_item *items = xmalloc(d->nchildren * sizeof(*items));
	for (uint32_t i = 0; i < d->nchildren; i++)
		items[i] = (struct ud_sort_item){tr, key, d->children[i]};
	qsort(items, d->nchildren, sizeof(*items), ud_child_cmp);
	for (uint32_t i = 0; i < d->nchildren; i++)
		d->children[i] = items[i].id;
	free(items);
}

static void ud_link(struct ud_tree *tr, enum sort_key key)
{
	/* A child is made after its parent: one backward pass settles visibility. */
	for (uint32_t id = tr->n; id-- > 1;) {
		struct ud_node *d = &tr->nodes[id];
		if (d->cpu.calls || d->instants)
			d->visible = 1;
		if (d->visible)
			tr->nodes[d->parent].visible = 1;
	}
	uint32_t *count = xcalloc(tr->n, sizeof(*count));
	for (uint32_t id = 1; id < tr->n; id++)
		if (tr->nodes[id].visible)
			count[tr->nodes[id].parent]++;
	for (uint32_t id = 0; id < tr->n; id++)
		if (count[id])
			tr->nodes[id].children = xmalloc(count[id] * sizeof(uint32_t));
	free(count);
	for (uint32_t id = 1; id < tr->n; id++) {
		struct ud_node *d = &tr->nodes[id], *p = &tr->nodes[d->parent];
		if (d->visible)
			p->children[p->nchildren++] = id;
	}
	for (uint32_t id = 0; id < tr->n; id++)
		if (tr->nodes[id].nchildren > 1)
			ud_sort_children(tr, &tr->nodes[id], key);
}

static void ud_row(struct table *t, struct tpart *p, const struct ud_tree *tr, uint32_t id,
		   unsigned depth)
{
	const struct ud_node *d = &tr->nodes[id];
	struct trow *r = tpart_add_row(t, p, depth);
	trow_text(r, UC_NAME, store_name(&tr->a->store, d->name));
	if (d->mark) {
		r->flags |= TROW_MARK;
		trow_count(r, UC_CALLS, d->instants);
		return;
	}
	trow_count(r, UC_CALLS, d->cpu.calls);
	view_put_stats(r, UC_CPU, &d->cpu, analysis_ratio(tr->a, ivl_union_measure(&d->open)));
}

/* Rows in pre-order, without recursion: nesting can be deep. */
static void ud_rows(struct table *t, struct tpart *p, const struct ud_tree *tr)
{
	struct frame {
		uint32_t node, next;
	} *stack = xmalloc(16 * sizeof(*stack));
	size_t sp = 0, cap = 16;
	stack[sp++] = (struct frame){UD_ROOT, 0};
	while (sp) {
		struct frame *f = &stack[sp - 1];
		const struct ud_node *d = &tr->nodes[f->node];
		if (f->next == d->nchildren) {
			sp--;
			continue;
		}
		uint32_t child = d->children[f->next++];
		ud_row(t, p, tr, child, (unsigned)(sp - 1));
		if (sp == cap) {
			cap *= 2;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		stack[sp++] = (struct frame){child, 0};
	}
	free(stack);
}

static void ud_part(struct table *t, const struct analysis *a, const struct view_opts *o,
		    const struct store_track *track, const uint32_t *tracks, uint32_t ntracks)
{
	struct ud_tree tr;
	ud_init(&tr, a);
	ud_build(&tr, tracks, ntracks);
	ud_link(&tr, o->sort);
	if (tr.nodes[UD_ROOT].nchildren) {
		char title[512];
		struct tpart *p;
		if (track) {
			view_thread_title(title, sizeof(title), a, track);
			p = table_add_part(t, title, NULL, NULL);
			p->has_thread = 1;
			p->pid = track->pid;
			p->tid = track->tid;
			p->thread_name = xstrdup(store_name(&a->store, track->name));
		} else {
			p = table_add_part(t, "Thread: All threads merged", NULL, NULL);
		}
		ud_rows(t, p, &tr);
	}
	ud_free(&tr);
}

struct table *view_userdefined(const struct view *v, const struct analysis *a,
			       const struct view_opts *o)
{
	struct table *t = table_new(v->name, v->title, ud_cols, sizeof(ud_cols) / sizeof(ud_cols[0]));
	if (o->thread_sep) {
		for (uint32_t i = 0; i < a->store.ntracks; i++)
			if (a->store.tracks[i].kind == STORE_TRACK_HOST)
				ud_part(t, a, o, &a->store.tracks[i], &i, 1);
	} else {
		ud_part(t, a, o, NULL, NULL, 0);
	}
	table_set_empty(t, "No UserDefined ranges in the window.");
	const char *window = a->from_steps ? "the ProfileStep ranges" : "the whole run";
	table_note(t, "Children ran inside their parent, on the same thread. Times are clipped to the "
		      "window: %s.",
		   window);
	table_note(t, "CPU Ratio(%%) = time during which at least one of the row's ranges was open, "
		      "merged across threads, / the window:");
	table_note(t, "it never exceeds 100%%, while CPU Total adds up every call.");
	table_note(t, "Rows ending in \"(mark)\" count instants (nvtxMark): calls, no time.");
	return t;
}
