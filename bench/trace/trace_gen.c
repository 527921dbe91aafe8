/*
 * trace_gen.c - writes synthetic training-loop traces (see trace_gen.h).
 *
 * Time is simulated, not measured: each thread has its own clock that the
 * generator advances by pseudo-random durations, so a trace of 10 million
 * events takes seconds to write and covers minutes of "run". GPU streams
 * have clocks too: the time their queue drains, which a launch can only
 * extend, so GPU work starts after its launch and in stream order.
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

/* Kernels as the PyTorch profiler names them; operator i launches kernel
 * (2i + grad) % GEN_NKERNELS. */
static const char *const gen_kernel_names[] = {
	"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
	"at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
	"at::detail::Array<char*, 3>)",
	"ampere_sgemm_128x64_tn",
	"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
	"segment_k_off_kernel__5x_cublas",
	"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
	"at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
	"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
	"at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >"
	"(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
	"unsigned int, float, 4>)",
	"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>",
	"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"
	"(int, float, float const*, float const*, float const*, float*, float*, float*)",
	"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl"
	"(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::"
	"{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >",
	"void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, "
	"unsigned int, 1, 4, bool>",
	"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>"
	"(cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4::Params)",
	"void at::native::index_elementwise_kernel<128, 4, "
	"at::native::gpu_index_kernel<at::native::index_kernel_impl<"
	"at::native::OpaqueType<4> > >",
	"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda"
	"(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#8}::"
	"operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, "
	"TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
	"at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >",
};
#define GEN_NKERNELS (sizeof(gen_kernel_names) / sizeof(gen_kernel_names[0]))

#define GEN_STREAM_COMPUTE 7
#define GEN_STREAM_NCCL 13
#define GEN_LIVE 16 /* device allocations alive at once, at most */
#define GEN_NCCL_EVERY 6 /* backward operators per all-reduce */

/* The GPU half of the simulation: desc ids, the streams' queues, memory. */
struct gen_gpu {
	uint32_t d_launch, d_memcpy_api, d_memset_api, d_nccl_op, d_item, d_memory;
	uint32_t d_kernel[GEN_NOPS][2], d_adam_kernel, d_nccl;
	uint32_t d_htod, d_dtoh, d_memset;
	unsigned track[2];   /* the compute and NCCL streams' track indices */
	uint64_t free_at[2]; /* when each stream's queue drains */
	uint64_t corr, op_id;
	uint64_t live_addr[GEN_LIVE], live_bytes[GEN_LIVE];
	unsigned live_n, live_first;
	uint64_t next_addr, in_use;
};

struct gen {
	struct trace_writer *w;
	uint64_t left, rng, clock[GEN_MAX_THREADS], next_counter;
	unsigned threads;
	uint32_t d_step, d_loader, d_fwd, d_bwd, d_opt;
	uint32_t d_op[GEN_NOPS][2];                /* forward, grad */
	uint32_t d_inner[GEN_NOPS][2][GEN_NINNER];
	uint32_t d_adam, d_adam_inner[GEN_NINNER];
	uint32_t d_read, d_decode, d_augment, d_collate, d_mark_lr, d_ckpt, d_save;
	uint64_t counters, names, gpu_events;
	int failed;
	int gpu; /* TRACE_GEN_GPU */
	struct gen_gpu G;
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

/* Writes one event on track t; returns whether it was written. */
static int gen_emit_at(struct gen *g, unsigned t, uint32_t desc, uint64_t start, uint64_t dur,
		       uint8_t flags, const struct trace_event_ext *x)
{
	struct trace_event e = { start, dur, desc, t, flags, x };

	if (!g->left || g->failed)
		return 0;
	if (trace_writer_event(g->w, &e) < 0)
		g->failed = 1;
	if (--g->left % GEN_FLUSH_EVERY == 0 && trace_writer_flush(g->w) < 0)
		g->failed = 1;
	return 1;
}

static void gen_emit(struct gen *g, unsigned t, uint32_t desc, uint64_t start, uint8_t flags)
{
	gen_emit_at(g, t, desc, start, g->clock[t] - start, flags, NULL);
}

/* ---- GPU work ------------------------------------------------------------------ */

static void gen_gpu_descs(struct gen *g)
{
	struct gen_gpu *G = &g->G;

	for (size_t i = 0; i < GEN_NOPS; i++)
		for (int grad = 0; grad < 2; grad++)
			G->d_kernel[i][grad] = gen_desc(
				g, gen_kernel_names[(2 * i + (size_t)grad) % GEN_NKERNELS], NULL,
				TRACE_EV_KERNEL);
	G->d_adam_kernel = gen_desc(g,
				    "void at::native::(anonymous namespace)::multi_tensor_apply_"
				    "kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, "
				    "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4> >",
				    NULL, TRACE_EV_KERNEL);
	G->d_nccl = gen_desc(g, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned "
				"long, ncclWork*)", NULL, TRACE_EV_COMMUNICATION);
	G->d_launch = gen_desc(g, "cudaLaunchKernel", NULL, TRACE_EV_CUDA_RUNTIME);
	G->d_memcpy_api = gen_desc(g, "cudaMemcpyAsync", NULL, TRACE_EV_CUDA_RUNTIME);
	G->d_memset_api = gen_desc(g, "cudaMemsetAsync", NULL, TRACE_EV_CUDA_RUNTIME);
	G->d_nccl_op = gen_desc(g, "nccl:all_reduce", "gprof-dl", TRACE_EV_OPERATOR);
	G->d_item = gen_desc(g, "aten::item", "gprof-dl", TRACE_EV_OPERATOR);
	G->d_memory = gen_desc(g, "[memory]", NULL, TRACE_EV_MEMORY);
	G->d_htod = gen_desc(g, "Memcpy HtoD (Pinned -> Device)", NULL, TRACE_EV_MEMCPY);
	G->d_dtoh = gen_desc(g, "Memcpy DtoH (Device -> Pageable)", NULL, TRACE_EV_MEMCPY);
	G->d_memset = gen_desc(g, "Memset (Device)", NULL, TRACE_EV_MEMSET);
}

/* Device 0 as an H100 SXM reports itself. */
static int gen_gpu_device(struct gen *g)
{
	const char *name = "NVIDIA H100 80GB HBM3";
	struct trace_device d = {
		.id = 0, .name_str = trace_writer_string(g->w, name, strlen(name)),
		.sm_count = 132, .max_threads_per_sm = 2048, .max_threads_per_block = 1024,
		.max_blocks_per_sm = 32, .warp_size = 32, .regs_per_sm = 65536,
		.regs_per_block = 65536, .smem_per_sm = 233472, .smem_per_block = 49152,
		.total_memory = 85045231616ull, .clock_khz = 1980000, .cc_major = 9, .cc_minor = 0,
	};

	return d.name_str ? trace_writer_device(g->w, &d) : -1;
}

/* A runtime call on host thread t that queues GPU work (desc gpu, lasting dur)
 * on stream s, no earlier than `after`: the call's event, then the work's,
 * both with the next correlation id. x holds the work's details; a call that
 * is not x->is_async returns when the work is done. */
static void gen_gpu_call(struct gen *g, unsigned t, uint32_t api, uint32_t gpu, unsigned s,
			 uint64_t after, uint64_t dur, struct trace_event_ext *x)
{
	struct gen_gpu *G = &g->G;
	struct trace_event_ext call = { .correlation = ++G->corr, .external_id = G->op_id };
	uint64_t ls = g->clock[t], start;

	g->clock[t] += gen_rand(g, 2500, 8000); /* the runtime call itself */
	start = ls + gen_rand(g, 1500, 6000);   /* launch latency */
	if (start < G->free_at[s])
		start = G->free_at[s];
	if (start < after)
		start = after;
	G->free_at[s] = start + dur;
	if (api == G->d_memcpy_api && !x->is_async && g->clock[t] < start + dur + 1000)
		g->clock[t] = start + dur + 1000;
	gen_emit_at(g, t, api, ls, g->clock[t] - ls, 0, &call);
	x->correlation = call.correlation;
	x->external_id = G->op_id;
	x->device = 0;
	if (gen_emit_at(g, G->track[s], gpu, start, dur, 0, x))
		g->gpu_events++;
}

/* A kernel's launch configuration, as a real one has it: block size,
 * registers per thread and static shared memory are the compiled kernel's and
 * do not change; dynamic shared memory and grid follow the tensor shapes, of
 * which a training loop has a few per kernel (GEN_SHAPES), seen every step. */
#define GEN_SHAPES 8
static void gen_launch_config(uint32_t kernel, unsigned shape, struct trace_event_ext *x)
{
	uint64_t h = (uint64_t)kernel * 0x9e3779b97f4a7c15ull;
	uint32_t block, most;

	h ^= h >> 29;
	block = 128u << (h % 4);
	most = 65536 / block;
	if (most > 255)
		most = 255;
	x->block[0] = block;
	x->block[1] = x->block[2] = 1;
	x->registers = 16 + (uint32_t)((h >> 8) % (most - 15));
	x->static_smem = (h >> 16) & 1 ? 16384 : 0;
	h = (h ^ (shape + 1)) * 0xbf58476d1ce4e5b9ull;
	h ^= h >> 31;
	x->grid[0] = 1 + (uint32_t)(h % 4096);
	x->grid[1] = x->grid[2] = 1;
	x->dynamic_smem = (uint32_t)((h >> 12) % 5) * 8192;
}

static void gen_gpu_kernel(struct gen *g, unsigned t, uint32_t kernel)
{
	struct trace_event_ext x = { 0 };

	gen_launch_config(kernel, (unsigned)gen_rand(g, 0, GEN_SHAPES - 1), &x);
	gen_gpu_call(g, t, g->G.d_launch, kernel, 0, 0, gen_rand(g, 3000, 80000), &x);
}

static void gen_gpu_copy(struct gen *g, unsigned t, int to_host)
{
	struct trace_event_ext x = {
		.bytes = to_host ? 4 : gen_rand(g, 1, 1024) * 4096, /* up to 4 MiB */
		.copy_kind = to_host ? TRACE_COPY_DTOH : TRACE_COPY_HTOD,
		.src_kind = to_host ? TRACE_MEM_DEVICE : TRACE_MEM_PINNED,
		.dst_kind = to_host ? TRACE_MEM_PAGEABLE : TRACE_MEM_DEVICE,
		.is_async = !to_host,
	};
	uint64_t dur = 1500 + x.bytes / 25; /* about 25 GB/s */

	gen_gpu_call(g, t, g->G.d_memcpy_api, to_host ? g->G.d_dtoh : g->G.d_htod, 0, 0, dur, &x);
}

static void gen_gpu_memset(struct gen *g, unsigned t)
{
	struct trace_event_ext x = {
		.bytes = gen_rand(g, 1, 4096) * 512, .dst_kind = TRACE_MEM_DEVICE, .is_async = 1,
	};

	gen_gpu_call(g, t, g->G.d_memset_api, g->G.d_memset, 0, 0, 1000 + x.bytes / 1000, &x);
}

/* An allocation (bytes > 0) or a free of a live block, as a Memory instant. */
static void gen_gpu_memory(struct gen *g, unsigned t, uint64_t addr, int64_t bytes)
{
	struct gen_gpu *G = &g->G;
	struct trace_event_ext x = { .bytes = (uint64_t)bytes, .address = addr, .device = 0,
				     .dst_kind = TRACE_MEM_DEVICE };

	G->in_use += (uint64_t)bytes; /* modulo 2^64: a free subtracts */
	x.total_allocated = G->in_use;
	gen_emit_at(g, t, G->d_memory, g->clock[t], 0, TRACE_EVF_MARK, &x);
	g->clock[t] += gen_rand(g, 100, 400);
}

static void gen_gpu_free_oldest(struct gen *g, unsigned t)
{
	struct gen_gpu *G = &g->G;
	unsigned i = G->live_first;

	gen_gpu_memory(g, t, G->live_addr[i], -(int64_t)G->live_bytes[i]);
	G->live_first = (i + 1) % GEN_LIVE;
	G->live_n--;
}

static void gen_gpu_alloc(struct gen *g, unsigned t)
{
	struct gen_gpu *G = &g->G;
	uint64_t bytes = gen_rand(g, 1, 131072) * 512; /* up to 64 MiB */
	unsigned i;

	if (G->live_n == GEN_LIVE)
		gen_gpu_free_oldest(g, t);
	i = (G->live_first + G->live_n++) % GEN_LIVE;
	G->live_addr[i] = G->next_addr;
	G->live_bytes[i] = bytes;
	G->next_addr += (bytes + 0xfffff) & ~(uint64_t)0xfffff;
	gen_gpu_memory(g, t, G->live_addr[i], (int64_t)bytes);
}

/* The compute range of an operator under CUDA: its launches. */
static void gen_gpu_compute(struct gen *g, unsigned t, uint32_t kernel)
{
	g->clock[t] += gen_rand(g, 200, 2000);
	if (gen_rand(g, 0, 5) == 0)
		gen_gpu_copy(g, t, 0);
	gen_gpu_kernel(g, t, kernel);
	if (gen_rand(g, 0, 9) == 0)
		gen_gpu_memset(g, t);
	g->clock[t] += gen_rand(g, 200, 2000);
}

/* nccl:all_reduce of the gradients computed so far: the NCCL kernel waits for
 * the compute stream's queue as it is now, then runs beside what follows. */
static void gen_gpu_all_reduce(struct gen *g, unsigned t)
{
	struct gen_gpu *G = &g->G;
	struct trace_event_ext x = { .grid = { 32, 1, 1 }, .block = { 640, 1, 1 },
				     .registers = 96, .dynamic_smem = 18432 };
	uint64_t s = g->clock[t];
	struct trace_event_ext op = { .external_id = ++G->op_id };

	g->clock[t] += gen_rand(g, 1000, 4000);
	gen_gpu_call(g, t, G->d_launch, G->d_nccl, 1, G->free_at[0], gen_rand(g, 100000, 600000),
		     &x);
	g->clock[t] += gen_rand(g, 1000, 4000);
	gen_emit_at(g, t, G->d_nccl_op, s, g->clock[t] - s, 0, &op);
}

/* The end of a step: aten::item copies the loss to the host, which waits for
 * the GPU, and the step's memory goes back. */
static void gen_gpu_step_end(struct gen *g, unsigned t)
{
	struct gen_gpu *G = &g->G;
	struct trace_event_ext op = { .external_id = ++G->op_id };
	uint64_t s = g->clock[t];

	g->clock[t] += gen_rand(g, 200, 1000);
	while (G->live_n)
		gen_gpu_free_oldest(g, t);
	gen_gpu_copy(g, t, 1);
	g->clock[t] += gen_rand(g, 200, 1000);
	gen_emit_at(g, t, G->d_item, s, g->clock[t] - s, 0, &op);
}

static int gen_gpu_tracks(struct gen *g, uint64_t start, uint64_t end)
{
	static const uint64_t stream[2] = { GEN_STREAM_COMPUTE, GEN_STREAM_NCCL };

	for (unsigned s = 0; s < 2; s++) {
		char name[32];
		int n = snprintf(name, sizeof(name), "stream %u", (unsigned)stream[s]);
		struct trace_thread th = {
			.index = g->G.track[s], .pid = GEN_PID, .tid = 0,
			.name_str = trace_writer_string(g->w, name, (size_t)n),
			.start_ns = start, .end_ns = end,
			.kind = TRACE_TRACK_STREAM, .device = 0, .context = 1, .stream = stream[s],
		};
		if (!th.name_str || trace_writer_thread(g->w, &th) < 0)
			return -1;
	}
	return 0;
}

/* An operator and its inner ranges; under CUDA (kernel != 0) it allocates
 * now and then and its compute range launches kernel. */
static void gen_op(struct gen *g, unsigned t, uint32_t op, const uint32_t inner[GEN_NINNER],
		   uint32_t kernel)
{
	uint64_t start = g->clock[t];
	static const uint64_t lo[GEN_NINNER] = { 300, 200, 2000 }, hi[GEN_NINNER] = { 3000, 5000, 150000 };
	struct trace_event_ext x = { 0 };

	g->clock[t] += gen_rand(g, 200, 2000);
	if (kernel) {
		x.external_id = ++g->G.op_id;
		if (gen_rand(g, 0, 1))
			gen_gpu_alloc(g, t);
	}
	for (int k = 0; k < GEN_NINNER; k++) {
		uint64_t s = g->clock[t];
		if (kernel && k == GEN_NINNER - 1)
			gen_gpu_compute(g, t, kernel);
		else
			g->clock[t] += gen_rand(g, lo[k], hi[k]);
		gen_emit(g, t, inner[k], s, 0);
		g->clock[t] += gen_rand(g, 50, 500);
	}
	gen_emit_at(g, t, op, start, g->clock[t] - start, 0, kernel ? &x : NULL);
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
		gen_op(g, 0, g->d_op[ops[i]][0], g->d_inner[ops[i]][0],
		       g->gpu ? g->G.d_kernel[ops[i]][0] : 0);
	}
	gen_emit(g, 0, g->d_fwd, s, 0);

	s = g->clock[0];
	for (int i = GEN_FWD_OPS - 1; i >= 0; i--) {
		gen_op(g, 0, g->d_op[ops[i]][1], g->d_inner[ops[i]][1],
		       g->gpu ? g->G.d_kernel[ops[i]][1] : 0);
		if (g->gpu && i % GEN_NCCL_EVERY == 0)
			gen_gpu_all_reduce(g, 0);
	}
	gen_emit(g, 0, g->d_bwd, s, 0);

	s = g->clock[0];
	if (g->gpu && g->G.free_at[0] < g->G.free_at[1]) /* the optimizer waits for the gradients */
		g->G.free_at[0] = g->G.free_at[1];
	for (int i = 0; i < GEN_OPT_OPS; i++)
		gen_op(g, 0, g->d_adam, g->d_adam_inner, g->gpu ? g->G.d_adam_kernel : 0);
	gen_emit(g, 0, g->d_opt, s, 0);
	if (g->gpu)
		gen_gpu_step_end(g, 0);

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
	return trace_gen_write_flags(path, n, threads, 0, st);
}

int trace_gen_write_flags(const char *path, uint64_t n, unsigned threads, unsigned flags,
			  struct trace_gen_stats *st)
{
	static struct gen g;
	const char *cmd = "python train.py --model synthetic --epochs 1";
	const uint64_t t0 = 1000000000000ull; /* a plausible CLOCK_MONOTONIC */
	struct trace_header h = {
		.sources = TRACE_SRC_NVTX | TRACE_SRC_PYTHON, .clock_domain = "CLOCK_MONOTONIC",
		.wall_offset_ns = 1700000000000000000ll - (int64_t)t0, .hostname = "bench-host",
		.pid = GEN_PID, .rank = -1, .cmdline = cmd, .start_ns = t0, .ncpus = 16,
		.gprof_version = GPDL_VERSION, .world_size = -1,
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
	g.gpu = (flags & TRACE_GEN_GPU) != 0;
	if (g.gpu) {
		h.sources |= TRACE_SRC_CUPTI;
		h.rank = 0;
		h.world_size = 8;
		h.dist_backend = "nccl";
		g.G.track[0] = threads;
		g.G.track[1] = threads + 1;
		g.G.next_addr = 0x7f2a00000000ull;
	}
	g.left = n;
	g.rng = 0x2545f4914f6cdd1dull;
	g.w = trace_writer_open(path, 1);
	if (!g.w)
		return -1;
	for (unsigned t = 0; t < threads; t++)
		g.clock[t] = t0 + 1000000;
	if (trace_writer_header(g.w, &h) < 0 ||
	    !(p.cmdline_str = trace_writer_string(g.w, cmd, strlen(cmd))) ||
	    trace_writer_process(g.w, &p) < 0 || gen_threads(&g, t0, 0) < 0 ||
	    (g.gpu && (gen_gpu_tracks(&g, t0, 0) < 0 || gen_gpu_device(&g) < 0)))
		g.failed = 1;
	gen_descs(&g);
	if (g.gpu)
		gen_gpu_descs(&g);
	for (uint64_t step = 0; g.left && !g.failed; step++) {
		gen_main_step(&g, step);
		for (unsigned t = 1; t < threads; t++)
			gen_worker_step(&g, t);
	}
	uint64_t end = g.clock[0] + 1000000;
	for (unsigned t = 1; t < threads; t++)
		if (g.clock[t] + 1000000 > end)
			end = g.clock[t] + 1000000;
	for (unsigned s = 0; g.gpu && s < 2; s++)
		if (g.G.free_at[s] + 1000000 > end)
			end = g.G.free_at[s] + 1000000;
	p.end_ns = end;
	p.exit_status = 0;
	if (!g.failed && (gen_threads(&g, t0, end) < 0 ||
			  (g.gpu && gen_gpu_tracks(&g, t0, end) < 0) ||
			  trace_writer_process(g.w, &p) < 0))
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
		st->gpu_events = g.gpu_events;
		st->bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	}
	return 0;
}
