/*
 * trace_tail.h - when a trace's recording ended, from its last chunk alone:
 * what a caller that reads only headers (a job's files, checked to be one
 * job) needs without reading every event.
 */
#ifndef GPDL_FORMATS_TRACE_TAIL_H
#define GPDL_FORMATS_TRACE_TAIL_H

#include <stdint.h>

/* The end_ns of the END chunk that closes the file at path (the file's last
 * 24 bytes, its checksum verified): 0, or -1 when the file does not end with
 * a valid one (cut short, damaged, or not a trace), or is no regular file (a
 * FIFO or standard input: never opened here). */
int trace_tail_end(const char *path, uint64_t *end_ns);

#endif
