/*
 * test_cmd_export_sql.c - the SQL exports as a user runs them: `gprof-dl
 * export --csv --partitioned` (the hive layout DuckDB and Spark read) and
 * `gprof-dl export --sqlite`, the built executable (GPDL_BIN) on synthetic
 * rank files (tracebuild.h: tb_job_write, tb_open_rank).
 *
 * The job: 4 gloo ranks of 3 steps on 2 hosts (rank r on host h<r % 2>,
 * pid 100 + r, its clock 1000 s ahead per r % 2 and its wall offset making
 * every rank start at wall time W = 1.7e18 ns). Per rank: 3 ProfileStep
 * ranges (ranges, steps), 6 operators (matmul, c10d::allreduce_), 3
 * gloo:all_reduce calls (communication), 2 threads, 1 process, 1 row of
 * ranks. Step k starts at W + 100 k ms on the job clock of every rank.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/analysis/tracebuild.h"
#include "tests/cmd/cmdrun.h"

#include <csv.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>
#include <zlib.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif

#define MS TB_MS
#define WALL 1700000000000000000LL
#define RANKS 4
#define STEPS 3

/* The tables of the SQL exports (the plan's contract, written out here
 * rather than taken from the code under test). */
static const char *const tables[] = {
	"ranks",   "processes", "threads", "devices", "counters", "ranges", "operators", "runtime",
	"marks",   "kernels",   "memcpy",  "memset",  "memory",   "communication", "steps",
	/* the aggregate tables (formats/SQL-SCHEMA.md), after the events' */
	"agg_ranks", "agg_steps", "agg_calls", "agg_call_sets", "agg_operators", "agg_kernels",
	"agg_durations",
};
#define NTABLES (sizeof(tables) / sizeof(tables[0]))
#define NAGG_TABLES 7
#define NEVENT_TABLES (NTABLES - NAGG_TABLES) /* the tables of the events, as the plain export's */

static struct cmd_result export(const char *const *args)
{
	return cmd_run(GPDL_BIN, "export", args);
}

#define EXPORT(...) export((const char *const[]){__VA_ARGS__, NULL})

static char job[RANKS][512];

static void write_job(void)
{
	static int done;
	if (done)
		return;
	struct tb_job j = {.ranks = RANKS, .steps = STEPS, .slow_rank = -1, .killed_rank = -1,
			   .stopped_rank = -1, .hosts = 2};
	assert_int_equal(tb_job_write("sqljob", &j, job), RANKS);
	done = 1;
}

static char *path_of(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	assert_non_null(p);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* DIR/<table>/rank=<r>/part-<host>-<pid>.csv<suffix> */
static char *part_path(const char *dir, const char *table, int rank, const char *host,
		       unsigned pid, const char *suffix)
{
	char rel[1024];
	snprintf(rel, sizeof(rel), "%s/rank=%d/part-%s-%u.csv%s", table, rank, host, pid, suffix);
	return path_of(dir, rel);
}

static char *job_part(const char *dir, const char *table, int rank, const char *suffix)
{
	char host[8];
	snprintf(host, sizeof(host), "h%d", rank % 2);
	return part_path(dir, table, rank, host, 100 + (unsigned)rank, suffix);
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Entries of a directory, "." and ".." not counted; -1 when it is not one. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			char *sub = path_of(path, de->d_name);
			remove_tree(sub);
			free(sub);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

static char *fresh_dir(const char *name)
{
	char *dir = strdup(tb_path(name));
	assert_non_null(dir);
	remove_tree(dir);
	return dir;
}

/* ---- CSV read back with libcsv's strict parser ------------------------------- */

/* A parsed file: its rows' fields, the header first. */
struct csv_rows {
	char ***row;   /* row[i][c] */
	size_t *nfields;
	size_t n, cap;
	size_t cur;    /* fields of the row being read */
	char **fields;
};

static void on_field(void *s, size_t len, void *data)
{
	struct csv_rows *t = data;
	t->fields = realloc(t->fields, (t->cur + 1) * sizeof(*t->fields));
	assert_non_null(t->fields);
	t->fields[t->cur] = malloc(len + 1);
	assert_non_null(t->fields[t->cur]);
	memcpy(t->fields[t->cur], s ? s : "", len);
	t->fields[t->cur++][len] = '\0';
}

static void on_row(int c, void *data)
{
	(void)c;
	struct csv_rows *t = data;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->row = realloc(t->row, t->cap * sizeof(*t->row));
		t->nfields = realloc(t->nfields, t->cap * sizeof(*t->nfields));
		assert_non_null(t->row);
		assert_non_null(t->nfields);
	}
	t->row[t->n] = t->fields;
	t->nfields[t->n++] = t->cur;
	t->fields = NULL;
	t->cur = 0;
}

/* The rows of a CSV text; fails the test when it is not well-formed. */
static struct csv_rows parse_csv(const char *text, size_t len)
{
	struct csv_rows t = {0};
	struct csv_parser p;
	assert_int_equal(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL), 0);
	assert_int_equal(csv_parse(&p, text, len, on_field, on_row, &t), len);
	assert_int_equal(csv_fini(&p, on_field, on_row, &t), 0);
	csv_free(&p);
	return t;
}

static struct csv_rows read_csv(const char *path)
{
	size_t len = 0;
	char *text = tb_slurp(path, &len);
	if (!text)
		fail_msg("cannot read '%s'", path);
	struct csv_rows t = parse_csv(text, len);
	free(text);
	return t;
}

static void csv_rows_free(struct csv_rows *t)
{
	for (size_t i = 0; i < t->n; i++) {
		for (size_t c = 0; c < t->nfields[i]; c++)
			free(t->row[i][c]);
		free(t->row[i]);
	}
	free(t->row);
	free(t->nfields);
	memset(t, 0, sizeof(*t));
}

/* The column named name in the header; fails when there is none. */
static size_t column(const struct csv_rows *t, const char *name)
{
	assert_true(t->n >= 1);
	for (size_t c = 0; c < t->nfields[0]; c++)
		if (strcmp(t->row[0][c], name) == 0)
			return c;
	fail_msg("no column '%s'", name);
	return 0;
}

/* Data rows of a file (its header row not counted), after checking that the
 * header is there once: the first row, and no other row equal to it. */
static long data_rows(const char *path)
{
	struct csv_rows t = read_csv(path);
	assert_true(t.n >= 1);
	for (size_t i = 1; i < t.n; i++) {
		int same = t.nfields[i] == t.nfields[0];
		for (size_t c = 0; same && c < t.nfields[0]; c++)
			same = strcmp(t.row[i][c], t.row[0][c]) == 0;
		assert_false(same);
	}
	long n = (long)t.n - 1;
	csv_rows_free(&t);
	return n;
}

/* ---- the layout --------------------------------------------------------------- */

static struct cmd_result export_job(const char *dir, int gzip)
{
	write_job();
	if (gzip)
		return EXPORT("--csv", "--partitioned", "--gzip", job[0], job[1], job[2], job[3],
			      "-o", dir);
	return EXPORT("--csv", "--partitioned", job[0], job[1], job[2], job[3], "-o", dir);
}

/* Every table of every rank, and the rows of the job (header above). */
static void check_job_layout(const char *dir, const char *suffix)
{
	for (size_t t = 0; t < NTABLES; t++) {
		char *tdir = path_of(dir, tables[t]);
		assert_int_equal(entries(tdir), RANKS); /* rank=0 .. rank=3, nothing else */
		for (int r = 0; r < RANKS; r++) {
			char *p = job_part(dir, tables[t], r, suffix);
			if (!exists(p))
				fail_msg("no '%s'", p);
			char rdir[64];
			snprintf(rdir, sizeof(rdir), "%s/rank=%d", tables[t], r);
			char *rd = path_of(dir, rdir);
			assert_int_equal(entries(rd), 1);
			free(rd);
			free(p);
		}
		free(tdir);
	}
	assert_int_equal(entries(dir), NTABLES + 1); /* and _schema.json; no temporary left */
	char *schema = path_of(dir, "_schema.json");
	assert_true(exists(schema));
	free(schema);
}

static long rows_of(const char *dir, const char *table, int rank)
{
	char *p = job_part(dir, table, rank, "");
	long n = data_rows(p);
	free(p);
	return n;
}

/* --no-events: the aggregate tables alone, a row per step and per call;
 * --events is the default */
static void test_partitioned_no_events(void **state)
{
	(void)state;
	write_job();
	char *dir = fresh_dir("part-noev");
	struct cmd_result r = EXPORT("--csv", "--partitioned", "--no-events", job[0], job[1],
				     job[2], job[3], "-o", dir);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "wrote the aggregate tables of 4 ranks to ");
	cmd_result_free(&r);
	assert_int_equal(entries(dir), NAGG_TABLES + 1); /* and _schema.json */
	for (int k = 0; k < RANKS; k++) {
		assert_int_equal(rows_of(dir, "agg_ranks", k), 1);
		assert_int_equal(rows_of(dir, "agg_steps", k), STEPS);
		assert_int_equal(rows_of(dir, "agg_calls", k), STEPS);
	}
	r = EXPORT("--csv", "--no-events", job[0], "-o", dir);
	assert_int_equal(r.status, 2);
	cmd_result_free(&r);
	free(dir);
}

static void test_partitioned_layout(void **state)
{
	(void)state;
	char *dir = fresh_dir("part");
	struct cmd_result r = export_job(dir, 0);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "wrote ");
	assert_contains(r.err, " events of 4 ranks to ");
	check_job_layout(dir, "");
	for (int k = 0; k < RANKS; k++) {
		assert_int_equal(rows_of(dir, "ranks", k), 1);
		assert_int_equal(rows_of(dir, "processes", k), 1);
		assert_int_equal(rows_of(dir, "threads", k), 2);
		assert_int_equal(rows_of(dir, "ranges", k), STEPS);
		assert_int_equal(rows_of(dir, "steps", k), STEPS);
		assert_int_equal(rows_of(dir, "operators", k), 2 * STEPS);
		assert_int_equal(rows_of(dir, "communication", k), STEPS);
		assert_int_equal(rows_of(dir, "kernels", k), 0);
		assert_int_equal(rows_of(dir, "runtime", k), 0);
		assert_int_equal(rows_of(dir, "memory", k), 0);
	}
	/* 4 ranks x 3 steps x (step + 2 operators + 1 call) */
	assert_contains(r.err, "wrote 48 events of 4 ranks");
	cmd_result_free(&r);
	free(dir);
}

/* Every table holds as many rows as the plain export of the same trace: the
 * same records, whatever the columns. */
static void test_partitioned_rows_equal_plain(void **state)
{
	(void)state;
	char *dir = fresh_dir("part-eq"), *plain = fresh_dir("plain-eq");
	struct cmd_result r = export_job(dir, 0);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	static const char *const plain_name[NEVENT_TABLES] = {
		"trace.csv",  "processes.csv", "threads.csv", "devices.csv", "counters.csv",
		"ranges.csv", "operators.csv", "runtime.csv", "marks.csv",   "kernels.csv",
		"memcpy.csv", "memset.csv",    "memory.csv",  "communication.csv", "steps.csv",
	};
	for (int k = 0; k < RANKS; k++) {
		r = EXPORT("--csv", "--no-summary", job[k], "-o", plain);
		assert_int_equal(r.status, 0);
		cmd_result_free(&r);
		for (size_t t = 0; t < NEVENT_TABLES; t++) {
			char *pp = path_of(plain, plain_name[t]);
			assert_int_equal(rows_of(dir, tables[t], k), data_rows(pp));
			free(pp);
		}
		remove_tree(plain);
	}
	free(dir);
	free(plain);
}

/* Times on the job clock: the trace's + its wall offset; durations as they
 * were. Rank 1's clock reads 1000 s more than rank 0's, its offset 1000 s
 * less: both start their steps at W. */
static void test_partitioned_job_clock(void **state)
{
	(void)state;
	char *dir = fresh_dir("part-clock");
	struct cmd_result r = export_job(dir, 0);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	for (int k = 0; k < RANKS; k++) {
		char *p = job_part(dir, "steps", k, "");
		struct csv_rows t = read_csv(p);
		size_t start = column(&t, "start_ns"), end = column(&t, "end_ns");
		size_t dur = column(&t, "dur_ns"), step = column(&t, "step");
		assert_int_equal(t.n, 1 + STEPS);
		for (size_t i = 1; i < t.n; i++) {
			long long s = strtoll(t.row[i][start], NULL, 10);
			long long n = strtoll(t.row[i][step], NULL, 10);
			assert_true(n >= 0 && n < STEPS);
			assert_int_equal(s, WALL + n * 100 * (long long)MS);
			assert_int_equal(strtoll(t.row[i][end], NULL, 10), s + 100 * (long long)MS);
			assert_int_equal(strtoll(t.row[i][dur], NULL, 10), 100 * (long long)MS);
		}
		csv_rows_free(&t);
		free(p);

		/* step 0's collective starts after matmul (40 ms), with the
		 * c10d op that makes it */
		p = job_part(dir, "communication", k, "");
		t = read_csv(p);
		start = column(&t, "start_ns");
		long long first = -1;
		for (size_t i = 1; i < t.n; i++) {
			long long s = strtoll(t.row[i][start], NULL, 10);
			if (first < 0 || s < first)
				first = s;
		}
		assert_int_equal(first, WALL + 40 * (long long)MS);
		csv_rows_free(&t);
		free(p);
	}
	free(dir);
}

/* One launcher's file of 2 ranks (trace 1.3 process table): a part per
 * rank, pids 51 and 52, and the launcher's, pid 50, as rank=-1. */
static void test_partitioned_merged(void **state)
{
	(void)state;
	char merged[1][512];
	struct tb_job j = {.ranks = 2, .steps = STEPS, .slow_rank = -1, .killed_rank = -1,
			   .stopped_rank = -1, .merged = 1};
	assert_int_equal(tb_job_write("sqlmerged", &j, merged), 1);
	char *dir = fresh_dir("part-merged");
	struct cmd_result r = EXPORT("--csv", "--partitioned", merged[0], "-o", dir);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	assert_contains(r.err, "wrote 24 events of 2 ranks and 1 more part to ");
	cmd_result_free(&r);
	for (size_t t = 0; t < NTABLES; t++) {
		char *tdir = path_of(dir, tables[t]);
		assert_int_equal(entries(tdir), 3);
		free(tdir);
	}
	for (int k = -1; k < 2; k++) {
		char *p = part_path(dir, "steps", k, "h0", (unsigned)(51 + k), "");
		assert_int_equal(data_rows(p), k < 0 ? 0 : STEPS);
		free(p);
		p = part_path(dir, "processes", k, "h0", (unsigned)(51 + k), "");
		assert_int_equal(data_rows(p), 1);
		free(p);
		p = part_path(dir, "threads", k, "h0", (unsigned)(51 + k), "");
		assert_int_equal(data_rows(p), k < 0 ? 0 : 2); /* main and gloo; none for 50 */
		free(p);
		p = part_path(dir, "operators", k, "h0", (unsigned)(51 + k), "");
		assert_int_equal(data_rows(p), k < 0 ? 0 : 2 * STEPS);
		free(p);
	}
	free(dir);
}

/* ---- gzip ----------------------------------------------------------------------- */

static char *gunzip(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	if (!gz)
		return NULL;
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	assert_non_null(buf);
	for (;;) {
		if (cap - n < 4096) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		int got = gzread(gz, buf + n, (unsigned)(cap - n));
		assert_true(got >= 0);
		if (got == 0)
			break;
		n += (size_t)got;
	}
	gzclose(gz);
	*len = n;
	return buf;
}

static void test_partitioned_gzip(void **state)
{
	(void)state;
	char *dir = fresh_dir("part-gz"), *plain = fresh_dir("part-nogz");
	struct cmd_result r = export_job(dir, 1);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	r = export_job(plain, 0);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	check_job_layout(dir, ".gz");
	for (size_t t = 0; t < NTABLES; t++)
		for (int k = 0; k < RANKS; k++) {
			char *gzp = job_part(dir, tables[t], k, ".gz"), *p = job_part(plain, tables[t], k, "");
			char *bare = job_part(dir, tables[t], k, "");
			assert_false(exists(bare));
			/* a gzip member, not bytes that zlib reads through as they are */
			FILE *f = fopen(gzp, "rb");
			assert_non_null(f);
			assert_int_equal(fgetc(f), 0x1f);
			assert_int_equal(fgetc(f), 0x8b);
			fclose(f);
			size_t n1 = 0, n2 = 0;
			char *a = gunzip(gzp, &n1), *b = tb_slurp(p, &n2);
			assert_non_null(a);
			assert_non_null(b);
			assert_int_equal(n1, n2);
			assert_memory_equal(a, b, n1);
			free(a);
			free(b);
			free(gzp);
			free(p);
			free(bare);
		}
	free(dir);
	free(plain);
}

/* The other suffix's files are the same part's rows: an export that would
 * leave both is refused, and --force replaces them. */
static void test_partitioned_gzip_replaces_plain(void **state)
{
	(void)state;
	char *dir = fresh_dir("part-swap");
	struct cmd_result r = export_job(dir, 0);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	r = export_job(dir, 1);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, ".csv' exists; --force overwrites");
	cmd_result_free(&r);
	char *gz = job_part(dir, "kernels", 0, ".gz"), *bare = job_part(dir, "kernels", 0, "");
	assert_false(exists(gz));
	write_job();
	r = EXPORT("--csv", "--partitioned", "--gzip", "--force", job[0], job[1], job[2], job[3],
		   "-o", dir);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	assert_true(exists(gz));
	assert_false(exists(bare));
	check_job_layout(dir, ".gz");
	free(gz);
	free(bare);
	free(dir);
}

/* ---- several hosts, one DIR ------------------------------------------------------- */

/* Starts `gprof-dl export args...` with its output in files of its own. */
static pid_t spawn_export(const char *const *args, const char *tag)
{
	const char *argv[32] = {GPDL_BIN, "export"};
	size_t n = 2;
	for (; args[n - 2]; n++)
		argv[n] = args[n - 2];
	argv[n] = NULL;
	char out[600];
	snprintf(out, sizeof(out), "%s", tb_path(tag));
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(127);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(GPDL_BIN, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int same_file(const char *a, const char *b)
{
	size_t n1 = 0, n2 = 0;
	char *x = tb_slurp(a, &n1), *y = tb_slurp(b, &n2);
	int same = x && y && n1 == n2 && memcmp(x, y, n1) == 0;
	free(x);
	free(y);
	return same;
}

/* Host h0 exports ranks 0 and 2, host h1 ranks 1 and 3, at the same time,
 * into one DIR: both complete, each file as the whole job's export has it. */
static void test_partitioned_two_hosts(void **state)
{
	(void)state;
	write_job();
	char *dir = fresh_dir("part-hosts"), *whole = fresh_dir("part-whole");
	struct cmd_result r = export_job(whole, 0);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	for (int round = 0; round < 3; round++) {
		remove_tree(dir);
		pid_t a = spawn_export((const char *const[]){"--csv", "--partitioned", job[0], job[2],
							     "-o", dir, NULL},
				       "host0.txt");
		pid_t b = spawn_export((const char *const[]){"--csv", "--partitioned", job[1], job[3],
							     "-o", dir, NULL},
				       "host1.txt");
		assert_int_equal(wait_status(a), 0);
		assert_int_equal(wait_status(b), 0);
		check_job_layout(dir, "");
		for (size_t t = 0; t < NTABLES; t++)
			for (int k = 0; k < RANKS; k++) {
				char *p = job_part(dir, tables[t], k, ""), *q = job_part(whole, tables[t], k, "");
				assert_true(same_file(p, q));
				free(p);
				free(q);
			}
		char *s1 = path_of(dir, "_schema.json"), *s2 = path_of(whole, "_schema.json");
		assert_true(same_file(s1, s2));
		free(s1);
		free(s2);
	}
	free(dir);
	free(whole);
}

/* ---- refusals, failures, usage ------------------------------------------------------ */

static void test_partitioned_refuses_existing(void **state)
{
	(void)state;
	char *dir = fresh_dir("part-exist");
	struct cmd_result r = export_job(dir, 0);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	/* one file gone, one there: the export stops before writing any */
	char *gone = job_part(dir, "kernels", 3, ""), *there = job_part(dir, "ranges", 1, "");
	assert_int_equal(unlink(gone), 0);
	r = export_job(dir, 0);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "exists; --force overwrites");
	assert_contains(r.err, "part-h0-100.csv'"); /* the first it met: rank 0's */
	cmd_result_free(&r);
	assert_false(exists(gone));
	assert_true(exists(there));

	write_job();
	r = EXPORT("--csv", "--partitioned", "--force", job[0], job[1], job[2], job[3], "-o", dir);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	assert_true(exists(gone));
	check_job_layout(dir, "");
	assert_int_equal(rows_of(dir, "operators", 1), 2 * STEPS); /* truncated, not appended */
	free(gone);
	free(there);
	free(dir);
}

/* A failure after the first part: what the export wrote is removed, and the
 * directories it made; a directory it found stays. */
static void test_partitioned_failure_cleans_up(void **state)
{
	(void)state;
	write_job();
	char *dir = fresh_dir("part-fail");
	assert_int_equal(mkdir(dir, 0777), 0);
	char *kdir = path_of(dir, "kernels");
	assert_int_equal(mkdir(kdir, 0777), 0);
	char *blocker = path_of(kdir, "rank=1"); /* a file where rank 1's directory goes */
	FILE *f = fopen(blocker, "w");
	assert_non_null(f);
	fclose(f);
	struct cmd_result r =
		EXPORT("--csv", "--partitioned", job[0], job[1], job[2], job[3], "-o", dir);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "rank=1' exists and is not a directory");
	cmd_result_free(&r);
	/* left: DIR, DIR/kernels (both there before) and the blocker */
	assert_int_equal(entries(dir), 1);
	assert_int_equal(entries(kdir), 1);
	assert_true(exists(blocker));
	free(blocker);
	free(kdir);
	free(dir);
}

/* The host name is data: every byte outside [A-Za-z0-9._-] becomes '_'
 * (".." stays in the name, which starts "part-", so no path climbs out),
 * and a trace with no host name is "unknown". */
static void test_partitioned_hostile_host(void **state)
{
	(void)state;
	struct tb b;
	tb_open_rank(&b, "hostile.gpdl", "../e vil\x01\xc3\xa9", 4242, 0, 5, 8, WALL);
	tb_thread(&b, 0, 4242, "main");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	tb_range(&b, 0, step, MS, 10 * MS);
	tb_drops(&b, 0, 7);
	char *hostile = strdup(tb_close(&b, 20 * MS));
	tb_open_rank(&b, "nohost.gpdl", "", 77, 0, 6, 8, WALL);
	tb_thread(&b, 0, 77, "main");
	step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	tb_range(&b, 0, step, MS, 10 * MS);
	char *nohost = strdup(tb_close(&b, 20 * MS));
	char *dir = fresh_dir("part-hostile");
	struct cmd_result r = EXPORT("--csv", "--partitioned", hostile, nohost, "-o", dir);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	for (size_t t = 0; t < NTABLES; t++) {
		char *p = part_path(dir, tables[t], 5, ".._e_vil___", 4242, "");
		char *q = part_path(dir, tables[t], 6, "unknown", 77, "");
		if (!exists(p) || !exists(q))
			fail_msg("no '%s' or '%s'", p, q);
		free(p);
		free(q);
	}
	char *p = part_path(dir, "ranges", 5, ".._e_vil___", 4242, "");
	assert_int_equal(data_rows(p), 1);
	free(p);
	/* the drops are carried, with the host as the trace names it */
	p = part_path(dir, "ranks", 5, ".._e_vil___", 4242, "");
	struct csv_rows t = read_csv(p);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.row[1][column(&t, "drops")], "7");
	assert_string_equal(t.row[1][column(&t, "host")], "../e vil\x01\xc3\xa9");
	csv_rows_free(&t);
	free(p);
	free(dir);
	free(hostile);
	free(nohost);
}

static void test_partitioned_usage(void **state)
{
	(void)state;
	write_job();
	struct {
		const char *const *args;
		const char *says;
	} cases[] = {
		{(const char *const[]){"--csv", "--gzip", job[0], "-o", "x", NULL}, "--gzip goes with"},
		{(const char *const[]){"--partitioned", job[0], "-o", "x", NULL}, "say which format"},
		{(const char *const[]){"--chrome", "--partitioned", job[0], "-o", "x", NULL},
		 "--partitioned goes with --csv"},
		{(const char *const[]){"--sqlite", "--partitioned", job[0], "-o", "x", NULL},
		 "--partitioned goes with --csv"},
		{(const char *const[]){"--sqlite", "--gzip", job[0], "-o", "x", NULL}, "--gzip goes with"},
		{(const char *const[]){"--sqlite", "--csv", job[0], "-o", "x", NULL}, "one format at a time"},
		{(const char *const[]){"--sqlite", job[0], "-o", "-", NULL}, "'-' is not one"},
		{(const char *const[]){"--csv", "--partitioned", job[0], "-o", "-", NULL}, "'-' is not one"},
		{(const char *const[]){"--sqlite", job[0], job[1], NULL}, "name it with -o"},
		{(const char *const[]){"--csv", "--partitioned", job[0], job[1], NULL}, "name it with -o"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cmd_result r = export(cases[i].args);
		assert_int_equal(r.status, 2);
		assert_contains(r.err, cases[i].says);
		cmd_result_free(&r);
	}
	assert_false(exists("x"));
}

/* A file that is no trace: one line naming it, exit 1, nothing made. */
static void test_sql_bad_input(void **state)
{
	(void)state;
	write_job();
	char *bad = strdup(tb_path("notatrace.gpdl")); /* tb_path's buffers rotate */
	FILE *f = fopen(bad, "w");
	assert_non_null(f);
	fputs("hello\n", f);
	fclose(f);
	char *dir = fresh_dir("part-bad"), *out = fresh_dir("bad.sqlite");
	struct cmd_result r = EXPORT("--csv", "--partitioned", job[0], bad, "-o", dir);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "notatrace.gpdl");
	cmd_result_free(&r);
	assert_false(exists(dir));
	r = EXPORT("--sqlite", job[0], bad, "-o", out);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "notatrace.gpdl");
	cmd_result_free(&r);
	assert_false(exists(out));

	/* two traces of no rank from one host with one pid: the same part
	 * files, refused before any is written */
	struct tb b;
	tb_open(&b, "same-a.gpdl", "h", 9, 0);
	char *a = strdup(tb_close(&b, MS));
	tb_open(&b, "same-b.gpdl", "h", 9, 0);
	char *c = strdup(tb_close(&b, MS));
	r = EXPORT("--csv", "--partitioned", a, c, "-o", dir);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "would both write");
	assert_contains(r.err, "rank=-1/part-h-9.csv'");
	cmd_result_free(&r);
	assert_false(exists(dir));
	/* the same with the aggregate tables alone: their file is the one
	 * named (the event tables' are not this export's; it compared a name
	 * it had not made and crashed) */
	r = EXPORT("--csv", "--partitioned", "--no-events", a, c, "-o", dir);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "would both write");
	assert_contains(r.err, "agg_ranks/rank=-1/part-h-9.csv'");
	cmd_result_free(&r);
	assert_false(exists(dir));
	tb_open(&b, "same-c.gpdl", "h", 10, 0); /* another pid: no clash */
	char *e = strdup(tb_close(&b, MS));
	r = EXPORT("--csv", "--partitioned", "--no-events", a, e, "-o", dir);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "wrote the aggregate tables of 2 traces to ");
	cmd_result_free(&r);
	free(e);
	free(a);
	free(c);
	free(dir);
	free(out);
	free(bad);
}

/* A damaged rank: exported up to the damage, with the warning. */
static void test_partitioned_damaged(void **state)
{
	(void)state;
	write_job();
	size_t len = 0;
	char *bytes = tb_slurp(job[2], &len);
	assert_non_null(bytes);
	char *cut = strdup(tb_path("cut-2.gpdl")); /* tb_path's buffers rotate */
	FILE *f = fopen(cut, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len - 40, f), len - 40);
	fclose(f);
	free(bytes);
	char *dir = fresh_dir("part-damaged");
	struct cmd_result r = EXPORT("--csv", "--partitioned", job[0], job[1], cut, job[3], "-o", dir);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "warning: ");
	assert_contains(r.err, "cut-2.gpdl");
	assert_contains(r.err, "exported the ");
	cmd_result_free(&r);
	check_job_layout(dir, "");
	assert_int_equal(rows_of(dir, "operators", 1), 2 * STEPS);
	/* the damage is carried: in rank 2's row of ranks, not in rank 0's */
	for (int k = 0; k < 3; k += 2) {
		char *p = job_part(dir, "ranks", k, "");
		struct csv_rows t = read_csv(p);
		assert_int_equal(t.n, 2);
		size_t reason = column(&t, "damage_reason"), offset = column(&t, "damage_offset");
		assert_int_equal(strlen(t.row[1][reason]) > 0, k == 2);
		assert_int_equal(strlen(t.row[1][offset]) > 0, k == 2);
		csv_rows_free(&t);
		free(p);
	}
	free(dir);
	free(cut);
}

/* ---- _schema.json ---------------------------------------------------------------- */

static void test_partitioned_schema(void **state)
{
	(void)state;
	char *dir = fresh_dir("part-schema");
	struct cmd_result r = export_job(dir, 0);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	char *sp = path_of(dir, "_schema.json");
	char *text = tb_slurp(sp, NULL);
	assert_non_null(text);
	char errbuf[256];
	yajl_val doc = yajl_tree_parse(text, errbuf, sizeof(errbuf));
	if (!doc)
		fail_msg("_schema.json: %s", errbuf);
	assert_int_equal((long)jnum(jkey(doc, "version")), 1);
	yajl_val part = jkey(doc, "partition");
	assert_int_equal(jlen(part), 1);
	assert_string_equal(jstr(jkey(jelem(part, 0), "name")), "rank");
	assert_string_equal(jstr(jkey(jelem(part, 0), "type")), "INTEGER");
	yajl_val tabs = jkey(doc, "tables");
	assert_true(YAJL_IS_OBJECT(tabs));
	assert_int_equal(tabs->u.object.len, NTABLES);
	for (size_t t = 0; t < NTABLES; t++) {
		yajl_val cols = jpath(tabs, tables[t], "columns");
		char *p = job_part(dir, tables[t], 1, "");
		struct csv_rows csv = read_csv(p);
		assert_int_equal(jlen(cols), csv.nfields[0]);
		for (size_t c = 0; c < jlen(cols); c++) {
			yajl_val col = jelem(cols, c);
			assert_string_equal(jstr(jkey(col, "name")), csv.row[0][c]);
			assert_string_not_equal(csv.row[0][c], "rank"); /* the partition's */
			const char *type = jstr(jkey(col, "type"));
			assert_true(strcmp(type, "BIGINT") == 0 || strcmp(type, "DOUBLE") == 0 ||
				    strcmp(type, "VARCHAR") == 0);
			if (strcmp(csv.row[0][c], "start_ns") == 0 || strcmp(csv.row[0][c], "dur_ns") == 0)
				assert_string_equal(type, "BIGINT");
			if (strcmp(csv.row[0][c], "name") == 0)
				assert_string_equal(type, "VARCHAR");
		}
		csv_rows_free(&csv);
		free(p);
	}
	yajl_tree_free(doc);
	free(text);
	free(sp);
	free(dir);
}

/* ---- --sqlite ------------------------------------------------------------------------ */

static long long sql_count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	long long n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void test_sqlite(void **state)
{
	(void)state;
	write_job();
	char *out = strdup(tb_path("job.sqlite"));
	unlink(out);
	struct cmd_result r = EXPORT("--sqlite", job[0], job[1], job[2], job[3], "-o", out);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "wrote 48 events of 4 ranks to ");
	cmd_result_free(&r);

	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	char sql[256];
	for (size_t t = 0; t < NTABLES; t++) {
		snprintf(sql, sizeof(sql), "SELECT count(DISTINCT rank) FROM %s WHERE rank >= 0", tables[t]);
		long long want = 0;
		if (strcmp(tables[t], "ranks") == 0 || strcmp(tables[t], "processes") == 0 ||
		    strcmp(tables[t], "threads") == 0 || strcmp(tables[t], "ranges") == 0 ||
		    strcmp(tables[t], "steps") == 0 || strcmp(tables[t], "operators") == 0 ||
		    strcmp(tables[t], "communication") == 0 || strcmp(tables[t], "agg_steps") == 0 || strcmp(tables[t], "agg_ranks") == 0 ||
		    strcmp(tables[t], "agg_calls") == 0 || strcmp(tables[t], "agg_call_sets") == 0 ||
		    strcmp(tables[t], "agg_operators") == 0 || strcmp(tables[t], "agg_durations") == 0)
			want = RANKS;
		assert_int_equal(sql_count(db, sql), want);
	}
	for (int k = 0; k < RANKS; k++) {
		static const struct {
			const char *table;
			long long rows;
		} want[] = {{"ranks", 1},     {"processes", 1},     {"threads", 2},
			    {"ranges", STEPS}, {"steps", STEPS},    {"operators", 2 * STEPS},
			    {"communication", STEPS}, {"kernels", 0}, {"memory", 0},
			    {"agg_steps", STEPS}, {"agg_calls", STEPS}};
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE rank = %d", want[i].table, k);
			assert_int_equal(sql_count(db, sql), want[i].rows);
		}
		/* the job clock, as in the partitions */
		snprintf(sql, sizeof(sql), "SELECT min(start_ns) FROM steps WHERE rank = %d", k);
		assert_int_equal(sql_count(db, sql), WALL);
		snprintf(sql, sizeof(sql), "SELECT min(start_ns) FROM agg_steps WHERE rank = %d", k);
		assert_int_equal(sql_count(db, sql), WALL);
		/* the Operator view's rows: every operator call of the rank lies
		 * in its steps; each counted once in the histogram */
		snprintf(sql, sizeof(sql),
			 "SELECT (SELECT sum(calls) FROM agg_operators WHERE rank = %d) - "
			 "(SELECT count(*) FROM operators WHERE rank = %d AND type = 'Operator')",
			 k, k);
		assert_int_equal(sql_count(db, sql), 0);
		snprintf(sql, sizeof(sql),
			 "SELECT (SELECT sum(calls) FROM agg_durations WHERE rank = %d AND kind = "
			 "'operator') - (SELECT sum(calls) FROM agg_operators WHERE rank = %d)",
			 k, k);
		assert_int_equal(sql_count(db, sql), 0);
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM operators WHERE rank = %d AND type = 'Operator'", k);
		assert_true(sql_count(db, sql) > 0);
	}
	sqlite3_close(db);

	/* there: refused without --force, and left as it was */
	size_t n1 = 0;
	char *before = tb_slurp(out, &n1);
	r = EXPORT("--sqlite", job[0], job[1], "-o", out);
	assert_int_equal(r.status, 1);
	assert_one_line(r.err);
	assert_contains(r.err, "exists; use --force to overwrite it");
	cmd_result_free(&r);
	size_t n2 = 0;
	char *after = tb_slurp(out, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(before, after, n1);
	free(before);
	free(after);

	/* --force replaces it: two ranks now */
	r = EXPORT("--sqlite", "--force", job[0], job[1], "-o", out);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "wrote 24 events of 2 ranks");
	cmd_result_free(&r);
	assert_int_equal(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sql_count(db, "SELECT count(*) FROM ranks"), 2);
	assert_int_equal(sql_count(db, "SELECT count(*) FROM operators"), 2 * 2 * STEPS);
	sqlite3_close(db);
	free(out);
}

/* One file, no -o: FILE with .gpdl replaced by .sqlite. */
static void test_sqlite_default_name(void **state)
{
	(void)state;
	write_job();
	char want[600];
	snprintf(want, sizeof(want), "%.*s.sqlite", (int)(strlen(job[3]) - 5), job[3]);
	unlink(want);
	struct cmd_result r = EXPORT("--sqlite", job[3]);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "wrote 12 events of 1 rank to ");
	cmd_result_free(&r);
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open_v2(want, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sql_count(db, "SELECT count(*) FROM steps WHERE rank = 3"), STEPS);
	sqlite3_close(db);
	unlink(want);
}

static int teardown(void **state)
{
	(void)state;
	remove_tree(tb_dir()); /* tb_cleanup() removes files only */
	tb_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partitioned_layout),
		cmocka_unit_test(test_partitioned_no_events),
		cmocka_unit_test(test_partitioned_rows_equal_plain),
		cmocka_unit_test(test_partitioned_job_clock),
		cmocka_unit_test(test_partitioned_merged),
		cmocka_unit_test(test_partitioned_gzip),
		cmocka_unit_test(test_partitioned_gzip_replaces_plain),
		cmocka_unit_test(test_partitioned_two_hosts),
		cmocka_unit_test(test_partitioned_refuses_existing),
		cmocka_unit_test(test_partitioned_failure_cleans_up),
		cmocka_unit_test(test_partitioned_hostile_host),
		cmocka_unit_test(test_partitioned_usage),
		cmocka_unit_test(test_sql_bad_input),
		cmocka_unit_test(test_partitioned_damaged),
		cmocka_unit_test(test_partitioned_schema),
		cmocka_unit_test(test_sqlite),
		cmocka_unit_test(test_sqlite_default_name),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
