/*
 * test_benchstat.c - the throughput gate's statistics: Student's t quantile
 * against table values, the order statistics, pools worked by hand (block
 * layout, ratio estimator, interval), comparisons worked by hand (log
 * ratio, Welch-Satterthwaite, the verdict's strict boundaries), and the
 * verdicts' error rates on synthetic step times drawn from a seeded
 * generator: i.i.d. noise, real changes, and slow stretches that make
 * neighbouring steps correlated.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/bench/benchstat.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define assert_near(got, want, tol)                                                        \
	do {                                                                               \
		double got_ = (got), want_ = (want), tol_ = (tol);                         \
		if (!(fabs(got_ - want_) <= tol_))                                         \
			fail_msg("%s = %.17g, want %.17g within %g", #got, got_, want_, tol_); \
	} while (0)
/* relative to the wanted value */
#define assert_rel(got, want, rel) assert_near(got, want, (rel) * fabs((double)(want)))

#define MS 1000000ull

/* ---- t quantile ---------------------------------------------------------- */

static void test_t_quantile_table(void **state)
{
	(void)state;
	/* the usual printed tables, to their 9 digits */
	assert_rel(bs_t_quantile(0.975, 1), 12.7062047, 1e-8);
	assert_rel(bs_t_quantile(0.975, 2), 4.30265273, 1e-8);
	assert_rel(bs_t_quantile(0.975, 5), 2.57058184, 1e-8);
	assert_rel(bs_t_quantile(0.975, 30), 2.04227246, 1e-8);
	assert_rel(bs_t_quantile(0.995, 10), 3.16927267, 1e-8);
	assert_rel(bs_t_quantile(0.95, INFINITY), 1.64485363, 1e-8);
	assert_rel(bs_t_quantile(0.975, INFINITY), 1.95996398, 1e-8);
	/* closed forms: Cauchy tan(pi (p - 1/2)); df 2 (2p - 1) / sqrt(2p(1 - p)) */
	assert_rel(bs_t_quantile(0.75, 1), 1.0, 1e-14);
	assert_rel(bs_t_quantile(0.9, 2), 0.8 / sqrt(0.18), 1e-14);
	/* whole and fractional df, large df, far tail: references from the
	 * incomplete beta function in 30-digit arithmetic (mpmath) */
	assert_rel(bs_t_quantile(0.975, 7.5), 2.33303962686497461, 1e-10);
	assert_rel(bs_t_quantile(0.95, 3.3), 2.26865456675546569, 1e-10);
	assert_rel(bs_t_quantile(0.975, 1e6), 1.95996635681410704, 1e-10);
	assert_rel(bs_t_quantile(1e-300, 3), -1.033110836044653e+100, 1e-10);
}

static void test_t_quantile_shape(void **state)
{
	(void)state;
	double t7 = bs_t_quantile(0.975, 7), t8 = bs_t_quantile(0.975, 8);
	double t75 = bs_t_quantile(0.975, 7.5);
	assert_rel(t7, 2.36462425, 1e-8);
	assert_rel(t8, 2.30600414, 1e-8);
	assert_true(t75 < t7 && t75 > t8);
	/* symmetry, exact: both sides solve for the same tail */
	const double dfs[] = {1, 2, 3.5, 7.5, 30, 1e3, 1e6, INFINITY};
	const double ps[] = {0.6, 0.9, 0.975, 0.999};
	for (size_t i = 0; i < sizeof(dfs) / sizeof(dfs[0]); i++)
		for (size_t j = 0; j < sizeof(ps) / sizeof(ps[0]); j++)
			assert_true(bs_t_quantile(1 - ps[j], dfs[i]) == -bs_t_quantile(ps[j], dfs[i]));
	/* decreasing in df toward the normal, with no step where the method
	 * changes to the large-df expansion */
	double prev = INFINITY;
	for (double df = 1; df < 1e9; df *= 1.7) {
		double t = bs_t_quantile(0.975, df);
		assert_true(t < prev);
		prev = t;
	}
	assert_rel(bs_t_quantile(0.975, 1e5), bs_t_quantile(0.975, 1e5 + 1), 1e-9);
	assert_rel(bs_t_quantile(0.975, 1e12), bs_t_quantile(0.975, INFINITY), 1e-11);
	/* the median, tiny steps off it, and what has no quantile */
	assert_true(bs_t_quantile(0.5, 4) == 0);
	assert_true(bs_t_quantile(0.5 + 0x1p-40, 4) > 0);
	/* z = (p - 1/2) / phi(0) to first order; 2^-40 is exact beside 1/2 */
	assert_rel(bs_t_quantile(0.5 + 0x1p-40, INFINITY), 0x1p-40 * sqrt(2 * M_PI), 1e-12);
	assert_true(isnan(bs_t_quantile(0, 4)));
	assert_true(isnan(bs_t_quantile(1, 4)));
	assert_true(isnan(bs_t_quantile(0.975, 0)));
	assert_true(isnan(bs_t_quantile(0.975, NAN)));
}

/* ---- quantiles of sorted values ------------------------------------------ */

static void test_quantile(void **state)
{
	(void)state;
	const double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	assert_near(bs_quantile(v, 10, 0.5), 5.5, 1e-12);
	assert_near(bs_quantile(v, 10, 0.9), 9.1, 1e-12);   /* position 8.1 */
	assert_near(bs_quantile(v, 10, 0.25), 3.25, 1e-12); /* position 2.25 */
	assert_near(bs_quantile(v, 10, 0), 1, 0);
	assert_near(bs_quantile(v, 10, 1), 10, 0);
	assert_near(bs_quantile(v, 9, 0.5), 5, 0); /* odd count: the middle one */
	assert_near(bs_quantile(v + 6, 1, 0.9), 7, 0);
	const double w[] = {10, 20, 40};
	assert_near(bs_quantile(w, 3, 0.9), 36, 1e-12); /* 20 + 0.8 * 20 */
}

/* ---- pools worked by hand ------------------------------------------------ */

static void test_pool_four_steps(void **state)
{
	(void)state;
	/* 10 samples per step in 100, 200, 300, 400 ms: b = 2, m = 2,
	 * blocks (S, T) = (20, 0.3 s), (20, 0.7 s); R = 40 / 1.0 s = 40;
	 * residuals 20 - 40 * 0.3 = 8 and 20 - 40 * 0.7 = -8;
	 * se = sqrt(128 / (2 * 1)) / 0.5 = 16, df 1;
	 * per step ips 100, 50, 33.3, 25 */
	const struct bs_step s[] = {{100 * MS, 10}, {200 * MS, 10}, {300 * MS, 10}, {400 * MS, 10}};
	const struct bs_run r = {s, 4};
	struct bs_pool p;
	bs_pool_measure(&p, &r, 1, 0.95);
	assert_int_equal(p.runs, 1);
	assert_int_equal(p.steps, 4);
	assert_int_equal(p.blocks, 2);
	assert_true(bs_pool_has_ci(&p));
	assert_near(p.level, 0.95, 0);
	assert_rel(p.ips, 40, 1e-12);
	assert_rel(p.se, 16, 1e-12);
	assert_near(p.df, 1, 0);
	assert_rel(p.ci_low, 40 - 12.706204736174707 * 16, 1e-10);
	assert_rel(p.ci_high, 40 + 12.706204736174707 * 16, 1e-10);
	assert_rel(p.median, (100.0 / 3 + 50) / 2, 1e-12);
	assert_rel(p.p90, 50 + 0.7 * 50, 1e-12); /* position 2.7 of 25, 33.3, 50, 100 */
	assert_rel(p.min, 25, 1e-12);
	assert_rel(p.max, 100, 1e-12);
}

static void test_pool_ten_steps_blocks_3_3_4(void **state)
{
	(void)state;
	/* 100 ms steps with 1, 2, ..., 10 samples: b = 3, blocks of 3, 3, 4
	 * steps: (6, 0.3 s), (15, 0.3 s), (34, 0.4 s); R = 55 / 1.0 s;
	 * residuals -10.5, -1.5, 12; sum of squares 256.5;
	 * se = sqrt(256.5 / 6) / (1 / 3) = 3 sqrt(42.75), df 2. Blocks of 3, 3,
	 * 3 with the tenth step dropped, or of 4, 3, 3, would give others. */
	struct bs_step s[10];
	for (int i = 0; i < 10; i++)
		s[i] = (struct bs_step){100 * MS, (uint64_t)i + 1};
	const struct bs_run r = {s, 10};
	struct bs_pool p;
	bs_pool_measure(&p, &r, 1, 0.95);
	assert_int_equal(p.blocks, 3);
	/* samples per second, not the 10 steps per second */
	assert_rel(p.ips, 55, 1e-12);
	assert_rel(p.se, 3 * sqrt(42.75), 1e-12);
	assert_near(p.df, 2, 0);
	assert_rel(p.ci_low, -29.3967279715729993, 1e-10);
	assert_rel(p.median, 55, 1e-12);
	assert_rel(p.p90, 91, 1e-12);
	assert_rel(p.min, 10, 1e-12);
	assert_rel(p.max, 100, 1e-12);

	/* the same steps at level 0.9: only the interval's width changes */
	struct bs_pool q;
	bs_pool_measure(&q, &r, 1, 0.9);
	assert_rel(q.se, p.se, 0);
	assert_rel(q.ci_high - q.ips, 2.91998558 * q.se, 1e-8); /* t(0.95, 2) */
}

static void test_pool_two_runs_blocked_per_run(void **state)
{
	(void)state;
	/* run A: 4 steps of 100 ms, 10 samples (b = 2: 2 blocks (20, 0.2 s));
	 * run B: 9 steps of 100 ms, 20 samples (b = 3: 3 blocks (60, 0.3 s)).
	 * m = 5 (the 13 steps as one run would make 4 blocks);
	 * R = 220 / 1.3 s = 2200 / 13; residuals -180/13 (twice), 120/13
	 * (three times); sum of squares 108000 / 169;
	 * within: sqrt(5400 / 169) / (1.3 / 5) = sqrt(5400) / 3.38 on df 4;
	 * between the runs: R_A = 100, R_B = 200, each with se 0 (constant
	 * steps): tau^2 = var(100, 200) = 5000, adding 5000 / 2 = 2500 to se^2;
	 * df = (wa + wb)^2 / (wa^2 / 4 + wb^2 / 1), wa = 5400 / 3.38^2, wb = 2500 */
	struct bs_step a[4], b[9];
	for (int i = 0; i < 4; i++)
		a[i] = (struct bs_step){100 * MS, 10};
	for (int i = 0; i < 9; i++)
		b[i] = (struct bs_step){100 * MS, 20};
	const struct bs_run r[] = {{a, 4}, {NULL, 0}, {b, 9}};
	struct bs_pool p;
	bs_pool_measure(&p, r, 3, 0.95);
	assert_int_equal(p.runs, 3);
	assert_int_equal(p.steps, 13);
	assert_int_equal(p.blocks, 5);
	assert_rel(p.ips, 2200.0 / 13, 1e-12);
	double wa = 5400 / (3.38 * 3.38), wb = 2500;
	assert_rel(p.between_sd, sqrt(5000), 1e-12);
	assert_rel(p.se, sqrt(wa + wb), 1e-12);
	assert_rel(p.df, (wa + wb) * (wa + wb) / (wa * wa / 4 + wb * wb), 1e-12);
	assert_rel(p.ci_low, p.ips - bs_t_quantile(0.975, p.df) * p.se, 1e-12);
	assert_rel(p.median, 200, 1e-12); /* 9 of the 13 steps run at 200/s */
	assert_rel(p.min, 100, 1e-12);
	assert_rel(p.max, 200, 1e-12);
}

static void test_pool_samples_or_steps(void **state)
{
	(void)state;
	/* a caller counting steps gives 1 sample per step: 4 steps of 250 ms
	 * are 4 steps/s; with 32 samples each, 128 samples/s */
	struct bs_step s[4];
	for (int i = 0; i < 4; i++)
		s[i] = (struct bs_step){250 * MS, 1};
	const struct bs_run r = {s, 4};
	struct bs_pool p;
	bs_pool_measure(&p, &r, 1, 0.95);
	assert_rel(p.ips, 4, 1e-12);
	assert_rel(p.median, 4, 1e-12);
	for (int i = 0; i < 4; i++)
		s[i].samples = 32;
	bs_pool_measure(&p, &r, 1, 0.95);
	assert_rel(p.ips, 128, 1e-12);
	/* identical steps: no spread, the interval is the point */
	assert_near(p.se, 0, 0);
	assert_near(p.ci_low, 128, 1e-12);
	assert_near(p.ci_high, 128, 1e-12);
}

static void test_pool_without_interval(void **state)
{
	(void)state;
	struct bs_pool p;
	bs_pool_measure(&p, NULL, 0, 0.95);
	assert_int_equal(p.runs, 0);
	assert_int_equal(p.steps, 0);
	assert_int_equal(p.blocks, 0);
	assert_near(p.ips, 0, 0);
	assert_near(p.median, 0, 0);
	assert_true(isnan(p.se) && isnan(p.df) && isnan(p.ci_low) && isnan(p.ci_high));
	assert_false(bs_pool_has_ci(&p));

	const struct bs_run empty[] = {{NULL, 0}, {NULL, 0}};
	bs_pool_measure(&p, empty, 2, 0.95);
	assert_int_equal(p.runs, 2);
	assert_int_equal(p.steps, 0);
	assert_false(bs_pool_has_ci(&p));

	/* one step: an ips and its order statistics, but one block */
	const struct bs_step one = {200 * MS, 8};
	const struct bs_run r = {&one, 1};
	bs_pool_measure(&p, &r, 1, 0.95);
	assert_int_equal(p.blocks, 1);
	assert_rel(p.ips, 40, 1e-12);
	assert_rel(p.median, 40, 1e-12);
	assert_rel(p.p90, 40, 1e-12);
	assert_true(isnan(p.se) && isnan(p.ci_low));
	assert_false(bs_pool_has_ci(&p));

	/* nor can it be compared, either way round; c is left as it was */
	struct bs_pool two;
	const struct bs_step s2[] = {{100 * MS, 8}, {120 * MS, 8}};
	const struct bs_run r2 = {s2, 2};
	bs_pool_measure(&two, &r2, 1, 0.95);
	assert_int_equal(two.blocks, 2);
	assert_true(bs_pool_has_ci(&two));
	struct bs_change c, before;
	memset(&c, 0x5a, sizeof(c));
	before = c;
	assert_int_equal(bs_compare(&c, &p, &two, 0.95, 5), -1);
	assert_int_equal(bs_compare(&c, &two, &p, 0.95, 5), -1);
	assert_memory_equal(&c, &before, sizeof(c));
	assert_int_equal(bs_compare(&c, &two, &two, 0.95, 5), 0);
}

/* ---- comparisons worked by hand ------------------------------------------ */

static struct bs_pool pool_of(double ips, double se, double df)
{
	struct bs_pool p = {0};
	p.runs = 1;
	p.steps = (size_t)df + 1;
	p.blocks = (size_t)df + 1;
	p.ips = ips;
	p.se = se;
	p.df = df;
	p.level = 0.95;
	return p;
}

static void test_compare_by_hand(void **state)
{
	(void)state;
	/* base 100 +- 2 (df 10), cur 90 +- 2.7 (df 20): d = ln 0.9, relative
	 * variances 4e-4 and 9e-4, se_d = sqrt(1.3e-3);
	 * df = 1.3e-3^2 / (4e-4^2 / 10 + 9e-4^2 / 20) = 1.69e-6 / 5.65e-8;
	 * t(0.975, 29.91) = 2.0425258589, interval exp(d -/+ t se_d) - 1 */
	struct bs_pool base = pool_of(100, 2, 10), cur = pool_of(90, 2.7, 20);
	struct bs_change c;
	assert_int_equal(bs_compare(&c, &base, &cur, 0.95, 5), 0);
	assert_rel(c.pct, -10, 1e-12);
	assert_rel(c.se_log, sqrt(1.3e-3), 1e-12);
	assert_rel(c.df, 1.69e-6 / 5.65e-8, 1e-12);
	assert_rel(c.low_pct, -16.3898141337733638, 1e-10);
	assert_rel(c.high_pct, -3.12185152943307894, 1e-10);
	assert_near(c.level, 0.95, 0);
	assert_near(c.max_regression_pct, 5, 0);
	/* all below 0, the upper end above -5: slower, within what is allowed */
	assert_int_equal(c.verdict, BS_SLOWER);
	assert_int_equal(bs_compare(&c, &base, &cur, 0.95, 3), 0);
	assert_int_equal(c.verdict, BS_REGRESSION);
	/* the boundary is strict: an upper end of exactly -max is not below it */
	double high = c.high_pct;
	assert_int_equal(bs_compare(&c, &base, &cur, 0.95, -high), 0);
	assert_int_equal(c.verdict, BS_SLOWER);
	assert_int_equal(bs_compare(&c, &base, &cur, 0.95, nextafter(-high, 0)), 0);
	assert_int_equal(c.verdict, BS_REGRESSION);
	/* the other way round: the interval is mirrored on the log scale */
	assert_int_equal(bs_compare(&c, &cur, &base, 0.95, 5), 0);
	assert_rel(c.pct, 100.0 / 9, 1e-12);
	assert_rel(c.low_pct, 100 * (1 / (1 - 0.0312185152943307894) - 1), 1e-10);
	assert_int_equal(c.verdict, BS_IMPROVEMENT);
	/* 3% fewer within noise of that size: the interval holds 0 */
	struct bs_pool near = pool_of(97, 2.7, 20);
	assert_int_equal(bs_compare(&c, &base, &near, 0.95, 5), 0);
	assert_int_equal(c.verdict, BS_UNCHANGED);
	assert_true(c.low_pct < 0 && c.high_pct > 0);
}

static void test_compare_one_side_without_spread(void **state)
{
	(void)state;
	/* Welch-Satterthwaite with one variance 0 is the other side's df */
	struct bs_pool base = pool_of(100, 0, 10), cur = pool_of(80, 4, 7);
	struct bs_change c;
	assert_int_equal(bs_compare(&c, &base, &cur, 0.95, 5), 0);
	assert_near(c.df, 7, 1e-12);
	assert_rel(c.se_log, 0.05, 1e-12);
	double t = bs_t_quantile(0.975, 7);
	assert_rel(c.high_pct, 100 * expm1(log(0.8) + t * 0.05), 1e-12);
	assert_int_equal(c.verdict, BS_REGRESSION);
}

static void fill_const(struct bs_step *s, size_t n, uint64_t ns, uint64_t samples)
{
	for (size_t i = 0; i < n; i++)
		s[i] = (struct bs_step){ns, samples};
}

static void test_compare_constant_steps(void **state)
{
	(void)state;
	/* steps alike on both sides, with an ips that is no round number:
	 * no change, an interval of no width, a df that says so */
	struct bs_step a[20], b[30];
	fill_const(a, 20, 123456789, 64);
	fill_const(b, 30, 123456789, 64);
	const struct bs_run ra = {a, 20}, rb[] = {{b, 10}, {b + 10, 20}};
	struct bs_pool base, cur;
	bs_pool_measure(&base, &ra, 1, 0.95);
	bs_pool_measure(&cur, rb, 2, 0.95);
	assert_near(base.se, 0, 0);
	assert_near(cur.se, 0, 0);
	struct bs_change c;
	assert_int_equal(bs_compare(&c, &base, &cur, 0.95, 5), 0);
	assert_near(c.pct, 0, 0);
	assert_near(c.low_pct, 0, 0);
	assert_near(c.high_pct, 0, 0);
	assert_near(c.se_log, 0, 0);
	assert_true(isinf(c.df) && c.df > 0);
	assert_int_equal(c.verdict, BS_UNCHANGED);
	/* constant but 10% longer steps: certainly 1/1.1 - 1 slower */
	fill_const(b, 30, 135802468, 64);
	bs_pool_measure(&cur, rb, 2, 0.95);
	assert_int_equal(bs_compare(&c, &base, &cur, 0.95, 5), 0);
	assert_rel(c.pct, 100 * (123456789.0 / 135802468 - 1), 1e-12);
	assert_near(c.low_pct, c.pct, 0);
	assert_near(c.high_pct, c.pct, 0);
	assert_int_equal(c.verdict, BS_REGRESSION);
	assert_int_equal(bs_compare(&c, &base, &cur, 0.95, 10), 0);
	assert_int_equal(c.verdict, BS_SLOWER);
}

static void test_verdict_names(void **state)
{
	(void)state;
	assert_string_equal(bs_verdict_name(BS_UNCHANGED), "unchanged");
	assert_string_equal(bs_verdict_name(BS_SLOWER), "slower");
	assert_string_equal(bs_verdict_name(BS_REGRESSION), "regression");
	assert_string_equal(bs_verdict_name(BS_IMPROVEMENT), "improvement");
}

/* ---- synthetic step times ------------------------------------------------ */

/* splitmix64: a seed per case, the same numbers on every machine */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in (0, 1), never 0 (Box-Muller takes its log) */
static double rng_uniform(uint64_t *s)
{
	return ((double)(rng_next(s) >> 11) + 0.5) * 0x1.0p-53;
}

static double rng_normal(uint64_t *s)
{
	double u = rng_uniform(s), v = rng_uniform(s);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

#define RUNS 3
#define STEPS 100
#define SAMPLES 64

/* How a side's step times are drawn. */
struct model {
	double mean_ms, sd_ms; /* i.i.d. normal noise */
	double scale;          /* every time times this: 1/0.9 is 10% fewer ips */
	double slow_p;         /* slow stretches: each, with this probability, */
	double slow_by;        /* takes this fraction longer; */
	int stretch;           /* this many steps each, at a random phase per run */
};

struct side {
	struct bs_step step[RUNS][STEPS];
	struct bs_run run[RUNS];
	struct bs_run single[RUNS * STEPS]; /* each step a run of its own */
};

static void draw(struct side *sd, const struct model *m, uint64_t seed)
{
	uint64_t s = seed * 0x2545f4914f6cdd1dull + 1;
	for (int r = 0; r < RUNS; r++) {
		int phase = m->stretch ? (int)(rng_next(&s) % (uint64_t)m->stretch) : 0;
		double slow = 1;
		for (int i = 0; i < STEPS; i++) {
			if (m->stretch && (i == 0 || (i + phase) % m->stretch == 0))
				slow = rng_uniform(&s) < m->slow_p ? 1 + m->slow_by : 1;
			double ms = (m->mean_ms + m->sd_ms * rng_normal(&s)) * slow * m->scale;
			if (ms < 1)
				ms = 1;
			sd->step[r][i] = (struct bs_step){(uint64_t)llround(ms * 1e6), SAMPLES};
			sd->single[r * STEPS + i] = (struct bs_run){&sd->step[r][i], 1};
		}
		sd->run[r] = (struct bs_run){sd->step[r], STEPS};
	}
}

static struct side side_a, side_b;

/* Compares a pool drawn from base with one drawn from cur, seed by seed. */
static void compare_drawn(struct bs_change *c, const struct model *base, const struct model *cur,
			  uint64_t seed, double max)
{
	struct bs_pool pb, pc;
	draw(&side_a, base, 2 * seed);
	draw(&side_b, cur, 2 * seed + 1);
	bs_pool_measure(&pb, side_a.run, RUNS, 0.95);
	bs_pool_measure(&pc, side_b.run, RUNS, 0.95);
	assert_int_equal(pb.blocks, 30);
	assert_int_equal(bs_compare(c, &pb, &pc, 0.95, max), 0);
}

static const struct model iid = {100, 10, 1, 0, 0, 0};

#define SEEDS 50

static void test_same_distribution(void **state)
{
	(void)state;
	int verdicts[4] = {0};
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct bs_change c;
		compare_drawn(&c, &iid, &iid, seed, 5);
		verdicts[c.verdict]++;
		/* each pool's ips is within 0.6% (1 sd) of 640: the change is noise */
		assert_true(fabs(c.pct) < 4);
	}
	assert_int_equal(verdicts[BS_REGRESSION], 0);
	/* about 5% land outside a 95% interval by chance */
	assert_true(verdicts[BS_UNCHANGED] >= 42);
}

static void test_ten_percent_slower(void **state)
{
	(void)state;
	const struct model slower = {100, 10, 1 / 0.9, 0, 0, 0};
	int regressions = 0, covered = 0;
	double sum = 0;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct bs_change c;
		compare_drawn(&c, &iid, &slower, seed, 5);
		regressions += c.verdict == BS_REGRESSION;
		covered += c.low_pct <= -10 && -10 <= c.high_pct;
		sum += c.pct;
		/* the change's se is about 0.8 points, so 2 is 2.4 of them (the
		 * farthest of these 50 seeds is 1.3 off) */
		assert_near(c.pct, -10, 2);
	}
	assert_int_equal(regressions, SEEDS);
	assert_near(sum / SEEDS, -10, 0.5);
	assert_true(covered >= 42);
}

static void test_ten_percent_faster(void **state)
{
	(void)state;
	const struct model faster = {100, 10, 1 / 1.1, 0, 0, 0};
	int improvements = 0;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct bs_change c;
		compare_drawn(&c, &iid, &faster, seed, 5);
		improvements += c.verdict == BS_IMPROVEMENT;
		assert_near(c.pct, 10, 2);
	}
	assert_int_equal(improvements, SEEDS);
}

static void test_three_percent_slower_little_noise(void **state)
{
	(void)state;
	/* sd 1 ms: the change is certain, within 5% allowed, beyond 1% */
	const struct model quiet = {100, 1, 1, 0, 0, 0};
	const struct model slower = {100, 1, 1 / 0.97, 0, 0, 0};
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct bs_change c;
		compare_drawn(&c, &quiet, &slower, seed, 5);
		assert_int_equal(c.verdict, BS_SLOWER);
		assert_near(c.pct, -3, 0.3);
		compare_drawn(&c, &quiet, &slower, seed, 1);
		assert_int_equal(c.verdict, BS_REGRESSION);
	}
}

static void test_slow_stretches(void **state)
{
	(void)state;
	/* Both sides from one process whose stretches of 10 steps are, half of
	 * them, 30% slower: neighbouring steps are alike, so the steps' own
	 * spread understates the noise of their mean. Blocks of 10 hold it;
	 * every step as its own block (the naive estimate) does not. */
	const struct model shared = {100, 10, 1, 0.5, 0.3, 10};
	int regressions = 0, changed = 0, naive_regressions = 0, naive_changed = 0;
	for (uint64_t seed = 1; seed <= 100; seed++) {
		struct bs_pool pb, pc, nb, nc;
		struct bs_change c;
		draw(&side_a, &shared, 2 * seed);
		draw(&side_b, &shared, 2 * seed + 1);
		bs_pool_measure(&pb, side_a.run, RUNS, 0.95);
		bs_pool_measure(&pc, side_b.run, RUNS, 0.95);
		assert_int_equal(bs_compare(&c, &pb, &pc, 0.95, 5), 0);
		regressions += c.verdict == BS_REGRESSION;
		changed += c.verdict != BS_UNCHANGED;

		bs_pool_measure(&nb, side_a.single, RUNS * STEPS, 0.95);
		bs_pool_measure(&nc, side_b.single, RUNS * STEPS, 0.95);
		assert_int_equal(nb.blocks, RUNS * STEPS);
		assert_rel(nb.ips, pb.ips, 1e-12);
		assert_true(nb.se < pb.se);
		assert_int_equal(bs_compare(&c, &nb, &nc, 0.95, 5), 0);
		naive_regressions += c.verdict == BS_REGRESSION;
		naive_changed += c.verdict != BS_UNCHANGED;
	}
	print_message("slow stretches, 100 seeds: batch means %d regressions, %d changes; "
		      "naive per step %d regressions, %d changes\n",
		      regressions, changed, naive_regressions, naive_changed);
	assert_true(regressions < 5);
	/* and false changes of either sign stay near the level's 5%, where
	 * the naive estimate finds one in about half the seeds */
	assert_true(changed < 20);
}


/* A run of the candidate made on a busy machine (25% longer steps) beside
 * two clean ones: the runs disagree far more than their steps' noise says,
 * so the interval widens (between_sd) and the pool is not called a
 * regression on one bad run; the same 25% in every run still is one. An
 * i.i.d. pool shows almost no spread between its runs. */
static void test_between_runs(void **state)
{
	(void)state;
	const struct model drift[RUNS] = {iid, iid, {100, 10, 1.25, 0, 0, 0}};
	struct bs_pool pb, pc;
	int regressions = 0;
	double tau = 0;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		draw(&side_a, &iid, 2 * seed);
		draw(&side_b, &iid, 2 * seed + 1);
		for (int r = 0; r < RUNS; r++) { /* redraw each run under its own model */
			struct side one;
			draw(&one, &drift[r], 1000 * seed + (uint64_t)r);
			memcpy(side_b.step[r], one.step[r], sizeof(one.step[r]));
		}
		bs_pool_measure(&pb, side_a.run, RUNS, 0.95);
		bs_pool_measure(&pc, side_b.run, RUNS, 0.95);
		tau += pb.between_sd / pb.ips / SEEDS;
		assert_true(pc.between_sd > 0.05 * pc.ips);
		struct bs_change c;
		assert_int_equal(bs_compare(&c, &pb, &pc, 0.95, 5), 0);
		regressions += c.verdict == BS_REGRESSION;
	}
	assert_int_equal(regressions, 0);
	assert_true(tau < 0.01); /* mean tau of the i.i.d. pools: under 1% of ips */
	struct bs_change c;
	const struct model slow = {100, 10, 1.25, 0, 0, 0};
	compare_drawn(&c, &iid, &slow, 7, 5);
	assert_int_equal(c.verdict, BS_REGRESSION);
}

static void test_interval_coverage(void **state)
{
	(void)state;
	/* 64 samples per 100 ms on average: 640 samples/s is the truth */
	int covered = 0;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct bs_pool p;
		draw(&side_a, &iid, 1000 + seed);
		bs_pool_measure(&p, side_a.run, RUNS, 0.95);
		covered += p.ci_low <= 640 && 640 <= p.ci_high;
	}
	print_message("interval coverage at 0.95 over 200 seeds: %d\n", covered);
	assert_true(covered >= 180 && covered <= 198);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_t_quantile_table),
		cmocka_unit_test(test_t_quantile_shape),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_pool_four_steps),
		cmocka_unit_test(test_pool_ten_steps_blocks_3_3_4),
		cmocka_unit_test(test_pool_two_runs_blocked_per_run),
		cmocka_unit_test(test_pool_samples_or_steps),
		cmocka_unit_test(test_pool_without_interval),
		cmocka_unit_test(test_compare_by_hand),
		cmocka_unit_test(test_compare_one_side_without_spread),
		cmocka_unit_test(test_compare_constant_steps),
		cmocka_unit_test(test_verdict_names),
		cmocka_unit_test(test_same_distribution),
		cmocka_unit_test(test_ten_percent_slower),
		cmocka_unit_test(test_ten_percent_faster),
		cmocka_unit_test(test_three_percent_slower_little_noise),
		cmocka_unit_test(test_slow_stretches),
		cmocka_unit_test(test_between_runs),
		cmocka_unit_test(test_interval_coverage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
