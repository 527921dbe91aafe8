/*
 * summary.h - `gprof-dl summary` minus its command line: the Trace Summary
 * and the chosen views of a prepared analysis, as text, CSV or JSON.
 */
#ifndef GPDL_ANALYSIS_SUMMARY_H
#define GPDL_ANALYSIS_SUMMARY_H

#include "lib/analysis/view.h"

#include <stdio.h>

enum summary_format {
	SUMMARY_TEXT,
	SUMMARY_CSV,
	SUMMARY_JSON,
};

#define SUMMARY_MAX_VIEWS 32

struct summary_opts {
	struct view_opts view;
	enum summary_format format;
	const struct view *views[SUMMARY_MAX_VIEWS]; /* in registry order; none: the defaults */
	unsigned nviews;
};

/* "text", "csv", "json": 0 with *f set, -1 otherwise. */
int summary_format_parse(const char *s, enum summary_format *f);
/* Adds a view once, keeping the registry's order. */
void summary_add_view(struct summary_opts *o, const struct view *v);
/* Returns 0, or -1 when writing to out failed. */
int summary_write(const struct analysis *a, const struct summary_opts *o, FILE *out);

#endif
