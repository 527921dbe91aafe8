/*
 * view_overview.c - the Overview Summary: per event type, its calls and its
 * time with the overlaps of its ranges merged across threads (host types)
 * or streams (device types), as a share of the window. The reference row
 * comes first (the ProfileStep ranges, or the whole run), the host types
 * under it by time, then the device half in Paddle's order: Kernel, Memcpy,
 * Memset, Communication.
 *
 * Several ranks (or traces) are measured each in its own window and summed
 * (analysis.h's parts), as the Model view does: one rank's Forward and
 * another's Backward at the same moment count twice, against two windows.
 */
#include "lib/analysis/views/view.h"

#include <stdio.h>
#include <stdlib.h>

static const struct tcol host_cols[] = {
	{"Event Type", "event_type", TCOL_TEXT, NULL, 25, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 25, NULL},
	{"CPU Time", "cpu_time", TCOL_TIME, NULL, 25, NULL},
	{"Ratio (%)", "ratio", TCOL_PERCENT, NULL, 25, NULL},
};

static const struct tcol device_cols[] = {
	{"Event Type", "event_type", TCOL_TEXT, NULL, 25, ""},
	{"Calls", "calls", TCOL_COUNT, NULL, 25, NULL},
	{"GPU Time", "gpu_time", TCOL_TIME, NULL, 25, NULL},
	{"Ratio (%)", "ratio", TCOL_PERCENT, NULL, 25, NULL},
};

struct type_time {
	unsigned type;
	uint64_t ns;
};

/* Longest first; the enum's order among equals. */
static int type_cmp(const void *x, const void *y)
{
	const struct type_time *a = x, *b = y;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return (a->type > b->type) - (a->type < b->type);
}

static void type_row(struct table *t, struct tpart *p, const struct analysis *a,
		     const struct type_total *tt, unsigned type, unsigned depth)
{
	struct trow *r = tpart_add_row(t, p, depth);
	trow_text(r, 0, view_type_name(type));
	trow_count(r, 1, tt->calls);
	trow_time(r, 2, (double)tt->part_ns);
	trow_percent(r, 3, analysis_part_ratio(a, tt->part_ns));
}

static void overview_notes(struct table *t, const struct analysis *a, enum time_unit unit)
{
	table_note(t, "Each event type's ranges are summed after the overlapping ones are merged, "
		      "across all threads:");
	table_note(t, "  Thread 1:  Operator: |_______|      |______|");
	table_note(t, "  Thread 2:  Operator:     |_______|     |_|");
	table_note(t, "  Merged:              |___________|  |______|");
	table_note(t, "so no time counts twice and a ratio never exceeds 100%%. Types overlap each "
		      "other (an Operator contains its OperatorInner), so the ratios do not add up to "
		      "100%%.");
	table_note(t, "Host events are CPU Time, device events GPU Time. Ratio (%%) is against %s, "
		      "and times are clipped to it.",
		   analysis_window_name(a));
	if (a->nparts_windowed > 1)
		table_note(t, "%u ranks (or traces): each merged and clipped in its own window, then "
			      "summed; Ratio (%%) is against the windows summed, as in the Model "
			      "Summary.",
			   a->nparts_windowed);
	if (a->gpu.has_gpu)
		table_note(t, "GPU Time: merged across streams. Kernel: every kernel, the "
			      "communication kernels included, as the Kernel table counts them. "
			      "Communication: the communication kernels (also under Kernel), "
			      "Communication events, and the GPU work of communication operators.");
	table_note(t, "Calls counts the ranges in the window; marks take no time and are counted in "
		      "the Trace Summary.");
	view_note_gpu_totals(t, a, unit);
}

struct table *view_overview(const struct view *v, const struct analysis *a,
			    const struct view_opts *o)
{
	struct table *t = table_new(v->name, v->title, host_cols,
				    sizeof(host_cols) / sizeof(host_cols[0]));
	const struct type_total *types = analysis_types(a);
	struct tpart *host = table_add_part(t, NULL, "host", NULL);
	struct type_time order[TRACE_EV_TYPE_COUNT];
	unsigned n = 0;
	if (a->from_steps) {
		type_row(t, host, a, &types[TRACE_EV_PROFILE_STEP], TRACE_EV_PROFILE_STEP, 0);
	} else {
		struct trow *r = tpart_add_row(t, host, 0);
		trow_text(r, 0, a->gpu_window ? "GPU span" : "Whole run");
		trow_time(r, 2, (double)a->parts_window_ns);
		trow_percent(r, 3, a->parts_window_ns ? 100.0 : 0.0);
	}
	for (unsigned k = 0; k < TRACE_EV_TYPE_COUNT; k++)
		if (k != TRACE_EV_PROFILE_STEP && k != TRACE_EV_MEMORY &&
		    !trace_event_type_is_device(k) && types[k].calls)
			order[n++] = (struct type_time){k, types[k].part_ns};
	qsort(order, n, sizeof(order[0]), type_cmp);
	for (unsigned i = 0; i < n; i++)
		type_row(t, host, a, &types[order[i].type], order[i].type, 1);

	struct tpart *device = NULL;
	for (unsigned k = 0; k < TRACE_EV_TYPE_COUNT; k++) { /* the reference's fixed order */
		/* Communication as Paddle counts it: communication kernels too (gpu.h);
		 * Kernel as the Kernel Summary does: the communication kernels too */
		const struct type_total *tt = k == TRACE_EV_COMMUNICATION ? &a->comm
					      : k == TRACE_EV_KERNEL     ? &a->kernels
									 : &types[k];
		if (!trace_event_type_is_device(k) || !tt->calls)
			continue;
		if (!device)
			device = table_add_part(t, NULL, "device", device_cols);
		type_row(t, device, a, tt, k, 1);
	}
	overview_notes(t, a, o->unit);
	return t;
}
