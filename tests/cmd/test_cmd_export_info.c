/*
 * test_cmd_export_info.c - `gprof-dl export` and `gprof-dl info` as a user
 * runs them: the built executable (GPDL_BIN), its exit status, its stderr,
 * and what it wrote, read back by yajl.
 *
 * Statuses under test: 2 usage, 1 a file that is not a readable trace or an
 * output that cannot be written, 0 success (a damaged trace included, with a
 * warning naming the offset). For --csv: the directory, its files (parsed
 * back with libcsv), the summary tables, and that nothing is overwritten, or
 * written at all, when a file is in the way.
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
#include <csv.h>
#include <dirent.h>
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
	assert_contains(r.err, "--chrome, --csv or --sqlite");
	result_free(&r);

	RUN(&r, "export", "--csv", "--chrome", fixture);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "one format at a time");
	result_free(&r);

	RUN(&r, "export", "--csv", fixture, "-o", "-");
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "'-' is not one");
	result_free(&r);

	RUN(&r, "export", "--chrome", "--no-summary", fixture);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--no-summary goes with --csv");
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
	assert_contains(r.out, "gprof-dl export --csv FILE [-o DIR]");
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

/* err is one line, export's "gprof-dl: wrote ..." naming path between
 * before and after. */
static void expect_wrote(const char *err, const char *before, const char *path, const char *after)
{
	char want[1024];
	snprintf(want, sizeof(want), "%s%s%s", before, path, after);
	assert_int_equal(strncmp(err, "gprof-dl: wrote ", 16), 0);
	assert_non_null(strstr(err, want));
	assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
}

static void test_export_default_name_and_force(void **state)
{
	(void)state;
	struct result r;
	char *json = fix_path("fixture.json");
	unlink(json);
	RUN(&r, "export", "--chrome", fixture);
	assert_int_equal(r.status, 0);
	expect_wrote(r.err, "'", json, "' (");
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
	assert_contains(r.err, "is the input");
	result_free(&r);
	RUN(&r, "export", "--chrome", "-o", "-", fixture);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, file);
	result_free(&r);

	RUN(&r, "export", "--chrome", "-o", "/dev/null", fixture);
	assert_int_equal(r.status, 0);
	expect_wrote(r.err, "'", "/dev/null", "' ("); /* no size: not a file */
	assert_null(strstr(r.err, "B,"));
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

/* ---- export --csv -------------------------------------------------------- */

static const char *const raw_files[] = {
	"trace.csv",  "processes.csv", "threads.csv", "devices.csv", "counters.csv",
	"ranges.csv", "operators.csv", "runtime.csv", "marks.csv",   "kernels.csv",
	"memcpy.csv", "memset.csv",    "memory.csv",    "communication.csv", "steps.csv",
};
#define NRAW (sizeof(raw_files) / sizeof(raw_files[0]))

static void count_field(void *s, size_t len, void *data)
{
	(void)s;
	(void)len;
	(void)data;
}

static void count_row(int c, void *data)
{
	(void)c;
	(*(long *)data)++;
}

/* Rows of a CSV file, its header included, as libcsv's parser counts them;
 * -1 when it is not there or not well-formed. */
static long csv_rows(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	size_t len = 0;
	char *text = slurp(path, &len);
	if (!text)
		return -1;
	struct csv_parser p;
	long rows = 0;
	assert_int_equal(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI), 0);
	size_t done = csv_parse(&p, text, len, count_field, count_row, &rows);
	int bad = done != len || csv_fini(&p, count_field, count_row, &rows) != 0;
	csv_free(&p);
	free(text);
	return bad ? -1 : rows;
}

/* Files in dir, "." and ".." not counted; summary files counted apart. */
static void count_files(const char *dir, int *raw, int *summary)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *de;
	*raw = *summary = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (strncmp(de->d_name, "summary-", 8) == 0)
			(*summary)++;
		else
			(*raw)++;
	}
	closedir(d);
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096];
	while (d && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void test_export_csv(void **state)
{
	(void)state;
	struct result r;
	char *parent = fix_path("csv-parent"), *dir = fix_path("csv-parent/out");
	RUN(&r, "export", "--csv", fixture, "-o", dir);
	assert_int_equal(r.status, 0);
	expect_wrote(r.err, " files to '", dir, "' (");
	assert_string_equal(r.out, "");
	result_free(&r);
	int raw, summary;
	count_files(dir, &raw, &summary);
	assert_int_equal(raw, NRAW);
	assert_true(summary >= 4); /* trace, device, overview, userdefined at least */
	for (size_t i = 0; i < NRAW; i++)
		assert_true(csv_rows(dir, raw_files[i]) >= 1);
	/* the fixture: 255 byte ranges and the cases, marks apart */
	size_t marks = 0, ops = 0;
	for (size_t i = 0; i < fix_ncases; i++) {
		marks += (fix_cases[i].flags & 1) != 0;
		ops += !(fix_cases[i].flags & 1) && fix_cases[i].type == 6;
	}
	assert_int_equal(csv_rows(dir, "ranges.csv"), 1 + FIX_BYTE_RANGES + fix_ncases - marks - ops);
	assert_int_equal(csv_rows(dir, "marks.csv"), 1 + marks);
	assert_int_equal(csv_rows(dir, "operators.csv"), 1 + ops);
	assert_int_equal(csv_rows(dir, "counters.csv"), 1 + 6);
	assert_int_equal(csv_rows(dir, "threads.csv"), 1 + FIX_THREADS);
	assert_int_equal(csv_rows(dir, "kernels.csv"), 1);
	assert_int_equal(csv_rows(dir, "summary-trace.csv"), 2); /* one header row, one trace */
	char path[4096];
	snprintf(path, sizeof(path), "%s/summary-userdefined.csv", dir);
	char *text = slurp(path, NULL);
	/* one table: one header row, first, times in ns, no title and no empty line */
	assert_true(strncmp(text, "row,name,calls,cpu_total_ns,cpu_avg_ns,", 39) == 0);
	assert_null(strstr(text, "UserDefined Summary"));
	assert_null(strstr(text, "\r\n\r\n"));
	free(text);
	snprintf(path, sizeof(path), "%s/trace.csv", dir);
	char *first = slurp(path, NULL);

	/* again: refused, and nothing written, not even a missing file */
	snprintf(path, sizeof(path), "%s/kernels.csv", dir);
	unlink(path);
	RUN(&r, "export", "--csv", fixture, "-o", dir);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "exists; use --force");
	result_free(&r);
	assert_int_equal(csv_rows(dir, "kernels.csv"), -1);

	RUN(&r, "export", "--csv", "--force", fixture, "-o", dir);
	assert_int_equal(r.status, 0);
	result_free(&r);
	assert_int_equal(csv_rows(dir, "kernels.csv"), 1);
	snprintf(path, sizeof(path), "%s/trace.csv", dir);
	char *again = slurp(path, NULL);
	assert_string_equal(again, first);
	free(again);
	free(first);
	remove_dir(dir);
	rmdir(parent);
	free(dir);
	free(parent);
}

static void test_export_csv_default_and_options(void **state)
{
	(void)state;
	struct result r;
	/* FILE.gpdl -> FILE-csv */
	char *dir = fix_path("fixture-csv");
	RUN(&r, "export", "--csv", "--no-summary", fixture);
	assert_int_equal(r.status, 0);
	result_free(&r);
	int raw, summary;
	count_files(dir, &raw, &summary);
	assert_int_equal(raw, NRAW);
	assert_int_equal(summary, 0);
	remove_dir(dir);

	/* a file where the directory would be */
	FILE *f = fopen(dir, "w");
	fputs("in the way", f);
	fclose(f);
	RUN(&r, "export", "--csv", fixture);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "is not a directory");
	result_free(&r);
	unlink(dir);

	/* a bad input makes no directory */
	char *text = fix_path("notrace.gpdl"), *textdir = fix_path("notrace-csv");
	f = fopen(text, "w");
	fputs("not a trace at all, but long enough to hold a header, surely\n", f);
	fclose(f);
	RUN(&r, "export", "--csv", text);
	assert_int_equal(r.status, 1);
	assert_false(exists(textdir));
	result_free(&r);
	unlink(text);
	free(text);
	free(textdir);
	free(dir);
}

static void test_export_csv_gpu_and_damage(void **state)
{
	(void)state;
	struct result r;
	char *gpu = fix_path("gpu.gpdl"), *dir = fix_path("gpu-csv");
	assert_int_equal(fix_write_gpu(gpu), 0);
	RUN(&r, "export", "--csv", gpu);
	assert_int_equal(r.status, 0);
	result_free(&r);
	assert_int_equal(csv_rows(dir, "kernels.csv"), 1 + 5);
	assert_int_equal(csv_rows(dir, "memcpy.csv"), 1 + 2);
	assert_int_equal(csv_rows(dir, "memset.csv"), 1 + 1);
	assert_int_equal(csv_rows(dir, "memory.csv"), 1 + 3);
	assert_int_equal(csv_rows(dir, "runtime.csv"), 1 + 8);
	assert_int_equal(csv_rows(dir, "devices.csv"), 1 + 1);
	assert_true(csv_rows(dir, "summary-kernel.csv") >= 3);
	remove_dir(dir);

	char *cut = fix_path("cut.gpdl"), *cutdir = fix_path("cut-csv");
	long flushed = 0;
	assert_int_equal(fix_write_two_batches(cut, 400, 400, &flushed), 0);
	assert_int_equal(truncate(cut, flushed + 30), 0);
	RUN(&r, "export", "--csv", cut);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "exported the 400 events before it");
	result_free(&r);
	assert_int_equal(csv_rows(cutdir, "ranges.csv"), 1 + 400);
	remove_dir(cutdir);
	unlink(cut);
	unlink(gpu);
	free(cut);
	free(cutdir);
	free(gpu);
	free(dir);
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
	assert_contains(r.out, "  format version     " FIX_FORMAT_VERSION "\n");
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
	assert_contains(r.out, "       PID     PPID  RANK     START(s)       END(s)     EXIT  COMMAND\n");
	/* the fixture's processes carry whatever rank its writer gave them */
	unsigned pid, ppid;
	char rank[16], start[16], end[16], status[16];
	const char *worker = strstr(r.out, "  worker\n");
	assert_non_null(worker);
	while (worker > r.out && worker[-1] != '\n')
		worker--;
	assert_int_equal(sscanf(worker, "%u %u %15s %15s %15s %15s", &pid, &ppid, rank, start, end,
				status), 6);
	assert_int_equal(pid, 101);
	assert_int_equal(ppid, 100);
	assert_string_equal(start, "1.000000");
	assert_string_equal(end, "4.000000");
	assert_string_equal(status, "137");
	assert_contains(r.out, "\nthreads: 3\n");
	/* thread 1: 6 events of the fixture's cases, 5 drops, its name with the
	 * control character and the byte that is not UTF-8 made harmless: \xNN */
	assert_contains(r.out, "      1      100      102     0.000001     5.000000          6        5  worker \"1\" \\ \\x01\\xff\n");
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

/* A trace with GPU streams: the devices and which stream each track is. */
static void test_info_gpu(void **state)
{
	(void)state;
	struct result r;
	char *gpu = fix_path("info-gpu.gpdl");
	assert_int_equal(fix_write_gpu(gpu), 0);
	RUN(&r, "info", gpu);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_contains(r.out, "  sources            nvtx cupti\n");
	assert_contains(r.out, "\ndevices: 1\n");
	/* 150754820096 bytes = 150.8 GB (SI, issue 25: was 140.4 GiB); 1980000 kHz = 1980 MHz */
	assert_contains(r.out, "    0   9.0   132       2048      150.8       1980  NVIDIA H200\n");
	assert_contains(r.out, "  GPU0 stream 7\n");
	assert_contains(r.out, "  nccl (GPU0)\n");
	result_free(&r);
	unlink(gpu);
	free(gpu);
}

/* A recording of a launcher of two ranks (format 2.1): the launcher (no
 * rank), rank 0 killed (its signal unknown), with a DataLoader worker whose
 * end was not seen, rank 1 killed by SIGTERM; the ranks' job, which the
 * header does not name. Events per thread: launcher 1, rank 0's main 3, its
 * worker 2, rank 1's main 4. */
static void write_two_ranks(const char *path)
{
	struct trace_writer *w = trace_writer_open(path, 1);
	assert_non_null(w);
	const struct trace_header h = { .clock_domain = "CLOCK_MONOTONIC", .hostname = "node-a",
					.pid = 500, .rank = -1, .local_rank = -1, .world_size = 2,
					.dist_backend = "gloo", .start_ns = 1000000000,
					.gprof_version = "0.1.0" };
	assert_int_equal(trace_writer_header(w, &h), 0);
	uint32_t gloo = trace_writer_string(w, "gloo", 4);
	uint32_t cmd = trace_writer_string(w, "python train.py", 15);
	uint32_t job = trace_writer_string(w, "slurm:42.0", 10);
	uint32_t name = trace_writer_string(w, "step", 4);
	uint32_t d = trace_writer_desc(w, name, 0, 0, TRACE_EV_PROFILE_STEP);
	const struct trace_process procs[] = {
		{ 500, 1, 1000000000, 9000000000, 0, cmd, -1, -1, -1, 0 },
		{ 501, 500, 1100000000, 5000000000, TRACE_EXIT_KILLED, cmd, 0, 0, 2, gloo, 0, job },
		{ 502, 500, 1100000000, 8000000000, 128 + 15, cmd, 1, 1, 2, gloo, 15, job },
		{ 503, 501, 1200000000, 0, TRACE_EXIT_UNKNOWN, cmd, 0, 0, 2, gloo, 0, job },
	};
	const uint32_t pids[4] = { 500, 501, 503, 502 }, events[4] = { 1, 3, 2, 4 };
	for (int i = 0; i < 4; i++)
		assert_int_equal(trace_writer_process(w, &procs[i]), 0);
	for (uint32_t i = 0; i < 4; i++) {
		struct trace_thread t = { i, pids[i], pids[i], 0, 1200000000, 0 };
		assert_int_equal(trace_writer_thread(w, &t), 0);
		for (uint32_t k = 0; k < events[i]; k++) {
			struct trace_event e = { 2000000000 + k * 1000, 500, d, i, 0, NULL };
			assert_int_equal(trace_writer_event(w, &e), 0);
		}
	}
	assert_int_equal(trace_writer_close(w, 9000000000), 0);
}

static void test_info_ranks(void **state)
{
	(void)state;
	struct result r;
	char *path = fix_path("ranks.gpdl");
	write_two_ranks(path);
	RUN(&r, "info", path);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_contains(r.out, "  format version     " FIX_FORMAT_VERSION "\n");
	assert_contains(r.out, "  rank               none (2 ranks in this file: see ranks)\n");
	assert_contains(r.out, "  world size         2\n");
	assert_contains(r.out, "  backend            gloo\n");
	assert_true(strstr(r.out, "local rank") == NULL); /* the file is no one rank's */
	assert_contains(r.out, "\nprocesses: 4\n");
	assert_contains(r.out, "       500        1     -     0.000000     8.000000        0  python train.py\n");
	assert_contains(r.out, "       501      500     0     0.100000     4.000000   killed  python train.py\n");
	assert_contains(r.out, "       502      500     1     0.100000     7.000000 killed:15  python train.py\n");
	assert_contains(r.out, "       503      501     0     0.200000            -        ?  python train.py\n");
	/* the roots are 501 and 502, not the worker; events of the rank's threads */
	assert_contains(r.out, "\nranks: 2\n"
			       "   RANK LOCAL WORLD      PID  PROCS     EXIT     EVENTS  BACKEND\n"
			       "      0     0     2      501      2   killed          5  gloo\n"
			       "      1     1     2      502      1 killed:15          4  gloo\n");
	/* 2.1: the ranks' processes name their job, which the header did not know */
	assert_contains(r.out, "  job                slurm:42.0\n");
	assert_contains(r.out, "  events             10\n");
	result_free(&r);

	/* one rank's own file: which rank, on its host, of how many */
	struct trace_writer *w = trace_writer_open(path, 1);
	assert_non_null(w);
	const struct trace_header h = { .clock_domain = "CLOCK_MONOTONIC", .pid = 502, .rank = 1,
					.local_rank = 1, .world_size = 2, .dist_backend = "nccl",
					.start_ns = 1000 };
	assert_int_equal(trace_writer_header(w, &h), 0);
	const struct trace_process p = { 502, 500, 1000, 2000, 3, 0, 1, 1, 2, 0 };
	assert_int_equal(trace_writer_process(w, &p), 0);
	assert_int_equal(trace_writer_close(w, 5000), 0);
	RUN(&r, "info", path);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "  rank               1\n"
			       "  local rank         1\n"
			       "  world size         2\n"
			       "  backend            nccl\n");
	assert_contains(r.out, "       502      500     1     0.000000     0.000001        3  \n");
	assert_contains(r.out, "  job                unknown\n"); /* 2.1 and a rank: it could be known */
	assert_true(strstr(r.out, "\nranks:") == NULL); /* one rank: no table */
	result_free(&r);
	unlink(path);
	free(path);
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
		cmocka_unit_test(test_export_csv),
		cmocka_unit_test(test_export_csv_default_and_options),
		cmocka_unit_test(test_export_csv_gpu_and_damage),
		cmocka_unit_test(test_info_gpu),
		cmocka_unit_test(test_info_fixture),
		cmocka_unit_test(test_info_ranks),
		cmocka_unit_test(test_info_status),
		cmocka_unit_test(test_info_damaged),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
