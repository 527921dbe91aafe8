/*
 * export_sql.c - the SQL exports of a job, part by part on the job clock
 * (Unix wall time): --csv --partitioned (formats/csv/csv_partition.h) and
 * --sqlite (formats/sqlite/sqlite_export.h), the events' tables and each
 * rank's aggregate tables (lib/analysis/dist/rankagg.h).
 */
#include "lib/export/export_int.h"

#include "common/error.h"
#include "common/output.h"
#include "common/textsafe.h"
#include "formats/csv/csv_agg.h"
#include "formats/csv/csv_export.h"
#include "formats/csv/csv_partition.h"
#include "formats/trace/trace_open.h"
#include "formats/sqlite/sqlite_export.h"
#include "lib/analysis/dist/rankagg.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the SQL exports: --csv --partitioned and --sqlite ---------------------- */


/* A part's aggregate rows, measured on a thread of their own while the
 * part's events go in (rankagg_part() loads and measures the trace: half
 * as long again as the events' rows on 2 cores, and sqlite is one thread),
 * kept here, then written by the thread that owns the database. */
struct agg_row {
	enum csv_agg_table t;
	size_t n;
	struct csv_agg_value *v; /* text copied */
};

struct agg_keep {
	struct job *j;
	uint32_t p;
	int rc; /* rankagg_part()'s */
	struct agg_row *rows;
	size_t n, cap;
	pthread_t tid;
	int threaded;
};

static int agg_keep_emit(void *ctx, enum csv_agg_table t, const struct csv_agg_value *v,
			 size_t n)
{
	struct agg_keep *k = ctx;
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 64;
		k->rows = xrealloc(k->rows, k->cap * sizeof(*k->rows));
	}
	struct csv_agg_value *c = xmalloc((n ? n : 1) * sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		c[i] = v[i];
		if (v[i].kind == CSV_AGG_TEXT)
			c[i].s = xstrdup(v[i].s);
	}
	k->rows[k->n++] = (struct agg_row){t, n, c};
	return 0;
}

static void *agg_keep_run(void *arg)
{
	struct agg_keep *k = arg;
	k->rc = rankagg_part(k->j, k->p, agg_keep_emit, k);
	return NULL;
}

/* Starts part p's measure: on a thread, or (none to be had) at once. */
static void agg_keep_start(struct agg_keep *k, struct job *j, uint32_t p)
{
	*k = (struct agg_keep){.j = j, .p = p};
	k->threaded = pthread_create(&k->tid, NULL, agg_keep_run, k) == 0;
	if (!k->threaded)
		agg_keep_run(k);
}

/* Waits for the measure, then its rows into s: rankagg_part()'s result, or
 * -1 when a row could not be written. Frees what was kept. */
static int agg_keep_finish(struct agg_keep *k, struct sqlite_export *s, int32_t rank, int write)
{
	if (k->threaded)
		pthread_join(k->tid, NULL);
	k->threaded = 0;
	int rc = k->rc;
	for (size_t r = 0; r < k->n; r++) {
		struct agg_row *row = &k->rows[r];
		if (write && rc == 0)
			rc = sqlite_export_agg_row(s, row->t, rank, row->v, row->n);
		for (size_t i = 0; i < row->n; i++)
			if (row->v[i].kind == CSV_AGG_TEXT)
				free((char *)row->v[i].s);
		free(row->v);
	}
	free(k->rows);
	k->rows = NULL;
	k->n = k->cap = 0;
	return rc;
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
 * write failed; *events counts what it wrote. agg, when not NULL, starts
 * the part's aggregate measure once the trace is open (an import of it
 * done: never two at once). */
static int sql_part_with(struct export_writer *w, struct job *j, uint32_t p, uint64_t *events,
			 struct agg_keep *agg)
{
	const char *path = j->files[j->ranks[p].file].path;
	char err[1024];
	struct trace_reader *rd = trace_open_any(path, err, sizeof(err));
	if (!rd) {
		error("%s", err);
		return 1;
	}
	if (agg)
		agg_keep_start(agg, j, p);
	struct export_filter f;
	int rc = export_writer_run_part(w, rd, job_part_filter(j, p, &f)) != 0 ? -1 : 0;
	*events += w->events;
	if (rc == 0)
		export_warn_damage(rd, path, w->events);
	trace_reader_close(rd);
	return rc;
}

static int sql_part(struct export_writer *w, struct job *j, uint32_t p, uint64_t *events)
{
	return sql_part_with(w, j, p, events, NULL);
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

/* The files of --partitioned (csv_files.h): file p * CSV_PARTITION_TABLES + k
 * is part p's of table k (csv_partition.h: the event tables, then the
 * aggregate ones; without the events, only the latter are written), its
 * other name the same with the other suffix (.csv for .csv.gz), which an
 * engine reading DIR/<table>/ would count twice. */
static void partition_names(struct csv_files *fs, const char *dir, const struct export_opts *o,
			    const struct job *j)
{
	for (uint32_t p = 0; p < j->nparts; p++) {
		const struct job_rank *r = &j->ranks[p];
		const char *host = j->files[r->file].host;
		for (unsigned i = 0; i < CSV_PARTITION_TABLES; i++) {
			if (o->no_events && i < CSV_FILE_COUNT) { /* not this export's */
				csv_files_add(fs, NULL, NULL);
				continue;
			}
			csv_files_add(fs, csv_partition_path(dir, i, r->rank, host, r->pid, o->gzip),
				      csv_partition_path(dir, i, r->rank, host, r->pid, !o->gzip));
		}
	}
}

/* Before anything is written: two parts of the job never share a file
 * (the same host and pid in one rank's directory), no part file exists
 * without --force, none is a trace being exported. */
static int partition_check(const struct csv_files *fs, const struct export_opts *o,
			   const struct job *j)
{
	unsigned k0 = o->no_events ? CSV_FILE_COUNT : 0; /* a file every part writes */
	for (uint32_t p = 0; p < j->nparts; p++)
		for (uint32_t q = p + 1; q < j->nparts; q++)
			if (j->ranks[p].rank == j->ranks[q].rank && /* only -1 repeats */
			    strcmp(fs->path[p * CSV_PARTITION_TABLES + k0],
				   fs->path[q * CSV_PARTITION_TABLES + k0]) == 0)
				return error("'%s' and '%s' would both write '%s'",
					     j->files[j->ranks[p].file].path,
					     j->files[j->ranks[q].file].path,
					     fs->path[p * CSV_PARTITION_TABLES + k0]);
	return csv_files_check(fs, (const char *const *)o->inputs, o->ninputs, o->force,
			       "--force overwrites");
}

/* Part p's files: 0, 1 when its trace cannot be read, -1 when a file could
 * not be made or written (said). */
static int partition_part(struct csv_files *fs, const char *dir, const struct export_opts *o,
			  struct job *j, uint32_t p, uint64_t *events)
{
	FILE *outs[CSV_PARTITION_TABLES] = {0};
	uint32_t k0 = p * CSV_PARTITION_TABLES;
	int rc = 0, said = 0;
	for (unsigned i = o->no_events ? CSV_FILE_COUNT : 0; i < CSV_PARTITION_TABLES && rc == 0;
	     i++)
		if (!(outs[i] = csv_files_open(fs, k0 + i, o->force,
					       o->gzip ? PARTITION_GZIP_LEVEL : 0, CSV_BUFFER)))
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
		if (outs[i] && csv_files_close(fs, k0 + i) != 0) {
			said = 1;
			if (rc == 0)
				rc = -1;
		}
	if (rc < 0 && !said && !fs->said)
		error("cannot write the files of part %u in '%s'", p, dir);
	return rc;
}

int export_partitioned(const struct export_opts *o, struct job *j)
{
	struct csv_files fs = {0};
	char err[1024];
	uint64_t events = 0;
	int rc = -1;
	char *dir = o->output ? xstrdup(o->output) : export_default_output(o->inputs[0], "-csv");
	partition_names(&fs, dir, o, j);
	if (partition_check(&fs, o, j) == 0) {
		rc = 0;
		for (uint32_t p = 0; p < j->nparts && rc == 0; p++)
			rc = partition_part(&fs, dir, o, j, p, &events);
		if (rc == 0 && csv_partition_write_schema(dir, err, sizeof(err)) != 0)
			rc = error("%s", err);
		if (rc == 0)
			rc = csv_files_commit(&fs);
		if (rc == 0)
			sql_said(j, events, dir, o->no_events);
		else /* no half a job on disk: the temporary files, and the
		      * directories this run made where no other host's files are */
			csv_files_remove(&fs);
	}
	csv_files_free(&fs);
	free(dir);
	return rc == 0 ? 0 : 1;
}

/* --sqlite: the job into one file, made as a temporary file beside OUT and
 * renamed OUT once complete (cmd/output.h), so that a failed or interrupted
 * export leaves an existing OUT (--force) as it was, or no OUT. */
int export_sqlite(const struct export_opts *o, struct job *j)
{
	char *defname = o->output ? NULL : export_default_output(o->inputs[0], ".sqlite");
	const char *out = o->output ? o->output : defname;
	char err[1024];
	uint64_t events = 0;
	int rc = -1;
	struct outfile of;
	if (output_open(&of, out, o->force, (const char *const *)o->inputs, o->ninputs) != 0)
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
		struct agg_keep agg = {0};
		if (!o->no_events) {
			struct export_writer *w = sqlite_export_part(s, &eo);
			rc = w ? sql_part_with(w, j, p, &events, &agg) : -1;
			export_writer_destroy(w);
		} else {
			agg_keep_start(&agg, j, p);
		}
		/* a part that failed before the trace was open started no measure */
		if (agg.j) {
			int arc = agg_keep_finish(&agg, s, eo.rank, rc == 0);
			if (rc == 0)
				rc = arc;
		}
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
		rc = output_commit(&of);
	else
		outfile_abort(&of);
	if (rc == 0)
		sql_said(j, events, out, o->no_events);
out:
	free(defname);
	return rc == 0 ? 0 : 1;
}
