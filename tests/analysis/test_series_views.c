/*
 * test_series_views.c - the Step and Timeline views (view_steps.c,
 * view_timeline.c), the series `gprof-dl report` plots: step times and the
 * Model phases inside each step, trace by trace and rank by rank, bucketed
 * when long; GPU busy and memory in use per bin, checked against the Device
 * and Memory views; and summary_files(), which keeps their rows whole in
 * JSON whatever --top. Every number is worked out here from the traces
 * drawn below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/dist/job.h"
#include "lib/analysis/summary.h"
#include "lib/analysis/views/view.h"
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS TB_MS
#define US 1000ull

static int64_t fact(const struct tpart *p, const char *key)
{
	for (size_t i = 0; i < p->nfacts; i++)
		if (strcmp(p->facts[i].key, key) == 0)
			return p->facts[i].value;
	fail_msg("no fact %s", key);
	return -1;
}

static void assert_ns(const struct trow *r, unsigned col, double want)
{
	assert_true(r->cells[col].set);
	if (fabs(r->cells[col].v.ns - want) > 1e-6)
		fail_msg("column %u: %.3f ns != %.3f ns", col, r->cells[col].v.ns, want);
}

/* the Step view's columns */
enum { NAME, STEP, STEPS, START, DURATION, DATALOADER, FORWARD, BACKWARD, OPTIMIZATION,
       OTHERS, COUNTED };

/* Trace a, pid 10 from 0: 5 steps of 10 ms back to back on main; in step k
 * (s = 10k ms): Dataloader [s, s+1) on the loader thread, Forward
 * [s+1, s+5) on main and [s+2, s+4) on the loader (inside it: the union is
 * 4 ms), Backward [s+5, s+8): Others 2 ms.
 * Trace b, pid 20 from 0: 3 steps of 20 ms from 100 ms; Forward [s, s+12),
 * Optimization [s+12, s+15): Others 5 ms. A UserDefined range on main that
 * covers the step is no phase. */
static const char *trace_a(void)
{
	struct tb b;
	tb_open(&b, "series-a.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	tb_thread(&b, 1, 11, "loader");
	uint32_t step = tb_desc(&b, "ProfileStep#", TRACE_EV_PROFILE_STEP);
	uint32_t dl = tb_desc(&b, "Dataloader", TRACE_EV_DATALOADER);
	uint32_t fw = tb_desc(&b, "Forward", TRACE_EV_FORWARD);
	uint32_t bw = tb_desc(&b, "Backward", TRACE_EV_BACKWARD);
	for (uint64_t k = 0; k < 5; k++) {
		uint64_t s = 10 * k * MS;
		tb_range(&b, 0, step, s, 10 * MS);
		tb_range(&b, 0, fw, s + 1 * MS, 4 * MS);
		tb_range(&b, 0, bw, s + 5 * MS, 3 * MS);
		tb_range(&b, 1, dl, s, 1 * MS);
		tb_range(&b, 1, fw, s + 2 * MS, 2 * MS);
	}
	return tb_close(&b, 50 * MS);
}

static const char *trace_b(void)
{
	struct tb b;
	tb_open(&b, "series-b.gpdl", "h", 20, 0);
	tb_thread(&b, 0, 20, "main");
	uint32_t step = tb_desc(&b, "ProfileStep#", TRACE_EV_PROFILE_STEP);
	uint32_t fw = tb_desc(&b, "Forward", TRACE_EV_FORWARD);
	uint32_t opt = tb_desc(&b, "Optimization", TRACE_EV_OPTIMIZATION);
	uint32_t user = tb_desc(&b, "my block", TRACE_EV_USER_DEFINED);
	for (uint64_t k = 0; k < 3; k++) {
		uint64_t s = (100 + 20 * k) * MS;
		tb_range(&b, 0, step, s, 20 * MS);
		tb_range(&b, 0, user, s, 20 * MS);
		tb_range(&b, 0, fw, s, 12 * MS);
		tb_range(&b, 0, opt, s + 12 * MS, 3 * MS);
	}
	return tb_close(&b, 160 * MS);
}

static void test_steps_two_traces(void **state)
{
	(void)state;
	const char *paths[] = {trace_a(), trace_b()};
	struct analysis a;
	tb_prepare(&a, paths, 2);
	struct view_opts o = {.unit = TIME_UNIT_MS};
	struct table *t = tb_view("steps", &a, &o);
	assert_int_equal(t->keep_all, TABLE_KEEP_DATA);
	assert_int_equal(t->nparts, 2);
	/* not ranks: a part per trace, in the order given */
	const struct tpart *pa = &t->parts[0], *pb = &t->parts[1];
	assert_non_null(strstr(pa->title, "series-a.gpdl"));
	assert_true(strncmp(pa->title, "Trace: ", 7) == 0);
	assert_non_null(strstr(pb->title, "series-b.gpdl"));
	assert_int_equal(fact(pa, "rank"), 0);
	assert_int_equal(fact(pb, "rank"), 1);
	assert_int_equal(fact(pa, "steps"), 5);
	assert_int_equal(fact(pb, "steps"), 3);
	assert_int_equal(fact(pa, "per_row"), 1);
	/* default skip 10, never more than half: 2 of a, 1 of b */
	assert_int_equal(fact(pa, "skipped"), 2);
	assert_int_equal(fact(pb, "skipped"), 1);
	assert_int_equal(pa->nrows, 5);
	assert_int_equal(pb->nrows, 3);
	for (size_t k = 0; k < 5; k++) {
		const struct trow *r = &pa->rows[k];
		char name[32];
		snprintf(name, sizeof(name), "step %zu", k);
		assert_string_equal(r->cells[NAME].v.text, name);
		assert_int_equal(r->cells[STEP].v.count, k);
		assert_int_equal(r->cells[STEPS].v.count, 1);
		assert_ns(r, START, (double)(10 * k * MS));
		assert_ns(r, DURATION, 10.0 * MS);
		assert_ns(r, DATALOADER, 1.0 * MS);
		assert_ns(r, FORWARD, 4.0 * MS);
		assert_ns(r, BACKWARD, 3.0 * MS);
		assert_ns(r, OPTIMIZATION, 0);
		assert_ns(r, OTHERS, 2.0 * MS);
		assert_int_equal(r->cells[COUNTED].v.count, k >= 2);
	}
	for (size_t k = 0; k < 3; k++) {
		const struct trow *r = &pb->rows[k];
		/* since the earliest event of both traces (a's, at 0) */
		assert_ns(r, START, (double)((100 + 20 * k) * MS));
		assert_ns(r, DURATION, 20.0 * MS);
		assert_ns(r, DATALOADER, 0);
		assert_ns(r, FORWARD, 12.0 * MS);
		assert_ns(r, BACKWARD, 0);
		assert_ns(r, OPTIMIZATION, 3.0 * MS);
		assert_ns(r, OTHERS, 5.0 * MS);
		assert_int_equal(r->cells[COUNTED].v.count, k >= 1);
	}
	table_free(t);

	/* --skip-steps 0 and 1: counted follows */
	for (unsigned skip = 0; skip < 2; skip++) {
		o.skip_set = 1;
		o.skip_steps = skip;
		t = tb_view("steps", &a, &o);
		assert_int_equal(fact(&t->parts[0], "skipped"), skip);
		assert_int_equal(fact(&t->parts[1], "skipped"), skip);
		for (size_t k = 0; k < 5; k++)
			assert_int_equal(t->parts[0].rows[k].cells[COUNTED].v.count, k >= skip);
		table_free(t);
	}
	analysis_free(&a);
}

/* 1,200 steps back to back; step k lasts (k % 7 + 1) ms with Forward its
 * first (k % 3 + 1) ms... at most its length: min(k % 3 + 1, k % 7 + 1). */
static uint64_t long_len(uint64_t k)
{
	return (k % 7 + 1) * MS;
}

static uint64_t long_fwd(uint64_t k)
{
	uint64_t f = (k % 3 + 1) * MS;
	return f < long_len(k) ? f : long_len(k);
}

static const char *trace_long(void)
{
	struct tb b;
	tb_open(&b, "series-long.gpdl", "h", 30, 0);
	tb_thread(&b, 0, 30, "main");
	uint32_t step = tb_desc(&b, "ProfileStep#", TRACE_EV_PROFILE_STEP);
	uint32_t fw = tb_desc(&b, "Forward", TRACE_EV_FORWARD);
	uint64_t at = 0;
	for (uint64_t k = 0; k < 1200; k++) {
		tb_range(&b, 0, step, at, long_len(k));
		tb_range(&b, 0, fw, at, long_fwd(k));
		at += long_len(k);
	}
	return tb_close(&b, at);
}

/* 1,200 steps, one part: at most 500 rows, so 3 steps a row, 400 rows,
 * each the mean of its 3 steps. */
static void test_steps_bucketed(void **state)
{
	(void)state;
	const char *paths[] = {trace_long()};
	struct analysis a;
	tb_prepare(&a, paths, 1);
	struct view_opts o = {.unit = TIME_UNIT_MS};
	struct table *t = tb_view("steps", &a, &o);
	assert_int_equal(t->nparts, 1);
	const struct tpart *p = &t->parts[0];
	assert_int_equal(fact(p, "steps"), 1200);
	assert_int_equal(fact(p, "per_row"), 3);
	assert_int_equal(fact(p, "skipped"), 10);
	assert_int_equal(p->nrows, 400);
	uint64_t at = 0;
	for (size_t row = 0; row < 400; row++) {
		const struct trow *r = &p->rows[row];
		double len = 0, fwd = 0;
		uint64_t start = at, counted = 0;
		for (uint64_t k = 3 * row; k < 3 * row + 3; k++) {
			len += (double)long_len(k);
			fwd += (double)long_fwd(k);
			counted += k >= 10;
			at += long_len(k);
		}
		char name[32];
		snprintf(name, sizeof(name), "steps %zu-%zu", 3 * row, 3 * row + 2);
		assert_string_equal(r->cells[NAME].v.text, name);
		assert_int_equal(r->cells[STEP].v.count, 3 * row);
		assert_int_equal(r->cells[STEPS].v.count, 3);
		assert_ns(r, START, (double)start);
		assert_ns(r, DURATION, len / 3);
		assert_ns(r, FORWARD, fwd / 3);
		assert_ns(r, OTHERS, (len - fwd) / 3);
		assert_int_equal(r->cells[COUNTED].v.count, counted);
	}
	int noted = 0;
	for (size_t i = 0; i < t->nnotes; i++)
		noted |= strstr(t->notes[i], "bucketed") != NULL;
	assert_true(noted);
	table_free(t);
	analysis_free(&a);
}

/* How often needle occurs in hay. */
static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Issue 25: --sorted-by sorts the steps, longest first (ties in step
 * order), a row per step (not bucketed), as many as a part may hold; in
 * start order without it. By duration: the 171 steps of 7 ms (k % 7 == 6:
 * 6, 13, ...) first, then those of 6 ms from step 5; by forward, 3 ms of
 * Forward first (k % 3 == 2 and k % 7 >= 2: 2, 5, 11, ...). */
static void test_steps_sorted(void **state)
{
	(void)state;
	const char *paths[] = {trace_long()};
	struct analysis a;
	tb_prepare(&a, paths, 1);
	struct view_opts o = {.unit = TIME_UNIT_MS, .sort = SORT_CPU_TOTAL, .sort_set = 1};
	struct table *t = tb_view("steps", &a, &o);
	const struct tpart *p = &t->parts[0];
	assert_int_equal(fact(p, "per_row"), 1);
	assert_int_equal(p->nrows, 500);
	assert_string_equal(p->rows[0].cells[NAME].v.text, "step 6");
	assert_string_equal(p->rows[1].cells[NAME].v.text, "step 13");
	assert_string_equal(p->rows[170].cells[NAME].v.text, "step 1196");
	assert_string_equal(p->rows[171].cells[NAME].v.text, "step 5");
	for (size_t i = 0; i < p->nrows; i++) {
		const struct trow *r = &p->rows[i];
		uint64_t k = r->cells[STEP].v.count;
		assert_int_equal(r->cells[STEPS].v.count, 1);
		assert_ns(r, DURATION, (double)long_len(k));
		if (i)
			assert_true(p->rows[i - 1].cells[DURATION].v.ns >= r->cells[DURATION].v.ns);
	}
	int noted = 0;
	for (size_t i = 0; i < t->nnotes; i++)
		noted |= strstr(t->notes[i], "Sorted by duration, longest first; a trace with more") !=
			 NULL;
	assert_true(noted);
	table_free(t);

	o.sort = SORT_FORWARD;
	t = tb_view("steps", &a, &o);
	p = &t->parts[0];
	assert_string_equal(p->rows[0].cells[NAME].v.text, "step 2");
	assert_string_equal(p->rows[1].cells[NAME].v.text, "step 5");
	assert_string_equal(p->rows[2].cells[NAME].v.text, "step 11");
	for (size_t i = 1; i < p->nrows; i++)
		assert_true(p->rows[i - 1].cells[FORWARD].v.ns >= p->rows[i].cells[FORWARD].v.ns);
	table_free(t);
	analysis_free(&a);

	/* summary --view steps --sorted-by duration --top 3: the 3 slowest */
	char *files[] = {(char *)paths[0]};
	struct summary_opts so = {.view = {.sort = SORT_DURATION, .sort_set = 1, .unit = TIME_UNIT_MS},
				  .fit = 1, .top = 3, .width = 100};
	summary_add_view(&so, view_find("steps"));
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(summary_files(1, files, &so, -1, f, "summarised"), 0);
	fclose(f);
	assert_int_equal(count(buf, "\nstep "), 3);
	const char *s6 = strstr(buf, "\nstep 6 "), *s13 = strstr(buf, "\nstep 13 "),
		   *s20 = strstr(buf, "\nstep 20 ");
	assert_non_null(s6);
	assert_true(s6 < s13 && s13 < s20);
	assert_non_null(strstr(buf, "497 more rows"));
	free(buf);
}

/* summary_files(): --top 5 cuts the text to 5 rows (and says so), never the
 * JSON (compact: one line); summary's defaults print neither view. */
static void test_summary_files_keeps_series(void **state)
{
	(void)state;
	char *paths[] = {(char *)trace_long()};
	struct summary_opts o = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS},
				 .fit = 1, .top = 5, .width = 100};
	summary_add_view(&o, view_find("steps"));
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(summary_files(1, paths, &o, -1, f, "summarised"), 0);
	fclose(f);
	assert_int_equal(count(buf, "\nsteps "), 5); /* a row per line, its name first */
	assert_non_null(strstr(buf, "395 more rows"));
	free(buf);

	o.format = SUMMARY_JSON;
	o.compact = 1;
	f = open_memstream(&buf, &len);
	assert_int_equal(summary_files(1, paths, &o, -1, f, "summarised"), 0);
	fclose(f);
	assert_int_equal(count(buf, "\"name\":\"steps "), 400);
	assert_int_equal(count(buf, "\n"), 1);
	free(buf);

	/* no view named: neither is a default */
	o.nviews = 0;
	o.compact = 0;
	f = open_memstream(&buf, &len);
	assert_int_equal(summary_files(1, paths, &o, -1, f, "summarised"), 0);
	fclose(f);
	assert_null(strstr(buf, "\"steps\": {"));
	assert_null(strstr(buf, "\"timeline\""));
	assert_non_null(strstr(buf, "\"perf\": {"));
	free(buf);

	/* a trace that cannot be read: 1 (after its message) */
	char *none[] = {(char *)tb_path("none.gpdl")};
	f = open_memstream(&buf, &len);
	assert_int_equal(summary_files(1, none, &o, -1, f, "summarised"), 1);
	fclose(f);
	free(buf);
}

/* GPU0 over [0, 100) ms (a UserDefined range on main spans it; no step, so
 * the window is the whole run): in bin k (1 ms from k ms), by k % 4:
 *   0: a kernel [k, k+1)                          busy 100 %
 *   1: kernels [k, k+0.5) on stream 7 and [k+0.25, k+0.5) on 13:  50 %
 *   2: a copy [k, k+1) (no kernel: the Device view counts no copy)  0 %
 *   3: a kernel [k+0.5, k+1)                                       50 %
 * so 50 ms busy, 50 % of the span, as the Device view says. Host memory,
 * levels (bytes in use) after each event: 0.5 ms +100 -> 100; 10.2 ms +300
 * -> 400; 10.4 ms -350 -> 50; 30.5 ms +1000 -> 1050; 30.6 ms -1000 -> 50;
 * 60 ms -40 -> 10. */
static const char *trace_timeline(void)
{
	struct tb b;
	tb_open(&b, "series-timeline.gpdl", "h", 40, 0);
	tb_thread(&b, 0, 40, "main");
	tb_stream(&b, 1, 0, 7);
	tb_stream(&b, 2, 0, 13);
	uint32_t user = tb_desc(&b, "run", TRACE_EV_USER_DEFINED);
	uint32_t kern = tb_desc(&b, "gemm", TRACE_EV_KERNEL);
	uint32_t copy = tb_desc(&b, "Memcpy HtoD", TRACE_EV_MEMCPY);
	uint32_t mem = tb_desc(&b, "[memory]", TRACE_EV_MEMORY);
	tb_range(&b, 0, user, 0, 100 * MS);
	tb_memory(&b, 0, mem, 500 * US, 100, -1, 0);
	tb_memory(&b, 0, mem, 10200 * US, 300, -1, 0);
	tb_memory(&b, 0, mem, 10400 * US, -350, -1, 0);
	tb_memory(&b, 0, mem, 30500 * US, 1000, -1, 0);
	tb_memory(&b, 0, mem, 30600 * US, -1000, -1, 0);
	tb_memory(&b, 0, mem, 60 * MS, -40, -1, 0);
	for (uint64_t k = 0; k < 100; k++) {
		uint64_t s = k * MS;
		switch (k % 4) {
		case 0:
			tb_kernel(&b, 1, kern, s, MS, 0, 1, 32, 1, 0, 0, 0);
			break;
		case 1:
			tb_kernel(&b, 1, kern, s, 500 * US, 0, 1, 32, 1, 0, 0, 0);
			tb_kernel(&b, 2, kern, s + 250 * US, 250 * US, 0, 1, 32, 1, 0, 0, 0);
			break;
		case 2:
			tb_copy(&b, 1, copy, s, MS, 0, TRACE_COPY_HTOD, TRACE_MEM_PAGEABLE,
				TRACE_MEM_DEVICE, 0, 4096);
			break;
		default:
			tb_kernel(&b, 1, kern, s + 500 * US, 500 * US, 0, 1, 32, 1, 0, 0, 0);
		}
	}
	return tb_close(&b, 100 * MS);
}

static int64_t level_at_bin(uint64_t k)
{
	if (k < 10)
		return 100;
	if (k == 10)
		return 400;
	if (k < 30)
		return 50;
	if (k == 30)
		return 1050;
	if (k <= 60) /* the bin at 60 ms: 50 carried into it, then 10 */
		return 50;
	return 10;
}

static void test_timeline(void **state)
{
	(void)state;
	const char *paths[] = {trace_timeline()};
	struct analysis a;
	tb_prepare(&a, paths, 1);
	assert_int_equal(a.from_steps, 0);
	struct view_opts o = {.unit = TIME_UNIT_MS};
	struct table *t = tb_view("timeline", &a, &o);
	assert_int_equal(t->keep_all, TABLE_KEEP_DATA);
	assert_int_equal(t->nparts, 2);
	const struct tpart *u = &t->parts[0], *m = &t->parts[1];
	assert_string_equal(u->title, "GPU0 utilization");
	assert_string_equal(u->label, "utilization GPU0");
	assert_string_equal(m->title, "Memory in use (Host)");
	assert_string_equal(m->label, "memory Host");
	assert_int_equal(fact(u, "bins"), 100);
	assert_int_equal(fact(u, "bin_ns"), MS);
	assert_int_equal(fact(m, "bins"), 100);
	assert_int_equal(u->nrows, 100);
	assert_int_equal(m->nrows, 100);
	static const double pattern[4] = {100, 50, 0, 50};
	double busy = 0;
	for (uint64_t k = 0; k < 100; k++) {
		const struct trow *r = &u->rows[k];
		assert_ns(r, 1, (double)(k * MS));
		if (fabs(r->cells[2].v.pct - pattern[k % 4]) > 1e-9)
			fail_msg("bin %llu: %.4f %% busy, not %.0f", (unsigned long long)k,
				 r->cells[2].v.pct, pattern[k % 4]);
		busy += r->cells[2].v.pct / 100 * (double)MS;
	}
	/* the bins add up to the device's busy time, the Device view's */
	analysis_types(&a);
	assert_int_equal(a.device_busy_ns[0], 50 * MS);
	assert_int_equal(fact(u, "busy_ns"), 50 * MS);
	assert_true(fabs(busy - (double)a.device_busy_ns[0]) < 1.0);
	struct table *d = tb_view("device", &a, &o);
	const struct trow *gpu = &d->parts[0].rows[2];
	assert_string_equal(gpu->cells[0].v.text, "GPU0");
	assert_true(fabs(gpu->cells[1].v.pct - 50.0) < 1e-9);
	table_free(d);

	/* memory: the most in use per bin, and the Memory view's peak */
	for (uint64_t k = 0; k < 100; k++)
		if (m->rows[k].cells[2].v.bytes != level_at_bin(k))
			fail_msg("bin %llu: %lld bytes in use, not %lld", (unsigned long long)k,
				 (long long)m->rows[k].cells[2].v.bytes, (long long)level_at_bin(k));
	struct table *mv = tb_view("memory", &a, &o);
	assert_int_equal(mv->nparts, 1);
	assert_int_equal(fact(&mv->parts[0], "peak_in_use_bytes"), 1050);
	assert_int_equal(fact(m, "peak_bytes"), 1050);
	table_free(mv);
	table_free(t);
	analysis_free(&a);
}

/* A span under 100 us: bins of 1 us, fewer than 100. A trace with neither
 * GPU work nor memory: an empty table that says so. */
static void test_timeline_short_and_empty(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "series-short.gpdl", "h", 50, 0);
	tb_thread(&b, 0, 50, "main");
	tb_stream(&b, 1, 0, 7);
	uint32_t kern = tb_desc(&b, "k", TRACE_EV_KERNEL);
	tb_kernel(&b, 1, kern, 0, 10 * US, 0, 1, 32, 1, 0, 0, 0);
	tb_kernel(&b, 1, kern, 30 * US, 10 * US, 0, 1, 32, 1, 0, 0, 0);
	const char *paths[] = {tb_close(&b, 40 * US)};
	struct analysis a;
	tb_prepare(&a, paths, 1);
	struct view_opts o = {.unit = TIME_UNIT_MS};
	struct table *t = tb_view("timeline", &a, &o);
	assert_int_equal(t->nparts, 1);
	assert_int_equal(fact(&t->parts[0], "bin_ns"), 1000);
	assert_int_equal(fact(&t->parts[0], "bins"), 40);
	assert_int_equal(t->parts[0].nrows, 40);
	for (size_t k = 0; k < 40; k++)
		assert_true(fabs(t->parts[0].rows[k].cells[2].v.pct -
				 ((k < 10 || k >= 30) ? 100.0 : 0.0)) < 1e-9);
	table_free(t);
	analysis_free(&a);

	const char *none[] = {tb_perf_nosteps()};
	tb_prepare(&a, none, 1);
	t = tb_view("timeline", &a, &o);
	assert_int_equal(table_row_count(t), 0);
	assert_non_null(t->empty);
	assert_non_null(strstr(t->empty, "No GPU work"));
	table_free(t);
	t = tb_view("steps", &a, &o);
	assert_int_equal(table_row_count(t), 0);
	assert_non_null(strstr(t->empty, "No training steps"));
	table_free(t);
	analysis_free(&a);
}

/* A training run of 30 steps of 10 ms, each allocating 1000 bytes 2 ms in
 * and freeing them 6 ms in: the memory timeline has bins of at most 1 ms,
 * 10 a step (not 100 bins of 3 ms over the run, 3.3 a step), and each
 * step's rise to 1000 and fall to 0 shows in its bins. */
static void test_timeline_bins_per_step(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "series-steps-mem.gpdl", "h", 60, 0);
	tb_thread(&b, 0, 60, "main");
	uint32_t mem = tb_desc(&b, "[memory]", TRACE_EV_MEMORY);
	uint32_t step[30];
	char name[32];
	for (unsigned k = 0; k < 30; k++) {
		snprintf(name, sizeof(name), "ProfileStep#%u", k);
		step[k] = tb_desc(&b, name, TRACE_EV_PROFILE_STEP);
		tb_range(&b, 0, step[k], k * 10 * MS, 10 * MS);
		tb_memory(&b, 0, mem, k * 10 * MS + 2 * MS, 1000, -1, 0);
		tb_memory(&b, 0, mem, k * 10 * MS + 6 * MS, -1000, -1, 0);
	}
	const char *paths[] = {tb_close(&b, 300 * MS)};
	struct analysis a;
	tb_prepare(&a, paths, 1);
	assert_int_equal(a.from_steps, 1);
	assert_int_equal(a.steps, 30);
	struct view_opts o = {.unit = TIME_UNIT_MS};
	struct table *t = tb_view("timeline", &a, &o);
	assert_int_equal(t->nparts, 1);
	const struct tpart *m = &t->parts[0];
	assert_int_equal(fact(m, "bin_ns"), MS);
	assert_int_equal(fact(m, "bins"), 300);
	assert_int_equal(m->nrows, 300);
	/* bins a step >= 10; in step 7, 0 bytes in its bins 0 and 1, 1000 in
	 * 2..6 (the bin at 6 ms: 1000 until the free), 0 in 7..9 */
	for (unsigned k = 0; k < 10; k++) {
		int64_t want = k >= 2 && k <= 6 ? 1000 : 0;
		if (m->rows[70 + k].cells[2].v.bytes != want)
			fail_msg("step 7, bin %u: %lld bytes, not %lld", k,
				 (long long)m->rows[70 + k].cells[2].v.bytes, (long long)want);
	}
	table_free(t);
	analysis_free(&a);
}

/* A 4-rank job read as one program (summary's other views): a part per
 * rank, in rank order whatever the order of the files. */
static void test_steps_job(void **state)
{
	(void)state;
	struct tb_job tj = {.ranks = 4, .steps = 6, .slow_rank = 2, .slow_ms = 20,
			    .killed_rank = -1, .stopped_rank = -1};
	char paths[8][512];
	unsigned n = tb_job_write("series-job", &tj, paths);
	assert_int_equal(n, 4);
	char *argv[4] = {paths[3], paths[1], paths[0], paths[2]};
	struct job j;
	char err[512];
	assert_int_equal(job_open(&j, 4, argv, 0, err, sizeof(err)), 0);
	struct analysis a;
	analysis_init(&a);
	assert_int_equal(job_load_all(&j, &a, err, sizeof(err)), 0);
	struct view_opts o = {.unit = TIME_UNIT_MS};
	struct table *t = tb_view("steps", &a, &o);
	assert_int_equal(t->nparts, 4);
	for (unsigned r = 0; r < 4; r++) {
		char want[32];
		snprintf(want, sizeof(want), "Rank %u", r);
		assert_string_equal(t->parts[r].title, want);
		assert_string_equal(t->parts[r].label, want);
		assert_int_equal(fact(&t->parts[r], "rank"), r);
		assert_int_equal(fact(&t->parts[r], "steps"), 6);
		assert_int_equal(t->parts[r].nrows, 6);
		/* every step lasts 100 ms */
		for (size_t k = 0; k < 6; k++)
			assert_ns(&t->parts[r].rows[k], DURATION, 100.0 * MS);
	}
	table_free(t);
	analysis_free(&a);
	job_free(&j);

	/* summary_files(): --view all reads the job rank by rank, the steps
	 * from the whole job: the parts in rank order */
	struct summary_opts so = {.view = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS},
				  .format = SUMMARY_JSON, .fit = 1, .top = -1, .compact = 1};
	for (unsigned i = 0; i < view_registry_count; i++)
		summary_add_view(&so, &view_registry[i]);
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(summary_files(4, argv, &so, -1, f, "summarised"), 0);
	fclose(f);
	const char *steps = strstr(buf, "\"steps\":{\"title\":\"Step Summary\"");
	assert_non_null(steps);
	const char *at = steps;
	for (unsigned r = 0; r < 4; r++) {
		char want[48];
		snprintf(want, sizeof(want), "\"label\":\"Rank %u\"", r);
		const char *next = strstr(at, want);
		assert_non_null(next);
		at = next;
	}
	assert_non_null(strstr(buf, "\"distributed\":{"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_two_traces),
		cmocka_unit_test(test_steps_bucketed),
		cmocka_unit_test(test_steps_sorted),
		cmocka_unit_test(test_summary_files_keeps_series),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_timeline_short_and_empty),
		cmocka_unit_test(test_timeline_bins_per_step),
		cmocka_unit_test(test_steps_job),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	tb_cleanup();
	return rc;
}
