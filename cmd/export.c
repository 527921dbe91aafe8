/*
 * export.c - gprof-dl export: a trace, or a job's traces, converted for
 * other tools.
 *
 *   gprof-dl export --chrome FILE [FILE...] [-o OUT] [--force]
 *   gprof-dl export --csv FILE [FILE...] [-o DIR] [--force] [--no-summary]
 *   gprof-dl export --csv --partitioned FILE... [-o DIR] [--gzip] [--force]
 *   gprof-dl export --sqlite FILE... [-o OUT] [--force]
 *
 * Chrome: the output name defaults to FILE with .gpdl replaced by .json, and
 * an existing file is never overwritten without --force; "-o -" writes to
 * standard output. CSV: a directory (FILE with .gpdl replaced by -csv, made
 * if missing) of one file per kind of record (formats/csv/csv_export.h), and
 * one per summary table, summary-<view>.csv, as `gprof-dl summary --format
 * csv --time-unit ns` renders it; no file in it is overwritten without
 * --force, and none is written when one would be. The raw export streams
 * (formats/export_writer.h), so it runs in constant memory whatever the size
 * of the trace; the summary tables need the analysis's event store.
 *
 * A job (several files, or one file whose processes are several ranks: a
 * launcher's run, lib/analysis/dist/job.h) exports part by part, each part read
 * through the reader with its processes' filter, so memory is one part's at
 * a time: --chrome writes one file with a process per part on the job's
 * clock, and flows joining each collective call across the ranks, matched
 * as the Distributed view matches them (lib/analysis/dist/collective.h) from the
 * calls collected while the parts stream; --csv of several files writes a
 * directory per part (rank=R, or pid=N for a part of no rank) under DIR,
 * and of one file, one directory as ever. Several files need -o.
 *
 * The SQL exports take every file as a job, part by part, each part's rows
 * on the job clock (Unix wall time: its file's times + wall_offset_ns), so
 * that the hosts of a job export their own ranks independently:
 * --partitioned writes the hive layout of formats/csv/csv_partition.h (its
 * part files refused before any is written when one exists, without
 * --force), --sqlite one file through formats/sqlite/sqlite_export.h (an
 * existing one replaced, with --force, only once the new one is complete).
 *
 * Exit status: 0 written (a damaged trace is exported up to its damage, with
 * a warning), 1 the input is not a readable trace or the output could not be
 * written in full (partial files are removed), 2 usage.
 */
#include "cmd/cmd.h"
#include "common/error.h"
#include "common/textsafe.h"
#include "formats/trace/trace_open.h"
#include "formats/trace/trace.h"
#include "lib/analysis/dist/job.h"
#include "formats/trace/capture.h"
#include "lib/export/export.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char export_usage[] =
	"usage: gprof-dl export --chrome FILE [-o OUT] [--force]\n"
	"   or: gprof-dl export --csv FILE [-o DIR] [--force] [--no-summary]\n"
	"   or: gprof-dl export --chrome|--csv FILE FILE... -o OUT [...]  (a job: a trace per rank)\n"
	"   or: gprof-dl export --csv --partitioned FILE... -o DIR [--gzip] [--no-events] [--force]\n"
	"   or: gprof-dl export --sqlite FILE... -o OUT [--no-events] [--force]\n"
	"\n"
	"    --chrome       write chrome-trace JSON, for Perfetto, chrome://tracing and\n"
	"                   tools made for PyTorch profiler traces; a job's traces (one\n"
	"                   per rank) go to one file, a process per rank, clocks aligned\n"
	"                   and each collective call joined across the ranks by a flow\n"
	"    --csv          write a directory of CSV files: one per kind of event, and\n"
	"                   one per summary table (summary-<view>.csv); for several\n"
	"                   files, one such directory per rank, DIR/rank=R\n"
	"    --partitioned  --csv for DuckDB and Spark: the job's tables, hive-partitioned,\n"
	"                   DIR/<table>/rank=N/part-<host>-<pid>.csv, and DIR/_schema.json;\n"
	"                   times on the job clock (Unix ns); hosts may share DIR\n"
	"    --gzip         --partitioned: gzip each file (.csv.gz)\n"
	"    --events, --no-events\n"
	"                   --partitioned, --sqlite: with the event tables (the\n"
	"                   default), or the per-rank aggregate tables alone\n"
	"    --sqlite       write the job's tables into one sqlite file (the same tables\n"
	"                   and columns as --partitioned, rank first)\n"
	"    -o, --output OUT\n"
	"                   where to write (default: FILE with .gpdl replaced by .json,\n"
	"                   by -csv for --csv, by .sqlite for --sqlite; '-' for standard\n"
	"                   output, --chrome only; needed with several files)\n"
	"    -f, --force    overwrite OUT, or the files in DIR, if they exist\n"
	"    --no-summary   --csv: the events only, not the summary tables\n"
	"    --mixed-jobs   take rank files of different jobs (world sizes, runs) as\n"
	"                   one job all the same\n"
	"    --steps A-B    only the events that begin in steps A to B (B included;\n"
	"                   A:B: A to B-1, as run --steps; 'A' one step, 'A-' or 'A:'\n"
	"                   to the last): --chrome, --csv --no-summary\n"
	"    --window START:END\n"
	"                   only the events that begin in that window, from the trace's\n"
	"                   start: seconds, or with a unit (500ms, 2.5s, 1200us, 10ns);\n"
	"                   either end may be left out; --chrome, --csv --no-summary\n"
	"    --cycle N      only --schedule's cycle N (or capture range N), from 0: as\n"
	"                   --window with that cycle's span\n"
	"    -h, --help     show this help\n";


/* --steps (cmd_parse_steps(): A:B or A-B) as export keeps it: first and
 * last step, last included (-1: to the end). */
static void parse_steps(struct export_opts *o, const char *s)
{
	unsigned long long first, end;
	cmd_parse_steps(s, &first, &end);
	o->step_first = (int64_t)first;
	o->step_last = end ? (int64_t)end - 1 : -1;
}

/* A time of --window in ns: a number of seconds, or a number with a unit. */
static uint64_t parse_time(const char *s, size_t len, const char *arg)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"", 1e9}};
	char buf[64], clean[TEXT_CLEAN_SIZE], *end;
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	double v = strtod(buf, &end);
	if (end != buf && buf[0] >= '0' && buf[0] <= '9' && !errno)
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(end, units[i].unit) == 0 && v * units[i].ns < 1e18) /* 31 years */
				return (uint64_t)(v * units[i].ns + 0.5);
	usage_error("--window: '%s' is not START:END (seconds, or 500ms, 2.5s, 1200us, 10ns)",
		    text_clean(clean, sizeof(clean), arg));
}

static void parse_window(struct export_opts *o, const char *s)
{
	char clean[TEXT_CLEAN_SIZE];
	const char *colon = strchr(s, ':');
	if (!colon || (colon == s && !colon[1]))
		usage_error("--window: '%s' is not START:END (seconds, or 500ms, 2.5s, 1200us, 10ns)",
			    text_clean(clean, sizeof(clean), s));
	o->win_from = colon == s ? 0 : parse_time(s, (size_t)(colon - s), s);
	o->win_to = colon[1] ? parse_time(colon + 1, strlen(colon + 1), s) : 0;
	if (o->win_to && o->win_to <= o->win_from)
		usage_error("--window: '%s' ends before it begins", text_clean(clean, sizeof(clean), s));
}

static void parse_args(int argc, char **argv, struct export_opts *o)
{
	/* The format switches set their flag in o themselves (getopt_long
	 * returns 0 for them). */
	const struct option longopts[] = {
		{"chrome", no_argument, &o->chrome, 1},
		{"csv", no_argument, &o->csv, 1},
		{"sqlite", no_argument, &o->sqlite, 1},
		{"partitioned", no_argument, &o->partitioned, 1},
		{"gzip", no_argument, &o->gzip, 1},
		{"events", no_argument, &o->no_events, 0},
		{"no-events", no_argument, &o->no_events, 1},
		{"no-summary", no_argument, &o->no_summary, 1},
		{"mixed-jobs", no_argument, &o->mixed_jobs, 1},
		CMD_OPTIONS_OUTPUT,
		CMD_OPTION_HELP,
		{"steps", required_argument, NULL, 'S'},
		{"window", required_argument, NULL, 'W'},
		{"cycle", required_argument, NULL, 'Y'},
		{NULL, 0, NULL, 0},
	};
	int c;
	opterr = 0;
	optind = 1;
	/* Options may follow the file (export --chrome t.gpdl -o t.json), so
	 * GNU getopt permutes; ':' first tells a missing value from an unknown
	 * option. */
	while ((c = cmd_getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		switch (c) {
		case 0:
			break;
		case 'S':
			o->steps_arg = optarg;
			parse_steps(o, optarg);
			break;
		case 'W':
			o->window_arg = optarg;
			parse_window(o, optarg);
			break;
		case 'Y':
			if (capture_parse_cycle(optarg) < 0)
				usage_error("--cycle: '%s' is not a cycle number (0, 1, ...)", optarg);
			o->cycle_arg = o->window_arg = optarg;
			break;
		default:
			if (cmd_common_option(c, argv, export_usage, &o->output, &o->force) < 0)
				exit(0);
		}
	}
	if (!o->chrome && !o->csv && !o->sqlite)
		usage_error("say which format to export: --chrome, --csv or --sqlite");
	if (o->chrome + o->csv + o->sqlite > 1)
		usage_error("one format at a time: --chrome, --csv or --sqlite");
	if (o->no_summary && !o->csv)
		usage_error("--no-summary goes with --csv");
	if (o->partitioned && !o->csv)
		usage_error("--partitioned goes with --csv");
	if (o->gzip && !o->partitioned)
		usage_error("--gzip goes with --csv --partitioned");
	if (o->no_events && !o->partitioned && !o->sqlite)
		usage_error("--no-events goes with --csv --partitioned or --sqlite");
	if (o->steps_arg && o->window_arg)
		usage_error("--steps or --window, not both");
	if ((o->steps_arg || o->window_arg) && (o->sqlite || o->partitioned))
		usage_error("%s goes with --chrome and --csv, not with the job's tables of %s",
			    o->steps_arg ? "--steps" : "--window", o->sqlite ? "--sqlite" : "--partitioned");
	if ((o->steps_arg || o->window_arg) && o->csv && !o->no_summary)
		usage_error("%s --csv needs --no-summary (the summary tables are the whole trace's)",
			    o->steps_arg ? "--steps" : "--window");
	if (optind >= argc)
		usage_error("no trace file given");
	o->inputs = argv + optind;
	o->ninputs = argc - optind;
	if (o->output && !*o->output)
		usage_error("empty output name");
	if (o->ninputs > 1 && !o->output)
		usage_error("%d traces go to one %s: name it with -o", o->ninputs,
			    o->csv ? "directory" : "file");
	if (o->csv && o->output && strcmp(o->output, "-") == 0)
		usage_error("--csv writes a directory of files; '-' is not one");
	if (o->sqlite && o->output && strcmp(o->output, "-") == 0)
		usage_error("--sqlite writes a database file; '-' is not one");
}

int cmd_export(int argc, char **argv)
{
	struct export_opts o = {0};
	struct job j;
	char err[1024];
	parse_args(argc, argv, &o);

	if (o.partitioned || o.sqlite) { /* always a job: every part by itself */
		if (job_open(&j, o.ninputs, o.inputs, o.mixed_jobs ? JOB_OPEN_MIXED : 0, err,
			     sizeof(err)) != 0) {
			error("%s", err);
			return 1;
		}
		int status = o.sqlite ? export_sqlite(&o, &j) : export_partitioned(&o, &j);
		job_free(&j);
		return status;
	}
	int is_job = export_open_job(&o, &j);
	if (is_job < 0)
		return 1;
	if (is_job && (o.steps_arg || o.window_arg))
		usage_error("%s takes one trace; %s", o.steps_arg ? "--steps" : "--window",
			    o.ninputs > 1 ? "these are several" : "this one holds several ranks");
	if (o.steps_arg && export_find_steps(&o) != 0) {
		if (is_job)
			job_free(&j);
		return 1;
	}
	if (is_job) {
		int status = o.csv ? export_csv_job(&o, &j) : export_chrome_job(&o, &j);
		job_free(&j);
		return status;
	}
	struct trace_reader *r = trace_open_any(o.inputs[0], err, sizeof(err));
	if (!r) {
		error("%s", err);
		return 1;
	}
	if (o.window_arg) { /* from the trace's start */
		const struct trace_header *h = trace_reader_header(r);
		o.from_ns = h->start_ns + o.win_from;
		o.to_ns = o.win_to ? h->start_ns + o.win_to : UINT64_MAX;
	}
	if (o.cycle_arg && capture_cycle_window(o.inputs[0], (uint32_t)capture_parse_cycle(o.cycle_arg), &o.from_ns,
						&o.to_ns, err, sizeof(err)) != 0) {
		trace_reader_close(r);
		error("%s", err);
		return 1;
	}
	int status = o.csv ? export_csv(&o, r) : export_chrome(&o, r);
	trace_reader_close(r);
	return status;
}
