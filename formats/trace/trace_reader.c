/*
 * trace_reader.c - reads trace format 1.0 to 3.0 (formats/TRACE-FORMAT.md).
 *
 * The file is read front to back through one buffer in large read(2)s, and
 * each chunk is checked whole (length against the file, checksum, then every
 * count and id in it) before any of its records is delivered. So a chunk is
 * delivered entirely or not at all, and "everything before the damage" is
 * exactly the chunks that precede the damage offset.
 *
 * Invariants:
 *  - nothing read from the file is trusted: a length is checked against the
 *    chunk maximum and the bytes left in the file before anything is
 *    allocated or read for it; an id is checked against the tables read so far;
 *  - every allocation is proportional to bytes already read from the file,
 *    apart from the read buffer, which is at most one chunk, and the two an
 *    EVNZ chunk decompresses into, each at most the chunk maximum;
 *  - a record shorter than this version's (a 1.0 THRD, a META or PROC before
 *    2.1) reads as if its missing fields held their defaults: host thread,
 *    world size, local rank and a process's rank fields -1, backend none,
 *    job unknown, a process's exit signal -1 (not said);
 *  - strings, descs, threads, processes, categories and devices handed out stay valid
 *    until close: string bytes live in blocks that never move, and the tables
 *    are pages of records that never move (a thread or process record written
 *    again updates its record in place);
 *  - after damage nothing more is read; the reason and offset stay readable.
 */
#include "formats/trace/trace.h"
#include "formats/trace/trace_format.h"
#include "common/parallel.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define READER_BUF_SIZE (4u << 20)
#define READER_NO_END "no END chunk: recording was cut short"

struct reader_chunk {
	uint32_t type;
	uint32_t len;
	uint64_t off; /* of the chunk header */
	const unsigned char *p;
};

/* A table of fixed-size records in pages that never move, so that pointers
 * handed to callers stay valid while the table grows. */
#define READER_PAGE_SHIFT 9
#define READER_PAGE_LEN (1u << READER_PAGE_SHIFT)

struct reader_pages {
	char **page;
	uint32_t npages, page_cap;
	uint32_t n; /* records */
};

/* An open-addressing index into one of the reader's tables: slot holds idx + 1. */
struct reader_map {
	uint32_t *slot;
	uint32_t cap, n;
};

struct trace_reader {
	int fd;
	uint64_t file_size; /* UINT64_MAX when not a regular file */

	unsigned char *buf;
	size_t buf_cap, buf_len;
	uint64_t buf_off; /* file offset of buf[0] */
	uint64_t cur;     /* file offset of the next chunk */
	int eof, io_errno;

	struct trace_header hdr;
	int meta_seen, end_seen, ran;

	char **strs; /* strs[id]; strs[0] is "" */
	uint32_t nstr, str_cap;
	char **blocks;
	uint32_t nblocks, block_cap;

	struct reader_pages descs;   /* struct trace_desc, id - 1 */
	struct reader_pages threads; /* struct trace_thread, by index */
	struct reader_pages procs;   /* struct trace_process */
	struct reader_map proc_map;
	struct reader_pages cats;    /* struct trace_category */
	struct reader_map cat_map;
	struct reader_pages devs;    /* struct trace_device */
	struct reader_map dev_map;
	uint32_t (*launches)[9]; /* LCFG records, id - 1: grid, block, regs, static, dynamic */
	uint32_t nlaunch, launch_cap;
	struct trace_event_ext ext; /* the details of the event being delivered */
	struct trace_event *batch;  /* READER_BATCH events of a chunk, for visitor.events */
	unsigned char *zcols, *zrecs; /* an EVNZ chunk decompressed, and its records as EVNX's */
	size_t zcap;
	ZSTD_DCtx *zd;
	uint64_t total_drops;
	uint64_t drops_by_reason[TRACE_DROP_REASON_COUNT + 1]; /* the last: unknown reasons */

	int damaged;
	uint64_t damage_off;
	char damage[160];
};

static char reader_empty[] = "";

/* Records damage at off; returns -1 so that decoders can `return reader_damage()`. */
static int reader_damage(struct trace_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int reader_damage(struct trace_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	if (r->damaged)
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->damage, sizeof(r->damage), fmt, ap);
	va_end(ap);
	r->damaged = 1;
	r->damage_off = off;
	return -1;
}

static int reader_grow(struct trace_reader *r, void **arr, uint32_t *cap, uint64_t need,
		       size_t size, uint64_t off)
{
	uint64_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	if (need > UINT32_MAX - 1)
		return reader_damage(r, off, "too many records");
	ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX)
		ncap = UINT32_MAX;
	p = realloc(*arr, ncap * size);
	if (!p)
		return reader_damage(r, off, "out of memory");
	*arr = p;
	*cap = (uint32_t)ncap;
	return 0;
}

static void *reader_at(const struct reader_pages *t, size_t size, uint32_t i)
{
	return t->page[i >> READER_PAGE_SHIFT] + (size_t)(i & (READER_PAGE_LEN - 1)) * size;
}

/* Appends a zeroed record; NULL, with damage recorded, when out of memory. */
static void *reader_push(struct trace_reader *r, struct reader_pages *t, size_t size, uint64_t off)
{
	if (t->n >= UINT32_MAX - 1) {
		reader_damage(r, off, "too many records");
		return NULL;
	}
	if ((t->n >> READER_PAGE_SHIFT) == t->npages) {
		if (reader_grow(r, (void **)&t->page, &t->page_cap, (uint64_t)t->npages + 1,
				sizeof(*t->page), off) < 0)
			return NULL;
		t->page[t->npages] = calloc(READER_PAGE_LEN, size);
		if (!t->page[t->npages]) {
			reader_damage(r, off, "out of memory");
			return NULL;
		}
		t->npages++;
	}
	return reader_at(t, size, t->n++);
}

static void reader_pages_free(struct reader_pages *t)
{
	for (uint32_t i = 0; i < t->npages; i++)
		free(t->page[i]);
	free(t->page);
}

static struct trace_desc *reader_desc_at(const struct trace_reader *r, uint32_t i)
{
	return reader_at(&r->descs, sizeof(struct trace_desc), i);
}

static struct trace_thread *reader_thread_at(const struct trace_reader *r, uint32_t i)
{
	return reader_at(&r->threads, sizeof(struct trace_thread), i);
}

static struct trace_process *reader_proc_at(const struct trace_reader *r, uint32_t i)
{
	return reader_at(&r->procs, sizeof(struct trace_process), i);
}

static struct trace_category *reader_cat_at(const struct trace_reader *r, uint32_t i)
{
	return reader_at(&r->cats, sizeof(struct trace_category), i);
}

static struct trace_device *reader_dev_at(const struct trace_reader *r, uint32_t i)
{
	return reader_at(&r->devs, sizeof(struct trace_device), i);
}

/* ---- buffered input ---------------------------------------------------------- */

/* Makes n bytes from cur available in buf if the file has them; returns how
 * many bytes from cur are available (less than n only at end of file). */
static size_t reader_fill(struct trace_reader *r, size_t n)
{
	size_t at = (size_t)(r->cur - r->buf_off);
	size_t avail = r->buf_len - at;

	if (avail >= n || r->eof)
		return avail;
	memmove(r->buf, r->buf + at, avail);
	r->buf_off = r->cur;
	r->buf_len = avail;
	if (n > r->buf_cap) {
		unsigned char *p = realloc(r->buf, n);
		if (!p) {
			r->io_errno = ENOMEM;
			r->eof = 1;
			return avail;
		}
		r->buf = p;
		r->buf_cap = n;
	}
	while (r->buf_len < n) {
		ssize_t got = read(r->fd, r->buf + r->buf_len, r->buf_cap - r->buf_len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got < 0)
				r->io_errno = errno;
			r->eof = 1;
			break;
		}
		r->buf_len += (size_t)got;
	}
	return r->buf_len;
}

/* Reads the next chunk whole and checks its checksum: 1, or 0 at the end of
 * the file, or -1 on damage. */
static int reader_next_chunk(struct trace_reader *r, struct reader_chunk *c)
{
	size_t avail = reader_fill(r, TRACE_CHUNK_HEADER_SIZE);
	const unsigned char *h;
	uint32_t crc;

	if (avail == 0 && !r->io_errno)
		return 0;
	c->off = r->cur;
	if (avail < TRACE_CHUNK_HEADER_SIZE) {
		if (r->io_errno)
			return reader_damage(r, c->off, "read error: %s", strerror(r->io_errno));
		return reader_damage(r, c->off, "truncated chunk header");
	}
	h = r->buf + (r->cur - r->buf_off);
	c->type = trace_le32(h + TRACE_CH_TYPE);
	c->len = trace_le32(h + TRACE_CH_LENGTH);
	crc = trace_le32(h + TRACE_CH_CRC);
	if (c->len > TRACE_CHUNK_MAX_PAYLOAD)
		return reader_damage(r, c->off, "chunk length %u over the maximum of %u", c->len,
				     TRACE_CHUNK_MAX_PAYLOAD);
	if (r->cur + TRACE_CHUNK_HEADER_SIZE + c->len > r->file_size)
		return reader_damage(r, c->off, "truncated chunk");
	avail = reader_fill(r, TRACE_CHUNK_HEADER_SIZE + (size_t)c->len);
	if (avail < TRACE_CHUNK_HEADER_SIZE + (size_t)c->len) {
		if (r->io_errno)
			return reader_damage(r, c->off, "read error: %s", strerror(r->io_errno));
		return reader_damage(r, c->off, "truncated chunk");
	}
	h = r->buf + (r->cur - r->buf_off); /* the fill may have moved it */
	c->p = h + TRACE_CHUNK_HEADER_SIZE;
	if ((uint32_t)crc32(crc32(0L, h, TRACE_CH_CRC), c->p, c->len) != crc)
		return reader_damage(r, c->off, "checksum mismatch");
	r->cur += TRACE_CHUNK_HEADER_SIZE + c->len;
	return 1;
}

/* ---- lookup maps ------------------------------------------------------------- */

static uint64_t reader_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	return k;
}

static uint64_t reader_cat_hash(const struct trace_category *c)
{
	return reader_mix((uint64_t)c->domain_str << 32 | c->category);
}

static uint64_t reader_proc_hash(const struct trace_process *p)
{
	return reader_mix(p->start_ns ^ reader_mix(p->pid));
}

static int reader_cat_eq(const struct trace_category *a, const struct trace_category *b)
{
	return a->domain_str == b->domain_str && a->category == b->category;
}

static int reader_proc_eq(const struct trace_process *a, const struct trace_process *b)
{
	return a->pid == b->pid && a->start_ns == b->start_ns;
}

/* The slot of the category equal to key, or the empty slot where it goes. */
static uint32_t *reader_cat_slot(const struct trace_reader *r, const struct trace_category *key)
{
	uint32_t mask = r->cat_map.cap - 1, j = (uint32_t)reader_cat_hash(key) & mask;

	while (r->cat_map.slot[j] && !reader_cat_eq(reader_cat_at(r, r->cat_map.slot[j] - 1), key))
		j = (j + 1) & mask;
	return &r->cat_map.slot[j];
}

static uint32_t *reader_proc_slot(const struct trace_reader *r, const struct trace_process *key)
{
	uint32_t mask = r->proc_map.cap - 1, j = (uint32_t)reader_proc_hash(key) & mask;

	while (r->proc_map.slot[j] &&
	       !reader_proc_eq(reader_proc_at(r, r->proc_map.slot[j] - 1), key))
		j = (j + 1) & mask;
	return &r->proc_map.slot[j];
}

static uint32_t *reader_dev_slot(const struct trace_reader *r, uint32_t id)
{
	uint32_t mask = r->dev_map.cap - 1, j = (uint32_t)reader_mix(id) & mask;

	while (r->dev_map.slot[j] && reader_dev_at(r, r->dev_map.slot[j] - 1)->id != id)
		j = (j + 1) & mask;
	return &r->dev_map.slot[j];
}

enum reader_map_of { READER_MAP_PROCS, READER_MAP_CATS, READER_MAP_DEVS };

/* The slot for record i of the table that map `of` indexes. */
static uint32_t *reader_map_slot_of(const struct trace_reader *r, enum reader_map_of of,
				    uint32_t i)
{
	switch (of) {
	case READER_MAP_CATS:
		return reader_cat_slot(r, reader_cat_at(r, i));
	case READER_MAP_DEVS:
		return reader_dev_slot(r, reader_dev_at(r, i)->id);
	default:
		return reader_proc_slot(r, reader_proc_at(r, i));
	}
}

/* Makes room for one more entry, rebuilding the map from its table. */
static int reader_map_reserve(struct trace_reader *r, struct reader_map *m,
			      enum reader_map_of of, uint64_t off)
{
	const struct reader_pages *t = of == READER_MAP_CATS   ? &r->cats
				       : of == READER_MAP_DEVS ? &r->devs
							       : &r->procs;
	uint32_t ncap, *old = m->slot, n = t->n;

	if ((uint64_t)(n + 1) * 2 <= m->cap)
		return 0;
	if (m->cap >= (1u << 31))
		return reader_damage(r, off, "too many records");
	ncap = m->cap ? m->cap * 2 : 64;
	m->slot = calloc(ncap, sizeof(*m->slot));
	if (!m->slot) {
		m->slot = old;
		return reader_damage(r, off, "out of memory");
	}
	m->cap = ncap;
	free(old);
	for (uint32_t i = 0; i < n; i++)
		*reader_map_slot_of(r, of, i) = i + 1;
	return 0;
}

/* ---- chunk decoders ------------------------------------------------------------
 * Each checks the whole chunk first and returns -1 on damage before changing
 * any state, or the first non-zero visitor result. */

static int reader_str_ok(const struct trace_reader *r, uint32_t id)
{
	return id <= r->nstr;
}

static int reader_strings(struct trace_reader *r, const struct reader_chunk *c)
{
	uint32_t first, count, pos = TRACE_STRINGS_HEADER_SIZE;
	size_t bytes = 0;
	char *block, *dst;

	if (c->len < TRACE_STRINGS_HEADER_SIZE)
		return reader_damage(r, c->off, "STRS chunk shorter than its header");
	first = trace_le32(c->p);
	count = trace_le32(c->p + 4);
	if (first != r->nstr + 1)
		return reader_damage(r, c->off, "STRS chunk starts at id %u, expected %u", first,
				     r->nstr + 1);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t len;
		if (c->len - pos < 4)
			return reader_damage(r, c->off, "STRS chunk holds fewer strings than its count");
		len = trace_le32(c->p + pos);
		pos += 4;
		if (len > c->len - pos)
			return reader_damage(r, c->off, "string %u runs past its chunk", first + i);
		pos += len;
		bytes += (size_t)len + 1;
	}
	if (pos != c->len)
		return reader_damage(r, c->off, "STRS chunk has bytes after its last string");
	if (reader_grow(r, (void **)&r->strs, &r->str_cap, (uint64_t)r->nstr + count + 1,
			sizeof(*r->strs), c->off) < 0 ||
	    reader_grow(r, (void **)&r->blocks, &r->block_cap, (uint64_t)r->nblocks + 1,
			sizeof(*r->blocks), c->off) < 0)
		return -1;
	if (!count)
		return 0;
	block = malloc(bytes);
	if (!block)
		return reader_damage(r, c->off, "out of memory");
	r->blocks[r->nblocks++] = block;
	dst = block;
	pos = TRACE_STRINGS_HEADER_SIZE;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t len = trace_le32(c->p + pos);
		memcpy(dst, c->p + pos + 4, len);
		dst[len] = '\0';
		r->strs[++r->nstr] = dst;
		dst += len + 1;
		pos += 4 + len;
	}
	return 0;
}

static int reader_meta(struct trace_reader *r, const struct reader_chunk *c)
{
	const unsigned char *p = c->p;
	uint32_t s[6] = { 0 };

	if (r->meta_seen)
		return reader_damage(r, c->off, "second META chunk");
	if (c->len < TRACE_META_SIZE)
		return reader_damage(r, c->off, "META chunk shorter than %u bytes", TRACE_META_SIZE);
	s[0] = trace_le32(p + TRACE_META_CLOCK_STR);
	s[1] = trace_le32(p + TRACE_META_HOST_STR);
	s[2] = trace_le32(p + TRACE_META_CMDLINE_STR);
	s[3] = trace_le32(p + TRACE_META_VERSION_STR);
	if (c->len >= TRACE_META_SIZE_1_1)
		s[4] = trace_le32(p + TRACE_META_BACKEND_STR);
	if (c->len >= TRACE_META_SIZE_2_1)
		s[5] = trace_le32(p + TRACE_META_JOB_STR);
	for (int i = 0; i < 6; i++)
		if (!reader_str_ok(r, s[i]))
			return reader_damage(r, c->off, "META refers to unknown string %u", s[i]);
	r->hdr.sources = trace_le32(p + TRACE_META_SOURCES);
	r->hdr.pid = trace_le32(p + TRACE_META_PID);
	r->hdr.rank = (int32_t)trace_le32(p + TRACE_META_RANK);
	r->hdr.ncpus = trace_le32(p + TRACE_META_NCPUS);
	r->hdr.wall_offset_ns = (int64_t)trace_le64(p + TRACE_META_WALL_OFFSET);
	r->hdr.start_ns = trace_le64(p + TRACE_META_START);
	r->hdr.clock_domain = trace_reader_string(r, s[0]);
	r->hdr.hostname = trace_reader_string(r, s[1]);
	r->hdr.cmdline = trace_reader_string(r, s[2]);
	r->hdr.gprof_version = trace_reader_string(r, s[3]);
	r->hdr.dist_backend = trace_reader_string(r, s[4]);
	r->hdr.job_id = trace_reader_string(r, s[5]);
	r->hdr.world_size =
		c->len >= TRACE_META_SIZE_1_1 ? (int32_t)trace_le32(p + TRACE_META_WORLD_SIZE) : -1;
	r->hdr.local_rank =
		c->len >= TRACE_META_SIZE_1_3 ? (int32_t)trace_le32(p + TRACE_META_LOCAL_RANK) : -1;
	r->meta_seen = 1;
	return 0;
}

/* Checks a table chunk's sub-header: count records of rs >= min_size bytes
 * that fill the payload exactly. */
static int reader_table(struct trace_reader *r, const struct reader_chunk *c, const char *what,
			uint32_t min_size, uint32_t *count, uint32_t *rs)
{
	*count = *rs = 0;
	if (c->len < TRACE_TABLE_HEADER_SIZE)
		return reader_damage(r, c->off, "%s chunk shorter than its header", what);
	*count = trace_le32(c->p);
	*rs = trace_le32(c->p + 4);
	if (*rs < min_size)
		return reader_damage(r, c->off, "%s records of %u bytes, at least %u expected", what,
				     *rs, min_size);
	if ((uint64_t)*count * *rs != c->len - TRACE_TABLE_HEADER_SIZE)
		return reader_damage(r, c->off, "%s record count %u disagrees with the chunk length",
				     what, *count);
	return 0;
}

static int reader_descs(struct trace_reader *r, const struct reader_chunk *c)
{
	uint32_t n, rs;
	const unsigned char *p;

	if (reader_table(r, c, "DESC", TRACE_DESC_SIZE, &n, &rs) < 0)
		return -1;
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs) {
		if (trace_le32(p) != r->descs.n + 1 + i)
			return reader_damage(r, c->off, "desc id %u out of sequence", trace_le32(p));
		if (!reader_str_ok(r, trace_le32(p + 4)) || !reader_str_ok(r, trace_le32(p + 8)))
			return reader_damage(r, c->off, "desc %u refers to an unknown string",
					     trace_le32(p));
	}
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs) {
		struct trace_desc *d = reader_push(r, &r->descs, sizeof(*d), c->off);
		if (!d)
			return -1;
		d->id = trace_le32(p);
		d->name_str = trace_le32(p + 4);
		d->domain_str = trace_le32(p + 8);
		d->category = trace_le32(p + 12);
		d->type = p[16];
	}
	return 0;
}

static int reader_categories(struct trace_reader *r, const struct reader_chunk *c)
{
	uint32_t n, rs;
	const unsigned char *p;

	if (reader_table(r, c, "CATG", TRACE_CATEGORY_SIZE, &n, &rs) < 0)
		return -1;
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs)
		if (!reader_str_ok(r, trace_le32(p)) || !reader_str_ok(r, trace_le32(p + 8)))
			return reader_damage(r, c->off, "category refers to an unknown string");
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs) {
		struct trace_category cat = { trace_le32(p), trace_le32(p + 4), trace_le32(p + 8) };
		struct trace_category *dst;
		uint32_t *slot;
		if (reader_map_reserve(r, &r->cat_map, READER_MAP_CATS, c->off) < 0)
			return -1;
		slot = reader_cat_slot(r, &cat);
		if (*slot) { /* named again: the later name wins */
			*reader_cat_at(r, *slot - 1) = cat;
			continue;
		}
		if (!(dst = reader_push(r, &r->cats, sizeof(*dst), c->off)))
			return -1;
		*dst = cat;
		*slot = r->cats.n;
	}
	return 0;
}

static int reader_processes(struct trace_reader *r, const struct reader_chunk *c,
			    const struct trace_visitor *v, void *ctx)
{
	uint32_t n, rs;
	const unsigned char *p;
	int rc;

	if (reader_table(r, c, "PROC", TRACE_PROCESS_SIZE, &n, &rs) < 0)
		return -1;
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs)
		if (!reader_str_ok(r, trace_le32(p + 28)) ||
		    (rs >= TRACE_PROCESS_SIZE_1_3 &&
		     !reader_str_ok(r, trace_le32(p + TRACE_PROC_BACKEND_STR))) ||
		    (rs >= TRACE_PROCESS_SIZE_2_1 && !reader_str_ok(r, trace_le32(p + TRACE_PROC_JOB_STR))))
			return reader_damage(r, c->off, "process %u refers to an unknown string",
					     trace_le32(p));
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs) {
		struct trace_process pr = {
			.pid = trace_le32(p),
			.ppid = trace_le32(p + 4),
			.start_ns = trace_le64(p + 8),
			.end_ns = trace_le64(p + 16),
			.exit_status = (int32_t)trace_le32(p + 24),
			.cmdline_str = trace_le32(p + 28),
			.rank = -1,
			.local_rank = -1,
			.world_size = -1,
			.exit_signal = -1,
		};
		struct trace_process *dst;
		if (rs >= TRACE_PROCESS_SIZE_1_3) {
			pr.rank = (int32_t)trace_le32(p + TRACE_PROC_RANK);
			pr.local_rank = (int32_t)trace_le32(p + TRACE_PROC_LOCAL_RANK);
			pr.world_size = (int32_t)trace_le32(p + TRACE_PROC_WORLD_SIZE);
			pr.backend_str = trace_le32(p + TRACE_PROC_BACKEND_STR);
		}
		if (rs >= TRACE_PROCESS_SIZE_2_1) {
			pr.exit_signal = (int32_t)trace_le32(p + TRACE_PROC_EXIT_SIGNAL);
			pr.job_str = trace_le32(p + TRACE_PROC_JOB_STR);
		}
		uint32_t *slot;
		if (reader_map_reserve(r, &r->proc_map, READER_MAP_PROCS, c->off) < 0)
			return -1;
		slot = reader_proc_slot(r, &pr);
		if (*slot) { /* the same process written again: it ended */
			dst = reader_proc_at(r, *slot - 1);
		} else {
			if (!(dst = reader_push(r, &r->procs, sizeof(*dst), c->off)))
				return -1;
			*slot = r->procs.n;
		}
		*dst = pr;
		if (v->process && (rc = v->process(ctx, dst)) != 0)
			return rc;
	}
	return 0;
}

static uint8_t reader_thread_kind(const unsigned char *p, uint32_t rs)
{
	return rs >= TRACE_THREAD_SIZE_1_1 ? p[TRACE_THREAD_KIND] : TRACE_TRACK_HOST;
}

/* A track's kind never changes: events already delivered were read as its kind.
 * kinds holds the kinds of the tracks this chunk defines, first to last. */
static int reader_threads_check(struct trace_reader *r, const struct reader_chunk *c, uint32_t n,
				uint32_t rs, uint8_t *kinds)
{
	const unsigned char *p = c->p + TRACE_TABLE_HEADER_SIZE;
	uint32_t count = r->threads.n;

	for (uint32_t i = 0; i < n; i++, p += rs) {
		uint32_t index = trace_le32(p);
		uint8_t kind = reader_thread_kind(p, rs), was;
		if (index > count)
			return reader_damage(r, c->off, "thread index %u skips past %u", index, count);
		if (index == count) {
			kinds[count - r->threads.n] = kind;
			count++;
		}
		if (!reader_str_ok(r, trace_le32(p + 12)))
			return reader_damage(r, c->off, "thread %u refers to an unknown string", index);
		was = index < r->threads.n ? reader_thread_at(r, index)->kind
					   : kinds[index - r->threads.n];
		if (kind != was)
			return reader_damage(r, c->off, "track %u changes kind from %u to %u", index,
					     was, kind);
	}
	return 0;
}

static int reader_threads(struct trace_reader *r, const struct reader_chunk *c,
			  const struct trace_visitor *v, void *ctx)
{
	uint32_t n, rs;
	const unsigned char *p;
	uint8_t *kinds;
	int rc;

	if (reader_table(r, c, "THRD", TRACE_THREAD_SIZE, &n, &rs) < 0)
		return -1;
	kinds = malloc(n ? n : 1); /* n is bounded by the chunk's length */
	if (!kinds)
		return reader_damage(r, c->off, "out of memory");
	rc = reader_threads_check(r, c, n, rs, kinds);
	free(kinds);
	if (rc < 0)
		return -1;
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs) {
		uint32_t index = trace_le32(p);
		struct trace_thread *t = index < r->threads.n
						 ? reader_thread_at(r, index)
						 : reader_push(r, &r->threads, sizeof(*t), c->off);
		if (!t)
			return -1;
		t->index = index;
		t->pid = trace_le32(p + 4);
		t->tid = trace_le32(p + 8);
		t->name_str = trace_le32(p + 12);
		t->start_ns = trace_le64(p + 16);
		t->end_ns = trace_le64(p + 24);
		t->kind = reader_thread_kind(p, rs);
		if (rs >= TRACE_THREAD_SIZE_1_1) {
			t->device = trace_le32(p + TRACE_THREAD_DEVICE);
			t->context = trace_le32(p + TRACE_THREAD_CONTEXT);
			t->stream = trace_le64(p + TRACE_THREAD_STREAM);
		}
		if (v->thread && (rc = v->thread(ctx, t)) != 0)
			return rc;
	}
	return 0;
}

/* Checks an events chunk's thread, record size and descs: the parts EVNT,
 * EVNS and EVNX share. hsize is the sub-header's size, min_rs the least
 * record size; a record's desc id is the bits of desc_mask in the u32 at
 * desc_at. */
static int reader_events_check(struct trace_reader *r, const struct reader_chunk *c,
			       const char *what, uint32_t hsize, uint32_t min_rs,
			       uint32_t desc_at, uint32_t desc_mask)
{
	const unsigned char *p, *end = c->p + c->len;
	uint32_t thread = trace_le32(c->p), rs = trace_le32(c->p + 4), ndesc = r->descs.n;

	if (thread >= r->threads.n)
		return reader_damage(r, c->off, "events of unknown thread %u", thread);
	if (rs < min_rs || (c->len - hsize) % rs)
		return reader_damage(r, c->off, "%s record size %u disagrees with the chunk length",
				     what, rs);
	/* Whole chunk first, so that it is delivered entirely or not at all. */
	for (p = c->p + hsize; p < end; p += rs) {
		uint32_t desc = trace_le32(p + desc_at) & desc_mask;
		if (desc - 1 >= ndesc) /* 0 wraps to UINT32_MAX */
			return reader_damage(r, c->off, "event refers to unknown desc %u", desc);
	}
	return 0;
}

static void reader_get_event(struct trace_event *ev, const unsigned char *p, uint64_t base)
{
	uint64_t df = trace_le64(p);

	ev->dur_ns = df & TRACE_EVENT_DUR_MAX;
	ev->flags = (uint8_t)(df >> TRACE_EVENT_DUR_BITS);
	ev->start_ns = base + trace_le32(p + 8);
	ev->desc = trace_le32(p + 12);
}

/* An EVNS record (2.0): the same fields in 12 bytes. */
static void reader_get_short_event(struct trace_event *ev, const unsigned char *p, uint64_t base)
{
	uint32_t df = trace_le32(p + TRACE_EVS_DESC_FLAGS);

	ev->start_ns = base + trace_le32(p + TRACE_EVS_START);
	ev->dur_ns = trace_le32(p + TRACE_EVS_DUR);
	ev->desc = df & TRACE_EVENT_SHORT_DESC_MAX;
	ev->flags = (uint8_t)(df >> TRACE_EVENT_SHORT_DESC_BITS);
}

/* Decodes the records of [p, end) into the batch, each desc checked as it
 * is decoded: 0, or -1 on damage (nothing delivered). */
static int reader_batch_decode(struct trace_reader *r, const struct reader_chunk *c, int shrt,
			       const unsigned char *p, const unsigned char *end, uint32_t rs,
			       uint32_t thread, uint64_t base)
{
	struct trace_event *ev = r->batch;
	const uint32_t ndesc = r->descs.n;

	for (; p < end; p += rs, ev++) {
		if (shrt) {
			uint32_t df = trace_le32(p + TRACE_EVS_DESC_FLAGS);
			ev->start_ns = base + trace_le32(p + TRACE_EVS_START);
			ev->dur_ns = trace_le32(p + TRACE_EVS_DUR);
			ev->desc = df & TRACE_EVENT_SHORT_DESC_MAX;
			ev->flags = (uint8_t)(df >> TRACE_EVENT_SHORT_DESC_BITS);
		} else {
			reader_get_event(ev, p, base);
		}
		ev->thread = thread;
		ev->ext = NULL;
		if (ev->desc - 1 >= ndesc) /* 0 wraps to UINT32_MAX */
			return reader_damage(r, c->off, "event refers to unknown desc %u", ev->desc);
	}
	return 0;
}

/* reader_events() for visitor.events: a chunk of at most READER_BATCH
 * records (the writer's are 4094) decoded and checked in one pass, then
 * delivered in one call; a larger one checked whole first
 * (reader_events_check()), then delivered READER_BATCH at a time. Either
 * way every record or none. */
#define READER_BATCH 4096u
static int reader_events_batch(struct trace_reader *r, const struct reader_chunk *c,
			       const char *what, const struct trace_visitor *v, void *ctx)
{
	const int shrt = c->type == TRACE_CHUNK_EVENTS_SHORT;
	const unsigned char *p = c->p + TRACE_EVENTS_HEADER_SIZE;
	uint32_t thread = trace_le32(c->p), rs = trace_le32(c->p + 4);
	uint64_t base = trace_le64(c->p + 8);
	int rc;

	if (thread >= r->threads.n)
		return reader_damage(r, c->off, "events of unknown thread %u", thread);
	if (rs < (shrt ? TRACE_EVENT_SHORT_SIZE : TRACE_EVENT_SIZE) ||
	    (c->len - TRACE_EVENTS_HEADER_SIZE) % rs)
		return reader_damage(r, c->off, "%s record size %u disagrees with the chunk length",
				     what, rs);
	size_t n = (c->len - TRACE_EVENTS_HEADER_SIZE) / rs;
	if (!r->batch && !(r->batch = malloc(READER_BATCH * sizeof(*r->batch))))
		return reader_damage(r, c->off, "out of memory");
	if (n > READER_BATCH &&
	    reader_events_check(r, c, what, TRACE_EVENTS_HEADER_SIZE,
				shrt ? TRACE_EVENT_SHORT_SIZE : TRACE_EVENT_SIZE,
				shrt ? TRACE_EVS_DESC_FLAGS : 12,
				shrt ? TRACE_EVENT_SHORT_DESC_MAX : UINT32_MAX) < 0)
		return -1;
	while (n) {
		size_t k = n < READER_BATCH ? n : READER_BATCH;
		const unsigned char *stop = p + k * rs;
		if (reader_batch_decode(r, c, shrt, p, stop, rs, thread, base) < 0)
			return -1;
		if ((rc = v->events(ctx, r->batch, k)) != 0)
			return rc;
		p = stop;
		n -= k;
	}
	return 0;
}

/* An EVNT chunk, or an EVNS chunk (2.0: its records 12 bytes, or more). */
static int reader_events(struct trace_reader *r, const struct reader_chunk *c,
			 const struct trace_visitor *v, void *ctx)
{
	const int shrt = c->type == TRACE_CHUNK_EVENTS_SHORT;
	const char *what = shrt ? "EVNS" : "EVNT";
	const unsigned char *p, *end = c->p + c->len;
	struct trace_event ev = { 0 };
	uint32_t rs;
	uint64_t base;
	int rc;

	if (c->len < TRACE_EVENTS_HEADER_SIZE)
		return reader_damage(r, c->off, "%s chunk shorter than its header", what);
	if (v->events)
		return reader_events_batch(r, c, what, v, ctx);
	if (reader_events_check(r, c, what, TRACE_EVENTS_HEADER_SIZE,
				shrt ? TRACE_EVENT_SHORT_SIZE : TRACE_EVENT_SIZE,
				shrt ? TRACE_EVS_DESC_FLAGS : 12,
				shrt ? TRACE_EVENT_SHORT_DESC_MAX : UINT32_MAX) < 0)
		return -1;
	if (!v->event)
		return 0;
	ev.thread = trace_le32(c->p);
	rs = trace_le32(c->p + 4);
	base = trace_le64(c->p + 8);
	for (p = c->p + TRACE_EVENTS_HEADER_SIZE; p < end; p += rs) {
		if (shrt)
			reader_get_short_event(&ev, p, base);
		else
			reader_get_event(&ev, p, base);
		if ((rc = v->event(ctx, &ev)) != 0)
			return rc;
	}
	return 0;
}

/* An id stored as an offset from base: 0 is none. */
static uint64_t reader_id(uint32_t d, uint64_t base)
{
	return d ? base + d : 0; /* modulo 2^64, as starts are */
}

/* Decodes the groups in mask from p into x, which the caller zeroed; launch
 * ids were checked against the LCFG table. */
static void reader_get_ext(const struct trace_reader *r, struct trace_event_ext *x,
			   const unsigned char *p, uint32_t mask, uint64_t corr_base,
			   uint64_t ext_base)
{
	if (mask & TRACE_EXTG_CORRELATION) {
		x->correlation = reader_id(trace_le32(p), corr_base);
		p += 4;
	}
	if (mask & TRACE_EXTG_EXTERNAL) {
		x->external_id = reader_id(trace_le32(p), ext_base);
		p += 4;
	}
	if (mask & TRACE_EXTG_LAUNCH) {
		uint32_t id = trace_le32(p);
		if (id) {
			const uint32_t *v = r->launches[id - 1];
			for (int i = 0; i < 3; i++) {
				x->grid[i] = v[i];
				x->block[i] = v[3 + i];
			}
			x->registers = v[6];
			x->static_smem = v[7];
			x->dynamic_smem = v[8];
		}
		p += 4;
	}
	if (mask & TRACE_EXTG_TRANSFER) {
		x->bytes = trace_le64(p);
		x->copy_kind = p[8];
		x->src_kind = p[9];
		x->dst_kind = p[10];
		x->is_async = p[11];
		p += 12;
	}
	if (mask & TRACE_EXTG_ALLOC) {
		x->address = trace_le64(p);
		x->total_allocated = trace_le64(p + 8);
		p += 16;
	}
	if (mask & TRACE_EXTG_DEVICE) {
		x->device = (int32_t)trace_le32(p);
		p += 4;
	}
	if (mask & TRACE_EXTG_SEQ) {
		uint32_t v = trace_le32(p);
		if (v == TRACE_EXT_SEQ_WIDE) /* checked: the chunk has SEQ64 */
			x->seq_nr = (int64_t)trace_le64(p + TRACE_EXTG_SEQ_SIZE);
		else if (v)
			x->seq_nr = (int64_t)v - 1;
		x->has_seq = v != 0;
		p += TRACE_EXTG_SEQ_SIZE;
	}
	if (mask & TRACE_EXTG_SEQ64)
		p += TRACE_EXTG_SEQ64_SIZE;
	if (mask & TRACE_EXTG_SHAPES) {
		x->shapes_str = trace_le32(p); /* checked against the strings */
		p += TRACE_EXTG_SHAPES_SIZE;
	}
	if (mask & TRACE_EXTG_SAMPLES) {
		x->samples = trace_le64(p);
		p += TRACE_EXTG_SAMPLES_SIZE;
	}
	if (mask & TRACE_EXTG_COLLECTIVE) {
		uint64_t seq = trace_le64(p + TRACE_COLL_SEQ);
		uint32_t peer = trace_le32(p + TRACE_COLL_PEER);
		x->has_coll_seq = seq != 0;
		x->coll_seq = seq ? seq - 1 : 0;
		x->pg_str = trace_le32(p + TRACE_COLL_PG_STR); /* checked, as shapes */
		x->group_size = trace_le32(p + TRACE_COLL_GROUP_SIZE);
		x->dtype_str = trace_le32(p + TRACE_COLL_DTYPE_STR);
		x->has_peer = peer != 0;
		x->peer = peer ? (int32_t)(peer - 1) : 0;
		p += TRACE_EXTG_COLLECTIVE_SIZE;
	}
	if (mask & TRACE_EXTG_SCHED) {
		x->sched_cpu_ns = trace_le64(p);
		x->sched_runq_ns = x->sched_cpu_ns ? trace_le64(p + 8) : 0;
	}
}

/* Where a record's launch id is: after the event and the id groups before it. */
static uint32_t reader_launch_offset(uint32_t groups)
{
	return TRACE_EVENT_SIZE + trace_ext_groups_size(groups & (TRACE_EXTG_LAUNCH - 1));
}

/* Checks the string id at byte `at` of group g in every record of an EVNX
 * chunk whose groups are `groups`, as the chunk's other ids are checked. */
static int reader_ext_strs_check(struct trace_reader *r, const struct reader_chunk *c,
				 uint32_t groups, uint32_t g, uint32_t at)
{
	const unsigned char *p, *end = c->p + c->len;
	uint32_t rs = trace_le32(c->p + TRACE_EVX_RECORD_SIZE);

	if (!(groups & g))
		return 0;
	at += trace_ext_group_offset(groups, g);
	for (p = c->p + TRACE_EVENTS_EXT_HEADER_SIZE; p < end; p += rs)
		if (!reader_str_ok(r, trace_le32(p + at)))
			return reader_damage(r, c->off, "event refers to unknown string %u",
					     trace_le32(p + at));
	return 0;
}

static int reader_events_ext(struct trace_reader *r, const struct reader_chunk *c,
			     const struct trace_visitor *v, void *ctx)
{
	const unsigned char *p, *end = c->p + c->len;
	struct trace_event ev = { 0 };
	uint32_t rs, groups;
	uint64_t base, corr_base, ext_base;
	int rc;

	if (c->len < TRACE_EVENTS_EXT_HEADER_SIZE)
		return reader_damage(r, c->off, "EVNX chunk shorter than its header");
	groups = trace_le32(c->p + TRACE_EVX_GROUPS);
	if (reader_events_check(r, c, "EVNX", TRACE_EVENTS_EXT_HEADER_SIZE,
				TRACE_EVENT_SIZE + trace_ext_groups_size(groups), 12, UINT32_MAX) < 0)
		return -1;
	rs = trace_le32(c->p + TRACE_EVX_RECORD_SIZE);
	if (groups & TRACE_EXTG_LAUNCH) {
		uint32_t at = reader_launch_offset(groups);
		for (p = c->p + TRACE_EVENTS_EXT_HEADER_SIZE; p < end; p += rs)
			if (trace_le32(p + at) > r->nlaunch)
				return reader_damage(r, c->off,
						     "event refers to unknown launch configuration %u",
						     trace_le32(p + at));
	}
	if ((groups & TRACE_EXTG_SEQ) && !(groups & TRACE_EXTG_SEQ64)) {
		uint32_t at = trace_ext_group_offset(groups, TRACE_EXTG_SEQ);
		for (p = c->p + TRACE_EVENTS_EXT_HEADER_SIZE; p < end; p += rs)
			if (trace_le32(p + at) == TRACE_EXT_SEQ_WIDE)
				return reader_damage(r, c->off,
						     "sequence number in a seq64 group the chunk lacks");
	}
	if (reader_ext_strs_check(r, c, groups, TRACE_EXTG_SHAPES, 0) < 0 ||
	    reader_ext_strs_check(r, c, groups, TRACE_EXTG_COLLECTIVE, TRACE_COLL_PG_STR) < 0 ||
	    reader_ext_strs_check(r, c, groups, TRACE_EXTG_COLLECTIVE, TRACE_COLL_DTYPE_STR) < 0)
		return -1;
	if (groups & TRACE_EXTG_COLLECTIVE) { /* a peer is a rank: peer + 1 in [1, 2^31] */
		uint32_t at = trace_ext_group_offset(groups, TRACE_EXTG_COLLECTIVE) + TRACE_COLL_PEER;
		for (p = c->p + TRACE_EVENTS_EXT_HEADER_SIZE; p < end; p += rs)
			if (trace_le32(p + at) > UINT32_C(0x80000000))
				return reader_damage(r, c->off, "event's peer %u out of range",
						     trace_le32(p + at) - 1);
	}
	if (!v->event)
		return 0;
	ev.thread = trace_le32(c->p + TRACE_EVX_THREAD);
	base = trace_le64(c->p + TRACE_EVX_BASE);
	corr_base = trace_le64(c->p + TRACE_EVX_CORR_BASE);
	ext_base = trace_le64(c->p + TRACE_EVX_EXT_BASE);
	ev.ext = &r->ext;
	for (p = c->p + TRACE_EVENTS_EXT_HEADER_SIZE; p < end; p += rs) {
		reader_get_event(&ev, p, base);
		memset(&r->ext, 0, sizeof(r->ext));
		reader_get_ext(r, &r->ext, p + TRACE_EVENT_SIZE, groups, corr_base, ext_base);
		if ((rc = v->event(ctx, &ev)) != 0)
			return rc;
	}
	return 0;
}

/* An EVNZ chunk: decompressed, its columns put back into records, and read
 * as the EVNX chunk it was (formats/trace/trace_format.h). */
static int reader_events_z(struct trace_reader *r, const struct reader_chunk *c,
			   const struct trace_visitor *v, void *ctx)
{
	if (c->len < TRACE_EVZ_HEADER_SIZE)
		return reader_damage(r, c->off, "EVNZ chunk shorter than its header");
	uint32_t len = trace_le32(c->p + TRACE_EVZ_RAW_LENGTH);
	if (len > TRACE_CHUNK_MAX_PAYLOAD)
		return reader_damage(r, c->off, "EVNZ chunk holds %u bytes, over the maximum of %u", len,
				     TRACE_CHUNK_MAX_PAYLOAD);
	if (len > r->zcap) {
		unsigned char *a = realloc(r->zcols, len), *b = a ? realloc(r->zrecs, len) : NULL;
		if (a)
			r->zcols = a;
		if (!b)
			return reader_damage(r, c->off, "out of memory reading an EVNZ chunk");
		r->zrecs = b;
		r->zcap = len;
	}
	if (!r->zd && !(r->zd = ZSTD_createDCtx()))
		return reader_damage(r, c->off, "out of memory reading an EVNZ chunk");
	const unsigned char *z = c->p + TRACE_EVZ_HEADER_SIZE;
	size_t zlen = c->len - TRACE_EVZ_HEADER_SIZE;
	/* one frame, the whole of the rest, of exactly len bytes */
	size_t got = ZSTD_findFrameCompressedSize(z, zlen) == zlen
			     ? ZSTD_decompressDCtx(r->zd, r->zcols, len, z, zlen)
			     : (size_t)-1;
	if (ZSTD_isError(got) || got != len)
		return reader_damage(r, c->off, "EVNZ chunk does not decompress to its %u bytes", len);
	struct reader_chunk x = {TRACE_CHUNK_EVENTS_EXT, len, c->off, r->zcols};
	uint32_t rs = len >= TRACE_EVENTS_EXT_HEADER_SIZE ? trace_le32(r->zcols + TRACE_EVX_RECORD_SIZE) : 0;
	if (rs && (len - TRACE_EVENTS_EXT_HEADER_SIZE) % rs == 0) {
		size_t n = (len - TRACE_EVENTS_EXT_HEADER_SIZE) / rs;
		memcpy(r->zrecs, r->zcols, TRACE_EVENTS_EXT_HEADER_SIZE);
		const unsigned char *col = r->zcols + TRACE_EVENTS_EXT_HEADER_SIZE;
		unsigned char *rec = r->zrecs + TRACE_EVENTS_EXT_HEADER_SIZE;
		for (uint32_t k = 0; k < rs; k++, col += n)
			for (size_t i = 0; i < n; i++)
				rec[i * rs + k] = col[i];
		x.p = r->zrecs;
	} /* else the EVNX reading says what is wrong with the records */
	return reader_events_ext(r, &x, v, ctx);
}

/* LCFG: kernel launch configurations, ids in sequence like descs. */
static int reader_launches(struct trace_reader *r, const struct reader_chunk *c)
{
	uint32_t n, rs;
	const unsigned char *p;

	if (reader_table(r, c, "LCFG", TRACE_LAUNCH_SIZE, &n, &rs) < 0)
		return -1;
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs)
		if (trace_le32(p) != r->nlaunch + 1 + i)
			return reader_damage(r, c->off, "launch configuration id %u out of sequence",
					     trace_le32(p));
	if (reader_grow(r, (void **)&r->launches, &r->launch_cap, (uint64_t)r->nlaunch + n,
			sizeof(*r->launches), c->off) < 0)
		return -1;
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs) {
		for (int k = 0; k < 9; k++)
			r->launches[r->nlaunch][k] = trace_le32(p + 4 + 4 * k);
		r->nlaunch++;
	}
	return 0;
}

static int reader_devices(struct trace_reader *r, const struct reader_chunk *c,
			  const struct trace_visitor *v, void *ctx)
{
	uint32_t n, rs;
	const unsigned char *p;
	int rc;

	if (reader_table(r, c, "DEVP", TRACE_DEVICE_SIZE, &n, &rs) < 0)
		return -1;
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs)
		if (!reader_str_ok(r, trace_le32(p + 4)))
			return reader_damage(r, c->off, "device %u refers to an unknown string",
					     trace_le32(p));
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs) {
		struct trace_device d = {
			.id = trace_le32(p),
			.name_str = trace_le32(p + 4),
			.sm_count = trace_le32(p + 8),
			.max_threads_per_sm = trace_le32(p + 12),
			.max_threads_per_block = trace_le32(p + 16),
			.max_blocks_per_sm = trace_le32(p + 20),
			.warp_size = trace_le32(p + 24),
			.regs_per_sm = trace_le32(p + 28),
			.regs_per_block = trace_le32(p + 32),
			.smem_per_sm = trace_le32(p + 36),
			.smem_per_block = trace_le32(p + 40),
			.total_memory = trace_le64(p + 44),
			.clock_khz = trace_le32(p + 52),
			.cc_major = trace_le16(p + 56),
			.cc_minor = trace_le16(p + 58),
		};
		struct trace_device *dst;
		uint32_t *slot;
		if (reader_map_reserve(r, &r->dev_map, READER_MAP_DEVS, c->off) < 0)
			return -1;
		slot = reader_dev_slot(r, d.id);
		if (*slot) { /* described again: the later record wins */
			dst = reader_dev_at(r, *slot - 1);
		} else {
			if (!(dst = reader_push(r, &r->devs, sizeof(*dst), c->off)))
				return -1;
			*slot = r->devs.n;
		}
		*dst = d;
		if (v->device && (rc = v->device(ctx, dst)) != 0)
			return rc;
	}
	return 0;
}

static int reader_counters(struct trace_reader *r, const struct reader_chunk *c,
			   const struct trace_visitor *v, void *ctx)
{
	uint32_t n, rs;
	const unsigned char *p;
	int rc;

	if (reader_table(r, c, "CNTR", TRACE_COUNTER_SIZE, &n, &rs) < 0 || !v->counter)
		return r->damaged ? -1 : 0;
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs) {
		struct trace_counter ct = { trace_le64(p), trace_le32(p + 8), trace_le32(p + 12), 0 };
		uint64_t bits = trace_le64(p + 16);
		memcpy(&ct.value, &bits, sizeof(bits));
		if ((rc = v->counter(ctx, &ct)) != 0)
			return rc;
	}
	return 0;
}

static int reader_drops(struct trace_reader *r, const struct reader_chunk *c,
			const struct trace_visitor *v, void *ctx)
{
	uint32_t n, rs;
	const unsigned char *p;
	int rc;

	if (reader_table(r, c, "DROP", TRACE_DROP_SIZE, &n, &rs) < 0)
		return -1;
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs)
		if (trace_le32(p) >= r->threads.n)
			return reader_damage(r, c->off, "drops of unknown thread %u", trace_le32(p));
	p = c->p + TRACE_TABLE_HEADER_SIZE;
	for (uint32_t i = 0; i < n; i++, p += rs) {
		uint64_t d = trace_le64(p + 8), *by;
		uint32_t why = trace_le32(p + 4);
		by = &r->drops_by_reason[why < TRACE_DROP_REASON_COUNT ? why : TRACE_DROP_REASON_COUNT];
		*by = *by + d < d ? UINT64_MAX : *by + d;
		if (!trace_drop_reason_is_loss(why))
			continue; /* the records are there, altered */
		r->total_drops = r->total_drops + d < d ? UINT64_MAX : r->total_drops + d;
		if (v->drops && (rc = v->drops(ctx, trace_le32(p), d)) != 0)
			return rc;
	}
	return 0;
}

static int reader_end(struct trace_reader *r, const struct reader_chunk *c)
{
	if (c->len < TRACE_END_SIZE)
		return reader_damage(r, c->off, "END chunk shorter than %u bytes", TRACE_END_SIZE);
	r->hdr.end_ns = trace_le64(c->p);
	r->end_seen = 1;
	if (reader_fill(r, 1) > 0)
		return reader_damage(r, r->cur, "data after the END chunk");
	return 0;
}

static int reader_dispatch(struct trace_reader *r, const struct reader_chunk *c,
			   const struct trace_visitor *v, void *ctx)
{
	switch (c->type) {
	case TRACE_CHUNK_STRINGS:
		return reader_strings(r, c);
	case TRACE_CHUNK_META:
		return reader_meta(r, c);
	case TRACE_CHUNK_DESCS:
		return reader_descs(r, c);
	case TRACE_CHUNK_CATEGORIES:
		return reader_categories(r, c);
	case TRACE_CHUNK_PROCESSES:
		return reader_processes(r, c, v, ctx);
	case TRACE_CHUNK_THREADS:
		return reader_threads(r, c, v, ctx);
	case TRACE_CHUNK_EVENTS:
	case TRACE_CHUNK_EVENTS_SHORT:
		return reader_events(r, c, v, ctx);
	case TRACE_CHUNK_EVENTS_EXT:
		return reader_events_ext(r, c, v, ctx);
	case TRACE_CHUNK_EVENTS_EXT_Z:
		return reader_events_z(r, c, v, ctx);
	case TRACE_CHUNK_DEVICES:
		return reader_devices(r, c, v, ctx);
	case TRACE_CHUNK_LAUNCHES:
		return reader_launches(r, c);
	case TRACE_CHUNK_COUNTERS:
		return reader_counters(r, c, v, ctx);
	case TRACE_CHUNK_DROPS:
		return reader_drops(r, c, v, ctx);
	case TRACE_CHUNK_END:
		return reader_end(r, c);
	default: /* a later version's chunk: its checksum held, so skip it */
		return 0;
	}
}

/* ---- open, run, close -------------------------------------------------------- */

static struct trace_reader *reader_fail_open(struct trace_reader *r, char *err, size_t errlen,
					     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static struct trace_reader *reader_fail_open(struct trace_reader *r, char *err, size_t errlen,
					     const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	trace_reader_close(r);
	return NULL;
}

/* The file header: anything wrong here means "not a trace we can read". */
static struct trace_reader *reader_open_header(struct trace_reader *r, const char *path,
					       char *err, size_t errlen)
{
	size_t avail = reader_fill(r, TRACE_FILE_HEADER_SIZE);
	const unsigned char *h = r->buf;
	uint32_t hsize;
	uLong crc;

	if (r->io_errno)
		return reader_fail_open(r, err, errlen, "cannot read '%s': %s", path,
					strerror(r->io_errno));
	if (avail == 0)
		return reader_fail_open(r, err, errlen, "'%s': not a gprof-dl trace (empty file)", path);
	if (avail < TRACE_MAGIC_LEN || memcmp(h, TRACE_MAGIC, TRACE_MAGIC_LEN))
		return reader_fail_open(r, err, errlen, "'%s': not a gprof-dl trace (bad magic)", path);
	if (avail < TRACE_FILE_HEADER_SIZE)
		return reader_fail_open(r, err, errlen,
					"'%s': not a gprof-dl trace (too short for a header)", path);
	if (trace_le32(h + TRACE_FH_ENDIAN) != TRACE_ENDIAN_TAG)
		return reader_fail_open(r, err, errlen,
					"'%s': not a gprof-dl trace (bad endianness tag)", path);
	hsize = trace_le32(h + TRACE_FH_HEADER_SIZE);
	if (hsize < TRACE_FILE_HEADER_SIZE || hsize > TRACE_FILE_HEADER_MAX)
		return reader_fail_open(r, err, errlen, "'%s': not a gprof-dl trace (header size %u)",
					path, hsize);
	if (reader_fill(r, hsize) < hsize)
		return reader_fail_open(r, err, errlen,
					"'%s': not a gprof-dl trace (too short for a header)", path);
	h = r->buf;
	crc = crc32(crc32(0L, h, TRACE_FH_CRC), h + TRACE_FILE_HEADER_SIZE,
		    hsize - TRACE_FILE_HEADER_SIZE);
	if ((uint32_t)crc != trace_le32(h + TRACE_FH_CRC))
		return reader_fail_open(r, err, errlen,
					"'%s': damaged trace (file header checksum mismatch)", path);
	r->hdr.version_major = trace_le16(h + TRACE_FH_VERSION_MAJOR);
	r->hdr.version_minor = trace_le16(h + TRACE_FH_VERSION_MINOR);
	if (r->hdr.version_major < TRACE_FORMAT_VERSION_MIN_MAJOR ||
	    r->hdr.version_major > TRACE_FORMAT_VERSION_MAJOR)
		return reader_fail_open(r, err, errlen,
					"'%s': unsupported trace format version %u.%u (this gprof-dl reads %u.x to %u.x)",
					path, r->hdr.version_major, r->hdr.version_minor,
					TRACE_FORMAT_VERSION_MIN_MAJOR, TRACE_FORMAT_VERSION_MAJOR);
	r->cur = hsize; /* a later minor version's header fields are skipped */
	return r;
}

/* Reads the STRS chunks and the META that open every trace, so that the
 * header is known before run(). */
static void reader_open_prefix(struct trace_reader *r)
{
	static const struct trace_visitor none;
	struct reader_chunk c;

	while (reader_next_chunk(r, &c) > 0) {
		if (c.type == TRACE_CHUNK_STRINGS) {
			if (reader_strings(r, &c) < 0)
				return;
			continue;
		}
		if (c.type != TRACE_CHUNK_META) {
			reader_damage(r, c.off, "no META chunk before the first records");
			return;
		}
		reader_dispatch(r, &c, &none, NULL);
		return;
	}
}

struct trace_reader *trace_reader_open(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return reader_fail_open(NULL, err, errlen, "cannot open '%s': %s", path,
					strerror(errno));
	return trace_reader_open_fd(fd, path, err, errlen);
}

struct trace_reader *trace_reader_open_fd(int fd, const char *path, char *err, size_t errlen)
{
	struct trace_reader *r = calloc(1, sizeof(*r));
	struct stat st;

	if (!r) {
		close(fd);
		return reader_fail_open(r, err, errlen, "'%s': %s", path, strerror(ENOMEM));
	}
	r->fd = fd;
	r->file_size = UINT64_MAX;
	r->buf_cap = READER_BUF_SIZE;
	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		r->file_size = (uint64_t)st.st_size;
		if (r->file_size + 1 < r->buf_cap) /* small files: small buffers */
			r->buf_cap = r->file_size < 4096 ? 4096 : (size_t)r->file_size + 1;
	}
	r->buf = malloc(r->buf_cap);
	if (!r->buf)
		return reader_fail_open(r, err, errlen, "'%s': %s", path, strerror(ENOMEM));
	r->strs = malloc(64 * sizeof(*r->strs));
	if (!r->strs)
		return reader_fail_open(r, err, errlen, "'%s': %s", path, strerror(ENOMEM));
	r->str_cap = 64;
	r->strs[0] = reader_empty;
	r->hdr.rank = -1;
	r->hdr.world_size = -1;
	r->hdr.local_rank = -1;
	r->hdr.clock_domain = r->hdr.hostname = r->hdr.cmdline = r->hdr.gprof_version = "";
	r->hdr.dist_backend = "";
	r->hdr.job_id = "";
	if (!reader_open_header(r, path, err, errlen))
		return NULL;
	reader_open_prefix(r);
	return r;
}

/* ---- reading ahead on a second thread ----------------------------------------
 *
 * A large regular file is read and checksummed by a second thread while the
 * caller's decodes and delivers: the read-ahead thread fills blocks of
 * whole chunks (READ_AHEAD_BLOCKS of them in turn, READ_AHEAD_SIZE bytes or
 * one chunk if larger) with pread(2), checks each chunk's checksum, and
 * hands a block over with each chunk's verdict. It stops at the first chunk
 * it cannot take whole (a length over the maximum or past the end of the
 * file, a read error, the end of the file): the run goes on from that
 * chunk's offset through the buffer as before (reader_next_chunk()), which
 * says what is wrong there in its words. So the chunks, their order, the
 * damage and its offset are those of the plain read. */
#define READ_AHEAD_MIN (16u << 20)  /* smaller files: the plain read */
#define READ_AHEAD_SIZE (4u << 20)
#define READ_AHEAD_BLOCKS 3

struct ra_block {
	unsigned char *p;
	size_t cap, len;  /* len: bytes of whole chunks */
	uint64_t off;     /* the file offset of p[0] */
	uint8_t *bad;     /* by chunk: 1 when its checksum fails */
	size_t nchunks, bad_cap;
	int last;         /* the read-ahead stopped after this block, at off + len */
};

struct read_ahead {
	struct trace_reader *r;
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct ra_block b[READ_AHEAD_BLOCKS];
	unsigned filled, taken; /* blocks filled and handed back, counted from 0 */
	int stop;               /* the caller wants no more */
};

/* Reads [off, off + n) into p; the bytes read. */
static size_t ra_pread(int fd, unsigned char *p, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, p + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	return got;
}

static int ra_grow(unsigned char **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	unsigned char *q = realloc(*p, need);
	if (!q)
		return -1;
	*p = q;
	*cap = need;
	return 0;
}

static void *ra_thread(void *arg)
{
	struct read_ahead *ra = arg;
	struct trace_reader *r = ra->r;
	uint64_t off = r->cur;
	unsigned char *carry = NULL; /* a chunk's first bytes, read with the block before */
	size_t ncarry = 0, carry_cap = 0;
	for (unsigned k = 0;; k++) {
		pthread_mutex_lock(&ra->lock);
		while (!ra->stop && k - ra->taken >= READ_AHEAD_BLOCKS)
			pthread_cond_wait(&ra->cond, &ra->lock);
		int stop = ra->stop;
		pthread_mutex_unlock(&ra->lock);
		if (stop)
			break;
		struct ra_block *b = &ra->b[k % READ_AHEAD_BLOCKS];
		b->off = off;
		b->len = 0;
		b->nchunks = 0;
		b->last = 0;
		/* the block: the carried bytes, then READ_AHEAD_SIZE or up to the file's end */
		uint64_t left = r->file_size - off;
		size_t want = left < READ_AHEAD_SIZE ? (size_t)left : READ_AHEAD_SIZE;
		if (want < ncarry)
			want = ncarry;
		size_t have = ncarry;
		if (ra_grow(&b->p, &b->cap, want) != 0) {
			b->last = 1;
		} else {
			if (ncarry)
				memcpy(b->p, carry, ncarry);
			have += ra_pread(r->fd, b->p + ncarry, want - ncarry, off + ncarry);
			if (have < want)
				b->last = 1; /* a read error or a shorter file: the plain read says */
		}
		size_t at = 0;
		while (!b->last) {
			if (have - at < TRACE_CHUNK_HEADER_SIZE) {
				if (off + have == r->file_size)
					b->last = 1; /* the end, or a header cut short */
				break;
			}
			const unsigned char *h = b->p + at;
			uint32_t len = trace_le32(h + TRACE_CH_LENGTH);
			uint64_t size = TRACE_CHUNK_HEADER_SIZE + (uint64_t)len;
			if (len > TRACE_CHUNK_MAX_PAYLOAD || off + at + size > r->file_size) {
				b->last = 1;
				break;
			}
			if (have - at < size) {
				if (at == 0 && ra_grow(&b->p, &b->cap, (size_t)size) == 0) {
					/* a chunk larger than a block: all of it in this one */
					have += ra_pread(r->fd, b->p + have, (size_t)size - have, off + have);
					if (have < size)
						b->last = 1;
					continue;
				}
				break;
			}
			if (b->nchunks == b->bad_cap) {
				size_t cap = b->bad_cap ? b->bad_cap * 2 : 1024;
				uint8_t *q = realloc(b->bad, cap);
				if (!q) {
					b->last = 1;
					break;
				}
				b->bad = q;
				b->bad_cap = cap;
			}
			uint32_t crc = trace_le32(h + TRACE_CH_CRC);
			b->bad[b->nchunks++] =
				(uint32_t)crc32(crc32(0L, h, TRACE_CH_CRC), h + TRACE_CHUNK_HEADER_SIZE,
						len) != crc;
			at += (size_t)size;
		}
		b->len = at;
		ncarry = have - at;
		if (!b->last && (ra_grow(&carry, &carry_cap, ncarry) != 0))
			b->last = 1;
		if (!b->last)
			memcpy(carry, b->p + at, ncarry);
		off += at;
		pthread_mutex_lock(&ra->lock);
		ra->filled = k + 1;
		pthread_cond_broadcast(&ra->cond);
		pthread_mutex_unlock(&ra->lock);
		if (b->last)
			break;
	}
	free(carry);
	return NULL;
}

/* Whether to read ahead: a large regular file and a second thread to do it. */
static int ra_wanted(const struct trace_reader *r)
{
	return r->file_size != UINT64_MAX && r->file_size >= READ_AHEAD_MIN &&
	       r->file_size - r->cur >= READ_AHEAD_MIN && parallel_threads() > 1;
}

/* The plain read from r->cur on: the buffer emptied, the file at cur. */
static void ra_resync(struct trace_reader *r)
{
	r->buf_off = r->cur;
	r->buf_len = 0;
	r->eof = 0;
	if (lseek(r->fd, (off_t)r->cur, SEEK_SET) < 0) {
		r->io_errno = errno;
		r->eof = 1;
	}
}

/* The chunks the read-ahead took whole, delivered in order: 1 when the run
 * is over (damage, END, or rc a callback's result), 0 to go on with the
 * plain read from r->cur. */
static int ra_run(struct trace_reader *r, const struct trace_visitor *v, void *ctx, int *rc)
{
	struct read_ahead ra = {.r = r};
	int over = 0;
	pthread_mutex_init(&ra.lock, NULL);
	pthread_cond_init(&ra.cond, NULL);
	if (pthread_create(&ra.tid, NULL, ra_thread, &ra) != 0) {
		pthread_mutex_destroy(&ra.lock);
		pthread_cond_destroy(&ra.cond);
		return 0;
	}
	for (unsigned k = 0; !over; k++) {
		pthread_mutex_lock(&ra.lock);
		while (ra.filled <= k)
			pthread_cond_wait(&ra.cond, &ra.lock);
		pthread_mutex_unlock(&ra.lock);
		const struct ra_block *b = &ra.b[k % READ_AHEAD_BLOCKS];
		size_t at = 0;
		for (size_t i = 0; i < b->nchunks && !over; i++) {
			const unsigned char *h = b->p + at;
			struct reader_chunk c = {trace_le32(h + TRACE_CH_TYPE), trace_le32(h + TRACE_CH_LENGTH),
						 b->off + at, h + TRACE_CHUNK_HEADER_SIZE};
			if (b->bad[i]) {
				reader_damage(r, c.off, "checksum mismatch");
				over = 1;
				break;
			}
			at += TRACE_CHUNK_HEADER_SIZE + (size_t)c.len;
			r->cur += TRACE_CHUNK_HEADER_SIZE + (size_t)c.len;
			if (c.type == TRACE_CHUNK_END)
				ra_resync(r); /* it looks past itself with the plain read */
			*rc = reader_dispatch(r, &c, v, ctx);
			if (*rc != 0 || r->damaged || r->end_seen)
				over = 1;
		}
		int last = b->last;
		pthread_mutex_lock(&ra.lock);
		ra.taken = k + 1;
		if (over)
			ra.stop = 1;
		pthread_cond_broadcast(&ra.cond);
		pthread_mutex_unlock(&ra.lock);
		if (last)
			break;
	}
	pthread_join(ra.tid, NULL);
	for (unsigned k = 0; k < READ_AHEAD_BLOCKS; k++) {
		free(ra.b[k].p);
		free(ra.b[k].bad);
	}
	pthread_mutex_destroy(&ra.lock);
	pthread_cond_destroy(&ra.cond);
	if (!over)
		ra_resync(r);
	return over;
}

int trace_reader_run(struct trace_reader *r, const struct trace_visitor *v, void *ctx)
{
	static const struct trace_visitor none;
	struct reader_chunk c;
	int rc, got;

	if (r->ran)
		return 0;
	r->ran = 1;
	if (!v)
		v = &none;
	if (v->header && (rc = v->header(ctx, &r->hdr)) != 0)
		return rc;
	rc = 0;
	if (ra_wanted(r) && ra_run(r, v, ctx, &rc)) {
		if (rc != 0 && !r->damaged)
			return rc;
		if (!r->damaged && !r->end_seen)
			reader_damage(r, r->cur, READER_NO_END);
		return 0;
	}
	while (!r->damaged && !r->end_seen && (got = reader_next_chunk(r, &c)) != 0) {
		if (got < 0)
			break;
		rc = reader_dispatch(r, &c, v, ctx);
		if (rc != 0 && !r->damaged)
			return rc;
	}
	if (!r->damaged && !r->end_seen)
		reader_damage(r, r->cur, READER_NO_END);
	return 0;
}

void trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (uint32_t i = 0; i < r->nblocks; i++)
		free(r->blocks[i]);
	free(r->blocks);
	free(r->strs);
	reader_pages_free(&r->descs);
	reader_pages_free(&r->threads);
	reader_pages_free(&r->procs);
	free(r->proc_map.slot);
	reader_pages_free(&r->cats);
	free(r->cat_map.slot);
	reader_pages_free(&r->devs);
	free(r->dev_map.slot);
	free(r->launches);
	free(r->batch);
	free(r->zcols);
	free(r->zrecs);
	ZSTD_freeDCtx(r->zd);
	free(r->buf);
	free(r);
}

/* ---- queries ------------------------------------------------------------------ */

uint64_t trace_reader_offset(const struct trace_reader *r)
{
	return r->cur;
}

const struct trace_header *trace_reader_header(const struct trace_reader *r)
{
	return &r->hdr;
}

const char *trace_reader_string(const struct trace_reader *r, uint32_t id)
{
	return id >= 1 && id <= r->nstr ? r->strs[id] : "";
}

const struct trace_desc *trace_reader_desc(const struct trace_reader *r, uint32_t id)
{
	return id >= 1 && id <= r->descs.n ? reader_desc_at(r, id - 1) : NULL;
}

const struct trace_thread *trace_reader_thread(const struct trace_reader *r, uint32_t index)
{
	return index < r->threads.n ? reader_thread_at(r, index) : NULL;
}

uint32_t trace_reader_thread_count(const struct trace_reader *r)
{
	return r->threads.n;
}

const struct trace_process *trace_reader_process(const struct trace_reader *r, uint32_t i)
{
	return i < r->procs.n ? reader_proc_at(r, i) : NULL;
}

uint32_t trace_reader_process_count(const struct trace_reader *r)
{
	return r->procs.n;
}

uint32_t trace_reader_desc_count(const struct trace_reader *r)
{
	return r->descs.n;
}

const char *trace_reader_category_name(const struct trace_reader *r, uint32_t domain_str,
				       uint32_t category)
{
	struct trace_category key = { domain_str, category, 0 };
	const uint32_t *slot;

	if (!r->cats.n)
		return NULL;
	slot = reader_cat_slot(r, &key);
	return *slot ? trace_reader_string(r, reader_cat_at(r, *slot - 1)->name_str) : NULL;
}

uint32_t trace_reader_device_count(const struct trace_reader *r)
{
	return r->devs.n;
}

const struct trace_device *trace_reader_device(const struct trace_reader *r, uint32_t i)
{
	return i < r->devs.n ? reader_dev_at(r, i) : NULL;
}

const struct trace_device *trace_reader_device_by_id(const struct trace_reader *r, uint32_t id)
{
	const uint32_t *slot;

	if (!r->devs.n)
		return NULL;
	slot = reader_dev_slot(r, id);
	return *slot ? reader_dev_at(r, *slot - 1) : NULL;
}

uint64_t trace_reader_total_drops(const struct trace_reader *r)
{
	return r->total_drops;
}

uint64_t trace_reader_drops_by_reason(const struct trace_reader *r, unsigned reason)
{
	return r->drops_by_reason[reason < TRACE_DROP_REASON_COUNT ? reason
								   : TRACE_DROP_REASON_COUNT];
}

const char *trace_reader_damage(const struct trace_reader *r, uint64_t *offset)
{
	if (!r->damaged)
		return NULL;
	if (offset)
		*offset = r->damage_off;
	return r->damage;
}

uint64_t trace_reader_file_size(const struct trace_reader *r)
{
	return r->file_size != UINT64_MAX ? r->file_size : r->cur;
}

static int pid_cmp(const void *k, const void *e)
{
	uint32_t a = *(const uint32_t *)k, b = *(const uint32_t *)e;
	return (a > b) - (a < b);
}

int trace_pids_has(const struct trace_pids *p, uint32_t pid)
{
	if (!p)
		return 1;
	int listed = p->n && bsearch(&pid, p->pids, p->n, sizeof(pid), pid_cmp);
	return listed != p->exclude;
}
