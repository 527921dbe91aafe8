/*
 * test_cmd_stdin.c - traces read from a stream: "-" (standard input, a pipe
 * or a redirected file) and FIFOs, for every subcommand that reads traces
 * (summary, info, diff, export, bench) and import. Each output equals the one of the
 * same trace given as a file, its name aside. A FIFO with no writer ends
 * after GPROF_DL_FIFO_WAIT seconds with a one-line message and status 1
 * (never hangs: each command runs under timeout(1), 124 would be a hang).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/analysis/tracebuild.h"
#include "tests/cmd/cmdrun.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif
#define TIMEOUT "/usr/bin/timeout" /* coreutils */

/* text with every occurrence of from replaced by to, malloc'ed */
static char *replace(const char *text, const char *from, const char *to)
{
	size_t n = strlen(from), m = strlen(to), len = strlen(text) + 1;
	for (const char *p = text; (p = strstr(p, from)); p += n)
		len += m;
	char *out = malloc(len), *o = out;
	assert_non_null(out);
	for (const char *p = text, *q; *p; p = q + n) {
		q = strstr(p, from);
		if (!q) {
			strcpy(o, p);
			return out;
		}
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, to, m);
		o += m;
		*o = '\0';
	}
	*o = '\0';
	return out;
}

/* `sh -c script` under a time limit. */
static struct cmd_result sh(const char *script)
{
	return cmd_run(TIMEOUT, "60", (const char *const[]){"/bin/sh", "-c", script, NULL});
}

/* The output of `gprof-dl ARGS` for the file, with its name turned into
 * name, so that it can be compared with the output for a stream. */
static char *as_named(const char *args_fmt, const char *path, const char *name)
{
	char script[2048];
	snprintf(script, sizeof(script), args_fmt, GPDL_BIN, path);
	struct cmd_result r = sh(script);
	if (r.status != 0)
		fail_msg("%s: status %d: %s", script, r.status, r.err);
	char *out = replace(r.out, path, name);
	cmd_result_free(&r);
	return out;
}

/* Runs script; its stdout must equal want. */
static void expect_out(const char *script, const char *want)
{
	struct cmd_result r = sh(script);
	if (r.status != 0)
		fail_msg("%s: status %d: %s", script, r.status, r.err);
	assert_string_equal(r.out, want);
	/* nothing but export's "wrote" lines */
	for (const char *line = r.err; *line; line = strchr(line, '\n') + 1) {
		assert_int_equal(strncmp(line, "gprof-dl: wrote ", 16), 0);
		assert_non_null(strchr(line, '\n'));
	}
	cmd_result_free(&r);
}

static void test_stdin(void **state)
{
	(void)state;
	const char *path = tb_perf_a(); /* steps: bench measures it */
	static const char *const cmds[] = {
		"%s summary %s --format json",
		"%s summary %s",
		"%s info %s",
		"%s bench %s --format json",
	};
	char script[2048];
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *want = as_named(cmds[i], path, "-");
		assert_true(strlen(want) > 100);
		char args[1024];
		snprintf(args, sizeof(args), cmds[i], GPDL_BIN, "-");
		snprintf(script, sizeof(script), "cat '%s' | %s", path, args); /* a pipe */
		if (i != 1) /* the text table's widths follow the name's */
			expect_out(script, want);
		else {
			struct cmd_result r = sh(script);
			assert_int_equal(r.status, 0);
			assert_non_null(strstr(r.out, "\n-  "));
			cmd_result_free(&r);
		}
		snprintf(script, sizeof(script), "%s < '%s'", args, path); /* a redirected file */
		if (i != 1)
			expect_out(script, want);
		free(want);
	}
	/* diff: "-" as side A (opened twice: headers, then events) against
	 * the file: as the file against itself, A's name (the first) aside */
	char fmt[1200], quoted[600], note[600], *a = NULL;
	snprintf(fmt, sizeof(fmt), "%%s diff %%s '%s' --format json", path);
	snprintf(note, sizeof(note), "A ('%s')", path);
	char *file = as_named(fmt, path, path), *want = replace(file, note, "A ('-')");
	free(file);
	snprintf(quoted, sizeof(quoted), "\"file\": \"%s\"", path);
	char *first = strstr(want, quoted);
	assert_non_null(first);
	assert_true(asprintf(&a, "%.*s\"file\": \"-\"%s", (int)(first - want), want,
			     first + strlen(quoted)) > 0);
	snprintf(script, sizeof(script), "cat '%s' | %s diff - '%s' --format json", path, GPDL_BIN,
		 path);
	expect_out(script, a);
	free(a);
	free(want);
}

/* Bad input on a pipe: the one-line message names "-", exit status 1. */
static void test_stdin_bad(void **state)
{
	(void)state;
	static const struct {
		const char *script, *err;
	} cases[] = {
		{"true | %s summary -", "gprof-dl: '-': not a gprof-dl trace (empty file)\n"},
		{"printf 'GPRFDLxx' | %s info -", "gprof-dl: '-': not a gprof-dl trace (bad magic)\n"},
		/* endless inputs that are no trace: not copied to the end (never) */
		{"yes | %s info -", "gprof-dl: '-': not a gprof-dl trace (bad magic)\n"},
		{"%s summary - < /dev/zero", "gprof-dl: '-': not a gprof-dl trace (bad magic)\n"},
		{"printf '{\"traceEvents\": [ {\"name\": 1' | %s summary -",
		 "gprof-dl: '-': the JSON ends early, at byte 28 (a truncated file?)\n"},
	};
	char script[1024];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(script, sizeof(script), cases[i].script, GPDL_BIN);
		struct cmd_result r = sh(script);
		assert_int_equal(r.status, 1);
		assert_string_equal(r.err, cases[i].err);
		assert_string_equal(r.out, "");
		cmd_result_free(&r);
	}
}

/* import from a stream: "-" and /dev/stdin on a pipe write the same trace as
 * the file does (the importer looks at the input's head, then reads it all:
 * a pipe is copied once first); "-" needs -o; damage names "-". */
static void test_stdin_import(void **state)
{
	(void)state;
	char dir[] = "/tmp/gpdl-stdin-import-XXXXXX", json[300], script[2048];
	assert_non_null(mkdtemp(dir));
	snprintf(json, sizeof(json), "%s/t.json", dir);
	FILE *f = fopen(json, "w");
	assert_non_null(f);
	fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", f);
	for (int i = 0; i < 300; i++)
		fprintf(f,
			"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op%d\", \"pid\": 7, \"tid\": 7, "
			"\"ts\": %d.5, \"dur\": 2.25},\n",
			i % 7, 10 * i);
	fputs("{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 7, "
	      "\"tid\": 7, \"ts\": 0, \"dur\": 3000}\n]}\n",
	      f);
	assert_int_equal(fclose(f), 0);
	static const char *const how[] = {"%s import '%s' -o '%s/file.gpdl'",
					   "cat '%s' | %s import - -o '%s/dash.gpdl'",
					   "cat '%s' | %s import /dev/stdin -o '%s/devstdin.gpdl'",
					   "%s import - -o '%s/redir.gpdl' < '%s'"};
	for (size_t i = 0; i < 4; i++) {
		if (i == 0 || i == 3)
			snprintf(script, sizeof(script), how[i], GPDL_BIN, i == 0 ? json : dir,
				 i == 0 ? dir : json);
		else
			snprintf(script, sizeof(script), how[i], json, GPDL_BIN, dir);
		struct cmd_result r = sh(script);
		if (r.status != 0)
			fail_msg("%s: status %d: %s", script, r.status, r.err);
		assert_non_null(strstr(r.err, "imported 301 events"));
		cmd_result_free(&r);
	}
	snprintf(script, sizeof(script),
		 "cd '%s' && cmp file.gpdl dash.gpdl && cmp file.gpdl devstdin.gpdl && cmp file.gpdl redir.gpdl",
		 dir);
	struct cmd_result r = sh(script);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	/* no name to make the output's from: a usage error */
	snprintf(script, sizeof(script), "cat '%s' | %s import -", json, GPDL_BIN);
	r = sh(script);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "give -o FILE"));
	cmd_result_free(&r);
	/* damage on the pipe is said of "-" */
	snprintf(script, sizeof(script), "head -c 200 '%s' | %s import - -o '%s/bad.gpdl'", json, GPDL_BIN,
		 dir);
	r = sh(script);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "gprof-dl: '-': "));
	assert_null(strstr(r.err, "/proc/self/fd"));
	cmd_result_free(&r);
	snprintf(script, sizeof(script), "rm -rf '%s'", dir);
	r = sh(script);
	cmd_result_free(&r);
}

static void test_stdin_export(void **state)
{
	(void)state;
	const char *path = tb_perf_a();
	char out1[600], out2[600], script[2048];
	snprintf(out1, sizeof(out1), "%s", tb_path("file.json"));
	snprintf(out2, sizeof(out2), "%s", tb_path("pipe.json"));
	snprintf(script, sizeof(script), "%s export --chrome '%s' -o '%s' && cat '%s' | "
		 "%s export --chrome - -o '%s'", GPDL_BIN, path, out1, path, GPDL_BIN, out2);
	expect_out(script, "");
	size_t n1, n2;
	char *j1 = tb_slurp(out1, &n1), *j2 = tb_slurp(out2, &n2);
	assert_true(n1 > 1000);
	char *named = replace(j1, path, "-");
	assert_string_equal(j2, named);
	free(named);
	free(j2);
	/* a chrome-trace JSON on a pipe is imported like the file */
	char *want = as_named("%s summary %s --format json", out1, "-");
	snprintf(script, sizeof(script), "cat '%s' | %s summary - --format json", out1, GPDL_BIN);
	expect_out(script, want);
	free(want);
	free(j1);
	/* --csv: the events are the file's */
	char d1[600], d2[600];
	snprintf(d1, sizeof(d1), "%s", tb_path("csv-file"));
	snprintf(d2, sizeof(d2), "%s", tb_path("csv-pipe"));
	snprintf(script, sizeof(script), "%s export --csv '%s' -o '%s' && %s export --csv - -o '%s' < '%s'",
		 GPDL_BIN, path, d1, GPDL_BIN, d2, path);
	expect_out(script, "");
	char e1[700], e2[700];
	snprintf(e1, sizeof(e1), "%s/ranges.csv", d1);
	snprintf(e2, sizeof(e2), "%s/ranges.csv", d2);
	char *c1 = tb_slurp(e1, &n1), *c2 = tb_slurp(e2, &n2);
	assert_true(n1 > 100);
	assert_string_equal(c1, c2);
	free(c1);
	free(c2);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A child that opens fifo for writing after delay_ms, copies path into it
 * (none: opens and closes it) and exits. */
static pid_t fifo_writer(const char *fifo, const char *path, unsigned delay_ms)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid)
		return pid;
	usleep(delay_ms * 1000);
	int out = open(fifo, O_WRONLY);
	if (out < 0)
		_exit(1);
	size_t n = 0;
	char *bytes = path ? tb_slurp(path, &n) : NULL;
	signal(SIGPIPE, SIG_IGN);
	for (size_t o = 0; o < n;) {
		ssize_t w = write(out, bytes + o, n - o);
		if (w <= 0)
			_exit(2);
		o += (size_t)w;
	}
	close(out);
	_exit(0);
}

static void reap(pid_t pid)
{
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_fifo(void **state)
{
	(void)state;
	const char *path = tb_perf_a();
	char fifo[600], script[2048];
	snprintf(fifo, sizeof(fifo), "%s", tb_path("trace.fifo"));
	assert_int_equal(mkfifo(fifo, 0600), 0);
	char *want = as_named("%s summary %s --format json", path, fifo);
	/* a writer there at once, and one that comes 300 ms late */
	for (unsigned delay = 0; delay <= 300; delay += 300) {
		pid_t w = fifo_writer(fifo, path, delay);
		snprintf(script, sizeof(script), "%s summary '%s' --format json", GPDL_BIN, fifo);
		expect_out(script, want);
		reap(w);
	}
	free(want);
	/* a writer that writes nothing: an empty input */
	pid_t w = fifo_writer(fifo, NULL, 100);
	struct cmd_result r = cmd_run(TIMEOUT, "60", (const char *const[]){GPDL_BIN, "info", fifo, NULL});
	reap(w);
	assert_int_equal(r.status, 1);
	char msg[800];
	snprintf(msg, sizeof(msg), "gprof-dl: '%s': not a gprof-dl trace (empty file)\n", fifo);
	assert_string_equal(r.err, msg);
	cmd_result_free(&r);
	unlink(fifo);
}

static void test_fifo_no_writer(void **state)
{
	(void)state;
	char fifo[600], msg[800];
	snprintf(fifo, sizeof(fifo), "%s", tb_path("lonely.fifo"));
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(msg, sizeof(msg),
		 "gprof-dl: '%s': a FIFO with no writer (GPROF_DL_FIFO_WAIT says how many seconds to "
		 "wait for one)\n",
		 fifo);
	static const char *const subs[] = {"summary", "info", "export", "bench"};
	setenv("GPROF_DL_FIFO_WAIT", "1", 1);
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		double t0 = now();
		struct cmd_result r = cmd_run(TIMEOUT, "30", (const char *const[]){
			GPDL_BIN, subs[i], i == 2 ? "--chrome" : fifo, i == 2 ? fifo : NULL,
			i == 2 ? "-o" : NULL, i == 2 ? tb_path("x.json") : NULL, NULL});
		double took = now() - t0;
		assert_int_equal(r.status, 1); /* 124: it hung */
		assert_string_equal(r.err, msg);
		assert_string_equal(r.out, "");
		assert_true(took >= 0.9 && took < 10);
		cmd_result_free(&r);
	}
	/* no wait at all */
	setenv("GPROF_DL_FIFO_WAIT", "0", 1);
	double t0 = now();
	struct cmd_result r = cmd_run(TIMEOUT, "30", (const char *const[]){GPDL_BIN, "summary", fifo, NULL});
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, msg);
	assert_true(now() - t0 < 5);
	cmd_result_free(&r);
	unsetenv("GPROF_DL_FIFO_WAIT");
	unlink(fifo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stdin),
		cmocka_unit_test(test_stdin_bad),
		cmocka_unit_test(test_stdin_export),
		cmocka_unit_test(test_stdin_import),
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_fifo_no_writer),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
