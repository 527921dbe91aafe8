/*
 * summary.h - `gprof-dl summary` minus its command line: the Trace Summary
 * and the chosen views of a prepared analysis, as text, CSV or JSON.
 */
#ifndef GPDL_ANALYSIS_SUMMARY_H
#define GPDL_ANALYSIS_SUMMARY_H

#include "formats/csv/csv_out.h"
#include "formats/json/json_writer.h"
#include "lib/analysis/views/view.h"

#include <stdio.h>

enum summary_format {
	SUMMARY_TEXT,
	SUMMARY_CSV,
	SUMMARY_JSON,
};

#define SUMMARY_MAX_VIEWS 32

/* Text: the heaviest rows of a table when --top is not given. */
#define SUMMARY_TOP_TEXT 30

struct summary_opts {
	struct view_opts view;
	enum summary_format format;
	/* Text: 1 to lay the tables out within width columns (0: the width of
	 * out, table_text_width()), GPU columns hidden when there is no GPU
	 * work; 0 (--wide): every column at full width, names uncut. */
	int fit;
	unsigned width;
	int top;  /* top-level rows kept per table part; 0 all; < 0: 30 in text, all else */
	const struct view *views[SUMMARY_MAX_VIEWS]; /* in registry order; none: the defaults */
	unsigned nviews;
	/* JSON: the document on one line, no indentation (a report embeds it) */
	int compact;
	unsigned job_flags; /* job_open()'s: JOB_OPEN_MIXED (--mixed-jobs) */
};

struct job;

/* "text", "csv", "json": 0 with *f set, -1 otherwise. */
int summary_format_parse(const char *s, enum summary_format *f);
/* Adds a view once, keeping the registry's order. */
void summary_add_view(struct summary_opts *o, const struct view *v);
/* Returns 0, or -1 when writing to out failed. */
int summary_write(const struct analysis *a, const struct summary_opts *o, FILE *out);
/* The Trace Summary's table (tables[0]) and the n views' (tables[1..n]) of
 * a prepared analysis, built side by side on parallel.h's threads; each
 * table is the caller's to free. */
void summary_build(const struct analysis *a, const struct view_opts *o,
		   const struct view **views, unsigned n, struct table **tables);
/* Whether the summary of a job is written rank by rank (summary_write_job):
 * the job has two ranks or more and the Distributed, Perf or Advice view is
 * asked for (or no view, so every default one). Otherwise its files are one program. */
int summary_is_job(const struct job *j, const struct summary_opts *o);
/* The summary of a job: the Distributed view over its ranks, read one rank
 * at a time (its Trace Summary from what each rank read); the other views
 * asked for from the whole job loaded as one program afterwards. Damaged
 * files are warned about (" ...; DONE up to there"). 0; 1 after an error
 * message (a file that cannot be read); -1 when writing to out failed. */
int summary_write_job(struct job *j, const struct summary_opts *o, FILE *out, const char *done);

/* `gprof-dl summary` minus its command line: the summary of the trace files
 * paths[0..n) (a job's ranks read rank by rank as summary does), with o, only
 * --schedule cycle `cycle` when >= 0, written to out (NULL: standard
 * output; a file is the caller's, cmd/output.h). done: the word for the
 * damaged-file warning ("summarised"). Returns 0; 1 after an error message
 * naming the file; -1 when writing to out failed (no message). */
int summary_files(int n, char *const *paths, const struct summary_opts *o, long cycle,
		  FILE *out, const char *done);

/* A document of tables in one format, for summary and diff: text tables one
 * after another, CSV blocks, or a JSON object whose "tables" member holds
 * them by key. A caller adds its own JSON members between begin and
 * summary_out_tables(). */
struct summary_out {
	enum summary_format format;
	FILE *f;
	struct table_style st;
	size_t top; /* rows summary keeps per part (table_keep_top); 0 all */
	struct csv_out csv;
	struct json_writer json;
};

/* CSV: starts the writer; JSON: opens the top object. */
void summary_out_begin(struct summary_out *s, enum summary_format format, FILE *out,
		       enum time_unit unit);
/* summary_out_begin() with o's format, time unit and compact JSON. */
void summary_out_begin_opts(struct summary_out *s, const struct summary_opts *o, FILE *out);
/* Text laid out as o asks (--wide, the width of out) with the GPU columns
 * left out when has_gpu is 0 (said once, "no GPU work recorded: GPU columns
 * hidden"), and every format cut to o's --top. */
void summary_out_fit(struct summary_out *s, const struct summary_opts *o, int has_gpu);
/* Cuts t to the rows s keeps (table_keep_top()): every row of a
 * TABLE_KEEP_DATA table in CSV and JSON. */
void summary_out_keep_top(const struct summary_out *s, struct table *t);
/* JSON: opens the "tables" member; nothing otherwise. */
void summary_out_tables(struct summary_out *s);
/* Writes t; in JSON under key, or not at all when key is NULL. */
void summary_out_table(struct summary_out *s, const char *key, const struct table *t);
/* Closes the document and flushes: 0, or -1 when a write failed. */
int summary_out_end(struct summary_out *s);

#endif
