/*
 * test_trace.c - trace format v1: writer and reader round trips, and the
 * reader on files that are truncated, bit-flipped, forged or random.
 *
 * The damage tests hold the reader to its contract: any byte sequence gives
 * either an open error or a read that stops at a reported offset, having
 * delivered exactly the chunks before it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "formats/trace/trace.h"
#include "formats/trace/trace_format.h"

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
	static char buf[2][512];
	static int which;
	which ^= 1;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", tmpdir, name);
	return buf[which];
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc(n ? (size_t)n : 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return p;
}

static void spew(const char *path, const void *p, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	if (len)
		assert_int_equal(fwrite(p, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* ---- a visitor that keeps everything ------------------------------------------ */

struct got {
	int headers;
	struct trace_header hdr;
	struct trace_process procs[16];
	int nprocs;
	struct trace_thread threads[4096];
	int nthreads;
	const struct trace_thread *thread0; /* as first handed out */
	struct trace_event *ev;
	size_t nev, ev_cap;
	struct trace_counter ctr[64];
	int nctr;
	uint64_t drops;
	int ndrops;
	size_t stop_after; /* event callback returns 7 after this many; 0: never */
};

static int got_header(void *ctx, const struct trace_header *h)
{
	struct got *g = ctx;
	g->headers++;
	g->hdr = *h;
	return 0;
}

static int got_process(void *ctx, const struct trace_process *p)
{
	struct got *g = ctx;
	if (g->nprocs < 16)
		g->procs[g->nprocs++] = *p;
	return 0;
}

static int got_thread(void *ctx, const struct trace_thread *t)
{
	struct got *g = ctx;
	if (g->nthreads < 4096)
		g->threads[g->nthreads++] = *t;
	if (t->index == 0 && !g->thread0)
		g->thread0 = t;
	return 0;
}

static int got_event(void *ctx, const struct trace_event *e)
{
	struct got *g = ctx;
	if (g->nev == g->ev_cap) {
		g->ev_cap = g->ev_cap ? g->ev_cap * 2 : 1024;
		g->ev = realloc(g->ev, g->ev_cap * sizeof(*g->ev));
		assert_non_null(g->ev);
	}
	g->ev[g->nev++] = *e;
	return g->stop_after && g->nev == g->stop_after ? 7 : 0;
}

static int got_counter(void *ctx, const struct trace_counter *c)
{
	struct got *g = ctx;
	if (g->nctr < 64)
		g->ctr[g->nctr++] = *c;
	return 0;
}

static int got_drops(void *ctx, uint32_t thread, uint64_t dropped)
{
	struct got *g = ctx;
	(void)thread;
	g->drops += dropped;
	g->ndrops++;
	return 0;
}

static const struct trace_visitor got_visitor = {
	got_header, got_process, got_thread, got_event, got_counter, got_drops,
};

static void got_free(struct got *g)
{
	free(g->ev);
	memset(g, 0, sizeof(*g));
}

/* Opens and runs path; NULL when open failed (message in err). */
static struct trace_reader *read_all(const char *path, struct got *g, char *err, size_t errlen)
{
	struct trace_reader *r = trace_reader_open(path, err, errlen);
	if (!r)
		return NULL;
	assert_int_equal(trace_reader_run(r, &got_visitor, g), 0);
	return r;
}

/* ---- writing helpers ---------------------------------------------------------- */

static struct trace_writer *open_writer(const char *path)
{
	struct trace_writer *w;
	const struct trace_header h = {
		.sources = TRACE_SRC_NVTX | TRACE_SRC_PYTHON,
		.clock_domain = "CLOCK_MONOTONIC",
		.wall_offset_ns = -1234567890123LL,
		.hostname = "node-7",
		.pid = 4242,
		.rank = 3,
		.cmdline = "python train.py --epochs 2",
		.start_ns = 1000,
		.ncpus = 96,
		.gprof_version = "0.1.0",
	};

	w = trace_writer_open(path, 1);
	assert_non_null(w);
	assert_int_equal(trace_writer_header(w, &h), 0);
	return w;
}

static uint32_t add_thread(struct trace_writer *w, uint32_t index, uint32_t tid)
{
	struct trace_thread t = { .index = index, .pid = 4242, .tid = tid, .start_ns = 1000 };
	assert_int_equal(trace_writer_thread(w, &t), 0);
	return index;
}

static void add_event(struct trace_writer *w, uint32_t thread, uint32_t desc, uint64_t start,
		      uint64_t dur, uint8_t flags)
{
	struct trace_event e = { start, dur, desc, thread, flags };
	assert_int_equal(trace_writer_event(w, &e), 0);
}

/* A small trace whose every event is its own chunk, for the damage tests. */
static void write_small(const char *path)
{
	struct trace_writer *w = open_writer(path);
	uint32_t s = trace_writer_string(w, "step", 4);
	uint32_t d = trace_writer_desc(w, s, 0, 0, TRACE_EV_PROFILE_STEP);
	struct trace_process p = { 4242, 1, 1000, 0, -1, s };
	struct trace_counter c = { 2000, TRACE_CTR_CPU_PROCESS, 4242, 55.5 };

	assert_int_equal(trace_writer_process(w, &p), 0);
	add_thread(w, 0, 4242);
	add_thread(w, 1, 4243);
	for (int i = 0; i < 12; i++) {
		add_event(w, (uint32_t)i % 2, d, 1000 + (uint64_t)i * 10, 5, 0);
		if (i == 6) {
			assert_int_equal(trace_writer_counter(w, &c), 0);
			assert_int_equal(trace_writer_drops(w, 1, 3), 0);
		}
		assert_int_equal(trace_writer_flush(w), 0);
	}
	assert_int_equal(trace_writer_close(w, 9999), 0);
}

/* ---- crafting files by hand ----------------------------------------------------- */

struct craft {
	unsigned char buf[65536];
	size_t len;
};

static void craft_file_header(struct craft *c, uint16_t major, uint16_t minor)
{
	unsigned char *h = c->buf;
	memset(h, 0, TRACE_FILE_HEADER_SIZE);
	memcpy(h, TRACE_MAGIC, TRACE_MAGIC_LEN);
	trace_put16(h + TRACE_FH_VERSION_MAJOR, major);
	trace_put16(h + TRACE_FH_VERSION_MINOR, minor);
	trace_put32(h + TRACE_FH_HEADER_SIZE, TRACE_FILE_HEADER_SIZE);
	trace_put32(h + TRACE_FH_ENDIAN, TRACE_ENDIAN_TAG);
	trace_put32(h + TRACE_FH_CRC, (uint32_t)crc32(0L, h, TRACE_FH_CRC));
	c->len = TRACE_FILE_HEADER_SIZE;
}

static size_t craft_chunk(struct craft *c, uint32_t type, const void *payload, uint32_t len)
{
	unsigned char *h = c->buf + c->len;
	size_t off = c->len;

	assert_true(c->len + TRACE_CHUNK_HEADER_SIZE + len <= sizeof(c->buf));
	trace_put32(h + TRACE_CH_TYPE, type);
	trace_put32(h + TRACE_CH_LENGTH, len);
	trace_put32(h + TRACE_CH_FLAGS, 0);
	if (len)
		memcpy(h + TRACE_CHUNK_HEADER_SIZE, payload, len);
	trace_put32(h + TRACE_CH_CRC,
		    (uint32_t)crc32(crc32(0L, h, TRACE_CH_CRC), h + TRACE_CHUNK_HEADER_SIZE, len));
	c->len += TRACE_CHUNK_HEADER_SIZE + len;
	return off;
}

/* Header, one string "x", META, one desc, one thread: a base for forgeries. */
static void craft_base(struct craft *c)
{
	unsigned char strs[] = { 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 'x' };
	unsigned char meta[TRACE_META_SIZE] = { 0 };
	unsigned char desc[8 + TRACE_DESC_SIZE] = { 1, 0, 0, 0, TRACE_DESC_SIZE, 0, 0, 0,
						    1, 0, 0, 0, 1, 0, 0, 0 };
	unsigned char thrd[8 + TRACE_THREAD_SIZE] = { 1, 0, 0, 0, TRACE_THREAD_SIZE, 0, 0, 0 };

	craft_file_header(c, TRACE_FORMAT_VERSION_MAJOR, TRACE_FORMAT_VERSION_MINOR);
	craft_chunk(c, TRACE_CHUNK_STRINGS, strs, sizeof(strs));
	trace_put32(meta + TRACE_META_HOST_STR, 1);
	craft_chunk(c, TRACE_CHUNK_META, meta, sizeof(meta));
	craft_chunk(c, TRACE_CHUNK_DESCS, desc, sizeof(desc));
	craft_chunk(c, TRACE_CHUNK_THREADS, thrd, sizeof(thrd));
}

static size_t craft_events(struct craft *c, uint32_t thread, uint32_t desc, int n)
{
	unsigned char p[TRACE_EVENTS_HEADER_SIZE + 8 * TRACE_EVENT_SIZE] = { 0 };
	assert_true(n <= 8);
	trace_put32(p, thread);
	trace_put32(p + 4, TRACE_EVENT_SIZE);
	trace_put64(p + 8, 100);
	for (int i = 0; i < n; i++) {
		unsigned char *e = p + TRACE_EVENTS_HEADER_SIZE + i * TRACE_EVENT_SIZE;
		trace_put64(e, 10);
		trace_put32(e + 8, (uint32_t)i);
		trace_put32(e + 12, desc);
	}
	return craft_chunk(c, TRACE_CHUNK_EVENTS, p,
			   TRACE_EVENTS_HEADER_SIZE + (uint32_t)n * TRACE_EVENT_SIZE);
}

static void craft_end(struct craft *c)
{
	unsigned char end[8] = { 0x10 };
	craft_chunk(c, TRACE_CHUNK_END, end, sizeof(end));
}

/* ---- round trips ----------------------------------------------------------------- */

static void test_round_trip(void **state)
{
	const char *path = tmp_path("rt.gpdl");
	struct trace_writer *w = open_writer(path);
	struct got g = { 0 };
	char err[256] = "";
	struct trace_reader *r;
	uint32_t s_step, s_fwd, s_dom, s_cat, s_cmd, s_main, s_worker, d_step, d_fwd, d_user;
	uint64_t off;
	(void)state;

	s_step = trace_writer_string(w, "ProfileStep#1", 13);
	s_fwd = trace_writer_string(w, "forward", 7);
	s_dom = trace_writer_string(w, "gprof-dl", 8);
	s_cat = trace_writer_string(w, "compute", 7);
	s_cmd = trace_writer_string(w, "python train.py --epochs 2", 26);
	s_main = trace_writer_string(w, "MainThread", 10);
	s_worker = trace_writer_string(w, "worker-1", 8);
	assert_int_equal(trace_writer_string(w, "forward", 7), s_fwd); /* interned */
	assert_true(s_step && s_fwd && s_dom && s_cat && s_cmd && s_main && s_worker);
	d_step = trace_writer_desc(w, s_step, s_dom, 1, TRACE_EV_PROFILE_STEP);
	d_fwd = trace_writer_desc(w, s_fwd, s_dom, 2, TRACE_EV_FORWARD);
	d_user = trace_writer_desc(w, s_fwd, 0, 0, TRACE_EV_USER_DEFINED);
	assert_int_equal(trace_writer_desc(w, s_fwd, s_dom, 2, TRACE_EV_FORWARD), d_fwd);
	assert_int_equal(d_step, 1);
	assert_int_equal(d_fwd, 2);
	assert_int_equal(d_user, 3);

	struct trace_category cat = { s_dom, 2, s_cat };
	assert_int_equal(trace_writer_category(w, &cat), 0);
	struct trace_process p = { 4242, 1, 1000, 0, -1, s_cmd };
	assert_int_equal(trace_writer_process(w, &p), 0);
	struct trace_thread t0 = { 0, 4242, 4242, s_main, 1000, 0 };
	struct trace_thread t1 = { 1, 4242, 4250, 0, 1500, 0 };
	assert_int_equal(trace_writer_thread(w, &t0), 0);
	assert_int_equal(trace_writer_thread(w, &t1), 0);

	add_event(w, 0, d_fwd, 2000, 300, 0);
	add_event(w, 1, d_user, 2100, 0, TRACE_EVF_MARK);
	add_event(w, 0, d_step, 1900, 1000, TRACE_EVF_OPEN_AT_EXIT);
	struct trace_counter c1 = { 2500, TRACE_CTR_CPU_PROCESS, 4242, 123.25 };
	struct trace_counter c2 = { 2500, TRACE_CTR_CPU_SYSTEM, 0, 0.1 };
	assert_int_equal(trace_writer_counter(w, &c1), 0);
	assert_int_equal(trace_writer_counter(w, &c2), 0);
	assert_int_equal(trace_writer_drops(w, 1, 17), 0);
	assert_int_equal(trace_writer_drops(w, 0, 5), 0);
	/* the worker is renamed and ends; the process ends */
	t1.name_str = s_worker;
	t1.end_ns = 3000;
	assert_int_equal(trace_writer_thread(w, &t1), 0);
	p.end_ns = 4000;
	p.exit_status = 137;
	assert_int_equal(trace_writer_process(w, &p), 0);
	assert_true(trace_writer_bytes(w) >= TRACE_FILE_HEADER_SIZE);
	assert_int_equal(trace_writer_close(w, 5000), 0);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, &off));

	const struct trace_header *h = trace_reader_header(r);
	assert_int_equal(g.headers, 1);
	assert_int_equal(h->version_major, TRACE_FORMAT_VERSION_MAJOR);
	assert_int_equal(h->version_minor, TRACE_FORMAT_VERSION_MINOR);
	assert_int_equal(h->sources, TRACE_SRC_NVTX | TRACE_SRC_PYTHON);
	assert_string_equal(h->clock_domain, "CLOCK_MONOTONIC");
	assert_true(h->wall_offset_ns == -1234567890123LL);
	assert_string_equal(h->hostname, "node-7");
	assert_int_equal(h->pid, 4242);
	assert_int_equal(h->rank, 3);
	assert_string_equal(h->cmdline, "python train.py --epochs 2");
	assert_int_equal(h->start_ns, 1000);
	assert_int_equal(h->end_ns, 5000);
	assert_int_equal(h->ncpus, 96);
	assert_string_equal(h->gprof_version, "0.1.0");
	assert_string_equal(g.hdr.hostname, "node-7"); /* the callback saw it too */

	assert_int_equal(trace_reader_desc_count(r), 3);
	const struct trace_desc *d = trace_reader_desc(r, d_fwd);
	assert_non_null(d);
	assert_int_equal(d->id, d_fwd);
	assert_string_equal(trace_reader_string(r, d->name_str), "forward");
	assert_string_equal(trace_reader_string(r, d->domain_str), "gprof-dl");
	assert_int_equal(d->category, 2);
	assert_int_equal(d->type, TRACE_EV_FORWARD);
	assert_int_equal(trace_reader_desc(r, d_user)->domain_str, 0);
	assert_null(trace_reader_desc(r, 0));
	assert_null(trace_reader_desc(r, 4));
	assert_string_equal(trace_reader_string(r, 0), "");
	assert_string_equal(trace_reader_string(r, 999999), "");
	assert_string_equal(trace_reader_category_name(r, s_dom, 2), "compute");
	assert_null(trace_reader_category_name(r, s_dom, 3));
	assert_null(trace_reader_category_name(r, 0, 2));

	assert_int_equal(trace_reader_process_count(r), 1);
	assert_int_equal(g.nprocs, 2);
	const struct trace_process *rp = trace_reader_process(r, 0);
	assert_int_equal(rp->pid, 4242);
	assert_int_equal(rp->ppid, 1);
	assert_int_equal(rp->start_ns, 1000);
	assert_int_equal(rp->end_ns, 4000);
	assert_int_equal(rp->exit_status, 137);
	assert_string_equal(trace_reader_string(r, rp->cmdline_str), "python train.py --epochs 2");
	assert_null(trace_reader_process(r, 1));

	assert_int_equal(trace_reader_thread_count(r), 2);
	assert_int_equal(g.nthreads, 3); /* the worker twice */
	const struct trace_thread *rt = trace_reader_thread(r, 1);
	assert_int_equal(rt->index, 1);
	assert_int_equal(rt->pid, 4242);
	assert_int_equal(rt->tid, 4250);
	assert_string_equal(trace_reader_string(r, rt->name_str), "worker-1");
	assert_int_equal(rt->start_ns, 1500);
	assert_int_equal(rt->end_ns, 3000);
	assert_string_equal(trace_reader_string(r, trace_reader_thread(r, 0)->name_str),
			    "MainThread");
	assert_null(trace_reader_thread(r, 2));

	assert_int_equal(g.nev, 3);
	/* per thread in write order; thread order follows flush order */
	int seen = 0;
	for (size_t i = 0; i < g.nev; i++) {
		const struct trace_event *e = &g.ev[i];
		if (e->desc == d_fwd) {
			assert_int_equal(e->thread, 0);
			assert_int_equal(e->start_ns, 2000);
			assert_int_equal(e->dur_ns, 300);
			assert_int_equal(e->flags, 0);
			assert_int_equal(seen, 0);
			seen |= 1;
		} else if (e->desc == d_step) {
			assert_int_equal(e->thread, 0);
			assert_int_equal(e->start_ns, 1900);
			assert_int_equal(e->dur_ns, 1000);
			assert_int_equal(e->flags, TRACE_EVF_OPEN_AT_EXIT);
			seen |= 2;
		} else {
			assert_int_equal(e->desc, d_user);
			assert_int_equal(e->thread, 1);
			assert_int_equal(e->start_ns, 2100);
			assert_int_equal(e->dur_ns, 0);
			assert_int_equal(e->flags, TRACE_EVF_MARK);
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);

	assert_int_equal(g.nctr, 2);
	assert_int_equal(g.ctr[0].ts_ns, 2500);
	assert_int_equal(g.ctr[0].id, TRACE_CTR_CPU_PROCESS);
	assert_int_equal(g.ctr[0].pid, 4242);
	assert_true(g.ctr[0].value == 123.25);
	assert_int_equal(g.ctr[1].id, TRACE_CTR_CPU_SYSTEM);
	assert_int_equal(g.ctr[1].pid, 0);
	assert_true(g.ctr[1].value == 0.1);
	assert_int_equal(g.drops, 22);
	assert_int_equal(g.ndrops, 2);
	assert_int_equal(trace_reader_total_drops(r), 22);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(trace_reader_file_size(r), (uint64_t)st.st_size);

	trace_reader_close(r);
	got_free(&g);
}

static void test_many_threads(void **state)
{
	const char *path = tmp_path("threads.gpdl");
	struct trace_writer *w = open_writer(path);
	enum { NT = 2000, PER = 40 };
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	uint32_t d[5];
	static uint32_t next[NT];
	(void)state;

	for (int i = 0; i < 5; i++) {
		char name[16];
		int n = snprintf(name, sizeof(name), "op%d", i);
		d[i] = trace_writer_desc(w, trace_writer_string(w, name, (size_t)n), 0, 0,
					 TRACE_EV_OPERATOR);
	}
	for (uint32_t t = 0; t < NT; t++)
		add_thread(w, t, 10000 + t);
	/* interleaved, as a drain of many rings delivers them */
	for (uint32_t i = 0; i < PER; i++) {
		for (uint32_t t = 0; t < NT; t++)
			add_event(w, t, d[(t + i) % 5], (uint64_t)t * 1000000 + i * 100, t + i, 0);
		if (i == PER / 2)
			assert_int_equal(trace_writer_flush(w), 0);
	}
	/* half of the threads end, and give their buffers back at the next flush */
	for (uint32_t t = 0; t < NT; t += 2) {
		struct trace_thread th = { t, 4242, 10000 + t, 0, 1000, 99999999 };
		assert_int_equal(trace_writer_thread(w, &th), 0);
	}
	assert_int_equal(trace_writer_flush(w), 0);
	assert_int_equal(trace_writer_close(w, 1ull << 40), 0);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(trace_reader_thread_count(r), NT);
	assert_int_equal(g.nev, (size_t)NT * PER);
	for (size_t k = 0; k < g.nev; k++) {
		const struct trace_event *e = &g.ev[k];
		uint32_t t = e->thread, i = next[t]++;
		assert_true(t < NT);
		assert_int_equal(e->start_ns, (uint64_t)t * 1000000 + i * 100);
		assert_int_equal(e->dur_ns, t + i);
		assert_int_equal(e->desc, d[(t + i) % 5]);
	}
	for (uint32_t t = 0; t < NT; t++)
		assert_int_equal(next[t], PER);
	assert_int_equal(trace_reader_thread(r, 4)->end_ns, 99999999);
	/* the record handed out first is still the thread's, updated in place */
	assert_ptr_equal(g.thread0, trace_reader_thread(r, 0));
	assert_int_equal(g.thread0->end_ns, 99999999);
	assert_int_equal(trace_reader_thread(r, 5)->end_ns, 0);
	trace_reader_close(r);
	got_free(&g);
}

/* More buffered events than the writer keeps: it flushes every thread. */
static void test_writer_memory_cap(void **state)
{
	const char *path = tmp_path("cap.gpdl");
	struct trace_writer *w = open_writer(path);
	enum { NT = 400, PER = 3000 };
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	static uint32_t next[NT];
	uint32_t d;
	(void)state;

	d = trace_writer_desc(w, trace_writer_string(w, "k", 1), 0, 0, TRACE_EV_KERNEL);
	for (uint32_t t = 0; t < NT; t++)
		add_thread(w, t, t + 1);
	for (uint32_t i = 0; i < PER; i++)
		for (uint32_t t = 0; t < NT; t++)
			add_event(w, t, d, (uint64_t)i * 1000 + t, i, 0);
	assert_int_equal(trace_writer_close(w, 1), 0);
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(g.nev, (size_t)NT * PER);
	for (size_t k = 0; k < g.nev; k++) {
		uint32_t t = g.ev[k].thread, i = next[t]++;
		assert_int_equal(g.ev[k].start_ns, (uint64_t)i * 1000 + t);
		assert_int_equal(g.ev[k].dur_ns, i);
	}
	trace_reader_close(r);
	got_free(&g);
}

/* Starts more than 2^32 ns apart in one thread, arriving out of order. */
static void test_far_starts_and_long_durations(void **state)
{
	const char *path = tmp_path("far.gpdl");
	struct trace_writer *w = open_writer(path);
	const uint64_t starts[] = { 5, 5000000000ull, 4, 12000000000ull, 4294967295ull + 5,
				    4294967295ull + 6, 1ull << 50, 3, (1ull << 50) - 1,
				    UINT64_MAX - 10, 0 };
	const uint64_t durs[] = { 0, 1, 1ull << 32, (1ull << 32) + 5, 1ull << 40,
				  TRACE_EVENT_DUR_MAX, 7, 1, 2, 3, 4 };
	const size_t n = sizeof(starts) / sizeof(starts[0]);
	struct got g = { 0 };
	char err[256];
	uint32_t d;
	struct trace_reader *r;
	(void)state;

	d = trace_writer_desc(w, trace_writer_string(w, "r", 1), 0, 0, TRACE_EV_USER_DEFINED);
	add_thread(w, 0, 1);
	for (size_t i = 0; i < n; i++)
		add_event(w, 0, d, starts[i], durs[i], (uint8_t)i);
	add_event(w, 0, d, 77, UINT64_MAX, 0); /* clamps to the 56-bit maximum */
	assert_int_equal(trace_writer_close(w, 1), 0);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(g.nev, n + 1);
	for (size_t i = 0; i < n; i++) {
		assert_true(g.ev[i].start_ns == starts[i]);
		assert_true(g.ev[i].dur_ns == durs[i]);
		assert_int_equal(g.ev[i].flags, i);
	}
	assert_true(g.ev[n].dur_ns == TRACE_EVENT_DUR_MAX);
	assert_int_equal(g.ev[n].start_ns, 77);
	trace_reader_close(r);
	got_free(&g);
}

static void test_marks_and_flags(void **state)
{
	const char *path = tmp_path("flags.gpdl");
	struct trace_writer *w = open_writer(path);
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	uint32_t d;
	(void)state;

	d = trace_writer_desc(w, trace_writer_string(w, "m", 1), 0, 0, TRACE_EV_USER_DEFINED);
	add_thread(w, 0, 1);
	for (unsigned f = 0; f < 256; f++)
		add_event(w, 0, d, 1000 + f, f & TRACE_EVF_MARK ? 0 : TRACE_EVENT_DUR_MAX - f,
			  (uint8_t)f);
	assert_int_equal(trace_writer_close(w, 1), 0);
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(g.nev, 256);
	for (unsigned f = 0; f < 256; f++) {
		assert_int_equal(g.ev[f].flags, f);
		assert_int_equal(g.ev[f].start_ns, 1000 + f);
		assert_true(g.ev[f].dur_ns == (f & TRACE_EVF_MARK ? 0 : TRACE_EVENT_DUR_MAX - f));
	}
	trace_reader_close(r);
	got_free(&g);
}

static void test_string_bytes(void **state)
{
	const char *path = tmp_path("strings.gpdl");
	struct trace_writer *w = open_writer(path);
	char all[255], *big;
	uint32_t s_all, s_empty, s_big, s_huge, s_nul, s_quote;
	char err[256];
	struct trace_reader *r;
	struct got g = { 0 };
	(void)state;

	for (int i = 0; i < 255; i++)
		all[i] = (char)(i + 1);
	big = malloc(TRACE_STRING_MAX + 100);
	assert_non_null(big);
	for (size_t i = 0; i < TRACE_STRING_MAX + 100; i++)
		big[i] = (char)('a' + i % 26);
	s_all = trace_writer_string(w, all, sizeof(all));
	s_empty = trace_writer_string(w, "", 0);
	s_big = trace_writer_string(w, big, 300000);
	s_huge = trace_writer_string(w, big, TRACE_STRING_MAX + 100);
	s_nul = trace_writer_string(w, "ab\0cd", 5);
	s_quote = trace_writer_string(w, "\"\\\n\xff\xfe", 5);
	assert_true(s_all && s_empty && s_big && s_huge && s_nul && s_quote);
	assert_int_equal(trace_writer_string(w, all, sizeof(all)), s_all);
	assert_int_equal(trace_writer_string(w, "", 0), s_empty);
	assert_int_not_equal(trace_writer_string(w, "ab", 2), s_nul);
	/* many distinct strings: the intern table grows */
	for (int i = 0; i < 20000; i++) {
		char s[32];
		int n = snprintf(s, sizeof(s), "name-%d", i);
		uint32_t id = trace_writer_string(w, s, (size_t)n);
		assert_int_equal(trace_writer_string(w, s, (size_t)n), id);
		trace_writer_desc(w, id, s_all, (uint32_t)i, (uint8_t)(i % TRACE_EV_TYPE_COUNT));
	}
	assert_int_equal(trace_writer_close(w, 1), 0);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(strlen(trace_reader_string(r, s_all)), 255);
	assert_memory_equal(trace_reader_string(r, s_all), all, 255);
	assert_string_equal(trace_reader_string(r, s_empty), "");
	assert_int_equal(strlen(trace_reader_string(r, s_big)), 300000);
	assert_memory_equal(trace_reader_string(r, s_big), big, 300000);
	assert_int_equal(strlen(trace_reader_string(r, s_huge)), TRACE_STRING_MAX);
	assert_string_equal(trace_reader_string(r, s_nul), "ab"); /* C strings end at NUL */
	assert_string_equal(trace_reader_string(r, s_quote), "\"\\\n\xff\xfe");
	assert_int_equal(trace_reader_desc_count(r), 20000);
	const struct trace_desc *d = trace_reader_desc(r, 12345);
	assert_string_equal(trace_reader_string(r, d->name_str), "name-12344");
	assert_int_equal(d->category, 12344);
	assert_int_equal(d->type, 12344 % TRACE_EV_TYPE_COUNT);
	trace_reader_close(r);
	got_free(&g);
	free(big);
}

/* ---- the size budget --------------------------------------------------------------- */

static void test_bytes_per_event(void **state)
{
	const char *path = tmp_path("size.gpdl");
	struct trace_writer *w = open_writer(path);
	enum { N = 200000 };
	uint32_t d[300];
	struct stat st;
	(void)state;

	for (int i = 0; i < 300; i++) {
		char s[32];
		int n = snprintf(s, sizeof(s), "operator_%d", i);
		d[i] = trace_writer_desc(w, trace_writer_string(w, s, (size_t)n), 0, 0,
					 TRACE_EV_OPERATOR);
	}
	for (uint32_t t = 0; t < 8; t++)
		add_thread(w, t, 100 + t);
	for (uint32_t i = 0; i < N; i++) {
		add_event(w, i % 8, d[i % 300], 1000000 + (uint64_t)i * 777, 500, 0);
		if (i % 10000 == 0) /* the launcher flushes periodically */
			assert_int_equal(trace_writer_flush(w), 0);
	}
	assert_int_equal(trace_writer_close(w, 1), 0);
	assert_int_equal(stat(path, &st), 0);
	print_message("bytes per event: %.2f\n", (double)st.st_size / N);
	assert_true((double)st.st_size / N <= 17.0); /* budget 24, design 16 + chunk overhead */
}

/* ---- damage ---------------------------------------------------------------------------- */

/* The events in EVNT chunks that lie wholly within the first len bytes. */
static size_t events_before(const unsigned char *f, size_t size, size_t len, size_t *damage_at)
{
	size_t off = TRACE_FILE_HEADER_SIZE, n = 0;

	while (off + TRACE_CHUNK_HEADER_SIZE <= size) {
		uint32_t type = trace_le32(f + off), clen = trace_le32(f + off + 4);
		size_t end = off + TRACE_CHUNK_HEADER_SIZE + clen;
		if (end > len)
			break;
		if (type == TRACE_CHUNK_EVENTS)
			n += (clen - TRACE_EVENTS_HEADER_SIZE) / TRACE_EVENT_SIZE;
		off = end;
	}
	*damage_at = off;
	return n;
}

static void test_truncation_everywhere(void **state)
{
	const char *path = tmp_path("trunc-src.gpdl"), *cut = tmp_path("trunc.gpdl");
	unsigned char *f;
	size_t size, total, at;
	(void)state;

	write_small(path);
	f = slurp(path, &size);
	total = events_before(f, size, size, &at);
	assert_int_equal(total, 12);
	assert_int_equal(at, size);
	for (size_t len = 0; len <= size; len++) {
		struct got g = { 0 };
		char err[256] = "";
		struct trace_reader *r;
		const char *why;
		uint64_t off = 0;
		size_t expect, expect_off;

		spew(cut, f, len);
		r = read_all(cut, &g, err, sizeof(err));
		if (len < TRACE_FILE_HEADER_SIZE) {
			assert_null(r);
			assert_non_null(strstr(err, "not a gprof-dl trace"));
			assert_non_null(strstr(err, cut));
			continue;
		}
		assert_non_null(r);
		expect = events_before(f, size, len, &expect_off);
		assert_int_equal(g.nev, expect);
		why = trace_reader_damage(r, &off);
		if (len == size) {
			assert_null(why);
		} else {
			assert_non_null(why);
			assert_int_equal(off, expect_off);
			if (expect_off == len)
				assert_string_equal(why, "no END chunk: recording was cut short");
			else
				assert_non_null(strstr(why, "truncated"));
		}
		for (size_t i = 0; i < g.nev; i++) /* delivered events are intact */
			assert_int_equal(g.ev[i].dur_ns, 5);
		trace_reader_close(r);
		got_free(&g);
	}
	free(f);
}

static void test_bit_flip_everywhere(void **state)
{
	const char *path = tmp_path("flip-src.gpdl"), *bad = tmp_path("flip.gpdl");
	unsigned char *f;
	size_t size;
	(void)state;

	write_small(path);
	f = slurp(path, &size);
	for (size_t i = 0; i < size; i++) {
		for (int bit = 0; bit < 8; bit++) {
			struct got g = { 0 };
			char err[256] = "";
			struct trace_reader *r;
			uint64_t off = 0;
			size_t ok_end;

			f[i] ^= (unsigned char)(1u << bit);
			spew(bad, f, size);
			f[i] ^= (unsigned char)(1u << bit);
			r = read_all(bad, &g, err, sizeof(err));
			if (!r) {
				assert_true(i < TRACE_FILE_HEADER_SIZE);
				assert_non_null(strstr(err, bad));
				continue;
			}
			assert_non_null(trace_reader_damage(r, &off));
			assert_true(off <= i); /* found at or before the flipped byte's chunk */
			/* everything before the damaged chunk was delivered */
			assert_int_equal(g.nev, events_before(f, size, off, &ok_end));
			trace_reader_close(r);
			got_free(&g);
		}
	}
	free(f);
}

/* The file as it was after the last flush, before close: no END chunk. */
static void test_no_end(void **state)
{
	const char *path = tmp_path("noend.gpdl");
	struct trace_writer *w = open_writer(path);
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	struct stat st;
	uint64_t off;
	uint32_t d;
	(void)state;

	d = trace_writer_desc(w, trace_writer_string(w, "x", 1), 0, 0, 0);
	add_thread(w, 0, 1);
	for (int i = 0; i < 10000; i++)
		add_event(w, 0, d, (uint64_t)i, 1, 0);
	assert_int_equal(trace_writer_flush(w), 0);
	assert_int_equal(stat(path, &st), 0);
	r = read_all(path, &g, err, sizeof(err)); /* while the writer is still open */
	assert_non_null(r);
	assert_int_equal(g.nev, 10000);
	assert_string_equal(trace_reader_damage(r, &off), "no END chunk: recording was cut short");
	assert_int_equal(off, (uint64_t)st.st_size);
	assert_int_equal(trace_reader_header(r)->end_ns, 0);
	assert_int_equal(trace_reader_header(r)->pid, 4242);
	trace_reader_close(r);
	got_free(&g);
	assert_int_equal(trace_writer_close(w, 1), 0);
}

static void test_not_a_trace(void **state)
{
	const char *path = tmp_path("text.txt");
	char err[256] = "", expect[600];
	struct craft c;
	(void)state;

	spew(path, "hello, this is not a trace at all\n", 34);
	assert_null(trace_reader_open(path, err, sizeof(err)));
	snprintf(expect, sizeof(expect), "'%s': not a gprof-dl trace (bad magic)", path);
	assert_string_equal(err, expect);

	spew(path, "", 0);
	assert_null(trace_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "not a gprof-dl trace"));
	assert_non_null(strstr(err, path));

	spew(path, TRACE_MAGIC "\1\0", TRACE_MAGIC_LEN + 2);
	assert_null(trace_reader_open(path, err, sizeof(err)));
	snprintf(expect, sizeof(expect), "'%s': not a gprof-dl trace (too short for a header)",
		 path);
	assert_string_equal(err, expect);

	assert_null(trace_reader_open(tmp_path("does-not-exist"), err, sizeof(err)));
	assert_non_null(strstr(err, "does-not-exist"));
	assert_null(trace_reader_open(tmpdir, err, sizeof(err))); /* a directory */

	/* versions outside [MIN, CURRENT] */
	craft_file_header(&c, TRACE_FORMAT_VERSION_MAJOR + 1, 0);
	spew(path, c.buf, c.len);
	assert_null(trace_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "unsupported trace format version 2.0"));
	craft_file_header(&c, 0, 9);
	spew(path, c.buf, c.len);
	assert_null(trace_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "unsupported trace format version 0.9"));
}

/* A later minor version: a bigger file header, unknown chunks, longer records. */
static void test_forward_compatible(void **state)
{
	const char *path = tmp_path("newer.gpdl");
	struct craft c;
	unsigned char xtra[40] = { 1, 2, 3 };
	unsigned char ev[TRACE_EVENTS_HEADER_SIZE + 2 * 24] = { 0 };
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	(void)state;

	/* header grown to 48 bytes by a 1.3 writer */
	craft_file_header(&c, TRACE_FORMAT_VERSION_MAJOR, 3);
	trace_put32(c.buf + TRACE_FH_HEADER_SIZE, 48);
	trace_put32(c.buf + TRACE_FH_FEATURES, 0x80000000u); /* an optional feature */
	memset(c.buf + 32, 0xee, 16);
	trace_put32(c.buf + TRACE_FH_CRC,
		    (uint32_t)crc32(crc32(0L, c.buf, TRACE_FH_CRC), c.buf + 32, 16));
	c.len = 48;
	{
		struct craft b;
		craft_base(&b);
		memcpy(c.buf + c.len, b.buf + 32, b.len - 32);
		c.len += b.len - 32;
	}
	craft_chunk(&c, TRACE_FOURCC('D', 'E', 'V', 'P'), xtra, sizeof(xtra));
	trace_put32(ev, 0);
	trace_put32(ev + 4, 24); /* records grew by 8 bytes */
	trace_put64(ev + 8, 1000);
	for (int i = 0; i < 2; i++) {
		unsigned char *e = ev + TRACE_EVENTS_HEADER_SIZE + i * 24;
		trace_put64(e, 50 | (uint64_t)TRACE_EVF_MARK << 56);
		trace_put32(e + 8, 7 + (uint32_t)i);
		trace_put32(e + 12, 1);
		memset(e + 16, 0xab, 8);
	}
	craft_chunk(&c, TRACE_CHUNK_EVENTS, ev, sizeof(ev));
	craft_end(&c);
	spew(path, c.buf, c.len);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(trace_reader_header(r)->version_minor, 3);
	assert_string_equal(trace_reader_header(r)->hostname, "x");
	assert_int_equal(g.nev, 2);
	assert_int_equal(g.ev[1].start_ns, 1008);
	assert_int_equal(g.ev[1].dur_ns, 50);
	assert_int_equal(g.ev[1].flags, TRACE_EVF_MARK);
	assert_int_equal(trace_reader_header(r)->end_ns, 0x10);
	trace_reader_close(r);
	got_free(&g);
}

/* Chunks whose checksums hold but whose contents lie. */
static void test_forged_chunks(void **state)
{
	const char *path = tmp_path("forged.gpdl");
	struct {
		const char *what;
		uint32_t type;
		unsigned char payload[64];
		uint32_t len;
	} cases[] = {
		{ "unknown desc", TRACE_CHUNK_EVENTS, { 0, 0, 0, 0, 16, 0, 0, 0, [16 + 12] = 2 }, 32 },
		{ "desc 0", TRACE_CHUNK_EVENTS, { 0, 0, 0, 0, 16, 0, 0, 0 }, 32 },
		{ "unknown thread", TRACE_CHUNK_EVENTS, { 1, 0, 0, 0, 16, 0, 0, 0, [16 + 12] = 1 }, 32 },
		{ "record size 0", TRACE_CHUNK_EVENTS, { 0 }, 32 },
		{ "ragged events", TRACE_CHUNK_EVENTS, { 0, 0, 0, 0, 16, 0, 0, 0, [16 + 12] = 1 }, 33 },
		{ "short events", TRACE_CHUNK_EVENTS, { 0 }, 15 },
		{ "count vs length", TRACE_CHUNK_DESCS, { 2, 0, 0, 0, 20, 0, 0, 0, 2 }, 28 },
		{ "huge count", TRACE_CHUNK_COUNTERS, { 0xff, 0xff, 0xff, 0xff, 24 }, 32 },
		{ "desc id gap", TRACE_CHUNK_DESCS, { 1, 0, 0, 0, 20, 0, 0, 0, 5 }, 28 },
		{ "desc string", TRACE_CHUNK_DESCS, { 1, 0, 0, 0, 20, 0, 0, 0, 2, 0, 0, 0, 9 }, 28 },
		{ "string id gap", TRACE_CHUNK_STRINGS, { 5, 0, 0, 0, 0, 0, 0, 0 }, 8 },
		{ "string past end", TRACE_CHUNK_STRINGS, { 2, 0, 0, 0, 1, 0, 0, 0, 9 }, 12 },
		{ "string count", TRACE_CHUNK_STRINGS, { 2, 0, 0, 0, 0xff, 0xff, 0, 0 }, 8 },
		{ "strings trail", TRACE_CHUNK_STRINGS, { 2, 0, 0, 0, 0, 0, 0, 0, 1 }, 9 },
		{ "thread skips", TRACE_CHUNK_THREADS, { 1, 0, 0, 0, 32, 0, 0, 0, 5 }, 40 },
		{ "thread string", TRACE_CHUNK_THREADS, { 1, 0, 0, 0, 32, 0, 0, 0, [20] = 7 }, 40 },
		{ "drops thread", TRACE_CHUNK_DROPS, { 1, 0, 0, 0, 16, 0, 0, 0, 3 }, 24 },
		{ "category string", TRACE_CHUNK_CATEGORIES, { 1, 0, 0, 0, 12, 0, 0, 0, 9 }, 20 },
		{ "process string", TRACE_CHUNK_PROCESSES, { 1, 0, 0, 0, 32, 0, 0, 0, [36] = 3 }, 40 },
		{ "small records", TRACE_CHUNK_PROCESSES, { 1, 0, 0, 0, 8, 0, 0, 0 }, 16 },
		{ "second META", TRACE_CHUNK_META, { 0 }, 48 },
		{ "short END", TRACE_CHUNK_END, { 0 }, 4 },
	};
	(void)state;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct craft c;
		struct got g = { 0 };
		char err[256];
		struct trace_reader *r;
		uint64_t off = 0;
		size_t at;

		craft_base(&c);
		craft_events(&c, 0, 1, 3);
		at = craft_chunk(&c, cases[k].type, cases[k].payload, cases[k].len);
		craft_events(&c, 0, 1, 2);
		craft_end(&c);
		spew(path, c.buf, c.len);
		r = read_all(path, &g, err, sizeof(err));
		assert_non_null(r);
		if (!trace_reader_damage(r, &off))
			fail_msg("forged chunk not detected: %s", cases[k].what);
		assert_int_equal(off, at);
		assert_int_equal(g.nev, 3);
		trace_reader_close(r);
		got_free(&g);
	}
}

static void test_damage_kinds(void **state)
{
	const char *path = tmp_path("kinds.gpdl");
	struct craft c;
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	uint64_t off;
	size_t at;
	(void)state;

	/* a garbage length */
	craft_base(&c);
	at = craft_events(&c, 0, 1, 1);
	trace_put32(c.buf + at + TRACE_CH_LENGTH, 0xfffffff0u);
	spew(path, c.buf, c.len);
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(strstr(trace_reader_damage(r, &off), "over the maximum"));
	assert_int_equal(off, at);
	trace_reader_close(r);
	got_free(&g);

	/* a checksum that does not match */
	craft_base(&c);
	at = craft_events(&c, 0, 1, 1);
	c.buf[at + TRACE_CHUNK_HEADER_SIZE + 20] ^= 1;
	craft_end(&c);
	spew(path, c.buf, c.len);
	r = read_all(path, &g, err, sizeof(err));
	assert_string_equal(trace_reader_damage(r, &off), "checksum mismatch");
	assert_int_equal(off, at);
	assert_int_equal(g.nev, 0);
	trace_reader_close(r);
	got_free(&g);

	/* bytes after END */
	craft_base(&c);
	craft_events(&c, 0, 1, 2);
	craft_end(&c);
	at = c.len;
	c.buf[c.len++] = 0;
	spew(path, c.buf, c.len);
	r = read_all(path, &g, err, sizeof(err));
	assert_string_equal(trace_reader_damage(r, &off), "data after the END chunk");
	assert_int_equal(off, at);
	assert_int_equal(g.nev, 2);
	trace_reader_close(r);
	got_free(&g);

	/* records before META */
	craft_file_header(&c, 1, 0);
	at = craft_events(&c, 0, 1, 1);
	craft_end(&c);
	spew(path, c.buf, c.len);
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(strstr(trace_reader_damage(r, &off), "no META"));
	assert_int_equal(off, at);
	assert_int_equal(g.headers, 1); /* the header callback always runs, with defaults */
	assert_int_equal(g.hdr.rank, -1);
	assert_string_equal(g.hdr.hostname, "");
	trace_reader_close(r);
	got_free(&g);

	/* a header only: open succeeds, the read finds no END */
	craft_file_header(&c, 1, 0);
	spew(path, c.buf, c.len);
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_string_equal(trace_reader_damage(r, &off), "no END chunk: recording was cut short");
	assert_int_equal(off, TRACE_FILE_HEADER_SIZE);
	trace_reader_close(r);
	got_free(&g);

	/* a damaged file header */
	craft_file_header(&c, 1, 0);
	c.buf[TRACE_FH_FEATURES] ^= 4;
	spew(path, c.buf, c.len);
	assert_null(trace_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "checksum"));
}

static void test_random_files(void **state)
{
	const char *path = tmp_path("random.gpdl");
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	(void)state;

	for (int k = 0; k < 3000; k++) {
		struct craft c;
		struct got g = { 0 };
		char err[256];
		struct trace_reader *r;
		size_t len;

#define RND() (seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17, seed)
		if (k % 3 == 0) { /* pure noise */
			len = RND() % 2048;
			for (size_t i = 0; i < len; i++)
				c.buf[i] = (unsigned char)RND();
			c.len = len;
		} else { /* a real start, then chunks with valid checksums and random contents */
			craft_base(&c);
			int n = (int)(RND() % 6);
			for (int j = 0; j < n; j++) {
				static const uint32_t types[] = {
					TRACE_CHUNK_META, TRACE_CHUNK_STRINGS, TRACE_CHUNK_DESCS,
					TRACE_CHUNK_CATEGORIES, TRACE_CHUNK_PROCESSES,
					TRACE_CHUNK_THREADS, TRACE_CHUNK_EVENTS,
					TRACE_CHUNK_COUNTERS, TRACE_CHUNK_DROPS, TRACE_CHUNK_END, 7,
				};
				unsigned char p[256];
				uint32_t plen = (uint32_t)(RND() % sizeof(p));
				for (uint32_t i = 0; i < plen; i++)
					p[i] = (unsigned char)(RND() % 4 ? RND() % 3 : RND());
				if (plen >= 8 && RND() % 2) /* plausible sub-headers */
					trace_put32(p + 4, (uint32_t)(RND() % 40));
				craft_chunk(&c, types[RND() % 11], p, plen);
			}
			if (RND() % 2)
				craft_end(&c);
		}
		spew(path, c.buf, c.len);
		r = read_all(path, &g, err, sizeof(err));
		if (r) {
			/* the queries stay in bounds whatever was read */
			for (uint32_t i = 0; i < trace_reader_desc_count(r); i++)
				(void)trace_reader_string(r, trace_reader_desc(r, i + 1)->name_str);
			for (size_t i = 0; i < g.nev; i++) {
				assert_non_null(trace_reader_desc(r, g.ev[i].desc));
				assert_non_null(trace_reader_thread(r, g.ev[i].thread));
			}
			trace_reader_close(r);
		} else {
			assert_true(err[0] != '\0');
		}
		got_free(&g);
	}
}

/* ---- writer edges --------------------------------------------------------------- */

static void test_writer_rejects(void **state)
{
	const char *path = tmp_path("rejects.gpdl");
	struct trace_writer *w;
	struct trace_event e = { 1, 1, 1, 0, 0 };
	struct trace_thread t = { 1, 1, 1, 0, 0, 0 };
	(void)state;

	w = open_writer(path);
	assert_null(trace_writer_open(path, 0)); /* exists, no force */
	assert_int_equal(errno, EEXIST);
	/* bad arguments fail alone; the writer carries on */
	assert_int_equal(trace_writer_event(w, &e), -1); /* no thread, no desc */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(trace_writer_thread(w, &t), -1); /* not dense */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(trace_writer_desc(w, 99, 0, 0, 0), 0); /* unknown string */
	assert_int_equal(trace_writer_drops(w, 0, 1), -1);
	struct trace_header h = { 0 };
	assert_int_equal(trace_writer_header(w, &h), -1); /* a second header */
	uint32_t d = trace_writer_desc(w, trace_writer_string(w, "a", 1), 0, 0, 0);
	assert_int_equal(d, 1);
	add_thread(w, 0, 1);
	for (int i = 0; i < 100; i++)
		add_event(w, 0, d, (uint64_t)i, 1, 0);
	assert_int_equal(trace_writer_close(w, 1), 0);
	struct got g = { .stop_after = 10 };
	char err[256];
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(trace_reader_run(r, &got_visitor, &g), 7);
	assert_int_equal(g.nev, 10);
	trace_reader_close(r);
	got_free(&g);

	/* a writer given no header still writes a readable file */
	w = trace_writer_open(path, 1);
	assert_non_null(w);
	assert_int_equal(trace_writer_close(w, 5), 0);
	g = (struct got){ 0 };
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(trace_reader_header(r)->rank, -1);
	assert_int_equal(trace_reader_header(r)->end_ns, 5);
	trace_reader_close(r);
	got_free(&g);
}

static void test_names(void **state)
{
	(void)state;
	const char *expect[] = { "UserDefined", "ProfileStep", "Dataloader", "Forward",
				 "Backward", "Optimization", "Operator", "OperatorInner",
				 "PythonOp", "CudaRuntime", "Kernel", "Memcpy", "Memset",
				 "Communication" };
	for (unsigned i = 0; i < TRACE_EV_TYPE_COUNT; i++) {
		assert_string_equal(trace_event_type_name(i), expect[i]);
		assert_int_equal(trace_event_type_is_device(i),
				 i == TRACE_EV_KERNEL || i == TRACE_EV_MEMCPY ||
					 i == TRACE_EV_MEMSET || i == TRACE_EV_COMMUNICATION);
	}
	assert_string_equal(trace_event_type_name(TRACE_EV_TYPE_COUNT), "?");
	assert_string_equal(trace_event_type_name(255), "?");
	assert_string_equal(trace_counter_name(TRACE_CTR_CPU_PROCESS), "CPU(Process)");
	assert_string_equal(trace_counter_name(TRACE_CTR_CPU_SYSTEM), "CPU(System)");
	assert_string_equal(trace_counter_name(TRACE_CTR_RSS_BYTES), "RSS");
	assert_string_equal(trace_counter_name(0), "?");
	assert_string_equal(trace_counter_name(99), "?");
}

static int setup(void **state)
{
	const char *base = getenv("TMPDIR");
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_trace.XXXXXX", base && *base ? base : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[600];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_many_threads),
		cmocka_unit_test(test_writer_memory_cap),
		cmocka_unit_test(test_far_starts_and_long_durations),
		cmocka_unit_test(test_marks_and_flags),
		cmocka_unit_test(test_string_bytes),
		cmocka_unit_test(test_bytes_per_event),
		cmocka_unit_test(test_truncation_everywhere),
		cmocka_unit_test(test_bit_flip_everywhere),
		cmocka_unit_test(test_no_end),
		cmocka_unit_test(test_not_a_trace),
		cmocka_unit_test(test_forward_compatible),
		cmocka_unit_test(test_forged_chunks),
		cmocka_unit_test(test_damage_kinds),
		cmocka_unit_test(test_random_files),
		cmocka_unit_test(test_writer_rejects),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
