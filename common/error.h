/*
 * error.h - how gprof-dl says something went wrong (git's roles).
 *
 *   die()      fatal: the input or the system is at fault; exit status 1
 *   usage_error() a bad invocation; exit status 2, with a pointer to --help
 *   error()    report and return -1, for the caller to decide
 *   warning()  report and carry on
 *   BUG()      an internal assertion failed; abort
 *
 * Messages start lower-case, have no full stop, put the subject in quotes, and
 * are prefixed with the program name: "gprof-dl: cannot open 'x.gpdl': ...".
 */
#ifndef GPDL_COMMON_ERROR_H
#define GPDL_COMMON_ERROR_H

#include <stdarg.h>
#include <stdint.h>

#define GPDL_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* The subcommand currently running, for usage_error's pointer to its --help. */
void error_set_command(const char *name);

__attribute__((noreturn)) void die(const char *fmt, ...) GPDL_PRINTF(1, 2);
__attribute__((noreturn)) void die_errno(const char *fmt, ...) GPDL_PRINTF(1, 2);
__attribute__((noreturn)) void usage_error(const char *fmt, ...) GPDL_PRINTF(1, 2);
int error(const char *fmt, ...) GPDL_PRINTF(1, 2);
void warning(const char *fmt, ...) GPDL_PRINTF(1, 2);
__attribute__((noreturn)) void gpdl_bug(const char *file, int line, const char *fmt, ...)
	GPDL_PRINTF(3, 4);
#define BUG(...) gpdl_bug(__FILE__, __LINE__, __VA_ARGS__)

/* Allocation that dies on failure: analysis and the launcher, never the collector. */
void *xmalloc(unsigned long n);
void *xcalloc(unsigned long n, unsigned long size);
void *xrealloc(void *p, unsigned long n);
char *xstrdup(const char *s);
/* fmt formatted with ap into memory from xmalloc (ap is consumed). */
char *xvasprintf(const char *fmt, va_list ap) GPDL_PRINTF(1, 0);
/* A copy of len bytes with a NUL after them (the bytes may hold NULs). */
char *xmemdup0(const void *p, unsigned long len);
/* An array of *n elements of size bytes grown, where index is beyond it, to
 * index + 1 or twice *n elements, whichever is more, the new ones zeroed;
 * returns it (moved or not) and sets *n. */
void *xgrow_zeroed(void *p, uint32_t *n, uint32_t index, unsigned long size);

#endif
