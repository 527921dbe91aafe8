/*
 * summary.c - `gprof-dl summary`: the Paddle-style tables of one or more
 * traces, summarised together, as text, CSV or JSON.
 */
#include "cmd/cmd.h"
#include "common/output.h"
#include "formats/trace/capture.h"
#include "common/progress.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/summary.h"
#include "common/error.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const char summary_usage[] =
	"usage: gprof-dl summary FILE... [--view NAME]... [--op-detail] [--thread-sep]\n"
	"                        [--sorted-by KEY] [--time-unit s|ms|us|ns] [--skip-steps N]\n"
	"                        [--cycle N] [--top N] [--wide] [--group-by name|shapes]\n"
	"                        [--window steps|gpu] [--format text|csv|json] [--mixed-jobs]\n"
	"                        [-o OUT [--force]]\n"
	"\n"
	"Print the summary tables of one or more traces, summarised together. The\n"
	"traces of a distributed job (a rank each, or one holding several ranks)\n"
	"are read rank by rank for the distributed view, which names the straggler,\n"
	"and the perf view, the job's throughput; files of different jobs are refused.\n"
	"\n"
	"  --view NAME        a view to print (repeatable; default: all of them):\n"
	"                     perf, device, overview, model, distributed, operator,\n"
	"                     kernel, memory-manipulation, userdefined, memory, nvprof,\n"
	"                     steps, timeline (series), advice (gprof-dl advise's\n"
	"                     findings; these three only when named), or all\n"
	"                     (perf only when the trace has steps)\n"
	"  --op-detail        nest under each operator what ran inside it and the GPU\n"
	"                     work it launched (operator view)\n"
	"  --thread-sep       one block per thread (per GPU stream in the kernel view)\n"
	"                     instead of all merged\n"
	"  --sorted-by KEY    cpu-total (default), cpu-avg, cpu-max, cpu-min,\n"
	"                     gpu-total, gpu-avg, gpu-max, gpu-min, or self\n"
	"                     (the operator view's self time); the steps view:\n"
	"                     longest first by duration (any of these keys), or\n"
	"                     by dataloader, forward, backward, optimization or\n"
	"                     others (their time in the step); --top N after it\n"
	"  --time-unit UNIT   s, ms (default), us or ns\n"
	"  --skip-steps N     perf and distributed views: leave out the first N steps\n"
	"                     of each trace or rank (default 10, never more than half)\n"
	"  --cycle N          only --schedule's cycle N (or capture range N), from 0:\n"
	"                     every table clipped to it\n"
	"  --window WHAT      what every time is clipped to and every ratio is of:\n"
	"                     steps (default: the ProfileStep ranges, else the whole\n"
	"                     run), or gpu (the GPU's own span, from its first GPU\n"
	"                     work to its last, as Holistic Trace Analysis measures;\n"
	"                     not the distributed and perf views)\n"
	"  --group-by KEY     operator view: a row per name (default), or per name\n"
	"                     and input shapes (shapes: traces of --record-shapes)\n"
	"  --top N            the N heaviest rows of each table (text: 30, csv and\n"
	"                     json: all); 0: all of them\n"
	"  --wide             text: every column at full width, names uncut (by\n"
	"                     default tables fit 100 columns, or the terminal's\n"
	"                     width, or $COLUMNS)\n"
	"  --format FORMAT    text (default), csv or json\n"
	"  --mixed-jobs       take rank files of different jobs (world sizes, runs) as\n"
	"                     one job all the same\n"
	"  -o, --output OUT   write to OUT instead of standard output\n"
	"  -f, --force        overwrite OUT if it exists\n"
	"  -h, --help         show this help\n"
	"\n"
	"See gprof-dl-summary(1) for every view, column and note.\n";

enum {
	OPT_THREAD_SEP = 256,
	OPT_SORTED_BY,
	OPT_CYCLE,
	OPT_GROUP_BY,
	OPT_WINDOW,
};

/* --cycle N; -1: the whole trace */
static long summary_cycle = -1;
/* --force: -o may replace an existing file (never an input) */
static int summary_force;

static const struct option summary_options[] = {
	CMD_OPTIONS_SUMMARY,
	{"thread-sep", no_argument, NULL, OPT_THREAD_SEP},
	{"sorted-by", required_argument, NULL, OPT_SORTED_BY},
	CMD_OPTIONS_JOB,
	{"cycle", required_argument, NULL, OPT_CYCLE},
	{"group-by", required_argument, NULL, OPT_GROUP_BY},
	{"window", required_argument, NULL, OPT_WINDOW},
	CMD_OPTIONS_OUTPUT,
	CMD_OPTIONS_END,
};

static void summary_view_option(struct summary_opts *o, const char *name)
{
	const struct view *v = cmd_view_option(name, NULL);
	if (v) {
		summary_add_view(o, v);
		return;
	}
	for (unsigned i = 0; i < view_registry_count; i++)
		summary_add_view(o, &view_registry[i]);
}

unsigned cmd_parse_count(const char *option, const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end || errno || v > UINT_MAX)
		usage_error("invalid %s '%s' (%s)", option, s, what);
	return (unsigned)v;
}

unsigned cmd_parse_skip_steps(const char *s)
{
	return cmd_parse_count("--skip-steps", s, "a number of steps");
}

enum time_unit cmd_parse_time_unit(const char *s)
{
	enum time_unit u;
	if (time_unit_parse(s, &u) != 0)
		usage_error("unknown time unit '%s' (s, ms, us or ns)", s);
	return u;
}

/* Parses the options into o; returns the index of the first file in argv. */
static int summary_parse(int argc, char **argv, struct summary_opts *o, const char **output)
{
	int c;
	opterr = 0;
	optind = 1;
	while ((c = cmd_getopt_long(argc, argv, ":o:fh", summary_options, NULL)) != -1) {
		switch (c) {
		case CMD_OPT_VIEW:
			summary_view_option(o, optarg);
			break;
		case OPT_THREAD_SEP:
			o->view.thread_sep = 1;
			break;
		case OPT_SORTED_BY:
			if (sort_key_parse(optarg, &o->view.sort) != 0)
				cmd_unknown_name("sort key", optarg, sort_key_names, SORT_KEY_COUNT, NULL);
			o->view.sort_set = 1;
			break;
		case CMD_OPT_SKIP_STEPS:
			o->view.skip_steps = cmd_parse_skip_steps(optarg);
			o->view.skip_set = 1;
			break;
		case CMD_OPT_TOP:
			o->top = (int)cmd_parse_count("--top", optarg, "a number of rows, 0 for all");
			if (o->top < 0)
				usage_error("invalid --top '%s' (a number of rows, 0 for all)", optarg);
			break;
		case OPT_CYCLE:
			if ((summary_cycle = capture_parse_cycle(optarg)) < 0)
				usage_error("--cycle: '%s' is not a cycle number (0, 1, ...)", optarg);
			break;
		case OPT_GROUP_BY:
			if (strcmp(optarg, "name") != 0 && strcmp(optarg, "shapes") != 0)
				usage_error("unknown --group-by '%s' (name or shapes)", optarg);
			o->view.group_shapes = strcmp(optarg, "shapes") == 0;
			break;
		case OPT_WINDOW:
			if (strcmp(optarg, "steps") != 0 && strcmp(optarg, "gpu") != 0)
				usage_error("unknown --window '%s' (steps or gpu)", optarg);
			o->view.gpu_window = strcmp(optarg, "gpu") == 0;
			break;
		default:
			if (cmd_summary_option(c, o))
				break;
			if (cmd_common_option(c, argv, summary_usage, output, &summary_force) < 0)
				return -1;
		}
	}
	if (optind >= argc)
		usage_error("no trace file given");
	return optind;
}

int cmd_summary_option(int c, struct summary_opts *o)
{
	switch (c) {
	case CMD_OPT_OP_DETAIL:
		o->view.op_detail = 1;
		return 1;
	case CMD_OPT_WIDE:
		o->fit = 0;
		return 1;
	case CMD_OPT_FORMAT:
		if (summary_format_parse(optarg, &o->format) != 0)
			usage_error("unknown format '%s' (text, csv or json)", optarg);
		return 1;
	case CMD_OPT_TIME_UNIT:
		o->view.unit = cmd_parse_time_unit(optarg);
		return 1;
	case CMD_OPT_MIXED_JOBS:
		o->job_flags |= JOB_OPEN_MIXED;
		return 1;
	}
	return 0;
}

int cmd_summary(int argc, char **argv)
{
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS},
				 .fit = 1,
				 .top = -1};
	const char *output = NULL;
	int first = summary_parse(argc, argv, &o, &output);
	if (first < 0)
		return 0;
	progress_enable(1); /* only shown on a terminal, after a second */
	if (!output || strcmp(output, "-") == 0)
		return summary_files(argc - first, argv + first, &o, summary_cycle, stdout,
				     "summarised") ? 1 : 0;
	/* a temporary file beside OUT, renamed to it when whole (output.h) */
	struct outfile of;
	if (output_open(&of, output, summary_force, (const char *const *)(argv + first),
			    argc - first) != 0)
		return 1;
	FILE *f = outfile_fdopen(&of);
	if (!f)
		return output_fail(&of, errno), 1;
	int rc = summary_files(argc - first, argv + first, &o, summary_cycle, f, "summarised");
	if (rc < 0)
		return output_fail(&of, errno), 1;
	if (rc > 0) {
		outfile_abort(&of); /* an unreadable trace: no output at all */
		return 1;
	}
	return output_commit(&of) ? 1 : 0;
}
