/*
 * test_json_writer.c - the streaming JSON writer, checked by a real parser.
 *
 * Everything written is parsed back with yajl: the tree API for structure and
 * numbers, the event API for strings (it reports their length, so a NUL inside
 * a string is seen). glibc's iconv is the independent judge of whether a byte
 * string is well-formed UTF-8.
 */
#include "formats/json/json_writer.h"

#include <errno.h>
#include <float.h>
#include <iconv.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

/* ---- helpers ------------------------------------------------------------- */

struct doc {
	char *text;
	size_t len;
	FILE *f;
	struct json_writer w;
};

static void doc_open(struct doc *d, int pretty)
{
	memset(d, 0, sizeof(*d));
	d->f = open_memstream(&d->text, &d->len);
	assert_non_null(d->f);
	json_writer_init(&d->w, d->f, pretty);
}

static char *doc_close(struct doc *d)
{
	assert_false(json_writer_error(&d->w));
	assert_int_equal(d->w.depth, 0);
	assert_int_equal(fclose(d->f), 0);
	return d->text;
}

static yajl_val parse_tree(const char *text)
{
	char err[256] = "";
	yajl_val v = yajl_tree_parse(text, err, sizeof(err));
	if (!v)
		fail_msg("yajl rejected %s: %s", text, err);
	return v;
}

/* The event API, to get one string's exact bytes back. */
struct one_string {
	unsigned char buf[4096];
	size_t len;
	int count;
};

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct one_string *o = ctx;
	if (len > sizeof(o->buf))
		return 0;
	memcpy(o->buf, s, len);
	o->len = len;
	o->count++;
	return 1;
}

static const yajl_callbacks string_callbacks = {.yajl_string = on_string};

/* Parses text, which must be one JSON string, into o; 0 when yajl rejects it. */
static int parse_string(const char *text, size_t len, struct one_string *o)
{
	memset(o, 0, sizeof(*o));
	yajl_handle h = yajl_alloc(&string_callbacks, NULL, o);
	int ok = yajl_parse(h, (const unsigned char *)text, len) == yajl_status_ok &&
		 yajl_complete_parse(h) == yajl_status_ok && o->count == 1;
	yajl_free(h);
	return ok;
}

/* Writes bytes as a JSON string, parses it back into o. */
static void round_trip_string(const void *bytes, size_t n, struct one_string *o)
{
	struct doc d;
	doc_open(&d, 0);
	json_string_len(&d.w, bytes, n);
	char *text = doc_close(&d);
	if (!parse_string(text, d.len, o))
		fail_msg("yajl rejected the escaped form of %zu bytes: %s", n, text);
	free(text);
}

static int utf8_valid(const void *s, size_t n)
{
	iconv_t c = iconv_open("UTF-32LE", "UTF-8");
	assert_true(c != (iconv_t)-1);
	char out[4 * 4096 + 16];
	char *in = (char *)s, *o = out;
	size_t il = n, ol = sizeof(out);
	size_t r = iconv(c, &in, &il, &o, &ol);
	iconv_close(c);
	return r != (size_t)-1 && il == 0;
}

/* ---- the buffered writer ------------------------------------------------- */

/* One document of every kind of value, strings of every byte, escapes and
 * ill-formed UTF-8 among them, some longer than the buffer, written by w. */
static void write_mixed(struct json_writer *w)
{
	char s[9000];
	json_begin_array(w);
	for (int round = 0; round < 40; round++) {
		json_begin_object(w);
		json_key(w, "name");
		for (size_t i = 0; i < 300; i++)
			s[i] = (char)((i * 7 + (size_t)round) & 0xff);
		json_string_len(w, s, 300);
		json_key_plain(w, "ts", 2);
		json_decimal(w, (int64_t)round * 1234567 - 5000000, 3);
		json_key(w, "q\"\\k\x01");
		json_fixed(w, round * 0.001 - 0.0125, 3);
		json_key(w, "n");
		json_int(w, INT64_MIN + round);
		json_key(w, "u");
		json_uint(w, UINT64_MAX - (uint64_t)round);
		json_key(w, "long");
		memset(s, round % 3 ? 'a' : '"', sizeof(s));
		s[100] = '\xff';
		json_string_len(w, s, sizeof(s));
		json_end_object(w);
		json_raw(w, " ", 1);
	}
	json_end_array(w);
}

/* The buffered writer writes exactly the bytes of the plain one, whatever
 * falls across its buffer's end, and nothing before it is flushed. */
static void test_buffered_same_bytes(void **state)
{
	(void)state;
	struct doc plain, buffered;
	doc_open(&plain, 0);
	write_mixed(&plain.w);
	char *want = doc_close(&plain);

	memset(&buffered, 0, sizeof(buffered));
	buffered.f = open_memstream(&buffered.text, &buffered.len);
	assert_non_null(buffered.f);
	json_writer_init_buffered(&buffered.w, buffered.f, 0, 4096);
	write_mixed(&buffered.w);
	assert_int_equal(fflush(buffered.f), 0);
	assert_true(buffered.len < plain.len); /* the rest still in the writer's buffer */
	assert_int_equal(json_writer_flush(&buffered.w), 0);
	json_writer_release(&buffered.w);
	char *got = doc_close(&buffered);
	assert_int_equal(buffered.len, plain.len);
	assert_memory_equal(got, want, plain.len);
	free(got);
	free(want);
}

/* json_decimal writes json_fixed's digits for any count of the last
 * decimal that a double holds exactly, and is exact beyond. */
static void test_decimal(void **state)
{
	(void)state;
	static const int64_t v[] = {0, 1, -1, 999, 1000, -1000, 1001, 123456789, -987654321,
				    (INT64_C(1) << 50) - 1, -(INT64_C(1) << 50) + 1};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (int dec = 0; dec <= 9; dec++) {
			struct doc a, b;
			doc_open(&a, 0);
			json_decimal(&a.w, v[i], dec);
			char *x = doc_close(&a);
			doc_open(&b, 0);
			double scale = 1;
			for (int k = 0; k < dec; k++)
				scale *= 10;
			json_fixed(&b.w, (double)v[i] / scale, dec);
			char *y = doc_close(&b);
			if (v[i] > -(INT64_C(1) << 50) / 1000000000 && v[i] < (INT64_C(1) << 50) / 1000000000)
				assert_string_equal(x, y);
			free(x);
			free(y);
		}
	}
	struct doc d;
	doc_open(&d, 0);
	json_decimal(&d.w, INT64_MIN, 3);
	json_raw(&d.w, " ", 1);
	json_decimal(&d.w, -5, 3);
	json_raw(&d.w, " ", 1);
	json_decimal(&d.w, 1234567, 3);
	json_raw(&d.w, " ", 1);
	json_decimal(&d.w, 42, 0);
	char *t = doc_close(&d);
	assert_string_equal(t, "-9223372036854775.808 -0.005 1234.567 42");
	free(t);
}

/* ---- strings ------------------------------------------------------------- */

static void test_every_byte(void **state)
{
	(void)state;
	for (int b = 0; b < 256; b++) {
		unsigned char in[3] = {'a', (unsigned char)b, 'z'};
		struct one_string o;
		round_trip_string(in, sizeof(in), &o);
		if (b < 0x80) {
			assert_int_equal(o.len, 3);
			assert_memory_equal(o.buf, in, 3);
		} else {
			/* alone, no byte above 0x7f is well-formed UTF-8 */
			assert_int_equal(o.len, 5);
			assert_memory_equal(o.buf, "a\xef\xbf\xbdz", 5);
		}
	}
}

static void test_escape_forms(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} cases[] = {
		{"", 0, "\"\""},
		{"plain", 5, "\"plain\""},
		{"\"", 1, "\"\\\"\""},
		{"\\", 1, "\"\\\\\""},
		{"/", 1, "\"/\""},
		{"\n\t\r\b\f", 5, "\"\\u000a\\u0009\\u000d\\u0008\\u000c\""},
		{"\0", 1, "\"\\u0000\""},
		{"\x1f\x7f", 2, "\"\\u001f\\u007f\""},
		{"a\"b\\c", 5, "\"a\\\"b\\\\c\""},
		{"\xc3\xa9", 2, "\"\xc3\xa9\""},
		{"\xff", 1, "\"\xef\xbf\xbd\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct doc d;
		doc_open(&d, 0);
		json_string_len(&d.w, cases[i].in, cases[i].len);
		char *text = doc_close(&d);
		assert_string_equal(text, cases[i].out);
		free(text);

		/* json_escape_to: the same without the quotes */
		char *raw = NULL;
		size_t rawlen = 0;
		FILE *f = open_memstream(&raw, &rawlen);
		json_escape_to(f, cases[i].in, cases[i].len);
		fclose(f);
		size_t outlen = strlen(cases[i].out);
		assert_int_equal(rawlen, outlen - 2);
		assert_memory_equal(raw, cases[i].out + 1, outlen - 2);
		free(raw);
	}
}

#define FFFD "\xef\xbf\xbd"

/* Each maximal subpart of an ill-formed sequence becomes one U+FFFD (Unicode
 * 15, section 3.9, "U+FFFD Substitution of Maximal Subparts"). */
static void test_nasty_sequences(void **state)
{
	(void)state;
	static const struct {
		const char *name, *in, *out;
	} cases[] = {
		{"U+0080", "\xc2\x80", "\xc2\x80"},
		{"U+07FF", "\xdf\xbf", "\xdf\xbf"},
		{"U+0800", "\xe0\xa0\x80", "\xe0\xa0\x80"},
		{"U+D7FF", "\xed\x9f\xbf", "\xed\x9f\xbf"},
		{"U+E000", "\xee\x80\x80", "\xee\x80\x80"},
		{"U+FFFF", "\xef\xbf\xbf", "\xef\xbf\xbf"},
		{"U+10000", "\xf0\x90\x80\x80", "\xf0\x90\x80\x80"},
		{"U+10FFFF", "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},
		{"U+2028 line separator", "a\xe2\x80\xa8z", "a\xe2\x80\xa8z"},
		{"overlong NUL", "\xc0\x80", FFFD FFFD},
		{"overlong C1", "\xc1\xbf", FFFD FFFD},
		{"overlong 3-byte", "\xe0\x80\x80", FFFD FFFD FFFD},
		{"overlong 3-byte max", "\xe0\x9f\xbf", FFFD FFFD FFFD},
		{"overlong 4-byte", "\xf0\x80\x80\x80", FFFD FFFD FFFD FFFD},
		{"overlong 4-byte max", "\xf0\x8f\xbf\xbf", FFFD FFFD FFFD FFFD},
		{"high surrogate", "\xed\xa0\x80", FFFD FFFD FFFD},
		{"low surrogate", "\xed\xbf\xbf", FFFD FFFD FFFD},
		{"surrogate pair (CESU-8)", "\xed\xa0\xbd\xed\xb8\x80", FFFD FFFD FFFD FFFD FFFD FFFD},
		{"above U+10FFFF", "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD},
		{"F5 lead", "\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD},
		{"FF FE", "\xff\xfe", FFFD FFFD},
		{"lone continuation", "a\x80z", "a" FFFD "z"},
		{"truncated 2 at end", "a\xc3", "a" FFFD},
		{"truncated 3 at end", "a\xe2\x82", "a" FFFD},
		{"truncated 4 at end", "a\xf0\x9f\x98", "a" FFFD},
		{"truncated 3 before ASCII", "\xe2\x82z", FFFD "z"},
		{"truncated 4 before quote", "\xf0\x9f\x98\"", FFFD "\""},
		{"truncated then valid", "\xe2\x82\xe2\x82\xac", FFFD "\xe2\x82\xac"},
		{"5-byte form", "\xf8\x88\x80\x80\x80", FFFD FFFD FFFD FFFD FFFD},
		{"lead then lead", "\xc3\xc3\xa9", FFFD "\xc3\xa9"},
		{"control after truncation", "\xe2\n", FFFD "\n"},
		{"backslash after truncation", "\xf0\x9f\\", FFFD "\\"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct one_string o;
		round_trip_string(cases[i].in, strlen(cases[i].in), &o);
		size_t n = strlen(cases[i].out);
		if (o.len != n || memcmp(o.buf, cases[i].out, n) != 0)
			fail_msg("%s: got %zu bytes, want %zu", cases[i].name, o.len, n);
		assert_true(utf8_valid(o.buf, o.len));
	}
}

static void check_against_iconv(const unsigned char *in, size_t n)
{
	struct one_string o;
	round_trip_string(in, n, &o);
	assert_true(utf8_valid(o.buf, o.len));
	if (utf8_valid(in, n)) {
		assert_int_equal(o.len, n);
		assert_memory_equal(o.buf, in, n);
	} else {
		assert_non_null(memmem(o.buf, o.len, FFFD, 3));
	}
}

/* Every 1- and 2-byte string, and many random longer ones biased to the bytes
 * where UTF-8 is subtle: whatever went in, valid UTF-8 comes out, identical
 * to the input when iconv says the input was well-formed. */
static void test_property_against_iconv(void **state)
{
	(void)state;
	for (int a = 0; a < 256; a++) {
		unsigned char one = (unsigned char)a;
		check_against_iconv(&one, 1);
		for (int b = 0; b < 256; b++) {
			unsigned char two[2] = {(unsigned char)a, (unsigned char)b};
			check_against_iconv(two, 2);
		}
	}
	static const unsigned char interesting[] = {
		0x00, 0x22, 0x5c, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1,
		0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff,
	};
	srand(42);
	for (int iter = 0; iter < 200000; iter++) {
		unsigned char buf[12];
		size_t n = 3 + (size_t)(rand() % 9);
		for (size_t i = 0; i < n; i++)
			buf[i] = rand() % 2 ? interesting[rand() % sizeof(interesting)]
					    : (unsigned char)rand();
		check_against_iconv(buf, n);
	}
}

static size_t encode_utf8(uint32_t cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Every scalar value, encoded by the test, comes back unchanged. */
static void test_every_code_point(void **state)
{
	(void)state;
	unsigned char buf[4000];
	size_t n = 0;
	for (uint32_t cp = 1; cp <= 0x10ffff; cp++) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		n += encode_utf8(cp, buf + n);
		if (n > sizeof(buf) - 4 || cp == 0x10ffff) {
			struct one_string o;
			round_trip_string(buf, n, &o);
			assert_int_equal(o.len, n);
			assert_memory_equal(o.buf, buf, n);
			n = 0;
		}
	}
}

static void test_null_string(void **state)
{
	(void)state;
	struct doc d;
	doc_open(&d, 0);
	json_begin_array(&d.w);
	json_string(&d.w, NULL);
	json_string(&d.w, "x");
	json_end_array(&d.w);
	char *text = doc_close(&d);
	assert_string_equal(text, "[null,\"x\"]");
	free(text);
}

/* ---- structure ----------------------------------------------------------- */

static void write_sample(struct json_writer *w)
{
	json_begin_object(w);
	json_key(w, "a");
	json_int(w, -1);
	json_key(w, "empty object");
	json_begin_object(w);
	json_end_object(w);
	json_key(w, "empty array");
	json_begin_array(w);
	json_end_array(w);
	json_key(w, "list");
	json_begin_array(w);
	json_uint(w, UINT64_MAX);
	json_int(w, INT64_MIN);
	json_bool(w, 1);
	json_bool(w, 0);
	json_null(w);
	json_begin_array(w);
	json_begin_object(w);
	json_key(w, "k\"ey\n");
	json_string(w, "v");
	json_end_object(w);
	json_end_array(w);
	json_end_array(w);
	json_key(w, "d");
	json_double(w, 0.5);
	json_end_object(w);
}

static void test_structure_compact(void **state)
{
	(void)state;
	struct doc d;
	doc_open(&d, 0);
	write_sample(&d.w);
	char *text = doc_close(&d);
	assert_string_equal(text,
			    "{\"a\":-1,\"empty object\":{},\"empty array\":[],\"list\":"
			    "[18446744073709551615,-9223372036854775808,true,false,null,"
			    "[{\"k\\\"ey\\u000a\":\"v\"}]],\"d\":0.5}");
	yajl_val v = parse_tree(text);
	const char *path[] = {"list", NULL};
	yajl_val list = yajl_tree_get(v, path, yajl_t_array);
	assert_non_null(list);
	assert_int_equal(YAJL_GET_ARRAY(list)->len, 6);
	yajl_tree_free(v);
	free(text);
}

static void test_structure_pretty(void **state)
{
	(void)state;
	struct doc d;
	doc_open(&d, 1);
	write_sample(&d.w);
	char *text = doc_close(&d);
	assert_string_equal(text, "{\n"
				  "  \"a\": -1,\n"
				  "  \"empty object\": {},\n"
				  "  \"empty array\": [],\n"
				  "  \"list\": [\n"
				  "    18446744073709551615,\n"
				  "    -9223372036854775808,\n"
				  "    true,\n"
				  "    false,\n"
				  "    null,\n"
				  "    [\n"
				  "      {\n"
				  "        \"k\\\"ey\\u000a\": \"v\"\n"
				  "      }\n"
				  "    ]\n"
				  "  ],\n"
				  "  \"d\": 0.5\n"
				  "}");
	yajl_tree_free(parse_tree(text));
	free(text);
}

static void test_deep_nesting(void **state)
{
	(void)state;
	struct doc d;
	doc_open(&d, 1);
	for (int i = 0; i < JSON_WRITER_MAX_DEPTH; i++)
		json_begin_array(&d.w);
	json_uint(&d.w, 7);
	for (int i = 0; i < JSON_WRITER_MAX_DEPTH; i++)
		json_end_array(&d.w);
	char *text = doc_close(&d);
	yajl_tree_free(parse_tree(text));
	free(text);

	/* one level too many is the caller's bug, reported as an error */
	doc_open(&d, 0);
	for (int i = 0; i <= JSON_WRITER_MAX_DEPTH; i++)
		json_begin_array(&d.w);
	assert_true(json_writer_error(&d.w));
	fclose(d.f);
	free(d.text);

	doc_open(&d, 0);
	json_end_object(&d.w);
	assert_true(json_writer_error(&d.w));
	fclose(d.f);
	free(d.text);
}

/* Long keys and strings in a big array: commas stay right across buffer
 * boundaries of the stream. */
static void test_many_values(void **state)
{
	(void)state;
	struct doc d;
	doc_open(&d, 0);
	json_begin_array(&d.w);
	for (int i = 0; i < 10000; i++) {
		json_begin_object(&d.w);
		json_key(&d.w, "i");
		json_int(&d.w, i);
		json_key(&d.w, "s");
		json_string(&d.w, "\xe2\x82\xac\x01\xff");
		json_end_object(&d.w);
	}
	json_end_array(&d.w);
	char *text = doc_close(&d);
	yajl_val v = parse_tree(text);
	assert_int_equal(YAJL_GET_ARRAY(v)->len, 10000);
	yajl_val last = YAJL_GET_ARRAY(v)->values[9999];
	const char *pi[] = {"i", NULL}, *ps[] = {"s", NULL};
	assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(last, pi, yajl_t_number)), 9999);
	assert_string_equal(YAJL_GET_STRING(yajl_tree_get(last, ps, yajl_t_string)),
			    "\xe2\x82\xac\x01" FFFD);
	yajl_tree_free(v);
	free(text);
}

/* ---- numbers ------------------------------------------------------------- */

static char *one_double(double v)
{
	struct doc d;
	doc_open(&d, 0);
	json_double(&d.w, v);
	return doc_close(&d);
}

static void test_double_forms(void **state)
{
	(void)state;
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{0.0, "0"},
		{-0.0, "-0"},
		{1.0, "1"},
		{0.1, "0.1"},
		{-2.5, "-2.5"},
		{1.0 / 3.0, "0.3333333333333333"},
		{2.0 / 3.0, "0.6666666666666666"},
		{0.1 + 0.2, "0.30000000000000004"},
		{100.0, "100"},
		{1e21, "1e+21"},
		{1e-7, "1e-07"},
		{123456789012345678.0, "1.2345678901234568e+17"},
		{5e-324, "5e-324"},
		{2.2250738585072009e-308, "2.225073858507201e-308"},
		{DBL_MAX, "1.7976931348623157e+308"},
		{DBL_MIN, "2.2250738585072014e-308"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = one_double(cases[i].v);
		assert_string_equal(text, cases[i].text);
		free(text);
	}
	const double nonfinite[] = {INFINITY, -INFINITY, NAN};
	for (size_t i = 0; i < 3; i++) {
		char *text = one_double(nonfinite[i]);
		assert_string_equal(text, "null");
		free(text);
	}
}

/* Digits of the mantissa with leading and trailing zeros dropped: "70" and
 * "0.007" have one. */
static int significant_digits(const char *s)
{
	char digits[400];
	int n = 0;
	for (; *s && *s != 'e'; s++)
		if (*s >= '0' && *s <= '9' && (n || *s != '0'))
			digits[n++] = *s;
	while (n > 0 && digits[n - 1] == '0')
		n--;
	return n ? n : 1;
}

/* Random bit patterns: exact round trip through a real parser, and no
 * shorter precision would have round-tripped. */
static void test_double_round_trip(void **state)
{
	(void)state;
	srand(7);
	for (int i = 0; i < 100000; i++) {
		uint64_t bits = 0;
		for (int k = 0; k < 4; k++)
			bits = bits << 16 | (uint64_t)(rand() & 0xffff);
		double v;
		memcpy(&v, &bits, sizeof(v));
		if (i % 3 == 0)
			v = (double)(rand() % 100000) / 1000.0; /* values people write */
		char *text = one_double(v);
		if (!isfinite(v)) {
			assert_string_equal(text, "null");
			free(text);
			continue;
		}
		char arr[400];
		snprintf(arr, sizeof(arr), "[%s]", text);
		yajl_val t = parse_tree(arr);
		yajl_val num = YAJL_GET_ARRAY(t)->values[0];
		assert_true(YAJL_IS_NUMBER(num));
		double back = strtod(YAJL_GET_NUMBER(num), NULL);
		assert_memory_equal(&back, &v, sizeof(v));
		int digits = significant_digits(text);
		if (digits > 1) {
			char shorter[400];
			snprintf(shorter, sizeof(shorter), "%.*g", digits - 1, v);
			if (strtod(shorter, NULL) == v)
				fail_msg("%s: %s is shorter", text, shorter);
		}
		yajl_tree_free(t);
		free(text);
	}
}

static char *one_fixed(double v, int decimals)
{
	struct doc d;
	doc_open(&d, 0);
	json_fixed(&d.w, v, decimals);
	return doc_close(&d);
}

static void test_fixed(void **state)
{
	(void)state;
	static const struct {
		double v;
		int decimals;
		const char *text;
	} cases[] = {
		{0.0, 3, "0.000"},
		{1.5, 3, "1.500"},
		{-1.5, 3, "-1.500"},
		{0.0005, 3, "0.001"},
		{123456.789, 3, "123456.789"},
		{2.5, 0, "3"},
		{-0.25, 1, "-0.3"},
		{1e20, 3, "100000000000000000000.000"},
		{-1e20, 2, "-100000000000000000000.00"},
		{1.0, 20, "1.00000000000000000"},
		{INFINITY, 3, "null"},
		{NAN, 3, "null"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = one_fixed(cases[i].v, cases[i].decimals);
		if (strcmp(text, cases[i].text) != 0)
			fail_msg("json_fixed(%g, %d): got %s, want %s", cases[i].v,
				 cases[i].decimals, text, cases[i].text);
		free(text);
	}
	/* nanoseconds written as microseconds keep every nanosecond */
	srand(3);
	for (int i = 0; i < 100000; i++) {
		uint64_t ns = ((uint64_t)rand() << 20 ^ (uint64_t)rand()) % 100000000000000ull;
		char *text = one_fixed((double)ns / 1000.0, 3);
		char want[40];
		snprintf(want, sizeof(want), "%llu.%03llu", (unsigned long long)(ns / 1000),
			 (unsigned long long)(ns % 1000));
		assert_string_equal(text, want);
		free(text);
	}
}

/* ---- errors -------------------------------------------------------------- */

static void test_write_error_is_sticky(void **state)
{
	(void)state;
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		skip();
	setvbuf(f, NULL, _IONBF, 0);
	struct json_writer w;
	json_writer_init(&w, f, 0);
	assert_false(json_writer_error(&w));
	json_begin_array(&w);
	assert_true(json_writer_error(&w));
	clearerr(f);
	json_end_array(&w); /* fails again; either way the error stays */
	clearerr(f);
	assert_true(json_writer_error(&w));
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buffered_same_bytes),
		cmocka_unit_test(test_decimal),
		cmocka_unit_test(test_every_byte),
		cmocka_unit_test(test_escape_forms),
		cmocka_unit_test(test_nasty_sequences),
		cmocka_unit_test(test_property_against_iconv),
		cmocka_unit_test(test_every_code_point),
		cmocka_unit_test(test_null_string),
		cmocka_unit_test(test_structure_compact),
		cmocka_unit_test(test_structure_pretty),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_many_values),
		cmocka_unit_test(test_double_forms),
		cmocka_unit_test(test_double_round_trip),
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_write_error_is_sticky),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
