/*
 * hostwalk.h - the walk every view that aggregates host ranges shares: the
 * events of the host threads in one start order (merged across threads, so
 * that a row's ranges can be united on the fly), each thread with a stack of
 * the ranges the view follows, and the GPU work each call launched
 * delivered at the call, while the ranges around it are open.
 *
 * A view says which ranges it follows (open); the walk keeps, per followed
 * range, its length inside the window and the counted GPU work launched
 * inside it, its followed children's included, and hands the frame back
 * when the range ends (close). A range contains what starts inside it and
 * ends no later, on its thread: the store's nesting (store.h). A range the
 * store folds into its parent (a call that redispatches to itself, recorded
 * twice under one name) is never opened: its parent's frame is the call,
 * with the folded range's children, GPU work and instants as its own.
 *
 * Every event of the types the view names is visited, in the window or not
 * (so a tree of names does not depend on where the window cuts); frames say
 * whether they lie in it. Only counted GPU work (gpu.h) is delivered;
 * instants are, in the window or not, saying which. Events of other types
 * are skipped before the threads are merged: a walk costs what its types
 * hold, plus the calls that launched GPU work (and the ranges GPU work is
 * attributed to by external id). Skipping them only delays
 * when a frame is closed, never what it holds: a range's followed children
 * are still visited inside it.
 */
#ifndef GPDL_ANALYSIS_STORE_HOSTWALK_H
#define GPDL_ANALYSIS_STORE_HOSTWALK_H

#include "lib/analysis/store/analysis.h"

struct hw_frame {
	uint32_t track, event;
	uint32_t node;   /* the view's, set by open: usually its row */
	int in_window;
	uint64_t cpu;    /* the range's length inside the window */
	uint64_t gpu;    /* counted GPU work launched inside so far; final at close */
	uint64_t stamp;  /* the view's */
};

struct hw_stack {
	struct hw_frame *v;
	size_t n, cap;
};

struct hw_visitor {
	/* A host range (f->track, f->event, in_window, cpu filled in): return 1
	 * to follow it, with f->node set; st holds the followed ranges around it. */
	int (*open)(void *ctx, struct hw_frame *f, const struct hw_stack *st);
	/* A followed range ends; st holds the followed ranges around it. */
	void (*close)(void *ctx, const struct hw_frame *f, const struct hw_stack *st);
	/* Counted GPU work (gpu track, index) launched by call on track, with
	 * the followed ranges open around the call (the call's own frame on top
	 * when the call is followed). The walk has added its duration to the top
	 * frame already. */
	void (*gpu)(void *ctx, const struct hw_stack *st, uint32_t track, uint32_t call,
		    uint32_t gtrack, uint32_t gi);
	/* An instant (a mark, an allocation or free), with its extra (NULL:
	 * none), and whether it lies in the window. */
	void (*instant)(void *ctx, const struct hw_stack *st, uint32_t track, uint32_t i,
			const struct store_extra *x, int in_window);
	/* The event types to visit, as 1u << type; 0: all. */
	uint32_t types;
	/* No GPU work: frames get none, the calls are not visited for it. */
	int skip_gpu;
	/* GPU work attributed to a range by external id (gpu.h) is delivered
	 * at that range (call = the range, on its thread), not at its call;
	 * with by_call, at its call (for views of the API calls themselves),
	 * like all other work. */
	int by_call;
	/* GPU work launched on a thread with no followed range open around its
	 * call is delivered with the followed ranges open around the call's
	 * start on another thread of its process (same file and pid): the one
	 * with the most of them, the first on a tie; the first 64 threads of a
	 * process that hold followed events are looked at. For the training
	 * loop's phases: PyTorch launches backward's kernels from its autograd
	 * thread while the step's thread has Backward open. */
	int across_threads;
};

/* Walks the given host tracks (NULL: all of them). */
void hostwalk_run(const struct analysis *a, const uint32_t *tracks, uint32_t ntracks,
		  const struct hw_visitor *v, void *ctx);

/* Several walks in one: the host tracks merged once, each visitor handed
 * what hostwalk_run() of it alone would hand it, in the same order (its
 * callbacks interleave with the others', never share state with them). */
struct hw_request {
	const struct hw_visitor *v;
	void *ctx;
	const uint32_t *tracks; /* NULL: all host tracks */
	uint32_t ntracks;
};
void hostwalk_run_many(const struct analysis *a, const struct hw_request *req, unsigned n);

/* Instants: marks and Memory events, whatever their flags say. */
int hostwalk_is_instant(const struct store *s, const struct store_track *t, size_t i);

#endif
