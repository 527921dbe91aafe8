/*
 * trace_fixture.h - small traces with known content, written through the real
 * trace writer, for the chrome export and the info/export command tests.
 *
 * Every number of the fixture is here, so that tests can compute what the
 * output must say. Times are in the trace's clock: FIX_START_NS is ts 0.
 */
#ifndef GPDL_TESTS_TRACE_FIXTURE_H
#define GPDL_TESTS_TRACE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#define FIX_START_NS UINT64_C(1000000000000)           /* 1000 s of CLOCK_MONOTONIC */
#define FIX_END_NS (FIX_START_NS + UINT64_C(5000000000)) /* 5 s later */
#define FIX_WALL_OFFSET_NS INT64_C(1699999000000000000) /* start = 2023-11-14T22:13:20Z */
#define FIX_PID 100
#define FIX_CHILD_PID 101
#define FIX_RANK 3
#define FIX_DROPS 5 /* all on thread 1 */

/* Thread indexes: 0 main (tid 100), 1 the nastily named (tid 102), 2 the
 * child's unnamed thread (pid 101, tid 101). */
#define FIX_THREADS 3
extern const char fix_thread1_name[];

/* Thread 0 has one range per byte value 1..255, named "<" byte ">", starting
 * at byte * 1000 ns + 1 ns after the start, lasting byte ns: FIX_BYTE_RANGES
 * of them. Then the named cases below, on thread 1 and 2. */
#define FIX_BYTE_RANGES 255

struct fix_case {
	const char *name;     /* raw bytes, as recorded */
	const char *expect;   /* the name a JSON parser must read back */
	unsigned thread;
	uint64_t start_rel_ns, dur_ns;
	uint8_t flags, type;
	const char *domain;   /* NULL: default */
	uint32_t category;
	const char *ts, *dur; /* the exact JSON numbers */
};
extern const struct fix_case fix_cases[];
extern const size_t fix_ncases;

/* Counters: FIX_CPU_PROCESS samples of CPU(Process), FIX_CPU_SYSTEM of
 * CPU(System), one RSS sample. */
#define FIX_CPU_PROCESS 3
#define FIX_CPU_SYSTEM 2
#define FIX_RSS 1

/* Writes the fixture to path; 0 or -1. */
int fix_write(const char *path);

/* A longer trace for damage tests: n1 ranges on thread 0, flushed, then n2
 * more; *flushed_size is the file's size after the flush, before the rest.
 * Range i starts at i * 1000 ns and lasts 10 ns. */
int fix_write_two_batches(const char *path, unsigned n1, unsigned n2, long *flushed_size);

/* A fresh temporary directory (mkdtemp under TMPDIR) and files in it. */
const char *fix_tmpdir(void);
char *fix_path(const char *name); /* malloc'ed */
void fix_cleanup(void);           /* removes the directory and its files */

#endif
