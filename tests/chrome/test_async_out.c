/*
 * test_async_out.c - the exports' output stream written on a thread
 * (formats/async_out.h): every byte arrives, in order, and a failed write
 * is reported by the stream with write(2)'s errno.
 */
#include "formats/async_out.h"
#include "tests/chrome/trace_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_byte_in_order),
		cmocka_unit_test(test_full_device),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	fix_cleanup();
	return rc;
}
