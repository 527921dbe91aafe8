/*
 * ring.h - the shared-memory protocol between the collector (in the target) and
 * the launcher that drains it.
 *
 * The launcher creates one memfd, sized for RING_SLOTS thread slots, and tells
 * the target where it is through GPROF_DL_SHM=/proc/<launcher>/fd/<n> (a path,
 * so that children which close inherited descriptors, and exec'd programs, can
 * still open it). The target also inherits the memfd itself, named by
 * GPROF_DL_SHM_FD, for the processes that lose the right to open that path
 * (a setuid to another user). Every thread of every process of the target
 * claims a slot of its own with a compare-and-swap: no lock anywhere.
 *
 * A slot is a single-producer single-consumer byte ring. The producer is the one
 * thread that owns it; the consumer is the launcher. head and tail count bytes
 * ever written / consumed, so head - tail is what is pending and neither wraps
 * in practice. The producer publishes head with release order after writing the
 * record; the consumer publishes tail with release order after copying it out.
 * A record that does not fit is not written: the slot's dropped counter grows
 * and the launcher reports it. Nothing waits, unless back-pressure was asked
 * for (RING_SHM_WAIT, below). The producer reads the consumer's tail only
 * when the room it knows runs out or every eighth of a ring, and wakes the
 * launcher from its sleep between polls (a futex) when its ring is half
 * full, and the launcher's spiller thread when it is three quarters full;
 * the launcher copies a ring that backs up aside and converts it later
 * (lib/recorder/spill.c), so a ring fills only while the launcher gets no
 * CPU at all.
 *
 * Each slot also mirrors the thread's NVTX push stack, so that when a process
 * dies (SIGKILL included) the launcher still knows which ranges were open and
 * since when, and records them as open at exit.
 *
 * Records are 8-byte aligned and start with struct ring_rec. String ids are
 * global (one atomic counter in the header, which a thread may take ids
 * from a block at a time), so a STRING record written by one thread defines
 * an id any thread may use afterwards. Each STRING record defines a new id:
 * the launcher appends it to the trace's strings without looking its text
 * up (the same text under several ids is one name to the trace's readers);
 * only an id used as a domain is looked up, so that a domain has one id in
 * the trace.
 *
 * Version 2 (the header's version; a collector and a launcher of different
 * versions do not attach) adds what PyTorch operators and training steps
 * carry: RING_REC_RANGE_EXT, a complete range with a sequence number, input
 * shapes (a string id) and a step's samples, and the same fields in the
 * push-stack mirror, so that a range open at exit keeps them. A mirror entry
 * flagged RING_OPEN_SKIP holds a range the collector does not record (pushed
 * while the recording window was closed): the launcher recovers no event for
 * it. Complete ranges are written at their end, or all at once (a step known
 * to have been one only when it ended), so a slot's ranges are in no order
 * of start.
 *
 * Version 3 adds GPU activity from CUPTI (lib/collector/cupti.c): the
 * RING_REC_GPU_* records below, written by whichever thread of the target
 * CUPTI hands a completed activity buffer to (its worker thread, or the one
 * that flushes), into that thread's own slot like any other record. They
 * carry their own identity (calling thread, device, context, stream) and
 * times already on the host clock (CLOCK_MONOTONIC), so the launcher files
 * them on the tracks they name, whatever slot they arrive in. Their pid is
 * the slot's.
 *
 * Version 4 adds distributed runs: RING_REC_PROCESS_RANK, the rank a
 * process has (from the launchers' environment variables at its start, or
 * from the program's init_process_group through the bindings' interface;
 * a later source overrides an earlier one, the recorder decides at the end
 * which processes are ranks); RING_REC_PROCESS_VAR, the values at a
 * process's start of the environment variables `gprof-dl run -o` names in
 * its file name pattern (GPROF_DL_OUTPUT_VARS), so that each rank's file is
 * named from its own environment; RING_REC_COMM, a collective or
 * point-to-point call, complete; and RING_EXIT_KNOWN in PROCESS_EXIT's aux,
 * set when the code that follows it is the one the process exits with
 * (exit, _exit, or main's return value).
 *
 * RING_REC_PROCESS_RANK's job_str (the job the process's environment
 * names, ring_job_from_env(), written with the rank or alone with aux 0)
 * took the place of its padding, which every collector zeroed: a launcher
 * reads an older collector's as "no job", and an older launcher never
 * looked there, so neither the layout nor the version changed for it.
 *
 * Version 5 adds RING_REC_STEP: a training step of the gprof-dl domain,
 * complete, as RING_REC_RANGE_EXT carries it, with its thread's time on a
 * CPU and on a run queue over the step (lib/collector/sched.h), so that
 * the trace can say a rank was slow because another program took its CPU.
 * A record of its own, so that operators' records stay as small as they
 * were; written instead of a RANGE(_EXT) for such a step.
 *
 * Version 6: RING_REC_GPU_DEVICE carries the file's struct trace_device
 * (the same size; its fields in the file's order).
 */
#ifndef GPDL_RING_H
#define GPDL_RING_H

#include "formats/trace/trace.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RING_MAGIC "GPDLSHM1"
#define RING_ENV "GPROF_DL_SHM"
/* The same memfd, inherited as this descriptor: for an image exec'd after
 * the process dropped its privileges, which may no longer open the
 * launcher's /proc/<pid>/fd (it belongs to another user). */
#define RING_FD_ENV "GPROF_DL_SHM_FD"
#define RING_DEFAULT_SLOTS 256u
#define RING_DEFAULT_BYTES (1u << 20) /* per thread */
#define RING_STACK_MAX 128u
#define RING_NAME_MAX 1024u           /* longer names are cut and flagged */

/* ring_shm.flags: a full ring makes its producer wait for room (up to
 * RING_WAIT_MAX_NS a record, then the record drops) instead of dropping at
 * once. Off unless asked for (GPROF_DL_BACKPRESSURE=1 in the launcher's
 * environment): the program runs slower by what it waits, which the slot
 * counts (waited_ns) and the end of the run reports. A wait that runs out
 * (a launcher stopped, or gone with --keep-target) clears the flag: the
 * program goes on at full speed, dropping. */
#define RING_SHM_WAIT 1u
#define RING_WAIT_MAX_NS 200000000ull
#define RING_WAIT_ENV "GPROF_DL_BACKPRESSURE"

enum ring_slot_state {
	RING_SLOT_FREE = 0,
	RING_SLOT_CLAIMING = 1, /* claimed, identity being written */
	RING_SLOT_ACTIVE = 2,   /* owned by a live thread */
	RING_SLOT_EXITED = 3,   /* thread ended: drain, then free */
};

/* A flag of ring_open_range.flags (above the trace's 8 flag bits): not recorded. */
#define RING_OPEN_SKIP (1u << 31)

struct ring_open_range {
	uint64_t start_ns;
	uint32_t name_str, domain_str, category, flags; /* flags: trace_event_flag | RING_OPEN_SKIP */
	int64_t seq;          /* torch sequence number; < 0: none */
	uint64_t samples;     /* a step's samples, 0: unknown */
	uint32_t shapes_str;  /* input shapes, 0: none */
	uint32_t pad;
};

struct ring_slot {
	_Atomic uint32_t state;
	uint32_t pid, tid;
	uint32_t generation; /* bumped at every claim, so the launcher can tell reuse */
	_Atomic uint64_t head;
	/* The producer's own: tail as it last read it, and the head at which
	 * it next reads it (where the space it knows is free runs out, or an
	 * eighth of a ring on, to wake a sleeping launcher when the ring is
	 * half full), so that a write reads the consumer's cache line only
	 * that often. Set to 0 at a claim, as head and tail are. */
	uint64_t tail_seen;
	uint64_t wake_at;
	/* ns the producer waited for room (RING_SHM_WAIT), for the end's report */
	_Atomic uint64_t waited_ns;
	uint64_t pad0[4]; /* head and tail on separate cache lines */
	_Atomic uint64_t tail;
	uint64_t pad1[7];
	_Atomic uint64_t dropped; /* records that did not fit */
	_Atomic uint32_t depth;   /* entries valid in stack[] */
	uint32_t pad2;
	struct ring_open_range stack[RING_STACK_MAX];
	/* ring data of ring_shm.ring_bytes follows, at a 64-byte boundary */
};

/* Where a slot's ring data begins: its header rounded up to 64 bytes. */
#define RING_SLOT_HEADER ((sizeof(struct ring_slot) + 63u) & ~(size_t)63u)

struct ring_shm {
	char magic[8];
	uint32_t version;
	uint32_t nslots;
	uint64_t ring_bytes;  /* a power of two */
	uint64_t slot_stride; /* sizeof(struct ring_slot) rounded + ring_bytes */
	uint32_t launcher_pid;
	_Atomic uint32_t flags; /* RING_SHM_* */
	_Atomic uint32_t next_string_id; /* starts at 1 */
	/* 1 while the launcher sleeps between polls (a futex): a producer
	 * whose ring is half full wakes it (ring_write()), so that a ring
	 * filling faster than the launcher's sleep is drained in time. */
	_Atomic uint32_t launcher_waiting;
	_Atomic uint64_t next_range_id; /* nvtxRangeStart ids; starts at 1 */
	_Atomic uint64_t no_slot_threads; /* threads that found every slot taken */
	_Atomic uint64_t no_slot_events;  /* and the events they could not record */
	_Atomic uint32_t slots_used; /* 1 + the highest slot index ever claimed: drains scan no further */
	/* 1 while the launcher's spiller sleeps (a futex, ring_wait_spiller()):
	 * a producer whose ring is three quarters full wakes it, so that a
	 * ring is emptied even while the launcher's converting thread, woken
	 * at half, has no CPU to run on. */
	_Atomic uint32_t spiller_waiting;
	uint64_t pad3[7];
};

enum ring_rec_kind {
	RING_REC_PAD = 0,       /* filler; skip */
	RING_REC_STRING,        /* aux = string id; NUL-terminated bytes follow */
	RING_REC_RANGE,         /* push/pop range, complete: struct ring_range */
	RING_REC_MARK,          /* struct ring_mark */
	RING_REC_RANGE_START,   /* struct ring_range_start */
	RING_REC_RANGE_END,     /* struct ring_range_end */
	RING_REC_POP_UNBALANCED,/* struct ring_mark, name_str 0: a pop with nothing pushed */
	RING_REC_CATEGORY,      /* struct ring_category */
	RING_REC_THREAD_START,  /* struct ring_thread */
	RING_REC_THREAD_END,    /* struct ring_thread */
	RING_REC_THREAD_NAME,   /* struct ring_thread_name */
	RING_REC_PROCESS_START, /* struct ring_process */
	RING_REC_PROCESS_EXIT,  /* struct ring_process: exit() or return from main */
	RING_REC_RANGE_EXT,     /* complete range with details: struct ring_range_ext (version 2) */
	RING_REC_GPU_API,       /* a CUDA runtime or driver call: struct ring_gpu_api (version 3) */
	RING_REC_GPU_WORK,      /* a kernel, copy or set on a stream: struct ring_gpu_work */
	RING_REC_GPU_MEMORY,    /* a device allocation or free: struct ring_gpu_memory */
	RING_REC_GPU_SYNC,      /* a host wait on a stream, event or context: struct ring_gpu_sync */
	RING_REC_GPU_OVERHEAD,  /* time CUPTI or the driver spent: struct ring_gpu_overhead */
	RING_REC_GPU_EXTCORR,   /* an external id tied to a correlation id: struct ring_gpu_extcorr */
	RING_REC_GPU_DEVICE,    /* a GPU's properties: struct ring_gpu_device */
	RING_REC_GPU_DROPS,     /* activity records CUPTI lost: struct ring_gpu_drops */
	RING_REC_GPU_STATUS,    /* why GPU collection is off or degraded: struct ring_gpu_status */
	RING_REC_PROCESS_RANK,  /* the process's distributed rank: struct ring_process_rank (version 4) */
	RING_REC_COMM,          /* a collective or point-to-point call, complete: struct ring_comm (version 4) */
	RING_REC_PROCESS_VAR,   /* an output variable's value: struct ring_process_var (version 4) */
	RING_REC_MEMORY,        /* an allocator's allocation or free, on the writing thread: struct ring_memory */
	RING_REC_STEP,          /* a ProfileStep, complete, with its samples and its thread's CPU and
				 * run-queue time: struct ring_step (version 5) */
	RING_REC_KIND_COUNT
};

struct ring_rec {
	uint16_t kind;
	uint16_t size; /* bytes including this header, a multiple of 8 */
	uint32_t aux;  /* kind-specific: flags (trace_event_flag) or string id */
};

struct ring_range { /* RING_REC_RANGE, aux = flags */
	struct ring_rec h;
	uint64_t start_ns, end_ns;
	uint32_t name_str, domain_str, category, pad;
};

/* A complete range with what plain ranges lack: written instead of a
 * ring_range when any of seq >= 0, shapes_str, samples is set. */
struct ring_range_ext { /* RING_REC_RANGE_EXT, aux = flags */
	struct ring_rec h;
	uint64_t start_ns, end_ns;
	uint32_t name_str, domain_str, category, shapes_str;
	int64_t seq;      /* torch sequence number; < 0: none */
	uint64_t samples; /* a step's samples, 0: unknown */
};

struct ring_step { /* RING_REC_STEP, aux = flags */
	struct ring_rec h;
	uint64_t start_ns, end_ns;
	uint32_t name_str, domain_str, category, pad;
	uint64_t samples;         /* 0: unknown */
	uint64_t cpu_ns, runq_ns; /* its thread over the step; cpu_ns 0: unknown */
};

struct ring_mark { /* RING_REC_MARK, RING_REC_POP_UNBALANCED; aux = flags */
	struct ring_rec h;
	uint64_t ts_ns;
	uint32_t name_str, domain_str, category, pad;
};

struct ring_range_start { /* aux = flags */
	struct ring_rec h;
	uint64_t id, ts_ns;
	uint32_t name_str, domain_str, category, pad;
};

struct ring_range_end {
	struct ring_rec h;
	uint64_t id, ts_ns;
};

struct ring_category {
	struct ring_rec h;
	uint32_t domain_str, category, name_str, pad;
};

struct ring_thread { /* THREAD_START, THREAD_END */
	struct ring_rec h;
	uint64_t ts_ns;
	uint32_t pid, tid;
};

struct ring_thread_name {
	struct ring_rec h;
	uint32_t tid, name_str;
};

/* PROCESS_EXIT's aux: the exit code (low 8 bits), valid when RING_EXIT_KNOWN is set. */
#define RING_EXIT_KNOWN (1u << 8)

struct ring_process { /* PROCESS_START, PROCESS_EXIT; aux = exit code | RING_EXIT_KNOWN for EXIT */
	struct ring_rec h;
	uint64_t ts_ns;
	uint32_t pid, ppid;
	uint32_t cmdline_str, pad;
};

/* ---- GPU activity (version 3) -------------------------------------------
 * Times are ns on the host clock. Ids are CUPTI's: correlation ids are per
 * process, so the slot's pid completes them. A name string id of 0 is "no
 * name"; names longer than RING_NAME_MAX are cut and flagged in flags
 * (TRACE_EVF_NAME_TRUNCATED). */

enum ring_gpu_api_kind { RING_GPU_API_RUNTIME = 1, RING_GPU_API_DRIVER = 2 };

struct ring_gpu_api { /* RING_REC_GPU_API, aux = enum ring_gpu_api_kind */
	struct ring_rec h;
	uint64_t start_ns, end_ns;
	uint64_t correlation;
	uint32_t tid;      /* the calling thread (the kernel's thread id) */
	uint32_t name_str; /* "cudaLaunchKernel", without CUPTI's "_v7000" suffix */
	uint32_t cbid;     /* CUPTI's callback id of the function */
	int32_t result;    /* what the call returned (0: success) */
	uint32_t flags, pad;
};

struct ring_gpu_work { /* RING_REC_GPU_WORK, aux = trace_event_type: Kernel, Memcpy or Memset */
	struct ring_rec h;
	uint64_t start_ns, end_ns;
	uint64_t correlation;
	uint64_t stream;   /* CUPTI's stream id */
	uint64_t bytes;    /* a copy's or set's size; 0 for a kernel */
	uint32_t device, context;
	uint32_t name_str; /* a kernel's demangled name; 0 for copies and sets */
	uint32_t flags;    /* trace_event_flag: TRACE_EVF_NAME_TRUNCATED */
	uint32_t grid[3], block[3];
	uint32_t registers;                 /* per thread */
	uint32_t static_smem, dynamic_smem; /* bytes per block */
	uint32_t graph_id;                  /* the CUDA graph it ran in, 0: none */
	uint32_t src_device, dst_device;    /* a peer-to-peer copy's ends (MEMCPY2) */
	uint8_t copy_kind;          /* enum trace_copy_kind */
	uint8_t src_kind, dst_kind; /* enum trace_memory_kind; a set's memory in dst_kind */
	uint8_t is_async;
	uint32_t value;             /* a set's value */
};

enum ring_gpu_mem_op { RING_GPU_MEM_ALLOC = 1, RING_GPU_MEM_FREE = 2 };

struct ring_gpu_memory { /* RING_REC_GPU_MEMORY, aux = enum ring_gpu_mem_op */
	struct ring_rec h;
	uint64_t ts_ns;
	uint64_t address, bytes;
	uint64_t correlation;
	uint64_t stream;     /* 0: none */
	uint32_t device, context;
	uint8_t memory_kind; /* enum trace_memory_kind */
	uint8_t is_async;
	uint8_t pad[6];
};

/* Synchronization types (CUPTI's CUpti_ActivitySynchronizationType order). */
enum ring_gpu_sync_type {
	RING_GPU_SYNC_UNKNOWN = 0,
	RING_GPU_SYNC_EVENT = 1,       /* cudaEventSynchronize */
	RING_GPU_SYNC_STREAM_WAIT = 2, /* cudaStreamWaitEvent */
	RING_GPU_SYNC_STREAM = 3,      /* cudaStreamSynchronize */
	RING_GPU_SYNC_CONTEXT = 4,     /* cudaDeviceSynchronize, cuCtxSynchronize */
};

struct ring_gpu_sync { /* RING_REC_GPU_SYNC, aux = enum ring_gpu_sync_type */
	struct ring_rec h;
	uint64_t start_ns, end_ns;
	uint64_t correlation;
	uint64_t stream;  /* UINT64_MAX: not one stream (a context sync) */
	uint32_t context;
	uint32_t event;   /* the CUDA event waited for, 0: none */
};

struct ring_gpu_overhead { /* RING_REC_GPU_OVERHEAD, aux = CUPTI's CUpti_ActivityOverheadKind */
	struct ring_rec h;
	uint64_t start_ns, end_ns;
	uint32_t tid;      /* the thread it happened on, 0: not a thread (a device) */
	uint32_t device;   /* the device, when not a thread */
	uint32_t name_str; /* "CUPTI buffer flush", ... */
	uint32_t pad;
};

struct ring_gpu_extcorr { /* RING_REC_GPU_EXTCORR, aux = CUPTI's CUpti_ExternalCorrelationKind */
	struct ring_rec h;
	uint64_t correlation;
	uint64_t external_id;
};

struct ring_gpu_device { /* RING_REC_GPU_DEVICE */
	struct ring_rec h;
	/* the file's record as it is (id: the CUDA device ordinal), but for
	 * name_str, which is the ring's string id */
	struct trace_device d;
};

struct ring_gpu_drops { /* RING_REC_GPU_DROPS */
	struct ring_rec h;
	uint64_t dropped; /* records CUPTI lost since the last RING_REC_GPU_DROPS of this process */
	uint32_t context; /* where CUPTI counted them (0: none) */
	uint32_t pad;
};

/* Why GPU collection is off or degraded. */
enum ring_gpu_status_code {
	RING_GPU_ON = 0,            /* collecting: message names the CUPTI library and version */
	RING_GPU_NO_CUPTI = 1,      /* CUPTI could not be loaded */
	RING_GPU_OLD_CUPTI = 2,     /* older than CUDA 12's CUPTI */
	RING_GPU_PRIVILEGES = 3,    /* CUPTI_ERROR_INSUFFICIENT_PRIVILEGES */
	RING_GPU_SUBSCRIBER = 4,    /* another subscriber (torch.profiler, nsys, ...) holds CUPTI */
	RING_GPU_ERROR = 5,         /* another CUPTI error */
	RING_GPU_BUFFERS = 6,       /* activity buffers ran short: records were lost */
};

struct ring_gpu_status { /* RING_REC_GPU_STATUS, aux = enum ring_gpu_status_code */
	struct ring_rec h;
	uint32_t msg_str; /* the one line for the user: cause and fix */
	uint32_t pad;
};

/* ---- distributed runs (version 4) ---------------------------------------- */

/* Where a process's rank came from (aux of RING_REC_PROCESS_RANK), in the
 * order one overrides another: a later source wins over the environment. */
enum ring_rank_source {
	RING_RANK_ENV_SLURM = 1,  /* SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS (inside an srun step) */
	RING_RANK_ENV_PADDLE = 2, /* PADDLE_TRAINER_ID, PADDLE_TRAINERS_NUM, PADDLE_LOCAL_RANK */
	RING_RANK_ENV_PMI = 3,    /* PMI_RANK, PMI_SIZE, MPI_LOCALRANKID (MPICH, Intel MPI) */
	RING_RANK_ENV_OMPI = 4,   /* OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK (Open MPI) */
	RING_RANK_ENV_TORCH = 5,  /* RANK, WORLD_SIZE, LOCAL_RANK (torchrun, torch.distributed.launch) */
	RING_RANK_INIT = 6,       /* the program's init_process_group (gprof-dl-api.h rank()) */
};

/* aux 0 (no source): the environment names the process's job but no rank. */
struct ring_process_rank { /* RING_REC_PROCESS_RANK, aux = enum ring_rank_source */
	struct ring_rec h;
	uint32_t pid;
	int32_t rank, local_rank, world_size; /* -1: unknown */
	uint32_t backend_str;                 /* 0: unknown */
	uint32_t job_str; /* the job its environment names (ring_job_from_env()), 0: none */
};

/* The rank the environment gives this process: the highest source of
 * enum ring_rank_source whose rank variable holds a number (>= 0), its
 * other variables -1 where unset or not numbers. get(name, ctx) returns a
 * variable's value or NULL (getenv). Returns the source, 0 when none. */
unsigned ring_rank_from_env(const char *(*get)(const char *name, void *ctx), void *ctx,
			    int32_t *rank, int32_t *local_rank, int32_t *world_size);
/* The variable a source names its rank by ("RANK", "OMPI_COMM_WORLD_RANK"):
 * NULL for RING_RANK_INIT and unknown sources. */
const char *ring_rank_var(unsigned source);
/* 1 when name is one of the variables ring_rank_from_env() reads (a rank,
 * local rank or world size a launcher sets for its ranks: "RANK",
 * "LOCAL_RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", ...), else 0. */
int ring_is_rank_var(const char *name);

/* The job the environment says this process belongs to, so that the files
 * of one job can be told from another's: the first of
 *   TORCHELASTIC_RUN_ID (not "none")    "torchelastic:<id>"  (torchrun, elastic agents)
 *   SLURM_JOB_ID [SLURM_STEP_ID]        "slurm:<job>[.<step>]"
 *   PMIX_NAMESPACE                      "pmix:<namespace>"   (Open MPI's mpirun, prrte)
 *   MASTER_ADDR and MASTER_PORT         "master:<addr>:<port>" (torch.distributed's env://)
 * written to buf (len bytes with its NUL; cut to fit). Returns its length,
 * 0 when none applies (buf ""). Neither allocates nor locks: a fork child
 * calls it. */
size_t ring_job_from_env(const char *(*get)(const char *name, void *ctx), void *ctx, char *buf, size_t len);

/* The environment variable that names the variables a process reports in
 * RING_REC_PROCESS_VAR records: "RANK,LOCAL_RANK", at most RING_VARS_MAX. */
#define RING_VARS_ENV "GPROF_DL_OUTPUT_VARS"
#define RING_VARS_MAX 16u
#define RING_VAR_SET (1u << 16) /* aux: the variable is set (else its value is empty) */
/* aux: written by a fork child at the fork, its parent's environment: it
 * does not replace what its process's image reported itself (a child that
 * sets its own and execs reports them from the new image, which the
 * launcher may drain first) */
#define RING_VAR_FORKED (1u << 17)

/* One variable of RING_VARS_ENV, by its position in that list, as the
 * process had it at its start (or at its fork). The value is cut at
 * RING_NAME_MAX bytes. */
struct ring_process_var { /* RING_REC_PROCESS_VAR, aux = index | RING_VAR_SET | RING_VAR_FORKED */
	struct ring_rec h;
	uint32_t pid;
	uint32_t len; /* bytes of value, a NUL follows */
	/* char value[len + 1], then padding to 8 bytes */
};

/* A Communication event (gprof-dl-api.h comm()), on the writing thread. */
struct ring_comm { /* RING_REC_COMM, aux = flags */
	struct ring_rec h;
	uint64_t start_ns, end_ns;
	uint32_t name_str, pg_str, dtype_str, group_size;
	int64_t seq;    /* < 0: unknown */
	uint64_t bytes; /* 0: unknown */
	int32_t peer;   /* -1: none */
	uint32_t pad;
};

/* An allocation or a free that a framework's allocator reported (PyTorch's
 * CPU and CUDA allocators, gprof-dl-api.h memory()), on the writing thread:
 * a Memory instant there, so that it falls inside the operator that made it.
 * A reader that does not know the kind skips it. */
struct ring_memory { /* RING_REC_MEMORY, aux = 0 */
	struct ring_rec h;
	uint64_t ts_ns;
	uint64_t address;
	int64_t bytes;            /* > 0: allocated; < 0: freed */
	uint64_t total_allocated; /* bytes in use on the device after it, as the allocator counts */
	uint64_t total_reserved;  /* bytes the allocator holds (caching allocators), 0: unknown */
	int32_t device;           /* -1: host memory; else the GPU */
	uint8_t memory_kind;      /* enum trace_memory_kind */
	uint8_t pad[3];
};

/* ---- layout ------------------------------------------------------------ */

size_t ring_shm_size(uint32_t nslots, uint64_t ring_bytes);
/* Initialises a zeroed mapping of ring_shm_size() bytes. */
void ring_shm_init(struct ring_shm *shm, uint32_t nslots, uint64_t ring_bytes, uint32_t launcher_pid);
/* 0 when a mapping of len bytes holds a header this build understands. */
int ring_shm_check(const struct ring_shm *shm, size_t len);
struct ring_slot *ring_shm_slot(struct ring_shm *shm, uint32_t i);
static inline unsigned char *ring_slot_data(struct ring_slot *slot)
{
	return (unsigned char *)slot + RING_SLOT_HEADER;
}

/* ---- producer (the collector, one thread per slot) --------------------- */

/* Claims a free slot for (pid, tid), the lowest free one, so that live slots
 * stay below shm->slots_used; NULL when every slot is taken. */
struct ring_slot *ring_slot_claim(struct ring_shm *shm, uint32_t pid, uint32_t tid);
/* Appends one record (rec->size bytes). 0, or -1 when it did not fit (counted).
 * Inline, so that a record's copy has its size known where it is built: the
 * collector's per-event path. A record that wraps the ring, or reaches the head
 * where the producer must look at the consumer's tail, takes ring_write_slow(). */
int ring_write_slow(struct ring_shm *shm, struct ring_slot *slot, const void *rec);
static inline int ring_write(struct ring_shm *shm, struct ring_slot *slot, const void *rec)
{
	uint64_t size = ((const struct ring_rec *)rec)->size, cap = shm->ring_bytes;
	uint64_t head = atomic_load_explicit(&slot->head, memory_order_relaxed);
	uint64_t off = head & (cap - 1);
	if (__builtin_expect(head + size > slot->wake_at || off + size > cap, 0))
		return ring_write_slow(shm, slot, rec);
	memcpy(ring_slot_data(slot) + off, rec, size);
	atomic_store_explicit(&slot->head, head + size, memory_order_release);
	return 0;
}
/* Bytes a record may take in slot now (what the launcher has drained frees more). */
uint64_t ring_space(const struct ring_shm *shm, struct ring_slot *slot);
/* The slot's thread is gone: the launcher drains what is left and frees it. */
void ring_slot_release(struct ring_slot *slot);

/* ---- consumer (the launcher) ------------------------------------------ */

/* Copies out the records pending in slot, up to buf_len bytes of whole records,
 * and consumes them. Returns the bytes copied (0: nothing pending). */
size_t ring_read(struct ring_shm *shm, struct ring_slot *slot, void *buf, size_t buf_len);
/* Bytes pending in slot (written, not yet consumed): the consumer's view. */
uint64_t ring_pending(struct ring_slot *slot);
/* Frees a slot whose state is EXITED once it has been drained. */
void ring_slot_free(struct ring_slot *slot);
/* Sleeps until a producer's ring is half full or timeout_ns pass; returns
 * at once when one is already (no wake is lost: a producer looks again an
 * eighth of a ring later). */
void ring_wait(struct ring_shm *shm, uint64_t timeout_ns);
/* Whether some producer's ring holds at least bytes pending. */
int ring_any_pending(struct ring_shm *shm, uint64_t bytes);
/* Pending bytes that wake the spiller: three quarters of a ring. */
#define RING_SPILLER_WAKE(shm) ((shm)->ring_bytes / 4 * 3)
/* The spiller's sleep: until a producer's ring is three quarters full or
 * timeout_ns pass; at once when one is already. */
void ring_wait_spiller(struct ring_shm *shm, uint64_t timeout_ns);
/* Ends a ring_wait_spiller() now (the spiller is stopping). */
void ring_wake_spiller(struct ring_shm *shm);

static inline size_t ring_rec_align(size_t n) { return (n + 7u) & ~(size_t)7u; }

#endif
