/*
 * cmdrun.c - running a subcommand for the command tests (cmdrun.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/cmd/cmdrun.h"

#include "tests/analysis/tracebuild.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct cmd_result cmd_run(const char *bin, const char *sub, const char *const *args)
{
	/* the child writes files, not pipes: no deadlock on large output */
	const char *out = tb_path("stdout.txt"), *err = tb_path("stderr.txt");
	const char *argv[32] = {bin, sub};
	size_t n = 2;
	for (; args[n - 2] && n < 31; n++)
		argv[n] = args[n - 2];
	argv[n] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(99);
		execv(bin, (char *const *)argv);
		_exit(98);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	struct cmd_result r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
			       tb_slurp(out, NULL), tb_slurp(err, NULL)};
	return r;
}

void cmd_result_free(struct cmd_result *r)
{
	free(r->out);
	free(r->err);
}

void assert_contains(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("'%s' not in:\n%s", want, text);
}

void assert_one_line(const char *err)
{
	if (strncmp(err, "gprof-dl: ", 10) != 0 || !strchr(err, '\n') || strchr(err, '\n')[1])
		fail_msg("not one 'gprof-dl: ' line: %s", err);
}

yajl_val jkey(yajl_val obj, const char *k)
{
	const char *path[] = {k, NULL};
	yajl_val v = yajl_tree_get(obj, path, yajl_t_any);
	if (!v)
		fail_msg("no JSON value at '%s'", k);
	return v;
}

const char *jstr(yajl_val v)
{
	assert_true(YAJL_IS_STRING(v));
	return YAJL_GET_STRING(v);
}

void assert_jnum(yajl_val v, double want)
{
	assert_true(YAJL_IS_NUMBER(v));
	if (fabs(YAJL_GET_DOUBLE(v) - want) > 1e-9 * (fabs(want) + 1))
		fail_msg("%.12g != %.12g", YAJL_GET_DOUBLE(v), want);
}

double jnum(yajl_val v)
{
	assert_true(YAJL_IS_NUMBER(v));
	return YAJL_GET_DOUBLE(v);
}

yajl_val jpath(yajl_val obj, const char *k1, const char *k2)
{
	const char *path[] = {k1, k2, NULL};
	yajl_val v = yajl_tree_get(obj, path, yajl_t_any);
	if (!v)
		fail_msg("no JSON value at '%s.%s'", k1, k2 ? k2 : "");
	return v;
}

yajl_val jelem(yajl_val arr, size_t i)
{
	assert_true(YAJL_IS_ARRAY(arr));
	assert_true(i < YAJL_GET_ARRAY(arr)->len);
	return YAJL_GET_ARRAY(arr)->values[i];
}

size_t jlen(yajl_val arr)
{
	assert_true(YAJL_IS_ARRAY(arr));
	return YAJL_GET_ARRAY(arr)->len;
}
