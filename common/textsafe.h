/*
 * textsafe.h - names from a program or a trace, made safe to write out.
 *
 * Range, thread, process, kernel and host names, command lines and file
 * names are data: any bytes the program gave. Every writer sends them
 * through this module, in one of two forms:
 *
 *   terminal text   text_escape(), text_fputs(), text_clean(): each C0
 *                   control (TAB and newline included), DEL, C1 control
 *                   (U+0080..U+009F, two bytes in UTF-8) and byte that is
 *                   not part of well-formed UTF-8 is written as \xNN, one
 *                   per byte ("\x1b]0;t\x07", "\xc2\x9b", "\xff"). So a
 *                   name cannot move the cursor, retitle the terminal, hide
 *                   a line or fake one: one name is one line of printable
 *                   text, and the escape says which bytes were there.
 *                   Widths count the escaped form (4 columns per byte).
 *   CSV and JSON    utf8_sanitize(): each ill-formed UTF-8 sequence (its
 *                   maximal subpart, the Unicode practice) replaced by
 *                   U+FFFD; every other byte as it is, for the CSV quoting
 *                   and the JSON escaping to carry byte for byte.
 *
 * Well-formed UTF-8 is RFC 3629's: no overlong forms, no surrogates
 * (ED A0..ED BF), nothing above U+10FFFF.
 */
#ifndef GPDL_COMMON_TEXTSAFE_H
#define GPDL_COMMON_TEXTSAFE_H

#include <stddef.h>
#include <stdio.h>

/* The length (2..4) of the well-formed multi-byte sequence at s (n bytes
 * available, s[0] >= 0x80), or 0 when it is ill-formed; *bad then holds the
 * length of its maximal subpart (>= 1), the bytes one U+FFFD stands for. */
size_t utf8_sequence(const unsigned char *s, size_t n, size_t *bad);

/* Non-zero when s[0..len) is well-formed UTF-8. */
int utf8_valid(const char *s, size_t len);

/* s[0..len) with each ill-formed sequence replaced by U+FFFD, into dst of at
 * least 3 * len + 1 bytes, NUL-terminated; returns the length written. */
size_t utf8_sanitize(char *dst, const char *s, size_t len);

/* Non-zero when s (NUL-terminated) needs no escaping for a terminal. */
int text_is_safe(const char *s);

/* The terminal form of s (NUL-terminated, NULL as ""), as snprintf: writes
 * at most size - 1 bytes and a NUL, never part of an escape or of a UTF-8
 * sequence, and returns the length of the whole form. */
size_t text_escape(char *dst, size_t size, const char *s);

/* The terminal form of s in memory from xmalloc, for the caller to free. */
char *text_escape_dup(const char *s);

/* Writes the terminal form of s to out; EOF on a write error. */
int text_fputs(const char *s, FILE *out);

/* The terminal form of s in buf (of size bytes, at least 8), cut with "..."
 * when it does not fit; returns buf. For names in printf-built lines. */
#define TEXT_CLEAN_SIZE 1024
const char *text_clean(char *buf, size_t size, const char *s);

#endif
