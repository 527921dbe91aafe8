/* Exits with the status given as argv[1] after five ranges; prints to both
 * streams so that pass-through can be compared. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	for (int i = 0; i < 5; i++) {
		nvtxRangePushA("work");
		nvtxRangePop();
	}
	printf("to stdout: %d args\n", argc);
	fprintf(stderr, "to stderr\n");
	fflush(stdout);
	exit(argc > 1 ? atoi(argv[1]) : 0);
}
