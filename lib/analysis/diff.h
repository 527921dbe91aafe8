/*
 * diff.h - what changed between two sets of traces, A (before) and B
 * (after), view by view: `gprof-dl diff`.
 *
 * A view is built for A and for B with the same options (view.h); the diff
 * of the two tables matches their rows by key and compares their times:
 *  - a row's key is its part's label (or title) when the table has more
 *    than one part, then the names of the row and of its ancestors
 *    (rows are in tree pre-order), shown as "Parent > Child";
 *  - the times compared are the CPU Total and the GPU Total columns (JSON
 *    keys "cpu_total", "gpu_total") of views that have them: the Model,
 *    Operator, Kernel, Memory Manipulation and UserDefined views; a view
 *    with neither cannot be diffed;
 *  - each side's times are divided by its divisor: its counted training
 *    steps, so that runs of different lengths compare per step, or 1 for
 *    totals;
 *  - a row of B alone is "new", of A alone "vanished", of both "changed"
 *    (or "same" when calls and times are equal);
 *  - impact: the larger of |CPU delta| and |GPU delta| (B - A); rows are
 *    sorted by impact, largest first, then by key;
 *  - relative change: delta / A's time, in percent; unset for new rows and
 *    where A's time is 0.
 */
#ifndef GPDL_ANALYSIS_DIFF_H
#define GPDL_ANALYSIS_DIFF_H

#include "lib/analysis/summary.h"
#include "lib/analysis/table/table.h"

#include <stdio.h>

/* The views `gprof-dl diff` compares by default, in this order. */
extern const char *const diff_default_views[];
extern const unsigned diff_default_view_count;

/* 1 when a table of this view has a CPU Total or GPU Total column. */
int diff_view_supported(const struct table *t);

struct diff_side {
	const struct table *t;
	double divisor; /* > 0: steps, or 1 */
	const char *name; /* "A" or a file name, for the notes */
};

/* The diff table of two tables of one view (same columns), id and title as
 * the view's ("model", "Model Summary"). Columns: Name, Status, Calls A,
 * Calls B, then for CPU and for GPU (when the view has them) A, B, Delta,
 * Delta(%). top > 0 keeps the top rows by impact and says in a note how
 * many more changed; 0 keeps every row. per_step: the notes say times are
 * per step. Never NULL. */
struct table *diff_tables(const char *id, const char *title, const struct diff_side *a,
			  const struct diff_side *b, unsigned top, int per_step);

/* `gprof-dl diff` minus its command line (report --baseline calls it too). */
struct diff_opts {
	struct summary_opts s; /* the views (none: the defaults), their options, the format */
	unsigned top;          /* rows per view, largest change first; 0 all */
	int totals;            /* compare totals, not times per step */
	unsigned skip;         /* jobs: steps of each rank left out of "Ranks Compared" */
	char **files[2];       /* the files of A and of B */
	int nfiles[2];
};

/* Reads both sides (each side's files one program, or a job when both sides
 * hold ranks) and writes their diff, as o->s.format says, to out (NULL:
 * standard output; a file is the caller's, cmd/output.h). Returns 0; 1
 * after an error message (a file that cannot be read), or when a write
 * failed. */
int diff_files(const struct diff_opts *o, FILE *out);

#endif
