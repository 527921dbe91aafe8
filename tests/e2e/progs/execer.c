/* Records a range, then becomes argv[1] (with the rest as its arguments). */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	nvtxRangePushA("before-exec");
	nvtxRangePop();
	nvtxRangePushA("open-across-exec");
	execv(argv[1], argv + 1);
	perror("execv");
	return 1;
}
