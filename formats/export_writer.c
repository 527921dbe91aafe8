/*
 * export_writer.c - drives an export_writer through one read of a trace.
 *
 * The reader's visitor is adapted to the writer's callbacks here, once, so
 * that each exporter only says what it writes, never how the trace is read.
 */
#include "formats/export_writer.h"

struct run {
	struct export_writer *w;
	struct trace_reader *r;
	int begun;
};

/* begin comes first and once, whatever order the reader's callbacks take:
 * with the header it hands over, or else with trace_reader_header(). */
static int begin_once(struct run *run, const struct trace_header *h)
{
	if (run->begun)
		return 0;
	run->begun = 1;
	static const struct trace_header none = {.rank = -1};
	if (!h)
		h = trace_reader_header(run->r);
	if (!h)
		h = &none; /* writers may count on a header; its strings are NULL */
	return run->w->begin ? run->w->begin(run->w, run->r, h) : 0;
}

#define BEGIN_ONCE(run)                                      \
	do {                                                 \
		int rc_ = begin_once(run, NULL);             \
		if (rc_)                                     \
			return rc_;                          \
	} while (0)

static int on_header(void *ctx, const struct trace_header *h)
{
	return begin_once(ctx, h);
}

static int on_process(void *ctx, const struct trace_process *p)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	BEGIN_ONCE(ctx);
	return w->process ? w->process(w, p) : 0;
}

static int on_thread(void *ctx, const struct trace_thread *t)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	BEGIN_ONCE(ctx);
	return w->thread ? w->thread(w, t) : 0;
}

static int on_event(void *ctx, const struct trace_event *e)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	BEGIN_ONCE(ctx);
	w->events++;
	return w->event ? w->event(w, e) : 0;
}

static int on_counter(void *ctx, const struct trace_counter *c)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	BEGIN_ONCE(ctx);
	w->counters++;
	return w->counter ? w->counter(w, c) : 0;
}

static int on_drops(void *ctx, uint32_t thread, uint64_t dropped)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	BEGIN_ONCE(ctx);
	return w->drops ? w->drops(w, thread, dropped) : 0;
}

int export_writer_run(struct export_writer *w, struct trace_reader *r)
{
	static const struct trace_visitor visitor = {
		.header = on_header,
		.process = on_process,
		.thread = on_thread,
		.event = on_event,
		.counter = on_counter,
		.drops = on_drops,
	};
	struct run run = {.w = w, .r = r};
	w->reader = r;
	w->events = w->counters = 0;
	int rc = trace_reader_run(r, &visitor, &run);
	if (rc)
		return rc;
	if ((rc = begin_once(&run, NULL)) != 0) /* an empty trace */
		return rc;
	return w->end ? w->end(w) : 0;
}
