/*
 * inject.c - the static injection the unit tests use: NVTX's loader calls
 * InitializeInjectionNvtx2_fnptr when no NVTX_INJECTION64_PATH is set. Kept
 * apart from the NVTX headers, which declare the pointer weak.
 */
#include "gpdl-config.h"

#if GPDL_HAVE_NVTX
#include "lib/collector/collector-test.h"

int (*InitializeInjectionNvtx2_fnptr)(const void *(*)(uint32_t)) = InitializeInjectionNvtx2;
#endif
