/*
 * job_gen.h - a synthetic distributed job for benchmarks: one trace per
 * rank, as `gprof-dl run -o t-%q{RANK}.gpdl` writes them, each a data
 * parallel training loop on gloo whose collectives carry their sequence
 * numbers, one rank slowed by a known amount of computation per step.
 *
 * Rank r (pid 1000 + r, host "bench", header rank r of n, backend gloo,
 * every rank's clock the same) has a main thread and a gloo thread. Step k
 * starts at S = k x T on every rank, T = C + slow + B x tb + 1 ms:
 *   main:  Operator ranges back to back from S filling C_r (C, or C + slow
 *          on the slow rank), each the same length, one of 16 names; then
 *          per bucket b a c10d::allreduce_ enqueue of 10 us at S + C_r + 10 b us;
 *          the ProfileStep [S, S + T), written after what it holds (end order);
 *   gloo:  per bucket b a Communication gloo:all_reduce (seq k B + b, group
 *          "0", group size n, `bytes` bytes, float), from when it is
 *          enqueued (or the previous bucket ends) to S + C + slow + (b + 1) tb,
 *          when the slowest rank's bucket is done.
 * So every rank's step lasts T, the fast ranks wait `slow` per step in their
 * first bucket, and the slow rank is the straggler by computation. The
 * steps are as many as make `events` events per rank (at least 2 per step
 * beyond the collectives).
 */
#ifndef GPDL_BENCH_JOB_GEN_H
#define GPDL_BENCH_JOB_GEN_H

#include <stdint.h>

struct job_gen {
	unsigned ranks;
	uint64_t events;    /* per rank, about */
	unsigned steps;
	unsigned buckets;   /* collectives per step */
	uint64_t compute_ns, slow_ns, bucket_ns, bytes;
	int slow_rank;      /* -1: none */
};

/* The defaults: 64 ranks, 1 M events each, 100 steps, 8 buckets of 25 MB,
 * 50 ms of computation per step, buckets of 2 ms, rank 17 5 ms slower. */
void job_gen_defaults(struct job_gen *g);
/* Writes rank r's trace to path. Returns 0, or -1 with errno. *events gets
 * the events written. */
int job_gen_rank(const struct job_gen *g, unsigned r, const char *path, uint64_t *events);

#endif
