/*
 * view_distributed.h - the Distributed view of a job: the tables of what
 * job_dist_measure() (dist.h) measured, as gprof-dl-summary(1) describes
 * them. (One program's Distributed Summary is view_distributed() in view.h.)
 */
#ifndef GPDL_ANALYSIS_VIEWS_VIEW_DISTRIBUTED_H
#define GPDL_ANALYSIS_VIEWS_VIEW_DISTRIBUTED_H

#include "lib/analysis/dist/dist.h"
#include "lib/analysis/views/view.h"

/* The per-rank table (id "distributed"): its rows, facts and notes, the
 * straggler among them. */
struct table *job_dist_table(const struct job_dist *d, const struct view *v,
			     const struct view_opts *o);
/* The per-collective table (id "collectives"). */
struct table *job_dist_collectives(const struct job_dist *d, const struct view_opts *o);

#endif
