/*
 * view_kernel.c - the Kernel Summary: the kernels (GPU work of type Kernel
 * or Communication) counted in the window, by name, with Calls and GPU
 * Total/Avg/Max/Min/Ratio, Ratio against all counted GPU work. Where the
 * trace describes the device and the launch, two more columns, as the
 * PyTorch profiler's kernel view has them (formulas in gpu.c and
 * gprof-dl-summary(1)):
 *
 *   Mean Blocks per SM          blocks / SM count, per run
 *   Mean Est. Achieved Occupancy (%)
 *                               min(blocks per SM, blocks one SM can hold)
 *                               x threads per block / max threads per SM
 *
 * each averaged over the runs weighted by their duration. All streams
 * merged, or one part per stream with --thread-sep.
 */
#include "lib/analysis/views/rowtree.h"

#include "common/error.h"

#include <stdlib.h>

enum { KC_NAME, KC_CALLS, KC_GPU, KC_BLOCKS = KC_GPU + 5, KC_OCC };

static const struct tcol kernel_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 60, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	VIEW_GPU_COLUMNS,
	{"Mean Blocks per SM", "blocks_per_sm", TCOL_REAL, NULL, 0, NULL, 0, "Blocks/SM", 4, 0},
	{"Mean Est. Achieved Occupancy (%)", "est_achieved_occupancy", TCOL_PERCENT, NULL, 0, NULL, 0,
	 "Occupancy(%)", 4, 0},
};

static void kernel_track(struct rt_tree *tr, uint32_t ti)
{
	const struct analysis *a = tr->a;
	const struct store *s = &a->store;
	const struct store_track *t = &s->tracks[ti];
	const uint8_t *flags = a->gpu.tracks[ti].flags;
	const struct trace_device *dev =
		t->dev != STORE_NONE && s->devices[t->dev].known ? &s->devices[t->dev].props : NULL;
	struct store_extra_cursor xc = {0};
	for (size_t i = 0; i < t->n; i++) {
		unsigned type = store_ev_type(s, t, i);
		if (!(flags[i] & GPU_COUNTED) ||
		    (type != TRACE_EV_KERNEL && type != TRACE_EV_COMMUNICATION))
			continue;
		uint32_t id = rt_child(tr, RT_ROOT, s->descs[store_ev_desc(t, i)].name, RT_GPU);
		struct rt_node *d = &tr->nodes[id];
		time_stats_add(&d->gpu, t->dur[i]);
		rt_hist_add(tr, id, t->dur[i]);
		const struct store_ext *x = store_extra_ext(t, store_extra_next(t, &xc, i));
		double bps, occ;
		if (x && gpu_occupancy(dev, x->u.kernel.blocks, x->u.kernel.threads, x->u.kernel.regs,
				       x->u.kernel.smem, &bps, &occ)) {
			double w = t->dur[i] ? (double)t->dur[i] : 1.0;
			d->w_ns += w;
			d->w_blocks += w * bps;
			d->w_occupancy += w * occ;
		}
	}
}

struct kernel_rows {
	struct table *t;
	struct tpart *p;
};

static void kernel_row(void *ctx, const struct rt_tree *tr, uint32_t id, unsigned depth)
{
	struct kernel_rows *c = ctx;
	const struct rt_node *d = &tr->nodes[id];
	struct trow *r = tpart_add_row(c->t, c->p, depth);
	trow_text(r, KC_NAME, rt_name(tr, id));
	trow_count(r, KC_CALLS, d->gpu.calls);
	view_put_stats(r, KC_GPU, &d->gpu, view_gpu_ratio(tr->a, d->gpu.total));
	if (d->w_ns > 0) {
		trow_real(r, KC_BLOCKS, d->w_blocks / d->w_ns);
		trow_percent(r, KC_OCC, d->w_occupancy / d->w_ns);
	}
}

static void kernel_part(struct table *t, const struct analysis *a, const struct view_opts *o,
			const struct store_track *track, const uint32_t *tracks, uint32_t ntracks)
{
	struct rt_tree tr;
	rt_init(&tr, a);
	for (uint32_t k = 0; k < ntracks; k++)
		kernel_track(&tr, tracks[k]);
	rt_link(&tr, o->sort);
	if (tr.nodes[RT_ROOT].nchildren) {
		struct kernel_rows c = {t, track ? view_thread_part(t, a, track)
						 : table_add_part(t, NULL, NULL, NULL)};
		rt_walk(&tr, kernel_row, &c);
	}
	rt_free(&tr);
}

/* The GPU streams of a: their track ids into *out (freed by the caller). */
static uint32_t kernel_streams(const struct store *s, uint32_t **out)
{
	uint32_t *streams = xmalloc((s->ntracks ? s->ntracks : 1) * sizeof(*streams));
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->ntracks; i++)
		if (s->tracks[i].kind == STORE_TRACK_DEVICE)
			streams[n++] = i;
	*out = streams;
	return n;
}

int view_kernel_rows(const struct analysis *a, view_name_row_fn fn, void *ctx)
{
	uint32_t *streams;
	uint32_t n = kernel_streams(&a->store, &streams);
	struct rt_tree tr;
	rt_init(&tr, a);
	tr.hist = 1;
	for (uint32_t k = 0; k < n; k++)
		kernel_track(&tr, streams[k]);
	rt_link(&tr, SORT_GPU_TOTAL);
	int rc = rt_rows(&tr, 0, fn, ctx);
	rt_free(&tr);
	free(streams);
	return rc;
}

struct table *view_kernel(const struct view *v, const struct analysis *a,
			  const struct view_opts *o)
{
	const struct store *s = &a->store;
	struct table *t = table_new(v->name, v->title, kernel_cols,
				    sizeof(kernel_cols) / sizeof(kernel_cols[0]));
	uint32_t *streams;
	uint32_t n = kernel_streams(s, &streams);
	if (o->thread_sep)
		for (uint32_t k = 0; k < n; k++)
			kernel_part(t, a, o, &s->tracks[streams[k]], &streams[k], 1);
	else
		kernel_part(t, a, o, NULL, streams, n);
	free(streams);
	table_set_empty(t, a->gpu.has_gpu ? "No kernels in the window."
					  : "No data: this trace has no GPU work.");
	if (!table_row_count(t))
		return t;
	table_note(t, "GPU Ratio(%%) = the kernel's GPU Total / all GPU work launched in the window "
		      "(%s).",
		   analysis_window_name(a));
	table_note(t, "Mean Blocks per SM = blocks / the device's SMs; Mean Est. Achieved "
		      "Occupancy = min(blocks per SM, blocks an SM can hold) x threads per block / "
		      "max threads per SM;");
	table_note(t, "both averaged over the runs weighted by duration, \"-\" where the device's "
		      "properties or the launch are unknown.");
	view_note_gpu_totals(t, a, o->unit);
	return t;
}
