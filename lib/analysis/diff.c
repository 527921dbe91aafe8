/*
 * diff.c - the diff of two tables of one view (diff.h): rows matched by
 * their name path, their CPU and GPU Totals compared per step or in total;
 * and `gprof-dl diff` itself (diff_files), both sides read and every view
 * compared, for the diff command and report --baseline.
 *
 * Both tables' rows become entries keyed by part and name path; one sort
 * brings the entries of a key together (A's before B's), so matching is
 * O(n log n) however many rows --op-detail makes. A key met twice on one
 * side (two parts of one label) is added up: its rows are one thing to
 * compare.
 */
#include "lib/analysis/diff.h"

#include "formats/csv/csv_out.h"
#include "formats/json/json_writer.h"
#include "lib/analysis/dist/job.h"
#include "common/parallel.h"
#include "common/progress.h"
#include "lib/analysis/dist/jobperf.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const diff_default_views[] = {"model", "operator", "kernel", "memory-manipulation",
					  "userdefined"};
const unsigned diff_default_view_count = sizeof(diff_default_views) / sizeof(diff_default_views[0]);

/* Inside a key, the parts of a path are joined by a byte no name holds, so
 * that "a > b" as one name never meets b under a; shown as " > ". */
#define KEY_SEP '\x1f'

enum { SIDE_A, SIDE_B };

/* One side's numbers for one key: raw totals, before the divisor. */
struct diff_vals {
	int present;
	uint64_t calls;
	int calls_set, cpu_set, gpu_set;
	double cpu, gpu;
};

struct diff_entry {
	char *key;
	unsigned side;
	struct diff_vals v;
};

struct diff_entries {
	struct diff_entry *v;
	size_t n, cap;
};

enum diff_status { DS_NEW, DS_VANISHED, DS_CHANGED, DS_SAME };

static const char *const status_words[] = {"new", "vanished", "changed", "same"};

struct diff_row {
	char *key;
	struct diff_vals a, b;
	enum diff_status status;
	double impact;
};

/* The column of part p whose JSON key is key and whose kind is kind; -1: none. */
static int find_col(const struct table *t, const struct tpart *p, const char *key,
		    enum tcol_kind kind)
{
	const struct tcol *cols = p ? p->cols : t->cols;
	for (unsigned i = 0; i < t->ncols; i++)
		if (strcmp(cols[i].key, key) == 0 && cols[i].kind == kind)
			return (int)i;
	return -1;
}

int diff_view_supported(const struct table *t)
{
	return find_col(t, NULL, "cpu_total", TCOL_TIME) >= 0 ||
	       find_col(t, NULL, "gpu_total", TCOL_TIME) >= 0;
}

/* The key of row r: the part's label (when parts tell rows apart), then the
 * names from the root down to r, joined by KEY_SEP. */
static char *row_key(const char *part, const char *const *path, unsigned depth)
{
	size_t len = part ? strlen(part) + 1 : 0;
	for (unsigned d = 0; d <= depth; d++)
		len += strlen(path[d]) + 1;
	char *k = xmalloc(len + 1), *at = k;
	if (part) {
		at = stpcpy(at, part);
		*at++ = KEY_SEP;
	}
	for (unsigned d = 0; d <= depth; d++) {
		at = stpcpy(at, path[d]);
		if (d < depth)
			*at++ = KEY_SEP;
	}
	*at = '\0';
	return k;
}

static struct diff_entry *entry_add(struct diff_entries *e)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 64;
		e->v = xrealloc(e->v, e->cap * sizeof(*e->v));
	}
	struct diff_entry *x = &e->v[e->n++];
	memset(x, 0, sizeof(*x));
	return x;
}

static void add_part(struct diff_entries *e, const struct table *t, const struct tpart *p,
		     unsigned side, int keyed_by_part)
{
	int name = find_col(t, p, "name", TCOL_TEXT);
	int calls = find_col(t, p, "calls", TCOL_COUNT);
	int cpu = find_col(t, p, "cpu_total", TCOL_TIME);
	int gpu = find_col(t, p, "gpu_total", TCOL_TIME);
	if (name < 0)
		name = 0;
	const char *part = keyed_by_part ? (p->label ? p->label : p->title ? p->title : "") : NULL;
	/* rows are in pre-order: path[d] is the name of the current row's
	 * ancestor at depth d */
	const char **path = xcalloc(p->nrows + 1, sizeof(*path));
	unsigned top = 0; /* path[0..top) is valid */
	for (size_t i = 0; i < p->nrows; i++) {
		const struct trow *r = &p->rows[i];
		/* a row deeper than its predecessor's child: under the predecessor */
		unsigned depth = r->depth < top ? r->depth : top;
		const struct tcell *nc = &r->cells[name];
		path[depth] = nc->set && p->cols[name].kind == TCOL_TEXT ? nc->v.text : "";
		top = depth + 1;
		struct diff_entry *x = entry_add(e);
		x->key = row_key(part, path, depth);
		x->side = side;
		x->v.present = 1;
		if (calls >= 0 && r->cells[calls].set) {
			x->v.calls_set = 1;
			x->v.calls = r->cells[calls].v.count;
		}
		/* an unset time (a mark, a row of no GPU work) is no time */
		if (cpu >= 0 && r->cells[cpu].set) {
			x->v.cpu_set = 1;
			x->v.cpu = r->cells[cpu].v.ns;
		}
		if (gpu >= 0 && r->cells[gpu].set) {
			x->v.gpu_set = 1;
			x->v.gpu = r->cells[gpu].v.ns;
		}
	}
	free(path);
}

static void add_table(struct diff_entries *e, const struct table *t, unsigned side,
		      int keyed_by_part)
{
	for (size_t i = 0; t && i < t->nparts; i++)
		add_part(e, t, &t->parts[i], side, keyed_by_part);
}

static int entry_cmp(const void *x, const void *y)
{
	const struct diff_entry *a = x, *b = y;
	int c = strcmp(a->key, b->key);
	if (c)
		return c;
	return (a->side > b->side) - (a->side < b->side);
}

static void vals_add(struct diff_vals *to, const struct diff_vals *v)
{
	to->present = 1;
	to->calls += v->calls;
	to->calls_set |= v->calls_set;
	to->cpu_set |= v->cpu_set;
	to->gpu_set |= v->gpu_set;
	to->cpu += v->cpu;
	to->gpu += v->gpu;
}

/* Equal per divisor: x / dx == y / dy, compared without dividing. */
static int same_rate(double x, double dx, double y, double dy)
{
	return x * dy == y * dx;
}

static void row_judge(struct diff_row *r, double da, double db)
{
	double cpu = fabs(r->b.cpu / db - r->a.cpu / da);
	double gpu = fabs(r->b.gpu / db - r->a.gpu / da);
	r->impact = cpu > gpu ? cpu : gpu;
	if (!r->a.present)
		r->status = DS_NEW;
	else if (!r->b.present)
		r->status = DS_VANISHED;
	else if (same_rate((double)r->a.calls, da, (double)r->b.calls, db) &&
		 same_rate(r->a.cpu, da, r->b.cpu, db) && same_rate(r->a.gpu, da, r->b.gpu, db))
		r->status = DS_SAME;
	else
		r->status = DS_CHANGED;
}

/* The entries, sorted, as one row per key; the keys move to the rows. */
static struct diff_row *match(struct diff_entries *e, size_t *n, double da, double db)
{
	if (e->n) /* (no array at all when both tables are empty) */
		qsort(e->v, e->n, sizeof(*e->v), entry_cmp);
	struct diff_row *rows = xcalloc(e->n ? e->n : 1, sizeof(*rows));
	size_t k = 0;
	for (size_t i = 0; i < e->n;) {
		struct diff_row *r = &rows[k++];
		r->key = e->v[i].key;
		size_t j = i;
		for (; j < e->n && strcmp(e->v[j].key, r->key) == 0; j++) {
			vals_add(e->v[j].side == SIDE_A ? &r->a : &r->b, &e->v[j].v);
			if (j > i)
				free(e->v[j].key);
		}
		row_judge(r, da, db);
		i = j;
	}
	*n = k;
	return rows;
}

static int row_cmp(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	if (a->impact != b->impact)
		return a->impact > b->impact ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* ---- the diff table ------------------------------------------------------ */

#define DIFF_CALLS_GROUP "Calls A / B"
#define DIFF_HEAD_COLUMNS                                                                  \
	{"Name", "name", TCOL_TEXT, NULL, 40, NULL},                                        \
	{"Status", "status", TCOL_TEXT, NULL, 8, NULL},                                     \
	{"Calls A", "calls_a", TCOL_COUNT, DIFF_CALLS_GROUP, 12, NULL},                     \
	{"Calls B", "calls_b", TCOL_COUNT, DIFF_CALLS_GROUP, 12, NULL}
#define DIFF_CPU_GROUP "CPU A / B / Delta / Delta(%)"
#define DIFF_CPU_COLUMNS                                                                   \
	{"CPU A", "cpu_a", TCOL_TIME, DIFF_CPU_GROUP, 30, NULL},                            \
	{"CPU B", "cpu_b", TCOL_TIME, DIFF_CPU_GROUP, 30, NULL},                            \
	{"CPU Delta", "cpu_delta", TCOL_TIME, DIFF_CPU_GROUP, 30, NULL},                    \
	{"CPU Delta(%)", "cpu_delta_pct", TCOL_PERCENT, DIFF_CPU_GROUP, 30, NULL}
#define DIFF_GPU_GROUP "GPU A / B / Delta / Delta(%)"
#define DIFF_GPU_COLUMNS                                                                   \
	{"GPU A", "gpu_a", TCOL_TIME, DIFF_GPU_GROUP, 30, NULL},                            \
	{"GPU B", "gpu_b", TCOL_TIME, DIFF_GPU_GROUP, 30, NULL},                            \
	{"GPU Delta", "gpu_delta", TCOL_TIME, DIFF_GPU_GROUP, 30, NULL},                    \
	{"GPU Delta(%)", "gpu_delta_pct", TCOL_PERCENT, DIFF_GPU_GROUP, 30, NULL}

enum { DC_NAME, DC_STATUS, DC_CALLS_A, DC_CALLS_B, DC_TIMES };

static const struct tcol cols_both[] = {DIFF_HEAD_COLUMNS, DIFF_CPU_COLUMNS, DIFF_GPU_COLUMNS};
static const struct tcol cols_cpu[] = {DIFF_HEAD_COLUMNS, DIFF_CPU_COLUMNS};
static const struct tcol cols_gpu[] = {DIFF_HEAD_COLUMNS, DIFF_GPU_COLUMNS};

/* "Parent > Child" from a key. */
static char *key_name(const char *key)
{
	size_t seps = 0;
	for (const char *s = key; *s; s++)
		seps += *s == KEY_SEP;
	char *name = xmalloc(strlen(key) + 2 * seps + 1), *at = name;
	for (const char *s = key; *s; s++) {
		if (*s == KEY_SEP) {
			memcpy(at, " > ", 3);
			at += 3;
		} else {
			*at++ = *s;
		}
	}
	*at = '\0';
	return name;
}

/* A, B, Delta and Delta(%) of one time from column col on. */
static void put_times(struct trow *t, unsigned col, const struct diff_row *r, int cpu, double da,
		      double db)
{
	int set_a = cpu ? r->a.cpu_set : r->a.gpu_set, set_b = cpu ? r->b.cpu_set : r->b.gpu_set;
	double a = (cpu ? r->a.cpu : r->a.gpu) / da, b = (cpu ? r->b.cpu : r->b.gpu) / db;
	if (set_a)
		trow_time(t, col, a);
	if (set_b)
		trow_time(t, col + 1, b);
	if (!set_a && !set_b)
		return; /* nothing to compare: "-", not 0 */
	trow_time(t, col + 2, b - a);
	if (r->a.present && a != 0)
		trow_percent(t, col + 3, 100.0 * (b - a) / a);
}

static void put_row(struct table *t, struct tpart *p, const struct diff_row *r, int has_cpu,
		    int has_gpu, double da, double db)
{
	struct trow *tr = tpart_add_row(t, p, 0);
	char *name = key_name(r->key);
	trow_text(tr, DC_NAME, name);
	free(name);
	trow_text(tr, DC_STATUS, status_words[r->status]);
	if (r->a.calls_set)
		trow_count(tr, DC_CALLS_A, r->a.calls);
	if (r->b.calls_set)
		trow_count(tr, DC_CALLS_B, r->b.calls);
	unsigned col = DC_TIMES;
	if (has_cpu) {
		put_times(tr, col, r, 1, da, db);
		col += 4;
	}
	if (has_gpu)
		put_times(tr, col, r, 0, da, db);
}

static void diff_notes(struct table *t, const struct diff_side *a, const struct diff_side *b,
		       int per_step, size_t left_out, size_t left_changed)
{
	if (per_step)
		table_note(t, "Times per training step: A ('%s') over its %.0f steps, B ('%s') over "
			      "its %.0f; Calls are each trace's counts.",
			   a->name, a->divisor, b->name, b->divisor);
	else
		table_note(t, "Times in total: A ('%s'), B ('%s').", a->name, b->name);
	if (!table_row_count(t))
		return;
	table_note(t, "Rows matched by name path (\"Parent > Child\"). Delta = B - A; Delta(%%) = "
		      "Delta / A, \"-\" where A has no time.");
	table_note(t, "Status: new (in B only), vanished (in A only), changed, or same (calls and "
		      "times%s equal).",
		   per_step ? " per step" : "");
	table_note(t, "Sorted by impact: the larger of |CPU Delta| and |GPU Delta|, largest first.");
	if (left_out)
		table_note(t, "%zu more row%s not shown, %zu of them new, vanished or changed; --top 0 "
			      "shows every row.",
			   left_out, left_out == 1 ? "" : "s", left_changed);
}

struct table *diff_tables(const char *id, const char *title, const struct diff_side *a,
			  const struct diff_side *b, unsigned top, int per_step)
{
	const struct table *ta = a->t, *tb = b->t;
	int has_cpu = (ta && find_col(ta, NULL, "cpu_total", TCOL_TIME) >= 0) ||
		      (tb && find_col(tb, NULL, "cpu_total", TCOL_TIME) >= 0);
	int has_gpu = (ta && find_col(ta, NULL, "gpu_total", TCOL_TIME) >= 0) ||
		      (tb && find_col(tb, NULL, "gpu_total", TCOL_TIME) >= 0);
	const struct tcol *cols = has_cpu && has_gpu ? cols_both : has_cpu ? cols_cpu : cols_gpu;
	unsigned ncols = has_cpu && has_gpu ? sizeof(cols_both) / sizeof(cols_both[0])
				       : sizeof(cols_cpu) / sizeof(cols_cpu[0]);
	struct table *t = table_new(id, title, cols, ncols);
	double da = a->divisor > 0 ? a->divisor : 1, db = b->divisor > 0 ? b->divisor : 1;

	/* the part is in the key when either side has several: a run with
	 * one thread still matches a run with two by the thread's label */
	int keyed_by_part = (ta && ta->nparts > 1) || (tb && tb->nparts > 1);
	struct diff_entries e = {0};
	add_table(&e, ta, SIDE_A, keyed_by_part);
	add_table(&e, tb, SIDE_B, keyed_by_part);
	size_t n;
	struct diff_row *rows = match(&e, &n, da, db);
	free(e.v);
	qsort(rows, n, sizeof(*rows), row_cmp);

	size_t shown = top && top < n ? top : n, changed = 0;
	for (size_t i = shown; i < n; i++)
		changed += rows[i].status != DS_SAME;
	if (n) {
		struct tpart *p = table_add_part(t, NULL, NULL, NULL);
		for (size_t i = 0; i < shown; i++)
			put_row(t, p, &rows[i], has_cpu, has_gpu, da, db);
	}
	for (size_t i = 0; i < n; i++)
		free(rows[i].key);
	free(rows);
	table_set_empty(t, "No rows in A or in B.");
	diff_notes(t, a, b, per_step, n - shown, changed);
	return t;
}

/* ---- building: both sides of every view, side by side ---------------------- */

struct diff_job {
	const struct analysis *an[2];
	const struct diff_opts *o;
	struct table **tables; /* view i of side k at 2 * i + k */
};

static void build_side(void *ctx, unsigned j)
{
	struct diff_job *job = ctx;
	const struct view *v = job->o->s.views[j / 2];
	job->tables[j] = v->build(v, job->an[j % 2], &job->o->s.view);
}

/* ---- the sides ------------------------------------------------------------- */

/* What one side is: its files, loaded as one program, and when both sides
 * are jobs, its ranks measured. */
struct diff_input {
	char **files;
	int nfiles;
	char *name;        /* the files, ", "-joined: how the output names the side */
	uint32_t nranks;   /* the ranks its files hold (0: none) */
	struct analysis an;
	struct jobperf jp; /* measured when both sides hold ranks */
	int measured;
};

static char *join_names(char **files, int n)
{
	size_t len = 1;
	for (int i = 0; i < n; i++)
		len += strlen(files[i]) + 2;
	char *name = xmalloc(len), *at = name;
	*at = '\0';
	for (int i = 0; i < n; i++)
		at += sprintf(at, "%s%s", i ? ", " : "", files[i]);
	return name;
}

/* Opens both sides as jobs, to learn whether they hold ranks; then loads
 * each whole (and, when both are jobs, measures each rank alone first:
 * one rank's store at a time). 0, or -1 after an error message. */
static int diff_load(struct diff_input *in, const struct diff_opts *o)
{
	struct job j[2];
	char err[1024];
	for (unsigned k = 0; k < 2; k++) {
		if (job_open_said(&j[k], in[k].nfiles, in[k].files, o->s.job_flags) != 0) {
			if (k)
				job_free(&j[0]);
			return -1;
		}
		in[k].nranks = j[k].nranks;
	}
	int jobs = in[0].nranks && in[1].nranks, rc = 0;
	for (unsigned k = 0; k < 2 && rc == 0; k++) {
		if (!jobs) {
			rc = job_load_files(&in[k].an, in[k].nfiles, in[k].files, "compared");
			continue;
		}
		/* the measure warns of damage, once for the side */
		if (jobperf_measure(&in[k].jp, &j[k], o->skip, "compared", err, sizeof(err)) != 0 ||
		    job_load_all(&j[k], &in[k].an, err, sizeof(err)) != 0) {
			progress_done();
			error("%s", err);
			rc = -1;
		}
		in[k].measured = rc == 0;
	}
	job_free(&j[0]);
	job_free(&j[1]);
	return rc;
}

/* ---- output ---------------------------------------------------------------- */

struct diff_out {
	const struct diff_opts *o;
	const struct diff_side *side[2];
	const struct diff_input *in[2];
	int per_step;
	struct summary_out s;
};

static void text_side(FILE *f, const char *which, const struct diff_side *s,
		      const struct diff_input *in)
{
	const struct analysis *a = &in->an;
	fprintf(f, "%s: '", which);
	text_fputs(s->name, f);
	fputs("' (", f);
	if (in->nranks)
		fprintf(f, "a job of %u rank%s, ", in->nranks, in->nranks == 1 ? "" : "s");
	if (a->steps)
		fprintf(f, "%llu step%s)", (unsigned long long)a->steps, a->steps == 1 ? "" : "s");
	else
		fputs("no steps)", f);
}

/* The CSV's first block: which trace is which, and what divides its times. */
static void csv_sides(struct diff_out *d)
{
	static const struct tcol cols[] = {
		{"Side", "side", TCOL_TEXT, NULL, 0, NULL},
		{"File", "file", TCOL_TEXT, NULL, 0, NULL},
		{"Steps", "steps", TCOL_COUNT, NULL, 0, NULL},
		{"Divisor", "divisor", TCOL_COUNT, NULL, 0, NULL},
		{"Times", "times", TCOL_TEXT, NULL, 0, NULL},
	};
	struct table *t = table_new("diff", "Traces Compared", cols, sizeof(cols) / sizeof(cols[0]));
	struct tpart *p = table_add_part(t, NULL, NULL, NULL);
	for (unsigned k = 0; k < 2; k++) {
		struct trow *r = tpart_add_row(t, p, 0);
		trow_text(r, 0, k ? "B" : "A");
		trow_text(r, 1, d->side[k]->name);
		trow_count(r, 2, d->in[k]->an.steps);
		trow_count(r, 3, (uint64_t)d->side[k]->divisor);
		trow_text(r, 4, d->per_step ? "per step" : "total");
	}
	summary_out_table(&d->s, NULL, t);
	table_free(t);
}

static void json_side(struct json_writer *w, const char *key, const struct diff_side *s,
		      const struct diff_input *in)
{
	json_key(w, key);
	json_begin_object(w);
	json_key(w, "file");
	json_string(w, s->name);
	json_key(w, "steps");
	json_uint(w, in->an.steps);
	json_key(w, "divisor");
	json_uint(w, (uint64_t)s->divisor);
	/* a side of several files, or of ranks, says so */
	if (in->nfiles > 1) {
		json_key(w, "files");
		json_begin_array(w);
		for (int i = 0; i < in->nfiles; i++)
			json_string(w, in->files[i]);
		json_end_array(w);
	}
	if (in->nranks) {
		json_key(w, "ranks");
		json_uint(w, in->nranks);
	}
	json_end_object(w);
}

/* What the document says before its tables: which trace is which. */
static void out_begin(struct diff_out *d, FILE *f)
{
	const struct diff_opts *o = d->o;
	summary_out_begin_opts(&d->s, &o->s, f); /* compact JSON for a report */
	if (o->s.format == SUMMARY_TEXT) { /* within the width, as summary's (diff has its own --top) */
		d->s.st.width = o->s.fit ? table_text_width(f) : 0;
		if (!o->s.fit)
			d->s.st.name_max = UINT_MAX;
	}
	if (o->s.format == SUMMARY_TEXT) {
		fputs("Comparing ", f);
		text_side(f, "A", d->side[0], d->in[0]);
		fputs(" with ", f);
		text_side(f, "B", d->side[1], d->in[1]);
		fprintf(f, "; times %s\n\n", d->per_step ? "per step" : "in total");
	} else if (o->s.format == SUMMARY_CSV) {
		csv_sides(d);
	} else {
		struct json_writer *w = &d->s.json;
		json_key(w, "schema");
		json_string(w, "gprof-dl-diff/1");
		json_side(w, "a", d->side[0], d->in[0]);
		json_side(w, "b", d->side[1], d->in[1]);
		json_key(w, "per_step");
		json_bool(w, d->per_step);
		json_key(w, "time_unit");
		json_string(w, time_unit_name(o->s.view.unit));
		json_key(w, "top");
		json_uint(w, o->top);
	}
	summary_out_tables(&d->s);
}

static int diff_write(const struct diff_opts *o, struct diff_input *in, FILE *f)
{
	unsigned n = o->s.nviews;
	struct table **tables = xcalloc(2 * n, sizeof(*tables));
	struct diff_job job = {{&in[0].an, &in[1].an}, o, tables};
	progress_phase("building %u tables", 2 * n);
	parallel_for(2 * n, build_side, &job);
	progress_done();

	/* per step only when both sides have steps: a step of one and the
	 * whole run of the other do not compare */
	int per_step = !o->totals && in[0].an.steps > 0 && in[1].an.steps > 0;
	struct diff_side side[2];
	for (unsigned k = 0; k < 2; k++) {
		side[k].t = NULL;
		side[k].divisor = per_step ? (double)in[k].an.steps : 1.0;
		side[k].name = in[k].name;
	}
	struct diff_out d = {o, {&side[0], &side[1]}, {&in[0], &in[1]}, per_step, {0}};
	out_begin(&d, f);
	if (in[0].measured && in[1].measured) {
		struct table *t = jobperf_diff_table(&in[0].jp, &in[1].jp, in[0].name, in[1].name);
		summary_out_table(&d.s, t->id, t);
		table_free(t);
	}
	for (unsigned i = 0; i < n; i++) {
		side[0].t = tables[2 * i];
		side[1].t = tables[2 * i + 1];
		struct table *t = diff_tables(o->s.views[i]->name, o->s.views[i]->title, &side[0],
					      &side[1], o->top, per_step);
		summary_out_table(&d.s, t->id, t);
		table_free(t);
		table_free(tables[2 * i]);
		table_free(tables[2 * i + 1]);
	}
	free(tables);
	return summary_out_end(&d.s);
}

int diff_files(const struct diff_opts *opts, FILE *f)
{
	struct diff_opts o = *opts;
	if (!o.s.nviews)
		for (unsigned i = 0; i < diff_default_view_count; i++)
			summary_add_view(&o.s, view_find(diff_default_views[i]));
	struct diff_input in[2];
	memset(in, 0, sizeof(in));
	for (unsigned k = 0; k < 2; k++) {
		in[k].files = o.files[k];
		in[k].nfiles = o.nfiles[k];
		in[k].name = join_names(o.files[k], o.nfiles[k]);
		analysis_init(&in[k].an);
	}
	int rc = 1;
	FILE *out = f ? f : stdout;
	if (diff_load(in, &o) != 0)
		goto done;
	rc = diff_write(&o, in, out) ? 1 : 0;
done:
	progress_done();
	for (unsigned k = 0; k < 2; k++) {
		analysis_free(&in[k].an);
		jobperf_free(&in[k].jp);
		free(in[k].name);
	}
	return rc;
}
