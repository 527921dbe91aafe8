/*
 * csv_agg.h - the aggregate tables of the SQL exports (export --csv
 * --partitioned, export --sqlite; formats/SQL-SCHEMA.md, "Aggregate
 * tables"): what gprof-dl's own analysis measures of each rank alone, for an
 * engine to finish the job's views without the events. Like the event
 * tables, every table has the part's rank (a partition of the CSV layout,
 * sqlite's first column), and times are on the job clock (Unix ns).
 */
#ifndef GPDL_FORMATS_CSV_AGG_H
#define GPDL_FORMATS_CSV_AGG_H

#include "formats/csv/csv_export.h"
#include "formats/csv/csv_out.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum csv_agg_table {
	CSV_AGG_RANKS,     /* "agg_ranks": one row, the rank's */
	CSV_AGG_STEPS,     /* "agg_steps": a row per step of the rank */
	CSV_AGG_CALLS,     /* "agg_calls": a row per communication call */
	CSV_AGG_CALL_SETS, /* "agg_call_sets": the steps' parts inside the calls */
	CSV_AGG_OPERATORS, /* "agg_operators": the Operator view's rows of the rank */
	CSV_AGG_KERNELS,   /* "agg_kernels": the Kernel view's rows of the rank */
	CSV_AGG_DURATIONS, /* "agg_durations": their calls by duration, a row a bucket */
	CSV_AGG_COUNT
};

/* A value of a row, for the writers: kind CSV_AGG_NULL (unknown, an empty
 * CSV field), CSV_AGG_INT (i) or CSV_AGG_TEXT (s, UTF-8). */
enum csv_agg_kind { CSV_AGG_NULL, CSV_AGG_INT, CSV_AGG_TEXT };
struct csv_agg_value {
	enum csv_agg_kind kind;
	int64_t i;
	const char *s;
};

/* Where a rank's rows go: a row of table t, n values (the rank's aside):
 * 0, or -1 when it could not be written. */
typedef int (*csv_agg_emit_fn)(void *ctx, enum csv_agg_table t, const struct csv_agg_value *v,
			       size_t n);

/* The CSV files of one rank's aggregate tables: csv_agg_files_init() writes
 * each header to files[t] (FILE * by enum csv_agg_table); csv_agg_csv_emit
 * is a csv_agg_emit_fn over them (ctx: the struct); csv_agg_files_error()
 * says whether a write to one failed. */
struct csv_agg_files {
	struct csv_out out[CSV_AGG_COUNT];
};
void csv_agg_files_init(struct csv_agg_files *c, FILE *const files[CSV_AGG_COUNT]);
int csv_agg_csv_emit(void *ctx, enum csv_agg_table t, const struct csv_agg_value *v, size_t n);
int csv_agg_files_error(const struct csv_agg_files *c);

/* The columns of table t (the rank excepted), returning how many. */
size_t csv_agg_columns(enum csv_agg_table t, const struct csv_column **cols);
/* "agg_steps", ... */
const char *csv_agg_table_name(enum csv_agg_table t);

#endif
