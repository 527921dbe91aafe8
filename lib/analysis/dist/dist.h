/*
 * dist.h - what the Distributed view measures (view_distributed.c prints
 * it). Over one rank (rank.c): where its computation and communication come
 * from and their unions over a window, and each counted step split into
 * parts. Over a job read one rank at a time (job.h, dist.c): each rank's
 * figures over its counted steps, its communication calls matched across
 * ranks (collective.h) and its wait, the steps compared across ranks, the
 * straggler (verdict.h), the ranks that ended early and the ranks missing.
 * The rules are gprof-dl-summary(1)'s.
 *
 * A counted step of a rank is split into disjoint parts that add up to it
 * (each the measure inside the step of the set named, taken in this order,
 * so that no nanosecond counts twice):
 *   wait        W: from the start of each of its communication calls, the
 *               time it spent beyond the fastest rank's duration of the same
 *               call (collective.h), merged, clipped to the step
 *   data        D \ W: its Dataloader ranges (of every thread)
 *   computation C \ (W u D): its kernels on a rank with GPU work, else its
 *               host operators that are not communication calls nor start
 *               inside one; an operator blocked while a collective's result
 *               is waited for is wait, an operator inside a Dataloader range
 *               (the DataLoader iterator's __next__) data
 *   communication M \ (W u D u C): on a rank with GPU work its
 *               communication GPU work (when none of it is: its host
 *               calls only enqueue, and a CPU backend's executions, gloo:*
 *               on CUDA tensors, are its communication), else its host
 *               communication calls:
 *               what was not overlapped nor wait
 *   host        the rest of the step: host time outside operators
 * and busy = step - wait. CPU contention (the step thread's run-queue time
 * in the step, from schedstat: runnable, not running) is then taken out of
 * the host-side parts in proportion to their size (on a rank with GPU work,
 * of data and host first), as the part "contention"; the parts still add up
 * to busy.
 *
 * W is known only once every rank's calls are matched, so while a rank is
 * loaded its D, C \ D and M \ (D u C) are measured per step, and kept only
 * inside its calls' windows (where W can lie); the parts are finished after
 * the match. What a job_dist keeps between loads, per rank: its counted
 * steps (start, length, samples, contention, a few figures each), a dozen
 * totals, its communication calls and those sets inside its calls; never a
 * rank's events.
 */
#ifndef GPDL_ANALYSIS_DIST_DIST_H
#define GPDL_ANALYSIS_DIST_DIST_H

#include "lib/analysis/dist/collective.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/dist/jobperf.h"
#include "lib/analysis/dist/verdict.h"
#include "lib/analysis/store/analysis.h"

#include <stdint.h>

/* Where computation and communication come from on a rank: its GPU work
 * (gpu_comp: it has some; gpu_comm: some of it is communication), else its
 * host ranges. */
struct dist_src {
	int gpu_comp, gpu_comm;
	/* GPU work, none of it communication, and a CPU backend's executions
	 * on the host ("gloo:all_reduce" on CUDA tensors: gloo runs the
	 * collective on host threads): those are its communication */
	int host_exec;
};
/* A host range that runs a collective on the host: a CPU backend's
 * execution ("gloo:*", "mpi:*", "ucc:*"), never an enqueue (c10d::*,
 * record_param_comms) nor NCCL's ("nccl:*", whose work is the GPU's). */
int dist_is_host_exec(const struct store *s, uint32_t desc);
/* The same of a name of len bytes. */
int dist_name_is_host_exec(const char *name, size_t len);

/* Which of a rank's communication calls are its calls, the one rule of the
 * Distributed view and of the chrome export's flows: its GPU communication
 * when it has any; else, on a rank without GPU work, its host calls; else
 * (GPU work, none of it communication) a CPU backend's executions on the
 * host, or none (c10d's and NCCL's host calls only enqueue). Host calls
 * are the outermost of each thread (collective_outermost()). */
enum dist_calls {
	DIST_CALLS_NONE,
	DIST_CALLS_GPU,
	DIST_CALLS_HOST,
	DIST_CALLS_HOST_EXEC,
};
static inline enum dist_calls dist_calls_of(const struct dist_src *src)
{
	if (src->gpu_comm)
		return DIST_CALLS_GPU;
	if (!src->gpu_comp)
		return DIST_CALLS_HOST;
	return src->host_exec ? DIST_CALLS_HOST_EXEC : DIST_CALLS_NONE;
}

/* Totals over a window (Paddle's figures: unions). */
struct dist_fig {
	uint64_t window_ns;
	uint64_t comp, comm, busy;  /* computation, communication, their union */
	uint64_t dataloader;        /* Dataloader ranges, merged */
	uint64_t host_active;       /* operators, communication calls, Dataloader ranges, merged */
};

/* The sets of a rank's step parts (above), merged; filled by dist_walk()
 * when asked. */
struct dist_sets {
	struct ivl_set data, comp, comm; /* D, C \ D, M \ (D u C), sealed */
	struct ivl_set comp_all, comm_all, both_all; /* C, M, C u M (dist_walk() only) */
};

void dist_sources(const struct analysis *a, struct dist_src *src);
/* The figures of the events in clip, in one merged pass. An operator that
 * starts inside a communication call of its thread is part of the call.
 * sets (NULL: not wanted) gets the parts' sets over the whole run. */
void dist_walk(const struct analysis *a, const struct ivl_set *clip, const struct dist_src *src,
	       struct dist_fig *f, struct dist_sets *sets);
void dist_sets_free(struct dist_sets *s);
/* The Distributed view's figures of one program over its window
 * (view_distributed.c says how): the union of its communication, of its
 * computation, and the time both ran (overlap); src as dist_sources(). */
void dist_program_fig(const struct analysis *a, const struct dist_src *src, uint64_t *comm,
		      uint64_t *comp, uint64_t *overlap);

static inline uint64_t dist_sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* A counted step of a rank. */
struct dist_step {
	uint64_t start, len;        /* on the job clock */
	uint64_t samples;           /* 0: unknown */
	uint64_t runq;              /* its thread's run-queue time in it; 0: none or unknown */
	int sched_known;            /* runq was measured */
	uint64_t data, comp, comm;  /* D, C \ D, M \ (D u C) inside it, before the wait */
	uint64_t wait;              /* after the match */
	double part[DIST_NPARTS];   /* busy's parts, after the match */
};

/* A rank of the job (the part of the same index in job.ranks). */
struct dist_rank {
	struct dist_src src;
	uint64_t steps, skipped;
	size_t counted;      /* steps measured; 0: none, the whole run is measured */
	size_t nslots;       /* counted, or 1 (the whole run) */
	struct dist_step *step; /* [nslots]: the counted steps, in start order */
	struct dist_sets in_calls; /* its sets inside its calls' windows, until the match */
	struct dist_fig f;   /* over the counted steps */
	uint64_t wait_ns;
	double part[DIST_NPARTS]; /* per step, over its counted steps */
	uint64_t start_ns, end_ns; /* on the job clock */
	int32_t exit_status, exit_signal;
	int ended_early;
	int sched_steps;     /* counted steps whose run-queue time is known */
};

struct job_dist {
	const struct job *j;
	unsigned skip;
	struct dist_rank *r;
	uint32_t n;
	struct collective_set cs;
	uint32_t *sum_file; /* job file -> sum's store file + 1 */
	int from_steps;     /* some rank has steps */
	uint64_t median_step;
	uint64_t job_start;
	uint32_t ended_early;
	/* the compared steps: step number g0 + g (counted from each rank's first
	 * step, skipped ones included) of every rank, g < k */
	uint64_t g0;
	size_t k;
	double *job_step;   /* [k]: the job's time for each (dist.c) */
	int32_t no_steps;   /* a rank without steps (index), -1 none */
	struct dist_verdict v;
	uint32_t wait_op;   /* the op the others waited in most (cs.names) */
	struct jobperf jp;  /* the job's throughput, from the same steps (jobperf.h) */
};

/* Reads each part of the job alone (job_load()), measures each rank over
 * its counted steps (skip as the perf view's --skip-steps), collects its
 * communication calls, matches them across ranks, and sums up what each
 * part read for a Trace Summary (in sum, initialised and empty: its store
 * has the files, its window the steps of all ranks, as job_load_all() would
 * give). NULL with a one-line message in err when a file cannot be read. */
struct job_dist *job_dist_measure(struct job *j, unsigned skip, struct analysis *sum,
				  const char *done, char *err, size_t errlen);
int job_dist_from_steps(const struct job_dist *d);
/* Up to max step numbers (counted from 0, as ProfileStep#N) of the compared
 * steps flagged in f[0 .. d->k): "13, 17, 21, ...". */
void job_dist_step_list(char *buf, size_t size, const struct job_dist *d, const uint8_t *f,
			unsigned max);
void job_dist_free(struct job_dist *d);

/* A rank's step index (in r->step) of compared step g, or -1. */
static inline ptrdiff_t job_dist_slot(const struct job_dist *d, uint32_t ri, size_t g)
{
	const struct dist_rank *r = &d->r[ri];
	uint64_t at = d->g0 + g;
	if (at < r->skipped || at - r->skipped >= r->counted)
		return -1;
	return (ptrdiff_t)(at - r->skipped);
}

/* ---- one rank's map for an engine (export --partitioned, --sqlite) -------------- */

/* The unions inside one step: C, M and C u M (overlap = comp + comm - both). */
struct dist_map_step {
	uint64_t comp, comm, both;
};

/* What a rank gives an engine to finish the Distributed view without its
 * events (formats/SQL-SCHEMA.md, the aggregate tables): the rank measured
 * alone as job_dist_measure() measures each, with no step skipped: its
 * steps (r.step[0 .. r.counted): start, len, samples, runq, data, comp,
 * comm before the wait; none when it has no steps), their unions (u), its
 * sets inside its calls' windows (r.in_calls) and its calls (cs, one rank,
 * in start order). Times on the job clock of the analysis. */
struct dist_map {
	struct dist_rank r;
	struct dist_map_step *u; /* [r.nslots] */
	struct collective_set cs;
	uint64_t first_step;     /* the number of r.step[0] (perf.h's skipped) */
};
void dist_map_rank(struct dist_map *m, const struct analysis *a, int32_t rank,
		   uint32_t group_size);
void dist_map_free(struct dist_map *m);

/* ---- one rank, while it is loaded (rank.c) ----------------------------------- */

/* Collects the rank's communication calls (dist_calls_of(src): the GPU
 * work of each call on a rank with GPU communication, else host calls)
 * into cs as rank index ri;
 * slot(ctx, t) gives the counted step a call starting at t lies in (-1:
 * none). group_size: where a call does not say. */
void dist_rank_calls(struct collective_set *cs, uint32_t ri, const struct analysis *a,
		     const struct dist_src *src, uint32_t group_size,
		     int32_t (*slot)(void *ctx, uint64_t t), void *ctx);

#endif
