/*
 * async_out.c - the writing thread behind a stdio stream (see async_out.h).
 *
 * fopencookie() gives glibc's buffering; its write callback copies the
 * block into the stream's own buffer and signals the thread, after waiting
 * for the block before to be written. So at most one write is in flight and
 * blocks reach the file in order.
 */
#include "formats/async_out.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct async_out {
	int fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *block;       /* the block being written, or to be */
	size_t cap, len;   /* len > 0: a block waits for the thread or is in write */
	int err;           /* errno of the first failed write; sticky */
	int stop;
};

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
		if (!failed) /* after an error, what follows is not written */
			write_block(a, a->block, n);
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
	a->len = n;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	return (ssize_t)n;
}

static void destroy(struct async_out *a)
{
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free(a->block);
	free(a);
}

static int async_close(void *cookie)
{
	struct async_out *a = cookie;
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
	a->cap = bufsize ? bufsize : 1;
	a->block = malloc(a->cap);
	if (!a->block) {
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
		setvbuf(f, NULL, _IOFBF, bufsize);
	return f;
}
