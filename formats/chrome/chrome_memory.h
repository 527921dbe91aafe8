/*
 * chrome_memory.h - the chrome export's memory counter tracks: bytes in use
 * per device, from the trace's Memory events (chrome_memory.c).
 */
#ifndef GPDL_FORMATS_CHROME_MEMORY_H
#define GPDL_FORMATS_CHROME_MEMORY_H

struct chrome_writer;
struct trace_thread;
struct trace_event;

/* After a Memory event's "[memory]" instant: a "ph": "C" counter event of
 * the bytes in use on its device after it, when the event says (its total
 * allocated, or a free to nothing). */
void chrome_memory_counter(struct chrome_writer *c, const struct trace_thread *t,
			   const struct trace_event *e);

#endif
