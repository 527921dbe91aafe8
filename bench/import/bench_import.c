/*
 * bench_import.c - how fast `gprof-dl import` reads chrome-trace JSON, and
 * that its memory stays flat however large the file (formats/import/import.h:
 * memory depends on distinct names and threads, never on events).
 *
 *   bench-import [JSON] [-s SIZE_MB] [--gzip] [--keep]
 *   bench-import --generate OUT EVENTS
 *   bench-import --threads [N...]
 *
 * Without JSON, a Kineto-style file (the PyTorch profiler's layout, one
 * member per line as it writes them) of SIZE_MB megabytes (default 1024) is
 * generated in $TMPDIR: training steps of operators, runtime calls, kernels
 * with launch args, NCCL kernels, copies, sets, memory instants, ac2g flows
 * and annotations on two host threads and two streams; with --gzip a gzip'ed
 * copy is imported as well. The import runs in this process while a thread
 * samples its resident memory four times a second. Prints figures: MB/s of
 * JSON, events/s, output bytes per event, peak and sampled RSS. Never fails
 * on time. The first line of each import is the one the benchmark suite
 * reads:
 *   import: <bytes> bytes in <s> s = <MB/s> MB/s, peak RSS <MB> MB
 *
 * --generate writes the Kineto-style file of EVENTS imported events (ranges
 * and instants; the flows beside them are not counted) to OUT, and stops.
 *
 * --threads measures how the import scales with the number of threads (it
 * must be linear: DESIGN.md): for each N (default 1000, 10000 and 100000) a
 * file of N host threads, each named by metadata and holding three events,
 * is generated, imported in a child process and the trace summarised in
 * another, whose times and peak memory (getrusage's ru_maxrss of that child
 * alone) are printed.
 */
#include "bench/bench.h"
#include "formats/import/import.h"
#include "lib/analysis/summary.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define BENCH_MAX_SAMPLES 4096

/* ---- the generator ---------------------------------------------------------- */

struct out {
	FILE *plain;
	gzFile gz;
	uint64_t bytes, events;
};

static void emit(struct out *o, const char *s, int n)
{
	if (fwrite(s, 1, (size_t)n, o->plain) != (size_t)n) {
		fprintf(stderr, "bench-import: write failed: %s\n", strerror(errno));
		exit(1);
	}
	if (o->gz && gzwrite(o->gz, s, (unsigned)n) != n) {
		fprintf(stderr, "bench-import: gzip write failed\n");
		exit(1);
	}
	o->bytes += (uint64_t)n;
}

/* ns as Kineto's "ts": microseconds with three decimals */
#define US(ns) (unsigned long long)((ns) / 1000), (unsigned)((ns) % 1000)

static void x_event(struct out *o, const char *cat, const char *name, int pid, int tid,
		    uint64_t ts, uint64_t dur, const char *args)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf),
			 "  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
			 "    \"ts\": %llu.%03u, \"dur\": %llu.%03u,\n    \"args\": {\n      %s\n    }\n  },\n",
			 cat, name, pid, tid, US(ts), US(dur), args);
	emit(o, buf, n);
	o->events++;
}

static void gen_step(struct out *o, uint64_t step, uint64_t *t, uint64_t *corr, uint64_t *ext)
{
	static const char *const ops[] = {"aten::addmm", "aten::relu", "aten::mul", "aten::add_",
					  "aten::copy_", "aten::layer_norm"};
	char args[512], buf[512];
	uint64_t start = *t, gpu = *t + 20000;

	*t += 1000;
	for (int i = 0; i < 24; i++) {
		uint64_t op = *t, id = (*ext)++, c = ++*corr;
		const char *name = ops[(step + (uint64_t)i) % 6];
		snprintf(args, sizeof(args),
			 "\"External id\": %llu, \"Record function id\": 0, \"Sequence number\": %llu,"
			 " \"Input Dims\": [[64, 1024], [1024, 1024]], \"Input type\": [\"float\", \"float\"]",
			 (unsigned long long)id, (unsigned long long)(step * 100 + (uint64_t)i));
		x_event(o, "cpu_op", name, 4242, 4242, op, 9000, args);
		snprintf(args, sizeof(args), "\"External id\": %llu, \"cbid\": 211, \"correlation\": %llu",
			 (unsigned long long)id, (unsigned long long)c);
		x_event(o, "cuda_runtime", i % 6 == 4 ? "cudaMemcpyAsync" : "cudaLaunchKernel", 4242,
			4242, op + 2000, 3500, args);
		int n = snprintf(buf, sizeof(buf),
				 "  {\n    \"ph\": \"s\", \"id\": %llu, \"pid\": 4242, \"tid\": 4242, \"ts\": %llu.%03u,\n"
				 "    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  },\n",
				 (unsigned long long)c, US(op + 2000));
		emit(o, buf, n);
		if (i % 6 == 4) {
			snprintf(args, sizeof(args),
				 "\"External id\": %llu, \"device\": 0, \"context\": 1, \"stream\": 7,"
				 " \"correlation\": %llu, \"bytes\": 4194304, \"memory bandwidth (GB/s)\": 12.5",
				 (unsigned long long)id, (unsigned long long)c);
			x_event(o, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 7, gpu, 8000, args);
		} else {
			snprintf(args, sizeof(args),
				 "\"External id\": %llu, \"queued\": 0, \"device\": 0, \"context\": 1,"
				 " \"stream\": 7, \"correlation\": %llu, \"registers per thread\": 64,"
				 " \"shared memory\": 16384, \"blocks per SM\": 2.44, \"warps per SM\": 19.5,"
				 " \"grid\": [264, 1, 1], \"block\": [256, 1, 1], \"est. achieved occupancy %%\": 50",
				 (unsigned long long)id, (unsigned long long)c);
			x_event(o, "kernel", "void gemm_kernel<float, 128, 128>(float const*, float*, int)", 0, 7,
				gpu, 7000, args);
		}
		n = snprintf(buf, sizeof(buf),
			     "  {\n    \"ph\": \"f\", \"id\": %llu, \"pid\": 0, \"tid\": 7, \"ts\": %llu.%03u,\n"
			     "    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  },\n",
			     (unsigned long long)c, US(gpu));
		emit(o, buf, n);
		n = snprintf(buf, sizeof(buf),
			     "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n"
			     "    \"pid\": 4242, \"tid\": 4242,\n    \"ts\": %llu.%03u,\n    \"args\": {\n"
			     "      \"Total Reserved\": 2097152, \"Total Allocated\": 1048576, \"Bytes\": %d,"
			     " \"Addr\": %llu, \"Device Type\": 1, \"Device Id\": 0\n    }\n  },\n",
			     US(op + 100), i % 2 ? -262144 : 262144,
			     (unsigned long long)(0x7f0000000000ull + (uint64_t)i * 4096));
		emit(o, buf, n);
		o->events++;
		gpu += 9000;
		*t += 10000;
	}
	/* backward thread, and the all-reduce on the NCCL stream */
	snprintf(args, sizeof(args), "\"External id\": %llu", (unsigned long long)(*ext)++);
	x_event(o, "cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 4242, 4300,
		start + 5000, 150000, args);
	snprintf(args, sizeof(args),
		 "\"device\": 0, \"context\": 1, \"stream\": 13, \"correlation\": %llu,"
		 " \"registers per thread\": 96, \"shared memory\": 0, \"grid\": [2, 1, 1], \"block\": [512, 1, 1]",
		 (unsigned long long)++*corr);
	x_event(o, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
		0, 13, gpu, 90000, args);
	x_event(o, "python_function", "torch/optim/sgd.py(60): step", 4242, 4242, *t, 20000,
		"\"Python id\": 3, \"Python parent id\": 2");
	*t += 22000;
	snprintf(args, sizeof(args), "\"External id\": %llu", (unsigned long long)(*ext)++);
	snprintf(buf, sizeof(buf), "ProfilerStep#%llu", (unsigned long long)step);
	x_event(o, "user_annotation", buf, 4242, 4242, start, *t - start, args);
	*t += 1000;
}

/* Steps until target bytes, or target_events events when that is not 0. */
static void generate(const char *path, const char *gz_path, uint64_t target,
		     uint64_t target_events)
{
	struct out o = {0};
	static char buf[1 << 20];
	uint64_t t = 1000000, corr = 0, ext = 1, step = 0;

	o.plain = fopen(path, "w");
	if (!o.plain) {
		fprintf(stderr, "bench-import: cannot create '%s': %s\n", path, strerror(errno));
		exit(1);
	}
	setvbuf(o.plain, buf, _IOFBF, sizeof(buf));
	if (gz_path && !(o.gz = gzopen(gz_path, "wb1"))) {
		fprintf(stderr, "bench-import: cannot create '%s'\n", gz_path);
		exit(1);
	}
	const char *head =
		"{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\","
		" \"totalGlobalMem\": 85100068864,\n      \"computeMajor\": 8, \"computeMinor\": 0,\n"
		"      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
		"      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
		"      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 167936,\n"
		"      \"numSms\": 108, \"sharedMemPerBlockOptin\": 166912\n    }\n  ],\n"
		"  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8},\n"
		"  \"traceEvents\": [\n";
	emit(&o, head, (int)strlen(head));
	while (target_events ? o.events < target_events : o.bytes < target)
		gen_step(&o, step++, &t, &corr, &ext);
	const char *tail =
		"  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\","
		" \"ts\": 0.000\n  }\n  ],\n  \"traceName\": \"bench\",\n  \"displayTimeUnit\": \"ms\",\n"
		"  \"baseTimeNanoseconds\": 1700000000000000000\n}\n";
	emit(&o, tail, (int)strlen(tail));
	if (fclose(o.plain) != 0 || (o.gz && gzclose(o.gz) != Z_OK)) {
		fprintf(stderr, "bench-import: cannot finish the generated file\n");
		exit(1);
	}
	printf("generated %s: %.1f MB, %llu events in %llu steps\n", path, (double)o.bytes / 1e6,
	       (unsigned long long)o.events, (unsigned long long)step);
}

/* ---- the measurement -------------------------------------------------------- */

struct sampler {
	pthread_t thread;
	volatile int stop;
	long samples[BENCH_MAX_SAMPLES];
	int n;
};

static void *sample(void *arg)
{
	struct sampler *s = arg;
	while (!s->stop) {
		if (s->n < BENCH_MAX_SAMPLES)
			s->samples[s->n++] = bench_rss_kib();
		usleep(250000);
	}
	return NULL;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

static int measure(const char *json, const char *what)
{
	char err[1024], out[4096];
	struct import_stats st;
	struct stat sb;
	struct sampler s = {0};
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(out, sizeof(out), "%s/bench-import-%d.gpdl", dir, (int)getpid());
	long rss0 = bench_rss_kib();
	struct rusage ru0;
	getrusage(RUSAGE_SELF, &ru0);
	pthread_create(&s.thread, NULL, sample, &s);
	double t0 = bench_now();
	int rc = import_chrome_trace(json, out, 1, &st, err, sizeof(err));
	double secs = bench_now() - t0;
	s.stop = 1;
	pthread_join(s.thread, NULL);
	if (rc != 0) {
		fprintf(stderr, "bench-import: %s\n", err);
		return 1;
	}
	stat(json, &sb);
	uint64_t in_bytes = (uint64_t)sb.st_size;
	stat(out, &sb);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)(ru.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
		     (double)(ru.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
		     (double)(ru.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		     (double)(ru.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
	printf("import: %llu bytes in %.3f s = %.1f MB/s, peak RSS %.1f MB\n",
	       (unsigned long long)in_bytes, secs, (double)in_bytes / 1e6 / secs,
	       (double)ru.ru_maxrss / 1024);
	printf("import of %s (%s)\n", json, what);
	printf("  format            %s\n", import_format_name(st.format));
	printf("  JSON              %.1f MB (%.1f MB on disk)\n", (double)st.json_bytes / 1e6,
	       (double)in_bytes / 1e6);
	printf("  events            %llu (+ %llu ignored: flows, global instants)\n",
	       (unsigned long long)st.events, (unsigned long long)st.ignored);
	printf("  time              %.2f s: %.1f MB/s of JSON, %.2f M events/s\n", secs,
	       (double)st.json_bytes / 1e6 / secs, (double)st.events / secs / 1e6);
	printf("  CPU time          %.2f s: %.1f MB/s of JSON per CPU second (the figure a busy "
	       "machine does not distort)\n", cpu, (double)st.json_bytes / 1e6 / cpu);
	printf("  trace written     %.1f MB, %.1f bytes/event; spill %.1f MB (%.1f bytes/event)\n",
	       (double)sb.st_size / 1e6, (double)sb.st_size / (double)(st.events ? st.events : 1),
	       (double)st.spill_bytes / 1e6,
	       (double)st.spill_bytes / (double)(st.events ? st.events : 1));
	printf("  tables            %llu strings, %llu descs, %llu tracks, %llu devices\n",
	       (unsigned long long)st.strings, (unsigned long long)st.descs,
	       (unsigned long long)st.tracks, (unsigned long long)st.devices);
	if (s.n > 0) {
		long sorted[BENCH_MAX_SAMPLES];
		memcpy(sorted, s.samples, (size_t)s.n * sizeof(long));
		qsort(sorted, (size_t)s.n, sizeof(long), cmp_long);
		printf("  resident memory   %.1f MiB before; during the import: min %.1f, median %.1f, "
		       "max %.1f MiB (%d samples); peak %.1f MiB (getrusage, whole program)\n",
		       (double)rss0 / 1024, (double)sorted[0] / 1024, (double)sorted[s.n / 2] / 1024,
		       (double)sorted[s.n - 1] / 1024, s.n, (double)ru.ru_maxrss / 1024);
		printf("  RSS over time (MiB):");
		int step = s.n > 12 ? s.n / 12 : 1;
		for (int i = 0; i < s.n; i += step)
			printf(" %.1f", (double)s.samples[i] / 1024);
		printf("\n");
	}
	unlink(out);
	return 0;
}

/* ---- many threads ------------------------------------------------------------ */

/* N threads of one process, each named and holding a step-less nest of three
 * events, in the order Kineto writes them: events, then the metadata. */
static void generate_threads(const char *path, unsigned n)
{
	struct out o = {0};
	static char buf[1 << 20];

	o.plain = fopen(path, "w");
	if (!o.plain) {
		fprintf(stderr, "bench-import: cannot create '%s': %s\n", path, strerror(errno));
		exit(1);
	}
	setvbuf(o.plain, buf, _IOFBF, sizeof(buf));
	const char *head = "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n";
	emit(&o, head, (int)strlen(head));
	for (unsigned i = 0; i < n; i++) {
		uint64_t t = 1000000 + (uint64_t)i * 100;
		int tid = 100000 + (int)i;
		x_event(&o, "cpu_op", "aten::addmm", 4242, tid, t, 50000, "\"External id\": 1");
		x_event(&o, "cpu_op", "aten::mm", 4242, tid, t + 1000, 20000, "\"External id\": 2");
		x_event(&o, "user_annotation", "worker", 4242, tid, t + 30000, 10000, "\"External id\": 3");
	}
	for (unsigned i = 0; i < n; i++) {
		char line[256];
		int k = snprintf(line, sizeof(line),
				 "  {\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 4242,"
				 " \"tid\": %u, \"args\": {\"name\": \"worker %u\"}},\n",
				 100000 + i, i);
		emit(&o, line, k);
	}
	const char *tail = "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 4242,"
			   " \"tid\": 0, \"args\": {\"name\": \"python\"}}\n  ]\n}\n";
	emit(&o, tail, (int)strlen(tail));
	if (fclose(o.plain) != 0) {
		fprintf(stderr, "bench-import: cannot finish the generated file\n");
		exit(1);
	}
}

/* A child's time and peak memory: 0, or 1 after a message. */
static int child_done(pid_t pid, double t0, const char *what, unsigned n)
{
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	double secs = bench_now() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench-import: the %s of %u threads failed (status %d)\n", what, n,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return 1;
	}
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("  %-7s %7u threads  %8.2f s (%.2f s CPU)  %8.1f us/thread  peak %8.1f MiB  %6.2f KiB/thread\n",
	       what, n, secs, cpu, secs * 1e6 / n, (double)ru.ru_maxrss / 1024,
	       (double)ru.ru_maxrss / n);
	return 0;
}

/* One size: generated here, imported by a child so that ru_maxrss is the
 * import's own peak, then summarised (every default view, to /dev/null) by
 * another. */
static int measure_threads(unsigned n)
{
	char path[4096], out[4096 + 8], err[1024];
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(path, sizeof(path), "%s/bench-import-threads-%d.json", dir, (int)getpid());
	snprintf(out, sizeof(out), "%s.gpdl", path);
	generate_threads(path, n);
	fflush(stdout);
	double t0 = bench_now();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench-import: fork: %s\n", strerror(errno));
		unlink(path);
		return 1;
	}
	if (pid == 0) {
		struct import_stats st;
		if (import_chrome_trace(path, out, 1, &st, err, sizeof(err)) != 0) {
			fprintf(stderr, "bench-import: %s\n", err);
			_exit(1);
		}
		_exit(st.tracks == n ? 0 : 3);
	}
	int rc = child_done(pid, t0, "import", n);
	unlink(path);
	if (rc == 0) {
		fflush(stdout);
		t0 = bench_now();
		pid = fork();
		if (pid == 0) {
			struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS},
						 .fit = 1, .top = -1};
			FILE *null = fopen("/dev/null", "w");
			char *paths[] = {out};
			_exit(null && summary_files(1, paths, &o, -1, null, "summarised") == 0 ? 0 : 1);
		}
		rc = pid < 0 ? 1 : child_done(pid, t0, "summary", n);
	}
	unlink(out);
	return rc;
}

static int bench_threads(int argc, char **argv)
{
	static const unsigned dflt[] = {1000, 10000, 100000};
	int rc = 0;
	printf("import and summary of N threads x 3 events (time and peak RSS of each process)\n");
	if (argc == 0)
		for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]) && rc == 0; i++)
			rc = measure_threads(dflt[i]);
	for (int i = 0; i < argc && rc == 0; i++) {
		unsigned long n = strtoul(argv[i], NULL, 10);
		if (n == 0 || n > 10000000) {
			fprintf(stderr, "bench-import: --threads: bad count '%s'\n", argv[i]);
			return 2;
		}
		rc = measure_threads((unsigned)n);
	}
	return rc;
}

int main(int argc, char **argv)
{
	const char *json = NULL;
	uint64_t size_mb = 1024;
	int gz = 0, keep = 0;

	if (argc > 1 && !strcmp(argv[1], "--threads"))
		return bench_threads(argc - 2, argv + 2);
	if (argc == 4 && !strcmp(argv[1], "--generate")) {
		uint64_t n = strtoull(argv[3], NULL, 10);
		if (!n) {
			fprintf(stderr, "bench-import: --generate OUT EVENTS: EVENTS must be a number\n");
			return 2;
		}
		generate(argv[2], NULL, 0, n);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			size_mb = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--gzip"))
			gz = 1;
		else if (!strcmp(argv[i], "--keep"))
			keep = 1;
		else if (argv[i][0] != '-' && !json)
			json = argv[i];
		else {
			fprintf(stderr, "usage: bench-import [JSON] [-s SIZE_MB] [--gzip] [--keep]\n"
				"       bench-import --generate OUT EVENTS\n"
				"       bench-import --threads [N...]\n");
			return 2;
		}
	}
	if (json)
		return measure(json, "given");

	char path[4096], gz_path[4096 + 8];
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(path, sizeof(path), "%s/bench-import-%d.json", dir, (int)getpid());
	snprintf(gz_path, sizeof(gz_path), "%s.gz", path);
	double t0 = bench_now();
	generate(path, gz ? gz_path : NULL, size_mb * 1000000ull, 0);
	printf("  (generated in %.1f s)\n", bench_now() - t0);
	int rc = measure(path, "plain");
	if (rc == 0 && gz)
		rc = measure(gz_path, "gzip");
	if (!keep) {
		unlink(path);
		if (gz)
			unlink(gz_path);
	} else {
		printf("kept %s%s%s\n", path, gz ? " and " : "", gz ? gz_path : "");
	}
	return rc;
}
