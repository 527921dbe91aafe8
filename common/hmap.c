/* hmap.c - the open-addressing hash map of hmap.h: probing, growth, deletion by shifting back. */
#include "common/hmap.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t k1, uint64_t k2)
{
	uint64_t h = k1 * 0x9E3779B97F4A7C15ull ^ (k2 + 0x632BE59BD9B4E019ull + (k1 << 6) + (k1 >> 2));
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 29;
	return h;
}

void hmap_init(struct hmap *m)
{
	memset(m, 0, sizeof(*m));
}

void hmap_free(struct hmap *m)
{
	free(m->e);
	hmap_init(m);
}

static size_t slot_of(const struct hmap *m, uint64_t k1, uint64_t k2)
{
	size_t mask = m->cap - 1, i = (size_t)mix(k1, k2) & mask;
	while (m->e[i].used && !(m->e[i].k1 == k1 && m->e[i].k2 == k2))
		i = (i + 1) & mask;
	return i;
}

uint64_t *hmap_get(const struct hmap *m, uint64_t k1, uint64_t k2)
{
	if (!m->cap)
		return NULL;
	size_t i = slot_of(m, k1, k2);
	return m->e[i].used ? &m->e[i].value : NULL;
}

static void grow(struct hmap *m)
{
	struct hmap old = *m;
	m->cap = old.cap ? old.cap * 2 : 64;
	m->e = xcalloc(m->cap, sizeof(*m->e));
	m->len = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.e[i].used)
			hmap_put(m, old.e[i].k1, old.e[i].k2, old.e[i].value);
	free(old.e);
}

void hmap_put(struct hmap *m, uint64_t k1, uint64_t k2, uint64_t value)
{
	if ((m->len + 1) * 2 > m->cap)
		grow(m);
	size_t i = slot_of(m, k1, k2);
	if (!m->e[i].used) {
		m->e[i].used = 1;
		m->e[i].k1 = k1;
		m->e[i].k2 = k2;
		m->len++;
	}
	m->e[i].value = value;
}

int hmap_del(struct hmap *m, uint64_t k1, uint64_t k2)
{
	if (!m->cap)
		return 0;
	size_t mask = m->cap - 1, i = slot_of(m, k1, k2);
	if (!m->e[i].used)
		return 0;
	m->e[i].used = 0;
	m->len--;
	/* Shift back every following entry whose home is not between the hole and it. */
	for (size_t j = (i + 1) & mask; m->e[j].used; j = (j + 1) & mask) {
		size_t home = (size_t)mix(m->e[j].k1, m->e[j].k2) & mask;
		int between = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (between)
			continue;
		m->e[i] = m->e[j];
		m->e[j].used = 0;
		i = j;
	}
	return 1;
}
