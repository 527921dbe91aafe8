/*
 * bench_cupti_convert.c - what the collector's GPU side costs per activity
 * record, without a GPU: CUPTI's real record structs (a kernel with its
 * runtime call, a copy) converted into ring records on the thread that
 * CUPTI would hand the buffer to, and drained as the launcher drains them.
 * This work runs on CUPTI's thread, not the program's: it bounds how many
 * records per second the collector keeps up with, not a launch's cost
 * (bench/gpu measures that, on a GPU).
 *
 *     build/bench/bench-cupti-convert [N]
 */
#include "bench/bench.h"
#include "lib/collector/collector-test.h"
#include "lib/collector/collector.h"
#include "lib/collector/cupti.h"

#include <cupti.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const char *api_name(void *ctx, int driver, uint32_t cbid)
{
	(void)ctx, (void)driver, (void)cbid;
	return "cudaLaunchKernel_v7000";
}

static unsigned char drain_buf[1u << 24];

static void drain(struct ring_shm *shm)
{
	for (uint32_t i = 0; i < shm->nslots; i++)
		while (ring_read(shm, ring_shm_slot(shm, i), drain_buf, sizeof(drain_buf)) > 0)
			;
}

/* ns per record of converting n records made by fill(i, rec) */
static double run(struct ring_shm *shm, const struct coll_cupti_conv *cv, size_t n, size_t size,
		  void (*fill)(size_t, void *))
{
	unsigned char *recs = aligned_alloc(8, 4096 * size);
	for (size_t i = 0; i < 4096; i++)
		fill(i, recs + i * size);
	struct coll_thread *t = coll_thread();
	double best = 1e30;
	for (int rep = 0; rep < 5; rep++) {
		drain(shm);
		double t0 = bench_now();
		for (size_t i = 0; i < n; i++) {
			if ((i & 4095) == 4095)
				drain(shm); /* the launcher keeps up; its time is not counted */
			coll_cupti_convert(t, cv, recs + (i & 4095) * size);
		}
		double dt = bench_now() - t0;
		if (dt < best)
			best = dt;
	}
	free(recs);
	return best * 1e9 / (double)n;
}

static void fill_kernel(size_t i, void *p)
{
	CUpti_ActivityKernel10 *k = p;
	memset(k, 0, sizeof(*k));
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = 1000000 + i * 1000;
	k->end = k->start + 500;
	k->streamId = 7;
	k->gridX = 128, k->gridY = 1, k->gridZ = 1;
	k->blockX = 256, k->blockY = 1, k->blockZ = 1;
	k->registersPerThread = 32;
	k->correlationId = (uint32_t)i;
	/* torch's names repeat: a few hundred distinct kernels */
	static const char *names[] = {
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
		"_Z4gemmPKfS0_Pfi",
		"_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7SumOpsIffEEjfLi4EEEEEvT1_",
	};
	k->name = names[i % 3];
}

static void fill_api(size_t i, void *p)
{
	CUpti_ActivityAPI *a = p;
	memset(a, 0, sizeof(*a));
	a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	a->start = 1000000 + i * 1000;
	a->end = a->start + 300;
	a->threadId = 4242;
	a->correlationId = (uint32_t)i;
}

static void fill_copy(size_t i, void *p)
{
	CUpti_ActivityMemcpy6 *m = p;
	memset(m, 0, sizeof(*m));
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m->bytes = 1 << 20;
	m->start = 1000000 + i * 1000;
	m->end = m->start + 700;
	m->streamId = 7;
	m->correlationId = (uint32_t)i;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	uint32_t nslots = 4;
	uint64_t ring_bytes = 1u << 22;
	size_t len = ring_shm_size(nslots, ring_bytes);
	struct ring_shm *shm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		return 1;
	ring_shm_init(shm, nslots, ring_bytes, 1);
	if (collector_test_attach(shm, len) != 0)
		return 1;
	struct coll_cupti_conv cv = {
		.version = 130001,
		.ts_offset = 0,
		.api_name = api_name,
		.demangle = (char *(*)(const char *, char *, size_t *, int *))dlsym(RTLD_DEFAULT, "__cxa_demangle"),
		.max_wait_ns = 1000000000ull,
	};
	double k = run(shm, &cv, n, sizeof(CUpti_ActivityKernel10), fill_kernel);
	double a = run(shm, &cv, n, sizeof(CUpti_ActivityAPI), fill_api);
	double c = run(shm, &cv, n, sizeof(CUpti_ActivityMemcpy6), fill_copy);
	printf("CUPTI record -> ring record, best of 5 runs of %zu (CUPTI's thread, not the program's)\n", n);
	printf("  kernel (Kernel10, 3 distinct demangled names): %6.1f ns/record\n", k);
	printf("  runtime call (ActivityAPI):                    %6.1f ns/record\n", a);
	printf("  copy (Memcpy6):                                %6.1f ns/record\n", c);
	printf("  a launch (call + kernel): %.1f ns, %.1f M launches/s on one core\n", k + a,
	       1e3 / (k + a));
	collector_test_detach();
	munmap(shm, len);
	return 0;
}
