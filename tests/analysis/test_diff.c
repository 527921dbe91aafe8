/*
 * test_diff.c - diff_tables (diff.h) on tables built by hand, whose deltas
 * are worked out below, and on the Model, Operator and Kernel views of two
 * tracebuild traces that differ in their Dataloader only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "formats/json/json_writer.h"
#include "lib/analysis/diff.h"
#include "lib/analysis/views/view.h"
#include "tests/analysis/tracebuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#define MS 1e6

/* ---- tables by hand --------------------------------------------------------- */

/* The columns of the Model, Operator, Memory Manipulation and UserDefined views. */
enum { C_NAME, C_CALLS, C_CPU, C_GPU = C_CPU + 5 };
static const struct tcol cpu_gpu_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 10, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	VIEW_CPU_COLUMNS,
	VIEW_GPU_COLUMNS,
};
/* The Kernel view's: GPU only, and columns diff leaves alone. */
enum { K_NAME, K_CALLS, K_GPU, K_BLOCKS = K_GPU + 5 };
static const struct tcol gpu_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 10, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	VIEW_GPU_COLUMNS,
	{"Mean Blocks per SM", "blocks_per_sm", TCOL_REAL, NULL, 0, NULL},
};

static struct table *model_like(void)
{
	return table_new("model", "Model Summary", cpu_gpu_cols,
			 sizeof(cpu_gpu_cols) / sizeof(cpu_gpu_cols[0]));
}

/* A row: cpu or gpu < 0 leaves the time unset, as views leave it for marks
 * and rows of no GPU work; the Avg next to the Total is garbage that diff
 * must not read. */
static struct trow *row(struct table *t, struct tpart *p, unsigned depth, const char *name,
			uint64_t calls, double cpu_ms, double gpu_ms)
{
	struct trow *r = tpart_add_row(t, p, depth);
	trow_text(r, C_NAME, name);
	trow_count(r, C_CALLS, calls);
	if (cpu_ms >= 0) {
		trow_time(r, C_CPU, cpu_ms * MS);
		trow_time(r, C_CPU + 1, 12345.0);
	}
	if (gpu_ms >= 0)
		trow_time(r, C_GPU, gpu_ms * MS);
	return r;
}

static struct table *diff(const struct table *a, double da, const struct table *b, double db,
			  unsigned top, int per_step)
{
	struct diff_side sa = {a, da, "a.gpdl"}, sb = {b, db, "b.gpdl"};
	struct table *d = diff_tables("model", "Model Summary", &sa, &sb, top, per_step);
	assert_non_null(d);
	assert_string_equal(d->id, "model");
	assert_string_equal(d->title, "Model Summary");
	return d;
}

static const struct trow *drow(const struct table *d, size_t i)
{
	assert_int_equal(d->nparts, 1);
	assert_true(i < d->parts[0].nrows);
	assert_int_equal(d->parts[0].rows[i].depth, 0);
	return &d->parts[0].rows[i];
}

static void cell_text(const struct trow *r, unsigned c, const char *want)
{
	assert_true(r->cells[c].set);
	assert_string_equal(r->cells[c].v.text, want);
}

static void cell_count(const struct trow *r, unsigned c, int64_t want)
{
	if (want < 0) {
		assert_false(r->cells[c].set);
		return;
	}
	assert_true(r->cells[c].set);
	assert_int_equal(r->cells[c].v.count, (uint64_t)want);
}

/* A time in ms; UNSET: the cell must be unset. Exact: every value here
 * is a whole number of ns. */
#define UNSET 1e300
#define NONE {UNSET, UNSET, UNSET, UNSET} /* a time of neither side */
static void cell_ms(const struct trow *r, unsigned c, double want)
{
	if (want == UNSET) {
		if (r->cells[c].set)
			fail_msg("column %u: %.17g, want unset", c, r->cells[c].v.ns);
		return;
	}
	assert_true(r->cells[c].set);
	if (r->cells[c].v.ns != want * MS)
		fail_msg("column %u: %.17g ns, want %.17g", c, r->cells[c].v.ns, want * MS);
}

static void cell_pct(const struct trow *r, unsigned c, double want)
{
	if (want == UNSET) {
		assert_false(r->cells[c].set);
		return;
	}
	assert_true(r->cells[c].set);
	if (r->cells[c].v.pct > want + 1e-9 || r->cells[c].v.pct < want - 1e-9)
		fail_msg("column %u: %.17g%%, want %.17g", c, r->cells[c].v.pct, want);
}

/* The diff columns: Name, Status, Calls A, Calls B, then A, B, Delta, Delta(%)
 * for CPU and for GPU. */
enum { D_NAME, D_STATUS, D_CALLS_A, D_CALLS_B, D_CPU, D_GPU = D_CPU + 4 };

struct want {
	const char *name, *status;
	int64_t calls_a, calls_b;
	double cpu[4], gpu[4]; /* A, B, Delta in ms; Delta(%) */
};

static void expect_row(const struct table *d, size_t i, const struct want *w, int has_cpu)
{
	const struct trow *r = drow(d, i);
	cell_text(r, D_NAME, w->name);
	cell_text(r, D_STATUS, w->status);
	cell_count(r, D_CALLS_A, w->calls_a);
	cell_count(r, D_CALLS_B, w->calls_b);
	unsigned gpu = has_cpu ? D_GPU : D_CPU;
	if (has_cpu) {
		for (unsigned k = 0; k < 3; k++)
			cell_ms(r, D_CPU + k, w->cpu[k]);
		cell_pct(r, D_CPU + 3, w->cpu[3]);
	}
	for (unsigned k = 0; k < 3; k++)
		cell_ms(r, gpu + k, w->gpu[k]);
	cell_pct(r, gpu + 3, w->gpu[3]);
}

static int has_note(const struct table *t, const char *want)
{
	for (size_t i = 0; i < t->nnotes; i++)
		if (strstr(t->notes[i], want))
			return 1;
	return 0;
}

static void assert_note(const struct table *t, const char *want)
{
	if (!has_note(t, want)) {
		for (size_t i = 0; i < t->nnotes; i++)
			print_message("note: %s\n", t->notes[i]);
		fail_msg("no note with '%s'", want);
	}
}

/*
 *        A (calls, CPU, GPU ms)       B
 * step   10, 1000, 100                10, 1300, 100     changed: +300 (30%), GPU +0
 *   fwd  10,  400,  80                10,  600,  60     changed: +200 (50%), GPU -20 (-25%)
 *   old  10,   50,   -                -                 vanished: -50 (-100%)
 *   same 10,   30,   -                10,   30,   -     same: 0 (0%), GPU "-"
 *   new  -                             5,  200,   -     new: +200, no %
 * Impact: step 300, then fwd and new at 200 (by key: "step > fwd" first),
 * old 50, same 0.
 */
static void test_deltas_and_statuses(void **state)
{
	(void)state;
	struct table *a = model_like(), *b = model_like();
	struct tpart *pa = table_add_part(a, NULL, NULL, NULL);
	struct tpart *pb = table_add_part(b, NULL, NULL, NULL);
	row(a, pa, 0, "step", 10, 1000, 100);
	row(a, pa, 1, "fwd", 10, 400, 80);
	row(a, pa, 1, "old", 10, 50, -1);
	row(a, pa, 1, "same", 10, 30, -1);
	row(b, pb, 0, "step", 10, 1300, 100);
	row(b, pb, 1, "same", 10, 30, -1);
	row(b, pb, 1, "new", 5, 200, -1);
	row(b, pb, 1, "fwd", 10, 600, 60);

	struct table *d = diff(a, 1, b, 1, 0, 0);
	assert_int_equal(d->ncols, 12);
	static const char *const keys[] = {"name",  "status", "calls_a",   "calls_b",
					   "cpu_a", "cpu_b",  "cpu_delta", "cpu_delta_pct",
					   "gpu_a", "gpu_b",  "gpu_delta", "gpu_delta_pct"};
	for (unsigned i = 0; i < 12; i++)
		assert_string_equal(d->cols[i].key, keys[i]);
	assert_int_equal(table_row_count(d), 5);
	const struct want w[] = {
		{"step", "changed", 10, 10, {1000, 1300, 300, 30}, {100, 100, 0, 0}},
		{"step > fwd", "changed", 10, 10, {400, 600, 200, 50}, {80, 60, -20, -25}},
		{"step > new", "new", -1, 5, {UNSET, 200, 200, UNSET}, NONE},
		{"step > old", "vanished", 10, -1, {50, UNSET, -50, -100}, NONE},
		{"step > same", "same", 10, 10, {30, 30, 0, 0}, NONE},
	};
	for (size_t i = 0; i < 5; i++)
		expect_row(d, i, &w[i], 1);
	assert_note(d, "Times in total: A ('a.gpdl'), B ('b.gpdl').");
	assert_false(has_note(d, "not shown"));
	table_free(d);

	/* the other way round: every delta changes sign, new and vanished swap */
	d = diff(b, 1, a, 1, 0, 0);
	const struct want back[] = {
		{"step", "changed", 10, 10, {1300, 1000, -300, -300.0 / 13}, {100, 100, 0, 0}},
		{"step > fwd", "changed", 10, 10, {600, 400, -200, -100.0 / 3}, {60, 80, 20, 100.0 / 3}},
		{"step > new", "vanished", 5, -1, {200, UNSET, -200, -100}, NONE},
	};
	for (size_t i = 0; i < 3; i++)
		expect_row(d, i, &back[i], 1);
	cell_text(drow(d, 3), D_STATUS, "new");
	table_free(d);
	table_free(a);
	table_free(b);
}

/* Negative times and percentages reach every rendering with their sign. */
static void test_render_negative(void **state)
{
	(void)state;
	struct table *a = model_like(), *b = model_like();
	row(a, table_add_part(a, NULL, NULL, NULL), 0, "op", 4, 50, 8);
	row(b, table_add_part(b, NULL, NULL, NULL), 0, "op", 4, 20, 10);
	struct table *d = diff(a, 1, b, 1, 0, 0);
	struct table_style st = {.unit = TIME_UNIT_MS};

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	table_render_text(d, f, &st);
	fclose(f);
	if (!strstr(buf, "op  ") || !strstr(buf, "50.00 / 20.00 / -30.00 / -60.00") ||
	    !strstr(buf, "8.00 / 10.00 / 2.00 / 25.00"))
		fail_msg("text:\n%s", buf);
	free(buf);

	f = open_memstream(&buf, &len);
	struct json_writer w;
	json_writer_init(&w, f, 0);
	table_render_json(d, &w, &st);
	fclose(f);
	char err[256];
	yajl_val doc = yajl_tree_parse(buf, err, sizeof(err));
	if (!doc)
		fail_msg("%s: %s", err, buf);
	const char *path[] = {"sections", NULL};
	yajl_val sections = yajl_tree_get(doc, path, yajl_t_array);
	assert_non_null(sections);
	const char *rows_path[] = {"rows", NULL};
	yajl_val rows = yajl_tree_get(YAJL_GET_ARRAY(sections)->values[0], rows_path, yajl_t_array);
	assert_int_equal(YAJL_GET_ARRAY(rows)->len, 1);
	yajl_val r = YAJL_GET_ARRAY(rows)->values[0];
	const char *k1[] = {"cpu_delta", NULL}, *k2[] = {"cpu_delta_ns", NULL},
		   *k3[] = {"cpu_delta_pct", NULL}, *k4[] = {"gpu_delta_ns", NULL};
	assert_true(YAJL_GET_DOUBLE(yajl_tree_get(r, k1, yajl_t_number)) == -30.0);
	assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(r, k2, yajl_t_number)), -30000000);
	assert_true(YAJL_GET_DOUBLE(yajl_tree_get(r, k3, yajl_t_number)) == -60.0);
	assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(r, k4, yajl_t_number)), 2000000);
	yajl_tree_free(doc);
	free(buf);
	table_free(d);
	table_free(a);
	table_free(b);
}

/*
 * Per step: A has 10 steps, B 20.
 *   x  A 10 calls, 1000 ms   B 20 calls, 2000 ms   100 / 100 ms a step: same
 *   y  A 10 calls,  500 ms   B 20 calls, 1600 ms    50 /  80: +30 (60%)
 *   z  A 10 calls,  100 ms   B 40 calls,  200 ms    10 /  10, but twice the
 *                                                   calls a step: changed, 0
 *   w  A 10 calls,    - GPU 50   B 20 calls, GPU 60    5 / 3 ms: -2 (-40%)
 */
static void test_per_step(void **state)
{
	(void)state;
	struct table *a = model_like(), *b = model_like();
	struct tpart *pa = table_add_part(a, NULL, NULL, NULL);
	struct tpart *pb = table_add_part(b, NULL, NULL, NULL);
	row(a, pa, 0, "x", 10, 1000, -1);
	row(a, pa, 0, "y", 10, 500, -1);
	row(a, pa, 0, "z", 10, 100, -1);
	row(a, pa, 0, "w", 10, -1, 50);
	row(b, pb, 0, "x", 20, 2000, -1);
	row(b, pb, 0, "y", 20, 1600, -1);
	row(b, pb, 0, "z", 40, 200, -1);
	row(b, pb, 0, "w", 20, -1, 60);
	struct table *d = diff(a, 10, b, 20, 0, 1);
	assert_int_equal(table_row_count(d), 4);
	const struct want w[] = {
		{"y", "changed", 10, 20, {50, 80, 30, 60}, NONE},
		{"w", "changed", 10, 20, NONE, {5, 3, -2, -40}},
		{"x", "same", 10, 20, {100, 100, 0, 0}, NONE},
		{"z", "changed", 10, 40, {10, 10, 0, 0}, NONE},
	};
	for (size_t i = 0; i < 4; i++)
		expect_row(d, i, &w[i], 1);
	assert_note(d, "Times per training step: A ('a.gpdl') over its 10 steps, B ('b.gpdl') "
		       "over its 20");
	assert_note(d, "calls and times per step equal");
	table_free(d);
	table_free(a);
	table_free(b);
}

/* --top N keeps the N rows of most impact and counts the others. Deltas
 * 5, -40, 30, 0, 20, new 7, 0 (ms): kept -40 and 30; left out 20, new 7, 5
 * (changed) and the two same rows. */
static void test_top(void **state)
{
	(void)state;
	struct table *a = model_like(), *b = model_like();
	struct tpart *pa = table_add_part(a, NULL, NULL, NULL);
	struct tpart *pb = table_add_part(b, NULL, NULL, NULL);
	static const char *const names[] = {"a", "b", "c", "d", "e", "g"};
	static const double before[] = {10, 50, 10, 10, 10, 3}, after[] = {15, 10, 40, 10, 30, 3};
	for (unsigned i = 0; i < 6; i++) {
		row(a, pa, 0, names[i], 1, before[i], -1);
		row(b, pb, 0, names[i], 1, after[i], -1);
	}
	row(b, pb, 0, "f", 1, 7, -1);
	struct table *d = diff(a, 1, b, 1, 2, 0);
	assert_int_equal(table_row_count(d), 2);
	cell_text(drow(d, 0), D_NAME, "b");
	cell_ms(drow(d, 0), D_CPU + 2, -40);
	cell_text(drow(d, 1), D_NAME, "c");
	cell_ms(drow(d, 1), D_CPU + 2, 30);
	assert_note(d, "5 more rows not shown, 3 of them new, vanished or changed; --top 0 shows "
		       "every row.");
	table_free(d);

	/* 0: all seven, largest first, the two of no change by name */
	d = diff(a, 1, b, 1, 0, 0);
	assert_int_equal(table_row_count(d), 7);
	static const char *const order[] = {"b", "c", "e", "f", "a", "d", "g"};
	for (unsigned i = 0; i < 7; i++)
		cell_text(drow(d, i), D_NAME, order[i]);
	cell_text(drow(d, 3), D_STATUS, "new");
	assert_false(has_note(d, "not shown"));
	table_free(d);

	/* a top larger than the rows: all of them, no note */
	d = diff(a, 1, b, 1, 100, 0);
	assert_int_equal(table_row_count(d), 7);
	assert_false(has_note(d, "not shown"));
	table_free(d);

	/* top 6: one left out, and it changed */
	d = diff(a, 1, b, 1, 6, 0);
	assert_note(d, "1 more row not shown, 0 of them new, vanished or changed");
	table_free(d);
	table_free(a);
	table_free(b);
}

/* Rows match by their path: "matmul" under fwd and under bwd are two rows,
 * and so is gemm under each of them. */
static void test_paths(void **state)
{
	(void)state;
	struct table *a = model_like(), *b = model_like();
	struct tpart *pa = table_add_part(a, NULL, NULL, NULL);
	struct tpart *pb = table_add_part(b, NULL, NULL, NULL);
	row(a, pa, 0, "fwd", 1, 300, -1);
	row(a, pa, 1, "matmul", 2, 100, -1);
	row(a, pa, 2, "gemm", 2, -1, 40);
	row(a, pa, 0, "bwd", 1, 500, -1);
	row(a, pa, 1, "matmul", 2, 200, -1);
	row(a, pa, 2, "gemm", 2, -1, 70);
	/* B in another order: matching does not depend on it */
	row(b, pb, 0, "bwd", 1, 560, -1);
	row(b, pb, 1, "matmul", 2, 260, -1);
	row(b, pb, 2, "gemm", 2, -1, 75);
	row(b, pb, 0, "fwd", 1, 300, -1);
	row(b, pb, 1, "matmul", 2, 100, -1);
	row(b, pb, 2, "gemm", 2, -1, 40);
	struct table *d = diff(a, 1, b, 1, 0, 0);
	assert_int_equal(table_row_count(d), 6);
	const struct want w[] = {
		{"bwd", "changed", 1, 1, {500, 560, 60, 12}, NONE},
		{"bwd > matmul", "changed", 2, 2, {200, 260, 60, 30}, NONE},
		{"bwd > matmul > gemm", "changed", 2, 2, NONE, {70, 75, 5, 100.0 / 14}},
		{"fwd", "same", 1, 1, {300, 300, 0, 0}, NONE},
		{"fwd > matmul", "same", 2, 2, {100, 100, 0, 0}, NONE},
		{"fwd > matmul > gemm", "same", 2, 2, NONE, {40, 40, 0, 0}},
	};
	for (size_t i = 0; i < 6; i++)
		expect_row(d, i, &w[i], 1);
	table_free(d);
	table_free(a);
	table_free(b);
}

/* Several parts: a row's key starts with its part's label (its title when
 * it has none); the same name in two parts is two rows. A part of B alone
 * brings new rows. */
static void test_parts(void **state)
{
	(void)state;
	struct table *a = model_like(), *b = model_like();
	/* (a new part may move the others: rows are added once all are made) */
	table_add_part(a, "Thread: 1 (main)", NULL, NULL);
	table_add_part(a, "Stream 7 on the first GPU", "GPU0", NULL);
	row(a, &a->parts[0], 0, "op", 3, 100, -1);
	row(a, &a->parts[1], 0, "op", 3, 50, -1);
	table_add_part(b, "Thread: 1 (main)", NULL, NULL);
	table_add_part(b, "Stream 7, another title", "GPU0", NULL);
	table_add_part(b, "Thread: 2 (worker)", NULL, NULL);
	row(b, &b->parts[0], 0, "op", 3, 100, -1);
	row(b, &b->parts[1], 0, "op", 3, 80, -1);
	row(b, &b->parts[2], 0, "op", 1, 10, -1);
	struct table *d = diff(a, 1, b, 1, 0, 0);
	assert_int_equal(table_row_count(d), 3);
	const struct want w[] = {
		{"GPU0 > op", "changed", 3, 3, {50, 80, 30, 60}, NONE},
		{"Thread: 2 (worker) > op", "new", -1, 1, {UNSET, 10, 10, UNSET}, NONE},
		{"Thread: 1 (main) > op", "same", 3, 3, {100, 100, 0, 0}, NONE},
	};
	for (size_t i = 0; i < 3; i++)
		expect_row(d, i, &w[i], 1);
	table_free(d);

	/* one part on one side only: the part still names the rows of both */
	struct table *one = model_like();
	row(one, table_add_part(one, "Thread: 1 (main)", NULL, NULL), 0, "op", 3, 90, -1);
	d = diff(one, 1, b, 1, 0, 0);
	assert_int_equal(table_row_count(d), 3);
	cell_text(drow(d, 0), D_NAME, "GPU0 > op");
	cell_text(drow(d, 0), D_STATUS, "new");
	/* a tie at 10 ms with the worker's new row: by name */
	cell_text(drow(d, 1), D_NAME, "Thread: 1 (main) > op");
	cell_ms(drow(d, 1), D_CPU + 2, 10);
	cell_text(drow(d, 2), D_NAME, "Thread: 2 (worker) > op");
	table_free(d);
	table_free(one);
	table_free(a);
	table_free(b);
}

/* A kernel-like table: GPU columns only, so the diff has no CPU columns. */
static void test_gpu_only(void **state)
{
	(void)state;
	unsigned n = sizeof(gpu_cols) / sizeof(gpu_cols[0]);
	struct table *a = table_new("kernel", "Kernel Summary", gpu_cols, n);
	struct table *b = table_new("kernel", "Kernel Summary", gpu_cols, n);
	assert_true(diff_view_supported(a));
	struct tpart *pa = table_add_part(a, NULL, NULL, NULL);
	struct tpart *pb = table_add_part(b, NULL, NULL, NULL);
	struct trow *r = tpart_add_row(a, pa, 0);
	trow_text(r, K_NAME, "gemm");
	trow_count(r, K_CALLS, 8);
	trow_time(r, K_GPU, 40 * MS);
	trow_real(r, K_BLOCKS, 3.5);
	r = tpart_add_row(b, pb, 0);
	trow_text(r, K_NAME, "gemm");
	trow_count(r, K_CALLS, 8);
	trow_time(r, K_GPU, 30 * MS);
	r = tpart_add_row(b, pb, 0);
	trow_text(r, K_NAME, "relu_kernel");
	trow_count(r, K_CALLS, 4);
	trow_time(r, K_GPU, 2 * MS);

	struct diff_side sa = {a, 4, "a"}, sb = {b, 2, "b"};
	struct table *d = diff_tables("kernel", "Kernel Summary", &sa, &sb, 0, 1);
	assert_int_equal(d->ncols, 8);
	assert_string_equal(d->cols[D_CPU].key, "gpu_a");
	assert_string_equal(d->cols[D_CPU + 3].key, "gpu_delta_pct");
	/* per step: gemm 10 -> 15 ms (+50%), relu_kernel new, 1 ms */
	const struct want w[] = {
		{"gemm", "changed", 8, 8, {0}, {10, 15, 5, 50}},
		{"relu_kernel", "new", -1, 4, {0}, {UNSET, 1, 1, UNSET}},
	};
	expect_row(d, 0, &w[0], 0);
	expect_row(d, 1, &w[1], 0);
	table_free(d);

	/* a table with neither total cannot be diffed */
	static const struct tcol plain[] = {
		{"Name", "name", TCOL_TEXT, NULL, 10, NULL},
		{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	};
	struct table *p = table_new("memory", "Memory Summary", plain, 2);
	assert_false(diff_view_supported(p));
	table_free(p);
	table_free(a);
	table_free(b);
}

/* Marks (calls, no time) count as no time: a mark in A that became a range
 * in B grew by the range, with no percentage; a mark on both sides whose
 * count changed is "changed" with no time at all. Empty tables say so. */
static void test_marks_and_empty(void **state)
{
	(void)state;
	struct table *a = model_like(), *b = model_like();
	struct tpart *pa = table_add_part(a, NULL, NULL, NULL);
	struct tpart *pb = table_add_part(b, NULL, NULL, NULL);
	row(a, pa, 0, "ckpt", 2, -1, -1)->flags |= TROW_MARK;
	row(a, pa, 0, "tick", 3, -1, -1)->flags |= TROW_MARK;
	row(b, pb, 0, "ckpt", 2, 7, -1);
	row(b, pb, 0, "tick", 5, -1, -1)->flags |= TROW_MARK;
	struct table *d = diff(a, 1, b, 1, 0, 0);
	const struct want w[] = {
		{"ckpt", "changed", 2, 2, {UNSET, 7, 7, UNSET}, NONE},
		{"tick", "changed", 3, 5, NONE, NONE},
	};
	expect_row(d, 0, &w[0], 1);
	expect_row(d, 1, &w[1], 1);
	table_free(d);
	table_free(a);
	table_free(b);

	a = model_like();
	b = model_like();
	d = diff(a, 1, b, 1, 10, 0);
	assert_int_equal(table_row_count(d), 0);
	assert_string_equal(d->empty, "No rows in A or in B.");
	table_free(d);
	table_free(a);
	table_free(b);
}

/* ---- real views --------------------------------------------------------------- */

static void load(struct analysis *a, const char *path)
{
	char err[512];
	analysis_init(a);
	if (analysis_load(a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(a);
}

static void test_default_views(void **state)
{
	(void)state;
	static const char *const want[] = {"model", "operator", "kernel", "memory-manipulation",
					   "userdefined"};
	assert_int_equal(diff_default_view_count, 5);
	const struct view *last = NULL;
	for (unsigned i = 0; i < 5; i++) {
		assert_string_equal(diff_default_views[i], want[i]);
		const struct view *v = view_find(want[i]);
		assert_non_null(v);
		assert_true(v > last); /* the registry's order */
		last = v;
	}
}

/* A: 3 steps, Dataloader 10 ms a step; B: 6 steps, Dataloader 20 ms a step;
 * all else equal (tracebuild.h). Per step, the Dataloader row is the only
 * change, +10 ms exactly; in total, B is twice A everywhere else. */
static void test_real_views(void **state)
{
	(void)state;
	const char *pa = tb_diff_trace("diff-a.gpdl", 100, 3, 10 * TB_MS);
	const char *pb = tb_diff_trace("diff-b.gpdl", 200, 6, 20 * TB_MS);
	struct analysis a, b;
	load(&a, pa);
	load(&b, pb);
	assert_int_equal(a.steps, 3);
	assert_int_equal(b.steps, 6);
	struct view_opts o = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_MS};
	const struct view *model = view_find("model");
	struct table *ta = model->build(model, &a, &o), *tb = model->build(model, &b, &o);
	assert_true(diff_view_supported(ta));
	struct diff_side sa = {ta, 3, pa}, sb = {tb, 6, pb};
	struct table *d = diff_tables("model", "Model Summary", &sa, &sb, 10, 1);
	/* ProfileStep, Dataloader, Forward, Backward, Optimization, Others */
	assert_int_equal(table_row_count(d), 6);
	const struct want dl = {"ProfileStep > Dataloader", "changed", 3, 6, {10, 20, 10, 100},
				{0, 0, 0, UNSET}};
	expect_row(d, 0, &dl, 1);
	for (size_t i = 1; i < 6; i++) {
		const struct trow *r = drow(d, i);
		cell_text(r, D_STATUS, "same");
		cell_ms(r, D_CPU + 2, 0);
		cell_ms(r, D_GPU + 2, 0);
	}
	/* the first of the ties, by name */
	const struct want step = {"ProfileStep", "same", 3, 6, {100, 100, 0, 0}, {4, 4, 0, 0}};
	expect_row(d, 1, &step, 1);
	table_free(d);

	/* in total: ProfileStep 300 -> 600 ms first, Dataloader 30 -> 120 (+300%) */
	sa.divisor = sb.divisor = 1;
	d = diff_tables("model", "Model Summary", &sa, &sb, 2, 0);
	assert_int_equal(table_row_count(d), 2);
	const struct want total = {"ProfileStep", "changed", 3, 6, {300, 600, 300, 100},
				   {12, 24, 12, 100}};
	expect_row(d, 0, &total, 1);
	const struct want fwd = {"ProfileStep > Forward", "changed", 3, 6, {180, 360, 180, 100},
				 {12, 24, 12, 100}};
	expect_row(d, 1, &fwd, 1);
	assert_note(d, "4 more rows not shown, 3 of them new, vanished or changed");
	table_free(d);
	table_free(ta);
	table_free(tb);

	/* the operator and kernel views: nothing changed per step */
	static const char *const others[] = {"operator", "kernel", "userdefined"};
	static const size_t nrows[] = {3, 1, 1};
	for (unsigned k = 0; k < 3; k++) {
		const struct view *v = view_find(others[k]);
		ta = v->build(v, &a, &o);
		tb = v->build(v, &b, &o);
		sa = (struct diff_side){ta, 3, pa};
		sb = (struct diff_side){tb, 6, pb};
		d = diff_tables(v->name, v->title, &sa, &sb, 0, 1);
		assert_int_equal(table_row_count(d), nrows[k]);
		for (size_t i = 0; i < nrows[k]; i++)
			cell_text(drow(d, i), D_STATUS, "same");
		if (k == 1) { /* gemm: 4 ms a step on both sides */
			const struct want gemm = {"gemm", "same", 3, 6, {0}, {4, 4, 0, 0}};
			expect_row(d, 0, &gemm, 0);
		}
		table_free(d);
		table_free(ta);
		table_free(tb);
	}
	analysis_free(&a);
	analysis_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deltas_and_statuses),
		cmocka_unit_test(test_render_negative),
		cmocka_unit_test(test_per_step),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_gpu_only),
		cmocka_unit_test(test_marks_and_empty),
		cmocka_unit_test(test_default_views),
		cmocka_unit_test(test_real_views),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
