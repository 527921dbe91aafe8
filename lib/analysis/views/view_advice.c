/*
 * view_advice.c - the Advice Summary (`summary --view advice`): the
 * findings of `gprof-dl advise` (lib/analysis/advise/advise.h) as a table,
 * a row each in rank order, its evidence and what to try as rows under it.
 * Over a job's rank files summary builds it with the job's distributed
 * measurement (summary.c), so the rules about ranks speak as in advise.
 */
#include "lib/analysis/advise/advise.h"
#include "lib/analysis/views/perf.h"
#include "lib/analysis/views/view.h"

enum { AC_RULE, AC_SEVERITY, AC_SAVING, AC_SHARE, AC_FINDING };

static const struct tcol advice_cols[] = {
	{"Rule", "rule", TCOL_TEXT, NULL, 12, NULL},
	{"Severity", "severity", TCOL_TEXT, NULL, 6, NULL, 0, "Sev"},
	{"Saving per Step", "saving", TCOL_TIME, NULL, 0, NULL, 0, "Saving"},
	{"Share of Step (%)", "share", TCOL_PERCENT, NULL, 0, NULL, 0, "Step(%)"},
	{"Finding", "finding", TCOL_TEXT, NULL, 30, NULL},
};

struct table *view_advice_of(const struct view *v, const struct analysis *a,
			     const struct job_dist *d, const struct view_opts *o)
{
	struct table *t = table_new(v->name, v->title, advice_cols,
				    sizeof(advice_cols) / sizeof(advice_cols[0]));
	struct adv_input in;
	struct adv_list l = {0};
	adv_input_init(&in, a, d, NULL, 0, o->skip_set ? o->skip_steps : PERF_SKIP_DEFAULT);
	adv_run(&in, &l);
	struct tpart *p = table_add_part(t, NULL, NULL, NULL);
	for (size_t i = 0; i < l.n; i++) {
		const struct adv_finding *f = &l.v[i];
		struct trow *r = tpart_add_row(t, p, 0);
		trow_text(r, AC_RULE, f->rule->id);
		trow_text(r, AC_SEVERITY, adv_severity_name(f->severity));
		if (in.step_ns) {
			trow_time(r, AC_SAVING, f->saving_ns);
			trow_percent(r, AC_SHARE, f->share);
		}
		trow_text(r, AC_FINDING, f->what);
		for (unsigned k = 0; k < f->nevidence; k++)
			trow_text(tpart_add_row(t, p, 1), AC_FINDING, f->evidence[k]);
		if (f->try_this)
			trow_text(tpart_add_row(t, p, 1), AC_FINDING, f->try_this);
	}
	table_set_empty(t, "No finding: no rule's threshold was crossed (gprof-dl advise --rules).");
	table_note(t, "Ranked by the saving: the time per step the finding's cause took that a change "
		      "could give back, an estimate; under each finding its evidence, then what to "
		      "try. gprof-dl advise gives each rule's threshold and the command behind it.");
	adv_list_free(&l);
	return t;
}

struct table *view_advice(const struct view *v, const struct analysis *a,
			  const struct view_opts *o)
{
	return view_advice_of(v, a, NULL, o);
}
