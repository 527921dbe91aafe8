/*
 * csv_files.h - the files one CSV export writes (`export --csv`, a directory
 * of a trace's files or a directory per rank; `--csv --partitioned`, the
 * hive layout of csv_partition.h), written as one: each file to a temporary
 * file beside its name (common/outfile.h), the directories above it made as
 * needed, and all of them renamed into place only once every one is whole.
 * A failed or interrupted export leaves the old files as they were and
 * removes the directories it made (where they are empty: another host's
 * files stay).
 */
#ifndef GPDL_FORMATS_CSV_FILES_H
#define GPDL_FORMATS_CSV_FILES_H

#include "common/outfile.h"
#include "formats/csv/csv_partition.h"

#include <stddef.h>
#include <stdio.h>

struct csv_files {
	char **path;   /* [n]: the files; NULL: a slot this export leaves out */
	char **other;  /* [n]: another name the file replaces (.csv for .csv.gz), or NULL */
	struct outfile *of;
	unsigned n, cap;
	int said;      /* a write failed and was said: one line an export */
	struct csv_partition_dirs dirs; /* made by this export */
};

/* Adds a file, path and other (both taken; either may be NULL): its index. */
unsigned csv_files_add(struct csv_files *s, char *path, char *other);

/* Makes dir (mkdir -p) for files to be added in it: 0, or -1 after a
 * one-line message ("'D' exists and is not a directory; WHAT writes a
 * directory"). */
int csv_files_mkdir(struct csv_files *s, const char *dir, const char *what);

/* Before anything is written: no file (nor its other name) is one of the n
 * inputs, and none exists unless force ("'P' exists; HINT"). 0, or -1 after
 * a one-line message. */
int csv_files_check(const struct csv_files *s, const char *const *inputs, int n, int force,
		    const char *hint);

/* Opens file i for writing, the directories above it made: gzipped at
 * gzip_level (1-9), or plain through a buffer of `buffer` bytes when 0.
 * NULL after a one-line message. */
FILE *csv_files_open(struct csv_files *s, unsigned i, int force, int gzip_level, size_t buffer);

/* Closes file i (put in place later, by csv_files_commit): -1 when a write
 * to it failed, said once for the export. 0 for a file not open. */
int csv_files_close(struct csv_files *s, unsigned i);

/* Every file written put in place, then the other names of those removed:
 * 0, or -1 after a one-line message. */
int csv_files_commit(struct csv_files *s);

/* After a failure: the temporary files removed, the directories made
 * removed where empty. */
void csv_files_remove(struct csv_files *s);

/* The bytes of the files put in place (for "wrote N files (12.3 MB)"). */
unsigned long long csv_files_bytes(const struct csv_files *s);

void csv_files_free(struct csv_files *s);

#endif
