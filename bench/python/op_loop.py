"""The program bench/python/op_overhead.py times: OPS torch.add calls on tiny
tensors in a Python loop, REPEATS times; prints the best time per iteration
as "<ns> ns per op". Not a benchmark on its own: run it bare and under
gprof-dl to see what recording an operator costs."""
import sys
import time

import torch


def main():
    ops = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.set_num_threads(1)
    a, b = torch.ones(4), torch.ones(4)
    for _ in range(1000):
        torch.add(a, b)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(ops):
            torch.add(a, b)
        best = min(best, time.perf_counter() - t)
    print(f"{best / ops * 1e9:.1f} ns per op")
    return 0


if __name__ == "__main__":
    sys.exit(main())
