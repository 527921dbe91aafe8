/*
 * trace_fixture.c - the fixture traces of trace_fixture.h.
 */
#include "tests/chrome/trace_fixture.h"

#include "formats/trace/trace.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FFFD "\xef\xbf\xbd"

const char fix_thread1_name[] = "worker \"1\" \\ \x01\xff";

const struct fix_case fix_cases[] = {
	{"Forward", "Forward", 1, 1234567, 2000001, 0, TRACE_EV_FORWARD, "gprof-dl", 3,
	 "1234.567", "2000.001"},
	{"checkpoint \"q\"", "checkpoint \"q\"", 1, 3000000000, 0, TRACE_EVF_MARK,
	 TRACE_EV_USER_DEFINED, NULL, 0, "3000000.000", NULL},
	{"pop", "pop", 1, 4000000001, 0, TRACE_EVF_MARK | TRACE_EVF_UNBALANCED_POP,
	 TRACE_EV_USER_DEFINED, NULL, 0, "4000000.001", NULL},
	{"worker loop", "worker loop", 2, 500, 4999999500, TRACE_EVF_OPEN_AT_EXIT,
	 TRACE_EV_USER_DEFINED, NULL, 0, "0.500", "4999999.500"},
	{"very long nam", "very long nam", 2, 7, 0, TRACE_EVF_NAME_TRUNCATED,
	 TRACE_EV_USER_DEFINED, NULL, 0, "0.007", "0.000"},
	{"bad \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf \xff",
	 "bad " FFFD " " FFFD FFFD FFFD " " FFFD FFFD FFFD FFFD " " FFFD FFFD " " FFFD, 1, 42, 8,
	 0, TRACE_EV_USER_DEFINED, NULL, 0, "0.042", "0.008"},
	{"matmul", "matmul", 1, 10000, 1, 0, TRACE_EV_OPERATOR, "gprof-dl", 9, "10.000", "0.001"},
	{"async", "async", 2, 999999, 1000000, TRACE_EVF_START_END, TRACE_EV_USER_DEFINED,
	 "my domain", 0, "999.999", "1000.000"},
	{"a\"b\\c\n\t\x01\x1f\x7f/", "a\"b\\c\n\t\x01\x1f\x7f/", 1, 5, 5, 0,
	 TRACE_EV_USER_DEFINED, NULL, 0, "0.005", "0.005"},
	{"donn\xc3\xa9" "es \xe6\x95\xb0\xe6\x8d\xae \xf0\x9f\x9a\x80",
	 "donn\xc3\xa9" "es \xe6\x95\xb0\xe6\x8d\xae \xf0\x9f\x9a\x80", 2, 6, 6, 0,
	 TRACE_EV_PROFILE_STEP, NULL, 0, "0.006", "0.006"},
};
const size_t fix_ncases = sizeof(fix_cases) / sizeof(fix_cases[0]);

static uint32_t str(struct trace_writer *w, const char *s)
{
	return trace_writer_string(w, s, strlen(s));
}

static int write_header(struct trace_writer *w)
{
	struct trace_header h = {
		.version_major = TRACE_FORMAT_VERSION_MAJOR,
		.version_minor = TRACE_FORMAT_VERSION_MINOR,
		.sources = TRACE_SRC_NVTX | TRACE_SRC_PYTHON,
		.clock_domain = "CLOCK_MONOTONIC",
		.wall_offset_ns = FIX_WALL_OFFSET_NS,
		.hostname = "host-1",
		.pid = FIX_PID,
		.rank = FIX_RANK,
		.local_rank = -1,
		.world_size = -1,
		.cmdline = "./app --x \"quoted\"",
		.start_ns = FIX_START_NS,
		.ncpus = 8,
		.gprof_version = "0.1.0",
	};
	return trace_writer_header(w, &h);
}

static int write_tables(struct trace_writer *w)
{
	struct trace_process procs[] = {
		/* the rank's processes; their world size, like the header's,
		 * unknown */
		{FIX_PID, 1, FIX_START_NS, FIX_END_NS, 0, str(w, "./app --x"), FIX_RANK, -1, -1, 0},
		{FIX_CHILD_PID, FIX_PID, FIX_START_NS + 1000000000, FIX_START_NS + 4000000000, 137,
		 str(w, "worker"), FIX_RANK, -1, -1, 0},
	};
	struct trace_thread threads[FIX_THREADS] = {
		{0, FIX_PID, FIX_PID, str(w, "main"), FIX_START_NS, FIX_END_NS},
		{1, FIX_PID, 102, str(w, fix_thread1_name), FIX_START_NS + 1000, FIX_END_NS},
		{2, FIX_CHILD_PID, FIX_CHILD_PID, 0, FIX_START_NS + 1000000000, 0},
	};
	struct trace_category cat = {str(w, "gprof-dl"), 3, str(w, "Forward-cat")};
	for (size_t i = 0; i < 2; i++)
		if (trace_writer_process(w, &procs[i]) < 0)
			return -1;
	for (size_t i = 0; i < FIX_THREADS; i++)
		if (trace_writer_thread(w, &threads[i]) < 0)
			return -1;
	return trace_writer_category(w, &cat);
}

static int write_events(struct trace_writer *w)
{
	for (unsigned b = 1; b <= FIX_BYTE_RANGES; b++) {
		char name[3] = {'<', (char)b, '>'};
		uint32_t desc = trace_writer_desc(w, trace_writer_string(w, name, 3), 0, 0,
						  TRACE_EV_USER_DEFINED);
		struct trace_event e = {FIX_START_NS + b * 1000 + 1, b, desc, 0, 0};
		if (!desc || trace_writer_event(w, &e) < 0)
			return -1;
	}
	for (size_t i = 0; i < fix_ncases; i++) {
		const struct fix_case *c = &fix_cases[i];
		uint32_t domain = c->domain ? str(w, c->domain) : 0;
		uint32_t desc = trace_writer_desc(w, str(w, c->name), domain, c->category, c->type);
		struct trace_event e = {FIX_START_NS + c->start_rel_ns, c->dur_ns, desc, c->thread,
					c->flags};
		if (!desc || trace_writer_event(w, &e) < 0)
			return -1;
	}
	return 0;
}

static int write_counters(struct trace_writer *w)
{
	struct trace_counter cs[] = {
		{FIX_START_NS + 1000000, TRACE_CTR_CPU_PROCESS, 0, 10.5},
		{FIX_START_NS + 2000000, TRACE_CTR_CPU_PROCESS, 0, 20.25},
		{FIX_START_NS + 3000000, TRACE_CTR_CPU_PROCESS, 0, 99.0},
		{FIX_START_NS + 1000000, TRACE_CTR_CPU_SYSTEM, 0, 50.0},
		{FIX_START_NS + 2000000, TRACE_CTR_CPU_SYSTEM, 0, 75.125},
		{FIX_START_NS + 2500000, TRACE_CTR_RSS_BYTES, FIX_CHILD_PID, 1048576.0},
	};
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		if (trace_writer_counter(w, &cs[i]) < 0)
			return -1;
	return trace_writer_drops(w, 1, FIX_DROPS);
}

int fix_write(const char *path)
{
	struct trace_writer *w = trace_writer_open(path, 1);
	if (!w)
		return -1;
	if (write_header(w) < 0 || write_tables(w) < 0 || write_events(w) < 0 ||
	    write_counters(w) < 0) {
		trace_writer_close(w, FIX_END_NS);
		return -1;
	}
	return trace_writer_close(w, FIX_END_NS);
}

static int write_batch(struct trace_writer *w, uint32_t desc, unsigned from, unsigned n)
{
	for (unsigned i = from; i < from + n; i++) {
		struct trace_event e = {FIX_START_NS + (uint64_t)i * 1000, 10, desc, 0, 0};
		if (trace_writer_event(w, &e) < 0)
			return -1;
	}
	return 0;
}

int fix_write_two_batches(const char *path, unsigned n1, unsigned n2, long *flushed_size)
{
	/* in place, as the recorder writes: the flushed size is read meanwhile */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct trace_writer *w = fd < 0 ? NULL : trace_writer_fdopen(fd, 1);
	if (!w && fd >= 0)
		close(fd);
	if (!w)
		return -1;
	struct trace_thread t = {0, FIX_PID, FIX_PID, 0, FIX_START_NS, 0};
	int rc = write_header(w) < 0 || trace_writer_thread(w, &t) < 0 ? -1 : 0;
	uint32_t desc = rc ? 0 : trace_writer_desc(w, str(w, "step"), 0, 0, TRACE_EV_USER_DEFINED);
	if (!desc || write_batch(w, desc, 0, n1) < 0 || trace_writer_flush(w) < 0)
		rc = -1;
	FILE *f = rc ? NULL : fopen(path, "rb");
	if (f) {
		fseek(f, 0, SEEK_END);
		*flushed_size = ftell(f);
		fclose(f);
	} else {
		rc = -1;
	}
	if (rc == 0 && write_batch(w, desc, n1, n2) < 0)
		rc = -1;
	if (trace_writer_close(w, FIX_END_NS) < 0)
		rc = -1;
	return rc;
}

/* ---- many events of few descs ------------------------------------------- */

const char *const fixr_names[2] = {"op \"q\",\t1", "plain_op"};
const uint8_t fixr_flags[FIXR_NFLAGS] = {
	0,
	TRACE_EVF_MARK,
	TRACE_EVF_OPEN_AT_EXIT,
	TRACE_EVF_START_END | TRACE_EVF_NAME_TRUNCATED,
	TRACE_EVF_MARK | TRACE_EVF_UNBALANCED_POP,
};

uint64_t fixr_start_rel(unsigned i)
{
	return i + 1 == FIXR_EVENTS ? (UINT64_C(1) << 50) + 123456 : (uint64_t)i * 1000 + 7;
}

uint64_t fixr_dur(unsigned i)
{
	return fixr_flags[i % FIXR_NFLAGS] & TRACE_EVF_MARK ? 0 : i;
}

int fix_write_repeats(const char *path)
{
	struct trace_writer *w = trace_writer_open(path, 1);
	if (!w)
		return -1;
	struct trace_thread t = {0, FIX_PID, FIX_PID, 0, FIX_START_NS, 0};
	int rc = write_header(w) < 0 || trace_writer_thread(w, &t) < 0 ? -1 : 0;
	uint32_t desc[2] = {0, 0};
	for (int k = 0; rc == 0 && k < 2; k++)
		if (!(desc[k] = trace_writer_desc(w, str(w, fixr_names[k]), 0, 0,
						  k ? TRACE_EV_OPERATOR : TRACE_EV_USER_DEFINED)))
			rc = -1;
	for (unsigned i = 0; rc == 0 && i < FIXR_EVENTS; i++) {
		struct trace_event e = {FIX_START_NS + fixr_start_rel(i), fixr_dur(i), desc[i % 2], 0,
					fixr_flags[i % FIXR_NFLAGS], NULL};
		if (trace_writer_event(w, &e) < 0)
			rc = -1;
	}
	if (trace_writer_close(w, FIX_START_NS + fixr_start_rel(FIXR_EVENTS - 1) + 1) < 0)
		rc = -1;
	return rc;
}

/* ---- the GPU fixture ----------------------------------------------------- */

#define MS UINT64_C(1000000)
#define US UINT64_C(1000)
#define H FIXG_TRACK_HOST
#define S7 FIXG_TRACK_S7
#define S13 FIXG_TRACK_S13
#define X(...) 1, {__VA_ARGS__}
#define GEMM_LAUNCH .grid = {264, 1, 1}, .block = {256, 1, 1}, .registers = 64, .static_smem = 16384
#define NCCL_LAUNCH .grid = {2, 1, 1}, .block = {512, 1, 1}, .registers = 96
#define NCCL_NAME "ncclKernel_AllReduce_RING_LL_Sum_float"

const struct fixg_event fixg_events[] = {
	/* gprof-dl's own step names, which the export gives Kineto's */
	{"ProfileStep#1", TRACE_EV_PROFILE_STEP, 0, H, 0, 40 * MS, 0, {0}},
	{"ProfileStep#2", TRACE_EV_PROFILE_STEP, 0, H, 40 * MS, 40 * MS, 0, {0}},
	{"nn.Module: Linear_0", TRACE_EV_PYTHON_OP, 0, H, 500 * US, 3 * MS, 0, {0}},
	{"aten::mm", TRACE_EV_OPERATOR, 0, H, 1 * MS, 1 * MS, X(.external_id = 11)},
	{"cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME, 0, H, 1100 * US, 200 * US,
	 X(.correlation = 101, .external_id = 11)},
	{"[memory]", TRACE_EV_MEMORY, TRACE_EVF_MARK, H, 1050 * US, 0,
	 X(.bytes = 4194304, .address = UINT64_C(0x7f0000000000), .device = 0,
	   .dst_kind = TRACE_MEM_DEVICE, .total_allocated = 4194304)},
	{"aten::copy_", TRACE_EV_OPERATOR, 0, H, 7500 * US, 1500 * US, X(.external_id = 12)},
	{"cudaMemcpyAsync", TRACE_EV_CUDA_RUNTIME, 0, H, 7600 * US, 100 * US,
	 X(.correlation = 102, .external_id = 12)},
	{"cudaMemsetAsync", TRACE_EV_CUDA_RUNTIME, 0, H, 7800 * US, 100 * US, X(.correlation = 103)},
	{"cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME, 0, H, 9600 * US, 100 * US, X(.correlation = 104)},
	{"cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME, 0, H, 9800 * US, 100 * US, X(.correlation = 105)},
	{"checkpoint", TRACE_EV_USER_DEFINED, TRACE_EVF_MARK, H, 20 * MS, 0, 0, {0}},
	{"host alloc", TRACE_EV_MEMORY, TRACE_EVF_MARK, H, 30 * MS, 0,
	 X(.bytes = 1024, .address = 0x5500, .device = -1, .dst_kind = TRACE_MEM_PAGEABLE)},
	{"cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME, 0, H, 41 * MS, 100 * US, X(.correlation = 106)},
	{"cudaMemcpyAsync", TRACE_EV_CUDA_RUNTIME, 0, H, 41200 * US, 100 * US, X(.correlation = 107)},
	{"cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME, 0, H, 41400 * US, 100 * US, X(.correlation = 108)},
	{"free", TRACE_EV_MEMORY, TRACE_EVF_MARK, H, 60 * MS, 0,
	 X(.bytes = (uint64_t)-4194304, .address = UINT64_C(0x7f0000000000), .device = 0,
	   .dst_kind = TRACE_MEM_DEVICE, .total_allocated = 1048576)},
	/* stream 7 */
	{"gemm_kernel", TRACE_EV_KERNEL, 0, S7, 2 * MS, 5 * MS,
	 X(.correlation = 101, .external_id = 11, GEMM_LAUNCH)},
	{"[CUDA memcpy HtoD]", TRACE_EV_MEMCPY, 0, S7, 8 * MS, 1 * MS,
	 X(.correlation = 102, .external_id = 12, .bytes = 4194304, .copy_kind = TRACE_COPY_HTOD,
	   .src_kind = TRACE_MEM_PAGEABLE, .dst_kind = TRACE_MEM_DEVICE, .is_async = 1)},
	{"[CUDA memset]", TRACE_EV_MEMSET, 0, S7, 9 * MS, 500 * US,
	 X(.correlation = 103, .bytes = 1048576, .dst_kind = TRACE_MEM_DEVICE, .is_async = 1)},
	{"relu_kernel", TRACE_EV_KERNEL, 0, S7, 10 * MS, 2 * MS,
	 X(.correlation = 104, .grid = {1024, 1, 1}, .block = {128, 1, 1}, .registers = 16,
	   .dynamic_smem = 4096)},
	{"gemm_kernel", TRACE_EV_KERNEL, 0, S7, 42 * MS, 5 * MS, X(.correlation = 106, GEMM_LAUNCH)},
	{"Memcpy DtoH (Device -> Pinned)", TRACE_EV_MEMCPY, 0, S7, 48 * MS, 1 * MS,
	 X(.correlation = 107, .bytes = 2097152, .copy_kind = TRACE_COPY_DTOH,
	   .src_kind = TRACE_MEM_DEVICE, .dst_kind = TRACE_MEM_PINNED)},
	/* stream 13 */
	{NCCL_NAME, TRACE_EV_COMMUNICATION, 0, S13, 11 * MS, 4 * MS,
	 X(.correlation = 105, NCCL_LAUNCH)},
	{NCCL_NAME, TRACE_EV_COMMUNICATION, 0, S13, 44 * MS, 6 * MS,
	 X(.correlation = 108, NCCL_LAUNCH)},
};
const size_t fixg_nevents = sizeof(fixg_events) / sizeof(fixg_events[0]);

const char fixg_device_name[] = "NVIDIA H200";
const struct trace_device fixg_device = {
	.id = FIXG_DEVICE,
	.sm_count = 132,
	.max_threads_per_sm = 2048,
	.max_threads_per_block = 1024,
	.max_blocks_per_sm = 32,
	.warp_size = 32,
	.regs_per_sm = 65536,
	.regs_per_block = 65536,
	.smem_per_sm = 233472,
	.smem_per_block = 49152,
	.total_memory = UINT64_C(150754820096),
	.clock_khz = 1980000,
	.cc_major = 9,
	.cc_minor = 0,
};
const uint64_t fixg_streams[FIXG_TRACKS] = {0, 7, 13};

static int gpu_header_and_tables(struct trace_writer *w)
{
	struct trace_header h = {
		.version_major = TRACE_FORMAT_VERSION_MAJOR,
		.version_minor = TRACE_FORMAT_VERSION_MINOR,
		.sources = TRACE_SRC_NVTX | TRACE_SRC_CUPTI,
		.clock_domain = "CLOCK_MONOTONIC",
		.wall_offset_ns = FIX_WALL_OFFSET_NS,
		.hostname = "gpu-host",
		.pid = FIXG_PID,
		.rank = 0,
		.local_rank = 0,
		.cmdline = "python train.py",
		.start_ns = FIX_START_NS,
		.ncpus = 16,
		.gprof_version = "0.1.0",
		.world_size = 1,
		.dist_backend = "nccl",
	};
	if (trace_writer_header(w, &h) < 0)
		return -1;
	struct trace_process p = {FIXG_PID, 1, FIX_START_NS, FIXG_END_NS, 0,
				  str(w, "python train.py"), 0, 0, 1, str(w, "nccl")};
	struct trace_thread t[FIXG_TRACKS] = {
		{.index = 0, .pid = FIXG_PID, .tid = FIXG_PID, .name_str = str(w, "python"),
		 .start_ns = FIX_START_NS, .end_ns = FIXG_END_NS},
		{.index = 1, .pid = FIXG_PID, .start_ns = FIX_START_NS, .end_ns = FIXG_END_NS,
		 .kind = TRACE_TRACK_STREAM, .device = FIXG_DEVICE, .context = FIXG_CONTEXT,
		 .stream = 7},
		{.index = 2, .pid = FIXG_PID, .name_str = str(w, "nccl"), .start_ns = FIX_START_NS,
		 .end_ns = FIXG_END_NS, .kind = TRACE_TRACK_STREAM, .device = FIXG_DEVICE,
		 .context = FIXG_CONTEXT, .stream = 13},
	};
	struct trace_device d = fixg_device;
	d.name_str = str(w, fixg_device_name);
	if (trace_writer_process(w, &p) < 0 || trace_writer_device(w, &d) < 0)
		return -1;
	for (size_t i = 0; i < FIXG_TRACKS; i++)
		if (trace_writer_thread(w, &t[i]) < 0)
			return -1;
	return 0;
}

int fix_write_gpu(const char *path)
{
	struct trace_writer *w = trace_writer_open(path, 1);
	if (!w)
		return -1;
	int rc = gpu_header_and_tables(w);
	for (size_t i = 0; rc == 0 && i < fixg_nevents; i++) {
		const struct fixg_event *f = &fixg_events[i];
		uint32_t desc = trace_writer_desc(w, str(w, f->name), 0, 0, f->type);
		struct trace_event e = {FIX_START_NS + f->start_rel_ns, f->dur_ns, desc, f->track,
					f->flags, f->has_ext ? &f->ext : NULL};
		if (!desc || trace_writer_event(w, &e) < 0)
			rc = -1;
	}
	struct trace_counter c = {FIX_START_NS + 10 * MS, TRACE_CTR_CPU_PROCESS, 0, FIXG_CPU_SAMPLE};
	if (rc == 0 && (trace_writer_counter(w, &c) < 0 ||
			trace_writer_drops(w, FIXG_TRACK_S13, FIXG_DROPS) < 0))
		rc = -1;
	if (trace_writer_close(w, FIXG_END_NS) < 0)
		rc = -1;
	return rc;
}

/* ---- operators and steps with details ----------------------------------- */

const struct fixo_event fixo_events[] = {
	{"ProfilerStep#0", TRACE_EV_PROFILE_STEP, 0, 10 * MS, 0, 0, NULL, NULL, 64},
	{"aten::addmm", TRACE_EV_OPERATOR, 1 * MS, 100000, 1, 2794, "[[32, 64], [64, 128], [128]]",
	 "[[32,64],[64,128],[128]]", 0},
	{"aten::zeros", TRACE_EV_OPERATOR, 2 * MS, 1000, 1, 0, "[[], []]", "[[],[]]", 0},
	{"aten::view", TRACE_EV_OPERATOR, 3 * MS, 1000, 0, 0, "[[4, -1], [-9223372036854775]]",
	 "[[4,-1],[-9223372036854775]]", 0},
	{"AddmmBackward0", TRACE_EV_OPERATOR, 4 * MS, 2000, 1, 2794, NULL, NULL, 0},
	{"aten::wide", TRACE_EV_OPERATOR, 5 * MS, 1000, 1, INT64_C(5000000000), "[[32,64]]",
	 "\"[[32,64]]\"", 0},
	{"aten::negative", TRACE_EV_OPERATOR, 6 * MS, 1000, 1, -7, "[[1.5]]", "\"[[1.5]]\"", 0},
	{"aten::deep", TRACE_EV_OPERATOR, 7 * MS, 1000, 1, INT64_MAX, "[[[[2]]], 3]", "[[[[2]]],3]", 0},
	{"aten::lead", TRACE_EV_OPERATOR, 8 * MS, 1000, 0, 0, "[[01]]", "\"[[01]]\"", 0},
	{"aten::blank", TRACE_EV_OPERATOR, 8 * MS + 1000, 1000, 0, 0, "", "\"\"", 0},
	{"aten::cut", TRACE_EV_OPERATOR, 8 * MS + 3000, 1000, 0, 0, "[[32, 6", "\"[[32, 6\"", 0},
	{"ProfilerStep#1", TRACE_EV_PROFILE_STEP, 10 * MS, 10 * MS, 0, 0, NULL, NULL, 0},
	{"loader", TRACE_EV_DATALOADER, 21 * MS, 1 * MS, 0, 0, NULL, NULL, 32},
};
const size_t fixo_nevents = sizeof(fixo_events) / sizeof(fixo_events[0]);

int fix_write_ops(const char *path)
{
	struct trace_writer *w = trace_writer_open(path, 1);
	if (!w)
		return -1;
	struct trace_header h = {
		.version_major = TRACE_FORMAT_VERSION_MAJOR,
		.version_minor = TRACE_FORMAT_VERSION_MINOR,
		.sources = TRACE_SRC_NVTX | TRACE_SRC_PYTHON,
		.clock_domain = "CLOCK_MONOTONIC",
		.wall_offset_ns = FIX_WALL_OFFSET_NS,
		.hostname = "ops-host",
		.pid = FIXO_PID,
		.rank = -1,
		.local_rank = -1,
		.cmdline = "python ops.py",
		.start_ns = FIX_START_NS,
		.ncpus = 8,
		.gprof_version = "0.1.0",
		.world_size = -1,
		.dist_backend = "",
	};
	int rc = trace_writer_header(w, &h);
	struct trace_process p = {FIXO_PID, 1, FIX_START_NS, FIXO_END_NS, 0, str(w, "python ops.py"),
				  -1, -1, -1, 0};
	struct trace_thread t = {.index = 0, .pid = FIXO_PID, .tid = FIXO_PID, .name_str = str(w, "python"),
				 .start_ns = FIX_START_NS, .end_ns = FIXO_END_NS};
	if (rc == 0 && (trace_writer_process(w, &p) < 0 || trace_writer_thread(w, &t) < 0))
		rc = -1;
	uint32_t dom = str(w, "gprof-dl");
	for (size_t i = 0; rc == 0 && i < fixo_nevents; i++) {
		const struct fixo_event *f = &fixo_events[i];
		uint32_t desc = trace_writer_desc(w, str(w, f->name), dom, f->type, f->type);
		struct trace_event_ext x = {.has_seq = (uint8_t)f->has_seq, .seq_nr = f->seq,
					    .shapes_str = f->shapes ? str(w, f->shapes) : 0,
					    .samples = f->samples,
					    /* the step that knows its samples knows its thread's times */
					    .sched_cpu_ns = f->samples ? FIXO_STEP_CPU_NS : 0,
					    .sched_runq_ns = f->samples ? FIXO_STEP_RUNQ_NS : 0};
		struct trace_event e = {FIX_START_NS + f->start_rel_ns, f->dur_ns, desc, 0, 0, &x};
		if (!desc || trace_writer_event(w, &e) < 0)
			rc = -1;
	}
	if (trace_writer_close(w, FIXO_END_NS) < 0)
		rc = -1;
	return rc;
}

static char tmpdir[4096];

const char *fix_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(tmpdir, sizeof(tmpdir), "%s/gpdl-test-XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			abort();
		}
	}
	return tmpdir;
}

char *fix_path(const char *name)
{
	const char *dir = fix_tmpdir();
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (!p)
		abort();
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

void fix_cleanup(void)
{
	if (!tmpdir[0])
		return;
	DIR *d = opendir(tmpdir);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = fix_path(de->d_name);
		unlink(p);
		free(p);
	}
	if (d)
		closedir(d);
	rmdir(tmpdir);
	tmpdir[0] = '\0';
}
