/* Four worker threads with nested ranges and marks, named two ways
 * (nvtxNameOsThread and pthread_setname_np), under one range on main. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREADS 4
#define ITER 100

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%ld", id);
	if (id < 2)
		nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), name);
	else
		pthread_setname_np(pthread_self(), name);
	for (int i = 0; i < ITER; i++) {
		nvtxRangePushA("outer");
		nvtxRangePushA("inner");
		nvtxRangePop();
		nvtxRangePushA("inner");
		nvtxRangePop();
		nvtxRangePop();
		if (i % 10 == 0)
			nvtxMarkA("tick");
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	nvtxRangePushA("main");
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	nvtxRangePop();
	printf("threads done\n");
	return 0;
}
