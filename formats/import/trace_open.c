/*
 * trace_open.c - a reader for a gprof-dl trace or an imported JSON trace
 * (see trace_open.h).
 */
#include "formats/import/trace_open.h"

#include "formats/import/import_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct trace_reader *trace_open_any(const char *path, char *err, size_t errlen)
{
	enum import_content content;
	char proc[64], where[512], inner[512];
	struct trace_reader *r;

	if (import_sniff(path, &content) < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (content != IMPORT_CONTENT_JSON && content != IMPORT_CONTENT_GZIP)
		return trace_reader_open(path, err, errlen);

	const char *dir = import_tmpdir();
	int fd = import_tmpfile(dir);
	if (fd < 0) {
		snprintf(err, errlen, "'%s': cannot create a temporary file in '%s' %s: %s", path,
			 dir, "to import it", strerror(errno));
		return NULL;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	snprintf(where, sizeof(where), "the import of '%s' (a temporary file in '%s')", path, dir);
	if (import_run(path, proc, where, 1, 0, NULL, err, errlen) < 0) {
		close(fd);
		return NULL;
	}
	r = trace_reader_open(proc, inner, sizeof(inner));
	close(fd); /* the reader holds the file open; it goes with the reader */
	if (!r)
		snprintf(err, errlen, "'%s': its import cannot be read back: %s", path, inner);
	return r;
}
