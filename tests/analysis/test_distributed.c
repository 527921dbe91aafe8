/*
 * test_distributed.c - the Distributed view over a job (view_distributed.c,
 * summary.h): per-rank computation, communication, overlap, exposed
 * communication, wait, idle and busy per step, the per-collective table,
 * the straggler and its cause (or none), ranks that ended early, clocks of
 * several hosts, a merged file of two ranks, and one rank alone (Paddle's
 * table, with host communication). The jobs are tracebuild.h's tb_job;
 * every number is worked out in the comment above its test. Times in ms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/dist/job.h"
#include "lib/analysis/dist/dist.h"
#include "lib/analysis/views/view_distributed.h"
#include "lib/analysis/summary.h"
#include "lib/analysis/views/perf.h"
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1e6

enum {
	RC_RANK, RC_HOST, RC_STEPS, RC_MEAN, RC_MEDIAN, RC_P95, RC_BUSY, RC_WAIT, RC_COMP, RC_DATA,
	RC_OUTSIDE, RC_COMM, RC_CONTENTION, RC_COMM_TOTAL, RC_OVERLAP, RC_NOTE, RC_ENDED,
};
enum { CC_OP, CC_BACKEND, CC_GROUP, CC_CALLS, CC_BYTES, CC_TOTAL, CC_MEAN, CC_WAIT, CC_ALGBW,
       CC_BUSBW };

struct measured {
	struct job j;
	struct analysis sum;
	struct job_dist *d;
	struct table *ranks, *colls;
	char *text; /* both tables as text */
};

static char *render(const struct table *a, const struct table *b)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct table_style st = {.unit = TIME_UNIT_MS};
	table_render_text(a, f, &st);
	if (b)
		table_render_text(b, f, &st);
	fclose(f);
	return buf;
}

static void measure(struct measured *m, const char *name, const struct tb_job *tj, int skip)
{
	char paths[8][512];
	char *argv[8];
	unsigned n = tb_job_write(name, tj, paths);
	for (unsigned i = 0; i < n; i++)
		argv[i] = paths[i];
	char err[512];
	if (job_open(&m->j, (int)n, argv, 0, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	struct view_opts o = {.unit = TIME_UNIT_MS, .skip_set = skip >= 0,
			      .skip_steps = skip >= 0 ? (unsigned)skip : 0};
	analysis_init(&m->sum);
	m->d = job_dist_measure(&m->j, PERF_SKIP_OF(&o), &m->sum, "summarised", err, sizeof(err));
	if (!m->d)
		fail_msg("%s", err);
	m->ranks = job_dist_table(m->d, view_find("distributed"), &o);
	m->colls = job_dist_collectives(m->d, &o);
	m->text = render(m->ranks, m->colls);
}

static void measured_free(struct measured *m)
{
	free(m->text);
	table_free(m->ranks);
	table_free(m->colls);
	job_dist_free(m->d);
	analysis_free(&m->sum);
	job_free(&m->j);
}

static void assert_near(double x, double want)
{
	if (fabs(x - want) > 1e-6 * (fabs(want) + 1))
		fail_msg("%.9g != %.9g", x, want);
}

static const struct trow *rank_row(const struct measured *m, unsigned r)
{
	assert_int_equal(m->ranks->nparts, 1);
	assert_true(r < m->ranks->parts[0].nrows);
	const struct trow *row = &m->ranks->parts[0].rows[r];
	assert_int_equal(row->cells[RC_RANK].v.count, r);
	return row;
}

static int64_t fact(const struct table *t, const char *key)
{
	const struct tpart *p = &t->parts[0];
	for (size_t i = 0; i < p->nfacts; i++)
		if (strcmp(p->facts[i].key, key) == 0)
			return p->facts[i].value;
	fail_msg("no fact %s", key);
	return 0;
}

static void assert_text(const struct measured *m, const char *want)
{
	if (!strstr(m->text, want))
		fail_msg("no '%s' in\n%s", want, m->text);
}

static double real_fact(const struct table *t, const char *key)
{
	const struct tpart *p = &t->parts[0];
	for (size_t i = 0; i < p->nfacts; i++)
		if (strcmp(p->facts[i].key, key) == 0)
			return p->facts[i].real;
	fail_msg("no fact %s", key);
	return 0;
}

/* Per step (ms), step time 100 ms: wait, busy and busy's parts
 * (computation, data loading, time outside operators, own communication;
 * no contention measured), then Paddle's communication total and overlap. */
static void assert_rank(const struct measured *m, unsigned r, unsigned steps, double wait,
			double busy, double comp, double data, double outside, double comm,
			double comm_total, double overlap)
{
	const struct trow *row = rank_row(m, r);
	assert_int_equal(row->cells[RC_STEPS].v.count, steps);
	assert_near(row->cells[RC_MEAN].v.ns, 100 * MS);
	assert_near(row->cells[RC_MEDIAN].v.ns, 100 * MS);
	assert_near(row->cells[RC_P95].v.ns, 100 * MS);
	static const unsigned cols[] = {RC_WAIT, RC_BUSY, RC_COMP, RC_DATA, RC_OUTSIDE, RC_COMM,
					RC_COMM_TOTAL, RC_OVERLAP};
	const double want[] = {wait, busy, comp, data, outside, comm, comm_total, overlap};
	for (unsigned i = 0; i < 8; i++)
		assert_near(row->cells[cols[i]].v.ns, want[i] * MS);
	assert_near(wait + comp + data + outside + comm, 100);
	assert_false(row->cells[RC_CONTENTION].set); /* the traces say nothing of it */
}

/* 2 ranks on gloo, rank 1 20 ms slower in matmul, 12 steps, none skipped.
 *  rank 0: matmul [0, 40), c10d::allreduce_ [40, 41), gloo:all_reduce
 *    [40, 95); its all_reduce 55 vs rank 1's 35: wait [40, 60) = 20; busy
 *    80 = computation 40 + own communication [60, 95) 35 + outside 5;
 *    communication in all 55, overlap 0
 *  rank 1: matmul 60, all_reduce [60, 95) = 35: wait 0, busy 100 =
 *    computation 60 + communication 35 + outside 5
 *  straggler: rank 1 in all 12 steps, sign test p = 2^-12 x 2 ranks =
 *    0.00049; busy 100 vs the other's 80: +20, all computation;
 *    rank 0 waits 20 ms per step for it in all_reduce; the job's steps last
 *    100 (the last end to the last end), of which it costs 20: 20 %
 *  collective: 12 calls of 4 MiB; total per rank (12 x 55 + 12 x 35) / 2 =
 *    540, mean 45, wait per rank 240 / 2 = 120; algbw = 4 MiB / 35 ms =
 *    4194304 / 35e6 GB/s, busbw x 2(2-1)/2 = the same */
static void check_two_ranks(const struct measured *m)
{
	assert_rank(m, 0, 12, 20, 80, 40, 0, 5, 35, 55, 0);
	assert_rank(m, 1, 12, 0, 100, 60, 0, 5, 35, 35, 0);
	assert_int_equal(fact(m->ranks, "straggler_rank"), 1);
	assert_int_equal(fact(m->ranks, "straggler_cause"), 0); /* computation */
	assert_int_equal(fact(m->ranks, "straggler_kind"), 1);  /* consistent */
	assert_int_equal(fact(m->ranks, "straggler_steps_held"), 12);
	assert_int_equal(fact(m->ranks, "steps_compared"), 12);
	assert_int_equal(fact(m->ranks, "straggler_excess_ns"), 20 * TB_MS);
	assert_int_equal(fact(m->ranks, "busy_excess_ns"), 20 * TB_MS);
	assert_int_equal(fact(m->ranks, "part_computation_ns"), 20 * TB_MS);
	assert_int_equal(fact(m->ranks, "part_data_loading_ns"), 0);
	assert_int_equal(fact(m->ranks, "part_host_ns"), 0);
	assert_int_equal(fact(m->ranks, "part_communication_ns"), 0);
	assert_int_equal(fact(m->ranks, "part_contention_ns"), 0);
	assert_int_equal(fact(m->ranks, "others_median_busy_ns"), 80 * TB_MS);
	assert_int_equal(fact(m->ranks, "others_wait_ns"), 20 * TB_MS);
	assert_int_equal(fact(m->ranks, "cost_ns"), 20 * TB_MS);
	assert_near(real_fact(m->ranks, "cost_pct"), 20.0);
	assert_near(real_fact(m->ranks, "straggler_p"), 2.0 / 4096);
	assert_int_equal(fact(m->ranks, "collective_calls"), 12);
	assert_int_equal(fact(m->ranks, "mismatches"), 0);
	assert_int_equal(fact(m->ranks, "ended_early"), 0);
	assert_int_equal(fact(m->ranks, "missing_ranks"), 0);
	assert_int_equal(fact(m->ranks, "world_size"), 2);
	assert_string_equal(rank_row(m, 1)->cells[RC_NOTE].v.text, "straggler: computation");
	assert_string_equal(rank_row(m, 0)->cells[RC_NOTE].v.text, "");
	assert_text(m, "Straggler: rank 1 held the job back in 12 of 12 steps (p = 0.00049). Over "
		       "the steps busy 100.00 ms per step vs the others' median 80.00 ms: +20.00 ms = "
		       "computation +20.00; rank 0 waits 20.00 ms per step for it in all_reduce.");
	assert_text(m, "Its cost: the job would take 20.0 % less time per step (20.00 ms of "
		       "100.00 ms) if rank 1 were as fast as the median of the others.");
	const struct tpart *p = &m->colls->parts[0];
	assert_int_equal(p->nrows, 1);
	const struct trow *c = &p->rows[0];
	assert_string_equal(c->cells[CC_OP].v.text, "all_reduce");
	assert_string_equal(c->cells[CC_BACKEND].v.text, "gloo");
	assert_int_equal(c->cells[CC_GROUP].v.count, 2);
	assert_int_equal(c->cells[CC_CALLS].v.count, 12);
	assert_int_equal(c->cells[CC_BYTES].v.bytes, 4 << 20);
	assert_near(c->cells[CC_TOTAL].v.ns, 540 * MS);
	assert_near(c->cells[CC_MEAN].v.ns, 45 * MS);
	assert_near(c->cells[CC_WAIT].v.ns, 120 * MS);
	assert_near(c->cells[CC_ALGBW].v.real, 4194304.0 / 35e6);
	assert_near(c->cells[CC_BUSBW].v.real, 4194304.0 / 35e6);
}

static void test_two_ranks_gloo(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1};
	struct measured m;
	measure(&m, "g2", &tj, 0);
	check_two_ranks(&m);
	assert_int_equal(fact(m.ranks, "wall_clock"), 0);
	assert_text(&m, "Clock: the shared CLOCK_MONOTONIC of host h0");
	assert_text(&m, "the first 0 of its ProfileStep ranges skipped");
	/* the Trace Summary of what the ranks read: both files, all their steps */
	assert_int_equal(m.sum.store.nfiles, 2);
	assert_int_equal(m.sum.steps, 24);
	assert_int_equal(m.sum.from_steps, 1);
	assert_int_equal(m.sum.window_ns, 1200 * TB_MS);
	assert_int_equal(m.sum.events, 2 * 12 * 4);
	measured_free(&m);
}

/* Four steps alone: 4 of 4 steps gives p = 2^-4 x 2 = 0.125, not enough to
 * name anyone (the same excess in 12 steps is named above). */
static void test_too_few_steps_to_be_sure(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 4, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1};
	struct measured m;
	measure(&m, "g4", &tj, 0);
	assert_int_equal(fact(m.ranks, "straggler_rank"), -1);
	assert_int_equal(fact(m.ranks, "candidate_rank"), 1);
	assert_near(real_fact(m.ranks, "straggler_p"), 0.125);
	assert_text(&m, "No straggler: no rank held the job back beyond the noise over 4 compared "
			"steps (the largest cost: rank 1, 20.00 ms per step, 20.0 % of the job's step, "
			"p = 0.12; a straggler costs at least 5 % and p < 0.05).");
	measured_free(&m);
}

/* Issue 26: two steps, the first skipped, leave one counted step per rank;
 * rank 1 is 80 ms busier in it (of a 100 ms step), yet one step has no
 * noise to measure against: no straggler, nor a candidate, and the note says
 * why. Two counted steps say the same. */
static void test_one_counted_step(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 2, .slow_rank = 1, .slow_ms = 80,
			    .killed_rank = -1};
	for (int skip = 1; skip >= 0; skip--) {
		struct measured m;
		measure(&m, skip ? "s2a" : "s2b", &tj, skip);
		size_t want = skip ? 1 : 2;
		assert_int_equal(fact(m.ranks, "steps_compared"), want);
		assert_int_equal(rank_row(&m, 1)->cells[RC_STEPS].v.count, want);
		assert_int_equal(fact(m.ranks, "straggler_rank"), -1);
		assert_int_equal(fact(m.ranks, "candidate_rank"), -1);
		assert_int_equal(fact(m.ranks, "straggler_excess_ns"), 0);
		assert_text(&m, skip ? "No straggler: only 1 step compared across the ranks (at least 3 "
				       "are needed)."
				     : "No straggler: only 2 steps compared across the ranks (at least 3 "
				       "are needed).");
		assert_null(strstr(m.text, "Straggler:"));
		for (unsigned r = 0; r < 2; r++) /* the Note column names none */
			assert_string_equal(rank_row(&m, r)->cells[RC_NOTE].v.text, "");
		measured_free(&m);
	}
}

/* The same job with rank 1 on another host whose clock reads 1000 s more:
 * aligned by the wall offsets, the figures are the same and neither rank
 * ended early (on the raw clocks rank 0 would end 1000 s before rank 1). */
static void test_two_hosts(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1, .hosts = 2};
	struct measured m;
	measure(&m, "h2", &tj, 0);
	check_two_ranks(&m);
	assert_int_equal(fact(m.ranks, "wall_clock"), 1);
	assert_int_equal(fact(m.ranks, "hosts"), 2);
	assert_string_equal(rank_row(&m, 1)->cells[RC_HOST].v.text, "h1");
	assert_text(&m, "Clock: Unix wall time, each trace by its recorded wall clock offset (2 hosts)");
	assert_null(strstr(m.text, "Ended early: rank"));
	measured_free(&m);
}

/* Issue 25: traces that name no host (imported Kineto traces) get a clock
 * line that says so, not "of host " with no name. */
static void test_no_host(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1, .no_host = 1};
	struct measured m;
	measure(&m, "nh", &tj, 0);
	check_two_ranks(&m);
	assert_text(&m, "Clock: a shared CLOCK_MONOTONIC (they name no host)");
	assert_null(strstr(m.text, "of host"));
	measured_free(&m);
}

/* The Trace Summary's note of the traces of m: "2 traces are summarised
 * together, on ...". */
static char *trace_note(const struct measured *m)
{
	struct view_opts o = {.unit = TIME_UNIT_MS};
	struct table *t = view_trace(NULL, &m->sum, &o);
	char *text = render(t, NULL);
	table_free(t);
	return text;
}

/* Issue 26: imported Kineto traces are on the wall clock (CLOCK_REALTIME),
 * not a host's CLOCK_MONOTONIC: both headers say so. */
static void test_realtime_clock(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1, .no_host = 1,
			    .clocks = {"CLOCK_REALTIME", "CLOCK_REALTIME"}};
	struct measured m;
	measure(&m, "rt", &tj, 0);
	check_two_ranks(&m);
	assert_int_equal(fact(m.ranks, "wall_clock"), 0);
	assert_text(&m, "Clock: the wall clock they were recorded on (CLOCK_REALTIME, Unix time)");
	assert_null(strstr(m.text, "MONOTONIC"));
	char *note = trace_note(&m);
	if (!strstr(note, "2 traces are summarised together, on the wall clock they were recorded "
			  "on (CLOCK_REALTIME, Unix") || strstr(note, "MONOTONIC"))
		fail_msg("%s", note);
	free(note);
	measured_free(&m);
}

/* A recorded trace (CLOCK_MONOTONIC) with an imported one (CLOCK_REALTIME),
 * on one host: their clocks differ, so wall time, and the headers say why. */
static void test_mixed_clocks(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1, .clocks = {NULL, "CLOCK_REALTIME"}};
	struct measured m;
	measure(&m, "mc", &tj, 0);
	assert_int_equal(fact(m.ranks, "wall_clock"), 1);
	assert_int_equal(fact(m.ranks, "hosts"), 1);
	assert_text(&m, "Clock: Unix wall time, each trace by its recorded wall clock offset (1 "
			"host, their clocks differ)");
	char *note = trace_note(&m);
	if (!strstr(note, "on Unix wall time, each trace by its recorded wall clock offset (1 host, "))
		fail_msg("%s", note);
	free(note);
	measured_free(&m);
}

/* The same job in one file of a launcher: the ranks from the process table. */
static void test_merged_file(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1, .merged = 1};
	struct measured m;
	measure(&m, "m2", &tj, 0);
	assert_int_equal(m.j.nfiles, 1);
	assert_int_equal(m.j.nparts, 3); /* two ranks and the launcher */
	check_two_ranks(&m);
	assert_int_equal(m.sum.store.nfiles, 1); /* the parts of one file, one row */
	assert_int_equal(m.sum.store.files[0].events, 2 * 12 * 4);
	measured_free(&m);
}

/* 4 ranks on NCCL, rank 2's gemm 20 ms longer, 20 steps, the default skip:
 * 10 skipped, 10 counted.
 *  ranks 0, 1, 3: gemm [5, 55) = computation 50; the NCCL kernel [55, 95),
 *    communication 40; rank 2's kernel lasts 20: wait [55, 75) = 20; own
 *    communication [75, 95) = 20; outside [0, 5) and [95, 100) = 10; busy 80
 *  rank 2: computation 70, communication 20, outside 10, wait 0, busy 100
 *  straggler: rank 2 in 10 of 10 steps, p = 2^-10 x 4 = 0.0039, +20
 *    computation; ranks 0, 1, 3 wait 20 per step
 *  collective: one call per step (the host's nccl:all_reduce and the kernel
 *    it launched), 10 counted, 1 MiB; total per rank (3 x 10 x 40 + 10 x
 *    20) / 4 = 350, mean 1400 / 40 = 35, wait per rank 3 x 10 x 20 / 4 =
 *    150; algbw = 1 MiB / 20 ms, busbw x 2(4-1)/4 = 1.5 */
static void test_four_ranks_nccl(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 4, .steps = 20, .gpu = 1, .slow_rank = 2, .slow_ms = 20,
			    .killed_rank = -1};
	struct measured m;
	measure(&m, "n4", &tj, -1);
	for (unsigned r = 0; r < 4; r++)
		if (r == 2)
			assert_rank(&m, r, 10, 0, 100, 70, 0, 10, 20, 20, 0);
		else
			assert_rank(&m, r, 10, 20, 80, 50, 0, 10, 20, 40, 0);
	assert_int_equal(fact(m.ranks, "straggler_rank"), 2);
	assert_int_equal(fact(m.ranks, "straggler_cause"), 0);
	assert_int_equal(fact(m.ranks, "skip_steps"), 10);
	assert_text(&m, "Straggler: rank 2 held the job back in 10 of 10 steps (p = 0.0039). Over the "
			"steps busy 100.00 ms per step vs the others' median 80.00 ms: +20.00 ms = "
			"computation +20.00; ranks 0, 1, 3 wait 20.00 ms per step for it in all_reduce.");
	assert_text(&m, "the first 10 of its ProfileStep ranges skipped, never more than half");
	const struct trow *c = &m.colls->parts[0].rows[0];
	assert_int_equal(m.colls->parts[0].nrows, 1);
	assert_string_equal(c->cells[CC_OP].v.text, "all_reduce");
	assert_string_equal(c->cells[CC_BACKEND].v.text, "nccl");
	assert_int_equal(c->cells[CC_GROUP].v.count, 4);
	assert_int_equal(c->cells[CC_CALLS].v.count, 10);
	assert_int_equal(c->cells[CC_BYTES].v.bytes, 1 << 20);
	assert_near(c->cells[CC_TOTAL].v.ns, 350 * MS);
	assert_near(c->cells[CC_MEAN].v.ns, 35 * MS);
	assert_near(c->cells[CC_WAIT].v.ns, 150 * MS);
	assert_near(c->cells[CC_ALGBW].v.real, 1048576.0 / 20e6);
	assert_near(c->cells[CC_BUSBW].v.real, 1.5 * 1048576.0 / 20e6);
	measured_free(&m);
}

/* 4 balanced ranks on gloo, each step's matmul 40 + (k + r) % 3 ms, 12
 * steps: at step k the all_reduce lasts 55 - j, the fastest 53, so rank r
 * waits 2 - j and is busy 98 + j: 99 on average on every rank. The rank of
 * the longest matmul changes from step to step: no straggler. */
static void test_balanced(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 4, .steps = 12, .slow_rank = -1, .jitter = 1,
			    .killed_rank = -1};
	struct measured m;
	measure(&m, "b4", &tj, 0);
	for (unsigned r = 0; r < 4; r++) {
		const struct trow *row = rank_row(&m, r);
		assert_near(row->cells[RC_BUSY].v.ns, 99 * MS);
		assert_near(row->cells[RC_WAIT].v.ns, 1 * MS);
		assert_near(row->cells[RC_COMP].v.ns, 41 * MS);
	}
	assert_int_equal(fact(m.ranks, "straggler_rank"), -1);
	assert_text(&m, "No straggler: no rank held the job back beyond the noise over 12 compared "
			"steps");
	assert_null(strstr(m.text, "Straggler: rank"));
	measured_free(&m);
}

/* The two-rank job with two buckets per step, reduced at once on two
 * threads: each of rank 0's calls waits 20 ms, at the same time, so its
 * wait per step is 20 (the union), not 40; the rest as in the job with one
 * bucket. The collectives' table sums per call: 24 calls, wait per rank
 * 24 x 20 / 2 = 240, total per rank (24 x 55 + 24 x 35) / 2 = 1080. */
static void test_concurrent_calls(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1, .concurrent = 1};
	struct measured m;
	measure(&m, "c2", &tj, 0);
	assert_rank(&m, 0, 12, 20, 80, 40, 0, 5, 35, 55, 0);
	assert_rank(&m, 1, 12, 0, 100, 60, 0, 5, 35, 35, 0);
	assert_int_equal(fact(m.ranks, "straggler_rank"), 1);
	assert_int_equal(fact(m.ranks, "collective_calls"), 24);
	const struct trow *c = &m.colls->parts[0].rows[0];
	assert_int_equal(c->cells[CC_CALLS].v.count, 24);
	assert_near(c->cells[CC_WAIT].v.ns, 240 * MS);
	assert_near(c->cells[CC_TOTAL].v.ns, 1080 * MS);
	measured_free(&m);
}

/* 2 ranks, rank 0 15 ms longer in a Dataloader range before its matmul:
 *  rank 0: Dataloader [0, 15), matmul [15, 55), all_reduce [55, 95) = 40
 *  rank 1: matmul [0, 40), all_reduce [40, 95) = 55: waits [40, 55) = 15,
 *    busy 85
 * rank 0's excess 15: data loading +15; its computation (40), time outside
 * operators (5) and own communication (40) are rank 1's. */
static void test_slow_data_loading(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 0, .slow_ms = 15,
			    .slow_dataloader = 1, .killed_rank = -1};
	struct measured m;
	measure(&m, "d2", &tj, 0);
	assert_rank(&m, 0, 12, 0, 100, 40, 15, 5, 40, 40, 0);
	assert_rank(&m, 1, 12, 15, 85, 40, 0, 5, 40, 55, 0);
	assert_int_equal(fact(m.ranks, "straggler_rank"), 0);
	assert_int_equal(fact(m.ranks, "straggler_cause"), 1);
	assert_int_equal(fact(m.ranks, "straggler_excess_ns"), 15 * TB_MS);
	assert_text(&m, "Straggler: rank 0 held the job back in 12 of 12 steps (p = 0.00049). Over "
			"the steps busy 100.00 ms per step vs the others' median 85.00 ms: +15.00 ms = "
			"data loading +15.00; rank 1 waits 15.00 ms per step for it in all_reduce.");
	measured_free(&m);
}

/* 4 balanced ranks, rank 3 killed after 2 of 4 steps (its process ends at
 * 200 ms, the others' at 401): named as ended early, 201 ms before the
 * others; the ranks compare the 2 steps all of them have: too few. */
static void test_ended_early(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 4, .steps = 4, .slow_rank = -1, .killed_rank = 3,
			    .killed_steps = 2};
	struct measured m;
	measure(&m, "k4", &tj, 0);
	assert_int_equal(fact(m.ranks, "ended_early"), 1);
	assert_int_equal(fact(m.ranks, "straggler_rank"), -1);
	assert_int_equal(fact(m.ranks, "steps_compared"), 2);
	assert_int_equal(rank_row(&m, 3)->cells[RC_STEPS].v.count, 2);
	assert_string_equal(rank_row(&m, 3)->cells[RC_NOTE].v.text, "ended early");
	assert_string_equal(rank_row(&m, 2)->cells[RC_NOTE].v.text, "");
	assert_near(rank_row(&m, 3)->cells[RC_ENDED].v.ns, 200 * MS);
	assert_text(&m, "No straggler: only 2 steps compared across the ranks (at least 3 are needed).");
	assert_text(&m, "Ended early: rank 3 at 200.00 ms into the job (killed: died without "
			"exiting), 201.00 ms before the others on average.");
	measured_free(&m);
}

/* 4 ranks, rank 2 killed after 2 steps, rank 0 stopped by SIGTERM 10 ms
 * later (its launcher stopping the job): both ended early, and the notes
 * name them in the order they ended, rank 2 the first. */
static void test_ended_first(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 4, .steps = 4, .slow_rank = -1, .killed_rank = 2,
			    .killed_steps = 2, .stopped_rank = 3};
	struct measured m;
	measure(&m, "f4", &tj, 0);
	assert_int_equal(fact(m.ranks, "ended_early"), 2);
	assert_int_equal(fact(m.ranks, "first_ended_rank"), 2);
	assert_text(&m, "Ended early: rank 2, the first to end, at 200.00 ms into the job (killed: died "
			"without exiting), ");
	assert_text(&m, "Ended early: rank 3, after it, at 210.00 ms into the job (killed by signal "
			"15), ");
	assert_true(strstr(m.text, "Ended early: rank 2") < strstr(m.text, "Ended early: rank 3"));
	measured_free(&m);
}

/* One rank's trace alone: Paddle's table, over its 4 steps (400 ms), its
 * host communication counted: communication 4 x 55 = 220 (the all_reduce
 * and the c10d op it overlaps), computation 4 x 40 = 160, overlap 0. A
 * host-only trace with no communication has no data. */
static void test_one_rank(void **state)
{
	(void)state;
	char paths[8][512];
	struct tb_job tj = {.ranks = 2, .steps = 4, .slow_rank = -1, .killed_rank = -1};
	tb_job_write("o2", &tj, paths);
	char *argv[] = {paths[0]};
	struct job j;
	char err[512];
	assert_int_equal(job_open(&j, 1, argv, 0, err, sizeof(err)), 0);
	struct summary_opts so = {.nviews = 0};
	assert_int_equal(summary_is_job(&j, &so), 0);
	struct analysis a;
	analysis_init(&a);
	assert_int_equal(job_load_all(&j, &a, err, sizeof(err)), 0);
	struct view_opts o = {.unit = TIME_UNIT_MS};
	const struct view *v = view_find("distributed");
	struct table *t = v->build(v, &a, &o);
	const struct tpart *p = &t->parts[0];
	assert_int_equal(p->nrows, 4);
	assert_string_equal(p->rows[0].cells[0].v.text, "ProfileStep");
	assert_near(p->rows[0].cells[1].v.ns, 400 * MS);
	assert_string_equal(p->rows[1].cells[0].v.text, "Communication");
	assert_near(p->rows[1].cells[1].v.ns, 220 * MS);
	assert_near(p->rows[1].cells[2].v.pct, 55.0);
	assert_string_equal(p->rows[2].cells[0].v.text, "Computation");
	assert_near(p->rows[2].cells[1].v.ns, 160 * MS);
	assert_near(p->rows[3].cells[1].v.ns, 0);
	char *text = render(t, NULL);
	assert_non_null(strstr(text, "the host's communication calls"));
	assert_null(strstr(text, "Straggler"));
	free(text);
	table_free(t);
	assert_int_equal(a.host_comm.calls, 8); /* 4 all_reduces, 4 c10d ops */
	assert_int_equal(a.host_comm.merged_ns, 220 * TB_MS);
	analysis_free(&a);
	job_free(&j);

	const char *plain = tb_perf_a();
	analysis_init(&a);
	assert_int_equal(analysis_load(&a, plain, err, sizeof(err)), 0);
	analysis_prepare(&a);
	t = v->build(v, &a, &o);
	assert_string_equal(t->empty, "No data: this trace has no GPU work and no communication.");
	table_free(t);
	analysis_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_ranks_gloo),
		cmocka_unit_test(test_too_few_steps_to_be_sure),
		cmocka_unit_test(test_one_counted_step),
		cmocka_unit_test(test_two_hosts),
		cmocka_unit_test(test_no_host),
		cmocka_unit_test(test_realtime_clock),
		cmocka_unit_test(test_mixed_clocks),
		cmocka_unit_test(test_merged_file),
		cmocka_unit_test(test_four_ranks_nccl),
		cmocka_unit_test(test_balanced),
		cmocka_unit_test(test_concurrent_calls),
		cmocka_unit_test(test_slow_data_loading),
		cmocka_unit_test(test_ended_early),
		cmocka_unit_test(test_ended_first),
		cmocka_unit_test(test_one_rank),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
