/*
 * gpu.h - GPU work and the host calls that launched it.
 *
 * GPU work is every kernel, copy, set and communication on a GPU stream. A
 * piece of GPU work is tied to the host event of its process (same file,
 * same pid) that carries the same correlation id: the CUDA API call that
 * launched it. Through that call it belongs to every host range open around
 * the call on the call's thread (operator, phase, step, user range): the GPU
 * time of a range is the GPU work launched inside it, its children's
 * included. hostwalk.h delivers each piece at its call.
 *
 * External ids: the PyTorch profiler's own link. An operator's ext carries
 * an "External id" that the runtime calls and GPU work it caused carry too.
 * When the launching call lies inside no host range on its thread (its
 * parent is none), or no call is known, and the work (else its call) carries
 * an external id that a host range of the same process has (any thread; an
 * Operator first where several have it; never a CUDA API call or an
 * instant), the work is attributed to that range instead (GPU_BY_XID): the
 * walk delivers it at the range, with the ranges around it open, and not at
 * the call. Correlation keeps priority whenever the call has a range around
 * it. What counts does not change: work with a call still counts by the
 * call, work without one by its own time. The map from id to range is built
 * only when some event carries an external id, and freed after the join.
 *
 * Allocations on GPU streams (Memory instants on a stream track) are tied
 * the same way to a host event they happened under (anchors): the call with
 * their correlation id when it lies inside a range, else the range with
 * their external id (or their call's), else the call; none when nothing
 * matches.
 *
 * Counting: GPU work counts for the summary when its call lies in the window
 * (it is then counted in full, even where it runs past the window: the work
 * was launched inside), or, with no call, when the work itself does; with
 * the GPU's span as the window (analysis.h: gpu_window), all of it does. The sum
 * of the counted work is the 100% of every GPU Ratio that is not a union.
 *
 * Communication: GPU work of type Communication, GPU work whose name holds
 * "nccl" or "rccl" (any case), and GPU work launched inside a communication
 * operator (gpu_is_comm_op_name(); or a host range of type Communication).
 *
 * The store's extras that carried only ids (correlation, external) are
 * dropped once the join is done, or at once when there is nothing to join,
 * and so are the lone external ids (store.h; a stream's turn into extras
 * first): after gpu_prepare(), an extra is an event with details, its corr
 * the correlation id alone, and no track has xid[] or xonly_ev[].
 *
 * Invariants after gpu_prepare():
 *  - flags[] of a GPU stream has one entry per event; host tracks have none;
 *  - a host track's launches are sorted by call, then by the work's start;
 *  - every launch's work is GPU work (store_ev_is_gpu_work).
 */
#ifndef GPDL_ANALYSIS_STORE_GPU_H
#define GPDL_ANALYSIS_STORE_GPU_H

#include "formats/trace/trace.h"

#include <stddef.h>
#include <stdint.h>

struct analysis;

enum gpu_flag {
	GPU_LINKED = 1u << 0,  /* tied to the call that launched it */
	GPU_COUNTED = 1u << 1, /* counts in the window */
	GPU_COMM = 1u << 2,    /* communication */
	GPU_BY_XID = 1u << 3,  /* attributed to a range by external id (see above) */
};

/* Roles of a desc (by name and type), per store desc. */
enum desc_role {
	ROLE_COMM_OP = 1u << 0,  /* a host range that is a communication call (gpu_is_comm_op_name(),
				  * or of type Communication): its GPU work is communication */
	ROLE_COMM_GPU = 1u << 1, /* GPU work named as communication (NCCL, RCCL) */
};

struct gpu_launch {
	uint32_t call;  /* the launching call's index on the host track */
	uint32_t track; /* the work's GPU stream track */
	uint32_t index; /* and its index there */
};

/* A Memory instant on a GPU stream and the host event it happened under. */
struct gpu_anchor {
	uint32_t index; /* the instant's index on the stream */
	uint32_t track; /* the host event: a call, or a range found by external id */
	uint32_t ev;
};

struct gpu_track {
	uint8_t *flags;              /* GPU streams: enum gpu_flag per event */
	struct gpu_launch *launches; /* host tracks: what their calls launched */
	size_t nlaunches;
	/* host tracks: GPU work attributed to this track's ranges by external
	 * id (call = the range), sorted as launches are */
	struct gpu_launch *xlaunches;
	size_t nxlaunches;
	struct gpu_anchor *anchors;  /* GPU streams: by index, only those tied */
	size_t nanchors;
};

struct gpu_info {
	struct gpu_track *tracks; /* by store track */
	uint8_t *roles;           /* by store desc: enum desc_role */
	int has_gpu;              /* any GPU work at all */
	uint64_t work, linked, counted; /* pieces of GPU work */
	uint64_t by_xid;          /* ... attributed by external id */
	uint64_t stream_memory;   /* Memory instants on GPU streams */
	uint64_t counted_ns;      /* the counted work's durations, summed */
	/* ... the part of them outside the window: work launched inside that
	 * ran past it (the views that clip to the window leave it out) */
	uint64_t counted_outside_ns;
	uint64_t counted_type_ns[TRACE_EV_TYPE_COUNT];
};

void gpu_prepare(struct analysis *a);
void gpu_free(struct gpu_info *g, uint32_t ntracks);

/* Host range names whose GPU work is communication: PyTorch's "nccl:*",
 * "gloo:*", "mpi:*", "ucc:*", "c10d::*", "record_param_comms", and Paddle's collective
 * operators (c_allreduce_*, c_allgather, c_broadcast, c_reducescatter,
 * c_reduce_*, c_scatter, alltoall, send_v2, recv_v2, partial_send,
 * partial_recv, partial_allgather, barrier). */
int gpu_is_comm_op_name(const char *name);
/* GPU work names that are communication: containing "nccl" or "rccl". */
int gpu_is_comm_work_name(const char *name);

/* Blocks per SM and estimated achieved occupancy (%) of one kernel run on a
 * device (see gprof-dl-summary(1)); 0 when the device's properties or the
 * launch are unknown. */
int gpu_occupancy(const struct trace_device *d, uint64_t blocks, uint32_t threads,
		  uint32_t regs, uint32_t smem, double *blocks_per_sm, double *occupancy_pct);

/* "HtoD", "DtoH", ...; "Pageable", "Pinned", "Device", ... ("" unknown). */
const char *gpu_copy_kind_name(unsigned kind);
const char *gpu_memory_kind_name(unsigned kind);

#endif
