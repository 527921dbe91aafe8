/*
 * export_chrome.c - export --chrome: a trace as chrome-trace JSON, or a
 * job's traces into one file, a process per part on the job's clock, and
 * flows joining each collective call across the ranks (dist/flows.h).
 */
#include "lib/export/export_int.h"

#include "common/error.h"
#include "formats/chrome/chrome_writer.h"
#include "formats/trace/trace_open.h"
#include "lib/analysis/dist/flows.h"
#include "lib/analysis/store/store.h"

#include <stdlib.h>
#include <string.h>

/* The output stream of --chrome: a file or standard output, buffered big. */
struct chrome_out {
	char *defname;
	const char *path;
	int to_stdout;
	struct outfile of;
	FILE *f;
};

static int chrome_out_open(struct chrome_out *c, const struct export_opts *o)
{
	static char buffer[EXPORT_BUFFER];
	memset(c, 0, sizeof(*c));
	c->of.fd = c->of.slot = -1;
	c->defname = o->output ? NULL : export_default_output(o->inputs[0], ".json");
	c->path = o->output ? o->output : c->defname;
	c->to_stdout = strcmp(c->path, "-") == 0;
	c->f = c->to_stdout ? stdout : export_open_output(&c->of, c->path, o);
	if (!c->f) {
		free(c->defname);
		return -1;
	}
	setvbuf(c->f, buffer, _IOFBF, sizeof(buffer));
	return 0;
}

static int chrome_out_close(struct chrome_out *c, int failed)
{
	int rc = export_close_output(c->f, &c->of, c->to_stdout, failed);
	free(c->defname);
	return rc;
}

/* After an unreadable input: no output at all (the old one, if any, left be). */
static void chrome_out_drop(struct chrome_out *c)
{
	if (!c->to_stdout)
		outfile_abort(&c->of);
	free(c->defname);
}

int export_chrome(const struct export_opts *o, struct trace_reader *r)
{
	struct chrome_out out;
	if (chrome_out_open(&out, o) != 0)
		return 1;
	struct export_writer *w = chrome_writer_new(out.f);
	export_bar_start("exporting", o->inputs[0], r, out.to_stdout);
	export_writer_setup(w, o);
	/* Only a failed write stops an export early: the reader reports damage
	 * through trace_reader_damage(), not through the run's result. */
	int failed = export_writer_run(w, r) != 0;
	uint64_t events = w->events;
	export_writer_destroy(w);
	char *path = out.to_stdout ? NULL : xstrdup(out.path);
	int status = chrome_out_close(&out, failed) ? 1 : 0;
	export_bar_done();
	if (status == 0)
		export_warn_damage(r, o->inputs[0], events);
	if (status == 0 && path)
		export_said_wrote(path, NULL, events);
	free(path);
	return status;
}

/* ---- a job ------------------------------------------------------------------ */

/* ---- --chrome of a job -------------------------------------------------------- */

/* One part through the writer: 0, 1 when its file cannot be read, -1 when
 * a write failed. */
static int chrome_part(struct export_writer *w, const struct job *j, uint32_t p)
{
	const struct job_rank *r = &j->ranks[p];
	const char *path = j->files[r->file].path;
	char err[1024], name[256];
	struct trace_reader *rd = trace_open_any(path, err, sizeof(err));
	if (!rd) {
		error("%s", err);
		return 1;
	}
	job_part_title(name, sizeof(name), j, p);
	struct chrome_part part = {
		.name = name,
		.pid = r->pid,
		.out_pid = job_part_out_pid(j, p),
		.sort_index = p,
		.rank = r->rank,
		.file = path,
		.shift_ns = job_file_shift(j, r->file),
	};
	struct export_filter f;
	chrome_job_part(w, &part);
	int rc = export_writer_run_part(w, rd, job_part_filter(j, p, &f)) != 0 ? -1 : 0;
	if (rc == 0)
		export_warn_damage(rd, path, w->events);
	trace_reader_close(rd);
	return rc;
}

static int flow_out(void *ctx, const struct chrome_flow_end *f)
{
	return chrome_job_flow(ctx, f);
}

int export_chrome_job(const struct export_opts *o, const struct job *j)
{
	struct chrome_out out;
	if (chrome_out_open(&out, o) != 0)
		return 1;
	char clock[256];
	struct job_calls cs;
	job_calls_init(&cs, j);
	struct chrome_job_opts jo = {
		.clock = clock, .comm = job_calls_add, .gpu = job_calls_gpu, .ctx = &cs};
	job_clock_base(j, &jo.base_ns, &jo.wall_offset_ns);
	store_clock_words(clock, sizeof(clock), j->wall_clock, j->nhosts, j->clock,
			  j->nfiles ? j->files[0].host : "");
	struct export_writer *w = chrome_job_writer_new(out.f, &jo);
	int rc = 0;
	uint64_t events = 0;
	for (uint32_t p = 0; p < j->nparts && rc == 0; p++) {
		rc = chrome_part(w, j, p);
		events += w->events;
	}
	uint64_t matched = 0;
	if (rc == 0)
		rc = job_calls_flows(&cs, flow_out, w, &matched) != 0 ? -1 : 0;
	if (rc == 0)
		rc = chrome_job_finish(w) != 0 ? -1 : 0;
	export_writer_destroy(w);
	job_calls_free(&cs);
	if (rc > 0) { /* an unreadable part: no half a job on disk */
		chrome_out_drop(&out);
		return 1;
	}
	char *path = out.to_stdout ? NULL : xstrdup(out.path);
	int status = chrome_out_close(&out, rc != 0) ? 1 : 0;
	if (status == 0 && path)
		export_said_wrote(path, NULL, events);
	free(path);
	return status;
}
