/*
 * tracebuild.h - small traces for the analysis tests, written through the
 * trace writer API into a private temporary directory.
 */
#ifndef GPDL_TESTS_ANALYSIS_TRACEBUILD_H
#define GPDL_TESTS_ANALYSIS_TRACEBUILD_H

#include "formats/trace/trace.h"

#include <stdint.h>

struct tb {
	struct trace_writer *w;
	char path[512];
	uint32_t pid;
};

/* The directory the tests' files go to, made on first use, removed by tb_cleanup(). */
const char *tb_dir(void);
void tb_cleanup(void);
const char *tb_path(const char *name);

/* A trace of process pid on host, starting at start_ns. */
void tb_open(struct tb *b, const char *name, const char *host, uint32_t pid, uint64_t start_ns);
void tb_thread(struct tb *b, uint32_t index, uint32_t tid, const char *name);
uint32_t tb_desc(struct tb *b, const char *name, unsigned type);
void tb_range(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur);
void tb_event(struct tb *b, uint32_t thread, uint32_t desc, uint64_t start, uint64_t dur,
	      unsigned flags);
void tb_mark(struct tb *b, uint32_t thread, uint32_t desc, uint64_t at);
void tb_counter(struct tb *b, uint64_t ts, unsigned id, uint32_t pid, double value);
void tb_drops(struct tb *b, uint32_t thread, uint64_t n);
void tb_flush(struct tb *b);
/* Ends the run at end_ns; returns the file's path (valid for 8 more calls). */
const char *tb_close(struct tb *b, uint64_t end_ns);

/* Reads a whole file into a NUL-terminated buffer (free it). */
char *tb_slurp(const char *path, size_t *len);

#endif
