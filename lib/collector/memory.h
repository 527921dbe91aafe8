/*
 * memory.h - allocations and frees that a framework's allocator reports
 * (gprof-dl-api.h memory()), under gprof-dl run --profile-memory.
 */
#ifndef GPDL_COLLECTOR_MEMORY_H
#define GPDL_COLLECTOR_MEMORY_H

#include <stdint.h>

struct gprof_dl_memory;

/* GPROF_DL_OPT_PROFILE_MEMORY when the launcher asked for allocations
 * (GPROF_DL_PROFILE_MEMORY=1 in the environment), else 0. */
uint32_t coll_memory_options(void);
/* One allocation or free, as a RING_REC_MEMORY record on this thread's ring:
 * only while detail is on, as operators are. Keeps errno. */
void coll_api_memory(const struct gprof_dl_memory *m);

#endif
