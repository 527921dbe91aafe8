/* N ranges (argv[1]), each with a name of its own ("range-0", "range-1",
 * ...), on the main thread, a few at a time so that a small ring keeps up;
 * prints "N ranges" and exits 0. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	char name[32];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "range-%d", i);
		nvtxRangePushA(name);
		nvtxRangePop();
		if (i % 16 == 15) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	}
	printf("%d ranges\n", n);
	return 0;
}
