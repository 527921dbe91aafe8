/*
 * rules_steps.c - the rules on the step's own time (rules.h): input-bound
 * (data loading in the step, the Perf Summary's reader ratio) and jitter
 * (steps far beyond the median, with the phases that ran longer in them).
 *
 * Both read the counted steps of perf.h (the first --skip-steps of each
 * trace are warm-up, never more than half) pooled over the traces, as the
 * median step of adv_input does; a step's phases are the Steps view's (the
 * union of a phase's ranges on the trace's host threads, clipped to the
 * step; Others the rest of the step).
 */
#include "lib/analysis/advise/rules.h"

#include "lib/analysis/views/perf.h"

#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1e6 /* ns */

static int double_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The median of v[0..n) (n > 0); v is sorted in place. */
static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), double_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- input-bound -------------------------------------------------------------- */

#define INPUT_BOUND_RATIO 5.0 /* percent of the step */
#define INPUT_BUSY_RUNQ 0.10   /* of the steps' time: cpu-contention's bar */

/* The DataLoader as the trace shows it: the iterator kinds named by the
 * Dataloader ranges (an imported torch.profiler trace names
 * "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), the
 * worker processes (child processes of the stepping process, most alive at
 * once during the steps: gprof-dl records forked children), and torch's
 * pin-memory thread ("Thread-N (_pin_memory_loop)", Python 3.10 on). */
struct loader_seen {
	int single, multi;   /* an iterator of that kind named */
	int recorded;        /* a gprof-dl recording: its process table lists children */
	unsigned workers;    /* most child processes alive at once */
	int pin_thread;
	int gpu;             /* some GPU stream in the trace */
};

static void loader_names(const struct store *s, struct loader_seen *l)
{
	for (uint32_t d = 0; d < s->ndescs; d++) {
		if (s->descs[d].type != TRACE_EV_DATALOADER)
			continue;
		const char *name = store_name(s, s->descs[d].name);
		l->single |= strstr(name, "_SingleProcessDataLoaderIter") != NULL;
		l->multi |= strstr(name, "_MultiProcessingDataLoaderIter") != NULL;
	}
}

static int proc_alive(const struct store_process *p, uint64_t t)
{
	return p->start_ns <= t && (p->end_ns == 0 || t < p->end_ns);
}

/* The children of (file, pid) alive in [from, to), the most at once. */
static unsigned loader_workers(const struct store *s, uint32_t file, uint32_t pid, uint64_t from,
			       uint64_t to)
{
	unsigned most = 0;
	for (uint32_t i = 0; i < s->nprocs; i++) {
		const struct store_process *p = &s->procs[i];
		if (p->file != file || p->ppid != pid || p->start_ns >= to ||
		    (p->end_ns && p->end_ns <= from))
			continue;
		uint64_t at = p->start_ns > from ? p->start_ns : from;
		unsigned alive = 0;
		for (uint32_t j = 0; j < s->nprocs; j++) {
			const struct store_process *q = &s->procs[j];
			alive += q->file == file && q->ppid == pid && proc_alive(q, at);
		}
		if (alive > most)
			most = alive;
	}
	return most;
}

static void loader_look(const struct analysis *a, const struct perf *p, struct loader_seen *l)
{
	const struct store *s = &a->store;
	memset(l, 0, sizeof(*l));
	loader_names(s, l);
	for (uint32_t k = 0; k < s->ntracks; k++) {
		const struct store_track *t = &s->tracks[k];
		if (t->kind == STORE_TRACK_DEVICE) {
			l->gpu = 1;
			continue;
		}
		l->pin_thread |= strstr(store_name(s, t->name), "_pin_memory_loop") != NULL;
	}
	/* per file: its stepping process's children during its counted steps */
	for (size_t i = 0; i < p->counted;) {
		size_t first = i;
		uint32_t f = p->step[i].file;
		uint64_t end = 0;
		while (i < p->counted && p->step[i].file == f) {
			uint64_t e = p->step[i].start_ns + p->step[i].batch_ns;
			end = e > end ? e : end;
			i++;
		}
		l->recorded |= strcmp(s->files[f].clock, "CLOCK_MONOTONIC") == 0;
		unsigned w = loader_workers(s, f, s->tracks[p->step[first].track].pid,
					    p->step[first].start_ns, end);
		l->workers = w > l->workers ? w : l->workers;
	}
}

static void input_bound_loader(struct adv_finding *f, const struct loader_seen *l)
{
	if (l->single || l->multi)
		adv_evidence(f, "DataLoader iterator: %s%s%s",
			     l->single ? "_SingleProcessDataLoaderIter (num_workers=0)" : "",
			     l->single && l->multi ? ", " : "",
			     l->multi ? "_MultiProcessingDataLoaderIter (num_workers > 0)" : "");
	if (l->workers)
		adv_evidence(f, "worker processes: %u child process(es) of the training process "
				"alive at once during the steps (num_workers=%u, if all are "
				"DataLoader workers)",
			     l->workers, l->workers);
	else if (l->recorded && !l->multi)
		adv_evidence(f, "worker processes: none in the trace (num_workers=0: every batch "
				"is loaded inside the training loop)");
	if (l->pin_thread)
		adv_evidence(f, "pin_memory=True (torch's pin-memory thread is in the trace)");
	else if (l->gpu && l->recorded)
		adv_evidence(f, "pin_memory: no pin-memory thread in the trace "
				"(pin_memory=False?)");
}

/* The median over the counted steps of a step's loading share (percent):
 * what the typical step loads, which a few steps' stalls do not move. */
static double input_median_share(const struct perf *p)
{
	double *v = xmalloc(p->counted * sizeof(*v));
	for (size_t i = 0; i < p->counted; i++)
		v[i] = p->step[i].batch_ns ? 100.0 * (double)p->step[i].reader_ns /
						     (double)p->step[i].batch_ns
					   : 0;
	double m = median_of(v, p->counted);
	free(v);
	return m;
}

static void input_bound_run(const struct adv_input *in, struct adv_list *out)
{
	struct perf p;
	perf_compute(&p, in->a, in->skip);
	if (!p.counted || p.reader_ratio <= INPUT_BOUND_RATIO) {
		perf_free(&p);
		return;
	}
	double typical = input_median_share(&p);
	if (typical <= INPUT_BOUND_RATIO) {
		perf_free(&p);
		return;
	}
	struct loader_seen l;
	loader_look(in->a, &p, &l);
	/* worker processes starved of CPU: the loop waits for batches because
	 * the machine is too busy (cpu-contention's finding), and more workers
	 * would not help */
	struct perf_runq q;
	perf_runq(&p, &q);
	if ((l.workers || l.multi) && q.known >= 3 &&
	    (double)q.runq >= INPUT_BUSY_RUNQ * (double)q.time) {
		perf_free(&p);
		return;
	}
	double mean = (double)p.reader_total_ns / (double)p.counted;
	struct adv_finding *f = adv_add(out, &adv_rule_input_bound, in, mean,
					"data loading takes %.1f %% of the step (Reader Ratio): up to "
					"%.2f ms per step with the loading hidden",
					p.reader_ratio, mean / MS);
	adv_evidence(f, "Reader Ratio %.2f %% over %zu counted steps (threshold %.0f %%)",
		     p.reader_ratio, p.counted, INPUT_BOUND_RATIO);
	adv_evidence(f, "the median step's share of loading %.2f %% (the typical step, not a few "
			"stalls)",
		     typical);
	adv_evidence(f, "reader_cost per step: mean %.2f ms, max %.2f ms; batch_cost mean %.2f ms",
		     mean / MS, p.reader_ns.max / MS, p.batch_ns.avg / MS);
	input_bound_loader(f, &l);
	int no_workers = !l.workers && !l.multi && (l.recorded || l.single);
	adv_try(f, "%s; pin_memory=True when batches go to a GPU; or move decoding and "
		   "augmentation out of the step (pre-process once, cache the results)",
		no_workers ? "DataLoader(num_workers > 0, e.g. 2 to 4 per GPU, "
			     "persistent_workers=True, prefetch_factor=2 or more) so that batches "
			     "load while the step runs"
			   : "more DataLoader workers (num_workers), a larger prefetch_factor, "
			     "persistent_workers=True");
	adv_command(f, in, "--view perf --view steps --sorted-by dataloader");
	perf_free(&p);
}

const struct adv_rule adv_rule_input_bound = {
	.id = "input-bound",
	.title = "Input-bound: data loading in the step",
	.definition = "Reader Ratio of the Perf Summary: the time a Dataloader range of the "
		      "step's process was open inside the counted steps, over the steps' time. "
		      "Saving: the mean reader_cost per counted step, what hiding the loading "
		      "behind the step could give back at most.",
	.threshold = "Reader Ratio over 5 % of the counted steps' time, and the median step's "
		     "share of loading over 5 % too; with DataLoader workers, not when the step's "
		     "thread waited for a CPU 10 % of the steps' time or more",
	.why = "5 % is the TensorBoard profiler's threshold for its DataLoader recommendation: "
	       "below it, loading hidden by workers still shows as the short wait for the next "
	       "batch's hand-over, and the gain would be within step-to-step noise; the "
	       "median step must load that much too, since on a busy machine a few steps' "
	       "stalls raise the ratio of a loop that loads little (the bundled example, three "
	       "runs beside a test suite: Reader Ratios 4.6, 4.5 and 6.0 %, the last from "
	       "stalls of up to 8.7 ms; its median step's share 4.3 to 4.8 %); loading that "
	       "stalls only some steps is jitter's, which names them; workers on a machine "
	       "whose CPUs are taken (the loop's own thread kept waiting for one a tenth of "
	       "the time, cpu-contention's bar) load late for want of a CPU: a num_workers=2 "
	       "loop at load 10 on 2 cores read 6 to 27 % of loading in 7 of 30 runs, where "
	       "more workers would be wrong advice",
	.run = input_bound_run,
};

/* ---- jitter --------------------------------------------------------------------- */

#define JITTER_MADS 3.0
#define JITTER_MAD_SCALE 1.4826 /* MAD to a normal distribution's sigma */
#define JITTER_FLOOR 0.40       /* of the median: beyond its neighbours by it at least */
#define JITTER_NEIGHBOURS 2     /* steps on each side: the level a step is judged against */
#define JITTER_MIN_STEPS 8
#define JITTER_MIN_SAVING 0.05  /* of the median: what the slow steps cost at least */
#define JITTER_SHOW 8

enum { PH_OTHERS = VIEW_NPHASES, PH_N };
static const char *const phase_names[PH_N] = {"Dataloader", "Forward", "Backward",
					      "Optimization", "Others"};

/* A counted step: its trace and number there (from 0, warm-up included, as
 * the Steps view numbers it), its length, the time it waited for a CPU
 * (runnable, not running: schedstat, trace 2.1; 0 unknown) and its phases'
 * times. */
struct step_phases {
	uint32_t file;
	size_t number;
	uint64_t dur, runq;
	uint64_t phase[PH_N];
	int known;    /* runq measured (else 0, unknown) */
	double level; /* its neighbours' median step_own (jitter_levels); 0: none */
};

/* The step's time as jitter judges it: its length less its wait for a CPU.
 * Other processes taking the CPUs make steps slow at random (a shared
 * machine, a CI runner); that is contention (its own figure), not the
 * loop's jitter. */
static uint64_t step_own(const struct step_phases *p)
{
	return p->dur > p->runq ? p->dur - p->runq : 0;
}

/* The phases' ranges of each file's host threads, merged: [k] phase k of
 * view_phases, [VIEW_NPHASES] all four (as view_steps.c). */
struct phase_sets {
	const struct store *s;
	struct ivl_set (*set)[VIEW_NPHASES + 1];
};

static void phase_range(void *ctx, uint32_t track, size_t i, unsigned type)
{
	struct phase_sets *w = ctx;
	const struct store_track *t = &w->s->tracks[track];
	for (unsigned k = 0; k < VIEW_NPHASES; k++)
		if (view_phases[k] == type) {
			ivl_set_add(&w->set[t->file][k], t->start[i], store_ev_end(t, i));
			ivl_set_add(&w->set[t->file][VIEW_NPHASES], t->start[i],
				    store_ev_end(t, i));
		}
}

/* The counted steps (skip as perf.h) with their phases, file by file in
 * start order, into *out (free() it); returns their count. */
static size_t steps_with_phases(const struct analysis *a, unsigned skip, struct step_phases **out)
{
	const struct store *s = &a->store;
	uint32_t nf = s->nfiles ? s->nfiles : 1;
	struct phase_sets w = {s, xcalloc(nf, sizeof(*w.set))};
	for (uint32_t f = 0; f < nf; f++)
		for (unsigned k = 0; k <= VIEW_NPHASES; k++)
			ivl_set_init(&w.set[f][k]);
	struct perf_found_step *v;
	size_t n = perf_find_steps(a, VIEW_PHASE_TYPES, phase_range, &w, &v);
	for (uint32_t f = 0; f < nf; f++)
		for (unsigned k = 0; k <= VIEW_NPHASES; k++) {
			ivl_set_normalize(&w.set[f][k]);
			ivl_set_seal(&w.set[f][k]);
		}
	struct step_phases *st = xmalloc((n ? n : 1) * sizeof(*st));
	size_t m = 0;
	for (size_t at = 0; at < n;) {
		size_t first = at;
		while (at < n && v[at].file == v[first].file)
			at++;
		for (size_t k = first + perf_skipped_of(skip, at - first); k < at; k++) {
			const struct ivl_set *set = w.set[v[k].file];
			uint64_t end = v[k].start + v[k].dur;
			struct step_phases *p = &st[m++];
			p->file = v[k].file;
			p->number = k - first;
			p->dur = v[k].dur;
			p->known = v[k].cpu_ns != 0;
			p->runq = p->known ? v[k].runq_ns : 0;
			for (unsigned ph = 0; ph < VIEW_NPHASES; ph++)
				p->phase[ph] = ivl_set_overlap(&set[ph], v[k].start, end);
			uint64_t covered = ivl_set_overlap(&set[VIEW_NPHASES], v[k].start, end);
			p->phase[PH_OTHERS] = v[k].dur > covered ? v[k].dur - covered : 0;
		}
	}
	for (uint32_t f = 0; f < nf; f++)
		for (unsigned k = 0; k <= VIEW_NPHASES; k++)
			ivl_set_free(&w.set[f][k]);
	free(w.set);
	free(v);
	*out = st;
	return m;
}

/* The slow steps' numbers (and lengths), the first JITTER_SHOW; and
 * "every N steps" when they fall at a fixed period in one trace. */
static void jitter_steps(struct adv_finding *f, const struct store *s,
			 const struct step_phases *st, const size_t *slow, size_t nslow, int several)
{
	char line[1024];
	size_t len = 0;
	for (size_t k = 0; k < nslow && k < JITTER_SHOW; k++) {
		char name[64];
		adv_step_label(name, sizeof(name), s, st[slow[k]].file, st[slow[k]].number, several);
		const struct step_phases *p = &st[slow[k]];
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s (%.2f ms, +%.2f ms)",
					k ? ", " : "", name, (double)step_own(p) / MS,
					((double)step_own(p) - p->level) / MS);
		if (len >= sizeof(line))
			break;
	}
	int periodic = nslow >= 3;
	size_t period = nslow >= 2 ? st[slow[1]].number - st[slow[0]].number : 0;
	for (size_t k = 1; k < nslow && periodic; k++)
		periodic = st[slow[k]].file == st[slow[0]].file &&
			   st[slow[k]].number - st[slow[k - 1]].number == period;
	if (periodic)
		adv_evidence(f, "the slow steps, every %zu steps: %s%s", period, line,
			     nslow > JITTER_SHOW ? ", ..." : "");
	else
		adv_evidence(f, "the slow steps: %s%s", line, nslow > JITTER_SHOW ? ", ..." : "");
}

/* What ran longer in the slow steps: each phase's mean there against its
 * median over the counted steps, the largest excess first (those that grew
 * by at least 1 % of the median step, at most three). Returns the phase
 * that grew most. */
static unsigned jitter_phases(struct adv_finding *f, const struct step_phases *st, size_t n,
			      const size_t *slow, size_t nslow, double median)
{
	double excess[PH_N], slow_mean[PH_N], typical[PH_N];
	double *v = xmalloc(n * sizeof(*v));
	for (unsigned ph = 0; ph < PH_N; ph++) {
		for (size_t i = 0; i < n; i++)
			v[i] = (double)st[i].phase[ph];
		typical[ph] = median_of(v, n);
		slow_mean[ph] = 0;
		for (size_t k = 0; k < nslow; k++)
			slow_mean[ph] += (double)st[slow[k]].phase[ph];
		slow_mean[ph] /= (double)nslow;
		excess[ph] = slow_mean[ph] - typical[ph];
	}
	free(v);
	unsigned order[PH_N];
	for (unsigned ph = 0; ph < PH_N; ph++)
		order[ph] = ph;
	for (unsigned i = 1; i < PH_N; i++)
		for (unsigned j = i; j > 0 && excess[order[j]] > excess[order[j - 1]]; j--) {
			unsigned t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	char line[512];
	size_t len = 0;
	for (unsigned k = 0; k < 3 && excess[order[k]] >= 0.01 * median; k++) {
		unsigned ph = order[k];
		len += (size_t)snprintf(line + len, sizeof(line) - len,
					"%s%s +%.2f ms (%.2f ms in the slow steps, median %.2f ms)",
					k ? "; " : "", phase_names[ph], excess[ph] / MS,
					slow_mean[ph] / MS, typical[ph] / MS);
	}
	if (len)
		adv_evidence(f, "what ran longer: %s", line);
	return order[0];
}

static const char *jitter_advice(unsigned phase)
{
	switch (phase) {
	case 0:
		return "the slow steps wait for their batch: prefetch (DataLoader prefetch_factor, "
		       "more num_workers, persistent_workers=True so that workers do not restart "
		       "each epoch)";
	case PH_OTHERS:
		return "the slow steps spend their time outside forward, backward and the optimizer: "
		       "look for host work done every N steps (logging, metrics, evaluation, "
		       "checkpointing, Python garbage collection) and move it off the step or "
		       "spread it";
	default:
		return "the computation itself varies: look for input shapes that change (padding "
		       "to fixed sizes, recompilation), and for other work on the machine during "
		       "those steps";
	}
}

/* Each counted step's level: the median step_own of the JITTER_NEIGHBOURS
 * steps on each side of it in its trace (fewer at the trace's ends; 0 with
 * fewer than 2 such steps). A step is judged against its neighbours, not
 * against the whole run: a machine busy for a few seconds slows every step
 * in them alike, and a drift in pace moves the level with it, while work
 * done every N steps (logging, checkpointing, evaluation, a collection)
 * stands out of the steps around it. st[] holds each trace's steps
 * together, in start order (steps_with_phases). */
static void jitter_levels(struct step_phases *st, size_t n)
{
	double nb[2 * JITTER_NEIGHBOURS];
	for (size_t first = 0, end; first < n; first = end) {
		for (end = first; end < n && st[end].file == st[first].file; end++)
			;
		for (size_t i = first; i < end; i++) {
			size_t lo = i - first >= JITTER_NEIGHBOURS ? i - JITTER_NEIGHBOURS : first;
			size_t hi = end - i > JITTER_NEIGHBOURS ? i + JITTER_NEIGHBOURS + 1 : end;
			size_t m = 0;
			for (size_t j = lo; j < hi; j++)
				if (j != i)
					nb[m++] = (double)step_own(&st[j]);
			st[i].level = m >= 2 ? median_of(nb, m) : 0;
		}
	}
}

/* The counted steps' spread: the median step (less its wait for a CPU),
 * the scaled MAD, the median wait for a CPU (0: not measured) and the
 * margin a step must exceed its neighbours by to be slow. */
struct jitter_stats {
	double median, mad, runq, margin;
	int measured_runq;
};

static void jitter_stats(const struct step_phases *st, size_t n, struct jitter_stats *j)
{
	double *v = xmalloc(n * sizeof(*v));
	j->measured_runq = 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = (double)st[i].runq;
		j->measured_runq |= st[i].known;
	}
	j->runq = median_of(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = (double)step_own(&st[i]);
	j->median = median_of(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = fabs((double)step_own(&st[i]) - j->median);
	j->mad = JITTER_MAD_SCALE * median_of(v, n);
	free(v);
	j->margin = JITTER_MADS * j->mad;
	if (j->margin < JITTER_FLOOR * j->median)
		j->margin = JITTER_FLOOR * j->median;
}

/* Where the trace measures the steps' wait for a CPU, the steps whose wait
 * is unknown (no sample near enough to an end: their thread was kept off
 * the CPU right there) are left out: their time may be mostly waiting.
 * Moves the others to the front of st[] in order; returns their count and
 * the number left out in *unknown. */
static size_t jitter_known(struct step_phases *st, size_t n, size_t *unknown)
{
	size_t known = 0, m = 0;
	for (size_t i = 0; i < n; i++)
		known += st[i].known;
	*unknown = known ? n - known : 0;
	if (!known)
		return n;
	for (size_t i = 0; i < n; i++)
		if (st[i].known)
			st[m++] = st[i];
	return m;
}

static void jitter_run(const struct adv_input *in, struct adv_list *out)
{
	if (in->steps < JITTER_MIN_STEPS)
		return;
	struct step_phases *st;
	size_t n = steps_with_phases(in->a, in->skip, &st);
	if (n < JITTER_MIN_STEPS) {
		free(st);
		return;
	}
	size_t unknown;
	n = jitter_known(st, n, &unknown);
	if (n < JITTER_MIN_STEPS) {
		free(st);
		return;
	}
	struct jitter_stats j;
	jitter_stats(st, n, &j);
	jitter_levels(st, n);
	size_t *slow = xmalloc(n * sizeof(*slow)), nslow = 0;
	double excess = 0;
	for (size_t i = 0; i < n; i++)
		if (st[i].level > 0 && (double)step_own(&st[i]) > st[i].level + j.margin) {
			slow[nslow++] = i;
			excess += (double)step_own(&st[i]) - st[i].level;
		}
	double saving = excess / (double)n;
	if (nslow && saving >= JITTER_MIN_SAVING * j.median) {
		struct adv_finding *f = adv_add(out, &adv_rule_jitter, in, saving,
						"%zu of %zu steps take longer than the steps around them "
						"by more than %.2f ms: %.2f ms per step on average",
						nslow, n, j.margin / MS, saving / MS);
		adv_evidence(f, "median step %.2f ms, MAD %.3f ms (scaled by 1.4826); a step is slow "
				"when it exceeds its neighbours (the median of the %d steps each "
				"side of it) by over %.2f ms (max(3 MAD, 40 %% of the median))",
			     j.median / MS, j.mad / MS, JITTER_NEIGHBOURS, j.margin / MS);
		if (j.measured_runq)
			adv_evidence(f, "step times less their wait for a CPU (runnable, not running; "
					"median wait %.2f ms a step): other processes' share of the "
					"CPUs is not the loop's jitter",
				     j.runq / MS);
		if (unknown)
			adv_evidence(f, "%zu counted steps left out: their wait for a CPU is unknown",
				     unknown);
		jitter_steps(f, &in->a->store, st, slow, nslow, in->a->store.nfiles > 1);
		adv_evidence(f, "their excess over their neighbours: %.2f ms in all, over %zu "
				"counted steps",
			     excess / MS, n);
		unsigned phase = jitter_phases(f, st, n, slow, nslow, j.median);
		adv_try(f, "%s", jitter_advice(phase));
		adv_command(f, in, "--view steps --sorted-by duration --top 10");
	}
	free(slow);
	free(st);
}

const struct adv_rule adv_rule_jitter = {
	.id = "jitter",
	.title = "Step-time jitter: steps far slower than the steps around them",
	.definition = "The counted steps whose time, less their wait for a CPU where the trace "
		      "measures it (schedstat: other processes' share of the CPUs is contention, "
		      "not the loop's jitter; steps whose wait is unknown are then left out), "
		      "exceeds their neighbours' (the median of the 2 steps on each side in the "
		      "same trace) by more than max(3 MADs of the step times (median absolute "
		      "deviation, scaled by 1.4826), 40 % of the median step); what ran longer in "
		      "them: each Model phase's mean there against its median. Saving: their "
		      "excess over their neighbours, summed, per counted step.",
	.threshold = "a step beyond its neighbours by max(3 MAD, 40 % of the median), with 8 "
		     "counted steps or more, the slow steps' excess at least 5 % of the median "
		     "step per step",
	.why = "judged against the steps around it, a step is slow by what it did, not by the "
	       "machine's mood: a shared machine slows several seconds of steps alike (on a "
	       "2-core VM beside other work, runs of 5 to 10 steps up to 50 % slower, their "
	       "time on the CPU grown, not only their wait), which moves the neighbours too, "
	       "whereas work done every N steps stands out of them; 40 % of the step is above "
	       "the step-to-neighbours excess of all but one in 600 steps of a steady loop on "
	       "that machine, beside a test suite or CPU burners (the largest: 60 %), and one such "
	       "step costs under 5 % of a 30-step run; 3 MADs is a robust 3-sigma for a loop "
	       "noisier than that; slow steps must cost 5 % of the step on average to be worth "
	       "a change; fewer than 8 steps give no stable median; a slowdown lasting 3 or "
	       "more steps in a row is a change of pace (see the Steps view), not jitter",
	.run = jitter_run,
};
