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
 * GPU records (ring version 3) arrive in whichever slot CUPTI's thread
 * writes to, and name their own tracks, as an import of the PyTorch
 * profiler's traces has them: a CUDA call goes on the host track of the
 * thread that made it (the very track that thread's own slot gives, even
 * when the call is drained first); a kernel, copy or set on the track of
 * its CUDA stream; an allocation or free on its stream's track as a Memory
 * instant with the bytes in use on its device; a synchronization on its
 * stream's track (a context's on a track of the context); CUPTI's overhead
 * on a host track of its own per process, CUPTI's lost records as drops of
 * a "[CUPTI]" track. External ids (the framework's operator ids) reach the
 * calls and work of their correlation ids. CUPTI's status (why GPU
 * collection is off or degraded) is printed once per message and returned
 * in the stats. The trace's header says which sources the collector was
 * built with: the caller passes TRACE_SRC_CUPTI to recorder_begin() (the
 * header is written before any record arrives).
 *
 * Collectives (ring version 4, the bindings' comm()) become Communication
 * events on the thread that recorded them, their bytes and call identity
 * (sequence number, process group, group size, dtype, peer) in the
 * details; a gprof-dl-domain operator named as a backend's collective
 * ("gloo:all_reduce", trace_name_comm_call()) is typed Communication too.
 *
 * Distributed runs (ring version 4): every process reports the rank its
 * environment gives it, and init_process_group's through the bindings.
 * The recorder keeps each process's identity and decides at the end which
 * processes are ranks (the rank roots: innermost processes whose rank
 * differs from their parent's; every other process belongs to the rank
 * root above it, or to none: a launcher), and writes PROC records with the
 * resolved rank, also during the run, so that a file whose launcher was
 * killed still says which process was which rank. With a per-rank -o
 * pattern (outname.h) it then splits the recorded file (split.h): one file
 * per rank, named by the pattern in the rank root's environment (which the
 * collector reports: RING_REC_PROCESS_VAR), the rest (the launcher's
 * processes) rewritten in place; a name another rank of the run took, or
 * an existing file without --force, is made distinct, never overwritten.
 *
 * Exit statuses: the launcher reaps only its own children (it is the
 * tree's subreaper: orphans too); a process its parent reaps gets the
 * status /proc showed while it was a zombie, else the code it reported on
 * its way out (exit, _exit, main's return), else TRACE_EXIT_KILLED: it died
 * without exiting. A process is ended only once what its slots hold was
 * drained (a start drained late confirms it, never adds it twice), and a
 * pid whose /proc start time is later than the process's own start was
 * reused: it is not watched as that process.
 *
 * Single-threaded: every call comes from the launcher's one loop.
 */
#ifndef GPDL_RECORDER_H
#define GPDL_RECORDER_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct recorder;
struct outname;

struct recorder_opts {
	const char *out_path;
	int force;
	uint32_t nslots;
	uint64_t ring_bytes;         /* per thread, a power of two */
	uint64_t sample_interval_ns; /* CPU utilisation sampling */
	/* -o's pattern when it names a file per rank (outname_per_rank()):
	 * out_path is its expansion in gprof-dl's own environment, for the
	 * root process; the end splits it. NULL: one file. */
	const struct outname *pattern;
	/* The shared memory, when the caller made it (recorder_shm_create())
	 * before forking the target, which inherits it: the recorder takes it
	 * over. 0: the recorder makes its own. */
	int shm_fd;
	/* Bytes of spilled records (rings that backed up) kept in memory
	 * before the newest go to a file beside the output; 0: 256 MiB.
	 * At least 4 rings' worth. */
	uint64_t spill_memory;
};

/* A rank of the run, as resolved at the end. */
struct recorder_rank {
	int32_t rank, local_rank, world_size;
	uint32_t pid;        /* its rank root */
	int32_t exit_status; /* the rank root's: code, 128 + signal, TRACE_EXIT_KILLED or _UNKNOWN */
	int32_t exit_signal; /* N > 0: it died of signal N; 0: exit_status is a code or unknown */
	const char *path;    /* the file that holds it */
};

/* A status CUPTI reported (enum ring_gpu_status_code), one per message. */
struct recorder_gpu_status {
	unsigned code;
	const char *msg;
};

struct recorder_stats {
	uint64_t events, dropped, processes, threads, bytes;
	/* Threads that found every ring slot taken (more alive at once than
	 * --max-threads), and their events, which were dropped (in dropped too). */
	uint64_t no_slot_threads, no_slot_events;
	/* GPU collection (CUPTI). Pointers are valid until recorder_destroy(). */
	uint64_t gpu_events;  /* events made of GPU records (in events too) */
	uint64_t gpu_dropped; /* activity records CUPTI lost (in dropped too) */
	int gpu_status;       /* the worst code reported: collection off (1..5) is
			       * worse than degraded (RING_GPU_BUFFERS), which is
			       * worse than on (RING_GPU_ON); -1: none reported */
	const char *gpu_status_msg; /* its message; NULL with none */
	const char *gpu_on_msg;     /* RING_GPU_ON's: the CUPTI in use; NULL: none */
	const struct recorder_gpu_status *gpu_statuses; /* every distinct one, in order */
	uint32_t ngpu_statuses;
	/* The ranks, by rank then pid, and the file of the processes of no
	 * rank (NULL: there were none: every process was a rank's). Valid
	 * until recorder_destroy(). */
	const struct recorder_rank *ranks;
	uint32_t nranks;
	const char *launcher_path;
	/* Records copied out of rings that backed up and converted later
	 * (lib/recorder/spill.c): bytes in all, the most waiting at once, those
	 * that went to the spill file, records lost there (a file that could not
	 * be read back: in dropped too), time spent converting them. */
	uint64_t spilled_bytes, spill_peak_bytes, spill_file_bytes, spill_lost, spill_convert_ns;
	/* Back-pressure (GPROF_DL_BACKPRESSURE=1, off by default): ns the
	 * program's threads waited for room in their rings, all together. */
	uint64_t waited_ns;
	int32_t root_exit_status; /* the root process's */
	int32_t root_exit_signal; /* and the signal it died of, 0: none */
};

/* A memfd for recorder_opts.shm_fd (close-on-exec); -1 with errno. */
int recorder_shm_create(void);
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
/* 1 while records wait in the spill to be converted: the poll loop then
 * polls again at once. */
int recorder_backlog(struct recorder *r);
/* Starts the spiller, a thread that empties the rings that back up into the
 * spill while the poll loop converts (spill.c), until recorder_finish() or
 * recorder_destroy(). Without it (it could not start, or it was never
 * asked for: tests that drive the poll themselves), the poll spills. */
void recorder_spiller_start(struct recorder *r);
/* Sleeps timeout_ns between polls, or less: until a ring of the target is
 * half full. */
void recorder_wait(struct recorder *r, uint64_t timeout_ns);
/* A process of the target ended (reaped by the launcher, which is the tree's
 * subreaper): status as from waitpid, usage as from wait4. */
void recorder_process_reaped(struct recorder *r, pid_t pid, int status, const struct rusage *usage);
/* Final drain, open ranges recovered, ranks resolved, END written, and
 * with a per-rank pattern the file split. 0 or -1 (a message printed; the
 * recorded file is then left whole). */
int recorder_finish(struct recorder *r, struct recorder_stats *stats);
/* Closes the file and removes it: the target never started. */
void recorder_abort(struct recorder *r);
void recorder_destroy(struct recorder *r);

#endif
