/*
 * table_csv.c - tables as typed CSV tables through libcsv's quoting
 * (formats/csv/csv_out.h), for pandas, DuckDB and spreadsheets: each CSV
 * table is one header row and one row per table row, so that a reader
 * infers a type per column (formats/CSV-SCHEMA.md, "The table CSVs").
 *
 *   row,section,name,calls,allocated_bytes,...,depth,parent,section_peak_in_use_bytes,...
 *   1,"GPU0","aten::mm",12,4194304,...,0,0,1048576,...
 *
 * What the text shows by layout is a column here:
 *   - the time unit is in the name of every time column (cpu_total_ms), and
 *     bytes (allocated_bytes), percentages (ratio_pct) and GB/s (algbw_gbps)
 *     likewise; numbers are never quoted, text always is (an empty quoted
 *     field is an empty text, an empty unquoted one a value that does not
 *     apply);
 *   - nesting: names are not indented; row numbers the rows from 1, depth is
 *     the level (0: top), parent the row of the one it nests under (0: none),
 *     and mark (when a row is an instant) says 1 for it;
 *   - parts: a part's label or title becomes the section column, a thread's
 *     part (--thread-sep) the pid, tid and thread columns, and the part's
 *     facts (a device's peak memory) one column each, the same on each of
 *     its rows. The "all threads merged" part says nothing the text does not.
 *   - parts with columns of their own (the Overview's device half, the Perf
 *     Summary's ips) are CSV tables of their own (table_csv.h).
 * A numeric column no row has a value in is left out, unless the table has
 * no rows at all (the header then says what a row would hold): a column
 * that is empty throughout reads as text in DuckDB. The notes and the
 * empty-table sentence are the text's and the JSON's only.
 */
#include "lib/analysis/table/table_csv.h"

#include "formats/csv/csv_out.h"
#include "common/error.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int time_decimals[] = {
	[TIME_UNIT_S] = 9,
	[TIME_UNIT_MS] = 6,
	[TIME_UNIT_US] = 3,
	[TIME_UNIT_NS] = 0,
};

#define CSV_NAME_MAX 160
#define FACT_DECIMALS 6

/* The column set of CSV table k of t: t's own for k 0, then each other set
 * the parts bring, in the order of their first part. NULL past the last. */
static const struct tcol *group_cols(const struct table *t, unsigned k)
{
	if (k == 0)
		return t->cols;
	unsigned seen = 0;
	for (size_t i = 0; i < t->nparts; i++) {
		const struct tcol *c = t->parts[i].cols;
		if (c == t->cols)
			continue;
		int first = 1;
		for (size_t j = 0; j < i && first; j++)
			if (t->parts[j].cols == c)
				first = 0;
		if (first && ++seen == k)
			return c;
	}
	return NULL;
}

unsigned table_csv_count(const struct table *t)
{
	unsigned n = 1;
	while (group_cols(t, n))
		n++;
	return n;
}

static const char *part_label(const struct tpart *p)
{
	return p->label ? p->label : p->title;
}

/* "device" of "device", "ips" of "IPS Unit: samples/s": the first word. */
static void slug(char *buf, size_t size, const char *label)
{
	size_t n = 0;
	while (label && *label && !isalnum((unsigned char)*label))
		label++;
	while (label && isalnum((unsigned char)*label) && n + 1 < size)
		buf[n++] = (char)tolower((unsigned char)*label++);
	buf[n] = '\0';
}

static void group_slug(const struct table *t, unsigned k, char *buf, size_t size)
{
	const struct tcol *cols = group_cols(t, k);
	buf[0] = '\0';
	for (size_t i = 0; i < t->nparts; i++)
		if (t->parts[i].cols == cols) {
			slug(buf, size, part_label(&t->parts[i]));
			break;
		}
	if (!buf[0])
		snprintf(buf, size, "part%u", k);
}

const char *table_csv_suffix(const struct table *t, unsigned k, char *buf, size_t size)
{
	char s[64], other[64];
	if (k == 0 || !group_cols(t, k)) {
		snprintf(buf, size, "%s", "");
		return buf;
	}
	group_slug(t, k, s, sizeof(s));
	int dup = 0;
	for (unsigned j = 1; j < k; j++) {
		group_slug(t, j, other, sizeof(other));
		dup |= strcmp(s, other) == 0;
	}
	if (dup)
		snprintf(buf, size, "-%s%u", s, k);
	else
		snprintf(buf, size, "-%s", s);
	return buf;
}

/* ---- the layout of one CSV table ---------------------------------------- */

struct fact_col {
	const char *key;
	int is_real;
};

struct csv_layout {
	const struct table *t;
	const struct tcol *cols;
	const struct tpart **parts; /* this CSV table's, in order */
	size_t nparts, nrows;
	unsigned maxdepth;
	int threads; /* pid, tid, thread */
	int section;
	int mark;
	unsigned char *keep; /* per column of cols */
	struct fact_col *facts;
	size_t nfacts;
	char **names; /* the header */
	size_t nnames;
};

/* The merged part of a per-thread view ("Thread: All threads merged") and
 * the parts of --thread-sep: said by the thread columns, not a section. */
static int thread_part(const struct tpart *p)
{
	return p->has_thread || (!p->label && p->title && strncmp(p->title, "Thread: ", 8) == 0);
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The column's name with its unit: cpu_total_ms, allocated_bytes, ratio_pct. */
static void col_name(char *buf, size_t size, const struct tcol *col, enum time_unit u)
{
	const char *k = col->key;
	switch (col->kind) {
	case TCOL_TIME:
		snprintf(buf, size, "%s_%s", k, time_unit_name(u));
		return;
	case TCOL_BYTES:
		snprintf(buf, size, strstr(k, "bytes") ? "%s" : "%s_bytes", k);
		return;
	case TCOL_PERCENT:
		snprintf(buf, size, has_suffix(k, "_pct") ? "%s" : "%s_pct", k);
		return;
	case TCOL_REAL:
		snprintf(buf, size, col->header && strstr(col->header, "(GB/s)") ? "%s_gbps" : "%s", k);
		return;
	case TCOL_TEXT:
	case TCOL_COUNT:
		break;
	}
	snprintf(buf, size, "%s", k);
}

/* Adds name to the header, with _2, _3, ... when a column has it already. */
static void add_name(struct csv_layout *l, const char *name)
{
	char buf[CSV_NAME_MAX + 16];
	snprintf(buf, sizeof(buf), "%s", name);
	for (unsigned n = 2;; n++) {
		int used = 0;
		for (size_t i = 0; i < l->nnames && !used; i++)
			used = strcmp(l->names[i], buf) == 0;
		if (!used)
			break;
		snprintf(buf, sizeof(buf), "%s_%u", name, n);
	}
	l->names[l->nnames++] = xstrdup(buf);
}

static void add_fact(struct csv_layout *l, const struct tfact *f, size_t cap)
{
	for (size_t i = 0; i < l->nfacts; i++) {
		if (strcmp(l->facts[i].key, f->key) == 0) {
			l->facts[i].is_real |= f->is_real;
			return;
		}
	}
	if (l->nfacts < cap)
		l->facts[l->nfacts++] = (struct fact_col){f->key, f->is_real};
}

static void layout_init(struct csv_layout *l, const struct table *t, unsigned k,
			const struct table_style *st)
{
	memset(l, 0, sizeof(*l));
	l->t = t;
	l->cols = group_cols(t, k);
	if (!l->cols)
		l->cols = t->cols;
	l->parts = xmalloc((t->nparts ? t->nparts : 1) * sizeof(*l->parts));
	size_t nfacts = 0;
	for (size_t i = 0; i < t->nparts; i++) {
		if (t->parts[i].cols != l->cols)
			continue;
		l->parts[l->nparts++] = &t->parts[i];
		nfacts += t->parts[i].nfacts;
	}
	l->keep = xmalloc(t->ncols ? t->ncols : 1);
	for (unsigned c = 0; c < t->ncols; c++)
		l->keep[c] = l->cols[c].kind == TCOL_TEXT;
	l->facts = xmalloc((nfacts ? nfacts : 1) * sizeof(*l->facts));
	for (size_t i = 0; i < l->nparts; i++) {
		const struct tpart *p = l->parts[i];
		if (p->has_thread)
			l->threads = 1;
		if (!thread_part(p) && part_label(p))
			l->section = 1;
		for (size_t f = 0; f < p->nfacts; f++)
			add_fact(l, &p->facts[f], nfacts);
		for (size_t r = 0; r < p->nrows; r++) {
			const struct trow *row = &p->rows[r];
			l->nrows++;
			if (row->depth > l->maxdepth)
				l->maxdepth = row->depth;
			if (row->flags & TROW_MARK)
				l->mark = 1;
			for (unsigned c = 0; c < t->ncols; c++)
				if (row->cells[c].set)
					l->keep[c] = 1;
		}
	}
	if (!l->nrows) /* no row: every column, so that the header says the schema */
		memset(l->keep, 1, t->ncols);

	char name[CSV_NAME_MAX];
	l->names = xmalloc((t->ncols + l->nfacts + 8) * sizeof(*l->names));
	add_name(l, "row");
	if (l->threads) {
		add_name(l, "pid");
		add_name(l, "tid");
		add_name(l, "thread");
	}
	if (l->section)
		add_name(l, "section");
	for (unsigned c = 0; c < t->ncols; c++) {
		if (!l->keep[c])
			continue;
		col_name(name, sizeof(name), &l->cols[c], st->unit);
		add_name(l, name);
	}
	add_name(l, "depth");
	add_name(l, "parent");
	if (l->mark)
		add_name(l, "mark");
	/* a fact named as a column (the Memory view's allocated_bytes, a
	 * device's total beside each row's) is the section's: all of them
	 * then say so, section_allocated_bytes */
	int clash = 0;
	for (size_t f = 0; f < l->nfacts; f++)
		for (size_t i = 0; i < l->nnames && !clash; i++)
			clash = strcmp(l->names[i], l->facts[f].key) == 0;
	for (size_t f = 0; f < l->nfacts; f++) {
		snprintf(name, sizeof(name), "%s%s", clash ? "section_" : "", l->facts[f].key);
		add_name(l, name);
	}
}

static void layout_free(struct csv_layout *l)
{
	for (size_t i = 0; i < l->nnames; i++)
		free(l->names[i]);
	free(l->names);
	free(l->facts);
	free(l->keep);
	free(l->parts);
}

/* ---- values ------------------------------------------------------------- */

/* v with decimals places, unquoted; empty when not finite. */
static void csv_number(struct csv_out *c, double v, int decimals)
{
	char buf[64];
	if (!isfinite(v)) {
		csv_out_empty(c);
		return;
	}
	int n = snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	if (n < 0 || (size_t)n >= sizeof(buf))
		csv_out_double(c, v); /* too large for fixed digits */
	else
		csv_out_raw(c, buf, (size_t)n);
}

/* A time in the unit with every digit down to the nanosecond: the
 * nanoseconds rounded as the JSON's "_ns" values are (llround), then the
 * point put in, so that both say the same number. */
static void csv_time(struct csv_out *c, double ns, enum time_unit u)
{
	if (!isfinite(ns) || fabs(ns) >= 9e18) {
		csv_number(c, ns / time_unit_ns(u), time_decimals[u]);
		return;
	}
	long long v = llround(ns);
	unsigned long long mag = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	unsigned long long one = (unsigned long long)time_unit_ns(u);
	char buf[48];
	int n;
	if (one == 1)
		n = snprintf(buf, sizeof(buf), "%s%llu", v < 0 ? "-" : "", mag);
	else
		n = snprintf(buf, sizeof(buf), "%s%llu.%0*llu", v < 0 ? "-" : "", mag / one,
			     time_decimals[u], mag % one);
	csv_out_raw(c, buf, (size_t)n);
}

static void csv_value(struct csv_out *c, const struct tcol *col, const struct tcell *cell,
		      const struct table_style *st)
{
	if (!cell->set) {
		csv_out_empty(c);
		return;
	}
	switch (col->kind) {
	case TCOL_TEXT:
		csv_out_text(c, cell->v.text);
		break;
	case TCOL_COUNT:
		csv_out_uint(c, cell->v.count);
		break;
	case TCOL_TIME:
		csv_time(c, cell->v.ns, st->unit);
		break;
	case TCOL_PERCENT:
		csv_number(c, cell->v.pct, col->decimals ? (int)col->decimals : 2);
		break;
	case TCOL_BYTES:
		csv_out_int(c, cell->v.bytes);
		break;
	case TCOL_REAL:
		csv_number(c, cell->v.real, col->decimals ? (int)col->decimals : 2);
		break;
	}
}

static void csv_fact(struct csv_out *c, const struct fact_col *fc, const struct tpart *p)
{
	for (size_t i = 0; i < p->nfacts; i++) {
		const struct tfact *f = &p->facts[i];
		if (strcmp(f->key, fc->key) != 0)
			continue;
		if (f->is_real)
			csv_number(c, f->real, FACT_DECIMALS);
		else if (fc->is_real)
			csv_number(c, (double)f->value, FACT_DECIMALS);
		else
			csv_out_int(c, f->value);
		return;
	}
	csv_out_empty(c);
}

void table_render_csv_one(const struct table *t, unsigned k, struct csv_out *c,
			  const struct table_style *st)
{
	struct csv_layout l;
	layout_init(&l, t, k, st);
	csv_out_header(c, (const char *const *)l.names, l.nnames);
	/* parent[d]: the row a row at depth d + 1 nests under */
	uint64_t *parent = xcalloc(l.maxdepth + 1, sizeof(*parent));
	uint64_t id = 0;
	for (size_t i = 0; i < l.nparts; i++) {
		const struct tpart *p = l.parts[i];
		memset(parent, 0, (l.maxdepth + 1) * sizeof(*parent));
		for (size_t r = 0; r < p->nrows; r++) {
			const struct trow *row = &p->rows[r];
			csv_out_uint(c, ++id);
			if (l.threads) {
				if (p->has_thread) {
					csv_out_uint(c, p->pid);
					csv_out_uint(c, p->tid);
					csv_out_text(c, p->thread_name ? p->thread_name : "");
				} else {
					csv_out_empty(c);
					csv_out_empty(c);
					csv_out_empty(c);
				}
			}
			if (l.section) {
				if (part_label(p))
					csv_out_text(c, part_label(p));
				else
					csv_out_empty(c);
			}
			for (unsigned col = 0; col < t->ncols; col++)
				if (l.keep[col])
					csv_value(c, &l.cols[col], &row->cells[col], st);
			csv_out_uint(c, row->depth);
			csv_out_uint(c, row->depth ? parent[row->depth - 1] : 0);
			parent[row->depth] = id;
			if (l.mark)
				csv_out_uint(c, (row->flags & TROW_MARK) ? 1 : 0);
			for (size_t f = 0; f < l.nfacts; f++)
				csv_fact(c, &l.facts[f], p);
			csv_out_end_row(c);
		}
	}
	free(parent);
	layout_free(&l);
}

void table_render_csv(const struct table *t, struct csv_out *c, const struct table_style *st)
{
	unsigned n = table_csv_count(t);
	for (unsigned k = 0; k < n; k++) {
		table_render_csv_one(t, k, c, st);
		csv_out_blank_line(c);
	}
}
