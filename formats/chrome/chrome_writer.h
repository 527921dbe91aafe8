/*
 * chrome_writer.h - a trace as chrome-trace JSON ("Trace Event Format", object
 * form), for Perfetto and chrome://tracing, in the PyTorch profiler's (Kineto's)
 * shape so that tools built for its traces (Holistic Trace Analysis, the
 * TensorBoard plugin) read ours. One instance of export_writer.h.
 *
 * What comes out, in this order, so that it streams:
 *   {"distributedInfo": {"rank": R, "world_size": W, "backend": B},  (a rank's trace)
 *   "traceEvents":[
 *     one line per range ("ph":"X"), mark ("ph":"i", thread scope),
 *     "[memory]" instant, ac2g flow end ("ph":"s" on an API call with a
 *     correlation id, "ph":"f" on the GPU work it launched) and counter
 *     sample ("ph":"C"), as the reader delivers them;
 *     then process and thread metadata ("ph":"M": process_name,
 *     process_labels, process_sort_index, thread_name, thread_sort_index),
 *     for host threads and for GPU streams (pid = device, tid = stream),
 *     written at the end, when the reader's tables are complete],
 *   "displayTimeUnit":"ms",
 *   "deviceProperties":[...],        (when the trace has GPUs)
 *   "baseTimeNanoseconds":N,         (the Unix time of ts 0)
 *   "otherData":{the trace header, drops and damage}}
 *
 * "cat" is the PyTorch profiler's category (cpu_op, user_annotation,
 * cuda_runtime, kernel, gpu_memcpy, ...); args.type is always gprof-dl's own
 * event type, and details use Kineto's arg names ("correlation",
 * "External id", "grid", "Sequence number", "Input Dims", ...) or
 * self-describing ones of ours where Kineto has none (chrome_gpu.c; a step's
 * "samples"), so that an import gets every field back.
 *
 * Invariants: ts and dur are microseconds with three decimals (nanosecond
 * precision), ts relative to the trace's start_ns (otherData.start_ns), so the
 * numbers stay small and exact; pid and tid are numbers; every string goes
 * through the JSON writer's escaping, so the output is valid UTF-8 whatever
 * bytes names hold. Memory does not depend on the number of events: flow ends
 * are written as met, never paired in memory.
 */
#ifndef GPDL_FORMATS_CHROME_WRITER_H
#define GPDL_FORMATS_CHROME_WRITER_H

#include "formats/export_writer.h"

#include <stddef.h>
#include <stdio.h>

/* A chrome writer on out, which stays the caller's to flush and close.
 * Write errors are sticky and make the callbacks return -1. */
struct export_writer *chrome_writer_new(FILE *out);

/* Whether input shapes (trace 1.2) are in torch's canonical form, nested
 * lists of integers with items separated by ", " ("[[32, 64], [64], []]"):
 * those are exported as Kineto's "Input Dims" array, which an import turns
 * back into the same bytes; others as the string. */
int chrome_dims_canonical(const char *s, size_t len);

#endif
