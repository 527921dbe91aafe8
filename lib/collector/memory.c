/*
 * memory.c - the allocations and frees a framework's allocator reports
 * through the binding interface (gprof-dl-api.h memory()): PyTorch's CPU and
 * CUDA allocators, whose reports the torch observer (_observer.cpp) receives
 * as torch.profiler's profile_memory does.
 *
 * Each report becomes one RING_REC_MEMORY record on the calling thread's
 * ring, stamped now: the recorder writes a Memory instant on that thread, so
 * that the analysis finds it inside the operator that allocated (the
 * operator's range is open on the same thread at that time). The allocator's
 * own level (total_allocated) travels with it: it counts what the allocator
 * holds for tensors, which a level rebuilt from the events could not know
 * for blocks allocated before recording began.
 *
 * Reports come only while the program's hook asks for them, which it does
 * only under --profile-memory; they are recorded, like operators, only while
 * detail is on.
 */
#include "lib/collector/memory.h"

#include "formats/trace/trace.h"
#include "lib/collector/collector.h"
#include "lib/collector/gprof-dl-api.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Read at each options() call, which a binding makes once, when it
 * installs its hooks: the launcher set the variable before the start. */
uint32_t coll_memory_options(void)
{
	const char *v = getenv("GPROF_DL_PROFILE_MEMORY");
	return v && v[0] == '1' && !v[1] ? GPROF_DL_OPT_PROFILE_MEMORY : 0;
}

void coll_api_memory(const struct gprof_dl_memory *m)
{
	KEEP_ERRNO_BEGIN;
	struct coll_thread *t = m ? coll_thread() : NULL;
	if (!t)
		goto out;
	if (COLL_UNLIKELY(coll_busy)) { /* a signal handler's allocation inside the collector */
		coll_drop(t);
		goto out;
	}
	coll_busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t now = coll_clock_now();
	if (coll_detail_at(coll_window_state(), now)) {
		struct ring_memory r;
		memset(&r, 0, sizeof(r));
		r.h = (struct ring_rec){RING_REC_MEMORY, sizeof(r), 0};
		r.ts_ns = now;
		r.address = m->address;
		r.bytes = m->bytes;
		r.total_allocated = m->total_allocated;
		r.total_reserved = m->total_reserved;
		r.device = m->device < 0 ? -1 : m->device;
		r.memory_kind = m->device < 0 ? TRACE_MEM_PAGEABLE : TRACE_MEM_DEVICE;
		coll_emit(t, &r); /* counts what does not fit */
	}
	atomic_signal_fence(memory_order_seq_cst);
	coll_busy = 0;
out:
	KEEP_ERRNO_END;
}
