"""The program bench/python/timer_only_overhead.py times to find what the
--timer-only hooks cost per training step: a training loop whose steps do
almost nothing (a DataLoader of one-sample batches, a 1x1 linear model, SGD),
so that a few microseconds more per step show. Runs STEPS steps REPEATS times
and prints the best time per step as "<us> us per step"."""
import sys
import time

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.set_num_threads(1)
    torch.manual_seed(0)
    loader = DataLoader(TensorDataset(torch.randn(steps, 1), torch.randn(steps, 1)), batch_size=1)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    best = float("inf")
    for _ in range(repeats + 1):  # the first is a warm-up
        t = time.perf_counter()
        for x, y in loader:
            opt.zero_grad()
            ((model(x) - y) ** 2).sum().backward()
            opt.step()
        best = min(best, time.perf_counter() - t)
    print(f"{best / steps * 1e6:.2f} us per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
