/*
 * export.c - gprof-dl export: a trace converted for other tools.
 *
 *   gprof-dl export --chrome FILE [-o OUT] [--force]
 *   gprof-dl export --csv FILE [-o DIR] [--force] [--no-summary]
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
 * Exit status: 0 written (a damaged trace is exported up to its damage, with
 * a warning), 1 the input is not a readable trace or the output could not be
 * written in full (partial files are removed), 2 usage.
 */
#include "cmd/cmd.h"
#include "formats/chrome/chrome_writer.h"
#include "formats/csv/csv_export.h"
#include "formats/csv/csv_out.h"
#include "formats/import/trace_open.h"
#include "lib/analysis/analysis.h"
#include "lib/analysis/view.h"
#include "lib/common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT_BUFFER (1u << 20) /* big writes: the export is I/O bound */

static const char export_usage[] =
	"usage: gprof-dl export --chrome FILE [-o OUT] [--force]\n"
	"   or: gprof-dl export --csv FILE [-o DIR] [--force] [--no-summary]\n"
	"\n"
	"    --chrome       write chrome-trace JSON, for Perfetto, chrome://tracing and\n"
	"                   tools made for PyTorch profiler traces\n"
	"    --csv          write a directory of CSV files: one per kind of event, and\n"
	"                   one per summary table (summary-<view>.csv)\n"
	"    -o, --output OUT\n"
	"                   where to write (default: FILE with .gpdl replaced by .json,\n"
	"                   or by -csv for --csv; '-' for standard output, --chrome only)\n"
	"    -f, --force    overwrite OUT, or the files in DIR, if they exist\n"
	"    --no-summary   --csv: the events only, not the summary tables\n"
	"    -h, --help     show this help\n";

struct export_opts {
	int chrome, csv;
	int force;
	int no_summary;
	const char *input;
	const char *output;
};

static void parse_args(int argc, char **argv, struct export_opts *o)
{
	enum { OPT_CHROME = 256, OPT_CSV, OPT_NO_SUMMARY };
	static const struct option longopts[] = {
		{"chrome", no_argument, NULL, OPT_CHROME},
		{"csv", no_argument, NULL, OPT_CSV},
		{"no-summary", no_argument, NULL, OPT_NO_SUMMARY},
		{"output", required_argument, NULL, 'o'},
		{"force", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	opterr = 0;
	optind = 1;
	/* Options may follow the file (export --chrome t.gpdl -o t.json), so
	 * GNU getopt permutes; ':' first tells a missing value from an unknown
	 * option. */
	while ((c = getopt_long(argc, argv, ":o:fh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CHROME:
			o->chrome = 1;
			break;
		case OPT_CSV:
			o->csv = 1;
			break;
		case OPT_NO_SUMMARY:
			o->no_summary = 1;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'f':
			o->force = 1;
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
	if (!o->chrome && !o->csv)
		usage_error("say which format to export: --chrome or --csv");
	if (o->chrome && o->csv)
		usage_error("one format at a time: --chrome or --csv");
	if (o->no_summary && !o->csv)
		usage_error("--no-summary goes with --csv");
	if (optind >= argc)
		usage_error("no trace file given");
	if (argc - optind > 1)
		usage_error("one trace file at a time ('%s' is one too many)", argv[optind + 1]);
	o->input = argv[optind];
	if (o->output && !*o->output)
		usage_error("empty output name");
	if (o->csv && o->output && strcmp(o->output, "-") == 0)
		usage_error("--csv writes a directory of files; '-' is not one");
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

/* Opens the output; NULL after an error message. *removable says whether
 * a failed export may delete it: a regular file, never a device (-o /dev/full
 * run as root must not remove /dev/full). */
static FILE *open_output(const char *path, const char *input, int force, int *removable)
{
	struct stat in, out;
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
	if (stat(path, &out) == 0) {
		if (stat(input, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
			error("'%s' is the trace being exported; choose another output", path);
			return NULL;
		}
		/* --force guards files; a pipe, a terminal or /dev/null loses
		 * nothing when written to (-o /dev/stdout, -o >(gzip >t.json.gz)) */
		if (!S_ISREG(out.st_mode))
			flags = O_WRONLY | O_CLOEXEC;
		else if (!force) {
			error("'%s' exists; use --force to overwrite it, or -o to choose another name",
			      path);
			return NULL;
		}
	}
	int fd = open(path, flags, 0666);
	if (fd < 0) {
		error("cannot create '%s': %s", path, strerror(errno));
		return NULL;
	}
	*removable = fstat(fd, &out) == 0 && S_ISREG(out.st_mode);
	FILE *f = fdopen(fd, "w");
	if (!f) {
		error("cannot create '%s': %s", path, strerror(errno));
		close(fd);
		if (*removable)
			unlink(path);
	}
	return f;
}

/* Flushes and closes the output; -1 after an error message when any write
 * failed, the one that stopped the export (failed) included. */
static int close_output(FILE *f, const char *path, int to_stdout, int removable, int failed)
{
	int e = 0;
	errno = 0;
	if (fflush(f) != 0 || ferror(f) || failed)
		e = errno ? errno : EIO;
	if (!to_stdout && fclose(f) != 0 && !e)
		e = errno ? errno : EIO;
	if (!e)
		return 0;
	error("cannot write '%s': %s", to_stdout ? "standard output" : path, strerror(e));
	if (to_stdout) {
		/* said once here; main's own check of stdout must not say it again */
		__fpurge(f);
		clearerr(f);
	} else if (removable) {
		unlink(path); /* a short JSON file is worse than none */
	}
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

static int export_chrome(const struct export_opts *o, struct trace_reader *r)
{
	char *defname = o->output ? NULL : default_output(o->input, ".json");
	const char *path = o->output ? o->output : defname;
	int to_stdout = strcmp(path, "-") == 0;
	int removable = 0;
	FILE *out = to_stdout ? stdout : open_output(path, o->input, o->force, &removable);
	if (!out) {
		free(defname);
		return 1;
	}
	static char buffer[EXPORT_BUFFER];
	setvbuf(out, buffer, _IOFBF, sizeof(buffer));

	struct export_writer *w = chrome_writer_new(out);
	/* Only a failed write stops an export early: the reader reports damage
	 * through trace_reader_damage(), not through the run's result. */
	int failed = export_writer_run(w, r) != 0;
	uint64_t events = w->events;
	export_writer_destroy(w);
	int status = close_output(out, path, to_stdout, removable, failed) ? 1 : 0;
	if (status == 0)
		warn_damage(r, o->input, events);
	free(defname);
	return status;
}

/* ---- --csv: a directory of files ----------------------------------------- */

#define CSV_BUFFER (1u << 18) /* per file: thirteen are open at once */

struct csv_dir {
	const char *dir;
	char **paths;   /* every file this export writes */
	FILE **files;
	unsigned n, cap;
	int made_dir;   /* the directory is this run's: removed again on failure */
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
	d->files[d->n++] = NULL;
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
static int csv_dir_check(const struct csv_dir *d, const char *input, int force)
{
	struct stat in, out;
	for (unsigned i = 0; i < d->n; i++) {
		if (stat(d->paths[i], &out) != 0)
			continue;
		if (stat(input, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
			return error("'%s' is the trace being exported; choose another directory",
				     d->paths[i]);
		if (!force)
			return error("'%s' exists; use --force to overwrite the files in '%s', or "
				     "-o to choose another directory",
				     d->paths[i], d->dir);
	}
	return 0;
}

static FILE *csv_dir_open(struct csv_dir *d, unsigned i, int force)
{
	int fd = open(d->paths[i], O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL),
		      0666);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		error("cannot create '%s': %s", d->paths[i], strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	d->files[i] = f;
	setvbuf(f, NULL, _IOFBF, CSV_BUFFER);
	return f;
}

/* Closes file i; -1 after a message when any write to it failed. */
static int csv_dir_close(struct csv_dir *d, unsigned i)
{
	FILE *f = d->files[i];
	if (!f)
		return 0;
	d->files[i] = NULL;
	int e = 0;
	errno = 0;
	if (fflush(f) != 0 || ferror(f))
		e = errno ? errno : EIO;
	if (fclose(f) != 0 && !e)
		e = errno ? errno : EIO;
	if (!e)
		return 0;
	return error("cannot write '%s': %s", d->paths[i], strerror(e));
}

/* After a failure: nothing half-written stays. */
static void csv_dir_remove(struct csv_dir *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		if (d->files[i]) {
			fclose(d->files[i]);
			d->files[i] = NULL;
		}
		unlink(d->paths[i]);
	}
	if (d->made_dir)
		rmdir(d->dir);
}

static void csv_dir_free(struct csv_dir *d)
{
	for (unsigned i = 0; i < d->n; i++)
		free(d->paths[i]);
	free(d->paths);
	free(d->files);
}

/* The summary tables' files, after the raw ones: summary-trace.csv (the
 * Trace Summary), then one per view of the registry. */
static void csv_summary_names(struct csv_dir *d)
{
	char name[128];
	csv_dir_add(d, "summary-trace.csv");
	for (unsigned i = 0; i < view_registry_count; i++) {
		snprintf(name, sizeof(name), "summary-%s.csv", view_registry[i].name);
		csv_dir_add(d, name);
	}
}

static int csv_raw(struct csv_dir *d, struct trace_reader *r, const struct export_opts *o,
		   uint64_t *events)
{
	FILE *outs[CSV_FILE_COUNT];
	for (unsigned i = 0; i < CSV_FILE_COUNT; i++)
		if (!(outs[i] = csv_dir_open(d, i, o->force)))
			return -1;
	struct export_writer *w = csv_export_new(outs);
	int failed = export_writer_run(w, r) != 0;
	*events = w->events;
	export_writer_destroy(w);
	for (unsigned i = 0; i < CSV_FILE_COUNT; i++)
		if (csv_dir_close(d, i) != 0)
			failed = 1;
	return failed ? -1 : 0;
}

/* Each table through the summary's own CSV renderer: the view's public
 * build function, then table_render_csv(), times in nanoseconds. */
static int csv_table(struct csv_dir *d, unsigned i, struct table *t, int force)
{
	FILE *f = csv_dir_open(d, i, force);
	if (!f) {
		table_free(t);
		return -1;
	}
	struct csv_out c;
	struct table_style st = {.unit = TIME_UNIT_NS};
	csv_out_init(&c, f);
	table_render_csv(t, &c, &st);
	table_free(t);
	return csv_dir_close(d, i);
}

static int csv_summary(struct csv_dir *d, const struct export_opts *o)
{
	struct analysis a;
	char err[512];
	analysis_init(&a);
	if (analysis_load(&a, o->input, err, sizeof(err)) != 0) {
		analysis_free(&a);
		return error("%s", err);
	}
	analysis_prepare(&a);
	struct view_opts vo = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_NS};
	unsigned at = CSV_FILE_COUNT;
	int rc = csv_table(d, at++, view_trace(NULL, &a, &vo), o->force);
	for (unsigned i = 0; rc == 0 && i < view_registry_count; i++) {
		const struct view *v = &view_registry[i];
		rc = csv_table(d, at++, v->build(v, &a, &vo), o->force);
	}
	analysis_free(&a);
	return rc;
}

static int export_csv(const struct export_opts *o, struct trace_reader *r)
{
	char *defname = o->output ? NULL : default_output(o->input, "-csv");
	struct csv_dir d = {.dir = o->output ? o->output : defname};
	for (unsigned i = 0; i < CSV_FILE_COUNT; i++)
		csv_dir_add(&d, csv_export_file_names[i]);
	if (!o->no_summary)
		csv_summary_names(&d);
	uint64_t events = 0;
	int status = 1;
	if (make_dir(d.dir, &d.made_dir) == 0 && csv_dir_check(&d, o->input, o->force) == 0) {
		if (csv_raw(&d, r, o, &events) == 0 && (o->no_summary || csv_summary(&d, o) == 0))
			status = 0;
		else
			csv_dir_remove(&d);
	} else if (d.made_dir) {
		rmdir(d.dir);
	}
	if (status == 0)
		warn_damage(r, o->input, events);
	csv_dir_free(&d);
	free(defname);
	return status;
}

int cmd_export(int argc, char **argv)
{
	struct export_opts o = {0};
	char err[512];
	parse_args(argc, argv, &o);

	struct trace_reader *r = trace_open_any(o.input, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "gprof-dl: %s\n", err);
		return 1;
	}
	int status = o.csv ? export_csv(&o, r) : export_chrome(&o, r);
	trace_reader_close(r);
	return status;
}
