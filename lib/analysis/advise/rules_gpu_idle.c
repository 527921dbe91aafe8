/* rules_gpu_idle.c - see rules.h: a GPU waiting for its host (gpu-starved,
 * launch-bound). */
#include "lib/analysis/advise/rules.h"
#include "lib/analysis/views/perf.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* GPU work of file f: its streams' kernels, copies, sets and communication,
 * merged. */
static void gpu_busy_of(const struct analysis *a, uint32_t f, struct ivl_set *busy)
{
	const struct store *s = &a->store;
	ivl_set_init(busy);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE || t->file != f)
			continue;
		for (size_t i = 0; i < t->n; i++)
			if (store_ev_is_gpu_work(s, t, i) && t->dur[i])
				ivl_set_add(busy, t->start[i], t->start[i] + t->dur[i]);
	}
	ivl_set_normalize(busy);
	ivl_set_seal(busy);
}

/* The host's work of file f: its operators, CUDA calls, data loading and
 * host communication, merged. */
static void host_busy_of(const struct analysis *a, uint32_t f, struct ivl_set *host)
{
	const struct store *s = &a->store;
	ivl_set_init(host);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST || t->file != f)
			continue;
		for (size_t i = 0; i < t->n; i++) {
			unsigned type = store_ev_type(s, t, i);
			if (t->dur[i] && !store_ev_is_instant(t, i) &&
			    (type == TRACE_EV_OPERATOR || type == TRACE_EV_CUDA_RUNTIME ||
			     type == TRACE_EV_DATALOADER || type == TRACE_EV_COMMUNICATION ||
			     type == TRACE_EV_PYTHON_OP))
				ivl_set_add(host, t->start[i], t->start[i] + t->dur[i]);
		}
	}
	ivl_set_normalize(host);
	ivl_set_seal(host);
}

struct idle_name {
	uint32_t desc;
	uint64_t ns;
};

static int by_ns(const void *x, const void *y)
{
	const struct idle_name *a = x, *b = y;
	return a->ns != b->ns ? (a->ns > b->ns ? -1 : 1) : (a->desc > b->desc) - (a->desc < b->desc);
}

/* The outermost host operators of file f, each its time inside the steps
 * while the GPU was idle (steps minus busy), by name: into by[desc]. */
static void host_in_gaps(const struct analysis *a, uint32_t f, const struct ivl_set *steps,
			 const struct ivl_set *busy, struct idle_name *by)
{
	const struct store *s = &a->store;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST || t->file != f)
			continue;
		for (size_t i = 0; i < t->n; i++) {
			if (store_ev_type(s, t, i) != TRACE_EV_OPERATOR || store_ev_is_instant(t, i))
				continue;
			uint32_t p = t->parent[i];
			if (p != STORE_NONE && store_ev_type(s, t, p) == TRACE_EV_OPERATOR)
				continue; /* inside an operator: counted with it */
			uint64_t st = t->start[i], en = store_ev_end(t, i);
			uint64_t in_steps = ivl_set_overlap(steps, st, en);
			if (!in_steps)
				continue;
			/* in the steps and not under GPU work (steps hold the op's part) */
			uint64_t under = ivl_set_overlap(busy, st, en);
			uint64_t idle = in_steps > under ? in_steps - under : 0;
			uint32_t d = store_ev_desc(t, i);
			by[d].desc = d;
			by[d].ns += idle;
		}
	}
}

static void starved_run(const struct adv_input *in, struct adv_list *out)
{
	const struct analysis *a = in->a;
	const struct store *s = &a->store;
	if (!a->gpu.has_gpu || !in->steps)
		return;
	struct perf p;
	perf_compute(&p, a, in->skip);
	uint64_t step_ns = 0, idle_ns = 0, host_idle_ns = 0;
	struct idle_name *by = xcalloc(s->ndescs ? s->ndescs : 1, sizeof(*by));
	for (uint32_t f = 0; f < s->nfiles; f++) {
		struct ivl_set busy, steps;
		ivl_set_init(&steps);
		for (size_t i = 0; i < p.counted; i++)
			if (p.step[i].file == f)
				ivl_set_add(&steps, p.step[i].start_ns,
					    p.step[i].start_ns + p.step[i].batch_ns);
		ivl_set_normalize(&steps);
		ivl_set_seal(&steps);
		if (!ivl_set_measure(&steps)) {
			ivl_set_free(&steps);
			continue;
		}
		gpu_busy_of(a, f, &busy);
		if (ivl_set_measure(&busy)) { /* a file of the job with GPU work */
			uint64_t m = ivl_set_measure(&steps);
			uint64_t b = 0;
			for (size_t k = 0; k < steps.n; k++)
				b += ivl_set_overlap(&busy, steps.v[k].start, steps.v[k].end);
			struct ivl_set host, idle, both;
			host_busy_of(a, f, &host);
			ivl_set_subtract(&steps, &busy, &idle);
			ivl_set_intersect(&idle, &host, &both);
			step_ns += m;
			idle_ns += m - b;
			host_idle_ns += ivl_set_measure(&both);
			ivl_set_free(&host);
			ivl_set_free(&idle);
			ivl_set_free(&both);
			host_in_gaps(a, f, &steps, &busy, by);
		}
		ivl_set_free(&busy);
		ivl_set_free(&steps);
	}
	double share = step_ns ? 100.0 * (double)idle_ns / (double)step_ns : 0;
	/* the host busy in at least half the GPU's idle time: it was the host
	 * the GPU waited for, not a sleep, I/O or another process */
	if (step_ns && share >= 20.0 && 2 * host_idle_ns >= idle_ns) {
		double per_step = (double)idle_ns / (double)p.counted;
		struct adv_finding *f = adv_add(out, &adv_rule_gpu_starved, in, per_step,
						"the GPU was idle %.1f %% of the counted steps: it waited "
						"for the host", share);
		adv_evidence(f, "GPU busy %.2f ms and idle %.2f ms per step on average, over %zu "
				"counted steps (the GPU's kernels, copies and communication, merged); the "
				"host ran operators, CUDA calls or data loading in %.0f %% of the idle time",
			     (double)(step_ns - idle_ns) / (double)p.counted / 1e6, per_step / 1e6,
			     p.counted, 100.0 * (double)host_idle_ns / (double)idle_ns);
		qsort(by, s->ndescs, sizeof(*by), by_ns);
		for (uint32_t k = 0; k < s->ndescs && k < 3 && by[k].ns; k++)
			adv_evidence(f, "while it was idle the host ran %s: %.2f ms per step",
				     store_name(s, s->descs[by[k].desc].name),
				     (double)by[k].ns / (double)p.counted / 1e6);
		adv_evidence(f, "the saving is the idle time: an upper bound (some of it is the "
				"host's own work, which overlapping would only hide)");
		adv_try(f, "keep the GPU fed: no host work between launches that could run ahead "
			   "(data loading in DataLoader workers, pin_memory=True and non_blocking "
			   "copies), no .item()/.cpu() in the step; larger batches; CUDA Graphs or "
			   "torch.compile(mode=\"reduce-overhead\") when many small kernels are "
			   "launched");
		adv_command(f, in, "--view overview --view operator");
	}
	free(by);
	perf_free(&p);
}

/* Kernels shorter than the call that launched them: the host's launch rate
 * sets the pace. */
static void launch_bound_run(const struct adv_input *in, struct adv_list *out)
{
	const struct analysis *a = in->a;
	const struct store *s = &a->store;
	if (!a->gpu.has_gpu || !in->window_steps)
		return;
	uint64_t kernels = 0, short_ = 0, launch_ns = 0, kernel_ns = 0;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		const struct gpu_track *g = &a->gpu.tracks[ti];
		if (t->kind != STORE_TRACK_HOST)
			continue;
		for (size_t k = 0; k < g->nlaunches; k++) {
			const struct gpu_launch *l = &g->launches[k];
			const struct store_track *gt = &s->tracks[l->track];
			if (!(a->gpu.tracks[l->track].flags[l->index] & GPU_COUNTED) ||
			    store_ev_type(s, gt, l->index) != TRACE_EV_KERNEL)
				continue;
			kernels++;
			kernel_ns += gt->dur[l->index];
			if (gt->dur[l->index] < t->dur[l->call]) {
				short_++;
				launch_ns += t->dur[l->call];
			}
		}
	}
	double per_step = (double)kernels / (double)in->window_steps;
	if (kernels < 100 || per_step < 100 || (double)short_ < 0.5 * (double)kernels)
		return;
	double saving = (double)(launch_ns) / (double)in->window_steps;
	struct adv_finding *f = adv_add(out, &adv_rule_launch_bound, in, saving,
					"%.0f %% of the kernels ran shorter than the call that launched "
					"them: the host's launches set the pace",
					100.0 * (double)short_ / (double)kernels);
	adv_evidence(f, "%.0f kernels per step (%llu in the %llu steps), %.1f us per kernel on "
			"average; %llu shorter than their launch call",
		     per_step, (unsigned long long)kernels, (unsigned long long)in->window_steps,
		     (double)kernel_ns / (double)kernels / 1e3, (unsigned long long)short_);
	adv_evidence(f, "the saving is the time of those launch calls per step: an upper bound of "
			"what replaying them as one graph gives back");
	adv_try(f, "CUDA Graphs (torch.cuda.graphs, torch.compile(mode=\"reduce-overhead\")), "
		   "kernel fusion (torch.compile), or a larger batch per kernel");
	adv_command(f, in, "--view kernel --view nvprof");
}

const struct adv_rule adv_rule_gpu_starved = {
	.id = "gpu-starved",
	.title = "GPU idle while the host is busy (GPU starvation)",
	.definition = "per trace with GPU work, its counted steps less the union of its GPU work "
		      "(kernels, copies, sets, communication) inside them, against the steps; the "
		      "host's outermost operators ranked by their time inside the steps while the GPU "
		      "was idle; saving: the idle time per counted step, an upper bound",
	.threshold = "the GPU idle at least 20 % of the counted steps, and the host busy (operators, "
		     "CUDA calls, data loading, host communication) in at least half of that idle "
		     "time",
	.why = "a training step that keeps its GPU busy leaves it idle only between steps and "
	       "around synchronisations; a fifth of the step idle is time the GPU could have "
	       "worked; and only when the host was working meanwhile did the GPU wait for the "
	       "host (an idle host too is a sleep, I/O or another process: not this finding)",
	.run = starved_run,
};

const struct adv_rule adv_rule_launch_bound = {
	.id = "launch-bound",
	.title = "Launch-bound steps: many kernels shorter than their launch",
	.definition = "the counted kernels tied to their launching call: how many ran shorter than "
		      "the call took on the host; saving: those calls' time per step (the window's "
		      "time / its steps), an upper bound",
	.threshold = "at least 100 kernels per step, and half of them shorter than their launch",
	.why = "a kernel shorter than its launch leaves the GPU waiting for the next one whatever "
	       "the GPU's speed; with few kernels per step the launches cost little",
	.run = launch_bound_run,
};
