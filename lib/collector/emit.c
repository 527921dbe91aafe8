/*
 * emit.c - the collector's bottom primitive: a record appended to the
 * thread's ring slot (coll_emit, inline in collector.h so that each record's
 * copy is sized where the record is built), or an event that could not be
 * written counted as a drop. record.c (NVTX), api.c, memory.c,
 * cupti_convert.c and the rest sit above it.
 */
#include "lib/collector/collector.h"

void coll_drop(struct coll_thread *t)
{
	if ((uintptr_t)t > 1 && t->slot)
		atomic_fetch_add_explicit(&t->slot->dropped, 1, memory_order_relaxed);
	else
		coll_drop_nothread();
}

void coll_drop_nothread(void)
{
	struct ring_shm *shm = coll.shm;
	if (shm)
		atomic_fetch_add_explicit(&shm->no_slot_events, 1, memory_order_relaxed);
}
