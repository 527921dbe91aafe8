/*
 * hmap.h - an open-addressing hash map from a 128-bit key (two u64) to a u64,
 * for the launcher's and the analysis's interning tables.
 *
 * Linear probing at most half full; deletion shifts the following entries back,
 * so there are no tombstones and lookups stay short. Keys are any value; the
 * map keeps a separate used flag. Not thread-safe.
 */
#ifndef GPDL_COMMON_HMAP_H
#define GPDL_COMMON_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap_entry {
	uint64_t k1, k2, value;
	uint64_t used;
};

struct hmap {
	struct hmap_entry *e;
	size_t cap; /* a power of two, or 0 */
	size_t len;
};

void hmap_init(struct hmap *m);
void hmap_free(struct hmap *m);
/* Pointer to the value, or NULL when absent. Valid until the next insert. */
uint64_t *hmap_get(const struct hmap *m, uint64_t k1, uint64_t k2);
/* Inserts or overwrites. */
void hmap_put(struct hmap *m, uint64_t k1, uint64_t k2, uint64_t value);
/* 1 when the key was there. */
int hmap_del(struct hmap *m, uint64_t k1, uint64_t k2);

/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->e[i].used) ... */

#endif
