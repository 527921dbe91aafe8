/*
 * progress.c - see progress.h. One process-wide state, the line of the
 * thread that enabled it: the summary runs one thing at a time on its main
 * thread, and what other threads call (a job's parts read ahead, the
 * views' tables) says nothing.
 */
#include "common/progress.h"

#include "common/textsafe.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static struct {
	int on;
	int shown;     /* a line is on the terminal */
	double start;  /* when the work began */
	unsigned calls;
	char phase[256];
	/* the bar: on, since when, after how long, the percentage shown */
	int bar;
	double bar_start, bar_delay;
	unsigned bar_pct;
	char bar_what[320];
	pthread_t owner; /* the thread whose line it is */
} progress;

/* Whether the line is on, and this thread's to write. */
static int progress_mine(void)
{
	return progress.on && pthread_equal(progress.owner, pthread_self());
}

double progress_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_enable(int on)
{
	progress.on = on && isatty(STDERR_FILENO);
	progress.owner = pthread_self();
	progress.start = progress_clock();
}

/* The line, "gprof-dl: " and fmt's text, written over the one shown. */
__attribute__((format(printf, 1, 2))) static void progress_line(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("\rgprof-dl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\033[K", stderr);
	va_end(ap);
	fflush(stderr);
	progress.shown = 1;
}

static void progress_show(uint64_t count, const char *unit)
{
	if (!progress.on || progress_clock() - progress.start < 1.0)
		return;
	if (count && unit)
		progress_line("%s: %.1fM %s", progress.phase, (double)count / 1e6, unit);
	else
		progress_line("%s ...", progress.phase);
}

void progress_phase(const char *fmt, ...)
{
	if (!progress_mine())
		return;
	char raw[sizeof(progress.phase)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	text_clean(progress.phase, sizeof(progress.phase), raw); /* it names files */
	progress_show(0, NULL);
}

void progress_tick(uint64_t count, const char *unit)
{
	if (!progress_mine() || (++progress.calls & 0xffffu))
		return;
	progress_show(count, unit);
}

void progress_done(void)
{
	if (progress.shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	progress.shown = 0;
}

void progress_bar_end(void)
{
	progress_done();
	progress.bar = 0;
}

void progress_bar_begin(int on, const char *what)
{
	progress.bar = on;
	const char *delay = getenv("GPROF_DL_PROGRESS_DELAY");
	char *end;
	progress.bar_delay = delay && *delay ? strtod(delay, &end) : 1.0;
	if (!delay || !*delay || *end || !(progress.bar_delay >= 0))
		progress.bar_delay = 1.0;
	snprintf(progress.bar_what, sizeof(progress.bar_what), "%s", what);
	progress.bar_start = progress_clock();
}

int progress_bar_on(void)
{
	return progress.bar;
}

void progress_bar(unsigned pct)
{
	if (!progress.bar || progress_clock() - progress.bar_start < progress.bar_delay)
		return;
	if (progress.shown && pct == progress.bar_pct)
		return; /* the terminal has this line already */
	enum { WIDTH = 30 };
	char cells[WIDTH + 1];
	progress.bar_pct = pct;
	unsigned full = pct * WIDTH / 100;
	for (unsigned i = 0; i < WIDTH; i++)
		cells[i] = i < full ? '#' : '.';
	cells[WIDTH] = '\0';
	progress_line("%s [%s] %3u%%", progress.bar_what, cells, pct);
}
