/*
 * test_chrome_details.c - trace 1.2's details in the chrome export: an
 * operator's "Sequence number" and "Input Dims" under the PyTorch profiler's
 * (Kineto's) names, Input Dims as the array the shapes spell when they are in
 * torch's form and as the string otherwise, and a step's "samples"; read back
 * by yajl from the export of the ops fixture (trace_fixture.h).
 */
#include "formats/chrome/chrome_writer.h"
#include "tests/chrome/chrome_read.h"
#include "tests/chrome/trace_fixture.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* v as compact JSON (numbers as written, strings quoted unescaped). */
static void compact(yajl_val v, char *buf, size_t size, size_t *n)
{
	if (YAJL_IS_ARRAY(v)) {
		*n += (size_t)snprintf(buf + *n, size - *n, "[");
		for (size_t i = 0; i < YAJL_GET_ARRAY(v)->len; i++) {
			if (i)
				*n += (size_t)snprintf(buf + *n, size - *n, ",");
			compact(YAJL_GET_ARRAY(v)->values[i], buf, size, n);
		}
		*n += (size_t)snprintf(buf + *n, size - *n, "]");
	} else if (YAJL_IS_STRING(v)) {
		*n += (size_t)snprintf(buf + *n, size - *n, "\"%s\"", YAJL_GET_STRING(v));
	} else if (YAJL_IS_NUMBER(v)) {
		*n += (size_t)snprintf(buf + *n, size - *n, "%s", YAJL_GET_NUMBER(v));
	} else {
		*n += (size_t)snprintf(buf + *n, size - *n, "?");
	}
}

static void test_dims_canonical(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int ok;
	} cases[] = {
		{"[[32, 64], [64]]", 1},
		{"[]", 1},
		{"[[], []]", 1},
		{"[[0, -1, 7]]", 1},
		{"[[[[2]]], 3]", 1},
		{"[5]", 1},
		{"[999999999999999999]", 1},   /* 18 digits */
		{"[9999999999999999999]", 0},  /* 19: might not fit */
		{"[[32,64]]", 0},              /* another spacing */
		{"[[32, 64] ]", 0},
		{" [[32]]", 0},
		{"[[32]] ", 0},
		{"[[01]]", 0},                 /* not an integer's one spelling */
		{"[[-0]]", 0},
		{"[[-]]", 0},
		{"[[1.5]]", 0},
		{"[[32, 6", 0},                /* cut */
		{"[[32]]]", 0},
		{"32", 0},                     /* not a list */
		{"", 0},
		{"[[\"a\"]]", 0},
		{"[[1], ]", 0},
		{"[, [1]]", 0},
		{"[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]", 1}, /* 16 deep */
		{"[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]", 0}, /* 17 */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (chrome_dims_canonical(cases[i].s, strlen(cases[i].s)) != cases[i].ok)
			fail_msg("'%s': want %d", cases[i].s, cases[i].ok);
}

static void test_details(void **state)
{
	(void)state;
	char *path = fix_path("ops.gpdl");
	assert_int_equal(fix_write_ops(path), 0);
	int rc;
	char *text = export_text(path, &rc);
	assert_int_equal(rc, 0);
	yajl_val root = parse(text);
	struct evlist evs = events_of(root);
	assert_int_equal(count_ph(evs, "X"), fixo_nevents);
	for (size_t k = 0; k < fixo_nevents; k++) {
		const struct fixo_event *f = &fixo_events[k];
		yajl_val e = find_event(evs, "X", f->name);
		yajl_val args = get(e, "args");
		assert_str(e, "cat", f->type == TRACE_EV_OPERATOR ? "cpu_op" : "user_annotation");
		assert_str(args, "type", trace_event_type_name(f->type));
		if (f->has_seq) {
			char want[32];
			snprintf(want, sizeof(want), "%" PRId64, f->seq);
			assert_num(args, "Sequence number", want);
		} else {
			assert_null(get(args, "Sequence number"));
		}
		if (f->dims_json) {
			char got[512];
			size_t n = 0;
			yajl_val dims = get(args, "Input Dims");
			assert_non_null(dims);
			compact(dims, got, sizeof(got), &n);
			if (strcmp(got, f->dims_json) != 0)
				fail_msg("%s: Input Dims %s, want %s", f->name, got, f->dims_json);
		} else {
			assert_null(get(args, "Input Dims"));
		}
		if (f->samples)
			assert_int_equal(get_int(args, "samples"), (long long)f->samples);
		else
			assert_null(get(args, "samples"));
		/* no other detail comes with them */
		assert_null(get(args, "External id"));
		assert_null(get(args, "correlation"));
	}
	yajl_tree_free(root);
	free(text);
	free(path);
}

static int teardown(void **state)
{
	(void)state;
	fix_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dims_canonical),
		cmocka_unit_test(test_details),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
