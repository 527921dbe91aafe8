/* names.c - the store's interned names: strings in fixed blocks, ids by first appearance. */
#include "lib/analysis/store/names.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

#define NAMES_BLOCK (64u * 1024)

static uint32_t names_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

void names_init(struct names *n)
{
	memset(n, 0, sizeof(*n));
}

void names_free(struct names *n)
{
	for (size_t i = 0; i < n->nblocks; i++)
		free(n->blocks[i]);
	free(n->blocks);
	free(n->strs);
	free(n->hashes);
	free(n->lens);
	free(n->slots);
	memset(n, 0, sizeof(*n));
}

static char *names_store(struct names *n, const char *s, size_t len)
{
	if (n->block_used + len + 1 > n->block_size) {
		size_t size = len + 1 > NAMES_BLOCK ? len + 1 : NAMES_BLOCK;
		n->blocks = xrealloc(n->blocks, (n->nblocks + 1) * sizeof(*n->blocks));
		n->block = n->blocks[n->nblocks++] = xmalloc(size);
		n->block_size = size;
		n->block_used = 0;
	}
	char *p = n->block + n->block_used;
	memcpy(p, s, len);
	p[len] = '\0';
	n->block_used += len + 1;
	return p;
}

static void names_rehash(struct names *n)
{
	uint32_t nslots = n->nslots ? n->nslots * 2 : 256;
	free(n->slots);
	n->slots = xcalloc(nslots, sizeof(*n->slots));
	n->nslots = nslots;
	for (uint32_t id = 0; id < n->count; id++) {
		uint32_t i = n->hashes[id] & (nslots - 1);
		while (n->slots[i])
			i = (i + 1) & (nslots - 1);
		n->slots[i] = id + 1;
	}
}

uint32_t names_intern(struct names *n, const char *s, size_t len)
{
	if ((uint64_t)(n->count + 1) * 2 > n->nslots)
		names_rehash(n);
	uint32_t h = names_hash(s, len);
	uint32_t i = h & (n->nslots - 1);
	for (; n->slots[i]; i = (i + 1) & (n->nslots - 1)) {
		uint32_t id = n->slots[i] - 1;
		if (n->hashes[id] == h && n->lens[id] == len && memcmp(n->strs[id], s, len) == 0)
			return id;
	}
	if (n->count == UINT32_MAX - 1 || len > UINT32_MAX)
		die("too many distinct names in the traces");
	if (n->count == n->cap) {
		n->cap = n->cap ? n->cap * 2 : 256;
		n->strs = xrealloc(n->strs, (size_t)n->cap * sizeof(*n->strs));
		n->hashes = xrealloc(n->hashes, (size_t)n->cap * sizeof(*n->hashes));
		n->lens = xrealloc(n->lens, (size_t)n->cap * sizeof(*n->lens));
	}
	uint32_t id = n->count++;
	n->strs[id] = names_store(n, s, len);
	n->hashes[id] = h;
	n->lens[id] = (uint32_t)len;
	n->slots[i] = id + 1;
	return id;
}
