/*
 * store.h - the event store: every event of one or more traces in compact
 * per-track arrays, sorted and nested, for the views to aggregate.
 *
 * A track is one timeline: a host thread of one file (file, thread index),
 * or a GPU stream (STORE_TRACK_DEVICE: device, context, stream) whose events
 * are the kernels, copies and sets that ran on it. A track keeps its events
 * as parallel arrays (8 + 8 + 4 + 4 bytes an event), so a view that reads
 * starts only touches starts.
 *
 * Details (trace 1.1: correlation ids, launch configurations, copy kinds,
 * allocations; 1.2: a step's samples; 1.3: a collective's bytes, group and
 * sequence number) are kept only for the events that carry them: a sparse side
 * table of 16-byte entries (event index, correlation id, detail index) in
 * track order, and 24-byte details (struct store_ext) for the events whose
 * type uses them. A CUDA API call costs 16 bytes more (until the analysis
 * has tied its GPU work to it and drops its id: gpu.h), a kernel 40 (and
 * so does a step that knows its samples), an operator nothing (12 bytes when it carries an external id, until the
 * join). A Communication event with its collective's details costs 48
 * (its extra, and a 32-byte struct store_comm in the track's comm[], which
 * extra.detail names with STORE_DETAIL_COMM set): no other event pays for
 * them. The extras' positions ride through the sort in parent[], which the
 * nesting fills afterwards.
 *
 * External ids share the extra's id field (corr): an event with an external
 * id, no correlation id and no details (an operator, mostly) is not an
 * extra but an entry of the track's xonly_ev[]/xonly_id[] (below), which
 * the sort only renumbers; an extra with an external id and no correlation
 * id keeps the external id in corr (STORE_EVF_XID), one with both keeps both
 * there when each fits in 32 bits (STORE_EVF_IDS32: external id in the high
 * half). Only an event whose pair does not fit puts its external id in the
 * track's xid[], parallel to the extras, which a track has only then.
 * store_extra_corr() and store_extra_xid() read the extras' ids.
 *
 * Invariants after store_finish():
 *  - a track's events are sorted by start, ties longer first, then file
 *    order: a parent always precedes what it contains;
 *  - parent[i] is the index, in the same track, of the innermost range that
 *    contains event i in time (STORE_NONE at top level). Nesting comes from
 *    the times alone, so traces without collector depth nest too. Marks and
 *    ranges of duration 0 are never parents;
 *  - an event is folded into its parent (store_ev_folded()) when it is a
 *    host range, its parent is a range of the same name and type, and it is
 *    that range's only child range (instants: marks, allocations and frees
 *    are not counted as children): a call that redispatches to itself
 *    (dropout's aten::div_ calling aten::div_), recorded twice. Chains fold
 *    whole (a in a in a: both inner ones are folded). The views that
 *    aggregate nested ranges (hostwalk.h) see the outer range only, with the
 *    inner one's children as its own: torch.profiler's rule
 *    (EventList._remove_dup_nodes);
 *  - a track's extras are in event order: extra[k].ev ascends with k;
 *    xonly_ev[] names the events of the new order, in no particular order;
 *  - every time of every file is on one clock: the files' own when all
 *    come from one host and name one clock domain (the host's
 *    CLOCK_MONOTONIC; CLOCK_REALTIME for Kineto's), Unix wall time otherwise
 *    (store->wall_clock; a caller that sets it before store_finish() gets
 *    wall time whatever the files: a job's rank loaded alone, job.h);
 *  - start + dur never overflows.
 */
#ifndef GPDL_ANALYSIS_STORE_STORE_H
#define GPDL_ANALYSIS_STORE_STORE_H

#include "formats/trace/trace.h"
#include "lib/analysis/store/names.h"

#include <stddef.h>
#include <stdint.h>

#define STORE_NONE UINT32_MAX
#define STORE_MAX_TRACK_EVENTS (UINT32_MAX - 1u)
#define STORE_MAX_DESCS (1u << 24)
/* extra.detail: an index in the track's comm[] rather than details[] */
#define STORE_DETAIL_COMM (1u << 31)

/* The event flags the store keeps from a trace (those of enum
 * trace_event_flag, and room for a newer writer's), and its own two, which
 * say how the event's extra holds its ids (see above). */
#define STORE_EVF_TRACE 0x3fu
#define STORE_EVF_XID (1u << 6)   /* corr holds the external id; no correlation id */
#define STORE_EVF_IDS32 (1u << 7) /* corr holds external id << 32 | correlation id */

enum store_track_kind {
	STORE_TRACK_HOST = 0,
	STORE_TRACK_DEVICE = 1,
};

/* What an event is, across files: interned name and type. */
struct store_desc {
	uint32_t name; /* in store->names */
	uint8_t type;  /* enum trace_event_type */
	/* the input shapes of its operators, in store->names (0: none): only
	 * with store->by_shapes, where one name has a desc per shapes */
	uint32_t shapes;
};

/* What a kernel, a copy, an allocation or a training step carries beyond its
 * times (24 bytes). Which member applies follows the event's type: Kernel
 * and Communication use kernel, Memcpy and Memset copy, Memory memory,
 * ProfileStep step (kept only when it knows its samples or its CPU time). */
struct store_ext {
	union {
		struct {
			uint64_t blocks;  /* grid x * y * z */
			uint32_t threads; /* per block: block x * y * z */
			uint32_t smem;    /* static + dynamic shared memory per block, bytes */
			uint16_t regs;    /* registers per thread */
		} kernel;
		struct {
			uint64_t bytes;
			uint8_t copy_kind;          /* enum trace_copy_kind */
			uint8_t src_kind, dst_kind; /* enum trace_memory_kind */
			uint8_t is_async;
		} copy;
		struct {
			int64_t bytes;   /* > 0 allocated, < 0 freed */
			uint64_t in_use; /* bytes in use on the device after it; 0 unknown */
			int32_t device;  /* -1: host memory */
			uint8_t kind;    /* enum trace_memory_kind of the allocation */
		} memory;
		struct {
			uint64_t samples; /* processed in the step (trace 1.2); 0 unknown */
			/* its thread's time on a CPU and runnable but waiting,
			 * over the step (trace 2.1); cpu_ns 0: not measured */
			uint64_t cpu_ns, runq_ns;
		} step;
	} u;
};

/* What a collective or point-to-point call carries (trace 1.3, struct
 * trace_event_ext): which call of which process group it is, and its size.
 * Kept for Communication events that carry any of it (the host calls that
 * torch's c10d names "gloo:all_reduce"; imports' collectives), in place of
 * a launch configuration. */
struct store_comm {
	uint64_t bytes;      /* the data this rank contributes (its input tensors); 0 unknown */
	uint64_t seq1;       /* the call's sequence number in its group + 1; 0 unknown */
	uint32_t pg;         /* the process group's name in store->names; 0 unknown */
	uint32_t group_size; /* ranks in the group; 0 unknown */
	uint32_t dtype;      /* the element type's name in store->names; 0 unknown */
	int32_t peer;        /* send/recv: the other rank (of the job: its global rank); -1 none */
};

/* An event that carries details or ids: its index, its ids (the correlation
 * id as it is when the event's flags have neither STORE_EVF_XID nor
 * STORE_EVF_IDS32; read them with store_extra_corr(), store_extra_xid()) and
 * its details (STORE_NONE: none). */
struct store_extra {
	uint32_t ev;
	uint32_t detail;
	uint64_t corr;
};

struct store_track {
	enum store_track_kind kind;
	uint32_t file;   /* index in store->files */
	uint32_t thread; /* the thread's (or stream's) index in its file */
	uint32_t pid, tid;
	uint32_t name;   /* the thread's name in store->names; "" when unnamed */
	/* a GPU stream: its device (id in the file, and index in store->devices
	 * after store_finish), CUDA context and stream */
	uint32_t device, dev, context;
	uint64_t stream;
	uint64_t dropped;
	size_t n, cap;
	uint64_t *start;
	uint64_t *dur;
	uint32_t *desc;   /* desc id << 8 | enum trace_event_flag bits */
	uint32_t *parent; /* filled by store_finish() */
	/* bit i set: event i is folded into its parent (see above); NULL when
	 * no event of the track is */
	uint8_t *folded;
	struct store_extra *extra; /* sparse, in event order after store_finish() */
	size_t nextra, extra_cap;
	/* the external ids (the framework's operator id, PyTorch's "External
	 * id") that do not fit in their extra's corr (see above), parallel to
	 * extra[] (0: none there); NULL when the track has none such. Used by
	 * the GPU join, freed by it (gpu.h). */
	uint64_t *xid;
	/* the events whose only id is an external id, and no details: their
	 * indices and ids, in no order after store_finish() (an event is an
	 * extra or here, never both). Kept beside the extras, so that the sort
	 * renumbers them without moving them; read by the GPU join, which
	 * freed them (gpu.h). */
	uint32_t *xonly_ev;
	uint64_t *xonly_id;
	size_t nxonly, xonly_cap;
	struct store_ext *details; /* what extra[].detail points to */
	size_t ndetails, details_cap;
	struct store_comm *comm;   /* ... when it has STORE_DETAIL_COMM */
	size_t ncomm, comm_cap;
	/* after store_finish(), on a host thread: its ProfileStep ranges
	 * (instants not), their indices in order; what the analysis's window
	 * is made of, found while the tracks are finished side by side */
	uint32_t *steps;
	size_t nsteps;
};

/* A GPU: the (host, device id) its streams name, with its properties when a
 * trace described it (known == 0: only the id). */
struct store_device {
	uint32_t host;  /* the hostname in store->names */
	uint32_t id;
	uint32_t name;  /* in store->names; "" when unknown */
	int known;
	struct trace_device props;
};

struct store_file {
	char *path;
	char *hostname, *cmdline;
	char *clock;       /* the header's clock domain: "CLOCK_MONOTONIC" (recorded), "CLOCK_REALTIME"
			    * (Kineto, imported), "unknown" */
	uint32_t pid;
	int32_t rank;
	uint32_t ncpus;
	int64_t wall_offset_ns;
	int64_t shift_ns;  /* added to the file's times to put them on the store's clock */
	uint64_t start_ns, end_ns; /* the run: the header's span widened to its events */
	uint64_t events_end_ns;    /* the latest end of its events (0: none) */
	uint64_t size;     /* bytes */
	uint64_t events, marks, open_at_exit, unbalanced_pops;
	uint64_t dropped;  /* the reader's total, or the sum of drop records if larger */
	/* the DROP records' counts by enum trace_drop_reason (the last: reasons
	 * this build does not know): an import's dropped and repaired events */
	uint64_t drop_reasons[TRACE_DROP_REASON_COUNT + 1];
	char *damage;      /* NULL: read to its END chunk */
	uint64_t damage_offset;
	struct trace_device *devices; /* as described in the file; name_str is a store name */
	uint32_t ndevices;
	uint32_t host;     /* hostname in store->names, after store_finish() */
};

/* A process as a file's process table last described it (times on the
 * store's clock; end_ns 0: never seen to end). */
struct store_process {
	uint32_t file;
	uint32_t pid, ppid;
	uint64_t start_ns, end_ns;
	int32_t exit_status; /* code, 128+signal, TRACE_EXIT_UNKNOWN, TRACE_EXIT_KILLED */
	int32_t rank;        /* 1.3: the rank it belongs to; -1 none */
	int32_t exit_signal; /* 2.1: N > 0 died of signal N; 0 exit_status is a code (or unknown);
			      * -1 not said (before 2.1: 128+N may be either) */
};

struct store_counter {
	uint64_t ts_ns;
	uint32_t file;
	uint32_t id;  /* enum trace_counter_id */
	uint32_t pid; /* 0: system-wide */
	double value;
};

/* qsort order of counters: by file, process, then time (a series at a
 * time, in order). */
int store_counter_cmp(const void *x, const void *y);

struct store {
	struct names names;
	struct store_desc *descs;
	uint32_t ndescs, descs_cap;
	uint32_t *desc_slots; /* (name, type, shapes) -> desc id + 1 */
	uint32_t desc_nslots;
	/* set before loading: operators with input shapes (--record-shapes)
	 * get a desc per (name, shapes), for summary --group-by shapes */
	int by_shapes;
	struct store_track *tracks;
	uint32_t ntracks, tracks_cap;
	struct store_file *files;
	uint32_t nfiles;
	struct store_counter *counters;
	size_t ncounters, counters_cap;
	/* every process image (a pid and its start: an exec makes another) of
	 * every file, each as its file last described it */
	struct store_process *procs;
	uint32_t nprocs, procs_cap;
	struct store_device *devices; /* after store_finish() */
	uint32_t ndevices;
	int wall_clock;
	int finished;
	int has_xid; /* some event carries an external id */
};

static inline uint32_t store_ev_desc(const struct store_track *t, size_t i)
{
	return t->desc[i] >> 8;
}
static inline unsigned store_ev_flags(const struct store_track *t, size_t i)
{
	return t->desc[i] & STORE_EVF_TRACE;
}
static inline uint64_t store_ev_end(const struct store_track *t, size_t i)
{
	return t->start[i] + t->dur[i];
}
static inline unsigned store_ev_type(const struct store *s, const struct store_track *t, size_t i)
{
	return s->descs[store_ev_desc(t, i)].type;
}
static inline const char *store_name(const struct store *s, uint32_t id)
{
	return names_get(&s->names, id);
}
static inline int store_ev_folded(const struct store_track *t, size_t i)
{
	return t->folded && ((t->folded[i >> 3] >> (i & 7)) & 1);
}
/* Marks and unbalanced pops: instants that take no time. */
static inline int store_ev_is_instant(const struct store_track *t, size_t i)
{
	return (store_ev_flags(t, i) & (TRACE_EVF_MARK | TRACE_EVF_UNBALANCED_POP)) != 0;
}
/* GPU work: a kernel, copy, set or communication on a GPU stream. */
static inline int store_ev_is_gpu_work(const struct store *s, const struct store_track *t,
				       size_t i)
{
	return t->kind == STORE_TRACK_DEVICE && trace_event_type_is_device(store_ev_type(s, t, i));
}

/* The extra of event i, or NULL: a binary search (constant time on a track
 * where every event has one). */
const struct store_extra *store_ev_extra(const struct store_track *t, size_t i);
/* The details of event i, or NULL. */
const struct store_ext *store_ev_ext(const struct store_track *t, size_t i);
/* The collective details of event i, or NULL. */
const struct store_comm *store_ev_comm(const struct store_track *t, size_t i);

/* For visiting a track's events in order: the extra of each, in O(1) amortised. */
struct store_extra_cursor {
	size_t k;
};
static inline const struct store_extra *store_extra_next(const struct store_track *t,
							  struct store_extra_cursor *c, size_t i)
{
	while (c->k < t->nextra && t->extra[c->k].ev < i)
		c->k++;
	return c->k < t->nextra && t->extra[c->k].ev == i ? &t->extra[c->k] : NULL;
}
static inline const struct store_ext *store_extra_ext(const struct store_track *t,
						      const struct store_extra *x)
{
	/* STORE_NONE has STORE_DETAIL_COMM set too */
	return x && !(x->detail & STORE_DETAIL_COMM) ? &t->details[x->detail] : NULL;
}
/* A Communication event's collective details, or NULL. */
static inline const struct store_comm *store_extra_comm(const struct store_track *t,
							const struct store_extra *x)
{
	return x && x->detail != STORE_NONE && (x->detail & STORE_DETAIL_COMM)
		       ? &t->comm[x->detail & ~STORE_DETAIL_COMM]
		       : NULL;
}
/* An extra's correlation id and external id (0: none). */
static inline uint64_t store_extra_corr(const struct store_track *t, const struct store_extra *x)
{
	unsigned f = t->desc[x->ev];
	if (f & STORE_EVF_XID)
		return 0;
	return f & STORE_EVF_IDS32 ? (uint32_t)x->corr : x->corr;
}
static inline uint64_t store_extra_xid(const struct store_track *t, const struct store_extra *x)
{
	unsigned f = t->desc[x->ev];
	if (f & STORE_EVF_XID)
		return x->corr;
	if (f & STORE_EVF_IDS32)
		return x->corr >> 32;
	return t->xid ? t->xid[x - t->extra] : 0;
}

void store_init(struct store *s);
void store_free(struct store *s);

/* Reads one trace file into the store: a gprof-dl trace, or a chrome-trace
 * JSON file imported on the fly (trace_open.h). Returns 0 (a damaged file
 * too: see store_file.damage), or -1 with a one-line message in err when the
 * file cannot be opened or is not a trace ("'PATH': ..."). */
int store_load(struct store *s, const char *path, char *err, size_t errlen);
/* Which processes of a file to load: those listed (exclude 0), or all but
 * those listed (exclude 1). A thread, a GPU stream, a process record, a
 * per-process counter and a drop count go with their pid; system-wide
 * counters and the file's devices go with every part. */
/* store_load() of one part of a file (a rank's processes, job.h): the
 * store's file says what was loaded (events, drops of its threads; with
 * exclude, the drops no thread claims too). pids NULL: the whole file. */
int store_load_part(struct store *s, const char *path, const struct trace_pids *pids, char *err,
		    size_t errlen);
/* Puts all files on one clock, sorts every track and nests its events. */
void store_finish(struct store *s);
/* The clock a set of files' times are compared on, in words for a note
 * ("the CLOCK_MONOTONIC of host a"), into buf: wall (1: Unix wall time, by
 * each file's wall clock offset), nhosts, clock (the files' clock domain,
 * NULL when they differ) and host (the first file's). Returns buf. */
const char *store_clock_words(char *buf, size_t size, int wall, uint32_t nhosts, const char *clock,
			      const char *host);
/* The files' clock domain when they share one, else NULL. */
const char *store_clock(const struct store *s);

/* Building blocks of store_load(), for tests and importers. */
uint32_t store_add_file(struct store *s, const char *path);
uint32_t store_desc_intern(struct store *s, const char *name, size_t len, unsigned type);
/* The same for an operator's input shapes (a store->names id; 0: none). */
uint32_t store_desc_intern_shapes(struct store *s, const char *name, size_t len, unsigned type,
				  uint32_t shapes);
uint32_t store_add_track(struct store *s, enum store_track_kind kind, uint32_t file,
			 uint32_t thread);
void store_append(struct store *s, uint32_t track, uint64_t start, uint64_t dur, uint32_t desc,
		  unsigned flags);
/* The same with the event's details (1.1), kept as far as the views use them.
 * ext->pg_str and ext->dtype_str are ids in s->names (the loader maps a
 * file's string ids there). */
void store_append_ext(struct store *s, uint32_t track, uint64_t start, uint64_t dur,
		      uint32_t desc, unsigned flags, const struct trace_event_ext *ext);
/* Makes a track a GPU stream of device (an id within its file). */
void store_set_stream(struct store *s, uint32_t track, uint32_t device, uint32_t context,
		      uint64_t stream);
/* A GPU's properties, as a file describes it (d->name_str is ignored; name given). */
void store_add_file_device(struct store *s, uint32_t file, const struct trace_device *d,
			   const char *name);
void store_add_counter(struct store *s, const struct store_counter *c);
/* A process of file (times on the file's clock); described again, the later wins. */
void store_add_process(struct store *s, uint32_t file, const struct trace_process *p);
/* Whether a name is a ProfileStep's as imports spell it: "ProfileStep",
 * "ProfileStep#12" (Paddle), "ProfilerStep#12" (PyTorch). */
int store_is_step_name(const char *name, size_t len);

/* Events lost for a reason other than a full ring (enum trace_drop_reason:
 * no ring slot, an import's drops), over every file: said apart from the
 * full rings' by the views that report drops. */
uint64_t store_drops_not_ring(const struct store *s);

#endif
