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
#include "cmd/output.h"
#include "formats/trace/capture.h"
#include "formats/async_out.h"
#include "formats/chrome/chrome_writer.h"
#include "formats/csv/csv_export.h"
#include "formats/csv/csv_out.h"
#include "formats/csv/csv_partition.h"
#include "formats/import/import.h"
#include "formats/trace/trace_open.h"
#include "formats/sqlite/sqlite_export.h"
#include "lib/analysis/store/analysis.h"
#include "lib/analysis/dist/collective.h"
#include "lib/analysis/dist/dist.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/dist/rankagg.h"
#include "lib/analysis/store/names.h"
#include "lib/analysis/table/table_csv.h"
#include "lib/analysis/views/view.h"
#include "common/error.h"
#include "common/textsafe.h"

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

#define EXPORT_BUFFER (1u << 20) /* big writes: the export is I/O bound */

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
};

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
		{"output", required_argument, NULL, 'o'},
		{"force", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
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
		case 'o':
			o->output = optarg;
			break;
		case 'f':
			o->force = 1;
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
		case 'h':
			fputs(export_usage, stdout);
			exit(0);
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
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

/* FILE.gpdl -> FILE<suffix>; anything else gets suffix appended. */
static char *default_output(const char *input, const char *suffix)
{
	size_t n = strlen(input);
	char *out = xmalloc(n + strlen(suffix) + 1);
	memcpy(out, input, n + 1);
	if (n > 5 && strcmp(input + n - 5, ".gpdl") == 0)
		out[n - 5] = '\0';
	strcat(out, suffix);
	return out;
}

/* Opens the output's temporary file (cmd/output.h: renamed to path when
 * whole, so an export that fails or is killed leaves the old file or none;
 * a pipe, a terminal or /dev/null is written in place, --force or not);
 * NULL after an error message. */
static FILE *open_output(struct outfile *of, const char *path, const struct export_opts *o)
{
	if (cmd_output_open(of, path, o->force, (const char *const *)o->inputs, o->ninputs) != 0)
		return NULL;
	/* a file: written on a thread while the next block is formatted */
	of->f = of->tmp ? async_out_fdopen(of->fd, EXPORT_BUFFER) : fdopen(of->fd, "w");
	if (!of->f) {
		cmd_output_fail(of, errno);
		return NULL;
	}
	return of->f;
}

/* Flushes and closes the output, renamed into place; -1 after an error
 * message when any write failed, the one that stopped the export (failed)
 * included (the temporary file is removed then). */
static int close_output(FILE *f, struct outfile *of, int to_stdout, int failed)
{
	int e = 0;
	if (!to_stdout) {
		if (failed)
			return cmd_output_fail(of, errno);
		return cmd_output_commit(of);
	}
	errno = 0;
	if (fflush(f) != 0 || ferror(f) || failed)
		e = errno ? errno : EIO;
	if (!e)
		return 0;
	error("cannot write '%s': %s", "standard output", strerror(e));
	/* said once here; main's own check of stdout must not say it again */
	__fpurge(f);
	clearerr(f);
	return -1;
}

static void warn_damage(struct trace_reader *r, const char *input, uint64_t events)
{
	uint64_t offset = 0;
	const char *damage = trace_reader_damage(r, &offset);
	if (damage)
		warning("'%s': %s at offset %llu; exported the %llu events before it", input,
			damage, (unsigned long long)offset, (unsigned long long)events);
}

/* ---- part of a trace, a progress bar, what was written ---------------------- */

/* What every single-trace run of a writer takes (writer_setup): the window
 * of --steps or --window on the trace's clock, and the progress bar. */
static struct {
	uint64_t from_ns, to_ns; /* to_ns 0: the whole trace */
} part;

/* A bar on standard error while an export runs, once it has taken longer
 * than a second (GPROF_DL_PROGRESS_DELAY seconds, as git's
 * GIT_PROGRESS_DELAY), only when standard error is a terminal; rewritten in
 * place and erased at the end, so that it never reaches a log. */
static struct {
	int on, shown;
	unsigned pct; /* on the terminal */
	double start, delay;
	uint64_t size;
	char what[320];
} bar;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void bar_start(const char *what, const char *input, struct trace_reader *r, int to_stdout)
{
	char clean[256];
	/* JSON going to the same terminal would tear the bar apart */
	bar.on = isatty(STDERR_FILENO) && !(to_stdout && isatty(STDOUT_FILENO));
	bar.shown = 0;
	bar.size = trace_reader_file_size(r);
	const char *delay = getenv("GPROF_DL_PROGRESS_DELAY");
	char *end;
	bar.delay = delay && *delay ? strtod(delay, &end) : 1.0;
	if (!delay || !*delay || *end || !(bar.delay >= 0))
		bar.delay = 1.0;
	snprintf(bar.what, sizeof(bar.what), "%s '%s'", what, text_clean(clean, sizeof(clean), input));
	bar.start = now_s();
}

static void bar_show(void *ctx, uint64_t offset)
{
	(void)ctx;
	if (!bar.on || now_s() - bar.start < bar.delay)
		return;
	enum { WIDTH = 30 };
	char cells[WIDTH + 1];
	unsigned pct = bar.size ? (unsigned)(offset >= bar.size ? 100 : offset * 100 / bar.size) : 0;
	if (bar.shown && pct == bar.pct)
		return; /* the terminal has this line already */
	bar.pct = pct;
	unsigned full = pct * WIDTH / 100;
	for (unsigned i = 0; i < WIDTH; i++)
		cells[i] = i < full ? '#' : '.';
	cells[WIDTH] = '\0';
	fprintf(stderr, "\rgprof-dl: %s [%s] %3u%%\033[K", bar.what, cells, pct);
	fflush(stderr);
	bar.shown = 1;
}

static void bar_done(void)
{
	if (bar.shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	bar.shown = 0;
	bar.on = 0;
}

static void writer_setup(struct export_writer *w)
{
	w->from_ns = part.from_ns;
	w->to_ns = part.to_ns;
	w->progress = bar.on ? bar_show : NULL;
}

/* "12.3 MB": decimal units, as ls -h --si and the browsers say. */
static void size_text(char *buf, size_t size, uint64_t bytes)
{
	if (bytes < 1000)
		snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
	else if (bytes < 1000000)
		snprintf(buf, size, "%.1f kB", (double)bytes / 1e3);
	else if (bytes < 1000000000)
		snprintf(buf, size, "%.1f MB", (double)bytes / 1e6);
	else
		snprintf(buf, size, "%.2f GB", (double)bytes / 1e9);
}

/* "gprof-dl: wrote 't.json' (12.3 MB, 4512 events)" on standard error: an
 * export says where its output went, as a default name leaves it unsaid. */
static void said_wrote(const char *path, char *const *paths, unsigned files, uint64_t events)
{
	char clean[TEXT_CLEAN_SIZE], sz[32];
	struct stat st;
	uint64_t bytes = 0;
	if (files) { /* a directory: the sizes of the files written into it */
		for (unsigned i = 0; i < files; i++)
			if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
				bytes += (uint64_t)st.st_size;
	} else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		bytes = (uint64_t)st.st_size;
	} else {
		fprintf(stderr, "gprof-dl: wrote '%s' (%llu events)\n",
			text_clean(clean, sizeof(clean), path), (unsigned long long)events);
		return;
	}
	size_text(sz, sizeof(sz), bytes);
	if (files)
		fprintf(stderr, "gprof-dl: wrote %u files to '%s' (%s, %llu events)\n", files,
			text_clean(clean, sizeof(clean), path), sz, (unsigned long long)events);
	else
		fprintf(stderr, "gprof-dl: wrote '%s' (%s, %llu events)\n",
			text_clean(clean, sizeof(clean), path), sz, (unsigned long long)events);
}

/* --steps A-B: the steps' window on the trace's clock, found by a read of
 * the whole trace (steps are recorded when they end, so the file's order is
 * not theirs). A step is what the tables take for one (trace_name_is_step);
 * its N is its name's, or its place in the file when its name has none, as
 * the chrome export numbers it. */
struct step_scan {
	struct export_writer ops; /* first: export_writer_container() */
	int64_t first, last;      /* wanted; last -1: to the last one */
	uint64_t from, to;        /* the window found; to 0: no step in it */
	int64_t lo, hi;           /* the numbers seen; lo -1: none */
	int64_t unnumbered;
};

static int scan_event(struct export_writer *w, const struct trace_event *e)
{
	struct step_scan *s = export_writer_container(w, struct step_scan);
	const struct trace_desc *d = trace_reader_desc(w->reader, e->desc);
	if (!d || (d->type != TRACE_EV_PROFILE_STEP && d->type != TRACE_EV_USER_DEFINED))
		return 0;
	const char *name = trace_reader_string(w->reader, d->name_str);
	size_t len = strlen(name);
	if (!trace_name_is_step(name, len))
		return 0;
	const char *hash = memchr(name, '#', len);
	int64_t n = hash ? strtoll(hash + 1, NULL, 10) : s->unnumbered++;
	if (s->lo < 0 || n < s->lo)
		s->lo = n;
	if (n > s->hi)
		s->hi = n;
	if (n < s->first || (s->last >= 0 && n > s->last))
		return 0;
	if (!s->to || e->start_ns < s->from)
		s->from = e->start_ns;
	if (e->start_ns + e->dur_ns > s->to)
		s->to = e->start_ns + e->dur_ns;
	return 0;
}

/* 0 with part set, or 1 after a message. */
static int find_steps(const struct export_opts *o)
{
	char err[1024], clean[TEXT_CLEAN_SIZE];
	struct trace_reader *r = trace_open_any(o->inputs[0], err, sizeof(err));
	if (!r) {
		error("%s", err);
		return 1;
	}
	struct step_scan s = {.first = o->step_first, .last = o->step_last, .lo = -1, .hi = -1};
	s.ops.name = "steps";
	s.ops.event = scan_event;
	bar_start("finding the steps of", o->inputs[0], r, 0);
	s.ops.progress = bar.on ? bar_show : NULL;
	export_writer_run(&s.ops, r);
	bar_done();
	trace_reader_close(r);
	text_clean(clean, sizeof(clean), o->inputs[0]);
	if (s.lo < 0)
		return error("'%s' has no steps (ProfileStep#N ranges) for --steps", clean), 1;
	if (!s.to)
		return error("'%s' has no step in %s (its steps are %lld to %lld)", clean, o->steps_arg,
			     (long long)s.lo, (long long)s.hi),
		       1;
	part.from_ns = s.from;
	part.to_ns = s.to > s.from ? s.to : s.from + 1;
	return 0;
}

/* The output stream of --chrome: a file or standard output, buffered big. */
struct chrome_out {
	char *defname;
	const char *path;
	int to_stdout;
	struct outfile of;
	FILE *f;
};

static int chrome_out_open(struct chrome_out *c, const struct export_opts *o)
{
	static char buffer[EXPORT_BUFFER];
	memset(c, 0, sizeof(*c));
	c->of.fd = c->of.slot = -1;
	c->defname = o->output ? NULL : default_output(o->inputs[0], ".json");
	c->path = o->output ? o->output : c->defname;
	c->to_stdout = strcmp(c->path, "-") == 0;
	c->f = c->to_stdout ? stdout : open_output(&c->of, c->path, o);
	if (!c->f) {
		free(c->defname);
		return -1;
	}
	setvbuf(c->f, buffer, _IOFBF, sizeof(buffer));
	return 0;
}

static int chrome_out_close(struct chrome_out *c, int failed)
{
	int rc = close_output(c->f, &c->of, c->to_stdout, failed);
	free(c->defname);
	return rc;
}

/* After an unreadable input: no output at all (the old one, if any, left be). */
static void chrome_out_drop(struct chrome_out *c)
{
	if (!c->to_stdout)
		outfile_abort(&c->of);
	free(c->defname);
}

static int export_chrome(const struct export_opts *o, struct trace_reader *r)
{
	struct chrome_out out;
	if (chrome_out_open(&out, o) != 0)
		return 1;
	struct export_writer *w = chrome_writer_new(out.f);
	bar_start("exporting", o->inputs[0], r, out.to_stdout);
	writer_setup(w);
	/* Only a failed write stops an export early: the reader reports damage
	 * through trace_reader_damage(), not through the run's result. */
	int failed = export_writer_run(w, r) != 0;
	uint64_t events = w->events;
	export_writer_destroy(w);
	char *path = out.to_stdout ? NULL : xstrdup(out.path);
	int status = chrome_out_close(&out, failed) ? 1 : 0;
	bar_done();
	if (status == 0)
		warn_damage(r, o->inputs[0], events);
	if (status == 0 && path)
		said_wrote(path, NULL, 0, events);
	free(path);
	return status;
}

/* ---- a job ------------------------------------------------------------------ */

/* A part's processes as the export driver filters them; NULL: the whole
 * file. system: whether the file's system-wide counters go with this part:
 * the part that is the whole file, or the rest of it (the launcher), or
 * else the file's first part. */
static const struct export_filter *part_filter(const struct job *j, uint32_t p,
					       struct export_filter *f)
{
	const struct job_rank *r = &j->ranks[p];
	if (!r->pids && !r->exclude)
		return NULL;
	int rest = 0, first = 1;
	for (uint32_t q = 0; q < j->nparts; q++) {
		if (j->ranks[q].file != r->file)
			continue;
		rest |= j->ranks[q].exclude;
		first &= q >= p;
	}
	*f = (struct export_filter){{r->pids, r->npids, r->exclude}, rest ? r->exclude : first};
	return f;
}

/* The job's clock minus a file's own: its wall clock offset when the files
 * come from several hosts (job.h). */
static int64_t file_shift(const struct job *j, uint32_t f)
{
	return j->wall_clock ? j->files[f].wall_offset_ns : 0;
}

/* "rank 1 (pid 4242, host a)"; a part of no rank is the launcher of a
 * job's ranks, or a trace of its own. */
static void part_name(char *buf, size_t size, const struct job *j, uint32_t p)
{
	const struct job_rank *r = &j->ranks[p];
	const char *host = j->files[r->file].host;
	char who[64];
	if (r->rank >= 0)
		snprintf(who, sizeof(who), "rank %d", r->rank);
	else
		snprintf(who, sizeof(who), "%s", j->nranks ? "launcher" : "trace");
	if (*host)
		snprintf(buf, size, "%s (pid %u, host %s)", who, r->pid, host);
	else
		snprintf(buf, size, "%s (pid %u)", who, r->pid);
}

/* A part's pid in the output: its root's, unless another part has the
 * same (ranks on several hosts, in containers), then one above any pid. */
static uint32_t part_out_pid(const struct job *j, uint32_t p)
{
	for (uint32_t q = 0; q < j->nparts; q++)
		if (q != p && j->ranks[q].pid == j->ranks[p].pid)
			return 0x50000000u + p;
	return j->ranks[p].pid;
}

/* ---- the flows: collective calls joined across ranks ------------------------ */

/* A communication call of a rank, as written. */
struct xcall {
	uint64_t pid, tid;
	uint64_t start, dur;
	uint64_t seq1, bytes;
	uint32_t part, thread;
	uint32_t op, pg;      /* in calls.names */
	uint32_t group_size;
	int32_t peer;
	int on_stream;
};

struct calls {
	const struct job *j;
	struct names names;
	struct xcall *v;
	size_t n, cap;
};

static void collect_call(void *ctx, const struct chrome_comm *c)
{
	struct calls *cs = ctx;
	if (c->part >= cs->j->nranks)
		return; /* a launcher's: no rank to match it with */
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 1024;
		cs->v = xrealloc(cs->v, cs->cap * sizeof(*cs->v));
	}
	const struct trace_event_ext *x = c->x;
	cs->v[cs->n++] = (struct xcall){
		.pid = c->pid,
		.tid = c->tid,
		.start = c->start_ns,
		.dur = c->dur_ns,
		.seq1 = x && x->has_coll_seq ? x->coll_seq + 1 : 0,
		.bytes = x ? x->bytes : 0,
		.part = c->part,
		.thread = c->thread,
		.op = names_intern(&cs->names, c->name, strlen(c->name)),
		.pg = names_intern(&cs->names, c->pg, strlen(c->pg)),
		.group_size = x ? x->group_size : 0,
		.peer = x && x->has_peer ? x->peer : -1,
		.on_stream = c->on_stream,
	};
}

static const struct xcall *sort_base;

/* By start, ties in the order collected: the order the matching keeps. */
static int by_start(const void *a, const void *b)
{
	const struct xcall *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

/* By thread, then start, longer first: a thread's outermost calls lead. */
static int by_thread(const void *a, const void *b)
{
	const struct xcall *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

/* A rank's calls, as the Distributed view takes them: its GPU
 * communication when it has any, else its host calls, the outermost of each
 * thread (a gloo:all_reduce inside c10d's call is one call). Indexes into
 * cs->v, in start order; *n their number. */
static size_t *rank_calls(const struct calls *cs, uint32_t part, size_t *n)
{
	size_t *idx = xmalloc((cs->n ? cs->n : 1) * sizeof(*idx)), k = 0;
	int gpu = 0;
	for (size_t i = 0; i < cs->n; i++)
		gpu |= cs->v[i].part == part && cs->v[i].on_stream;
	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i].part == part && cs->v[i].on_stream == gpu)
			idx[k++] = i;
	sort_base = cs->v;
	if (!gpu) {
		qsort(idx, k, sizeof(*idx), by_thread);
		size_t kept = 0;
		uint64_t end = 0;
		for (size_t i = 0; i < k; i++) {
			const struct xcall *x = &cs->v[idx[i]];
			if (kept && cs->v[idx[kept - 1]].thread == x->thread && x->start < end)
				continue;
			end = x->start + x->dur;
			idx[kept++] = idx[i];
		}
		k = kept;
	}
	qsort(idx, k, sizeof(*idx), by_start);
	*n = k;
	return idx;
}

/* The collective flows' ids: 2^52 + 1, 2 ...: above every ac2g id of a job
 * (a correlation id + the part's place << 40), so that a viewer that keys
 * flows by id alone never joins the two, and exact in a double. */
#define COLL_FLOW_ID0 ((UINT64_C(1) << 52) + 1)

struct member {
	uint32_t match;
	const struct xcall *x;
	uint32_t rank;
};

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	if (x->match != y->match)
		return x->match < y->match ? -1 : 1;
	if (x->x->start != y->x->start)
		return x->x->start < y->x->start ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Matches the ranks' calls and writes a flow per call that two ranks or
 * more made: from the earliest start to the latest, so the arrow ends at
 * the rank the others waited for. 0, or -1 when a write failed. */
static int write_flows(struct export_writer *w, struct calls *cs, uint64_t *matched)
{
	const struct job *j = cs->j;
	struct collective_set set;
	collective_set_init(&set, j->nranks);
	size_t **idx = xcalloc(j->nranks ? j->nranks : 1, sizeof(*idx));
	size_t total = 0;
	for (uint32_t r = 0; r < j->nranks; r++) {
		size_t n;
		idx[r] = rank_calls(cs, r, &n);
		for (size_t k = 0; k < n; k++) {
			const struct xcall *x = &cs->v[idx[r][k]];
			struct collective_call call = {
				.start_ns = x->start,
				.dur_ns = x->dur,
				.seq1 = x->seq1,
				.bytes = x->bytes,
				.group_size = x->group_size,
				.peer = x->peer,
				.step = -1,
			};
			collective_add(&set, r, &call, names_get(&cs->names, x->op),
				 names_get(&cs->names, x->pg));
		}
		total += n;
	}
	collective_match(&set);
	/* the calls were added in start order, so set's calls are idx's */
	struct member *m = xmalloc((total ? total : 1) * sizeof(*m));
	size_t nm = 0;
	for (uint32_t r = 0; r < j->nranks; r++) {
		const struct collective_rank *cr = &set.ranks[r];
		for (size_t k = 0; k < cr->n; k++)
			if (!cr->calls[k].mismatch && set.matches[cr->calls[k].match].members > 1)
				m[nm++] = (struct member){cr->calls[k].match, &cs->v[idx[r][k]], r};
		free(idx[r]);
	}
	free(idx);
	qsort(m, nm, sizeof(*m), member_cmp);
	int rc = 0;
	*matched = 0;
	for (size_t i = 0; i < nm && rc == 0; i++) {
		int first = i == 0 || m[i - 1].match != m[i].match;
		int last = i + 1 == nm || m[i + 1].match != m[i].match;
		*matched += first;
		struct chrome_flow_end f = {
			.id = COLL_FLOW_ID0 + m[i].match,
			.ph = first ? 's' : last ? 'f' : 't',
			.pid = m[i].x->pid,
			.tid = m[i].x->tid,
			.ts_ns = m[i].x->start,
		};
		rc = chrome_job_flow(w, &f);
	}
	free(m);
	collective_set_free(&set);
	return rc;
}

/* ---- --chrome of a job -------------------------------------------------------- */

static void job_clock(const struct job *j, char *buf, size_t size, uint64_t *base,
		      int64_t *wall)
{
	uint32_t first = 0;
	*base = UINT64_MAX;
	for (uint32_t f = 0; f < j->nfiles; f++) {
		uint64_t s = j->files[f].start_ns + (uint64_t)file_shift(j, f);
		if (s < *base) {
			*base = s;
			first = f;
		}
	}
	if (!j->nfiles)
		*base = 0;
	*wall = j->wall_clock ? 0 : j->nfiles ? j->files[first].wall_offset_ns : 0;
	store_clock_words(buf, size, j->wall_clock, j->nhosts, j->clock,
			  j->nfiles ? j->files[0].host : "");
}

/* One part through the writer: 0, 1 when its file cannot be read, -1 when
 * a write failed. */
static int chrome_part(struct export_writer *w, const struct job *j, uint32_t p)
{
	const struct job_rank *r = &j->ranks[p];
	const char *path = j->files[r->file].path;
	char err[1024], name[256];
	struct trace_reader *rd = trace_open_any(path, err, sizeof(err));
	if (!rd) {
		error("%s", err);
		return 1;
	}
	part_name(name, sizeof(name), j, p);
	struct chrome_part part = {
		.name = name,
		.pid = r->pid,
		.out_pid = part_out_pid(j, p),
		.sort_index = p,
		.rank = r->rank,
		.file = path,
		.shift_ns = file_shift(j, r->file),
	};
	struct export_filter f;
	chrome_job_part(w, &part);
	int rc = export_writer_run_part(w, rd, part_filter(j, p, &f)) != 0 ? -1 : 0;
	if (rc == 0)
		warn_damage(rd, path, w->events);
	trace_reader_close(rd);
	return rc;
}

static int export_chrome_job(const struct export_opts *o, const struct job *j)
{
	struct chrome_out out;
	if (chrome_out_open(&out, o) != 0)
		return 1;
	char clock[256];
	struct calls cs = {.j = j};
	names_init(&cs.names);
	struct chrome_job_opts jo = {.clock = clock, .comm = collect_call, .ctx = &cs};
	job_clock(j, clock, sizeof(clock), &jo.base_ns, &jo.wall_offset_ns);
	struct export_writer *w = chrome_job_writer_new(out.f, &jo);
	int rc = 0;
	uint64_t events = 0;
	for (uint32_t p = 0; p < j->nparts && rc == 0; p++) {
		rc = chrome_part(w, j, p);
		events += w->events;
	}
	uint64_t matched = 0;
	if (rc == 0)
		rc = write_flows(w, &cs, &matched) != 0 ? -1 : 0;
	if (rc == 0)
		rc = chrome_job_finish(w) != 0 ? -1 : 0;
	export_writer_destroy(w);
	free(cs.v);
	names_free(&cs.names);
	if (rc > 0) { /* an unreadable part: no half a job on disk */
		chrome_out_drop(&out);
		return 1;
	}
	char *path = out.to_stdout ? NULL : xstrdup(out.path);
	int status = chrome_out_close(&out, rc != 0) ? 1 : 0;
	if (status == 0 && path)
		said_wrote(path, NULL, 0, events);
	free(path);
	return status;
}

/* ---- --csv: a directory of files ----------------------------------------- */

#define CSV_BUFFER (1u << 18) /* per file: thirteen are open at once */

/* Each file is written to a temporary file in the directory
 * (cmd/output.h), all of them renamed into place only once every file of
 * every directory of the export is whole (csv_dir_commit): a failed or
 * interrupted export leaves the old files as they were. */
struct csv_dir {
	char *dir;
	char **paths;   /* every file this export writes */
	struct outfile *files;
	unsigned n, cap;
	int made_dir;   /* the directory is this run's: removed again on failure */
	int said;       /* a write failed and was said: one line per failure */
};

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static void csv_dir_add(struct csv_dir *d, const char *name)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 32;
		d->paths = xrealloc(d->paths, d->cap * sizeof(*d->paths));
		d->files = xrealloc(d->files, d->cap * sizeof(*d->files));
	}
	d->paths[d->n] = join(d->dir, name);
	d->files[d->n++] = (struct outfile){.fd = -1, .slot = -1};
}

/* mkdir -p: 0, or -1 after a message. */
static int make_dir(const char *dir, int *made)
{
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		return error("'%s' exists and is not a directory; --csv writes a directory", dir);
	}
	char *p = xstrdup(dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			error("cannot create '%s': %s", p, strerror(errno));
			free(p);
			return -1;
		}
		*s = '/';
	}
	free(p);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return error("cannot create '%s': %s", dir, strerror(errno));
	*made = 1;
	return 0;
}

/* Every file refused before any is written: never half a directory over old
 * files. */
static int csv_dir_check(const struct csv_dir *d, const struct export_opts *o)
{
	struct stat out;
	char err[2048];
	for (unsigned i = 0; i < d->n; i++) {
		if (outfile_check_inputs(d->paths[i], (const char *const *)o->inputs, o->ninputs,
					 err, sizeof(err)) != 0)
			return error("%s", err);
		if (lstat(d->paths[i], &out) != 0)
			continue;
		if (!o->force)
			return error("'%s' exists; use --force to overwrite the files in '%s', or "
				     "-o to choose another directory",
				     d->paths[i], d->dir);
	}
	return 0;
}

static FILE *csv_dir_open(struct csv_dir *d, unsigned i, int force)
{
	char err[2048];
	struct outfile *of = &d->files[i];
	if (outfile_open(of, d->paths[i], force ? OUTFILE_FORCE : 0, 0666, err, sizeof(err)) != 0) {
		d->said = 1;
		error("%s", err);
		return NULL;
	}
	of->f = async_out_fdopen(of->fd, CSV_BUFFER);
	if (!of->f) {
		d->said = 1;
		cmd_output_fail(of, errno);
		return NULL;
	}
	return of->f;
}

/* Flushes and closes file i (renamed into place later, by csv_dir_commit);
 * -1 when any write to it failed, said in one line for the directory. */
static int csv_dir_close(struct csv_dir *d, unsigned i)
{
	char err[2048];
	if (d->files[i].fd < 0)
		return 0;
	if (outfile_close(&d->files[i], err, sizeof(err)) == 0)
		return 0;
	if (!d->said)
		error("%s", err);
	d->said = 1;
	return -1;
}

/* Every file renamed into place: 0, or -1 after a message. */
static int csv_dir_commit(struct csv_dir *d)
{
	for (unsigned i = 0; i < d->n; i++)
		if (d->files[i].path && cmd_output_commit(&d->files[i]) != 0)
			return -1;
	return 0;
}

/* After a failure: the temporary files removed, the old files left as they
 * were, the directory removed when this run made it (and it is empty). */
static void csv_dir_remove(struct csv_dir *d)
{
	for (unsigned i = 0; i < d->n; i++)
		outfile_abort(&d->files[i]);
	if (d->made_dir)
		rmdir(d->dir);
}

static void csv_dir_free(struct csv_dir *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		outfile_abort(&d->files[i]); /* nothing, once committed */
		free(d->paths[i]);
	}
	free(d->paths);
	free(d->files);
	free(d->dir);
}

/* The raw files, then the summary tables' files: summary-trace.csv (the
 * Trace Summary), then one per view of the registry. */
static void csv_dir_names(struct csv_dir *d, char *dir, int summary)
{
	char name[128];
	d->dir = dir;
	for (unsigned i = 0; i < CSV_FILE_COUNT; i++)
		csv_dir_add(d, csv_export_file_names[i]);
	if (!summary)
		return;
	csv_dir_add(d, "summary-trace.csv");
	for (unsigned i = 0; i < view_registry_count; i++) {
		snprintf(name, sizeof(name), "summary-%s.csv", view_registry[i].name);
		csv_dir_add(d, name);
	}
}

static int csv_raw(struct csv_dir *d, struct trace_reader *r, const struct export_filter *f,
		   int force, uint64_t *events)
{
	FILE *outs[CSV_FILE_COUNT];
	for (unsigned i = 0; i < CSV_FILE_COUNT; i++)
		if (!(outs[i] = csv_dir_open(d, i, force)))
			return -1; /* csv_dir_remove closes the ones open */
	struct export_writer *w = csv_export_new(outs);
	writer_setup(w);
	int failed = export_writer_run_part(w, r, f) != 0;
	*events = w->events;
	export_writer_destroy(w);
	for (unsigned i = 0; i < CSV_FILE_COUNT; i++)
		if (csv_dir_close(d, i) != 0)
			failed = 1;
	return failed ? -1 : 0;
}

/* Each table through the summary's own CSV renderer: the view's public
 * build function, then its CSV tables (lib/analysis/table/table_csv.h),
 * times in nanoseconds. The first goes to file i, summary-<view>.csv, named
 * with the directory's files; a part with columns of its own (the
 * Overview's device half) to summary-<view>-<part>.csv, named here, and
 * refused without --force when it exists. */
static int csv_table(struct csv_dir *d, unsigned i, const char *view, struct table *t, int force)
{
	struct table_style st = {.unit = TIME_UNIT_NS};
	unsigned n = table_csv_count(t);
	int rc = 0;
	for (unsigned k = 0; k < n && rc == 0; k++) {
		unsigned at = i;
		if (k) {
			char suffix[96], name[256];
			struct stat sb;
			snprintf(name, sizeof(name), "summary-%s%s.csv", view,
				 table_csv_suffix(t, k, suffix, sizeof(suffix)));
			char *path = join(d->dir, name);
			int exists = stat(path, &sb) == 0;
			if (exists && !force)
				rc = error("'%s' exists; use --force to overwrite the files in '%s', or "
					   "-o to choose another directory",
					   path, d->dir);
			free(path);
			if (rc)
				break;
			csv_dir_add(d, name);
			at = d->n - 1;
		}
		FILE *f = csv_dir_open(d, at, force);
		if (!f) {
			rc = -1;
			break;
		}
		struct csv_out c;
		csv_out_init(&c, f);
		table_render_csv_one(t, k, &c, &st);
		if (csv_dir_close(d, at) != 0)
			rc = -1;
	}
	table_free(t);
	return rc;
}

/* The summary tables of one trace (j NULL) or of part p of a job. */
static int csv_summary(struct csv_dir *d, const char *input, struct job *j, uint32_t p,
		       int force)
{
	struct analysis a;
	char err[512];
	analysis_init(&a);
	int rc = j ? job_load(j, p, &a, err, sizeof(err)) : analysis_load(&a, input, err, sizeof(err));
	if (rc != 0) {
		analysis_free(&a);
		return error("%s", err);
	}
	if (!j)
		analysis_prepare(&a);
	struct view_opts vo = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_NS};
	unsigned at = CSV_FILE_COUNT;
	rc = csv_table(d, at++, "trace", view_trace(NULL, &a, &vo), force);
	for (unsigned i = 0; rc == 0 && i < view_registry_count; i++) {
		const struct view *v = &view_registry[i];
		rc = csv_table(d, at++, v->name, v->build(v, &a, &vo), force);
	}
	analysis_free(&a);
	return rc;
}

/* One directory's files from r: 0, or -1 after a message with the
 * directory's files removed again. */
static int csv_write_dir(struct csv_dir *d, const struct export_opts *o, const char *input,
			 struct trace_reader *r, const struct export_filter *f, struct job *j,
			 uint32_t p, uint64_t *written)
{
	uint64_t events = 0;
	int rc = -1;
	if (make_dir(d->dir, &d->made_dir) == 0 && csv_raw(d, r, f, o->force, &events) == 0 &&
	    (o->no_summary || csv_summary(d, input, j, p, o->force) == 0) &&
	    (j || csv_dir_commit(d) == 0)) /* a job's, once every part is whole */
		rc = 0;
	*written += events;
	if (rc == 0)
		warn_damage(r, input, events);
	else
		csv_dir_remove(d);
	return rc;
}

static int export_csv(const struct export_opts *o, struct trace_reader *r)
{
	struct csv_dir d = {0};
	const char *input = o->inputs[0];
	csv_dir_names(&d, o->output ? xstrdup(o->output) : default_output(input, "-csv"),
		      !o->no_summary);
	int status = 1;
	uint64_t events = 0;
	bar_start("exporting", input, r, 0);
	if (make_dir(d.dir, &d.made_dir) == 0 && csv_dir_check(&d, o) == 0)
		status = csv_write_dir(&d, o, input, r, NULL, NULL, 0, &events) == 0 ? 0 : 1;
	else if (d.made_dir)
		rmdir(d.dir);
	bar_done();
	if (status == 0)
		said_wrote(d.dir, d.paths, d.n, events);
	csv_dir_free(&d);
	return status;
}

/* A job: DIR/rank=R per rank (hive-partitioned: a reader of DIR/rank=* gets
 * a rank column), DIR/rank=-1 for a part of no rank (a launcher), as the
 * partitioned export names it; further parts of no rank -2, -3, ... (one key
 * in every name: DuckDB refuses a mix); every file of every part checked
 * before the first is written. */
static int export_csv_job(const struct export_opts *o, struct job *j)
{
	char *root = o->output ? xstrdup(o->output) : default_output(o->inputs[0], "-csv");
	char err_root[TEXT_CLEAN_SIZE];
	struct csv_dir *d = xcalloc(j->nparts ? j->nparts : 1, sizeof(*d));
	int made = 0, status = 1;
	uint32_t done = 0;
	uint64_t events = 0;
	int norank = 0;
	for (uint32_t p = 0; p < j->nparts; p++) {
		char name[64];
		snprintf(name, sizeof(name), "rank=%d",
			 j->ranks[p].rank >= 0 ? j->ranks[p].rank : --norank);
		csv_dir_names(&d[p], join(root, name), !o->no_summary);
	}
	if (make_dir(root, &made) != 0)
		goto out;
	for (uint32_t p = 0; p < j->nparts; p++)
		if (csv_dir_check(&d[p], o) != 0)
			goto out;
	for (; done < j->nparts; done++) {
		struct export_filter f;
		char err[1024];
		const char *path = j->files[j->ranks[done].file].path;
		struct trace_reader *r = trace_open_any(path, err, sizeof(err));
		if (!r) {
			error("%s", err);
			goto out;
		}
		int rc = csv_write_dir(&d[done], o, path, r, part_filter(j, done, &f), j, done, &events);
		trace_reader_close(r);
		if (rc != 0)
			goto out;
	}
	for (uint32_t p = 0; p < j->nparts; p++)
		if (csv_dir_commit(&d[p]) != 0)
			goto out;
	status = 0;
	fprintf(stderr, "gprof-dl: wrote %u directories to '%s' (%llu events)\n", j->nparts,
		text_clean(err_root, sizeof(err_root), root), (unsigned long long)events);
out:
	if (status) {
		for (uint32_t p = 0; p < done; p++)
			csv_dir_remove(&d[p]);
		if (made)
			rmdir(root);
	}
	for (uint32_t p = 0; p < j->nparts; p++)
		csv_dir_free(&d[p]);
	free(d);
	free(root);
	return status;
}

/* ---- the SQL exports: --csv --partitioned and --sqlite ---------------------- */


struct agg_sqlite {
	struct sqlite_export *s;
	int32_t rank;
};

static int agg_sqlite_emit(void *ctx, enum csv_agg_table t, const struct csv_agg_value *v,
			   size_t n)
{
	struct agg_sqlite *x = ctx;
	return sqlite_export_agg_row(x->s, t, x->rank, v, n);
}

/* ---- the SQL exports ------------------------------------------------------------ */

/* gzip level 1: on the 593 MB of CSV of a 5 M event trace, level 1 made
 * 91 MB in 26 s, level 3 89 MB in 35 s, level 6 77 MB in 90 s: 3.5 times
 * the time for 15% fewer bytes, where compression is already the export's
 * whole cost */
#define PARTITION_GZIP_LEVEL 1

/* A part's rows on the job clock of the SQL exports: Unix wall time, the
 * same whichever host exports it, whatever else the job holds. */
static struct csv_export_opts sql_opts(const struct job *j, uint32_t p)
{
	return (struct csv_export_opts){
		.sql = 1,
		.time_offset_ns = j->files[j->ranks[p].file].wall_offset_ns,
		.rank = j->ranks[p].rank,
	};
}

/* Part p of j through w: 0, 1 when its file cannot be read, -1 when a
 * write failed; *events counts what it wrote. */
static int sql_part(struct export_writer *w, const struct job *j, uint32_t p, uint64_t *events)
{
	const char *path = j->files[j->ranks[p].file].path;
	char err[1024];
	struct trace_reader *rd = trace_open_any(path, err, sizeof(err));
	if (!rd) {
		error("%s", err);
		return 1;
	}
	struct export_filter f;
	int rc = export_writer_run_part(w, rd, part_filter(j, p, &f)) != 0 ? -1 : 0;
	*events += w->events;
	if (rc == 0)
		warn_damage(rd, path, w->events);
	trace_reader_close(rd);
	return rc;
}

/* "wrote 1200 events of 2 ranks and 1 more part to 'DIR'" on stderr ("wrote
 * the aggregate tables of ..." without the events); a job of no rank is "of
 * 1 trace". */
static void sql_said(const struct job *j, uint64_t events, const char *out, int no_events)
{
	char safe[TEXT_CLEAN_SIZE];
	uint32_t others = j->nparts - j->nranks;
	if (no_events)
		fputs("gprof-dl: wrote the aggregate tables of ", stderr);
	else
		fprintf(stderr, "gprof-dl: wrote %llu events of ", (unsigned long long)events);
	if (j->nranks)
		fprintf(stderr, "%u rank%s", j->nranks, j->nranks == 1 ? "" : "s");
	if (j->nranks && others)
		fprintf(stderr, " and %u more part%s", others, others == 1 ? "" : "s");
	else if (others)
		fprintf(stderr, "%u trace%s", others, others == 1 ? "" : "s");
	fprintf(stderr, " to '%s'\n", text_clean(safe, sizeof(safe), out));
}

/* The files of --partitioned: path[p * CSV_PARTITION_TABLES + k] is part
 * p's file of table k (csv_partition.h: the event tables, then the
 * aggregate ones; without the events, only the latter are written); other[] the same name with the other suffix (.csv for .csv.gz),
 * which an engine reading DIR/<table>/ would count twice; made[] says which
 * this run has created or truncated, the ones a failure removes. */
/* Each file written to a temporary file beside it (cmd/output.h), all
 * renamed into place once every part is whole: a failed or interrupted
 * export leaves the old files as they were. */
struct partition {
	char *dir;
	char **path, **other;
	struct outfile *of;
	int said; /* a write failed and was said: one line per failure */
	uint32_t nfiles;
	struct csv_partition_dirs dirs;
};

static void partition_names(struct partition *pt, const struct export_opts *o,
			    const struct job *j)
{
	pt->nfiles = j->nparts * CSV_PARTITION_TABLES;
	pt->path = xcalloc(pt->nfiles ? pt->nfiles : 1, sizeof(*pt->path));
	pt->other = xcalloc(pt->nfiles ? pt->nfiles : 1, sizeof(*pt->other));
	pt->of = xcalloc(pt->nfiles ? pt->nfiles : 1, sizeof(*pt->of));
	for (uint32_t p = 0; p < j->nparts; p++) {
		const struct job_rank *r = &j->ranks[p];
		const char *host = j->files[r->file].host;
		for (unsigned i = 0; i < CSV_PARTITION_TABLES; i++) {
			uint32_t k = p * CSV_PARTITION_TABLES + i;
			if (o->no_events && i < CSV_FILE_COUNT)
				continue; /* not this export's */
			pt->path[k] = csv_partition_path(pt->dir, i, r->rank, host, r->pid, o->gzip);
			pt->other[k] = csv_partition_path(pt->dir, i, r->rank, host, r->pid, !o->gzip);
			pt->of[k] = (struct outfile){.fd = -1, .slot = -1};
		}
	}
}

static void partition_free(struct partition *pt)
{
	for (uint32_t k = 0; k < pt->nfiles; k++) {
		outfile_abort(&pt->of[k]); /* nothing, once committed */
		free(pt->path[k]);
		free(pt->other[k]);
	}
	free(pt->path);
	free(pt->other);
	free(pt->of);
	csv_partition_dirs_free(&pt->dirs);
	free(pt->dir);
}

/* Before anything is written: two parts of the job never share a file
 * (the same host and pid in one rank's directory), no part file exists
 * without --force, none is a trace being exported. */
static int partition_check(const struct partition *pt, const struct export_opts *o,
			   const struct job *j)
{
	struct stat st;
	char err[2048];
	unsigned k0 = o->no_events ? CSV_FILE_COUNT : 0; /* a file every part writes */
	for (uint32_t p = 0; p < j->nparts; p++)
		for (uint32_t q = p + 1; q < j->nparts; q++)
			if (j->ranks[p].rank == j->ranks[q].rank && /* only -1 repeats */
			    strcmp(pt->path[p * CSV_PARTITION_TABLES], pt->path[q * CSV_PARTITION_TABLES]) == 0)
				return error("'%s' and '%s' would both write '%s'",
					     j->files[j->ranks[p].file].path,
					     j->files[j->ranks[q].file].path,
					     pt->path[p * CSV_PARTITION_TABLES + k0]);
	for (uint32_t k = 0; k < pt->nfiles; k++) {
		if (!pt->path[k])
			continue;
		for (int other = 0; other < 2; other++) {
			const char *path = other ? pt->other[k] : pt->path[k];
			if (outfile_check_inputs(path, (const char *const *)o->inputs, o->ninputs,
						 err, sizeof(err)) != 0)
				return error("%s", err);
			if (lstat(path, &st) != 0)
				continue;
			if (!o->force)
				return error("'%s' exists; --force overwrites", path);
		}
	}
	return 0;
}

/* Opens file k of the layout, its directories made as needed. */
static FILE *partition_open(struct partition *pt, uint32_t k, const struct export_opts *o)
{
	char err[1024];
	if (csv_partition_mkdirs(pt->path[k], &pt->dirs, err, sizeof(err)) != 0) {
		error("%s", err);
		return NULL;
	}
	struct outfile *of = &pt->of[k];
	if (outfile_open(of, pt->path[k], o->force ? OUTFILE_FORCE : 0, 0666, err, sizeof(err)) != 0) {
		pt->said = 1;
		error("%s", err);
		return NULL;
	}
	of->f = o->gzip ? csv_partition_gzip(of->fd, PARTITION_GZIP_LEVEL)
			: async_out_fdopen(of->fd, CSV_BUFFER);
	if (!of->f) {
		pt->said = 1;
		cmd_output_fail(of, errno);
	}
	return of->f;
}

/* Closes file k (renamed into place at the end): -1 when a write to it
 * failed, said in one line for the export. */
static int partition_close(struct partition *pt, uint32_t k)
{
	char err[2048];
	if (pt->of[k].fd < 0 || outfile_close(&pt->of[k], err, sizeof(err)) == 0)
		return 0;
	if (!pt->said)
		error("%s", err);
	pt->said = 1;
	return -1;
}

/* Part p's files: 0, 1 when its trace cannot be read, -1 when a file could
 * not be made or written (said). */
static int partition_part(struct partition *pt, const struct export_opts *o,
			  struct job *j, uint32_t p, uint64_t *events)
{
	FILE *outs[CSV_PARTITION_TABLES] = {0};
	uint32_t k0 = p * CSV_PARTITION_TABLES;
	int rc = 0, said = 0;
	for (unsigned i = o->no_events ? CSV_FILE_COUNT : 0; i < CSV_PARTITION_TABLES && rc == 0;
	     i++)
		if (!(outs[i] = partition_open(pt, k0 + i, o)))
			rc = -1, said = 1;
	if (rc == 0 && !o->no_events) {
		struct csv_export_opts eo = sql_opts(j, p);
		struct export_writer *w = csv_export_new_opts(outs, &eo);
		rc = sql_part(w, j, p, events);
		said |= rc > 0;
		export_writer_destroy(w);
	}
	if (rc == 0) {
		struct csv_agg_files ac;
		csv_agg_files_init(&ac, &outs[CSV_FILE_COUNT]);
		rc = rankagg_part(j, p, csv_agg_csv_emit, &ac);
		said |= rc > 0;
		if (rc == 0 && csv_agg_files_error(&ac))
			rc = -1;
	}
	for (unsigned i = 0; i < CSV_PARTITION_TABLES; i++)
		if (outs[i] && partition_close(pt, k0 + i) != 0) {
			said = 1;
			if (rc == 0)
				rc = -1;
		}
	if (rc < 0 && !said && !pt->said)
		error("cannot write the files of part %u in '%s'", p, pt->dir);
	return rc;
}

static int export_partitioned(const struct export_opts *o, struct job *j)
{
	struct partition pt = {0};
	char err[1024];
	uint64_t events = 0;
	int rc = -1;
	uint32_t p = 0;
	pt.dir = o->output ? xstrdup(o->output) : default_output(o->inputs[0], "-csv");
	partition_names(&pt, o, j);
	if (partition_check(&pt, o, j) != 0)
		goto out;
	for (rc = 0; p < j->nparts && rc == 0; p++)
		rc = partition_part(&pt, o, j, p, &events);
	if (rc == 0 && csv_partition_write_schema(pt.dir, err, sizeof(err)) != 0)
		rc = error("%s", err);
	for (uint32_t k = 0; k < pt.nfiles && rc == 0; k++)
		if (pt.of[k].path && cmd_output_commit(&pt.of[k]) != 0)
			rc = -1;
	if (rc == 0) {
		/* the other suffix's files of these parts are replaced too: the
		 * engines read DIR/<table>/ whole */
		for (uint32_t k = 0; k < pt.nfiles; k++)
			if (pt.other[k])
				unlink(pt.other[k]);
		sql_said(j, events, pt.dir, o->no_events);
	} else {
		/* no half a job on disk: the temporary files, and the
		 * directories this run made where no other host's files are */
		for (uint32_t k = 0; k < pt.nfiles; k++)
			outfile_abort(&pt.of[k]);
		csv_partition_rmdirs(&pt.dirs);
	}
out:
	partition_free(&pt);
	return rc == 0 ? 0 : 1;
}

/* --sqlite: the job into one file, made as a temporary file beside OUT and
 * renamed OUT once complete (cmd/output.h), so that a failed or interrupted
 * export leaves an existing OUT (--force) as it was, or no OUT. */
static int export_sqlite(const struct export_opts *o, struct job *j)
{
	char *defname = o->output ? NULL : default_output(o->inputs[0], ".sqlite");
	const char *out = o->output ? o->output : defname;
	char err[1024];
	uint64_t events = 0;
	int rc = -1;
	struct outfile of;
	if (cmd_output_open(&of, out, o->force, (const char *const *)o->inputs, o->ninputs) != 0)
		goto out;
	if (!of.tmp) {
		outfile_abort(&of);
		error("'%s' is not a regular file; --sqlite writes a database file", out);
		goto out;
	}
	outfile_close(&of, NULL, 0); /* sqlite writes it through its own name */
	struct sqlite_export *s = sqlite_export_open_as(of.tmp, out, err, sizeof(err));
	if (!s) {
		outfile_abort(&of);
		error("%s", err);
		goto out;
	}
	rc = 0;
	for (uint32_t p = 0; p < j->nparts && rc == 0; p++) {
		struct csv_export_opts eo = sql_opts(j, p);
		if (!o->no_events) {
			struct export_writer *w = sqlite_export_part(s, &eo);
			rc = w ? sql_part(w, j, p, &events) : -1;
			export_writer_destroy(w);
		}
		struct agg_sqlite as = {s, eo.rank};
		if (rc == 0)
			rc = rankagg_part(j, p, agg_sqlite_emit, &as);
		if (rc < 0)
			error("%s", *sqlite_export_error(s) ? sqlite_export_error(s)
							    : "cannot write the database");
	}
	if (rc == 0 && sqlite_export_finish(s, err, sizeof(err)) != 0)
		rc = error("%s", err);
	sqlite_export_close(s);
	if (rc == 0) {
		/* on disk before the rename: sqlite's commits are not synced */
		int fd = open(of.tmp, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL))
			rc = error("cannot write '%s': %s", out, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	if (rc == 0)
		rc = cmd_output_commit(&of);
	else
		outfile_abort(&of);
	if (rc == 0)
		sql_said(j, events, out, o->no_events);
out:
	free(defname);
	return rc == 0 ? 0 : 1;
}

/* ---- which: one trace, or a job ------------------------------------------------ */

/* A job when several files are given, or, for --chrome, one gprof-dl
 * trace whose processes are several ranks; one trace otherwise, which
 * exports as it always has (--csv of a file of several ranks: one
 * directory, processes.csv's rank column telling them apart). */
static int open_job(const struct export_opts *o, struct job *j)
{
	char err[1024];
	enum import_content content;
	/* "-" or a FIFO: its copy, which every later open reads (trace_open.h) */
	const char *from = o->ninputs == 1 ? trace_open_path(o->inputs[0], err, sizeof(err)) : NULL;
	if (o->ninputs == 1 &&
	    (o->csv || !from || import_sniff(from, &content) != 0 || content != IMPORT_CONTENT_GPDL))
		return 0;
	if (job_open(j, o->ninputs, o->inputs, o->mixed_jobs ? JOB_OPEN_MIXED : 0, err,
		     sizeof(err)) != 0) {
		if (o->ninputs == 1)
			return 0; /* the trace reader says what is wrong, as before */
		error("%s", err);
		return -1;
	}
	if (o->ninputs == 1 && j->nparts < 2) {
		job_free(j);
		return 0;
	}
	return 1;
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
	int is_job = open_job(&o, &j);
	if (is_job < 0)
		return 1;
	if (is_job && (o.steps_arg || o.window_arg))
		usage_error("%s takes one trace; %s", o.steps_arg ? "--steps" : "--window",
			    o.ninputs > 1 ? "these are several" : "this one holds several ranks");
	if (o.steps_arg && find_steps(&o) != 0) {
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
		part.from_ns = h->start_ns + o.win_from;
		part.to_ns = o.win_to ? h->start_ns + o.win_to : UINT64_MAX;
	}
	if (o.cycle_arg && capture_cycle_window(o.inputs[0], (uint32_t)capture_parse_cycle(o.cycle_arg), &part.from_ns,
						&part.to_ns, err, sizeof(err)) != 0) {
		trace_reader_close(r);
		error("%s", err);
		return 1;
	}
	int status = o.csv ? export_csv(&o, r) : export_chrome(&o, r);
	trace_reader_close(r);
	return status;
}
