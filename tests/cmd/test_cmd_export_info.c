/*
 * test_cmd_export_info.c - `gprof-dl export` and `gprof-dl info` as a user
 * runs them: the built executable (GPDL_BIN), its exit status, its stderr,
 * and what it wrote, read back by yajl.
 *
 * Statuses under test: 2 usage, 1 a file that is not a readable trace or an
 * output that cannot be written, 0 success (a damaged trace included, with a
 * warning naming the offset).
 */
#include "tests/chrome/trace_fixture.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif

struct result {
	int status; /* exit status, or 128+signal */
	char *out, *err;
	size_t outlen;
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (got < 4096)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* Runs gprof-dl with args (NULL-terminated) and TZ=UTC; stdout goes to
 * stdout_path when not NULL, else to a file read back into r->out. */
static void run_to(struct result *r, const char *stdout_path, const char *const *args)
{
	char *out = fix_path("stdout"), *err = fix_path("stderr");
	const char *argv[32] = {GPDL_BIN};
	size_t n = 1;
	for (; args[n - 1]; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fo = open(stdout_path ? stdout_path : out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fo < 0 || fe < 0)
			_exit(99);
		dup2(fo, 1);
		dup2(fe, 2);
		setenv("TZ", "UTC", 1);
		execv(GPDL_BIN, (char *const *)argv);
		_exit(98);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = stdout_path ? NULL : slurp(out, &r->outlen);
	r->err = slurp(err, NULL);
	free(out);
	free(err);
}

#define RUN(r, ...) run_to(r, NULL, (const char *const[]){__VA_ARGS__, NULL})

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static void assert_contains(const char *text, const char *want)
{
	if (!text || !strstr(text, want))
		fail_msg("'%s' not in:\n%s", want, text ? text : "(nothing)");
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Parses an export; returns the number of traceEvents, -1 if not JSON. */
static long count_events(const char *text)
{
	char err[256];
	yajl_val doc = yajl_tree_parse(text, err, sizeof(err));
	if (!doc)
		return -1;
	const char *path[] = {"traceEvents", NULL};
	yajl_val ev = yajl_tree_get(doc, path, yajl_t_array);
	long n = ev ? (long)YAJL_GET_ARRAY(ev)->len : -1;
	yajl_tree_free(doc);
	return n;
}

/* Everything the fixture exports: events, counters, metadata. */
#define FIX_EXPORTED ((long)(FIX_BYTE_RANGES + fix_ncases + 6 + 10))

static char *fixture;

static int setup(void **state)
{
	(void)state;
	fixture = fix_path("fixture.gpdl");
	assert_int_equal(fix_write(fixture), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(fixture);
	fix_cleanup();
	return 0;
}

/* ---- export -------------------------------------------------------------- */

static void test_export_usage(void **state)
{
	(void)state;
	struct result r;
	RUN(&r, "export");
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "see 'gprof-dl export --help'");
	result_free(&r);

	RUN(&r, "export", "--chrome");
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "no trace file");
	result_free(&r);

	RUN(&r, "export", fixture);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--chrome");
	result_free(&r);

	RUN(&r, "export", "--csv", fixture);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "not in this version");
	result_free(&r);

	RUN(&r, "export", "--chrome", "--bogus", fixture);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unknown option '--bogus'");
	result_free(&r);

	RUN(&r, "export", "--chrome", fixture, "-o");
	assert_int_equal(r.status, 2);
	result_free(&r);

	RUN(&r, "export", "--chrome", fixture, fixture);
	assert_int_equal(r.status, 2);
	result_free(&r);

	RUN(&r, "export", "--help");
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: gprof-dl export --chrome FILE");
	result_free(&r);
}

static void test_export_bad_input(void **state)
{
	(void)state;
	struct result r;
	char *missing = fix_path("missing.gpdl");
	RUN(&r, "export", "--chrome", missing);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "gprof-dl: ");
	assert_contains(r.err, missing);
	result_free(&r);

	char *text = fix_path("text.gpdl");
	FILE *f = fopen(text, "w");
	fputs("this is not a trace, it is a text file long enough to hold a header\n", f);
	fclose(f);
	RUN(&r, "export", "--chrome", text);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "not a gprof-dl trace");
	char *json = fix_path("text.json");
	assert_false(exists(json)); /* nothing created for a bad input */
	result_free(&r);
	free(json);
	free(text);
	free(missing);
}

static void test_export_default_name_and_force(void **state)
{
	(void)state;
	struct result r;
	char *json = fix_path("fixture.json");
	unlink(json);
	RUN(&r, "export", "--chrome", fixture);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	result_free(&r);
	char *first = slurp(json, NULL);
	assert_non_null(first);
	assert_int_equal(count_events(first), FIX_EXPORTED);

	/* never overwritten without --force */
	FILE *f = fopen(json, "w");
	fputs("keep me", f);
	fclose(f);
	RUN(&r, "export", "--chrome", fixture);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "exists");
	assert_contains(r.err, "--force");
	result_free(&r);
	char *kept = slurp(json, NULL);
	assert_string_equal(kept, "keep me");
	free(kept);

	RUN(&r, "export", "--force", "--chrome", fixture);
	assert_int_equal(r.status, 0);
	result_free(&r);
	char *again = slurp(json, NULL);
	assert_string_equal(again, first);
	free(again);

	/* a name without .gpdl gets .json appended */
	char *other = fix_path("copy.trace"), *other_json = fix_path("copy.trace.json");
	assert_int_equal(link(fixture, other), 0);
	RUN(&r, "export", "--chrome", other);
	assert_int_equal(r.status, 0);
	assert_true(exists(other_json));
	result_free(&r);
	unlink(other_json);
	unlink(other);
	free(other);
	free(other_json);
	free(first);
	free(json);
}

static void test_export_output_options(void **state)
{
	(void)state;
	struct result r;
	char *out = fix_path("out.json");
	unlink(out);
	RUN(&r, "export", "--chrome", fixture, "-o", out);
	assert_int_equal(r.status, 0);
	result_free(&r);
	char *file = slurp(out, NULL);
	assert_int_equal(count_events(file), FIX_EXPORTED);

	RUN(&r, "export", "--chrome", "-o", "-", fixture);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, file); /* stdout: the same bytes */
	result_free(&r);

	RUN(&r, "export", "--chrome", "--output=-", fixture);
	assert_int_equal(r.status, 0);
	assert_int_equal(count_events(r.out), FIX_EXPORTED);
	result_free(&r);

	/* the trace itself is never the output, --force or not */
	RUN(&r, "export", "--chrome", "--force", "-o", fixture, fixture);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "is the trace being exported");
	result_free(&r);
	RUN(&r, "export", "--chrome", "-o", "-", fixture);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, file);
	result_free(&r);

	RUN(&r, "export", "--chrome", "-o", "/dev/null", fixture);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	result_free(&r);

	/* a directory that does not exist */
	RUN(&r, "export", "--chrome", "-o", "/nonexistent-dir/x.json", fixture);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot create '/nonexistent-dir/x.json'");
	result_free(&r);
	free(file);
	free(out);
}

/* A full disk is an error, never a silently short file. */
static void test_export_write_error(void **state)
{
	(void)state;
	struct result r;
	if (!exists("/dev/full"))
		skip();
	/* a device needs no --force: writing to it overwrites no file */
	RUN(&r, "export", "--chrome", "-o", "/dev/full", fixture);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot write '/dev/full'");
	assert_true(exists("/dev/full")); /* a device is never removed */
	result_free(&r);

	run_to(&r, "/dev/full", (const char *const[]){"export", "--chrome", "-o", "-", fixture, NULL});
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot write 'standard output'");
	/* said once, not again by the final check of stdout */
	assert_null(strstr(strstr(r.err, "cannot write") + 1, "standard output failed"));
	result_free(&r);
}

static void test_export_damaged(void **state)
{
	(void)state;
	struct result r;
	char *path = fix_path("damaged.gpdl"), *json = fix_path("damaged.json");
	long flushed = 0;
	assert_int_equal(fix_write_two_batches(path, 500, 500, &flushed), 0);
	assert_int_equal(truncate(path, flushed + 50), 0);
	RUN(&r, "export", "--chrome", path);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "warning: '");
	assert_contains(r.err, "at offset ");
	assert_contains(r.err, "exported the 500 events before it");
	result_free(&r);
	char *text = slurp(json, NULL);
	assert_non_null(text);
	/* 500 ranges; the thread's sort index; the root's name, label (rank)
	 * and sort index */
	assert_int_equal(count_events(text), 504);
	free(text);
	free(json);
	free(path);
}

/* ---- info ---------------------------------------------------------------- */

static void test_info_fixture(void **state)
{
	(void)state;
	struct result r;
	RUN(&r, "info", fixture);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_contains(r.out, fixture);
	assert_contains(r.out, "  format version     1.0\n");
	assert_contains(r.out, "  recorded by        0.1.0\n");
	assert_contains(r.out, "  host               host-1\n");
	assert_contains(r.out, "  pid                100\n");
	assert_contains(r.out, "  rank               3\n");
	assert_contains(r.out, "  command line       ./app --x \"quoted\"\n");
	assert_contains(r.out, "  clock domain       CLOCK_MONOTONIC, wall offset +1699999000.000000000 s\n");
	assert_contains(r.out, "  start              2023-11-14 22:13:20.000000000 +0000 (clock 1000.000000000 s)\n");
	assert_contains(r.out, "  duration           5.000000 s\n");
	assert_contains(r.out, "  sources            nvtx python\n");
	assert_contains(r.out, "\nprocesses: 2\n");
	assert_contains(r.out, "       101      100     1.000000     4.000000    137  worker\n");
	assert_contains(r.out, "\nthreads: 3\n");
	/* thread 1: 6 events of the fixture's cases, 5 drops, its name with the
	 * control character and the byte that is not UTF-8 made harmless */
	assert_contains(r.out, "      1      100      102     0.000001     5.000000          6        5  worker \"1\" \\ ??\n");
	assert_contains(r.out, "      2      101      101     1.000000            -          4        0  \n");
	char line[128];
	snprintf(line, sizeof(line), "  events             %zu\n", FIX_BYTE_RANGES + fix_ncases);
	assert_contains(r.out, line);
	assert_contains(r.out, "    ranges           263\n");
	assert_contains(r.out, "    marks            1\n");
	assert_contains(r.out, "    unbalanced pops  1\n");
	assert_contains(r.out, "    open at exit     1\n");
	assert_contains(r.out, "    start/end        1\n");
	assert_contains(r.out, "    truncated names  1\n");
	assert_contains(r.out, "    UserDefined      262\n");
	assert_contains(r.out, "    Forward          1\n");
	assert_contains(r.out, "  CPU(Process)       3 samples, min 10.5%, mean 43.2%, max 99.0%\n");
	assert_contains(r.out, "  RSS                1 sample, min 1.0 MiB, mean 1.0 MiB, max 1.0 MiB\n");
	assert_contains(r.out, "  drops              5 records lost (ring full) in 1 thread\n");
	assert_contains(r.out, "  damage             none\n");
	result_free(&r);
}

static void test_info_status(void **state)
{
	(void)state;
	struct result r;
	RUN(&r, "info");
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "see 'gprof-dl info --help'");
	result_free(&r);

	RUN(&r, "info", "--bogus", fixture);
	assert_int_equal(r.status, 2);
	result_free(&r);

	char *missing = fix_path("nothing-here.gpdl");
	RUN(&r, "info", missing);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, missing);
	result_free(&r);

	/* one bad file among good ones: the good ones are shown, status 1 */
	RUN(&r, "info", fixture, missing, fixture);
	assert_int_equal(r.status, 1);
	assert_contains(strstr(r.out, "damage") + 1, "damage             none");
	result_free(&r);

	char *text = fix_path("notes.txt");
	FILE *f = fopen(text, "w");
	fputs("GPRFDL but not really a trace at all, just text\n", f);
	fclose(f);
	RUN(&r, "info", text);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "not a gprof-dl trace");
	result_free(&r);
	free(text);
	free(missing);
}

static void test_info_damaged(void **state)
{
	(void)state;
	struct result r;
	char *path = fix_path("cut.gpdl");
	long flushed = 0;
	assert_int_equal(fix_write_two_batches(path, 300, 300, &flushed), 0);
	assert_int_equal(truncate(path, flushed + 20), 0);
	RUN(&r, "info", path);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "  events             300\n");
	assert_contains(r.out, "  damage             ");
	assert_contains(r.out, " at offset ");
	assert_contains(r.out, "  duration           unknown (no end recorded)\n");
	result_free(&r);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export_usage),
		cmocka_unit_test(test_export_bad_input),
		cmocka_unit_test(test_export_default_name_and_force),
		cmocka_unit_test(test_export_output_options),
		cmocka_unit_test(test_export_write_error),
		cmocka_unit_test(test_export_damaged),
		cmocka_unit_test(test_info_fixture),
		cmocka_unit_test(test_info_status),
		cmocka_unit_test(test_info_damaged),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
