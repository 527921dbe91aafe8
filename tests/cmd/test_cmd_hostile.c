/*
 * test_cmd_hostile.c - names are data: a trace whose range, thread, kernel,
 * device, host and file names hold terminal escapes (ESC ]0; ... BEL, CSI),
 * \r, \b, \n, TAB, DEL, a C1 control and ill-formed UTF-8 (a lone 0xff, a
 * truncated sequence, an overlong form, a surrogate), through every writer:
 *
 *   text (summary of every view, --thread-sep, --op-detail; diff; info; the
 *   end-of-run report; error messages): not one control byte, well-formed
 *   UTF-8, and each name in its terminal form, \xNN per escaped byte;
 *   JSON (summary, diff, export --chrome) and CSV (summary, diff, export
 *   --csv): read back by Python's json and csv modules with strict UTF-8,
 *   each name byte for byte, ill-formed sequences as U+FFFD
 *   (common/textsafe.h, formats/CSV-SCHEMA.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/runend.h"
#include "tests/analysis/tracebuild.h"
#include "tests/cmd/cmdrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif

/* A name as the program gave it, as a terminal shows it, as CSV/JSON carry it. */
struct name {
	const char *raw, *text, *data;
};

#define FFFD "\xef\xbf\xbd"
static const struct name title = {"\x1b]0;pwned\x07title", "\\x1b]0;pwned\\x07title",
				  "\x1b]0;pwned\x07title"};
static const struct name fake = {"line\rfake\bX\nnext\ttab\x7f",
				 "line\\x0dfake\\x08X\\x0anext\\x09tab\\x7f",
				 "line\rfake\bX\nnext\ttab\x7f"};
static const struct name c1 = {"c1\xc2\x9b"
			       "csi",
			       "c1\\xc2\\x9bcsi",
			       "c1\xc2\x9b"
			       "csi"};
static const struct name bad = {"bad\xff|\xe2\x82|\xc0\xaf|\xed\xa0\x80|end",
				"bad\\xff|\\xe2\\x82|\\xc0\\xaf|\\xed\\xa0\\x80|end",
				"bad" FFFD "|" FFFD "|" FFFD FFFD "|" FFFD FFFD FFFD "|end"};
static const struct name thread = {"thr\x1b[31mred", "thr\\x1b[31mred", "thr\x1b[31mred"};
static const struct name host = {"host\x1b[2J", "host\\x1b[2J", "host\x1b[2J"};
static const struct name device = {"GPU\x1b[5m\xfe", "GPU\\x1b[5m\\xfe", "GPU\x1b[5m" FFFD};
static const struct name file = {"evil\x1b[1A\xffname.gpdl", "evil\\x1b[1A\\xffname.gpdl",
				 "evil\x1b[1A" FFFD "name.gpdl"};

/* The trace's path as the outputs name it: its directory, then file. */
static const struct name *full_path(void)
{
	static char raw[600], text[600], data[600];
	static struct name n = {raw, text, data};
	snprintf(raw, sizeof(raw), "%s/%s", tb_dir(), file.raw);
	snprintf(text, sizeof(text), "%s/%s", tb_dir(), file.text);
	snprintf(data, sizeof(data), "%s/%s", tb_dir(), file.data);
	return &n;
}

static const char *hostile_trace(void)
{
	struct tb b;
	tb_open(&b, file.raw, host.raw, 10, 0);
	tb_thread(&b, 0, 10, thread.raw);
	tb_thread(&b, 1, 11, "plain");
	tb_stream(&b, 2, 0, 7);
	struct trace_device dev = {.id = 0, .sm_count = 4, .max_threads_per_sm = 2048,
				   .max_threads_per_block = 1024, .max_blocks_per_sm = 16,
				   .warp_size = 32, .regs_per_sm = 65536, .regs_per_block = 65536,
				   .smem_per_sm = 65536, .smem_per_block = 49152,
				   .total_memory = 1ull << 34, .cc_major = 9};
	tb_device(&b, &dev, device.raw);
	uint32_t step = tb_desc(&b, "ProfileStep#1", TRACE_EV_PROFILE_STEP);
	uint32_t r0 = tb_desc(&b, title.raw, TRACE_EV_USER_DEFINED);
	uint32_t r1 = tb_desc(&b, fake.raw, TRACE_EV_OPERATOR);
	uint32_t m = tb_desc(&b, c1.raw, TRACE_EV_USER_DEFINED);
	uint32_t launch = tb_desc(&b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	uint32_t k = tb_desc(&b, bad.raw, TRACE_EV_KERNEL);
	tb_range(&b, 0, step, 500, 9000);
	tb_range(&b, 0, r0, 1000, 1000);
	tb_range(&b, 1, r0, 1200, 300);
	tb_range(&b, 0, r1, 3000, 2500);
	tb_mark(&b, 0, m, 4000);
	tb_call(&b, 0, launch, 4900, 50, 1);
	tb_kernel(&b, 2, k, 5000, 300, 1, 1, 32, 1, 0, 0, 0);
	return tb_close(&b, 10000);
}

/* Strict UTF-8 with no control character but the newline: what a terminal
 * can be given. Fails naming the offset of the first offending byte. */
static void assert_terminal_safe(const char *what, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
					     : c >= 0xf0 && c <= 0xf4	   ? 4
									   : 0;
		int ok = len != 0 && i + len <= n;
		for (size_t j = 1; ok && j < len; j++)
			ok = (s[i + j] & 0xc0) == 0x80;
		if (ok && len == 1)
			ok = c == '\n' || (c >= 0x20 && c != 0x7f);
		if (ok && len == 2)
			ok = !(c == 0xc2 && s[i + 1] < 0xa0); /* C1 */
		if (ok && len == 3)
			ok = !(c == 0xe0 && s[i + 1] < 0xa0) && !(c == 0xed && s[i + 1] > 0x9f);
		if (ok && len == 4)
			ok = !(c == 0xf0 && s[i + 1] < 0x90) && !(c == 0xf4 && s[i + 1] > 0x8f);
		if (!ok)
			fail_msg("%s: byte 0x%02x at offset %zu is not for a terminal", what, c, i);
		i += len;
	}
}

static int count(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* Python's json or csv module reads path strictly and finds each name's data form. */
static void assert_python_reads(const char *mode, const char *path, const struct name *const *names,
				size_t n)
{
	const char *args[16] = {GPDL_CHECK_NAMES, mode, path};
	char hex[16][256];
	size_t a = 3;
	for (size_t i = 0; i < n && a < 15; i++, a++) {
		const unsigned char *s = (const unsigned char *)names[i]->data;
		size_t o = 0;
		for (; *s && o + 3 < sizeof(hex[0]); s++)
			o += (size_t)snprintf(hex[i] + o, sizeof(hex[0]) - o, "%02x", *s);
		args[a] = hex[i];
	}
	args[a] = NULL;
	struct cmd_result r = cmd_run(GPDL_PYTHON, args[0], args + 1);
	if (r.status != 0)
		fail_msg("python %s %s: status %d: %s%s", mode, path, r.status, r.out, r.err);
	cmd_result_free(&r);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

#define RUN(sub, ...) cmd_run(GPDL_BIN, sub, (const char *const[]){__VA_ARGS__, NULL})

static void test_summary_text(void **state)
{
	(void)state;
	const char *path = hostile_trace();
	const char *modes[][2] = {{"--thread-sep", "--op-detail"}, {"--view", "all"}};
	for (unsigned m = 0; m < 4; m++) {
		/* within 100 columns names are cut in the middle: whole in --wide */
		struct cmd_result r = m < 2 ? RUN("summary", path, modes[m][0], modes[m][1], "--wide")
					    : RUN("summary", path, modes[m - 2][0], modes[m - 2][1]);
		assert_int_equal(r.status, 0);
		assert_terminal_safe("summary", r.out);
		assert_terminal_safe("summary stderr", r.err);
		if (m >= 2) {
			cmd_result_free(&r);
			continue;
		}
		/* the user-defined view (and the overview's) and the operator view */
		assert_true(count(r.out, title.text) >= 1);
		assert_true(count(r.out, fake.text) >= 1);
		assert_true(count(r.out, c1.text) >= 1);
		assert_true(count(r.out, bad.text) >= 1); /* kernel view */
		assert_true(count(r.out, file.text) >= 1); /* trace view */
		if (m == 0)
			assert_true(count(r.out, thread.text) >= 1); /* "Thread: 10 (...)" */
		cmd_result_free(&r);
	}
}

static void test_summary_data(void **state)
{
	(void)state;
	const char *path = hostile_trace();
	const struct name *const names[] = {&title, &fake, &c1, &bad, full_path()};
	struct cmd_result r = RUN("summary", path, "--format", "json", "--thread-sep");
	assert_int_equal(r.status, 0);
	const char *json = tb_path("summary.json");
	write_file(json, r.out);
	cmd_result_free(&r);
	assert_python_reads("json", json, names, 5);
	r = RUN("summary", path, "--format", "csv", "--thread-sep");
	assert_int_equal(r.status, 0);
	const char *csv = tb_path("summary.csv");
	write_file(csv, r.out);
	cmd_result_free(&r);
	assert_python_reads("csv", csv, names, 5);
}

static void test_diff(void **state)
{
	(void)state;
	const char *path = hostile_trace();
	struct cmd_result r = RUN("diff", path, path);
	assert_int_equal(r.status, 0);
	assert_terminal_safe("diff", r.out);
	assert_terminal_safe("diff stderr", r.err);
	char sides[1400];
	snprintf(sides, sizeof(sides), "Comparing A: '%s' (1 step) with B: '%s' (1 step)",
		 full_path()->text, full_path()->text);
	assert_int_equal(count(r.out, sides), 1);
	cmd_result_free(&r);
	/* names whole, as summary's checks: the default cuts them to fit */
	r = RUN("diff", path, path, "--wide");
	assert_int_equal(r.status, 0);
	assert_terminal_safe("diff --wide", r.out);
	assert_true(count(r.out, title.text) >= 1);
	cmd_result_free(&r);
	const struct name *const names[] = {&title, &fake, full_path()};
	r = RUN("diff", path, path, "--format", "json");
	assert_int_equal(r.status, 0);
	const char *json = tb_path("diff.json");
	write_file(json, r.out);
	cmd_result_free(&r);
	assert_python_reads("json", json, names, 3);
	r = RUN("diff", path, path, "--format", "csv");
	assert_int_equal(r.status, 0);
	const char *csv = tb_path("diff.csv");
	write_file(csv, r.out);
	cmd_result_free(&r);
	assert_python_reads("csv", csv, names, 3);
}

static void test_info(void **state)
{
	(void)state;
	const char *path = hostile_trace();
	struct cmd_result r = RUN("info", path);
	assert_int_equal(r.status, 0);
	assert_terminal_safe("info", r.out);
	assert_int_equal(count(r.out, file.text), 1); /* the first line */
	assert_int_equal(count(r.out, host.text), 1);
	assert_int_equal(count(r.out, thread.text), 1);
	assert_int_equal(count(r.out, device.text), 1);
	cmd_result_free(&r);
}

static void test_export(void **state)
{
	(void)state;
	const char *path = hostile_trace();
	char chrome[600], dir[600];
	snprintf(chrome, sizeof(chrome), "%s", tb_path("hostile.json"));
	snprintf(dir, sizeof(dir), "%s", tb_path("hostile-csv"));
	struct cmd_result r = RUN("export", "--chrome", path, "-o", chrome);
	assert_int_equal(r.status, 0);
	assert_terminal_safe("export stderr", r.err);
	cmd_result_free(&r);
	const struct name *const names[] = {&title, &fake, &c1, &bad, &thread, &host};
	assert_python_reads("json", chrome, names, 6);
	r = RUN("export", "--csv", path, "-o", dir);
	assert_int_equal(r.status, 0);
	assert_terminal_safe("export stderr", r.err);
	cmd_result_free(&r);
	const struct name *const csv_names[] = {&title, &fake, &c1, &bad, &thread, &host, &device};
	assert_python_reads("csv", dir, csv_names, 7);
}

/* The launcher's end-of-run report, on the same trace. */
static void test_run_report(void **state)
{
	(void)state;
	const char *path = hostile_trace();
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	assert_int_equal(runend_summary(path, out, 42), 0);
	struct runend_rank rank = {.rank = 0, .world_size = 1, .pid = 10, .exit_status = 0,
				   .path = path};
	runend_ranks(out, 42, &rank, 1, path, 9, 0);
	assert_int_equal(fclose(out), 0);
	assert_terminal_safe("report", text);
	assert_int_equal(count(text, title.text), 1);
	assert_int_equal(count(text, fake.text), 1);
	assert_int_equal(count(text, bad.text), 1); /* GPU activities */
	assert_int_equal(count(text, file.text), 2 + 2); /* "Trace: F (... summary F)", ranks */
	free(text);
}

/* gprof-dl run itself: the banner's command line and the end-of-run
 * summary's trace name, both hostile, reach stderr in their terminal form. */
static void test_run(void **state)
{
	(void)state;
	char out[600];
	snprintf(out, sizeof(out), "%s/run-%s", tb_dir(), file.raw);
	struct cmd_result r = RUN("run", "-o", out, "--", "/bin/sh", "-c", "exit 3", title.raw);
	assert_int_equal(r.status, 3);
	assert_terminal_safe("run stderr", r.err);
	assert_int_equal(count(r.err, "command: /bin/sh -c exit 3 \\x1b]0;pwned\\x07title\n"), 1);
	char trace[700];
	snprintf(trace, sizeof(trace), "Trace: %s/run-%s (every table: gprof-dl summary %s/run-%s)\n",
		 tb_dir(), file.text, tb_dir(), file.text);
	assert_int_equal(count(r.err, trace), 1);
	cmd_result_free(&r);
}

/* Messages that quote a name: one line, in its terminal form. */
static void test_errors(void **state)
{
	(void)state;
	struct cmd_result r = RUN("summary", file.raw);
	assert_int_equal(r.status, 1);
	assert_terminal_safe("error", r.err);
	assert_string_equal(r.err, "gprof-dl: cannot open '" "evil\\x1b[1A\\xffname.gpdl"
				   "': No such file or directory\n");
	cmd_result_free(&r);
	r = RUN("info", fake.raw);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, fake.text);
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_text), cmocka_unit_test(test_summary_data),
		cmocka_unit_test(test_diff),	     cmocka_unit_test(test_info),
		cmocka_unit_test(test_export),	     cmocka_unit_test(test_run_report),
		cmocka_unit_test(test_run),	     cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
