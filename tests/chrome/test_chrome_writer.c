/*
 * test_chrome_writer.c - chrome export of fixture traces, read back by yajl.
 *
 * Counts per "ph", every name the fixture holds (every byte value, invalid
 * UTF-8, control characters), exact ts/dur text, args, counters, metadata,
 * otherData, and the export of a damaged trace up to its damage.
 */
#include "formats/chrome/chrome_writer.h"
#include "tests/chrome/chrome_read.h"
#include "tests/chrome/trace_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#define FFFD "\xef\xbf\xbd"

static int setup(void **state)
{
	char *path = fix_path("fixture.gpdl");
	assert_int_equal(fix_write(path), 0);
	*state = path;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	fix_cleanup();
	return 0;
}

/* ---- the fixture --------------------------------------------------------- */

static void test_counts_per_ph(void **state)
{
	int rc;
	char *text = export_text(*state, &rc);
	assert_int_equal(rc, 0);
	yajl_val doc = parse(text);
	struct evlist evs = events_of(doc);
	size_t marks = 0;
	for (size_t i = 0; i < fix_ncases; i++)
		marks += (fix_cases[i].flags & 1) != 0;
	assert_int_equal(count_ph(evs, "X"), FIX_BYTE_RANGES + fix_ncases - marks);
	assert_int_equal(count_ph(evs, "i"), marks);
	assert_int_equal(count_ph(evs, "C"), FIX_CPU_PROCESS + FIX_CPU_SYSTEM + FIX_RSS);
	/* process_name x2, process_labels x1 (rank), process_sort_index x2,
	 * thread_name x2 (one thread is unnamed), thread_sort_index x3 */
	assert_int_equal(count_ph(evs, "M"), 10);
	assert_int_equal(evs.len, FIX_BYTE_RANGES + fix_ncases + 6 + 10);
	assert_str(doc, "displayTimeUnit", "ms");
	yajl_tree_free(doc);
	free(text);
}

static void test_every_byte_in_names(void **state)
{
	int rc;
	char *text = export_text(*state, &rc);
	yajl_val doc = parse(text);
	struct evlist evs = events_of(doc);
	for (unsigned b = 1; b <= FIX_BYTE_RANGES; b++) {
		char want[8], ts[32], dur[32];
		if (b < 0x80)
			snprintf(want, sizeof(want), "<%c>", (char)b);
		else
			snprintf(want, sizeof(want), "<%s>", FFFD);
		/* every byte from 0x80 reads as U+FFFD: find the range by its ts */
		snprintf(ts, sizeof(ts), "%u.001", b);
		snprintf(dur, sizeof(dur), "0.%03u", b);
		yajl_val e = NULL;
		for (size_t i = 0; i < evs.len; i++)
			if (!strcmp(get_str(evs.values[i], "ph"), "X") &&
			    !strcmp(get_num(evs.values[i], "ts"), ts))
				e = evs.values[i];
		assert_non_null(e);
		assert_str(e, "name", want);
		assert_num(e, "dur", dur);
		assert_int_equal(get_int(e, "pid"), FIX_PID);
		assert_int_equal(get_int(e, "tid"), FIX_PID);
		/* the PyTorch profiler's category; our type stays in args */
		assert_str(e, "cat", "user_annotation");
		assert_str(get(e, "args"), "type", "UserDefined");
	}
	yajl_tree_free(doc);
	free(text);
}

static void test_cases(void **state)
{
	static const long long tids[FIX_THREADS] = {FIX_PID, 102, FIX_CHILD_PID};
	static const long long pids[FIX_THREADS] = {FIX_PID, FIX_PID, FIX_CHILD_PID};
	int rc;
	char *text = export_text(*state, &rc);
	yajl_val doc = parse(text);
	struct evlist evs = events_of(doc);
	for (size_t i = 0; i < fix_ncases; i++) {
		const struct fix_case *c = &fix_cases[i];
		int mark = c->flags & 1;
		yajl_val e = find_event(evs, mark ? "i" : "X", c->expect);
		assert_num(e, "ts", c->ts);
		if (mark) {
			assert_str(e, "s", "t");
			assert_null(get(e, "dur"));
		} else {
			assert_num(e, "dur", c->dur);
		}
		assert_int_equal(get_int(e, "pid"), pids[c->thread]);
		assert_int_equal(get_int(e, "tid"), tids[c->thread]);
		yajl_val args = get(e, "args");
		assert_non_null(args);
		assert_str(args, "type", c->type == 1 ? "ProfileStep"
					 : c->type == 3 ? "Forward"
					 : c->type == 6 ? "Operator"
							: "UserDefined");
		assert_str(e, "cat", c->type == 6 ? "cpu_op" : "user_annotation");
		if (c->domain)
			assert_str(args, "domain", c->domain);
		else
			assert_null(get(args, "domain"));
		assert_true(YAJL_IS_TRUE(get(args, "open_at_exit")) == ((c->flags & 2) != 0));
		assert_true(YAJL_IS_TRUE(get(args, "unbalanced_pop")) == ((c->flags & 4) != 0));
		assert_true(YAJL_IS_TRUE(get(args, "start_end")) == ((c->flags & 8) != 0));
		assert_true(YAJL_IS_TRUE(get(args, "name_truncated")) == ((c->flags & 16) != 0));
	}
	/* a named category reads by name, an unnamed one by number */
	assert_str(get(find_event(evs, "X", "Forward"), "args"), "category", "Forward-cat");
	assert_num(get(find_event(evs, "X", "matmul"), "args"), "category", "9");
	assert_null(get(get(find_event(evs, "X", "async"), "args"), "category"));
	yajl_tree_free(doc);
	free(text);
}

static void test_counters(void **state)
{
	static const struct {
		const char *name, *ts, *key, *value;
		long long pid;
	} want[] = {
		{"CPU(Process)", "1000.000", "%", "10.5", FIX_PID},
		{"CPU(Process)", "2000.000", "%", "20.25", FIX_PID},
		{"CPU(Process)", "3000.000", "%", "99", FIX_PID},
		{"CPU(System)", "1000.000", "%", "50", FIX_PID},
		{"CPU(System)", "2000.000", "%", "75.125", FIX_PID},
		{"RSS", "2500.000", "bytes", "1048576", FIX_CHILD_PID},
	};
	int rc;
	char *text = export_text(*state, &rc);
	yajl_val doc = parse(text);
	struct evlist evs = events_of(doc);
	size_t k = 0;
	for (size_t i = 0; i < evs.len; i++) {
		yajl_val e = evs.values[i];
		if (strcmp(get_str(e, "ph"), "C") != 0)
			continue;
		assert_true(k < sizeof(want) / sizeof(want[0]));
		assert_str(e, "name", want[k].name);
		assert_num(e, "ts", want[k].ts);
		assert_int_equal(get_int(e, "pid"), want[k].pid);
		assert_num(get(e, "args"), want[k].key, want[k].value);
		assert_int_equal(YAJL_GET_OBJECT(get(e, "args"))->len, 1);
		k++;
	}
	assert_int_equal(k, sizeof(want) / sizeof(want[0]));
	yajl_tree_free(doc);
	free(text);
}

static void test_metadata(void **state)
{
	int rc;
	char *text = export_text(*state, &rc);
	yajl_val doc = parse(text);
	struct evlist evs = events_of(doc);
	yajl_val m;

	assert_non_null(m = find_meta(evs, "process_name", FIX_PID, 0));
	assert_str(get(m, "args"), "name", "./app --x");
	assert_non_null(m = find_meta(evs, "process_name", FIX_CHILD_PID, 0));
	assert_str(get(m, "args"), "name", "worker");
	assert_non_null(m = find_meta(evs, "process_labels", FIX_PID, 0));
	assert_str(get(m, "args"), "labels", "rank 3");
	assert_null(find_meta(evs, "process_labels", FIX_CHILD_PID, 0));
	assert_non_null(m = find_meta(evs, "process_sort_index", FIX_CHILD_PID, 0));
	assert_num(get(m, "args"), "sort_index", "2");

	assert_non_null(m = find_meta(evs, "thread_name", FIX_PID, FIX_PID));
	assert_str(get(m, "args"), "name", "main");
	assert_non_null(m = find_meta(evs, "thread_name", FIX_PID, 102));
	assert_str(get(m, "args"), "name", "worker \"1\" \\ \x01" FFFD);
	assert_null(find_meta(evs, "thread_name", FIX_CHILD_PID, FIX_CHILD_PID));
	assert_non_null(m = find_meta(evs, "thread_sort_index", FIX_CHILD_PID, FIX_CHILD_PID));
	assert_num(get(m, "args"), "sort_index", "2");

	/* metadata comes after every event: the tables are complete then */
	size_t first_meta = evs.len;
	for (size_t i = 0; i < evs.len; i++)
		if (!strcmp(get_str(evs.values[i], "ph"), "M") && first_meta == evs.len)
			first_meta = i;
	for (size_t i = first_meta; i < evs.len; i++)
		assert_str(evs.values[i], "ph", "M");
	yajl_tree_free(doc);
	free(text);
}

static void test_other_data(void **state)
{
	int rc;
	char *text = export_text(*state, &rc);
	yajl_val doc = parse(text);
	yajl_val o = get(doc, "otherData");
	assert_non_null(o);
	assert_str(o, "format_version", FIX_FORMAT_VERSION);
	assert_str(o, "recorded_by", "0.1.0");
	assert_str(o, "host", "host-1");
	assert_int_equal(get_int(o, "pid"), FIX_PID);
	assert_int_equal(get_int(o, "rank"), FIX_RANK);
	assert_str(o, "command_line", "./app --x \"quoted\"");
	assert_str(o, "clock_domain", "CLOCK_MONOTONIC");
	assert_num(o, "wall_offset_ns", "1699999000000000000");
	assert_num(o, "start_ns", "1000000000000");
	assert_str(o, "start_time", "2023-11-14T22:13:20.000000000Z");
	assert_num(o, "duration_ns", "5000000000");
	assert_int_equal(get_int(o, "ncpus"), 8);
	yajl_val src = get(o, "sources");
	assert_true(YAJL_IS_ARRAY(src));
	assert_int_equal(YAJL_GET_ARRAY(src)->len, 2);
	assert_string_equal(YAJL_GET_STRING(YAJL_GET_ARRAY(src)->values[0]), "nvtx");
	assert_string_equal(YAJL_GET_STRING(YAJL_GET_ARRAY(src)->values[1]), "python");
	assert_int_equal(get_int(o, "events"), FIX_BYTE_RANGES + fix_ncases);
	assert_int_equal(get_int(o, "counters"), FIX_CPU_PROCESS + FIX_CPU_SYSTEM + FIX_RSS);
	assert_int_equal(get_int(o, "drops"), FIX_DROPS);
	yajl_val dbt = get(o, "drops_by_thread");
	assert_true(YAJL_IS_ARRAY(dbt));
	assert_int_equal(YAJL_GET_ARRAY(dbt)->len, 1);
	yajl_val d0 = YAJL_GET_ARRAY(dbt)->values[0];
	assert_int_equal(get_int(d0, "tid"), 102);
	assert_int_equal(get_int(d0, "dropped"), FIX_DROPS);
	assert_true(YAJL_IS_NULL(get(o, "damage")));
	/* processes and threads, with what metadata events cannot say */
	yajl_val procs = get(o, "processes");
	assert_int_equal(YAJL_GET_ARRAY(procs)->len, 2);
	yajl_val child = YAJL_GET_ARRAY(procs)->values[1];
	assert_int_equal(get_int(child, "pid"), FIX_CHILD_PID);
	assert_int_equal(get_int(child, "ppid"), FIX_PID);
	assert_int_equal(get_int(child, "exit_status"), 137);
	assert_int_equal(get_int(child, "end_ns"), (long long)(FIX_START_NS + 4000000000));
	yajl_val threads = get(o, "threads");
	assert_int_equal(YAJL_GET_ARRAY(threads)->len, FIX_THREADS);
	yajl_val t1 = YAJL_GET_ARRAY(threads)->values[1];
	assert_int_equal(get_int(t1, "tid"), 102);
	assert_int_equal(get_int(t1, "start_ns"), (long long)(FIX_START_NS + 1000));
	assert_true(YAJL_IS_NULL(get(YAJL_GET_ARRAY(threads)->values[2], "end_ns")));
	yajl_tree_free(doc);
	free(text);
}

/* One event per line: grep and head work on an export. */
static void test_one_event_per_line(void **state)
{
	int rc;
	char *text = export_text(*state, &rc);
	size_t lines = 0;
	for (char *p = text; (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	/* distributedInfo (the fixture is rank 3), one per event, "]," then
	 * displayTimeUnit, baseTimeNanoseconds, otherData and the final newline */
	assert_int_equal(lines, 1 + FIX_BYTE_RANGES + fix_ncases + 6 + 10 + 5);
	static const char opening[] = "{\"distributedInfo\": {\"rank\": 3},\n\"traceEvents\":[\n{";
	assert_memory_equal(text, opening, sizeof(opening) - 1);
	yajl_tree_free(parse(text));
	free(text);
}

/* ---- damage, emptiness, errors ------------------------------------------- */

static void check_batch(struct evlist evs, unsigned n)
{
	assert_int_equal(count_ph(evs, "X"), n);
	unsigned i = 0;
	for (size_t k = 0; k < evs.len; k++) {
		yajl_val e = evs.values[k];
		if (strcmp(get_str(e, "ph"), "X") != 0)
			continue;
		char ts[32];
		snprintf(ts, sizeof(ts), "%u.000", i++);
		assert_num(e, "ts", ts);
		assert_num(e, "dur", "0.010");
		assert_str(e, "name", "step");
	}
}

static void test_truncated_trace(void **state)
{
	(void)state;
	char *path = fix_path("two.gpdl");
	long flushed = 0;
	assert_int_equal(fix_write_two_batches(path, 1000, 1000, &flushed), 0);
	assert_true(flushed > 0);
	assert_int_equal(truncate(path, flushed + 100), 0);

	int rc;
	char *text = export_text(path, &rc);
	assert_int_equal(rc, 0);
	yajl_val doc = parse(text);
	check_batch(events_of(doc), 1000);
	yajl_val o = get(doc, "otherData");
	assert_int_equal(get_int(o, "events"), 1000);
	yajl_val dmg = get(o, "damage");
	assert_true(YAJL_IS_OBJECT(dmg));
	long long off = get_int(dmg, "offset");
	assert_true(off >= flushed && off <= flushed + 100);
	assert_true(strlen(get_str(dmg, "reason")) > 0);
	assert_true(YAJL_IS_NULL(get(o, "duration_ns"))); /* the END chunk is lost */
	yajl_tree_free(doc);
	free(text);
	free(path);
}

static void test_trace_without_end(void **state)
{
	(void)state;
	char *path = fix_path("noend.gpdl");
	long flushed = 0;
	assert_int_equal(fix_write_two_batches(path, 10, 20, &flushed), 0);
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(path, size - 1), 0); /* the END chunk, cut */

	int rc;
	char *text = export_text(path, &rc);
	yajl_val doc = parse(text);
	check_batch(events_of(doc), 30);
	assert_true(YAJL_IS_OBJECT(get(get(doc, "otherData"), "damage")));
	yajl_tree_free(doc);
	free(text);
	free(path);
}

static void test_empty_trace(void **state)
{
	(void)state;
	char *path = fix_path("empty.gpdl");
	struct trace_writer *w = trace_writer_open(path, 1);
	assert_non_null(w);
	struct trace_header h = {.version_major = 1, .clock_domain = "CLOCK_MONOTONIC",
				 .hostname = "", .pid = 7, .rank = -1, .cmdline = "",
				 .start_ns = 5, .gprof_version = ""};
	assert_int_equal(trace_writer_header(w, &h), 0);
	assert_int_equal(trace_writer_close(w, 5), 0);

	int rc;
	char *text = export_text(path, &rc);
	assert_int_equal(rc, 0);
	yajl_val doc = parse(text);
	struct evlist evs = events_of(doc);
	/* the root process still gets its sort index, nothing else */
	assert_int_equal(evs.len, 1);
	assert_str(evs.values[0], "name", "process_sort_index");
	yajl_val o = get(doc, "otherData");
	assert_true(YAJL_IS_NULL(get(o, "rank")));
	assert_int_equal(get_int(o, "events"), 0);
	yajl_tree_free(doc);
	free(text);
	free(path);
}

static void test_write_error(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		skip();
	char err[512];
	struct trace_reader *r = trace_reader_open(*state, err, sizeof(err));
	assert_non_null(r);
	struct export_writer *w = chrome_writer_new(f);
	int rc = export_writer_run(w, r);
	/* the stream may still hold the last block: the caller's flush fails */
	assert_true(rc != 0 || fflush(f) != 0);
	export_writer_destroy(w);
	fclose(f);
	trace_reader_close(r);
}

/* ---- events of one desc: its bytes are made once ---------------------- */

static void ns_as_us(char *buf, size_t size, uint64_t ns)
{
	if (ns < (UINT64_C(1) << 50))
		snprintf(buf, size, "%llu.%03llu", (unsigned long long)(ns / 1000),
			 (unsigned long long)(ns % 1000));
	else
		snprintf(buf, size, "%.3f", (double)ns / 1000.0);
}

/* Every event of a desc repeats its name, category and args, whatever the
 * events of the same desc before it were: flags, marks and times are each
 * event's own. */
static void test_repeated_descs(void **state)
{
	(void)state;
	char *path = fix_path("repeats.gpdl");
	assert_int_equal(fix_write_repeats(path), 0);
	int rc;
	char *text = export_text(path, &rc);
	assert_int_equal(rc, 0);
	yajl_val doc = parse(text);
	struct evlist evs = events_of(doc);
	unsigned seen = 0, open = 0, marks = 0;
	char want[64];
	for (size_t k = 0; k < evs.len; k++) {
		yajl_val ev = evs.values[k];
		const char *ph = get_str(ev, "ph");
		if (strcmp(ph, "X") != 0 && strcmp(ph, "i") != 0)
			continue;
		unsigned i = seen++;
		assert_true(i < FIXR_EVENTS);
		uint8_t flags = fixr_flags[i % FIXR_NFLAGS];
		int mark = (flags & TRACE_EVF_MARK) != 0;
		assert_str(ev, "name", fixr_names[i % 2]);
		assert_str(ev, "cat", i % 2 ? "cpu_op" : "user_annotation");
		assert_string_equal(ph, mark ? "i" : "X");
		ns_as_us(want, sizeof(want), fixr_start_rel(i));
		assert_num(ev, "ts", want);
		if (mark) {
			assert_null(get(ev, "dur"));
			assert_str(ev, "s", "t");
			marks++;
		} else {
			ns_as_us(want, sizeof(want), fixr_dur(i));
			assert_num(ev, "dur", want);
		}
		assert_int_equal(get_int(ev, "pid"), FIX_PID);
		assert_int_equal(get_int(ev, "tid"), FIX_PID);
		yajl_val args = get(ev, "args");
		assert_str(args, "type", i % 2 ? "Operator" : "UserDefined");
		assert_int_equal(get(args, "open_at_exit") != NULL,
				 (flags & TRACE_EVF_OPEN_AT_EXIT) != 0);
		assert_int_equal(get(args, "unbalanced_pop") != NULL,
				 (flags & TRACE_EVF_UNBALANCED_POP) != 0);
		assert_int_equal(get(args, "start_end") != NULL, (flags & TRACE_EVF_START_END) != 0);
		assert_int_equal(get(args, "name_truncated") != NULL,
				 (flags & TRACE_EVF_NAME_TRUNCATED) != 0);
		open += get(args, "open_at_exit") != NULL;
	}
	assert_int_equal(seen, FIXR_EVENTS);
	assert_int_equal(open, FIXR_EVENTS / FIXR_NFLAGS);
	assert_int_equal(marks, 2 * FIXR_EVENTS / FIXR_NFLAGS);
	yajl_tree_free(doc);
	free(text);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_per_ph),
		cmocka_unit_test(test_every_byte_in_names),
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_other_data),
		cmocka_unit_test(test_repeated_descs),
		cmocka_unit_test(test_one_event_per_line),
		cmocka_unit_test(test_truncated_trace),
		cmocka_unit_test(test_trace_without_end),
		cmocka_unit_test(test_empty_trace),
		cmocka_unit_test(test_write_error),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
