/*
 * trace.h - the gprof-dl trace model and the API of its v1 file format.
 *
 * This is the one contract between the parts that write traces (the launcher's
 * recorder) and the parts that read them (info, summary, export). The bytes on
 * disk are specified in formats/trace/TRACE-FORMAT.md; this header is the model
 * those bytes decode to.
 *
 * Invariants a reader gives its callers:
 *  - every id an event, thread or desc carries was checked against the tables
 *    read so far: an event's desc and thread always resolve;
 *  - strings are NUL-terminated copies, valid until trace_reader_close();
 *  - a damaged or truncated file is read up to the damage, which is reported in
 *    trace_reader_damage(), never by a crash.
 *
 * All times are nanoseconds in the trace's clock domain (CLOCK_MONOTONIC of the
 * recording host); header.wall_offset_ns added to one gives Unix wall time.
 */
#ifndef GPDL_FORMATS_TRACE_H
#define GPDL_FORMATS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define TRACE_FORMAT_VERSION_MAJOR 3 /* 2.0: 12-byte events (EVNS), which a 1.x
                                        reader would skip without a word;
                                        3.0: events with details compressed (EVNZ),
                                        which a 2.x reader would skip so */
#define TRACE_FORMAT_VERSION_MINOR 0 /* 1.1: GPU tracks, event details, devices;
                                        1.2: sequence numbers, input shapes, samples;
                                        1.3: ranks (META's local rank, PROC's rank
                                        fields), collectives' details;
                                        2.1: a step's CPU and run-queue time, the job's
                                        identity (META, PROC), a process's exit signal */

/* Paddle's TracerEventType: the shared vocabulary of every view. Values are on
 * disk; append only. */
enum trace_event_type {
	TRACE_EV_USER_DEFINED = 0,
	TRACE_EV_PROFILE_STEP = 1,
	TRACE_EV_DATALOADER = 2,
	TRACE_EV_FORWARD = 3,
	TRACE_EV_BACKWARD = 4,
	TRACE_EV_OPTIMIZATION = 5,
	TRACE_EV_OPERATOR = 6,
	TRACE_EV_OPERATOR_INNER = 7,
	TRACE_EV_PYTHON_OP = 8,
	TRACE_EV_CUDA_RUNTIME = 9,
	TRACE_EV_KERNEL = 10,
	TRACE_EV_MEMCPY = 11,
	TRACE_EV_MEMSET = 12,
	TRACE_EV_COMMUNICATION = 13,
	TRACE_EV_MEMORY = 14, /* an allocation (bytes > 0) or a free (bytes < 0): an instant with details */
	TRACE_EV_TYPE_COUNT
};

/* Why a DROP record's records are missing or were altered: its reason field
 * (the record's u32 after the thread; 0 in every file before it had one).
 * The importer (formats/import) drops or repairs foreign events it cannot
 * represent and says so here, as the recorder does for a full ring. Values
 * are on disk; append only. */
enum trace_drop_reason {
	TRACE_DROP_RING_FULL = 0,        /* lost: ring buffer full (the recorder) */
	TRACE_DROP_TIME_RANGE = 1,       /* lost: a timestamp that fits no int64 of ns */
	TRACE_DROP_TIME_NAN = 2,         /* lost: a timestamp that is not a number */
	TRACE_DROP_NEGATIVE_DURATION = 3, /* kept, its duration set to 0 */
	TRACE_DROP_DURATION_RANGE = 4,   /* kept, its end clamped to the largest time */
	TRACE_DROP_DURATION_NAN = 5,     /* kept, its duration set to 0 */
	TRACE_DROP_BEFORE_START = 6,     /* kept, moved to the trace's time 0 */
	TRACE_DROP_NO_SLOT = 7,          /* lost: its thread found every ring slot taken (the recorder) */
	TRACE_DROP_NO_TIME = 8,          /* lost: no timestamp (the importer's) */
	TRACE_DROP_UNKNOWN_PHASE = 9,    /* lost: a "ph" missing, not a string, or none imported */
	TRACE_DROP_END_WITHOUT_BEGIN = 10, /* lost: an "E" with no "B" open on its thread */
	TRACE_DROP_BEGIN_WITHOUT_END = 11, /* lost: a "B" never closed by an "E" */
	TRACE_DROP_BAD_NAME = 12,        /* kept, named "": its name was not a string or number */
	TRACE_DROP_BAD_ID = 13,          /* kept on pid or tid 0: it was not an integer or a string */
	TRACE_DROP_BAD_ARGS = 14,        /* kept without its args: they were not an object */
	TRACE_DROP_REASON_COUNT          /* readers count larger values here, as lost */
};

/* Event flags (8 bits on disk). */
enum trace_event_flag {
	TRACE_EVF_MARK = 1u << 0,         /* instantaneous: dur_ns is 0 */
	TRACE_EVF_OPEN_AT_EXIT = 1u << 1, /* never ended: end is its thread's or process's end */
	TRACE_EVF_UNBALANCED_POP = 1u << 2, /* a pop with no push: recorded as a mark */
	TRACE_EVF_START_END = 1u << 3,    /* nvtxRangeStart/End (may end on another thread) */
	TRACE_EVF_NAME_TRUNCATED = 1u << 4,
};

/* Counters sampled through the run. Values are on disk; append only. */
enum trace_counter_id {
	TRACE_CTR_CPU_PROCESS = 1, /* % of one core, summed over the target's processes */
	TRACE_CTR_CPU_SYSTEM = 2,  /* % busy of all cores of the host */
	TRACE_CTR_RSS_BYTES = 3,   /* resident memory of the target's processes */
	TRACE_CTR_COUNT
};

/* The collector's sources, as a mask in the header and in --version. */
enum trace_source {
	TRACE_SRC_NVTX = 1u << 0,
	TRACE_SRC_CUPTI = 1u << 1,
	TRACE_SRC_PYTHON = 1u << 2,
};

struct trace_header {
	uint16_t version_major, version_minor;
	uint32_t sources;         /* enum trace_source mask the collector was built with */
	const char *clock_domain; /* "CLOCK_MONOTONIC" */
	int64_t wall_offset_ns;   /* wall time = trace time + wall_offset_ns */
	const char *hostname;
	uint32_t pid;             /* the target's root process */
	int32_t rank;             /* -1 where not a distributed run */
	const char *cmdline;      /* argv joined by single spaces */
	uint64_t start_ns, end_ns; /* end_ns is 0 until the END chunk is read */
	uint32_t ncpus;           /* online CPUs of the recording host */
	const char *gprof_version;
	int32_t world_size;       /* 1.1: -1 where not a distributed run */
	const char *dist_backend; /* 1.1: "nccl", "gloo", ...; "" unknown */
	int32_t local_rank;       /* 1.3: the rank on its host; -1 unknown or not distributed */
	/* 2.1: the job the file's rank belongs to (for a file of several ranks,
	 * their common job), as the launchers' environment names it:
	 * "torchelastic:<run id>", "slurm:<job>[.<step>]", "pmix:<namespace>",
	 * "master:<addr>:<port>", or "gprof-dl:<host>:<pid>:<start>" for ranks
	 * whose environment names none; "" unknown. Files of one job carry one. */
	const char *job_id;
};

/* A process's exit_status when it is not a plain exit code (>= 0: the code,
 * or 128 + the signal that killed it; exit_signal tells the two apart). */
#define TRACE_EXIT_UNKNOWN (-1) /* never seen to end, or ended unseen */
#define TRACE_EXIT_KILLED (-2)  /* 1.3: died without exiting (a signal; which one unknown) */

struct trace_process {
	uint32_t pid, ppid;
	uint64_t start_ns, end_ns; /* end_ns 0: never seen to end */
	int32_t exit_status;       /* code, or 128+signal; TRACE_EXIT_UNKNOWN, TRACE_EXIT_KILLED */
	uint32_t cmdline_str;      /* string id, 0: none */
	/* 1.3: the distributed rank the process belongs to (its own, or that of
	 * the rank that started it: a DataLoader worker is its rank's); -1 when
	 * it is no rank's (a launcher), and in files before 1.3. A writer sets
	 * all three to -1 where it knows none: a zeroed record says rank 0. */
	int32_t rank, local_rank, world_size;
	uint32_t backend_str;      /* "gloo", "nccl", ...; 0: unknown */
	/* 2.1: how it ended: N > 0, it died of signal N (exit_status is 128+N);
	 * 0, it ended with exit code exit_status (unknown when exit_status is
	 * TRACE_EXIT_UNKNOWN or TRACE_EXIT_KILLED); -1, not said (files before
	 * 2.1: exit_status 128+N may be signal N or that exit code). A zeroed
	 * record says "exit code exit_status". */
	int32_t exit_signal;
	uint32_t job_str;          /* 2.1: its job's identity (trace_header.job_id's form), string id; 0: unknown */
};

/* A track: a host thread, or (1.1) a GPU stream of a device, whose events are
 * the device's kernels, copies and sets. */
struct trace_thread {
	uint32_t index; /* dense, 0-based, file-local: what events refer to */
	uint32_t pid, tid;  /* for a stream: the process that owns it; tid 0 */
	uint32_t name_str; /* string id, 0: unnamed */
	uint64_t start_ns, end_ns;
	uint8_t kind;      /* enum trace_track_kind; zero-initialised is a host thread */
	uint32_t device;   /* a stream's GPU device id */
	uint32_t context;  /* a stream's CUDA context id */
	uint64_t stream;   /* a stream's CUDA stream id */
};

enum trace_track_kind {
	TRACE_TRACK_HOST = 0,
	TRACE_TRACK_STREAM = 1, /* 1.1 */
};

/* Copy kinds (CUPTI's CUpti_ActivityMemcpyKind order, 1.1). */
enum trace_copy_kind {
	TRACE_COPY_UNKNOWN = 0,
	TRACE_COPY_HTOD = 1,
	TRACE_COPY_DTOH = 2,
	TRACE_COPY_HTOA = 3,
	TRACE_COPY_ATOH = 4,
	TRACE_COPY_ATOA = 5,
	TRACE_COPY_ATOD = 6,
	TRACE_COPY_DTOA = 7,
	TRACE_COPY_DTOD = 8,
	TRACE_COPY_HTOH = 9,
	TRACE_COPY_PTOP = 10,
};

/* Memory kinds of a copy's ends or an allocation (CUPTI's CUpti_ActivityMemoryKind order). */
enum trace_memory_kind {
	TRACE_MEM_UNKNOWN = 0,
	TRACE_MEM_PAGEABLE = 1,
	TRACE_MEM_PINNED = 2,
	TRACE_MEM_DEVICE = 3,
	TRACE_MEM_ARRAY = 4,
	TRACE_MEM_MANAGED = 5,
	TRACE_MEM_DEVICE_STATIC = 6,
	TRACE_MEM_MANAGED_STATIC = 7,
};

/* Details an event may carry beyond its 16 bytes (1.1): the launch of a kernel,
 * the size of a copy, the correlation that ties GPU work to the API call that
 * launched it, the framework's operator id; (1.2) an operator's sequence number
 * and input shapes, a step's samples. All zero means "none" field by field. */
struct trace_event_ext {
	uint64_t correlation; /* CUPTI correlation id: a CudaRuntime call and the GPU work it launched */
	uint64_t external_id; /* the framework's id for the operator (torch "External id") */
	uint64_t bytes;       /* Memcpy / Memset size; Memory: allocated (> 0) or freed (< 0) as int64 */
	uint64_t address;     /* Memory: the block's address */
	uint32_t grid[3], block[3];
	uint32_t registers;   /* per thread */
	uint32_t static_smem, dynamic_smem; /* bytes per block */
	int32_t device;       /* Memory: -1 for host memory; else the device */
	uint8_t copy_kind;    /* enum trace_copy_kind */
	uint8_t src_kind, dst_kind; /* enum trace_memory_kind; Memory: dst_kind is the allocation's kind */
	uint8_t is_async;     /* Memcpy/Memset issued asynchronously */
	uint64_t total_allocated; /* Memory: bytes in use on that device after this event, 0 unknown */
	/* 1.2 */
	uint8_t has_seq;      /* seq_nr is set */
	int64_t seq_nr;       /* torch sequence number: a forward op and its backward share it */
	uint32_t shapes_str;  /* input shapes "[[32, 64], [64]]", string id, 0 none */
	uint64_t samples;     /* ProfileStep: samples processed in the step (num_samples), 0 unknown */
	/* 1.3: a collective or point-to-point call (Communication): which call
	 * of which process group it is, so that ranks' calls can be matched.
	 * Its bytes are in bytes (the data each rank contributes: the input
	 * tensors' size). */
	uint8_t has_coll_seq; /* coll_seq is set */
	uint64_t coll_seq;    /* the call's number in its process group; < UINT64_MAX */
	uint32_t pg_str;      /* the process group's name ("0", "default_pg"), string id; 0: unknown */
	uint32_t group_size;  /* ranks in the group; 0: unknown */
	uint32_t dtype_str;   /* element type ("float", "c10::BFloat16"), string id; 0: unknown */
	uint8_t has_peer;     /* peer is set */
	int32_t peer;         /* send/recv: the other rank (its global rank), >= 0 */
	/* 2.1: a ProfileStep's thread over the step, from its schedstat: time
	 * on a CPU, and time runnable but waiting on a run queue (CPU
	 * contention); sched_cpu_ns 0: not measured */
	uint64_t sched_cpu_ns, sched_runq_ns;
};

/* A GPU's properties (1.1), for blocks per SM and estimated achieved occupancy. */
struct trace_device {
	uint32_t id;
	uint32_t name_str;
	uint32_t sm_count;
	uint32_t max_threads_per_sm, max_threads_per_block, max_blocks_per_sm;
	uint32_t warp_size;
	uint32_t regs_per_sm, regs_per_block;
	uint32_t smem_per_sm, smem_per_block; /* bytes */
	uint64_t total_memory;                /* bytes */
	uint32_t clock_khz;
	uint16_t cc_major, cc_minor;
};

/* What an event is: its name, NVTX domain and category, and type. Interned, so
 * that an event record only carries a desc id. */
struct trace_desc {
	uint32_t id;
	uint32_t name_str;
	uint32_t domain_str; /* 0: the default NVTX domain */
	uint32_t category;   /* NVTX category, 0: none */
	uint8_t type;        /* enum trace_event_type */
};

/* An NVTX category name, per domain (nvtxNameCategory, nvtxDomainNameCategory). */
struct trace_category {
	uint32_t domain_str; /* 0: the default domain */
	uint32_t category;
	uint32_t name_str;
};

struct trace_event {
	uint64_t start_ns;
	uint64_t dur_ns;
	uint32_t desc;   /* trace_desc id */
	uint32_t thread; /* trace_thread index */
	uint8_t flags;   /* enum trace_event_flag */
	const struct trace_event_ext *ext; /* NULL: none (reader: valid during the callback) */
};

struct trace_counter {
	uint64_t ts_ns;
	uint32_t id;  /* enum trace_counter_id */
	uint32_t pid; /* 0: system-wide */
	double value;
};

/* ---- reading ---------------------------------------------------------- */

struct trace_reader;

/* Called as records are decoded, in file order. Any callback may be NULL.
 * A non-zero return stops the read and is returned by trace_reader_run(). */
struct trace_visitor {
	int (*header)(void *ctx, const struct trace_header *h);
	int (*process)(void *ctx, const struct trace_process *p);
	int (*thread)(void *ctx, const struct trace_thread *t); /* again when it ends or is renamed */
	int (*event)(void *ctx, const struct trace_event *e);
	int (*counter)(void *ctx, const struct trace_counter *c);
	int (*drops)(void *ctx, uint32_t thread, uint64_t dropped);
	int (*device)(void *ctx, const struct trace_device *d); /* 1.1 */
	/* The events of one EVNT or EVNS chunk at once, n of them in file
	 * order, all of one thread and none with details (ext NULL): set, it
	 * takes those chunks from event(), which still gets the EVNX ones. For
	 * a reader that stores them, so that it can make room once a chunk. */
	int (*events)(void *ctx, const struct trace_event *ev, size_t n);
};

/* NULL with a one-line message in err (size errlen) when the file cannot be
 * opened or is not a gprof-dl trace: "'PATH': not a gprof-dl trace (bad magic)". */
struct trace_reader *trace_reader_open(const char *path, char *err, size_t errlen);
/* The same for an open descriptor, which the reader owns from then on (it is
 * closed on failure too); messages name the file name. The reader reads it
 * from its current offset to its end, once. */
struct trace_reader *trace_reader_open_fd(int fd, const char *name, char *err, size_t errlen);
/* Decodes the whole file. Returns 0 when the end was reached (cleanly or at
 * damage, see trace_reader_damage), or the first non-zero callback result. */
int trace_reader_run(struct trace_reader *r, const struct trace_visitor *v, void *ctx);
void trace_reader_close(struct trace_reader *r);

const struct trace_header *trace_reader_header(const struct trace_reader *r);
const char *trace_reader_string(const struct trace_reader *r, uint32_t id); /* "" for 0 or unknown */
const struct trace_desc *trace_reader_desc(const struct trace_reader *r, uint32_t id);
const struct trace_thread *trace_reader_thread(const struct trace_reader *r, uint32_t index);
uint32_t trace_reader_thread_count(const struct trace_reader *r);
const struct trace_process *trace_reader_process(const struct trace_reader *r, uint32_t i);
uint32_t trace_reader_process_count(const struct trace_reader *r);
uint32_t trace_reader_desc_count(const struct trace_reader *r); /* ids are 1..count */
/* 1.1: the devices read so far, by position; and by device id (NULL: unknown). */
uint32_t trace_reader_device_count(const struct trace_reader *r);
const struct trace_device *trace_reader_device(const struct trace_reader *r, uint32_t i);
const struct trace_device *trace_reader_device_by_id(const struct trace_reader *r, uint32_t id);
/* The name given to (domain, category), or NULL. */
const char *trace_reader_category_name(const struct trace_reader *r, uint32_t domain_str,
				       uint32_t category);
/* Records lost: DROP records of the reasons whose records are not in the
 * trace (trace_drop_reason_is_loss); only those reach the drops callback. */
uint64_t trace_reader_total_drops(const struct trace_reader *r);
/* The DROP records' count of one reason (TRACE_DROP_REASON_COUNT: of reasons
 * this build does not know), lost or kept. */
uint64_t trace_reader_drops_by_reason(const struct trace_reader *r, unsigned reason);
/* Damage: NULL when the file was read to its END chunk; otherwise what stopped
 * the read ("truncated chunk", "checksum mismatch", "no END chunk: recording
 * was cut short") and at which byte offset. */
const char *trace_reader_damage(const struct trace_reader *r, uint64_t *offset);
uint64_t trace_reader_file_size(const struct trace_reader *r);
/* The offset of the next chunk to read: how far a run has come. */
uint64_t trace_reader_offset(const struct trace_reader *r);

/* Part of a trace (1.3: one rank of a file that holds several): the
 * processes listed (pids sorted ascending), or with exclude every process but
 * those. The readers of a part (the analysis's loader, the exporters, the
 * launcher's split) ask the one question below. */
struct trace_pids {
	const uint32_t *pids;
	uint32_t n;
	int exclude;
};
/* Whether process pid is in the part; every process when p is NULL. */
int trace_pids_has(const struct trace_pids *p, uint32_t pid);

/* ---- writing ---------------------------------------------------------- */

struct trace_writer;

/* Opens PATH for writing; fails if it exists unless force. NULL with errno
 * set. The trace goes to a temporary file beside PATH (common/outfile.h),
 * renamed PATH by trace_writer_close once whole: PATH holds the old file or
 * the new one, never part of one; an existing PATH is replaced only with
 * force, and a file that took the name meanwhile never (close fails with
 * EEXIST then). */
struct trace_writer *trace_writer_open(const char *path, int force);
/* A writer on an open file, written in place from its current offset (the
 * recorder's, whose trace must stay readable however it ends); own: close
 * fd at trace_writer_close. */
struct trace_writer *trace_writer_fdopen(int fd, int own);
/* Gives up: frees w and removes trace_writer_open's temporary file (PATH
 * is left as it was). */
void trace_writer_abort(struct trace_writer *w);
int trace_writer_header(struct trace_writer *w, const struct trace_header *h);
/* Interns a string by content; returns its id (>= 1), 0 on error. */
uint32_t trace_writer_string(struct trace_writer *w, const char *s, size_t len);
/* Interns a desc by (name, domain, category, type); returns its id (>= 1). */
uint32_t trace_writer_desc(struct trace_writer *w, uint32_t name_str, uint32_t domain_str,
			   uint32_t category, uint8_t type);
/* The same with no lookup: a new id whatever the table holds (the recorder's
 * names from the rings, which it knows to be new; readers take names by
 * their text, so one text under two ids is the same name). Not entered in
 * the lookup of trace_writer_string/_desc. 0 on error. */
uint32_t trace_writer_string_append(struct trace_writer *w, const char *s, size_t len);
uint32_t trace_writer_desc_append(struct trace_writer *w, uint32_t name_str, uint32_t domain_str,
				  uint32_t category, uint8_t type);
/* The text of string id (len bytes, not NUL-terminated; "" for 0 or an
 * unknown id), valid until the next string is added. */
const char *trace_writer_string_text(const struct trace_writer *w, uint32_t id, size_t *len);
int trace_writer_category(struct trace_writer *w, const struct trace_category *c);
int trace_writer_process(struct trace_writer *w, const struct trace_process *p);
int trace_writer_thread(struct trace_writer *w, const struct trace_thread *t);
/* An event with e->ext set is written with its details (1.1); NULL: compact. */
int trace_writer_event(struct trace_writer *w, const struct trace_event *e);
int trace_writer_device(struct trace_writer *w, const struct trace_device *d);
int trace_writer_counter(struct trace_writer *w, const struct trace_counter *c);
int trace_writer_drops(struct trace_writer *w, uint32_t thread, uint64_t dropped);
/* The same with a reason other than a full ring (enum trace_drop_reason). */
int trace_writer_drops_reason(struct trace_writer *w, uint32_t thread, uint64_t dropped,
			      unsigned reason);
/* Flushes buffered records; the file stays readable to this point if the
 * writer dies afterwards. */
int trace_writer_flush(struct trace_writer *w);
/* Writes the END chunk (end_ns) and closes (trace_writer_open's: renamed
 * into place when all went well, removed otherwise). Returns 0, or -1 with
 * errno. */
int trace_writer_close(struct trace_writer *w, uint64_t end_ns);
uint64_t trace_writer_bytes(const struct trace_writer *w);

/* ---- names ------------------------------------------------------------ */

const char *trace_event_type_name(unsigned type); /* "ProfileStep", ..., "?" */
/* "ring full", "negative duration", ...; "unknown reason" past the table. */
const char *trace_drop_reason_name(unsigned reason);
/* 1 when the records of the reason are not in the trace, 0 when they are
 * there, altered (unknown reasons: 1). */
int trace_drop_reason_is_loss(unsigned reason);
int trace_event_type_is_device(unsigned type);    /* Kernel, Memcpy, Memset, Communication */
/* GPU work named as communication: len bytes of name hold "nccl" or "rccl",
 * in any case (NCCL's and RCCL's kernels). The one rule the recorder, the
 * importers and the analysis share. */
int trace_name_is_comm_work(const char *name, size_t len);
/* 1.3: a host range named as a collective's execution by its backend, as
 * torch's c10d names its work ("gloo:all_reduce", "nccl:broadcast",
 * "mpi:barrier", "ucc:all_gather"): returns the length of the backend
 * prefix before the ':' (4 for "gloo"), 0 when the name is not one. The
 * op is what follows the ':'. Shared like the rule above. */
size_t trace_name_comm_call(const char *name, size_t len);
/* A UserDefined range named as a step ("ProfileStep", "ProfilerStep#12"):
 * imports type Paddle's and PyTorch's step ranges either way, so the name
 * decides. The one rule the analysis and the exports' steps share. */
int trace_name_is_step(const char *name, size_t len);
const char *trace_counter_name(unsigned id);
/* 1.1: "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "HtoA", ...; "Unknown" for 0, "?" beyond. */
const char *trace_copy_kind_name(unsigned kind);
/* 1.1: "Pageable", "Pinned", "Device", "Managed", ...; "Unknown" for 0, "?" beyond. */
const char *trace_memory_kind_name(unsigned kind);

#endif
