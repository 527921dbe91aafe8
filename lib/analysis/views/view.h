/*
 * view.h - the views of `gprof-dl summary`, one file each (view_<name>.c):
 * a view reads the prepared analysis and fills a table; it never prints.
 *
 * The registry lists every view a user can name with --view, in the order
 * they print (Paddle's order: the Perf Summary, which Paddle's profiler
 * prints when it stops, then its summary tables; then the Memory and nvprof
 * views). A view with nothing to show (no GPU work, no allocations, no
 * steps) builds a table that says so, so that scripts can name every view
 * whatever the trace holds.
 */
#ifndef GPDL_ANALYSIS_VIEW_H
#define GPDL_ANALYSIS_VIEW_H

#include "lib/analysis/store/analysis.h"
#include "lib/analysis/store/hostwalk.h"
#include "lib/analysis/table/table.h"

enum sort_key {
	SORT_CPU_TOTAL,
	SORT_CPU_AVG,
	SORT_CPU_MAX,
	SORT_CPU_MIN,
	SORT_GPU_TOTAL,
	SORT_GPU_AVG,
	SORT_GPU_MAX,
	SORT_GPU_MIN,
	SORT_SELF, /* self time (time_stats.self); views without it: cpu-total */
	/* the Step Summary's: a step's duration, or its time in a phase (the
	 * other views: cpu-total) */
	SORT_DURATION,
	SORT_DATALOADER,
	SORT_FORWARD,
	SORT_BACKWARD,
	SORT_OPTIMIZATION,
	SORT_OTHERS,
	SORT_KEY_COUNT
};

/* "cpu-total", ..., "gpu-min", "self", "duration", "dataloader", ...,
 * "others": 0 with *k set, -1 when not a key. */
int sort_key_parse(const char *s, enum sort_key *k);
/* The keys' names, by enum sort_key (SORT_KEY_COUNT of them). */
extern const char *const sort_key_names[SORT_KEY_COUNT];

struct view_opts {
	int thread_sep;
	int op_detail;
	enum sort_key sort;
	/* sort given (--sorted-by): the Step Summary lists its steps slowest
	 * first (by duration, or by the phase sort names) instead of in order */
	int sort_set;
	enum time_unit unit; /* for notes that quote times */
	/* perf view: the first steps of each trace to leave out (--skip-steps),
	 * when skip_set; else PERF_SKIP_DEFAULT */
	int skip_set;
	unsigned skip_steps;
	/* operator view: a row per (operator, input shapes), as torch's
	 * key_averages(group_by_input_shape=True); needs the store loaded with
	 * by_shapes (--group-by shapes) */
	int group_shapes;
	/* --window gpu: the analysis's window is the GPU's span (analysis.h:
	 * want_gpu_window), for every view but the job's Distributed and Perf */
	int gpu_window;
};

/* When a view prints without --view (struct view.by_default). */
enum view_default {
	VIEW_NOT_DEFAULT = 0,
	VIEW_DEFAULT = 1,
	VIEW_DEFAULT_WITH_STEPS = 2, /* only when the traces have ProfileStep ranges */
};

struct view {
	const char *name;  /* --view NAME */
	const char *title; /* "Overview Summary" */
	struct table *(*build)(const struct view *v, const struct analysis *a,
			       const struct view_opts *o);
	int by_default;    /* printed when no --view is given: enum view_default */
	int uses_types;    /* builds on analysis_types() (built last, see summary.c) */
	/* shows GPU work (or communication) only: a default text summary of
	 * traces with no GPU work leaves the view out when its table is empty */
	int gpu_view;
	/* Optional, for a view that walks the host threads (hostwalk.h), so
	 * that a summary walks them once for all such views: walk_begin fills
	 * req with the view's visitor and returns its state (NULL: no shared
	 * walk with these options; build() then does it all); walk_end makes
	 * the table from the state once the walk is over, and frees the state.
	 * build() is walk_begin, hostwalk_run() of req and walk_end. */
	void *(*walk_begin)(const struct view *v, const struct analysis *a,
			    const struct view_opts *o, struct hw_request *req);
	struct table *(*walk_end)(const struct view *v, const struct analysis *a,
				  const struct view_opts *o, void *state);
};

/* build() of a view with walk_begin and walk_end, through its own walk. */
struct table *view_build_walked(const struct view *v, const struct analysis *a,
				const struct view_opts *o);

extern const struct view view_registry[];
extern const unsigned view_registry_count;
const struct view *view_find(const char *name);

struct table *view_trace(const struct view *v, const struct analysis *a, const struct view_opts *o);
struct table *view_perf(const struct view *v, const struct analysis *a, const struct view_opts *o);
struct table *view_device(const struct view *v, const struct analysis *a,
			  const struct view_opts *o);
struct table *view_overview(const struct view *v, const struct analysis *a,
			    const struct view_opts *o);
struct table *view_userdefined(const struct view *v, const struct analysis *a,
			       const struct view_opts *o);
struct table *view_model(const struct view *v, const struct analysis *a,
			 const struct view_opts *o);
struct table *view_distributed(const struct view *v, const struct analysis *a,
			       const struct view_opts *o);
struct table *view_operator(const struct view *v, const struct analysis *a,
			    const struct view_opts *o);
struct table *view_kernel(const struct view *v, const struct analysis *a,
			  const struct view_opts *o);
struct table *view_memcpy(const struct view *v, const struct analysis *a,
			  const struct view_opts *o);
struct table *view_memory(const struct view *v, const struct analysis *a,
			  const struct view_opts *o);
struct table *view_nvprof(const struct view *v, const struct analysis *a,
			  const struct view_opts *o);
void *view_operator_walk(const struct view *v, const struct analysis *a,
			 const struct view_opts *o, struct hw_request *req);
struct table *view_operator_end(const struct view *v, const struct analysis *a,
				const struct view_opts *o, void *state);
void *view_userdefined_walk(const struct view *v, const struct analysis *a,
			    const struct view_opts *o, struct hw_request *req);
struct table *view_userdefined_end(const struct view *v, const struct analysis *a,
				   const struct view_opts *o, void *state);
void *view_model_walk(const struct view *v, const struct analysis *a, const struct view_opts *o,
		      struct hw_request *req);
struct table *view_model_end(const struct view *v, const struct analysis *a,
			     const struct view_opts *o, void *state);
void *view_memory_walk(const struct view *v, const struct analysis *a, const struct view_opts *o,
		       struct hw_request *req);
struct table *view_memory_end(const struct view *v, const struct analysis *a,
			      const struct view_opts *o, void *state);
struct table *view_advice(const struct view *v, const struct analysis *a,
			  const struct view_opts *o);
struct job_dist;
/* The same with a job's distributed measurement (NULL: none). */
struct table *view_advice_of(const struct view *v, const struct analysis *a,
			     const struct job_dist *d, const struct view_opts *o);
struct table *view_steps(const struct view *v, const struct analysis *a,
			 const struct view_opts *o);
struct table *view_timeline(const struct view *v, const struct analysis *a,
			    const struct view_opts *o);

/* The training loop's phases, in the order the Model view's rows and the
 * Steps view's columns give them: Dataloader, Forward, Backward,
 * Optimization; and their types as a mask (bit 1u << type). */
#define VIEW_NPHASES 4
extern const unsigned view_phases[VIEW_NPHASES];
#define VIEW_PHASE_TYPES                                                                  \
	(1u << TRACE_EV_DATALOADER | 1u << TRACE_EV_FORWARD | 1u << TRACE_EV_BACKWARD |     \
	 1u << TRACE_EV_OPTIMIZATION)

/* ---- shared by views with Calls and Total/Avg/Max/Min/Ratio columns ---- */

/* Durations of the calls of one row: their CPU time, or their GPU time. */
struct time_stats {
	uint64_t calls;
	uint64_t total, max, min;
	/* the Operator view's CPU: total less the time of the ranges nested
	 * directly inside its calls on their threads (torch.profiler's
	 * self_cpu_time_total); 0 elsewhere */
	uint64_t self;
};

static inline void time_stats_add(struct time_stats *s, uint64_t ns)
{
	if (s->calls == 0 || ns < s->min)
		s->min = ns;
	if (ns > s->max)
		s->max = ns;
	s->total += ns;
	s->calls++;
}

/* ---- a view's rows as data (the SQL exports' aggregate tables) ---- */

/* A row by name: its calls' CPU stats (NULL for kernels), their GPU stats,
 * and the calls by duration in DURHIST_BUCKETS buckets (durhist.h): CPU for
 * operators, GPU for kernels. */
struct view_name_row {
	const char *name;
	const struct time_stats *cpu, *gpu;
	const uint64_t *hist;
};
/* Returns 0 to go on; anything else stops the rows and is returned. */
typedef int (*view_name_row_fn)(void *ctx, const struct view_name_row *r);
/* The rows of `summary --view operator` of a (threads merged, no detail) and
 * of `--view kernel` (streams merged), longest total first, then by name:
 * 0, or the first non-zero fn returned. */
int view_operator_rows(const struct analysis *a, view_name_row_fn fn, void *ctx);
int view_kernel_rows(const struct analysis *a, view_name_row_fn fn, void *ctx);

/* The five columns Total, Avg, Max, Min, Ratio(%) from column col on; "-" in
 * all five when the row has no timed call (a mark). */
void view_put_stats(struct trow *r, unsigned col, const struct time_stats *s, double ratio);
/* Order of two rows' stats under key: < 0 when a goes first. Descending for
 * total, avg and max, ascending for min (Paddle's order); GPU keys compare
 * the gpu stats (NULL: none), then CPU total. 0 on a tie, which the caller
 * breaks by name (rt_cmp), so that every format lists rows in one order. */
int view_stats_cmp(enum sort_key key, const struct time_stats *cpu_a,
		   const struct time_stats *cpu_b, const struct time_stats *gpu_a,
		   const struct time_stats *gpu_b);
/* "1234.56 ms" in the time unit, for notes. */
const char *view_time(char *buf, size_t size, uint64_t ns, enum time_unit unit);
/* "Thread: 1234 (name)", or "Thread: 12/1234 (name)" (pid/tid) with several processes. */
void view_thread_title(char *buf, size_t size, const struct analysis *a,
		       const struct store_track *t);
/* A part titled for a thread (or a GPU stream), or "Thread: All threads
 * merged" when track is NULL. */
struct tpart *view_thread_part(struct table *t, const struct analysis *a,
			       const struct store_track *track);
/* "GPU0", or "GPU0 (host)" when the traces come from several hosts. */
void view_device_name(char *buf, size_t size, const struct analysis *a, uint32_t dev);
/* The span of the traces: the earliest start and the latest end of any
 * event of any track (host threads and GPU streams, instants included);
 * 0 when there is no event (both 0). */
int view_span(const struct analysis *a, uint64_t *t0, uint64_t *t1);
/* ns as a percentage of the counted GPU work (gpu.h), within [0, 100]. */
double view_gpu_ratio(const struct analysis *a, uint64_t ns);
/* The note, where GPU work launched in the window ran outside it, that the
 * tables by launch and those clipped to the window give two GPU totals. */
void view_note_gpu_totals(struct table *t, const struct analysis *a, enum time_unit unit);
/* part / whole as a percentage within [0, 100]; 0 when whole is 0. */
double view_share(uint64_t part, uint64_t whole);
/* The event's type name; "Memory" for allocations, whatever the trace names say. */
const char *view_type_name(unsigned type);

/* Within a width (text): the brief headers ("Total(ms)", "GPU Avg(ms)"),
 * and the columns left out first: GPU Max/Min, then CPU Max/Min, then Self
 * Avg, GPU Avg, CPU Avg; Name, Calls, Total, Ratio(%), Self and GPU total
 * and ratio stay. */
#define VIEW_CPU_GROUP "CPU Total / Avg / Max / Min / Ratio(%)"
#define VIEW_CPU_COLUMNS                                                                   \
	{"CPU Total", "cpu_total", TCOL_TIME, VIEW_CPU_GROUP, 40, NULL, 0, "Total", 0, 0},      \
	{"CPU Avg", "cpu_avg", TCOL_TIME, VIEW_CPU_GROUP, 40, NULL, 0, "Avg", 2, 0},            \
	{"CPU Max", "cpu_max", TCOL_TIME, VIEW_CPU_GROUP, 40, NULL, 0, "Max", 6, 0},            \
	{"CPU Min", "cpu_min", TCOL_TIME, VIEW_CPU_GROUP, 40, NULL, 0, "Min", 6, 0},            \
	{"CPU Ratio(%)", "cpu_ratio", TCOL_PERCENT, VIEW_CPU_GROUP, 40, NULL, 0, "Ratio(%)", 0, 0}
#define VIEW_SELF_GROUP "Self Total / Avg"
#define VIEW_SELF_COLUMNS                                                                  \
	{"Self Total", "self_total", TCOL_TIME, VIEW_SELF_GROUP, 0, NULL, 0, "Self", 0, 0},     \
	{"Self Avg", "self_avg", TCOL_TIME, VIEW_SELF_GROUP, 0, NULL, 0, "Self Avg", 5, 0}
#define VIEW_GPU_GROUP "GPU Total / Avg / Max / Min / Ratio(%)"
#define VIEW_GPU_COLUMNS                                                                   \
	{"GPU Total", "gpu_total", TCOL_TIME, VIEW_GPU_GROUP, 40, NULL, 0, "GPU", 0, TCOL_GPU}, \
	{"GPU Avg", "gpu_avg", TCOL_TIME, VIEW_GPU_GROUP, 40, NULL, 0, "GPU Avg", 3, TCOL_GPU}, \
	{"GPU Max", "gpu_max", TCOL_TIME, VIEW_GPU_GROUP, 40, NULL, 0, "GPU Max", 7, TCOL_GPU}, \
	{"GPU Min", "gpu_min", TCOL_TIME, VIEW_GPU_GROUP, 40, NULL, 0, "GPU Min", 7, TCOL_GPU}, \
	{"GPU Ratio(%)", "gpu_ratio", TCOL_PERCENT, VIEW_GPU_GROUP, 40, NULL, 0, "GPU(%)", 0,   \
	 TCOL_GPU}

#endif
