#include "error.h"

#include "textsafe.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *current_command;

void error_set_command(const char *name) { current_command = name; }

static void vreport(const char *prefix, const char *fmt, va_list ap, const char *suffix)
{
	char buf[4096], safe[8192];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	/* messages quote names and file names: one line, in its terminal form */
	text_clean(safe, sizeof(safe), buf);
	fflush(stdout);
	fprintf(stderr, "gprof-dl: %s%s%s%s\n", prefix, safe, suffix ? ": " : "", suffix ? suffix : "");
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
