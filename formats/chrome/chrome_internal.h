/*
 * chrome_internal.h - what the two halves of the chrome exporter share:
 * chrome_writer.c (framing, host events, counters, metadata, otherData) and
 * chrome_gpu.c (GPU tracks, kernel and copy args, flows, memory instants,
 * deviceProperties, distributedInfo), which speaks the PyTorch profiler's
 * (Kineto's) field names so that tools built for its traces read ours.
 */
#ifndef GPDL_FORMATS_CHROME_INTERNAL_H
#define GPDL_FORMATS_CHROME_INTERNAL_H

#include "formats/chrome/chrome_writer.h"
#include "formats/json/json_writer.h"

#include <stdint.h>
#include <stdio.h>

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
	uint64_t flows;        /* ac2g flow events written */
};

/* Starts the next element of traceEvents on its own line. */
void chrome_next_item(struct chrome_writer *c);

static inline void chrome_key_string(struct json_writer *j, const char *k, const char *v)
{
	json_key(j, k);
	json_string(j, v);
}

static inline void chrome_key_uint(struct json_writer *j, const char *k, uint64_t v)
{
	json_key(j, k);
	json_uint(j, v);
}

static inline void chrome_key_int(struct json_writer *j, const char *k, int64_t v)
{
	json_key(j, k);
	json_int(j, v);
}

/* Microseconds, three decimals: exact for any span under about 104 days. */
static inline void chrome_key_us(struct json_writer *j, const char *k, int64_t ns)
{
	json_key(j, k);
	json_fixed(j, (double)ns / 1000.0, 3);
}

static inline int64_t chrome_rel_ns(const struct chrome_writer *c, uint64_t ns)
{
	return (int64_t)(ns - c->base_ns);
}

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
