/*
 * outname.h - the file name patterns of `gprof-dl run -o`, as nsys spells
 * them:
 *
 *   %p        the pid of the process the file is for
 *   %h        the host name
 *   %q{VAR}   the value of environment variable VAR of that process ("" unset)
 *   %n        the smallest N >= 1 that makes the path new
 *   %%        a '%'
 *
 * A pattern with %p or %q{...} is per rank: each rank of a distributed job
 * gets its own file, named from its own pid and environment (recorder.h).
 * A pattern is parsed once, at the command line, so that a bad one is a
 * usage error before anything starts; expanding it never fails.
 */
#ifndef GPDL_RECORDER_OUTNAME_H
#define GPDL_RECORDER_OUTNAME_H

#include <stddef.h>
#include <stdint.h>

struct outname;

/* NULL, with a one-line message in err, for a pattern that is empty, has
 * an unterminated %q{, an empty or malformed variable name, an unknown
 * placeholder or a '%' at its end, or uses more than RING_VARS_MAX
 * variables. */
struct outname *outname_parse(const char *pattern, char *err, size_t errlen);
void outname_free(struct outname *o);

const char *outname_pattern(const struct outname *o);
/* Whether the pattern names a file per rank (it has %p or %q{...}). */
int outname_per_rank(const struct outname *o);
/* The distinct variables of its %q{...}, in order of first use: what a
 * process reports (values[] of outname_expand() follow this order). */
unsigned outname_nvars(const struct outname *o);
const char *outname_var(const struct outname *o, unsigned i);
/* The variables joined by commas ("RANK,LOCAL_RANK"), for RING_VARS_ENV;
 * "" when none. Valid while o is. */
const char *outname_var_list(const struct outname *o);

/* The path for the process pid on host whose variables have values[i]
 * (NULL: unset). taken(path, ctx) says whether a path is not new: %n
 * becomes the smallest N >= 1 for which it is not (every %n the same N).
 * taken may be NULL without %n. A malloc'ed string. */
char *outname_expand(const struct outname *o, uint32_t pid, const char *host,
		     const char *const *values, int (*taken)(const char *path, void *ctx), void *ctx);

/* PATH made distinct for the Nth time (N >= 1): "-N" before the extension
 * of its last component ("t-0.gpdl" -> "t-0-1.gpdl"), else at its end. */
char *outname_distinct(const char *path, unsigned n);

#endif
