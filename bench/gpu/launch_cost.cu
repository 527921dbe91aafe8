/*
 * launch_cost.cu - what one kernel launch costs the host: an empty kernel
 * launched N times (200000 by default) in a loop, timed with CLOCK_MONOTONIC
 * around the loop and the cudaDeviceSynchronize after it. launch_cost.py runs
 * it bare and under `gprof-dl run`, where every launch is a runtime API record
 * and a kernel record for CUPTI and the collector.
 *
 *   launch-cost [N]
 *
 * Prints "launches N total_ns T ns_per_launch P" on stdout. Without a usable
 * CUDA device it says so on stderr and exits 77.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WARMUP 1000

__global__ void empty(void)
{
}

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int check(const char *what, cudaError_t e)
{
	if (e == cudaSuccess)
		return 0;
	fprintf(stderr, "launch-cost: %s: %s\n", what, cudaGetErrorString(e));
	return 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count == 0) {
		fprintf(stderr, "launch-cost: no CUDA device (cudaGetDeviceCount: %s)\n",
			e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
		return 77;
	}
	if (n <= 0) {
		fprintf(stderr, "usage: launch-cost [N]\n");
		return 2;
	}
	/* Context creation, module loading and the first launches' lazy set-up
	 * are not what is measured. */
	for (int i = 0; i < WARMUP; i++)
		empty<<<1, 1>>>();
	if (check("warm-up", cudaDeviceSynchronize()))
		return 1;

	unsigned long long t0 = now_ns();
	for (long i = 0; i < n; i++)
		empty<<<1, 1>>>();
	cudaError_t sync = cudaDeviceSynchronize();
	unsigned long long t1 = now_ns();
	if (check("launch", cudaGetLastError()) || check("cudaDeviceSynchronize", sync))
		return 1;
	printf("launches %ld total_ns %llu ns_per_launch %.1f\n", n, t1 - t0, (double)(t1 - t0) / (double)n);
	return 0;
}
