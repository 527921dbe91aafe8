/* NVTX ranges around and inside ranges named "train", for
 * --capture-range=nvtx (tests/capture/capture_e2e.py). Each range name says
 * where it is, and how many of it there are:
 *
 *   "before" x2, then "train" (default domain, pushed) holding "in1" x3
 *   and a wide-string "in1w" x1, "between" x2, "train" again holding "in2"
 *   x4, then "train" in domain "mydom" holding "dop" x5 (in mydom), "after".
 *
 * argv[1] "startend": the first "train" is an nvtxRangeStartA/End range
 * instead of a push (and "in1w" is left out).
 * argv[1] "steps": 20 steps instead, each a gprof-dl domain ProfileStep
 * range ("ProfileStep#N") holding one "op" range, for --schedule. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < us * 1000L);
}

static void ranges(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		nvtxRangePushA(name);
		spin_us(20);
		nvtxRangePop();
	}
}

static void domain_push(nvtxDomainHandle_t d, const char *name)
{
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	nvtxDomainRangePushEx(d, &a);
}

static int steps(void)
{
	nvtxDomainHandle_t g = nvtxDomainCreateA("gprof-dl");
	for (int i = 0; i < 20; i++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfileStep#%d", i);
		nvtxEventAttributes_t a = {0};
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.category = 1; /* GPROF_DL_CAT_PROFILE_STEP */
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = name;
		nvtxDomainRangePushEx(g, &a);
		ranges("op", 1);
		spin_us(200);
		nvtxDomainRangePop(g);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "steps"))
		return steps();
	int startend = argc > 1 && !strcmp(argv[1], "startend");
	nvtxDomainHandle_t dom = nvtxDomainCreateA("mydom");

	ranges("before", 2);
	if (startend) {
		nvtxRangeId_t id = nvtxRangeStartA("train");
		ranges("in1", 3);
		nvtxRangeEnd(id);
	} else {
		nvtxRangePushA("train");
		ranges("in1", 3);
		nvtxRangePushW(L"in1w");
		nvtxRangePop();
		nvtxRangePop();
	}
	ranges("between", 2);
	nvtxRangePushA("train");
	ranges("in2", 4);
	nvtxRangePop();
	domain_push(dom, "train");
	for (int i = 0; i < 5; i++) {
		domain_push(dom, "dop");
		spin_us(20);
		nvtxDomainRangePop(dom);
	}
	nvtxDomainRangePop(dom);
	ranges("after", 1);
	return 0;
}
