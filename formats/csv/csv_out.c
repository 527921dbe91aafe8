/*
 * csv_out.c - CSV rows through libcsv (see csv_out.h).
 */
#include "formats/csv/csv_out.h"

#include "lib/common/textsafe.h"

#include <csv.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void csv_out_init(struct csv_out *c, FILE *out)
{
	c->out = out;
	c->row_started = 0;
	c->error = 0;
}

void csv_out_field(struct csv_out *c, const char *s)
{
	char *clean = NULL;
	size_t len = strlen(s);
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

void csv_out_end_row(struct csv_out *c)
{
	if (fputs("\r\n", c->out) == EOF)
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

static void put(struct csv_out *c, const char *s, size_t n)
{
	if (c->row_started && fputc_unlocked(',', c->out) == EOF)
		c->error = 1;
	if (n && fwrite_unlocked(s, 1, n, c->out) != n)
		c->error = 1;
	c->row_started = 1;
}

void csv_out_empty(struct csv_out *c)
{
	put(c, "", 0);
}

/* Digits of v ending at end; returns where they start. */
static char *digits(char *end, uint64_t v)
{
	char *p = end;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

void csv_out_uint(struct csv_out *c, uint64_t v)
{
	char buf[24];
	char *p = digits(buf + sizeof(buf), v);
	put(c, p, (size_t)(buf + sizeof(buf) - p));
}

void csv_out_int(struct csv_out *c, int64_t v)
{
	char buf[24];
	char *p = digits(buf + sizeof(buf), v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
	if (v < 0)
		*--p = '-';
	put(c, p, (size_t)(buf + sizeof(buf) - p));
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
	put(c, buf, strlen(buf));
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
	put(c, p, (size_t)(end - p));
}

void csv_out_header(struct csv_out *c, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put(c, names[i], strlen(names[i]));
	csv_out_end_row(c);
}

size_t csv_utf8_clean(char *buf, const char *s, size_t len)
{
	return utf8_sanitize(buf, s, len);
}

void csv_out_text(struct csv_out *c, const char *s)
{
	char small[512], *clean = NULL, *quoted = small;
	size_t len = strlen(s);
	if (!utf8_valid(s, len)) {
		clean = malloc(3 * len + 1);
		if (!clean) {
			c->error = 1;
			return;
		}
		len = csv_utf8_clean(clean, s, len);
		s = clean;
	}
	/* libcsv quotes into memory; the rare long field gets a bigger buffer */
	size_t need = csv_write(small, sizeof(small), s, len);
	if (need > sizeof(small)) {
		quoted = malloc(need);
		if (quoted)
			csv_write(quoted, need, s, len);
	}
	if (quoted)
		put(c, quoted, need);
	else
		c->error = 1;
	if (quoted != small)
		free(quoted);
	free(clean);
}
