/*
 * bench_json.c - `gprof-dl bench`'s JSON object, written and read back as a
 * baseline, and the array for CI benchmark actions (bench_json.h).
 */
#include "lib/analysis/bench/bench_json.h"

#include "formats/json/json_writer.h"
#include "common/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

/* ---- sides --------------------------------------------------------------- */

void bench_side_free(struct bench_side *s)
{
	for (size_t i = 0; i < s->nruns; i++) {
		free((void *)s->runs[i].step);
		free(s->run_file[i]);
	}
	free(s->runs);
	free(s->run_file);
	free(s->run_ranks);
	for (size_t i = 0; i < s->ngiven; i++)
		free(s->given[i]);
	free(s->given);
	memset(s, 0, sizeof(*s));
}

void bench_side_given(struct bench_side *s, const char *name)
{
	s->given = xrealloc(s->given, (s->ngiven + 1) * sizeof(*s->given));
	s->given[s->ngiven++] = xstrdup(name);
}

static const char *unit_name(int by_samples)
{
	return by_samples ? "samples/s" : "steps/s";
}

/* Both sides of a comparison, and every run of one side, count ips alike. */
static int side_unit(struct bench_side *s, int by_samples, const char *what, char *err,
		     size_t errlen)
{
	if (s->unit_set && s->by_samples != by_samples) {
		snprintf(err, errlen, "'%s': ips in %s, where the other runs have it in %s", what,
			 unit_name(by_samples), unit_name(s->by_samples));
		return -1;
	}
	s->by_samples = by_samples;
	s->unit_set = 1;
	return 0;
}

static void side_add_run(struct bench_side *s, struct bs_step *steps, size_t n, const char *file,
			 uint32_t ranks)
{
	s->runs = xrealloc(s->runs, (s->nruns + 1) * sizeof(*s->runs));
	s->run_file = xrealloc(s->run_file, (s->nruns + 1) * sizeof(*s->run_file));
	s->run_ranks = xrealloc(s->run_ranks, (s->nruns + 1) * sizeof(*s->run_ranks));
	s->runs[s->nruns] = (struct bs_run){steps, n};
	s->run_file[s->nruns] = xstrdup(file);
	s->run_ranks[s->nruns] = ranks;
	s->nruns++;
}

int bench_side_add_perf(struct bench_side *s, const struct perf *p, const struct analysis *a,
			char *err, size_t errlen)
{
	if (!p->counted)
		return 0;
	if (side_unit(s, p->by_samples, a->store.files[p->step[0].file].path, err, errlen) != 0)
		return -1;
	/* perf keeps the counted steps file by file, each file's in start order. */
	for (size_t k = 0; k < p->counted;) {
		size_t first = k;
		uint32_t file = p->step[k].file;
		while (k < p->counted && p->step[k].file == file)
			k++;
		struct bs_step *v = xmalloc((k - first) * sizeof(*v));
		for (size_t j = first; j < k; j++)
			v[j - first] = (struct bs_step){p->step[j].batch_ns,
							p->by_samples ? p->step[j].samples : 1};
		side_add_run(s, v, k - first, a->store.files[file].path, 0);
	}
	return 0;
}

int bench_side_add_job(struct bench_side *s, const struct jobperf *jp, const char *file,
		       char *err, size_t errlen)
{
	const struct perf *p = &jp->perf;
	if (!p->counted)
		return 0;
	if (side_unit(s, p->by_samples, file, err, errlen) != 0)
		return -1;
	struct bs_step *v = xmalloc(p->counted * sizeof(*v));
	for (size_t k = 0; k < p->counted; k++)
		v[k] = (struct bs_step){p->step[k].batch_ns, p->by_samples ? p->step[k].samples : 1};
	side_add_run(s, v, p->counted, file, jp->nranks);
	return 0;
}

/* ---- reading ------------------------------------------------------------- */

int bench_json_sniff(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	char buf[256];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = buf;
	static const char *const want[] = {"{", "\"schema\"", ":", "\"gprof-dl-bench/"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		while (isspace((unsigned char)*p))
			p++;
		size_t len = strlen(want[i]);
		if (strncmp(p, want[i], len) != 0)
			return 0;
		p += len;
	}
	return 1;
}

static char *slurp(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "'%s': %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = xmalloc(cap);
	size_t got;
	while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap)
			buf = xrealloc(buf, cap *= 2);
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		snprintf(err, errlen, "'%s': read error", path);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

static yajl_val get(yajl_val obj, const char *key)
{
	const char *p[] = {key, NULL};
	return yajl_tree_get(obj, p, yajl_t_any);
}

/* The string value, or NULL. */
static const char *str(yajl_val v)
{
	return v && v->type == yajl_t_string ? v->u.string : NULL;
}

/* A count that fits: a JSON integer >= min. */
static int as_count(yajl_val v, uint64_t min, uint64_t *out)
{
	if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0 ||
	    (uint64_t)YAJL_GET_INTEGER(v) < min)
		return -1;
	*out = (uint64_t)YAJL_GET_INTEGER(v);
	return 0;
}

/* One element of "runs": {"file", "batch_ns": [...], "samples": [...]}, and
 * "ranks" when a job's. */
static int read_run(struct bench_side *s, yajl_val run, size_t idx, int by_samples,
		    const char *path, char *err, size_t errlen)
{
	yajl_val file = get(run, "file"), batch = get(run, "batch_ns"), samples = get(run, "samples");
	if (!YAJL_IS_OBJECT(run) || !YAJL_IS_ARRAY(batch)) {
		snprintf(err, errlen, "'%s': runs[%zu] has no \"batch_ns\" array", path, idx);
		return -1;
	}
	size_t n = YAJL_GET_ARRAY(batch)->len;
	if (by_samples && (!YAJL_IS_ARRAY(samples) || YAJL_GET_ARRAY(samples)->len != n)) {
		snprintf(err, errlen, "'%s': runs[%zu] needs a \"samples\" array as long as its \"batch_ns\"",
			 path, idx);
		return -1;
	}
	struct bs_step *v = xmalloc((n ? n : 1) * sizeof(*v));
	for (size_t k = 0; k < n; k++) {
		uint64_t ns, sm = 1;
		const char *bad = NULL;
		if (as_count(YAJL_GET_ARRAY(batch)->values[k], 1, &ns) != 0)
			bad = "batch_ns";
		else if (by_samples && as_count(YAJL_GET_ARRAY(samples)->values[k], 1, &sm) != 0)
			bad = "samples";
		if (bad) {
			snprintf(err, errlen, "'%s': runs[%zu], step %zu: %s is not a positive integer",
				 path, idx, k, bad);
			free(v);
			return -1;
		}
		v[k] = (struct bs_step){ns, sm};
	}
	if (!n) {
		free(v);
		return 0;
	}
	uint64_t ranks = 0;
	yajl_val rv = get(run, "ranks");
	if (rv && (as_count(rv, 1, &ranks) != 0 || ranks > UINT32_MAX)) {
		snprintf(err, errlen, "'%s': runs[%zu]: \"ranks\" is not a positive integer", path, idx);
		free(v);
		return -1;
	}
	/* the path and a run number: room for both whatever the path */
	size_t cap = strlen(path) + 32;
	char *name = xmalloc(cap);
	snprintf(name, cap, "%s run %zu", path, idx + 1);
	side_add_run(s, v, n, str(file) ? str(file) : name, (uint32_t)ranks);
	free(name);
	return 0;
}

int bench_json_read(struct bench_side *s, const char *path, char *err, size_t errlen)
{
	char *text = slurp(path, err, errlen);
	if (!text)
		return -1;
	char perr[256];
	yajl_val doc = yajl_tree_parse(text, perr, sizeof(perr));
	free(text);
	if (!doc) {
		/* yajl's message spans lines: its first says what. */
		perr[strcspn(perr, "\n")] = '\0';
		snprintf(err, errlen, "'%s': not valid JSON: %s", path, perr);
		return -1;
	}
	int rc = -1;
	const char *schema = str(get(doc, "schema")), *unit = str(get(doc, "ips_unit"));
	yajl_val runs = get(doc, "runs");
	if (!schema || strncmp(schema, "gprof-dl-bench/", 15) != 0) {
		snprintf(err, errlen, "'%s': not a gprof-dl bench object (no \"schema\": \"%s\")", path,
			 BENCH_SCHEMA);
		goto out;
	}
	if (strcmp(schema, BENCH_SCHEMA) != 0) {
		snprintf(err, errlen, "'%s': schema '%s', this gprof-dl reads '%s'", path, schema,
			 BENCH_SCHEMA);
		goto out;
	}
	if (!YAJL_IS_ARRAY(runs)) {
		snprintf(err, errlen, "'%s': no \"runs\" array (written by a gprof-dl older than 0.2?)",
			 path);
		goto out;
	}
	int by_samples;
	if (unit && strcmp(unit, "samples/s") == 0) {
		by_samples = 1;
	} else if (unit && strcmp(unit, "steps/s") == 0) {
		by_samples = 0;
	} else {
		snprintf(err, errlen, "'%s': \"ips_unit\" is neither \"samples/s\" nor \"steps/s\"", path);
		goto out;
	}
	if (side_unit(s, by_samples, path, err, errlen) != 0)
		goto out;
	for (size_t i = 0; i < YAJL_GET_ARRAY(runs)->len; i++)
		if (read_run(s, YAJL_GET_ARRAY(runs)->values[i], i, by_samples, path, err, errlen) != 0)
			goto out;
	rc = 0;
out:
	yajl_tree_free(doc);
	return rc;
}

/* ---- writing ------------------------------------------------------------- */

static void json_stat(struct json_writer *w, const char *key, const struct perf_stat *st,
		      double scale)
{
	json_key(w, key);
	json_begin_object(w);
	json_key(w, "avg");
	json_double(w, st->avg / scale);
	json_key(w, "max");
	json_double(w, st->max / scale);
	json_key(w, "min");
	json_double(w, st->min / scale);
	json_end_object(w);
}

/* The distribution of a pool's ips: null where it has none. */
static void json_pool_ips(struct json_writer *w, const struct bs_pool *p)
{
	json_key(w, "median");
	json_double(w, p->steps ? p->median : NAN);
	json_key(w, "p90");
	json_double(w, p->steps ? p->p90 : NAN);
	json_key(w, "ci_low");
	json_double(w, p->ci_low);
	json_key(w, "ci_high");
	json_double(w, p->ci_high);
	json_key(w, "level");
	json_double(w, p->level);
	json_key(w, "blocks");
	json_uint(w, p->blocks);
	json_key(w, "between_runs_sd");
	json_double(w, p->between_sd);
}

static void json_strings(struct json_writer *w, const char *key, char *const *v, size_t n)
{
	json_key(w, key);
	json_begin_array(w);
	for (size_t i = 0; i < n; i++)
		json_string(w, v[i]);
	json_end_array(w);
}

static void json_runs(struct json_writer *w, const struct bench_side *s)
{
	json_key(w, "runs");
	json_begin_array(w);
	for (size_t i = 0; i < s->nruns; i++) {
		const struct bs_run *r = &s->runs[i];
		json_begin_object(w);
		json_key(w, "file");
		json_string(w, s->run_file[i]);
		if (s->run_ranks[i]) {
			json_key(w, "ranks");
			json_uint(w, s->run_ranks[i]);
		}
		json_key(w, "batch_ns");
		json_begin_array(w);
		for (size_t k = 0; k < r->n; k++)
			json_uint(w, r->step[k].batch_ns);
		json_end_array(w);
		if (s->by_samples) {
			json_key(w, "samples");
			json_begin_array(w);
			for (size_t k = 0; k < r->n; k++)
				json_uint(w, r->step[k].samples);
			json_end_array(w);
		}
		json_end_object(w);
	}
	json_end_array(w);
}

/* A step series: batch_ns, and samples when ips is in samples/s. */
static void json_steps(struct json_writer *w, const struct perf *p)
{
	json_key(w, "batch_ns");
	json_begin_array(w);
	for (size_t k = 0; k < p->counted; k++)
		json_uint(w, p->step[k].batch_ns);
	json_end_array(w);
	if (!p->by_samples)
		return;
	json_key(w, "samples");
	json_begin_array(w);
	for (size_t k = 0; k < p->counted; k++)
		json_uint(w, p->step[k].samples);
	json_end_array(w);
}

/* A job's ranks: each one's figures over its own counted steps. */
static void json_ranks(struct json_writer *w, const struct jobperf *jp)
{
	json_key(w, "ranks");
	json_begin_array(w);
	for (uint32_t i = 0; i < jp->nranks; i++) {
		const struct jobperf_rank *r = &jp->ranks[i];
		const struct perf *p = &r->perf;
		json_begin_object(w);
		json_key(w, "rank");
		json_int(w, r->rank);
		json_key(w, "file");
		json_string(w, r->file);
		json_key(w, "pid");
		json_uint(w, r->pid);
		json_key(w, "steps");
		json_uint(w, p->steps);
		json_key(w, "skipped");
		json_uint(w, p->skipped);
		json_key(w, "counted");
		json_uint(w, p->counted);
		json_key(w, "reader_ratio");
		json_double(w, p->reader_ratio);
		json_stat(w, "reader_cost", &p->reader_ns, 1e9);
		json_stat(w, "batch_cost", &p->batch_ns, 1e9);
		json_stat(w, "ips", &p->ips, 1);
		json_key(w, "communication");
		json_double(w, (double)r->comm_ns / (double)p->counted / 1e9);
		json_steps(w, p);
		json_end_object(w);
	}
	json_end_array(w);
}

static void json_baseline(struct json_writer *w, const struct bench_report *r)
{
	const struct bs_pool *p = r->base_pool;
	json_key(w, "baseline");
	json_begin_object(w);
	json_strings(w, "files", r->base->given, r->base->ngiven);
	json_key(w, "runs");
	json_uint(w, p->runs);
	json_key(w, "counted");
	json_uint(w, p->steps);
	json_key(w, "ips");
	json_begin_object(w);
	json_key(w, "avg");
	json_double(w, p->ips);
	json_key(w, "max");
	json_double(w, p->steps ? p->max : NAN);
	json_key(w, "min");
	json_double(w, p->steps ? p->min : NAN);
	json_pool_ips(w, p);
	json_end_object(w);
	json_end_object(w);
	const struct bs_change *c = r->change;
	json_key(w, "comparison");
	json_begin_object(w);
	json_key(w, "change_pct");
	json_double(w, c->pct);
	json_key(w, "ci_low_pct");
	json_double(w, c->low_pct);
	json_key(w, "ci_high_pct");
	json_double(w, c->high_pct);
	json_key(w, "level");
	json_double(w, c->level);
	json_key(w, "max_regression_pct");
	json_double(w, c->max_regression_pct);
	json_key(w, "verdict");
	json_string(w, bs_verdict_name(c->verdict));
	json_end_object(w);
}

int bench_json_write(FILE *out, const struct bench_report *r)
{
	const struct perf *p = r->perf;
	const struct bs_pool *pool = r->pool;
	struct json_writer w;
	json_writer_init(&w, out, 1);
	json_begin_object(&w);
	json_key(&w, "schema");
	json_string(&w, BENCH_SCHEMA);
	json_strings(&w, "files", r->files, r->nfiles);
	json_key(&w, "steps");
	json_uint(&w, p->steps);
	json_key(&w, "skipped");
	json_uint(&w, p->skipped);
	json_key(&w, "counted");
	json_uint(&w, p->counted);
	json_key(&w, "ips_unit");
	json_string(&w, perf_ips_unit(p));
	json_key(&w, "time_unit");
	json_string(&w, "s");
	json_key(&w, "reader_ratio");
	json_double(&w, p->reader_ratio);
	json_stat(&w, "reader_cost", &p->reader_ns, 1e9);
	json_stat(&w, "batch_cost", &p->batch_ns, 1e9);
	json_key(&w, "ips");
	json_begin_object(&w);
	json_key(&w, "avg");
	json_double(&w, p->ips.avg);
	json_key(&w, "max");
	json_double(&w, p->ips.max);
	json_key(&w, "min");
	json_double(&w, p->ips.min);
	json_pool_ips(&w, pool);
	json_end_object(&w);
	json_runs(&w, r->cur);
	if (r->job)
		json_ranks(&w, r->job);
	if (r->change)
		json_baseline(&w, r);
	json_key(&w, "min_ips");
	if (r->has_min_ips)
		json_double(&w, r->min_ips);
	else
		json_null(&w);
	json_key(&w, "gate");
	json_begin_object(&w);
	json_key(&w, "pass");
	json_bool(&w, !r->fails_regression && !r->fails_min_ips);
	json_key(&w, "failed");
	json_begin_array(&w);
	if (r->fails_regression)
		json_string(&w, "max_regression");
	if (r->fails_min_ips)
		json_string(&w, "min_ips");
	json_end_array(&w);
	json_end_object(&w);
	json_end_object(&w);
	fputc('\n', out);
	return json_writer_error(&w) ? -1 : 0;
}

static void github_entry(struct json_writer *w, const char *name, const char *unit, double value,
			 const char *range, const char *extra)
{
	json_begin_object(w);
	json_key(w, "name");
	json_string(w, name);
	json_key(w, "unit");
	json_string(w, unit);
	json_key(w, "value");
	json_double(w, value);
	if (range) {
		json_key(w, "range");
		json_string(w, range);
	}
	if (extra) {
		json_key(w, "extra");
		json_string(w, extra);
	}
	json_end_object(w);
}

/* github-action-benchmark's "customBiggerIsBetter" input, and the like:
 * every entry is an ips, so that bigger is better for all of them. */
int bench_github_write(FILE *out, const struct bench_report *r)
{
	const struct bs_pool *p = r->pool;
	const char *unit = perf_ips_unit(r->perf);
	char range[64] = "", extra[256];
	int ci = bs_pool_has_ci(p);
	if (ci)
		snprintf(range, sizeof(range), "\u00b1 %.2f", (p->ci_high - p->ci_low) / 2);
	if (r->job)
		snprintf(extra, sizeof(extra), "%zu steps of a job of %u rank%s", p->steps,
			 r->job->nranks, r->job->nranks == 1 ? "" : "s");
	else
		snprintf(extra, sizeof(extra), "%zu steps of %zu run%s", p->steps, p->runs,
			 p->runs == 1 ? "" : "s");
	if (ci) {
		size_t len = strlen(extra);
		snprintf(extra + len, sizeof(extra) - len, "; %.0f%% CI %.2f .. %.2f",
			 p->level * 100, p->ci_low, p->ci_high);
	}
	struct json_writer w;
	json_writer_init(&w, out, 1);
	json_begin_array(&w);
	github_entry(&w, "ips", unit, p->ips, ci ? range : NULL, extra);
	github_entry(&w, "ips median", unit, p->median, NULL, "median of the steps' ips");
	github_entry(&w, "ips p90", unit, p->p90, NULL, "90th percentile of the steps' ips");
	json_end_array(&w);
	fputc('\n', out);
	return json_writer_error(&w) ? -1 : 0;
}
