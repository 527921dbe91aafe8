/* table.c - building the table model: columns, parts, rows and notes (table.h). */
#include "lib/analysis/table/table.h"

#include "common/error.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	double ns;
} time_units[] = {
	[TIME_UNIT_S] = {"s", 1e9},
	[TIME_UNIT_MS] = {"ms", 1e6},
	[TIME_UNIT_US] = {"us", 1e3},
	[TIME_UNIT_NS] = {"ns", 1.0},
};

int time_unit_parse(const char *s, enum time_unit *u)
{
	for (unsigned i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++) {
		if (strcmp(s, time_units[i].name) == 0) {
			*u = (enum time_unit)i;
			return 0;
		}
	}
	return -1;
}

const char *time_unit_name(enum time_unit u)
{
	return time_units[u].name;
}

double time_unit_ns(enum time_unit u)
{
	return time_units[u].ns;
}

struct table *table_new(const char *id, const char *title, const struct tcol *cols,
			unsigned ncols)
{
	struct table *t = xcalloc(1, sizeof(*t));
	t->id = id;
	t->title = title;
	t->cols = cols;
	t->ncols = ncols;
	return t;
}

static void tpart_free(const struct table *t, struct tpart *p)
{
	for (size_t i = 0; i < p->nrows; i++) {
		for (unsigned c = 0; c < t->ncols; c++)
			if (p->cols[c].kind == TCOL_TEXT && p->rows[i].cells[c].set)
				free(p->rows[i].cells[c].v.text);
		free(p->rows[i].cells);
	}
	free(p->rows);
	for (size_t i = 0; i < p->nfacts; i++)
		free(p->facts[i].key);
	free(p->facts);
	free(p->title);
	free(p->label);
	free(p->thread_name);
}

void table_free(struct table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nparts; i++)
		tpart_free(t, &t->parts[i]);
	free(t->parts);
	for (size_t i = 0; i < t->nnotes; i++)
		free(t->notes[i]);
	free(t->notes);
	free(t->empty);
	free(t);
}

struct tpart *table_add_part(struct table *t, const char *title, const char *label,
			     const struct tcol *cols)
{
	t->parts = xrealloc(t->parts, (t->nparts + 1) * sizeof(*t->parts));
	struct tpart *p = &t->parts[t->nparts++];
	memset(p, 0, sizeof(*p));
	p->title = title ? xstrdup(title) : NULL;
	p->label = label ? xstrdup(label) : NULL;
	p->cols = cols ? cols : t->cols;
	return p;
}

struct trow *tpart_add_row(struct table *t, struct tpart *p, unsigned depth)
{
	if (p->nrows == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->rows = xrealloc(p->rows, p->cap * sizeof(*p->rows));
	}
	struct trow *r = &p->rows[p->nrows++];
	r->depth = depth;
	r->flags = 0;
	r->cells = xcalloc(t->ncols ? t->ncols : 1, sizeof(*r->cells));
	return r;
}

void table_note(struct table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	t->notes = xrealloc(t->notes, (t->nnotes + 1) * sizeof(*t->notes));
	t->notes[t->nnotes++] = xvasprintf(fmt, ap);
	va_end(ap);
}

void table_set_empty(struct table *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(t->empty);
	t->empty = xvasprintf(fmt, ap);
	va_end(ap);
}

size_t table_row_count(const struct table *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nparts; i++)
		n += t->parts[i].nrows;
	return n;
}

static void trow_free(const struct tpart *p, unsigned ncols, struct trow *r)
{
	for (unsigned c = 0; c < ncols; c++)
		if (p->cols[c].kind == TCOL_TEXT && r->cells[c].set)
			free(r->cells[c].v.text);
	free(r->cells);
}

size_t table_keep_top(struct table *t, size_t n)
{
	size_t left = 0;
	if (!n || t->keep_all == TABLE_KEEP_ALL)
		return 0;
	for (size_t i = 0; i < t->nparts; i++) {
		struct tpart *p = &t->parts[i];
		size_t top = 0, keep = p->nrows;
		for (size_t r = 0; r < p->nrows; r++) {
			if (p->rows[r].depth != 0)
				continue; /* a child follows its parent */
			if (top++ == n) {
				keep = r;
				break;
			}
		}
		if (keep == p->nrows)
			continue;
		for (size_t r = keep; r < p->nrows; r++) {
			p->omitted += p->rows[r].depth == 0;
			trow_free(p, t->ncols, &p->rows[r]);
		}
		p->nrows = keep;
		left += p->omitted;
	}
	return left;
}

void trow_text(struct trow *r, unsigned col, const char *s)
{
	if (r->cells[col].set)
		free(r->cells[col].v.text);
	r->cells[col].set = 1;
	r->cells[col].v.text = xstrdup(s);
}

void trow_count(struct trow *r, unsigned col, uint64_t v)
{
	r->cells[col].set = 1;
	r->cells[col].v.count = v;
}

void trow_time(struct trow *r, unsigned col, double ns)
{
	r->cells[col].set = 1;
	r->cells[col].v.ns = ns;
}

void trow_percent(struct trow *r, unsigned col, double pct)
{
	r->cells[col].set = 1;
	r->cells[col].v.pct = pct;
}

void trow_bytes(struct trow *r, unsigned col, int64_t bytes)
{
	r->cells[col].set = 1;
	r->cells[col].v.bytes = bytes;
}

void trow_real(struct trow *r, unsigned col, double v)
{
	r->cells[col].set = 1;
	r->cells[col].v.real = v;
}

void tpart_fact(struct tpart *p, const char *key, int64_t value)
{
	p->facts = xrealloc(p->facts, (p->nfacts + 1) * sizeof(*p->facts));
	p->facts[p->nfacts].key = xstrdup(key);
	p->facts[p->nfacts].value = value;
	p->facts[p->nfacts].is_real = 0;
	p->facts[p->nfacts].real = 0.0;
	p->nfacts++;
}

void tpart_fact_real(struct tpart *p, const char *key, double value)
{
	tpart_fact(p, key, 0);
	p->facts[p->nfacts - 1].is_real = 1;
	p->facts[p->nfacts - 1].real = value;
}

int table_time_decimals(double v, int decimals)
{
	double mag = fabs(v);
	if (mag == 0.0 || !isfinite(mag) || mag >= pow(10.0, -decimals))
		return decimals;
	int d = 1 - (int)floor(log10(mag));
	return d > 9 ? 9 : d < decimals ? decimals : d;
}

const char *table_bytes_text(char *buf, size_t size, int64_t bytes)
{
	/* SI, as every size gprof-dl prints (GB/s too): 10^3, 10^6, ... bytes */
	static const char *const units[] = {"kB", "MB", "GB", "TB"};
	uint64_t mag = bytes < 0 ? (uint64_t)0 - (uint64_t)bytes : (uint64_t)bytes;
	if (mag < 1000) {
		snprintf(buf, size, "%lld B", (long long)bytes);
		return buf;
	}
	double v = (double)mag / 1000.0;
	unsigned u = 0;
	while (v >= 1000.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1000.0;
		u++;
	}
	snprintf(buf, size, "%s%.2f %s", bytes < 0 ? "-" : "", v, units[u]);
	return buf;
}
