/*
 * chrome_read.h - a chrome export read back by yajl's tree parser, and the
 * look-ups the chrome tests assert with. Every failure is a cmocka failure
 * that says which key and what was found.
 */
#ifndef GPDL_TESTS_CHROME_READ_H
#define GPDL_TESTS_CHROME_READ_H

#include <stddef.h>

#include <yajl/yajl_tree.h>

/* Exports the trace at path to a malloc'ed string; *rc gets
 * export_writer_run's result. */
char *export_text(const char *path, int *rc);
/* The document, or a test failure naming yajl's complaint. */
yajl_val parse(const char *text);

yajl_val get(yajl_val obj, const char *key);          /* NULL: no such key */
const char *get_str(yajl_val obj, const char *key);   /* NULL: not a string */
const char *get_num(yajl_val obj, const char *key);   /* the number's text as written */
long long get_int(yajl_val obj, const char *key);     /* fails unless an integer */
void assert_str(yajl_val obj, const char *key, const char *want);
void assert_num(yajl_val obj, const char *key, const char *want);

/* traceEvents, as an array to index. */
struct evlist {
	yajl_val *values;
	size_t len;
};
struct evlist events_of(yajl_val doc);
size_t count_ph(struct evlist evs, const char *ph);
/* The one event with this name and ph, failing unless exactly one. */
yajl_val find_event(struct evlist evs, const char *ph, const char *name);
/* The metadata event of this kind for (pid, tid), or NULL. */
yajl_val find_meta(struct evlist evs, const char *name, long long pid, long long tid);

#endif
