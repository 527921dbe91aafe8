/*
 * import_int.h - the importer's parts and what passes between them:
 *
 *   import_json.c   yajl callbacks: JSON tokens -> one struct jevent per
 *                   traceEvents element, devices, header facts
 *   import_event.c  a jevent -> a classified event on a track, spilled
 *   import_emit.c   the tables and the spill -> trace_writer calls
 *   import.c        the driver: input, temporary files, errors
 *
 * Time domains: a jevent's ts and dur are the file's microseconds scaled to
 * nanoseconds ("file time"). The trace's time is file time shifted once, in
 * import_emit.c, when the whole file is known: by otherData.start_ns for
 * gprof-dl's own export (its ts are relative to it), so that no event starts
 * before 0 otherwise. Paddle writes ts truncated to whole microseconds but
 * each event's exact start relative to its first event in args.start_time;
 * those events are spilled relative (SPILL_EVF_PADDLE_REL) and placed on
 * Paddle's base, the largest ts - start_time seen, which is the true base
 * rounded down by less than a microsecond.
 */
#ifndef GPDL_FORMATS_IMPORT_INT_H
#define GPDL_FORMATS_IMPORT_INT_H

#include "formats/import/import.h"
#include "formats/import/import_spill.h"
#include "formats/import/import_tables.h"
#include "formats/trace/trace.h"
#include "common/hmap.h"

#include <stddef.h>
#include <stdint.h>

/* A string of the event being parsed: bytes [off, off + len) of its arena. */
struct jspan {
	uint32_t off, len;
	int set;
};

/* pid and tid are numbers in most files and strings in some ("CPU functions",
 * Paddle's "1234(C++)", Kineto's "Spans"). */
struct jid {
	int kind; /* 0 absent, 1 number, 2 string */
	int64_t num;
	struct jspan s;
};

enum jarg_have {
	JA_EXTERNAL_ID = 1u << 0,
	JA_CORRELATION = 1u << 1,
	JA_DEVICE = 1u << 2,
	JA_CONTEXT = 1u << 3,
	JA_STREAM = 1u << 4,
	JA_GRID = 1u << 5,
	JA_BLOCK = 1u << 6,
	JA_REGISTERS = 1u << 7,
	JA_SMEM = 1u << 8,
	JA_STATIC_SMEM = 1u << 9,
	JA_DYNAMIC_SMEM = 1u << 10,
	JA_BYTES = 1u << 11,
	JA_ADDR = 1u << 12,
	JA_DEVICE_ID = 1u << 13,
	JA_DEVICE_TYPE = 1u << 14,
	JA_TOTAL_ALLOC = 1u << 15,
	JA_PADDLE_REL = 1u << 16,
	JA_CATEGORY_NUM = 1u << 17,
	JA_VALUE = 1u << 18,
	JA_ASYNC = 1u << 19,
	JA_SEQ = 1u << 20,     /* Kineto's "Sequence number" */
	JA_SAMPLES = 1u << 21, /* gprof-dl's export: a step's "samples" */
	/* a collective's (record_param_comms', an NCCL kernel's, our export's) */
	JA_COLL_SEQ = 1u << 22,    /* "Seq" */
	JA_GROUP_SIZE = 1u << 23,  /* "Group size" */
	JA_IN_NELEMS = 1u << 24,   /* "In msg nelems" */
	JA_OUT_NELEMS = 1u << 25,  /* "Out msg nelems" */
	JA_PEER = 1u << 26,        /* gprof-dl's export: "peer" */
	JA_SRC_RANK = 1u << 27,    /* "Src Rank" of a send/recv */
	JA_DST_RANK = 1u << 28,    /* "Dst Rank" */
	JA_RANK = 1u << 29,        /* "Rank": the calling rank's */
	JA_INPUT_BYTES = 1u << 30, /* "Input Dims" x the element size of "Input type" */
};

struct jargs {
	uint32_t have; /* enum jarg_have */
	uint64_t external_id, correlation;
	uint64_t device, context, stream;
	uint32_t grid[3], block[3];
	uint64_t registers, smem, static_smem, dynamic_smem;
	int64_t bytes;
	uint64_t addr;
	int64_t device_id, device_type;
	uint64_t total_alloc;
	int64_t paddle_rel; /* ns after Paddle's first event (args.start_time) */
	uint64_t category_num;
	double value; /* a counter's sample: its first numeric arg */
	uint8_t flags; /* gprof-dl's own export: open_at_exit, ... as trace flags */
	uint8_t src_kind, dst_kind, mem_kind; /* gprof-dl's own export: named kinds */
	int64_t seq;      /* "Sequence number" */
	uint64_t samples; /* "samples" */
	int64_t coll_seq, peer, src_rank, dst_rank, rank;
	uint64_t group_size, in_nelems, out_nelems;
	uint64_t input_bytes; /* the input tensors' bytes, from "Input Dims" and "Input type" */
	/* "Collective name", "dtype", "Process Group Name"; the first input
	 * tensor's type of "Input type" (the input_bytes' dtype) */
	struct jspan coll_name, dtype, pg, input_dtype;
	/* "Input Dims" as torch prints shapes, "[[32, 64], [64]]": from the
	 * array (items joined by ", "), or the string as it is */
	struct jspan type, domain, category, meta_name, place, recorded_name, shapes;
};

enum jevent_have {
	JE_TS = 1u << 0,
	JE_DUR = 1u << 1,
	/* ts or dur was there but fits no int64 of ns, or is no number */
	JE_TS_RANGE = 1u << 2,
	JE_TS_NAN = 1u << 3,
	JE_DUR_RANGE = 1u << 4,
	JE_DUR_NAN = 1u << 5,
	/* a member of the wrong type: "name" (not a string or number), "pid"
	 * or "tid" (not an integer or string), "args" (not an object) */
	JE_NAME_BAD = 1u << 6,
	JE_ID_BAD = 1u << 7,
	JE_ARGS_BAD = 1u << 8,
	JE_MEMBERS = 1u << 9, /* the object has a member (Paddle closes with {}) */
};

struct jevent {
	uint32_t have; /* enum jevent_have */
	int64_t ts, dur; /* file time, ns */
	struct jspan name, cat, ph, scope;
	struct jid pid, tid;
	struct jargs a;
};

/* Header facts gathered from the whole file. */
struct import_header {
	/* otherData of gprof-dl's own export */
	int ours;
	int have_start, have_end, have_wall, have_pid, have_ncpus;
	uint64_t start_ns, end_ns;
	int64_t wall_offset_ns;
	uint32_t pid, ncpus, sources;
	uint32_t host_str, cmdline_str, clock_str, version_str;
	/* distributedInfo (Kineto, and the export of a distributed run);
	 * local_rank from distributedInfo or otherData */
	int have_rank, have_world, have_local;
	int32_t rank, world_size, local_rank;
	uint32_t backend_str;
	/* Kineto's baseTimeNanoseconds: wall time of ts 0 */
	int have_base;
	int64_t base_ns;
	/* hints at the producer, for the format's name */
	int saw_kineto, saw_paddle;
};

/* otherData.drops_by_thread: a host thread's (pid, tid), or a stream's
 * (device, stream) when the entry names them. */
struct import_drop {
	uint32_t pid, tid;
	uint64_t dropped;
	int on_stream;
	uint32_t device;
	uint64_t stream;
};

/* otherData.processes of gprof-dl's own export: what the metadata events
 * have no place for. */
struct import_oproc {
	uint32_t pid, ppid;
	uint64_t start_ns, end_ns; /* trace time; end 0: never seen to end */
	int32_t exit_status;       /* -1 unknown (null) */
	int have_rank;             /* rank, local_rank, world_size given (1.3) */
	int32_t rank, local_rank, world_size;
	uint32_t backend_str;
};

/* otherData.threads of gprof-dl's own export, in the trace's thread order:
 * a host thread's (pid, tid), or a stream's as its events name it (pid =
 * device, tid = stream) with its owner process, device, context and stream. */
struct import_othread {
	uint8_t kind; /* enum trace_track_kind */
	uint32_t pid, tid; /* as the events name the track */
	int have_owner;
	uint32_t owner_pid, device, context;
	uint64_t stream;
	uint64_t start_ns, end_ns; /* trace time */
};

struct import_category {
	uint32_t domain_str, category, name_str;
};

/* A collective's details as an import gathers them: those of its own args,
 * or of the record_param_comms that describes it (import_comm.c). String
 * ids are the import's (istrings) until the trace is written. */
struct import_comm_ref {
	uint32_t track, pid;
	int64_t start, end;         /* file time */
	uint64_t external_id;       /* 0 none */
	uint32_t op_str;            /* metas: "Collective name"; events: the event's name */
	int on_stream;
	int32_t meta;               /* events: the metas entry that describes it, -1 none */
	int used;                   /* metas: claimed by a host call */
	struct trace_event_ext x;   /* metas: the details */
};

/* import_phases.c: a step, an optimizer step, or a range the forward is
 * not in (zero_grad, a DataLoader fetch), gathered during the parse. Times
 * are file times. */
enum iphase_kind { IPHASE_STEP, IPHASE_OPT_STEP, IPHASE_EXCLUDE };

struct iphase_range {
	int64_t start, end;
	uint32_t track, pid;
	union {
		uint32_t name_str; /* optimizer steps, until prepare: "#SGD.step" */
		uint32_t desc;     /* optimizer steps, after: their Optimization desc; 0 none */
	};
	uint8_t kind;
};

/* What a step gets after the parse (import_phases_prepare), by its index
 * among the steps: its backward's extent (bwd_lo > bwd_hi: none), where
 * the part being placed begins (fwd_floor), and its parts (segs[seg0,
 * seg0 + nseg)). Apart from the ranges, so that the parse keeps 32 bytes a
 * range. */
struct iphase_step {
	int64_t bwd_lo, bwd_hi, fwd_floor;
	uint32_t seg0, nseg;
};

/* A part of a step before its backward, between the zero_grad, optimizer
 * and DataLoader ranges of the step's thread: from floor (the step's start,
 * or the end of such a range) to the next; lo and hi the extent of the
 * forward work that starts in it (lo > hi: none). */
struct iphase_seg {
	int64_t floor, lo, hi;
};

struct import_phases {
	struct iphase_range *r; /* after prepare: steps first (nsteps), by (pid, start) */
	size_t n, cap, nsteps;
	struct iphase_step *st;  /* after prepare: of r[0, nsteps) */
	struct iphase_seg *segs; /* by step: seg0 and nseg */
	uint8_t *role;          /* by desc id: 1 backward function, 2 forward work */
	uint32_t nrole;         /* descs role covers: those of the parse */
	int active;             /* the trace gets phases */
	uint32_t fwd_desc, bwd_desc;
};

/* An open "B" event, kept until its "E": the event and a copy of its
 * strings (arena), on its thread's stack (prev: the one under it + 1). */
struct import_begin {
	struct jevent e;
	char *arena;
	uint32_t prev;
};

struct import {
	const char *in_path;
	const char *out_name; /* the output, as messages name it */
	struct istrings strs;
	struct idescs descs;
	struct itracks tracks;
	struct hmap proc_names;   /* (pid, 0) -> name string */
	struct hmap thread_names; /* (pid, tid) -> name string */
	struct hmap synth;        /* (string id, 0) -> synthetic pid/tid */
	uint32_t *synth_strs;     /* synth_strs[id - IMPORT_SYNTH_ID_BASE]: its name */
	uint32_t nsynth, synth_cap;
	struct hmap cat_ids;      /* (domain_str, name_str) -> category number */
	struct import_category *cats;
	uint32_t ncats, cats_cap, next_category;
	struct trace_device *devs; /* name_str in strs */
	uint32_t ndevs, devs_cap;
	struct import_drop *drops;
	uint32_t ndrops, drops_cap;
	struct import_oproc *oprocs; /* otherData.processes, when have_oprocs */
	uint32_t noprocs, oprocs_cap;
	struct import_othread *othreads; /* otherData.threads, when have_othreads */
	uint32_t nothreads, othreads_cap;
	int have_oprocs, have_othreads;
	/* record_param_comms ranges (metas), and the Communication events whose
	 * details they may hold (cevs, in spill order: SPILL_EVF_COMM) */
	struct import_comm_ref *metas, *cevs;
	uint32_t nmetas, metas_cap, ncevs, cevs_cap;
	struct spill spill;
	/* open "B" events: a pool (free ones chained by prev from free_begin),
	 * and each thread's top, (pid, tid) -> index + 1 */
	struct import_begin *begins;
	uint32_t nbegins, begins_cap, free_begin;
	struct hmap begin_top;
	struct import_phases phases;
	struct import_header hdr;
	int array_form; /* the document is an array: the older PyTorch profiler */
	int have_paddle_base;
	int64_t paddle_base;
	/* Kineto's "PyTorch Profiler (N)" spans: the recorded interval, file time */
	int have_span;
	int64_t span_lo, span_hi;
	int created; /* the output exists because this import created it */
	struct import_stats st;
	/* events dropped or repaired that are on no track (counter samples):
	 * the trace's first thread carries them */
	uint64_t fixes_untracked[TRACE_DROP_REASON_COUNT];
	char *err;
	size_t errlen;
};

/* a + b, saturated: file times are untrusted, and near INT64_MAX. */
static inline int64_t import_sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* Synthetic pids and tids for names that are not numbers: above any Linux
 * pid (pid_max is at most 2^22). */
#define IMPORT_SYNTH_ID_BASE 0x40000000u

/* import_json.c: reads the document from map (maplen bytes, a mapped plain
 * file whose pages it hands back as it goes) or, map NULL, from gzfile (a
 * gzFile), filling im. 0, or -1 with the message in im->err. */
int import_parse(struct import *im, void *gzfile, const void *map, size_t maplen);

/* import_event.c: e's strings are arena's first arena_len bytes. */
int import_event(struct import *im, const struct jevent *e, const char *arena, size_t arena_len);
/* After the parse (ok: it succeeded): the "B" events never closed are
 * counted as dropped; frees them. */
void import_begins_end(struct import *im, int ok);
void import_device(struct import *im, const struct trace_device *d);
void import_drop(struct import *im, const struct import_drop *d);
void import_oproc(struct import *im, const struct import_oproc *p);
void import_othread(struct import *im, const struct import_othread *t);
/* Counts an event dropped or repaired for the reason (enum
 * trace_drop_reason), on track t (NULL: none), for the DROP records. */
void import_fix(struct import *im, struct itrack *t, unsigned reason);
/* A pid or tid as a number: its value, its leading integer, or a synthetic id. */
uint32_t import_id(struct import *im, const struct jid *id, const char *arena);

/* import_comm.c: a collective's details from an event's args into x (the
 * Communication event, or a record_param_comms); 1 when any was there. */
int import_comm_ext(struct import *im, const struct jargs *a, const char *arena,
		    struct trace_event_ext *x);
/* Registers a record_param_comms range, or a Communication event (its spill
 * record flagged SPILL_EVF_COMM). */
void import_comm_meta(struct import *im, const struct import_comm_ref *m);
void import_comm_event(struct import *im, const struct import_comm_ref *e);
/* After the parse: which record_param_comms describes each event. */
void import_comm_resolve(struct import *im);
/* At emit, the next flagged event's details completed from its meta. */
void import_comm_merge(const struct import *im, uint32_t cev, struct trace_event_ext *x,
		       int *has_ext);

/* import_phases.c: a host range of the parse that may be a step, an
 * optimizer step or a range the forward is not in (else nothing is kept). */
void import_phase_range(struct import *im, uint32_t track, uint8_t type, const char *name,
			size_t len, int64_t start, int64_t end);
/* After the parse: whether the trace gets phases, and each step's backward
 * (one pass over the spill). 0, or -1 with the message in im->err. */
int import_phases_prepare(struct import *im);
/* Each spilled event, as the emit reads it back: the steps' forward. */
void import_phases_event(struct import *im, const struct spill_event *e);
/* After the emit's pass: the forward of step i (r[i], i < nsteps) from its
 * parts, into *lo and *hi; 0 when it has none. */
int import_phases_forward(const struct import_phases *ph, size_t i, int64_t *lo, int64_t *hi);
void import_phases_free(struct import_phases *ph);

/* import_emit.c: writes the trace. 0, or -1 with the message in im->err. */
/* in_place: out_path is a file of ours to write over (trace_open_any's
 * /proc/self/fd/N), else a temporary file renamed out_path when whole. */
int import_emit(struct import *im, const char *out_path, int force, int in_place);

/* import.c: the whole import. out_name is out_path as messages name it;
 * remove: a failed write deletes out_path. */
int import_run(const char *in_path, const char *out_path, const char *out_name, int force,
	       int remove, struct import_stats *stats, char *err, size_t errlen);

#endif
