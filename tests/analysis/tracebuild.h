/*
 * tracebuild.h - small traces for the analysis tests, written through the
 * trace writer API into a private temporary directory.
 */
#ifndef GPDL_TESTS_ANALYSIS_TRACEBUILD_H
#define GPDL_TESTS_ANALYSIS_TRACEBUILD_H

#include "formats/trace/trace.h"

#include <stdint.h>

struct tb {
	struct trace_writer *w;
	char path[512];
	uint32_t pid;
};

/* The directory the tests' files go to, made on first use, removed by tb_cleanup(). */
const char *tb_dir(void);
void tb_cleanup(void);
const char *tb_path(const char *name);

/* A trace of process pid on host, starting at start_ns. */
void tb_open(struct tb *b, const char *name, const char *host, uint32_t pid, uint64_t start_ns);
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

/* Reads a whole file into a NUL-terminated buffer (free it). */
char *tb_slurp(const char *path, size_t *len);

#endif
