/* A parent and a forked child, each with ranges of its own. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	for (int i = 0; i < 3; i++) {
		nvtxRangePushA("parent-work");
		nvtxRangePop();
	}
	nvtxRangePushA("around-fork");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 4; i++) {
			nvtxRangePushA("child-work");
			nvtxRangePop();
		}
		_exit(3);
	}
	int status;
	waitpid(pid, &status, 0);
	nvtxRangePop();
	printf("child exited %d\n", WEXITSTATUS(status));
	return 0;
}
