/*
 * json_writer.c - the streaming JSON writer of json_writer.h.
 *
 * Every value is written as soon as it is given; the only state is one "no
 * value yet" flag per open container, so memory is constant whatever the size
 * of the document. The output goes through stdio with the unlocked calls: one
 * writer owns its stream, and chrome export writes gigabytes through it.
 * Values at depth 0 are written back to back, with nothing between them: a
 * caller that frames a stream of documents itself (chrome export writes one
 * event per line) puts its own separators there.
 *
 * Strings are validated as UTF-8 (Unicode 15, table 3-7) while they are
 * copied. Well-formed runs go out verbatim in one write; each maximal subpart
 * of an ill-formed sequence becomes one U+FFFD, the replacement practice that
 * Unicode recommends and that browsers and Python use, so that a damaged name
 * still reads as what it was.
 */
#include "formats/json/json_writer.h"

#include "common/error.h"
#include "common/textsafe.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Short runs, which are most of JSON (keys, numbers, punctuation), cost less
 * through the putc macro than through a call to fwrite. Returns -1 on error. */
static int write_run(FILE *out, const void *p, size_t n)
{
	const unsigned char *s = p;
	if (n > 16)
		return fwrite_unlocked(s, 1, n, out) == n ? 0 : -1;
	for (size_t i = 0; i < n; i++)
		if (putc_unlocked(s[i], out) == EOF)
			return -1;
	return 0;
}

int json_writer_flush(struct json_writer *w)
{
	if (!w->buf || !w->len)
		return w->error ? -1 : 0;
	if (fwrite_unlocked(w->buf, 1, w->len, w->out) != w->len)
		w->error = 1;
	w->len = 0;
	return w->error ? -1 : 0;
}

/* The buffered writer's slow path: s does not fit in what is left. */
static void put_spill(struct json_writer *w, const char *s, size_t n)
{
	json_writer_flush(w);
	if (n >= w->cap) {
		if (fwrite_unlocked(s, 1, n, w->out) != n)
			w->error = 1;
		return;
	}
	memcpy(w->buf, s, n);
	w->len = n;
}

static inline void put_bytes(struct json_writer *w, const char *s, size_t n)
{
	if (w->buf) {
		if (n <= w->cap - w->len) {
			char *o = w->buf + w->len;
			if (n <= 16) /* keys, numbers, punctuation: no call */
				for (size_t i = 0; i < n; i++)
					o[i] = s[i];
			else
				memcpy(o, s, n);
			w->len += n;
		} else {
			put_spill(w, s, n);
		}
		return;
	}
	if (write_run(w->out, s, n) < 0)
		w->error = 1;
}

static inline void put_char(struct json_writer *w, char c)
{
	if (w->buf) {
		if (w->len == w->cap)
			json_writer_flush(w);
		w->buf[w->len++] = c;
		return;
	}
	if (putc_unlocked(c, w->out) == EOF)
		w->error = 1;
}

void json_raw(struct json_writer *w, const char *s, size_t n)
{
	put_bytes(w, s, n);
}

static void newline_indent(struct json_writer *w, int depth)
{
	static const char spaces[] = "                                ";
	put_char(w, '\n');
	for (int n = 2 * depth; n > 0; n -= (int)(sizeof(spaces) - 1))
		put_bytes(w, spaces, n < (int)sizeof(spaces) - 1 ? (size_t)n : sizeof(spaces) - 1);
}

/* Before every value or key: the comma its container needs, and in pretty
 * mode its own line. A value right after its key needs neither. */
static inline void before_item(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (w->depth == 0)
		return;
	unsigned char *first = &w->first[w->depth - 1];
	if (!*first)
		put_char(w, ',');
	*first = 0;
	if (w->pretty)
		newline_indent(w, w->depth);
}

void json_writer_init(struct json_writer *w, FILE *out, int pretty)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->pretty = pretty;
}

void json_writer_init_buffered(struct json_writer *w, FILE *out, int pretty, size_t cap)
{
	json_writer_init(w, out, pretty);
	w->cap = cap < 4096 ? 4096 : cap;
	w->buf = xmalloc(w->cap);
}

void json_writer_release(struct json_writer *w)
{
	json_writer_flush(w);
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

static void begin(struct json_writer *w, char open)
{
	before_item(w);
	put_char(w, open);
	if (w->depth >= JSON_WRITER_MAX_DEPTH) {
		w->error = 1; /* a caller's bug; the document cannot be valid */
		return;
	}
	w->first[w->depth++] = 1;
}

static void end(struct json_writer *w, char close)
{
	if (w->depth == 0 || w->after_key) {
		w->error = 1;
		return;
	}
	w->depth--;
	if (w->pretty && !w->first[w->depth])
		newline_indent(w, w->depth);
	put_char(w, close);
}

void json_begin_object(struct json_writer *w) { begin(w, '{'); }
void json_end_object(struct json_writer *w) { end(w, '}'); }
void json_begin_array(struct json_writer *w) { begin(w, '['); }
void json_end_array(struct json_writer *w) { end(w, ']'); }

/* ---- strings ------------------------------------------------------------- */

/* Printable ASCII, which JSON takes as it is. Control characters, DEL
 * included (it is one to a terminal), the quote and the backslash are not. */
static int is_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/* The escaped form of the byte c that is not plain (below 0x80) into e:
 * its length. */
static size_t escape_ascii(unsigned char c, char *e)
{
	static const char hex[] = "0123456789abcdef";
	if (c == '"' || c == '\\') {
		e[0] = '\\';
		e[1] = (char)c;
		return 2;
	}
	memcpy(e, "\\u00", 4);
	e[4] = hex[c >> 4];
	e[5] = hex[c & 15];
	return 6;
}

/* The general path: runs of bytes that go out as they are, between the
 * escapes and replacements. */
static void escape_runs(struct json_writer *w, const unsigned char *s, size_t len)
{
	size_t run = 0; /* start of the bytes not yet written */
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		if (is_plain(c)) {
			i++;
			continue;
		}
		size_t bad = 0, ok = 0;
		if (c >= 0x80 && (ok = utf8_sequence(s + i, len - i, &bad)) != 0) {
			i += ok;
			continue;
		}
		put_bytes(w, (const char *)s + run, i - run);
		if (c >= 0x80) {
			put_bytes(w, "\xef\xbf\xbd", 3);
			i += bad;
		} else {
			char e[6];
			put_bytes(w, e, escape_ascii(c, e));
			i++;
		}
		run = i;
	}
	put_bytes(w, (const char *)s + run, i - run);
}

/* Names are short and almost always plain: with room for the worst case
 * (6 bytes out per byte in), they are copied and checked in one pass
 * straight into the buffer; anything else takes the general path from the
 * first byte that is not plain ASCII. */
static void escape(struct json_writer *w, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	if (w->buf && len <= (w->cap - w->len) / 6) {
		char *o = w->buf + w->len;
		size_t i = 0;
		for (; i < len; i++) {
			unsigned char c = s[i];
			if (is_plain(c))
				*o++ = (char)c;
			else if (c < 0x80)
				o += escape_ascii(c, o);
			else
				break;
		}
		w->len = (size_t)(o - w->buf);
		s += i;
		len -= i;
		if (!len)
			return;
	}
	escape_runs(w, s, len);
}

void json_escape_to(FILE *out, const char *s, size_t len)
{
	struct json_writer w;
	json_writer_init(&w, out, 0);
	escape(&w, s, len);
}

static void quoted(struct json_writer *w, const char *s, size_t len)
{
	put_char(w, '"');
	escape(w, s, len);
	put_char(w, '"');
}

void json_key(struct json_writer *w, const char *key)
{
	before_item(w);
	if (w->depth == 0)
		w->error = 1; /* a key outside any object */
	quoted(w, key ? key : "", key ? strlen(key) : 0);
	if (w->pretty)
		put_bytes(w, ": ", 2);
	else
		put_char(w, ':');
	w->after_key = 1;
}

void json_key_plain(struct json_writer *w, const char *key, size_t len)
{
	before_item(w);
	if (w->buf && !w->pretty && w->depth && len + 3 <= w->cap - w->len) {
		char *o = w->buf + w->len;
		o[0] = '"';
		for (size_t i = 0; i < len; i++)
			o[1 + i] = key[i];
		o[len + 1] = '"';
		o[len + 2] = ':';
		w->len += len + 3;
		w->after_key = 1;
		return;
	}
	if (w->depth == 0)
		w->error = 1;
	put_char(w, '"');
	put_bytes(w, key, len);
	if (w->pretty)
		put_bytes(w, "\": ", 3);
	else
		put_bytes(w, "\":", 2);
	w->after_key = 1;
}

void json_string_len(struct json_writer *w, const char *s, size_t len)
{
	before_item(w);
	if (!s) {
		put_bytes(w, "null", 4);
		return;
	}
	quoted(w, s, len);
}

void json_string(struct json_writer *w, const char *s)
{
	json_string_len(w, s, s ? strlen(s) : 0);
}

/* ---- numbers ------------------------------------------------------------- */

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
				     "25262728293031323334353637383940414243444546474849"
				     "50515253545556575859606162636465666768697071727374"
				     "75767778798081828384858687888990919293949596979899";

/* Digits of v ending at end, two at a time; returns where they start. */
static inline char *format_u64(char *end, uint64_t v)
{
	char *p = end;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		p -= 2;
		p[0] = digit_pairs[2 * r];
		p[1] = digit_pairs[2 * r + 1];
	}
	if (v >= 10) {
		p -= 2;
		p[0] = digit_pairs[2 * v];
		p[1] = digit_pairs[2 * v + 1];
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

void json_uint(struct json_writer *w, uint64_t v)
{
	char buf[24];
	char *p = format_u64(buf + sizeof(buf), v);
	before_item(w);
	put_bytes(w, p, (size_t)(buf + sizeof(buf) - p));
}

void json_int(struct json_writer *w, int64_t v)
{
	char buf[24];
	uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	char *p = format_u64(buf + sizeof(buf), mag);
	if (v < 0)
		*--p = '-';
	before_item(w);
	put_bytes(w, p, (size_t)(buf + sizeof(buf) - p));
}

/* printf follows LC_NUMERIC; JSON wants a point whatever the locale. */
static void fix_decimal_point(char *s)
{
	for (; *s; s++)
		if (*s == ',')
			*s = '.';
}

void json_double(struct json_writer *w, double v)
{
	char buf[40];
	if (!isfinite(v)) {
		json_null(w);
		return;
	}
	/* The fewest significant digits that read back as v. A normal double's
	 * ulp is under a fifth of the spacing of 15-digit decimals, so its
	 * correctly rounded 15-digit form, trailing zeros dropped by %g, is its
	 * shortest form whenever one of 15 digits or fewer exists; 17 digits
	 * always identify a double. Subnormals carry fewer digits: search. */
	int prec = fabs(v) < DBL_MIN && v != 0 ? 1 : 15;
	for (; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		fix_decimal_point(buf);
		if (prec == 17 || strtod(buf, NULL) == v)
			break;
	}
	before_item(w);
	put_bytes(w, buf, strlen(buf));
}

static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

void json_decimal(struct json_writer *w, int64_t q, int decimals)
{
	char buf[32];
	if (decimals > 9)
		decimals = 9;
	if (decimals < 0)
		decimals = 0;
	uint64_t mag = q < 0 ? (uint64_t)0 - (uint64_t)q : (uint64_t)q;
	uint64_t unit = (uint64_t)pow10[decimals];
	char *end = buf + sizeof(buf), *p = end;
	if (decimals > 0) {
		uint64_t frac = mag % unit;
		for (int d = 0; d < decimals; d++, frac /= 10)
			*--p = (char)('0' + frac % 10);
		*--p = '.';
	}
	p = format_u64(p, mag / unit);
	if (q < 0)
		*--p = '-';
	before_item(w);
	put_bytes(w, p, (size_t)(end - p));
}

void json_fixed(struct json_writer *w, double v, int decimals)
{
	char buf[400]; /* DBL_MAX has 309 digits before the point */
	if (!isfinite(v)) {
		json_null(w);
		return;
	}
	if (decimals > 17)
		decimals = 17; /* no double carries more */
	if (decimals < 0)
		decimals = 0;
	/* Fast and exact for what chrome export writes (nanoseconds as
	 * microseconds with 3 decimals): one rounding to an integer number of
	 * the last decimal, then integer formatting. */
	double scaled = v * (decimals <= 9 ? pow10[decimals] : 0);
	if (decimals <= 9 && fabs(scaled) < 9007199254740992.0) {
		json_decimal(w, (int64_t)llround(scaled), decimals);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	fix_decimal_point(buf);
	before_item(w);
	put_bytes(w, buf, strlen(buf));
}

void json_bool(struct json_writer *w, int v)
{
	before_item(w);
	if (v)
		put_bytes(w, "true", 4);
	else
		put_bytes(w, "false", 5);
}

void json_null(struct json_writer *w)
{
	before_item(w);
	put_bytes(w, "null", 4);
}

int json_writer_error(const struct json_writer *w)
{
	return w->error || ferror(w->out);
}
