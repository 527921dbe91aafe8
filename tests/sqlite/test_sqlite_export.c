/*
 * test_sqlite_export.c - the sqlite export (formats/sqlite/sqlite_export.h),
 * read back with libsqlite3, Python's sqlite3 module and the sqlite3 CLI:
 * the tables' row counts against the traces' records, the rank column, the
 * job clock, the computed columns of a hand-built nest, NULL for empty
 * values, drops and damage, names byte for byte, and the file's removal
 * when the export does not finish.
 */
#include "formats/sqlite/sqlite_export.h"
#include "tests/analysis/tracebuild.h"

#include <csv.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#define FFFD "\xef\xbf\xbd"

/* ---- exporting and reading back ------------------------------------------ */

/* Exports each file as one part (rank and clock from its header) into
 * DIR/name; returns the path (static). */
static const char *export_files(const char *name, const char *const *paths, unsigned n)
{
	static char out[600];
	char err[512];
	snprintf(out, sizeof(out), "%s/%s", tb_dir(), name);
	unlink(out);
	struct sqlite_export *s = sqlite_export_open(out, err, sizeof(err));
	if (!s)
		fail_msg("%s", err);
	for (unsigned i = 0; i < n; i++) {
		struct trace_reader *r = trace_reader_open(paths[i], err, sizeof(err));
		if (!r)
			fail_msg("%s", err);
		const struct trace_header *h = trace_reader_header(r);
		const struct csv_export_opts o = {
			.sql = 1, .time_offset_ns = h->wall_offset_ns, .rank = h->rank,
		};
		struct export_writer *w = sqlite_export_part(s, &o);
		assert_non_null(w);
		assert_int_equal(export_writer_run(w, r), 0);
		export_writer_destroy(w);
		trace_reader_close(r);
	}
	if (sqlite_export_finish(s, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	sqlite_export_close(s);
	return out;
}

static sqlite3 *db_open(const char *path)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return db;
}

/* The one integer a query gives. */
static int64_t q_int(sqlite3 *db, const char *fmt, ...)
{
	char sql[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(q) != SQLITE_ROW)
		fail_msg("%s: no row", sql);
	int64_t v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/* The one text a query gives, or "(null)" for NULL. */
static char *q_text(sqlite3 *db, const char *sql)
{
	static char buf[1024];
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(q) != SQLITE_ROW)
		fail_msg("%s: no row", sql);
	const unsigned char *t = sqlite3_column_text(q, 0);
	snprintf(buf, sizeof(buf), "%s", t ? (const char *)t : "(null)");
	sqlite3_finalize(q);
	return buf;
}

/* What the trace holds, counted by a writer of its own: events per table
 * by their route, counters, threads, processes, drops. */
struct counts {
	struct export_writer ops;
	uint64_t file[CSV_FILE_COUNT];
	uint64_t drops;
};

static int count_event(struct export_writer *w, const struct trace_event *e)
{
	struct counts *c = export_writer_container(w, struct counts);
	const struct trace_desc *d = trace_reader_desc(w->reader, e->desc);
	const struct trace_thread *t = trace_reader_thread(w->reader, e->thread);
	c->file[csv_export_route(d->type, e->flags, t->kind == TRACE_TRACK_STREAM)]++;
	return 0;
}

static int count_counter(struct export_writer *w, const struct trace_counter *ctr)
{
	(void)ctr;
	export_writer_container(w, struct counts)->file[CSV_FILE_COUNTERS]++;
	return 0;
}

static int count_drops(struct export_writer *w, uint32_t thread, uint64_t n)
{
	(void)thread;
	export_writer_container(w, struct counts)->drops += n;
	return 0;
}

static void count_trace(const char *path, struct counts *c)
{
	char err[512];
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	c->ops = (struct export_writer){.name = "count", .event = count_event,
					.counter = count_counter, .drops = count_drops};
	assert_int_equal(export_writer_run(&c->ops, r), 0);
	c->file[CSV_FILE_THREADS] += trace_reader_thread_count(r);
	c->file[CSV_FILE_PROCESSES] += trace_reader_process_count(r);
	c->file[CSV_FILE_DEVICES] += trace_reader_device_count(r);
	c->file[CSV_FILE_TRACE]++;
	trace_reader_close(r);
}

/* ---- a two-rank job on two hosts ------------------------------------------ */

#define STEPS 5

static void test_job(void **state)
{
	(void)state;
	struct tb_job job = {.ranks = 2, .steps = STEPS, .slow_rank = -1, .killed_rank = -1,
			     .stopped_rank = -1, .hosts = 2};
	char paths[2][512];
	assert_int_equal(tb_job_write("sq-job", &job, paths), 2);
	const char *files[2] = {paths[0], paths[1]};
	const char *out = export_files("job.sqlite", files, 2);
	struct counts c = {0};
	count_trace(paths[0], &c);
	count_trace(paths[1], &c);

	sqlite3 *db = db_open(out);
	/* every table: as many rows as the traces hold records */
	for (int f = 0; f < CSV_FILE_COUNT; f++) {
		if (f == CSV_FILE_STEPS)
			continue;
		const char *t = csv_export_table_name((enum csv_export_file)f, 1);
		int64_t n = q_int(db, "SELECT count(*) FROM \"%s\"", t);
		if ((uint64_t)n != c.file[f])
			fail_msg("%s: %lld rows, the traces hold %llu", t, (long long)n,
				 (unsigned long long)c.file[f]);
	}
	/* and by hand (tracebuild.h): per rank and step a ProfileStep, matmul
	 * and allreduce_, one gloo:all_reduce; two threads, one process */
	assert_int_equal(q_int(db, "SELECT count(*) FROM ranks"), 2);
	assert_int_equal(q_int(db, "SELECT count(*) FROM ranges"), 2 * STEPS);
	assert_int_equal(q_int(db, "SELECT count(*) FROM operators"), 2 * 2 * STEPS);
	assert_int_equal(q_int(db, "SELECT count(*) FROM communication"), 2 * STEPS);
	assert_int_equal(q_int(db, "SELECT count(*) FROM steps"), 2 * STEPS);
	assert_int_equal(q_int(db, "SELECT count(*) FROM threads"), 4);
	assert_int_equal(q_int(db, "SELECT count(*) FROM processes"), 2);
	assert_int_equal(q_int(db, "SELECT count(*) FROM kernels"), 0);
	/* the rank column */
	for (int r = 0; r < 2; r++) {
		assert_int_equal(q_int(db, "SELECT count(*) FROM operators WHERE rank = %d", r),
				 2 * STEPS);
		assert_int_equal(q_int(db, "SELECT count(*) FROM steps WHERE rank = %d", r), STEPS);
		assert_int_equal(q_int(db, "SELECT count(DISTINCT step) FROM steps WHERE rank = %d", r),
				 STEPS);
	}
	assert_int_equal(q_int(db, "SELECT count(*) FROM communication WHERE rank NOT IN (0, 1)"), 0);
	/* the job clock: rank 1's host reads 1000 s more, its wall offset 1000 s
	 * less, so that both ranks' steps start at the same wall time */
	char err[512];
	for (int r = 0; r < 2; r++) {
		struct trace_reader *rd = trace_reader_open(paths[r], err, sizeof(err));
		const struct trace_header *h = trace_reader_header(rd);
		assert_int_equal(q_int(db, "SELECT start_ns FROM ranks WHERE rank = %d", r),
				 (int64_t)h->start_ns + h->wall_offset_ns);
		assert_int_equal(q_int(db, "SELECT wall_offset_ns FROM ranks WHERE rank = %d", r),
				 h->wall_offset_ns);
		trace_reader_close(rd);
	}
	assert_int_not_equal(q_int(db, "SELECT wall_offset_ns FROM ranks WHERE rank = 0"),
			     q_int(db, "SELECT wall_offset_ns FROM ranks WHERE rank = 1"));
	assert_int_equal(q_int(db, "SELECT count(DISTINCT start_ns) FROM steps"), STEPS);
	assert_int_equal(q_int(db, "SELECT max(start_ns) - min(start_ns) FROM steps WHERE step = 3"), 0);
	assert_int_equal(q_int(db, "SELECT min(s.start_ns) - r.start_ns FROM steps s JOIN ranks r "
				   "USING (rank) WHERE s.rank = 1"),
			 0); /* step 0 starts with the trace, tracebuild.c */
	/* durations are not moved */
	assert_int_equal(q_int(db, "SELECT sum(dur_ns) FROM steps"), 2 * STEPS * 100 * TB_MS);
	assert_int_equal(q_int(db, "SELECT count(*) FROM steps WHERE end_ns - start_ns != dur_ns"), 0);
	/* the communication columns */
	assert_int_equal(q_int(db, "SELECT sum(bytes) FROM communication"), 2 * STEPS * 4 << 20);
	assert_string_equal(q_text(db, "SELECT DISTINCT backend || ':' || op || ':' || process_group "
					"FROM communication"),
			    "gloo:all_reduce:0");
	assert_int_equal(q_int(db, "SELECT max(coll_seq) FROM communication WHERE rank = 1"),
			 STEPS - 1);
	/* empty values are NULL: a host operator has no correlation, a trace
	 * with no damage no offset */
	assert_int_equal(q_int(db, "SELECT count(*) FROM operators WHERE correlation IS NULL"),
			 2 * 2 * STEPS);
	assert_int_equal(q_int(db, "SELECT count(*) FROM ranks WHERE damage_offset IS NULL "
				   "AND damage_reason IS NULL"),
			 2);
	assert_int_equal(q_int(db, "SELECT count(*) FROM threads WHERE kind = 'host' AND "
				   "device IS NULL AND stream IS NULL"),
			 4);
	/* the columns' types as sqlite stores them */
	assert_string_equal(q_text(db, "SELECT typeof(start_ns) || typeof(name) || typeof(rank) "
					"FROM operators LIMIT 1"),
			    "integertextinteger");
	/* the computed columns: every operator inside its step, at depth 0 */
	assert_int_equal(q_int(db, "SELECT count(*) FROM operators WHERE step IS NULL"), 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM operators o JOIN ranges p ON p.id = o.parent "
				   "WHERE p.type = 'ProfileStep'"),
			 2 * 2 * STEPS);
	assert_int_equal(q_int(db, "SELECT max(depth) FROM operators"), 1);
	/* the indices the recipes join the small tables by, and none on an
	 * event table (sqlite's planner would take it for a scan) */
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
				   "name IN ('communication_rank_group_seq', 'steps_rank_step', "
				   "'threads_rank_thread', 'counters_rank_ts')"),
			 4);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
				   "tbl_name IN ('operators_data', 'ranges_data', 'runtime', 'marks', "
				   "'kernels', 'memcpy', 'memset', 'memory')"),
			 0);
	sqlite3_close(db);

	/* the same counts through Python's sqlite3 and the sqlite3 CLI */
	char cmd[1400];
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); "
		 "print(*[d.execute(\"select count(*) from \" + t).fetchone()[0] for t in "
		 "(\"operators\", \"communication\", \"steps\", \"ranks\")])' '%s'",
		 out);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[256] = "";
	assert_non_null(fgets(line, sizeof(line), p));
	assert_int_equal(pclose(p), 0);
	char want[256];
	snprintf(want, sizeof(want), "%d %d %d %d\n", 4 * STEPS, 2 * STEPS, 2 * STEPS, 2);
	assert_string_equal(line, want);
	if (system("command -v sqlite3 >/dev/null 2>&1") == 0) {
		snprintf(cmd, sizeof(cmd),
			 "sqlite3 -readonly '%s' 'select count(*) from operators; "
			 "select count(*) from ranges where parent is null'",
			 out);
		p = popen(cmd, "r");
		assert_non_null(p);
		char a[64] = "", b[64] = "";
		assert_non_null(fgets(a, sizeof(a), p));
		assert_non_null(fgets(b, sizeof(b), p));
		assert_int_equal(pclose(p), 0);
		assert_int_equal(atoi(a), 4 * STEPS);
		assert_int_equal(atoi(b), 2 * STEPS);
	}
}

/* ---- parent, depth, step of a hand-built nest ----------------------------- */

/* Times in us from the trace's start; wall offset 5 s. Thread 0:
 *   ProfileStep s0 [0, 100)                      step 0
 *     Operator A [10, 50)                          A > B > C
 *       Operator B [20, 30)
 *         UserDefined C [22, 28)
 *       Operator B2 [30, 40)     (starts where B ends: a sibling)
 *     UserDefined U [60, 70)
 *   ProfileStep s1 [100, 200)                    step 1
 *     Operator D [100, 200)      (the same span as s1, written first: inside it)
 *   Operator E [250, 260)        outside every step
 * Thread 1: Operator F [15, 25): its own thread's top level, in step 0. */
static void test_nest(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		unsigned type, thread;
		uint64_t start, dur;
		const char *parent; /* NULL: top level */
		int64_t depth, step; /* step -1: none */
	} nest[] = { /* in end order, as a collector writes them */
		{"C", TRACE_EV_USER_DEFINED, 0, 22, 6, "B", 3, 0},
		{"B", TRACE_EV_OPERATOR, 0, 20, 10, "A", 2, 0},
		{"B2", TRACE_EV_OPERATOR, 0, 30, 10, "A", 2, 0},
		{"F", TRACE_EV_OPERATOR, 1, 15, 10, NULL, 0, 0},
		{"A", TRACE_EV_OPERATOR, 0, 10, 40, "ProfileStep#0", 1, 0},
		{"U", TRACE_EV_USER_DEFINED, 0, 60, 10, "ProfileStep#0", 1, 0},
		{"ProfileStep#0", TRACE_EV_PROFILE_STEP, 0, 0, 100, NULL, 0, 0},
		{"D", TRACE_EV_OPERATOR, 0, 100, 100, "ProfileStep#1", 1, 1},
		{"ProfileStep#1", TRACE_EV_PROFILE_STEP, 0, 100, 100, NULL, 0, 1},
		{"E", TRACE_EV_OPERATOR, 0, 250, 10, NULL, 0, -1},
	};
	const size_t n = sizeof(nest) / sizeof(nest[0]);
	const uint64_t us = TB_US, t0 = 1000 * us;
	struct tb b;
	tb_open_rank(&b, "sq-nest.gpdl", "h", 40, t0, 0, 1, 5000000000LL);
	tb_thread(&b, 0, 40, "main");
	tb_thread(&b, 1, 41, "side");
	for (size_t i = 0; i < n; i++)
		tb_range(&b, nest[i].thread, tb_desc(&b, nest[i].name, nest[i].type),
			 t0 + nest[i].start * us, nest[i].dur * us);
	const char *files[1] = {tb_close(&b, t0 + 300 * us)};
	sqlite3 *db = db_open(export_files("nest.sqlite", files, 1));
	static const char both[] = "(SELECT id, name, thread, start_ns, parent, depth, step FROM "
				   "ranges UNION ALL SELECT id, name, thread, start_ns, parent, "
				   "depth, step FROM operators)";
	for (size_t i = 0; i < n; i++) {
		const char *name = nest[i].name;
		assert_int_equal(q_int(db, "SELECT count(*) FROM %s WHERE name = '%s'", both, name), 1);
		assert_int_equal(q_int(db, "SELECT start_ns FROM %s WHERE name = '%s'", both, name),
				 (int64_t)(t0 + nest[i].start * us) + 5000000000LL);
		assert_int_equal(q_int(db, "SELECT thread FROM %s WHERE name = '%s'", both, name),
				 nest[i].thread);
		assert_int_equal(q_int(db, "SELECT depth FROM %s WHERE name = '%s'", both, name),
				 nest[i].depth);
		assert_int_equal(q_int(db, "SELECT coalesce(step, -1) FROM %s WHERE name = '%s'", both,
				       name),
				 nest[i].step);
		if (!nest[i].parent) {
			assert_int_equal(q_int(db, "SELECT parent IS NULL FROM %s WHERE name = '%s'",
					       both, name),
					 1);
			continue;
		}
		assert_int_equal(q_int(db, "SELECT x.parent = p.id FROM %s x, %s p WHERE "
					   "x.name = '%s' AND p.name = '%s'",
				       both, both, name, nest[i].parent),
				 1);
	}
	/* ids are unique across ranges and operators, parents among them */
	assert_int_equal(q_int(db, "SELECT count(DISTINCT id) FROM %s", both), (int64_t)n);
	assert_int_equal(q_int(db, "SELECT count(*) FROM steps"), 2);
	sqlite3_close(db);
}

/* ---- drops, damage, names ------------------------------------------------- */

static void test_drops_damage_names(void **state)
{
	(void)state;
	struct tb b;
	tb_open_rank(&b, "sq-damaged.gpdl", "h", 60, 1000, 3, 4, 7);
	tb_thread(&b, 0, 60, "a\"b,c\nd\xff");
	static const char name[] = "q\"u,o\nte\r\x01 \xe2\x82 \xc3\xa9";
	uint32_t d = tb_desc(&b, name, TRACE_EV_USER_DEFINED);
	tb_range(&b, 0, d, 2000, 100);
	tb_drops(&b, 0, 7);
	tb_flush(&b);
	for (int i = 0; i < 50; i++)
		tb_range(&b, 0, d, 3000 + 10 * (uint64_t)i, 5);
	const char *path = tb_close(&b, 10000);
	size_t len;
	free(tb_slurp(path, &len));
	assert_int_equal(truncate(path, (off_t)(len - 16)), 0);
	char err[512];
	uint64_t offset = 0;
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	const struct trace_visitor none = {0};
	assert_int_equal(trace_reader_run(r, &none, NULL), 0);
	char reason[256];
	snprintf(reason, sizeof(reason), "%s", trace_reader_damage(r, &offset));
	trace_reader_close(r);
	assert_true(offset > 0);

	const char *files[1] = {path};
	sqlite3 *db = db_open(export_files("damaged.sqlite", files, 1));
	assert_int_equal(q_int(db, "SELECT rank FROM ranks"), 3);
	assert_int_equal(q_int(db, "SELECT damage_offset FROM ranks"), (int64_t)offset);
	assert_string_equal(q_text(db, "SELECT damage_reason FROM ranks"), reason);
	assert_int_equal(q_int(db, "SELECT drops FROM ranks"), 7);
	assert_int_equal(q_int(db, "SELECT dropped FROM threads WHERE thread = 0"), 7);
	assert_int_equal(q_int(db, "SELECT world_size FROM ranks"), 4);
	assert_int_equal(q_int(db, "SELECT count(*) FROM ranges WHERE rank = 3"),
			 q_int(db, "SELECT events FROM ranks"));
	assert_true(q_int(db, "SELECT count(*) FROM ranges") >= 1);
	/* names byte for byte, ill-formed UTF-8 as U+FFFD, as in the CSV export */
	assert_string_equal(q_text(db, "SELECT DISTINCT name FROM ranges"),
			    "q\"u,o\nte\r\x01 " FFFD " \xc3\xa9");
	assert_string_equal(q_text(db, "SELECT name FROM threads"), "a\"b,c\nd" FFFD);
	sqlite3_close(db);
}

/* ---- the same rows as the CSV export's SQL variant ------------------------ */

struct csv_table {
	char ***rows; /* rows[r][c]: NULL for an unquoted empty field */
	size_t n, ncols, cur_n;
	char **cur;
};

static void on_field(void *f, size_t len, void *data)
{
	struct csv_table *t = data;
	t->cur = realloc(t->cur, (t->cur_n + 1) * sizeof(*t->cur));
	assert_non_null(t->cur);
	char *v = NULL;
	if (f) {
		v = malloc(len + 1);
		assert_non_null(v);
		memcpy(v, f, len);
		v[len] = '\0';
	}
	t->cur[t->cur_n++] = v;
}

static void on_row(int c, void *data)
{
	(void)c;
	struct csv_table *t = data;
	if (t->n == 0) { /* the header */
		t->ncols = t->cur_n;
	} else {
		assert_int_equal(t->cur_n, t->ncols);
	}
	t->rows = realloc(t->rows, (t->n + 1) * sizeof(*t->rows));
	assert_non_null(t->rows);
	t->rows[t->n++] = t->cur;
	t->cur = NULL;
	t->cur_n = 0;
}

static void csv_table_free(struct csv_table *t)
{
	for (size_t r = 0; r < t->n; r++) {
		for (size_t c = 0; c < t->ncols; c++)
			free(t->rows[r][c]);
		free(t->rows[r]);
	}
	free(t->rows);
}

/* Every value of every table of the sqlite file against the CSV export's
 * SQL variant of the same trace: NULL for an empty field, the same text,
 * the same integer, the same double (six decimals). */
static void assert_same_as_csv(const char *trace, sqlite3 *db, int32_t rank)
{
	char err[512];
	char *text[CSV_FILE_COUNT];
	size_t len[CSV_FILE_COUNT];
	FILE *outs[CSV_FILE_COUNT];
	struct trace_reader *r = trace_reader_open(trace, err, sizeof(err));
	assert_non_null(r);
	for (int f = 0; f < CSV_FILE_COUNT; f++)
		assert_non_null(outs[f] = open_memstream(&text[f], &len[f]));
	const struct csv_export_opts o = {.sql = 1,
					  .time_offset_ns = trace_reader_header(r)->wall_offset_ns,
					  .rank = rank};
	struct export_writer *w = csv_export_new_opts(outs, &o);
	assert_int_equal(export_writer_run(w, r), 0);
	export_writer_destroy(w);
	trace_reader_close(r);
	size_t values = 0;
	for (int f = 0; f < CSV_FILE_COUNT; f++) {
		assert_int_equal(fclose(outs[f]), 0);
		struct csv_parser p;
		struct csv_table t = {0};
		assert_int_equal(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_EMPTY_IS_NULL), 0);
		assert_int_equal(csv_parse(&p, text[f], len[f], on_field, on_row, &t), len[f]);
		assert_int_equal(csv_fini(&p, on_field, on_row, &t), 0);
		csv_free(&p);
		free(text[f]);
		const struct csv_column *cols;
		size_t n = csv_export_columns((enum csv_export_file)f, 1, &cols);
		const char *table = csv_export_table_name((enum csv_export_file)f, 1);
		assert_int_equal(t.ncols, n);
		char sql[256];
		snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\" WHERE rank = %d ORDER BY %s", table,
			 rank, f == CSV_FILE_RANGES || f == CSV_FILE_OPERATORS ? "id" : "rowid");
		sqlite3_stmt *q;
		assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
		int skip = f == CSV_FILE_RANGES || f == CSV_FILE_OPERATORS ? 2 : 1; /* rank, id */
		size_t row = 1;
		for (; sqlite3_step(q) == SQLITE_ROW; row++) {
			assert_true(row < t.n);
			for (size_t c = 0; c < n; c++, values++) {
				const char *want = t.rows[row][c];
				int col = (int)c + skip;
				assert_string_equal(sqlite3_column_name(q, col), cols[c].name);
				if (!want) {
					if (sqlite3_column_type(q, col) != SQLITE_NULL)
						fail_msg("%s.%s row %zu: %s, want NULL", table,
							 cols[c].name, row,
							 (const char *)sqlite3_column_text(q, col));
					continue;
				}
				if (cols[c].type == CSV_COL_REAL) {
					assert_int_equal(sqlite3_column_type(q, col), SQLITE_FLOAT);
					double a = sqlite3_column_double(q, col), b = strtod(want, NULL);
					if (fabs(a - b) > 1e-9 * (fabs(b) > 1 ? fabs(b) : 1))
						fail_msg("%s.%s row %zu: %.17g, want %s", table,
							 cols[c].name, row, a, want);
					continue;
				}
				assert_int_equal(sqlite3_column_type(q, col),
						 cols[c].type == CSV_COL_INT ? SQLITE_INTEGER : SQLITE_TEXT);
				const char *got = (const char *)sqlite3_column_text(q, col);
				if (strcmp(got, want) != 0)
					fail_msg("%s.%s row %zu: '%s', want '%s'", table, cols[c].name,
						 row, got, want);
			}
		}
		sqlite3_finalize(q);
		assert_int_equal(row, t.n); /* as many rows */
		csv_table_free(&t);
	}
	print_message("%zu values compared\n", values);
	assert_true(values > 300);
}

/* The golden GPU trace (kernels, copies, sets, memory, counters, devices)
 * and a rank of a job: the same values through both sinks. */
static void test_same_as_csv(void **state)
{
	(void)state;
	const char *gpu = tb_gpu_trace();
	struct tb_job job = {.ranks = 2, .steps = 3, .gpu = 1, .slow_rank = -1, .killed_rank = -1,
			     .stopped_rank = -1};
	char paths[2][512];
	assert_int_equal(tb_job_write("sq-same", &job, paths), 2);
	const char *files[3] = {gpu, paths[0], paths[1]};
	sqlite3 *db = db_open(export_files("same.sqlite", files, 3));
	assert_true(q_int(db, "SELECT count(*) FROM kernels") > 0);
	assert_true(q_int(db, "SELECT count(*) FROM memcpy") > 0);
	assert_true(q_int(db, "SELECT count(*) FROM devices") > 0);
	assert_same_as_csv(gpu, db, -1);
	assert_same_as_csv(paths[1], db, 1);
	sqlite3_close(db);
}

/* ---- errors and an unfinished file ---------------------------------------- */

static void test_unfinished(void **state)
{
	(void)state;
	char out[600], err[512];
	struct stat st;
	snprintf(out, sizeof(out), "%s/unfinished.sqlite", tb_dir());
	unlink(out);
	struct sqlite_export *s = sqlite_export_open(out, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(stat(out, &st), 0);
	sqlite_export_close(s); /* never finished: removed */
	assert_int_not_equal(stat(out, &st), 0);

	/* an existing file is not overwritten, and the message names it */
	FILE *f = fopen(out, "w");
	assert_non_null(f);
	fputs("mine", f);
	fclose(f);
	assert_null(sqlite_export_open(out, err, sizeof(err)));
	assert_non_null(strstr(err, out));
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_size, 4);
	unlink(out);

	/* a directory that does not exist */
	snprintf(out, sizeof(out), "%s/no/such/dir.sqlite", tb_dir());
	assert_null(sqlite_export_open(out, err, sizeof(err)));
	assert_non_null(strstr(err, out));
	assert_null(strchr(err, '\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job),
		cmocka_unit_test(test_nest),
		cmocka_unit_test(test_drops_damage_names),
		cmocka_unit_test(test_same_as_csv),
		cmocka_unit_test(test_unfinished),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	tb_cleanup();
	return failed;
}
