/*
 * test_chrome_details.c - trace 1.2's details in the chrome export: an
 * operator's "Sequence number" and "Input Dims" under the PyTorch profiler's
 * (Kineto's) names, Input Dims as the array the shapes spell when they are in
 * torch's form and as the string otherwise, and a step's "samples"; read back
 * by yajl from the export of the ops fixture (trace_fixture.h). And trace
 * 1.3's: a collective's details under Kineto's names ("Collective name",
 * "dtype", "In msg nelems", "Group size", "Process Group Name", "Seq") and
 * ours ("peer"), a process's rank fields and a killed one's exit status, the
 * header's local rank.
 */
#include "formats/chrome/chrome_writer.h"
#include "tests/chrome/chrome_read.h"
#include "tests/chrome/trace_fixture.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* v as compact JSON (numbers as written, strings quoted unescaped). */
static void compact(yajl_val v, char *buf, size_t size, size_t *n)
{
	if (YAJL_IS_ARRAY(v)) {
		*n += (size_t)snprintf(buf + *n, size - *n, "[");
		for (size_t i = 0; i < YAJL_GET_ARRAY(v)->len; i++) {
			if (i)
				*n += (size_t)snprintf(buf + *n, size - *n, ",");
			compact(YAJL_GET_ARRAY(v)->values[i], buf, size, n);
		}
		*n += (size_t)snprintf(buf + *n, size - *n, "]");
	} else if (YAJL_IS_STRING(v)) {
		*n += (size_t)snprintf(buf + *n, size - *n, "\"%s\"", YAJL_GET_STRING(v));
	} else if (YAJL_IS_NUMBER(v)) {
		*n += (size_t)snprintf(buf + *n, size - *n, "%s", YAJL_GET_NUMBER(v));
	} else {
		*n += (size_t)snprintf(buf + *n, size - *n, "?");
	}
}

static void test_dims_canonical(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int ok;
	} cases[] = {
		{"[[32, 64], [64]]", 1},
		{"[]", 1},
		{"[[], []]", 1},
		{"[[0, -1, 7]]", 1},
		{"[[[[2]]], 3]", 1},
		{"[5]", 1},
		{"[999999999999999999]", 1},   /* 18 digits */
		{"[9999999999999999999]", 0},  /* 19: might not fit */
		{"[[32,64]]", 0},              /* another spacing */
		{"[[32, 64] ]", 0},
		{" [[32]]", 0},
		{"[[32]] ", 0},
		{"[[01]]", 0},                 /* not an integer's one spelling */
		{"[[-0]]", 0},
		{"[[-]]", 0},
		{"[[1.5]]", 0},
		{"[[32, 6", 0},                /* cut */
		{"[[32]]]", 0},
		{"32", 0},                     /* not a list */
		{"", 0},
		{"[[\"a\"]]", 0},
		{"[[1], ]", 0},
		{"[, [1]]", 0},
		{"[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]", 1}, /* 16 deep */
		{"[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]", 0}, /* 17 */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (chrome_dims_canonical(cases[i].s, strlen(cases[i].s)) != cases[i].ok)
			fail_msg("'%s': want %d", cases[i].s, cases[i].ok);
}

static void test_details(void **state)
{
	(void)state;
	char *path = fix_path("ops.gpdl");
	assert_int_equal(fix_write_ops(path), 0);
	int rc;
	char *text = export_text(path, &rc);
	assert_int_equal(rc, 0);
	yajl_val root = parse(text);
	struct evlist evs = events_of(root);
	assert_int_equal(count_ph(evs, "X"), fixo_nevents);
	for (size_t k = 0; k < fixo_nevents; k++) {
		const struct fixo_event *f = &fixo_events[k];
		yajl_val e = find_event(evs, "X", f->name);
		yajl_val args = get(e, "args");
		assert_str(e, "cat", f->type == TRACE_EV_OPERATOR ? "cpu_op" : "user_annotation");
		assert_str(args, "type", trace_event_type_name(f->type));
		if (f->has_seq) {
			char want[32];
			snprintf(want, sizeof(want), "%" PRId64, f->seq);
			assert_num(args, "Sequence number", want);
		} else {
			assert_null(get(args, "Sequence number"));
		}
		if (f->dims_json) {
			char got[512];
			size_t n = 0;
			yajl_val dims = get(args, "Input Dims");
			assert_non_null(dims);
			compact(dims, got, sizeof(got), &n);
			if (strcmp(got, f->dims_json) != 0)
				fail_msg("%s: Input Dims %s, want %s", f->name, got, f->dims_json);
		} else {
			assert_null(get(args, "Input Dims"));
		}
		if (f->samples) {
			assert_int_equal(get_int(args, "samples"), (long long)f->samples);
			assert_int_equal(get_int(args, "cpu_ns"), FIXO_STEP_CPU_NS);
			assert_int_equal(get_int(args, "runq_ns"), FIXO_STEP_RUNQ_NS);
		} else {
			assert_null(get(args, "samples"));
			assert_null(get(args, "cpu_ns"));
		}
		/* no other detail comes with them */
		assert_null(get(args, "External id"));
		assert_null(get(args, "correlation"));
	}
	yajl_tree_free(root);
	free(text);
	free(path);
}

/* ---- 1.3: collectives and ranks ------------------------------------------ */

#define CD_START UINT64_C(5000000000)

static uint32_t wstr(struct trace_writer *w, const char *s)
{
	return trace_writer_string(w, s, strlen(s));
}

/* Rank 2 of 4, local rank 0, on gloo: its root and a worker that was
 * killed; calls with and without details. */
static void write_comm_trace(const char *path)
{
	struct trace_writer *w = trace_writer_open(path, 1);
	assert_non_null(w);
	struct trace_header h = {
		.version_major = TRACE_FORMAT_VERSION_MAJOR,
		.version_minor = TRACE_FORMAT_VERSION_MINOR,
		.clock_domain = "CLOCK_MONOTONIC",
		.hostname = "n1",
		.pid = 10,
		.rank = 2,
		.local_rank = 0,
		.world_size = 4,
		.dist_backend = "gloo",
		.cmdline = "python train.py",
		.start_ns = CD_START,
		.gprof_version = "0.1.0",
	};
	assert_int_equal(trace_writer_header(w, &h), 0);
	struct trace_process p[] = {
		{10, 1, CD_START, CD_START + 9000, 0, wstr(w, "python train.py"), 2, 0, 4,
		 wstr(w, "gloo")},
		{11, 10, CD_START, CD_START + 5000, TRACE_EXIT_KILLED, wstr(w, "worker"), 2, 0, 4,
		 wstr(w, "gloo")},
	};
	for (int i = 0; i < 2; i++)
		assert_int_equal(trace_writer_process(w, &p[i]), 0);
	struct trace_thread t = {.index = 0, .pid = 10, .tid = 10, .start_ns = CD_START};
	assert_int_equal(trace_writer_thread(w, &t), 0);
	const struct trace_event_ext send = {.bytes = 1026, .has_coll_seq = 1, .coll_seq = 5,
					     .pg_str = wstr(w, "0"), .group_size = 4,
					     .dtype_str = wstr(w, "c10::BFloat16"), .has_peer = 1,
					     .peer = 3};
	const struct trace_event_ext odd = {.bytes = 10, .dtype_str = wstr(w, "float"),
					    .group_size = 4};
	const struct trace_event_ext barrier = {.pg_str = wstr(w, "default_pg"), .group_size = 4};
	struct {
		const char *name;
		const struct trace_event_ext *x;
	} ev[] = {{"gloo:send", &send}, {"gloo:all_reduce", &odd}, {"gloo:barrier", &barrier},
		  {"gloo:broadcast", NULL}, {"c_allreduce_sum", &barrier}};
	for (int i = 0; i < 5; i++) {
		uint32_t d = trace_writer_desc(w, wstr(w, ev[i].name), 0, 0, TRACE_EV_COMMUNICATION);
		struct trace_event e = {CD_START + 1000 * (uint64_t)i, 500, d, 0, 0, ev[i].x};
		assert_int_equal(trace_writer_event(w, &e), 0);
	}
	assert_int_equal(trace_writer_close(w, CD_START + 9000), 0);
}

static void test_comm_details(void **state)
{
	(void)state;
	char *path = fix_path("comm.gpdl");
	write_comm_trace(path);
	int rc;
	char *text = export_text(path, &rc);
	assert_int_equal(rc, 0);
	yajl_val root = parse(text);
	struct evlist evs = events_of(root);

	yajl_val a = get(find_event(evs, "X", "gloo:send"), "args");
	assert_str(a, "type", "Communication");
	assert_str(a, "Collective name", "send");
	assert_str(a, "dtype", "c10::BFloat16");
	assert_int_equal(get_int(a, "bytes"), 1026);
	assert_int_equal(get_int(a, "In msg nelems"), 513);
	assert_int_equal(get_int(a, "Group size"), 4);
	assert_str(a, "Process Group Name", "0");
	assert_int_equal(get_int(a, "Seq"), 5);
	assert_int_equal(get_int(a, "peer"), 3);
	/* 10 bytes are no whole number of floats: no element count */
	a = get(find_event(evs, "X", "gloo:all_reduce"), "args");
	assert_null(get(a, "In msg nelems"));
	assert_null(get(a, "Seq"));
	assert_null(get(a, "peer"));
	assert_null(get(a, "Process Group Name"));
	/* a barrier moves no bytes */
	a = get(find_event(evs, "X", "gloo:barrier"), "args");
	assert_null(get(a, "bytes"));
	assert_null(get(a, "dtype"));
	assert_str(a, "Process Group Name", "default_pg");
	/* no details, no collective's args; a name of no backend, no op */
	a = get(find_event(evs, "X", "gloo:broadcast"), "args");
	assert_null(get(a, "Collective name"));
	assert_null(get(a, "Group size"));
	a = get(find_event(evs, "X", "c_allreduce_sum"), "args");
	assert_null(get(a, "Collective name"));
	assert_int_equal(get_int(a, "Group size"), 4);

	yajl_val other = get(root, "otherData");
	assert_int_equal(get_int(other, "rank"), 2);
	assert_int_equal(get_int(other, "local_rank"), 0);
	assert_int_equal(get_int(other, "world_size"), 4);
	yajl_val procs = get(other, "processes");
	assert_true(YAJL_IS_ARRAY(procs) && YAJL_GET_ARRAY(procs)->len == 2);
	yajl_val worker = YAJL_GET_ARRAY(procs)->values[1];
	assert_str(worker, "exit_status", "killed");
	assert_int_equal(get_int(worker, "rank"), 2);
	assert_int_equal(get_int(worker, "local_rank"), 0);
	assert_int_equal(get_int(worker, "world_size"), 4);
	assert_str(worker, "backend", "gloo");
	yajl_tree_free(root);
	free(text);
	free(path);
}

static int teardown(void **state)
{
	(void)state;
	fix_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dims_canonical),
		cmocka_unit_test(test_details),
		cmocka_unit_test(test_comm_details),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
