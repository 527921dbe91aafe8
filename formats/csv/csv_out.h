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
 */
#ifndef GPDL_FORMATS_CSV_OUT_H
#define GPDL_FORMATS_CSV_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct csv_out {
	FILE *out;
	int row_started;
	int error;
};

void csv_out_init(struct csv_out *c, FILE *out);
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
/* A header row: the names, which need no quoting, then the row's end. */
void csv_out_header(struct csv_out *c, const char *const *names, size_t n);

/* s with each ill-formed UTF-8 sequence replaced by U+FFFD (the maximal
 * subpart practice of Unicode, as the JSON writer does), into buf of size
 * at least 3 * len + 1; returns the length written. */
size_t csv_utf8_clean(char *buf, const char *s, size_t len);

#endif
