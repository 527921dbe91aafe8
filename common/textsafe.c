/*
 * textsafe.c - terminal and UTF-8 safe forms of names (see textsafe.h).
 */
#include "textsafe.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

size_t utf8_sequence(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* UTF-16 surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		*bad = 1; /* ASCII, continuation byte, C0/C1 lead (overlong), F5..FF */
		return 0;
	}
	size_t i = 1;
	if (i < n && s[i] >= lo && s[i] <= hi)
		for (i = 2; i < len && i < n && (s[i] & 0xc0) == 0x80; i++)
			;
	if (i == len)
		return len;
	*bad = i;
	return 0;
}

int utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t bad;
	for (size_t i = 0; i < len;) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		size_t n = utf8_sequence(s + i, len - i, &bad);
		if (!n)
			return 0;
		i += n;
	}
	return 1;
}

size_t utf8_sanitize(char *dst, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t o = 0, bad = 0;
	for (size_t i = 0; i < len;) {
		size_t n = s[i] < 0x80 ? 1 : utf8_sequence(s + i, len - i, &bad);
		if (n) {
			memcpy(dst + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(dst + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += bad;
		}
	}
	dst[o] = '\0';
	return o;
}

/* The length of the printable character at s, or 0 when its first byte is to
 * be escaped: a C0 control, DEL, a C1 control or not well-formed UTF-8. */
static size_t printable(const unsigned char *s, size_t n)
{
	size_t bad;
	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f ? 1 : 0;
	size_t len = utf8_sequence(s, n, &bad);
	if (len == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0; /* U+0080..U+009F */
	return len;
}

int text_is_safe(const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = strlen((const char *)s);
	for (size_t i = 0; i < n;) {
		size_t k = printable(s + i, n - i);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

size_t text_escape(char *dst, size_t size, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = strlen((const char *)s), total = 0, o = 0;
	int full = size == 0;

	for (size_t i = 0; i < n;) {
		size_t k = printable(s + i, n - i);
		char e[4] = {'\\', 'x', hex[s[i] >> 4], hex[s[i] & 15]};
		const char *piece = k ? (const char *)s + i : e;
		size_t len = k ? k : 4;
		if (!full && o + len < size) {
			memcpy(dst + o, piece, len);
			o += len;
		} else {
			full = 1; /* nothing after a piece that did not fit */
		}
		total += len;
		i += k ? k : 1;
	}
	if (size)
		dst[o] = '\0';
	return total;
}

char *text_escape_dup(const char *s)
{
	size_t need = text_escape(NULL, 0, s) + 1;
	char *buf = xmalloc(need);
	text_escape(buf, need, s);
	return buf;
}

int text_fputs(const char *s, FILE *out)
{
	char small[1024], *buf = small;
	if (text_is_safe(s))
		return fputs(s ? s : "", out);
	size_t need = text_escape(NULL, 0, s) + 1;
	if (need > sizeof(small))
		buf = xmalloc(need);
	text_escape(buf, need, s);
	int rc = fputs(buf, out);
	if (buf != small)
		free(buf);
	return rc;
}

const char *text_clean(char *buf, size_t size, const char *s)
{
	if (text_escape(buf, size, s) < size)
		return buf;
	/* whole pieces only, so no escape is cut in two */
	text_escape(buf, size - 3, s); /* size >= 8 */
	memcpy(buf + strlen(buf), "...", 4);
	return buf;
}
