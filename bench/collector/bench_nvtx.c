/*
 * bench-nvtx - what an NVTX push+pop pair costs the program that makes it.
 *
 *     bench-nvtx [PAIRS]
 *
 * Times PAIRS nvtxRangePushA/nvtxRangePop pairs, five times, and prints the
 * best as "<ns> ns per push+pop pair". Run it bare and under gprof-dl (see
 * bench-collector) to see the collector's cost.
 */
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 1000000;
	if (pairs <= 0) {
		fprintf(stderr, "usage: bench-nvtx [PAIRS]\n");
		return 2;
	}
	for (int i = 0; i < 10000; i++) { /* NVTX's first call loads the tool */
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	double best = 0;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now_ns();
		for (long i = 0; i < pairs; i++) {
			nvtxRangePushA("bench");
			nvtxRangePop();
		}
		double per = (now_ns() - t0) / (double)pairs;
		if (rep == 0 || per < best)
			best = per;
	}
	printf("%.2f ns per push+pop pair (best of 5 x %ld)\n", best, pairs);
	return 0;
}
