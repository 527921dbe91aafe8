/*
 * gen_verdict_job.c - writes a synthetic job whose ranks' steps vary by
 * seeded noise, for the straggler rule's paths in the recipe tests (the
 * view and the recipes must agree on each): one trace per rank,
 * NAME-<rank>.gpdl, their paths printed one per line.
 *
 *   gen-verdict-job NAME RANKS STEPS SEED SCENARIO SLOW_RANK
 *
 * Rank r's step k starts at s = 100 k ms (on host "h0"); every time below
 * has a seeded Gaussian jitter of a few hundred microseconds. A gloo job:
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
 *   contention    c + 12 ms in every step, all of it waiting for a CPU:
 *                 its steps' run-queue time (trace 2.1) 12 ms, the others'
 *                 ~ 0.1 ms
 *   mixed         every rank's step waits ~ 1 ms for a CPU, in its matmul
 *                 (c + runq); the slow rank's c + 10 ms
 *   flip          c + 30 ms in the steps k % 4 == 1, c - 20 ms in the steps
 *                 k % 7 == 3 (excesses beyond the noise of both signs, a
 *                 few: the sign-flip test over all of them)
 *   flipmany      c + 30 ms in the odd steps, c - 20 ms in the steps
 *                 k % 6 == 0 (more than 16: the test over the largest 16,
 *                 a tie between them)
 * or a GPU job (nccl, as tracebuild.h's): main thread and streams 7, 8:
 *   main:  ProfileStep [s, s+100); matmul [s, s+10) launching gemm
 *          [s+5, s+5+g) on stream 7, g ~ 50 ms; Communication
 *          nccl:all_reduce [s+11, s+12) of seq k launching the NCCL kernel
 *          [s+5+g, s+95) on stream 8
 *   gpu           every rank's step waits ~ 3 ms for a CPU (taken out of
 *                 the host time outside operators first), the slow rank's
 *                 14 ms (more than that time: the rest out of computation
 *                 and communication) and g + 6 ms
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

/* A ProfileStep [s, s+100 ms) whose thread ran cpu and waited runq (0: no
 * sched data). */
static void step_range(struct tb *b, uint32_t desc, uint64_t s, uint64_t cpu, uint64_t runq)
{
	struct trace_event_ext x = {.sched_cpu_ns = cpu, .sched_runq_ns = runq};
	if (cpu)
		tb_ext(b, 0, desc, s, 100 * MS, &x);
	else
		tb_range(b, 0, desc, s, 100 * MS);
}

static int gloo_rank(struct tb *b, const char *sc, unsigned r, unsigned ranks, unsigned steps,
		     int slow, uint64_t *rng, const char *prog)
{
	uint32_t pid = 100 + r;
	uint32_t step_d = tb_desc(b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t mm = tb_desc(b, "matmul", TRACE_EV_OPERATOR);
	uint32_t c10d = tb_desc(b, "c10d::allreduce_", TRACE_EV_OPERATOR);
	uint32_t ar = tb_desc(b, "gloo:all_reduce", TRACE_EV_COMMUNICATION);
	uint32_t dlr = tb_desc(b, "Dataloader", TRACE_EV_DATALOADER);
	int sched = !strcmp(sc, "contention") || !strcmp(sc, "mixed");
	tb_thread_of(b, 0, pid, pid, "main");
	tb_thread_of(b, 1, pid, pid + 1, "gloo");
	for (unsigned k = 0; k < steps; k++) {
		uint64_t s = k * 100 * MS;
		double sd = strcmp(sc, "even") ? 1 : 0;
		uint64_t dl = jittered(rng, 2, 0.2 * sd), c = jittered(rng, 40, 0.4 * sd),
			 h = jittered(rng, 1, 0.2 * sd), runq = 0;
		if (!strcmp(sc, "contention"))
			runq = (int)r == slow ? jittered(rng, 12, 0.3) : jittered(rng, 0.1, 0.03);
		else if (!strcmp(sc, "mixed"))
			runq = jittered(rng, 1, 0.3);
		c += runq;
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
			else if (!strcmp(sc, "mixed"))
				c += 10 * MS;
			else if (!strcmp(sc, "flip"))
				c = c + (k % 4 == 1 ? 30 * MS : 0) - (k % 7 == 3 ? 20 * MS : 0);
			else if (!strcmp(sc, "flipmany"))
				c = c + (k % 2 == 1 ? 30 * MS : 0) - (k % 6 == 0 ? 20 * MS : 0);
		}
		uint64_t a = s + dl + c + h;
		if (a + MS > s + 95 * MS) {
			fprintf(stderr, "%s: rank %u step %u: its work past the call's end\n", prog, r,
				k);
			return 1;
		}
		tb_range(b, 0, dlr, s, dl);
		tb_range(b, 0, mm, s + dl, c);
		tb_range(b, 0, c10d, a, MS);
		step_range(b, step_d, s, sched ? 100 * MS - runq : 0, runq);
		tb_comm(b, 1, ar, a, s + 95 * MS - a, "0", k, 4ull << 20, ranks);
	}
	return 0;
}

static void nccl_rank(struct tb *b, unsigned r, unsigned ranks, unsigned steps, int slow,
		      uint64_t *rng)
{
	uint32_t pid = 100 + r;
	uint32_t step_d = tb_desc(b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	uint32_t mm = tb_desc(b, "matmul", TRACE_EV_OPERATOR);
	uint32_t ar = tb_desc(b, "nccl:all_reduce", TRACE_EV_COMMUNICATION);
	uint32_t launch = tb_desc(b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	uint32_t gemm = tb_desc(b, "gemm", TRACE_EV_KERNEL);
	uint32_t nk = tb_desc(b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", TRACE_EV_KERNEL);
	tb_thread_of(b, 0, pid, pid, "main");
	tb_stream(b, 1, 0, 7);
	tb_stream(b, 2, 0, 8);
	for (unsigned k = 0; k < steps; k++) {
		uint64_t s = k * 100 * MS;
		uint64_t g = jittered(rng, 50, 0.4) + ((int)r == slow ? 6 * MS : 0);
		uint64_t runq = (int)r == slow ? jittered(rng, 14, 0.3) : jittered(rng, 3, 0.5);
		tb_call(b, 0, launch, s + 1 * MS, MS, 2 * k + 1);
		tb_range(b, 0, mm, s, 10 * MS);
		tb_call(b, 0, launch, s + 11 * MS, MS / 2, 2 * k + 2);
		tb_comm(b, 0, ar, s + 11 * MS, MS, "0", k, 1ull << 20, ranks);
		step_range(b, step_d, s, 100 * MS - runq, runq);
		tb_kernel(b, 1, gemm, s + 5 * MS, g, 2 * k + 1, 1, 32, 1, 0, 0, 0);
		tb_kernel(b, 2, nk, s + 5 * MS + g, 90 * MS - g, 2 * k + 2, 1, 32, 1, 0, 0, 0);
	}
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
	static const char *const known[] = {"noise",	  "even",  "intermittent", "stall",
					    "data",	  "outside", "small",	 "contention",
					    "mixed",	  "flip",  "flipmany",	 "gpu"};
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
		uint64_t rng = seed * 1000003u + r;
		snprintf(file, sizeof(file), "%s-%u.gpdl", argv[1], r);
		tb_open_rank(&b, file, "h0", 100 + r, 0, (int32_t)r, (int32_t)ranks, wall);
		if (!strcmp(sc, "gpu"))
			nccl_rank(&b, r, ranks, steps, slow, &rng);
		else if (gloo_rank(&b, sc, r, ranks, steps, slow, &rng, argv[0]))
			return 1;
		uint64_t end = steps * 100 * MS + MS;
		tb_process(&b, 100 + r, 1, 0, end, 0, (int32_t)r, (int32_t)ranks);
		printf("%s\n", tb_close(&b, end + MS));
	}
	return 0;
}
