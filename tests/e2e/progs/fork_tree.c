/* A known process tree: the root forks two children, the first of which
 * forks a grandchild. Each process prints "pid P ppid Q exit E" (one
 * write, so lines never mix) and exits with E: root 4, children 11 and
 * 12, grandchild 13. Each records one "step" range; each parent waits for
 * its children, so the tree is whole until its leaves end. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(int code)
{
	char line[96];
	int n = snprintf(line, sizeof(line), "pid %d ppid %d exit %d\n", (int)getpid(), (int)getppid(), code);
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		_exit(99);
}

static void wait_all(void)
{
	while (wait(NULL) > 0)
		;
}

static pid_t spawn(void (*body)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		body();
		_exit(98);
	}
	return pid;
}

static void grandchild(void)
{
	nvtxRangePushA("step");
	say(13);
	nvtxRangePop();
	_exit(13);
}

static void child1(void)
{
	nvtxRangePushA("step");
	spawn(grandchild);
	say(11);
	wait_all();
	nvtxRangePop();
	_exit(11);
}

static void child2(void)
{
	nvtxRangePushA("step");
	say(12);
	nvtxRangePop();
	exit(12);
}

int main(void)
{
	nvtxRangePushA("step");
	say(4);
	spawn(child1);
	spawn(child2);
	wait_all();
	nvtxRangePop();
	return 4;
}
