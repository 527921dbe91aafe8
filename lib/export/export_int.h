/*
 * export_int.h - what the exports of lib/export share: the output file, the
 * progress bar, the window, what was written.
 */
#ifndef GPDL_EXPORT_EXPORT_INT_H
#define GPDL_EXPORT_EXPORT_INT_H

#include "lib/export/export.h"

#include "common/outfile.h"
#include "formats/csv/csv_files.h"
#include "formats/export_writer.h"

#include <stdint.h>
#include <stdio.h>

#define EXPORT_BUFFER (1u << 20) /* big writes: the export is I/O bound */
#define CSV_BUFFER (1u << 18)    /* per CSV file: thirteen are open at once */

/* FILE.gpdl -> FILE<suffix>; anything else gets suffix appended. */
char *export_default_output(const char *input, const char *suffix);
/* Opens the output's temporary file (common/output.h: renamed to path when
 * whole, so an export that fails or is killed leaves the old file or none;
 * a pipe, a terminal or /dev/null is written in place, --force or not);
 * NULL after an error message. */
FILE *export_open_output(struct outfile *of, const char *path, const struct export_opts *o);
/* Flushes and closes the output, renamed into place; -1 after an error
 * message when any write failed, the one that stopped the export (failed)
 * included (the temporary file is removed then). */
int export_close_output(FILE *f, struct outfile *of, int to_stdout, int failed);
/* The warning for a damaged trace, exported up to its damage. */
void export_warn_damage(struct trace_reader *r, const char *input, uint64_t events);

/* A bar on standard error while an export runs, once it has taken longer
 * than a second (GPROF_DL_PROGRESS_DELAY seconds, as git's
 * GIT_PROGRESS_DELAY), only when standard error is a terminal (and not when
 * the output goes to the same terminal); rewritten in place and erased at
 * the end, so that it never reaches a log. */
void export_bar_start(const char *what, const char *input, struct trace_reader *r, int to_stdout);
void export_bar_done(void);
/* What every single-trace run of a writer takes: o's window, the bar. */
void export_writer_setup(struct export_writer *w, const struct export_opts *o);

/* "gprof-dl: wrote 't.json' (12.3 MB, 4512 events)" on standard error (fs:
 * a directory's files, their sizes added): an export says where its output
 * went, as a default name leaves it unsaid. */
void export_said_wrote(const char *path, const struct csv_files *fs, uint64_t events);

#endif
