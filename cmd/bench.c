/*
 * bench.c - `gprof-dl bench`: the Perf Summary of one or more traces, their
 * training steps pooled (reader_cost, batch_cost, ips, the reader ratio),
 * the spread of ips over steps, and the CI gate: a comparison against a
 * baseline that fails when ips dropped by more than allowed, with
 * confidence, or fell below a floor.
 *
 * Files that hold ranks are a distributed job (job.h): the files given on
 * one side are one job, measured rank by rank and as a whole (jobperf.h),
 * and the gate is on the job's ips. Files of no rank are pooled as before.
 *
 *   gprof-dl bench FILE... [--baseline FILE]... [--max-regression PCT]
 *                  [--min-ips N] [--confidence PCT] [--skip K]
 *                  [--time-unit U] [--format text|json|github]
 *
 * The step numbers come from perf.h, the statistics from benchstat.h, the
 * files from bench_json.h; gprof-dl-bench(1) documents all three.
 *
 * Exit status: 0 printed, and the gate (if any) passed; 1 the gate failed
 * (the reason on stderr, after the report), or a file that cannot be read,
 * holds no training step or too few to compare, or output that cannot be
 * written; 2 usage.
 */
#include "cmd/cmd.h"
#include "lib/analysis/bench/bench_json.h"
#include "lib/analysis/bench/benchstat.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/dist/jobperf.h"
#include "lib/analysis/views/perf.h"
#include "common/progress.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char bench_usage[] =
	"usage: gprof-dl bench FILE... [--baseline FILE]... [--max-regression PCT]\n"
	"                      [--min-ips N] [--confidence PCT] [--skip K]\n"
	"                      [--time-unit s|ms|us|ns] [--format text|json|github]\n"
	"                      [--mixed-jobs]\n"
	"\n"
	"Measure the training steps (ProfileStep ranges) of one or more traces,\n"
	"pooled: the Perf Summary (reader_cost, batch_cost, ips, reader ratio), and\n"
	"the median, p90 and confidence interval of ips. With a baseline, say whether\n"
	"ips changed, and exit 1 when it dropped by more than allowed.\n"
	"Files that hold the ranks of a distributed job are one job: each rank's ips\n"
	"and the job's (all ranks' samples over the job's wall time, step by step),\n"
	"the gate on the job's. Files of different jobs are refused.\n"
	"\n"
	"  --baseline FILE      a trace, or JSON this command wrote; repeat to pool\n"
	"                       several runs (the baseline's traces of a job are one\n"
	"                       job: give several runs of a job as their JSON)\n"
	"  --max-regression PCT fail when ips dropped by more than PCT percent with\n"
	"                       confidence (default 5)\n"
	"  --min-ips N          fail when the average ips is below N\n"
	"  --confidence PCT     level of the confidence intervals (default 95)\n"
	"  --skip K, --skip-steps K\n"
	"                       leave out the first K steps of each trace as warm-up\n"
	"                       (default 10; never more than half of a trace's steps)\n"
	"  --time-unit UNIT     s (default), ms, us or ns, for the text table\n"
	"  --format FORMAT      text (default), json, or github (for CI benchmark\n"
	"                       actions)\n"
	"  --mixed-jobs         take rank files of different jobs (world sizes, runs)\n"
	"                       as one job all the same\n"
	"  -h, --help           show this help\n"
	"\n"
	"See gprof-dl-bench(1) for the definitions and the JSON object.\n";

enum bench_format {
	BENCH_TEXT,
	BENCH_JSON,
	BENCH_GITHUB,
};

struct bench_opts {
	unsigned skip;
	enum time_unit unit;
	enum bench_format format;
	char **baseline;
	size_t nbaseline;
	double max_regression; /* percent */
	int has_min_ips;
	double min_ips;
	double level; /* in (0, 1) */
	unsigned job_flags; /* job_open()'s */
};

enum {
	OPT_FORMAT = 256,
	OPT_BASELINE,
	OPT_MAX_REGRESSION,
	OPT_MIN_IPS,
	OPT_CONFIDENCE,
};

static const struct option bench_options[] = {
	{"skip", required_argument, NULL, CMD_OPT_SKIP_STEPS},
	CMD_OPTIONS_JOB,
	CMD_OPTION_TIME_UNIT,
	{"format", required_argument, NULL, OPT_FORMAT},
	{"baseline", required_argument, NULL, OPT_BASELINE},
	{"max-regression", required_argument, NULL, OPT_MAX_REGRESSION},
	{"min-ips", required_argument, NULL, OPT_MIN_IPS},
	{"confidence", required_argument, NULL, OPT_CONFIDENCE},
	CMD_OPTIONS_END,
};

/* A finite number within [lo, hi] (open ends where said), or a usage error. */
static double parse_number(const char *opt, const char *s, double lo, int lo_open, double hi,
			   int hi_open, const char *what)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < lo || (lo_open && v == lo) || v > hi ||
	    (hi_open && v == hi))
		usage_error("invalid %s '%s' (%s)", opt, s, what);
	return v;
}

/* Parses the options into o; returns the index of the first file in argv,
 * or -1 after --help. */
static int bench_parse(int argc, char **argv, struct bench_opts *o)
{
	int c;
	opterr = 0;
	optind = 1;
	while ((c = cmd_getopt_long(argc, argv, ":h", bench_options, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (strcmp(optarg, "text") == 0)
				o->format = BENCH_TEXT;
			else if (strcmp(optarg, "json") == 0)
				o->format = BENCH_JSON;
			else if (strcmp(optarg, "github") == 0)
				o->format = BENCH_GITHUB;
			else
				usage_error("unknown format '%s' (text, json or github)", optarg);
			break;
		case OPT_BASELINE:
			o->baseline = xrealloc(o->baseline, (o->nbaseline + 1) * sizeof(*o->baseline));
			o->baseline[o->nbaseline++] = optarg;
			break;
		case OPT_MAX_REGRESSION:
			o->max_regression = parse_number("--max-regression", optarg, 0, 0, 100, 1,
							 "a percentage from 0 to below 100");
			break;
		case OPT_MIN_IPS:
			o->min_ips = parse_number("--min-ips", optarg, 0, 1, INFINITY, 0,
						  "a positive number of samples or steps per second");
			o->has_min_ips = 1;
			break;
		case OPT_CONFIDENCE:
			o->level = parse_number("--confidence", optarg, 50, 0, 100, 1,
						"a percentage from 50 to below 100") / 100;
			break;
		default:
			if (cmd_job_option(c, &o->skip, &o->job_flags, &o->unit))
				break;
			if (cmd_common_option(c, argv, bench_usage, NULL, NULL) < 0)
				return -1;
		}
	}
	if (optind >= argc)
		usage_error("no trace file given");
	return optind;
}

/* One side measured: traces of no rank pooled (a, p), or a job (jp). */
struct bench_meas {
	struct analysis a;
	struct perf p;
	struct jobperf jp;
	int is_job;
};

static void meas_init(struct bench_meas *m)
{
	memset(m, 0, sizeof(*m));
	analysis_init(&m->a);
}

static void meas_free(struct bench_meas *m)
{
	perf_free(&m->p);
	jobperf_free(&m->jp);
	analysis_free(&m->a);
}

/* Traces of no rank: loaded together, their counted steps one run per file. */
static int measure_pooled(struct bench_meas *m, struct bench_side *side, int nfiles,
			  char **files, unsigned skip)
{
	int loaded = job_load_files(&m->a, nfiles, files, "measured");
	progress_done();
	if (loaded != 0)
		return -1;
	perf_compute(&m->p, &m->a, skip);
	if (m->p.files_without_steps) {
		error("'%s': no training steps (ProfileStep ranges) to measure",
		      m->a.store.files[m->p.first_without_steps].path);
		return -1;
	}
	char err[1024];
	if (bench_side_add_perf(side, &m->p, &m->a, err, sizeof(err)) != 0) {
		error("%s", err);
		return -1;
	}
	return 0;
}

/* Measures the files of one side and adds their steps to it: a job when
 * they hold ranks (one run), else the traces pooled (a run each). 0, or -1
 * after an error message. */
static int measure_side(struct bench_meas *m, struct bench_side *side, int nfiles, char **files,
			unsigned skip, unsigned job_flags)
{
	char err[1024];
	struct job j;
	progress_enable(1); /* only shown on a terminal, after a second */
	if (job_open(&j, nfiles, files, job_flags, err, sizeof(err)) != 0) {
		progress_done();
		/* two runs of one job given as one side */
		if (nfiles > 1 && strncmp(err, "the same rank ", 14) == 0)
			error("%s: the files of one side are one job (several runs of a job are "
			      "compared through their JSON, see gprof-dl-bench(1))",
			      err);
		else
			error("%s", err);
		return -1;
	}
	if (!j.nranks) {
		job_free(&j);
		return measure_pooled(m, side, nfiles, files, skip);
	}
	m->is_job = 1;
	int rc = jobperf_measure(&m->jp, &j, skip, "measured", err, sizeof(err));
	progress_done();
	if (rc == 0 && bench_side_add_job(side, &m->jp, j.files[0].path, err, sizeof(err)) != 0)
		rc = -1;
	if (rc)
		error("%s", err);
	job_free(&j);
	return rc;
}

/* The baseline: each file given a trace or a bench JSON object, pooled. The
 * traces are measured with the same skip as the current runs (a job, when
 * they hold ranks); a JSON object's steps were counted when it was written. */
static int load_baseline(const struct bench_opts *o, struct bench_side *side)
{
	char **traces = xmalloc(o->nbaseline * sizeof(*traces));
	int ntraces = 0, rc = 0;
	char err[1024];
	for (size_t i = 0; i < o->nbaseline && rc == 0; i++) {
		bench_side_given(side, o->baseline[i]);
		if (!bench_json_sniff(o->baseline[i])) {
			traces[ntraces++] = o->baseline[i];
			continue;
		}
		size_t before = side->nruns;
		if (bench_json_read(side, o->baseline[i], err, sizeof(err)) != 0) {
			error("%s", err);
			rc = -1;
		} else if (side->nruns == before) {
			error("'%s': no counted steps in its runs", o->baseline[i]);
			rc = -1;
		}
	}
	if (rc == 0 && ntraces) {
		struct bench_meas m;
		meas_init(&m);
		rc = measure_side(&m, side, ntraces, traces, o->skip, o->job_flags);
		meas_free(&m);
	}
	free(traces);
	return rc;
}

/* Rates in one report share their decimals, chosen by the measured ips:
 * two for hundreds of samples/s, more for a few steps/s. */
static int ips_decimals = 2;

static void ips_decimals_for(double ips)
{
	ips_decimals = bs_ips_decimals(ips);
}

static const char *ips_text(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%.*f", ips_decimals, v);
	return buf;
}

/* "'a.gpdl'", "'a.json' and 2 more" */
static const char *given_text(char *buf, size_t size, const struct bench_side *s)
{
	char name[TEXT_CLEAN_SIZE / 4]; /* file names: terminal text */
	text_clean(name, sizeof(name), s->given[0]);
	if (s->ngiven == 1)
		snprintf(buf, size, "'%s'", name);
	else
		snprintf(buf, size, "'%s' and %zu more", name, s->ngiven - 1);
	return buf;
}

/* " (a job of 2 ranks)", " (jobs of 4 ranks)", " (2 of them jobs)": what a
 * side's runs were made by, when jobs made some. */
static void runs_of_jobs(FILE *out, const struct bench_side *s)
{
	size_t jobs = 0;
	uint32_t ranks = 0;
	int same = 1;
	for (size_t i = 0; i < s->nruns; i++) {
		if (!s->run_ranks[i])
			continue;
		same &= !jobs || s->run_ranks[i] == ranks;
		ranks = s->run_ranks[i];
		jobs++;
	}
	if (!jobs)
		return;
	if (jobs < s->nruns)
		fprintf(out, " (%zu of them jobs)", jobs);
	else if (!same)
		fputs(" (jobs)", out);
	else
		fprintf(out, " (%s of %u rank%s)", jobs == 1 ? "a job" : "jobs", ranks,
			ranks == 1 ? "" : "s");
}

/* "ips 1234.57 samples/s (95% CI 1220.00 .. 1249.00), median ..., p90 ...,
 * over 120 steps of 3 runs", and who made the runs when jobs did */
static void pool_line(FILE *out, const char *lead, const struct bs_pool *p, const char *unit,
		      const struct bench_side *s)
{
	char v[3][48];
	fprintf(out, "%sips %s %s", lead, ips_text(v[0], sizeof(v[0]), p->ips), unit);
	if (bs_pool_has_ci(p))
		fprintf(out, " (%.0f%% CI %s .. %s)", p->level * 100,
			ips_text(v[1], sizeof(v[1]), p->ci_low), ips_text(v[2], sizeof(v[2]), p->ci_high));
	fprintf(out, ", median %s, p90 %s, over %zu step%s of %zu run%s",
		ips_text(v[1], sizeof(v[1]), p->median), ips_text(v[2], sizeof(v[2]), p->p90), p->steps,
		p->steps == 1 ? "" : "s", p->runs, p->runs == 1 ? "" : "s");
	runs_of_jobs(out, s);
	fputc('\n', out);
}

/* The sentence that says what the comparison found: how much, against
 * what, how sure. */
static void verdict_text(char *buf, size_t size, const struct bs_change *c, const char *base,
			 const char *what)
{
	double conf = c->level * 100;
	switch (c->verdict) {
	case BS_REGRESSION:
		snprintf(buf, size,
			 "regression: %s fell by %.2f%% (%.0f%% CI %.2f%% to %.2f%%) against %s, more "
			 "than the %g%% allowed, at %.0f%% confidence",
			 what, -c->pct, conf, -c->high_pct, -c->low_pct, base, c->max_regression_pct,
			 conf);
		break;
	case BS_SLOWER:
		snprintf(buf, size,
			 "slower: %s fell by %.2f%% (%.0f%% CI %.2f%% to %.2f%%) against %s, within "
			 "the %g%% allowed",
			 what, -c->pct, conf, -c->high_pct, -c->low_pct, base, c->max_regression_pct);
		break;
	case BS_IMPROVEMENT:
		snprintf(buf, size,
			 "improvement: %s rose by %.2f%% (%.0f%% CI %.2f%% to %.2f%%) against %s", what,
			 c->pct, conf, c->low_pct, c->high_pct, base);
		break;
	case BS_UNCHANGED:
		snprintf(buf, size,
			 "no significant change: %s %+.2f%% (%.0f%% CI %+.2f%% to %+.2f%%) against %s",
			 what, c->pct, conf, c->low_pct, c->high_pct, base);
		break;
	}
}

/* "ips", or "job ips" when the files measured are a job. */
static const char *ips_what(const struct bench_report *r)
{
	return r->job ? "job ips" : "ips";
}

static void bench_text(const struct bench_report *r, const struct bench_opts *o, FILE *out)
{
	struct table_style st = {.unit = o->unit};
	struct table *t = r->job ? jobperf_table(r->job, "perf", "Perf Summary")
				 : perf_table(r->perf, "perf", "Perf Summary", (uint32_t)r->nfiles);
	table_render_text(t, out, &st);
	table_free(t);
	if (r->job) {
		fputc('\n', out);
		t = jobperf_ranks_table(r->job);
		table_render_text(t, out, &st);
		table_free(t);
	}
	const char *unit = perf_ips_unit(r->perf), *what = ips_what(r);
	fputc('\n', out);
	pool_line(out, r->job ? "Measured: job " : "Measured: ", r->pool, unit, r->cur);
	if (r->change) {
		char base[512], verdict[1024];
		given_text(base, sizeof(base), r->base);
		fprintf(out, "Baseline %s: ", base);
		pool_line(out, "", r->base_pool, unit, r->base);
		fprintf(out, "Change in %s: %+.2f%% (%.0f%% CI %+.2f%% .. %+.2f%%)\n", what,
			r->change->pct, r->change->level * 100, r->change->low_pct, r->change->high_pct);
		verdict_text(verdict, sizeof(verdict), r->change, base, what);
		fprintf(out, "Verdict: %s\n", verdict);
	}
	if (r->has_min_ips) {
		char v[48];
		fprintf(out, "Floor: %s %s %s %s --min-ips %g\n", what,
			ips_text(v, sizeof(v), r->pool->ips), unit,
			r->fails_min_ips ? "is below" : "meets", r->min_ips);
	}
}

/* After the report: why the gate failed, on stderr. */
static void gate_messages(const struct bench_report *r)
{
	const char *unit = perf_ips_unit(r->perf), *what = ips_what(r);
	char v[2][48];
	if (r->fails_regression) {
		const struct bs_change *c = r->change;
		char base[512];
		given_text(base, sizeof(base), r->base);
		error("%s regressed by %.2f%% (%.0f%% CI %.2f%% to %.2f%%) against %s: %s %s, was %s; "
		      "more than --max-regression %g%% at %.0f%% confidence",
		      what, -c->pct, c->level * 100, -c->high_pct, -c->low_pct, base,
		      ips_text(v[0], sizeof(v[0]), r->pool->ips), unit,
		      ips_text(v[1], sizeof(v[1]), r->base_pool->ips), c->max_regression_pct,
		      c->level * 100);
	}
	if (r->fails_min_ips)
		error("%s %s %s is below --min-ips %g (average over %zu counted %ssteps)", what,
		      ips_text(v[0], sizeof(v[0]), r->pool->ips), unit, r->min_ips, r->pool->steps,
		      r->job ? "job " : "");
}

/* Too few steps for an interval on one side: nothing to judge with. */
static void too_few_steps(const struct bench_side *s, const struct bs_pool *p)
{
	char name[512];
	given_text(name, sizeof(name), s);
	error("%s: %zu counted step%s; a comparison needs at least 2 on each side (lower --skip?)",
	      name, p->steps, p->steps == 1 ? "" : "s");
}

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o = {.skip = PERF_SKIP_DEFAULT,
			       .unit = TIME_UNIT_S,
			       .format = BENCH_TEXT,
			       .max_regression = BS_MAX_REGRESSION_DEFAULT,
			       .level = BS_LEVEL_DEFAULT};
	int first = bench_parse(argc, argv, &o);
	if (first < 0) {
		free(o.baseline);
		return 0;
	}
	struct bench_meas m;
	struct bench_side cur = {0}, base = {0};
	struct bs_pool pool, base_pool;
	struct bs_change change;
	struct bench_report r = {.files = argv + first, .nfiles = (size_t)(argc - first),
				 .cur = &cur, .pool = &pool, .has_min_ips = o.has_min_ips,
				 .min_ips = o.min_ips};
	meas_init(&m);
	int rc = 1;
	for (int i = first; i < argc; i++)
		bench_side_given(&cur, argv[i]);
	if (measure_side(&m, &cur, argc - first, argv + first, o.skip, o.job_flags) != 0)
		goto out;
	r.perf = m.is_job ? &m.jp.perf : &m.p;
	r.job = m.is_job ? &m.jp : NULL;
	bs_pool_measure(&pool, cur.runs, cur.nruns, o.level);
	ips_decimals_for(pool.ips);
	if (o.nbaseline) {
		if (load_baseline(&o, &base) != 0)
			goto out;
		if (base.by_samples != cur.by_samples) {
			char name[512];
			error("%s counts ips in %s, the runs measured in %s: they cannot be compared",
			      given_text(name, sizeof(name), &base), base.by_samples ? "samples/s" : "steps/s",
			      perf_ips_unit(r.perf));
			goto out;
		}
		bs_pool_measure(&base_pool, base.runs, base.nruns, o.level);
		if (!bs_pool_has_ci(&pool) || !bs_pool_has_ci(&base_pool)) {
			if (!bs_pool_has_ci(&pool))
				too_few_steps(&cur, &pool);
			else
				too_few_steps(&base, &base_pool);
			goto out;
		}
		bs_compare(&change, &base_pool, &pool, o.level, o.max_regression);
		r.base = &base;
		r.base_pool = &base_pool;
		r.change = &change;
		r.fails_regression = change.verdict == BS_REGRESSION;
	}
	r.fails_min_ips = o.has_min_ips && pool.ips < o.min_ips;
	int werr = 0;
	if (o.format == BENCH_JSON)
		werr = bench_json_write(stdout, &r);
	else if (o.format == BENCH_GITHUB)
		werr = bench_github_write(stdout, &r);
	else
		bench_text(&r, &o, stdout);
	if (fflush(stdout) != 0 || ferror(stdout) || werr) {
		error("cannot write the report: %s", strerror(errno ? errno : EIO));
		goto out;
	}
	gate_messages(&r);
	rc = r.fails_regression || r.fails_min_ips;
out:
	bench_side_free(&cur);
	bench_side_free(&base);
	meas_free(&m);
	free(o.baseline);
	return rc;
}
