/*
 * recorder.h - the launcher's side of collection: it owns the shared-memory
 * rings the collector writes into, drains them, and turns their records into
 * the trace file.
 *
 * Why the launcher and not the target writes the file: the target never blocks
 * on disk I/O in an annotation call, and when the target dies, even of SIGKILL,
 * every record it completed is still in the rings. Ranges that were open when a
 * thread or process ended are recovered from the push-stack mirror in each slot
 * and recorded as open at exit.
 *
 * What the recorder pairs and interns: ring string ids (global, per run) to
 * file string ids by content; (name, domain, category) to trace descs with their
 * event type (domain "gprof-dl" categories name the training phases); RangeStart
 * with RangeEnd across threads. Drops, from full rings and from threads that
 * found no free slot, are written to the trace: never hidden. Ranges with
 * details (an operator's sequence number and shapes, a step's samples) become
 * events with those details (trace format 1.2), open ones recovered from the
 * mirror included; a mirror entry the collector marked as not recorded (its
 * push came while the recording window was closed) is skipped. Nothing
 * assumes a thread's ranges come in start order: a step recorded when it
 * ended follows the ranges inside it.
 *
 * Single-threaded: every call comes from the launcher's one loop.
 */
#ifndef GPDL_RECORDER_H
#define GPDL_RECORDER_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct recorder;

struct recorder_opts {
	const char *out_path;
	int force;
	uint32_t nslots;
	uint64_t ring_bytes;         /* per thread, a power of two */
	uint64_t sample_interval_ns; /* CPU utilisation sampling */
};

struct recorder_stats {
	uint64_t events, dropped, processes, threads, bytes;
};

/* Creates the shared memory and opens the output file (before the target
 * starts, so an existing file is an error without --force). NULL with a
 * message already printed. */
struct recorder *recorder_create(const struct recorder_opts *opts);
/* The value for GPROF_DL_SHM in the target's environment. */
const char *recorder_shm_env(const struct recorder *r);
/* The target's root process has started: writes the trace header. */
int recorder_begin(struct recorder *r, pid_t root, int argc, char **argv, uint32_t sources);
/* Drains every slot once and samples counters when due. Returns the number of
 * bytes drained (callers poll again sooner when it was a lot). */
uint64_t recorder_poll(struct recorder *r);
/* A process of the target ended (reaped by the launcher, which is the tree's
 * subreaper): status as from waitpid, usage as from wait4. */
void recorder_process_reaped(struct recorder *r, pid_t pid, int status, const struct rusage *usage);
/* Final drain, open ranges recovered, END written. 0 or -1. */
int recorder_finish(struct recorder *r, struct recorder_stats *stats);
/* Closes the file and removes it: the target never started. */
void recorder_abort(struct recorder *r);
void recorder_destroy(struct recorder *r);

#endif
