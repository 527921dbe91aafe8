/*
 * bench_summary.c - how long `gprof-dl summary` takes and how much memory it
 * holds (DESIGN.md: 10 million events in about a second, memory under 2x the
 * trace file).
 *
 *   bench-analysis-summary [TRACE] [-n EVENTS] [-t THREADS] [--thread-sep] [--format F]
 *
 * Without TRACE, a trace of EVENTS events (default 10 million) over THREADS
 * threads (default 4) is written by bench/trace's generator in a child
 * process, so that its memory is not counted, and removed afterwards. The
 * summary (Trace Summary and the default views) goes to /dev/null. Prints the
 * time of each phase, events per second, and the peak resident memory from
 * getrusage against the file size. Never fails on time.
 */
#include "bench/trace/trace_gen.h"
#include "lib/analysis/summary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_DEFAULT_EVENTS 10000000ull

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Writes the trace in a child, whose memory does not count here. */
static int generate(const char *path, unsigned long long n, unsigned threads)
{
	printf("generating %llu events over %u threads in %s ...\n", n, threads, path);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct trace_gen_stats st;
		_exit(trace_gen_write(path, n, threads, &st) == 0 ? 0 : 1);
	}
	int status;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-analysis-summary [TRACE] [-n EVENTS] [-t THREADS] "
			"[--thread-sep] [--format text|csv|json]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long n = BENCH_DEFAULT_EVENTS;
	unsigned threads = 4;
	const char *trace = NULL;
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS}};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			threads = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--thread-sep"))
			o.view.thread_sep = 1;
		else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			if (summary_format_parse(argv[++i], &o.format) != 0)
				usage();
		} else if (argv[i][0] == '-' || trace)
			usage();
		else
			trace = argv[i];
	}
	char generated[] = "/tmp/gpdl-bench-summary-XXXXXX";
	if (!trace) {
		int fd = mkstemp(generated);
		if (fd < 0 || close(fd) != 0 || unlink(generated) != 0 ||
		    generate(generated, n, threads ? threads : 1) != 0) {
			fprintf(stderr, "bench-analysis-summary: cannot generate a trace: %s\n",
				strerror(errno));
			return 1;
		}
		trace = generated;
	}
	struct stat sb;
	if (stat(trace, &sb) != 0) {
		fprintf(stderr, "bench-analysis-summary: '%s': %s\n", trace, strerror(errno));
		return 1;
	}
	FILE *sink = fopen("/dev/null", "w");
	if (!sink)
		return 1;

	struct analysis a;
	char err[1024];
	double c0 = cpu_seconds(), t0 = now();
	analysis_init(&a);
	if (analysis_load(&a, trace, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench-analysis-summary: %s\n", err);
		return 1;
	}
	double t1 = now(), ct1 = cpu_seconds();
	analysis_prepare(&a);
	double t2 = now(), ct2 = cpu_seconds();
	int rc = summary_write(&a, &o, sink);
	double t3 = now(), c1 = cpu_seconds();
	uint64_t events = a.events;
	analysis_free(&a);
	fclose(sink);
	if (trace == generated)
		unlink(generated);

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double rss = (double)ru.ru_maxrss * 1024.0;
	double wall = t3 - t0;
	printf("trace:     %s, %llu events, %lld bytes (%.2f bytes/event)\n", trace,
	       (unsigned long long)events, (long long)sb.st_size,
	       events ? (double)sb.st_size / (double)events : 0.0);
	printf("load:      %.3f s wall, %.3f s CPU\n", t1 - t0, ct1 - c0);
	printf("prepare:   %.3f s wall, %.3f s CPU  (sort, nest, window, per-type unions)\n",
	       t2 - t1, ct2 - ct1);
	printf("views:     %.3f s wall, %.3f s CPU  (Trace Summary, device, overview, "
	       "userdefined%s)\n",
	       t3 - t2, c1 - ct2, o.view.thread_sep ? ", per thread" : "");
	printf("total:     %.3f s wall, %.3f s CPU, %.1f M events/s\n", wall, c1 - c0,
	       wall > 0 ? (double)events / wall / 1e6 : 0.0);
	printf("peak RSS:  %.1f MB = %.2f x the trace file (budget: under 2x)\n", rss / 1e6,
	       sb.st_size ? rss / (double)sb.st_size : 0.0);
	return rc ? 1 : 0;
}
