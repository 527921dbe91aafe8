/*
 * rank.c - one rank's figures for the Distributed view (dist.h): where its
 * computation and communication come from, their unions over a window, the
 * sets its steps are split by, and its communication calls for the match
 * across ranks.
 */
#include "lib/analysis/dist/dist.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* ---- sources and unions ---------------------------------------------------------- */

int dist_name_is_host_exec(const char *name, size_t len)
{
	size_t n = trace_name_comm_call(name, len);
	return n && !(n == 4 && strncasecmp(name, "nccl", 4) == 0);
}

int dist_is_host_exec(const struct store *s, uint32_t desc)
{
	const char *name = store_name(s, s->descs[desc].name);
	return dist_name_is_host_exec(name, strlen(name));
}

/* With GPU work, a host communication call (c10d::allreduce_, record_param_comms,
 * nccl:all_reduce) only enqueues the GPU's communication: its time is no
 * communication, and a rank that has GPU work but no communication on the
 * GPU has none (a world size of 1: c10d's calls launch nothing), unless a
 * CPU backend ran its collectives on the host (host_exec, dist.h). */
void dist_program_fig(const struct analysis *a, const struct dist_src *src, uint64_t *comm,
		      uint64_t *comp, uint64_t *overlap)
{
	analysis_types(a);
	if (src->gpu_comp && !src->host_exec) {
		/* GPU work: the unions the analysis has; the host's
		 * communication calls only enqueue (dist.h) */
		*comm = a->comm.merged_ns;
		*comp = a->comp.merged_ns;
		*overlap = dist_sub0(*comm + *comp, a->busy_ns);
		return;
	}
	struct dist_fig f;
	dist_walk(a, &a->window, src, &f, NULL);
	*comm = f.comm;
	*comp = f.comp;
	*overlap = dist_sub0(f.comm + f.comp, f.busy);
}

void dist_sources(const struct analysis *a, struct dist_src *src)
{
	const struct store *s = &a->store;
	src->gpu_comp = a->gpu.has_gpu;
	src->gpu_comm = 0;
	src->host_exec = 0;
	for (uint32_t ti = 0; ti < s->ntracks && !src->gpu_comm; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE)
			continue;
		for (size_t i = 0; i < t->n && !src->gpu_comm; i++)
			src->gpu_comm = store_ev_is_gpu_work(s, t, i) &&
					(a->gpu.tracks[ti].flags[i] & GPU_COMM);
	}
	if (!src->gpu_comp || src->gpu_comm)
		return;
	for (uint32_t ti = 0; ti < s->ntracks && !src->host_exec; ti++) {
		const struct store_track *t = &s->tracks[ti];
		for (size_t i = 0; t->kind == STORE_TRACK_HOST && i < t->n && !src->host_exec; i++)
			src->host_exec = !store_ev_is_instant(t, i) &&
					 dist_is_host_exec(s, store_ev_desc(t, i));
	}
}

/* The raw sets as the walk meets them (in start order), before the parts
 * are told apart. */
struct raw_sets {
	struct ivl_set data, comp, comm;
};

/* What the walk adds an interval to: the window's union, and the raw set. */
static void walk_add(struct ivl_union *u, struct ivl_set *raw, uint64_t start, uint64_t end)
{
	ivl_union_add(u, start, end);
	if (raw)
		ivl_set_add_sorted(raw, start, end);
}

void dist_walk(const struct analysis *a, const struct ivl_set *clip, const struct dist_src *src,
	       struct dist_fig *f, struct dist_sets *sets)
{
	const struct store *s = &a->store;
	struct ivl_union comp, comm, busy, dl, active;
	ivl_union_init(&comp, clip);
	ivl_union_init(&comm, clip);
	ivl_union_init(&busy, clip);
	ivl_union_init(&dl, clip);
	ivl_union_init(&active, clip);
	struct raw_sets raw;
	ivl_set_init(&raw.data);
	ivl_set_init(&raw.comp);
	ivl_set_init(&raw.comm);
	struct ivl_set *rd = sets ? &raw.data : NULL, *rc = sets ? &raw.comp : NULL,
		       *rm = sets ? &raw.comm : NULL;
	uint64_t *comm_end = xcalloc(s->ntracks ? s->ntracks : 1, sizeof(*comm_end));
	struct store_iter it;
	uint32_t ti;
	size_t i;
	store_iter_init(&it, s, NULL, 0);
	while (store_iter_next(&it, &ti, &i)) {
		const struct store_track *t = &s->tracks[ti];
		if (store_ev_is_instant(t, i))
			continue;
		uint64_t start = t->start[i], end = store_ev_end(t, i);
		unsigned type = store_ev_type(s, t, i);
		if (t->kind == STORE_TRACK_DEVICE) {
			if (!trace_event_type_is_device(type))
				continue;
			int is_comm = (a->gpu.tracks[ti].flags[i] & GPU_COMM) != 0;
			if (is_comm && src->gpu_comm) {
				walk_add(&comm, rm, start, end);
				ivl_union_add(&busy, start, end);
			} else if (!is_comm && type == TRACE_EV_KERNEL && src->gpu_comp) {
				walk_add(&comp, rc, start, end);
				ivl_union_add(&busy, start, end);
			}
			continue;
		}
		if (a->gpu.roles[store_ev_desc(t, i)] & ROLE_COMM_OP) {
			/* dist.h: the host's calls on a CPU rank, a CPU backend's
			 * executions on a rank whose GPU does no communication */
			if (!src->gpu_comp ||
			    (src->host_exec && dist_is_host_exec(s, store_ev_desc(t, i)))) {
				walk_add(&comm, rm, start, end);
				ivl_union_add(&busy, start, end);
			}
			ivl_union_add(&active, start, end);
			if (end > comm_end[ti])
				comm_end[ti] = end;
		} else if (type == TRACE_EV_OPERATOR) {
			ivl_union_add(&active, start, end);
			if (!src->gpu_comp && start >= comm_end[ti]) {
				walk_add(&comp, rc, start, end);
				ivl_union_add(&busy, start, end);
			}
		} else if (type == TRACE_EV_DATALOADER) {
			walk_add(&dl, rd, start, end);
			ivl_union_add(&active, start, end);
		}
	}
	store_iter_free(&it);
	free(comm_end);
	f->window_ns = ivl_set_measure(clip);
	f->comp = ivl_union_measure(&comp);
	f->comm = ivl_union_measure(&comm);
	f->busy = ivl_union_measure(&busy);
	f->dataloader = ivl_union_measure(&dl);
	f->host_active = ivl_union_measure(&active);
	if (!sets)
		return;
	/* the parts, each without what the ones before it hold */
	ivl_set_seal(&raw.data);
	ivl_set_seal(&raw.comp);
	ivl_set_seal(&raw.comm);
	struct ivl_set data_comp;
	sets->data = raw.data; /* moved */
	ivl_set_subtract(&raw.comp, &sets->data, &sets->comp);
	ivl_set_union(&sets->data, &sets->comp, &data_comp);
	ivl_set_subtract(&raw.comm, &data_comp, &sets->comm);
	ivl_set_free(&data_comp);
	ivl_set_union(&raw.comp, &raw.comm, &sets->both_all);
	sets->comp_all = raw.comp; /* moved */
	sets->comm_all = raw.comm;
}

void dist_sets_free(struct dist_sets *s)
{
	ivl_set_free(&s->data);
	ivl_set_free(&s->comp);
	ivl_set_free(&s->comm);
	ivl_set_free(&s->comp_all);
	ivl_set_free(&s->comm_all);
	ivl_set_free(&s->both_all);
}

/* ---- communication calls ----------------------------------------------------------- */

/* Per desc: 1 when a host range of it is a communication call's execution
 * (type Communication, or named BACKEND:OP), the calls matched across ranks;
 * not c10d::* (torch 2's enqueue of the same call). */
static uint8_t *call_descs(const struct store *s)
{
	uint8_t *is = xcalloc(s->ndescs ? s->ndescs : 1, 1);
	for (uint32_t d = 0; d < s->ndescs; d++) {
		const char *name = store_name(s, s->descs[d].name);
		is[d] = s->descs[d].type == TRACE_EV_COMMUNICATION ||
			trace_name_comm_call(name, strlen(name)) != 0;
	}
	return is;
}

struct call_ctx {
	struct collective_set *cs;
	uint32_t ri;
	const struct analysis *a;
	int32_t (*slot)(void *ctx, uint64_t t);
	void *slot_ctx;
	uint32_t group_size; /* where a call does not say: the rank's world size */
};

static void add_call(struct call_ctx *c, uint64_t start, uint64_t dur, uint64_t at,
		     const struct store_comm *cm, const char *op)
{
	const struct store *s = &c->a->store;
	struct collective_call k = {
		.start_ns = start,
		.dur_ns = dur,
		.seq1 = cm ? cm->seq1 : 0,
		.bytes = cm ? cm->bytes : 0,
		.group_size = cm && cm->group_size ? cm->group_size : c->group_size,
		.peer = cm ? cm->peer : -1,
		.step = c->slot(c->slot_ctx, at),
		.dtype = COLLECTIVE_NONE,
	};
	if (cm && cm->dtype) {
		const char *dt = store_name(s, cm->dtype);
		k.dtype = names_intern(&c->cs->names, dt, strlen(dt));
	}
	collective_add(c->cs, c->ri, &k, op, cm ? store_name(s, cm->pg) : "");
}

/* A rank without GPU communication: its host calls, the outermost of each
 * thread. */
static void host_calls(struct call_ctx *c, const uint8_t *is_call)
{
	const struct store *s = &c->a->store;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST)
			continue;
		struct store_extra_cursor xc = {0};
		uint64_t call_end = 0;
		for (size_t i = 0; i < t->n; i++) {
			uint32_t d = store_ev_desc(t, i);
			if (!is_call[d] || store_ev_is_instant(t, i) ||
			    !collective_outermost(&call_end, t->start[i], t->dur[i]))
				continue;
			const struct store_comm *cm = store_extra_comm(t, store_extra_next(t, &xc, i));
			add_call(c, t->start[i], t->dur[i], t->start[i], cm,
				 store_name(s, s->descs[d].name));
		}
	}
}

/* The outermost communication call around a launching call, or STORE_NONE. */
static uint32_t comm_call_of(const struct store_track *t, const uint8_t *is_call, uint32_t call)
{
	uint32_t found = STORE_NONE;
	for (uint32_t p = call; p != STORE_NONE; p = t->parent[p])
		if (is_call[store_ev_desc(t, p)] && !store_ev_is_instant(t, p))
			found = p;
	return found;
}

struct gpu_span {
	uint64_t start, end;
};

/* A rank with GPU communication: each host call's communication GPU work
 * (from its first start to its last end) is one call, with the host call's
 * details; communication work no call launched is a call of its own. */
static void gpu_calls(struct call_ctx *c, const uint8_t *is_call)
{
	const struct analysis *a = c->a;
	const struct store *s = &a->store;
	uint8_t **taken = xcalloc(s->ntracks ? s->ntracks : 1, sizeof(*taken));
	for (uint32_t ti = 0; ti < s->ntracks; ti++)
		if (s->tracks[ti].kind == STORE_TRACK_DEVICE)
			taken[ti] = xcalloc(s->tracks[ti].n ? s->tracks[ti].n : 1, 1);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		const struct gpu_track *h = &a->gpu.tracks[ti];
		if (t->kind != STORE_TRACK_HOST || !h->nlaunches)
			continue;
		uint32_t cur = STORE_NONE;
		struct gpu_span span = {0, 0};
		for (size_t k = 0; k <= h->nlaunches; k++) {
			uint32_t at = STORE_NONE;
			const struct gpu_launch *l = k < h->nlaunches ? &h->launches[k] : NULL;
			if (l && (a->gpu.tracks[l->track].flags[l->index] & GPU_COMM))
				at = comm_call_of(t, is_call, l->call);
			if (l && at == STORE_NONE)
				continue;
			if (at != cur && cur != STORE_NONE) {
				const char *op = store_name(s, s->descs[store_ev_desc(t, cur)].name);
				add_call(c, span.start, span.end - span.start, t->start[cur],
					 store_ev_comm(t, cur), op);
			}
			if (!l)
				break;
			const struct store_track *gt = &s->tracks[l->track];
			uint64_t ws = gt->start[l->index], we = store_ev_end(gt, l->index);
			if (at != cur)
				span = (struct gpu_span){ws, we};
			span.start = ws < span.start ? ws : span.start;
			span.end = we > span.end ? we : span.end;
			cur = at;
			taken[l->track][l->index] = 1;
		}
	}
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE)
			continue;
		for (size_t i = 0; i < t->n; i++)
			if (!taken[ti][i] && store_ev_is_gpu_work(s, t, i) &&
			    (a->gpu.tracks[ti].flags[i] & GPU_COMM))
				add_call(c, t->start[i], t->dur[i], t->start[i], store_ev_comm(t, i),
					 store_name(s, s->descs[store_ev_desc(t, i)].name));
		free(taken[ti]);
	}
	free(taken);
}

void dist_rank_calls(struct collective_set *cs, uint32_t ri, const struct analysis *a,
		     const struct dist_src *src, uint32_t group_size,
		     int32_t (*slot)(void *ctx, uint64_t t), void *ctx)
{
	uint8_t *is_call = call_descs(&a->store);
	struct call_ctx c = {cs, ri, a, slot, ctx, group_size};
	switch (dist_calls_of(src)) {
	case DIST_CALLS_GPU:
		gpu_calls(&c, is_call);
		break;
	case DIST_CALLS_HOST_EXEC:
		for (uint32_t d = 0; d < a->store.ndescs; d++)
			is_call[d] = is_call[d] && dist_is_host_exec(&a->store, d);
		/* fall through */
	case DIST_CALLS_HOST:
		host_calls(&c, is_call);
		break;
	case DIST_CALLS_NONE:
		break;
	}
	free(is_call);
}
