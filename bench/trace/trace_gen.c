/*
 * trace_gen.c - writes synthetic training-loop traces (see trace_gen.h).
 *
 * Time is simulated, not measured: each thread has its own clock that the
 * generator advances by pseudo-random durations, so a trace of 10 million
 * events takes seconds to write and covers minutes of "run".
 */
#include "bench/trace/trace_gen.h"

#include "formats/trace/trace.h"
#include "gpdl-config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define GEN_MAX_THREADS 256
#define GEN_PID 1000
#define GEN_FWD_OPS 24 /* operators per forward pass */
#define GEN_OPT_OPS 8  /* optimizer operators per step */
#define GEN_FLUSH_EVERY 1000000 /* events between flushes, as the launcher drains */

static const char *const gen_op_names[] = {
	"embedding", "lookup_table_v2", "matmul_v2", "matmul", "elementwise_add",
	"elementwise_mul", "elementwise_sub", "elementwise_div", "layer_norm", "batch_norm",
	"softmax", "softmax_with_cross_entropy", "cross_entropy", "dropout", "gelu", "relu",
	"tanh", "sigmoid", "conv2d", "depthwise_conv2d", "pool2d", "reshape2", "transpose2",
	"concat", "split", "slice", "squeeze2", "unsqueeze2", "scale", "reduce_mean",
	"reduce_sum", "cast", "fill_constant", "gather", "stack", "flatten_contiguous_range",
	"fused_attention", "fused_feedforward", "where", "expand_v2",
};
#define GEN_NOPS (sizeof(gen_op_names) / sizeof(gen_op_names[0]))

static const char *const gen_inner_names[] = { "infer_shape", "prepare_data", "compute" };
#define GEN_NINNER 3

struct gen {
	struct trace_writer *w;
	uint64_t left, rng, clock[GEN_MAX_THREADS], next_counter;
	unsigned threads;
	uint32_t d_step, d_loader, d_fwd, d_bwd, d_opt;
	uint32_t d_op[GEN_NOPS][2];                /* forward, grad */
	uint32_t d_inner[GEN_NOPS][2][GEN_NINNER];
	uint32_t d_adam, d_adam_inner[GEN_NINNER];
	uint32_t d_read, d_decode, d_augment, d_collate, d_mark_lr, d_ckpt, d_save;
	uint64_t counters, names;
	int failed;
};

static uint64_t gen_rand(struct gen *g, uint64_t lo, uint64_t hi)
{
	g->rng ^= g->rng << 13; /* xorshift64: fast, and the same trace every run */
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return lo + g->rng % (hi - lo + 1);
}

static uint32_t gen_desc(struct gen *g, const char *name, const char *domain, uint8_t type)
{
	uint32_t n = trace_writer_string(g->w, name, strlen(name));
	uint32_t d = domain ? trace_writer_string(g->w, domain, strlen(domain)) : 0;
	uint32_t id = n ? trace_writer_desc(g->w, n, d, 0, type) : 0;

	if (!id)
		g->failed = 1;
	g->names++;
	return id;
}

static void gen_descs(struct gen *g)
{
	char name[96];
	const char *dom = "gprof-dl";

	g->d_step = gen_desc(g, "ProfileStep", dom, TRACE_EV_PROFILE_STEP);
	g->d_loader = gen_desc(g, "Dataloader", dom, TRACE_EV_DATALOADER);
	g->d_fwd = gen_desc(g, "Forward", dom, TRACE_EV_FORWARD);
	g->d_bwd = gen_desc(g, "Backward", dom, TRACE_EV_BACKWARD);
	g->d_opt = gen_desc(g, "Optimization", dom, TRACE_EV_OPTIMIZATION);
	for (size_t i = 0; i < GEN_NOPS; i++) {
		for (int grad = 0; grad < 2; grad++) {
			snprintf(name, sizeof(name), "%s%s", gen_op_names[i], grad ? "_grad" : "");
			g->d_op[i][grad] = gen_desc(g, name, dom, TRACE_EV_OPERATOR);
			for (int k = 0; k < GEN_NINNER; k++) {
				snprintf(name, sizeof(name), "%s%s %s", gen_op_names[i],
					 grad ? "_grad" : "", gen_inner_names[k]);
				g->d_inner[i][grad][k] = gen_desc(g, name, dom, TRACE_EV_OPERATOR_INNER);
			}
		}
	}
	g->d_adam = gen_desc(g, "adam", dom, TRACE_EV_OPERATOR);
	for (int k = 0; k < GEN_NINNER; k++) {
		snprintf(name, sizeof(name), "adam %s", gen_inner_names[k]);
		g->d_adam_inner[k] = gen_desc(g, name, dom, TRACE_EV_OPERATOR_INNER);
	}
	g->d_read = gen_desc(g, "read_sample", NULL, TRACE_EV_USER_DEFINED);
	g->d_decode = gen_desc(g, "decode_jpeg", NULL, TRACE_EV_USER_DEFINED);
	g->d_augment = gen_desc(g, "random_crop_flip", NULL, TRACE_EV_USER_DEFINED);
	g->d_collate = gen_desc(g, "collate_batch", NULL, TRACE_EV_USER_DEFINED);
	g->d_mark_lr = gen_desc(g, "lr_scheduler.step", NULL, TRACE_EV_USER_DEFINED);
	g->d_ckpt = gen_desc(g, "checkpoint", NULL, TRACE_EV_USER_DEFINED);
	g->d_save = gen_desc(g, "save_state_dict", NULL, TRACE_EV_USER_DEFINED);
}

static void gen_emit(struct gen *g, unsigned t, uint32_t desc, uint64_t start, uint8_t flags)
{
	struct trace_event e = { start, g->clock[t] - start, desc, t, flags };

	if (!g->left || g->failed)
		return;
	if (trace_writer_event(g->w, &e) < 0)
		g->failed = 1;
	if (--g->left % GEN_FLUSH_EVERY == 0 && trace_writer_flush(g->w) < 0)
		g->failed = 1;
}

static void gen_op(struct gen *g, unsigned t, uint32_t op, const uint32_t inner[GEN_NINNER])
{
	uint64_t start = g->clock[t];
	static const uint64_t lo[GEN_NINNER] = { 300, 200, 2000 }, hi[GEN_NINNER] = { 3000, 5000, 150000 };

	g->clock[t] += gen_rand(g, 200, 2000);
	for (int k = 0; k < GEN_NINNER; k++) {
		uint64_t s = g->clock[t];
		g->clock[t] += gen_rand(g, lo[k], hi[k]);
		gen_emit(g, t, inner[k], s, 0);
		g->clock[t] += gen_rand(g, 50, 500);
	}
	gen_emit(g, t, op, start, 0);
	g->clock[t] += gen_rand(g, 500, 5000); /* Python between operators */
}

static void gen_counters(struct gen *g, uint64_t ts)
{
	const struct trace_counter c[] = {
		{ ts, TRACE_CTR_CPU_PROCESS, GEN_PID, 100.0 + (double)gen_rand(g, 0, 2000) / 10 },
		{ ts, TRACE_CTR_CPU_SYSTEM, 0, 20.0 + (double)gen_rand(g, 0, 600) / 10 },
		{ ts, TRACE_CTR_RSS_BYTES, GEN_PID, (double)(2000000000 + gen_rand(g, 0, 100000000)) },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (trace_writer_counter(g->w, &c[i]) < 0)
			g->failed = 1;
	g->counters += sizeof(c) / sizeof(c[0]);
}

/* One training step on the main thread. */
static void gen_main_step(struct gen *g, uint64_t step)
{
	uint64_t step_start = g->clock[0], s;
	size_t ops[GEN_FWD_OPS];

	g->clock[0] += gen_rand(g, 1000, 10000);
	s = g->clock[0];
	g->clock[0] += gen_rand(g, 100000, 800000);
	gen_emit(g, 0, g->d_loader, s, 0);

	s = g->clock[0];
	for (int i = 0; i < GEN_FWD_OPS; i++) {
		ops[i] = (size_t)gen_rand(g, 0, GEN_NOPS - 1);
		gen_op(g, 0, g->d_op[ops[i]][0], g->d_inner[ops[i]][0]);
	}
	gen_emit(g, 0, g->d_fwd, s, 0);

	s = g->clock[0];
	for (int i = GEN_FWD_OPS - 1; i >= 0; i--)
		gen_op(g, 0, g->d_op[ops[i]][1], g->d_inner[ops[i]][1]);
	gen_emit(g, 0, g->d_bwd, s, 0);

	s = g->clock[0];
	for (int i = 0; i < GEN_OPT_OPS; i++)
		gen_op(g, 0, g->d_adam, g->d_adam_inner);
	gen_emit(g, 0, g->d_opt, s, 0);

	if (step % 10 == 9) {
		uint64_t m = g->clock[0];
		gen_emit(g, 0, g->d_mark_lr, m, TRACE_EVF_MARK);
	}
	if (step % 500 == 499) {
		s = g->clock[0];
		uint64_t ss = g->clock[0] += gen_rand(g, 1000, 5000);
		g->clock[0] += gen_rand(g, 10000000, 50000000);
		gen_emit(g, 0, g->d_save, ss, 0);
		gen_emit(g, 0, g->d_ckpt, s, 0);
	}
	gen_emit(g, 0, g->d_step, step_start, 0);
	if (g->clock[0] >= g->next_counter) {
		gen_counters(g, g->clock[0]);
		g->next_counter = g->clock[0] + 10000000; /* 10 ms */
	}
}

/* A data loader worker prepares the next batch while the step runs. */
static void gen_worker_step(struct gen *g, unsigned t)
{
	uint64_t s;

	if (g->clock[t] < g->clock[0])
		g->clock[t] = g->clock[0];
	for (int b = 0; b < 4; b++) {
		uint64_t r = g->clock[t];
		g->clock[t] += gen_rand(g, 5000, 20000);
		s = g->clock[t];
		g->clock[t] += gen_rand(g, 50000, 300000);
		gen_emit(g, t, g->d_decode, s, 0);
		s = g->clock[t];
		g->clock[t] += gen_rand(g, 20000, 100000);
		gen_emit(g, t, g->d_augment, s, 0);
		gen_emit(g, t, g->d_read, r, 0);
	}
	s = g->clock[t];
	g->clock[t] += gen_rand(g, 10000, 50000);
	gen_emit(g, t, g->d_collate, s, 0);
}

static int gen_threads(struct gen *g, uint64_t start, uint64_t end)
{
	for (unsigned t = 0; t < g->threads; t++) {
		char name[48];
		int n = t ? snprintf(name, sizeof(name), "DataLoaderWorker-%u", t)
			  : snprintf(name, sizeof(name), "MainThread");
		struct trace_thread th = {
			.index = t, .pid = GEN_PID, .tid = GEN_PID + t,
			.name_str = trace_writer_string(g->w, name, (size_t)n),
			.start_ns = start, .end_ns = end,
		};
		if (!th.name_str || trace_writer_thread(g->w, &th) < 0)
			return -1;
	}
	return 0;
}

static double gen_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int trace_gen_write(const char *path, uint64_t n, unsigned threads, struct trace_gen_stats *st)
{
	static struct gen g;
	const char *cmd = "python train.py --model synthetic --epochs 1";
	const uint64_t t0 = 1000000000000ull; /* a plausible CLOCK_MONOTONIC */
	struct trace_header h = {
		.sources = TRACE_SRC_NVTX | TRACE_SRC_PYTHON, .clock_domain = "CLOCK_MONOTONIC",
		.wall_offset_ns = 1700000000000000000ll - (int64_t)t0, .hostname = "bench-host",
		.pid = GEN_PID, .rank = -1, .cmdline = cmd, .start_ns = t0, .ncpus = 16,
		.gprof_version = GPDL_VERSION,
	};
	struct trace_process p = { GEN_PID, 1, t0, 0, -1, 0 };
	double began = gen_now();
	struct stat sb;
	int e;

	if (threads < 1 || threads > GEN_MAX_THREADS) {
		errno = EINVAL;
		return -1;
	}
	memset(&g, 0, sizeof(g));
	g.threads = threads;
	g.left = n;
	g.rng = 0x2545f4914f6cdd1dull;
	g.w = trace_writer_open(path, 1);
	if (!g.w)
		return -1;
	for (unsigned t = 0; t < threads; t++)
		g.clock[t] = t0 + 1000000;
	if (trace_writer_header(g.w, &h) < 0 ||
	    !(p.cmdline_str = trace_writer_string(g.w, cmd, strlen(cmd))) ||
	    trace_writer_process(g.w, &p) < 0 || gen_threads(&g, t0, 0) < 0)
		g.failed = 1;
	gen_descs(&g);
	for (uint64_t step = 0; g.left && !g.failed; step++) {
		gen_main_step(&g, step);
		for (unsigned t = 1; t < threads; t++)
			gen_worker_step(&g, t);
	}
	uint64_t end = g.clock[0] + 1000000;
	for (unsigned t = 1; t < threads; t++)
		if (g.clock[t] + 1000000 > end)
			end = g.clock[t] + 1000000;
	p.end_ns = end;
	p.exit_status = 0;
	if (!g.failed && (gen_threads(&g, t0, end) < 0 || trace_writer_process(g.w, &p) < 0))
		g.failed = 1;
	e = g.failed ? errno : 0;
	if (trace_writer_close(g.w, end) < 0 || g.failed) {
		if (e)
			errno = e;
		return -1;
	}
	if (st) {
		st->seconds = gen_now() - began;
		st->events = n;
		st->counters = g.counters;
		st->names = g.names;
		st->bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	}
	return 0;
}
