/*
 * rankagg.h - one rank's rows of the aggregate tables of the SQL exports
 * (formats/csv/csv_agg.h; formats/SQL-SCHEMA.md, "Aggregate tables"),
 * measured from the rank's trace alone: the map of a job's analysis, done
 * where each trace is, that an engine reduces (examples/recipes).
 */
#ifndef GPDL_ANALYSIS_DIST_RANKAGG_H
#define GPDL_ANALYSIS_DIST_RANKAGG_H

#include "formats/csv/csv_agg.h"
#include "lib/analysis/dist/job.h"

#include <stdint.h>

/* Part p of j's rows, to emit (none for a part of no rank), times on the
 * job clock of the SQL exports (Unix wall time): 0, 1 when its trace cannot
 * be read (said in one line), -1 when emit failed. */
int rankagg_part(struct job *j, uint32_t p, csv_agg_emit_fn emit, void *ctx);

#endif
