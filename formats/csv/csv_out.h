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

struct csv_out {
	FILE *out;
	char *buf;        /* NULL: straight to out */
	size_t len, cap;
	int row_started;
	int error;
};

void csv_out_init(struct csv_out *c, FILE *out);
/* With a buffer of cap bytes (at least 4096); csv_out_release() frees it. */
void csv_out_init_buffered(struct csv_out *c, FILE *out, size_t cap);
/* Writes what is buffered to the stream: 0, or -1 when a write failed. */
int csv_out_flush(struct csv_out *c);
/* Flushes and frees the buffer; the output is unbuffered afterwards. */
void csv_out_release(struct csv_out *c);
void csv_out_field(struct csv_out *c, const char *s);
void csv_out_fieldf(struct csv_out *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void csv_out_end_row(struct csv_out *c);
void csv_out_blank_line(struct csv_out *c);
int csv_out_error(const struct csv_out *c);

void csv_out_text(struct csv_out *c, const char *s);
void csv_out_uint(struct csv_out *c, uint64_t v);
void csv_out_int(struct csv_out *c, int64_t v);
/* The fewest digits that read back as v; empty when not finite. */
void csv_out_double(struct csv_out *c, double v);
/* v rounded to decimals (at most 9) places, trailing zeros dropped ("2",
 * "4.194304"), without printf where it can; empty when not finite. */
void csv_out_fixed(struct csv_out *c, double v, int decimals);
void csv_out_empty(struct csv_out *c);
/* One or more fields already in their CSV form ("\"a\",\"b\""), as one. */
void csv_out_raw(struct csv_out *c, const char *s, size_t n);
/* A header row: the names, which need no quoting, then the row's end. */
void csv_out_header(struct csv_out *c, const char *const *names, size_t n);

/* s with each ill-formed UTF-8 sequence replaced by U+FFFD (the maximal
 * subpart practice of Unicode, as the JSON writer does), into buf of size
 * at least 3 * len + 1; returns the length written. */
size_t csv_utf8_clean(char *buf, const char *s, size_t len);

/* s quoted as libcsv's csv_write() quotes (in double quotes, each quote
 * doubled) into dst of at least 2 * len + 2 bytes; returns the length. */
size_t csv_quote(char *dst, const char *s, size_t len);

#endif
