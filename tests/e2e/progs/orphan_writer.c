/* Leaves behind a child that records ranges without pause (for 60 s at
 * most) and exits once the child has recorded its first thousand: the
 * child's pid on stdout, exit 0. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void ranges(void)
{
	for (int i = 0; i < 1000; i++) {
		nvtxRangePushA("orphan");
		nvtxRangePop();
	}
}

int main(void)
{
	int ready[2];
	if (pipe(ready) != 0)
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(ready[0]);
		ranges();
		close(ready[1]); /* some ranges are in the ring: the parent may go */
		time_t end = time(NULL) + 60;
		while (time(NULL) < end)
			ranges();
		_exit(0);
	}
	close(ready[1]);
	char c;
	while (read(ready[0], &c, 1) > 0) {
	}
	printf("%d\n", (int)pid);
	return 0;
}
