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
 */
#ifndef GPDL_FORMATS_CSV_EXPORT_H
#define GPDL_FORMATS_CSV_EXPORT_H

#include "formats/export_writer.h"

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
	CSV_FILE_COUNT
};

/* "trace.csv", "processes.csv", ...: the file names, by enum csv_export_file. */
extern const char *const csv_export_file_names[CSV_FILE_COUNT];

/* The file an event goes to, by its type, flags and track. */
enum csv_export_file csv_export_route(unsigned type, unsigned flags, int on_stream);

/* A CSV exporter writing file i to outs[i], which stay the caller's to
 * flush and close. Write errors make the callbacks return -1. */
struct export_writer *csv_export_new(FILE *const outs[CSV_FILE_COUNT]);

#endif
