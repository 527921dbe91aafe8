/*
 * trace_fixture.h - small traces with known content, written through the real
 * trace writer, for the chrome export and the info/export command tests.
 *
 * Every number of the fixture is here, so that tests can compute what the
 * output must say. Times are in the trace's clock: FIX_START_NS is ts 0.
 */
#ifndef GPDL_TESTS_TRACE_FIXTURE_H
#define GPDL_TESTS_TRACE_FIXTURE_H

#include "formats/trace/trace.h"

#include <stddef.h>
#include <stdint.h>

#define FIX_START_NS UINT64_C(1000000000000)           /* 1000 s of CLOCK_MONOTONIC */
#define FIX_END_NS (FIX_START_NS + UINT64_C(5000000000)) /* 5 s later */
#define FIX_WALL_OFFSET_NS INT64_C(1699999000000000000) /* start = 2023-11-14T22:13:20Z */
#define FIX_PID 100
#define FIX_CHILD_PID 101
#define FIX_RANK 3
#define FIX_DROPS 5 /* all on thread 1 */
/* What the writer records as the format version: the current one. */
#define FIX_STR_(x) #x
#define FIX_STR(x) FIX_STR_(x)
#define FIX_FORMAT_VERSION \
	FIX_STR(TRACE_FORMAT_VERSION_MAJOR) "." FIX_STR(TRACE_FORMAT_VERSION_MINOR)

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

/* ---- a trace with GPU work (format 1.1) ---------------------------------
 *
 * One process (FIXG_PID, rank 0 of 1, backend "nccl") with one host thread
 * (track 0, tid FIXG_PID) and two streams of device 0, context 1: stream 7
 * (track 1, unnamed) and stream 13 (track 2, named "nccl"). Two steps
 * "ProfilerStep#1" [0, 40 ms) and "ProfilerStep#2" [40, 80 ms); in them
 * operators, runtime calls with correlation ids, and the GPU work they
 * launched: kernels on both streams (an NCCL one on stream 13), copies,
 * a set; memory instants (device and host); a mark; one counter sample;
 * two drops on stream 13; one device with its properties. Every time is a
 * whole microsecond, so that a tool rounding to microseconds reads it
 * exactly. */
#define FIXG_PID 200
#define FIXG_TRACKS 3
#define FIXG_TRACK_HOST 0
#define FIXG_TRACK_S7 1
#define FIXG_TRACK_S13 2
#define FIXG_DEVICE 0
#define FIXG_CONTEXT 1
#define FIXG_END_NS (FIX_START_NS + UINT64_C(100000000)) /* 100 ms */
#define FIXG_DROPS 2 /* on track 2 */
#define FIXG_CPU_SAMPLE 55.5 /* CPU(Process) at 10 ms */

struct fixg_event {
	const char *name; /* as recorded */
	uint8_t type, flags;
	unsigned track;
	uint64_t start_rel_ns, dur_ns;
	int has_ext;
	struct trace_event_ext ext;
};
extern const struct fixg_event fixg_events[];
extern const size_t fixg_nevents;
extern const struct trace_device fixg_device; /* name_str 0: see fixg_device_name */
extern const char fixg_device_name[];
extern const uint64_t fixg_streams[FIXG_TRACKS]; /* 0 for the host thread */

int fix_write_gpu(const char *path);

/* ---- operators and steps with their details (format 1.2) ----------------
 *
 * One process (FIXO_PID), one thread (track 0, tid FIXO_PID), ending at
 * FIXO_END_NS. Operators with PyTorch sequence numbers (narrow, wide,
 * negative, 0; a backward sharing its forward's) and input shapes in
 * torch's form (exported as an "Input Dims" array) or not (exported as the
 * string); steps with and without samples. Whole microseconds. */
#define FIXO_PID 300
/* the step that knows its samples: its thread's CPU and run-queue time (trace 2.1) */
#define FIXO_STEP_CPU_NS 7000000
#define FIXO_STEP_RUNQ_NS 1500000
#define FIXO_END_NS (FIX_START_NS + UINT64_C(30000000)) /* 30 ms */

struct fixo_event {
	const char *name;
	uint8_t type;
	uint64_t start_rel_ns, dur_ns;
	int has_seq;
	int64_t seq;
	const char *shapes;    /* NULL: none */
	const char *dims_json; /* "Input Dims" as the export writes it, compact; NULL: none */
	uint64_t samples;
};
extern const struct fixo_event fixo_events[];
extern const size_t fixo_nevents;

int fix_write_ops(const char *path);

/* ---- many events of few descs ------------------------------------------
 *
 * The exporters make a desc's fixed bytes once and reuse them: FIXR_EVENTS
 * events on one thread (tid FIX_PID) of two descs, fixr_names[i % 2] (one
 * needs escaping in JSON and quoting in CSV), with the flags cycling
 * through fixr_flags[i % FIXR_NFLAGS] (marks, never-ended ranges, ...), so
 * that events of one desc differ in flags from one to the next. Event i
 * starts fixr_start_rel(i) after FIX_START_NS (the last one beyond 2^50 ns,
 * where chrome's ts leaves integer formatting) and lasts i ns (a mark 0). */
#define FIXR_EVENTS 1000
#define FIXR_NFLAGS 5
extern const char *const fixr_names[2];
extern const uint8_t fixr_flags[FIXR_NFLAGS];
uint64_t fixr_start_rel(unsigned i);
uint64_t fixr_dur(unsigned i);
int fix_write_repeats(const char *path);

/* A fresh temporary directory (mkdtemp under TMPDIR) and files in it. */
const char *fix_tmpdir(void);
char *fix_path(const char *name); /* malloc'ed */
void fix_cleanup(void);           /* removes the directory and its files */

#endif
