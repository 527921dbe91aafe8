"""The program bench/python/op_overhead.py times: OPS torch.add calls on tiny
tensors in a Python loop, REPEATS times; prints the median time per
iteration as "<ns> ns per op", in the thread's CPU time (time.thread_time:
what the loop itself spent, not the time other processes on a shared machine
took from it). Not a benchmark on its own: run it bare and
under gprof-dl to see what recording an operator costs.

    op_loop.py [OPS [REPEATS]] [--noop-observer LIB]

--noop-observer LIB: first register the do-nothing RecordFunction callback
of LIB (noop_observer.cpp, compiled), to measure what torch itself charges
per operator while any callback is on."""
import sys
import time

import torch


def main():
    args = sys.argv[1:]
    if "--noop-observer" in args:
        import ctypes

        i = args.index("--noop-observer")
        ctypes.CDLL(args[i + 1]).gpdl_noop_observer_add()
        del args[i:i + 2]
    ops = int(args[0]) if len(args) > 0 else 100000
    repeats = int(args[1]) if len(args) > 1 else 5
    torch.set_num_threads(1)
    a, b = torch.ones(4), torch.ones(4)
    for _ in range(1000):
        torch.add(a, b)
    times = []
    for _ in range(repeats):
        t = time.thread_time()
        for _ in range(ops):
            torch.add(a, b)
        times.append(time.thread_time() - t)
    times.sort()
    print(f"{times[len(times) // 2] / ops * 1e9:.1f} ns per op")
    return 0


if __name__ == "__main__":
    sys.exit(main())
