/*
 * collective.c - matching the ranks' communication calls (collective.h).
 *
 * Keys are two u64 in an hmap (common/hmap.h): the kind of key in the
 * top bits of the first with the group, the rest in the second.
 *   point-to-point  k1 = 3 << 62 | pg << 32 | source;   k2 = dest << 32 | ordinal
 *   sequence        k1 = 1 << 62 | pg;                  k2 = seq + 1
 *   ordinal         k1 = 2 << 62 | pg;                  k2 = ordinal
 * Ranks are visited in index order, so the first call of a key comes from
 * the lowest rank that has it, which sets the op.
 */
#include "lib/analysis/dist/collective.h"

#include "common/error.h"
#include "common/hmap.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void collective_set_init(struct collective_set *c, uint32_t nranks)
{
	memset(c, 0, sizeof(*c));
	names_init(&c->names);
	names_intern(&c->names, "", 0); /* id 0: unknown */
	c->nranks = nranks;
	c->ranks = xcalloc(nranks ? nranks : 1, sizeof(*c->ranks));
	for (uint32_t r = 0; r < nranks; r++)
		c->ranks[r].rank = (int32_t)r;
}

void collective_set_free(struct collective_set *c)
{
	for (uint32_t r = 0; r < c->nranks; r++)
		free(c->ranks[r].calls);
	free(c->ranks);
	free(c->matches);
	names_free(&c->names);
	memset(c, 0, sizeof(*c));
}

void collective_add(struct collective_set *c, uint32_t r, const struct collective_call *call,
		    const char *op, const char *pg)
{
	if (r >= c->nranks)
		BUG("collective_add to rank index %u of %u", r, c->nranks);
	struct collective_rank *cr = &c->ranks[r];
	if (cr->n == cr->cap) {
		cr->cap = cr->cap ? cr->cap * 2 : 256;
		cr->calls = xrealloc(cr->calls, cr->cap * sizeof(*cr->calls));
	}
	struct collective_call *k = &cr->calls[cr->n++];
	*k = *call;
	k->op = names_intern(&c->names, op, strlen(op));
	k->pg = names_intern(&c->names, pg ? pg : "", pg ? strlen(pg) : 0);
	k->match = COLLECTIVE_NONE;
	k->mismatch = 0;
	k->wait_ns = 0;
}

/* ---- op names ----------------------------------------------------------------- */

/* The op, lower-case, without its backend prefix and without '_': what
 * torch ("gloo:all_reduce"), Paddle ("c_allreduce_sum") and NCCL's kernels
 * ("ncclDevKernel_AllReduce_RING_LL") have in common. */
static void op_norm(const char *op, char *out, size_t size)
{
	const char *colon = strchr(op, ':');
	if (colon && colon[1] != ':')
		op = colon + 1;
	size_t n = 0;
	for (; *op && n + 1 < size; op++)
		if (isalnum((unsigned char)*op))
			out[n++] = (char)tolower((unsigned char)*op);
	out[n] = '\0';
}

int collective_p2p_direction(const char *op)
{
	char n[256];
	op_norm(op, n, sizeof(n));
	int send = strstr(n, "send") != NULL, recv = strstr(n, "recv") != NULL;
	return send == recv ? 0 : send ? 1 : 2;
}

enum collective_kind { CK_OTHER, CK_ALL_REDUCE, CK_REDUCE_SCATTER, CK_ALL_GATHER, CK_ALL_TO_ALL };

static enum collective_kind op_kind(const char *op)
{
	char n[256];
	op_norm(op, n, sizeof(n));
	if (strstr(n, "allreduce"))
		return CK_ALL_REDUCE;
	if (strstr(n, "reducescatter"))
		return CK_REDUCE_SCATTER;
	if (strstr(n, "allgather"))
		return CK_ALL_GATHER;
	if (strstr(n, "alltoall"))
		return CK_ALL_TO_ALL;
	return CK_OTHER;
}

double collective_bus_factor(const char *op, uint32_t n)
{
	if (n == 0)
		return 1.0;
	switch (op_kind(op)) {
	case CK_ALL_REDUCE:
		return 2.0 * (double)(n - 1) / (double)n;
	case CK_REDUCE_SCATTER:
	case CK_ALL_GATHER:
	case CK_ALL_TO_ALL:
		return (double)(n - 1) / (double)n;
	default:
		return 1.0;
	}
}

double collective_algo_bytes(const char *op, uint64_t bytes, uint32_t n)
{
	if (op_kind(op) == CK_ALL_GATHER && n)
		return (double)bytes * (double)n;
	return (double)bytes;
}

/* ---- matching --------------------------------------------------------------------- */

static int call_cmp(const void *x, const void *y)
{
	const struct collective_call *a = x, *b = y;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* A stable sort by start: calls are added nearly in order, so an insertion
 * sort where they are, qsort with the index as tie-break otherwise. */
static void calls_sort(struct collective_rank *cr)
{
	size_t out = 0;
	for (size_t i = 1; i < cr->n; i++)
		out += cr->calls[i].start_ns < cr->calls[i - 1].start_ns;
	if (!out)
		return;
	if (out < 64) {
		for (size_t i = 1; i < cr->n; i++) {
			struct collective_call k = cr->calls[i];
			size_t j = i;
			while (j > 0 && cr->calls[j - 1].start_ns > k.start_ns) {
				cr->calls[j] = cr->calls[j - 1];
				j--;
			}
			cr->calls[j] = k;
		}
		return;
	}
	/* distinct starts sort the same either way; equal ones keep their order
	 * through the index, kept in wait_ns (zero until matched) */
	for (size_t i = 0; i < cr->n; i++)
		cr->calls[i].wait_ns = i;
	qsort(cr->calls, cr->n, sizeof(*cr->calls), call_cmp);
	for (size_t i = 1; i < cr->n; i++) {
		size_t j = i;
		while (j > 0 && cr->calls[j - 1].start_ns == cr->calls[j].start_ns &&
		       cr->calls[j - 1].wait_ns > cr->calls[j].wait_ns) {
			struct collective_call t = cr->calls[j];
			cr->calls[j] = cr->calls[j - 1];
			cr->calls[j - 1] = t;
			j--;
		}
	}
	for (size_t i = 0; i < cr->n; i++)
		cr->calls[i].wait_ns = 0;
}

/* Per rank, the ordinals handed out so far, by (kind, group[, pair]). */
struct ordinals {
	struct hmap next;
};

static uint64_t ordinal_next(struct ordinals *o, uint64_t k1, uint64_t k2)
{
	uint64_t *v = hmap_get(&o->next, k1, k2);
	if (v)
		return (*v)++;
	hmap_put(&o->next, k1, k2, 1);
	return 0;
}

static void call_key(const struct collective_set *c, const struct collective_rank *cr,
		     const struct collective_call *k, struct ordinals *o, uint64_t *k1, uint64_t *k2)
{
	uint64_t pg = k->pg;
	int dir = k->peer >= 0 ? collective_p2p_direction(names_get(&c->names, k->op)) : 0;
	if (dir && cr->rank >= 0) {
		uint64_t src = dir == 1 ? (uint32_t)cr->rank : (uint32_t)k->peer;
		uint64_t dst = dir == 1 ? (uint32_t)k->peer : (uint32_t)cr->rank;
		*k1 = 3ull << 62 | pg << 32 | (src & 0xffffffffu);
		*k2 = dst << 32 | (ordinal_next(o, *k1, dst) & 0xffffffffu);
		return;
	}
	if (k->seq1) {
		*k1 = 1ull << 62 | pg;
		*k2 = k->seq1;
		return;
	}
	*k1 = 2ull << 62 | pg;
	*k2 = ordinal_next(o, *k1, 0);
}

static uint32_t match_new(struct collective_set *c, size_t *cap, const struct collective_call *k,
			  uint32_t r)
{
	if (c->nmatches == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		c->matches = xrealloc(c->matches, *cap * sizeof(*c->matches));
	}
	c->matches[c->nmatches] = (struct collective_match){k->op, k->pg, 1, k->dur_ns, r};
	return (uint32_t)c->nmatches++;
}

/* "rank 1's call 3 in order (in group '0') is nccl:all_reduce where rank 0's
 * is nccl:all_to_all"; the group's words only where the trace names one.
 * ordinal: the key's (from 0), for a call without a sequence number. */
static void note_mismatch(struct collective_set *c, const struct collective_call *k, uint32_t r,
			  const struct collective_match *m, uint64_t ordinal)
{
	if (c->mismatches++)
		return;
	const char *pg = names_get(&c->names, k->pg);
	char at[64], group[160] = "";
	if (k->seq1)
		snprintf(at, sizeof(at), "of sequence number %llu", (unsigned long long)(k->seq1 - 1));
	else
		snprintf(at, sizeof(at), "%llu in order", (unsigned long long)ordinal + 1);
	if (*pg)
		snprintf(group, sizeof(group), " (in group '%s')", pg);
	size_t size = sizeof(c->mismatch_note);
	int n = snprintf(c->mismatch_note, size, "rank %d's call %s%s is %s where rank %d's is %s",
			 c->ranks[r].rank, at, group, names_get(&c->names, k->op),
			 c->ranks[m->first].rank, names_get(&c->names, m->op));
	if (n > 0 && (size_t)n >= size) /* long names: the note is cut, and says so */
		memcpy(c->mismatch_note + size - 4, "...", 4);
}

void collective_match(struct collective_set *c)
{
	struct hmap keys;
	hmap_init(&keys);
	size_t cap = 0;
	c->nmatches = 0;
	c->mismatches = 0;
	c->mismatch_note[0] = '\0';
	for (uint32_t r = 0; r < c->nranks; r++) {
		struct collective_rank *cr = &c->ranks[r];
		calls_sort(cr);
		struct ordinals o;
		hmap_init(&o.next);
		for (size_t i = 0; i < cr->n; i++) {
			struct collective_call *k = &cr->calls[i];
			uint64_t k1, k2;
			call_key(c, cr, k, &o, &k1, &k2);
			uint64_t *at = hmap_get(&keys, k1, k2);
			if (!at) {
				k->match = match_new(c, &cap, k, r);
				hmap_put(&keys, k1, k2, k->match);
				continue;
			}
			struct collective_match *m = &c->matches[*at];
			k->match = (uint32_t)*at;
			if (k->op != m->op && (k1 >> 62) != 3) {
				k->mismatch = 1;
				note_mismatch(c, k, r, m, k2);
				continue;
			}
			m->members++;
			if (k->dur_ns < m->min_ns)
				m->min_ns = k->dur_ns;
		}
		hmap_free(&o.next);
	}
	hmap_free(&keys);
	for (uint32_t r = 0; r < c->nranks; r++) {
		struct collective_rank *cr = &c->ranks[r];
		for (size_t i = 0; i < cr->n; i++) {
			struct collective_call *k = &cr->calls[i];
			if (!k->mismatch)
				k->wait_ns = k->dur_ns - c->matches[k->match].min_ns;
		}
	}
}
