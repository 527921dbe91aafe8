#include "tests/analysis/tracebuild.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

const char *tb_dir(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/gpdl-test-analysis-XXXXXX");
		assert_non_null(mkdtemp(dir));
	}
	return dir;
}

void tb_cleanup(void)
{
	if (!dir[0])
		return;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[600];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	dir[0] = '\0';
}

const char *tb_path(const char *name)
{
	static char buf[4][600];
	static unsigned which;
	which = (which + 1) % 4;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", tb_dir(), name);
	return buf[which];
}

void tb_open(struct tb *b, const char *name, const char *host, uint32_t pid, uint64_t start_ns)
{
	snprintf(b->path, sizeof(b->path), "%s", tb_path(name));
	b->pid = pid;
	b->w = trace_writer_open(b->path, 1);
	assert_non_null(b->w);
	const struct trace_header h = {
		.sources = TRACE_SRC_NVTX,
		.clock_domain = "CLOCK_MONOTONIC",
		.wall_offset_ns = 1700000000000000000LL,
		.hostname = host,
		.pid = pid,
		.rank = -1,
		.cmdline = "./app",
		.start_ns = start_ns,
		.ncpus = 8,
		.gprof_version = "test",
	};
	assert_int_equal(trace_writer_header(b->w, &h), 0);
	struct trace_process p = {pid, 1, start_ns, 0, -1, 0};
	assert_int_equal(trace_writer_process(b->w, &p), 0);
}

void tb_thread(struct tb *b, uint32_t index, uint32_t tid, const char *name)
{
	uint32_t s = name ? trace_writer_string(b->w, name, strlen(name)) : 0;
	struct trace_thread t = {.index = index, .pid = b->pid, .tid = tid, .name_str = s};
	assert_int_equal(trace_writer_thread(b->w, &t), 0);
}

uint32_t tb_desc(struct tb *b, const char *name, unsigned type)
{
	uint32_t s = trace_writer_string(b->w, name, strlen(name));
	assert_true(s > 0);
	uint32_t d = trace_writer_desc(b->w, s, 0, 0, (uint8_t)type);
	assert_true(d > 0);
	return d;
}

void tb_event(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
	      unsigned flags)
{
	struct trace_event e = {start, dur, desc, thread, (uint8_t)flags};
	assert_int_equal(trace_writer_event(b->w, &e), 0);
}

void tb_range(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur)
{
	tb_event(b, thread, desc, start, dur, 0);
}

void tb_mark(struct tb *b, uint32_t thread, uint32_t desc, uint64_t at)
{
	tb_event(b, thread, desc, at, 0, TRACE_EVF_MARK);
}

void tb_counter(struct tb *b, uint64_t ts, unsigned id, uint32_t pid, double value)
{
	struct trace_counter c = {ts, id, pid, value};
	assert_int_equal(trace_writer_counter(b->w, &c), 0);
}

void tb_drops(struct tb *b, uint32_t thread, uint64_t n)
{
	assert_int_equal(trace_writer_drops(b->w, thread, n), 0);
}

void tb_flush(struct tb *b)
{
	assert_int_equal(trace_writer_flush(b->w), 0);
}

const char *tb_close(struct tb *b, uint64_t end_ns)
{
	static char done[8][512];
	static unsigned which;
	assert_int_equal(trace_writer_close(b->w, end_ns), 0);
	b->w = NULL;
	which = (which + 1) % 8;
	snprintf(done[which], sizeof(done[which]), "%s", b->path);
	return done[which];
}

char *tb_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return p;
}
