#include "lib/analysis/store/analysis.h"

#include "lib/analysis/store/progress.h"
#include "lib/analysis/store/store_iter.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

void analysis_init(struct analysis *a)
{
	memset(a, 0, sizeof(*a));
	store_init(&a->store);
	ivl_set_init(&a->window);
	pthread_mutex_init(&a->types_lock, NULL);
}

void analysis_free(struct analysis *a)
{
	gpu_free(&a->gpu, a->store.ntracks);
	free(a->device_busy_ns);
	store_free(&a->store);
	ivl_set_free(&a->window);
	pthread_mutex_destroy(&a->types_lock);
	memset(a, 0, sizeof(*a));
}

int analysis_load(struct analysis *a, const char *path, char *err, size_t errlen)
{
	if (a->prepared)
		BUG("analysis_load after analysis_prepare");
	return store_load(&a->store, path, err, errlen);
}

/* The window: all ProfileStep ranges of host threads merged (a GPU stream's
 * copy of a step, as the PyTorch profiler annotates streams, is not one), or
 * each file's whole run. */
static void analysis_window(struct analysis *a)
{
	const struct store *s = &a->store;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST)
			continue;
		for (size_t i = 0; i < t->n; i++) {
			if (store_ev_type(s, t, i) != TRACE_EV_PROFILE_STEP || store_ev_is_instant(t, i))
				continue;
			ivl_set_add(&a->window, t->start[i], store_ev_end(t, i));
			a->steps++;
		}
	}
	ivl_set_normalize(&a->window); /* steps of several tracks come in any order */
	a->from_steps = a->steps > 0;
	if (!a->from_steps) {
		for (uint32_t f = 0; f < s->nfiles; f++)
			if (s->files[f].end_ns > s->files[f].start_ns)
				ivl_set_add(&a->window, s->files[f].start_ns, s->files[f].end_ns);
		ivl_set_normalize(&a->window);
	}
	ivl_set_seal(&a->window);
	a->window_ns = ivl_set_measure(&a->window);
}

int analysis_clip(const struct analysis *a, const struct store_track *t, size_t i,
		  uint64_t *clipped)
{
	uint64_t start = t->start[i], dur = t->dur[i];
	if (dur == 0) {
		*clipped = 0;
		return ivl_set_contains(&a->window, start);
	}
	*clipped = ivl_set_overlap(&a->window, start, start + dur);
	return *clipped > 0;
}

void analysis_walk_init(struct analysis_walk *w, const struct analysis *a)
{
	w->s = &a->store;
	store_iter_init(&w->it, &a->store, NULL, 0);
	ivl_cursor_init(&w->at, &a->window);
}

int analysis_walk_next(struct analysis_walk *w, uint32_t *track, size_t *i, uint64_t *clipped)
{
	while (store_iter_next(&w->it, track, i))
		if (analysis_clip_next(&w->at, &w->s->tracks[*track], *i, clipped))
			return 1;
	return 0;
}

void analysis_walk_free(struct analysis_walk *w)
{
	store_iter_free(&w->it);
}

double analysis_ratio(const struct analysis *a, uint64_t ns)
{
	if (a->window_ns == 0)
		return 0.0;
	double r = 100.0 * (double)ns / (double)a->window_ns;
	return r > 100.0 ? 100.0 : r;
}

struct unions {
	struct ivl_union type[TRACE_EV_TYPE_COUNT];
	struct ivl_union comm, comp, busy, host_comm;
	struct ivl_union *device;
};

/* GPU work: its type's union, and the derived ones. */
static void unite_gpu_work(struct analysis *a, struct unions *u, const struct store_track *t,
			   uint32_t ti, size_t i)
{
	unsigned type = store_ev_type(&a->store, t, i);
	uint64_t start = t->start[i], end = store_ev_end(t, i);
	a->types[type].calls++;
	ivl_union_add(&u->type[type], start, end);
	int comm = (a->gpu.tracks[ti].flags[i] & GPU_COMM) != 0;
	if (comm) {
		a->comm.calls++;
		ivl_union_add(&u->comm, start, end);
	} else if (type == TRACE_EV_KERNEL) {
		a->comp.calls++;
		ivl_union_add(&u->comp, start, end);
	}
	if (analysis_gpu_busy(a, ti, i, type)) {
		ivl_union_add(&u->busy, start, end);
		if (t->dev != STORE_NONE)
			ivl_union_add(&u->device[t->dev], start, end);
	}
}

/* Every type's ranges united across all tracks in one merged pass: the union
 * of intervals of one type that overlap on several threads or streams
 * (Paddle's Overview note) counts each nanosecond once. */
static void analysis_unite_types(struct analysis *a)
{
	const struct store *s = &a->store;
	struct unions u;
	for (unsigned k = 0; k < TRACE_EV_TYPE_COUNT; k++)
		ivl_union_init(&u.type[k], &a->window);
	ivl_union_init(&u.comm, &a->window);
	ivl_union_init(&u.comp, &a->window);
	ivl_union_init(&u.busy, &a->window);
	ivl_union_init(&u.host_comm, &a->window);
	u.device = xmalloc((s->ndevices ? s->ndevices : 1) * sizeof(*u.device));
	for (uint32_t d = 0; d < s->ndevices; d++)
		ivl_union_init(&u.device[d], &a->window);
	struct analysis_walk w;
	uint32_t ti;
	size_t i;
	uint64_t clipped;
	analysis_walk_init(&w, a);
	while (analysis_walk_next(&w, &ti, &i, &clipped)) {
		const struct store_track *t = &s->tracks[ti];
		unsigned type = store_ev_type(s, t, i);
		if (store_ev_flags(t, i) & TRACE_EVF_UNBALANCED_POP)
			continue;
		/* trace_event_type_is_device(), inlined in the loop over every event */
		int device_type = type >= TRACE_EV_KERNEL && type <= TRACE_EV_COMMUNICATION;
		if (t->kind == STORE_TRACK_HOST && !store_ev_is_instant(t, i) &&
		    (a->gpu.roles[store_ev_desc(t, i)] & ROLE_COMM_OP)) {
			a->host_comm.calls++; /* host communication: see analysis.h */
			ivl_union_add(&u.host_comm, t->start[i], store_ev_end(t, i));
		}
		if ((t->kind == STORE_TRACK_DEVICE) != device_type)
			continue; /* see analysis.h: counted where the type belongs */
		if (store_ev_flags(t, i) & TRACE_EVF_MARK) {
			a->types[type].marks++;
			continue;
		}
		if (t->kind == STORE_TRACK_DEVICE) {
			unite_gpu_work(a, &u, t, ti, i);
			continue;
		}
		a->types[type].calls += !store_ev_folded(t, i); /* its parent is the call */
		ivl_union_add(&u.type[type], t->start[i], store_ev_end(t, i));
	}
	analysis_walk_free(&w);
	for (unsigned k = 0; k < TRACE_EV_TYPE_COUNT; k++)
		a->types[k].merged_ns = ivl_union_measure(&u.type[k]);
	a->comm.merged_ns = ivl_union_measure(&u.comm);
	a->comp.merged_ns = ivl_union_measure(&u.comp);
	a->busy_ns = ivl_union_measure(&u.busy);
	a->host_comm.merged_ns = ivl_union_measure(&u.host_comm);
	a->device_busy_ns = xcalloc(s->ndevices ? s->ndevices : 1, sizeof(*a->device_busy_ns));
	for (uint32_t d = 0; d < s->ndevices; d++)
		a->device_busy_ns[d] = ivl_union_measure(&u.device[d]);
	free(u.device);
}

void analysis_prepare(struct analysis *a)
{
	if (a->prepared)
		return;
	progress_phase("sorting and nesting the events");
	store_finish(&a->store);
	for (uint32_t f = 0; f < a->store.nfiles; f++) {
		const struct store_file *file = &a->store.files[f];
		a->events += file->events;
		a->marks += file->marks;
		a->open_at_exit += file->open_at_exit;
		a->unbalanced_pops += file->unbalanced_pops;
		a->dropped += file->dropped;
		a->damaged += file->damage != NULL;
	}
	analysis_window(a);
	progress_phase("tying GPU work to the calls that launched it");
	gpu_prepare(a);
	a->prepared = 1;
}

const struct type_total *analysis_types(const struct analysis *ca)
{
	struct analysis *a = (struct analysis *)ca; /* a cache: the analysis stays as it was */
	if (!a->prepared)
		BUG("analysis_types before analysis_prepare");
	pthread_mutex_lock(&a->types_lock);
	if (!a->types_done) {
		analysis_unite_types(a);
		a->types_done = 1;
	}
	pthread_mutex_unlock(&a->types_lock);
	return a->types;
}
