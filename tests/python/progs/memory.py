"""A training loop with no gprof-dl code, for --profile-memory: an MLP on
index-sliced batches (no DataLoader, so every allocation is the loop's own),
deterministic in what it allocates.

--torch-profiler OUT runs the whole loop under torch.profiler
(profile_memory=True, CPU activity) and writes to OUT what its key_averages()
and events say: {"self": {operator: self_cpu_memory_usage}, "allocations":
allocation events, "allocated": their bytes, "freed": freed bytes}, the
reference gprof-dl's Memory view is checked against.

--inner OUT runs torch.profiler (profile_memory=True) around steps
[--inner-from, --inner-to) only, inside the loop, and writes the same to OUT:
under gprof-dl run --profile-memory it must start, see the allocations of
those steps, and leave gprof-dl's recording to go on after it."""
import argparse
import json

import torch
import torch.nn.functional as F

IN, HIDDEN, CLASSES = 64, 256, 10


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--torch-profiler", default="", metavar="OUT")
    ap.add_argument("--inner", default="", metavar="OUT")
    ap.add_argument("--inner-from", type=int, default=2)
    ap.add_argument("--inner-to", type=int, default=4)
    return ap.parse_args()


def reference(prof):
    """What torch.profiler saw: per operator self memory, and its
    allocation events."""
    self_mem = {}
    for e in prof.key_averages():
        if e.key != "[memory]" and e.self_cpu_memory_usage:
            self_mem[e.key] = e.self_cpu_memory_usage
    allocations = allocated = freed = 0
    for e in prof.profiler.kineto_results.events():  # the allocator's reports, every one
        if e.name() == "[memory]":
            b = e.nbytes()
            if b > 0:
                allocations += 1
                allocated += b
            else:
                freed -= b
    return {"self": self_mem, "allocations": allocations, "allocated": allocated, "freed": freed}


def main():
    a = parse()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, CLASSES))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    n = a.steps * a.batch_size
    x = torch.randn(n, IN)
    y = torch.randint(0, CLASSES, (n,))

    def step(i):
        xb = x[i * a.batch_size:(i + 1) * a.batch_size]
        yb = y[i * a.batch_size:(i + 1) * a.batch_size]
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    from torch.profiler import ProfilerActivity, profile

    if a.torch_profiler:
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            for i in range(a.steps):
                loss = step(i)
        with open(a.torch_profiler, "w", encoding="utf-8") as f:
            json.dump(reference(prof), f)
    elif a.inner:
        prof = None
        for i in range(a.steps):
            if i == a.inner_from:
                prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
                prof.__enter__()
            loss = step(i)
            if i + 1 == a.inner_to:
                prof.__exit__(None, None, None)
        with open(a.inner, "w", encoding="utf-8") as f:
            json.dump(reference(prof), f)
    else:
        for i in range(a.steps):
            loss = step(i)
    print("loss %.4f" % float(loss.detach()))


if __name__ == "__main__":
    main()
