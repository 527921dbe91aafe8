/*
 * test_advise_dist.c - the rules of a job's ranks (rules_dist.c): the
 * straggler (the Distributed view's verdict, word for word the same rank
 * and cost) and exposed communication (a job's ranks, and one program with
 * GPU communication). The jobs are tracebuild.h's tb_job and a gloo job of
 * this file whose communication is a set share of the step; every number is
 * worked out in the comment above its test. Times in ms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/advise/advise.h"
#include "lib/analysis/advise/rules.h"
#include "lib/analysis/dist/dist.h"
#include "lib/analysis/dist/job.h"
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_near(double x, double want)
{
	if (fabs(x - want) > 1e-6 * (fabs(want) + 1))
		fail_msg("%.9g != %.9g", x, want);
}

static void assert_evidence(const struct adv_finding *f, unsigned k, const char *want)
{
	if (k >= f->nevidence)
		fail_msg("no evidence %u (of %u): want '%s'", k, f->nevidence, want);
	if (strcmp(f->evidence[k], want) != 0)
		fail_msg("evidence %u:\n got '%s'\nwant '%s'", k, f->evidence[k], want);
}

/* A job as `gprof-dl advise RANKFILES` sees it: the files as one program
 * (a), and the job measured rank by rank (d), no step skipped. */
struct advised {
	char paths[8][512];
	const char *p[8];
	unsigned n;
	struct job j;
	struct analysis a, sum;
	struct job_dist *d;
	struct adv_input in;
	struct adv_list l;
};

static void advise_job(struct advised *m)
{
	char *argv[8], err[512];
	for (unsigned i = 0; i < m->n; i++)
		argv[i] = m->paths[i], m->p[i] = m->paths[i];
	if (job_open(&m->j, (int)m->n, argv, 0, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_init(&m->sum);
	m->d = job_dist_measure(&m->j, 0, &m->sum, "measured", err, sizeof(err));
	if (!m->d)
		fail_msg("%s", err);
	tb_prepare(&m->a, m->p, m->n);
	adv_input_init(&m->in, &m->a, m->d, m->p, (int)m->n, 0);
	memset(&m->l, 0, sizeof(m->l));
	adv_run(&m->in, &m->l);
}

static void advised_free(struct advised *m)
{
	adv_list_free(&m->l);
	job_dist_free(m->d);
	analysis_free(&m->sum);
	analysis_free(&m->a);
	job_free(&m->j);
}

/* The finding of rule r, or NULL; at most one. */
static const struct adv_finding *finding(const struct adv_list *l, const struct adv_rule *r)
{
	const struct adv_finding *f = NULL;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].rule == r) {
			assert_null(f);
			f = &l->v[i];
		}
	return f;
}

/* The findings as text fit 100 columns (the header line is advise.c's) and
 * name rule id; ADVISE_SHOW=1 prints them. */
static void assert_text_fits(const struct adv_input *in, const struct adv_list *l, const char *id)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_int_equal(adv_write_text(out, in, l, 0, 100), 0);
	fclose(out);
	if (getenv("ADVISE_SHOW"))
		fputs(buf, stderr);
	for (char *line = strchr(buf, '\n') + 1, *end; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line) - 1;
		if (end - line > 100)
			fail_msg("a line over 100 columns: %.*s", (int)(end - line), line);
	}
	assert_non_null(strstr(buf, id));
	free(buf);
}

/* ---- straggler ------------------------------------------------------------------------ */

/* test_distributed.c's two-rank gloo job: rank 1 20 ms longer in matmul, 12
 * steps. The view names rank 1, computation, consistent, held in 12 of 12
 * steps, p = 2^-12 x 2 = 0.00049, busy 100 vs 80, rank 0 waits 20 per step;
 * cost 20 ms of the job's 100 ms step: the saving, 20 % of the median step
 * (every step of both ranks lasts 100 ms): HIGH. */
static void test_straggler_named(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1};
	struct advised m;
	m.n = tb_job_write("s2", &tj, m.paths);
	advise_job(&m);
	const struct dist_verdict *v = &m.d->v;
	assert_int_equal(v->code, DIST_NAMED);
	const struct adv_finding *f = finding(&m.l, &adv_rule_straggler);
	assert_non_null(f);
	/* the view's verdict, the same figures */
	assert_int_equal(m.j.ranks[v->cand].rank, 1);
	assert_near(f->saving_ns, v->cost);
	assert_near(f->saving_ns, 20 * TB_MS);
	assert_int_equal(m.in.step_ns, 100 * TB_MS);
	assert_near(f->share, 20.0);
	assert_int_equal(f->severity, ADV_HIGH);
	assert_string_equal(f->what, "rank 1 held the job back in 12 of 12 steps (consistent), by "
				     "computation: the job would take 20.00 ms less per step "
				     "were it as fast as the others' median");
	assert_evidence(f, 0, "rank 1; cause: computation (+20.00 ms per step of its excess of "
			      "+20.00 ms)");
	assert_evidence(f, 1, "consistent straggler, p = 0.00049 (sign tests over 12 compared steps, "
			      "Bonferroni over 2 ranks)");
	assert_evidence(f, 2, "held the job back in 12 of 12 steps: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, "
			      "10, 11");
	assert_evidence(f, 3, "busy 100.00 ms per step against the others' median 80.00 ms; the "
			      "others wait 20.00 ms per step for it");
	assert_evidence(f, 4, "its cost: 20.00 ms of the job's mean step of 100.00 ms (20.0 %)");
	assert_non_null(strstr(f->try_this, "computes longer"));
	assert_non_null(strstr(f->command, "--view distributed"));
	assert_text_fits(&m.in, &m.l, "straggler");
	advised_free(&m);
}

/* test_distributed.c's job whose rank 0 loads data 15 ms longer: the view
 * names rank 0 by data loading, cost 15 ms; what to try is about loading. */
static void test_straggler_data(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 12, .slow_rank = 0, .slow_ms = 15,
			    .slow_dataloader = 1, .killed_rank = -1};
	struct advised m;
	m.n = tb_job_write("sd2", &tj, m.paths);
	advise_job(&m);
	assert_int_equal(m.d->v.code, DIST_NAMED);
	const struct adv_finding *f = finding(&m.l, &adv_rule_straggler);
	assert_non_null(f);
	assert_near(f->saving_ns, m.d->v.cost);
	assert_near(f->saving_ns, 15 * TB_MS);
	assert_evidence(f, 0, "rank 0; cause: data loading (+15.00 ms per step of its excess of "
			      "+15.00 ms)");
	assert_non_null(strstr(f->try_this, "num_workers"));
	advised_free(&m);
}

/* test_distributed.c's 4 balanced ranks with jitter: the view names nobody,
 * and neither does advise. */
static void test_straggler_balanced(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 4, .steps = 12, .slow_rank = -1, .jitter = 1,
			    .killed_rank = -1};
	struct advised m;
	m.n = tb_job_write("sb4", &tj, m.paths);
	advise_job(&m);
	assert_int_not_equal(m.d->v.code, DIST_NAMED);
	assert_null(finding(&m.l, &adv_rule_straggler));
	advised_free(&m);
}

/* Four steps only: the same excess as test_straggler_named, but p = 0.125:
 * the view names nobody (too few steps to be sure), nor does advise. */
static void test_straggler_unsure(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 4, .slow_rank = 1, .slow_ms = 20,
			    .killed_rank = -1};
	struct advised m;
	m.n = tb_job_write("su2", &tj, m.paths);
	advise_job(&m);
	assert_int_equal(m.d->v.code, DIST_NOISE);
	assert_null(finding(&m.l, &adv_rule_straggler));
	advised_free(&m);
}

/* ---- exposed-communication ------------------------------------------------------------ */

/*
 * A balanced gloo job: ranks 0 and 1 (pids 200, 201), 8 steps of 100 ms, in
 * each from its start s: main: ProfileStep [s, s+100), matmul [s, s+c),
 * c10d::allreduce_ [s+c, s+c+1); gloo thread: gloo:all_reduce [s+c, s+95)
 * (seq k, group "0", 4 MiB), c = 95 - comm_ms. Both ranks alike: no wait;
 * each rank's own communication, not overlapped, is comm_ms per step,
 * computation c, outside operators 5.
 */
static unsigned comm_job(const char *name, unsigned comm_ms, char (*paths)[512])
{
	const int64_t wall = 1700000000000000000LL;
	for (unsigned r = 0; r < 2; r++) {
		struct tb b;
		char file[64];
		uint32_t pid = 200 + r;
		snprintf(file, sizeof(file), "%s-%u.gpdl", name, r);
		tb_open_rank(&b, file, "h0", pid, 0, (int32_t)r, 2, wall);
		tb_thread_of(&b, 0, pid, pid, "main");
		tb_thread_of(&b, 1, pid, pid + 1, "gloo");
		uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
		uint32_t matmul = tb_desc(&b, "matmul", TRACE_EV_OPERATOR);
		uint32_t enq = tb_desc(&b, "c10d::allreduce_", TRACE_EV_OPERATOR);
		uint32_t ar = tb_desc(&b, "gloo:all_reduce", TRACE_EV_COMMUNICATION);
		uint64_t c = (95 - comm_ms) * TB_MS;
		for (unsigned k = 0; k < 8; k++) {
			uint64_t s = k * 100 * TB_MS;
			tb_range(&b, 0, matmul, s, c);
			tb_range(&b, 0, enq, s + c, TB_MS);
			tb_range(&b, 0, step, s, 100 * TB_MS);
			tb_comm(&b, 1, ar, s + c, comm_ms * TB_MS, "0", k, 4ull << 20, 2);
		}
		tb_process(&b, pid, 1, 0, 801 * TB_MS, 0, (int32_t)r, 2);
		snprintf(paths[r], 512, "%s", tb_close(&b, 802 * TB_MS));
	}
	return 2;
}

/* 20 ms of each 100 ms step: the median over the 2 ranks 20 ms, 20 % of the
 * step, over 10 %: the finding, saving 20 ms (HIGH); one collective row:
 * 8 calls of 4 MiB, 8 x 20 = 160 ms per rank, no wait; overlap 0. No
 * straggler (the ranks are the same). */
static void test_exposed_job(void **state)
{
	(void)state;
	struct advised m;
	m.n = comm_job("e20", 20, m.paths);
	advise_job(&m);
	assert_int_equal(m.in.step_ns, 100 * TB_MS);
	assert_near(m.d->r[0].part[DIST_COMM], 20 * TB_MS);
	assert_near(m.d->r[1].part[DIST_COMM], 20 * TB_MS);
	const struct adv_finding *f = finding(&m.l, &adv_rule_exposed_comm);
	assert_non_null(f);
	assert_near(f->saving_ns, 20 * TB_MS);
	assert_near(f->share, 20.0);
	assert_int_equal(f->severity, ADV_HIGH);
	assert_string_equal(f->what, "communication not overlapped with computation takes 20.00 ms "
				     "per step (20.0 % of the step), the median over 2 ranks");
	assert_evidence(f, 0, "exposed communication per step: median 20.00 ms, from 20.00 ms to "
			      "20.00 ms over the ranks (the Distributed view's Communication column: "
			      "not overlapped, not waiting)");
	assert_evidence(f, 1, "overlap: 0.0 % of all communication ran while computation did");
	assert_evidence(f, 2, "all_reduce (gloo, group of 2): 8 calls, 4.19 MB per call, "
			      "160.00 ms per rank in all, none of it waiting");
	assert_int_equal(f->nevidence, 3);
	assert_non_null(strstr(f->try_this, "bucket_cap_mb"));
	assert_null(finding(&m.l, &adv_rule_straggler));
	assert_text_fits(&m.in, &m.l, "exposed-communication");
	advised_free(&m);
}

/* 5 ms of each step, 5 %: below 10 %, no finding. */
static void test_exposed_job_small(void **state)
{
	(void)state;
	struct advised m;
	m.n = comm_job("e5", 5, m.paths);
	advise_job(&m);
	assert_near(m.d->r[0].part[DIST_COMM], 5 * TB_MS);
	assert_null(finding(&m.l, &adv_rule_exposed_comm));
	assert_null(finding(&m.l, &adv_rule_straggler));
	advised_free(&m);
}

/* One program with GPU communication: rank 0 of tb_job's NCCL job given
 * alone (no job: in->d NULL). Each 100 ms step: gemm [s+5, s+55) on stream
 * 7, the NCCL kernel [s+55, s+95) on stream 8: communication 40, none of it
 * overlapped: 40 ms per step, 40 % of the step, saving 40 ms. */
static void test_exposed_program(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 2, .steps = 4, .gpu = 1, .slow_rank = -1, .killed_rank = -1};
	char paths[8][512];
	tb_job_write("n2", &tj, paths);
	const char *p[1] = {paths[0]};
	struct analysis a;
	tb_prepare(&a, p, 1);
	struct adv_input in;
	adv_input_init(&in, &a, NULL, p, 1, 0);
	struct adv_list l = {0};
	adv_run(&in, &l);
	const struct adv_finding *f = finding(&l, &adv_rule_exposed_comm);
	assert_non_null(f);
	assert_near(f->saving_ns, 40 * TB_MS);
	assert_near(f->share, 40.0);
	assert_evidence(f, 0, "over 4 steps: communication 160.00 ms, computation 200.00 ms, overlap "
			      "0.0 us (0.0 % of the communication)");
	assert_evidence(f, 1, "ncclDevKernel_AllReduce_Sum_f32_RING_LL: 4 runs, 160.00 ms in all");
	assert_null(finding(&l, &adv_rule_straggler));
	adv_list_free(&l);
	analysis_free(&a);
}

/* The golden GPU trace: communication (the NCCL kernel [8400, 11400)
 * clipped to step 1) 2600 ns, computation 5200, overlap 1200 (adam_kernel
 * and fill): 1400 exposed over 2 steps, 700 ns per step = 7.8 % of the
 * median step 9000: below 10 %, no finding. */
static void test_exposed_golden(void **state)
{
	(void)state;
	const char *p[1] = {tb_gpu_trace()};
	struct analysis a;
	tb_prepare(&a, p, 1);
	struct dist_src src;
	dist_sources(&a, &src);
	uint64_t comm, comp, overlap;
	dist_program_fig(&a, &src, &comm, &comp, &overlap);
	assert_int_equal(comm, 2600);
	assert_int_equal(comp, 5200);
	assert_int_equal(overlap, 1200);
	struct adv_input in;
	adv_input_init(&in, &a, NULL, p, 1, 0);
	struct adv_list l = {0};
	adv_rule_exposed_comm.run(&in, &l);
	assert_int_equal(l.n, 0);
	adv_list_free(&l);
	analysis_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_straggler_named),
		cmocka_unit_test(test_straggler_data),
		cmocka_unit_test(test_straggler_balanced),
		cmocka_unit_test(test_straggler_unsure),
		cmocka_unit_test(test_exposed_job),
		cmocka_unit_test(test_exposed_job_small),
		cmocka_unit_test(test_exposed_program),
		cmocka_unit_test(test_exposed_golden),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
