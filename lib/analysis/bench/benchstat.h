/*
 * benchstat.h - the statistics of the throughput gate, `gprof-dl bench`:
 * the ips of a pool of runs with a confidence interval that accounts for
 * step-to-step noise, the median and p90 of ips over steps, and the
 * comparison of two pools with a verdict. gprof-dl-bench(1) says the same
 * to users.
 *
 * Model:
 *  - a run is the counted steps of one trace, in order (perf.h: batch time
 *    in ns, samples; a caller measuring steps/s gives 1 sample per step);
 *  - the ips of a pool = all samples / all batch time, per second (the Perf
 *    Summary's avg of ips);
 *  - a step's ips = its samples / its batch time; median and p90 are of
 *    these, by linear interpolation between order statistics (position
 *    q (n - 1) in the sorted values, numpy's default); min and max too;
 *  - noise: neighbouring steps are correlated (a slow stretch of a shared
 *    machine lasts several steps), so each run's steps are grouped into
 *    blocks of b = floor(sqrt(n)) consecutive steps (n: that run's steps;
 *    the last block of a run also takes the n mod b steps left over) and
 *    the blocks of every run of the pool are taken together (batch means);
 *    with m blocks, S_k and T_k a block's samples and time (s), R the ips:
 *      se = sqrt(sum_k (S_k - R T_k)^2 / (m (m - 1))) / mean_k(T_k)
 *    (the ratio estimator's standard error), degrees of freedom m - 1, and
 *    the interval R -/+ t se, t Student's quantile at (1 + level) / 2;
 *  - runs of a side may differ by more than their steps' noise explains (a
 *    machine slower for a whole run): with k >= 2 runs, R_r and se_r each
 *    run's ips and standard error as above (se_r over runs of 2 steps or
 *    more), tau^2 = max(0, var_r(R_r) - mean_r(se_r^2)) is the variance
 *    between runs (between_sd = tau), and it adds tau^2 / k to se^2, its
 *    degrees of freedom joined to m - 1 by Welch-Satterthwaite with k - 1.
 *    (The blocks' own spread already holds part of it: on the safe side.)
 *    One run a side cannot show such drift: the documentation says to give
 *    several, interleaved with the baseline's where possible;
 *  - a comparison works on the log of the ratio of the two ips:
 *      d = ln(R_cur / R_base), se_d^2 = (se_cur / R_cur)^2 + (se_base / R_base)^2
 *    with Welch-Satterthwaite's degrees of freedom, the interval
 *    d -/+ t se_d, and gives the change exp(d) - 1 and its interval's ends
 *    the same way, in percent (so -10 means 10% fewer samples per second);
 *    when se_d is 0 the interval is the point;
 *  - the verdict, max the allowed regression in percent (>= 0):
 *      regression   the interval's upper end is below -max: slower than
 *                   allowed, with confidence (the gate fails)
 *      slower       its upper end is below 0, not below -max
 *      improvement  its lower end is above 0
 *      unchanged    the interval holds 0: no significant change.
 */
#ifndef GPDL_ANALYSIS_BENCHSTAT_H
#define GPDL_ANALYSIS_BENCHSTAT_H

#include <stddef.h>
#include <stdint.h>

#define BS_LEVEL_DEFAULT 0.95
#define BS_MAX_REGRESSION_DEFAULT 5.0 /* percent */

/* One counted step. Steps with batch_ns 0 are never given. */
struct bs_step {
	uint64_t batch_ns;
	uint64_t samples; /* >= 1 */
};

/* One run: a trace's counted steps, in order. */
struct bs_run {
	const struct bs_step *step;
	size_t n;
};

/* One side of a comparison: its runs pooled. */
struct bs_pool {
	size_t runs, steps;
	double ips;              /* per second; 0 with no step */
	double median, p90;      /* of the steps' ips */
	double min, max;
	size_t blocks;           /* m */
	double between_sd;       /* tau, in ips; 0 with fewer than 2 runs */
	double level;            /* of the interval, in (0, 1) */
	double se, df;           /* NaN when m < 2 */
	double ci_low, ci_high;  /* NaN when m < 2 */
};

/* Measures the pooled runs (nruns may be 0, runs may have n 0). */
void bs_pool_measure(struct bs_pool *p, const struct bs_run *runs, size_t nruns, double level);
/* 1 when the pool has the 2 blocks an interval needs (2 steps or more). */
int bs_pool_has_ci(const struct bs_pool *p);

enum bs_verdict {
	BS_UNCHANGED,
	BS_SLOWER,
	BS_REGRESSION,
	BS_IMPROVEMENT,
};

struct bs_change {
	double pct, low_pct, high_pct; /* cur against base, percent */
	double se_log, df;             /* of d; df is INFINITY when se_d is 0 */
	double level;
	double max_regression_pct;
	enum bs_verdict verdict;
};

/* Compares cur with base at the level; 0, or -1 (c untouched) when either
 * pool lacks an interval (bs_pool_has_ci). */
int bs_compare(struct bs_change *c, const struct bs_pool *base, const struct bs_pool *cur,
	       double level, double max_regression_pct);
/* "unchanged", "slower", "regression", "improvement". */
const char *bs_verdict_name(enum bs_verdict v);

/* The decimals a report gives rates of about ips: 2 for hundreds of
 * samples/s and more, 4 from 1, 6 below (a few steps/s). */
int bs_ips_decimals(double ips);

/* Student's t quantile: x with P(T <= x) = p, for 0 < p < 1 and df > 0 (df
 * need not be whole; INFINITY gives the normal quantile). */
double bs_t_quantile(double p, double df);
/* The q quantile (0 <= q <= 1) of n >= 1 sorted values, as above. */
double bs_quantile(const double *sorted, size_t n, double q);

#endif
