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

#include "lib/common/textsafe.h"

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

static void put_bytes(struct json_writer *w, const char *s, size_t n)
{
	if (write_run(w->out, s, n) < 0)
		w->error = 1;
}

static void put_char(struct json_writer *w, char c)
{
	if (putc_unlocked(c, w->out) == EOF)
		w->error = 1;
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
static void before_item(struct json_writer *w)
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

static void escape(FILE *out, const char *str, size_t len, int *error)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t run = 0; /* start of the bytes not yet written */
	size_t i = 0;
	int failed = 0;

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
		if (write_run(out, s + run, i - run) < 0)
			failed = 1;
		if (c >= 0x80) {
			if (write_run(out, "\xef\xbf\xbd", 3) < 0)
				failed = 1;
			i += bad;
		} else {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			size_t n = 6;
			if (c == '"' || c == '\\') {
				e[1] = (char)c;
				n = 2;
			}
			if (write_run(out, e, n) < 0)
				failed = 1;
			i++;
		}
		run = i;
	}
	if (write_run(out, s + run, i - run) < 0)
		failed = 1;
	if (failed && error)
		*error = 1;
}

void json_escape_to(FILE *out, const char *s, size_t len)
{
	escape(out, s, len, NULL);
}

static void quoted(struct json_writer *w, const char *s, size_t len)
{
	put_char(w, '"');
	escape(w->out, s, len, &w->error);
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

/* Digits of v at the end of buf[0..n); returns where they start. */
static char *format_u64(char *end, uint64_t v)
{
	char *p = end;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
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

void json_fixed(struct json_writer *w, double v, int decimals)
{
	static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
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
		int64_t q = (int64_t)llround(scaled);
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
