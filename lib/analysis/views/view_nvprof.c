/*
 * view_nvprof.c - the nvprof view: nvprof's "GPU activities" and "API calls"
 * tables (nvprof.h), as two parts of one table with nvprof's columns:
 * Time(%), Time, Calls, Avg, Min, Max, Name.
 */
#include "lib/analysis/views/nvprof.h"

static const struct tcol nvprof_cols[] = {
	{"Time(%)", "time_pct", TCOL_PERCENT, NULL, 8, NULL},
	{"Time", "time", TCOL_TIME, NULL, 10, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 8, NULL},
	{"Avg", "avg", TCOL_TIME, NULL, 10, NULL},
	{"Min", "min", TCOL_TIME, NULL, 10, NULL},
	{"Max", "max", TCOL_TIME, NULL, 10, NULL},
	{"Name", "name", TCOL_TEXT, NULL, 4, NULL},
};

static void nvprof_part(struct table *t, const char *title, const struct nvprof_table *nv)
{
	if (!nv->n)
		return;
	struct tpart *p = table_add_part(t, title, NULL, NULL);
	for (size_t i = 0; i < nv->n; i++) {
		const struct nvprof_row *row = &nv->rows[i];
		struct trow *r = tpart_add_row(t, p, 0);
		trow_percent(r, 0, nvprof_pct(nv, row));
		trow_time(r, 1, (double)row->t.total);
		trow_count(r, 2, row->t.calls);
		trow_time(r, 3, (double)row->t.total / (double)row->t.calls);
		trow_time(r, 4, (double)row->t.min);
		trow_time(r, 5, (double)row->t.max);
		trow_text(r, 6, names_get(&nv->names, row->name));
	}
}

struct table *view_nvprof(const struct view *v, const struct analysis *a,
			  const struct view_opts *o)
{
	(void)o;
	struct table *t = table_new(v->name, v->title, nvprof_cols,
				    sizeof(nvprof_cols) / sizeof(nvprof_cols[0]));
	struct nvprof_table gpu, api;
	nvprof_gpu_activities(a, &gpu);
	nvprof_api_calls(a, &api);
	nvprof_part(t, "GPU activities", &gpu);
	nvprof_part(t, "API calls", &api);
	nvprof_table_free(&gpu);
	nvprof_table_free(&api);
	table_set_empty(t, "No data: this trace has no GPU work and no CUDA API calls in the window.");
	if (!table_row_count(t))
		return t;
	table_note(t, "GPU activities: the GPU work launched in the window (%s), by name; copies by "
		      "direction, as nvprof named them. Time(%%) = Time / all of it.",
		   analysis_window_name(a));
	table_note(t, "API calls: the CUDA API calls clipped to the window, by name. Time(%%) = Time "
		      "/ all API calls' time.");
	return t;
}
