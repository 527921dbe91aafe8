/*
 * progress.h - a line on standard error saying what a long summary is doing
 * ("gprof-dl: reading 'x.gpdl': 4.2M events"), once it has taken more than a
 * second, and only when standard error is a terminal and the command asked
 * for it (progress_enable). The line is rewritten in place and erased when
 * the work is done, so it never reaches a log.
 *
 * progress_tick() is cheap enough for a per-event loop: it looks at the
 * clock once every 65536 calls.
 *
 * The export's bar ("gprof-dl: exporting 'x.gpdl' [#####.....]  50%") is
 * the same line, drawn and erased here: one display, whoever fills it.
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
/* A bar for work of a known size: "WHAT [####......]  42%", drawn by
 * progress_bar() when on (the caller has looked at its terminals) once the
 * work has taken GPROF_DL_PROGRESS_DELAY seconds (as git's
 * GIT_PROGRESS_DELAY; 1 when unset or not a number >= 0). The phases'
 * line (progress_enable) is not touched. */
void progress_bar_begin(int on, const char *what);
/* Whether the bar is on. */
int progress_bar_on(void);
/* The bar at pct percent (0 to 100): drawn when it changed. */
void progress_bar(unsigned pct);
/* Erases the line; the bar is off until the next progress_bar_begin. */
void progress_bar_end(void);
/* CLOCK_MONOTONIC in seconds: what a progress display times itself by. */
double progress_clock(void);

#endif
