/*
 * bench-collector-cpu - what an NVTX push+pop pair costs inside the
 * collector, in the calling thread's CPU time.
 *
 *     bench-collector-cpu [PAIRS [plain|distinct [THREADS]]]
 *
 * The collector's static library is attached to a ring in this process (as
 * its tests do); each thread times PAIRS pairs, in batches that fit its
 * ring, draining its own slot between them (not timed). CPU time leaves out
 * what other programs on the machine take, which wall-clock figures
 * (bench-nvtx, bench-collector) cannot. Prints, per pair, the median over
 * threads of each thread's best of five, with the pair's name made (in
 * distinct mode, snprintf "range N") outside the collector timed apart:
 * "<ns> ns per pair in the collector (<ns> making names)".
 */
#include <nvtx3/nvToolsExt.h>

#include "bench/bench.h"
#include "lib/collector/collector-test.h"
#include "lib/collector/collector.h"
#include "lib/ring/ring.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* NVTX's loader takes the collector linked in (as tests/collector/inject.c). */
int (*InitializeInjectionNvtx2_fnptr)(const void *(*)(uint32_t)) = InitializeInjectionNvtx2;

#define RING (1u << 20)
#define BATCH 8192
#define REPS 5
#define MAX_THREADS 64

static struct ring_shm *shm;
static long pairs;
static int distinct;

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void drain(void)
{
	static __thread unsigned char buf[RING];
	struct coll_thread *t = coll_tls;
	if ((uintptr_t)t > 1 && t->slot)
		while (ring_read(shm, t->slot, buf, sizeof(buf)) > 0)
			;
}

struct worker {
	pthread_t th;
	long first;
	double best, names;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	long next = w->first;
	char name[32];
	for (int rep = 0; rep < REPS; rep++) {
		double spent = 0, naming = 0;
		for (long done = 0; done < pairs; done += BATCH) {
			long n = pairs - done < BATCH ? pairs - done : BATCH;
			drain();
			double t0 = cpu_ns();
			if (distinct) {
				for (long i = 0; i < n; i++) {
					snprintf(name, sizeof(name), "range %ld", next++);
					nvtxRangePushA(name);
					nvtxRangePop();
				}
				double t1 = cpu_ns();
				for (long i = 0; i < n; i++) /* the names alone, for the difference */
					snprintf(name, sizeof(name), "range %ld", next + i);
				naming += cpu_ns() - t1;
				spent += t1 - t0;
			} else {
				for (long i = 0; i < n; i++) {
					nvtxRangePushA("bench");
					nvtxRangePop();
				}
				spent += cpu_ns() - t0;
			}
		}
		double per = (spent - naming) / (double)pairs;
		if (rep == 0 || per < w->best) {
			w->best = per;
			w->names = naming / (double)pairs;
		}
	}
	drain();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode;
	int nthreads;
	bench_pair_args(argc, argv, &pairs, &mode, &nthreads);
	distinct = !strcmp(mode, "distinct");
	if (pairs <= 0 || (!distinct && strcmp(mode, "plain") != 0) || nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "usage: bench-collector-cpu [PAIRS [plain|distinct [THREADS]]]\n");
		return 2;
	}
	size_t len = ring_shm_size(MAX_THREADS + 1, RING);
	shm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		perror("bench-collector-cpu: ring");
		return 1;
	}
	ring_shm_init(shm, MAX_THREADS + 1, RING, (uint32_t)getpid());
	if (collector_test_attach(shm, len) != 0) {
		fprintf(stderr, "bench-collector-cpu: cannot attach the collector\n");
		return 1;
	}
	/* NVTX loads the collector at its first call; the clock learns its rate
	 * in the first 50 ms */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++) {
			nvtxRangePushA("warm-up");
			nvtxRangePop();
		}
		drain();
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 100000000L);

	static struct worker w[MAX_THREADS];
	for (int k = 0; k < nthreads; k++) {
		w[k].first = (long)k * pairs * REPS * 2;
		if (k > 0 && pthread_create(&w[k].th, NULL, worker_main, &w[k]) != 0)
			return 1;
	}
	worker_main(&w[0]);
	for (int k = 1; k < nthreads; k++)
		pthread_join(w[k].th, NULL);
	double best[MAX_THREADS], names[MAX_THREADS];
	for (int k = 0; k < nthreads; k++)
		best[k] = w[k].best, names[k] = w[k].names;
	qsort(best, (size_t)nthreads, sizeof(best[0]), bench_cmp_double);
	qsort(names, (size_t)nthreads, sizeof(names[0]), bench_cmp_double);
	uint64_t dropped = 0;
	for (uint32_t i = 0; i < shm->nslots; i++)
		dropped += atomic_load(&ring_shm_slot(shm, i)->dropped);
	printf("%.2f ns per pair in the collector (%.2f making names; %s, %d thread%s, %llu dropped)\n",
	       best[nthreads / 2], names[nthreads / 2], mode, nthreads, nthreads == 1 ? "" : "s",
	       (unsigned long long)dropped);
	return 0;
}
