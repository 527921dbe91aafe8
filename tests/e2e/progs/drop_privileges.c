/* A program that drops its privileges, as a daemon does: records "before"
 * ranges, becomes nobody (uid and gid 65534), records "after" ranges on the
 * same thread and "thread-after" on a new one, then forks a child that
 * records "child" ranges and executes this program again ("exec'd": five
 * "exec-after" ranges, exit 6). Prints what happened. Needs root: without
 * it, prints "not root" and exits 77. */
#include <grp.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 5

static void ranges(const char *name)
{
	for (int i = 0; i < N; i++) {
		nvtxRangePushA(name);
		nvtxRangePop();
	}
}

static void *thread_after(void *arg)
{
	(void)arg;
	ranges("thread-after");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec'd")) {
		ranges("exec-after");
		return 6;
	}
	if (geteuid() != 0) {
		printf("not root\n");
		return 77;
	}
	ranges("before");
	if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
		perror("dropping privileges");
		return 1;
	}
	ranges("after");
	pthread_t t;
	pthread_create(&t, NULL, thread_after, NULL);
	pthread_join(t, NULL);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		ranges("child");
		execl("/proc/self/exe", argv[0], "exec'd", (char *)NULL);
		perror("exec");
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("uid %d, child exited %d\n", (int)getuid(), WEXITSTATUS(status));
	return 0;
}
