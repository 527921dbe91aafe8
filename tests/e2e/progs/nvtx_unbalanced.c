/* What real programs get wrong: pops without a push, a range left open at
 * exit, a start/end range ended on another thread, one never ended. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>

static nvtxRangeId_t cross;

static void *ender(void *arg)
{
	(void)arg;
	nvtxRangeEnd(cross);
	return NULL;
}

int main(void)
{
	nvtxRangePop();
	nvtxRangePop();
	nvtxRangePushA("balanced");
	nvtxRangePop();
	nvtxRangePop();
	cross = nvtxRangeStartA("cross-thread");
	pthread_t t;
	pthread_create(&t, NULL, ender, NULL);
	pthread_join(t, NULL);
	nvtxRangeStartA("never-ended");
	nvtxRangePushA("left-open");
	nvtxRangePushA("left-open-inner");
	puts("unbalanced done");
	return 0;
}
