/*
 * csv_partition.h - the hive-partitioned layout of `gprof-dl export --csv
 * --partitioned`, which DuckDB and Spark read as it is:
 *
 *   DIR/_schema.json                                   every table's columns and types
 *   DIR/<table>/rank=<N>/part-<host>-<pid>.csv[.gz]    one file per part of a job
 *
 * <table> is csv_export_table_name(i, 1) ("kernels", "ranks", ...), N the
 * part's rank (-1: a part that is no rank), <host> the trace's host with
 * every byte outside [A-Za-z0-9._-] replaced by '_' ("unknown" when empty,
 * cut to CSV_PARTITION_HOST_MAX bytes), <pid> the part's root pid. Each file
 * has one header row; rank is the directory's, not a column of the files.
 *
 * Several hosts export their own ranks into one shared DIR at the same time:
 * their part files differ by rank (and host, pid), the directories are made
 * with mkdir -p semantics that take another's EEXIST as success, and
 * _schema.json is the same bytes from every host, renamed into place from a
 * name of the writer's own, so that a reader never sees half of it.
 */
#ifndef GPDL_FORMATS_CSV_PARTITION_H
#define GPDL_FORMATS_CSV_PARTITION_H

#include "formats/csv/csv_agg.h"
#include "formats/csv/csv_export.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CSV_PARTITION_HOST_MAX 200 /* a file name stays under NAME_MAX */
#define CSV_PARTITION_SCHEMA "_schema.json"
#define CSV_PARTITION_VERSION 1     /* _schema.json's "version": the layout's */

/* host made safe for a file name, into buf (at least
 * CSV_PARTITION_HOST_MAX + 1 bytes); returns buf. */
char *csv_partition_host(char *buf, size_t size, const char *host);

/* The layout's tables: k < CSV_FILE_COUNT the event table k (enum
 * csv_export_file), else the aggregate table k - CSV_FILE_COUNT (enum
 * csv_agg_table, csv_agg.h). */
#define CSV_PARTITION_TABLES (CSV_FILE_COUNT + CSV_AGG_COUNT)
const char *csv_partition_table(unsigned k);
size_t csv_partition_columns(unsigned k, const struct csv_column **cols);

/* "DIR/<table>/rank=<N>/part-<host>-<pid>.csv" (".csv.gz" with gzip) of
 * table k, to free. */
char *csv_partition_path(const char *dir, unsigned k, int32_t rank, const char *host,
			 uint32_t pid, int gzip);

/* The directories an export made, to remove again after a failure. */
struct csv_partition_dirs {
	char **v;
	size_t n, cap;
};

/* Makes the directories above file path (mkdir -p, a directory that exists
 * or that another process makes meanwhile being fine), appending to made
 * those this call created. 0, or -1 with a one-line message in err. */
int csv_partition_mkdirs(const char *path, struct csv_partition_dirs *made, char *err,
			 size_t errlen);
/* Removes the directories made (newest first) where they are empty. */
void csv_partition_rmdirs(struct csv_partition_dirs *made);
void csv_partition_dirs_free(struct csv_partition_dirs *made);

/* A stdio write stream that gzips what it is given into fd (which it owns,
 * and closes on fclose) at zlib level 1-9; fclose() reports a failed
 * write or close with errno. NULL with errno when it cannot be made (fd is
 * left open then). */
FILE *csv_partition_gzip(int fd, int level);

/* Writes DIR/_schema.json atomically: each table in enum order with its
 * columns in the files' order, typed BIGINT, DOUBLE or VARCHAR, the
 * partition column rank INTEGER, the layout, the job clock and the version.
 * The same bytes from every host and every run. 0, or -1 with a one-line
 * message in err. */
int csv_partition_write_schema(const char *dir, char *err, size_t errlen);

/* The schema as written to _schema.json, to out (without the atomic
 * rename): 0, or -1 when a write failed. */
int csv_partition_schema_to(FILE *out);

#endif
