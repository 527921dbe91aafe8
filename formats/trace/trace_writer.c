/*
 * trace_writer.c - writes trace format 3.0 (formats/TRACE-FORMAT.md).
 *
 * The launcher calls this while the target runs, so nothing here makes a
 * system call per record: records go to per-thread event buffers and pending
 * table chunks, chunks go to one output buffer, and the output buffer goes to
 * the file in large writes.
 *
 * Invariants:
 *  - a chunk that references a string, desc, category, process or thread is
 *    written after the chunk that defines it: every emission of a referencing
 *    chunk first empties the pending tables, strings first (writer_flush_tables);
 *  - META is the first chunk after the STRS chunks its strings need;
 *  - the start times in one events buffer span at most UINT32_MAX ns, so each
 *    fits a u32 delta from the buffer's minimum; the non-zero correlation and
 *    external ids of one EVNX buffer span at most TRACE_EXT_ID_SPAN_MAX, so
 *    each fits a u32 offset from one less than the buffer's least;
 *  - a launch configuration is interned (LCFG) when its event is buffered, so
 *    its table record is pending, and written first, when the event's chunk is;
 *  - each track has one buffer of compact events (EVNT, 16 bytes each) and
 *    WRITER_EXT_BUFS of events with details (EVNX), each for one set of
 *    detail groups, so that a track's launches, kernels, copies and memory
 *    events are each as wide as their own details; an event whose details
 *    are all zero is compact, so a host-only trace never pays for details;
 *  - an EVNX buffer's records, at the width its group mask gives them, fit one
 *    64 KiB chunk;
 *  - errors are sticky: after the first failure every call returns it again,
 *    so the launcher can check once, at close.
 */
#include "formats/trace/trace.h"
#include "formats/trace/trace_format.h"
#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* One events chunk is 64 KiB on disk: header, sub-header and this many records. */
#define WRITER_EVENTS_PER_CHUNK \
	((65536 - TRACE_CHUNK_HEADER_SIZE - TRACE_EVENTS_HEADER_SIZE) / TRACE_EVENT_SIZE)
/* All threads' buffered events together; beyond it every buffer is flushed, so
 * memory stays bounded however many threads come and go. */
#define WRITER_EVENTS_BUFFERED_MAX (1u << 20)
#define WRITER_TABLE_FLUSH (256u << 10) /* pending table payload that triggers a flush */
#define WRITER_OUT_FLUSH (256u << 10)   /* output bytes buffered before a write(2) */

struct wbuf {
	unsigned char *p;
	size_t len, cap;
};

/* Largest EVNX payload that keeps the chunk at 64 KiB, and its record bytes. */
#define WRITER_EXT_CHUNK_RECORDS (65536 - TRACE_CHUNK_HEADER_SIZE - TRACE_EVENTS_EXT_HEADER_SIZE)
/* A buffered event with details takes about this many compact ones' memory. */
#define WRITER_EXT_WEIGHT 5

/* An event as buffered: its absolute start, until the chunk's base is known. */
struct wevent {
	uint64_t start;
	uint64_t dur_flags;
	uint32_t desc;
};

struct wxevent {
	struct wevent e;
	struct trace_event_ext ext;
	uint32_t launch; /* LCFG id, 0: none */
};

/* The least and largest non-zero id (correlation or external) of a buffer;
 * lo > hi while it has none. */
struct wspan {
	uint64_t lo, hi;
};

/* Events with details, all written with the groups in `groups`. */
struct wxbuf {
	struct wxevent *ev;
	uint32_t n, cap;
	uint64_t min_start, max_start;
	struct wspan corr, xid;
	uint32_t groups;
};

/* Sets of detail groups a track keeps apart: a host thread's operators (with
 * sequence numbers, shapes or both), steps, launches, memory events and
 * collectives (with and without bytes: a barrier has none); a stream's
 * kernels and copies. A ninth set shares the buffer it widens least. */
#define WRITER_EXT_BUFS 8

struct wthread {
	struct wevent *ev;
	uint32_t n, cap;
	uint64_t min_start, max_start;
	struct wxbuf xb[WRITER_EXT_BUFS]; /* events with details */
	uint8_t kind;
	int ended;
};

struct wstr {
	size_t off;
	uint32_t len;
};

struct wdesc {
	uint32_t name_str, domain_str, category;
	uint8_t type;
};

/* A kernel launch configuration: grid[3], block[3], registers, static, dynamic. */
#define WRITER_LAUNCH_FIELDS 9
struct wlaunch {
	uint32_t v[WRITER_LAUNCH_FIELDS];
};

struct trace_writer {
	int fd;
	int own_fd;         /* close fd at the end (trace_writer_fdopen's choice) */
	struct outfile *of; /* trace_writer_open's: a temporary file renamed at close */
	int err; /* sticky errno, 0 while healthy */
	int meta_written;
	uint64_t bytes; /* emitted chunk bytes: written or in out */
	struct wbuf out;

	/* interned strings: id i is str_arena bytes [strs[i].off, + strs[i].len) */
	struct wbuf str_arena;
	struct wstr *strs;
	uint32_t nstr, str_cap;
	uint32_t *str_hash; /* open addressing, string ids, 0: empty */
	uint32_t str_hash_cap;
	uint32_t nstr_hashed; /* ids in str_hash (appended strings are not) */

	struct wdesc *descs; /* descs[id - 1] */
	uint32_t ndesc, desc_cap;
	uint32_t *desc_hash;
	uint32_t desc_hash_cap;
	uint32_t ndesc_hashed; /* ids in desc_hash */

	struct wlaunch *launches; /* launches[id - 1] */
	uint32_t nlaunch, launch_cap;
	uint32_t *launch_hash;
	uint32_t launch_hash_cap;

	struct wthread *threads;
	uint32_t nthreads, thread_cap;
	uint64_t events_buffered;

	/* pending chunk payloads; each starts with its 8-byte sub-header */
	struct wbuf pend_strs, pend_descs, pend_cats, pend_procs, pend_threads;
	struct wbuf pend_counters, pend_drops, pend_devs, pend_launches;
	uint32_t pend_strs_first;
	uint32_t n_pend_strs, n_pend_descs, n_pend_cats, n_pend_procs, n_pend_threads;
	uint32_t n_pend_counters, n_pend_drops, n_pend_devs, n_pend_launches;

	struct wbuf scratch; /* an events chunk's payload while it is encoded */
	/* EVNZ: an EVNX payload by columns, and compressed */
	struct wbuf zcols, zout;
	ZSTD_CCtx *zc;
};

static int writer_fail(struct trace_writer *w, int e)
{
	if (!w->err)
		w->err = e;
	errno = w->err;
	return -1;
}

/* A call with bad arguments fails alone: one bad record from a ring must not
 * cost the launcher the rest of the trace. */
static int writer_reject(void)
{
	errno = EINVAL;
	return -1;
}

static void *wbuf_reserve(struct trace_writer *w, struct wbuf *b, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap - b->len < n)
			cap *= 2;
		unsigned char *p = realloc(b->p, cap);
		if (!p) {
			writer_fail(w, ENOMEM);
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	void *r = b->p + b->len;
	b->len += n;
	return r;
}

static int writer_write_out(struct trace_writer *w)
{
	size_t done = 0;
	while (done < w->out.len) {
		ssize_t n = write(w->fd, w->out.p + done, w->out.len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return writer_fail(w, n < 0 ? errno : EIO);
		done += (size_t)n;
	}
	w->out.len = 0;
	return 0;
}

static int writer_emit(struct trace_writer *w, uint32_t type, const void *payload, size_t len)
{
	unsigned char *h;
	uLong crc;

	if (w->err)
		return writer_fail(w, w->err);
	if (len > TRACE_CHUNK_MAX_PAYLOAD)
		return writer_fail(w, EOVERFLOW);
	h = wbuf_reserve(w, &w->out, TRACE_CHUNK_HEADER_SIZE + len);
	if (!h)
		return -1;
	trace_put32(h + TRACE_CH_TYPE, type);
	trace_put32(h + TRACE_CH_LENGTH, (uint32_t)len);
	trace_put32(h + TRACE_CH_FLAGS, 0);
	crc = crc32(0L, h, TRACE_CH_CRC);
	crc = crc32(crc, payload, (uInt)len);
	trace_put32(h + TRACE_CH_CRC, (uint32_t)crc);
	memcpy(h + TRACE_CHUNK_HEADER_SIZE, payload, len);
	w->bytes += TRACE_CHUNK_HEADER_SIZE + len;
	if (w->out.len >= WRITER_OUT_FLUSH)
		return writer_write_out(w);
	return 0;
}

/* Emits a pending chunk whose first 8 bytes are left for its sub-header. */
static int writer_emit_pending(struct trace_writer *w, uint32_t type, struct wbuf *b,
			       uint32_t *count, uint32_t first_or_size)
{
	int rc;

	if (!*count)
		return 0;
	if (type == TRACE_CHUNK_STRINGS) {
		trace_put32(b->p, first_or_size);
		trace_put32(b->p + 4, *count);
	} else {
		trace_put32(b->p, *count);
		trace_put32(b->p + 4, first_or_size);
	}
	rc = writer_emit(w, type, b->p, b->len);
	b->len = TRACE_TABLE_HEADER_SIZE;
	*count = 0;
	return rc;
}

static int writer_flush_strings(struct trace_writer *w)
{
	int rc = writer_emit_pending(w, TRACE_CHUNK_STRINGS, &w->pend_strs, &w->n_pend_strs,
				     w->pend_strs_first);
	w->pend_strs_first = w->nstr + 1;
	return rc;
}

static int writer_write_meta(struct trace_writer *w, const struct trace_header *h,
			     const uint32_t strs[6]);

/* A META with defaults, for a writer whose caller never gave a header. */
static int writer_ensure_meta(struct trace_writer *w)
{
	static const uint32_t none[6];
	struct trace_header h = { .rank = -1, .world_size = -1, .local_rank = -1 };

	if (w->meta_written)
		return 0;
	return writer_write_meta(w, &h, none);
}

static int writer_flush_tables(struct trace_writer *w)
{
	if (writer_ensure_meta(w) < 0 || writer_flush_strings(w) < 0)
		return -1;
	if (writer_emit_pending(w, TRACE_CHUNK_DESCS, &w->pend_descs, &w->n_pend_descs,
				TRACE_DESC_SIZE) < 0 ||
	    writer_emit_pending(w, TRACE_CHUNK_CATEGORIES, &w->pend_cats, &w->n_pend_cats,
				TRACE_CATEGORY_SIZE) < 0 ||
	    writer_emit_pending(w, TRACE_CHUNK_PROCESSES, &w->pend_procs, &w->n_pend_procs,
				TRACE_PROCESS_SIZE_2_1) < 0 ||
	    writer_emit_pending(w, TRACE_CHUNK_THREADS, &w->pend_threads, &w->n_pend_threads,
				TRACE_THREAD_SIZE_1_1) < 0 ||
	    writer_emit_pending(w, TRACE_CHUNK_DEVICES, &w->pend_devs, &w->n_pend_devs,
				TRACE_DEVICE_SIZE) < 0 ||
	    writer_emit_pending(w, TRACE_CHUNK_LAUNCHES, &w->pend_launches, &w->n_pend_launches,
				TRACE_LAUNCH_SIZE) < 0)
		return -1;
	return 0;
}

static int writer_write_meta(struct trace_writer *w, const struct trace_header *h,
			     const uint32_t strs[6])
{
	unsigned char m[TRACE_META_SIZE_2_1];

	w->meta_written = 1; /* before the strings flush, which would recurse here */
	if (writer_flush_strings(w) < 0)
		return -1;
	trace_put32(m + TRACE_META_SOURCES, h->sources);
	trace_put32(m + TRACE_META_PID, h->pid);
	trace_put32(m + TRACE_META_RANK, (uint32_t)h->rank);
	trace_put32(m + TRACE_META_NCPUS, h->ncpus);
	trace_put64(m + TRACE_META_WALL_OFFSET, (uint64_t)h->wall_offset_ns);
	trace_put64(m + TRACE_META_START, h->start_ns);
	trace_put32(m + TRACE_META_CLOCK_STR, strs[0]);
	trace_put32(m + TRACE_META_HOST_STR, strs[1]);
	trace_put32(m + TRACE_META_CMDLINE_STR, strs[2]);
	trace_put32(m + TRACE_META_VERSION_STR, strs[3]);
	trace_put32(m + TRACE_META_WORLD_SIZE, (uint32_t)h->world_size);
	trace_put32(m + TRACE_META_BACKEND_STR, strs[4]);
	trace_put32(m + TRACE_META_LOCAL_RANK, (uint32_t)h->local_rank);
	trace_put32(m + TRACE_META_JOB_STR, strs[5]);
	return writer_emit(w, TRACE_CHUNK_META, m, sizeof(m));
}

static void writer_free(struct trace_writer *w);

static int writer_write_file_header(struct trace_writer *w)
{
	unsigned char *h = wbuf_reserve(w, &w->out, TRACE_FILE_HEADER_SIZE);

	if (!h)
		return -1;
	memset(h, 0, TRACE_FILE_HEADER_SIZE);
	memcpy(h + TRACE_FH_MAGIC, TRACE_MAGIC, TRACE_MAGIC_LEN);
	trace_put16(h + TRACE_FH_VERSION_MAJOR, TRACE_FORMAT_VERSION_MAJOR);
	trace_put16(h + TRACE_FH_VERSION_MINOR, TRACE_FORMAT_VERSION_MINOR);
	trace_put32(h + TRACE_FH_HEADER_SIZE, TRACE_FILE_HEADER_SIZE);
	trace_put32(h + TRACE_FH_ENDIAN, TRACE_ENDIAN_TAG);
	trace_put32(h + TRACE_FH_FEATURES, TRACE_FEAT_NONE);
	trace_put32(h + TRACE_FH_CRC, (uint32_t)crc32(0L, h, TRACE_FH_CRC));
	w->bytes += TRACE_FILE_HEADER_SIZE;
	return 0;
}

/* A writer on fd, its buffers made and the file header buffered; NULL with
 * errno (fd left alone). */
static struct trace_writer *writer_new(int fd, int own)
{
	struct trace_writer *w = calloc(1, sizeof(*w));
	int e;

	if (!w)
		return NULL;
	w->fd = fd;
	w->own_fd = own;
	w->pend_strs_first = 1;
	if (!wbuf_reserve(w, &w->pend_strs, 8) || !wbuf_reserve(w, &w->pend_descs, 8) ||
	    !wbuf_reserve(w, &w->pend_cats, 8) || !wbuf_reserve(w, &w->pend_procs, 8) ||
	    !wbuf_reserve(w, &w->pend_threads, 8) || !wbuf_reserve(w, &w->pend_counters, 8) ||
	    !wbuf_reserve(w, &w->pend_drops, 8) || !wbuf_reserve(w, &w->pend_devs, 8) ||
	    !wbuf_reserve(w, &w->pend_launches, 8) || writer_write_file_header(w) < 0) {
		e = w->err ? w->err : ENOMEM;
		writer_free(w);
		errno = e;
		return NULL;
	}
	return w;
}

struct trace_writer *trace_writer_fdopen(int fd, int own)
{
	return writer_new(fd, own);
}

struct trace_writer *trace_writer_open(const char *path, int force)
{
	struct outfile *of = malloc(sizeof(*of));
	struct trace_writer *w;
	int e;

	if (!of)
		return NULL;
	if (outfile_open(of, path, force ? OUTFILE_FORCE : 0, 0644, NULL, 0) != 0) {
		e = errno;
		free(of);
		errno = e;
		return NULL;
	}
	w = writer_new(of->fd, 0);
	if (!w) {
		e = errno;
		outfile_abort(of);
		free(of);
		errno = e;
		return NULL;
	}
	w->of = of;
	return w;
}

/* ---- interning ------------------------------------------------------------ */

static uint32_t writer_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 16777619u;
	return h;
}

static uint32_t writer_hash_desc(const struct wdesc *d)
{
	uint32_t k[4] = { d->name_str, d->domain_str, d->category, d->type };
	return writer_hash_bytes(k, sizeof(k));
}

static int writer_str_equal(const struct trace_writer *w, uint32_t id, const char *s, size_t len)
{
	/* An empty string may live in an arena that was never allocated. */
	return w->strs[id].len == len && (len == 0 || !memcmp(w->str_arena.p + w->strs[id].off, s, len));
}

static int writer_desc_equal(const struct wdesc *a, const struct wdesc *b)
{
	return a->name_str == b->name_str && a->domain_str == b->domain_str &&
	       a->category == b->category && a->type == b->type;
}

/* Doubles an id hash table; hash_of(w, id) recomputes an entry's hash. */
static int writer_hash_grow(struct trace_writer *w, uint32_t **tab, uint32_t *cap,
			    uint32_t (*hash_of)(const struct trace_writer *, uint32_t))
{
	uint32_t ncap = *cap ? *cap * 2 : 1024;
	uint32_t *t = calloc(ncap, sizeof(*t));

	if (!t)
		return writer_fail(w, ENOMEM);
	for (uint32_t i = 0; i < *cap; i++) {
		uint32_t id = (*tab)[i], j;
		if (!id)
			continue;
		for (j = hash_of(w, id) & (ncap - 1); t[j]; j = (j + 1) & (ncap - 1))
			;
		t[j] = id;
	}
	free(*tab);
	*tab = t;
	*cap = ncap;
	return 0;
}

static uint32_t writer_str_hash_of(const struct trace_writer *w, uint32_t id)
{
	return writer_hash_bytes(w->str_arena.p + w->strs[id].off, w->strs[id].len);
}

static uint32_t writer_desc_hash_of(const struct trace_writer *w, uint32_t id)
{
	return writer_hash_desc(&w->descs[id - 1]);
}

static uint32_t writer_launch_hash_of(const struct trace_writer *w, uint32_t id)
{
	return writer_hash_bytes(w->launches[id - 1].v, sizeof(w->launches[id - 1].v));
}

static int writer_grow_array(struct trace_writer *w, void **arr, uint32_t *cap, uint32_t need,
			     size_t size)
{
	if (need <= *cap)
		return 0;
	uint32_t ncap = *cap ? *cap * 2 : 256;
	while (ncap < need)
		ncap *= 2;
	void *p = realloc(*arr, (size_t)ncap * size);
	if (!p)
		return writer_fail(w, ENOMEM);
	*arr = p;
	*cap = ncap;
	return 0;
}

static int writer_str_add(struct trace_writer *w, const char *s, size_t len)
{
	uint32_t id = w->nstr + 1;
	unsigned char *rec;

	/* strs is indexed by id, so it holds nstr + 2 slots */
	if (writer_grow_array(w, (void **)&w->strs, &w->str_cap, id + 1, sizeof(*w->strs)) < 0)
		return -1;
	if (w->pend_strs.len + 4 + len > WRITER_TABLE_FLUSH && writer_flush_strings(w) < 0)
		return -1;
	rec = wbuf_reserve(w, &w->pend_strs, 4 + len);
	if (!rec)
		return -1;
	trace_put32(rec, (uint32_t)len);
	w->strs[id].off = w->str_arena.len;
	w->strs[id].len = (uint32_t)len;
	if (len) {
		unsigned char *dst = wbuf_reserve(w, &w->str_arena, len);
		if (!dst)
			return -1;
		memcpy(dst, s, len);
		memcpy(rec + 4, s, len);
	}
	w->nstr = id;
	w->n_pend_strs++;
	return 0;
}

/* What every string must pass before it is added: 0 to go on (*len cut to
 * TRACE_STRING_MAX), -1 when the writer has failed or the string is bad. */
static int writer_string_ok(struct trace_writer *w, const char *s, size_t *len)
{
	if (w->err) {
		writer_fail(w, w->err);
		return -1;
	}
	if (!s && *len) {
		writer_reject();
		return -1;
	}
	if (*len > TRACE_STRING_MAX)
		*len = TRACE_STRING_MAX;
	return 0;
}

uint32_t trace_writer_string(struct trace_writer *w, const char *s, size_t len)
{
	uint32_t h, j;

	if (writer_string_ok(w, s, &len) < 0)
		return 0;
	if ((w->nstr_hashed + 1) * 2 > w->str_hash_cap &&
	    writer_hash_grow(w, &w->str_hash, &w->str_hash_cap, writer_str_hash_of) < 0)
		return 0;
	h = writer_hash_bytes(s, len);
	for (j = h & (w->str_hash_cap - 1); w->str_hash[j]; j = (j + 1) & (w->str_hash_cap - 1))
		if (writer_str_equal(w, w->str_hash[j], s, len))
			return w->str_hash[j];
	if (writer_str_add(w, s, len) < 0)
		return 0;
	w->str_hash[j] = w->nstr;
	w->nstr_hashed++;
	return w->nstr;
}

uint32_t trace_writer_string_append(struct trace_writer *w, const char *s, size_t len)
{
	if (writer_string_ok(w, s, &len) < 0)
		return 0;
	return writer_str_add(w, s, len) < 0 ? 0 : w->nstr;
}

const char *trace_writer_string_text(const struct trace_writer *w, uint32_t id, size_t *len)
{
	if (id == 0 || id > w->nstr || !w->strs[id].len) {
		*len = 0;
		return "";
	}
	*len = w->strs[id].len;
	return (const char *)w->str_arena.p + w->strs[id].off;
}

static int writer_str_known(const struct trace_writer *w, uint32_t id)
{
	return id <= w->nstr;
}

/* Room for one record of a pending table (b): NULL, errno set, when the
 * writer has failed, when one of the n string ids strs is not written yet (the
 * call fails alone, EINVAL), or when b cannot grow. */
static unsigned char *writer_table_rec(struct trace_writer *w, struct wbuf *b, size_t size,
				       const uint32_t *strs, int n)
{
	if (w->err) {
		writer_fail(w, w->err);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (!writer_str_known(w, strs[i])) {
			writer_reject();
			return NULL;
		}
	return wbuf_reserve(w, b, size);
}

static int writer_pending_full(struct trace_writer *w, const struct wbuf *b)
{
	return b->len >= WRITER_TABLE_FLUSH ? writer_flush_tables(w) : 0;
}

/* Adds a desc with no lookup: its id, 0 on error. */
static uint32_t writer_desc_add(struct trace_writer *w, const struct wdesc *d)
{
	unsigned char *rec;
	uint32_t id;

	if (writer_grow_array(w, (void **)&w->descs, &w->desc_cap, w->ndesc + 1, sizeof(*d)) < 0)
		return 0;
	rec = wbuf_reserve(w, &w->pend_descs, TRACE_DESC_SIZE);
	if (!rec)
		return 0;
	id = ++w->ndesc;
	w->descs[id - 1] = *d;
	trace_put32(rec, id);
	trace_put32(rec + 4, d->name_str);
	trace_put32(rec + 8, d->domain_str);
	trace_put32(rec + 12, d->category);
	rec[16] = d->type;
	rec[17] = rec[18] = rec[19] = 0;
	w->n_pend_descs++;
	if (writer_pending_full(w, &w->pend_descs) < 0)
		return 0;
	return id;
}

/* Whether d may be added: the writer has not failed, and it knows d's
 * strings (a rejected desc is counted by writer_reject()). */
static int writer_desc_ok(struct trace_writer *w, const struct wdesc *d)
{
	if (w->err) {
		writer_fail(w, w->err);
		return 0;
	}
	if (!writer_str_known(w, d->name_str) || !writer_str_known(w, d->domain_str)) {
		writer_reject();
		return 0;
	}
	return 1;
}

uint32_t trace_writer_desc(struct trace_writer *w, uint32_t name_str, uint32_t domain_str,
			   uint32_t category, uint8_t type)
{
	struct wdesc d = { name_str, domain_str, category, type };
	uint32_t j, id;

	if (!writer_desc_ok(w, &d))
		return 0;
	if ((w->ndesc_hashed + 1) * 2 > w->desc_hash_cap &&
	    writer_hash_grow(w, &w->desc_hash, &w->desc_hash_cap, writer_desc_hash_of) < 0)
		return 0;
	for (j = writer_hash_desc(&d) & (w->desc_hash_cap - 1); w->desc_hash[j];
	     j = (j + 1) & (w->desc_hash_cap - 1))
		if (writer_desc_equal(&w->descs[w->desc_hash[j] - 1], &d))
			return w->desc_hash[j];
	id = writer_desc_add(w, &d);
	if (id) {
		w->desc_hash[j] = id;
		w->ndesc_hashed++;
	}
	return id;
}

uint32_t trace_writer_desc_append(struct trace_writer *w, uint32_t name_str, uint32_t domain_str,
				  uint32_t category, uint8_t type)
{
	struct wdesc d = { name_str, domain_str, category, type };

	return writer_desc_ok(w, &d) ? writer_desc_add(w, &d) : 0;
}

/* ---- records ---------------------------------------------------------------- */

int trace_writer_header(struct trace_writer *w, const struct trace_header *h)
{
	const char *s[6] = { h->clock_domain, h->hostname, h->cmdline, h->gprof_version,
			     h->dist_backend, h->job_id };
	uint32_t ids[6] = { 0 };

	if (w->err)
		return writer_fail(w, w->err);
	if (w->meta_written)
		return writer_reject();
	for (int i = 0; i < 6; i++)
		if (s[i] && (i < 5 || *s[i]) && !(ids[i] = trace_writer_string(w, s[i], strlen(s[i]))))
			return -1;
	return writer_write_meta(w, h, ids);
}

int trace_writer_category(struct trace_writer *w, const struct trace_category *c)
{
	const uint32_t strs[] = {c->domain_str, c->name_str};
	unsigned char *rec = writer_table_rec(w, &w->pend_cats, TRACE_CATEGORY_SIZE, strs, 2);

	if (!rec)
		return -1;
	trace_put32(rec, c->domain_str);
	trace_put32(rec + 4, c->category);
	trace_put32(rec + 8, c->name_str);
	w->n_pend_cats++;
	return writer_pending_full(w, &w->pend_cats);
}

int trace_writer_process(struct trace_writer *w, const struct trace_process *p)
{
	const uint32_t strs[] = {p->cmdline_str, p->backend_str, p->job_str};
	unsigned char *rec = writer_table_rec(w, &w->pend_procs, TRACE_PROCESS_SIZE_2_1, strs, 3);

	if (!rec)
		return -1;
	trace_put32(rec, p->pid);
	trace_put32(rec + 4, p->ppid);
	trace_put64(rec + 8, p->start_ns);
	trace_put64(rec + 16, p->end_ns);
	trace_put32(rec + 24, (uint32_t)p->exit_status);
	trace_put32(rec + 28, p->cmdline_str);
	trace_put32(rec + TRACE_PROC_RANK, (uint32_t)p->rank);
	trace_put32(rec + TRACE_PROC_LOCAL_RANK, (uint32_t)p->local_rank);
	trace_put32(rec + TRACE_PROC_WORLD_SIZE, (uint32_t)p->world_size);
	trace_put32(rec + TRACE_PROC_BACKEND_STR, p->backend_str);
	trace_put32(rec + TRACE_PROC_EXIT_SIGNAL, (uint32_t)p->exit_signal);
	trace_put32(rec + TRACE_PROC_JOB_STR, p->job_str);
	w->n_pend_procs++;
	return writer_pending_full(w, &w->pend_procs);
}

int trace_writer_thread(struct trace_writer *w, const struct trace_thread *t)
{
	unsigned char *rec;

	if (w->err)
		return writer_fail(w, w->err);
	if (t->index > w->nthreads || !writer_str_known(w, t->name_str) ||
	    t->kind > TRACE_TRACK_STREAM ||
	    (t->index < w->nthreads && w->threads[t->index].kind != t->kind))
		return writer_reject();
	if (t->index == w->nthreads) {
		if (writer_grow_array(w, (void **)&w->threads, &w->thread_cap, t->index + 1,
				      sizeof(*w->threads)) < 0)
			return -1;
		memset(&w->threads[t->index], 0, sizeof(*w->threads));
		w->threads[t->index].kind = t->kind;
		w->nthreads++;
	}
	w->threads[t->index].ended = t->end_ns != 0;
	rec = wbuf_reserve(w, &w->pend_threads, TRACE_THREAD_SIZE_1_1);
	if (!rec)
		return -1;
	trace_put32(rec, t->index);
	trace_put32(rec + 4, t->pid);
	trace_put32(rec + 8, t->tid);
	trace_put32(rec + 12, t->name_str);
	trace_put64(rec + 16, t->start_ns);
	trace_put64(rec + 24, t->end_ns);
	rec[TRACE_THREAD_KIND] = t->kind;
	rec[TRACE_THREAD_KIND + 1] = rec[TRACE_THREAD_KIND + 2] = rec[TRACE_THREAD_KIND + 3] = 0;
	trace_put32(rec + TRACE_THREAD_DEVICE, t->device);
	trace_put32(rec + TRACE_THREAD_CONTEXT, t->context);
	trace_put64(rec + TRACE_THREAD_STREAM, t->stream);
	w->n_pend_threads++;
	return writer_pending_full(w, &w->pend_threads);
}

/* ---- events ------------------------------------------------------------------ */

/* Whether a sequence number fits the SEQ group's u32 (stored + 1). */
static int writer_seq_narrow(int64_t seq)
{
	return seq >= 0 && seq <= TRACE_EXT_SEQ_NARROW_MAX;
}

/* The EVNX groups in which ext has a non-zero field. */
static uint32_t writer_ext_groups(const struct trace_event_ext *x)
{
	uint32_t g = 0;

	if (x->correlation)
		g |= TRACE_EXTG_CORRELATION;
	if (x->external_id)
		g |= TRACE_EXTG_EXTERNAL;
	if (x->grid[0] | x->grid[1] | x->grid[2] | x->block[0] | x->block[1] | x->block[2] |
	    x->registers | x->static_smem | x->dynamic_smem)
		g |= TRACE_EXTG_LAUNCH;
	if (x->bytes || x->copy_kind || x->src_kind || x->dst_kind || x->is_async)
		g |= TRACE_EXTG_TRANSFER;
	if (x->address || x->total_allocated)
		g |= TRACE_EXTG_ALLOC;
	if (x->device)
		g |= TRACE_EXTG_DEVICE;
	if (x->has_seq) {
		g |= TRACE_EXTG_SEQ;
		if (!writer_seq_narrow(x->seq_nr))
			g |= TRACE_EXTG_SEQ64;
	}
	if (x->shapes_str)
		g |= TRACE_EXTG_SHAPES;
	if (x->samples)
		g |= TRACE_EXTG_SAMPLES;
	if (x->has_coll_seq || x->pg_str || x->group_size || x->dtype_str || x->has_peer)
		g |= TRACE_EXTG_COLLECTIVE;
	if (x->sched_cpu_ns)
		g |= TRACE_EXTG_SCHED;
	return g;
}

/* Whether x's string ids are defined and its collective fields fit their
 * stored form (seq + 1 in a u64, peer + 1 in a u32). */
static int writer_ext_ok(const struct trace_writer *w, const struct trace_event_ext *x)
{
	return writer_str_known(w, x->shapes_str) && writer_str_known(w, x->pg_str) &&
	       writer_str_known(w, x->dtype_str) &&
	       !(x->has_coll_seq && x->coll_seq == UINT64_MAX) && !(x->has_peer && x->peer < 0);
}

/* The LCFG id of x's launch configuration, interning it: 0 on error. */
static uint32_t writer_launch(struct trace_writer *w, const struct trace_event_ext *x)
{
	struct wlaunch l = { { x->grid[0], x->grid[1], x->grid[2], x->block[0], x->block[1],
			       x->block[2], x->registers, x->static_smem, x->dynamic_smem } };
	unsigned char *rec;
	uint32_t j, id;

	if ((w->nlaunch + 1) * 2 > w->launch_hash_cap &&
	    writer_hash_grow(w, &w->launch_hash, &w->launch_hash_cap, writer_launch_hash_of) < 0)
		return 0;
	for (j = writer_hash_bytes(l.v, sizeof(l.v)) & (w->launch_hash_cap - 1); w->launch_hash[j];
	     j = (j + 1) & (w->launch_hash_cap - 1))
		if (!memcmp(w->launches[w->launch_hash[j] - 1].v, l.v, sizeof(l.v)))
			return w->launch_hash[j];
	if (writer_grow_array(w, (void **)&w->launches, &w->launch_cap, w->nlaunch + 1,
			      sizeof(l)) < 0)
		return 0;
	rec = wbuf_reserve(w, &w->pend_launches, TRACE_LAUNCH_SIZE);
	if (!rec)
		return 0;
	id = ++w->nlaunch;
	w->launches[id - 1] = l;
	w->launch_hash[j] = id;
	trace_put32(rec, id);
	for (int i = 0; i < WRITER_LAUNCH_FIELDS; i++)
		trace_put32(rec + 4 + 4 * i, l.v[i]);
	w->n_pend_launches++;
	if (writer_pending_full(w, &w->pend_launches) < 0)
		return 0;
	return id;
}

/* An id as stored: 0 for none, else its offset from base (one less than the
 * buffer's least non-zero id). */
static uint32_t writer_id_delta(uint64_t id, uint64_t base)
{
	return id ? (uint32_t)(id - base) : 0;
}

static uint64_t writer_id_base(const struct wspan *s)
{
	return s->lo <= s->hi ? s->lo - 1 : 0;
}

/* Whether id would stretch span past a u32 offset. */
static int writer_id_full(const struct wspan *s, uint64_t id)
{
	uint64_t lo = s->lo, hi = s->hi;

	if (!id || lo > hi)
		return 0;
	if (id < lo)
		lo = id;
	if (id > hi)
		hi = id;
	return hi - lo > TRACE_EXT_ID_SPAN_MAX;
}

static void writer_id_add(struct wspan *s, uint64_t id)
{
	if (!id)
		return;
	if (s->lo > s->hi) {
		s->lo = s->hi = id;
		return;
	}
	if (id < s->lo)
		s->lo = id;
	if (id > s->hi)
		s->hi = id;
}

static void writer_id_reset(struct wspan *s)
{
	s->lo = UINT64_MAX;
	s->hi = 0;
}

/* A 32- or 64-bit field at q; where the next one goes. */
static inline unsigned char *put32(unsigned char *q, uint32_t v)
{
	trace_put32(q, v);
	return q + 4;
}

static inline unsigned char *put64(unsigned char *q, uint64_t v)
{
	trace_put64(q, v);
	return q + 8;
}

/* Encodes xe's groups in mask at p, ids from the bases; returns the bytes written. */
static size_t writer_put_ext(unsigned char *p, const struct wxevent *xe, uint32_t mask,
			     uint64_t corr_base, uint64_t ext_base)
{
	const struct trace_event_ext *x = &xe->ext;
	unsigned char *q = p;

	if (mask & TRACE_EXTG_CORRELATION)
		q = put32(q, writer_id_delta(x->correlation, corr_base));
	if (mask & TRACE_EXTG_EXTERNAL)
		q = put32(q, writer_id_delta(x->external_id, ext_base));
	if (mask & TRACE_EXTG_LAUNCH)
		q = put32(q, xe->launch);
	if (mask & TRACE_EXTG_TRANSFER) {
		trace_put64(q, x->bytes);
		q[8] = x->copy_kind;
		q[9] = x->src_kind;
		q[10] = x->dst_kind;
		q[11] = x->is_async;
		q += 12;
	}
	if (mask & TRACE_EXTG_ALLOC)
		q = put64(put64(q, x->address), x->total_allocated);
	if (mask & TRACE_EXTG_DEVICE)
		q = put32(q, (uint32_t)x->device);
	if (mask & TRACE_EXTG_SEQ) {
		uint32_t v = !x->has_seq ? 0
			     : writer_seq_narrow(x->seq_nr) ? (uint32_t)x->seq_nr + 1
							    : TRACE_EXT_SEQ_WIDE;
		q = put32(q, v);
	}
	if (mask & TRACE_EXTG_SEQ64)
		q = put64(q, x->has_seq && !writer_seq_narrow(x->seq_nr) ? (uint64_t)x->seq_nr : 0);
	if (mask & TRACE_EXTG_SHAPES)
		q = put32(q, x->shapes_str);
	if (mask & TRACE_EXTG_SAMPLES)
		q = put64(q, x->samples);
	if (mask & TRACE_EXTG_COLLECTIVE) {
		trace_put64(q + TRACE_COLL_SEQ, x->has_coll_seq ? x->coll_seq + 1 : 0);
		trace_put32(q + TRACE_COLL_PG_STR, x->pg_str);
		trace_put32(q + TRACE_COLL_GROUP_SIZE, x->group_size);
		trace_put32(q + TRACE_COLL_DTYPE_STR, x->dtype_str);
		trace_put32(q + TRACE_COLL_PEER, x->has_peer ? (uint32_t)x->peer + 1 : 0);
		q += TRACE_EXTG_COLLECTIVE_SIZE;
	}
	if (mask & TRACE_EXTG_SCHED) {
		trace_put64(q, x->sched_cpu_ns);
		trace_put64(q + 8, x->sched_cpu_ns ? x->sched_runq_ns : 0);
		q += TRACE_EXTG_SCHED_SIZE;
	}
	return (size_t)(q - p);
}

static void writer_put_event(unsigned char *p, const struct wevent *e, uint64_t base)
{
	trace_put64(p, e->dur_flags);
	trace_put32(p + 8, (uint32_t)(e->start - base));
	trace_put32(p + 12, e->desc);
}

/* The 12-byte record of EVNS (2.0). */
static void writer_put_short_event(unsigned char *p, const struct wevent *e, uint64_t base)
{
	trace_put32(p + TRACE_EVS_START, (uint32_t)(e->start - base));
	trace_put32(p + TRACE_EVS_DUR, (uint32_t)(e->dur_flags & TRACE_EVENT_DUR_MAX));
	trace_put32(p + TRACE_EVS_DESC_FLAGS,
		    e->desc | (uint32_t)(e->dur_flags >> TRACE_EVENT_DUR_BITS)
				      << TRACE_EVENT_SHORT_DESC_BITS);
}

/* Whether every buffered event fits an EVNS record: a duration of 32 bits
 * (4.29 s: all but the longest ranges) and a desc id of 24. */
static int writer_fits_short(const struct wthread *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		if ((t->ev[i].dur_flags & TRACE_EVENT_DUR_MAX) > UINT32_MAX ||
		    t->ev[i].desc > TRACE_EVENT_SHORT_DESC_MAX)
			return 0;
	return 1;
}

/* Room for an events chunk of len bytes in the scratch buffer, the pending
 * tables written first (the strings and descs its events name come before
 * it in the file); NULL on error. */
static unsigned char *writer_chunk_room(struct trace_writer *w, size_t len)
{
	if (writer_flush_tables(w) < 0)
		return NULL;
	w->scratch.len = 0;
	return wbuf_reserve(w, &w->scratch, len);
}

/* Writes one thread's buffered compact events as a chunk, base = their
 * earliest start: EVNS when they all fit its records, EVNT otherwise. */
static int writer_flush_compact(struct trace_writer *w, uint32_t index)
{
	struct wthread *t = &w->threads[index];
	const int shrt = writer_fits_short(t);
	const uint32_t rs = shrt ? TRACE_EVENT_SHORT_SIZE : TRACE_EVENT_SIZE;
	size_t len = TRACE_EVENTS_HEADER_SIZE + (size_t)t->n * rs;
	unsigned char *p;

	if (!t->n)
		return 0;
	p = writer_chunk_room(w, len);
	if (!p)
		return -1;
	trace_put32(p, index);
	trace_put32(p + 4, rs);
	trace_put64(p + 8, t->min_start);
	p += TRACE_EVENTS_HEADER_SIZE;
	for (uint32_t i = 0; i < t->n; i++, p += rs) {
		if (shrt)
			writer_put_short_event(p, &t->ev[i], t->min_start);
		else
			writer_put_event(p, &t->ev[i], t->min_start);
	}
	w->events_buffered -= t->n;
	t->n = 0;
	return writer_emit(w, shrt ? TRACE_CHUNK_EVENTS_SHORT : TRACE_CHUNK_EVENTS, w->scratch.p,
			   len);
}

/* An EVNX payload of records of rs bytes, as an EVNZ chunk when that is
 * smaller: its sub-header, then byte 0 of every record, byte 1 of every
 * record, ..., compressed (zstd, level 1) behind the payload's length. The
 * columns are what compresses: a chunk's starts, ids and sizes differ from
 * one record to the next in their low bytes only. */
static int writer_emit_ext(struct trace_writer *w, const unsigned char *payload, size_t len,
			   uint32_t rs)
{
	size_t n = (len - TRACE_EVENTS_EXT_HEADER_SIZE) / rs;
	if (!w->zc && !(w->zc = ZSTD_createCCtx()))
		return writer_emit(w, TRACE_CHUNK_EVENTS_EXT, payload, len);
	w->zcols.len = w->zout.len = 0;
	unsigned char *cols = wbuf_reserve(w, &w->zcols, len);
	size_t bound = TRACE_EVZ_HEADER_SIZE + ZSTD_compressBound(len);
	unsigned char *out = cols ? wbuf_reserve(w, &w->zout, bound) : NULL;
	if (!out)
		return -1;
	memcpy(cols, payload, TRACE_EVENTS_EXT_HEADER_SIZE);
	const unsigned char *rec = payload + TRACE_EVENTS_EXT_HEADER_SIZE;
	unsigned char *col = cols + TRACE_EVENTS_EXT_HEADER_SIZE;
	for (uint32_t k = 0; k < rs; k++, col += n)
		for (size_t i = 0; i < n; i++)
			col[i] = rec[i * rs + k];
	trace_put32(out + TRACE_EVZ_RAW_LENGTH, (uint32_t)len);
	size_t z = ZSTD_compressCCtx(w->zc, out + TRACE_EVZ_HEADER_SIZE, bound - TRACE_EVZ_HEADER_SIZE,
				     cols, len, 1);
	if (ZSTD_isError(z) || TRACE_EVZ_HEADER_SIZE + z >= len)
		return writer_emit(w, TRACE_CHUNK_EVENTS_EXT, payload, len);
	return writer_emit(w, TRACE_CHUNK_EVENTS_EXT_Z, out, TRACE_EVZ_HEADER_SIZE + z);
}

/* The same for a buffer of events with details: an EVNX chunk. */
static int writer_flush_xbuf(struct trace_writer *w, uint32_t index, struct wxbuf *b)
{
	uint32_t rs = TRACE_EVENT_SIZE + trace_ext_groups_size(b->groups);
	size_t len = TRACE_EVENTS_EXT_HEADER_SIZE + (size_t)b->n * rs;
	uint64_t corr_base = writer_id_base(&b->corr), ext_base = writer_id_base(&b->xid);
	unsigned char *p;

	if (!b->n)
		return 0;
	p = writer_chunk_room(w, len);
	if (!p)
		return -1;
	trace_put32(p + TRACE_EVX_THREAD, index);
	trace_put32(p + TRACE_EVX_RECORD_SIZE, rs);
	trace_put64(p + TRACE_EVX_BASE, b->min_start);
	trace_put32(p + TRACE_EVX_GROUPS, b->groups);
	trace_put32(p + TRACE_EVX_RESERVED, 0);
	trace_put64(p + TRACE_EVX_CORR_BASE, corr_base);
	trace_put64(p + TRACE_EVX_EXT_BASE, ext_base);
	p += TRACE_EVENTS_EXT_HEADER_SIZE;
	for (uint32_t i = 0; i < b->n; i++, p += rs) {
		writer_put_event(p, &b->ev[i].e, b->min_start);
		writer_put_ext(p + TRACE_EVENT_SIZE, &b->ev[i], b->groups, corr_base, ext_base);
	}
	w->events_buffered -= (uint64_t)b->n * WRITER_EXT_WEIGHT;
	b->n = 0;
	b->groups = 0;
	writer_id_reset(&b->corr);
	writer_id_reset(&b->xid);
	return writer_emit_ext(w, w->scratch.p, len, rs);
}

static int writer_flush_thread(struct trace_writer *w, uint32_t index)
{
	if (writer_flush_compact(w, index) < 0)
		return -1;
	for (int i = 0; i < WRITER_EXT_BUFS; i++)
		if (writer_flush_xbuf(w, index, &w->threads[index].xb[i]) < 0)
			return -1;
	return 0;
}

static int writer_flush_all_threads(struct trace_writer *w)
{
	for (uint32_t i = 0; i < w->nthreads; i++)
		if (writer_flush_thread(w, i) < 0)
			return -1;
	return 0;
}

/* Empty buffers go back: those of ended threads at every flush (a long run
 * creates many threads), all of them when the buffered total hit its cap. */
static int writer_release_buffers(struct trace_writer *w, int ended_only)
{
	for (uint32_t i = 0; i < w->nthreads; i++) {
		struct wthread *t = &w->threads[i];
		if (!t->ended && ended_only)
			continue;
		if (!t->n && t->ev) {
			free(t->ev);
			t->ev = NULL;
			t->cap = 0;
		}
		for (int k = 0; k < WRITER_EXT_BUFS; k++) {
			struct wxbuf *b = &t->xb[k];
			if (!b->n && b->ev) {
				free(b->ev);
				b->ev = NULL;
				b->cap = 0;
			}
		}
	}
	return 0;
}

/* Whether start would stretch a buffer holding [lo, hi] past a u32 delta. */
static int writer_span_full(uint64_t lo, uint64_t hi, uint64_t start)
{
	if (start < lo)
		lo = start;
	if (start > hi)
		hi = start;
	return hi - lo > UINT32_MAX;
}

static int writer_grow_events(struct trace_writer *w, void **ev, uint32_t *cap, uint32_t max,
			      size_t size)
{
	/* a small start: a trace may have 100,000 threads of a few events each,
	 * and a buffer of events with details is 192 bytes an event */
	uint32_t ncap = *cap ? *cap * 2 : 4;
	void *p;

	if (ncap > max)
		ncap = max;
	p = realloc(*ev, (size_t)ncap * size);
	if (!p)
		return writer_fail(w, ENOMEM);
	*ev = p;
	*cap = ncap;
	return 0;
}

static int writer_add_compact(struct trace_writer *w, struct wthread *t, uint32_t thread,
			      const struct wevent *e)
{
	if (t->n && (t->n == WRITER_EVENTS_PER_CHUNK ||
		     writer_span_full(t->min_start, t->max_start, e->start)) &&
	    writer_flush_compact(w, thread) < 0)
		return -1;
	if (t->n == t->cap && writer_grow_events(w, (void **)&t->ev, &t->cap,
						 WRITER_EVENTS_PER_CHUNK, sizeof(*t->ev)) < 0)
		return -1;
	if (!t->n || e->start < t->min_start)
		t->min_start = e->start;
	if (!t->n || e->start > t->max_start)
		t->max_start = e->start;
	t->ev[t->n++] = *e;
	w->events_buffered++;
	return 0;
}

/* The buffer for details in `groups`: the one that holds that set, or an
 * empty one, or the one it widens least. */
static struct wxbuf *writer_pick_xbuf(struct wthread *t, uint32_t groups)
{
	struct wxbuf *empty = NULL, *least = NULL;
	uint32_t least_cost = UINT32_MAX;

	for (int i = 0; i < WRITER_EXT_BUFS; i++) {
		struct wxbuf *b = &t->xb[i];
		uint32_t cost;
		if (!b->n) {
			if (!empty)
				empty = b;
			continue;
		}
		if (b->groups == groups)
			return b;
		cost = trace_ext_groups_size(b->groups | groups) - trace_ext_groups_size(b->groups);
		if (cost < least_cost) {
			least_cost = cost;
			least = b;
		}
	}
	return empty ? empty : least;
}

static int writer_add_ext(struct trace_writer *w, struct wthread *t, uint32_t thread,
			  const struct wevent *e, const struct trace_event_ext *x, uint32_t groups)
{
	struct wxbuf *b = writer_pick_xbuf(t, groups);
	uint32_t g = b->groups | groups;
	uint64_t rs = TRACE_EVENT_SIZE + trace_ext_groups_size(g);
	uint32_t launch = 0;

	if ((groups & TRACE_EXTG_LAUNCH) && !(launch = writer_launch(w, x)))
		return -1;
	if (!b->n) { /* a fresh buffer, or one flushed: its spans start over */
		writer_id_reset(&b->corr);
		writer_id_reset(&b->xid);
	}
	if (b->n && ((b->n + 1) * rs > WRITER_EXT_CHUNK_RECORDS ||
		     writer_span_full(b->min_start, b->max_start, e->start) ||
		     writer_id_full(&b->corr, x->correlation) ||
		     writer_id_full(&b->xid, x->external_id))) {
		if (writer_flush_xbuf(w, thread, b) < 0)
			return -1;
		g = groups;
	}
	if (b->n == b->cap &&
	    writer_grow_events(w, (void **)&b->ev, &b->cap,
			       WRITER_EXT_CHUNK_RECORDS / (TRACE_EVENT_SIZE + TRACE_EXTG_MIN_SIZE),
			       sizeof(*b->ev)) < 0)
		return -1;
	if (!b->n || e->start < b->min_start)
		b->min_start = e->start;
	if (!b->n || e->start > b->max_start)
		b->max_start = e->start;
	b->ev[b->n].e = *e;
	b->ev[b->n].ext = *x;
	b->ev[b->n].launch = launch;
	b->n++;
	writer_id_add(&b->corr, x->correlation);
	writer_id_add(&b->xid, x->external_id);
	b->groups = g;
	w->events_buffered += WRITER_EXT_WEIGHT;
	return 0;
}

int trace_writer_event(struct trace_writer *w, const struct trace_event *e)
{
	uint64_t dur = e->dur_ns > TRACE_EVENT_DUR_MAX ? TRACE_EVENT_DUR_MAX : e->dur_ns;
	struct wevent ev = { e->start_ns, dur | (uint64_t)e->flags << TRACE_EVENT_DUR_BITS, e->desc };
	uint32_t groups = e->ext ? writer_ext_groups(e->ext) : 0;
	int rc;

	if (w->err)
		return writer_fail(w, w->err);
	if (e->thread >= w->nthreads || !e->desc || e->desc > w->ndesc ||
	    (groups && !writer_ext_ok(w, e->ext)))
		return writer_reject();
	/* all-zero details are no details: the event stays compact */
	if (groups)
		rc = writer_add_ext(w, &w->threads[e->thread], e->thread, &ev, e->ext, groups);
	else
		rc = writer_add_compact(w, &w->threads[e->thread], e->thread, &ev);
	if (rc < 0)
		return -1;
	if (w->events_buffered > WRITER_EVENTS_BUFFERED_MAX)
		return writer_flush_all_threads(w) < 0 ? -1 : writer_release_buffers(w, 0);
	return 0;
}

int trace_writer_device(struct trace_writer *w, const struct trace_device *d)
{
	unsigned char *rec = writer_table_rec(w, &w->pend_devs, TRACE_DEVICE_SIZE, &d->name_str, 1);

	if (!rec)
		return -1;
	const uint32_t v[11] = {
		d->id, d->name_str, d->sm_count, d->max_threads_per_sm,
		d->max_threads_per_block, d->max_blocks_per_sm, d->warp_size, d->regs_per_sm,
		d->regs_per_block, d->smem_per_sm, d->smem_per_block,
	};
	for (int i = 0; i < 11; i++)
		trace_put32(rec + 4 * i, v[i]);
	trace_put64(rec + 44, d->total_memory);
	trace_put32(rec + 52, d->clock_khz);
	trace_put16(rec + 56, d->cc_major);
	trace_put16(rec + 58, d->cc_minor);
	w->n_pend_devs++;
	return writer_pending_full(w, &w->pend_devs);
}

int trace_writer_counter(struct trace_writer *w, const struct trace_counter *c)
{
	unsigned char *rec = writer_table_rec(w, &w->pend_counters, TRACE_COUNTER_SIZE, NULL, 0);

	if (!rec)
		return -1;
	uint64_t bits;
	memcpy(&bits, &c->value, sizeof(bits));
	trace_put64(rec, c->ts_ns);
	trace_put32(rec + 8, c->id);
	trace_put32(rec + 12, c->pid);
	trace_put64(rec + 16, bits);
	w->n_pend_counters++;
	if (w->pend_counters.len < WRITER_TABLE_FLUSH)
		return 0;
	if (writer_ensure_meta(w) < 0)
		return -1;
	return writer_emit_pending(w, TRACE_CHUNK_COUNTERS, &w->pend_counters,
				   &w->n_pend_counters, TRACE_COUNTER_SIZE);
}

int trace_writer_drops(struct trace_writer *w, uint32_t thread, uint64_t dropped)
{
	return trace_writer_drops_reason(w, thread, dropped, TRACE_DROP_RING_FULL);
}

int trace_writer_drops_reason(struct trace_writer *w, uint32_t thread, uint64_t dropped,
			      unsigned reason)
{
	unsigned char *rec;

	if (w->err)
		return writer_fail(w, w->err);
	if (thread >= w->nthreads)
		return writer_reject();
	rec = wbuf_reserve(w, &w->pend_drops, TRACE_DROP_SIZE);
	if (!rec)
		return -1;
	trace_put32(rec, thread);
	trace_put32(rec + 4, reason);
	trace_put64(rec + 8, dropped);
	w->n_pend_drops++;
	if (w->pend_drops.len < WRITER_TABLE_FLUSH)
		return 0;
	if (writer_flush_tables(w) < 0)
		return -1;
	return writer_emit_pending(w, TRACE_CHUNK_DROPS, &w->pend_drops, &w->n_pend_drops,
				   TRACE_DROP_SIZE);
}

int trace_writer_flush(struct trace_writer *w)
{
	if (w->err)
		return writer_fail(w, w->err);
	if (writer_flush_tables(w) < 0 || writer_flush_all_threads(w) < 0 ||
	    writer_emit_pending(w, TRACE_CHUNK_COUNTERS, &w->pend_counters, &w->n_pend_counters,
				TRACE_COUNTER_SIZE) < 0 ||
	    writer_emit_pending(w, TRACE_CHUNK_DROPS, &w->pend_drops, &w->n_pend_drops,
				TRACE_DROP_SIZE) < 0)
		return -1;
	writer_release_buffers(w, 1);
	return writer_write_out(w);
}

static void writer_free(struct trace_writer *w)
{
	struct wbuf *bufs[] = { &w->out, &w->str_arena, &w->pend_strs, &w->pend_descs,
				&w->pend_cats, &w->pend_procs, &w->pend_threads,
				&w->pend_counters, &w->pend_drops, &w->pend_devs,
				&w->pend_launches, &w->scratch, &w->zcols, &w->zout };

	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		free(bufs[i]->p);
	for (uint32_t i = 0; i < w->nthreads; i++) {
		free(w->threads[i].ev);
		for (int k = 0; k < WRITER_EXT_BUFS; k++)
			free(w->threads[i].xb[k].ev);
	}
	free(w->threads);
	free(w->strs);
	free(w->str_hash);
	free(w->descs);
	free(w->desc_hash);
	free(w->launches);
	free(w->launch_hash);
	ZSTD_freeCCtx(w->zc);
	free(w);
}

int trace_writer_close(struct trace_writer *w, uint64_t end_ns)
{
	unsigned char end[TRACE_END_SIZE];
	int rc, e;

	if (!w)
		return 0;
	trace_put64(end, end_ns);
	rc = trace_writer_flush(w);
	if (rc == 0)
		rc = writer_emit(w, TRACE_CHUNK_END, end, sizeof(end));
	if (rc == 0)
		rc = writer_write_out(w);
	if (w->of) {
		/* fsync and the rename into place; nothing of it after a failure */
		if (rc == 0 && outfile_commit(w->of, NULL, 0) != 0)
			rc = writer_fail(w, errno);
		else if (rc != 0)
			outfile_abort(w->of);
		free(w->of);
	} else if (w->own_fd && w->fd >= 0 && close(w->fd) < 0 && rc == 0) {
		rc = writer_fail(w, errno);
	}
	e = w->err;
	writer_free(w);
	errno = e;
	return rc;
}

void trace_writer_abort(struct trace_writer *w)
{
	if (!w)
		return;
	if (w->of) {
		outfile_abort(w->of);
		free(w->of);
	} else if (w->own_fd && w->fd >= 0) {
		close(w->fd);
	}
	writer_free(w);
}

uint64_t trace_writer_bytes(const struct trace_writer *w)
{
	return w->bytes;
}
