/*
 * test_chrome_gpu.c - chrome export of the GPU fixture (trace_fixture.h),
 * read back by yajl: GPU tracks (pid = device, tid = stream), the PyTorch
 * profiler's categories and arg names, ac2g flows, "[memory]" instants,
 * GPU process and thread metadata, distributedInfo, deviceProperties and
 * baseTimeNanoseconds. Every expected number is the fixture's, or worked out
 * by hand in a comment next to it.
 */
#include "formats/chrome/chrome_writer.h"
#include "tests/chrome/chrome_read.h"
#include "tests/chrome/trace_fixture.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct doc {
	char *text;
	yajl_val root;
	struct evlist evs;
};

static void load(struct doc *d, const char *path)
{
	int rc;
	d->text = export_text(path, &rc);
	assert_int_equal(rc, 0);
	d->root = parse(d->text);
	d->evs = events_of(d->root);
}

static void unload(struct doc *d)
{
	yajl_tree_free(d->root);
	free(d->text);
}

static int setup(void **state)
{
	char *path = fix_path("gpu.gpdl");
	assert_int_equal(fix_write_gpu(path), 0);
	*state = path;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	fix_cleanup();
	return 0;
}

static double get_double(yajl_val obj, const char *key)
{
	yajl_val v = get(obj, key);
	if (!v || !YAJL_IS_NUMBER(v))
		fail_msg("'%s' is not a number", key);
	return YAJL_GET_DOUBLE(v);
}

/* Measures are written to the millionth. */
static void assert_close(double got, double want)
{
	if (fabs(got - want) > 0.5e-6 + 1e-12 * fabs(want))
		fail_msg("got %.17g, want %.17g", got, want);
}

static void assert_dims(yajl_val args, const char *key, const uint32_t want[3])
{
	yajl_val v = get(args, key);
	assert_non_null(v);
	assert_true(YAJL_IS_ARRAY(v));
	assert_int_equal(YAJL_GET_ARRAY(v)->len, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(v)->values[i]), want[i]);
}

/* "1234.000": the fixture's times are whole microseconds. */
static void us_text(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%llu.%03llu", (unsigned long long)(ns / 1000),
		 (unsigned long long)(ns % 1000));
}

static int on_stream(const struct fixg_event *f)
{
	return f->track != FIXG_TRACK_HOST;
}

/* The one event of ph at the fixture event's time on its track. */
static yajl_val event_of(struct evlist evs, const struct fixg_event *f, const char *ph)
{
	char ts[32];
	us_text(ts, sizeof(ts), f->start_rel_ns);
	long long pid = on_stream(f) ? FIXG_DEVICE : FIXG_PID;
	long long tid = on_stream(f) ? (long long)fixg_streams[f->track] : FIXG_PID;
	yajl_val found = NULL;
	for (size_t i = 0; i < evs.len; i++) {
		yajl_val e = evs.values[i];
		if (strcmp(get_str(e, "ph"), ph) != 0 || strcmp(get_num(e, "ts"), ts) != 0 ||
		    get_int(e, "pid") != pid || get_int(e, "tid") != tid)
			continue;
		if (found)
			fail_msg("two '%s' events at %s on %lld/%lld", ph, ts, pid, tid);
		found = e;
	}
	if (!found)
		fail_msg("no '%s' event for '%s' at %s on %lld/%lld", ph, f->name, ts, pid, tid);
	return found;
}

static const char *want_category(const struct fixg_event *f)
{
	switch (f->type) {
	case TRACE_EV_OPERATOR:
		return "cpu_op";
	case TRACE_EV_PYTHON_OP:
		return "python_function";
	case TRACE_EV_CUDA_RUNTIME:
		return "cuda_runtime";
	case TRACE_EV_KERNEL:
	case TRACE_EV_COMMUNICATION:
		return "kernel";
	case TRACE_EV_MEMCPY:
		return "gpu_memcpy";
	case TRACE_EV_MEMSET:
		return "gpu_memset";
	case TRACE_EV_MEMORY:
		return "cpu_instant_event";
	default:
		return "user_annotation";
	}
}

/* ---- every event: track, category, name, times, type ---------------------- */

static void test_events(void **state)
{
	struct doc d;
	load(&d, *state);
	size_t x = 0, i_ = 0;
	for (size_t k = 0; k < fixg_nevents; k++) {
		const struct fixg_event *f = &fixg_events[k];
		int instant = (f->flags & TRACE_EVF_MARK) || f->type == TRACE_EV_MEMORY;
		yajl_val e = event_of(d.evs, f, instant ? "i" : "X");
		x += !instant;
		i_ += instant;
		assert_str(e, "cat", want_category(f));
		assert_str(get(e, "args"), "type", trace_event_type_name(f->type));
		if (instant) {
			assert_str(e, "s", "t");
			assert_null(get(e, "dur"));
		} else {
			char dur[32];
			us_text(dur, sizeof(dur), f->dur_ns);
			assert_num(e, "dur", dur);
		}
		char kineto[64];
		if (f->type == TRACE_EV_MEMORY) {
			assert_str(e, "name", "[memory]");
		} else if (f->type == TRACE_EV_PROFILE_STEP && !strncmp(f->name, "ProfileStep#", 12)) {
			/* a step under Kineto's name, the same N: TensorBoard and HTA */
			snprintf(kineto, sizeof(kineto), "ProfilerStep#%s", f->name + 12);
			assert_str(e, "name", kineto);
		} else if (f->type != TRACE_EV_MEMCPY && f->type != TRACE_EV_MEMSET) {
			assert_str(e, "name", f->name);
		}
		/* the stream's identity in args, on GPU work only */
		yajl_val args = get(e, "args");
		if (on_stream(f)) {
			assert_int_equal(get_int(args, "device"), FIXG_DEVICE);
			assert_int_equal(get_int(args, "context"), FIXG_CONTEXT);
			assert_int_equal(get_int(args, "stream"), (long long)fixg_streams[f->track]);
		} else {
			assert_null(get(args, "stream"));
		}
		if (f->has_ext && f->ext.correlation)
			assert_int_equal(get_int(args, "correlation"), (long long)f->ext.correlation);
		else
			assert_null(get(args, "correlation"));
		if (f->has_ext && f->ext.external_id)
			assert_int_equal(get_int(args, "External id"), (long long)f->ext.external_id);
		else
			assert_null(get(args, "External id"));
	}
	assert_int_equal(count_ph(d.evs, "X"), x);
	assert_int_equal(count_ph(d.evs, "i"), i_);
	/* the fixture's counter, and a memory counter sample per Memory event
	 * with a level (chrome_memory.c: test_memory_instants) */
	assert_int_equal(count_ph(d.evs, "C"), 1 + 2);
	unload(&d);
}

/* ---- kernels ------------------------------------------------------------- */

static void test_kernel_args(void **state)
{
	/* Worked out for the fixture's H200 (132 SMs, 2048 threads, 32 blocks,
	 * 65536 registers and 233472 bytes of shared memory per SM):
	 *   gemm  264 blocks of 256 threads (8 warps), 64 registers, 16 KiB:
	 *         2 blocks per SM, 16 warps per SM; an SM holds
	 *         min(32, 64/8, 65536/(2048*8), 233472/16384) = 4 blocks, but
	 *         only 2 come: 2*256/2048 = 25%
	 *   relu  1024 blocks of 128 (4 warps), 16 registers, 4 KiB dynamic:
	 *         1024/132 blocks per SM, 4x that in warps; holds
	 *         min(32, 16, 32, 57) = 16, gets 7.76: 7.76*128/2048 = 48.5%
	 *   nccl  2 blocks of 512 (16 warps), 96 registers: holds 1 (registers),
	 *         gets 2/132: 0.38%, written as 0 */
	static const struct {
		const char *name;
		double blocks, warps;
		long long occupancy, smem;
	} want[] = {
		{"gemm_kernel", 2.0, 16.0, 25, 16384},
		{"relu_kernel", 1024.0 / 132, 4 * 1024.0 / 132, 48, 4096},
		{"ncclKernel_AllReduce_RING_LL_Sum_float", 2.0 / 132, 16 * 2.0 / 132, 0, 0},
	};
	struct doc d;
	load(&d, *state);
	size_t kernels = 0;
	for (size_t k = 0; k < fixg_nevents; k++) {
		const struct fixg_event *f = &fixg_events[k];
		if (f->type != TRACE_EV_KERNEL && f->type != TRACE_EV_COMMUNICATION)
			continue;
		kernels++;
		yajl_val args = get(event_of(d.evs, f, "X"), "args");
		assert_dims(args, "grid", f->ext.grid);
		assert_dims(args, "block", f->ext.block);
		assert_int_equal(get_int(args, "registers per thread"), f->ext.registers);
		assert_int_equal(get_int(args, "static shared memory"), f->ext.static_smem);
		assert_int_equal(get_int(args, "dynamic shared memory"), f->ext.dynamic_smem);
		size_t w = 0;
		while (strcmp(want[w].name, f->name) != 0)
			w++;
		assert_int_equal(get_int(args, "shared memory"), want[w].smem);
		assert_close(get_double(args, "blocks per SM"), want[w].blocks);
		assert_close(get_double(args, "warps per SM"), want[w].warps);
		assert_int_equal(get_int(args, "est. achieved occupancy %"), want[w].occupancy);
		assert_null(get(args, "bytes"));
		assert_null(get(args, "recorded_name"));
	}
	assert_int_equal(kernels, 5);
	unload(&d);
}

/* A kernel read before its device's properties gets no measures, and no
 * made-up ones. */
static void test_kernel_before_device(void **state)
{
	(void)state;
	char *path = fix_path("late-device.gpdl");
	struct trace_writer *w = trace_writer_open(path, 1);
	assert_non_null(w);
	struct trace_header h = {.version_major = 1, .clock_domain = "CLOCK_MONOTONIC",
				 .hostname = "", .pid = 9, .rank = -1, .cmdline = "",
				 .start_ns = 1000, .gprof_version = "", .world_size = -1};
	assert_int_equal(trace_writer_header(w, &h), 0);
	struct trace_thread t = {.index = 0, .pid = 9, .start_ns = 1000,
				 .kind = TRACE_TRACK_STREAM, .device = 0, .stream = 7};
	assert_int_equal(trace_writer_thread(w, &t), 0);
	uint32_t desc = trace_writer_desc(w, trace_writer_string(w, "k", 1), 0, 0, TRACE_EV_KERNEL);
	struct trace_event_ext x = {.correlation = 5, .grid = {4, 1, 1}, .block = {64, 1, 1}};
	struct trace_event e = {2000, 1000, desc, 0, 0, &x};
	assert_int_equal(trace_writer_event(w, &e), 0);
	assert_int_equal(trace_writer_flush(w), 0);
	struct trace_device dev = fixg_device;
	assert_int_equal(trace_writer_device(w, &dev), 0);
	assert_int_equal(trace_writer_close(w, 5000), 0);

	struct doc d;
	load(&d, path);
	yajl_val args = get(find_event(d.evs, "X", "k"), "args");
	assert_dims(args, "grid", x.grid);
	assert_null(get(args, "blocks per SM"));
	assert_null(get(args, "est. achieved occupancy %"));
	/* no rank: no distributedInfo; the device still gets its properties */
	assert_null(get(d.root, "distributedInfo"));
	yajl_val props = get(d.root, "deviceProperties");
	assert_true(YAJL_IS_ARRAY(props));
	assert_int_equal(YAJL_GET_ARRAY(props)->len, 1);
	/* a flow end with no start in the trace is written all the same */
	assert_int_equal(count_ph(d.evs, "f"), 1);
	assert_int_equal(count_ph(d.evs, "s"), 0);
	unload(&d);
	free(path);
}

/* ---- copies and sets ----------------------------------------------------- */

static void test_copy_args(void **state)
{
	static const struct {
		const char *recorded, *name;
		uint64_t bytes;
		double gbps; /* bytes per ns */
		int async;
	} want[] = {
		{"[CUDA memcpy HtoD]", "Memcpy HtoD (Pageable -> Device)", 4194304, 4.194304, 1},
		{"[CUDA memset]", "Memset (Device)", 1048576, 1048576 / 500000.0, 1},
		{"Memcpy DtoH (Device -> Pinned)", "Memcpy DtoH (Device -> Pinned)", 2097152,
		 2.097152, 0},
	};
	struct doc d;
	load(&d, *state);
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		yajl_val e = find_event(d.evs, "X", want[w].name);
		yajl_val args = get(e, "args");
		assert_int_equal(get_int(args, "bytes"), (long long)want[w].bytes);
		assert_close(get_double(args, "memory bandwidth (GB/s)"), want[w].gbps);
		assert_true(YAJL_IS_TRUE(get(args, "async")) == want[w].async);
		if (strcmp(want[w].recorded, want[w].name) != 0)
			assert_str(args, "recorded_name", want[w].recorded);
		else
			assert_null(get(args, "recorded_name"));
		assert_null(get(args, "grid"));
		assert_int_equal(get_int(e, "pid"), FIXG_DEVICE);
		assert_int_equal(get_int(e, "tid"), 7);
	}
	unload(&d);
}

/* ---- flows --------------------------------------------------------------- */

static void test_flows(void **state)
{
	struct doc d;
	load(&d, *state);
	size_t starts = 0, finishes = 0;
	for (size_t k = 0; k < fixg_nevents; k++) {
		const struct fixg_event *f = &fixg_events[k];
		if (!f->has_ext || !f->ext.correlation)
			continue;
		yajl_val flow = event_of(d.evs, f, on_stream(f) ? "f" : "s");
		assert_str(flow, "cat", "ac2g");
		assert_str(flow, "name", "ac2g");
		assert_int_equal(get_int(flow, "id"), (long long)f->ext.correlation);
		if (on_stream(f)) {
			assert_str(flow, "bp", "e");
			finishes++;
		} else {
			assert_null(get(flow, "bp"));
			starts++;
		}
	}
	assert_int_equal(starts, 8);   /* the runtime calls */
	assert_int_equal(finishes, 8); /* the GPU work they launched */
	assert_int_equal(count_ph(d.evs, "s"), starts);
	assert_int_equal(count_ph(d.evs, "f"), finishes);
	/* every arrow has both ends: each finish's id has a start */
	for (size_t i = 0; i < d.evs.len; i++) {
		yajl_val fin = d.evs.values[i];
		if (strcmp(get_str(fin, "ph"), "f") != 0)
			continue;
		size_t matched = 0;
		for (size_t j = 0; j < d.evs.len; j++)
			matched += !strcmp(get_str(d.evs.values[j], "ph"), "s") &&
				   get_int(d.evs.values[j], "id") == get_int(fin, "id");
		assert_int_equal(matched, 1);
	}
	assert_int_equal(get_int(get(d.root, "otherData"), "flows"), starts + finishes);
	unload(&d);
}

/* ---- memory -------------------------------------------------------------- */

static void test_memory_instants(void **state)
{
	struct doc d;
	load(&d, *state);
	size_t n = 0;
	for (size_t k = 0; k < fixg_nevents; k++) {
		const struct fixg_event *f = &fixg_events[k];
		if (f->type != TRACE_EV_MEMORY)
			continue;
		n++;
		yajl_val e = event_of(d.evs, f, "i");
		yajl_val args = get(e, "args");
		assert_int_equal(get_int(args, "Bytes"), (long long)(int64_t)f->ext.bytes);
		assert_int_equal(get_int(args, "Addr"), (long long)f->ext.address);
		assert_int_equal(get_int(args, "Device Id"), f->ext.device);
		assert_int_equal(get_int(args, "Device Type"), f->ext.device < 0 ? 0 : 1);
		if (f->ext.total_allocated)
			assert_int_equal(get_int(args, "Total Allocated"),
					 (long long)f->ext.total_allocated);
		else
			assert_null(get(args, "Total Allocated"));
		assert_str(args, "memory kind", f->ext.device < 0 ? "Pageable" : "Device");
		if (strcmp(f->name, "[memory]") != 0)
			assert_str(args, "recorded_name", f->name);
		else
			assert_null(get(args, "recorded_name"));
	}
	assert_int_equal(n, 3);
	/* the counter track (chrome_memory.c): a sample of the bytes in use
	 * after each event that says them, on its device; the host allocation
	 * without a level gives none */
	size_t samples = 0;
	long long want[] = {4194304, 1048576};
	for (size_t k = 0; k < d.evs.len; k++) {
		yajl_val e = d.evs.values[k];
		const char *name = get_str(e, "name");
		if (strcmp(get_str(e, "ph"), "C") != 0 || !name || strncmp(name, "Memory in use", 13) != 0)
			continue;
		assert_string_equal(name, "Memory in use (GPU0)");
		assert_true(samples < 2);
		assert_int_equal(get_int(get(e, "args"), "bytes"), want[samples]);
		samples++;
	}
	assert_int_equal(samples, 2);
	unload(&d);
}

/* ---- metadata and the top level ------------------------------------------ */

static void test_gpu_metadata(void **state)
{
	struct doc d;
	load(&d, *state);
	yajl_val m;
	assert_non_null(m = find_meta(d.evs, "process_name", FIXG_DEVICE, 0));
	assert_str(get(m, "args"), "name", "GPU 0");
	assert_non_null(m = find_meta(d.evs, "process_labels", FIXG_DEVICE, 0));
	assert_str(get(m, "args"), "labels", "NVIDIA H200");
	assert_non_null(m = find_meta(d.evs, "process_sort_index", FIXG_DEVICE, 0));
	assert_int_equal(get_int(get(m, "args"), "sort_index"), 0x1000000);
	assert_non_null(m = find_meta(d.evs, "thread_name", FIXG_DEVICE, 7));
	assert_str(get(m, "args"), "name", "stream 7");
	assert_non_null(m = find_meta(d.evs, "thread_name", FIXG_DEVICE, 13));
	assert_str(get(m, "args"), "name", "nccl");
	assert_non_null(m = find_meta(d.evs, "thread_sort_index", FIXG_DEVICE, 13));
	assert_int_equal(get_int(get(m, "args"), "sort_index"), 13);
	assert_non_null(m = find_meta(d.evs, "thread_name", FIXG_PID, FIXG_PID));
	assert_str(get(m, "args"), "name", "python");
	/* streams are not host threads of their process */
	assert_null(find_meta(d.evs, "thread_sort_index", FIXG_PID, 0));
	/* one process per device, however many streams it has */
	size_t names = 0;
	for (size_t i = 0; i < d.evs.len; i++)
		names += !strcmp(get_str(d.evs.values[i], "name"), "process_name");
	assert_int_equal(names, 2); /* the host process and GPU 0 */
	unload(&d);
}

static void test_top_level(void **state)
{
	struct doc d;
	load(&d, *state);
	/* distributedInfo first, on the first line, "rank": N spaced as the
	 * PyTorch profiler writes it (Holistic Trace Analysis greps for it) */
	static const char first[] =
		"{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1, \"backend\": \"nccl\"},\n";
	assert_memory_equal(d.text, first, sizeof(first) - 1);
	yajl_val di = get(d.root, "distributedInfo");
	assert_int_equal(get_int(di, "rank"), 0);
	assert_int_equal(get_int(di, "world_size"), 1);
	assert_str(di, "backend", "nccl");

	yajl_val props = get(d.root, "deviceProperties");
	assert_true(YAJL_IS_ARRAY(props));
	assert_int_equal(YAJL_GET_ARRAY(props)->len, 1);
	yajl_val p = YAJL_GET_ARRAY(props)->values[0];
	const struct trace_device *g = &fixg_device;
	assert_int_equal(get_int(p, "id"), g->id);
	assert_str(p, "name", fixg_device_name);
	assert_int_equal(get_int(p, "totalGlobalMem"), (long long)g->total_memory);
	assert_int_equal(get_int(p, "computeMajor"), g->cc_major);
	assert_int_equal(get_int(p, "computeMinor"), g->cc_minor);
	assert_int_equal(get_int(p, "maxThreadsPerBlock"), g->max_threads_per_block);
	assert_int_equal(get_int(p, "maxThreadsPerMultiprocessor"), g->max_threads_per_sm);
	assert_int_equal(get_int(p, "maxBlocksPerMultiProcessor"), g->max_blocks_per_sm);
	assert_int_equal(get_int(p, "regsPerBlock"), g->regs_per_block);
	assert_int_equal(get_int(p, "regsPerMultiprocessor"), g->regs_per_sm);
	assert_int_equal(get_int(p, "warpSize"), g->warp_size);
	assert_int_equal(get_int(p, "sharedMemPerBlock"), g->smem_per_block);
	assert_int_equal(get_int(p, "sharedMemPerMultiprocessor"), g->smem_per_sm);
	assert_int_equal(get_int(p, "numSms"), g->sm_count);
	assert_int_equal(get_int(p, "clockRate"), g->clock_khz);
	assert_int_equal(YAJL_GET_OBJECT(p)->len, 15);

	char base[32];
	snprintf(base, sizeof(base), "%lld", (long long)(FIX_START_NS + FIX_WALL_OFFSET_NS));
	assert_num(d.root, "baseTimeNanoseconds", base);

	yajl_val o = get(d.root, "otherData");
	assert_int_equal(get_int(o, "rank"), 0);
	assert_int_equal(get_int(o, "world_size"), 1);
	assert_str(o, "dist_backend", "nccl");
	assert_int_equal(get_int(o, "events"), fixg_nevents);
	assert_int_equal(get_int(o, "drops"), FIXG_DROPS);
	/* a stream's drops, named as its events name it, and what it is */
	yajl_val dbt = YAJL_GET_ARRAY(get(o, "drops_by_thread"))->values[0];
	assert_int_equal(get_int(dbt, "pid"), FIXG_DEVICE);
	assert_int_equal(get_int(dbt, "tid"), 13);
	assert_str(dbt, "kind", "stream");
	assert_int_equal(get_int(dbt, "owner_pid"), FIXG_PID);
	assert_int_equal(get_int(dbt, "dropped"), FIXG_DROPS);
	/* the facts metadata events have no room for */
	yajl_val procs = get(o, "processes");
	assert_int_equal(YAJL_GET_ARRAY(procs)->len, 1);
	yajl_val p0 = YAJL_GET_ARRAY(procs)->values[0];
	assert_int_equal(get_int(p0, "pid"), FIXG_PID);
	assert_int_equal(get_int(p0, "ppid"), 1);
	assert_int_equal(get_int(p0, "start_ns"), (long long)FIX_START_NS);
	assert_int_equal(get_int(p0, "end_ns"), (long long)FIXG_END_NS);
	assert_int_equal(get_int(p0, "exit_status"), 0);
	yajl_val threads = get(o, "threads");
	assert_int_equal(YAJL_GET_ARRAY(threads)->len, FIXG_TRACKS);
	yajl_val host = YAJL_GET_ARRAY(threads)->values[FIXG_TRACK_HOST];
	assert_int_equal(get_int(host, "pid"), FIXG_PID);
	assert_int_equal(get_int(host, "tid"), FIXG_PID);
	assert_null(get(host, "kind"));
	assert_int_equal(get_int(host, "end_ns"), (long long)FIXG_END_NS);
	yajl_val s7 = YAJL_GET_ARRAY(threads)->values[FIXG_TRACK_S7];
	assert_int_equal(get_int(s7, "pid"), FIXG_DEVICE);
	assert_int_equal(get_int(s7, "tid"), 7);
	assert_int_equal(get_int(s7, "context"), FIXG_CONTEXT);
	assert_int_equal(get_int(s7, "owner_pid"), FIXG_PID);
	unload(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_kernel_args),
		cmocka_unit_test(test_kernel_before_device),
		cmocka_unit_test(test_copy_args),
		cmocka_unit_test(test_flows),
		cmocka_unit_test(test_memory_instants),
		cmocka_unit_test(test_gpu_metadata),
		cmocka_unit_test(test_top_level),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
