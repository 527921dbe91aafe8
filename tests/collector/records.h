/*
 * records.h - the collector tests' view of a ring: every slot drained with
 * ring_read into a list of records, and the string ids they defined.
 */
#ifndef GPDL_TESTS_COLLECTOR_RECORDS_H
#define GPDL_TESTS_COLLECTOR_RECORDS_H

#include "lib/ring/ring.h"

#include <stddef.h>
#include <stdint.h>

#define VIEW_MAX_RECS 65536u
#define VIEW_MAX_STRINGS 65536u

struct view_slot {
	uint32_t index;
	size_t n;
	const struct ring_rec **r; /* records in ring order */
	unsigned char *data;
	size_t len;
};

struct view {
	uint32_t nslots;
	struct view_slot *slot;
	const char **str; /* by id, NULL: not defined */
};

/* A shared anonymous mapping with a fresh ring of nslots of ring_bytes each. */
struct ring_shm *test_ring_new(uint32_t nslots, uint64_t ring_bytes, size_t *len);
void test_ring_free(struct ring_shm *shm, size_t len);

/* Drains every slot of shm (consuming what is pending). */
void view_load(struct view *v, struct ring_shm *shm);
void view_free(struct view *v);
/* The text of string id, or NULL. */
const char *view_str(const struct view *v, uint32_t id);
/* The nth (0-based) record of kind in s, or NULL. */
const void *view_find(const struct view_slot *s, uint16_t kind, size_t nth);
size_t view_count(const struct view_slot *s, uint16_t kind);
/* The slot holding THREAD_START for (pid, tid), or NULL. */
const struct view_slot *view_thread(const struct view *v, uint32_t pid, uint32_t tid);
/* 0 when every string id a record of s names was defined by a STRING record
 * earlier in s or in another slot (ids_elsewhere), else the offending id. */
uint32_t view_check_defined_before_use(const struct view *v, const struct view_slot *s, int ids_elsewhere);

/* main() of a collector test built without NVTX headers: reports the skip
 * through cmocka and returns ctest's skip status, 77. */
int records_skip_without_nvtx(void);

#endif
