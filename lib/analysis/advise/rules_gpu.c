/*
 * rules_gpu.c - see rules.h: the CUDA calls that hold the host inside the
 * steps.
 *
 * Both rules look at the CUDA API calls (host events of type CudaRuntime)
 * that lie in the counted steps (perf.h: the steps after --skip-steps) of
 * their own process (same file, same pid; a loader thread's calls count in
 * its process's steps), clipped to them:
 *  - sync-calls: the synchronisation calls (cudaDeviceSynchronize,
 *    cudaStreamSynchronize, cudaEventSynchronize, cuCtxSynchronize, ...)
 *    and the copies and sets without "Async" in their name (cudaMemcpy,
 *    cudaMemset, cuMemcpyDtoH_v2, ...): the host waits in them;
 *  - pageable-copies: the asynchronous copies (the call is named ...Async,
 *    or its copy says async) with pageable host memory at either end: the
 *    driver stages them through a pinned buffer, so the call returns only
 *    once the copy is done (synchronous in effect).
 * The operator a call ran under is the outermost Operator range around it
 * on its thread (aten::item for .item(), aten::to for .cpu()): the user's
 * line of code; "(no operator)" when none is open.
 */
#include "lib/analysis/advise/rules.h"

#include "lib/analysis/views/perf.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what both share ----------------------------------------------------------------- */

/* A figure per name (a call's, or an operator's). */
struct gr_row {
	uint32_t name; /* store name id */
	uint64_t calls, ns, gpu_ns, bytes;
};

struct gr_rows {
	struct gr_row *v;
	size_t n;
};

static struct gr_row *gr_row_of(struct gr_rows *r, uint32_t name)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].name == name)
			return &r->v[i];
	r->v = xrealloc(r->v, (r->n + 1) * sizeof(*r->v));
	struct gr_row *x = &r->v[r->n++];
	memset(x, 0, sizeof(*x));
	x->name = name;
	return x;
}

static int gr_row_cmp(const void *x, const void *y)
{
	const struct gr_row *a = x, *b = y;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return (a->name > b->name) - (a->name < b->name);
}

/* The counted steps of each host track's process, sealed (empty: none). */
struct gr_steps {
	struct ivl_set *of;    /* by store track */
	uint32_t ntracks;
};

static void gr_steps_init(struct gr_steps *g, const struct adv_input *in)
{
	const struct store *s = &in->a->store;
	g->ntracks = s->ntracks;
	g->of = xcalloc(s->ntracks ? s->ntracks : 1, sizeof(*g->of));
	struct perf p;
	perf_compute(&p, in->a, in->skip);
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		ivl_set_init(&g->of[ti]);
		if (t->kind != STORE_TRACK_HOST)
			continue;
		for (size_t k = 0; k < p.counted; k++) {
			const struct perf_step *st = &p.step[k];
			if (st->file == t->file && s->tracks[st->track].pid == t->pid)
				ivl_set_add(&g->of[ti], st->start_ns, st->start_ns + st->batch_ns);
		}
		ivl_set_normalize(&g->of[ti]);
		ivl_set_seal(&g->of[ti]);
	}
	perf_free(&p);
}

static void gr_steps_free(struct gr_steps *g)
{
	for (uint32_t ti = 0; ti < g->ntracks; ti++)
		ivl_set_free(&g->of[ti]);
	free(g->of);
}

/* The outermost Operator range around event i of t, as a store name id;
 * 0 ("") when none. */
static uint32_t gr_operator(const struct store *s, const struct store_track *t, size_t i)
{
	uint32_t name = 0;
	for (uint32_t p = t->parent[i]; p != STORE_NONE; p = t->parent[p])
		if (store_ev_type(s, t, p) == TRACE_EV_OPERATOR)
			name = s->descs[store_ev_desc(t, p)].name;
	return name;
}

static const char *gr_name(const struct store *s, uint32_t name)
{
	return name ? store_name(s, name) : "(no operator)";
}


/* Whether name is prefix itself, or prefix and a CUPTI version ("_v3020"). */
static int gr_is(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(name, prefix, n) == 0 && (name[n] == '\0' || strncmp(name + n, "_v", 2) == 0);
}

/* The evidence line of the operators: "under: to_cpu 0.12 ms (1 call),
 * ..." with the top 3 by time. */
static void gr_operators(struct adv_finding *f, const struct store *s, struct gr_rows *ops)
{
	qsort(ops->v, ops->n, sizeof(*ops->v), gr_row_cmp);
	char line[1024];
	size_t used = (size_t)snprintf(line, sizeof(line), "under the operators:");
	for (size_t i = 0; i < ops->n && i < 3 && used < sizeof(line); i++) {
		char t[32];
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s %s %s (%llu call%s)",
					 i ? "," : "", gr_name(s, ops->v[i].name),
					 adv_time(t, sizeof(t), (double)ops->v[i].ns),
					 (unsigned long long)ops->v[i].calls, ops->v[i].calls == 1 ? "" : "s");
	}
	if (ops->n > 3 && used < sizeof(line))
		snprintf(line + used, sizeof(line) - used, ", %zu more", ops->n - 3);
	adv_evidence(f, "%s", line);
}

/* ---- sync-calls ---------------------------------------------------------------------- */

/* Calls in which the host waits for the GPU, by name (the list above). */
static int gr_is_sync_call(const char *name)
{
	static const char *const syncs[] = {
		"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
		"cudaThreadSynchronize", "cuCtxSynchronize",      "cuStreamSynchronize",
		"cuEventSynchronize",    "hipDeviceSynchronize",  "hipStreamSynchronize",
		"hipEventSynchronize",
	};
	for (size_t i = 0; i < sizeof(syncs) / sizeof(syncs[0]); i++)
		if (gr_is(name, syncs[i]))
			return 1;
	static const char *const copies[] = {"cudaMemcpy", "cudaMemset", "cuMemcpy",
					     "cuMemset",   "hipMemcpy",  "hipMemset"};
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++)
		if (strncmp(name, copies[i], strlen(copies[i])) == 0)
			return strstr(name, "Async") == NULL;
	return 0;
}

static void sync_calls_run(const struct adv_input *in, struct adv_list *out)
{
	if (!in->step_ns || !in->steps)
		return;
	const struct store *s = &in->a->store;
	struct gr_steps g;
	gr_steps_init(&g, in);
	struct gr_rows calls = {0}, ops = {0};
	uint64_t n = 0, ns = 0;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_HOST || !g.of[ti].n)
			continue;
		for (size_t i = 0; i < t->n; i++) {
			if (store_ev_type(s, t, i) != TRACE_EV_CUDA_RUNTIME || store_ev_is_instant(t, i))
				continue;
			uint32_t name = s->descs[store_ev_desc(t, i)].name;
			if (!gr_is_sync_call(store_name(s, name)))
				continue;
			uint64_t in_steps = ivl_set_overlap(&g.of[ti], t->start[i], store_ev_end(t, i));
			if (!in_steps)
				continue;
			struct gr_row *c = gr_row_of(&calls, name);
			c->calls++;
			c->ns += in_steps;
			struct gr_row *o = gr_row_of(&ops, gr_operator(s, t, i));
			o->calls++;
			o->ns += in_steps;
			n++;
			ns += in_steps;
		}
	}
	gr_steps_free(&g);
	double per_step = (double)ns / (double)in->steps;
	double calls_per_step = (double)n / (double)in->steps;
	if (n && calls_per_step >= 1.0 && per_step > 0.02 * (double)in->step_ns) {
		char b1[32], b2[32];
		struct adv_finding *f =
			adv_add(out, &adv_rule_sync_calls, in, per_step,
				"%.1f synchronous CUDA calls per step hold the host %s per step "
				"(%.1f %% of the step)",
				calls_per_step, adv_time(b1, sizeof(b1), per_step),
				100.0 * per_step / (double)in->step_ns);
		qsort(calls.v, calls.n, sizeof(*calls.v), gr_row_cmp);
		for (size_t i = 0; i < calls.n && f->nevidence < ADV_MAX_EVIDENCE - 2; i++)
			adv_evidence(f, "%s: %.2f calls per step, %s in all (%s per step)",
				     store_name(s, calls.v[i].name),
				     (double)calls.v[i].calls / (double)in->steps,
				     adv_time(b1, sizeof(b1), (double)calls.v[i].ns),
				     adv_time(b2, sizeof(b2), (double)calls.v[i].ns / (double)in->steps));
		gr_operators(f, s, &ops);
		adv_evidence(f, "over %zu counted steps, median step %s; the time is the calls' own, "
				"clipped to the steps: an upper bound of what the host gets back",
			     in->steps, adv_time(b1, sizeof(b1), (double)in->step_ns));
		adv_try(f, "Keep .item(), .cpu(), .tolist() and printing tensors out of the step (log "
			   "every N steps, or keep running sums on the GPU); copy with "
			   "non_blocking=True from pinned memory; call torch.cuda.synchronize() only to "
			   "time.");
		adv_command(f, in, "--view memory-manipulation");
	}
	free(calls.v);
	free(ops.v);
}

const struct adv_rule adv_rule_sync_calls = {
	.id = "sync-calls",
	.title = "Synchronous CUDA calls inside the steps",
	.definition = "The CUDA API calls in which the host waits for the GPU: cudaDeviceSynchronize, "
		      "cudaStreamSynchronize, cudaEventSynchronize (and cuCtxSynchronize, "
		      "cuStreamSynchronize, ... of the driver API), and the copies and sets without "
		      "Async (cudaMemcpy, cudaMemset, cuMemcpyDtoH_v2, ...), their time clipped to "
		      "the counted steps of their process, per counted step; with the operators "
		      "they ran under (aten::item is .item(), aten::to .cpu()).",
	.threshold = "Their time is over 2 % of the median step and there is at least 1 such call "
		     "per step on average.",
	.why = "While the host waits it queues no work, so the GPU runs dry once its queue ends; "
	       "one wait per step costs little when it is short, so a finding needs both the time "
	       "(2 %, where removing them becomes measurable against step-time noise) and a call "
	       "in every step (a habit of the loop, not a one-off at a checkpoint).",
	.run = sync_calls_run,
};

/* ---- pageable-copies ------------------------------------------------------------------ */

struct pg_call {
	uint32_t track, call;
};

static void pageable_copies_run(const struct adv_input *in, struct adv_list *out)
{
	if (!in->step_ns || !in->steps || !in->a->gpu.has_gpu)
		return;
	const struct analysis *a = in->a;
	const struct store *s = &a->store;
	struct gr_steps g;
	gr_steps_init(&g, in);
	struct gr_rows calls = {0}, ops = {0};
	uint64_t n = 0, ns = 0, gpu_ns = 0, bytes = 0;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		const struct gpu_track *gt = &a->gpu.tracks[ti];
		if (t->kind != STORE_TRACK_HOST || !g.of[ti].n)
			continue;
		/* the launches are sorted by call: one call's copies in a row */
		for (size_t k = 0; k < gt->nlaunches;) {
			uint32_t call = gt->launches[k].call;
			uint64_t cgpu = 0, cbytes = 0;
			int pageable = 0, async = 0;
			for (; k < gt->nlaunches && gt->launches[k].call == call; k++) {
				const struct store_track *w = &s->tracks[gt->launches[k].track];
				uint32_t wi = gt->launches[k].index;
				if (store_ev_type(s, w, wi) != TRACE_EV_MEMCPY)
					continue;
				const struct store_ext *x = store_ev_ext(w, wi);
				if (!x)
					continue;
				if (x->u.copy.src_kind == TRACE_MEM_PAGEABLE ||
				    x->u.copy.dst_kind == TRACE_MEM_PAGEABLE) {
					pageable = 1;
					async |= x->u.copy.is_async;
					cgpu += w->dur[wi];
					cbytes += x->u.copy.bytes;
				}
			}
			if (!pageable || store_ev_type(s, t, call) != TRACE_EV_CUDA_RUNTIME)
				continue;
			uint32_t name = s->descs[store_ev_desc(t, call)].name;
			const char *cname = store_name(s, name);
			/* a synchronous call is sync-calls' */
			if (gr_is_sync_call(cname) || !(async || strstr(cname, "Async")))
				continue;
			uint64_t in_steps = ivl_set_overlap(&g.of[ti], t->start[call],
							    store_ev_end(t, call));
			if (!in_steps)
				continue;
			struct gr_row *c = gr_row_of(&calls, name);
			c->calls++;
			c->ns += in_steps;
			c->gpu_ns += cgpu;
			c->bytes += cbytes;
			struct gr_row *o = gr_row_of(&ops, gr_operator(s, t, call));
			o->calls++;
			o->ns += in_steps;
			n++;
			ns += in_steps;
			gpu_ns += cgpu;
			bytes += cbytes;
		}
	}
	gr_steps_free(&g);
	double steps = (double)in->steps, step = (double)in->step_ns;
	double per_step = (double)ns / steps, gpu_per_step = (double)gpu_ns / steps;
	if (n && (double)n / steps >= 1.0 &&
	    (per_step > 0.01 * step || gpu_per_step > 0.01 * step)) {
		char b1[32], b2[32];
		struct adv_finding *f =
			adv_add(out, &adv_rule_pageable_copies, in, per_step,
				"%.1f asynchronous copies per step from or to pageable host memory "
				"(synchronous in effect): the calls take %s per step, the copies %s",
				(double)n / steps, adv_time(b1, sizeof(b1), per_step),
				adv_time(b2, sizeof(b2), gpu_per_step));
		qsort(calls.v, calls.n, sizeof(*calls.v), gr_row_cmp);
		for (size_t i = 0; i < calls.n && f->nevidence < ADV_MAX_EVIDENCE - 3; i++)
			adv_evidence(f, "%s: %.2f calls per step, %llu bytes per call, calls %s and "
					"copies %s in all",
				     store_name(s, calls.v[i].name), (double)calls.v[i].calls / steps,
				     (unsigned long long)(calls.v[i].bytes / calls.v[i].calls),
				     adv_time(b1, sizeof(b1), (double)calls.v[i].ns),
				     adv_time(b2, sizeof(b2), (double)calls.v[i].gpu_ns));
		adv_evidence(f, "%llu copies, %llu bytes in all, over %zu counted steps (median step "
				"%s)",
			     (unsigned long long)n, (unsigned long long)bytes, in->steps,
			     adv_time(b1, sizeof(b1), step));
		gr_operators(f, s, &ops);
		adv_try(f, "Pin the host memory: DataLoader(..., pin_memory=True), or "
			   "tensor.pin_memory() once for a buffer reused every step; then "
			   ".to(device, non_blocking=True) overlaps the copy with the GPU's work.");
		adv_command(f, in, "--view memory-manipulation");
	}
	free(calls.v);
	free(ops.v);
}

const struct adv_rule adv_rule_pageable_copies = {
	.id = "pageable-copies",
	.title = "Asynchronous copies from pageable memory",
	.definition = "The asynchronous copy calls (cudaMemcpyAsync and the like: named Async, or "
		      "their copy says async) whose copy has pageable host memory at one end (the "
		      "trace's copy kind), in the counted steps of their process: the calls' host "
		      "time and their copies' GPU time per counted step, bytes, and the operators "
		      "they ran under.",
	.threshold = "At least 1 such copy per step on average, and the calls' time or the copies' "
		     "time over 1 % of the median step.",
	.why = "A copy from pageable memory is staged through a pinned buffer by the driver: the "
	       "call returns only when the copy is done, so it neither overlaps nor queues ahead. "
	       "Pinning is a one-line change, so a smaller share (1 %) is worth saying, once it is "
	       "a habit of every step.",
	.run = pageable_copies_run,
};
