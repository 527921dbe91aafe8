/*
 * hostwalk.c - see hostwalk.h.
 *
 * A frame is popped when an event of its thread ends after it: the rule
 * store_nest_track() nests by, applied to the followed ranges only, which
 * gives the same containment (the ends on the store's stack never increase
 * upwards, so a followed range the store keeps open is kept open here too).
 * A popped frame hands its GPU time to the frame below it.
 */
#include "lib/analysis/store/hostwalk.h"
#include "lib/analysis/store/store_sort.h"

#include "common/error.h"

#include <stdlib.h>

#define HW_PEERS_MAX 64u

int hostwalk_is_instant(const struct store *s, const struct store_track *t, size_t i)
{
	return store_ev_is_instant(t, i) || store_ev_type(s, t, i) == TRACE_EV_MEMORY;
}

struct hw_track {
	struct hw_stack st;
	size_t next_launch, next_xlaunch;
	struct ivl_cursor at;     /* the window, for this thread's starts */
	struct store_extra_cursor xc;
};

struct hw_walk {
	const struct analysis *a;
	/* across_threads: by track, the first of its process's threads that
	 * hold followed events in peer[] (their count in npeer[]); else NULL */
	uint32_t *peer, *peer_at, *npeer;
	const struct hw_visitor *v;
	void *ctx;
	uint8_t *want;            /* by desc: the type is visited */
	struct hw_track *ht;      /* by store track */
	uint8_t *walked;          /* by store track: this walk's */
};

static void hw_pop(struct hw_walk *w, struct hw_stack *st)
{
	struct hw_frame f = st->v[--st->n];
	if (w->v->close)
		w->v->close(w->ctx, &f, st);
	if (st->n)
		st->v[st->n - 1].gpu += f.gpu;
}

static void hw_push(struct hw_stack *st, const struct hw_frame *f)
{
	if (st->n == st->cap) {
		/* small first: every thread's stack lives until the walk ends, and
		 * a trace may have 100,000 threads of one event */
		st->cap = st->cap ? st->cap * 2 : 2;
		st->v = xrealloc(st->v, st->cap * sizeof(*st->v));
	}
	st->v[st->n++] = *f;
}

/* The followed ranges open around the launch (event i of track ti): the
 * thread's own; when it has none and the view asks (across_threads), those
 * of the thread of the same process with the most followed ranges open
 * around the launch's start (the first such thread on a tie). The other
 * threads' stacks are popped lazily: a frame that ended before the launch
 * is still there until its thread's next event, so only the frames that
 * end after the launch's start count (a prefix: each contains the next). */
static struct hw_stack hw_open_around(struct hw_walk *w, uint32_t ti, size_t i)
{
	struct hw_stack own = w->ht[ti].st;
	if (own.n || !w->peer)
		return own;
	const struct store *s = &w->a->store;
	uint64_t t0 = s->tracks[ti].start[i];
	struct hw_stack best = {0};
	for (uint32_t k = 0; k < w->npeer[ti]; k++) {
		uint32_t pi = w->peer[w->peer_at[ti] + k];
		const struct hw_stack *st = &w->ht[pi].st;
		size_t n = 0;
		while (n < st->n && store_ev_end(&s->tracks[pi], st->v[n].event) > t0)
			n++;
		if (n > best.n) {
			best.v = st->v;
			best.n = n;
		}
	}
	return best.n ? best : own;
}

/* One piece of counted GPU work, launched by event i of track ti. */
static void hw_deliver(struct hw_walk *w, uint32_t ti, size_t i, const struct gpu_launch *l)
{
	struct hw_stack st = hw_open_around(w, ti, i);
	if (st.n)
		st.v[st.n - 1].gpu += w->a->store.tracks[l->track].dur[l->index];
	if (w->v->gpu)
		w->v->gpu(w->ctx, &st, ti, (uint32_t)i, l->track, l->index);
}

/* The counted GPU work the call launched, in the order of the launches. */
static void hw_launches(struct hw_walk *w, struct hw_track *ht, uint32_t ti, size_t i)
{
	const struct analysis *a = w->a;
	const struct gpu_track *g = &a->gpu.tracks[ti];
	while (ht->next_launch < g->nlaunches && g->launches[ht->next_launch].call < i)
		ht->next_launch++;
	for (; ht->next_launch < g->nlaunches && g->launches[ht->next_launch].call == i;
	     ht->next_launch++) {
		const struct gpu_launch *l = &g->launches[ht->next_launch];
		uint8_t f = a->gpu.tracks[l->track].flags[l->index];
		if (!(f & GPU_COUNTED) || ((f & GPU_BY_XID) && !w->v->by_call))
			continue;
		hw_deliver(w, ti, i, l);
	}
	if (w->v->by_call)
		return;
	while (ht->next_xlaunch < g->nxlaunches && g->xlaunches[ht->next_xlaunch].call < i)
		ht->next_xlaunch++;
	for (; ht->next_xlaunch < g->nxlaunches && g->xlaunches[ht->next_xlaunch].call == i;
	     ht->next_xlaunch++) {
		const struct gpu_launch *l = &g->xlaunches[ht->next_xlaunch];
		if (!(a->gpu.tracks[l->track].flags[l->index] & GPU_COUNTED))
			continue;
		hw_deliver(w, ti, i, l);
	}
}

static void hw_event(struct hw_walk *w, uint32_t ti, size_t i)
{
	const struct store *s = &w->a->store;
	const struct store_track *t = &s->tracks[ti];
	struct hw_track *ht = &w->ht[ti];
	uint64_t end = store_ev_end(t, i);
	while (ht->st.n && store_ev_end(t, ht->st.v[ht->st.n - 1].event) < end)
		hw_pop(w, &ht->st);
	/* a folded range is its parent's call (store.h): not a frame of its own,
	 * so that its children and the GPU work it launched are the parent's */
	if (w->want[store_ev_desc(t, i)] && !(store_ev_flags(t, i) & TRACE_EVF_UNBALANCED_POP) &&
	    !store_ev_folded(t, i)) {
		uint64_t clipped;
		int in = analysis_clip_next(&ht->at, t, i, &clipped);
		if (hostwalk_is_instant(s, t, i)) {
			if (w->v->instant)
				w->v->instant(w->ctx, &ht->st, ti, (uint32_t)i,
					      store_extra_next(t, &ht->xc, i), in);
		} else if (w->v->open) {
			struct hw_frame f = {.track = ti, .event = (uint32_t)i, .in_window = in,
					     .cpu = clipped};
			if (w->v->open(w->ctx, &f, &ht->st))
				hw_push(&ht->st, &f);
		}
	}
	const struct gpu_track *g = &w->a->gpu.tracks[ti];
	if ((g->nlaunches || g->nxlaunches) && !w->v->skip_gpu)
		hw_launches(w, ht, ti, i);
}

/* The next call after or at i of track ti that launched GPU work this walk
 * delivers (or range it is attributed to); SIZE_MAX: none. */
static size_t hw_next_call(struct hw_walk *w, uint32_t ti, size_t i)
{
	const struct gpu_track *g = &w->a->gpu.tracks[ti];
	struct hw_track *ht = &w->ht[ti];
	size_t call = SIZE_MAX;
	while (ht->next_launch < g->nlaunches && g->launches[ht->next_launch].call < i)
		ht->next_launch++;
	if (ht->next_launch < g->nlaunches && !w->v->skip_gpu)
		call = g->launches[ht->next_launch].call;
	while (ht->next_xlaunch < g->nxlaunches && g->xlaunches[ht->next_xlaunch].call < i)
		ht->next_xlaunch++;
	if (ht->next_xlaunch < g->nxlaunches && !w->v->skip_gpu && !w->v->by_call &&
	    g->xlaunches[ht->next_xlaunch].call < call)
		call = g->xlaunches[ht->next_xlaunch].call;
	return call;
}

/* ---- one walk for several visitors ----------------------------------------
 *
 * Each visitor (a hw_walk) keeps its own stacks and cursors, and visits what
 * it would visit alone: the events of its types and its calls, on its
 * tracks. The tracks are merged once, by their next event that some visitor
 * visits; each visitor's events come in the order its own walk would give
 * them (start, longer first, track, index: the merge's order restricted to
 * them), and each sees its own stacks as its own walk would have left them,
 * so what it hands its view is the same. */
struct hw_many {
	const struct analysis *a;
	struct hw_walk *w;
	unsigned nw;
	uint8_t *want;   /* by desc: some visitor visits the type */
	uint8_t *active; /* by track: some visitor walks it */
	size_t *pos;     /* by track: the next event to look at */
	uint32_t *heap;  /* tracks, by their next event */
	uint32_t nheap;
};

/* Whether visitor w visits event i of track ti (its tracks only). */
static int hw_visits(struct hw_walk *w, uint32_t ti, size_t i)
{
	if (!w->walked[ti])
		return 0;
	if (w->want[w->a->store.tracks[ti].desc[i] >> 8])
		return 1;
	const struct gpu_track *g = &w->a->gpu.tracks[ti];
	return (g->nlaunches || g->nxlaunches) && hw_next_call(w, ti, i) == i;
}

/* Moves a track to its next event that some visitor visits; 0 at its end. */
static int hw_seek(struct hw_many *m, uint32_t ti)
{
	const struct store_track *t = &m->a->store.tracks[ti];
	const struct gpu_track *g = &m->a->gpu.tracks[ti];
	const int calls = g->nlaunches || g->nxlaunches;
	size_t i = m->pos[ti];
	for (;;) {
		size_t call = SIZE_MAX;
		for (unsigned k = 0; calls && k < m->nw; k++) {
			if (!m->w[k].walked[ti])
				continue;
			size_t c = hw_next_call(&m->w[k], ti, i);
			if (c < call)
				call = c;
		}
		while (i < t->n && i != call && !m->want[t->desc[i] >> 8])
			i++;
		if (i >= t->n)
			break;
		unsigned k = 0;
		while (k < m->nw && !hw_visits(&m->w[k], ti, i))
			k++;
		if (k < m->nw)
			break;
		i++; /* a type another track's visitor wants */
	}
	m->pos[ti] = i;
	return i < t->n;
}

static int hw_before(const struct hw_many *m, uint32_t x, uint32_t y)
{
	const struct store_track *a = &m->a->store.tracks[x], *b = &m->a->store.tracks[y];
	size_t i = m->pos[x], j = m->pos[y];
	if (a->start[i] != b->start[j])
		return a->start[i] < b->start[j];
	if (a->dur[i] != b->dur[j])
		return a->dur[i] > b->dur[j];
	return x < y;
}

static void hw_sift(struct hw_many *m, uint32_t k)
{
	for (;;) {
		uint32_t c = 2 * k + 1;
		if (c >= m->nheap)
			return;
		if (c + 1 < m->nheap && hw_before(m, m->heap[c + 1], m->heap[c]))
			c++;
		if (!hw_before(m, m->heap[c], m->heap[k]))
			return;
		uint32_t tmp = m->heap[k];
		m->heap[k] = m->heap[c];
		m->heap[c] = tmp;
		k = c;
	}
}

/* Whether the thread has an event of a visited type: without one, no frame
 * ever opens there, and its GPU work concerns only a gpu callback. */
static int hw_any(const struct hw_walk *w, uint32_t ti)
{
	const struct store_track *t = &w->a->store.tracks[ti];
	for (size_t i = 0; i < t->n; i++)
		if (w->want[t->desc[i] >> 8])
			return 1;
	return 0;
}

static void hw_want(struct hw_walk *w)
{
	const struct store *s = &w->a->store;
	w->want = xmalloc(s->ndescs ? s->ndescs : 1);
	for (uint32_t d = 0; d < s->ndescs; d++)
		w->want[d] = !w->v->types || ((w->v->types >> s->descs[d].type) & 1);
}

struct hw_proc_key {
	uint32_t file, pid, track;
};

static int hw_by_process(const void *x, const void *y)
{
	const struct hw_proc_key *a = x, *b = y;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->track < b->track ? -1 : a->track > b->track;
}

/* For across_threads: each walked host track's peers, the threads of its
 * process (same file, same pid) that hold followed events, at most
 * HW_PEERS_MAX of them (the first by track), so that a launch costs a
 * bounded look whatever the threads of a hostile trace. */
static void hw_peers(struct hw_walk *w, const uint32_t *tracks, uint32_t ntracks)
{
	const struct store *s = &w->a->store;
	uint32_t n = 0;
	struct hw_proc_key *key = xmalloc((s->ntracks ? s->ntracks : 1) * sizeof(*key));
	for (uint32_t k = 0; k < (tracks ? ntracks : s->ntracks); k++) {
		uint32_t ti = tracks ? tracks[k] : k;
		const struct store_track *t = &s->tracks[ti];
		if (t->kind == STORE_TRACK_HOST)
			key[n++] = (struct hw_proc_key){t->file, t->pid, ti};
	}
	qsort(key, n, sizeof(*key), hw_by_process);
	w->peer = xmalloc((n ? n : 1) * sizeof(*w->peer));
	w->peer_at = xcalloc(s->ntracks ? s->ntracks : 1, sizeof(*w->peer_at));
	w->npeer = xcalloc(s->ntracks ? s->ntracks : 1, sizeof(*w->npeer));
	uint32_t np = 0;
	for (uint32_t k = 0; k < n;) {
		uint32_t e = k, at = np;
		while (e < n && key[e].file == key[k].file && key[e].pid == key[k].pid)
			e++;
		for (uint32_t j = k; j < e; j++)
			if (np - at < HW_PEERS_MAX && hw_any(w, key[j].track))
				w->peer[np++] = key[j].track;
		for (uint32_t j = k; j < e; j++) {
			w->peer_at[key[j].track] = at;
			w->npeer[key[j].track] = np - at;
		}
		k = e;
	}
	free(key);
}

void hostwalk_run_many(const struct analysis *a, const struct hw_request *req, unsigned n)
{
	const struct store *s = &a->store;
	const size_t nt = s->ntracks ? s->ntracks : 1;
	struct hw_many m = {.a = a, .nw = n};
	m.w = xcalloc(n ? n : 1, sizeof(*m.w));
	m.want = xcalloc(s->ndescs ? s->ndescs : 1, 1);
	m.active = xcalloc(nt, 1);
	m.pos = xcalloc(nt, sizeof(*m.pos));
	m.heap = xmalloc(nt * sizeof(*m.heap));
	for (unsigned k = 0; k < n; k++) {
		struct hw_walk *w = &m.w[k];
		const struct hw_visitor *v = req[k].v;
		*w = (struct hw_walk){.a = a, .v = v, .ctx = req[k].ctx};
		hw_want(w);
		for (uint32_t d = 0; d < s->ndescs; d++)
			m.want[d] |= w->want[d];
		w->ht = xcalloc(nt, sizeof(*w->ht));
		w->walked = xcalloc(nt, 1);
		const uint32_t *tracks = req[k].tracks;
		uint32_t ntracks = req[k].ntracks;
		if (v->across_threads && !v->skip_gpu && a->gpu.has_gpu)
			hw_peers(w, tracks, ntracks);
		for (uint32_t j = 0; j < (tracks ? ntracks : s->ntracks); j++) {
			uint32_t ti = tracks ? tracks[j] : j;
			if (s->tracks[ti].kind != STORE_TRACK_HOST ||
			    (!hw_any(w, ti) && (!v->gpu || v->skip_gpu)))
				continue;
			ivl_cursor_init(&w->ht[ti].at, &a->window);
			w->walked[ti] = 1;
			m.active[ti] = 1;
		}
	}
	for (uint32_t ti = 0; ti < s->ntracks; ti++)
		if (m.active[ti] && hw_seek(&m, ti))
			m.heap[m.nheap++] = ti;
	for (uint32_t k = m.nheap / 2; k-- > 0;)
		hw_sift(&m, k);
	while (m.nheap) {
		uint32_t ti = m.heap[0];
		size_t i = m.pos[ti];
		for (unsigned k = 0; k < n; k++)
			if (hw_visits(&m.w[k], ti, i))
				hw_event(&m.w[k], ti, i);
		m.pos[ti] = i + 1;
		if (!hw_seek(&m, ti))
			m.heap[0] = m.heap[--m.nheap];
		hw_sift(&m, 0);
	}
	for (unsigned k = 0; k < n; k++) {
		struct hw_walk *w = &m.w[k];
		for (uint32_t ti = 0; ti < s->ntracks; ti++) {
			struct hw_track *h = &w->ht[ti];
			while (h->st.n)
				hw_pop(w, &h->st);
			free(h->st.v);
		}
		free(w->ht);
		free(w->walked);
		free(w->want);
		free(w->peer);
		free(w->peer_at);
		free(w->npeer);
	}
	free(m.w);
	free(m.want);
	free(m.active);
	free(m.pos);
	free(m.heap);
}

void hostwalk_run(const struct analysis *a, const uint32_t *tracks, uint32_t ntracks,
		  const struct hw_visitor *v, void *ctx)
{
	const struct hw_request req = {v, ctx, tracks, ntracks};
	hostwalk_run_many(a, &req, 1);
}
