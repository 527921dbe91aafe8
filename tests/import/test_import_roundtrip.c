/*
 * test_import_roundtrip.c - gprof-dl's own chrome export imported back: the
 * fixture traces of tests/chrome (host ranges and marks with every flag,
 * domains and categories, names of every byte, counters, drops; and the GPU
 * fixture: streams, kernels, copies, sets, memory events, correlation ids,
 * devices, a rank) are exported with the real chrome writer, imported, and
 * compared with the original event by event: every name, type, flag, time
 * (to the nanosecond), track and detail (1.2's sequence numbers, input
 * shapes, as "Input Dims" arrays or strings, and samples too), and the
 * header, counters, devices and drops. What the export cannot carry is
 * listed where it is skipped.
 *
 * Processes (ppid, times, exit status, command line) and threads (index,
 * ids, stream owner and context, start and end, name) are compared index by
 * index, as are drops per thread and every counter: a third fixture, written
 * here, has what the other two lack: children that ended with a signal or
 * never ended, threads and a stream with no events (one with drops only), a
 * thread whose lifetime is wider than its events', a [memory] instant on a
 * stream, drops on a host thread and on two streams, and counters of several
 * processes and of the whole system. A fourth is a rank's trace (1.3):
 * processes with their rank fields, a killed one, and collective calls with
 * their details (sequence number, group, dtype, bytes, peer).
 */
#include "formats/chrome/chrome_writer.h"
#include "tests/chrome/trace_fixture.h"
#include "tests/import/import_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Exports trace to json with the real chrome writer. */
static void export_chrome(const char *trace, const char *json)
{
	char err[512];
	struct trace_reader *r = trace_reader_open(trace, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	FILE *f = fopen(json, "w");
	assert_non_null(f);
	struct export_writer *w = chrome_writer_new(f);
	assert_int_equal(export_writer_run(w, r), 0);
	export_writer_destroy(w);
	assert_int_equal(fclose(f), 0);
	trace_reader_close(r);
}

/* JSON carries valid UTF-8 only: an invalid name comes back with U+FFFD. */
static int valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		int n = *p < 0x80	  ? 0
			: (*p >> 5) == 6  ? 1
			: (*p >> 4) == 14 ? 2
			: (*p >> 3) == 30 ? 3
					  : -1;
		if (n < 0 || (n == 1 && *p < 0xc2))
			return 0;
		uint32_t cp = n == 0 ? *p : *p & (0x3f >> n);
		for (int i = 1; i <= n; i++) {
			if ((p[i] >> 6) != 2)
				return 0;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if (n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
			return 0;
		if (n == 3 && (cp < 0x10000 || cp > 0x10ffff))
			return 0;
		p += n + 1;
	}
	return 1;
}

static int ext_equal(const struct trace_event_ext *a, const struct trace_event_ext *b)
{
	return a->correlation == b->correlation && a->external_id == b->external_id &&
	       a->bytes == b->bytes && a->address == b->address && !memcmp(a->grid, b->grid, sizeof(a->grid)) &&
	       !memcmp(a->block, b->block, sizeof(a->block)) && a->registers == b->registers &&
	       a->static_smem == b->static_smem && a->dynamic_smem == b->dynamic_smem &&
	       a->device == b->device && a->copy_kind == b->copy_kind && a->src_kind == b->src_kind &&
	       a->dst_kind == b->dst_kind && a->is_async == b->is_async &&
	       a->total_allocated == b->total_allocated && a->has_seq == b->has_seq &&
	       (!a->has_seq || a->seq_nr == b->seq_nr) && a->samples == b->samples &&
	       !a->shapes_str == !b->shapes_str && a->has_coll_seq == b->has_coll_seq &&
	       (!a->has_coll_seq || a->coll_seq == b->coll_seq) && a->group_size == b->group_size &&
	       a->has_peer == b->has_peer && (!a->has_peer || a->peer == b->peer) &&
	       !a->pg_str == !b->pg_str && !a->dtype_str == !b->dtype_str;
}

static int same_track(const struct got *ga, const struct got_event *a, const struct got *gb,
		      const struct got_event *b)
{
	const struct trace_thread *x = &ga->threads[a->thread].t, *y = &gb->threads[b->thread].t;
	if (x->kind != y->kind)
		return 0;
	if (x->kind == TRACE_TRACK_STREAM)
		return x->device == y->device && x->stream == y->stream && x->pid == y->pid;
	return x->pid == y->pid && x->tid == y->tid;
}

static int same_event(const struct got *ga, const struct got_event *a, const struct got *gb,
		      const struct got_event *b)
{
	if (a->start != b->start || a->dur != b->dur || a->type != b->type || a->flags != b->flags)
		return 0;
	if (valid_utf8(a->name) ? strcmp(a->name, b->name) != 0 : !strstr(b->name, "\xef\xbf\xbd"))
		return 0;
	if (strcmp(a->domain, b->domain) != 0)
		return 0;
	/* a named category keeps its name, an unnamed one its number */
	if (a->category_name[0] ? strcmp(a->category_name, b->category_name) != 0
				: a->category != b->category)
		return 0;
	if (a->has_ext != b->has_ext || (a->has_ext && !ext_equal(&a->ext, &b->ext)))
		return 0;
	/* the ids differ between files, the bytes not */
	if (strcmp(a->shapes, b->shapes) != 0 || strcmp(a->pg, b->pg) != 0 ||
	    strcmp(a->dtype, b->dtype) != 0)
		return 0;
	return same_track(ga, a, gb, b);
}

/* Every original event has exactly one equal imported event. */
static void compare_events(const struct got *orig, const struct got *back)
{
	assert_int_equal(back->n, orig->n);
	char *used = calloc(back->n + 1, 1);
	for (size_t i = 0; i < orig->n; i++) {
		size_t j;
		for (j = 0; j < back->n; j++)
			if (!used[j] && same_event(orig, &orig->ev[i], back, &back->ev[j]))
				break;
		if (j == back->n)
			fail_msg("event '%s' at %llu (+%llu ns, type %u, flags %u) did not come back",
				 orig->ev[i].name, (unsigned long long)orig->ev[i].start,
				 (unsigned long long)orig->ev[i].dur, orig->ev[i].type, orig->ev[i].flags);
		used[j] = 1;
	}
	free(used);
}

/* Every thread at its old index, with its ids, lifetime and name; and its
 * drops. */
static void compare_threads(const struct got *orig, const struct got *back)
{
	assert_int_equal(back->nthreads, orig->nthreads);
	for (uint32_t i = 0; i < orig->nthreads; i++) {
		const struct trace_thread *t = &orig->threads[i].t, *u = &back->threads[i].t;
		assert_int_equal(u->index, i);
		assert_int_equal(u->kind, t->kind);
		assert_int_equal(u->pid, t->pid);
		assert_int_equal(u->tid, t->tid);
		assert_int_equal(u->device, t->device);
		assert_int_equal(u->context, t->context);
		assert_int_equal(u->stream, t->stream);
		assert_int_equal(u->start_ns, t->start_ns);
		assert_int_equal(u->end_ns, t->end_ns);
		assert_int_equal(u->name_str != 0, t->name_str != 0);
		if (valid_utf8(orig->threads[i].name))
			assert_string_equal(back->threads[i].name, orig->threads[i].name);
		else
			assert_non_null(strstr(back->threads[i].name, "\xef\xbf\xbd"));
		assert_int_equal(back->thread_drops[i], orig->thread_drops[i]);
	}
}

/* Every process at its old position. (A root process with no command line
 * of its own would come back with the header's: the export names it so.) */
static void compare_processes(const struct got *orig, const struct got *back)
{
	assert_int_equal(back->nprocs, orig->nprocs);
	for (uint32_t i = 0; i < orig->nprocs; i++) {
		const struct trace_process *p = &orig->procs[i], *q = &back->procs[i];
		assert_int_equal(q->pid, p->pid);
		assert_int_equal(q->ppid, p->ppid);
		assert_int_equal(q->start_ns, p->start_ns);
		assert_int_equal(q->end_ns, p->end_ns);
		assert_int_equal(q->exit_status, p->exit_status);
		assert_string_equal(back->proc_names[i], orig->proc_names[i]);
		/* 1.3's rank fields, where they name a rank; else none (-1) */
		if (p->rank >= 0 && p->world_size != 0) {
			assert_int_equal(q->rank, p->rank);
			assert_int_equal(q->local_rank, p->local_rank);
			assert_int_equal(q->world_size, p->world_size);
		} else {
			assert_int_equal(q->rank, orig->h.rank >= 0 ? orig->h.rank : -1);
		}
	}
}

static void compare_header(const struct got *orig, const struct got *back)
{
	assert_int_equal(back->st.format, IMPORT_FMT_GPROF_DL);
	assert_int_equal(back->h.pid, orig->h.pid);
	assert_int_equal(back->h.rank, orig->h.rank);
	assert_int_equal(back->h.local_rank, orig->h.rank >= 0 ? orig->h.local_rank : -1);
	assert_int_equal(back->h.start_ns, orig->h.start_ns);
	assert_int_equal(back->end_ns, orig->end_ns);
	assert_int_equal(back->h.wall_offset_ns, orig->h.wall_offset_ns);
	assert_int_equal(back->h.ncpus, orig->h.ncpus);
	assert_int_equal(back->h.sources, orig->h.sources);
	assert_string_equal(back->host, orig->host);
	assert_string_equal(back->cmdline, orig->cmdline);
	assert_string_equal(back->clock, orig->clock);
	assert_string_equal(back->version, orig->version);
	/* a world size the recording did not know (0 or -1) stays unknown */
	if (orig->h.world_size > 0)
		assert_int_equal(back->h.world_size, orig->h.world_size);
	else
		assert_true(back->h.world_size <= 0);
	assert_string_equal(back->backend, orig->backend);
	assert_int_equal(back->drops, orig->drops);
}

static void compare_counters(const struct got *orig, const struct got *back)
{
	assert_int_equal(back->nctr, orig->nctr);
	for (uint32_t i = 0; i < orig->nctr; i++) {
		const struct trace_counter *a = &orig->ctr[i], *b = &back->ctr[i];
		assert_int_equal(b->ts_ns, a->ts_ns);
		assert_int_equal(b->id, a->id);
		assert_true(b->value == a->value);
		/* the export writes a process's pid 0 as the root's */
		assert_int_equal(b->pid, a->pid || a->id == TRACE_CTR_CPU_SYSTEM ? a->pid : orig->h.pid);
	}
}

static void compare_devices(const struct got *orig, const struct got *back)
{
	assert_int_equal(back->ndevs, orig->ndevs);
	for (uint32_t i = 0; i < orig->ndevs; i++) {
		struct trace_device a = orig->devs[i].d, b = back->devs[i].d;
		assert_string_equal(back->devs[i].name, orig->devs[i].name);
		a.name_str = b.name_str = 0;
		assert_int_equal(b.id, a.id);
		assert_int_equal(b.sm_count, a.sm_count);
		assert_int_equal(b.max_threads_per_sm, a.max_threads_per_sm);
		assert_int_equal(b.max_threads_per_block, a.max_threads_per_block);
		assert_int_equal(b.max_blocks_per_sm, a.max_blocks_per_sm);
		assert_int_equal(b.warp_size, a.warp_size);
		assert_int_equal(b.regs_per_sm, a.regs_per_sm);
		assert_int_equal(b.regs_per_block, a.regs_per_block);
		assert_int_equal(b.smem_per_sm, a.smem_per_sm);
		assert_int_equal(b.smem_per_block, a.smem_per_block);
		assert_int_equal(b.total_memory, a.total_memory);
		assert_int_equal(b.clock_khz, a.clock_khz);
		assert_int_equal(b.cc_major, a.cc_major);
		assert_int_equal(b.cc_minor, a.cc_minor);
	}
}

/* The trace WRITE makes, exported to Kineto JSON and imported back into g
 * (the files removed): the values an import gives, for the tests that
 * check them one by one. */
static void reimported(int (*write)(const char *path), const char *name, struct got *g)
{
	char base[64];
	snprintf(base, sizeof(base), "%s.gpdl", name);
	char *trace = chk_path(base);
	snprintf(base, sizeof(base), "%s.json", name);
	char *json = chk_path(base);
	assert_int_equal(write(trace), 0);
	export_chrome(trace, json);
	chk_import(json, g);
	unlink(trace);
	unlink(json);
	free(trace);
	free(json);
}

static void roundtrip(int (*write)(const char *path))
{
	char *trace = chk_path("orig.gpdl"), *json = chk_path("orig.json");
	assert_int_equal(write(trace), 0);
	export_chrome(trace, json);
	struct got orig, back;
	chk_read(trace, &orig);
	chk_import(json, &back);
	compare_header(&orig, &back);
	compare_events(&orig, &back);
	compare_threads(&orig, &back);
	compare_processes(&orig, &back);
	compare_counters(&orig, &back);
	compare_devices(&orig, &back);
	chk_free(&orig);
	chk_free(&back);
	unlink(trace);
	unlink(json);
	free(trace);
	free(json);
}

static void test_roundtrip_host(void **state)
{
	(void)state;
	roundtrip(fix_write);
}

static void test_roundtrip_gpu(void **state)
{
	(void)state;
	roundtrip(fix_write_gpu);
}

/* 1.2: operators' sequence numbers and shapes, steps' samples. */
static void test_roundtrip_ops(void **state)
{
	(void)state;
	roundtrip(fix_write_ops);

	/* and the values themselves */
	struct got g;
	reimported(fix_write_ops, "ops", &g);
	assert_int_equal(g.n, fixo_nevents);
	for (size_t k = 0; k < fixo_nevents; k++) {
		const struct fixo_event *f = &fixo_events[k];
		const struct got_event *e = chk_find(&g, f->name, 0);
		assert_int_equal(e->type, f->type);
		assert_int_equal(e->ext.has_seq, f->has_seq);
		assert_int_equal(e->ext.seq_nr, f->has_seq ? f->seq : 0);
		assert_string_equal(e->shapes, f->shapes ? f->shapes : "");
		assert_int_equal(e->ext.samples, f->samples);
	}
	chk_free(&g);
}

/* ---- processes, lifetimes, drops, streams: a fixture of its own ---------- */

#define LT_START UINT64_C(2000000000000)
#define LT_MS UINT64_C(1000000)
#define LT_PID 300
#define LT_DEVICE 1
#define LT_CONTEXT 2

/* Threads: 0 main; 1 stream 9 (events, a [memory] instant among them); 2
 * the first child's; 3 an idle thread of the root (no events, drops); 4
 * stream 11 (drops only); 5 the second child's, never ended, unnamed. */
static int write_lifetimes(const char *path)
{
	struct trace_writer *w = trace_writer_open(path, 1);
	if (!w)
		return -1;
#define S(x) trace_writer_string(w, x, strlen(x))
	struct trace_header h = {
		.version_major = TRACE_FORMAT_VERSION_MAJOR,
		.version_minor = TRACE_FORMAT_VERSION_MINOR,
		.sources = TRACE_SRC_NVTX | TRACE_SRC_CUPTI,
		.clock_domain = "CLOCK_MONOTONIC",
		.wall_offset_ns = INT64_C(1700000000000000000),
		.hostname = "lt-host",
		.pid = LT_PID,
		.rank = -1,
		.local_rank = -1,
		.cmdline = "python main.py --lr 0.1",
		.start_ns = LT_START,
		.ncpus = 4,
		.gprof_version = "0.1.0",
		.world_size = -1,
		.dist_backend = "",
	};
	int rc = trace_writer_header(w, &h);
	struct trace_process procs[] = {
		{LT_PID, 1, LT_START, LT_START + 90 * LT_MS, 0, S("python main.py"), -1, -1, -1, 0},
		{LT_PID + 1, LT_PID, LT_START + 10 * LT_MS, LT_START + 50 * LT_MS, 139,
		 S("worker --id 1"), -1, -1, -1, 0},
		{LT_PID + 2, LT_PID, LT_START + 20 * LT_MS, 0, -1, 0, -1, -1, -1, 0},
	};
	struct trace_thread th[] = {
		{.index = 0, .pid = LT_PID, .tid = LT_PID, .name_str = S("main"),
		 .start_ns = LT_START, .end_ns = LT_START + 90 * LT_MS},
		{.index = 1, .pid = LT_PID, .start_ns = LT_START + 1 * LT_MS,
		 .end_ns = LT_START + 80 * LT_MS, .kind = TRACE_TRACK_STREAM, .device = LT_DEVICE,
		 .context = LT_CONTEXT, .stream = 9},
		{.index = 2, .pid = LT_PID + 1, .tid = LT_PID + 1, .name_str = S("worker"),
		 .start_ns = LT_START + 10 * LT_MS, .end_ns = LT_START + 50 * LT_MS},
		{.index = 3, .pid = LT_PID, .tid = LT_PID + 5, .name_str = S("idle"),
		 .start_ns = LT_START + 5 * LT_MS, .end_ns = LT_START + 6 * LT_MS},
		{.index = 4, .pid = LT_PID, .name_str = S("copy"), .start_ns = LT_START + 2 * LT_MS,
		 .end_ns = LT_START + 70 * LT_MS, .kind = TRACE_TRACK_STREAM, .device = LT_DEVICE,
		 .context = LT_CONTEXT, .stream = 11},
		{.index = 5, .pid = LT_PID + 2, .tid = LT_PID + 2, .start_ns = LT_START + 20 * LT_MS},
	};
	for (size_t i = 0; rc == 0 && i < sizeof(procs) / sizeof(procs[0]); i++)
		rc = trace_writer_process(w, &procs[i]);
	for (size_t i = 0; rc == 0 && i < sizeof(th) / sizeof(th[0]); i++)
		rc = trace_writer_thread(w, &th[i]);
	const struct trace_event_ext kernel = {.correlation = 7, .grid = {4, 1, 1},
					       .block = {64, 1, 1}, .registers = 32};
	const struct trace_event_ext alloc = {.bytes = 256, .address = 0x9000,
					      .device = LT_DEVICE, .dst_kind = TRACE_MEM_DEVICE,
					      .total_allocated = 4096};
	const struct trace_event_ext launch = {.correlation = 7};
	struct {
		const char *name;
		uint8_t type, flags;
		uint32_t thread;
		uint64_t start, dur;
		const struct trace_event_ext *ext;
	} ev[] = {
		{"ProfilerStep#1", TRACE_EV_PROFILE_STEP, 0, 0, 3 * LT_MS, 60 * LT_MS, NULL},
		{"cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME, 0, 0, 4 * LT_MS, LT_MS / 10, &launch},
		{"tiny_kernel", TRACE_EV_KERNEL, 0, 1, 5 * LT_MS, 2 * LT_MS, &kernel},
		{"stream alloc", TRACE_EV_MEMORY, TRACE_EVF_MARK, 1, 6 * LT_MS, 0, &alloc},
		{"load", TRACE_EV_DATALOADER, 0, 2, 12 * LT_MS, 30 * LT_MS, NULL},
		{"hello", TRACE_EV_USER_DEFINED, TRACE_EVF_MARK, 5, 25 * LT_MS, 0, NULL},
	};
	for (size_t i = 0; rc == 0 && i < sizeof(ev) / sizeof(ev[0]); i++) {
		uint32_t desc = trace_writer_desc(w, S(ev[i].name), 0, 0, ev[i].type);
		struct trace_event e = {LT_START + ev[i].start, ev[i].dur, desc, ev[i].thread,
					ev[i].flags, ev[i].ext};
		rc = desc ? trace_writer_event(w, &e) : -1;
	}
	struct trace_counter ctr[] = {
		{LT_START + 10 * LT_MS, TRACE_CTR_CPU_PROCESS, LT_PID, 150.5},
		{LT_START + 10 * LT_MS, TRACE_CTR_CPU_SYSTEM, 0, 37.25},
		{LT_START + 10 * LT_MS, TRACE_CTR_RSS_BYTES, LT_PID, 209715200.0},
		{LT_START + 20 * LT_MS, TRACE_CTR_RSS_BYTES, LT_PID + 1, 1048576.0},
		{LT_START + 20 * LT_MS, TRACE_CTR_CPU_SYSTEM, 0, 0.0},
		{LT_START + 30 * LT_MS, TRACE_CTR_CPU_PROCESS, LT_PID + 2, 12.0},
	};
	for (size_t i = 0; rc == 0 && i < sizeof(ctr) / sizeof(ctr[0]); i++)
		rc = trace_writer_counter(w, &ctr[i]);
	static const uint64_t drops[][2] = {{0, 3}, {1, 4}, {3, 2}, {4, 6}};
	for (size_t i = 0; rc == 0 && i < sizeof(drops) / sizeof(drops[0]); i++)
		rc = trace_writer_drops(w, (uint32_t)drops[i][0], drops[i][1]);
#undef S
	if (trace_writer_close(w, LT_START + 100 * LT_MS) < 0)
		rc = -1;
	return rc;
}

static void test_roundtrip_lifetimes(void **state)
{
	(void)state;
	roundtrip(write_lifetimes);

	/* and the values themselves, so that a fixture that wrote nothing
	 * could not pass the comparison */
	struct got g;
	reimported(write_lifetimes, "lt", &g);
	assert_int_equal(g.nprocs, 3);
	assert_int_equal(g.procs[1].pid, LT_PID + 1);
	assert_int_equal(g.procs[1].ppid, LT_PID);
	assert_int_equal(g.procs[1].exit_status, 139);
	assert_int_equal(g.procs[1].start_ns, LT_START + 10 * LT_MS);
	assert_int_equal(g.procs[1].end_ns, LT_START + 50 * LT_MS);
	assert_string_equal(g.proc_names[1], "worker --id 1");
	assert_int_equal(g.procs[2].exit_status, -1);
	assert_int_equal(g.procs[2].end_ns, 0);
	assert_string_equal(g.proc_names[2], "");
	assert_string_equal(g.proc_names[0], "python main.py");
	assert_int_equal(g.nthreads, 6);
	assert_int_equal(g.threads[3].t.start_ns, LT_START + 5 * LT_MS);
	assert_int_equal(g.threads[3].t.end_ns, LT_START + 6 * LT_MS);
	assert_string_equal(g.threads[3].name, "idle");
	assert_int_equal(g.threads[0].t.start_ns, LT_START); /* before its first event */
	assert_int_equal(g.threads[0].t.end_ns, LT_START + 90 * LT_MS);
	assert_int_equal(g.threads[5].t.end_ns, 0);
	assert_int_equal(g.threads[4].t.kind, TRACE_TRACK_STREAM);
	assert_int_equal(g.threads[4].t.stream, 11);
	assert_int_equal(g.threads[4].t.pid, LT_PID);
	assert_int_equal(g.threads[4].t.context, LT_CONTEXT);
	assert_string_equal(g.threads[4].name, "copy");
	assert_string_equal(g.threads[1].name, "");
	assert_int_equal(g.thread_drops[0], 3);
	assert_int_equal(g.thread_drops[1], 4);
	assert_int_equal(g.thread_drops[2], 0);
	assert_int_equal(g.thread_drops[3], 2);
	assert_int_equal(g.thread_drops[4], 6);
	assert_int_equal(g.drops, 15);
	const struct got_event *e = chk_find(&g, "stream alloc", 0);
	assert_int_equal(e->thread, 1); /* on its stream, not on a host (1, 9) */
	assert_int_equal(e->type, TRACE_EV_MEMORY);
	assert_int_equal(e->flags, TRACE_EVF_MARK);
	assert_int_equal(e->start, LT_START + 6 * LT_MS);
	assert_int_equal(e->ext.device, LT_DEVICE);
	assert_int_equal(e->ext.bytes, 256);
	assert_int_equal(e->ext.total_allocated, 4096);
	assert_int_equal(chk_find(&g, "hello", 0)->thread, 5);
	assert_int_equal(g.nctr, 6);
	assert_int_equal(g.ctr[1].id, TRACE_CTR_CPU_SYSTEM);
	assert_int_equal(g.ctr[1].pid, 0);
	assert_true(g.ctr[1].value == 37.25);
	assert_int_equal(g.ctr[4].pid, 0);
	assert_int_equal(g.ctr[3].pid, LT_PID + 1);
	assert_int_equal(g.ctr[5].pid, LT_PID + 2);
	assert_int_equal(g.ctr[5].ts_ns, LT_START + 30 * LT_MS);
	assert_int_equal(g.st.tracks, 6);
	chk_free(&g);
}

/* ---- a rank's trace with collectives (1.3) ----------------------------- */

#define RC_PID 4242
#define RC_START UINT64_C(7000000000)
#define RC_MS UINT64_C(1000000)

/* Rank 1 of 4 (local rank 1, "gloo"); a DataLoader worker of the rank that
 * was killed; a gloo all_reduce with every detail, a send with a peer, a
 * barrier with a group and no bytes, an NCCL kernel with details on a
 * stream. */
static int write_rank_comms(const char *path)
{
	struct trace_writer *w = trace_writer_open(path, 1);
	if (!w)
		return -1;
#define S(x) trace_writer_string(w, x, strlen(x))
	struct trace_header h = {
		.version_major = TRACE_FORMAT_VERSION_MAJOR,
		.version_minor = TRACE_FORMAT_VERSION_MINOR,
		.sources = TRACE_SRC_NVTX | TRACE_SRC_PYTHON,
		.clock_domain = "CLOCK_MONOTONIC",
		.wall_offset_ns = INT64_C(1700000000000000000),
		.hostname = "node-a",
		.pid = RC_PID,
		.rank = 1,
		.local_rank = 1,
		.cmdline = "python train.py",
		.start_ns = RC_START,
		.ncpus = 4,
		.gprof_version = "0.1.0",
		.world_size = 4,
		.dist_backend = "gloo",
	};
	int rc = trace_writer_header(w, &h);
	struct trace_process procs[] = {
		{RC_PID, 1, RC_START, RC_START + 90 * RC_MS, 0, S("python train.py"), 1, 1, 4, S("gloo")},
		{RC_PID + 1, RC_PID, RC_START + 10 * RC_MS, RC_START + 50 * RC_MS, TRACE_EXIT_KILLED,
		 S("worker"), 1, 1, 4, S("gloo")},
	};
	struct trace_thread th[] = {
		{.index = 0, .pid = RC_PID, .tid = RC_PID, .name_str = S("MainThread"),
		 .start_ns = RC_START, .end_ns = RC_START + 90 * RC_MS},
		{.index = 1, .pid = RC_PID, .tid = RC_PID + 7, .name_str = S("gloo worker"),
		 .start_ns = RC_START, .end_ns = RC_START + 90 * RC_MS},
		{.index = 2, .pid = RC_PID, .start_ns = RC_START, .end_ns = RC_START + 90 * RC_MS,
		 .kind = TRACE_TRACK_STREAM, .device = 0, .context = 1, .stream = 13},
	};
	for (size_t i = 0; rc == 0 && i < sizeof(procs) / sizeof(procs[0]); i++)
		rc = trace_writer_process(w, &procs[i]);
	for (size_t i = 0; rc == 0 && i < sizeof(th) / sizeof(th[0]); i++)
		rc = trace_writer_thread(w, &th[i]);
	const struct trace_event_ext allreduce = {.bytes = 4 << 20, .has_coll_seq = 1,
						  .coll_seq = 12, .pg_str = S("0"), .group_size = 4,
						  .dtype_str = S("float")};
	const struct trace_event_ext send = {.bytes = 1024, .has_coll_seq = 1, .coll_seq = 0,
					     .pg_str = S("0"), .group_size = 4,
					     .dtype_str = S("c10::BFloat16"), .has_peer = 1, .peer = 2};
	const struct trace_event_ext barrier = {.pg_str = S("default_pg"), .group_size = 4};
	const struct trace_event_ext kernel = {.correlation = 9, .grid = {2, 1, 1},
					       .block = {512, 1, 1}, .bytes = 1 << 20,
					       .has_coll_seq = 1, .coll_seq = 13, .pg_str = S("0"),
					       .group_size = 4, .dtype_str = S("float")};
	struct {
		const char *name;
		uint32_t thread;
		uint64_t start, dur;
		const struct trace_event_ext *ext;
	} ev[] = {
		{"gloo:all_reduce", 1, 5 * RC_MS, 20 * RC_MS, &allreduce},
		{"gloo:send", 1, 30 * RC_MS, 2 * RC_MS, &send},
		{"gloo:barrier", 0, 40 * RC_MS, 1 * RC_MS, &barrier},
		{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2, 50 * RC_MS, 3 * RC_MS, &kernel},
	};
	for (size_t i = 0; rc == 0 && i < sizeof(ev) / sizeof(ev[0]); i++) {
		uint32_t desc = trace_writer_desc(w, S(ev[i].name), 0, 0, TRACE_EV_COMMUNICATION);
		struct trace_event e = {RC_START + ev[i].start, ev[i].dur, desc, ev[i].thread, 0,
					ev[i].ext};
		rc = desc ? trace_writer_event(w, &e) : -1;
	}
#undef S
	if (trace_writer_close(w, RC_START + 100 * RC_MS) < 0)
		rc = -1;
	return rc;
}

static void test_roundtrip_rank_comms(void **state)
{
	(void)state;
	roundtrip(write_rank_comms);
	/* the values themselves */
	struct got g;
	reimported(write_rank_comms, "rc", &g);
	assert_int_equal(g.h.rank, 1);
	assert_int_equal(g.h.local_rank, 1);
	assert_int_equal(g.h.world_size, 4);
	assert_string_equal(g.backend, "gloo");
	assert_int_equal(g.nprocs, 2);
	assert_int_equal(g.procs[1].exit_status, TRACE_EXIT_KILLED);
	assert_int_equal(g.procs[1].rank, 1);
	assert_int_equal(g.procs[1].local_rank, 1);
	assert_int_equal(g.procs[1].world_size, 4);
	const struct got_event *e = chk_find(&g, "gloo:all_reduce", 0);
	assert_int_equal(e->type, TRACE_EV_COMMUNICATION);
	assert_int_equal(e->ext.bytes, 4 << 20);
	assert_int_equal(e->ext.coll_seq, 12);
	assert_string_equal(e->pg, "0");
	assert_string_equal(e->dtype, "float");
	assert_int_equal(e->ext.group_size, 4);
	e = chk_find(&g, "gloo:send", 0);
	assert_int_equal(e->ext.has_peer, 1);
	assert_int_equal(e->ext.peer, 2);
	assert_int_equal(e->ext.has_coll_seq, 1);
	assert_int_equal(e->ext.coll_seq, 0);
	assert_string_equal(e->dtype, "c10::BFloat16");
	e = chk_find(&g, "gloo:barrier", 0);
	assert_int_equal(e->ext.bytes, 0);
	assert_int_equal(e->ext.has_coll_seq, 0);
	assert_string_equal(e->pg, "default_pg");
	e = chk_find(&g, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0);
	assert_int_equal(chk_thread_of(&g, e)->t.kind, TRACE_TRACK_STREAM);
	assert_int_equal(e->ext.coll_seq, 13);
	assert_int_equal(e->ext.bytes, 1 << 20);
	chk_free(&g);
}

static int teardown(void **state)
{
	(void)state;
	chk_cleanup();
	fix_cleanup();
	return 0;
}

/* GPDL_IMPORT_SEEDS=DIR: the three fixtures' exports, as fuzz_import's
 * seed corpus. */
static int write_seeds(const char *dir)
{
	static const struct {
		const char *name;
		int (*write)(const char *path);
	} seeds[] = {
		{"export-host", fix_write}, {"export-gpu", fix_write_gpu},
		{"export-lifetimes", write_lifetimes}, {"export-ops", fix_write_ops},
		{"export-rank-comms", write_rank_comms},
	};
	int rc = 0;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char *trace = chk_path("seed.gpdl"), *json = chk_path("seed.json");
		if (seeds[i].write(trace) != 0) {
			rc = 1;
		} else {
			export_chrome(trace, json);
			FILE *f = fopen(json, "rb");
			char *text = NULL;
			long n = -1;
			if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
			    fseek(f, 0, SEEK_SET) == 0) {
				text = malloc((size_t)n + 1);
				if (!text || fread(text, 1, (size_t)n, f) != (size_t)n)
					n = -1;
			}
			if (f)
				fclose(f);
			if (n < 0 || chk_write_seed(dir, seeds[i].name, text, (size_t)n) != 0)
				rc = 1;
			free(text);
		}
		unlink(trace);
		unlink(json);
		free(trace);
		free(json);
	}
	chk_cleanup();
	fix_cleanup();
	return rc;
}

int main(void)
{
	const char *seeds = getenv("GPDL_IMPORT_SEEDS");
	if (seeds && *seeds)
		return write_seeds(seeds);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_host),
		cmocka_unit_test(test_roundtrip_gpu),
		cmocka_unit_test(test_roundtrip_ops),
		cmocka_unit_test(test_roundtrip_lifetimes),
		cmocka_unit_test(test_roundtrip_rank_comms),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
