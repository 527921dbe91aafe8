/*
 * export_writer.c - drives an export_writer through one read of a trace, and
 * the names and measures of GPU work that every exporter writes alike.
 *
 * The reader's visitor is adapted to the writer's callbacks here, once, so
 * that each exporter only says what it writes, never how the trace is read.
 */
#include "formats/export_writer.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct run {
	struct export_writer *w;
	struct trace_reader *r;
	int begun;
	/* with a filter: per thread index, 0 not asked yet, 1 taken, 2 left out */
	uint8_t *takes;
	size_t ntakes;
	uint64_t read; /* events read, for the progress callback */
};

int export_writer_takes_pid(const struct export_writer *w, uint32_t pid)
{
	return !w->filter || trace_pids_has(&w->filter->part, pid);
}

/* Whether the thread of this index is the part's: asked once per thread,
 * as the reader promises every event's thread resolves. */
static int takes_thread(struct run *run, uint32_t index)
{
	if (!run->w->filter)
		return 1;
	if (index >= run->ntakes) {
		size_t n = run->ntakes ? run->ntakes : 64;
		while (n <= index)
			n *= 2;
		run->takes = xrealloc(run->takes, n);
		memset(run->takes + run->ntakes, 0, n - run->ntakes);
		run->ntakes = n;
	}
	if (!run->takes[index]) {
		const struct trace_thread *t = trace_reader_thread(run->r, index);
		run->takes[index] = t && export_writer_takes_pid(run->w, t->pid) ? 1 : 2;
	}
	return run->takes[index] == 1;
}

/* begin comes first and once, whatever order the reader's callbacks take:
 * with the header it hands over, or else with trace_reader_header(). */
static int begin_once(struct run *run, const struct trace_header *h)
{
	if (run->begun)
		return 0;
	run->begun = 1;
	static const struct trace_header none = {.rank = -1};
	if (!h)
		h = trace_reader_header(run->r);
	if (!h)
		h = &none; /* writers may count on a header; its strings are NULL */
	return run->w->begin ? run->w->begin(run->w, run->r, h) : 0;
}

#define BEGIN_ONCE(run)                                      \
	do {                                                 \
		int rc_ = begin_once(run, NULL);             \
		if (rc_)                                     \
			return rc_;                          \
	} while (0)

static int on_header(void *ctx, const struct trace_header *h)
{
	return begin_once(ctx, h);
}

static int on_process(void *ctx, const struct trace_process *p)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	BEGIN_ONCE(ctx);
	if (!export_writer_takes_pid(w, p->pid))
		return 0;
	return w->process ? w->process(w, p) : 0;
}

static int on_thread(void *ctx, const struct trace_thread *t)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	BEGIN_ONCE(ctx);
	if (!export_writer_takes_pid(w, t->pid))
		return 0;
	return w->thread ? w->thread(w, t) : 0;
}

static int on_event(void *ctx, const struct trace_event *e)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	struct run *run = ctx;
	BEGIN_ONCE(ctx);
	if (w->progress && !(++run->read % EXPORT_PROGRESS_EVENTS))
		w->progress(w->progress_ctx, trace_reader_offset(run->r));
	if (w->to_ns && (e->start_ns < w->from_ns || e->start_ns >= w->to_ns))
		return 0;
	if (!takes_thread(ctx, e->thread))
		return 0;
	w->events++;
	return w->event ? w->event(w, e) : 0;
}

static int on_counter(void *ctx, const struct trace_counter *c)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	BEGIN_ONCE(ctx);
	if (w->filter && (c->pid ? !export_writer_takes_pid(w, c->pid) : !w->filter->system))
		return 0;
	if (w->to_ns && (c->ts_ns < w->from_ns || c->ts_ns >= w->to_ns))
		return 0;
	w->counters++;
	return w->counter ? w->counter(w, c) : 0;
}

static int on_drops(void *ctx, uint32_t thread, uint64_t dropped)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	BEGIN_ONCE(ctx);
	if (!takes_thread(ctx, thread))
		return 0;
	return w->drops ? w->drops(w, thread, dropped) : 0;
}

static int on_device(void *ctx, const struct trace_device *d)
{
	struct export_writer *w = ((struct run *)ctx)->w;
	BEGIN_ONCE(ctx);
	return w->device ? w->device(w, d) : 0;
}

int export_writer_run(struct export_writer *w, struct trace_reader *r)
{
	return export_writer_run_part(w, r, NULL);
}

int export_writer_run_part(struct export_writer *w, struct trace_reader *r,
			   const struct export_filter *f)
{
	static const struct trace_visitor visitor = {
		.header = on_header,
		.process = on_process,
		.thread = on_thread,
		.event = on_event,
		.counter = on_counter,
		.drops = on_drops,
		.device = on_device,
	};
	struct run run = {.w = w, .r = r};
	w->reader = r;
	w->filter = f;
	w->events = w->counters = 0;
	int rc = trace_reader_run(r, &visitor, &run);
	if (!rc)
		rc = begin_once(&run, NULL); /* an empty trace */
	if (!rc && w->end)
		rc = w->end(w);
	if (w->progress)
		w->progress(w->progress_ctx, trace_reader_offset(r));
	free(run.takes);
	return rc;
}

/* ---- collectives ------------------------------------------------------------- */

/* torch's element types by both of its spellings: the C++ type of a
 * tensor's dtype (the PyTorch profiler's "Input type") and the ScalarType
 * name (record_param_comms' "dtype"), and numpy's / Paddle's ("float32"). */
static const struct {
	const char *name;
	unsigned size;
} dtype_sizes[] = {
	{"float", 4},		     {"Float", 4},	       {"float32", 4},
	{"double", 8},		     {"Double", 8},	       {"float64", 8},
	{"c10::Half", 2},	     {"Half", 2},	       {"float16", 2},
	{"c10::BFloat16", 2},	     {"BFloat16", 2},	       {"bfloat16", 2},
	{"long int", 8},	     {"long", 8},	       {"Long", 8},
	{"int64", 8},		     {"int64_t", 8},	       {"int", 4},
	{"Int", 4},		     {"int32", 4},	       {"short int", 2},
	{"short", 2},		     {"Short", 2},	       {"int16", 2},
	{"signed char", 1},	     {"Char", 1},	       {"int8", 1},
	{"unsigned char", 1},	     {"Byte", 1},	       {"uint8", 1},
	{"bool", 1},		     {"Bool", 1},	       {"c10::complex<float>", 8},
	{"ComplexFloat", 8},	     {"complex64", 8},	       {"c10::complex<double>", 16},
	{"ComplexDouble", 16},	     {"complex128", 16},       {"c10::complex<c10::Half>", 4},
	{"ComplexHalf", 4},	     {"c10::Float8_e4m3fn", 1}, {"Float8_e4m3fn", 1},
	{"c10::Float8_e5m2", 1},     {"Float8_e5m2", 1},       {"unsigned int", 4},
	{"UInt32", 4},		     {"unsigned long", 8},     {"UInt64", 8},
	{"unsigned short", 2},	     {"UInt16", 2},
};

unsigned export_dtype_size(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(dtype_sizes) / sizeof(dtype_sizes[0]); i++)
		if (strlen(dtype_sizes[i].name) == len &&
		    strncasecmp(dtype_sizes[i].name, name, len) == 0)
			return dtype_sizes[i].size;
	return 0;
}

const char *export_comm_op(const char *name)
{
	size_t n = trace_name_comm_call(name, strlen(name));
	return n ? name + n + 1 : NULL;
}

/* ---- GPU work ------------------------------------------------------------ */

void export_memcpy_name(char *buf, size_t size, const struct trace_event_ext *x)
{
	snprintf(buf, size, "Memcpy %s (%s -> %s)", trace_copy_kind_name(x->copy_kind),
		 trace_memory_kind_name(x->src_kind), trace_memory_kind_name(x->dst_kind));
}

void export_memset_name(char *buf, size_t size, const struct trace_event_ext *x)
{
	snprintf(buf, size, "Memset (%s)", trace_memory_kind_name(x->dst_kind));
}

static uint64_t dims_product(const uint32_t d[3])
{
	return (uint64_t)d[0] * d[1] * d[2];
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* How many blocks of this launch one SM can hold at once: the tightest of
 * its limits. Registers are allocated per warp in units of 256, as on every
 * architecture since Fermi; a limit the device does not state is no limit. */
static uint64_t resident_blocks(const struct trace_device *d, const struct trace_event_ext *x,
				uint64_t warps_per_block, uint32_t warp)
{
	uint64_t limit = d->max_blocks_per_sm ? d->max_blocks_per_sm : UINT64_MAX;
	limit = min_u64(limit, d->max_threads_per_sm / warp / warps_per_block);
	if (x->registers && d->regs_per_sm) {
		uint64_t per_warp = ((uint64_t)x->registers * warp + 255) / 256 * 256;
		limit = min_u64(limit, d->regs_per_sm / (per_warp * warps_per_block));
	}
	uint64_t smem = (uint64_t)x->static_smem + x->dynamic_smem;
	if (smem && d->smem_per_sm)
		limit = min_u64(limit, d->smem_per_sm / smem);
	return limit;
}

int export_launch_measure(const struct trace_device *d, const struct trace_event_ext *x,
			  struct export_launch *l)
{
	uint64_t threads = dims_product(x->block), blocks = dims_product(x->grid);
	if (!d || !d->sm_count || !threads || !blocks)
		return -1;
	uint32_t warp = d->warp_size ? d->warp_size : 32;
	uint64_t warps_per_block = (threads + warp - 1) / warp;
	l->blocks_per_sm = (double)blocks / d->sm_count;
	l->warps_per_sm = l->blocks_per_sm * (double)warps_per_block;
	l->occupancy_pct = -1;
	if (!d->max_threads_per_sm)
		return 0;
	double resident = (double)resident_blocks(d, x, warps_per_block, warp);
	if (resident > l->blocks_per_sm)
		resident = l->blocks_per_sm;
	double pct = 100.0 * resident * (double)threads / d->max_threads_per_sm;
	l->occupancy_pct = pct > 100.0 ? 100.0 : pct;
	return 0;
}

struct export_desc_bytes *export_desc_grow(struct export_desc_cache *c, uint32_t id)
{
	c->v = xgrow_zeroed(c->v, &c->n, id, sizeof(*c->v));
	return &c->v[id];
}

void export_desc_clear(struct export_desc_cache *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		free(c->v[i].bytes);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

FILE *export_desc_open(struct export_desc_mem *m)
{
	*m = (struct export_desc_mem){0};
	m->f = open_memstream(&m->text, &m->len);
	return m->f;
}

void export_desc_split(struct export_desc_mem *m)
{
	m->bad |= fflush(m->f) != 0;
	m->first = m->len;
}

int export_desc_close(struct export_desc_mem *m, int bad, struct export_desc_bytes *k,
		      uint32_t flags)
{
	bad |= m->bad;
	bad |= fclose(m->f) != 0;
	if (bad || m->len > UINT32_MAX) {
		free(m->text);
		return -1;
	}
	free(k->bytes);
	*k = (struct export_desc_bytes){m->text, (uint32_t)m->first, (uint32_t)(m->len - m->first),
					flags};
	return 0;
}
