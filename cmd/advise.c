/*
 * advise.c - `gprof-dl advise`: what to change, and why, from the traces
 * (lib/analysis/advice.h; every rule in gprof-dl-advise(1)).
 */
#include "cmd/cmd.h"
#include "common/output.h"

#include "lib/analysis/advice.h"
#include "lib/analysis/dist/job.h"
#include "common/progress.h"
#include "lib/analysis/views/perf.h"

#include "common/error.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char advise_usage[] =
	"usage: gprof-dl advise FILE... [--format text|json] [--fail-on SEVERITY|RULE]\n"
	"                       [--skip-steps N] [--top N] [--mixed-jobs] [-o OUT [--force]]\n"
	"       gprof-dl advise --rules\n"
	"\n"
	"Say what to change, and why, from one or more traces (a program, or a job's\n"
	"rank files): findings ranked by the time each costs per step (an estimate),\n"
	"each with its evidence, the rule's threshold, what to try and the summary\n"
	"command that shows the table behind it.\n"
	"\n"
	"  --format FORMAT    text (default) or json (stable rule ids, severity,\n"
	"                     saving, evidence)\n"
	"  --fail-on WHAT     exit 1 when a finding is of severity WHAT or above\n"
	"                     (low, medium, high) or of rule WHAT: a CI gate\n"
	"  --rules            list every rule: its definition, threshold and reason\n"
	"  --skip-steps N     leave out the first N steps of each trace or rank\n"
	"                     (default 10, never more than half), as summary does\n"
	"  --top N            text: the N largest findings (default 10; 0: all)\n"
	"  --mixed-jobs       take rank files of different jobs as one job\n"
	"  -o, --output OUT   write to OUT instead of standard output\n"
	"  -f, --force        overwrite OUT if it exists\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: 0, 1 when --fail-on's condition holds or a trace cannot be\n"
	"read, 2 on a usage error. See gprof-dl-advise(1) for every rule.\n";

enum {
	OPT_FORMAT = 256,
	OPT_FAIL_ON,
	OPT_RULES,
	OPT_TOP,
};

static const struct option advise_options[] = {
	{"format", required_argument, NULL, OPT_FORMAT},
	{"fail-on", required_argument, NULL, OPT_FAIL_ON},
	{"rules", no_argument, NULL, OPT_RULES},
	CMD_OPTIONS_JOB,
	{"top", required_argument, NULL, OPT_TOP},
	CMD_OPTIONS_OUTPUT,
	CMD_OPTIONS_END,
};

static void fail_on(struct advice_opts *o, const char *what)
{
	o->fail_set = 1;
	if (adv_severity_parse(what, &o->fail_severity) == 0)
		return;
	o->fail_rule = adv_rule_find(what);
	if (o->fail_rule)
		return;
	const char *names[64] = {"low", "medium", "high"};
	size_t n = 3;
	for (size_t i = 0; adv_rules[i] && n < 64; i++)
		names[n++] = adv_rules[i]->id;
	cmd_unknown_name("--fail-on severity or rule", what, names, n, NULL);
}

int cmd_advise(int argc, char **argv)
{
	struct advice_opts o = {.skip = PERF_SKIP_DEFAULT, .top = 10};
	const char *output = NULL;
	int force = 0, rules = 0, c;
	opterr = 0;
	optind = 1;
	while ((c = cmd_getopt_long(argc, argv, ":o:fh", advise_options, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0)
				usage_error("unknown format '%s' (text or json)", optarg);
			o.json = strcmp(optarg, "json") == 0;
			break;
		case OPT_FAIL_ON:
			fail_on(&o, optarg);
			break;
		case OPT_RULES:
			rules = 1;
			break;
		case OPT_TOP:
			o.top = cmd_parse_count("--top", optarg, "a number of findings, 0 for all");
			break;
		default:
			if (cmd_job_option(c, &o.skip, &o.job_flags, NULL))
				break;
			if (cmd_common_option(c, argv, advise_usage, &output, &force) < 0)
				return 0;
		}
	}
	if (rules)
		return adv_write_rules(stdout, table_text_width(stdout)) ? 1 : 0;
	if (optind >= argc)
		usage_error("no trace file given");
	char *const *paths = argv + optind;
	int n = argc - optind;
	progress_enable(1);
	if (!output || strcmp(output, "-") == 0)
		return advice_files(n, paths, &o, stdout) ? 1 : 0;
	struct outfile of;
	if (output_open(&of, output, force, (const char *const *)paths, n) != 0)
		return 1;
	FILE *f = outfile_fdopen(&of);
	if (!f)
		return output_fail(&of, errno), 1;
	int rc = advice_files(n, paths, &o, f);
	if (rc < 0) {
		outfile_abort(&of);
		return 1;
	}
	return output_commit(&of) ? 1 : rc;
}
