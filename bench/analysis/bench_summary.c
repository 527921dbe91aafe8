/*
 * bench_summary.c - how long `gprof-dl summary` takes and how much memory it
 * holds (DESIGN.md: 30 million events a second on 2 cores, memory under 1.5x
 * the trace file), on a host-only trace and on one with GPU work, side by side.
 *
 *   bench-analysis-summary [TRACE] [-n EVENTS] [-t THREADS] [--host-only | --gpu-only]
 *                          [--thread-sep] [--op-detail] [--format F]
 *
 * Without TRACE, two traces of EVENTS events (default 10 million) over
 * THREADS host threads (default 4) are written by bench/trace's generator:
 * one host-only, one with GPU work (kernels, copies, sets, NCCL kernels on two
 * streams, allocations: trace_gen.h), each removed afterwards. Each summary
 * (Trace Summary and every view) runs in a child process of its own, so that
 * its peak resident memory is its own, and goes to /dev/null. Prints the time
 * of each phase, events per second, and the peak resident memory against the
 * file size, then per trace the line the benchmark suite reads:
 *   summary: N events in S s = R M events/s, peak RSS M MB = X x the file
 * Never fails on time. GPDL_THREADS limits the threads the views
 * use (parallel.h); `taskset -c 0,1` the cores.
 */
#include "bench/bench.h"
#include "bench/trace/trace_gen.h"
#include "common/parallel.h"
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

struct figures {
	int ok;
	uint64_t events, bytes, gpu_work;
	double load, load_cpu, prepare, prepare_cpu, views, views_cpu;
	double rss; /* bytes */
};

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Writes the trace in a child, whose memory does not count here. */
static int generate(const char *path, unsigned long long n, unsigned threads, unsigned flags)
{
	printf("generating %llu events over %u threads%s in %s ...\n", n, threads,
	       flags & TRACE_GEN_GPU ? " with GPU work" : "", path);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct trace_gen_stats st;
		_exit(trace_gen_write_flags(path, n, threads, flags, &st) == 0 ? 0 : 1);
	}
	int status;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

/* The summary of one trace, measured in this (child) process. */
static void measure(const char *trace, const struct summary_opts *o, struct figures *fg)
{
	struct stat sb;
	FILE *sink = fopen("/dev/null", "w");
	if (stat(trace, &sb) != 0 || !sink) {
		fprintf(stderr, "bench-analysis-summary: '%s': %s\n", trace, strerror(errno));
		return;
	}
	struct analysis a;
	char err[1024];
	double c0 = cpu_seconds(), t0 = bench_now();
	analysis_init(&a);
	if (analysis_load(&a, trace, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench-analysis-summary: %s\n", err);
		return;
	}
	double t1 = bench_now(), c1 = cpu_seconds();
	analysis_prepare(&a);
	double t2 = bench_now(), c2 = cpu_seconds();
	int rc = summary_write(&a, o, sink);
	double t3 = bench_now(), c3 = cpu_seconds();
	fg->events = a.events;
	fg->gpu_work = a.gpu.work;
	analysis_free(&a);
	fclose(sink);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fg->bytes = (uint64_t)sb.st_size;
	fg->load = t1 - t0;
	fg->load_cpu = c1 - c0;
	fg->prepare = t2 - t1;
	fg->prepare_cpu = c2 - c1;
	fg->views = t3 - t2;
	fg->views_cpu = c3 - c2;
	fg->rss = (double)ru.ru_maxrss * 1024.0;
	fg->ok = rc == 0;
}

/* measure() in a child, its figures back through a pipe. */
static int measure_apart(const char *trace, const struct summary_opts *o, struct figures *fg)
{
	int fd[2];
	memset(fg, 0, sizeof(*fg));
	fflush(stdout);
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		struct figures mine = {0};
		measure(trace, o, &mine);
		_exit(write(fd[1], &mine, sizeof(mine)) == (ssize_t)sizeof(mine) ? 0 : 1);
	}
	close(fd[1]);
	ssize_t got = read(fd[0], fg, sizeof(*fg));
	close(fd[0]);
	int status;
	waitpid(pid, &status, 0);
	return got == (ssize_t)sizeof(*fg) && fg->ok ? 0 : -1;
}

static void row(const char *what, const struct figures *f, unsigned n,
		void (*cell)(char *buf, size_t size, const struct figures *f))
{
	printf("%-16s", what);
	for (unsigned i = 0; i < n; i++) {
		char buf[64];
		cell(buf, sizeof(buf), &f[i]);
		printf("  %-30s", buf);
	}
	putchar('\n');
}

#define CELL(name, fmt, ...)                                                             \
	static void name(char *buf, size_t size, const struct figures *f)                    \
	{                                                                                    \
		snprintf(buf, size, fmt, __VA_ARGS__);                                           \
	}
CELL(c_events, "%llu (%llu on GPU streams)", (unsigned long long)f->events,
     (unsigned long long)f->gpu_work)
CELL(c_bytes, "%.1f MB, %.2f bytes/event", (double)f->bytes / 1e6,
     f->events ? (double)f->bytes / (double)f->events : 0.0)
CELL(c_load, "%.3f s (%.3f s CPU)", f->load, f->load_cpu)
CELL(c_prepare, "%.3f s (%.3f s CPU)", f->prepare, f->prepare_cpu)
CELL(c_views, "%.3f s (%.3f s CPU)", f->views, f->views_cpu)
CELL(c_total, "%.3f s (%.3f s CPU)", f->load + f->prepare + f->views,
     f->load_cpu + f->prepare_cpu + f->views_cpu)
CELL(c_rate, "%.1f M events/s",
     f->load + f->prepare + f->views > 0
	     ? (double)f->events / (f->load + f->prepare + f->views) / 1e6
	     : 0.0)
CELL(c_rss, "%.1f MB = %.2f x the file", f->rss / 1e6,
     f->bytes ? f->rss / (double)f->bytes : 0.0)

/* The one line the benchmark suite reads, per trace: keep its format. */
static void report_line(const struct figures *f)
{
	const double s = f->load + f->prepare + f->views;
	printf("summary: %llu events in %.3f s = %.1f M events/s, peak RSS %.1f MB = %.2fx the file\n",
	       (unsigned long long)f->events, s, s > 0 ? (double)f->events / s / 1e6 : 0.0,
	       f->rss / 1e6, f->bytes ? f->rss / (double)f->bytes : 0.0);
}

static void report(const char *const *names, const struct figures *f, unsigned n)
{
	printf("\n%-16s", "");
	for (unsigned i = 0; i < n; i++)
		printf("  %-30s", names[i]);
	putchar('\n');
	row("events", f, n, c_events);
	row("trace", f, n, c_bytes);
	row("load", f, n, c_load);
	row("prepare", f, n, c_prepare);
	row("views", f, n, c_views);
	row("total", f, n, c_total);
	row("throughput", f, n, c_rate);
	row("peak RSS", f, n, c_rss);
	printf("\nprepare: sort, nest, window, GPU work tied to its calls; views: the Trace "
	       "Summary and every view, side by side on up to %u threads.\n"
	       "Budget (DESIGN.md): 30 M events/s on 2 cores, peak RSS under 1.5x the file.\n\n",
	       parallel_threads());
	for (unsigned i = 0; i < n; i++)
		report_line(&f[i]);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-analysis-summary [TRACE] [-n EVENTS] [-t THREADS] "
			"[--host-only | --gpu-only] [--thread-sep] [--op-detail] "
			"[--format text|csv|json]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long n = BENCH_DEFAULT_EVENTS;
	unsigned threads = 4;
	int host = 1, gpu = 1;
	const char *trace = NULL;
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS}};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			threads = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--host-only"))
			gpu = 0;
		else if (!strcmp(argv[i], "--gpu-only"))
			host = 0;
		else if (!strcmp(argv[i], "--thread-sep"))
			o.view.thread_sep = 1;
		else if (!strcmp(argv[i], "--op-detail"))
			o.view.op_detail = 1;
		else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			if (summary_format_parse(argv[++i], &o.format) != 0)
				usage();
		} else if (argv[i][0] == '-' || trace)
			usage();
		else
			trace = argv[i];
	}
	if (!host && !gpu)
		usage();
	struct figures f[2];
	if (trace) {
		if (measure_apart(trace, &o, &f[0]) != 0)
			return 1;
		report((const char *const[]){trace}, f, 1);
		return 0;
	}
	const char *names[2];
	unsigned k = 0;
	for (unsigned pass = 0; pass < 2; pass++) {
		if ((pass == 0 && !host) || (pass == 1 && !gpu))
			continue;
		char path[] = "/tmp/gpdl-bench-summary-XXXXXX";
		int fd = mkstemp(path);
		if (fd < 0 || close(fd) != 0 || unlink(path) != 0 ||
		    generate(path, n, threads ? threads : 1, pass ? TRACE_GEN_GPU : 0) != 0) {
			fprintf(stderr, "bench-analysis-summary: cannot generate a trace: %s\n",
				strerror(errno));
			return 1;
		}
		int rc = measure_apart(path, &o, &f[k]);
		unlink(path);
		if (rc != 0)
			return 1;
		names[k++] = pass ? "with GPU work" : "host-only";
	}
	report(names, f, k);
	return 0;
}
