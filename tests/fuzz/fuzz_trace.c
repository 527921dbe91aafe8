/*
 * fuzz_trace.c - fuzz target: any bytes, read as a gprof-dl trace, first by
 * the trace reader alone, then through the entry point of `gprof-dl summary`
 * (analysis_load, analysis_prepare) and every view of summary_write.
 *
 * The reader takes a path, so each input goes to a memfd opened through
 * /proc/self/fd. Each input is read twice: as it is, and with every checksum
 * recomputed, because random mutations almost never keep a crc32 right and
 * the decoders behind the checksums are what most needs fuzzing.
 *
 * What is checked, beyond the sanitizers: the reader's promises (every id an
 * event carries resolves; a field is set only with its flag; a device found
 * by its id is the one delivered) and that the analysis, given whatever the
 * reader delivered, renders every view without a crash, a leak or an exit.
 *
 * Seeds: tests/fuzz/corpus/trace/ (see tests/fuzz/README). Run it with
 * tests/fuzz/run-bounded, or by hand:
 *   build-fuzz/tests/fuzz/fuzz_trace -max_total_time=60 tests/fuzz/corpus/trace
 */
#include "formats/trace/trace.h"
#include "formats/trace/trace_format.h"
#include "lib/analysis/store/analysis.h"
#include "lib/analysis/summary.h"
#include "lib/analysis/views/view.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_event(void *ctx, const struct trace_event *e)
{
	struct trace_reader *r = ctx;
	const struct trace_event_ext *x = e->ext;
	/* the reader's promise: every delivered id resolves */
	if (!trace_reader_desc(r, e->desc) || !trace_reader_thread(r, e->thread))
		abort();
	if (!x)
		return 0;
	/* read the details, so that ASan sees a bad pointer */
	(void)trace_reader_string(r, x->shapes_str);
	(void)trace_reader_string(r, x->pg_str);
	(void)trace_reader_string(r, x->dtype_str);
	/* a number or a peer only with its flag, a peer never negative */
	if ((!x->has_seq && x->seq_nr) || (!x->has_coll_seq && x->coll_seq) ||
	    (!x->has_peer && x->peer) || x->peer < 0)
		abort();
	return 0;
}

static int fuzz_process(void *ctx, const struct trace_process *p)
{
	(void)trace_reader_string(ctx, p->cmdline_str);
	(void)trace_reader_string(ctx, p->backend_str);
	return 0;
}

static int fuzz_device(void *ctx, const struct trace_device *d)
{
	if (trace_reader_device_by_id(ctx, d->id) != d)
		abort();
	(void)trace_reader_string(ctx, d->name_str);
	return 0;
}

static int fuzz_thread(void *ctx, const struct trace_thread *t)
{
	(void)trace_reader_string(ctx, t->name_str);
	return 0;
}

/* Recomputes the file header's and every whole chunk's checksum in place. */
static void fuzz_fix_checksums(unsigned char *p, size_t size)
{
	if (size < TRACE_FILE_HEADER_SIZE)
		return;
	trace_put32(p + TRACE_FH_CRC, (uint32_t)crc32(0L, p, TRACE_FH_CRC));
	size_t off = trace_le32(p + TRACE_FH_HEADER_SIZE);
	if (off != TRACE_FILE_HEADER_SIZE)
		return;
	while (size - off >= TRACE_CHUNK_HEADER_SIZE) {
		unsigned char *h = p + off;
		uint32_t len = trace_le32(h + TRACE_CH_LENGTH);
		if (len > size - off - TRACE_CHUNK_HEADER_SIZE)
			return;
		trace_put32(h + TRACE_CH_CRC,
			    (uint32_t)crc32(crc32(0L, h, TRACE_CH_CRC), h + TRACE_CHUNK_HEADER_SIZE, len));
		off += TRACE_CHUNK_HEADER_SIZE + len;
	}
}

static void fuzz_reader(const char *path)
{
	const struct trace_visitor v = {.event = fuzz_event, .thread = fuzz_thread,
					.device = fuzz_device, .process = fuzz_process};
	char err[1024];
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));
	if (!r)
		return;
	trace_reader_run(r, &v, r);
	for (uint32_t i = 1; i <= trace_reader_desc_count(r); i++)
		(void)trace_reader_string(r, trace_reader_desc(r, i)->name_str);
	(void)trace_reader_category_name(r, 0, 1);
	uint64_t off;
	(void)trace_reader_damage(r, &off);
	trace_reader_close(r);
}

/* What `gprof-dl summary --op-detail --thread-sep --view V...` does with the
 * file, every view, in the format the input's size picks. */
static void fuzz_summary(const char *path, size_t size)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	struct analysis a;
	char err[1024];
	analysis_init(&a);
	if (analysis_load(&a, path, err, sizeof(err)) == 0) {
		struct summary_opts o = {.view = {.sort = (enum sort_key)(size % 8),
						  .unit = TIME_UNIT_MS, .op_detail = 1,
						  .thread_sep = (int)(size / 8 % 2)},
					 .format = (enum summary_format)(size % 3)};
		for (unsigned i = 0; i < view_registry_count; i++)
			summary_add_view(&o, &view_registry[i]);
		analysis_prepare(&a);
		(void)summary_write(&a, &o, null);
	} else if (!err[0] || strchr(err, '\n') || !strstr(err, path)) {
		fprintf(stderr, "fuzz_trace: a bad message: '%s'\n", err);
		abort();
	}
	analysis_free(&a);
}

static void fuzz_read(int fd, const char *path, const uint8_t *data, size_t size)
{
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	fuzz_reader(path);
	/* JSON and gzip go to the importer, which fuzz_import fuzzes */
	if (size >= TRACE_MAGIC_LEN && memcmp(data, TRACE_MAGIC, TRACE_MAGIC_LEN) == 0)
		fuzz_summary(path, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz-trace", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	fuzz_read(fd, path, data, size);
	unsigned char *fixed = malloc(size ? size : 1);
	if (!fixed)
		abort();
	memcpy(fixed, data, size);
	fuzz_fix_checksums(fixed, size);
	if (memcmp(fixed, data, size) != 0)
		fuzz_read(fd, path, fixed, size);
	free(fixed);
	return 0;
}
