/*
 * import_tell.h - what the importer's parts (the JSON parse, the events, the
 * writing) tell its caller, below all of them so that none calls back up
 * into the driver (import.c): the first failure, and the progress hook.
 */
#ifndef GPDL_FORMATS_IMPORT_IMPORT_TELL_H
#define GPDL_FORMATS_IMPORT_IMPORT_TELL_H

#include <stdint.h>

struct import;

/* The progress hook (import_set_progress() in import.h), NULL when none. */
extern void (*import_progress)(uint64_t events);

/* The first failure of an import into its err buffer (later ones are the
 * first one's consequences); returns -1 for `return import_fail(...)`. */
int import_fail(struct import *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
