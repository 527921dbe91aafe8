#include "tests/analysis/tracebuild.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

const char *tb_dir(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/gpdl-test-analysis-XXXXXX");
		assert_non_null(mkdtemp(dir));
	}
	return dir;
}

void tb_cleanup(void)
{
	if (!dir[0])
		return;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[600];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	dir[0] = '\0';
}

int tb_group_teardown(void **state)
{
	(void)state;
	tb_cleanup();
	return 0;
}

const char *tb_path(const char *name)
{
	static char buf[4][600];
	static unsigned which;
	which = (which + 1) % 4;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", tb_dir(), name);
	return buf[which];
}

void tb_open_rank(struct tb *b, const char *name, const char *host, uint32_t pid,
		  uint64_t start_ns, int32_t rank, int32_t world_size, int64_t wall_offset_ns)
{
	tb_open_rank_job(b, name, host, pid, start_ns, rank, world_size, wall_offset_ns, "");
}

static void tb_open_clock(struct tb *b, const char *name, const char *host, uint32_t pid,
			  uint64_t start_ns, int32_t rank, int32_t world_size,
			  int64_t wall_offset_ns, const char *job_id, const char *clock);

void tb_open_rank_job(struct tb *b, const char *name, const char *host, uint32_t pid,
		      uint64_t start_ns, int32_t rank, int32_t world_size, int64_t wall_offset_ns,
		      const char *job_id)
{
	tb_open_clock(b, name, host, pid, start_ns, rank, world_size, wall_offset_ns, job_id,
		      "CLOCK_MONOTONIC");
}

static void tb_open_clock(struct tb *b, const char *name, const char *host, uint32_t pid,
			  uint64_t start_ns, int32_t rank, int32_t world_size,
			  int64_t wall_offset_ns, const char *job_id, const char *clock)
{
	snprintf(b->path, sizeof(b->path), "%s", tb_path(name));
	b->pid = pid;
	b->w = trace_writer_open(b->path, 1);
	assert_non_null(b->w);
	const struct trace_header h = {
		.sources = TRACE_SRC_NVTX,
		.clock_domain = clock,
		.wall_offset_ns = wall_offset_ns,
		.hostname = host,
		.pid = pid,
		.rank = rank,
		.cmdline = "./app",
		.start_ns = start_ns,
		.ncpus = 8,
		.gprof_version = "test",
		.world_size = world_size,
		.dist_backend = rank >= 0 ? "gloo" : "",
		.local_rank = rank,
		.job_id = job_id,
	};
	assert_int_equal(trace_writer_header(b->w, &h), 0);
	tb_process(b, pid, 1, start_ns, 0, TRACE_EXIT_UNKNOWN, rank, world_size);
}

void tb_open(struct tb *b, const char *name, const char *host, uint32_t pid, uint64_t start_ns)
{
	tb_open_rank(b, name, host, pid, start_ns, -1, -1, 1700000000000000000LL);
}

void tb_process(struct tb *b, uint32_t pid, uint32_t ppid, uint64_t start_ns, uint64_t end_ns,
		int32_t exit_status, int32_t rank, int32_t world_size)
{
	uint32_t backend = rank >= 0 ? trace_writer_string(b->w, "gloo", 4) : 0;
	struct trace_process p = {pid, ppid, start_ns, end_ns, exit_status, 0,
				  rank, rank, world_size, backend};
	p.exit_signal = exit_status > 128 ? exit_status - 128 : 0; /* the tests' 128 + N: signal N */
	assert_int_equal(trace_writer_process(b->w, &p), 0);
}

void tb_thread_of(struct tb *b, uint32_t index, uint32_t pid, uint32_t tid, const char *name)
{
	uint32_t s = name ? trace_writer_string(b->w, name, strlen(name)) : 0;
	struct trace_thread t = {.index = index, .pid = pid, .tid = tid, .name_str = s};
	assert_int_equal(trace_writer_thread(b->w, &t), 0);
}

void tb_comm(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
	     const char *pg, int64_t seq, uint64_t bytes, uint32_t group_size)
{
	struct trace_event_ext x = {
		.bytes = bytes,
		.has_coll_seq = seq >= 0,
		.coll_seq = seq >= 0 ? (uint64_t)seq : 0,
		.pg_str = pg ? trace_writer_string(b->w, pg, strlen(pg)) : 0,
		.group_size = group_size,
		.dtype_str = trace_writer_string(b->w, "float", 5),
	};
	tb_ext(b, thread, desc, start, dur, &x);
}

void tb_thread(struct tb *b, uint32_t index, uint32_t tid, const char *name)
{
	uint32_t s = name ? trace_writer_string(b->w, name, strlen(name)) : 0;
	struct trace_thread t = {.index = index, .pid = b->pid, .tid = tid, .name_str = s};
	assert_int_equal(trace_writer_thread(b->w, &t), 0);
}

uint32_t tb_desc(struct tb *b, const char *name, unsigned type)
{
	uint32_t s = trace_writer_string(b->w, name, strlen(name));
	assert_true(s > 0);
	uint32_t d = trace_writer_desc(b->w, s, 0, 0, (uint8_t)type);
	assert_true(d > 0);
	return d;
}

void tb_event(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
	      unsigned flags)
{
	struct trace_event e = {start, dur, desc, thread, (uint8_t)flags};
	assert_int_equal(trace_writer_event(b->w, &e), 0);
}

void tb_range(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur)
{
	tb_event(b, thread, desc, start, dur, 0);
}

void tb_mark(struct tb *b, uint32_t thread, uint32_t desc, uint64_t at)
{
	tb_event(b, thread, desc, at, 0, TRACE_EVF_MARK);
}

void tb_stream(struct tb *b, uint32_t index, uint32_t device, uint64_t stream)
{
	struct trace_thread t = {.index = index, .pid = b->pid, .kind = TRACE_TRACK_STREAM,
				 .device = device, .context = 1, .stream = stream};
	assert_int_equal(trace_writer_thread(b->w, &t), 0);
}

void tb_device(struct tb *b, const struct trace_device *d, const char *name)
{
	struct trace_device copy = *d;
	copy.name_str = trace_writer_string(b->w, name, strlen(name));
	assert_int_equal(trace_writer_device(b->w, &copy), 0);
}

void tb_ext(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
	    const struct trace_event_ext *x)
{
	struct trace_event e = {start, dur, desc, thread, 0, x};
	assert_int_equal(trace_writer_event(b->w, &e), 0);
}

void tb_call(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
	     uint64_t corr)
{
	struct trace_event_ext x = {.correlation = corr};
	tb_ext(b, thread, desc, start, dur, &x);
}

void tb_kernel(struct tb *b, uint32_t stream, uint32_t desc, uint64_t start, uint64_t dur,
	       uint64_t corr, uint32_t gx, uint32_t bx, uint32_t by, uint32_t regs,
	       uint32_t static_smem, uint32_t dynamic_smem)
{
	struct trace_event_ext x = {.correlation = corr,
				    .grid = {gx, gx ? 1 : 0, gx ? 1 : 0},
				    .block = {bx, bx ? by : 0, bx ? 1 : 0},
				    .registers = regs,
				    .static_smem = static_smem,
				    .dynamic_smem = dynamic_smem};
	tb_ext(b, stream, desc, start, dur, &x);
}

void tb_copy(struct tb *b, uint32_t stream, uint32_t desc, uint64_t start, uint64_t dur,
	     uint64_t corr, unsigned kind, unsigned src, unsigned dst, int async, uint64_t bytes)
{
	struct trace_event_ext x = {.correlation = corr,
				    .bytes = bytes,
				    .copy_kind = (uint8_t)kind,
				    .src_kind = (uint8_t)src,
				    .dst_kind = (uint8_t)dst,
				    .is_async = (uint8_t)async};
	tb_ext(b, stream, desc, start, dur, &x);
}

void tb_memory(struct tb *b, uint32_t thread, uint32_t desc, uint64_t at, int64_t bytes,
	       int32_t device, uint64_t in_use)
{
	struct trace_event_ext x = {.bytes = (uint64_t)bytes,
				    .address = 0x1000,
				    .device = device,
				    .dst_kind = device < 0 ? TRACE_MEM_PAGEABLE : TRACE_MEM_DEVICE,
				    .total_allocated = in_use};
	struct trace_event e = {at, 0, desc, thread, TRACE_EVF_MARK, &x};
	assert_int_equal(trace_writer_event(b->w, &e), 0);
}

void tb_counter(struct tb *b, uint64_t ts, unsigned id, uint32_t pid, double value)
{
	struct trace_counter c = {ts, id, pid, value};
	assert_int_equal(trace_writer_counter(b->w, &c), 0);
}

void tb_drops(struct tb *b, uint32_t thread, uint64_t n)
{
	assert_int_equal(trace_writer_drops(b->w, thread, n), 0);
}

void tb_flush(struct tb *b)
{
	assert_int_equal(trace_writer_flush(b->w), 0);
}

const char *tb_close(struct tb *b, uint64_t end_ns)
{
	static char done[8][512];
	static unsigned which;
	assert_int_equal(trace_writer_close(b->w, end_ns), 0);
	b->w = NULL;
	which = (which + 1) % 8;
	snprintf(done[which], sizeof(done[which]), "%s", b->path);
	return done[which];
}

char *tb_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return p;
}

/*
 * The golden GPU trace. Times in ns; T0 = thread 0 (tid 10, "main"), T1 =
 * thread 1 (tid 11, "worker"), S0 = GPU0 stream 7 (track 2), S1 = GPU0
 * stream 13 (track 3). "cN" is correlation id N.
 *
 * T0  ProfileStep#1 (a UserDefined range, a step by its name) [1000, 11000)
 *       Dataloader [1000, 2000)
 *       Forward [2000, 6000)
 *         op matmul [2100, 3100)          alloc GPU +1000 @2150, host +64 @2160
 *           inner matmul::compute [2200, 3000)   alloc GPU +500 @2250
 *             cudaLaunchKernel [2300, 2400) c1 -> S0 gemm [2500, 4500)
 *         op linear [3200, 5800)          free GPU -500 @5700
 *           op matmul [3300, 4300)        alloc GPU +2000 @3350, free -1000 @3900
 *             cudaLaunchKernel [3400, 3500) c2 -> S0 gemm [4500, 5500)
 *           cudaMemcpyAsync [5000, 5100) c3 -> S1 HtoD Pinned->Device async [5200, 5600)
 *         op to_cpu [5850, 5990)
 *           Memcpy range GpuMemcpySync:GPU->CPU [5855, 5985)
 *             cudaMemcpy [5860, 5980) c9 -> S0 DtoH Device->Pageable sync [5900, 5950)
 *       Backward [6000, 9000)
 *         op matmul_grad [6100, 8000)
 *           cudaLaunchKernel [6200, 6300) c4 -> S0 gemm_grad [6400, 7400)
 *         op nccl:all_reduce [8100, 8900)
 *           cudaLaunchKernel [8200, 8300) c5 -> S1 ncclKernel_AllReduce [8400, 11400)
 *       Optimization [9000, 10000)
 *         op adam [9050, 9300)
 *           cudaLaunchKernel [9100, 9200) c6 -> S0 adam_kernel [9500, 10500)
 *       cudaLaunchKernel [10100, 10200) c7 -> S0 fill [10600, 10800)   (no phase, no op)
 *       alloc GPU +300 @10250, 5000 bytes in use after it (no op)
 *       cudaMemsetAsync [10300, 10350) c8 -> S0 Memset Device async [10850, 10950)
 *     (gap) alloc GPU +100000 @11500;  S0 orphan [11200, 11700): no call, outside the window
 *     ProfilerStep#2 (type ProfileStep) [12000, 20000): no GPU work launched
 *       free GPU -100000 @12500 (no op)
 *       Forward [13000, 17000)
 *         op matmul [13100, 14100)
 *       cudaStreamSynchronize [17500, 17900) c11
 * T1  prefetch (UserDefined) [1500, 4000)
 *       cudaMemcpyAsync [1600, 1700) c10 -> S1 HtoD Pageable->Device async [1800, 2300)
 *     Dataloader [12000, 14000)
 *       prefetch [12500, 13500)
 * S1  Memcpy DtoD Device->Device [6000, 6100): no call (c0), inside the window
 *     ProfilerStep#1 (UserDefined) [0, 21000): the PyTorch profiler's copy of a
 *       step on a stream, which is neither a step nor CPU time
 *
 * GPU0: 4 SMs, 2048 threads and 16 blocks per SM, warp 32, 65536 registers
 * and 65536 bytes of shared memory per SM.
 */
const char *tb_gpu_trace(void)
{
	struct tb b;
	tb_open(&b, "gpu.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	tb_thread(&b, 1, 11, "worker");
	tb_stream(&b, 2, 0, 7);
	tb_stream(&b, 3, 0, 13);
	struct trace_device dev = {.id = 0, .sm_count = 4, .max_threads_per_sm = 2048,
				   .max_threads_per_block = 1024, .max_blocks_per_sm = 16,
				   .warp_size = 32, .regs_per_sm = 65536, .regs_per_block = 65536,
				   .smem_per_sm = 65536, .smem_per_block = 49152,
				   .total_memory = 1ull << 34, .cc_major = 9};
	tb_device(&b, &dev, "Test GPU");
	uint32_t step1 = tb_desc(&b, "ProfileStep#1", TRACE_EV_USER_DEFINED);
	uint32_t step2 = tb_desc(&b, "ProfilerStep#2", TRACE_EV_PROFILE_STEP);
	uint32_t dl = tb_desc(&b, "Dataloader", TRACE_EV_DATALOADER);
	uint32_t fwd = tb_desc(&b, "Forward", TRACE_EV_FORWARD);
	uint32_t bwd = tb_desc(&b, "Backward", TRACE_EV_BACKWARD);
	uint32_t opt = tb_desc(&b, "Optimization", TRACE_EV_OPTIMIZATION);
	uint32_t matmul = tb_desc(&b, "matmul", TRACE_EV_OPERATOR);
	uint32_t compute = tb_desc(&b, "matmul::compute", TRACE_EV_OPERATOR_INNER);
	uint32_t linear = tb_desc(&b, "linear", TRACE_EV_OPERATOR);
	uint32_t to_cpu = tb_desc(&b, "to_cpu", TRACE_EV_OPERATOR);
	uint32_t sync_copy = tb_desc(&b, "GpuMemcpySync:GPU->CPU", TRACE_EV_MEMCPY);
	uint32_t mm_grad = tb_desc(&b, "matmul_grad", TRACE_EV_OPERATOR);
	uint32_t allreduce = tb_desc(&b, "nccl:all_reduce", TRACE_EV_OPERATOR);
	uint32_t adam = tb_desc(&b, "adam", TRACE_EV_OPERATOR);
	uint32_t prefetch = tb_desc(&b, "prefetch", TRACE_EV_USER_DEFINED);
	uint32_t launch = tb_desc(&b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	uint32_t memcpy_async = tb_desc(&b, "cudaMemcpyAsync", TRACE_EV_CUDA_RUNTIME);
	uint32_t memcpy_sync = tb_desc(&b, "cudaMemcpy", TRACE_EV_CUDA_RUNTIME);
	uint32_t memset_async = tb_desc(&b, "cudaMemsetAsync", TRACE_EV_CUDA_RUNTIME);
	uint32_t stream_sync = tb_desc(&b, "cudaStreamSynchronize", TRACE_EV_CUDA_RUNTIME);
	uint32_t gemm = tb_desc(&b, "gemm", TRACE_EV_KERNEL);
	uint32_t gemm_grad = tb_desc(&b, "gemm_grad", TRACE_EV_KERNEL);
	uint32_t nccl = tb_desc(&b, "ncclKernel_AllReduce", TRACE_EV_KERNEL);
	uint32_t adam_k = tb_desc(&b, "adam_kernel", TRACE_EV_KERNEL);
	uint32_t fill = tb_desc(&b, "fill", TRACE_EV_KERNEL);
	uint32_t orphan = tb_desc(&b, "orphan", TRACE_EV_KERNEL);
	uint32_t htod_pinned = tb_desc(&b, "Memcpy HtoD (Pinned -> Device)", TRACE_EV_MEMCPY);
	uint32_t htod_pageable = tb_desc(&b, "Memcpy HtoD (Pageable -> Device)", TRACE_EV_MEMCPY);
	uint32_t dtoh = tb_desc(&b, "Memcpy DtoH (Device -> Pageable)", TRACE_EV_MEMCPY);
	uint32_t dtod = tb_desc(&b, "Memcpy DtoD (Device -> Device)", TRACE_EV_MEMCPY);
	uint32_t memset = tb_desc(&b, "Memset (Device)", TRACE_EV_MEMSET);
	uint32_t mem = tb_desc(&b, "[memory]", TRACE_EV_MEMORY);

	/* T0, step 1, in end order as the collector writes; the API calls and
	 * allocations (events with details) in a stretch of their own, as
	 * CUPTI hands them over */
	tb_range(&b, 0, dl, 1000, 1000);
	tb_range(&b, 0, compute, 2200, 800);
	tb_range(&b, 0, matmul, 2100, 1000);
	tb_range(&b, 0, matmul, 3300, 1000);
	tb_range(&b, 0, linear, 3200, 2600);
	tb_range(&b, 0, sync_copy, 5855, 130);
	tb_range(&b, 0, to_cpu, 5850, 140);
	tb_range(&b, 0, fwd, 2000, 4000);
	tb_range(&b, 0, mm_grad, 6100, 1900);
	tb_range(&b, 0, allreduce, 8100, 800);
	tb_range(&b, 0, bwd, 6000, 3000);
	tb_range(&b, 0, adam, 9050, 250);
	tb_range(&b, 0, opt, 9000, 1000);
	tb_range(&b, 0, step1, 1000, 10000);
	tb_memory(&b, 0, mem, 2150, 1000, 0, 0);
	tb_memory(&b, 0, mem, 2160, 64, -1, 0);
	tb_memory(&b, 0, mem, 2250, 500, 0, 0);
	tb_call(&b, 0, launch, 2300, 100, 1);
	tb_memory(&b, 0, mem, 3350, 2000, 0, 0);
	tb_call(&b, 0, launch, 3400, 100, 2);
	tb_memory(&b, 0, mem, 3900, -1000, 0, 0);
	tb_call(&b, 0, memcpy_async, 5000, 100, 3);
	tb_memory(&b, 0, mem, 5700, -500, 0, 0);
	tb_call(&b, 0, memcpy_sync, 5860, 120, 9);
	tb_call(&b, 0, launch, 6200, 100, 4);
	tb_call(&b, 0, launch, 8200, 100, 5);
	tb_call(&b, 0, launch, 9100, 100, 6);
	tb_call(&b, 0, launch, 10100, 100, 7);
	tb_memory(&b, 0, mem, 10250, 300, 0, 5000);
	tb_call(&b, 0, memset_async, 10300, 50, 8);
	tb_memory(&b, 0, mem, 11500, 100000, 0, 0);
	/* T0, step 2 */
	tb_memory(&b, 0, mem, 12500, -100000, 0, 0);
	tb_range(&b, 0, matmul, 13100, 1000);
	tb_range(&b, 0, fwd, 13000, 4000);
	tb_call(&b, 0, stream_sync, 17500, 400, 11);
	tb_range(&b, 0, step2, 12000, 8000);
	/* T1 */
	tb_call(&b, 1, memcpy_async, 1600, 100, 10);
	tb_range(&b, 1, prefetch, 1500, 2500);
	tb_range(&b, 1, prefetch, 12500, 1000);
	tb_range(&b, 1, dl, 12000, 2000);
	/* S0: kernels, then the copies and sets, each in its own order */
	tb_kernel(&b, 2, gemm, 2500, 2000, 1, 8, 256, 1, 32, 0, 0);
	tb_kernel(&b, 2, gemm, 4500, 1000, 2, 64, 64, 2, 64, 4096, 4096);
	tb_kernel(&b, 2, gemm_grad, 6400, 1000, 4, 4, 32, 2, 0, 0, 0);
	tb_kernel(&b, 2, adam_k, 9500, 1000, 6, 4, 1024, 1, 64, 0, 0);
	tb_kernel(&b, 2, fill, 10600, 200, 7, 1, 33, 1, 0, 0, 0);
	tb_kernel(&b, 2, orphan, 11200, 500, 0, 1, 32, 1, 0, 0, 0);
	tb_copy(&b, 2, dtoh, 5900, 50, 9, TRACE_COPY_DTOH, TRACE_MEM_DEVICE, TRACE_MEM_PAGEABLE, 0,
		1024);
	tb_copy(&b, 2, memset, 10850, 100, 8, 0, 0, TRACE_MEM_DEVICE, 1, 256);
	/* S1 */
	tb_copy(&b, 3, htod_pageable, 1800, 500, 10, TRACE_COPY_HTOD, TRACE_MEM_PAGEABLE,
		TRACE_MEM_DEVICE, 1, 8192);
	tb_copy(&b, 3, htod_pinned, 5200, 400, 3, TRACE_COPY_HTOD, TRACE_MEM_PINNED,
		TRACE_MEM_DEVICE, 1, 4096);
	tb_copy(&b, 3, dtod, 6000, 100, 0, TRACE_COPY_DTOD, TRACE_MEM_DEVICE, TRACE_MEM_DEVICE, 0,
		2048);
	tb_kernel(&b, 3, nccl, 8400, 3000, 5, 0, 0, 0, 0, 0, 0);
	tb_range(&b, 3, tb_desc(&b, "ProfilerStep#1", TRACE_EV_USER_DEFINED), 0, 21000);
	return tb_close(&b, 21000);
}

/* ---- the Perf Summary's traces (tracebuild.h draws them) ------------------ */

const char *tb_perf_a(void)
{
	struct tb b;
	tb_open(&b, "perf-a.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	tb_thread(&b, 1, 11, "loader");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t inner = tb_desc(&b, "ProfilerStep#9", TRACE_EV_USER_DEFINED);
	uint32_t dl = tb_desc(&b, "Dataloader", TRACE_EV_DATALOADER);
	uint32_t work = tb_desc(&b, "work", TRACE_EV_USER_DEFINED);
	tb_range(&b, 1, dl, 150 * TB_MS, 20 * TB_MS);
	tb_range(&b, 0, work, 10 * TB_MS, 50 * TB_MS);
	tb_range(&b, 0, step, 0, 100 * TB_MS);
	tb_range(&b, 0, step, 100 * TB_MS, 200 * TB_MS);
	tb_range(&b, 0, dl, 300 * TB_MS, 50 * TB_MS);
	tb_range(&b, 1, dl, 320 * TB_MS, 60 * TB_MS);
	tb_range(&b, 0, step, 300 * TB_MS, 400 * TB_MS);
	tb_range(&b, 1, dl, 800 * TB_MS, 100 * TB_MS);
	tb_range(&b, 1, dl, 950 * TB_MS, 100 * TB_MS);
	tb_range(&b, 0, inner, 1100 * TB_MS, 100 * TB_MS);
	tb_range(&b, 0, dl, 1400 * TB_MS, 50 * TB_MS);
	tb_range(&b, 0, step, 1000 * TB_MS, 500 * TB_MS);
	tb_range(&b, 0, step, 1600 * TB_MS, 0);
	tb_mark(&b, 0, step, 1700 * TB_MS);
	return tb_close(&b, 2000 * TB_MS);
}

const char *tb_perf_b(void)
{
	struct tb b;
	tb_open(&b, "perf-b.gpdl", "h", 20, 0);
	tb_thread(&b, 0, 20, "main");
	uint32_t step = tb_desc(&b, "ProfileStep#1", TRACE_EV_PROFILE_STEP);
	uint32_t dl = tb_desc(&b, "Dataloader", TRACE_EV_DATALOADER);
	tb_range(&b, 0, dl, 1000 * TB_MS, 500 * TB_MS);
	tb_range(&b, 0, step, 2000 * TB_MS, 300 * TB_MS);
	tb_range(&b, 0, dl, 2300 * TB_MS, 100 * TB_MS);
	tb_range(&b, 0, step, 2300 * TB_MS, 600 * TB_MS);
	return tb_close(&b, 3000 * TB_MS);
}

const char *tb_perf_long(void)
{
	struct tb b;
	tb_open(&b, "perf-long.gpdl", "h", 30, 0);
	tb_thread(&b, 0, 30, "main");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint64_t at = 0;
	for (uint64_t k = 0; k < 25; k++) {
		tb_range(&b, 0, step, at, (k + 1) * TB_MS);
		at += (k + 1) * TB_MS;
	}
	return tb_close(&b, at);
}

const char *tb_perf_samples(int all)
{
	struct tb b;
	tb_open(&b, all ? "perf-samples.gpdl" : "perf-some-samples.gpdl", "h", 40, 0);
	tb_thread(&b, 0, 40, "main");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	struct trace_event_ext x = {.samples = 32};
	tb_ext(&b, 0, step, 0, 1000 * TB_MS, &x);
	tb_ext(&b, 0, step, 1000 * TB_MS, 2000 * TB_MS, &x);
	x.samples = 16;
	tb_ext(&b, 0, step, 3000 * TB_MS, 500 * TB_MS, &x);
	if (!all)
		tb_range(&b, 0, step, 3500 * TB_MS, 500 * TB_MS);
	return tb_close(&b, 4000 * TB_MS);
}

const char *tb_perf_nosteps(void)
{
	struct tb b;
	tb_open(&b, "perf-nosteps.gpdl", "h", 50, 0);
	tb_thread(&b, 0, 50, "main");
	uint32_t work = tb_desc(&b, "work", TRACE_EV_USER_DEFINED);
	uint32_t dl = tb_desc(&b, "Dataloader", TRACE_EV_DATALOADER);
	tb_range(&b, 0, dl, 0, 10 * TB_MS);
	tb_range(&b, 0, work, 10 * TB_MS, 90 * TB_MS);
	return tb_close(&b, 100 * TB_MS);
}

/* The Perf Summary of tb_perf_a() with the default skip (2 of its 4 steps), in
 * seconds, exactly: Paddle's three rows and avg / max / min columns with five
 * decimals, in the project's table style. The view and `gprof-dl bench` both
 * print it. */
const char tb_perf_a_text_s[] =
	"-------------------------------Perf Summary-------------------------------\n"
	"Time unit: s\n"
	"-----------------  -----------------  -----------------  -----------------\n"
	"                   avg                max                min\n"
	"-----------------  -----------------  -----------------  -----------------\n"
	"reader_cost        0.09000            0.10000            0.08000\n"
	"batch_cost         0.45000            0.50000            0.40000\n"
	"-----------------  -----------------  -----------------  -----------------\n"
	"                   avg(steps/s)       max(steps/s)       min(steps/s)\n"
	"-----------------  -----------------  -----------------  -----------------\n"
	"ips                2.22222            2.50000            2.00000\n"
	"-----------------  -----------------  -----------------  -----------------\n"
	"Note:\n"
	"Reader Ratio: 20.000%\n"
	"IPS Unit: steps/s\n"
	"Steps: 4 ProfileStep ranges; 2 skipped (the first 10 of each trace, at most half of its "
	"steps); 2 counted.\n"
	"batch_cost: a step's length; reader_cost: the time a Dataloader range of its process was "
	"open inside it. avg over the counted steps; max and min per step. Reader Ratio = all "
	"reader_cost / all batch_cost.\n"
	"ips: 1 / a step's batch_cost (not every step says how many samples it processed); avg = "
	"counted steps / all batch_cost.\n"
	"--------------------------------------------------------------------------\n"
	"\n";

/* ---- traces for `gprof-dl diff` (tracebuild.h draws them) ------------------ */

const char *tb_diff_trace(const char *name, uint32_t pid, unsigned steps, uint64_t dataloader_ns)
{
	struct tb b;
	tb_open(&b, name, "h", pid, 0);
	tb_thread(&b, 0, pid, "main");
	tb_thread(&b, 1, pid + 1, "loader");
	tb_stream(&b, 2, 0, 7);
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t dl = tb_desc(&b, "Dataloader", TRACE_EV_DATALOADER);
	uint32_t fwd = tb_desc(&b, "Forward", TRACE_EV_FORWARD);
	uint32_t bwd = tb_desc(&b, "Backward", TRACE_EV_BACKWARD);
	uint32_t opt = tb_desc(&b, "Optimization", TRACE_EV_OPTIMIZATION);
	uint32_t matmul = tb_desc(&b, "matmul", TRACE_EV_OPERATOR);
	uint32_t relu = tb_desc(&b, "relu", TRACE_EV_OPERATOR);
	uint32_t mm_grad = tb_desc(&b, "matmul_grad", TRACE_EV_OPERATOR);
	uint32_t log = tb_desc(&b, "log", TRACE_EV_USER_DEFINED);
	uint32_t launch = tb_desc(&b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	uint32_t gemm = tb_desc(&b, "gemm", TRACE_EV_KERNEL);
	for (unsigned k = 0; k < steps; k++) {
		uint64_t s = k * 100 * TB_MS;
		/* main, in end order */
		tb_call(&b, 0, launch, s + 6 * TB_MS, TB_MS, k + 1);
		tb_range(&b, 0, matmul, s + 5 * TB_MS, 20 * TB_MS);
		tb_range(&b, 0, relu, s + 30 * TB_MS, 5 * TB_MS);
		tb_range(&b, 0, fwd, s, 60 * TB_MS);
		tb_range(&b, 0, mm_grad, s + 60 * TB_MS, 20 * TB_MS);
		tb_range(&b, 0, bwd, s + 60 * TB_MS, 30 * TB_MS);
		tb_range(&b, 0, log, s + 92 * TB_MS, 3 * TB_MS);
		tb_range(&b, 0, opt, s + 90 * TB_MS, 10 * TB_MS);
		tb_range(&b, 0, step, s, 100 * TB_MS);
		/* the loader, while the main thread runs Forward */
		tb_range(&b, 1, dl, s + 10 * TB_MS, dataloader_ns);
		tb_kernel(&b, 2, gemm, s + 8 * TB_MS, 4 * TB_MS, k + 1, 1, 32, 1, 0, 0, 0);
	}
	return tb_close(&b, steps * 100 * TB_MS);
}

/* ---- synthetic jobs (tracebuild.h) ----------------------------------------------- */

static void tb_job_gloo_step(struct tb *b, const struct tb_job *j, unsigned r, unsigned k,
			     uint64_t s, uint32_t main, uint32_t worker, const uint32_t *d)
{
	int slow = j->slow_rank == (int)r;
	uint64_t extra = slow ? j->slow_ms * TB_MS : 0;
	uint64_t jit = j->jitter ? ((k + r) % 3) * TB_MS : 0;
	uint64_t at = s; /* where the operators start */
	if (slow && j->slow_dataloader) {
		tb_range(b, main, d[4], s, extra);
		at = s + extra;
		extra = 0;
	}
	uint64_t c = 40 * TB_MS + extra + jit;
	tb_range(b, main, d[1], at, c);
	tb_range(b, main, d[2], at + c, TB_MS);
	tb_range(b, main, d[0], s, 100 * TB_MS);
	if (!j->concurrent) {
		tb_comm(b, worker, d[3], at + c, s + 95 * TB_MS - (at + c), "0", k, 4ull << 20, j->ranks);
		return;
	}
	for (unsigned i = 0; i < 2; i++) /* two buckets at once, on two threads */
		tb_comm(b, worker + i, d[3], at + c, s + 95 * TB_MS - (at + c), "0", 2 * k + i,
			4ull << 20, j->ranks);
}

static void tb_job_nccl_step(struct tb *b, const struct tb_job *j, unsigned r, unsigned k,
			     uint64_t s, const uint32_t *d)
{
	uint64_t g = 50 * TB_MS + (j->slow_rank == (int)r ? j->slow_ms * TB_MS : 0) +
		     (j->jitter ? ((k + r) % 3) * TB_MS : 0);
	tb_call(b, 0, d[5], s + 1 * TB_MS, TB_MS, 2 * k + 1);
	tb_range(b, 0, d[1], s, 10 * TB_MS);
	tb_call(b, 0, d[5], s + 11 * TB_MS, TB_MS / 2, 2 * k + 2);
	tb_comm(b, 0, d[3], s + 11 * TB_MS, TB_MS, "0", k, 1ull << 20, j->ranks);
	tb_range(b, 0, d[0], s, 100 * TB_MS);
	tb_kernel(b, 1, d[6], s + 5 * TB_MS, g, 2 * k + 1, 1, 32, 1, 0, 0, 0);
	if (!j->gpu_comm_lost)
		tb_kernel(b, 2, d[7], s + 5 * TB_MS + g, 90 * TB_MS - g, 2 * k + 2, 1, 32, 1, 0, 0,
			  0);
}

/* One rank's threads and steps in b: threads main, worker (or streams). */
static void tb_job_rank(struct tb *b, const struct tb_job *j, unsigned r, uint32_t pid,
			uint32_t main, uint64_t t0)
{
	uint32_t d[8];
	d[0] = tb_desc(b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	d[1] = tb_desc(b, "matmul", TRACE_EV_OPERATOR);
	d[2] = tb_desc(b, "c10d::allreduce_", TRACE_EV_OPERATOR);
	d[3] = tb_desc(b, j->gpu ? "nccl:all_reduce" : "gloo:all_reduce", TRACE_EV_COMMUNICATION);
	d[4] = tb_desc(b, "Dataloader", TRACE_EV_DATALOADER);
	d[5] = tb_desc(b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	d[6] = tb_desc(b, "gemm", TRACE_EV_KERNEL);
	d[7] = tb_desc(b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", TRACE_EV_KERNEL);
	tb_thread_of(b, main, pid, pid, "main");
	if (j->gpu) {
		tb_stream(b, main + 1, 0, 7);
		tb_stream(b, main + 2, 0, 8);
	} else {
		tb_thread_of(b, main + 1, pid, pid + 1, "gloo");
		if (j->concurrent)
			tb_thread_of(b, main + 2, pid, pid + 2, "gloo");
	}
	int stopped = j->stopped_rank > 0 && j->stopped_rank == (int)r && j->killed_rank >= 0;
	unsigned steps = j->killed_rank == (int)r || stopped ? j->killed_steps : j->steps;
	for (unsigned k = 0; k < steps; k++) {
		uint64_t s = t0 + k * 100 * TB_MS;
		if (j->gpu)
			tb_job_nccl_step(b, j, r, k, s, d);
		else
			tb_job_gloo_step(b, j, r, k, s, main, main + 1, d);
	}
	int killed = j->killed_rank == (int)r;
	uint64_t end = t0 + steps * 100 * TB_MS + (killed ? 0 : stopped ? 10 * TB_MS : TB_MS);
	tb_process(b, pid, j->merged ? 50 : 1, t0, end, killed ? TRACE_EXIT_KILLED : stopped ? 128 + 15 : 0,
		   (int32_t)r, (int32_t)j->ranks);
}

unsigned tb_job_write(const char *name, const struct tb_job *j, char (*paths)[512])
{
	const int64_t wall = 1700000000000000000LL;
	unsigned hosts = j->hosts ? j->hosts : 1;
	char file[256];
	struct tb b;
	if (j->merged) {
		snprintf(file, sizeof(file), "%s.gpdl", name);
		tb_open(&b, file, "h0", 50, 0);
		for (unsigned r = 0; r < j->ranks; r++)
			tb_job_rank(&b, j, r, 51 + r, 2 * r, 0);
		tb_process(&b, 50, 1, 0, j->steps * 100 * TB_MS + 2 * TB_MS, 0, -1, -1);
		snprintf(paths[0], 512, "%s", tb_close(&b, j->steps * 100 * TB_MS + 2 * TB_MS));
		return 1;
	}
	for (unsigned r = 0; r < j->ranks; r++) {
		char host[16];
		uint64_t t0 = (uint64_t)(r % hosts) * 1000000 * TB_MS; /* each host's clock its own */
		snprintf(host, sizeof(host), "h%u", r % hosts);
		if (j->no_host)
			host[0] = '\0';
		snprintf(file, sizeof(file), "%s-%u.gpdl", name, r);
		const char *clock = j->clocks[r % 2] ? j->clocks[r % 2] : "CLOCK_MONOTONIC";
		tb_open_clock(&b, file, host, 100 + r, t0, (int32_t)r, (int32_t)j->ranks,
			      wall - (int64_t)t0, "", clock);
		tb_job_rank(&b, j, r, 100 + r, 0, t0);
		snprintf(paths[r], 512, "%s", tb_close(&b, t0 + j->steps * 100 * TB_MS + 2 * TB_MS));
	}
	return j->ranks;
}

double tb_gauss(uint64_t *state)
{
	double u[2];
	for (int i = 0; i < 2; i++) {
		uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		u[i] = ((double)(z >> 11) + 0.5) / 9007199254740992.0;
	}
	return sqrt(-2 * log(u[0])) * cos(2 * M_PI * u[1]);
}

/* ---- self-redispatch (tracebuild.h) ---------------------------------------------- */

const char *tb_fold_trace(const char *name, uint32_t pid, unsigned reps)
{
	struct tb b;
	tb_open(&b, name, "h", pid, 0);
	tb_thread(&b, 0, pid, "main");
	tb_stream(&b, 1, 0, 7);
	uint32_t dropout = tb_desc(&b, "dropout", TRACE_EV_OPERATOR);
	uint32_t bern = tb_desc(&b, "bernoulli_", TRACE_EV_OPERATOR);
	uint32_t div = tb_desc(&b, "div_", TRACE_EV_OPERATOR);
	uint32_t to = tb_desc(&b, "to", TRACE_EV_OPERATOR);
	uint32_t mul = tb_desc(&b, "mul", TRACE_EV_OPERATOR);
	uint32_t add = tb_desc(&b, "add_", TRACE_EV_OPERATOR);
	uint32_t copy = tb_desc(&b, "copy_", TRACE_EV_OPERATOR);
	uint32_t fill = tb_desc(&b, "fill_", TRACE_EV_OPERATOR);
	uint32_t zero = tb_desc(&b, "zero_", TRACE_EV_OPERATOR);
	uint32_t tick = tb_desc(&b, "tick", TRACE_EV_USER_DEFINED);
	uint32_t block = tb_desc(&b, "block", TRACE_EV_USER_DEFINED);
	uint32_t inner = tb_desc(&b, "inner", TRACE_EV_USER_DEFINED);
	uint32_t mix_op = tb_desc(&b, "mix", TRACE_EV_OPERATOR);
	uint32_t mix_ud = tb_desc(&b, "mix", TRACE_EV_USER_DEFINED);
	uint32_t launch = tb_desc(&b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	uint32_t kernel = tb_desc(&b, "div_kernel", TRACE_EV_KERNEL);
	for (unsigned k = 0; k < reps; k++) {
		uint64_t s = (1000 + 10000ull * k) * TB_US;
		/* in end order, as the collector writes them */
		tb_range(&b, 0, bern, s + 100 * TB_US, 100 * TB_US);
		tb_range(&b, 0, to, s + 400 * TB_US, 200 * TB_US);
		tb_call(&b, 0, launch, s + 700 * TB_US, 10 * TB_US, k + 1);
		tb_range(&b, 0, div, s + 350 * TB_US, 500 * TB_US);
		tb_range(&b, 0, div, s + 300 * TB_US, 600 * TB_US);
		tb_range(&b, 0, mul, s + 920 * TB_US, 60 * TB_US);
		tb_range(&b, 0, dropout, s, 1000 * TB_US);
		tb_kernel(&b, 1, kernel, s + 720 * TB_US, 50 * TB_US, k + 1, 1, 32, 1, 0, 0, 0);
		tb_range(&b, 0, add, s + 2200 * TB_US, 200 * TB_US);
		tb_range(&b, 0, add, s + 2100 * TB_US, 400 * TB_US);
		tb_range(&b, 0, add, s + 2000 * TB_US, 600 * TB_US);
		tb_range(&b, 0, copy, s + 3100 * TB_US, 100 * TB_US);
		tb_range(&b, 0, fill, s + 3300 * TB_US, 100 * TB_US);
		tb_range(&b, 0, copy, s + 3000 * TB_US, 500 * TB_US);
		tb_range(&b, 0, zero, s + 4100 * TB_US, 300 * TB_US);
		tb_mark(&b, 0, tick, s + 4450 * TB_US);
		tb_range(&b, 0, zero, s + 4000 * TB_US, 500 * TB_US);
		tb_range(&b, 0, inner, s + 5200 * TB_US, 100 * TB_US);
		tb_range(&b, 0, block, s + 5100 * TB_US, 600 * TB_US);
		tb_range(&b, 0, block, s + 5000 * TB_US, 800 * TB_US);
		tb_range(&b, 0, mix_ud, s + 6100 * TB_US, 200 * TB_US);
		tb_range(&b, 0, mix_op, s + 6000 * TB_US, 400 * TB_US);
	}
	return tb_close(&b, (10000ull * reps + 1000) * TB_US);
}

void tb_prepare(struct analysis *a, const char *const *paths, unsigned n)
{
	char err[512];
	analysis_init(a);
	for (unsigned i = 0; i < n; i++)
		if (analysis_load(a, paths[i], err, sizeof(err)) != 0)
			fail_msg("%s", err);
	analysis_prepare(a);
}

struct table *tb_view(const char *view, const struct analysis *a, const struct view_opts *o)
{
	const struct view *v = view_find(view);
	assert_non_null(v);
	return v->build(v, a, o);
}
