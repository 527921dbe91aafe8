/*
 * bench_job.c - `gprof-dl summary --view distributed` over a whole job: its
 * time and peak memory against the budget (issue 13: 64 ranks x 1 M events
 * in 1 GB, read one rank at a time).
 *
 *   bench-job [--ranks N] [--events N] [--steps N] [--slow-rank R] [-j N]
 *             [--keep DIR] [--gprof-dl PATH]
 *
 * e.g., from the build directory, the default job of 64 ranks:
 *   bin/bench-job
 * It writes the job (bench/job/job_gen.h: N rank files of about EVENTS events,
 * one rank slowed by 5 ms of computation per step) into a new directory
 * under $TMPDIR (or /tmp), -j N writers at a time (default 2), about 1 GB
 * for the default job; runs `gprof-dl summary t-00.gpdl ... --view
 * distributed` in a child of a child, so that getrusage(RUSAGE_CHILDREN)
 * there sees the summary alone; prints its wall time, events per second and
 * peak resident memory (ru_maxrss) against the budget, and the straggler
 * line it printed; and removes the directory (unless --keep DIR, which
 * writes the job there and leaves it). Never fails on time or memory.
 */
#include "bench/bench.h"
#include "bench/job/job_gen.h"

#include <dirent.h>
#include <errno.h>
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

#define BUDGET_KIB (1024L * 1024L) /* 1 GB */

struct opts {
	struct job_gen g;
	unsigned jobs;
	const char *keep, *bin;
};

static void usage(void)
{
	fputs("usage: bench-job [--ranks N] [--events N] [--steps N] [--slow-rank R] [-j N]\n"
	      "                 [--keep DIR] [--gprof-dl PATH]\n",
	      stderr);
	exit(2);
}

static unsigned long long number(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno)
		usage();
	return v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	job_gen_defaults(&o->g);
	o->jobs = 2;
	o->bin = GPDL_BIN;
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			usage();
		if (strcmp(a, "--ranks") == 0)
			o->g.ranks = (unsigned)number(v);
		else if (strcmp(a, "--events") == 0)
			o->g.events = number(v);
		else if (strcmp(a, "--steps") == 0)
			o->g.steps = (unsigned)number(v);
		else if (strcmp(a, "--slow-rank") == 0)
			o->g.slow_rank = (int)number(v);
		else if (strcmp(a, "-j") == 0)
			o->jobs = (unsigned)number(v);
		else if (strcmp(a, "--keep") == 0)
			o->keep = v;
		else if (strcmp(a, "--gprof-dl") == 0)
			o->bin = v;
		else
			usage();
	}
	if (!o->g.ranks || !o->g.steps || !o->jobs)
		usage();
}

static char *rank_path(const char *dir, unsigned r)
{
	size_t n = strlen(dir) + 32;
	char *p = malloc(n);
	if (!p)
		exit(1);
	snprintf(p, n, "%s/t-%02u.gpdl", dir, r);
	return p;
}

/* Writes the ranks' files, o->jobs writers at a time; returns the events. */
static int generate(const struct opts *o, const char *dir, uint64_t *events, uint64_t *bytes)
{
	unsigned next = 0, running = 0;
	int failed = 0;
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	while (next < o->g.ranks || running) {
		if (next < o->g.ranks && running < o->jobs && !failed) {
			unsigned r = next++;
			pid_t pid = fork();
			if (pid < 0)
				return -1;
			if (pid == 0) {
				uint64_t n = 0;
				char *p = rank_path(dir, r);
				int rc = job_gen_rank(&o->g, r, p, &n);
				if (rc != 0)
					fprintf(stderr, "bench-job: '%s': %s\n", p, strerror(errno));
				if (write(fd[1], &n, sizeof(n)) != sizeof(n))
					rc = -1;
				_exit(rc ? 1 : 0);
			}
			running++;
			continue;
		}
		if (next >= o->g.ranks && !running)
			break;
		int status;
		if (wait(&status) < 0)
			return -1;
		running--;
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
		uint64_t n;
		if (read(fd[0], &n, sizeof(n)) == sizeof(n))
			*events += n;
		if (failed && next < o->g.ranks)
			next = o->g.ranks;
	}
	close(fd[0]);
	close(fd[1]);
	for (unsigned r = 0; r < o->g.ranks; r++) {
		struct stat st;
		char *p = rank_path(dir, r);
		if (stat(p, &st) == 0)
			*bytes += (uint64_t)st.st_size;
		free(p);
	}
	return failed ? -1 : 0;
}

static void print_line(const char *path, const char *prefix)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, prefix, strlen(prefix)) == 0)
			printf("  %s", line);
	if (f)
		fclose(f);
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	struct opts o;
	parse(argc, argv, &o);
	char tmp[4096];
	const char *dir = o.keep;
	if (!dir) {
		const char *t = getenv("TMPDIR");
		snprintf(tmp, sizeof(tmp), "%s/gpdl-bench-job-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(tmp)) {
			fprintf(stderr, "bench-job: cannot make '%s': %s\n", tmp, strerror(errno));
			return 1;
		}
		dir = tmp;
	} else if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench-job: cannot make '%s': %s\n", dir, strerror(errno));
		return 1;
	}
	printf("generating %u ranks of about %llu events (%u steps, rank %d slowed) in %s ...\n",
	       o.g.ranks, (unsigned long long)o.g.events, o.g.steps, o.g.slow_rank, dir);
	fflush(stdout);
	uint64_t events = 0, bytes = 0;
	double t0 = bench_now();
	int rc = generate(&o, dir, &events, &bytes);
	double gen = bench_now() - t0;
	if (rc != 0) {
		fprintf(stderr, "bench-job: generating the job failed\n");
		if (!o.keep)
			remove_dir(dir);
		return 1;
	}
	printf("  %llu events, %.1f MB on disk (%.1f bytes an event), written in %.1f s\n",
	       (unsigned long long)events, (double)bytes / 1e6, (double)bytes / (double)events, gen);

	char **args = calloc(o.g.ranks + 8, sizeof(*args));
	char out[4096 + 16];
	snprintf(out, sizeof(out), "%s/summary.txt", dir);
	unsigned n = 0;
	args[n++] = "gprof-dl";
	args[n++] = "summary";
	for (unsigned r = 0; r < o.g.ranks; r++)
		args[n++] = rank_path(dir, r);
	args[n++] = "--view";
	args[n++] = "distributed";
	args[n] = NULL;
	printf("gprof-dl summary t-00.gpdl ... t-%02u.gpdl --view distributed\n", o.g.ranks - 1);
	fflush(stdout);
	struct bench_measured m;
	if (bench_measure(o.bin, args, out, 0, &m) != 0 || m.status != 0) {
		fprintf(stderr, "bench-job: the summary failed (status %d)\n", m.status);
		rc = 1;
	} else {
		printf("  time %.2f s, %.1f M events/s\n", m.seconds, (double)events / m.seconds / 1e6);
		printf("  peak resident memory %.1f MiB (budget %ld MiB: %s), %.1f bytes an event of "
		       "the job\n",
		       (double)m.maxrss_kib / 1024, BUDGET_KIB / 1024,
		       m.maxrss_kib <= BUDGET_KIB ? "within" : "OVER",
		       (double)m.maxrss_kib * 1024 / (double)events);
		print_line(out, "Straggler: ");
		print_line(out, "No straggler");
	}
	for (unsigned r = 0; r < o.g.ranks; r++)
		free(args[2 + r]);
	free(args);
	if (!o.keep)
		remove_dir(dir);
	return rc;
}
