/*
 * report.c - `gprof-dl report`: one HTML file to look at, with the charts
 * and tables of the summary (and of a diff against a baseline), that opens
 * from disk with no network.
 *
 *   gprof-dl report FILE... [-o OUT] [--baseline FILE...] [--title T]
 *                   [--top N] [--skip-steps N] [--time-unit U] [--force]
 *
 * The figures are `gprof-dl summary --format json --view all`'s, made by
 * the same library call (summary_files), and with --baseline `gprof-dl
 * diff`'s (diff_files); formats/html wraps the documents in the page, which
 * draws everything from them (formats/html/REPORT-FORMAT.md).
 *
 * Exit status: 0 written; 1 a trace that cannot be read or an output that
 * cannot be written (OUT is left as it was: the page goes to a temporary file
 * beside it, .OUT.gpdl-tmp.XXXXXX, renamed OUT when whole, cmd/output.h),
 * or an OUT that is one of the traces (even with --force); 2 usage.
 */
#include "cmd/cmd.h"
#include "common/output.h"
#include "lib/analysis/dist/job.h"
#include "formats/html/report_html.h"
#include "lib/analysis/diff.h"
#include "common/progress.h"
#include "lib/analysis/summary.h"
#include "lib/analysis/views/perf.h"
#include "gpdl-config.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char report_usage[] =
	"usage: gprof-dl report FILE... [-o OUT] [--baseline FILE...] [--title TITLE]\n"
	"                       [--top N] [--skip-steps N] [--time-unit s|ms|us|ns]\n"
	"                       [--mixed-jobs] [--force]\n"
	"\n"
	"Write one HTML file with the charts and tables of the traces' summary:\n"
	"time by event type, step times per rank, the heaviest operators and\n"
	"kernels, memory and GPU utilisation over time, a job's ranks and its\n"
	"straggler, and with --baseline what changed. The file opens from disk\n"
	"with no network, and carries the JSON of `gprof-dl summary` it is drawn\n"
	"from.\n"
	"\n"
	"  -o, --output OUT   the file to write (default report.html)\n"
	"  -f, --force        overwrite OUT if it exists\n"
	"  --baseline FILE... compare with these traces (the files after it),\n"
	"                     as `gprof-dl diff --a FILE... --b TRACES...`\n"
	"  --title TITLE      the page's title (default: the trace files)\n"
	"  --top N            rows per table, heaviest first (default 100; 0: all)\n"
	"  --skip-steps N     perf and distributed views: leave out the first N\n"
	"                     steps of each trace or rank (default 10, at most half)\n"
	"  --time-unit UNIT   s, ms (default), us or ns\n"
	"  --mixed-jobs       take rank files of different jobs as one job\n"
	"  -h, --help         show this help\n"
	"\n"
	"See gprof-dl-report(1).\n";

#define REPORT_TOP_DEFAULT 100
#define REPORT_OUTPUT_DEFAULT "report.html"

enum {
	OPT_BASELINE = 256,
	OPT_TITLE,
	OPT_TOP,
};

static const struct option report_options[] = {
	{"baseline", required_argument, NULL, OPT_BASELINE},
	{"title", required_argument, NULL, OPT_TITLE},
	{"top", required_argument, NULL, OPT_TOP},
	CMD_OPTIONS_JOB,
	CMD_OPTION_TIME_UNIT,
	CMD_OPTIONS_OUTPUT,
	CMD_OPTIONS_END,
};

struct report_opts {
	char **files, **base; /* the traces, the baseline's (pointers into argv) */
	int nfiles, nbase;
	const char *output, *title;
	unsigned top, skip;
	enum time_unit unit;
	int force;
	unsigned job_flags; /* job_open()'s */
};

/* Parses the options into o: 0, or -1 after --help. In order ("-"), so
 * that the files after --baseline are the baseline's. */
static int report_parse(int argc, char **argv, struct report_opts *o)
{
	int c, base = 0;
	o->files = xmalloc((size_t)argc * sizeof(*o->files));
	o->base = xmalloc((size_t)argc * sizeof(*o->base));
	opterr = 0;
	optind = 1;
	while ((c = cmd_getopt_long(argc, argv, "-:o:fh", report_options, NULL)) != -1) {
		switch (c) {
		case 1: /* a file */
			if (base)
				o->base[o->nbase++] = optarg;
			else
				o->files[o->nfiles++] = optarg;
			break;
		case OPT_BASELINE:
			base = 1;
			o->base[o->nbase++] = optarg;
			break;
		case OPT_TITLE:
			o->title = optarg;
			break;
		case OPT_TOP:
			o->top = cmd_parse_count("--top", optarg, "a number of rows, 0 for all");
			if (o->top > INT32_MAX)
				usage_error("invalid --top '%s' (a number of rows, 0 for all)", optarg);
			break;
		default:
			if (cmd_job_option(c, &o->skip, &o->job_flags, &o->unit))
				break;
			if (cmd_common_option(c, argv, report_usage, &o->output, &o->force) < 0)
				return -1;
		}
	}
	for (; optind < argc; optind++) /* after "--" */
		if (base)
			o->base[o->nbase++] = argv[optind];
		else
			o->files[o->nfiles++] = argv[optind];
	if (!o->nfiles)
		usage_error(base ? "no trace files given before --baseline" : "no trace file given");
	if (!*o->output)
		usage_error("--output: an empty file name");
	return 0;
}

/* ---- the commands the documents reproduce ----------------------------------- */

struct words {
	char **w;
	int n;
	char *own[8]; /* numbers formatted here */
	int nown;
};

static void word(struct words *w, const char *s)
{
	w->w = xrealloc(w->w, (size_t)(w->n + 1) * sizeof(*w->w));
	w->w[w->n++] = (char *)s;
}

static void word_uint(struct words *w, unsigned v)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "%u", v);
	w->own[w->nown] = xstrdup(buf);
	word(w, w->own[w->nown++]);
}

/* The options both commands take alike. */
static void words_common(struct words *w, const struct report_opts *o)
{
	word(w, "--top");
	word_uint(w, o->top);
	word(w, "--skip-steps");
	word_uint(w, o->skip);
	word(w, "--time-unit");
	word(w, time_unit_name(o->unit));
}

static void words_free(struct words *w)
{
	for (int i = 0; i < w->nown; i++)
		free(w->own[i]);
	free(w->w);
}

/* ---- the documents ---------------------------------------------------------- */

/* The options of the report's summaries: JSON, compact, top N. */
static struct summary_opts report_summary_opts(const struct report_opts *o, unsigned top)
{
	return (struct summary_opts){.view = {.sort = SORT_CPU_TOTAL,
					      .unit = o->unit,
					      .skip_steps = o->skip,
					      .skip_set = 1},
				     .format = SUMMARY_JSON,
				     .fit = 1,
				     .top = (int)top,
				     .compact = 1,
				     .job_flags = o->job_flags};
}

/* `gprof-dl summary FILE... --format json --view all --top N --skip-steps K
 * --time-unit U`, compact, into *buf: 0, or 1 after an error message. */
static int report_summary(const struct report_opts *o, char **buf, size_t *len)
{
	struct summary_opts so = report_summary_opts(o, o->top);
	for (unsigned i = 0; i < view_registry_count; i++)
		summary_add_view(&so, &view_registry[i]);
	FILE *f = open_memstream(buf, len);
	if (!f)
		die_errno("open_memstream");
	int rc = summary_files(o->nfiles, o->files, &so, -1, f, "summarised");
	if (fclose(f) != 0 && rc == 0)
		rc = -1;
	if (rc < 0)
		error("cannot hold the summary in memory");
	return rc ? 1 : 0;
}

/* A job's ranks for the page's rank selector of Operators and Kernels: at
 * most REPORT_RANKS ranks, REPORT_RANK_TOP rows a table (or --top's fewer),
 * so that the page stays bounded whatever the job's size. */
#define REPORT_RANKS 64
#define REPORT_RANK_TOP 50

struct rank_docs {
	struct report_rank_doc *v;
	struct words *w;
	char **json;
	size_t n;
};

static void rank_docs_free(struct rank_docs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		words_free(&r->w[i]);
		free(r->json[i]);
	}
	free(r->v);
	free(r->w);
	free(r->json);
}

/* When the files are a job of 2 ranks or more, a file each: `gprof-dl
 * summary FILE --format json --view operator --view kernel --top N
 * --skip-steps K --time-unit U` of each into r (in rank order); 0, or 1
 * after an error message. Not a job: r stays empty. */
static int report_ranks(const struct report_opts *o, struct rank_docs *r)
{
	struct job j;
	char err[512];
	if (o->nfiles < 2 || job_open(&j, o->nfiles, o->files, o->job_flags, err, sizeof(err)) != 0)
		return 0;
	/* one rank a file: the ranks' files are the parts to choose from */
	int fits = j.nranks >= 2 && j.nranks == (uint32_t)o->nfiles;
	size_t n = fits ? (j.nranks < REPORT_RANKS ? j.nranks : REPORT_RANKS) : 0;
	int32_t *rank = xcalloc(n ? n : 1, sizeof(*rank));
	uint32_t *file = xcalloc(n ? n : 1, sizeof(*file));
	for (size_t k = 0; k < n; k++) {
		rank[k] = j.ranks[k].rank;
		file[k] = j.ranks[k].file;
	}
	job_free(&j);
	r->v = xcalloc(n ? n : 1, sizeof(*r->v));
	r->w = xcalloc(n ? n : 1, sizeof(*r->w));
	r->json = xcalloc(n ? n : 1, sizeof(*r->json));
	unsigned top = o->top && o->top < REPORT_RANK_TOP ? o->top : REPORT_RANK_TOP;
	int rc = 0;
	for (size_t k = 0; k < n && !rc; k++) {
		struct summary_opts so = report_summary_opts(o, top);
		summary_add_view(&so, view_find("operator"));
		summary_add_view(&so, view_find("kernel"));
		size_t len = 0;
		FILE *f = open_memstream(&r->json[k], &len);
		if (!f)
			die_errno("open_memstream");
		r->n = k + 1;
		rc = summary_files(1, &o->files[file[k]], &so, -1, f, "summarised");
		if (fclose(f) != 0 && rc == 0)
			rc = -1;
		if (rc < 0)
			error("cannot hold the summary of rank %d in memory", (int)rank[k]);
		struct words *w = &r->w[k];
		word(w, "gprof-dl");
		word(w, "summary");
		word(w, o->files[file[k]]);
		word(w, "--format");
		word(w, "json");
		word(w, "--view");
		word(w, "operator");
		word(w, "--view");
		word(w, "kernel");
		word(w, "--top");
		word_uint(w, top);
		word(w, "--skip-steps");
		word_uint(w, o->skip);
		word(w, "--time-unit");
		word(w, time_unit_name(o->unit));
		r->v[k] = (struct report_rank_doc){.rank = rank[k], .argv = w->w, .argc = w->n,
						   .summary = r->json[k], .summary_len = len};
	}
	free(rank);
	free(file);
	return rc ? 1 : 0;
}

/* `gprof-dl diff --a BASELINE... --b FILE... --format json --top N
 * --skip-steps K --time-unit U` into *buf: 0, or 1 after an error message. */
static int report_diff(const struct report_opts *o, char **buf, size_t *len)
{
	struct diff_opts d = {.s = {.view = {.sort = SORT_CPU_TOTAL, .unit = o->unit},
				    .format = SUMMARY_JSON,
				    .fit = 1,
				    .compact = 1,
				    .job_flags = o->job_flags},
			      .top = o->top,
			      .skip = o->skip,
			      .files = {o->base, o->files},
			      .nfiles = {o->nbase, o->nfiles}};
	FILE *f = open_memstream(buf, len);
	if (!f)
		die_errno("open_memstream");
	int rc = diff_files(&d, f);
	if (fclose(f) != 0 && rc == 0) {
		error("cannot hold the diff in memory");
		rc = 1;
	}
	return rc;
}

/* The files of a job as one pattern: their common beginning and end around
 * a '*' ("t-*.gpdl"), into buf; 0 when they share neither. */
static int files_pattern(char *buf, size_t size, char **files, int n)
{
	size_t pre = strlen(files[0]), suf = pre, min = pre;
	for (int i = 1; i < n; i++) {
		size_t len = strlen(files[i]), k = 0;
		while (k < pre && k < len && files[i][k] == files[0][k])
			k++;
		pre = k;
		size_t l0 = strlen(files[0]);
		k = 0;
		while (k < suf && k < len && k < l0 && files[i][len - 1 - k] == files[0][l0 - 1 - k])
			k++;
		suf = k;
		if (len < min)
			min = len;
	}
	if (pre + suf > min)
		suf = min - pre;
	if (!pre && !suf)
		return 0;
	snprintf(buf, size, "%.*s*%s", (int)pre, files[0], files[0] + strlen(files[0]) - suf);
	return 1;
}

/* "gprof-dl report: FILE" (", FILE" for a second, " and N more" after);
 * a job's "gprof-dl report: job of N ranks: t-*.gpdl" (or its files). */
static char *default_title(const struct report_opts *o)
{
	size_t len = 64 + strlen(o->files[0]) + (o->nfiles > 1 ? strlen(o->files[1]) : 0);
	char *t = xmalloc(len);
	struct job j;
	char err[512];
	uint32_t nranks = 0;
	if (o->nfiles > 1 && job_open(&j, o->nfiles, o->files, o->job_flags, err, sizeof(err)) == 0) {
		nranks = j.nranks;
		job_free(&j);
	}
	if (nranks > 1) {
		char *pattern = xmalloc(len);
		if (!files_pattern(pattern, len, o->files, o->nfiles))
			snprintf(pattern, len, "%s and %d more", o->files[0], o->nfiles - 1);
		snprintf(t, len, "gprof-dl report: job of %u ranks: %s", nranks, pattern);
		free(pattern);
	} else if (o->nfiles == 1)
		snprintf(t, len, "gprof-dl report: %s", o->files[0]);
	else if (o->nfiles == 2)
		snprintf(t, len, "gprof-dl report: %s, %s", o->files[0], o->files[1]);
	else
		snprintf(t, len, "gprof-dl report: %s and %d more", o->files[0], o->nfiles - 1);
	return t;
}

/* ---- the file --------------------------------------------------------------- */

/* OUT's temporary file beside it (cmd/output.h), opened before the traces
 * are read so that an OUT that exists (without --force) or that is one of
 * the traces is refused at once; 0, or 1 after a message. */
static int open_page(const struct report_opts *o, struct outfile *of)
{
	int n = o->nfiles + o->nbase;
	const char **in = xcalloc(n ? n : 1, sizeof(*in));
	for (int i = 0; i < o->nfiles; i++)
		in[i] = o->files[i];
	for (int i = 0; i < o->nbase; i++)
		in[o->nfiles + i] = o->base[i];
	int rc = output_open(of, o->output, o->force, in, n) != 0;
	free(in);
	return rc;
}

/* The page into of, renamed OUT when whole (written in place when OUT is
 * no regular file: /dev/null, a pipe); 0, or 1 after an error message. */
static int write_page(const struct report_opts *o, struct outfile *of,
		      const struct report_doc *doc)
{
	char clean[TEXT_CLEAN_SIZE];
	FILE *f = outfile_fdopen(of);
	if (!f)
		return output_fail(of, errno), 1;
	int rc = report_html_write(f, doc);
	long size = ftell(f);
	if (rc != 0)
		return output_fail(of, errno), 1;
	if (output_commit(of) != 0)
		return 1;
	fprintf(stderr, "gprof-dl: wrote '%s' (%ld bytes)\n", text_clean(clean, sizeof(clean), o->output),
		size);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = {.output = REPORT_OUTPUT_DEFAULT,
				.top = REPORT_TOP_DEFAULT,
				.skip = PERF_SKIP_DEFAULT,
				.unit = TIME_UNIT_MS};
	int rc = 1;
	char *summary = NULL, *diff = NULL, *title = NULL;
	size_t summary_len = 0, diff_len = 0;
	struct words sw = {0}, dw = {0};
	struct outfile of = {.fd = -1, .slot = -1};
	struct rank_docs ranks = {0};
	if (report_parse(argc, argv, &o) < 0) {
		rc = 0;
		goto done;
	}
	if (open_page(&o, &of) != 0)
		goto done;
	progress_enable(1); /* only shown on a terminal, after a second */
	if (report_summary(&o, &summary, &summary_len) != 0)
		goto done;
	if (o.nbase && report_diff(&o, &diff, &diff_len) != 0)
		goto done;
	if (report_ranks(&o, &ranks) != 0)
		goto done;

	word(&sw, "gprof-dl");
	word(&sw, "summary");
	for (int i = 0; i < o.nfiles; i++)
		word(&sw, o.files[i]);
	word(&sw, "--format");
	word(&sw, "json");
	word(&sw, "--view");
	word(&sw, "all");
	words_common(&sw, &o);
	if (o.nbase) {
		word(&dw, "gprof-dl");
		word(&dw, "diff");
		word(&dw, "--a");
		for (int i = 0; i < o.nbase; i++)
			word(&dw, o.base[i]);
		word(&dw, "--b");
		for (int i = 0; i < o.nfiles; i++)
			word(&dw, o.files[i]);
		word(&dw, "--format");
		word(&dw, "json");
		words_common(&dw, &o);
	}
	title = o.title ? xstrdup(o.title) : default_title(&o);
	struct report_doc doc = {.title = title,
				 .version = GPDL_VERSION,
				 .summary_argv = sw.w,
				 .summary_argc = sw.n,
				 .summary = summary,
				 .summary_len = summary_len,
				 .diff_argv = o.nbase ? dw.w : NULL,
				 .diff_argc = dw.n,
				 .diff = diff,
				 .diff_len = diff_len,
				 .ranks = ranks.v,
				 .nranks = ranks.n};
	rc = write_page(&o, &of, &doc);
done:
	outfile_abort(&of); /* nothing, once written */
	progress_done();
	words_free(&sw);
	words_free(&dw);
	rank_docs_free(&ranks);
	free(summary);
	free(diff);
	free(title);
	free(o.files);
	free(o.base);
	return rc;
}
