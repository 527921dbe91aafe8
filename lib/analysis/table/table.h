/*
 * table.h - the table model every view fills and every output format
 * renders: columns, then parts (sections) of rows, then notes.
 *
 *   table   "UserDefined Summary": columns, parts, notes
 *   column  one value: "CPU Total" (CSV header), "cpu_total" (JSON key), a kind;
 *           consecutive columns of one group print as one text column
 *           "CPU Total / Avg / Max / Min / Ratio(%)", values joined by " / "
 *   part    a run of rows under an optional title ("Thread: All threads
 *           merged"); a part may bring its own columns of the same count
 *           (the device half of the Overview: "GPU Time"; the Perf
 *           Summary's ips row, whose columns are numbers where the table's
 *           are times)
 *   row     cells, one per column, and a depth: rows are in tree pre-order,
 *           a row's children follow it one level deeper
 *
 * Times are kept in nanoseconds and converted to the time unit by the
 * renderers only; sizes in bytes, shown in B/KB/MB/GB (1024-based) in text
 * and as integers elsewhere. A cell never set renders as "-" (text), an
 * empty field (CSV) or null (JSON). A part may carry facts (a name and an
 * integer or a real number: a device's peak memory in use, the Perf
 * Summary's step counts) that CSV and JSON give as values and the text as
 * the view words them in the part's title or notes.
 */
#ifndef GPDL_ANALYSIS_TABLE_H
#define GPDL_ANALYSIS_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum time_unit {
	TIME_UNIT_S,
	TIME_UNIT_MS,
	TIME_UNIT_US,
	TIME_UNIT_NS,
};

/* "s", "ms", "us", "ns": 0 with *u set, -1 when not a unit. */
int time_unit_parse(const char *s, enum time_unit *u);
const char *time_unit_name(enum time_unit u);
double time_unit_ns(enum time_unit u); /* nanoseconds in one unit */

enum tcol_kind {
	TCOL_TEXT,
	TCOL_COUNT,
	TCOL_TIME,    /* nanoseconds, shown in the time unit */
	TCOL_PERCENT, /* shown with two decimals */
	TCOL_BYTES,   /* a signed number of bytes */
	TCOL_REAL,    /* a plain number, two decimals */
};

struct tcol {
	const char *header;  /* CSV header, and the text header of a column alone */
	const char *key;     /* JSON key */
	enum tcol_kind kind;
	const char *group;   /* text header shared by consecutive columns; NULL: none */
	unsigned min_width;  /* text */
	const char *text;    /* text header instead of header (NULL: header) */
	unsigned decimals;   /* text: of a time, percentage or number (0: two);
			      * CSV: of a percentage or number (times keep every digit) */
	/* Text within a width (struct table_style.width): every column prints
	 * alone under its brief header (NULL: text, then header), a time's
	 * followed by its unit ("Total(ms)"); columns with the highest drop
	 * are left out first until the table fits (0: kept). */
	const char *brief;
	unsigned drop;
	unsigned flags; /* enum tcol_flag */
};

enum tcol_flag {
	/* GPU time: left out of text when the traces hold no GPU work
	 * (struct table_style.no_gpu) */
	TCOL_GPU = 1u << 0,
};

struct tcell {
	int set;
	union {
		char *text;
		uint64_t count;
		double ns;
		double pct;
		int64_t bytes;
		double real;
	} v;
};

enum trow_flag {
	TROW_MARK = 1u << 0, /* instants: " (mark)" after the name in text and CSV */
};

struct trow {
	unsigned depth;
	unsigned flags;
	struct tcell *cells;
};

struct tfact {
	char *key;
	int64_t value;
	int is_real; /* 1: the value is real, not value */
	double real;
};

struct tpart {
	char *title;  /* text: a line centred in dashes above the rows; NULL: none */
	char *label;  /* CSV and JSON: what tells this part from the others; NULL: title */
	const struct tcol *cols; /* same count and kinds as the table's */
	int has_thread;          /* a per-thread part: these say which */
	uint32_t pid, tid;
	char *thread_name;
	struct trow *rows;
	size_t nrows, cap;
	struct tfact *facts;
	size_t nfacts;
	size_t omitted; /* top-level rows table_keep_top() left out */
};

enum table_keep {
	TABLE_KEEP_TOP = 0,
	TABLE_KEEP_ALL = 1,
	TABLE_KEEP_DATA = 2,
};

struct table {
	const char *id;    /* the view: JSON key of the table */
	const char *title; /* "UserDefined Summary" */
	const struct tcol *cols;
	unsigned ncols;
	struct tpart *parts;
	size_t nparts;
	char **notes;
	size_t nnotes;
	char *empty; /* said instead of rows when no part has any */
	/* enum table_keep: TABLE_KEEP_ALL, never cut by table_keep_top() (the
	 * Trace Summary); TABLE_KEEP_DATA, cut in text only, whole in CSV and
	 * JSON (series a reader plots: summary_out_keep_top()) */
	int keep_all;
};

struct table *table_new(const char *id, const char *title, const struct tcol *cols,
			unsigned ncols);
void table_free(struct table *t);
/* A new part; cols NULL: the table's. title and label are copied (may be NULL). */
struct tpart *table_add_part(struct table *t, const char *title, const char *label,
			     const struct tcol *cols);
struct trow *tpart_add_row(struct table *t, struct tpart *p, unsigned depth);
void table_note(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void table_set_empty(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t table_row_count(const struct table *t);
/* Keeps the first n top-level rows of each part (rows are in their sort
 * order), each with the rows nested under it, and counts the others in
 * the part's omitted; n 0 keeps every row. Returns the rows left out, all
 * parts together (top-level ones only). */
size_t table_keep_top(struct table *t, size_t n);

void trow_text(struct trow *r, unsigned col, const char *s);
void trow_count(struct trow *r, unsigned col, uint64_t v);
void trow_time(struct trow *r, unsigned col, double ns);
void trow_percent(struct trow *r, unsigned col, double pct);
void trow_bytes(struct trow *r, unsigned col, int64_t bytes);
void trow_real(struct trow *r, unsigned col, double v);
void tpart_fact(struct tpart *p, const char *key, int64_t value);
/* A fact that is a real number: JSON gives it as a number, CSV with three decimals. */
void tpart_fact_real(struct tpart *p, const char *key, double value);
/* "1.50 MB", "-512 B": sizes in text (notes and titles too), SI: kB, MB, GB, TB =
 * 10^3, 10^6, 10^9, 10^12 bytes, the one rule of every view, the report and
 * the man pages. */
const char *table_bytes_text(char *buf, size_t size, int64_t bytes);
/* The decimals a time v (in its unit) prints with: decimals, or, when a
 * nonzero v under 10^-decimals would print as 0 or with one significant
 * digit (a 3 ms Avg in seconds), as many as show its first two significant
 * digits (at most 9): "0.0034". */
int table_time_decimals(double v, int decimals);

struct table_style {
	enum time_unit unit;
	unsigned name_max;    /* text: longer names are cut with "..." (0: 60) */
	/* Text: the columns a line may take (0: none, every column at full
	 * width as Paddle prints it, names uncut when name_max is UINT_MAX).
	 * Within a width, names are cut in the middle ("aten::conv…backward")
	 * and notes wrap at spaces. */
	unsigned width;
	int no_gpu; /* text: leave out the TCOL_GPU columns */
};

/* The width text tables take on out: $COLUMNS when set to a number, else
 * the terminal's when out is one, else 100 (within [40, 1000]). */
unsigned table_text_width(FILE *out);

/* The three renderings (table_text.c, table_csv.c, table_json.c). */
struct csv_out;
struct json_writer;
void table_render_text(const struct table *t, FILE *out, const struct table_style *st);
void table_render_csv(const struct table *t, struct csv_out *c, const struct table_style *st);
/* Writes the table as one JSON object value (the caller writes its key). */
void table_render_json(const struct table *t, struct json_writer *w, const struct table_style *st);

#endif
