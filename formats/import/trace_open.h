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
 */
#ifndef GPDL_FORMATS_IMPORT_TRACE_OPEN_H
#define GPDL_FORMATS_IMPORT_TRACE_OPEN_H

#include "formats/trace/trace.h"

#include <stddef.h>

/* A reader for path, or NULL with a one-line message naming path in err. */
struct trace_reader *trace_open_any(const char *path, char *err, size_t errlen);

#endif
