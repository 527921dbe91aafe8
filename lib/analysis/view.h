/*
 * view.h - the views of `gprof-dl summary`, one file each (view_<name>.c):
 * a view reads the prepared analysis and fills a table; it never prints.
 *
 * The registry lists every view a user can name with --view, in the order
 * they print (Paddle's order). Views of later work (model, operator, ...)
 * are registered already and build a table that says they have no data, so
 * that scripts can name them today.
 */
#ifndef GPDL_ANALYSIS_VIEW_H
#define GPDL_ANALYSIS_VIEW_H

#include "lib/analysis/analysis.h"
#include "lib/analysis/table.h"

enum sort_key {
	SORT_CPU_TOTAL,
	SORT_CPU_AVG,
	SORT_CPU_MAX,
	SORT_CPU_MIN,
	SORT_GPU_TOTAL,
	SORT_GPU_AVG,
	SORT_GPU_MAX,
	SORT_GPU_MIN,
};

/* "cpu-total", ..., "gpu-min": 0 with *k set, -1 when not a key. */
int sort_key_parse(const char *s, enum sort_key *k);

struct view_opts {
	int thread_sep;
	int op_detail;
	enum sort_key sort;
	enum time_unit unit; /* for notes that quote times */
};

struct view {
	const char *name;  /* --view NAME */
	const char *title; /* "Overview Summary" */
	struct table *(*build)(const struct view *v, const struct analysis *a,
			       const struct view_opts *o);
	int by_default;    /* printed when no --view is given */
	const char *needs; /* later views: what data they need, for the no-data table */
};

extern const struct view view_registry[];
extern const unsigned view_registry_count;
const struct view *view_find(const char *name);

struct table *view_trace(const struct view *v, const struct analysis *a, const struct view_opts *o);
struct table *view_device(const struct view *v, const struct analysis *a,
			  const struct view_opts *o);
struct table *view_overview(const struct view *v, const struct analysis *a,
			    const struct view_opts *o);
struct table *view_userdefined(const struct view *v, const struct analysis *a,
			       const struct view_opts *o);
struct table *view_no_data(const struct view *v, const struct analysis *a,
			   const struct view_opts *o);

/* ---- shared by views with Calls and Total/Avg/Max/Min/Ratio columns ---- */

/* Durations of the calls of one row: CPU time now, GPU time later. */
struct time_stats {
	uint64_t calls;
	uint64_t total, max, min;
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

/* The five columns Total, Avg, Max, Min, Ratio(%) from column col on; "-" in
 * all five when the row has no timed call (a mark). */
void view_put_stats(struct trow *r, unsigned col, const struct time_stats *s, double ratio);
/* Order of two rows' stats under key: < 0 when a goes first. Descending for
 * total, avg and max, ascending for min (Paddle's order); GPU keys compare
 * the gpu stats, which are all zero until device work is collected. */
int view_stats_cmp(enum sort_key key, const struct time_stats *cpu_a,
		   const struct time_stats *cpu_b, const struct time_stats *gpu_a,
		   const struct time_stats *gpu_b);
/* "1234.56 ms" in the time unit, for notes. */
const char *view_time(char *buf, size_t size, uint64_t ns, enum time_unit unit);
/* "Thread: 1234 (name)", or "Thread: 12/1234 (name)" (pid/tid) with several processes. */
void view_thread_title(char *buf, size_t size, const struct analysis *a,
		       const struct store_track *t);

#define VIEW_CPU_GROUP "CPU Total / Avg / Max / Min / Ratio(%)"
#define VIEW_CPU_COLUMNS                                                                   \
	{"CPU Total", "cpu_total", TCOL_TIME, VIEW_CPU_GROUP, 40, NULL},                   \
	{"CPU Avg", "cpu_avg", TCOL_TIME, VIEW_CPU_GROUP, 40, NULL},                       \
	{"CPU Max", "cpu_max", TCOL_TIME, VIEW_CPU_GROUP, 40, NULL},                       \
	{"CPU Min", "cpu_min", TCOL_TIME, VIEW_CPU_GROUP, 40, NULL},                       \
	{"CPU Ratio(%)", "cpu_ratio", TCOL_PERCENT, VIEW_CPU_GROUP, 40, NULL}

#endif
