/*
 * bench-nvtx - what an NVTX push+pop pair costs the program that makes it.
 *
 *     bench-nvtx [PAIRS [MODE]]
 *
 * Times PAIRS nvtxRangePushA/nvtxRangePop pairs, five times, and prints the
 * best as "<ns> ns per push+pop pair". Run it bare and under gprof-dl (see
 * bench-collector) to see the collector's cost. MODE:
 *
 *   plain   (the default) one name, "bench"
 *   msgs    messages in torch's emit_nvtx form, every one different (op_id),
 *           "aten::addmm, seq = N, op_id = M": recorded as they are
 *   torch   the same with the collector's torch_nvtx on (gprof-dl-api.h):
 *           each parsed, recorded as an Operator "aten::addmm" with its seq
 *   torch-shapes, msgs-shapes   the same with ", sizes = [[32, 64], [64, 128], [128]]"
 *
 * torch minus msgs is what reading torch's messages costs a push.
 */
#include <nvtx3/nvToolsExt.h>

#include "lib/collector/gprof-dl-api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NMSG 4096

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static char msgs[NMSG][128];

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 1000000;
	const char *mode = argc > 2 ? argv[2] : "plain";
	int torch = !strncmp(mode, "torch", 5), many = torch || !strncmp(mode, "msgs", 4);
	int shapes = strstr(mode, "-shapes") != NULL;
	if (pairs <= 0 || (!many && strcmp(mode, "plain") != 0)) {
		fprintf(stderr, "usage: bench-nvtx [PAIRS [plain|msgs|torch|msgs-shapes|torch-shapes]]\n");
		return 2;
	}
	for (int i = 0; i < NMSG; i++)
		snprintf(msgs[i], sizeof(msgs[i]), "aten::addmm, seq = %d, op_id = %d%s", 2794 + i,
			 16396 + i, shapes ? ", sizes = [[32, 64], [64, 128], [128]]" : "");
	for (int i = 0; i < 10000; i++) { /* NVTX's first call loads the tool */
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	if (torch) {
		gprof_dl_api_fn fn = (gprof_dl_api_fn)dlsym(RTLD_DEFAULT, GPROF_DL_API_SYMBOL);
		const struct gprof_dl_api *api = fn ? fn(GPROF_DL_API_VERSION) : NULL;
		if (!api) {
			fprintf(stderr, "bench-nvtx: torch mode needs the collector attached\n");
			return 1;
		}
		api->torch_nvtx(1);
	}
	double best = 0;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now_ns();
		if (many) {
			for (long i = 0; i < pairs; i++) {
				nvtxRangePushA(msgs[i & (NMSG - 1)]);
				nvtxRangePop();
			}
		} else {
			for (long i = 0; i < pairs; i++) {
				nvtxRangePushA("bench");
				nvtxRangePop();
			}
		}
		double per = (now_ns() - t0) / (double)pairs;
		if (rep == 0 || per < best)
			best = per;
	}
	printf("%.2f ns per push+pop pair (best of 5 x %ld, %s)\n", best, pairs, mode);
	return 0;
}
