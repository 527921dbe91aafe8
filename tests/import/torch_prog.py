#!/usr/bin/env python3
"""A small CPU training loop profiled with torch.profiler, for import.py:

    torch_prog.py OUT.json META.json [--record-shapes] [--zero-grad-after]
                  [--no-schedule]

Writes the profiler's chrome trace (export_chrome_trace) to OUT.json and,
to META.json, what torch itself counted: aten::addmm calls in
key_averages() and the number of profiled steps. --zero-grad-after calls
optimizer.zero_grad() between the forward and the backward (not before the
forward); --no-schedule profiles the whole loop with no schedule and no
steps (every operator of the run is in the window)."""
import json
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule

ACTIVE = 3


def main():
    out, meta = sys.argv[1], sys.argv[2]
    flags = sys.argv[3:]
    shapes = "--record-shapes" in flags
    zero_after = "--zero-grad-after" in flags
    steps = "--no-schedule" not in flags
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 32), torch.randn(16, 8)
    counts = {}

    def ready(p):
        p.export_chrome_trace(out)
        counts["aten::addmm"] = sum(e.count for e in p.key_averages() if e.key == "aten::addmm")

    kw = dict(schedule=schedule(wait=1, warmup=1, active=ACTIVE), on_trace_ready=ready) if steps else {}
    with profile(activities=[ProfilerActivity.CPU], record_shapes=shapes, **kw) as prof:
        for _ in range(2 + ACTIVE + 1):
            if not zero_after:
                opt.zero_grad()
            pred = model(x)
            if zero_after:
                opt.zero_grad()
            loss = nn.functional.mse_loss(pred, y)
            loss.backward()
            opt.step()
            if steps:
                prof.step()
    if not steps:
        ready(prof)
    counts["steps"] = ACTIVE if steps else 0
    with open(meta, "w") as f:
        json.dump(counts, f)


if __name__ == "__main__":
    main()
