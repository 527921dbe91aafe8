/*
 * sample.cu - a CUDA program whose GPU activity is known to the last call, for
 * tests/gpu/gpu_e2e.py: what gprof-dl records of it is compared with what it
 * says it did.
 *
 *   3 device buffers of 1 MiB: cudaMalloc, and cudaFree at the end;
 *   1 MiB of pinned host memory (cudaMallocHost), for the one async copy;
 *   HtoD: 3 cudaMemcpy of 1 MiB from pageable memory (the legacy default stream);
 *   4 cudaMemset of 64 KiB (the default stream), the first 256 KiB of buffer c;
 *   kernel `scale` 10 times on stream A, kernel `add_one` 5 times on stream B
 *   (two created streams), each launch inside an NVTX range of its stream's;
 *   DtoH: 1 cudaMemcpyAsync of 1 MiB on stream A into the pinned memory, then
 *   1 cudaMemcpy of 1 MiB into pageable memory (the default stream).
 *
 * NVTX ranges: "sample" around it all, "upload" (copies and sets to the
 * device), "launch_a" (the 10 launches of scale), "launch_b" (the 5 of
 * add_one), "download". Each stream's kernels run one after another, so the
 * GPU time launched inside launch_a is the sum of the scale kernels' times.
 *
 * It prints one line of JSON on stdout: the counts above, the device's name and
 * a checksum of the results, which it verifies against the same arithmetic on
 * the host (exit 1 when they differ). Nothing in it varies between runs on one
 * machine, so that a run under gprof-dl can be compared with a bare run byte
 * for byte. Without a usable CUDA device it says so on stderr and exits 77
 * (ctest's skip status).
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1 << 18)             /* floats in a buffer: 1 MiB */
#define BUF_BYTES (N * sizeof(float))
#define SCALE_LAUNCHES 10
#define ADD_ONE_LAUNCHES 5
#define HTOD_COPIES 3
#define DTOH_COPIES 2
#define MEMSETS 4
#define MEMSET_BYTES (64 << 10)
#define MEMSET_BYTE 0x40        /* 0x40404040 is 3.0039215f */
#define ALLOCS 3

__global__ void scale(float *a, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] *= s;
}

/* Adds c[i] + 1: c holds the sets and the third upload, so that the result
 * shows whether they happened. */
__global__ void add_one(float *b, const float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		b[i] += c[i] + 1.0f;
}

static void die_cuda(const char *what, cudaError_t e)
{
	fprintf(stderr, "sample: %s: %s\n", what, cudaGetErrorString(e));
	exit(1);
}

#define CK(call)                                   \
	do {                                       \
		cudaError_t e_ = (call);           \
		if (e_ != cudaSuccess)             \
			die_cuda(#call, e_);       \
	} while (0)

/* The host's version of what the device computes, in the same float
 * operations and order, so that the comparison can be exact. */
static void expected(const float *x, const float *y, const float *z, float *a, float *b)
{
	float set;
	unsigned char bytes[4] = {MEMSET_BYTE, MEMSET_BYTE, MEMSET_BYTE, MEMSET_BYTE};
	memcpy(&set, bytes, sizeof(set));
	for (int i = 0; i < N; i++) {
		float c = i < MEMSETS * MEMSET_BYTES / (int)sizeof(float) ? set : z[i];
		a[i] = x[i];
		for (int k = 0; k < SCALE_LAUNCHES; k++)
			a[i] *= 2.0f;
		b[i] = y[i];
		for (int k = 0; k < ADD_ONE_LAUNCHES; k++)
			b[i] += c + 1.0f;
	}
}

int main(void)
{
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count == 0) {
		fprintf(stderr, "sample: no CUDA device (cudaGetDeviceCount: %s)\n",
			e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
		return 77;
	}
	cudaDeviceProp prop;
	CK(cudaSetDevice(0));
	CK(cudaGetDeviceProperties(&prop, 0));

	float *x = (float *)malloc(BUF_BYTES), *y = (float *)malloc(BUF_BYTES), *z = (float *)malloc(BUF_BYTES);
	float *out_b = (float *)malloc(BUF_BYTES), *want_a = (float *)malloc(BUF_BYTES),
	      *want_b = (float *)malloc(BUF_BYTES);
	if (!x || !y || !z || !out_b || !want_a || !want_b) {
		fprintf(stderr, "sample: out of memory\n");
		return 1;
	}
	for (int i = 0; i < N; i++) {
		x[i] = (float)(i % 1000) / 8.0f;
		y[i] = (float)(i % 100);
		z[i] = (float)(i % 7);
	}

	nvtxRangePushA("sample");
	float *d_a, *d_b, *d_c, *pinned;
	CK(cudaMalloc((void **)&d_a, BUF_BYTES));
	CK(cudaMalloc((void **)&d_b, BUF_BYTES));
	CK(cudaMalloc((void **)&d_c, BUF_BYTES));
	CK(cudaMallocHost((void **)&pinned, BUF_BYTES));
	cudaStream_t sa, sb;
	CK(cudaStreamCreate(&sa));
	CK(cudaStreamCreate(&sb));

	nvtxRangePushA("upload");
	CK(cudaMemcpy(d_a, x, BUF_BYTES, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(d_b, y, BUF_BYTES, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(d_c, z, BUF_BYTES, cudaMemcpyHostToDevice));
	for (int k = 0; k < MEMSETS; k++)
		CK(cudaMemset((char *)d_c + k * MEMSET_BYTES, MEMSET_BYTE, MEMSET_BYTES));
	nvtxRangePop();

	/* Streams made by cudaStreamCreate wait for the legacy default stream's
	 * work before theirs, and it for theirs: the copies and sets above are
	 * done before the kernels start, the kernels before the sync copy below. */
	const int threads = 256, blocks = (N + threads - 1) / threads;
	nvtxRangePushA("launch_a");
	for (int k = 0; k < SCALE_LAUNCHES; k++)
		scale<<<blocks, threads, 0, sa>>>(d_a, 2.0f, N);
	nvtxRangePop();
	CK(cudaGetLastError());
	nvtxRangePushA("launch_b");
	for (int k = 0; k < ADD_ONE_LAUNCHES; k++)
		add_one<<<blocks, threads, 0, sb>>>(d_b, d_c, N);
	nvtxRangePop();
	CK(cudaGetLastError());

	nvtxRangePushA("download");
	CK(cudaMemcpyAsync(pinned, d_a, BUF_BYTES, cudaMemcpyDeviceToHost, sa));
	CK(cudaStreamSynchronize(sa));
	CK(cudaMemcpy(out_b, d_b, BUF_BYTES, cudaMemcpyDeviceToHost));
	nvtxRangePop();

	CK(cudaStreamDestroy(sa));
	CK(cudaStreamDestroy(sb));
	CK(cudaFree(d_a));
	CK(cudaFree(d_b));
	CK(cudaFree(d_c));
	nvtxRangePop();

	expected(x, y, z, want_a, want_b);
	int bad = memcmp(pinned, want_a, BUF_BYTES) != 0 || memcmp(out_b, want_b, BUF_BYTES) != 0;
	double sum = 0;
	for (int i = 0; i < N; i++)
		sum += (double)pinned[i] + (double)out_b[i];
	CK(cudaFreeHost(pinned));
	/* Everything CUPTI holds is handed over at exit, after this. */
	CK(cudaDeviceSynchronize());

	printf("{\"device\": \"%s\", \"sm_count\": %d, \"cc\": [%d, %d], \"total_memory\": %zu, "
	       "\"scale\": %d, \"add_one\": %d, \"grid\": %d, \"block\": %d, \"htod\": %d, \"dtoh\": %d, "
	       "\"copy_bytes\": %zu, \"memsets\": %d, \"memset_bytes\": %d, \"allocs\": %d, \"alloc_bytes\": %zu, "
	       "\"checksum\": %.1f, \"verified\": %s}\n",
	       prop.name, prop.multiProcessorCount, prop.major, prop.minor, prop.totalGlobalMem, SCALE_LAUNCHES,
	       ADD_ONE_LAUNCHES, blocks, threads, HTOD_COPIES, DTOH_COPIES, BUF_BYTES, MEMSETS, MEMSET_BYTES, ALLOCS,
	       BUF_BYTES, sum, bad ? "false" : "true");
	free(x);
	free(y);
	free(z);
	free(out_b);
	free(want_a);
	free(want_b);
	return bad;
}
