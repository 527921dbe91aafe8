/*
 * export.h - gprof-dl export's work (cmd/export.c parses the command line):
 * a trace, or a job's traces, through the writers of formats/ (chrome
 * JSON, a directory of CSV files, the hive-partitioned CSV layout, sqlite),
 * streamed event by event, a job part by part on the job clock
 * (lib/analysis/dist/job.h), the SQL exports with each rank's aggregate
 * tables (lib/analysis/dist/rankagg.h).
 *
 * Each export writes its output whole or not at all (common/output.h,
 * formats/csv/csv_files.h), says where it went on standard error ("wrote
 * 't.json' (12.3 MB, 4512 events)"), warns of a damaged trace (exported up
 * to its damage), and returns the command's exit status: 0 written, 1 not
 * (after a one-line message).
 */
#ifndef GPDL_EXPORT_EXPORT_H
#define GPDL_EXPORT_EXPORT_H

#include "formats/trace/trace.h"
#include "lib/analysis/dist/job.h"

#include <stdint.h>

struct export_opts {
	int chrome, csv, sqlite;
	int partitioned, gzip;
	int no_events; /* --no-events: the aggregate tables only */
	int force;
	int no_summary;
	int mixed_jobs; /* --mixed-jobs: job_open()'s JOB_OPEN_MIXED */
	char **inputs;
	int ninputs;
	const char *output;
	/* --steps A-B (last -1: to the end), --window START:END (ns from the
	 * trace's start; to 0: to the end) */
	const char *steps_arg, *window_arg;
	const char *cycle_arg; /* --cycle N: window_arg is set too */
	int64_t step_first, step_last;
	uint64_t win_from, win_to;
	/* the window on the trace's clock, as found (export_find_steps(), the
	 * trace's start + win_*, a capture cycle's span): the events that begin
	 * in [from_ns, to_ns) go out; to_ns 0: to the end */
	uint64_t from_ns, to_ns;
};

/* A job when several files are given, or, for --chrome, one gprof-dl trace
 * whose processes are several ranks (1, j opened); one trace otherwise (0),
 * which exports as it always has (--csv of a file of several ranks: one
 * directory, processes.csv's rank column telling them apart); -1 after a
 * message. */
int export_open_job(const struct export_opts *o, struct job *j);
/* --steps A-B: o->from_ns and to_ns from a read of the whole trace: 0, or
 * 1 after a message. */
int export_find_steps(struct export_opts *o);

int export_chrome(const struct export_opts *o, struct trace_reader *r);
int export_chrome_job(const struct export_opts *o, const struct job *j);
int export_csv(const struct export_opts *o, struct trace_reader *r);
int export_csv_job(const struct export_opts *o, struct job *j);
int export_partitioned(const struct export_opts *o, struct job *j);
int export_sqlite(const struct export_opts *o, struct job *j);

#endif
