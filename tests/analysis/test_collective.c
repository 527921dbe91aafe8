/*
 * test_collective.c - matching communication calls across ranks
 * (collective.h) on hand-made call lists: by sequence number, by ordinal in
 * start order per group, point-to-point by pair and direction; the waits;
 * a mismatched op counted and kept out of its match; the nccl-tests
 * factors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/dist/collective.h"

#include <math.h>
#include <string.h>

static void add(struct collective_set *c, uint32_t r, uint64_t start, uint64_t dur, int64_t seq,
		const char *op, const char *pg)
{
	struct collective_call k = {.start_ns = start, .dur_ns = dur, .seq1 = seq >= 0 ? (uint64_t)seq + 1 : 0,
			      .peer = -1, .step = -1};
	collective_add(c, r, &k, op, pg);
}

static const struct collective_call *call(const struct collective_set *c, uint32_t r, size_t i)
{
	assert_true(i < c->ranks[r].n);
	return &c->ranks[r].calls[i];
}

/* Three ranks, two all_reduces with sequence numbers, given out of order on
 * rank 2. Durations (ns): seq 0: 10, 4, 7 -> waits 6, 0, 3; seq 1: 5, 5, 9
 * -> 0, 0, 4. */
static void test_by_seq(void **state)
{
	(void)state;
	struct collective_set c;
	collective_set_init(&c, 3);
	add(&c, 0, 100, 10, 0, "gloo:all_reduce", "0");
	add(&c, 0, 200, 5, 1, "gloo:all_reduce", "0");
	add(&c, 1, 104, 4, 0, "gloo:all_reduce", "0");
	add(&c, 1, 201, 5, 1, "gloo:all_reduce", "0");
	add(&c, 2, 203, 9, 1, "gloo:all_reduce", "0"); /* later call first */
	add(&c, 2, 101, 7, 0, "gloo:all_reduce", "0");
	collective_match(&c);
	assert_int_equal(c.nmatches, 2);
	assert_int_equal(c.mismatches, 0);
	assert_string_equal(c.mismatch_note, "");
	static const uint64_t wait[3][2] = {{6, 0}, {0, 0}, {3, 4}};
	for (uint32_t r = 0; r < 3; r++)
		for (size_t i = 0; i < 2; i++) {
			assert_int_equal(call(&c, r, i)->wait_ns, wait[r][i]);
			assert_int_equal(call(&c, r, i)->match, i);
		}
	assert_int_equal(call(&c, 2, 0)->start_ns, 101); /* sorted */
	assert_int_equal(c.matches[0].members, 3);
	assert_int_equal(c.matches[0].min_ns, 4);
	assert_int_equal(c.matches[1].min_ns, 5);
	assert_string_equal(names_get(&c.names, c.matches[0].op), "gloo:all_reduce");
	assert_string_equal(names_get(&c.names, c.matches[0].pg), "0");
	collective_set_free(&c);
}

/* No sequence numbers: the n-th call of a group on one rank meets the n-th
 * of that group on the others, whatever the other groups do in between.
 * Rank 0: g1 a(10), g2 b(3), g1 c(8); rank 1: g2 b(5), g1 a(2), g1 c(8). */
static void test_by_ordinal(void **state)
{
	(void)state;
	struct collective_set c;
	collective_set_init(&c, 2);
	add(&c, 0, 0, 10, -1, "gloo:all_reduce", "g1");
	add(&c, 0, 20, 3, -1, "gloo:broadcast", "g2");
	add(&c, 0, 30, 8, -1, "gloo:all_gather", "g1");
	add(&c, 1, 1, 5, -1, "gloo:broadcast", "g2");
	add(&c, 1, 9, 2, -1, "gloo:all_reduce", "g1");
	add(&c, 1, 31, 8, -1, "gloo:all_gather", "g1");
	collective_match(&c);
	assert_int_equal(c.nmatches, 3);
	assert_int_equal(c.mismatches, 0);
	assert_int_equal(call(&c, 0, 0)->wait_ns, 8);  /* all_reduce: 10 - 2 */
	assert_int_equal(call(&c, 1, 1)->wait_ns, 0);
	assert_int_equal(call(&c, 0, 1)->wait_ns, 0);  /* broadcast: 3 vs 5 */
	assert_int_equal(call(&c, 1, 0)->wait_ns, 2);
	assert_int_equal(call(&c, 0, 2)->wait_ns, 0);  /* all_gather: equal */
	assert_int_equal(call(&c, 1, 2)->wait_ns, 0);
	assert_int_equal(call(&c, 0, 1)->match, call(&c, 1, 0)->match);
	collective_set_free(&c);
}

/* A rank whose call at a sequence number names another op: counted, said,
 * not matched; the match's fastest is among the others. A call no other
 * rank has waits nothing. */
static void test_mismatch_and_lone(void **state)
{
	(void)state;
	struct collective_set c;
	collective_set_init(&c, 3);
	c.ranks[2].rank = 7; /* messages name the rank, not the index */
	add(&c, 0, 0, 10, 4, "gloo:all_reduce", "0");
	add(&c, 1, 0, 6, 4, "gloo:all_reduce", "0");
	add(&c, 2, 0, 1, 4, "gloo:broadcast", "0");
	add(&c, 2, 50, 9, 5, "gloo:all_reduce", "0"); /* only rank 7 got this far */
	collective_match(&c);
	assert_int_equal(c.mismatches, 1);
	assert_string_equal(c.mismatch_note, "rank 7's call of sequence number 4 (in group '0') is "
					     "gloo:broadcast where rank 0's is gloo:all_reduce");
	assert_int_equal(c.nmatches, 2);
	assert_int_equal(c.matches[0].members, 2);
	assert_int_equal(c.matches[0].min_ns, 6); /* not the mismatched 1 */
	assert_int_equal(call(&c, 0, 0)->wait_ns, 4);
	assert_int_equal(call(&c, 2, 0)->mismatch, 1);
	assert_int_equal(call(&c, 2, 0)->wait_ns, 0);
	assert_int_equal(call(&c, 2, 1)->wait_ns, 0);
	assert_int_equal(c.matches[1].members, 1);
	collective_set_free(&c);
}

/* Point-to-point: a send meets the receive of the same transfer (same pair,
 * same direction, same ordinal), the op names differing as they must. */
static void test_p2p(void **state)
{
	(void)state;
	struct collective_set c;
	collective_set_init(&c, 2);
	struct collective_call k = {.step = -1};
	k = (struct collective_call){.start_ns = 0, .dur_ns = 5, .peer = 1, .step = -1};
	collective_add(&c, 0, &k, "gloo:send", "0");
	k = (struct collective_call){.start_ns = 10, .dur_ns = 3, .peer = 1, .step = -1};
	collective_add(&c, 0, &k, "gloo:recv", "0");
	k = (struct collective_call){.start_ns = 20, .dur_ns = 4, .peer = 1, .step = -1};
	collective_add(&c, 0, &k, "gloo:send", "0");
	k = (struct collective_call){.start_ns = 0, .dur_ns = 9, .peer = 0, .step = -1};
	collective_add(&c, 1, &k, "gloo:recv", "0");
	k = (struct collective_call){.start_ns = 9, .dur_ns = 7, .peer = 0, .step = -1};
	collective_add(&c, 1, &k, "gloo:send", "0");
	k = (struct collective_call){.start_ns = 21, .dur_ns = 4, .peer = 0, .step = -1};
	collective_add(&c, 1, &k, "gloo:recv", "0");
	collective_match(&c);
	assert_int_equal(c.mismatches, 0);
	assert_int_equal(c.nmatches, 3);
	assert_int_equal(call(&c, 0, 0)->match, call(&c, 1, 0)->match); /* 0 -> 1, first */
	assert_int_equal(call(&c, 0, 1)->match, call(&c, 1, 1)->match); /* 1 -> 0 */
	assert_int_equal(call(&c, 0, 2)->match, call(&c, 1, 2)->match); /* 0 -> 1, second */
	assert_int_equal(call(&c, 1, 0)->wait_ns, 4);
	assert_int_equal(call(&c, 1, 1)->wait_ns, 4);
	assert_int_equal(call(&c, 0, 1)->wait_ns, 0);
	assert_int_equal(call(&c, 0, 2)->wait_ns, 0);
	assert_int_equal(collective_p2p_direction("nccl:send"), 1);
	assert_int_equal(collective_p2p_direction("recv_v2"), 2);
	assert_int_equal(collective_p2p_direction("gloo:all_reduce"), 0);
	collective_set_free(&c);
}

static void test_nccl_tests_factors(void **state)
{
	(void)state;
	assert_true(fabs(collective_bus_factor("gloo:all_reduce", 4) - 1.5) < 1e-12);
	assert_true(fabs(collective_bus_factor("c_allreduce_sum", 2) - 1.0) < 1e-12);
	assert_true(fabs(collective_bus_factor("ncclDevKernel_AllReduce_RING_LL", 8) - 1.75) < 1e-12);
	assert_true(fabs(collective_bus_factor("gloo:all_gather", 4) - 0.75) < 1e-12);
	assert_true(fabs(collective_bus_factor("nccl:reduce_scatter", 4) - 0.75) < 1e-12);
	assert_true(fabs(collective_bus_factor("gloo:all_to_all", 2) - 0.5) < 1e-12);
	assert_true(fabs(collective_bus_factor("gloo:broadcast", 4) - 1.0) < 1e-12);
	assert_true(fabs(collective_bus_factor("gloo:reduce", 4) - 1.0) < 1e-12);
	assert_true(fabs(collective_bus_factor("gloo:all_reduce", 1) - 0.0) < 1e-12);
	assert_true(fabs(collective_algo_bytes("gloo:all_gather", 100, 4) - 400.0) < 1e-12);
	assert_true(fabs(collective_algo_bytes("gloo:reduce_scatter", 100, 4) - 100.0) < 1e-12);
	assert_true(fabs(collective_algo_bytes("gloo:all_reduce", 100, 4) - 100.0) < 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_seq),
		cmocka_unit_test(test_by_ordinal),
		cmocka_unit_test(test_mismatch_and_lone),
		cmocka_unit_test(test_p2p),
		cmocka_unit_test(test_nccl_tests_factors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
