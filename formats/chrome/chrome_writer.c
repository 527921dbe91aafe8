/*
 * chrome_writer.c - the chrome-trace exporter (see chrome_writer.h).
 *
 * The traceEvents array is framed here, one event per line, and each event is
 * one top-level value of the JSON writer: a line-oriented tool (grep, head)
 * sees one event per line, and the writer's escaping covers every string.
 *
 * Per-event work is kept small because an export is as fast as this loop:
 * desc, thread and category are array or table look-ups in the reader, and
 * numbers are formatted without printf.
 */
#include "formats/chrome/chrome_writer.h"

#include "formats/json/json_writer.h"
#include "gpdl-config.h"
#include "lib/common/error.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct chrome_writer {
	struct export_writer ops; /* first: export_writer_container() */
	struct json_writer json;
	FILE *out;
	struct trace_reader *reader;
	const struct trace_header *header;
	uint64_t base_ns;      /* ts 0 */
	uint32_t root_pid;     /* where system-wide counters go */
	uint64_t items;        /* values in traceEvents so far */
	uint64_t *drops;       /* per thread index; grows with threads, not events */
	uint32_t ndrops;
};

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

/* Starts the next element of traceEvents on its own line. */
static void next_item(struct chrome_writer *c)
{
	if (fputs_unlocked(c->items++ ? ",\n" : "\n", c->out) == EOF)
		c->json.error = 1;
}

static void key_string(struct json_writer *j, const char *k, const char *v)
{
	json_key(j, k);
	json_string(j, v);
}

static void key_uint(struct json_writer *j, const char *k, uint64_t v)
{
	json_key(j, k);
	json_uint(j, v);
}

/* Microseconds, three decimals: exact for any span under about 104 days. */
static void key_us(struct json_writer *j, const char *k, int64_t ns)
{
	json_key(j, k);
	json_fixed(j, (double)ns / 1000.0, 3);
}

static int64_t rel_ns(const struct chrome_writer *c, uint64_t ns)
{
	return (int64_t)(ns - c->base_ns);
}

static int chrome_begin(struct export_writer *w, struct trace_reader *r,
			const struct trace_header *h)
{
	struct chrome_writer *c = chrome_of(w);
	c->reader = r;
	c->header = h;
	c->base_ns = h->start_ns;
	c->root_pid = h->pid;
	if (fputs_unlocked("{\"traceEvents\":[", c->out) == EOF)
		c->json.error = 1;
	return failed(c);
}

static void write_event_args(struct chrome_writer *c, const struct trace_desc *d,
			     const struct trace_event *e)
{
	struct json_writer *j = &c->json;
	json_key(j, "args");
	json_begin_object(j);
	key_string(j, "type", trace_event_type_name(d->type));
	if (d->domain_str)
		key_string(j, "domain", trace_reader_string(c->reader, d->domain_str));
	if (d->category) {
		const char *cat =
			trace_reader_category_name(c->reader, d->domain_str, d->category);
		json_key(j, "category");
		if (cat)
			json_string(j, cat);
		else
			json_uint(j, d->category);
	}
	if (e->flags & TRACE_EVF_OPEN_AT_EXIT) {
		json_key(j, "open_at_exit");
		json_bool(j, 1);
	}
	if (e->flags & TRACE_EVF_UNBALANCED_POP) {
		json_key(j, "unbalanced_pop");
		json_bool(j, 1);
	}
	if (e->flags & TRACE_EVF_START_END) {
		json_key(j, "start_end");
		json_bool(j, 1);
	}
	if (e->flags & TRACE_EVF_NAME_TRUNCATED) {
		json_key(j, "name_truncated");
		json_bool(j, 1);
	}
	json_end_object(j);
}

static int chrome_event(struct export_writer *w, const struct trace_event *e)
{
	struct chrome_writer *c = chrome_of(w);
	struct json_writer *j = &c->json;
	const struct trace_desc *d = trace_reader_desc(c->reader, e->desc);
	const struct trace_thread *t = trace_reader_thread(c->reader, e->thread);
	if (!d || !t)
		return 0; /* the reader promises both; a NULL is not worth a crash */
	int mark = (e->flags & TRACE_EVF_MARK) != 0;

	next_item(c);
	json_begin_object(j);
	key_string(j, "name", trace_reader_string(c->reader, d->name_str));
	key_string(j, "cat", trace_event_type_name(d->type));
	key_string(j, "ph", mark ? "i" : "X");
	if (mark)
		key_string(j, "s", "t");
	key_us(j, "ts", rel_ns(c, e->start_ns));
	if (!mark)
		key_us(j, "dur", (int64_t)e->dur_ns);
	key_uint(j, "pid", t->pid);
	key_uint(j, "tid", t->tid);
	write_event_args(c, d, e);
	json_end_object(j);
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
	next_item(c);
	json_begin_object(j);
	key_string(j, "name", trace_counter_name(ctr->id));
	key_string(j, "ph", "C");
	key_us(j, "ts", rel_ns(c, ctr->ts_ns));
	key_uint(j, "pid", ctr->pid ? ctr->pid : c->root_pid);
	json_key(j, "args");
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
	if (thread >= c->ndrops) {
		uint32_t n = thread + 1 > 2 * c->ndrops ? thread + 1 : 2 * c->ndrops;
		c->drops = xrealloc(c->drops, (unsigned long)n * sizeof(*c->drops));
		memset(c->drops + c->ndrops, 0, (size_t)(n - c->ndrops) * sizeof(*c->drops));
		c->ndrops = n;
	}
	c->drops[thread] += dropped;
	return 0;
}

/* ---- metadata, at the end ------------------------------------------------ */

static void metadata_begin(struct chrome_writer *c, const char *name, uint32_t pid,
			   const uint32_t *tid)
{
	struct json_writer *j = &c->json;
	next_item(c);
	json_begin_object(j);
	key_string(j, "name", name);
	key_string(j, "ph", "M");
	json_key(j, "ts");
	json_uint(j, 0);
	key_uint(j, "pid", pid);
	key_uint(j, "tid", tid ? *tid : 0);
	json_key(j, "args");
	json_begin_object(j);
}

static void metadata_end(struct chrome_writer *c)
{
	json_end_object(&c->json);
	json_end_object(&c->json);
}

static void write_process(struct chrome_writer *c, uint32_t pid, const char *cmdline,
			  uint32_t sort_index)
{
	char label[64];
	if (cmdline && *cmdline) {
		metadata_begin(c, "process_name", pid, NULL);
		key_string(&c->json, "name", cmdline);
		metadata_end(c);
	}
	if (pid == c->root_pid && c->header->rank >= 0) {
		snprintf(label, sizeof(label), "rank %d", (int)c->header->rank);
		metadata_begin(c, "process_labels", pid, NULL);
		key_string(&c->json, "labels", label);
		metadata_end(c);
	}
	metadata_begin(c, "process_sort_index", pid, NULL);
	key_uint(&c->json, "sort_index", sort_index);
	metadata_end(c);
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
		if (!t)
			continue;
		if (t->name_str) {
			metadata_begin(c, "thread_name", t->pid, &t->tid);
			key_string(&c->json, "name", trace_reader_string(c->reader, t->name_str));
			metadata_end(c);
		}
		metadata_begin(c, "thread_sort_index", t->pid, &t->tid);
		key_uint(&c->json, "sort_index", t->index);
		metadata_end(c);
	}
}

/* ---- otherData ----------------------------------------------------------- */

static void write_wall_time(struct json_writer *j, const char *key, int64_t wall_ns)
{
	char buf[64];
	time_t s = (time_t)(wall_ns >= 0 ? wall_ns / 1000000000 : (wall_ns - 999999999) / 1000000000);
	long ns = (long)(wall_ns - (int64_t)s * 1000000000);
	struct tm tm;
	if (!gmtime_r(&s, &tm))
		return;
	size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof(buf) - n, ".%09ldZ", ns);
	key_string(j, key, buf);
}

static void write_sources(struct json_writer *j, uint32_t sources)
{
	json_key(j, "sources");
	json_begin_array(j);
	if (sources & TRACE_SRC_NVTX)
		json_string(j, "nvtx");
	if (sources & TRACE_SRC_CUPTI)
		json_string(j, "cupti");
	if (sources & TRACE_SRC_PYTHON)
		json_string(j, "python");
	json_end_array(j);
}

static void write_drops(struct chrome_writer *c)
{
	struct json_writer *j = &c->json;
	key_uint(j, "drops", trace_reader_total_drops(c->reader));
	json_key(j, "drops_by_thread");
	json_begin_array(j);
	for (uint32_t i = 0; i < c->ndrops; i++) {
		const struct trace_thread *t = trace_reader_thread(c->reader, i);
		if (!c->drops[i] || !t)
			continue;
		json_begin_object(j);
		key_uint(j, "pid", t->pid);
		key_uint(j, "tid", t->tid);
		key_uint(j, "dropped", c->drops[i]);
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
	key_string(j, "format_version", version);
	key_string(j, "recorded_by", h->gprof_version);
	key_string(j, "exported_by", "gprof-dl " GPDL_VERSION);
	key_string(j, "host", h->hostname);
	key_uint(j, "pid", h->pid);
	json_key(j, "rank");
	if (h->rank >= 0)
		json_int(j, h->rank);
	else
		json_null(j);
	key_string(j, "command_line", h->cmdline);
	key_string(j, "clock_domain", h->clock_domain);
	json_key(j, "wall_offset_ns");
	json_int(j, h->wall_offset_ns);
	key_uint(j, "start_ns", h->start_ns);
	key_uint(j, "end_ns", h->end_ns);
	write_wall_time(j, "start_time", (int64_t)h->start_ns + h->wall_offset_ns);
	json_key(j, "duration_ns");
	if (h->end_ns >= h->start_ns && h->end_ns)
		json_uint(j, h->end_ns - h->start_ns);
	else
		json_null(j);
	key_uint(j, "ncpus", h->ncpus);
	write_sources(j, h->sources);
	key_uint(j, "events", c->ops.events);
	key_uint(j, "counters", c->ops.counters);
	write_drops(c);
	uint64_t offset = 0;
	const char *damage = trace_reader_damage(c->reader, &offset);
	json_key(j, "damage");
	if (damage) {
		json_begin_object(j);
		key_uint(j, "offset", offset);
		key_string(j, "reason", damage);
		json_end_object(j);
	} else {
		json_null(j);
	}
	json_end_object(j);
}

static int chrome_end(struct export_writer *w)
{
	struct chrome_writer *c = chrome_of(w);
	write_processes(c);
	write_threads(c);
	if (fputs_unlocked("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":", c->out) == EOF)
		c->json.error = 1;
	write_other_data(c);
	if (fputs_unlocked("}\n", c->out) == EOF)
		c->json.error = 1;
	return json_writer_error(&c->json) ? -1 : 0;
}

static void chrome_destroy(struct export_writer *w)
{
	struct chrome_writer *c = chrome_of(w);
	free(c->drops);
	free(c);
}

struct export_writer *chrome_writer_new(FILE *out)
{
	struct chrome_writer *c = xcalloc(1, sizeof(*c));
	c->ops.name = "chrome";
	c->ops.begin = chrome_begin;
	c->ops.event = chrome_event;
	c->ops.counter = chrome_counter;
	c->ops.drops = chrome_drops;
	c->ops.end = chrome_end;
	c->ops.destroy = chrome_destroy;
	c->out = out;
	json_writer_init(&c->json, out, 0);
	return &c->ops;
}
