/*
 * clock.h - the one clock every gprof-dl timestamp is taken on.
 *
 * CLOCK_MONOTONIC through the vDSO: no system call, shared by every process of
 * the host, so the launcher and all targets agree. The trace header records the
 * offset to wall time once.
 */
#ifndef GPDL_COMMON_CLOCK_H
#define GPDL_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

#define GPDL_CLOCK_DOMAIN "CLOCK_MONOTONIC"

static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wall time minus monotonic time, now. */
static inline int64_t clock_wall_offset_ns(void)
{
	struct timespec w, m;
	clock_gettime(CLOCK_REALTIME, &w);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)w.tv_sec - (int64_t)m.tv_sec) * 1000000000 +
	       ((int64_t)w.tv_nsec - (int64_t)m.tv_nsec);
}

#endif
