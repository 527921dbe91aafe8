/* rules_cpu.c - see rules.h: the host's CPU (cpu-contention, oversubscription). */
#include "lib/analysis/advise/rules.h"
#include "lib/analysis/store/interval.h"
#include "lib/analysis/views/perf.h"

#include "common/error.h"
#include "formats/trace/trace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What both rules judge: the step thread's run-queue time (trace 2.1:
 * schedstat, sampled at each step's ends) over the counted steps that know
 * it, and who held the cores meanwhile (the sampled CPU counters, averaged
 * over those steps' time). */
struct cpu_judge {
	size_t known, over;          /* steps that know it; those that waited over 5 % */
	uint64_t runq, cpu, time, max;
	int waits;                   /* cpu-contention's bar */
	/* the counters over the steps' time; have: both series cover half of it */
	int have;
	double proc_pct;             /* the program's CPU, % of one core (all its series) */
	double sys_pct;              /* the hosts' busy CPU, % of their cores */
	double cores;                /* the hosts' cores */
	uint32_t ncpus, hosts;       /* the first file's CPUs; the hosts */
	double own;                  /* the program's share of the busy CPU, 0..1 */
	double threads;              /* its busy threads a host, estimated */
	uint32_t procs, ranks;       /* its processes alive during the steps; ranks among them */
	int oversub;                 /* its own threads fill the cores: oversubscription */
};

/* The program's own busy threads over the cores at which its wait is its
 * own doing (see oversub's why), and the hosts' least busy CPU for it. */
#define OVERSUB_RATIO 1.25
#define OVERSUB_BUSY_PCT 75.0

/* The integral of one series (sorted by time; a sample covers the time
 * since the one before it, the first since its file's start) over w, in
 * value x ns, and the part of w it covers. */
static double series_integral(const struct store *s, const struct store_counter *c, size_t n,
			      const struct ivl_set *w, uint64_t *covered)
{
	double integral = 0.0;
	uint64_t from = s->files[c[0].file].start_ns;
	*covered = 0;
	for (size_t k = 0; k < n; k++) {
		if (from < c[k].ts_ns) {
			uint64_t part = ivl_set_overlap(w, from, c[k].ts_ns);
			integral += c[k].value * (double)part;
			*covered += part;
		}
		from = c[k].ts_ns;
	}
	return integral;
}

/* The counters over w: the program's CPU (its series summed, over w's
 * length), each host's busy CPU (its files' series, over the time they
 * cover), weighted by the host's cores. 0 where a series is missing or
 * covers under half of w. */
static int judge_counters(const struct analysis *a, const struct ivl_set *w, struct cpu_judge *j)
{
	const struct store *s = &a->store;
	uint64_t len = ivl_set_measure(w);
	if (!len || !s->ncounters || !s->nfiles)
		return 0;
	struct store_counter *c = xmalloc(s->ncounters * sizeof(*c));
	size_t n = 0;
	for (size_t i = 0; i < s->ncounters; i++)
		if (s->counters[i].id == TRACE_CTR_CPU_PROCESS || s->counters[i].id == TRACE_CTR_CPU_SYSTEM)
			c[n++] = s->counters[i];
	qsort(c, n, sizeof(*c), store_counter_cmp);
	/* per file: its system series' integral and cover; the process series'
	 * integral and the least cover among them */
	double *sys = xcalloc(s->nfiles, sizeof(*sys));
	uint64_t *sys_cov = xcalloc(s->nfiles, sizeof(*sys_cov));
	double proc = 0.0;
	uint64_t proc_cov = UINT64_MAX;
	for (size_t i = 0; i < n;) {
		size_t k = i + 1;
		while (k < n && c[k].file == c[i].file && c[k].pid == c[i].pid && c[k].id == c[i].id)
			k++;
		uint64_t cov;
		double v = series_integral(s, c + i, k - i, w, &cov);
		if (c[i].id == TRACE_CTR_CPU_SYSTEM) {
			sys[c[i].file] += v;
			sys_cov[c[i].file] += cov;
		} else if (cov) {
			proc += v;
			proc_cov = cov < proc_cov ? cov : proc_cov;
		}
		i = k;
	}
	/* hosts: the mean of their files' busy share, times their cores */
	double busy = 0.0, cores = 0.0;
	int ok = proc_cov != UINT64_MAX && 2 * proc_cov >= len;
	for (uint32_t f = 0; f < s->nfiles && ok; f++) {
		uint32_t same = 0, first = f;
		double share = 0.0;
		for (uint32_t g = 0; g < s->nfiles; g++)
			if (s->files[g].host == s->files[f].host && sys_cov[g]) {
				first = g < first ? g : first;
				share += sys[g] / (double)sys_cov[g];
				same++;
			}
		if (first != f || !same)
			continue; /* a host counted at its first file; one without samples, not */
		if (2 * sys_cov[f] < len || !s->files[f].ncpus) {
			ok = 0;
			break;
		}
		busy += share / same * s->files[f].ncpus;
		cores += s->files[f].ncpus;
		j->hosts++;
	}
	free(sys);
	free(sys_cov);
	free(c);
	if (!ok || !j->hosts)
		return 0;
	j->proc_pct = proc / (double)len;
	j->sys_pct = busy / cores;
	j->cores = cores;
	j->ncpus = s->files[0].ncpus;
	return 1;
}

/* The program's processes alive during w (each image once) and the ranks among them. */
static void judge_procs(const struct analysis *a, const struct ivl_set *w, struct cpu_judge *j)
{
	const struct store *s = &a->store;
	if (!w->n)
		return;
	uint64_t from = w->v[0].start, to = w->v[w->n - 1].end;
	int32_t seen[64];
	uint32_t nseen = 0;
	for (uint32_t i = 0; i < s->nprocs; i++) {
		const struct store_process *p = &s->procs[i];
		if (p->start_ns >= to || (p->end_ns && p->end_ns <= from))
			continue;
		j->procs++;
		uint32_t k = 0;
		while (k < nseen && seen[k] != p->rank)
			k++;
		if (p->rank >= 0 && k == nseen && nseen < 64) {
			seen[nseen++] = p->rank;
			j->ranks++;
		}
	}
}

static void cpu_judge(const struct adv_input *in, struct cpu_judge *j)
{
	memset(j, 0, sizeof(*j));
	if (!in->steps)
		return;
	struct perf p;
	perf_compute(&p, in->a, in->skip);
	struct ivl_set w;
	ivl_set_init(&w);
	for (size_t i = 0; i < p.counted; i++) {
		const struct perf_step *s = &p.step[i];
		if (!s->cpu_ns)
			continue;
		j->known++;
		j->runq += s->runq_ns;
		j->cpu += s->cpu_ns;
		j->time += s->batch_ns;
		j->max = s->runq_ns > j->max ? s->runq_ns : j->max;
		j->over += 20 * s->runq_ns >= s->batch_ns; /* 5 % of its step */
		ivl_set_add(&w, s->start_ns, s->start_ns + s->batch_ns);
	}
	perf_free(&p);
	/* a tenth of the counted steps' time, spread over half of them at least:
	 * one burst of another program is not a machine too busy for the job */
	j->waits = j->known >= 3 && 10 * j->runq >= j->time && 2 * j->over >= j->known;
	ivl_set_normalize(&w);
	ivl_set_seal(&w);
	if (j->waits && (j->have = judge_counters(in->a, &w, j))) {
		judge_procs(in->a, &w, j);
		double busy = j->sys_pct * j->cores;
		j->own = busy > 0 ? j->proc_pct / busy : 0;
		j->own = j->own > 1 ? 1 : j->own;
		/* a thread runnable for cpu + runq ran cpu of it: its cores'
		 * worth of threads shared them, about (cpu + runq) / cpu
		 * threads a core; own of them the program's */
		j->threads = (double)(j->cpu + j->runq) / (double)j->cpu * j->own * j->cores / j->hosts;
		double per_host = j->cores / j->hosts;
		j->oversub = j->sys_pct >= OVERSUB_BUSY_PCT && j->threads >= OVERSUB_RATIO * per_host &&
			     j->threads >= per_host + 1;
	}
	ivl_set_free(&w);
}

static void wait_evidence(struct adv_finding *f, const struct cpu_judge *j)
{
	double per_step = (double)j->runq / (double)j->known;
	adv_evidence(f, "run-queue time %.2f ms per step on average (%.2f ms at most), on the "
			"CPU %.2f ms, over %zu counted steps; %zu of them waited over 5 %% of "
			"the step",
		     per_step / 1e6, (double)j->max / 1e6, (double)j->cpu / (double)j->known / 1e6,
		     j->known, j->over);
}

static void contention_run(const struct adv_input *in, struct adv_list *out)
{
	const struct analysis *a = in->a;
	struct cpu_judge j;
	cpu_judge(in, &j);
	if (!j.waits || j.oversub)
		return; /* the program's own threads: oversubscription says it */
	double per_step = (double)j.runq / (double)j.known;
	struct adv_finding *f = adv_add(out, &adv_rule_cpu_contention, in, per_step,
					"the training thread waited for a CPU %.1f %% of its steps: "
					"runnable, but another thread or program had the core",
					100.0 * (double)j.runq / (double)j.time);
	wait_evidence(f, &j);
	if (a->store.nfiles && a->store.files[0].ncpus)
		adv_evidence(f, "the machine has %u CPUs", a->store.files[0].ncpus);
	if (j.have)
		adv_evidence(f, "over those steps the program used %.0f %% of a CPU, %.0f %% of "
				"the busy CPU (%.0f %% of all cores busy): the rest is other "
				"programs'",
			     j.proc_pct, 100.0 * j.own, j.sys_pct);
	adv_evidence(f, "the saving is that waiting: an upper bound (the thread would have "
			"run, not necessarily faster)");
	adv_try(f, "fewer threads than cores: torch.set_num_threads(), OMP_NUM_THREADS, "
		   "DataLoader num_workers, one process per core set (taskset, "
		   "torchrun's --nproc-per-node); or find the other programs on the machine "
		   "(top, pidstat)");
	adv_command(f, in, "--view distributed --view steps");
}

const struct adv_rule adv_rule_cpu_contention = {
	.id = "cpu-contention",
	.title = "CPU contention: the training thread runnable but not running",
	.definition = "over the counted steps that know it (traces 2.1 and later: the step "
		      "thread's schedstat, read at each step's ends), the step thread's run-queue "
		      "time against the steps' time; saving: that time per step, an upper bound",
	.threshold = "at least 3 such steps; the run-queue time at least 10 % of their time, and "
		     "over 5 % of the step in at least half of them; not where oversubscription "
		     "fires (the program's own threads fill the cores)",
	.why = "a thread that is runnable but not running waits for a core: within a twentieth of "
	       "the step that is the scheduler's ordinary noise, and a tenth spread over most "
	       "steps is a machine too busy for the job (too many threads, or other programs), "
	       "not one burst",
	.run = contention_run,
};

static void oversub_run(const struct adv_input *in, struct adv_list *out)
{
	struct cpu_judge j;
	cpu_judge(in, &j);
	if (!j.oversub)
		return;
	double per_host = j.cores / j.hosts;
	double per_step = (double)j.runq / (double)j.known;
	struct adv_finding *f = adv_add(out, &adv_rule_oversubscription, in, per_step,
					"the program runs about %.0f busy threads on %.0f CPUs%s: the "
					"training thread waited for its own threads %.1f %% of its steps",
					j.threads, per_host, j.hosts > 1 ? " a host" : "",
					100.0 * (double)j.runq / (double)j.time);
	wait_evidence(f, &j);
	adv_evidence(f, "over those steps the program used %.0f %% of a CPU (of %.0f %%%s), "
			"%.0f %% of the busy CPU; %.0f %% of all cores were busy",
		     j.proc_pct / j.hosts, 100.0 * per_host, j.hosts > 1 ? " a host" : "",
		     100.0 * j.own, j.sys_pct);
	adv_evidence(f, "busy threads estimated as (on CPU + run-queue) / on CPU of the training "
			"thread, times the CPUs, times the program's share of the busy CPU");
	if (j.ranks)
		adv_evidence(f, "%u processes of the program ran during the steps, of %u ranks (their "
				"DataLoader workers among them), each with its own threads",
			     j.procs, j.ranks);
	else if (j.procs)
		adv_evidence(f, "%u process%s of the program ran during the steps (the main one and "
				"its children: DataLoader workers), each with its own threads",
			     j.procs, j.procs == 1 ? "" : "es");
	adv_evidence(f, "the saving is that waiting: an upper bound (the work of the other "
			"threads still needs the cores)");
	adv_try(f, "threads x processes <= CPUs: torch.set_num_threads() or OMP_NUM_THREADS in "
		   "each process, fewer DataLoader workers (num_workers), fewer ranks a host "
		   "(torchrun's --nproc-per-node)");
	adv_command(f, in, "--view device --view steps");
}

const struct adv_rule adv_rule_oversubscription = {
	.id = "oversubscription",
	.title = "Oversubscription: the program's own threads more than the cores",
	.definition = "where cpu-contention's wait holds, the program's busy threads a host: the "
		      "training thread's (on CPU + run-queue) / on CPU, times the host's CPUs, "
		      "times the program's share of the busy CPU (the CPU(Process) and "
		      "CPU(System) samples over the counted steps); saving: the run-queue time "
		      "per step, an upper bound",
	.threshold = "cpu-contention's; the cores at least 75 % busy; the program's busy threads at "
		     "least 1.25 times the CPUs, and one more than them at least",
	.why = "the scheduler shares the cores evenly among runnable threads, so a thread that "
	       "ran a fraction of its runnable time had about CPUs / fraction threads beside it, "
	       "and the program's share of the busy CPU says how many of them are its own; a "
	       "quarter (a whole thread at least) over the cores is beyond the even-share "
	       "estimate's error, and below it the wait is other programs' (cpu-contention)",
	.run = oversub_run,
};
