/*
 * import.c - the importer's driver (see import.h): opens the input through
 * zlib, runs the parse into the tables and the spill, then the writing.
 */
#include "formats/import/import_int.h"
#include "formats/import/import_tell.h"

#include "common/error.h"
#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IMPORT_GZ_BUFFER (1u << 20)

const char *import_format_name(enum import_format f)
{
	switch (f) {
	case IMPORT_FMT_KINETO:
		return "PyTorch profiler (Kineto)";
	case IMPORT_FMT_TORCH_LEGACY:
		return "PyTorch autograd profiler";
	case IMPORT_FMT_PADDLE:
		return "PaddlePaddle profiler";
	case IMPORT_FMT_GPROF_DL:
		return "gprof-dl chrome export";
	default:
		return "chrome trace";
	}
}

int import_sniff(const char *path, enum import_content *content)
{
	unsigned char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t i = 0, total = 0;

	*content = IMPORT_CONTENT_OTHER;
	if (fd < 0)
		return -1;
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		i = 0;
		if (total == 0) {
			if (n >= 8 && memcmp(buf, "GPRFDL\r\n", 8) == 0) {
				*content = IMPORT_CONTENT_GPDL;
				break;
			}
			if (n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
				*content = IMPORT_CONTENT_GZIP;
				break;
			}
			if (n >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf)
				i = 3; /* a UTF-8 byte order mark */
		}
		total += (size_t)n;
		while (i < (size_t)n &&
		       (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
			i++;
		if (i < (size_t)n) {
			if (buf[i] == '{' || buf[i] == '[')
				*content = IMPORT_CONTENT_JSON;
			break;
		}
	}
	close(fd);
	return 0;
}

static void import_init(struct import *im, const char *in_path, char *err, size_t errlen)
{
	memset(im, 0, sizeof(*im));
	im->in_path = in_path;
	im->err = err;
	im->errlen = errlen;
	if (errlen)
		err[0] = '\0';
	istrings_init(&im->strs);
	idescs_init(&im->descs);
	itracks_init(&im->tracks);
	hmap_init(&im->proc_names);
	hmap_init(&im->thread_names);
	hmap_init(&im->synth);
	hmap_init(&im->cat_ids);
	im->spill.fd = -1;
}

static void import_release(struct import *im)
{
	istrings_free(&im->strs);
	idescs_free(&im->descs);
	itracks_free(&im->tracks);
	hmap_free(&im->proc_names);
	hmap_free(&im->thread_names);
	hmap_free(&im->synth);
	hmap_free(&im->cat_ids);
	free(im->synth_strs);
	free(im->cats);
	free(im->devs);
	free(im->drops);
	free(im->oprocs);
	free(im->othreads);
	free(im->metas);
	free(im->cevs);
	import_phases_free(&im->phases);
	spill_close(&im->spill);
}

static enum import_format import_format_of(const struct import *im)
{
	if (im->hdr.ours)
		return IMPORT_FMT_GPROF_DL;
	if (im->array_form)
		return IMPORT_FMT_TORCH_LEGACY;
	if (im->hdr.saw_paddle)
		return IMPORT_FMT_PADDLE;
	if (im->hdr.saw_kineto)
		return IMPORT_FMT_KINETO;
	return IMPORT_FMT_CHROME;
}

/* A plain (not gzip) regular file is mapped, not copied through read(): its
 * length, with *map set, or 0 (then zlib reads it: gzip, a pipe, an empty
 * or unmappable file). */
static size_t import_map(int fd, void **map)
{
	struct stat st;
	unsigned char magic[2];

	*map = NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2 ||
	    (uint64_t)st.st_size > SIZE_MAX)
		return 0;
	if (pread(fd, magic, 2, 0) != 2 || (magic[0] == 0x1f && magic[1] == 0x8b))
		return 0;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return 0;
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	*map = m;
	return (size_t)st.st_size;
}

/* The parse: 0, or -1 with the message in im->err. */
static int import_read(struct import *im)
{
	int fd = open(im->in_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return import_fail(im, "cannot open '%s': %s", im->in_path, strerror(errno));
	void *map;
	size_t maplen = import_map(fd, &map);
	gzFile f = NULL;
	if (!map) {
		f = gzdopen(fd, "rb");
		if (!f) {
			close(fd);
			return import_fail(im, "'%s': %s", im->in_path, strerror(ENOMEM));
		}
		gzbuffer(f, IMPORT_GZ_BUFFER);
	} else {
		close(fd);
	}
	int rc;
	if (spill_open(&im->spill, import_tmpdir()) < 0) {
		rc = import_fail(im, "cannot create a temporary file in '%s': %s",
				 import_tmpdir(), strerror(errno));
	} else {
		rc = import_parse(im, f, map, maplen);
		im->st.format = import_format_of(im);
	}
	if (f)
		gzclose(f);
	if (map)
		munmap(map, maplen);
	return rc;
}

/* Shared by import_chrome_trace() and trace_open_any(): remove says whether
 * a failed write may delete out_path (a name the caller gave, not a
 * /proc/self/fd link). */
int import_run(const char *in_path, const char *out_path, const char *out_name, int force,
	       int remove, struct import_stats *stats, char *err, size_t errlen)
{
	struct import im;
	int rc;

	char *quoted = NULL;

	import_init(&im, in_path, err, errlen);
	if (!out_name) {
		size_t n = strlen(out_path) + 3;
		quoted = xmalloc(n);
		snprintf(quoted, n, "'%s'", out_path);
	}
	im.out_name = out_name ? out_name : quoted;
	rc = import_read(&im);
	if (rc == 0) {
		/* a failure leaves no file: the temporary one is removed */
		rc = import_emit(&im, out_path, force, !remove);
	}
	if (stats)
		*stats = im.st;
	import_release(&im);
	free(quoted);
	return rc;
}

int import_chrome_trace(const char *in_path, const char *out_path, int force,
			struct import_stats *stats, char *err, size_t errlen)
{
	struct stat out;
	enum import_content content;

	if (import_sniff(in_path, &content) == 0 && content == IMPORT_CONTENT_GPDL) {
		snprintf(err, errlen, "'%s' is a gprof-dl trace already; nothing to import",
			 in_path);
		return -1;
	}
	if (stat(out_path, &out) == 0) {
		if (outfile_check_inputs(out_path, &in_path, 1, err, errlen) != 0)
			return -1;
		if (!force) {
			snprintf(err, errlen, "'%s' exists; use --force to overwrite it, %s",
				 out_path, "or -o to choose another name");
			return -1;
		}
	}
	return import_run(in_path, out_path, NULL, force, 1, stats, err, errlen);
}
