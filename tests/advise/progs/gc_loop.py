"""A small CPU training loop whose garbage collections cost, for the gc-pauses
rule of `gprof-dl advise` (advise_gc_e2e.py).

Before the loop it builds a large graph of live objects (--graph nodes: small
lists, all reachable, kept for the whole run), which every generation-2
collection walks. Every step makes --cycles pairs of lists that refer to each
other (cyclic garbage, freed only by a collection) and keeps them in a ring
of the last --keep steps: they outlive the young generations, so that
generation 2 fills and is collected every few steps, walking the graph. The
MLP's step makes --reps forward and backward passes (or as many as take
about --step-ms).

--gc off: gc.freeze() and gc.disable() before the loop, the fix the rule
proposes (the garbage then stays).

Prints one line: the loop's wall time, its steps and the collections made."""
import argparse
import collections
import gc
import time

import torch

IN, CLASSES, BATCH = 256, 10, 8


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--graph", type=int, default=400000, help="live objects walked by a full collection")
    ap.add_argument("--cycles", type=int, default=2000, help="reference cycles made per step")
    ap.add_argument("--keep", type=int, default=4, help="steps whose cycles stay alive")
    ap.add_argument("--reps", type=int, default=0,
                    help="forward and backward passes per step (0: as many as take about --step-ms, "
                         "measured before the loop)")
    ap.add_argument("--step-ms", type=float, default=20, help="without --reps: compute per step, about")
    ap.add_argument("--gc", choices=("on", "off"), default="on")
    return ap.parse_args()


def passes_for(model, ms):
    """The forward and backward passes that take about MS: the median of 7."""
    x, y = torch.randn(BATCH, IN), torch.zeros(BATCH, dtype=torch.long)
    times = []
    for _ in range(7):
        t = time.perf_counter()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        times.append(time.perf_counter() - t)
    model.zero_grad()
    return max(1, round(ms / (sorted(times)[3] * 1e3)))


def main():
    a = parse()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(IN, 512), torch.nn.ReLU(), torch.nn.Linear(512, CLASSES))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    reps = a.reps or passes_for(model, a.step_ms)
    graph = [[i] for i in range(a.graph)]  # noqa: F841 (alive to the end: the collector walks it)
    ring = collections.deque(maxlen=a.keep)
    x, y = torch.randn(BATCH, IN), torch.randint(0, CLASSES, (BATCH,))
    if a.gc == "off":
        gc.freeze()
        gc.disable()
    before = [s["collections"] for s in gc.get_stats()]
    t0 = time.perf_counter()
    for _ in range(a.steps):
        opt.zero_grad()
        for _ in range(reps):
            torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        made = []
        for _ in range(a.cycles):
            p, q = [], []
            p.append(q)
            q.append(p)
            made.append(p)
        ring.append(made)
    wall = time.perf_counter() - t0
    after = [s["collections"] for s in gc.get_stats()]
    print(f"wall {wall:.3f} s, {a.steps} steps of {reps} passes, collections by generation "
          f"{[b - c for b, c in zip(after, before)]}")


if __name__ == "__main__":
    main()
