/*
 * view_model.c - the Model Summary: the training loop's phases, Paddle's
 * way. The first row is ProfileStep (or the whole run, with no steps); under
 * it Dataloader, Forward, Backward and Optimization, each with Calls, the CPU
 * Total/Avg/Max/Min of its ranges clipped to the window, and the GPU
 * Total/Avg/Max/Min of the GPU work each range launched; then Others, what
 * no phase covers.
 *
 * Ratios never exceed 100% and Others is never negative, however phases of
 * several threads overlap (Paddle#24850 summed them), and the phases of one
 * rank's steps add up to at most 100% however many ranks run side by side
 * (the Overview's rule, analysis.h's parts: rank by rank, then summed):
 *   CPU Ratio    = the sum over ranks of the union of the rank's ranges of
 *                  the phase inside its steps / the sum of the ranks' steps
 *                  (one trace: the union of the phase's ranges / the window);
 *   Others CPU   = the same sum of the ranks' steps - the sum over ranks of
 *                  the union of all phases' ranges;
 *   GPU Ratio    = the GPU work launched inside at least one range of the
 *                  phase / all counted GPU work (each piece counted once);
 *   Others GPU   = counted GPU work launched inside no phase (or by no call).
 */
#include "lib/analysis/store/hostwalk.h"
#include "lib/analysis/views/view.h"

#include "common/error.h"

#include <stdlib.h>
#include <string.h>

enum { MC_NAME, MC_CALLS, MC_CPU, MC_GPU = MC_CPU + 5 };

static const struct tcol model_cols[] = {
	{"Name", "name", TCOL_TEXT, NULL, 15, NULL},
	{"Calls", "calls", TCOL_COUNT, NULL, 6, NULL},
	VIEW_CPU_COLUMNS,
	VIEW_GPU_COLUMNS,
};

struct model {
	const struct analysis *a;
	struct time_stats cpu[TRACE_EV_TYPE_COUNT], gpu[TRACE_EV_TYPE_COUNT];
	uint64_t once[TRACE_EV_TYPE_COUNT], any_once;    /* GPU work under the type, each once */
	uint64_t stamp[TRACE_EV_TYPE_COUNT], any_stamp, serial;
};

static int is_phase(unsigned type)
{
	for (unsigned k = 0; k < VIEW_NPHASES; k++)
		if (view_phases[k] == type)
			return 1;
	return 0;
}

static int model_open(void *ctx, struct hw_frame *f, const struct hw_stack *st)
{
	(void)st;
	struct model *m = ctx;
	const struct store *s = &m->a->store;
	const struct store_track *t = &s->tracks[f->track];
	unsigned type = store_ev_type(s, t, f->event);
	if (type != TRACE_EV_PROFILE_STEP && !is_phase(type))
		return 0;
	f->node = type;
	return 1;
}

static void model_close(void *ctx, const struct hw_frame *f, const struct hw_stack *st)
{
	(void)st;
	struct model *m = ctx;
	if (!f->in_window)
		return;
	time_stats_add(&m->cpu[f->node], f->cpu);
	time_stats_add(&m->gpu[f->node], f->gpu);
}

static void model_gpu(void *ctx, const struct hw_stack *st, uint32_t track, uint32_t call,
		      uint32_t gtrack, uint32_t gi)
{
	(void)track;
	(void)call;
	struct model *m = ctx;
	uint64_t ns = m->a->store.tracks[gtrack].dur[gi];
	m->serial++;
	for (size_t k = 0; k < st->n; k++) {
		unsigned type = st->v[k].node;
		if (m->stamp[type] != m->serial) {
			m->stamp[type] = m->serial;
			m->once[type] += ns;
		}
		if (is_phase(type) && m->any_stamp != m->serial) {
			m->any_stamp = m->serial;
			m->any_once += ns;
		}
	}
}

static void model_row(struct table *t, struct tpart *p, const struct model *m, unsigned type,
		      unsigned depth)
{
	const struct analysis *a = m->a;
	struct trow *r = tpart_add_row(t, p, depth);
	trow_text(r, MC_NAME, view_type_name(type));
	trow_count(r, MC_CALLS, m->cpu[type].calls);
	double cpu_ratio = type == TRACE_EV_PROFILE_STEP
				   ? analysis_part_ratio(a, a->parts_window_ns)
				   : analysis_part_ratio(a, analysis_types(a)[type].part_ns);
	view_put_stats(r, MC_CPU, &m->cpu[type], cpu_ratio);
	view_put_stats(r, MC_GPU, &m->gpu[type], view_gpu_ratio(a, m->once[type]));
}

/* A row with only a total and a ratio: the whole run, Others. */
static void total_row(struct table *t, struct tpart *p, const struct analysis *a,
		      const char *name, unsigned depth, uint64_t cpu, uint64_t gpu)
{
	struct trow *r = tpart_add_row(t, p, depth);
	trow_text(r, MC_NAME, name);
	trow_time(r, MC_CPU, (double)cpu);
	trow_percent(r, MC_CPU + 4, analysis_part_ratio(a, cpu));
	trow_time(r, MC_GPU, (double)gpu);
	trow_percent(r, MC_GPU + 4, view_gpu_ratio(a, gpu));
}

static void model_notes(struct table *t, const struct analysis *a)
{
	table_note(t, "CPU: the phase's ranges clipped to the window (%s); CPU Ratio(%%) = the time "
		      "at least one of them was open / the window.",
		   analysis_window_name(a));
	if (a->nparts_windowed > 1)
		table_note(t, "%u ranks (or traces): each measured in its own window, then summed "
			      "(the ratios are of the windows summed), so that the phases of a step "
			      "add up to at most 100%%.",
			   a->nparts_windowed);
	table_note(t, "GPU: the GPU work each range launched (through the CUDA calls made inside "
		      "it); GPU Ratio(%%) = that work, each piece once, / all GPU work launched in "
		      "the window.");
	table_note(t, "Others = what no phase covers: the window minus the union of the phases "
		      "(CPU), the GPU work launched outside every phase (GPU). Never negative.");
}

void *view_model_walk(const struct view *v, const struct analysis *a, const struct view_opts *o,
		      struct hw_request *req)
{
	(void)v;
	(void)o;
	static const struct hw_visitor visitor = {
		.open = model_open,
		.close = model_close,
		.gpu = model_gpu,
		.types = 1u << TRACE_EV_PROFILE_STEP | VIEW_PHASE_TYPES,
		.across_threads = 1,
	};
	struct model *m = xcalloc(1, sizeof(*m));
	m->a = a;
	*req = (struct hw_request){&visitor, m, NULL, 0};
	return m;
}

struct table *view_model(const struct view *v, const struct analysis *a,
			 const struct view_opts *o)
{
	return view_build_walked(v, a, o);
}

struct table *view_model_end(const struct view *v, const struct analysis *a,
			     const struct view_opts *o, void *state)
{
	(void)o;
	struct table *t = table_new(v->name, v->title, model_cols,
				    sizeof(model_cols) / sizeof(model_cols[0]));
	struct model *m = state;

	struct tpart *p = table_add_part(t, NULL, NULL, NULL);
	if (a->from_steps)
		model_row(t, p, m, TRACE_EV_PROFILE_STEP, 0);
	else
		total_row(t, p, a, a->gpu_window ? "GPU span" : "Whole run", 0,
			  a->parts_window_ns, a->gpu.counted_ns);
	for (unsigned k = 0; k < VIEW_NPHASES; k++)
		if (m->cpu[view_phases[k]].calls)
			model_row(t, p, m, view_phases[k], 1);
	uint64_t covered = a->phases_part_ns, window = a->parts_window_ns;
	uint64_t others_gpu = a->gpu.counted_ns > m->any_once ? a->gpu.counted_ns - m->any_once : 0;
	total_row(t, p, a, "Others", 1, window > covered ? window - covered : 0, others_gpu);
	model_notes(t, a);
	free(m);
	return t;
}
