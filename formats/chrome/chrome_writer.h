/*
 * chrome_writer.h - a trace as chrome-trace JSON ("Trace Event Format", object
 * form), for Perfetto and chrome://tracing. One instance of export_writer.h.
 *
 * What comes out, in this order, so that it streams:
 *   {"traceEvents":[
 *     one line per range ("ph":"X"), mark ("ph":"i", thread scope) and
 *     counter sample ("ph":"C"), as the reader delivers them;
 *     then process and thread metadata ("ph":"M": process_name,
 *     process_labels, process_sort_index, thread_name, thread_sort_index),
 *     written at the end, when the reader's tables are complete],
 *   "displayTimeUnit":"ms",
 *   "otherData":{the trace header, drops and damage}}
 *
 * Invariants: ts and dur are microseconds with three decimals (nanosecond
 * precision), ts relative to the trace's start_ns (otherData.start_ns), so the
 * numbers stay small and exact; pid and tid are numbers; every string goes
 * through the JSON writer's escaping, so the output is valid UTF-8 whatever
 * bytes names hold. Memory does not depend on the number of events.
 */
#ifndef GPDL_FORMATS_CHROME_WRITER_H
#define GPDL_FORMATS_CHROME_WRITER_H

#include "formats/export_writer.h"

#include <stdio.h>

/* A chrome writer on out, which stays the caller's to flush and close.
 * Write errors are sticky and make the callbacks return -1. */
struct export_writer *chrome_writer_new(FILE *out);

#endif
