/*
 * clock.c - the collector's clock: CLOCK_MONOTONIC, read for less.
 *
 * An event reads the clock once, and clock_gettime through the vDSO is most
 * of what a push+pop pair costs (two reads, 60 ns each on a busy VM). Where
 * the kernel itself keeps CLOCK_MONOTONIC on the TSC (its clocksource is
 * "tsc": invariant, synchronised across CPUs), the TSC is read instead and
 * turned into CLOCK_MONOTONIC nanoseconds from a per-thread anchor, a
 * (tsc, ns) pair taken with clock_gettime at most COLL_TSC_ANCHOR_NS ago,
 * at a rate measured from the process's start. So every value is within
 * (rate error x anchor age) of clock_gettime's, and the rate's error
 * shrinks as the process runs; a new anchor is taken on the true clock,
 * so no error adds up. A thread's values never go back (its last one is
 * kept), which the nesting of its ranges needs.
 *
 * Anywhere else (another clocksource, not x86-64, GPROF_DL_TSC=0, before
 * the rate is known) the clock is clock_gettime itself.
 */
#include "lib/collector/collector.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct coll_tsc coll_tsc;
__thread struct coll_clk coll_clk __attribute__((tls_model("initial-exec")));

/* The rate is first measured over this much time (until then, clock_gettime). */
#define TSC_CALIBRATE_NS 50000000ull
/* A (tsc, clock) pair whose TSC reads are further apart than this (a
 * clock_gettime takes a few hundred) was interrupted: not used. */
#define TSC_PAIR_MAX_CYCLES 2000ull

#if defined(__x86_64__)
#include <x86intrin.h>

/* A TSC value and the clock at that moment; 0 when the reads were interrupted. */
static int tsc_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t c1 = __rdtsc();
	*ns = clock_now_ns();
	uint64_t c2 = __rdtsc();
	*tsc = c1 + (c2 - c1) / 2;
	return c2 - c1 <= TSC_PAIR_MAX_CYCLES;
}

static int kernel_clock_is_tsc(void)
{
	char buf[32];
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == 4 && memcmp(buf, "tsc\n", 4) == 0;
}

void coll_clock_init(void)
{
	const char *env = getenv("GPROF_DL_TSC");
	if ((env && !strcmp(env, "0")) || !kernel_clock_is_tsc())
		return;
	/* the narrowest of a few pairs: the rate is measured from it */
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint64_t c1 = __rdtsc(), ns = clock_now_ns(), c2 = __rdtsc();
		if (c2 - c1 < best && c2 - c1 <= TSC_PAIR_MAX_CYCLES) {
			best = c2 - c1;
			coll_tsc.base_tsc = c1 + (c2 - c1) / 2;
			coll_tsc.base_ns = ns;
			coll_tsc.usable = 1;
		}
	}
}

/* The rate from the process's start to (tsc, ns), once that is long enough. */
static void tsc_calibrate(uint64_t tsc, uint64_t ns)
{
	uint64_t dns = ns - coll_tsc.base_ns, dc = tsc - coll_tsc.base_tsc;
	if (ns < coll_tsc.base_ns + TSC_CALIBRATE_NS || tsc <= coll_tsc.base_tsc || !dc)
		return;
	uint64_t mult = (uint64_t)(((unsigned __int128)dns << 32) / dc);
	if (!mult)
		return;
	uint64_t span = (uint64_t)(((unsigned __int128)COLL_TSC_ANCHOR_NS << 32) / mult);
	atomic_store_explicit(&coll_tsc.span, span, memory_order_relaxed);
	atomic_store_explicit(&coll_tsc.mult, mult, memory_order_relaxed);
}

uint64_t coll_clock_slow(void)
{
	uint64_t tsc, ns;
	if (!coll_tsc.usable) {
		ns = clock_now_ns();
	} else if (tsc_pair(&tsc, &ns)) {
		tsc_calibrate(tsc, ns);
		coll_clk.tsc = tsc;
		coll_clk.ns = ns;
	} else {
		coll_clk.tsc = 0; /* interrupted: no anchor, the next read takes one */
		coll_clk.ns = 0;
	}
	if (ns < coll_clk.last)
		return coll_clk.last;
	coll_clk.last = ns;
	return ns;
}
#else
void coll_clock_init(void)
{
}

uint64_t coll_clock_slow(void)
{
	uint64_t ns = clock_now_ns();
	if (ns < coll_clk.last)
		return coll_clk.last;
	coll_clk.last = ns;
	return ns;
}
#endif
