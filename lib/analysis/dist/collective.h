/*
 * collective.h - one collective call across the ranks of a job: each rank's
 * communication calls, matched call by call, and what each rank waited in
 * each (the time it spent in the call beyond the fastest rank's).
 *
 * A rank's calls are what it spent communicating: its host communication
 * calls (gloo's and MPI's collectives run on host threads), or on a rank
 * with GPU communication, the GPU work of each call (view_distributed.c
 * collects them). Each call is keyed, within its process group (by name):
 *  - a point-to-point call (a peer, and an op that names a send or a
 *    receive): by (source, destination, ordinal of the transfer between
 *    them in start order), so that a send meets its receive;
 *  - else, when its sequence number in the group is known: by it;
 *  - else by its ordinal in start order among the rank's calls of that
 *    group that have no sequence number.
 * Calls of several ranks with one key are one collective call. The op names
 * must agree (except for point-to-point, whose key holds the direction):
 * the call of the lowest rank that has the key sets the op, and a rank whose
 * call there names another op is a mismatch, counted and reported, and not
 * part of the match (its wait is 0).
 *
 * wait(rank, call) = its duration - the smallest duration of the matched
 * call over the ranks that have it; a call no other rank has waits 0.
 *
 * Invariants after collective_match(): each rank's calls are in start order (ties
 * in the order given); every call's match is set; a match's min_ns is the
 * least duration of its member calls.
 */
#ifndef GPDL_ANALYSIS_DIST_COLLECTIVE_H
#define GPDL_ANALYSIS_DIST_COLLECTIVE_H

#include "lib/analysis/store/names.h"

#include <stddef.h>
#include <stdint.h>

#define COLLECTIVE_NONE UINT32_MAX

/* One call of one rank. */
struct collective_call {
	uint64_t start_ns, dur_ns;
	uint64_t seq1;       /* its sequence number in the group + 1; 0 unknown */
	uint64_t bytes;      /* what the rank contributes; 0 unknown */
	uint32_t op;         /* in collective_set.names: "gloo:all_reduce", a kernel's name */
	uint32_t pg;         /* in collective_set.names; "" unknown */
	uint32_t group_size; /* 0 unknown */
	int32_t peer;        /* point-to-point: the other rank; -1 none */
	int32_t step;        /* the caller's: the counted step it started in; -1 none */
	uint32_t dtype;      /* the caller's: the element type in collective_set.names
			      * (names_intern there); COLLECTIVE_NONE unknown */
	/* set by collective_match() */
	uint32_t match;      /* index in collective_set.matches */
	int mismatch;        /* its op differs from the match's: not a member */
	uint64_t wait_ns;
};

struct collective_rank {
	int32_t rank;        /* for messages */
	struct collective_call *calls;
	size_t n, cap;
};

/* A collective call as the ranks made it. */
struct collective_match {
	uint32_t op, pg;
	uint32_t members;    /* ranks whose call is part of it */
	uint64_t min_ns;     /* the fastest member's duration */
	uint32_t first;      /* the lowest member rank (index in collective_set.ranks) */
};

struct collective_set {
	struct names names;
	struct collective_rank *ranks;
	uint32_t nranks;
	struct collective_match *matches;
	size_t nmatches;
	uint64_t mismatches;  /* calls whose op differs from their match's */
	char mismatch_note[256]; /* the first, in words; "" none */
};

/* A rank's host calls are the outermost of each thread
 * (gprof-dl-summary(1), "Communication calls": a gloo:all_reduce inside
 * c10d's call is one call). Over a thread's calls in start order, longer
 * first on a tie: whether the call [start, start + dur) is one of its own,
 * i.e. does not start before *end, the end of the last one that was (0 at
 * the thread's first); *end is then its end. */
static inline int collective_outermost(uint64_t *end, uint64_t start, uint64_t dur)
{
	if (start < *end)
		return 0;
	*end = start + dur;
	return 1;
}

void collective_set_init(struct collective_set *c, uint32_t nranks);
void collective_set_free(struct collective_set *c);
/* Adds a call to rank index r (0 <= r < nranks); op and pg are interned. */
void collective_add(struct collective_set *c, uint32_t r, const struct collective_call *call,
		    const char *op, const char *pg);
/* Sorts every rank's calls, keys and matches them, and sets each call's
 * match, mismatch and wait. */
void collective_match(struct collective_set *c);

/* Whether an op name is a send or a receive: 1 send, 2 receive, 0 neither
 * ("gloo:send", "nccl:recv", "isend", "recv_v2", "partial_send", ...). */
int collective_p2p_direction(const char *op);

/* The factor nccl-tests turns algorithm bandwidth into bus bandwidth with,
 * for n ranks, by op (the part after "BACKEND:", or the name): all_reduce
 * 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast,
 * reduce, send, recv, barrier 1; unknown 1. And the size S its algorithm
 * bandwidth divides by the time: the whole buffer, so bytes x n for an
 * all_gather (whose bytes are one rank's part), bytes otherwise. */
double collective_bus_factor(const char *op, uint32_t n);
double collective_algo_bytes(const char *op, uint64_t bytes, uint32_t n);

#endif
