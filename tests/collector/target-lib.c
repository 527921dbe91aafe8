/*
 * target-lib.c - a shared library with its own copy of NVTX (the header-only
 * implementation keeps hidden globals per linked object): the second NVTX
 * instance in collector-target's process.
 */
#include <nvtx3/nvToolsExt.h>

__attribute__((visibility("default"))) int target_lib_range(const char *name)
{
	int level = nvtxRangePushA(name);
	nvtxMarkA("lib mark");
	nvtxRangePop();
	return level;
}
