/* Leaves behind a child that records ranges without pause (for 60 s at
 * most) and exits at once: the child's pid on stdout, exit 0. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		time_t end = time(NULL) + 60;
		while (time(NULL) < end) {
			for (int i = 0; i < 1000; i++) {
				nvtxRangePushA("orphan");
				nvtxRangePop();
			}
		}
		_exit(0);
	}
	printf("%d\n", (int)pid);
	return 0;
}
