#!/usr/bin/env python3
"""A small PyTorch training loop: an MLP classifies synthetic data fed by a
torch.utils.data.DataLoader, with cross-entropy and SGD with momentum. It has
no gprof-dl code in it; profile it unchanged with

    gprof-dl run -- python3 examples/train.py

It runs on a CPU in a few seconds with torch 1.13 and 2.x, is deterministic
(seeded: the same losses on every run on one machine), and prints its own
throughput, measured with time.perf_counter over the steps after the first
--skip (default 10, at most half the steps), as Paddle's Perf Summary and
`gprof-dl bench` count them: a step ends when its optimizer step returns, and
the counted time runs from the end of the last skipped step to the end of the
last step. `gprof-dl bench TRACE --skip-steps K` measures the same steps."""
import argparse
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

IN_FEATURES = 64
CLASSES = 10


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=200, help="training steps in all (default 200)")
    ap.add_argument("--epochs", type=int, default=2, help="epochs the steps are spread over (default 2)")
    ap.add_argument("--batch-size", type=int, default=64, help="samples per step (default 64)")
    ap.add_argument("--num-workers", type=int, default=0, help="DataLoader worker processes (default 0)")
    ap.add_argument("--hidden", type=int, default=256, help="width of the two hidden layers (default 256)")
    ap.add_argument("--skip", type=int, default=10,
                    help="steps left out of the throughput, capped at half the steps (default 10)")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (default: torch's choice)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if a.steps < 1 or a.epochs < 1 or a.batch_size < 1 or a.steps % a.epochs:
        ap.error("--steps must be a positive multiple of --epochs, --batch-size positive")
    return a


def make_data(n, seed):
    """Inputs from a normal distribution, labels from a fixed random linear
    teacher, so that the loss goes down as the model learns it."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, IN_FEATURES, generator=g)
    teacher = torch.randn(IN_FEATURES, CLASSES, generator=g)
    return TensorDataset(x, (x @ teacher).argmax(dim=1))


def make_model(hidden):
    return torch.nn.Sequential(
        torch.nn.Linear(IN_FEATURES, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, CLASSES))


def main(argv):
    a = parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    per_epoch = a.steps // a.epochs
    data = make_data(per_epoch * a.batch_size, a.seed + 1)
    loader = DataLoader(data, batch_size=a.batch_size, shuffle=True, num_workers=a.num_workers,
                        generator=torch.Generator().manual_seed(a.seed + 2))
    model = make_model(a.hidden)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    skip = min(a.skip, a.steps // 2)
    print(f"train.py: torch {torch.__version__.split('+')[0]}, MLP {IN_FEATURES}-{a.hidden}-{a.hidden}-{CLASSES}, "
          f"{a.steps} steps ({a.epochs} epochs x {per_epoch} batches of {a.batch_size}), "
          f"num_workers {a.num_workers}", flush=True)

    ends = []  # perf_counter at the end of each step
    start = time.perf_counter()
    for epoch in range(a.epochs):
        for x, y in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            ends.append(time.perf_counter())
        print(f"epoch {epoch + 1}: loss {loss.item():.4f}", flush=True)

    counted = a.steps - skip
    t0 = ends[skip - 1] if skip else start
    secs = ends[-1] - t0
    print(f"final loss: {loss.item():.4f}")
    print(f"throughput: {counted * a.batch_size / secs:.2f} samples/s, {counted / secs:.4f} steps/s "
          f"(time.perf_counter over steps {skip + 1} to {a.steps}, the first {skip} skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
