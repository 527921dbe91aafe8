/* csv_partition.c - the hive-partitioned CSV file set: paths, _schema.json, each part written. */
#include "formats/csv/csv_partition.h"
#include "common/outfile.h"

#include "formats/json/json_writer.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define GZ_BUFFER (1u << 17) /* zlib's input and output buffers, each */

char *csv_partition_host(char *buf, size_t size, const char *host)
{
	size_t n = 0;
	if (!size)
		return buf;
	for (const char *s = host ? host : ""; *s && n + 1 < size && n < CSV_PARTITION_HOST_MAX; s++) {
		char c = *s;
		int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '_' || c == '-';
		buf[n++] = ok ? c : '_';
	}
	buf[n] = '\0';
	if (!n)
		snprintf(buf, size, "unknown");
	return buf;
}

const char *csv_partition_table(unsigned k)
{
	return k < CSV_FILE_COUNT ? csv_export_table_name((enum csv_export_file)k, 1)
				  : csv_agg_table_name((enum csv_agg_table)(k - CSV_FILE_COUNT));
}

size_t csv_partition_columns(unsigned k, const struct csv_column **cols)
{
	return k < CSV_FILE_COUNT ? csv_export_columns((enum csv_export_file)k, 1, cols)
				  : csv_agg_columns((enum csv_agg_table)(k - CSV_FILE_COUNT), cols);
}

char *csv_partition_path(const char *dir, unsigned k, int32_t rank, const char *host,
			 uint32_t pid, int gzip)
{
	char h[CSV_PARTITION_HOST_MAX + 1];
	const char *table = csv_partition_table(k);
	size_t n = strlen(dir) + strlen(table) + sizeof(h) + 64;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s/rank=%d/part-%s-%u.csv%s", dir, table, (int)rank,
		 csv_partition_host(h, sizeof(h), host), (unsigned)pid, gzip ? ".gz" : "");
	return p;
}

static void dirs_add(struct csv_partition_dirs *d, const char *path)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 32;
		d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	d->v[d->n++] = xstrdup(path);
}

/* One directory: 0 when it is there now (made here, recorded, or found). */
static int make_one(const char *p, struct csv_partition_dirs *made, char *err, size_t errlen)
{
	struct stat st;
	if (mkdir(p, 0777) == 0) {
		dirs_add(made, p);
		return 0;
	}
	/* EEXIST: another host may have made it a moment ago, which is fine */
	int e = errno;
	if (e == EEXIST && stat(p, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (e == EEXIST)
		snprintf(err, errlen, "'%s' exists and is not a directory", p);
	else
		snprintf(err, errlen, "cannot create '%s': %s", p, strerror(e));
	return -1;
}

int csv_partition_mkdirs(const char *path, struct csv_partition_dirs *made, char *err,
			 size_t errlen)
{
	char *p = xstrdup(path);
	char *last = strrchr(p, '/');
	int rc = 0;
	if (!last || last == p) {
		free(p);
		return 0; /* a file in "." or "/" */
	}
	*last = '\0';
	/* from the top down, so that each mkdir has its parent; a component
	 * that exists costs a failed mkdir, no more than a stat would */
	for (char *s = p + 1; rc == 0 && *s; s++) {
		if (*s != '/' || s[-1] == '/')
			continue;
		*s = '\0';
		rc = make_one(p, made, err, errlen);
		*s = '/';
	}
	if (rc == 0)
		rc = make_one(p, made, err, errlen);
	free(p);
	return rc;
}

void csv_partition_rmdirs(struct csv_partition_dirs *made)
{
	/* rmdir fails where another host's files are: theirs stay */
	for (size_t i = made->n; i-- > 0;)
		rmdir(made->v[i]);
}

void csv_partition_dirs_free(struct csv_partition_dirs *made)
{
	for (size_t i = 0; i < made->n; i++)
		free(made->v[i]);
	free(made->v);
	memset(made, 0, sizeof(*made));
}

/* ---- gzip through stdio --------------------------------------------------- */

/* errno for a failed gz call: the system's when zlib says Z_ERRNO. */
static int gz_errno(gzFile gz, int saved)
{
	int zerr = Z_OK;
	gzerror(gz, &zerr);
	return zerr == Z_ERRNO && saved ? saved : EIO;
}

static ssize_t gz_write(void *cookie, const char *buf, size_t n)
{
	gzFile gz = cookie;
	size_t done = 0;
	while (done < n) {
		size_t chunk = n - done > (1u << 30) ? (1u << 30) : n - done;
		errno = 0;
		int w = gzwrite(gz, buf + done, (unsigned)chunk);
		if (w <= 0) {
			errno = gz_errno(gz, errno);
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)w;
	}
	return (ssize_t)done;
}

static int gz_close(void *cookie)
{
	errno = 0;
	int rc = gzclose_w(cookie); /* flushes the stream's end, closes fd */
	if (rc == Z_OK)
		return 0;
	errno = rc == Z_ERRNO && errno ? errno : EIO;
	return -1;
}

FILE *csv_partition_gzip(int fd, int level)
{
	char mode[8];
	snprintf(mode, sizeof(mode), "wb%d", level < 1 ? 1 : level > 9 ? 9 : level);
	/* gzclose of a failed set-up must not close the caller's fd */
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0)
		return NULL;
	gzFile gz = gzdopen(dup_fd, mode);
	if (!gz) {
		close(dup_fd);
		errno = ENOMEM;
		return NULL;
	}
	gzbuffer(gz, GZ_BUFFER);
	cookie_io_functions_t io = {.write = gz_write, .close = gz_close};
	FILE *f = fopencookie(gz, "w", io);
	if (!f) {
		int e = errno;
		gzclose_w(gz);
		errno = e;
		return NULL;
	}
	close(fd); /* the stream owns its copy from here */
	return f;
}

/* ---- _schema.json ------------------------------------------------------------ */

static const char *sql_type(enum csv_coltype t)
{
	switch (t) {
	case CSV_COL_INT:
		return "BIGINT";
	case CSV_COL_REAL:
		return "DOUBLE";
	case CSV_COL_TEXT:
		break;
	}
	return "VARCHAR";
}

int csv_partition_schema_to(FILE *out)
{
	struct json_writer w;
	json_writer_init(&w, out, 1);
	json_begin_object(&w);
	json_key(&w, "format");
	json_string(&w, "gprof-dl partitioned CSV");
	json_key(&w, "version");
	json_int(&w, CSV_PARTITION_VERSION);
	json_key(&w, "layout");
	json_string(&w, "<table>/rank=<rank>/part-<host>-<pid>.csv, or .csv.gz with --gzip");
	json_key(&w, "csv");
	json_begin_object(&w);
	json_key(&w, "header");
	json_bool(&w, 1);
	json_key(&w, "delimiter");
	json_string(&w, ",");
	json_key(&w, "quote");
	json_string(&w, "\"");
	json_key(&w, "null");
	json_string(&w, "");
	json_key(&w, "encoding");
	json_string(&w, "UTF-8");
	json_end_object(&w);
	json_key(&w, "clock");
	json_string(&w, "job clock: every *_ns time is Unix wall time in ns (the trace's time + its "
			"wall_offset_ns); durations as recorded");
	json_key(&w, "partition");
	json_begin_array(&w);
	json_begin_object(&w);
	json_key(&w, "name");
	json_string(&w, "rank");
	json_key(&w, "type");
	json_string(&w, "INTEGER");
	json_end_object(&w);
	json_end_array(&w);
	json_key(&w, "tables");
	json_begin_object(&w);
	for (unsigned i = 0; i < CSV_PARTITION_TABLES; i++) {
		const struct csv_column *cols;
		size_t n = csv_partition_columns(i, &cols);
		json_key(&w, csv_partition_table(i));
		json_begin_object(&w);
		json_key(&w, "columns");
		json_begin_array(&w);
		for (size_t c = 0; c < n; c++) {
			json_begin_object(&w);
			json_key(&w, "name");
			json_string(&w, cols[c].name);
			json_key(&w, "type");
			json_string(&w, sql_type(cols[c].type));
			json_end_object(&w);
		}
		json_end_array(&w);
		json_end_object(&w);
	}
	json_end_object(&w);
	json_end_object(&w);
	fputc('\n', out);
	return json_writer_error(&w) || ferror(out) ? -1 : 0;
}

int csv_partition_write_schema(const char *dir, char *err, size_t errlen)
{
	size_t n = strlen(dir) + sizeof(CSV_PARTITION_SCHEMA) + 64;
	char *path = xmalloc(n);
	snprintf(path, n, "%s/%s", dir, CSV_PARTITION_SCHEMA);
	/* a temporary file of this process's own beside it (common/outfile.h):
	 * hosts writing at once never share one, and the rename replaces the
	 * schema whole (every host writes the same one) */
	struct outfile of;
	int rc = -1;
	if (outfile_open(&of, path, OUTFILE_FORCE, 0666, err, errlen) != 0)
		goto out;
	FILE *f = outfile_fdopen(&of);
	if (!f) {
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
		outfile_abort(&of);
		goto out;
	}
	errno = 0;
	int bad = csv_partition_schema_to(f) != 0 || fflush(f) != 0;
	int e = errno ? errno : EIO;
	if (bad) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
		outfile_abort(&of);
		goto out;
	}
	rc = outfile_commit(&of, err, errlen);
out:
	free(path);
	return rc;
}
