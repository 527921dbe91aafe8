/*
 * progress.h - a line on standard error saying what a long summary is doing
 * ("gprof-dl: reading 'x.gpdl': 4.2M events"), once it has taken more than a
 * second, and only when standard error is a terminal and the command asked
 * for it (progress_enable). The line is rewritten in place and erased when
 * the work is done, so it never reaches a log.
 *
 * progress_tick() is cheap enough for a per-event loop: it looks at the
 * clock once every 65536 calls.
 */
#ifndef GPDL_COMMON_PROGRESS_H
#define GPDL_COMMON_PROGRESS_H

#include <stdint.h>

/* On when on and standard error is a terminal. */
void progress_enable(int on);
/* A new phase: "reading 'x.gpdl'", "sorting and nesting", ... */
void progress_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* count: how far the phase has come (events, tables); 0: no number. */
void progress_tick(uint64_t count, const char *unit);
/* Erases the line, if one was shown. */
void progress_done(void);
/* CLOCK_MONOTONIC in seconds: what a progress display times itself by. */
double progress_clock(void);

#endif
