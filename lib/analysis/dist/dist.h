/*
 * dist.h - what the Distributed view measures (view_distributed.c prints
 * it): where a rank's computation and communication come from and their
 * unions over a window; and over a job read one rank at a time (job.h),
 * each rank's figures over its counted steps, its communication calls
 * matched across ranks (collective.h), its wait, the straggler and the ranks
 * that ended early. The rules are gprof-dl-summary(1)'s.
 *
 * What a job_dist keeps between loads, per rank: its counted steps' starts,
 * lengths and waits, a dozen totals, and its communication calls; never a
 * rank's events.
 */
#ifndef GPDL_ANALYSIS_DIST_DIST_H
#define GPDL_ANALYSIS_DIST_DIST_H

#include "lib/analysis/dist/collective.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/views/view.h"

#include <stdint.h>

/* Where computation and communication come from on a rank: its GPU work
 * (gpu_comp: it has some; gpu_comm: some of it is communication), else its
 * host ranges. */
struct dist_src {
	int gpu_comp, gpu_comm;
};

/* Totals over a window. */
struct dist_fig {
	uint64_t window_ns;
	uint64_t comp, comm, busy;  /* computation, communication, their union */
	uint64_t dataloader;        /* Dataloader ranges, merged */
	uint64_t host_active;       /* operators, communication calls, Dataloader ranges, merged */
};

void dist_sources(const struct analysis *a, struct dist_src *src);
/* The figures of the events in clip, in one merged pass. An operator that
 * starts inside a communication call of its thread is part of the call. */
void dist_walk(const struct analysis *a, const struct ivl_set *clip, const struct dist_src *src,
	       struct dist_fig *f);

static inline uint64_t dist_sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* A rank of the job (the part of the same index in job.ranks). */
struct dist_rank {
	struct dist_src src;
	uint64_t steps, skipped;
	size_t counted;      /* steps measured; 0: none, the whole run is measured */
	size_t nslots;       /* counted, or 1 (the whole run) */
	uint64_t *step_start, *step_ns; /* the counted steps, in start order */
	uint64_t *step_wait; /* the time its calls that started in each spent waiting */
	struct dist_fig f;   /* over the counted steps */
	uint64_t wait_ns;
	uint64_t start_ns, end_ns; /* on the job clock */
	int32_t exit_status;
	int ended_early;
	double busy, busy_var; /* busy per step: mean and variance (of the mean: / n) */
};

enum dist_cause { CAUSE_COMPUTATION, CAUSE_DATALOADER, CAUSE_OUTSIDE, CAUSE_COMM, CAUSE_COUNT };

enum dist_verdict {
	VERDICT_ONE_RANK,  /* fewer than two ranks with steps */
	VERDICT_NO_STEPS,  /* a rank has no steps */
	VERDICT_NOISE,     /* no excess beyond the noise */
	VERDICT_UNCONFIRMED, /* an excess, but the others do not wait for it */
	VERDICT_NAMED,
};

struct job_dist {
	const struct job *j;
	unsigned skip;
	struct dist_rank *r;
	uint32_t n;
	struct coll_set cs;
	uint32_t *sum_file; /* job file -> sum's store file + 1 */
	int from_steps;     /* some rank has steps */
	uint64_t median_step;
	uint64_t job_start;
	uint32_t ended_early;
	/* the straggler */
	enum dist_verdict verdict;
	int32_t cand;       /* the rank index with the largest excess; -1 none */
	int32_t no_steps;   /* VERDICT_NO_STEPS: which */
	double median, excess, se, others_wait;
	enum dist_cause cause;
	double cause_excess;
	uint32_t wait_op;   /* the op the others waited in most (cs.names) */
};

/* "computation", "data loading", "host time outside operators", "its own
 * communication". */
const char *dist_cause_name(enum dist_cause c);

/* A total of a rank per measured step (per slot: the whole run without steps). */
static inline double dist_per_step(const struct dist_rank *r, uint64_t ns)
{
	return (double)ns / (double)r->nslots;
}

/* Reads each part of the job alone (job_load()), measures each rank over
 * its counted steps (o->skip_steps as the perf view), collects its
 * communication calls, matches them across ranks, and sums up what each
 * part read for a Trace Summary (in sum, initialised and empty: its store
 * has the files, its window the steps of all ranks, as job_load_all() would
 * give). NULL with a one-line message in err when a file cannot be read. */
struct job_dist *job_dist_measure(struct job *j, const struct view_opts *o, struct analysis *sum,
				  const char *done, char *err, size_t errlen);
int job_dist_from_steps(const struct job_dist *d);
void job_dist_free(struct job_dist *d);

#endif
