/*
 * chrome_internal.h - what the parts of the chrome exporter share:
 * chrome_writer.c (the dispatch: framing, host events, counters, metadata,
 * otherData), chrome_gpu.c (GPU tracks, kernel, copy and collective args,
 * flows, memory instants, deviceProperties, distributedInfo), which speaks
 * the PyTorch profiler's (Kineto's) field names so that tools built for its
 * traces read ours, chrome_job.c (a job's parts in one file: their
 * processes, clocks and the flows that join their collective calls),
 * chrome_memory.c (the memory counters), and below them all chrome_items.c
 * (an item's line, a metadata event, a wall time), which every part calls.
 *
 * Where an event goes: one trace keeps its pids and tids (a GPU stream at
 * pid = device, tid = stream, as the PyTorch profiler puts it); in a job,
 * every track of a part is a thread of the part's one process (a stream at
 * a tid of its own, above any Linux tid), so that ranks never share a pid.
 * chrome_pid() and chrome_tid() say which, for every writer of events.
 */
#ifndef GPDL_FORMATS_CHROME_INTERNAL_H
#define GPDL_FORMATS_CHROME_INTERNAL_H

#include "formats/chrome/chrome_writer.h"
#include "formats/json/json_writer.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct chrome_writer {
	struct export_writer ops; /* first: export_writer_container() */
	struct json_writer json;
	FILE *out;
	struct trace_reader *reader;
	const struct trace_header *header;
	uint64_t base_ns;      /* ts 0 */
	uint32_t root_pid;     /* where system-wide counters go */
	uint64_t items;        /* values in traceEvents so far */
	uint64_t *drops;       /* per thread index; grows with threads, not events */
	uint32_t ndrops;
	/* per desc id of the trace being read: a plain event's bytes before
	 * its ts and after its tid (chrome_writer.c); grows with descs */
	struct export_desc_cache cache; /* per desc: the head and tail of its plain events */
	uint64_t flows;        /* ac2g flow events written */
	int64_t shift_ns;      /* added to a trace time before base_ns is taken off */
	struct chrome_job *job; /* NULL: one trace (chrome_writer_new) */
	uint64_t job_pid;      /* a job: the current part's pid in the output */
	uint64_t flow_base;    /* a job: added to a correlation id for an ac2g id */
	uint64_t steps;        /* steps renamed so far: the N of an unnumbered one */
};

/* The JSON writer's own buffer: big blocks to the stream, which the export
 * buffers again (cmd/export.c). */
#define CHROME_BUFFER (256u << 10)

/* A stream's tid in a job: its thread index above any Linux tid (at most
 * 2^22), so that it shares its part's process with the host threads. */
#define CHROME_JOB_STREAM_TID UINT64_C(0x40000000)

/* chrome_items.c: starts the next element of traceEvents on its own line. */
void chrome_next_item(struct chrome_writer *c);
/* A metadata event ("ph": "M") up to its args object, which the caller
 * fills; and its end. */
void chrome_meta_begin(struct chrome_writer *c, const char *name, uint64_t pid, uint64_t tid);
void chrome_meta_end(struct chrome_writer *c);
/* key: a Unix time in ns as "2023-11-14T22:13:20.000000000Z". */
void chrome_key_wall_time(struct json_writer *j, const char *key, int64_t wall_ns);

/* Bytes outside the JSON grammar: the file's framing. */
static inline void chrome_raw(struct chrome_writer *c, const char *s)
{
	json_raw(&c->json, s, strlen(s));
}

/* Keys are literals of plain ASCII: written without the escaping scan. */
static inline void chrome_key(struct json_writer *j, const char *k)
{
	json_key_plain(j, k, strlen(k));
}

static inline void chrome_key_string(struct json_writer *j, const char *k, const char *v)
{
	chrome_key(j, k);
	json_string(j, v);
}

static inline void chrome_key_uint(struct json_writer *j, const char *k, uint64_t v)
{
	chrome_key(j, k);
	json_uint(j, v);
}

static inline void chrome_key_int(struct json_writer *j, const char *k, int64_t v)
{
	chrome_key(j, k);
	json_int(j, v);
}

/* Microseconds, three decimals: exact for any span under about 104 days.
 * Below 2^50 ns (13 days) the double's two roundings are off by under a
 * quarter of a nanosecond, so the integer digits are the same bytes. */
static inline void chrome_us(struct json_writer *j, int64_t ns)
{
	if (ns > -(INT64_C(1) << 50) && ns < (INT64_C(1) << 50))
		json_decimal(j, ns, 3);
	else
		json_fixed(j, (double)ns / 1000.0, 3);
}

static inline void chrome_key_us(struct json_writer *j, const char *k, int64_t ns)
{
	chrome_key(j, k);
	chrome_us(j, ns);
}

static inline int64_t chrome_rel_ns(const struct chrome_writer *c, uint64_t ns)
{
	return (int64_t)(ns + (uint64_t)c->shift_ns - c->base_ns);
}

/* ---- chrome_job.c -------------------------------------------------------- */

/* The pid and tid a track's events are written at (see above): per event,
 * so inline. */
static inline uint64_t chrome_pid(const struct chrome_writer *c, const struct trace_thread *t)
{
	if (c->job)
		return c->job_pid;
	return t->kind == TRACE_TRACK_STREAM ? t->device : t->pid;
}

static inline uint64_t chrome_tid(const struct chrome_writer *c, const struct trace_thread *t)
{
	if (t->kind != TRACE_TRACK_STREAM)
		return t->tid;
	return c->job ? CHROME_JOB_STREAM_TID + t->index : t->stream;
}

/* The id of an ac2g flow: the correlation id, made unique per part in a job. */
static inline uint64_t chrome_flow_id(const struct chrome_writer *c, uint64_t correlation)
{
	return correlation + c->flow_base;
}
/* A counter's pid, and the suffix its name takes in a job when it is not
 * the part's root process's (" (pid 4300)"; "" otherwise). */
uint64_t chrome_counter_pid(const struct chrome_writer *c, uint32_t pid, char *suffix,
			    size_t size);

/* A job's begin and end of each part, for chrome_begin and chrome_end. */
int chrome_job_begin(struct chrome_writer *c, struct trace_reader *r,
		     const struct trace_header *h);
int chrome_job_end(struct chrome_writer *c);
/* After an event is written: a communication call goes to the job's
 * callback. */
void chrome_job_event(struct chrome_writer *c, const struct trace_desc *d,
		      const struct trace_thread *t, const struct trace_event *e);
void chrome_job_destroy(struct chrome_writer *c);

/* ---- chrome_gpu.c -------------------------------------------------------- */

/* The PyTorch profiler's category of an event of this type on this track:
 * cpu_op, user_annotation, python_function, cuda_runtime, kernel,
 * gpu_memcpy, gpu_memset, gpu_user_annotation. */
const char *chrome_category(unsigned type, int on_stream);

/* A Memcpy or Memset with details is named as the PyTorch profiler names it
 * ("Memcpy HtoD (Pageable -> Device)"): into buf, returning buf; otherwise
 * the recorded name is returned. */
const char *chrome_gpu_name(const struct trace_desc *d, const struct trace_event *e,
			    const char *recorded, char *buf, size_t size);

/* The args an event's details and GPU track add, inside its args object. */
void chrome_gpu_args(struct chrome_writer *c, const struct trace_desc *d,
		     const struct trace_thread *t, const struct trace_event *e);

/* Whether details describe a collective call (trace 1.3), and its args in
 * Kineto's names: "Collective name", "dtype", "In msg nelems", "Group
 * size", "Process Group Name", "Seq"; and ours, "peer". */
int chrome_has_comm(const struct trace_event_ext *x);
void chrome_comm_args(struct chrome_writer *c, const struct trace_desc *d,
		      const struct trace_event_ext *x);

/* A Memory event as the PyTorch profiler's "[memory]" instant. */
void chrome_memory_event(struct chrome_writer *c, const struct trace_desc *d,
			 const struct trace_thread *t, const struct trace_event *e);

/* The ac2g flow arrow's end that this event carries, if any: its start on a
 * host call with a correlation id, its finish on GPU work with one. */
void chrome_flow(struct chrome_writer *c, const struct trace_thread *t, const struct trace_event *e);

/* Before traceEvents: "distributedInfo" when the trace is a rank's. */
void chrome_write_distributed(struct chrome_writer *c);
/* Process and thread metadata of the GPU tracks: one process per device
 * (pid = device id), one thread per stream (tid = stream id). */
void chrome_write_gpu_tracks(struct chrome_writer *c);
/* After traceEvents: "deviceProperties" when the trace has devices. */
void chrome_write_devices(struct chrome_writer *c);

#endif
