/* rules_memory.c - see rules.h: memory in use (memory-peak, memory-growth). */
#include "lib/analysis/advise/rules.h"
#include "lib/analysis/views/perf.h"
#include "lib/analysis/views/view_memory.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static int i64_cmp(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* The store's device of a pool: its total memory, 0 unknown. */
static uint64_t pool_total(const struct store *s, const struct view_memory_pool *p)
{
	for (uint32_t d = 0; d < s->ndevices; d++)
		if (s->devices[d].known && (int32_t)s->devices[d].id == p->device &&
		    s->devices[d].host == p->host)
			return s->devices[d].props.total_memory;
	return 0;
}

/* The operators that allocated the most, net, by name (the Memory view's
 * self figures): up to 3 evidence lines. */
static void top_allocators(struct adv_finding *f, const struct analysis *a)
{
	const struct store *s = &a->store;
	struct view_memory_ops *mo = view_memory_ops_new(a);
	if (!view_memory_ops_any(mo)) {
		view_memory_ops_free(mo);
		return;
	}
	struct top {
		const char *name;
		int64_t net;
	} t[3] = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
	for (uint32_t d = 0; d < s->ndescs; d++) {
		if (s->descs[d].type != TRACE_EV_OPERATOR)
			continue;
		const char *name = store_name(s, s->descs[d].name);
		const struct view_memory_op *op = view_memory_op(mo, name);
		int64_t net = op->self_allocated - op->self_freed;
		for (int k = 0; k < 3; k++) {
			if (t[k].name && strcmp(t[k].name, name) == 0)
				break;
			if (net > t[k].net) {
				memmove(&t[k + 1], &t[k], (size_t)(2 - k) * sizeof(t[0]));
				t[k] = (struct top){name, net};
				break;
			}
		}
	}
	for (int k = 0; k < 3 && t[k].name; k++)
		adv_evidence(f, "%s: %.1f MiB allocated inside it, net of what it freed there (where "
				"to look first)",
			     t[k].name, (double)t[k].net / MIB);
	view_memory_ops_free(mo);
}

static void raise_severity(struct adv_finding *f, enum adv_severity floor)
{
	if (f->severity < floor)
		f->severity = floor;
}

static void peak_run(const struct adv_input *in, struct adv_list *out)
{
	const struct analysis *a = in->a;
	struct view_memory_pools pools;
	view_memory_pools(a, &pools);
	for (uint32_t k = 0; k < pools.n; k++) {
		const struct view_memory_pool *p = &pools.v[k];
		uint64_t total = p->device >= 0 ? pool_total(&a->store, p) : 0;
		if (!p->shown || !total || p->peak <= 0 || (double)p->peak < 0.90 * (double)total)
			continue;
		double pct = 100.0 * (double)p->peak / (double)total;
		struct adv_finding *f = adv_add(out, &adv_rule_memory_peak, in, 0,
						"%s: peak %.1f MiB in use, %.1f %% of its %.1f MiB",
						p->label, (double)p->peak / MIB, pct, (double)total / MIB);
		raise_severity(f, pct >= 95.0 ? ADV_HIGH : ADV_MEDIUM);
		adv_evidence(f, "no time to save: a larger batch or model will not fit, and the "
				"allocator's retries and fragmentation cost time near the limit");
		top_allocators(f, a);
		adv_try(f, "activation checkpointing (torch.utils.checkpoint), mixed precision, a "
			   "smaller micro-batch with gradient accumulation, zero_grad(set_to_none=True), "
			   "or sharding the optimizer state (ZeRO, FSDP)");
		adv_command(f, in, "--view memory");
	}
	view_memory_pools_free(&pools);
}

/* Bytes in use at the end of each counted step, from the pool's levels. */
static size_t step_end_levels(const struct view_memory_pool *p, const struct perf *pf,
			      int64_t *u)
{
	size_t n = 0;
	for (size_t i = 0; i < pf->counted; i++) {
		uint64_t end = pf->step[i].start_ns + pf->step[i].batch_ns;
		size_t lo = 0, hi = p->n; /* the first level after end */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (p->levels[mid].ts <= end)
				lo = mid + 1;
			else
				hi = mid;
		}
		u[n++] = lo ? p->levels[lo - 1].in_use : 0;
	}
	return n;
}

static void growth_run(const struct adv_input *in, struct adv_list *out)
{
	const struct analysis *a = in->a;
	if (in->steps < 8 || a->store.nfiles != 1)
		return; /* steps of several files pooled are not one sequence */
	struct perf pf;
	perf_compute(&pf, a, in->skip);
	struct view_memory_pools pools;
	view_memory_pools(a, &pools);
	int64_t *u = xmalloc((pf.counted ? pf.counted : 1) * sizeof(*u));
	int64_t *d = xmalloc((pf.counted ? pf.counted : 1) * sizeof(*d));
	for (uint32_t k = 0; k < pools.n && pf.counted >= 8; k++) {
		const struct view_memory_pool *p = &pools.v[k];
		if (!p->n)
			continue;
		size_t n = step_end_levels(p, &pf, u), up = 0;
		for (size_t i = 0; i + 1 < n; i++) {
			d[i] = u[i + 1] - u[i];
			up += d[i] > 0;
		}
		qsort(d, n - 1, sizeof(*d), i64_cmp);
		int64_t med = (n - 1) % 2 ? d[(n - 1) / 2] : (d[(n - 1) / 2 - 1] + d[(n - 1) / 2]) / 2;
		int64_t grown = u[n - 1] - u[0];
		/* a steady rise: most steps end higher, by a typical amount, and
		 * 1 MiB at least over the counted steps */
		if (med <= 0 || (double)up < 0.75 * (double)(n - 1) || grown < (int64_t)MIB)
			continue;
		uint64_t total = p->device >= 0 ? pool_total(&a->store, p) : 0;
		struct adv_finding *f = adv_add(out, &adv_rule_memory_growth, in, 0,
						"%s: memory in use grows step over step, %.2f MiB a step "
						"(median), %.1f MiB over %zu counted steps",
						p->label, (double)med / MIB, (double)grown / MIB, n);
		raise_severity(f, ADV_MEDIUM);
		adv_evidence(f, "in use at the end of the first counted step %.1f MiB, of the last "
				"%.1f MiB; %zu of %zu steps ended higher than the one before",
			     (double)u[0] / MIB, (double)u[n - 1] / MIB, up, n - 1);
		if (total && total > (uint64_t)u[n - 1]) {
			double left = (double)(total - (uint64_t)u[n - 1]) / (double)med;
			adv_evidence(f, "at this rate its %.0f MiB are full in about %.0f more steps",
				     (double)total / MIB, left);
			if (left < 10000)
				raise_severity(f, ADV_HIGH);
		}
		top_allocators(f, a);
		adv_try(f, "look for tensors kept across steps: a loss or output appended to a list "
			   "without .detach() or .item(), a growing cache, hooks that store activations; "
			   "torch.cuda.memory_snapshot() shows who holds them");
		adv_command(f, in, "--view memory --view timeline");
	}
	free(u);
	free(d);
	view_memory_pools_free(&pools);
	perf_free(&pf);
}

const struct adv_rule adv_rule_memory_peak = {
	.id = "memory-peak",
	.title = "Peak GPU memory near the device's",
	.definition = "per GPU, the Memory Summary's peak in use in the window against the device's "
		      "total memory (its properties in the trace); severity high from 95 %, medium "
		      "below; no time saving",
	.threshold = "a peak of at least 90 % of the device's memory",
	.why = "within a tenth of the device's memory a larger batch or a longer sequence runs out "
	       "of memory, and the caching allocator frees and retries (cudaFree, synchronising) "
	       "before it fails",
	.run = peak_run,
};

const struct adv_rule adv_rule_memory_growth = {
	.id = "memory-growth",
	.title = "Memory in use growing step over step (a leak)",
	.definition = "per memory pool (each GPU, the host), the bytes in use at the end of each "
		      "counted step of a trace; the median of the step-to-step changes, and how many "
		      "are rises; the operators that allocated the most that they did not free; "
		      "severity medium, high when the GPU would be full within 10,000 steps at that "
		      "rate; no time saving",
	.threshold = "at least 8 counted steps, a positive median change, rises in at least 75 % "
		     "of the steps, and at least 1 MiB more in use at the last step's end than at "
		     "the first's",
	.why = "a training step frees what it allocates: a steady rise over most steps is memory "
	       "kept by the program (a leak), which ends in an out-of-memory error; a single rise "
	       "(a cache filling once) or noise does not rise in three steps out of four",
	.run = growth_run,
};
