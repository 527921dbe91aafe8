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

#include <stddef.h>
#include <stdint.h>

enum csv_agg_table {
	CSV_AGG_RANKS,     /* "agg_ranks": one row, the rank's */
	CSV_AGG_STEPS,     /* "agg_steps": a row per step of the rank */
	CSV_AGG_CALLS,     /* "agg_calls": a row per communication call */
	CSV_AGG_CALL_SETS, /* "agg_call_sets": the steps' parts inside the calls */
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

/* The columns of table t (the rank excepted), returning how many. */
size_t csv_agg_columns(enum csv_agg_table t, const struct csv_column **cols);
/* "agg_steps", ... */
const char *csv_agg_table_name(enum csv_agg_table t);

#endif
