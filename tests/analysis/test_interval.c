/*
 * test_interval.c - the interval algebra: merging, measure, overlap with a
 * window, intersection, union, and the running union of a start-ordered
 * stream clipped to a window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/store/interval.h"

#include <stdlib.h>

static void set_of(struct ivl_set *s, const uint64_t (*v)[2], size_t n)
{
	ivl_set_init(s);
	for (size_t i = 0; i < n; i++)
		ivl_set_add(s, v[i][0], v[i][1]);
	ivl_set_normalize(s);
	ivl_set_seal(s);
}

static void test_add_sorted_merges_overlaps_and_touches(void **state)
{
	(void)state;
	struct ivl_set s;
	ivl_set_init(&s);
	ivl_set_add_sorted(&s, 10, 20);
	ivl_set_add_sorted(&s, 15, 18); /* inside */
	ivl_set_add_sorted(&s, 18, 30); /* overlaps */
	ivl_set_add_sorted(&s, 30, 35); /* touches */
	ivl_set_add_sorted(&s, 40, 50);
	ivl_set_seal(&s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].start, 10);
	assert_int_equal(s.v[0].end, 35);
	assert_int_equal(s.v[1].start, 40);
	assert_int_equal(ivl_set_measure(&s), 25 + 10);
	ivl_set_free(&s);
}

static void test_normalize_any_order(void **state)
{
	(void)state;
	/* Paddle's picture: two threads of Operator ranges, merged */
	const uint64_t v[][2] = {{40, 60}, {0, 12}, {2, 15}, {20, 31}, {35, 39}, {23, 24}};
	struct ivl_set s;
	set_of(&s, v, 6);
	assert_int_equal(s.n, 4);
	assert_int_equal(ivl_set_measure(&s), 15 + 11 + 4 + 20);
	ivl_set_free(&s);
}

static void test_overlap_and_contains(void **state)
{
	(void)state;
	const uint64_t w[][2] = {{100, 200}, {300, 400}, {500, 600}};
	struct ivl_set s;
	set_of(&s, w, 3);
	assert_int_equal(ivl_set_overlap(&s, 0, 50), 0);
	assert_int_equal(ivl_set_overlap(&s, 0, 1000), 300);
	assert_int_equal(ivl_set_overlap(&s, 150, 350), 50 + 50);
	assert_int_equal(ivl_set_overlap(&s, 200, 300), 0); /* the gap exactly */
	assert_int_equal(ivl_set_overlap(&s, 310, 320), 10);
	assert_int_equal(ivl_set_overlap(&s, 550, 2000), 50);
	assert_int_equal(ivl_set_overlap(&s, 320, 310), 0); /* empty */
	assert_true(ivl_set_contains(&s, 100));
	assert_true(ivl_set_contains(&s, 200)); /* bounds count, for instants */
	assert_false(ivl_set_contains(&s, 250));
	assert_true(ivl_set_contains(&s, 600));
	assert_false(ivl_set_contains(&s, 601));
	assert_false(ivl_set_contains(&s, 0));
	ivl_set_free(&s);

	const uint64_t one[][2] = {{100, 200}};
	set_of(&s, one, 1);
	assert_int_equal(ivl_set_overlap(&s, 50, 150), 50);
	assert_int_equal(ivl_set_overlap(&s, 150, 250), 50);
	assert_int_equal(ivl_set_overlap(&s, 250, 350), 0);
	ivl_set_free(&s);
}

static void test_intersect_and_union(void **state)
{
	(void)state;
	const uint64_t a[][2] = {{0, 10}, {20, 30}, {40, 50}};
	const uint64_t b[][2] = {{5, 25}, {45, 100}};
	struct ivl_set x, y, i, u;
	set_of(&x, a, 3);
	set_of(&y, b, 2);
	ivl_set_intersect(&x, &y, &i);
	assert_int_equal(i.n, 3); /* [5,10) [20,25) [45,50) */
	assert_int_equal(ivl_set_measure(&i), 5 + 5 + 5);
	ivl_set_union(&x, &y, &u);
	assert_int_equal(u.n, 2); /* [0,30) [40,100) */
	assert_int_equal(ivl_set_measure(&u), 30 + 60);
	/* |a| + |b| = |a ∪ b| + |a ∩ b| */
	assert_int_equal(ivl_set_measure(&x) + ivl_set_measure(&y),
			 ivl_set_measure(&u) + ivl_set_measure(&i));
	ivl_set_free(&x);
	ivl_set_free(&y);
	ivl_set_free(&i);
	ivl_set_free(&u);
}

static void test_running_union_clipped(void **state)
{
	(void)state;
	const uint64_t w[][2] = {{100, 200}, {300, 400}};
	struct ivl_set win;
	set_of(&win, w, 2);
	struct ivl_union u;
	ivl_union_init(&u, &win);
	ivl_union_add(&u, 50, 150);  /* 50 inside */
	ivl_union_add(&u, 120, 180); /* merged: nothing new */
	ivl_union_add(&u, 170, 320); /* merged run [50,320): 100 + 20 inside */
	ivl_union_add(&u, 500, 600); /* outside */
	assert_int_equal(ivl_union_measure(&u), 120);
	ivl_union_add(&u, 550, 700);
	assert_int_equal(ivl_union_measure(&u), 120);

	ivl_union_init(&u, NULL); /* unclipped */
	ivl_union_add(&u, 0, 10);
	ivl_union_add(&u, 5, 20);
	ivl_union_add(&u, 30, 40);
	assert_int_equal(ivl_union_measure(&u), 30);
	/* the slow path on its own: a reversed range is empty, and closes the run */
	ivl_union_restart(&u, 60, 50);
	assert_int_equal(ivl_union_measure(&u), 30);
	ivl_union_add(&u, 60, 75); /* extends the empty run [60,60) */
	ivl_union_add(&u, 75, 80); /* touching: the same run */
	assert_int_equal(ivl_union_measure(&u), 50);
	ivl_union_restart(&u, 100, 110); /* a new run, the old one closed */
	assert_int_equal(ivl_union_measure(&u), 60);
	ivl_union_add(&u, 105, 120); /* inside it: extends it */
	assert_int_equal(ivl_union_measure(&u), 70);
	ivl_set_free(&win);
}

static int cmp_start(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Random streams: the running union equals the normalized set's overlap. */
static void test_running_union_random(void **state)
{
	(void)state;
	srand(7);
	for (int round = 0; round < 50; round++) {
		struct ivl_set all, win;
		ivl_set_init(&all);
		ivl_set_init(&win);
		for (int k = 0; k < 5; k++) {
			uint64_t s = (uint64_t)(rand() % 1000);
			ivl_set_add(&win, s, s + (uint64_t)(rand() % 200));
		}
		ivl_set_normalize(&win);
		ivl_set_seal(&win);
		uint64_t (*v)[2] = malloc(200 * sizeof(*v));
		for (int k = 0; k < 200; k++) {
			v[k][0] = (uint64_t)(rand() % 1000);
			v[k][1] = v[k][0] + (uint64_t)(rand() % 50);
			ivl_set_add(&all, v[k][0], v[k][1]);
		}
		ivl_set_normalize(&all);
		ivl_set_seal(&all);
		struct ivl_set clipped;
		ivl_set_intersect(&all, &win, &clipped);
		struct ivl_union u;
		ivl_union_init(&u, &win);
		qsort(v, 200, sizeof(*v), cmp_start); /* the raw intervals in start order */
		for (size_t i = 0; i < 200; i++)
			ivl_union_add(&u, v[i][0], v[i][1]);
		assert_int_equal(ivl_union_measure(&u), ivl_set_measure(&clipped));
		/* a cursor answers as the searches do, for starts that never decrease */
		struct ivl_cursor cur;
		ivl_cursor_init(&cur, &win);
		for (size_t i = 0; i < 200; i++) {
			assert_int_equal(ivl_cursor_overlap(&cur, v[i][0], v[i][1]),
					 ivl_set_overlap(&win, v[i][0], v[i][1]));
			assert_int_equal(ivl_cursor_contains(&cur, v[i][0]),
					 ivl_set_contains(&win, v[i][0]));
			assert_int_equal(ivl_cursor_contains(&cur, v[i][0]),
					 ivl_set_contains(&win, v[i][0]));
		}
		assert_true(ivl_set_measure(&clipped) <= ivl_set_measure(&win));
		free(v);
		ivl_set_free(&all);
		ivl_set_free(&win);
		ivl_set_free(&clipped);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_sorted_merges_overlaps_and_touches),
		cmocka_unit_test(test_normalize_any_order),
		cmocka_unit_test(test_overlap_and_contains),
		cmocka_unit_test(test_intersect_and_union),
		cmocka_unit_test(test_running_union_clipped),
		cmocka_unit_test(test_running_union_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
