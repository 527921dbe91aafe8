/*
 * rules_dist.c - see rules.h: a job's ranks.
 *
 * straggler: the Distributed view's verdict (verdict.h), never a rule of
 * its own: a finding exactly when the view names a straggler, with the
 * view's figures (its cost per step is the saving).
 *
 * exposed-communication: communication that no computation hides. For a
 * job, each rank's Communication part (dist.h: its own communication, not
 * overlapped and not waiting for another rank; the Distributed view's
 * per-rank column), the median over the ranks; for one program with
 * communication, the Distributed view's one-program figures: its
 * communication less what overlapped computation, per step.
 */
#include "lib/analysis/advise/rules.h"

#include "lib/analysis/dist/dist.h"
#include "lib/analysis/views/view_distributed.h"

#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- straggler ---------------------------------------------------------------------- */

static const char *const straggler_try[DIST_NPARTS] = {
	[DIST_COMP] = "It computes longer than the others: compare its operators and kernels with "
		      "another rank's (summary RANKFILE --view operator); look for uneven shards "
		      "(sequence lengths, padding, a larger last batch), a slower or throttled GPU "
		      "(clocks, temperature), or another process on its device.",
	[DIST_DATA] = "It waits longer for data: more DataLoader workers (num_workers), "
		      "pin_memory=True, prefetch_factor, a faster local copy of its shard; check its "
		      "storage and that the shards are even.",
	[DIST_HOST] = "It spends longer on the host outside operators: work only this rank does "
		      "(logging, checkpointing, evaluation on rank 0: make it asynchronous or spread "
		      "it), Python overhead or garbage collection in its loop.",
	[DIST_COMM] = "Its own communication is slower: check its link (NIC, NVLink / PCIe "
		      "topology, NCCL_DEBUG=INFO's rings), its placement on the nodes, and what else "
		      "shares its network.",
	[DIST_CONTENTION] = "Its CPUs are taken by others (runnable but not running): fewer "
			    "threads (OMP_NUM_THREADS, torch.set_num_threads), pin the ranks to "
			    "their cores (taskset, numactl), look for other jobs on its node.",
};

static void straggler_run(const struct adv_input *in, struct adv_list *out)
{
	const struct job_dist *d = in->d;
	if (!d || d->v.code != DIST_NAMED || d->v.cand < 0)
		return;
	const struct dist_verdict *v = &d->v;
	int32_t rank = d->j->ranks[v->cand].rank;
	char b1[32], b2[32], b3[32], pw[32], steps[160];
	const char *kind = v->kind == DIST_KIND_INTERMITTENT ? "intermittent" : "consistent";
	/* the time, not a share: the finding's share is of advise's median
	 * step (the Saving line), the verdict's of the job's mean step (the
	 * cost line below, which names it) */
	char cost[32];
	struct adv_finding *f =
		adv_add(out, &adv_rule_straggler, in, v->cost,
			"rank %d held the job back in %zu of %zu steps (%s), by %s: the job would "
			"take %s less per step were it as fast as the others' median",
			rank, v->nheld, v->k, kind, dist_part_name(v->cause),
			adv_time(cost, sizeof(cost), v->cost));
	adv_evidence(f, "rank %d; cause: %s%s (+%s per step of its excess of +%s)", rank,
		     dist_part_name(v->cause), v->by_contention ? ", named on busy time with contention" : "",
		     adv_time(b1, sizeof(b1), v->part[v->cause]),
		     adv_time(b2, sizeof(b2), fmax(v->excess, 0)));
	dist_p_words(pw, sizeof(pw), v->p);
	adv_evidence(f, "%s straggler, %s (sign tests over %zu compared steps, Bonferroni over %u "
			"ranks)",
		     kind, pw, v->k, d->n);
	job_dist_step_list(steps, sizeof(steps), d, v->held, 12);
	adv_evidence(f, "held the job back in %zu of %zu steps: %s", v->nheld, v->k, steps);
	adv_evidence(f, "busy %s per step against the others' median %s; the others wait %s per "
			"step for it",
		     adv_time(b1, sizeof(b1), v->busy), adv_time(b2, sizeof(b2), v->median),
		     adv_time(b3, sizeof(b3), v->others_wait));
	adv_evidence(f, "its cost: %s of the job's mean step of %s (%.1f %%)",
		     adv_time(b1, sizeof(b1), v->cost),
		     adv_time(b2, sizeof(b2), v->job_step), v->cost_pct);
	adv_try(f, "%s", straggler_try[v->cause < DIST_NPARTS ? v->cause : DIST_COMP]);
	adv_command(f, in, "--view distributed");
}

const struct adv_rule adv_rule_straggler = {
	.id = "straggler",
	.title = "A straggler rank",
	.definition = "The Distributed view's straggler verdict for a job of two ranks or more: step "
		      "by step, each rank's busy time (its step less its wait in collectives) against "
		      "the median of the others'; its cause is the part (computation, data loading, "
		      "host time outside operators, its own communication, CPU contention) of the "
		      "largest excess; the saving is the verdict's cost, the time per step the job "
		      "would save were the rank as fast as the others' median.",
	.threshold = "Exactly when the Distributed view names a straggler: its cost at least 5 % of "
		     "the job's step, a sign test over its steps (or a sign-flip test over those "
		     "beyond the noise) below p = 0.05 / ranks, and the others wait for it.",
	.why = "In a synchronous job every rank waits for the slowest, so one rank's excess costs "
	       "all of them; the tests keep the false claims on balanced jobs at the 5 % level "
	       "(measured on synthetic noise), and 5 % of the step is where a fix is worth the "
	       "search.",
	.run = straggler_run,
};

/* ---- exposed-communication ---------------------------------------------------------------- */

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The column of t whose key is key; -1 when none. */
static int col_of(const struct table *t, const char *key)
{
	for (unsigned c = 0; c < t->ncols; c++)
		if (strcmp(t->cols[c].key, key) == 0)
			return (int)c;
	return -1;
}

/* The Collective Summary's rows (job_dist_collectives()), the longest first,
 * as evidence: op, backend, calls, bytes per call, total and wait per rank. */
static void collective_evidence(struct adv_finding *f, const struct job_dist *d, unsigned max)
{
	struct view_opts o;
	memset(&o, 0, sizeof(o));
	o.unit = TIME_UNIT_MS;
	struct table *t = job_dist_collectives(d, &o);
	int op = col_of(t, "collective"), be = col_of(t, "backend"), calls = col_of(t, "calls"),
	    bytes = col_of(t, "bytes_per_call"), total = col_of(t, "total_per_rank"),
	    wait = col_of(t, "wait_per_rank"), group = col_of(t, "group_size");
	unsigned shown = 0;
	for (size_t p = 0; p < t->nparts && op >= 0 && be >= 0 && calls >= 0 && bytes >= 0 &&
			   total >= 0 && wait >= 0 && group >= 0;
	     p++)
		for (size_t i = 0; i < t->parts[p].nrows && shown < max; i++, shown++) {
			const struct tcell *c = t->parts[p].rows[i].cells;
			char b1[32], b2[48] = "none", by[64] = "bytes unknown", bt[32];
			if (c[bytes].set)
				snprintf(by, sizeof(by), "%s per call",
					 table_bytes_text(bt, sizeof(bt), c[bytes].v.bytes));
			adv_evidence(f, "%s (%s, group of %llu): %llu call%s, %s, %s per rank in all, "
					"%s of it waiting",
				     c[op].v.text, c[be].v.text, (unsigned long long)c[group].v.count,
				     (unsigned long long)c[calls].v.count, c[calls].v.count == 1 ? "" : "s",
				     by,
				     adv_time(b1, sizeof(b1), c[total].v.ns),
				     c[wait].v.ns > 0 ? adv_time(b2, sizeof(b2), c[wait].v.ns) : b2);
		}
	table_free(t);
}

struct kw_row {
	uint32_t name;
	uint64_t calls, ns;
};

/* One program: its communication GPU work by name, the longest first (at
 * most max), as evidence. */
static void kernel_evidence(struct adv_finding *f, const struct analysis *a, unsigned max)
{
	const struct store *s = &a->store;
	struct kw_row *rows = NULL;
	size_t n = 0;
	struct analysis_gpu_walk w;
	for (analysis_gpu_walk_init(&w, a); analysis_gpu_next(&w);) {
		if (!(w.flags & GPU_COMM))
			continue;
		uint32_t name = s->descs[store_ev_desc(w.t, w.i)].name;
		size_t k = 0;
		while (k < n && rows[k].name != name)
			k++;
		if (k == n) {
			rows = xrealloc(rows, (n + 1) * sizeof(*rows));
			rows[n].name = name;
			rows[n].calls = rows[n].ns = 0;
			n++;
		}
		rows[k].calls++;
		rows[k].ns += w.t->dur[w.i];
	}
	for (unsigned shown = 0; shown < max && shown < n; shown++) {
		size_t best = shown;
		for (size_t k = shown + 1; k < n; k++)
			if (rows[k].ns > rows[best].ns)
				best = k;
		if (best != shown) {
			struct kw_row x = rows[shown];
			rows[shown] = rows[best];
			rows[best] = x;
		}
		char b[32];
		adv_evidence(f, "%s: %llu runs, %s in all", store_name(s, rows[shown].name),
			     (unsigned long long)rows[shown].calls,
			     adv_time(b, sizeof(b), (double)rows[shown].ns));
	}
	free(rows);
}

static const char exposed_try[] =
	"Overlap it with the backward pass: DDP does when its buckets fill while backward still "
	"runs (bucket_cap_mb: smaller buckets start sooner, larger ones cost fewer calls); "
	"communicate less often (gradient accumulation with no_sync() on the steps between); send "
	"less (a DDP communication hook: fp16 / bf16 compression, PowerSGD); and check the "
	"link's bandwidth (the Collective Summary's busbw).";

static void exposed_job(const struct adv_input *in, struct adv_list *out)
{
	const struct job_dist *d = in->d;
	double *v = xmalloc((d->n ? d->n : 1) * sizeof(*v));
	double *cont = xmalloc((d->n ? d->n : 1) * sizeof(*cont));
	uint32_t n = 0;
	uint64_t comm = 0, overlap = 0;
	for (uint32_t ri = 0; ri < d->n; ri++) {
		const struct dist_rank *r = &d->r[ri];
		if (!r->counted)
			continue;
		cont[n] = r->part[DIST_CONTENTION];
		v[n++] = r->part[DIST_COMM];
		comm += r->f.comm;
		overlap += dist_sub0(r->f.comp + r->f.comm, r->f.busy);
	}
	if (!n) {
		free(v);
		free(cont);
		return;
	}
	qsort(v, n, sizeof(*v), dbl_cmp);
	qsort(cont, n, sizeof(*cont), dbl_cmp);
	double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	double mcont = n % 2 ? cont[n / 2] : (cont[n / 2 - 1] + cont[n / 2]) / 2;
	double lo = v[0], hi = v[n - 1];
	free(v);
	free(cont);
	double step = (double)in->step_ns;
	/* The Distributed view carves a rank's wait for a CPU (Contention) out
	 * of its host parts in proportion to their size, Communication among
	 * them: beside other programs the column shrinks by the share of the
	 * step spent runnable, though the communication exposed is the same
	 * (a 2-rank gloo job of 1.1 ms exposed a 3.1 ms step read 0.5 ms of
	 * an 8.1 ms step beside two spinning processes, 3.6 ms of it
	 * contention). So the share is of the step less that contention: the
	 * step the job would have on its own CPUs. */
	double base = fmax(step - mcont, 0.5 * step);
	if (!(median > 0.10 * base))
		return;
	char b1[32], b2[32], b3[32];
	struct adv_finding *f =
		adv_add(out, &adv_rule_exposed_comm, in, median,
			"communication not overlapped with computation takes %s per step (%.1f %% of "
			"the step), the median over %u ranks",
			adv_time(b1, sizeof(b1), median), 100.0 * median / step, n);
	adv_evidence(f, "exposed communication per step: median %s, from %s to %s over the ranks "
			"(the Distributed view's Communication column: not overlapped, not waiting)",
		     adv_time(b1, sizeof(b1), median), adv_time(b2, sizeof(b2), lo),
		     adv_time(b3, sizeof(b3), hi));
	if (mcont > 0)
		adv_evidence(f, "%.1f %% of the step less the ranks' wait for a CPU (median %s per step, "
				"the Contention column)",
			     100.0 * median / base, adv_time(b1, sizeof(b1), mcont));
	adv_evidence(f, "overlap: %.1f %% of all communication ran while computation did",
		     comm ? 100.0 * (double)overlap / (double)comm : 0.0);
	collective_evidence(f, d, ADV_MAX_EVIDENCE - 3);
	adv_try(f, "%s", exposed_try);
	adv_command(f, in, "--view distributed");
}

static void exposed_program(const struct adv_input *in, struct adv_list *out)
{
	const struct analysis *a = in->a;
	analysis_types(a);
	if (!a->from_steps || !a->steps || (!a->gpu.has_gpu && !a->host_comm.calls))
		return;
	struct dist_src src;
	dist_sources(a, &src);
	uint64_t comm, comp, overlap;
	dist_program_fig(a, &src, &comm, &comp, &overlap);
	if (!comm)
		return;
	double exposed = (double)dist_sub0(comm, overlap) / (double)a->steps;
	double step = (double)in->step_ns;
	if (!(exposed > 0.10 * step))
		return;
	char b1[32], b2[32], b3[32];
	struct adv_finding *f =
		adv_add(out, &adv_rule_exposed_comm, in, exposed,
			"communication not overlapped with computation takes %s per step (%.1f %% of "
			"the step)",
			adv_time(b1, sizeof(b1), exposed), 100.0 * exposed / step);
	adv_evidence(f, "over %llu steps: communication %s, computation %s, overlap %s (%.1f %% "
			"of the communication)",
		     (unsigned long long)a->steps, adv_time(b1, sizeof(b1), (double)comm),
		     adv_time(b2, sizeof(b2), (double)comp), adv_time(b3, sizeof(b3), (double)overlap),
		     100.0 * (double)overlap / (double)comm);
	if (src.gpu_comp && !src.host_exec)
		kernel_evidence(f, a, 3);
	adv_evidence(f, "one program: no wait is known (give every rank's trace for the job's "
			"figures)");
	adv_try(f, "%s", exposed_try);
	adv_command(f, in, "--view distributed");
}

static void exposed_run(const struct adv_input *in, struct adv_list *out)
{
	if (!in->step_ns)
		return;
	if (in->d)
		exposed_job(in, out);
	else
		exposed_program(in, out);
}

const struct adv_rule adv_rule_exposed_comm = {
	.id = "exposed-communication",
	.title = "Communication not overlapped with computation",
	.definition = "For a job: each rank's own communication that no computation overlapped and "
		      "that was not waiting for another rank (the Distributed view's Communication "
		      "column), per counted step, the median over the ranks; for one program: its "
		      "communication less its overlap with computation (the Distributed view's "
		      "figures) per step. With the collectives (calls, bytes per call, time and wait "
		      "per rank) and the overlap.",
	.threshold = "Over 10 % of the median step; for a job, of the median step less the ranks' "
		     "median CPU contention (at least half the step).",
	.why = "Communication the GPU or CPU is not computing under is time every step pays in "
	       "full; below 10 % (the TensorBoard profiler's bar) the fixes, bucket tuning and "
	       "compression, rarely pay for the change. The Distributed view takes a rank's wait for "
	       "a CPU out of its parts, communication among them, in proportion: the step less "
	       "that wait keeps the share the job's own.",
	.run = exposed_run,
};
