/*
 * advice.c - see advice.h. A job of two ranks or more is measured rank by
 * rank first (job_dist_measure(), as the Distributed view is: the straggler
 * and communication rules read it), then loaded whole for the other rules.
 */
#include "lib/analysis/advice.h"
#include "lib/analysis/dist/dist.h"
#include "common/progress.h"
#include "lib/analysis/table/table.h"

#include "common/error.h"

#include <stdint.h>

static int fails(const struct advice_opts *o, const struct adv_list *l)
{
	if (!o->fail_set)
		return 0;
	for (size_t i = 0; i < l->n; i++)
		if (o->fail_rule ? l->v[i].rule == o->fail_rule
				 : l->v[i].severity >= o->fail_severity)
			return 1;
	return 0;
}

int advice_files(int n, char *const *paths, const struct advice_opts *o, FILE *out)
{
	struct job j;
	char err[1024];
	if (job_open_said(&j, n, paths, o->job_flags) != 0)
		return 1;
	struct analysis sum, all;
	analysis_init(&sum);
	analysis_init(&all);
	struct job_dist *d = NULL;
	int rc = -1;
	if (j.nranks >= 2) {
		d = job_dist_measure(&j, o->skip, &sum, "advised", err, sizeof(err));
		if (!d)
			goto fail;
	}
	if (job_load_all(&j, &all, err, sizeof(err)) != 0)
		goto fail;
	progress_done();
	struct adv_input in;
	struct adv_list l = {0};
	adv_input_init(&in, &all, d, (const char *const *)paths, n, o->skip);
	adv_run(&in, &l);
	int w = o->json ? adv_write_json(out, &in, &l)
			: adv_write_text(out, &in, &l, o->top, table_text_width(out));
	if (fflush(out) != 0 || w != 0)
		error("cannot write the findings: %s", "write error");
	else
		rc = fails(o, &l);
	adv_list_free(&l);
	goto done;
fail:
	progress_done();
	error("%s", err);
done:
	if (d)
		job_dist_free(d);
	analysis_free(&sum);
	analysis_free(&all);
	job_free(&j);
	return rc;
}
