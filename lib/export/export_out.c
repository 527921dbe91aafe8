/*
 * export_out.c - what the exports share (export_int.h): the output file,
 * the progress bar, what was written; and which export a command line is
 * (export_open_job(), export_find_steps()).
 */
#include "lib/export/export_int.h"

#include "common/error.h"
#include "common/output.h"
#include "common/progress.h"
#include "common/textsafe.h"
#include "formats/async_out.h"
#include "formats/import/import.h"
#include "formats/trace/trace_open.h"

#include <errno.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* FILE.gpdl -> FILE<suffix>; anything else gets suffix appended. */
char *export_default_output(const char *input, const char *suffix)
{
	size_t n = strlen(input);
	char *out = xmalloc(n + strlen(suffix) + 1);
	memcpy(out, input, n + 1);
	if (n > 5 && strcmp(input + n - 5, ".gpdl") == 0)
		out[n - 5] = '\0';
	strcat(out, suffix);
	return out;
}

/* Opens the output's temporary file (cmd/output.h: renamed to path when
 * whole, so an export that fails or is killed leaves the old file or none;
 * a pipe, a terminal or /dev/null is written in place, --force or not);
 * NULL after an error message. */
FILE *export_open_output(struct outfile *of, const char *path, const struct export_opts *o)
{
	if (output_open(of, path, o->force, (const char *const *)o->inputs, o->ninputs) != 0)
		return NULL;
	/* a file: written on a thread while the next block is formatted */
	of->f = of->tmp ? async_out_fdopen(of->fd, EXPORT_BUFFER) : fdopen(of->fd, "w");
	if (!of->f) {
		output_fail(of, errno);
		return NULL;
	}
	return of->f;
}

/* Flushes and closes the output, renamed into place; -1 after an error
 * message when any write failed, the one that stopped the export (failed)
 * included (the temporary file is removed then). */
int export_close_output(FILE *f, struct outfile *of, int to_stdout, int failed)
{
	int e = 0;
	if (!to_stdout) {
		if (failed)
			return output_fail(of, errno);
		return output_commit(of);
	}
	errno = 0;
	if (fflush(f) != 0 || ferror(f) || failed)
		e = errno ? errno : EIO;
	if (!e)
		return 0;
	error("cannot write '%s': %s", "standard output", strerror(e));
	/* said once here; main's own check of stdout must not say it again */
	__fpurge(f);
	clearerr(f);
	return -1;
}

void export_warn_damage(struct trace_reader *r, const char *input, uint64_t events)
{
	uint64_t offset = 0;
	const char *damage = trace_reader_damage(r, &offset);
	if (damage)
		warning("'%s': %s at offset %llu; exported the %llu events before it", input,
			damage, (unsigned long long)offset, (unsigned long long)events);
}

/* ---- part of a trace, a progress bar, what was written ---------------------- */

/* The bar on standard error while an export runs: common/progress.c's,
 * on when standard error is a terminal (and JSON is not going to the same
 * one: it would tear the bar apart), filled by the reader's offset in the
 * file. */
static uint64_t bar_size;

void export_bar_start(const char *what, const char *input, struct trace_reader *r, int to_stdout)
{
	char clean[256], line[320];
	bar_size = trace_reader_file_size(r);
	snprintf(line, sizeof(line), "%s '%s'", what, text_clean(clean, sizeof(clean), input));
	progress_bar_begin(isatty(STDERR_FILENO) && !(to_stdout && isatty(STDOUT_FILENO)), line);
}

static void bar_show(void *ctx, uint64_t offset)
{
	(void)ctx;
	progress_bar(bar_size ? (unsigned)(offset >= bar_size ? 100 : offset * 100 / bar_size) : 0);
}

void export_bar_done(void)
{
	progress_bar_end();
}

void export_writer_setup(struct export_writer *w, const struct export_opts *o)
{
	w->from_ns = o->from_ns;
	w->to_ns = o->to_ns;
	w->progress = progress_bar_on() ? bar_show : NULL;
}

/* "12.3 MB": decimal units, as ls -h --si and the browsers say. */
static void size_text(char *buf, size_t size, uint64_t bytes)
{
	if (bytes < 1000)
		snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
	else if (bytes < 1000000)
		snprintf(buf, size, "%.1f kB", (double)bytes / 1e3);
	else if (bytes < 1000000000)
		snprintf(buf, size, "%.1f MB", (double)bytes / 1e6);
	else
		snprintf(buf, size, "%.2f GB", (double)bytes / 1e9);
}

/* "gprof-dl: wrote 't.json' (12.3 MB, 4512 events)" on standard error: an
 * export says where its output went, as a default name leaves it unsaid. */
void export_said_wrote(const char *path, const struct csv_files *fs, uint64_t events)
{
	char clean[TEXT_CLEAN_SIZE], sz[32];
	struct stat st;
	uint64_t bytes = 0;
	unsigned files = fs ? fs->n : 0;
	if (fs) { /* a directory: the sizes of the files written into it */
		bytes = csv_files_bytes(fs);
	} else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		bytes = (uint64_t)st.st_size;
	} else {
		fprintf(stderr, "gprof-dl: wrote '%s' (%llu events)\n",
			text_clean(clean, sizeof(clean), path), (unsigned long long)events);
		return;
	}
	size_text(sz, sizeof(sz), bytes);
	if (files)
		fprintf(stderr, "gprof-dl: wrote %u files to '%s' (%s, %llu events)\n", files,
			text_clean(clean, sizeof(clean), path), sz, (unsigned long long)events);
	else
		fprintf(stderr, "gprof-dl: wrote '%s' (%s, %llu events)\n",
			text_clean(clean, sizeof(clean), path), sz, (unsigned long long)events);
}

/* --steps A-B: the steps' window on the trace's clock, found by a read of
 * the whole trace (steps are recorded when they end, so the file's order is
 * not theirs). A step is what the tables take for one (trace_name_is_step);
 * its N is its name's, or its place in the file when its name has none, as
 * the chrome export numbers it. */
struct step_scan {
	struct export_writer ops; /* first: export_writer_container() */
	int64_t first, last;      /* wanted; last -1: to the last one */
	uint64_t from, to;        /* the window found; to 0: no step in it */
	int64_t lo, hi;           /* the numbers seen; lo -1: none */
	int64_t unnumbered;
};

static int scan_event(struct export_writer *w, const struct trace_event *e)
{
	struct step_scan *s = export_writer_container(w, struct step_scan);
	const struct trace_desc *d = trace_reader_desc(w->reader, e->desc);
	if (!d || (d->type != TRACE_EV_PROFILE_STEP && d->type != TRACE_EV_USER_DEFINED))
		return 0;
	const char *name = trace_reader_string(w->reader, d->name_str);
	size_t len = strlen(name);
	if (!trace_name_is_step(name, len))
		return 0;
	const char *hash = memchr(name, '#', len);
	int64_t n = hash ? strtoll(hash + 1, NULL, 10) : s->unnumbered++;
	if (s->lo < 0 || n < s->lo)
		s->lo = n;
	if (n > s->hi)
		s->hi = n;
	if (n < s->first || (s->last >= 0 && n > s->last))
		return 0;
	if (!s->to || e->start_ns < s->from)
		s->from = e->start_ns;
	if (e->start_ns + e->dur_ns > s->to)
		s->to = e->start_ns + e->dur_ns;
	return 0;
}

/* 0 with part set, or 1 after a message. */
int export_find_steps(struct export_opts *o)
{
	char err[1024], clean[TEXT_CLEAN_SIZE];
	struct trace_reader *r = trace_open_any(o->inputs[0], err, sizeof(err));
	if (!r) {
		error("%s", err);
		return 1;
	}
	struct step_scan s = {.first = o->step_first, .last = o->step_last, .lo = -1, .hi = -1};
	s.ops.name = "steps";
	s.ops.event = scan_event;
	export_bar_start("finding the steps of", o->inputs[0], r, 0);
	s.ops.progress = progress_bar_on() ? bar_show : NULL;
	export_writer_run(&s.ops, r);
	export_bar_done();
	trace_reader_close(r);
	text_clean(clean, sizeof(clean), o->inputs[0]);
	if (s.lo < 0)
		return error("'%s' has no steps (ProfileStep#N ranges) for --steps", clean), 1;
	if (!s.to)
		return error("'%s' has no step in %s (its steps are %lld to %lld)", clean, o->steps_arg,
			     (long long)s.lo, (long long)s.hi),
		       1;
	o->from_ns = s.from;
	o->to_ns = s.to > s.from ? s.to : s.from + 1;
	return 0;
}

/* A job when several files are given, or, for --chrome, one gprof-dl
 * trace whose processes are several ranks; one trace otherwise, which
 * exports as it always has (--csv of a file of several ranks: one
 * directory, processes.csv's rank column telling them apart). */
int export_open_job(const struct export_opts *o, struct job *j)
{
	char err[1024];
	enum import_content content;
	/* "-" or a FIFO: its copy, which every later open reads (trace_open.h) */
	const char *from = o->ninputs == 1 ? trace_open_path(o->inputs[0], err, sizeof(err)) : NULL;
	if (o->ninputs == 1 &&
	    (o->csv || !from || import_sniff(from, &content) != 0 || content != IMPORT_CONTENT_GPDL))
		return 0;
	if (job_open(j, o->ninputs, o->inputs, o->mixed_jobs ? JOB_OPEN_MIXED : 0, err,
		     sizeof(err)) != 0) {
		if (o->ninputs == 1)
			return 0; /* the trace reader says what is wrong, as before */
		error("%s", err);
		return -1;
	}
	if (o->ninputs == 1 && j->nparts < 2) {
		job_free(j);
		return 0;
	}
	return 1;
}
