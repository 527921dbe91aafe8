/* Training phases marked through the gprof-dl NVTX domain, a library domain
 * with a named category, registered strings, wide strings and the default
 * domain's category names. */
#include "lib/collector/gprof-dl-nvtx.h"
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <time.h>
#include <wchar.h>

static void spin_us(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < us * 1000L);
}

static void phase(nvtxDomainHandle_t d, uint32_t cat, const char *name, long us)
{
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = cat;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	nvtxDomainRangePushEx(d, &a);
	spin_us(us);
	nvtxDomainRangePop(d);
}

int main(void)
{
	nvtxDomainHandle_t g = nvtxDomainCreateA(GPROF_DL_NVTX_DOMAIN);
	nvtxDomainHandle_t lib = nvtxDomainCreateA("mylib");
	nvtxDomainNameCategoryA(lib, 5, "io");
	nvtxNameCategoryA(1, "cat-a");
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(lib, "reg-range");

	for (int step = 0; step < 3; step++) {
		nvtxEventAttributes_t a = {0};
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.category = GPROF_DL_CAT_PROFILE_STEP;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = "ProfileStep";
		nvtxDomainRangePushEx(g, &a);
		phase(g, GPROF_DL_CAT_DATALOADER, "Dataloader", 2000);
		phase(g, GPROF_DL_CAT_FORWARD, "Forward", 3000);
		phase(g, GPROF_DL_CAT_BACKWARD, "Backward", 4000);
		phase(g, GPROF_DL_CAT_OPTIMIZATION, "Optimization", 1000);
		nvtxDomainRangePop(g);
	}
	for (int i = 0; i < 7; i++) {
		nvtxEventAttributes_t a = {0};
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.category = 5;
		a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		a.message.registered = reg;
		nvtxDomainRangePushEx(lib, &a);
		nvtxDomainRangePop(lib);
	}
	for (int i = 0; i < 2; i++) {
		nvtxRangePushW(L"wide-\u00fcn\u00ef");
		nvtxRangePop();
	}
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = 1;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "in-cat-a";
	nvtxRangePushEx(&a);
	nvtxRangePop();
	nvtxDomainMarkEx(lib, &a);
	nvtxDomainDestroy(lib);
	puts("domains done");
	return 0;
}
