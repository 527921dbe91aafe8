/* GPU records (ring version 3) through the recorder, as CUPTI's thread of the
 * target writes them: read back with the trace reader and through the
 * analysis, so that a collected trace is seen as the views see an import of
 * the PyTorch profiler's.
 *
 * The run, times in ns after t0 (pid P; thread M = P is the main thread, W =
 * P + 1 CUPTI's worker, B = P + 2 a thread whose tid the system reuses):
 *
 *   M  aten::mm (Operator) [1000, 10000)
 *        cudaLaunchKernel c1 [2000, 2100)  -> gemm_kernel s7 [2200, 2700)  xid 77
 *        cudaLaunchKernel c2 [3000, 3100)  -> gemm_kernel s7 [3200, 3500)  xid 78
 *        cudaLaunchKernel c3 [4000, 4100)  -> gemm_kernel s7 [4200, 4400)  name cut
 *        cudaMemcpyAsync  c4 [5000, 5100)  -> HtoD Pinned->Device s13 [5200, 5600)
 *   s20 ncclDevKernel... [6000, 6500), no call
 *   s7  allocations: +1000 @1500, +500 @1600, free of the first @8000 (its
 *       size not given), frees of unknown blocks -100 @8100, -10000 @8200:
 *       in use 1000, 1500, 500, 400, 0
 *   s7  Stream Sync c5 [6000, 6100); context 1: Context Sync c6 [6200, 6300)
 *   B   started 6500, b-range [6900, 7500), ended 8000: its call c7 at 7000
 *       is drained before its slot was ever claimed; its call c9 at 7200
 *       after the tid's next thread B' (started 9000, b-range [9400, 9800),
 *       call c8 at 9500 drained before B' had a slot) took it over.
 *
 * W's records are drained before M's slot (W has the lower slot), so M's
 * calls name M before M's own records are seen. c2's external id comes
 * after its call, in the same drain. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "formats/trace/trace.h"
#include "lib/analysis/store/analysis.h"
#include "lib/analysis/views/view.h"
#include "lib/collector/gprof-dl-nvtx.h"
#include "common/clock.h"
#include "lib/recorder/recorder.h"
#include "lib/ring/ring.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYNC_TRACK_STREAM 0xffffffffull
#define MSG_ON "CUPTI 13.0 (130001): GPU activity is recorded"
#define MSG_BUFFERS "GPU activity records were lost: raise GPROF_DL_CUPTI_BUFFERS"

static char dir[64], path[96];
static uint64_t t0;
static uint32_t pid;

/* ---- writing records ------------------------------------------------------- */

static void put(struct ring_shm *shm, struct ring_slot *s, const void *rec)
{
	assert_int_equal(ring_write(shm, s, rec), 0);
}

static void put_string(struct ring_shm *shm, struct ring_slot *s, uint32_t id, const char *text)
{
	unsigned char buf[256] = {0};
	struct ring_rec *h = (struct ring_rec *)buf;
	size_t n = strlen(text) + 1;
	assert_true(sizeof(*h) + n <= sizeof(buf));
	h->kind = RING_REC_STRING;
	h->size = (uint16_t)ring_rec_align(sizeof(*h) + n);
	h->aux = id;
	memcpy(h + 1, text, n);
	put(shm, s, buf);
}

static void put_thread(struct ring_shm *shm, struct ring_slot *s, uint16_t kind, uint64_t ts)
{
	struct ring_thread t = {{kind, sizeof(t), 0}, t0 + ts, s->pid, s->tid};
	put(shm, s, &t);
}

static void put_range(struct ring_shm *shm, struct ring_slot *s, uint32_t name, uint32_t domain,
		      uint32_t category, uint64_t start, uint64_t end)
{
	struct ring_range x = {{RING_REC_RANGE, sizeof(x), 0}, t0 + start, t0 + end, name, domain,
			       category, 0};
	put(shm, s, &x);
}

static void put_api(struct ring_shm *shm, struct ring_slot *s, uint32_t tid, uint32_t name,
		    uint64_t corr, uint64_t start)
{
	struct ring_gpu_api x = {{RING_REC_GPU_API, sizeof(x), RING_GPU_API_RUNTIME}};
	x.start_ns = t0 + start;
	x.end_ns = t0 + start + 100;
	x.correlation = corr;
	x.tid = tid;
	x.name_str = name;
	x.cbid = 211;
	put(shm, s, &x);
}

static void put_extcorr(struct ring_shm *shm, struct ring_slot *s, uint64_t corr, uint64_t xid)
{
	struct ring_gpu_extcorr x = {{RING_REC_GPU_EXTCORR, sizeof(x), 1}, corr, xid};
	put(shm, s, &x);
}

static void put_kernel(struct ring_shm *shm, struct ring_slot *s, uint32_t name, uint64_t corr,
		       uint64_t stream, uint64_t start, uint64_t end, uint32_t gx, uint32_t bx,
		       uint32_t regs, uint32_t flags)
{
	struct ring_gpu_work x = {{RING_REC_GPU_WORK, sizeof(x), TRACE_EV_KERNEL}};
	x.start_ns = t0 + start;
	x.end_ns = t0 + end;
	x.correlation = corr;
	x.stream = stream;
	x.device = 0;
	x.context = 1;
	x.name_str = name;
	x.flags = flags;
	x.grid[0] = gx, x.grid[1] = 2, x.grid[2] = 1;
	x.block[0] = bx, x.block[1] = 1, x.block[2] = 1;
	x.registers = regs;
	x.static_smem = 1024;
	x.dynamic_smem = 256;
	x.graph_id = 3;
	put(shm, s, &x);
}

static void put_copy(struct ring_shm *shm, struct ring_slot *s, uint64_t corr, uint64_t start,
		     uint64_t end)
{
	struct ring_gpu_work x = {{RING_REC_GPU_WORK, sizeof(x), TRACE_EV_MEMCPY}};
	x.start_ns = t0 + start;
	x.end_ns = t0 + end;
	x.correlation = corr;
	x.stream = 13;
	x.bytes = 4096;
	x.context = 1;
	x.copy_kind = TRACE_COPY_HTOD;
	x.src_kind = TRACE_MEM_PINNED;
	x.dst_kind = TRACE_MEM_DEVICE;
	x.is_async = 1;
	put(shm, s, &x);
}

static void put_memory(struct ring_shm *shm, struct ring_slot *s, unsigned op, uint64_t address,
		       uint64_t bytes, uint64_t ts)
{
	struct ring_gpu_memory x = {{RING_REC_GPU_MEMORY, sizeof(x), op}};
	x.ts_ns = t0 + ts;
	x.address = address;
	x.bytes = bytes;
	x.stream = 7;
	x.device = 0;
	x.context = 1;
	x.memory_kind = TRACE_MEM_DEVICE;
	put(shm, s, &x);
}

static void put_sync(struct ring_shm *shm, struct ring_slot *s, unsigned type, uint64_t stream,
		     uint64_t corr, uint64_t start)
{
	struct ring_gpu_sync x = {{RING_REC_GPU_SYNC, sizeof(x), type}};
	x.start_ns = t0 + start;
	x.end_ns = t0 + start + 100;
	x.correlation = corr;
	x.stream = stream;
	x.context = 1;
	put(shm, s, &x);
}

static void put_device(struct ring_shm *shm, struct ring_slot *s, uint32_t name)
{
	struct ring_gpu_device x = {{RING_REC_GPU_DEVICE, sizeof(x), 0}};
	x.d.id = 0;
	x.d.name_str = name;
	x.d.sm_count = 132;
	x.d.max_threads_per_sm = 2048;
	x.d.max_threads_per_block = 1024;
	x.d.max_blocks_per_sm = 32;
	x.d.warp_size = 32;
	x.d.regs_per_sm = 65536;
	x.d.regs_per_block = 65536;
	x.d.smem_per_sm = 233472;
	x.d.smem_per_block = 49152;
	x.d.clock_khz = 1980000;
	x.d.total_memory = 85520809984ull;
	x.d.cc_major = 9;
	x.d.cc_minor = 0;
	put(shm, s, &x);
}

static void put_drops(struct ring_shm *shm, struct ring_slot *s, uint64_t n)
{
	struct ring_gpu_drops x = {{RING_REC_GPU_DROPS, sizeof(x), 0}, n, 1, 0};
	put(shm, s, &x);
}

static void put_status(struct ring_shm *shm, struct ring_slot *s, unsigned code, uint32_t msg)
{
	struct ring_gpu_status x = {{RING_REC_GPU_STATUS, sizeof(x), code}, msg, 0};
	put(shm, s, &x);
}

static void put_overhead(struct ring_shm *shm, struct ring_slot *s, uint32_t name)
{
	struct ring_gpu_overhead x = {{RING_REC_GPU_OVERHEAD, sizeof(x), 1}};
	x.start_ns = t0 + 100;
	x.end_ns = t0 + 200;
	x.tid = s->tid;
	x.name_str = name;
	put(shm, s, &x);
}

/* ---- reading the trace back ------------------------------------------------ */

#define MAX_EVENTS 64

struct ev {
	uint64_t start, dur;
	uint32_t thread;
	uint8_t flags, type;
	char name[64];
	int has_ext;
	struct trace_event_ext x;
};

struct readback {
	struct trace_reader *r;
	struct ev ev[MAX_EVENTS];
	unsigned n;
};

static int read_event(void *ctx, const struct trace_event *e)
{
	struct readback *b = ctx;
	assert_true(b->n < MAX_EVENTS);
	struct ev *v = &b->ev[b->n++];
	const struct trace_desc *d = trace_reader_desc(b->r, e->desc);
	v->start = e->start_ns - t0;
	v->dur = e->dur_ns;
	v->thread = e->thread;
	v->flags = e->flags;
	v->type = d->type;
	snprintf(v->name, sizeof(v->name), "%s", trace_reader_string(b->r, d->name_str));
	v->has_ext = e->ext != NULL;
	if (e->ext)
		v->x = *e->ext;
	return 0;
}

static const struct ev *find(const struct readback *b, const char *name, uint64_t start)
{
	for (unsigned i = 0; i < b->n; i++)
		if (!strcmp(b->ev[i].name, name) && b->ev[i].start == start)
			return &b->ev[i];
	fail_msg("no event '%s' at %llu", name, (unsigned long long)start);
	return NULL;
}

static const struct ev *find_corr(const struct readback *b, unsigned type, uint64_t corr)
{
	for (unsigned i = 0; i < b->n; i++)
		if (b->ev[i].type == type && b->ev[i].has_ext && b->ev[i].x.correlation == corr)
			return &b->ev[i];
	fail_msg("no event of type %u with correlation %llu", type, (unsigned long long)corr);
	return NULL;
}

static unsigned count_on(const struct readback *b, uint32_t thread, unsigned type)
{
	unsigned n = 0;
	for (unsigned i = 0; i < b->n; i++)
		n += b->ev[i].thread == thread && b->ev[i].type == type;
	return n;
}

/* The index of the only track matching, failing where none or several do. */
static uint32_t track(struct trace_reader *r, uint8_t kind, uint32_t tid, uint64_t stream, int nth)
{
	int seen = 0;
	for (uint32_t i = 0; i < trace_reader_thread_count(r); i++) {
		const struct trace_thread *t = trace_reader_thread(r, i);
		if (t->kind == kind && t->pid == pid && t->tid == tid &&
		    (kind != TRACE_TRACK_STREAM || t->stream == stream) && seen++ == nth)
			return i;
	}
	fail_msg("no track kind %u tid %u stream %llu (#%d)", kind, tid, (unsigned long long)stream,
		 nth);
	return 0;
}

static uint32_t track_named(struct trace_reader *r, const char *name)
{
	uint32_t found = UINT32_MAX;
	for (uint32_t i = 0; i < trace_reader_thread_count(r); i++) {
		const struct trace_thread *t = trace_reader_thread(r, i);
		if (!strcmp(trace_reader_string(r, t->name_str), name)) {
			assert_int_equal(found, UINT32_MAX);
			found = i;
		}
	}
	assert_int_not_equal(found, UINT32_MAX);
	return found;
}

/* ---- the analysis's tables -------------------------------------------------- */

/* The row at a path of names ("aten::mm/gemm_kernel") of a table's first part. */
static const struct trow *row(const struct table *t, const char *names)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", names);
	assert_true(t->nparts > 0);
	const struct tpart *p = &t->parts[0];
	size_t at = 0;
	const struct trow *r = NULL;
	unsigned depth = 0;
	for (char *name = strtok(buf, "/"); name; name = strtok(NULL, "/"), depth++) {
		for (r = NULL; at < p->nrows && !r; at++)
			if (p->rows[at].depth == depth && !strcmp(p->rows[at].cells[0].v.text, name))
				r = &p->rows[at];
		if (!r)
			fail_msg("no row '%s' in '%s'", names, t->title);
	}
	return r;
}

static int64_t fact(const struct tpart *p, const char *key)
{
	for (size_t i = 0; i < p->nfacts; i++)
		if (!strcmp(p->facts[i].key, key))
			return p->facts[i].value;
	fail_msg("no fact '%s'", key);
	return 0;
}

/* ---- the run ---------------------------------------------------------------- */

static struct ring_shm *attach(struct recorder *r, size_t *len)
{
	int fd = open(recorder_shm_env(r), O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	struct ring_shm *shm = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(shm != MAP_FAILED);
	assert_int_equal(ring_shm_check(shm, *len), 0);
	return shm;
}

/* What the recorder prints goes to a file, read back by captured(). */
static int capture_stderr(void)
{
	char errpath[128];
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	fflush(stderr);
	int saved = dup(2), efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && efd >= 0);
	dup2(efd, 2);
	close(efd);
	return saved;
}

static void captured(int saved, char *errs, size_t errs_len)
{
	char errpath[128];
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	FILE *f = fopen(errpath, "r");
	assert_non_null(f);
	size_t n = fread(errs, 1, errs_len - 1, f);
	errs[n] = '\0';
	fclose(f);
	unlink(errpath);
}

enum {
	S_DOMAIN = 1, S_MM, S_LAUNCH, S_GEMM, S_MEMCPY, S_FLUSH, S_GPU, S_ON, S_BUFFERS, S_NCCL,
	S_BRANGE,
};

static void worker_records(struct ring_shm *shm, struct ring_slot *w)
{
	put_thread(shm, w, RING_REC_THREAD_START, 0);
	put_string(shm, w, S_LAUNCH, "cudaLaunchKernel");
	put_string(shm, w, S_GEMM, "gemm_kernel");
	put_string(shm, w, S_MEMCPY, "cudaMemcpyAsync");
	put_string(shm, w, S_FLUSH, "CUPTI buffer flush");
	put_string(shm, w, S_GPU, "NVIDIA Test GPU");
	put_string(shm, w, S_NCCL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	put_string(shm, w, S_ON, MSG_ON);
	put_status(shm, w, RING_GPU_ON, S_ON);
	put_device(shm, w, S_GPU);
	put_device(shm, w, S_GPU); /* the same again: once in the trace */
	put_overhead(shm, w, S_FLUSH);

	put_extcorr(shm, w, 1, 77);
	put_api(shm, w, pid, S_LAUNCH, 1, 2000);
	put_api(shm, w, pid, S_LAUNCH, 2, 3000);
	put_extcorr(shm, w, 2, 78); /* after its call, in the same drain */
	put_api(shm, w, pid, S_LAUNCH, 3, 4000);
	put_api(shm, w, pid, S_MEMCPY, 4, 5000);
	put_kernel(shm, w, S_GEMM, 1, 7, 2200, 2700, 4, 128, 32, 0);
	put_kernel(shm, w, S_GEMM, 2, 7, 3200, 3500, 8, 256, 40, 0);
	put_kernel(shm, w, S_GEMM, 3, 7, 4200, 4400, 4, 128, 32, TRACE_EVF_NAME_TRUNCATED);
	put_copy(shm, w, 4, 5200, 5600);
	put_kernel(shm, w, S_NCCL, 0, 20, 6000, 6500, 1, 512, 64, 0);

	put_memory(shm, w, RING_GPU_MEM_ALLOC, 0x1000, 1000, 1500);
	put_memory(shm, w, RING_GPU_MEM_ALLOC, 0x2000, 500, 1600);
	put_memory(shm, w, RING_GPU_MEM_FREE, 0x1000, 0, 8000);
	put_memory(shm, w, RING_GPU_MEM_FREE, 0x9000, 100, 8100);
	put_memory(shm, w, RING_GPU_MEM_FREE, 0xa000, 10000, 8200);
	put_sync(shm, w, RING_GPU_SYNC_STREAM, 7, 5, 6000);
	put_sync(shm, w, RING_GPU_SYNC_CONTEXT, UINT64_MAX, 6, 6200);

	put_drops(shm, w, 5);
	put_drops(shm, w, 2);
	put_string(shm, w, S_BUFFERS, MSG_BUFFERS);
	put_status(shm, w, RING_GPU_BUFFERS, S_BUFFERS);
	put_status(shm, w, RING_GPU_BUFFERS, S_BUFFERS); /* said once */

	put_api(shm, w, pid + 2, S_LAUNCH, 7, 7000); /* B has no slot yet */
}

/* Runs the recorder over the records above; the trace is at path, what it
 * printed in errs. */
static void record(struct recorder_stats *st, char *errs, size_t errs_len)
{
	struct recorder_opts o = {path, 1, 8, 1u << 16, 1000000000ull};
	struct recorder *r = recorder_create(&o);
	assert_non_null(r);
	assert_int_equal(recorder_begin(r, (pid_t)pid, 0, NULL, TRACE_SRC_NVTX | TRACE_SRC_CUPTI), 0);
	size_t len;
	struct ring_shm *shm = attach(r, &len);

	int saved = capture_stderr();

	struct ring_slot *w = ring_slot_claim(shm, pid, pid + 1);
	struct ring_slot *m = ring_slot_claim(shm, pid, pid);
	assert_true(w < m); /* W is drained first */
	worker_records(shm, w);
	put_string(shm, m, S_DOMAIN, GPROF_DL_NVTX_DOMAIN);
	put_string(shm, m, S_MM, "aten::mm");
	put_thread(shm, m, RING_REC_THREAD_START, 0);
	put_range(shm, m, S_MM, S_DOMAIN, GPROF_DL_CAT_OPERATOR, 1000, 10000);
	recorder_poll(r);

	/* B: started before its call, which was drained first; then ended */
	struct ring_slot *b = ring_slot_claim(shm, pid, pid + 2);
	put_string(shm, b, S_BRANGE, "b-range");
	put_thread(shm, b, RING_REC_THREAD_START, 6500);
	put_range(shm, b, S_BRANGE, 0, 0, 6900, 7500);
	put_thread(shm, b, RING_REC_THREAD_END, 8000);
	ring_slot_release(b);
	recorder_poll(r);
	assert_int_equal(atomic_load(&b->state), RING_SLOT_FREE);

	/* B' reuses the tid: its call comes before its slot, B's late call after */
	put_api(shm, w, pid + 2, S_LAUNCH, 8, 9500);
	recorder_poll(r);
	struct ring_slot *b2 = ring_slot_claim(shm, pid, pid + 2);
	put_thread(shm, b2, RING_REC_THREAD_START, 9000);
	put_range(shm, b2, S_BRANGE, 0, 0, 9400, 9800);
	recorder_poll(r);
	put_api(shm, w, pid + 2, S_LAUNCH, 9, 7200);
	recorder_poll(r);

	assert_int_equal(recorder_finish(r, st), 0);
	captured(saved, errs, errs_len);

	/* the stats' strings live until the recorder is destroyed */
	assert_int_equal(st->gpu_status, RING_GPU_BUFFERS);
	assert_string_equal(st->gpu_status_msg, MSG_BUFFERS);
	assert_string_equal(st->gpu_on_msg, MSG_ON);
	assert_int_equal(st->ngpu_statuses, 2);
	assert_int_equal(st->gpu_statuses[0].code, RING_GPU_ON);
	assert_int_equal(st->gpu_statuses[1].code, RING_GPU_BUFFERS);
	recorder_destroy(r);
	munmap(shm, len);
}

static void test_gpu_records(void **state)
{
	(void)state;
	struct recorder_stats st;
	char errs[4096];
	record(&st, errs, sizeof(errs));

	/* printed once, and "on" not at all */
	const char *first = strstr(errs, MSG_BUFFERS);
	assert_non_null(first);
	assert_null(strstr(first + 1, MSG_BUFFERS));
	assert_null(strstr(errs, "CUPTI 13.0"));
	/* 7 calls, 5 pieces of work, 5 allocations and frees, 2 syncs, 1 overhead */
	assert_int_equal(st.gpu_events, 20);
	assert_int_equal(st.gpu_dropped, 7);
	assert_int_equal(st.dropped, 7);

	char err[256];
	struct readback b = {0};
	b.r = trace_reader_open(path, err, sizeof(err));
	assert_non_null(b.r);
	struct trace_visitor v = {.event = read_event};
	assert_int_equal(trace_reader_run(b.r, &v, &b), 0);
	assert_null(trace_reader_damage(b.r, NULL));
	struct trace_reader *r = b.r;
	assert_true(trace_reader_header(r)->sources & TRACE_SRC_CUPTI);

	/* M's calls are on M's own track, inside its operator */
	uint32_t tm = track(r, TRACE_TRACK_HOST, pid, 0, 0);
	assert_int_equal(find(&b, "aten::mm", 1000)->thread, tm);
	assert_int_equal(find(&b, "aten::mm", 1000)->type, TRACE_EV_OPERATOR);
	assert_int_equal(count_on(&b, tm, TRACE_EV_CUDA_RUNTIME), 4);
	const struct ev *c1 = find(&b, "cudaLaunchKernel", 2000);
	assert_int_equal(c1->thread, tm);
	assert_int_equal(c1->type, TRACE_EV_CUDA_RUNTIME);
	assert_int_equal(c1->dur, 100);
	assert_int_equal(c1->x.correlation, 1);
	assert_int_equal(c1->x.external_id, 77);
	assert_int_equal(find(&b, "cudaLaunchKernel", 3000)->x.external_id, 78);
	assert_int_equal(find(&b, "cudaLaunchKernel", 4000)->x.external_id, 0);
	assert_int_equal(find(&b, "cudaMemcpyAsync", 5000)->thread, tm);

	/* three kernels on stream 7 of device 0, context 1 */
	uint32_t s7 = track(r, TRACE_TRACK_STREAM, 0, 7, 0);
	const struct trace_thread *t7 = trace_reader_thread(r, s7);
	assert_int_equal(t7->device, 0);
	assert_int_equal(t7->context, 1);
	assert_int_equal(t7->name_str, 0); /* "stream 7" in every export and view */
	assert_int_equal(t7->start_ns, t0 + 1500); /* its first event .. its last */
	assert_int_equal(t7->end_ns, t0 + 8200);
	assert_int_equal(count_on(&b, s7, TRACE_EV_KERNEL), 3);
	const struct ev *k1 = find_corr(&b, TRACE_EV_KERNEL, 1);
	assert_int_equal(k1->thread, s7);
	assert_string_equal(k1->name, "gemm_kernel");
	assert_int_equal(k1->start, 2200);
	assert_int_equal(k1->dur, 500);
	assert_int_equal(k1->x.external_id, 77);
	assert_int_equal(k1->x.grid[0], 4);
	assert_int_equal(k1->x.grid[1], 2);
	assert_int_equal(k1->x.grid[2], 1);
	assert_int_equal(k1->x.block[0], 128);
	assert_int_equal(k1->x.registers, 32);
	assert_int_equal(k1->x.static_smem, 1024);
	assert_int_equal(k1->x.dynamic_smem, 256);
	assert_int_equal(k1->x.bytes, 0);
	assert_int_equal(k1->x.device, 0);
	assert_int_equal(k1->flags, 0);
	const struct ev *k2 = find_corr(&b, TRACE_EV_KERNEL, 2);
	assert_int_equal(k2->x.external_id, 78);
	assert_int_equal(k2->x.grid[0], 8);
	assert_int_equal(k2->x.block[0], 256);
	assert_int_equal(k2->x.registers, 40);
	assert_int_equal(find_corr(&b, TRACE_EV_KERNEL, 3)->flags, TRACE_EVF_NAME_TRUNCATED);

	/* the copy, named as Kineto names it, on its own stream */
	const struct ev *cp = find_corr(&b, TRACE_EV_MEMCPY, 4);
	assert_int_equal(cp->thread, track(r, TRACE_TRACK_STREAM, 0, 13, 0));
	assert_string_equal(cp->name, "Memcpy HtoD (Pinned -> Device)");
	assert_int_equal(cp->x.bytes, 4096);
	assert_int_equal(cp->x.copy_kind, TRACE_COPY_HTOD);
	assert_int_equal(cp->x.src_kind, TRACE_MEM_PINNED);
	assert_int_equal(cp->x.dst_kind, TRACE_MEM_DEVICE);
	assert_int_equal(cp->x.is_async, 1);
	assert_int_equal(cp->x.grid[0], 0);
	/* an NCCL kernel is communication, as imports have it */
	const struct ev *nc = find(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 6000);
	assert_int_equal(nc->type, TRACE_EV_COMMUNICATION);
	assert_int_equal(nc->thread, track(r, TRACE_TRACK_STREAM, 0, 20, 0));

	/* allocations and frees: Memory instants on stream 7, with the level */
	static const struct {
		uint64_t ts, address;
		int64_t bytes;
		uint64_t in_use;
	} mem[] = {
		{1500, 0x1000, 1000, 1000}, {1600, 0x2000, 500, 1500}, {8000, 0x1000, -1000, 500},
		{8100, 0x9000, -100, 400},  {8200, 0xa000, -10000, 0},
	};
	for (unsigned i = 0; i < 5; i++) {
		const struct ev *e = find(&b, "[memory]", mem[i].ts);
		assert_int_equal(e->type, TRACE_EV_MEMORY);
		assert_int_equal(e->thread, s7);
		assert_int_equal(e->flags, TRACE_EVF_MARK);
		assert_int_equal(e->dur, 0);
		assert_int_equal((int64_t)e->x.bytes, mem[i].bytes);
		assert_int_equal(e->x.address, mem[i].address);
		assert_int_equal(e->x.total_allocated, mem[i].in_use);
		assert_int_equal(e->x.device, 0);
		assert_int_equal(e->x.dst_kind, TRACE_MEM_DEVICE);
	}
	assert_int_equal(count_on(&b, s7, TRACE_EV_MEMORY), 5);

	/* synchronizations: a stream's on it, a context's on the context's track */
	const struct ev *ss = find(&b, "Stream Sync", 6000);
	assert_int_equal(ss->type, TRACE_EV_USER_DEFINED);
	assert_int_equal(ss->thread, s7);
	assert_int_equal(ss->x.correlation, 5);
	const struct ev *cs = find(&b, "Context Sync", 6200);
	uint32_t tc = track_named(r, "context 1 sync");
	assert_int_equal(cs->thread, tc);
	assert_int_equal(cs->x.correlation, 6);
	const struct trace_thread *ctx = trace_reader_thread(r, tc);
	assert_int_equal(ctx->kind, TRACE_TRACK_STREAM);
	assert_int_equal(ctx->stream, SYNC_TRACK_STREAM);
	assert_int_equal(ctx->context, 1);
	assert_int_equal(ctx->device, 0);

	/* CUPTI's overhead and drops on tracks of their own */
	uint32_t to = track_named(r, "[CUPTI overhead]");
	const struct trace_thread *ov = trace_reader_thread(r, to);
	assert_int_equal(ov->kind, TRACE_TRACK_HOST);
	assert_int_equal(ov->pid, pid);
	assert_int_equal(ov->tid, 0);
	const struct ev *fl = find(&b, "CUPTI buffer flush", 100);
	assert_int_equal(fl->thread, to);
	assert_int_equal(fl->type, TRACE_EV_USER_DEFINED);
	track_named(r, "[CUPTI]");
	assert_int_equal(trace_reader_total_drops(r), 7);

	/* the device, described twice, once */
	assert_int_equal(trace_reader_device_count(r), 1);
	const struct trace_device *d = trace_reader_device_by_id(r, 0);
	assert_non_null(d);
	assert_string_equal(trace_reader_string(r, d->name_str), "NVIDIA Test GPU");
	assert_int_equal(d->sm_count, 132);
	assert_int_equal(d->max_threads_per_sm, 2048);
	assert_int_equal(d->regs_per_sm, 65536);
	assert_int_equal(d->smem_per_block, 49152);
	assert_int_equal(d->total_memory, 85520809984ull);
	assert_int_equal(d->clock_khz, 1980000);
	assert_int_equal(d->cc_major, 9);

	/* B and B', one tid: each call on the thread it was made on */
	uint32_t tb = track(r, TRACE_TRACK_HOST, pid + 2, 0, 0);
	uint32_t tb2 = track(r, TRACE_TRACK_HOST, pid + 2, 0, 1);
	assert_int_equal(trace_reader_thread(r, tb)->start_ns, t0 + 6500);
	assert_int_equal(trace_reader_thread(r, tb)->end_ns, t0 + 8000);
	assert_int_equal(trace_reader_thread(r, tb2)->start_ns, t0 + 9000);
	assert_int_equal(find(&b, "b-range", 6900)->thread, tb);
	assert_int_equal(find_corr(&b, TRACE_EV_CUDA_RUNTIME, 7)->thread, tb);
	assert_int_equal(find_corr(&b, TRACE_EV_CUDA_RUNTIME, 9)->thread, tb);
	assert_int_equal(find(&b, "b-range", 9400)->thread, tb2);
	assert_int_equal(find_corr(&b, TRACE_EV_CUDA_RUNTIME, 8)->thread, tb2);
	/* M, W, B, B', streams 7, 13, 20, context 1, [CUPTI overhead], [CUPTI] */
	assert_int_equal(trace_reader_thread_count(r), 10);
	trace_reader_close(r);
}

/* The same trace through the analysis: kernels tied to their calls and
 * counted under the operator around them, the copy in the Memory
 * Manipulation view, the level of device memory in the Memory view. */
static void test_gpu_analysis(void **state)
{
	(void)state;
	struct recorder_stats st;
	char errs[4096];
	record(&st, errs, sizeof(errs));

	struct analysis a;
	char err[512];
	analysis_init(&a);
	if (analysis_load(&a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(&a);
	assert_int_equal(a.gpu.work, 5);
	assert_int_equal(a.gpu.linked, 4); /* the kernels and the copy; not the NCCL kernel */
	assert_int_equal(a.gpu.stream_memory, 5);
	assert_int_equal(a.dropped, 7);

	const struct view_opts detail = {.op_detail = 1, .sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_NS};
	struct table *t = view_operator(view_find("operator"), &a, &detail);
	const struct trow *op = row(t, "aten::mm");
	assert_int_equal(op->cells[1].v.count, 1);
	assert_true(op->cells[7].set);
	assert_int_equal((uint64_t)op->cells[7].v.ns, 500 + 300 + 200 + 400); /* GPU Total */
	const struct trow *gemm = row(t, "aten::mm/gemm_kernel");
	assert_int_equal(gemm->cells[1].v.count, 3);
	assert_int_equal((uint64_t)gemm->cells[7].v.ns, 1000);
	row(t, "aten::mm/Memcpy HtoD (Pinned -> Device)");
	table_free(t);

	t = view_memcpy(view_find("memory-manipulation"), &a, &detail);
	const struct trow *mc = row(t, "cudaMemcpyAsync HtoD (Pinned -> Device, async)");
	assert_int_equal(mc->cells[1].v.count, 1);
	assert_int_equal((uint64_t)mc->cells[7].v.ns, 400);
	table_free(t);

	t = view_memory(view_find("memory"), &a, &detail);
	assert_int_equal(t->nparts, 1);
	assert_string_equal(t->parts[0].label, "GPU0");
	assert_int_equal(fact(&t->parts[0], "peak_in_use_bytes"), 1500);
	table_free(t);

	t = view_kernel(view_find("kernel"), &a, &detail);
	const struct trow *k = row(t, "gemm_kernel");
	assert_int_equal(k->cells[1].v.count, 3);
	assert_true(k->cells[7].set); /* occupancy, from the device's properties */
	table_free(t);
	analysis_free(&a);
}

/* A status whose STRING an earlier drain brought keeps its text (once lost
 * by a drain that split the two: the privileges line went missing from a
 * CI run); one whose STRING never came says the code's own words. A call
 * and a kernel wait for their names, in another thread's ring. A worker
 * whose first records are a string and work, before its THREAD_START (its
 * track, made by the string, was once written only at THREAD_START, after
 * the stream's: a track index the file skipped, and the write failed). */
static void test_status_text_split(void **state)
{
	(void)state;
	struct recorder_opts o = {path, 1, 8, 1u << 16, 1000000000ull};
	struct recorder *r = recorder_create(&o);
	assert_non_null(r);
	assert_int_equal(recorder_begin(r, (pid_t)pid, 0, NULL, 0), 0);
	size_t len;
	struct ring_shm *shm = attach(r, &len);
	int saved = capture_stderr();
	struct ring_slot *w = ring_slot_claim(shm, pid, pid + 1);
	struct ring_slot *m = ring_slot_claim(shm, pid, pid);
	/* a string and work before the worker's THREAD_START: the worker's
	 * track is made by the string, the stream's after it */
	put_string(shm, w, 1, "another profiler holds CUPTI: stop torch.profiler");
	put_kernel(shm, w, 1, 0, 8, 50, 60, 1, 32, 8, 0);
	put_thread(shm, w, RING_REC_THREAD_START, 0);
	recorder_poll(r);
	put_status(shm, w, RING_GPU_SUBSCRIBER, 1);
	put_status(shm, w, RING_GPU_NO_CUPTI, 2); /* its string is in M's ring, not yet written */
	put_api(shm, w, pid, 3, 1, 100);
	put_kernel(shm, w, 4, 1, 7, 200, 300, 1, 32, 8, 0);
	recorder_poll(r);
	put_string(shm, m, 3, "cudaLaunchKernel");
	put_string(shm, m, 4, "k");
	put_thread(shm, m, RING_REC_THREAD_START, 0);
	recorder_poll(r);
	struct recorder_stats st;
	assert_int_equal(recorder_finish(r, &st), 0);
	char errs[1024];
	captured(saved, errs, sizeof(errs));
	assert_int_equal(st.ngpu_statuses, 2);
	assert_int_equal(st.gpu_statuses[0].code, RING_GPU_SUBSCRIBER);
	assert_string_equal(st.gpu_statuses[0].msg, "another profiler holds CUPTI: stop torch.profiler");
	assert_int_equal(st.gpu_statuses[1].code, RING_GPU_NO_CUPTI);
	assert_string_equal(st.gpu_statuses[1].msg, "no GPU activity recorded: CUPTI could not be loaded");
	assert_int_equal(st.gpu_status, RING_GPU_SUBSCRIBER); /* both off: the first */
	assert_non_null(strstr(errs, "another profiler holds CUPTI"));
	assert_non_null(strstr(errs, "CUPTI could not be loaded"));
	assert_int_equal(st.gpu_events, 3);
	recorder_destroy(r);
	munmap(shm, len);

	char err[256];
	struct readback b = {0};
	b.r = trace_reader_open(path, err, sizeof(err));
	assert_non_null(b.r);
	struct trace_visitor v = {.event = read_event};
	assert_int_equal(trace_reader_run(b.r, &v, &b), 0);
	uint32_t tm = track(b.r, TRACE_TRACK_HOST, pid, 0, 0);
	assert_int_equal(find(&b, "cudaLaunchKernel", 100)->thread, tm); /* deferred, then named */
	assert_int_equal(find(&b, "k", 200)->type, TRACE_EV_KERNEL);
	assert_int_equal(find(&b, "another profiler holds CUPTI: stop torch.profiler", 50)->thread,
			 track(b.r, TRACE_TRACK_STREAM, 0, 8, 0));
	assert_null(trace_reader_damage(b.r, NULL));
	trace_reader_close(b.r);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpdl-recgpu-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/t.gpdl", dir);
	pid = (uint32_t)getpid();
	t0 = clock_now_ns();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_records),
		cmocka_unit_test(test_gpu_analysis),
		cmocka_unit_test(test_status_text_split),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
