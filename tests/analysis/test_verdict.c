/*
 * test_verdict.c - the straggler rule (lib/analysis/dist/verdict.h) on
 * synthetic jobs, many seeds each: how often it names a rank in a balanced
 * job (false claims), quiet and beside bursts of CPU contention, and how
 * often it names the right rank with the right cause when one is slow
 * (consistently, every 4th step, with one long stall, in few steps), and
 * that the parts of the excess always add up to it. Also the binomial tail
 * and hand-worked cases.
 *
 * The model of a synchronous job (times in ms): rank r's busy time in step
 * g is BASE + its parts' noise (computation jitter N(0, JIT), a little time
 * outside operators), plus what the case adds; the step ends when the
 * slowest rank is done, so each rank waits max busy - its busy; the job's
 * step is max busy + 1 ms of transfer. CPU contention (bursty): a burst
 * hits one rank at random for 1 to 5 steps, U(5, 60) ms a step, and either
 * adds to its busy time, of which the schedstat sampling sees 90 % as
 * contention and the rest lands in computation (a measurement that is not
 * perfect), or (half the bursts) keeps it off the CPU inside the step's
 * collective: every other rank's transfer takes that much longer, and the
 * rank's own run-queue time is that much, of which what fits in its busy
 * time is read as contention there (as dist.c carves it), the rest fell in
 * what reads as its wait.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/dist/verdict.h"
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1e6
#define BASE 25.0
#define JIT 0.5
#define SEEDS 300

enum slow { SLOW_NONE, SLOW_COMP, SLOW_DATA, SLOW_EVERY4, SLOW_STALL, SLOW_HOST, SLOW_SMALL };

struct job {
	uint32_t n;
	size_t k;
	double *busy, *part, *wait, *job_step, *runq;
};

static double uni(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* A job of n ranks and k steps, rank 1 slowed as slow says by ms, bursts
 * of contention when loaded. */
static void make_job(struct job *j, uint32_t n, size_t k, enum slow slow, double ms, int loaded,
		     uint64_t seed)
{
	j->n = n;
	j->k = k;
	j->busy = calloc(n * k, sizeof(double));
	j->part = calloc(n * k * DIST_NPARTS, sizeof(double));
	j->wait = calloc(n * k, sizeof(double));
	j->job_step = calloc(k, sizeof(double));
	j->runq = calloc(n * k, sizeof(double));
	uint64_t st = seed * 7919 + 17;
	int burst_rank = -1, burst_left = 0, in_call = 0;
	double burst_ms = 0;
	for (size_t g = 0; g < k; g++) {
		if (loaded && burst_left == 0 && uni(&st) < 0.3) {
			burst_rank = (int)(uni(&st) * n);
			burst_left = 1 + (int)(uni(&st) * 5);
			burst_ms = 5 + 55 * uni(&st);
			in_call = uni(&st) < 0.25;
		}
		double top = 0;
		for (uint32_t r = 0; r < n; r++) {
			double *p = &j->part[(r * k + g) * DIST_NPARTS];
			p[DIST_COMP] = BASE - 2 + JIT * tb_gauss(&st);
			p[DIST_HOST] = 2 + 0.1 * fabs(tb_gauss(&st));
			p[DIST_COMM] = 0.2;
			if (r == 1) {
				if (slow == SLOW_COMP || (slow == SLOW_STALL))
					p[DIST_COMP] += ms;
				else if (slow == SLOW_DATA)
					p[DIST_DATA] += ms;
				else if (slow == SLOW_HOST)
					p[DIST_HOST] += ms;
				else if (slow == SLOW_EVERY4 && g % 4 == 3)
					p[DIST_COMP] += ms;
				if (slow == SLOW_EVERY4) /* and a little busier always, as real ranks are */
					p[DIST_HOST] += 0.5;
				if (slow == SLOW_STALL && g == k / 3)
					p[DIST_HOST] += 1500;
				if (slow == SLOW_SMALL) /* busier every step, within the noise */
					p[DIST_HOST] += ms;
			}
			if (burst_left && (int)r == burst_rank && !in_call) {
				p[DIST_CONTENTION] += 0.9 * burst_ms;
				p[DIST_COMP] += 0.1 * burst_ms;
			}
			if (burst_left && in_call && (int)r != burst_rank)
				p[DIST_COMM] += burst_ms;
			j->runq[r * k + g] = p[DIST_CONTENTION];
			if (burst_left && in_call && (int)r == burst_rank) {
				static const enum dist_part own[] = {DIST_COMP, DIST_DATA, DIST_HOST,
								     DIST_COMM};
				double total = 0;
				for (int q = 0; q < 4; q++)
					total += p[own[q]];
				double take = fmin(burst_ms, total);
				for (int q = 0; q < 4; q++)
					p[own[q]] -= take * p[own[q]] / total;
				p[DIST_CONTENTION] += take;
				j->runq[r * k + g] = burst_ms;
			}
			double b = 0;
			for (int q = 0; q < DIST_NPARTS; q++)
				b += p[q];
			j->busy[r * k + g] = b;
			top = b > top ? b : top;
		}
		if (burst_left)
			burst_left--;
		for (uint32_t r = 0; r < n; r++)
			j->wait[r * k + g] = top - j->busy[r * k + g];
		j->job_step[g] = top + 1;
	}
	for (size_t i = 0; i < n * k; i++) {
		j->busy[i] *= MS;
		j->wait[i] *= MS;
		j->runq[i] *= MS;
		for (int q = 0; q < DIST_NPARTS; q++)
			j->part[i * DIST_NPARTS + q] *= MS;
	}
	for (size_t g = 0; g < k; g++)
		j->job_step[g] *= MS;
}

static void job_free(struct job *j)
{
	free(j->busy);
	free(j->part);
	free(j->wait);
	free(j->job_step);
	free(j->runq);
}

static void verdict_of(struct dist_verdict *v, const struct job *j)
{
	struct dist_steps_in in = {j->n, j->k, j->busy, j->part, j->wait, j->job_step, j->runq};
	dist_verdict_compute(v, &in);
	if (v->cand >= 0) { /* the parts always add up to the excess */
		double sum = 0;
		for (int q = 0; q < DIST_NPARTS; q++)
			sum += v->part[q];
		if (fabs(sum - v->excess) > 1e-6 * (fabs(v->excess) + 1))
			fail_msg("parts %.3f != excess %.3f", sum, v->excess);
	}
}

struct rates {
	unsigned named_right, right_cause, wrong, contention, named_other_cause;
};

static struct rates run(uint32_t n, size_t k, enum slow slow, double ms, int loaded,
			enum dist_part cause, enum dist_kind kind)
{
	struct rates x = {0};
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct job j;
		make_job(&j, n, k, slow, ms, loaded, seed);
		struct dist_verdict v;
		verdict_of(&v, &j);
		if (v.code == DIST_NAMED) {
			if (v.cause == DIST_CONTENTION)
				x.contention++;
			else
				x.named_other_cause++;
			if (v.cand == 1 && slow != SLOW_NONE) {
				x.named_right++;
				x.right_cause += v.cause == cause && v.kind == kind;
			} else if (v.cause != DIST_CONTENTION) {
				x.wrong++;
			}
		}
		dist_verdict_free(&v);
		job_free(&j);
	}
	return x;
}

static void print(const char *what, const struct rates *x)
{
	printf("%-34s of %d: named right %3u, right cause and kind %3u, wrong %u, contention %u\n",
	       what, SEEDS, x->named_right, x->right_cause, x->wrong, x->contention);
}

/* Balanced: quiet, never a straggler; loaded, never one by anything but
 * contention. 2 and 4 ranks. */
static void test_balanced(void **state)
{
	(void)state;
	for (uint32_t n = 2; n <= 4; n += 2) {
		struct rates q = run(n, 30, SLOW_NONE, 0, 0, DIST_COMP, DIST_KIND_CONSISTENT);
		struct rates l = run(n, 30, SLOW_NONE, 0, 1, DIST_COMP, DIST_KIND_CONSISTENT);
		print(n == 2 ? "balanced, 2 ranks, quiet" : "balanced, 4 ranks, quiet", &q);
		print(n == 2 ? "balanced, 2 ranks, loaded" : "balanced, 4 ranks, loaded", &l);
		assert_int_equal(q.named_other_cause + q.contention, 0);
		assert_int_equal(l.named_other_cause, 0);
	}
	/* rank 1 busier by 1 ms (4 %) in every step, and one burst of
	 * contention-free noise: real, but neither material nor beyond the
	 * noise in a typical step; beside the load, in at most 1 % of the
	 * seeds, named for it (the truth, its cost pushed over 5 % by the
	 * bursts) */
	struct rates q = run(2, 30, SLOW_SMALL, 1, 0, DIST_HOST, DIST_KIND_CONSISTENT);
	struct rates l = run(2, 30, SLOW_SMALL, 1, 1, DIST_HOST, DIST_KIND_CONSISTENT);
	print("rank 1 +1 ms outside, quiet", &q);
	print("rank 1 +1 ms outside, loaded", &l);
	assert_int_equal(q.named_right + q.contention, 0);
	assert_true(l.named_other_cause <= SEEDS / 100);
}

/* Slowed: named with the right cause and kind in at least 99 % of the
 * seeds quiet, 95 % loaded (90 % for every 4th step: of its 30 steps 8 are
 * slowed, and the steps where a burst could make the excess, about half,
 * say nothing of its own work); 10 steps beside the load is printed, and
 * named right in 45 % (too few steps to be sure when bursts hit half of
 * them). */
static void test_slowed(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		enum slow slow;
		double ms;
		size_t k;
		enum dist_part cause;
		enum dist_kind kind;
	} cases[] = {
		{"computation +20", SLOW_COMP, 20, 30, DIST_COMP, DIST_KIND_CONSISTENT},
		{"data loading +25", SLOW_DATA, 25, 30, DIST_DATA, DIST_KIND_CONSISTENT},
		{"outside operators +25", SLOW_HOST, 25, 30, DIST_HOST, DIST_KIND_CONSISTENT},
		{"computation +80 every 4th", SLOW_EVERY4, 80, 30, DIST_COMP, DIST_KIND_INTERMITTENT},
		{"computation +20, a 1.5 s stall", SLOW_STALL, 20, 30, DIST_COMP, DIST_KIND_CONSISTENT},
		{"computation +20, 10 steps", SLOW_COMP, 20, 10, DIST_COMP, DIST_KIND_CONSISTENT},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int loaded = 0; loaded < 2; loaded++) {
			char what[128];
			snprintf(what, sizeof(what), "%s, %s", cases[c].what, loaded ? "loaded" : "quiet");
			struct rates x = run(2, cases[c].k, cases[c].slow, cases[c].ms, loaded,
					     cases[c].cause, cases[c].kind);
			print(what, &x);
			assert_int_equal(x.wrong, 0);
			unsigned want = !loaded			  ? SEEDS * 99 / 100
					: cases[c].k < 30		  ? SEEDS * 45 / 100
					: cases[c].slow == SLOW_EVERY4 ? SEEDS * 90 / 100
									  : SEEDS * 95 / 100;
			if (x.right_cause < want)
				fail_msg("%s: right in %u of %d", what, x.right_cause, SEEDS);
		}
}

/* By hand: rank 1 +20 ms in every step of 12 (no noise): named in 12 of 12
 * steps, p = 2 x 2^-12; its excess 20, all computation; the stall of
 * one step left out of the figures but not of the cost. */
static void test_by_hand(void **state)
{
	(void)state;
	struct job j;
	make_job(&j, 2, 12, SLOW_STALL, 20, 0, 1);
	struct dist_verdict v;
	verdict_of(&v, &j);
	assert_int_equal(v.code, DIST_NAMED);
	assert_int_equal(v.cand, 1);
	assert_int_equal(v.kind, DIST_KIND_CONSISTENT);
	assert_int_equal(v.cause, DIST_COMP);
	assert_int_equal(v.nheld, 12);
	assert_int_equal(v.outliers, 1);
	assert_false(v.in[4]); /* the stall's step */
	assert_true(fabs(v.p - 2.0 / 4096) < 1e-12);
	assert_true(fabs(v.part[DIST_COMP] / MS - 20) < 2);
	assert_true(fabs(v.part[DIST_HOST] / MS) < 1);
	assert_true(v.cost / MS > 20 + 1500.0 / 12 - 2); /* the stall cost the job too */
	dist_verdict_free(&v);
	job_free(&j);

	/* two steps: too few */
	make_job(&j, 2, 2, SLOW_COMP, 20, 0, 1);
	verdict_of(&v, &j);
	assert_int_equal(v.code, DIST_FEW_STEPS);
	dist_verdict_free(&v);
	job_free(&j);
}

static void test_binom(void **state)
{
	(void)state;
	assert_true(fabs(dist_binom_sf(0, 10, 0.5) - 1) < 1e-15);
	assert_true(fabs(dist_binom_sf(10, 10, 0.5) - 1.0 / 1024) < 1e-15);
	assert_true(fabs(dist_binom_sf(9, 10, 0.5) - 11.0 / 1024) < 1e-15);
	assert_true(fabs(dist_binom_sf(8, 10, 0.5) - 56.0 / 1024) < 1e-14);
	assert_true(fabs(dist_binom_sf(2, 3, 0.25) - (3 * 0.0625 * 0.75 + 0.015625)) < 1e-15);
	assert_true(dist_binom_sf(11, 10, 0.5) == 0);
	/* large m: 60 of 100 at 1/2, 0.0284439 */
	assert_true(fabs(dist_binom_sf(60, 100, 0.5) - 0.0284439668) < 1e-8);

	/* the sign-flip test: {3, 1, -1} sums to 3; of the 8 patterns of
	 * +-3 +-1 +-1, 3 reach it */
	static const double x[] = {3, 1, -1};
	assert_true(fabs(dist_signflip_sf(x, 3) - 3.0 / 8) < 1e-15);
	assert_true(dist_signflip_sf(x, 0) == 1);
	double y[20];
	for (int i = 0; i < 20; i++)
		y[i] = 1 + i;
	/* beyond 16 values, the 16 largest: 5 .. 20, all positive */
	assert_true(dist_signflip_sf(y, 20) == 1.0 / (1 << 16));
	y[19] = -20; /* of +-5 .. +-20, those reaching 5 + .. + 19 - 20 = 160 */
	double p = dist_signflip_sf(y, 20);
	assert_true(p > 1.0 / (1 << 16) && p < 0.5);
	/* by hand: of 2^16 patterns, those whose sum is >= 160 */
	unsigned ge = 0;
	for (unsigned pat = 0; pat < 1u << 16; pat++) {
		int s = 0;
		for (int i = 0; i < 16; i++)
			s += (pat >> i & 1) ? 5 + i : -(5 + i);
		ge += s >= 160;
	}
	assert_true(p == (double)ge / (1 << 16));
	/* ties by size, the earlier first: 20, -6, 3 .. 19, -20 has two of
	 * size 6 for the last place, and takes -6: the sum of the 16 is
	 * 20 - 20 + (7 + .. + 19) - 6 = 163 (with 6 it would be 175) */
	y[0] = 20;
	y[1] = -6;
	double q = dist_signflip_sf(y, 20);
	ge = 0;
	for (unsigned pat = 0; pat < 1u << 16; pat++) {
		int s = 0;
		for (int i = 0; i < 16; i++) {
			int a = i < 2 ? 20 : i < 15 ? 21 - i : 6; /* 20, 20, 19 .. 7, 6 */
			s += (pat >> i & 1) ? a : -a;
		}
		ge += s >= 163;
	}
	assert_true(q == (double)ge / (1 << 16));
	/* a few large against small ones of the other sign */
	static const double z[] = {80, 75, 70, 60, -4, -2.5};
	assert_true(fabs(dist_signflip_sf(z, 6) - 4.0 / 64) < 1e-15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binom),
		cmocka_unit_test(test_by_hand),
		cmocka_unit_test(test_balanced),
		cmocka_unit_test(test_slowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
