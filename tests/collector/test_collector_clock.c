/*
 * test_collector_clock.c - the collector's clock (lib/collector/clock.c):
 * CLOCK_MONOTONIC from the TSC where the kernel keeps its clock on it.
 *
 * Every value lies between clock_gettime read just before and just after
 * (within the slack that the rate's error allows), a thread's values never
 * go back across its anchors, and once the rate is measured most reads
 * reuse the anchor (the TSC path, not clock_gettime). With GPROF_DL_TSC=0
 * the clock is clock_gettime.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "lib/collector/collector.h"
#include "common/clock.h"

#include <stdlib.h>
#include <string.h>

#define SLACK_NS 20000u /* the rate's error over one anchor is far less */

/* Reads the clock for ms milliseconds, checking every value; returns how
 * many reads kept the anchor they found. */
static uint64_t read_for(uint64_t ms, uint64_t *reads)
{
	uint64_t prev = 0, kept = 0, end = clock_now_ns() + ms * 1000000u;
	*reads = 0;
	for (;;) {
		uint64_t anchor = coll_clk.tsc;
		uint64_t a = clock_now_ns();
		uint64_t x = coll_clock_now();
		uint64_t b = clock_now_ns();
		assert_true(x >= prev);
		assert_true(x + SLACK_NS >= a);
		assert_true(x <= b + SLACK_NS);
		prev = x;
		kept += anchor != 0 && coll_clk.tsc == anchor;
		++*reads;
		if (b >= end)
			return kept;
	}
}

static void test_tsc_clock(void **state)
{
	(void)state;
	unsetenv("GPROF_DL_TSC");
	memset(&coll_tsc, 0, sizeof(coll_tsc));
	memset(&coll_clk, 0, sizeof(coll_clk));
	coll_clock_init();
	if (!coll_tsc.usable)
		skip(); /* the kernel's clocksource is not the TSC: clock_gettime only */
	uint64_t reads;
	read_for(80, &reads); /* the rate is measured after 50 ms */
	assert_true(atomic_load(&coll_tsc.mult) != 0);
	assert_true(atomic_load(&coll_tsc.span) != 0);
	uint64_t kept = read_for(20, &reads);
	/* an anchor serves about 1 ms of reads: at most one read in a hundred
	 * (a preempted one) takes a new one */
	assert_true(reads > 1000);
	assert_true(kept * 100 >= reads * 90);
}

static void test_tsc_off(void **state)
{
	(void)state;
	setenv("GPROF_DL_TSC", "0", 1);
	memset(&coll_tsc, 0, sizeof(coll_tsc));
	memset(&coll_clk, 0, sizeof(coll_clk));
	coll_clock_init();
	assert_int_equal(coll_tsc.usable, 0);
	uint64_t reads;
	assert_int_equal(read_for(60, &reads), 0); /* no anchor is ever kept */
	assert_int_equal(atomic_load(&coll_tsc.mult), 0);
	unsetenv("GPROF_DL_TSC");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tsc_clock),
		cmocka_unit_test(test_tsc_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
