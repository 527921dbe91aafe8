/*
 * bench_json.h - the files of `gprof-dl bench`: the JSON object it writes
 * (schema "gprof-dl-bench/1", gprof-dl-bench(1) documents every key), which
 * is read back as a baseline, and the array that CI benchmark actions read
 * (--format github).
 *
 * A baseline must give back exactly what its traces gave, so the object
 * holds every counted step of every run ("runs": batch_ns and samples per
 * step, integers), not only the statistics: a comparison against the JSON
 * and one against the traces it was written from agree to the last digit.
 *
 * A distributed job (jobperf.h) writes its figures where a trace's go (the
 * job's Perf Summary, ips and interval), its step series as one run that
 * says how many ranks made it ("ranks" in the run), and a "ranks" array
 * with each rank's figures and counted steps: read back as a baseline, a
 * job compares with a job. Those keys came without a schema change.
 *
 * The version in "schema" changes only when a key changes meaning or goes;
 * keys are added without a change, and readers ignore keys they do not know.
 */
#ifndef GPDL_ANALYSIS_BENCH_JSON_H
#define GPDL_ANALYSIS_BENCH_JSON_H

#include "lib/analysis/bench/benchstat.h"
#include "lib/analysis/dist/jobperf.h"
#include "lib/analysis/views/perf.h"

#include <stddef.h>
#include <stdio.h>

#define BENCH_SCHEMA "gprof-dl-bench/1"

/* One side of the gate: runs of counted steps, from traces or from a JSON
 * object this command wrote. */
struct bench_side {
	struct bs_run *runs;
	char **run_file;  /* per run: the trace it came from (a job's: its first file) */
	uint32_t *run_ranks; /* per run: 0 a process's steps; N the steps of a job of N ranks */
	size_t nruns;
	int by_samples;   /* 1: samples/s; 0: steps/s (every step 1 sample) */
	int unit_set;     /* by_samples is known (a run was added) */
	char **given;     /* the names the user gave for this side */
	size_t ngiven;
};

void bench_side_free(struct bench_side *s);
void bench_side_given(struct bench_side *s, const char *name);
/* Adds the counted steps of p, one run per file of a with counted steps.
 * -1 with a message in err when the ips unit differs from the runs' already
 * there. */
int bench_side_add_perf(struct bench_side *s, const struct perf *p, const struct analysis *a,
			char *err, size_t errlen);
/* Adds the job's steps as one run named by file (its first file). -1 with a
 * message in err when the ips unit differs from the runs' already there. */
int bench_side_add_job(struct bench_side *s, const struct jobperf *jp, const char *file,
		       char *err, size_t errlen);
/* 1 when path starts as an object this command wrote (its first key is
 * "schema" with a "gprof-dl-bench/" value), 0 otherwise (a trace?). */
int bench_json_sniff(const char *path);
/* Adds the runs of a bench JSON object; -1 with "'PATH': ..." in err. */
int bench_json_read(struct bench_side *s, const char *path, char *err, size_t errlen);

/* Everything one invocation reports. */
struct bench_report {
	char *const *files;              /* the measured traces, as given */
	size_t nfiles;
	const struct perf *perf;         /* their Perf Summary, or their job's */
	const struct jobperf *job;       /* NULL: traces of no rank, pooled */
	const struct bench_side *cur;
	const struct bs_pool *pool;
	const struct bench_side *base;   /* NULL: no baseline */
	const struct bs_pool *base_pool;
	const struct bs_change *change;  /* NULL: no comparison */
	int has_min_ips;
	double min_ips;
	int fails_regression, fails_min_ips;
};

/* The object (--format json); 0, or -1 when writing failed. */
int bench_json_write(FILE *out, const struct bench_report *r);
/* The array of {name, unit, value, range, extra} (--format github). */
int bench_github_write(FILE *out, const struct bench_report *r);

#endif
