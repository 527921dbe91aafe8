/*
 * strings.c - names to string ids: the per-thread cache, wide-string
 * conversion, and the registry of registered strings and domains.
 *
 * String ids are global (one atomic counter in the ring header, taken a
 * block at a time) and the launcher takes a name as its id defines it, so
 * the cache only has to avoid writing a name again and again (the same
 * text under two ids is one name to every reader of the trace): it is per
 * thread (no lock), keyed by content (hash,
 * then compare against its own copy: a program may free and reuse the memory
 * of a name), and when it is full it forgets, which costs one more STRING
 * record. A fork child keeps its parent thread's cache: those records were
 * written before the fork, and ids stay valid across processes.
 */
#include "formats/trace/trace.h"
#include "lib/collector/collector.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static inline uint64_t load8(const char *s)
{
	uint64_t w;
	memcpy(&w, s, 8);
	return w;
}

static inline uint64_t load4(const char *s)
{
	uint32_t w;
	memcpy(&w, s, 4);
	return w;
}

/* Fixed-size loads only (no call to memcpy): the tail is read as the last 8
 * (or 4) bytes, overlapping what came before. */
static uint32_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
	if (len >= 8) {
		const char *end = s + len - 8;
		for (; s < end; s += 8) {
			h = (h ^ load8(s)) * 0xff51afd7ed558ccdull;
			h ^= h >> 32;
		}
		w = load8(end);
	} else if (len >= 4) {
		w = load4(s) << 32 | load4(s + len - 4);
	} else if (len) {
		w = (uint64_t)(unsigned char)s[0] << 16 | (uint64_t)(unsigned char)s[len / 2] << 8 |
		    (unsigned char)s[len - 1];
	} else {
		w = 0;
	}
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

void coll_cache_reset(struct coll_thread *t)
{
	memset(t->ptrs, 0, sizeof(t->ptrs));
	memset(t->cache, 0, sizeof(t->cache));
	t->arena_used = 0;
}

static int emit_string(struct coll_thread *t, uint32_t id, const char *s, size_t len)
{
	union {
		struct ring_rec h;
		uint64_t align;
		unsigned char b[sizeof(struct ring_rec) + RING_NAME_MAX + 8];
	} r;
	size_t size = ring_rec_align(sizeof(r.h) + len + 1);

	r.h.kind = RING_REC_STRING;
	r.h.size = (uint16_t)size;
	r.h.aux = id;
	memcpy(r.b + sizeof(r.h), s, len);
	memset(r.b + sizeof(r.h) + len, 0, size - sizeof(r.h) - len);
	return coll_emit(t, &r);
}

/* A new string id: from this thread's block, taking a twice larger one
 * when it is used up (a thread of few names wastes few ids). */
static uint32_t string_id_new(struct coll_thread *t)
{
	if (COLL_UNLIKELY(t->ids_next == t->ids_end)) {
		uint32_t n = t->ids_block ? t->ids_block * 2 : 1;
		if (n > COLL_ID_BLOCK_MAX)
			n = COLL_ID_BLOCK_MAX;
		t->ids_next = atomic_fetch_add_explicit(&coll.shm->next_string_id, n, memory_order_relaxed);
		t->ids_end = t->ids_next + n;
		t->ids_block = n;
	}
	return t->ids_next++;
}

static const struct coll_cache_ent *intern_miss(struct coll_thread *t, const char *s, size_t len, uint32_t h)
{
	if (!t->slot)
		return NULL; /* its events are counted as no_slot_events */
	uint32_t id = string_id_new(t);
	if (emit_string(t, id, s, len) != 0)
		return NULL;

	if (t->arena_used + len > COLL_CACHE_ARENA)
		coll_cache_reset(t);
	uint32_t home = h & (COLL_CACHE_SLOTS - 1), victim = home;
	for (uint32_t i = 0; i < COLL_CACHE_PROBES; i++) {
		uint32_t k = (home + i) & (COLL_CACHE_SLOTS - 1);
		if (!t->cache[k].id) {
			victim = k;
			break;
		}
	}
	struct coll_cache_ent *e = &t->cache[victim];
	memcpy(t->arena + t->arena_used, s, len);
	e->hash = h;
	e->id = id;
	e->off = t->arena_used;
	e->len = (uint32_t)len;
	t->arena_used += (uint32_t)len;
	return e;
}

static const struct coll_cache_ent *intern(struct coll_thread *t, const char *s, size_t len)
{
	uint32_t h = hash_bytes(s, len);
	uint32_t home = h & (COLL_CACHE_SLOTS - 1);
	for (uint32_t i = 0; i < COLL_CACHE_PROBES; i++) {
		const struct coll_cache_ent *e = &t->cache[(home + i) & (COLL_CACHE_SLOTS - 1)];
		if (!e->id)
			break;
		if (e->hash == h && e->len == len && memcmp(t->arena + e->off, s, len) == 0)
			return e;
	}
	return intern_miss(t, s, len, h);
}

uint32_t coll_intern(struct coll_thread *t, const char *s, size_t len)
{
	const struct coll_cache_ent *e = intern(t, s, len);
	return e ? e->id : 0;
}

/* An ASCII name: by its address first (no strlen, no hash), then by content. */
static uint32_t intern_ascii(struct coll_thread *t, const char *s, uint32_t *flags)
{
	struct coll_ptr_ent *p = &t->ptrs[((uintptr_t)s >> 3) & (COLL_PTR_SLOTS - 1)];
	/* strncmp stops at the first difference or NUL: never reads past a shorter
	 * string now at that address. The arena copy has no NUL in its len bytes. */
	if (COLL_LIKELY(p->p == s && p->id) && strncmp(s, t->arena + p->off, p->len) == 0 && s[p->len] == '\0')
		return p->id;
	uint32_t cut = 0;
	size_t len = coll_ascii_len(s, &cut);
	*flags |= cut;
	const struct coll_cache_ent *e = intern(t, s, len);
	if (!e)
		return 0;
	if (!cut) {
		p->p = s;
		p->id = e->id;
		p->off = e->off;
		p->len = e->len;
	}
	return e->id;
}

size_t coll_cut_len(const char *s, size_t len)
{
	if (COLL_LIKELY(len <= RING_NAME_MAX))
		return len;
	len = RING_NAME_MAX;
	/* s[len] is the first byte left out: if it continues a UTF-8 sequence, leave
	 * out the whole sequence (at most 3 bytes back; other bytes are not UTF-8). */
	for (int i = 0; i < 3 && len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80; i++)
		len--;
	return len;
}

size_t coll_ascii_len(const char *s, uint32_t *flags)
{
	size_t len = strnlen(s, RING_NAME_MAX + 1);
	if (COLL_LIKELY(len <= RING_NAME_MAX))
		return len;
	*flags |= TRACE_EVF_NAME_TRUNCATED;
	return coll_cut_len(s, len);
}

static size_t utf8_encode(uint32_t c, char *o)
{
	if (c >= 0xd800 && c <= 0xdfff)
		c = 0xfffd;
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c > 0x10ffff)
		c = 0xfffd;
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

size_t coll_wide_to_utf8(const wchar_t *w, char *out, uint32_t *flags)
{
	size_t n = 0;
	for (; *w; w++) {
		char enc[4];
		size_t k = utf8_encode((uint32_t)*w, enc);
		if (n + k > RING_NAME_MAX) {
			*flags |= TRACE_EVF_NAME_TRUNCATED;
			break;
		}
		memcpy(out + n, enc, k);
		n += k;
	}
	out[n] = '\0';
	return n;
}

uint32_t coll_str_id_slow(struct coll_thread *t, struct coll_str *s)
{
	uint32_t id = coll_intern(t, s->text, s->len);
	if (id) {
		uint32_t zero = 0;
		atomic_compare_exchange_strong_explicit(&s->id, &zero, id, memory_order_release,
							memory_order_relaxed);
	}
	return id;
}

uint32_t coll_name_id(struct coll_thread *t, const struct coll_name *n, uint32_t *flags)
{
	switch (n->kind) {
	case COLL_NAME_ASCII:
		return intern_ascii(t, n->p, flags);
	case COLL_NAME_WIDE: {
		char buf[RING_NAME_MAX + 1];
		size_t len = coll_wide_to_utf8(n->p, buf, flags);
		return coll_intern(t, buf, len);
	}
	case COLL_NAME_REG: {
		struct coll_str *s = (struct coll_str *)n->p;
		*flags |= s->flags;
		return coll_str_id(t, s);
	}
	default:
		return coll_intern(t, "", 0);
	}
}

/* ---- registry ------------------------------------------------------------ */

/* Lock-free lists, appended at the head with a compare-and-swap: a handle is
 * looked up by content so that a program registering the same string over and
 * over (or creating its domain in every call) does not grow the process. */
#define REG_BUCKETS 256u
static struct coll_str *_Atomic registry[2][REG_BUCKETS];

struct coll_str *_Atomic coll_gpdl;

/* The gprof-dl domain is remembered as it is first handed out. */
static struct coll_str *reg_found(struct coll_str *s)
{
	if (s->magic == COLL_DOMAIN_MAGIC && !atomic_load_explicit(&coll_gpdl, memory_order_relaxed) &&
	    s->len == sizeof(GPROF_DL_NVTX_DOMAIN) - 1 && !memcmp(s->text, GPROF_DL_NVTX_DOMAIN, s->len))
		atomic_store_explicit(&coll_gpdl, s, memory_order_release);
	return s;
}

static struct coll_str *reg_find(struct coll_str *s, uint32_t magic, const char *text, size_t len)
{
	for (; s; s = s->next)
		if (s->magic == magic && s->len == len && memcmp(s->text, text, len) == 0)
			return s;
	return NULL;
}

struct coll_str *coll_str_register(uint32_t magic, const struct coll_name *n)
{
	char buf[RING_NAME_MAX + 1];
	const char *text = "";
	size_t len = 0;
	uint32_t flags = 0;

	if (n->kind == COLL_NAME_ASCII) {
		text = n->p;
		len = coll_ascii_len(text, &flags);
	} else if (n->kind == COLL_NAME_WIDE) {
		len = coll_wide_to_utf8(n->p, buf, &flags);
		text = buf;
	} else if (n->kind == COLL_NAME_REG) {
		const struct coll_str *r = n->p;
		text = r->text;
		len = r->len;
		flags = r->flags;
	}

	struct coll_str *_Atomic *head = &registry[magic == COLL_DOMAIN_MAGIC][hash_bytes(text, len) % REG_BUCKETS];
	struct coll_str *first = atomic_load_explicit(head, memory_order_acquire);
	struct coll_str *s = reg_find(first, magic, text, len);
	if (s)
		return reg_found(s);
	s = malloc(sizeof(*s) + len + 1);
	if (!s)
		return NULL;
	s->magic = magic;
	atomic_init(&s->id, 0);
	s->len = (uint32_t)len;
	s->flags = flags;
	memcpy(s->text, text, len);
	s->text[len] = '\0';
	for (;;) {
		s->next = first;
		if (atomic_compare_exchange_weak_explicit(head, &first, s, memory_order_release,
							  memory_order_acquire))
			return reg_found(s);
		struct coll_str *other = reg_find(first, magic, text, len);
		if (other) { /* registered meanwhile by another thread */
			free(s);
			return reg_found(other);
		}
	}
}

void coll_registry_forget(void)
{
	for (size_t k = 0; k < 2; k++)
		for (size_t b = 0; b < REG_BUCKETS; b++)
			for (struct coll_str *s = atomic_load(&registry[k][b]); s; s = s->next)
				atomic_store(&s->id, 0);
}
