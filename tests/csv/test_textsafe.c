/*
 * test_textsafe.c - common/textsafe.h, the one escaper of every text
 * writer and the one UTF-8 sanitiser of every CSV and JSON writer: exact
 * forms, lengths, and cuts that never split an escape or a character.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/textsafe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FFFD "\xef\xbf\xbd"

static void test_escape_forms(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"plain name", "plain name"},
		{"\x1b]0;t\x07", "\\x1b]0;t\\x07"},
		{"a\rb\bc\nd\te\x7f", "a\\x0db\\x08c\\x0ad\\x09e\\x7f"},
		{"c1 \xc2\x9b!", "c1 \\xc2\\x9b!"},        /* C1 CSI */
		{"nbsp \xc2\xa0 ok", "nbsp \xc2\xa0 ok"}, /* U+00A0 is printable */
		{"\xe6\xbc\xa2\xf0\x9f\x98\x80", "\xe6\xbc\xa2\xf0\x9f\x98\x80"},
		{"\xff", "\\xff"},
		{"\xe2\x82", "\\xe2\\x82"},             /* truncated */
		{"\xc0\xaf", "\\xc0\\xaf"},             /* overlong '/' */
		{"\xed\xa0\x80", "\\xed\\xa0\\x80"},    /* surrogate */
		{"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"}, /* above U+10FFFF */
		{"back\\slash", "back\\slash"},
		{"", ""},
	};
	char buf[128];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = text_escape(buf, sizeof(buf), cases[i].in);
		assert_string_equal(buf, cases[i].out);
		assert_int_equal(n, strlen(cases[i].out));
		assert_int_equal(text_is_safe(cases[i].in), strcmp(cases[i].in, cases[i].out) == 0);
		char *dup = text_escape_dup(cases[i].in);
		assert_string_equal(dup, cases[i].out);
		free(dup);
	}
	assert_int_equal(text_escape(NULL, 0, "\x1b"), 4);
	assert_string_equal((text_escape(buf, sizeof(buf), NULL), buf), "");
}

/* A buffer too small holds whole pieces only, and the full length comes back. */
static void test_escape_cut(void **state)
{
	(void)state;
	char buf[8];
	assert_int_equal(text_escape(buf, sizeof(buf), "ab\x1b\x1b"), 10);
	assert_string_equal(buf, "ab\\x1b"); /* not "ab\x1b\x" */
	assert_int_equal(text_escape(buf, 4, "a\xe6\xbc\xa2"), 4);
	assert_string_equal(buf, "a"); /* not half a character */
	char clean[12];
	assert_string_equal(text_clean(clean, sizeof(clean), "short"), "short");
	assert_string_equal(text_clean(clean, sizeof(clean), "abcdefghijklmnop"), "abcdefgh...");
	assert_string_equal(text_clean(clean, sizeof(clean), "abcde\x1b[2Jxyz"), "abcde...");
	char *big = malloc(5000);
	assert_non_null(big);
	memset(big, 0x1b, 4999);
	big[4999] = '\0';
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_int_equal(text_fputs(big, f) >= 0, 1);
	fclose(f);
	assert_int_equal(len, 4 * 4999);
	assert_memory_equal(out + 4 * 4998, "\\x1b", 4);
	free(out);
	free(big);
}

static void test_sanitize(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"ok \x1b\n", "ok \x1b\n"}, /* controls stay: CSV quotes, JSON escapes */
		{"c1\xc2\x9b", "c1\xc2\x9b"},
		{"bad\xff|", "bad" FFFD "|"},
		{"\xe2\x82|", FFFD "|"},                      /* one maximal subpart */
		{"\xc0\xaf", FFFD FFFD},                      /* overlong: each byte */
		{"\xed\xa0\x80", FFFD FFFD FFFD},             /* surrogate: each byte */
		{"\xf0\x9f\x98", FFFD},                       /* truncated 4-byte */
		{"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
	};
	char buf[64];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].in);
		assert_int_equal(utf8_sanitize(buf, cases[i].in, len), strlen(cases[i].out));
		assert_string_equal(buf, cases[i].out);
		assert_int_equal(utf8_valid(cases[i].in, len), strcmp(cases[i].in, cases[i].out) == 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_forms),
		cmocka_unit_test(test_escape_cut),
		cmocka_unit_test(test_sanitize),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
