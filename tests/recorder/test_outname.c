/* `gprof-dl run -o` patterns: what each placeholder expands to, which
 * patterns are per rank, and the messages of bad ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "lib/recorder/outname.h"
#include "lib/ring/ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct outname *parse_ok(const char *pattern)
{
	char err[256] = "";
	struct outname *o = outname_parse(pattern, err, sizeof(err));
	if (!o)
		fail_msg("'%s' refused: %s", pattern, err);
	return o;
}

struct expand_case {
	const char *pattern;
	const char *want;
	int per_rank;
	const char *vars; /* outname_var_list */
};

static void test_expand(void **state)
{
	(void)state;
	/* pid 4242, host "node1", RANK=3, LOCAL_RANK=1, EMPTY="", UNSET unset */
	static const struct expand_case cases[] = {
		{"t.gpdl", "t.gpdl", 0, ""},
		{"t-%p.gpdl", "t-4242.gpdl", 1, ""},
		{"t-%h.gpdl", "t-node1.gpdl", 0, ""},
		{"t-%q{RANK}.gpdl", "t-3.gpdl", 1, "RANK"},
		{"%h/%q{RANK}-%q{LOCAL_RANK}-%q{RANK}.gpdl", "node1/3-1-3.gpdl", 1, "RANK,LOCAL_RANK"},
		{"t-%q{UNSET}.gpdl", "t-.gpdl", 1, "UNSET"},
		{"t-%q{EMPTY}x", "t-x", 1, "EMPTY"},
		{"100%%-%p", "100%-4242", 1, ""},
		{"%%p%%q{RANK}", "%p%q{RANK}", 0, ""},
		{"t-%n.gpdl", "t-1.gpdl", 0, ""},
		{"%p%h%p", "4242node14242", 1, ""},
	};
	static const char *const names[] = {"RANK", "LOCAL_RANK", "EMPTY", "UNSET"};
	static const char *const values[] = {"3", "1", "", NULL};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct outname *o = parse_ok(cases[i].pattern);
		const char *v[RING_VARS_MAX] = {NULL};
		for (unsigned k = 0; k < outname_nvars(o); k++)
			for (size_t j = 0; j < 4; j++)
				if (!strcmp(outname_var(o, k), names[j]))
					v[k] = values[j];
		char *got = outname_expand(o, 4242, "node1", v, NULL, NULL);
		if (strcmp(got, cases[i].want) || outname_per_rank(o) != cases[i].per_rank ||
		    strcmp(outname_var_list(o), cases[i].vars))
			fail_msg("'%s': '%s' per_rank %d vars '%s'", cases[i].pattern, got, outname_per_rank(o),
				 outname_var_list(o));
		assert_string_equal(outname_pattern(o), cases[i].pattern);
		free(got);
		outname_free(o);
	}
}

/* taken: paths t-1 and t-2 (any suffix) exist */
static int taken_12(const char *path, void *ctx)
{
	int *calls = ctx;
	(*calls)++;
	return strstr(path, "-1.") || strstr(path, "-2.") || !strcmp(path, "a1b1");
}

/* PATTERN expands, with t-1 and t-2 taken, to WANT after WANT_CALLS questions. */
static void expect_sequence(const char *pattern, const char *want, int want_calls)
{
	struct outname *o = parse_ok(pattern);
	int calls = 0;
	char *p = outname_expand(o, 1, "h", NULL, taken_12, &calls);
	assert_string_equal(p, want);
	assert_int_equal(calls, want_calls);
	free(p);
	outname_free(o);
}

static void test_sequence(void **state)
{
	(void)state;
	expect_sequence("t-%n.gpdl", "t-3.gpdl", 3);
	/* every %n takes the same N */
	expect_sequence("a%nb%n", "a2b2", 2);
	/* without %n nothing is asked */
	expect_sequence("t.gpdl", "t.gpdl", 0);
}

struct bad_case {
	const char *pattern, *msg;
};

static void test_bad_patterns(void **state)
{
	(void)state;
	static const struct bad_case cases[] = {
		{"", "empty file name"},
		{"t-%q{RANK.gpdl", "unterminated '%q{' in 't-%q{RANK.gpdl'"},
		{"t-%q{}.gpdl", "empty variable name '%q{}' in 't-%q{}.gpdl'"},
		{"t-%q.gpdl", "'%q' in 't-%q.gpdl' needs a variable: %q{VAR}"},
		{"t-%q", "'%q' in 't-%q' needs a variable: %q{VAR}"},
		{"t-%x.gpdl", "unknown placeholder '%x' in 't-%x.gpdl' (known: %p %h %q{VAR} %n %%)"},
		{"t-%P", "unknown placeholder '%P' in 't-%P' (known: %p %h %q{VAR} %n %%)"},
		{"t-%", "'%' at the end of 't-%' (a '%' is written %%)"},
		{"%q{A,B}", "'%q{A,B}' in '%q{A,B}' is not an environment variable"},
		{"%q{A=B}", "'%q{A=B}' in '%q{A=B}' is not an environment variable"},
		{"%q{A}%q{B}%q{C}%q{D}%q{E}%q{F}%q{G}%q{H}%q{I}%q{J}%q{K}%q{L}%q{M}%q{N}%q{O}%q{P}%q{Q}",
		 "'%q{A}%q{B}%q{C}%q{D}%q{E}%q{F}%q{G}%q{H}%q{I}%q{J}%q{K}%q{L}%q{M}%q{N}%q{O}%q{P}%q{Q}' "
		 "uses more than 16 variables"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		struct outname *o = outname_parse(cases[i].pattern, err, sizeof(err));
		if (o)
			fail_msg("'%s' accepted", cases[i].pattern);
		assert_string_equal(err, cases[i].msg);
		assert_null(strchr(err, '\n'));
	}
	/* sixteen are fine, and a repeated one counts once */
	struct outname *o =
		parse_ok("%q{A}%q{B}%q{C}%q{D}%q{E}%q{F}%q{G}%q{H}%q{I}%q{J}%q{K}%q{L}%q{M}%q{N}%q{O}%q{P}%q{A}");
	assert_int_equal(outname_nvars(o), 16);
	outname_free(o);
}

static int rank_var_only(const char *name)
{
	return !strcmp(name, "RANK");
}

/* Values that may not name a file: each refused with its variable and why. */
static void test_bad_values(void **state)
{
	(void)state;
	char long_value[300], name_max[256];
	memset(long_value, 'v', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = '\0';
	memset(name_max, 'v', sizeof(name_max) - 1);
	name_max[sizeof(name_max) - 1] = '\0';
	static const char *const want[] = {
		"%q{X} is unset",
		"%q{X} is empty",
		"%q{X} holds a '/'",
		"%q{X} holds a '/'",
		"%q{X} holds '..'",
		"%q{X} holds '..'",
		"%q{X} holds a control character",
		"%q{X} holds a control character",
		"%q{X} holds a control character",
		"%q{X} is longer than a file name may be (299 bytes, more than NAME_MAX 255)",
	};
	const char *bad[] = {NULL, "", "a/b", "/", "..", "a..b", "a\nb", "\x1b]0;x\x07", "a\x7f", long_value};
	struct outname *o = parse_ok("%q{R}/t-%q{X}.gpdl");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *v[2] = {"0", bad[i]};
		char err[256] = "";
		assert_int_equal(outname_check(o, v, NULL, err, sizeof(err)), -1);
		assert_string_equal(err, want[i]);
	}
	/* the first refused, in the pattern's order */
	const char *both[2] = {NULL, "a/b"};
	char err[256] = "";
	assert_int_equal(outname_check(o, both, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "%q{R} is unset");
	/* fine: a '.', a name of NAME_MAX bytes, UTF-8 */
	const char *good[] = {"3", ".", "a.b", name_max, "r\xc3\xa9sum\xc3\xa9", "-"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const char *v[2] = {"0", good[i]};
		assert_int_equal(outname_check(o, v, NULL, err, sizeof(err)), 0);
	}
	outname_free(o);
	/* a rank variable the caller lets be unset: unset passes, bad does not */
	o = parse_ok("t-%q{RANK}.gpdl");
	const char *unset[1] = {NULL}, *empty[1] = {""};
	assert_int_equal(outname_check(o, unset, rank_var_only, err, sizeof(err)), 0);
	assert_int_equal(outname_check(o, empty, rank_var_only, err, sizeof(err)), -1);
	assert_string_equal(err, "%q{RANK} is empty");
	assert_int_equal(outname_check(o, unset, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "%q{RANK} is unset");
	outname_free(o);
}

static void test_distinct(void **state)
{
	(void)state;
	static const char *const cases[][3] = {
		{"t-0.gpdl", "1", "t-0-1.gpdl"},
		{"dir.d/t-.gpdl", "2", "dir.d/t--2.gpdl"},
		{"dir.d/trace", "1", "dir.d/trace-1"},
		{"a.b.gpdl", "12", "a.b-12.gpdl"},
		{".hidden", "1", ".hidden-1"},
		{"", "1", "-1"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = outname_distinct(cases[i][0], (unsigned)atoi(cases[i][1]));
		assert_string_equal(p, cases[i][2]);
		free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_bad_patterns),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_distinct),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
