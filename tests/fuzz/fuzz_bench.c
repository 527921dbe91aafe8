/*
 * fuzz_bench.c - fuzz target: any bytes, read as a baseline of `gprof-dl
 * bench` (the JSON object bench --format json writes, bench_json.h), then
 * pooled and compared with itself as bench does with a baseline.
 *
 * The input goes to a memfd opened through /proc/self/fd. What is checked,
 * beyond the sanitizers: a rejected file says why on one line that names it;
 * an accepted one adds runs whose steps the statistics take without a crash,
 * and a pool compared with itself is no regression.
 *
 * Seeds: tests/fuzz/corpus/bench/ (see tests/fuzz/README). Run it with
 * tests/fuzz/run-bounded, or by hand:
 *   build-fuzz/tests/fuzz/fuzz_bench -max_total_time=60 tests/fuzz/corpus/bench
 */
#include "lib/analysis/bench/bench_json.h"
#include "lib/analysis/bench/benchstat.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_pool(const struct bench_side *s)
{
	struct bs_pool pool;
	bs_pool_measure(&pool, s->runs, s->nruns, 0.95);
	if (!bs_pool_has_ci(&pool))
		return;
	struct bs_change c;
	if (bs_compare(&c, &pool, &pool, 0.95, 5.0) != 0)
		abort();
	if (c.verdict == BS_REGRESSION) {
		fprintf(stderr, "fuzz_bench: a pool compared with itself is a regression\n");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz-bench", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	struct bench_side s = {0};
	char err[1024];
	(void)bench_json_sniff(path);
	if (bench_json_read(&s, path, err, sizeof(err)) == 0) {
		fuzz_pool(&s);
	} else if (!err[0] || strchr(err, '\n') || !strstr(err, path)) {
		fprintf(stderr, "fuzz_bench: a bad message: '%s'\n", err);
		abort();
	}
	bench_side_free(&s);
	return 0;
}
