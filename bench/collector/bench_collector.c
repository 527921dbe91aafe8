/*
 * bench-collector - the collector's cost per NVTX push+pop pair, measured in
 * one invocation: bench-nvtx bare, then with the collector attached to a ring
 * this program drains (the collector alone), then under `gprof-dl run` (the
 * whole tool). Prints each figure, the difference to bare and the ratio.
 * The budget (DESIGN.md) is +50 ns per pair, fixed or new names, with no
 * drops at full speed: a table of fixed and distinct names on 1 and 4
 * threads gives both, with the launcher's drop count. Then, under the collector,
 * messages in torch's emit_nvtx form recorded as they are and read as
 * operators (torch_nvtx, gprof-dl-api.h): the difference is what parsing them
 * costs a push. Prints figures, never fails on time.
 *
 *     bench-collector [PAIRS]
 */
#include "lib/ring/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define DRAIN_SLOTS 8u
#define DRAIN_RING (1u << 20)

struct result {
	int ok;
	double ns;
	uint64_t records, dropped;
	char note[160]; /* what the launcher said about events and drops */
	long long events, launcher_dropped; /* from note; -1: no note */
};

/* The launcher's "==PID== Events: N (M marks), D dropped" line, if any. */
static void find_note(struct result *res, int fd)
{
	char err[16384];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof(err) - 1 && (r = read(fd, err + n, sizeof(err) - 1 - n)) > 0)
		n += (size_t)r;
	err[n] = '\0';
	const char *line = strstr(err, "Events:");
	if (!line)
		return;
	const char *end = strchr(line, '\n');
	size_t len = end ? (size_t)(end - line) : strlen(line);
	if (len >= sizeof(res->note))
		len = sizeof(res->note) - 1;
	memcpy(res->note, line, len);
	res->note[len] = '\0';
	long long marks;
	if (sscanf(line, "Events: %lld (%lld marks), %lld dropped", &res->events, &marks,
		   &res->launcher_dropped) != 3)
		res->events = res->launcher_dropped = -1;
}

/* Runs argv with env, stdout into a pipe; drains shm (when given) meanwhile. */
static struct result run(char *const argv[], char *const env[], struct ring_shm *shm)
{
	struct result res = {0};
	res.events = res.launcher_dropped = -1;
	int p[2], e[2];
	if (pipe(p) != 0)
		return res;
	if (pipe(e) != 0) {
		close(p[0]);
		close(p[1]);
		return res;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return res;
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(e[1], 2);
		close(p[0]);
		close(p[1]);
		close(e[0]);
		close(e[1]);
		execve(argv[0], argv, env);
		fprintf(stderr, "bench-collector: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	close(e[1]);
	static unsigned char buf[DRAIN_RING];
	int status = 0, done = 0;
	while (!done) {
		done = waitpid(pid, &status, shm ? WNOHANG : 0) == pid;
		uint64_t before = res.records;
		for (uint32_t i = 0; shm && i < shm->nslots; i++) {
			struct ring_slot *s = ring_shm_slot(shm, i);
			size_t n;
			while ((n = ring_read(shm, s, buf, sizeof(buf))) > 0)
				for (size_t off = 0; off < n; off += ((struct ring_rec *)(void *)(buf + off))->size)
					res.records++;
		}
		if (shm && !done && res.records == before)
			usleep(100); /* idle: the ring is drained as fast as it fills */
	}
	for (uint32_t i = 0; shm && i < shm->nslots; i++) {
		struct ring_slot *s = ring_shm_slot(shm, i);
		res.dropped += atomic_load(&s->dropped);
		if (atomic_load(&s->state) == RING_SLOT_EXITED)
			ring_slot_free(s); /* drained: the next run starts with no drops */
	}
	char out[4096];
	ssize_t n = read(p[0], out, sizeof(out) - 1);
	close(p[0]);
	find_note(&res, e[0]);
	close(e[0]);
	out[n > 0 ? n : 0] = '\0';
	const char *line = strstr(out, " ns per push+pop pair");
	while (line && line > out && line[-1] != '\n')
		line--;
	res.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && line && sscanf(line, "%lf", &res.ns) == 1;
	return res;
}

static void print(const char *what, const struct result *r, const struct result *bare)
{
	if (!r->ok) {
		printf("  %-26s not available\n", what);
		return;
	}
	printf("  %-26s %8.2f ns/pair", what, r->ns);
	if (bare && bare->ok)
		printf("   %+8.2f ns  x%.2f", r->ns - bare->ns, bare->ns > 0 ? r->ns / bare->ns : 0.0);
	if (r->records || r->dropped)
		printf("   (%llu records, %llu dropped)", (unsigned long long)r->records,
		       (unsigned long long)r->dropped);
	if (r->note[0])
		printf("   (%s)", r->note);
	printf("\n");
}

/* Fixed and distinct names, on 1 and 4 threads: bare and under `gprof-dl
 * run`, per pair and thread, and what the launcher dropped. */
static void names_table(const char *pairs, char *launcher_trace)
{
	static const char *const modes[] = {"plain", "distinct"};
	static const char *const threads[] = {"1", "4"};
	char *bare_env[] = {(char *)"PATH=/usr/bin:/bin", NULL};
	extern char **environ;
	printf("fixed and distinct names (\"range N\"), ns per pair and thread, best of 5 x %s pairs:\n", pairs);
	printf("  %-9s %7s %10s %12s %10s %12s %10s\n", "names", "threads", "bare", "gprof-dl run", "added",
	       "events", "dropped");
	for (size_t m = 0; m < 2; m++) {
		for (size_t k = 0; k < 2; k++) {
			char *argv[] = {(char *)BENCH_NVTX, (char *)pairs, (char *)modes[m], (char *)threads[k], NULL};
			char *largv[] = {(char *)BENCH_GPROF_DL, (char *)"run", (char *)"-o", launcher_trace,
					 (char *)"--force", (char *)"--", (char *)BENCH_NVTX, (char *)pairs,
					 (char *)modes[m], (char *)threads[k], NULL};
			struct result bare = run(argv, bare_env, NULL);
			struct result under = access(BENCH_GPROF_DL, X_OK) == 0 ? run(largv, environ, NULL)
										 : (struct result){0};
			printf("  %-9s %7s", modes[m], threads[k]);
			if (bare.ok)
				printf(" %10.2f", bare.ns);
			else
				printf(" %10s", "-");
			if (under.ok && bare.ok)
				printf(" %12.2f %+10.2f", under.ns, under.ns - bare.ns);
			else
				printf(" %12s %10s", "-", "-");
			if (under.events >= 0)
				printf(" %12lld %10lld (%.3f%%)", under.events, under.launcher_dropped,
				       under.events + under.launcher_dropped > 0
					       ? 100.0 * (double)under.launcher_dropped /
							 (double)(under.events + under.launcher_dropped)
					       : 0.0);
			printf("\n");
		}
	}
}

int main(int argc, char **argv)
{
	const char *pairs = argc > 1 ? argv[1] : "1000000";
	char *bench_argv[] = {(char *)BENCH_NVTX, (char *)pairs, NULL};
	char *msgs_argv[] = {(char *)BENCH_NVTX, (char *)pairs, (char *)"msgs", NULL};
	char *torch_argv[] = {(char *)BENCH_NVTX, (char *)pairs, (char *)"torch", NULL};
	char *msgs_sh_argv[] = {(char *)BENCH_NVTX, (char *)pairs, (char *)"msgs-shapes", NULL};
	char *torch_sh_argv[] = {(char *)BENCH_NVTX, (char *)pairs, (char *)"torch-shapes", NULL};
	char *bare_env[] = {(char *)"PATH=/usr/bin:/bin", NULL};

	/* The collector alone: a ring in a memfd, drained here. */
	size_t len = ring_shm_size(DRAIN_SLOTS, DRAIN_RING);
	int fd = memfd_create("bench-collector-ring", 0);
	struct ring_shm *shm = fd >= 0 && ftruncate(fd, (off_t)len) == 0
		? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (shm == MAP_FAILED) {
		perror("bench-collector: ring");
		return 1;
	}
	ring_shm_init(shm, DRAIN_SLOTS, DRAIN_RING, (uint32_t)getpid());
	char shm_env[128], preload[4200], inject[4200];
	snprintf(shm_env, sizeof(shm_env), "%s=/proc/%d/fd/%d", RING_ENV, (int)getpid(), fd);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", BENCH_COLLECTOR);
	snprintf(inject, sizeof(inject), "NVTX_INJECTION64_PATH=%s", BENCH_COLLECTOR);
	char *coll_env[] = {(char *)"PATH=/usr/bin:/bin", preload, inject, shm_env, NULL};
	char *inert_env[] = {(char *)"PATH=/usr/bin:/bin", preload, inject, NULL};

	/* The whole tool. */
	char dir[] = "/tmp/bench-collector-XXXXXX", trace[sizeof(dir) + 16];
	if (!mkdtemp(dir)) {
		perror("bench-collector: mkdtemp");
		return 1;
	}
	snprintf(trace, sizeof(trace), "%s/b.gpdl", dir);
	char *launcher_argv[] = {(char *)BENCH_GPROF_DL, (char *)"run", (char *)"-o", trace,
				 (char *)"--force", (char *)"--", (char *)BENCH_NVTX, (char *)pairs, NULL};
	extern char **environ;

	struct result bare = run(bench_argv, bare_env, NULL);
	struct result inert = run(bench_argv, inert_env, NULL);
	struct result coll = run(bench_argv, coll_env, shm);
	struct result launcher = access(BENCH_GPROF_DL, X_OK) == 0 ? run(launcher_argv, environ, NULL)
								  : (struct result){0};
	struct result msgs_bare = run(msgs_argv, bare_env, NULL);
	struct result msgs = run(msgs_argv, coll_env, shm);
	struct result torch = run(torch_argv, coll_env, shm);
	struct result msgs_sh = run(msgs_sh_argv, coll_env, shm);
	struct result torch_sh = run(torch_sh_argv, coll_env, shm);

	printf("NVTX push+pop pair, best of 5 x %s pairs:\n", pairs);
	print("bare", &bare, NULL);
	print("collector loaded, no ring", &inert, &bare);
	print("collector, ring drained", &coll, &bare);
	print("gprof-dl run", &launcher, &bare);
	printf("  budget: +50 ns per pair (DESIGN.md)\n");
	printf("torch's emit_nvtx messages (\"aten::addmm, seq = N, op_id = M\", each different):\n");
	print("bare", &msgs_bare, NULL);
	print("collector, as they are", &msgs, &msgs_bare);
	print("collector, torch_nvtx on", &torch, &msgs_bare);
	print("same + sizes, as they are", &msgs_sh, &msgs_bare);
	print("same + sizes, torch_nvtx", &torch_sh, &msgs_bare);
	if (msgs.ok && torch.ok)
		printf("  torch_nvtx costs a push %+.2f ns (%+.2f ns with sizes)\n", torch.ns - msgs.ns,
		       torch_sh.ok && msgs_sh.ok ? torch_sh.ns - msgs_sh.ns : 0.0);
	fflush(stdout);
	names_table(pairs, trace);
	unlink(trace);
	rmdir(dir);
	return bare.ok ? 0 : 1;
}
