/*
 * bench.h - what every gprof-dl benchmark measures the same way: wall time
 * on the monotonic clock and the resident memory of the benchmark itself.
 * Benchmarks print figures; none of them passes or fails on time.
 */
#ifndef GPDL_BENCH_H
#define GPDL_BENCH_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* qsort's order of doubles: least first. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The arguments of the benchmarks that time NVTX pairs on threads
 * (bench-nvtx, bench-collector-cpu): [PAIRS [MODE [THREADS]]], by default
 * 1,000,000 pairs, "plain", one thread. */
static inline void bench_pair_args(int argc, char **argv, long *pairs, const char **mode,
				   int *nthreads)
{
	*pairs = argc > 1 ? atol(argv[1]) : 1000000;
	*mode = argc > 2 ? argv[2] : "plain";
	*nthreads = argc > 3 ? atoi(argv[3]) : 1;
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

/* A command measured alone: its wall time, the peak resident memory of it
 * (and its children), its exit status (128 + signal when killed; -1 when it
 * could not be waited for). */
struct bench_measured {
	double seconds;
	long maxrss_kib;
	int status;
};

/* Runs argv (bin) in a grandchild, its standard output to out (and its
 * standard error there too when with_stderr); the child in between times it
 * and reads getrusage(RUSAGE_CHILDREN), which then holds that run alone, not
 * the benchmark's own memory. 0 with *m set, or -1. */
static inline int bench_measure(const char *bin, char **argv, const char *out, int with_stderr,
				struct bench_measured *m)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	fflush(stdout);
	pid_t mid = fork();
	if (mid < 0)
		return -1;
	if (mid == 0) {
		close(fd[0]);
		double t0 = bench_now();
		pid_t run = fork();
		if (run == 0) {
			if (!freopen(out, "w", stdout) ||
			    (with_stderr && dup2(fileno(stdout), 2) < 0))
				_exit(127);
			execv(bin, argv);
			fprintf(stderr, "cannot run '%s': %s\n", bin, strerror(errno));
			_exit(127);
		}
		struct bench_measured r = {0, 0, -1};
		int status;
		if (run > 0 && waitpid(run, &status, 0) == run) {
			struct rusage ru;
			r.seconds = bench_now() - t0;
			getrusage(RUSAGE_CHILDREN, &ru);
			r.maxrss_kib = ru.ru_maxrss;
			r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		_exit(write(fd[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(fd[1]);
	ssize_t got = read(fd[0], m, sizeof(*m));
	close(fd[0]);
	int status;
	waitpid(mid, &status, 0);
	return got == sizeof(*m) ? 0 : -1;
}

#endif
