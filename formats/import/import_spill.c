/*
 * import_spill.c - the importer's temporary event file (see import_spill.h).
 */
#include "formats/import/import_spill.h"

#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPILL_BUF (1u << 20)
#define SPILL_MAX_RECORD 192 /* kind, header and every detail field */

enum {
	X_CORRELATION = 1u << 0,
	X_EXTERNAL_ID = 1u << 1,
	X_BYTES = 1u << 2,
	X_ADDRESS = 1u << 3,
	X_GRID = 1u << 4,
	X_BLOCK = 1u << 5,
	X_REGISTERS = 1u << 6,
	X_STATIC_SMEM = 1u << 7,
	X_DYNAMIC_SMEM = 1u << 8,
	X_DEVICE = 1u << 9,
	X_KINDS = 1u << 10,
	X_TOTAL_ALLOCATED = 1u << 11,
	X_SEQ = 1u << 12,
	X_SHAPES = 1u << 13,
	X_SAMPLES = 1u << 14,
	X_COLL = 1u << 15, /* 1.3: a collective's sequence number, group, dtype, peer */
};

const char *import_tmpdir(void)
{
	const char *d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

static int spill_fail(struct spill *s, int e)
{
	if (!s->err)
		s->err = e ? e : EIO;
	errno = s->err;
	return -1;
}

int spill_open(struct spill *s, const char *dir)
{
	memset(s, 0, sizeof(*s));
	s->fd = outfile_scratch(dir);
	if (s->fd < 0)
		return -1;
	s->buf = malloc(SPILL_BUF);
	if (!s->buf) {
		close(s->fd);
		s->fd = -1;
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static int spill_flush(struct spill *s)
{
	size_t done = 0;
	while (done < s->len) {
		ssize_t n = write(s->fd, s->buf + done, s->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return spill_fail(s, n < 0 ? errno : EIO);
		done += (size_t)n;
	}
	s->bytes += s->len;
	s->len = 0;
	return 0;
}

static unsigned char *spill_room(struct spill *s)
{
	if (s->err)
		return NULL;
	if (s->len + SPILL_MAX_RECORD > SPILL_BUF && spill_flush(s) < 0)
		return NULL;
	return s->buf + s->len;
}

#define PUT(p, v)                              \
	do {                                   \
		memcpy((p), &(v), sizeof(v)); \
		(p) += sizeof(v);              \
	} while (0)
#define GET(p, v)                              \
	do {                                   \
		memcpy(&(v), (p), sizeof(v)); \
		(p) += sizeof(v);              \
	} while (0)

static uint16_t ext_mask(const struct trace_event_ext *x)
{
	uint16_t m = 0;
	m |= x->correlation ? X_CORRELATION : 0;
	m |= x->external_id ? X_EXTERNAL_ID : 0;
	m |= x->bytes ? X_BYTES : 0;
	m |= x->address ? X_ADDRESS : 0;
	m |= (x->grid[0] | x->grid[1] | x->grid[2]) ? X_GRID : 0;
	m |= (x->block[0] | x->block[1] | x->block[2]) ? X_BLOCK : 0;
	m |= x->registers ? X_REGISTERS : 0;
	m |= x->static_smem ? X_STATIC_SMEM : 0;
	m |= x->dynamic_smem ? X_DYNAMIC_SMEM : 0;
	m |= x->device ? X_DEVICE : 0;
	m |= (x->copy_kind | x->src_kind | x->dst_kind | x->is_async) ? X_KINDS : 0;
	m |= x->total_allocated ? X_TOTAL_ALLOCATED : 0;
	m |= x->has_seq ? X_SEQ : 0;
	m |= x->shapes_str ? X_SHAPES : 0;
	m |= x->samples ? X_SAMPLES : 0;
	m |= (x->has_coll_seq || x->pg_str || x->group_size || x->dtype_str || x->has_peer) ? X_COLL
											    : 0;
	return m;
}

int spill_put_event(struct spill *s, const struct spill_event *e)
{
	unsigned char *p = spill_room(s), *start = p;
	uint16_t m = e->has_ext ? ext_mask(&e->ext) : 0;
	const struct trace_event_ext *x = &e->ext;

	if (!p)
		return -1;
	*p++ = 'E';
	PUT(p, e->flags);
	PUT(p, m);
	PUT(p, e->start);
	PUT(p, e->dur);
	PUT(p, e->desc);
	PUT(p, e->track);
	if (m & X_CORRELATION)
		PUT(p, x->correlation);
	if (m & X_EXTERNAL_ID)
		PUT(p, x->external_id);
	if (m & X_BYTES)
		PUT(p, x->bytes);
	if (m & X_ADDRESS)
		PUT(p, x->address);
	if (m & X_GRID)
		PUT(p, x->grid);
	if (m & X_BLOCK)
		PUT(p, x->block);
	if (m & X_REGISTERS)
		PUT(p, x->registers);
	if (m & X_STATIC_SMEM)
		PUT(p, x->static_smem);
	if (m & X_DYNAMIC_SMEM)
		PUT(p, x->dynamic_smem);
	if (m & X_DEVICE)
		PUT(p, x->device);
	if (m & X_KINDS) {
		*p++ = x->copy_kind;
		*p++ = x->src_kind;
		*p++ = x->dst_kind;
		*p++ = x->is_async;
	}
	if (m & X_TOTAL_ALLOCATED)
		PUT(p, x->total_allocated);
	if (m & X_SEQ)
		PUT(p, x->seq_nr);
	if (m & X_SHAPES)
		PUT(p, x->shapes_str);
	if (m & X_SAMPLES)
		PUT(p, x->samples);
	if (m & X_COLL) {
		*p++ = x->has_coll_seq;
		PUT(p, x->coll_seq);
		PUT(p, x->pg_str);
		PUT(p, x->group_size);
		PUT(p, x->dtype_str);
		*p++ = x->has_peer;
		PUT(p, x->peer);
	}
	s->len += (size_t)(p - start);
	return 0;
}

int spill_put_counter(struct spill *s, const struct spill_counter *c)
{
	unsigned char *p = spill_room(s), *start = p;

	if (!p)
		return -1;
	*p++ = 'C';
	PUT(p, c->ts);
	PUT(p, c->id);
	PUT(p, c->pid);
	PUT(p, c->value);
	s->len += (size_t)(p - start);
	return 0;
}

int spill_rewind(struct spill *s)
{
	if (s->err)
		return spill_fail(s, s->err);
	if (!s->reading && spill_flush(s) < 0) /* a second read has nothing to write */
		return -1;
	s->reading = 1;
	if (lseek(s->fd, 0, SEEK_SET) < 0)
		return spill_fail(s, errno);
	s->len = s->pos = 0;
	return 0;
}

/* Makes at least SPILL_MAX_RECORD bytes (or all that is left) readable at pos. */
static int spill_fill(struct spill *s)
{
	if (s->len - s->pos >= SPILL_MAX_RECORD)
		return 0;
	memmove(s->buf, s->buf + s->pos, s->len - s->pos);
	s->len -= s->pos;
	s->pos = 0;
	while (s->len < SPILL_BUF) {
		ssize_t n = read(s->fd, s->buf + s->len, SPILL_BUF - s->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return spill_fail(s, errno);
		if (n == 0)
			break;
		s->len += (size_t)n;
	}
	return 0;
}

int spill_next(struct spill *s, struct spill_event *e, struct spill_counter *c)
{
	const unsigned char *p;
	uint16_t m;

	if (s->err || spill_fill(s) < 0)
		return -1;
	if (s->pos == s->len)
		return 0;
	p = s->buf + s->pos;
	int kind = *p++;
	if (kind == 'C') {
		GET(p, c->ts);
		GET(p, c->id);
		GET(p, c->pid);
		GET(p, c->value);
	} else if (kind == 'E') {
		struct trace_event_ext *x = &e->ext;
		GET(p, e->flags);
		GET(p, m);
		GET(p, e->start);
		GET(p, e->dur);
		GET(p, e->desc);
		GET(p, e->track);
		memset(x, 0, sizeof(*x));
		e->has_ext = m != 0;
		if (m & X_CORRELATION)
			GET(p, x->correlation);
		if (m & X_EXTERNAL_ID)
			GET(p, x->external_id);
		if (m & X_BYTES)
			GET(p, x->bytes);
		if (m & X_ADDRESS)
			GET(p, x->address);
		if (m & X_GRID)
			GET(p, x->grid);
		if (m & X_BLOCK)
			GET(p, x->block);
		if (m & X_REGISTERS)
			GET(p, x->registers);
		if (m & X_STATIC_SMEM)
			GET(p, x->static_smem);
		if (m & X_DYNAMIC_SMEM)
			GET(p, x->dynamic_smem);
		if (m & X_DEVICE)
			GET(p, x->device);
		if (m & X_KINDS) {
			x->copy_kind = *p++;
			x->src_kind = *p++;
			x->dst_kind = *p++;
			x->is_async = *p++;
		}
		if (m & X_TOTAL_ALLOCATED)
			GET(p, x->total_allocated);
		x->has_seq = (m & X_SEQ) != 0;
		if (m & X_SEQ)
			GET(p, x->seq_nr);
		if (m & X_SHAPES)
			GET(p, x->shapes_str);
		if (m & X_SAMPLES)
			GET(p, x->samples);
		if (m & X_COLL) {
			x->has_coll_seq = *p++;
			GET(p, x->coll_seq);
			GET(p, x->pg_str);
			GET(p, x->group_size);
			GET(p, x->dtype_str);
			x->has_peer = *p++;
			GET(p, x->peer);
		}
	} else {
		return spill_fail(s, EILSEQ); /* our own file: only a bug gets here */
	}
	if ((size_t)(p - s->buf) > s->len)
		return spill_fail(s, EILSEQ);
	s->pos = (size_t)(p - s->buf);
	return kind;
}

void spill_close(struct spill *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}
