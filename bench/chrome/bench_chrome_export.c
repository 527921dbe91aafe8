/*
 * bench_chrome_export.c - how fast the exports stream, and that their memory
 * stays flat (DESIGN.md: 200 MB/s of JSON or more, memory independent of the
 * trace).
 *
 *   bench-chrome-export [TRACE] [-n EVENTS] [-o OUT] [--host] [--gpu] [--csv]
 *   bench-csv-export [TRACE] [-n EVENTS] [-o DIR]     (the same as --csv)
 *
 * Each run prints one line, the one the benchmark suite reads:
 *   chrome export: <bytes> bytes in <s> s = <MB/s> MB/s, peak RSS <MB> MB
 *   csv export: <events> events in <s> s, peak RSS <MB> MB
 * (peak RSS from getrusage, over the whole program). With TRACE and no run
 * selected, bench-chrome-export runs the chrome export of TRACE only.
 *
 * Three runs, each selected by its option (all three when none is given):
 *   --host  chrome export of a host-only trace (a training loop's NVTX ranges)
 *   --gpu   chrome export of a GPU-heavy trace (bench/trace's generator with
 *           TRACE_GEN_GPU): every operator launches GPU work through a runtime
 *           call with a correlation id, so that about a sixth of the events
 *           are kernels, copies and sets on two streams and most of the rest
 *           carry details; flows, kernel args and "[memory]" instants are in
 *           the figures
 *   --csv   CSV export of the GPU-heavy trace, into its thirteen files
 * Without TRACE, each trace of EVENTS events (default 10 million) is
 * generated with bench/trace's generator, in a child process so that its
 * memory is not counted, and removed afterwards; with TRACE, that file is
 * exported by each selected run. The output goes to OUT (a file for chrome,
 * a directory for CSV), or by default to sinks that count bytes and drop
 * them, so that the figure is the exporter's and not the disk's (with -o,
 * select one run). Resident
 * memory is sampled every million events and at the end; the peak comes from
 * getrusage, over the whole program. Prints figures; never fails on time.
 */
#include "bench/bench.h"
#include "bench/trace/trace_gen.h"
#include "formats/chrome/chrome_writer.h"
#include "formats/csv/csv_export.h"

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
#define BENCH_SAMPLE_EVERY 1000000ull
#define BENCH_MAX_SAMPLES 256
#define BENCH_BUFFER (1u << 20) /* as gprof-dl export uses for chrome */

static uint64_t sink_bytes;

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	(void)buf;
	sink_bytes += n;
	return (ssize_t)n;
}

/* The writer's event callback, wrapped to sample memory as it runs: the
 * export interface makes a writer a table any caller can decorate. */
static int (*inner_event)(struct export_writer *w, const struct trace_event *e);
static uint64_t seen;
static long samples[BENCH_MAX_SAMPLES];
static unsigned nsamples;

static int sampling_event(struct export_writer *w, const struct trace_event *e)
{
	if (++seen % BENCH_SAMPLE_EVERY == 0 && nsamples < BENCH_MAX_SAMPLES)
		samples[nsamples++] = bench_rss_kib();
	return inner_event(w, e);
}

static int generate(const char *path, uint64_t n, unsigned flags)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct trace_gen_stats st;
		if (trace_gen_write_flags(path, n, 4, flags, &st) < 0) {
			fprintf(stderr, "bench-chrome-export: cannot write '%s': %s\n", path,
				strerror(errno));
			_exit(1);
		}
		printf("generated %s: %llu events (%llu on GPU streams), %llu counter samples, "
		       "%.2f bytes/event\n",
		       path, (unsigned long long)st.events, (unsigned long long)st.gpu_events,
		       (unsigned long long)st.counters,
		       (double)st.bytes / (double)(st.events ? st.events : 1));
		fflush(stdout);
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return 0;
}

/* ---- the outputs: one file for chrome, thirteen for CSV ------------------- */

struct outputs {
	FILE *f[CSV_FILE_COUNT];
	unsigned n;
	const char *path; /* NULL: the counting sinks */
};

static FILE *open_one(const char *path)
{
	static cookie_io_functions_t sink = {.write = sink_write};
	FILE *f = path ? fopen(path, "w") : fopencookie(NULL, "w", sink);
	if (f)
		setvbuf(f, NULL, _IOFBF, BENCH_BUFFER);
	return f;
}

static int open_outputs(struct outputs *o, int csv, const char *path)
{
	char file[4096];
	o->n = csv ? CSV_FILE_COUNT : 1;
	o->path = path;
	if (csv && path && mkdir(path, 0777) != 0 && errno != EEXIST)
		return -1;
	for (unsigned i = 0; i < o->n; i++) {
		if (csv && path)
			snprintf(file, sizeof(file), "%s/%s", path, csv_export_file_names[i]);
		if (!(o->f[i] = open_one(!path ? NULL : csv ? file : path)))
			return -1;
	}
	return 0;
}

/* Closes every output; returns the bytes written, or -1 after a failed close. */
static double close_outputs(struct outputs *o, int csv)
{
	int bad = 0;
	for (unsigned i = 0; i < o->n; i++)
		bad |= fclose(o->f[i]) != 0;
	if (bad)
		return -1;
	if (!o->path)
		return (double)sink_bytes;
	double total = 0;
	char file[4096];
	for (unsigned i = 0; i < o->n; i++) {
		struct stat st;
		if (csv)
			snprintf(file, sizeof(file), "%s/%s", o->path, csv_export_file_names[i]);
		if (stat(csv ? file : o->path, &st) == 0)
			total += (double)st.st_size;
	}
	return total;
}

/* ---- one run ------------------------------------------------------------- */

static int bench_export(const char *what, const char *trace, int csv, const char *outpath)
{
	long rss_start = bench_rss_kib();
	char err[512];
	struct trace_reader *r = trace_reader_open(trace, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "bench-chrome-export: %s\n", err);
		return 1;
	}
	struct outputs o;
	sink_bytes = 0;
	seen = 0;
	nsamples = 0;
	if (open_outputs(&o, csv, outpath) != 0) {
		fprintf(stderr, "bench-chrome-export: cannot open output: %s\n", strerror(errno));
		return 1;
	}
	struct export_writer *w = csv ? csv_export_new(o.f) : chrome_writer_new(o.f[0]);
	inner_event = w->event;
	w->event = sampling_event;
	double t0 = bench_now();
	int rc = export_writer_run(w, r);
	double out_bytes = close_outputs(&o, csv);
	double secs = bench_now() - t0;
	uint64_t events = w->events, counters = w->counters;
	export_writer_destroy(w);
	uint64_t trace_bytes = trace_reader_file_size(r);
	trace_reader_close(r);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	if (rc || out_bytes < 0) {
		fprintf(stderr, "bench-chrome-export: the export failed\n");
		return 1;
	}

	(void)what;
	(void)rss_start;
	(void)trace_bytes;
	if (csv)
		printf("csv export: %llu events in %.3f s, peak RSS %.1f MB\n",
		       (unsigned long long)events, secs, (double)ru.ru_maxrss / 1024);
	else
		printf("chrome export: %.0f bytes in %.3f s = %.1f MB/s, peak RSS %.1f MB\n",
		       out_bytes, secs, out_bytes / secs / 1e6, (double)ru.ru_maxrss / 1024);
	(void)counters;
	fflush(stdout);
	return 0;
}

/* Generates the trace a run needs (unless one was given), runs, removes it. */
static int bench_generated(const char *what, const char *given, uint64_t n, unsigned flags,
			   int csv, const char *outpath)
{
	char tmp[4096];
	const char *trace = given;
	if (!given) {
		const char *dir = getenv("TMPDIR");
		snprintf(tmp, sizeof(tmp), "%s/bench-export-%ld-%u.gpdl",
			 dir && *dir ? dir : "/tmp", (long)getpid(), flags);
		if (generate(tmp, n, flags) < 0) {
			fprintf(stderr, "bench-chrome-export: generating the trace failed\n");
			unlink(tmp);
			return 1;
		}
		trace = tmp;
	}
	int rc = bench_export(what, trace, csv, outpath);
	if (!given)
		unlink(tmp);
	return rc;
}

int main(int argc, char **argv)
{
	const char *trace = NULL, *outpath = NULL;
	uint64_t n = BENCH_DEFAULT_EVENTS;
	int host = 0, gpu = 0, csv = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			outpath = argv[++i];
		else if (!strcmp(argv[i], "--host"))
			host = 1;
		else if (!strcmp(argv[i], "--gpu"))
			gpu = 1;
		else if (!strcmp(argv[i], "--csv"))
			csv = 1;
		else if (argv[i][0] != '-' && !trace)
			trace = argv[i];
		else {
			fprintf(stderr, "usage: bench-chrome-export [TRACE] [-n EVENTS] [-o OUT] "
					"[--host] [--gpu] [--csv]\n");
			return 2;
		}
	}
#ifdef BENCH_CSV_ONLY
	host = gpu = 0;
	csv = 1;
#endif
	if (!host && !gpu && !csv) {
		host = 1; /* a given trace: its chrome export */
		gpu = csv = !trace;
	}
	int rc = 0;
	if (host)
		rc |= bench_generated("chrome export (host-only trace)", trace, n, 0, 0, outpath);
	if (gpu)
		rc |= bench_generated("chrome export (GPU-heavy trace)", trace, n, TRACE_GEN_GPU, 0,
				      outpath);
	if (csv)
		rc |= bench_generated("CSV export (GPU-heavy trace)", trace, n, TRACE_GEN_GPU, 1,
				      outpath);
	return rc;
}
