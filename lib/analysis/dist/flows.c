/*
 * flows.c - a job's communication calls joined across ranks for the chrome
 * export (flows.h).
 */
#include "lib/analysis/dist/flows.h"

#include "lib/analysis/dist/collective.h"
#include "lib/analysis/dist/dist.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* A communication call of a rank, as written. */
struct xcall {
	uint64_t pid, tid;
	uint64_t start, dur;
	uint64_t seq1, bytes;
	uint32_t part, thread;
	uint32_t op, pg;      /* in calls.names */
	uint32_t group_size;
	int32_t peer;
	int on_stream;
	int host_exec; /* a CPU backend's execution on the host (dist.h) */
};

void job_calls_add(void *ctx, const struct chrome_comm *c)
{
	struct job_calls *cs = ctx;
	if (c->part >= cs->j->nranks)
		return; /* a launcher's: no rank to match it with */
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 1024;
		cs->v = xrealloc(cs->v, cs->cap * sizeof(*cs->v));
	}
	const struct trace_event_ext *x = c->x;
	cs->v[cs->n++] = (struct xcall){
		.pid = c->pid,
		.tid = c->tid,
		.start = c->start_ns,
		.dur = c->dur_ns,
		.seq1 = x && x->has_coll_seq ? x->coll_seq + 1 : 0,
		.bytes = x ? x->bytes : 0,
		.part = c->part,
		.thread = c->thread,
		.op = names_intern(&cs->names, c->name, strlen(c->name)),
		.pg = names_intern(&cs->names, c->pg, strlen(c->pg)),
		.group_size = x ? x->group_size : 0,
		.peer = x && x->has_peer ? x->peer : -1,
		.on_stream = c->on_stream,
		.host_exec = !c->on_stream && dist_name_is_host_exec(c->name, strlen(c->name)),
	};
}

void job_calls_gpu(void *ctx, uint32_t part)
{
	struct job_calls *cs = ctx;
	if (part >= cs->j->nranks)
		return;
	if (!cs->gpu)
		cs->gpu = xcalloc(cs->j->nranks, 1);
	cs->gpu[part] = 1;
}

static const struct xcall *sort_base;

/* By start, ties in the order collected: the order the matching keeps. */
static int by_start(const void *a, const void *b)
{
	const struct xcall *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

/* By thread, then start, longer first: a thread's outermost calls lead. */
static int by_thread(const void *a, const void *b)
{
	const struct xcall *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

/* A rank's calls, as the Distributed view takes them (dist_calls_of(), its
 * facts from what was written of it): indexes into cs->v, in start order;
 * *n their number. */
static size_t *rank_calls(const struct job_calls *cs, uint32_t part, size_t *n)
{
	size_t *idx = xmalloc((cs->n ? cs->n : 1) * sizeof(*idx)), k = 0;
	struct dist_src src = {.gpu_comp = cs->gpu && cs->gpu[part]};
	for (size_t i = 0; i < cs->n; i++) {
		const struct xcall *x = &cs->v[i];
		if (x->part == part) {
			src.gpu_comm |= x->on_stream;
			src.host_exec |= x->host_exec;
		}
	}
	enum dist_calls rule = dist_calls_of(&src);
	for (size_t i = 0; i < cs->n && rule != DIST_CALLS_NONE; i++) {
		const struct xcall *x = &cs->v[i];
		if (x->part == part && x->on_stream == (rule == DIST_CALLS_GPU) &&
		    (rule != DIST_CALLS_HOST_EXEC || x->host_exec))
			idx[k++] = i;
	}
	sort_base = cs->v;
	if (rule != DIST_CALLS_GPU) { /* host calls: the outermost of each thread */
		qsort(idx, k, sizeof(*idx), by_thread);
		size_t kept = 0;
		uint64_t end = 0;
		for (size_t i = 0; i < k; i++) {
			const struct xcall *x = &cs->v[idx[i]];
			if (i && cs->v[idx[i - 1]].thread != x->thread)
				end = 0; /* a thread's first call */
			if (collective_outermost(&end, x->start, x->dur))
				idx[kept++] = idx[i];
		}
		k = kept;
	}
	qsort(idx, k, sizeof(*idx), by_start);
	*n = k;
	return idx;
}

/* The collective flows' ids: 2^52 + 1, 2 ...: above every ac2g id of a job
 * (a correlation id + the part's place << 40), so that a viewer that keys
 * flows by id alone never joins the two, and exact in a double. */
#define COLL_FLOW_ID0 ((UINT64_C(1) << 52) + 1)

struct member {
	uint32_t match;
	const struct xcall *x;
	uint32_t rank;
};

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	if (x->match != y->match)
		return x->match < y->match ? -1 : 1;
	if (x->x->start != y->x->start)
		return x->x->start < y->x->start ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

int job_calls_flows(struct job_calls *cs, int (*flow)(void *ctx, const struct chrome_flow_end *f),
		    void *ctx, uint64_t *matched)
{
	const struct job *j = cs->j;
	struct collective_set set;
	collective_set_init(&set, j->nranks);
	size_t **idx = xcalloc(j->nranks ? j->nranks : 1, sizeof(*idx));
	size_t total = 0;
	for (uint32_t r = 0; r < j->nranks; r++) {
		size_t n;
		idx[r] = rank_calls(cs, r, &n);
		for (size_t k = 0; k < n; k++) {
			const struct xcall *x = &cs->v[idx[r][k]];
			struct collective_call call = {
				.start_ns = x->start,
				.dur_ns = x->dur,
				.seq1 = x->seq1,
				.bytes = x->bytes,
				.group_size = x->group_size,
				.peer = x->peer,
				.step = -1,
				.dtype = COLLECTIVE_NONE,
			};
			collective_add(&set, r, &call, names_get(&cs->names, x->op),
				 names_get(&cs->names, x->pg));
		}
		total += n;
	}
	collective_match(&set);
	/* the calls were added in start order, so set's calls are idx's */
	struct member *m = xmalloc((total ? total : 1) * sizeof(*m));
	size_t nm = 0;
	for (uint32_t r = 0; r < j->nranks; r++) {
		const struct collective_rank *cr = &set.ranks[r];
		for (size_t k = 0; k < cr->n; k++)
			if (!cr->calls[k].mismatch && set.matches[cr->calls[k].match].members > 1)
				m[nm++] = (struct member){cr->calls[k].match, &cs->v[idx[r][k]], r};
		free(idx[r]);
	}
	free(idx);
	qsort(m, nm, sizeof(*m), member_cmp);
	int rc = 0;
	*matched = 0;
	for (size_t i = 0; i < nm && rc == 0; i++) {
		int first = i == 0 || m[i - 1].match != m[i].match;
		int last = i + 1 == nm || m[i + 1].match != m[i].match;
		*matched += first;
		struct chrome_flow_end f = {
			.id = COLL_FLOW_ID0 + m[i].match,
			.ph = first ? 's' : last ? 'f' : 't',
			.pid = m[i].x->pid,
			.tid = m[i].x->tid,
			.ts_ns = m[i].x->start,
		};
		rc = flow(ctx, &f);
	}
	free(m);
	collective_set_free(&set);
	return rc;
}

void job_calls_init(struct job_calls *cs, const struct job *j)
{
	memset(cs, 0, sizeof(*cs));
	cs->j = j;
	names_init(&cs->names);
}

void job_calls_free(struct job_calls *cs)
{
	free(cs->v);
	free(cs->gpu);
	names_free(&cs->names);
	memset(cs, 0, sizeof(*cs));
}
