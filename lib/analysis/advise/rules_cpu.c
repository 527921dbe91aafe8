/* rules_cpu.c - see rules.h: the host's CPU (cpu-contention). */
#include "lib/analysis/advise/rules.h"
#include "lib/analysis/views/perf.h"

#include <stdint.h>

/* The step thread's run-queue time (trace 2.1: schedstat, sampled at each
 * step's ends), over the counted steps that know it. */
static void contention_run(const struct adv_input *in, struct adv_list *out)
{
	const struct analysis *a = in->a;
	if (!in->steps)
		return;
	struct perf p;
	perf_compute(&p, a, in->skip);
	uint64_t runq = 0, cpu = 0, time = 0, max = 0;
	size_t known = 0, over = 0;
	for (size_t i = 0; i < p.counted; i++) {
		const struct perf_step *s = &p.step[i];
		if (!s->cpu_ns)
			continue;
		known++;
		runq += s->runq_ns;
		cpu += s->cpu_ns;
		time += s->batch_ns;
		max = s->runq_ns > max ? s->runq_ns : max;
		over += 20 * s->runq_ns >= s->batch_ns; /* 5 % of its step */
	}
	/* a tenth of the counted steps' time, spread over half of them at least:
	 * one burst of another program is not a machine too busy for the job */
	if (known >= 3 && 10 * runq >= time && 2 * over >= known) {
		double per_step = (double)runq / (double)known;
		struct adv_finding *f = adv_add(out, &adv_rule_cpu_contention, in, per_step,
						"the training thread waited for a CPU %.1f %% of its steps: "
						"runnable, but another thread or program had the core",
						100.0 * (double)runq / (double)time);
		adv_evidence(f, "run-queue time %.2f ms per step on average (%.2f ms at most), on the "
				"CPU %.2f ms, over %zu counted steps; %zu of them waited over 5 %% of "
				"the step",
			     per_step / 1e6, (double)max / 1e6, (double)cpu / (double)known / 1e6, known,
			     over);
		if (a->store.nfiles && a->store.files[0].ncpus)
			adv_evidence(f, "the machine has %u CPUs", a->store.files[0].ncpus);
		adv_evidence(f, "the saving is that waiting: an upper bound (the thread would have "
				"run, not necessarily faster)");
		adv_try(f, "fewer threads than cores: torch.set_num_threads(), OMP_NUM_THREADS, "
			   "DataLoader num_workers, one process per core set (taskset, "
			   "torchrun's --nproc-per-node); or find the other programs on the machine "
			   "(top, pidstat)");
		adv_command(f, in, "--view distributed --view steps");
	}
	perf_free(&p);
}

const struct adv_rule adv_rule_cpu_contention = {
	.id = "cpu-contention",
	.title = "CPU contention: the training thread runnable but not running",
	.definition = "over the counted steps that know it (traces 2.1 and later: the step "
		      "thread's schedstat, read at each step's ends), the step thread's run-queue "
		      "time against the steps' time; saving: that time per step, an upper bound",
	.threshold = "at least 3 such steps; the run-queue time at least 10 % of their time, and "
		     "over 5 % of the step in at least half of them",
	.why = "a thread that is runnable but not running waits for a core: within a twentieth of "
	       "the step that is the scheduler's ordinary noise, and a tenth spread over most "
	       "steps is a machine too busy for the job (too many threads, or other programs), "
	       "not one burst",
	.run = contention_run,
};
