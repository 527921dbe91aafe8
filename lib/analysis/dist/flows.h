/*
 * flows.h - the communication calls of a job's chrome export, joined across
 * ranks: the calls the chrome writer passes on as it writes each part
 * (chrome_job_opts.comm), each rank's calls taken by the Distributed view's
 * rule (dist.h: dist_calls_of(), from what the chrome writer saw of the
 * rank: its calls, and whether it has GPU work), matched as the
 * Distributed view matches them (collective.h), and a flow written per
 * call that two ranks or more made.
 */
#ifndef GPDL_ANALYSIS_DIST_FLOWS_H
#define GPDL_ANALYSIS_DIST_FLOWS_H

#include "formats/chrome/chrome_writer.h"
#include "lib/analysis/dist/job.h"
#include "lib/analysis/store/names.h"

#include <stddef.h>
#include <stdint.h>

struct xcall; /* a call as written (flows.c) */

struct job_calls {
	const struct job *j;
	struct names names; /* the calls' ops and groups */
	struct xcall *v;
	size_t n, cap;
	uint8_t *gpu;       /* by rank: it has GPU work (job_calls_gpu()) */
};

void job_calls_init(struct job_calls *cs, const struct job *j);
/* A chrome_job_opts.comm callback (ctx: the job_calls): keeps a call of a
 * rank (a launcher's has no rank to match it with). */
void job_calls_add(void *ctx, const struct chrome_comm *c);
/* A chrome_job_opts.gpu callback (ctx: the job_calls): part has GPU work. */
void job_calls_gpu(void *ctx, uint32_t part);
/* Matches the ranks' calls and gives flow() the ends of a flow per call
 * that two ranks or more made, in time order: from the earliest start to
 * the latest, so that the arrow ends at the rank the others waited for;
 * *matched counts the calls. 0, or what flow() returned that was not 0. */
int job_calls_flows(struct job_calls *cs, int (*flow)(void *ctx, const struct chrome_flow_end *f),
		    void *ctx, uint64_t *matched);
void job_calls_free(struct job_calls *cs);

#endif
