/*
 * chrome_writer.h - a trace as chrome-trace JSON ("Trace Event Format", object
 * form), for Perfetto and chrome://tracing, in the PyTorch profiler's (Kineto's)
 * shape so that tools built for its traces (Holistic Trace Analysis, the
 * TensorBoard plugin) read ours. One instance of export_writer.h.
 *
 * What comes out, in this order, so that it streams:
 *   {"distributedInfo": {"rank": R, "world_size": W, "backend": B},  (a rank's trace)
 *   "traceEvents":[
 *     one line per range ("ph":"X"), mark ("ph":"i", thread scope),
 *     "[memory]" instant, ac2g flow end ("ph":"s" on an API call with a
 *     correlation id, "ph":"f" on the GPU work it launched) and counter
 *     sample ("ph":"C"), as the reader delivers them;
 *     then process and thread metadata ("ph":"M": process_name,
 *     process_labels, process_sort_index, thread_name, thread_sort_index),
 *     for host threads and for GPU streams (pid = device, tid = stream),
 *     written at the end, when the reader's tables are complete],
 *   "displayTimeUnit":"ms",
 *   "deviceProperties":[...],        (when the trace has GPUs)
 *   "baseTimeNanoseconds":N,         (the Unix time of ts 0)
 *   "otherData":{the trace header, drops and damage}}
 *
 * "cat" is the PyTorch profiler's category (cpu_op, user_annotation,
 * cuda_runtime, kernel, gpu_memcpy, ...); args.type is always gprof-dl's own
 * event type, and details use Kineto's arg names ("correlation",
 * "External id", "grid", "Sequence number", "Input Dims", a collective's
 * "Collective name", "Seq", "Process Group Name", ...) or self-describing
 * ones of ours where Kineto has none (chrome_gpu.c; a step's "samples", a
 * send's "peer"), so that an import gets every field back.
 *
 * A job (several traces, one per rank) goes to one file through the same
 * writer: see chrome_job_writer_new() below.
 *
 * Invariants: ts and dur are microseconds with three decimals (nanosecond
 * precision), ts relative to the trace's start_ns (otherData.start_ns), so the
 * numbers stay small and exact; pid and tid are numbers; every string goes
 * through the JSON writer's escaping, so the output is valid UTF-8 whatever
 * bytes names hold. Memory does not depend on the number of events: flow ends
 * are written as met, never paired in memory.
 */
#ifndef GPDL_FORMATS_CHROME_WRITER_H
#define GPDL_FORMATS_CHROME_WRITER_H

#include "formats/export_writer.h"

#include <stddef.h>
#include <stdio.h>

/* A chrome writer on out, which stays the caller's to flush and close.
 * Write errors are sticky and make the callbacks return -1. */
struct export_writer *chrome_writer_new(FILE *out);

/* ---- a job: several traces (a rank each) in one file ---------------------
 *
 * One Perfetto process per part (a rank, or what runs beside the ranks: a
 * launcher), named by the caller ("rank 1 (pid 4242, host a)") and sorted
 * by sort_index: every host thread of the part's processes is a thread of
 * it (a thread of another process than the part's root is named with that
 * pid: "MainThread (pid 4300)"), and so is each of its GPU streams ("GPU 0
 * stream 7"). Times are on the job's clock: each part's trace time plus its
 * shift_ns, ts 0 at base_ns. Every part streams through the writer in turn:
 *
 *   w = chrome_job_writer_new(out, &opts);
 *   for each part: chrome_job_part(w, &part);
 *                  export_writer_run_part(w, reader_of_its_file, &its_filter);
 *   chrome_job_flow(w, ...)...     (the flows joining collective calls)
 *   chrome_job_finish(w);  export_writer_destroy(w);
 *
 * What comes out differs from one trace's export thus: no distributedInfo
 * and no deviceProperties (the ranks' are each their own), ac2g flow ids
 * made unique per part (the correlation id + part index << 40), and
 * otherData.job lists the parts. Communication calls are handed to
 * opts.comm as they are written, for the caller to match across ranks. */

struct chrome_part {
	const char *name;     /* process_name */
	uint32_t pid;         /* its root process in the trace */
	uint32_t out_pid;     /* its pid in the output, unique in the job */
	uint32_t sort_index;  /* process_sort_index */
	int32_t rank;         /* -1: none */
	const char *file;     /* the trace it comes from, for otherData */
	int64_t shift_ns;     /* job time = trace time + shift_ns */
};

/* A communication call as written: a Communication event, or a host range
 * named BACKEND:OP; on the job clock. Valid during the callback. */
struct chrome_comm {
	uint32_t part;        /* 0, 1, ...: the order of chrome_job_part() calls */
	uint64_t pid, tid;    /* where it was written */
	uint32_t thread;      /* the trace's thread index */
	int on_stream;
	uint64_t start_ns, dur_ns;
	const char *name;
	const struct trace_event_ext *x; /* NULL: no details */
	const char *pg;       /* x's process group, "" unknown */
};

struct chrome_job_opts {
	uint64_t base_ns;        /* the job time of ts 0 */
	int64_t wall_offset_ns;  /* job time + this = Unix time */
	const char *clock;       /* how the clocks were aligned, for otherData */
	void (*comm)(void *ctx, const struct chrome_comm *c); /* NULL: none */
	/* called once a part, at its first GPU work (a kernel, copy, set or
	 * communication on a GPU stream); NULL: not asked */
	void (*gpu)(void *ctx, uint32_t part);
	void *ctx;
};

struct export_writer *chrome_job_writer_new(FILE *out, const struct chrome_job_opts *o);
/* The next part: what export_writer_run_part() passes through comes under
 * it. p's strings are copied. */
void chrome_job_part(struct export_writer *w, const struct chrome_part *p);

/* One end of a flow joining a collective call across parts: ph 's' on the
 * first call (in time), 't' on the next ones, 'f' on the last; all of one
 * id, bound to the call at its start ("bp": "e"). ts_ns is job time. */
struct chrome_flow_end {
	uint64_t id;
	char ph;
	uint64_t pid, tid;
	uint64_t ts_ns;
};
int chrome_job_flow(struct export_writer *w, const struct chrome_flow_end *f);
/* Closes traceEvents and writes the rest; 0, or -1 when a write failed. */
int chrome_job_finish(struct export_writer *w);

/* Whether input shapes (trace 1.2) are in torch's canonical form, nested
 * lists of integers with items separated by ", " ("[[32, 64], [64], []]"):
 * those are exported as Kineto's "Input Dims" array, which an import turns
 * back into the same bytes; others as the string. */
int chrome_dims_canonical(const char *s, size_t len);

#endif
