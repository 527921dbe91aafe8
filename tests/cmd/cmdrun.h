/*
 * cmdrun.h - a gprof-dl subcommand run as a user runs it, for the command
 * tests: the built executable in a child process, its exit status, stdout
 * and stderr read back whole; and the checks every such test makes.
 */
#ifndef GPDL_TESTS_CMD_CMDRUN_H
#define GPDL_TESTS_CMD_CMDRUN_H

#include <yajl/yajl_tree.h>

struct cmd_result {
	int status; /* the exit status, or 128 + the signal that ended it */
	char *out, *err;
};

/* Runs `bin sub args...` (args NULL-terminated, at most 29). */
struct cmd_result cmd_run(const char *bin, const char *sub, const char *const *args);
void cmd_result_free(struct cmd_result *r);

/* cmocka failures naming what was looked for and where. */
void assert_contains(const char *text, const char *want);
/* One "gprof-dl: ..." line, as every error message is. */
void assert_one_line(const char *err);

/* JSON read back with yajl: obj's member k (failing when absent), a
 * string value, and a number within 1e-9 relative of want. */
yajl_val jkey(yajl_val obj, const char *k);
const char *jstr(yajl_val v);
void assert_jnum(yajl_val v, double want);
/* A number's value; obj.k1.k2 (k2 NULL: obj.k1), failing when absent; an
 * array's element i and its length, failing when not an array. */
double jnum(yajl_val v);
yajl_val jpath(yajl_val obj, const char *k1, const char *k2);
yajl_val jelem(yajl_val arr, size_t i);
size_t jlen(yajl_val arr);

#endif
