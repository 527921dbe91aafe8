/*
 * sqlite_export.h - a job as one sqlite file (export --sqlite): the tables
 * of the SQL variant of the CSV export (formats/SQL-SCHEMA.md), with the
 * part's rank as every table's first column, times on the job clock, the
 * computed columns of ranges and operators (id, parent, depth, step: views
 * over their rows and a nesting table, made at each part's end) and, at the
 * end, the indices.
 *
 * Rows come from the CSV export's one row producer (csv_export_new_sink):
 * the trace is mapped to columns in one place for every sink.
 *
 *   s = sqlite_export_open(path)          creates the file and the schema
 *   for each part: w = sqlite_export_part(s, &opts);
 *                  export_writer_run_part(w, reader, filter);
 *                  export_writer_destroy(w);
 *   sqlite_export_finish(s)               computed columns, indices, commit
 *   sqlite_export_close(s)                removes a file never finished
 *
 * Errors are one line naming the file and sqlite's message.
 */
#ifndef GPDL_FORMATS_SQLITE_EXPORT_H
#define GPDL_FORMATS_SQLITE_EXPORT_H

#include "formats/csv/csv_agg.h"
#include "formats/csv/csv_export.h"

#include <stddef.h>

struct sqlite_export;

/* Creates path (which must not exist: the caller removes it for --force)
 * with the schema; NULL with err filled on failure. */
struct sqlite_export *sqlite_export_open(const char *path, char *err, size_t errlen);
/* The same, named name in messages (path: a temporary file, or an empty
 * one the caller made for it, renamed name once finished). */
struct sqlite_export *sqlite_export_open_as(const char *path, const char *name, char *err,
					    size_t errlen);

/* A writer for one part (o->sql is implied); export_writer_run_part() drives
 * it, export_writer_destroy() frees it. NULL after a failed earlier part. */
struct export_writer *sqlite_export_part(struct sqlite_export *s, const struct csv_export_opts *o);

/* One row of aggregate table t (csv_agg.h) of rank: n values in the order
 * of csv_agg_columns(t). 0, or -1 (sqlite_export_error() says why). Between
 * sqlite_export_open() and sqlite_export_finish(). */
int sqlite_export_agg_row(struct sqlite_export *s, enum csv_agg_table t, int32_t rank,
			  const struct csv_agg_value *v, size_t n);

/* The last error of the parts' writers ("" if none), for the caller's message. */
const char *sqlite_export_error(const struct sqlite_export *s);

/* Computed columns, indices, commit: 0, or -1 with err filled. */
int sqlite_export_finish(struct sqlite_export *s, char *err, size_t errlen);

/* Closes; a file that sqlite_export_finish() did not complete is removed. */
void sqlite_export_close(struct sqlite_export *s);

#endif
