/*
 * sched.h - how a training step's thread fared with the scheduler: its time
 * on a CPU and its time runnable but waiting on a run queue (CPU
 * contention: another program, or too many threads, on its CPUs): the
 * thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, exact) and the run-queue
 * time of the kernel's per-thread schedstat (/proc/self/task/TID/schedstat,
 * field 2, cumulative ns, counted when a wait ends; field 1, the CPU time,
 * is updated only at scheduler ticks, so the clock serves instead),
 * sampled at step boundaries only.
 *
 * A step boundary is known when a step begins (the bindings' step(), an
 * NVTX ProfileStep push), and when a step is recorded (an NVTX ProfileStep
 * pop; the bindings' range() of a ProfileStep, which samples only when no
 * sample in the step's second half lies near its end yet and now does: the
 * step() that began the next step often took it at that very boundary). A
 * recorded step then takes the sample nearest its start, and of those taken
 * after it the nearest its end; each must lie within COLL_SCHED_NEAR of its
 * end of the step (or 2 % of the step, whichever is larger), else the
 * step's times are unknown.
 *
 * Cost: two system calls a sample, one sample a step boundary: a pread of a
 * descriptor the thread keeps open (opened at its first sample, O_CLOEXEC;
 * closed at the thread's end and, in a fork child, by coll_sched_forked())
 * and the thread's CPU clock, and a parse of two numbers; never on an
 * operator's path. Threads that make no step open nothing. State is the
 * thread's own (initial-exec TLS): no lock, no allocation.
 */
#ifndef GPDL_COLLECTOR_SCHED_H
#define GPDL_COLLECTOR_SCHED_H

#include <stdint.h>

#define COLL_SCHED_NEAR 1000000ull /* 1 ms */
#define COLL_SCHED_SAMPLES 8

/* Samples the calling thread now (now: the collector's clock). */
void coll_sched_sample(uint64_t now);
/* Samples it now only when that serves a step [start, end) recorded now:
 * no sample lies near end yet, and now does. */
void coll_sched_sample_for(uint64_t now, uint64_t start, uint64_t end);
/* A step begins now: samples it, unless the step recorded just before at
 * this boundary did (the Python package's loader mode, an NVTX pop then a
 * push), within COLL_SCHED_NEAR: that sample is the new step's start too. */
void coll_sched_step(uint64_t now);
/* The calling thread's time on a CPU and on a run queue between the samples
 * nearest start and end: 1, or 0 when none lies near enough (or /proc could
 * not be read). */
int coll_sched_span(uint64_t start, uint64_t end, uint64_t *cpu_ns, uint64_t *runq_ns);
/* The thread ends: its descriptor is closed. */
void coll_sched_thread_end(void);
/* In a fork child: the forking thread's descriptor and samples were its
 * parent thread's. */
void coll_sched_forked(void);

/* Parses a schedstat line ("123 456 7"): 0, or -1 when it is not one. For
 * the tests. */
int coll_sched_parse(const char *buf, uint64_t *cpu_ns, uint64_t *runq_ns);

#endif
