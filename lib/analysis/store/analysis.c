/* analysis.c - an analysis's life: its store loaded, window and per-type unions computed once. */
#include "lib/analysis/store/analysis.h"

#include "common/progress.h"
#include "lib/analysis/store/store_iter.h"
#include "common/error.h"
#include "common/hmap.h"

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
	for (uint32_t k = 0; k < a->nparts; k++)
		ivl_set_free(&a->part_window[k]);
	free(a->part_window);
	free(a->track_part);
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

/* The rank of process pid of file f: its own, else its nearest ancestor's
 * in the file's process table (a DataLoader worker is its rank's); -1 none.
 * procs maps (file, pid) to the index of the pid's latest image (the last to start) + 1. */
static int32_t process_rank(const struct store *s, const struct hmap *procs, uint32_t f,
			    uint32_t pid)
{
	for (unsigned depth = 0; depth < 64 && pid; depth++) {
		const uint64_t *i = hmap_get(procs, f, pid);
		if (!i)
			return -1;
		const struct store_process *p = &s->procs[*i - 1];
		if (p->rank >= 0)
			return p->rank;
		if (p->ppid == pid)
			return -1;
		pid = p->ppid;
	}
	return -1;
}

/* --window gpu: each part's window is its GPU's span, from the start of its
 * first GPU work to the end of its last (the span Holistic Trace Analysis
 * measures a rank's GPU time against). */
static void gpu_spans(struct analysis *a)
{
	const struct store *s = &a->store;
	uint64_t *lo = xmalloc((a->nparts ? a->nparts : 1) * sizeof(*lo));
	uint64_t *hi = xcalloc(a->nparts ? a->nparts : 1, sizeof(*hi));
	for (uint32_t p = 0; p < a->nparts; p++)
		lo[p] = UINT64_MAX;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		uint32_t p = a->track_part[ti];
		for (size_t i = 0; t->kind == STORE_TRACK_DEVICE && i < t->n; i++) {
			if (!store_ev_is_gpu_work(s, t, i) || store_ev_is_instant(t, i))
				continue;
			if (t->start[i] < lo[p])
				lo[p] = t->start[i];
			if (store_ev_end(t, i) > hi[p])
				hi[p] = store_ev_end(t, i);
		}
	}
	for (uint32_t p = 0; p < a->nparts; p++)
		if (hi[p] > lo[p])
			ivl_set_add(&a->part_window[p], lo[p], hi[p]);
	free(lo);
	free(hi);
}

/* Each track's part (analysis.h): (file, rank), numbered in order of first
 * appearance; and each part's window, from its steps, its GPU's span or its
 * file's run. */
static void analysis_parts(struct analysis *a)
{
	const struct store *s = &a->store;
	size_t n = s->ntracks ? s->ntracks : 1;
	a->track_part = xcalloc(n, sizeof(*a->track_part));
	uint32_t *part_file = xmalloc(n * sizeof(*part_file));
	struct hmap procs, by_pid, by_rank; /* (file, pid) -> proc + 1, part; (file, rank) -> part */
	hmap_init(&procs);
	hmap_init(&by_pid);
	hmap_init(&by_rank);
	for (uint32_t i = 0; i < s->nprocs; i++) { /* a pid's latest image: the last to start */
		const uint64_t *l = hmap_get(&procs, s->procs[i].file, s->procs[i].pid);
		if (!l || s->procs[i].start_ns >= s->procs[*l - 1].start_ns)
			hmap_put(&procs, s->procs[i].file, s->procs[i].pid, (uint64_t)i + 1);
	}
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		const uint64_t *known = hmap_get(&by_pid, t->file, t->pid);
		if (known) {
			a->track_part[ti] = (uint32_t)*known;
			continue;
		}
		int32_t rank = s->files[t->file].rank;
		if (rank < 0)
			rank = process_rank(s, &procs, t->file, t->pid);
		const uint64_t *p = hmap_get(&by_rank, t->file, (uint64_t)(int64_t)rank);
		uint32_t part = p ? (uint32_t)*p : a->nparts;
		if (!p) {
			part_file[a->nparts++] = t->file;
			hmap_put(&by_rank, t->file, (uint64_t)(int64_t)rank, part);
		}
		hmap_put(&by_pid, t->file, t->pid, part);
		a->track_part[ti] = part;
	}
	hmap_free(&procs);
	hmap_free(&by_pid);
	hmap_free(&by_rank);
	a->part_window = xcalloc(a->nparts ? a->nparts : 1, sizeof(*a->part_window));
	for (uint32_t p = 0; p < a->nparts; p++)
		ivl_set_init(&a->part_window[p]);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST || !a->from_steps)
			continue;
		for (size_t k = 0; k < t->nsteps; k++)
			ivl_set_add(&a->part_window[a->track_part[ti]], t->start[t->steps[k]],
				    store_ev_end(t, t->steps[k]));
	}
	if (a->gpu_window)
		gpu_spans(a);
	for (uint32_t p = 0; p < a->nparts; p++) {
		struct ivl_set *w = &a->part_window[p];
		const struct store_file *f = &s->files[part_file[p]];
		if (!a->from_steps && !a->gpu_window && f->end_ns > f->start_ns)
			ivl_set_add(w, f->start_ns, f->end_ns);
		ivl_set_normalize(w);
		ivl_set_seal(w);
		a->parts_window_ns += ivl_set_measure(w);
		a->nparts_windowed += ivl_set_measure(w) > 0;
	}
	free(part_file);
}

static int has_gpu_work(const struct store *s)
{
	for (uint32_t ti = 0; ti < s->ntracks; ti++)
		for (size_t i = 0; s->tracks[ti].kind == STORE_TRACK_DEVICE && i < s->tracks[ti].n; i++)
			if (store_ev_is_gpu_work(s, &s->tracks[ti], i) &&
			    !store_ev_is_instant(&s->tracks[ti], i))
				return 1;
	return 0;
}

const char *analysis_window_name(const struct analysis *a)
{
	if (a->gpu_window)
		return "the GPU's span (from its first GPU work to its last, --window gpu)";
	return a->from_steps ? "the ProfileStep ranges" : "the whole run";
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
		for (size_t k = 0; k < t->nsteps; k++) /* found by store_finish() */
			ivl_set_add(&a->window, t->start[t->steps[k]], store_ev_end(t, t->steps[k]));
		a->steps += t->nsteps;
	}
	ivl_set_normalize(&a->window); /* steps of several tracks come in any order */
	a->from_steps = a->steps > 0;
	a->gpu_window = a->want_gpu_window && has_gpu_work(s);
	if (a->gpu_window) { /* the union of the parts' spans */
		a->from_steps = 0;
		ivl_set_free(&a->window);
		ivl_set_init(&a->window);
		analysis_parts(a);
		for (uint32_t p = 0; p < a->nparts; p++)
			for (size_t k = 0; k < a->part_window[p].n; k++)
				ivl_set_add(&a->window, a->part_window[p].v[k].start,
					    a->part_window[p].v[k].end);
		ivl_set_normalize(&a->window);
		ivl_set_seal(&a->window);
		a->window_ns = ivl_set_measure(&a->window);
		return;
	}
	if (!a->from_steps) {
		for (uint32_t f = 0; f < s->nfiles; f++)
			if (s->files[f].end_ns > s->files[f].start_ns)
				ivl_set_add(&a->window, s->files[f].start_ns, s->files[f].end_ns);
		ivl_set_normalize(&a->window);
	}
	ivl_set_seal(&a->window);
	a->window_ns = ivl_set_measure(&a->window);
	analysis_parts(a);
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

int analysis_walk_next(struct analysis_walk *w)
{
	while (store_iter_next(&w->it, &w->ti, &w->i)) {
		w->t = &w->s->tracks[w->ti];
		if (analysis_clip_next(&w->at, w->t, w->i, &w->clipped)) {
			w->type = store_ev_type(w->s, w->t, w->i);
			return 1;
		}
	}
	return 0;
}

void analysis_walk_free(struct analysis_walk *w)
{
	store_iter_free(&w->it);
}

int analysis_gpu_next(struct analysis_gpu_walk *w)
{
	const struct store *s = &w->a->store;
	for (;;) {
		if (w->t && ++w->i < w->t->n) {
			uint8_t f = w->a->gpu.tracks[w->ti].flags[w->i];
			if (!(f & GPU_COUNTED))
				continue;
			w->flags = f;
			w->type = store_ev_type(s, w->t, w->i);
			return 1;
		}
		do { /* the next GPU stream (ti starts at UINT32_MAX: 0 first) */
			if (++w->ti >= s->ntracks)
				return 0;
		} while (s->tracks[w->ti].kind != STORE_TRACK_DEVICE);
		w->t = &s->tracks[w->ti];
		w->i = (size_t)-1;
		w->xc = (struct store_extra_cursor){0};
	}
}

double analysis_ratio(const struct analysis *a, uint64_t ns)
{
	if (a->window_ns == 0)
		return 0.0;
	double r = 100.0 * (double)ns / (double)a->window_ns;
	return r > 100.0 ? 100.0 : r;
}

double analysis_part_ratio(const struct analysis *a, uint64_t ns)
{
	if (a->parts_window_ns == 0)
		return 0.0;
	double r = 100.0 * (double)ns / (double)a->parts_window_ns;
	return r > 100.0 ? 100.0 : r;
}

/* The training phases (analysis.h: phases_part_ns), as 1u << type. */
#define PHASE_TYPES                                                                         \
	(1u << TRACE_EV_DATALOADER | 1u << TRACE_EV_FORWARD | 1u << TRACE_EV_BACKWARD |     \
	 1u << TRACE_EV_OPTIMIZATION)

/* A part's unions (analysis.h), each clipped to the part's window. */
struct part_unions {
	struct ivl_union type[TRACE_EV_TYPE_COUNT];
	struct ivl_union comm, host_comm, phases, kernels;
};

struct unions {
	struct ivl_union type[TRACE_EV_TYPE_COUNT];
	struct ivl_union comm, comp, busy, host_comm, kernels;
	struct ivl_union *device;
	struct part_unions *part; /* by part */
};

/* GPU work: its type's union, and the derived ones (the part's too unless
 * they are the whole's: one part, windowed as the whole). */
static void unite_gpu_work(struct analysis *a, struct unions *u, const struct store_track *t,
			   uint32_t ti, size_t i, int one_part)
{
	unsigned type = store_ev_type(&a->store, t, i);
	uint64_t start = t->start[i], end = store_ev_end(t, i);
	struct part_unions *pu = &u->part[a->track_part[ti]];
	a->types[type].calls++;
	ivl_union_add(&u->type[type], start, end);
	if (!one_part)
		ivl_union_add(&pu->type[type], start, end);
	int comm = (a->gpu.tracks[ti].flags[i] & GPU_COMM) != 0;
	if (comm) {
		a->comm.calls++;
		ivl_union_add(&u->comm, start, end);
		if (!one_part)
			ivl_union_add(&pu->comm, start, end);
	} else if (type == TRACE_EV_KERNEL) {
		a->comp.calls++;
		ivl_union_add(&u->comp, start, end);
	}
	if (type == TRACE_EV_KERNEL || type == TRACE_EV_COMMUNICATION) {
		a->kernels.calls++;
		ivl_union_add(&u->kernels, start, end);
		if (!one_part)
			ivl_union_add(&pu->kernels, start, end);
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
	ivl_union_init(&u.kernels, &a->window);
	u.device = xmalloc((s->ndevices ? s->ndevices : 1) * sizeof(*u.device));
	for (uint32_t d = 0; d < s->ndevices; d++)
		ivl_union_init(&u.device[d], &a->window);
	u.part = xmalloc((a->nparts ? a->nparts : 1) * sizeof(*u.part));
	for (uint32_t p = 0; p < a->nparts; p++) {
		struct part_unions *pu = &u.part[p];
		for (unsigned k = 0; k < TRACE_EV_TYPE_COUNT; k++)
			ivl_union_init(&pu->type[k], &a->part_window[p]);
		ivl_union_init(&pu->comm, &a->part_window[p]);
		ivl_union_init(&pu->host_comm, &a->part_window[p]);
		ivl_union_init(&pu->phases, &a->part_window[p]);
		ivl_union_init(&pu->kernels, &a->part_window[p]);
	}
	/* One part whose window is the whole's (a single trace): its unions
	 * are the whole's, taken once (but for the phases, its own) */
	int one_part = a->nparts == 1 && a->part_window[0].n == a->window.n &&
		       (!a->window.n || memcmp(a->part_window[0].v, a->window.v,
					       a->window.n * sizeof(*a->window.v)) == 0);
	struct analysis_walk w;
	analysis_walk_init(&w, a);
	while (analysis_walk_next(&w)) {
		const struct store_track *t = w.t;
		uint32_t ti = w.ti;
		size_t i = w.i;
		unsigned type = w.type;
		if (store_ev_flags(t, i) & TRACE_EVF_UNBALANCED_POP)
			continue;
		/* trace_event_type_is_device(), inlined in the loop over every event */
		int device_type = type >= TRACE_EV_KERNEL && type <= TRACE_EV_COMMUNICATION;
		if (t->kind == STORE_TRACK_HOST && !store_ev_is_instant(t, i) &&
		    (a->gpu.roles[store_ev_desc(t, i)] & ROLE_COMM_OP)) {
			a->host_comm.calls++; /* host communication: see analysis.h */
			ivl_union_add(&u.host_comm, t->start[i], store_ev_end(t, i));
			if (!one_part)
				ivl_union_add(&u.part[a->track_part[ti]].host_comm, t->start[i],
					      store_ev_end(t, i));
		}
		if ((t->kind == STORE_TRACK_DEVICE) != device_type)
			continue; /* see analysis.h: counted where the type belongs */
		if (store_ev_flags(t, i) & TRACE_EVF_MARK) {
			a->types[type].marks++;
			continue;
		}
		if (t->kind == STORE_TRACK_DEVICE) {
			unite_gpu_work(a, &u, t, ti, i, one_part);
			continue;
		}
		a->types[type].calls += !store_ev_folded(t, i); /* its parent is the call */
		ivl_union_add(&u.type[type], t->start[i], store_ev_end(t, i));
		struct part_unions *pu = &u.part[a->track_part[ti]];
		if (!one_part)
			ivl_union_add(&pu->type[type], t->start[i], store_ev_end(t, i));
		if (PHASE_TYPES >> type & 1)
			ivl_union_add(&pu->phases, t->start[i], store_ev_end(t, i));
	}
	analysis_walk_free(&w);
	for (uint32_t p = 0; p < a->nparts; p++) {
		const struct part_unions *pu = &u.part[p];
		a->phases_part_ns += ivl_union_measure(&pu->phases);
		if (one_part) {
			for (unsigned k = 0; k < TRACE_EV_TYPE_COUNT; k++)
				a->types[k].part_ns += ivl_union_measure(&u.type[k]);
			a->comm.part_ns += ivl_union_measure(&u.comm);
			a->host_comm.part_ns += ivl_union_measure(&u.host_comm);
			a->kernels.part_ns += ivl_union_measure(&u.kernels);
			continue;
		}
		for (unsigned k = 0; k < TRACE_EV_TYPE_COUNT; k++)
			a->types[k].part_ns += ivl_union_measure(&pu->type[k]);
		a->comm.part_ns += ivl_union_measure(&pu->comm);
		a->host_comm.part_ns += ivl_union_measure(&pu->host_comm);
		a->kernels.part_ns += ivl_union_measure(&pu->kernels);
	}
	free(u.part);
	for (unsigned k = 0; k < TRACE_EV_TYPE_COUNT; k++)
		a->types[k].merged_ns = ivl_union_measure(&u.type[k]);
	a->comm.merged_ns = ivl_union_measure(&u.comm);
	a->comp.merged_ns = ivl_union_measure(&u.comp);
	a->busy_ns = ivl_union_measure(&u.busy);
	a->host_comm.merged_ns = ivl_union_measure(&u.host_comm);
	a->kernels.merged_ns = ivl_union_measure(&u.kernels);
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

/* The capture marks and steps of a loaded store: capture.h's, read from
 * the store instead of a trace reader. */
void capture_from_store(struct capture *c, const struct store *s)
{
	for (uint32_t k = 0; k < s->ntracks; k++) {
		const struct store_track *t = &s->tracks[k];
		for (size_t i = 0; i < t->n; i++) {
			unsigned type = store_ev_type(s, t, i);
			unsigned flags = store_ev_flags(t, i);
			if (type != TRACE_EV_PROFILE_STEP && !(flags & TRACE_EVF_MARK))
				continue;
			const char *name = store_name(s, s->descs[store_ev_desc(t, i)].name);
			capture_event(c, name, type, flags, t->start[i], t->dur[i], t->pid, -1);
		}
	}
	capture_finish(c);
}

int capture_restrict(struct analysis *a, uint32_t n, char *err, size_t errlen)
{
	struct capture c;
	uint64_t from, to;
	capture_init(&c);
	capture_from_store(&c, &a->store);
	if (capture_span_of(&c, n, &from, &to) != 0) {
		capture_no_cycle(&c, a->store.nfiles ? a->store.files[0].path : "", n, err, errlen);
		capture_free(&c);
		return -1;
	}
	struct ivl_set span, out;
	ivl_set_init(&span);
	ivl_set_add(&span, from, to > from ? to : from + 1);
	ivl_set_normalize(&span);
	ivl_set_seal(&span);
	ivl_set_intersect(&a->window, &span, &out);
	ivl_set_free(&a->window);
	ivl_set_free(&span);
	a->window = out;
	a->window_ns = ivl_set_measure(&a->window);
	/* the steps the tables speak of: those of the cycle */
	uint64_t steps = 0;
	for (size_t i = 0; i < c.nsteps; i++) {
		uint64_t mid = c.steps[i].start + (c.steps[i].end - c.steps[i].start) / 2;
		steps += mid >= from && mid < to;
	}
	if (a->from_steps)
		a->steps = steps;
	capture_free(&c);
	return 0;
}
