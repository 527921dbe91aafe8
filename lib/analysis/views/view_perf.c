/*
 * view_perf.c - the Perf Summary, Paddle's benchmark table: reader_cost,
 * batch_cost and ips over the counted training steps of all traces, pooled
 * (perf.h has the definitions; `gprof-dl bench` prints the same table).
 */
#include "lib/analysis/views/perf.h"
#include "lib/analysis/views/view.h"

struct table *view_perf(const struct view *v, const struct analysis *a, const struct view_opts *o)
{
	struct perf p;
	perf_compute(&p, a, PERF_SKIP_OF(o));
	struct table *t = perf_table(&p, v->name, v->title, a->store.nfiles);
	perf_free(&p);
	return t;
}
