/*
 * chrome_writer.c - the chrome-trace exporter (see chrome_writer.h).
 *
 * The traceEvents array is framed here, one event per line, and each event is
 * one top-level value of the JSON writer: a line-oriented tool (grep, head)
 * sees one event per line, and the writer's escaping covers every string.
 *
 * Per-event work is kept small because an export is as fast as this loop:
 * desc, thread and category are array or table look-ups in the reader,
 * numbers are formatted without printf, the JSON writer fills a buffer of
 * its own, and a host event without details is its desc's bytes, made once
 * by the ordinary calls (cache_get), with its times, pid and tid between.
 */
#include "formats/chrome/chrome_internal.h"
#include "formats/chrome/chrome_memory.h"

#include "gpdl-config.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct chrome_writer *chrome_of(struct export_writer *w)
{
	return export_writer_container(w, struct chrome_writer);
}

/* Per event, the writer's own flag: every failed write sets it, and it costs
 * no call. ferror() is asked once, at the end. */
static int failed(struct chrome_writer *c)
{
	return c->json.error ? -1 : 0;
}

static int chrome_begin(struct export_writer *w, struct trace_reader *r,
			const struct trace_header *h)
{
	struct chrome_writer *c = chrome_of(w);
	export_desc_clear(&c->cache); /* desc ids are the reader's: a job's next part has others */
	c->steps = 0;   /* a job's parts number their unnumbered steps each from 0 */
	if (c->job)
		return chrome_job_begin(c, r, h);
	c->reader = r;
	c->header = h;
	c->base_ns = h->start_ns;
	c->root_pid = h->pid;
	chrome_raw(c, "{");
	chrome_write_distributed(c);
	chrome_raw(c, "\"traceEvents\":[");
	return failed(c);
}

/* ---- 1.2's details: sequence numbers, input shapes, samples -------------- */

/* Input shapes as torch prints them ("[[32, 64], [64], []]") are written as
 * the JSON array they spell, Kineto's "Input Dims": nested lists of
 * integers, items separated by ", ". Anything else (another spacing, a
 * float, a cut string) is written as the string it is, so that an import
 * gives back the same bytes either way. */
#define DIMS_MAX_DEPTH 16
#define DIMS_MAX_DIGITS 18

/* Checks (j NULL) or writes one list or integer at *p; 0, or -1 when the text
 * is not in the canonical form. */
static int dims_value(struct json_writer *j, const char **p, const char *end, int depth)
{
	const char *s = *p;
	if (s < end && *s == '[') {
		if (depth >= DIMS_MAX_DEPTH)
			return -1;
		if (j)
			json_begin_array(j);
		s++;
		if (s < end && *s == ']') {
			s++;
		} else {
			for (;;) {
				if (dims_value(j, &s, end, depth + 1) != 0)
					return -1;
				if (s < end && *s == ']') {
					s++;
					break;
				}
				if (end - s < 2 || s[0] != ',' || s[1] != ' ')
					return -1;
				s += 2;
			}
		}
		if (j)
			json_end_array(j);
		*p = s;
		return 0;
	}
	int neg = s < end && *s == '-';
	const char *d = s + neg;
	uint64_t v = 0;
	size_t n = 0;
	while (d + n < end && d[n] >= '0' && d[n] <= '9') {
		v = v * 10 + (uint64_t)(d[n] - '0');
		n++;
	}
	/* digits, no leading zero, no "-0": the integer's one spelling */
	if (!n || n > DIMS_MAX_DIGITS || (n > 1 && d[0] == '0') || (neg && v == 0))
		return -1;
	if (j)
		json_int(j, neg ? -(int64_t)v : (int64_t)v);
	*p = d + n;
	return 0;
}

int chrome_dims_canonical(const char *s, size_t len)
{
	const char *p = s;
	return len && *s == '[' && dims_value(NULL, &p, s + len, 0) == 0 && p == s + len;
}

static void dims_args(struct chrome_writer *c, const char *shapes)
{
	struct json_writer *j = &c->json;
	size_t len = strlen(shapes);
	chrome_key(j, "Input Dims");
	if (chrome_dims_canonical(shapes, len)) {
		const char *p = shapes;
		dims_value(j, &p, shapes + len, 0);
	} else {
		json_string_len(j, shapes, len);
	}
}

/* Kineto's "Sequence number" and "Input Dims"; "samples" of a step, and its
 * thread's CPU and run-queue time over it (trace 2.1). */
static void detail_args(struct chrome_writer *c, const struct trace_event_ext *x)
{
	struct json_writer *j = &c->json;
	if (x->has_seq)
		chrome_key_int(j, "Sequence number", x->seq_nr);
	if (x->shapes_str)
		dims_args(c, trace_reader_string(c->reader, x->shapes_str));
	if (x->samples)
		chrome_key_uint(j, "samples", x->samples);
	if (x->sched_cpu_ns) {
		chrome_key_uint(j, "cpu_ns", x->sched_cpu_ns);
		chrome_key_uint(j, "runq_ns", x->sched_runq_ns);
	}
}

static void write_event_args(struct chrome_writer *c, const struct trace_desc *d,
			     const struct trace_thread *t, const struct trace_event *e,
			     const char *step)
{
	struct json_writer *j = &c->json;
	chrome_key(j, "args");
	json_begin_object(j);
	chrome_key_string(j, "type", trace_event_type_name(d->type));
	if (d->domain_str)
		chrome_key_string(j, "domain", trace_reader_string(c->reader, d->domain_str));
	if (d->category) {
		const char *cat =
			trace_reader_category_name(c->reader, d->domain_str, d->category);
		chrome_key(j, "category");
		if (cat)
			json_string(j, cat);
		else
			json_uint(j, d->category);
	}
	if (e->flags & TRACE_EVF_OPEN_AT_EXIT) {
		chrome_key(j, "open_at_exit");
		json_bool(j, 1);
	}
	if (e->flags & TRACE_EVF_UNBALANCED_POP) {
		chrome_key(j, "unbalanced_pop");
		json_bool(j, 1);
	}
	if (e->flags & TRACE_EVF_START_END) {
		chrome_key(j, "start_end");
		json_bool(j, 1);
	}
	if (e->flags & TRACE_EVF_NAME_TRUNCATED) {
		chrome_key(j, "name_truncated");
		json_bool(j, 1);
	}
	if (e->ext || t->kind == TRACE_TRACK_STREAM)
		chrome_gpu_args(c, d, t, e);
	if (e->ext)
		detail_args(c, e->ext);
	if (e->ext && chrome_has_comm(e->ext))
		chrome_comm_args(c, d, e->ext);
	if (step) /* the name an import gives back */
		chrome_key_string(j, "recorded_name", trace_reader_string(c->reader, d->name_str));
	json_end_object(j);
}

/* An event's keys up to "ph" (and a mark's "s"), as an object begun. */
static void write_event_head(struct chrome_writer *c, const char *name, const char *cat, int mark)
{
	struct json_writer *j = &c->json;
	json_begin_object(j);
	chrome_key_string(j, "name", name);
	chrome_key_string(j, "cat", cat);
	chrome_key_string(j, "ph", mark ? "i" : "X");
	if (mark)
		chrome_key_string(j, "s", "t");
}

/* ---- plain events: their fixed bytes, once per desc ---------------------- */

/* A host event without details is its desc's bytes, ts, dur, pid and tid.
 * Those bytes are made once, by the same writer calls as any event's, into
 * memory: head is the object up to "ph" (or "s"), tail from the comma
 * before "args" to the object's end. */
static const struct export_desc_bytes *cache_get(struct chrome_writer *c,
						 const struct trace_desc *d,
						 const struct trace_thread *t,
						 const struct trace_event *e)
{
	struct export_desc_bytes *k = export_desc_at(&c->cache, e->desc);
	if (k->bytes && k->flags == e->flags)
		return k;
	struct export_desc_mem m;
	if (!export_desc_open(&m))
		return NULL;
	struct json_writer keep = c->json;
	json_writer_init(&c->json, m.f, 0);
	write_event_head(c, trace_reader_string(c->reader, d->name_str),
			 chrome_category(d->type, 0), (e->flags & TRACE_EVF_MARK) != 0);
	export_desc_split(&m);
	write_event_args(c, d, t, e, NULL);
	json_end_object(&c->json);
	int bad = json_writer_error(&c->json);
	c->json = keep;
	return export_desc_close(&m, bad, k, e->flags) ? NULL : k;
}

static void write_plain_event(struct chrome_writer *c, const struct export_desc_bytes *k,
			      const struct trace_thread *t, const struct trace_event *e)
{
	struct json_writer *j = &c->json;
	chrome_next_item(c);
	json_raw(j, k->bytes, k->first);
	/* at depth 0 the writer adds nothing around a value: the separators
	 * and keys are these bytes, as json_key would write them */
	json_raw(j, ",\"ts\":", 6);
	chrome_us(j, chrome_rel_ns(c, e->start_ns));
	if (!(e->flags & TRACE_EVF_MARK)) {
		json_raw(j, ",\"dur\":", 7);
		chrome_us(j, (int64_t)e->dur_ns);
	}
	json_raw(j, ",\"pid\":", 7);
	json_uint(j, chrome_pid(c, t));
	json_raw(j, ",\"tid\":", 7);
	json_uint(j, chrome_tid(c, t));
	json_raw(j, k->bytes + k->first, k->second);
}

/* TensorBoard's profiler plugin and HTA find the steps of a trace by
 * Kineto's name, "ProfilerStep#N"; gprof-dl records Paddle's, "ProfileStep#N"
 * (which its own tables keep). A step is written under Kineto's name, with
 * the same N, or the step's place in the file when it has none; NULL when
 * the event is no step of ours. */
static const char *step_name(struct chrome_writer *c, const struct trace_desc *d,
			     const char *name, char *buf, size_t size)
{
	static const char ours[] = "ProfileStep";
	size_t len = strlen(name), n = sizeof(ours) - 1;
	if (d->type != TRACE_EV_PROFILE_STEP && d->type != TRACE_EV_USER_DEFINED)
		return NULL;
	if (len < n || memcmp(name, ours, n) != 0 || !trace_name_is_step(name, len))
		return NULL;
	c->steps++;
	if (len > n)
		snprintf(buf, size, "ProfilerStep%s", name + n);
	else
		snprintf(buf, size, "ProfilerStep#%llu", (unsigned long long)c->steps - 1);
	return buf;
}

static int chrome_event(struct export_writer *w, const struct trace_event *e)
{
	struct chrome_writer *c = chrome_of(w);
	struct json_writer *j = &c->json;
	const struct trace_desc *d = trace_reader_desc(c->reader, e->desc);
	const struct trace_thread *t = trace_reader_thread(c->reader, e->thread);
	if (!d || !t)
		return 0; /* the reader promises both; a NULL is not worth a crash */
	if (d->type == TRACE_EV_MEMORY) {
		chrome_memory_event(c, d, t, e);
		chrome_memory_counter(c, t, e); /* chrome_memory.c */
		return failed(c);
	}
	int mark = (e->flags & TRACE_EVF_MARK) != 0;
	int stream = t->kind == TRACE_TRACK_STREAM;
	const struct export_desc_bytes *k;
	char buf[128];
	const char *name = trace_reader_string(c->reader, d->name_str);
	const char *step = step_name(c, d, name, buf, sizeof(buf));
	if (!e->ext && !stream && !step && (k = cache_get(c, d, t, e)) != NULL) {
		write_plain_event(c, k, t, e);
		if (c->job)
			chrome_job_event(c, d, t, e);
		return failed(c);
	}
	if (step)
		name = step;
	else if (e->ext)
		name = chrome_gpu_name(d, e, name, buf, sizeof(buf));

	chrome_next_item(c);
	write_event_head(c, name, chrome_category(d->type, stream), mark);
	chrome_key_us(j, "ts", chrome_rel_ns(c, e->start_ns));
	if (!mark)
		chrome_key_us(j, "dur", (int64_t)e->dur_ns);
	chrome_key_uint(j, "pid", chrome_pid(c, t));
	chrome_key_uint(j, "tid", chrome_tid(c, t));
	write_event_args(c, d, t, e, step);
	json_end_object(j);
	if (e->ext && e->ext->correlation)
		chrome_flow(c, t, e);
	if (c->job)
		chrome_job_event(c, d, t, e);
	return failed(c);
}

static int chrome_counter(struct export_writer *w, const struct trace_counter *ctr)
{
	struct chrome_writer *c = chrome_of(w);
	struct json_writer *j = &c->json;
	/* The series key is what Perfetto appends to the track name. */
	const char *unit = ctr->id == TRACE_CTR_RSS_BYTES ? "bytes"
			   : ctr->id == TRACE_CTR_CPU_PROCESS || ctr->id == TRACE_CTR_CPU_SYSTEM
				   ? "%"
				   : "value";
	char suffix[32], named[64];
	uint64_t pid = chrome_counter_pid(c, ctr->pid, suffix, sizeof(suffix));
	const char *name = trace_counter_name(ctr->id);
	if (*suffix) {
		snprintf(named, sizeof(named), "%s%s", name, suffix);
		name = named;
	}
	chrome_next_item(c);
	json_begin_object(j);
	chrome_key_string(j, "name", name);
	chrome_key_string(j, "ph", "C");
	chrome_key_us(j, "ts", chrome_rel_ns(c, ctr->ts_ns));
	chrome_key_uint(j, "pid", pid);
	chrome_key(j, "args");
	json_begin_object(j);
	json_key(j, unit);
	json_double(j, ctr->value);
	json_end_object(j);
	json_end_object(j);
	return failed(c);
}

static int chrome_drops(struct export_writer *w, uint32_t thread, uint64_t dropped)
{
	struct chrome_writer *c = chrome_of(w);
	c->drops = xgrow_zeroed(c->drops, &c->ndrops, thread, sizeof(*c->drops));
	c->drops[thread] += dropped;
	return 0;
}

/* ---- metadata, at the end ------------------------------------------------ */

static void write_process(struct chrome_writer *c, uint32_t pid, const char *cmdline,
			  uint32_t sort_index)
{
	char label[64];
	if (cmdline && *cmdline) {
		chrome_meta_begin(c, "process_name", pid, 0);
		chrome_key_string(&c->json, "name", cmdline);
		chrome_meta_end(c);
	}
	if (pid == c->root_pid && c->header->rank >= 0) {
		snprintf(label, sizeof(label), "rank %d", (int)c->header->rank);
		chrome_meta_begin(c, "process_labels", pid, 0);
		chrome_key_string(&c->json, "labels", label);
		chrome_meta_end(c);
	}
	chrome_meta_begin(c, "process_sort_index", pid, 0);
	chrome_key_uint(&c->json, "sort_index", sort_index);
	chrome_meta_end(c);
}

static void write_processes(struct chrome_writer *c)
{
	uint32_t n = trace_reader_process_count(c->reader);
	int root_seen = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_process *p = trace_reader_process(c->reader, i);
		if (!p)
			continue;
		const char *cmd = trace_reader_string(c->reader, p->cmdline_str);
		if (p->pid == c->root_pid) {
			root_seen = 1;
			if (!*cmd)
				cmd = c->header->cmdline;
		}
		write_process(c, p->pid, cmd, i + 1);
	}
	/* A trace cut short may lack the root's process record; the header
	 * still names it. */
	if (!root_seen)
		write_process(c, c->root_pid, c->header->cmdline, 0);
}

static void write_threads(struct chrome_writer *c)
{
	uint32_t n = trace_reader_thread_count(c->reader);
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_thread *t = trace_reader_thread(c->reader, i);
		if (!t || t->kind == TRACE_TRACK_STREAM)
			continue; /* chrome_write_gpu_tracks() */
		if (t->name_str) {
			chrome_meta_begin(c, "thread_name", t->pid, t->tid);
			chrome_key_string(&c->json, "name", trace_reader_string(c->reader, t->name_str));
			chrome_meta_end(c);
		}
		chrome_meta_begin(c, "thread_sort_index", t->pid, t->tid);
		chrome_key_uint(&c->json, "sort_index", t->index);
		chrome_meta_end(c);
	}
}

/* ---- otherData ----------------------------------------------------------- */

static void write_sources(struct json_writer *j, uint32_t sources)
{
	chrome_key(j, "sources");
	json_begin_array(j);
	if (sources & TRACE_SRC_NVTX)
		json_string(j, "nvtx");
	if (sources & TRACE_SRC_CUPTI)
		json_string(j, "cupti");
	if (sources & TRACE_SRC_PYTHON)
		json_string(j, "python");
	json_end_array(j);
}

/* A track as its events name it (pid, tid), and for a GPU stream what it is:
 * its owner process, device, context and stream. */
static void track_ids(struct json_writer *j, const struct trace_thread *t)
{
	int stream = t->kind == TRACE_TRACK_STREAM;
	chrome_key_uint(j, "pid", stream ? t->device : t->pid);
	chrome_key_uint(j, "tid", stream ? t->stream : t->tid);
	if (!stream)
		return;
	chrome_key_string(j, "kind", "stream");
	chrome_key_uint(j, "owner_pid", t->pid);
	chrome_key_uint(j, "device", t->device);
	chrome_key_uint(j, "context", t->context);
	chrome_key_uint(j, "stream", t->stream);
}

static void write_drops(struct chrome_writer *c)
{
	struct json_writer *j = &c->json;
	chrome_key_uint(j, "drops", trace_reader_total_drops(c->reader));
	chrome_key(j, "drops_by_thread");
	json_begin_array(j);
	for (uint32_t i = 0; i < c->ndrops; i++) {
		const struct trace_thread *t = trace_reader_thread(c->reader, i);
		if (!c->drops[i] || !t)
			continue;
		json_begin_object(j);
		track_ids(j, t);
		chrome_key_uint(j, "dropped", c->drops[i]);
		json_end_object(j);
	}
	json_end_array(j);
}

/* The processes' and tracks' own facts, which the metadata events have no
 * place for: what an import needs to give them back. */
static void write_processes_data(struct chrome_writer *c)
{
	struct json_writer *j = &c->json;
	chrome_key(j, "processes");
	json_begin_array(j);
	uint32_t n = trace_reader_process_count(c->reader);
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_process *p = trace_reader_process(c->reader, i);
		if (!p)
			continue;
		json_begin_object(j);
		chrome_key_uint(j, "pid", p->pid);
		chrome_key_uint(j, "ppid", p->ppid);
		chrome_key_uint(j, "start_ns", p->start_ns);
		chrome_key(j, "end_ns");
		if (p->end_ns)
			json_uint(j, p->end_ns);
		else
			json_null(j);
		chrome_key(j, "exit_status");
		if (p->exit_status >= 0)
			json_int(j, p->exit_status);
		else if (p->exit_status == TRACE_EXIT_KILLED)
			json_string(j, "killed");
		else
			json_null(j);
		/* 1.3: a rank's process says which (a record zeroed by an
		 * older writer, world size 0, says none) */
		if (p->rank >= 0 && p->world_size != 0 &&
		    (p->world_size < 0 || p->rank < p->world_size)) {
			chrome_key_int(j, "rank", p->rank);
			chrome_key_int(j, "local_rank", p->local_rank);
			chrome_key_int(j, "world_size", p->world_size);
			chrome_key_string(j, "backend", trace_reader_string(c->reader, p->backend_str));
		}
		json_end_object(j);
	}
	json_end_array(j);
}

static void write_threads_data(struct chrome_writer *c)
{
	struct json_writer *j = &c->json;
	chrome_key(j, "threads");
	json_begin_array(j);
	uint32_t n = trace_reader_thread_count(c->reader);
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_thread *t = trace_reader_thread(c->reader, i);
		if (!t)
			continue;
		json_begin_object(j);
		track_ids(j, t);
		chrome_key_uint(j, "start_ns", t->start_ns);
		chrome_key(j, "end_ns");
		if (t->end_ns)
			json_uint(j, t->end_ns);
		else
			json_null(j);
		json_end_object(j);
	}
	json_end_array(j);
}

static void write_other_data(struct chrome_writer *c)
{
	struct json_writer *j = &c->json;
	const struct trace_header *h = c->header;
	char version[32];
	snprintf(version, sizeof(version), "%u.%u", h->version_major, h->version_minor);

	json_begin_object(j);
	chrome_key_string(j, "format_version", version);
	chrome_key_string(j, "recorded_by", h->gprof_version);
	chrome_key_string(j, "exported_by", "gprof-dl " GPDL_VERSION);
	chrome_key_string(j, "host", h->hostname);
	chrome_key_uint(j, "pid", h->pid);
	chrome_key(j, "rank");
	if (h->rank >= 0)
		json_int(j, h->rank);
	else
		json_null(j);
	if (h->rank >= 0 && h->local_rank >= 0) /* 1.3 */
		chrome_key_int(j, "local_rank", h->local_rank);
	chrome_key(j, "world_size");
	if (h->world_size > 0)
		json_int(j, h->world_size);
	else
		json_null(j);
	chrome_key(j, "dist_backend");
	if (h->dist_backend && *h->dist_backend)
		json_string(j, h->dist_backend);
	else
		json_null(j);
	chrome_key_string(j, "command_line", h->cmdline);
	chrome_key_string(j, "clock_domain", h->clock_domain);
	chrome_key(j, "wall_offset_ns");
	json_int(j, h->wall_offset_ns);
	chrome_key_uint(j, "start_ns", h->start_ns);
	chrome_key_uint(j, "end_ns", h->end_ns);
	chrome_key_wall_time(j, "start_time", (int64_t)h->start_ns + h->wall_offset_ns);
	chrome_key(j, "duration_ns");
	if (h->end_ns >= h->start_ns && h->end_ns)
		json_uint(j, h->end_ns - h->start_ns);
	else
		json_null(j);
	chrome_key_uint(j, "ncpus", h->ncpus);
	write_sources(j, h->sources);
	chrome_key_uint(j, "events", c->ops.events);
	chrome_key_uint(j, "counters", c->ops.counters);
	chrome_key_uint(j, "flows", c->flows);
	write_drops(c);
	write_processes_data(c);
	write_threads_data(c);
	uint64_t offset = 0;
	const char *damage = trace_reader_damage(c->reader, &offset);
	chrome_key(j, "damage");
	if (damage) {
		json_begin_object(j);
		chrome_key_uint(j, "offset", offset);
		chrome_key_string(j, "reason", damage);
		json_end_object(j);
	} else {
		json_null(j);
	}
	json_end_object(j);
}

/* Kineto's "baseTimeNanoseconds": the Unix time of ts 0, which tools add to
 * ts to place events in wall time. */
static void write_base_time(struct chrome_writer *c)
{
	char line[64];
	snprintf(line, sizeof(line), "\"baseTimeNanoseconds\":%lld,\n",
		 (long long)((int64_t)c->base_ns + c->header->wall_offset_ns));
	chrome_raw(c, line);
}

static int chrome_end(struct export_writer *w)
{
	struct chrome_writer *c = chrome_of(w);
	if (c->job)
		return chrome_job_end(c);
	write_processes(c);
	write_threads(c);
	chrome_write_gpu_tracks(c);
	chrome_raw(c, "\n],\n\"displayTimeUnit\":\"ms\",\n");
	chrome_write_devices(c);
	write_base_time(c);
	chrome_raw(c, "\"otherData\":");
	write_other_data(c);
	chrome_raw(c, "}\n");
	json_writer_flush(&c->json);
	return json_writer_error(&c->json) ? -1 : 0;
}

static void chrome_destroy(struct export_writer *w)
{
	struct chrome_writer *c = chrome_of(w);
	if (c->job)
		chrome_job_destroy(c);
	json_writer_release(&c->json);
	export_desc_clear(&c->cache);
	free(c->drops);
	free(c);
}

struct export_writer *chrome_writer_new(FILE *out)
{
	struct chrome_writer *c = xcalloc(1, sizeof(*c));
	c->ops = (struct export_writer){.name = "chrome", .begin = chrome_begin,
					.event = chrome_event, .counter = chrome_counter,
					.drops = chrome_drops, .end = chrome_end,
					.destroy = chrome_destroy};
	c->out = out;
	json_writer_init_buffered(&c->json, out, 0, CHROME_BUFFER);
	return &c->ops;
}
