/*
 * trace_open.c - a reader for a gprof-dl trace or an imported JSON trace
 * (see trace_open.h).
 */
#include "formats/trace/trace_open.h"

#include "common/outfile.h"

#include "formats/import/import_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- inputs read once: spooled ------------------------------------------- */

/* One input that can be read only once, copied whole: the copy (an unlinked
 * temporary file, open for the process's life) or why it could not be made,
 * so that a second open of the same name neither waits nor reads again. */
struct spool {
	char *name;
	int fd;
	char proc[64]; /* "/proc/self/fd/N" of the copy */
	char *err;
};

static struct spool *spools;
static size_t nspools;

#define FIFO_WAIT_DEFAULT_S 10.0
#define FIFO_POLL_MS 100

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How long to wait for a FIFO's writer: GPROF_DL_FIFO_WAIT seconds. */
static double fifo_wait_s(void)
{
	const char *env = getenv("GPROF_DL_FIFO_WAIT");
	char *end;
	double v = env && *env ? strtod(env, &end) : FIFO_WAIT_DEFAULT_S;
	if (env && *env && (*end || !(v >= 0) || v > 1e6))
		v = FIFO_WAIT_DEFAULT_S;
	return v;
}

/*
 * A FIFO opened without blocking has a writer once a read gives data or
 * EAGAIN (a writer holds it open, silent); a read of 0 is "no writer yet".
 * Waits up to fifo_wait_s() for one, then reads as usual, blocking: 1 when
 * a writer came (fd then blocking), 0 when none did, -1 on a read error.
 */
static int fifo_writer(int fd, char *first, ssize_t *nfirst, size_t cap)
{
	double deadline = now_s() + fifo_wait_s();
	int came = 0; /* poll saw a writer come (and maybe go) */
	for (;;) {
		ssize_t n = read(fd, first, cap);
		if (n > 0 || (n < 0 && errno == EAGAIN) || (n == 0 && came)) {
			*nfirst = n > 0 ? n : 0;
			int fl = fcntl(fd, F_GETFL);
			return fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? -1 : 1;
		}
		if (n < 0 && errno != EINTR)
			return -1;
		double left = deadline - now_s();
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, left * 1000 < FIFO_POLL_MS ? (int)(left * 1000) + 1 : FIFO_POLL_MS) > 0)
			came = (p.revents & (POLLIN | POLLHUP)) != 0;
	}
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static char *spool_message(const char *fmt, const char *name, const char *what)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), fmt, name, what);
	return strdup(buf);
}

/* 1 when the first bytes of an input can start what trace_open_any reads
 * (gprof-dl's magic, gzip's, JSON after blanks or a byte order mark), 0
 * when they cannot, -1 when only blanks came so far. */
static int could_be_trace(const unsigned char *p, size_t n)
{
	size_t i = n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf ? 3 : 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	if (i == n)
		return -1;
	return p[i] == 'G' || p[i] == 0x1f || p[i] == '{' || p[i] == '[';
}

/* Copies in (the input called name) to a new temporary file: its fd, or -1
 * with *err set. first holds the n bytes already read. An input that cannot
 * be a trace ("yes |", "< /dev/zero") is not copied past its first read:
 * that is enough for the reader's message, and the copy cannot fill the disk. */
static int spool_copy(int in, const char *name, const char *first, ssize_t n, char **err)
{
	const char *dir = import_tmpdir();
	char buf[65536];
	int out = outfile_scratch(dir);
	if (out < 0) {
		*err = spool_message("'%s': cannot copy it to a temporary file: %s", name,
				     strerror(errno));
		return -1;
	}
	int looks = -1;
	for (;;) {
		if (n > 0 && write_all(out, first, (size_t)n) < 0) {
			*err = spool_message("'%s': cannot copy it to a temporary file: %s", name,
					     strerror(errno));
			close(out);
			return -1;
		}
		if (n > 0 && looks < 0 && (looks = could_be_trace((const unsigned char *)first,
								   (size_t)n)) == 0)
			return out;
		first = buf;
		while ((n = read(in, buf, sizeof(buf))) < 0 && errno == EINTR)
			;
		if (n < 0) {
			*err = spool_message("cannot read '%s': %s", name, strerror(errno));
			close(out);
			return -1;
		}
		if (n == 0)
			return out;
	}
}

/* Fills s: the copy of the input s->name, or why there is none. */
static void spool_make(struct spool *s, const struct stat *st)
{
	char first[4096];
	ssize_t n = 0;
	int own = 0, in = 0; /* "-": standard input */
	if (strcmp(s->name, "-") != 0) {
		in = open(s->name, O_RDONLY | O_CLOEXEC | (S_ISFIFO(st->st_mode) ? O_NONBLOCK : 0));
		if (in < 0) {
			s->err = spool_message("cannot open '%s': %s", s->name, strerror(errno));
			return;
		}
		own = 1;
	}
	if (isatty(in)) {
		s->err = spool_message("'%s': %s", s->name, "a terminal, not a trace");
	} else if (own && S_ISFIFO(st->st_mode)) {
		int got = fifo_writer(in, first, &n, sizeof(first));
		if (got < 0)
			s->err = spool_message("cannot read '%s': %s", s->name, strerror(errno));
		else if (got == 0)
			s->err = spool_message("'%s': %s", s->name,
					       "a FIFO with no writer (GPROF_DL_FIFO_WAIT says how "
					       "many seconds to wait for one)");
	}
	if (!s->err && (s->fd = spool_copy(in, s->name, first, n, &s->err)) >= 0)
		snprintf(s->proc, sizeof(s->proc), "/proc/self/fd/%d", s->fd);
	if (own)
		close(in);
}

const char *trace_open_path(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int is_stdin = strcmp(path, "-") == 0;
	/* pipes and FIFOs are read once; files, directories and devices (a
	 * terminal, /dev/zero) go to the reader as they are, which opens them or
	 * says why it cannot */
	if (!is_stdin && (stat(path, &st) != 0 || !S_ISFIFO(st.st_mode)))
		return path;
	if (is_stdin && fstat(STDIN_FILENO, &st) != 0) {
		snprintf(err, errlen, "'-': standard input: %s", strerror(errno));
		return NULL;
	}
	size_t i = 0;
	while (i < nspools && strcmp(spools[i].name, path) != 0)
		i++;
	if (i == nspools) {
		struct spool *grown = realloc(spools, (nspools + 1) * sizeof(*spools));
		char *name = strdup(path);
		if (!grown || !name) {
			spools = grown ? grown : spools;
			free(name);
			snprintf(err, errlen, "'%s': %s", path, strerror(ENOMEM));
			return NULL;
		}
		spools = grown;
		spools[nspools++] = (struct spool){.name = name, .fd = -1};
		spool_make(&spools[i], &st);
	}
	if (spools[i].fd < 0) {
		snprintf(err, errlen, "%s", spools[i].err ? spools[i].err : "out of memory");
		return NULL;
	}
	return spools[i].proc;
}

/* The importer names the file it reads: a copy's messages name the input. */
void trace_open_name_input(char *err, size_t errlen, const char *from, const char *path)
{
	char quoted[80], *at;
	snprintf(quoted, sizeof(quoted), "'%s'", from);
	if (strcmp(from, path) == 0 || !(at = strstr(err, quoted)))
		return;
	char *rest = strdup(at + strlen(quoted));
	if (!rest)
		return;
	snprintf(at, errlen - (size_t)(at - err), "'%s'%s", path, rest);
	free(rest);
}

struct trace_reader *trace_open_any(const char *path, char *err, size_t errlen)
{
	enum import_content content;
	char proc[64], where[512], inner[512];
	struct trace_reader *r;

	const char *from = trace_open_path(path, err, errlen);
	if (!from)
		return NULL;
	if (import_sniff(from, &content) < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (content != IMPORT_CONTENT_JSON && content != IMPORT_CONTENT_GZIP) {
		int fd = open(from, O_RDONLY | O_CLOEXEC); /* a copy: its own offset */
		if (fd < 0) {
			snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
			return NULL;
		}
		return trace_reader_open_fd(fd, path, err, errlen);
	}

	const char *dir = import_tmpdir();
	int fd = outfile_scratch(dir);
	if (fd < 0) {
		snprintf(err, errlen, "'%s': cannot create a temporary file in '%s' %s: %s", path,
			 dir, "to import it", strerror(errno));
		return NULL;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	snprintf(where, sizeof(where), "the import of '%s' (a temporary file in '%s')", path, dir);
	if (import_run(from, proc, where, 1, 0, NULL, err, errlen) < 0) {
		trace_open_name_input(err, errlen, from, path);
		close(fd);
		return NULL;
	}
	r = trace_reader_open(proc, inner, sizeof(inner));
	close(fd); /* the reader holds the file open; it goes with the reader */
	if (!r)
		snprintf(err, errlen, "'%s': its import cannot be read back: %s", path, inner);
	return r;
}
