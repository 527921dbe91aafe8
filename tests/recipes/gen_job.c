/*
 * gen_job.c - writes a synthetic job (tracebuild.h tb_job_write) for the
 * recipe tests: one trace per rank, NAME-<rank>.gpdl, their paths printed
 * one per line.
 *
 *   gen-recipe-job NAME RANKS STEPS GPU SLOW_RANK SLOW_MS JITTER HOSTS [merged]
 *
 * GPU 0: gloo (host communication), 1: nccl (GPU kernels); SLOW_RANK -1 for
 * none; JITTER 0 or 1; HOSTS 1 or 2 (each host's clock reads 1000 s apart);
 * merged: one file, NAME.gpdl, of every rank and their launcher.
 */
#include "tests/analysis/tracebuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int merged = argc == 10 && strcmp(argv[9], "merged") == 0;
	if (argc != 9 && !merged) {
		fprintf(stderr, "usage: %s NAME RANKS STEPS GPU SLOW_RANK SLOW_MS JITTER HOSTS [merged]\n",
			argv[0]);
		return 2;
	}
	struct tb_job j = {
		.ranks = (unsigned)atoi(argv[2]),
		.steps = (unsigned)atoi(argv[3]),
		.gpu = atoi(argv[4]),
		.slow_rank = atoi(argv[5]),
		.slow_ms = (unsigned)atoi(argv[6]),
		.jitter = atoi(argv[7]),
		.killed_rank = -1,
		.stopped_rank = -1,
		.hosts = (unsigned)atoi(argv[8]),
		.merged = merged,
	};
	if (j.ranks < 1 || j.ranks > 64 || j.steps < 1) {
		fprintf(stderr, "%s: ranks 1..64 and steps >= 1\n", argv[0]);
		return 2;
	}
	char (*paths)[512] = calloc(j.ranks, sizeof(*paths));
	if (!paths)
		return 1;
	unsigned n = tb_job_write(argv[1], &j, paths);
	for (unsigned i = 0; i < n; i++)
		printf("%s\n", paths[i]);
	free(paths);
	return n ? 0 : 1;
}
