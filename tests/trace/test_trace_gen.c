/*
 * test_trace_gen.c - the synthetic trace generator (bench/trace): its default
 * output stays host-only, and with TRACE_GEN_GPU its GPU work is what PyTorch
 * on CUDA would record, which the analysis tests and benchmarks rely on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/trace/trace_gen.h"
#include "formats/trace/trace.h"

struct seen {
	struct trace_reader *r;
	struct trace_event *ev;
	struct trace_event_ext *x;
	unsigned char *hasx;
	size_t n, cap;
};

static int seen_event(void *ctx, const struct trace_event *e)
{
	struct seen *s = ctx;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		s->x = realloc(s->x, s->cap * sizeof(*s->x));
		s->hasx = realloc(s->hasx, s->cap);
		assert_true(s->ev && s->x && s->hasx);
	}
	s->ev[s->n] = *e;
	s->ev[s->n].ext = NULL;
	s->hasx[s->n] = e->ext != NULL;
	if (e->ext)
		s->x[s->n] = *e->ext;
	s->n++;
	return 0;
}

static void read_trace(const char *path, struct seen *s)
{
	const struct trace_visitor v = { .event = seen_event };
	char err[256];

	memset(s, 0, sizeof(*s));
	s->r = trace_reader_open(path, err, sizeof(err));
	assert_non_null(s->r);
	assert_int_equal(trace_reader_run(s->r, &v, s), 0);
	assert_null(trace_reader_damage(s->r, NULL));
}

static void seen_free(struct seen *s)
{
	trace_reader_close(s->r);
	free(s->ev);
	free(s->x);
	free(s->hasx);
}

static uint8_t type_of(const struct seen *s, size_t i)
{
	return trace_reader_desc(s->r, s->ev[i].desc)->type;
}

static const char *name_of(const struct seen *s, size_t i)
{
	return trace_reader_string(s->r, trace_reader_desc(s->r, s->ev[i].desc)->name_str);
}

static char path[256];

static void test_default_is_host_only(void **state)
{
	struct trace_gen_stats st;
	struct seen s;
	(void)state;

	assert_int_equal(trace_gen_write(path, 5000, 4, &st), 0);
	assert_int_equal(st.events, 5000);
	assert_int_equal(st.gpu_events, 0);
	read_trace(path, &s);
	assert_int_equal(s.n, 5000);
	for (size_t i = 0; i < s.n; i++) {
		assert_false(s.hasx[i]);
		assert_false(trace_event_type_is_device(type_of(&s, i)));
	}
	assert_int_equal(trace_reader_thread_count(s.r), 4);
	for (uint32_t t = 0; t < 4; t++)
		assert_int_equal(trace_reader_thread(s.r, t)->kind, TRACE_TRACK_HOST);
	assert_int_equal(trace_reader_device_count(s.r), 0);
	assert_int_equal(trace_reader_header(s.r)->rank, -1);
	assert_int_equal(trace_reader_header(s.r)->world_size, -1);
	seen_free(&s);
}

/* The index of the CudaRuntime call with correlation c, or SIZE_MAX. */
static size_t find_call(const struct seen *s, const size_t *calls, size_t ncalls, uint64_t c)
{
	size_t lo = 0, hi = ncalls;
	while (lo < hi) { /* calls are sorted by correlation */
		size_t mid = (lo + hi) / 2;
		if (s->x[calls[mid]].correlation < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ncalls && s->x[calls[lo]].correlation == c ? calls[lo] : SIZE_MAX;
}

static const struct seen *sort_ctx;

static int by_correlation(const void *a, const void *b)
{
	uint64_t x = sort_ctx->x[*(const size_t *)a].correlation;
	uint64_t y = sort_ctx->x[*(const size_t *)b].correlation;
	return x < y ? -1 : x > y;
}

static void test_gpu(void **state)
{
	enum { N = 60000, THREADS = 3 };
	struct trace_gen_stats st;
	struct seen s;
	size_t *calls, ncalls = 0, gpu = 0, nccl = 0, nccl_overlap = 0, memory = 0, frees = 0;
	size_t kernels = 0, copies = 0, sets = 0;
	uint64_t in_use = 0;
	(void)state;

	assert_int_equal(trace_gen_write_flags(path, N, THREADS, TRACE_GEN_GPU, &st), 0);
	assert_int_equal(st.events, N);
	read_trace(path, &s);
	assert_int_equal(s.n, N);

	const struct trace_header *h = trace_reader_header(s.r);
	assert_int_equal(h->rank, 0);
	assert_int_equal(h->world_size, 8);
	assert_string_equal(h->dist_backend, "nccl");
	assert_true(h->sources & TRACE_SRC_CUPTI);
	const struct trace_device *d = trace_reader_device_by_id(s.r, 0);
	assert_non_null(d);
	assert_string_equal(trace_reader_string(s.r, d->name_str), "NVIDIA H100 80GB HBM3");
	assert_int_equal(d->sm_count, 132);
	assert_int_equal(d->cc_major, 9);
	assert_int_equal(trace_reader_thread_count(s.r), THREADS + 2);
	for (uint32_t t = 0; t < 2; t++) {
		const struct trace_thread *tr = trace_reader_thread(s.r, THREADS + t);
		assert_int_equal(tr->kind, TRACE_TRACK_STREAM);
		assert_int_equal(tr->device, 0);
		assert_int_equal(tr->stream, t ? 13 : 7);
		assert_int_not_equal(tr->end_ns, 0);
	}

	calls = malloc(s.n * sizeof(*calls));
	assert_non_null(calls);
	for (size_t i = 0; i < s.n; i++) {
		uint8_t type = type_of(&s, i);
		if (type == TRACE_EV_CUDA_RUNTIME) {
			assert_true(s.hasx[i]);
			assert_int_not_equal(s.x[i].correlation, 0);
			assert_int_not_equal(s.x[i].external_id, 0);
			assert_int_equal(s.ev[i].thread, 0);
			calls[ncalls++] = i;
		}
		if (type == TRACE_EV_OPERATOR && s.ev[i].thread == 0) {
			assert_true(s.hasx[i]);
			assert_int_not_equal(s.x[i].external_id, 0);
		}
		if (type == TRACE_EV_MEMORY) {
			int64_t b = (int64_t)s.x[i].bytes;
			assert_true(s.hasx[i]);
			assert_int_equal(s.ev[i].flags & TRACE_EVF_MARK, TRACE_EVF_MARK);
			assert_int_equal(s.ev[i].dur_ns, 0);
			assert_true(b != 0);
			assert_int_not_equal(s.x[i].address, 0);
			assert_int_equal(s.x[i].dst_kind, TRACE_MEM_DEVICE);
			in_use += (uint64_t)b; /* one thread, in order: a running sum */
			assert_int_equal(s.x[i].total_allocated, in_use);
			memory++;
			frees += b < 0;
		}
	}
	sort_ctx = &s;
	qsort(calls, ncalls, sizeof(*calls), by_correlation);
	for (size_t i = 0; i < s.n; i++) {
		const struct trace_event *e = &s.ev[i];
		const struct trace_event_ext *x = &s.x[i];
		size_t c;
		if (e->thread < THREADS) {
			assert_false(trace_event_type_is_device(type_of(&s, i)));
			continue;
		}
		gpu++;
		assert_true(s.hasx[i]);
		assert_true(trace_event_type_is_device(type_of(&s, i)));
		c = find_call(&s, calls, ncalls, x->correlation);
		if (c == SIZE_MAX) /* its call was past the N-th event */
			continue;
		assert_true(s.ev[c].start_ns < e->start_ns); /* starts after its launch */
		assert_int_equal(s.x[c].external_id, x->external_id);
		switch (type_of(&s, i)) {
		case TRACE_EV_KERNEL:
			assert_int_equal(e->thread, THREADS);
			assert_true(x->grid[0] && x->block[0] && x->registers);
			assert_true(x->block[0] * x->registers <= 65536);
			assert_string_equal(name_of(&s, c), "cudaLaunchKernel");
			kernels++;
			break;
		case TRACE_EV_MEMCPY:
			assert_true(x->bytes && x->copy_kind && x->src_kind && x->dst_kind);
			assert_string_equal(name_of(&s, c), "cudaMemcpyAsync");
			copies++;
			break;
		case TRACE_EV_MEMSET:
			assert_true(x->bytes && x->is_async);
			assert_string_equal(name_of(&s, c), "cudaMemsetAsync");
			sets++;
			break;
		default:
			assert_int_equal(type_of(&s, i), TRACE_EV_COMMUNICATION);
			assert_int_equal(e->thread, THREADS + 1);
			assert_non_null(strstr(name_of(&s, i), "nccl"));
			nccl++;
			/* a compute kernel runs while it does */
			for (size_t j = 0; j < s.n; j++)
				if (s.ev[j].thread == THREADS && s.ev[j].start_ns < e->start_ns + e->dur_ns &&
				    s.ev[j].start_ns + s.ev[j].dur_ns > e->start_ns) {
					nccl_overlap++;
					break;
				}
		}
	}
	print_message("%zu GPU events: %zu kernels, %zu copies, %zu sets, %zu NCCL (%zu overlapping); "
		      "%zu memory events (%zu frees); %.2f bytes/event\n",
		      gpu, kernels, copies, sets, nccl, nccl_overlap, memory, frees,
		      (double)st.bytes / N);
	assert_int_equal(gpu, st.gpu_events);
	assert_true(kernels > 1000 && copies > 50 && sets > 50 && nccl > 50);
	assert_true(nccl_overlap * 2 > nccl);
	assert_true(memory > 1000 && frees > 100);
	free(calls);
	seen_free(&s);
}

/* The design's size budget, at most 24 bytes per event on average, holds for
 * the generator's traces, host-only and with GPU work (bench-trace-size gives
 * the 10-million-event figures); and a kernel's block size, registers and
 * static shared memory do not change from launch to launch, as in a real
 * program, which is what lets LCFG intern launch configurations. */
static void test_bytes_per_event(void **state)
{
	enum { N = 1000000 };
	struct trace_gen_stats st;
	struct seen s;
	(void)state;

	assert_int_equal(trace_gen_write(path, N, 4, &st), 0);
	print_message("host-only: %.2f bytes/event\n", (double)st.bytes / N);
	assert_true((double)st.bytes / N < 24.0);
	assert_int_equal(trace_gen_write_flags(path, N, 4, TRACE_GEN_GPU, &st), 0);
	print_message("with GPU work: %.2f bytes/event\n", (double)st.bytes / N);
	assert_true((double)st.bytes / N < 24.0);

	read_trace(path, &s);
	assert_int_equal(s.n, N);
	uint32_t nd = trace_reader_desc_count(s.r);
	struct trace_event_ext *first = calloc(nd + 1, sizeof(*first));
	assert_non_null(first);
	for (size_t i = 0; i < s.n; i++) {
		struct trace_event_ext *f = &first[s.ev[i].desc];
		if (type_of(&s, i) != TRACE_EV_KERNEL)
			continue;
		if (!f->block[0])
			*f = s.x[i];
		assert_int_equal(s.x[i].block[0], f->block[0]);
		assert_int_equal(s.x[i].registers, f->registers);
		assert_int_equal(s.x[i].static_smem, f->static_smem);
	}
	free(first);
	seen_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_is_host_only),
		cmocka_unit_test(test_gpu),
		cmocka_unit_test(test_bytes_per_event),
	};
	const char *base = getenv("TMPDIR");
	int rc;

	snprintf(path, sizeof(path), "%s/test_trace_gen.%d.gpdl", base && *base ? base : "/tmp",
		 (int)getpid());
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	return rc;
}
