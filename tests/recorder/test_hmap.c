/* The interning map: inserts, overwrites, deletes with back-shifting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/hmap.h"

static void test_put_get_overwrite(void **state)
{
	(void)state;
	struct hmap m;
	hmap_init(&m);
	assert_null(hmap_get(&m, 1, 2));
	for (uint64_t i = 0; i < 10000; i++)
		hmap_put(&m, i, i * 3, i + 100);
	assert_int_equal(m.len, 10000);
	for (uint64_t i = 0; i < 10000; i++) {
		uint64_t *v = hmap_get(&m, i, i * 3);
		assert_non_null(v);
		assert_int_equal(*v, i + 100);
		assert_null(hmap_get(&m, i, i * 3 + 1));
	}
	hmap_put(&m, 5, 15, 7);
	assert_int_equal(*hmap_get(&m, 5, 15), 7);
	assert_int_equal(m.len, 10000);
	hmap_free(&m);
}

static void test_delete_keeps_the_rest_reachable(void **state)
{
	(void)state;
	struct hmap m;
	hmap_init(&m);
	for (uint64_t i = 0; i < 5000; i++)
		hmap_put(&m, i, 0, i);
	for (uint64_t i = 0; i < 5000; i += 2)
		assert_int_equal(hmap_del(&m, i, 0), 1);
	assert_int_equal(hmap_del(&m, 0, 0), 0);
	assert_int_equal(m.len, 2500);
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t *v = hmap_get(&m, i, 0);
		if (i % 2)
			assert_true(v && *v == i);
		else
			assert_null(v);
	}
	hmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_overwrite),
		cmocka_unit_test(test_delete_keeps_the_rest_reachable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
