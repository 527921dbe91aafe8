/*
 * async_out.h - a stdio stream whose writes to its file descriptor happen on
 * a thread of their own, so that an export formats its next block while
 * the kernel copies the last one into the page cache (on 2 cores the copy
 * is a third of an export's time, and would otherwise add to it).
 *
 * The stream hands each full stdio buffer to the thread, which writes it
 * while the next one fills: one block in flight, so memory is two buffers
 * whatever the size of the output. Errors are those of write(2), reported
 * by the next write, fflush() or fclose() with errno set (a full disk is an
 * error the caller sees, never a short file without one). fclose() waits
 * for the last block, closes the descriptor and joins the thread.
 */
#ifndef GPDL_FORMATS_ASYNC_OUT_H
#define GPDL_FORMATS_ASYNC_OUT_H

#include <stddef.h>
#include <stdio.h>

/* A write stream on fd (which it owns from then on, and closes) with a
 * stdio buffer of bufsize bytes; NULL with errno when it cannot be made
 * (fd is left open then). */
FILE *async_out_fdopen(int fd, size_t bufsize);

#endif
