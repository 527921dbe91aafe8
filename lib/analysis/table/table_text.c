/*
 * table_text.c - tables as Paddle's profiler prints them: the title centred
 * in dashes, "Time unit: ms", dashed rules between header and rows, part
 * titles ("Thread: All threads merged") centred in dashes, a "Note:" block.
 * Every string from the trace (names, titles, notes) is printed in its
 * terminal form (common/textsafe.h), and widths count that form.
 *
 * Within a width (struct table_style.width: 100, or the terminal's) a table
 * is laid out to fit it, as nsys and git fit theirs: every column alone
 * under its brief header with the unit in it ("Total(ms)"), the columns
 * with the highest drop left out while the table is too wide with its
 * names at a readable width, then text columns narrowed, their cells cut
 * in the middle ("aten::conv…backward": both ends of a name tell it
 * apart), and notes wrapped at spaces. Without one (--wide) every column
 * prints at full width in Paddle's groups ("CPU Total / Avg / ...").
 */
#include "lib/analysis/table/table.h"

#include "common/error.h"
#include "common/textsafe.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define TEXT_GAP 2
#define NAME_MAX_DEFAULT 60
#define CELL_MAX 256
/* Within a width: a text column is narrowed no further than this (or its
 * header), and columns are dropped before names go below TEXT_COMFORT. */
#define TEXT_MIN 12
#define TEXT_COMFORT 28
#define WIDTH_DEFAULT 100
#define WIDTH_MIN 40
#define WIDTH_MAX 1000

/* One printed column: a column alone, or a group of them. */
struct tcolumn {
	unsigned first, count;
	unsigned width;
};

unsigned table_text_width(FILE *out)
{
	/* $COLUMNS first, as git's term_columns() reads it: a user's way to
	 * widen or narrow what a pipe gets too */
	const char *env = getenv("COLUMNS");
	if (env && *env) {
		char *end;
		errno = 0;
		long v = strtol(env, &end, 10);
		if (!*end && !errno && v > 0)
			return v < WIDTH_MIN ? WIDTH_MIN : v > WIDTH_MAX ? WIDTH_MAX : (unsigned)v;
	}
	struct winsize ws;
	int fd = out ? fileno(out) : -1;
	if (fd >= 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col < WIDTH_MIN ? WIDTH_MIN : ws.ws_col > WIDTH_MAX ? WIDTH_MAX : ws.ws_col;
	return WIDTH_DEFAULT;
}

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
	if (max == 0 || text_width(buf) <= max || max < 4)
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
	case TCOL_TIME: {
		double v = c->v.ns / time_unit_ns(st->unit);
		snprintf(buf, size, "%.*f", table_time_decimals(v, decimals), v);
		break;
	}
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

/* Byte offset of code point n of s (its end when shorter). */
static size_t cp_offset(const char *s, unsigned n)
{
	size_t i = 0;
	for (unsigned w = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && w++ == n)
			break;
	}
	return i;
}

/* Cuts the cell in buf to max code points in the middle, keeping its
 * indentation (at most half of max): "aten::conv…backward". */
static void cut_middle(char *buf, size_t size, unsigned max)
{
	unsigned w = text_width(buf);
	if (w <= max || max < 3)
		return;
	unsigned indent = 0;
	while (buf[indent] == ' ')
		indent++;
	unsigned keep = indent < max / 2 ? indent : max / 2;
	memmove(buf + keep, buf + indent, strlen(buf + indent) + 1);
	w -= indent - keep;
	if (w <= max)
		return;
	const char *body = buf + keep;
	unsigned bw = w - keep, room = max - keep - 1; /* one for the ellipsis */
	unsigned head = (room + 1) / 2, tail = room - head;
	char out[CELL_MAX * 2];
	size_t h = cp_offset(body, head), t0 = cp_offset(body, bw - tail);
	int n = snprintf(out, sizeof(out), "%.*s%.*s\xe2\x80\xa6%s", (int)keep, buf, (int)h, body,
			 body + t0);
	/* never longer than buf's text was: it lost more than the ellipsis adds */
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1;
	if (len >= size)
		len = size - 1;
	memcpy(buf, out, len);
	buf[len] = '\0';
}

/* The text of printed column k of row r (NULL: the header of part p). */
static void column_text(char *buf, size_t size, const struct table *t, const struct tpart *p,
			const struct trow *r, const struct tcolumn *k, const struct table_style *st)
{
	const struct tcol *cols = p ? p->cols : t->cols;
	if (!r) {
		const struct tcol *c = &cols[k->first];
		const char *h = k->count > 1 && c->group ? c->group : c->text ? c->text : c->header;
		if (st->width && c->brief)
			h = c->brief;
		/* within a width the unit moves from the "Time unit" line into
		 * the header, where a reader looks for it */
		if (st->width && c->kind == TCOL_TIME && *h && !strchr(h, '('))
			snprintf(buf, size, "%s(%s)", h, time_unit_name(st->unit));
		else
			snprintf(buf, size, "%s", h);
		return;
	}
	/* within a width names are cut to their column when printed (put_line) */
	unsigned name_max = st->width || st->name_max == UINT_MAX ? 0
			    : st->name_max ? st->name_max : NAME_MAX_DEFAULT;
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < k->count && used < size; i++) {
		unsigned ci = k->first + i;
		char cell[CELL_MAX];
		/* the first column, or a name elsewhere (nvprof's is last) */
		if (cols[ci].kind == TCOL_TEXT && r->cells[ci].set &&
		    (ci == 0 || strcmp(cols[ci].key, "name") == 0))
			name_cell(cell, sizeof(cell), r, ci == 0 ? r->depth : 0, r->cells[ci].v.text,
				  name_max);
		else
			value_cell(cell, sizeof(cell), &cols[ci], &r->cells[ci], st);
		int n = snprintf(buf + used, size - used, "%s%s", i ? " / " : "", cell);
		used += n > 0 ? (size_t)n : 0;
	}
}

static int col_hidden(const struct tcol *c, const struct table_style *st)
{
	return st->no_gpu && (c->flags & TCOL_GPU);
}

static unsigned table_columns(const struct table *t, struct tcolumn *k,
			      const struct table_style *st)
{
	unsigned n = 0;
	for (unsigned i = 0; i < t->ncols; i++) {
		if (col_hidden(&t->cols[i], st))
			continue;
		const char *g = t->cols[i].group;
		if (!st->width && n && g && k[n - 1].count && t->cols[k[n - 1].first].group &&
		    k[n - 1].first + k[n - 1].count == i &&
		    strcmp(t->cols[k[n - 1].first].group, g) == 0) {
			k[n - 1].count++;
			continue;
		}
		k[n].first = i;
		k[n].count = 1;
		k[n].width = st->width ? 0 : t->cols[i].min_width;
		n++;
	}
	return n;
}

static void widen(struct tcolumn *k, const char *s, unsigned gap)
{
	unsigned w = text_width(s) + gap;
	if (w > k->width)
		k->width = w;
}

/* The width the title lines ask for. */
static unsigned titles_width(const struct table *t)
{
	unsigned need = safe_width(t->title) + 8; /* titles keep some dashes around them */
	for (size_t p = 0; p < t->nparts; p++)
		if (t->parts[p].title && safe_width(t->parts[p].title) + 8 > need)
			need = safe_width(t->parts[p].title) + 8;
	return need;
}

static unsigned total_width(const struct tcolumn *k, unsigned nk, unsigned gap)
{
	unsigned total = 0;
	for (unsigned j = 0; j < nk; j++)
		total += k[j].width + (j ? gap : 0);
	return total;
}

static int is_text_column(const struct table *t, const struct tcolumn *k)
{
	return k->count == 1 && t->cols[k->first].kind == TCOL_TEXT;
}

/* Within st->width: leaves columns out, highest drop first (a level at a
 * time), while the table is wider with its text columns at
 * TEXT_COMFORT; then narrows the widest text column, a code point at a
 * time, down to TEXT_MIN or its header; then, for a table whose columns say
 * nothing of dropping, leaves out its rightmost columns and widens the text
 * again. */
static unsigned fit_width(const struct table *t, struct tcolumn *k, unsigned nk,
			  unsigned *header, const struct table_style *st)
{
	for (;;) {
		unsigned comfort = 0;
		for (unsigned j = 0; j < nk; j++) {
			unsigned w = k[j].width;
			if (is_text_column(t, &k[j]) && w > TEXT_COMFORT)
				w = header[j] > TEXT_COMFORT ? header[j] : TEXT_COMFORT;
			comfort += w + (j ? TEXT_GAP : 0);
		}
		if (comfort <= st->width)
			break;
		/* a level goes as a whole: Max without Min says little */
		unsigned drop = 0, kept = 0;
		for (unsigned j = 0; j < nk; j++)
			if (t->cols[k[j].first].drop > drop)
				drop = t->cols[k[j].first].drop;
		if (!drop)
			break;
		for (unsigned j = 0; j < nk; j++) {
			if (t->cols[k[j].first].drop == drop)
				continue;
			k[kept] = k[j];
			header[kept++] = header[j];
		}
		nk = kept;
	}
	unsigned *natural = xmalloc((nk ? nk : 1) * sizeof(*natural));
	for (unsigned j = 0; j < nk; j++)
		natural[j] = k[j].width;
	unsigned total = total_width(k, nk, TEXT_GAP);
	while (total > st->width) {
		unsigned widest = nk;
		for (unsigned j = 0; j < nk; j++) {
			unsigned floor = header[j] > TEXT_MIN ? header[j] : TEXT_MIN;
			if (is_text_column(t, &k[j]) && k[j].width > floor &&
			    (widest == nk || k[j].width > k[widest].width))
				widest = j;
		}
		if (widest == nk) {
			if (nk < 2)
				break; /* as narrow as it gets */
			nk--;
			total -= k[nk].width + TEXT_GAP;
			continue;
		}
		k[widest].width--;
		total--;
	}
	for (unsigned j = 0; j < nk && total < st->width; j++) {
		if (is_text_column(t, &k[j]) && k[j].width < natural[j]) {
			unsigned more = natural[j] - k[j].width;
			if (more > st->width - total)
				more = st->width - total;
			k[j].width += more;
			total += more;
		}
	}
	free(natural);
	return nk;
}

/* Sets the widths; returns the count of printed columns (fewer within a
 * width) and the table's width in *totalp. */
static unsigned table_widths(const struct table *t, struct tcolumn *k, unsigned nk,
			     const struct table_style *st, unsigned *totalp)
{
	char buf[CELL_MAX * 8];
	unsigned gap = st->width ? 0 : TEXT_GAP;
	unsigned *header = xcalloc(nk ? nk : 1, sizeof(*header));
	for (unsigned j = 0; j < nk; j++) {
		column_text(buf, sizeof(buf), t, NULL, NULL, &k[j], st);
		widen(&k[j], buf, gap);
		for (size_t p = 0; p < t->nparts; p++) {
			column_text(buf, sizeof(buf), t, &t->parts[p], NULL, &k[j], st);
			widen(&k[j], buf, gap);
		}
		header[j] = k[j].width;
		for (size_t p = 0; p < t->nparts; p++) {
			const struct tpart *part = &t->parts[p];
			for (size_t r = 0; r < part->nrows; r++) {
				column_text(buf, sizeof(buf), t, part, &part->rows[r], &k[j], st);
				widen(&k[j], buf, gap);
			}
		}
	}
	if (st->width)
		nk = fit_width(t, k, nk, header, st);
	free(header);
	unsigned total = total_width(k, nk, TEXT_GAP);
	unsigned need = titles_width(t);
	if (st->width && need > st->width)
		need = st->width;
	if (nk && total < need) {
		k[nk - 1].width += need - total;
		total = need;
	}
	*totalp = total;
	return nk;
}

/* Prints one line of cells, each padded to its column but the last; within
 * a width, text cut to its column. */
static void put_line(FILE *out, const struct table *t, const struct tpart *p, const struct trow *r,
		     const struct tcolumn *k, unsigned nk, const struct table_style *st)
{
	char buf[CELL_MAX * 8];
	for (unsigned j = 0; j < nk; j++) {
		column_text(buf, sizeof(buf), t, p, r, &k[j], st);
		if (st->width && r)
			cut_middle(buf, sizeof(buf), k[j].width);
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

/* A line of text, in its terminal form; within a width, wrapped at spaces
 * (a word longer than the width is cut where the line ends). */
static void put_wrapped(FILE *out, const char *line, unsigned width)
{
	if (!width) {
		text_fputs(line, out);
		fputc('\n', out);
		return;
	}
	char *s = text_escape_dup(line);
	const char *p = s;
	if (!*p)
		fputc('\n', out);
	while (*p) {
		size_t end = cp_offset(p, width);
		if (p[end]) {
			size_t sp = end;
			while (sp > 0 && p[sp] != ' ')
				sp--;
			if (sp > 0)
				end = sp;
		}
		fwrite(p, 1, end, out);
		fputc('\n', out);
		p += end;
		while (*p == ' ')
			p++;
	}
	free(s);
}

static void put_notes(FILE *out, const struct table *t, unsigned total, unsigned width)
{
	if (!t->nnotes)
		return;
	fputs("Note:\n", out);
	for (size_t i = 0; i < t->nnotes; i++)
		put_wrapped(out, t->notes[i], width);
	put_dashes(out, total);
	fputc('\n', out);
}

static void render_empty(const struct table *t, FILE *out, const struct table_style *st)
{
	unsigned total = safe_width(t->title) + 40;
	if (st->width && total > st->width)
		total = st->width;
	put_centred(out, t->title, total);
	put_wrapped(out, t->empty ? t->empty : "No data.", st->width);
	put_dashes(out, total);
	fputc('\n', out);
	put_notes(out, t, total, st->width);
	fputc('\n', out);
}

void table_render_text(const struct table *t, FILE *out, const struct table_style *st)
{
	if (t->ncols == 0 || (table_row_count(t) == 0 && t->empty)) {
		render_empty(t, out, st);
		return;
	}
	struct tcolumn *k = xcalloc(t->ncols, sizeof(*k));
	unsigned total;
	unsigned nk = table_widths(t, k, table_columns(t, k, st), st, &total);
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
		if (part->omitted)
			fprintf(out, "... %zu more row%s, --top 0 for all\n", part->omitted,
				part->omitted == 1 ? "" : "s");
	}
	put_rule(out, k, nk);
	put_notes(out, t, total, st->width);
	fputc('\n', out);
	free(k);
}
