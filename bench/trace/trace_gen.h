/*
 * trace_gen.h - synthetic traces for benchmarks, written through the writer API.
 *
 * The shape is a training loop as Paddle's profiler sees it: on the main
 * thread ProfileStep > Dataloader | Forward | Backward | Optimization >
 * Operator > OperatorInner, a few hundred distinct names; data loader worker
 * threads with nested UserDefined ranges; marks; CPU and RSS counters. Events
 * reach the writer in end order (children before their parent), as the
 * collector produces them. The output depends only on (n, threads, flags).
 *
 * With TRACE_GEN_GPU the same loop runs as a CUDA program under PyTorch: each
 * Operator (carrying its External id) launches its kernel through a
 * cudaLaunchKernel, some copies and sets through cudaMemcpyAsync and
 * cudaMemsetAsync, every CudaRuntime call with a correlation id; the kernels,
 * copies and sets run on stream 7 of device 0 with the same correlation ids,
 * queued after their launch; a kernel's block size, registers and static
 * shared memory are fixed, its grid and dynamic shared memory one of a few
 * shapes, as in a training loop whose tensor shapes repeat; every sixth backward operator is followed by an
 * "nccl:all_reduce" whose NCCL kernel (Communication) runs on stream 13,
 * overlapping the computation; operators allocate and free device memory
 * (Memory instants with bytes, address and bytes in use); each step ends
 * with the loss copied to the host, which waits for the GPU. The header
 * says rank 0 of 8 over nccl and device 0 is described as an H100.
 */
#ifndef GPDL_BENCH_TRACE_GEN_H
#define GPDL_BENCH_TRACE_GEN_H

#include <stdint.h>

struct trace_gen_stats {
	uint64_t events, counters, names, bytes;
	uint64_t gpu_events; /* of events, those on GPU streams */
	double seconds; /* wall time spent writing, generation included */
};

enum trace_gen_flag {
	TRACE_GEN_GPU = 1u << 0, /* also GPU work, as above */
};

/* Writes exactly n events over `threads` host threads (>= 1) to path,
 * replacing it; with TRACE_GEN_GPU in flags, GPU streams' events count
 * towards n. Returns 0, or -1 with errno. */
int trace_gen_write_flags(const char *path, uint64_t n, unsigned threads, unsigned flags,
			  struct trace_gen_stats *st);
/* trace_gen_write_flags with no flags: a host-only trace. */
int trace_gen_write(const char *path, uint64_t n, unsigned threads, struct trace_gen_stats *st);

#endif
