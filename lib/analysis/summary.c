/* summary.c - the Trace Summary and the chosen views of an analysis: text, CSV or JSON. */
#include "lib/analysis/summary.h"

#include "formats/csv/csv_out.h"
#include "formats/json/json_writer.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/dist/dist.h"
#include "lib/analysis/views/perf.h"
#include "lib/analysis/views/view_distributed.h"
#include "common/parallel.h"
#include "common/progress.h"
#include "common/error.h"

#include "formats/trace/capture.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int summary_format_parse(const char *s, enum summary_format *f)
{
	static const char *const names[] = {"text", "csv", "json"};
	for (unsigned i = 0; i < 3; i++) {
		if (strcmp(s, names[i]) == 0) {
			*f = (enum summary_format)i;
			return 0;
		}
	}
	return -1;
}

void summary_add_view(struct summary_opts *o, const struct view *v)
{
	for (unsigned i = 0; i < o->nviews; i++)
		if (o->views[i] == v)
			return;
	unsigned at = o->nviews;
	while (at > 0 && o->views[at - 1] > v) {
		o->views[at] = o->views[at - 1];
		at--;
	}
	o->views[at] = v;
	o->nviews++;
}

static unsigned summary_views(int from_steps, const struct summary_opts *o,
			      const struct view **out)
{
	if (o->nviews) {
		memcpy(out, o->views, o->nviews * sizeof(*out));
		return o->nviews;
	}
	unsigned n = 0;
	for (unsigned i = 0; i < view_registry_count; i++) {
		int d = view_registry[i].by_default;
		if (d == VIEW_DEFAULT || (d == VIEW_DEFAULT_WITH_STEPS && from_steps))
			out[n++] = &view_registry[i];
	}
	return n;
}

static void json_trace(struct json_writer *w, const struct store_file *f)
{
	json_begin_object(w);
	json_key(w, "path");
	json_string(w, f->path);
	json_key(w, "hostname");
	json_string(w, f->hostname);
	json_key(w, "pid");
	json_uint(w, f->pid);
	json_key(w, "rank");
	json_int(w, f->rank);
	json_key(w, "cmdline");
	json_string(w, f->cmdline);
	json_key(w, "size");
	json_uint(w, f->size);
	json_key(w, "events");
	json_uint(w, f->events);
	json_key(w, "marks");
	json_uint(w, f->marks);
	json_key(w, "open_at_exit");
	json_uint(w, f->open_at_exit);
	json_key(w, "unbalanced_pops");
	json_uint(w, f->unbalanced_pops);
	json_key(w, "dropped");
	json_uint(w, f->dropped);
	/* every reason with a count: "ring full", and an import's */
	json_key(w, "drop_reasons");
	json_begin_object(w);
	for (unsigned why = 0; why <= TRACE_DROP_REASON_COUNT; why++) {
		if (!f->drop_reasons[why])
			continue;
		json_key(w, trace_drop_reason_name(why));
		json_uint(w, f->drop_reasons[why]);
	}
	json_end_object(w);
	json_key(w, "damage");
	if (f->damage) {
		json_begin_object(w);
		json_key(w, "offset");
		json_uint(w, f->damage_offset);
		json_key(w, "reason");
		json_string(w, f->damage);
		json_end_object(w);
	} else {
		json_null(w);
	}
	json_end_object(w);
}

static void json_header(struct json_writer *w, const struct analysis *a, enum time_unit unit)
{
	json_key(w, "time_unit");
	json_string(w, time_unit_name(unit));
	json_key(w, "window");
	json_begin_object(w);
	json_key(w, "source");
	json_string(w, a->gpu_window ? "gpu span" : a->from_steps ? "ProfileStep" : "whole run");
	json_key(w, "steps");
	json_uint(w, a->steps);
	json_key(w, "total");
	json_double(w, (double)a->window_ns / time_unit_ns(unit));
	json_key(w, "total_ns");
	json_uint(w, a->window_ns);
	json_key(w, "intervals");
	json_uint(w, a->window.n);
	json_end_object(w);
	json_key(w, "events");
	json_begin_object(w);
	json_key(w, "total");
	json_uint(w, a->events);
	json_key(w, "marks");
	json_uint(w, a->marks);
	json_key(w, "open_at_exit");
	json_uint(w, a->open_at_exit);
	json_key(w, "unbalanced_pops");
	json_uint(w, a->unbalanced_pops);
	json_key(w, "dropped");
	json_uint(w, a->dropped);
	json_end_object(w);
	json_key(w, "traces");
	json_begin_array(w);
	for (uint32_t i = 0; i < a->store.nfiles; i++)
		json_trace(w, &a->store.files[i]);
	json_end_array(w);
}

struct build_job {
	const struct analysis *a;
	const struct view_opts *o;
	const struct view **views;
	struct table **tables; /* [0]: the Trace Summary, then one per view */
	unsigned order[SUMMARY_MAX_VIEWS + 3]; /* job -> table, SUMMARY_UNIONS, SUMMARY_WALK */
	/* the views that walk the host threads (view.walk_begin): their
	 * states, by table, and their walks, done in one */
	void *state[SUMMARY_MAX_VIEWS + 1];
	int walked[SUMMARY_MAX_VIEWS + 1];
	struct hw_request req[SUMMARY_MAX_VIEWS];
	unsigned nreq;
	unsigned late; /* the first job of the second round */
};

#define SUMMARY_UNIONS UINT32_MAX
#define SUMMARY_WALK (UINT32_MAX - 1)

/* The jobs in two rounds, each started in order. The first: the per-type
 * unions (one pass other views wait for) and the one walk of the host
 * threads that feeds every view that walks them (hostwalk_run_many()),
 * side by side, then the views that need neither. The second: the views
 * those fed, the views of the unions, and the Trace Summary. Returns the
 * first round's count; *n the two rounds'. */
static unsigned build_order(struct build_job *job, unsigned nviews, unsigned *n)
{
	unsigned k = 0;
	int unions = 0;
	for (unsigned i = 0; i < nviews; i++)
		unions |= job->views[i]->uses_types;
	if (unions)
		job->order[k++] = SUMMARY_UNIONS;
	if (job->nreq)
		job->order[k++] = SUMMARY_WALK;
	for (unsigned i = 0; i < nviews; i++)
		if (!job->views[i]->uses_types && !job->views[i]->walk_end)
			job->order[k++] = i + 1;
	unsigned first = k;
	for (unsigned i = 0; i < nviews; i++)
		if (job->views[i]->walk_end)
			job->order[k++] = i + 1;
	for (unsigned i = 0; i < nviews; i++)
		if (job->views[i]->uses_types && !job->views[i]->walk_end)
			job->order[k++] = i + 1;
	job->order[k++] = 0;
	*n = k;
	return first;
}

static void build_table(void *ctx, unsigned j)
{
	struct build_job *job = ctx;
	unsigned i = job->order[j];
	if (i == SUMMARY_UNIONS) {
		analysis_types(job->a);
	} else if (i == SUMMARY_WALK) {
		hostwalk_run_many(job->a, job->req, job->nreq);
	} else if (i == 0) {
		job->tables[0] = view_trace(NULL, job->a, job->o);
	} else {
		const struct view *v = job->views[i - 1];
		job->tables[i] = v->walk_end ? v->walk_end(v, job->a, job->o, job->state[i])
					     : v->build(v, job->a, job->o);
	}
}

/* The second round's jobs, after the first's. */
static void build_table_late(void *ctx, unsigned j)
{
	struct build_job *job = ctx;
	build_table(ctx, j + job->late);
}

static void summary_out_start(struct summary_out *s, enum summary_format format, FILE *out,
			      enum time_unit unit, int pretty)
{
	s->format = format;
	s->f = out;
	s->st = (struct table_style){.unit = unit};
	s->top = 0;
	if (format == SUMMARY_CSV) {
		csv_out_init(&s->csv, out);
	} else if (format == SUMMARY_JSON) {
		json_writer_init(&s->json, out, pretty);
		json_begin_object(&s->json);
	}
}

void summary_out_begin(struct summary_out *s, enum summary_format format, FILE *out,
		       enum time_unit unit)
{
	summary_out_start(s, format, out, unit, 1);
}

void summary_out_begin_opts(struct summary_out *s, const struct summary_opts *o, FILE *out)
{
	summary_out_start(s, o->format, out, o->view.unit, !o->compact);
}

void summary_out_fit(struct summary_out *s, const struct summary_opts *o, int has_gpu)
{
	int text = s->format == SUMMARY_TEXT;
	s->top = o->top >= 0 ? (size_t)o->top : text ? SUMMARY_TOP_TEXT : 0;
	if (!text)
		return;
	if (!o->fit) {
		s->st.name_max = UINT_MAX;
		return;
	}
	s->st.width = o->width ? o->width : table_text_width(s->f);
	/* all zero but for being there: --wide and the other formats keep them */
	s->st.no_gpu = !has_gpu;
	if (!has_gpu)
		fputs("no GPU work recorded: GPU columns hidden (--wide shows them)\n\n", s->f);
}

/* A view of GPU work with nothing to show, in a default text summary of
 * traces without GPU work: said once by summary_out_fit(). */
static int summary_out_hides(const struct summary_out *s, const struct summary_opts *o,
			     const struct view *v, const struct table *t)
{
	return s->st.no_gpu && !o->nviews && v->gpu_view && table_row_count(t) == 0;
}

void summary_out_keep_top(const struct summary_out *s, struct table *t)
{
	if (t->keep_all == TABLE_KEEP_DATA && s->format != SUMMARY_TEXT)
		return;
	table_keep_top(t, s->top);
}

void summary_out_tables(struct summary_out *s)
{
	if (s->format == SUMMARY_JSON) {
		json_key(&s->json, "tables");
		json_begin_object(&s->json);
	}
}

void summary_out_table(struct summary_out *s, const char *key, const struct table *t)
{
	if (s->format == SUMMARY_TEXT) {
		table_render_text(t, s->f, &s->st);
	} else if (s->format == SUMMARY_CSV) {
		table_render_csv(t, &s->csv, &s->st);
	} else if (key) {
		json_key(&s->json, key);
		table_render_json(t, &s->json, &s->st);
	}
}

int summary_out_end(struct summary_out *s)
{
	int failed = 0;
	if (s->format == SUMMARY_CSV) {
		failed = csv_out_error(&s->csv);
	} else if (s->format == SUMMARY_JSON) {
		json_end_object(&s->json); /* tables */
		json_end_object(&s->json);
		fputc('\n', s->f);
		failed = json_writer_error(&s->json);
	}
	if (fflush(s->f) != 0 || ferror(s->f))
		failed = 1;
	return failed ? -1 : 0;
}

/* CSV with views named: their tables only, not the Trace Summary, so that
 * one view is one table a reader loads as it is (formats/CSV-SCHEMA.md). */
static int csv_views_only(const struct summary_opts *o)
{
	return o->format == SUMMARY_CSV && o->nviews;
}

/* The Trace Summary (tables[0]) and the n views' tables (summary.h). */
void summary_build(const struct analysis *a, const struct view_opts *o,
		   const struct view **views, unsigned n, struct table **tables)
{
	struct build_job *job = xcalloc(1, sizeof(*job));
	*job = (struct build_job){.a = a, .o = o, .views = views, .tables = tables};
	/* a view that walks the host threads gives its visitor now; NULL: it
	 * walks on its own (--thread-sep: a walk per thread) */
	for (unsigned i = 0; i < n; i++) {
		if (!views[i]->walk_begin)
			continue;
		struct hw_request req = {0};
		job->state[i + 1] = views[i]->walk_begin(views[i], a, o, &req);
		if (job->state[i + 1])
			job->req[job->nreq++] = req;
	}
	unsigned njobs, first = build_order(job, n, &njobs);
	/* The views only read the analysis: their tables are built side by side
	 * (the Overview's union pass next to the host threads' walk), then
	 * printed in order. */
	progress_phase("building %u tables", n + 1);
	parallel_for(first, build_table, job);
	job->late = first;
	parallel_for(njobs - first, build_table_late, job);
	progress_done();
	free(job);
}

int summary_write(const struct analysis *a, const struct summary_opts *o, FILE *out)
{
	const struct view *views[SUMMARY_MAX_VIEWS];
	unsigned n = summary_views(a->from_steps, o, views);
	struct table *tables[SUMMARY_MAX_VIEWS + 1];
	summary_build(a, &o->view, views, n, tables);

	struct summary_out s;
	summary_out_begin_opts(&s, o, out);
	summary_out_fit(&s, o, a->gpu.has_gpu);
	if (o->format == SUMMARY_JSON)
		json_header(&s.json, a, o->view.unit);
	summary_out_tables(&s);
	for (unsigned i = 0; i <= n; i++) {
		/* the Trace Summary is the JSON's top-level members */
		summary_out_keep_top(&s, tables[i]);
		if (i ? !summary_out_hides(&s, o, views[i - 1], tables[i]) : !csv_views_only(o))
			summary_out_table(&s, i ? views[i - 1]->name : NULL, tables[i]);
		table_free(tables[i]);
	}
	return summary_out_end(&s);
}

/* ---- a job ------------------------------------------------------------------------- */

/* The views a job measures rank by rank (job_dist_measure()): the
 * Distributed view, and the Perf Summary of the job's steps. */
static int job_view(const struct view *v)
{
	return v == view_find("distributed") || v == view_find("perf");
}

int summary_is_job(const struct job *j, const struct summary_opts *o)
{
	if (j->nranks < 2)
		return 0;
	if (!o->nviews)
		return 1; /* the Distributed view is one of the defaults */
	for (unsigned i = 0; i < o->nviews; i++)
		if (job_view(o->views[i]) || o->views[i] == view_find("advice"))
			return 1;
	return 0;
}

static void json_job(struct json_writer *w, const struct job *j)
{
	json_key(w, "job");
	json_begin_object(w);
	json_key(w, "ranks");
	json_uint(w, j->nranks);
	json_key(w, "hosts");
	json_uint(w, j->nhosts);
	json_key(w, "clock");
	json_string(w, j->wall_clock ? "wall" : j->clock);
	json_end_object(w);
}

static int job_dist_has_gpu(const struct job_dist *d)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (d->r[i].src.gpu_comp || d->r[i].src.gpu_comm)
			return 1;
	return 0;
}

int summary_write_job(struct job *j, const struct summary_opts *o, FILE *out, const char *done)
{
	char err[1024];
	struct analysis sum, all;
	analysis_init(&sum);
	analysis_init(&all);
	all.store.by_shapes = o->view.group_shapes;
	all.want_gpu_window = o->view.gpu_window;
	/* rank by rank first, so that the whole job (when other views need it)
	 * is never in memory beside a rank */
	struct job_dist *d = job_dist_measure(j, PERF_SKIP_OF(&o->view), &sum, done, err, sizeof(err));
	if (!d) {
		progress_done();
		error("%s", err);
		analysis_free(&sum);
		return 1;
	}
	const struct view *views[SUMMARY_MAX_VIEWS], *others[SUMMARY_MAX_VIEWS];
	const struct view *dist = view_find("distributed");
	unsigned n = summary_views(job_dist_from_steps(d), o, views), nothers = 0;
	for (unsigned i = 0; i < n; i++)
		if (!job_view(views[i]))
			others[nothers++] = views[i];
	const struct analysis *a = &sum;
	if (nothers) {
		if (job_load_all(j, &all, err, sizeof(err)) != 0) {
			progress_done();
			error("%s", err);
			job_dist_free(d);
			analysis_free(&sum);
			analysis_free(&all);
			return 1;
		}
		a = &all;
	}
	struct table *tables[SUMMARY_MAX_VIEWS + 1];
	summary_build(a, &o->view, others, nothers, tables);
	/* the advice of a job speaks of its ranks too, as `gprof-dl advise` does */
	for (unsigned i = 0; i < nothers; i++)
		if (others[i] == view_find("advice")) {
			table_free(tables[i + 1]);
			tables[i + 1] = view_advice_of(others[i], a, d, &o->view);
		}

	struct summary_out s;
	summary_out_begin_opts(&s, o, out);
	summary_out_fit(&s, o, a->gpu.has_gpu || job_dist_has_gpu(d));
	if (o->format == SUMMARY_JSON) {
		json_header(&s.json, a, o->view.unit);
		json_job(&s.json, j);
	}
	summary_out_tables(&s);
	if (!csv_views_only(o))
		summary_out_table(&s, NULL, tables[0]);
	table_free(tables[0]);
	for (unsigned i = 0, k = 1; i < n; i++) {
		if (!job_view(views[i])) {
			summary_out_keep_top(&s, tables[k]);
			if (!summary_out_hides(&s, o, views[i], tables[k]))
				summary_out_table(&s, views[i]->name, tables[k]);
			table_free(tables[k++]);
			continue;
		}
		if (views[i] != dist) { /* the job's Perf Summary, as `gprof-dl bench` gives it */
			struct table *t = jobperf_table(&d->jp, views[i]->name, views[i]->title);
			if (!summary_out_hides(&s, o, views[i], t))
				summary_out_table(&s, views[i]->name, t);
			table_free(t);
			continue;
		}
		struct table *t = job_dist_table(d, dist, &o->view);
		struct table *c = job_dist_collectives(d, &o->view);
		table_keep_top(t, s.top);
		table_keep_top(c, s.top);
		summary_out_table(&s, dist->name, t);
		summary_out_table(&s, c->id, c);
		table_free(t);
		table_free(c);
	}
	job_dist_free(d);
	analysis_free(&sum);
	analysis_free(&all);
	return summary_out_end(&s);
}

/* ---- the whole of `gprof-dl summary` --------------------------------------------- */

int summary_files(int n, char *const *paths, const struct summary_opts *o, long cycle,
		  FILE *out, const char *done)
{
	struct job j;
	char err[1024];
	if (job_open_said(&j, n, paths, o->job_flags) != 0)
		return 1;
	int as_job = summary_is_job(&j, o);
	struct analysis a;
	analysis_init(&a);
	a.store.by_shapes = o->view.group_shapes;
	a.want_gpu_window = o->view.gpu_window;
	int rc = 1;
	if (!as_job && job_load_all(&j, &a, err, sizeof(err)) != 0) {
		progress_done();
		error("%s", err);
		goto out;
	}
	if (cycle >= 0 && (as_job || capture_restrict(&a, (uint32_t)cycle, err, sizeof(err)) != 0)) {
		error("%s", as_job ? "--cycle takes one trace" : err);
		goto out;
	}
	if (!as_job)
		job_warn_damage(&a, 0, done);
	if (!out)
		out = stdout;
	rc = as_job ? summary_write_job(&j, o, out, done) : summary_write(&a, o, out);
out:
	analysis_free(&a);
	job_free(&j);
	return rc;
}
