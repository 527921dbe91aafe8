/*
 * chrome_job.c - a job's traces in one chrome export (chrome_writer.h):
 * each part a process of its own, on the job's clock, and the flows the
 * caller draws between the parts' collective calls.
 *
 * The writer's callbacks run once per part (begin, events..., end); what
 * spans the parts, the opening of the document and its closing, is here.
 * Memory: a part's summary (its name, counts) for otherData, and per part
 * the writer's per-thread arrays; nothing per event.
 */
#include "formats/chrome/chrome_internal.h"

#include "gpdl-config.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* What otherData.job says of a part. */
struct job_part {
	struct chrome_part p;   /* strings owned */
	uint64_t events, counters, drops;
	char *damage;           /* NULL: read to its end */
	uint64_t damage_offset;
	int gpu_seen;           /* chrome_job_opts.gpu called for it */
};

struct chrome_job {
	struct chrome_job_opts o;
	char *clock;
	struct job_part *parts;
	uint32_t nparts;        /* chrome_job_part() calls so far */
	int opened;             /* "{" and traceEvents' "[" written */
	int closed;
	uint64_t events, counters, collective_flows;
};

static struct chrome_writer *chrome_of(struct export_writer *w)
{
	return export_writer_container(w, struct chrome_writer);
}

static struct job_part *current(const struct chrome_writer *c)
{
	return c->job && c->job->nparts ? &c->job->parts[c->job->nparts - 1] : NULL;
}

/* ---- where events go ----------------------------------------------------- */

uint64_t chrome_counter_pid(const struct chrome_writer *c, uint32_t pid, char *suffix,
			    size_t size)
{
	suffix[0] = '\0';
	if (!c->job)
		return pid ? pid : c->root_pid;
	const struct job_part *p = current(c);
	if (pid && pid != p->p.pid)
		snprintf(suffix, size, " (pid %u)", pid);
	return p->p.out_pid;
}

/* ---- the parts ----------------------------------------------------------- */

struct export_writer *chrome_job_writer_new(FILE *out, const struct chrome_job_opts *o)
{
	struct export_writer *w = chrome_writer_new(out);
	struct chrome_writer *c = chrome_of(w);
	c->job = xcalloc(1, sizeof(*c->job));
	c->job->o = *o;
	c->job->clock = xstrdup(o->clock ? o->clock : "");
	c->job->o.clock = c->job->clock;
	c->base_ns = o->base_ns;
	return w;
}

void chrome_job_part(struct export_writer *w, const struct chrome_part *p)
{
	struct chrome_job *job = chrome_of(w)->job;
	job->parts = xrealloc(job->parts, (job->nparts + 1) * sizeof(*job->parts));
	struct job_part *jp = &job->parts[job->nparts++];
	memset(jp, 0, sizeof(*jp));
	jp->p = *p;
	jp->p.name = xstrdup(p->name ? p->name : "");
	jp->p.file = xstrdup(p->file ? p->file : "");
}

int chrome_job_begin(struct chrome_writer *c, struct trace_reader *r,
		     const struct trace_header *h)
{
	struct chrome_job *job = c->job;
	if (!job->nparts)
		BUG("chrome_job_part() must come before each part's run");
	c->reader = r;
	c->header = h;
	c->root_pid = current(c)->p.pid;
	c->shift_ns = current(c)->p.shift_ns;
	c->job_pid = current(c)->p.out_pid;
	c->flow_base = (uint64_t)(job->nparts - 1) << 40;
	c->flows = 0;
	free(c->drops);
	c->drops = NULL;
	c->ndrops = 0;
	if (!job->opened) {
		job->opened = 1;
		chrome_raw(c, "{\"traceEvents\":[");
	}
	return c->json.error ? -1 : 0;
}

/* A thread's name in the part's process: its own (the Python thread's,
 * where the trace has it), with its pid when that is not the part's root. */
static void thread_meta(struct chrome_writer *c, const struct trace_thread *t)
{
	const struct job_part *p = current(c);
	const char *own = trace_reader_string(c->reader, t->name_str);
	char name[320];
	if (t->kind == TRACE_TRACK_STREAM) {
		if (*own)
			snprintf(name, sizeof(name), "%.256s (GPU %u)", own, t->device);
		else
			snprintf(name, sizeof(name), "GPU %u stream %llu", t->device,
				 (unsigned long long)t->stream);
	} else if (t->pid != p->p.pid) {
		if (*own)
			snprintf(name, sizeof(name), "%.256s (pid %u)", own, t->pid);
		else
			snprintf(name, sizeof(name), "thread %u (pid %u)", t->tid, t->pid);
	} else {
		snprintf(name, sizeof(name), "%.300s", own);
	}
	if (*name) {
		chrome_meta_begin(c, "thread_name", chrome_pid(c, t), chrome_tid(c, t));
		chrome_key_string(&c->json, "name", name);
		chrome_meta_end(c);
	}
	/* host threads in the trace's order, then the streams */
	chrome_meta_begin(c, "thread_sort_index", chrome_pid(c, t), chrome_tid(c, t));
	chrome_key_uint(&c->json, "sort_index",
			(t->kind == TRACE_TRACK_STREAM ? UINT64_C(0x1000000) : 0) + t->index);
	chrome_meta_end(c);
}

/* The part's process: its name, the root's command line as its label, its
 * place among the parts. */
static void process_meta(struct chrome_writer *c)
{
	const struct job_part *p = current(c);
	const char *cmd = "";
	for (uint32_t i = 0; i < trace_reader_process_count(c->reader); i++) {
		const struct trace_process *tp = trace_reader_process(c->reader, i);
		if (tp && tp->pid == p->p.pid && tp->cmdline_str)
			cmd = trace_reader_string(c->reader, tp->cmdline_str);
	}
	if (!*cmd && c->header->pid == p->p.pid && c->header->cmdline)
		cmd = c->header->cmdline;
	chrome_meta_begin(c, "process_name", p->p.out_pid, 0);
	chrome_key_string(&c->json, "name", p->p.name);
	chrome_meta_end(c);
	if (*cmd) {
		chrome_meta_begin(c, "process_labels", p->p.out_pid, 0);
		chrome_key_string(&c->json, "labels", cmd);
		chrome_meta_end(c);
	}
	chrome_meta_begin(c, "process_sort_index", p->p.out_pid, 0);
	chrome_key_uint(&c->json, "sort_index", p->p.sort_index);
	chrome_meta_end(c);
}

int chrome_job_end(struct chrome_writer *c)
{
	struct chrome_job *job = c->job;
	struct job_part *p = current(c);
	process_meta(c);
	uint32_t n = trace_reader_thread_count(c->reader);
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_thread *t = trace_reader_thread(c->reader, i);
		if (t && export_writer_takes_pid(&c->ops, t->pid))
			thread_meta(c, t);
	}
	p->events = c->ops.events;
	p->counters = c->ops.counters;
	for (uint32_t i = 0; i < c->ndrops; i++)
		p->drops += c->drops[i];
	const char *damage = trace_reader_damage(c->reader, &p->damage_offset);
	if (damage)
		p->damage = xstrdup(damage);
	job->events += p->events;
	job->counters += p->counters;
	return c->json.error ? -1 : 0;
}

/* ---- collective calls ---------------------------------------------------- */

void chrome_job_event(struct chrome_writer *c, const struct trace_desc *d,
		      const struct trace_thread *t, const struct trace_event *e)
{
	const struct chrome_job_opts *o = &c->job->o;
	struct job_part *jp = current(c);
	if (o->gpu && !jp->gpu_seen && t->kind == TRACE_TRACK_STREAM &&
	    trace_event_type_is_device(d->type)) {
		jp->gpu_seen = 1;
		o->gpu(o->ctx, c->job->nparts - 1);
	}
	if (!o->comm || (e->flags & TRACE_EVF_MARK))
		return;
	/* what the analysis takes for one: a Communication event, a host range
	 * named BACKEND:OP, GPU work named as NCCL's */
	const char *name = trace_reader_string(c->reader, d->name_str);
	size_t len = strlen(name);
	int stream = t->kind == TRACE_TRACK_STREAM;
	if (d->type != TRACE_EV_COMMUNICATION &&
	    !(stream ? d->type == TRACE_EV_KERNEL && trace_name_is_comm_work(name, len)
		     : trace_name_comm_call(name, len) != 0))
		return;
	const struct trace_event_ext *x = e->ext;
	struct chrome_comm cm = {
		.part = c->job->nparts - 1,
		.pid = chrome_pid(c, t),
		.tid = chrome_tid(c, t),
		.thread = t->index,
		.on_stream = t->kind == TRACE_TRACK_STREAM,
		.start_ns = e->start_ns + (uint64_t)c->shift_ns,
		.dur_ns = e->dur_ns,
		.name = name,
		.x = x,
		.pg = x && x->pg_str ? trace_reader_string(c->reader, x->pg_str) : "",
	};
	o->comm(o->ctx, &cm);
}

int chrome_job_flow(struct export_writer *w, const struct chrome_flow_end *f)
{
	struct chrome_writer *c = chrome_of(w);
	struct json_writer *j = &c->json;
	char ph[2] = {f->ph, '\0'};
	chrome_next_item(c);
	json_begin_object(j);
	chrome_key_string(j, "name", "collective");
	chrome_key_string(j, "cat", "collective");
	chrome_key_string(j, "ph", ph);
	chrome_key_uint(j, "id", f->id);
	chrome_key_us(j, "ts", (int64_t)(f->ts_ns - c->base_ns));
	chrome_key_uint(j, "pid", f->pid);
	chrome_key_uint(j, "tid", f->tid);
	/* every end binds to the call that encloses it: the one starting there */
	chrome_key_string(j, "bp", "e");
	json_end_object(j);
	c->job->collective_flows++;
	return c->json.error ? -1 : 0;
}

/* ---- the end ------------------------------------------------------------- */

static void write_part(struct json_writer *j, const struct job_part *p)
{
	json_begin_object(j);
	chrome_key_string(j, "name", p->p.name);
	chrome_key(j, "rank");
	if (p->p.rank >= 0)
		json_int(j, p->p.rank);
	else
		json_null(j);
	chrome_key_uint(j, "pid", p->p.pid);
	chrome_key_uint(j, "output_pid", p->p.out_pid);
	chrome_key_string(j, "file", p->p.file);
	chrome_key_int(j, "shift_ns", p->p.shift_ns);
	chrome_key_uint(j, "events", p->events);
	chrome_key_uint(j, "counters", p->counters);
	chrome_key_uint(j, "drops", p->drops);
	chrome_key(j, "damage");
	if (p->damage) {
		json_begin_object(j);
		chrome_key_uint(j, "offset", p->damage_offset);
		chrome_key_string(j, "reason", p->damage);
		json_end_object(j);
	} else {
		json_null(j);
	}
	json_end_object(j);
}

static void write_other_data(struct chrome_writer *c)
{
	struct json_writer *j = &c->json;
	const struct chrome_job *job = c->job;
	json_begin_object(j);
	chrome_key_string(j, "exported_by", "gprof-dl " GPDL_VERSION);
	chrome_key_uint(j, "start_ns", c->base_ns);
	chrome_key(j, "wall_offset_ns");
	json_int(j, job->o.wall_offset_ns);
	chrome_key_wall_time(j, "start_time", (int64_t)c->base_ns + job->o.wall_offset_ns);
	chrome_key_uint(j, "events", job->events);
	chrome_key_uint(j, "counters", job->counters);
	chrome_key(j, "job");
	json_begin_object(j);
	chrome_key_string(j, "clock", job->clock);
	chrome_key_uint(j, "collective_flow_events", job->collective_flows);
	chrome_key(j, "parts");
	json_begin_array(j);
	for (uint32_t i = 0; i < job->nparts; i++)
		write_part(j, &job->parts[i]);
	json_end_array(j);
	json_end_object(j);
	json_end_object(j);
}

int chrome_job_finish(struct export_writer *w)
{
	struct chrome_writer *c = chrome_of(w);
	struct chrome_job *job = c->job;
	char line[64];
	if (job->closed)
		BUG("chrome_job_finish() twice");
	job->closed = 1;
	if (!job->opened)
		chrome_raw(c, "{\"traceEvents\":[");
	snprintf(line, sizeof(line), "\"baseTimeNanoseconds\":%lld,\n",
		 (long long)((int64_t)c->base_ns + job->o.wall_offset_ns));
	chrome_raw(c, "\n],\n\"displayTimeUnit\":\"ms\",\n");
	chrome_raw(c, line);
	chrome_raw(c, "\"otherData\":");
	write_other_data(c);
	chrome_raw(c, "}\n");
	json_writer_flush(&c->json);
	return json_writer_error(&c->json) ? -1 : 0;
}

void chrome_job_destroy(struct chrome_writer *c)
{
	struct chrome_job *job = c->job;
	for (uint32_t i = 0; i < job->nparts; i++) {
		free((char *)job->parts[i].p.name);
		free((char *)job->parts[i].p.file);
		free(job->parts[i].damage);
	}
	free(job->parts);
	free(job->clock);
	free(job);
	c->job = NULL;
}
