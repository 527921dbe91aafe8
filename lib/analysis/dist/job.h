/*
 * job.h - a distributed job: the traces of its ranks, read one rank at a
 * time, so that summary, bench, diff and export take a whole job in the
 * memory of its largest rank plus small per-rank aggregates.
 *
 * What a rank is, in the traces given:
 *  - a file whose header names a rank (META rank >= 0: written per rank by
 *    `gprof-dl run -o t-%q{RANK}.gpdl`, or by a copy of gprof-dl that
 *    mpirun or srun started; an imported Kineto trace's distributedInfo)
 *    is that rank, all of it;
 *  - a file whose header names none, but whose processes do (trace 1.3:
 *    PROC rank >= 0, one `gprof-dl run -o d.gpdl` of a launcher), holds one
 *    rank per distinct rank of its processes: the processes of that rank
 *    (the rank's own and those it started, DataLoader workers), and the
 *    processes of no rank (the launcher) form one more part, rank -1. A
 *    process's rank counts when rank >= 0 and rank < world_size (or the
 *    world size is unknown, -1): a record zeroed by an older writer is no
 *    rank 0;
 *  - any other file is one part of rank -1 (not a distributed run).
 * Parts of rank -1 are kept (their exit statuses, their events in exports)
 * but are no rank of the job: views over ranks leave them out.
 *
 * Two parts claiming the same rank are an error naming both files ("the same
 * rank 1 in 'a.gpdl' and 'b.gpdl'"), unless they are the same rank of two
 * different jobs, which the caller keeps apart (diff: one job each); so
 * are files of different jobs (job_open()).
 *
 * Clocks: the parts recorded on one host share its CLOCK_MONOTONIC, and
 * imported Kineto traces (no host) the wall clock, CLOCK_REALTIME; parts
 * from several hosts or on different clocks are put on Unix wall time by
 * each file's wall clock offset (META), even when one rank is loaded alone.
 * job.wall_clock and job.clock say which, for the views' headers
 * (store_clock_words()).
 *
 * Reading: job_open() reads each file's header, and the process table of a
 * trace 1.3 file whose header names no rank (one pass over the file that
 * decodes no event); JSON files are imported on the fly as store_load()
 * does (trace_open.h).
 */
#ifndef GPDL_ANALYSIS_DIST_JOB_H
#define GPDL_ANALYSIS_DIST_JOB_H

#include "lib/analysis/store/analysis.h"
#include "formats/export_writer.h"

#include <stddef.h>
#include <stdint.h>

struct job_file {
	char *path;
	char *host;
	char *clock;          /* the header's clock domain (store_file.clock) */
	uint32_t pid;         /* the header's root process */
	int32_t rank;         /* the header's; -1 none */
	int64_t wall_offset_ns;
	uint64_t start_ns, end_ns; /* the header's, on the file's own clock; end 0 unknown */
};

struct job_rank {
	int32_t rank;         /* -1: not a rank (a launcher, or a run that was not distributed) */
	int32_t local_rank, world_size; /* -1: unknown */
	char *backend;        /* "gloo", "nccl", ...; "" unknown */
	char *job_id;         /* its job's identity (trace_header.job_id); "" unknown */
	uint32_t file;        /* index in job.files */
	/* the processes of the part in that file, sorted (NULL: the whole
	 * file); with exclude, every process but those (the rest of a file
	 * whose other parts are ranks) */
	uint32_t *pids;
	uint32_t npids;
	int exclude;
	uint32_t pid;         /* its first process (the rank's root) */
	int32_t exit_status;  /* that process's: code, 128+signal, TRACE_EXIT_*; TRACE_EXIT_UNKNOWN */
	int32_t exit_signal;  /* the signal it died of; 0 none; -1 not said (trace before 2.1) */
	uint64_t end_ns;      /* when that process ended, on the job clock; 0 unknown */
};

struct job {
	struct job_file *files;
	uint32_t nfiles;
	struct job_rank *ranks; /* rank parts by rank, then the parts of rank -1 in file order */
	uint32_t nparts;        /* all parts */
	uint32_t nranks;        /* parts with rank >= 0 (the first nranks of ranks[]) */
	int wall_clock;         /* 1: several hosts or clocks, times on Unix wall time; 0: one
				 * host's clock (clock) */
	const char *clock;      /* the files' clock domain (a file's clock); NULL: they differ */
	uint32_t nhosts;
	int32_t world_size;     /* the ranks' (they agree); -1 unknown */
	uint32_t nmissing;      /* ranks below world_size with no part */
};

/* job_open()'s flags. */
enum job_open_flag {
	/* take files of different jobs together (--mixed-jobs): no check below */
	JOB_OPEN_MIXED = 1u << 0,
};

/* Reads what the job needs to know of each file (its header, its end from
 * its last chunk, and the process table of a file that holds several
 * ranks; the events are read by job_load()), and checks that the ranks are
 * one job unless flags has JOB_OPEN_MIXED: one world size, and runs that
 * were under way at one time (the latest start of a file before the
 * earliest end, on wall time), and one job identity where the files say
 * theirs (trace 2.1). 0, or -1 with a one-line message naming the files in
 * err. */
int job_open(struct job *j, int nfiles, char **paths, unsigned flags, char *err, size_t errlen);
/* job_open() for a command that says its own errors: on failure, the
 * progress line ended and the message said (error()); 0 or -1. Only reads
 * the paths. */
int job_open_said(struct job *j, int nfiles, char *const *paths, unsigned flags);
void job_free(struct job *j);

/* Loads part p (index in j->ranks) into a, which is initialised and empty,
 * on the job's clock, and prepares it: the analysis of that rank alone. Its
 * one store file has the part's root pid and rank. What the part's process
 * table says of the root's end (exit status, end time) is recorded in
 * j->ranks[p] where job_open() did not know it. A damaged file loads up to
 * its damage (store_file.damage says so). 0, or -1 with a one-line message
 * in err. */
int job_load(struct job *j, uint32_t p, struct analysis *a, char *err, size_t errlen);

/* Each of the first n parts of the job loaded (job_load()) and handed to
 * each(ctx, p, a, err, errlen) in part order, on the calling thread; a is
 * freed when it returns. The next parts are read ahead on other threads
 * (parallel_threads() - 1 of them, at most 3) while each() works, so at
 * most 4 parts are in memory. 0; or -1 with the message in err of the
 * first part that could not be read or whose each() returned non-zero (no
 * part after it is handed out). */
int job_load_each(struct job *j, uint32_t n,
		  int (*each)(void *ctx, uint32_t p, struct analysis *a, char *err, size_t errlen),
		  void *ctx, char *err, size_t errlen);

/* Loads every file of the job into a, as one analysis (the views that sum
 * the job up as one program: operators, kernels, ...), and prepares it. */
int job_load_all(const struct job *j, struct analysis *a, char *err, size_t errlen);

/* The loader summary, bench and diff share for traces taken together as one
 * program: loads every file into a (on one clock, as job_load_all()),
 * warning about each damaged one ("trace 'x' is damaged at offset N: ...;
 * DONE up to there"), and prepares it. 0, or -1 after an error message. */
int job_load_files(struct analysis *a, int nfiles, char **paths, const char *done);
/* The warning above, for each damaged file of a's store from file `from` on. */
void job_warn_damage(const struct analysis *a, uint32_t from, const char *done);

/* "rank 2", "ranks 2, 3", "ranks 2-63": the ranks of the job's world size
 * that no part holds (j->nmissing of them). */
void job_missing_words(char *buf, size_t size, const struct job *j);

/* "rank 3", or "rank -1" parts as "pid 4242": a part's name in messages. */
const char *job_part_name(char *buf, size_t size, const struct job *j, uint32_t p);

/* ---- the job clock, for the exports of a job --------------------------------- */

/* The job's clock minus file f's own: its wall clock offset when the job is
 * on Unix wall time (files from several hosts or clocks), else 0. */
int64_t job_file_shift(const struct job *j, uint32_t f);
/* The earliest start of a file on the job's clock (0 without files), and
 * the wall clock offset of the job's clock: 0 on wall time, else that of
 * the file that starts first. */
void job_clock_base(const struct job *j, uint64_t *base, int64_t *wall);

/* "rank 1 (pid 4242, host a)": a part's title in an export (a part of no
 * rank is the launcher of a job's ranks, or a trace of its own). */
void job_part_title(char *buf, size_t size, const struct job *j, uint32_t p);
/* A part's pid in an export: its root's, unless another part has the same
 * (ranks on several hosts, in containers), then one above any pid. */
uint32_t job_part_out_pid(const struct job *j, uint32_t p);
/* Part p's processes as an export driver filters them (f filled), or NULL
 * for the whole file. The file's system-wide counters go with the part that
 * is the whole file, or the rest of it (the launcher), or else the file's
 * first part. */
const struct export_filter *job_part_filter(const struct job *j, uint32_t p,
					    struct export_filter *f);

#endif
