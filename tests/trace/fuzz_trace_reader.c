/*
 * fuzz_trace_reader.c - libFuzzer target: any bytes, read as a trace file.
 *
 * The reader takes a path, so each input goes to a memfd and is opened through
 * /proc/self/fd. Each input is read twice: as it is, and with every checksum
 * recomputed, because random mutations almost never keep a crc32 right and
 * the decoders behind the checksums are what most needs fuzzing.
 *
 * Build with clang and -DGPDL_FUZZ=ON, then for example:
 *
 *   mkdir -p corpus && BUILD/bin/gpdl-gen-trace corpus/seed.gpdl 300 2
 *   (and a trace with 1.2's sequence numbers, shapes and samples, e.g. one
 *   recorded from a PyTorch program with --record-shapes, and one with 1.3's
 *   ranks and collectives, e.g. one recorded from a torchrun of DDP on gloo)
 *   BUILD/bin/gpdl-gen-trace --gpu corpus/seed-gpu.gpdl 300 2
 *   BUILD/tests/fuzz_trace_reader -max_total_time=60 -max_len=65536 corpus
 */
#include "formats/trace/trace.h"
#include "formats/trace/trace_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

static int fuzz_event(void *ctx, const struct trace_event *e)
{
	struct trace_reader *r = ctx;
	/* the reader's promise: every delivered id resolves */
	if (!trace_reader_desc(r, e->desc) || !trace_reader_thread(r, e->thread))
		abort();
	if (e->ext && e->ext->grid[2] + e->ext->block[2] == 1 && e->ext->total_allocated == 3)
		return 0; /* read the details, so that ASan sees a bad pointer */
	/* 1.2: shapes name a string read before; a sequence number only with has_seq */
	if (e->ext && e->ext->shapes_str && !trace_reader_string(r, e->ext->shapes_str)[0] &&
	    e->ext->samples == 7)
		return 0;
	if (e->ext && !e->ext->has_seq && e->ext->seq_nr)
		abort();
	/* 1.3: a collective's strings were read before; a number or peer only
	 * with its flag, a peer never negative */
	if (e->ext && (e->ext->pg_str || e->ext->dtype_str) &&
	    !trace_reader_string(r, e->ext->pg_str)[0] && !trace_reader_string(r, e->ext->dtype_str)[0] &&
	    e->ext->group_size == 7)
		return 0;
	if (e->ext && ((!e->ext->has_coll_seq && e->ext->coll_seq) ||
		       (!e->ext->has_peer && e->ext->peer) || e->ext->peer < 0))
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
	size_t off;

	if (size < TRACE_FILE_HEADER_SIZE)
		return;
	trace_put32(p + TRACE_FH_CRC, (uint32_t)crc32(0L, p, TRACE_FH_CRC));
	off = trace_le32(p + TRACE_FH_HEADER_SIZE);
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

static void fuzz_read(int fd, const char *path, const unsigned char *data, size_t size)
{
	const struct trace_visitor v = { .event = fuzz_event, .thread = fuzz_thread,
					 .device = fuzz_device, .process = fuzz_process };
	struct trace_reader *r;
	char err[256];
	uint64_t off;

	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	r = trace_reader_open(path, err, sizeof(err));
	if (!r)
		return;
	trace_reader_run(r, &v, r);
	for (uint32_t i = 1; i <= trace_reader_desc_count(r); i++)
		(void)trace_reader_string(r, trace_reader_desc(r, i)->name_str);
	(void)trace_reader_category_name(r, 0, 1);
	(void)trace_reader_damage(r, &off);
	trace_reader_close(r);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	unsigned char *fixed;

	if (fd < 0) {
		fd = memfd_create("fuzz-trace", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	fuzz_read(fd, path, data, size);
	fixed = malloc(size ? size : 1);
	if (!fixed)
		abort();
	memcpy(fixed, data, size);
	fuzz_fix_checksums(fixed, size);
	if (memcmp(fixed, data, size))
		fuzz_read(fd, path, fixed, size);
	free(fixed);
	return 0;
}
