/*
 * test_summary_cmd.c - `gprof-dl summary` as a command: exit status 2 with a
 * pointer to --help on usage errors, 1 with the file's name for a file that
 * cannot be read, 0 with a warning naming the offset for a damaged one.
 * Each case runs cmd_summary() in a child process, as main() would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "tests/analysis/tracebuild.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct result {
	int status;
	char *out, *err;
};

static struct result run_summary(const char *const *args)
{
	char *argv[32];
	int argc = 0;
	argv[argc++] = "summary";
	for (; args[argc - 1] && argc < 31; argc++)
		argv[argc] = (char *)args[argc - 1];
	argv[argc] = NULL;
	const char *out = tb_path("stdout.txt"), *err = tb_path("stderr.txt");
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(99);
		error_set_command("summary");
		int rc = cmd_summary(argc, argv);
		fflush(stdout);
		_exit(rc);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	struct result r = {WEXITSTATUS(status), tb_slurp(out, NULL), tb_slurp(err, NULL)};
	return r;
}

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static const char *good_trace(void)
{
	struct tb b;
	tb_open(&b, "good.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	uint32_t d = tb_desc(&b, "work", TRACE_EV_USER_DEFINED);
	for (int k = 0; k < 10; k++) {
		for (int i = 0; i < 100; i++)
			tb_range(&b, 0, d, (uint64_t)(k * 100 + i) * 100, 50);
		tb_flush(&b);
	}
	return tb_close(&b, 200000);
}

static void expect_usage(const char *const *args, const char *message)
{
	struct result r = run_summary(args);
	assert_int_equal(r.status, 2);
	if (!strstr(r.err, message))
		fail_msg("no '%s' in stderr:\n%s", message, r.err);
	assert_non_null(strstr(r.err, "see 'gprof-dl summary --help'"));
	assert_string_equal(r.out, "");
	result_free(&r);
}

static void test_usage_errors(void **state)
{
	(void)state;
	const char *t = good_trace();
	expect_usage((const char *[]){NULL}, "no trace file given");
	expect_usage((const char *[]){t, "--bogus", NULL}, "unknown option '--bogus'");
	expect_usage((const char *[]){t, "-x", NULL}, "unknown option");
	expect_usage((const char *[]){t, "--view", "nope", NULL}, "unknown view 'nope'");
	expect_usage((const char *[]){t, "--view", NULL}, "needs a value");
	expect_usage((const char *[]){t, "--time-unit", "h", NULL}, "unknown time unit 'h'");
	expect_usage((const char *[]){t, "--format", "xml", NULL}, "unknown format 'xml'");
	expect_usage((const char *[]){t, "--sorted-by", "calls", NULL}, "unknown sort key 'calls'");
}

static void test_help(void **state)
{
	(void)state;
	struct result r = run_summary((const char *[]){"--help", NULL});
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: gprof-dl summary FILE..."));
	assert_non_null(strstr(r.out, "--thread-sep"));
	result_free(&r);
}

static void test_bad_files(void **state)
{
	(void)state;
	const char *missing = tb_path("missing.gpdl");
	struct result r = run_summary((const char *[]){missing, NULL});
	assert_int_equal(r.status, 1);
	char expect[700];
	snprintf(expect, sizeof(expect), "'%s'", missing);
	if (strncmp(r.err, "gprof-dl: ", 10) != 0 || !strstr(r.err, expect) || strchr(r.err, '\n')[1])
		fail_msg("stderr: %s", r.err); /* one line naming the file */
	assert_string_equal(r.out, "");
	result_free(&r);

	const char *txt = tb_path("text.txt");
	FILE *f = fopen(txt, "w");
	fputs("just some text, long enough to look like it might have a header\n", f);
	fclose(f);
	r = run_summary((const char *[]){good_trace(), txt, NULL});
	assert_int_equal(r.status, 1);
	snprintf(expect, sizeof(expect), "'%s'", txt);
	assert_non_null(strstr(r.err, expect));
	assert_int_equal(strncmp(r.err, "gprof-dl: ", 10), 0);
	result_free(&r);
}

static void test_damaged_file(void **state)
{
	(void)state;
	size_t len;
	char *bytes = tb_slurp(good_trace(), &len);
	const char *cut = tb_path("cut.gpdl");
	FILE *f = fopen(cut, "wb");
	assert_int_equal(fwrite(bytes, 1, len / 2, f), len / 2);
	fclose(f);
	free(bytes);
	struct result r = run_summary((const char *[]){cut, NULL});
	assert_int_equal(r.status, 0);
	char expect[700];
	snprintf(expect, sizeof(expect), "gprof-dl: warning: trace '%s' is damaged at offset ", cut);
	if (!strstr(r.err, expect))
		fail_msg("stderr: %s", r.err);
	assert_non_null(strstr(r.out, "is damaged at offset")); /* in the summary too */
	assert_non_null(strstr(r.out, "UserDefined Summary"));
	result_free(&r);
}

static void test_options(void **state)
{
	(void)state;
	const char *t = good_trace();
	const char *out = tb_path("out.csv");
	struct result r = run_summary((const char *[]){t, "--view", "userdefined", "--format", "csv",
						       "--time-unit", "us", "-o", out, NULL});
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	char *csv = tb_slurp(out, NULL);
	/* one view: its one table, units in the header, numbers unquoted */
	assert_true(strncmp(csv, "row,name,calls,cpu_total_us,cpu_avg_us,", 39) == 0);
	assert_non_null(strstr(csv, ",\"work\",1000,50.000,0.050,"));
	assert_null(strstr(csv, "event_type")); /* no Overview */
	assert_null(strstr(csv, "\r\n\r\n\r\n"));
	free(csv);
	result_free(&r);

	r = run_summary((const char *[]){t, t, "--view=model", "--view", "overview", "--thread-sep",
					 "--op-detail", "--sorted-by", "gpu-total", NULL});
	assert_int_equal(r.status, 0);
	const char *ov = strstr(r.out, "Overview Summary"), *model = strstr(r.out, "Model Summary");
	assert_non_null(ov);
	assert_non_null(model);
	assert_true(ov < model); /* the registry's order, not the command line's */
	assert_non_null(strstr(r.out, "  Others  "));
	assert_non_null(strstr(r.out, "2 traces are summarised together"));
	assert_null(strstr(r.out, "UserDefined Summary"));
	result_free(&r);

	r = run_summary((const char *[]){t, "--view", "all", "--format", "json", NULL});
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"nvprof\""));
	assert_non_null(strstr(r.out, "\"userdefined\""));
	result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_damaged_file),
		cmocka_unit_test(test_options),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
