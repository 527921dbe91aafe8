/*
 * test_import_roundtrip.c - gprof-dl's own chrome export imported back: the
 * fixture traces of tests/chrome (host ranges and marks with every flag,
 * domains and categories, names of every byte, counters, drops; and the GPU
 * fixture: streams, kernels, copies, sets, memory events, correlation ids,
 * devices, a rank) are exported with the real chrome writer, imported, and
 * compared with the original event by event: every name, type, flag, time
 * (to the nanosecond), track and detail, and the header, counters, devices
 * and drops. What the export cannot carry is listed where it is skipped.
 */
#include "formats/chrome/chrome_writer.h"
#include "tests/chrome/trace_fixture.h"
#include "tests/import/import_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Exports trace to json with the real chrome writer. */
static void export_chrome(const char *trace, const char *json)
{
	char err[512];
	struct trace_reader *r = trace_reader_open(trace, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	FILE *f = fopen(json, "w");
	assert_non_null(f);
	struct export_writer *w = chrome_writer_new(f);
	assert_int_equal(export_writer_run(w, r), 0);
	export_writer_destroy(w);
	assert_int_equal(fclose(f), 0);
	trace_reader_close(r);
}

/* JSON carries valid UTF-8 only: an invalid name comes back with U+FFFD. */
static int valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		int n = *p < 0x80	  ? 0
			: (*p >> 5) == 6  ? 1
			: (*p >> 4) == 14 ? 2
			: (*p >> 3) == 30 ? 3
					  : -1;
		if (n < 0 || (n == 1 && *p < 0xc2))
			return 0;
		uint32_t cp = n == 0 ? *p : *p & (0x3f >> n);
		for (int i = 1; i <= n; i++) {
			if ((p[i] >> 6) != 2)
				return 0;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if (n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
			return 0;
		if (n == 3 && (cp < 0x10000 || cp > 0x10ffff))
			return 0;
		p += n + 1;
	}
	return 1;
}

static int ext_equal(const struct trace_event_ext *a, const struct trace_event_ext *b)
{
	return a->correlation == b->correlation && a->external_id == b->external_id &&
	       a->bytes == b->bytes && a->address == b->address && !memcmp(a->grid, b->grid, sizeof(a->grid)) &&
	       !memcmp(a->block, b->block, sizeof(a->block)) && a->registers == b->registers &&
	       a->static_smem == b->static_smem && a->dynamic_smem == b->dynamic_smem &&
	       a->device == b->device && a->copy_kind == b->copy_kind && a->src_kind == b->src_kind &&
	       a->dst_kind == b->dst_kind && a->is_async == b->is_async &&
	       a->total_allocated == b->total_allocated;
}

static int same_track(const struct got *ga, const struct got_event *a, const struct got *gb,
		      const struct got_event *b)
{
	const struct trace_thread *x = &ga->threads[a->thread].t, *y = &gb->threads[b->thread].t;
	if (x->kind != y->kind)
		return 0;
	if (x->kind == TRACE_TRACK_STREAM)
		return x->device == y->device && x->stream == y->stream && x->pid == y->pid;
	return x->pid == y->pid && x->tid == y->tid;
}

static int same_event(const struct got *ga, const struct got_event *a, const struct got *gb,
		      const struct got_event *b)
{
	if (a->start != b->start || a->dur != b->dur || a->type != b->type || a->flags != b->flags)
		return 0;
	if (valid_utf8(a->name) ? strcmp(a->name, b->name) != 0 : !strstr(b->name, "\xef\xbf\xbd"))
		return 0;
	if (strcmp(a->domain, b->domain) != 0)
		return 0;
	/* a named category keeps its name, an unnamed one its number */
	if (a->category_name[0] ? strcmp(a->category_name, b->category_name) != 0
				: a->category != b->category)
		return 0;
	if (a->has_ext != b->has_ext || (a->has_ext && !ext_equal(&a->ext, &b->ext)))
		return 0;
	return same_track(ga, a, gb, b);
}

/* Every original event has exactly one equal imported event. */
static void compare_events(const struct got *orig, const struct got *back)
{
	assert_int_equal(back->n, orig->n);
	char *used = calloc(back->n + 1, 1);
	for (size_t i = 0; i < orig->n; i++) {
		size_t j;
		for (j = 0; j < back->n; j++)
			if (!used[j] && same_event(orig, &orig->ev[i], back, &back->ev[j]))
				break;
		if (j == back->n)
			fail_msg("event '%s' at %llu (+%llu ns, type %u, flags %u) did not come back",
				 orig->ev[i].name, (unsigned long long)orig->ev[i].start,
				 (unsigned long long)orig->ev[i].dur, orig->ev[i].type, orig->ev[i].flags);
		used[j] = 1;
	}
	free(used);
}

static void compare_threads(const struct got *orig, const struct got *back)
{
	/* every track with events is there, with its name (threads' own
	 * start and end are not in the export: they become their events') */
	for (uint32_t i = 0; i < orig->nthreads; i++) {
		const struct trace_thread *t = &orig->threads[i].t;
		int found = 0;
		for (uint32_t j = 0; j < back->nthreads && !found; j++) {
			const struct trace_thread *u = &back->threads[j].t;
			if (t->kind != u->kind || t->pid != u->pid ||
			    (t->kind == TRACE_TRACK_HOST ? t->tid != u->tid
							 : t->device != u->device || t->stream != u->stream))
				continue;
			found = 1;
			if (t->kind == TRACE_TRACK_STREAM)
				assert_int_equal(u->context, t->context);
			if (valid_utf8(orig->threads[i].name))
				assert_string_equal(back->threads[j].name, orig->threads[i].name);
		}
		int has_events = 0;
		for (size_t k = 0; k < orig->n; k++)
			has_events |= orig->ev[k].thread == i;
		if (has_events && !found)
			fail_msg("track %u (pid %u tid %u) did not come back", i, t->pid, t->tid);
	}
}

static void compare_header(const struct got *orig, const struct got *back)
{
	assert_int_equal(back->st.format, IMPORT_FMT_GPROF_DL);
	assert_int_equal(back->h.pid, orig->h.pid);
	assert_int_equal(back->h.rank, orig->h.rank);
	assert_int_equal(back->h.start_ns, orig->h.start_ns);
	assert_int_equal(back->end_ns, orig->end_ns);
	assert_int_equal(back->h.wall_offset_ns, orig->h.wall_offset_ns);
	assert_int_equal(back->h.ncpus, orig->h.ncpus);
	assert_int_equal(back->h.sources, orig->h.sources);
	assert_string_equal(back->host, orig->host);
	assert_string_equal(back->cmdline, orig->cmdline);
	assert_string_equal(back->clock, orig->clock);
	assert_string_equal(back->version, orig->version);
	/* a world size the recording did not know (0 or -1) stays unknown */
	if (orig->h.world_size > 0)
		assert_int_equal(back->h.world_size, orig->h.world_size);
	else
		assert_true(back->h.world_size <= 0);
	assert_string_equal(back->backend, orig->backend);
	assert_int_equal(back->drops, orig->drops);
}

static void compare_counters(const struct got *orig, const struct got *back)
{
	assert_int_equal(back->nctr, orig->nctr);
	for (uint32_t i = 0; i < orig->nctr; i++) {
		const struct trace_counter *a = &orig->ctr[i], *b = &back->ctr[i];
		assert_int_equal(b->ts_ns, a->ts_ns);
		assert_int_equal(b->id, a->id);
		assert_true(b->value == a->value);
		/* the export writes a process's pid 0 as the root's */
		assert_int_equal(b->pid, a->pid || a->id == TRACE_CTR_CPU_SYSTEM ? a->pid : orig->h.pid);
	}
}

static void compare_devices(const struct got *orig, const struct got *back)
{
	assert_int_equal(back->ndevs, orig->ndevs);
	for (uint32_t i = 0; i < orig->ndevs; i++) {
		struct trace_device a = orig->devs[i].d, b = back->devs[i].d;
		assert_string_equal(back->devs[i].name, orig->devs[i].name);
		a.name_str = b.name_str = 0;
		assert_int_equal(b.id, a.id);
		assert_int_equal(b.sm_count, a.sm_count);
		assert_int_equal(b.max_threads_per_sm, a.max_threads_per_sm);
		assert_int_equal(b.max_threads_per_block, a.max_threads_per_block);
		assert_int_equal(b.max_blocks_per_sm, a.max_blocks_per_sm);
		assert_int_equal(b.warp_size, a.warp_size);
		assert_int_equal(b.regs_per_sm, a.regs_per_sm);
		assert_int_equal(b.regs_per_block, a.regs_per_block);
		assert_int_equal(b.smem_per_sm, a.smem_per_sm);
		assert_int_equal(b.smem_per_block, a.smem_per_block);
		assert_int_equal(b.total_memory, a.total_memory);
		assert_int_equal(b.clock_khz, a.clock_khz);
		assert_int_equal(b.cc_major, a.cc_major);
		assert_int_equal(b.cc_minor, a.cc_minor);
	}
}

static void roundtrip(int (*write)(const char *path))
{
	char *trace = chk_path("orig.gpdl"), *json = chk_path("orig.json");
	assert_int_equal(write(trace), 0);
	export_chrome(trace, json);
	struct got orig, back;
	chk_read(trace, &orig);
	chk_import(json, &back);
	compare_header(&orig, &back);
	compare_events(&orig, &back);
	compare_threads(&orig, &back);
	compare_counters(&orig, &back);
	compare_devices(&orig, &back);
	chk_free(&orig);
	chk_free(&back);
	unlink(trace);
	unlink(json);
	free(trace);
	free(json);
}

static void test_roundtrip_host(void **state)
{
	(void)state;
	roundtrip(fix_write);
}

static void test_roundtrip_gpu(void **state)
{
	(void)state;
	roundtrip(fix_write_gpu);
}

static int teardown(void **state)
{
	(void)state;
	chk_cleanup();
	fix_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_host),
		cmocka_unit_test(test_roundtrip_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
