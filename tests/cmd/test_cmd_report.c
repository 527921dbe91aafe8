/*
 * test_cmd_report.c - `gprof-dl report` as a user runs it (GPDL_BIN): its
 * exit statuses and messages, the file it leaves (or does not), and the
 * HTML's C side: the JSON document it embeds, read back with yajl, and the
 * escaping that keeps names from the program out of the markup. What the
 * page draws is tests/report's (Chromium).
 *
 * The traces are tracebuild.h's tb_diff_trace() (A 3 steps with a 10 ms
 * Dataloader, B 6 steps with a 20 ms one: per step only the Dataloader
 * changed, +10 ms) and one whose operator and kernel names are markup.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/analysis/tracebuild.h"
#include "tests/cmd/cmdrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif

#define REPORT(...) cmd_run(GPDL_BIN, "report", (const char *const[]){__VA_ARGS__, NULL})

/* Names that would be markup if the page let them: the first closes the
 * data's <script> and opens one of its own. */
static const char evil_op[] = "</script><script>alert(1)</script>";
static const char evil_kernel[] = "<!--<SCRIPT>&amp;\"'</Script >";

static const char *trace_a(void)
{
	return tb_diff_trace("a.gpdl", 100, 3, 10 * TB_MS);
}

static const char *trace_b(void)
{
	return tb_diff_trace("b.gpdl", 200, 6, 20 * TB_MS);
}

static const char *evil_trace(void)
{
	struct tb b;
	tb_open(&b, "evil.gpdl", "host", 10, 0);
	tb_thread(&b, 0, 10, "main");
	tb_stream(&b, 1, 0, 7);
	struct trace_device dev = {.id = 0, .sm_count = 4, .max_threads_per_sm = 2048,
				   .max_threads_per_block = 1024, .max_blocks_per_sm = 16,
				   .warp_size = 32, .regs_per_sm = 65536, .regs_per_block = 65536,
				   .smem_per_sm = 65536, .smem_per_block = 49152,
				   .total_memory = 1ull << 34, .cc_major = 9};
	tb_device(&b, &dev, "GPU");
	uint32_t step = tb_desc(&b, "ProfileStep#1", TRACE_EV_PROFILE_STEP);
	uint32_t op = tb_desc(&b, evil_op, TRACE_EV_OPERATOR);
	uint32_t launch = tb_desc(&b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	uint32_t k = tb_desc(&b, evil_kernel, TRACE_EV_KERNEL);
	tb_range(&b, 0, step, 500, 9000);
	tb_range(&b, 0, op, 1000, 4000);
	tb_call(&b, 0, launch, 1100, 50, 1);
	tb_kernel(&b, 1, k, 1200, 300, 1, 1, 32, 1, 0, 0, 0);
	return tb_close(&b, 10000);
}

static int count_ci(const char *text, const char *what)
{
	int n = 0;
	for (const char *p = text; *p; p++)
		if (strncasecmp(p, what, strlen(what)) == 0)
			n++;
	return n;
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* The page's JSON document: the text between the data element's tags
 * (*raw, from malloc) and it parsed. */
static yajl_val page_document(const char *page, char **raw)
{
	const char *open = "<script type=\"application/json\" id=\"gprof-dl-data\">";
	const char *at = strstr(page, open);
	assert_non_null(at);
	at += strlen(open);
	const char *end = strstr(at, "</script>");
	assert_non_null(end);
	*raw = strndup(at, (size_t)(end - at));
	char err[256];
	yajl_val doc = yajl_tree_parse(*raw, err, sizeof(err));
	if (!doc)
		fail_msg("the embedded JSON does not parse: %s", err);
	return doc;
}

/* The words of a JSON array of strings, joined by spaces. */
static char *words(yajl_val arr)
{
	size_t len = 1;
	for (size_t i = 0; i < jlen(arr); i++)
		len += strlen(jstr(jelem(arr, i))) + 1;
	char *s = calloc(1, len);
	for (size_t i = 0; i < jlen(arr); i++) {
		if (i)
			strcat(s, " ");
		strcat(s, jstr(jelem(arr, i)));
	}
	return s;
}

static void test_usage(void **state)
{
	(void)state;
	struct cmd_result r = REPORT("--top", "3");
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err, "gprof-dl: no trace file given\nsee 'gprof-dl report --help'\n");
	cmd_result_free(&r);

	r = REPORT(trace_a(), "--basline", trace_b());
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "did you mean '--baseline'?");
	cmd_result_free(&r);

	r = REPORT(trace_a(), "--top", "x");
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "invalid --top 'x'");
	cmd_result_free(&r);

	r = REPORT("--baseline", trace_a());
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "no trace files given before --baseline");
	cmd_result_free(&r);

	r = REPORT("--help");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: gprof-dl report FILE...");
	cmd_result_free(&r);
}

static void test_refusals(void **state)
{
	(void)state;
	/* tb_path()'s buffers are reused: each path copied */
	char out[600], missing[600], none[600], nodir[600], a[600];
	snprintf(out, sizeof(out), "%s", tb_path("exists.html"));
	snprintf(missing, sizeof(missing), "%s", tb_path("missing.gpdl"));
	snprintf(none, sizeof(none), "%s", tb_path("none.html"));
	snprintf(nodir, sizeof(nodir), "%s", tb_path("no/such/dir/r.html"));
	snprintf(a, sizeof(a), "%s", trace_a());
	FILE *f = fopen(out, "w");
	assert_non_null(f);
	fputs("keep me\n", f);
	assert_int_equal(fclose(f), 0);
	/* an existing file is kept without --force */
	struct cmd_result r = REPORT(a, "-o", out);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "exists; use --force");
	size_t len;
	char *kept = tb_slurp(out, &len);
	assert_string_equal(kept, "keep me\n");
	free(kept);
	cmd_result_free(&r);

	/* a trace that cannot be read: named, and no OUT nor OUT.tmp left */
	char want[2000], tmp[700];
	snprintf(want, sizeof(want), "'%s'", missing);
	snprintf(tmp, sizeof(tmp), "%s.tmp", none);
	r = REPORT(a, missing, "-o", none);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, want);
	assert_false(exists(none));
	assert_false(exists(tmp));
	cmd_result_free(&r);

	/* the same for a baseline that cannot be read */
	r = REPORT(a, "--baseline", missing, "-o", none);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, want);
	assert_false(exists(none));
	assert_false(exists(tmp));
	cmd_result_free(&r);

	/* a directory that is not there */
	r = REPORT(a, "-o", nodir);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "cannot create");
	cmd_result_free(&r);
}

/* Issue 25: the title of a job's report names it: "job of 2 ranks" and
 * its files as one pattern. */
static void test_job_title(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 4, .slow_rank = -1, .killed_rank = -1};
	char paths[4][512], out[600], want[1200];
	unsigned n = tb_job_write("jt", &tj, paths);
	assert_int_equal(n, 2);
	snprintf(out, sizeof(out), "%s", tb_path("jt.html"));
	struct cmd_result r = REPORT(paths[0], paths[1], "-o", out, "--force");
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	size_t len;
	char *page = tb_slurp(out, &len), *raw;
	yajl_val doc = page_document(page, &raw);
	snprintf(want, sizeof(want), "gprof-dl report: job of 2 ranks: %s/jt-*.gpdl", tb_dir());
	assert_string_equal(jstr(jkey(doc, "title")), want);
	/* the rank selector's entries: a summary of each rank's own operators
	 * and kernels, by the command it names, in rank order */
	yajl_val ranks = jkey(doc, "ranks");
	assert_int_equal(jlen(ranks), 2);
	for (size_t i = 0; i < 2; i++) {
		yajl_val rk = jelem(ranks, i);
		assert_jnum(jkey(rk, "rank"), (double)i);
		char *cmd = words(jkey(rk, "command"));
		snprintf(want, sizeof(want), "gprof-dl summary %s --format json --view operator --view kernel "
			 "--top 50 --skip-steps 10 --time-unit ms", paths[i]);
		assert_string_equal(cmd, want);
		free(cmd);
		yajl_val tables = jpath(jkey(rk, "summary"), "tables", NULL);
		assert_int_equal(tables->u.object.len, 2);
		yajl_val op = jpath(tables, "operator", "sections");
		assert_true(jlen(jkey(jelem(op, 0), "rows")) > 0);
		assert_jnum(jkey(jelem(jpath(jkey(rk, "summary"), "traces", NULL), 0), "rank"), (double)i);
	}
	yajl_tree_free(doc);
	free(raw);
	free(page);
}

/* The document: the summary the command in it prints, and with --baseline
 * the diff of the other command, the figures of both as test_cmd_diff
 * works them out. */
static void test_document(void **state)
{
	(void)state;
	char a[600], b[600], out[600];
	snprintf(a, sizeof(a), "%s", trace_a());
	snprintf(b, sizeof(b), "%s", trace_b());
	snprintf(out, sizeof(out), "%s", tb_path("r.html"));
	struct cmd_result r = REPORT(b, "--baseline", a, "-o", out, "--force", "--title", "<b>T&T</b>");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	size_t len;
	char *page = tb_slurp(out, &len);
	char want[2000];
	snprintf(want, sizeof(want), "gprof-dl: wrote '%s' (%zu bytes)\n", out, len);
	assert_string_equal(r.err, want);
	cmd_result_free(&r);

	/* self-contained: no URL to fetch, the policy that forbids one */
	assert_non_null(strstr(page, "default-src 'none'"));
	assert_null(strstr(page, "<link"));
	assert_null(strstr(page, " src="));
	assert_non_null(strstr(page, "Chart.js v3.9.1"));
	assert_non_null(strstr(page, "Released under the MIT License"));
	assert_non_null(strstr(page, "<title>&lt;b&gt;T&amp;T&lt;/b&gt;</title>"));

	char *raw;
	yajl_val doc = page_document(page, &raw);
	assert_jnum(jkey(doc, "gprof_dl_report"), 1);
	assert_string_equal(jstr(jkey(doc, "title")), "<b>T&T</b>");
	char *cmd = words(jkey(doc, "command"));
	snprintf(want, sizeof(want),
		 "gprof-dl summary %s --format json --view all --top 100 --skip-steps 10 "
		 "--time-unit ms",
		 b);
	assert_string_equal(cmd, want);
	free(cmd);
	yajl_val sum = jkey(doc, "summary");
	assert_jnum(jpath(sum, "window", "steps"), 6);
	assert_string_equal(jstr(jkey(sum, "time_unit")), "ms");
	/* B's model view: 6 steps of 100 ms */
	yajl_val model = jelem(jpath(jpath(sum, "tables", "model"), "sections", NULL), 0);
	yajl_val step = jelem(jkey(model, "rows"), 0);
	assert_string_equal(jstr(jkey(step, "name")), "ProfileStep");
	assert_jnum(jkey(step, "calls"), 6);
	assert_jnum(jkey(step, "cpu_total"), 600);

	yajl_val base = jkey(doc, "baseline");
	cmd = words(jkey(base, "command"));
	snprintf(want, sizeof(want),
		 "gprof-dl diff --a %s --b %s --format json --top 100 --skip-steps 10 --time-unit ms",
		 a, b);
	assert_string_equal(cmd, want);
	free(cmd);
	yajl_val diff = jkey(base, "diff");
	assert_string_equal(jstr(jkey(diff, "schema")), "gprof-dl-diff/1");
	assert_jnum(jpath(diff, "a", "steps"), 3);
	assert_jnum(jpath(diff, "b", "steps"), 6);
	yajl_val dm = jelem(jpath(jpath(diff, "tables", "model"), "sections", NULL), 0);
	yajl_val dl = jelem(jkey(dm, "rows"), 0);
	assert_string_equal(jstr(jkey(dl, "name")), "ProfileStep > Dataloader");
	assert_jnum(jkey(dl, "cpu_delta"), 10.0);
	assert_jnum(jkey(dl, "cpu_delta_pct"), 100.0);
	/* one trace, no job: no rank to choose */
	assert_int_equal(jlen(jkey(doc, "ranks")), 0);
	yajl_tree_free(doc);
	free(raw);
	free(page);

	/* no baseline: null */
	r = REPORT(a, "-o", out, "--force", "--top", "0", "--time-unit", "us");
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	page = tb_slurp(out, &len);
	doc = page_document(page, &raw);
	assert_int_equal(jkey(doc, "baseline")->type, yajl_t_null);
	assert_string_equal(jstr(jpath(doc, "summary", "time_unit")), "us");
	model = jelem(jpath(jpath(jkey(doc, "summary"), "tables", "model"), "sections", NULL), 0);
	assert_jnum(jkey(jelem(jkey(model, "rows"), 0), "cpu_total"), 300000);
	yajl_tree_free(doc);
	free(raw);
	free(page);
}

/* Names from the program reach the page as JSON data only: the page's only
 * </script> tags are its three own, and the document holds no '<', '>' or
 * '&' (each written \u003c, \u003e, \u0026), yet reads back byte for byte. */
static void test_escaping(void **state)
{
	(void)state;
	char out[600], evil[600];
	snprintf(out, sizeof(out), "%s", tb_path("evil.html"));
	snprintf(evil, sizeof(evil), "%s", evil_trace());
	struct cmd_result r = REPORT(evil, "-o", out, "--force");
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	size_t len;
	char *page = tb_slurp(out, &len);
	assert_int_equal(count_ci(page, "</script"), 3); /* data, Chart.js, report.js */
	assert_int_equal(count_ci(page, "<script"), 3);
	assert_int_equal(count_ci(page, "<!--"), 0);
	assert_null(strstr(page, "alert(1)</"));
	char *raw;
	yajl_val doc = page_document(page, &raw);
	assert_null(strpbrk(raw, "<>&"));
	assert_non_null(strstr(raw, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
	yajl_val sum = jkey(doc, "summary");
	yajl_val op = jelem(jpath(jpath(sum, "tables", "operator"), "sections", NULL), 0);
	assert_string_equal(jstr(jkey(jelem(jkey(op, "rows"), 0), "name")), evil_op);
	yajl_val k = jelem(jpath(jpath(sum, "tables", "kernel"), "sections", NULL), 0);
	assert_string_equal(jstr(jkey(jelem(jkey(k, "rows"), 0), "name")), evil_kernel);
	assert_jnum(jkey(jelem(jkey(k, "rows"), 0), "gpu_total"), 0.0003);
	yajl_tree_free(doc);
	free(raw);
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_document),
		cmocka_unit_test(test_job_title),
		cmocka_unit_test(test_escaping),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
