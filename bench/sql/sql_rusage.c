/*
 * sql_rusage.c - bench-sql-rusage OUT CMD [ARGS...]: runs CMD and writes to
 * OUT one line, "<status> <wall seconds> <peak RSS KiB> <peak tree RSS KiB>",
 * of the command and every process it starts.
 *
 * bench/sql/run times the exports and the engines through this. An engine's
 * driver is not the process that holds the memory: pyspark starts a JVM
 * and may leave it to be reaped by whoever inherits it. So this program
 * makes itself the subreaper of the command's tree (PR_SET_CHILD_SUBREAPER),
 * reaps every process of it, orphans included, and reports:
 *   peak RSS       the largest ru_maxrss of any one process of the tree
 *                  (getrusage(RUSAGE_CHILDREN) once all are reaped): the
 *                  JVM's for Spark, gprof-dl's own for an export;
 *   peak tree RSS  the largest sum of the tree's resident sets, sampled from
 *                  /proc every 50 ms (a lower bound: a peak between two
 *                  samples is missed; 0 where /proc cannot be read).
 * The status is the command's own (128+N for signal N, 127 if it could not
 * start); the wall time runs until the last process of the tree is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

struct proc {
	pid_t pid, ppid;
	long rss_pages;
};

/* Reads /proc/PID/stat's ppid and rss; the command name may hold spaces
 * and parentheses, so the fields are counted from its last ')'. */
static int proc_read(pid_t pid, struct proc *p)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *s = strrchr(buf, ')');
	if (!s)
		return -1;
	/* after ')': state(3) ppid(4) ... rss(24) */
	char state;
	int ppid;
	long rss = 0;
	if (sscanf(s + 1, " %c %d", &state, &ppid) != 2)
		return -1;
	int field = 2; /* the command name's */
	for (char *t = s + 1; *t && field < 24; t++)
		if (*t == ' ' && t[1] && t[1] != ' ' && ++field == 24)
			rss = strtol(t + 1, NULL, 10);
	p->pid = pid;
	p->ppid = ppid;
	p->rss_pages = rss;
	return 0;
}

/* The summed resident set of root's descendants, in KiB. */
static long tree_rss_kib(pid_t root)
{
	static struct proc *procs;
	static size_t cap;
	size_t n = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		if (n == cap) {
			size_t c = cap ? 2 * cap : 512;
			struct proc *q = realloc(procs, c * sizeof(*q));
			if (!q)
				break;
			procs = q;
			cap = c;
		}
		if (proc_read((pid_t)pid, &procs[n]) == 0)
			n++;
	}
	closedir(d);
	/* Marks descendants by repeated passes: a tree is a few levels deep. */
	char *in = calloc(n ? n : 1, 1);
	long pages = 0;
	if (!in)
		return 0;
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < n; i++) {
			if (in[i])
				continue;
			int parent_in = procs[i].ppid == root;
			for (size_t k = 0; k < n && !parent_in; k++)
				parent_in = in[k] && procs[k].pid == procs[i].ppid;
			if (parent_in) {
				in[i] = 1;
				pages += procs[i].rss_pages;
				changed = 1;
			}
		}
	}
	free(in);
	return pages * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench-sql-rusage OUT CMD [ARGS...]\n");
		return 2;
	}
	FILE *out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "bench-sql-rusage: cannot create '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		fprintf(stderr, "bench-sql-rusage: no subreaper (%s): orphans are not counted\n",
			strerror(errno));
	/* SIGCHLD blocked and waited for: the loop wakes when a process ends,
	 * else every 50 ms to sample the tree */
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	double t0 = rusage_now();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench-sql-rusage: cannot fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		fclose(out);
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "bench-sql-rusage: cannot run '%s': %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	int code = -1;
	long tree_peak = 0;
	double left_at = 0; /* when the command itself ended */
	const struct timespec tick = {0, 50 * 1000 * 1000};
	for (;;) {
		int status;
		pid_t w = waitpid(-1, &status, WNOHANG);
		if (w < 0 && errno == ECHILD)
			break;
		if (w < 0 && errno != EINTR) {
			fprintf(stderr, "bench-sql-rusage: wait: %s\n", strerror(errno));
			return 1;
		}
		if (w == pid) {
			code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			left_at = rusage_now();
		}
		if (w > 0)
			continue;
		/* what the command left behind gets a minute to end, then is left */
		if (left_at > 0 && rusage_now() - left_at > 60) {
			fprintf(stderr, "bench-sql-rusage: '%s' left processes running\n", argv[2]);
			break;
		}
		long t = tree_rss_kib(getpid());
		if (t > tree_peak)
			tree_peak = t;
		sigtimedwait(&chld, NULL, &tick);
	}
	double wall = rusage_now() - t0;
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	fprintf(out, "%d %.6f %ld %ld\n", code, wall, ru.ru_maxrss, tree_peak);
	if (fclose(out) != 0) {
		fprintf(stderr, "bench-sql-rusage: cannot write '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}
