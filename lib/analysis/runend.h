/*
 * runend.h - the short summary `gprof-dl run` prints to stderr when the
 * target has finished, in nvprof's layout:
 *
 *   ==4242== Profiling result:
 *   Time(%)      Time     Calls       Avg       Min       Max  Name
 *    62.50%  250.00ms         5  50.000ms  40.000ms  60.000ms  train_step
 *   ...
 *   ==4242== Time(%) is of all range time: every name's Time summed (...)
 *   ==4242== Events: 1234 (12 marks), 0 dropped
 *   ==4242== Trace: t.gpdl (every table: gprof-dl summary t.gpdl)
 *
 * The table holds the NVTX ranges with the largest total time, by name.
 * Time is the sum of the calls (clipped to the window: the ProfileStep
 * ranges, or the whole run); Time(%) is a name's share of all range time,
 * every name's Time summed, as nsys's NVTX summary counts it (a range
 * inside another counts in both). In every table the names past the top
 * ones share one "... and N more names: P%" line, shares are rounded by
 * largest remainder, and the column adds up to 100.00; a line under each
 * table says what the percent is of. As in nvprof, only the lines that
 * are not table rows carry the "==PID== " prefix.
 *
 * A distributed run's report ends with a line per rank: its pid, exit
 * status and file (runend_ranks()).
 *
 * When the trace holds GPU work or CUDA API calls, the report is nvprof's
 * instead: "Profiling result (GPU activities):", "API calls:", then
 * the NVTX ranges under "NVTX ranges:" (nvprof.h says what each row holds).
 *
 * Named for when it prints, at the run's end: "report" is the HTML command
 * (cmd/report.c, formats/html), "summary" the tables command.
 */
#ifndef GPDL_ANALYSIS_RUNEND_H
#define GPDL_ANALYSIS_RUNEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RUNEND_TOP_RANGES 10
#define RUNEND_TOP_GPU 20 /* rows of GPU activities and of API calls */

/* Returns 0, or -1 when the trace cannot be read (a "==PID== " line says why). */
int runend_summary(const char *trace_path, FILE *out, unsigned pid);

/* The same for a run that wrote the files of a distributed job (job_files,
 * njob: the files that hold its ranks): the tables of trace_path (its
 * lowest rank's), and instead of that file's throughput the job's, as
 * `gprof-dl bench` of the files measures it (jobperf.h), with each rank's
 * ips beside it (the first RUNEND_JOB_RANKS_SHOWN):
 *
 *   ==4242== Job of 2 ranks: ips 771.79 samples/s over 30 job steps from
 *   step 10 (rank 0 405.02, rank 1 366.77), batch_cost 82.9310ms,
 *   reader_cost 1.2040ms, Reader Ratio 1.45% (gprof-dl bench t-0.gpdl t-1.gpdl)
 *
 * (one line), in bench's decimals (bs_ips_decimals()). A job that cannot be
 * measured so (fewer than 2 ranks, a rank without training steps) gets the
 * file's line, as runend_summary(). */
#define RUNEND_JOB_RANKS_SHOWN 16
int runend_job_summary(const char *trace_path, char *const *job_files, size_t njob, FILE *out,
			   unsigned pid);

/* A rank of a distributed run, for the lines after the summary. */
struct runend_rank {
	int32_t rank, world_size;
	unsigned pid;        /* its rank root */
	int32_t exit_status; /* trace_process.exit_status of the rank root */
	int32_t exit_signal; /* N > 0: it died of signal N; 0: exit_status is a code or unknown */
	const char *path;    /* the file that holds it */
};

/* One line per rank, then the launcher's (the root process's, when it is
 * no rank root) file; launcher NULL: every process was a rank's:
 *
 *   ==4242== Rank 0 of 2: pid 4243, exit 0, t-0.gpdl
 *   ==4242== Rank 1 of 2: pid 4244, killed by signal 9, t-1.gpdl
 *   ==4242== Launcher: pid 4242, exit 137, t-.gpdl
 *
 * An exit status is "killed by signal N" only when a signal killed it (a
 * launcher that exits with 137 exited), "killed" (it died without exiting,
 * the signal unknown), "still running" or "exit N". */
void runend_rank_lines(FILE *out, unsigned pid, const struct runend_rank *ranks, size_t n,
		       const struct runend_rank *launcher);
/* The same with the launcher given by its file, pid and exit status (no
 * signal). */
void runend_ranks(FILE *out, unsigned pid, const struct runend_rank *ranks, size_t n,
		      const char *launcher_path, unsigned launcher_pid, int32_t launcher_status);
/* The words for an exit status and signal, as above, into buf. */
const char *runend_exit_status(char *buf, size_t size, int32_t status, int32_t signal);

/* nvprof's time format: four or five significant digits and a unit, "9.6305ms". */
void runend_format_time(char *buf, size_t size, double ns);
/* The shares of whole of n parts (which add up to whole), in hundredths of
 * a percent rounded so that they add up to 10000 (largest remainder); all
 * 0 when whole is 0. */
void runend_percent(const uint64_t *part, size_t n, uint64_t whole, unsigned *hundredths);

#endif
