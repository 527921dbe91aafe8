/*
 * csv_files.c - the files of one CSV export, written as one (csv_files.h).
 */
#include "formats/csv/csv_files.h"

#include "formats/async_out.h"
#include "common/error.h"
#include "common/output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

unsigned csv_files_add(struct csv_files *s, char *path, char *other)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 32;
		s->path = xrealloc(s->path, s->cap * sizeof(*s->path));
		s->other = xrealloc(s->other, s->cap * sizeof(*s->other));
		s->of = xrealloc(s->of, s->cap * sizeof(*s->of));
	}
	s->path[s->n] = path;
	s->other[s->n] = other;
	s->of[s->n] = (struct outfile){.fd = -1, .slot = -1};
	return s->n++;
}

int csv_files_mkdir(struct csv_files *s, const char *dir, const char *what)
{
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		return error("'%s' exists and is not a directory; %s writes a directory", dir, what);
	}
	size_t n = strlen(dir);
	char *probe = xmalloc(n + 3), err[1024];
	snprintf(probe, n + 3, "%s/.", dir); /* the directories above "dir/." */
	int rc = csv_partition_mkdirs(probe, &s->dirs, err, sizeof(err));
	free(probe);
	return rc != 0 ? error("%s", err) : 0;
}

int csv_files_check(const struct csv_files *s, const char *const *inputs, int n, int force,
		    const char *hint)
{
	struct stat st;
	char err[2048];
	for (unsigned i = 0; i < s->n; i++)
		for (int other = 0; other < 2; other++) {
			const char *path = other ? s->other[i] : s->path[i];
			if (!path)
				continue;
			if (outfile_check_inputs(path, inputs, n, err, sizeof(err)) != 0)
				return error("%s", err);
			if (lstat(path, &st) == 0 && !force)
				return error("'%s' exists; %s", path, hint);
		}
	return 0;
}

FILE *csv_files_open(struct csv_files *s, unsigned i, int force, int gzip_level, size_t buffer)
{
	char err[2048];
	struct outfile *of = &s->of[i];
	if (csv_partition_mkdirs(s->path[i], &s->dirs, err, sizeof(err)) != 0 ||
	    outfile_open(of, s->path[i], force ? OUTFILE_FORCE : 0, 0666, err, sizeof(err)) != 0) {
		s->said = 1;
		error("%s", err);
		return NULL;
	}
	of->f = gzip_level ? csv_partition_gzip(of->fd, gzip_level) : async_out_fdopen(of->fd, buffer);
	if (!of->f) {
		s->said = 1;
		output_fail(of, errno);
	}
	return of->f;
}

int csv_files_close(struct csv_files *s, unsigned i)
{
	char err[2048];
	if (s->of[i].fd < 0 || outfile_close(&s->of[i], err, sizeof(err)) == 0)
		return 0;
	if (!s->said)
		error("%s", err);
	s->said = 1;
	return -1;
}

int csv_files_commit(struct csv_files *s)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->of[i].path && output_commit(&s->of[i]) != 0)
			return -1;
	/* the other suffix's files of these parts are replaced too: an engine
	 * reads DIR/<table>/ whole */
	for (unsigned i = 0; i < s->n; i++)
		if (s->other[i])
			unlink(s->other[i]);
	return 0;
}

void csv_files_remove(struct csv_files *s)
{
	for (unsigned i = 0; i < s->n; i++)
		outfile_abort(&s->of[i]);
	csv_partition_rmdirs(&s->dirs);
}

unsigned long long csv_files_bytes(const struct csv_files *s)
{
	struct stat st;
	unsigned long long bytes = 0;
	for (unsigned i = 0; i < s->n; i++)
		if (s->path[i] && stat(s->path[i], &st) == 0 && S_ISREG(st.st_mode))
			bytes += (unsigned long long)st.st_size;
	return bytes;
}

void csv_files_free(struct csv_files *s)
{
	for (unsigned i = 0; i < s->n; i++) {
		outfile_abort(&s->of[i]); /* nothing, once committed */
		free(s->path[i]);
		free(s->other[i]);
	}
	free(s->path);
	free(s->other);
	free(s->of);
	csv_partition_dirs_free(&s->dirs);
	memset(s, 0, sizeof(*s));
}
