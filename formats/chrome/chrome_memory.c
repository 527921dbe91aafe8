/*
 * chrome_memory.c - a counter track of the bytes in use per device, as
 * Perfetto and chrome://tracing draw "ph": "C" events: one sample at each
 * allocation and free, on the process that made it, named by the device
 * ("Memory in use (CPU)", "Memory in use (GPU0)") with one series, "bytes".
 *
 * The value is the level the event itself carries (trace_event_ext's
 * total_allocated: what PyTorch's allocator counts, or what the recorder
 * counted from CUPTI's allocations and frees), so the track needs no state
 * and a window cut out of a trace draws the same levels. An allocation
 * whose level is unknown (0: an import without "Total Allocated") gives no
 * sample; a free to 0 does (nothing is left in use).
 *
 * The PyTorch profiler writes no such track (its memory view is TensorBoard's
 * own), so nothing here has to match Kineto's names.
 */
#include "formats/chrome/chrome_memory.h"

#include "formats/chrome/chrome_internal.h"
#include "formats/trace/trace.h"

#include <stdio.h>

void chrome_memory_counter(struct chrome_writer *c, const struct trace_thread *t,
			   const struct trace_event *e)
{
	const struct trace_event_ext *x = e->ext;
	if (!x || (!x->total_allocated && (int64_t)x->bytes > 0))
		return;
	struct json_writer *j = &c->json;
	char name[48];
	if (x->device < 0)
		snprintf(name, sizeof(name), "Memory in use (CPU)");
	else
		snprintf(name, sizeof(name), "Memory in use (GPU%d)", x->device);
	/* a GPU stream's events sit on the device's process: its counter too */
	chrome_next_item(c);
	json_begin_object(j);
	chrome_key_string(j, "name", name);
	chrome_key_string(j, "ph", "C");
	chrome_key_us(j, "ts", chrome_rel_ns(c, e->start_ns));
	chrome_key_uint(j, "pid", chrome_pid(c, t));
	chrome_key(j, "args");
	json_begin_object(j);
	chrome_key_uint(j, "bytes", x->total_allocated);
	json_end_object(j);
	json_end_object(j);
}
