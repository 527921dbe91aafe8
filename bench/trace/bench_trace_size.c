/*
 * bench_trace_size.c - bench-trace-size [--gpu] [N] [THREADS]: the trace
 * format's figures on a synthetic trace: bytes per event (DESIGN.md: 16 on
 * average), write throughput, and read throughput with a visitor that only
 * counts.
 * --gpu: the trace holds GPU work too, events with details among them.
 *
 * Prints figures; never fails on time.
 */
#include "bench/trace/trace_gen.h"
#include "formats/trace/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct bench_count {
	uint64_t events, sum;
};

static int bench_event(void *ctx, const struct trace_event *e)
{
	struct bench_count *c = ctx;
	c->events++;
	c->sum += e->dur_ns; /* touch the record, as a real consumer would */
	if (e->ext)
		c->sum += e->ext->correlation;
	return 0;
}

static double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bench_read(const char *path, uint64_t bytes, uint64_t expect)
{
	const struct trace_visitor v = { .event = bench_event };
	struct bench_count c = { 0, 0 };
	char err[512];
	double t0 = bench_now(), dt;
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));

	if (!r) {
		fprintf(stderr, "bench-trace-size: %s\n", err);
		return -1;
	}
	trace_reader_run(r, &v, &c);
	dt = bench_now() - t0;
	if (trace_reader_damage(r, NULL) || c.events != expect) {
		fprintf(stderr, "bench-trace-size: read back %llu of %llu events (%s)\n",
			(unsigned long long)c.events, (unsigned long long)expect,
			trace_reader_damage(r, NULL) ? trace_reader_damage(r, NULL) : "no damage");
		trace_reader_close(r);
		return -1;
	}
	trace_reader_close(r);
	printf("read:   %.3f s, %.1f MB/s, %.1f M events/s (page cache warm)\n", dt,
	       (double)bytes / dt / 1e6, (double)c.events / dt / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned flags = 0;
	if (argc > 1 && !strcmp(argv[1], "--gpu")) {
		flags |= TRACE_GEN_GPU;
		argv++;
		argc--;
	}
	unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ull;
	unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 4;
	const char *dir = getenv("TMPDIR");
	char path[512];
	struct trace_gen_stats st;
	int rc = 0;

	if (argc > 3 || !n || !threads) {
		fprintf(stderr, "usage: bench-trace-size [--gpu] [N (default 10000000)] [THREADS (default 4)]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/bench-trace-size.%ld.gpdl", dir && *dir ? dir : "/tmp",
		 (long)getpid());
	if (trace_gen_write_flags(path, n, threads, flags, &st) < 0) {
		fprintf(stderr, "bench-trace-size: cannot write '%s': %s\n", path, strerror(errno));
		return 1;
	}
	printf("trace:  %llu events (%llu on GPU streams), %u threads, %llu names, %llu counter samples\n",
	       (unsigned long long)st.events, (unsigned long long)st.gpu_events, threads,
	       (unsigned long long)st.names, (unsigned long long)st.counters);
	printf("size:   %llu bytes, %.2f bytes/event (budget 16)\n", (unsigned long long)st.bytes,
	       (double)st.bytes / (double)st.events);
	printf("write:  %.3f s, %.1f MB/s, %.1f M events/s (generation included)\n", st.seconds,
	       (double)st.bytes / st.seconds / 1e6, (double)st.events / st.seconds / 1e6);
	for (int i = 0; i < 2 && rc == 0; i++)
		rc = bench_read(path, st.bytes, st.events);
	unlink(path);
	return rc ? 1 : 0;
}
