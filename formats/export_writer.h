/*
 * export_writer.h - the one interface of the trace exporters (chrome JSON, and
 * CSV after it), uftrace's dump-ops shape: a table of callbacks embedded as the
 * first member of each writer's own struct, which the writer's callbacks get
 * back with export_writer_container().
 *
 * export_writer_run() drives any writer through one read of a trace, in file
 * order, without keeping events: an exporter streams, so its memory does not
 * grow with the trace. The order of calls is
 *
 *   begin (once, the header decoded)
 *   process | thread | event | counter | drops   (as the reader decodes them)
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

struct export_writer {
	const char *name; /* "chrome", "csv": for messages */
	int (*begin)(struct export_writer *w, struct trace_reader *r,
		     const struct trace_header *h);
	int (*process)(struct export_writer *w, const struct trace_process *p);
	int (*thread)(struct export_writer *w, const struct trace_thread *t);
	int (*event)(struct export_writer *w, const struct trace_event *e);
	int (*counter)(struct export_writer *w, const struct trace_counter *c);
	int (*drops)(struct export_writer *w, uint32_t thread, uint64_t dropped);
	int (*end)(struct export_writer *w);
	/* Frees the writer; does not close the stream it was given. */
	void (*destroy)(struct export_writer *w);

	/* Set by export_writer_run(), for the callbacks. */
	struct trace_reader *reader;
	uint64_t events, counters; /* how many were passed on */
};

#define export_writer_container(w, type) ((type *)(void *)((char *)(w) - offsetof(type, ops)))

/* Reads r to its end (or its damage) through w. Returns 0, or the first
 * non-zero result of a callback. */
int export_writer_run(struct export_writer *w, struct trace_reader *r);

static inline void export_writer_destroy(struct export_writer *w)
{
	if (w && w->destroy)
		w->destroy(w);
}

#endif
