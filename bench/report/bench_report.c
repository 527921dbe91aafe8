/*
 * bench_report.c - the size and time of `gprof-dl report` on a large trace
 * (issue 18: a 10 M-event trace gives a report under 5 MB, because the report
 * holds aggregates, never events).
 *
 *   bench-report [-n EVENTS] [--ops N] [--kernels N] [--steps N]
 *                [--max-bytes B] [--keep DIR] [--gprof-dl PATH]
 *
 * Writes one trace of about EVENTS events (default 10 million) through the
 * trace writer: a training loop on one host thread, each step a ProfileStep
 * holding its Dataloader, Forward, Backward and Optimization ranges, and in
 * the Forward and Backward ranges Operators back to back, named round-robin
 * from N distinct names (default 50,000: every name occurs), each launching
 * one kernel (one of --kernels names, default 5,000) on stream 7 of device 0
 * and allocating and then freeing device memory (two Memory events that say
 * the bytes in use). Then runs `gprof-dl report TRACE -o report.html` in a
 * child of a child (getrusage(RUSAGE_CHILDREN) there is the report's alone)
 * and prints the trace's events and bytes, the report's bytes against the
 * budget, its wall time and peak resident memory.
 *
 * Without --max-bytes it never fails on a figure (a benchmark); with it, it
 * exits 1 when the report is larger than B bytes, or when the report or the
 * trace could not be written (the size test of tests/report/.. runs it so).
 * The trace and the report go in a new directory under $TMPDIR (or /tmp),
 * removed at the end, unless --keep DIR.
 */
#include "bench/bench.h"
#include "formats/trace/trace.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef GPDL_BIN
#define GPDL_BIN "gprof-dl"
#endif

#define US 1000ull
#define BUDGET_BYTES 5000000ll /* "under 5 MB" */

struct opts {
	uint64_t events;
	unsigned ops, kernels, steps;
	long long max_bytes; /* < 0: a benchmark, no check */
	const char *keep, *bin;
};

struct gen {
	struct trace_writer *w;
	uint32_t *op, *kernel;
	uint32_t step, phase[4], memory;
	uint64_t events, in_use, next_op;
	unsigned nops, nkernels;
};

static int ev(struct gen *g, uint32_t thread, uint32_t d, uint64_t start, uint64_t dur, uint8_t flags,
	      const struct trace_event_ext *x)
{
	struct trace_event e = {start, dur, d, thread, flags, x};
	g->events++;
	return trace_writer_event(g->w, &e);
}

static uint32_t desc(struct gen *g, const char *name, unsigned type)
{
	uint32_t s = trace_writer_string(g->w, name, strlen(name));
	return s ? trace_writer_desc(g->w, s, 0, 0, (uint8_t)type) : 0;
}

/* A Memory instant on device 0: an allocation (bytes > 0) or a free. */
static int mem(struct gen *g, uint64_t t, int64_t bytes, uint64_t addr)
{
	g->in_use += (uint64_t)bytes;
	struct trace_event_ext x = {.bytes = (uint64_t)bytes, .address = addr, .device = 0,
				    .dst_kind = TRACE_MEM_DEVICE, .total_allocated = g->in_use};
	return ev(g, 0, g->memory, t, 0, TRACE_EVF_MARK, &x);
}

/* nops operators from t, each 10 us, its kernel 8 us on the stream from
 * 1 us after its start, 4 KB..400 KB allocated at its start and freed at
 * its end. Returns the end of the last one. */
static uint64_t ops(struct gen *g, uint64_t t, uint64_t nops, int *rc)
{
	for (uint64_t i = 0; i < nops && *rc == 0; i++, t += 10 * US) {
		uint64_t k = g->next_op++;
		uint64_t addr = 0x7f0000000000ull + (k % 1024) * 0x100000ull;
		int64_t bytes = 4096 * (int64_t)(1 + k % 97);
		struct trace_event_ext kx = {.correlation = k + 1, .grid = {64, 1, 1}, .block = {256, 1, 1},
					     .registers = 32};
		*rc |= mem(g, t, bytes, addr);
		*rc |= ev(g, 1, g->kernel[k % g->nkernels], t + 1 * US, 8 * US, 0, &kx);
		*rc |= mem(g, t + 9 * US, -bytes, addr);
		*rc |= ev(g, 0, g->op[k % g->nops], t, 10 * US, 0, NULL);
	}
	return t;
}

static int generate(const struct opts *o, const char *path, uint64_t *events)
{
	struct gen g = {.nops = o->ops, .nkernels = o->kernels};
	g.w = trace_writer_open(path, 1);
	if (!g.w)
		return -1;
	const uint32_t pid = 4242;
	const struct trace_header h = {
		.sources = TRACE_SRC_NVTX | TRACE_SRC_PYTHON | TRACE_SRC_CUPTI,
		.clock_domain = "CLOCK_MONOTONIC", .wall_offset_ns = 1700000000000000000LL,
		.hostname = "bench", .pid = pid, .rank = -1, .cmdline = "python train.py",
		.start_ns = 0, .ncpus = 16, .gprof_version = "bench", .world_size = -1,
	};
	int rc = trace_writer_header(g.w, &h);
	struct trace_process p = {pid, 1, 0, 0, TRACE_EXIT_UNKNOWN, 0, -1, -1, -1, 0};
	struct trace_thread main = {.index = 0, .pid = pid, .tid = pid,
				    .name_str = trace_writer_string(g.w, "MainThread", 10)};
	struct trace_thread stream = {.index = 1, .pid = pid, .tid = 0,
				      .name_str = trace_writer_string(g.w, "stream 7", 8),
				      .kind = TRACE_TRACK_STREAM, .device = 0, .context = 1, .stream = 7};
	rc |= trace_writer_process(g.w, &p) | trace_writer_thread(g.w, &main) |
	      trace_writer_thread(g.w, &stream);
	g.op = calloc(o->ops, sizeof(*g.op));
	g.kernel = calloc(o->kernels, sizeof(*g.kernel));
	if (!g.op || !g.kernel)
		rc = -1;
	char name[128];
	for (unsigned i = 0; i < o->ops && rc == 0; i++) {
		snprintf(name, sizeof(name), "aten::synthetic_op_%05u", i);
		if (!(g.op[i] = desc(&g, name, TRACE_EV_OPERATOR)))
			rc = -1;
	}
	for (unsigned i = 0; i < o->kernels && rc == 0; i++) {
		snprintf(name, sizeof(name), "void synthetic_kernel_%04u<float, 4>(float const*, float*, int)", i);
		if (!(g.kernel[i] = desc(&g, name, TRACE_EV_KERNEL)))
			rc = -1;
	}
	static const char *const phases[4] = {"Dataloader", "Forward", "Backward", "Optimization"};
	static const unsigned types[4] = {TRACE_EV_DATALOADER, TRACE_EV_FORWARD, TRACE_EV_BACKWARD,
					  TRACE_EV_OPTIMIZATION};
	for (unsigned i = 0; i < 4; i++)
		g.phase[i] = desc(&g, phases[i], types[i]);
	g.step = desc(&g, "ProfileStep", TRACE_EV_PROFILE_STEP);
	g.memory = desc(&g, "[memory]", TRACE_EV_MEMORY);
	/* 4 events an operator, 5 a step beyond them; forward a third, backward
	 * two thirds of a step's operators */
	uint64_t per_step = o->events / o->steps;
	uint64_t nops = per_step > 5 + 8 ? (per_step - 5) / 4 : 2;
	uint64_t t = 0;
	for (unsigned k = 0; k < o->steps && rc == 0; k++) {
		uint64_t s = t;
		rc |= ev(&g, 0, g.phase[0], t, 200 * US, 0, NULL);
		t += 200 * US;
		uint64_t f0 = t, f1 = ops(&g, t, nops / 3, &rc);
		rc |= ev(&g, 0, g.phase[1], f0, f1 - f0, 0, NULL);
		uint64_t b1 = ops(&g, f1, nops - nops / 3, &rc);
		rc |= ev(&g, 0, g.phase[2], f1, b1 - f1, 0, NULL);
		rc |= ev(&g, 0, g.phase[3], b1, 300 * US, 0, NULL);
		t = b1 + 300 * US + 50 * US;
		rc |= ev(&g, 0, g.step, s, t - s, 0, NULL);
	}
	p.end_ns = t;
	p.exit_status = 0;
	rc |= trace_writer_process(g.w, &p);
	free(g.op);
	free(g.kernel);
	int saved = errno;
	if (trace_writer_close(g.w, t) != 0 || rc != 0) {
		errno = saved ? saved : EIO;
		return -1;
	}
	*events = g.events;
	return 0;
}

static void print_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	while (f && fgets(line, sizeof(line), f))
		printf("  | %s", line);
	if (f)
		fclose(f);
}

static int usage(void)
{
	fprintf(stderr, "usage: bench-report [-n EVENTS] [--ops N] [--kernels N] [--steps N] [--max-bytes B]\n"
			"                    [--keep DIR] [--gprof-dl PATH]\n");
	return 2;
}

static int parse_u64(const char *s, uint64_t min, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || x < min)
		return -1;
	*v = x;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {.events = 10000000, .ops = 50000, .kernels = 5000, .steps = 2000,
			 .max_bytes = -1, .bin = GPDL_BIN};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		uint64_t v;
		if (i + 1 >= argc)
			return usage();
		if (!strcmp(a, "--keep"))
			o.keep = argv[++i];
		else if (!strcmp(a, "--gprof-dl"))
			o.bin = argv[++i];
		else if (parse_u64(argv[i + 1], 1, &v) != 0 || v > 4000000000ull)
			return usage();
		else if (!strcmp(a, "-n"))
			o.events = v, i++;
		else if (!strcmp(a, "--ops"))
			o.ops = (unsigned)v, i++;
		else if (!strcmp(a, "--kernels"))
			o.kernels = (unsigned)v, i++;
		else if (!strcmp(a, "--steps"))
			o.steps = (unsigned)v, i++;
		else if (!strcmp(a, "--max-bytes"))
			o.max_bytes = (long long)v, i++;
		else
			return usage();
	}

	char tmp[4096], trace[4200], report[4200], log[4200];
	if (o.keep) {
		if (mkdir(o.keep, 0777) != 0 && errno != EEXIST) {
			fprintf(stderr, "bench-report: '%s': %s\n", o.keep, strerror(errno));
			return 1;
		}
		snprintf(tmp, sizeof(tmp), "%s", o.keep);
	} else {
		const char *base = getenv("TMPDIR");
		snprintf(tmp, sizeof(tmp), "%s/gpdl-bench-report-XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(tmp)) {
			fprintf(stderr, "bench-report: '%s': %s\n", tmp, strerror(errno));
			return 1;
		}
	}
	snprintf(trace, sizeof(trace), "%s/bench.gpdl", tmp);
	snprintf(report, sizeof(report), "%s/report.html", tmp);
	snprintf(log, sizeof(log), "%s/report.log", tmp);

	printf("generating %llu events (%u operator names, %u kernel names, %u steps) in %s ...\n",
	       (unsigned long long)o.events, o.ops, o.kernels, o.steps, trace);
	double t0 = bench_now();
	uint64_t events = 0;
	if (generate(&o, trace, &events) != 0) {
		fprintf(stderr, "bench-report: '%s': %s\n", trace, strerror(errno));
		return 1;
	}
	struct stat st;
	long long trace_bytes = stat(trace, &st) == 0 ? (long long)st.st_size : -1;
	printf("  trace: %llu events, %lld bytes, written in %.2f s\n", (unsigned long long)events,
	       trace_bytes, bench_now() - t0);

	char *args[] = {(char *)"gprof-dl", (char *)"report", trace, (char *)"-o", report, (char *)"--force", NULL};
	struct bench_measured m;
	int failed = 0;
	unlink(report);
	if (bench_measure(o.bin, args, log, 1, &m) != 0 || m.status != 0 || stat(report, &st) != 0) {
		fprintf(stderr, "bench-report: `%s report` failed (status %d):\n", o.bin, m.status);
		print_file(log);
		failed = 1;
	} else {
		long long bytes = (long long)st.st_size;
		long long budget = o.max_bytes >= 0 ? o.max_bytes : BUDGET_BYTES;
		printf("  report: %lld bytes (%.2f MB; budget %lld bytes: %s), %.2f s wall, peak RSS %.1f MB\n",
		       bytes, (double)bytes / 1e6, budget, bytes < budget ? "under" : "OVER", m.seconds,
		       (double)m.maxrss_kib / 1024.0);
		printf("report: %llu events -> %lld bytes in %.2f s\n", (unsigned long long)events, bytes,
		       m.seconds);
		if (o.max_bytes >= 0 && bytes >= o.max_bytes) {
			fprintf(stderr, "bench-report: the report of %llu events is %lld bytes, the budget %lld\n",
				(unsigned long long)events, bytes, o.max_bytes);
			failed = 1;
		}
	}
	if (!o.keep) {
		unlink(trace);
		unlink(report);
		unlink(log);
		rmdir(tmp);
	}
	return failed;
}
