/*
 * chrome_gpu.c - GPU work in the chrome export, in the PyTorch profiler's
 * (Kineto's) shape, so that tools built for its traces (Holistic Trace
 * Analysis, the TensorBoard plugin, Perfetto's flow arrows) read ours:
 *
 *   tracks     pid = device id, tid = stream id; "GPU N" processes and
 *              "stream N" threads in the metadata
 *   args       "External id", "device", "context", "stream", "correlation",
 *              "grid", "block", "registers per thread", "shared memory",
 *              "blocks per SM", "warps per SM", "est. achieved occupancy %",
 *              "bytes", "memory bandwidth (GB/s)"
 *   flows      "ac2g" arrows from the API call to the GPU work it launched,
 *              id = the correlation id
 *   memory     "[memory]" instants with "Bytes", "Addr", "Device Type",
 *              "Device Id", "Total Allocated"
 *   collective (1.3) "Collective name", "dtype", "In msg nelems", "Group
 *              size", "Process Group Name", "Seq", as the profiler writes
 *              them on record_param_comms and NCCL kernels; "peer", ours
 *   top level  "distributedInfo" before traceEvents, "deviceProperties" after
 *
 * What Kineto has no name for gets a self-describing one of ours ("async",
 * "static shared memory", "recorded_name", ...), so that an import of this
 * export gets every detail back. Nothing here keeps state per event: the
 * flow arrows are written as each end is met, not paired.
 */
#include "formats/chrome/chrome_internal.h"

#include <string.h>

/* Measures (blocks per SM, bandwidth) to the millionth: more than the
 * PyTorch profiler's floats carry, and formatted without printf, which the
 * shortest round-trip form would cost on every kernel. */
#define MEASURE_DECIMALS 6

const char *chrome_category(unsigned type, int on_stream)
{
	switch (type) {
	case TRACE_EV_OPERATOR:
	case TRACE_EV_OPERATOR_INNER:
		return "cpu_op";
	case TRACE_EV_PYTHON_OP:
		return "python_function";
	case TRACE_EV_CUDA_RUNTIME:
		return "cuda_runtime";
	case TRACE_EV_KERNEL:
		return "kernel";
	case TRACE_EV_COMMUNICATION: /* an NCCL kernel, or the operator that launched it */
		return on_stream ? "kernel" : "cpu_op";
	case TRACE_EV_MEMCPY:
		return "gpu_memcpy";
	case TRACE_EV_MEMSET:
		return "gpu_memset";
	case TRACE_EV_MEMORY:
		return "cpu_instant_event";
	default: /* ProfileStep, Dataloader, Forward, Backward, Optimization, UserDefined */
		return on_stream ? "gpu_user_annotation" : "user_annotation";
	}
}

const char *chrome_gpu_name(const struct trace_desc *d, const struct trace_event *e,
			    const char *recorded, char *buf, size_t size)
{
	if (d->type == TRACE_EV_MEMCPY && e->ext->copy_kind) {
		export_memcpy_name(buf, size, e->ext);
		return buf;
	}
	if (d->type == TRACE_EV_MEMSET && e->ext->dst_kind) {
		export_memset_name(buf, size, e->ext);
		return buf;
	}
	return recorded;
}

static void key_dims(struct json_writer *j, const char *k, const uint32_t d[3])
{
	json_key(j, k);
	json_begin_array(j);
	for (int i = 0; i < 3; i++)
		json_uint(j, d[i]);
	json_end_array(j);
}

static int has_launch(const struct trace_event_ext *x)
{
	return x->grid[0] || x->grid[1] || x->grid[2] || x->block[0] || x->block[1] ||
	       x->block[2] || x->registers || x->static_smem || x->dynamic_smem;
}

static void launch_args(struct chrome_writer *c, const struct trace_thread *t,
			const struct trace_event_ext *x)
{
	struct json_writer *j = &c->json;
	key_dims(j, "grid", x->grid);
	key_dims(j, "block", x->block);
	chrome_key_uint(j, "registers per thread", x->registers);
	chrome_key_uint(j, "shared memory", (uint64_t)x->static_smem + x->dynamic_smem);
	chrome_key_uint(j, "static shared memory", x->static_smem);
	chrome_key_uint(j, "dynamic shared memory", x->dynamic_smem);
	struct export_launch l;
	const struct trace_device *dev =
		t->kind == TRACE_TRACK_STREAM ? trace_reader_device_by_id(c->reader, t->device)
					      : NULL;
	if (export_launch_measure(dev, x, &l) != 0)
		return; /* the device's properties are not known (yet) */
	chrome_key(j, "blocks per SM");
	json_fixed(j, l.blocks_per_sm, MEASURE_DECIMALS);
	chrome_key(j, "warps per SM");
	json_fixed(j, l.warps_per_sm, MEASURE_DECIMALS);
	if (l.occupancy_pct >= 0) /* an integer, as the PyTorch profiler writes it */
		chrome_key_uint(j, "est. achieved occupancy %", (uint64_t)(l.occupancy_pct + 0.5));
}

static void transfer_args(struct chrome_writer *c, const struct trace_desc *d,
			  const struct trace_event *e)
{
	struct json_writer *j = &c->json;
	const struct trace_event_ext *x = e->ext;
	chrome_key_uint(j, "bytes", x->bytes);
	chrome_key(j, "memory bandwidth (GB/s)");
	json_fixed(j, export_bandwidth_gbps(x->bytes, e->dur_ns), MEASURE_DECIMALS);
	if (x->is_async) {
		chrome_key(j, "async");
		json_bool(j, 1);
	}
	/* the kinds a composed name does not carry */
	if (d->type == TRACE_EV_MEMCPY && !x->copy_kind && (x->src_kind || x->dst_kind)) {
		chrome_key_string(j, "src kind", trace_memory_kind_name(x->src_kind));
		chrome_key_string(j, "dst kind", trace_memory_kind_name(x->dst_kind));
	}
}

void chrome_gpu_args(struct chrome_writer *c, const struct trace_desc *d,
		     const struct trace_thread *t, const struct trace_event *e)
{
	struct json_writer *j = &c->json;
	const struct trace_event_ext *x = e->ext;
	if (x && x->external_id)
		chrome_key_uint(j, "External id", x->external_id);
	if (t->kind == TRACE_TRACK_STREAM) {
		chrome_key_uint(j, "device", t->device);
		chrome_key_uint(j, "context", t->context);
		chrome_key_uint(j, "stream", t->stream);
	}
	if (!x)
		return;
	if (x->correlation)
		chrome_key_uint(j, "correlation", x->correlation);
	if (has_launch(x))
		launch_args(c, t, x);
	if (d->type == TRACE_EV_MEMCPY || d->type == TRACE_EV_MEMSET || x->bytes)
		transfer_args(c, d, e);
	char buf[128];
	const char *recorded = trace_reader_string(c->reader, d->name_str);
	if (chrome_gpu_name(d, e, recorded, buf, sizeof(buf)) != recorded &&
	    strcmp(buf, recorded) != 0)
		chrome_key_string(j, "recorded_name", recorded);
}

/* ---- collectives (1.3) --------------------------------------------------- */

int chrome_has_comm(const struct trace_event_ext *x)
{
	return x->has_coll_seq || x->pg_str || x->group_size || x->dtype_str || x->has_peer;
}

void chrome_comm_args(struct chrome_writer *c, const struct trace_desc *d,
		      const struct trace_event_ext *x)
{
	struct json_writer *j = &c->json;
	const char *op = export_comm_op(trace_reader_string(c->reader, d->name_str));
	if (op)
		chrome_key_string(j, "Collective name", op);
	if (x->dtype_str) {
		const char *dtype = trace_reader_string(c->reader, x->dtype_str);
		unsigned size = export_dtype_size(dtype, strlen(dtype));
		chrome_key_string(j, "dtype", dtype);
		/* the element count Kineto gives, where the bytes make one */
		if (size && x->bytes % size == 0)
			chrome_key_uint(j, "In msg nelems", x->bytes / size);
	}
	if (x->group_size)
		chrome_key_uint(j, "Group size", x->group_size);
	if (x->pg_str)
		chrome_key_string(j, "Process Group Name", trace_reader_string(c->reader, x->pg_str));
	if (x->has_coll_seq)
		chrome_key_uint(j, "Seq", x->coll_seq);
	if (x->has_peer)
		chrome_key_int(j, "peer", x->peer);
}

void chrome_memory_event(struct chrome_writer *c, const struct trace_desc *d,
			 const struct trace_thread *t, const struct trace_event *e)
{
	struct json_writer *j = &c->json;
	const struct trace_event_ext *x = e->ext;
	int stream = t->kind == TRACE_TRACK_STREAM;
	const char *recorded = trace_reader_string(c->reader, d->name_str);
	chrome_next_item(c);
	json_begin_object(j);
	chrome_key_string(j, "name", "[memory]");
	chrome_key_string(j, "cat", chrome_category(d->type, stream));
	chrome_key_string(j, "ph", "i");
	chrome_key_string(j, "s", "t");
	chrome_key_us(j, "ts", chrome_rel_ns(c, e->start_ns));
	chrome_key_uint(j, "pid", chrome_pid(c, t));
	chrome_key_uint(j, "tid", chrome_tid(c, t));
	chrome_key(j, "args");
	json_begin_object(j);
	chrome_key_string(j, "type", trace_event_type_name(d->type));
	if (strcmp(recorded, "[memory]") != 0)
		chrome_key_string(j, "recorded_name", recorded);
	if (x) {
		if (x->total_allocated)
			chrome_key_uint(j, "Total Allocated", x->total_allocated);
		chrome_key_int(j, "Bytes", (int64_t)x->bytes);
		chrome_key_uint(j, "Addr", x->address);
		chrome_key_int(j, "Device Type", x->device < 0 ? 0 : 1); /* CPU 0, CUDA 1 */
		chrome_key_int(j, "Device Id", x->device);
		if (x->dst_kind)
			chrome_key_string(j, "memory kind", trace_memory_kind_name(x->dst_kind));
		if (x->correlation)
			chrome_key_uint(j, "correlation", x->correlation);
		if (x->external_id)
			chrome_key_uint(j, "External id", x->external_id);
	}
	json_end_object(j);
	json_end_object(j);
}

void chrome_flow(struct chrome_writer *c, const struct trace_thread *t, const struct trace_event *e)
{
	struct json_writer *j = &c->json;
	int stream = t->kind == TRACE_TRACK_STREAM;
	chrome_next_item(c);
	json_begin_object(j);
	chrome_key_string(j, "name", "ac2g");
	chrome_key_string(j, "cat", "ac2g");
	chrome_key_string(j, "ph", stream ? "f" : "s");
	chrome_key_uint(j, "id", chrome_flow_id(c, e->ext->correlation));
	chrome_key_us(j, "ts", chrome_rel_ns(c, e->start_ns));
	chrome_key_uint(j, "pid", chrome_pid(c, t));
	chrome_key_uint(j, "tid", chrome_tid(c, t));
	if (stream) /* binds to the enclosing slice: the kernel that starts here */
		chrome_key_string(j, "bp", "e");
	json_end_object(j);
	c->flows++;
}

/* ---- outside traceEvents ------------------------------------------------- */

void chrome_write_distributed(struct chrome_writer *c)
{
	const struct trace_header *h = c->header;
	char line[256];
	if (h->rank < 0)
		return;
	/* "rank": N with a space, as the PyTorch profiler writes it: Holistic
	 * Trace Analysis finds a file's rank by that pattern, line by line. */
	int n = snprintf(line, sizeof(line), "\"distributedInfo\": {\"rank\": %d", (int)h->rank);
	if (h->world_size > 0)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", \"world_size\": %d",
			      (int)h->world_size);
	chrome_raw(c, line);
	if (h->dist_backend && *h->dist_backend) {
		chrome_raw(c, ", \"backend\": ");
		json_string(&c->json, h->dist_backend); /* at depth 0: just the string */
	}
	chrome_raw(c, "},\n");
}

/* Whether a stream track before index i is on the same device. */
static int device_seen(struct chrome_writer *c, uint32_t i, uint32_t device)
{
	for (uint32_t k = 0; k < i; k++) {
		const struct trace_thread *t = trace_reader_thread(c->reader, k);
		if (t && t->kind == TRACE_TRACK_STREAM && t->device == device)
			return 1;
	}
	return 0;
}

static void gpu_process(struct chrome_writer *c, uint32_t device)
{
	char name[32];
	snprintf(name, sizeof(name), "GPU %u", device);
	chrome_meta_begin(c, "process_name", device, 0);
	chrome_key_string(&c->json, "name", name);
	chrome_meta_end(c);
	const struct trace_device *d = trace_reader_device_by_id(c->reader, device);
	const char *model = d ? trace_reader_string(c->reader, d->name_str) : "";
	chrome_meta_begin(c, "process_labels", device, 0);
	chrome_key_string(&c->json, "labels", *model ? model : name);
	chrome_meta_end(c);
	/* after the host processes, whose sort indexes count from 0 */
	chrome_meta_begin(c, "process_sort_index", device, 0);
	chrome_key_uint(&c->json, "sort_index", UINT64_C(0x1000000) + device);
	chrome_meta_end(c);
}

void chrome_write_gpu_tracks(struct chrome_writer *c)
{
	uint32_t n = trace_reader_thread_count(c->reader);
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_thread *t = trace_reader_thread(c->reader, i);
		if (!t || t->kind != TRACE_TRACK_STREAM)
			continue;
		if (!device_seen(c, i, t->device))
			gpu_process(c, t->device);
		char name[48];
		snprintf(name, sizeof(name), "stream %llu", (unsigned long long)t->stream);
		chrome_meta_begin(c, "thread_name", t->device, t->stream);
		chrome_key_string(&c->json, "name",
				  t->name_str ? trace_reader_string(c->reader, t->name_str) : name);
		chrome_meta_end(c);
		chrome_meta_begin(c, "thread_sort_index", t->device, t->stream);
		chrome_key_uint(&c->json, "sort_index", t->stream);
		chrome_meta_end(c);
	}
}

static void device_properties(struct json_writer *j, struct trace_reader *r,
			      const struct trace_device *d)
{
	json_begin_object(j);
	chrome_key_uint(j, "id", d->id);
	chrome_key_string(j, "name", trace_reader_string(r, d->name_str));
	chrome_key_uint(j, "totalGlobalMem", d->total_memory);
	chrome_key_uint(j, "computeMajor", d->cc_major);
	chrome_key_uint(j, "computeMinor", d->cc_minor);
	chrome_key_uint(j, "maxThreadsPerBlock", d->max_threads_per_block);
	chrome_key_uint(j, "maxThreadsPerMultiprocessor", d->max_threads_per_sm);
	chrome_key_uint(j, "maxBlocksPerMultiProcessor", d->max_blocks_per_sm);
	chrome_key_uint(j, "regsPerBlock", d->regs_per_block);
	chrome_key_uint(j, "regsPerMultiprocessor", d->regs_per_sm);
	chrome_key_uint(j, "warpSize", d->warp_size);
	chrome_key_uint(j, "sharedMemPerBlock", d->smem_per_block);
	chrome_key_uint(j, "sharedMemPerMultiprocessor", d->smem_per_sm);
	chrome_key_uint(j, "numSms", d->sm_count);
	chrome_key_uint(j, "clockRate", d->clock_khz);
	json_end_object(j);
}

void chrome_write_devices(struct chrome_writer *c)
{
	uint32_t n = trace_reader_device_count(c->reader);
	if (n == 0)
		return;
	chrome_raw(c, "\"deviceProperties\":");
	/* a fresh top-level value for the JSON writer, which tracks nesting */
	struct json_writer *j = &c->json;
	json_begin_array(j);
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_device *d = trace_reader_device(c->reader, i);
		if (d)
			device_properties(j, c->reader, d);
	}
	json_end_array(j);
	chrome_raw(c, ",\n");
}
