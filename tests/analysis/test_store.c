/*
 * test_store.c - the event store: loading traces through the reader, the
 * sort (near order and far from it), nesting by time, marks, drops, damage,
 * and several files on one clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/store/store.h"
#include "lib/analysis/store/store_iter.h"
#include "tests/analysis/tracebuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint32_t one_track(struct store *s)
{
	store_init(s);
	uint32_t f = store_add_file(s, "mem");
	return store_add_track(s, STORE_TRACK_HOST, f, 0);
}

static int find_event(const struct store_track *t, uint64_t start, uint64_t dur)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->start[i] == start && t->dur[i] == dur)
			return (int)i;
	return -1;
}

/* Events given in end order, as the collector stores them. */
static void test_sort_and_nest(void **state)
{
	(void)state;
	struct store s;
	uint32_t tr = one_track(&s);
	uint32_t d = store_desc_intern(&s, "r", 1, TRACE_EV_USER_DEFINED);
	uint32_t m = store_desc_intern(&s, "m", 1, TRACE_EV_USER_DEFINED);
	store_append(&s, tr, 110, 10, d, 0);  /* c1 in b */
	store_append(&s, tr, 130, 0, m, TRACE_EVF_MARK); /* mark in b */
	store_append(&s, tr, 100, 50, d, 0);  /* b in a */
	store_append(&s, tr, 200, 20, d, 0);  /* b2 in a */
	store_append(&s, tr, 100, 200, d, 0); /* a: same start as b, longer */
	store_append(&s, tr, 400, 0, m, TRACE_EVF_MARK); /* top-level mark */
	store_append(&s, tr, 400, 0, m, TRACE_EVF_MARK); /* marks never contain marks */
	store_append(&s, tr, 250, 100, d, 0); /* partly overlaps a: not its child */
	store_finish(&s);
	const struct store_track *t = &s.tracks[tr];
	assert_int_equal(t->n, 8);
	for (size_t i = 1; i < t->n; i++)
		assert_true(t->start[i - 1] < t->start[i] ||
			    (t->start[i - 1] == t->start[i] && t->dur[i - 1] >= t->dur[i]));
	int a = find_event(t, 100, 200), b = find_event(t, 100, 50), c1 = find_event(t, 110, 10);
	int mk = find_event(t, 130, 0), b2 = find_event(t, 200, 20), p = find_event(t, 250, 100);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(t->parent[a], STORE_NONE);
	assert_int_equal(t->parent[b], (uint32_t)a);
	assert_int_equal(t->parent[c1], (uint32_t)b);
	assert_int_equal(t->parent[mk], (uint32_t)b);
	assert_int_equal(t->parent[b2], (uint32_t)a);
	assert_int_equal(t->parent[p], STORE_NONE);
	assert_int_equal(t->parent[t->n - 1], STORE_NONE);
	assert_int_equal(t->parent[t->n - 2], STORE_NONE);
	assert_true(store_ev_is_instant(t, (size_t)mk));
	assert_int_equal(s.files[0].events, 8);
	assert_int_equal(s.files[0].marks, 3);
	store_free(&s);
}

static int ref_cmp(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return (a[1] < b[1]) - (a[1] > b[1]);
}

/* Far from sorted: the fallback must give the same order as a reference. */
static void check_sort(uint64_t (*ev)[2], size_t n)
{
	struct store s;
	uint32_t tr = one_track(&s);
	uint32_t d = store_desc_intern(&s, "x", 1, TRACE_EV_OPERATOR);
	for (size_t i = 0; i < n; i++)
		store_append(&s, tr, ev[i][0], ev[i][1], d, 0);
	store_finish(&s);
	qsort(ev, n, sizeof(*ev), ref_cmp);
	const struct store_track *t = &s.tracks[tr];
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(t->start[i], ev[i][0]);
		assert_int_equal(t->dur[i], ev[i][1]);
		assert_true(t->parent[i] == STORE_NONE || t->parent[i] < i);
		if (t->parent[i] != STORE_NONE) {
			size_t p = t->parent[i];
			assert_true(t->start[p] <= t->start[i]);
			assert_true(store_ev_end(t, p) >= store_ev_end(t, i));
		}
	}
	store_free(&s);
}

static void test_sort_random_and_reversed(void **state)
{
	(void)state;
	size_t n = 200000;
	uint64_t(*ev)[2] = malloc(n * sizeof(*ev));
	srand(11);
	for (size_t i = 0; i < n; i++) {
		ev[i][0] = (uint64_t)(rand() % 100000);
		ev[i][1] = (uint64_t)(rand() % 50);
	}
	check_sort(ev, n);
	for (size_t i = 0; i < n; i++) { /* reversed: the worst case for insertion */
		ev[i][0] = (uint64_t)(n - i) * 10;
		ev[i][1] = 5;
	}
	check_sort(ev, n);
	for (size_t i = 0; i < n; i++) { /* all equal */
		ev[i][0] = 42;
		ev[i][1] = 1;
	}
	check_sort(ev, n);
	free(ev);
}

/* A deep training-loop shape in end order: stays on the insertion path. */
static void test_sort_end_order(void **state)
{
	(void)state;
	size_t n = 0, cap = 100000;
	uint64_t(*ev)[2] = malloc(cap * sizeof(*ev));
	uint64_t t = 1000;
	for (int step = 0; step < 1000; step++) {
		uint64_t s0 = t;
		for (int op = 0; op < 20; op++) {
			uint64_t o0 = t;
			for (int in = 0; in < 3; in++) {
				ev[n][0] = t;
				ev[n++][1] = 10;
				t += 11;
			}
			ev[n][0] = o0;
			ev[n++][1] = t - o0;
			t += 2;
		}
		ev[n][0] = s0;
		ev[n++][1] = t - s0;
		t += 5;
	}
	check_sort(ev, n);
	free(ev);
}

/* The details of event (start, dur): only events of odd duration have them. */
static uint64_t corr_of(uint64_t start, uint64_t dur)
{
	return start * 1000 + dur + 1;
}

/* Extras move with their events, whichever way the track is sorted. */
static void check_sort_extras(uint64_t (*ev)[2], size_t n)
{
	struct store s;
	uint32_t tr = one_track(&s);
	uint32_t d = store_desc_intern(&s, "k", 1, TRACE_EV_KERNEL);
	size_t with = 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i][1] % 2) {
			struct trace_event_ext x = {.correlation = corr_of(ev[i][0], ev[i][1]),
						    .grid = {(uint32_t)ev[i][1], 1, 1},
						    .block = {32, 1, 1}};
			store_append_ext(&s, tr, ev[i][0], ev[i][1], d, 0, &x);
			with++;
		} else {
			store_append(&s, tr, ev[i][0], ev[i][1], d, 0);
		}
	}
	store_finish(&s);
	const struct store_track *t = &s.tracks[tr];
	assert_int_equal(t->nextra, with);
	assert_int_equal(t->ndetails, with);
	struct store_extra_cursor xc = {0};
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(t->start[i - 1] < t->start[i] ||
				    (t->start[i - 1] == t->start[i] && t->dur[i - 1] >= t->dur[i]));
		const struct store_extra *x = store_extra_next(t, &xc, i);
		assert_ptr_equal(x, store_ev_extra(t, i));
		if (!(t->dur[i] % 2)) {
			assert_null(x);
			continue;
		}
		assert_non_null(x);
		assert_int_equal(x->corr, corr_of(t->start[i], t->dur[i]));
		assert_int_equal(store_extra_ext(t, x)->u.kernel.blocks, t->dur[i]);
		assert_int_equal(store_extra_ext(t, x)->u.kernel.threads, 32);
	}
	store_free(&s);
}

static void test_sort_carries_extras(void **state)
{
	(void)state;
	size_t n = 120000;
	uint64_t(*ev)[2] = malloc(600000 * sizeof(*ev));
	/* CUPTI's buffers: sorted runs of 5000 whose times interleave (kernels
	 * and copies of one stream): the merge sort */
	for (size_t i = 0; i < n; i++) {
		size_t run = i / 5000, k = i % 5000;
		ev[i][0] = (run / 2) * 100000 + k * 20 + (run % 2) * 7;
		ev[i][1] = 3 + (i % 4);
	}
	check_sort_extras(ev, n);
	/* end order, as the collector writes: insertion only */
	size_t m = 0;
	for (uint64_t t = 1000; m + 4 <= n; t += 100) {
		ev[m][0] = t + 10, ev[m++][1] = 21;
		ev[m][0] = t + 40, ev[m++][1] = 20;
		ev[m][0] = t, ev[m++][1] = 81;
	}
	check_sort_extras(ev, m);
	srand(5); /* random: the merges need half the track as scratch, within 65536 */
	for (size_t i = 0; i < n; i++) {
		ev[i][0] = (uint64_t)(rand() % 50000);
		ev[i][1] = (uint64_t)(rand() % 9);
	}
	check_sort_extras(ev, n);
	/* random and longer: the last merges would need more scratch than an
	 * eighth of the track, and the introsort finishes the job */
	n = 600000;
	for (size_t i = 0; i < n; i++) {
		ev[i][0] = (uint64_t)(rand() % 300000);
		ev[i][1] = (uint64_t)(rand() % 9);
	}
	check_sort_extras(ev, n);
	free(ev);
}

static void test_step_names(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int step;
	} cases[] = {
		{"ProfileStep", 1},   {"ProfileStep#12", 1}, {"ProfilerStep#0", 1},
		{"ProfilerStep", 1},  {"ProfileStep#", 0},   {"ProfileStep#1a", 0},
		{"ProfileSteps", 0},  {"profilestep#1", 0},  {"MyProfileStep#1", 0},
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(store_is_step_name(cases[i].name, strlen(cases[i].name)),
				 cases[i].step);
	struct store s;
	store_init(&s);
	uint32_t a = store_desc_intern(&s, "ProfilerStep#3", 14, TRACE_EV_USER_DEFINED);
	uint32_t b = store_desc_intern(&s, "ProfilerStep#3", 14, TRACE_EV_OPERATOR);
	assert_int_equal(s.descs[a].type, TRACE_EV_PROFILE_STEP);
	assert_int_equal(s.descs[b].type, TRACE_EV_OPERATOR); /* only UserDefined ranges */
	store_free(&s);
}

/* Streams, devices and details as the reader gives them. */
static void test_load_gpu_trace(void **state)
{
	(void)state;
	struct store s;
	char err[256];
	store_init(&s);
	if (store_load(&s, tb_gpu_trace(), err, sizeof(err)) != 0)
		fail_msg("%s", err);
	store_finish(&s);
	assert_int_equal(s.ndevices, 1);
	assert_true(s.devices[0].known);
	assert_int_equal(s.devices[0].props.sm_count, 4);
	assert_string_equal(store_name(&s, s.devices[0].name), "Test GPU");
	unsigned streams = 0;
	for (uint32_t ti = 0; ti < s.ntracks; ti++) {
		const struct store_track *t = &s.tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE) {
			assert_int_equal(t->dev, STORE_NONE);
			continue;
		}
		streams++;
		assert_int_equal(t->dev, 0);
		assert_int_equal(t->device, 0);
		assert_true(t->stream == 7 || t->stream == 13);
		if (t->stream != 7)
			continue;
		/* S0: gemm [2500), gemm [4500), DtoH [5900), gemm_grad [6400),
		 * adam_kernel [9500), fill [10600), Memset [10850), orphan [11200) */
		assert_int_equal(t->n, 8);
		assert_int_equal(t->nextra, 8);
		assert_int_equal(t->start[2], 5900);
		const struct store_ext *x = store_ev_ext(t, 2);
		assert_int_equal(x->u.copy.copy_kind, TRACE_COPY_DTOH);
		assert_int_equal(x->u.copy.bytes, 1024);
		assert_int_equal(x->u.copy.dst_kind, TRACE_MEM_PAGEABLE);
		assert_int_equal(store_ev_extra(t, 2)->corr, 9);
		x = store_ev_ext(t, 1);
		assert_int_equal(x->u.kernel.blocks, 64);
		assert_int_equal(x->u.kernel.threads, 128);
		assert_int_equal(x->u.kernel.smem, 8192);
		assert_int_equal(x->u.kernel.regs, 64);
		assert_int_equal(store_ev_extra(t, 7)->corr, 0); /* the orphan: details, no id */
	}
	assert_int_equal(streams, 2);
	store_free(&s);
}

static void test_iter_merges_tracks(void **state)
{
	(void)state;
	struct store s;
	store_init(&s);
	uint32_t f = store_add_file(&s, "mem");
	uint32_t t0 = store_add_track(&s, STORE_TRACK_HOST, f, 0);
	uint32_t t1 = store_add_track(&s, STORE_TRACK_HOST, f, 1);
	uint32_t d = store_desc_intern(&s, "x", 1, TRACE_EV_OPERATOR);
	for (uint64_t i = 0; i < 100; i++) {
		store_append(&s, t0, i * 20, 5, d, 0);
		store_append(&s, t1, i * 20 + 10, 5, d, 0);
	}
	store_append(&s, t1, 0, 7, d, 0); /* same start as t0's first, longer */
	store_finish(&s);
	struct store_iter it;
	store_iter_init(&it, &s, NULL, 0);
	uint32_t tr;
	size_t i, n = 0;
	uint64_t last = 0;
	while (store_iter_next(&it, &tr, &i)) {
		uint64_t st = s.tracks[tr].start[i];
		if (n == 0)
			assert_int_equal(tr, t1); /* longer first at a tie */
		assert_true(st >= last);
		last = st;
		n++;
	}
	assert_int_equal(n, 201);
	store_iter_free(&it);
	store_free(&s);
}

static const char *write_two_threads(const char *name, const char *host, uint64_t base)
{
	struct tb b;
	tb_open(&b, name, host, 77, base);
	tb_thread(&b, 0, 77, "main");
	tb_thread(&b, 1, 78, "worker");
	uint32_t step = tb_desc(&b, "ProfileStep#1", TRACE_EV_PROFILE_STEP);
	uint32_t ud = tb_desc(&b, "load", TRACE_EV_USER_DEFINED);
	uint32_t mk = tb_desc(&b, "tick", TRACE_EV_USER_DEFINED);
	tb_range(&b, 1, ud, base + 150, 100);
	tb_mark(&b, 0, mk, base + 120);
	tb_range(&b, 0, step, base + 100, 400);
	tb_event(&b, 0, ud, base + 600, 50, TRACE_EVF_OPEN_AT_EXIT);
	tb_event(&b, 0, mk, base + 700, 0, TRACE_EVF_UNBALANCED_POP);
	tb_counter(&b, base + 300, TRACE_CTR_CPU_PROCESS, 77, 150.0);
	tb_drops(&b, 1, 9);
	return tb_close(&b, base + 1000);
}

static void test_load_trace(void **state)
{
	(void)state;
	const char *path = write_two_threads("two.gpdl", "hostA", 1000);
	struct store s;
	char err[256];
	store_init(&s);
	if (store_load(&s, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	store_finish(&s);
	assert_int_equal(s.nfiles, 1);
	const struct store_file *f = &s.files[0];
	assert_string_equal(f->hostname, "hostA");
	assert_int_equal(f->pid, 77);
	assert_int_equal(f->events, 5);
	assert_int_equal(f->marks, 1);
	assert_int_equal(f->open_at_exit, 1);
	assert_int_equal(f->unbalanced_pops, 1);
	assert_int_equal(f->dropped, 9);
	assert_null(f->damage);
	assert_int_equal(f->start_ns, 1000);
	assert_int_equal(f->end_ns, 2000);
	assert_int_equal(s.ntracks, 2);
	int main_track = s.tracks[0].tid == 77 ? 0 : 1;
	const struct store_track *m = &s.tracks[main_track], *w = &s.tracks[!main_track];
	assert_string_equal(store_name(&s, m->name), "main");
	assert_string_equal(store_name(&s, w->name), "worker");
	assert_int_equal(w->dropped, 9);
	assert_int_equal(m->n, 4);
	assert_int_equal(m->start[0], 1100); /* the step first, its mark inside */
	assert_int_equal(store_ev_type(&s, m, 0), TRACE_EV_PROFILE_STEP);
	assert_string_equal(store_name(&s, s.descs[store_ev_desc(m, 0)].name), "ProfileStep#1");
	assert_int_equal(m->parent[1], 0);
	assert_int_equal(s.ncounters, 1);
	assert_true(s.counters[0].value == 150.0);
	assert_false(s.wall_clock);
	store_free(&s);
}

static void test_several_files_one_clock(void **state)
{
	(void)state;
	const char *a = write_two_threads("a.gpdl", "hostA", 1000);
	const char *b = write_two_threads("b.gpdl", "hostA", 5000);
	struct store s;
	char err[256];
	store_init(&s);
	assert_int_equal(store_load(&s, a, err, sizeof(err)), 0);
	assert_int_equal(store_load(&s, b, err, sizeof(err)), 0);
	store_finish(&s);
	assert_false(s.wall_clock); /* one host: its monotonic clock */
	assert_int_equal(s.ntracks, 4);
	assert_int_equal(s.files[1].start_ns, 5000);
	store_free(&s);

	const char *c = write_two_threads("c.gpdl", "hostB", 1000);
	store_init(&s);
	assert_int_equal(store_load(&s, a, err, sizeof(err)), 0);
	assert_int_equal(store_load(&s, c, err, sizeof(err)), 0);
	store_finish(&s);
	assert_true(s.wall_clock); /* two hosts: wall time */
	assert_int_equal(s.files[0].start_ns, 1700000000000000000ull + 1000);
	assert_int_equal(s.tracks[0].start[0] >= 1700000000000000000ull, 1);
	store_free(&s);
}

static void test_damaged_and_bad_files(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "long.gpdl", "h", 5, 0);
	tb_thread(&b, 0, 5, NULL);
	uint32_t d = tb_desc(&b, "r", TRACE_EV_USER_DEFINED);
	for (int k = 0; k < 40; k++) {
		for (int i = 0; i < 100; i++)
			tb_range(&b, 0, d, (uint64_t)(k * 100 + i) * 10, 5);
		tb_flush(&b);
	}
	const char *path = tb_close(&b, 100000);
	size_t len;
	char *bytes = tb_slurp(path, &len);
	const char *cut = tb_path("cut.gpdl");
	FILE *f = fopen(cut, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len / 2, f), len / 2);
	fclose(f);
	free(bytes);

	struct store s;
	char err[256];
	store_init(&s);
	assert_int_equal(store_load(&s, cut, err, sizeof(err)), 0);
	assert_non_null(s.files[0].damage);
	assert_true(s.files[0].damage_offset > 0 && s.files[0].damage_offset <= len / 2);
	assert_true(s.files[0].events > 0 && s.files[0].events < 4000);
	store_free(&s);

	const char *txt = tb_path("not-a-trace.txt");
	f = fopen(txt, "w");
	fputs("hello, not a trace\n", f);
	fclose(f);
	store_init(&s);
	assert_int_equal(store_load(&s, txt, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not-a-trace.txt"));
	assert_int_equal(store_load(&s, tb_path("missing.gpdl"), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "missing.gpdl"));
	assert_int_equal(s.nfiles, 0);
	store_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sort_and_nest),
		cmocka_unit_test(test_sort_random_and_reversed),
		cmocka_unit_test(test_sort_end_order),
		cmocka_unit_test(test_sort_carries_extras),
		cmocka_unit_test(test_step_names),
		cmocka_unit_test(test_load_gpu_trace),
		cmocka_unit_test(test_iter_merges_tracks),
		cmocka_unit_test(test_load_trace),
		cmocka_unit_test(test_several_files_one_clock),
		cmocka_unit_test(test_damaged_and_bad_files),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
