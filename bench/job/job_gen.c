/*
 * job_gen.c - the synthetic job of job_gen.h, written through the writer API.
 */
#include "bench/job/job_gen.h"

#include "formats/trace/trace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull
#define NOPS 16

void job_gen_defaults(struct job_gen *g)
{
	*g = (struct job_gen){
		.ranks = 64,
		.events = 1000000,
		.steps = 100,
		.buckets = 8,
		.compute_ns = 50 * MS,
		.slow_ns = 5 * MS,
		.bucket_ns = 2 * MS,
		.bytes = 25000000,
		.slow_rank = 17,
	};
}

static uint32_t str(struct trace_writer *w, const char *s)
{
	return trace_writer_string(w, s, strlen(s));
}

static uint32_t desc(struct trace_writer *w, const char *name, unsigned type)
{
	return trace_writer_desc(w, str(w, name), 0, 0, (uint8_t)type);
}

static int ev(struct trace_writer *w, uint32_t thread, uint32_t d, uint64_t start, uint64_t dur,
	      const struct trace_event_ext *x)
{
	struct trace_event e = {start, dur, d, thread, 0, x};
	return trace_writer_event(w, &e);
}

struct gen_descs {
	uint32_t step, ops[NOPS], enqueue, allreduce;
	uint32_t pg, dtype;
};

/* One step of rank r from S; returns the events written, or -1. */
static int64_t gen_step(struct trace_writer *w, const struct job_gen *g, unsigned r, unsigned k,
			uint64_t nops, const struct gen_descs *d)
{
	const uint64_t T = g->compute_ns + g->slow_ns + g->buckets * g->bucket_ns + MS;
	const uint64_t S = (uint64_t)k * T;
	const uint64_t c = g->compute_ns + ((int)r == g->slow_rank ? g->slow_ns : 0);
	const uint64_t len = c / nops;
	int64_t n = 0;
	for (uint64_t i = 0; i < nops; i++, n++)
		if (ev(w, 0, d->ops[i % NOPS], S + i * len, len, NULL) < 0)
			return -1;
	uint64_t prev_end = 0;
	for (unsigned b = 0; b < g->buckets; b++) {
		uint64_t enq = S + c + b * 10 * US;
		uint64_t end = S + g->compute_ns + g->slow_ns + (b + 1) * g->bucket_ns;
		uint64_t start = enq > prev_end ? enq : prev_end;
		struct trace_event_ext x = {
			.bytes = g->bytes,
			.has_coll_seq = 1,
			.coll_seq = (uint64_t)k * g->buckets + b,
			.pg_str = d->pg,
			.group_size = g->ranks,
			.dtype_str = d->dtype,
		};
		if (ev(w, 0, d->enqueue, enq, 10 * US, NULL) < 0 ||
		    ev(w, 1, d->allreduce, start, end - start, &x) < 0)
			return -1;
		prev_end = end;
		n += 2;
	}
	if (ev(w, 0, d->step, S, T, NULL) < 0)
		return -1;
	return n + 1;
}

int job_gen_rank(const struct job_gen *g, unsigned r, const char *path, uint64_t *events)
{
	struct trace_writer *w = trace_writer_open(path, 1);
	if (!w)
		return -1;
	const uint32_t pid = 1000 + r;
	const struct trace_header h = {
		.sources = TRACE_SRC_NVTX | TRACE_SRC_PYTHON,
		.clock_domain = "CLOCK_MONOTONIC",
		.wall_offset_ns = 1700000000000000000LL,
		.hostname = "bench",
		.pid = pid,
		.rank = (int32_t)r,
		.cmdline = "python train.py",
		.start_ns = 0,
		.ncpus = 64,
		.gprof_version = "bench",
		.world_size = (int32_t)g->ranks,
		.dist_backend = "gloo",
		.local_rank = (int32_t)(r % 8),
	};
	int rc = trace_writer_header(w, &h);
	struct trace_process p = {pid, 1, 0, 0, TRACE_EXIT_UNKNOWN, 0, (int32_t)r, (int32_t)(r % 8),
				  (int32_t)g->ranks, str(w, "gloo")};
	struct trace_thread main = {.index = 0, .pid = pid, .tid = pid, .name_str = str(w, "MainThread")};
	struct trace_thread gloo = {.index = 1, .pid = pid, .tid = pid + 1, .name_str = str(w, "gloo")};
	rc |= trace_writer_process(w, &p) | trace_writer_thread(w, &main) |
	      trace_writer_thread(w, &gloo);
	struct gen_descs d = {
		.step = desc(w, "ProfileStep", TRACE_EV_PROFILE_STEP),
		.enqueue = desc(w, "c10d::allreduce_", TRACE_EV_OPERATOR),
		.allreduce = desc(w, "gloo:all_reduce", TRACE_EV_COMMUNICATION),
		.pg = str(w, "0"),
		.dtype = str(w, "float"),
	};
	static const char *const names[NOPS] = {
		"aten::linear", "aten::addmm", "aten::relu", "aten::conv2d", "aten::batch_norm",
		"aten::add_", "aten::mul", "aten::sum", "aten::mm", "aten::t", "aten::view",
		"aten::copy_", "aten::empty", "aten::zero_", "aten::softmax", "aten::layer_norm",
	};
	for (unsigned i = 0; i < NOPS; i++)
		d.ops[i] = desc(w, names[i], TRACE_EV_OPERATOR);
	uint64_t per_step = g->events / (g->steps ? g->steps : 1);
	uint64_t fixed = 1 + 2ull * g->buckets;
	uint64_t nops = per_step > fixed + 2 ? per_step - fixed : 2;
	uint64_t n = 0;
	for (unsigned k = 0; k < g->steps && rc == 0; k++) {
		int64_t m = gen_step(w, g, r, k, nops, &d);
		if (m < 0)
			rc = -1;
		else
			n += (uint64_t)m;
	}
	const uint64_t T = g->compute_ns + g->slow_ns + g->buckets * g->bucket_ns + MS;
	uint64_t end = (uint64_t)g->steps * T;
	p.end_ns = end;
	p.exit_status = 0;
	rc |= trace_writer_process(w, &p);
	int saved = errno;
	if (trace_writer_close(w, end) != 0 || rc != 0) {
		errno = saved ? saved : EIO;
		return -1;
	}
	*events = n;
	return 0;
}
