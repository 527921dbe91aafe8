#include "lib/analysis/analysis.h"

#include "lib/analysis/store_iter.h"
#include "lib/common/error.h"

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

/* The window: all ProfileStep ranges merged, or each file's whole run. */
static void analysis_window(struct analysis *a)
{
	const struct store *s = &a->store;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
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

int analysis_clip_next(struct ivl_cursor *c, const struct store_track *t, size_t i,
		       uint64_t *clipped)
{
	uint64_t start = t->start[i], dur = t->dur[i];
	if (dur == 0) {
		*clipped = 0;
		return ivl_cursor_contains(c, start);
	}
	*clipped = ivl_cursor_overlap(c, start, start + dur);
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

/* Every type's ranges united across all tracks in one merged pass: the union
 * of intervals of one type that overlap on several threads (Paddle's
 * Overview note) counts each nanosecond once. */
static void analysis_unite_types(struct analysis *a)
{
	const struct store *s = &a->store;
	struct ivl_union u[TRACE_EV_TYPE_COUNT];
	for (unsigned k = 0; k < TRACE_EV_TYPE_COUNT; k++)
		ivl_union_init(&u[k], &a->window);
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
		if (store_ev_flags(t, i) & TRACE_EVF_MARK) {
			a->types[type].marks++;
			continue;
		}
		a->types[type].calls++;
		ivl_union_add(&u[type], t->start[i], store_ev_end(t, i));
	}
	analysis_walk_free(&w);
	for (unsigned k = 0; k < TRACE_EV_TYPE_COUNT; k++)
		a->types[k].merged_ns = ivl_union_measure(&u[k]);
}

void analysis_prepare(struct analysis *a)
{
	if (a->prepared)
		return;
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
