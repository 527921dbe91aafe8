/*
 * report.h - the short summary `gprof-dl run` prints to stderr when the
 * target has finished, in nvprof's layout:
 *
 *   ==4242== Profiling result:
 *   Time(%)      Time     Calls       Avg       Min       Max  Name
 *    62.50%  250.00ms         5  50.000ms  40.000ms  60.000ms  train_step
 *   ...
 *   ==4242== Events: 1234 (12 marks), 0 dropped
 *   ==4242== Trace: t.gpdl (every table: gprof-dl summary t.gpdl)
 *
 * The table holds the NVTX ranges with the largest total time, by name.
 * Time(%) is the share of the window (ProfileStep ranges, or the whole run)
 * during which at least one range of that name was open, so it never
 * exceeds 100%; Time is the sum of the calls. As in nvprof, only the lines
 * that are not table rows carry the "==PID== " prefix.
 *
 * When the trace holds GPU work or CUDA API calls, the report is nvprof's
 * instead: "Profiling result (GPU activities):", "API calls:", then
 * the NVTX ranges under "NVTX ranges:" (nvprof.h says what each row holds).
 */
#ifndef GPDL_ANALYSIS_REPORT_H
#define GPDL_ANALYSIS_REPORT_H

#include <stdio.h>

#define REPORT_TOP_RANGES 10
#define REPORT_TOP_GPU 20 /* rows of GPU activities and of API calls */

/* Returns 0, or -1 when the trace cannot be read (a "==PID== " line says why). */
int report_run_summary(const char *trace_path, FILE *out, unsigned pid);

/* nvprof's time format: four or five significant digits and a unit, "9.6305ms". */
void report_format_time(char *buf, size_t size, double ns);

#endif
