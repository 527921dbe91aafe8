/*
 * verdict.c - the straggler rule over per-step figures (verdict.h).
 */
#include "lib/analysis/dist/verdict.h"

#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const part_names[DIST_NPARTS] = {
	"computation", "data loading", "host time outside operators", "its own communication",
	"CPU contention",
};

const char *dist_part_name(enum dist_part p)
{
	return p < DIST_NPARTS ? part_names[p] : "?";
}

static const char *const part_briefs[DIST_NPARTS] = {
	"computation", "data loading", "outside operators", "communication", "contention",
};

const char *dist_part_brief(enum dist_part p)
{
	return p < DIST_NPARTS ? part_briefs[p] : "?";
}

void dist_p_words(char *buf, size_t size, double p)
{
	if (p < 1e-6)
		snprintf(buf, size, "p < 1e-06");
	else
		snprintf(buf, size, "p = %.2g", p);
}

double dist_binom_sf(size_t s, size_t m, double q)
{
	if (s == 0)
		return 1;
	if (s > m || q <= 0)
		return 0;
	if (q >= 1)
		return 1;
	/* the terms from s up, in logs: they fall off fast past the mean */
	double lq = log(q), lr = log1p(-q), sum = 0;
	double lc = lgamma((double)m + 1) - lgamma((double)s + 1) - lgamma((double)(m - s) + 1);
	for (size_t i = s; i <= m; i++) {
		double t = exp(lc + (double)i * lq + (double)(m - i) * lr);
		sum += t;
		if (t < sum * 1e-17 && (double)i > (double)m * q)
			break;
		lc += log((double)(m - i)) - log((double)i + 1);
	}
	return sum < 1 ? sum : 1;
}

#define SIGNFLIP_MAX 16 /* the largest values it takes: 2^16 sign patterns */

double dist_signflip_sf(const double *x, size_t m)
{
	/* the SIGNFLIP_MAX largest by size, the earlier first on a tie: which
	 * they are does not depend on the signs, so the test stays exact */
	double a[SIGNFLIP_MAX], v[SIGNFLIP_MAX];
	size_t k = 0;
	for (size_t i = 0; i < m; i++) {
		double ax = fabs(x[i]);
		size_t at = k;
		while (at > 0 && a[at - 1] < ax)
			at--;
		if (at == SIGNFLIP_MAX)
			continue;
		size_t last = k < SIGNFLIP_MAX ? k : SIGNFLIP_MAX - 1;
		for (size_t j = last; j > at; j--) {
			a[j] = a[j - 1];
			v[j] = v[j - 1];
		}
		a[at] = ax;
		v[at] = x[i];
		k += k < SIGNFLIP_MAX;
	}
	if (!k)
		return 1;
	double t = 0;
	for (size_t i = 0; i < k; i++)
		t += v[i];
	const double tol = 1e-9 * (fabs(t) + 1);
	uint32_t total = UINT32_C(1) << k, ge = 0;
	for (uint32_t pat = 0; pat < total; pat++) {
		double s = 0;
		for (size_t i = 0; i < k; i++)
			s += (pat >> i & 1) ? a[i] : -a[i];
		ge += s >= t - tol;
	}
	return (double)ge / (double)total;
}

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The median of v[0..n) (sorted in place). */
static double median_of(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- one step: the ranks in order of busy time ------------------------------ */

struct ranked {
	double busy;
	uint32_t r;
};

static int ranked_cmp(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;
	if (a->busy != b->busy)
		return a->busy < b->busy ? -1 : 1;
	return (a->r > b->r) - (a->r < b->r);
}

/* The ranks of step g sorted by b, and pos[r] each rank's place there. */
static void rank_step(const double *b, uint32_t n, size_t k, size_t g, struct ranked *s,
		      uint32_t *pos)
{
	for (uint32_t r = 0; r < n; r++)
		s[r] = (struct ranked){b[r * k + g], r};
	qsort(s, n, sizeof(*s), ranked_cmp);
	for (uint32_t i = 0; i < n; i++)
		pos[s[i].r] = i;
}

/* The j-th of the others of the rank at place p (the sorted list without it). */
static const struct ranked *other_at(const struct ranked *s, uint32_t p, uint32_t j)
{
	return &s[j < p ? j : j + 1];
}

/* The middle one or two of the n - 1 others of the rank at place p: *a and
 * *b (the same when one). */
static void others_middle(const struct ranked *s, uint32_t n, uint32_t p, const struct ranked **a,
			  const struct ranked **b)
{
	uint32_t m = n - 1;
	*a = other_at(s, p, (m - 1) / 2);
	*b = other_at(s, p, m / 2);
}

/* ---- the rule on one measure of busy time ------------------------------------ */

/* The largest effect of any rank's contention in step g on its own work
 * (b: busy time less contention): its contention (the part of it in busy
 * time), and no more than DIST_CONTENTION_EFFECT of the work it slowed;
 * and the largest whole run-queue time of any rank but `but` where
 * known. */
static void step_contention(const struct dist_steps_in *in, const double *b, size_t g,
			    uint32_t but, double *cont, double *runq)
{
	*cont = *runq = 0;
	for (uint32_t r = 0; r < in->n; r++) {
		size_t at = (size_t)r * in->k + g;
		double effect = fmin(in->part[at * DIST_NPARTS + DIST_CONTENTION],
				     DIST_CONTENTION_EFFECT * fmax(b[at], 0));
		*cont = fmax(*cont, effect);
		if (in->runq && r != but)
			*runq = fmax(*runq, in->runq[at]);
	}
}

/* Whether rank c's excess e in step g may be contention's alone: what the
 * sampling missed of the step's largest contention (DIST_CONTENTION_MISSED
 * of it, of the rank or against it) could make it; or another rank kept
 * off the CPU while in a collective (in what reads as its wait) held the
 * transfer back as long, and its own work, carved of that contention,
 * reads as less than it was (DIST_STARVED of its whole run-queue time). */
static int contended(const struct dist_steps_in *in, const double *b, size_t g, uint32_t c,
		     double e)
{
	double cont, runq;
	step_contention(in, b, g, c, &cont, &runq);
	return (cont > 0 && DIST_CONTENTION_MISSED * cont >= fabs(e)) ||
	       (runq > 0 && DIST_STARVED * runq >= fabs(e));
}

struct rule {
	double *e, *sav; /* [r * k + g] */
	double sigma, theta;
	int32_t cand;
	double cost;     /* the candidate's */
	double p_sign, p_big, p; /* corrected */
	enum dist_kind kind;     /* the test that passed; NONE: neither */
	int material;
	size_t seen, busier, beyond; /* steps tested; e > 0 in; e > theta in */
	double typical;          /* the median of e over them */
	double floor;            /* what typical must exceed for CONSISTENT */
};

static void rule_free(struct rule *u)
{
	free(u->e);
	free(u->sav);
}

/* The rule on busy times b. own: b is busy time less contention, and a
 * step where some rank's contention (up to half its own work) is as large
 * as the candidate's
 * excess says nothing of its own work (what contention the sampling missed,
 * of it or of the others, could make that excess): the sign tests leave it
 * out. */
static void rule_run(struct rule *u, const double *b, const struct dist_steps_in *in,
		     double job_step, int own)
{
	const uint32_t n = in->n;
	const size_t k = in->k;
	memset(u, 0, sizeof(*u));
	u->e = xcalloc(n * k, sizeof(*u->e));
	u->sav = xcalloc(n * k, sizeof(*u->sav));
	struct ranked *s = xmalloc(n * sizeof(*s));
	uint32_t *pos = xmalloc(n * sizeof(*pos));
	for (size_t g = 0; g < k; g++) {
		rank_step(b, n, k, g, s, pos);
		for (uint32_t r = 0; r < n; r++) {
			const struct ranked *x, *y;
			others_middle(s, n, pos[r], &x, &y);
			double me = b[r * k + g];
			u->e[r * k + g] = me - (x->busy + y->busy) / 2;
			double top = other_at(s, pos[r], n - 2)->busy;
			u->sav[r * k + g] = me > top ? me - top : 0;
		}
	}
	free(s);
	free(pos);

	/* the noise, around each rank's own level */
	double *v = xmalloc(n * k * sizeof(*v)), *w = xmalloc(k * sizeof(*w));
	for (uint32_t r = 0; r < n; r++) {
		memcpy(w, &u->e[r * k], k * sizeof(*w));
		double med = median_of(w, k);
		for (size_t g = 0; g < k; g++)
			v[r * k + g] = fabs(u->e[r * k + g] - med);
	}
	u->sigma = 1.4826 * median_of(v, n * k);
	memcpy(v, b, n * k * sizeof(*v));
	double med_busy = median_of(v, n * k);
	free(v);
	free(w);
	u->theta = fmax(DIST_THETA_REL * med_busy, DIST_THETA_SIGMAS * u->sigma);

	u->cand = 0;
	u->cost = -1;
	for (uint32_t r = 0; r < n; r++) {
		double c = 0;
		for (size_t g = 0; g < k; g++)
			c += u->sav[r * k + g];
		c /= (double)k;
		if (c > u->cost) {
			u->cost = c;
			u->cand = (int32_t)r;
		}
	}
	const double *e = &u->e[(size_t)u->cand * k];
	size_t pos_n = 0, neg_n = 0, seen = 0, beyond = 0;
	/* its savings, those of its steps beyond the noise, the largest */
	double s_all = 0, s_big = 0, s_max = 0;
	double *all = xmalloc(k * sizeof(*all)), *big = xmalloc(k * sizeof(*big));
	double *held = xmalloc(k * sizeof(*held));
	size_t nbig = 0, nheld = 0;
	for (size_t g = 0; g < k; g++) {
		size_t at = (size_t)u->cand * k + g;
		/* the shape of its excess, over every step */
		all[g] = e[g];
		beyond += e[g] > u->theta;
		s_all += u->sav[at];
		s_big += e[g] > u->theta ? u->sav[at] : 0;
		s_max = u->sav[at] > s_max ? u->sav[at] : s_max;
		if (own && contended(in, b, g, (uint32_t)u->cand, e[g]))
			continue;
		seen++;
		pos_n += e[g] > 0;
		neg_n += e[g] < 0;
		if (fabs(e[g]) > u->theta)
			big[nbig++] = e[g];
		if (e[g] > u->theta)
			held[nheld++] = e[g];
	}
	double corr = (double)n;
	u->p_sign = fmin(1, corr * dist_binom_sf(pos_n, pos_n + neg_n, 0.5));
	u->p_big = fmin(1, corr * dist_signflip_sf(big, nbig));
	free(big);
	u->material = u->cost > 0 && u->cost >= DIST_MATERIAL * job_step;
	/* intermittent: beyond the noise in fewer than half its steps, which
	 * hold most of what it cost, and named when those steps say so,
	 * whatever the others' jitter makes of the sign test over all; else
	 * consistent: its typical step's excess beyond twice the noise (a rank
	 * busier in most steps by less is within it) */
	double typical = median_of(all, k);
	free(all);
	u->seen = seen;
	u->busier = pos_n;
	u->beyond = beyond;
	u->typical = typical;
	u->floor = fmax(2 * u->sigma, DIST_THETA_REL * med_busy);
	int sig = u->p_sign < DIST_ALPHA || u->p_big < DIST_ALPHA;
	/* (the largest step left out of both: one stall alone makes no
	 * intermittent straggler of a steady one; nor does noise that hides
	 * half of a steady one's steps: its typical step is then as slow as
	 * the ones beyond the noise, not a fraction of them) */
	double held_typical = median_of(held, nheld);
	free(held);
	/* plain: busier in nearly every step it was seen in, by a typical
	 * excess that is a large share of a step's work: a straggler however
	 * loud the noise around it (a load that swings every step) */
	int plain = seen > 0 && (double)pos_n >= DIST_PLAIN_SHARE * (double)seen &&
		    typical > DIST_PLAIN_REL * med_busy;
	int sporadic = beyond * 2 < k && beyond > 1 && (s_big - s_max) * 2 > s_all - s_max &&
		       typical < 0.5 * held_typical;
	if (sporadic)
		u->kind = u->p_big < DIST_ALPHA ? DIST_KIND_INTERMITTENT : DIST_KIND_NONE;
	else if (sig && (typical > u->floor || plain))
		u->kind = DIST_KIND_CONSISTENT;
	else if (u->p_big < DIST_ALPHA)
		u->kind = DIST_KIND_INTERMITTENT;
	else
		u->kind = DIST_KIND_NONE;
	u->p = u->kind == DIST_KIND_INTERMITTENT ? u->p_big : fmin(u->p_sign, u->p_big);
}

/* ---- the figures of the candidate -------------------------------------------- */

/* Which steps the candidate's figures are over (verdict.h), into v->in. */
static void used_steps(struct dist_verdict *v, const struct rule *u, size_t k)
{
	const double *e = &u->e[(size_t)u->cand * k];
	v->used = v->outliers = 0;
	if (u->kind == DIST_KIND_INTERMITTENT) {
		for (size_t g = 0; g < k; g++)
			v->used += v->in[g] = e[g] > u->theta;
		return;
	}
	double *w = xmalloc(k * sizeof(*w));
	memcpy(w, e, k * sizeof(*w));
	double med = median_of(w, k);
	for (size_t g = 0; g < k; g++)
		w[g] = fabs(e[g] - med);
	double fence = fmax(DIST_OUTLIER_SIGMAS * 1.4826 * median_of(w, k), u->theta);
	free(w);
	for (size_t g = 0; g < k; g++) {
		v->in[g] = fabs(e[g] - med) <= fence;
		v->used += v->in[g];
	}
	v->outliers = k - v->used;
}

/* Its busy time, the others' median, the excess by part and the others'
 * wait, on busy time with its parts, over the used steps; the cause among
 * the parts but contention unless with_contention (a rank named for its
 * own work is slow by its own work's largest part). */
static void figures(struct dist_verdict *v, const struct dist_steps_in *in, int with_contention)
{
	const uint32_t n = in->n, c = (uint32_t)v->cand;
	const size_t k = in->k;
	struct ranked *s = xmalloc(n * sizeof(*s));
	uint32_t *pos = xmalloc(n * sizeof(*pos));
	v->busy = v->median = v->excess = v->others_wait = 0;
	memset(v->part, 0, sizeof(v->part));
	for (size_t g = 0; g < k; g++) {
		if (!v->in[g])
			continue;
		rank_step(in->busy, n, k, g, s, pos);
		const struct ranked *x, *y;
		others_middle(s, n, pos[c], &x, &y);
		v->busy += in->busy[c * k + g];
		v->median += (x->busy + y->busy) / 2;
		const double *pc = &in->part[(c * k + g) * DIST_NPARTS];
		const double *px = &in->part[(x->r * k + g) * DIST_NPARTS];
		const double *py = &in->part[(y->r * k + g) * DIST_NPARTS];
		for (int p = 0; p < DIST_NPARTS; p++)
			v->part[p] += pc[p] - (px[p] + py[p]) / 2;
		double wait = 0;
		for (uint32_t r = 0; r < n; r++)
			if (r != c)
				wait += in->wait[r * k + g];
		v->others_wait += wait / (double)(n - 1);
	}
	free(s);
	free(pos);
	double used = v->used ? (double)v->used : 1;
	v->busy /= used;
	v->median /= used;
	v->others_wait /= used;
	v->excess = 0;
	v->cause = DIST_COMP;
	for (int p = 0; p < DIST_NPARTS; p++) {
		v->part[p] /= used;
		v->excess += v->part[p];
		if (v->part[p] > v->part[v->cause] && (p != DIST_CONTENTION || with_contention))
			v->cause = (enum dist_part)p;
	}
}

/* Sets v's candidate and steps from u, and its figures; the cost over all
 * steps on busy time, communication up to the step's least (paced: what
 * the job really lost to the rank). */
static void take(struct dist_verdict *v, const struct rule *u, const struct dist_steps_in *in,
		 const double *paced, int with_contention)
{
	const size_t k = in->k;
	v->cand = u->cand;
	v->kind = u->kind;
	v->p = u->p;
	v->why = !u->material			    ? DIST_WHY_SMALL
		 : u->p_sign >= DIST_ALPHA && u->p_big >= DIST_ALPHA ? DIST_WHY_UNSURE
		 : u->kind == DIST_KIND_NONE		    ? DIST_WHY_WITHIN
							    : DIST_WHY_NONE;
	v->seen = u->seen;
	v->busier = u->busier;
	v->beyond = u->beyond;
	v->typical = u->typical;
	v->floor = u->floor;
	v->theta = u->theta;
	v->sigma = u->sigma;
	/* held back: beyond the noise (a consistent straggler: beyond what its
	 * typical step had to exceed, so that heavy noise does not hide its
	 * steps behind a theta it exceeds on average) */
	double bar = u->kind == DIST_KIND_CONSISTENT ? u->floor : u->theta;
	v->nheld = 0;
	for (size_t g = 0; g < k; g++)
		v->nheld += v->held[g] = u->sav[(size_t)u->cand * k + g] > bar;
	used_steps(v, u, k);
	figures(v, in, with_contention);
	struct rule total;
	rule_run(&total, paced, in, v->job_step, 0);
	double cost = 0;
	for (size_t g = 0; g < k; g++)
		cost += total.sav[(size_t)u->cand * k + g];
	rule_free(&total);
	v->cost = cost / (double)k;
	v->cost_pct = v->job_step > 0 ? 100 * v->cost / v->job_step : 0;
}

void dist_verdict_compute(struct dist_verdict *v, const struct dist_steps_in *in)
{
	memset(v, 0, sizeof(*v));
	v->cand = -1;
	v->k = in->k;
	if (in->n < 2) {
		v->code = DIST_ONE_RANK;
		return;
	}
	if (in->k < DIST_MIN_STEPS) {
		v->code = DIST_FEW_STEPS;
		return;
	}
	const uint32_t n = in->n;
	const size_t k = in->k;
	v->held = xcalloc(k, 1);
	v->in = xcalloc(k, 1);
	for (size_t g = 0; g < k; g++)
		v->job_step += in->job_step[g];
	v->job_step /= (double)k;

	/* busy time less communication beyond the step's least: a
	 * collective's transfer goes at the pace of its slowest rank, so a
	 * rank that spent longer in it than another waited for someone (one
	 * kept off the CPU, whose own time in the call is contention) and did
	 * not work; the rank's own work first: that less contention */
	double *paced = xmalloc(n * k * sizeof(*paced)), *own = xmalloc(n * k * sizeof(*own));
	for (size_t g = 0; g < k; g++) {
		double least = INFINITY;
		for (uint32_t r = 0; r < n; r++)
			least = fmin(least, in->part[((size_t)r * k + g) * DIST_NPARTS + DIST_COMM]);
		for (uint32_t r = 0; r < n; r++) {
			size_t i = (size_t)r * k + g;
			const double *p = &in->part[i * DIST_NPARTS];
			paced[i] = in->busy[i] - (p[DIST_COMM] - least);
			own[i] = paced[i] - p[DIST_CONTENTION];
		}
	}
	struct rule u;
	rule_run(&u, own, in, v->job_step, 1);
	free(own);
	int named = u.kind != DIST_KIND_NONE && u.material;
	take(v, &u, in, paced, 0);
	if (!named) {
		struct rule t;
		rule_run(&t, paced, in, v->job_step, 0);
		if (t.kind != DIST_KIND_NONE && t.material) {
			struct dist_verdict w = *v;
			w.held = xcalloc(k, 1);
			w.in = xcalloc(k, 1);
			take(&w, &t, in, paced, 1);
			if (w.cause == DIST_CONTENTION) {
				dist_verdict_free(v);
				*v = w;
				v->by_contention = 1;
				named = 1;
			} else {
				dist_verdict_free(&w);
			}
		}
		rule_free(&t);
	}
	rule_free(&u);
	free(paced);
	if (!named)
		v->code = DIST_NOISE;
	else if (v->others_wait < v->excess / 2)
		v->code = DIST_UNCONFIRMED;
	else
		v->code = DIST_NAMED;
}

void dist_verdict_free(struct dist_verdict *v)
{
	free(v->held);
	free(v->in);
	v->held = v->in = NULL;
}
