/*
 * advise.c - the rules' registry, findings, their ranking (advise.h).
 */
#include "lib/analysis/advise/advise.h"
#include "lib/analysis/advise/rules.h"

#include "lib/analysis/views/perf.h"

#include "common/error.h"
#include "common/textsafe.h"
#include "formats/json/json_writer.h"

#include <stdio.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const struct adv_rule *const adv_rules[] = {
	&adv_rule_input_bound,
	&adv_rule_jitter,
	&adv_rule_straggler,
	&adv_rule_exposed_comm,
	&adv_rule_gpu_starved,
	&adv_rule_launch_bound,
	&adv_rule_sync_calls,
	&adv_rule_pageable_copies,
	&adv_rule_cpu_contention,
	&adv_rule_oversubscription,
	&adv_rule_gc_pauses,
	&adv_rule_fp32_matmul,
	&adv_rule_data_parallel,
	&adv_rule_memory_peak,
	&adv_rule_memory_growth,
	NULL,
};

void adv_step_label(char *buf, size_t size, const struct store *s, uint32_t file, size_t number,
		    int several)
{
	if (!several)
		snprintf(buf, size, "%zu", number);
	else if (s->files[file].rank >= 0)
		snprintf(buf, size, "rank %d step %zu", s->files[file].rank, number);
	else
		snprintf(buf, size, "trace %u step %zu", file, number);
}

const struct adv_rule *adv_rule_find(const char *id)
{
	for (size_t i = 0; adv_rules[i]; i++)
		if (strcmp(adv_rules[i]->id, id) == 0)
			return adv_rules[i];
	return NULL;
}

static const char *const severity_names[] = {"low", "medium", "high"};

const char *adv_severity_name(enum adv_severity s)
{
	return s <= ADV_HIGH ? severity_names[s] : "?";
}

int adv_severity_parse(const char *name, enum adv_severity *s)
{
	for (unsigned k = 0; k <= ADV_HIGH; k++)
		if (strcmp(name, severity_names[k]) == 0) {
			*s = (enum adv_severity)k;
			return 0;
		}
	return -1;
}

struct adv_finding *adv_add(struct adv_list *out, const struct adv_rule *r,
			    const struct adv_input *in, double saving_ns, const char *fmt, ...)
{
	if (out->n == out->cap) {
		out->cap = out->cap ? 2 * out->cap : 8;
		out->v = xrealloc(out->v, out->cap * sizeof(*out->v));
	}
	struct adv_finding *f = &out->v[out->n++];
	memset(f, 0, sizeof(*f));
	f->rule = r;
	f->saving_ns = saving_ns > 0 ? saving_ns : 0;
	f->share = in->step_ns ? 100.0 * f->saving_ns / (double)in->step_ns : 0;
	f->severity = f->share >= 10.0 ? ADV_HIGH : f->share >= 3.0 ? ADV_MEDIUM : ADV_LOW;
	va_list ap;
	va_start(ap, fmt);
	f->what = xvasprintf(fmt, ap);
	va_end(ap);
	return f;
}

void adv_evidence(struct adv_finding *f, const char *fmt, ...)
{
	if (f->nevidence == ADV_MAX_EVIDENCE)
		return;
	va_list ap;
	va_start(ap, fmt);
	f->evidence[f->nevidence++] = xvasprintf(fmt, ap);
	va_end(ap);
}

void adv_try(struct adv_finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(f->try_this);
	f->try_this = xvasprintf(fmt, ap);
	va_end(ap);
}

void adv_command(struct adv_finding *f, const struct adv_input *in, const char *opts)
{
	size_t len = strlen("gprof-dl summary") + strlen(opts) + 2;
	for (int i = 0; i < in->npaths; i++)
		len += strlen(in->paths[i]) + 1;
	char *s = xmalloc(len + 1);
	strcpy(s, "gprof-dl summary");
	for (int i = 0; i < in->npaths; i++) {
		strcat(s, " ");
		strcat(s, in->paths[i]);
	}
	if (*opts) {
		strcat(s, " ");
		strcat(s, opts);
	}
	free(f->command);
	f->command = s;
}

/* The largest saving first; then the higher severity; then the rule's place. */
static int finding_cmp(const void *x, const void *y)
{
	const struct adv_finding *a = x, *b = y;
	if (a->saving_ns != b->saving_ns)
		return a->saving_ns > b->saving_ns ? -1 : 1;
	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	return strcmp(a->rule->id, b->rule->id);
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

void adv_input_init(struct adv_input *in, const struct analysis *a, const struct job_dist *d,
		    const char *const *paths, int npaths, unsigned skip)
{
	memset(in, 0, sizeof(*in));
	in->a = a;
	in->d = d;
	in->paths = paths;
	in->npaths = npaths;
	in->skip = skip;
	in->window_steps = a->from_steps ? a->steps : 0;
	struct perf p;
	perf_compute(&p, a, skip);
	if (p.counted) {
		uint64_t *v = xmalloc(p.counted * sizeof(*v));
		for (size_t i = 0; i < p.counted; i++)
			v[i] = p.step[i].batch_ns;
		qsort(v, p.counted, sizeof(*v), u64_cmp);
		in->step_ns = p.counted % 2 ? v[p.counted / 2]
					    : (v[p.counted / 2 - 1] + v[p.counted / 2]) / 2;
		in->steps = p.counted;
		free(v);
	}
	perf_free(&p);
}

void adv_run(const struct adv_input *in, struct adv_list *out)
{
	for (size_t i = 0; adv_rules[i]; i++)
		if (adv_rules[i]->run)
			adv_rules[i]->run(in, out);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), finding_cmp);
}

void adv_list_free(struct adv_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		struct adv_finding *f = &l->v[i];
		free(f->what);
		for (unsigned k = 0; k < f->nevidence; k++)
			free(f->evidence[k]);
		free(f->try_this);
		free(f->command);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- output ----------------------------------------------------------------------- */

/* Writes s (its terminal form: names from the program are data) wrapped to
 * width columns, the first line after lead, the others after indent. */
static void wrap(FILE *out, const char *lead, const char *indent, const char *s, unsigned width)
{
	char *safe = text_escape_dup(s);
	size_t col = strlen(lead), ind = strlen(indent);
	fputs(lead, out);
	const char *p = safe;
	int first = 1;
	while (*p) {
		while (*p == ' ')
			p++;
		size_t w = strcspn(p, " ");
		if (!first && col + 1 + w > width) {
			fputc('\n', out);
			fputs(indent, out);
			col = ind;
			first = 1;
		}
		if (!first) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, w, out);
		col += w;
		p += w;
		first = 0;
	}
	fputc('\n', out);
	free(safe);
}

const char *adv_time(char *buf, size_t size, double ns)
{
	if (ns >= 1e9)
		snprintf(buf, size, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, size, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.1f us", ns / 1e3);
	return buf;
}

int adv_write_text(FILE *out, const struct adv_input *in, const struct adv_list *l, size_t top,
		   unsigned width)
{
	char step[32], saving[32], head[256];
	if (width < 40)
		width = 40;
	if (in->step_ns) {
		adv_time(step, sizeof(step), (double)in->step_ns);
		snprintf(head, sizeof(head), "%zu finding%s, ranked by the time each costs per step "
					     "(median step %s over %zu counted steps).",
			 l->n, l->n == 1 ? "" : "s", step, in->steps);
	} else {
		snprintf(head, sizeof(head), "%zu finding%s (no training steps: the rules per step "
					     "say nothing).",
			 l->n, l->n == 1 ? "" : "s");
	}
	wrap(out, "Advice: ", "  ", head, width);
	if (!l->n) {
		wrap(out, "", "", "No finding: no rule's threshold was crossed (gprof-dl advise --rules "
				  "lists them).", width);
		return ferror(out) ? -1 : 0;
	}
	size_t n = top && top < l->n ? top : l->n;
	for (size_t i = 0; i < n; i++) {
		const struct adv_finding *f = &l->v[i];
		char lead[128];
		adv_time(saving, sizeof(saving), f->saving_ns);
		fputc('\n', out);
		snprintf(lead, sizeof(lead), "%zu. [%s] %s: ", i + 1, adv_severity_name(f->severity),
			 f->rule->id);
		wrap(out, lead, "   ", f->what, width);
		if (in->step_ns && f->saving_ns > 0)
			fprintf(out, "   Saving (an estimate): %s per step, %.1f %% of the step.\n",
				saving, f->share);
		else if (f->saving_ns <= 0)
			fputs("   Saving: no time per step (a memory finding: what it risks is said "
			      "below).\n", out);
		for (unsigned k = 0; k < f->nevidence; k++)
			wrap(out, "   - ", "     ", f->evidence[k], width);
		if (f->try_this)
			wrap(out, "   Try: ", "     ", f->try_this, width);
		wrap(out, "   Threshold: ", "     ", f->rule->threshold, width);
		if (f->command)
			wrap(out, "   See: ", "     ", f->command, width);
	}
	if (n < l->n)
		fprintf(out, "\n... %zu more finding%s, --top 0 for all\n", l->n - n,
			l->n - n == 1 ? "" : "s");
	return ferror(out) ? -1 : 0;
}

int adv_write_json(FILE *out, const struct adv_input *in, const struct adv_list *l)
{
	struct json_writer w;
	json_writer_init(&w, out, 1);
	json_begin_object(&w);
	json_key(&w, "schema");
	json_string(&w, "gprof-dl-advise/1");
	json_key(&w, "step_ns");
	json_uint(&w, in->step_ns);
	json_key(&w, "steps");
	json_uint(&w, in->steps);
	json_key(&w, "findings");
	json_begin_array(&w);
	for (size_t i = 0; i < l->n; i++) {
		const struct adv_finding *f = &l->v[i];
		json_begin_object(&w);
		json_key(&w, "rule");
		json_string(&w, f->rule->id);
		json_key(&w, "severity");
		json_string(&w, adv_severity_name(f->severity));
		json_key(&w, "saving_ns");
		json_uint(&w, (uint64_t)(f->saving_ns + 0.5));
		json_key(&w, "share_pct");
		json_fixed(&w, f->share, 2);
		json_key(&w, "what");
		json_string(&w, f->what);
		json_key(&w, "evidence");
		json_begin_array(&w);
		for (unsigned k = 0; k < f->nevidence; k++)
			json_string(&w, f->evidence[k]);
		json_end_array(&w);
		json_key(&w, "try");
		json_string(&w, f->try_this ? f->try_this : "");
		json_key(&w, "threshold");
		json_string(&w, f->rule->threshold);
		json_key(&w, "command");
		json_string(&w, f->command ? f->command : "");
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	fputc('\n', out);
	return w.error || ferror(out) ? -1 : 0;
}

int adv_write_rules(FILE *out, unsigned width)
{
	if (width < 40)
		width = 40;
	for (size_t i = 0; adv_rules[i]; i++) {
		const struct adv_rule *r = adv_rules[i];
		char lead[128];
		snprintf(lead, sizeof(lead), "%s: ", r->id);
		if (i)
			fputc('\n', out);
		wrap(out, lead, "  ", r->title, width);
		wrap(out, "  Definition: ", "    ", r->definition, width);
		wrap(out, "  Threshold: ", "    ", r->threshold, width);
		wrap(out, "  Why: ", "    ", r->why, width);
		if (!r->run)
			fputs("  (not written yet: it never fires)\n", out);
	}
	return ferror(out) ? -1 : 0;
}
