/*
 * bench_sqlite_export.c - how many rows a second the sqlite export writes
 * (issue 16: at least a million on the reference machine), against the
 * plain CSV export of the same trace.
 *
 *   bench-sqlite-export [TRACE] [--events N] [--runs R]
 *
 * Without TRACE, a GPU-heavy trace of N events (default 2 million; bench/
 * trace's generator, TRACE_GEN_GPU: every kind of row) is generated under
 * $TMPDIR and removed at the end. Each of R runs (default 5) exports it
 * once to a sqlite file (finish included: computed columns, indices,
 * commit) and once to a directory of CSV files, in turn, so that both see
 * the same machine; each output goes to $TMPDIR and is removed after the
 * run. Prints each run and the medians:
 *   sqlite export: <rows> rows in <s> s = <rows/s> rows/s, <r> rows per CPU second
 *                  (insert <s> s, finish <s> s)
 *   csv export:    <rows> rows in <s> s = <rows/s> rows/s, <r> rows per CPU second
 * (medians by wall time; rows per CPU second, user and system time of this
 * process, is the figure that a busy machine does not skew).
 * Rows are the trace's events and counter samples (the tables of threads,
 * processes, devices and steps are a few rows). Never fails on time.
 */
#include "bench/bench.h"
#include "bench/trace/trace_gen.h"
#include "formats/csv/csv_export.h"
#include "formats/sqlite/sqlite_export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_RUNS 32

struct run {
	double secs, finish_secs, cpu_secs, finish_cpu_secs;
	uint64_t rows;
};

/* CPU seconds (user and system) this process has used. */
static double cpu_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static const char *tmpdir(void)
{
	const char *d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

static int run_sqlite(const char *trace, struct run *out)
{
	char path[4096], err[512];
	snprintf(path, sizeof(path), "%s/bench-sqlite-%ld.sqlite", tmpdir(), (long)getpid());
	unlink(path);
	struct trace_reader *r = trace_reader_open(trace, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "bench-sqlite-export: %s\n", err);
		return -1;
	}
	double t0 = bench_now(), c0 = cpu_now();
	struct sqlite_export *s = sqlite_export_open(path, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "bench-sqlite-export: %s\n", err);
		trace_reader_close(r);
		return -1;
	}
	const struct trace_header *h = trace_reader_header(r);
	const struct csv_export_opts o = {.sql = 1, .time_offset_ns = h->wall_offset_ns,
					  .rank = h->rank};
	struct export_writer *w = sqlite_export_part(s, &o);
	int rc = export_writer_run(w, r);
	out->rows = w->events + w->counters;
	export_writer_destroy(w);
	double t1 = bench_now(), c1 = cpu_now();
	if (rc == 0 && sqlite_export_finish(s, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench-sqlite-export: %s\n", err);
		rc = -1;
	} else if (rc) {
		fprintf(stderr, "bench-sqlite-export: %s\n", sqlite_export_error(s));
	}
	sqlite_export_close(s);
	double t2 = bench_now();
	out->cpu_secs = cpu_now() - c0;
	out->finish_cpu_secs = cpu_now() - c1;
	trace_reader_close(r);
	unlink(path);
	out->secs = t2 - t0;
	out->finish_secs = t2 - t1;
	return rc ? -1 : 0;
}

static int run_csv(const char *trace, struct run *out)
{
	char dir[4096], path[4200], err[512];
	FILE *outs[CSV_FILE_COUNT];
	snprintf(dir, sizeof(dir), "%s/bench-sqlite-csv-%ld", tmpdir(), (long)getpid());
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench-sqlite-export: cannot create '%s': %s\n", dir, strerror(errno));
		return -1;
	}
	struct trace_reader *r = trace_reader_open(trace, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "bench-sqlite-export: %s\n", err);
		return -1;
	}
	double t0 = bench_now(), c0 = cpu_now();
	int rc = 0;
	for (int i = 0; i < CSV_FILE_COUNT; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, csv_export_file_names[i]);
		if (!(outs[i] = fopen(path, "w")))
			rc = -1;
	}
	struct export_writer *w = NULL;
	if (rc == 0) {
		w = csv_export_new(outs);
		rc = export_writer_run(w, r);
		out->rows = w->events + w->counters;
		export_writer_destroy(w);
	}
	for (int i = 0; i < CSV_FILE_COUNT; i++)
		if (outs[i] && fclose(outs[i]) != 0)
			rc = -1;
	out->secs = bench_now() - t0;
	out->cpu_secs = cpu_now() - c0;
	out->finish_secs = 0;
	trace_reader_close(r);
	for (int i = 0; i < CSV_FILE_COUNT; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, csv_export_file_names[i]);
		unlink(path);
	}
	rmdir(dir);
	if (rc)
		fprintf(stderr, "bench-sqlite-export: the CSV export failed\n");
	return rc ? -1 : 0;
}

static int by_secs(const void *a, const void *b)
{
	const struct run *p = a, *q = b;
	return (p->secs > q->secs) - (p->secs < q->secs);
}

static void report(const char *what, const struct run *v, unsigned n, int finish)
{
	struct run s[MAX_RUNS];
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), by_secs);
	const struct run *m = &s[n / 2];
	printf("%s export: %llu rows in %.3f s = %.0f rows/s, %.0f rows per CPU second (median "
	       "of %u)",
	       what, (unsigned long long)m->rows, m->secs, (double)m->rows / m->secs,
	       (double)m->rows / m->cpu_secs, n);
	if (finish)
		printf(" (insert %.3f s, finish %.3f s)", m->secs - m->finish_secs, m->finish_secs);
	printf("\n");
}

int main(int argc, char **argv)
{
	const char *trace = NULL;
	uint64_t n = 2000000;
	unsigned runs = 5;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--events") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = (unsigned)atoi(argv[++i]);
		else if (argv[i][0] != '-' && !trace)
			trace = argv[i];
		else {
			fprintf(stderr, "usage: bench-sqlite-export [TRACE] [--events N] [--runs R]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > MAX_RUNS || n == 0) {
		fprintf(stderr, "bench-sqlite-export: --runs 1..%d, --events > 0\n", MAX_RUNS);
		return 2;
	}
	char tmp[4096];
	if (!trace) {
		struct trace_gen_stats st;
		snprintf(tmp, sizeof(tmp), "%s/bench-sqlite-%ld.gpdl", tmpdir(), (long)getpid());
		if (trace_gen_write_flags(tmp, n, 4, TRACE_GEN_GPU, &st) < 0) {
			fprintf(stderr, "bench-sqlite-export: cannot write '%s': %s\n", tmp,
				strerror(errno));
			return 1;
		}
		printf("generated %s: %llu events (%llu on GPU streams), %llu counter samples\n", tmp,
		       (unsigned long long)st.events, (unsigned long long)st.gpu_events,
		       (unsigned long long)st.counters);
		trace = tmp;
	}
	struct run sq[MAX_RUNS], cv[MAX_RUNS];
	int rc = 0;
	for (unsigned k = 0; k < runs && rc == 0; k++) {
		rc = run_sqlite(trace, &sq[k]) || run_csv(trace, &cv[k]);
		if (rc == 0)
			printf("run %u: sqlite %.3f s (CPU %.3f s, of which finish %.3f s), csv %.3f s "
			       "(CPU %.3f s)\n",
			       k + 1, sq[k].secs, sq[k].cpu_secs, sq[k].finish_cpu_secs, cv[k].secs,
			       cv[k].cpu_secs);
		fflush(stdout);
	}
	if (rc == 0) {
		report("sqlite", sq, runs, 1);
		report("csv", cv, runs, 0);
	}
	if (trace == tmp)
		unlink(tmp);
	return rc ? 1 : 0;
}
