/*
 * import_comm.c - a collective's details in an imported trace: what an
 * event's own args say (our export's names, Kineto's on NCCL kernels,
 * "Input Dims" x "Input type" on gloo:* and nccl:* calls), and what the
 * PyTorch profiler says beside the call, on the record_param_comms range
 * c10d opens around each collective it enqueues ("Collective name", "Seq",
 * "In msg nelems", "dtype", "Group size", "Process Group Name").
 *
 * A record_param_comms describes (import_comm_resolve):
 *  - a host call (gloo:*, nccl:*, a Communication event) on its thread
 *    that it contains, or that contains it; failing that, in the same
 *    process, the first call after it of the same op still undescribed, in
 *    order (gloo runs a collective on its worker thread, after the calling
 *    thread enqueued it: first in, first out);
 *  - GPU communication whose "External id" is its own, or that of the host
 *    call it describes (Kineto ties a kernel to the operator that launched
 *    it by that id).
 * An event's own details win over its record_param_comms', field by field.
 *
 * Memory: one entry per record_param_comms and per Communication event,
 * a few dozen bytes each, until the trace is written.
 */
#include "formats/export_writer.h"
#include "formats/import/import_int.h"

#include "common/error.h"
#include "common/hmap.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- details from args ---------------------------------------------------- */

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

int import_comm_ext(struct import *im, const struct jargs *a, const char *arena,
		    struct trace_event_ext *x)
{
	const struct jspan *dt = a->dtype.set ? &a->dtype : a->input_dtype.set ? &a->input_dtype
									      : NULL;
	unsigned size = dt ? export_dtype_size(arena + dt->off, dt->len) : 0;
	uint64_t b;
	if (dt)
		x->dtype_str = istrings_intern(&im->strs, arena + dt->off, dt->len);
	if ((a->have & JA_BYTES) && a->bytes > 0)
		x->bytes = (uint64_t)a->bytes; /* ours: what the recorder measured */
	else if ((a->have & JA_IN_NELEMS) && size &&
		 !__builtin_mul_overflow(a->in_nelems, (uint64_t)size, &b))
		x->bytes = b; /* Kineto's: the input's elements of dtype */
	else if (a->have & JA_INPUT_BYTES)
		x->bytes = a->input_bytes;
	if (a->pg.set)
		x->pg_str = istrings_intern(&im->strs, arena + a->pg.off, a->pg.len);
	if (a->have & JA_GROUP_SIZE)
		x->group_size = clamp32(a->group_size);
	if ((a->have & JA_COLL_SEQ) && a->coll_seq >= 0) {
		x->has_coll_seq = 1;
		x->coll_seq = (uint64_t)a->coll_seq;
	}
	int64_t peer = -1;
	if (a->have & JA_PEER)
		peer = a->peer;
	else if ((a->have & (JA_SRC_RANK | JA_DST_RANK | JA_RANK)) ==
		 (JA_SRC_RANK | JA_DST_RANK | JA_RANK))
		/* a send's or receive's ends: the other one is the peer */
		peer = a->rank == a->src_rank ? a->dst_rank : a->rank == a->dst_rank ? a->src_rank : -1;
	if (peer >= 0 && peer <= INT32_MAX) {
		x->has_peer = 1;
		x->peer = (int32_t)peer;
	}
	return x->dtype_str || x->bytes || x->pg_str || x->group_size || x->has_coll_seq ||
	       x->has_peer;
}

static void refs_push(struct import_comm_ref **v, uint32_t *n, uint32_t *cap,
		      const struct import_comm_ref *r)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = *r;
}

void import_comm_meta(struct import *im, const struct import_comm_ref *m)
{
	refs_push(&im->metas, &im->nmetas, &im->metas_cap, m);
}

void import_comm_event(struct import *im, const struct import_comm_ref *e)
{
	refs_push(&im->cevs, &im->ncevs, &im->cevs_cap, e);
	im->cevs[im->ncevs - 1].meta = -1;
}

/* ---- which record_param_comms describes which call ---------------------- */

static int meta_cmp(const void *x, const void *y)
{
	const struct import_comm_ref *a = x, *b = y;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

/* The first meta on track starting at or after t (metas sorted). */
static uint32_t meta_lower(const struct import *im, uint32_t track, int64_t t)
{
	uint32_t lo = 0, hi = im->nmetas;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct import_comm_ref *m = &im->metas[mid];
		if (m->track < track || (m->track == track && m->start < t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A host call's meta on its own thread: the innermost one around its start,
 * else the first that starts inside it; -1 none. */
static int32_t meta_on_thread(const struct import *im, const struct import_comm_ref *e)
{
	uint32_t at = meta_lower(im, e->track, e->start + 1);
	for (uint32_t i = at; i-- > 0;) {
		const struct import_comm_ref *m = &im->metas[i];
		if (m->track != e->track)
			break;
		if (m->end > e->start)
			return (int32_t)i;
	}
	if (at < im->nmetas && im->metas[at].track == e->track && im->metas[at].start < e->end)
		return (int32_t)at;
	return -1;
}

/* The op lower-case and without its backend or '_': "gloo:all_reduce" and
 * "allreduce" both "allreduce". */
static void op_norm(const char *s, char *out, size_t size)
{
	const char *colon = strchr(s, ':');
	if (colon)
		s = colon + 1;
	size_t n = 0;
	for (; *s && n + 1 < size; s++)
		if (isalnum((unsigned char)*s))
			out[n++] = (char)tolower((unsigned char)*s);
	out[n] = '\0';
}

/* Whether a meta's "Collective name" agrees with a call's name: one holds
 * the other ("_allgather_base" and "gloo:all_gather"); no name agrees. */
static int op_agrees(const struct import *im, const struct import_comm_ref *m,
		     const struct import_comm_ref *e)
{
	char a[128], b[128];
	if (!m->op_str)
		return 1;
	op_norm(istrings_get(&im->strs, m->op_str), a, sizeof(a));
	op_norm(istrings_get(&im->strs, e->op_str), b, sizeof(b));
	return !*a || strstr(a, b) || strstr(b, a);
}

static const struct import_comm_ref *sort_refs;

/* Indexes into sort_refs by process, then start, then index. */
static int by_pid_start(const void *x, const void *y)
{
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	const struct import_comm_ref *a = &sort_refs[i], *b = &sort_refs[j];
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (i > j) - (i < j);
}

/* Host calls no meta on their thread describes: each takes the first
 * unclaimed meta of its process that started before it with its op. */
static void resolve_in_order(struct import *im)
{
	uint32_t *ev = xmalloc((im->ncevs + 1) * sizeof(*ev)), nev = 0;
	uint32_t *mt = xmalloc((im->nmetas + 1) * sizeof(*mt)), nmt = 0;
	for (uint32_t i = 0; i < im->ncevs; i++)
		if (!im->cevs[i].on_stream && im->cevs[i].meta < 0)
			ev[nev++] = i;
	for (uint32_t i = 0; i < im->nmetas; i++)
		if (!im->metas[i].used)
			mt[nmt++] = i;
	sort_refs = im->cevs;
	qsort(ev, nev, sizeof(*ev), by_pid_start);
	sort_refs = im->metas;
	qsort(mt, nmt, sizeof(*mt), by_pid_start);
	uint32_t from = 0;
	for (uint32_t k = 0; k < nev; k++) {
		struct import_comm_ref *e = &im->cevs[ev[k]];
		while (from < nmt && (im->metas[mt[from]].pid < e->pid || im->metas[mt[from]].used))
			from++;
		for (uint32_t i = from; i < nmt; i++) {
			struct import_comm_ref *m = &im->metas[mt[i]];
			if (m->pid != e->pid || m->start > e->start)
				break;
			if (!m->used && op_agrees(im, m, e)) {
				m->used = 1;
				e->meta = (int32_t)mt[i];
				break;
			}
		}
	}
	free(ev);
	free(mt);
}

void import_comm_resolve(struct import *im)
{
	if (!im->ncevs || !im->nmetas)
		return;
	qsort(im->metas, im->nmetas, sizeof(*im->metas), meta_cmp);
	struct hmap by_xid; /* (external id, 0) -> meta; (external id, 1) -> host call */
	hmap_init(&by_xid);
	for (uint32_t i = 0; i < im->ncevs; i++) {
		struct import_comm_ref *e = &im->cevs[i];
		if (e->on_stream)
			continue;
		e->meta = meta_on_thread(im, e);
		if (e->meta >= 0)
			im->metas[e->meta].used = 1;
	}
	resolve_in_order(im);
	for (uint32_t i = 0; i < im->ncevs; i++)
		if (!im->cevs[i].on_stream && im->cevs[i].external_id)
			hmap_put(&by_xid, im->cevs[i].external_id, 1, i);
	for (uint32_t i = 0; i < im->nmetas; i++)
		if (im->metas[i].external_id)
			hmap_put(&by_xid, im->metas[i].external_id, 0, i);
	for (uint32_t i = 0; i < im->ncevs; i++) {
		struct import_comm_ref *e = &im->cevs[i];
		if (!e->on_stream || !e->external_id)
			continue;
		const uint64_t *m = hmap_get(&by_xid, e->external_id, 0);
		const uint64_t *h = hmap_get(&by_xid, e->external_id, 1);
		if (m)
			e->meta = (int32_t)*m;
		else if (h)
			e->meta = im->cevs[*h].meta;
	}
	hmap_free(&by_xid);
}

void import_comm_merge(const struct import *im, uint32_t cev, struct trace_event_ext *x,
		       int *has_ext)
{
	if (cev >= im->ncevs || im->cevs[cev].meta < 0)
		return;
	const struct trace_event_ext *m = &im->metas[im->cevs[cev].meta].x;
	if (!x->bytes)
		x->bytes = m->bytes;
	if (!x->pg_str)
		x->pg_str = m->pg_str;
	if (!x->dtype_str)
		x->dtype_str = m->dtype_str;
	if (!x->group_size)
		x->group_size = m->group_size;
	if (!x->has_coll_seq) {
		x->has_coll_seq = m->has_coll_seq;
		x->coll_seq = m->coll_seq;
	}
	if (!x->has_peer) {
		x->has_peer = m->has_peer;
		x->peer = m->peer;
	}
	static const struct trace_event_ext zero;
	if (memcmp(x, &zero, sizeof(zero)) != 0)
		*has_ext = 1;
}
