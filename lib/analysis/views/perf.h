/*
 * perf.h - Paddle's Perf Summary (its benchmark timer), from the steps of a
 * prepared analysis: per training step its batch cost, reader cost and
 * samples, and over the counted steps avg / max / min of each, the reader
 * ratio and the throughput (ips).
 *
 * Definitions (gprof-dl-bench(1), gprof-dl-summary(1)):
 *  - steps: per file, the ProfileStep ranges (store_is_step_name()) of its
 *    host threads, in start order. Instants, ranges of no length, ranges
 *    still open at exit and a step nested in another step of its thread are
 *    not steps;
 *  - skipping: the first K steps of each file are skipped (warm-up), K the
 *    option (PERF_SKIP_DEFAULT as Paddle's timer), but never more than half
 *    of that file's steps (rounded down); the other steps are counted, and
 *    the counted steps of all files are pooled;
 *  - batch_cost of a step: its length;
 *  - reader_cost of a step: the union of the Dataloader ranges of every host
 *    thread of its process (same file, same pid), clipped to the step;
 *  - avg: the mean over the counted steps; max / min: per-step extremes;
 *  - reader ratio: sum of reader_cost / sum of batch_cost, in percent;
 *  - ips: when every counted step knows its samples (trace 1.2), in
 *    samples/s: per step samples / batch_cost, avg = all samples / all
 *    batch time; otherwise in steps/s: per step 1 / batch_cost, avg =
 *    counted steps / all batch time.
 * So min <= avg <= max holds for every row (unlike Paddle's example).
 */
#ifndef GPDL_ANALYSIS_PERF_H
#define GPDL_ANALYSIS_PERF_H

#include "lib/analysis/store/analysis.h"
#include "lib/analysis/table/table.h"

#include <stddef.h>
#include <stdint.h>

#define PERF_SKIP_DEFAULT 10u

/* One counted step. */
struct perf_step {
	uint32_t file;      /* index in store->files (a job's step: 0) */
	uint32_t track;     /* its host thread's track (a job's step: the index in
			     * jobperf.ranks of the rank whose step k was the longest) */
	uint64_t start_ns;
	uint64_t batch_ns;  /* its length */
	uint64_t reader_ns; /* Dataloader time inside it */
	uint64_t samples;   /* 0: unknown */
	/* its thread's time on a CPU and runnable but waiting, over the step
	 * (trace 2.1, schedstat); cpu_ns 0: unknown */
	uint64_t cpu_ns, runq_ns;
};

struct perf_stat {
	double avg, max, min;
};

struct perf {
	unsigned skip;        /* K asked */
	uint64_t steps;       /* all steps of all files */
	uint64_t skipped;     /* left out as warm-up, over all files */
	size_t counted;
	struct perf_step *step; /* the counted steps, file by file, each in start order */
	uint32_t files_without_steps; /* files with no step at all */
	uint32_t first_without_steps; /* the first of them (index in store->files) */
	int by_samples;       /* 1: ips in samples/s; 0: steps/s */
	uint64_t batch_total_ns, reader_total_ns, samples_total;
	double reader_ratio;  /* percent, within [0, 100]; 0 with no step */
	struct perf_stat reader_ns, batch_ns; /* nanoseconds */
	struct perf_stat ips;                 /* per second, in ips_unit */
	/* a job's Perf Summary (jobperf.h): its ranks, and steps and skipped
	 * summed over them; counted is the job's steps. 0: traces pooled */
	uint32_t ranks;
};

/* A step as found (the definition above), before the skip. */
struct perf_found_step {
	uint32_t file, track, index; /* its file, host thread's track, and index there */
	uint64_t start, dur, samples;
	uint64_t cpu_ns, runq_ns; /* as perf_step's */
};

typedef void (*perf_range_fn)(void *ctx, uint32_t track, size_t i, unsigned type);

/* Every step of every file of a prepared analysis, sorted by file, then
 * start, into *steps (free() it); returns their count. On the way, calls
 * range(ctx, track, i, type) for each range of a host thread (no instant,
 * length > 0) whose type is in types (bit 1u << type; ProfileStep never),
 * thread by thread in store order: what a caller measures inside the steps
 * (their Dataloader time) is gathered in the same pass. range may be NULL. */
size_t perf_find_steps(const struct analysis *a, unsigned types, perf_range_fn range, void *ctx,
		       struct perf_found_step **steps);

/* The warm-up steps left out of a file with n steps when skip are asked:
 * skip, but never more than half of them (rounded down). */
static inline size_t perf_skipped_of(unsigned skip, size_t n)
{
	return skip < n / 2 ? skip : n / 2;
}

/* The K a summary asks for: --skip-steps, else PERF_SKIP_DEFAULT. */
#define PERF_SKIP_OF(view_opts) ((view_opts)->skip_set ? (view_opts)->skip_steps : PERF_SKIP_DEFAULT)

/* Measures the steps of a prepared analysis, skipping the first skip steps
 * of each file (capped as above). p->counted is 0 when there is no step. */
void perf_compute(struct perf *p, const struct analysis *a, unsigned skip);
void perf_free(struct perf *p);

/* The counted steps' wait for a CPU (their thread runnable, not running:
 * perf_step's runq_ns), over those that know it (cpu_ns set). */
struct perf_runq {
	size_t known;        /* steps that know it */
	size_t over;         /* of them, those that waited over 5 % of the step */
	uint64_t runq, cpu, time, max; /* summed over them; max: the longest wait */
};
void perf_runq(const struct perf *p, struct perf_runq *out);
/* (Re)computes the figures (totals, avg / max / min, reader ratio, unit)
 * from the counted steps p->step[0 .. p->counted): what perf_compute() ends
 * with, for steps put together otherwise (a job's), or changed (a rank's
 * samples dropped to count it in steps/s as its job does). */
void perf_finish(struct perf *p);
/* "samples/s" or "steps/s". */
const char *perf_ips_unit(const struct perf *p);

/* The Perf Summary as a table (id and title as the view's): rows
 * reader_cost, batch_cost (times) and ips (a number), columns avg, max,
 * min, five decimals in text; facts steps, skipped, counted and
 * reader_ratio; notes with the reader ratio, the ips unit and the counts.
 * With no step, an empty table that says so. nfiles: how many traces were
 * pooled (named in a note when more than one). A job's (p->ranks > 0) notes
 * say what a job step is instead. */
struct table *perf_table(const struct perf *p, const char *id, const char *title,
			 uint32_t nfiles);

#endif
