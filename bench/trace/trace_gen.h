/*
 * trace_gen.h - synthetic traces for benchmarks, written through the writer API.
 *
 * The shape is a training loop as Paddle's profiler sees it: on the main
 * thread ProfileStep > Dataloader | Forward | Backward | Optimization >
 * Operator > OperatorInner, a few hundred distinct names; data loader worker
 * threads with nested UserDefined ranges; marks; CPU and RSS counters. Events
 * reach the writer in end order (children before their parent), as the
 * collector produces them. The output depends only on (n, threads).
 */
#ifndef GPDL_BENCH_TRACE_GEN_H
#define GPDL_BENCH_TRACE_GEN_H

#include <stdint.h>

struct trace_gen_stats {
	uint64_t events, counters, names, bytes;
	double seconds; /* wall time spent writing, generation included */
};

/* Writes exactly n events over `threads` threads (>= 1) to path, replacing it.
 * Returns 0, or -1 with errno. */
int trace_gen_write(const char *path, uint64_t n, unsigned threads, struct trace_gen_stats *st);

#endif
