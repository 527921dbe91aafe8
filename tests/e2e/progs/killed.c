/* Dies of a signal (argv[1], default SIGKILL) with two ranges open: the trace
 * must still hold the ten finished ranges and the two open ones. */
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int sig = argc > 1 ? atoi(argv[1]) : SIGKILL;
	for (int i = 0; i < 10; i++) {
		nvtxRangePushA("done");
		nvtxRangePop();
	}
	nvtxRangePushA("doomed");
	nvtxRangePushA("inner-doomed");
	usleep(20000);
	signal(sig, SIG_DFL);
	kill(getpid(), sig);
	pause();
	return 0;
}
