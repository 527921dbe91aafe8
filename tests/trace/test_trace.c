/*
 * test_trace.c - trace format 1.x: writer and reader round trips (1.1's GPU
 * tracks, event details and devices included; 1.2's sequence numbers, input
 * shapes and samples; 1.3's ranks and collectives), a real 1.0 file, a 1.2
 * file, and the reader on files that are truncated, bit-flipped, forged or
 * random.
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
#include <zstd.h>

#include "formats/trace/trace.h"
#include "formats/trace/trace_format.h"
#include "tests/trace/fixture_v1_0.h"

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

/* An EVNZ chunk's payload as the EVNX payload it stands for, by the spec
 * (formats/trace/trace_format.h): decompressed, then record i's byte k from
 * column k. *len: in, the EVNZ payload's; out, the EVNX payload's. */
static unsigned char *evnz_expand(const unsigned char *z, uint32_t *len)
{
	size_t n = trace_le32(z);
	unsigned char *cols = malloc(n ? n : 1), *recs = malloc(n ? n : 1);
	assert_non_null(cols);
	assert_non_null(recs);
	assert_int_equal(ZSTD_decompress(cols, n, z + 4, *len - 4), n);
	uint32_t rs = trace_le32(cols + TRACE_EVX_RECORD_SIZE);
	size_t nrec = (n - TRACE_EVENTS_EXT_HEADER_SIZE) / rs;
	memcpy(recs, cols, TRACE_EVENTS_EXT_HEADER_SIZE);
	for (size_t i = 0; i < nrec; i++)
		for (uint32_t k = 0; k < rs; k++)
			recs[TRACE_EVENTS_EXT_HEADER_SIZE + i * rs + k] =
				cols[TRACE_EVENTS_EXT_HEADER_SIZE + k * nrec + i];
	free(cols);
	*len = (uint32_t)n;
	return recs;
}

/* A file with each EVNZ chunk as the EVNX chunk it stands for (checksums
 * not kept): what the layout tests look at. */
static unsigned char *slurp_plain(const char *path, size_t *len)
{
	size_t size, off = TRACE_FILE_HEADER_SIZE, n = TRACE_FILE_HEADER_SIZE;
	unsigned char *f = slurp(path, &size), *out = malloc(size + 1);
	assert_non_null(out);
	memcpy(out, f, TRACE_FILE_HEADER_SIZE);
	while (off + TRACE_CHUNK_HEADER_SIZE <= size) {
		uint32_t type = trace_le32(f + off), clen = trace_le32(f + off + 4), plen = clen;
		unsigned char *plain = NULL;
		const unsigned char *payload = f + off + TRACE_CHUNK_HEADER_SIZE;
		if (type == TRACE_CHUNK_EVENTS_EXT_Z) {
			payload = plain = evnz_expand(payload, &plen);
			type = TRACE_CHUNK_EVENTS_EXT;
		}
		out = realloc(out, n + TRACE_CHUNK_HEADER_SIZE + plen);
		assert_non_null(out);
		memcpy(out + n, f + off, TRACE_CHUNK_HEADER_SIZE);
		trace_put32(out + n, type);
		trace_put32(out + n + 4, plen);
		memcpy(out + n + TRACE_CHUNK_HEADER_SIZE, payload, plen);
		n += TRACE_CHUNK_HEADER_SIZE + plen;
		off += TRACE_CHUNK_HEADER_SIZE + clen;
		free(plain);
	}
	free(f);
	*len = n;
	return out;
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
	struct trace_event *ev; /* ev[i].ext is NULL: the details are in xev[i] */
	struct trace_event_ext *xev;
	unsigned char *hasx; /* the reader gave ev[i] details */
	size_t nev, ev_cap;
	struct trace_device devs[16];
	int ndevs;
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
		g->xev = realloc(g->xev, g->ev_cap * sizeof(*g->xev));
		g->hasx = realloc(g->hasx, g->ev_cap);
		assert_non_null(g->ev);
		assert_non_null(g->xev);
		assert_non_null(g->hasx);
	}
	g->ev[g->nev] = *e;
	g->ev[g->nev].ext = NULL;
	g->hasx[g->nev] = e->ext != NULL;
	if (e->ext)
		g->xev[g->nev] = *e->ext;
	else
		memset(&g->xev[g->nev], 0, sizeof(g->xev[g->nev]));
	g->nev++;
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

static int got_device(void *ctx, const struct trace_device *d)
{
	struct got *g = ctx;
	if (g->ndevs < 16)
		g->devs[g->ndevs++] = *d;
	return 0;
}

static const struct trace_visitor got_visitor = {
	got_header, got_process, got_thread, got_event, got_counter, got_drops, got_device,
};

static void got_free(struct got *g)
{
	free(g->ev);
	free(g->xev);
	free(g->hasx);
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

/* A writer on path in place, as the recorder writes (trace_writer_fdopen):
 * the file is readable at every flush, before the close. */
static struct trace_writer *open_in_place(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	struct trace_writer *w = trace_writer_fdopen(fd, 1);
	assert_non_null(w);
	return w;
}

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

	w = open_in_place(path);
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

static void add_ext_event(struct trace_writer *w, uint32_t thread, uint32_t desc, uint64_t start,
			  uint64_t dur, const struct trace_event_ext *x)
{
	struct trace_event e = { start, dur, desc, thread, 0, x };
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

static struct trace_writer *open_writer_dist(const char *path);

/* The same with 1.1's contents: a stream track, a device, events with details
 * (correlation = start + 7) between compact ones, each its own chunk. */
static void write_small_gpu(const char *path)
{
	struct trace_writer *w = open_writer_dist(path);
	uint32_t s = trace_writer_string(w, "gemm", 4);
	uint32_t dk = trace_writer_desc(w, s, 0, 0, TRACE_EV_KERNEL);
	uint32_t dl = trace_writer_desc(w, s, 0, 0, TRACE_EV_CUDA_RUNTIME);
	struct trace_thread st = { .index = 1, .pid = 4242, .start_ns = 1000,
				   .kind = TRACE_TRACK_STREAM, .device = 0, .context = 1, .stream = 7 };
	struct trace_device dev = { .id = 0, .name_str = s, .sm_count = 132, .warp_size = 32 };

	add_thread(w, 0, 4242);
	assert_int_equal(trace_writer_thread(w, &st), 0);
	assert_int_equal(trace_writer_device(w, &dev), 0);
	for (int i = 0; i < 12; i++) {
		uint64_t t0 = 1000 + (uint64_t)i * 10;
		struct trace_event_ext x = { .correlation = t0 + 7, .external_id = (uint64_t)i };
		if (i % 3 == 0) {
			add_event(w, 0, dl, t0, 5, 0);
		} else if (i % 3 == 1) {
			add_ext_event(w, 0, dl, t0, 5, &x);
		} else {
			x.grid[0] = 80, x.block[0] = 256, x.registers = 64, x.bytes = 1u << 20;
			x.copy_kind = TRACE_COPY_HTOD;
			add_ext_event(w, 1, dk, t0, 5, &x);
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

/* LCFG defining launch configuration 1: grid 8x1x1, block 256x1x1, 32 registers. */
static void craft_launch(struct craft *c)
{
	unsigned char l[8 + TRACE_LAUNCH_SIZE] = { 1, 0, 0, 0, TRACE_LAUNCH_SIZE, 0, 0, 0, 1 };
	trace_put32(l + 8 + 4, 8);
	trace_put32(l + 8 + 8, 1);
	trace_put32(l + 8 + 12, 1);
	trace_put32(l + 8 + 16, 256);
	trace_put32(l + 8 + 20, 1);
	trace_put32(l + 8 + 24, 1);
	trace_put32(l + 8 + 28, 32);
	craft_chunk(c, TRACE_CHUNK_LAUNCHES, l, sizeof(l));
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

/* The chunks of each type in a file, walked by their headers. */
static size_t count_chunks(const unsigned char *f, size_t size, uint32_t type)
{
	size_t off = TRACE_FILE_HEADER_SIZE, n = 0;
	while (off + TRACE_CHUNK_HEADER_SIZE <= size) {
		n += trace_le32(f + off) == type;
		off += TRACE_CHUNK_HEADER_SIZE + trace_le32(f + off + 4);
	}
	return n;
}

/* 2.0: a buffer whose durations fit 32 bits and desc ids 24 is written as
 * 12-byte EVNS records, one that does not as EVNT; both read back exactly,
 * flags included. */
static void test_short_events(void **state)
{
	const char *path = tmp_path("short.gpdl");
	struct trace_writer *w = open_writer(path);
	const uint64_t durs[] = { 0, 1, 500, UINT32_MAX - 1ull, UINT32_MAX };
	const uint8_t flags[] = { TRACE_EVF_MARK, 0, TRACE_EVF_START_END, 0x80, 0xff };
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	unsigned char *f;
	size_t size;
	uint32_t d[2];
	(void)state;

	d[0] = trace_writer_desc(w, trace_writer_string(w, "a", 1), 0, 0, TRACE_EV_OPERATOR);
	d[1] = trace_writer_desc(w, trace_writer_string(w, "b", 1), 0, 0, TRACE_EV_OPERATOR);
	add_thread(w, 0, 1);
	add_thread(w, 1, 2);
	for (int i = 0; i < 5; i++) /* thread 0: all fit */
		add_event(w, 0, d[i & 1], 1000 + (uint64_t)i * 1000000000ull, durs[i], flags[i]);
	add_event(w, 1, d[1], 2000, 7, TRACE_EVF_OPEN_AT_EXIT); /* thread 1: one too long */
	add_event(w, 1, d[0], 3000, UINT32_MAX + 1ull, 0);
	assert_int_equal(trace_writer_close(w, 1), 0);

	f = slurp_plain(path, &size);
	assert_int_equal(count_chunks(f, size, TRACE_CHUNK_EVENTS_SHORT), 1);
	assert_int_equal(count_chunks(f, size, TRACE_CHUNK_EVENTS), 1);
	assert_int_equal(trace_le16(f + TRACE_FH_VERSION_MAJOR), 3);
	assert_int_equal(trace_le16(f + TRACE_FH_VERSION_MINOR), 0);
	free(f);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(g.nev, 7);
	size_t k0 = 0, k1 = 0;
	for (size_t i = 0; i < g.nev; i++) {
		const struct trace_event *e = &g.ev[i];
		if (e->thread == 0) {
			assert_true(e->start_ns == 1000 + k0 * 1000000000ull);
			assert_true(e->dur_ns == durs[k0]);
			assert_int_equal(e->flags, flags[k0]);
			assert_int_equal(e->desc, d[k0 & 1]);
			k0++;
		} else {
			assert_int_equal(e->start_ns, k1 ? 3000 : 2000);
			assert_true(e->dur_ns == (k1 ? UINT32_MAX + 1ull : 7));
			assert_int_equal(e->flags, k1 ? 0 : TRACE_EVF_OPEN_AT_EXIT);
			assert_int_equal(e->desc, d[k1 ? 0 : 1]);
			k1++;
		}
	}
	assert_int_equal(k0, 5);
	assert_int_equal(k1, 2);
	trace_reader_close(r);
	got_free(&g);
}

/* A 1.3 file's EVNT events read as they did; a 2.0 EVNS chunk whose records
 * are longer than 12 bytes (a later version's field) reads its 12. */
static void test_v1_3_and_evns_records(void **state)
{
	const char *path = tmp_path("v1.3.gpdl");
	unsigned char strs[] = { 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 'x' };
	unsigned char meta[TRACE_META_SIZE] = { 0 };
	unsigned char desc[8 + TRACE_DESC_SIZE] = { 1, 0, 0, 0, TRACE_DESC_SIZE, 0, 0, 0,
						    1, 0, 0, 0, 1, 0, 0, 0 };
	unsigned char thrd[8 + TRACE_THREAD_SIZE] = { 1, 0, 0, 0, TRACE_THREAD_SIZE, 0, 0, 0 };
	unsigned char evs[TRACE_EVENTS_HEADER_SIZE + 2 * 16] = { 0 };
	struct craft c;
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	(void)state;

	craft_file_header(&c, 1, 3);
	craft_chunk(&c, TRACE_CHUNK_STRINGS, strs, sizeof(strs));
	craft_chunk(&c, TRACE_CHUNK_META, meta, sizeof(meta));
	craft_chunk(&c, TRACE_CHUNK_DESCS, desc, sizeof(desc));
	craft_chunk(&c, TRACE_CHUNK_THREADS, thrd, sizeof(thrd));
	craft_events(&c, 0, 1, 3);
	craft_end(&c);
	spew(path, c.buf, c.len);
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(trace_reader_header(r)->version_minor, 3);
	assert_int_equal(g.nev, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(g.ev[i].start_ns, 100 + i);
		assert_int_equal(g.ev[i].dur_ns, 10);
		assert_int_equal(g.ev[i].desc, 1);
		assert_int_equal(g.ev[i].flags, 0);
	}
	trace_reader_close(r);
	got_free(&g);

	craft_base(&c);
	trace_put32(evs + 4, 16);
	trace_put64(evs + 8, 1000);
	for (uint32_t i = 0; i < 2; i++) {
		unsigned char *e = evs + TRACE_EVENTS_HEADER_SIZE + i * 16;
		trace_put32(e + TRACE_EVS_START, 5 + i);
		trace_put32(e + TRACE_EVS_DUR, 0x12345678u + i);
		trace_put32(e + TRACE_EVS_DESC_FLAGS, 1u | (0x81u + i) << 24);
		trace_put32(e + 12, 0xdeadbeefu);
	}
	craft_chunk(&c, TRACE_CHUNK_EVENTS_SHORT, evs, sizeof(evs));
	craft_end(&c);
	spew(path, c.buf, c.len);
	memset(&g, 0, sizeof(g));
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(g.nev, 2);
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(g.ev[i].start_ns, 1005 + i);
		assert_int_equal(g.ev[i].dur_ns, 0x12345678u + i);
		assert_int_equal(g.ev[i].desc, 1);
		assert_int_equal(g.ev[i].flags, 0x81 + i);
		assert_int_equal(g.ev[i].thread, 0);
	}
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

/* ---- 1.1: GPU tracks, event details, devices ---------------------------------------- */

static struct trace_writer *open_writer_dist(const char *path)
{
	struct trace_writer *w;
	const struct trace_header h = {
		.sources = TRACE_SRC_NVTX | TRACE_SRC_CUPTI,
		.clock_domain = "CLOCK_MONOTONIC",
		.hostname = "node-8",
		.pid = 4242,
		.rank = 5,
		.start_ns = 1000,
		.ncpus = 8,
		.world_size = 16,
		.dist_backend = "nccl",
	};

	w = open_in_place(path);
	assert_non_null(w);
	assert_int_equal(trace_writer_header(w, &h), 0);
	return w;
}

static void assert_ext_equal(const struct trace_event_ext *a, const struct trace_event_ext *b)
{
	assert_int_equal(a->correlation, b->correlation);
	assert_int_equal(a->external_id, b->external_id);
	assert_int_equal(a->bytes, b->bytes);
	assert_int_equal(a->address, b->address);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(a->grid[i], b->grid[i]);
		assert_int_equal(a->block[i], b->block[i]);
	}
	assert_int_equal(a->registers, b->registers);
	assert_int_equal(a->static_smem, b->static_smem);
	assert_int_equal(a->dynamic_smem, b->dynamic_smem);
	assert_int_equal(a->device, b->device);
	assert_int_equal(a->copy_kind, b->copy_kind);
	assert_int_equal(a->src_kind, b->src_kind);
	assert_int_equal(a->dst_kind, b->dst_kind);
	assert_int_equal(a->is_async, b->is_async);
	assert_int_equal(a->total_allocated, b->total_allocated);
	assert_int_equal(a->has_seq, b->has_seq);
	assert_int_equal(a->seq_nr, b->has_seq ? b->seq_nr : 0);
	assert_int_equal(a->shapes_str, b->shapes_str);
	assert_int_equal(a->samples, b->samples);
	assert_int_equal(a->has_coll_seq, b->has_coll_seq);
	assert_true(a->coll_seq == (b->has_coll_seq ? b->coll_seq : 0));
	assert_int_equal(a->pg_str, b->pg_str);
	assert_int_equal(a->group_size, b->group_size);
	assert_int_equal(a->dtype_str, b->dtype_str);
	assert_int_equal(a->has_peer, b->has_peer);
	assert_int_equal(a->peer, b->has_peer ? b->peer : 0);
	assert_int_equal(a->sched_cpu_ns, b->sched_cpu_ns);
	assert_int_equal(a->sched_runq_ns, b->sched_cpu_ns ? b->sched_runq_ns : 0);
}

/* Details with every field set, each to a value that tells it from the others. */
static struct trace_event_ext ext_full(uint64_t k)
{
	struct trace_event_ext x = {
		.correlation = UINT64_C(0xc0ffee0000000000) + k,
		.external_id = UINT64_MAX - k,
		.bytes = (uint64_t)-(int64_t)(4096 + k),
		.address = UINT64_C(0x7f0000000000) + k * 256,
		.grid = { 1 + (uint32_t)k, 2, UINT32_MAX },
		.block = { 128, 4, 3 },
		.registers = 255,
		.static_smem = 48 * 1024,
		.dynamic_smem = 7,
		.device = -1,
		.copy_kind = TRACE_COPY_PTOP,
		.src_kind = TRACE_MEM_PINNED,
		.dst_kind = TRACE_MEM_MANAGED_STATIC,
		.is_async = 1,
		.total_allocated = UINT64_C(80) << 30,
		.has_seq = 1,
		.seq_nr = INT64_MIN + (int64_t)k, /* in the wide group */
		.shapes_str = 1,
		.samples = UINT64_MAX - 3 * k,
		.has_coll_seq = 1,
		.coll_seq = UINT64_MAX - 1 - k, /* the largest a u64 seq + 1 holds */
		.pg_str = 1,
		.group_size = UINT32_MAX - (uint32_t)k,
		.dtype_str = 1,
		.has_peer = 1,
		.peer = INT32_MAX - (int32_t)(k % 1000),
		.sched_cpu_ns = UINT64_MAX - 5 * k,
		.sched_runq_ns = UINT64_C(1) << 40 | k,
	};
	return x;
}

/* One event per detail group, alone, so that each group's zeroing is seen. */
static struct trace_event_ext ext_group(int group, uint64_t k)
{
	struct trace_event_ext f = ext_full(k), x = { 0 };

	switch (group) {
	case 0:
		x.correlation = f.correlation;
		break;
	case 1:
		x.external_id = f.external_id;
		break;
	case 2:
		memcpy(x.grid, f.grid, sizeof(x.grid));
		memcpy(x.block, f.block, sizeof(x.block));
		x.registers = f.registers;
		x.static_smem = f.static_smem;
		x.dynamic_smem = f.dynamic_smem;
		break;
	case 3:
		x.bytes = f.bytes;
		x.copy_kind = 200; /* unknown kinds pass through */
		x.src_kind = f.src_kind;
		x.dst_kind = 99;
		x.is_async = f.is_async;
		break;
	case 5: /* 1.2: sequence number 0 is one */
		x.has_seq = 1;
		break;
	case 6: /* torch's -1, in the wide group */
		x.has_seq = 1;
		x.seq_nr = -1;
		break;
	case 7:
		x.shapes_str = f.shapes_str;
		break;
	case 8:
		x.samples = f.samples;
		break;
	case 9: /* 1.3: collective call 0 with peer 0: both are ones */
		x.has_coll_seq = 1;
		x.pg_str = f.pg_str;
		x.group_size = 2;
		x.dtype_str = f.dtype_str;
		x.has_peer = 1;
		break;
	case 10: /* a process group alone: no sequence number, no peer */
		x.pg_str = f.pg_str;
		break;
	case 11: /* 2.1: a step's CPU and run-queue time */
		x.sched_cpu_ns = f.sched_cpu_ns;
		x.sched_runq_ns = f.sched_runq_ns;
		break;
	default:
		x.address = f.address;
		x.total_allocated = f.total_allocated;
		x.device = 3;
		break;
	}
	return x;
}

static void test_gpu_round_trip(void **state)
{
	const char *path = tmp_path("gpu.gpdl");
	struct trace_writer *w = open_writer_dist(path);
	struct got g = { 0 };
	char err[256] = "";
	struct trace_reader *r;
	enum { NX = 20000 }; /* several EVNX chunks per stream */
	uint32_t s_k, s_l, s_gpu, s_s7, d_k, d_l, d_op, d_mem;
	const struct trace_event_ext zero = { 0 };
	struct trace_event_ext full = ext_full(0);
	(void)state;

	s_k = trace_writer_string(w, "ampere_sgemm_128x64_tn", 22);
	s_l = trace_writer_string(w, "cudaLaunchKernel", 16);
	s_gpu = trace_writer_string(w, "NVIDIA H100 80GB HBM3", 21);
	s_s7 = trace_writer_string(w, "stream 7", 8);
	d_k = trace_writer_desc(w, s_k, 0, 0, TRACE_EV_KERNEL);
	d_l = trace_writer_desc(w, s_l, 0, 0, TRACE_EV_CUDA_RUNTIME);
	d_op = trace_writer_desc(w, s_k, 0, 0, TRACE_EV_OPERATOR);
	d_mem = trace_writer_desc(w, s_l, 0, 0, TRACE_EV_MEMORY);

	struct trace_thread host = { .index = 0, .pid = 4242, .tid = 4242, .start_ns = 1000 };
	struct trace_thread s7 = { .index = 1, .pid = 4242, .name_str = s_s7, .start_ns = 1000,
				   .kind = TRACE_TRACK_STREAM, .device = 2, .context = 9,
				   .stream = UINT64_C(0x123456789a) };
	struct trace_thread s13 = { .index = 2, .pid = 4242, .start_ns = 1000,
				    .kind = TRACE_TRACK_STREAM, .device = 0, .context = 1,
				    .stream = 13 };
	assert_int_equal(trace_writer_thread(w, &host), 0);
	assert_int_equal(trace_writer_thread(w, &s7), 0);
	assert_int_equal(trace_writer_thread(w, &s13), 0);
	struct trace_device dev = { 2,	  s_gpu, 132,	 2048,		1024, 32, 32, 65536,
				    65536, 233472, 49152, UINT64_C(85) << 30, 1980000, 9, 0 };
	struct trace_device dev0 = dev;
	dev0.id = 0;
	dev0.name_str = 0;
	assert_int_equal(trace_writer_device(w, &dev), 0);
	assert_int_equal(trace_writer_device(w, &dev0), 0);

	/* every field at once, each group alone, all-zero details, no details */
	add_ext_event(w, 1, d_k, 5000, 100, &full);
	for (int k = 0; k < 12; k++) {
		struct trace_event_ext x = ext_group(k, (uint64_t)k);
		add_ext_event(w, 2, d_k, 6000 + (uint64_t)k, 10, &x);
	}
	add_ext_event(w, 0, d_op, 7000, 10, &zero);
	add_event(w, 0, d_op, 7100, 10, 0);
	/* host details interleave with compact events; a stream's grow over many chunks */
	for (uint32_t i = 0; i < NX; i++) {
		struct trace_event_ext l = { .correlation = 100000 + i, .external_id = i / 2 };
		struct trace_event_ext kx = ext_full(i);
		kx.correlation = 100000 + i;
		if (i % 3 == 0)
			kx.address = kx.total_allocated = 0, kx.device = 0; /* no ALLOC group */
		add_event(w, 0, d_op, 10000 + (uint64_t)i * 100, 90, 0);
		add_ext_event(w, 0, d_l, 10000 + (uint64_t)i * 100 + 5, 20, &l);
		add_ext_event(w, 1, d_k, 10000 + (uint64_t)i * 100 + 30, 50, &kx);
		if (i == NX / 2)
			assert_int_equal(trace_writer_flush(w), 0);
	}
	struct trace_event_ext alloc = { .bytes = (uint64_t)-512, .address = 0xdead0000,
					 .device = -1, .dst_kind = TRACE_MEM_PINNED,
					 .total_allocated = 4096 };
	add_ext_event(w, 0, d_mem, 3000000, 0, &alloc);
	/* a stream ends: its record again, same kind */
	s7.end_ns = 9000000;
	assert_int_equal(trace_writer_thread(w, &s7), 0);
	dev.clock_khz = 1755000; /* a device described again: the later wins */
	assert_int_equal(trace_writer_device(w, &dev), 0);
	assert_int_equal(trace_writer_close(w, 9999999), 0);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));

	const struct trace_header *h = trace_reader_header(r);
	assert_int_equal(h->version_minor, TRACE_FORMAT_VERSION_MINOR);
	assert_int_equal(h->world_size, 16);
	assert_string_equal(h->dist_backend, "nccl");
	assert_int_equal(h->rank, 5);
	assert_int_equal(h->sources, TRACE_SRC_NVTX | TRACE_SRC_CUPTI);

	assert_int_equal(trace_reader_thread_count(r), 3);
	const struct trace_thread *t = trace_reader_thread(r, 0);
	assert_int_equal(t->kind, TRACE_TRACK_HOST);
	assert_int_equal(t->device, 0);
	assert_int_equal(t->stream, 0);
	t = trace_reader_thread(r, 1);
	assert_int_equal(t->kind, TRACE_TRACK_STREAM);
	assert_int_equal(t->device, 2);
	assert_int_equal(t->context, 9);
	assert_int_equal(t->stream, UINT64_C(0x123456789a));
	assert_int_equal(t->tid, 0);
	assert_int_equal(t->end_ns, 9000000);
	assert_string_equal(trace_reader_string(r, t->name_str), "stream 7");
	t = trace_reader_thread(r, 2);
	assert_int_equal(t->kind, TRACE_TRACK_STREAM);
	assert_int_equal(t->stream, 13);
	assert_int_equal(t->context, 1);

	assert_int_equal(trace_reader_device_count(r), 2);
	assert_int_equal(g.ndevs, 3);
	const struct trace_device *rd = trace_reader_device_by_id(r, 2);
	assert_non_null(rd);
	assert_ptr_equal(rd, trace_reader_device(r, 0));
	assert_string_equal(trace_reader_string(r, rd->name_str), "NVIDIA H100 80GB HBM3");
	assert_int_equal(rd->sm_count, 132);
	assert_int_equal(rd->max_threads_per_sm, 2048);
	assert_int_equal(rd->max_threads_per_block, 1024);
	assert_int_equal(rd->max_blocks_per_sm, 32);
	assert_int_equal(rd->warp_size, 32);
	assert_int_equal(rd->regs_per_sm, 65536);
	assert_int_equal(rd->regs_per_block, 65536);
	assert_int_equal(rd->smem_per_sm, 233472);
	assert_int_equal(rd->smem_per_block, 49152);
	assert_int_equal(rd->total_memory, UINT64_C(85) << 30);
	assert_int_equal(rd->clock_khz, 1755000);
	assert_int_equal(rd->cc_major, 9);
	assert_int_equal(rd->cc_minor, 0);
	assert_int_equal(g.devs[0].clock_khz, 1980000); /* as first delivered */
	assert_int_equal(trace_reader_device_by_id(r, 0)->name_str, 0);
	assert_null(trace_reader_device_by_id(r, 1));
	assert_null(trace_reader_device(r, 2));

	assert_int_equal(g.nev, 3 * NX + 1 + 12 + 2 + 1);
	size_t n_l = 0, n_k = 0, n_op = 0, groups_seen = 0;
	for (size_t i = 0; i < g.nev; i++) {
		const struct trace_event *e = &g.ev[i];
		const struct trace_event_ext *x = &g.xev[i];
		if (e->start_ns == 5000) {
			assert_true(g.hasx[i]);
			assert_int_equal(e->thread, 1);
			assert_int_equal(e->dur_ns, 100);
			assert_ext_equal(x, &full);
		} else if (e->start_ns >= 6000 && e->start_ns < 6012) {
			struct trace_event_ext want = ext_group((int)(e->start_ns - 6000),
								e->start_ns - 6000);
			assert_true(g.hasx[i]);
			assert_int_equal(e->thread, 2);
			assert_ext_equal(x, &want);
			groups_seen++;
		} else if (e->start_ns == 7000 || e->start_ns == 7100) {
			assert_false(g.hasx[i]); /* all-zero details are none */
			n_op++;
		} else if (e->start_ns == 3000000) {
			assert_true(g.hasx[i]);
			assert_int_equal(e->desc, d_mem);
			assert_int_equal(e->flags, 0);
			assert_ext_equal(x, &alloc);
			assert_true((int64_t)x->bytes == -512);
		} else if (e->desc == d_op) {
			assert_false(g.hasx[i]);
			assert_int_equal(e->thread, 0);
			assert_int_equal(e->dur_ns, 90);
			n_op++;
		} else if (e->desc == d_l) {
			uint64_t k = (e->start_ns - 10005) / 100;
			assert_true(g.hasx[i]);
			assert_int_equal(e->thread, 0);
			assert_int_equal(e->start_ns, 10005 + k * 100);
			assert_int_equal(x->correlation, 100000 + k);
			assert_int_equal(x->external_id, k / 2);
			assert_int_equal(x->grid[0] | x->block[0] | x->bytes | x->address, 0);
			n_l++;
		} else {
			uint64_t k = (e->start_ns - 10030) / 100;
			struct trace_event_ext want = ext_full(k);
			want.correlation = 100000 + k;
			if (k % 3 == 0)
				want.address = want.total_allocated = 0, want.device = 0;
			assert_int_equal(e->desc, d_k);
			assert_int_equal(e->thread, 1);
			assert_int_equal(e->dur_ns, 50);
			assert_true(g.hasx[i]);
			assert_ext_equal(x, &want);
			n_k++;
		}
	}
	assert_int_equal(n_l, NX);
	assert_int_equal(n_k, NX);
	assert_int_equal(n_op, NX + 2);
	assert_int_equal(groups_seen, 12);
	trace_reader_close(r);
	got_free(&g);
}

/* The payload length of the chunk whose payload is at p. */
static uint32_t trace_chunk_len(const unsigned char *p)
{
	return trace_le32(p - TRACE_CHUNK_HEADER_SIZE + TRACE_CH_LENGTH);
}

/* The chunks of a file, by type: how many, and the payload of the first. */
static size_t chunks_of(const unsigned char *f, size_t size, uint32_t type,
			const unsigned char **first)
{
	size_t off = TRACE_FILE_HEADER_SIZE, n = 0;

	*first = NULL;
	while (off + TRACE_CHUNK_HEADER_SIZE <= size) {
		uint32_t t = trace_le32(f + off), len = trace_le32(f + off + 4);
		if (t == type && !n++)
			*first = f + off + TRACE_CHUNK_HEADER_SIZE;
		off += TRACE_CHUNK_HEADER_SIZE + len;
	}
	return n;
}

/* EVNX bytes: ids as u32 offsets from the chunk's bases, launches as LCFG ids,
 * one LCFG record per distinct configuration; ids that do not fit one chunk's
 * u32 span start another, and every id reads back exactly. */
static void test_ext_layout(void **state)
{
	const char *path = tmp_path("layout.gpdl");
	struct trace_writer *w = open_writer_dist(path);
	const uint64_t corr[] = { 1000, 0, 1003, 1000 + TRACE_EXT_ID_SPAN_MAX };
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	const unsigned char *p;
	unsigned char *f;
	size_t size;
	uint32_t dk;
	(void)state;

	dk = trace_writer_desc(w, trace_writer_string(w, "k", 1), 0, 0, TRACE_EV_KERNEL);
	struct trace_thread s7 = { .index = 0, .kind = TRACE_TRACK_STREAM, .stream = 7 };
	assert_int_equal(trace_writer_thread(w, &s7), 0);
	/* two configurations; ids spanning exactly what a chunk holds; the event
	 * with no correlation is of another group set, so in a chunk of its own */
	for (int i = 0; i < 4; i++) {
		struct trace_event_ext x = { .correlation = corr[i], .external_id = 50 + (uint64_t)i,
					     .grid = { 80, 1, 1 }, .block = { 256, 1, 1 },
					     .registers = 64, .dynamic_smem = (uint32_t)(i == 2) };
		add_ext_event(w, 0, dk, 5000 + (uint64_t)i, 10, &x);
	}
	assert_int_equal(trace_writer_flush(w), 0);
	f = slurp_plain(path, &size);
	assert_int_equal(chunks_of(f, size, TRACE_CHUNK_LAUNCHES, &p), 1);
	assert_int_equal(trace_le32(p), 2); /* two configurations */
	assert_int_equal(trace_le32(p + 4), TRACE_LAUNCH_SIZE);
	const uint32_t l1[10] = { 1, 80, 1, 1, 256, 1, 1, 64, 0, 0 };
	for (int k = 0; k < 10; k++)
		assert_int_equal(trace_le32(p + 8 + 4 * k), l1[k]);
	assert_int_equal(trace_le32(p + 8 + TRACE_LAUNCH_SIZE), 2);
	assert_int_equal(trace_le32(p + 8 + TRACE_LAUNCH_SIZE + 36), 1); /* dynamic smem */
	assert_int_equal(chunks_of(f, size, TRACE_CHUNK_EVENTS_EXT, &p), 2);
	assert_int_equal(trace_le32(p + TRACE_EVX_THREAD), 0);
	assert_int_equal(trace_le32(p + TRACE_EVX_RECORD_SIZE), 28);
	assert_int_equal(trace_le64(p + TRACE_EVX_BASE), 5000);
	assert_int_equal(trace_le32(p + TRACE_EVX_GROUPS),
			 TRACE_EXTG_CORRELATION | TRACE_EXTG_EXTERNAL | TRACE_EXTG_LAUNCH);
	assert_int_equal(trace_le32(p + TRACE_EVX_RESERVED), 0);
	assert_int_equal(trace_le64(p + TRACE_EVX_CORR_BASE), 999);
	assert_int_equal(trace_le64(p + TRACE_EVX_EXT_BASE), 49);
	/* events 0, 2, 3: {start delta, correlation, external, launch} */
	const uint32_t want[3][4] = { { 0, 1, 1, 1 }, { 2, 4, 3, 2 }, { 3, UINT32_MAX, 4, 1 } };
	assert_int_equal(trace_chunk_len(p), TRACE_EVENTS_EXT_HEADER_SIZE + 3 * 28);
	for (int i = 0; i < 3; i++) {
		const unsigned char *e = p + TRACE_EVENTS_EXT_HEADER_SIZE + 28 * i;
		assert_int_equal(trace_le64(e), 10);
		assert_int_equal(trace_le32(e + 8), want[i][0]);
		assert_int_equal(trace_le32(e + 12), dk);
		for (int k = 0; k < 3; k++)
			assert_int_equal(trace_le32(e + 16 + 4 * k), want[i][1 + k]);
	}
	free(f);

	/* one past the span, either way, and the largest ids: new chunks */
	const uint64_t far[] = { 1000 + TRACE_EXT_ID_SPAN_MAX + 1, 999, UINT64_MAX, UINT64_MAX - 1, 1 };
	for (int i = 0; i < 5; i++) {
		struct trace_event_ext x = { .correlation = far[i], .external_id = far[4 - i] };
		add_ext_event(w, 0, dk, 6000 + (uint64_t)i, 10, &x);
	}
	assert_int_equal(trace_writer_close(w, 1), 0);
	f = slurp_plain(path, &size);
	assert_int_equal(chunks_of(f, size, TRACE_CHUNK_LAUNCHES, &p), 1);
	assert_int_equal(chunks_of(f, size, TRACE_CHUNK_EVENTS_EXT, &p), 2 + 5);
	free(f);
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(g.nev, 9);
	for (size_t i = 0; i < g.nev; i++) {
		const struct trace_event_ext *x = &g.xev[i];
		uint64_t k = g.ev[i].start_ns % 1000;
		assert_true(g.hasx[i]);
		if (g.ev[i].start_ns < 6000) {
			assert_true(x->correlation == corr[k]);
			assert_int_equal(x->external_id, 50 + k);
			assert_int_equal(x->grid[0], 80);
			assert_int_equal(x->block[0], 256);
			assert_int_equal(x->registers, 64);
			assert_int_equal(x->dynamic_smem, k == 2);
		} else {
			assert_true(x->correlation == far[k]);
			assert_true(x->external_id == far[4 - k]);
			assert_int_equal(x->grid[0] | x->registers, 0);
		}
	}
	trace_reader_close(r);
	got_free(&g);
}

/* ---- 1.2: sequence numbers, input shapes, samples ----------------------------------- */

/* The bytes of the 1.2 groups, and what the reader makes of them: operators
 * with and without a narrow sequence number and shapes, one whose number needs
 * the wide group, torch's -1, a step with its samples. */
static void test_seq_shapes_layout(void **state)
{
	const char *path = tmp_path("seq.gpdl");
	struct trace_writer *w = open_writer(path);
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	const unsigned char *p;
	unsigned char *f;
	size_t size;
	(void)state;

	uint32_t s_op = trace_writer_string(w, "aten::addmm", 11);
	uint32_t s_sh = trace_writer_string(w, "[[32, 64], [64]]", 16);
	uint32_t s_st = trace_writer_string(w, "ProfileStep#3", 13);
	uint32_t d_op = trace_writer_desc(w, s_op, 0, 0, TRACE_EV_OPERATOR);
	uint32_t d_st = trace_writer_desc(w, s_st, 0, 0, TRACE_EV_PROFILE_STEP);
	add_thread(w, 0, 4242);
	/* one group set: {seq, shapes}, the same set written three times */
	const struct trace_event_ext ops[3] = {
		{ .has_seq = 1, .seq_nr = 2794, .shapes_str = s_sh },
		{ .has_seq = 1, .seq_nr = 0, .shapes_str = s_sh },
		{ .has_seq = 1, .seq_nr = TRACE_EXT_SEQ_NARROW_MAX, .shapes_str = s_sh },
	};
	for (int i = 0; i < 3; i++)
		add_ext_event(w, 0, d_op, 5000 + (uint64_t)i * 10, 5, &ops[i]);
	assert_int_equal(trace_writer_flush(w), 0);
	f = slurp_plain(path, &size);
	assert_int_equal(chunks_of(f, size, TRACE_CHUNK_EVENTS_EXT, &p), 1);
	assert_int_equal(trace_le32(p + TRACE_EVX_RECORD_SIZE), 24);
	assert_int_equal(trace_le32(p + TRACE_EVX_GROUPS), TRACE_EXTG_SEQ | TRACE_EXTG_SHAPES);
	assert_int_equal(trace_chunk_len(p), TRACE_EVENTS_EXT_HEADER_SIZE + 3 * 24);
	const uint32_t want_seq[3] = { 2795, 1, UINT32_MAX - 1 };
	for (int i = 0; i < 3; i++) {
		const unsigned char *e = p + TRACE_EVENTS_EXT_HEADER_SIZE + 24 * i;
		assert_int_equal(trace_le32(e + 8), 10 * (uint32_t)i);
		assert_int_equal(trace_le32(e + 12), d_op);
		assert_int_equal(trace_le32(e + 16), want_seq[i]);
		assert_int_equal(trace_le32(e + 20), s_sh);
	}
	free(f);

	/* a number past the narrow range, a negative one: SEQ says "wide" */
	const struct trace_event_ext wide[2] = {
		{ .has_seq = 1, .seq_nr = TRACE_EXT_SEQ_NARROW_MAX + 1 },
		{ .has_seq = 1, .seq_nr = -1 },
	};
	/* a step with its samples; an operator with no number at all */
	const struct trace_event_ext step = { .samples = 64 };
	const struct trace_event_ext noseq = { .shapes_str = s_sh };
	for (int i = 0; i < 2; i++)
		add_ext_event(w, 0, d_op, 6000 + (uint64_t)i, 5, &wide[i]);
	add_ext_event(w, 0, d_st, 4000, 9000, &step);
	add_ext_event(w, 0, d_op, 7000, 5, &noseq);
	assert_int_equal(trace_writer_close(w, 1), 0);
	f = slurp_plain(path, &size);
	assert_int_equal(chunks_of(f, size, TRACE_CHUNK_EVENTS_EXT, &p), 4);
	free(f);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(trace_reader_header(r)->version_minor, TRACE_FORMAT_VERSION_MINOR);
	assert_int_equal(g.nev, 7);
	int seen = 0;
	for (size_t i = 0; i < g.nev; i++) {
		const struct trace_event_ext *x = &g.xev[i];
		uint64_t t = g.ev[i].start_ns;
		assert_true(g.hasx[i]);
		if (t >= 5000 && t < 5030) {
			assert_ext_equal(x, &ops[(t - 5000) / 10]);
			assert_string_equal(trace_reader_string(r, x->shapes_str), "[[32, 64], [64]]");
		} else if (t == 6000 || t == 6001) {
			assert_ext_equal(x, &wide[t - 6000]);
		} else if (t == 4000) {
			assert_ext_equal(x, &step);
			assert_int_equal(g.ev[i].desc, d_st);
			assert_int_equal(g.ev[i].dur_ns, 9000);
		} else {
			assert_int_equal(t, 7000);
			assert_ext_equal(x, &noseq);
			assert_int_equal(x->has_seq, 0);
		}
		seen++;
	}
	assert_int_equal(seen, 7);
	assert_int_equal(g.xev[0].seq_nr, 2794);
	trace_reader_close(r);
	got_free(&g);

	/* the writer refuses shapes that name no string */
	w = open_writer(path);
	d_op = trace_writer_desc(w, trace_writer_string(w, "x", 1), 0, 0, TRACE_EV_OPERATOR);
	add_thread(w, 0, 1);
	struct trace_event_ext bad = { .shapes_str = 999 };
	struct trace_event e = { 1000, 1, d_op, 0, 0, &bad };
	assert_int_equal(trace_writer_event(w, &e), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(trace_writer_close(w, 1), 0);
}

/* A small trace of 1.2 details, each event its own chunk, for the damage
 * tests: operators whose sequence number is start + 7 (narrow or wide), with
 * shapes, and steps with samples. */
static void write_small_ops(const char *path)
{
	struct trace_writer *w = open_writer(path);
	uint32_t s = trace_writer_string(w, "aten::mm", 8);
	uint32_t sh = trace_writer_string(w, "[[2, 3], [3, 4]]", 16);
	uint32_t d = trace_writer_desc(w, s, 0, 0, TRACE_EV_OPERATOR);
	uint32_t ds = trace_writer_desc(w, s, 0, 0, TRACE_EV_PROFILE_STEP);

	add_thread(w, 0, 4242);
	add_thread(w, 1, 4243);
	for (int i = 0; i < 12; i++) {
		uint64_t t0 = 1000 + (uint64_t)i * 10;
		struct trace_event_ext x = { .has_seq = 1, .seq_nr = (int64_t)t0 + 7,
					     .shapes_str = i % 2 ? sh : 0 };
		if (i % 4 == 3)
			x.seq_nr = -(int64_t)t0 - 7; /* wide */
		if (i % 3 == 2) {
			struct trace_event_ext st = { .samples = t0 + 7 };
			add_ext_event(w, (uint32_t)i % 2, ds, t0, 5, &st);
		} else {
			add_ext_event(w, (uint32_t)i % 2, d, t0, 5, &x);
		}
		assert_int_equal(trace_writer_flush(w), 0);
	}
	assert_int_equal(trace_writer_close(w, 9999), 0);
}

/* A file the 1.0 writer wrote reads as it always did, with 1.1's defaults. */
static void test_v1_0_file(void **state)
{
	const char *path = tmp_path("v1.0.gpdl");
	struct got g = { 0 };
	char err[256] = "";
	struct trace_reader *r;
	(void)state;

	spew(path, trace_v1_0_fixture, trace_v1_0_fixture_len);
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	const struct trace_header *h = trace_reader_header(r);
	assert_int_equal(h->version_major, 1);
	assert_int_equal(h->version_minor, 0);
	assert_int_equal(h->sources, TRACE_SRC_NVTX);
	assert_true(h->wall_offset_ns == 1700000000000000000LL);
	assert_string_equal(h->hostname, "v10-host");
	assert_string_equal(h->cmdline, "python old.py");
	assert_string_equal(h->gprof_version, "0.1.0");
	assert_int_equal(h->pid, 77);
	assert_int_equal(h->rank, -1);
	assert_int_equal(h->ncpus, 8);
	assert_int_equal(h->start_ns, 5000);
	assert_int_equal(h->end_ns, 9000);
	assert_int_equal(h->world_size, -1);
	assert_string_equal(h->dist_backend, "");

	assert_int_equal(trace_reader_process_count(r), 1);
	assert_int_equal(trace_reader_process(r, 0)->end_ns, 8000);
	assert_int_equal(trace_reader_process(r, 0)->exit_status, 0);
	assert_int_equal(trace_reader_thread_count(r), 2);
	for (uint32_t i = 0; i < 2; i++) {
		const struct trace_thread *t = trace_reader_thread(r, i);
		assert_int_equal(t->kind, TRACE_TRACK_HOST);
		assert_int_equal(t->device, 0);
		assert_int_equal(t->context, 0);
		assert_int_equal(t->stream, 0);
		assert_int_equal(t->tid, 77 + i);
	}
	assert_string_equal(trace_reader_string(r, trace_reader_thread(r, 0)->name_str), "main");
	assert_int_equal(trace_reader_thread(r, 1)->end_ns, 7000);
	assert_int_equal(trace_reader_device_count(r), 0);
	assert_null(trace_reader_device_by_id(r, 0));
	assert_int_equal(trace_reader_desc_count(r), 3);
	assert_int_equal(trace_reader_desc(r, 1)->type, TRACE_EV_PROFILE_STEP);
	assert_string_equal(trace_reader_string(r, trace_reader_desc(r, 3)->name_str),
			    "cudaLaunchKernel");
	assert_string_equal(trace_reader_category_name(r, trace_reader_desc(r, 2)->domain_str, 6),
			    "ops");

	static const struct {
		uint64_t start, dur;
		uint32_t desc, thread;
		uint8_t flags;
	} want[] = {
		{ 6000, 100, 3, 0, 0 }, { 5900, 300, 2, 0, 0 }, { 5500, 2000, 1, 0, 0 },
		{ 6100, 0, 2, 1, TRACE_EVF_MARK }, { 6200, 50, 3, 1, TRACE_EVF_START_END },
	};
	assert_int_equal(g.nev, 5);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(g.ev[i].start_ns, want[i].start);
		assert_int_equal(g.ev[i].dur_ns, want[i].dur);
		assert_int_equal(g.ev[i].desc, want[i].desc);
		assert_int_equal(g.ev[i].thread, want[i].thread);
		assert_int_equal(g.ev[i].flags, want[i].flags);
		assert_false(g.hasx[i]);
	}
	assert_int_equal(g.nctr, 1);
	assert_true(g.ctr[0].value == 42.5);
	assert_int_equal(trace_reader_total_drops(r), 4);
	trace_reader_close(r);
	got_free(&g);
}

/* ---- 1.3: ranks, collectives ------------------------------------------------------- */

/* A job's processes as the recorder marks them: a launcher of no rank, two
 * ranks (one killed), a DataLoader worker of rank 1; the header is rank 1's. */
static void test_ranks_round_trip(void **state)
{
	const char *path = tmp_path("ranks.gpdl");
	const struct trace_header h = {
		.clock_domain = "CLOCK_MONOTONIC", .hostname = "node-a", .pid = 102,
		.rank = 1, .local_rank = 1, .world_size = 2, .dist_backend = "gloo",
		.start_ns = 1000, .job_id = "torchelastic:abc",
	};
	struct trace_writer *w = trace_writer_open(path, 1);
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	(void)state;

	assert_non_null(w);
	assert_int_equal(trace_writer_header(w, &h), 0);
	uint32_t s_gloo = trace_writer_string(w, "gloo", 4);
	uint32_t s_nccl = trace_writer_string(w, "NCCL", 4);
	uint32_t s_job = trace_writer_string(w, "torchelastic:abc", 16);
	/* 2.1: rank 0 killed by signal 9, the worker exited with code 137 */
	const struct trace_process procs[4] = {
		{ 100, 1, 1000, 9000, 0, 0, -1, -1, -1, 0, 0, 0 },
		{ 101, 100, 1100, 8000, 137, 0, 0, 0, 2, s_gloo, 9, s_job },
		{ 102, 100, 1100, 8500, 0, 0, 1, 1, 2, s_gloo, 0, s_job },
		{ 103, 102, 1200, 8400, 137, 0, 1, 1, 2, s_gloo, 0, s_job },
	};
	for (int i = 0; i < 4; i++)
		assert_int_equal(trace_writer_process(w, &procs[i]), 0);
	/* the writer refuses a backend that names no string, and nothing else changes */
	struct trace_process bad = procs[2];
	bad.pid = 999;
	bad.backend_str = 99;
	assert_int_equal(trace_writer_process(w, &bad), -1);
	assert_int_equal(errno, EINVAL);
	bad.backend_str = s_gloo;
	bad.job_str = 99; /* nor a job that names none */
	assert_int_equal(trace_writer_process(w, &bad), -1);
	assert_int_equal(errno, EINVAL);
	/* a rank whose world grew: rank INT32_MAX - 1 of INT32_MAX, another backend */
	struct trace_process big = { 104, 100, 1300, 0, TRACE_EXIT_UNKNOWN, 0,
				     INT32_MAX - 1, 65535, INT32_MAX, s_nccl, 0, 0 };
	assert_int_equal(trace_writer_process(w, &big), 0);
	assert_int_equal(trace_writer_close(w, 9999), 0);

	unsigned char *f;
	size_t size;
	const unsigned char *p;
	f = slurp_plain(path, &size);
	assert_int_equal(chunks_of(f, size, TRACE_CHUNK_META, &p), 1);
	assert_int_equal(trace_chunk_len(p), TRACE_META_SIZE_2_1);
	assert_int_equal(trace_le32(p + TRACE_META_LOCAL_RANK), 1);
	uint32_t meta_job = trace_le32(p + TRACE_META_JOB_STR);
	assert_true(meta_job != 0);
	assert_int_equal(chunks_of(f, size, TRACE_CHUNK_PROCESSES, &p), 1);
	assert_int_equal(trace_le32(p), 5);
	assert_int_equal(trace_le32(p + 4), TRACE_PROCESS_SIZE_2_1);
	const unsigned char *p1 = p + TRACE_TABLE_HEADER_SIZE + TRACE_PROCESS_SIZE_2_1;
	assert_int_equal(trace_le32(p1 + 24), 137);
	assert_int_equal(trace_le32(p1 + TRACE_PROC_RANK), 0);
	assert_int_equal(trace_le32(p1 + TRACE_PROC_WORLD_SIZE), 2);
	assert_int_equal(trace_le32(p1 + TRACE_PROC_BACKEND_STR), s_gloo);
	assert_int_equal(trace_le32(p1 + TRACE_PROC_EXIT_SIGNAL), 9);
	assert_int_equal(trace_le32(p1 + TRACE_PROC_JOB_STR), s_job);
	assert_int_equal(trace_le32(p + TRACE_TABLE_HEADER_SIZE + TRACE_PROC_RANK), UINT32_MAX);
	assert_int_equal(trace_le32(p + TRACE_TABLE_HEADER_SIZE + TRACE_PROC_JOB_STR), 0);
	free(f);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	const struct trace_header *rh = trace_reader_header(r);
	assert_int_equal(rh->version_minor, TRACE_FORMAT_VERSION_MINOR);
	assert_int_equal(rh->rank, 1);
	assert_int_equal(rh->local_rank, 1);
	assert_int_equal(rh->world_size, 2);
	assert_string_equal(rh->dist_backend, "gloo");
	assert_string_equal(rh->job_id, "torchelastic:abc");
	assert_int_equal(g.hdr.local_rank, 1);
	assert_int_equal(trace_reader_process_count(r), 5);
	for (uint32_t i = 0; i < 5; i++) {
		const struct trace_process *want = i < 4 ? &procs[i] : &big, *got = trace_reader_process(r, i);
		assert_int_equal(got->pid, want->pid);
		assert_int_equal(got->ppid, want->ppid);
		assert_int_equal(got->exit_status, want->exit_status);
		assert_int_equal(got->rank, want->rank);
		assert_int_equal(got->local_rank, want->local_rank);
		assert_int_equal(got->world_size, want->world_size);
		assert_int_equal(got->backend_str, want->backend_str);
		assert_int_equal(got->exit_signal, want->exit_signal);
		assert_int_equal(got->job_str, want->job_str);
	}
	assert_int_equal(trace_reader_process(r, 1)->exit_status, 137);
	assert_string_equal(trace_reader_string(r, trace_reader_process(r, 2)->job_str), "torchelastic:abc");
	assert_string_equal(trace_reader_string(r, trace_reader_process(r, 3)->backend_str), "gloo");
	assert_string_equal(trace_reader_string(r, trace_reader_process(r, 4)->backend_str), "NCCL");
	trace_reader_close(r);
	got_free(&g);

	/* a writer given no header: local rank -1 like the rank */
	w = trace_writer_open(path, 1);
	assert_non_null(w);
	assert_int_equal(trace_writer_close(w, 5), 0);
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(trace_reader_header(r)->local_rank, -1);
	assert_string_equal(trace_reader_header(r)->job_id, "");
	trace_reader_close(r);
	got_free(&g);
}

/* The collective group's bytes, what the reader makes of them, and where the
 * writer puts it: only in chunks one of whose records has a collective field. */
static void test_collective_layout(void **state)
{
	const char *path = tmp_path("coll.gpdl");
	struct trace_writer *w = open_writer_dist(path);
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	unsigned char *f;
	size_t size;
	(void)state;

	uint32_t s_ar = trace_writer_string(w, "gloo:all_reduce", 15);
	uint32_t s_op = trace_writer_string(w, "aten::mm", 8);
	uint32_t s_pg = trace_writer_string(w, "0", 1);
	uint32_t s_f = trace_writer_string(w, "float", 5);
	uint32_t d_c = trace_writer_desc(w, s_ar, 0, 0, TRACE_EV_COMMUNICATION);
	uint32_t d_op = trace_writer_desc(w, s_op, 0, 0, TRACE_EV_OPERATOR);
	add_thread(w, 0, 4242); /* the main thread: operators */
	add_thread(w, 1, 4250); /* the process group's worker: collectives */
	/* all_reduce calls 0, 1, 2 of 4 MiB of floats; a barrier (no bytes);
	 * send to 1 and recv from 0 (calls 4, 5); a call whose number is not known */
	const struct trace_event_ext calls[7] = {
		{ .bytes = 4u << 20, .has_coll_seq = 1, .coll_seq = 0, .pg_str = s_pg,
		  .group_size = 2, .dtype_str = s_f },
		{ .bytes = 4u << 20, .has_coll_seq = 1, .coll_seq = 1, .pg_str = s_pg,
		  .group_size = 2, .dtype_str = s_f },
		{ .bytes = 4u << 20, .has_coll_seq = 1, .coll_seq = 2, .pg_str = s_pg,
		  .group_size = 2, .dtype_str = s_f },
		{ .has_coll_seq = 1, .coll_seq = 3, .pg_str = s_pg, .group_size = 2 },
		{ .bytes = 512, .has_coll_seq = 1, .coll_seq = 4, .pg_str = s_pg, .group_size = 2,
		  .dtype_str = s_f, .has_peer = 1, .peer = 1 },
		{ .bytes = 512, .has_coll_seq = 1, .coll_seq = 5, .pg_str = s_pg, .group_size = 2,
		  .dtype_str = s_f, .has_peer = 1, .peer = 0 },
		{ .bytes = 64, .group_size = 2 },
	};
	const struct trace_event_ext op = { .has_seq = 1, .seq_nr = 12, .external_id = 5 };
	for (int i = 0; i < 7; i++)
		add_ext_event(w, 1, d_c, 5000 + 100 * (uint64_t)i, 80, &calls[i]);
	add_ext_event(w, 0, d_op, 5000, 50, &op);
	/* the writer refuses what the group cannot hold, and ids that name no string */
	const struct trace_event_ext bad[4] = {
		{ .pg_str = 999 },
		{ .dtype_str = 999 },
		{ .has_peer = 1, .peer = -1 },
		{ .has_coll_seq = 1, .coll_seq = UINT64_MAX },
	};
	for (int i = 0; i < 4; i++) {
		struct trace_event e = { 6000, 1, d_c, 1, 0, &bad[i] };
		assert_int_equal(trace_writer_event(w, &e), -1);
		assert_int_equal(errno, EINVAL);
	}
	assert_int_equal(trace_writer_close(w, 9999), 0);

	/* two sets on the worker (with bytes, without) and one on the main thread:
	 * the operator's chunk has no collective group */
	f = slurp_plain(path, &size);
	int with = 0, without = 0;
	for (size_t off = TRACE_FILE_HEADER_SIZE; off + TRACE_CHUNK_HEADER_SIZE <= size;
	     off += TRACE_CHUNK_HEADER_SIZE + trace_le32(f + off + 4)) {
		const unsigned char *p = f + off + TRACE_CHUNK_HEADER_SIZE;
		uint32_t groups, rs;
		if (trace_le32(f + off) != TRACE_CHUNK_EVENTS_EXT)
			continue;
		groups = trace_le32(p + TRACE_EVX_GROUPS);
		rs = trace_le32(p + TRACE_EVX_RECORD_SIZE);
		if (trace_le32(p + TRACE_EVX_THREAD) == 0) {
			assert_int_equal(groups, TRACE_EXTG_EXTERNAL | TRACE_EXTG_SEQ);
			without++;
			continue;
		}
		assert_true(groups & TRACE_EXTG_COLLECTIVE);
		with++;
		if (!(groups & TRACE_EXTG_TRANSFER)) { /* the barrier */
			assert_int_equal(groups, TRACE_EXTG_COLLECTIVE);
			assert_int_equal(rs, 16 + 24);
			assert_int_equal(trace_chunk_len(p), TRACE_EVENTS_EXT_HEADER_SIZE + rs);
			continue;
		}
		assert_int_equal(groups, TRACE_EXTG_TRANSFER | TRACE_EXTG_COLLECTIVE);
		assert_int_equal(rs, 16 + 12 + 24);
		assert_int_equal(trace_chunk_len(p), TRACE_EVENTS_EXT_HEADER_SIZE + 6 * rs);
		/* {seq + 1, pg, group size, dtype, peer + 1} after the 12 bytes of TRANSFER */
		const uint32_t want[6][4] = { { s_pg, 2, s_f, 0 }, { s_pg, 2, s_f, 0 },
					      { s_pg, 2, s_f, 0 }, { s_pg, 2, s_f, 2 },
					      { s_pg, 2, s_f, 1 }, { 0, 2, 0, 0 } };
		const uint64_t want_seq[6] = { 1, 2, 3, 5, 6, 0 };
		for (int i = 0; i < 6; i++) {
			const unsigned char *e = p + TRACE_EVENTS_EXT_HEADER_SIZE + (size_t)i * rs;
			assert_int_equal(trace_le64(e + 16), calls[i < 3 ? i : i + 1].bytes);
			assert_int_equal(trace_le64(e + 28 + TRACE_COLL_SEQ), want_seq[i]);
			assert_int_equal(trace_le32(e + 28 + TRACE_COLL_PG_STR), want[i][0]);
			assert_int_equal(trace_le32(e + 28 + TRACE_COLL_GROUP_SIZE), want[i][1]);
			assert_int_equal(trace_le32(e + 28 + TRACE_COLL_DTYPE_STR), want[i][2]);
			assert_int_equal(trace_le32(e + 28 + TRACE_COLL_PEER), want[i][3]);
		}
	}
	assert_int_equal(with, 2);
	assert_int_equal(without, 1);
	free(f);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(g.nev, 8);
	for (size_t i = 0; i < g.nev; i++) {
		assert_true(g.hasx[i]);
		if (g.ev[i].desc == d_op) {
			assert_ext_equal(&g.xev[i], &op);
			continue;
		}
		assert_int_equal(g.ev[i].thread, 1);
		assert_int_equal(g.ev[i].dur_ns, 80);
		assert_ext_equal(&g.xev[i], &calls[(g.ev[i].start_ns - 5000) / 100]);
	}
	trace_reader_close(r);
	got_free(&g);
}

/* A host thread of a DDP rank has eight sets of details, each its own buffer
 * and so its own chunk with just its groups; a ninth shares the buffer it
 * widens least. */
static void test_ext_sets(void **state)
{
	const char *path = tmp_path("sets.gpdl");
	struct trace_writer *w = open_writer(path);
	unsigned char *f;
	size_t size;
	(void)state;

	uint32_t s = trace_writer_string(w, "x", 1);
	uint32_t d = trace_writer_desc(w, s, 0, 0, TRACE_EV_OPERATOR);
	add_thread(w, 0, 4242);
	const struct trace_event_ext sets[9] = {
		{ .has_seq = 1, .seq_nr = 1 },                         /* an operator */
		{ .has_seq = 1, .seq_nr = 1, .shapes_str = s },        /* with its shapes */
		{ .shapes_str = s },                                   /* shapes alone */
		{ .samples = 8 },                                      /* a step */
		{ .correlation = 5, .external_id = 6 },                /* a launch */
		{ .bytes = 64, .address = 1, .device = 1 },            /* memory */
		{ .bytes = 64, .has_coll_seq = 1, .pg_str = s },       /* a collective */
		{ .has_coll_seq = 1, .pg_str = s, .group_size = 2 },   /* a barrier */
		{ .correlation = 5 },                                  /* the ninth */
	};
	const uint32_t masks[8] = {
		TRACE_EXTG_SEQ, TRACE_EXTG_SEQ | TRACE_EXTG_SHAPES, TRACE_EXTG_SHAPES,
		TRACE_EXTG_SAMPLES, TRACE_EXTG_CORRELATION | TRACE_EXTG_EXTERNAL,
		TRACE_EXTG_TRANSFER | TRACE_EXTG_ALLOC | TRACE_EXTG_DEVICE,
		TRACE_EXTG_TRANSFER | TRACE_EXTG_COLLECTIVE, TRACE_EXTG_COLLECTIVE,
	};
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 8; i++)
			add_ext_event(w, 0, d, 1000 + 10 * (uint64_t)(8 * round + i), 5, &sets[i]);
	assert_int_equal(trace_writer_flush(w), 0);
	f = slurp_plain(path, &size);
	int seen[8] = { 0 }, n = 0;
	for (size_t off = TRACE_FILE_HEADER_SIZE; off + TRACE_CHUNK_HEADER_SIZE <= size;
	     off += TRACE_CHUNK_HEADER_SIZE + trace_le32(f + off + 4)) {
		const unsigned char *p = f + off + TRACE_CHUNK_HEADER_SIZE;
		if (trace_le32(f + off) != TRACE_CHUNK_EVENTS_EXT)
			continue;
		n++;
		for (int i = 0; i < 8; i++)
			if (trace_le32(p + TRACE_EVX_GROUPS) == masks[i]) {
				seen[i]++;
				assert_int_equal(trace_chunk_len(p),
						 TRACE_EVENTS_EXT_HEADER_SIZE +
							 3 * (16 + trace_ext_groups_size(masks[i])));
			}
	}
	assert_int_equal(n, 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(seen[i], 1);
	free(f);
	/* the ninth joins the launches' buffer, which it does not widen */
	add_ext_event(w, 0, d, 2000, 5, &sets[8]);
	assert_int_equal(trace_writer_close(w, 9999), 0);
	f = slurp_plain(path, &size);
	const unsigned char *p;
	assert_int_equal(chunks_of(f, size, TRACE_CHUNK_EVENTS_EXT, &p), 9);
	free(f);
}

/* A file as the 1.2 writer wrote it (56-byte META, 32-byte PROC records,
 * EVNX groups up to bit 9) reads with 1.3's defaults. */
static void test_v1_2_file(void **state)
{
	const char *path = tmp_path("v1.2.gpdl");
	unsigned char strs[] = { 1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 'x', 4, 0, 0, 0, 'g', 'l', 'o', 'o' };
	unsigned char meta[TRACE_META_SIZE_1_1] = { 0 };
	unsigned char desc[8 + TRACE_DESC_SIZE] = { 1, 0, 0, 0, TRACE_DESC_SIZE, 0, 0, 0,
						    1, 0, 0, 0, 1, 0, 0, 0,
						    [8 + 16] = TRACE_EV_OPERATOR };
	unsigned char proc[8 + 2 * TRACE_PROCESS_SIZE] = { 2, 0, 0, 0, TRACE_PROCESS_SIZE };
	unsigned char thrd[8 + TRACE_THREAD_SIZE_1_1] = { 1, 0, 0, 0, TRACE_THREAD_SIZE_1_1 };
	unsigned char ev[TRACE_EVENTS_EXT_HEADER_SIZE + 24] = { 0 };
	struct craft c;
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	(void)state;

	craft_file_header(&c, 1, 2);
	craft_chunk(&c, TRACE_CHUNK_STRINGS, strs, sizeof(strs));
	trace_put32(meta + TRACE_META_RANK, 1);
	trace_put32(meta + TRACE_META_HOST_STR, 1);
	trace_put32(meta + TRACE_META_WORLD_SIZE, 2);
	trace_put32(meta + TRACE_META_BACKEND_STR, 2);
	craft_chunk(&c, TRACE_CHUNK_META, meta, sizeof(meta));
	craft_chunk(&c, TRACE_CHUNK_DESCS, desc, sizeof(desc));
	for (int i = 0; i < 2; i++) {
		unsigned char *p = proc + 8 + i * TRACE_PROCESS_SIZE;
		trace_put32(p, 700 + (uint32_t)i);
		trace_put32(p + 24, i ? 1 : (uint32_t)-1);
	}
	craft_chunk(&c, TRACE_CHUNK_PROCESSES, proc, sizeof(proc));
	trace_put32(thrd + 8 + 4, 700);
	craft_chunk(&c, TRACE_CHUNK_THREADS, thrd, sizeof(thrd));
	trace_put32(ev + TRACE_EVX_RECORD_SIZE, 24);
	trace_put64(ev + TRACE_EVX_BASE, 1000);
	trace_put32(ev + TRACE_EVX_GROUPS, TRACE_EXTG_SEQ | TRACE_EXTG_SHAPES);
	trace_put64(ev + TRACE_EVENTS_EXT_HEADER_SIZE, 30);
	trace_put32(ev + TRACE_EVENTS_EXT_HEADER_SIZE + 12, 1);
	trace_put32(ev + TRACE_EVENTS_EXT_HEADER_SIZE + 16, 43); /* seq 42 */
	trace_put32(ev + TRACE_EVENTS_EXT_HEADER_SIZE + 20, 1);
	craft_chunk(&c, TRACE_CHUNK_EVENTS_EXT, ev, sizeof(ev));
	craft_end(&c);
	spew(path, c.buf, c.len);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	const struct trace_header *h = trace_reader_header(r);
	assert_int_equal(h->version_minor, 2);
	assert_int_equal(h->rank, 1);
	assert_int_equal(h->world_size, 2);
	assert_string_equal(h->dist_backend, "gloo");
	assert_int_equal(h->local_rank, -1);
	assert_int_equal(trace_reader_process_count(r), 2);
	for (uint32_t i = 0; i < 2; i++) {
		const struct trace_process *p = trace_reader_process(r, i);
		assert_int_equal(p->pid, 700 + i);
		assert_int_equal(p->exit_status, i ? 1 : TRACE_EXIT_UNKNOWN);
		assert_int_equal(p->rank, -1);
		assert_int_equal(p->local_rank, -1);
		assert_int_equal(p->world_size, -1);
		assert_int_equal(p->backend_str, 0);
		assert_int_equal(g.procs[i].rank, -1); /* as the callback saw it */
	}
	assert_int_equal(g.nev, 1);
	const struct trace_event_ext want = { .has_seq = 1, .seq_nr = 42, .shapes_str = 1 };
	assert_ext_equal(&g.xev[0], &want);
	trace_reader_close(r);
	got_free(&g);
}

/* A small trace of 1.3 collectives, each event its own chunk, for the damage
 * tests: calls numbered start + 7, with and without bytes and a peer. */
static void write_small_comm(const char *path)
{
	struct trace_writer *w = open_writer(path);
	uint32_t s = trace_writer_string(w, "gloo:all_reduce", 15);
	uint32_t pg = trace_writer_string(w, "0", 1);
	uint32_t dt = trace_writer_string(w, "float", 5);
	uint32_t d = trace_writer_desc(w, s, 0, 0, TRACE_EV_COMMUNICATION);

	add_thread(w, 0, 4242);
	add_thread(w, 1, 4243);
	for (int i = 0; i < 12; i++) {
		uint64_t t0 = 1000 + (uint64_t)i * 10;
		struct trace_event_ext x = { .bytes = i % 3 ? 4096 : 0, .has_coll_seq = 1,
					     .coll_seq = t0 + 7, .pg_str = pg, .group_size = 4,
					     .dtype_str = i % 2 ? dt : 0, .has_peer = i % 4 == 1,
					     .peer = 3 };
		add_ext_event(w, (uint32_t)i % 2, d, t0, 5, &x);
		assert_int_equal(trace_writer_flush(w), 0);
	}
	assert_int_equal(trace_writer_close(w, 9999), 0);
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
	/* 2.0: 12-byte EVNS records and the chunk overhead (was 16 + overhead) */
	assert_true((double)st.st_size / N <= 12.2);
}

/* A GPU-heavy trace as PyTorch makes one: per operator a compact range, a
 * launch with correlation and operator id, and the kernel on a stream with its
 * launch details; every fourth also a copy. */
static void test_bytes_per_event_gpu(void **state)
{
	const char *path = tmp_path("size-gpu.gpdl");
	struct trace_writer *w = open_writer(path);
	enum { OPS = 50000 };
	uint32_t d_op, d_launch, d_copy, d_kernel, d_memcpy;
	uint64_t n = 0;
	struct stat st;
	(void)state;

	d_op = trace_writer_desc(w, trace_writer_string(w, "aten::mm", 8), 0, 0, TRACE_EV_OPERATOR);
	d_launch = trace_writer_desc(w, trace_writer_string(w, "cudaLaunchKernel", 16), 0, 0,
				     TRACE_EV_CUDA_RUNTIME);
	d_copy = trace_writer_desc(w, trace_writer_string(w, "cudaMemcpyAsync", 15), 0, 0,
				   TRACE_EV_CUDA_RUNTIME);
	d_kernel = trace_writer_desc(w, trace_writer_string(w, "sm90_xmma_gemm", 14), 0, 0,
				     TRACE_EV_KERNEL);
	d_memcpy = trace_writer_desc(w, trace_writer_string(w, "Memcpy HtoD", 11), 0, 0,
				     TRACE_EV_MEMCPY);
	add_thread(w, 0, 100);
	struct trace_thread st7 = { .index = 1, .pid = 4242, .kind = TRACE_TRACK_STREAM, .stream = 7 };
	assert_int_equal(trace_writer_thread(w, &st7), 0);
	for (uint32_t i = 0; i < OPS; i++) {
		uint64_t t = 1000000 + (uint64_t)i * 5000, corr = 2 * (uint64_t)i + 1;
		struct trace_event_ext l = { .correlation = corr, .external_id = i + 1 };
		struct trace_event_ext k = { .correlation = corr, .external_id = i + 1,
					     .grid = { 132, 1, 1 }, .block = { 384, 1, 1 },
					     .registers = 168, .dynamic_smem = 200000 };
		add_event(w, 0, d_op, t, 3000, 0);
		add_ext_event(w, 0, d_launch, t + 100, 800, &l);
		add_ext_event(w, 1, d_kernel, t + 1000, 2500, &k);
		n += 3;
		if (i % 4 == 0) {
			struct trace_event_ext c = { .correlation = corr + 1, .external_id = i + 1,
						     .bytes = 1u << 20, .copy_kind = TRACE_COPY_HTOD,
						     .src_kind = TRACE_MEM_PINNED,
						     .dst_kind = TRACE_MEM_DEVICE, .is_async = 1 };
			l.correlation = corr + 1;
			add_ext_event(w, 0, d_copy, t + 1000, 300, &l);
			add_ext_event(w, 1, d_memcpy, t + 3600, 200, &c);
			n += 2;
		}
	}
	assert_int_equal(trace_writer_close(w, 1), 0);
	assert_int_equal(stat(path, &st), 0);
	print_message("bytes per event, GPU-heavy: %.2f\n", (double)st.st_size / (double)n);
	/* per 4 operators 4 x (16 + (16+4+4) + (16+4+4+4)) + (16+4+4) + (16+4+4+12) bytes
	 * over 14 events: 23.71 as EVNX; compressed by columns (EVNZ) the budget is
	 * 16 (this file's records differ less than a real one's: 4.3) */
	assert_true((double)st.st_size / (double)n < 16.0);
}

/* ---- damage ---------------------------------------------------------------------------- */

/* The events in EVNT, EVNS and EVNX chunks that lie wholly within the first len bytes. */
static size_t events_before(const unsigned char *f, size_t size, size_t len, size_t *damage_at)
{
	size_t off = TRACE_FILE_HEADER_SIZE, n = 0;

	while (off + TRACE_CHUNK_HEADER_SIZE <= size) {
		uint32_t type = trace_le32(f + off), clen = trace_le32(f + off + 4);
		size_t end = off + TRACE_CHUNK_HEADER_SIZE + clen;
		if (end > len)
			break;
		if (type == TRACE_CHUNK_EVENTS || type == TRACE_CHUNK_EVENTS_SHORT)
			n += (clen - TRACE_EVENTS_HEADER_SIZE) /
			     trace_le32(f + off + TRACE_CHUNK_HEADER_SIZE + 4);
		if (type == TRACE_CHUNK_EVENTS_EXT)
			n += (clen - TRACE_EVENTS_EXT_HEADER_SIZE) /
			     trace_le32(f + off + TRACE_CHUNK_HEADER_SIZE + 4);
		if (type == TRACE_CHUNK_EVENTS_EXT_Z) {
			uint32_t plen = clen;
			unsigned char *x = evnz_expand(f + off + TRACE_CHUNK_HEADER_SIZE, &plen);
			n += (plen - TRACE_EVENTS_EXT_HEADER_SIZE) / trace_le32(x + TRACE_EVX_RECORD_SIZE);
			free(x);
		}
		off = end;
	}
	*damage_at = off;
	return n;
}

/* Events a damage test delivered are intact: duration 5, details as written
 * (correlation, sequence number or samples: start + 7). */
static void assert_small_events(const struct got *g)
{
	for (size_t i = 0; i < g->nev; i++) {
		const struct trace_event_ext *x = &g->xev[i];
		int64_t k = (int64_t)g->ev[i].start_ns + 7;
		assert_int_equal(g->ev[i].dur_ns, 5);
		if (!g->hasx[i])
			continue;
		if (x->has_seq)
			assert_true(x->seq_nr == k || x->seq_nr == -k);
		else if (x->has_coll_seq)
			assert_int_equal(x->coll_seq, k);
		else if (x->samples)
			assert_int_equal(x->samples, k);
		else
			assert_int_equal(x->correlation, k);
	}
}

static void truncation_everywhere(void (*write)(const char *))
{
	const char *path = tmp_path("trunc-src.gpdl"), *cut = tmp_path("trunc.gpdl");
	unsigned char *f;
	size_t size, total, at;

	write(path);
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
		assert_small_events(&g);
		trace_reader_close(r);
		got_free(&g);
	}
	free(f);
}

static void test_truncation_everywhere(void **state)
{
	(void)state;
	truncation_everywhere(write_small);
	truncation_everywhere(write_small_gpu);
	truncation_everywhere(write_small_ops);
	truncation_everywhere(write_small_comm);
}

static void bit_flip_everywhere(void (*write)(const char *))
{
	const char *path = tmp_path("flip-src.gpdl"), *bad = tmp_path("flip.gpdl");
	unsigned char *f;
	size_t size;

	write(path);
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
			assert_small_events(&g);
			trace_reader_close(r);
			got_free(&g);
		}
	}
	free(f);
}

static void test_bit_flip_everywhere(void **state)
{
	(void)state;
	bit_flip_everywhere(write_small);
	bit_flip_everywhere(write_small_gpu);
	bit_flip_everywhere(write_small_ops);
	bit_flip_everywhere(write_small_comm);
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
	assert_non_null(strstr(err, "unsupported trace format version 4.0"));
	/* a 2.x reader's view of a 3.0 file: refused, never read without its EVNZ
	 * events (what this reader says of 4.0, a 2.x reader says of 3.0, and a
	 * 1.x reader of 2.0) */
	assert_int_equal(TRACE_FORMAT_VERSION_MAJOR, 3);
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

	/* header grown to 48 bytes by a later writer */
	craft_file_header(&c, TRACE_FORMAT_VERSION_MAJOR, TRACE_FORMAT_VERSION_MINOR + 1);
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
	craft_chunk(&c, TRACE_FOURCC('F', 'U', 'T', 'R'), xtra, sizeof(xtra));
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
	assert_int_equal(trace_reader_header(r)->version_minor, TRACE_FORMAT_VERSION_MINOR + 1);
	assert_string_equal(trace_reader_header(r)->hostname, "x");
	assert_int_equal(g.nev, 2);
	assert_int_equal(g.ev[1].start_ns, 1008);
	assert_int_equal(g.ev[1].dur_ns, 50);
	assert_int_equal(g.ev[1].flags, TRACE_EVF_MARK);
	assert_int_equal(trace_reader_header(r)->end_ns, 0x10);
	trace_reader_close(r);
	got_free(&g);
}

/* A later minor version grows 1.1's, 1.3's and 2.1's records too: longer
 * META, PROC, THRD, DEVP and EVNX records, and EVNX groups this version
 * does not know after the collective group it does. */
static void test_forward_compatible_1_1(void **state)
{
	const char *path = tmp_path("newer11.gpdl");
	unsigned char strs[] = { 1, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 'x', 4, 0, 0, 0, 'n', 'c', 'c', 'l',
				 5, 0, 0, 0, 'j', ':', '4', '2', '!' };
	unsigned char meta[TRACE_META_SIZE_2_1 + 8] = { 0 };
	unsigned char desc[8 + TRACE_DESC_SIZE] = { 1, 0, 0, 0, TRACE_DESC_SIZE, 0, 0, 0,
						    1, 0, 0, 0, 1, 0, 0, 0, [8 + 16] = TRACE_EV_KERNEL };
	enum { TRS = TRACE_THREAD_SIZE_1_1 + 4, DRS = TRACE_DEVICE_SIZE + 4, LRS = TRACE_LAUNCH_SIZE + 4,
	       XRS = 16 + 4 + 4 + 12 + 24 + 6, PRS = TRACE_PROCESS_SIZE_2_1 + 4 };
	unsigned char proc[8 + PRS] = { 1, 0, 0, 0, PRS };
	unsigned char thrd[8 + TRS] = { 1, 0, 0, 0, TRS };
	unsigned char devp[8 + DRS] = { 1, 0, 0, 0, DRS };
	unsigned char lcfg[8 + LRS] = { 1, 0, 0, 0, LRS };
	unsigned char ev[TRACE_EVENTS_EXT_HEADER_SIZE + 2 * XRS] = { 0 };
	struct craft c;
	struct got g = { 0 };
	char err[256];
	struct trace_reader *r;
	(void)state;

	craft_file_header(&c, TRACE_FORMAT_VERSION_MAJOR, 7);
	craft_chunk(&c, TRACE_CHUNK_STRINGS, strs, sizeof(strs));
	trace_put32(meta + TRACE_META_HOST_STR, 1);
	trace_put32(meta + TRACE_META_WORLD_SIZE, 8);
	trace_put32(meta + TRACE_META_BACKEND_STR, 2);
	trace_put32(meta + TRACE_META_LOCAL_RANK, 3);
	trace_put32(meta + TRACE_META_JOB_STR, 3);
	memset(meta + TRACE_META_SIZE_2_1, 0xee, 8);
	craft_chunk(&c, TRACE_CHUNK_META, meta, sizeof(meta));
	craft_chunk(&c, TRACE_CHUNK_DESCS, desc, sizeof(desc));
	trace_put32(proc + 8, 4242);
	trace_put32(proc + 8 + TRACE_PROC_RANK, 7);
	trace_put32(proc + 8 + TRACE_PROC_LOCAL_RANK, 3);
	trace_put32(proc + 8 + TRACE_PROC_WORLD_SIZE, 8);
	trace_put32(proc + 8 + TRACE_PROC_BACKEND_STR, 2);
	trace_put32(proc + 8 + TRACE_PROC_EXIT_SIGNAL, 15);
	trace_put32(proc + 8 + TRACE_PROC_JOB_STR, 3);
	memset(proc + 8 + TRACE_PROCESS_SIZE_2_1, 0xee, 4);
	craft_chunk(&c, TRACE_CHUNK_PROCESSES, proc, sizeof(proc));
	thrd[8 + TRACE_THREAD_KIND] = TRACE_TRACK_STREAM;
	trace_put32(thrd + 8 + TRACE_THREAD_DEVICE, 3);
	trace_put64(thrd + 8 + TRACE_THREAD_STREAM, 21);
	memset(thrd + 8 + TRACE_THREAD_SIZE_1_1, 0xee, 4);
	craft_chunk(&c, TRACE_CHUNK_THREADS, thrd, sizeof(thrd));
	trace_put32(devp + 8, 3);
	trace_put32(devp + 8 + 8, 108);
	trace_put16(devp + 8 + 56, 8);
	memset(devp + 8 + TRACE_DEVICE_SIZE, 0xee, 4);
	craft_chunk(&c, TRACE_CHUNK_DEVICES, devp, sizeof(devp));
	/* one launch configuration, its record grown by 4 bytes */
	trace_put32(lcfg + 8, 1);
	for (int k = 0; k < 9; k++)
		trace_put32(lcfg + 8 + 4 + 4 * k, 100 + (uint32_t)k);
	memset(lcfg + 8 + TRACE_LAUNCH_SIZE, 0xee, 4);
	craft_chunk(&c, TRACE_CHUNK_LAUNCHES, lcfg, sizeof(lcfg));
	/* groups CORRELATION | LAUNCH | TRANSFER | COLLECTIVE and an unknown bit
	 * 20, whose 6 bytes trail */
	trace_put32(ev + TRACE_EVX_RECORD_SIZE, XRS);
	trace_put64(ev + TRACE_EVX_BASE, 1000);
	trace_put32(ev + TRACE_EVX_GROUPS, TRACE_EXTG_CORRELATION | TRACE_EXTG_LAUNCH |
						   TRACE_EXTG_TRANSFER | TRACE_EXTG_COLLECTIVE |
						   1u << 20);
	trace_put64(ev + TRACE_EVX_CORR_BASE, 499);
	trace_put64(ev + TRACE_EVX_EXT_BASE, 77); /* no EXTERNAL group: unused */
	for (int i = 0; i < 2; i++) {
		unsigned char *e = ev + TRACE_EVENTS_EXT_HEADER_SIZE + i * XRS;
		trace_put64(e, 40);
		trace_put32(e + 8, (uint32_t)i);
		trace_put32(e + 12, 1);
		trace_put32(e + 16, 2 * (uint32_t)i); /* correlation: none, then 501 */
		trace_put32(e + 20, (uint32_t)i);     /* launch: none, then configuration 1 */
		trace_put64(e + 24, 4096);
		e[32] = 42; /* a copy kind from the future */
		e[35] = 1;
		trace_put64(e + 36 + TRACE_COLL_SEQ, 10 + (uint64_t)i); /* calls 9 and 10 */
		trace_put32(e + 36 + TRACE_COLL_PG_STR, 1);
		trace_put32(e + 36 + TRACE_COLL_GROUP_SIZE, 8);
		trace_put32(e + 36 + TRACE_COLL_DTYPE_STR, 2);
		trace_put32(e + 36 + TRACE_COLL_PEER, (uint32_t)i); /* none, then peer 0 */
		memset(e + 60, 0xee, 6);
	}
	craft_chunk(&c, TRACE_CHUNK_EVENTS_EXT, ev, sizeof(ev));
	craft_end(&c);
	spew(path, c.buf, c.len);

	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	if (trace_reader_damage(r, NULL))
		fail_msg("%s", trace_reader_damage(r, NULL));
	assert_int_equal(trace_reader_header(r)->world_size, 8);
	assert_string_equal(trace_reader_header(r)->dist_backend, "nccl");
	assert_int_equal(trace_reader_header(r)->local_rank, 3);
	assert_string_equal(trace_reader_header(r)->job_id, "j:42!");
	assert_int_equal(trace_reader_process_count(r), 1);
	const struct trace_process *pr = trace_reader_process(r, 0);
	assert_int_equal(pr->pid, 4242);
	assert_int_equal(pr->exit_signal, 15);
	assert_string_equal(trace_reader_string(r, pr->job_str), "j:42!");
	assert_int_equal(pr->rank, 7);
	assert_int_equal(pr->local_rank, 3);
	assert_int_equal(pr->world_size, 8);
	assert_string_equal(trace_reader_string(r, pr->backend_str), "nccl");
	const struct trace_thread *t = trace_reader_thread(r, 0);
	assert_int_equal(t->kind, TRACE_TRACK_STREAM);
	assert_int_equal(t->device, 3);
	assert_int_equal(t->stream, 21);
	assert_int_equal(trace_reader_device_by_id(r, 3)->sm_count, 108);
	assert_int_equal(trace_reader_device_by_id(r, 3)->cc_major, 8);
	assert_int_equal(g.nev, 2);
	for (int i = 0; i < 2; i++) {
		assert_true(g.hasx[i]);
		assert_int_equal(g.ev[i].start_ns, 1000 + (uint64_t)i);
		assert_int_equal(g.ev[i].dur_ns, 40);
		assert_int_equal(g.xev[i].correlation, i ? 501 : 0);
		assert_int_equal(g.xev[i].bytes, 4096);
		assert_int_equal(g.xev[i].copy_kind, 42);
		assert_int_equal(g.xev[i].is_async, 1);
		assert_int_equal(g.xev[i].external_id | g.xev[i].address | g.xev[i].device, 0);
		assert_true(g.xev[i].has_coll_seq);
		assert_int_equal(g.xev[i].coll_seq, 9 + (uint64_t)i);
		assert_int_equal(g.xev[i].pg_str, 1);
		assert_int_equal(g.xev[i].group_size, 8);
		assert_int_equal(g.xev[i].dtype_str, 2);
		assert_int_equal(g.xev[i].has_peer, i);
		assert_int_equal(g.xev[i].peer, 0);
	}
	assert_int_equal(g.xev[0].grid[0] | g.xev[0].block[0] | g.xev[0].dynamic_smem, 0);
	assert_int_equal(g.xev[1].grid[0], 100);
	assert_int_equal(g.xev[1].grid[2], 102);
	assert_int_equal(g.xev[1].block[0], 103);
	assert_int_equal(g.xev[1].block[2], 105);
	assert_int_equal(g.xev[1].registers, 106);
	assert_int_equal(g.xev[1].static_smem, 107);
	assert_int_equal(g.xev[1].dynamic_smem, 108);
	trace_reader_close(r);
	got_free(&g);

	/* a 1.1 META naming a string that does not exist is damage at META */
	craft_file_header(&c, TRACE_FORMAT_VERSION_MAJOR, 1);
	craft_chunk(&c, TRACE_CHUNK_STRINGS, strs, sizeof(strs));
	trace_put32(meta + TRACE_META_BACKEND_STR, 4);
	size_t at = craft_chunk(&c, TRACE_CHUNK_META, meta, TRACE_META_SIZE_1_1);
	craft_end(&c);
	spew(path, c.buf, c.len);
	g = (struct got){ 0 };
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	uint64_t off;
	assert_non_null(strstr(trace_reader_damage(r, &off), "unknown string 4"));
	assert_int_equal(off, at);
	trace_reader_close(r);
	got_free(&g);

	/* so is a 2.1 META's job, and a 2.1 PROC's */
	craft_file_header(&c, TRACE_FORMAT_VERSION_MAJOR, 1);
	craft_chunk(&c, TRACE_CHUNK_STRINGS, strs, sizeof(strs));
	trace_put32(meta + TRACE_META_BACKEND_STR, 2);
	trace_put32(meta + TRACE_META_JOB_STR, 4);
	at = craft_chunk(&c, TRACE_CHUNK_META, meta, TRACE_META_SIZE_2_1);
	craft_end(&c);
	spew(path, c.buf, c.len);
	g = (struct got){ 0 };
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_non_null(strstr(trace_reader_damage(r, &off), "unknown string 4"));
	assert_int_equal(off, at);
	trace_reader_close(r);
	got_free(&g);
	craft_file_header(&c, TRACE_FORMAT_VERSION_MAJOR, 1);
	craft_chunk(&c, TRACE_CHUNK_STRINGS, strs, sizeof(strs));
	trace_put32(meta + TRACE_META_JOB_STR, 3);
	craft_chunk(&c, TRACE_CHUNK_META, meta, TRACE_META_SIZE_2_1);
	trace_put32(proc + 8 + TRACE_PROC_JOB_STR, 4);
	at = craft_chunk(&c, TRACE_CHUNK_PROCESSES, proc, sizeof(proc));
	craft_end(&c);
	spew(path, c.buf, c.len);
	g = (struct got){ 0 };
	r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_non_null(strstr(trace_reader_damage(r, &off), "unknown string"));
	assert_int_equal(off, at);
	assert_int_equal(trace_reader_process_count(r), 0);
	trace_reader_close(r);
	got_free(&g);
}

/* 2.0's META (60 bytes) and PROC records (48 bytes), read by 2.1: no job,
 * and an exit status of 137 that does not say whether it was a signal. */
static void test_v2_0_processes(void **state)
{
	const char *path = tmp_path("v2.0.gpdl");
	unsigned char strs[] = { 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 'x' };
	unsigned char meta[TRACE_META_SIZE_1_3] = { 0 };
	unsigned char proc[8 + TRACE_PROCESS_SIZE_1_3] = { 1, 0, 0, 0, TRACE_PROCESS_SIZE_1_3 };
	struct craft c;
	struct got g = { 0 };
	char err[256];
	(void)state;

	craft_file_header(&c, 2, 0);
	craft_chunk(&c, TRACE_CHUNK_STRINGS, strs, sizeof(strs));
	trace_put32(meta + TRACE_META_HOST_STR, 1);
	trace_put32(meta + TRACE_META_RANK, 1);
	craft_chunk(&c, TRACE_CHUNK_META, meta, sizeof(meta));
	trace_put32(proc + 8, 4242);
	trace_put32(proc + 8 + 24, 137);
	trace_put32(proc + 8 + TRACE_PROC_RANK, 1);
	trace_put32(proc + 8 + TRACE_PROC_WORLD_SIZE, 2);
	craft_chunk(&c, TRACE_CHUNK_PROCESSES, proc, sizeof(proc));
	craft_end(&c);
	spew(path, c.buf, c.len);
	struct trace_reader *r = read_all(path, &g, err, sizeof(err));
	assert_non_null(r);
	assert_null(trace_reader_damage(r, NULL));
	assert_int_equal(trace_reader_header(r)->version_minor, 0);
	assert_string_equal(trace_reader_header(r)->job_id, "");
	assert_string_equal(g.hdr.job_id, "");
	const struct trace_process *p = trace_reader_process(r, 0);
	assert_int_equal(p->exit_status, 137);
	assert_int_equal(p->exit_signal, -1);
	assert_int_equal(p->job_str, 0);
	assert_int_equal(p->rank, 1);
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
		unsigned char payload[128];
		uint32_t len;
		int lcfg; /* the base defines launch configuration 1 first */
		const char *why; /* in the damage message; NULL: not checked */
	} cases[] = {
		/* 1.1: EVNX {thread, record_size, base, groups, 0, corr_base, ext_base},
		 * one record at 40; LCFG, DEVP, THRD kinds. The base has no LCFG unless
		 * the case says so (then it defines launch configuration 1). */
		{ "ext unknown thread", TRACE_CHUNK_EVENTS_EXT,
		  { 1, 0, 0, 0, 20, 0, 0, 0, [16] = 1, [40 + 12] = 1 }, 60, 0, "unknown thread" },
		{ "ext desc 0", TRACE_CHUNK_EVENTS_EXT, { 0, 0, 0, 0, 20, 0, 0, 0, [16] = 1 }, 60, 0, "unknown desc 0" },
		{ "ext unknown desc", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 20, 0, 0, 0, [16] = 1, [40 + 12] = 2 }, 60, 0, "unknown desc 2" },
		{ "ext records short of their groups", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 20, 0, 0, 0, [16] = TRACE_EXTG_CORRELATION | TRACE_EXTG_TRANSFER,
		    [40 + 12] = 1 }, 60, 0, "record size 20" },
		{ "ext record size 0", TRACE_CHUNK_EVENTS_EXT, { 0 }, 60, 0, "record size 0" },
		{ "ext ragged", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 20, 0, 0, 0, [16] = 1, [40 + 12] = 1 }, 61, 0, "record size 20" },
		{ "ext short", TRACE_CHUNK_EVENTS_EXT, { 0, 0, 0, 0, 16 }, 39, 0, "shorter than its header" },
		{ "ext launch with no LCFG", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 20, 0, 0, 0, [16] = TRACE_EXTG_LAUNCH, [40 + 12] = 1, [40 + 16] = 1 },
		  60, 0, "unknown launch configuration 1" },
		{ "ext launch past LCFG", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 28, 0, 0, 0,
		    [16] = TRACE_EXTG_CORRELATION | TRACE_EXTG_EXTERNAL | TRACE_EXTG_LAUNCH,
		    [40 + 12] = 1, [40 + 16] = 1, [40 + 20] = 1, [40 + 24] = 2 },
		  68, 1, "unknown launch configuration 2" },
		{ "ext launch huge id", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 20, 0, 0, 0, [16] = TRACE_EXTG_LAUNCH, [40 + 12] = 1,
		    [40 + 16] = 0xff, 0xff, 0xff, 0xff },
		  60, 1, "unknown launch configuration 4294967295" },
		/* 1.3: a collective's process group or dtype naming an unknown string,
		 * a peer past the ranks; PROC's backend naming an unknown string */
		{ "ext collective pg string", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 40, 0, 0, 0, [17] = TRACE_EXTG_COLLECTIVE >> 8, [40 + 12] = 1,
		    [40 + 16 + TRACE_COLL_PG_STR] = 2 }, 80, 0, "unknown string 2" },
		{ "ext collective dtype string", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 40, 0, 0, 0, [17] = TRACE_EXTG_COLLECTIVE >> 8, [40 + 12] = 1,
		    [40 + 16 + TRACE_COLL_PG_STR] = 1, [40 + 16 + TRACE_COLL_DTYPE_STR] = 5 },
		  80, 0, "unknown string 5" },
		{ "ext collective peer", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 40, 0, 0, 0, [17] = TRACE_EXTG_COLLECTIVE >> 8, [40 + 12] = 1,
		    [40 + 16 + TRACE_COLL_PEER] = 1, 0, 0, 0x80 }, 80, 0, "peer 2147483648" },
		{ "ext collective records short", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 36, 0, 0, 0, [17] = TRACE_EXTG_COLLECTIVE >> 8, [40 + 12] = 1 },
		  76, 0, "record size 36" },
		{ "process backend string", TRACE_CHUNK_PROCESSES,
		  { 1, 0, 0, 0, 48, 0, 0, 0, [8 + TRACE_PROC_BACKEND_STR] = 3 }, 56, 0,
		  "unknown string" },
		/* 1.2: shapes naming an unknown string; a wide SEQ with no SEQ64 */
		{ "ext shapes string", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 20, 0, 0, 0, [17] = TRACE_EXTG_SHAPES >> 8, [40 + 12] = 1,
		    [40 + 16] = 2 }, 60, 0, "unknown string 2" },
		{ "ext seq wide without seq64", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 20, 0, 0, 0, [16] = TRACE_EXTG_SEQ, [40 + 12] = 1,
		    [40 + 16] = 0xff, 0xff, 0xff, 0xff }, 60, 0, "seq64" },
		{ "ext seq64 records short", TRACE_CHUNK_EVENTS_EXT,
		  { 0, 0, 0, 0, 20, 0, 0, 0, [16] = TRACE_EXTG_SEQ | TRACE_EXTG_SEQ64,
		    [40 + 12] = 1 }, 60, 0, "record size 20" },
		{ "launch id gap", TRACE_CHUNK_LAUNCHES, { 1, 0, 0, 0, 40, 0, 0, 0, 2 }, 48, 0, "id 2 out of sequence" },
		{ "launch id 0", TRACE_CHUNK_LAUNCHES, { 1, 0, 0, 0, 40, 0, 0, 0, 0 }, 48, 0, "id 0 out of sequence" },
		{ "launch id repeated", TRACE_CHUNK_LAUNCHES, { 1, 0, 0, 0, 40, 0, 0, 0, 1 }, 48, 1, "id 1 out of sequence" },
		{ "launch small records", TRACE_CHUNK_LAUNCHES, { 1, 0, 0, 0, 36, 0, 0, 0, 1 }, 44, 0, "at least 40" },
		{ "launch count", TRACE_CHUNK_LAUNCHES, { 2, 0, 0, 0, 40, 0, 0, 0, 1 }, 48, 0, "disagrees" },
		{ "launch short", TRACE_CHUNK_LAUNCHES, { 0 }, 7, 0, "shorter than its header" },
		{ "device string", TRACE_CHUNK_DEVICES, { 1, 0, 0, 0, 60, 0, 0, 0, [12] = 9 }, 68 },
		{ "device small records", TRACE_CHUNK_DEVICES, { 1, 0, 0, 0, 56 }, 64 },
		{ "device count", TRACE_CHUNK_DEVICES, { 2, 0, 0, 0, 60 }, 68 },
		{ "thread changes kind", TRACE_CHUNK_THREADS,
		  { 1, 0, 0, 0, 52, 0, 0, 0, [8 + 32] = TRACE_TRACK_STREAM }, 60 },
		{ "new thread changes kind", TRACE_CHUNK_THREADS,
		  { 2, 0, 0, 0, 52, 0, 0, 0, [8] = 1, [60] = 1, [60 + 32] = TRACE_TRACK_STREAM },
		  112 },
		{ "unknown desc", TRACE_CHUNK_EVENTS, { 0, 0, 0, 0, 16, 0, 0, 0, [16 + 12] = 2 }, 32 },
		{ "desc 0", TRACE_CHUNK_EVENTS, { 0, 0, 0, 0, 16, 0, 0, 0 }, 32 },
		{ "unknown thread", TRACE_CHUNK_EVENTS, { 1, 0, 0, 0, 16, 0, 0, 0, [16 + 12] = 1 }, 32 },
		{ "record size 0", TRACE_CHUNK_EVENTS, { 0 }, 32 },
		{ "ragged events", TRACE_CHUNK_EVENTS, { 0, 0, 0, 0, 16, 0, 0, 0, [16 + 12] = 1 }, 33 },
		{ "short events", TRACE_CHUNK_EVENTS, { 0 }, 15 },
		/* 2.0: desc ids in the low 24 bits of the third u32 */
		{ "EVNS unknown desc", TRACE_CHUNK_EVENTS_SHORT,
		  { 0, 0, 0, 0, 12, 0, 0, 0, [16 + 8] = 2, [16 + 11] = 0xff }, 28, 0, "unknown desc 2" },
		{ "EVNS desc 0 under flags", TRACE_CHUNK_EVENTS_SHORT,
		  { 0, 0, 0, 0, 12, 0, 0, 0, [16 + 11] = 1 }, 28, 0, "unknown desc 0" },
		{ "EVNS record size 11", TRACE_CHUNK_EVENTS_SHORT,
		  { 0, 0, 0, 0, 11, 0, 0, 0, [16 + 8] = 1 }, 27, 0, "EVNS record size 11" },
		{ "EVNS ragged", TRACE_CHUNK_EVENTS_SHORT,
		  { 0, 0, 0, 0, 12, 0, 0, 0, [16 + 8] = 1 }, 29, 0, "EVNS record size 12" },
		{ "EVNS short", TRACE_CHUNK_EVENTS_SHORT, { 0 }, 15, 0, "EVNS chunk shorter" },
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
		if (cases[k].lcfg)
			craft_launch(&c);
		craft_events(&c, 0, 1, 3);
		at = craft_chunk(&c, cases[k].type, cases[k].payload, cases[k].len);
		craft_events(&c, 0, 1, 2);
		craft_end(&c);
		spew(path, c.buf, c.len);
		r = read_all(path, &g, err, sizeof(err));
		assert_non_null(r);
		if (!trace_reader_damage(r, &off))
			fail_msg("forged chunk not detected: %s", cases[k].what);
		if (cases[k].why && !strstr(trace_reader_damage(r, NULL), cases[k].why))
			fail_msg("%s: damage '%s', expected '%s'", cases[k].what,
				 trace_reader_damage(r, NULL), cases[k].why);
		assert_int_equal(off, at);
		assert_int_equal(g.nev, 3);
		trace_reader_close(r);
		got_free(&g);
	}
}

/* An EVNX payload of records of rs bytes as an EVNZ payload (the spec's
 * columns, compressed), into z; returns its length. */
static uint32_t evnz_make(const unsigned char *x, uint32_t len, uint32_t rs, unsigned char *z,
			  size_t cap)
{
	unsigned char cols[256];
	size_t n = (len - TRACE_EVENTS_EXT_HEADER_SIZE) / rs;
	assert_true(len <= sizeof(cols));
	memcpy(cols, x, TRACE_EVENTS_EXT_HEADER_SIZE);
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < rs; k++)
			cols[TRACE_EVENTS_EXT_HEADER_SIZE + k * n + i] = x[TRACE_EVENTS_EXT_HEADER_SIZE + i * rs + k];
	size_t zlen = ZSTD_compress(z + 4, cap - 4, cols, len, 1);
	assert_false(ZSTD_isError(zlen));
	trace_put32(z, len);
	return 4 + (uint32_t)zlen;
}

/* 3.0: EVNZ chunks that are not what they say, each found where it is, the
 * events before it delivered; and one that is, read as its EVNX. */
static void test_forged_evnz(void **state)
{
	const char *path = tmp_path("forged-z.gpdl");
	/* EVNX with two records of 20 bytes (correlation), desc 1 and desc 2 */
	const unsigned char good[80] = { 0, 0, 0, 0, 20, 0, 0, 0, [16] = 1, [40 + 12] = 1, [40 + 16] = 9,
					 [60 + 8] = 50, [60 + 12] = 1, [60 + 16] = 10 };
	unsigned char bad[80];
	memcpy(bad, good, sizeof(bad));
	bad[60 + 12] = 2; /* an unknown desc */
	enum { SHORT, HUGE, BOMB, JUNK, LESS, MORE, TRAILING, BAD_RECORD, GOOD, CASES };
	const char *why[CASES] = { "shorter than its header", "over the maximum", "does not decompress",
				   "does not decompress", "does not decompress", "does not decompress",
				   "does not decompress",
				   "unknown desc 2", NULL };
	(void)state;

	for (int k = 0; k < CASES; k++) {
		unsigned char z[512] = { 0 };
		uint32_t len;
		switch (k) {
		case SHORT: len = 3; break;
		case HUGE: len = evnz_make(good, 80, 20, z, sizeof(z)); trace_put32(z, TRACE_CHUNK_MAX_PAYLOAD + 1); break;
		case BOMB: /* more than its frame holds */
			len = evnz_make(good, 80, 20, z, sizeof(z));
			trace_put32(z, 1u << 20);
			break;
		case JUNK: trace_put32(z, 80); memcpy(z + 4, "not a zstd frame", 16); len = 20; break;
		case LESS: len = evnz_make(good, 80, 20, z, sizeof(z)); trace_put32(z, 100); break;
		case MORE: len = evnz_make(good, 80, 20, z, sizeof(z)); trace_put32(z, 60); break;
		case TRAILING: len = evnz_make(good, 80, 20, z, sizeof(z)) + 1; break;
		case BAD_RECORD: len = evnz_make(bad, 80, 20, z, sizeof(z)); break;
		default: len = evnz_make(good, 80, 20, z, sizeof(z)); break;
		}
		struct craft c;
		struct got g = { 0 };
		char err[256];
		uint64_t off = 0;
		craft_base(&c);
		craft_events(&c, 0, 1, 3);
		size_t at = craft_chunk(&c, TRACE_CHUNK_EVENTS_EXT_Z, z, len);
		craft_events(&c, 0, 1, 2);
		craft_end(&c);
		spew(path, c.buf, c.len);
		struct trace_reader *r = read_all(path, &g, err, sizeof(err));
		assert_non_null(r);
		const char *damage = trace_reader_damage(r, &off);
		if (k == GOOD) {
			assert_null(damage);
			assert_int_equal(g.nev, 3 + 2 + 2);
			int seen = 0;
			for (size_t i = 0; i < g.nev; i++) {
				if (!g.hasx[i])
					continue;
				seen++;
				assert_int_equal(g.ev[i].start_ns, g.xev[i].correlation == 9 ? 0 : 50);
				assert_true(g.xev[i].correlation == 9 || g.xev[i].correlation == 10);
			}
			assert_int_equal(seen, 2);
		} else {
			if (!damage || !strstr(damage, why[k]))
				fail_msg("EVNZ case %d: damage '%s', expected '%s'", k, damage ? damage : "none",
					 why[k]);
			assert_int_equal(off, at);
			assert_int_equal(g.nev, 3);
		}
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

	for (int k = 0; k < 4000; k++) {
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
			if (k % 2) /* launch configurations for EVNX records to refer to */
				craft_launch(&c);
			int n = (int)(RND() % 6);
			for (int j = 0; j < n; j++) {
				static const uint32_t types[] = {
					TRACE_CHUNK_META, TRACE_CHUNK_STRINGS, TRACE_CHUNK_DESCS,
					TRACE_CHUNK_CATEGORIES, TRACE_CHUNK_PROCESSES,
					TRACE_CHUNK_THREADS, TRACE_CHUNK_EVENTS,
					TRACE_CHUNK_COUNTERS, TRACE_CHUNK_DROPS, TRACE_CHUNK_END, 7,
					TRACE_CHUNK_EVENTS_EXT, TRACE_CHUNK_DEVICES,
					TRACE_CHUNK_LAUNCHES,
				};
				unsigned char p[256];
				uint32_t plen = (uint32_t)(RND() % sizeof(p));
				for (uint32_t i = 0; i < plen; i++)
					p[i] = (unsigned char)(RND() % 4 ? RND() % 3 : RND());
				if (plen >= 8 && RND() % 2) { /* plausible sub-headers */
					uint64_t most = RND() % 2 ? 40 : 120;
					trace_put32(p + 4, (uint32_t)(RND() % most));
				}
				if (plen >= 20 && RND() % 2) /* plausible EVNX groups */
					trace_put32(p + 16, (uint32_t)(RND() % 64));
				if (plen >= 48 && RND() % 2) { /* plausible launch ids */
					uint64_t at = 40 + 16 + 4 * (RND() % 3);
					trace_put32(p + at, (uint32_t)(RND() % 3));
				}
				craft_chunk(&c, types[RND() % 14], p, plen);
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
			for (uint32_t i = 0; i < trace_reader_device_count(r); i++)
				assert_ptr_equal(trace_reader_device_by_id(
							 r, trace_reader_device(r, i)->id),
						 trace_reader_device(r, i));
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
	struct trace_device dv = { .id = 0, .name_str = 77 }; /* unknown string */
	assert_int_equal(trace_writer_device(w, &dv), -1);
	assert_int_equal(errno, EINVAL);
	struct trace_thread odd = { .index = 0, .kind = TRACE_TRACK_STREAM + 1 };
	assert_int_equal(trace_writer_thread(w, &odd), -1); /* a kind this version lacks */
	odd.kind = TRACE_TRACK_STREAM;
	assert_int_equal(trace_writer_thread(w, &odd), 0);
	odd.kind = TRACE_TRACK_HOST;
	assert_int_equal(trace_writer_thread(w, &odd), -1); /* a track keeps its kind */
	assert_int_equal(errno, EINVAL);
	struct trace_header h = { 0 };
	assert_int_equal(trace_writer_header(w, &h), -1); /* a second header */
	uint32_t d = trace_writer_desc(w, trace_writer_string(w, "a", 1), 0, 0, 0);
	assert_int_equal(d, 1);
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
	assert_int_equal(trace_reader_header(r)->world_size, -1);
	assert_string_equal(trace_reader_header(r)->dist_backend, "");
	assert_int_equal(trace_reader_header(r)->end_ns, 5);
	trace_reader_close(r);
	got_free(&g);
}

/* A header whose strings are all empty, then empty strings again: the writer
 * compared them against an arena that was never allocated (found by UBSan
 * through the importer). */
static void test_only_empty_strings(void **state)
{
	(void)state;
	const char *path = tmp_path("empty-strings.gpdl");
	struct trace_writer *w = trace_writer_open(path, 1);
	assert_non_null(w);
	struct trace_header h = {.clock_domain = "", .hostname = "", .cmdline = "", .gprof_version = "",
				 .dist_backend = "", .rank = -1, .world_size = -1};
	assert_int_equal(trace_writer_header(w, &h), 0);
	uint32_t a = trace_writer_string(w, "", 0), b = trace_writer_string(w, "", 0);
	assert_true(a != 0);
	assert_int_equal(a, b);
	assert_int_equal(trace_writer_close(w, 10), 0);
	char err[256];
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(trace_reader_run(r, NULL, NULL), 0);
	assert_null(trace_reader_damage(r, NULL));
	assert_string_equal(trace_reader_header(r)->hostname, "");
	trace_reader_close(r);
}

static void test_names(void **state)
{
	(void)state;
	const char *expect[] = { "UserDefined", "ProfileStep", "Dataloader", "Forward",
				 "Backward", "Optimization", "Operator", "OperatorInner",
				 "PythonOp", "CudaRuntime", "Kernel", "Memcpy", "Memset",
				 "Communication", "Memory" };
	static const char *const copies[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					      "AtoD",	 "DtoA", "DtoD", "HtoH", "PtoP" };
	static const char *const mems[] = { "Unknown", "Pageable", "Pinned",	   "Device",
					    "Array",   "Managed",  "Device Static", "Managed Static" };

	assert_int_equal(sizeof(expect) / sizeof(expect[0]), TRACE_EV_TYPE_COUNT);
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
	for (unsigned i = 0; i < sizeof(copies) / sizeof(copies[0]); i++)
		assert_string_equal(trace_copy_kind_name(i), copies[i]);
	assert_string_equal(trace_copy_kind_name(TRACE_COPY_HTOD), "HtoD");
	assert_string_equal(trace_copy_kind_name(TRACE_COPY_PTOP), "PtoP");
	assert_string_equal(trace_copy_kind_name(11), "?");
	assert_string_equal(trace_copy_kind_name(255), "?");
	for (unsigned i = 0; i < sizeof(mems) / sizeof(mems[0]); i++)
		assert_string_equal(trace_memory_kind_name(i), mems[i]);
	assert_string_equal(trace_memory_kind_name(TRACE_MEM_PINNED), "Pinned");
	assert_string_equal(trace_memory_kind_name(8), "?");
	assert_string_equal(trace_memory_kind_name(UINT32_MAX), "?");

	/* 1.3: c10d's work names: the backend's length, 0 for anything else */
	static const struct {
		const char *name;
		size_t len;
	} calls[] = {
		{ "gloo:all_reduce", 4 }, { "nccl:broadcast", 4 }, { "mpi:barrier", 3 },
		{ "ucc:all_gather", 3 },  { "GLOO:send", 4 },	   { "Nccl:recv", 4 },
		{ "gloo:x", 4 },	  { "gloo:", 0 },	   { "gloo", 0 },
		{ ":all_reduce", 0 },	  { "glooo:all_reduce", 0 }, { "glo:all_reduce", 0 },
		{ "c10d::allreduce_", 0 }, { "nccl_all_reduce", 0 }, { "rccl:all_reduce", 0 },
		{ "", 0 },		  { "aten::mm", 0 },	   { "ncclKernel_AllReduce", 0 },
	};
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (trace_name_comm_call(calls[i].name, strlen(calls[i].name)) != calls[i].len)
			fail_msg("'%s': %zu, expected %zu", calls[i].name,
				 trace_name_comm_call(calls[i].name, strlen(calls[i].name)),
				 calls[i].len);
	/* len bounds the name: a prefix is judged alone, NUL or not */
	assert_int_equal(trace_name_comm_call("gloo:all_reduce", 5), 0);
	assert_int_equal(trace_name_comm_call("gloo:all_reduce", 6), 4);
	assert_int_equal(trace_name_comm_call("mpi", 3), 0);
	assert_int_equal(trace_name_comm_call("ucc:a\0b", 7), 3);
	assert_int_equal(trace_name_comm_call(NULL, 0), 0);
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
		cmocka_unit_test(test_gpu_round_trip),
		cmocka_unit_test(test_ext_layout),
		cmocka_unit_test(test_seq_shapes_layout),
		cmocka_unit_test(test_v1_0_file),
		cmocka_unit_test(test_ranks_round_trip),
		cmocka_unit_test(test_collective_layout),
		cmocka_unit_test(test_ext_sets),
		cmocka_unit_test(test_v1_2_file),
		cmocka_unit_test(test_many_threads),
		cmocka_unit_test(test_writer_memory_cap),
		cmocka_unit_test(test_far_starts_and_long_durations),
		cmocka_unit_test(test_short_events),
		cmocka_unit_test(test_v1_3_and_evns_records),
		cmocka_unit_test(test_v2_0_processes),
		cmocka_unit_test(test_marks_and_flags),
		cmocka_unit_test(test_string_bytes),
		cmocka_unit_test(test_bytes_per_event),
		cmocka_unit_test(test_bytes_per_event_gpu),
		cmocka_unit_test(test_truncation_everywhere),
		cmocka_unit_test(test_bit_flip_everywhere),
		cmocka_unit_test(test_no_end),
		cmocka_unit_test(test_not_a_trace),
		cmocka_unit_test(test_forward_compatible),
		cmocka_unit_test(test_forward_compatible_1_1),
		cmocka_unit_test(test_forged_chunks),
		cmocka_unit_test(test_forged_evnz),
		cmocka_unit_test(test_damage_kinds),
		cmocka_unit_test(test_random_files),
		cmocka_unit_test(test_writer_rejects),
		cmocka_unit_test(test_only_empty_strings),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
