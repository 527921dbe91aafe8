/*
 * import_spill.h - the importer's event spill: an unlinked temporary file the
 * parse appends events and counter samples to, read back once when the trace
 * is written.
 *
 * Why: the trace's header (its start, its pid, the run's rank) is known only
 * at the end of a JSON file (gprof-dl's own export puts it in otherData,
 * after the events; Kineto's on-demand traces put distributedInfo there), and
 * a trace writer must write its header before its first events chunk. Holding
 * the events in memory would make memory grow with the file; the spill keeps
 * it flat, at the cost of one sequential write and read of about 30 bytes per
 * event (more with details) in $TMPDIR.
 *
 * Records are in host byte order (the file never outlives the process): a
 * kind byte, then an event (start, dur, desc, track, flags, and the non-zero
 * fields of its details, announced by a mask) or a counter sample. An
 * event's shapes_str, pg_str and dtype_str are import string ids (istrings),
 * made a trace's at emit time.
 */
#ifndef GPDL_FORMATS_IMPORT_SPILL_H
#define GPDL_FORMATS_IMPORT_SPILL_H

#include "formats/trace/trace.h"

#include <stddef.h>
#include <stdint.h>

/* Event flags that live only in the spill (above the trace's 8 bits). */
#define SPILL_EVF_PADDLE_REL (1u << 8) /* start is relative to Paddle's base (import.h) */
#define SPILL_EVF_COMM (1u << 9)       /* a Communication event of import.cevs, in order */

struct spill_event {
	int64_t start, dur; /* ns, in the file's time (before the final shift) */
	uint32_t desc, track;
	uint32_t flags;     /* enum trace_event_flag | SPILL_EVF_* */
	int has_ext;
	struct trace_event_ext ext;
};

struct spill_counter {
	int64_t ts;
	uint32_t id, pid;
	double value;
};

struct spill {
	int fd;
	unsigned char *buf;
	size_t len, pos; /* writing: bytes in buf; reading: bytes valid and next */
	uint64_t bytes;  /* written in all */
	int err;         /* errno of the first failure, sticky */
	int reading;     /* rewound: no more writing (it may be read again) */
};

/* Opens an unlinked temporary file in dir: 0, or -1 with errno. */
int spill_open(struct spill *s, const char *dir);
int spill_put_event(struct spill *s, const struct spill_event *e);
int spill_put_counter(struct spill *s, const struct spill_counter *c);
/* Flushes and rewinds for reading, the first time; rewinds again after: 0,
 * or -1 with errno. */
int spill_rewind(struct spill *s);
/* Next record: 'E' (into *e) or 'C' (into *c), 0 at the end, -1 on error. */
int spill_next(struct spill *s, struct spill_event *e, struct spill_counter *c);
void spill_close(struct spill *s);

/* $TMPDIR, or /tmp. */
const char *import_tmpdir(void);

#endif
