/*
 * bench.h - what every gprof-dl benchmark measures the same way: wall time
 * on the monotonic clock and the resident memory of the benchmark itself.
 * Benchmarks print figures; none of them passes or fails on time.
 */
#ifndef GPDL_BENCH_H
#define GPDL_BENCH_H

#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Resident memory now, in KiB (/proc/self/statm), 0 when unknown. */
static inline long bench_rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

#endif
