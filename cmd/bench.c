/*
 * bench.c - `gprof-dl bench`: the Perf Summary of one or more traces, their
 * training steps pooled (reader_cost, batch_cost, ips, the reader ratio),
 * the spread of ips over steps, and the CI gate: a comparison against a
 * baseline that fails when ips dropped by more than allowed, with
 * confidence, or fell below a floor.
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
#include "formats/bench/bench_json.h"
#include "lib/analysis/benchstat.h"
#include "lib/analysis/perf.h"
#include "lib/analysis/progress.h"
#include "lib/common/error.h"

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
	"\n"
	"Measure the training steps (ProfileStep ranges) of one or more traces,\n"
	"pooled: the Perf Summary (reader_cost, batch_cost, ips, reader ratio), and\n"
	"the median, p90 and confidence interval of ips. With a baseline, say whether\n"
	"ips changed, and exit 1 when it dropped by more than allowed.\n"
	"\n"
	"  --baseline FILE      a trace, or JSON this command wrote; repeat to pool\n"
	"                       several runs\n"
	"  --max-regression PCT fail when ips dropped by more than PCT percent with\n"
	"                       confidence (default 5)\n"
	"  --min-ips N          fail when the average ips is below N\n"
	"  --confidence PCT     level of the confidence intervals (default 95)\n"
	"  --skip K             leave out the first K steps of each trace as warm-up\n"
	"                       (default 10; never more than half of a trace's steps);\n"
	"                       also --skip-steps\n"
	"  --time-unit UNIT     s (default), ms, us or ns, for the text table\n"
	"  --format FORMAT      text (default), json, or github (for CI benchmark\n"
	"                       actions)\n"
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
};

enum {
	OPT_SKIP_STEPS = 256,
	OPT_TIME_UNIT,
	OPT_FORMAT,
	OPT_BASELINE,
	OPT_MAX_REGRESSION,
	OPT_MIN_IPS,
	OPT_CONFIDENCE,
};

static const struct option bench_options[] = {
	{"skip", required_argument, NULL, OPT_SKIP_STEPS},
	{"skip-steps", required_argument, NULL, OPT_SKIP_STEPS},
	{"time-unit", required_argument, NULL, OPT_TIME_UNIT},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"baseline", required_argument, NULL, OPT_BASELINE},
	{"max-regression", required_argument, NULL, OPT_MAX_REGRESSION},
	{"min-ips", required_argument, NULL, OPT_MIN_IPS},
	{"confidence", required_argument, NULL, OPT_CONFIDENCE},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
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
	while ((c = getopt_long(argc, argv, ":h", bench_options, NULL)) != -1) {
		switch (c) {
		case OPT_SKIP_STEPS:
			o->skip = cmd_parse_skip_steps(optarg);
			break;
		case OPT_TIME_UNIT:
			o->unit = cmd_parse_time_unit(optarg);
			break;
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
		case 'h':
			fputs(bench_usage, stdout);
			return -1;
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_error("no trace file given");
	return optind;
}

/* Loads traces into a and adds their counted steps to side. 0, or -1 after
 * an error message. */
static int load_side(struct analysis *a, struct perf *p, struct bench_side *side, int nfiles,
		     char **files, unsigned skip)
{
	progress_enable(1); /* only shown on a terminal, after a second */
	int loaded = cmd_load_traces(a, nfiles, files, "measured");
	progress_done();
	if (loaded != 0)
		return -1;
	perf_compute(p, a, skip);
	if (p->files_without_steps) {
		error("'%s': no training steps (ProfileStep ranges) to measure",
		      a->store.files[p->first_without_steps].path);
		return -1;
	}
	char err[1024];
	if (bench_side_add_perf(side, p, a, err, sizeof(err)) != 0) {
		error("%s", err);
		return -1;
	}
	return 0;
}

/* The baseline: each file given a trace or a bench JSON object, pooled. The
 * traces are measured with the same skip as the current runs; a JSON
 * object's steps were counted when it was written. */
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
		struct analysis b;
		struct perf p;
		analysis_init(&b);
		memset(&p, 0, sizeof(p));
		rc = load_side(&b, &p, side, ntraces, traces, o->skip);
		perf_free(&p);
		analysis_free(&b);
	}
	free(traces);
	return rc;
}

/* Rates in one report share their decimals, chosen by the measured ips:
 * two for hundreds of samples/s, more for a few steps/s. */
static int ips_decimals = 2;

static void ips_decimals_for(double ips)
{
	ips_decimals = ips >= 100 ? 2 : ips >= 1 ? 4 : 6;
}

static const char *ips_text(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%.*f", ips_decimals, v);
	return buf;
}

/* "'a.gpdl'", "'a.json' and 2 more" */
static const char *given_text(char *buf, size_t size, const struct bench_side *s)
{
	if (s->ngiven == 1)
		snprintf(buf, size, "'%s'", s->given[0]);
	else
		snprintf(buf, size, "'%s' and %zu more", s->given[0], s->ngiven - 1);
	return buf;
}

/* "ips 1234.57 samples/s (95% CI 1220.00 .. 1249.00), median ..., p90 ...,
 * over 120 steps of 3 runs" */
static void pool_line(FILE *out, const char *lead, const struct bs_pool *p, const char *unit)
{
	char v[3][48];
	fprintf(out, "%sips %s %s", lead, ips_text(v[0], sizeof(v[0]), p->ips), unit);
	if (bs_pool_has_ci(p))
		fprintf(out, " (%.0f%% CI %s .. %s)", p->level * 100,
			ips_text(v[1], sizeof(v[1]), p->ci_low), ips_text(v[2], sizeof(v[2]), p->ci_high));
	fprintf(out, ", median %s, p90 %s, over %zu step%s of %zu run%s\n",
		ips_text(v[1], sizeof(v[1]), p->median), ips_text(v[2], sizeof(v[2]), p->p90), p->steps,
		p->steps == 1 ? "" : "s", p->runs, p->runs == 1 ? "" : "s");
}

/* The sentence that says what the comparison found: how much, against
 * what, how sure. */
static void verdict_text(char *buf, size_t size, const struct bs_change *c, const char *base)
{
	double conf = c->level * 100;
	switch (c->verdict) {
	case BS_REGRESSION:
		snprintf(buf, size,
			 "regression: ips fell by %.2f%% (%.0f%% CI %.2f%% to %.2f%%) against %s, more "
			 "than the %g%% allowed, at %.0f%% confidence",
			 -c->pct, conf, -c->high_pct, -c->low_pct, base, c->max_regression_pct, conf);
		break;
	case BS_SLOWER:
		snprintf(buf, size,
			 "slower: ips fell by %.2f%% (%.0f%% CI %.2f%% to %.2f%%) against %s, within "
			 "the %g%% allowed",
			 -c->pct, conf, -c->high_pct, -c->low_pct, base, c->max_regression_pct);
		break;
	case BS_IMPROVEMENT:
		snprintf(buf, size,
			 "improvement: ips rose by %.2f%% (%.0f%% CI %.2f%% to %.2f%%) against %s", c->pct,
			 conf, c->low_pct, c->high_pct, base);
		break;
	case BS_UNCHANGED:
		snprintf(buf, size,
			 "no significant change: ips %+.2f%% (%.0f%% CI %+.2f%% to %+.2f%%) against %s",
			 c->pct, conf, c->low_pct, c->high_pct, base);
		break;
	}
}

static void bench_text(const struct bench_report *r, const struct bench_opts *o, FILE *out)
{
	struct table *t = perf_table(r->perf, "perf", "Perf Summary", r->a->store.nfiles);
	struct table_style st = {.unit = o->unit};
	table_render_text(t, out, &st);
	table_free(t);
	const char *unit = perf_ips_unit(r->perf);
	fputc('\n', out);
	pool_line(out, "Measured: ", r->pool, unit);
	if (r->change) {
		char base[512], verdict[1024];
		given_text(base, sizeof(base), r->base);
		fprintf(out, "Baseline %s: ", base);
		pool_line(out, "", r->base_pool, unit);
		fprintf(out, "Change in ips: %+.2f%% (%.0f%% CI %+.2f%% .. %+.2f%%)\n", r->change->pct,
			r->change->level * 100, r->change->low_pct, r->change->high_pct);
		verdict_text(verdict, sizeof(verdict), r->change, base);
		fprintf(out, "Verdict: %s\n", verdict);
	}
	if (r->has_min_ips) {
		char v[48];
		fprintf(out, "Floor: ips %s %s %s --min-ips %g\n",
			ips_text(v, sizeof(v), r->pool->ips), unit,
			r->fails_min_ips ? "is below" : "meets", r->min_ips);
	}
}

/* After the report: why the gate failed, on stderr. */
static void gate_messages(const struct bench_report *r)
{
	const char *unit = perf_ips_unit(r->perf);
	char v[2][48];
	if (r->fails_regression) {
		const struct bs_change *c = r->change;
		char base[512];
		given_text(base, sizeof(base), r->base);
		error("ips regressed by %.2f%% (%.0f%% CI %.2f%% to %.2f%%) against %s: %s %s, was %s; "
		      "more than --max-regression %g%% at %.0f%% confidence",
		      -c->pct, c->level * 100, -c->high_pct, -c->low_pct, base,
		      ips_text(v[0], sizeof(v[0]), r->pool->ips), unit,
		      ips_text(v[1], sizeof(v[1]), r->base_pool->ips), c->max_regression_pct,
		      c->level * 100);
	}
	if (r->fails_min_ips)
		error("ips %s %s is below --min-ips %g (average over %zu counted steps)",
		      ips_text(v[0], sizeof(v[0]), r->pool->ips), unit, r->min_ips, r->pool->steps);
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
	struct analysis a;
	struct perf p;
	struct bench_side cur = {0}, base = {0};
	struct bs_pool pool, base_pool;
	struct bs_change change;
	struct bench_report r = {.a = &a, .perf = &p, .cur = &cur, .pool = &pool,
				 .has_min_ips = o.has_min_ips, .min_ips = o.min_ips};
	analysis_init(&a);
	memset(&p, 0, sizeof(p));
	int rc = 1;
	for (int i = first; i < argc; i++)
		bench_side_given(&cur, argv[i]);
	if (load_side(&a, &p, &cur, argc - first, argv + first, o.skip) != 0)
		goto out;
	bs_pool_measure(&pool, cur.runs, cur.nruns, o.level);
	ips_decimals_for(pool.ips);
	if (o.nbaseline) {
		if (load_baseline(&o, &base) != 0)
			goto out;
		if (base.by_samples != cur.by_samples) {
			char name[512];
			error("%s counts ips in %s, the runs measured in %s: they cannot be compared",
			      given_text(name, sizeof(name), &base), base.by_samples ? "samples/s" : "steps/s",
			      perf_ips_unit(&p));
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
	perf_free(&p);
	analysis_free(&a);
	free(o.baseline);
	return rc;
}
