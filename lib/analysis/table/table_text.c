/*
 * table_text.c - tables as Paddle's profiler prints them: the title centred
 * in dashes, "Time unit: ms", dashed rules between header and rows, part
 * titles ("Thread: All threads merged") centred in dashes, a "Note:" block.
 * Every string from the trace (names, titles, notes) is printed in its
 * terminal form (common/textsafe.h), and widths count that form.
 */
#include "lib/analysis/table/table.h"

#include "common/error.h"
#include "common/textsafe.h"

#include <stdlib.h>
#include <string.h>

#define TEXT_GAP 2
#define NAME_MAX_DEFAULT 60
#define CELL_MAX 256

/* One printed column: a column alone, or a group of them. */
struct tcolumn {
	unsigned first, count;
	unsigned width;
};

/* Display width of UTF-8 text: code points, so that names in any script line up
 * as well as a monospaced terminal allows. */
static unsigned text_width(const char *s)
{
	unsigned w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void put_padded(FILE *out, const char *s, unsigned width)
{
	fputs(s, out);
	for (unsigned w = text_width(s); w < width; w++)
		fputc(' ', out);
}

static void put_dashes(FILE *out, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		fputc('-', out);
}

/* The width of s in its terminal form. */
static unsigned safe_width(const char *s)
{
	char *e = text_escape_dup(s);
	unsigned w = text_width(e);
	free(e);
	return w;
}

static void put_centred(FILE *out, const char *str, unsigned total)
{
	char *s = text_escape_dup(str);
	unsigned w = text_width(s);
	unsigned left = total > w ? (total - w) / 2 : 0;
	put_dashes(out, left);
	fputs(s, out);
	put_dashes(out, total > w + left ? total - w - left : 0);
	fputc('\n', out);
	free(s);
}

/* The name with its indentation and mark, cut to max code points with "...". */
static void name_cell(char *buf, size_t size, const struct trow *r, unsigned depth,
		      const char *name, unsigned max)
{
	unsigned indent = depth * 2 < 40 ? depth * 2 : 40;
	char safe[CELL_MAX - 48]; /* room for the indent and " (mark)" */
	text_clean(safe, sizeof(safe), name);
	snprintf(buf, size, "%*s%s%s", (int)indent, "", safe, (r->flags & TROW_MARK) ? " (mark)" : "");
	if (text_width(buf) <= max || max < 4)
		return;
	size_t cut = 0;
	for (unsigned w = 0; buf[cut]; cut++) { /* byte offset of code point max - 3 */
		if (((unsigned char)buf[cut] & 0xc0) != 0x80 && w++ == max - 3)
			break;
	}
	if (cut + 4 <= size)
		memcpy(buf + cut, "...", 4);
}

static void value_cell(char *buf, size_t size, const struct tcol *col, const struct tcell *c,
		       const struct table_style *st)
{
	if (!c->set) {
		snprintf(buf, size, "-");
		return;
	}
	int decimals = col->decimals ? (int)col->decimals : 2;
	switch (col->kind) {
	case TCOL_TEXT:
		text_clean(buf, size, c->v.text);
		break;
	case TCOL_COUNT:
		snprintf(buf, size, "%llu", (unsigned long long)c->v.count);
		break;
	case TCOL_TIME:
		snprintf(buf, size, "%.*f", decimals, c->v.ns / time_unit_ns(st->unit));
		break;
	case TCOL_PERCENT:
		snprintf(buf, size, "%.*f", decimals, c->v.pct);
		break;
	case TCOL_BYTES:
		table_bytes_text(buf, size, c->v.bytes);
		break;
	case TCOL_REAL:
		snprintf(buf, size, "%.*f", decimals, c->v.real);
		break;
	}
}

/* The text of printed column k of row r (NULL: the header of part p). */
static void column_text(char *buf, size_t size, const struct table *t, const struct tpart *p,
			const struct trow *r, const struct tcolumn *k, const struct table_style *st)
{
	const struct tcol *cols = p ? p->cols : t->cols;
	if (!r) {
		const struct tcol *c = &cols[k->first];
		const char *h = k->count > 1 && c->group ? c->group : c->text ? c->text : c->header;
		snprintf(buf, size, "%s", h);
		return;
	}
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < k->count && used < size; i++) {
		unsigned ci = k->first + i;
		char cell[CELL_MAX];
		/* the first column, or a name elsewhere (nvprof's is last) */
		if (cols[ci].kind == TCOL_TEXT && r->cells[ci].set &&
		    (ci == 0 || strcmp(cols[ci].key, "name") == 0))
			name_cell(cell, sizeof(cell), r, ci == 0 ? r->depth : 0, r->cells[ci].v.text,
				  st->name_max ? st->name_max : NAME_MAX_DEFAULT);
		else
			value_cell(cell, sizeof(cell), &cols[ci], &r->cells[ci], st);
		int n = snprintf(buf + used, size - used, "%s%s", i ? " / " : "", cell);
		used += n > 0 ? (size_t)n : 0;
	}
}

static unsigned table_columns(const struct table *t, struct tcolumn *k)
{
	unsigned n = 0;
	for (unsigned i = 0; i < t->ncols; i++) {
		const char *g = t->cols[i].group;
		if (n && g && k[n - 1].count && t->cols[k[n - 1].first].group &&
		    strcmp(t->cols[k[n - 1].first].group, g) == 0) {
			k[n - 1].count++;
			continue;
		}
		k[n].first = i;
		k[n].count = 1;
		k[n].width = t->cols[i].min_width;
		n++;
	}
	return n;
}

static void widen(struct tcolumn *k, const char *s)
{
	unsigned w = text_width(s) + TEXT_GAP;
	if (w > k->width)
		k->width = w;
}

static unsigned table_widths(const struct table *t, struct tcolumn *k, unsigned nk,
			     const struct table_style *st)
{
	char buf[CELL_MAX * 8];
	for (unsigned j = 0; j < nk; j++) {
		column_text(buf, sizeof(buf), t, NULL, NULL, &k[j], st);
		widen(&k[j], buf);
		for (size_t p = 0; p < t->nparts; p++) {
			const struct tpart *part = &t->parts[p];
			column_text(buf, sizeof(buf), t, part, NULL, &k[j], st);
			widen(&k[j], buf);
			for (size_t r = 0; r < part->nrows; r++) {
				column_text(buf, sizeof(buf), t, part, &part->rows[r], &k[j], st);
				widen(&k[j], buf);
			}
		}
	}
	unsigned total = 0;
	for (unsigned j = 0; j < nk; j++)
		total += k[j].width + (j ? TEXT_GAP : 0);
	unsigned need = safe_width(t->title) + 8; /* titles keep some dashes around them */
	for (size_t p = 0; p < t->nparts; p++)
		if (t->parts[p].title && safe_width(t->parts[p].title) + 8 > need)
			need = safe_width(t->parts[p].title) + 8;
	if (nk && total < need) {
		k[nk - 1].width += need - total;
		total = need;
	}
	return total;
}

/* Prints one line of cells, each padded to its column but the last. */
static void put_line(FILE *out, const struct table *t, const struct tpart *p, const struct trow *r,
		     const struct tcolumn *k, unsigned nk, const struct table_style *st)
{
	char buf[CELL_MAX * 8];
	for (unsigned j = 0; j < nk; j++) {
		column_text(buf, sizeof(buf), t, p, r, &k[j], st);
		if (j + 1 < nk) {
			put_padded(out, buf, k[j].width);
			fprintf(out, "%*s", TEXT_GAP, "");
		} else {
			fputs(buf, out);
		}
	}
	fputc('\n', out);
}

static void put_rule(FILE *out, const struct tcolumn *k, unsigned nk)
{
	for (unsigned j = 0; j < nk; j++) {
		if (j)
			fprintf(out, "%*s", TEXT_GAP, "");
		put_dashes(out, k[j].width);
	}
	fputc('\n', out);
}

static int same_headers(const struct tpart *a, const struct tpart *b, unsigned ncols)
{
	for (unsigned i = 0; i < ncols; i++) {
		const char *x = a->cols[i].text ? a->cols[i].text : a->cols[i].header;
		const char *y = b->cols[i].text ? b->cols[i].text : b->cols[i].header;
		if (strcmp(x, y) != 0)
			return 0;
	}
	return 1;
}

static int has_time(const struct table *t)
{
	for (unsigned i = 0; i < t->ncols; i++)
		if (t->cols[i].kind == TCOL_TIME)
			return 1;
	return 0;
}

static void put_notes(FILE *out, const struct table *t, unsigned total)
{
	if (!t->nnotes)
		return;
	fputs("Note:\n", out);
	for (size_t i = 0; i < t->nnotes; i++) {
		text_fputs(t->notes[i], out);
		fputc('\n', out);
	}
	put_dashes(out, total);
	fputc('\n', out);
}

static void render_empty(const struct table *t, FILE *out)
{
	unsigned total = safe_width(t->title) + 40;
	put_centred(out, t->title, total);
	text_fputs(t->empty ? t->empty : "No data.", out);
	fputc('\n', out);
	put_dashes(out, total);
	fputc('\n', out);
	put_notes(out, t, total);
	fputc('\n', out);
}

void table_render_text(const struct table *t, FILE *out, const struct table_style *st)
{
	if (t->ncols == 0 || (table_row_count(t) == 0 && t->empty)) {
		render_empty(t, out);
		return;
	}
	struct tcolumn *k = xcalloc(t->ncols, sizeof(*k));
	unsigned nk = table_columns(t, k);
	unsigned total = table_widths(t, k, nk, st);
	put_centred(out, t->title, total);
	if (has_time(t))
		fprintf(out, "Time unit: %s\n", time_unit_name(st->unit));
	put_rule(out, k, nk);
	put_line(out, t, t->nparts ? &t->parts[0] : NULL, NULL, k, nk, st);
	put_rule(out, k, nk);
	for (size_t p = 0; p < t->nparts; p++) {
		const struct tpart *part = &t->parts[p];
		if (p && !same_headers(part, &t->parts[p - 1], t->ncols)) {
			put_rule(out, k, nk);
			put_line(out, t, part, NULL, k, nk, st);
			put_rule(out, k, nk);
		}
		if (part->title)
			put_centred(out, part->title, total);
		for (size_t r = 0; r < part->nrows; r++)
			put_line(out, t, part, &part->rows[r], k, nk, st);
	}
	put_rule(out, k, nk);
	put_notes(out, t, total);
	fputc('\n', out);
	free(k);
}
