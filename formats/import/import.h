/*
 * import.h - chrome-trace JSON from other profilers, converted to a gprof-dl
 * trace: the PyTorch profiler's (Kineto's object form, and the older
 * torch.autograd.profiler's plain array), PaddlePaddle's export_chrome_tracing
 * output, and gprof-dl's own chrome export. gprof-dl-import(1) is the user's
 * view of it, with the category -> event type table.
 *
 * How: a streaming (SAX) parse with yajl, through zlib's gzread so that a
 * .json.gz reads as directly as a .json (gzread passes plain files through),
 * detected by content, never by name. Events go to an unlinked temporary
 * spill file (import_spill.h) while strings, descs and tracks are interned in
 * memory; when the whole file is read, and so the header is known, the trace
 * is written through the trace_writer API. Memory therefore depends on the
 * number of distinct names and threads, never on the number of events.
 *
 * Times: ts and dur are microseconds in these files; they are converted to
 * nanoseconds from their decimal text (import_num.h), never through a double.
 */
#ifndef GPDL_FORMATS_IMPORT_H
#define GPDL_FORMATS_IMPORT_H

#include "formats/trace/trace.h"

#include <stddef.h>
#include <stdint.h>

enum import_format {
	IMPORT_FMT_CHROME = 0,    /* a chrome trace of no known producer */
	IMPORT_FMT_KINETO,        /* torch.profiler (Kineto): object form */
	IMPORT_FMT_TORCH_LEGACY,  /* torch.autograd.profiler: plain array */
	IMPORT_FMT_PADDLE,        /* paddle.profiler export_chrome_tracing */
	IMPORT_FMT_GPROF_DL,      /* gprof-dl export --chrome */
};

struct import_stats {
	enum import_format format;
	uint64_t json_bytes; /* of JSON text read (after decompression) */
	uint64_t events;     /* written: ranges, marks and memory events */
	uint64_t phases;     /* written too: Forward, Backward and Optimization ranges
				recovered from a PyTorch profiler trace (import_phases.c) */
	uint64_t counters;   /* counter samples written */
	uint64_t ignored;    /* objects in traceEvents not imported: flows, unknown "ph", no "ts" */
	uint64_t tracks, strings, descs, devices;
	uint64_t spill_bytes; /* the temporary spill file's size */
	/* events dropped or repaired, by enum trace_drop_reason (never
	 * TRACE_DROP_RING_FULL): the trace's DROP records say the same */
	uint64_t fixed[TRACE_DROP_REASON_COUNT];
};

/* The name of a format, for messages: "PyTorch profiler (Kineto)", ... */
const char *import_format_name(enum import_format f);

/* Converts the chrome-trace JSON file in_path (plain or gzip) to a gprof-dl
 * trace at out_path, which must not exist unless force. Nothing is created
 * at out_path before the input has been read whole and found good, and a
 * failed write removes what was written. 0, or -1 with a one-line message in
 * err naming in_path (bad input) or out_path (cannot write). stats may be
 * NULL. */
int import_chrome_trace(const char *in_path, const char *out_path, int force,
			struct import_stats *stats, char *err, size_t errlen);

/* A hook called once per event imported with the count so far, for a
 * progress line (common/progress.h's progress_tick is cheap enough);
 * NULL, the default, for none. Process-wide: set it once, before importing. */
void import_set_progress(void (*tick)(uint64_t events));

/* What a file holds, by its first bytes. */
enum import_content {
	IMPORT_CONTENT_OTHER = 0, /* not recognised: let the trace reader say why */
	IMPORT_CONTENT_GPDL,      /* "GPRFDL\r\n" */
	IMPORT_CONTENT_JSON,      /* '{' or '[' after blanks (and a UTF-8 BOM) */
	IMPORT_CONTENT_GZIP,      /* 1f 8b */
};

/* -1 with errno when the file cannot be opened or read. */
int import_sniff(const char *path, enum import_content *content);

#endif
