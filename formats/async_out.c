/*
 * async_out.c - the writing thread behind a stdio stream (see async_out.h).
 *
 * fopencookie() gives glibc's buffering; its write callback copies the
 * block into the stream's own buffer and signals the thread, after waiting
 * for the block before to be written. So at most one write is in flight and
 * blocks reach the file in order. async_out_hand() gives the thread a block
 * of the caller's instead, after what the stream holds: no copy.
 */
#include "formats/async_out.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct async_out {
	int fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *block;       /* the block being written, or to be */
	const char *handed; /* a block of the caller's being written, or to be
			     * (async_out_hand); NULL: block */
	size_t cap, len;   /* len > 0: a block waits for the thread or is in write */
	char *stdio_buf;   /* the stream's buffer, ours: glibc ignores setvbuf's size
			    * without one, and a cookie stream then gets 8 KiB writes */
	int err;           /* errno of the first failed write; sticky */
	int stop;
	FILE *stream;      /* ours, for async_out_of() */
	struct async_out *next;
	/* the thread's: a regular file's writeback is started as it grows */
	int regular;
	off_t written, started;
};

/* Starts the disk's writes of what the thread wrote since the last start,
 * every WRITEBACK_STEP bytes: the page cache then goes to the disk while
 * the export formats the rest, and the fsync before the file's rename
 * waits for the last step only, not for the whole file. */
#define WRITEBACK_STEP ((off_t)8 << 20)

static void writeback(struct async_out *a, size_t n)
{
	a->written += (off_t)n;
	if (!a->regular || a->written - a->started < WRITEBACK_STEP)
		return;
	if (sync_file_range(a->fd, a->started, a->written - a->started, SYNC_FILE_RANGE_WRITE) != 0)
		a->regular = 0; /* a file system without it: the fsync does it all */
	a->started = a->written;
}

static void write_block(struct async_out *a, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(a->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			pthread_mutex_lock(&a->lock);
			if (!a->err)
				a->err = w < 0 ? errno : EIO;
			pthread_mutex_unlock(&a->lock);
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void *writer(void *arg)
{
	struct async_out *a = arg;
	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->len && !a->stop)
			pthread_cond_wait(&a->cond, &a->lock);
		if (!a->len)
			break; /* stopped, nothing left */
		size_t n = a->len;
		int failed = a->err != 0;
		pthread_mutex_unlock(&a->lock);
		if (!failed) { /* after an error, what follows is not written */
			write_block(a, a->handed ? a->handed : a->block, n);
			writeback(a, n);
		}
		pthread_mutex_lock(&a->lock);
		a->len = 0;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* Waits until no block is in flight; the sticky error, 0 when none. */
static int drain(struct async_out *a)
{
	pthread_mutex_lock(&a->lock);
	while (a->len)
		pthread_cond_wait(&a->cond, &a->lock);
	int err = a->err;
	pthread_mutex_unlock(&a->lock);
	return err;
}

static ssize_t async_write(void *cookie, const char *buf, size_t n)
{
	struct async_out *a = cookie;
	int err = drain(a);
	if (err) {
		errno = err;
		return -1;
	}
	if (n > a->cap) {
		char *b = realloc(a->block, n);
		if (!b) {
			errno = ENOMEM;
			return -1;
		}
		a->block = b;
		a->cap = n;
	}
	memcpy(a->block, buf, n);
	pthread_mutex_lock(&a->lock);
	a->handed = NULL;
	a->len = n;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	return (ssize_t)n;
}

/* The streams open, for async_out_of(): a few at a time. */
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct async_out *streams;

static void streams_add(struct async_out *a)
{
	pthread_mutex_lock(&streams_lock);
	a->next = streams;
	streams = a;
	pthread_mutex_unlock(&streams_lock);
}

static void streams_remove(struct async_out *a)
{
	pthread_mutex_lock(&streams_lock);
	for (struct async_out **p = &streams; *p; p = &(*p)->next)
		if (*p == a) {
			*p = a->next;
			break;
		}
	pthread_mutex_unlock(&streams_lock);
}

struct async_out *async_out_of(FILE *f)
{
	struct async_out *a;
	pthread_mutex_lock(&streams_lock);
	for (a = streams; a && a->stream != f; a = a->next)
		;
	pthread_mutex_unlock(&streams_lock);
	return a;
}

int async_out_hand(struct async_out *a, const char *block, size_t n)
{
	int err = 0;
	if (fflush(a->stream) != 0) /* what the stream holds goes first */
		err = errno ? errno : EIO;
	if (!err)
		err = drain(a);
	if (err) {
		errno = err;
		return -1;
	}
	if (!n)
		return 0;
	pthread_mutex_lock(&a->lock);
	a->handed = block;
	a->len = n;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	return 0;
}

int async_out_wait(struct async_out *a)
{
	int err = drain(a);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

static void destroy(struct async_out *a)
{
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free(a->block);
	free(a->stdio_buf);
	free(a);
}

static int async_close(void *cookie)
{
	struct async_out *a = cookie;
	streams_remove(a);
	drain(a);
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	int err = a->err;
	if (close(a->fd) != 0 && !err)
		err = errno;
	destroy(a);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

FILE *async_out_fdopen(int fd, size_t bufsize)
{
	struct async_out *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->fd = fd;
	struct stat st;
	a->regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	a->cap = bufsize ? bufsize : 1;
	a->block = malloc(a->cap);
	a->stdio_buf = bufsize ? malloc(bufsize) : NULL;
	if (!a->block || (bufsize && !a->stdio_buf)) {
		free(a->block);
		free(a->stdio_buf);
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	int e = pthread_create(&a->thread, NULL, writer, a);
	if (e) {
		destroy(a);
		errno = e;
		return NULL;
	}
	cookie_io_functions_t io = {.write = async_write, .close = async_close};
	FILE *f = fopencookie(a, "w", io);
	if (!f) {
		e = errno;
		pthread_mutex_lock(&a->lock);
		a->stop = 1;
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
		destroy(a);
		errno = e;
		return NULL;
	}
	if (bufsize)
		setvbuf(f, a->stdio_buf, _IOFBF, bufsize);
	a->stream = f;
	streams_add(a);
	return f;
}
