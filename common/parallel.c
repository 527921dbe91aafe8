/* parallel.c - running the analysis's independent pieces on a few threads (parallel.h). */
#include "common/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define PARALLEL_MAX 8

unsigned parallel_threads(void)
{
	const char *env = getenv("GPDL_THREADS");
	long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > PARALLEL_MAX ? PARALLEL_MAX : (unsigned)n;
}

struct parallel_job {
	void (*fn)(void *ctx, unsigned i);
	void *ctx;
	unsigned n;
	atomic_uint next;
};

static void *parallel_worker(void *arg)
{
	struct parallel_job *job = arg;
	unsigned i;
	while ((i = atomic_fetch_add(&job->next, 1)) < job->n)
		job->fn(job->ctx, i);
	return NULL;
}

void parallel_for(unsigned n, void (*fn)(void *ctx, unsigned i), void *ctx)
{
	struct parallel_job job = {fn, ctx, n, 0};
	unsigned want = parallel_threads();
	if (want > n)
		want = n;
	pthread_t tids[PARALLEL_MAX];
	unsigned started = 0;
	for (unsigned k = 1; k < want; k++) /* the caller is the first worker */
		if (pthread_create(&tids[started], NULL, parallel_worker, &job) == 0)
			started++;
	parallel_worker(&job);
	for (unsigned k = 0; k < started; k++)
		pthread_join(tids[k], NULL);
}
