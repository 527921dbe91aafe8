/*
 * test_import.c - the importer on small hand-written JSON files: one fixture
 * per producer (the PyTorch profiler's Kineto form with every category and
 * its args, its memory instants, the older plain-array form, Paddle's
 * output, gprof-dl's own export), each read back through the trace reader
 * and asserted exactly: counts, types, tracks, nanosecond times, details,
 * devices and header. Then what must not import: malformed, truncated and
 * mutated input (an error naming the file and the byte offset, never a
 * crash), gzip, the exact number parser, trace_open_any(), events in any
 * order across long spans, and memory that stays flat as the input grows.
 */
#include "formats/import/import_num.h"
#include "formats/trace/trace_format.h"
#include "formats/trace/trace_open.h"
#include "tests/import/import_check.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#define US 1000ull

/* ---- the PyTorch profiler (Kineto), CPU and GPU ---------------------------- */

static const char kineto_json[] =
	"{\n"
	"  \"schemaVersion\": 1,\n"
	"  \"deviceProperties\": [\n"
	"    {\"id\": 0, \"name\": \"NVIDIA A100-SXM4-40GB\", \"totalGlobalMem\": 42505273344,\n"
	"     \"computeMajor\": 8, \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024,\n"
	"     \"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536,\n"
	"     \"regsPerMultiprocessor\": 65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152,\n"
	"     \"sharedMemPerMultiprocessor\": 167936, \"numSms\": 108, \"sharedMemPerBlockOptin\": 166912}\n"
	"  ],\n"
	"  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 1, \"world_size\": 4, \"pg_count\": 1,\n"
	"                      \"pg_config\": [{\"pg_name\": \"0\", \"ranks\": [0, 1, 2, 3]}]},\n"
	"  \"record_shapes\": 1,\n"
	"  \"traceEvents\": [\n"
	"  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#5\", \"pid\": 4242, \"tid\": 4242,\n"
	"   \"ts\": 1000.000, \"dur\": 900.500, \"args\": {\"External id\": 1}},\n"
	"  {\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"nn.Module: Linear_0\", \"pid\": 4242, \"tid\": 4242,\n"
	"   \"ts\": 1010.125, \"dur\": 300.000, \"args\": {\"Python id\": 7, \"Python parent id\": 1}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 4242, \"tid\": 4242,\n"
	"   \"ts\": 1020.001, \"dur\": 50.999, \"args\": {\"External id\": 2, \"Record function id\": 0,\n"
	"   \"Input Dims\": [[8, 32], [8, 16], [16, 32]], \"Input type\": [\"float\", \"float\", \"float\"],\n"
	"   \"Sequence number\": 5, \"Fwd thread id\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"my_region\", \"pid\": 4242, \"tid\": 4243,\n"
	"   \"ts\": 1100, \"dur\": 10, \"args\": {\"External id\": 3}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 4242, \"tid\": 4242,\n"
	"   \"ts\": 1030.000, \"dur\": 5.250, \"args\": {\"External id\": 2, \"cbid\": 211, \"correlation\": 311}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuLaunchKernel\", \"pid\": 4242, \"tid\": 4242,\n"
	"   \"ts\": 1040.000, \"dur\": 4.000, \"args\": {\"cbid\": 307, \"correlation\": 312}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 4242, \"tid\": 4242,\n"
	"   \"ts\": 1050, \"dur\": 3, \"args\": {\"External id\": 4, \"cbid\": 41, \"correlation\": 313}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemsetAsync\", \"pid\": 4242, \"tid\": 4242,\n"
	"   \"ts\": 1060, \"dur\": 2, \"args\": {\"cbid\": 51, \"correlation\": 314}},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void gemm_kernel<float>(float*)\", \"pid\": 0, \"tid\": 7,\n"
	"   \"ts\": 1036.500, \"dur\": 20.125, \"args\": {\"External id\": 2, \"queued\": 0, \"device\": 0,\n"
	"   \"context\": 1, \"stream\": 7, \"correlation\": 311, \"registers per thread\": 64,\n"
	"   \"shared memory\": 16384, \"blocks per SM\": 2.44, \"warps per SM\": 19.5,\n"
	"   \"grid\": [264, 1, 1], \"block\": [256, 1, 1], \"est. achieved occupancy %\": 50}},\n"
	"  {\"ph\": \"f\", \"id\": 311, \"pid\": 0, \"tid\": 7, \"ts\": 1036.500, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"
	"  {\"ph\": \"s\", \"id\": 311, \"pid\": 4242, \"tid\": 4242, \"ts\": 1030.000, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\",\n"
	"   \"name\": \"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)\",\n"
	"   \"pid\": 0, \"tid\": 13, \"ts\": 1045, \"dur\": 100, \"args\": {\"device\": 0, \"context\": 1,\n"
	"   \"stream\": 13, \"correlation\": 312, \"registers per thread\": 96, \"shared memory\": 0,\n"
	"   \"grid\": [2, 1, 1], \"block\": [512, 1, 1]}},\n"
	"  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", \"pid\": 0, \"tid\": 7,\n"
	"   \"ts\": 1060, \"dur\": 8.5, \"args\": {\"External id\": 4, \"device\": 0, \"context\": 1, \"stream\": 7,\n"
	"   \"correlation\": 313, \"bytes\": 4194304, \"memory bandwidth (GB/s)\": 493.4}},\n"
	"  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0, \"tid\": 7,\n"
	"   \"ts\": 1070, \"dur\": 1.5, \"args\": {\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": 314,\n"
	"   \"bytes\": 1024, \"memory bandwidth (GB/s)\": 0.68}},\n"
	"  {\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"my_region\", \"pid\": 0, \"tid\": 7,\n"
	"   \"ts\": 1036.499, \"dur\": 20.127, \"args\": {\"External id\": 3}},\n"
	"  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1000, \"pid\": 4242, \"tid\": 0, \"args\": {\"name\": \"python3\"}},\n"
	"  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 1000, \"pid\": 4242, \"tid\": 4242,\n"
	"   \"args\": {\"name\": \"thread 4242 (python3)\"}},\n"
	"  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1000, \"pid\": 0, \"tid\": 0, \"args\": {\"name\": \"GPU 0\"}},\n"
	"  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 1000, \"pid\": 0, \"tid\": 7, \"args\": {\"name\": \"stream 7\"}},\n"
	"  {\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 990, \"dur\": 1000, \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
	"   \"name\": \"PyTorch Profiler (0)\", \"args\": {\"Op count\": 0}},\n"
	"  {\"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"Traces\",\n"
	"   \"tid\": \"Trace PyTorch Profiler\", \"ts\": 990},\n"
	"  {\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": 2000.5}\n"
	"  ],\n"
	"  \"traceName\": \"x.json\",\n"
	"  \"displayTimeUnit\": \"ms\",\n"
	"  \"baseTimeNanoseconds\": 1700000000000000000\n"
	"}\n";

/* baseTimeNanoseconds: Kineto's ts 0; the import puts its events on Unix
 * time, so that a job's ranks line up */
#define KB 1700000000000000000ull

static void check_kineto(const struct got *g)
{
	const struct got_event *e;

	assert_int_equal(g->st.format, IMPORT_FMT_KINETO);
	/* the file's 13 (the profiler's span is the window, no event) and the
	 * step's Forward, recovered (no backward function: the step's work) */
	assert_int_equal(g->n, 14);
	assert_int_equal(g->st.events, 13);
	assert_int_equal(g->st.phases, 1);
	assert_int_equal(g->st.ignored, 4); /* two ac2g flow ends, two global instants */
	e = chk_find(g, "Forward", 0);
	assert_int_equal(e->type, TRACE_EV_FORWARD);
	assert_int_equal(e->start, KB + 1020001 * 1000 / 1000); /* aten::addmm .. */
	assert_int_equal(e->start + e->dur, KB + 1071000); /* .. aten::addmm's end */

	/* types */
	assert_int_equal(chk_find(g, "ProfilerStep#5", 0)->type, TRACE_EV_PROFILE_STEP);
	assert_int_equal(chk_find(g, "nn.Module: Linear_0", 0)->type, TRACE_EV_PYTHON_OP);
	assert_int_equal(chk_find(g, "aten::addmm", 0)->type, TRACE_EV_OPERATOR);
	assert_int_equal(chk_find(g, "my_region", 0)->type, TRACE_EV_USER_DEFINED);
	assert_int_equal(chk_find(g, "my_region", 1)->type, TRACE_EV_USER_DEFINED);
	assert_int_equal(chk_count_type(g, TRACE_EV_CUDA_RUNTIME), 4);
	assert_int_equal(chk_find(g, "cuLaunchKernel", 0)->type, TRACE_EV_CUDA_RUNTIME);
	assert_int_equal(chk_find(g, "void gemm_kernel<float>(float*)", 0)->type, TRACE_EV_KERNEL);
	assert_int_equal(chk_count_type(g, TRACE_EV_COMMUNICATION), 1);
	assert_int_equal(chk_find(g, "Memcpy HtoD (Pageable -> Device)", 0)->type, TRACE_EV_MEMCPY);
	assert_int_equal(chk_find(g, "Memset (Device)", 0)->type, TRACE_EV_MEMSET);
	assert_int_equal(chk_count(g, "PyTorch Profiler (0)"), 0);

	/* nanoseconds from the decimal text */
	e = chk_find(g, "ProfilerStep#5", 0);
	assert_int_equal(e->start, KB + 1000 * US);
	assert_int_equal(e->dur, 900500);
	e = chk_find(g, "aten::addmm", 0);
	assert_int_equal(e->start, KB + 1020001);
	assert_int_equal(e->dur, 50999);
	assert_true(e->has_ext);
	assert_int_equal(e->ext.external_id, 2);
	assert_int_equal(e->ext.correlation, 0);
	/* record_shapes: Kineto's Input Dims as torch prints shapes; Sequence number */
	assert_string_equal(e->shapes, "[[8, 32], [8, 16], [16, 32]]");
	assert_int_equal(e->ext.has_seq, 1);
	assert_int_equal(e->ext.seq_nr, 5);
	assert_int_equal(e->ext.samples, 0);
	e = chk_find(g, "ProfilerStep#5", 0);
	assert_int_equal(e->ext.has_seq, 0);
	assert_int_equal(e->ext.shapes_str, 0);
	e = chk_find(g, "nn.Module: Linear_0", 0);
	assert_int_equal(e->start, KB + 1010125);
	assert_false(e->has_ext);

	/* tracks: two host threads of 4242, two streams (the profiler's span
	 * is on none) */
	assert_int_equal(g->nthreads, 4);
	const struct got_thread *main_t = chk_thread_of(g, chk_find(g, "aten::addmm", 0));
	assert_int_equal(main_t->t.kind, TRACE_TRACK_HOST);
	assert_int_equal(main_t->t.pid, 4242);
	assert_int_equal(main_t->t.tid, 4242);
	assert_string_equal(main_t->name, "thread 4242 (python3)");
	assert_int_equal(main_t->t.start_ns, KB + 1000 * US);
	assert_int_equal(main_t->t.end_ns, KB + 1900500);
	const struct got_thread *t4243 = chk_thread_of(g, chk_find(g, "my_region", 0));
	assert_int_equal(t4243->t.tid, 4243);
	assert_string_equal(t4243->name, "");

	e = chk_find(g, "void gemm_kernel<float>(float*)", 0);
	const struct got_thread *s7 = chk_thread_of(g, e);
	assert_int_equal(s7->t.kind, TRACE_TRACK_STREAM);
	assert_int_equal(s7->t.device, 0);
	assert_int_equal(s7->t.stream, 7);
	assert_int_equal(s7->t.context, 1);
	assert_int_equal(s7->t.pid, 4242); /* the process that owns the stream */
	assert_string_equal(s7->name, "stream 7");
	assert_int_equal(e->start, KB + 1036500);
	assert_int_equal(e->dur, 20125);
	assert_int_equal(e->ext.correlation, 311);
	assert_int_equal(e->ext.external_id, 2);
	assert_int_equal(e->ext.grid[0], 264);
	assert_int_equal(e->ext.grid[1], 1);
	assert_int_equal(e->ext.grid[2], 1);
	assert_int_equal(e->ext.block[0], 256);
	assert_int_equal(e->ext.registers, 64);
	assert_int_equal(e->ext.static_smem, 16384);
	assert_int_equal(e->ext.dynamic_smem, 0);
	assert_int_equal(e->ext.bytes, 0);

	e = chk_find(g, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 0);
	assert_int_equal(e->type, TRACE_EV_COMMUNICATION);
	const struct got_thread *s13 = chk_thread_of(g, e);
	assert_int_equal(s13->t.kind, TRACE_TRACK_STREAM);
	assert_int_equal(s13->t.stream, 13);
	assert_string_equal(s13->name, "");
	assert_int_equal(e->ext.correlation, 312);
	assert_int_equal(e->ext.grid[0], 2);
	assert_int_equal(e->ext.block[0], 512);
	assert_int_equal(e->ext.registers, 96);

	e = chk_find(g, "cudaLaunchKernel", 0);
	assert_int_equal(e->ext.correlation, 311);
	assert_int_equal(e->ext.external_id, 2);
	assert_int_equal(e->dur, 5250);
	assert_int_equal(chk_find(g, "cuLaunchKernel", 0)->ext.correlation, 312);

	e = chk_find(g, "Memcpy HtoD (Pageable -> Device)", 0);
	assert_ptr_equal(chk_thread_of(g, e), s7);
	assert_int_equal(e->dur, 8500);
	assert_int_equal(e->ext.bytes, 4194304);
	assert_int_equal(e->ext.copy_kind, TRACE_COPY_HTOD);
	assert_int_equal(e->ext.src_kind, TRACE_MEM_PAGEABLE);
	assert_int_equal(e->ext.dst_kind, TRACE_MEM_DEVICE);
	assert_int_equal(e->ext.correlation, 313);
	assert_int_equal(e->ext.external_id, 4);
	e = chk_find(g, "Memset (Device)", 0);
	assert_int_equal(e->dur, 1500);
	assert_int_equal(e->ext.bytes, 1024);
	assert_int_equal(e->ext.dst_kind, TRACE_MEM_DEVICE);
	assert_int_equal(e->ext.correlation, 314);

	e = chk_find(g, "my_region", 1); /* the GPU side of the annotation */
	assert_ptr_equal(chk_thread_of(g, e), s7);
	assert_int_equal(e->start, KB + 1036499);
	assert_int_equal(e->dur, 20127);
	assert_int_equal(e->ext.external_id, 3);

	/* header: the recorded interval is the profiler's span, [990, 1990] us,
	 * wider than the events' [1000, 1900.5] */
	assert_int_equal(g->h.pid, 4242);
	assert_int_equal(g->h.rank, 1);
	assert_int_equal(g->h.world_size, 4);
	assert_string_equal(g->backend, "nccl");
	assert_int_equal(g->h.start_ns, KB + 990 * US);
	assert_int_equal(g->end_ns, KB + 1990 * US);
	assert_int_equal(g->h.wall_offset_ns, 0); /* on Unix time (baseTimeNanoseconds) */
	assert_string_equal(g->clock, "CLOCK_REALTIME");
	assert_string_equal(g->cmdline, "python3");
	assert_int_equal(g->nprocs, 1); /* no "Spans" process of the span */
	assert_int_equal(g->procs[0].pid, 4242);
	assert_string_equal(g->proc_names[0], "python3");
	/* 1.3: the file is rank 1's: so is each process; no local rank given */
	assert_int_equal(g->h.local_rank, -1);
	for (uint32_t i = 0; i < g->nprocs; i++) {
		assert_int_equal(g->procs[i].rank, 1);
		assert_int_equal(g->procs[i].local_rank, -1);
		assert_int_equal(g->procs[i].world_size, 4);
	}

	/* deviceProperties */
	assert_int_equal(g->ndevs, 1);
	const struct trace_device *d = &g->devs[0].d;
	assert_string_equal(g->devs[0].name, "NVIDIA A100-SXM4-40GB");
	assert_int_equal(d->id, 0);
	assert_int_equal(d->total_memory, 42505273344ull);
	assert_int_equal(d->cc_major, 8);
	assert_int_equal(d->cc_minor, 0);
	assert_int_equal(d->max_threads_per_block, 1024);
	assert_int_equal(d->max_threads_per_sm, 2048);
	assert_int_equal(d->regs_per_block, 65536);
	assert_int_equal(d->regs_per_sm, 65536);
	assert_int_equal(d->warp_size, 32);
	assert_int_equal(d->smem_per_block, 49152);
	assert_int_equal(d->smem_per_sm, 167936);
	assert_int_equal(d->sm_count, 108);
}

static void test_kineto(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(kineto_json, 0, &g);
	check_kineto(&g);
	chk_free(&g);
}

static void test_kineto_gzip(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(kineto_json, 1, &g);
	check_kineto(&g);
	assert_int_equal(g.st.json_bytes, strlen(kineto_json)); /* decompressed */
	chk_free(&g);
}

/* ---- Kineto before PyTorch 1.10 ------------------------------------------------ */

static const char old_kineto_json[] =
	"{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n"
	"  {\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"aten::mm\", \"pid\": 500, \"tid\": \"500\",\n"
	"   \"ts\": 1621401187223005, \"dur\": 17, \"args\": {\"Device\": 500, \"External id\": 3,\n"
	"   \"Trace name\": \"PyTorch Profiler\", \"Trace iteration\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 500, \"tid\": \"500\",\n"
	"   \"ts\": 1621401187223010, \"dur\": 5, \"args\": {\"cbid\": 211, \"correlation\": 77, \"external id\": 3,\n"
	"   \"external ts\": 1621401187223005}},\n"
	"  {\"ph\": \"s\", \"id\": 77, \"pid\": 500, \"tid\": 500, \"ts\": 1621401187223010, \"cat\": \"async\", \"name\": \"launch\"},\n"
	"  {\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"volta_sgemm_128x64_nn\", \"pid\": 0, \"tid\": \"stream 7\",\n"
	"   \"ts\": 1621401187223020, \"dur\": 30, \"args\": {\"queued\": 0, \"device\": 0, \"context\": 1,\n"
	"   \"stream\": 7, \"correlation\": 77, \"external id\": 3, \"registers per thread\": 64,\n"
	"   \"shared memory\": 8192, \"blocks per SM\": 0.1, \"warps per SM\": 0.4, \"grid\": [8, 1, 1],\n"
	"   \"block\": [128, 1, 1], \"est. achieved occupancy %\": 3}},\n"
	"  {\"ph\": \"f\", \"id\": 77, \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 1621401187223020, \"cat\": \"async\",\n"
	"   \"name\": \"launch\", \"bp\": \"e\"},\n"
	"  {\"ph\": \"X\", \"cat\": \"Memcpy\", \"name\": \"Memcpy DtoH (Device -> Pageable)\", \"pid\": 0,\n"
	"   \"tid\": \"stream 7\", \"ts\": 1621401187223060, \"dur\": 4, \"args\": {\"device\": 0, \"context\": 1,\n"
	"   \"stream\": 7, \"correlation\": 78, \"external id\": 4, \"bytes\": 512, \"memory bandwidth (GB/s)\": 0.128}},\n"
	"  {\"ph\": \"X\", \"cat\": \"User\", \"name\": \"my_annotation\", \"pid\": 0, \"tid\": \"stream 7 user\",\n"
	"   \"ts\": 1621401187223019, \"dur\": 50, \"args\": {\"External id\": 9}},\n"
	"  {\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 1621401187223000, \"dur\": 100, \"pid\": \"Traces\",\n"
	"   \"tid\": \"PyTorch Profiler\", \"name\": \"PyTorch Profiler (0)\", \"args\": {\"Op count\": 2}},\n"
	"  {\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": 1621401187223200}\n"
	"]}";

static void test_old_kineto(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(old_kineto_json, 0, &g);
	assert_int_equal(g.st.format, IMPORT_FMT_KINETO);
	assert_int_equal(g.n, 5); /* the "PyTorch Profiler (0)" span is the window */
	assert_int_equal(chk_count(&g, "PyTorch Profiler (0)"), 0);
	assert_int_equal(g.end_ns, 1621401187223100000ull);
	assert_int_equal(g.st.ignored, 3);
	const struct got_event *e = chk_find(&g, "aten::mm", 0);
	assert_int_equal(e->type, TRACE_EV_OPERATOR);
	assert_int_equal(e->start, 1621401187223005000ull);
	assert_int_equal(e->dur, 17000);
	assert_int_equal(chk_thread_of(&g, e)->t.tid, 500);
	e = chk_find(&g, "cudaLaunchKernel", 0);
	assert_int_equal(e->type, TRACE_EV_CUDA_RUNTIME);
	assert_int_equal(e->ext.correlation, 77);
	assert_int_equal(e->ext.external_id, 3);
	e = chk_find(&g, "volta_sgemm_128x64_nn", 0);
	assert_int_equal(e->type, TRACE_EV_KERNEL);
	const struct got_thread *s7 = chk_thread_of(&g, e);
	assert_int_equal(s7->t.kind, TRACE_TRACK_STREAM);
	assert_int_equal(s7->t.device, 0);
	assert_int_equal(s7->t.stream, 7);
	assert_int_equal(e->ext.correlation, 77);
	assert_int_equal(e->ext.external_id, 3);
	assert_int_equal(e->ext.grid[0], 8);
	e = chk_find(&g, "Memcpy DtoH (Device -> Pageable)", 0);
	assert_ptr_equal(chk_thread_of(&g, e), s7);
	assert_int_equal(e->ext.copy_kind, TRACE_COPY_DTOH);
	assert_int_equal(e->ext.src_kind, TRACE_MEM_DEVICE);
	assert_int_equal(e->ext.dst_kind, TRACE_MEM_PAGEABLE);
	assert_int_equal(e->ext.external_id, 4);
	/* "User" ranges on "stream 7 user": the stream's annotations */
	e = chk_find(&g, "my_annotation", 0);
	assert_int_equal(e->type, TRACE_EV_USER_DEFINED);
	assert_ptr_equal(chk_thread_of(&g, e), s7);
	assert_int_equal(g.nthreads, 2); /* none of the span's */
	assert_int_equal(g.h.pid, 500);
	assert_string_equal(g.clock, "CLOCK_REALTIME");
	assert_int_equal(g.h.wall_offset_ns, 0);
	assert_int_equal(g.h.start_ns, 1621401187223000000ull);
	chk_free(&g);
}

/* ---- memory instants --------------------------------------------------------- */

static const char memory_json[] =
	"{\"traceEvents\": [\n"
	"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 10, \"tid\": 11,\n"
	" \"ts\": 5.000, \"args\": {\"Total Reserved\": 2097152, \"Total Allocated\": 512, \"Bytes\": 512,\n"
	" \"Addr\": 94558439211008, \"Device Type\": 1, \"Device Id\": 0}},\n"
	"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 10, \"tid\": 11,\n"
	" \"ts\": 6.5, \"args\": {\"Total Reserved\": 2097152, \"Total Allocated\": 0, \"Bytes\": -512,\n"
	" \"Addr\": 94558439211008, \"Device Type\": 1, \"Device Id\": 0}},\n"
	"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 10, \"tid\": 11,\n"
	" \"ts\": 7, \"args\": {\"Total Reserved\": 0, \"Total Allocated\": 4096, \"Bytes\": 4096,\n"
	" \"Addr\": 140000000000000, \"Device Type\": 0, \"Device Id\": -1}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 10, \"tid\": 11, \"ts\": 4.999,\n"
	" \"dur\": 3, \"args\": {\"External id\": 9}}\n"
	"]}\n";

static void test_memory(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(memory_json, 0, &g);
	assert_int_equal(g.n, 4);
	assert_int_equal(chk_count_type(&g, TRACE_EV_MEMORY), 3);
	const struct got_event *a = chk_find(&g, "[memory]", 0), *f = chk_find(&g, "[memory]", 1),
			       *h = chk_find(&g, "[memory]", 2);
	for (int i = 0; i < 3; i++) {
		const struct got_event *e = chk_find(&g, "[memory]", i);
		assert_int_equal(e->type, TRACE_EV_MEMORY);
		assert_true(e->flags & TRACE_EVF_MARK);
		assert_int_equal(e->dur, 0);
		assert_true(e->has_ext);
		assert_int_equal(chk_thread_of(&g, e)->t.kind, TRACE_TRACK_HOST);
		assert_int_equal(chk_thread_of(&g, e)->t.tid, 11);
	}
	assert_int_equal(a->start, 5000);
	assert_int_equal((int64_t)a->ext.bytes, 512);
	assert_int_equal(a->ext.address, 94558439211008ull);
	assert_int_equal(a->ext.device, 0);
	assert_int_equal(a->ext.dst_kind, TRACE_MEM_DEVICE);
	assert_int_equal(a->ext.total_allocated, 512);
	assert_int_equal(f->start, 6500);
	assert_int_equal((int64_t)f->ext.bytes, -512);
	assert_int_equal(f->ext.total_allocated, 0);
	assert_int_equal(h->start, 7000);
	assert_int_equal((int64_t)h->ext.bytes, 4096);
	assert_int_equal(h->ext.device, -1);
	assert_int_equal(h->ext.dst_kind, TRACE_MEM_UNKNOWN);
	assert_int_equal(h->ext.total_allocated, 4096);
	assert_int_equal(chk_find(&g, "aten::empty", 0)->start, 4999);
	assert_int_equal(g.h.start_ns, 4999);
	assert_string_equal(g.clock, "unknown"); /* no baseTimeNanoseconds, no epoch times */
	chk_free(&g);
}

/* torch's DataLoader batches (a record_function named after the iterator) are
 * the Dataloader phase, in both profilers' outputs; other annotations stay
 * UserDefined. */
static void test_torch_dataloader_name(void **state)
{
	(void)state;
	static const char doc[] =
		"{\"traceEvents\": ["
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
		"\"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__\", \"pid\": 1, \"tid\": 1, "
		"\"ts\": 10, \"dur\": 5},"
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"enumerate(my_list)\", "
		"\"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 5}]}";
	struct got g;
	chk_import_text(doc, 0, &g);
	assert_int_equal(g.n, 2);
	assert_int_equal(chk_find(&g, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0)->type,
			 TRACE_EV_DATALOADER);
	assert_int_equal(chk_find(&g, "enumerate(my_list)", 0)->type, TRACE_EV_USER_DEFINED);
	chk_free(&g);
}

/* ---- the older torch.autograd.profiler: a plain array ------------------------ */

static const char legacy_json[] =
	"[{\"name\": \"ProfilerStep#0\", \"ph\": \"X\", \"ts\": 100, \"dur\": 50, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, "
	"{\"name\": \"aten::addmm\", \"ph\": \"X\", \"ts\": 110, \"dur\": 7, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, "
	"{\"name\": \"aten::mm\", \"ph\": \"X\", \"ts\": 120, \"dur\": 3, \"tid\": 2, \"pid\": \"CPU functions\", \"args\": {}}, "
	"{\"name\": \"gemm_kernel\", \"ph\": \"X\", \"ts\": 115, \"dur\": 4, \"tid\": 0, \"pid\": \"CUDA functions\", \"args\": {}}, "
	"{\"name\": \"aten::addmm\", \"ph\": \"s\", \"ts\": 110, \"tid\": 1, \"pid\": \"CPU functions\", \"id\": 1, "
	"\"cat\": \"cpu_to_cuda\", \"args\": {}}, "
	"{\"name\": \"aten::addmm\", \"ph\": \"f\", \"ts\": 115, \"tid\": 0, \"pid\": \"CUDA functions\", \"id\": 1, "
	"\"cat\": \"cpu_to_cuda\", \"args\": {}}]";

static void test_legacy(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(legacy_json, 0, &g);
	assert_int_equal(g.st.format, IMPORT_FMT_TORCH_LEGACY);
	assert_int_equal(g.n, 5); /* and the step's Forward: aten::addmm, its thread's */
	assert_int_equal(g.st.ignored, 2);
	assert_int_equal(chk_find(&g, "Forward", 0)->start, 110 * US);
	assert_int_equal(chk_find(&g, "Forward", 0)->dur, 7 * US);
	assert_int_equal(chk_find(&g, "ProfilerStep#0", 0)->type, TRACE_EV_PROFILE_STEP);
	const struct got_event *e = chk_find(&g, "aten::addmm", 0);
	assert_int_equal(e->type, TRACE_EV_OPERATOR);
	assert_int_equal(e->start, 110 * US);
	assert_int_equal(e->dur, 7 * US);
	const struct got_thread *t1 = chk_thread_of(&g, e);
	assert_int_equal(t1->t.tid, 1);
	assert_int_equal(chk_thread_of(&g, chk_find(&g, "aten::mm", 0))->t.tid, 2);
	e = chk_find(&g, "gemm_kernel", 0);
	assert_int_equal(e->type, TRACE_EV_KERNEL);
	assert_int_equal(chk_thread_of(&g, e)->t.kind, TRACE_TRACK_STREAM);
	assert_int_equal(chk_thread_of(&g, e)->t.device, 0);
	/* the string pid becomes one process, named by it */
	assert_int_equal(g.nprocs, 1);
	assert_string_equal(g.proc_names[0], "CPU functions");
	assert_int_equal(g.h.pid, g.procs[0].pid);
	assert_int_equal(g.h.pid, t1->t.pid);
	assert_int_equal(g.h.start_ns, 100 * US);
	assert_int_equal(g.end_ns, 150 * US);
	chk_free(&g);
}

/* ---- a rank of a distributed PyTorch job: collectives -------------------------- */

/* Rank 1 of 2 (distributedInfo as torch 2.x writes it). Times in us:
 *  main thread 7000:
 *    c10d::allreduce_ [100, 150) > record_param_comms [101, 141) (allreduce,
 *      seq 7, group "0" of 2, 4096 Float) > nccl:all_reduce [102, 132)
 *      (Input Dims [[1024, 4]] of float: 16384 bytes), which launches
 *      (External id 12) the NCCL kernel [120, 320) on stream 13;
 *    record_param_comms [500, 505) (broadcast, seq 8, 10 Long) and
 *      [520, 523) (allreduce, seq 9, 5 Float), run by gloo on thread 7005:
 *      gloo:broadcast [510, 530) (Input Dims [[10]] of long int: 80 bytes)
 *      and gloo:all_reduce [540, 550) (no shapes: the 20 bytes of its
 *      record_param_comms);
 *    record_param_comms [600, 630) (send from rank 1 to rank 0, seq 0, 8
 *      Float) > nccl:send [605, 615);
 *  stream 13: an all_gather kernel [400, 450) whose own args say it all
 *    (256 BFloat16, group "1", seq 3). */
static const char kineto_dist_json[] =
	"{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 1, \"world_size\": 2, \"pg_count\": 2,\n"
	"  \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\",\n"
	"  \"pg_size\": 2, \"ranks\": [0, 1]}], \"nccl_version\": \"2.18.1\"},\n"
	" \"traceEvents\": [\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c10d::allreduce_\", \"pid\": 7000, \"tid\": 7000,\n"
	" \"ts\": 100, \"dur\": 50, \"args\": {\"External id\": 10}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 7000, \"tid\": 7000,\n"
	" \"ts\": 101, \"dur\": 40, \"args\": {\"External id\": 11, \"Collective name\": \"allreduce\",\n"
	" \"dtype\": \"Float\", \"In msg nelems\": 4096, \"Out msg nelems\": 4096, \"In split size\": \"[]\",\n"
	" \"Out split size\": \"[]\", \"Global rank start\": 0, \"Global rank stride\": 1, \"Group size\": 2,\n"
	" \"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\",\n"
	" \"Process Group Ranks\": \"[0, 1]\", \"Rank\": 1, \"Seq\": 7}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"nccl:all_reduce\", \"pid\": 7000, \"tid\": 7000,\n"
	" \"ts\": 102, \"dur\": 30, \"args\": {\"External id\": 12, \"Input Dims\": [[1024, 4]],\n"
	" \"Input type\": [\"float\"]}},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 7000, \"tid\": 7000,\n"
	" \"ts\": 110, \"dur\": 5, \"args\": {\"External id\": 12, \"correlation\": 900}},\n"
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)\",\n"
	" \"pid\": 0, \"tid\": 13, \"ts\": 120, \"dur\": 200, \"args\": {\"External id\": 12, \"device\": 0,\n"
	" \"context\": 1, \"stream\": 13, \"correlation\": 900}},\n"
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllGather_RING_LL(ncclDevComm*)\",\n"
	" \"pid\": 0, \"tid\": 13, \"ts\": 400, \"dur\": 50, \"args\": {\"External id\": 77, \"device\": 0,\n"
	" \"stream\": 13, \"correlation\": 901, \"Collective name\": \"_allgather_base\", \"In msg nelems\": 256,\n"
	" \"Out msg nelems\": 512, \"dtype\": \"BFloat16\", \"Group size\": 2, \"Process Group Name\": \"1\",\n"
	" \"Seq\": 3}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 7000, \"tid\": 7000,\n"
	" \"ts\": 500, \"dur\": 5, \"args\": {\"External id\": 20, \"Collective name\": \"broadcast\",\n"
	" \"dtype\": \"Long\", \"In msg nelems\": 10, \"Group size\": 2, \"Process Group Name\": \"0\",\n"
	" \"Seq\": 8}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"gloo:broadcast\", \"pid\": 7000, \"tid\": 7005,\n"
	" \"ts\": 510, \"dur\": 20, \"args\": {\"Input Dims\": [[10]], \"Input type\": [\"long int\"]}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 7000, \"tid\": 7000,\n"
	" \"ts\": 520, \"dur\": 3, \"args\": {\"External id\": 21, \"Collective name\": \"allreduce\",\n"
	" \"dtype\": \"Float\", \"In msg nelems\": 5, \"Group size\": 2, \"Process Group Name\": \"0\",\n"
	" \"Seq\": 9}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"gloo:all_reduce\", \"pid\": 7000, \"tid\": 7005,\n"
	" \"ts\": 540, \"dur\": 10, \"args\": {}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 7000, \"tid\": 7000,\n"
	" \"ts\": 600, \"dur\": 30, \"args\": {\"External id\": 30, \"Collective name\": \"send\",\n"
	" \"dtype\": \"Float\", \"In msg nelems\": 8, \"Group size\": 2, \"Process Group Name\": \"0\",\n"
	" \"Rank\": 1, \"Src Rank\": 1, \"Dst Rank\": 0, \"Seq\": 0}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"nccl:send\", \"pid\": 7000, \"tid\": 7000,\n"
	" \"ts\": 605, \"dur\": 10, \"args\": {\"External id\": 31}},\n"
	"{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 7000, \"tid\": 7005,\n"
	" \"args\": {\"name\": \"gloo worker\"}}\n"
	"], \"baseTimeNanoseconds\": 1700000000000000000}\n";

static void test_kineto_dist(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(kineto_dist_json, 0, &g);
	assert_int_equal(g.st.format, IMPORT_FMT_KINETO);
	assert_int_equal(g.h.rank, 1);
	assert_int_equal(g.h.world_size, 2);
	assert_int_equal(g.h.local_rank, -1); /* torch does not say */
	assert_string_equal(g.backend, "nccl");
	assert_int_equal(g.nprocs, 1);
	assert_int_equal(g.procs[0].rank, 1);
	assert_int_equal(g.procs[0].local_rank, -1);
	assert_int_equal(g.procs[0].world_size, 2);

	/* what stays an operator, what is communication */
	assert_int_equal(chk_find(&g, "c10d::allreduce_", 0)->type, TRACE_EV_OPERATOR);
	assert_int_equal(chk_count(&g, "record_param_comms"), 4);
	assert_int_equal(chk_find(&g, "record_param_comms", 0)->type, TRACE_EV_OPERATOR);
	assert_int_equal(chk_count_type(&g, TRACE_EV_COMMUNICATION), 6);

	static const struct {
		const char *name;
		int stream;
		uint64_t bytes;
		const char *dtype, *pg;
		uint32_t group_size;
		int64_t seq;  /* -1: none */
		int32_t peer; /* -1: none */
	} want[] = {
		/* own bytes and dtype from Input Dims x Input type; the rest
		 * from the record_param_comms around it */
		{"nccl:all_reduce", 0, 16384, "float", "0", 2, 7, -1},
		/* through External id 12, the host call's record_param_comms:
		 * 4096 Float */
		{"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", 1, 16384, "Float", "0", 2, 7,
		 -1},
		/* its own args: 256 BFloat16 */
		{"ncclDevKernel_AllGather_RING_LL(ncclDevComm*)", 1, 512, "BFloat16", "1", 2, 3, -1},
		/* gloo's, on its worker thread: the calling thread's
		 * record_param_comms, first in first out */
		{"gloo:broadcast", 0, 80, "long int", "0", 2, 8, -1},
		{"gloo:all_reduce", 0, 20, "Float", "0", 2, 9, -1},
		/* a send: its peer is the end that is not its own rank */
		{"nccl:send", 0, 32, "Float", "0", 2, 0, 0},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct got_event *e = chk_find(&g, want[i].name, 0);
		assert_int_equal(e->type, TRACE_EV_COMMUNICATION);
		assert_int_equal(chk_thread_of(&g, e)->t.kind,
				 want[i].stream ? TRACE_TRACK_STREAM : TRACE_TRACK_HOST);
		assert_int_equal(e->has_ext, 1);
		assert_int_equal(e->ext.bytes, want[i].bytes);
		assert_string_equal(e->dtype, want[i].dtype);
		assert_string_equal(e->pg, want[i].pg);
		assert_int_equal(e->ext.group_size, want[i].group_size);
		assert_int_equal(e->ext.has_coll_seq, want[i].seq >= 0);
		assert_int_equal(e->ext.coll_seq, want[i].seq >= 0 ? (uint64_t)want[i].seq : 0);
		assert_int_equal(e->ext.has_peer, want[i].peer >= 0);
		assert_int_equal(e->ext.peer, want[i].peer >= 0 ? want[i].peer : 0);
	}
	/* the kernel keeps its launch's ids */
	const struct got_event *k = chk_find(&g, want[1].name, 0);
	assert_int_equal(k->ext.correlation, 900);
	assert_int_equal(k->ext.external_id, 12);
	assert_string_equal(chk_thread_of(&g, chk_find(&g, "gloo:broadcast", 0))->name, "gloo worker");
	chk_free(&g);
}

/* A local rank where the file gives one; a rank outside a world is still
 * what the file says (the job decides what counts). */
static void test_kineto_local_rank(void **state)
{
	(void)state;
	static const char json[] =
		"{\"distributedInfo\": {\"backend\": \"gloo\", \"rank\": 5, \"world_size\": 8,\n"
		" \"local_rank\": 1},\n"
		" \"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"gloo:barrier\", \"pid\": 9, \"tid\": 9,\n"
		" \"ts\": 1, \"dur\": 2, \"args\": {\"Input Dims\": [[]], \"Input type\": [\"float\"]}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"GLOO:\", \"pid\": 9, \"tid\": 9,\n"
		" \"ts\": 4, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"nccl:all_gather\", \"pid\": 9, \"tid\": 9,\n"
		" \"ts\": 6, \"dur\": 1, \"args\": {\"Input Dims\": [[[2, 3], [4]], [5]],\n"
		" \"Input type\": [\"GenericList\", \"c10::Half\"]}}\n"
		"]}\n";
	struct got g;
	chk_import_text(json, 0, &g);
	assert_int_equal(g.h.rank, 5);
	assert_int_equal(g.h.local_rank, 1);
	assert_int_equal(g.h.world_size, 8);
	assert_int_equal(g.procs[0].local_rank, 1);
	assert_int_equal(g.procs[0].rank, 5);
	/* a scalar tensor's one element; a name of no op is no collective */
	const struct got_event *e = chk_find(&g, "gloo:barrier", 0);
	assert_int_equal(e->type, TRACE_EV_COMMUNICATION);
	assert_int_equal(e->ext.bytes, 4);
	assert_int_equal(chk_find(&g, "GLOO:", 0)->type, TRACE_EV_OPERATOR);
	/* a list of tensors has no element size; the Half input's 5 do */
	e = chk_find(&g, "nccl:all_gather", 0);
	assert_int_equal(e->ext.bytes, 10);
	assert_string_equal(e->dtype, "c10::Half");
	chk_free(&g);
}

/* ---- Paddle's export_chrome_tracing -------------------------------------------- */

/* Paddle writes ts truncated to whole microseconds and each event's exact
 * start after its first event in args.start_time. The true start of the
 * first event here is B = ...062.400 us. */
#define PADDLE_B 1656581541457062400ull

static const char paddle_json[] =
	"\n  { \n    \"schemaVersion\": \"1.0.0\",\n    \"displayTimeUnit\": \"ms\",\n    \"span_indx\": \"0\",\n"
	"    \"deviceProperties\": [\n"
	"    {\n       \"id\": 0, \"name\": \"Tesla V100-SXM2-32GB\", \"totalGlobalMem\": 34089926656,\n"
	"      \"computeMajor\": 7, \"computeMinor\": 0,\n"
	"      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
	"      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
	"      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 98304,\n"
	"      \"smCount\": 80, \"sharedMemPerBlockOptin\": 98304\n    }],\n"
	"    \"traceEvents\": [\n"
	"  { \n    \"name\": \"ProfileStep#3[10.500 ms]\", \"pid\": 777, \"tid\": \"778(Python)\",\n"
	"    \"ts\": 1656581541457062, \"dur\": 10500.250,\n    \"ph\": \"X\", \"cat\": \"ProfileStep\", \n"
	"    \"cname\": \"thread_state_runnable\",\n"
	"    \"args\": {\n      \"start_time\": \"0.000 us\",\n      \"end_time\": \"10500.250 us\"\n    }\n  },\n"
	"  { \"name\": \"Dataloader[0.100 ms]\", \"pid\": 777, \"tid\": \"778(Python)\", \"ts\": 1656581541457162,"
	" \"dur\": 100.000, \"ph\": \"X\", \"cat\": \"Dataloader\", \"args\": {\"start_time\": \"100.250 us\"}},\n"
	"  { \"name\": \"Forward[3.000 ms]\", \"pid\": 777, \"tid\": \"778(Python)\", \"ts\": 1656581541458062,"
	" \"dur\": 3000.000, \"ph\": \"X\", \"cat\": \"Forward\", \"args\": {\"start_time\": \"1000.000 us\"}},\n"
	"  { \"name\": \"matmul[0.500 ms]\", \"pid\": 777, \"tid\": \"778(C++)\", \"ts\": 1656581541459063,"
	" \"dur\": 500.000, \"ph\": \"X\", \"cat\": \"Operator\", \"args\": {\"start_time\": \"2000.700 us\"}},\n"
	"  { \"name\": \"matmul compute[0.200 ms]\", \"pid\": 777, \"tid\": \"778(C++)\", \"ts\": 1656581541459162,"
	" \"dur\": 200.000, \"ph\": \"X\", \"cat\": \"OperatorInner\", \"args\": {\"start_time\": \"2100.000 us\"}},\n"
	"  { \"name\": \"cudaLaunchKernel[0.010 ms]\", \"pid\": 777, \"tid\": \"778(C++)\", \"ts\": 1656581541459163,"
	" \"dur\": 10.000, \"ph\": \"X\", \"cat\": \"CudaRuntime\", \"cname\": \"thread_state_running\","
	" \"args\": {\"correlation id\": 5, \"start_time\": \"2100.600 us\", \"end_time\": \"2110.600 us\"}},\n"
	"  { \"name\": \"launch\", \"id\": 5, \"pid\": 777, \"tid\": \"778(C++)\", \"ts\": 1656581541459168,"
	" \"ph\": \"s\", \"cat\": \"async\" },\n"
	"  { \"name\": \"volta_sgemm_128x64_nn[0.100 ms]\", \"pid\": 0, \"tid\": 7, \"ts\": 1656581541459562,"
	" \"dur\": 100.000, \"ph\": \"X\", \"cat\": \"Kernel\", \"cname\": \"rail_animation\","
	" \"args\": {\"start_time\": \"2500.100 us\", \"end_time\": \"2600.100 us\", \"device\": 0, \"context\": 1,"
	" \"stream\": 7, \"correlation id\": 5, \"registers per thread\": 32, \"shared memory\": 8192,"
	" \"blocks per SM\": 0.5, \"warps per SM\": 2.0, \"grid\": [40, 1, 1], \"block\": [128, 1, 1],"
	" \"theoretical achieved occupancy %\": 6.25}},\n"
	"  { \"name\": \"launch\", \"id\": 5, \"pid\": 0, \"tid\": 7, \"ts\": 1656581541459612, \"ph\": \"f\","
	" \"cat\": \"async\", \"bp\": \"e\" },\n"
	"  { \"name\": \"MEMCPY_HtoD[0.050 ms]\", \"pid\": 0, \"tid\": 7, \"ts\": 1656581541460062,"
	" \"dur\": 50.000, \"ph\": \"X\", \"cat\": \"Memcpy\", \"args\": {\"start_time\": \"3000.000 us\","
	" \"stream\": 7, \"correlation id\": 6, \"bytes\": 65536, \"memory bandwidth (GB/s)\": 1.3}},\n"
	"  { \"name\": \"MEMSET[0.001 ms]\", \"pid\": 0, \"tid\": 7, \"ts\": 1656581541460162,"
	" \"dur\": 1.000, \"ph\": \"X\", \"cat\": \"Memset\", \"args\": {\"start_time\": \"3100.000 us\","
	" \"device\": 0, \"context\": 1, \"stream\": 7, \"correlation id\": 7, \"bytes\": 256, \"value\": 0}},\n"
	"  { \"name\": \"ncclKernel_AllReduce[0.300 ms]\", \"pid\": 0, \"tid\": 8, \"ts\": 1656581541460262,"
	" \"dur\": 300.000, \"ph\": \"X\", \"cat\": \"Kernel\", \"args\": {\"start_time\": \"3200.000 us\","
	" \"device\": 0, \"context\": 1, \"stream\": 8, \"correlation id\": 8}},\n"
	"  { \"name\": \"c_allreduce_sum[0.400 ms]\", \"pid\": 777, \"tid\": \"778(C++)\", \"ts\": 1656581541460162,"
	" \"dur\": 400.000, \"ph\": \"X\", \"cat\": \"Communication\", \"args\": {\"start_time\": \"3100.000 us\"}},\n"
	"  { \"name\": \"Backward[4.000 ms]\", \"pid\": 777, \"tid\": \"778(Python)\", \"ts\": 1656581541461062,"
	" \"dur\": 4000.000, \"ph\": \"X\", \"cat\": \"Backward\", \"args\": {\"start_time\": \"4000.000 us\"}},\n"
	"  { \"name\": \"Optimization[1.000 ms]\", \"pid\": 777, \"tid\": \"778(Python)\", \"ts\": 1656581541465062,"
	" \"dur\": 1000.000, \"ph\": \"X\", \"cat\": \"Optimization\", \"args\": {\"start_time\": \"8000.000 us\"}},\n"
	"  { \"name\": \"my_block[0.020 ms]\", \"pid\": 777, \"tid\": \"778(Python)\", \"ts\": 1656581541466062,"
	" \"dur\": 20.000, \"ph\": \"X\", \"cat\": \"PythonUserDefined\", \"args\": {\"start_time\": \"9000.000 us\"}},\n"
	"  { \"name\": \"conv2d(python)[0.030 ms]\", \"pid\": 777, \"tid\": \"778(Python)\", \"ts\": 1656581541466162,"
	" \"dur\": 30.000, \"ph\": \"X\", \"cat\": \"PythonOp\", \"args\": {\"start_time\": \"9100.000 us\"}},\n"
	"  { \"name\": \"user_range[0.040 ms]\", \"pid\": 777, \"tid\": \"778(C++)\", \"ts\": 1656581541466262,"
	" \"dur\": 40.000, \"ph\": \"X\", \"cat\": \"UserDefined\", \"args\": {\"start_time\": \"9200.000 us\"}},\n"
	"  {\n    \"name\": \"process_name\", \"pid\": 777, \"tid\": \"778(Python)\",\n    \"ph\": \"M\", \n"
	"    \"args\": {\n      \"name\": \"Process 777 (CPU)\"\n    }\n  },\n"
	"  {\n    \"name\": \"thread_name\", \"pid\": 777, \"tid\": \"778(Python)\",\n    \"ph\": \"M\", \n"
	"    \"args\": {\n      \"name\": \"thread 778:MainThread(Python)\"\n    }\n  },\n"
	"  {\n    \"name\": \"process_name\", \"pid\": 0, \"tid\": 7,\n    \"ph\": \"M\", \n"
	"    \"args\": {\n      \"name\": \"Deivce 0 (GPU)\"\n    }\n  },\n"
	"  {\n    \"name\": \"thread_name\", \"pid\": 0, \"tid\": 7,\n    \"ph\": \"M\", \n"
	"    \"args\": {\n      \"name\": \"stream 7\"\n    }\n  },\n"
	"  {}\n  ],\n  \n  \"ExtraInfo\": {\n     \"778\": \"MainThread\"\n   \n  }\n  }\n  ";

static void test_paddle(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(paddle_json, 0, &g);
	assert_int_equal(g.st.format, IMPORT_FMT_PADDLE);
	assert_int_equal(g.n, 16);
	assert_int_equal(g.st.ignored, 3); /* two "launch" flow ends and the closing {} */

	static const struct {
		const char *name;
		uint8_t type;
		uint64_t rel, dur;
		int stream;
	} want[] = {
		{"ProfileStep#3", TRACE_EV_PROFILE_STEP, 0, 10500250, 0},
		{"Dataloader", TRACE_EV_DATALOADER, 100250, 100000, 0},
		{"Forward", TRACE_EV_FORWARD, 1000000, 3000000, 0},
		{"matmul", TRACE_EV_OPERATOR, 2000700, 500000, 0},
		{"matmul compute", TRACE_EV_OPERATOR_INNER, 2100000, 200000, 0},
		{"cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME, 2100600, 10000, 0},
		{"volta_sgemm_128x64_nn", TRACE_EV_KERNEL, 2500100, 100000, 1},
		{"MEMCPY_HtoD", TRACE_EV_MEMCPY, 3000000, 50000, 1},
		{"MEMSET", TRACE_EV_MEMSET, 3100000, 1000, 1},
		{"ncclKernel_AllReduce", TRACE_EV_COMMUNICATION, 3200000, 300000, 1},
		{"c_allreduce_sum", TRACE_EV_COMMUNICATION, 3100000, 400000, 0}, /* on its host thread */
		{"Backward", TRACE_EV_BACKWARD, 4000000, 4000000, 0},
		{"Optimization", TRACE_EV_OPTIMIZATION, 8000000, 1000000, 0},
		{"my_block", TRACE_EV_USER_DEFINED, 9000000, 20000, 0},
		{"conv2d(python)", TRACE_EV_PYTHON_OP, 9100000, 30000, 0},
		{"user_range", TRACE_EV_USER_DEFINED, 9200000, 40000, 0},
	};
	const struct got_thread *host = NULL;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct got_event *e = chk_find(&g, want[i].name, 0);
		assert_int_equal(e->type, want[i].type);
		/* exact to the nanosecond, from args.start_time on Paddle's base */
		assert_int_equal(e->start, PADDLE_B + want[i].rel);
		assert_int_equal(e->dur, want[i].dur);
		const struct got_thread *t = chk_thread_of(&g, e);
		assert_int_equal(t->t.kind, want[i].stream ? TRACE_TRACK_STREAM : TRACE_TRACK_HOST);
		if (!want[i].stream) {
			/* "778(Python)" and "778(C++)": one thread */
			if (!host)
				host = t;
			assert_ptr_equal(t, host);
			assert_int_equal(t->t.pid, 777);
			assert_int_equal(t->t.tid, 778);
		}
	}
	assert_int_equal(g.nthreads, 3); /* thread 778, streams 7 and 8 */
	assert_non_null(strstr(host->name, "thread 778:MainThread"));
	const struct got_event *k = chk_find(&g, "volta_sgemm_128x64_nn", 0);
	assert_int_equal(k->ext.correlation, 5);
	assert_int_equal(k->ext.grid[0], 40);
	assert_int_equal(k->ext.block[0], 128);
	assert_int_equal(k->ext.registers, 32);
	assert_int_equal(k->ext.static_smem, 8192);
	assert_int_equal(chk_thread_of(&g, k)->t.stream, 7);
	assert_string_equal(chk_thread_of(&g, k)->name, "stream 7");
	assert_int_equal(chk_find(&g, "cudaLaunchKernel", 0)->ext.correlation, 5);
	const struct got_event *m = chk_find(&g, "MEMCPY_HtoD", 0);
	assert_int_equal(m->ext.copy_kind, TRACE_COPY_HTOD);
	assert_int_equal(m->ext.bytes, 65536);
	assert_int_equal(m->ext.correlation, 6);
	assert_int_equal(chk_find(&g, "MEMSET", 0)->ext.bytes, 256);
	assert_int_equal(chk_thread_of(&g, chk_find(&g, "ncclKernel_AllReduce", 0))->t.stream, 8);

	/* Paddle's Communication range says no more than its name and times;
	 * its trace names no rank: every rank field says none (-1) */
	const struct got_event *comm = chk_find(&g, "c_allreduce_sum", 0);
	assert_int_equal(comm->has_ext, 0);
	assert_int_equal(g.h.rank, -1);
	assert_int_equal(g.h.local_rank, -1);
	assert_int_equal(g.h.world_size, -1);
	assert_int_equal(g.nprocs, 1);
	assert_int_equal(g.procs[0].rank, -1);
	assert_int_equal(g.procs[0].local_rank, -1);
	assert_int_equal(g.procs[0].world_size, -1);

	assert_int_equal(g.h.pid, 777);
	assert_string_equal(g.cmdline, "Process 777 (CPU)");
	assert_int_equal(g.h.start_ns, PADDLE_B);
	assert_int_equal(g.end_ns, PADDLE_B + 10500250);
	assert_string_equal(g.clock, "CLOCK_REALTIME"); /* Unix time */
	assert_int_equal(g.h.wall_offset_ns, 0);
	assert_int_equal(g.ndevs, 1);
	assert_string_equal(g.devs[0].name, "Tesla V100-SXM2-32GB");
	assert_int_equal(g.devs[0].d.sm_count, 80);
	assert_int_equal(g.devs[0].d.cc_major, 7);
	chk_free(&g);
}

/* ---- gprof-dl's own chrome export -------------------------------------------- */

static const char ours_json[] =
	"{\"traceEvents\":[\n"
	"{\"name\":\"outer\",\"cat\":\"user_annotation\",\"ph\":\"X\",\"ts\":0.000,\"dur\":1000.000,\"pid\":100,"
	"\"tid\":100,\"args\":{\"type\":\"Forward\",\"domain\":\"mylib\",\"category\":\"io\"}},\n"
	"{\"name\":\"inner\",\"cat\":\"user_annotation\",\"ph\":\"X\",\"ts\":10.001,\"dur\":5.000,\"pid\":100,"
	"\"tid\":100,\"args\":{\"type\":\"UserDefined\",\"category\":7,\"open_at_exit\":true}},\n"
	"{\"name\":\"allreduce\",\"cat\":\"cpu_op\",\"ph\":\"X\",\"ts\":30.000,\"dur\":2.000,\"pid\":100,"
	"\"tid\":100,\"args\":{\"type\":\"Communication\"}},\n"
	"{\"name\":\"tick\",\"cat\":\"user_annotation\",\"ph\":\"i\",\"s\":\"t\",\"ts\":20.000,\"pid\":100,"
	"\"tid\":101,\"args\":{\"type\":\"UserDefined\",\"unbalanced_pop\":true}},\n"
	"{\"name\":\"Memcpy HtoD (Pinned -> Device)\",\"cat\":\"gpu_memcpy\",\"ph\":\"X\",\"ts\":40.000,"
	"\"dur\":1.000,\"pid\":0,\"tid\":7,\"args\":{\"type\":\"Memcpy\",\"device\":0,\"context\":1,\"stream\":7,"
	"\"correlation\":9,\"bytes\":64,\"memory bandwidth (GB/s)\":0.064,\"async\":true,"
	"\"recorded_name\":\"[CUDA memcpy HtoD]\"}},\n"
	"{\"ph\":\"f\",\"id\":9,\"pid\":0,\"tid\":7,\"ts\":40.000,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},\n"
	"{\"name\":\"[memory]\",\"cat\":\"cpu_instant_event\",\"ph\":\"i\",\"s\":\"t\",\"ts\":45.000,\"pid\":100,"
	"\"tid\":100,\"args\":{\"type\":\"Memory\",\"recorded_name\":\"host alloc\",\"Bytes\":1024,"
	"\"Addr\":21760,\"Device Type\":0,\"Device Id\":-1,\"memory kind\":\"Pageable\"}},\n"
	"{\"name\":\"[memory]\",\"cat\":\"cpu_instant_event\",\"ph\":\"i\",\"s\":\"t\",\"ts\":46.000,\"pid\":0,"
	"\"tid\":7,\"args\":{\"type\":\"Memory\",\"recorded_name\":\"stream alloc\",\"Bytes\":4096,"
	"\"Addr\":65536,\"Device Type\":1,\"Device Id\":0,\"device\":0,\"stream\":7}},\n"
	"{\"name\":\"CPU(Process)\",\"ph\":\"C\",\"ts\":50.000,\"pid\":100,\"args\":{\"%\":12.5}},\n"
	"{\"name\":\"CPU(System)\",\"ph\":\"C\",\"ts\":50.000,\"pid\":100,\"args\":{\"%\":40}},\n"
	"{\"name\":\"RSS\",\"ph\":\"C\",\"ts\":60.000,\"pid\":100,\"args\":{\"bytes\":1048576}},\n"
	"{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":100,\"tid\":0,\"args\":{\"name\":\"./train\"}},\n"
	"{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":100,\"tid\":101,\"args\":{\"name\":\"worker\"}},\n"
	"{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":0,\"tid\":7,\"args\":{\"name\":\"stream 7\"}}\n"
	"],\n\"displayTimeUnit\":\"ms\",\n"
	"\"otherData\":{\"format_version\":\"1.1\",\"recorded_by\":\"gprof-dl 0.1.0\",\"exported_by\":\"gprof-dl 0.1.0\","
	"\"host\":\"box\",\"pid\":100,\"rank\":2,\"command_line\":\"./train --x\",\"clock_domain\":\"CLOCK_MONOTONIC\","
	"\"wall_offset_ns\":1699999000000000000,\"start_ns\":5000000000,\"end_ns\":5002000000,"
	"\"start_time\":\"2023-11-14T22:13:25.000000000Z\",\"duration_ns\":2000000,\"ncpus\":8,"
	"\"sources\":[\"nvtx\",\"cupti\"],\"events\":6,\"counters\":3,\"drops\":4,"
	"\"drops_by_thread\":[{\"pid\":100,\"tid\":101,\"dropped\":4}],\"damage\":null}}\n";

static void test_ours(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(ours_json, 0, &g);
	assert_int_equal(g.st.format, IMPORT_FMT_GPROF_DL);
	assert_int_equal(g.n, 7);
	assert_int_equal(g.nctr, 3);

	const struct got_event *e = chk_find(&g, "outer", 0);
	assert_int_equal(e->type, TRACE_EV_FORWARD);
	assert_int_equal(e->start, 5000000000ull); /* ts 0 is otherData.start_ns */
	assert_int_equal(e->dur, 1000 * US);
	assert_string_equal(e->domain, "mylib");
	assert_true(e->category > 0);
	assert_string_equal(g.category_names[e->category], "io");
	e = chk_find(&g, "inner", 0);
	assert_int_equal(e->type, TRACE_EV_USER_DEFINED);
	assert_int_equal(e->start, 5000010001ull);
	assert_int_equal(e->category, 7);
	assert_string_equal(e->domain, "");
	assert_int_equal(e->flags, TRACE_EVF_OPEN_AT_EXIT);
	e = chk_find(&g, "allreduce", 0);
	assert_int_equal(e->type, TRACE_EV_COMMUNICATION);
	assert_int_equal(chk_thread_of(&g, e)->t.kind, TRACE_TRACK_HOST); /* cpu_op: a host thread */
	e = chk_find(&g, "tick", 0);
	assert_int_equal(e->flags, TRACE_EVF_MARK | TRACE_EVF_UNBALANCED_POP);
	assert_string_equal(chk_thread_of(&g, e)->name, "worker");
	e = chk_find(&g, "[CUDA memcpy HtoD]", 0);
	assert_int_equal(e->type, TRACE_EV_MEMCPY);
	assert_int_equal(e->ext.copy_kind, TRACE_COPY_HTOD);
	assert_int_equal(e->ext.src_kind, TRACE_MEM_PINNED);
	assert_int_equal(e->ext.dst_kind, TRACE_MEM_DEVICE);
	assert_int_equal(e->ext.is_async, 1);
	assert_int_equal(e->ext.bytes, 64);
	assert_int_equal(e->ext.correlation, 9);
	assert_string_equal(chk_thread_of(&g, e)->name, ""); /* "stream 7" was the default */
	e = chk_find(&g, "host alloc", 0);
	assert_int_equal(e->type, TRACE_EV_MEMORY);
	assert_int_equal(e->ext.device, -1);
	assert_int_equal(e->ext.dst_kind, TRACE_MEM_PAGEABLE);
	assert_int_equal(e->ext.address, 21760);
	assert_int_equal(chk_thread_of(&g, e)->t.kind, TRACE_TRACK_HOST);
	e = chk_find(&g, "stream alloc", 0); /* a memory event of a stream stays there */
	assert_int_equal(chk_thread_of(&g, e)->t.kind, TRACE_TRACK_STREAM);
	assert_int_equal(chk_thread_of(&g, e)->t.stream, 7);
	assert_ptr_equal(chk_thread_of(&g, e), chk_thread_of(&g, chk_find(&g, "[CUDA memcpy HtoD]", 0)));
	assert_int_equal(e->ext.device, 0);

	assert_int_equal(g.ctr[0].id, TRACE_CTR_CPU_PROCESS);
	assert_int_equal(g.ctr[0].pid, 100);
	assert_int_equal(g.ctr[0].ts_ns, 5000050000ull);
	assert_true(g.ctr[0].value == 12.5);
	assert_int_equal(g.ctr[1].id, TRACE_CTR_CPU_SYSTEM);
	assert_int_equal(g.ctr[1].pid, 0); /* system-wide */
	assert_true(g.ctr[1].value == 40.0);
	assert_int_equal(g.ctr[2].id, TRACE_CTR_RSS_BYTES);
	assert_true(g.ctr[2].value == 1048576.0);

	assert_string_equal(g.host, "box");
	assert_int_equal(g.h.pid, 100);
	assert_int_equal(g.h.rank, 2);
	assert_string_equal(g.cmdline, "./train --x");
	assert_string_equal(g.clock, "CLOCK_MONOTONIC");
	assert_int_equal(g.h.wall_offset_ns, 1699999000000000000ll);
	assert_int_equal(g.h.start_ns, 5000000000ull);
	assert_int_equal(g.end_ns, 5002000000ull);
	assert_int_equal(g.h.ncpus, 8);
	assert_int_equal(g.h.sources, TRACE_SRC_NVTX | TRACE_SRC_CUPTI);
	assert_string_equal(g.version, "gprof-dl 0.1.0");
	assert_int_equal(g.drops, 4);
	assert_int_equal(g.nprocs, 1);
	assert_string_equal(g.proc_names[0], "./train");
	chk_free(&g);
}

/* otherData's lists as a hand-made (or damaged) file may give them: listed
 * twice, with nulls, values of the wrong type, entries that are not
 * objects, a stream only the list names, a host thread that is not listed. */
static const char ours_lists_json[] =
	"{\"traceEvents\":[\n"
	"{\"name\":\"a\",\"cat\":\"user_annotation\",\"ph\":\"X\",\"ts\":1.000,\"dur\":2.000,\"pid\":10,"
	"\"tid\":11,\"args\":{\"type\":\"UserDefined\"}},\n"
	"{\"name\":\"b\",\"cat\":\"user_annotation\",\"ph\":\"X\",\"ts\":3.000,\"dur\":1.000,\"pid\":10,"
	"\"tid\":99,\"args\":{\"type\":\"UserDefined\"}},\n"
	"{\"name\":\"[memory]\",\"cat\":\"cpu_instant_event\",\"ph\":\"i\",\"s\":\"t\",\"ts\":4.000,"
	"\"pid\":2,\"tid\":5,\"args\":{\"type\":\"Memory\",\"Bytes\":-64,\"Addr\":1,\"Device Type\":1,"
	"\"Device Id\":2}},\n"
	"{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":12,\"tid\":0,\"args\":{\"name\":\"child\"}}\n"
	"],\n\"otherData\":{\"exported_by\":\"gprof-dl 0.1.0\",\"pid\":10,\"start_ns\":1000,"
	"\"drops_by_thread\":[{\"pid\":2,\"tid\":5,\"kind\":\"stream\",\"device\":2,\"stream\":5,\"dropped\":3}],"
	"\"processes\":[7,{\"pid\":12,\"ppid\":10,\"start_ns\":1500,\"end_ns\":null,\"exit_status\":null},"
	"{\"pid\":10,\"ppid\":\"1\",\"start_ns\":1000,\"end_ns\":9000,\"exit_status\":130,\"x\":[{}]},"
	"{\"pid\":12,\"ppid\":99,\"exit_status\":-5}],"
	"\"threads\":[[],{\"pid\":10,\"tid\":11,\"start_ns\":1000,\"end_ns\":8000},"
	"{\"pid\":2,\"tid\":5,\"kind\":\"stream\",\"owner_pid\":10,\"device\":2,\"context\":4,"
	"\"stream\":5,\"start_ns\":1100,\"end_ns\":null},"
	"{\"pid\":10,\"tid\":11,\"start_ns\":1,\"end_ns\":2},"
	"{\"pid\":12,\"tid\":13,\"kind\":7,\"start_ns\":\"x\"}]}}\n";

static void test_ours_lists(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(ours_lists_json, 0, &g);
	assert_int_equal(g.st.format, IMPORT_FMT_GPROF_DL);
	/* processes: the list's, the first of a pid listed twice */
	assert_int_equal(g.nprocs, 2);
	assert_int_equal(g.procs[0].pid, 12);
	assert_int_equal(g.procs[0].ppid, 10);
	assert_int_equal(g.procs[0].start_ns, 1500);
	assert_int_equal(g.procs[0].end_ns, 0);
	assert_int_equal(g.procs[0].exit_status, -1);
	assert_string_equal(g.proc_names[0], "child");
	assert_int_equal(g.procs[1].pid, 10);
	assert_int_equal(g.procs[1].ppid, 1);
	assert_int_equal(g.procs[1].end_ns, 9000);
	assert_int_equal(g.procs[1].exit_status, 130);
	/* threads: the list's in order (once each), then the unlisted (10, 99) */
	assert_int_equal(g.nthreads, 4);
	assert_int_equal(g.threads[0].t.kind, TRACE_TRACK_HOST);
	assert_int_equal(g.threads[0].t.tid, 11);
	assert_int_equal(g.threads[0].t.start_ns, 1000);
	assert_int_equal(g.threads[0].t.end_ns, 8000);
	assert_int_equal(g.threads[1].t.kind, TRACE_TRACK_STREAM);
	assert_int_equal(g.threads[1].t.pid, 10);
	assert_int_equal(g.threads[1].t.device, 2);
	assert_int_equal(g.threads[1].t.context, 4);
	assert_int_equal(g.threads[1].t.stream, 5);
	assert_int_equal(g.threads[1].t.start_ns, 1100);
	assert_int_equal(g.threads[1].t.end_ns, 0);
	assert_int_equal(g.threads[2].t.kind, TRACE_TRACK_HOST); /* "kind": 7 is no stream */
	assert_int_equal(g.threads[2].t.pid, 12);
	assert_int_equal(g.threads[2].t.tid, 13);
	assert_int_equal(g.threads[2].t.start_ns, 0);
	assert_int_equal(g.threads[3].t.tid, 99);
	assert_int_equal(g.threads[3].t.start_ns, 1000 + 3000); /* its events' span */
	assert_int_equal(g.threads[3].t.end_ns, 1000 + 4000);
	assert_int_equal(chk_find(&g, "a", 0)->thread, 0);
	assert_int_equal(chk_find(&g, "b", 0)->thread, 3);
	const struct got_event *e = chk_find(&g, "[memory]", 0);
	assert_int_equal(e->thread, 1); /* (2, 5) is a stream of the list */
	assert_int_equal(e->ext.device, 2);
	assert_int_equal((int64_t)e->ext.bytes, -64);
	assert_int_equal(g.thread_drops[1], 3);
	assert_int_equal(g.drops, 3);
	assert_int_equal(g.st.tracks, 4);
	/* no header strings at all: the clock is unknown (and the writer is
	 * never given only empty strings, which UBSan caught it mishandling) */
	assert_string_equal(g.clock, "unknown");
	assert_string_equal(g.host, "");
	chk_free(&g);

	/* the same lists in a file that is not gprof-dl's: not read */
	const char *at = strstr(ours_lists_json, "\"exported_by\":\"gprof-dl");
	size_t pre = (size_t)(at - ours_lists_json);
	char *other = strdup(ours_lists_json);
	other[pre + 1] = 'X'; /* "exported_by" becomes an unknown key */
	chk_import_text(other, 0, &g);
	assert_int_not_equal(g.st.format, IMPORT_FMT_GPROF_DL);
	assert_int_equal(g.nprocs, 2); /* of the host tracks: 10, and 2 of the [memory] */
	assert_int_equal(g.procs[0].pid, 10);
	assert_int_equal(g.procs[0].exit_status, -1);
	assert_int_equal(g.procs[1].pid, 2);
	assert_int_equal(g.nthreads, 4); /* (10, 11), (10, 99), host (2, 5), the drops' stream */
	assert_int_equal(chk_thread_of(&g, chk_find(&g, "[memory]", 0))->t.kind, TRACE_TRACK_HOST);
	chk_free(&g);
	free(other);
}

/* ---- what is kept, what is ignored ------------------------------------------- */

static void test_unknown_and_ignored(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(
		"{\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"some_future_category\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1,"
		" \"args\": {\"unknown\": {\"deep\": [1, [2, {\"x\": null}]]}, \"flag\": true}, \"extra\": [1, 2]},\n"
		"{\"ph\": \"X\", \"name\": \"no category\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"no time\", \"pid\": 1, \"tid\": 1, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"bad time\", \"pid\": 1, \"tid\": 1, \"ts\": \"soon\", \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"negative\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"dur\": -4},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"string time\", \"pid\": 1, \"tid\": 1, \"ts\": \"4.5\", \"dur\": \"1\"},\n"
		"{\"ph\": \"B\", \"name\": \"begin\", \"pid\": 1, \"tid\": 1, \"ts\": 5},\n"
		"{\"ph\": \"b\", \"name\": \"async\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"id\": 3},\n"
		"{\"ph\": \"i\", \"name\": \"process mark\", \"s\": \"p\", \"pid\": 1, \"tid\": 1, \"ts\": 6},\n"
		"{\"ph\": \"C\", \"name\": \"queue depth\", \"pid\": 1, \"ts\": 6, \"args\": {\"depth\": 3}},\n"
		"{\"no\": \"ph\"}, 42, \"string\", [1, 2], null,\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"\", \"pid\": 1, \"tid\": 1, \"ts\": 7, \"dur\": 1}\n"
		"], \"some\": {\"other\": [\"member\"]}, \"deviceProperties\": [42, {\"id\": 1, \"unknown\": {\"x\": 1}}]}\n",
		0, &g);
	assert_int_equal(g.n, 6);
	assert_int_equal(chk_find(&g, "a", 0)->type, TRACE_EV_USER_DEFINED);
	assert_int_equal(chk_find(&g, "no category", 0)->type, TRACE_EV_USER_DEFINED);
	assert_int_equal(chk_find(&g, "negative", 0)->dur, 0);
	assert_int_equal(chk_find(&g, "string time", 0)->start, 4500);
	assert_int_equal(chk_find(&g, "string time", 0)->dur, 1000);
	assert_int_equal(chk_find(&g, "process mark", 0)->flags, TRACE_EVF_MARK);
	assert_int_equal(chk_find(&g, "", 0)->start, 7000);
	/* an unknown counter is ignored; every other event not imported is
	 * dropped and said so: the bad time, no time, a B never ended, b and
	 * an object without ph; the negative duration repaired */
	assert_int_equal(g.st.ignored, 1);
	assert_int_equal(g.st.fixed[TRACE_DROP_TIME_NAN], 1);
	assert_int_equal(g.st.fixed[TRACE_DROP_NO_TIME], 1);
	assert_int_equal(g.st.fixed[TRACE_DROP_BEGIN_WITHOUT_END], 1);
	assert_int_equal(g.st.fixed[TRACE_DROP_UNKNOWN_PHASE], 2);
	assert_int_equal(g.st.fixed[TRACE_DROP_NEGATIVE_DURATION], 1);
	assert_int_equal(g.by_reason[TRACE_DROP_TIME_NAN], 1);
	assert_int_equal(g.by_reason[TRACE_DROP_NO_TIME], 1);
	assert_int_equal(g.by_reason[TRACE_DROP_BEGIN_WITHOUT_END], 1);
	assert_int_equal(g.by_reason[TRACE_DROP_UNKNOWN_PHASE], 2);
	assert_int_equal(g.by_reason[TRACE_DROP_NEGATIVE_DURATION], 1);
	assert_int_equal(g.drops, 5); /* only the dropped ones are lost */
	assert_int_equal(g.nctr, 0);
	assert_int_equal(g.ndevs, 1);
	assert_int_equal(g.devs[0].d.id, 1);
	chk_free(&g);
}

/* Every event dropped or repaired is counted by reason, per thread, in the
 * trace's DROP records (D11). */
static void test_fixes_counted(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(
		"{\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ok\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 5},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"neg1\", \"pid\": 1, \"tid\": 1, \"ts\": 11, \"dur\": -1},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"neg2\", \"pid\": 1, \"tid\": 2, \"ts\": 12, \"dur\": -0.5},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"neg3\", \"pid\": 1, \"tid\": 2, \"ts\": 13, \"dur\": \"-7\"},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"far\", \"pid\": 1, \"tid\": 1, \"ts\": 1e300, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"far2\", \"pid\": 1, \"tid\": 2, \"ts\": 99999999999999999999, \"dur\": 1},\n"
		"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"far3\", \"pid\": 1, \"tid\": 3, \"ts\": \"-1e30\"},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"nan\", \"pid\": 1, \"tid\": 1, \"ts\": \"later\", \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"dnan\", \"pid\": 1, \"tid\": 1, \"ts\": 14, \"dur\": \"long\"},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"dfar\", \"pid\": 1, \"tid\": 1, \"ts\": 15, \"dur\": 1e300},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"dfar2\", \"pid\": 1, \"tid\": 1, \"ts\": 16, \"dur\": 9223372036854775.807},\n"
		"{\"name\": \"RSS\", \"ph\": \"C\", \"ts\": 1e400, \"pid\": 1, \"args\": {\"bytes\": 1}},\n"
		"{\"name\": \"RSS\", \"ph\": \"C\", \"ts\": 17, \"pid\": 1, \"args\": {\"bytes\": 2}}\n"
		"]}\n",
		0, &g);
	/* kept: ok, the three negative, the two of bad durations and two far ones */
	assert_int_equal(g.n, 7);
	assert_int_equal(g.nctr, 1);
	assert_int_equal(g.st.fixed[TRACE_DROP_NEGATIVE_DURATION], 3);
	assert_int_equal(g.st.fixed[TRACE_DROP_TIME_RANGE], 4); /* far, far2, far3, the counter */
	assert_int_equal(g.st.fixed[TRACE_DROP_TIME_NAN], 1);
	assert_int_equal(g.st.fixed[TRACE_DROP_DURATION_NAN], 1);
	assert_int_equal(g.st.fixed[TRACE_DROP_DURATION_RANGE], 2);
	assert_int_equal(g.st.fixed[TRACE_DROP_RING_FULL], 0);
	assert_int_equal(g.st.ignored, 0);
	for (unsigned r = 0; r < TRACE_DROP_REASON_COUNT; r++)
		assert_int_equal(g.by_reason[r], g.st.fixed[r]);
	assert_int_equal(g.by_reason[TRACE_DROP_REASON_COUNT], 0);
	assert_int_equal(g.drops, 5); /* the lost ones: 4 out of range, 1 not a number */
	assert_int_equal(chk_find(&g, "neg2", 0)->dur, 0);
	assert_int_equal(chk_find(&g, "neg3", 0)->dur, 0);
	assert_int_equal(chk_find(&g, "dnan", 0)->dur, 0);
	/* the longest a record holds */
	assert_int_equal(chk_find(&g, "dfar", 0)->dur, TRACE_EVENT_DUR_MAX);
	assert_int_equal(chk_find(&g, "dfar2", 0)->dur, TRACE_EVENT_DUR_MAX);
	/* per thread: (1, 1) lost far, nan; (1, 2) far2; (1, 3) far3 (a thread
	 * of its own, with no event); the counter's on the first thread */
	uint32_t t1 = chk_find(&g, "ok", 0)->thread, t2 = chk_find(&g, "neg2", 0)->thread;
	assert_int_equal(g.thread_drops[t1], 2 + (t1 == 0));
	assert_int_equal(g.thread_drops[t2], 1 + (t2 == 0));
	assert_int_equal(g.nthreads, 3);
	chk_free(&g);

	/* gprof-dl's own export: ts are relative to start_ns, and one before
	 * it is moved to the start and counted */
	chk_import_text(
		"{\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"early\", \"pid\": 100, \"tid\": 100,"
		" \"ts\": -6000000, \"dur\": 1, \"args\": {\"type\": \"Operator\"}},\n"
		"{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"ok\", \"pid\": 100, \"tid\": 100,"
		" \"ts\": 1, \"dur\": 1, \"args\": {\"type\": \"Operator\"}}\n"
		"], \"otherData\": {\"format_version\": \"1.1\", \"recorded_by\": \"gprof-dl 0.1.0\","
		" \"exported_by\": \"gprof-dl 0.1.0\", \"pid\": 100, \"start_ns\": 5000000000}}\n",
		0, &g);
	assert_int_equal(g.st.format, IMPORT_FMT_GPROF_DL);
	assert_int_equal(g.n, 2);
	assert_int_equal(chk_find(&g, "early", 0)->start, 0);
	assert_int_equal(chk_find(&g, "ok", 0)->start, 5000001000ull);
	assert_int_equal(g.st.fixed[TRACE_DROP_BEFORE_START], 1);
	assert_int_equal(g.by_reason[TRACE_DROP_BEFORE_START], 1);
	assert_int_equal(g.drops, 0);
	chk_free(&g);
}

/* ---- the phases of a PyTorch profiler trace ---------------------------------- */

#define PH_X(cat, name, tid, ts, dur)                                                  \
	"{\"ph\": \"X\", \"cat\": \"" cat "\", \"name\": \"" name "\", \"pid\": 7, \"tid\": " #tid \
	", \"ts\": " #ts ", \"dur\": " #dur "},\n"

/* Two steps of a training loop as torch.profiler records it: zero_grad
 * first in step 1 and last in step 2, a DataLoader fetch, backward functions
 * on the step's thread and on an autograd thread (tid 2), an optimizer step
 * with one nested in it, and the profiler's own span. */
static const char phases_json[] =
	"{\"traceEvents\": [\n"
	PH_X("user_annotation", "ProfilerStep#1", 1, 100, 100)
	PH_X("cpu_op", "aten::zeros", 1, 100.5, 0.3)
	PH_X("user_annotation", "Optimizer.zero_grad#SGD.zero_grad", 1, 101, 3)
	PH_X("cpu_op", "aten::zero_", 1, 102, 1)
	PH_X("cpu_op", "aten::linear", 1, 110, 20)
	PH_X("cpu_op", "aten::addmm", 1, 111, 18)
	PH_X("cpu_op", "aten::mse_loss", 1, 131, 4)
	PH_X("cpu_op", "autograd::engine::evaluate_function: MseLossBackward0", 1, 140, 10)
	PH_X("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 2, 145, 15)
	PH_X("cpu_op", "aten::mm", 2, 146, 4)
	PH_X("user_annotation", "Optimizer.step#SGD.step", 1, 170, 20)
	PH_X("user_annotation", "Optimizer.step#SGD.step", 1, 172, 8)
	PH_X("cpu_op", "aten::add_", 1, 181, 2)
	PH_X("user_annotation", "ProfilerStep#2", 1, 200, 100)
	PH_X("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1, 201, 4)
	PH_X("cpu_op", "aten::stack", 1, 202, 2)
	PH_X("cpu_op", "aten::linear", 1, 210, 10)
	PH_X("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 1, 230, 10)
	PH_X("user_annotation", "Optimizer.step#SGD.step", 1, 250, 10)
	PH_X("user_annotation", "Optimizer.zero_grad#SGD.zero_grad", 1, 262, 3)
	"{\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 90, \"dur\": 220, \"pid\": \"Spans\","
	" \"tid\": \"PyTorch Profiler\", \"name\": \"PyTorch Profiler (0)\", \"args\": {\"Op count\": 0}}\n"
	"]}\n";

static void check_phase(const struct got *g, const char *name, int nth, uint8_t type,
			uint64_t start_us, uint64_t end_us)
{
	const struct got_event *e = chk_find(g, name, nth);
	assert_int_equal(e->type, type);
	assert_int_equal(e->start, start_us * US);
	assert_int_equal(e->start + e->dur, end_us * US);
	assert_int_equal(chk_thread_of(g, e)->t.tid, 1); /* the step's thread */
}

/* Optimizer.step/zero_grad are Operators, the span is the window, and the
 * Model view's phases are recovered as gprof-dl's Python package records
 * them (issue 14). */
static void test_torch_phases(void **state)
{
	(void)state;
	struct got g;
	chk_import_text(phases_json, 0, &g);
	/* one vocabulary: torch.optim's record_functions are operators */
	assert_int_equal(chk_count(&g, "Optimizer.step#SGD.step"), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(chk_find(&g, "Optimizer.step#SGD.step", i)->type, TRACE_EV_OPERATOR);
	assert_int_equal(chk_find(&g, "Optimizer.zero_grad#SGD.zero_grad", 0)->type,
			 TRACE_EV_OPERATOR);
	assert_int_equal(chk_find(&g, "Optimizer.zero_grad#SGD.zero_grad", 1)->type,
			 TRACE_EV_OPERATOR);
	/* the profiler's span: the recorded interval, no event, no thread */
	assert_int_equal(chk_count(&g, "PyTorch Profiler (0)"), 0);
	assert_int_equal(g.h.start_ns, 90 * US);
	assert_int_equal(g.end_ns, 310 * US);
	assert_int_equal(g.nthreads, 2);
	assert_int_equal(g.nprocs, 1);
	/* the phases: 20 events of the file, 2 x (Forward, Backward, Optimization) */
	assert_int_equal(g.st.events, 20);
	assert_int_equal(g.st.phases, 6);
	assert_int_equal(g.n, 26);
	assert_int_equal(chk_count(&g, "Forward"), 2);
	assert_int_equal(chk_count(&g, "Backward"), 2);
	assert_int_equal(chk_count(&g, "Optimization#SGD.step"), 2); /* outermost only */
	/* step 1: after zero_grad, up to the backward; the backward of both
	 * threads; the outer optimizer step */
	check_phase(&g, "Forward", 0, TRACE_EV_FORWARD, 110, 135);
	check_phase(&g, "Backward", 0, TRACE_EV_BACKWARD, 140, 160);
	check_phase(&g, "Optimization#SGD.step", 0, TRACE_EV_OPTIMIZATION, 170, 190);
	/* step 2: after the fetch; zero_grad at the end is no bound */
	check_phase(&g, "Forward", 1, TRACE_EV_FORWARD, 210, 220);
	check_phase(&g, "Backward", 1, TRACE_EV_BACKWARD, 230, 240);
	check_phase(&g, "Optimization#SGD.step", 1, TRACE_EV_OPTIMIZATION, 250, 260);
	chk_free(&g);

	/* a trace with phases of its own gets none recovered */
	size_t n = strlen(phases_json);
	char *own = malloc(n + 128);
	memcpy(own, phases_json, n + 1);
	char *end = strstr(own, "\n]}");
	strcpy(end, ",\n" PH_X("Forward", "my forward", 1, 110, 25) "{}]}\n");
	chk_import_text(own, 0, &g);
	assert_int_equal(g.st.phases, 0);
	assert_int_equal(chk_count(&g, "Forward"), 0);
	assert_int_equal(chk_count(&g, "Backward"), 0);
	assert_int_equal(chk_count(&g, "Optimization#SGD.step"), 0);
	assert_int_equal(chk_find(&g, "my forward", 0)->type, TRACE_EV_FORWARD);
	assert_int_equal(chk_find(&g, "Optimizer.step#SGD.step", 0)->type, TRACE_EV_OPERATOR);
	chk_free(&g);
	free(own);
}

/* A UTF-8 byte order mark before the JSON is no error; an error after it
 * names the file's byte (D11). */
static void test_bom(void **state)
{
	(void)state;
	struct got g;
	char err[512];
	for (int gz = 0; gz <= 1; gz++) {
		chk_import_text("\xef\xbb\xbf{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\","
				" \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}]}",
				gz, &g);
		assert_int_equal(g.n, 1);
		assert_int_equal(chk_find(&g, "a", 0)->dur, 2000);
		chk_free(&g);
	}
	chk_import_text("\xef\xbb\xbf\n  [{\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": 1,"
			" \"ts\": 1, \"dur\": 2}]", 0, &g);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.st.format, IMPORT_FMT_TORCH_LEGACY);
	chk_free(&g);
	/* the 'x' is byte 20 of the file (from 0), the BOM's 3 included */
	chk_import_error("\xef\xbb\xbf{\"traceEvents\": [x]}", 0, err, sizeof(err));
	assert_non_null(strstr(err, "byte 20"));
	/* a BOM only once, at the start */
	chk_import_error("\xef\xbb\xbf\xef\xbb\xbf{\"traceEvents\": []}", 0, err, sizeof(err));
	assert_non_null(strstr(err, "byte 3"));
}

static void test_empty_and_negative(void **state)
{
	(void)state;
	struct got g;
	chk_import_text("{\"traceEvents\": []}", 0, &g);
	assert_int_equal(g.n, 0);
	assert_int_equal(g.nthreads, 0);
	chk_free(&g);
	chk_import_text("[]", 0, &g);
	assert_int_equal(g.n, 0);
	chk_free(&g);
	/* times before 0 are shifted, never wrapped */
	chk_import_text("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"early\", \"pid\": 1,"
			" \"tid\": 1, \"ts\": -2.5, \"dur\": 1}, {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"late\","
			" \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 1}]}",
			0, &g);
	assert_int_equal(chk_find(&g, "early", 0)->start, 0);
	assert_int_equal(chk_find(&g, "late", 0)->start, 12500);
	assert_int_equal(g.h.start_ns, 0);
	chk_free(&g);
	/* times at the edges of int64 saturate, never overflow */
	chk_import_text("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"edge\", \"pid\": 1,"
			" \"tid\": 1, \"ts\": 9223372036854775.807, \"dur\": 9223372036854775.807},"
			" {\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"low\", \"pid\": 1, \"tid\": \"1(C++)\","
			" \"ts\": -9223372036854775.808, \"dur\": 1, \"args\": {\"start_time\": \"9223372036854775.807 us\"}},"
			" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"lowest\", \"pid\": 1, \"tid\": 1,"
			" \"ts\": -9223372036854775.808, \"dur\": 9223372036854775.807}]}",
			0, &g);
	assert_int_equal(g.n, 3);
	chk_free(&g);
}

/* ---- errors ---------------------------------------------------------------- */

static unsigned long long reported_offset(const char *err)
{
	const char *p = strstr(err, "byte ");
	assert_non_null(p);
	return strtoull(p + 5, NULL, 10);
}

static void test_malformed(void **state)
{
	(void)state;
	char err[1024];
	const char *bad = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": 2, \"pid\": 1, "
			  "\"tid\": 1}, {\"ph\": \"X\", \"name\": oops}]}";
	chk_import_error(bad, 0, err, sizeof(err));
	assert_non_null(strstr(err, "invalid JSON at byte"));
	unsigned long long at = reported_offset(err), want = (unsigned long long)(strstr(bad, "oops") - bad);
	assert_true(at >= want && at <= want + 4);

	/* cut short, anywhere: an error at the end, naming the offset */
	size_t len = strlen(kineto_json);
	char *cut = malloc(len + 1);
	for (size_t n = 1; n < len; n += 97) {
		memcpy(cut, kineto_json, n);
		cut[n] = '\0';
		chk_import_error(cut, 0, err, sizeof(err));
		if (strstr(err, "ends early")) {
			assert_int_equal(reported_offset(err), n);
		} else {
			assert_non_null(strstr(err, "invalid JSON at byte")); /* e.g. "1e" cut from "1e3" */
			assert_true(reported_offset(err) <= n);
		}
	}
	free(cut);

	chk_import_error("{\"foo\": [1, 2, 3]}", 0, err, sizeof(err));
	assert_non_null(strstr(err, "not a chrome trace (no traceEvents array)"));
	chk_import_error("{\"traceEvents\": {\"not\": \"an array\"}}", 0, err, sizeof(err));
	assert_non_null(strstr(err, "no traceEvents"));
	chk_import_error("{\"traceEvents\": []} trailing", 0, err, sizeof(err));
	assert_non_null(strstr(err, "invalid JSON at byte"));
	chk_import_error("{\"traceEvents\": [\x01\x02\x03]}", 0, err, sizeof(err));
	assert_int_equal(reported_offset(err), 17);

	/* nesting without end is refused, not followed */
	size_t depth = 100000, pre = strlen("{\"traceEvents\": [{\"args\": ");
	char *deep = malloc(pre + depth + 1);
	memcpy(deep, "{\"traceEvents\": [{\"args\": ", pre);
	memset(deep + pre, '[', depth);
	deep[pre + depth] = '\0';
	chk_import_error(deep, 0, err, sizeof(err));
	assert_non_null(strstr(err, "nested more than 1000 deep"));
	assert_int_equal(reported_offset(err), pre + 1000 - 3);
	free(deep);
}

static void test_gzip_damage(void **state)
{
	(void)state;
	char err[1024];
	/* a gzip file cut in half */
	char *full = chk_write("full.json.gz", kineto_json, 1);
	FILE *f = fopen(full, "rb");
	unsigned char buf[65536];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	char *half = chk_path("half.json.gz");
	f = fopen(half, "wb");
	fwrite(buf, 1, n / 2, f);
	fclose(f);
	char *out = chk_path("half.gpdl");
	assert_int_equal(import_chrome_trace(half, out, 0, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, half));
	assert_non_null(strstr(err, "ends early"));
	assert_int_not_equal(access(out, F_OK), 0);
	/* damaged deflate data */
	for (size_t i = 20; i < n - 8; i += 7)
		buf[i] ^= 0x5a;
	f = fopen(half, "wb");
	fwrite(buf, 1, n, f);
	fclose(f);
	assert_int_equal(import_chrome_trace(half, out, 0, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, half));
	assert_null(strchr(err, '\n'));
	assert_int_not_equal(access(out, F_OK), 0);
	unlink(full);
	unlink(half);
	free(full);
	free(half);
	free(out);
}

/* Random damage to a good file: each try imports or fails with a message
 * naming the file; none crashes (the sanitizer build makes sure). */
static void test_mutations(void **state)
{
	(void)state;
	size_t len = strlen(kineto_json);
	char *text = malloc(len + 1);
	char *in = chk_path("mut.json"), *out = chk_path("mut.gpdl");
	char err[1024];
	unsigned seed = 12345;
	int ok = 0, failed = 0;
	for (int round = 0; round < 300; round++) {
		memcpy(text, kineto_json, len + 1);
		int flips = 1 + round % 4;
		for (int k = 0; k < flips; k++) {
			seed = seed * 1103515245 + 12345;
			size_t at = (seed >> 8) % len;
			seed = seed * 1103515245 + 12345;
			static const char pick[] = "{}[]\",:0-9e.\\ \x01\xff";
			text[at] = pick[(seed >> 8) % (sizeof(pick) - 1)];
		}
		FILE *f = fopen(in, "wb");
		fwrite(text, 1, len, f);
		fclose(f);
		unlink(out);
		struct import_stats st;
		if (import_chrome_trace(in, out, 0, &st, err, sizeof(err)) == 0) {
			struct got g;
			chk_read(out, &g);
			assert_true(st.events <= 14);
			assert_int_equal(g.n, st.events + st.phases);
			chk_free(&g);
			ok++;
		} else {
			assert_non_null(strstr(err, in));
			assert_int_not_equal(access(out, F_OK), 0);
			failed++;
		}
	}
	assert_true(ok > 0 && failed > 0);
	unlink(in);
	unlink(out);
	free(in);
	free(out);
	free(text);
}

static void test_output_rules(void **state)
{
	(void)state;
	char err[1024];
	char *in = chk_write("rules.json", memory_json, 0), *out = chk_path("rules.gpdl");
	FILE *f = fopen(out, "w");
	fputs("precious", f);
	fclose(f);
	assert_int_equal(import_chrome_trace(in, out, 0, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "exists"));
	assert_non_null(strstr(err, "--force"));
	f = fopen(out, "r");
	char buf[16] = "";
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious");
	assert_int_equal(import_chrome_trace(in, out, 1, NULL, err, sizeof(err)), 0);
	assert_int_equal(import_chrome_trace(in, in, 1, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is the input"));
	/* a gprof-dl trace needs no import */
	char *again = chk_path("again.gpdl");
	assert_int_equal(import_chrome_trace(out, again, 1, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is a gprof-dl trace already"));
	assert_int_not_equal(access(again, F_OK), 0);
	free(again);
	/* a missing input */
	char *missing = chk_path("missing.json");
	assert_int_equal(import_chrome_trace(missing, out, 1, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open"));
	assert_non_null(strstr(err, missing));
	/* an output that cannot be created: nothing is read in vain, the
	 * message names the output */
	char *nodir = chk_path("no/such/dir.gpdl");
	assert_int_equal(import_chrome_trace(in, nodir, 0, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, nodir));
	unlink(in);
	unlink(out);
	free(in);
	free(out);
	free(missing);
	free(nodir);
}

/* ---- numbers ------------------------------------------------------------- */

static void test_numbers(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int ok;
		int64_t ns;
	} cases[] = {
		{"0", 1, 0},
		{"1", 1, 1000},
		{"1.5", 1, 1500},
		{"3.104", 1, 3104},
		{"1697591640277436.250", 1, 1697591640277436250ll},
		{"1656581541457062", 1, 1656581541457062000ll},
		{"0.0005", 1, 1},
		{"0.0004", 1, 0},
		{"0.0015", 1, 2},
		{"-2.5", 1, -2500},
		{"-0.0005", 1, -1},
		{"1.5e-05", 1, 0},
		{"1.5e3", 1, 1500000},
		{"1E+2", 1, 100000},
		{"1e-3", 1, 1},
		{"0.1234567", 1, 123},
		{"000012.000", 1, 12000},
		{" 12 ", 1, 12000},
		{"9223372036854775.807", 1, INT64_MAX},
		{"-9223372036854775.808", 1, INT64_MIN},
		{"9223372036854775.808", 0, 0},
		{"12345678901234567.890", 0, 0},
		{"1e400", 0, 0},
		{"1e-400", 1, 0},
		{"abc", 0, 0},
		{"", 0, 0},
		{"-", 0, 0},
		{"1e", 0, 0},
		{".5", 1, 500}, /* not JSON, but a number given as a string may be */
		{"1.2.3", 0, 0},
		{"12 us", 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ns = 42;
		int rc = import_us_to_ns(cases[i].text, strlen(cases[i].text), &ns);
		if (rc != (cases[i].ok ? 0 : -1) || (cases[i].ok && ns != cases[i].ns))
			fail_msg("'%s': rc %d ns %lld, want ok %d ns %lld", cases[i].text, rc,
				 (long long)ns, cases[i].ok, (long long)cases[i].ns);
	}
	uint64_t u;
	int64_t v;
	assert_int_equal(import_parse_u64("18446744073709551615", 20, &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(import_parse_u64("18446744073709551616", 20, &u), -1);
	assert_int_equal(import_parse_u64("-1", 2, &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(import_parse_i64("1.9", 3, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(import_parse_i64("-1.9", 4, &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(import_parse_i64("2e3", 3, &v), 0);
	assert_int_equal(v, 2000);
	assert_int_equal(import_parse_i64("9223372036854775808", 19, &v), -1);
}

/* ---- order, spans, many events ------------------------------------------------ */

/* 3 tracks x 6000 events written newest first and interleaved, over 12 s,
 * so that the writer's chunks fill and its 4.29 s delta limit is crossed. */
static void test_any_order(void **state)
{
	(void)state;
	const int per = 6000, tracks = 3;
	size_t cap = (size_t)per * tracks * 160 + 64, len = 0;
	char *text = malloc(cap);
	len += (size_t)snprintf(text + len, cap - len, "{\"traceEvents\": [");
	for (int i = per - 1; i >= 0; i--) {
		for (int t = 0; t < tracks; t++) {
			/* start = i * 2 ms + t us + t ns, dur = i % 1000 ns */
			len += (size_t)snprintf(text + len, cap - len,
						"%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":9,\"tid\":%d,"
						"\"ts\":%d.%03d,\"dur\":0.%03d}",
						(i == per - 1 && t == 0) ? "" : ",", i % 7, t, i * 2000 + t, t, i % 1000);
		}
	}
	len += (size_t)snprintf(text + len, cap - len, "]}");
	struct got g;
	chk_import_text(text, 0, &g);
	assert_int_equal(g.n, (size_t)per * tracks);
	assert_int_equal(g.nthreads, tracks);
	char *seen = calloc((size_t)per * tracks, 1);
	for (size_t k = 0; k < g.n; k++) {
		const struct got_event *e = &g.ev[k];
		int t = (int)g.threads[e->thread].t.tid;
		uint64_t ms2 = (e->start - (uint64_t)t * 1001) / 2000000;
		int i = (int)ms2;
		assert_true(i >= 0 && i < per);
		assert_int_equal(e->start, (uint64_t)i * 2000000 + (uint64_t)t * 1000 + (uint64_t)t);
		assert_int_equal(e->dur, (uint64_t)(i % 1000));
		char name[16];
		snprintf(name, sizeof(name), "op%d", i % 7);
		assert_string_equal(e->name, name);
		assert_false(seen[(size_t)i * tracks + (size_t)t]);
		seen[(size_t)i * tracks + (size_t)t] = 1;
	}
	free(seen);
	assert_int_equal(g.h.start_ns, 0);
	chk_free(&g);
	free(text);
}

/* ---- trace_open_any -------------------------------------------------------- */

static int dir_entries(const char *path)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", path);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static int count_one(void *ctx, const struct trace_event *e)
{
	(void)e;
	(*(uint64_t *)ctx)++;
	return 0;
}

static uint64_t count_events(struct trace_reader *r)
{
	struct trace_visitor v = {.event = count_one};
	uint64_t n = 0;
	assert_int_equal(trace_reader_run(r, &v, &n), 0);
	return n;
}

static void test_open_any(void **state)
{
	(void)state;
	char err[1024];
	char *tmp = chk_path("tmpdir");
	assert_int_equal(mkdir(tmp, 0700), 0);
	char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	setenv("TMPDIR", tmp, 1);

	char *json = chk_write("any.json", kineto_json, 0);
	char *gz = chk_write("any.data", kineto_json, 1); /* any name: content decides */
	struct trace_reader *r = trace_open_any(json, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(dir_entries(tmp), 0); /* unlinked: nothing to clean up */
	assert_int_equal(count_events(r), 14);
	assert_int_equal(trace_reader_header(r)->pid, 4242);
	trace_reader_close(r);
	r = trace_open_any(gz, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(count_events(r), 14);
	trace_reader_close(r);
	assert_int_equal(dir_entries(tmp), 0);

	/* a gprof-dl trace opens directly */
	char *gpdl = chk_path("any.gpdl");
	assert_int_equal(import_chrome_trace(json, gpdl, 1, NULL, err, sizeof(err)), 0);
	r = trace_open_any(gpdl, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(count_events(r), 14);
	trace_reader_close(r);

	/* not a trace at all: the trace reader's message */
	char *text = chk_write("notes.txt", "this is not a trace, just some text in a file\n", 0);
	assert_null(trace_open_any(text, err, sizeof(err)));
	assert_non_null(strstr(err, "not a gprof-dl trace"));
	assert_non_null(strstr(err, text));
	char *empty = chk_write("empty.json", "", 0);
	assert_null(trace_open_any(empty, err, sizeof(err)));
	assert_non_null(strstr(err, empty));
	char *missing = chk_path("missing.json");
	assert_null(trace_open_any(missing, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot open"));
	assert_non_null(strstr(err, missing));
	/* bad JSON: the message names the file, not the temporary one */
	char *bad = chk_write("bad.json", "{\"traceEvents\": [}", 0);
	assert_null(trace_open_any(bad, err, sizeof(err)));
	assert_non_null(strstr(err, bad));
	assert_null(strstr(err, "/proc/"));
	assert_non_null(strstr(err, "byte 17"));
	assert_int_equal(dir_entries(tmp), 0);

	if (old) {
		setenv("TMPDIR", old, 1);
		free(old);
	} else {
		unsetenv("TMPDIR");
	}
	unlink(json);
	unlink(gz);
	unlink(gpdl);
	unlink(text);
	unlink(empty);
	unlink(bad);
	rmdir(tmp);
	free(tmp);
	free(json);
	free(gz);
	free(gpdl);
	free(text);
	free(empty);
	free(missing);
	free(bad);
}

/* ---- memory does not grow with the input ----------------------------------- */

/* A Kineto-style file of n events on a few tracks, every category. */
static void write_big(const char *path, long n)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"traceEvents\": [\n", f);
	for (long i = 0; i < n; i++) {
		long t = i * 3;
		switch (i % 4) {
		case 0:
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op%ld\",\"pid\":1,\"tid\":%ld,"
				   "\"ts\":%ld.250,\"dur\":2.125,\"args\":{\"External id\":%ld,\"Input Dims\":[[8,16],[16]]}},\n",
				i % 50, 1 + i % 3, t, i);
			break;
		case 1:
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
				   "\"ts\":%ld.500,\"dur\":1.000,\"args\":{\"correlation\":%ld,\"External id\":%ld}},\n",
				t, i, i);
			break;
		case 2:
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kernel_%ld\",\"pid\":0,\"tid\":7,"
				   "\"ts\":%ld.750,\"dur\":1.500,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%ld,"
				   "\"grid\":[64,1,1],\"block\":[128,1,1],\"registers per thread\":32,\"shared memory\":0}},\n",
				i % 20, t, i);
			break;
		default:
			fprintf(f, "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,"
				   "\"tid\":1,\"ts\":%ld,\"args\":{\"Bytes\":512,\"Addr\":%ld,\"Device Type\":1,\"Device Id\":0}},\n",
				t, 4096 + i);
			break;
		}
	}
	fputs("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"last\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}]}\n", f);
	assert_int_equal(fclose(f), 0);
}

/* Peak RSS (KiB) of a child that imports path. */
static long import_peak_kib(const char *path, const char *out)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[1024];
		_exit(import_chrome_trace(path, out, 1, NULL, err, sizeof(err)) == 0 ? 0 : 1);
	}
	int status;
	struct rusage ru;
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return ru.ru_maxrss;
}

/* Kineto's "Input Dims" in every shape it comes in, and "Sequence number". */
static void test_input_dims(void **state)
{
	(void)state;
	static const char json[] =
		"{\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1,\n"
		" \"args\": {\"Input Dims\": [[32, 64], [64], []], \"Sequence number\": 0}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": 1,\n"
		" \"args\": {\"Input Dims\": [], \"Sequence number\": -1}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"dur\": 1,\n"
		" \"args\": {\"Input Dims\": [[[2, 3], [4]], 5, [1.5e2]]}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"d\", \"pid\": 1, \"tid\": 1, \"ts\": 4, \"dur\": 1,\n"
		" \"args\": {\"Input Dims\": \"[[32,64]]\", \"Sequence number\": 9007199254740993}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"e\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 1,\n"
		" \"args\": {\"Input Dims\": [[1], [\"x\"]]}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"f\", \"pid\": 1, \"tid\": 1, \"ts\": 6, \"dur\": 1,\n"
		" \"args\": {\"Input Dims\": [[1], {\"k\": [2]}], \"Sequence number\": \"x\"}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"g\", \"pid\": 1, \"tid\": 1, \"ts\": 7, \"dur\": 1,\n"
		" \"args\": {\"Input Dims\": 7, \"External id\": 4}},\n"
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1,\n"
		" \"ts\": 0, \"dur\": 10, \"args\": {\"samples\": 128}}\n"
		"]}\n";
	struct got g;
	chk_import_text(json, 0, &g);
	assert_int_equal(g.n, 9); /* and the step's Forward, a..g */
	assert_int_equal(chk_find(&g, "Forward", 0)->dur, 7 * US);
	static const struct {
		const char *name, *shapes;
		int has_seq;
		int64_t seq;
	} want[] = {
		{"a", "[[32, 64], [64], []]", 1, 0},
		{"b", "[]", 1, -1},
		{"c", "[[[2, 3], [4]], 5, [1.5e2]]", 0, 0}, /* numbers as written */
		{"d", "[[32,64]]", 1, INT64_C(9007199254740993)},
		{"e", "", 0, 0}, /* a string in the lists: no shapes */
		{"f", "", 0, 0}, /* an object: no shapes; a string seq: none */
		{"g", "", 0, 0},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct got_event *e = chk_find(&g, want[i].name, 0);
		assert_string_equal(e->shapes, want[i].shapes);
		assert_int_equal(e->ext.has_seq, want[i].has_seq);
		assert_int_equal(e->ext.seq_nr, want[i].seq);
		assert_int_equal(e->has_ext, want[i].has_seq || want[i].shapes[0] || i == 6);
	}
	assert_int_equal(chk_find(&g, "g", 0)->ext.external_id, 4);
	const struct got_event *st = chk_find(&g, "ProfilerStep#1", 0);
	assert_int_equal(st->type, TRACE_EV_PROFILE_STEP);
	assert_int_equal(st->ext.samples, 128);
	chk_free(&g);
}

static void test_memory_flat(void **state)
{
	(void)state;
	char *small = chk_path("small.json"), *large = chk_path("large.json");
	char *out_small = chk_path("small.gpdl"), *out_large = chk_path("large.gpdl");
	write_big(small, 100000);  /* about 17 MB */
	write_big(large, 800000);  /* about 140 MB */
	/* both children start from the same parent */
	long a = import_peak_kib(small, out_small);
	long b = import_peak_kib(large, out_large);
	struct got g;
	chk_read(out_small, &g);
	assert_int_equal(g.n, 100001);
	chk_free(&g);
	chk_read(out_large, &g);
	assert_int_equal(g.n, 800001);
	chk_free(&g);
	print_message("peak RSS: %ld KiB for 100k events, %ld KiB for 800k events\n", a, b);
	/* eight times the input, the same memory (give or take the allocator) */
	assert_true(b < a + 8 * 1024);
	unlink(small);
	unlink(large);
	unlink(out_small);
	unlink(out_large);
	free(small);
	free(large);
	free(out_small);
	free(out_large);
}

static int teardown(void **state)
{
	(void)state;
	chk_cleanup();
	return 0;
}

/* GPDL_IMPORT_SEEDS=DIR: the fixtures, as fuzz_import's seed corpus. */
static int write_seeds(const char *dir)
{
	static const struct {
		const char *name, *text;
	} seeds[] = {
		{"kineto", kineto_json}, {"old-kineto", old_kineto_json}, {"memory", memory_json},
		{"legacy", legacy_json}, {"paddle", paddle_json},         {"ours", ours_json},
		{"ours-lists", ours_lists_json}, {"kineto-dist", kineto_dist_json},
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		rc |= chk_write_seed(dir, seeds[i].name, seeds[i].text, strlen(seeds[i].text));
	return rc ? 1 : 0;
}

int main(void)
{
	const char *seeds = getenv("GPDL_IMPORT_SEEDS");
	if (seeds && *seeds)
		return write_seeds(seeds);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kineto),
		cmocka_unit_test(test_kineto_gzip),
		cmocka_unit_test(test_old_kineto),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_torch_dataloader_name),
		cmocka_unit_test(test_legacy),
		cmocka_unit_test(test_paddle),
		cmocka_unit_test(test_kineto_dist),
		cmocka_unit_test(test_kineto_local_rank),
		cmocka_unit_test(test_ours),
		cmocka_unit_test(test_ours_lists),
		cmocka_unit_test(test_unknown_and_ignored),
		cmocka_unit_test(test_fixes_counted),
		cmocka_unit_test(test_bom),
		cmocka_unit_test(test_torch_phases),
		cmocka_unit_test(test_empty_and_negative),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_gzip_damage),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_output_rules),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_any_order),
		cmocka_unit_test(test_open_any),
		cmocka_unit_test(test_memory_flat),
		cmocka_unit_test(test_input_dims),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
