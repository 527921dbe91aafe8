/*
 * import_tables.c - the importer's interning tables (see import_tables.h).
 */
#include "formats/import/import_tables.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* ---- strings ------------------------------------------------------------ */

/* Eight bytes a step: a name is hashed once per event, so this is on the
 * import's hot path. */
static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	uint64_t w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0x94D049BB133111EBull;
	return h ^ (h >> 32);
}

void istrings_init(struct istrings *t)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->map);
	t->cap_ids = 256;
	t->off = xmalloc(t->cap_ids * sizeof(*t->off));
	t->cap = 4096;
	t->arena = xmalloc(t->cap);
	t->arena[0] = '\0'; /* id 0: "" */
	t->off[0] = 0;
	t->len = 1;
}

void istrings_free(struct istrings *t)
{
	hmap_free(&t->map);
	free(t->arena);
	free(t->off);
	memset(t, 0, sizeof(*t));
}

uint32_t istrings_intern(struct istrings *t, const char *s, size_t len)
{
	uint64_t h = hash_bytes(s, len);

	/* equal hashes of different strings take the next probe number */
	uint64_t probe = 0;
	for (uint64_t *v; (v = hmap_get(&t->map, h, len | probe << 32)) != NULL; probe++)
		if (memcmp(t->arena + t->off[(uint32_t)*v], s, len) == 0)
			return (uint32_t)*v;
	if (t->len + len + 1 > t->cap) {
		while (t->len + len + 1 > t->cap)
			t->cap *= 2;
		t->arena = xrealloc(t->arena, t->cap);
	}
	if (t->n + 2 > t->cap_ids) {
		t->cap_ids *= 2;
		t->off = xrealloc(t->off, t->cap_ids * sizeof(*t->off));
	}
	uint32_t id = ++t->n;
	t->off[id] = t->len;
	memcpy(t->arena + t->len, s, len);
	t->arena[t->len + len] = '\0';
	t->len += len + 1;
	hmap_put(&t->map, h, len | probe << 32, id);
	return id;
}

const char *istrings_get(const struct istrings *t, uint32_t id)
{
	return id && id <= t->n ? t->arena + t->off[id] : "";
}

size_t istrings_len(const struct istrings *t, uint32_t id)
{
	if (!id || id > t->n)
		return 0;
	size_t end = id < t->n ? t->off[id + 1] : t->len;
	return end - t->off[id] - 1;
}

/* ---- descs -------------------------------------------------------------- */

void idescs_init(struct idescs *t)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->map);
}

void idescs_free(struct idescs *t)
{
	hmap_free(&t->map);
	free(t->d);
	memset(t, 0, sizeof(*t));
}

uint32_t idescs_intern(struct idescs *t, uint32_t name_str, uint32_t domain_str,
		       uint32_t category, uint8_t type)
{
	uint64_t k1 = (uint64_t)name_str << 32 | domain_str;
	uint64_t k2 = (uint64_t)category << 8 | type;
	uint64_t *v = hmap_get(&t->map, k1, k2);

	if (v)
		return (uint32_t)*v;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->d = xrealloc(t->d, t->cap * sizeof(*t->d));
	}
	t->d[t->n] = (struct idesc){ name_str, domain_str, category, type };
	hmap_put(&t->map, k1, k2, ++t->n);
	return t->n;
}

/* ---- tracks ------------------------------------------------------------- */

void itracks_init(struct itracks *t)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->map);
}

void itracks_free(struct itracks *t)
{
	hmap_free(&t->map);
	free(t->t);
	memset(t, 0, sizeof(*t));
}

uint32_t itracks_find(const struct itracks *t, uint8_t kind, uint32_t pid, uint32_t tid)
{
	uint64_t *v = hmap_get(&t->map, (uint64_t)kind << 32 | pid, tid);
	return v ? (uint32_t)*v + 1 : 0;
}

uint32_t itracks_get(struct itracks *t, uint8_t kind, uint32_t pid, uint32_t tid)
{
	uint32_t found = itracks_find(t, kind, pid, tid);

	if (found)
		return found - 1;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->t = xrealloc(t->t, t->cap * sizeof(*t->t));
	}
	struct itrack *k = &t->t[t->n];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->pid = pid;
	k->tid = tid;
	k->device = pid;
	k->stream = tid;
	hmap_put(&t->map, (uint64_t)kind << 32 | pid, tid, t->n);
	return t->n++;
}
