/*
 * import_tables.h - what the importer keeps in memory while it parses: the
 * interned strings and descs, the tracks, and the names metadata gives to
 * processes and threads. Their size grows with the number of distinct names
 * and threads in the file, never with the number of events.
 *
 * Invariants: string ids are 1, 2, ... in order of first appearance (0 is
 * "none" and reads as ""); every stored string is NUL-terminated; desc ids
 * are 1, 2, ...; track indices are 0, 1, ... and stay valid for the import.
 */
#ifndef GPDL_FORMATS_IMPORT_TABLES_H
#define GPDL_FORMATS_IMPORT_TABLES_H

#include "formats/trace/trace.h"
#include "common/hmap.h"

#include <stddef.h>
#include <stdint.h>

struct istrings {
	struct hmap map; /* (hash, len | probe << 32) -> id */
	char *arena;
	size_t len, cap;
	size_t *off; /* off[id]: the string's offset in arena */
	uint32_t n, cap_ids;
};

void istrings_init(struct istrings *t);
void istrings_free(struct istrings *t);
/* The id of the string (interned on first sight), >= 1. */
uint32_t istrings_intern(struct istrings *t, const char *s, size_t len);
const char *istrings_get(const struct istrings *t, uint32_t id); /* "" for 0 */
size_t istrings_len(const struct istrings *t, uint32_t id);

struct idesc {
	uint32_t name_str, domain_str, category;
	uint8_t type;
};

struct idescs {
	struct hmap map; /* (name << 32 | domain, category << 8 | type) -> id */
	struct idesc *d; /* d[id - 1] */
	uint32_t n, cap;
};

void idescs_init(struct idescs *t);
void idescs_free(struct idescs *t);
uint32_t idescs_intern(struct idescs *t, uint32_t name_str, uint32_t domain_str,
		       uint32_t category, uint8_t type);

/* A track as the file names it: a host thread (pid, tid), or a GPU stream,
 * whose (pid, tid) in the file are (device, stream) in Kineto's and
 * Paddle's traces. Times are the file's, split into absolute and
 * Paddle-relative parts (import.h) until the base is known. */
struct itrack {
	uint8_t kind; /* enum trace_track_kind */
	uint32_t pid, tid;
	uint32_t device, context;
	uint64_t stream;
	int have_device; /* device/stream/context came from an event's args */
	uint64_t events;
	uint64_t drops;
	uint64_t fixes[TRACE_DROP_REASON_COUNT]; /* events dropped or repaired, by reason */
	int64_t min_abs, max_abs; /* start / end of events with absolute times */
	int64_t min_rel, max_rel; /* ... with Paddle-relative times */
	int have_abs, have_rel;
};

struct itracks {
	struct hmap map; /* (kind << 32 | pid, tid) -> index */
	struct itrack *t;
	uint32_t n, cap;
};

void itracks_init(struct itracks *t);
void itracks_free(struct itracks *t);
/* The track's index, created on first sight. */
uint32_t itracks_get(struct itracks *t, uint8_t kind, uint32_t pid, uint32_t tid);
/* Index + 1 of an existing track, 0 when there is none. */
uint32_t itracks_find(const struct itracks *t, uint8_t kind, uint32_t pid, uint32_t tid);

#endif
