/* split.c - one recorded trace made into several: a file per rank, or per cycle (split.h). */
#include "lib/recorder/split.h"

#include "common/error.h"
#include "common/outfile.h"
#include "common/textsafe.h"
#include "formats/trace/capture.h"
#include "lib/recorder/outname.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One output: its writer and what src's ids are in it (0: not yet). */
struct sout {
	struct trace_writer *w;
	uint32_t *strs, *descs;
	size_t nstrs, ndescs;
	uint32_t nthreads;
};

/* A thread of src: its output and its index there. */
struct sthread {
	uint32_t out, index;
	int mapped;
};

struct split {
	struct trace_reader *r;
	struct sout *outs;
	uint32_t nouts;
	const struct split_proc *procs;
	uint32_t nprocs;
	struct sthread *threads;
	size_t nthreads;
	int failed;
	/* split_by_time(): output i takes [spans[2i], spans[2i+1]); NULL: by process */
	const uint64_t *spans;
};

/* The output whose span holds ts, or -1 (split_by_time). */
static int64_t out_at(const struct split *s, uint64_t ts)
{
	for (uint32_t i = 0; i < s->nouts; i++)
		if (ts >= s->spans[2 * i] && ts < s->spans[2 * i + 1])
			return i;
	return -1;
}

static void grow(uint32_t **a, size_t *n, size_t want)
{
	if (want <= *n)
		return;
	size_t cap = *n ? *n : 64;
	while (cap < want)
		cap *= 2;
	*a = xrealloc(*a, cap * sizeof(**a));
	memset(*a + *n, 0, (cap - *n) * sizeof(**a));
	*n = cap;
}

static uint32_t map_str(struct split *s, uint32_t out, uint32_t id)
{
	struct sout *o = &s->outs[out];
	if (!id)
		return 0;
	grow(&o->strs, &o->nstrs, (size_t)id + 1);
	if (!o->strs[id]) {
		const char *text = trace_reader_string(s->r, id);
		o->strs[id] = trace_writer_string(o->w, text, strlen(text));
		if (!o->strs[id])
			s->failed = 1;
	}
	return o->strs[id];
}

static uint32_t map_desc(struct split *s, uint32_t out, uint32_t id)
{
	struct sout *o = &s->outs[out];
	grow(&o->descs, &o->ndescs, (size_t)id + 1);
	if (!o->descs[id]) {
		const struct trace_desc *d = trace_reader_desc(s->r, id);
		o->descs[id] = trace_writer_desc(o->w, map_str(s, out, d->name_str), map_str(s, out, d->domain_str),
						 d->category, d->type);
		if (!o->descs[id])
			s->failed = 1;
	}
	return o->descs[id];
}

/* The output of the image of pid that had started at ts (the earliest
 * image when none had); outs[0] for a pid not listed. */
static uint32_t out_of(const struct split *s, uint32_t pid, uint64_t ts)
{
	const struct split_proc *best = NULL, *first = NULL;
	for (uint32_t i = 0; i < s->nprocs; i++) {
		const struct split_proc *p = &s->procs[i];
		if (p->pid != pid)
			continue;
		if (!first || p->start_ns < first->start_ns)
			first = p;
		if (p->start_ns <= ts && (!best || p->start_ns >= best->start_ns))
			best = p;
	}
	if (!best)
		best = first;
	return best ? best->out : 0;
}

static void check(struct split *s, int rc)
{
	if (rc != 0)
		s->failed = 1;
}

static int split_thread(void *ctx, const struct trace_thread *t)
{
	struct split *s = ctx;
	if (t->index >= s->nthreads) {
		size_t cap = s->nthreads ? s->nthreads : 64;
		while (cap <= t->index)
			cap *= 2;
		s->threads = xrealloc(s->threads, cap * sizeof(*s->threads));
		memset(s->threads + s->nthreads, 0, (cap - s->nthreads) * sizeof(*s->threads));
		s->nthreads = cap;
	}
	struct sthread *st = &s->threads[t->index];
	if (s->spans) { /* every thread in every output, at its own index */
		for (uint32_t i = 0; i < s->nouts; i++) {
			struct trace_thread c = *t;
			c.name_str = map_str(s, i, t->name_str);
			check(s, trace_writer_thread(s->outs[i].w, &c));
		}
		st->index = t->index;
		st->mapped = 1;
		return 0;
	}
	if (!st->mapped) {
		st->out = out_of(s, t->pid, t->start_ns);
		st->index = s->outs[st->out].nthreads++;
		st->mapped = 1;
	}
	struct trace_thread c = *t;
	c.index = st->index;
	c.name_str = map_str(s, st->out, t->name_str);
	check(s, trace_writer_thread(s->outs[st->out].w, &c));
	return 0;
}

/* The collector's "window: SPEC" mark (lib/collector/window.c): what every
 * piece of a split by time was recorded with. */
static int window_spec(const struct split *s, const struct trace_event *e)
{
	const struct trace_desc *d = trace_reader_desc(s->r, e->desc);
	return d && (e->flags & TRACE_EVF_MARK) && !strncmp(trace_reader_string(s->r, d->name_str), "window: ", 8) &&
	       !strcmp(trace_reader_string(s->r, d->domain_str), "gprof-dl");
}

static int to_every_output(struct split *s, const struct trace_event *e)
{
	for (uint32_t i = 0; i < s->nouts; i++) {
		struct trace_event c = *e;
		c.desc = map_desc(s, i, e->desc);
		check(s, trace_writer_event(s->outs[i].w, &c));
	}
	return 0;
}

static int split_event(void *ctx, const struct trace_event *e)
{
	struct split *s = ctx;
	const struct sthread *st = &s->threads[e->thread];
	struct trace_event c = *e;
	struct trace_event_ext x;
	uint32_t out = st->out;
	if (s->spans) { /* by its middle: a step's range begins a little before its window */
		int64_t k = out_at(s, e->start_ns + e->dur_ns / 2);
		if (k < 0 && window_spec(s, e))
			return to_every_output(s, e);
		if (k < 0)
			return 0;
		out = (uint32_t)k;
	}
	c.thread = st->index;
	c.desc = map_desc(s, out, e->desc);
	if (e->ext) {
		x = *e->ext;
		x.shapes_str = map_str(s, out, x.shapes_str);
		x.pg_str = map_str(s, out, x.pg_str);
		x.dtype_str = map_str(s, out, x.dtype_str);
		c.ext = &x;
	}
	check(s, trace_writer_event(s->outs[out].w, &c));
	return 0;
}

static int split_counter(void *ctx, const struct trace_counter *c)
{
	struct split *s = ctx;
	if (s->spans) {
		int64_t k = out_at(s, c->ts_ns);
		if (k >= 0)
			check(s, trace_writer_counter(s->outs[k].w, c));
		return 0;
	}
	if (c->pid)
		check(s, trace_writer_counter(s->outs[out_of(s, c->pid, c->ts_ns)].w, c));
	else
		for (uint32_t i = 0; i < s->nouts; i++)
			check(s, trace_writer_counter(s->outs[i].w, c));
	return 0;
}

static int split_drops(void *ctx, uint32_t thread, uint64_t dropped)
{
	struct split *s = ctx;
	const struct sthread *st = &s->threads[thread];
	check(s, trace_writer_drops(s->outs[st->out].w, st->index, dropped));
	return 0;
}

static int split_device(void *ctx, const struct trace_device *d)
{
	struct split *s = ctx;
	for (uint32_t i = 0; i < s->nouts; i++) {
		struct trace_device c = *d;
		c.name_str = map_str(s, i, d->name_str);
		check(s, trace_writer_device(s->outs[i].w, &c));
	}
	return 0;
}

static int split_process(void *ctx, const struct trace_process *p)
{
	struct split *s = ctx;
	if (s->spans) {
		for (uint32_t i = 0; i < s->nouts; i++) {
			struct trace_process c = *p;
			c.cmdline_str = map_str(s, i, p->cmdline_str);
			c.backend_str = map_str(s, i, p->backend_str);
			c.job_str = map_str(s, i, p->job_str);
			check(s, trace_writer_process(s->outs[i].w, &c));
		}
		return 0;
	}
	uint32_t out = 0;
	int exact = 0;
	for (uint32_t i = 0; i < s->nprocs && !exact; i++)
		if (s->procs[i].pid == p->pid && s->procs[i].start_ns == p->start_ns)
			out = s->procs[i].out, exact = 1;
	if (!exact)
		out = out_of(s, p->pid, p->start_ns);
	struct trace_process c = *p;
	c.cmdline_str = map_str(s, out, p->cmdline_str);
	c.backend_str = map_str(s, out, p->backend_str);
	c.job_str = map_str(s, out, p->job_str);
	check(s, trace_writer_process(s->outs[out].w, &c));
	return 0;
}

static void split_free(struct split *s)
{
	for (uint32_t i = 0; i < s->nouts; i++) {
		free(s->outs[i].strs);
		free(s->outs[i].descs);
	}
	free(s->outs);
	free(s->threads);
}

static int split_run(struct split *sp, const char *src, const struct split_out *outs, uint32_t nouts,
		     const struct trace_category *cats, uint32_t ncats, char *err, size_t errlen);

int split_trace(const char *src, const struct split_out *outs, uint32_t nouts,
		const struct split_proc *procs, uint32_t nprocs, const struct trace_category *cats,
		uint32_t ncats, char *err, size_t errlen)
{
	struct split s = {0};
	s.procs = procs;
	s.nprocs = nprocs;
	return split_run(&s, src, outs, nouts, cats, ncats, err, errlen);
}

int split_by_time(const char *src, const struct split_out *outs, uint32_t nouts, const uint64_t *spans,
		  char *err, size_t errlen)
{
	struct split s = {0};
	s.spans = spans;
	return split_run(&s, src, outs, nouts, NULL, 0, err, errlen);
}

static int split_run(struct split *sp, const char *src, const struct split_out *outs, uint32_t nouts,
		     const struct trace_category *cats, uint32_t ncats, char *err, size_t errlen)
{
	struct split s = *sp;
	s.r = trace_reader_open(src, err, errlen);
	if (!s.r)
		return -1;
	s.outs = xcalloc(nouts, sizeof(*s.outs));
	s.nouts = nouts;
	int rc = 0;
	uint32_t opened = 0;
	for (; opened < nouts; opened++) {
		struct sout *o = &s.outs[opened];
		o->w = trace_writer_open(outs[opened].path, 0);
		if (!o->w || trace_writer_header(o->w, &outs[opened].h) != 0) {
			snprintf(err, errlen, "cannot create '%s': %s", outs[opened].path, strerror(errno));
			if (o->w)
				opened++;
			rc = -1;
			break;
		}
	}
	if (rc == 0) {
		struct trace_visitor v = {
			.process = split_process,
			.thread = split_thread,
			.event = split_event,
			.counter = split_counter,
			.drops = split_drops,
			.device = split_device,
		};
		if (trace_reader_run(s.r, &v, &s) != 0)
			s.failed = 1;
		/* category names: every output, as the reader knows them now */
		for (uint32_t k = 0; k < ncats; k++) {
			for (uint32_t i = 0; i < nouts; i++) {
				struct trace_category c = {map_str(&s, i, cats[k].domain_str), cats[k].category,
							   map_str(&s, i, cats[k].name_str)};
				check(&s, trace_writer_category(s.outs[i].w, &c));
			}
		}
		if (s.failed) {
			snprintf(err, errlen, "cannot split '%s': %s", src, errno ? strerror(errno) : "a write failed");
			rc = -1;
		}
	}
	for (uint32_t i = 0; i < opened; i++) {
		if (trace_writer_close(s.outs[i].w, outs[i].end_ns) != 0 && rc == 0) {
			snprintf(err, errlen, "cannot write '%s': %s", outs[i].path, strerror(errno));
			rc = -1;
		}
	}
	if (rc != 0)
		for (uint32_t i = 0; i < opened; i++)
			unlink(outs[i].path);
	trace_reader_close(s.r);
	split_free(&s);
	return rc;
}

int split_cycles(const char *path, const struct outname *pattern, uint32_t pid, int quiet, int force,
		 char **first)
{
	char err[1024];
	struct capture c;
	capture_init(&c);
	*first = NULL;
	struct trace_reader *r = capture_read(&c, path, err, sizeof(err)) == 0
					 ? trace_reader_open(path, err, sizeof(err))
					 : NULL;
	if (!r || !c.nspans) {
		if (r)
			warning("--schedule: no active step was reached: one trace, '%s'", path);
		else
			error("%s", err);
		trace_reader_close(r);
		capture_free(&c);
		return r ? 0 : 1;
	}
	const struct trace_header *h = trace_reader_header(r);
	uint32_t n = (uint32_t)c.nspans;
	struct split_out *outs = xcalloc(n, sizeof(*outs));
	uint64_t *spans = xcalloc(2 * (size_t)n, sizeof(*spans));
	char **tmp = xcalloc(n, sizeof(*tmp));
	for (uint32_t i = 0; i < n; i++) {
		tmp[i] = xmalloc(strlen(path) + 32);
		sprintf(tmp[i], "%s.cycle%u.tmp", path, i);
		spans[2 * i] = c.spans[i].start;
		spans[2 * i + 1] = c.spans[i].end;
		outs[i].path = tmp[i];
		outs[i].h = *h;
		outs[i].h.start_ns = c.spans[i].start;
		outs[i].end_ns = c.spans[i].end != UINT64_MAX ? c.spans[i].end : h->end_ns;
	}
	int rc = split_by_time(path, outs, n, spans, err, sizeof(err));
	trace_reader_close(r);
	if (rc != 0) {
		error("%s", err);
	} else {
		unlink(path);
		for (uint32_t i = 0; i < n; i++) {
			char *name = outname_path(pattern, pid);
			/* never over an existing file without --force (common/outfile.h) */
			if (outfile_install(tmp[i], name, force) != 0) {
				error("cannot rename '%s' to '%s': %s", tmp[i], name, strerror(errno));
				rc = -1;
			} else if (!quiet) {
				fprintf(stderr, "==%d== cycle %u (ProfilerCycle#%u): ", (int)pid, i, c.spans[i].n);
				text_fputs(name, stderr);
				fputc('\n', stderr);
			}
			if (!*first)
				*first = name;
			else
				free(name);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		free(tmp[i]);
	free(tmp);
	free(spans);
	free(outs);
	capture_free(&c);
	return rc != 0;
}
