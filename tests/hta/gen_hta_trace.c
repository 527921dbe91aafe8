/*
 * gen_hta_trace.c - writes the GPU fixture trace (tests/chrome/trace_fixture.h)
 * and, beside it, what it wrote as JSON, for check_hta.py to compute what
 * Holistic Trace Analysis must find in the chrome export:
 *
 *   gen-hta-trace TRACE.gpdl WRITTEN.json
 *
 * WRITTEN.json: {"rank", "world_size", "backend", "sm_count",
 *   "events": [{"name", "type", "stream" (null on the host), "ts_us",
 *               "dur_us", "correlation", "copy_kind", "src_kind",
 *               "dst_kind"}, ...]}
 * with the kinds as the trace's numbers (enum trace_copy_kind and
 * trace_memory_kind), so that the checker names copies on its own.
 */
#include "tests/chrome/trace_fixture.h"

#include <inttypes.h>
#include <stdio.h>

static void write_event(FILE *f, const struct fixg_event *e, int last)
{
	const struct trace_event_ext *x = e->has_ext ? &e->ext : NULL;
	fprintf(f, "  {\"name\": \"%s\", \"type\": \"%s\", ", e->name, trace_event_type_name(e->type));
	if (e->track == FIXG_TRACK_HOST)
		fputs("\"stream\": null, ", f);
	else
		fprintf(f, "\"stream\": %" PRIu64 ", ", fixg_streams[e->track]);
	fprintf(f, "\"ts_us\": %" PRIu64 ", \"dur_us\": %" PRIu64 ", ", e->start_rel_ns / 1000,
		e->dur_ns / 1000);
	fprintf(f, "\"correlation\": %" PRIu64 ", \"copy_kind\": %u, \"src_kind\": %u, "
		   "\"dst_kind\": %u}%s\n",
		x ? x->correlation : 0, x ? x->copy_kind : 0, x ? x->src_kind : 0,
		x ? x->dst_kind : 0, last ? "" : ",");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: gen-hta-trace TRACE.gpdl WRITTEN.json\n");
		return 2;
	}
	if (fix_write_gpu(argv[1]) != 0) {
		perror(argv[1]);
		return 1;
	}
	FILE *f = fopen(argv[2], "w");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	/* the fixture's names are plain ASCII: no escaping needed */
	fprintf(f, "{\"rank\": 0, \"world_size\": 1, \"backend\": \"nccl\", \"sm_count\": %u,\n",
		fixg_device.sm_count);
	fputs(" \"events\": [\n", f);
	for (size_t i = 0; i < fixg_nevents; i++)
		write_event(f, &fixg_events[i], i + 1 == fixg_nevents);
	fputs(" ]}\n", f);
	return fclose(f) == 0 ? 0 : 1;
}
