/* The /proc parsers of the CPU sampler and its arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "lib/recorder/cpu_sampler.h"

#include <unistd.h>

static void test_proc_stat_line(void **state)
{
	(void)state;
	uint64_t busy, total;
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	assert_int_equal(cpu_parse_proc_stat_line("cpu  100 5 50 800 20 3 2 1 7 0\n", &busy, &total), 0);
	assert_int_equal(busy, 100 + 5 + 50 + 3 + 2 + 1);
	assert_int_equal(total, busy + 800 + 20);
	assert_int_equal(cpu_parse_proc_stat_line("cpu0 1 2 3 4\n", &busy, &total), -1);
	assert_int_equal(cpu_parse_proc_stat_line("cpu  1 2\n", &busy, &total), -1);
}

static void test_pid_stat_with_nasty_comm(void **state)
{
	(void)state;
	uint64_t ticks, rss;
	/* A command name with spaces and a ')' must not shift the fields. */
	const char *line = "1234 (a b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 "
			   "11 22 33 44 20 0 1 0 5000 10000000 777 18446744073709551615\n";
	assert_int_equal(cpu_parse_pid_stat(line, &ticks, &rss), 0);
	assert_int_equal(ticks, 11 + 22 + 33 + 44);
	assert_int_equal(rss, 777);
	assert_int_equal(cpu_parse_pid_stat("garbage", &ticks, &rss), -1);
	assert_int_equal(cpu_parse_pid_stat("1 (x) S 1 2", &ticks, &rss), -1);
}

static void test_sample_own_process(void **state)
{
	(void)state;
	struct cpu_sampler s;
	struct cpu_sample out;
	pid_t self = getpid();
	cpu_sampler_init(&s);
	assert_int_equal(cpu_sampler_sample(&s, &self, 1, 1000000000ull, &out), 0);
	/* Burn CPU for a while: the process's share over the interval is > 0. */
	volatile double x = 0;
	for (long i = 0; i < 60000000L; i++)
		x += (double)i * 1e-9;
	assert_true(x > 0);
	/* 1 ms later: too short to measure in clock ticks, no sample */
	assert_int_equal(cpu_sampler_sample(&s, &self, 1, 1000000000ull + 1000000ull, &out), 0);
	assert_int_equal(cpu_sampler_sample(&s, &self, 1, 1000000000ull + 500000000ull, &out), 1);
	assert_true(out.process_pct >= 0.0);
	assert_true(out.system_pct >= 0.0 && out.system_pct <= 100.0);
	assert_true(out.rss_bytes > 0);
}

static void test_reaped_usage_counts(void **state)
{
	(void)state;
	struct cpu_sampler s;
	struct cpu_sample out;
	cpu_sampler_init(&s);
	assert_int_equal(cpu_sampler_sample(&s, NULL, 0, 1000000000ull, &out), 0);
	/* A child that ran 1.5 s of CPU and was reaped, over a 1 s interval: 150%. */
	struct rusage ru = {0};
	ru.ru_utime.tv_sec = 1;
	ru.ru_stime.tv_usec = 500000;
	cpu_sampler_reaped(&s, &ru);
	assert_int_equal(cpu_sampler_sample(&s, NULL, 0, 2000000000ull, &out), 1);
	assert_true(out.process_pct > 149.0 && out.process_pct < 151.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_stat_line),
		cmocka_unit_test(test_pid_stat_with_nasty_comm),
		cmocka_unit_test(test_sample_own_process),
		cmocka_unit_test(test_reaped_usage_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
