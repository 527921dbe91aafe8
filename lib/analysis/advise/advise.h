/*
 * advise.h - findings about a trace (or a job), with evidence: what to
 * change and why, ranked by what each costs per step (`gprof-dl advise`,
 * gprof-dl-advise(1)).
 *
 * A rule reads what the analysis (and, for a job of two ranks or more, the
 * job's distributed measurement) holds and adds at most a few findings; a
 * rule without the data it needs adds none and says nothing. A finding is
 * a claim about the user's job: a rule fires only beyond its threshold,
 * and its threshold is stated (in the finding and in --rules).
 *
 * Saving: the time per step the finding's cause took that a fix could give
 * back, an estimate (an upper bound where said): findings are ranked by it,
 * ties by severity, then by rule id. Severity: HIGH when the saving is at
 * least 10 % of the median step, MEDIUM at least 3 %, LOW otherwise (a
 * rule may not say less than its own floor).
 */
#ifndef GPDL_ANALYSIS_ADVISE_H
#define GPDL_ANALYSIS_ADVISE_H

#include "lib/analysis/store/analysis.h"
#include "lib/analysis/views/view.h"

#include <stdint.h>
#include <stdio.h>

struct job_dist;

enum adv_severity { ADV_LOW = 0, ADV_MEDIUM = 1, ADV_HIGH = 2 };

#define ADV_MAX_EVIDENCE 8

struct adv_finding {
	const struct adv_rule *rule;
	enum adv_severity severity;
	double saving_ns;        /* per step, an estimate (see above) */
	double share;            /* of the median step, percent */
	char *what;              /* one line: what was found, with its figure */
	char *evidence[ADV_MAX_EVIDENCE]; /* lines: figures, steps, ranks, names */
	unsigned nevidence;
	char *try_this;          /* what to try */
	char *command;           /* the gprof-dl command that shows the table behind it */
};

struct adv_list {
	struct adv_finding *v;
	size_t n, cap;
};

/* What the rules read. */
struct adv_input {
	const struct analysis *a;      /* the traces as one program (always) */
	const struct job_dist *d;      /* a job of two ranks or more, else NULL */
	const char *const *paths;      /* the files given, for the commands shown */
	int npaths;
	unsigned skip;                 /* --skip-steps */
	/* the step the shares are of: the median counted step (ns), and the
	 * counted steps; 0: no steps (rules per step say nothing) */
	uint64_t step_ns;
	size_t steps;
	/* the steps the window holds (warm-up steps too): what a total over
	 * the window (the analysis's figures) is divided by for a per-step one */
	uint64_t window_steps;
};

struct adv_rule {
	const char *id;          /* stable: "input-bound", "sync-calls", ... */
	const char *title;
	const char *definition;  /* how it is computed */
	const char *threshold;   /* when it fires */
	const char *why;         /* the reason for the threshold */
	void (*run)(const struct adv_input *in, struct adv_list *out);
};

/* Every rule, in --rules order; NULL-terminated. */
extern const struct adv_rule *const adv_rules[];
const struct adv_rule *adv_rule_find(const char *id);

/* Adds a finding of rule r to out; the strings are copied (printf-style
 * for what). Returns it, for evidence, try_this and command. */
struct adv_finding *adv_add(struct adv_list *out, const struct adv_rule *r,
			    const struct adv_input *in, double saving_ns, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void adv_evidence(struct adv_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void adv_try(struct adv_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The command behind it: "gprof-dl summary FILES " + the given options. */
void adv_command(struct adv_finding *f, const struct adv_input *in, const char *opts);

/* Fills in: the analysis, the job (or NULL), the paths, the skip, and the
 * median counted step from the analysis's steps (perf.h). */
void adv_input_init(struct adv_input *in, const struct analysis *a, const struct job_dist *d,
		    const char *const *paths, int npaths, unsigned skip);

/* Runs every rule, ranks the findings. */
void adv_run(const struct adv_input *in, struct adv_list *out);
void adv_list_free(struct adv_list *l);
const char *adv_severity_name(enum adv_severity s); /* "high", "medium", "low" */
/* The findings in text (at most top of them, 0: all; within width
 * columns) or JSON; 0, or -1 when writing failed. */
int adv_write_text(FILE *out, const struct adv_input *in, const struct adv_list *l, size_t top,
		   unsigned width);
int adv_write_json(FILE *out, const struct adv_input *in, const struct adv_list *l);
/* --rules: every rule with its definition, threshold and reason. */
int adv_write_rules(FILE *out, unsigned width);
/* "0.40 ms", "120.0 us", "1.20 s": a time as the findings say it; buf. */
const char *adv_time(char *buf, size_t size, double ns);
/* "high", "medium", "low": 0 with *s set, -1 otherwise. */
int adv_severity_parse(const char *name, enum adv_severity *s);

#endif
