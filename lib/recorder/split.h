/*
 * split.h - one recorded trace made into several: a distributed run's
 * trace, recorded whole into the launcher's file, split into one trace per
 * rank and the launcher's remainder (`gprof-dl run -o t-%q{RANK}.gpdl`).
 *
 * The recorded file is read once with the trace reader; every record goes
 * to the output of the process it belongs to, re-interned (strings, descs)
 * and re-indexed (threads) through that output's writer:
 *  - a thread (host thread or GPU stream), its events and its drops to its
 *    process's output: the process image of its pid that had started when
 *    the thread started;
 *  - a process record to its own output; a counter of a process to that
 *    process's output, a system-wide counter (pid 0) to every output;
 *  - devices and category names to every output.
 * Each output's header is the caller's. Outputs are written to the paths
 * given (fresh temporary names: the caller renames them into place, so that
 * nothing is overwritten half-written).
 */
#ifndef GPDL_RECORDER_SPLIT_H
#define GPDL_RECORDER_SPLIT_H

#include "formats/trace/trace.h"

#include <stddef.h>
#include <stdint.h>

struct split_out {
	const char *path;       /* a path that does not exist yet */
	struct trace_header h;  /* its META (version, strings: the caller's) */
	uint64_t end_ns;        /* its END */
};

/* A process image of the recorded trace and the output it goes to. */
struct split_proc {
	uint32_t pid;
	uint64_t start_ns;
	uint32_t out;
};

/* Splits src into outs (processes not listed, and records of no process,
 * go to outs[0]). cats: the category names of src (string ids of src),
 * which the reader does not enumerate. 0, or -1 with a one-line message in
 * err; outputs written so far are removed on failure. */
int split_trace(const char *src, const struct split_out *outs, uint32_t nouts,
		const struct split_proc *procs, uint32_t nprocs, const struct trace_category *cats,
		uint32_t ncats, char *err, size_t errlen);

/* The same, by time (`gprof-dl run --schedule -o t-%n.gpdl`: a file per
 * cycle): output i takes the events whose middle lies in [spans[2i],
 * spans[2i+1]) and the counters sampled there; every process, thread and
 * device goes to every output (thread indices kept), drops to the first;
 * so does the collector's "window: SPEC" mark, which says what each piece
 * was recorded with. Category names are not carried. */
int split_by_time(const char *src, const struct split_out *outs, uint32_t nouts, const uint64_t *spans,
		  char *err, size_t errlen);

/* `gprof-dl run --schedule` with -o naming %n: the recorded trace at path
 * split into a trace per cycle (split_by_time() over the cycles' spans,
 * capture.h), each named by the pattern in turn (t-1.gpdl, t-2.gpdl, ...;
 * the whole one is removed), never over an existing file without force,
 * each said on stderr unless quiet. The first one's name in *first (NULL
 * when there was no cycle: the one trace stays, with a warning). 0, or 1
 * after a message. (The split by rank is rec_split_ranks(), ranks.c, over
 * split_trace().) */
struct outname;
int split_cycles(const char *path, const struct outname *pattern, uint32_t pid, int quiet, int force,
		 char **first);

#endif
