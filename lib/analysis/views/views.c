/*
 * views.c - the registry of views and what their tables share.
 */
#include "lib/analysis/views/view.h"

#include "common/error.h"

#include <stdio.h>
#include <string.h>

const struct view view_registry[] = {
	{"perf", "Perf Summary", view_perf, VIEW_DEFAULT_WITH_STEPS},
	{"device", "Device Summary", view_device, 1, 1},
	{"overview", "Overview Summary", view_overview, 1, 1},
	{"model", "Model Summary", view_model, 1, 1, 0, view_model_walk, view_model_end},
	{"distributed", "Distributed Summary", view_distributed, 1, 1, 1},
	{"operator", "Operator Summary", view_operator, 1, 0, 0, view_operator_walk,
	 view_operator_end},
	{"kernel", "Kernel Summary", view_kernel, 1, 0, 1},
	{"memory-manipulation", "Memory Manipulation Summary", view_memcpy, 1, 0, 1},
	{"userdefined", "UserDefined Summary", view_userdefined, 1, 0, 0, view_userdefined_walk,
	 view_userdefined_end},
	{"memory", "Memory Summary", view_memory, 1, 0, 0, view_memory_walk, view_memory_end},
	{"nvprof", "nvprof Summary", view_nvprof, 1, 0, 1},
	/* series over the run, for `gprof-dl report` to plot: --view only */
	{"steps", "Step Summary", view_steps, VIEW_NOT_DEFAULT},
	{"timeline", "Timeline Summary", view_timeline, VIEW_NOT_DEFAULT},
	/* gprof-dl advise's findings: --view only */
	{"advice", "Advice Summary", view_advice, VIEW_NOT_DEFAULT},
};
const unsigned view_phases[VIEW_NPHASES] = {TRACE_EV_DATALOADER, TRACE_EV_FORWARD,
					    TRACE_EV_BACKWARD, TRACE_EV_OPTIMIZATION};

const unsigned view_registry_count = sizeof(view_registry) / sizeof(view_registry[0]);

struct table *view_build_walked(const struct view *v, const struct analysis *a,
				const struct view_opts *o)
{
	struct hw_request req = {0};
	void *state = v->walk_begin(v, a, o, &req);
	if (state)
		hostwalk_run(a, req.tracks, req.ntracks, req.v, req.ctx);
	return v->walk_end(v, a, o, state);
}

const struct view *view_find(const char *name)
{
	for (unsigned i = 0; i < view_registry_count; i++)
		if (strcmp(view_registry[i].name, name) == 0)
			return &view_registry[i];
	return NULL;
}

const char *const sort_key_names[SORT_KEY_COUNT] = {
	[SORT_CPU_TOTAL] = "cpu-total", [SORT_CPU_AVG] = "cpu-avg", [SORT_CPU_MAX] = "cpu-max",
	[SORT_CPU_MIN] = "cpu-min",     [SORT_GPU_TOTAL] = "gpu-total", [SORT_GPU_AVG] = "gpu-avg",
	[SORT_GPU_MAX] = "gpu-max",     [SORT_GPU_MIN] = "gpu-min",     [SORT_SELF] = "self",
	[SORT_DURATION] = "duration",   [SORT_DATALOADER] = "dataloader",
	[SORT_FORWARD] = "forward",     [SORT_BACKWARD] = "backward",
	[SORT_OPTIMIZATION] = "optimization", [SORT_OTHERS] = "others",
};

int sort_key_parse(const char *s, enum sort_key *k)
{
	for (unsigned i = 0; i < SORT_KEY_COUNT; i++) {
		if (strcmp(s, sort_key_names[i]) == 0) {
			*k = (enum sort_key)i;
			return 0;
		}
	}
	return -1;
}

void view_put_stats(struct trow *r, unsigned col, const struct time_stats *s, double ratio)
{
	if (s->calls == 0)
		return;
	trow_time(r, col, (double)s->total);
	trow_time(r, col + 1, (double)s->total / (double)s->calls);
	trow_time(r, col + 2, (double)s->max);
	trow_time(r, col + 3, (double)s->min);
	trow_percent(r, col + 4, ratio);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* a before b when a's value is larger: avg compared as total_a * calls_b. */
static int stats_cmp(unsigned what, const struct time_stats *a, const struct time_stats *b)
{
	switch (what) {
	case 0:
		return -cmp_u64(a->total, b->total);
	case 1: {
		/* avg without division: total_a / calls_a vs total_b / calls_b */
		long double x = a->calls ? (long double)a->total / a->calls : 0;
		long double y = b->calls ? (long double)b->total / b->calls : 0;
		return (x < y) - (x > y);
	}
	case 2:
		return -cmp_u64(a->max, b->max);
	default:
		/* rows with no timed call sort after those with one */
		if (!a->calls || !b->calls)
			return (!a->calls) - (!b->calls);
		return cmp_u64(a->min, b->min);
	}
}

int view_stats_cmp(enum sort_key key, const struct time_stats *cpu_a,
		   const struct time_stats *cpu_b, const struct time_stats *gpu_a,
		   const struct time_stats *gpu_b)
{
	static const struct time_stats none;
	int c;
	if (key > SORT_SELF) /* the Step Summary's keys */
		key = SORT_CPU_TOTAL;
	if (key == SORT_SELF) {
		c = -cmp_u64(cpu_a->self, cpu_b->self);
		return c ? c : stats_cmp(0, cpu_a, cpu_b);
	}
	if (key >= SORT_GPU_TOTAL) {
		c = stats_cmp(key - SORT_GPU_TOTAL, gpu_a ? gpu_a : &none, gpu_b ? gpu_b : &none);
		if (c)
			return c;
		key = SORT_CPU_TOTAL; /* no GPU time yet: CPU total decides */
	}
	/* a tie on a CPU key is the caller's to break, by name (rt_cmp) */
	return stats_cmp(key - SORT_CPU_TOTAL, cpu_a, cpu_b);
}

const char *view_time(char *buf, size_t size, uint64_t ns, enum time_unit unit)
{
	snprintf(buf, size, "%.2f %s", (double)ns / time_unit_ns(unit), time_unit_name(unit));
	return buf;
}

void view_device_name(char *buf, size_t size, const struct analysis *a, uint32_t dev)
{
	const struct store *s = &a->store;
	const struct store_device *d = &s->devices[dev];
	int hosts = 0;
	for (uint32_t i = 0; i < s->ndevices; i++)
		if (s->devices[i].host != d->host)
			hosts = 1;
	if (hosts)
		snprintf(buf, size, "GPU%u (%s)", d->id, store_name(s, d->host));
	else
		snprintf(buf, size, "GPU%u", d->id);
}

static void stream_title(char *buf, size_t size, const struct analysis *a,
			 const struct store_track *t)
{
	char dev[256] = "GPU";
	const char *name = store_name(&a->store, t->name);
	if (t->dev != STORE_NONE)
		view_device_name(dev, sizeof(dev), a, t->dev);
	if (*name)
		snprintf(buf, size, "Stream: %s stream %llu (%s)", dev, (unsigned long long)t->stream,
			 name);
	else
		snprintf(buf, size, "Stream: %s stream %llu", dev, (unsigned long long)t->stream);
}

void view_thread_title(char *buf, size_t size, const struct analysis *a,
		       const struct store_track *t)
{
	if (t->kind == STORE_TRACK_DEVICE) {
		stream_title(buf, size, a, t);
		return;
	}
	const char *name = store_name(&a->store, t->name);
	int several = 0;
	for (uint32_t i = 0; i < a->store.ntracks; i++)
		if (a->store.tracks[i].pid != t->pid)
			several = 1;
	char id[64];
	if (several)
		snprintf(id, sizeof(id), "%u/%u", t->pid, t->tid);
	else
		snprintf(id, sizeof(id), "%u", t->tid);
	if (*name)
		snprintf(buf, size, "Thread: %s (%s)", id, name);
	else
		snprintf(buf, size, "Thread: %s", id);
}

struct tpart *view_thread_part(struct table *t, const struct analysis *a,
			       const struct store_track *track)
{
	if (!track)
		return table_add_part(t, "Thread: All threads merged", NULL, NULL);
	char title[512];
	view_thread_title(title, sizeof(title), a, track);
	struct tpart *p = table_add_part(t, title, NULL, NULL);
	p->has_thread = 1;
	p->pid = track->pid;
	p->tid = track->tid;
	p->thread_name = xstrdup(store_name(&a->store, track->name));
	return p;
}

int view_span(const struct analysis *a, uint64_t *t0, uint64_t *t1)
{
	const struct store *s = &a->store;
	int any = 0;
	*t0 = *t1 = 0;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (!t->n)
			continue;
		/* sorted by start: the first starts first; a range may end last */
		if (!any || t->start[0] < *t0)
			*t0 = t->start[0];
		for (size_t i = 0; i < t->n; i++)
			if (store_ev_end(t, i) > *t1)
				*t1 = store_ev_end(t, i);
		any = 1;
	}
	return any;
}

double view_share(uint64_t part, uint64_t whole)
{
	if (!whole)
		return 0.0;
	double r = 100.0 * (double)part / (double)whole;
	return r > 100.0 ? 100.0 : r;
}

void view_note_gpu_totals(struct table *t, const struct analysis *a, enum time_unit unit)
{
	char in_full[64], outside[64];
	if (a->gpu_window || !a->gpu.counted_outside_ns)
		return;
	table_note(t, "Two GPU totals: the Kernel, Memory Manipulation and nvprof tables and the GPU "
		      "columns count the GPU work launched in the window, each piece in full (%s in "
		      "all); the Overview, Device and Distributed views clip it to the window and "
		      "merge it across streams. %s of the work launched in the window ran outside it; "
		      "--window gpu measures every table against the GPU's own span instead.",
		   view_time(in_full, sizeof(in_full), a->gpu.counted_ns, unit),
		   view_time(outside, sizeof(outside), a->gpu.counted_outside_ns, unit));
}

double view_gpu_ratio(const struct analysis *a, uint64_t ns)
{
	return view_share(ns, a->gpu.counted_ns);
}

const char *view_type_name(unsigned type)
{
	if (type == TRACE_EV_MEMORY)
		return "Memory";
	const char *n = trace_event_type_name(type);
	return n ? n : "?";
}
