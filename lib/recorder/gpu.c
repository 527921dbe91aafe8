/*
 * gpu.c - the GPU records (ring version 3), which the collector writes from
 * CUPTI's buffers: CUDA calls on their host threads' tracks, kernels,
 * copies, sets, synchronizations and memory events on one track per stream,
 * CUPTI's overhead and losses on tracks of their own, devices, and the
 * statuses (on, off, degraded) the end reports. External ids (torch's
 * operators' correlation with CUDA calls) are kept per process for the last
 * XID_WINDOW correlation ids.
 *
 * GPU records name the process (pid), not the slot: CUPTI delivers a
 * process's records from whichever thread flushed its buffers.
 */
#include "lib/recorder/recorder_int.h"

#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The stream id of a context's track, where synchronizations of no one
 * stream go: CUPTI's own "invalid" stream id, which Kineto writes as -1. */
#define SYNC_STREAM UINT32_MAX

/* Whether a GPU kernel's name makes it communication, as the importer
 * reads Kineto's kernels: "nccl" or "rccl" in it, any case. Looked for
 * once per name, and only for kernels' names. */
static int string_comm_work(struct recorder *r, uint32_t ring_id)
{
	if (ring_id >= r->strmap_cap)
		return 0;
	if (!(r->strcomm[ring_id] & STR_COMM_WORK_KNOWN)) {
		size_t len;
		const char *s = trace_writer_string_text(r->w, r->strmap[ring_id], &len);
		r->strcomm[ring_id] |= STR_COMM_WORK_KNOWN | (trace_name_is_comm_work(s, len) ? STR_COMM_WORK : 0);
	}
	return (r->strcomm[ring_id] & STR_COMM_WORK) != 0;
}

/* A desc of a given type, by file string id: GPU records name no domain. */
uint32_t rec_desc_typed(struct recorder *r, uint32_t name, uint8_t type)
{
	uint64_t *v = hmap_get(&r->gdescs, name, type);
	if (v)
		return (uint32_t)*v;
	uint32_t id = trace_writer_desc(r->w, name, 0, 0, type);
	hmap_put(&r->gdescs, name, type, id);
	return id;
}

static uint32_t desc_named(struct recorder *r, const char *name, uint8_t type)
{
	return rec_desc_typed(r, trace_writer_string(r->w, name, strlen(name)), type);
}

/* A copy or set is named by what it did, as Kineto names it and the chrome
 * export composes it ("Memcpy HtoD (Pinned -> Device)", "Memset (Device)"),
 * so that an export and its import keep the desc; the views read the kinds
 * from the details. */
static uint32_t desc_copy(struct recorder *r, uint8_t type, const struct trace_event_ext *x)
{
	uint64_t k1 = 1ull << 63 | (uint64_t)type << 24 | (uint64_t)x->copy_kind << 16 |
		      (uint64_t)x->src_kind << 8 | x->dst_kind;
	uint64_t *v = hmap_get(&r->gdescs, k1, 0);
	if (v)
		return (uint32_t)*v;
	char name[96];
	if (type == TRACE_EV_MEMCPY)
		snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", trace_copy_kind_name(x->copy_kind),
			 trace_memory_kind_name(x->src_kind), trace_memory_kind_name(x->dst_kind));
	else
		snprintf(name, sizeof(name), "Memset (%s)", trace_memory_kind_name(x->dst_kind));
	uint32_t id = desc_named(r, name, type);
	hmap_put(&r->gdescs, k1, 0, id);
	return id;
}

static void gpu_event(struct recorder *r, uint64_t start, uint64_t end, uint32_t desc, uint32_t thread,
		      uint8_t flags, const struct trace_event_ext *ext)
{
	struct rec_thread *t = &r->threads[thread];
	if (end < start)
		end = start;
	if (start < t->lo)
		t->lo = start;
	if (end > t->hi)
		t->hi = end;
	event_write_ext(r, start, end, desc, thread, flags, ext);
	r->gpu_events++;
}

/* The host track of the thread that made a CUDA call at ts: the thread's
 * own, or a track made for it until its slot is drained (thread_of_slot()
 * takes it over). Where the system reused the tid, the thread it was at
 * ts: an earlier one if the latest started after ts; a new one if the
 * latest had ended by then. */
static uint32_t api_thread(struct recorder *r, uint32_t pid, uint32_t tid, uint64_t ts)
{
	uint64_t *v = hmap_get(&r->tids, pid, tid);
	uint32_t prev = NO_THREAD;
	if (v) {
		uint32_t i = (uint32_t)*v;
		const struct rec_thread *t = &r->threads[i];
		if (!t->bound || !t->t.end_ns || ts < t->t.end_ns) {
			while (r->threads[i].bound && r->threads[i].t.start_ns > ts &&
			       r->threads[i].prev != NO_THREAD)
				i = r->threads[i].prev;
			return i;
		}
		prev = i;
	}
	uint32_t i = rec_thread_add(r, pid, tid);
	r->threads[i].prev = prev;
	r->threads[i].t.start_ns = ts;
	hmap_put(&r->tids, pid, tid, i);
	thread_write(r, &r->threads[i]);
	return i;
}

/* One CUDA stream is one track: CUPTI's stream ids are unique within a
 * process, and a context is on one device. Records without a context
 * (none CUPTI writes for work) are told apart by their device. */
static void stream_key(uint32_t pid, uint32_t context, uint32_t device, uint64_t stream, uint64_t *k1,
		       uint64_t *k2)
{
	*k1 = (uint64_t)pid << 32 | context;
	*k2 = context ? stream : (uint64_t)device << 32 | (uint32_t)stream;
}

/* The track of a stream, made on first sight; device < 0: not known from
 * this record (a synchronization names none), taken from the context's
 * other streams then, or at the end. */
static uint32_t stream_track(struct recorder *r, uint32_t pid, uint32_t context, int64_t device,
			     uint64_t stream, uint64_t ts)
{
	uint64_t k1, k2;
	if (device < 0) {
		uint64_t *d = hmap_get(&r->ctxdev, pid, context);
		if (d)
			device = (int64_t)*d;
	}
	stream_key(pid, context, device < 0 ? 0 : (uint32_t)device, stream, &k1, &k2);
	uint64_t *v = hmap_get(&r->streams, k1, k2);
	if (v) {
		struct rec_thread *t = &r->threads[*v];
		if (!t->device_known && device >= 0) {
			t->t.device = (uint32_t)device;
			t->device_known = 1;
			hmap_put(&r->ctxdev, pid, context, (uint64_t)device);
			thread_write(r, t);
		}
		return t->t.index;
	}
	uint32_t i = rec_thread_add(r, pid, 0);
	struct rec_thread *t = &r->threads[i];
	t->gpu = 1;
	t->t.kind = TRACE_TRACK_STREAM;
	t->t.context = context;
	t->t.stream = stream;
	t->t.start_ns = ts;
	if (device >= 0) {
		t->t.device = (uint32_t)device;
		t->device_known = 1;
		hmap_put(&r->ctxdev, pid, context, (uint64_t)device);
	}
	if (stream == SYNC_STREAM) {
		char name[48];
		int n = snprintf(name, sizeof(name), "context %u sync", context);
		t->t.name_str = trace_writer_string(r->w, name, (size_t)n);
	}
	hmap_put(&r->streams, k1, k2, i);
	thread_write(r, t);
	return i;
}

/* A process's host track of CUPTI's own (which 0: its overhead, 1: the
 * records it lost), apart from the program's threads: CUPTI's overhead
 * never nests inside the program's ranges. */
static uint32_t proc_track(struct recorder *r, uint32_t pid, unsigned which, uint64_t ts)
{
	static const char *const names[] = {"[CUPTI overhead]", "[CUPTI]"};
	uint64_t *v = hmap_get(&r->proc_tracks, pid, which);
	if (v)
		return (uint32_t)*v;
	uint32_t i = rec_thread_add(r, pid, 0);
	struct rec_thread *t = &r->threads[i];
	t->gpu = 1;
	t->t.name_str = trace_writer_string(r->w, names[which], strlen(names[which]));
	t->t.start_ns = ts;
	hmap_put(&r->proc_tracks, pid, which, i);
	thread_write(r, t);
	return i;
}

/* Keeps the external ids of each process's last XID_WINDOW correlation ids. */
static void xid_prune(struct recorder *r)
{
	struct hmap keep;
	hmap_init(&keep);
	for (size_t i = 0; i < r->xids.cap; i++) {
		const struct hmap_entry *e = &r->xids.e[i];
		if (!e->used)
			continue;
		const uint64_t *newest = hmap_get(&r->xid_max, e->k1, 0);
		if (newest && e->k2 + XID_WINDOW >= *newest)
			hmap_put(&keep, e->k1, e->k2, e->value);
	}
	hmap_free(&r->xids);
	r->xids = keep;
	r->xid_prune_at = 2 * keep.len > XID_PRUNE_MIN ? 2 * keep.len : XID_PRUNE_MIN;
}

static void xid_put(struct recorder *r, uint32_t pid, uint64_t corr, uint64_t xid)
{
	if (!corr || !xid)
		return;
	uint64_t *newest = hmap_get(&r->xid_max, pid, 0);
	if (!newest || corr > *newest)
		hmap_put(&r->xid_max, pid, 0, corr);
	hmap_put(&r->xids, pid, corr, xid);
	if (r->xids.len >= r->xid_prune_at)
		xid_prune(r);
}

static uint64_t xid_of(const struct recorder *r, uint32_t pid, uint64_t corr)
{
	const uint64_t *v = corr && r->xids.len ? hmap_get(&r->xids, pid, corr) : NULL;
	return v ? *v : 0;
}

/* The bytes in use on a device of a process after an allocation or a free,
 * as its records tell: a free takes back what its block's allocation gave
 * (its own size where the allocation was not seen), never below 0. */
static uint64_t memory_in_use(struct recorder *r, uint32_t pid, const struct ring_gpu_memory *x,
			      uint64_t *freed)
{
	uint64_t k1 = pid | (uint64_t)x->device << 32;
	uint64_t *v = hmap_get(&r->in_use, k1, 0);
	uint64_t use = v ? *v : 0;
	if (x->h.aux == RING_GPU_MEM_ALLOC) {
		hmap_put(&r->blocks, k1, x->address, x->bytes);
		use += x->bytes;
	} else {
		uint64_t *b = hmap_get(&r->blocks, k1, x->address);
		uint64_t size = b ? *b : x->bytes;
		if (b)
			hmap_del(&r->blocks, k1, x->address);
		*freed = x->bytes ? x->bytes : size;
		use -= size < use ? size : use;
	}
	hmap_put(&r->in_use, k1, 0, use);
	return use;
}

static void gpu_memory(struct recorder *r, uint32_t pid, const struct ring_gpu_memory *x)
{
	if (x->h.aux != RING_GPU_MEM_ALLOC && x->h.aux != RING_GPU_MEM_FREE)
		return;
	uint64_t freed = 0;
	struct trace_event_ext ext = {0};
	ext.total_allocated = memory_in_use(r, pid, x, &freed);
	ext.bytes = x->h.aux == RING_GPU_MEM_ALLOC ? x->bytes : (uint64_t)-(int64_t)freed;
	ext.address = x->address;
	ext.device = (int32_t)x->device;
	ext.dst_kind = x->memory_kind;
	ext.is_async = x->is_async != 0;
	ext.correlation = x->correlation;
	ext.external_id = xid_of(r, pid, x->correlation);
	if (!r->mem_desc)
		r->mem_desc = desc_named(r, "[memory]", TRACE_EV_MEMORY); /* Kineto's name */
	uint32_t th = stream_track(r, pid, x->context, x->device, x->stream, x->ts_ns);
	gpu_event(r, x->ts_ns, x->ts_ns, r->mem_desc, th, TRACE_EVF_MARK, &ext);
}

static void gpu_work(struct recorder *r, uint32_t pid, const struct ring_gpu_work *x)
{
	struct trace_event_ext ext = {0};
	uint8_t type = (uint8_t)x->h.aux;
	uint32_t desc;
	ext.correlation = x->correlation;
	ext.external_id = xid_of(r, pid, x->correlation);
	if (type == TRACE_EV_MEMCPY || type == TRACE_EV_MEMSET) {
		ext.bytes = x->bytes;
		if (type == TRACE_EV_MEMCPY) {
			ext.copy_kind = x->copy_kind;
			ext.src_kind = x->src_kind;
		}
		ext.dst_kind = x->dst_kind;
		ext.is_async = x->is_async != 0;
		desc = desc_copy(r, type, &ext);
	} else {
		/* the CUDA graph a kernel ran in (graph_id) has no place in the trace */
		memcpy(ext.grid, x->grid, sizeof(ext.grid));
		memcpy(ext.block, x->block, sizeof(ext.block));
		ext.registers = x->registers;
		ext.static_smem = x->static_smem;
		ext.dynamic_smem = x->dynamic_smem;
		if (!trace_event_type_is_device(type))
			type = TRACE_EV_KERNEL;
		if (type == TRACE_EV_KERNEL && string_comm_work(r, x->name_str))
			type = TRACE_EV_COMMUNICATION; /* an NCCL kernel, as imports have it */
		desc = rec_desc_typed(r, string_file_id(r, x->name_str), type);
	}
	uint32_t th = stream_track(r, pid, x->context, x->device, x->stream, x->start_ns);
	gpu_event(r, x->start_ns, x->end_ns, desc, th, (uint8_t)(x->flags & TRACE_EVF_NAME_TRUNCATED),
		  &ext);
}

/* Kineto's names of CUPTI's synchronization types. */
static void gpu_sync(struct recorder *r, uint32_t pid, const struct ring_gpu_sync *x)
{
	static const char *const names[] = {
		[RING_GPU_SYNC_UNKNOWN] = "Unknown Sync",
		[RING_GPU_SYNC_EVENT] = "Event Sync",
		[RING_GPU_SYNC_STREAM_WAIT] = "Stream Wait Event",
		[RING_GPU_SYNC_STREAM] = "Stream Sync",
		[RING_GPU_SYNC_CONTEXT] = "Context Sync",
	};
	unsigned type = x->h.aux <= RING_GPU_SYNC_CONTEXT ? x->h.aux : RING_GPU_SYNC_UNKNOWN;
	if (!r->sync_desc[type])
		r->sync_desc[type] = desc_named(r, names[type], TRACE_EV_USER_DEFINED);
	struct trace_event_ext ext = {0};
	ext.correlation = x->correlation;
	uint64_t stream = x->stream == UINT64_MAX ? SYNC_STREAM : x->stream;
	uint32_t th = stream_track(r, pid, x->context, -1, stream, x->start_ns);
	gpu_event(r, x->start_ns, x->end_ns, r->sync_desc[type], th, 0, &ext);
}

/* Written when new, or when a device is described anew (the trace keeps
 * the last description of an id). */
static void gpu_device(struct recorder *r, const struct ring_gpu_device *x)
{
	struct trace_device d;
	memcpy(&d, &x->d, sizeof(d)); /* padding too (zero in the ring), for the memcmp */
	d.name_str = string_file_id(r, x->d.name_str);
	uint32_t i;
	for (i = 0; i < r->ndevs && r->devs[i].id != d.id; i++)
		;
	if (i < r->ndevs && memcmp(&r->devs[i], &d, sizeof(d)) == 0)
		return; /* every process of the run describes its devices */
	if (i == r->ndevs)
		r->devs = xrealloc(r->devs, ++r->ndevs * sizeof(*r->devs));
	memcpy(&r->devs[i], &d, sizeof(d)); /* padding too, for the memcmp */
	if (trace_writer_device(r->w, &d) != 0)
		write_failed(r);
}

static void gpu_drops(struct recorder *r, uint32_t pid, const struct ring_gpu_drops *x)
{
	if (!x->dropped)
		return;
	const struct rec_process *p = rec_process_find(r, pid, 0);
	uint32_t th = proc_track(r, pid, 1, p ? p->p.start_ns : r->start_ns);
	r->threads[th].dropped += x->dropped;
	r->gpu_dropped += x->dropped;
	if (trace_writer_drops(r->w, th, x->dropped) != 0)
		write_failed(r);
}

/* What a status says when its text is lost (the trace could not be
 * written, or the collector sent none). */
static const char *status_default(unsigned code)
{
	switch (code) {
	case RING_GPU_ON:
		return "CUPTI";
	case RING_GPU_NO_CUPTI:
		return "no GPU activity recorded: CUPTI could not be loaded";
	case RING_GPU_OLD_CUPTI:
		return "no GPU activity recorded: CUPTI is older than CUDA 12's";
	case RING_GPU_PRIVILEGES:
		return "no GPU activity recorded: CUPTI lacks the privileges to profile";
	case RING_GPU_SUBSCRIBER:
		return "no GPU activity recorded: another profiler holds CUPTI";
	case RING_GPU_BUFFERS:
		return "GPU activity records were lost: CUPTI's buffers ran short";
	default:
		return "no GPU activity recorded: CUPTI failed";
	}
}

/* How bad a status is: off (every code but these two) is worse than
 * degraded, which is worse than on. */
static int status_rank(unsigned code)
{
	return code == RING_GPU_ON ? 0 : code == RING_GPU_BUFFERS ? 1 : 2;
}

static void gpu_status(struct recorder *r, const struct ring_gpu_status *x)
{
	unsigned code = x->h.aux;
	/* the text from the trace's string table, which keeps every string
	 * the rings brought, in whichever drain its STRING came */
	size_t len = 0;
	const char *text = "";
	if (x->msg_str < r->strmap_cap && !(r->strcomm[x->msg_str] & STR_GIVEN_UP))
		text = trace_writer_string_text(r->w, string_file_id(r, x->msg_str), &len);
	char *copy = len ? xmemdup0(text, len) : NULL;
	const char *msg = copy ? copy : status_default(code);
	for (uint32_t i = 0; i < r->nstatuses; i++)
		if (r->statuses[i].code == code && strcmp(r->statuses[i].msg, msg) == 0)
			goto out; /* every process of the run reports it */
	r->statuses = xrealloc(r->statuses, (r->nstatuses + 1) * sizeof(*r->statuses));
	r->statuses[r->nstatuses++] = (struct recorder_gpu_status){code, xstrdup(msg)};
	if (code != RING_GPU_ON)
		warning("%s", msg);
out:
	free(copy);
}

/* External ids first, in what one read of a ring brought: CUPTI writes a
 * call's EXTERNAL_CORRELATION record before the call's, but nothing makes
 * the ring promise that order, so within a read every external id is known
 * before a call or work looks it up. */
void rec_gpu_prescan(struct recorder *r, uint32_t pid, const unsigned char *buf, size_t n)
{
	for (size_t off = 0; off < n;) {
		const struct ring_rec *h = (const void *)(buf + off);
		if (h->size < sizeof(*h) || h->size > n - off)
			return; /* drain_slot() reports it */
		if (h->kind == RING_REC_GPU_EXTCORR && h->size >= sizeof(struct ring_gpu_extcorr)) {
			const struct ring_gpu_extcorr *x = (const void *)h;
			xid_put(r, pid, x->correlation, x->external_id);
		}
		off += h->size;
	}
}

/* Record sizes, for records shorter than this build's (ignored). */
static size_t gpu_record_size(unsigned kind)
{
	switch (kind) {
	case RING_REC_GPU_API: return sizeof(struct ring_gpu_api);
	case RING_REC_GPU_WORK: return sizeof(struct ring_gpu_work);
	case RING_REC_GPU_MEMORY: return sizeof(struct ring_gpu_memory);
	case RING_REC_GPU_SYNC: return sizeof(struct ring_gpu_sync);
	case RING_REC_GPU_OVERHEAD: return sizeof(struct ring_gpu_overhead);
	case RING_REC_GPU_EXTCORR: return sizeof(struct ring_gpu_extcorr);
	case RING_REC_GPU_DEVICE: return sizeof(struct ring_gpu_device);
	case RING_REC_GPU_DROPS: return sizeof(struct ring_gpu_drops);
	case RING_REC_GPU_STATUS: return sizeof(struct ring_gpu_status);
	default: return SIZE_MAX;
	}
}

/* A GPU record of process pid, whatever slot brought it. Returns 0 when
 * handled, 1 when it names a string not seen yet (defer it). */
int rec_gpu_record(struct recorder *r, uint32_t pid, const struct ring_rec *h)
{
	if (h->size < gpu_record_size(h->kind))
		return 0;
	switch (h->kind) {
	case RING_REC_GPU_API: {
		const struct ring_gpu_api *x = (const void *)h;
		if (!string_known(r, x->name_str))
			return 1;
		struct trace_event_ext ext = {0};
		ext.correlation = x->correlation;
		ext.external_id = xid_of(r, pid, x->correlation);
		uint32_t th = api_thread(r, pid, x->tid, x->start_ns);
		gpu_event(r, x->start_ns, x->end_ns,
			  rec_desc_typed(r, string_file_id(r, x->name_str), TRACE_EV_CUDA_RUNTIME), th,
			  (uint8_t)(x->flags & TRACE_EVF_NAME_TRUNCATED), &ext);
		return 0;
	}
	case RING_REC_GPU_WORK: {
		const struct ring_gpu_work *x = (const void *)h;
		if (!string_known(r, x->name_str))
			return 1;
		gpu_work(r, pid, x);
		return 0;
	}
	case RING_REC_GPU_MEMORY:
		gpu_memory(r, pid, (const void *)h);
		return 0;
	case RING_REC_GPU_SYNC:
		gpu_sync(r, pid, (const void *)h);
		return 0;
	case RING_REC_GPU_OVERHEAD: {
		const struct ring_gpu_overhead *x = (const void *)h;
		if (!string_known(r, x->name_str))
			return 1;
		uint32_t desc = rec_desc_typed(r, string_file_id(r, x->name_str), TRACE_EV_USER_DEFINED);
		gpu_event(r, x->start_ns, x->end_ns, desc, proc_track(r, pid, 0, x->start_ns), 0, NULL);
		return 0;
	}
	case RING_REC_GPU_EXTCORR: {
		const struct ring_gpu_extcorr *x = (const void *)h;
		xid_put(r, pid, x->correlation, x->external_id);
		return 0;
	}
	case RING_REC_GPU_DEVICE: {
		const struct ring_gpu_device *x = (const void *)h;
		if (!string_known(r, x->d.name_str))
			return 1;
		gpu_device(r, x);
		return 0;
	}
	case RING_REC_GPU_DROPS:
		gpu_drops(r, pid, (const void *)h);
		return 0;
	case RING_REC_GPU_STATUS: {
		const struct ring_gpu_status *x = (const void *)h;
		if (!string_known(r, x->msg_str))
			return 1;
		gpu_status(r, x);
		return 0;
	}
	}
	return 0;
}

/* The tracks GPU records made get their span at the end: a stream's, from
 * its first event's start to its last event's end (the process's life when
 * it has none, as a track of drops only); a thread whose slot never came,
 * from its calls. */
void rec_finish_gpu_tracks(struct recorder *r, uint64_t end_ns)
{
	for (uint32_t i = 0; i < r->nthreads; i++) {
		struct rec_thread *t = &r->threads[i];
		if (t->bound && !t->gpu)
			continue; /* a slot's thread: finish_slot() ended it */
		if (t->t.kind == TRACE_TRACK_STREAM && !t->device_known) {
			const uint64_t *d = hmap_get(&r->ctxdev, t->t.pid, t->t.context);
			if (d)
				t->t.device = (uint32_t)*d;
		}
		if (t->lo <= t->hi) {
			t->t.start_ns = t->lo;
			t->t.end_ns = t->hi;
		} else {
			const struct rec_process *p = rec_process_find(r, t->t.pid, 0);
			t->t.start_ns = p ? p->p.start_ns : r->start_ns;
			t->t.end_ns = p && p->p.end_ns ? p->p.end_ns : end_ns;
		}
		thread_write(r, t);
	}
}

void rec_stats_gpu(const struct recorder *r, struct recorder_stats *stats)
{
	stats->gpu_events = r->gpu_events;
	stats->gpu_dropped = r->gpu_dropped;
	stats->gpu_status = -1;
	stats->gpu_status_msg = NULL;
	stats->gpu_on_msg = NULL;
	for (uint32_t i = 0; i < r->nstatuses; i++) {
		const struct recorder_gpu_status *g = &r->statuses[i];
		if (g->code == RING_GPU_ON && !stats->gpu_on_msg)
			stats->gpu_on_msg = g->msg;
		if (stats->gpu_status < 0 || status_rank(g->code) > status_rank((unsigned)stats->gpu_status)) {
			stats->gpu_status = (int)g->code;
			stats->gpu_status_msg = g->msg;
		}
	}
	stats->gpu_statuses = r->statuses;
	stats->ngpu_statuses = r->nstatuses;
}
