/*
 * test_outfile.c - common/outfile.h: the temporary file's name and flags,
 * the rename with and without force, links, failures and signals.
 */
#include "common/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[] = "/tmp/gpdl-outfile-XXXXXX";

static const char *at(const char *name)
{
	static char buf[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Files in dir whose name holds ".gpdl-tmp." */
static int temps(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	assert_non_null(d);
	while ((e = readdir(d)))
		n += strstr(e->d_name, ".gpdl-tmp.") != NULL;
	closedir(d);
	return n;
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_tmp_name(void **state)
{
	(void)state;
	char *t = outfile_tmp_name("a/b/out.json");
	assert_string_equal(t, "a/b/.out.json.gpdl-tmp.XXXXXX");
	free(t);
	t = outfile_tmp_name("x");
	assert_string_equal(t, ".x.gpdl-tmp.XXXXXX");
	free(t);
	char longname[300];
	memset(longname, 'n', 255);
	longname[255] = '\0';
	t = outfile_tmp_name(longname);
	assert_int_equal(strlen(t), 1 + 200 + strlen(".gpdl-tmp.XXXXXX")); /* within NAME_MAX */
	free(t);
}

/* Written to a temporary file, the final name absent until the commit. */
static void test_commit(void **state)
{
	(void)state;
	struct outfile o;
	char err[512];
	const char *path = at("new.txt");
	assert_int_equal(outfile_open(&o, path, 0, 0666, err, sizeof(err)), 0);
	assert_non_null(o.tmp);
	assert_non_null(strstr(o.tmp, "/.new.txt.gpdl-tmp."));
	FILE *f = outfile_fdopen(&o);
	fputs("new\n", f);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(temps(), 1);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	assert_string_equal(get(path), "new\n");
	assert_int_equal(temps(), 0);
	/* again without force: refused at once, the file kept */
	assert_int_equal(outfile_open(&o, path, 0, 0666, err, sizeof(err)), -1);
	assert_int_equal(errno, EEXIST);
	assert_non_null(strstr(err, "exists; use --force"));
	/* with force: replaced only at the commit; an abort keeps the old one */
	assert_int_equal(outfile_open(&o, path, OUTFILE_FORCE, 0666, err, sizeof(err)), 0);
	assert_int_equal(write(o.fd, "newer\n", 6), 6);
	outfile_abort(&o);
	assert_string_equal(get(path), "new\n");
	assert_int_equal(temps(), 0);
	assert_int_equal(outfile_open(&o, path, OUTFILE_FORCE, 0666, err, sizeof(err)), 0);
	assert_int_equal(write(o.fd, "newer\n", 6), 6);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	assert_string_equal(get(path), "newer\n");
	outfile_abort(&o); /* harmless once committed */
}

/* A file that takes the name meanwhile is never replaced without force. */
static void test_race(void **state)
{
	(void)state;
	struct outfile o;
	char err[512];
	const char *path = at("race.txt");
	assert_int_equal(outfile_open(&o, path, 0, 0666, err, sizeof(err)), 0);
	put(path, "theirs\n");
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), -1);
	assert_int_equal(errno, EEXIST);
	assert_string_equal(get(path), "theirs\n");
	assert_int_equal(temps(), 0);
	/* outfile_install alone: EEXIST, the temporary file kept */
	put(at("t1"), "t1\n");
	assert_int_equal(outfile_install(at("t1"), path, 0), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(access(at("t1"), F_OK), 0);
	assert_int_equal(outfile_install(at("t1"), path, 1), 0);
	assert_string_equal(get(path), "t1\n");
}

/* Symbolic links: never written through; at the name, refused without
 * force and replaced themselves with it. */
static void test_links(void **state)
{
	(void)state;
	struct outfile o;
	char err[512];
	struct stat st;
	put(at("victim"), "victim\n");
	assert_int_equal(symlink(at("victim"), at("l.txt")), 0);
	assert_int_equal(outfile_open(&o, at("l.txt"), 0, 0666, err, sizeof(err)), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(symlink(at("nowhere"), at("d.txt")), 0); /* dangling */
	assert_int_equal(outfile_open(&o, at("d.txt"), 0, 0666, err, sizeof(err)), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(outfile_open(&o, at("l.txt"), OUTFILE_FORCE, 0666, err, sizeof(err)), 0);
	assert_int_equal(write(o.fd, "x\n", 2), 2);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
	assert_int_equal(lstat(at("l.txt"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(get(at("victim")), "victim\n");
	/* a directory is refused; a device is written in place */
	assert_int_equal(outfile_open(&o, dir, OUTFILE_FORCE, 0666, err, sizeof(err)), -1);
	assert_int_equal(errno, EISDIR);
	assert_int_equal(outfile_open(&o, "/dev/null", 0, 0666, err, sizeof(err)), 0);
	assert_null(o.tmp);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), 0);
}

/* The same file through a hard link or a symbolic link is an input. */
static void test_inputs(void **state)
{
	(void)state;
	char err[1024];
	put(at("in.gpdl"), "trace\n");
	assert_int_equal(link(at("in.gpdl"), at("hard.gpdl")), 0);
	assert_int_equal(symlink(at("in.gpdl"), at("soft.gpdl")), 0);
	char other[512], input[512];
	snprintf(other, sizeof(other), "%s", at("other"));
	snprintf(input, sizeof(input), "%s", at("in.gpdl"));
	const char *in[] = {"-", other, input};
	assert_int_equal(outfile_input_index(at("in.gpdl"), in, 3), 2);
	assert_int_equal(outfile_input_index(at("hard.gpdl"), in, 3), 2);
	assert_int_equal(outfile_input_index(at("soft.gpdl"), in, 3), 2);
	assert_int_equal(outfile_input_index(at("absent"), in, 3), -1);
	assert_int_equal(outfile_check_inputs(at("hard.gpdl"), in, 3, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is the input"));
	assert_int_equal(outfile_check_inputs(at("absent"), in, 3, err, sizeof(err)), 0);
}

/* SIGTERM mid-write: the temporary file removed, the exit the signal's. */
static void test_signal(void **state)
{
	(void)state;
	int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (int k = 0; k < 3; k++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct outfile o;
			char err[512];
			if (outfile_open(&o, at("sig.txt"), 0, 0666, err, sizeof(err)) != 0)
				_exit(3);
			if (write(o.fd, "part\n", 5) != 5)
				_exit(4);
			raise(sigs[k]);
			_exit(5);
		}
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), sigs[k]);
		assert_int_equal(access(at("sig.txt"), F_OK), -1);
		assert_int_equal(temps(), 0);
	}
}

/* A write that fails: one message with the reason, nothing left. */
static void test_write_error(void **state)
{
	(void)state;
	struct outfile o;
	char err[512];
	assert_int_equal(outfile_open(&o, at("w.txt"), 0, 0666, err, sizeof(err)), 0);
	FILE *f = outfile_fdopen(&o);
	close(o.fd); /* the stream's descriptor gone: its flush fails */
	fputs("data\n", f);
	assert_int_equal(outfile_commit(&o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot write '"));
	assert_non_null(strstr(err, strerror(EBADF)));
	assert_int_equal(access(at("w.txt"), F_OK), -1);
	assert_int_equal(temps(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tmp_name),   cmocka_unit_test(test_commit),
		cmocka_unit_test(test_race),       cmocka_unit_test(test_links),
		cmocka_unit_test(test_inputs),     cmocka_unit_test(test_signal),
		cmocka_unit_test(test_write_error),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
