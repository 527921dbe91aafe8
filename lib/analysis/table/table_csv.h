/*
 * table_csv.h - a table as typed CSV tables, each one file's worth: one
 * header row, then one row per table row (formats/CSV-SCHEMA.md, "The
 * table CSVs").
 *
 * Most tables are one CSV table. A table whose parts bring columns of their
 * own (the Overview's device half, the Perf Summary's ips row) is several:
 * the parts with the table's columns first, then one CSV table for each
 * other set of columns, named by the first word of its part's label
 * ("device", "ips"). `gprof-dl export --csv` writes each to a file of its
 * own, summary-<view><suffix>.csv; table_render_csv() (table.h) writes them
 * all to one stream, each followed by an empty line.
 */
#ifndef GPDL_ANALYSIS_TABLE_CSV_H
#define GPDL_ANALYSIS_TABLE_CSV_H

#include "lib/analysis/table/table.h"

#include <stddef.h>

/* How many CSV tables t is: 1 or more. */
unsigned table_csv_count(const struct table *t);
/* The file name suffix of CSV table k of t: "" for the first, "-device",
 * "-ips", ... for the others, into buf. */
const char *table_csv_suffix(const struct table *t, unsigned k, char *buf, size_t size);
/* CSV table k of t: the header row, then the rows; no empty line after. */
void table_render_csv_one(const struct table *t, unsigned k, struct csv_out *c,
			  const struct table_style *st);

#endif
