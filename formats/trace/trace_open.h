/*
 * trace_open.h - open any trace a gprof-dl command accepts: a gprof-dl trace
 * directly, or a chrome-trace JSON file (plain or gzip'ed: the PyTorch
 * profiler's, Paddle's, gprof-dl's own export) imported on the fly.
 *
 * Detection is by content, never by name: the first bytes are gprof-dl's
 * magic, gzip's, or JSON's '{' or '['. Anything else goes to
 * trace_reader_open(), whose message says why it is not a trace. A JSON
 * input is imported (import.h) into an unlinked temporary file (O_TMPFILE in
 * $TMPDIR, else /tmp), reopened through /proc/self/fd/N, so nothing is left
 * on disk whatever happens to the process; the file disappears when the
 * returned reader is closed.
 *
 * An input that can be read only once ("-" for standard input, whatever it
 * is, and FIFOs, named pipes included) is copied whole, on its first open, into an unlinked
 * temporary file in the same place, kept for the life of the process: the
 * commands that open a trace twice (a job's headers, then its events) read
 * the copy. A FIFO is opened without blocking and waits at most
 * GPROF_DL_FIFO_WAIT seconds (default 10) for a writer, then fails with
 * "'F': a FIFO with no writer ..."; once a writer has it open, it is read to
 * its end however long that takes, as cat reads it. A terminal is refused;
 * an input whose first bytes cannot start a trace is copied no further.
 */
#ifndef GPDL_FORMATS_TRACE_TRACE_OPEN_H
#define GPDL_FORMATS_TRACE_TRACE_OPEN_H

#include "formats/trace/trace.h"

#include <stddef.h>

/* The name to read path's bytes from, as often as needed: path itself for a
 * regular file (or anything the reader will refuse with its own message),
 * "/proc/self/fd/N" of its copy for an input read once. NULL with a one-line
 * message in err when there is no copy (no writer, a terminal, a full disk). */
const char *trace_open_path(const char *path, char *err, size_t errlen);

/* A message about from (trace_open_path's name for path) names path instead. */
void trace_open_name_input(char *err, size_t errlen, const char *from, const char *path);

/* A reader for path, or NULL with a one-line message naming path in err. */
struct trace_reader *trace_open_any(const char *path, char *err, size_t errlen);

#endif
