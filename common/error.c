/* error.c - die, usage_error, error, warning, BUG: how gprof-dl says what went wrong. */
#include "error.h"

#include "textsafe.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *current_command;

void error_set_command(const char *name) { current_command = name; }

/* The longest message, in its terminal form, written whole; a longer one
 * keeps its start and its end (where the reason is: "...': File name too
 * long") with "..." between them. */
#define MESSAGE_MAX 1024

/* Where to cut s near at (moving back when back, else forward) so that no
 * \xNN escape and no UTF-8 sequence is split. */
static size_t cut_at(const char *s, size_t len, size_t at, int back)
{
	for (int i = 1; i <= 3 && i <= (int)at; i++) /* inside "\xNN" */
		if (s[at - i] == '\\' && at - i + 1 < len && s[at - i + 1] == 'x') {
			at = back ? at - i : at - i + 4;
			break;
		}
	while (at > 0 && at < len && ((unsigned char)s[at] & 0xc0) == 0x80)
		at += back ? -1 : 1;
	return at;
}

static void vreport(const char *prefix, const char *fmt, va_list ap, const char *suffix)
{
	char small[1024], *buf = small;
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small) && (buf = malloc((size_t)n + 1)) != NULL)
		vsnprintf(buf, (size_t)n + 1, fmt, again);
	else if (!buf)
		buf = small; /* cut: no memory for the whole */
	va_end(again);
	/* messages quote names and file names: one line, in its terminal form */
	char fixed[4096], *safe = fixed;
	size_t need = text_escape(NULL, 0, buf) + 1;
	if (need > sizeof(fixed) && (safe = malloc(need)) == NULL)
		safe = fixed; /* cut: no memory for the whole */
	text_escape(safe, safe == fixed ? sizeof(fixed) : need, buf);
	size_t len = strlen(safe);
	fflush(stdout);
	if (len <= MESSAGE_MAX) {
		fprintf(stderr, "gprof-dl: %s%s%s%s\n", prefix, safe, suffix ? ": " : "", suffix ? suffix : "");
	} else {
		size_t head = cut_at(safe, len, MESSAGE_MAX / 2, 1);
		size_t tail = cut_at(safe, len, len - (MESSAGE_MAX / 2 - 3), 0);
		fprintf(stderr, "gprof-dl: %s%.*s...%s%s%s\n", prefix, (int)head, safe, safe + tail,
			suffix ? ": " : "", suffix ? suffix : "");
	}
	if (safe != fixed)
		free(safe);
	if (buf != small)
		free(buf);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap, NULL);
	va_end(ap);
	exit(1);
}

void die_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap, strerror(e));
	va_end(ap);
	exit(1);
}

void usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap, NULL);
	va_end(ap);
	if (current_command)
		fprintf(stderr, "see 'gprof-dl %s --help'\n", current_command);
	else
		fprintf(stderr, "see 'gprof-dl --help'\n");
	exit(2);
}

int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap, NULL);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap, NULL);
	va_end(ap);
}

void gpdl_bug(const char *file, int line, const char *fmt, ...)
{
	char where[256];
	va_list ap;
	snprintf(where, sizeof(where), "BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vreport(where, fmt, ap, NULL);
	va_end(ap);
	abort();
}

void *xmalloc(unsigned long n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory (%lu bytes)", n);
	return p;
}

void *xcalloc(unsigned long n, unsigned long size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory (%lu x %lu bytes)", n, size);
	return p;
}

void *xrealloc(void *p, unsigned long n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory (%lu bytes)", n);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		die("out of memory");
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	char *s = xmalloc(n > 0 ? (size_t)n + 1 : 1);
	vsnprintf(s, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
	return s;
}

void *xgrow_zeroed(void *p, uint32_t *n, uint32_t index, unsigned long size)
{
	if (index < *n)
		return p;
	uint32_t old = *n, grown = index + 1 > 2 * old ? index + 1 : 2 * old;
	unsigned char *q = xrealloc(p, (unsigned long)grown * size);
	memset(q + (size_t)old * size, 0, (size_t)(grown - old) * size);
	*n = grown;
	return q;
}

char *xmemdup0(const void *p, unsigned long len)
{
	char *c = xmalloc(len + 1);
	memcpy(c, p, len);
	c[len] = '\0';
	return c;
}
