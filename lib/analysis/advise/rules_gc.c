/*
 * rules_gc.c - see rules.h: Python's garbage collector in the steps
 * (gc-pauses).
 *
 * `gprof-dl run` records every collection of a Python program as a PythonOp
 * range named "Python GC (generation N)" on the thread that ran it (the
 * gprof_dl package, gprof-dl-run(1)). A collection holds the GIL from its
 * start to its end: on the step's own thread it stops the step's Python work
 * for that long, whatever other threads do. So the rule reads the
 * collections on each counted step's thread, clipped to the step.
 */
#include "lib/analysis/advise/rules.h"
#include "lib/analysis/views/perf.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1e6 /* ns */

#define GC_SHARE 5.0      /* percent of the counted steps' time */
#define GC_SHOW 6         /* steps named in the evidence */
#define GC_PREFIX "Python GC (generation "
#define GC_GENS 3

/* A collection: its thread's track, its times and generation. */
struct gc_pause {
	uint32_t track;
	uint8_t gen;
	uint64_t start, end;
};

struct gc_seen {
	const struct store *s;
	int8_t *gen_of; /* per desc: its generation, -1 not a collection */
	struct gc_pause *v;
	size_t n, cap;
};

/* Per desc: the generation a PythonOp named "Python GC (generation N)" says. */
static int8_t *gc_descs(const struct store *s, int *any)
{
	int8_t *g = xmalloc(s->ndescs ? s->ndescs : 1);
	*any = 0;
	for (uint32_t d = 0; d < s->ndescs; d++) {
		g[d] = -1;
		if (s->descs[d].type != TRACE_EV_PYTHON_OP)
			continue;
		const char *name = store_name(s, s->descs[d].name);
		size_t k = sizeof(GC_PREFIX) - 1;
		if (strncmp(name, GC_PREFIX, k) == 0 && name[k] >= '0' &&
		    name[k] < '0' + GC_GENS && strcmp(name + k + 1, ")") == 0) {
			g[d] = (int8_t)(name[k] - '0');
			*any = 1;
		}
	}
	return g;
}

static void gc_range(void *ctx, uint32_t track, size_t i, unsigned type)
{
	struct gc_seen *w = ctx;
	const struct store_track *t = &w->s->tracks[track];
	(void)type;
	int8_t g = w->gen_of[store_ev_desc(t, i)];
	if (g < 0)
		return;
	/* a collection inside another of its thread is counted with it (CPython
	 * runs one at a time; an imported trace might nest them) */
	for (uint32_t p = t->parent[i]; p != STORE_NONE; p = t->parent[p])
		if (w->gen_of[store_ev_desc(t, p)] >= 0)
			return;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->v = xrealloc(w->v, w->cap * sizeof(*w->v));
	}
	w->v[w->n++] = (struct gc_pause){track, (uint8_t)g, t->start[i], store_ev_end(t, i)};
}

static int by_track_start(const void *x, const void *y)
{
	const struct gc_pause *a = x, *b = y;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

/* A counted step as the rule sees it. */
struct gc_step {
	uint32_t file;
	size_t number; /* in its trace, from 0, warm-up included (the Steps view's) */
	uint64_t dur, gc;
};

static int by_gc(const void *x, const void *y)
{
	const struct gc_step *a = x, *b = y;
	if (a->gc != b->gc)
		return a->gc > b->gc ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return (a->number > b->number) - (a->number < b->number);
}

/* Totals over the counted steps. */
struct gc_total {
	size_t steps, hit;           /* counted steps; those with a collection */
	uint64_t step_ns, gc_ns;     /* their time; the collections' in them */
	uint64_t count[GC_GENS];     /* collections begun in them */
	uint64_t ns[GC_GENS];        /* their time, clipped to the steps */
	uint64_t longest;            /* the longest one, clipped */
	unsigned longest_gen;
	struct gc_step longest_in;
};

/* The collections of w (sorted) on step v's thread, clipped to it. */
static uint64_t gc_in_step(const struct gc_seen *w, const struct perf_found_step *v,
			   struct gc_total *tot, const struct gc_step *st)
{
	uint64_t from = v->start, to = v->start + v->dur, sum = 0;
	/* the first collection of the track that ends after the step's start
	 * (collections of a thread do not overlap: their ends are in order) */
	size_t lo = 0, hi = w->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct gc_pause *p = &w->v[mid];
		if (p->track < v->track || (p->track == v->track && p->end <= from))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k < w->n && w->v[k].track == v->track && w->v[k].start < to; k++) {
		const struct gc_pause *p = &w->v[k];
		uint64_t a = p->start > from ? p->start : from, b = p->end < to ? p->end : to;
		if (b <= a)
			continue;
		sum += b - a;
		tot->count[p->gen] += p->start >= from; /* counted in the step it began in */
		tot->ns[p->gen] += b - a;
		if (b - a > tot->longest) {
			tot->longest = b - a;
			tot->longest_gen = p->gen;
			tot->longest_in = *st;
		}
	}
	return sum;
}

static void gc_run(const struct adv_input *in, struct adv_list *out)
{
	const struct analysis *a = in->a;
	const struct store *s = &a->store;
	if (!in->steps)
		return;
	int any;
	struct gc_seen w = {s, gc_descs(s, &any), NULL, 0, 0};
	if (!any) {
		free(w.gen_of);
		return; /* no collection recorded: nothing to say */
	}
	struct perf_found_step *v;
	size_t n = perf_find_steps(a, 1u << TRACE_EV_PYTHON_OP, gc_range, &w, &v);
	if (w.n)
		qsort(w.v, w.n, sizeof(*w.v), by_track_start);
	struct gc_step *st = xmalloc((n ? n : 1) * sizeof(*st));
	struct gc_total tot;
	memset(&tot, 0, sizeof(tot));
	for (size_t at = 0; at < n;) {
		size_t first = at;
		while (at < n && v[at].file == v[first].file)
			at++;
		for (size_t k = first + perf_skipped_of(in->skip, at - first); k < at; k++) {
			struct gc_step *p = &st[tot.steps++];
			p->file = v[k].file;
			p->number = k - first;
			p->dur = v[k].dur;
			p->gc = 0;
			p->gc = gc_in_step(&w, &v[k], &tot, p);
			tot.step_ns += p->dur;
			tot.gc_ns += p->gc;
			tot.hit += p->gc > 0;
		}
	}
	/* the share holds without the step that collected the most too: one
	 * pause (the first full collection after the setup's imports, say) is
	 * an accident of where the window fell, not what every step pays */
	uint64_t most_gc = 0, most_dur = 0;
	for (size_t k = 0; k < tot.steps; k++)
		if (st[k].gc > most_gc) {
			most_gc = st[k].gc;
			most_dur = st[k].dur;
		}
	if (tot.steps >= 2 && 100.0 * (double)tot.gc_ns >= GC_SHARE * (double)tot.step_ns &&
	    100.0 * (double)(tot.gc_ns - most_gc) >= GC_SHARE * (double)(tot.step_ns - most_dur)) {
		double per_step = (double)tot.gc_ns / (double)tot.steps;
		int several = s->nfiles > 1;
		struct adv_finding *f =
			adv_add(out, &adv_rule_gc_pauses, in, per_step,
				"Python's garbage collector ran %.1f %% of the steps' time, on the "
				"training thread: %.2f ms per step",
				100.0 * (double)tot.gc_ns / (double)tot.step_ns, per_step / MS);
		uint64_t cn = tot.count[0] + tot.count[1] + tot.count[2];
		adv_evidence(f, "%llu collections in %zu counted steps, %.2f per step: generation 0 "
				"%.2f, generation 1 %.2f, generation 2 %.2f per step",
			     (unsigned long long)cn, tot.steps, (double)cn / (double)tot.steps,
			     (double)tot.count[0] / (double)tot.steps,
			     (double)tot.count[1] / (double)tot.steps,
			     (double)tot.count[2] / (double)tot.steps);
		adv_evidence(f, "GC %.2f ms per step: generation 0 %.2f ms, generation 1 %.2f ms, "
				"generation 2 %.2f ms",
			     per_step / MS, (double)tot.ns[0] / (double)tot.steps / MS,
			     (double)tot.ns[1] / (double)tot.steps / MS,
			     (double)tot.ns[2] / (double)tot.steps / MS);
		char name[64];
		adv_step_label(name, sizeof(name), s, tot.longest_in.file, tot.longest_in.number, several);
		adv_evidence(f, "the longest pause: %.2f ms (generation %u), in step %s of %.2f ms",
			     (double)tot.longest / MS, tot.longest_gen, name,
			     (double)tot.longest_in.dur / MS);
		qsort(st, tot.steps, sizeof(*st), by_gc);
		char line[1024];
		size_t len = 0;
		for (size_t k = 0; k < tot.hit && k < GC_SHOW && len < sizeof(line); k++) {
			adv_step_label(name, sizeof(name), s, st[k].file, st[k].number, several);
			len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s (%.2f ms of %.2f ms)",
						k ? ", " : "", name, (double)st[k].gc / MS,
						(double)st[k].dur / MS);
		}
		adv_evidence(f, "%zu of the %zu counted steps collected; the most: %s%s", tot.hit,
			     tot.steps, line, tot.hit > GC_SHOW ? ", ..." : "");
		adv_evidence(f, "the saving is that time: an upper bound (with the collector off, the "
				"garbage it would have freed stays, and is freed later or never)");
		adv_try(f, "gc.freeze() once the model and data are set up (the long-lived objects "
			   "leave the collections); a higher gc.set_threshold(); no reference cycles "
			   "made every step (they wait for a collection to be freed); or gc.disable() "
			   "during the epoch and gc.collect() between epochs");
		adv_command(f, in, "--view nvprof --view steps");
	}
	free(st);
	free(v);
	free(w.v);
	free(w.gen_of);
}

const struct adv_rule adv_rule_gc_pauses = {
	.id = "gc-pauses",
	.title = "GC pauses: Python's garbage collector stops the training thread",
	.definition = "over the counted steps, the Python garbage collections on each step's "
		      "thread (the PythonOp ranges \"Python GC (generation N)\" that gprof-dl run "
		      "records), clipped to the step, against the steps' time; saving: that time "
		      "per step, an upper bound",
	.threshold = "at least 5 % of the counted steps' time, and at least 5 % of the others' "
		     "without the step that collected the most",
	.why = "a collection holds the GIL, so the step's Python work stops for all of it; below "
	       "a twentieth of the step the pauses are within a loaded machine's step-to-step "
	       "noise and not worth a change to the program; and one long pause (the first full "
	       "collection after the setup, whose objects it walks once) is an accident of where "
	       "the window fell, not what every step pays",
	.run = gc_run,
};
