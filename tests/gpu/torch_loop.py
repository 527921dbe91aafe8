"""A PyTorch training loop on the GPU, for tests/gpu/gpu_e2e.py's torch_cuda
case: a small convolution and MLP, SGD, 30 steps on tensors already on the
device (no DataLoader), torch.cuda.synchronize() at the end of every step so
that no kernel crosses from one step into the next.

Steps WINDOW to STEPS-1 are the measured ones: they run inside an NVTX range
"gpdl_window" (under gprof-dl, the kernels launched inside it are those of
these steps), and the loop prints their ips, time.perf_counter from the start
of step WINDOW to the end of the last one:

    ips: 1234.56 samples/s over steps 10-29

--torch-profiler OUT runs the same loop under torch.profiler with a schedule
whose active steps are exactly WINDOW to STEPS-1 (wait WINDOW-1, warm-up 1),
exports the chrome trace and writes to OUT what it holds of those steps:
{"kernels": N, "kernel_ns": total duration, "by_name": {name: count},
 "memcpy": N, "memset": N}. The kernels are the trace's events of category
"kernel", as torch.profiler's own key_averages() counts them with
device_type CUDA; the chrome trace gives each one's exact duration in ns."""
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


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--window", type=int, default=10, help="the first measured step")
    ap.add_argument("--torch-profiler", default="", metavar="OUT")
    a = ap.parse_args()
    if not 1 <= a.window < a.steps:
        ap.error("--window must be at least 1 and less than --steps")
    return a


def model_and_data(dev):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(16 * 16 * 16, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10)).to(dev)
    xs = torch.randn(4, BATCH, 3, 32, 32, device=dev)
    ys = torch.randint(0, 10, (4, BATCH), device=dev)
    return model, xs, ys


def train(a, dev, on_step=None):
    model, xs, ys = model_and_data(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    t0 = None
    for step in range(a.steps):
        if step == a.window:
            torch.cuda.nvtx.range_push("gpdl_window")
            t0 = time.perf_counter()
        out = model(xs[step % 4])
        loss = F.cross_entropy(out, ys[step % 4])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        t1 = time.perf_counter()  # before the profiler's step, which may export its trace
        if on_step:
            on_step()
    elapsed = t1 - t0
    torch.cuda.nvtx.range_pop()
    n = a.steps - a.window
    print(f"ips: {n * BATCH / elapsed:.2f} samples/s over steps {a.window}-{a.steps - 1}")
    print(f"final loss {loss.item():.3f}")


def with_profiler(a, dev):
    from torch.profiler import ProfilerActivity, profile, schedule

    tmp = tempfile.mkdtemp(prefix="gpdl-torch-loop-")
    trace = os.path.join(tmp, "trace.json")
    sched = schedule(wait=a.window - 1, warmup=1, active=a.steps - a.window, repeat=1)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched,
                 on_trace_ready=lambda p: p.export_chrome_trace(trace)) as prof:
        train(a, dev, on_step=prof.step)
    with open(trace, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    cats = collections.Counter(e.get("cat") for e in events if e.get("ph") == "X")
    # Kineto writes microseconds with three decimals: exact ns.
    res = {"kernels": len(kernels), "kernel_ns": sum(round(float(e["dur"]) * 1000) for e in kernels),
           "by_name": collections.Counter(e["name"] for e in kernels),
           "memcpy": cats.get("gpu_memcpy", 0), "memset": cats.get("gpu_memset", 0)}
    # The same count by torch.profiler's own table, for the record.
    ka = sum(e.count for e in prof.key_averages() if str(getattr(e, "device_type", "")).endswith("CUDA"))
    res["key_averages_cuda_events"] = ka
    with open(a.torch_profiler, "w", encoding="utf-8") as f:
        json.dump(res, f)
    os.unlink(trace)
    os.rmdir(tmp)


def main():
    a = parse()
    if not torch.cuda.is_available():
        sys.stderr.write("torch_loop: no CUDA device\n")
        return 77
    dev = torch.device("cuda")
    if a.torch_profiler:
        with_profiler(a, dev)
    else:
        train(a, dev)
    return 0


if __name__ == "__main__":
    sys.exit(main())
