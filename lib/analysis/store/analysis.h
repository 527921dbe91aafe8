/*
 * analysis.h - what every view starts from: the event store of the traces
 * given, the window the summary covers, and the per-type unions, computed once.
 *
 * The window is the union of all ProfileStep ranges of all host threads (a
 * step is a range of type ProfileStep, or one named as Paddle's or PyTorch's
 * steps: store_is_step_name()); with no step at all it is the whole run (each file's header start..end, widened to
 * its events). Every view clips times to the window, so a ratio against its
 * measure never exceeds 100%.
 *
 * An event is "in the window" when a positive part of it lies inside, or, for
 * an instant or a zero-length range, when its time does (bounds included).
 *
 * Host types are counted on host threads, device types (Kernel, Memcpy,
 * Memset, Communication) on GPU streams: a GPU stream's annotation range is
 * no CPU time, and a framework's host-side copy range is no GPU time. GPU
 * work is tied to what launched it in analysis_prepare() (gpu.h).
 *
 * Communication is both: GPU work (gpu.h: NCCL kernels and the work of
 * communication calls, in comm) and host ranges, which is where gloo's and
 * MPI's collectives run (a Communication event on a host thread, torch's
 * "gloo:all_reduce"; and the host ranges named as communication calls,
 * c10d::* and Paddle's c_* operators: gpu_is_comm_op_name()). The host ones
 * are not in types[] (which counts Communication on GPU streams, as Paddle
 * does) but in host_comm, so that a trace's GPU figures stay as they were.
 *
 * Parts (ranks): the ranks of a job run side by side on one clock, so a
 * union over all of them counts rank 0's Forward and rank 1's Backward at
 * once, and the shares of a step's phases added up to more than 100%. The
 * Overview and Model views measure each part alone and sum: a part is a
 * file's rank (the header's rank, else the rank of the track's process or
 * of its nearest ancestor process in the file's process table), or the rest
 * of the file (rank -1); a file without ranks is one part, so a single trace
 * is one part and its figures are the unions above. A part's window is its
 * own ProfileStep ranges (none: an empty window; with no step anywhere, its
 * file's whole run), and a type's share is
 *   sum over parts of |the union of its ranges on the part ∩ the part's window|
 *   / sum over parts of |the part's window|
 * (analysis_part_ratio()): the phases of one rank's steps, which follow one
 * another, add up to at most 100%.
 */
#ifndef GPDL_ANALYSIS_STORE_ANALYSIS_H
#define GPDL_ANALYSIS_STORE_ANALYSIS_H

#include "formats/trace/capture.h"
#include "lib/analysis/store/gpu.h"
#include "lib/analysis/store/interval.h"
#include "lib/analysis/store/store.h"
#include "lib/analysis/store/store_iter.h"

#include <pthread.h>

struct type_total {
	uint64_t calls;     /* ranges of the type in the window */
	uint64_t marks;     /* instants of the type in the window */
	uint64_t merged_ns; /* the union of its ranges over all tracks, inside the window */
	/* per rank: the sum over the parts (below) of the union of its ranges
	 * on the part's tracks inside the part's window */
	uint64_t part_ns;
};

struct analysis {
	struct store store;
	struct ivl_set window;
	/* Set before analysis_prepare(): the window is the GPU's own span
	 * (summary --window gpu, Holistic Trace Analysis's): each part's (below)
	 * from the start of its first GPU work to the end of its last, instead
	 * of the steps. Ignored by a trace without GPU work (gpu_window 0). */
	int want_gpu_window;
	int gpu_window;     /* 1: the window is the GPU's span (from_steps is then 0) */
	int from_steps;     /* 1: the window is the ProfileStep ranges; 0: the whole run */
	uint64_t steps;     /* ProfileStep ranges */
	uint64_t window_ns; /* the window's measure */
	/* over all files */
	uint64_t events, marks, open_at_exit, unbalanced_pops, dropped;
	uint32_t damaged;   /* files read only up to damage */
	int prepared;
	struct gpu_info gpu; /* GPU work and its launching calls */
	/* analysis_types(): computed by the first view that asks, once */
	pthread_mutex_t types_lock;
	int types_done;
	struct type_total types[TRACE_EV_TYPE_COUNT];
	/* ... and the GPU work's unions inside the window: communication (see
	 * gpu.h), computation (the other kernels), both (busy), and each
	 * device's kernels and communication (by store device) */
	struct type_total comm, comp;
	/* ... every kernel, the communication kernels (of type Communication on
	 * a GPU stream) included: the Kernel Summary's rows, the Overview's
	 * Kernel row */
	struct type_total kernels;
	uint64_t busy_ns;
	/* ... and the host's communication: the union of the host ranges that
	 * are communication calls (above), and their count */
	struct type_total host_comm;
	uint64_t *device_busy_ns;
	/* the parts (above): each track's (by track index), each part's window
	 * (sealed), the sum of their measures; and, with analysis_types(), the
	 * sum over parts of the union of the training phases (Dataloader,
	 * Forward, Backward, Optimization) inside the part's window */
	uint32_t nparts;
	uint32_t nparts_windowed; /* those whose window is not empty */
	uint32_t *track_part;
	struct ivl_set *part_window;
	uint64_t parts_window_ns;
	uint64_t phases_part_ns;
};

void analysis_init(struct analysis *a);
void analysis_free(struct analysis *a);
/* store_load(): 0, or -1 with a message "'PATH': ..." in err. */
int analysis_load(struct analysis *a, const char *path, char *err, size_t errlen);
/* After the last load: sorts and nests the store, finds the window. */
void analysis_prepare(struct analysis *a);
/* Every type's calls and the union of its ranges over all tracks inside the
 * window, indexed by enum trace_event_type. Computed in one merged pass on
 * the first call, from any thread; the same array afterwards. */
const struct type_total *analysis_types(const struct analysis *a);

/* What the window is, for a note: "the ProfileStep ranges", "the whole
 * run" or "the GPU's span (...)". */
const char *analysis_window_name(const struct analysis *a);

/* Whether event i of t is in the window; *clipped gets its length inside. */
int analysis_clip(const struct analysis *a, const struct store_track *t, size_t i,
		  uint64_t *clipped);
/* The same for events visited in start order, through a cursor on the window
 * (ivl_cursor_init(c, &a->window) before the first). */
static inline int analysis_clip_next(struct ivl_cursor *c, const struct store_track *t,
				     size_t i, uint64_t *clipped)
{
	uint64_t start = t->start[i], dur = t->dur[i];
	if (dur == 0) {
		*clipped = 0;
		return ivl_cursor_contains(c, start);
	}
	*clipped = ivl_cursor_overlap(c, start, start + dur);
	return *clipped > 0;
}
/* Every event of every track in start order, merged across tracks, with its
 * length inside the window; events wholly outside the window are skipped. */
struct analysis_walk {
	struct store_iter it;
	struct ivl_cursor at;
	const struct store *s;
	/* the event analysis_walk_next() stopped at: event i of track ti (t),
	 * its type and its length inside the window */
	const struct store_track *t;
	uint32_t ti;
	size_t i;
	unsigned type;
	uint64_t clipped;
};
void analysis_walk_init(struct analysis_walk *w, const struct analysis *a);
/* 1 with w at the next event; 0 at the end. */
int analysis_walk_next(struct analysis_walk *w);
void analysis_walk_free(struct analysis_walk *w);

/* Every piece of GPU work that counts in the window (GPU_COUNTED), stream
 * by stream, each in its order: after each analysis_gpu_next() that returns
 * 1, event i of track ti (t), its GPU flags (enum gpu_flag) and its type;
 * xc follows the stream, for store_extra_next(). */
struct analysis_gpu_walk {
	const struct analysis *a;
	const struct store_track *t;
	uint32_t ti;
	size_t i;
	uint8_t flags;
	unsigned type;
	struct store_extra_cursor xc;
};
static inline void analysis_gpu_walk_init(struct analysis_gpu_walk *w, const struct analysis *a)
{
	*w = (struct analysis_gpu_walk){.a = a, .ti = UINT32_MAX};
}
int analysis_gpu_next(struct analysis_gpu_walk *w);

/* Whether GPU work i of GPU stream ti (of type type) keeps its device busy:
 * a kernel or communication (gpu.h's, so a copy inside a collective too).
 * The Device view's utilisation and the Timeline view's. */
static inline int analysis_gpu_busy(const struct analysis *a, uint32_t ti, size_t i, unsigned type)
{
	return (a->gpu.tracks[ti].flags[i] & GPU_COMM) || type == TRACE_EV_KERNEL ||
	       type == TRACE_EV_COMMUNICATION;
}

/* ns as a percentage of the window, within [0, 100]. */
double analysis_ratio(const struct analysis *a, uint64_t ns);
/* ns (a sum over parts: part_ns) as a percentage of the parts' windows
 * summed (parts_window_ns), within [0, 100]. */
double analysis_part_ratio(const struct analysis *a, uint64_t ns);

/* Every event of a finished store through capture_event() (capture.h),
 * then capture_finish(). */
void capture_from_store(struct capture *c, const struct store *s);
/* --cycle N on a loaded analysis: its window (and step count) narrowed to
 * the span of cycle (or capture range) n, before any view reads them; 0, or
 * -1 with a one-line message in err. */
int capture_restrict(struct analysis *a, uint32_t n, char *err, size_t errlen);

#endif
