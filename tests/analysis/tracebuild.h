/*
 * tracebuild.h - small traces for the analysis tests, written through the
 * trace writer API into a private temporary directory.
 */
#ifndef GPDL_TESTS_ANALYSIS_TRACEBUILD_H
#define GPDL_TESTS_ANALYSIS_TRACEBUILD_H

#include "formats/trace/trace.h"
#include "lib/analysis/views/view.h"

#include <stdint.h>

struct tb {
	struct trace_writer *w;
	char path[512];
	uint32_t pid;
};

/* The directory the tests' files go to, made on first use, removed by tb_cleanup(). */
const char *tb_dir(void);
void tb_cleanup(void);
/* tb_cleanup() as a cmocka group teardown. */
int tb_group_teardown(void **state);
const char *tb_path(const char *name);

/* A trace of process pid on host, starting at start_ns. */
void tb_open(struct tb *b, const char *name, const char *host, uint32_t pid, uint64_t start_ns);
/* The same for a rank's file (trace 1.3): the header names rank (local rank
 * the same), world size, backend "gloo" (none for rank -1) and the clock's
 * wall offset; its process record names the rank too. */
void tb_open_rank(struct tb *b, const char *name, const char *host, uint32_t pid,
		  uint64_t start_ns, int32_t rank, int32_t world_size, int64_t wall_offset_ns);
/* The same with the header's job identity (trace 2.1; "" unknown). */
void tb_open_rank_job(struct tb *b, const char *name, const char *host, uint32_t pid,
		      uint64_t start_ns, int32_t rank, int32_t world_size, int64_t wall_offset_ns,
		      const char *job_id);
/* A process record (1.3 rank fields: rank, local rank = rank, world size;
 * backend "gloo" when rank >= 0). end_ns 0: never seen to end. An
 * exit_status of 128 + N is a death by signal N (2.1's exit_signal). */
void tb_process(struct tb *b, uint32_t pid, uint32_t ppid, uint64_t start_ns, uint64_t end_ns,
		int32_t exit_status, int32_t rank, int32_t world_size);
/* A host thread of another process than the file's. */
void tb_thread_of(struct tb *b, uint32_t index, uint32_t pid, uint32_t tid, const char *name);
/* A collective call (Communication, 1.3 details): process group pg (NULL:
 * none), sequence number seq (< 0: none), bytes, group size; dtype "float". */
void tb_comm(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
	     const char *pg, int64_t seq, uint64_t bytes, uint32_t group_size);
void tb_thread(struct tb *b, uint32_t index, uint32_t tid, const char *name);
uint32_t tb_desc(struct tb *b, const char *name, unsigned type);
void tb_range(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur);
void tb_event(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
	      unsigned flags);
void tb_mark(struct tb *b, uint32_t thread, uint32_t desc, uint64_t at);
void tb_counter(struct tb *b, uint64_t ts, unsigned id, uint32_t pid, double value);

/* GPU data (trace 1.1). */
/* A GPU stream as track index, of device, with CUDA stream id. */
void tb_stream(struct tb *b, uint32_t index, uint32_t device, uint64_t stream);
void tb_device(struct tb *b, const struct trace_device *d, const char *name);
/* An event with details. */
void tb_ext(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
	    const struct trace_event_ext *x);
/* A CUDA API call with its correlation id (0: none). */
void tb_call(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
	     uint64_t corr);
/* A kernel of grid (gx, 1, 1) and block (bx, by, 1). */
void tb_kernel(struct tb *b, uint32_t stream, uint32_t desc, uint64_t start, uint64_t dur,
	       uint64_t corr, uint32_t gx, uint32_t bx, uint32_t by, uint32_t regs,
	       uint32_t static_smem, uint32_t dynamic_smem);
void tb_copy(struct tb *b, uint32_t stream, uint32_t desc, uint64_t start, uint64_t dur,
	     uint64_t corr, unsigned kind, unsigned src, unsigned dst, int async, uint64_t bytes);
/* An allocation (bytes > 0) or free (bytes < 0) of device's memory (-1: host). */
void tb_memory(struct tb *b, uint32_t thread, uint32_t desc, uint64_t at, int64_t bytes,
	       int32_t device, uint64_t in_use);
void tb_drops(struct tb *b, uint32_t thread, uint64_t n);
void tb_flush(struct tb *b);
/* Ends the run at end_ns; returns the file's path (valid for 8 more calls). */
const char *tb_close(struct tb *b, uint64_t end_ns);

/* The golden GPU trace (tracebuild.c draws its timeline): two host threads,
 * two streams of GPU0, two steps, every view's numbers worked out by hand in
 * test_gpu_views.c. */
const char *tb_gpu_trace(void);

/* The Perf Summary's traces (test_perf.c and tests/cmd/test_cmd_bench.c
 * work their numbers out; times in ms):
 *
 * tb_perf_a(): pid 10, threads 0 (main) and 1 (loader).
 *   steps on 0:  s0 [0,100)  s1 [100,300)  s2 [300,700)  s3 [1000,1500)
 *   not steps:   a ProfileStep of no length at 1600, a ProfileStep mark at
 *                1700, "ProfilerStep#9" [1100,1200) nested in s3
 *   Dataloader:  1 [150,170); 0 [300,350), 1 [320,380); 1 [800,900);
 *                1 [950,1050), 0 [1400,1450)
 *   reader_cost: s0 0, s1 20, s2 80 (the two overlap), s3 50 + 50 = 100
 * tb_perf_b(): pid 20, same host: steps [2000,2300) and [2300,2900);
 *   Dataloader [1000,1500) (in time with s3 of a, another process) and
 *   [2300,2400): reader_cost 0 and 100.
 * tb_perf_long(): 25 steps back to back, step k lasting k + 1 ms, no
 *   Dataloader.
 * tb_perf_samples(all): steps [0,1000) 32 samples, [1000,3000) 32,
 *   [3000,3500) 16; with !all a fourth, [3500,4000), that says nothing.
 * tb_perf_nosteps(): UserDefined and Dataloader ranges, no step. */
#define TB_MS 1000000ull
const char *tb_perf_a(void);
/* Its Perf Summary as text, default skip, time unit s. */
extern const char tb_perf_a_text_s[];
const char *tb_perf_b(void);
const char *tb_perf_long(void);
const char *tb_perf_samples(int all);
const char *tb_perf_nosteps(void);

/* A training loop for `gprof-dl diff` (test_diff.c, tests/cmd/test_cmd_diff.c):
 * threads 0 (main, tid pid) and 1 (loader, tid pid + 1), GPU0 stream 7;
 * steps back to back of 100 ms each; in step k, from its start s (ms):
 *   main:    ProfileStep [s, s+100)
 *              Forward [s, s+60): op matmul [s+5, s+25)
 *                                   cudaLaunchKernel [s+6, s+7) c(k+1) -> gemm [s+8, s+12)
 *                                 op relu [s+30, s+35)
 *              Backward [s+60, s+90): op matmul_grad [s+60, s+80)
 *              Optimization [s+90, s+100): UserDefined log [s+92, s+95)
 *   loader:  Dataloader [s+10, s+10+dataloader_ns) (at most 50 ms: inside Forward)
 * So a longer Dataloader changes its own row only: every step, Forward and
 * Others stay the same. */
const char *tb_diff_trace(const char *name, uint32_t pid, unsigned steps, uint64_t dataloader_ns);

/* A synthetic job for the Distributed view (test_distributed.c and
 * test_cmd_summary_dist.c work its numbers out). Rank r's step k starts at
 * s = its clock's start + 100 k ms; times in ms. j (jitter, 0 or 1) is
 * (k + r) % 3 when jitter is set; x is slow_ms on the slow rank, else 0.
 *  gloo (gpu 0), pid 100 + r (51 + r merged), threads main (tid pid) and
 *  gloo (tid pid + 1):
 *    main:  ProfileStep [s, s+100); Operator matmul [a, a+c), c = 40 + x + j;
 *           Operator c10d::allreduce_ [a+c, a+c+1); a = s, or with
 *           slow_dataloader on the slow rank a = s + x after a Dataloader
 *           range [s, s+x) (and then c = 40 + j)
 *    gloo:  Communication gloo:all_reduce [a+c, s+95), seq k, group "0",
 *           4 MiB, group size ranks
 *  nccl (gpu 1), main thread and GPU0 streams 7, 8: g = 50 + x + j
 *    main:  ProfileStep [s, s+100); matmul [s, s+10) launching (cudaLaunchKernel
 *           [s+1, s+2)) gemm [s+5, s+5+g) on stream 7; Communication
 *           nccl:all_reduce [s+11, s+12) (seq k, group "0", 1 MiB) launching
 *           ([s+11, s+11.5)) ncclDevKernel_AllReduce_Sum_f32_RING_LL
 *           [s+5+g, s+95) on stream 8
 * A killed rank stops after killed_steps steps, its process killed; the
 * others' processes end 1 ms after their last step with status 0. hosts 2:
 * rank r on host "h<r % 2>", whose clock reads 1000 s more per r % 2, its
 * wall offset making every rank start at the same wall time. merged: one
 * file, a launcher pid 50 (rank -1) and the ranks' processes in PROC.
 * concurrent (gloo, not merged): two all_reduces per step at the same time,
 * seq 2k and 2k+1, the second on a third thread (tid pid + 2). */
struct tb_job {
	unsigned ranks, steps;
	int gpu;
	int gpu_comm_lost; /* gpu: the NCCL kernels were not recorded */
	int slow_rank; /* -1: none */
	unsigned slow_ms;
	int slow_dataloader;
	int jitter;
	int killed_rank; /* -1: none */
	unsigned killed_steps;
	int stopped_rank; /* -1 (or 0 with killed_rank 0): none; else stopped by
			   * SIGTERM 10 ms after the killed rank, as its launcher does */
	unsigned hosts;  /* 0 or 1: one */
	int merged;
	int concurrent;
	int no_host; /* the headers name no host (as an imported Kineto trace's) */
	const char *clocks[2]; /* the clock domain of the even and the odd ranks' headers
				* (NULL: CLOCK_MONOTONIC; Kineto's imported: CLOCK_REALTIME) */
};
/* Writes NAME-<rank>.gpdl per rank (NAME.gpdl merged); their paths into
 * paths; returns how many. */
unsigned tb_job_write(const char *name, const struct tb_job *j, char (*paths)[512]);

/* Self-redispatch for the folding of nested ranges (store.h; test_fold.c
 * and tests/cmd/test_cmd_fold_sort.c): pid, thread 0 (main, tid pid), GPU0
 * stream 7; reps repetitions, rep k from s = 1000 + 10000 k us (times in
 * us), ending at 10000 reps + 1000:
 *   Operator dropout [s, s+1000)
 *     bernoulli_ [s+100, s+200)
 *     div_ [s+300, s+900)                      outer
 *       div_ [s+350, s+850)                    its only child: folded
 *         to [s+400, s+600)
 *         cudaLaunchKernel [s+700, s+710) c(k+1) -> div_kernel [s+720, s+770)
 *     mul [s+920, s+980)
 *   add_ [s+2000, s+2600) > add_ [s+2100, s+2500) > add_ [s+2200, s+2400): a chain
 *   copy_ [s+3000, s+3500) > copy_ [s+3100, s+3200), fill_ [s+3300, s+3400):
 *     one same-name child among two, not folded
 *   zero_ [s+4000, s+4500) > zero_ [s+4100, s+4400), and a UserDefined mark
 *     "tick" at s+4450 (instants do not count as children): folded
 *   UserDefined block [s+5000, s+5800) > block [s+5100, s+5700) > inner
 *     [s+5200, s+5300): folded
 *   Operator mix [s+6000, s+6400) > UserDefined mix [s+6100, s+6300): two
 *     types, not folded */
#define TB_US 1000ull
const char *tb_fold_trace(const char *name, uint32_t pid, unsigned reps);

/* A deterministic normal variate (splitmix64, Box-Muller), so that
 * synthetic step times are the same on every machine. */
double tb_gauss(uint64_t *state);

/* Reads a whole file into a NUL-terminated buffer (free it). */
char *tb_slurp(const char *path, size_t *len);

/* The analysis of the traces paths[0..n), prepared as summary does (a
 * load error fails the test). */
void tb_prepare(struct analysis *a, const char *const *paths, unsigned n);
/* The table of the view named view (which must exist) over a. */
struct table *tb_view(const char *view, const struct analysis *a, const struct view_opts *o);

#endif
