/*
 * output.h - an output file of a subcommand (summary -o, diff -o, report -o,
 * export, import), written through common/outfile.h: whole or not at all,
 * never over one of the command's inputs.
 */
#ifndef GPDL_COMMON_OUTPUT_H
#define GPDL_COMMON_OUTPUT_H

#include "common/outfile.h"

/* Opens path's temporary file, after refusing an output that is one of the
 * n inputs (even with force). 0, or -1 after a one-line message. */
int output_open(struct outfile *o, const char *path, int force, const char *const *inputs,
		    int n);
/* The output put in place: 0, or -1 after a one-line message (the old file
 * at the name, if any, is left as it was). */
int output_commit(struct outfile *o);
/* After a failed write (e: the errno seen then, 0 when unknown): one line
 * "cannot write 'P': <reason>", and the temporary file removed. -1. */
int output_fail(struct outfile *o, int e);

#endif
