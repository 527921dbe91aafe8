/* Threads by the hundred: "concurrent N" starts N threads that all live at
 * once (each pushes and pops "work" K times, then waits at a barrier until
 * every thread has done so); "sequential N" starts N short threads one after
 * the other, each recording K "work" ranges. Prints what it did and exits 5,
 * so that a changed output or status shows. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANGES 3

static pthread_barrier_t all_started;
static int concurrent;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < RANGES; i++) {
		nvtxRangePushA("work");
		nvtxRangePop();
	}
	if (concurrent)
		pthread_barrier_wait(&all_started); /* every thread is alive at once */
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "concurrent") && strcmp(argv[1], "sequential"))) {
		fprintf(stderr, "usage: many_threads concurrent|sequential N\n");
		return 2;
	}
	int n = atoi(argv[2]);
	concurrent = !strcmp(argv[1], "concurrent");
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (concurrent)
		pthread_barrier_init(&all_started, NULL, (unsigned)n);
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t[i], &attr, worker, NULL) != 0) {
			fprintf(stderr, "pthread_create failed at %d\n", i);
			return 3;
		}
		if (!concurrent)
			pthread_join(t[i], NULL);
	}
	if (concurrent)
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	printf("%s %d threads, %d ranges each\n", argv[1], n, RANGES);
	free(t);
	return 5;
}
