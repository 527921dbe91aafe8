/*
 * csv_out.h - CSV rows written through libcsv's quoting, one value per
 * column. A table is a header row, then data rows; blocks of several tables
 * in one stream are separated by a blank line. Rows end in CRLF (RFC 4180).
 *
 * Two families of field writers:
 *   csv_out_field, csv_out_fieldf   every value quoted by libcsv (csv_fwrite)
 *                                   after any ill-formed UTF-8 is replaced by
 *                                   U+FFFD: the summary tables
 *   csv_out_text, csv_out_uint, ... the raw-event export's fast path: text
 *                                   quoted by libcsv (csv_write) after any
 *                                   ill-formed UTF-8 is replaced by U+FFFD,
 *                                   so that pandas, DuckDB and Spark read every
 *                                   file; numbers unquoted, so that they read
 *                                   as numbers; csv_out_empty for "none"
 * Write errors are sticky: csv_out_error() says whether any write failed.
 *
 * csv_out_init_buffered() gives the fast path a buffer of its own, which goes
 * to the stream in large blocks (the raw export writes gigabytes): nothing
 * reaches the stream before csv_out_flush(), which csv_out_field() and the
 * end do themselves.
 */
#ifndef GPDL_FORMATS_CSV_OUT_H
#define GPDL_FORMATS_CSV_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct csv_out {
	FILE *out;
	char *buf;        /* NULL: straight to out */
	size_t len, cap;
	/* csv_out_init_handed(): the buffer full goes to hand(), spare is
	 * filled meanwhile */
	char *spare;
	int (*hand)(void *ctx, const char *block, size_t n);
	int (*wait)(void *ctx);
	void *ctx;
	int row_started;
	int error;
};

void csv_out_init(struct csv_out *c, FILE *out);
/* With a buffer of cap bytes (at least 4096); csv_out_release() frees it. */
void csv_out_init_buffered(struct csv_out *c, FILE *out, size_t cap);
/* Buffered, with two buffers of cap bytes filled in turn: a full one goes
 * to hand(ctx, block, n) instead of the stream (after what the stream
 * holds, which hand() writes first), and is hand's until its next call or
 * wait(ctx) returns; both return 0, or -1 when a write failed. For a
 * stream whose writes happen on a thread (formats/async_out.h): no copy. */
void csv_out_init_handed(struct csv_out *c, FILE *out, size_t cap,
			 int (*hand)(void *ctx, const char *block, size_t n),
			 int (*wait)(void *ctx), void *ctx);
/* Writes what is buffered to the stream: 0, or -1 when a write failed. */
int csv_out_flush(struct csv_out *c);
/* Flushes and frees the buffer; the output is unbuffered afterwards. */
void csv_out_release(struct csv_out *c);
void csv_out_field(struct csv_out *c, const char *s);
void csv_out_fieldf(struct csv_out *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void csv_out_blank_line(struct csv_out *c);
int csv_out_error(const struct csv_out *c);

void csv_out_text(struct csv_out *c, const char *s);
void csv_out_int(struct csv_out *c, int64_t v);
/* The fewest digits that read back as v; empty when not finite. */
void csv_out_double(struct csv_out *c, double v);
/* v rounded to decimals (at most 9) places, trailing zeros dropped ("2",
 * "4.194304"), without printf where it can; empty when not finite. */
void csv_out_fixed(struct csv_out *c, double v, int decimals);
/* A header row: the names, which need no quoting, then the row's end. */
void csv_out_header(struct csv_out *c, const char *const *names, size_t n);

/* s with each ill-formed UTF-8 sequence replaced by U+FFFD (the maximal
 * subpart practice of Unicode, as the JSON writer does), into buf of size
 * at least 3 * len + 1; returns the length written. */
size_t csv_utf8_clean(char *buf, const char *s, size_t len);

/* s quoted as libcsv's csv_write() quotes (in double quotes, each quote
 * doubled) into dst of at least 2 * len + 2 bytes; returns the length. */
size_t csv_quote(char *dst, const char *s, size_t len);

/* ---- inline: the raw export calls these for every field -------------------
 * csv_out_uint       v in decimal
 * csv_out_empty      an empty field ("none")
 * csv_out_raw        one or more fields already in their CSV form
 *                    ("\"a\",\"b\""), as one
 * csv_out_end_row    the row's end
 * Each writes straight into the buffer when it has room, else through the
 * slow path below (the stream, or a flush first). */

/* Internal: the field's comma if it needs one, then s; any output. */
void csv_out_put_slow(struct csv_out *c, const char *s, size_t n);
void csv_out_end_row_slow(struct csv_out *c);
extern const char csv_digit_pairs[201];

/* Where a field of at most n bytes goes, its comma written before it;
 * NULL when the buffer has no room for it (or there is no buffer). */
static inline char *csv_out_room(struct csv_out *c, size_t n)
{
	if (!c->buf || c->cap - c->len <= n)
		return NULL;
	char *p = c->buf + c->len;
	if (c->row_started)
		*p++ = ',';
	c->row_started = 1;
	return p;
}

static inline void csv_out_raw(struct csv_out *c, const char *s, size_t n)
{
	char *p = csv_out_room(c, n);
	if (!p) {
		csv_out_put_slow(c, s, n);
		return;
	}
	memcpy(p, s, n);
	c->len = (size_t)(p + n - c->buf);
}

static inline void csv_out_empty(struct csv_out *c)
{
	csv_out_raw(c, "", 0);
}

/* Four digits of x < 10000, zeros in front. */
static inline void csv_four_digits(char *p, uint32_t x)
{
	uint32_t hi = x / 100;
	memcpy(p, csv_digit_pairs + 2 * hi, 2);
	memcpy(p + 2, csv_digit_pairs + 2 * (x - 100 * hi), 2);
}

/* The digits of x < 10^4 at p, without zeros in front; returns their end. */
static inline char *csv_upto4_digits(char *p, uint32_t x)
{
	if (x < 100) {
		if (x < 10) {
			*p = (char)('0' + x);
			return p + 1;
		}
		memcpy(p, csv_digit_pairs + 2 * x, 2);
		return p + 2;
	}
	uint32_t hi = x / 100;
	if (hi < 10) {
		*p++ = (char)('0' + hi);
	} else {
		memcpy(p, csv_digit_pairs + 2 * hi, 2);
		p += 2;
	}
	memcpy(p, csv_digit_pairs + 2 * (x - 100 * hi), 2);
	return p + 2;
}

/* The digits of x < 10^8 at p, without zeros in front; returns their end. */
static inline char *csv_upto8_digits(char *p, uint32_t x)
{
	if (x < 10000)
		return csv_upto4_digits(p, x);
	uint32_t hi = x / 10000;
	p = csv_upto4_digits(p, hi);
	csv_four_digits(p, x - 10000 * hi);
	return p + 4;
}

/* Eight digits of x < 10^8, zeros in front: two independent halves. */
static inline void csv_eight_digits(char *p, uint32_t x)
{
	uint32_t hi = x / 10000;
	csv_four_digits(p, hi);
	csv_four_digits(p + 4, x - 10000 * hi);
}

/* The digits of v at p (room for 20); returns their end. Eight digits at a
 * time in 32-bit arithmetic: a nanosecond timestamp is three short steps,
 * not seven dependent 64-bit divisions of two digits at a time. */
static inline char *csv_udigits(char *p, uint64_t v)
{
	if (v < 100000000)
		return csv_upto8_digits(p, (uint32_t)v);
	uint64_t hi = v / 100000000;
	uint32_t lo = (uint32_t)(v - hi * 100000000);
	if (hi < 100000000) {
		p = csv_upto8_digits(p, (uint32_t)hi);
	} else { /* v >= 10^16: top <= 1844 */
		uint32_t top = (uint32_t)(hi / 100000000);
		p = csv_upto4_digits(p, top);
		csv_eight_digits(p, (uint32_t)(hi - (uint64_t)top * 100000000));
		p += 8;
	}
	csv_eight_digits(p, lo);
	return p + 8;
}

static inline void csv_out_uint(struct csv_out *c, uint64_t v)
{
	char *p = csv_out_room(c, 20);
	if (p) {
		c->len = (size_t)(csv_udigits(p, v) - c->buf);
		return;
	}
	char buf[24];
	csv_out_put_slow(c, buf, (size_t)(csv_udigits(buf, v) - buf));
}

static inline void csv_out_end_row(struct csv_out *c)
{
	if (c->buf && c->cap - c->len >= 2) {
		memcpy(c->buf + c->len, "\r\n", 2);
		c->len += 2;
		c->row_started = 0;
		return;
	}
	csv_out_end_row_slow(c);
}

#endif
