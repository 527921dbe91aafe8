/*
 * gen_verdict_job.c - writes a synthetic gloo job whose ranks' steps vary
 * by seeded noise, for the straggler rule's paths in the recipe tests (the
 * view and the recipes must agree on each): one trace per rank,
 * NAME-<rank>.gpdl, their paths printed one per line.
 *
 *   gen-verdict-job NAME RANKS STEPS SEED SCENARIO SLOW_RANK
 *
 * Rank r's step k starts at s = 100 k ms (on host "h0"), every time below
 * plus a seeded Gaussian jitter of a few hundred microseconds:
 *   main:  ProfileStep [s, s+100); Dataloader [s, s+dl), dl ~ 2 ms;
 *          Operator matmul [s+dl, s+dl+c), c ~ 40 ms; then h ~ 1 ms of
 *          nothing (host time outside operators); Operator
 *          c10d::allreduce_ [a, a+1), a = s+dl+c+h
 *    gloo: Communication gloo:all_reduce [a, s+95) of seq k, group "0"
 * and the slow rank, by SCENARIO:
 *   noise         nothing more
 *   even          no jitter, on any rank: every rank alike, costs tied
 *   intermittent  c + 25 ms in the steps k % 4 == 1
 *   stall         c + 10 ms in every step, and + 40 ms more in step 17
 *   data          dl + 12 ms in every step
 *   outside       h + 8 ms in every step
 *   small         c + 1.5 ms in every step (busier in most steps by less
 *                 than the noise) and + 45 ms in steps 13 and 23 (costly)
 */
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000ull

static uint64_t jittered(uint64_t *rng, double mean_ms, double sd_ms)
{
	double v = mean_ms + sd_ms * tb_gauss(rng);
	return v > 0.05 ? (uint64_t)llround(v * (double)MS) : 50000;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: %s NAME RANKS STEPS SEED SCENARIO SLOW_RANK\n", argv[0]);
		return 2;
	}
	unsigned ranks = (unsigned)atoi(argv[2]), steps = (unsigned)atoi(argv[3]);
	uint64_t seed = strtoull(argv[4], NULL, 10);
	const char *sc = argv[5];
	int slow = atoi(argv[6]);
	if (ranks < 1 || ranks > 64 || steps < 1 || steps > 200) {
		fprintf(stderr, "%s: ranks 1..64, steps 1..200\n", argv[0]);
		return 2;
	}
	static const char *const known[] = {"noise", "even", "intermittent", "stall",
					    "data", "outside", "small"};
	size_t i = 0;
	while (i < sizeof(known) / sizeof(known[0]) && strcmp(sc, known[i]))
		i++;
	if (i == sizeof(known) / sizeof(known[0])) {
		fprintf(stderr, "%s: unknown scenario '%s'\n", argv[0], sc);
		return 2;
	}
	const int64_t wall = 1700000000000000000LL;
	for (unsigned r = 0; r < ranks; r++) {
		char file[256];
		struct tb b;
		uint32_t pid = 100 + r;
		uint64_t rng = seed * 1000003u + r;
		snprintf(file, sizeof(file), "%s-%u.gpdl", argv[1], r);
		tb_open_rank(&b, file, "h0", pid, 0, (int32_t)r, (int32_t)ranks, wall);
		uint32_t step_d = tb_desc(&b, "ProfileStep", TRACE_EV_PROFILE_STEP);
		uint32_t mm = tb_desc(&b, "matmul", TRACE_EV_OPERATOR);
		uint32_t c10d = tb_desc(&b, "c10d::allreduce_", TRACE_EV_OPERATOR);
		uint32_t ar = tb_desc(&b, "gloo:all_reduce", TRACE_EV_COMMUNICATION);
		uint32_t dlr = tb_desc(&b, "Dataloader", TRACE_EV_DATALOADER);
		tb_thread_of(&b, 0, pid, pid, "main");
		tb_thread_of(&b, 1, pid, pid + 1, "gloo");
		for (unsigned k = 0; k < steps; k++) {
			uint64_t s = k * 100 * MS;
			double sd = strcmp(sc, "even") ? 1 : 0;
			uint64_t dl = jittered(&rng, 2, 0.2 * sd), c = jittered(&rng, 40, 0.4 * sd),
				 h = jittered(&rng, 1, 0.2 * sd);
			if ((int)r == slow) {
				if (!strcmp(sc, "intermittent") && k % 4 == 1)
					c += 25 * MS;
				else if (!strcmp(sc, "stall"))
					c += 10 * MS + (k == 17 ? 40 * MS : 0);
				else if (!strcmp(sc, "data"))
					dl += 12 * MS;
				else if (!strcmp(sc, "outside"))
					h += 8 * MS;
				else if (!strcmp(sc, "small"))
					c += 1500000 + (k == 13 || k == 23 ? 45 * MS : 0);
			}
			uint64_t a = s + dl + c + h;
			if (a + MS > s + 95 * MS) {
				fprintf(stderr, "%s: rank %u step %u: its work past the call's end\n",
					argv[0], r, k);
				return 1;
			}
			tb_range(&b, 0, dlr, s, dl);
			tb_range(&b, 0, mm, s + dl, c);
			tb_range(&b, 0, c10d, a, MS);
			tb_range(&b, 0, step_d, s, 100 * MS);
			tb_comm(&b, 1, ar, a, s + 95 * MS - a, "0", k, 4ull << 20, ranks);
		}
		uint64_t end = steps * 100 * MS + MS;
		tb_process(&b, pid, 1, 0, end, 0, (int32_t)r, (int32_t)ranks);
		printf("%s\n", tb_close(&b, end + MS));
	}
	return 0;
}
