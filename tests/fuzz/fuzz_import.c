/*
 * fuzz_import.c - fuzz target: any bytes, imported as a chrome trace
 * (Kineto, the older torch.autograd.profiler, Paddle, gprof-dl's own
 * export: formats/import), and what an import writes read back with the
 * trace reader.
 *
 * The input's first byte chooses how the rest reaches the importer: 'g'
 * gzip-wraps the rest (so that the JSON behind a .json.gz is fuzzed as
 * freely as a plain one); any other byte leaves the whole input as it is (a
 * raw gzip stream included, which fuzzes the damaged-gzip paths). The input
 * goes to a memfd, opened by the importer through /proc/self/fd; the output
 * is a file in a private temporary directory.
 *
 * What is checked, beyond the sanitizers (ASan, UBSan with no recovery,
 * LeakSanitizer) and libFuzzer's time and memory limits:
 *  - a failed import leaves no output and says why on one non-empty line
 *    that names the input;
 *  - a successful import is a trace the reader opens and reads to its END
 *    with no damage, whose every event's desc and thread resolve, and whose
 *    event and counter counts are those the import reported.
 *
 * Seeds: tests/fuzz/corpus/import/ (see tests/fuzz/README); more come from
 * the import tests' fixtures (test_import and test_import_roundtrip write
 * them when GPDL_IMPORT_SEEDS names a directory). Run it with
 * tests/fuzz/run-bounded, or by hand:
 *   build-fuzz/tests/fuzz/fuzz_import -max_total_time=300 -max_len=65536 \
 *       -timeout=10 -dict=tests/fuzz/fuzz_import.dict tests/fuzz/corpus/import
 */
#include "formats/import/import.h"
#include "formats/trace/trace.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct fuzz_read {
	struct trace_reader *r;
	uint64_t events, counters;
};

static int fuzz_event(void *ctx, const struct trace_event *e)
{
	struct fuzz_read *c = ctx;
	const struct trace_desc *d = trace_reader_desc(c->r, e->desc);
	if (!d || !trace_reader_thread(c->r, e->thread))
		abort();
	(void)trace_reader_string(c->r, d->name_str);
	c->events++;
	return 0;
}

static int fuzz_counter(void *ctx, const struct trace_counter *ct)
{
	(void)ct;
	((struct fuzz_read *)ctx)->counters++;
	return 0;
}

/* The import's output, which must be a whole, undamaged trace. */
static void fuzz_check_output(const char *path, const struct import_stats *st)
{
	const struct trace_visitor v = { .event = fuzz_event, .counter = fuzz_counter };
	struct fuzz_read c = {0};
	char err[512];
	uint64_t off;

	c.r = trace_reader_open(path, err, sizeof(err));
	if (!c.r) {
		fprintf(stderr, "fuzz_import: the import does not open: %s\n", err);
		abort();
	}
	if (trace_reader_run(c.r, &v, &c) != 0)
		abort();
	const char *damage = trace_reader_damage(c.r, &off);
	if (damage) {
		fprintf(stderr, "fuzz_import: the import is damaged: %s at %llu\n", damage,
			(unsigned long long)off);
		abort();
	}
	/* the file's events and the phases recovered from them */
	if (c.events != st->events + st->phases || c.counters != st->counters) {
		fprintf(stderr, "fuzz_import: %llu events and %llu counters read, %llu and %llu "
			"imported\n", (unsigned long long)c.events, (unsigned long long)c.counters,
			(unsigned long long)(st->events + st->phases),
			(unsigned long long)st->counters);
		abort();
	}
	for (uint32_t i = 0; i < trace_reader_process_count(c.r); i++)
		(void)trace_reader_string(c.r, trace_reader_process(c.r, i)->cmdline_str);
	for (uint32_t i = 0; i < trace_reader_thread_count(c.r); i++)
		(void)trace_reader_string(c.r, trace_reader_thread(c.r, i)->name_str);
	trace_reader_close(c.r);
}

/* The input file: data as it is, or gzip'ed. */
static void fuzz_put_input(int fd, const unsigned char *data, size_t size, int gz)
{
	if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	if (!gz) {
		if (size && pwrite(fd, data, size, 0) != (ssize_t)size)
			abort();
		return;
	}
	int dup_fd = dup(fd);
	gzFile f = dup_fd >= 0 ? gzdopen(dup_fd, "wb") : NULL;
	if (!f)
		abort();
	if (size && gzwrite(f, data, (unsigned)size) != (int)size)
		abort();
	if (gzclose(f) != Z_OK)
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char dir[64], out[96];

/* The temporary directory goes when the fuzzer or the corpus run ends. */
static void fuzz_remove_dir(void)
{
	unlink(out);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static int fd = -1;
	static char in[64];
	struct import_stats st;
	char err[1024];
	struct stat sb;

	if (fd < 0) {
		const char *t = getenv("TMPDIR");
		fd = memfd_create("fuzz-import", 0);
		snprintf(dir, sizeof(dir), "%s/fuzz-import-XXXXXX",
			 t && *t && strlen(t) < 32 ? t : "/tmp");
		if (fd < 0 || !mkdtemp(dir))
			abort();
		atexit(fuzz_remove_dir);
		snprintf(in, sizeof(in), "/proc/self/fd/%d", fd);
		snprintf(out, sizeof(out), "%s/out.gpdl", dir);
	}
	int gz = size > 0 && data[0] == 'g';
	fuzz_put_input(fd, data + gz, size - (size_t)gz, gz);
	unlink(out);
	if (import_chrome_trace(in, out, 0, &st, err, sizeof(err)) == 0) {
		fuzz_check_output(out, &st);
		unlink(out);
		return 0;
	}
	if (stat(out, &sb) == 0) {
		fprintf(stderr, "fuzz_import: a failed import left its output: %s\n", err);
		abort();
	}
	/* a bad input names the input, a failed write the output */
	if (!err[0] || strchr(err, '\n') || (!strstr(err, in) && !strstr(err, out))) {
		fprintf(stderr, "fuzz_import: a bad message: '%s'\n", err);
		abort();
	}
	return 0;
}
