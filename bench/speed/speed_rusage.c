/*
 * speed_rusage.c - bench-speed-rusage OUT CMD [ARGS...]: runs CMD and writes
 * to OUT one line, "<status> <wall seconds> <peak RSS KiB>", of the command
 * alone (its exit status, 128+N for signal N, 127 if it could not start).
 *
 * bench/speed/run times commands through this rather than from Python: a
 * process's peak RSS (getrusage's ru_maxrss) carries over exec from the
 * process that forked it, so a command forked from Python never reads below
 * Python's own RSS; forked from this small program, it reads what it used.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double rusage_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int status, code;

	if (argc < 3) {
		fprintf(stderr, "usage: bench-speed-rusage OUT CMD [ARGS...]\n");
		return 2;
	}
	FILE *out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "bench-speed-rusage: cannot create '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	double t0 = rusage_now();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench-speed-rusage: cannot fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "bench-speed-rusage: cannot run '%s': %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "bench-speed-rusage: wait: %s\n", strerror(errno));
			return 1;
		}
	}
	double wall = rusage_now() - t0;
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(out, "%d %.6f %ld\n", code, wall, ru.ru_maxrss);
	if (fclose(out) != 0) {
		fprintf(stderr, "bench-speed-rusage: cannot write '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}
