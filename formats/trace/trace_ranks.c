/*
 * trace_ranks.c - a rank's root process (trace_ranks.h).
 */
#include "formats/trace/trace_ranks.h"

#include "common/error.h"

#include <stdlib.h>

int32_t trace_process_rank(const struct trace_process *p)
{
	if (p->rank < 0 || p->world_size == 0 || (p->world_size > 0 && p->rank >= p->world_size))
		return -1;
	return p->rank;
}

struct member {
	uint32_t pid, index;
	uint64_t start;
};

static int member_cmp(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

/* The first member of pid in the sorted m[0..n), or n. */
static size_t first_of(const struct member *m, size_t n, uint32_t pid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int64_t trace_rank_root(trace_process_at_fn at, const void *ctx, uint32_t n, int32_t rank)
{
	struct member *m = xmalloc((n ? n : 1) * sizeof(*m));
	size_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_process *p = at(ctx, i);
		if (trace_process_rank(p) == rank)
			m[k++] = (struct member){p->pid, i, p->start_ns};
	}
	qsort(m, k, sizeof(*m), member_cmp);
	int64_t root = -1;
	uint64_t root_start = 0;
	for (size_t i = 0; i < k; i++) {
		if (i && m[i - 1].pid == m[i].pid)
			continue; /* a later image: its pid's first decides */
		const struct trace_process *p = at(ctx, m[i].index);
		size_t q = first_of(m, k, p->ppid);
		int parent_in = q < k && m[q].pid == p->ppid && p->ppid != p->pid &&
				m[q].start <= p->start_ns;
		if (parent_in || (root >= 0 && p->start_ns >= root_start))
			continue;
		size_t last = i; /* the pid's latest image */
		while (last + 1 < k && m[last + 1].pid == m[i].pid)
			last++;
		root = m[last].index;
		root_start = p->start_ns;
	}
	free(m);
	return root;
}
