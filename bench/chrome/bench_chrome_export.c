/*
 * bench_chrome_export.c - how fast chrome export streams, and that its memory
 * stays flat (DESIGN.md: 200 MB/s or more, memory independent of the trace).
 *
 *   bench-chrome-export [TRACE] [-n EVENTS] [-o OUT]
 *
 * Without TRACE, a trace of EVENTS events (default 10 million) is generated
 * with bench/trace's generator, in a child process so that its memory is not
 * counted, and removed afterwards. The JSON goes to OUT, or by default to a
 * sink that counts bytes and drops them, so that the figure is the exporter's
 * and not the disk's. Resident memory is sampled every million events and at
 * the end; the peak comes from getrusage. Prints figures; never fails on time.
 */
#include "bench/trace/trace_gen.h"
#include "formats/chrome/chrome_writer.h"

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

static uint64_t sink_bytes;

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	(void)buf;
	sink_bytes += n;
	return (ssize_t)n;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kib(void)
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

/* The chrome writer's event callback, wrapped to sample memory as it runs:
 * the export interface makes a writer a table any caller can decorate. */
static int (*chrome_event)(struct export_writer *w, const struct trace_event *e);
static uint64_t seen;
static long samples[BENCH_MAX_SAMPLES];
static unsigned nsamples;

static int sampling_event(struct export_writer *w, const struct trace_event *e)
{
	if (++seen % BENCH_SAMPLE_EVERY == 0 && nsamples < BENCH_MAX_SAMPLES)
		samples[nsamples++] = rss_kib();
	return chrome_event(w, e);
}

static int generate(const char *path, uint64_t n)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct trace_gen_stats st;
		if (trace_gen_write(path, n, 4, &st) < 0) {
			fprintf(stderr, "bench-chrome-export: cannot write '%s': %s\n", path,
				strerror(errno));
			_exit(1);
		}
		printf("generated %s: %llu events, %llu counter samples, %.2f bytes/event\n", path,
		       (unsigned long long)st.events, (unsigned long long)st.counters,
		       (double)st.bytes / (double)(st.events ? st.events : 1));
		fflush(stdout);
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *trace = NULL, *outpath = NULL;
	uint64_t n = BENCH_DEFAULT_EVENTS;
	char tmp[4096] = "";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			outpath = argv[++i];
		else if (argv[i][0] != '-' && !trace)
			trace = argv[i];
		else {
			fprintf(stderr, "usage: bench-chrome-export [TRACE] [-n EVENTS] [-o OUT]\n");
			return 2;
		}
	}
	if (!trace) {
		const char *dir = getenv("TMPDIR");
		snprintf(tmp, sizeof(tmp), "%s/bench-chrome-%ld.gpdl", dir && *dir ? dir : "/tmp",
			 (long)getpid());
		if (generate(tmp, n) < 0) {
			fprintf(stderr, "bench-chrome-export: generating the trace failed\n");
			return 1;
		}
		trace = tmp;
	}

	long rss_start = rss_kib();
	char err[512];
	struct trace_reader *r = trace_reader_open(trace, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "bench-chrome-export: %s\n", err);
		return 1;
	}
	static cookie_io_functions_t sink = {.write = sink_write};
	FILE *out = outpath ? fopen(outpath, "w") : fopencookie(NULL, "w", sink);
	if (!out) {
		fprintf(stderr, "bench-chrome-export: cannot open output: %s\n", strerror(errno));
		return 1;
	}
	static char buffer[1 << 20]; /* as gprof-dl export uses */
	setvbuf(out, buffer, _IOFBF, sizeof(buffer));

	struct export_writer *w = chrome_writer_new(out);
	chrome_event = w->event;
	w->event = sampling_event;
	double t0 = now();
	int rc = export_writer_run(w, r);
	int closed = fclose(out);
	double secs = now() - t0;
	uint64_t events = w->events, counters = w->counters;
	export_writer_destroy(w);

	uint64_t trace_bytes = trace_reader_file_size(r);
	uint64_t json_bytes = sink_bytes;
	if (outpath) {
		struct stat st;
		json_bytes = stat(outpath, &st) == 0 ? (uint64_t)st.st_size : 0;
	}
	trace_reader_close(r);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	if (rc || closed) {
		fprintf(stderr, "bench-chrome-export: the export failed\n");
		return 1;
	}

	printf("chrome export of %s\n", trace);
	printf("  events            %llu (+ %llu counter samples)\n", (unsigned long long)events,
	       (unsigned long long)counters);
	printf("  time              %.3f s (%.2f M events/s)\n", secs, (double)events / secs / 1e6);
	printf("  JSON written      %.1f MB at %.1f MB/s (%.1f bytes/event) to %s\n",
	       (double)json_bytes / 1e6, (double)json_bytes / secs / 1e6,
	       (double)json_bytes / (double)(events ? events : 1), outpath ? outpath : "a counting sink");
	printf("  trace read        %.1f MB at %.1f MB/s\n", (double)trace_bytes / 1e6,
	       (double)trace_bytes / secs / 1e6);
	printf("  budget            200 MB/s of JSON (DESIGN.md)\n");
	printf("  resident memory   %.1f MiB before the export, peak %.1f MiB (getrusage)\n",
	       (double)rss_start / 1024, (double)ru.ru_maxrss / 1024);
	printf("  RSS every 1M events (MiB):");
	for (unsigned i = 0; i < nsamples; i++)
		printf(" %.1f", (double)samples[i] / 1024);
	printf("\n");
	if (nsamples >= 2)
		printf("  growth first->last sample: %+.1f MiB over %llu M events\n",
		       (double)(samples[nsamples - 1] - samples[0]) / 1024,
		       (unsigned long long)(nsamples - 1));
	if (tmp[0])
		unlink(tmp);
	return 0;
}
