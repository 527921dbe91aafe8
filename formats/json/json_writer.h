/*
 * json_writer.h - a streaming JSON writer: values go out as they are given,
 * so memory does not grow with the document (chrome export of any size).
 *
 * Invariants: the writer tracks nesting and inserts commas itself; strings are
 * escaped so that the output is valid UTF-8 JSON whatever bytes they hold
 * (quotes, backslashes, control characters as \uXXXX, invalid UTF-8 sequences
 * replaced by U+FFFD). Numbers that are not finite are written as null.
 * Output errors are sticky: json_writer_error() says whether any write failed.
 *
 * Two ways to the stream: straight through stdio (json_writer_init), or, for
 * a writer that owns its stream and writes gigabytes (chrome export), through
 * a buffer of the writer's own (json_writer_init_buffered) that goes to the
 * stream in large blocks: nothing reaches the stream before
 * json_writer_flush(), so such a caller writes its own bytes with json_raw().
 */
#ifndef GPDL_FORMATS_JSON_WRITER_H
#define GPDL_FORMATS_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_WRITER_MAX_DEPTH 64

struct json_writer {
	FILE *out;
	char *buf;                          /* NULL: straight to out */
	size_t len, cap;                    /* bytes in buf, and its size */
	int pretty;                         /* newline + indent per level */
	int depth;
	unsigned char first[JSON_WRITER_MAX_DEPTH]; /* no value yet at this level */
	int after_key;
	int error;
};

void json_writer_init(struct json_writer *w, FILE *out, int pretty);
/* A writer with a buffer of cap bytes (at least 4096): call
 * json_writer_flush() before anything else writes to out, and
 * json_writer_release() when done. */
void json_writer_init_buffered(struct json_writer *w, FILE *out, int pretty, size_t cap);
/* Writes the buffered bytes to out: 0, or -1 when a write failed. */
int json_writer_flush(struct json_writer *w);
/* Flushes, then frees the buffer; the writer is unbuffered afterwards. */
void json_writer_release(struct json_writer *w);
/* n bytes as they are, outside the JSON grammar (a caller's framing). */
void json_raw(struct json_writer *w, const char *s, size_t n);
/* A key that needs no escaping (a literal of printable ASCII, no quote or
 * backslash): the same bytes as json_key(), without the scan. */
void json_key_plain(struct json_writer *w, const char *key, size_t len);
void json_begin_object(struct json_writer *w);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w);
void json_end_array(struct json_writer *w);
void json_key(struct json_writer *w, const char *key);
void json_string(struct json_writer *w, const char *s);
void json_string_len(struct json_writer *w, const char *s, size_t len);
void json_int(struct json_writer *w, int64_t v);
void json_uint(struct json_writer *w, uint64_t v);
void json_double(struct json_writer *w, double v); /* shortest round-trip form */
void json_fixed(struct json_writer *w, double v, int decimals); /* e.g. microseconds "%.3f" */
/* units * 10^-decimals (decimals 0..9), exactly: json_fixed's digits for an
 * integer count of the last decimal ("1234567" ns, 3: "1234.567"). */
void json_decimal(struct json_writer *w, int64_t units, int decimals);
void json_bool(struct json_writer *w, int v);
void json_null(struct json_writer *w);
/* Writes s escaped, without quotes, to out: for callers that build strings. */
void json_escape_to(FILE *out, const char *s, size_t len);
/* Non-zero when any write failed (ferror on out). */
int json_writer_error(const struct json_writer *w);

#endif
