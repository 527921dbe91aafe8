"""A small CPU training loop for the step rules of `gprof-dl advise`
(advise_steps_e2e.py): a Dataset whose __getitem__ may sleep (a slow input
pipeline), a DataLoader with or without worker processes, an MLP whose step
computes for some milliseconds, and a sleep after every Nth optimizer step
(host work done every N steps, as logging or checkpointing is).

Prints one line: the loop's wall time and its steps."""
import argparse
import time

import torch
from torch.utils.data import DataLoader, Dataset

IN, HIDDEN, CLASSES = 256, 768, 10


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--workers", type=int, default=0, help="DataLoader num_workers")
    ap.add_argument("--sleep-ms", type=float, default=0, help="__getitem__ sleeps MS per sample")
    ap.add_argument("--slow-every", type=int, default=0, metavar="N",
                    help="sleep --slow-ms after every Nth optimizer step (steps N-1, 2N-1, ...)")
    ap.add_argument("--slow-ms", type=float, default=100)
    return ap.parse_args()


class Samples(Dataset):
    def __init__(self, n, sleep_ms):
        self.n, self.sleep = n, sleep_ms / 1000

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.sleep:
            time.sleep(self.sleep)
        g = torch.Generator().manual_seed(i)
        return torch.randn(IN, generator=g), i % CLASSES


def main():
    a = parse()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, CLASSES))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Samples(a.steps * a.batch_size, a.sleep_ms), batch_size=a.batch_size,
                        num_workers=a.workers)
    t0 = time.perf_counter()
    for k, (x, y) in enumerate(loader):
        opt.zero_grad()
        for _ in range(4):  # some milliseconds of compute per step
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
        opt.step()
        if a.slow_every and k % a.slow_every == a.slow_every - 1:
            time.sleep(a.slow_ms / 1000)
    print(f"wall {time.perf_counter() - t0:.3f} s, {a.steps} steps")


if __name__ == "__main__":
    main()
