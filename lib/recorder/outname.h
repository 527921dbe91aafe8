/*
 * outname.h - the file name patterns of `gprof-dl run -o`, as nsys spells
 * them:
 *
 *   %p        the pid of the process the file is for
 *   %h        the host name
 *   %q{VAR}   the value of environment variable VAR of that process
 *   %n        the smallest N >= 1 that makes the path new
 *   %%        a '%'
 *
 * A pattern with %p or %q{...} is per rank: each rank of a distributed job
 * gets its own file, named from its own pid and environment (recorder.h).
 * A pattern is parsed once, at the command line, so that a bad one is a
 * usage error before anything starts; expanding it never fails.
 *
 * A value of %q{VAR} names a file only when it is a safe part of one
 * (outname_value_problem()): set, not empty, no '/', no "..", no control
 * character, at most NAME_MAX bytes. nsys refuses an unset variable only;
 * an empty value or one with '/' or ".." would move the file to another
 * directory ('%q{X}/t.gpdl' with X unset or "" is '/t.gpdl'), a control
 * character would be a name no terminal shows as it is. Which environment
 * is checked where: gprof-dl run(1) and outname_check().
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

/* Why VALUE may not stand for a %q{VAR} in a file name, or NULL when it
 * may: "is unset" (NULL), "is empty", "holds a '/'", "holds '..'", "holds a
 * control character", "is longer than a file name may be (N bytes, more
 * than NAME_MAX 255)" - the last into buf (at least 96 bytes). */
const char *outname_value_problem(const char *value, char *buf, size_t size);

/* Checks the values of o's variables (values[i] for outname_var(o, i),
 * NULL: unset): 0, or -1 with a one-line message in err naming the first
 * variable refused and why ("%q{RANK} is unset"). A variable for which
 * may_be_unset(name) says 1 may be unset (not empty or bad): the launcher
 * of a job, which names its ranks' files in their environments. */
int outname_check(const struct outname *o, const char *const *values, int (*may_be_unset)(const char *name),
		  char *err, size_t errlen);

/* PATH made distinct for the Nth time (N >= 1): "-N" before the extension
 * of its last component ("t-0.gpdl" -> "t-0-1.gpdl"), else at its end. */
char *outname_distinct(const char *path, unsigned n);

/* The recorded file: the pattern expanded in this process's environment
 * (its variables, the host name) for the root process pid, %n the first
 * free; "gprof-dl.gpdl" when that is empty (a pattern of unset variables
 * only). A malloc'ed string. */
char *outname_path(const struct outname *o, uint32_t pid);
/* The recorded file without -o: the command's base name and the first
 * free N, "train.py-1.gpdl". A malloc'ed string. */
char *outname_default(const char *cmd);
/* Whether the pattern has a %n (not a %%n). */
int outname_numbered(const struct outname *o);

#endif
