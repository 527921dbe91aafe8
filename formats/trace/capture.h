/*
 * capture.h - which window a trace recorded in full detail, read back from
 * the collector's marks (lib/collector/window.c): a gprof-dl domain mark
 * "window: SPEC" at the start of each process that had --schedule or
 * --capture-range, "ProfilerCycle#N" or "Capture#N" where the window opened
 * and "window off" where it closed. Traces recorded without those options,
 * or before them, have none: then there is nothing to say.
 *
 * Fed one event at a time, from a trace reader (gprof-dl info: one pass,
 * memory growing with the window's changes and the steps, not the events)
 * or from a loaded store (summary: analysis.h's capture_from_store()). Both see the same marks.
 */
#ifndef GPDL_FORMATS_TRACE_CAPTURE_H
#define GPDL_FORMATS_TRACE_CAPTURE_H

#include "formats/trace/trace.h"

#include <stddef.h>
#include <stdint.h>


struct capture_mark {
	uint64_t ts;
	uint32_t pid;
	int open;       /* 1: opened (cycle or capture number in n), 0: closed */
	uint32_t n;
};

struct capture_step {
	uint64_t start, end;
	int64_t num; /* from its name ("ProfileStep#12"), else its order */
};

struct capture_span {
	uint64_t start, end; /* end UINT64_MAX: open until the trace's end */
	uint32_t n;          /* the cycle's (schedule) or the capture's number */
};

struct capture {
	char spec[512];  /* the "window: " mark's rest; "" none seen */
	uint64_t spec_ts;
	uint32_t spec_pid;
	struct capture_mark *marks;
	size_t nmarks, marks_cap;
	struct capture_step *steps;
	size_t nsteps, steps_cap;
	/* after capture_finish(): the spans the window was open, in time order */
	struct capture_span *spans;
	size_t nspans;
};

void capture_init(struct capture *c);
void capture_free(struct capture *c);
/* One event: its name and type, flags (enum trace_event_flag), times and
 * process; gpdl: whether its domain is gprof-dl's (-1: not known, as in a
 * store, which keeps no domains). */
void capture_event(struct capture *c, const char *name, unsigned type, unsigned flags, uint64_t start,
		   uint64_t dur, uint32_t pid, int gpdl);
/* Whether a mark's name is one of the window's marks above: the views that
 * list marks leave those out, as the collector's own. */
int capture_is_mark_name(const char *name);
/* The same from a reader's event. */
void capture_reader_event(struct capture *c, const struct trace_reader *r, const struct trace_event *e);
/* Pairs the marks of the process that said the window into spans. */
void capture_finish(struct capture *c);
/* "steps 4-6, 10-12 (schedule wait=2,...)", "between cudaProfilerStart and
 * cudaProfilerStop (1 range, 0.004 s)", "inside NVTX 'train' (...)", into
 * buf, terminal-safe; 0 when the trace says no window (buf ""). */
int capture_describe(const struct capture *c, char *buf, size_t len);
/* The span of cycle (schedule) or capture range n (0-based): 0, or -1 when
 * the trace has none such. */
int capture_span_of(const struct capture *c, uint32_t n, uint64_t *start, uint64_t *end);

/* Every event of the trace at path through capture_reader_event(), then
 * capture_finish(): 0, or -1 with a one-line message in err. */
int capture_read(struct capture *c, const char *path, char *err, size_t errlen);
/* --cycle N of summary and export: the span of cycle (or capture range) n
 * of the trace at path, read once; 0, or -1 with a one-line message
 * ("'PATH': ...") in err. */
int capture_cycle_window(const char *path, uint32_t n, uint64_t *from, uint64_t *to, char *err,
			 size_t errlen);
/* "N" as a cycle number of --cycle (digits only); -1 when it is not one. */
long capture_parse_cycle(const char *s);
/* Why cycle (or capture range) n is not in c, the trace at path, into err:
 * "'PATH': ...". */
void capture_no_cycle(const struct capture *c, const char *path, uint32_t n, char *err,
		      size_t errlen);

#endif
