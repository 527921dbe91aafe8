/*
 * test_fold.c - a call that redispatches to itself (dropout's aten::div_
 * calling aten::div_), recorded as two nested ranges of one name, is one
 * call in every view that aggregates nested ranges: the store folds the
 * inner range into the outer (store.h), the walk the views share never
 * opens it (hostwalk.h). tracebuild.h's tb_fold_trace() draws the timeline;
 * every number below is worked out from it. Also: the same rule for a
 * Kineto JSON file imported on the fly, and the diff of two such traces.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/diff.h"
#include "lib/analysis/summary.h"
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 4
#define WINDOW ((10000ull * REPS + 1000) * TB_US)

/* Operator and UserDefined columns. */
enum { C_NAME, C_CALLS, C_CPU, C_CPU_AVG, C_CPU_MAX, C_CPU_MIN, C_CPU_RATIO, C_GPU };

static void prepare(struct analysis *a, const char *path)
{
	char err[512];
	analysis_init(a);
	if (analysis_load(a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(a);
}

static struct table *build(const char *view, const struct analysis *a, int detail, int sep)
{
	struct view_opts o = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_NS, .op_detail = detail,
			      .thread_sep = sep};
	const struct view *v = view_find(view);
	assert_non_null(v);
	return v->build(v, a, &o);
}

/* The row at the end of a name path ("dropout/div_/to") in part p, or NULL. */
static const struct trow *path_row(const struct table *t, size_t p, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	const char *names[8];
	unsigned n = 0;
	for (char *at = strtok(buf, "/"); at && n < 8; at = strtok(NULL, "/"))
		names[n++] = at;
	const struct tpart *part = &t->parts[p];
	unsigned depth = 0;
	for (size_t i = 0; i < part->nrows; i++) {
		const struct trow *r = &part->rows[i];
		if (r->depth < depth)
			return NULL; /* left the subtree of the path so far */
		if (r->depth != depth || strcmp(r->cells[C_NAME].v.text, names[depth]) != 0)
			continue;
		if (++depth == n)
			return r;
	}
	return NULL;
}

static const struct trow *must(const struct table *t, size_t p, const char *path)
{
	const struct trow *r = path_row(t, p, path);
	if (!r)
		fail_msg("no row '%s' in '%s'", path, t->title);
	return r;
}

/* Calls, then CPU total, max and min in us; GPU total in us (-1: unset). */
static void expect(const struct trow *r, uint64_t calls, double total, double max, double min,
		   double gpu)
{
	assert_int_equal(r->cells[C_CALLS].v.count, calls);
	assert_true(r->cells[C_CPU].set);
	assert_int_equal((int64_t)r->cells[C_CPU].v.ns, (int64_t)(total * TB_US));
	assert_int_equal((int64_t)r->cells[C_CPU_MAX].v.ns, (int64_t)(max * TB_US));
	assert_int_equal((int64_t)r->cells[C_CPU_MIN].v.ns, (int64_t)(min * TB_US));
	assert_int_equal((int64_t)r->cells[C_CPU_AVG].v.ns, (int64_t)(total / calls * TB_US));
	if (gpu >= 0)
		assert_int_equal((int64_t)r->cells[C_GPU].v.ns, (int64_t)(gpu * TB_US));
}

static void test_store_marks_folded(void **state)
{
	(void)state;
	struct analysis a;
	prepare(&a, tb_fold_trace("fold-store.gpdl", 10, REPS));
	const struct store *s = &a.store;
	unsigned folded = 0, host = 0;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		host += t->kind == STORE_TRACK_HOST;
		for (size_t i = 0; i < t->n; i++) {
			if (!store_ev_folded(t, i))
				continue;
			folded++;
			/* the only child of a range of its own name and type */
			assert_int_not_equal(t->parent[i], STORE_NONE);
			assert_int_equal(store_ev_desc(t, t->parent[i]), store_ev_desc(t, i));
		}
	}
	assert_int_equal(host, 1);
	/* a rep: the inner div_, the two inner add_, the inner zero_, the inner block */
	assert_int_equal(folded, 5 * REPS);
	analysis_free(&a);
}

static void test_operator_view(void **state)
{
	(void)state;
	struct analysis a;
	prepare(&a, tb_fold_trace("fold-op.gpdl", 10, REPS));
	for (int sep = 0; sep <= 1; sep++) {
		struct table *t = build("operator", &a, 0, sep);
		assert_int_equal(t->nparts, 1);
		/* div_: one call a dropout, the outer range's 600 us, and the GPU
		 * work the inner range launched; was 8 calls, 4400 us, more than
		 * dropout's own 4000 */
		expect(must(t, 0, "div_"), REPS, 600.0 * REPS, 600, 600, 50.0 * REPS);
		expect(must(t, 0, "dropout"), REPS, 1000.0 * REPS, 1000, 1000, 50.0 * REPS);
		assert_true(must(t, 0, "div_")->cells[C_CPU].v.ns <
			    must(t, 0, "dropout")->cells[C_CPU].v.ns);
		/* the CPU Ratio is the union of the outer ranges, as before */
		assert_true(fabs(must(t, 0, "div_")->cells[C_CPU_RATIO].v.pct -
				 100.0 * 600 * REPS * TB_US / WINDOW) < 1e-9);
		expect(must(t, 0, "to"), REPS, 200.0 * REPS, 200, 200, 0);
		/* a chain of three folds to one call: was 12 calls, 4800 us */
		expect(must(t, 0, "add_"), REPS, 600.0 * REPS, 600, 600, 0);
		/* one same-name child among two: both counted */
		expect(must(t, 0, "copy_"), 2 * REPS, 600.0 * REPS, 500, 100, 0);
		expect(must(t, 0, "fill_"), REPS, 100.0 * REPS, 100, 100, 0);
		/* a mark inside does not keep the inner zero_ from folding */
		expect(must(t, 0, "zero_"), REPS, 500.0 * REPS, 500, 500, 0);
		/* an operator around a user range of its name: another type */
		expect(must(t, 0, "mix"), REPS, 400.0 * REPS, 400, 400, 0);
		assert_int_equal(t->parts[0].nrows, 10);
		table_free(t);
	}
	analysis_free(&a);
}

static void test_op_detail(void **state)
{
	(void)state;
	struct analysis a;
	prepare(&a, tb_fold_trace("fold-detail.gpdl", 10, REPS));
	struct table *t = build("operator", &a, 1, 0);
	expect(must(t, 0, "dropout/div_"), REPS, 600.0 * REPS, 600, 600, 50.0 * REPS);
	/* the inner range's children are the call's */
	expect(must(t, 0, "dropout/div_/to"), REPS, 200.0 * REPS, 200, 200, 0);
	const struct trow *k = must(t, 0, "dropout/div_/div_kernel");
	assert_int_equal(k->cells[C_CALLS].v.count, REPS);
	assert_false(k->cells[C_CPU].set);
	assert_int_equal((int64_t)k->cells[C_GPU].v.ns, (int64_t)(50 * REPS * TB_US));
	assert_null(path_row(t, 0, "dropout/div_/div_"));
	/* div_ has two children: to, div_kernel */
	size_t at = (size_t)(must(t, 0, "dropout/div_") - t->parts[0].rows);
	assert_int_equal(t->parts[0].rows[at + 1].depth, 2);
	assert_int_equal(t->parts[0].rows[at + 2].depth, 2);
	assert_true(at + 3 == t->parts[0].nrows || t->parts[0].rows[at + 3].depth < 2);
	/* the chain's outer call alone, with nothing under it */
	expect(must(t, 0, "add_"), REPS, 600.0 * REPS, 600, 600, 0);
	assert_null(path_row(t, 0, "add_/add_"));
	expect(must(t, 0, "copy_/copy_"), REPS, 100.0 * REPS, 100, 100, 0);
	expect(must(t, 0, "copy_/fill_"), REPS, 100.0 * REPS, 100, 100, 0);
	assert_null(path_row(t, 0, "zero_/zero_"));
	/* the user range inside the operator of its name is a row of its own */
	expect(must(t, 0, "mix/mix"), REPS, 200.0 * REPS, 200, 200, 0);
	table_free(t);
	analysis_free(&a);
}

static void test_userdefined_view(void **state)
{
	(void)state;
	struct analysis a;
	prepare(&a, tb_fold_trace("fold-ud.gpdl", 10, REPS));
	struct table *t = build("userdefined", &a, 0, 0);
	/* was block 8 calls, 5600 us, with block > block > inner */
	expect(must(t, 0, "block"), REPS, 800.0 * REPS, 800, 800, -1);
	expect(must(t, 0, "block/inner"), REPS, 100.0 * REPS, 100, 100, -1);
	assert_null(path_row(t, 0, "block/block"));
	expect(must(t, 0, "mix"), REPS, 200.0 * REPS, 200, 200, -1);
	table_free(t);
	analysis_free(&a);
}

/* The Overview's calls of a type: its ranges, less the folded ones. */
static uint64_t overview_calls(const struct table *t, const char *type)
{
	for (size_t p = 0; p < t->nparts; p++)
		for (size_t i = 0; i < t->parts[p].nrows; i++) {
			const struct trow *r = &t->parts[p].rows[i];
			if (r->cells[0].set && strcmp(r->cells[0].v.text, type) == 0)
				return r->cells[1].v.count;
		}
	fail_msg("no Overview row '%s'", type);
	return 0;
}

static void test_overview(void **state)
{
	(void)state;
	struct analysis a;
	prepare(&a, tb_fold_trace("fold-overview.gpdl", 10, REPS));
	struct table *t = build("overview", &a, 0, 0);
	/* a rep: dropout, bernoulli_, div_, to, mul, add_, copy_ x 2, fill_,
	 * zero_, mix (was 15: two div_, three add_, two zero_) */
	assert_int_equal(overview_calls(t, "Operator"), 11 * REPS);
	/* block, inner, mix (was 4: two block) */
	assert_int_equal(overview_calls(t, "UserDefined"), 3 * REPS);
	table_free(t);
	analysis_free(&a);
}

/* The Operator Summary of each side, and their diff, in totals. */
static void test_diff(void **state)
{
	(void)state;
	struct analysis a, b;
	prepare(&a, tb_fold_trace("fold-a.gpdl", 10, REPS));
	prepare(&b, tb_fold_trace("fold-b.gpdl", 20, 2 * REPS));
	for (int detail = 0; detail <= 1; detail++) {
		struct table *ta = build("operator", &a, detail, 0);
		struct table *tb = build("operator", &b, detail, 0);
		struct diff_side sa = {ta, 1, "a"}, sb = {tb, 1, "b"};
		struct table *d = diff_tables("operator", "Operator Summary", &sa, &sb, 0, 0);
		const char *want = detail ? "dropout > div_" : "div_";
		const struct trow *r = NULL;
		int nested = 0;
		for (size_t i = 0; i < d->parts[0].nrows; i++) {
			const char *name = d->parts[0].rows[i].cells[0].v.text;
			if (strcmp(name, want) == 0)
				r = &d->parts[0].rows[i];
			nested += strcmp(name, "dropout > div_ > div_") == 0 ||
				  strcmp(name, "add_ > add_") == 0;
		}
		assert_non_null(r);
		assert_int_equal(nested, 0);
		/* Name, Status, Calls A, Calls B, CPU A, CPU B, CPU Delta */
		assert_int_equal(r->cells[2].v.count, REPS);
		assert_int_equal(r->cells[3].v.count, 2 * REPS);
		assert_int_equal((int64_t)r->cells[4].v.ns, (int64_t)(600 * REPS * TB_US));
		assert_int_equal((int64_t)r->cells[5].v.ns, (int64_t)(1200 * REPS * TB_US));
		assert_int_equal((int64_t)r->cells[6].v.ns, (int64_t)(600 * REPS * TB_US));
		table_free(d);
		table_free(ta);
		table_free(tb);
	}
	analysis_free(&a);
	analysis_free(&b);
}

/* A PyTorch profiler (Kineto) trace, imported on the fly: the same rule. */
static void test_kineto_import(void **state)
{
	(void)state;
	const char *path = tb_path("fold-kineto.json");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", f);
	for (int k = 0; k < 3; k++) {
		double s = 1000.0 + 1000.0 * k;
		fprintf(f,
			"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::dropout\", \"pid\": 7, "
			"\"tid\": 7, \"ts\": %.3f, \"dur\": 100},\n"
			"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::div_\", \"pid\": 7, "
			"\"tid\": 7, \"ts\": %.3f, \"dur\": 60},\n"
			"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::div_\", \"pid\": 7, "
			"\"tid\": 7, \"ts\": %.3f, \"dur\": 50},\n"
			"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::to\", \"pid\": 7, "
			"\"tid\": 7, \"ts\": %.3f, \"dur\": 20}%s\n",
			s, s + 10, s + 15, s + 20, k == 2 ? "" : ",");
	}
	fputs("]}\n", f);
	assert_int_equal(fclose(f), 0);
	struct analysis a;
	prepare(&a, path);
	struct table *t = build("operator", &a, 0, 0);
	expect(must(t, 0, "aten::div_"), 3, 180, 60, 60, -1); /* was 6 calls, 330 us */
	expect(must(t, 0, "aten::dropout"), 3, 300, 100, 100, -1);
	table_free(t);
	t = build("operator", &a, 1, 0);
	expect(must(t, 0, "aten::dropout/aten::div_/aten::to"), 3, 60, 20, 20, -1);
	assert_null(path_row(t, 0, "aten::dropout/aten::div_/aten::div_"));
	table_free(t);
	analysis_free(&a);
}

/* torch 1.13 writes whole microseconds: a short call of 1 us and the next
 * sibling call of the same name, of no length, right at its end, are two
 * calls, not a redispatch (the second starts after the first: ranges are
 * half-open). */
static void test_zero_length_siblings(void **state)
{
	(void)state;
	const char *path = tb_path("fold-zero.json");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", f);
	for (int k = 0; k < 3; k++)
		fprintf(f,
			"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 7, "
			"\"tid\": 7, \"ts\": %d, \"dur\": 50},\n"
			"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::resolve_conj\", "
			"\"pid\": 7, \"tid\": 7, \"ts\": %d, \"dur\": 1},\n"
			"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::resolve_conj\", "
			"\"pid\": 7, \"tid\": 7, \"ts\": %d, \"dur\": 0}%s\n",
			1000 + 100 * k, 1010 + 100 * k, 1011 + 100 * k, k == 2 ? "" : ",");
	fputs("]}\n", f);
	assert_int_equal(fclose(f), 0);
	struct analysis a;
	prepare(&a, path);
	struct table *t = build("operator", &a, 0, 0);
	expect(must(t, 0, "aten::resolve_conj"), 6, 3, 1, 0, -1);
	expect(must(t, 0, "aten::mm"), 3, 150, 50, 50, -1);
	table_free(t);
	analysis_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_marks_folded),
		cmocka_unit_test(test_operator_view),
		cmocka_unit_test(test_op_detail),
		cmocka_unit_test(test_userdefined_view),
		cmocka_unit_test(test_overview),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_kineto_import),
		cmocka_unit_test(test_zero_length_siblings),
	};
	return cmocka_run_group_tests(tests, NULL, tb_group_teardown);
}
