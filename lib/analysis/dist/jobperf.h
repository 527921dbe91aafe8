/*
 * jobperf.h - the throughput of a distributed job (job.h), rank by rank and
 * as a whole: what `gprof-dl bench` measures and gates on, and `gprof-dl
 * diff` compares, when its files hold ranks. gprof-dl-bench(1) says the
 * same to users.
 *
 * Definitions:
 *  - a rank's steps are perf.h's, of the rank alone (its processes: the
 *    rank's own and its DataLoader workers), the first K skipped as for a
 *    trace (at most half of them); its figures (batch_cost, reader_cost,
 *    ips) are its Perf Summary's;
 *  - step g of the job is the step of number g of every rank (its steps
 *    counted from 0, skipped ones included), for the numbers every rank
 *    counted: from the latest first counted step to the earliest last one
 *    (counts_differ says when the ranks did not count the same steps; the
 *    others count for their rank only);
 *  - a job step's batch_cost is the time from the last rank's end of the
 *    step before it (the first job step: from the first rank's start of
 *    it) to the last rank's end of it: in a synchronous job the slowest
 *    rank sets the pace, and the job steps add up to the job's wall time
 *    over them, whatever the jitter (a sum of each step's longest rank
 *    would read longer); its reader_cost is the longest of the ranks'
 *    reader_cost in it, its samples the sum of the ranks' samples in it;
 *  - the ips unit is samples/s when every counted step of every rank knows
 *    its samples, steps/s otherwise, for the job and for every rank alike
 *    (a job step is then 1);
 *  - the job's ips = all its samples / all its batch_cost, that is all the
 *    ranks' samples over the wall time of the job steps; per job step, the
 *    step's samples / its batch_cost. Its step series is one run for
 *    benchstat.h: the interval, median, p90 and the gate are the job's;
 *  - a rank's communication: the union, inside its counted steps, of its
 *    host ranges that are communication calls (gpu.h: ROLE_COMM_OP, gloo's
 *    "gloo:all_reduce" among them) and of its GPU work that is
 *    communication (GPU_COMM).
 * Parts of no rank (rank -1: a launcher, or a trace of a run that was not
 * distributed) are left out, counted in left_out.
 *
 * Memory: the ranks are measured one at a time (job_load_each(), the next
 * ones read ahead), each freed after; what is kept is each rank's counted
 * steps (40 bytes a step) and the job's.
 */
#ifndef GPDL_ANALYSIS_DIST_JOBPERF_H
#define GPDL_ANALYSIS_DIST_JOBPERF_H

#include "lib/analysis/dist/job.h"
#include "lib/analysis/views/perf.h"
#include "lib/analysis/table/table.h"

#include <stddef.h>
#include <stdint.h>

struct jobperf_rank {
	int32_t rank;
	uint32_t part;     /* index in job.ranks */
	char *file;        /* the path of its file */
	uint32_t pid;      /* its root process */
	struct perf perf;  /* its counted steps and Perf Summary, in the job's ips unit */
	uint64_t comm_ns;  /* communication inside its counted steps */
};

struct jobperf {
	struct jobperf_rank *ranks; /* by rank */
	uint32_t nranks;
	uint32_t left_out;  /* parts of no rank, not measured */
	int32_t world_size; /* the job's; -1 unknown */
	uint32_t nmissing;  /* ranks of the world size no file holds (job.h) */
	char missing[256];  /* job_missing_words() of them */
	int counts_differ;  /* the ranks counted different steps */
	uint64_t first_step; /* the number of the job's first step */
	struct perf perf;   /* the job's: perf.step[k] is job step k, perf.ranks = nranks */
};

/* Measures every rank of j (j->nranks > 0), skipping the first skip steps
 * of each; a damaged file is measured up to its damage, with a warning
 * ("...; DONE up to there", job_warn_damage()). 0,
 * or -1 with a one-line message in err (a rank that cannot be read, or has
 * no training step: "'t-1.gpdl' (rank 1): no training steps (ProfileStep
 * ranges) to measure"); jobperf_free() in both cases. */
int jobperf_measure(struct jobperf *jp, struct job *j, unsigned skip, const char *done,
		    char *err, size_t errlen);
void jobperf_free(struct jobperf *jp);
/* The job's steps and Perf Summary (jp->perf) from its ranks' (jp->ranks,
 * each measured by perf_compute() with skip): what jobperf_measure() ends
 * with, and what a summary that measured the ranks already does. With a
 * rank that counted no step, the job has none. */
void jobperf_line_up(struct jobperf *jp, unsigned skip);
/* Notes what jp needs of its job (its world size and missing ranks). */
void jobperf_of_job(struct jobperf *jp, const struct job *j);
/* The job's Perf Summary (perf_table() with a job's notes, and one saying
 * when the ranks' counts differ). */
struct table *jobperf_table(const struct jobperf *jp, const char *id, const char *title);
/* "Ranks": a row per rank: Rank, Steps (counted), IPS, batch_cost avg,
 * reader_cost avg (JSON keys rank, steps, ips, batch_cost, reader_cost). */
struct table *jobperf_ranks_table(const struct jobperf *jp);
/* "Ranks Compared" (id "ranks"): the ranks of job A and of job B matched by
 * rank, then a row "job": Name, Status (new, vanished, changed, same), Steps
 * A / B, Step A / B / Delta / Delta(%) (avg batch_cost), IPS A / B / Delta /
 * Delta(%), Comm A / B / Delta / Delta(%) (communication per counted step;
 * none for the job row). name_a and name_b name the sides in the notes. */
struct table *jobperf_diff_table(const struct jobperf *a, const struct jobperf *b,
				 const char *name_a, const char *name_b);

#endif
