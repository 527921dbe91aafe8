/*
 * nvprof.h - the two tables nvprof printed, computed once for the nvprof
 * view and the launcher's end-of-run report:
 *
 *   GPU activities  the counted GPU work (gpu.h) by name: kernels by their
 *                   name, copies as "[CUDA memcpy HtoD]" (by direction),
 *                   sets as "[CUDA memset]"; Time(%) = the row's time / all
 *                   counted GPU work
 *   API calls       the CUDA API calls (CudaRuntime ranges) in the window,
 *                   clipped to it, by name; Time(%) = the row's time / all
 *                   API calls' time
 *
 * Rows are sorted by time, longest first, then by name. The percentages of
 * a table add up to 100%: they share one denominator, the sum.
 */
#ifndef GPDL_ANALYSIS_NVPROF_H
#define GPDL_ANALYSIS_NVPROF_H

#include "lib/analysis/views/view.h"

struct nvprof_row {
	uint32_t name; /* in the table's names */
	struct time_stats t;
};

struct nvprof_table {
	struct names names;
	struct nvprof_row *rows;
	size_t n;
	uint64_t total_ns; /* the sum of every row's time */
};

void nvprof_gpu_activities(const struct analysis *a, struct nvprof_table *out);
void nvprof_api_calls(const struct analysis *a, struct nvprof_table *out);
void nvprof_table_free(struct nvprof_table *t);
static inline double nvprof_pct(const struct nvprof_table *t, const struct nvprof_row *r)
{
	return view_share(r->t.total, t->total_ns);
}

#endif
