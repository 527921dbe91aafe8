/*
 * csv_out.c - CSV rows through libcsv (see csv_out.h).
 */
#include "formats/csv/csv_out.h"

#include "common/error.h"
#include "common/textsafe.h"

#include <csv.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void csv_out_init(struct csv_out *c, FILE *out)
{
	memset(c, 0, sizeof(*c));
	c->out = out;
}

void csv_out_init_buffered(struct csv_out *c, FILE *out, size_t cap)
{
	csv_out_init(c, out);
	c->cap = cap < 4096 ? 4096 : cap;
	c->buf = xmalloc(c->cap);
}

void csv_out_init_handed(struct csv_out *c, FILE *out, size_t cap,
			 int (*hand)(void *ctx, const char *block, size_t n),
			 int (*wait)(void *ctx), void *ctx)
{
	csv_out_init_buffered(c, out, cap);
	c->spare = xmalloc(c->cap);
	c->hand = hand;
	c->wait = wait;
	c->ctx = ctx;
}

int csv_out_flush(struct csv_out *c)
{
	if (c->hand && c->len) {
		if (c->hand(c->ctx, c->buf, c->len) != 0)
			c->error = 1;
		char *full = c->buf; /* hand's now; the spare is free */
		c->buf = c->spare;
		c->spare = full;
		c->len = 0;
	} else if (c->buf && c->len) {
		if (fwrite_unlocked(c->buf, 1, c->len, c->out) != c->len)
			c->error = 1;
		c->len = 0;
	}
	return c->error ? -1 : 0;
}

void csv_out_release(struct csv_out *c)
{
	csv_out_flush(c);
	if (c->hand && c->wait(c->ctx) != 0) /* the block handed last is read */
		c->error = 1;
	free(c->buf);
	free(c->spare);
	c->buf = c->spare = NULL;
	c->hand = NULL;
	c->len = c->cap = 0;
}

/* The buffered output's slow path: s does not fit in what is left. */
static void out_spill(struct csv_out *c, const char *s, size_t n)
{
	csv_out_flush(c);
	if (n >= c->cap) {
		if (fwrite_unlocked(s, 1, n, c->out) != n)
			c->error = 1;
		return;
	}
	memcpy(c->buf, s, n);
	c->len = n;
}

static inline void out_bytes(struct csv_out *c, const char *s, size_t n)
{
	if (c->buf) {
		if (n <= c->cap - c->len) {
			memcpy(c->buf + c->len, s, n);
			c->len += n;
		} else {
			out_spill(c, s, n);
		}
	} else if (n && fwrite_unlocked(s, 1, n, c->out) != n) {
		c->error = 1;
	}
}

static inline void out_comma(struct csv_out *c)
{
	if (!c->row_started)
		return;
	if (c->buf && c->len < c->cap)
		c->buf[c->len++] = ',';
	else
		out_bytes(c, ",", 1);
}

void csv_out_field(struct csv_out *c, const char *s)
{
	char *clean = NULL;
	size_t len = strlen(s);
	csv_out_flush(c); /* what the fast path buffered goes first */
	if (!utf8_valid(s, len)) { /* the same U+FFFD as csv_out_text */
		clean = malloc(3 * len + 1);
		if (!clean) {
			c->error = 1;
			return;
		}
		len = utf8_sanitize(clean, s, len);
		s = clean;
	}
	if (c->row_started && fputc(',', c->out) == EOF)
		c->error = 1;
	if (csv_fwrite(c->out, s, len) != 0)
		c->error = 1;
	c->row_started = 1;
	free(clean);
}

void csv_out_fieldf(struct csv_out *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	csv_out_field(c, buf);
}

void csv_out_end_row_slow(struct csv_out *c)
{
	if (c->buf)
		out_bytes(c, "\r\n", 2);
	else if (fputs("\r\n", c->out) == EOF)
		c->error = 1;
	c->row_started = 0;
}

void csv_out_blank_line(struct csv_out *c)
{
	csv_out_end_row(c);
}

int csv_out_error(const struct csv_out *c)
{
	return c->error || ferror(c->out);
}

/* ---- the fast path ------------------------------------------------------- */

void csv_out_put_slow(struct csv_out *c, const char *s, size_t n)
{
	out_comma(c);
	out_bytes(c, s, n);
	c->row_started = 1;
}

const char csv_digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
				      "25262728293031323334353637383940414243444546474849"
				      "50515253545556575859606162636465666768697071727374"
				      "75767778798081828384858687888990919293949596979899";

/* Digits of v ending at end, two at a time; returns where they start. */
static inline char *digits(char *end, uint64_t v)
{
	char *p = end;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		p -= 2;
		memcpy(p, csv_digit_pairs + 2 * r, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, csv_digit_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

void csv_out_int(struct csv_out *c, int64_t v)
{
	char buf[24], *p = buf;
	if (v < 0)
		*p++ = '-';
	p = csv_udigits(p, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
	csv_out_raw(c, buf, (size_t)(p - buf));
}

void csv_out_double(struct csv_out *c, double v)
{
	char buf[40];
	if (!isfinite(v)) {
		csv_out_empty(c);
		return;
	}
	/* as the JSON writer: 15 significant digits read back as v whenever any
	 * 15-digit form does; 17 always do */
	for (int prec = fabs(v) < DBL_MIN && v != 0 ? 1 : 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		for (char *s = buf; *s; s++)
			if (*s == ',') /* LC_NUMERIC; CSV wants a point */
				*s = '.';
		if (prec == 17 || strtod(buf, NULL) == v)
			break;
	}
	csv_out_raw(c, buf, strlen(buf));
}

void csv_out_fixed(struct csv_out *c, double v, int decimals)
{
	static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
	if (decimals < 0)
		decimals = 0;
	if (decimals > 9)
		decimals = 9;
	double scaled = v * pow10[decimals];
	if (!isfinite(v) || fabs(scaled) >= 9007199254740992.0) {
		csv_out_double(c, v); /* huge: no integer holds it; exact digits then */
		return;
	}
	int64_t q = (int64_t)llround(scaled);
	uint64_t mag = q < 0 ? (uint64_t)0 - (uint64_t)q : (uint64_t)q;
	uint64_t unit = (uint64_t)pow10[decimals];
	uint64_t frac = mag % unit;
	char buf[48], *end = buf + sizeof(buf), *p = end;
	int d = decimals;
	while (d > 0 && frac % 10 == 0) { /* trailing zeros go */
		frac /= 10;
		d--;
	}
	for (int i = 0; i < d; i++, frac /= 10)
		*--p = (char)('0' + frac % 10);
	if (d > 0)
		*--p = '.';
	p = digits(p, mag / unit);
	if (q < 0)
		*--p = '-';
	csv_out_raw(c, p, (size_t)(end - p));
}

void csv_out_header(struct csv_out *c, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		csv_out_raw(c, names[i], strlen(names[i]));
	csv_out_end_row(c);
}

size_t csv_utf8_clean(char *buf, const char *s, size_t len)
{
	return utf8_sanitize(buf, s, len);
}

size_t csv_quote(char *dst, const char *s, size_t len)
{
	size_t o = 0;
	dst[o++] = '"';
	for (size_t i = 0; i < len; i++) {
		dst[o++] = s[i];
		if (s[i] == '"')
			dst[o++] = '"';
	}
	dst[o++] = '"';
	return o;
}

void csv_out_text(struct csv_out *c, const char *s)
{
	char small[512], *clean = NULL, *quoted = small;
	size_t len = strlen(s), i = 0;
	while (i < len && (unsigned char)s[i] < 0x80)
		i++;
	/* from the first byte above ASCII, which starts a character */
	if (i < len && !utf8_valid(s + i, len - i)) {
		clean = malloc(3 * len + 1);
		if (!clean) {
			c->error = 1;
			return;
		}
		len = csv_utf8_clean(clean, s, len);
		s = clean;
	}
	out_comma(c);
	c->row_started = 1;
	if (c->buf && c->cap - c->len >= 2 && len <= (c->cap - c->len - 2) / 2) {
		/* quoted in place */
		c->len += csv_quote(c->buf + c->len, s, len);
		free(clean);
		return;
	}
	size_t need = 2 * len + 2;
	if (need > sizeof(small))
		quoted = malloc(need);
	if (quoted)
		out_bytes(c, quoted, csv_quote(quoted, s, len));
	else
		c->error = 1;
	if (quoted != small)
		free(quoted);
	free(clean);
}
