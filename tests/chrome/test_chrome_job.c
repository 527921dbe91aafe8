/*
 * test_chrome_job.c - `gprof-dl export` of a distributed job, as a user runs
 * it (the built executable, GPDL_BIN), on the synthetic jobs of
 * tracebuild.h (tb_job_write): rank files on one host and on two, one
 * file holding both ranks and their launcher, GPU ranks; --chrome read back
 * by yajl, --csv as its directories.
 *
 * What is checked, worked out from tb_job_write's timeline (ms; rank r's
 * step k starts at s = 100 k on the job's clock):
 *  - one process per part, named "rank R (pid P, host H)", sorted by rank,
 *    the launcher last; every event of a rank at its pid; thread names;
 *  - times on the job's clock: the second host's clock reads 1000 s more,
 *    its wall offset less, so its step k is at ts 100 k ms too;
 *  - a flow per collective call, joining the ranks' calls of one sequence
 *    number: 's' on the rank whose call starts first, 'f' on the other,
 *    both at their call's start, bp "e"; gloo's call starts at s + 40 on
 *    rank 0 and s + 60 on rank 1 (20 ms slower);
 *  - the call's details in Kineto's arg names;
 *  - --csv of several files: a directory per part, each with only its own
 *    events; of one file, one directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>

#include "tests/analysis/tracebuild.h"
#include "tests/chrome/chrome_read.h"
#include "tests/cmd/cmdrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#ifndef GPDL_BIN
#error "GPDL_BIN: the path of the gprof-dl executable under test"
#endif

#define STEPS 3
#define STREAM_TID 0x40000000LL /* a stream's tid in a job: its thread index above this */
#define FLOW_ID0 ((1LL << 52) + 1) /* the first collective flow's id */

static struct cmd_result export_cmd(const char *const *args)
{
	return cmd_run(GPDL_BIN, "export", args);
}

#define EXPORT(...) export_cmd((const char *const[]){__VA_ARGS__, NULL})

/* Writes the job and exports it with --chrome to OUT; the document. */
static yajl_val export_job(const char *name, const struct tb_job *job, char **text)
{
	char paths[4][512];
	unsigned n = tb_job_write(name, job, paths);
	char out[600];
	snprintf(out, sizeof(out), "%s/%s.json", tb_dir(), name);
	const char *args[8] = {"--chrome"};
	unsigned a = 1;
	for (unsigned i = 0; i < n; i++)
		args[a++] = paths[i];
	args[a++] = "-o";
	args[a++] = out;
	args[a] = NULL;
	struct cmd_result r = export_cmd(args);
	if (r.status != 0)
		fail_msg("export failed (%d): %s", r.status, r.err);
	/* one line, where it wrote */
	char said[700];
	snprintf(said, sizeof(said), "gprof-dl: wrote '%s' (", out);
	assert_int_equal(strncmp(r.err, said, strlen(said)), 0);
	assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
	cmd_result_free(&r);
	*text = tb_slurp(out, NULL);
	return parse(*text);
}

static const char *meta_name(struct evlist evs, const char *kind, long long pid, long long tid)
{
	yajl_val m = find_meta(evs, kind, pid, tid);
	return m ? get_str(get(m, "args"), "name") : NULL;
}

static long long meta_sort(struct evlist evs, const char *kind, long long pid, long long tid)
{
	yajl_val m = find_meta(evs, kind, pid, tid);
	assert_non_null(m);
	return get_int(get(m, "args"), "sort_index");
}

/* Events of this ph and name at pid, counted. */
static size_t count_at(struct evlist evs, const char *ph, const char *name, long long pid)
{
	size_t n = 0;
	for (size_t i = 0; i < evs.len; i++) {
		const char *p = get_str(evs.values[i], "ph"), *nm = get_str(evs.values[i], "name");
		if (p && !strcmp(p, ph) && nm && !strcmp(nm, name) &&
		    get_int(evs.values[i], "pid") == pid)
			n++;
	}
	return n;
}

/* The ends of the collective flow of this id, in file order. */
static size_t flow_ends(struct evlist evs, long long id, yajl_val *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < evs.len; i++) {
		const char *cat = get_str(evs.values[i], "cat");
		if (cat && !strcmp(cat, "collective") && get_int(evs.values[i], "id") == id) {
			assert_true(n < max);
			out[n++] = evs.values[i];
		}
	}
	return n;
}

static void assert_flow_end(yajl_val e, const char *ph, long long pid, long long tid,
			    const char *ts)
{
	assert_str(e, "ph", ph);
	assert_int_equal(get_int(e, "pid"), pid);
	assert_int_equal(get_int(e, "tid"), tid);
	assert_num(e, "ts", ts);
	assert_str(e, "bp", "e");
	assert_str(e, "name", "collective");
}

/* The k-th (0-based) event of this name at pid, in ts order of the file
 * (tb writes each thread's events in time order). */
static yajl_val nth_at(struct evlist evs, const char *name, long long pid, int k)
{
	for (size_t i = 0; i < evs.len; i++) {
		const char *nm = get_str(evs.values[i], "name"), *ph = get_str(evs.values[i], "ph");
		if (ph && !strcmp(ph, "X") && nm && !strcmp(nm, name) &&
		    get_int(evs.values[i], "pid") == pid && k-- == 0)
			return evs.values[i];
	}
	fail_msg("no event '%s' number %d at pid %lld", name, k, pid);
	return NULL;
}

/* ---- rank files, one host, gloo --------------------------------------------------- */

static void check_gloo_calls(struct evlist evs, long long pid0, long long gloo0, long long pid1,
			     long long gloo1)
{
	/* three matched calls, rank 0 first (its call starts 20 ms earlier),
	 * rank 1 last */
	assert_int_equal(count_ph(evs, "s") + count_ph(evs, "t") + count_ph(evs, "f"), 2 * STEPS);
	for (long long id = FLOW_ID0; id < FLOW_ID0 + STEPS; id++) {
		yajl_val ends[4];
		char ts0[32], ts1[32];
		assert_int_equal(flow_ends(evs, id, ends, 4), 2);
		yajl_val s = !strcmp(get_str(ends[0], "ph"), "s") ? ends[0] : ends[1];
		yajl_val f = s == ends[0] ? ends[1] : ends[0];
		/* calls are matched by their sequence number: step k's is the
		 * k-th id */
		long long k = id - FLOW_ID0;
		snprintf(ts0, sizeof(ts0), "%lld.000", (100 * k + 40) * 1000);
		snprintf(ts1, sizeof(ts1), "%lld.000", (100 * k + 60) * 1000);
		assert_flow_end(s, "s", pid0, gloo0, ts0);
		assert_flow_end(f, "f", pid1, gloo1, ts1);
	}
}

static void check_gloo_args(struct evlist evs, long long pid)
{
	for (int k = 0; k < STEPS; k++) {
		yajl_val args = get(nth_at(evs, "gloo:all_reduce", pid, k), "args");
		assert_str(args, "type", "Communication");
		assert_str(args, "Collective name", "all_reduce");
		assert_str(args, "dtype", "float");
		assert_str(args, "Process Group Name", "0");
		assert_int_equal(get_int(args, "Seq"), k);
		assert_int_equal(get_int(args, "Group size"), 2);
		assert_int_equal(get_int(args, "bytes"), 4 << 20);
		assert_int_equal(get_int(args, "In msg nelems"), 1 << 20);
		assert_null(get(args, "peer"));
	}
}

static void test_rank_files(void **state)
{
	(void)state;
	struct tb_job job = {.ranks = 2, .steps = STEPS, .slow_rank = 1, .slow_ms = 20,
			     .killed_rank = -1};
	char *text;
	yajl_val doc = export_job("gloo", &job, &text);
	struct evlist evs = events_of(doc);

	assert_null(get(doc, "distributedInfo")); /* a job is no one rank */
	assert_string_equal(meta_name(evs, "process_name", 100, 0), "rank 0 (pid 100, host h0)");
	assert_string_equal(meta_name(evs, "process_name", 101, 0), "rank 1 (pid 101, host h0)");
	assert_int_equal(meta_sort(evs, "process_sort_index", 100, 0), 0);
	assert_int_equal(meta_sort(evs, "process_sort_index", 101, 0), 1);
	/* the threads as the traces name them */
	assert_string_equal(meta_name(evs, "thread_name", 100, 100), "main");
	assert_string_equal(meta_name(evs, "thread_name", 100, 101), "gloo");
	assert_string_equal(meta_name(evs, "thread_name", 101, 101), "main");
	assert_string_equal(meta_name(evs, "thread_name", 101, 102), "gloo");

	/* each rank's four ranges per step, at its pid */
	assert_int_equal(count_ph(evs, "X"), 2 * 4 * STEPS);
	for (long long pid = 100; pid <= 101; pid++) {
		assert_int_equal(count_at(evs, "X", "ProfileStep", pid), 0);
		assert_int_equal(count_at(evs, "X", "gloo:all_reduce", pid), STEPS);
		for (int k = 0; k < STEPS; k++) {
			/* Kineto's name, each rank's steps numbered from 0 */
			char ts[32], name[32];
			snprintf(ts, sizeof(ts), "%d.000", 100000 * k);
			snprintf(name, sizeof(name), "ProfilerStep#%d", k);
			assert_int_equal(count_at(evs, "X", name, pid), 1);
			assert_num(nth_at(evs, name, pid, 0), "ts", ts);
		}
	}
	/* rank 1's matmul runs 20 ms longer: 60 ms */
	assert_num(nth_at(evs, "matmul", 101, 0), "dur", "60000.000");
	check_gloo_args(evs, 100);
	check_gloo_args(evs, 101);
	check_gloo_calls(evs, 100, 101, 101, 102);

	yajl_val job_info = get(get(doc, "otherData"), "job");
	assert_non_null(job_info);
	assert_non_null(strstr(get_str(job_info, "clock"), "the shared CLOCK_MONOTONIC of host h0"));
	assert_int_equal(get_int(job_info, "collective_flow_events"), 2 * STEPS);
	yajl_val parts = get(job_info, "parts");
	assert_true(YAJL_IS_ARRAY(parts));
	assert_int_equal(YAJL_GET_ARRAY(parts)->len, 2);
	assert_int_equal(get_int(YAJL_GET_ARRAY(parts)->values[1], "rank"), 1);
	assert_int_equal(get_int(YAJL_GET_ARRAY(parts)->values[1], "events"), 4 * STEPS);
	/* ts 0 is the job's start: the files' shared start, wall offset
	 * 1700000000000000000 */
	assert_num(doc, "baseTimeNanoseconds", "1700000000000000000");
	yajl_tree_free(doc);
	free(text);
}

/* ---- two hosts: wall clock --------------------------------------------------------- */

static void test_two_hosts(void **state)
{
	(void)state;
	struct tb_job job = {.ranks = 2, .steps = STEPS, .slow_rank = 1, .slow_ms = 20,
			     .killed_rank = -1, .hosts = 2};
	char *text;
	yajl_val doc = export_job("hosts", &job, &text);
	struct evlist evs = events_of(doc);
	assert_string_equal(meta_name(evs, "process_name", 101, 0), "rank 1 (pid 101, host h1)");
	/* host h1's clock reads 1000 s more: on wall time its steps line up */
	for (int k = 0; k < STEPS; k++) {
		char ts[32], name[32];
		snprintf(ts, sizeof(ts), "%d.000", 100000 * k);
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		assert_num(nth_at(evs, name, 100, 0), "ts", ts);
		assert_num(nth_at(evs, name, 101, 0), "ts", ts);
	}
	check_gloo_calls(evs, 100, 101, 101, 102);
	yajl_val job_info = get(get(doc, "otherData"), "job");
	assert_non_null(strstr(get_str(job_info, "clock"), "Unix wall time, each trace by its recorded wall clock offset (2 hosts)"));
	assert_num(doc, "baseTimeNanoseconds", "1700000000000000000");
	yajl_tree_free(doc);
	free(text);
}

/* ---- one file, two ranks and their launcher ------------------------------------------ */

static void test_merged(void **state)
{
	(void)state;
	struct tb_job job = {.ranks = 2, .steps = STEPS, .slow_rank = 1, .slow_ms = 20,
			     .killed_rank = -1, .merged = 1};
	char *text;
	yajl_val doc = export_job("merged", &job, &text);
	struct evlist evs = events_of(doc);
	/* ranks 0 and 1 are pids 51 and 52; the launcher 50 comes last */
	assert_string_equal(meta_name(evs, "process_name", 51, 0), "rank 0 (pid 51, host h0)");
	assert_string_equal(meta_name(evs, "process_name", 52, 0), "rank 1 (pid 52, host h0)");
	assert_string_equal(meta_name(evs, "process_name", 50, 0), "launcher (pid 50, host h0)");
	assert_int_equal(meta_sort(evs, "process_sort_index", 51, 0), 0);
	assert_int_equal(meta_sort(evs, "process_sort_index", 52, 0), 1);
	assert_int_equal(meta_sort(evs, "process_sort_index", 50, 0), 2);
	/* each rank's events once, at its own process: the part filter */
	assert_int_equal(count_ph(evs, "X"), 2 * 4 * STEPS);
	assert_int_equal(count_at(evs, "X", "matmul", 51), STEPS);
	assert_int_equal(count_at(evs, "X", "matmul", 52), STEPS);
	assert_int_equal(count_at(evs, "X", "matmul", 50), 0);
	/* rank 0's gloo thread is tid 52, rank 1's 53 */
	check_gloo_calls(evs, 51, 52, 52, 53);
	yajl_tree_free(doc);
	free(text);
}

/* ---- GPU ranks: the flows join the NCCL kernels --------------------------------------- */

static void test_gpu(void **state)
{
	(void)state;
	struct tb_job job = {.ranks = 2, .steps = STEPS, .gpu = 1, .slow_rank = 1, .slow_ms = 20,
			     .killed_rank = -1};
	char *text;
	yajl_val doc = export_job("gpu", &job, &text);
	struct evlist evs = events_of(doc);
	/* streams 7 and 8 are thread indexes 1 and 2: threads of the rank */
	assert_string_equal(meta_name(evs, "thread_name", 100, STREAM_TID + 1), "GPU 0 stream 7");
	assert_string_equal(meta_name(evs, "thread_name", 101, STREAM_TID + 2), "GPU 0 stream 8");
	const char *nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
	assert_int_equal(count_at(evs, "X", nccl, 100), STEPS);
	assert_int_equal(get_int(nth_at(evs, nccl, 101, 0), "tid"), STREAM_TID + 2);
	/* the NCCL kernel of step k starts at s + 5 + g, g = 50 on rank 0 and
	 * 70 on rank 1: one flow per step from rank 0's kernel to rank 1's */
	/* and an ac2g start on each of the two launches per step and rank */
	assert_int_equal(count_ph(evs, "s"), STEPS + 2 * 2 * STEPS);
	for (long long id = FLOW_ID0; id < FLOW_ID0 + STEPS; id++) {
		yajl_val ends[4];
		char ts0[32], ts1[32];
		assert_int_equal(flow_ends(evs, id, ends, 4), 2);
		yajl_val s = !strcmp(get_str(ends[0], "ph"), "s") ? ends[0] : ends[1];
		yajl_val f = s == ends[0] ? ends[1] : ends[0];
		snprintf(ts0, sizeof(ts0), "%lld.000", (100 * (id - FLOW_ID0) + 55) * 1000);
		snprintf(ts1, sizeof(ts1), "%lld.000", (100 * (id - FLOW_ID0) + 75) * 1000);
		assert_flow_end(s, "s", 100, STREAM_TID + 2, ts0);
		assert_flow_end(f, "f", 101, STREAM_TID + 2, ts1);
	}
	/* ac2g ids are the correlation ids made unique per part: rank 1's
	 * first launch (correlation 1) is 1 + 2^40 */
	int seen = 0;
	for (size_t i = 0; i < evs.len; i++) {
		const char *cat = get_str(evs.values[i], "cat");
		if (cat && !strcmp(cat, "ac2g") && get_int(evs.values[i], "pid") == 101 &&
		    get_int(evs.values[i], "id") == 1 + (1LL << 40))
			seen++;
	}
	assert_int_equal(seen, 2); /* its start and its end */
	yajl_tree_free(doc);
	free(text);
}

/* GPU ranks whose NCCL kernels were not recorded: GPU work, none of it
 * communication. Their nccl:all_reduce host calls only enqueued, so the
 * Distributed view takes no call of theirs (dist_calls_of()), and neither
 * do the flows: none is drawn, where the host calls were joined before. */
static void test_gpu_comm_lost(void **state)
{
	(void)state;
	struct tb_job job = {.ranks = 2, .steps = STEPS, .gpu = 1, .gpu_comm_lost = 1,
			     .slow_rank = 1, .slow_ms = 20, .killed_rank = -1};
	char *text;
	yajl_val doc = export_job("gpulost", &job, &text);
	struct evlist evs = events_of(doc);
	assert_int_equal(count_at(evs, "X", "gemm", 100), STEPS);
	assert_int_equal(count_at(evs, "X", "nccl:all_reduce", 100), STEPS);
	assert_int_equal(count_at(evs, "X", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 100), 0);
	yajl_val job_info = get(get(doc, "otherData"), "job");
	assert_non_null(job_info);
	assert_int_equal(get_int(job_info, "collective_flow_events"), 0);
	for (long long id = FLOW_ID0; id < FLOW_ID0 + STEPS; id++) {
		yajl_val ends[4];
		assert_int_equal(flow_ends(evs, id, ends, 4), 0);
	}
	yajl_tree_free(doc);
	free(text);
}

/* ---- --csv: a directory per part --------------------------------------------------------- */

/* Data rows of a CSV file (lines after the header). */
static size_t csv_rows(const char *dir, const char *part, const char *file)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s/%s", dir, part, file);
	char *text = tb_slurp(path, NULL);
	size_t n = 0;
	for (const char *p = text; *p; p++)
		n += *p == '\n';
	free(text);
	return n - 1;
}

/* Entries of dir whose names do not start with prefix: a job's CSV folders
 * that a hive-partitioned reader takes for another key. */
static int dir_entries_not(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0, all = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		all++;
		n += strncmp(e->d_name, prefix, strlen(prefix)) != 0;
	}
	closedir(d);
	assert_int_equal(all, 4); /* three ranks and the launcher */
	return n;
}

static void test_csv(void **state)
{
	(void)state;
	/* ranks 0 and 1 in one file with their launcher, and rank 2 of
	 * another job's files: three ranks and a launcher, taken together
	 * with --mixed-jobs (their world sizes differ) */
	struct tb_job merged = {.ranks = 2, .steps = STEPS, .slow_rank = -1, .killed_rank = -1,
				.merged = 1};
	struct tb_job three = {.ranks = 3, .steps = STEPS, .slow_rank = -1, .killed_rank = -1};
	char mpath[1][512], tpaths[3][512], dir[600], one[600];
	tb_job_write("csvjob", &merged, mpath);
	tb_job_write("csvthree", &three, tpaths);
	snprintf(dir, sizeof(dir), "%s/csvjob-dir", tb_dir());
	struct cmd_result r = EXPORT("--csv", mpath[0], tpaths[2], "-o", dir, "--no-summary",
				      "--mixed-jobs");
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	/* every part its own events: gloo:all_reduce is host Communication */
	assert_int_equal(csv_rows(dir, "rank=0", "communication.csv"), STEPS);
	assert_int_equal(csv_rows(dir, "rank=1", "communication.csv"), STEPS);
	assert_int_equal(csv_rows(dir, "rank=2", "communication.csv"), STEPS);
	/* the launcher's part: rank=-1, one hive key in every name */
	assert_int_equal(csv_rows(dir, "rank=-1", "communication.csv"), 0);
	assert_int_equal(dir_entries_not(dir, "rank="), 0);
	assert_int_equal(csv_rows(dir, "rank=1", "operators.csv"), 2 * STEPS);
	/* again: nothing overwritten without --force */
	r = EXPORT("--csv", mpath[0], tpaths[2], "-o", dir, "--no-summary", "--mixed-jobs");
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "exists; use --force");
	cmd_result_free(&r);
	r = EXPORT("--csv", mpath[0], tpaths[2], "-o", dir, "--force", "--mixed-jobs");
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	/* with the summary tables, of each rank alone */
	assert_true(csv_rows(dir, "rank=1", "summary-trace.csv") > 0);
	/* one file, several ranks or not, is one directory, as ever */
	snprintf(one, sizeof(one), "%s/csvjob-one", tb_dir());
	r = EXPORT("--csv", mpath[0], "-o", one, "--no-summary");
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	assert_int_equal(csv_rows(one, ".", "communication.csv"), 2 * STEPS);
}

/* ---- a damaged rank file -------------------------------------------------------------------- */

static void test_damaged(void **state)
{
	(void)state;
	struct tb_job job = {.ranks = 2, .steps = STEPS, .slow_rank = -1, .killed_rank = -1};
	char paths[2][512], out[600];
	tb_job_write("damaged", &job, paths);
	/* rank 1's file cut short: what comes before the cut is exported */
	size_t len;
	free(tb_slurp(paths[1], &len));
	assert_int_equal(truncate(paths[1], (off_t)(len - 16)), 0);
	snprintf(out, sizeof(out), "%s/damaged.json", tb_dir());
	struct cmd_result r = EXPORT("--chrome", paths[0], paths[1], "-o", out);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, paths[1]);
	assert_contains(r.err, "exported the");
	cmd_result_free(&r);
	char *text = tb_slurp(out, NULL);
	yajl_val doc = parse(text);
	yajl_val parts = get(get(get(doc, "otherData"), "job"), "parts");
	assert_true(YAJL_IS_NULL(get(YAJL_GET_ARRAY(parts)->values[0], "damage")));
	assert_true(YAJL_IS_OBJECT(get(YAJL_GET_ARRAY(parts)->values[1], "damage")));
	yajl_tree_free(doc);
	free(text);
}

/* ---- usage --------------------------------------------------------------------------------- */

static void test_usage(void **state)
{
	(void)state;
	struct tb_job job = {.ranks = 2, .steps = 1, .slow_rank = -1, .killed_rank = -1};
	char paths[2][512], out[600];
	tb_job_write("usage", &job, paths);
	struct cmd_result r = EXPORT("--chrome", paths[0], paths[1]);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "2 traces go to one file: name it with -o");
	cmd_result_free(&r);
	/* the same rank twice */
	snprintf(out, sizeof(out), "%s/twice.json", tb_dir());
	r = EXPORT("--chrome", paths[0], paths[0], "-o", out);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "the same rank 0 in");
	assert_one_line(r.err);
	cmd_result_free(&r);
	/* an output that is one of the inputs */
	r = EXPORT("--chrome", paths[0], paths[1], "-o", paths[1], "--force");
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "is the input");
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank_files), cmocka_unit_test(test_two_hosts),
		cmocka_unit_test(test_merged),	   cmocka_unit_test(test_gpu),
		cmocka_unit_test(test_gpu_comm_lost),
		cmocka_unit_test(test_csv),	   cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_usage),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
