/* Says "ready" and waits for a signal; exits 40 + the signal's number from its
 * handler, so the test sees that the signal arrived and was handled. */
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void on_signal(int sig)
{
	_exit(40 + sig);
}

int main(void)
{
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);
	nvtxRangePushA("waiting");
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
