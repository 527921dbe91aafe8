"""A small CPU training loop for the step rules of `gprof-dl advise`
(advise_steps_e2e.py): a Dataset whose __getitem__ may sleep (a slow input
pipeline), a DataLoader with or without worker processes, an MLP whose step
computes for some milliseconds, and a sleep after every Nth optimizer step
(host work done every N steps, as logging or checkpointing is).

Prints one line: the loop's wall time and its steps."""
import argparse
import gc
import time

import torch
from torch.utils.data import DataLoader, Dataset

IN, CLASSES = 256, 10


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--workers", type=int, default=0, help="DataLoader num_workers")
    ap.add_argument("--sleep-ms", type=float, default=0, help="__getitem__ sleeps MS per sample")
    ap.add_argument("--slow-every", type=int, default=0, metavar="N",
                    help="sleep --slow-ms after every Nth optimizer step (steps N-1, 2N-1, ...)")
    ap.add_argument("--slow-ms", type=float, default=100)
    ap.add_argument("--hidden", type=int, default=768, help="the MLP's width")
    ap.add_argument("--reps", type=int, default=4, help="forward and backward passes per step")
    ap.add_argument("--gc", choices=("on", "off"), default="on",
                    help="off: no cyclic garbage collection during the loop (gc.freeze(), gc.disable())")
    ap.add_argument("--step-ms", type=float, default=0,
                    help="instead of --reps: as many passes as take about MS, measured before the loop "
                         "(so that a step lasts about as long with any torch)")
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


def calibrate(model, a):
    """The passes (forward and backward) that take about --step-ms: the
    median of 7 timed passes, before any step (no optimizer step here)."""
    x, y = torch.randn(a.batch_size, IN), torch.zeros(a.batch_size, dtype=torch.long)
    times = []
    for _ in range(7):
        t = time.perf_counter()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        times.append(time.perf_counter() - t)
    model.zero_grad()
    one = sorted(times)[3] * 1e3
    return max(1, round(a.step_ms / one))


def main():
    a = parse()
    torch.manual_seed(0)
    h = a.hidden
    model = torch.nn.Sequential(torch.nn.Linear(IN, h), torch.nn.ReLU(), torch.nn.Linear(h, h), torch.nn.ReLU(),
                                torch.nn.Linear(h, CLASSES))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Samples(a.steps * a.batch_size, a.sleep_ms), batch_size=a.batch_size,
                        num_workers=a.workers)
    reps = calibrate(model, a) if a.step_ms else a.reps
    if a.gc == "off":
        gc.freeze()
        gc.disable()
    t0 = time.perf_counter()
    for k, (x, y) in enumerate(loader):
        opt.zero_grad()
        for _ in range(reps):  # some milliseconds of compute per step
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
        opt.step()
        if a.slow_every and k % a.slow_every == a.slow_every - 1:
            time.sleep(a.slow_ms / 1000)
    print(f"wall {time.perf_counter() - t0:.3f} s, {a.steps} steps")


if __name__ == "__main__":
    main()
