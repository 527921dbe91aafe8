/*
 * table_csv.c - tables as CSV through libcsv: one block per part, blocks
 * separated by a blank line. A block is
 *
 *   a title row:  the table's title, then the part's label if it has one,
 *                 then "time unit: ms" if the table has times, then the
 *                 part's facts as "key: value"
 *   a header row: one header per column ("Name,Calls,CPU Total,CPU Avg,...")
 *   data rows:    one value per column
 *
 * Values: counts and bytes as integers; times in the time unit with every
 * digit down to the nanosecond; percentages and other numbers with two
 * decimals (or their column's); a value that does not apply
 * as an empty field. A child row's name is indented by two spaces per level,
 * as in the text table, and an instant's name ends in " (mark)".
 */
#include "lib/analysis/table/table.h"

#include "formats/csv/csv_out.h"
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int time_decimals[] = {
	[TIME_UNIT_S] = 9,
	[TIME_UNIT_MS] = 6,
	[TIME_UNIT_US] = 3,
	[TIME_UNIT_NS] = 0,
};

static int has_time(const struct table *t)
{
	for (unsigned i = 0; i < t->ncols; i++)
		if (t->cols[i].kind == TCOL_TIME)
			return 1;
	return 0;
}

static void csv_cell(struct csv_out *c, const struct tcol *col, const struct trow *r, unsigned i,
		     const struct table_style *st)
{
	const struct tcell *cell = &r->cells[i];
	if (!cell->set) {
		csv_out_field(c, "");
		return;
	}
	switch (col->kind) {
	case TCOL_TEXT:
		if (i == 0 && (r->depth || (r->flags & TROW_MARK))) {
			size_t n = r->depth * 2 + strlen(cell->v.text) + 8;
			char *s = xmalloc(n);
			snprintf(s, n, "%*s%s%s", (int)(r->depth * 2), "", cell->v.text,
				 (r->flags & TROW_MARK) ? " (mark)" : "");
			csv_out_field(c, s);
			free(s);
		} else {
			csv_out_field(c, cell->v.text);
		}
		break;
	case TCOL_COUNT:
		csv_out_fieldf(c, "%llu", (unsigned long long)cell->v.count);
		break;
	case TCOL_TIME:
		csv_out_fieldf(c, "%.*f", time_decimals[st->unit], cell->v.ns / time_unit_ns(st->unit));
		break;
	case TCOL_PERCENT:
		csv_out_fieldf(c, "%.*f", col->decimals ? (int)col->decimals : 2, cell->v.pct);
		break;
	case TCOL_BYTES:
		csv_out_fieldf(c, "%lld", (long long)cell->v.bytes);
		break;
	case TCOL_REAL:
		csv_out_fieldf(c, "%.*f", col->decimals ? (int)col->decimals : 2, cell->v.real);
		break;
	}
}

static void csv_block(const struct table *t, const struct tpart *p, struct csv_out *c,
		      const struct table_style *st)
{
	const struct tcol *cols = p ? p->cols : t->cols;
	const char *label = p ? (p->label ? p->label : p->title) : NULL;
	csv_out_field(c, t->title);
	if (label)
		csv_out_field(c, label);
	if (has_time(t))
		csv_out_fieldf(c, "time unit: %s", time_unit_name(st->unit));
	for (size_t i = 0; p && i < p->nfacts; i++) {
		if (p->facts[i].is_real)
			csv_out_fieldf(c, "%s: %.3f", p->facts[i].key, p->facts[i].real);
		else
			csv_out_fieldf(c, "%s: %lld", p->facts[i].key, (long long)p->facts[i].value);
	}
	csv_out_end_row(c);
	for (unsigned i = 0; i < t->ncols; i++)
		csv_out_field(c, cols[i].header);
	if (t->ncols)
		csv_out_end_row(c);
	for (size_t r = 0; p && r < p->nrows; r++) {
		for (unsigned i = 0; i < t->ncols; i++)
			csv_cell(c, &cols[i], &p->rows[r], i, st);
		csv_out_end_row(c);
	}
}

void table_render_csv(const struct table *t, struct csv_out *c, const struct table_style *st)
{
	if (t->nparts == 0) {
		csv_block(t, NULL, c, st);
		csv_out_blank_line(c);
		return;
	}
	for (size_t p = 0; p < t->nparts; p++) {
		csv_block(t, &t->parts[p], c, st);
		csv_out_blank_line(c);
	}
}
