/* A launcher of N ranks, as torchrun or a shell script starts them: each
 * rank is this program again, executed with RANK, WORLD_SIZE and LOCAL_RANK
 * set, and forks a worker of its own (as a DataLoader does).
 *
 *   rank_launcher N MODE [SECONDS]
 *
 * MODE:
 *   codes    rank r ends with code 10 + r: rank 0 returns it from main,
 *            rank 1 calls exit(), the others _exit(); each is reaped at once
 *   kill     rank 1 is SIGKILLed while its range "doomed" is open, and
 *            reaped 0.5 s later (its zombie is there to be seen); the
 *            other ranks exit 0
 *   killnow  the same, reaped at once
 *   long     ranks work for SECONDS (default 4)
 *
 * Ranges: "launch" in the launcher; "rank-step" (3 of them, or one per
 * 50 ms in long mode) in each rank; "worker-load" (2) in each worker. */
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void step(const char *name, int us)
{
	nvtxRangePushA(name);
	usleep((useconds_t)us);
	nvtxRangePop();
}

static int rank_main(const char *mode, double seconds)
{
	int r = atoi(getenv("RANK"));
	for (int i = 0; i < 3; i++)
		step("rank-step", 5000);
	pid_t w = fork();
	if (w == 0) {
		for (int i = 0; i < 2; i++)
			step("worker-load", 2000);
		_exit(0);
	}
	int status;
	waitpid(w, &status, 0);
	if (!strcmp(mode, "long")) {
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			step("rank-step", 50000);
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
		return 0;
	}
	if (!strncmp(mode, "kill", 4) && r == 1) {
		const char *fd = getenv("READY_FD");
		nvtxRangePushA("doomed");
		if (fd && write(atoi(fd), "r", 1) != 1)
			return 1;
		for (;;)
			pause();
	}
	if (!strcmp(mode, "codes")) {
		if (r == 0)
			return 10;
		if (r == 1)
			exit(11);
		_exit(10 + r);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "rank"))
		return rank_main(argv[2], argc > 3 ? atof(argv[3]) : 4.0);
	if (argc < 3) {
		fprintf(stderr, "usage: rank_launcher N codes|kill|killnow|long [SECONDS]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	const char *mode = argv[2], *seconds = argc > 3 ? argv[3] : "4";
	int ready[2];
	pid_t pids[64];
	if (n < 1 || n > 64 || pipe(ready) != 0)
		return 2;
	nvtxRangePushA("launch");
	for (int r = 0; r < n; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			char v[16];
			snprintf(v, sizeof(v), "%d", r);
			setenv("RANK", v, 1);
			setenv("LOCAL_RANK", v, 1);
			snprintf(v, sizeof(v), "%d", n);
			setenv("WORLD_SIZE", v, 1);
			snprintf(v, sizeof(v), "%d", ready[1]);
			setenv("READY_FD", v, 1);
			execl("/proc/self/exe", argv[0], "rank", mode, seconds, (char *)NULL);
			_exit(127);
		}
	}
	if (!strncmp(mode, "kill", 4) && n > 1) {
		char c;
		if (read(ready[0], &c, 1) != 1)
			return 1;
		kill(pids[1], SIGKILL);
		if (!strcmp(mode, "kill"))
			usleep(500000);
	}
	for (int r = 0; r < n; r++) {
		int status;
		waitpid(pids[r], &status, 0);
	}
	nvtxRangePop();
	return 0;
}
