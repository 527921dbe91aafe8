/*
 * import_phases.c - the Model view's phases of a PyTorch profiler trace,
 * recovered as gprof-dl's Python package records them in its own traces
 * (lib/python/gprof_dl/_torch.py): a "Forward", a "Backward" and an
 * "Optimization#<class>.step" range, of those types, on the thread that ran
 * the step. torch.profiler records none of them, but what they cover is
 * there:
 *
 *   Optimization  each outermost "Optimizer.step#<class>.step" range (torch's
 *                 own record_function in Optimizer.step), same extent;
 *   Backward      per ProfilerStep#N, from the first to the last end of the
 *                 "autograd::engine::evaluate_function: ..." ranges of the
 *                 step's process that start inside it (on its thread, or on
 *                 the autograd engine's device threads), clipped to the step;
 *   Forward       per step, the step thread's operators and annotations
 *                 that end before the backward begins (the step's end
 *                 without a backward), outside every Optimizer.* and
 *                 DataLoader range. Those ranges cut the step before its
 *                 backward into parts; the forward is where the model ran,
 *                 which is not always after them: zero_grad() comes before
 *                 the forward or after it, before the backward. So the
 *                 forward starts in the first part whose work (the extent
 *                 of its operators) is at least a quarter of the largest
 *                 part's (not in one of the profiler's few operators
 *                 before a zero_grad), and runs to the last end of the
 *                 work of the parts from there on.
 *
 * Only for a trace that has no phase of its own (neither gprof-dl's export
 * nor Paddle's have this need). Steps, optimizer and DataLoader ranges are
 * gathered during the parse (import_phase_range), one spill pass before the
 * emit finds the backward, and the emit's own pass the forward. Memory:
 * a few words per step and per optimizer or DataLoader range, never per
 * operator.
 */
#include "formats/import/import_int.h"
#include "formats/import/import_tell.h"

#include "common/error.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_FN "autograd::engine::evaluate_function: "
#define OPT_STEP "Optimizer.step#"
#define OPT_ZERO "Optimizer.zero_grad#"

static int has_prefix(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);
	return n >= k && memcmp(s, p, k) == 0;
}

void import_phase_range(struct import *im, uint32_t track, uint8_t type, const char *name,
			size_t len, int64_t start, int64_t end)
{
	struct import_phases *ph = &im->phases;
	struct iphase_range r = {.track = track, .pid = im->tracks.t[track].pid,
				 .start = start, .end = end};
	if (type == TRACE_EV_PROFILE_STEP) {
		r.kind = IPHASE_STEP;
	} else if (has_prefix(name, len, OPT_STEP)) {
		r.kind = IPHASE_OPT_STEP;
		r.name_str = istrings_intern(&im->strs, name + strlen("Optimizer.step"),
					     len - strlen("Optimizer.step")); /* "#SGD.step" */
	} else if (has_prefix(name, len, OPT_ZERO) || type == TRACE_EV_DATALOADER) {
		r.kind = IPHASE_EXCLUDE;
	} else {
		return;
	}
	if (ph->n == ph->cap) {
		ph->cap = ph->cap ? ph->cap * 2 : 64;
		ph->r = xrealloc(ph->r, ph->cap * sizeof(*ph->r));
	}
	ph->r[ph->n++] = r;
}

/* Steps by (pid, start), then the other ranges by (track, start, longest
 * first), so that an outermost range comes before those it holds. */
static int cmp_range(const void *pa, const void *pb)
{
	const struct iphase_range *a = pa, *b = pb;
	if ((a->kind == IPHASE_STEP) != (b->kind == IPHASE_STEP))
		return a->kind == IPHASE_STEP ? -1 : 1;
	uint64_t ka = a->kind == IPHASE_STEP ? a->pid : a->track;
	uint64_t kb = b->kind == IPHASE_STEP ? b->pid : b->track;
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return 0;
}

/* The index of the step of pid holding time t (the latest to start at or
 * before it), or -1. Steps of one process follow each other, so the latest
 * is the one. */
static ptrdiff_t step_at(const struct import_phases *ph, uint32_t pid, int64_t t)
{
	size_t lo = 0, hi = ph->nsteps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct iphase_range *s = &ph->r[mid];
		if (s->pid < pid || (s->pid == pid && s->start <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	const struct iphase_range *s = &ph->r[lo - 1];
	return s->pid == pid && t >= s->start && t < s->end ? (ptrdiff_t)lo - 1 : -1;
}

/* Where step i's forward must end: its backward's start, else its end. */
static int64_t fwd_limit(const struct import_phases *ph, size_t i)
{
	const struct iphase_step *st = &ph->st[i];
	return st->bwd_lo <= st->bwd_hi ? st->bwd_lo : ph->r[i].end;
}

static int trace_has_phases(const struct import *im)
{
	for (uint32_t i = 0; i < im->descs.n; i++) {
		uint8_t t = im->descs.d[i].type;
		if (t == TRACE_EV_FORWARD || t == TRACE_EV_BACKWARD || t == TRACE_EV_OPTIMIZATION)
			return 1;
	}
	return 0;
}

/* What each desc is to the phases: 1 a backward function, 2 forward work
 * (a host operator or annotation that is no step, optimizer or fetch). */
static uint8_t *desc_roles(const struct import *im)
{
	uint8_t *role = xcalloc(im->descs.n + 1, 1);
	for (uint32_t i = 0; i < im->descs.n; i++) {
		const struct idesc *d = &im->descs.d[i];
		const char *name = istrings_get(&im->strs, d->name_str);
		size_t len = istrings_len(&im->strs, d->name_str);
		if (has_prefix(name, len, EVAL_FN))
			role[i + 1] = 1;
		else if ((d->type == TRACE_EV_OPERATOR || d->type == TRACE_EV_OPERATOR_INNER ||
			  d->type == TRACE_EV_USER_DEFINED || d->type == TRACE_EV_CUDA_RUNTIME) &&
			 !has_prefix(name, len, OPT_STEP) && !has_prefix(name, len, OPT_ZERO))
			role[i + 1] = 2;
	}
	return role;
}

/* The backward of each step: one pass over the spill. */
static int phases_backward(struct import *im)
{
	struct import_phases *ph = &im->phases;
	struct spill_event e;
	struct spill_counter c;
	int kind;

	if (spill_rewind(&im->spill) < 0)
		return -1;
	while ((kind = spill_next(&im->spill, &e, &c)) > 0) {
		if (kind != 'E' || e.track >= im->tracks.n || !e.desc || e.desc > ph->nrole ||
		    ph->role[e.desc] != 1 || (e.flags & (TRACE_EVF_MARK | SPILL_EVF_PADDLE_REL)))
			continue;
		const struct itrack *t = &im->tracks.t[e.track];
		if (t->kind != TRACE_TRACK_HOST)
			continue;
		ptrdiff_t i = step_at(ph, t->pid, e.start);
		if (i < 0)
			continue;
		struct iphase_step *s = &ph->st[i];
		int64_t end = import_sat_add(e.start, e.dur);
		if (e.start < s->bwd_lo)
			s->bwd_lo = e.start;
		if (end > s->bwd_hi)
			s->bwd_hi = end;
	}
	return kind < 0 ? -1 : 0;
}

/* The zero_grad, optimizer or fetch range x of the step thread that ends
 * before the backward, and after the step's last part began: its step, whose
 * next part begins at x's end, or NULL. */
static struct iphase_step *part_end(struct import_phases *ph, const struct iphase_range *x)
{
	ptrdiff_t i = step_at(ph, x->pid, x->start);
	if (i < 0 || ph->r[i].track != x->track)
		return NULL;
	struct iphase_step *s = &ph->st[i];
	if (x->end <= fwd_limit(ph, (size_t)i) && x->end > s->fwd_floor) {
		s->fwd_floor = x->end;
		return s;
	}
	return NULL;
}

/* Where each step's forward must end, and the parts before it. */
static void phases_bounds(struct import_phases *ph)
{
	for (size_t i = 0; i < ph->nsteps; i++) {
		struct iphase_step *s = &ph->st[i];
		if (s->bwd_lo <= s->bwd_hi && s->bwd_hi > ph->r[i].end)
			s->bwd_hi = ph->r[i].end;
		s->fwd_floor = ph->r[i].start;
		s->nseg = 1;
	}
	/* the ranges come by (track, start), so those of a step one after
	 * another: count its parts, then place them */
	for (size_t i = ph->nsteps; i < ph->n; i++) {
		struct iphase_step *s = part_end(ph, &ph->r[i]);
		if (s)
			s->nseg++;
	}
	size_t total = 0;
	for (size_t i = 0; i < ph->nsteps; i++)
		total += ph->st[i].nseg;
	ph->segs = xrealloc(ph->segs, total * sizeof(*ph->segs));
	total = 0;
	for (size_t i = 0; i < ph->nsteps; i++) {
		struct iphase_step *s = &ph->st[i];
		s->seg0 = (uint32_t)total;
		total += s->nseg;
		ph->segs[s->seg0] = (struct iphase_seg){ph->r[i].start, INT64_MAX, INT64_MIN};
		s->nseg = 1;
		s->fwd_floor = ph->r[i].start;
	}
	for (size_t i = ph->nsteps; i < ph->n; i++) {
		struct iphase_step *s = part_end(ph, &ph->r[i]);
		if (s)
			ph->segs[s->seg0 + s->nseg++] = (struct iphase_seg){s->fwd_floor, INT64_MAX,
									   INT64_MIN};
	}
}

/* Whether [start, end] of track lies in an optimizer call or a fetch: the
 * ranges of the track that start last at or before it (a few, for ranges
 * inside others) are the only ones that can hold it. */
static int excluded(const struct import_phases *ph, uint32_t track, int64_t start, int64_t end)
{
	size_t lo = ph->nsteps, hi = ph->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct iphase_range *x = &ph->r[mid];
		if (x->track < track || (x->track == track && x->start <= start))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i > ph->nsteps && k < 4; i--, k++) {
		const struct iphase_range *x = &ph->r[i - 1];
		if (x->track != track)
			break;
		if (start >= x->start && end <= x->end)
			return 1;
	}
	return 0;
}

int import_phases_prepare(struct import *im)
{
	struct import_phases *ph = &im->phases;
	if (!ph->n || im->hdr.ours || im->hdr.saw_paddle || trace_has_phases(im))
		return 0;
	ph->r = xrealloc(ph->r, ph->n * sizeof(*ph->r)); /* the parse's slack goes back */
	ph->cap = ph->n;
	qsort(ph->r, ph->n, sizeof(*ph->r), cmp_range);
	while (ph->nsteps < ph->n && ph->r[ph->nsteps].kind == IPHASE_STEP)
		ph->nsteps++;
	ph->st = xmalloc((ph->nsteps ? ph->nsteps : 1) * sizeof(*ph->st));
	for (size_t i = 0; i < ph->nsteps; i++)
		ph->st[i] = (struct iphase_step){.bwd_lo = INT64_MAX, .bwd_hi = INT64_MIN};
	ph->role = desc_roles(im);
	ph->nrole = im->descs.n; /* the descs of the phases come after */
	ph->active = 1;
	if (ph->nsteps) {
		if (phases_backward(im) < 0)
			return import_fail(im, "cannot read back a temporary file in '%s': %s",
					   import_tmpdir(), strerror(im->spill.err));
		phases_bounds(ph);
		ph->fwd_desc = idescs_intern(&im->descs, istrings_intern(&im->strs, "Forward", 7), 0,
					     0, TRACE_EV_FORWARD);
		ph->bwd_desc = idescs_intern(&im->descs, istrings_intern(&im->strs, "Backward", 8),
					     0, 0, TRACE_EV_BACKWARD);
	}
	/* an Optimization range per outermost optimizer step, named as ours */
	int64_t last_end = INT64_MIN;
	uint32_t last_track = UINT32_MAX;
	for (size_t i = ph->nsteps; i < ph->n; i++) {
		struct iphase_range *x = &ph->r[i];
		if (x->kind != IPHASE_OPT_STEP)
			continue;
		if (x->track == last_track && x->start < last_end) {
			x->desc = 0; /* inside the previous one */
			continue;
		}
		last_track = x->track;
		last_end = x->end;
		const char *suffix = istrings_get(&im->strs, x->name_str);
		size_t n = istrings_len(&im->strs, x->name_str), len = strlen("Optimization") + n;
		char *name = xmalloc(len + 1);
		memcpy(name, "Optimization", strlen("Optimization"));
		memcpy(name + strlen("Optimization"), suffix, n + 1);
		x->desc = idescs_intern(&im->descs, istrings_intern(&im->strs, name, len), 0, 0,
					TRACE_EV_OPTIMIZATION);
		free(name);
	}
	return 0;
}

void import_phases_event(struct import *im, const struct spill_event *e)
{
	struct import_phases *ph = &im->phases;
	if (!ph->active || !ph->nsteps || !e->desc || e->desc > ph->nrole ||
	    ph->role[e->desc] != 2 || (e->flags & (TRACE_EVF_MARK | SPILL_EVF_PADDLE_REL)))
		return;
	const struct itrack *t = &im->tracks.t[e->track];
	if (t->kind != TRACE_TRACK_HOST)
		return;
	ptrdiff_t i = step_at(ph, t->pid, e->start);
	int64_t end = import_sat_add(e->start, e->dur);
	if (i < 0 || ph->r[i].track != e->track || end > fwd_limit(ph, (size_t)i))
		return;
	const struct iphase_step *s = &ph->st[i];
	if (excluded(ph, e->track, e->start, end))
		return;
	/* the part it starts in: the last to begin at or before it */
	uint32_t k = s->nseg - 1;
	while (k > 0 && ph->segs[s->seg0 + k].floor > e->start)
		k--;
	struct iphase_seg *g = &ph->segs[s->seg0 + k];
	g->lo = e->start < g->lo ? e->start : g->lo;
	g->hi = end > g->hi ? end : g->hi;
}

int import_phases_forward(const struct import_phases *ph, size_t i, int64_t *lo, int64_t *hi)
{
	const struct iphase_step *s = &ph->st[i];
	const struct iphase_seg *g = ph->segs + s->seg0;
	int64_t most = -1;
	for (uint32_t k = 0; k < s->nseg; k++)
		if (g[k].lo <= g[k].hi && g[k].hi - g[k].lo > most)
			most = g[k].hi - g[k].lo;
	if (most < 0)
		return 0; /* no forward work */
	uint32_t first = 0;
	while (!(g[first].lo <= g[first].hi && (g[first].hi - g[first].lo) * 4 >= most))
		first++;
	*lo = g[first].lo;
	*hi = INT64_MIN;
	for (uint32_t k = first; k < s->nseg; k++)
		if (g[k].lo <= g[k].hi && g[k].hi > *hi)
			*hi = g[k].hi;
	return 1;
}

void import_phases_free(struct import_phases *ph)
{
	free(ph->r);
	free(ph->st);
	free(ph->segs);
	free(ph->role);
	memset(ph, 0, sizeof(*ph));
}
