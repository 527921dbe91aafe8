/*
 * bench-nvtx - what an NVTX push+pop pair costs the program that makes it.
 *
 *     bench-nvtx [PAIRS [MODE [THREADS]]]
 *
 * Every one of THREADS threads (default 1, started together) times PAIRS
 * nvtxRangePushA/nvtxRangePop pairs, five times, and keeps its best; the
 * median of the threads' bests is printed as "<ns> ns per push+pop pair".
 * Run it bare and under gprof-dl (see bench-collector) to see the
 * collector's cost. MODE:
 *
 *   plain   (the default) one name, "bench"
 *   distinct  every pair a new name, "range N", N counting up (across the
 *           five runs and the threads: no name comes twice), formatted with
 *           snprintf as a program would: bare includes the formatting
 *   msgs    messages in torch's emit_nvtx form, every one different (op_id),
 *           "aten::addmm, seq = N, op_id = M": recorded as they are
 *   torch   the same with the collector's torch_nvtx on (gprof-dl-api.h):
 *           each parsed, recorded as an Operator "aten::addmm" with its seq
 *   torch-shapes, msgs-shapes   the same with ", sizes = [[32, 64], [64, 128], [128]]"
 *
 * torch minus msgs is what reading torch's messages costs a push.
 */
#include <nvtx3/nvToolsExt.h>

#include "bench/bench.h"
#include "lib/collector/gprof-dl-api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NMSG 4096
#define REPS 5
#define MAX_THREADS 256

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

enum mode { PLAIN, DISTINCT, MSGS };

static char msgs[NMSG][128];
static long pairs;
static enum mode mode;
static pthread_barrier_t start_line;

struct worker {
	pthread_t th;
	long first; /* distinct: this thread's first N */
	double best;
};

static void run_pairs(struct worker *w, long *next)
{
	char name[32];
	switch (mode) {
	case PLAIN:
		for (long i = 0; i < pairs; i++) {
			nvtxRangePushA("bench");
			nvtxRangePop();
		}
		break;
	case DISTINCT:
		for (long i = 0; i < pairs; i++) {
			snprintf(name, sizeof(name), "range %ld", (*next)++);
			nvtxRangePushA(name);
			nvtxRangePop();
		}
		break;
	case MSGS:
		for (long i = 0; i < pairs; i++) {
			nvtxRangePushA(msgs[i & (NMSG - 1)]);
			nvtxRangePop();
		}
		break;
	}
	(void)w;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	long next = w->first;
	for (int rep = 0; rep < REPS; rep++) {
		pthread_barrier_wait(&start_line); /* the threads run side by side */
		double t0 = now_ns();
		run_pairs(w, &next);
		double per = (now_ns() - t0) / (double)pairs;
		if (rep == 0 || per < w->best)
			w->best = per;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *name;
	int nthreads;
	bench_pair_args(argc, argv, &pairs, &name, &nthreads);
	int torch = !strncmp(name, "torch", 5);
	int shapes = strstr(name, "-shapes") != NULL;
	if (torch || !strncmp(name, "msgs", 4))
		mode = MSGS;
	else if (!strcmp(name, "distinct"))
		mode = DISTINCT;
	else if (!strcmp(name, "plain"))
		mode = PLAIN;
	else
		pairs = 0;
	if (pairs <= 0 || nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "usage: bench-nvtx [PAIRS [plain|distinct|msgs|torch|msgs-shapes|torch-shapes"
				" [THREADS]]]\n");
		return 2;
	}
	for (int i = 0; i < NMSG; i++)
		snprintf(msgs[i], sizeof(msgs[i]), "aten::addmm, seq = %d, op_id = %d%s", 2794 + i,
			 16396 + i, shapes ? ", sizes = [[32, 64], [64, 128], [128]]" : "");
	for (int i = 0; i < 10000; i++) { /* NVTX's first call loads the tool */
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	if (torch) {
		gprof_dl_api_fn fn = (gprof_dl_api_fn)dlsym(RTLD_DEFAULT, GPROF_DL_API_SYMBOL);
		const struct gprof_dl_api *api = fn ? fn(GPROF_DL_API_VERSION) : NULL;
		if (!api) {
			fprintf(stderr, "bench-nvtx: torch mode needs the collector attached\n");
			return 1;
		}
		api->torch_nvtx(1);
	}

	static struct worker w[MAX_THREADS];
	double best[MAX_THREADS];
	pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
	for (int k = 0; k < nthreads; k++) {
		w[k].first = (long)k * pairs * REPS;
		if (k > 0 && pthread_create(&w[k].th, NULL, worker_main, &w[k]) != 0) {
			fprintf(stderr, "bench-nvtx: cannot start thread %d\n", k);
			return 1;
		}
	}
	worker_main(&w[0]);
	for (int k = 1; k < nthreads; k++)
		pthread_join(w[k].th, NULL);
	for (int k = 0; k < nthreads; k++)
		best[k] = w[k].best;
	qsort(best, (size_t)nthreads, sizeof(best[0]), bench_cmp_double);
	double median = nthreads % 2 ? best[nthreads / 2] : (best[nthreads / 2 - 1] + best[nthreads / 2]) / 2;
	printf("%.2f ns per push+pop pair (best of %d x %ld, %s, %d thread%s, median of threads)\n", median,
	       REPS, pairs, name, nthreads, nthreads == 1 ? "" : "s");
	return 0;
}
