/*
 * test_job.c - the job (job.h): ranks from headers and from the process
 * table of a file holding several ranks, the part of a file each rank
 * loads (pid filter), the job's clock (one host: as recorded; several: wall
 * time, also for one rank loaded alone), exits learnt from the processes,
 * the same rank twice, JSON input, and the collective details the store
 * keeps for Communication events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/dist/job.h"
#include "tests/analysis/tracebuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS TB_MS

static void open_job(struct job *j, const char *const *paths, int n)
{
	char err[512];
	if (job_open(j, n, (char **)paths, 0, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

static void load_part(struct job *j, uint32_t p, struct analysis *a)
{
	char err[512];
	analysis_init(a);
	if (job_load(j, p, a, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

/* One rank per file: rank r's pid 100 + r, one thread, ProfileStep [s, s+10)
 * for s = 0, 10, 20 ms after start, and a Communication call per step. */
static const char *rank_file(const char *name, const char *host, int32_t rank, int32_t world,
			     uint64_t start, int64_t wall)
{
	struct tb b;
	tb_open_rank(&b, name, host, 100 + (uint32_t)rank, start, rank, world, wall);
	tb_thread(&b, 0, 100 + (uint32_t)rank, "main");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t ar = tb_desc(&b, "gloo:all_reduce", TRACE_EV_COMMUNICATION);
	for (int k = 0; k < 3; k++) {
		tb_range(&b, 0, step, start + (uint64_t)k * 10 * MS, 10 * MS);
		tb_comm(&b, 0, ar, start + (uint64_t)k * 10 * MS + 5 * MS, 2 * MS, "0", k, 4096,
			(uint32_t)world);
	}
	tb_process(&b, 100 + (uint32_t)rank, 1, start, start + 31 * MS, rank == 1 ? 137 : 0, rank,
		   world);
	return tb_close(&b, start + 40 * MS);
}

static void test_ranks_from_headers(void **state)
{
	(void)state;
	const char *paths[] = {rank_file("h1.gpdl", "a", 1, 2, 1000 * MS, 0),
			       rank_file("h0.gpdl", "a", 0, 2, 1000 * MS, 0)};
	struct job j;
	open_job(&j, paths, 2);
	assert_int_equal(j.nfiles, 2);
	assert_int_equal(j.nparts, 2);
	assert_int_equal(j.nranks, 2);
	assert_int_equal(j.nhosts, 1);
	assert_int_equal(j.wall_clock, 0);
	/* by rank, whatever the order given */
	assert_int_equal(j.ranks[0].rank, 0);
	assert_int_equal(j.ranks[0].file, 1);
	assert_int_equal(j.ranks[1].rank, 1);
	assert_int_equal(j.ranks[1].world_size, 2);
	assert_int_equal(j.ranks[1].local_rank, 1);
	assert_string_equal(j.ranks[1].backend, "gloo");
	assert_null(j.ranks[1].pids);
	assert_int_equal(j.ranks[1].pid, 101);
	/* not scanned: the exit is learnt when the rank loads */
	assert_int_equal(j.ranks[1].exit_status, TRACE_EXIT_UNKNOWN);
	struct analysis a;
	load_part(&j, 1, &a);
	assert_int_equal(a.store.nfiles, 1);
	assert_int_equal(a.store.files[0].rank, 1);
	assert_int_equal(a.store.files[0].pid, 101);
	assert_int_equal(a.events, 6);
	assert_int_equal(a.steps, 3);
	assert_int_equal(a.store.wall_clock, 0);
	assert_int_equal(a.store.tracks[0].start[0], 1000 * MS); /* as recorded */
	assert_int_equal(j.ranks[1].exit_status, 137);
	assert_int_equal(j.ranks[1].end_ns, 1031 * MS);
	/* the collective's details, kept for the Communication event only */
	const struct store_track *t = &a.store.tracks[0];
	assert_int_equal(t->ncomm, 3);
	assert_int_equal(t->ndetails, 0);
	const struct store_comm *c = store_ev_comm(t, 3); /* step 0, comm 0, step 1, comm 1 */
	assert_non_null(c);
	assert_null(store_ev_ext(t, 3));
	assert_null(store_ev_comm(t, 2));
	assert_int_equal(c->bytes, 4096);
	assert_int_equal(c->seq1, 2);
	assert_int_equal(c->group_size, 2);
	assert_int_equal(c->peer, -1);
	assert_string_equal(store_name(&a.store, c->pg), "0");
	assert_string_equal(store_name(&a.store, c->dtype), "float");
	analysis_free(&a);
	job_free(&j);
}

static void test_same_rank_twice(void **state)
{
	(void)state;
	const char *paths[] = {rank_file("d0.gpdl", "a", 0, 2, 0, 0),
			       rank_file("d1.gpdl", "a", 0, 2, 0, 0)};
	struct job j;
	char err[512];
	assert_int_equal(job_open(&j, 2, (char **)paths, 0, err, sizeof(err)), -1);
	char want[1200];
	snprintf(want, sizeof(want), "the same rank 0 in '%s' and '%s'", paths[0], paths[1]);
	assert_string_equal(err, want);
	assert_null(j.ranks);
	assert_int_equal(job_open(&j, 1, (char **)(const char *[]){tb_path("none.gpdl")}, 0, err,
				  sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "none.gpdl"));
}

/* Files of different jobs, refused with the names of two of them, unless
 * --mixed-jobs (JOB_OPEN_MIXED): ranks of world sizes 2 and 3; runs that
 * never overlapped (rank 0 ran [1000, 1040) ms, rank 1 from 9000 ms: wall
 * 1970-01-01 00:00:01 and 00:00:09 with offset 0). A rank of the world
 * size that no file holds is missing. */
static void test_not_one_job(void **state)
{
	(void)state;
	char err[1024], want[2048];
	struct job j;
	char *w2 = strdup(rank_file("w2-0.gpdl", "a", 0, 2, 1000 * MS, 0));
	char *w3 = strdup(rank_file("w3-2.gpdl", "a", 2, 3, 1000 * MS, 0));
	char *paths[] = {w3, w2};
	assert_int_equal(job_open(&j, 2, paths, 0, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "'%s' (rank 0 of 2) and '%s' (rank 2 of 3) are not of one job: their world sizes "
		 "differ; --mixed-jobs takes them together",
		 w2, w3);
	assert_string_equal(err, want);
	assert_int_equal(job_open(&j, 2, paths, JOB_OPEN_MIXED, err, sizeof(err)), 0);
	assert_int_equal(j.nranks, 2);
	assert_int_equal(j.world_size, 3);
	assert_int_equal(j.nmissing, 1);
	char words[64];
	job_missing_words(words, sizeof(words), &j);
	assert_string_equal(words, "rank 1");
	job_free(&j);

	char *early = strdup(rank_file("t-0.gpdl", "a", 0, 2, 1000 * MS, 0));
	char *late = strdup(rank_file("t-1.gpdl", "a", 1, 2, 9000 * MS, 0));
	char *runs[] = {early, late};
	assert_int_equal(job_open(&j, 2, runs, 0, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "'%s' (rank 0) and '%s' (rank 1) are not of one job: the first ended at 1970-01-01 "
		 "00:00:01 UTC, before the second began at 1970-01-01 00:00:09 UTC; --mixed-jobs "
		 "takes them together",
		 early, late);
	assert_string_equal(err, want);
	assert_int_equal(job_open(&j, 2, runs, JOB_OPEN_MIXED, err, sizeof(err)), 0);
	job_free(&j);

	/* two jobs of one world size at one time: their identities differ */
	struct tb b;
	tb_open_rank_job(&b, "j-0.gpdl", "a", 100, 1000 * MS, 0, 2, 0, "master:127.0.0.1:29500");
	char *ja = strdup(tb_close(&b, 1040 * MS));
	tb_open_rank_job(&b, "j-1.gpdl", "a", 101, 1000 * MS, 1, 2, 0, "master:127.0.0.1:29501");
	char *jb = strdup(tb_close(&b, 1040 * MS));
	char *jobs[] = {ja, jb};
	assert_int_equal(job_open(&j, 2, jobs, 0, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "'%s' (rank 0, job master:127.0.0.1:29500) and '%s' (rank 1, job "
		 "master:127.0.0.1:29501) are not of one job; --mixed-jobs takes them together",
		 ja, jb);
	assert_string_equal(err, want);
	assert_int_equal(job_open(&j, 2, jobs, JOB_OPEN_MIXED, err, sizeof(err)), 0);
	assert_string_equal(j.ranks[1].job_id, "master:127.0.0.1:29501");
	job_free(&j);
	free(ja);
	free(jb);

	/* ranks 0 and 3 of 6: 1, 2, 4 and 5 missing */
	char *r0 = strdup(rank_file("m-0.gpdl", "a", 0, 6, 1000 * MS, 0));
	char *r3 = strdup(rank_file("m-3.gpdl", "a", 3, 6, 1000 * MS, 0));
	char *some[] = {r0, r3};
	assert_int_equal(job_open(&j, 2, some, 0, err, sizeof(err)), 0);
	assert_int_equal(j.nmissing, 4);
	job_missing_words(words, sizeof(words), &j);
	assert_string_equal(words, "ranks 1, 2, 4, 5");
	job_free(&j);
	free(w2);
	free(w3);
	free(early);
	free(late);
	free(r0);
	free(r3);
}

/* Several hosts: wall time by each file's offset, for a rank alone too.
 * Rank 0 (host a) starts at 1000 ms on a clock 5 s behind wall time, rank 1
 * (host b) at 7000 ms on one 1 s ahead: both at wall 6000 ms + W. */
static void test_hosts_wall_clock(void **state)
{
	(void)state;
	const int64_t w = 1700000000000000000LL;
	const char *paths[] = {rank_file("w0.gpdl", "a", 0, 2, 1000 * MS, w + 5000 * (int64_t)MS),
			       rank_file("w1.gpdl", "b", 1, 2, 7000 * MS, w - 1000 * (int64_t)MS)};
	struct job j;
	open_job(&j, paths, 2);
	assert_int_equal(j.nhosts, 2);
	assert_int_equal(j.wall_clock, 1);
	for (uint32_t p = 0; p < 2; p++) {
		struct analysis a;
		load_part(&j, p, &a);
		assert_int_equal(a.store.wall_clock, 1);
		assert_int_equal(a.store.tracks[0].start[0], (uint64_t)w + 6000 * MS);
		assert_int_equal(a.store.files[0].start_ns, (uint64_t)w + 6000 * MS);
		assert_int_equal(j.ranks[p].end_ns, (uint64_t)w + 6031 * MS);
		analysis_free(&a);
	}
	/* the whole job as one program: on wall time too */
	struct analysis a;
	analysis_init(&a);
	char err[512];
	assert_int_equal(job_load_all(&j, &a, err, sizeof(err)), 0);
	assert_int_equal(a.store.nfiles, 2);
	assert_int_equal(a.steps, 6);
	assert_int_equal(a.window_ns, 30 * MS); /* both ranks' steps at the same wall time */
	analysis_free(&a);
	job_free(&j);
}

/* One file of a launcher (pid 50, rank -1) with two ranks: 51 (rank 0) and
 * its DataLoader worker 53, 52 (rank 1, killed at 25 ms); a process 60 the
 * table lists with a zeroed rank (world size 0): no rank. Each process has
 * a thread with one UserDefined range per ms of its pid % 10, so that a
 * part's events say which processes it holds; drops: 7 on 52's thread. */
static const char *merged_file(void)
{
	struct tb b;
	tb_open(&b, "merged.gpdl", "a", 50, 0);
	tb_process(&b, 51, 50, 1 * MS, 30 * MS, 0, 0, 2);
	tb_process(&b, 52, 50, 1 * MS, 25 * MS, TRACE_EXIT_KILLED, 1, 2);
	tb_process(&b, 53, 51, 2 * MS, 29 * MS, 0, 0, 2);
	struct trace_process zeroed = {60, 50, 3 * MS, 4 * MS, 0, 0, 0, 0, 0, 0};
	assert_int_equal(trace_writer_process(b.w, &zeroed), 0);
	static const uint32_t pids[] = {50, 51, 52, 53, 60};
	uint32_t d = tb_desc(&b, "r", TRACE_EV_USER_DEFINED);
	for (uint32_t i = 0; i < 5; i++) {
		tb_thread_of(&b, i, pids[i], pids[i] * 10, NULL);
		for (uint32_t k = 0; k < pids[i] % 10 + 1; k++)
			tb_range(&b, i, d, (5 + k) * MS, MS / 2);
	}
	tb_drops(&b, 2, 7);
	return tb_close(&b, 40 * MS);
}

static void test_ranks_from_processes(void **state)
{
	(void)state;
	const char *paths[] = {merged_file()};
	struct job j;
	open_job(&j, paths, 1);
	assert_int_equal(j.nparts, 3);
	assert_int_equal(j.nranks, 2);
	const struct job_rank *r0 = &j.ranks[0], *r1 = &j.ranks[1], *rest = &j.ranks[2];
	assert_int_equal(r0->rank, 0);
	assert_int_equal(r0->npids, 2);
	assert_int_equal(r0->pids[0], 51);
	assert_int_equal(r0->pids[1], 53);
	assert_int_equal(r0->exclude, 0);
	assert_int_equal(r0->pid, 51); /* the root, not its worker */
	assert_int_equal(r0->exit_status, 0);
	assert_int_equal(r0->world_size, 2);
	assert_string_equal(r0->backend, "gloo");
	assert_int_equal(r1->rank, 1);
	assert_int_equal(r1->npids, 1);
	assert_int_equal(r1->pid, 52);
	assert_int_equal(r1->exit_status, TRACE_EXIT_KILLED);
	assert_int_equal(r1->end_ns, 25 * MS);
	assert_int_equal(rest->rank, -1);
	assert_int_equal(rest->exclude, 1);
	assert_int_equal(rest->npids, 3);
	assert_int_equal(rest->pid, 50);

	/* events: pid % 10 + 1 ranges each: 50 -> 1, 51 -> 2, 52 -> 3, 53 -> 4, 60 -> 1 */
	static const uint64_t events[] = {2 + 4, 3, 1 + 1};
	static const uint64_t dropped[] = {0, 7, 0};
	for (uint32_t p = 0; p < 3; p++) {
		struct analysis a;
		load_part(&j, p, &a);
		assert_int_equal(a.events, events[p]);
		assert_int_equal(a.dropped, dropped[p]);
		assert_int_equal(a.store.files[0].rank, j.ranks[p].rank);
		assert_int_equal(a.store.files[0].pid, j.ranks[p].pid);
		analysis_free(&a);
	}
	char buf[32];
	assert_string_equal(job_part_name(buf, sizeof(buf), &j, 1), "rank 1");
	assert_string_equal(job_part_name(buf, sizeof(buf), &j, 2), "pid 50");
	/* all of it as one program */
	struct analysis a;
	analysis_init(&a);
	char err[512];
	assert_int_equal(job_load_all(&j, &a, err, sizeof(err)), 0);
	assert_int_equal(a.events, 1 + 2 + 3 + 4 + 1);
	assert_int_equal(a.dropped, 7);
	analysis_free(&a);
	job_free(&j);
}

/* A shell launcher's rank: the shell (pid 50) forked a subshell (pid 52)
 * that exec'd python 1 ms later, which was killed at 5 s. PROC holds pid 52
 * twice, its first image ended by the exec at 1001 ms with no exit; the
 * rank is the pid, its end and exit the python's (trace_ranks.h): killed at
 * 5000 ms, not "ended at 1001 ms". The same for a file of that rank alone.
 * Rank 0 (pid 51) is one image. */
static void test_exec_images(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "sh.gpdl", "h", 50, 1000 * MS);
	tb_process(&b, 51, 50, 1000 * MS, 9000 * MS, 0, 0, 2);
	tb_process(&b, 52, 50, 1000 * MS, 1001 * MS, TRACE_EXIT_UNKNOWN, 1, 2);
	tb_process(&b, 52, 50, 1001 * MS, 5000 * MS, TRACE_EXIT_KILLED, 1, 2);
	tb_thread_of(&b, 0, 50, 50, "sh");
	tb_thread_of(&b, 1, 51, 51, "python");
	tb_thread_of(&b, 2, 52, 52, "python");
	uint32_t step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	tb_range(&b, 1, step, 1100 * MS, 10 * MS);
	tb_range(&b, 2, step, 1100 * MS, 10 * MS);
	const char *paths[] = {tb_close(&b, 9001 * MS)};
	struct job j;
	open_job(&j, paths, 1);
	assert_int_equal(j.nranks, 2);
	const struct job_rank *r1 = &j.ranks[1];
	assert_int_equal(r1->rank, 1);
	assert_int_equal(r1->pid, 52);
	assert_int_equal(r1->npids, 1); /* one pid, two images */
	assert_int_equal(r1->end_ns, 5000 * MS);
	assert_int_equal(r1->exit_status, TRACE_EXIT_KILLED);
	assert_int_equal(j.ranks[2].npids, 2); /* the launcher's part leaves out 51 and 52 */
	struct analysis a;
	load_part(&j, 1, &a);
	assert_int_equal(a.steps, 1);
	analysis_free(&a);
	job_free(&j);

	/* rank 1's own file: its header names the rank; the end comes from
	 * its process table when it loads */
	tb_open_rank(&b, "sh-1.gpdl", "h", 52, 1000 * MS, 1, 2, 0);
	tb_process(&b, 52, 50, 1000 * MS, 1001 * MS, TRACE_EXIT_UNKNOWN, 1, 2);
	tb_process(&b, 52, 50, 1001 * MS, 5000 * MS, TRACE_EXIT_KILLED, 1, 2);
	tb_thread(&b, 0, 52, "python");
	step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	tb_range(&b, 0, step, 1100 * MS, 10 * MS);
	const char *one[] = {tb_close(&b, 5000 * MS)};
	open_job(&j, one, 1);
	load_part(&j, 0, &a);
	assert_int_equal(j.ranks[0].end_ns, 5000 * MS);
	assert_int_equal(j.ranks[0].exit_status, TRACE_EXIT_KILLED);
	analysis_free(&a);
	job_free(&j);

	/* the recorder may describe the shell's image last (its exit learnt
	 * at the end): still the python's end, not the last record's */
	tb_open_rank(&b, "sh-1r.gpdl", "h", 52, 1000 * MS, 1, 2, 0);
	tb_process(&b, 52, 50, 1001 * MS, 5000 * MS, TRACE_EXIT_KILLED, 1, 2);
	tb_process(&b, 52, 50, 1000 * MS, 1001 * MS, TRACE_EXIT_KILLED, 1, 2);
	tb_thread(&b, 0, 52, "python");
	step = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	tb_range(&b, 0, step, 1100 * MS, 10 * MS);
	const char *rev[] = {tb_close(&b, 5000 * MS)};
	open_job(&j, rev, 1);
	load_part(&j, 0, &a);
	assert_int_equal(j.ranks[0].end_ns, 5000 * MS);
	analysis_free(&a);
	job_free(&j);
}

/* A trace of no distributed run: one part of rank -1, the whole file; JSON
 * imported on the fly is one too. */
static void test_not_distributed(void **state)
{
	(void)state;
	const char *json = tb_path("k.json");
	FILE *f = fopen(json, "w");
	assert_non_null(f);
	fputs("{\"traceEvents\": [{\"name\": \"x\", \"ph\": \"X\", \"ts\": 1, \"dur\": 2, "
	      "\"pid\": 1, \"tid\": 1}]}\n",
	      f);
	fclose(f);
	const char *paths[] = {tb_perf_a(), json};
	struct job j;
	open_job(&j, paths, 2);
	assert_int_equal(j.nparts, 2);
	assert_int_equal(j.nranks, 0);
	assert_int_equal(j.ranks[0].rank, -1);
	assert_null(j.ranks[0].pids);
	assert_int_equal(j.ranks[0].file, 0);
	assert_int_equal(j.ranks[1].file, 1);
	struct analysis a;
	load_part(&j, 1, &a);
	assert_int_equal(a.events, 1);
	analysis_free(&a);
	job_free(&j);
}

/* What each_part saw: the parts in the order handed out, and the events of
 * each; fail_at: the part whose each() fails (-1 none). */
struct seen {
	uint32_t order[16];
	uint64_t events[16];
	unsigned n;
	int fail_at;
};

static int each_part(void *ctx, uint32_t p, struct analysis *a, char *err, size_t errlen)
{
	struct seen *s = ctx;
	assert_true(s->n < 16);
	s->order[s->n] = p;
	s->events[s->n++] = a->events;
	assert_int_equal(a->store.nfiles, 1);
	if ((int)p == s->fail_at) {
		snprintf(err, errlen, "part %u refused", p);
		return -1;
	}
	return 0;
}

/* job_load_each: every part in order, read ahead on 1, 2 and 4 threads as
 * job_load() reads it alone; a part that cannot be read, or whose each()
 * fails, stops it there with that part's message, and nothing after it is
 * handed out. */
static void test_load_each(void **state)
{
	(void)state;
	enum { N = 7 };
	const char *paths[N];
	char names[N][32];
	for (int r = 0; r < N; r++) {
		snprintf(names[r], sizeof(names[r]), "each%d.gpdl", r);
		paths[r] = rank_file(names[r], "a", r, N, 1000 * MS, 0);
	}
	static const char *const threads[] = {"1", "2", "4"};
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		setenv("GPDL_THREADS", threads[t], 1);
		struct job j;
		open_job(&j, paths, N);
		assert_int_equal(j.nparts, N);
		char err[512] = "";
		struct seen s = {.fail_at = -1};
		assert_int_equal(job_load_each(&j, N, each_part, &s, err, sizeof(err)), 0);
		assert_int_equal(s.n, N);
		for (unsigned i = 0; i < N; i++) {
			assert_int_equal(s.order[i], i);
			assert_int_equal(s.events[i], 6);
			assert_int_equal(j.ranks[i].exit_status, i == 1 ? 137 : 0); /* learnt */
		}
		/* the first parts only */
		s = (struct seen){.fail_at = -1};
		assert_int_equal(job_load_each(&j, 3, each_part, &s, err, sizeof(err)), 0);
		assert_int_equal(s.n, 3);
		/* each() fails at part 2 */
		s = (struct seen){.fail_at = 2};
		assert_int_equal(job_load_each(&j, N, each_part, &s, err, sizeof(err)), -1);
		assert_int_equal(s.n, 3);
		assert_string_equal(err, "part 2 refused");
		job_free(&j);
		/* part 4's file gone after the job was opened */
		open_job(&j, paths, N);
		char moved[600];
		snprintf(moved, sizeof(moved), "%s.moved", paths[4]);
		assert_int_equal(rename(paths[4], moved), 0);
		s = (struct seen){.fail_at = -1};
		err[0] = '\0';
		assert_int_equal(job_load_each(&j, N, each_part, &s, err, sizeof(err)), -1);
		assert_int_equal(rename(moved, paths[4]), 0);
		assert_int_equal(s.n, 4);
		assert_non_null(strstr(err, names[4]));
		job_free(&j);
	}
	unsetenv("GPDL_THREADS");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranks_from_headers),
		cmocka_unit_test(test_same_rank_twice),
		cmocka_unit_test(test_not_one_job),
		cmocka_unit_test(test_hosts_wall_clock),
		cmocka_unit_test(test_ranks_from_processes),
		cmocka_unit_test(test_exec_images),
		cmocka_unit_test(test_not_distributed),
		cmocka_unit_test(test_load_each),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
