/*
 * advice.h - `gprof-dl advise`: the findings of advise.h over one or more
 * traces (a program, or a job's rank files), written as text or JSON, and
 * the exit status a CI job gates on (gprof-dl-advise(1)).
 */
#ifndef GPDL_ANALYSIS_ADVICE_H
#define GPDL_ANALYSIS_ADVICE_H

#include "lib/analysis/advise/advise.h"

#include <stdio.h>

struct advice_opts {
	int json;               /* --format json */
	unsigned skip;          /* --skip-steps */
	size_t top;             /* text: the findings shown (0: all) */
	unsigned job_flags;     /* job_open()'s (--mixed-jobs) */
	/* --fail-on: a finding of this severity or above, or of this rule */
	int fail_set;
	enum adv_severity fail_severity;
	const struct adv_rule *fail_rule;
};

/* Reads the traces, runs the rules, writes the findings to out. Returns 0;
 * 1 when --fail-on's condition holds (the findings are written all the
 * same), as `gprof-dl bench`'s gate; -1 when a trace cannot be read or
 * writing failed (said on stderr). */
int advice_files(int n, char *const *paths, const struct advice_opts *o, FILE *out);

#endif
