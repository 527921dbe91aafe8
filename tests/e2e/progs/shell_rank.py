"""A rank that a shell launcher starts (RANK from its environment): rank 1
writes its CLOCK_MONOTONIC time (time.monotonic_ns(), the trace's clock) to
the file argv[1] names and SIGKILLs itself; the others wait a little and
exit with code argv[2]. No torch: a process that dies in a millisecond, so
that its end is the kill's."""
import os
import signal
import sys
import time

rank = int(os.environ["RANK"])
time.sleep(0.2)
if rank == 1:
    with open(sys.argv[1], "w") as f:
        f.write(f"{time.monotonic_ns()}\n")
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(0.3)
sys.exit(int(sys.argv[2]))
