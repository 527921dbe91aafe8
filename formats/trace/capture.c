/*
 * capture.c - which window a trace recorded: the collector's window marks
 * read back (capture.h).
 */
#include "formats/trace/capture.h"
#include "formats/trace/trace_open.h"
#include "common/error.h"
#include "common/textsafe.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_PREFIX "window: "
#define OFF_NAME "window off"

void capture_init(struct capture *c)
{
	memset(c, 0, sizeof(*c));
}

void capture_free(struct capture *c)
{
	free(c->marks);
	free(c->steps);
	free(c->spans);
	memset(c, 0, sizeof(*c));
}

/* "PREFIX#N" with N a decimal: 1 and N, else 0. */
static int numbered(const char *name, const char *prefix, uint64_t *n)
{
	size_t k = strlen(prefix);
	if (strncmp(name, prefix, k) != 0 || name[k] < '0' || name[k] > '9')
		return 0;
	char *end;
	unsigned long long v = strtoull(name + k, &end, 10);
	if (*end)
		return 0;
	*n = v;
	return 1;
}

static void add_mark(struct capture *c, uint64_t ts, uint32_t pid, int open, uint64_t n)
{
	if (c->nmarks == c->marks_cap) {
		c->marks_cap = c->marks_cap ? 2 * c->marks_cap : 16;
		c->marks = xrealloc(c->marks, c->marks_cap * sizeof(*c->marks));
	}
	c->marks[c->nmarks++] = (struct capture_mark){ts, pid, open, (uint32_t)n};
}

void capture_event(struct capture *c, const char *name, unsigned type, unsigned flags, uint64_t start,
		   uint64_t dur, uint32_t pid, int gpdl)
{
	uint64_t n;
	if (type == TRACE_EV_PROFILE_STEP && !(flags & TRACE_EVF_MARK)) {
		if (c->nsteps == c->steps_cap) {
			c->steps_cap = c->steps_cap ? 2 * c->steps_cap : 64;
			c->steps = xrealloc(c->steps, c->steps_cap * sizeof(*c->steps));
		}
		const char *hash = strrchr(name, '#');
		int64_t num = (int64_t)c->nsteps;
		if (hash && hash[1] >= '0' && hash[1] <= '9')
			num = strtoll(hash + 1, NULL, 10);
		c->steps[c->nsteps++] = (struct capture_step){start, start + dur, num};
		return;
	}
	if (!(flags & TRACE_EVF_MARK) || type != TRACE_EV_USER_DEFINED || !gpdl)
		return;
	if (!strncmp(name, SPEC_PREFIX, sizeof(SPEC_PREFIX) - 1)) {
		if (!c->spec[0] || start < c->spec_ts) {
			snprintf(c->spec, sizeof(c->spec), "%s", name + sizeof(SPEC_PREFIX) - 1);
			c->spec_ts = start;
			c->spec_pid = pid;
		}
	} else if (!strcmp(name, OFF_NAME)) {
		add_mark(c, start, pid, 0, 0);
	} else if (numbered(name, "ProfilerCycle#", &n) || numbered(name, "Capture#", &n)) {
		add_mark(c, start, pid, 1, n);
	}
}

int capture_is_mark_name(const char *name)
{
	uint64_t n;
	return !strncmp(name, SPEC_PREFIX, sizeof(SPEC_PREFIX) - 1) || !strcmp(name, OFF_NAME) ||
	       numbered(name, "ProfilerCycle#", &n) || numbered(name, "Capture#", &n);
}

void capture_reader_event(struct capture *c, const struct trace_reader *r, const struct trace_event *e)
{
	const struct trace_desc *d = trace_reader_desc(r, e->desc);
	if (!d)
		return;
	int step = d->type == TRACE_EV_PROFILE_STEP && !(e->flags & TRACE_EVF_MARK);
	if (!step && !(e->flags & TRACE_EVF_MARK))
		return; /* the common case, decided before any string is looked at */
	int gpdl = d->domain_str && !strcmp(trace_reader_string(r, d->domain_str), "gprof-dl");
	if (!step && !gpdl)
		return;
	const struct trace_thread *t = trace_reader_thread(r, e->thread);
	capture_event(c, trace_reader_string(r, d->name_str), d->type, e->flags, e->start_ns, e->dur_ns,
		      t ? t->pid : 0, gpdl);
}

static int by_ts(const void *a, const void *b)
{
	const struct capture_mark *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int by_num(const void *a, const void *b)
{
	const struct capture_step *x = a, *y = b;
	return x->num < y->num ? -1 : x->num > y->num;
}

void capture_finish(struct capture *c)
{
	free(c->spans);
	c->spans = NULL;
	c->nspans = 0;
	if (!c->spec[0])
		return;
	if (c->nmarks)
		qsort(c->marks, c->nmarks, sizeof(*c->marks), by_ts);
	if (c->nsteps)
		qsort(c->steps, c->nsteps, sizeof(*c->steps), by_num);
	c->spans = xmalloc((c->nmarks + 1) * sizeof(*c->spans));
	int open = 0;
	for (size_t i = 0; i < c->nmarks; i++) {
		const struct capture_mark *m = &c->marks[i];
		if (m->pid != c->spec_pid)
			continue; /* another process's window: its workers inherit the same */
		if (m->open && !open) {
			c->spans[c->nspans++] = (struct capture_span){m->ts, UINT64_MAX, m->n};
			open = 1;
		} else if (!m->open && open) {
			c->spans[c->nspans - 1].end = m->ts;
			open = 0;
		}
	}
}

/* Whether step s (its middle: a step's range may begin a little before the
 * step() call that opened the window) fell in a span. */
static int step_recorded(const struct capture *c, const struct capture_step *s)
{
	uint64_t mid = s->start + (s->end - s->start) / 2;
	for (size_t i = 0; i < c->nspans; i++)
		if (mid >= c->spans[i].start && mid < c->spans[i].end)
			return 1;
	return 0;
}

/* The recorded steps as "4-6, 10-12"; the number of them. */
static size_t step_list(const struct capture *c, char *buf, size_t len)
{
	size_t n = 0, off = 0;
	int64_t first = 0, last = 0;
	int have = 0;
	buf[0] = '\0';
	for (size_t i = 0; i <= c->nsteps; i++) {
		int in = i < c->nsteps && step_recorded(c, &c->steps[i]);
		int64_t num = in ? c->steps[i].num : 0;
		if (in && have && (num == last || num == last + 1)) {
			n += num != last;
			last = num;
			continue;
		}
		if (have && off < len) {
			int k = first == last ? snprintf(buf + off, len - off, "%s%" PRId64, off ? ", " : "", first)
					      : snprintf(buf + off, len - off, "%s%" PRId64 "-%" PRId64,
							 off ? ", " : "", first, last);
			off += k > 0 ? (size_t)k : 0;
		}
		have = in;
		if (in) {
			first = last = num;
			n++;
		}
	}
	return n;
}

static double spans_seconds(const struct capture *c, uint64_t end)
{
	double s = 0;
	for (size_t i = 0; i < c->nspans; i++) {
		uint64_t e = c->spans[i].end == UINT64_MAX ? end : c->spans[i].end;
		if (e > c->spans[i].start)
			s += (double)(e - c->spans[i].start) / 1e9;
	}
	return s;
}

int capture_describe(const struct capture *c, char *buf, size_t len)
{
	char spec[sizeof(c->spec) * 4], steps[512];
	if (!len)
		return 0;
	buf[0] = '\0';
	if (!c->spec[0])
		return 0;
	text_clean(spec, sizeof(spec), c->spec);
	uint64_t end = 0;
	for (size_t i = 0; i < c->nsteps; i++)
		if (c->steps[i].end > end)
			end = c->steps[i].end;
	for (size_t i = 0; i < c->nmarks; i++)
		if (c->marks[i].ts > end)
			end = c->marks[i].ts;
	size_t nsteps = step_list(c, steps, sizeof(steps));
	const char *what;
	char whatbuf[sizeof(spec) + 64];
	if (!strncmp(c->spec, "schedule ", 9)) {
		snprintf(whatbuf, sizeof(whatbuf), "(%s)", spec);
		what = whatbuf;
		if (!c->nspans)
			snprintf(buf, len, "no step: no active step was reached %s", what);
		else if (nsteps)
			snprintf(buf, len, "step%s %s %s", nsteps > 1 ? "s" : "", steps, what);
		else
			snprintf(buf, len, "%zu cycle%s %s", c->nspans, c->nspans > 1 ? "s" : "", what);
		return 1;
	}
	if (!strncmp(c->spec, "steps ", 6)) {
		/* --steps A:B: no marks, the steps it names that the trace has */
		unsigned long long a = 0, b = 0;
		int bounded = sscanf(c->spec + 6, "%llu:%llu", &a, &b) == 2;
		size_t k = 0, off = 0;
		steps[0] = '\0';
		for (size_t i = 0; i < c->nsteps; i++) {
			int64_t num = c->steps[i].num;
			if (num < (int64_t)a || (bounded && num >= (int64_t)b) || (i && num == c->steps[i - 1].num))
				continue;
			k++;
			if (k == 1)
				off = (size_t)snprintf(steps, sizeof(steps), "%" PRId64, num);
		}
		if (k > 1)
			snprintf(steps + off, sizeof(steps) - off, "-%" PRId64, bounded ? (int64_t)b - 1 : c->steps[c->nsteps - 1].num);
		if (k)
			snprintf(buf, len, "step%s %s (--steps %s)", k > 1 ? "s" : "", steps, spec + 6);
		else
			snprintf(buf, len, "no step: the trace has none of --steps %s", spec + 6);
		return 1;
	}
	if (!strncmp(c->spec, "time ", 5)) {
		/* --delay/--duration, in ns from the launch */
		unsigned long long d = 0, l = 0;
		int bounded = sscanf(c->spec + 5, "%llu:%llu", &d, &l) == 2;
		if (bounded)
			snprintf(buf, len, "from %.3f s after the start for %.3f s (--delay, --duration)", (double)d / 1e9,
				 (double)l / 1e9);
		else
			snprintf(buf, len, "from %.3f s after the start (--delay)", (double)d / 1e9);
		return 1;
	}
	if (!strncmp(c->spec, "cudaProfilerApi", 15)) {
		what = "between cudaProfilerStart and cudaProfilerStop";
	} else if (!strncmp(c->spec, "nvtx ", 5)) {
		/* "nvtx NAME[@DOMAIN][ repeat]" */
		const char *name = spec + 5;
		size_t k = strlen(name);
		if (k >= 7 && !strcmp(name + k - 7, " repeat"))
			k -= 7;
		snprintf(whatbuf, sizeof(whatbuf), "inside NVTX '%.*s'", (int)k, name);
		what = whatbuf;
	} else {
		snprintf(buf, len, "%s", spec);
		return 1;
	}
	if (!c->nspans) {
		snprintf(buf, len, "nothing: the program never opened the capture range (%s)", what);
		return 1;
	}
	int off = snprintf(buf, len, "%s (%zu range%s, %.3f s", what, c->nspans, c->nspans > 1 ? "s" : "",
			   spans_seconds(c, end));
	if (off > 0 && (size_t)off < len && nsteps)
		off += snprintf(buf + off, len - (size_t)off, "; step%s %s", nsteps > 1 ? "s" : "", steps);
	if (off > 0 && (size_t)off < len)
		snprintf(buf + off, len - (size_t)off, ")");
	return 1;
}

int capture_span_of(const struct capture *c, uint32_t n, uint64_t *start, uint64_t *end)
{
	for (size_t i = 0; i < c->nspans; i++) {
		if (c->spans[i].n == n) {
			*start = c->spans[i].start;
			*end = c->spans[i].end;
			return 0;
		}
	}
	return -1;
}

long capture_parse_cycle(const char *s)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long v = strtoul(s, &end, 10);
	return *end || v > 1000000000ul ? -1 : (long)v;
}

void capture_no_cycle(const struct capture *c, const char *path, uint32_t n, char *err,
		      size_t errlen)
{
	char clean[TEXT_CLEAN_SIZE];
	text_clean(clean, sizeof(clean), path);
	if (!c->spec[0] || !strncmp(c->spec, "steps ", 6) || !strncmp(c->spec, "time ", 5))
		snprintf(err, errlen, "'%s': no cycles: it was not recorded with --schedule or --capture-range",
			 clean);
	else if (!c->nspans)
		snprintf(err, errlen, "'%s': no cycle %u: the window never opened", clean, n);
	else
		snprintf(err, errlen, "'%s': no cycle %u: its cycles are %u to %u", clean, n, c->spans[0].n,
			 c->spans[c->nspans - 1].n);
}

static int cycle_event(void *ctx, const struct trace_event *e)
{
	struct capture_reader_ctx {
		struct capture *c;
		struct trace_reader *r;
	} *x = ctx;
	capture_reader_event(x->c, x->r, e);
	return 0;
}

int capture_read(struct capture *c, const char *path, char *err, size_t errlen)
{
	struct trace_reader *r = trace_open_any(path, err, errlen);
	if (!r)
		return -1;
	struct {
		struct capture *c;
		struct trace_reader *r;
	} x = {c, r};
	struct trace_visitor v = {.event = cycle_event};
	trace_reader_run(r, &v, &x);
	trace_reader_close(r);
	capture_finish(c);
	return 0;
}

int capture_cycle_window(const char *path, uint32_t n, uint64_t *from, uint64_t *to, char *err,
			 size_t errlen)
{
	struct capture c;
	capture_init(&c);
	if (capture_read(&c, path, err, errlen) != 0)
		return -1;
	int rc = capture_span_of(&c, n, from, to);
	if (rc != 0)
		capture_no_cycle(&c, path, n, err, errlen);
	capture_free(&c);
	return rc;
}

