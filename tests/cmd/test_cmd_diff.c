/*
 * test_cmd_diff.c - `gprof-dl diff` as a user runs it: the built executable
 * (GPDL_BIN), its exit status, its stderr, its text, its CSV and its JSON
 * read back by yajl.
 *
 * The traces are tracebuild.h's tb_diff_trace(): A has 3 steps with a
 * Dataloader of 10 ms each, B 6 steps with one of 20 ms, all else equal. Per
 * step, only the Dataloader changed: +10 ms (+100%). In total, B did twice
 * what A did: ProfileStep 300 -> 600 ms.
 *
 * Statuses under test: 2 usage (one line and a pointer to --help), 1 a file
 * that cannot be read (one line naming it), 0 printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/analysis/tracebuild.h"
#include "tests/cmd/cmdrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif

/* Runs gprof-dl diff with args (NULL-terminated). */
static struct cmd_result run_diff(const char *const *args)
{
	return cmd_run(GPDL_BIN, "diff", args);
}

#define DIFF(...) run_diff((const char *const[]){__VA_ARGS__, NULL})

static int count(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* Exit 2, the message on one line, then the pointer to --help; nothing out. */
static void expect_usage(struct cmd_result r, const char *message)
{
	assert_int_equal(r.status, 2);
	char *want = NULL;
	assert_true(asprintf(&want, "gprof-dl: %s\nsee 'gprof-dl diff --help'\n", message) > 0);
	assert_string_equal(r.err, want);
	free(want);
	assert_string_equal(r.out, "");
	cmd_result_free(&r);
}

static const char *trace_a(void)
{
	return tb_diff_trace("a.gpdl", 100, 3, 10 * TB_MS);
}

static const char *trace_b(void)
{
	return tb_diff_trace("b.gpdl", 200, 6, 20 * TB_MS);
}

static void test_usage(void **state)
{
	(void)state;
	const char *a = trace_a(), *b = trace_b();
	expect_usage(run_diff((const char *const[]){NULL}), "no trace files given (A and B)");
	char msg[700];
	snprintf(msg, sizeof(msg), "no trace file B given to compare with '%s'", a);
	expect_usage(DIFF(a), msg);
	expect_usage(DIFF(a, b, "c.gpdl"), "too many files: 'c.gpdl' (diff compares two traces, A "
					   "and B)");
	expect_usage(DIFF(a, b, "--view", "bogus"),
		     "unknown view 'bogus' (views: model, operator, kernel, memory-manipulation, "
		     "userdefined, or all)");
	expect_usage(DIFF(a, b, "--view", "trace"),
		     "unknown view 'trace' (views: model, operator, kernel, memory-manipulation, "
		     "userdefined, or all)");
	expect_usage(DIFF(a, b, "--view", "model", "--view", "memory"),
		     "view 'memory' cannot be diffed: it has no CPU or GPU Total column");
	expect_usage(DIFF(a, b, "--view", "perf"),
		     "view 'perf' cannot be diffed: it has no CPU or GPU Total column");
	expect_usage(DIFF(a, b, "--top", "x"), "invalid --top 'x' (a number of rows, 0 for all)");
	expect_usage(DIFF(a, b, "--top", "-1"), "invalid --top '-1' (a number of rows, 0 for all)");
	expect_usage(DIFF(a, b, "--top", "3rows"),
		     "invalid --top '3rows' (a number of rows, 0 for all)");
	expect_usage(DIFF(a, b, "--top"), "option '--top' needs a value");
	expect_usage(DIFF(a, b, "--format", "xml"), "unknown format 'xml' (text, csv or json)");
	expect_usage(DIFF(a, b, "--time-unit", "h"), "unknown time unit 'h' (s, ms, us or ns)");
	expect_usage(DIFF(a, b, "--thread-sep"), "unknown option '--thread-sep'");
	/* a usage error comes first, even when a file is missing */
	expect_usage(DIFF(tb_path("missing.gpdl"), b, "--view", "memory"),
		     "view 'memory' cannot be diffed: it has no CPU or GPU Total column");

	struct cmd_result r = DIFF("--help");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: gprof-dl diff A B [--view NAME]...");
	assert_string_equal(r.err, "");
	cmd_result_free(&r);
}

static void test_bad_files(void **state)
{
	(void)state;
	const char *a = trace_a(), *missing = tb_path("missing.gpdl");
	char want[700];
	snprintf(want, sizeof(want), "'%s'", missing);
	struct cmd_result r = DIFF(missing, a);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, want);
	assert_string_equal(r.out, "");
	cmd_result_free(&r);

	/* B is no trace: named, nothing printed */
	const char *junk = tb_path("junk.gpdl");
	FILE *f = fopen(junk, "w");
	assert_non_null(f);
	fputs("not a trace at all, just some text\n", f);
	assert_int_equal(fclose(f), 0);
	snprintf(want, sizeof(want), "'%s'", junk);
	r = DIFF(a, junk);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, want);
	assert_string_equal(r.out, "");
	cmd_result_free(&r);

	/* an output that cannot be opened */
	const char *nodir = tb_path("no/such/dir/out.txt");
	snprintf(want, sizeof(want), "gprof-dl: cannot create '%s': No such file or directory\n",
		 nodir);
	r = DIFF(a, a, "-o", nodir);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, want);
	cmd_result_free(&r);
}

/* The line of text after the first line containing title, that starts with
 * a row name: the table's first row. */
static const char *first_row(const char *text, const char *title)
{
	const char *p = strstr(text, title);
	if (!p)
		fail_msg("no '%s' in:\n%s", title, text);
	p = strstr(p, "\nName");
	assert_non_null(p);
	p = strchr(p + 1, '\n'); /* the rule under the header */
	assert_non_null(p);
	p = strchr(p + 1, '\n');
	assert_non_null(p);
	return p + 1;
}

static void assert_starts(const char *text, const char *want)
{
	if (strncmp(text, want, strlen(want)) != 0)
		fail_msg("'%.*s' does not start with '%s'", (int)strcspn(text, "\n"), text, want);
}

static void test_text(void **state)
{
	(void)state;
	const char *a = trace_a(), *b = trace_b();
	struct cmd_result r = DIFF(a, b, "--wide");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	char head[1400];
	snprintf(head, sizeof(head),
		 "Comparing A: '%s' (3 steps) with B: '%s' (6 steps); times per step\n\n", a, b);
	assert_starts(r.out, head);
	/* the default views, in order */
	const char *model = strstr(r.out, "Model Summary"), *op = strstr(r.out, "Operator Summary"),
		   *kernel = strstr(r.out, "Kernel Summary"),
		   *mm = strstr(r.out, "Memory Manipulation Summary"),
		   *ud = strstr(r.out, "UserDefined Summary");
	assert_true(model && op && kernel && mm && ud);
	assert_true(model < op && op < kernel && kernel < mm && mm < ud);
	assert_null(strstr(r.out, "Overview Summary"));
	/* the changed phase first, with its numbers */
	const char *row = first_row(r.out, "Model Summary");
	assert_starts(row, "ProfileStep > Dataloader");
	assert_contains(row, "changed    3 / 6          10.00 / 20.00 / 10.00 / 100.00    "
			     "0.00 / 0.00 / 0.00 / -\n");
	assert_starts(strchr(row, '\n') + 1, "ProfileStep          ");
	assert_contains(r.out, "Time unit: ms\n");
	assert_contains(r.out, "No rows in A or in B.\n"); /* no copies in either */
	assert_contains(r.out, "Times per training step: A ('");
	/* 5 tables, 4 with rows (the empty one says only how times compare);
	 * none left any row out at --top 10 */
	assert_int_equal(count(r.out, "Times per training step"), 5);
	assert_int_equal(count(r.out, "Sorted by impact"), 4);
	assert_int_equal(count(r.out, "not shown"), 0);
	cmd_result_free(&r);

	/* the other way round, in microseconds: negative */
	r = DIFF(b, a, "--view", "model", "--time-unit", "us", "--wide");
	assert_int_equal(r.status, 0);
	row = first_row(r.out, "Model Summary");
	assert_starts(row, "ProfileStep > Dataloader");
	assert_contains(row, "changed    6 / 3          20000.00 / 10000.00 / -10000.00 / -50.00");
	assert_contains(r.out, "Time unit: us\n");
	assert_null(strstr(r.out, "Operator Summary"));
	cmd_result_free(&r);

	/* --top 1: one row a table, and what was left out */
	r = DIFF(a, b, "--top", "1", "--view", "operator", "--view", "model", "--wide");
	assert_int_equal(r.status, 0);
	assert_true(strstr(r.out, "Model Summary") < strstr(r.out, "Operator Summary"));
	row = first_row(r.out, "Model Summary");
	assert_starts(row, "ProfileStep > Dataloader");
	assert_starts(strchr(row, '\n') + 1, "---");
	assert_contains(r.out, "5 more rows not shown, 0 of them new, vanished or changed; --top 0 "
			       "shows every row.\n");
	row = first_row(r.out, "Operator Summary");
	assert_starts(row, "matmul ");
	assert_starts(strchr(row, '\n') + 1, "---");
	assert_contains(r.out, "2 more rows not shown, 0 of them new, vanished or changed");
	cmd_result_free(&r);

	/* -o: the same text in the file, nothing on stdout */
	const char *out = tb_path("diff.txt");
	r = DIFF(a, b, "-o", out, "--wide");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	char *text = tb_slurp(out, NULL);
	assert_starts(text, head);
	assert_contains(text, "ProfileStep > Dataloader");
	free(text);
	cmd_result_free(&r);

	/* without --wide, every line of the tables fits in 100 columns (the
	 * pipe's default width), the long name cut in the middle; the first
	 * line names the files as given, whatever their length */
	r = DIFF(a, b);
	assert_int_equal(r.status, 0);
	size_t widest = 0;
	for (const char *p = r.out; *p;) {
		size_t n = strcspn(p, "\n"), cols = 0;
		for (size_t k = 0; k < n && strncmp(p, "Comparing ", 10) != 0; k++)
			cols += ((unsigned char)p[k] & 0xc0) != 0x80; /* code points */
		if (cols > 100)
			fail_msg("%zu columns: '%.*s'", cols, (int)n, p);
		widest = cols > widest ? cols : widest;
		p += n + (p[n] == '\n');
	}
	assert_true(widest >= 90); /* the rules span the width */
	assert_contains(r.out, "ProfileStep\xe2\x80\xa6");
	cmd_result_free(&r);
}

/* ---- JSON --------------------------------------------------------------------- */

static yajl_val diff_json(struct cmd_result *r, const char *const *args)
{
	*r = run_diff(args);
	if (r->status != 0)
		fail_msg("exit %d: %s", r->status, r->err);
	assert_string_equal(r->err, "");
	char err[256];
	yajl_val doc = yajl_tree_parse(r->out, err, sizeof(err));
	if (!doc)
		fail_msg("JSON does not parse: %s\n%s", err, r->out);
	assert_true(YAJL_IS_OBJECT(doc));
	return doc;
}

static void assert_side(yajl_val side, const char *file, unsigned steps, unsigned divisor)
{
	assert_int_equal(YAJL_GET_OBJECT(side)->len, 3);
	assert_string_equal(jstr(jkey(side, "file")), file);
	assert_jnum(jkey(side, "steps"), steps);
	assert_jnum(jkey(side, "divisor"), divisor);
}

/* The top-level keys, in order: the stable schema. */
static void assert_keys(yajl_val doc)
{
	static const char *const keys[] = {"schema",    "a",   "b",     "per_step",
					   "time_unit", "top", "tables"};
	size_t n = sizeof(keys) / sizeof(keys[0]);
	assert_int_equal(YAJL_GET_OBJECT(doc)->len, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(YAJL_GET_OBJECT(doc)->keys[i], keys[i]);
	assert_string_equal(jstr(jkey(doc, "schema")), "gprof-dl-diff/1");
}

/* The rows of table id (one section). */
static yajl_val rows_of(yajl_val doc, const char *id, size_t n)
{
	const char *path[] = {"tables", id, "sections", NULL};
	yajl_val sections = yajl_tree_get(doc, path, yajl_t_array);
	if (!sections)
		fail_msg("no sections in table '%s'", id);
	if (n == 0) {
		assert_int_equal(YAJL_GET_ARRAY(sections)->len, 0);
		return NULL;
	}
	assert_int_equal(YAJL_GET_ARRAY(sections)->len, 1);
	yajl_val rows = jkey(YAJL_GET_ARRAY(sections)->values[0], "rows");
	assert_true(YAJL_IS_ARRAY(rows));
	assert_int_equal(YAJL_GET_ARRAY(rows)->len, n);
	return rows;
}

static yajl_val row_at(yajl_val rows, size_t i)
{
	return YAJL_GET_ARRAY(rows)->values[i];
}

static void test_json(void **state)
{
	(void)state;
	const char *a = trace_a(), *b = trace_b();
	struct cmd_result r;
	yajl_val doc = diff_json(&r, (const char *const[]){a, b, "--format", "json", NULL});
	assert_keys(doc);
	assert_side(jkey(doc, "a"), a, 3, 3);
	assert_side(jkey(doc, "b"), b, 6, 6);
	assert_true(YAJL_IS_TRUE(jkey(doc, "per_step")));
	assert_string_equal(jstr(jkey(doc, "time_unit")), "ms");
	assert_jnum(jkey(doc, "top"), 10);
	yajl_val tables = jkey(doc, "tables");
	static const char *const ids[] = {"model", "operator", "kernel", "memory-manipulation",
					  "userdefined"};
	assert_int_equal(YAJL_GET_OBJECT(tables)->len, 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(YAJL_GET_OBJECT(tables)->keys[i], ids[i]);

	/* model: Dataloader 10 -> 20 ms a step, then five rows of no change */
	yajl_val rows = rows_of(doc, "model", 6);
	yajl_val dl = row_at(rows, 0);
	assert_string_equal(jstr(jkey(dl, "name")), "ProfileStep > Dataloader");
	assert_string_equal(jstr(jkey(dl, "status")), "changed");
	assert_jnum(jkey(dl, "calls_a"), 3);
	assert_jnum(jkey(dl, "calls_b"), 6);
	assert_jnum(jkey(dl, "cpu_a"), 10.0);
	assert_jnum(jkey(dl, "cpu_a_ns"), 10000000);
	assert_jnum(jkey(dl, "cpu_b_ns"), 20000000);
	assert_jnum(jkey(dl, "cpu_delta"), 10.0);
	assert_jnum(jkey(dl, "cpu_delta_ns"), 10000000);
	assert_jnum(jkey(dl, "cpu_delta_pct"), 100.0);
	assert_jnum(jkey(dl, "gpu_delta_ns"), 0);
	assert_true(YAJL_IS_NULL(jkey(dl, "gpu_delta_pct")));
	assert_jnum(jkey(dl, "depth"), 0);
	static const char *const same[] = {"ProfileStep", "ProfileStep > Backward",
					   "ProfileStep > Forward", "ProfileStep > Optimization",
					   "ProfileStep > Others"};
	for (size_t i = 1; i < 6; i++) {
		yajl_val x = row_at(rows, i);
		assert_string_equal(jstr(jkey(x, "name")), same[i - 1]);
		assert_string_equal(jstr(jkey(x, "status")), "same");
		assert_jnum(jkey(x, "cpu_delta_ns"), 0);
		assert_jnum(jkey(x, "gpu_delta_ns"), 0);
	}
	yajl_val step = row_at(rows, 1);
	assert_jnum(jkey(step, "cpu_a_ns"), 100000000);
	assert_jnum(jkey(step, "gpu_b_ns"), 4000000);
	/* Others has no calls: null, not 0 */
	assert_true(YAJL_IS_NULL(jkey(row_at(rows, 5), "calls_a")));

	/* kernel: GPU columns only */
	rows = rows_of(doc, "kernel", 1);
	yajl_val gemm = row_at(rows, 0);
	assert_string_equal(jstr(jkey(gemm, "name")), "gemm");
	assert_string_equal(jstr(jkey(gemm, "status")), "same");
	assert_jnum(jkey(gemm, "gpu_a_ns"), 4000000);
	assert_jnum(jkey(gemm, "gpu_b_ns"), 4000000);
	const char *cpu[] = {"cpu_a", NULL};
	assert_null(yajl_tree_get(gemm, cpu, yajl_t_any));
	rows_of(doc, "memory-manipulation", 0);
	const char *empty[] = {"tables", "memory-manipulation", "empty", NULL};
	assert_string_equal(jstr(yajl_tree_get(doc, empty, yajl_t_string)), "No rows in A or in B.");
	rows = rows_of(doc, "operator", 3);
	assert_string_equal(jstr(jkey(row_at(rows, 0), "name")), "matmul");
	assert_jnum(jkey(row_at(rows, 0), "cpu_b_ns"), 20000000);
	yajl_tree_free(doc);
	cmd_result_free(&r);
}

/* --totals: every time is the whole trace's; B did twice A's work. */
static void test_totals(void **state)
{
	(void)state;
	const char *a = trace_a(), *b = trace_b();
	struct cmd_result r;
	yajl_val doc = diff_json(&r, (const char *const[]){a, b, "--totals", "--view", "model",
							    "--format", "json", "--time-unit", "s",
							    NULL});
	assert_keys(doc);
	assert_side(jkey(doc, "a"), a, 3, 1);
	assert_side(jkey(doc, "b"), b, 6, 1);
	assert_true(YAJL_IS_FALSE(jkey(doc, "per_step")));
	assert_int_equal(YAJL_GET_OBJECT(jkey(doc, "tables"))->len, 1);
	/* ProfileStep 300 -> 600, Forward 180 -> 360, Backward 90 -> 180 and
	 * Dataloader 30 -> 120 (a tie: by name), Optimization 30 -> 60, Others 0 */
	yajl_val rows = rows_of(doc, "model", 6);
	static const char *const order[] = {"ProfileStep", "ProfileStep > Forward",
					    "ProfileStep > Backward", "ProfileStep > Dataloader",
					    "ProfileStep > Optimization", "ProfileStep > Others"};
	static const double delta_ms[] = {300, 180, 90, 90, 30, 0};
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(jstr(jkey(row_at(rows, i), "name")), order[i]);
		assert_jnum(jkey(row_at(rows, i), "cpu_delta_ns"), delta_ms[i] * 1e6);
		assert_jnum(jkey(row_at(rows, i), "cpu_delta"), delta_ms[i] / 1e3);
	}
	yajl_val dl = row_at(rows, 3);
	assert_jnum(jkey(dl, "cpu_a_ns"), 30e6);
	assert_jnum(jkey(dl, "cpu_b_ns"), 120e6);
	assert_jnum(jkey(dl, "cpu_delta_pct"), 300.0);
	yajl_tree_free(doc);
	cmd_result_free(&r);

	r = DIFF(a, b, "--totals", "--view", "model");
	assert_int_equal(r.status, 0);
	char head[1400];
	snprintf(head, sizeof(head),
		 "Comparing A: '%s' (3 steps) with B: '%s' (6 steps); times in total\n\n", a, b);
	assert_starts(r.out, head);
	assert_starts(first_row(r.out, "Model Summary"), "ProfileStep  ");
	assert_contains(r.out, "Times in total: A ('");
	cmd_result_free(&r);

	/* a trace with no steps: totals, whatever is asked */
	const char *none = tb_perf_nosteps();
	r = DIFF(none, b, "--view", "model");
	assert_int_equal(r.status, 0);
	snprintf(head, sizeof(head),
		 "Comparing A: '%s' (no steps) with B: '%s' (6 steps); times in total\n\n", none, b);
	assert_starts(r.out, head);
	cmd_result_free(&r);
}

/* ---- CSV ------------------------------------------------------------------------ */

static void test_csv(void **state)
{
	(void)state;
	const char *a = trace_a(), *b = trace_b();
	struct cmd_result r = DIFF(a, b, "--format", "csv", "--view", "model", "--view", "kernel");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	/* typed tables (formats/CSV-SCHEMA.md): one header row each, units in
	 * the names, numbers unquoted, each table ended by an empty line */
	char sides[1400];
	snprintf(sides, sizeof(sides),
		 "row,side,file,steps,divisor,times,depth,parent\r\n"
		 "1,\"A\",\"%s\",3,3,\"per step\",0,0\r\n"
		 "2,\"B\",\"%s\",6,6,\"per step\",0,0\r\n"
		 "\r\n"
		 "row,name,status,calls_a,calls_b,cpu_a_ms,cpu_b_ms,cpu_delta_ms,cpu_delta_pct,"
		 "gpu_a_ms,gpu_b_ms,gpu_delta_ms,gpu_delta_pct,depth,parent\r\n"
		 "1,\"ProfileStep > Dataloader\",\"changed\",3,6,10.000000,20.000000,"
		 "10.000000,100.00,0.000000,0.000000,0.000000,,0,0\r\n"
		 "2,\"ProfileStep\",\"same\",3,6,100.000000,100.000000,0.000000,"
		 "0.00,4.000000,4.000000,0.000000,0.00,0,0\r\n",
		 a, b);
	assert_starts(r.out, sides);
	assert_contains(r.out, ",\"ProfileStep > Others\",\"same\",,,0.000000,"
			       "0.000000,0.000000,,");
	assert_contains(r.out, "\r\n\r\nrow,name,status,calls_a,calls_b,gpu_a_ms,gpu_b_ms,"
			       "gpu_delta_ms,gpu_delta_pct,depth,parent\r\n"
			       "1,\"gemm\",\"same\",3,6,4.000000,4.000000,0.000000,"
			       "0.00,0,0\r\n\r\n");
	assert_null(strstr(r.out, "Operator Summary"));
	cmd_result_free(&r);

	/* B before A: the delta is negative */
	r = DIFF(b, a, "--format=csv", "--view=model", "--top=1");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, ",\"ProfileStep > Dataloader\",\"changed\",6,3,20.000000,"
			       "10.000000,-10.000000,-50.00,");
	assert_int_equal(count(r.out, "\"same\""), 0);
	cmd_result_free(&r);
}

/* A trace against itself: every row of every view the same, no delta. */
static void test_self(void **state)
{
	(void)state;
	const char *a = trace_a();
	struct cmd_result r;
	yajl_val doc = diff_json(&r, (const char *const[]){a, a, "--format", "json", "--top", "0",
							    "--op-detail", NULL});
	assert_side(jkey(doc, "a"), a, 3, 3);
	assert_side(jkey(doc, "b"), a, 3, 3);
	assert_jnum(jkey(doc, "top"), 0);
	yajl_val tables = jkey(doc, "tables");
	size_t total = 0;
	for (size_t t = 0; t < YAJL_GET_OBJECT(tables)->len; t++) {
		const char *id = YAJL_GET_OBJECT(tables)->keys[t];
		const char *path[] = {"sections", NULL};
		yajl_val sections = yajl_tree_get(YAJL_GET_OBJECT(tables)->values[t], path,
						  yajl_t_array);
		for (size_t s = 0; sections && s < YAJL_GET_ARRAY(sections)->len; s++) {
			yajl_val rows = jkey(YAJL_GET_ARRAY(sections)->values[s], "rows");
			for (size_t i = 0; i < YAJL_GET_ARRAY(rows)->len; i++, total++) {
				yajl_val x = row_at(rows, i);
				if (strcmp(jstr(jkey(x, "status")), "same") != 0)
					fail_msg("%s: '%s' is %s", id, jstr(jkey(x, "name")),
						 jstr(jkey(x, "status")));
				static const char *const deltas[] = {"cpu_delta_ns", "gpu_delta_ns"};
				for (unsigned k = 0; k < 2; k++) {
					const char *dp[] = {deltas[k], NULL};
					yajl_val v = yajl_tree_get(x, dp, yajl_t_any);
					if (v && !YAJL_IS_NULL(v))
						assert_jnum(v, 0);
				}
			}
		}
	}
	/* model 6, operator with detail 4 (matmul > gemm), kernel 1, userdefined 1 */
	assert_int_equal(total, 12);
	yajl_val rows = rows_of(doc, "operator", 4);
	assert_string_equal(jstr(jkey(row_at(rows, 1), "name")), "matmul > gemm");
	yajl_tree_free(doc);
	cmd_result_free(&r);
}

/* PyTorch profiler traces, imported on the fly: two steps each, a
 * Dataloader of 30 ms in A and of 60 ms in B. Per step: 15 -> 30 ms. */
static const char *torch_trace(const char *name, unsigned dataloader_us)
{
	const char *path = tb_path(name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"{\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#0\", "
		"\"pid\": 7, \"tid\": 7, \"ts\": 1000, \"dur\": 100000},\n"
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", "
		"\"pid\": 7, \"tid\": 7, \"ts\": 101000, \"dur\": 300000},\n"
		"{\"ph\": \"X\", \"cat\": \"Dataloader\", \"name\": \"Dataloader\", \"pid\": 7,"
		" \"tid\": 7, \"ts\": 101000, \"dur\": %u}\n"
		"]}\n",
		dataloader_us);
	assert_int_equal(fclose(f), 0);
	static char copy[2][600];
	static unsigned which;
	which ^= 1;
	snprintf(copy[which], sizeof(copy[which]), "%s", path);
	return copy[which];
}

static void test_imported_json(void **state)
{
	(void)state;
	const char *a = torch_trace("torch-a.json", 30000), *b = torch_trace("torch-b.json", 60000);
	struct cmd_result r;
	yajl_val doc = diff_json(&r, (const char *const[]){a, b, "--view", "model", "--format",
							    "json", NULL});
	assert_side(jkey(doc, "a"), a, 2, 2);
	assert_side(jkey(doc, "b"), b, 2, 2);
	assert_true(YAJL_IS_TRUE(jkey(doc, "per_step")));
	yajl_val rows = jkey(YAJL_GET_ARRAY(jkey(jkey(jkey(doc, "tables"), "model"), "sections"))
				    ->values[0],
			    "rows");
	yajl_val dl = row_at(rows, 0);
	assert_string_equal(jstr(jkey(dl, "name")), "ProfileStep > Dataloader");
	assert_jnum(jkey(dl, "cpu_a_ns"), 15000000);
	assert_jnum(jkey(dl, "cpu_b_ns"), 30000000);
	assert_jnum(jkey(dl, "cpu_delta_ns"), 15000000);
	yajl_tree_free(doc);
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_imported_json),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
