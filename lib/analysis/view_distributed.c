/*
 * view_distributed.c - the Distributed Summary, as Paddle defines it, over
 * the window:
 *
 *   Communication  the union of the communication GPU work (gpu.h: NCCL and
 *                  RCCL work, Communication events, and the GPU work launched
 *                  inside communication operators)
 *   Computation    the union of the other kernels
 *   Overlap        the time both ran: Communication + Computation - their union
 *
 * so that Computation + Communication - Overlap is the time at least one
 * kernel or communication ran (the Overview's Kernel time, where the
 * communication is done by kernels). Ratios are against the window.
 */
#include "lib/analysis/view.h"

static const struct tcol dist_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 25, NULL},
	{"Total Time", "total_time", TCOL_TIME, NULL, 25, NULL},
	{"Ratio (%)", "ratio", TCOL_PERCENT, NULL, 25, NULL},
};

static void dist_row(struct table *t, struct tpart *p, const struct analysis *a, const char *name,
		     unsigned depth, uint64_t ns)
{
	struct trow *r = tpart_add_row(t, p, depth);
	trow_text(r, 0, name);
	trow_time(r, 1, (double)ns);
	trow_percent(r, 2, analysis_ratio(a, ns));
}

struct table *view_distributed(const struct view *v, const struct analysis *a,
			       const struct view_opts *o)
{
	(void)o;
	struct table *t = table_new(v->name, v->title, dist_cols,
				    sizeof(dist_cols) / sizeof(dist_cols[0]));
	if (!a->gpu.has_gpu) {
		table_set_empty(t, "No data: this trace has no GPU work.");
		return t;
	}
	analysis_types(a);
	uint64_t comm = a->comm.merged_ns, comp = a->comp.merged_ns;
	uint64_t both = comm + comp > a->busy_ns ? comm + comp - a->busy_ns : 0;
	struct tpart *p = table_add_part(t, NULL, NULL, NULL);
	dist_row(t, p, a, a->from_steps ? "ProfileStep" : "Whole run", 0, a->window_ns);
	dist_row(t, p, a, "Communication", 1, comm);
	dist_row(t, p, a, "Computation", 1, comp);
	dist_row(t, p, a, "Overlap", 1, both);
	table_note(t, "Communication: the time NCCL/RCCL work, Communication events and the GPU work "
		      "of communication operators ran, merged.");
	table_note(t, "Computation: the time the other kernels ran, merged. Overlap: the time both "
		      "ran at once.");
	table_note(t, "Computation + Communication - Overlap = the time at least one kernel or "
		      "communication ran. Ratio (%%) is against %s.",
		   a->from_steps ? "the ProfileStep ranges" : "the whole run");
	return t;
}
