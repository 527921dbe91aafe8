/*
 * test_cmd_summary_dist.c - `gprof-dl summary --view distributed` over a
 * job, as a user runs it: the built executable (GPDL_BIN) on rank files from
 * tracebuild.h's tb_job, its JSON read back by yajl and its text searched.
 * The numbers are worked out in test_distributed.c (two ranks on gloo, rank
 * 1 20 ms slower in computation per step, 12 steps; times in ms).
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

#define SUMMARY(...) cmd_run(GPDL_BIN, "summary", (const char *const[]){__VA_ARGS__, NULL})

static char job[2][512];

static void write_job(void)
{
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1};
	tb_job_write("c2", &tj, job);
}

static void test_json(void **state)
{
	(void)state;
	write_job();
	struct cmd_result r =
		SUMMARY(job[0], job[1], "--view", "distributed", "--format", "json", "--skip-steps", "0");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	char err[256];
	yajl_val doc = yajl_tree_parse(r.out, err, sizeof(err));
	if (!doc)
		fail_msg("not JSON (%s):\n%s", err, r.out);
	yajl_val j = jkey(doc, "job");
	assert_jnum(jkey(j, "ranks"), 2);
	assert_string_equal(jstr(jkey(j, "clock")), "CLOCK_MONOTONIC");
	assert_jnum(jkey(jkey(doc, "window"), "steps"), 24);
	yajl_val tables = jkey(doc, "tables");
	yajl_val sec = jelem(jkey(jkey(tables, "distributed"), "sections"), 0);
	yajl_val facts = jkey(sec, "facts");
	assert_jnum(jkey(facts, "straggler_rank"), 1);
	assert_jnum(jkey(facts, "straggler_cause"), 0);
	assert_jnum(jkey(facts, "straggler_excess_ns"), 20e6);
	assert_jnum(jkey(facts, "others_wait_ns"), 20e6);
	assert_jnum(jkey(facts, "wall_clock"), 0);
	assert_jnum(jkey(facts, "straggler_kind"), 1);
	assert_jnum(jkey(facts, "part_computation_ns"), 20e6);
	assert_jnum(jkey(facts, "busy_excess_ns"), 20e6);
	assert_jnum(jkey(facts, "cost_pct"), 20);
	yajl_val rows = jkey(sec, "rows");
	static const double want[2][9] = {
		/* steps, busy, wait, computation, data, outside, communication, total, overlap */
		{12, 80e6, 20e6, 40e6, 0, 5e6, 35e6, 55e6, 0},
		{12, 100e6, 0, 60e6, 0, 5e6, 35e6, 35e6, 0},
	};
	static const char *const keys[] = {"steps", "busy_ns", "wait_ns", "computation_ns",
					   "data_loading_ns", "outside_ns", "communication_ns",
					   "comm_total_ns", "overlap_ns"};
	for (size_t k = 0; k < 2; k++) {
		yajl_val row = jelem(rows, k);
		assert_jnum(jkey(row, "rank"), (double)k);
		for (size_t c = 0; c < 9; c++)
			assert_jnum(jkey(row, keys[c]), want[k][c]);
		assert_jnum(jkey(row, "step_mean_ns"), 100e6);
		assert_true(jkey(row, "contention_ns")->type == yajl_t_null); /* not measured */
	}
	assert_string_equal(jstr(jkey(jelem(rows, 1), "note")), "straggler: computation");
	yajl_val notes = jkey(jkey(tables, "distributed"), "notes");
	assert_string_equal(jstr(jelem(notes, 0)),
			    "Straggler: rank 1 held the job back in 12 of 12 steps (p = 0.00049). Over "
			    "the steps busy 100.00 ms per step vs the others' median 80.00 ms: +20.00 ms "
			    "= computation +20.00; rank 0 waits 20.00 ms per step for it in all_reduce.");
	yajl_val coll = jelem(jkey(jelem(jkey(jkey(tables, "collectives"), "sections"), 0), "rows"), 0);
	assert_string_equal(jstr(jkey(coll, "collective")), "all_reduce");
	assert_jnum(jkey(coll, "calls"), 12);
	assert_jnum(jkey(coll, "bytes_per_call"), 4 << 20);
	assert_jnum(jkey(coll, "total_per_rank_ns"), 540e6);
	assert_jnum(jkey(coll, "algbw"), 4194304.0 / 35e6);
	yajl_tree_free(doc);
	cmd_result_free(&r);
}

/* Text and CSV, the default views (the others over the whole job), one
 * rank alone (Paddle's table), and the same rank twice. */
static void test_text_and_errors(void **state)
{
	(void)state;
	write_job();
	struct cmd_result r = SUMMARY(job[1], job[0], "--skip-steps", "0");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "Straggler: rank 1 held the job back in 12 of 12 steps");
	assert_contains(r.out, "Clock: the shared CLOCK_MONOTONIC of host h0");
	assert_contains(r.out, "Collective Summary");
	assert_contains(r.out, "Operator Summary"); /* the whole job as one program */
	assert_contains(r.out, "2 traces are summarised together");
	cmd_result_free(&r);

	r = SUMMARY(job[0], job[1], "--view", "distributed", "--format", "csv", "--skip-steps", "0");
	assert_int_equal(r.status, 0);
	/* the ranks' table, its facts a column each on every row, then the
	 * collectives' table; no Trace Summary; no contention column, as no
	 * rank measured it */
	assert_true(strncmp(r.out, "row,section,rank,host,steps,step_mean_ms,", 41) == 0);
	assert_contains(r.out, ",communication_ms,comm_total_ms,overlap_ms,note,ended_ms,depth,parent,"
			       "ranks,world_size,missing_ranks,hosts,wall_clock,skip_steps,job_start_ns,"
			       "steps_compared,straggler_rank,straggler_cause,");
	assert_contains(r.out, "\r\n1,\"ranks\",0,\"h0\",12,100.000000,");
	assert_contains(r.out, "\r\n2,\"ranks\",1,\"h0\",12,100.000000,");
	/* straggler_rank 1, cause 0, kind 1, 12 steps held */
	assert_contains(r.out, ",\"straggler: computation\",1201.000000,0,0,2,2,0,1,0,0,0,12,1,0,1,12,");
	assert_contains(r.out, "\r\n\r\nrow,section,collective,backend,group_size,calls,");
	assert_null(strstr(r.out, "Distributed Summary"));
	cmd_result_free(&r);

	r = SUMMARY(job[0], "--view", "distributed");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "Communication");
	assert_contains(r.out, "the host's communication calls");
	if (strstr(r.out, "Straggler"))
		fail_msg("a straggler on one rank:\n%s", r.out);
	cmd_result_free(&r);

	r = SUMMARY(job[0], job[0], "--view", "distributed");
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "the same rank 0 in '");
	assert_string_equal(r.out, "");
	cmd_result_free(&r);
}

/* Rank files of two jobs (world sizes 2 and 3): every command that takes a
 * job refuses them with one line naming both, exit 1; --mixed-jobs takes
 * them together, and the views name the ranks missing. */
static void test_mixed_jobs(void **state)
{
	(void)state;
	write_job();
	char three[3][512];
	struct tb_job tj = {.ranks = 3, .steps = 12, .slow_rank = -1, .killed_rank = -1};
	tb_job_write("x3", &tj, three);
	static const char *const cmds[] = {"summary", "bench", "diff", "report"};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct cmd_result r;
		if (strcmp(cmds[i], "diff") == 0)
			r = cmd_run(GPDL_BIN, "diff",
				    (const char *const[]){"--a", job[0], three[2], "--b", job[0], job[1], NULL});
		else if (strcmp(cmds[i], "report") == 0)
			r = cmd_run(GPDL_BIN, "report",
				    (const char *const[]){job[0], three[2], "-o", tb_path("mixed.html"), NULL});
		else
			r = cmd_run(GPDL_BIN, cmds[i], (const char *const[]){job[0], three[2], NULL});
		if (r.status != 1)
			fail_msg("%s: status %d, expected 1\n%s", cmds[i], r.status, r.err);
		assert_one_line(r.err);
		assert_contains(r.err, "(rank 0 of 2) and '");
		assert_contains(r.err, "(rank 2 of 3) are not of one job: their world sizes differ; "
				       "--mixed-jobs takes them together");
		cmd_result_free(&r);
	}
	struct cmd_result r = SUMMARY(job[0], three[2], "--mixed-jobs", "--skip-steps", "0");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "Missing: rank 1 of 3 (no trace given for it); the figures are the "
			       "others'.");
	assert_contains(r.out, "Missing: rank 1 of 3 (no trace given for it): the job's figures are "
			       "the others'.");
	cmd_result_free(&r);
	r = cmd_run(GPDL_BIN, "bench", (const char *const[]){job[0], three[2], "--mixed-jobs", NULL});
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "Missing: rank 1 of 3");
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_text_and_errors),
		cmocka_unit_test(test_mixed_jobs),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
