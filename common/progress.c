/*
 * progress.c - see progress.h. One process-wide state: the summary runs one
 * thing at a time on its main thread; the views' threads never call this.
 */
#include "common/progress.h"

#include "common/textsafe.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static struct {
	int on;
	int shown;     /* a line is on the terminal */
	double start;  /* when the work began */
	unsigned calls;
	char phase[256];
} progress;

double progress_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_enable(int on)
{
	progress.on = on && isatty(STDERR_FILENO);
	progress.start = progress_clock();
}

static void progress_show(uint64_t count, const char *unit)
{
	if (!progress.on || progress_clock() - progress.start < 1.0)
		return;
	if (count && unit)
		fprintf(stderr, "\rgprof-dl: %s: %.1fM %s\033[K", progress.phase, (double)count / 1e6,
			unit);
	else
		fprintf(stderr, "\rgprof-dl: %s ...\033[K", progress.phase);
	fflush(stderr);
	progress.shown = 1;
}

void progress_phase(const char *fmt, ...)
{
	if (!progress.on)
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
	if (!progress.on || (++progress.calls & 0xffffu))
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
