/*
 * diff.c - `gprof-dl diff`: what changed between two traces, A (before) and
 * B (after), view by view: each view is built for both, and diff.h matches
 * their rows and compares their times, per training step when both traces
 * have steps.
 *
 *   gprof-dl diff A B [--view NAME]... [--op-detail] [--top N] [--totals]
 *                     [--time-unit U] [--format text|csv|json] [-o OUT]
 *
 * Exit status: 0 printed; 1 a file that cannot be read, or output that
 * cannot be written; 2 usage.
 */
#include "cmd/cmd.h"
#include "formats/csv/csv_out.h"
#include "formats/json/json_writer.h"
#include "lib/analysis/diff.h"
#include "lib/analysis/parallel.h"
#include "lib/analysis/progress.h"
#include "lib/analysis/summary.h"
#include "lib/common/error.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char diff_usage[] =
	"usage: gprof-dl diff A B [--view NAME]... [--op-detail] [--top N] [--totals]\n"
	"                     [--time-unit s|ms|us|ns] [--format text|csv|json] [-o OUT]\n"
	"\n"
	"Compare two traces, A (before) and B (after), view by view: the rows of\n"
	"each view matched by name, their CPU and GPU times side by side, B - A,\n"
	"largest change first. Times are per training step when both traces have\n"
	"steps, totals otherwise.\n"
	"\n"
	"  --view NAME        a view to compare (repeatable; default: all of them):\n"
	"                     model, operator, kernel, memory-manipulation,\n"
	"                     userdefined, or all\n"
	"  --op-detail        operator view: compare what ran inside each operator\n"
	"  --top N            rows per view, largest change first (default 10; 0: all)\n"
	"  --totals           compare totals, not times per step\n"
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
	const char *output;
};

enum {
	OPT_VIEW = 256,
	OPT_OP_DETAIL,
	OPT_TOP,
	OPT_TOTALS,
	OPT_TIME_UNIT,
	OPT_FORMAT,
};

static const struct option diff_options[] = {
	{"view", required_argument, NULL, OPT_VIEW},
	{"op-detail", no_argument, NULL, OPT_OP_DETAIL},
	{"top", required_argument, NULL, OPT_TOP},
	{"totals", no_argument, NULL, OPT_TOTALS},
	{"time-unit", required_argument, NULL, OPT_TIME_UNIT},
	{"format", required_argument, NULL, OPT_FORMAT},
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

/* Parses the options into o; returns the index of A in argv (B follows),
 * or -1 after --help. */
static int diff_parse(int argc, char **argv, struct diff_opts *o)
{
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", diff_options, NULL)) != -1) {
		switch (c) {
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
			return -1;
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_error("no trace files given (A and B)");
	if (optind + 1 >= argc)
		usage_error("no trace file B given to compare with '%s'", argv[optind]);
	if (optind + 2 < argc)
		usage_error("too many files: '%s' (diff compares two traces, A and B)",
			    argv[optind + 2]);
	if (!o->s.nviews)
		for (unsigned i = 0; i < diff_default_view_count; i++)
			summary_add_view(&o->s, view_find(diff_default_views[i]));
	return optind;
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

/* ---- output ---------------------------------------------------------------- */

struct diff_out {
	const struct diff_opts *o;
	const struct diff_side *side[2];
	const struct analysis *an[2];
	int per_step;
	struct summary_out s;
};

static void text_side(FILE *f, const char *which, const struct diff_side *s,
		      const struct analysis *a)
{
	if (a->steps)
		fprintf(f, "%s: '%s' (%llu step%s)", which, s->name, (unsigned long long)a->steps,
			a->steps == 1 ? "" : "s");
	else
		fprintf(f, "%s: '%s' (no steps)", which, s->name);
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
		trow_count(r, 2, d->an[k]->steps);
		trow_count(r, 3, (uint64_t)d->side[k]->divisor);
		trow_text(r, 4, d->per_step ? "per step" : "total");
	}
	summary_out_table(&d->s, NULL, t);
	table_free(t);
}

static void json_side(struct json_writer *w, const char *key, const struct diff_side *s,
		      const struct analysis *a)
{
	json_key(w, key);
	json_begin_object(w);
	json_key(w, "file");
	json_string(w, s->name);
	json_key(w, "steps");
	json_uint(w, a->steps);
	json_key(w, "divisor");
	json_uint(w, (uint64_t)s->divisor);
	json_end_object(w);
}

/* What the document says before its tables: which trace is which. */
static void out_begin(struct diff_out *d, FILE *f)
{
	const struct diff_opts *o = d->o;
	summary_out_begin(&d->s, o->s.format, f, o->s.view.unit);
	if (o->s.format == SUMMARY_TEXT) {
		fputs("Comparing ", f);
		text_side(f, "A", d->side[0], d->an[0]);
		fputs(" with ", f);
		text_side(f, "B", d->side[1], d->an[1]);
		fprintf(f, "; times %s\n\n", d->per_step ? "per step" : "in total");
	} else if (o->s.format == SUMMARY_CSV) {
		csv_sides(d);
	} else {
		struct json_writer *w = &d->s.json;
		json_key(w, "schema");
		json_string(w, "gprof-dl-diff/1");
		json_side(w, "a", d->side[0], d->an[0]);
		json_side(w, "b", d->side[1], d->an[1]);
		json_key(w, "per_step");
		json_bool(w, d->per_step);
		json_key(w, "time_unit");
		json_string(w, time_unit_name(o->s.view.unit));
		json_key(w, "top");
		json_uint(w, o->top);
	}
	summary_out_tables(&d->s);
}

static int diff_write(const struct diff_opts *o, struct analysis *an, char **files, FILE *f)
{
	unsigned n = o->s.nviews;
	struct table **tables = xcalloc(2 * n, sizeof(*tables));
	struct diff_job job = {{&an[0], &an[1]}, o, tables};
	progress_phase("building %u tables", 2 * n);
	parallel_for(2 * n, build_side, &job);
	progress_done();

	/* per step only when both sides have steps: a step of one and the
	 * whole run of the other do not compare */
	int per_step = !o->totals && an[0].steps > 0 && an[1].steps > 0;
	struct diff_side side[2];
	for (unsigned k = 0; k < 2; k++) {
		side[k].t = NULL;
		side[k].divisor = per_step ? (double)an[k].steps : 1.0;
		side[k].name = files[k];
	}
	struct diff_out d = {o, {&side[0], &side[1]}, {&an[0], &an[1]}, per_step, {0}};
	out_begin(&d, f);
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
	struct diff_opts o = {.s = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS}},
			      .top = DIFF_TOP_DEFAULT};
	int first = diff_parse(argc, argv, &o);
	if (first < 0)
		return 0;
	char **files = argv + first;
	struct analysis an[2];
	analysis_init(&an[0]);
	analysis_init(&an[1]);
	progress_enable(1); /* only shown on a terminal, after a second */
	int rc = 1;
	FILE *out = stdout;
	if (cmd_load_traces(&an[0], 1, &files[0], "compared") != 0 ||
	    cmd_load_traces(&an[1], 1, &files[1], "compared") != 0)
		goto done;
	if (o.output && !(out = fopen(o.output, "w"))) {
		error("cannot open '%s': %s", o.output, strerror(errno));
		goto done;
	}
	rc = diff_write(&o, an, files, out) ? 1 : 0;
	if (out != stdout && fclose(out) != 0)
		rc = 1;
	if (rc && out != stdout)
		error("cannot write '%s'", o.output);
done:
	progress_done();
	analysis_free(&an[0]);
	analysis_free(&an[1]);
	return rc;
}
