/*
 * csv_export.h - a trace as a directory of CSV files, one per kind of record,
 * every field of every record, for pandas, DuckDB or Spark. One instance of
 * export_writer.h; the schema is formats/CSV-SCHEMA.md.
 *
 * Events stream into their file as the reader delivers them (file order,
 * not time order); the tables (trace, processes, threads, devices) are
 * written at the end, when the reader's tables are complete. Memory does not
 * depend on the number of events. Every file gets its header row, empty or
 * not, so that a script can read any of them.
 *
 * Values: times are integer nanoseconds of the trace's clock; text is quoted
 * by libcsv with ill-formed UTF-8 replaced by U+FFFD; a value that does not
 * apply, or that the trace does not know, is an empty field.
 *
 * The SQL variant (opts.sql: export --csv --partitioned, export --sqlite;
 * formats/SQL-SCHEMA.md) writes the same rows with times moved to the job
 * clock (+ time_offset_ns) and without the columns that the part's rank
 * replaces. One row producer serves every sink: the CSV files, or a
 * csv_value_sink (the sqlite export), so that trace fields are mapped to
 * columns in one place only.
 */
#ifndef GPDL_FORMATS_CSV_EXPORT_H
#define GPDL_FORMATS_CSV_EXPORT_H

#include "formats/export_writer.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum csv_export_file {
	CSV_FILE_TRACE,     /* one row: the header, totals, drops, damage */
	CSV_FILE_PROCESSES,
	CSV_FILE_THREADS,   /* host threads and GPU streams: the tracks */
	CSV_FILE_DEVICES,
	CSV_FILE_COUNTERS,
	CSV_FILE_RANGES,    /* host ranges that no file below takes */
	CSV_FILE_OPERATORS, /* Operator, OperatorInner */
	CSV_FILE_RUNTIME,   /* CudaRuntime */
	CSV_FILE_MARKS,     /* instants, Memory excepted */
	CSV_FILE_KERNELS,   /* Kernel, and Communication on a GPU stream */
	CSV_FILE_MEMCPY,
	CSV_FILE_MEMSET,
	CSV_FILE_MEMORY,    /* allocations and frees */
	CSV_FILE_COMMUNICATION, /* host Communication: collectives, send/recv (1.3) */
	CSV_FILE_STEPS,     /* the steps (as the analysis counts them), in start order */
	CSV_FILE_COUNT
};

enum csv_coltype { CSV_COL_INT, CSV_COL_REAL, CSV_COL_TEXT };

struct csv_column {
	const char *name;
	enum csv_coltype type;
};

/* The columns of file i into *cols, returning how many: sql 0 the plain
 * export's, sql 1 the SQL exports' (no rank column of their own: the part's
 * rank replaces it, as a partition or sqlite's first column). */
size_t csv_export_columns(enum csv_export_file i, int sql, const struct csv_column **cols);

/* The table's name: "kernels", ...; "trace", or "ranks" when sql. */
const char *csv_export_table_name(enum csv_export_file i, int sql);

struct csv_export_opts {
	int sql;                /* the SQL variant: job clock, no own rank columns */
	int64_t time_offset_ns; /* sql: added to every time (not durations) */
	int32_t rank;           /* the part's rank, -1 for none: for sinks */
};

/* "trace.csv", "processes.csv", ...: the file names, by enum csv_export_file. */
extern const char *const csv_export_file_names[CSV_FILE_COUNT];

/* The file an event goes to, by its type, flags and track. */
enum csv_export_file csv_export_route(unsigned type, unsigned flags, int on_stream);

/* A CSV exporter writing file i to outs[i], which stay the caller's to
 * flush and close. Write errors make the callbacks return -1. */
struct export_writer *csv_export_new(FILE *const outs[CSV_FILE_COUNT]);
/* The same with options (o NULL: the plain export, csv_export_new()). */
struct export_writer *csv_export_new_opts(FILE *const outs[CSV_FILE_COUNT],
					  const struct csv_export_opts *o);

/* Where rows go when not to CSV files: each row is row(file), one call per
 * column of csv_export_columns(file, o->sql) in order, then end_row; end
 * once after the part's last row. Text comes as valid UTF-8 (ill-formed
 * sequences replaced by U+FFFD), valid only during the call. null: a value
 * that does not apply or is unknown (an empty CSV field). end_row and end
 * return 0, or -1 to stop the export (a failed write). */
struct csv_value_sink {
	void *ctx;
	void (*row)(void *ctx, enum csv_export_file f);
	void (*null)(void *ctx);
	void (*i64)(void *ctx, int64_t v);
	void (*u64)(void *ctx, uint64_t v);
	void (*real)(void *ctx, double v);
	void (*text)(void *ctx, const char *s, size_t len);
	int (*end_row)(void *ctx);
	int (*end)(void *ctx);
};

/* A writer whose rows go to *s (copied; s->ctx stays the caller's). */
struct export_writer *csv_export_new_sink(const struct csv_value_sink *s,
					  const struct csv_export_opts *o);

#endif
