/*
 * gen_ops_job.c - writes the job of the operator, kernel and collective
 * recipes' corner cases (tracebuild.h): 3 ranks on two hosts (rank 1's clock
 * reads 1000 s after the others'), NAME-<rank>.gpdl, their paths printed one
 * per line.
 *
 *   gen-ops-job NAME GPU      GPU 0: gloo collectives, 1: NCCL kernels too
 *
 * Rank r, step k (k < 14), s = its clock's start + 50 + 100 k ms, x = (r + 1)
 * ms + k us (times in ms). Ranks 0 and 1 have steps [s, s+90); rank 2 has
 * none: the job's window is the others' steps, its own is its whole run.
 *   main:  Operator init [10, 20) before the first step (never in a window
 *          with steps)
 *          matmul [s+5, s+25+x) > cudaLaunchKernel [s+6, s+7) -> gemm
 *            [s+8, s+12+x)
 *          dropout [s+30, s+50) > div_ [s+31, s+49) > div_ [s+32, s+48-x),
 *            its only child: folded; inside it to [s+33, s+35), OperatorInner
 *            inner [s+36, s+38), a launch at s+40 -> gemm [s+41, s+42+x)
 *          copy_ [s+55, s+65) > copy_ [s+56, s+58) (a launch at s+57 ->
 *            gemm 2 ms), fill_ [s+60, s+62): two children, not folded
 *          add_ [s+66, s+69) > UserDefined add_ [s+67, s+68): not folded
 *          noop, zero-length, at s+70 (in the window) and s+95 (not)
 *          gap_op [s+85, s+95): half in the window
 *          a launch at s+88 -> gemm [s+89, s+92): counts, past the step
 *          a launch at s+92 -> late_kernel [s+98, s+103): does not count
 *   GPU:   orphan kernels (no call) at s+80 (1 ms + x: counts) and s+93
 *          (does not)
 *   gloo:  all_reduce (group "0", coll_seq k, 4 MiB, 3 ranks)
 *          [s+40+x, s+60): rank 2's at k = 11 is a broadcast (a mismatch);
 *          all_gather (group "1", no sequence numbers, 1 MiB, 2 ranks) on
 *          ranks 0 and 1; gloo:send from rank 0 to 1 and gloo:recv (64 KiB)
 *   GPU 1: each all_reduce (named nccl:...) launches an NCCL kernel of
 *          10 ms + 100 r ns.
 */
#include "tests/analysis/tracebuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS TB_MS

static void comm(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
		 const char *pg, int64_t seq, uint64_t bytes, uint32_t n, int32_t peer)
{
	struct trace_event_ext x = {
		.bytes = bytes,
		.has_coll_seq = seq >= 0,
		.coll_seq = seq >= 0 ? (uint64_t)seq : 0,
		.pg_str = trace_writer_string(b->w, pg, strlen(pg)),
		.group_size = n,
		.dtype_str = trace_writer_string(b->w, "float", 5),
		.has_peer = peer >= 0,
		.peer = peer,
	};
	tb_ext(b, thread, desc, start, dur, &x);
}

struct descs {
	uint32_t step, mm, gap, dropout, div, to, copy, fill, noop, init, inner, user, add;
	uint32_t launch, gemm, late, orphan, ar, bc, ag, send, recv, nk;
};

static void descs_make(struct tb *b, struct descs *d, int gpu)
{
	d->step = tb_desc(b, "ProfileStep", TRACE_EV_PROFILE_STEP);
	d->mm = tb_desc(b, "matmul", TRACE_EV_OPERATOR);
	d->gap = tb_desc(b, "gap_op", TRACE_EV_OPERATOR);
	d->dropout = tb_desc(b, "dropout", TRACE_EV_OPERATOR);
	d->div = tb_desc(b, "div_", TRACE_EV_OPERATOR);
	d->to = tb_desc(b, "to", TRACE_EV_OPERATOR);
	d->copy = tb_desc(b, "copy_", TRACE_EV_OPERATOR);
	d->fill = tb_desc(b, "fill_", TRACE_EV_OPERATOR);
	d->noop = tb_desc(b, "noop", TRACE_EV_OPERATOR);
	d->init = tb_desc(b, "init", TRACE_EV_OPERATOR);
	d->inner = tb_desc(b, "inner", TRACE_EV_OPERATOR_INNER);
	d->user = tb_desc(b, "add_", TRACE_EV_USER_DEFINED);
	d->add = tb_desc(b, "add_", TRACE_EV_OPERATOR);
	d->launch = tb_desc(b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	d->gemm = tb_desc(b, "gemm", TRACE_EV_KERNEL);
	d->late = tb_desc(b, "late_kernel", TRACE_EV_KERNEL);
	d->orphan = tb_desc(b, "orphan", TRACE_EV_KERNEL);
	d->ar = tb_desc(b, gpu ? "nccl:all_reduce" : "gloo:all_reduce", TRACE_EV_COMMUNICATION);
	d->bc = tb_desc(b, gpu ? "nccl:broadcast" : "gloo:broadcast", TRACE_EV_COMMUNICATION);
	d->ag = tb_desc(b, "gloo:all_gather", TRACE_EV_COMMUNICATION);
	d->send = tb_desc(b, "gloo:send", TRACE_EV_COMMUNICATION);
	d->recv = tb_desc(b, "gloo:recv", TRACE_EV_COMMUNICATION);
	d->nk = tb_desc(b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", TRACE_EV_KERNEL);
}

/* A launch at `at` on the main thread and its kernel on the stream. */
static void launch(struct tb *b, const struct descs *d, uint64_t *corr, uint64_t at,
		   uint32_t kernel, uint64_t start, uint64_t dur)
{
	tb_call(b, 0, d->launch, at, MS / 4, *corr);
	tb_kernel(b, 2, kernel, start, dur, (*corr)++, 1, 32, 1, 0, 0, 0);
}

static void step(struct tb *b, const struct descs *d, unsigned r, unsigned k, int gpu,
		 uint64_t t0, uint64_t *corr)
{
	uint64_t s = t0 + 50 * MS + k * 100 * MS;
	uint64_t x = (r + 1) * MS + k * 1000;
	if (r != 2)
		tb_range(b, 0, d->step, s, 90 * MS);
	tb_range(b, 0, d->mm, s + 5 * MS, 20 * MS + x);
	launch(b, d, corr, s + 6 * MS, d->gemm, s + 8 * MS, 4 * MS + x);
	tb_range(b, 0, d->dropout, s + 30 * MS, 20 * MS);
	tb_range(b, 0, d->div, s + 31 * MS, 18 * MS);
	tb_range(b, 0, d->div, s + 32 * MS, 16 * MS - x);
	tb_range(b, 0, d->to, s + 33 * MS, 2 * MS);
	tb_range(b, 0, d->inner, s + 36 * MS, 2 * MS);
	launch(b, d, corr, s + 40 * MS, d->gemm, s + 41 * MS, MS + x);
	tb_range(b, 0, d->copy, s + 55 * MS, 10 * MS);
	tb_range(b, 0, d->copy, s + 56 * MS, 2 * MS);
	launch(b, d, corr, s + 57 * MS, d->gemm, s + 58 * MS, 2 * MS);
	tb_range(b, 0, d->fill, s + 60 * MS, 2 * MS);
	tb_range(b, 0, d->add, s + 66 * MS, 3 * MS);
	tb_range(b, 0, d->user, s + 67 * MS, MS);
	tb_event(b, 0, d->noop, s + 70 * MS, 0, 0);
	tb_event(b, 0, d->noop, s + 95 * MS, 0, 0);
	tb_range(b, 0, d->gap, s + 85 * MS, 10 * MS);
	launch(b, d, corr, s + 88 * MS, d->gemm, s + 89 * MS, 3 * MS);
	launch(b, d, corr, s + 92 * MS, d->late, s + 98 * MS, 5 * MS);
	tb_kernel(b, 2, d->orphan, s + 80 * MS, MS + x, 0, 1, 32, 1, 0, 0, 0);
	tb_kernel(b, 2, d->orphan, s + 93 * MS, MS, 0, 1, 32, 1, 0, 0, 0);
	comm(b, 1, k == 11 && r == 2 ? d->bc : d->ar, s + 40 * MS + x, 20 * MS - x, "0", k,
	     4u << 20, 3, -1);
	if (gpu) {
		tb_call(b, 1, d->launch, s + 41 * MS + x, MS / 2, *corr);
		tb_kernel(b, 2, d->nk, s + 42 * MS + x, 10 * MS + 100 * r, (*corr)++, 1, 32, 1, 0, 0, 0);
	}
	if (r < 2)
		comm(b, 1, d->ag, s + 62 * MS + (r ? 0 : MS), 5 * MS - (r ? 0 : MS), "1", -1, 1u << 20,
		     2, -1);
	if (r == 0)
		comm(b, 1, d->send, s + 70 * MS, 2 * MS, "0", -1, 1u << 16, 3, 1);
	if (r == 1)
		comm(b, 1, d->recv, s + 69 * MS, 4 * MS, "0", -1, 1u << 16, 3, 0);
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "0") && strcmp(argv[2], "1"))) {
		fprintf(stderr, "usage: %s NAME GPU (0 or 1)\n", argv[0]);
		return 2;
	}
	const int64_t wall = 1700000000000000000LL;
	int gpu = argv[2][0] == '1';
	for (unsigned r = 0; r < 3; r++) {
		struct tb b;
		struct descs d;
		char file[256];
		uint64_t t0 = (uint64_t)(r % 2) * 1000000 * MS, corr = 1;
		snprintf(file, sizeof(file), "%s-%u.gpdl", argv[1], r);
		tb_open_rank(&b, file, r % 2 ? "h1" : "h0", 100 + r, t0, (int32_t)r, 3,
			     wall - (int64_t)t0);
		tb_thread_of(&b, 0, 100 + r, 100 + r, "main");
		tb_thread_of(&b, 1, 100 + r, 200 + r, "gloo");
		tb_stream(&b, 2, 0, 7);
		descs_make(&b, &d, gpu);
		tb_range(&b, 0, d.init, t0 + 10 * MS, 10 * MS);
		for (unsigned k = 0; k < 14; k++)
			step(&b, &d, r, k, gpu, t0, &corr);
		uint64_t end = t0 + 50 * MS + 14 * 100 * MS + 10 * MS;
		tb_process(&b, 100 + r, 1, t0, end, 0, (int32_t)r, 3);
		printf("%s\n", tb_close(&b, end));
	}
	return 0;
}
