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

/* For a writer that fills whole blocks of its own (the CSV export): the
 * thread writes them from where they are, without the copy of each byte
 * into the stream's buffer and from it into the thread's.
 *   async_out_of    f's writer; NULL when f is not a stream of this file's
 *   async_out_hand  what f holds, then block[0..n), to the file; block is
 *                   the thread's until the next async_out_hand or
 *                   async_out_wait returns, or f is closed
 *   async_out_wait  returns once no block is in flight
 * Both return 0, or -1 with errno when a write failed (this one or one
 * before). */
struct async_out;
struct async_out *async_out_of(FILE *f);
int async_out_hand(struct async_out *a, const char *block, size_t n);
int async_out_wait(struct async_out *a);

#endif
