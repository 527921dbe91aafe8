/*
 * import_check.h - the import tests' harness: a JSON text written to a
 * temporary file, imported, and the resulting trace read back whole through
 * the real trace reader into plain arrays the tests assert on.
 */
#ifndef GPDL_TESTS_IMPORT_CHECK_H
#define GPDL_TESTS_IMPORT_CHECK_H

#include "formats/import/import.h"
#include "formats/trace/trace.h"

#include <stddef.h>
#include <stdint.h>

struct got_event {
	char name[512];
	char domain[64];
	uint32_t category;
	char category_name[64]; /* its name in its domain, or "" */
	uint8_t type, flags;
	uint32_t thread;
	uint64_t start, dur;
	int has_ext;
	struct trace_event_ext ext;
	char shapes[256]; /* the text of ext.shapes_str, "" none */
	char pg[64], dtype[64]; /* of ext.pg_str and ext.dtype_str (1.3), "" none */
};

struct got_thread {
	struct trace_thread t;
	char name[128];
};

struct got_device {
	struct trace_device d;
	char name[128];
};

struct got {
	struct trace_header h;
	char host[128], cmdline[256], clock[64], version[128], backend[32];
	uint64_t end_ns;
	struct got_event *ev;
	size_t n;
	struct got_thread threads[64];
	uint32_t nthreads;
	struct trace_process procs[16];
	char proc_names[16][128];
	uint32_t nprocs;
	struct got_device devs[8];
	uint32_t ndevs;
	struct trace_counter ctr[32];
	uint32_t nctr;
	uint64_t drops;
	uint64_t thread_drops[64]; /* by thread index, from the DROPS records */
	uint64_t by_reason[TRACE_DROP_REASON_COUNT + 1]; /* the DROP records' counts */
	char category_names[8][64]; /* by category number, default domain or any */
	struct import_stats st;
};

/* A fresh temporary directory for the test program, and paths in it. */
const char *chk_dir(void);
char *chk_path(const char *name); /* malloc'ed */
void chk_cleanup(void);

/* Writes text to a file in the directory; gz: gzip'ed. The path, malloc'ed. */
char *chk_write(const char *name, const char *text, int gz);

/* Imports json_path and reads the result back; fails the test on error. */
void chk_import(const char *json_path, struct got *g);
/* Imports text (plain or gzip'ed). */
void chk_import_text(const char *text, int gz, struct got *g);
/* The import's error for text (the test fails if it succeeds); the output
 * must not exist afterwards. */
const char *chk_import_error(const char *text, int gz, char *err, size_t errlen);
/* Reads an existing trace. */
void chk_read(const char *trace_path, struct got *g);
void chk_free(struct got *g);

/* The nth (0-based) event named name, or the test fails. */
const struct got_event *chk_find(const struct got *g, const char *name, int nth);
size_t chk_count(const struct got *g, const char *name);
size_t chk_count_type(const struct got *g, uint8_t type);
const struct got_thread *chk_thread_of(const struct got *g, const struct got_event *e);

/* fuzz_import's seed corpus: text written to dir as NAME.json (as it is),
 * NAME.gjson ('g' and the text: the fuzzer gzips the rest) and NAME.json.gz
 * (raw gzip). GPDL_IMPORT_SEEDS=DIR makes the import tests write their
 * fixtures so instead of running. 0 or -1. */
int chk_write_seed(const char *dir, const char *name, const char *text, size_t len);

#endif
