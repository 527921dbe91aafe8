/*
 * view_device.c - the Device Summary: CPU utilisation of the profiled
 * processes and of the system, averaged over the window, and each GPU's
 * utilisation: the time its kernels and communication ran, merged across its
 * streams and clipped to the window, / the window.
 *
 * A counter sample holds the utilisation since the sample before it, so a
 * series is a step function: sample k covers (t[k-1], t[k]], the first one
 * from its file's start. The average is its integral over the window divided
 * by the part of the window the samples cover; a window no sample period
 * reaches falls back to the mean of the samples. Series of several
 * processes add up (CPU(Process) counts cores); series of several hosts
 * average (CPU(System) is a share of each host).
 */
#include "lib/analysis/views/view.h"

#include "common/error.h"

#include <stdlib.h>

static const struct tcol device_cols[] = {
	{"Device", "device", TCOL_TEXT, NULL, 30, NULL},
	{"Utilization (%)", "utilization", TCOL_PERCENT, NULL, 20, NULL},
};

/* The average of one series (sorted by time) over the window. */
static double series_average(const struct analysis *a, const struct store_counter *c, size_t n)
{
	const struct ivl_set *w = &a->window;
	uint64_t prev = a->store.files[c[0].file].start_ns;
	double integral = 0.0, mean = 0.0;
	uint64_t covered = 0;
	for (size_t k = 0; k < n; k++) {
		uint64_t from = k ? c[k - 1].ts_ns : (prev < c[0].ts_ns ? prev : c[0].ts_ns);
		uint64_t part = ivl_set_overlap(w, from, c[k].ts_ns);
		integral += c[k].value * (double)part;
		covered += part;
		mean += c[k].value;
	}
	return covered ? integral / (double)covered : mean / (double)n;
}

/* Averages of every series of counter id: their sum, or their mean. */
static int counter_average(const struct analysis *a, unsigned id, int sum, double *out,
			   size_t *samples)
{
	const struct store *s = &a->store;
	struct store_counter *c = xmalloc((s->ncounters ? s->ncounters : 1) * sizeof(*c));
	size_t n = 0;
	for (size_t i = 0; i < s->ncounters; i++)
		if (s->counters[i].id == id)
			c[n++] = s->counters[i];
	qsort(c, n, sizeof(*c), store_counter_cmp);
	double total = 0.0;
	unsigned series = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && c[j].file == c[i].file && c[j].pid == c[i].pid)
			j++;
		total += series_average(a, c + i, j - i);
		series++;
		i = j;
	}
	free(c);
	*samples += n;
	if (!series)
		return 0;
	*out = sum ? total : total / series;
	return 1;
}

struct table *view_device(const struct view *v, const struct analysis *a, const struct view_opts *o)
{
	struct table *t = table_new(v->name, v->title, device_cols,
				    sizeof(device_cols) / sizeof(device_cols[0]));
	struct tpart *p = table_add_part(t, NULL, NULL, NULL);
	size_t samples = 0;
	double value;
	struct trow *r = tpart_add_row(t, p, 0);
	trow_text(r, 0, "CPU(Process)");
	if (counter_average(a, TRACE_CTR_CPU_PROCESS, 1, &value, &samples))
		trow_percent(r, 1, value);
	r = tpart_add_row(t, p, 0);
	trow_text(r, 0, "CPU(System)");
	if (counter_average(a, TRACE_CTR_CPU_SYSTEM, 0, &value, &samples))
		trow_percent(r, 1, value);
	analysis_types(a);
	for (uint32_t d = 0; d < a->store.ndevices; d++) {
		char name[300];
		view_device_name(name, sizeof(name), a, d);
		r = tpart_add_row(t, p, 0);
		trow_text(r, 0, name);
		trow_percent(r, 1, analysis_ratio(a, a->device_busy_ns[d]));
	}
	table_note(t, "CPU(Process) Utilization = Current process CPU time over all cpu cores / "
		      "elapsed time, so max utilization can be reached 100%% * number of cpu cores.");
	table_note(t, "CPU(System) Utilization = All processes CPU time over all cpu cores(busy "
		      "time) / (busy time + idle time).");
	if (samples)
		table_note(t, "Both are averaged over the window (%s) from %zu samples; a sample "
			      "covers the time since the one before it.",
			   analysis_window_name(a), samples);
	else
		table_note(t, "This trace has no CPU utilisation samples (\"-\").");
	if (a->store.ndevices)
		table_note(t, "GPU Utilization = Current process GPU time / elapsed time: the time at "
			      "least one kernel or communication of the process ran on the GPU, merged "
			      "across streams, / the window.");
	view_note_gpu_totals(t, a, o->unit);
	return t;
}
