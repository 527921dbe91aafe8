/* rules_model.c - see rules.h: how the model runs on the GPUs (fp32-matmul,
 * data-parallel). */
#include "lib/analysis/advise/rules.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Whether a kernel's name says fp32 matrix multiply or convolution on the
 * CUDA cores: cuBLAS's and cuDNN's single-precision kernels ("sgemm",
 * "scudnn", "implicit_convolve_sgemm"), not their Tensor Core ones
 * ("tensorop", "hmma", "xmma", "s1688gemm": TF32, "884", "16816"). */
static int is_fp32_matmul(const char *name)
{
	static const char *const tc[] = {"tensorop", "hmma", "xmma", "1688", "884", "16816", "wmma"};
	if (!strcasestr(name, "sgemm") && !strcasestr(name, "scudnn"))
		return 0;
	for (size_t k = 0; k < sizeof(tc) / sizeof(tc[0]); k++)
		if (strcasestr(name, tc[k]))
			return 0;
	return 1;
}

struct fp32_kernel {
	uint32_t desc;
	uint64_t calls, ns;
};

static int by_ns(const void *x, const void *y)
{
	const struct fp32_kernel *a = x, *b = y;
	return a->ns != b->ns ? (a->ns > b->ns ? -1 : 1) : (a->desc > b->desc) - (a->desc < b->desc);
}

/* Counted kernels (gpu.h) on devices with Tensor Cores (compute capability
 * 7.0 or later). */
static void fp32_matmul_run(const struct adv_input *in, struct adv_list *out)
{
	const struct analysis *a = in->a;
	const struct store *s = &a->store;
	if (!a->gpu.has_gpu || !in->window_steps || !a->gpu.counted_ns)
		return;
	struct fp32_kernel *k = xcalloc(s->ndescs ? s->ndescs : 1, sizeof(*k));
	uint64_t ns = 0, calls = 0, tc_ns = 0;
	int cc_major = 0;
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE || t->dev == STORE_NONE || !s->devices[t->dev].known ||
		    s->devices[t->dev].props.cc_major < 7)
			continue;
		if (s->devices[t->dev].props.cc_major > cc_major)
			cc_major = s->devices[t->dev].props.cc_major;
		for (size_t i = 0; i < t->n; i++) {
			uint32_t d = store_ev_desc(t, i);
			if (!(a->gpu.tracks[ti].flags[i] & GPU_COUNTED) ||
			    store_ev_type(s, t, i) != TRACE_EV_KERNEL)
				continue;
			tc_ns += t->dur[i];
			if (!is_fp32_matmul(store_name(s, s->descs[d].name)))
				continue;
			k[d].desc = d;
			k[d].calls++;
			k[d].ns += t->dur[i];
			ns += t->dur[i];
			calls++;
		}
	}
	/* 10 % of the kernels' time on such GPUs */
	if (!calls || (double)ns < 0.10 * (double)tc_ns) {
		free(k);
		return;
	}
	double per_step = (double)ns / (double)in->window_steps / 2.0;
	struct adv_finding *f = adv_add(out, &adv_rule_fp32_matmul, in, per_step,
					"fp32 matrix multiplies and convolutions on the CUDA cores of a GPU "
					"with Tensor Cores: %.1f %% of its kernel time",
					100.0 * (double)ns / (double)tc_ns);
	adv_evidence(f, "%llu kernel runs, %.2f ms in all over the %llu steps, on a GPU of compute "
			"capability %d.x",
		     (unsigned long long)calls, (double)ns / 1e6, (unsigned long long)in->window_steps,
		     cc_major);
	qsort(k, s->ndescs, sizeof(*k), by_ns);
	for (uint32_t i = 0; i < s->ndescs && i < 3 && k[i].calls; i++)
		adv_evidence(f, "%s: %llu runs, %.2f ms", store_name(s, s->descs[k[i].desc].name),
			     (unsigned long long)k[i].calls, (double)k[i].ns / 1e6);
	adv_evidence(f, "the saving assumes half of their time back: an estimate (Tensor Cores run "
			"fp16/bf16 matrix multiplies several times faster; what is left depends on "
			"the model)");
	adv_try(f, "automatic mixed precision: torch.autocast(\"cuda\", dtype=torch.float16) with a "
		   "torch.cuda.amp.GradScaler (bfloat16 on Ampere and later, no scaler needed); or, "
		   "on Ampere and later, TF32 (torch.backends.cuda.matmul.allow_tf32 = True, "
		   "torch.backends.cudnn.allow_tf32 = True)");
	adv_command(f, in, "--view kernel");
	free(k);
}

const struct adv_rule adv_rule_fp32_matmul = {
	.id = "fp32-matmul",
	.title = "FP32 matrix multiplies on a GPU with Tensor Cores (no AMP)",
	.definition = "the counted kernels, on GPUs of compute capability 7.0 or later, whose names "
		      "say single-precision GEMM or convolution on the CUDA cores (sgemm, scudnn; "
		      "not tensorop, hmma, xmma, 1688, 884, 16816, wmma: Tensor Core kernels), "
		      "their share of those GPUs' kernel time; saving: half of their time per step "
		      "(their time in the window / its steps), an estimate",
	.threshold = "at least 10 % of the kernel time on GPUs with Tensor Cores",
	.why = "below a tenth of the kernel time, even a several-fold faster matrix multiply gives "
	       "back little, and mixed precision has a cost in numerics to weigh",
	.run = fp32_matmul_run,
};

/* One process driving several GPUs: torch.nn.DataParallel's pattern (a
 * part, analysis.h: a file's rank or its rest, whose GPU work runs on two
 * devices or more). */
static void data_parallel_run(const struct adv_input *in, struct adv_list *out)
{
	const struct analysis *a = in->a;
	const struct store *s = &a->store;
	if (!a->gpu.has_gpu || !in->window_steps || !s->ndevices)
		return;
	uint64_t *busy = xcalloc((size_t)a->nparts * s->ndevices, sizeof(*busy));
	for (uint32_t ti = 0; ti < s->ntracks; ti++) {
		const struct store_track *t = &s->tracks[ti];
		if (t->kind != STORE_TRACK_DEVICE || t->dev == STORE_NONE)
			continue;
		struct ivl_set u;
		ivl_set_init(&u);
		for (size_t i = 0; i < t->n; i++)
			if (store_ev_is_gpu_work(s, t, i) && t->dur[i])
				ivl_set_add(&u, t->start[i], t->start[i] + t->dur[i]);
		ivl_set_normalize(&u);
		ivl_set_seal(&u);
		for (size_t k = 0; k < u.n; k++)
			busy[(size_t)a->track_part[ti] * s->ndevices + t->dev] +=
				ivl_set_overlap(&a->window, u.v[k].start, u.v[k].end);
		ivl_set_free(&u);
	}
	for (uint32_t p = 0; p < a->nparts; p++) {
		const uint64_t *b = &busy[(size_t)p * s->ndevices];
		uint32_t ndev = 0;
		uint64_t most = 0, sum = 0;
		for (uint32_t d = 0; d < s->ndevices; d++) {
			ndev += b[d] > 0;
			most = b[d] > most ? b[d] : most;
			sum += b[d];
		}
		if (ndev < 2)
			continue;
		double gap = ((double)most * ndev - (double)sum) / ndev / (double)in->window_steps;
		struct adv_finding *f = adv_add(out, &adv_rule_data_parallel, in, gap,
						"one process drives %u GPUs (torch.nn.DataParallel's way): "
						"a Python thread per GPU and the gathers on one of them",
						ndev);
		for (uint32_t d = 0; d < s->ndevices; d++)
			if (b[d])
				adv_evidence(f, "GPU%u: busy %.2f ms per step", s->devices[d].id,
					     (double)b[d] / (double)in->window_steps / 1e6);
		adv_evidence(f, "the saving is what the GPUs less busy than the busiest could have "
				"worked, per step, averaged over the GPUs: an estimate of balancing them");
		adv_try(f, "torch.nn.parallel.DistributedDataParallel, one process per GPU (torchrun "
			   "--nproc-per-node N): no GIL between the GPUs, no scatter and gather on one "
			   "of them, gradients all-reduced during the backward");
		adv_command(f, in, "--view device --view kernel --thread-sep");
	}
	free(busy);
}

const struct adv_rule adv_rule_data_parallel = {
	.id = "data-parallel",
	.title = "DataParallel (one process, many GPUs) instead of DistributedDataParallel",
	.definition = "per process (a trace's rank, or the rest of the trace), the GPUs its GPU "
		      "work ran on and each one's busy time in the window; saving: the busiest GPU's "
		      "time less each GPU's, averaged over them, per step: an estimate",
	.threshold = "one process with GPU work on two GPUs or more",
	.why = "PyTorch recommends DistributedDataParallel over DataParallel in every case: "
	       "DataParallel runs the replicas from one Python process (the GIL), scatters the "
	       "inputs and gathers the outputs on one GPU, and leaves the others waiting",
	.run = data_parallel_run,
};
