/*
 * recorder_int.h - what the parts of the recorder share: struct recorder,
 * the tables it keeps, and the few functions one part calls in another.
 * Internal to lib/recorder (never installed, never included outside it).
 *
 * The recorder is cut along its parts:
 *  - recorder.c: the public API (recorder.h): create, begin, the poll loop,
 *    finish (the end's order of draining and writing), abort, destroy;
 *  - drain.c: reading the rings: slots, the records of the program's
 *    threads, deferral of records whose strings have not come, the tables of
 *    ring strings and their descs, ranges paired across threads;
 *  - gpu.c: the GPU records (CUPTI's): devices, streams, kernels, copies,
 *    memory, external ids, statuses;
 *  - process.c: the process table: processes seen, watched, ended, reaped,
 *    and their CPU and memory counters;
 *  - ranks.c: which processes are ranks, their PROC records, and the split
 *    into one file per rank at the end.
 *
 * Invariants: a drain never starts inside another (they share buf, and
 * finishing a slot drains it); adding a thread or a process may move the
 * threads and procs tables, so code that can add one holds indices, not
 * pointers. The helpers below are static inline because the drain calls
 * them for every record: a call across files would cost what the drain
 * did not pay when it was one file.
 */
#ifndef GPDL_RECORDER_INT_H
#define GPDL_RECORDER_INT_H

#include "common/hmap.h"
#include "common/outfile.h"
#include "formats/trace/trace.h"
#include "lib/recorder/cpu_sampler.h"
#include "lib/recorder/recorder.h"
#include "lib/ring/ring.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define NO_THREAD UINT32_MAX
/* External ids are kept for this many correlation ids after the newest
 * (CUDA calls of the process): GPU work completes, and CUPTI delivers it,
 * long before that many more calls were made. */
#define XID_WINDOW (1u << 16)
#define XID_PRUNE_MIN (2u * XID_WINDOW)
/* What a name says about communication, and whether it came (recorder.strcomm). */
#define STR_COMM_WORK 1u /* GPU work of NCCL or RCCL (trace_name_is_comm_work) */
#define STR_COMM_CALL 2u /* a backend's collective, "gloo:all_reduce" (trace_name_comm_call) */
#define STR_COMM_WORK_KNOWN 4u /* STR_COMM_WORK was looked for (only kernels' names need it) */
#define STR_GIVEN_UP 8u /* never came: its text is string_give_up()'s placeholder */

struct rec_thread {
	struct trace_thread t;
	uint64_t dropped; /* written so far */
	uint32_t prev;    /* the thread before it with the same (pid, tid), NO_THREAD: none */
	uint8_t bound;    /* a slot's thread; else a track made for GPU records */
	uint8_t gpu;      /* a stream's, CUPTI's overhead or drops track */
	uint8_t device_known; /* a stream: t.device is its device's */
	uint64_t lo, hi;  /* the span of the events GPU records put on it; lo > hi: none */
};

struct rec_process {
	struct trace_process p; /* p.rank...: as resolved (rec_resolve_ranks()) */
	int seen_start; /* the collector reported it (not just the launcher's guess) */
	int alive;
	/* Its identity, as it reported it (RING_REC_PROCESS_RANK): source 0 is
	 * none. An exec'd image starts with its old image's. */
	unsigned rank_source;
	int32_t rank, local_rank, world_size;
	uint32_t backend; /* file string id, 0: unknown */
	uint32_t job;     /* the job its environment names, file string id; 0: none */
	char *vars[RING_VARS_MAX]; /* the output variables at its start (NULL: unset) */
	/* vars were reported by the process itself (or an image before it),
	 * not only by a fork child at the fork (RING_VAR_FORKED) */
	int vars_own;
	/* How it ended, for a process the launcher does not reap. */
	int reaped;            /* p.exit_status is waitpid's */
	int exit_reported;     /* PROCESS_EXIT came: exit_code is its code, -1 unknown */
	int32_t exit_code;
	int32_t zombie_status; /* waitpid's status read from /proc as a zombie, or from its
				* pidfd once reaped (PIDFD_INFO_EXIT); -1: not seen */
	int32_t root;          /* the image of its rank root (rec_resolve_ranks()), -1: no rank's */
	int pidfd;             /* readable once it ended (process_watch()); -1: none */
	uint64_t start_ticks;  /* /proc's start time of the process its pid names (stat field 22):
				* a pid that names another by now is a reused one; 0: unknown,
				* UINT64_MAX: already reused when it was added */
	struct trace_process written; /* as last written; written.pid 0: never */
};

/* Raw ring records the launcher took out of a slot faster than it could
 * turn them into the trace (spill.c): a copy, to be converted in order. */
struct spill_chunk {
	struct spill_chunk *next;
	unsigned char *data; /* ring_bytes of room; NULL while the chunk is in the file */
	uint64_t file_off;   /* where it is in the spill file, when data is NULL */
	uint32_t len;        /* bytes of whole records */
	uint32_t done;       /* of them, converted */
	uint32_t scanned;    /* of them, seen by rec_gpu_prescan() */
	uint32_t pid;        /* the slot's when they were read */
	uint64_t nrec;       /* records in it, counted when it went to the file */
};

struct slot_state {
	uint32_t generation;
	int32_t thread; /* rec_thread index, -1 when none yet */
	uint64_t dropped_seen;
	/* Its records spilled, oldest first: while there are any, what the
	 * slot's ring holds joins them (a slot's records are converted in
	 * the order it wrote them). */
	struct spill_chunk *spill_head, *spill_tail;
	uint64_t spill_bytes; /* not yet converted */
	uint64_t spill_lost;  /* records of it lost (the spill file could not be read back) */
	int finishing;        /* finish_slot() drains it alone: the spiller leaves it */
};

/* The spill: what a backlog costs. Chunks of ring_bytes, in memory up to
 * mem_cap (then the newest full ones go to a file beside the output, and
 * come back one at a time); a ring waits (its thread drops, counted) only
 * when neither has room. */
struct spill {
	uint64_t mem_cap;
	uint64_t mem_bytes;     /* chunk buffers allocated, pool included */
	unsigned char *pool[8]; /* buffers free for a new chunk */
	uint32_t npool;
	uint32_t slots;         /* slots with records spilled */
	uint32_t next;          /* the slot the next conversion step starts looking at */
	int fd;                 /* the spill file, -1: none yet; -2: cannot be had */
	uint64_t file_end;      /* bytes written to it since it was last empty */
	/* for the end's report */
	uint64_t total_bytes, peak_bytes, file_bytes, lost_records;
	uint64_t convert_ns;    /* time spent converting spilled records */
	uint64_t pending;       /* bytes spilled, not yet converted, over every slot */
	/* The spiller (rec_spiller_start()): a thread that only copies backed-up
	 * rings into the spill, so that a ring is emptied when the program fills
	 * it even while the converting thread waits for a CPU. mu is held by
	 * whoever reads a ring (moves its tail) or touches the chunks, the pool,
	 * the file or the figures above; never while records are converted. */
	pthread_mutex_t mu;
	pthread_t spiller;
	int spiller_on;
	_Atomic int spiller_stop;
};

struct pending_start {
	uint64_t ts;
	uint32_t name, domain, category, flags;
	uint32_t thread;
};

struct deferred {
	uint32_t slot;
	uint32_t pid; /* the slot's, when drained: GPU records are that process's */
	uint32_t polls;
	_Alignas(8) unsigned char rec[sizeof(struct ring_range_ext) + 8]; /* records are read in place */
	unsigned char *big; /* records larger than rec[] (strings never defer) */
};

/* A ring name's desc, for its first domain and category (ring ids). */
struct ring_desc {
	uint32_t desc; /* 0: none yet */
	uint32_t domain, category;
};

struct recorder {
	struct recorder_opts opts;
	char *out_path;
	int memfd;
	struct ring_shm *shm;
	size_t shm_len;
	char shm_env[64];
	struct trace_writer *w;
	/* The trace's temporary file (common/outfile.h), written in place as
	 * the run goes (readable up to any damage, even after a SIGKILL of
	 * gprof-dl), renamed out_path at the end (rec_install). */
	struct outfile of;

	uint32_t *strmap; /* ring string id -> file string id */
	size_t strmap_cap;
	int strmap_mapped; /* strmap, domfile, rdescs, strcomm: reserved whole (drain.c) */
	uint32_t gprofdl_domain; /* file string id of "gprof-dl" (domain_file_id()), 0 until seen */
	uint32_t *domfile;       /* ring string id -> its file id as a domain (domain_file_id()), 0: not yet */
	struct ring_desc *rdescs; /* ring string id -> the desc of its first (domain, category) */
	struct hmap descs;       /* (name | domain << 32, category) -> desc id, for the other ones */
	struct hmap starts;      /* range id -> struct pending_start * */
	struct hmap ends;        /* range id -> end ts, for an End drained before its Start */
	struct hmap end_threads; /* range id -> thread of that End */
	uint8_t *strcomm;        /* ring string id -> STR_COMM_* bits: what the name says */

	/* GPU records */
	struct hmap tids;     /* (pid, tid) -> the latest host track of that thread */
	struct hmap streams;  /* stream_key() -> stream track */
	struct hmap ctxdev;   /* (pid, context) -> device */
	struct hmap proc_tracks; /* (pid, 0) CUPTI overhead track, (pid, 1) "[CUPTI]" */
	struct hmap gdescs;   /* (file name id, type), or a copy's key -> desc id */
	struct hmap xids;     /* (pid, correlation id) -> external id */
	struct hmap xid_max;  /* (pid, 0) -> the newest correlation id with an external id */
	size_t xid_prune_at;
	struct hmap blocks;   /* (pid | device << 32, address) -> bytes allocated */
	struct hmap in_use;   /* (pid | device << 32, 0) -> bytes in use */
	struct hmap kept_strs; /* file string id of a rank's backend or a job -> its text, for the split's headers */
	uint32_t launcher_job; /* file string id of this run's own job identity (ranks.c), 0: not made yet */
	uint32_t mem_desc, sync_desc[RING_GPU_SYNC_CONTEXT + 1];
	struct trace_device *devs; /* written */
	uint32_t ndevs;
	struct recorder_gpu_status *statuses;
	uint32_t nstatuses;
	uint64_t gpu_events, gpu_dropped;

	struct rec_thread *threads;
	uint32_t nthreads, threads_cap;
	struct rec_process *procs;
	uint32_t nprocs, procs_cap;
	int procs_dirty;         /* a process or its rank changed since PROC records were written */
	int has_ranks;           /* some process reported a rank */
	/* per-rank counters (sample_rank_counters()) */
	struct hmap pid_ticks;   /* (pid, start) -> own CPU ticks at the last sample */
	int rank_sampled, launcher_share;
	uint64_t rank_last_ts;
	double launcher_pct, launcher_rss;
	struct trace_category *cats; /* category names written (file ids), for the split */
	uint32_t ncats;
	struct recorder_rank *ranks; /* for the report, after recorder_finish() */
	uint32_t nranks;
	char **rank_paths;
	char *launcher_path;
	struct trace_header hdr; /* the recorded file's META */
	char *hdr_host, *hdr_cmdline, *hdr_job;
	struct slot_state *slots;

	struct deferred *deferred;
	size_t ndeferred, deferred_cap;
	struct spill spill;
	/* Processes that exec'd, whose old image's threads are finished once the
	 * current drain pass is over: finishing drains, and a drain must not
	 * start inside another (they share buf). */
	struct exec_end {
		uint32_t pid;
		uint64_t ts;
	} *execs;
	size_t nexecs, execs_cap;
	uint64_t unknown_strings;
	uint64_t waited_ns; /* the slots' waited_ns (back-pressure), summed as they are finished */
	uint64_t no_slot_threads, no_slot_events; /* as the collector counted them, at the end */

	struct cpu_sampler cpu;
	uint64_t next_sample, next_flush, next_liveness, next_watch;
	struct pollfd *watch_fds; /* the live processes' pidfds, for one poll() */
	uint32_t *watch_procs;    /* and their indices in procs */
	size_t watch_cap;
	unsigned char *buf;
	pid_t root;
	uint64_t events, start_ns;
	int failed;
	int write_errno; /* why the trace could not be written (sticky in the writer), 0: it could */
};

/* The writer failed (a full disk, a file size limit): its error is
 * sticky, nothing more reaches the file. The first cause is kept for the
 * end's report of what was lost. */
static inline void write_failed(struct recorder *r)
{
	if (!r->write_errno)
		r->write_errno = errno ? errno : EIO;
	r->failed = 1;
}

static inline int string_known(const struct recorder *r, uint32_t ring_id)
{
	return ring_id == 0 || (ring_id < r->strmap_cap && r->strmap[ring_id] != 0);
}

static inline uint32_t string_file_id(const struct recorder *r, uint32_t ring_id)
{
	return ring_id < r->strmap_cap ? r->strmap[ring_id] : 0;
}

static inline void thread_write(struct recorder *r, struct rec_thread *t)
{
	if (trace_writer_thread(r->w, &t->t) != 0)
		write_failed(r);
}

static inline void event_write_ext(struct recorder *r, uint64_t start, uint64_t end, uint32_t desc,
				   uint32_t thread, uint8_t flags, const struct trace_event_ext *ext)
{
	struct trace_event e = {
		.start_ns = start,
		.dur_ns = end > start ? end - start : 0,
		.desc = desc,
		.thread = thread,
		.flags = flags,
		.ext = ext,
	};
	if (trace_writer_event(r->w, &e) != 0)
		write_failed(r);
	r->events++;
}

static inline int is_gpu_record(unsigned kind)
{
	return kind >= RING_REC_GPU_API && kind <= RING_REC_GPU_STATUS;
}

/* process.c: the process table */
struct rec_process *rec_process_find(struct recorder *r, uint32_t pid, int alive_only);
struct rec_process *rec_process_add(struct recorder *r, uint32_t pid, uint32_t ppid, uint64_t ts);
void rec_process_unwatch(struct rec_process *p);
void rec_process_started(struct recorder *r, const struct ring_process *x);
uint32_t rec_process_ended(struct recorder *r, uint32_t i, uint64_t end_ns);
void rec_check_watches(struct recorder *r, uint64_t now);
void rec_check_liveness(struct recorder *r, uint64_t now);
void rec_sample_counters(struct recorder *r, uint64_t now);

/* drain.c: the rings */
uint32_t rec_thread_add(struct recorder *r, uint32_t pid, uint32_t tid);
uint64_t rec_drain(struct recorder *r);
void rec_drain_final(struct recorder *r, uint64_t end_ns);
void rec_drain_pending(struct recorder *r);
void rec_strmap_free(struct recorder *r);
void rec_finish_process_slots(struct recorder *r, uint32_t pid, uint64_t end_ns);
void rec_finish_pending_ranges(struct recorder *r, uint64_t end_ns);

/* spill.c: raw records kept while the conversion lags */
#define SPILL_BACKLOG(r) ((r)->opts.ring_bytes / 4) /* pending bytes that make a ring spill */
void rec_spill_init(struct recorder *r);
void rec_spill_free(struct recorder *r);
/* The spill's lock (struct spill: mu); the functions below but init, free
 * and the spiller's are called with it held. */
static inline void rec_spill_lock(struct recorder *r)
{
	pthread_mutex_lock(&r->spill.mu);
}
static inline void rec_spill_unlock(struct recorder *r)
{
	pthread_mutex_unlock(&r->spill.mu);
}
uint64_t rec_spill_append(struct recorder *r, uint32_t slot_idx);
uint64_t rec_spill_rings(struct recorder *r, uint32_t except);
struct spill_chunk *rec_spill_head(struct recorder *r, uint32_t slot_idx);
void rec_spill_consumed(struct recorder *r, uint32_t slot_idx, uint32_t bytes);
/* Starts the spiller thread (0, or -1: none, the poll loop spills as
 * before); stops it (a no-op when none runs). */
int rec_spiller_start(struct recorder *r);
void rec_spiller_stop(struct recorder *r);

/* gpu.c: GPU records */
uint32_t rec_desc_typed(struct recorder *r, uint32_t name, uint8_t type);
void rec_gpu_prescan(struct recorder *r, uint32_t pid, const unsigned char *buf, size_t n);
int rec_gpu_record(struct recorder *r, uint32_t pid, const struct ring_rec *h);
void rec_finish_gpu_tracks(struct recorder *r, uint64_t end_ns);
void rec_stats_gpu(const struct recorder *r, struct recorder_stats *stats);

/* ranks.c: ranks and their files */
void rec_process_identity(struct recorder *r, struct rec_process *p, const struct ring_process_rank *x);
void rec_resolve_ranks(struct recorder *r);
void rec_write_processes(struct recorder *r);
void rec_collect_ranks(struct recorder *r, uint32_t **roots);
int rec_split_ranks(struct recorder *r, const uint32_t *roots, uint64_t end);

#endif
