/*
 * sqlite_export.c - a job as one sqlite file (see sqlite_export.h and
 * formats/SQL-SCHEMA.md).
 *
 * The rows come from csv_export_new_sink(): this file only binds the values
 * the CSV export's row writers produce to prepared INSERTs, one per table,
 * with the part's rank first. Writing is tuned for one writer that owns the
 * file: no journal, no sync, BATCH_ROWS rows per INSERT, a commit every
 * CHUNK_ROWS rows and at each part's end.
 *
 * The computed columns of ranges and operators (parent, depth, step) are
 * known only once a part's last range has ended (a collector writes a range
 * when it ends, after everything inside it), and rewriting every row with
 * them would cost as much as writing it. So the rows go to ranges_data and
 * operators_data as they stream, the sink keeps each one's (thread, start,
 * end, id) and the part's steps (32 and 24 bytes a row), and at the part's
 * end one ordered pass per thread with a stack gives the nesting table
 * (id, parent, depth, step), written in id order by one INSERT from a
 * virtual table over that memory; the views ranges and operators join the
 * two. The ranges are sorted for that pass in chunks, on a second thread
 * while the rows go in. Indices come at the end; a file that never got
 * there is removed.
 */
#include "formats/sqlite/sqlite_export.h"

#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rows per transaction: big enough that commits cost nothing, small enough
 * that sqlite's page cache holds the dirty pages. */
#define CHUNK_ROWS (64u << 10)
/* Rows per INSERT: one statement's start and end cost as much as a few
 * rows; a batch not full at a part's end is run with the rank of its unused
 * rows NULL, which INSERT OR IGNORE skips (rank is NOT NULL). */
#define BATCH_ROWS 16

/* A range's or operator's computed columns. */
struct nesting {
	int64_t parent, step; /* parent 0, step -1: none */
	int64_t depth;
};

/* The rows the nesting's virtual table gives: rows[i] is id first + i. */
struct nest_src {
	const struct nesting *rows;
	size_t n;
	int64_t first;
};

/* A range or operator of the part, for its nesting. */
struct nest_range {
	int64_t thread, start, end, id;
};

/* The ranges are kept in chunks of this many (32 MiB), each sorted while
 * the next fills, on the core that sqlite leaves idle: at the part's end
 * only the last one is left to sort and the chunks are merged, instead of
 * one sort of them all (1.5 s of 10 M) after the last row. */
#define NEST_CHUNK (1u << 20)

struct nest_chunk {
	struct nest_range *r;
	size_t n, cap;
};

struct nest_step {
	int64_t step, start, end;
};

/* Where the columns the nesting needs are, in a file's SQL columns (-1: not there). */
struct capture_cols {
	int start, end, thread, step;
};

/* A parameter's value as last bound: sqlite keeps bindings across
 * sqlite3_reset(), and rows of a table repeat most of theirs (rank, name,
 * type, thread, flags, the NULLs), so a value equal to the bound one is not
 * bound again. Text is compared up to BOUND_TEXT bytes. */
#define BOUND_TEXT 48
enum bound_kind { BOUND_NONE, BOUND_NULL, BOUND_INT, BOUND_TEXT_KIND };

struct bound {
	enum bound_kind kind;
	uint32_t len;
	int64_t i;
	char text[BOUND_TEXT];
};

struct sqlite_export {
	sqlite3 *db;
	char *path;
	char *name; /* the file's name in messages: the final one, not the temporary file */
	sqlite3_stmt *insert[CSV_FILE_COUNT], *nesting;
	sqlite3_stmt *agg[CSV_AGG_COUNT]; /* the aggregate tables' INSERT, one row */
	struct bound *bound[CSV_FILE_COUNT]; /* by parameter number */
	int per_row[CSV_FILE_COUNT];         /* parameters of one row */
	unsigned pending[CSV_FILE_COUNT];    /* rows bound in the batch */
	struct capture_cols cap[CSV_FILE_COUNT];
	int in_txn, finished, failed;
	uint64_t chunk_rows; /* rows since the last commit */
	int64_t next_id;     /* ranges and operators share one id space */
	/* the row being bound */
	sqlite3_stmt *row;
	struct bound *row_bound;
	enum csv_export_file file;
	int param, col, keep; /* keep: the row is a range or a step, for the nesting */
	struct nest_range cur;
	int64_t cur_step;
	int32_t rank;
	/* the part's ranges, in chunks of NEST_CHUNK each sorted on a thread
	 * of its own once full, and its steps */
	struct nest_chunk *chunks;
	size_t nchunks, chunks_cap, nranges;
	pthread_t sorter;
	int sorting; /* the sorter runs, on sort_job: a chunk before the last */
	struct nest_chunk sort_job;
	struct nest_step *steps;
	size_t nsteps, steps_cap;
	struct nest_src nest; /* the part's nesting rows, while they go in */
	char err[512];
};

/* Whether file f has the computed columns id, parent, depth, step. */
static int nested(enum csv_export_file f)
{
	return f == CSV_FILE_RANGES || f == CSV_FILE_OPERATORS;
}

/* The table rows of f go to: "ranges_data" for the view ranges. */
static void table_of(enum csv_export_file f, char *buf, size_t size)
{
	snprintf(buf, size, nested(f) ? "%s_data" : "%s", csv_export_table_name(f, 1));
}

static int fail(struct sqlite_export *s, const char *what)
{
	/* the first error is the one to tell; the system's reason when the
	 * system failed ("No space left on device", not "disk I/O error") */
	int saved = errno, e = s->db ? sqlite3_system_errno(s->db) : 0;
	if (!e && s->db && saved &&
	    ((sqlite3_errcode(s->db) & 0xff) == SQLITE_IOERR || sqlite3_errcode(s->db) == SQLITE_FULL))
		e = saved; /* the write(2) sqlite made last */
	if (!s->failed)
		snprintf(s->err, sizeof(s->err), "cannot %s '%s': %s", what, s->name,
			 e ? strerror(e) : s->db ? sqlite3_errmsg(s->db) : "out of memory");
	s->failed = 1;
	return -1;
}

static int exec(struct sqlite_export *s, const char *sql)
{
	return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(s, "write");
}

static const char *sql_type(enum csv_coltype t)
{
	return t == CSV_COL_INT ? "INTEGER" : t == CSV_COL_REAL ? "REAL" : "TEXT";
}

/* The CREATE TABLE (and CREATE VIEW) and the INSERT of file f, into
 * strings of their own (from open_memstream). */
static int table_sql(enum csv_export_file f, char **create, char **insert)
{
	const struct csv_column *cols;
	size_t n = csv_export_columns(f, 1, &cols), lc = 0, li = 0;
	char table[64];
	table_of(f, table, sizeof(table));
	FILE *c = open_memstream(create, &lc), *i = open_memstream(insert, &li);
	if (!c || !i) {
		if (c)
			fclose(c);
		if (i)
			fclose(i);
		return -1;
	}
	fprintf(c, "CREATE TABLE \"%s\" (\"rank\" INTEGER NOT NULL", table);
	fprintf(i, "INSERT OR IGNORE INTO \"%s\" (\"rank\"", table);
	if (nested(f)) {
		fputs(", \"id\" INTEGER PRIMARY KEY", c);
		fputs(", \"id\"", i);
	}
	for (size_t k = 0; k < n; k++) {
		fprintf(c, ", \"%s\" %s", cols[k].name, sql_type(cols[k].type));
		fprintf(i, ", \"%s\"", cols[k].name);
	}
	fputs(");\n", c);
	fputs(") VALUES ", i);
	for (int r = 0; r < BATCH_ROWS; r++) {
		fputs(r ? ", (?" : "(?", i);
		for (size_t k = nested(f) ? 0 : 1; k <= n; k++)
			fputs(", ?", i);
		fputs(")", i);
	}
	if (nested(f)) {
		fprintf(c, "CREATE VIEW \"%s\" AS SELECT d.\"rank\", d.\"id\"",
			csv_export_table_name(f, 1));
		for (size_t k = 0; k < n; k++)
			fprintf(c, ", d.\"%s\"", cols[k].name);
		fprintf(c, ", n.parent, n.depth, n.step FROM \"%s\" d JOIN nesting n ON n.id = d.id",
			table);
	}
	int bad = fclose(c) != 0;
	bad |= fclose(i) != 0;
	return bad ? -1 : 0;
}

static int column_of(const struct csv_column *cols, size_t n, const char *name)
{
	for (size_t k = 0; k < n; k++)
		if (strcmp(cols[k].name, name) == 0)
			return (int)k;
	return -1;
}

static void capture_find(struct sqlite_export *s)
{
	for (int f = 0; f < CSV_FILE_COUNT; f++) {
		const struct csv_column *cols;
		size_t n = csv_export_columns((enum csv_export_file)f, 1, &cols);
		s->cap[f] = (struct capture_cols){
			column_of(cols, n, "start_ns"), column_of(cols, n, "end_ns"),
			column_of(cols, n, "thread"), column_of(cols, n, "step"),
		};
	}
}

static int begin(struct sqlite_export *s);
static const sqlite3_module nest_module;

/* The aggregate tables (csv_agg.h) and their INSERTs. */
static int agg_create(struct sqlite_export *s)
{
	for (int t = 0; t < CSV_AGG_COUNT; t++) {
		const struct csv_column *cols;
		size_t n = csv_agg_columns((enum csv_agg_table)t, &cols), lc = 0, li = 0;
		char *create = NULL, *insert = NULL;
		FILE *c = open_memstream(&create, &lc), *i = open_memstream(&insert, &li);
		if (!c || !i)
			BUG("open_memstream");
		const char *name = csv_agg_table_name((enum csv_agg_table)t);
		fprintf(c, "CREATE TABLE \"%s\" (\"rank\" INTEGER NOT NULL", name);
		fprintf(i, "INSERT INTO \"%s\" VALUES (?", name);
		for (size_t k = 0; k < n; k++) {
			fprintf(c, ", \"%s\" %s", cols[k].name, sql_type(cols[k].type));
			fputs(", ?", i);
		}
		fputs(")", c);
		fputs(")", i);
		fclose(c);
		fclose(i);
		int rc = exec(s, create);
		if (rc == 0 && sqlite3_prepare_v3(s->db, insert, -1, SQLITE_PREPARE_PERSISTENT,
						  &s->agg[t], NULL) != SQLITE_OK)
			rc = fail(s, "write");
		free(create);
		free(insert);
		if (rc != 0)
			return -1;
	}
	return 0;
}

int sqlite_export_agg_row(struct sqlite_export *s, enum csv_agg_table t, int32_t rank,
			  const struct csv_agg_value *v, size_t n)
{
	if (s->failed || !s->agg[t] || begin(s) != 0)
		return -1;
	sqlite3_stmt *st = s->agg[t];
	sqlite3_bind_int64(st, 1, rank);
	for (size_t k = 0; k < n; k++) {
		int at = (int)k + 2;
		if (v[k].kind == CSV_AGG_INT)
			sqlite3_bind_int64(st, at, v[k].i);
		else if (v[k].kind == CSV_AGG_TEXT)
			sqlite3_bind_text(st, at, v[k].s, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, at);
	}
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : fail(s, "write");
}

static int schema_create(struct sqlite_export *s)
{
	if (exec(s, "PRAGMA page_size = 16384; PRAGMA journal_mode = OFF; "
		    "PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE; "
		    "PRAGMA cache_size = -65536; BEGIN; "
		    "CREATE TABLE nesting (id INTEGER PRIMARY KEY, parent INTEGER, "
		    "depth INTEGER NOT NULL, step INTEGER)") != 0)
		return -1;
	s->in_txn = 1;
	for (int f = 0; f < CSV_FILE_COUNT; f++) {
		char *create = NULL, *insert = NULL;
		int rc = table_sql((enum csv_export_file)f, &create, &insert);
		if (rc == 0)
			rc = exec(s, create);
		if (rc == 0 && sqlite3_prepare_v3(s->db, insert, -1, SQLITE_PREPARE_PERSISTENT,
						  &s->insert[f], NULL) != SQLITE_OK)
			rc = fail(s, "write");
		if (rc == 0) {
			int n = sqlite3_bind_parameter_count(s->insert[f]);
			s->bound[f] = xcalloc((size_t)n + 1, sizeof(*s->bound[f]));
			s->per_row[f] = n / BATCH_ROWS;
		}
		free(create);
		free(insert);
		if (rc != 0)
			return -1;
	}
	if (sqlite3_create_module_v2(s->db, "gpdl_nesting_src", &nest_module, &s->nest, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v3(s->db,
			       "INSERT INTO nesting SELECT id, parent, depth, step FROM gpdl_nesting_src",
			       -1, SQLITE_PREPARE_PERSISTENT, &s->nesting, NULL) != SQLITE_OK)
		return fail(s, "write");
	capture_find(s);
	return agg_create(s);
}

struct sqlite_export *sqlite_export_open(const char *path, char *err, size_t errlen)
{
	return sqlite_export_open_as(path, path, err, errlen);
}

struct sqlite_export *sqlite_export_open_as(const char *path, const char *name, char *err,
					    size_t errlen)
{
	/* One connection, used by one thread at a time: sqlite's own locks are
	 * a fifth of an insert. Only takes effect before sqlite's first use. */
	sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* created here, so that close may remove it: never someone else's file;
	 * or an empty file the caller made for it (common/outfile.h's temporary
	 * file, renamed into place by the caller once finished) */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	struct stat st;
	if (fd < 0 && errno == EEXIST &&
	    (fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
	    (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0)) {
		close(fd);
		fd = -1;
		errno = EEXIST;
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", name, strerror(errno));
		return NULL;
	}
	close(fd);
	struct sqlite_export *s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(path);
	s->name = xstrdup(name);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
		    SQLITE_OK ||
	    schema_create(s) != 0) {
		fail(s, "write");
		snprintf(err, errlen, "%s", s->err);
		sqlite_export_close(s);
		return NULL;
	}
	return s;
}

const char *sqlite_export_error(const struct sqlite_export *s)
{
	return s->err;
}

/* ---- the sink: the row writers' values, bound in order ------------------- */

static void bind_int(struct sqlite_export *s, int64_t v)
{
	struct bound *b = &s->row_bound[s->param];
	if (b->kind != BOUND_INT || b->i != v) {
		sqlite3_bind_int64(s->row, s->param, v);
		b->kind = BOUND_INT;
		b->i = v;
	}
	s->param++;
}

static void sink_row(void *ctx, enum csv_export_file f)
{
	struct sqlite_export *s = ctx;
	s->file = f;
	s->row = s->insert[f];
	s->row_bound = s->bound[f];
	s->param = (int)s->pending[f] * s->per_row[f] + 1;
	bind_int(s, s->rank);
	s->col = 0;
	s->keep = nested(f) || f == CSV_FILE_STEPS;
	if (nested(f)) {
		s->cur.id = ++s->next_id;
		bind_int(s, s->cur.id);
	}
}

/* An integer of a row the nesting needs: its start, end, thread or step. */
static inline void keep_value(struct sqlite_export *s, int64_t v)
{
	const struct capture_cols *c = &s->cap[s->file];
	if (s->col == c->start)
		s->cur.start = v;
	else if (s->col == c->end)
		s->cur.end = v;
	else if (s->col == c->thread)
		s->cur.thread = v;
	else if (s->col == c->step)
		s->cur_step = v;
}

static void sink_null(void *ctx)
{
	struct sqlite_export *s = ctx;
	struct bound *b = &s->row_bound[s->param];
	if (b->kind != BOUND_NULL) {
		sqlite3_bind_null(s->row, s->param);
		b->kind = BOUND_NULL;
	}
	s->param++;
	s->col++;
}

static void sink_i64(void *ctx, int64_t v)
{
	struct sqlite_export *s = ctx;
	bind_int(s, v);
	if (s->keep)
		keep_value(s, v);
	s->col++;
}

/* An INTEGER holds 63 bits: a larger value (never a time, count or size in
 * practice) is stored as the nearest REAL rather than wrapped. */
static void sink_u64(void *ctx, uint64_t v)
{
	struct sqlite_export *s = ctx;
	if (v > INT64_MAX) {
		s->row_bound[s->param].kind = BOUND_NONE;
		sqlite3_bind_double(s->row, s->param++, (double)v);
		s->col++;
		return;
	}
	sink_i64(ctx, (int64_t)v);
}

static void sink_real(void *ctx, double v)
{
	struct sqlite_export *s = ctx;
	s->row_bound[s->param].kind = BOUND_NONE;
	sqlite3_bind_double(s->row, s->param++, v);
	s->col++;
}

static void sink_text(void *ctx, const char *text, size_t len)
{
	struct sqlite_export *s = ctx;
	struct bound *b = &s->row_bound[s->param];
	if (b->kind != BOUND_TEXT_KIND || b->len != len || len > BOUND_TEXT ||
	    memcmp(b->text, text, len) != 0) {
		sqlite3_bind_text64(s->row, s->param, text, len, SQLITE_TRANSIENT, SQLITE_UTF8);
		b->kind = len <= BOUND_TEXT ? BOUND_TEXT_KIND : BOUND_NONE;
		b->len = (uint32_t)len;
		if (len <= BOUND_TEXT)
			memcpy(b->text, text, len);
	}
	s->param++;
	s->col++;
}

static int commit(struct sqlite_export *s)
{
	s->chunk_rows = 0;
	if (s->in_txn && exec(s, "COMMIT") != 0)
		return -1;
	s->in_txn = 0;
	return 0;
}

static int begin(struct sqlite_export *s)
{
	if (!s->in_txn) {
		if (exec(s, "BEGIN") != 0)
			return -1;
		s->in_txn = 1;
	}
	return 0;
}

static int range_cmp(const void *a, const void *b);

static void *nest_sort_run(void *arg)
{
	struct nest_chunk *c = arg;
	qsort(c->r, c->n, sizeof(*c->r), range_cmp);
	return NULL;
}

/* Waits for the sorter, if it runs. */
static void nest_sort_wait(struct sqlite_export *s)
{
	if (s->sorting)
		pthread_join(s->sorter, NULL);
	s->sorting = 0;
}

/* The last chunk, full, to the sorter (or sorted now when there is no
 * thread to be had). chunks may move: the thread gets the chunk's copy. */
static void nest_sort_start(struct sqlite_export *s)
{
	nest_sort_wait(s);
	struct nest_chunk *c = &s->chunks[s->nchunks - 1];
	s->sort_job = *c;
	s->sorting = pthread_create(&s->sorter, NULL, nest_sort_run, &s->sort_job) == 0;
	if (!s->sorting)
		nest_sort_run(&s->sort_job);
}

/* Drops the part's ranges (the sorter done first). */
static void nest_clear(struct sqlite_export *s)
{
	nest_sort_wait(s);
	for (size_t i = 0; i < s->nchunks; i++)
		free(s->chunks[i].r);
	s->nchunks = s->nranges = 0;
}

static void keep_row(struct sqlite_export *s)
{
	if (s->file == CSV_FILE_STEPS) {
		if (s->nsteps == s->steps_cap) {
			s->steps_cap = s->steps_cap ? 2 * s->steps_cap : 256;
			s->steps = xrealloc(s->steps, s->steps_cap * sizeof(*s->steps));
		}
		s->steps[s->nsteps++] = (struct nest_step){s->cur_step, s->cur.start, s->cur.end};
		return;
	}
	struct nest_chunk *c = s->nchunks ? &s->chunks[s->nchunks - 1] : NULL;
	if (!c || c->n == NEST_CHUNK) {
		if (c)
			nest_sort_start(s);
		if (s->nchunks == s->chunks_cap) {
			s->chunks_cap = s->chunks_cap ? 2 * s->chunks_cap : 8;
			s->chunks = xrealloc(s->chunks, s->chunks_cap * sizeof(*s->chunks));
		}
		c = &s->chunks[s->nchunks++];
		*c = (struct nest_chunk){0};
	}
	if (c->n == c->cap) { /* only the last chunk grows: the sorter has the others */
		c->cap = c->cap ? 2 * c->cap : 4096;
		c->r = xrealloc(c->r, c->cap * sizeof(*c->r));
	}
	c->r[c->n++] = s->cur;
	s->nranges++;
}

/* Runs file f's batch: its rows bound so far, the others skipped. */
static int batch_run(struct sqlite_export *s, enum csv_export_file f)
{
	sqlite3_stmt *q = s->insert[f];
	for (unsigned r = s->pending[f]; r < BATCH_ROWS; r++) {
		int rank = (int)r * s->per_row[f] + 1;
		sqlite3_bind_null(q, rank);
		s->bound[f][rank].kind = BOUND_NULL;
	}
	int rc = sqlite3_step(q);
	sqlite3_reset(q);
	s->pending[f] = 0;
	return rc == SQLITE_DONE ? 0 : fail(s, "write");
}

static int sink_end_row(void *ctx)
{
	struct sqlite_export *s = ctx;
	if (s->failed || begin(s) != 0)
		return -1;
	if (s->keep)
		keep_row(s);
	if (++s->pending[s->file] == BATCH_ROWS && batch_run(s, s->file) != 0)
		return -1;
	if (++s->chunk_rows >= CHUNK_ROWS)
		return commit(s);
	return 0;
}

/* ---- the nesting of a part's ranges -------------------------------------- */

/* By thread, start, the longer first; of two with the same span the one
 * written later is the outer one: a collector writes a range when it ends,
 * the inner one first. */
static int range_cmp(const void *a, const void *b)
{
	const struct nest_range *p = a, *q = b;
	if (p->thread != q->thread)
		return p->thread < q->thread ? -1 : 1;
	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	if (p->end != q->end)
		return p->end > q->end ? -1 : 1;
	return (p->id < q->id) - (p->id > q->id);
}

/* The step whose [start, end) holds t, or -1: the latest one that starts at
 * or before t, if it has not ended (the steps are in start order, one after
 * another). */
static int64_t step_at(const struct sqlite_export *s, int64_t t)
{
	size_t lo = 0, hi = s->nsteps;
	while (lo < hi) { /* the first step that starts after t */
		size_t mid = lo + (hi - lo) / 2;
		if (s->steps[mid].start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || t >= s->steps[lo - 1].end)
		return -1;
	return s->steps[lo - 1].step;
}

/* One ordered pass per thread with a stack of the ranges open at the
 * current start: the innermost one that contains a range is its parent.
 * out is indexed by id - first. */
/* A heap of the chunks by their next range: the chunks merged in order. */
struct nest_merge {
	struct nest_chunk *c;
	size_t *at;       /* per chunk: its next range */
	uint32_t *heap;   /* chunk indices, the least next range first */
	size_t n;
};

static int merge_less(const struct nest_merge *m, uint32_t a, uint32_t b)
{
	return range_cmp(&m->c[a].r[m->at[a]], &m->c[b].r[m->at[b]]) < 0;
}

static void merge_down(struct nest_merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, least = i;
		if (l < m->n && merge_less(m, m->heap[l], m->heap[least]))
			least = l;
		if (l + 1 < m->n && merge_less(m, m->heap[l + 1], m->heap[least]))
			least = l + 1;
		if (least == i)
			return;
		uint32_t t = m->heap[i];
		m->heap[i] = m->heap[least];
		m->heap[least] = t;
		i = least;
	}
}

/* The next range in order, or NULL after the last. */
static struct nest_range *merge_next(struct nest_merge *m)
{
	if (!m->n)
		return NULL;
	uint32_t k = m->heap[0];
	struct nest_range *r = &m->c[k].r[m->at[k]++];
	if (m->at[k] == m->c[k].n)
		m->heap[0] = m->heap[--m->n];
	merge_down(m, 0);
	return r;
}

static void nest_part(struct sqlite_export *s, struct nesting *out, int64_t first)
{
	struct nest_range **stack = NULL;
	size_t depth = 0, cap = 0;
	nest_sort_wait(s);
	struct nest_chunk *last = &s->chunks[s->nchunks - 1];
	qsort(last->r, last->n, sizeof(*last->r), range_cmp);
	struct nest_merge m = {s->chunks, xcalloc(s->nchunks, sizeof(*m.at)),
			       xmalloc(s->nchunks * sizeof(*m.heap)), 0};
	for (size_t k = 0; k < s->nchunks; k++)
		if (s->chunks[k].n)
			m.heap[m.n++] = (uint32_t)k;
	for (size_t i = m.n; i-- > 0;)
		merge_down(&m, i);
	struct nest_range *r, *prev = NULL;
	while ((r = merge_next(&m))) {
		if (!prev || r->thread != prev->thread)
			depth = 0;
		prev = r;
		while (depth > 0 && r->end > stack[depth - 1]->end)
			depth--; /* it ends before this one does: not around it */
		out[r->id - first] = (struct nesting){
			depth ? stack[depth - 1]->id : 0, step_at(s, r->start), (int64_t)depth,
		};
		if (depth == cap) {
			cap = cap ? 2 * cap : 64;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		stack[depth++] = r;
	}
	free(stack);
	free(m.at);
	free(m.heap);
}

/* The part's nesting rows go in by one INSERT ... SELECT from an
 * eponymous virtual table over the array nest_part() filled: sqlite reads
 * each value where it is, without a statement run, four binds and a reset
 * per row (10 M of those were as long as the rows themselves). */
struct nest_vtab {
	sqlite3_vtab base;
	const struct nest_src *src; /* the export's, filled around the INSERT's run */
};

struct nest_cursor {
	sqlite3_vtab_cursor base;
	const struct nest_src *src;
	size_t i;
};

static int nest_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
			sqlite3_vtab **vt, char **err)
{
	(void)argc, (void)argv, (void)err;
	int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(id, parent, depth, step)");
	if (rc != SQLITE_OK)
		return rc;
	struct nest_vtab *v = sqlite3_malloc(sizeof(*v));
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof(*v));
	v->src = aux;
	*vt = &v->base;
	return SQLITE_OK;
}

static int nest_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int nest_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void)vt;
	info->estimatedCost = 1e6;
	info->orderByConsumed = 0;
	return SQLITE_OK;
}

static int nest_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **cur)
{
	(void)vt;
	struct nest_cursor *c = sqlite3_malloc(sizeof(*c));
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*cur = &c->base;
	return SQLITE_OK;
}

static int nest_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int nest_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr, int argc,
		       sqlite3_value **argv)
{
	(void)idx, (void)idxstr, (void)argc, (void)argv;
	struct nest_cursor *c = (struct nest_cursor *)cur;
	c->src = ((const struct nest_vtab *)cur->pVtab)->src;
	c->i = 0;
	return SQLITE_OK;
}

static int nest_next(sqlite3_vtab_cursor *cur)
{
	((struct nest_cursor *)cur)->i++;
	return SQLITE_OK;
}

static int nest_eof(sqlite3_vtab_cursor *cur)
{
	const struct nest_cursor *c = (const struct nest_cursor *)cur;
	return !c->src || c->i >= c->src->n;
}

static int nest_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	const struct nest_cursor *c = (const struct nest_cursor *)cur;
	const struct nesting *r = &c->src->rows[c->i];
	switch (col) {
	case 0:
		sqlite3_result_int64(ctx, c->src->first + (int64_t)c->i);
		break;
	case 1:
		if (r->parent)
			sqlite3_result_int64(ctx, r->parent);
		else
			sqlite3_result_null(ctx);
		break;
	case 2:
		sqlite3_result_int64(ctx, r->depth);
		break;
	default:
		if (r->step >= 0)
			sqlite3_result_int64(ctx, r->step);
		else
			sqlite3_result_null(ctx);
		break;
	}
	return SQLITE_OK;
}

static int nest_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((const struct nest_cursor *)cur)->i;
	return SQLITE_OK;
}

static const sqlite3_module nest_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous only: no CREATE VIRTUAL TABLE, nothing in the schema */
	.xConnect = nest_connect,
	.xBestIndex = nest_best_index,
	.xDisconnect = nest_disconnect,
	.xOpen = nest_open,
	.xClose = nest_close,
	.xFilter = nest_filter,
	.xNext = nest_next,
	.xEof = nest_eof,
	.xColumn = nest_column,
	.xRowid = nest_rowid,
};

/* The part's nesting rows, in id order (appended to the table's end). */
static int nesting_write(struct sqlite_export *s)
{
	if (!s->nranges)
		return 0;
	int64_t first = s->next_id - (int64_t)s->nranges + 1;
	struct nesting *out = xmalloc(s->nranges * sizeof(*out));
	nest_part(s, out, first);
	s->nest = (struct nest_src){out, s->nranges, first};
	int rc = sqlite3_step(s->nesting) == SQLITE_DONE ? 0 : fail(s, "write");
	sqlite3_reset(s->nesting);
	s->nest = (struct nest_src){0};
	free(out);
	return rc;
}

static int sink_end(void *ctx)
{
	struct sqlite_export *s = ctx;
	int rc = s->failed || begin(s) != 0 ? -1 : 0;
	for (int f = 0; rc == 0 && f < CSV_FILE_COUNT; f++)
		if (s->pending[f])
			rc = batch_run(s, (enum csv_export_file)f);
	rc = rc || nesting_write(s) != 0 ? -1 : commit(s);
	nest_clear(s);
	s->nsteps = 0;
	return rc;
}

struct export_writer *sqlite_export_part(struct sqlite_export *s, const struct csv_export_opts *o)
{
	if (s->failed || s->finished)
		return NULL;
	struct csv_export_opts so = *o;
	so.sql = 1;
	s->rank = o->rank;
	nest_clear(s); /* an earlier part's that failed */
	s->nsteps = 0;
	memset(s->pending, 0, sizeof(s->pending)); /* an earlier part's that failed */
	const struct csv_value_sink sink = {
		.ctx = s,
		.row = sink_row,
		.null = sink_null,
		.i64 = sink_i64,
		.u64 = sink_u64,
		.real = sink_real,
		.text = sink_text,
		.end_row = sink_end_row,
		.end = sink_end,
	};
	return csv_export_new_sink(&sink, &so);
}

/* ---- the end: indices ----------------------------------------------------- */

/* The indices of the small tables, on what the recipes join them by. The
 * event tables get none: a (rank, start_ns) index cost a fifth of the
 * export's time, and sqlite's planner took it for the recipes' "rank >= 0"
 * and ORDER BY start, a lookup per row where a scan and a sort are 8x
 * faster (step_time.sql on a 200 k-event export: 8.0 s with, 0.9 s
 * without). A user's point query on a big table makes its own. */
static int indices_create(struct sqlite_export *s)
{
	return exec(s, "CREATE INDEX counters_rank_ts ON counters (rank, ts_ns);"
		       "CREATE INDEX communication_rank_group_seq ON communication "
		       "(rank, process_group, coll_seq);"
		       "CREATE INDEX steps_rank_step ON steps (rank, step);"
		       "CREATE INDEX threads_rank_thread ON threads (rank, thread);"
		       "CREATE INDEX agg_steps_rank_step ON agg_steps (rank, step);"
		       "CREATE INDEX agg_calls_rank_pg ON agg_calls (rank, pg, seq);");
}

static void statements_free(struct sqlite_export *s)
{
	for (int f = 0; f < CSV_FILE_COUNT; f++) {
		sqlite3_finalize(s->insert[f]);
		s->insert[f] = NULL;
		free(s->bound[f]);
		s->bound[f] = NULL;
	}
	sqlite3_finalize(s->nesting);
	s->nesting = NULL;
	for (int t = 0; t < CSV_AGG_COUNT; t++) {
		sqlite3_finalize(s->agg[t]);
		s->agg[t] = NULL;
	}
}

int sqlite_export_finish(struct sqlite_export *s, char *err, size_t errlen)
{
	if (!s->failed && !s->finished) {
		statements_free(s);
		if (begin(s) == 0 && indices_create(s) == 0 && commit(s) == 0)
			s->finished = 1;
	}
	if (!s->finished) {
		if (!s->failed)
			fail(s, "write");
		snprintf(err, errlen, "%s", s->err);
		return -1;
	}
	return 0;
}

void sqlite_export_close(struct sqlite_export *s)
{
	if (!s)
		return;
	statements_free(s);
	sqlite3_close(s->db); /* NULL is a no-op; every statement is finalized */
	if (!s->finished)
		unlink(s->path);
	nest_clear(s);
	free(s->chunks);
	free(s->steps);
	free(s->path);
	free(s->name);
	free(s);
}
