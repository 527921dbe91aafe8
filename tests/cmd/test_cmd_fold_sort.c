/*
 * test_cmd_fold_sort.c - `gprof-dl summary` and `gprof-dl diff` as a user
 * runs them (GPDL_BIN), on two things every format must agree on:
 *  - --sorted-by ties: rows of equal keys go by name, in text, CSV and JSON
 *    alike, in the Operator and the UserDefined Summary;
 *  - a call that redispatches to itself is one call (store.h), in the
 *    summary's three formats and in the diff (tracebuild.h's
 *    tb_fold_trace()).
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
#include <yajl/yajl_tree.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif

/* Four names whose calls (us) tie on every CPU key but one, in an order
 * that is not the names':
 *           calls               total  avg  max  min
 *   zeta    100 500             600    300  500  100
 *   gamma   100 x 5             500    100  100  100
 *   beta    100 300 200         600    200  300  100
 *   alpha   300                 300    300  300  300
 * as Operators on thread 0 and as UserDefined ranges on thread 1. No GPU
 * work: a GPU key ties everywhere and goes by CPU Total, then by name. */
static const char *sort_trace(void)
{
	static const struct {
		const char *name;
		unsigned n;
		unsigned us[5];
	} rows[] = {
		{"zeta", 2, {100, 500}},
		{"gamma", 5, {100, 100, 100, 100, 100}},
		{"beta", 3, {100, 300, 200}},
		{"alpha", 1, {300}},
	};
	struct tb b;
	tb_open(&b, "sort.gpdl", "h", 30, 0);
	tb_thread(&b, 0, 30, "main");
	tb_thread(&b, 1, 31, "user");
	uint64_t at = 1000 * TB_US;
	for (unsigned r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		uint32_t op = tb_desc(&b, rows[r].name, TRACE_EV_OPERATOR);
		uint32_t ud = tb_desc(&b, rows[r].name, TRACE_EV_USER_DEFINED);
		for (unsigned k = 0; k < rows[r].n; k++, at += 1000 * TB_US) {
			tb_range(&b, 0, op, at, rows[r].us[k] * TB_US);
			tb_range(&b, 1, ud, at, rows[r].us[k] * TB_US);
		}
	}
	return tb_close(&b, at);
}

static const char *const names[] = {"alpha", "beta", "gamma", "zeta"};

/* The names' first letters in the order their rows appear: a row starts a
 * line ("\nNAME " in text; in CSV its row number, then ",\"NAME\","). */
static void order_in(const char *out, int csv, char got[5])
{
	const char *pos[4];
	for (unsigned i = 0; i < 4; i++) {
		char pat[32];
		snprintf(pat, sizeof(pat), csv ? ",\"%s\"," : "\n%s ", names[i]);
		pos[i] = strstr(out, pat);
		if (!pos[i])
			fail_msg("no row '%s' in:\n%s", names[i], out);
	}
	for (unsigned k = 0; k < 4; k++) {
		unsigned first = 4;
		for (unsigned i = 0; i < 4; i++)
			if (pos[i] && (first == 4 || pos[i] < pos[first]))
				first = i;
		got[k] = names[first][0];
		pos[first] = NULL;
	}
	got[4] = '\0';
}

static void order_json(const char *out, const char *view, char got[5])
{
	char err[256];
	yajl_val doc = yajl_tree_parse(out, err, sizeof(err));
	if (!doc)
		fail_msg("not JSON: %s", err);
	const char *path[] = {"tables", view, "sections", NULL};
	yajl_val sections = yajl_tree_get(doc, path, yajl_t_array);
	assert_non_null(sections);
	assert_int_equal(jlen(sections), 1);
	yajl_val rows = jkey(jelem(sections, 0), "rows");
	assert_int_equal(jlen(rows), 4);
	for (size_t i = 0; i < 4; i++)
		got[i] = jstr(jkey(jelem(rows, i), "name"))[0];
	got[4] = '\0';
	yajl_tree_free(doc);
}

static void test_sort_ties(void **state)
{
	(void)state;
	const char *trace = sort_trace();
	static const struct {
		const char *key, *order;
	} sorts[] = {
		{"cpu-total", "bzga"}, /* beta and zeta tie at 600 */
		{"cpu-avg", "azbg"},   /* alpha and zeta tie at 300 */
		{"cpu-max", "zabg"},   /* alpha and beta tie at 300 */
		{"cpu-min", "bgza"},   /* beta, gamma and zeta tie at 100 */
		{"gpu-total", "bzga"}, /* all tie: CPU Total, then name */
		{"gpu-min", "bzga"},
	};
	static const char *const views[] = {"operator", "userdefined"};
	static const char *const formats[] = {"text", "csv", "json"};
	for (unsigned s = 0; s < sizeof(sorts) / sizeof(sorts[0]); s++) {
		for (unsigned v = 0; v < 2; v++) {
			for (unsigned f = 0; f < 3; f++) {
				struct cmd_result r = cmd_run(
					GPDL_BIN, "summary",
					(const char *const[]){trace, "--view", views[v], "--sorted-by",
							      sorts[s].key, "--format", formats[f],
							      "--time-unit", "us", NULL});
				assert_int_equal(r.status, 0);
				char got[5];
				if (f == 2)
					order_json(r.out, views[v], got);
				else
					order_in(r.out, f == 1, got);
				if (strcmp(got, sorts[s].order) != 0)
					fail_msg("--sorted-by %s, %s, %s: rows %s, want %s", sorts[s].key,
						 views[v], formats[f], got, sorts[s].order);
				cmd_result_free(&r);
			}
		}
	}
}

/* ---- self-redispatch ------------------------------------------------------ */

static void test_fold_summary(void **state)
{
	(void)state;
	const char *trace = tb_fold_trace("fold-sum.gpdl", 10, 4);
	struct cmd_result r = cmd_run(GPDL_BIN, "summary",
				      (const char *const[]){trace, "--view", "operator", "--format",
							    "csv", "--time-unit", "us", NULL});
	assert_int_equal(r.status, 0);
	/* Name, Calls, CPU Total, Avg, Max, Min: one call a dropout, 600 us */
	assert_contains(r.out, ",\"div_\",4,2400.000,600.000,600.000,600.000,");
	assert_contains(r.out, ",\"add_\",4,2400.000,");
	assert_contains(r.out, ",\"copy_\",8,2400.000,");
	cmd_result_free(&r);

	r = cmd_run(GPDL_BIN, "summary",
		    (const char *const[]){trace, "--view", "operator", "--op-detail", "--time-unit", "us",
					  NULL});
	assert_int_equal(r.status, 0);
	/* under dropout, div_ once, and under it what the inner range ran */
	const char *at = strstr(r.out, "\n  div_ ");
	assert_non_null(at);
	assert_non_null(strstr(at, "\n    to "));
	assert_null(strstr(r.out, "\n    div_ "));
	assert_null(strstr(r.out, "\n  add_ "));
	cmd_result_free(&r);
}

static yajl_val diff_row(yajl_val doc, const char *name)
{
	const char *path[] = {"tables", "operator", "sections", NULL};
	yajl_val sections = yajl_tree_get(doc, path, yajl_t_array);
	assert_non_null(sections);
	yajl_val rows = jkey(jelem(sections, 0), "rows");
	for (size_t i = 0; i < jlen(rows); i++)
		if (strcmp(jstr(jkey(jelem(rows, i), "name")), name) == 0)
			return jelem(rows, i);
	return NULL;
}

static void test_fold_diff(void **state)
{
	(void)state;
	char a[512], b[512];
	snprintf(a, sizeof(a), "%s", tb_fold_trace("fold-da.gpdl", 10, 4));
	snprintf(b, sizeof(b), "%s", tb_fold_trace("fold-db.gpdl", 20, 8));
	for (int detail = 0; detail <= 1; detail++) {
		struct cmd_result r = cmd_run(
			GPDL_BIN, "diff",
			(const char *const[]){a, b, "--view", "operator", "--top", "0", "--format", "json",
					      "--time-unit", "us", detail ? "--op-detail" : NULL, NULL});
		assert_int_equal(r.status, 0);
		char err[256];
		yajl_val doc = yajl_tree_parse(r.out, err, sizeof(err));
		if (!doc)
			fail_msg("not JSON: %s", err);
		yajl_val row = diff_row(doc, detail ? "dropout > div_" : "div_");
		assert_non_null(row);
		assert_jnum(jkey(row, "calls_a"), 4); /* was 8 and 16 */
		assert_jnum(jkey(row, "calls_b"), 8);
		assert_jnum(jkey(row, "cpu_a_ns"), 2400 * TB_US);
		assert_jnum(jkey(row, "cpu_b_ns"), 4800 * TB_US);
		assert_jnum(jkey(row, "cpu_delta_ns"), 2400 * TB_US);
		assert_jnum(jkey(row, "gpu_a_ns"), 200 * TB_US);
		row = diff_row(doc, "add_");
		assert_non_null(row);
		assert_jnum(jkey(row, "calls_a"), 4);
		assert_jnum(jkey(row, "cpu_a_ns"), 2400 * TB_US);
		assert_null(diff_row(doc, "dropout > div_ > div_"));
		assert_null(diff_row(doc, "add_ > add_"));
		yajl_tree_free(doc);
		cmd_result_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sort_ties),
		cmocka_unit_test(test_fold_summary),
		cmocka_unit_test(test_fold_diff),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
