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
 * Exit status: 0 printed; 1 a file that cannot be read, or output that
 * cannot be written; 2 usage.
 */
#include "cmd/cmd.h"
#include "formats/csv/csv_out.h"
#include "formats/json/json_writer.h"
#include "lib/analysis/diff.h"
#include "lib/analysis/store/job.h"
#include "lib/analysis/views/jobperf.h"
#include "lib/analysis/store/parallel.h"
#include "lib/analysis/store/progress.h"
#include "lib/analysis/summary.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char diff_usage[] =
	"usage: gprof-dl diff A B [--view NAME]... [--op-detail] [--top N] [--totals]\n"
	"                     [--skip-steps K] [--time-unit s|ms|us|ns]\n"
	"                     [--format text|csv|json] [-o OUT]\n"
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
	"  --skip-steps K     jobs: leave out the first K steps of each rank from the\n"
	"                     rank-by-rank comparison (default 10, at most half)\n"
	"  --time-unit UNIT   s, ms (default), us or ns\n"
	"  --format FORMAT    text (default), csv or json\n"
	"  -o, --output OUT   write to OUT instead of standard output\n"
	"  -h, --help         show this help\n"
	"\n"
	"See gprof-dl-diff(1) for the columns and the CSV and JSON layouts.\n";

#define DIFF_TOP_DEFAULT 10

struct diff_opts {
	struct summary_opts s; /* the views, their options, the format */
	unsigned top;
	int totals;
	unsigned skip;
	const char *output;
	/* the files of A and of B (pointers into argv) */
	char **files[2];
	int nfiles[2];
};

enum {
	OPT_VIEW = 256,
	OPT_OP_DETAIL,
	OPT_TOP,
	OPT_TOTALS,
	OPT_TIME_UNIT,
	OPT_FORMAT,
	OPT_SKIP_STEPS,
	OPT_SIDE_A,
	OPT_SIDE_B,
	OPT_WIDE,
};

static const struct option diff_options[] = {
	{"view", required_argument, NULL, OPT_VIEW},
	{"op-detail", no_argument, NULL, OPT_OP_DETAIL},
	{"top", required_argument, NULL, OPT_TOP},
	{"totals", no_argument, NULL, OPT_TOTALS},
	{"wide", no_argument, NULL, OPT_WIDE},
	{"time-unit", required_argument, NULL, OPT_TIME_UNIT},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"skip-steps", required_argument, NULL, OPT_SKIP_STEPS},
	{"skip", required_argument, NULL, OPT_SKIP_STEPS},
	{"a", required_argument, NULL, OPT_SIDE_A},
	{"b", required_argument, NULL, OPT_SIDE_B},
	{"output", required_argument, NULL, 'o'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
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
	if (strcmp(name, "all") == 0) {
		for (unsigned i = 0; i < diff_default_view_count; i++)
			summary_add_view(&o->s, view_find(diff_default_views[i]));
		return;
	}
	const struct view *v = view_find(name);
	if (!v)
		usage_error("unknown view '%s'", name);
	if (!view_diffable(v))
		usage_error("view '%s' cannot be diffed: it has no CPU or GPU Total column", name);
	summary_add_view(&o->s, v);
}

static void side_add(struct diff_opts *o, int k, char *file)
{
	o->files[k] = xrealloc(o->files[k], (size_t)(o->nfiles[k] + 1) * sizeof(*o->files[k]));
	o->files[k][o->nfiles[k]++] = file;
}

/* Parses the options into o, and the files of each side: A B, or the files
 * after --a and after --b. Returns 0, or -1 after --help. Options and files
 * are read in order ("-" in the option string), so that a file belongs to
 * the --a or --b before it. */
static int diff_parse(int argc, char **argv, struct diff_opts *o)
{
	int c, side = -1; /* the side of the files that follow: -1 none yet (A B) */
	char **loose = xmalloc((size_t)argc * sizeof(*loose)); /* files before any --a/--b */
	int nloose = 0, marked = 0;
	opterr = 0;
	optind = 1;
	while ((c = cmd_getopt_long(argc, argv, "-:o:h", diff_options, NULL)) != -1) {
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
		case OPT_VIEW:
			diff_view_option(o, optarg);
			break;
		case OPT_OP_DETAIL:
			o->s.view.op_detail = 1;
			break;
		case OPT_TOP:
			o->top = cmd_parse_count("--top", optarg, "a number of rows, 0 for all");
			break;
		case OPT_TOTALS:
			o->totals = 1;
			break;
		case OPT_WIDE:
			o->s.fit = 0;
			break;
		case OPT_SKIP_STEPS:
			o->skip = cmd_parse_skip_steps(optarg);
			break;
		case OPT_TIME_UNIT:
			o->s.view.unit = cmd_parse_time_unit(optarg);
			break;
		case OPT_FORMAT:
			if (summary_format_parse(optarg, &o->s.format) != 0)
				usage_error("unknown format '%s' (text, csv or json)", optarg);
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'h':
			fputs(diff_usage, stdout);
			free(loose);
			return -1;
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
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
	if (!o->s.nviews)
		for (unsigned i = 0; i < diff_default_view_count; i++)
			summary_add_view(&o->s, view_find(diff_default_views[i]));
	return 0;
}

/* ---- building: both sides of every view, side by side ---------------------- */

struct diff_job {
	const struct analysis *an[2];
	const struct diff_opts *o;
	struct table **tables; /* view i of side k at 2 * i + k */
};

static void build_side(void *ctx, unsigned j)
{
	struct diff_job *job = ctx;
	const struct view *v = job->o->s.views[j / 2];
	job->tables[j] = v->build(v, job->an[j % 2], &job->o->s.view);
}

/* ---- the sides ------------------------------------------------------------- */

/* What one side is: its files, loaded as one program, and when both sides
 * are jobs, its ranks measured. */
struct diff_input {
	char **files;
	int nfiles;
	char *name;        /* the files, ", "-joined: how the output names the side */
	uint32_t nranks;   /* the ranks its files hold (0: none) */
	struct analysis an;
	struct jobperf jp; /* measured when both sides hold ranks */
	int measured;
};

static char *join_names(char **files, int n)
{
	size_t len = 1;
	for (int i = 0; i < n; i++)
		len += strlen(files[i]) + 2;
	char *name = xmalloc(len), *at = name;
	*at = '\0';
	for (int i = 0; i < n; i++)
		at += sprintf(at, "%s%s", i ? ", " : "", files[i]);
	return name;
}

/* Opens both sides as jobs, to learn whether they hold ranks; then loads
 * each whole (and, when both are jobs, measures each rank alone first:
 * one rank's store at a time). 0, or -1 after an error message. */
static int diff_load(struct diff_input *in, const struct diff_opts *o)
{
	struct job j[2];
	char err[1024];
	for (unsigned k = 0; k < 2; k++) {
		if (job_open(&j[k], in[k].nfiles, in[k].files, err, sizeof(err)) != 0) {
			progress_done();
			error("%s", err);
			if (k)
				job_free(&j[0]);
			return -1;
		}
		in[k].nranks = j[k].nranks;
	}
	int jobs = in[0].nranks && in[1].nranks, rc = 0;
	for (unsigned k = 0; k < 2 && rc == 0; k++) {
		if (!jobs) {
			rc = job_load_files(&in[k].an, in[k].nfiles, in[k].files, "compared");
			continue;
		}
		/* the measure warns of damage, once for the side */
		if (jobperf_measure(&in[k].jp, &j[k], o->skip, "compared", err, sizeof(err)) != 0 ||
		    job_load_all(&j[k], &in[k].an, err, sizeof(err)) != 0) {
			progress_done();
			error("%s", err);
			rc = -1;
		}
		in[k].measured = rc == 0;
	}
	job_free(&j[0]);
	job_free(&j[1]);
	return rc;
}

/* ---- output ---------------------------------------------------------------- */

struct diff_out {
	const struct diff_opts *o;
	const struct diff_side *side[2];
	const struct diff_input *in[2];
	int per_step;
	struct summary_out s;
};

static void text_side(FILE *f, const char *which, const struct diff_side *s,
		      const struct diff_input *in)
{
	const struct analysis *a = &in->an;
	fprintf(f, "%s: '", which);
	text_fputs(s->name, f);
	fputs("' (", f);
	if (in->nranks)
		fprintf(f, "a job of %u rank%s, ", in->nranks, in->nranks == 1 ? "" : "s");
	if (a->steps)
		fprintf(f, "%llu step%s)", (unsigned long long)a->steps, a->steps == 1 ? "" : "s");
	else
		fputs("no steps)", f);
}

/* The CSV's first block: which trace is which, and what divides its times. */
static void csv_sides(struct diff_out *d)
{
	static const struct tcol cols[] = {
		{"Side", "side", TCOL_TEXT, NULL, 0, NULL},
		{"File", "file", TCOL_TEXT, NULL, 0, NULL},
		{"Steps", "steps", TCOL_COUNT, NULL, 0, NULL},
		{"Divisor", "divisor", TCOL_COUNT, NULL, 0, NULL},
		{"Times", "times", TCOL_TEXT, NULL, 0, NULL},
	};
	struct table *t = table_new("diff", "Traces Compared", cols, sizeof(cols) / sizeof(cols[0]));
	struct tpart *p = table_add_part(t, NULL, NULL, NULL);
	for (unsigned k = 0; k < 2; k++) {
		struct trow *r = tpart_add_row(t, p, 0);
		trow_text(r, 0, k ? "B" : "A");
		trow_text(r, 1, d->side[k]->name);
		trow_count(r, 2, d->in[k]->an.steps);
		trow_count(r, 3, (uint64_t)d->side[k]->divisor);
		trow_text(r, 4, d->per_step ? "per step" : "total");
	}
	summary_out_table(&d->s, NULL, t);
	table_free(t);
}

static void json_side(struct json_writer *w, const char *key, const struct diff_side *s,
		      const struct diff_input *in)
{
	json_key(w, key);
	json_begin_object(w);
	json_key(w, "file");
	json_string(w, s->name);
	json_key(w, "steps");
	json_uint(w, in->an.steps);
	json_key(w, "divisor");
	json_uint(w, (uint64_t)s->divisor);
	/* a side of several files, or of ranks, says so */
	if (in->nfiles > 1) {
		json_key(w, "files");
		json_begin_array(w);
		for (int i = 0; i < in->nfiles; i++)
			json_string(w, in->files[i]);
		json_end_array(w);
	}
	if (in->nranks) {
		json_key(w, "ranks");
		json_uint(w, in->nranks);
	}
	json_end_object(w);
}

/* What the document says before its tables: which trace is which. */
static void out_begin(struct diff_out *d, FILE *f)
{
	const struct diff_opts *o = d->o;
	summary_out_begin(&d->s, o->s.format, f, o->s.view.unit);
	if (o->s.format == SUMMARY_TEXT) { /* within the width, as summary's (diff has its own --top) */
		d->s.st.width = o->s.fit ? table_text_width(f) : 0;
		if (!o->s.fit)
			d->s.st.name_max = UINT_MAX;
	}
	if (o->s.format == SUMMARY_TEXT) {
		fputs("Comparing ", f);
		text_side(f, "A", d->side[0], d->in[0]);
		fputs(" with ", f);
		text_side(f, "B", d->side[1], d->in[1]);
		fprintf(f, "; times %s\n\n", d->per_step ? "per step" : "in total");
	} else if (o->s.format == SUMMARY_CSV) {
		csv_sides(d);
	} else {
		struct json_writer *w = &d->s.json;
		json_key(w, "schema");
		json_string(w, "gprof-dl-diff/1");
		json_side(w, "a", d->side[0], d->in[0]);
		json_side(w, "b", d->side[1], d->in[1]);
		json_key(w, "per_step");
		json_bool(w, d->per_step);
		json_key(w, "time_unit");
		json_string(w, time_unit_name(o->s.view.unit));
		json_key(w, "top");
		json_uint(w, o->top);
	}
	summary_out_tables(&d->s);
}

static int diff_write(const struct diff_opts *o, struct diff_input *in, FILE *f)
{
	unsigned n = o->s.nviews;
	struct table **tables = xcalloc(2 * n, sizeof(*tables));
	struct diff_job job = {{&in[0].an, &in[1].an}, o, tables};
	progress_phase("building %u tables", 2 * n);
	parallel_for(2 * n, build_side, &job);
	progress_done();

	/* per step only when both sides have steps: a step of one and the
	 * whole run of the other do not compare */
	int per_step = !o->totals && in[0].an.steps > 0 && in[1].an.steps > 0;
	struct diff_side side[2];
	for (unsigned k = 0; k < 2; k++) {
		side[k].t = NULL;
		side[k].divisor = per_step ? (double)in[k].an.steps : 1.0;
		side[k].name = in[k].name;
	}
	struct diff_out d = {o, {&side[0], &side[1]}, {&in[0], &in[1]}, per_step, {0}};
	out_begin(&d, f);
	if (in[0].measured && in[1].measured) {
		struct table *t = jobperf_diff_table(&in[0].jp, &in[1].jp, in[0].name, in[1].name);
		summary_out_table(&d.s, t->id, t);
		table_free(t);
	}
	for (unsigned i = 0; i < n; i++) {
		side[0].t = tables[2 * i];
		side[1].t = tables[2 * i + 1];
		struct table *t = diff_tables(o->s.views[i]->name, o->s.views[i]->title, &side[0],
					      &side[1], o->top, per_step);
		summary_out_table(&d.s, t->id, t);
		table_free(t);
		table_free(tables[2 * i]);
		table_free(tables[2 * i + 1]);
	}
	free(tables);
	return summary_out_end(&d.s);
}

int cmd_diff(int argc, char **argv)
{
	struct diff_opts o = {.s = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS}, .fit = 1},
			      .top = DIFF_TOP_DEFAULT,
			      .skip = PERF_SKIP_DEFAULT};
	if (diff_parse(argc, argv, &o) < 0)
		return 0;
	struct diff_input in[2];
	memset(in, 0, sizeof(in));
	for (unsigned k = 0; k < 2; k++) {
		in[k].files = o.files[k];
		in[k].nfiles = o.nfiles[k];
		in[k].name = join_names(o.files[k], o.nfiles[k]);
		analysis_init(&in[k].an);
	}
	progress_enable(1); /* only shown on a terminal, after a second */
	int rc = 1;
	FILE *out = stdout;
	if (diff_load(in, &o) != 0)
		goto done;
	if (o.output && !(out = fopen(o.output, "w"))) {
		error("cannot open '%s': %s", o.output, strerror(errno));
		goto done;
	}
	rc = diff_write(&o, in, out) ? 1 : 0;
	if (out != stdout && fclose(out) != 0)
		rc = 1;
	if (rc && out != stdout)
		error("cannot write '%s'", o.output);
done:
	progress_done();
	for (unsigned k = 0; k < 2; k++) {
		analysis_free(&in[k].an);
		jobperf_free(&in[k].jp);
		free(in[k].name);
		free(o.files[k]);
	}
	return rc;
}
