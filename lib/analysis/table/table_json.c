/*
 * table_json.c - tables as JSON, with the same content as the text:
 *
 *   {"title": "UserDefined Summary", "time_unit": "ms",
 *    "columns": [{"name": "CPU Total", "key": "cpu_total", "kind": "time"}, ...],
 *    "sections": [{"title": "Thread: All threads merged", "label": ...,
 *                  "thread": {"pid": 1, "tid": 2, "name": "main"},   (per-thread parts)
 *                  "facts": {"peak_in_use_bytes": 1024},            (parts with facts)
 *                  "rows": [{"name": "step", "calls": 8,
 *                            "cpu_total": 1.5, "cpu_total_ns": 1500000, ...,
 *                            "depth": 0, "children": [...]}]}],
 *    "notes": ["..."]}
 *
 * Numbers are numbers: times in the time unit plus the same value in integer
 * nanoseconds under the key with "_ns" appended; a value that does not apply
 * is null. Rows nest through "children" as they are indented in the text
 * (below JSON_NEST_MAX levels; deeper rows follow as siblings, their "depth"
 * says where they belong). An instant's row has "mark": true.
 */
#include "lib/analysis/table/table.h"

#include "formats/json/json_writer.h"

#include <math.h>
#include <stdio.h>

#define JSON_NEST_MAX 24

static const char *kind_name(enum tcol_kind k)
{
	switch (k) {
	case TCOL_TEXT:
		return "text";
	case TCOL_COUNT:
		return "count";
	case TCOL_TIME:
		return "time";
	case TCOL_PERCENT:
		return "percent";
	case TCOL_BYTES:
		return "bytes";
	case TCOL_REAL:
		return "number";
	}
	return "?";
}

static void json_cell(struct json_writer *w, const struct tcol *col, const struct tcell *c,
		      const struct table_style *st)
{
	json_key(w, col->key);
	if (!c->set) {
		json_null(w);
		if (col->kind == TCOL_TIME) {
			char key[128];
			snprintf(key, sizeof(key), "%s_ns", col->key);
			json_key(w, key);
			json_null(w);
		}
		return;
	}
	switch (col->kind) {
	case TCOL_TEXT:
		json_string(w, c->v.text);
		break;
	case TCOL_COUNT:
		json_uint(w, c->v.count);
		break;
	case TCOL_TIME: {
		json_double(w, c->v.ns / time_unit_ns(st->unit));
		char key[128];
		snprintf(key, sizeof(key), "%s_ns", col->key);
		json_key(w, key);
		if (c->v.ns < 0) /* a diff's delta, where B is faster than A */
			json_int(w, (int64_t)llround(c->v.ns));
		else
			json_uint(w, c->v.ns > 0 ? (uint64_t)llround(c->v.ns) : 0);
		break;
	}
	case TCOL_PERCENT:
		json_double(w, c->v.pct);
		break;
	case TCOL_BYTES:
		json_int(w, c->v.bytes);
		break;
	case TCOL_REAL:
		json_double(w, c->v.real);
		break;
	}
}

static size_t json_row(const struct table *t, const struct tpart *p, size_t i,
		       struct json_writer *w, const struct table_style *st)
{
	const struct trow *r = &p->rows[i];
	json_begin_object(w);
	for (unsigned c = 0; c < t->ncols; c++)
		json_cell(w, &p->cols[c], &r->cells[c], st);
	json_key(w, "depth");
	json_uint(w, r->depth);
	if (r->flags & TROW_MARK) {
		json_key(w, "mark");
		json_bool(w, 1);
	}
	size_t j = i + 1;
	if (r->depth < JSON_NEST_MAX && j < p->nrows && p->rows[j].depth > r->depth) {
		json_key(w, "children");
		json_begin_array(w);
		while (j < p->nrows && p->rows[j].depth > r->depth)
			j = json_row(t, p, j, w, st);
		json_end_array(w);
	}
	json_end_object(w);
	return j;
}

static void json_columns(const struct table *t, const struct tcol *cols, struct json_writer *w)
{
	json_key(w, "columns");
	json_begin_array(w);
	for (unsigned i = 0; i < t->ncols; i++) {
		json_begin_object(w);
		json_key(w, "name");
		json_string(w, cols[i].header);
		json_key(w, "key");
		json_string(w, cols[i].key);
		json_key(w, "kind");
		json_string(w, kind_name(cols[i].kind));
		json_end_object(w);
	}
	json_end_array(w);
}

static void json_part(const struct table *t, const struct tpart *p, struct json_writer *w,
		      const struct table_style *st)
{
	json_begin_object(w);
	json_key(w, "title");
	if (p->title)
		json_string(w, p->title);
	else
		json_null(w);
	json_key(w, "label");
	if (p->label || p->title)
		json_string(w, p->label ? p->label : p->title);
	else
		json_null(w);
	if (p->has_thread) {
		json_key(w, "thread");
		json_begin_object(w);
		json_key(w, "pid");
		json_uint(w, p->pid);
		json_key(w, "tid");
		json_uint(w, p->tid);
		json_key(w, "name");
		json_string(w, p->thread_name ? p->thread_name : "");
		json_end_object(w);
	}
	if (p->nfacts) {
		json_key(w, "facts");
		json_begin_object(w);
		for (size_t i = 0; i < p->nfacts; i++) {
			json_key(w, p->facts[i].key);
			if (p->facts[i].is_real)
				json_double(w, p->facts[i].real);
			else
				json_int(w, p->facts[i].value);
		}
		json_end_object(w);
	}
	if (p->cols != t->cols)
		json_columns(t, p->cols, w);
	json_key(w, "rows");
	json_begin_array(w);
	for (size_t i = 0; i < p->nrows;)
		i = json_row(t, p, i, w, st);
	json_end_array(w);
	json_end_object(w);
}

void table_render_json(const struct table *t, struct json_writer *w, const struct table_style *st)
{
	json_begin_object(w);
	json_key(w, "title");
	json_string(w, t->title);
	for (unsigned i = 0; i < t->ncols; i++) {
		if (t->cols[i].kind == TCOL_TIME) {
			json_key(w, "time_unit");
			json_string(w, time_unit_name(st->unit));
			break;
		}
	}
	json_columns(t, t->cols, w);
	json_key(w, "sections");
	json_begin_array(w);
	for (size_t p = 0; p < t->nparts; p++)
		json_part(t, &t->parts[p], w, st);
	json_end_array(w);
	if (t->empty && table_row_count(t) == 0) {
		json_key(w, "empty");
		json_string(w, t->empty);
	}
	json_key(w, "notes");
	json_begin_array(w);
	for (size_t i = 0; i < t->nnotes; i++)
		json_string(w, t->notes[i]);
	json_end_array(w);
	json_end_object(w);
}
