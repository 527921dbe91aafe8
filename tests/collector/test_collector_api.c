/*
 * test_collector_api.c - the bindings' interface (gprof-dl-api.h), the
 * recording window and torch's emit_nvtx messages, driven in-process.
 *
 * As test_collector.c: the collector's static library is attached to a fresh
 * ring in an anonymous mapping, the calls are made (through the interface and
 * through real NVTX), and the slots are read back with ring_read. The window
 * is read from the environment at attach, as at a process's start, so each
 * window test sets its variables before attaching.
 */
#include "gpdl-config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/collector/records.h"

#if GPDL_HAVE_NVTX

#include <nvtx3/nvToolsExt.h>

#include "formats/trace/trace.h"
#include "lib/collector/collector-test.h"
#include "lib/collector/collector.h"
#include "lib/collector/gprof-dl-api.h"
#include "lib/collector/gprof-dl-nvtx.h"
#include "lib/collector/sched.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

static const char *const window_vars[] = {
	"GPROF_DL_TIMER_ONLY", "GPROF_DL_STEPS",	 "GPROF_DL_T0_NS",     "GPROF_DL_DELAY_NS",
	"GPROF_DL_DURATION_NS", "GPROF_DL_PAUSED", "GPROF_DL_RECORD_SHAPES", "GPROF_DL_NO_PYTHON",
	"GPROF_DL_PROFILE_MEMORY", "GPROF_DL_CAPTURE", "GPROF_DL_CAPTURE_END",
};

struct fixture {
	struct ring_shm *shm;
	size_t len;
	const struct gprof_dl_api *api;
	nvtxDomainHandle_t gpdl;
};

/* Attaches with the window variables given as "NAME=value" (NULL-ended). */
static int attach_with(void **state, const char *const *env)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	for (size_t i = 0; i < sizeof(window_vars) / sizeof(window_vars[0]); i++)
		unsetenv(window_vars[i]);
	for (; env && *env; env++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", *env);
		char *eq = strchr(buf, '=');
		*eq = '\0';
		setenv(buf, eq + 1, 1);
	}
	f->shm = test_ring_new(8, 1u << 16, &f->len);
	if (collector_test_attach(f->shm, f->len) != 0)
		return -1;
	f->api = gprof_dl_api(GPROF_DL_API_VERSION);
	f->gpdl = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return attach_with(state, NULL);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	collector_test_detach();
	test_ring_free(f->shm, f->len);
	free(f);
	for (size_t i = 0; i < sizeof(window_vars) / sizeof(window_vars[0]); i++)
		unsetenv(window_vars[i]);
	return 0;
}

static void assert_name(const struct view *v, uint32_t id, const char *text)
{
	assert_int_not_equal(id, 0);
	assert_non_null(view_str(v, id));
	assert_string_equal(view_str(v, id), text);
}

/* The names of the slot's complete ranges (RANGE, RANGE_EXT and the steps'
 * STEP), in ring order, joined by spaces. */
static const char *range_names(const struct view *v, const struct view_slot *s)
{
	static char buf[4096];
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		uint32_t id;
		if (s->r[i]->kind == RING_REC_RANGE)
			id = ((const struct ring_range *)(const void *)s->r[i])->name_str;
		else if (s->r[i]->kind == RING_REC_RANGE_EXT)
			id = ((const struct ring_range_ext *)(const void *)s->r[i])->name_str;
		else if (s->r[i]->kind == RING_REC_STEP)
			id = ((const struct ring_step *)(const void *)s->r[i])->name_str;
		else
			continue;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " " : "",
				      view_str(v, id) ? view_str(v, id) : "?");
	}
	return buf;
}

/* The same for marks. */
static const char *mark_names(const struct view *v, const struct view_slot *s)
{
	static char buf[4096];
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		if (s->r[i]->kind != RING_REC_MARK)
			continue;
		uint32_t id = ((const struct ring_mark *)(const void *)s->r[i])->name_str;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " " : "",
				      view_str(v, id) ? view_str(v, id) : "?");
	}
	return buf;
}

static size_t string_records(const struct view_slot *s, const struct view *v, const char *text)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i]->kind == RING_REC_STRING && !strcmp((const char *)(s->r[i] + 1), text))
			n++;
	(void)v;
	return n;
}

static nvtxEventAttributes_t attr(const char *msg, uint32_t category)
{
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = category;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return a;
}

/* An NVTX ProfileStep of the gprof-dl domain, pushed. */
static void nvtx_step_push(struct fixture *f, const char *name)
{
	nvtxEventAttributes_t a = attr(name, GPROF_DL_CAT_PROFILE_STEP);
	nvtxDomainRangePushEx(f->gpdl, &a);
}

static void sleep_until(uint64_t t)
{
	while (clock_now_ns() < t) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

/* ---- torch's messages ---------------------------------------------------- */

struct parse_case {
	const char *msg;
	const char *name;
	int64_t seq;
	const char *shapes; /* NULL: none */
};

static void test_torch_parse(void **state)
{
	(void)state;
	static const struct parse_case cases[] = {
		/* the forms of torch/csrc/profiler/util.cpp getNvtxStr */
		{"aten::addmm", "aten::addmm", -1, NULL},
		{"aten::addmm, seq = 12", "aten::addmm", 12, NULL},
		{"aten::addmm, seq = 2794, op_id = 16396", "aten::addmm", 2794, NULL},
		{"aten::mm, op_id = 345, sizes = [[32, 64], [64]]", "aten::mm", -1, "[[32, 64], [64]]"},
		{"aten::mm, seq = 12, op_id = 345, sizes = [[32, 64], [64]]", "aten::mm", 12,
		 "[[32, 64], [64]]"},
		{"aten::mm, seq = 12, op_id = 345, sizes = [[32, 64], [64]], input_op_ids = [(1, 0), (2, 1)]",
		 "aten::mm", 12, "[[32, 64], [64]]"},
		{"aten::add, op_id = 7, input_op_ids = [(3, 0)]", "aten::add", -1, NULL},
		{"autograd::engine::evaluate_function: NllLossBackward0, op_id = 17086",
		 "autograd::engine::evaluate_function: NllLossBackward0", -1, NULL},
		{"aten::addmm, seq = 2794, op_id = 16396", "aten::addmm", 2794, NULL},
		{"aten::zeros, seq = 0, op_id = 1, sizes = [[], []]", "aten::zeros", 0, "[[], []]"},
		/* parts in any order; commas that start no part */
		{"x, sizes = [[1]], seq = 5", "x", 5, "[[1]]"},
		{"a, b, c", "a, b, c", -1, NULL},
		{"a, seq=3", "a, seq=3", -1, NULL},
		{"name,", "name,", -1, NULL},
		{", seq = 7", "", 7, NULL},
		{"name, seq = abc, op_id = 1", "name", -1, NULL},
		{"name, seq = ", "name", -1, NULL},
		{"name, seq = -1", "name", -1, NULL},
		{"name, sizes = ", "name", -1, ""},
		{"", "", -1, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *c = &cases[i];
		struct coll_torch_msg m;
		coll_torch_parse(c->msg, strlen(c->msg), &m);
		if (m.name_len != strlen(c->name) || memcmp(m.name, c->name, m.name_len) ||
		    m.seq != c->seq || !m.shapes != !c->shapes ||
		    (c->shapes && (m.shapes_len != strlen(c->shapes) ||
				   memcmp(m.shapes, c->shapes, m.shapes_len))))
			fail_msg("'%s': name '%.*s' seq %" PRId64 " shapes '%.*s'", c->msg, (int)m.name_len,
				 m.name, m.seq, (int)m.shapes_len, m.shapes ? m.shapes : "");
	}
	/* only len bytes are read */
	struct coll_torch_msg m;
	coll_torch_parse("op, seq = 123456", 11, &m);
	assert_int_equal(m.name_len, 2);
	assert_int_equal(m.seq, 1);
}

/* torch_nvtx(1 | GPROF_DL_TORCH_NVTX_NO_COMM): the binding records c10d's
 * communication calls itself (comm()), so their NVTX copies are left out,
 * nested operators inside them and after them still recorded, every pop
 * paired with its push. Off again, they are Operators as before (the
 * recorder types them Communication by name). */
static void test_torch_nvtx_no_comm(void **state)
{
	struct fixture *f = *state;
	assert_non_null(f->api);
	f->api->torch_nvtx(1 | GPROF_DL_TORCH_NVTX_NO_COMM);
	nvtxRangePushA("gloo:all_reduce, op_id = 7, sizes = [[1000]]");
	nvtxRangePushA("aten::add, seq = 3, op_id = 8"); /* inside: recorded */
	nvtxRangePop();
	nvtxRangePop(); /* the left-out push's pop: writes nothing */
	nvtxRangePushA("NCCL:broadcast, op_id = 9"); /* any case */
	nvtxRangePop();
	nvtxRangePushA("aten::mm, op_id = 10");
	nvtxRangePop();
	nvtxRangePushA("glue:all_reduce, op_id = 11"); /* no backend: an operator */
	nvtxRangePop();
	f->api->torch_nvtx(1);
	nvtxRangePushA("gloo:barrier, op_id = 12");
	nvtxRangePop();
	f->api->torch_nvtx(0);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_string_equal(range_names(&v, s), "aten::add aten::mm glue:all_reduce gloo:barrier");
	assert_int_equal(view_count(s, RING_REC_POP_UNBALANCED), 0);
	assert_int_equal(string_records(s, &v, "gloo:all_reduce"), 0);
	view_free(&v);
}

static void test_torch_nvtx(void **state)
{
	struct fixture *f = *state;
	assert_non_null(f->api);
	/* off: torch's messages are plain UserDefined ranges */
	nvtxRangePushA("aten::relu, seq = 1, op_id = 2");
	nvtxRangePop();
	f->api->torch_nvtx(1);
	char msg[128];
	for (int i = 0; i < 3; i++) { /* op_id differs: the name is interned once */
		snprintf(msg, sizeof(msg), "aten::addmm, seq = %d, op_id = %d", 2794 + i, 16396 + i);
		assert_int_equal(nvtxRangePushA(msg), 0);
		assert_int_equal(nvtxRangePop(), 0);
	}
	nvtxRangePushA("aten::mm, op_id = 345, sizes = [[32, 64], [64]]");
	nvtxRangePushA("aten::mm, op_id = 346, sizes = [[32, 64], [64]]"); /* nested: level 1 */
	nvtxRangePop();
	nvtxRangePop();
	nvtxRangePushA("autograd::engine::evaluate_function: NllLossBackward0, op_id = 17086");
	nvtxRangePop();
	nvtxRangePushW(L"aten::t, seq = 9, op_id = 5");
	nvtxRangePop();
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(NULL, "aten::view, seq = 4, op_id = 6");
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = reg;
	nvtxRangePushEx(&a);
	nvtxRangePop();
	nvtxRangePushA("aten::plain"); /* NAME alone is torch's form too */
	nvtxRangePop();
	/* another domain's messages are never torch's */
	nvtxDomainHandle_t other = nvtxDomainCreateA("other");
	nvtxEventAttributes_t o = attr("aten::x, seq = 3", 0);
	nvtxDomainRangePushEx(other, &o);
	nvtxDomainRangePop(other);
	f->api->torch_nvtx(0);
	nvtxRangePushA("aten::addmm, seq = 1, op_id = 1");
	nvtxRangePop();

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_string_equal(range_names(&v, s),
			    "aten::relu, seq = 1, op_id = 2 aten::addmm aten::addmm aten::addmm aten::mm aten::mm "
			    "autograd::engine::evaluate_function: NllLossBackward0 aten::t aten::view aten::plain "
			    "aten::x, seq = 3 aten::addmm, seq = 1, op_id = 1");
	assert_int_equal(string_records(s, &v, "aten::addmm"), 1);
	assert_int_equal(string_records(s, &v, "[[32, 64], [64]]"), 1);
	assert_int_equal(view_count(s, RING_REC_RANGE_EXT), 7); /* the ones with a seq or shapes */
	int64_t seqs[] = {2794, 2795, 2796};
	for (int i = 0; i < 3; i++) {
		const struct ring_range_ext *x = view_find(s, RING_REC_RANGE_EXT, (size_t)i);
		assert_name(&v, x->name_str, "aten::addmm");
		assert_name(&v, x->domain_str, GPROF_DL_NVTX_DOMAIN);
		assert_int_equal(x->category, GPROF_DL_CAT_OPERATOR);
		assert_int_equal(x->seq, seqs[i]);
		assert_int_equal(x->shapes_str, 0);
		assert_int_equal(x->samples, 0);
		assert_int_equal(x->h.size, sizeof(*x));
		assert_true(x->start_ns <= x->end_ns);
	}
	for (int i = 3; i < 5; i++) {
		const struct ring_range_ext *x = view_find(s, RING_REC_RANGE_EXT, (size_t)i);
		assert_name(&v, x->name_str, "aten::mm");
		assert_name(&v, x->shapes_str, "[[32, 64], [64]]");
		assert_int_equal(x->seq, -1);
	}
	const struct ring_range_ext *w = view_find(s, RING_REC_RANGE_EXT, 5);
	assert_name(&v, w->name_str, "aten::t");
	assert_int_equal(w->seq, 9);
	const struct ring_range_ext *rg = view_find(s, RING_REC_RANGE_EXT, 6);
	assert_name(&v, rg->name_str, "aten::view");
	assert_int_equal(rg->seq, 4);
	/* without seq or shapes: a plain range, of the gprof-dl domain */
	const struct ring_range *bw = view_find(s, RING_REC_RANGE, 1);
	assert_name(&v, bw->name_str, "autograd::engine::evaluate_function: NllLossBackward0");
	assert_name(&v, bw->domain_str, GPROF_DL_NVTX_DOMAIN);
	assert_int_equal(bw->category, GPROF_DL_CAT_OPERATOR);
	const struct ring_range *plain = view_find(s, RING_REC_RANGE, 2);
	assert_name(&v, plain->name_str, "aten::plain");
	assert_int_equal(plain->category, GPROF_DL_CAT_OPERATOR);
	const struct ring_range *first = view_find(s, RING_REC_RANGE, 0);
	assert_int_equal(first->domain_str, 0);
	assert_int_equal(first->category, 0);
	const struct ring_range *last = view_find(s, RING_REC_RANGE, 4);
	assert_int_equal(last->domain_str, 0);
	assert_int_equal(view_check_defined_before_use(&v, s, 0), 0);
	view_free(&v);
}

/* What parsing costs a push: printed, never asserted (bench/ measures). */
static void test_torch_parse_cost(void **state)
{
	(void)state;
	static const char *msgs[] = {
		"aten::addmm, seq = 2794, op_id = 16396",
		"aten::mm, seq = 12, op_id = 345, sizes = [[32, 64], [64, 128]], input_op_ids = [(1, 0), (2, 1)]",
	};
	enum { N = 200000 };
	for (int k = 0; k < 2; k++) {
		struct coll_torch_msg m;
		size_t len = strlen(msgs[k]);
		uint64_t t0 = clock_now_ns(), sum = 0;
		for (int i = 0; i < N; i++) {
			coll_torch_parse(msgs[k], len, &m);
			sum += m.name_len + (uint64_t)m.seq;
		}
		print_message("torch message parse: %.1f ns (%zu bytes) [%" PRIu64 "]\n",
			      (double)(clock_now_ns() - t0) / N, len, sum % 2);
	}
}

/* ---- the interface ------------------------------------------------------- */

static void test_api_found_only_when_attached(void **state)
{
	struct fixture *f = *state;
	assert_non_null(f->api);
	assert_ptr_equal(gprof_dl_api(GPROF_DL_API_VERSION), f->api);
	assert_null(gprof_dl_api(GPROF_DL_API_VERSION + 1));
	assert_null(gprof_dl_api(0));
	assert_int_equal(f->api->version, GPROF_DL_API_VERSION);
	assert_int_equal(f->api->size, sizeof(struct gprof_dl_api));
	assert_int_equal(f->api->options(), 0);
	assert_int_equal(*f->api->detail, 1);
	uint64_t a = f->api->now(), b = clock_now_ns();
	assert_true(a <= b && b - a < 1000000000ull);
	collector_test_detach();
	assert_null(gprof_dl_api(GPROF_DL_API_VERSION));
	assert_int_equal(collector_test_attach(f->shm, f->len), 0);
}

static void test_api_strings(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	uint32_t a = api->string("forward", 7);
	uint32_t b = api->string("forwardXYZ", 7); /* by content, not by pointer */
	char heap[] = "forward";
	uint32_t c = api->string(heap, 7);
	uint32_t d = api->string("backward", 8);
	uint32_t e = api->string("", 0);
	uint32_t nul = api->string(NULL, 5);
	assert_int_not_equal(a, 0);
	assert_int_equal(a, b);
	assert_int_equal(a, c);
	assert_int_not_equal(a, d);
	assert_int_not_equal(e, 0);
	assert_int_equal(nul, e);
	char big[RING_NAME_MAX + 100];
	memset(big, 'n', sizeof(big));
	uint32_t cut = api->string(big, sizeof(big));

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_name(&v, a, "forward");
	assert_name(&v, d, "backward");
	assert_int_equal(string_records(s, &v, "forward"), 1);
	assert_int_equal(strlen(view_str(&v, cut)), RING_NAME_MAX);
	view_free(&v);
}

/* A step recorded through the interface, as the Python package does: step()
 * when it begins, range() when it is known to have ended. Its thread spins
 * 3 ms and sleeps 3 ms: on a CPU for about the spin, never more than the
 * step; runnable-but-waiting time and CPU time together within the step.
 * One whose start no sample was taken near is not measured; schedstat's
 * line parses, a bad one does not. */
/* The samples a step takes: the nearest to each of its ends, within 1 ms
 * or 2 % of the step; none near an end, the step is not measured. A step
 * recorded after the fact samples now only when that serves it. Samples'
 * times are made up here; their CPU and run-queue times are this thread's. */
static void test_sched_nearest(void **state)
{
	(void)state;
	const uint64_t ms = 1000000, t0 = 1000000 * ms;
	uint64_t cpu, runq;
	coll_sched_thread_end(); /* this thread's earlier samples are gone */
	coll_sched_sample(t0);
	/* 2 ms of this thread's CPU time (a 2 ms wall-clock spin gets less of
	 * it on a busy machine: 1.4 ms once in CI), at most 2 s of wall time */
	struct timespec c0, c1;
	uint64_t until = coll_clock_now() + 2000 * ms;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	while ((c1.tv_sec - c0.tv_sec) * 1000000000LL + (c1.tv_nsec - c0.tv_nsec) < 2000000 &&
	       coll_clock_now() < until);
	coll_sched_sample(t0 + 10 * ms);
	/* each end 0.9 ms from a sample: measured, the 2 ms of CPU in it */
	assert_int_equal(coll_sched_span(t0 + 900000, t0 + 10 * ms + 900000, &cpu, &runq), 1);
	assert_true(cpu >= 1500000);
	/* an end 1.1 ms from the nearest sample, in a 10 ms step: not measured */
	cpu = runq = 42;
	assert_int_equal(coll_sched_span(t0, t0 + 11 * ms + 100000, &cpu, &runq), 0);
	assert_int_equal(cpu, 42);
	assert_int_equal(coll_sched_span(t0 - 1100000, t0 + 10 * ms, &cpu, &runq), 0);
	/* a 500 ms step: 2 % of it, 10 ms, is near enough */
	coll_sched_sample(t0 + 500 * ms);
	assert_int_equal(coll_sched_span(t0 + 9 * ms, t0 + 509 * ms, &cpu, &runq), 1);
	assert_int_equal(coll_sched_span(t0 + 11 * ms + 100000, t0 + 500 * ms, &cpu, &runq), 1);
	assert_int_equal(coll_sched_span(t0 + 21 * ms, t0 + 500 * ms, &cpu, &runq), 0);
	/* recorded 0.5 ms after its end, none there yet: now is sampled */
	coll_sched_sample_for(t0 + 600 * ms + 500000, t0 + 500 * ms, t0 + 600 * ms);
	assert_int_equal(coll_sched_span(t0 + 500 * ms, t0 + 600 * ms, &cpu, &runq), 1);
	/* recorded 10 ms after its end: now serves no end, and is not sampled */
	coll_sched_sample_for(t0 + 620 * ms, t0 + 601 * ms, t0 + 610 * ms);
	assert_int_equal(coll_sched_span(t0 + 600 * ms, t0 + 620 * ms, &cpu, &runq), 0);
	/* the oldest of more than COLL_SCHED_SAMPLES samples is gone */
	for (uint64_t i = 1; i <= COLL_SCHED_SAMPLES; i++)
		coll_sched_sample(t0 + (700 + i) * ms);
	assert_int_equal(coll_sched_span(t0 + 500 * ms, t0 + 708 * ms, &cpu, &runq), 0);
	assert_int_equal(coll_sched_span(t0 + 701 * ms, t0 + 708 * ms, &cpu, &runq), 1);
	coll_sched_thread_end();
}

static void test_api_step_sched(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	uint32_t name = api->string("ProfileStep#0", 13);
	struct view v;
	/* A step of 3 ms of this thread's CPU time (a wall-clock spin gets
	 * less of it on a busy machine), at most 2 s of wall time, and a 3 ms
	 * sleep. Its CPU time is measured when the samples at the step's
	 * boundaries lie within 1 ms of its start and end: on a machine whose
	 * cores are all busy the thread may lose the CPU for longer between
	 * the two, and then the step is rightly not measured (cpu_ns 0), so a
	 * few tries, until one is; every measured one must be right. */
	int tries = 0, measured = 0;
	for (; tries < 8 && !measured; tries++) {
		api->step(2 * (uint64_t)tries);
		uint64_t start = api->now();
		struct timespec c0, c1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		do
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		while ((c1.tv_sec - c0.tv_sec) * 1000000000LL + (c1.tv_nsec - c0.tv_nsec) < 3000000 &&
		       api->now() < start + 2000000000ULL);
		struct timespec ts = {0, 3000000};
		nanosleep(&ts, NULL);
		uint64_t end = api->now();
		api->step(2 * (uint64_t)tries + 1);
		api->range(GPROF_DL_CAT_PROFILE_STEP, name, start, end, 32);
		view_load(&v, f->shm); /* reads what the ring holds, this try's records */
		assert_int_equal(view_count(&v.slot[0], RING_REC_STEP), 1);
		const struct ring_step *x = view_find(&v.slot[0], RING_REC_STEP, 0);
		assert_non_null(x);
		assert_int_equal(x->samples, 32);
		if (x->cpu_ns) {
			measured = 1;
			if (x->cpu_ns < 2500000 || x->cpu_ns > end - start + 1000000)
				fail_msg("cpu_ns %" PRIu64 " for a 3 ms spin in a step of %" PRIu64, x->cpu_ns,
					 end - start);
			assert_true(x->cpu_ns + x->runq_ns <= end - start + 1000000);
		} else {
			assert_int_equal(x->runq_ns, 0);
		}
		view_free(&v);
	}
	if (!measured)
		fail_msg("no step of %d measured", tries);
	/* a step recorded long after its end: no sample near it */
	uint64_t start = api->now();
	api->range(GPROF_DL_CAT_PROFILE_STEP, name, start - 100000000, start - 90000000, 32);
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_STEP), 1);
	const struct ring_step *old = view_find(s, RING_REC_STEP, 0);
	assert_int_equal(old->cpu_ns, 0);
	assert_int_equal(old->runq_ns, 0);
	view_free(&v);
	uint64_t cpu, runq;
	assert_int_equal(coll_sched_parse("123456 789 12\n", &cpu, &runq), 0);
	assert_int_equal(cpu, 123456);
	assert_int_equal(runq, 789);
	assert_int_equal(coll_sched_parse("x 1 2", &cpu, &runq), -1);
	assert_int_equal(coll_sched_parse("12", &cpu, &runq), -1);
}

static void test_api_ranges(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	uint32_t fwd = api->string("forward", 7), mm = api->string("aten::mm", 8);
	uint32_t shapes = api->string("[[2, 3], [3, 4]]", 16), step = api->string("ProfileStep#0", 13);
	uint32_t tick = api->string("tick", 4);
	uint64_t t0 = api->now();
	errno = 4321;
	api->push(GPROF_DL_CAT_FORWARD, fwd);
	api->op_push(mm, 2794, shapes);
	api->op_push(mm, -1, 0);
	api->pop();
	api->pop();
	api->mark(GPROF_DL_CAT_OPTIMIZATION, tick);
	/* NVTX's pop of the gprof-dl domain ends the interface's range, and the
	 * other way round */
	assert_int_equal(nvtxDomainRangePop(f->gpdl), 0);
	nvtxEventAttributes_t a = attr("nvtx backward", GPROF_DL_CAT_BACKWARD);
	assert_int_equal(nvtxDomainRangePushEx(f->gpdl, &a), 0);
	api->pop();
	assert_int_equal(nvtxDomainRangePop(f->gpdl), -1); /* nothing left */
	api->range(GPROF_DL_CAT_PROFILE_STEP, step, t0, t0 + 5000000, 64);
	api->range(GPROF_DL_CAT_DATALOADER, fwd, t0 + 1, t0 + 2, 0);
	api->pop(); /* unbalanced */
	assert_int_equal(errno, 4321);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_string_equal(range_names(&v, s),
			    "aten::mm aten::mm forward nvtx backward ProfileStep#0 forward");
	const struct ring_range *inner = view_find(s, RING_REC_RANGE, 0);
	assert_name(&v, inner->domain_str, GPROF_DL_NVTX_DOMAIN);
	assert_int_equal(inner->category, GPROF_DL_CAT_OPERATOR);
	const struct ring_range_ext *op = view_find(s, RING_REC_RANGE_EXT, 0);
	assert_int_equal(op->seq, 2794);
	assert_int_equal(op->shapes_str, shapes);
	assert_int_equal(op->samples, 0);
	assert_int_equal(op->category, GPROF_DL_CAT_OPERATOR);
	assert_true(op->start_ns <= inner->start_ns && inner->end_ns <= op->end_ns);
	const struct ring_range *outer = view_find(s, RING_REC_RANGE, 1);
	assert_int_equal(outer->category, GPROF_DL_CAT_FORWARD);
	assert_true(outer->start_ns <= op->start_ns && op->end_ns <= outer->end_ns);
	assert_true(outer->start_ns >= t0);
	const struct ring_range *bwd = view_find(s, RING_REC_RANGE, 2);
	assert_int_equal(bwd->category, GPROF_DL_CAT_BACKWARD);
	const struct ring_step *st = view_find(s, RING_REC_STEP, 0);
	assert_int_equal(st->start_ns, t0);
	assert_int_equal(st->end_ns, t0 + 5000000);
	assert_int_equal(st->samples, 64);
	assert_int_equal(st->cpu_ns, 0); /* no sample near its start: not measured */
	assert_int_equal(st->category, GPROF_DL_CAT_PROFILE_STEP);
	assert_name(&v, st->domain_str, GPROF_DL_NVTX_DOMAIN);
	const struct ring_range *dl = view_find(s, RING_REC_RANGE, 3);
	assert_int_equal(dl->start_ns, t0 + 1);
	assert_int_equal(dl->end_ns, t0 + 2);
	assert_int_equal(dl->category, GPROF_DL_CAT_DATALOADER);
	const struct ring_mark *m = view_find(s, RING_REC_MARK, 0);
	assert_int_equal(m->name_str, tick);
	assert_int_equal(m->category, GPROF_DL_CAT_OPTIMIZATION);
	assert_int_equal(m->h.aux, TRACE_EVF_MARK);
	assert_name(&v, m->domain_str, GPROF_DL_NVTX_DOMAIN);
	const struct ring_mark *u = view_find(s, RING_REC_POP_UNBALANCED, 0);
	assert_non_null(u);
	assert_name(&v, u->domain_str, GPROF_DL_NVTX_DOMAIN);
	assert_int_equal(view_count(s, RING_REC_POP_UNBALANCED), 2);
	assert_int_equal(atomic_load(&ring_shm_slot(f->shm, 0)->dropped), 0);
	assert_int_equal(view_check_defined_before_use(&v, s, 0), 0);
	view_free(&v);
}

/* A name 0 (the string could not be had) loses the range, counted. */
static void test_api_name_zero_dropped(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	struct ring_slot *slot = ring_shm_slot(f->shm, 0);
	uint32_t ok = api->string("ok", 2);
	api->push(GPROF_DL_CAT_FORWARD, 0);
	api->push(GPROF_DL_CAT_FORWARD, ok); /* nested in the lost one */
	api->pop();
	api->pop();
	api->range(GPROF_DL_CAT_PROFILE_STEP, 0, 1, 2, 8);
	api->mark(GPROF_DL_CAT_PROFILE_STEP, 0);
	assert_int_equal(atomic_load(&slot->dropped), 3);
	struct view v;
	view_load(&v, f->shm);
	assert_string_equal(range_names(&v, &v.slot[0]), "ok");
	assert_int_equal(view_count(&v.slot[0], RING_REC_MARK), 0);
	view_free(&v);
}

/* comm(): a complete Communication record with every detail, only while
 * detail is on; name 0 and a full ring are drops, counted; errno kept. */
static void test_api_comm(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	struct ring_slot *slot = ring_shm_slot(f->shm, 0);
	assert_true(GPROF_DL_API_HAS(api, comm));
	assert_true(GPROF_DL_API_HAS(api, rank));
	struct gprof_dl_api older = *api; /* a collector from before comm() */
	older.size = (uint32_t)offsetof(struct gprof_dl_api, comm);
	assert_false(GPROF_DL_API_HAS(&older, comm));
	uint32_t name = api->string("gloo:all_reduce", 15), pg = api->string("0", 1);
	uint32_t dtype = api->string("float", 5), send = api->string("gloo:send", 9);
	struct gprof_dl_comm c = {
		.name = name, .pg = pg, .dtype = dtype, .group_size = 4, .peer = -1,
		.seq = 17, .bytes = 4096, .start_ns = 1000, .end_ns = 251000,
	};
	errno = 777;
	api->comm(&c);
	struct gprof_dl_comm p2p = {.name = send, .peer = 3, .seq = -5, .start_ns = 5, .end_ns = 6};
	api->comm(&p2p);
	api->stop(); /* not recorded while detail is off */
	api->comm(&c);
	api->start();
	struct gprof_dl_comm lost = c;
	lost.name = 0;
	api->comm(&lost);
	api->comm(NULL);
	assert_int_equal(errno, 777);
	assert_int_equal(atomic_load(&slot->dropped), 1);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_COMM), 2);
	const struct ring_comm *x = view_find(s, RING_REC_COMM, 0);
	assert_int_equal(x->h.size, sizeof(*x));
	assert_name(&v, x->name_str, "gloo:all_reduce");
	assert_name(&v, x->pg_str, "0");
	assert_name(&v, x->dtype_str, "float");
	assert_int_equal(x->group_size, 4);
	assert_int_equal(x->seq, 17);
	assert_int_equal(x->bytes, 4096);
	assert_int_equal(x->peer, -1);
	assert_int_equal(x->start_ns, 1000);
	assert_int_equal(x->end_ns, 251000);
	const struct ring_comm *y = view_find(s, RING_REC_COMM, 1);
	assert_name(&v, y->name_str, "gloo:send");
	assert_int_equal(y->peer, 3);
	assert_int_equal(y->seq, -1); /* any negative: unknown */
	assert_int_equal(y->pg_str, 0);
	assert_int_equal(y->bytes, 0);
	view_free(&v);

	/* a full ring: what does not fit is counted, nothing waits */
	uint64_t space = ring_space(f->shm, slot), before = atomic_load(&slot->dropped);
	enum { N = 2000 }; /* 128000 bytes: twice the ring */
	for (int i = 0; i < N; i++)
		api->comm(&c);
	uint64_t fit = space / sizeof(struct ring_comm);
	assert_int_equal(atomic_load(&slot->dropped) - before, N - fit);
	view_load(&v, f->shm);
	assert_int_equal(view_count(&v.slot[0], RING_REC_COMM), fit);
	view_free(&v);
}

/* memory() (lib/collector/memory.c): a RING_REC_MEMORY record on the
 * calling thread, stamped now, only while detail is on; NULL ignored; errno
 * kept. options() says --profile-memory only when the launcher set it. */
static void test_api_memory(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	assert_true(GPROF_DL_API_HAS(api, memory));
	assert_int_equal(api->options() & GPROF_DL_OPT_PROFILE_MEMORY, 0);
	setenv("GPROF_DL_PROFILE_MEMORY", "1", 1);
	assert_int_equal(api->options() & GPROF_DL_OPT_PROFILE_MEMORY, GPROF_DL_OPT_PROFILE_MEMORY);
	struct gprof_dl_memory a = {.address = 0x7f00, .bytes = 4096, .total_allocated = 12288,
				    .total_reserved = 65536, .device = -1};
	struct gprof_dl_memory fr = {.address = 0x7f00, .bytes = -4096, .total_allocated = 8192,
				     .device = 1};
	errno = 31;
	uint64_t t0 = api->now();
	api->memory(&a);
	api->stop(); /* not recorded while detail is off */
	api->memory(&a);
	api->start();
	api->memory(&fr);
	api->memory(NULL);
	uint64_t t1 = api->now();
	assert_int_equal(errno, 31);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_MEMORY), 2);
	const struct ring_memory *x = view_find(s, RING_REC_MEMORY, 0);
	assert_int_equal(x->h.size, sizeof(*x));
	assert_true(x->ts_ns >= t0 && x->ts_ns <= t1);
	assert_int_equal(x->address, 0x7f00);
	assert_int_equal(x->bytes, 4096);
	assert_int_equal(x->total_allocated, 12288);
	assert_int_equal(x->total_reserved, 65536);
	assert_int_equal(x->device, -1);
	assert_int_equal(x->memory_kind, TRACE_MEM_PAGEABLE);
	const struct ring_memory *y = view_find(s, RING_REC_MEMORY, 1);
	assert_true(y->ts_ns >= x->ts_ns && y->ts_ns <= t1);
	assert_int_equal(y->bytes, -4096);
	assert_int_equal(y->total_allocated, 8192);
	assert_int_equal(y->total_reserved, 0);
	assert_int_equal(y->device, 1);
	assert_int_equal(y->memory_kind, TRACE_MEM_DEVICE);
	view_free(&v);
}

/* rank(): RING_REC_PROCESS_RANK from init_process_group, whatever the window. */
static void test_api_rank(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	uint32_t gloo = api->string("gloo", 4);
	api->stop();
	errno = 55;
	api->rank(1, -7, 2, gloo);
	assert_int_equal(errno, 55);
	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_PROCESS_RANK), 1);
	const struct ring_process_rank *r = view_find(s, RING_REC_PROCESS_RANK, 0);
	assert_int_equal(r->h.aux, RING_RANK_INIT);
	assert_int_equal(r->h.size, sizeof(*r));
	assert_int_equal(r->pid, getpid());
	assert_int_equal(r->rank, 1);
	assert_int_equal(r->local_rank, -1);
	assert_int_equal(r->world_size, 2);
	assert_name(&v, r->backend_str, "gloo");
	view_free(&v);
}

static const char *const rank_env[] = {"RANK=3", "WORLD_SIZE=4", "LOCAL_RANK=1",
				       "OMPI_COMM_WORLD_RANK=0", RING_VARS_ENV "=RANK,NOT_SET_HERE,LOCAL_RANK,OMPI_COMM_WORLD_RANK",
				       "MASTER_ADDR=10.0.0.7", "MASTER_PORT=29511", "TORCHELASTIC_RUN_ID=none",
				       NULL};

static int setup_rank_env(void **state)
{
	unsetenv("NOT_SET_HERE");
	return attach_with(state, rank_env);
}

static int teardown_rank_env(void **state)
{
	teardown(state);
	for (const char *const *e = rank_env; *e; e++) {
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)(strchr(*e, '=') - *e), *e);
		unsetenv(name);
	}
	return 0;
}

/* At its start a process reports the rank its environment gives (the
 * highest source: torch's over Open MPI's) with the job it names (torch's
 * rendezvous address: a run id of "none" names none), and the output
 * variables, in the order GPROF_DL_OUTPUT_VARS names them, before its
 * thread starts. */
static void test_env_rank_and_vars(void **state)
{
	struct fixture *f = *state;
	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_PROCESS_RANK), 1);
	const struct ring_process_rank *r = view_find(s, RING_REC_PROCESS_RANK, 0);
	assert_int_equal(r->h.aux, RING_RANK_ENV_TORCH);
	assert_int_equal(r->rank, 3);
	assert_int_equal(r->local_rank, 1);
	assert_int_equal(r->world_size, 4);
	assert_int_equal(r->backend_str, 0);
	assert_name(&v, r->job_str, "master:10.0.0.7:29511");
	static const struct {
		uint32_t aux;
		const char *value;
	} want[] = {{0 | RING_VAR_SET, "3"}, {1, ""}, {2 | RING_VAR_SET, "1"}, {3 | RING_VAR_SET, "0"}};
	assert_int_equal(view_count(s, RING_REC_PROCESS_VAR), 4);
	for (size_t i = 0; i < 4; i++) {
		const struct ring_process_var *x = view_find(s, RING_REC_PROCESS_VAR, i);
		assert_int_equal(x->h.aux, want[i].aux);
		assert_int_equal(x->pid, getpid());
		assert_int_equal(x->len, strlen(want[i].value));
		assert_string_equal((const char *)(x + 1), want[i].value);
		assert_int_equal(x->h.size % 8, 0);
	}
	/* PROCESS_START, then the job's name, rank and variables, then THREAD_START */
	assert_int_equal(s->r[1]->kind, RING_REC_PROCESS_START);
	assert_int_equal(s->r[2]->kind, RING_REC_STRING);
	assert_int_equal(s->r[3]->kind, RING_REC_PROCESS_RANK);
	assert_int_equal(s->r[7]->kind, RING_REC_PROCESS_VAR);
	assert_int_equal(s->r[8]->kind, RING_REC_THREAD_START);
	view_free(&v);
}

/* The mirror holds the interface's ranges with their details, for recovery. */
static void test_api_mirror(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	struct ring_slot *slot = ring_shm_slot(f->shm, 0);
	uint32_t mm = api->string("aten::mm", 8), sh = api->string("[[1]]", 5);
	api->op_push(mm, 77, sh);
	nvtxEventAttributes_t a = attr("step", GPROF_DL_CAT_PROFILE_STEP);
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
	a.payload.uiValue = 48;
	nvtxDomainRangePushEx(f->gpdl, &a);
	assert_int_equal(atomic_load(&slot->depth), 2);
	assert_int_equal(slot->stack[0].name_str, mm);
	assert_int_equal(slot->stack[0].seq, 77);
	assert_int_equal(slot->stack[0].shapes_str, sh);
	assert_int_equal(slot->stack[0].samples, 0);
	assert_int_equal(slot->stack[0].category, GPROF_DL_CAT_OPERATOR);
	assert_int_equal(slot->stack[0].flags, 0);
	assert_int_equal(slot->stack[1].samples, 48);
	assert_int_equal(slot->stack[1].seq, -1);
	assert_int_equal(slot->stack[1].category, GPROF_DL_CAT_PROFILE_STEP);
	nvtxDomainRangePop(f->gpdl);
	api->pop();
	assert_int_equal(atomic_load(&slot->depth), 0);
}

/* NVTX ProfileStep payloads: integer ones are the step's samples; the
 * gprof-dl domain's steps are STEP records, with their thread's CPU time
 * (this thread's, from schedstat: it spins 2 ms in the last step). */
static void test_nvtx_step_payload(void **state)
{
	struct fixture *f = *state;
	static const struct {
		int32_t type;
		int64_t value;
		uint64_t samples;
	} cases[] = {
		{NVTX_PAYLOAD_TYPE_UNSIGNED_INT64, 64, 64},
		{NVTX_PAYLOAD_TYPE_INT64, 128, 128},
		{NVTX_PAYLOAD_TYPE_UNSIGNED_INT32, 32, 32},
		{NVTX_PAYLOAD_TYPE_INT32, 16, 16},
		{NVTX_PAYLOAD_TYPE_INT32, -5, 0},
		{NVTX_PAYLOAD_TYPE_INT64, -1, 0},
		{NVTX_PAYLOAD_TYPE_DOUBLE, 0, 0},
		{NVTX_PAYLOAD_UNKNOWN, 0, 0},
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	for (int i = 0; i < N; i++) {
		nvtxEventAttributes_t a = attr("step", GPROF_DL_CAT_PROFILE_STEP);
		a.payloadType = cases[i].type;
		switch (cases[i].type) {
		case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: a.payload.ullValue = (uint64_t)cases[i].value; break;
		case NVTX_PAYLOAD_TYPE_INT64: a.payload.llValue = cases[i].value; break;
		case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: a.payload.uiValue = (uint32_t)cases[i].value; break;
		case NVTX_PAYLOAD_TYPE_INT32: a.payload.iValue = (int32_t)cases[i].value; break;
		case NVTX_PAYLOAD_TYPE_DOUBLE: a.payload.dValue = 12.0; break;
		default: break;
		}
		nvtxDomainRangePushEx(f->gpdl, &a);
		if (i == N - 1) {
			uint64_t until = coll_clock_now() + 2000000;
			while (coll_clock_now() < until)
				;
		}
		nvtxDomainRangePop(f->gpdl);
	}
	/* only the gprof-dl domain's ProfileStep has samples */
	nvtxEventAttributes_t fwd = attr("fwd", GPROF_DL_CAT_FORWARD);
	fwd.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	fwd.payload.ullValue = 99;
	nvtxDomainRangePushEx(f->gpdl, &fwd);
	nvtxDomainRangePop(f->gpdl);
	nvtxEventAttributes_t dflt = attr("default step", GPROF_DL_CAT_PROFILE_STEP);
	dflt.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	dflt.payload.ullValue = 99;
	nvtxRangePushEx(&dflt);
	nvtxRangePop();

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_int_equal(view_count(s, RING_REC_STEP), N);
	assert_int_equal(view_count(s, RING_REC_RANGE_EXT), 0);
	assert_int_equal(view_count(s, RING_REC_RANGE), 2); /* fwd, the default domain's step */
	for (int i = 0; i < N; i++) {
		const struct ring_step *x = view_find(s, RING_REC_STEP, (size_t)i);
		assert_name(&v, x->name_str, "step");
		assert_int_equal(x->samples, cases[i].samples);
		assert_int_equal(x->category, GPROF_DL_CAT_PROFILE_STEP);
		if (i == N - 1) { /* 2 ms of spinning: on a CPU most of it, and never more */
			uint64_t len = x->end_ns - x->start_ns;
			assert_true(x->cpu_ns > 0);
			assert_true(x->cpu_ns <= len + 1000000);
			assert_true(x->cpu_ns + x->runq_ns <= len + 1000000);
		}
	}
	assert_int_equal(coll_win.nvtx_steps, N); /* counted as steps */
	view_free(&v);
}

/* ---- the recording window ------------------------------------------------ */

static int setup_timer_only(void **state)
{
	static const char *const env[] = {"GPROF_DL_TIMER_ONLY=1", "GPROF_DL_RECORD_SHAPES=1",
					  "GPROF_DL_NO_PYTHON=1", NULL};
	return attach_with(state, env);
}

/* Timer-only: steps and Dataloader, NVTX or interface, and nothing else. */
static void test_window_timer_only(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	assert_int_equal(api->options(),
			 GPROF_DL_OPT_TIMER_ONLY | GPROF_DL_OPT_RECORD_SHAPES | GPROF_DL_OPT_NO_PYTHON);
	assert_int_equal(*api->detail, 0);
	api->start(); /* timer-only stays so */
	api->step(0);
	assert_int_equal(*api->detail, 0);
	uint32_t n = api->string("n", 1);
	nvtx_step_push(f, "nvtx step");
	nvtxRangePushA("user");
	nvtxMarkA("user mark");
	nvtxEventAttributes_t dl = attr("nvtx loader", GPROF_DL_CAT_DATALOADER);
	nvtxDomainRangePushEx(f->gpdl, &dl);
	nvtxEventAttributes_t fw = attr("nvtx forward", GPROF_DL_CAT_FORWARD);
	nvtxDomainRangePushEx(f->gpdl, &fw);
	nvtxDomainMarkEx(f->gpdl, &fw);
	nvtxDomainMarkEx(f->gpdl, &dl);
	nvtxDomainRangePop(f->gpdl);
	nvtxDomainRangePop(f->gpdl);
	nvtxRangePop();
	nvtxDomainRangePop(f->gpdl);
	api->push(GPROF_DL_CAT_FORWARD, n);
	api->op_push(n, 1, 0);
	api->pop();
	api->pop();
	api->push(GPROF_DL_CAT_DATALOADER, api->string("api loader", 10));
	api->pop();
	api->range(GPROF_DL_CAT_PROFILE_STEP, api->string("api step", 8), 10, 20, 4);
	api->range(GPROF_DL_CAT_BACKWARD, n, 10, 20, 0);
	api->mark(GPROF_DL_CAT_FORWARD, n);
	api->mark(GPROF_DL_CAT_DATALOADER, api->string("api loader mark", 15));
	nvtxRangeId_t id = nvtxRangeStartA("start/end");
	assert_int_equal(id, 0);
	nvtxRangeEnd(id);
	nvtxRangePop(); /* unbalanced: not recorded either */

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_string_equal(range_names(&v, s), "nvtx loader nvtx step api loader api step");
	assert_string_equal(mark_names(&v, s), "nvtx loader api loader mark");
	assert_int_equal(view_count(s, RING_REC_RANGE_START), 0);
	assert_int_equal(view_count(s, RING_REC_RANGE_END), 0);
	assert_int_equal(view_count(s, RING_REC_POP_UNBALANCED), 0);
	assert_int_equal(atomic_load(&ring_shm_slot(f->shm, 0)->dropped), 0);
	/* nothing gated was even interned */
	assert_int_equal(string_records(s, &v, "user"), 0);
	assert_int_equal(string_records(s, &v, "nvtx forward"), 0);
	view_free(&v);
}

static int setup_steps(void **state)
{
	static const char *const env[] = {"GPROF_DL_STEPS=2:4", NULL};
	return attach_with(state, env);
}

/* --steps 2:4 from NVTX steps: detail in steps 2 and 3 only, none before the first. */
static void test_window_nvtx_steps(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(f->api->options(), GPROF_DL_OPT_STEP_WINDOW);
	assert_int_equal(*f->api->detail, 0);
	nvtxRangePushA("before");
	nvtxRangePop();
	for (int i = 0; i < 6; i++) {
		char name[32];
		snprintf(name, sizeof(name), "step%d", i);
		nvtx_step_push(f, name);
		assert_int_equal(*f->api->detail, i >= 2 && i < 4);
		snprintf(name, sizeof(name), "work%d", i);
		nvtxRangePushA(name);
		nvtxRangePop();
		nvtxDomainRangePop(f->gpdl);
	}
	struct view v;
	view_load(&v, f->shm);
	assert_string_equal(range_names(&v, &v.slot[0]), "step0 step1 work2 step2 work3 step3 step4 step5");
	view_free(&v);
}

/* --steps through the interface's step(): A:B with B empty has no end. */
static void test_window_api_steps(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	uint32_t work = api->string("work", 4);
	api->push(GPROF_DL_CAT_FORWARD, work); /* no step yet: off */
	api->pop();
	for (uint64_t n = 0; n < 5; n++) {
		api->step(n);
		assert_int_equal(*api->detail, n >= 3);
		api->push(GPROF_DL_CAT_FORWARD, work);
		api->pop();
	}
	api->step(1000000);
	assert_int_equal(*api->detail, 1);
	api->step(2);
	assert_int_equal(*api->detail, 0);
	struct view v;
	view_load(&v, f->shm);
	assert_string_equal(range_names(&v, &v.slot[0]), "work work");
	view_free(&v);
}

static int setup_steps_open(void **state)
{
	static const char *const env[] = {"GPROF_DL_STEPS=3:", NULL};
	return attach_with(state, env);
}

static int setup_paused(void **state)
{
	static const char *const env[] = {"GPROF_DL_PAUSED=1", NULL};
	return attach_with(state, env);
}

/* --paused: off until start(); a range follows its push, not its pop. */
static void test_window_paused(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	struct ring_slot *slot = ring_shm_slot(f->shm, 0);
	assert_int_equal(api->options(), GPROF_DL_OPT_PAUSED);
	assert_int_equal(*api->detail, 0);
	uint32_t a = api->string("api pushed off", 14), b = api->string("api pushed on", 13);
	nvtxRangePushA("pushed off");
	api->push(GPROF_DL_CAT_FORWARD, a);
	assert_int_equal(atomic_load(&slot->depth), 2);
	assert_int_equal(slot->stack[0].flags, RING_OPEN_SKIP);
	assert_int_equal(slot->stack[1].flags, RING_OPEN_SKIP);
	api->start();
	assert_int_equal(*api->detail, 1);
	api->pop();         /* pop while on of a range pushed while off */
	nvtxRangePop();
	nvtxRangePushA("pushed on");
	api->push(GPROF_DL_CAT_FORWARD, b);
	assert_int_equal(slot->stack[0].flags, 0);
	api->stop();
	assert_int_equal(*api->detail, 0);
	nvtxRangePushA("pushed off again");
	nvtxMarkA("mark off");
	api->pop();         /* pop while off of a range pushed while on: innermost gprof-dl */
	nvtxRangePop();     /* "pushed off again" */
	nvtxRangePop();     /* "pushed on" */
	api->start();
	nvtxMarkA("mark on");

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_string_equal(range_names(&v, s), "api pushed on pushed on");
	assert_string_equal(mark_names(&v, s), "mark on");
	assert_int_equal(string_records(s, &v, "pushed off"), 0);
	assert_int_equal(atomic_load(&slot->dropped), 0);
	view_free(&v);
}

/* A range pushed while off and left open at exit is not recovered: its
 * mirror entry says so. */
static void test_window_gated_mirror(void **state)
{
	struct fixture *f = *state;
	struct ring_slot *slot = ring_shm_slot(f->shm, 0);
	nvtxRangePushA("off");
	f->api->start();
	nvtxRangePushA("on");
	assert_int_equal(atomic_load(&slot->depth), 2);
	assert_int_equal(slot->stack[0].flags, RING_OPEN_SKIP);
	assert_int_equal(slot->stack[0].name_str, 0);
	assert_int_equal(slot->stack[1].flags, 0);
	struct view v;
	view_load(&v, f->shm);
	assert_name(&v, slot->stack[1].name_str, "on");
	view_free(&v);
	nvtxRangePop();
	nvtxRangePop();
}

/* --delay/--duration: [T0 + delay, T0 + delay + duration), followed at each event. */
static void test_window_time(void **state)
{
	(void)state;
	enum { MS = 1000000 };
	uint64_t t0 = clock_now_ns();
	char t0s[64];
	snprintf(t0s, sizeof(t0s), "GPROF_DL_T0_NS=%" PRIu64, t0);
	const char *env[] = {t0s, "GPROF_DL_DELAY_NS=300000000", "GPROF_DL_DURATION_NS=1000000000", NULL};
	void *st;
	assert_int_equal(attach_with(&st, env), 0);
	struct fixture *f = st;
	const struct gprof_dl_api *api = f->api;
	assert_int_equal(api->options(), GPROF_DL_OPT_TIME_WINDOW);
	assert_int_equal(*api->detail, 0);
	nvtxRangePushA("early, pushed off"); /* its pop comes inside the window */
	nvtxMarkA("early mark");
	sleep_until(t0 + 300 * MS);
	nvtxMarkA("in window");
	assert_int_equal(*api->detail, 1);
	nvtxRangePop();
	nvtxRangePushA("in window, popped after");
	sleep_until(t0 + 1300 * MS);
	api->step(0); /* refreshes the flag */
	assert_int_equal(*api->detail, 0);
	nvtxRangePop();
	nvtxMarkA("late mark");
	nvtx_step_push(f, "late step");
	nvtxDomainRangePop(f->gpdl);

	struct view v;
	view_load(&v, f->shm);
	const struct view_slot *s = &v.slot[0];
	assert_string_equal(range_names(&v, s), "in window, popped after late step");
	/* the first: what the window is, for the trace (window.c) */
	assert_string_equal(mark_names(&v, s), "window: time 300000000:1000000000 in window");
	view_free(&v);
	teardown(&st);
}

/* The window's changes, kept for GPU records that CUPTI hands over late, are
 * a ring of the newest: twice as many captures as it holds, and a time in
 * the newest ones, in the oldest kept and between two captures still says
 * whether the capture was open then. */
static void test_window_history_ring(void **state)
{
	(void)state;
	const char *env[] = {"GPROF_DL_CAPTURE=cudaProfilerApi", "GPROF_DL_CAPTURE_END=repeat", NULL};
	void *st;
	assert_int_equal(attach_with(&st, env), 0);
	enum { PAIRS = COLL_WIN_HISTORY, KEPT = COLL_WIN_HISTORY / 2 }; /* 2 changes a capture */
	assert_int_equal(coll_window_open_at(5), 0); /* before the first start */
	for (uint64_t k = 0; k < PAIRS; k++) {
		coll_window_capture(1, 1000 + 100 * k);
		coll_window_capture(0, 1000 + 100 * k + 50);
	}
	uint64_t last = 1000 + 100 * (PAIRS - 1), oldest = 1000 + 100 * (PAIRS - KEPT);
	assert_int_equal(coll_window_open_at(last + 10), 1);
	assert_int_equal(coll_window_open_at(last + 60), 0);
	assert_int_equal(coll_window_open_at(oldest + 10), 1);
	assert_int_equal(coll_window_open_at(oldest + 60), 0);
	assert_int_equal(coll_window_open_at(oldest - 10), 0); /* before every change kept */
	teardown(&st);
}

/* A window in the past or the future, set in the environment, from the start. */
static void test_window_time_bounds(void **state)
{
	(void)state;
	uint64_t now = clock_now_ns();
	static const struct {
		int64_t t0_from_now;
		const char *delay, *duration;
		int detail;
	} cases[] = {
		{-2000000000, "0", "1000000000", 0}, /* over */
		{-2000000000, "0", NULL, 1},          /* no end */
		{-2000000000, NULL, "3000000000", 1}, /* duration alone: from T0 */
		{10000000000, "0", NULL, 0},          /* not yet */
		{0, "5000000000", "1", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char t0s[64], delay[64], duration[64];
		const char *env[4] = {t0s, NULL, NULL, NULL};
		int k = 1;
		snprintf(t0s, sizeof(t0s), "GPROF_DL_T0_NS=%" PRIu64, now + (uint64_t)cases[i].t0_from_now);
		if (cases[i].delay) {
			snprintf(delay, sizeof(delay), "GPROF_DL_DELAY_NS=%s", cases[i].delay);
			env[k++] = delay;
		}
		if (cases[i].duration) {
			snprintf(duration, sizeof(duration), "GPROF_DL_DURATION_NS=%s", cases[i].duration);
			env[k++] = duration;
		}
		void *st;
		assert_int_equal(attach_with(&st, env), 0);
		struct fixture *f = st;
		assert_int_equal(f->api->options(), GPROF_DL_OPT_TIME_WINDOW);
		nvtxRangePushA("r");
		nvtxRangePop();
		if (*f->api->detail != cases[i].detail)
			fail_msg("case %zu: detail %d", i, *f->api->detail);
		struct view v;
		view_load(&v, f->shm);
		assert_string_equal(range_names(&v, &v.slot[0]), cases[i].detail ? "r" : "");
		view_free(&v);
		teardown(&st);
	}
	/* a bad value is ignored, the rest read */
	static const char *const bad[] = {"GPROF_DL_DELAY_NS=soon", "GPROF_DL_STEPS=x:y",
					  "GPROF_DL_PAUSED=yes", NULL};
	void *st;
	assert_int_equal(attach_with(&st, bad), 0);
	assert_int_equal(((struct fixture *)st)->api->options(), 0);
	assert_int_equal(*((struct fixture *)st)->api->detail, 1);
	teardown(&st);
}

static int setup_all(void **state)
{
	static const char *const env[] = {"GPROF_DL_STEPS=1:2", "GPROF_DL_PAUSED=1", "GPROF_DL_DELAY_NS=0",
					  NULL};
	return attach_with(state, env);
}

/* Every condition at once: detail only when all agree. */
static void test_window_all_conditions(void **state)
{
	struct fixture *f = *state;
	const struct gprof_dl_api *api = f->api;
	assert_int_equal(api->options(),
			 GPROF_DL_OPT_STEP_WINDOW | GPROF_DL_OPT_PAUSED | GPROF_DL_OPT_TIME_WINDOW);
	api->step(1);
	assert_int_equal(*api->detail, 0); /* paused */
	api->start();
	assert_int_equal(*api->detail, 1);
	api->step(2);
	assert_int_equal(*api->detail, 0); /* past the steps */
	api->step(1);
	api->stop();
	assert_int_equal(*api->detail, 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	unsetenv("NVTX_INJECTION64_PATH");
	unsetenv(RING_ENV);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torch_parse),
		T(test_torch_nvtx),
		T(test_torch_nvtx_no_comm),
		cmocka_unit_test(test_torch_parse_cost),
		T(test_api_found_only_when_attached),
		T(test_api_strings),
		T(test_api_ranges),
		T(test_api_step_sched),
		cmocka_unit_test(test_sched_nearest),
		T(test_api_name_zero_dropped),
		T(test_api_mirror),
		T(test_api_comm),
		T(test_api_memory),
		T(test_api_rank),
		cmocka_unit_test_setup_teardown(test_env_rank_and_vars, setup_rank_env, teardown_rank_env),
		T(test_nvtx_step_payload),
		cmocka_unit_test_setup_teardown(test_window_timer_only, setup_timer_only, teardown),
		cmocka_unit_test_setup_teardown(test_window_nvtx_steps, setup_steps, teardown),
		cmocka_unit_test_setup_teardown(test_window_api_steps, setup_steps_open, teardown),
		cmocka_unit_test_setup_teardown(test_window_paused, setup_paused, teardown),
		cmocka_unit_test_setup_teardown(test_window_gated_mirror, setup_paused, teardown),
		cmocka_unit_test(test_window_time),
		cmocka_unit_test(test_window_time_bounds),
		cmocka_unit_test(test_window_history_ring),
		cmocka_unit_test_setup_teardown(test_window_all_conditions, setup_all, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !GPDL_HAVE_NVTX */

int main(void)
{
	return records_skip_without_nvtx();
}

#endif
