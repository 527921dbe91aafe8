/*
 * benchstat.c - the statistics of the throughput gate (benchstat.h says the
 * model): the pooled ips with its batch-means interval, the comparison of
 * two pools on the log of their ratio, and Student's t quantile, computed
 * here from the t distribution's CDF so that libm is all it needs.
 */
#include "lib/analysis/bench/benchstat.h"

#include "common/error.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Student's t --------------------------------------------------------- */

/*
 * P(T > t) of Student's t with df degrees of freedom is, with u = t / sqrt(df),
 * x = 1 / (1 + u^2) and y = u^2 / (1 + u^2) = 1 - x:
 *     tail(t) = I_x(df/2, 1/2) / 2,    P(|T| < t) = I_y(1/2, df/2) = 1 - I_x(df/2, 1/2)
 * with I the regularized incomplete beta function. Both x and y are kept as
 * computed from u, never as 1 - the other, and both the tail and the central
 * mass are returned, each accurate where it is small: the quantile solver
 * matches whichever of the two is the smaller, so that neither the far tails
 * nor quantiles near the median lose their digits to a subtraction from 1.
 */

/* Above this many degrees of freedom the continued fraction, which converges
 * slowly near its switch point (t^2 = 3 here) for large df, loses digits to
 * rounding: 3e-13 of t at df 1e5, 3e-12 at 1e6, 1e-7 at 1e10. The
 * Cornish-Fisher expansion of t around the normal quantile takes over: its
 * terms fall by about z^2 / (10 df) each, so four of them leave less than
 * 1e-13 even at z = 37, the farthest tail a double holds. */
#define T_DF_EXPANSION 1e5
#define CF_EPS 1e-16
#define CF_TINY 1e-300
#define CF_MAX_ITER 200000

/* ln(1 + u^2), without overflowing for the u of the far tails. */
static double log1p_sq(double u)
{
	if (u > 1e8)
		return 2.0 * log(u) + 1.0 / (u * u);
	return log1p(u * u);
}

/* ln(Gamma(a + 1/2) / Gamma(a)): for large a the two lgamma values are huge
 * and nearly equal, and their difference would keep only the digits their
 * magnitude leaves (about 1e-9 at df 1e6); the difference of the two
 * Stirling series is taken term by term instead. */
static double lgamma_half_ratio(double a)
{
	if (a < 8.0)
		return lgamma(a + 0.5) - lgamma(a);
	double z = a + 0.5;
	/* a ln(a + 1/2) - (a - 1/2) ln a - 1/2, rewritten so that nothing large cancels */
	double lead = 0.5 * log(a) + (a * log1p(0.5 / a) - 0.5);
	/* Stirling's correction 1/(12z) - 1/(360z^3) + 1/(1260z^5) - 1/(1680z^7)
	 * + 1/(1188z^9) at z and at a; the next term is below 1e-12 for a >= 8 */
	static const double c[] = {1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188};
	double sz = 0, sa = 0, iz2 = 1.0 / (z * z), ia2 = 1.0 / (a * a);
	double pz = 1.0 / z, pa = 1.0 / a;
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		sz += c[k] * pz;
		sa += c[k] * pa;
		pz *= iz2;
		pa *= ia2;
	}
	return lead + (sz - sa);
}

/* Lentz's method keeps the continued fraction's value as a product of
 * ratios of its successive numerators (num) and denominators (den); a
 * value that would be 0 is nudged to CF_TINY so that no ratio divides by 0. */
struct lentz {
	double num, den, value;
};

static double lentz_guard(double v)
{
	return fabs(v) < CF_TINY ? CF_TINY : v;
}

/* Takes in the next partial numerator coef (partial denominators are all 1);
 * returns the factor the value changed by. */
static double lentz_step(struct lentz *f, double coef)
{
	f->den = 1.0 / lentz_guard(1.0 + coef * f->den);
	f->num = lentz_guard(1.0 + coef / f->num);
	double factor = f->num * f->den;
	f->value *= factor;
	return factor;
}

/*
 * The continued fraction of I_x(a, b):
 *   1 / (1 + d1 / (1 + d2 / (1 + ...)))
 * with d(2k+1) = -(a + k)(a + b + k) x / ((a + 2k)(a + 2k + 1)) and
 * d(2k) = k (b - k) x / ((a + 2k - 1)(a + 2k)). It converges fast for
 * x < (a + 1) / (a + b + 2); the caller swaps (a, b, x) for (b, a, 1 - x)
 * beyond that point.
 */
static double beta_cf(double a, double b, double x)
{
	/* the first level, 1 / (1 + d1), as it stands */
	double first = 1.0 / lentz_guard(1.0 - (a + b) * x / (a + 1.0));
	struct lentz f = {1.0, first, first};
	for (int k = 1; k <= CF_MAX_ITER; k++) {
		double even = k * (b - k) * x / ((a + 2.0 * k - 1.0) * (a + 2.0 * k));
		double odd = -(a + k) * (a + b + k) * x / ((a + 2.0 * k) * (a + 2.0 * k + 1.0));
		lentz_step(&f, even);
		if (fabs(lentz_step(&f, odd) - 1.0) < CF_EPS)
			break;
	}
	return f.value;
}

/* tail = P(T > t) and central = P(|T| < t), for t >= 0 and finite df. */
static void t_masses(double t, double df, double *tail, double *central)
{
	if (t <= 0) {
		*tail = 0.5;
		*central = 0;
		return;
	}
	double a = 0.5 * df, b = 0.5;
	double u = t / sqrt(df);
	double l1p = log1p_sq(u);
	double ln_x = -l1p, ln_y = 2.0 * log(u) - l1p;
	double x = exp(ln_x), y = exp(ln_y);
	/* x^a y^b / B(a, b), B(a, 1/2) = sqrt(pi) Gamma(a) / Gamma(a + 1/2) */
	double front = exp(a * ln_x + b * ln_y - 0.5 * log(M_PI) + lgamma_half_ratio(a));
	if (x < (a + 1.0) / (a + b + 2.0)) {
		double ix = front * beta_cf(a, b, x) / a;
		*tail = 0.5 * ix;
		*central = 1.0 - ix;
	} else {
		double jy = front * beta_cf(b, a, y) / b;
		*central = jy;
		*tail = 0.5 * (1.0 - jy);
	}
}

/* The same masses of the standard normal. */
static void z_masses(double z, double *tail, double *central)
{
	*tail = 0.5 * erfc(z / M_SQRT2);
	*central = erf(z / M_SQRT2);
}

static void masses(double t, double df, double *tail, double *central)
{
	if (isinf(df))
		z_masses(t, tail, central);
	else
		t_masses(t, df, tail, central);
}

/* t from the normal quantile z for large df: Abramowitz and Stegun 26.7.5,
 * to the 1/df^4 term. */
static double t_from_z(double z, double df)
{
	double z2 = z * z, v = 1.0 / df;
	double g1 = (z2 + 1) * z / 4;
	double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
	double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
	double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
	return z + v * (g1 + v * (g2 + v * (g3 + v * g4)));
}

/* Whether t is past the root: the tail below q or, when matching the central
 * mass, that mass above 1 - 2q. */
static int t_above(double t, double df, int by_tail, double target)
{
	double tail, central;
	masses(t, df, &tail, &central);
	return by_tail ? tail < target : central > target;
}

/*
 * The t > 0 with tail(t) = q, for 0 < q < 1/2: matched on the tail when q is
 * small, on the central mass 1 - 2q (exact in floating point for q >= 1/4)
 * otherwise. Both are monotonic in t, so bisection on ln t cannot fail, and
 * it reaches the last bits of t in some 60 steps whatever its magnitude
 * (t spans 1e-16 to 1e300 over the p a double can hold).
 */
static double t_upper(double q, double df)
{
	int by_tail = q < 0.25;
	double target = by_tail ? q : 1.0 - 2.0 * q;
	double lo = 1.0, hi = 1.0;
	if (t_above(1.0, df, by_tail, target)) {
		while (lo > DBL_MIN && t_above(lo, df, by_tail, target)) {
			hi = lo;
			lo *= 1.0 / 64;
		}
	} else {
		while (hi < DBL_MAX / 64 && !t_above(hi, df, by_tail, target)) {
			lo = hi;
			hi *= 64;
		}
	}
	for (int i = 0; i < 200 && hi > lo * (1.0 + 4 * DBL_EPSILON); i++) {
		double mid = sqrt(lo) * sqrt(hi);
		if (mid <= lo || mid >= hi)
			break;
		if (t_above(mid, df, by_tail, target))
			hi = mid;
		else
			lo = mid;
	}
	return sqrt(lo) * sqrt(hi);
}

double bs_t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p == 0.5)
		return 0;
	/* q = min(p, 1 - p) is exact: 1 - p loses nothing for p >= 1/2 */
	double q = p < 0.5 ? p : 1.0 - p, t;
	if (df == 1.0) {
		/* Cauchy: tan(pi (p - 1/2)), written per side to keep the tail's digits */
		t = q < 0.25 ? 1.0 / tan(M_PI * q) : tan(M_PI * (0.5 - q));
	} else if (df == 2.0) {
		t = (1.0 - 2.0 * q) / sqrt(2.0 * q * (1.0 - q));
	} else if (df > T_DF_EXPANSION) {
		t = t_from_z(t_upper(q, INFINITY), df);
	} else {
		t = t_upper(q, df);
	}
	return p < 0.5 ? -t : t;
}

double bs_quantile(const double *sorted, size_t n, double q)
{
	if (!n)
		return NAN;
	if (!(q > 0))
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	if (i + 1 >= n)
		return sorted[n - 1];
	double frac = pos - (double)i;
	return sorted[i] + frac * (sorted[i + 1] - sorted[i]);
}

/* ---- a pool -------------------------------------------------------------- */

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* floor(sqrt(n)), exact for every size_t: the double's root is only a guess. */
static size_t isqrt(size_t n)
{
	size_t r = (size_t)sqrt((double)n);
	while (r > 0 && r > n / r)
		r--;
	while ((r + 1) <= n / (r + 1))
		r++;
	return r;
}

/* Per-block sums in integers: 2^64 ns is 584 years of batch time, so they
 * cannot overflow, and they stay exact for the residuals below. */
struct block {
	uint64_t samples, ns;
};

/* The blocks of one run (benchstat.h): b = floor(sqrt(n)) steps each, the
 * last one taking the n mod b steps left over. Returns how many. */
static size_t run_blocks(const struct bs_run *r, struct block *out)
{
	size_t b = isqrt(r->n), m = r->n / b;
	for (size_t k = 0; k < m; k++) {
		size_t from = k * b, to = k + 1 == m ? r->n : from + b;
		struct block blk = {0, 0};
		for (size_t i = from; i < to; i++) {
			blk.samples += r->step[i].samples;
			blk.ns += r->step[i].batch_ns;
		}
		out[k] = blk;
	}
	return m;
}

/*
 * The ratio estimator's standard error over the blocks, in samples/s. The
 * residual S_k - R T_k is taken as (S_k T - S T_k) / T on the exact integer
 * sums: each product is one rounding of an exact value, so blocks with the
 * pool's own ratio give exactly 0 (constant steps have se 0, not 1e-14), and
 * a residual small against S_k keeps the long double's digits.
 */
static double ratio_se(const struct block *blk, size_t m, uint64_t samples, uint64_t ns)
{
	long double S = (long double)samples, T = (long double)ns, ss = 0;
	for (size_t k = 0; k < m; k++) {
		long double e = ((long double)blk[k].samples * T - S * (long double)blk[k].ns) / T;
		ss += e * e;
	}
	long double mean_t = T * 1e-9L / (long double)m;
	return (double)(sqrtl(ss / ((long double)m * (long double)(m - 1))) / mean_t);
}

/*
 * The variance between the runs of a pool beyond what their own steps'
 * noise explains (benchstat.h): tau^2 = max(0, var(R_r) - mean(se_r^2)),
 * over the runs with steps (*k of them; 0 when fewer than 2). blk is
 * scratch for a run's blocks.
 */
static double between_runs(const struct bs_run *runs, size_t nruns, struct block *blk, size_t *k)
{
	double mean = 0, m2 = 0, var_se = 0; /* Welford's running mean and squares */
	size_t n = 0, with_se = 0;
	for (size_t r = 0; r < nruns; r++) {
		if (!runs[r].n)
			continue;
		uint64_t samples = 0, ns = 0;
		for (size_t i = 0; i < runs[r].n; i++) {
			samples += runs[r].step[i].samples;
			ns += runs[r].step[i].batch_ns;
		}
		double R = (double)samples * 1e9 / (double)ns, d = R - mean;
		n++;
		mean += d / (double)n;
		m2 += d * (R - mean);
		size_t m = run_blocks(&runs[r], blk);
		if (m >= 2) {
			double se = ratio_se(blk, m, samples, ns);
			var_se += se * se;
			with_se++;
		}
	}
	*k = n;
	if (n < 2)
		return 0;
	double tau2 = m2 / (double)(n - 1) - (with_se ? var_se / (double)with_se : 0);
	return tau2 > 0 ? tau2 : 0;
}

void bs_pool_measure(struct bs_pool *p, const struct bs_run *runs, size_t nruns, double level)
{
	memset(p, 0, sizeof(*p));
	p->runs = nruns;
	p->level = level;
	p->se = p->df = p->ci_low = p->ci_high = NAN;
	for (size_t r = 0; r < nruns; r++)
		p->steps += runs[r].n;
	if (!p->steps)
		return;

	double *ips = xmalloc(p->steps * sizeof(*ips));
	struct block *blk = xmalloc(p->steps * sizeof(*blk));
	uint64_t samples = 0, ns = 0;
	size_t at = 0;
	for (size_t r = 0; r < nruns; r++) {
		for (size_t i = 0; i < runs[r].n; i++) {
			const struct bs_step *s = &runs[r].step[i];
			samples += s->samples;
			ns += s->batch_ns;
			ips[at++] = (double)s->samples * 1e9 / (double)s->batch_ns;
		}
		if (runs[r].n)
			p->blocks += run_blocks(&runs[r], blk + p->blocks);
	}
	p->ips = (double)((long double)samples * 1e9L / (long double)ns);

	qsort(ips, p->steps, sizeof(*ips), dbl_cmp);
	p->min = ips[0];
	p->max = ips[p->steps - 1];
	p->median = bs_quantile(ips, p->steps, 0.5);
	p->p90 = bs_quantile(ips, p->steps, 0.9);

	if (p->blocks >= 2) {
		double se = ratio_se(blk, p->blocks, samples, ns), df = (double)(p->blocks - 1);
		size_t k;
		double tau2 = between_runs(runs, nruns, blk, &k);
		p->between_sd = sqrt(tau2);
		p->se = sqrt(se * se + tau2 / (double)k);
		p->df = df;
		if (tau2 > 0) {
			/* Welch-Satterthwaite: the within part on m - 1, the between
			 * part on k - 1 degrees of freedom */
			double a = se * se, b = tau2 / (double)k;
			p->df = (a + b) * (a + b) / (a * a / df + b * b / (double)(k - 1));
		}
		double t = bs_t_quantile((1.0 + level) / 2.0, p->df);
		p->ci_low = p->ips - t * p->se;
		p->ci_high = p->ips + t * p->se;
	}
	free(blk);
	free(ips);
}

int bs_pool_has_ci(const struct bs_pool *p)
{
	return p->blocks >= 2 && !isnan(p->se);
}

/* ---- a comparison -------------------------------------------------------- */

static enum bs_verdict verdict_of(double low_pct, double high_pct, double max_regression_pct)
{
	if (high_pct < -max_regression_pct)
		return BS_REGRESSION;
	if (high_pct < 0)
		return BS_SLOWER;
	if (low_pct > 0)
		return BS_IMPROVEMENT;
	return BS_UNCHANGED;
}

int bs_compare(struct bs_change *c, const struct bs_pool *base, const struct bs_pool *cur,
	       double level, double max_regression_pct)
{
	if (!bs_pool_has_ci(base) || !bs_pool_has_ci(cur))
		return -1;
	/* on the log scale a ratio's error is symmetric and the two pools'
	 * relative errors add; the relative se is the delta method's */
	double d = log(cur->ips / base->ips);
	double vc = (cur->se / cur->ips) * (cur->se / cur->ips);
	double vb = (base->se / base->ips) * (base->se / base->ips);
	double se_d = sqrt(vc + vb), df = INFINITY, half = 0;
	if (se_d > 0) {
		/* Welch-Satterthwaite; a side with no spread adds nothing */
		double den = (vc > 0 ? vc * vc / cur->df : 0) + (vb > 0 ? vb * vb / base->df : 0);
		df = (vc + vb) * (vc + vb) / den;
		half = bs_t_quantile((1.0 + level) / 2.0, df) * se_d;
	}
	c->pct = 100.0 * expm1(d);
	c->low_pct = 100.0 * expm1(d - half);
	c->high_pct = 100.0 * expm1(d + half);
	c->se_log = se_d;
	c->df = df;
	c->level = level;
	c->max_regression_pct = max_regression_pct;
	c->verdict = verdict_of(c->low_pct, c->high_pct, max_regression_pct);
	return 0;
}

const char *bs_verdict_name(enum bs_verdict v)
{
	switch (v) {
	case BS_UNCHANGED:
		return "unchanged";
	case BS_SLOWER:
		return "slower";
	case BS_REGRESSION:
		return "regression";
	case BS_IMPROVEMENT:
		return "improvement";
	}
	return "unknown";
}

int bs_ips_decimals(double ips)
{
	return ips >= 100 ? 2 : ips >= 1 ? 4 : 6;
}
