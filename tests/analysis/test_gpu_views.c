/*
 * test_gpu_views.c - every number of every view on the golden GPU trace
 * (tracebuild.c draws its timeline), worked out by hand here: GPU work tied
 * to its launching call and through it to the ranges around the call,
 * overlaps across threads and streams, a kernel outside any operator, work
 * with no call, a step with no GPU work, nested operators, copy kinds,
 * allocations with a known peak, occupancy with known device properties,
 * communication overlapping computation; then the correlation join's hash
 * path, the store's details through the merge sort, and the end-of-run
 * report's nvprof tables.
 *
 * The window is step 1 [1000, 11000) and step 2 [12000, 20000): 18000 ns.
 * Counted GPU work (launched in the window, or with no call and in it):
 *   gemm 2000 + 1000, gemm_grad 1000, nccl 3000, adam_kernel 1000, fill 200
 *   (Kernel 8200); HtoD 400 + 500, DtoH 50, DtoD 100 (Memcpy 1050); Memset
 *   100: 9350 ns, the 100% of GPU ratios. The orphan kernel [11200, 11700)
 *   has no call and lies in the gap: not counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/analysis/store/gpu.h"
#include "lib/analysis/runend.h"
#include "lib/analysis/summary.h"
#include "lib/analysis/views/view_memory.h"
#include "tests/analysis/tracebuild.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 18000.0
#define GPU_ALL 9350.0

static const struct view_opts opts = {.sort = SORT_CPU_TOTAL, .unit = TIME_UNIT_NS};

static struct analysis golden;

static int setup(void **state)
{
	(void)state;
	const char *path = tb_gpu_trace();
	char err[512];
	analysis_init(&golden);
	if (analysis_load(&golden, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(&golden);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	analysis_free(&golden);
	tb_cleanup();
	return 0;
}

static struct table *build(const char *view, const struct view_opts *o)
{
	const struct view *v = view_find(view);
	assert_non_null(v);
	return v->build(v, &golden, o);
}

static void assert_near(double x, double y)
{
	if (fabs(x - y) > 1e-6 * (fabs(y) + 1))
		fail_msg("%.9g != %.9g", x, y);
}

static double pct(double part, double whole)
{
	return 100.0 * part / whole;
}

/* The row at a path of names ("linear/matmul/gemm") in part p. */
static const struct trow *path_row(const struct table *t, size_t p, const char *path)
{
	assert_true(p < t->nparts);
	const struct tpart *part = &t->parts[p];
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	size_t from = 0;
	unsigned depth = 0;
	const struct trow *found = NULL;
	for (char *name = strtok(buf, "/"); name; name = strtok(NULL, "/"), depth++) {
		found = NULL;
		for (size_t i = from; i < part->nrows; i++) {
			const struct trow *r = &part->rows[i];
			if (r->depth < depth)
				break;
			if (r->depth == depth && strcmp(r->cells[0].v.text, name) == 0) {
				found = r;
				from = i + 1;
				break;
			}
		}
		if (!found)
			fail_msg("no row '%s' in '%s'", path, t->title);
	}
	return found;
}

/* Name, Calls, then Total/Avg/Max/Min/Ratio from column col. */
static void assert_stats(const struct trow *r, unsigned col, double total, double avg, double max,
			 double min, double ratio)
{
	assert_true(r->cells[col].set);
	assert_near(r->cells[col].v.ns, total);
	assert_near(r->cells[col + 1].v.ns, avg);
	assert_near(r->cells[col + 2].v.ns, max);
	assert_near(r->cells[col + 3].v.ns, min);
	assert_near(r->cells[col + 4].v.pct, ratio);
}

static void assert_unset(const struct trow *r, unsigned col, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		assert_false(r->cells[col + i].set);
}

static void assert_order(const struct table *t, size_t p, const char *const *names, size_t n)
{
	const struct tpart *part = &t->parts[p];
	size_t k = 0;
	for (size_t i = 0; i < part->nrows; i++) {
		if (part->rows[i].depth)
			continue;
		if (k >= n || strcmp(part->rows[i].cells[0].v.text, names[k]) != 0)
			fail_msg("row %zu of '%s' is '%s', expected '%s'", k, t->title,
				 part->rows[i].cells[0].v.text, k < n ? names[k] : "(none)");
		k++;
	}
	assert_int_equal(k, n);
}

/* The store track of a host thread (by tid) or a GPU stream (by stream id). */
static uint32_t track_of(const struct analysis *a, int stream, uint64_t id)
{
	for (uint32_t i = 0; i < a->store.ntracks; i++) {
		const struct store_track *t = &a->store.tracks[i];
		if (stream ? t->kind == STORE_TRACK_DEVICE && t->stream == id
			   : t->kind == STORE_TRACK_HOST && t->tid == id)
			return i;
	}
	fail_msg("no track %s %llu", stream ? "stream" : "tid", (unsigned long long)id);
	return 0;
}

/* ---- the join and what counts --------------------------------------------------- */

static void test_correlation(void **state)
{
	(void)state;
	const struct gpu_info *g = &golden.gpu;
	assert_true(golden.from_steps);
	assert_int_equal(golden.steps, 2); /* "ProfileStep#1" is a step by its name */
	assert_int_equal(golden.window_ns, 18000);
	assert_int_equal(g->work, 12);   /* 7 kernels (the orphan too), 5 copies and sets */
	assert_int_equal(g->linked, 10); /* all but the orphan kernel and the DtoD copy */
	assert_int_equal(g->counted, 11); /* the DtoD by its own time, not the orphan */
	assert_int_equal(g->counted_ns, 9350);
	assert_int_equal(g->counted_type_ns[TRACE_EV_KERNEL], 8200);
	assert_int_equal(g->counted_type_ns[TRACE_EV_MEMCPY], 1050);
	assert_int_equal(g->counted_type_ns[TRACE_EV_MEMSET], 100);
	/* T0's calls launched 9 pieces, T1's one */
	uint32_t t0 = track_of(&golden, 0, 10), t1 = track_of(&golden, 0, 11);
	assert_int_equal(g->tracks[t0].nlaunches, 9);
	assert_int_equal(g->tracks[t1].nlaunches, 1);
	for (size_t k = 1; k < g->tracks[t0].nlaunches; k++)
		assert_true(g->tracks[t0].launches[k - 1].call <= g->tracks[t0].launches[k].call);
	/* the NCCL kernel is communication, by its name and by its operator */
	uint32_t s1i = track_of(&golden, 1, 13);
	const struct store_track *s1 = &golden.store.tracks[s1i];
	assert_int_equal(s1->n, 5); /* and the step's copy, which is no GPU work */
	for (size_t i = 0; i < s1->n; i++) {
		const char *name = store_name(&golden.store,
					      golden.store.descs[store_ev_desc(s1, i)].name);
		assert_int_equal((g->tracks[s1i].flags[i] & GPU_COMM) != 0,
				 strcmp(name, "ncclKernel_AllReduce") == 0);
	}
}

/* ---- Device, Overview, Distributed ---------------------------------------------------- */

static void test_device_overview_distributed(void **state)
{
	(void)state;
	/* GPU0 ran kernels [2500, 5500), [6400, 7400) and [8400, 11400) clipped
	 * to [8400, 11000): 3000 + 1000 + 2600 = 6600 of 18000 */
	struct table *t = build("device", &opts);
	assert_near(path_row(t, 0, "GPU0")->cells[1].v.pct, pct(6600, WINDOW));
	table_free(t);

	t = build("overview", &opts);
	const struct trow *r = path_row(t, 0, "ProfileStep");
	assert_int_equal(r->cells[1].v.count, 2);
	assert_near(r->cells[2].v.ns, 18000);
	static const struct {
		const char *type;
		uint64_t calls;
		double ns;
	} host[] = {
		{"Forward", 2, 8000},	  {"Operator", 8, 7690},      {"UserDefined", 2, 3500},
		{"Dataloader", 2, 3000},  {"Backward", 1, 3000},      {"CudaRuntime", 11, 1370},
		{"Optimization", 1, 1000}, {"OperatorInner", 1, 800},
	};
	for (unsigned i = 0; i < sizeof(host) / sizeof(host[0]); i++) {
		char path[64];
		snprintf(path, sizeof(path), "ProfileStep/%s", host[i].type);
		r = path_row(t, 0, path);
		assert_int_equal(r->depth, 1);
		assert_ptr_equal(r, &t->parts[0].rows[i + 1]); /* longest first */
		assert_int_equal(r->cells[1].v.count, host[i].calls);
		assert_near(r->cells[2].v.ns, host[i].ns);
		assert_near(r->cells[3].v.pct, pct(host[i].ns, WINDOW));
	}
	assert_int_equal(t->parts[0].nrows, 9); /* a copy range on a thread is no host type */
	assert_int_equal(t->nparts, 2);
	static const struct {
		const char *type;
		uint64_t calls;
		double ns;
	} dev[] = {
		/* the orphan in the gap is not in the window */
		{"Kernel", 6, 6600},
		/* [1800, 2300) [5200, 5600) [5900, 5950) [6000, 6100) */
		{"Memcpy", 4, 1050},
		{"Memset", 1, 100},
		/* the NCCL kernel, clipped to the window */
		{"Communication", 1, 2600},
	};
	for (unsigned i = 0; i < 4; i++) {
		r = &t->parts[1].rows[i];
		assert_string_equal(r->cells[0].v.text, dev[i].type);
		assert_int_equal(r->cells[1].v.count, dev[i].calls);
		assert_near(r->cells[2].v.ns, dev[i].ns);
		assert_near(r->cells[3].v.pct, pct(dev[i].ns, WINDOW));
	}
	table_free(t);

	/* Communication 2600; Computation: gemm [2500, 5500), gemm_grad 1000,
	 * adam_kernel 1000, fill 200 = 5200; Overlap: adam_kernel and fill ran
	 * under the NCCL kernel: 1200; 5200 + 2600 - 1200 = 6600 = Kernel */
	t = build("distributed", &opts);
	assert_near(path_row(t, 0, "ProfileStep")->cells[1].v.ns, 18000);
	assert_near(path_row(t, 0, "ProfileStep/Communication")->cells[1].v.ns, 2600);
	assert_near(path_row(t, 0, "ProfileStep/Computation")->cells[1].v.ns, 5200);
	assert_near(path_row(t, 0, "ProfileStep/Overlap")->cells[1].v.ns, 1200);
	assert_near(path_row(t, 0, "ProfileStep/Overlap")->cells[2].v.pct, pct(1200, WINDOW));
	table_free(t);
}

/* ---- Model ----------------------------------------------------------------------------- */

static void test_model(void **state)
{
	(void)state;
	struct table *t = build("model", &opts);
	const struct trow *r = path_row(t, 0, "ProfileStep");
	assert_int_equal(r->cells[1].v.count, 2);
	assert_stats(r, 2, 18000, 9000, 10000, 8000, 100);
	/* step 1 launched everything but the DtoD (no call): 9250, T1's copy
	 * (500) included: T1 has no step or phase open around its call [1600,
	 * 1700), so it takes T0's, whose step and Dataloader are (the rule for
	 * PyTorch's autograd thread); step 2 nothing */
	assert_stats(r, 7, 9250, 4625, 9250, 0, pct(9250, GPU_ALL));
	r = path_row(t, 0, "ProfileStep/Dataloader"); /* T0 [1000, 2000), T1 [12000, 14000) */
	assert_stats(r, 2, 3000, 1500, 2000, 1000, pct(3000, WINDOW));
	assert_stats(r, 7, 500, 250, 500, 0, pct(500, GPU_ALL)); /* T1's copy, in T0's */
	r = path_row(t, 0, "ProfileStep/Forward"); /* gemm 2000 + 1000, HtoD 400, DtoH 50 */
	assert_stats(r, 2, 8000, 4000, 4000, 4000, pct(8000, WINDOW));
	assert_stats(r, 7, 3450, 1725, 3450, 0, pct(3450, GPU_ALL));
	r = path_row(t, 0, "ProfileStep/Backward"); /* gemm_grad 1000, nccl 3000 */
	assert_stats(r, 2, 3000, 3000, 3000, 3000, pct(3000, WINDOW));
	assert_stats(r, 7, 4000, 4000, 4000, 4000, pct(4000, GPU_ALL));
	r = path_row(t, 0, "ProfileStep/Optimization");
	assert_stats(r, 7, 1000, 1000, 1000, 1000, pct(1000, GPU_ALL));
	/* Others: the phases cover [1000, 10000) and [12000, 17000) (the two
	 * Dataloaders and Forward of step 2 overlap across threads): 18000 -
	 * 14000; GPU: fill 200 + memset 100 + DtoD 100 */
	r = path_row(t, 0, "ProfileStep/Others");
	assert_false(r->cells[1].set);
	assert_near(r->cells[2].v.ns, 4000);
	assert_near(r->cells[6].v.pct, pct(4000, WINDOW));
	assert_near(r->cells[7].v.ns, 400);
	assert_near(r->cells[11].v.pct, pct(400, GPU_ALL));
	table_free(t);
}

/* ---- Operator ------------------------------------------------------------------------------ */

static void test_operator(void **state)
{
	(void)state;
	struct table *t = build("operator", &opts);
	assert_int_equal(t->nparts, 1);
	assert_string_equal(t->parts[0].title, "Thread: All threads merged");
	/* matmul: [2100, 3100) launched gemm 2000, [3300, 4300) in linear gemm
	 * 1000, [13100, 14100) nothing */
	const struct trow *r = path_row(t, 0, "matmul");
	assert_int_equal(r->cells[1].v.count, 3);
	assert_stats(r, 2, 3000, 1000, 1000, 1000, pct(3000, WINDOW));
	assert_stats(r, 7, 3000, 1000, 2000, 0, pct(3000, GPU_ALL));
	r = path_row(t, 0, "linear"); /* gemm 1000 through the inner matmul, HtoD 400 */
	assert_stats(r, 2, 2600, 2600, 2600, 2600, pct(2600, WINDOW));
	assert_stats(r, 7, 1400, 1400, 1400, 1400, pct(1400, GPU_ALL));
	assert_stats(path_row(t, 0, "matmul_grad"), 7, 1000, 1000, 1000, 1000, pct(1000, GPU_ALL));
	assert_stats(path_row(t, 0, "nccl:all_reduce"), 7, 3000, 3000, 3000, 3000,
		     pct(3000, GPU_ALL));
	assert_stats(path_row(t, 0, "adam"), 2, 250, 250, 250, 250, pct(250, WINDOW));
	assert_stats(path_row(t, 0, "to_cpu"), 7, 50, 50, 50, 50, pct(50, GPU_ALL));
	static const char *const by_cpu[] = {"matmul", "linear", "matmul_grad", "nccl:all_reduce",
					     "adam", "to_cpu"};
	assert_order(t, 0, by_cpu, 6);
	table_free(t);

	struct view_opts o = opts;
	static const struct {
		enum sort_key key;
		const char *order[6];
	} sorts[] = {
		/* ties on the GPU key go by CPU total */
		{SORT_GPU_TOTAL, {"matmul", "nccl:all_reduce", "linear", "matmul_grad", "adam", "to_cpu"}},
		{SORT_GPU_MAX, {"nccl:all_reduce", "matmul", "linear", "matmul_grad", "adam", "to_cpu"}},
		{SORT_GPU_MIN, {"matmul", "to_cpu", "matmul_grad", "adam", "linear", "nccl:all_reduce"}},
		{SORT_GPU_AVG, {"nccl:all_reduce", "linear", "matmul", "matmul_grad", "adam", "to_cpu"}},
		{SORT_CPU_MIN, {"to_cpu", "adam", "nccl:all_reduce", "matmul", "matmul_grad", "linear"}},
	};
	for (unsigned k = 0; k < sizeof(sorts) / sizeof(sorts[0]); k++) {
		o.sort = sorts[k].key;
		t = build("operator", &o);
		assert_order(t, 0, sorts[k].order, 6);
		table_free(t);
	}

	o = opts;
	o.thread_sep = 1;
	t = build("operator", &o);
	assert_int_equal(t->nparts, 1); /* T1 has no operators */
	assert_string_equal(t->parts[0].title, "Thread: 10 (main)");
	table_free(t);
}

static void test_operator_detail(void **state)
{
	(void)state;
	struct view_opts o = opts;
	o.op_detail = 1;
	struct table *t = build("operator", &o);
	/* the outermost operators only: the matmul inside linear is its child */
	static const char *const tops[] = {"linear", "matmul", "matmul_grad", "nccl:all_reduce",
					   "adam", "to_cpu"};
	assert_order(t, 0, tops, 6);
	const struct trow *r = path_row(t, 0, "matmul");
	assert_int_equal(r->cells[1].v.count, 2);
	assert_stats(r, 2, 2000, 1000, 1000, 1000, pct(2000, WINDOW));
	assert_stats(r, 7, 2000, 1000, 2000, 0, pct(2000, GPU_ALL));
	/* a child's Ratio is its share of its parent's Total */
	r = path_row(t, 0, "matmul/matmul::compute");
	assert_stats(r, 2, 800, 800, 800, 800, pct(800, 2000));
	assert_stats(r, 7, 2000, 2000, 2000, 2000, 100);
	r = path_row(t, 0, "matmul/matmul::compute/gemm");
	assert_int_equal(r->cells[1].v.count, 1);
	assert_unset(r, 2, 5); /* GPU work: CPU "-" */
	assert_stats(r, 7, 2000, 2000, 2000, 2000, 100);
	r = path_row(t, 0, "linear/matmul");
	assert_stats(r, 2, 1000, 1000, 1000, 1000, pct(1000, 2600));
	assert_stats(r, 7, 1000, 1000, 1000, 1000, pct(1000, 1400));
	assert_stats(path_row(t, 0, "linear/matmul/gemm"), 7, 1000, 1000, 1000, 1000, 100);
	/* launched by linear's own cudaMemcpyAsync: under linear */
	r = path_row(t, 0, "linear/Memcpy HtoD (Pinned -> Device)");
	assert_stats(r, 7, 400, 400, 400, 400, pct(400, 1400));
	/* GPU rows come after the host ranges */
	const struct tpart *p = &t->parts[0];
	assert_string_equal(p->rows[1].cells[0].v.text, "matmul");
	assert_string_equal(p->rows[3].cells[0].v.text, "Memcpy HtoD (Pinned -> Device)");
	r = path_row(t, 0, "to_cpu/GpuMemcpySync:GPU->CPU");
	assert_stats(r, 2, 130, 130, 130, 130, pct(130, 140));
	assert_stats(path_row(t, 0, "to_cpu/GpuMemcpySync:GPU->CPU/Memcpy DtoH (Device -> Pageable)"),
		     7, 50, 50, 50, 50, 100);
	assert_stats(path_row(t, 0, "nccl:all_reduce/ncclKernel_AllReduce"), 7, 3000, 3000, 3000,
		     3000, 100);
	assert_int_equal(p->nrows, 16);
	table_free(t);
}

/* ---- Kernel -------------------------------------------------------------------------------- */

/* --window gpu: the window is the GPU's span, from T1's HtoD at 1800 to the
 * orphan's end at 11700, and every piece of GPU work counts: 9350 + the
 * orphan's 500. The Overview's Kernel row is the kernels' union: gemm [2500,
 * 5500), gemm_grad [6400, 7400), nccl, adam, fill and the orphan [8400,
 * 11700): 7300 ns, 7 calls; the steps' window gives [2500, 5500), [6400,
 * 7400), [8400, 11000): 6600 ns, 6 calls (the orphan lies in the gap). */
static void test_gpu_window(void **state)
{
	(void)state;
	const struct trow *r;
	struct table *t = build("overview", &opts);
	r = &t->parts[1].rows[0];
	assert_string_equal(r->cells[0].v.text, "Kernel");
	assert_int_equal(r->cells[1].v.count, 6);
	assert_near(r->cells[2].v.ns, 6600);
	table_free(t);
	/* the work launched in the steps that ran past them: nccl [11000,
	 * 11400) and the part of nothing else: 400 ns, said in a note */
	assert_int_equal(golden.gpu.counted_outside_ns, 400);

	struct analysis g;
	char err[512];
	analysis_init(&g);
	g.want_gpu_window = 1;
	if (analysis_load(&g, tb_gpu_trace(), err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(&g);
	assert_true(g.gpu_window);
	assert_false(g.from_steps);
	assert_int_equal(g.window_ns, 11700 - 1800);
	assert_int_equal(g.gpu.counted_ns, 9350 + 500);
	assert_int_equal(g.gpu.counted_outside_ns, 0);
	const struct view *v = view_find("overview");
	t = v->build(v, &g, &opts);
	r = path_row(t, 0, "GPU span");
	assert_near(r->cells[2].v.ns, 9900);
	r = &t->parts[1].rows[0];
	assert_string_equal(r->cells[0].v.text, "Kernel");
	assert_int_equal(r->cells[1].v.count, 7);
	assert_near(r->cells[2].v.ns, 7300);
	assert_near(r->cells[3].v.pct, pct(7300, 9900));
	table_free(t);
	analysis_free(&g);
}

static void test_kernel(void **state)
{
	(void)state;
	struct table *t = build("kernel", &opts);
	static const char *const order[] = {"gemm", "ncclKernel_AllReduce", "adam_kernel",
					    "gemm_grad", "fill"};
	assert_order(t, 0, order, 5);
	/* GPU0: 4 SMs, 2048 threads and 16 blocks per SM, 65536 registers and
	 * bytes of shared memory per SM.
	 * gemm #1: 8 blocks of 256 threads, 32 registers: 2 blocks per SM; an SM
	 *   holds min(16, 2048/256 = 8, 65536/(32*256) = 8) = 8; 2 x 256 / 2048 = 25%.
	 * gemm #2: 64 blocks of 128, 64 registers, 4096 + 4096 bytes: 16 per SM;
	 *   holds min(16, 16, 65536/(64*128) = 8, 65536/8192 = 8) = 8; 8 x 128 / 2048 = 50%.
	 *   Weighted by 2000 and 1000 ns: (2*2000 + 16*1000) / 3000 blocks per SM,
	 *   (25*2000 + 50*1000) / 3000 %. */
	const struct trow *r = path_row(t, 0, "gemm");
	assert_int_equal(r->cells[1].v.count, 2);
	assert_stats(r, 2, 3000, 1500, 2000, 1000, pct(3000, GPU_ALL));
	assert_near(r->cells[7].v.real, 20000.0 / 3000.0);
	assert_near(r->cells[8].v.pct, 100000.0 / 3000.0);
	/* no launch configuration: no estimate */
	r = path_row(t, 0, "ncclKernel_AllReduce");
	assert_stats(r, 2, 3000, 3000, 3000, 3000, pct(3000, GPU_ALL));
	assert_false(r->cells[7].set);
	assert_false(r->cells[8].set);
	/* gemm_grad: 4 blocks of 32 x 2: 1 per SM, holds 16: 64 / 2048 */
	r = path_row(t, 0, "gemm_grad");
	assert_near(r->cells[7].v.real, 1.0);
	assert_near(r->cells[8].v.pct, 100.0 * 64 / 2048);
	/* adam_kernel: 4 blocks of 1024, 64 registers: holds min(2, 65536/65536 = 1) */
	r = path_row(t, 0, "adam_kernel");
	assert_near(r->cells[8].v.pct, 50.0);
	/* fill: 1 block of 33 threads (2 warps): 0.25 per SM, 0.25 x 33 / 2048 */
	r = path_row(t, 0, "fill");
	assert_near(r->cells[7].v.real, 0.25);
	assert_near(r->cells[8].v.pct, 100.0 * 0.25 * 33 / 2048);
	assert_stats(r, 2, 200, 200, 200, 200, pct(200, GPU_ALL));
	table_free(t);

	struct view_opts o = opts;
	o.thread_sep = 1;
	t = build("kernel", &o);
	assert_int_equal(t->nparts, 2);
	assert_string_equal(t->parts[0].title, "Stream: GPU0 stream 7");
	assert_string_equal(t->parts[1].title, "Stream: GPU0 stream 13");
	assert_int_equal(t->parts[0].nrows, 4);
	assert_int_equal(t->parts[1].nrows, 1);
	table_free(t);
}

static void test_occupancy_formula(void **state)
{
	(void)state;
	struct trace_device d = {.sm_count = 132, .max_threads_per_sm = 2048,
				 .max_blocks_per_sm = 32, .warp_size = 32, .regs_per_sm = 65536,
				 .smem_per_sm = 233472};
	double bps, occ;
	/* 264 blocks of 256 threads, 128 registers: 2 per SM; an SM holds
	 * min(32, 8, 65536 / (128 * 256) = 2) = 2: 2 x 256 / 2048 = 25% */
	assert_true(gpu_occupancy(&d, 264, 256, 128, 0, &bps, &occ));
	assert_near(bps, 2.0);
	assert_near(occ, 25.0);
	/* 1320 blocks of 64 threads with 100 KB of shared memory each: 10 per SM;
	 * holds min(32, 32, 233472 / 102400 = 2) = 2: 2 x 64 / 2048 */
	assert_true(gpu_occupancy(&d, 1320, 64, 0, 102400, &bps, &occ));
	assert_near(bps, 10.0);
	assert_near(occ, 6.25);
	assert_false(gpu_occupancy(&d, 0, 64, 0, 0, &bps, &occ));
	d.sm_count = 0;
	assert_false(gpu_occupancy(&d, 8, 64, 0, 0, &bps, &occ));
	assert_false(gpu_occupancy(NULL, 8, 64, 0, 0, &bps, &occ));
}

/* ---- Memory Manipulation -------------------------------------------------------------- */

static void test_memory_manipulation(void **state)
{
	(void)state;
	struct table *t = build("memory-manipulation", &opts);
	static const char *const order[] = {
		"GpuMemcpySync:GPU->CPU",
		"cudaMemcpy DtoH (Device -> Pageable, sync)",
		"cudaMemcpyAsync HtoD (Pageable -> Device, async)",
		"cudaMemcpyAsync HtoD (Pinned -> Device, async)",
		"cudaMemsetAsync Memset (Device, async)",
		"(no API call) DtoD (Device -> Device, sync)",
	};
	assert_order(t, 0, order, 6);
	const struct trow *r = path_row(t, 0, order[0]); /* the framework's copy range */
	assert_stats(r, 2, 130, 130, 130, 130, pct(130, WINDOW));
	assert_stats(r, 7, 50, 50, 50, 50, pct(50, GPU_ALL));
	r = path_row(t, 0, order[1]);
	assert_stats(r, 2, 120, 120, 120, 120, pct(120, WINDOW));
	assert_stats(r, 7, 50, 50, 50, 50, pct(50, GPU_ALL));
	r = path_row(t, 0, order[2]); /* on the worker thread */
	assert_stats(r, 2, 100, 100, 100, 100, pct(100, WINDOW));
	assert_stats(r, 7, 500, 500, 500, 500, pct(500, GPU_ALL));
	r = path_row(t, 0, order[3]);
	assert_stats(r, 7, 400, 400, 400, 400, pct(400, GPU_ALL));
	r = path_row(t, 0, order[4]);
	assert_stats(r, 2, 50, 50, 50, 50, pct(50, WINDOW));
	assert_stats(r, 7, 100, 100, 100, 100, pct(100, GPU_ALL));
	r = path_row(t, 0, order[5]);
	assert_int_equal(r->cells[1].v.count, 1);
	assert_unset(r, 2, 5);
	assert_stats(r, 7, 100, 100, 100, 100, pct(100, GPU_ALL));
	table_free(t);
}

/* ---- Memory -------------------------------------------------------------------------------- */

static int64_t fact(const struct tpart *p, const char *key)
{
	for (size_t i = 0; i < p->nfacts; i++)
		if (strcmp(p->facts[i].key, key) == 0)
			return p->facts[i].value;
	fail_msg("no fact '%s'", key);
	return 0;
}

static void assert_sums(const struct trow *r, unsigned col, int64_t alloc, int64_t freed,
			uint64_t count)
{
	assert_int_equal(r->cells[col].v.bytes, alloc);
	assert_int_equal(r->cells[col + 1].v.bytes, freed);
	assert_int_equal(r->cells[col + 2].v.bytes, alloc - freed);
	assert_int_equal(r->cells[col + 3].v.count, count);
}

static void test_memory(void **state)
{
	(void)state;
	struct table *t = build("memory", &opts);
	assert_int_equal(t->nparts, 2);
	const struct tpart *gpu = &t->parts[0], *host = &t->parts[1];
	assert_string_equal(gpu->label, "GPU0");
	assert_string_equal(host->label, "Host");
	/* in use on GPU0: 1000, 1500, 3500, 2500, 2000, then 5000 as the event
	 * at 10250 reports, 105000 from 11500 (the gap) to 12500, in step 2's
	 * window from 12000: the peak; 5000 after */
	assert_int_equal(fact(gpu, "peak_in_use_bytes"), 105000);
	assert_int_equal(fact(gpu, "allocated_bytes"), 1000 + 500 + 2000 + 300);
	assert_int_equal(fact(gpu, "freed_bytes"), 1000 + 500 + 100000);
	assert_string_equal(gpu->title,
			    "GPU0: peak 105.00 kB in use, 3.80 kB allocated, 101.50 kB freed");
	static const char *const order[] = {"matmul", "linear", "(no operator)"};
	assert_order(t, 0, order, 3);
	/* matmul: +1000 and +500 (its inner range) in the first, +2000 and
	 * -1000 in the one inside linear; all its own */
	const struct trow *r = path_row(t, 0, "matmul");
	assert_int_equal(r->cells[1].v.count, 3);
	assert_sums(r, 2, 3500, 1000, 3);
	assert_sums(r, 7, 3500, 1000, 3);
	/* Peak Increase (column 6): 1500 in the first call (0 -> 1500), 2000 in
	 * the one inside linear (1500 -> 3500) */
	assert_int_equal(r->cells[6].v.bytes, 2000);
	/* linear: the inner matmul's +2000 -1000, its own -500 */
	r = path_row(t, 0, "linear");
	assert_sums(r, 2, 2000, 1500, 1);
	assert_sums(r, 7, 0, 500, 0);
	assert_int_equal(r->cells[6].v.bytes, 2000); /* 1500 -> 3500, its inner matmul's */
	/* outside every operator, in the window: +300, -100000 (+100000 in the
	 * gap is no row) */
	r = path_row(t, 0, "(no operator)");
	assert_false(r->cells[1].set);
	assert_sums(r, 2, 300, 100000, 1);
	assert_false(r->cells[6].set); /* no call to rise in */
	assert_int_equal(fact(host, "peak_in_use_bytes"), 64);
	assert_sums(path_row(t, 1, "matmul"), 2, 64, 0, 1);
	assert_int_equal(path_row(t, 1, "matmul")->cells[6].v.bytes, 64);
	table_free(t);

	/* the same figures for the Operator view (view_memory.h), summed over
	 * the devices: matmul's on GPU0 and on the host */
	struct view_memory_ops *mo = view_memory_ops_new(&golden);
	assert_true(view_memory_ops_any(mo));
	const struct view_memory_op *mm = view_memory_op(mo, "matmul");
	assert_int_equal(mm->allocated, 3500 + 64);
	assert_int_equal(mm->freed, 1000);
	assert_int_equal(mm->allocations, 3 + 1);
	assert_int_equal(mm->self_allocated, 3500 + 64);
	assert_int_equal(mm->self_allocations, 3 + 1);
	assert_int_equal(mm->peak_increase, 2000); /* the larger of 2000 (GPU0) and 64 */
	const struct view_memory_op *lin = view_memory_op(mo, "linear");
	assert_int_equal(lin->self_allocated, 0);
	assert_int_equal(lin->self_freed, 500);
	assert_int_equal(view_memory_op(mo, "no such operator")->allocated, 0);
	view_memory_ops_free(mo);
}

/* ---- UserDefined, nvprof, the report ------------------------------------------------------ */

static void test_userdefined(void **state)
{
	(void)state;
	struct table *t = build("userdefined", &opts);
	assert_int_equal(t->parts[0].nrows, 1); /* "ProfileStep#1" went to the steps */
	const struct trow *r = path_row(t, 0, "prefetch");
	assert_stats(r, 2, 3500, 1750, 2500, 1000, pct(3500, WINDOW));
	assert_stats(r, 7, 500, 250, 500, 0, pct(500, GPU_ALL)); /* T1's HtoD */
	table_free(t);
}

static void test_nvprof(void **state)
{
	(void)state;
	struct table *t = build("nvprof", &opts);
	assert_int_equal(t->nparts, 2);
	assert_string_equal(t->parts[0].title, "GPU activities");
	static const struct {
		const char *name;
		uint64_t calls;
		double total, min, max;
	} gpu[] = {
		{"gemm", 2, 3000, 1000, 2000},
		{"ncclKernel_AllReduce", 1, 3000, 3000, 3000},
		{"adam_kernel", 1, 1000, 1000, 1000},
		{"gemm_grad", 1, 1000, 1000, 1000},
		{"[CUDA memcpy HtoD]", 2, 900, 400, 500},
		{"fill", 1, 200, 200, 200},
		{"[CUDA memcpy DtoD]", 1, 100, 100, 100},
		{"[CUDA memset]", 1, 100, 100, 100},
		{"[CUDA memcpy DtoH]", 1, 50, 50, 50},
	};
	assert_int_equal(t->parts[0].nrows, 9);
	for (unsigned i = 0; i < 9; i++) {
		const struct trow *r = &t->parts[0].rows[i];
		assert_string_equal(r->cells[6].v.text, gpu[i].name);
		assert_near(r->cells[0].v.pct, pct(gpu[i].total, GPU_ALL));
		assert_near(r->cells[1].v.ns, gpu[i].total);
		assert_int_equal(r->cells[2].v.count, gpu[i].calls);
		assert_near(r->cells[3].v.ns, gpu[i].total / gpu[i].calls);
		assert_near(r->cells[4].v.ns, gpu[i].min);
		assert_near(r->cells[5].v.ns, gpu[i].max);
	}
	/* API calls: 6 launches, cudaStreamSynchronize 400, 2 cudaMemcpyAsync,
	 * cudaMemcpy 120, cudaMemsetAsync 50: 1370 */
	static const struct {
		const char *name;
		double total;
	} api[] = {{"cudaLaunchKernel", 600}, {"cudaStreamSynchronize", 400},
		   {"cudaMemcpyAsync", 200},  {"cudaMemcpy", 120},
		   {"cudaMemsetAsync", 50}};
	assert_string_equal(t->parts[1].title, "API calls");
	assert_int_equal(t->parts[1].nrows, 5);
	for (unsigned i = 0; i < 5; i++) {
		const struct trow *r = &t->parts[1].rows[i];
		assert_string_equal(r->cells[6].v.text, api[i].name);
		assert_near(r->cells[0].v.pct, pct(api[i].total, 1370));
		assert_near(r->cells[1].v.ns, api[i].total);
	}
	table_free(t);
}

static void test_report(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(runend_summary(golden.store.files[0].path, f, 77), 0);
	fclose(f);
	static const char *const expect[] = {
		"==77== Profiling result (GPU activities):\n"
		"Time(%)       Time     Calls        Avg        Min        Max  Name\n"
		" 32.09%   3.0000us         2   1.5000us   1.0000us   2.0000us  gemm\n"
		" 32.09%   3.0000us         1   3.0000us   3.0000us   3.0000us  ncclKernel_AllReduce\n",
		"  9.63%      900ns         2      450ns      400ns      500ns  [CUDA memcpy HtoD]\n",
		"==77== Time(%) is of all GPU activity time: every name's Time summed.\n",
		"==77== API calls:\n"
		"Time(%)       Time     Calls        Avg        Min        Max  Name\n"
		/* 600 of 1370 ns: 43.7956, the shares rounded by largest remainder */
		" 43.79%      600ns         6      100ns      100ns      100ns  cudaLaunchKernel\n",
		"==77== NVTX ranges:\n",
		/* of all range time (46.12 us, every name's Time summed), as nsys */
		"  5.64%   2.6000us         1   2.6000us   2.6000us   2.6000us  linear\n",
		"==77== ... and 4 more range names: 2.86%\n",
	};
	for (unsigned i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
		if (!strstr(buf, expect[i]))
			fail_msg("no\n%s\nin\n%s", expect[i], buf);
	assert_null(strstr(buf, "  cudaLaunchKernel\n==77== NVTX")); /* API calls are no range */
	free(buf);
}

/* ---- the join's hash, for correlation ids far apart ------------------------------------- */

static void test_sparse_correlation(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "sparse.gpdl", "h", 10, 0);
	tb_thread(&b, 0, 10, "main");
	tb_stream(&b, 1, 0, 7);
	uint32_t op = tb_desc(&b, "op", TRACE_EV_OPERATOR);
	uint32_t launch = tb_desc(&b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	uint32_t k = tb_desc(&b, "k", TRACE_EV_KERNEL);
	static const uint64_t ids[] = {7, 1000000, 5000000000ull};
	for (unsigned i = 0; i < 3; i++) {
		uint64_t at = 1000 + 1000 * i;
		tb_call(&b, 0, launch, at + 100, 100, ids[i]);
		tb_range(&b, 0, op, at, 500);
		tb_kernel(&b, 1, k, at + 300, 100 * (i + 1), ids[2 - i] + (i == 1), 1, 32, 1, 0, 0,
			  0);
	}
	const char *path = tb_close(&b, 10000);
	struct analysis a;
	char err[256];
	analysis_init(&a);
	if (analysis_load(&a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(&a);
	/* kernel 0 (100 ns) has id 5000000000: the third call's; kernel 2
	 * (300 ns) id 7: the first's; kernel 1 has 1000001, which no call has */
	uint32_t host = track_of(&a, 0, 10);
	assert_int_equal(a.gpu.linked, 2);
	assert_int_equal(a.gpu.tracks[host].nlaunches, 2);
	assert_int_equal(a.gpu.tracks[host].launches[0].index, 2);
	assert_int_equal(a.gpu.tracks[host].launches[1].index, 0);
	struct table *t = view_operator(view_find("operator"), &a, &opts);
	assert_stats(path_row(t, 0, "op"), 7, 400, 400.0 / 3, 300, 0, pct(400, 600));
	table_free(t);
	analysis_free(&a);
}


/* ---- external ids: the PyTorch profiler's own link ----------------------------------------- */

/* An event with a correlation id and an external id (0: none). */
static void xid_event(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
		      uint64_t corr, uint64_t xid)
{
	struct trace_event_ext x = {.correlation = corr, .external_id = xid};
	tb_ext(b, thread, desc, start, dur, &x);
}

/* An allocation (bytes > 0) or free on GPU0, recorded on thread (a stream too). */
static void xid_memory(struct tb *b, uint32_t thread, uint32_t desc, uint64_t at, int64_t bytes,
		       uint64_t corr, uint64_t xid)
{
	struct trace_event_ext x = {.correlation = corr, .external_id = xid,
				    .bytes = (uint64_t)bytes, .address = 0x2000, .device = 0,
				    .dst_kind = TRACE_MEM_DEVICE};
	struct trace_event e = {at, 0, desc, thread, TRACE_EVF_MARK, &x};
	assert_int_equal(trace_writer_event(b->w, &e), 0);
}

static uint64_t same_xid(uint64_t n)
{
	return n;
}

/* The same run with ids past 32 bits, where the store keeps an id pair that
 * does not fit in one 64-bit field apart (store.h): "xN" for N >= 102 is
 * 2^40 + N, and c5 is 2^33 + 5; the results do not change. */
static uint64_t wide_xid(uint64_t n)
{
	return n >= 102 ? (1ull << 40) + n : n;
}

/* The External-id scenario below, written with ids mapped through x and the
 * correlation of k_mul's launch as c5, so the same run can be checked with
 * small ids and with ids past 32 bits. */
static const char *write_xid_trace(const char *file, uint64_t (*x)(uint64_t), uint64_t c5)
{
	struct tb b;
	tb_open(&b, file, "h", 20, 0);
	tb_thread(&b, 0, 20, "main");
	tb_thread(&b, 1, 21, "autograd");
	tb_stream(&b, 2, 0, 7);
	uint32_t mm = tb_desc(&b, "aten::mm", TRACE_EV_OPERATOR);
	uint32_t add = tb_desc(&b, "aten::add", TRACE_EV_OPERATOR);
	uint32_t mul = tb_desc(&b, "aten::mul", TRACE_EV_OPERATOR);
	uint32_t other = tb_desc(&b, "aten::other", TRACE_EV_OPERATOR);
	uint32_t mmb = tb_desc(&b, "aten::mm_backward", TRACE_EV_OPERATOR);
	uint32_t engine = tb_desc(&b, "autograd::engine", TRACE_EV_OPERATOR);
	uint32_t bwd = tb_desc(&b, "Backward", TRACE_EV_BACKWARD);
	uint32_t launch = tb_desc(&b, "cudaLaunchKernel", TRACE_EV_CUDA_RUNTIME);
	uint32_t cpy = tb_desc(&b, "cudaMemcpyAsync", TRACE_EV_CUDA_RUNTIME);
	uint32_t htod = tb_desc(&b, "Memcpy HtoD (Pinned -> Device)", TRACE_EV_MEMCPY);
	uint32_t mem = tb_desc(&b, "[memory]", TRACE_EV_MEMORY);
	uint32_t k[5];
	static const char *const kn[] = {"k_mm", "k_bwd", "k_free", "k_add", "k_mul"};
	for (unsigned i = 0; i < 5; i++)
		k[i] = tb_desc(&b, kn[i], TRACE_EV_KERNEL);
	xid_event(&b, 0, launch, 1100, 100, 1, x(101));
	xid_event(&b, 0, mm, 1000, 1000, 0, x(101));
	xid_event(&b, 0, launch, 3000, 100, 2, x(102));
	xid_event(&b, 0, launch, 4000, 100, 3, 0);
	xid_event(&b, 0, cpy, 4600, 100, 6, x(103));
	xid_memory(&b, 0, mem, 5100, 512, 0, 0);
	xid_event(&b, 0, add, 5000, 500, 0, x(103));
	xid_event(&b, 0, launch, 6100, 100, c5, x(999));
	xid_event(&b, 0, mul, 6000, 1000, 0, x(104));
	xid_event(&b, 0, other, 7500, 500, 0, x(105));
	xid_event(&b, 1, mmb, 2900, 1000, 0, x(102));
	xid_event(&b, 1, engine, 2850, 1100, 0, x(200));
	tb_range(&b, 1, bwd, 2800, 1200);
	xid_event(&b, 2, k[0], 1300, 500, 1, x(101));
	xid_memory(&b, 2, mem, 1500, 1024, 1, 0);
	xid_event(&b, 2, k[1], 3200, 400, 2, x(102));
	xid_memory(&b, 2, mem, 3300, 4096, 2, x(102));
	xid_event(&b, 2, k[2], 4200, 300, 3, 0);
	tb_copy(&b, 2, htod, 4750, 100, 6, TRACE_COPY_HTOD, TRACE_MEM_PINNED, TRACE_MEM_DEVICE, 1,
		4096);
	xid_event(&b, 2, k[3], 5600, 100, 4, x(103));
	xid_event(&b, 2, k[4], 6300, 200, c5, x(105));
	xid_memory(&b, 2, mem, 8500, -1024, 0, 0);
	return tb_close(&b, 10000);
}

/*
 * No steps: the window is the whole run [0, 10000). "xN" is external id N.
 *
 * T0  aten::mm x101 [1000, 2000)
 *       cudaLaunchKernel [1100, 1200) c1 x101 -> k_mm [1300, 1800)      by correlation
 *     cudaLaunchKernel [3000, 3100) c2 x102 (in no range) -> k_bwd [3200, 3600):
 *       the call's x102 is T1's aten::mm_backward
 *     cudaLaunchKernel [4000, 4100) c3 (in no range, no id) -> k_free [4200, 4500):
 *       unattributed
 *     cudaMemcpyAsync [4600, 4700) c6 x103 (in no range) -> HtoD [4750, 4850) x0:
 *       the call's x103 is aten::add
 *     aten::add x103 [5000, 5500)         allocation GPU0 +512 @5100 (on T0)
 *     k_add [5600, 5700) c4 x103: no call has c4; its own x103 is aten::add
 *     aten::mul x104 [6000, 7000)
 *       cudaLaunchKernel [6100, 6200) c5 x999 -> k_mul [6300, 6500) x105:
 *       correlation has priority over the kernel's x105 (aten::other)
 *     aten::other x105 [7500, 8000)
 * T1  Backward [2800, 4000)
 *       autograd::engine x200 [2850, 3950)
 *         aten::mm_backward x102 [2900, 3900)
 * S   allocations GPU0 on the stream: +1024 @1500 c1 (aten::mm's call); +4096
 *     @3300 c2 x102 (the call is in no range: by x102, aten::mm_backward);
 *     -1024 @8500, neither: (no operator)
 *
 * Counted GPU work: 500 + 400 + 300 + 100 + 100 + 200 = 1600.
 */
static void test_external_id(void **state)
{
	(void)state;
	const char *path = write_xid_trace("xid.gpdl", same_xid, 5);

	struct analysis a;
	char err[256];
	analysis_init(&a);
	if (analysis_load(&a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(&a);
	assert_false(a.from_steps);
	assert_int_equal(a.window_ns, 10000);
	assert_int_equal(a.gpu.work, 6);
	assert_int_equal(a.gpu.linked, 5);   /* all but k_add, whose c4 no call has */
	assert_int_equal(a.gpu.by_xid, 3);   /* k_bwd, the copy, k_add */
	assert_int_equal(a.gpu.counted, 6);  /* what counts does not change */
	assert_int_equal(a.gpu.counted_ns, 1600);
	assert_int_equal(a.gpu.stream_memory, 3);
	uint32_t t0 = track_of(&a, 0, 20), t1 = track_of(&a, 0, 21);
	assert_int_equal(a.gpu.tracks[t0].nlaunches, 5); /* every call keeps its work */
	assert_int_equal(a.gpu.tracks[t0].nxlaunches, 2); /* aten::add: the copy, k_add */
	assert_int_equal(a.gpu.tracks[t1].nxlaunches, 1); /* aten::mm_backward: k_bwd */
	for (uint32_t i = 0; i < a.store.ntracks; i++)
		assert_null(a.store.tracks[i].xid); /* freed after the join */

	/* Operator: the GPU work of each operator and of those around it */
	struct table *t = view_operator(view_find("operator"), &a, &opts);
	static const struct {
		const char *name;
		double cpu, gpu;
	} ops[] = {
		{"autograd::engine", 1100, 400}, {"aten::mm", 1000, 500},
		{"aten::mm_backward", 1000, 400}, {"aten::mul", 1000, 200},
		{"aten::add", 500, 200},          {"aten::other", 500, 0},
	};
	for (unsigned i = 0; i < 6; i++) {
		const struct trow *r = path_row(t, 0, ops[i].name);
		assert_int_equal(r->cells[1].v.count, 1);
		assert_stats(r, 2, ops[i].cpu, ops[i].cpu, ops[i].cpu, ops[i].cpu,
			     pct(ops[i].cpu, 10000));
		assert_stats(r, 7, ops[i].gpu, ops[i].gpu, ops[i].gpu, ops[i].gpu,
			     pct(ops[i].gpu, 1600));
	}
	table_free(t);
	/* --op-detail: k_bwd under the range its id names, on T1 */
	struct view_opts detail = opts;
	detail.op_detail = 1;
	t = view_operator(view_find("operator"), &a, &detail);
	assert_stats(path_row(t, 0, "autograd::engine/aten::mm_backward/k_bwd"), 7, 400, 400, 400,
		     400, 100);
	assert_stats(path_row(t, 0, "aten::add/k_add"), 7, 100, 100, 100, 100, 50);
	assert_stats(path_row(t, 0, "aten::add/Memcpy HtoD (Pinned -> Device)"), 7, 100, 100, 100,
		     100, 50);
	table_free(t);
	/* --thread-sep: each operator in its own thread's part */
	struct view_opts sep = opts;
	sep.thread_sep = 1;
	t = view_operator(view_find("operator"), &a, &sep);
	assert_int_equal(t->nparts, 2);
	assert_stats(path_row(t, 0, "aten::add"), 7, 200, 200, 200, 200, pct(200, 1600));
	assert_stats(path_row(t, 1, "aten::mm_backward"), 7, 400, 400, 400, 400, pct(400, 1600));
	table_free(t);

	/* Model: Backward launched k_bwd (by its id); Others the rest */
	t = view_model(view_find("model"), &a, &opts);
	const struct trow *r = path_row(t, 0, "Whole run/Backward");
	assert_stats(r, 2, 1200, 1200, 1200, 1200, pct(1200, 10000));
	assert_stats(r, 7, 400, 400, 400, 400, pct(400, 1600));
	r = path_row(t, 0, "Whole run/Others");
	assert_near(r->cells[2].v.ns, 10000 - 1200);
	assert_near(r->cells[7].v.ns, 1600 - 400);
	table_free(t);

	/* Memory Manipulation: the copy stays with its call */
	t = view_memcpy(view_find("memory-manipulation"), &a, &opts);
	r = path_row(t, 0, "cudaMemcpyAsync HtoD (Pinned -> Device, async)");
	assert_int_equal(r->cells[1].v.count, 1);
	assert_stats(r, 2, 100, 100, 100, 100, pct(100, 10000));
	assert_stats(r, 7, 100, 100, 100, 100, pct(100, 1600));
	table_free(t);

	/* Memory: in use 1024, 5120, 5632 (T0's +512), 4608 */
	t = view_memory(view_find("memory"), &a, &opts);
	assert_int_equal(t->nparts, 1);
	assert_string_equal(t->parts[0].label, "GPU0");
	assert_int_equal(fact(&t->parts[0], "peak_in_use_bytes"), 5632);
	assert_int_equal(fact(&t->parts[0], "allocated_bytes"), 1024 + 4096 + 512);
	assert_int_equal(fact(&t->parts[0], "freed_bytes"), 1024);
	static const char *const order[] = {"aten::mm_backward", "autograd::engine", "aten::mm",
					    "aten::add", "(no operator)"};
	assert_order(t, 0, order, 5);
	assert_sums(path_row(t, 0, "aten::mm_backward"), 2, 4096, 0, 1);
	assert_sums(path_row(t, 0, "aten::mm_backward"), 7, 4096, 0, 1);
	assert_sums(path_row(t, 0, "autograd::engine"), 2, 4096, 0, 1);
	assert_sums(path_row(t, 0, "autograd::engine"), 7, 0, 0, 0);
	assert_sums(path_row(t, 0, "aten::mm"), 2, 1024, 0, 1);
	assert_sums(path_row(t, 0, "aten::mm"), 7, 1024, 0, 1);
	assert_sums(path_row(t, 0, "aten::add"), 2, 512, 0, 1);
	assert_sums(path_row(t, 0, "(no operator)"), 2, 0, 1024, 0);
	assert_sums(path_row(t, 0, "(no operator)"), 7, 0, 1024, 0);
	table_free(t);
	analysis_free(&a);
}


static void test_external_id_wide(void **state)
{
	(void)state;
	const uint64_t c5 = (1ull << 33) + 5;
	const char *path = write_xid_trace("xidw.gpdl", wide_xid, c5);

	struct analysis a;
	char err[256];
	analysis_init(&a);
	if (analysis_load(&a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	int wide = 0;
	for (uint32_t i = 0; i < a.store.ntracks; i++)
		wide += a.store.tracks[i].xid != NULL;
	assert_int_equal(wide, 2); /* T0's calls and the stream's work: T1 has ranges only */
	analysis_prepare(&a);
	assert_int_equal(a.gpu.work, 6);
	assert_int_equal(a.gpu.linked, 5);
	assert_int_equal(a.gpu.by_xid, 3);
	assert_int_equal(a.gpu.counted, 6);
	assert_int_equal(a.gpu.counted_ns, 1600);
	uint32_t t0 = track_of(&a, 0, 20), t1 = track_of(&a, 0, 21);
	assert_int_equal(a.gpu.tracks[t0].nlaunches, 5);
	assert_int_equal(a.gpu.tracks[t0].nxlaunches, 2);
	assert_int_equal(a.gpu.tracks[t1].nxlaunches, 1);
	for (uint32_t i = 0; i < a.store.ntracks; i++) {
		const struct store_track *st = &a.store.tracks[i];
		assert_null(st->xid);
		for (size_t e = 0; e < st->n; e++) /* the store's own flags are gone */
			assert_int_equal(st->desc[e] & (STORE_EVF_XID | STORE_EVF_IDS32), 0);
	}
	struct table *t = view_operator(view_find("operator"), &a, &opts);
	static const struct {
		const char *name;
		double gpu;
	} ops[] = {
		{"autograd::engine", 400}, {"aten::mm", 500}, {"aten::mm_backward", 400},
		{"aten::mul", 200},        {"aten::add", 200}, {"aten::other", 0},
	};
	for (unsigned i = 0; i < 6; i++)
		assert_stats(path_row(t, 0, ops[i].name), 7, ops[i].gpu, ops[i].gpu, ops[i].gpu,
			     ops[i].gpu, pct(ops[i].gpu, 1600));
	table_free(t);
	t = view_memory(view_find("memory"), &a, &opts);
	assert_int_equal(fact(&t->parts[0], "peak_in_use_bytes"), 5632);
	assert_sums(path_row(t, 0, "aten::mm_backward"), 2, 4096, 0, 1);
	assert_sums(path_row(t, 0, "aten::add"), 2, 512, 0, 1);
	table_free(t);
	analysis_free(&a);
}

/*
 * Events whose only id is an external id: the store keeps them beside its
 * extras (store.h), on host threads and on streams alike.
 *
 * T0  aten::mm x7 [1000, 2000), aten::mul x8 [3000, 4000), each around a
 *     user range written before it (so that the sort moves the operators)
 * S   k_a [1200, 1500) x7, no correlation id and no launch configuration:
 *     by its own id, aten::mm's; k_b [5000, 5100), no ids at all
 */
static void test_external_id_alone(void **state)
{
	(void)state;
	struct tb b;
	tb_open(&b, "xida.gpdl", "h", 20, 0);
	tb_thread(&b, 0, 20, "main");
	tb_stream(&b, 1, 0, 7);
	uint32_t mm = tb_desc(&b, "aten::mm", TRACE_EV_OPERATOR);
	uint32_t mul = tb_desc(&b, "aten::mul", TRACE_EV_OPERATOR);
	uint32_t inner = tb_desc(&b, "inner", TRACE_EV_USER_DEFINED);
	uint32_t ka = tb_desc(&b, "k_a", TRACE_EV_KERNEL);
	uint32_t kb = tb_desc(&b, "k_b", TRACE_EV_KERNEL);
	tb_range(&b, 0, inner, 1100, 500);
	xid_event(&b, 0, mm, 1000, 1000, 0, 7);
	tb_range(&b, 0, inner, 3100, 500);
	xid_event(&b, 0, mul, 3000, 1000, 0, 8);
	xid_event(&b, 1, ka, 1200, 300, 0, 7);
	tb_range(&b, 1, kb, 5000, 100);
	const char *path = tb_close(&b, 10000);

	struct analysis a;
	char err[256];
	analysis_init(&a);
	if (analysis_load(&a, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	analysis_prepare(&a);
	assert_int_equal(a.gpu.work, 2);
	assert_int_equal(a.gpu.linked, 0);
	assert_int_equal(a.gpu.by_xid, 1);
	assert_int_equal(a.gpu.counted, 2);
	assert_int_equal(a.gpu.counted_ns, 400);
	uint32_t t0 = track_of(&a, 0, 20);
	assert_int_equal(a.gpu.tracks[t0].nlaunches, 0);
	assert_int_equal(a.gpu.tracks[t0].nxlaunches, 1);
	assert_int_equal(a.gpu.tracks[t0].xlaunches[0].call, 0); /* aten::mm, first */
	for (uint32_t i = 0; i < a.store.ntracks; i++) {
		const struct store_track *st = &a.store.tracks[i];
		assert_null(st->xid);
		assert_null(st->xonly_ev);
		assert_null(st->xonly_id);
		assert_int_equal(st->nxonly, 0);
		for (size_t e = 0; e < st->n; e++)
			assert_int_equal(st->desc[e] & (STORE_EVF_XID | STORE_EVF_IDS32), 0);
	}
	struct table *t = view_operator(view_find("operator"), &a, &opts);
	assert_stats(path_row(t, 0, "aten::mm"), 7, 300, 300, 300, 300, pct(300, 400));
	assert_stats(path_row(t, 0, "aten::mul"), 7, 0, 0, 0, 0, 0);
	table_free(t);
	analysis_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_correlation),
		cmocka_unit_test(test_device_overview_distributed),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_operator),
		cmocka_unit_test(test_operator_detail),
		cmocka_unit_test(test_gpu_window),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_occupancy_formula),
		cmocka_unit_test(test_memory_manipulation),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_userdefined),
		cmocka_unit_test(test_nvprof),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_sparse_correlation),
		cmocka_unit_test(test_external_id),
		cmocka_unit_test(test_external_id_wide),
		cmocka_unit_test(test_external_id_alone),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
