/*
 * durhist.h - a duration histogram of fixed buckets, the same for every
 * trace and rank, so that an engine can add the buckets of many ranks and
 * read a median or a p95 from the sums without the calls themselves (the
 * SQL exports' agg_durations table, formats/SQL-SCHEMA.md).
 *
 * Buckets: 0..7 ns one each; above, eight a power of two:
 * [(8 + k) << (e - 3), (9 + k) << (e - 3)) for 2^e <= ns < 2^(e+1), k 0..7,
 * so a bucket is at most 1/8 of its lower bound wide (12.5 %).
 */
#ifndef GPDL_ANALYSIS_VIEWS_DURHIST_H
#define GPDL_ANALYSIS_VIEWS_DURHIST_H

#include <stdint.h>

#define DURHIST_SUB 8u
#define DURHIST_BUCKETS (DURHIST_SUB + (64u - 3u) * DURHIST_SUB) /* 496 */

static inline unsigned durhist_bucket(uint64_t ns)
{
	if (ns < DURHIST_SUB)
		return (unsigned)ns;
	unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* 2^e <= ns, e >= 3 */
	unsigned k = (unsigned)(ns >> (e - 3u)) & (DURHIST_SUB - 1u);
	return DURHIST_SUB + (e - 3u) * DURHIST_SUB + k;
}

/* The bucket's bounds: lo <= ns < hi (hi of the last: UINT64_MAX, inclusive). */
static inline uint64_t durhist_lo(unsigned b)
{
	if (b < DURHIST_SUB)
		return b;
	unsigned e = (b - DURHIST_SUB) / DURHIST_SUB + 3u, k = (b - DURHIST_SUB) % DURHIST_SUB;
	return (uint64_t)(DURHIST_SUB + k) << (e - 3u);
}

static inline uint64_t durhist_hi(unsigned b)
{
	return b + 1u < DURHIST_BUCKETS ? durhist_lo(b + 1u) : UINT64_MAX;
}

#endif
