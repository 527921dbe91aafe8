/*
 * test_async_out.c - the exports' output stream written on a thread
 * (formats/async_out.h): every byte arrives, in order, and a failed write
 * is reported by the stream with write(2)'s errno.
 */
#include "formats/async_out.h"
#include "tests/chrome/trace_fixture.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define TOTAL (5u << 20)

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 131 + (i >> 13));
}

/* Writes of every size, small and larger than the buffer, reach the file
 * whole and in order; fclose waits for the last block. */
static void test_every_byte_in_order(void **state)
{
	(void)state;
	char *path = fix_path("async.out");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	FILE *f = async_out_fdopen(fd, 64u << 10);
	assert_non_null(f);
	unsigned char *buf = malloc(300000);
	assert_non_null(buf);
	size_t at = 0, step = 1;
	while (at < TOTAL) {
		size_t n = step < TOTAL - at ? step : TOTAL - at;
		for (size_t i = 0; i < n; i++)
			buf[i] = pattern(at + i);
		assert_int_equal(fwrite(buf, 1, n, f), n);
		at += n;
		step = step * 7 % 299993 + 1;
	}
	assert_int_equal(fclose(f), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, TOTAL);
	FILE *in = fopen(path, "rb");
	assert_non_null(in);
	size_t bad = 0;
	for (size_t i = 0; i < TOTAL; i++)
		bad += fgetc(in) != pattern(i);
	fclose(in);
	assert_int_equal(bad, 0);
	free(buf);
	unlink(path);
	free(path);
}

/* A device that is full: the error of the thread's write comes back by the
 * stream, and fclose fails with ENOSPC. */
static void test_full_device(void **state)
{
	(void)state;
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		skip();
	FILE *f = async_out_fdopen(fd, 4096);
	assert_non_null(f);
	char block[1000];
	memset(block, 'x', sizeof(block));
	size_t written = 0;
	for (int i = 0; i < 100; i++)
		written += fwrite(block, 1, sizeof(block), f);
	errno = 0;
	int flushed = fflush(f);
	int err = errno;
	/* the error surfaces no later than the flush after the failed write */
	assert_true(written < 100 * sizeof(block) || flushed != 0 || ferror(f));
	assert_int_equal(err == 0 || err == ENOSPC, 1);
	errno = 0;
	assert_int_equal(fclose(f), EOF);
	assert_int_equal(errno, ENOSPC);
}

/* Blocks handed (async_out_hand) and bytes through the stream, mixed: they
 * reach the file in the order written, the stream's first at each hand. */
static void test_handed_blocks_in_order(void **state)
{
	(void)state;
	char *path = fix_path("async-hand.out");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	FILE *f = async_out_fdopen(fd, 4096);
	assert_non_null(f);
	struct async_out *a = async_out_of(f);
	assert_non_null(a);
	assert_null(async_out_of(stderr));
	static unsigned char blocks[2][20000];
	size_t at = 0;
	for (int round = 0; round < 40; round++) {
		size_t n = 100 + (size_t)round * 37; /* through the stream */
		for (size_t i = 0; i < n; i++) {
			unsigned char b = pattern(at++);
			assert_int_equal(fwrite(&b, 1, 1, f), 1);
		}
		unsigned char *blk = blocks[round % 2]; /* ours again once the next is handed */
		size_t m = 1000 + (size_t)round * 450;
		for (size_t i = 0; i < m; i++)
			blk[i] = pattern(at++);
		assert_int_equal(async_out_hand(a, (const char *)blk, m), 0);
	}
	assert_int_equal(async_out_wait(a), 0);
	assert_int_equal(fclose(f), 0);
	FILE *in = fopen(path, "rb");
	assert_non_null(in);
	size_t bad = 0, i = 0;
	for (int ch; (ch = fgetc(in)) != EOF; i++)
		bad += (unsigned char)ch != pattern(i);
	fclose(in);
	assert_int_equal(i, at);
	assert_int_equal(bad, 0);
	unlink(path);
	free(path);
}

/* The packets read from a SOCK_SEQPACKET socket, each one write(2). */
struct packets {
	int fd;
	size_t n, total, sizes[64];
};

static void *read_packets(void *arg)
{
	struct packets *p = arg;
	static char buf[1 << 17];
	ssize_t r;
	while ((r = recv(p->fd, buf, sizeof(buf), 0)) > 0) {
		if (p->n < 64)
			p->sizes[p->n] = (size_t)r;
		p->n++;
		p->total += (size_t)r;
	}
	return NULL;
}

/* The stream's writes are blocks of the size asked, not glibc's default
 * 8 KiB (setvbuf without a buffer of ours keeps that): each write(2) is a
 * packet of a SOCK_SEQPACKET pair, read whole on a thread. */
static void test_block_size(void **state)
{
	(void)state;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
		skip();
	enum { BLOCK = 32768, TOTAL_B = 4 * BLOCK + 1000 };
	struct packets p = {.fd = sv[1]};
	pthread_t reader;
	assert_int_equal(pthread_create(&reader, NULL, read_packets, &p), 0);
	FILE *f = async_out_fdopen(sv[0], BLOCK);
	assert_non_null(f);
	char piece[700];
	memset(piece, 'x', sizeof(piece));
	for (size_t at = 0; at < TOTAL_B; at += sizeof(piece)) {
		size_t n = TOTAL_B - at < sizeof(piece) ? TOTAL_B - at : sizeof(piece);
		assert_int_equal(fwrite(piece, 1, n, f), n);
	}
	assert_int_equal(fclose(f), 0); /* closes sv[0]: the reader sees the end */
	assert_int_equal(pthread_join(reader, NULL), 0);
	close(sv[1]);
	assert_int_equal(p.total, TOTAL_B);
	assert_int_equal(p.n, 5);
	for (size_t i = 0; i + 1 < p.n; i++)
		assert_int_equal(p.sizes[i], BLOCK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_byte_in_order),
		cmocka_unit_test(test_full_device),
		cmocka_unit_test(test_handed_blocks_in_order),
		cmocka_unit_test(test_block_size),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	fix_cleanup();
	return rc;
}
