/*
 * trace_ranks.h - the one rule for which process of a trace is a rank's
 * root: the process the rank is (torchrun's child, the program a launcher
 * started), as opposed to those it started (DataLoader workers). Every
 * reader of process tables calls it: a job's parts (lib/analysis/dist),
 * `gprof-dl info`, the recorder's split into one file per rank.
 *
 * The rule, over the PROC records of one file: a process's rank counts
 * when it is >= 0 and below its world size (or the world size is unknown):
 * a record zeroed by an older writer is no rank 0. Of the processes of rank
 * r, the root is the one whose parent is not of rank r (no process of rank
 * r with the parent's pid that started no later than it), the earliest
 * such; the images of one pid (a shell that forked, then exec'd python) are
 * one process, and the root is its latest image, so that its end and exit
 * are those of the program it became, not of the shell before the exec.
 *
 * Which processes belong to which rank is the recorder's to decide, from
 * the identities they reported (lib/recorder/ranks.c: the innermost one
 * wins, torchrun's workers under srun); it writes each process's rank in
 * PROC, with the rank's root as the process whose parent has another
 * identity, so that this rule finds the same process in the file.
 */
#ifndef GPDL_FORMATS_TRACE_RANKS_H
#define GPDL_FORMATS_TRACE_RANKS_H

#include "formats/trace/trace.h"

#include <stdint.h>

/* The rank a process record names when it counts, else -1. */
int32_t trace_process_rank(const struct trace_process *p);

/* Record i of n, for trace_rank_root(): a reader's table, or a writer's. */
typedef const struct trace_process *(*trace_process_at_fn)(const void *ctx, uint32_t i);

/* The index of rank's root (its latest image), or -1 when no record names
 * the rank. */
int64_t trace_rank_root(trace_process_at_fn at, const void *ctx, uint32_t n, int32_t rank);

#endif
