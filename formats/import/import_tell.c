/*
 * import_tell.c - what the importer's parts tell its caller (import_tell.h):
 * the first failure, in words, and the progress hook.
 */
#include "formats/import/import_tell.h"
#include "formats/import/import_int.h"

#include <stdarg.h>
#include <stdio.h>

void (*import_progress)(uint64_t events);

void import_set_progress(void (*tick)(uint64_t events))
{
	import_progress = tick;
}

int import_fail(struct import *im, const char *fmt, ...)
{
	va_list ap;
	if (im->errlen && !im->err[0]) { /* the first failure is the one to tell */
		va_start(ap, fmt);
		vsnprintf(im->err, im->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}
