/*
 * store.h - the event store: every event of one or more traces in compact
 * per-track arrays, sorted and nested, for the views to aggregate.
 *
 * A track is one timeline: for now a host thread of one file (file, thread
 * index); device streams become tracks of kind STORE_TRACK_DEVICE later. A
 * track keeps its events as parallel arrays (8 + 8 + 4 + 4 bytes an event),
 * so a view that reads starts only touches starts, and a column (a
 * correlation id, say) can be added without touching the others.
 *
 * Invariants after store_finish():
 *  - a track's events are sorted by start, ties longer first, then file
 *    order: a parent always precedes what it contains;
 *  - parent[i] is the index, in the same track, of the innermost range that
 *    contains event i in time (STORE_NONE at top level). Nesting comes from
 *    the times alone, so traces without collector depth nest too. Marks are
 *    never parents;
 *  - every time of every file is on one clock: the shared CLOCK_MONOTONIC
 *    when all files come from one host, Unix wall time otherwise
 *    (store->wall_clock);
 *  - start + dur never overflows.
 */
#ifndef GPDL_ANALYSIS_STORE_H
#define GPDL_ANALYSIS_STORE_H

#include "formats/trace/trace.h"
#include "lib/analysis/names.h"

#include <stddef.h>
#include <stdint.h>

#define STORE_NONE UINT32_MAX
#define STORE_MAX_TRACK_EVENTS (UINT32_MAX - 1u)
#define STORE_MAX_DESCS (1u << 24)

enum store_track_kind {
	STORE_TRACK_HOST = 0,
	STORE_TRACK_DEVICE = 1,
};

/* What an event is, across files: interned name and type. */
struct store_desc {
	uint32_t name; /* in store->names */
	uint8_t type;  /* enum trace_event_type */
};

struct store_track {
	enum store_track_kind kind;
	uint32_t file;   /* index in store->files */
	uint32_t thread; /* host: the thread's index in its file */
	uint32_t pid, tid;
	uint32_t name;   /* the thread's name in store->names; "" when unnamed */
	uint64_t dropped;
	size_t n, cap;
	uint64_t *start;
	uint64_t *dur;
	uint32_t *desc;   /* desc id << 8 | enum trace_event_flag bits */
	uint32_t *parent; /* filled by store_finish() */
};

struct store_file {
	char *path;
	char *hostname, *cmdline;
	uint32_t pid;
	int32_t rank;
	uint32_t ncpus;
	int64_t wall_offset_ns;
	int64_t shift_ns;  /* added to the file's times to put them on the store's clock */
	uint64_t start_ns, end_ns; /* the run: the header's span widened to its events */
	uint64_t size;     /* bytes */
	uint64_t events, marks, open_at_exit, unbalanced_pops;
	uint64_t dropped;  /* the reader's total, or the sum of drop records if larger */
	char *damage;      /* NULL: read to its END chunk */
	uint64_t damage_offset;
};

struct store_counter {
	uint64_t ts_ns;
	uint32_t file;
	uint32_t id;  /* enum trace_counter_id */
	uint32_t pid; /* 0: system-wide */
	double value;
};

struct store {
	struct names names;
	struct store_desc *descs;
	uint32_t ndescs, descs_cap;
	uint32_t *desc_slots; /* (name, type) -> desc id + 1 */
	uint32_t desc_nslots;
	struct store_track *tracks;
	uint32_t ntracks, tracks_cap;
	struct store_file *files;
	uint32_t nfiles;
	struct store_counter *counters;
	size_t ncounters, counters_cap;
	int wall_clock;
	int finished;
};

static inline uint32_t store_ev_desc(const struct store_track *t, size_t i)
{
	return t->desc[i] >> 8;
}
static inline unsigned store_ev_flags(const struct store_track *t, size_t i)
{
	return t->desc[i] & 0xffu;
}
static inline uint64_t store_ev_end(const struct store_track *t, size_t i)
{
	return t->start[i] + t->dur[i];
}
static inline unsigned store_ev_type(const struct store *s, const struct store_track *t, size_t i)
{
	return s->descs[store_ev_desc(t, i)].type;
}
static inline const char *store_name(const struct store *s, uint32_t id)
{
	return names_get(&s->names, id);
}
/* Marks and unbalanced pops: instants that take no time. */
static inline int store_ev_is_instant(const struct store_track *t, size_t i)
{
	return (store_ev_flags(t, i) & (TRACE_EVF_MARK | TRACE_EVF_UNBALANCED_POP)) != 0;
}

void store_init(struct store *s);
void store_free(struct store *s);

/* Reads one trace file into the store. Returns 0 (a damaged file too: see
 * store_file.damage), or -1 with a one-line message in err when the file
 * cannot be opened or is not a trace ("'PATH': ..."). */
int store_load(struct store *s, const char *path, char *err, size_t errlen);
/* Puts all files on one clock, sorts every track and nests its events. */
void store_finish(struct store *s);

/* Building blocks of store_load(), for tests and importers. */
uint32_t store_add_file(struct store *s, const char *path);
uint32_t store_desc_intern(struct store *s, const char *name, size_t len, unsigned type);
uint32_t store_add_track(struct store *s, enum store_track_kind kind, uint32_t file,
			 uint32_t thread);
void store_append(struct store *s, uint32_t track, uint64_t start, uint64_t dur, uint32_t desc,
		  unsigned flags);
void store_add_counter(struct store *s, const struct store_counter *c);

/* Sorting and nesting one track (store_sort.c). */
void store_sort_track(struct store_track *t);
void store_nest_track(struct store_track *t);

#endif
