/*
 * diff.c - `gprof-dl diff`: what changed between two traces, A (before) and
 * B (after), view by view: each view is built for both, and diff.h matches
 * their rows and compares their times, per training step when both traces
 * have steps.
 *
 *   gprof-dl diff A B [--view NAME]... [--op-detail] [--top N] [--totals]
 *                     [--skip-steps K] [--time-unit U] [--format text|csv|json]
 *                     [-o OUT]
 *   gprof-dl diff --a FILE... --b FILE... [options]
 *
 * A side is one file, or with --a / --b the files that follow it: when both
 * sides hold ranks (job.h), they are two distributed jobs, compared rank by
 * rank and as a whole (jobperf.h: the "Ranks Compared" table, first), then
 * view by view over each whole job.
 *
 * This file is the command line; diff_files() (lib/analysis/diff.c) reads
 * the sides and writes the diff, for report --baseline as well.
 *
 * Exit status: 0 printed; 1 a file that cannot be read, or output that
 * cannot be written; 2 usage.
 */
#include "cmd/cmd.h"
#include "common/output.h"
#include "lib/analysis/diff.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/views/perf.h"
#include "common/progress.h"
#include "lib/analysis/summary.h"
#include "common/error.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char diff_usage[] =
	"usage: gprof-dl diff A B [--view NAME]... [--op-detail] [--top N] [--totals]\n"
	"                     [--wide] [--skip-steps K] [--time-unit s|ms|us|ns]\n"
	"                     [--format text|csv|json] [--mixed-jobs] [-o OUT]\n"
	"       gprof-dl diff --a FILE... --b FILE... [options]\n"
	"\n"
	"Compare two traces, A (before) and B (after), view by view: the rows of\n"
	"each view matched by name, their CPU and GPU times side by side, B - A,\n"
	"largest change first. Times are per training step when both traces have\n"
	"steps, totals otherwise. When both sides hold the ranks of a distributed\n"
	"job (one file with several ranks, or with --a and --b the files of each\n"
	"side), the jobs are compared rank by rank and as a whole first.\n"
	"\n"
	"  --a FILE...        the files of side A (a job's rank files)\n"
	"  --b FILE...        the files of side B\n"
	"  --view NAME        a view to compare (repeatable; default: all of them):\n"
	"                     model, operator, kernel, memory-manipulation,\n"
	"                     userdefined, or all\n"
	"  --op-detail        operator view: compare what ran inside each operator\n"
	"  --top N            rows per view, largest change first (default 10; 0: all)\n"
	"  --totals           compare totals, not times per step\n"
	"  --wide             text: every column at full width, names uncut (by\n"
	"                     default the tables fit 100 columns or the terminal)\n"
	"  --skip-steps K, --skip K\n"
	"                     jobs: leave out the first K steps of each rank from the\n"
	"                     rank-by-rank comparison (default 10, at most half)\n"
	"  --time-unit UNIT   s, ms (default), us or ns\n"
	"  --format FORMAT    text (default), csv or json\n"
	"  --mixed-jobs       take a side's rank files of different jobs as one job\n"
	"  -o, --output OUT   write to OUT instead of standard output\n"
	"  -f, --force        overwrite OUT if it exists\n"
	"  -h, --help         show this help\n"
	"\n"
	"See gprof-dl-diff(1) for the columns and the CSV and JSON layouts.\n";

#define DIFF_TOP_DEFAULT 10

/* The command line: diff.h's options, and where the output goes. */
struct diff_cmd {
	struct diff_opts d;
	const char *output;
	int force;
};


enum {
	OPT_TOTALS = 256,
	OPT_SIDE_A,
	OPT_SIDE_B,
};

static const struct option diff_options[] = {
	CMD_OPTIONS_SUMMARY,
	{"totals", no_argument, NULL, OPT_TOTALS},
	CMD_OPTIONS_JOB,
	{"skip", required_argument, NULL, CMD_OPT_SKIP_STEPS},
	{"a", required_argument, NULL, OPT_SIDE_A},
	{"b", required_argument, NULL, OPT_SIDE_B},
	CMD_OPTIONS_OUTPUT,
	CMD_OPTIONS_END,
};

/* Whether a view can be diffed: its table, built for no trace at all, has
 * the columns diff_tables compares. Asked before any file is read, so that
 * a bad --view is a usage error whatever the files hold. */
static int view_diffable(const struct view *v)
{
	static struct analysis empty;
	static int ready;
	if (!ready) {
		analysis_init(&empty);
		analysis_prepare(&empty);
		ready = 1;
	}
	struct view_opts o = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS};
	struct table *t = v->build(v, &empty, &o);
	int ok = diff_view_supported(t);
	table_free(t);
	return ok;
}

static void diff_view_option(struct diff_opts *o, const char *name)
{
	const struct view *v = cmd_view_option(name, view_diffable);
	if (!v) {
		for (unsigned i = 0; i < diff_default_view_count; i++)
			summary_add_view(&o->s, view_find(diff_default_views[i]));
		return;
	}
	if (!view_diffable(v))
		usage_error("view '%s' cannot be diffed: it has no CPU or GPU Total column", name);
	summary_add_view(&o->s, v);
}

static void side_add(struct diff_opts *o, int k, char *file)
{
	o->files[k] = xrealloc(o->files[k], (size_t)(o->nfiles[k] + 1) * sizeof(*o->files[k]));
	o->files[k][o->nfiles[k]++] = file;
}

/* Parses the options into cmd, and the files of each side: A B, or the files
 * after --a and after --b. Returns 0, or -1 after --help. Options and files
 * are read in order ("-" in the option string), so that a file belongs to
 * the --a or --b before it. */
static int diff_parse(int argc, char **argv, struct diff_cmd *cmd)
{
	struct diff_opts *o = &cmd->d;
	int c, side = -1; /* the side of the files that follow: -1 none yet (A B) */
	/* files before any --a/--b; kept reachable from a static, so that a
	 * usage error that exits while parsing leaks nothing (LeakSanitizer) */
	static char **loose;
	loose = xmalloc((size_t)argc * sizeof(*loose));
	int nloose = 0, marked = 0;
	opterr = 0;
	optind = 1;
	while ((c = cmd_getopt_long(argc, argv, "-:o:fh", diff_options, NULL)) != -1) {
		switch (c) {
		case 1: /* a file */
			if (side < 0)
				loose[nloose++] = optarg;
			else
				side_add(o, side, optarg);
			break;
		case OPT_SIDE_A:
		case OPT_SIDE_B:
			side = c == OPT_SIDE_A ? 0 : 1;
			marked = 1;
			side_add(o, side, optarg);
			break;
		case CMD_OPT_VIEW:
			diff_view_option(o, optarg);
			break;
		case CMD_OPT_TOP:
			o->top = cmd_parse_count("--top", optarg, "a number of rows, 0 for all");
			break;
		case OPT_TOTALS:
			o->totals = 1;
			break;
		case CMD_OPT_SKIP_STEPS:
			o->skip = cmd_parse_skip_steps(optarg);
			break;
		default:
			if (cmd_summary_option(c, &o->s))
				break;
			if (cmd_common_option(c, argv, diff_usage, &cmd->output, &cmd->force) < 0) {
				free(loose);
				loose = NULL;
				return -1;
			}
		}
	}
	for (; optind < argc; optind++) /* after "--" */
		if (side < 0)
			loose[nloose++] = argv[optind];
		else
			side_add(o, side, argv[optind]);
	if (marked) {
		if (nloose)
			usage_error("'%s' is given before --a or --b (with --a and --b, each file "
				    "follows the option of its side)",
				    loose[0]);
		if (!o->nfiles[0] || !o->nfiles[1])
			usage_error("no files given for side %s (--%s FILE...)", o->nfiles[0] ? "B" : "A",
				    o->nfiles[0] ? "b" : "a");
	} else {
		if (nloose == 0)
			usage_error("no trace files given (A and B)");
		if (nloose == 1)
			usage_error("no trace file B given to compare with '%s'", loose[0]);
		if (nloose > 2)
			usage_error("too many files: '%s' (diff compares two traces, A and B)",
				    loose[2]);
		side_add(o, 0, loose[0]);
		side_add(o, 1, loose[1]);
	}
	free(loose);
	loose = NULL;
	if (!o->s.nviews)
		for (unsigned i = 0; i < diff_default_view_count; i++)
			summary_add_view(&o->s, view_find(diff_default_views[i]));
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_cmd c = {.d = {.s = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS}, .fit = 1},
				   .top = DIFF_TOP_DEFAULT,
				   .skip = PERF_SKIP_DEFAULT}};
	if (diff_parse(argc, argv, &c) < 0)
		return 0;
	progress_enable(1); /* only shown on a terminal, after a second */
	int rc;
	if (!c.output || strcmp(c.output, "-") == 0) {
		rc = diff_files(&c.d, NULL);
	} else {
		/* a temporary file beside OUT, renamed to it when whole (output.h) */
		int n = c.d.nfiles[0] + c.d.nfiles[1];
		const char **in = xcalloc(n ? n : 1, sizeof(*in));
		for (int k = 0, i = 0; k < 2; k++)
			for (int m = 0; m < (int)c.d.nfiles[k]; m++)
				in[i++] = c.d.files[k][m];
		struct outfile of;
		rc = output_open(&of, c.output, c.force, in, n) != 0;
		free(in);
		FILE *f = rc ? NULL : outfile_fdopen(&of);
		if (!rc && !f)
			rc = output_fail(&of, errno) != 0;
		if (!rc) {
			rc = diff_files(&c.d, f);
			if (rc && ferror(f))
				output_fail(&of, errno);
			else if (rc)
				outfile_abort(&of); /* said why: an unreadable trace */
			else
				rc = output_commit(&of) != 0;
		}
	}
	free(c.d.files[0]);
	free(c.d.files[1]);
	return rc;
}
