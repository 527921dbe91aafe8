/*
 * parallel.h - running independent pieces of the analysis on several cores:
 * the tracks' sorts, the views' tables. Each piece writes only its own
 * output; what they share is read-only while they run.
 *
 * The number of threads is the number of online CPUs (at most 8), or
 * GPDL_THREADS from the environment (1: everything on the calling thread).
 */
#ifndef GPDL_COMMON_PARALLEL_H
#define GPDL_COMMON_PARALLEL_H

unsigned parallel_threads(void);
/* Calls fn(ctx, i) for every i in [0, n), in any order and on any thread, and
 * returns when all calls have returned. Lower i are started first. */
void parallel_for(unsigned n, void (*fn)(void *ctx, unsigned i), void *ctx);

#endif
