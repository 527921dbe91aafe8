/*
 * export_writer.h - the one interface of the trace exporters (chrome JSON and
 * CSV), uftrace's dump-ops shape: a table of callbacks embedded as the first
 * member of each writer's own struct, which the writer's callbacks get back
 * with export_writer_container(); and what the exporters say alike about GPU
 * work (the PyTorch profiler's names for copies, a kernel's occupancy), so
 * that both files of one trace agree.
 *
 * export_writer_run() drives any writer through one read of a trace, in file
 * order, without keeping events: an exporter streams, so its memory does not
 * grow with the trace. The order of calls is
 *
 *   begin (once, the header decoded)
 *   process | thread | event | counter | drops | device
 *         (as the reader decodes them)
 *   end   (once, after the read: the reader's tables are complete, its damage
 *          known; per-process and per-thread output belongs here)
 *
 * Any callback may be NULL. A non-zero return (a failed write) stops the read
 * and is what export_writer_run() returns; end is not called then.
 */
#ifndef GPDL_FORMATS_EXPORT_WRITER_H
#define GPDL_FORMATS_EXPORT_WRITER_H

#include "formats/trace/trace.h"

#include <stddef.h>
#include <stdio.h>

struct export_writer {
	const char *name; /* "chrome", "csv": for messages */
	int (*begin)(struct export_writer *w, struct trace_reader *r,
		     const struct trace_header *h);
	int (*process)(struct export_writer *w, const struct trace_process *p);
	int (*thread)(struct export_writer *w, const struct trace_thread *t);
	int (*event)(struct export_writer *w, const struct trace_event *e);
	int (*counter)(struct export_writer *w, const struct trace_counter *c);
	int (*drops)(struct export_writer *w, uint32_t thread, uint64_t dropped);
	int (*device)(struct export_writer *w, const struct trace_device *d); /* 1.1 */
	int (*end)(struct export_writer *w);
	/* Frees the writer; does not close the stream it was given. */
	void (*destroy)(struct export_writer *w);

	/* Set by the caller, kept by the runs: only the events that begin in
	 * [from_ns, to_ns) of the trace's clock are passed on, and the
	 * counters sampled in it (part of a long trace: export --steps,
	 * --window); to_ns 0: every one. */
	uint64_t from_ns, to_ns;
	/* Set by the caller: called every EXPORT_PROGRESS_EVENTS events read
	 * and once at the end, with the reader's offset in the file (a
	 * progress bar); NULL: none. */
	void (*progress)(void *ctx, uint64_t offset);
	void *progress_ctx;

	/* Set by export_writer_run(), for the callbacks. */
	struct trace_reader *reader;
	const struct export_filter *filter; /* NULL: the whole trace */
	uint64_t events, counters; /* how many were passed on */
};

#define EXPORT_PROGRESS_EVENTS 16384u

#define export_writer_container(w, type) ((type *)(void *)((char *)(w) - offsetof(type, ops)))

/* Reads r to its end (or its damage) through w. Returns 0, or the first
 * non-zero result of a callback. */
int export_writer_run(struct export_writer *w, struct trace_reader *r);

/* Part of a trace: the processes of one rank of a file that holds several
 * (a launcher's run, trace 1.3), or all but those (its launcher). The
 * processes listed, sorted (exclude 0), or every process but those
 * (exclude 1); system: whether the file's system-wide counters (pid 0)
 * belong to this part (each file's go to exactly one of its parts). */
struct export_filter {
	struct trace_pids part;
	int system;
};

/* export_writer_run() of the part f of r: process records, threads (GPU
 * streams by their owner), events, drops and counters of the processes
 * outside the part are not passed on; begin and end come as for the whole
 * trace (the reader's tables at end still list everything: ask
 * export_writer_takes_pid()). f NULL: the whole trace. */
int export_writer_run_part(struct export_writer *w, struct trace_reader *r,
			   const struct export_filter *f);
/* Whether the run's part has process pid (always, with no filter). */
int export_writer_takes_pid(const struct export_writer *w, uint32_t pid);

/* ---- what every exporter says the same way about GPU work (1.1) -------- */

/* The PyTorch profiler's names for copies and sets, written into buf:
 * "Memcpy HtoD (Pageable -> Device)", "Memset (Device)". */
void export_memcpy_name(char *buf, size_t size, const struct trace_event_ext *x);
void export_memset_name(char *buf, size_t size, const struct trace_event_ext *x);

/* A kernel launch measured against its device, as the PyTorch profiler's
 * kernel view defines it:
 *   blocks_per_sm  the grid's blocks / the device's SMs
 *   warps_per_sm   blocks_per_sm * warps per block
 *   occupancy_pct  est. achieved occupancy: the blocks one SM holds at a time
 *                  (the least of the limits by blocks, warps, registers and
 *                  shared memory, and at most blocks_per_sm) times the threads
 *                  per block, over the SM's threads; in [0, 100], or -1
 *                  when the device does not say how many threads an SM holds */
struct export_launch {
	double blocks_per_sm;
	double warps_per_sm;
	double occupancy_pct;
};

/* 0 with *l filled; -1 when the launch or the device says too little (no
 * block size, no SMs). */
int export_launch_measure(const struct trace_device *d, const struct trace_event_ext *x,
			  struct export_launch *l);

/* ---- what every exporter and the importer say alike about collectives -- */

/* The size in bytes of one element of a tensor type, as torch names it in
 * the PyTorch profiler's args: the C++ type of "Input type" ("float",
 * "c10::BFloat16", "long int") or the ScalarType of record_param_comms'
 * "dtype" ("Float", "BFloat16", "Long"); any case. 0: unknown (a Scalar,
 * a list, "").  The one table the chrome export ("In msg nelems") and the
 * import (bytes from "Input Dims") share. */
unsigned export_dtype_size(const char *name, size_t len);

/* The op of a communication call named "BACKEND:OP" (trace_name_comm_call):
 * a pointer to OP in name, or NULL. */
const char *export_comm_op(const char *name);

/* bytes over ns is GB/s (1e9 bytes per second); 0 for an instant. */
static inline double export_bandwidth_gbps(uint64_t bytes, uint64_t dur_ns)
{
	return dur_ns ? (double)bytes / (double)dur_ns : 0.0;
}

/* ---- bytes an exporter makes once per desc ------------------------------ */

/* What every event of one desc repeats, made once by the exporter's own
 * writer calls into memory and copied from there after: two runs in one
 * allocation (chrome: the object's head and tail; CSV: the name and type
 * fields, the domain and category ones). Desc ids are the reader's, so a
 * job's next part clears the cache. */
struct export_desc_bytes {
	char *bytes;            /* the first run, then the second; NULL: not made */
	uint32_t first, second; /* their lengths */
	uint32_t flags;         /* what they were made for (chrome: the event's flags) */
};
struct export_desc_cache {
	struct export_desc_bytes *v;
	uint32_t n;
};
/* Desc id's entry (zeroed when new), the cache grown to hold it. */
struct export_desc_bytes *export_desc_grow(struct export_desc_cache *c, uint32_t id);
static inline struct export_desc_bytes *export_desc_at(struct export_desc_cache *c, uint32_t id)
{
	return id < c->n ? &c->v[id] : export_desc_grow(c, id);
}
void export_desc_clear(struct export_desc_cache *c);
/* Making an entry: export_desc_open() gives the stream to write the first
 * run to (NULL when memory fails), export_desc_split() ends the first run,
 * export_desc_close() the second and, when bad is 0 and all went well,
 * replaces *k (with flags); -1 otherwise, *k unchanged. */
struct export_desc_mem {
	FILE *f;
	char *text;
	size_t len, first;
	int bad;
};
FILE *export_desc_open(struct export_desc_mem *m);
void export_desc_split(struct export_desc_mem *m);
int export_desc_close(struct export_desc_mem *m, int bad, struct export_desc_bytes *k,
		      uint32_t flags);

static inline void export_writer_destroy(struct export_writer *w)
{
	if (w && w->destroy)
		w->destroy(w);
}

#endif
