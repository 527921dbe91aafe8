/*
 * gpu.c - tying GPU work to the calls that launched it, and what each piece
 * counts as: see gpu.h.
 *
 * The join: the host events that carry a correlation id are indexed per
 * process (an array by id where the ids are dense, a hash keyed by (file,
 * id) and checked by pid otherwise), and the streams' work looks its id up;
 * the index is freed afterwards. The host side is the indexed one because
 * its ids are unique (one API call each), where a graph launch gives many
 * kernels one id.
 */
#include "lib/analysis/store/gpu.h"

#include "lib/analysis/store/analysis.h"
#include "common/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ---------------------------------------------------------------- */

static int starts_with_ci(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (tolower((unsigned char)*s) != tolower((unsigned char)*prefix))
			return 0;
	return 1;
}

int gpu_is_comm_op_name(const char *name)
{
	static const char *const prefixes[] = {
		"nccl:",          "gloo:",           "mpi:",          "ucc:",
		"c10d::",
		"record_param_comms",
		"c_allreduce",    "c_allgather",     "c_broadcast",   "c_reducescatter",
		"c_reduce_",      "c_scatter",       "alltoall",      "send_v2",
		"recv_v2",        "partial_send",    "partial_recv",  "partial_allgather",
		"barrier",
	};
	for (unsigned i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts_with_ci(name, prefixes[i]))
			return 1;
	return 0;
}

int gpu_is_comm_work_name(const char *name)
{
	return trace_name_is_comm_work(name, strlen(name));
}

const char *gpu_copy_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[TRACE_COPY_UNKNOWN] = "", [TRACE_COPY_HTOD] = "HtoD", [TRACE_COPY_DTOH] = "DtoH",
		[TRACE_COPY_HTOA] = "HtoA", [TRACE_COPY_ATOH] = "AtoH", [TRACE_COPY_ATOA] = "AtoA",
		[TRACE_COPY_ATOD] = "AtoD", [TRACE_COPY_DTOA] = "DtoA", [TRACE_COPY_DTOD] = "DtoD",
		[TRACE_COPY_HTOH] = "HtoH", [TRACE_COPY_PTOP] = "PtoP",
	};
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "";
}

const char *gpu_memory_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[TRACE_MEM_UNKNOWN] = "",          [TRACE_MEM_PAGEABLE] = "Pageable",
		[TRACE_MEM_PINNED] = "Pinned",     [TRACE_MEM_DEVICE] = "Device",
		[TRACE_MEM_ARRAY] = "Array",       [TRACE_MEM_MANAGED] = "Managed",
		[TRACE_MEM_DEVICE_STATIC] = "Device Static",
		[TRACE_MEM_MANAGED_STATIC] = "Managed Static",
	};
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "";
}

/* ---- occupancy ------------------------------------------------------------- */

int gpu_occupancy(const struct trace_device *d, uint64_t blocks, uint32_t threads,
		  uint32_t regs, uint32_t smem, double *blocks_per_sm, double *occupancy_pct)
{
	if (!d || !d->sm_count || !d->max_threads_per_sm || !blocks || !threads)
		return 0;
	uint64_t warp = d->warp_size ? d->warp_size : 32;
	uint64_t warps = (threads + warp - 1) / warp;
	/* The blocks one SM can hold at once: the least of its limits. */
	uint64_t active = d->max_blocks_per_sm ? d->max_blocks_per_sm : UINT64_MAX;
	uint64_t by_threads = d->max_threads_per_sm / (warps * warp);
	if (by_threads < active)
		active = by_threads;
	if (regs && d->regs_per_sm) {
		uint64_t by_regs = d->regs_per_sm / ((uint64_t)regs * warps * warp);
		if (by_regs < active)
			active = by_regs;
	}
	if (smem && d->smem_per_sm) {
		uint64_t by_smem = d->smem_per_sm / smem;
		if (by_smem < active)
			active = by_smem;
	}
	*blocks_per_sm = (double)blocks / (double)d->sm_count;
	double resident = *blocks_per_sm < (double)active ? *blocks_per_sm : (double)active;
	*occupancy_pct = 100.0 * resident * (double)threads / (double)d->max_threads_per_sm;
	if (*occupancy_pct > 100.0)
		*occupancy_pct = 100.0;
	return 1;
}

/* ---- the join ------------------------------------------------------------- */

/* The host events of one process (file, pid) that carry a correlation id.
 * CUPTI numbers its records densely, so where the ids of a process span
 * little more than their count, an array indexed by id holds them: both
 * sides are visited in time order and ids grow with time, so the array is
 * read and written nearly in sequence. Other processes' ids go to a hash.
 * Where one thread made all of a process's calls, the array holds only the
 * event: 4 bytes an id, at what is the join's memory peak. */
struct corr_group {
	uint32_t file, pid;
	uint32_t track; /* the host track of all its ids; UINT32_MAX: several */
	uint64_t min, max, count;
	uint64_t *ref;   /* dense: by id - min, track << 32 | event; UINT64_MAX: none */
	uint32_t *ref32; /* dense, one track: by id - min, event; STORE_NONE: none */
};

struct corr_slot {
	uint64_t corr;
	uint32_t track; /* UINT32_MAX: empty */
	uint32_t ev;
};

struct corr_map {
	struct corr_group *groups;
	uint32_t ngroups;
	struct corr_slot *slots; /* the sparse groups' ids */
	size_t mask;
};

#define CORR_NONE UINT64_MAX

static size_t corr_hash(uint64_t corr, uint32_t file)
{
	uint64_t k = (corr ^ ((uint64_t)file << 48)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(k ^ (k >> 29));
}

static int same_process(const struct store_track *a, const struct store_track *b)
{
	return a->file == b->file && (a->pid == b->pid || !a->pid || !b->pid);
}

static struct corr_group *corr_group_of(struct corr_map *m, uint32_t file, uint32_t pid)
{
	for (uint32_t g = 0; g < m->ngroups; g++)
		if (m->groups[g].file == file && m->groups[g].pid == pid)
			return &m->groups[g];
	m->groups = xrealloc(m->groups, (m->ngroups + 1) * sizeof(*m->groups));
	struct corr_group *g = &m->groups[m->ngroups++];
	memset(g, 0, sizeof(*g));
	g->file = file;
	g->pid = pid;
	g->min = UINT64_MAX;
	return g;
}

/* The group a stream's work looks its ids up in: its process, or with no
 * pid on either side, the file's only process. */
static const struct corr_group *corr_group_find(const struct corr_map *m,
						const struct store_track *gt)
{
	const struct corr_group *only = NULL;
	uint32_t in_file = 0;
	for (uint32_t g = 0; g < m->ngroups; g++) {
		const struct corr_group *c = &m->groups[g];
		if (c->file != gt->file)
			continue;
		if (c->pid == gt->pid)
			return c;
		only = c;
		in_file++;
	}
	return in_file == 1 && (!gt->pid || !only->pid) ? only : NULL;
}

static void corr_hash_put(struct corr_map *m, const struct store *s, uint32_t ti, uint32_t ev,
			  uint64_t corr)
{
	const struct store_track *t = &s->tracks[ti];
	size_t i = corr_hash(corr, t->file) & m->mask;
	for (; m->slots[i].track != UINT32_MAX; i = (i + 1) & m->mask) {
		const struct corr_slot *o = &m->slots[i];
		if (o->corr == corr && same_process(&s->tracks[o->track], t))
			return; /* one call per id: the first keeps it */
	}
	m->slots[i] = (struct corr_slot){corr, ti, ev};
}

/* One pass over every host call that has a correlation id: the first
 * (fill 0) measures each process's ids (their track, count and bounds), the
 * second (fill 1) puts each call into its group's table, or the hash. */
static void corr_map_pass(struct corr_map *m, const struct store *s, int fill)
{
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST || !t->nextra)
			continue;
		struct corr_group *g = corr_group_of(m, t->file, t->pid);
		for (size_t k = 0; k < t->nextra; k++) {
			uint64_t c = store_extra_corr(t, &t->extra[k]);
			if (!c)
				continue;
			if (!fill) {
				g->track = !g->count || g->track == ti ? ti : STORE_NONE;
				g->count++;
				g->min = c < g->min ? c : g->min;
				g->max = c > g->max ? c : g->max;
			} else if (g->ref32) {
				if (g->ref32[c - g->min] == STORE_NONE)
					g->ref32[c - g->min] = t->extra[k].ev;
			} else if (!g->ref) {
				corr_hash_put(m, s, ti, t->extra[k].ev, c);
			} else if (g->ref[c - g->min] == CORR_NONE) {
				g->ref[c - g->min] = (uint64_t)ti << 32 | t->extra[k].ev;
			}
		}
	}
}

static void corr_map_build(struct corr_map *m, const struct store *s)
{
	memset(m, 0, sizeof(*m));
	corr_map_pass(m, s, 0);
	size_t sparse = 0;
	for (uint32_t k = 0; k < m->ngroups; k++) {
		struct corr_group *g = &m->groups[k];
		if (!g->count)
			continue;
		uint64_t span = g->max - g->min + 1;
		if (span / 4 > g->count + 1024) {
			sparse += g->count;
			continue;
		}
		if (g->track != STORE_NONE) {
			g->ref32 = xmalloc(span * sizeof(*g->ref32));
			for (uint64_t i = 0; i < span; i++)
				g->ref32[i] = STORE_NONE;
			continue;
		}
		g->ref = xmalloc(span * sizeof(*g->ref));
		for (uint64_t i = 0; i < span; i++)
			g->ref[i] = CORR_NONE;
	}
	size_t cap = 16;
	while (cap < 2 * sparse)
		cap *= 2;
	m->slots = xmalloc(cap * sizeof(*m->slots));
	m->mask = cap - 1;
	for (size_t i = 0; i < cap; i++)
		m->slots[i].track = UINT32_MAX;
	corr_map_pass(m, s, 1);
}

/* The call of the stream's work with id corr: 1 with its track and event. */
static int corr_map_find(const struct corr_map *m, const struct store *s,
			 const struct corr_group *g, const struct store_track *gt, uint64_t corr,
			 uint32_t *track, uint32_t *ev)
{
	if (g && g->ref32) {
		if (corr < g->min || corr > g->max || g->ref32[corr - g->min] == STORE_NONE)
			return 0;
		*track = g->track;
		*ev = g->ref32[corr - g->min];
		return 1;
	}
	if (g && g->ref) {
		if (corr < g->min || corr > g->max || g->ref[corr - g->min] == CORR_NONE)
			return 0;
		*track = (uint32_t)(g->ref[corr - g->min] >> 32);
		*ev = (uint32_t)g->ref[corr - g->min];
		return 1;
	}
	for (size_t i = corr_hash(corr, gt->file) & m->mask; m->slots[i].track != UINT32_MAX;
	     i = (i + 1) & m->mask) {
		const struct corr_slot *o = &m->slots[i];
		if (o->corr == corr && same_process(&s->tracks[o->track], gt)) {
			*track = o->track;
			*ev = o->ev;
			return 1;
		}
	}
	return 0;
}

static void corr_map_free(struct corr_map *m)
{
	for (uint32_t g = 0; g < m->ngroups; g++) {
		free(m->groups[g].ref);
		free(m->groups[g].ref32);
	}
	free(m->groups);
	free(m->slots);
}

static void launch_push(struct gpu_track *h, size_t *cap, struct gpu_launch l)
{
	if (h->nlaunches == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		h->launches = xrealloc(h->launches, *cap * sizeof(*h->launches));
	}
	h->launches[h->nlaunches++] = l;
}

/* ---- sorting a host track's launches ----------------------------------------- */

static int launch_before(const struct store *s, const struct gpu_launch *a,
			 const struct gpu_launch *b)
{
	if (a->call != b->call)
		return a->call < b->call;
	uint64_t x = s->tracks[a->track].start[a->index], y = s->tracks[b->track].start[b->index];
	if (x != y)
		return x < y;
	return a->track != b->track ? a->track < b->track : a->index < b->index;
}

/* The launches arrive stream by stream, each stream's in call order: a
 * natural merge sort merges those runs, in O(n log runs). */
static void launches_sort(const struct store *s, struct gpu_launch *v, size_t n)
{
	size_t runs = 1;
	for (size_t i = 1; i < n; i++)
		runs += launch_before(s, &v[i], &v[i - 1]);
	if (runs <= 1)
		return;
	struct gpu_launch *tmp = xmalloc(n * sizeof(*tmp));
	while (runs > 1) {
		size_t out = 0, i = 0;
		runs = 0;
		while (i < n) {
			size_t a = i, mid = i + 1;
			while (mid < n && !launch_before(s, &v[mid], &v[mid - 1]))
				mid++;
			size_t end = mid < n ? mid + 1 : n;
			while (end < n && !launch_before(s, &v[end], &v[end - 1]))
				end++;
			size_t x = a, y = mid;
			while (x < mid || y < end)
				tmp[out++] = (y >= end || (x < mid && !launch_before(s, &v[y], &v[x])))
						     ? v[x++]
						     : v[y++];
			runs++;
			i = end;
		}
		memcpy(v, tmp, n * sizeof(*v));
	}
	free(tmp);
}

/* ---- what each piece counts as ------------------------------------------------ */

static int gpu_comm_by_itself(const struct analysis *a, const struct store_track *t, size_t i)
{
	uint32_t d = store_ev_desc(t, i);
	return a->store.descs[d].type == TRACE_EV_COMMUNICATION ||
	       (a->gpu.roles[d] & ROLE_COMM_GPU);
}

/* Whether the call, or a host range around it, is a communication operator. */
static int call_in_comm_op(const struct analysis *a, const struct store_track *t, uint32_t call)
{
	const struct store *s = &a->store;
	for (uint32_t p = call; p != STORE_NONE; p = t->parent[p]) {
		uint32_t d = store_ev_desc(t, p);
		if ((a->gpu.roles[d] & ROLE_COMM_OP) || s->descs[d].type == TRACE_EV_COMMUNICATION)
			return 1;
	}
	return 0;
}

static void gpu_count(struct analysis *a, const struct store_track *gt, size_t gi, uint8_t *flags)
{
	struct gpu_info *g = &a->gpu;
	*flags |= GPU_COUNTED;
	g->counted++;
	g->counted_ns += gt->dur[gi];
	g->counted_type_ns[store_ev_type(&a->store, gt, gi)] += gt->dur[gi];
	uint64_t inside = gt->dur[gi] ? ivl_set_overlap(&a->window, gt->start[gi],
							 gt->start[gi] + gt->dur[gi])
				      : 0;
	g->counted_outside_ns += gt->dur[gi] - inside;
}

/* Linked work counts by its call, in call order, through a cursor on the window. */
static void gpu_flag_linked(struct analysis *a, uint32_t host)
{
	const struct store *s = &a->store;
	const struct store_track *t = &s->tracks[host];
	struct gpu_track *h = &a->gpu.tracks[host];
	struct ivl_cursor at;
	ivl_cursor_init(&at, &a->window);
	uint32_t last = STORE_NONE;
	int in = 0, comm = 0;
	uint64_t clipped;
	for (size_t k = 0; k < h->nlaunches; k++) {
		const struct gpu_launch *l = &h->launches[k];
		if (l->call != last) {
			last = l->call;
			in = analysis_clip_next(&at, t, l->call, &clipped);
			comm = call_in_comm_op(a, t, l->call);
		}
		const struct store_track *gt = &s->tracks[l->track];
		uint8_t *f = &a->gpu.tracks[l->track].flags[l->index];
		if (comm || gpu_comm_by_itself(a, gt, l->index))
			*f |= GPU_COMM;
		if (in || a->gpu_window) /* the GPU's span holds all its work */
			gpu_count(a, gt, l->index, f);
	}
}

/* Work with no call counts by its own time. */
static void gpu_flag_unlinked(struct analysis *a, uint32_t ti)
{
	const struct store_track *t = &a->store.tracks[ti];
	uint8_t *flags = a->gpu.tracks[ti].flags;
	struct ivl_cursor at;
	ivl_cursor_init(&at, &a->window);
	uint64_t clipped;
	for (size_t i = 0; i < t->n; i++) {
		if (!store_ev_is_gpu_work(&a->store, t, i) || (flags[i] & GPU_LINKED))
			continue;
		if (gpu_comm_by_itself(a, t, i))
			flags[i] |= GPU_COMM;
		if (analysis_clip_next(&at, t, i, &clipped))
			gpu_count(a, t, i, &flags[i]);
	}
}

static void gpu_roles(struct analysis *a)
{
	const struct store *s = &a->store;
	a->gpu.roles = xcalloc(s->ndescs ? s->ndescs : 1, 1);
	for (uint32_t d = 0; d < s->ndescs; d++) {
		const char *name = store_name(s, s->descs[d].name);
		unsigned type = s->descs[d].type;
		if (trace_event_type_is_device(type) && gpu_is_comm_work_name(name))
			a->gpu.roles[d] |= ROLE_COMM_GPU;
		else if (!trace_event_type_is_device(type) && gpu_is_comm_op_name(name))
			a->gpu.roles[d] |= ROLE_COMM_OP;
		/* a Communication range on a host thread is a communication call
		 * (gloo's run there); on a GPU stream the role is not read */
		if (type == TRACE_EV_COMMUNICATION)
			a->gpu.roles[d] |= ROLE_COMM_OP;
	}
}

/* Once indexed (host) or looked up (streams), the ids have done their work:
 * the extras that carried only ids (most API calls) and the lone external
 * ids (the operators') go, which the memory peak is the better for, and the
 * extras that stay keep their correlation id alone, as it is (no
 * STORE_EVF_XID, STORE_EVF_IDS32). */
static void gpu_drop_ids(struct store *s, enum store_track_kind kind)
{
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		struct store_track *t = &s->tracks[ti];
		if (t->kind != kind)
			continue;
		const uint32_t ids = STORE_EVF_XID | STORE_EVF_IDS32;
		size_t k = 0;
		for (size_t i = 0; i < t->nextra; i++) {
			struct store_extra x = t->extra[i];
			if (t->desc[x.ev] & ids) {
				x.corr = store_extra_corr(t, &x);
				t->desc[x.ev] &= ~ids;
			}
			if (x.detail != STORE_NONE)
				t->extra[k++] = x;
		}
		free(t->xid); /* parallel to the extras: no longer */
		t->xid = NULL;
		free(t->xonly_ev);
		free(t->xonly_id);
		t->xonly_ev = NULL;
		t->xonly_id = NULL;
		t->nxonly = t->xonly_cap = 0;
		if (k == t->nextra)
			continue;
		t->nextra = k;
		t->extra_cap = k;
		t->extra = xrealloc(t->extra, (k ? k : 1) * sizeof(*t->extra));
	}
}

/* ---- external ids ------------------------------------------------------------ */

/* From an external id to the host range of a process that carries it: a
 * hash keyed by (file, id) and checked by pid, as the sparse correlation
 * ids are. Built only when some event needs it. A slot names where the
 * range's id is, its extra or its lone id (store.h): 8 bytes a slot, and no
 * second copy of the ids. */
struct xid_slot {
	uint32_t track; /* UINT32_MAX: empty */
	uint32_t k;     /* the range's extra; from nextra on, its lone id's */
};

struct xid_map {
	struct xid_slot *slots;
	size_t mask;
};

/* The host events an external id may name: ranges, not the API calls that
 * carry their operator's id, nor instants. */
static int xid_target(const struct store *s, const struct store_track *t, size_t i)
{
	unsigned type = store_ev_type(s, t, i);
	return !store_ev_is_instant(t, i) && type != TRACE_EV_CUDA_RUNTIME &&
	       type != TRACE_EV_MEMORY;
}

/* Where a track keeps an id, by the numbering of xid_slot.k. */
static uint64_t id_xid(const struct store_track *t, size_t k)
{
	return k < t->nextra ? store_extra_xid(t, &t->extra[k]) : t->xonly_id[k - t->nextra];
}

static uint32_t id_ev(const struct store_track *t, size_t k)
{
	return k < t->nextra ? t->extra[k].ev : t->xonly_ev[k - t->nextra];
}

static uint64_t slot_xid(const struct store *s, const struct xid_slot *o)
{
	return id_xid(&s->tracks[o->track], o->k);
}

static uint32_t slot_ev(const struct store *s, const struct xid_slot *o)
{
	return id_ev(&s->tracks[o->track], o->k);
}

/* The lone external ids of a track in event order, as the sort left them
 * in none. */
static void xonly_sort(struct store_track *t)
{
	size_t i = 1;
	while (i < t->nxonly && t->xonly_ev[i - 1] < t->xonly_ev[i])
		i++;
	if (i >= t->nxonly)
		return;
	struct xonly_pair {
		uint32_t ev;
		uint64_t id;
	} *v = xmalloc(t->nxonly * sizeof(*v));
	for (size_t k = 0; k < t->nxonly; k++)
		v[k] = (struct xonly_pair){t->xonly_ev[k], t->xonly_id[k]};
	/* distinct events, so any sort will do: a bottom-up merge sort */
	size_t n = t->nxonly;
	struct xonly_pair *w = xmalloc(n * sizeof(*w));
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t a = lo, b = mid, o = lo;
			while (a < mid || b < hi)
				w[o++] = b >= hi || (a < mid && v[a].ev < v[b].ev) ? v[a++] : v[b++];
		}
		struct xonly_pair *x = v;
		v = w;
		w = x;
	}
	for (size_t k = 0; k < n; k++) {
		t->xonly_ev[k] = v[k].ev;
		t->xonly_id[k] = v[k].id;
	}
	free(v);
	free(w);
}

/* A stream's lone external ids become extras (STORE_EVF_XID) again: the
 * join visits a stream's events by its extras. Streams rarely have any. */
static void stream_xonly_to_extras(struct store_track *t)
{
	if (!t->nxonly)
		return;
	xonly_sort(t);
	size_t n = t->nextra + t->nxonly, i = t->nextra, j = t->nxonly, o = n;
	t->extra = xrealloc(t->extra, n * sizeof(*t->extra));
	if (t->xid)
		t->xid = xrealloc(t->xid, n * sizeof(*t->xid));
	while (j) { /* a merge from the back, in place */
		o--;
		if (i && t->extra[i - 1].ev > t->xonly_ev[j - 1]) {
			i--;
			t->extra[o] = t->extra[i];
			if (t->xid)
				t->xid[o] = t->xid[i];
			continue;
		}
		j--;
		t->extra[o] = (struct store_extra){.ev = t->xonly_ev[j], .corr = t->xonly_id[j],
						   .detail = STORE_NONE};
		if (t->xid)
			t->xid[o] = 0;
		t->desc[t->xonly_ev[j]] |= STORE_EVF_XID;
	}
	t->nextra = t->extra_cap = n;
	free(t->xonly_ev);
	free(t->xonly_id);
	t->xonly_ev = NULL;
	t->xonly_id = NULL;
	t->nxonly = t->xonly_cap = 0;
}

/* Visits a host track's ids in event order: its extras and its lone external
 * ids merged, by xid_slot.k. */
struct id_walk {
	size_t i, j;
};

static int id_next(const struct store_track *t, struct id_walk *w, size_t *k)
{
	if (w->i < t->nextra && (w->j >= t->nxonly || t->extra[w->i].ev < t->xonly_ev[w->j])) {
		*k = w->i++;
		return 1;
	}
	if (w->j < t->nxonly) {
		*k = t->nextra + w->j++;
		return 1;
	}
	return 0;
}

static void xid_map_put(struct xid_map *m, const struct store *s, uint32_t ti, uint32_t k,
			uint64_t xid)
{
	const struct store_track *t = &s->tracks[ti];
	size_t i = corr_hash(xid, t->file) & m->mask;
	for (; m->slots[i].track != UINT32_MAX; i = (i + 1) & m->mask) {
		struct xid_slot *o = &m->slots[i];
		if (slot_xid(s, o) != xid || !same_process(&s->tracks[o->track], t))
			continue;
		/* several ranges with one id: an Operator first, else the first */
		if (store_ev_type(s, &s->tracks[o->track], slot_ev(s, o)) != TRACE_EV_OPERATOR &&
		    store_ev_type(s, t, id_ev(t, k)) == TRACE_EV_OPERATOR) {
			o->track = ti;
			o->k = k;
		}
		return;
	}
	m->slots[i] = (struct xid_slot){ti, k};
}

static void xid_map_build(struct xid_map *m, struct store *s)
{
	memset(m, 0, sizeof(*m));
	if (!s->has_xid)
		return;
	size_t n = 0;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST)
			continue;
		xonly_sort(t);
		for (size_t k = 0; k < t->nextra + t->nxonly; k++)
			n += id_xid(t, k) && xid_target(s, t, id_ev(t, k));
	}
	if (!n)
		return;
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	m->slots = xmalloc(cap * sizeof(*m->slots));
	m->mask = cap - 1;
	for (size_t i = 0; i < cap; i++)
		m->slots[i].track = UINT32_MAX;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST)
			continue;
		struct id_walk w = {0, 0};
		size_t k;
		while (id_next(t, &w, &k)) {
			uint64_t xid = id_xid(t, k);
			if (xid && xid_target(s, t, id_ev(t, k)))
				xid_map_put(m, s, ti, (uint32_t)k, xid);
		}
	}
}

static int xid_map_find(const struct xid_map *m, const struct store *s,
			const struct store_track *from, uint64_t xid, uint32_t *track,
			uint32_t *ev)
{
	if (!m->slots || !xid)
		return 0;
	for (size_t i = corr_hash(xid, from->file) & m->mask; m->slots[i].track != UINT32_MAX;
	     i = (i + 1) & m->mask) {
		const struct xid_slot *o = &m->slots[i];
		if (slot_xid(s, o) == xid && same_process(&s->tracks[o->track], from)) {
			*track = o->track;
			*ev = slot_ev(s, o);
			return 1;
		}
	}
	return 0;
}

/* The external id of a host call (its extra's; kept until the join ends
 * when the store holds external ids). */
static uint64_t call_xid(const struct store *s, uint32_t track, uint32_t ev)
{
	const struct store_track *t = &s->tracks[track];
	const struct store_extra *x = store_ev_extra(t, ev);
	return x ? store_extra_xid(t, x) : 0;
}

/* The range a stream event (extra k of gt) is attributed to by external id:
 * its own id's, else its call's. */
static int xid_range(const struct xid_map *m, const struct store *s, const struct store_track *gt,
		     size_t k, int has_call, uint32_t call_track, uint32_t call, uint32_t *track,
		     uint32_t *ev)
{
	if (!m->slots)
		return 0;
	if (xid_map_find(m, s, gt, store_extra_xid(gt, &gt->extra[k]), track, ev))
		return 1;
	return has_call && xid_map_find(m, s, gt, call_xid(s, call_track, call), track, ev);
}

struct join_caps {
	size_t *launches, *xlaunches, *anchors; /* by store track */
};

static void anchor_push(struct gpu_track *h, size_t *cap, struct gpu_anchor x)
{
	if (h->nanchors == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		h->anchors = xrealloc(h->anchors, *cap * sizeof(*h->anchors));
	}
	h->anchors[h->nanchors++] = x;
}

static void xlaunch_push(struct gpu_track *h, size_t *cap, struct gpu_launch l)
{
	if (h->nxlaunches == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		h->xlaunches = xrealloc(h->xlaunches, *cap * sizeof(*h->xlaunches));
	}
	h->xlaunches[h->nxlaunches++] = l;
}

/* Whether some stream event needs an external id: one whose call is
 * unknown or lies in no range, that carries an id (or whose call does).
 * Most traces have none, and then neither the map nor the calls' ids
 * outlive the correlation index. */
static int xid_needed(const struct store *s, const struct corr_map *m)
{
	if (!s->has_xid)
		return 0;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE)
			continue;
		const struct corr_group *grp = corr_group_find(m, t);
		for (size_t k = 0; k < t->nextra; k++) {
			const struct store_extra *x = &t->extra[k];
			if (!store_ev_is_gpu_work(s, t, x->ev) &&
			    store_ev_type(s, t, x->ev) != TRACE_EV_MEMORY)
				continue;
			uint32_t ct, c;
			uint64_t corr = store_extra_corr(t, x);
			int has_call = corr && corr_map_find(m, s, grp, t, corr, &ct, &c);
			if (has_call && s->tracks[ct].parent[c] != STORE_NONE)
				continue;
			if (store_extra_xid(t, x) || (has_call && call_xid(s, ct, c)))
				return 1;
		}
	}
	return 0;
}

/* flags[] of every GPU stream, allocated once the join's index is built and
 * the calls' extras have gone, off the memory peak. */
static void gpu_alloc_flags(struct analysis *a)
{
	const struct store *s = &a->store;
	for (uint32_t ti = 0; ti < s->ntracks; ti++)
		if (s->tracks[ti].kind == STORE_TRACK_DEVICE)
			a->gpu.tracks[ti].flags = xcalloc(s->tracks[ti].n ? s->tracks[ti].n : 1, 1);
}

static void gpu_join(struct analysis *a, struct join_caps *caps)
{
	struct store *s = &a->store;
	struct gpu_info *g = &a->gpu;
	struct corr_map m;
	struct xid_map xm;
	corr_map_build(&m, s);
	memset(&xm, 0, sizeof(xm));
	if (xid_needed(s, &m))
		xid_map_build(&xm, s);
	if (!xm.slots) /* the calls' ids are not needed any more */
		gpu_drop_ids(s, STORE_TRACK_HOST);
	gpu_alloc_flags(a);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE)
			continue;
		const struct corr_group *grp = corr_group_find(&m, t);
		for (size_t k = 0; k < t->nextra; k++) {
			const struct store_extra *x = &t->extra[k];
			unsigned type = store_ev_type(s, t, x->ev);
			int work = store_ev_is_gpu_work(s, t, x->ev);
			if (!work && type != TRACE_EV_MEMORY)
				continue;
			uint32_t ct = 0, c = 0, rt, r;
			uint64_t corr = store_extra_corr(t, x);
			int has_call = corr && corr_map_find(&m, s, grp, t, corr, &ct, &c);
			int in_range = has_call && s->tracks[ct].parent[c] != STORE_NONE;
			int by_xid = !in_range && xid_range(&xm, s, t, k, has_call, ct, c, &rt, &r);
			if (!work) { /* an allocation on the stream */
				if (in_range || (has_call && !by_xid))
					anchor_push(&g->tracks[ti], &caps->anchors[ti],
						    (struct gpu_anchor){x->ev, ct, c});
				else if (by_xid)
					anchor_push(&g->tracks[ti], &caps->anchors[ti],
						    (struct gpu_anchor){x->ev, rt, r});
				continue;
			}
			if (has_call) {
				g->tracks[ti].flags[x->ev] |= GPU_LINKED;
				g->linked++;
				launch_push(&g->tracks[ct], &caps->launches[ct],
					    (struct gpu_launch){c, ti, x->ev});
			}
			if (by_xid) {
				g->tracks[ti].flags[x->ev] |= GPU_BY_XID;
				g->by_xid++;
				xlaunch_push(&g->tracks[rt], &caps->xlaunches[rt],
					     (struct gpu_launch){r, ti, x->ev});
			}
		}
	}
	int late = xm.slots != NULL;
	free(xm.slots);
	corr_map_free(&m);
	if (late)
		gpu_drop_ids(s, STORE_TRACK_HOST);
}

/* Work attributed by external id is communication when its range is a
 * communication operator or lies in one (it still counts by its call). */
static void gpu_flag_xid(struct analysis *a, uint32_t host)
{
	const struct store_track *t = &a->store.tracks[host];
	const struct gpu_track *h = &a->gpu.tracks[host];
	uint32_t last = STORE_NONE;
	int comm = 0;
	for (size_t k = 0; k < h->nxlaunches; k++) {
		const struct gpu_launch *l = &h->xlaunches[k];
		if (l->call != last) {
			last = l->call;
			comm = call_in_comm_op(a, t, l->call);
		}
		if (comm)
			a->gpu.tracks[l->track].flags[l->index] |= GPU_COMM;
	}
}

void gpu_prepare(struct analysis *a)
{
	struct store *s = &a->store;
	struct gpu_info *g = &a->gpu;
	g->tracks = xcalloc(s->ntracks ? s->ntracks : 1, sizeof(*g->tracks));
	gpu_roles(a);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE)
			continue;
		stream_xonly_to_extras(t);
		for (size_t i = 0; i < t->n; i++) {
			g->work += store_ev_is_gpu_work(s, t, i);
			g->stream_memory += store_ev_type(s, t, i) == TRACE_EV_MEMORY;
		}
	}
	g->has_gpu = g->work > 0;
	if (!g->has_gpu && !g->stream_memory) { /* nothing to join: the ids go now */
		gpu_drop_ids(s, STORE_TRACK_HOST);
		gpu_drop_ids(s, STORE_TRACK_DEVICE);
		gpu_alloc_flags(a);
		return;
	}
	struct join_caps caps = {xcalloc(s->ntracks, sizeof(size_t)),
				 xcalloc(s->ntracks, sizeof(size_t)),
				 xcalloc(s->ntracks, sizeof(size_t))};
	gpu_join(a, &caps);
	free(caps.launches);
	free(caps.xlaunches);
	free(caps.anchors);
	gpu_drop_ids(s, STORE_TRACK_DEVICE);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		struct gpu_track *h = &g->tracks[ti];
		if (h->nlaunches) {
			h->launches = xrealloc(h->launches, h->nlaunches * sizeof(*h->launches));
			launches_sort(s, h->launches, h->nlaunches);
			gpu_flag_linked(a, ti);
		}
		if (h->nxlaunches) {
			h->xlaunches = xrealloc(h->xlaunches, h->nxlaunches * sizeof(*h->xlaunches));
			launches_sort(s, h->xlaunches, h->nxlaunches);
			gpu_flag_xid(a, ti);
		}
	}
	for (uint32_t ti = 0; ti < s->ntracks; ti++)
		if (s->tracks[ti].kind == STORE_TRACK_DEVICE)
			gpu_flag_unlinked(a, ti);
}

void gpu_free(struct gpu_info *g, uint32_t ntracks)
{
	for (uint32_t i = 0; g->tracks && i < ntracks; i++) {
		free(g->tracks[i].flags);
		free(g->tracks[i].launches);
		free(g->tracks[i].xlaunches);
		free(g->tracks[i].anchors);
	}
	free(g->tracks);
	free(g->roles);
	memset(g, 0, sizeof(*g));
}
