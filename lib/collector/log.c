/*
 * log.c - the collector's debug log: GPROF_DL_DEBUG=1 only.
 *
 * It may run in a signal handler, in a child between fork and exec, or while
 * the target holds stdio's locks, so it formats into a fixed stack buffer by
 * hand (no stdio, no malloc, no locale) and writes it with one write(2).
 */
#include "lib/collector/collector.h"

#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#define LOG_MAX 512

struct out {
	char buf[LOG_MAX];
	size_t n;
};

static void put(struct out *o, char c)
{
	if (o->n < sizeof(o->buf) - 1)
		o->buf[o->n++] = c;
}

static void put_str(struct out *o, const char *s)
{
	if (!s)
		s = "(null)";
	while (*s)
		put(o, *s++);
}

static void put_num(struct out *o, unsigned long long v, unsigned base, int neg)
{
	char tmp[24];
	size_t i = 0;
	do {
		tmp[i++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		put(o, '-');
	while (i)
		put(o, tmp[--i]);
}

static const char *put_conv(struct out *o, const char *f, va_list *ap)
{
	int longs = 0;
	while (*f == 'l') {
		longs++;
		f++;
	}
	switch (*f) {
	case 's':
		put_str(o, va_arg(*ap, const char *));
		break;
	case 'd': {
		long long v = longs >= 2 ? va_arg(*ap, long long) : longs ? va_arg(*ap, long) : va_arg(*ap, int);
		put_num(o, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, 10, v < 0);
		break;
	}
	case 'u':
	case 'x': {
		unsigned long long v = longs >= 2 ? va_arg(*ap, unsigned long long)
				       : longs ? va_arg(*ap, unsigned long) : va_arg(*ap, unsigned);
		put_num(o, v, *f == 'x' ? 16 : 10, 0);
		break;
	}
	case 'p':
		put_str(o, "0x");
		put_num(o, (unsigned long long)(uintptr_t)va_arg(*ap, void *), 16, 0);
		break;
	case '%':
		put(o, '%');
		break;
	default:
		put(o, '?');
		if (!*f)
			return f;
	}
	return f + 1;
}

void coll_log(const char *fmt, ...)
{
	if (!coll.debug)
		return;
	int saved = errno;
	struct out o = {.n = 0};
	va_list ap;

	put_str(&o, "gprof-dl collector[");
	put_num(&o, (unsigned long long)getpid(), 10, 0);
	put_str(&o, "]: ");
	va_start(ap, fmt);
	for (const char *f = fmt; *f;) {
		if (*f != '%') {
			put(&o, *f++);
			continue;
		}
		f = put_conv(&o, f + 1, &ap);
	}
	va_end(ap);
	o.buf[o.n++] = '\n';
	for (size_t done = 0; done < o.n;) {
		ssize_t w = write(STDERR_FILENO, o.buf + done, o.n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	errno = saved;
}
