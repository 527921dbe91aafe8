/*
 * chrome_read.c - reading a chrome export back with yajl, for the tests
 * (see chrome_read.h).
 */
#include "tests/chrome/chrome_read.h"

#include "formats/chrome/chrome_writer.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Exports path to a string; *rc gets export_writer_run's result. */
char *export_text(const char *path, int *rc)
{
	char err[512], *text = NULL;
	size_t len = 0;
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));
	if (!r)
		fail_msg("cannot open fixture: %s", err);
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	struct export_writer *w = chrome_writer_new(f);
	*rc = export_writer_run(w, r);
	export_writer_destroy(w);
	assert_int_equal(fclose(f), 0);
	trace_reader_close(r);
	return text;
}

yajl_val parse(const char *text)
{
	char err[512] = "";
	yajl_val v = yajl_tree_parse(text, err, sizeof(err));
	if (!v)
		fail_msg("the export is not JSON: %s", err);
	return v;
}

yajl_val get(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t i = 0; i < YAJL_GET_OBJECT(obj)->len; i++)
		if (strcmp(YAJL_GET_OBJECT(obj)->keys[i], key) == 0)
			return YAJL_GET_OBJECT(obj)->values[i];
	return NULL;
}

const char *get_str(yajl_val obj, const char *key)
{
	yajl_val v = get(obj, key);
	return v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

/* The number's text as written, for exact comparisons. */
const char *get_num(yajl_val obj, const char *key)
{
	yajl_val v = get(obj, key);
	return v && YAJL_IS_NUMBER(v) ? YAJL_GET_NUMBER(v) : NULL;
}

long long get_int(yajl_val obj, const char *key)
{
	yajl_val v = get(obj, key);
	if (!v || !YAJL_IS_INTEGER(v))
		fail_msg("'%s' is not an integer", key);
	return YAJL_GET_INTEGER(v);
}

void assert_str(yajl_val obj, const char *key, const char *want)
{
	const char *got = get_str(obj, key);
	if (!got || strcmp(got, want) != 0)
		fail_msg("'%s': got '%s', want '%s'", key, got ? got : "(none)", want);
}

void assert_num(yajl_val obj, const char *key, const char *want)
{
	const char *got = get_num(obj, key);
	if (!got || strcmp(got, want) != 0)
		fail_msg("'%s': got %s, want %s", key, got ? got : "(none)", want);
}

struct evlist events_of(yajl_val doc)
{
	yajl_val ev = get(doc, "traceEvents");
	assert_non_null(ev);
	assert_true(YAJL_IS_ARRAY(ev));
	struct evlist l = {YAJL_GET_ARRAY(ev)->values, YAJL_GET_ARRAY(ev)->len};
	return l;
}

size_t count_ph(struct evlist evs, const char *ph)
{
	size_t n = 0;
	for (size_t i = 0; i < evs.len; i++)
		n += strcmp(get_str(evs.values[i], "ph"), ph) == 0;
	return n;
}

/* The one event with this name and ph, failing unless exactly one. */
yajl_val find_event(struct evlist evs, const char *ph, const char *name)
{
	yajl_val found = NULL;
	for (size_t i = 0; i < evs.len; i++) {
		yajl_val e = evs.values[i];
		if (strcmp(get_str(e, "ph"), ph) == 0 && strcmp(get_str(e, "name"), name) == 0) {
			if (found)
				fail_msg("two '%s' events named '%s'", ph, name);
			found = e;
		}
	}
	if (!found)
		fail_msg("no '%s' event named '%s'", ph, name);
	return found;
}

/* The metadata event of this kind for (pid, tid), or NULL. */
yajl_val find_meta(struct evlist evs, const char *name, long long pid, long long tid)
{
	for (size_t i = 0; i < evs.len; i++) {
		yajl_val e = evs.values[i];
		if (!strcmp(get_str(e, "ph"), "M") && !strcmp(get_str(e, "name"), name) &&
		    get_int(e, "pid") == pid && get_int(e, "tid") == tid)
			return e;
	}
	return NULL;
}

