/*
 * names.h - interned strings for the event store: every distinct event or
 * thread name is kept once, and events refer to it by a dense id.
 *
 * Invariants: ids are 0..count-1 in order of first appearance; a string's
 * pointer stays valid until names_free() (strings live in fixed blocks that
 * never move); equal byte strings get the same id.
 */
#ifndef GPDL_ANALYSIS_STORE_NAMES_H
#define GPDL_ANALYSIS_STORE_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct names {
	char **strs;        /* by id */
	uint32_t *hashes;   /* by id, to rehash without rereading the strings */
	uint32_t *lens;     /* by id */
	uint32_t count, cap;
	uint32_t *slots;    /* open addressing: id + 1, 0 empty */
	uint32_t nslots;    /* a power of two */
	char *block;        /* the block being filled */
	size_t block_used, block_size;
	char **blocks;
	size_t nblocks;
};

void names_init(struct names *n);
void names_free(struct names *n);
/* The id of the len bytes at s (which may hold NULs), added if new. */
uint32_t names_intern(struct names *n, const char *s, size_t len);
static inline const char *names_get(const struct names *n, uint32_t id)
{
	return id < n->count ? n->strs[id] : "";
}

#endif
