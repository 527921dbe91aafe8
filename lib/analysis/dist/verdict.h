/*
 * verdict.h - which rank held a synchronous job back, how sure that is, in
 * which steps, by what cause, and what it cost the job: the Distributed
 * view's straggler rule (gprof-dl-summary(1) says the same to users),
 * computed from per-step figures alone, so that its false-claim and miss
 * rates can be measured on synthetic noise as well as on real jobs.
 *
 * The input: n ranks, k compared steps (step g of every rank is the same
 * training step: one paired observation), for each rank and step its busy
 * time (the step's time minus its wait in collectives) split into disjoint
 * parts that add up to it (enum dist_part), its wait, and the job's time
 * for each step.
 *
 * The rule, per step g and rank r:
 *   m(r,g)  the median of the other ranks' busy time in step g; its parts
 *           are those of the middle rank (the mean of the two middle ones),
 *           so that the excess below splits exactly into parts
 *   e(r,g)  = busy(r,g) - m(r,g), the excess
 *   s(r,g)  = max(0, busy(r,g) - the largest busy of the others): what the
 *           job would have saved in step g had rank r been as fast as the
 *           median of the others (the next slowest then sets the pace)
 * and over the job:
 *   sigma   the noise: 1.4826 x the median over ranks and steps of
 *           |e(r,g) - the median over g of e(r,.)| (a robust standard
 *           deviation of the excess around each rank's own level)
 *   theta   = max(5 % of the median busy time, 4 sigma): beyond it a step's
 *           excess is more than noise
 *   cost(r) = the mean over the steps of s(r,g)
 * The candidate is the rank of the largest cost. It is named when
 *   - its cost is material: at least 5 % of the job's mean step, and
 *   - it is significant at the 5 % level after a Bonferroni correction for
 *     the n candidates (p below 0.05 / n): the sign test over all steps
 *     (e(c,g) > 0 against < 0), or the sign-flip test (Fisher-Pitman, on
 *     the excesses' sizes, dist_signflip_sf()) over the steps whose
 *     |e(c,g)| exceeds theta: a few large excesses of one rank against
 *     small ones of the others say more than their count. (The two tests
 *     look at the same steps; that they are two is not corrected for: the
 *     false-claim rates in tests/analysis/test_verdict.c and
 *     bench/dist/verdicts are measured with it.)
 *     When its excess exceeds theta in fewer than half the steps, those
 *     hold most of its savings and its median excess is less than half of
 *     theirs, it is INTERMITTENT and only the second test can name it (one
 *     burst beside a small steady excess names nobody); otherwise it is
 *     CONSISTENT when the median of e(c,.) exceeds 2 sigma and 5 % of the
 *     median busy time (a rank busier in most steps by less is within the
 *     noise), else INTERMITTENT when the second test holds;
 *   - the others wait for it: their mean wait over the steps below is at
 *     least half of its excess there.
 * The steps its figures are over: for a consistent straggler every step
 * but the outliers (|e(c,g) - its median| beyond 5 robust standard
 * deviations of e(c,.) and beyond theta: one long stall does not hide or
 * swell a constant excess); for an intermittent one the steps where
 * e(c,g) > theta. "Held back" steps, listed for users: s(c,g) > theta (a
 * consistent straggler's: s(c,g) > the bar its median excess cleared).
 *
 * CPU contention (time the rank's step thread was runnable but not
 * running: another program took its CPU) is no fault of the rank's own
 * work. The rule runs first on busy time less contention (its sign tests
 * leaving out the steps where half of some rank's contention is as large as
 * the excess: the sampling sees the step thread's run-queue time, not the
 * other threads' nor the caches'), and a rank it
 * names is slow by the part of its own work with the largest excess; when
 * it names nobody, the rule runs on busy time and names a rank only when
 * its largest part is contention. All parts are given, and they add up to
 * the excess exactly.
 */
#ifndef GPDL_ANALYSIS_DIST_VERDICT_H
#define GPDL_ANALYSIS_DIST_VERDICT_H

#include <stddef.h>
#include <stdint.h>

/* The parts of a step's busy time, disjoint; the order of the facts'
 * straggler_cause numbers. */
enum dist_part {
	DIST_COMP,       /* computation: operators (kernels on a GPU rank) */
	DIST_DATA,       /* data loading: Dataloader ranges */
	DIST_HOST,       /* host time outside operators: the rest */
	DIST_COMM,       /* its own communication, not overlapped and not wait */
	DIST_CONTENTION, /* CPU contention: runnable but not running */
	DIST_NPARTS
};

#define DIST_ALPHA 0.05         /* family-wise level of a verdict */
#define DIST_MATERIAL 0.05      /* a straggler costs at least this share of the job's step */
#define DIST_THETA_REL 0.05     /* theta: at least this share of the median busy time */
#define DIST_THETA_SIGMAS 4.0   /* ... and this many sigmas */
#define DIST_PLAIN_SHARE 0.9     /* consistent however loud the noise: busier in this share */
#define DIST_PLAIN_REL 0.5       /* ... of its steps by a typical excess of this share of busy */
#define DIST_OUTLIER_SIGMAS 5.0 /* a consistent straggler's outlier steps */
#define DIST_MIN_STEPS 3        /* fewer compared steps: no verdict */
#define DIST_CONTENTION_MISSED 1.0 /* how much of a step's contention its effects may exceed
				    * what the sampling saw by (see below) */
#define DIST_CONTENTION_EFFECT 0.5 /* ... and at most this share of the work it slowed: a
				    * preempted thread's time on the CPU grows by the caches
				    * it refills (up to 50 % measured on a 2-core VM) */
#define DIST_STARVED 1.5 /* how much a rank kept off the CPU in a collective may make another's
			  * excess, of its whole run-queue time (verdict.c) */

struct dist_steps_in {
	uint32_t n;             /* ranks */
	size_t k;               /* compared steps */
	const double *busy;     /* [r * k + g], ns */
	const double *part;     /* [(r * k + g) * DIST_NPARTS + p], adding up to busy */
	const double *wait;     /* [r * k + g], ns */
	const double *job_step; /* [g]: the job's time for step g, ns */
	const double *runq;     /* [r * k + g], ns: the step thread's whole run-queue time in the
				 * step, in its waits too (the contention part is what of it
				 * fell in busy time); NULL: only the contention part is known */
};

enum dist_verdict_code {
	DIST_ONE_RANK,    /* fewer than two ranks with steps */
	DIST_NO_STEPS,    /* a rank has no steps (set by the caller) */
	DIST_FEW_STEPS,   /* fewer than DIST_MIN_STEPS compared steps */
	DIST_NOISE,       /* nobody held the job back beyond the noise */
	DIST_UNCONFIRMED, /* an excess, but the others do not wait for it */
	DIST_NAMED,
};

enum dist_kind { DIST_KIND_NONE, DIST_KIND_CONSISTENT, DIST_KIND_INTERMITTENT };

/* Why the candidate is not named (DIST_NOISE). */
enum dist_why {
	DIST_WHY_NONE,
	DIST_WHY_SMALL,  /* its cost is below DIST_MATERIAL of the job's step */
	DIST_WHY_UNSURE, /* neither sign test is significant */
	DIST_WHY_WITHIN, /* significant, but its typical excess within the noise and
			  * too few beyond it */
};

struct dist_verdict {
	enum dist_verdict_code code;
	enum dist_kind kind;        /* of the candidate, named or not */
	int32_t cand;               /* rank index with the largest cost; -1 none */
	double p;                   /* the candidate's corrected p-value (<= 1) */
	enum dist_why why;          /* DIST_NOISE: why not named */
	size_t seen, busier, beyond; /* steps tested, with e > 0, with e > theta */
	double typical, floor;      /* its median excess, and what it must exceed */
	double theta, sigma;        /* ns */
	size_t k;                   /* compared steps */
	size_t used;                /* steps the figures below are over */
	size_t outliers;            /* consistent: steps left out */
	uint8_t *held;              /* [k]: 1 where the candidate held the job back */
	size_t nheld;
	uint8_t *in;                /* [k]: 1 where a step is one of the used ones */
	/* over the used steps, per step */
	double busy, median, excess; /* its busy time, the others' median, the difference */
	double part[DIST_NPARTS];   /* the excess by part: they add up to excess */
	double others_wait;         /* the others' mean wait */
	enum dist_part cause;       /* the part of the largest excess */
	/* over all compared steps */
	double cost;                /* ns per step the job would save */
	double job_step;            /* the job's mean step, ns */
	double cost_pct;            /* cost / job_step, percent */
	int by_contention;          /* named on busy time with contention (see above) */
};

/* Applies the rule; v is overwritten (dist_verdict_free() it). */
void dist_verdict_compute(struct dist_verdict *v, const struct dist_steps_in *in);
void dist_verdict_free(struct dist_verdict *v);

/* P(X >= s) for X ~ Binomial(m, q). */
double dist_binom_sf(size_t s, size_t m, double q);
/* The sign-flip test (Fisher-Pitman), exact, on the 16 largest of
 * x[0..m) by size (the earlier first on a tie; all when m <= 16): the
 * share of their 2^16 sign patterns s for which the sum of s_i |x_i| is
 * at least their sum (to within 1e-9 (|sum| + 1)). Which values it takes
 * does not depend on their signs, so it stays exact; the smaller ones
 * would add little. 1 when m is 0. */
double dist_signflip_sf(const double *x, size_t m);

/* "computation", "data loading", "host time outside operators", "its own
 * communication", "CPU contention". */
const char *dist_part_name(enum dist_part p);
/* The same in a table's cell: "computation", "data loading", "outside
 * operators", "communication", "contention". */
const char *dist_part_brief(enum dist_part p);
/* A verdict's p-value as the Distributed view and advise say it: "p =
 * 0.016", "p < 1e-06". */
void dist_p_words(char *buf, size_t size, double p);

#endif
