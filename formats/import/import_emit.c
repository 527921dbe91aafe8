/*
 * import_emit.c - the second half of an import: the tables and the spill,
 * now complete, written as a gprof-dl trace through the trace_writer API.
 *
 * Order: header (now known), devices, categories, processes, threads with
 * their names and times, then every spilled record in file order (the
 * writer buffers per track, so the file's order is no constraint), drops,
 * END. Strings and descs go to the writer as first used, so that an id the
 * writer hands out is always defined before a record refers to it.
 *
 * gprof-dl's own export lists its processes and threads in otherData, with
 * what the metadata events have no place for (ppid, exit status, lifetimes,
 * a stream's owner and context): those lists are the trace's processes and
 * threads, in their order, so that a round trip gives every thread its old
 * index; tracks of events that the lists lack follow them. A [memory]
 * instant of a stream is on (pid device, tid stream) with no "stream" arg:
 * the threads list says that this (pid, tid) is a stream, and it goes there.
 */
#include "formats/import/import_int.h"
#include "formats/import/import_tell.h"

#include "gpdl-config.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* File times at or beyond this are Unix time in ns (after 2001-09-09): the
 * file's clock is the wall clock. */
#define EMIT_EPOCH_LIKE_NS 1000000000000000000ll

struct emit {
	struct import *im;
	struct trace_writer *w;
	uint32_t *wstr;  /* writer string id by import string id, 0: not yet */
	uint32_t *wdesc; /* writer desc id by import desc id - 1 */
	int64_t paddle_base;
	int64_t shift;  /* trace time = file time + shift */
	int have_times;
	int64_t min_start, max_end; /* file time */
	struct trace_header h;
	uint64_t end_ns;
	/* tracks: import track index -> written thread index */
	uint32_t *tmap;
	uint32_t nout;     /* threads written */
	uint32_t nlisted;  /* of them, from otherData.threads */
	struct hmap out;   /* (kind << 32 | pid, tid), as the file names them -> thread */
	struct hmap listed; /* the same keys, of otherData.threads entries */
};

static uint64_t track_key(uint8_t kind, uint32_t pid)
{
	return (uint64_t)kind << 32 | pid;
}

/* The written thread index of a track as the file names it, or -1. */
static int64_t out_find(const struct emit *x, uint8_t kind, uint32_t pid, uint32_t tid)
{
	uint64_t *v = hmap_get(&x->out, track_key(kind, pid), tid);
	return v ? (int64_t)*v : -1;
}

/* Whether otherData's lists, of gprof-dl's own export, are to be used. */
static int use_oprocs(const struct import *im)
{
	return im->hdr.ours && im->have_oprocs;
}

static int use_othreads(const struct import *im)
{
	return im->hdr.ours && im->have_othreads;
}

/* A host track of events that are a stream's: (pid, tid) is no host thread
 * of otherData.threads but a stream of it ([memory] instants of a stream). */
static int host_track_is_stream(const struct emit *x, const struct itrack *t)
{
	return t->kind == TRACE_TRACK_HOST && use_othreads(x->im) &&
	       !hmap_get(&x->listed, track_key(TRACE_TRACK_HOST, t->pid), t->tid) &&
	       hmap_get(&x->listed, track_key(TRACE_TRACK_STREAM, t->pid), t->tid);
}

/* After a failed writer call, whose errno says why. */
static int emit_fail(struct emit *x, const char *what)
{
	int e = errno ? errno : EIO;
	return import_fail(x->im, "cannot write %s (%s): %s", x->im->out_name, what, strerror(e));
}

static uint32_t wstr(struct emit *x, uint32_t id)
{
	if (!id)
		return 0;
	if (!x->wstr[id])
		x->wstr[id] = trace_writer_string(x->w, istrings_get(&x->im->strs, id),
						  istrings_len(&x->im->strs, id));
	return x->wstr[id];
}

#define sat_add import_sat_add

static uint64_t trace_time(const struct emit *x, int64_t t, int rel)
{
	int64_t v = sat_add(rel ? sat_add(t, x->paddle_base) : t, x->shift);
	return v < 0 ? 0 : (uint64_t)v;
}

/* The same for a record, whose move to time 0 is counted on track t (NULL:
 * none): gprof-dl's own export may hold times before its start_ns. */
static uint64_t record_time(const struct emit *x, int64_t t, int rel, struct itrack *track)
{
	int64_t v = sat_add(rel ? sat_add(t, x->paddle_base) : t, x->shift);
	if (v < 0)
		import_fix(x->im, track, TRACE_DROP_BEFORE_START);
	return v < 0 ? 0 : (uint64_t)v;
}

/* ---- times and the header --------------------------------------------- */

static void track_span(const struct emit *x, const struct itrack *t, int64_t *lo, int64_t *hi)
{
	*lo = INT64_MAX;
	*hi = INT64_MIN;
	if (t->have_abs) {
		*lo = t->min_abs;
		*hi = t->max_abs;
	}
	if (t->have_rel) {
		int64_t a = sat_add(t->min_rel, x->paddle_base);
		int64_t b = sat_add(t->max_rel, x->paddle_base);
		*lo = a < *lo ? a : *lo;
		*hi = b > *hi ? b : *hi;
	}
}

static void emit_times(struct emit *x)
{
	struct import *im = x->im;
	x->paddle_base = im->have_paddle_base ? im->paddle_base : 0;
	x->min_start = INT64_MAX;
	x->max_end = INT64_MIN;
	for (uint32_t i = 0; i < im->tracks.n; i++) {
		int64_t lo, hi;
		track_span(x, &im->tracks.t[i], &lo, &hi);
		if (lo == INT64_MAX)
			continue;
		x->have_times = 1;
		x->min_start = lo < x->min_start ? lo : x->min_start;
		x->max_end = hi > x->max_end ? hi : x->max_end;
	}
	if (im->have_span) {
		x->have_times = 1;
		x->min_start = im->span_lo < x->min_start ? im->span_lo : x->min_start;
		x->max_end = im->span_hi > x->max_end ? im->span_hi : x->max_end;
	}
	if (im->hdr.ours && im->hdr.have_start)
		x->shift = (int64_t)im->hdr.start_ns; /* its ts are relative to start_ns */
	else if (im->hdr.have_base && im->hdr.base_ns > 0 &&
		 (!x->have_times || import_sat_add(x->min_start, im->hdr.base_ns) >= 0))
		/* Kineto's ts count from baseTimeNanoseconds, which each process
		 * of a job chooses: on Unix time, the ranks' traces line up */
		x->shift = im->hdr.base_ns;
	else if (x->have_times && x->min_start < 0)
		x->shift = x->min_start == INT64_MIN ? INT64_MAX : -x->min_start;
	else
		x->shift = 0;
}

/* The host pid with the most events: the profiled process. Synthetic pids
 * ("CPU functions") only when there is no other. Linear in tracks: the
 * events are summed per pid in a hash map first (a file may hold 100,000
 * threads, so no track loops over the others). */
static uint32_t main_pid(const struct import *im)
{
	struct hmap per_pid; /* (pid, 0) -> events of its host tracks */
	uint32_t best = 0;
	uint64_t best_n = 0;
	int best_real = 0;

	hmap_init(&per_pid);
	for (uint32_t i = 0; i < im->tracks.n; i++) {
		const struct itrack *t = &im->tracks.t[i];
		if (t->kind != TRACE_TRACK_HOST)
			continue;
		uint64_t *v = hmap_get(&per_pid, t->pid, 0);
		hmap_put(&per_pid, t->pid, 0, (v ? *v : 0) + t->events);
	}
	/* in track order, so that ties go to the pid seen first, as before */
	for (uint32_t i = 0; i < im->tracks.n; i++) {
		const struct itrack *t = &im->tracks.t[i];
		if (t->kind != TRACE_TRACK_HOST)
			continue;
		uint64_t n = *hmap_get(&per_pid, t->pid, 0);
		int real = t->pid < IMPORT_SYNTH_ID_BASE;
		if ((real && !best_real) || (real == best_real && n > best_n)) {
			best = t->pid;
			best_n = n;
			best_real = real;
		}
	}
	hmap_free(&per_pid);
	return best;
}

static uint32_t synth_name(const struct import *im, uint32_t id)
{
	if (id >= IMPORT_SYNTH_ID_BASE && id - IMPORT_SYNTH_ID_BASE < im->nsynth)
		return im->synth_strs[id - IMPORT_SYNTH_ID_BASE];
	return 0;
}

static uint32_t process_name(const struct import *im, uint32_t pid)
{
	uint64_t *v = hmap_get(&im->proc_names, pid, 0);
	return v ? (uint32_t)*v : synth_name(im, pid);
}

static const char *producer_version(const struct import *im)
{
	switch (im->st.format) {
	case IMPORT_FMT_KINETO:
		return "gprof-dl " GPDL_VERSION " import (PyTorch profiler, Kineto)";
	case IMPORT_FMT_TORCH_LEGACY:
		return "gprof-dl " GPDL_VERSION " import (PyTorch autograd profiler)";
	case IMPORT_FMT_PADDLE:
		return "gprof-dl " GPDL_VERSION " import (PaddlePaddle profiler)";
	default:
		return "gprof-dl " GPDL_VERSION " import (chrome trace)";
	}
}

static void emit_header(struct emit *x)
{
	struct import *im = x->im;
	const struct import_header *hi = &im->hdr;
	struct trace_header *h = &x->h;

	memset(h, 0, sizeof(*h));
	h->rank = hi->have_rank ? hi->rank : -1;
	h->world_size = hi->have_world ? hi->world_size : -1;
	h->local_rank = hi->have_local ? hi->local_rank : -1;
	h->dist_backend = istrings_get(&im->strs, hi->backend_str);
	h->pid = hi->ours && hi->have_pid ? hi->pid : main_pid(im);
	h->start_ns = hi->ours && hi->have_start ? hi->start_ns
		      : x->have_times ? trace_time(x, x->min_start, 0) : 0;
	x->end_ns = hi->ours && hi->have_end && hi->end_ns ? hi->end_ns
		    : x->have_times ? trace_time(x, x->max_end, 0) : h->start_ns;
	if (!hi->ours && im->have_span) {
		/* the profiler's own window is the recorded interval (the
		 * analysis widens a run to events outside it, if any) */
		h->start_ns = trace_time(x, im->span_lo, 0);
		x->end_ns = trace_time(x, im->span_hi, 0);
	}
	if (hi->ours) {
		h->sources = hi->sources;
		/* none given is unknown; and so the header never holds only empty
		 * strings, which the trace writer's interning mishandles (a NULL
		 * arena passed to memcmp) */
		h->clock_domain = hi->clock_str ? istrings_get(&im->strs, hi->clock_str) : "unknown";
		if (!*h->clock_domain)
			h->clock_domain = "unknown";
		h->wall_offset_ns = hi->have_wall ? hi->wall_offset_ns : 0;
		h->hostname = istrings_get(&im->strs, hi->host_str);
		h->cmdline = istrings_get(&im->strs, hi->cmdline_str);
		h->ncpus = hi->have_ncpus ? hi->ncpus : 0;
		h->gprof_version = istrings_get(&im->strs, hi->version_str);
		return;
	}
	/* Kineto: wall time = baseTimeNanoseconds + ts; older absolute traces:
	 * ts is Unix time already */
	if (hi->have_base) {
		h->wall_offset_ns = sat_add(hi->base_ns, -x->shift);
		h->clock_domain = "CLOCK_REALTIME";
	} else if (x->have_times && x->min_start >= EMIT_EPOCH_LIKE_NS) {
		h->wall_offset_ns = -x->shift;
		h->clock_domain = "CLOCK_REALTIME";
	} else {
		h->clock_domain = "unknown";
	}
	h->hostname = "";
	h->cmdline = istrings_get(&im->strs, process_name(im, h->pid));
	h->gprof_version = producer_version(im);
}

/* ---- tables --------------------------------------------------------------- */

static int emit_devices(struct emit *x)
{
	for (uint32_t i = 0; i < x->im->ndevs; i++) {
		struct trace_device d = x->im->devs[i];
		d.name_str = wstr(x, d.name_str);
		if (trace_writer_device(x->w, &d) < 0)
			return emit_fail(x, "devices");
	}
	return 0;
}

static int emit_categories(struct emit *x)
{
	for (uint32_t i = 0; i < x->im->ncats; i++) {
		const struct import_category *c = &x->im->cats[i];
		struct trace_category tc = { wstr(x, c->domain_str), c->category,
					     wstr(x, c->name_str) };
		if (trace_writer_category(x->w, &tc) < 0)
			return emit_fail(x, "categories");
	}
	return 0;
}

static int emit_descs(struct emit *x)
{
	struct idescs *d = &x->im->descs;
	for (uint32_t i = 0; i < d->n; i++) {
		uint32_t name = wstr(x, d->d[i].name_str), domain = wstr(x, d->d[i].domain_str);
		x->wdesc[i] = trace_writer_desc(x->w, name, domain, d->d[i].category, d->d[i].type);
		if (!x->wdesc[i])
			return emit_fail(x, "event names");
	}
	return 0;
}

/* A process's rank (1.3): its own, where gprof-dl's export lists it; else
 * the file's, for a rank's trace (a Kineto trace with distributedInfo) is
 * all that rank's; else none: -1 said, as a zeroed record would say rank 0. */
static void process_rank(struct emit *x, struct trace_process *p, const struct import_oproc *o)
{
	const struct import_header *hi = &x->im->hdr;
	if (o && o->have_rank) {
		p->rank = o->rank;
		p->local_rank = o->local_rank;
		p->world_size = o->world_size;
		p->backend_str = wstr(x, o->backend_str);
	} else if (x->h.rank >= 0) {
		p->rank = x->h.rank;
		p->local_rank = x->h.local_rank;
		p->world_size = x->h.world_size;
		p->backend_str = wstr(x, hi->backend_str);
	} else {
		p->rank = p->local_rank = p->world_size = -1;
	}
}

/* The span of a process's host tracks in file time, by pid: one pass over
 * the tracks (linear in threads), then a look-up per process. */
struct pid_span {
	struct hmap idx; /* (pid, 0) -> index in lo/hi */
	int64_t *lo, *hi;
	uint32_t n;
};

static void pid_spans(const struct emit *x, struct pid_span *ps)
{
	const struct import *im = x->im;
	hmap_init(&ps->idx);
	ps->lo = xmalloc((im->tracks.n + 1) * sizeof(*ps->lo));
	ps->hi = xmalloc((im->tracks.n + 1) * sizeof(*ps->hi));
	ps->n = 0;
	for (uint32_t i = 0; i < im->tracks.n; i++) {
		const struct itrack *t = &im->tracks.t[i];
		if (t->kind != TRACE_TRACK_HOST || host_track_is_stream(x, t))
			continue;
		uint64_t *v = hmap_get(&ps->idx, t->pid, 0);
		uint32_t k = v ? (uint32_t)*v : ps->n;
		if (!v) {
			hmap_put(&ps->idx, t->pid, 0, k);
			ps->lo[k] = INT64_MAX;
			ps->hi[k] = INT64_MIN;
			ps->n++;
		}
		int64_t a, b;
		track_span(x, t, &a, &b);
		ps->lo[k] = a < ps->lo[k] ? a : ps->lo[k];
		ps->hi[k] = b > ps->hi[k] ? b : ps->hi[k];
	}
}

static void pid_spans_free(struct pid_span *ps)
{
	hmap_free(&ps->idx);
	free(ps->lo);
	free(ps->hi);
}

static int emit_processes(struct emit *x)
{
	struct import *im = x->im;
	struct hmap done;
	struct pid_span ps;
	int rc = 0;

	hmap_init(&done);
	for (uint32_t i = 0; use_oprocs(im) && i < im->noprocs && rc == 0; i++) {
		const struct import_oproc *o = &im->oprocs[i];
		if (hmap_get(&done, o->pid, 0))
			continue; /* listed twice: the first says it */
		hmap_put(&done, o->pid, 0, 1);
		struct trace_process p = {
			.pid = o->pid,
			.ppid = o->ppid,
			.start_ns = o->start_ns,
			.end_ns = o->end_ns,
			.exit_status = o->exit_status,
			.cmdline_str = wstr(x, process_name(im, o->pid)),
			.exit_signal = -1, /* an export says the status only */
		};
		process_rank(x, &p, o);
		if (trace_writer_process(x->w, &p) < 0)
			rc = emit_fail(x, "processes");
	}
	pid_spans(x, &ps);
	for (uint32_t i = 0; i < im->tracks.n && rc == 0; i++) {
		const struct itrack *t = &im->tracks.t[i];
		if (t->kind != TRACE_TRACK_HOST || hmap_get(&done, t->pid, 0) ||
		    host_track_is_stream(x, t))
			continue;
		uint32_t k = (uint32_t)*hmap_get(&ps.idx, t->pid, 0);
		int64_t lo = ps.lo[k], hi = ps.hi[k];
		hmap_put(&done, t->pid, 0, 1);
		struct trace_process p = {
			.pid = t->pid,
			.start_ns = lo == INT64_MAX ? 0 : trace_time(x, lo, 0),
			.end_ns = hi == INT64_MIN ? 0 : trace_time(x, hi, 0),
			.exit_status = -1,
			.cmdline_str = wstr(x, process_name(im, t->pid)),
			.exit_signal = -1,
		};
		process_rank(x, &p, NULL);
		if (trace_writer_process(x->w, &p) < 0)
			rc = emit_fail(x, "processes");
	}
	pid_spans_free(&ps);
	hmap_free(&done);
	return rc;
}

/* The name metadata gives the track (pid, tid) of the file, of this kind. */
static uint32_t thread_name(const struct import *im, uint8_t kind, uint32_t pid, uint32_t tid,
			    uint64_t stream)
{
	uint64_t *v = hmap_get(&im->thread_names, pid, tid);
	if (v) {
		/* gprof-dl's export names an unnamed stream "stream N" */
		char dflt[48];
		snprintf(dflt, sizeof(dflt), "stream %llu", (unsigned long long)stream);
		if (im->hdr.ours && kind == TRACE_TRACK_STREAM &&
		    strcmp(istrings_get(&im->strs, (uint32_t)*v), dflt) == 0)
			return 0;
		return (uint32_t)*v;
	}
	return kind == TRACE_TRACK_HOST ? synth_name(im, tid) : 0;
}

/* Writes th as the next thread, known as (kind, pid, tid) in the file. */
static int put_thread(struct emit *x, struct trace_thread *th, uint32_t pid, uint32_t tid)
{
	th->index = x->nout;
	if (trace_writer_thread(x->w, th) < 0)
		return emit_fail(x, "threads");
	hmap_put(&x->out, track_key(th->kind, pid), tid, x->nout);
	x->nout++;
	return 0;
}

/* otherData.threads, in order: each track once, as it was recorded. */
static int emit_listed_threads(struct emit *x)
{
	struct import *im = x->im;
	for (uint32_t i = 0; use_othreads(im) && i < im->nothreads; i++) {
		const struct import_othread *o = &im->othreads[i];
		if (out_find(x, o->kind, o->pid, o->tid) >= 0)
			continue; /* listed twice: the first says it */
		int stream = o->kind == TRACE_TRACK_STREAM;
		struct trace_thread th = {
			.pid = !stream ? o->pid : o->have_owner ? o->owner_pid : x->h.pid,
			.tid = stream ? 0 : o->tid,
			.name_str = wstr(x, thread_name(im, o->kind, o->pid, o->tid, o->stream)),
			.start_ns = o->start_ns,
			.end_ns = o->end_ns,
			.kind = o->kind,
			.device = stream ? o->device : 0,
			.context = stream ? o->context : 0,
			.stream = stream ? o->stream : 0,
		};
		if (put_thread(x, &th, o->pid, o->tid) < 0)
			return -1;
	}
	x->nlisted = x->nout;
	return 0;
}

static int emit_threads(struct emit *x)
{
	struct import *im = x->im;
	if (emit_listed_threads(x) < 0)
		return -1;
	for (uint32_t i = 0; i < im->tracks.n; i++) {
		const struct itrack *t = &im->tracks.t[i];
		int64_t found = out_find(x, t->kind, t->pid, t->tid);
		if (found < 0 && host_track_is_stream(x, t))
			found = out_find(x, TRACE_TRACK_STREAM, t->pid, t->tid);
		if (found >= 0) {
			x->tmap[i] = (uint32_t)found;
			continue;
		}
		int64_t lo, hi;
		track_span(x, t, &lo, &hi);
		struct trace_thread th = {
			.pid = t->kind == TRACE_TRACK_HOST ? t->pid : x->h.pid,
			.tid = t->kind == TRACE_TRACK_HOST ? t->tid : 0,
			.name_str = wstr(x, thread_name(im, t->kind, t->pid, t->tid, t->stream)),
			.start_ns = lo == INT64_MAX ? 0 : trace_time(x, lo, 0),
			.end_ns = hi == INT64_MIN ? 0 : trace_time(x, hi, 0),
			.kind = t->kind,
			.device = t->kind == TRACE_TRACK_STREAM ? t->device : 0,
			.context = t->kind == TRACE_TRACK_STREAM ? t->context : 0,
			.stream = t->kind == TRACE_TRACK_STREAM ? t->stream : 0,
		};
		x->tmap[i] = x->nout;
		if (put_thread(x, &th, t->pid, t->tid) < 0)
			return -1;
	}
	return 0;
}

/* Drops of gprof-dl's own export, by (pid, tid) or (device, stream): a
 * thread that is nowhere else gets a record of its own. */
static int emit_drops(struct emit *x)
{
	struct import *im = x->im;
	for (uint32_t i = 0; i < im->ndrops; i++) {
		const struct import_drop *d = &im->drops[i];
		/* its export puts a stream at pid = device, tid = stream */
		uint8_t kind = d->on_stream ? TRACE_TRACK_STREAM : TRACE_TRACK_HOST;
		uint32_t pid = d->on_stream ? d->device : d->pid;
		uint32_t tid = d->on_stream ? (uint32_t)d->stream : d->tid;
		int64_t found = out_find(x, kind, pid, tid);
		uint32_t index = found >= 0 ? (uint32_t)found : x->nout;
		if (found < 0) {
			struct trace_thread th = { .pid = d->pid, .tid = d->tid };
			if (d->on_stream) {
				th.pid = x->h.pid;
				th.tid = 0;
				th.kind = TRACE_TRACK_STREAM;
				th.device = d->device;
				th.stream = d->stream;
			}
			if (put_thread(x, &th, pid, tid) < 0)
				return -1;
		}
		if (trace_writer_drops(x->w, index, d->dropped) < 0)
			return emit_fail(x, "drops");
	}
	return 0;
}

/* What the import dropped or repaired, by reason: DROP records of the
 * threads, which info and summary report (trace.h: enum trace_drop_reason).
 * What is on no track goes to the first thread, made if there is none. */
static int emit_fixes(struct emit *x)
{
	struct import *im = x->im;
	int untracked = 0;
	for (unsigned r = 0; r < TRACE_DROP_REASON_COUNT; r++)
		untracked |= im->fixes_untracked[r] != 0;
	if (untracked && x->nout == 0) {
		struct trace_thread th = { .pid = x->h.pid, .tid = x->h.pid };
		if (put_thread(x, &th, x->h.pid, x->h.pid) < 0)
			return -1;
	}
	for (uint32_t i = 0; i <= im->tracks.n; i++) {
		const uint64_t *n = i < im->tracks.n ? im->tracks.t[i].fixes : im->fixes_untracked;
		uint32_t index = i < im->tracks.n ? x->tmap[i] : 0;
		for (unsigned r = 0; r < TRACE_DROP_REASON_COUNT; r++)
			if (n[r] && trace_writer_drops_reason(x->w, index, n[r], r) < 0)
				return emit_fail(x, "drops");
	}
	return 0;
}

/* ---- records -------------------------------------------------------------- */

static int emit_phase(struct emit *x, uint32_t desc, uint32_t track, int64_t start, int64_t end)
{
	struct trace_event ev = {
		.start_ns = trace_time(x, start, 0),
		.dur_ns = (uint64_t)(end - start),
		.desc = x->wdesc[desc - 1],
		.thread = x->tmap[track],
	};
	if (trace_writer_event(x->w, &ev) < 0)
		return emit_fail(x, "events");
	x->im->st.phases++;
	return 0;
}

/* The phases import_phases.c recovered, now that the forward is known. */
static int emit_phases(struct emit *x)
{
	struct import_phases *ph = &x->im->phases;
	if (!ph->active)
		return 0;
	for (size_t i = 0; i < ph->n; i++) {
		const struct iphase_range *r = &ph->r[i];
		int rc = 0;
		int64_t lo, hi;
		if (r->kind == IPHASE_OPT_STEP && r->desc)
			rc = emit_phase(x, r->desc, r->track, r->start, r->end);
		if (i < ph->nsteps && import_phases_forward(ph, i, &lo, &hi))
			rc = emit_phase(x, ph->fwd_desc, r->track, lo, hi);
		if (rc == 0 && i < ph->nsteps && ph->st[i].bwd_lo <= ph->st[i].bwd_hi)
			rc = emit_phase(x, ph->bwd_desc, r->track, ph->st[i].bwd_lo, ph->st[i].bwd_hi);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int emit_records(struct emit *x)
{
	struct spill *s = &x->im->spill;
	struct spill_event e;
	struct spill_counter c;
	int kind;

	uint32_t cev = 0; /* the next of im->cevs, in spill order */

	if (spill_rewind(s) < 0)
		return import_fail(x->im, "cannot read back a temporary file in '%s': %s",
				   import_tmpdir(), strerror(errno));
	while ((kind = spill_next(s, &e, &c)) > 0) {
		if (kind == 'E') {
			if (e.track >= x->im->tracks.n)
				return import_fail(x->im, "cannot read back a temporary file in '%s': %s",
						   import_tmpdir(), strerror(EIO));
			if (e.flags & SPILL_EVF_COMM)
				import_comm_merge(x->im, cev++, &e.ext, &e.has_ext);
			import_phases_event(x->im, &e);
			/* import string ids, until now */
			if (e.has_ext && e.ext.shapes_str)
				e.ext.shapes_str = wstr(x, e.ext.shapes_str);
			if (e.has_ext && e.ext.pg_str)
				e.ext.pg_str = wstr(x, e.ext.pg_str);
			if (e.has_ext && e.ext.dtype_str)
				e.ext.dtype_str = wstr(x, e.ext.dtype_str);
			struct trace_event ev = {
				.start_ns = record_time(x, e.start,
							(e.flags & SPILL_EVF_PADDLE_REL) != 0,
							&x->im->tracks.t[e.track]),
				.dur_ns = (uint64_t)e.dur,
				.desc = x->wdesc[e.desc - 1],
				.thread = x->tmap[e.track],
				.flags = (uint8_t)e.flags,
				.ext = e.has_ext ? &e.ext : NULL,
			};
			if (trace_writer_event(x->w, &ev) < 0)
				return emit_fail(x, "events");
		} else {
			struct trace_counter tc = { record_time(x, c.ts, 0, NULL), c.id, c.pid,
						    c.value };
			if (trace_writer_counter(x->w, &tc) < 0)
				return emit_fail(x, "counters");
		}
	}
	if (kind < 0)
		return import_fail(x->im, "cannot read back a temporary file in '%s': %s",
				   import_tmpdir(), strerror(s->err));
	return emit_phases(x);
}

int import_emit(struct import *im, const char *out_path, int force, int in_place)
{
	struct emit x = { .im = im };
	int rc = -1;

	import_comm_resolve(im);
	if (import_phases_prepare(im) < 0)
		return -1;
	emit_times(&x);
	emit_header(&x);
	if (in_place) { /* trace_open_any's /proc/self/fd/N: an unlinked file of ours */
		int fd = open(out_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		x.w = fd < 0 ? NULL : trace_writer_fdopen(fd, 1);
		if (!x.w && fd >= 0)
			close(fd);
	} else {
		x.w = trace_writer_open(out_path, force); /* renamed into place when whole */
	}
	if (!x.w) {
		if (errno == EEXIST)
			return import_fail(im, "%s exists; use --force to overwrite it, %s",
					   im->out_name, "or -o to choose another name");
		return import_fail(im, "cannot create %s: %s", im->out_name, strerror(errno));
	}
	im->created = 1;
	hmap_init(&x.out);
	hmap_init(&x.listed);
	for (uint32_t i = 0; use_othreads(im) && i < im->nothreads; i++)
		hmap_put(&x.listed, track_key(im->othreads[i].kind, im->othreads[i].pid),
			 im->othreads[i].tid, i);
	x.tmap = xcalloc(im->tracks.n + 1, sizeof(*x.tmap));
	x.wstr = xcalloc(im->strs.n + 1, sizeof(*x.wstr));
	x.wdesc = xcalloc(im->descs.n + 1, sizeof(*x.wdesc));
	if (trace_writer_header(x.w, &x.h) < 0) {
		emit_fail(&x, "header");
		goto out;
	}
	if (emit_devices(&x) < 0 || emit_categories(&x) < 0 || emit_descs(&x) < 0 ||
	    emit_processes(&x) < 0 || emit_threads(&x) < 0 || emit_records(&x) < 0 ||
	    emit_drops(&x) < 0 || emit_fixes(&x) < 0)
		goto out;
	rc = 0;
out:
	if (rc != 0)
		trace_writer_abort(x.w); /* an existing output is left as it was */
	else if (trace_writer_close(x.w, x.end_ns) < 0)
		rc = emit_fail(&x, "closing");
	im->st.tracks = x.nout;
	im->st.strings = im->strs.n;
	im->st.descs = im->descs.n;
	im->st.devices = im->ndevs;
	im->st.spill_bytes = im->spill.bytes;
	free(x.wstr);
	free(x.wdesc);
	free(x.tmap);
	hmap_free(&x.out);
	hmap_free(&x.listed);
	return rc;
}
