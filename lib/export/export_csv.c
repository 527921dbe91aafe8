/*
 * export_csv.c - export --csv: a directory of CSV files, one per kind of
 * record (formats/csv/csv_export.h) and one per summary table, as `summary
 * --format csv --time-unit ns` renders it; for a job, a directory per part.
 */
#include "lib/export/export_int.h"

#include "common/error.h"
#include "common/parallel.h"
#include "common/textsafe.h"
#include "formats/csv/csv_export.h"
#include "formats/csv/csv_out.h"
#include "formats/trace/trace_open.h"
#include "lib/analysis/store/analysis.h"
#include "lib/analysis/summary.h"
#include "lib/analysis/table/table_csv.h"
#include "lib/analysis/views/view.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A directory of CSV files (csv_files.h: written as one, all put in place
 * once every file of every directory of the export is whole). */
struct csv_dir {
	char *dir;
	struct csv_files fs;
};

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static unsigned csv_dir_add(struct csv_dir *d, const char *name)
{
	return csv_files_add(&d->fs, join(d->dir, name), NULL);
}

/* Every file refused before any is written: never half a directory over old
 * files. */
static int csv_dir_check(const struct csv_dir *d, const struct export_opts *o)
{
	char hint[TEXT_CLEAN_SIZE + 96];
	snprintf(hint, sizeof(hint),
		 "use --force to overwrite the files in '%s', or -o to choose another directory",
		 d->dir);
	return csv_files_check(&d->fs, (const char *const *)o->inputs, o->ninputs, o->force, hint);
}

static void csv_dir_free(struct csv_dir *d)
{
	csv_files_free(&d->fs);
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
		   const struct export_opts *o, uint64_t *events)
{
	FILE *outs[CSV_FILE_COUNT];
	for (unsigned i = 0; i < CSV_FILE_COUNT; i++)
		if (!(outs[i] = csv_files_open(&d->fs, i, o->force, 0, CSV_BUFFER)))
			return -1; /* csv_files_remove closes the ones open */
	struct export_writer *w = csv_export_new(outs);
	export_writer_setup(w, o);
	int failed = export_writer_run_part(w, r, f) != 0;
	*events = w->events;
	export_writer_destroy(w);
	for (unsigned i = 0; i < CSV_FILE_COUNT; i++)
		if (csv_files_close(&d->fs, i) != 0)
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
			at = csv_dir_add(d, name);
		}
		FILE *f = csv_files_open(&d->fs, at, force, 0, CSV_BUFFER);
		if (!f) {
			rc = -1;
			break;
		}
		struct csv_out c;
		csv_out_init(&c, f);
		table_render_csv_one(t, k, &c, &st);
		if (csv_files_close(&d->fs, at) != 0)
			rc = -1;
	}
	table_free(t);
	return rc;
}

/* The summary tables of one trace (j NULL) or of part p of a job: the
 * analysis loaded and its tables built (summary_build(): side by side) on
 * a thread of their own while the raw files are written, which has the
 * trace read twice at once but on 2 cores takes the longer of the two
 * instead of their sum; then written, in the registry's order, by the
 * thread that writes the directory. GPDL_THREADS=1: one after the other. */
struct csv_sum {
	const char *input;
	struct job *j;
	uint32_t p;
	int rc; /* 0, or -1 with err */
	char err[512];
	struct analysis a;
	const struct view *views[SUMMARY_MAX_VIEWS];
	struct table *tables[SUMMARY_MAX_VIEWS + 1];
	unsigned n;
	pthread_t tid;
	int threaded, started;
};

static void *csv_sum_build(void *arg)
{
	struct csv_sum *s = arg;
	analysis_init(&s->a);
	s->rc = s->j ? job_load(s->j, s->p, &s->a, s->err, sizeof(s->err))
		     : analysis_load(&s->a, s->input, s->err, sizeof(s->err));
	if (s->rc != 0)
		return NULL;
	if (!s->j)
		analysis_prepare(&s->a);
	struct view_opts vo = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_NS};
	if (view_registry_count > SUMMARY_MAX_VIEWS)
		BUG("%u views, room for %u", view_registry_count, SUMMARY_MAX_VIEWS);
	s->n = view_registry_count;
	for (unsigned i = 0; i < s->n; i++)
		s->views[i] = &view_registry[i];
	summary_build(&s->a, &vo, s->views, s->n, s->tables);
	return NULL;
}

static void csv_sum_start(struct csv_sum *s, const char *input, struct job *j, uint32_t p)
{
	memset(s, 0, sizeof(*s));
	s->input = input;
	s->j = j;
	s->p = p;
	s->started = 1;
	s->threaded = parallel_threads() > 1 &&
		      pthread_create(&s->tid, NULL, csv_sum_build, s) == 0;
}

/* Waits for the tables (or builds them now), then writes them when write:
 * 0, or -1 after a message. Frees the analysis and the tables. */
static int csv_sum_finish(struct csv_sum *s, struct csv_dir *d, int force, int write)
{
	if (!s->started)
		return 0;
	s->started = 0;
	if (s->threaded)
		pthread_join(s->tid, NULL);
	else if (!write)
		return 0; /* never built */
	else
		csv_sum_build(s);
	int rc = s->rc;
	if (rc != 0) {
		if (write)
			error("%s", s->err);
		analysis_free(&s->a);
		return -1;
	}
	unsigned at = CSV_FILE_COUNT;
	if (write)
		rc = csv_table(d, at++, "trace", s->tables[0], force);
	else
		table_free(s->tables[0]);
	for (unsigned i = 0; i < s->n; i++) {
		if (write && rc == 0)
			rc = csv_table(d, at++, s->views[i]->name, s->tables[i + 1], force);
		else
			table_free(s->tables[i + 1]);
	}
	analysis_free(&s->a);
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
	struct csv_sum sum = {0};
	if (csv_files_mkdir(&d->fs, d->dir, "--csv") == 0) {
		if (!o->no_summary)
			csv_sum_start(&sum, input, j, p);
		if (csv_raw(d, r, f, o, &events) == 0 &&
		    csv_sum_finish(&sum, d, o->force, 1) == 0 &&
		    (j || csv_files_commit(&d->fs) == 0)) /* a job's, once every part is whole */
			rc = 0;
		csv_sum_finish(&sum, d, o->force, 0); /* the raw files failed: not written */
	}
	*written += events;
	if (rc == 0)
		export_warn_damage(r, input, events);
	else
		csv_files_remove(&d->fs);
	return rc;
}

int export_csv(const struct export_opts *o, struct trace_reader *r)
{
	struct csv_dir d = {0};
	const char *input = o->inputs[0];
	csv_dir_names(&d, o->output ? xstrdup(o->output) : export_default_output(input, "-csv"),
		      !o->no_summary);
	int status = 1;
	uint64_t events = 0;
	export_bar_start("exporting", input, r, 0);
	if (csv_files_mkdir(&d.fs, d.dir, "--csv") == 0 && csv_dir_check(&d, o) == 0)
		status = csv_write_dir(&d, o, input, r, NULL, NULL, 0, &events) == 0 ? 0 : 1;
	else
		csv_files_remove(&d.fs);
	export_bar_done();
	if (status == 0)
		export_said_wrote(d.dir, &d.fs, events);
	csv_dir_free(&d);
	return status;
}

/* A job: DIR/rank=R per rank (hive-partitioned: a reader of DIR/rank=* gets
 * a rank column), DIR/rank=-1 for a part of no rank (a launcher), as the
 * partitioned export names it; further parts of no rank -2, -3, ... (one key
 * in every name: DuckDB refuses a mix); every file of every part checked
 * before the first is written. */
int export_csv_job(const struct export_opts *o, struct job *j)
{
	char *root = o->output ? xstrdup(o->output) : export_default_output(o->inputs[0], "-csv");
	char err_root[TEXT_CLEAN_SIZE];
	struct csv_dir *d = xcalloc(j->nparts ? j->nparts : 1, sizeof(*d));
	struct csv_files top = {0}; /* the directories above the parts' */
	int status = 1;
	uint32_t done = 0;
	uint64_t events = 0;
	int norank = 0;
	for (uint32_t p = 0; p < j->nparts; p++) {
		char name[64];
		snprintf(name, sizeof(name), "rank=%d",
			 j->ranks[p].rank >= 0 ? j->ranks[p].rank : --norank);
		csv_dir_names(&d[p], join(root, name), !o->no_summary);
	}
	if (csv_files_mkdir(&top, root, "--csv") != 0)
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
		int rc = csv_write_dir(&d[done], o, path, r, job_part_filter(j, done, &f), j, done, &events);
		trace_reader_close(r);
		if (rc != 0)
			goto out;
	}
	for (uint32_t p = 0; p < j->nparts; p++)
		if (csv_files_commit(&d[p].fs) != 0)
			goto out;
	status = 0;
	fprintf(stderr, "gprof-dl: wrote %u directories to '%s' (%llu events)\n", j->nparts,
		text_clean(err_root, sizeof(err_root), root), (unsigned long long)events);
out:
	if (status) {
		for (uint32_t p = 0; p < done; p++)
			csv_files_remove(&d[p].fs);
		csv_files_remove(&top);
	}
	for (uint32_t p = 0; p < j->nparts; p++)
		csv_dir_free(&d[p]);
	csv_files_free(&top);
	free(d);
	free(root);
	return status;
}
