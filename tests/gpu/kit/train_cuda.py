"""A PyTorch CUDA training loop with a DataLoader, for tests/gpu/device-kit's
check: a convolution and an MLP, SGD, STEPS steps (50) over batches that a
torch.utils.data.DataLoader (WORKERS worker processes, 2) draws from a
TensorDataset in host memory and the loop copies to the GPU; the loop calls
torch.cuda.synchronize() at the end of every step, so that no kernel crosses
from one step into the next.

Steps WINDOW to STEPS-1 (10-49) are the measured ones: they run inside an
NVTX range "gpdl_window" (under gprof-dl the kernels launched inside it are
those of these steps), and every step inside one of its own, "kit_step_N".
The loop prints their ips, time.perf_counter from the start of step WINDOW to
the end of the last one:

    ips: 1234.56 samples/s over steps 10-49

--torch-profiler OUT: the same loop under torch.profiler, whose schedule's
active steps are exactly WINDOW to STEPS-1; writes to OUT (JSON) what its
chrome trace holds of them: {"kernels": N, "kernel_ns": total duration,
"by_name": {name: count}, "memcpy": N, "memset": N}.

--capture A:B: torch.cuda.profiler.start() before step A and .stop() after
step B-1 (cudaProfilerStart/Stop, for `gprof-dl run
--capture-range=cudaProfilerApi`).

--device cpu runs the loop on the CPU (no NVTX, no capture): a smoke test of
the script itself where there is no GPU. Exit status 77 when CUDA is asked
for and there is none."""
import argparse
import collections
import json
import os
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

BATCH = 256
SAMPLES = 8 * BATCH  # 8 batches an epoch; the workers persist across epochs


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--window", type=int, default=10, help="the first measured step")
    ap.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    ap.add_argument("--torch-profiler", default="", metavar="OUT")
    ap.add_argument("--capture", default="", metavar="A:B")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    a = ap.parse_args()
    if not 1 <= a.window < a.steps:
        ap.error("--window must be at least 1 and less than --steps")
    a.cap = None
    if a.capture:
        lo, hi = (int(x) for x in a.capture.split(":"))
        if not 0 <= lo < hi <= a.steps:
            ap.error("--capture A:B needs 0 <= A < B <= --steps")
        a.cap = (lo, hi)
    return a


def model(dev):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(16 * 16 * 16, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10)).to(dev)


def batches(a):
    """Batches for ever, from a DataLoader whose workers persist across epochs."""
    g = torch.Generator().manual_seed(1)
    ds = torch.utils.data.TensorDataset(torch.randn(SAMPLES, 3, 32, 32, generator=g),
                                        torch.randint(0, 10, (SAMPLES,), generator=g))
    dl = torch.utils.data.DataLoader(ds, batch_size=BATCH, shuffle=False, drop_last=True,
                                     num_workers=a.workers, persistent_workers=a.workers > 0,
                                     pin_memory=a.device == "cuda")
    while True:
        yield from dl


def train(a, dev, on_step=None):
    cuda = dev.type == "cuda"
    net = model(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    push = torch.cuda.nvtx.range_push if cuda else (lambda name: None)
    pop = torch.cuda.nvtx.range_pop if cuda else (lambda: None)
    data = batches(a)
    t0 = t1 = None
    for step in range(a.steps):
        if a.cap and step == a.cap[0]:
            torch.cuda.profiler.start()
        if step == a.window:
            push("gpdl_window")
            t0 = time.perf_counter()
        push(f"kit_step_{step}")
        x, y = next(data)
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sync()
        pop()
        t1 = time.perf_counter()  # before the profiler's step, which may export its trace
        if a.cap and step == a.cap[1] - 1:
            torch.cuda.profiler.stop()
        if on_step:
            on_step()
    pop()
    n = a.steps - a.window
    print(f"ips: {n * BATCH / (t1 - t0):.2f} samples/s over steps {a.window}-{a.steps - 1}", flush=True)
    print(f"final loss {loss.item():.3f}", flush=True)


def with_profiler(a, dev):
    from torch.profiler import ProfilerActivity, profile, schedule

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    tmp = tempfile.mkdtemp(prefix="gpdl-kit-train-")
    trace = os.path.join(tmp, "trace.json")
    sched = schedule(wait=a.window - 1, warmup=1, active=a.steps - a.window, repeat=1)
    with profile(activities=acts, schedule=sched, on_trace_ready=lambda p: p.export_chrome_trace(trace)) as prof:
        train(a, dev, on_step=prof.step)
    with open(trace, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    cats = collections.Counter(e.get("cat") for e in events if e.get("ph") == "X")
    # Kineto writes microseconds with three decimals: exact ns.
    res = {"kernels": len(kernels), "kernel_ns": sum(round(float(e["dur"]) * 1000) for e in kernels),
           "by_name": collections.Counter(e["name"] for e in kernels),
           "memcpy": cats.get("gpu_memcpy", 0), "memset": cats.get("gpu_memset", 0)}
    with open(a.torch_profiler, "w", encoding="utf-8") as f:
        json.dump(res, f)
    os.unlink(trace)
    os.rmdir(tmp)


def main():
    a = parse()
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.stderr.write("train_cuda: no CUDA device\n")
        return 77
    dev = torch.device(a.device)
    if a.torch_profiler:
        with_profiler(a, dev)
    else:
        train(a, dev)
    return 0


if __name__ == "__main__":
    sys.exit(main())
