#!/usr/bin/env python3
"""A Kineto-style (PyTorch profiler) GPU trace, made up but shaped like the
real thing, with every category gprof-dl imports: cpu_op, user_annotation
(ProfilerStep#N and plain ranges), python_function, cuda_runtime,
cuda_driver, kernel (compute and NCCL), gpu_memcpy, gpu_memset,
gpu_user_annotation, [memory] instants, ac2g flows, process/thread metadata,
deviceProperties, distributedInfo and baseTimeNanoseconds; plus the
profiler's own "Trace" span and global instants.

Times are microseconds with three decimals relative to baseTimeNanoseconds,
as PyTorch 2.x writes them; every number is derived from a seeded random
generator, so a run is reproducible.

    gen_kineto.py OUT.json[.gz] [--steps N] [--seed S] [--rank R --world W]
"""
import argparse
import gzip
import json
import random

PID = 31337
TID_MAIN = 31337
TID_BWD = 31400
DEVICE = 0
STREAMS = (7, 13)  # compute, NCCL


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.events = []
        self.corr = 1000
        self.ext = 1
        self.addr = 0x7F0000000000

    def ns(self, lo, hi):
        return self.rng.randint(lo, hi)

    def x(self, cat, name, pid, tid, start_ns, dur_ns, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
             "ts": us(start_ns), "dur": us(dur_ns)}
        if args is not None:
            e["args"] = args
        self.events.append(e)
        return e

    def memory(self, t_ns, nbytes, device, total):
        self.events.append({
            "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
            "pid": PID, "tid": TID_MAIN, "ts": us(t_ns),
            "args": {"Total Reserved": 1 << 30, "Total Allocated": total, "Bytes": nbytes,
                     "Addr": self.addr, "Device Type": 1 if device >= 0 else 0,
                     "Device Id": device}})

    def flow(self, corr, host_ns, gpu_ns, stream):
        self.events.append({"ph": "s", "id": corr, "pid": PID, "tid": TID_MAIN,
                            "ts": us(host_ns), "cat": "ac2g", "name": "ac2g"})
        self.events.append({"ph": "f", "id": corr, "pid": DEVICE, "tid": stream,
                            "ts": us(gpu_ns), "cat": "ac2g", "name": "ac2g", "bp": "e"})

    def launch(self, op_ext, host_ns, gpu_ns, name, stream, runtime="cudaLaunchKernel",
               cat="kernel", gpu_args=None, gpu_dur=None):
        """A runtime call at host_ns and the GPU work it launched at gpu_ns."""
        self.corr += 1
        corr = self.corr
        rt_cat = "cuda_driver" if runtime.startswith("cu") and not runtime.startswith("cuda") else "cuda_runtime"
        self.x(rt_cat, runtime, PID, TID_MAIN, host_ns, self.ns(2000, 9000),
               {"External id": op_ext, "cbid": 211, "correlation": corr})
        args = {"External id": op_ext, "queued": 0, "device": DEVICE, "context": 1,
                "stream": stream, "correlation": corr}
        args.update(gpu_args or {})
        dur = gpu_dur if gpu_dur is not None else self.ns(5000, 200000)
        self.x(cat, name, DEVICE, stream, gpu_ns, dur, args)
        self.flow(corr, host_ns, gpu_ns, stream)
        return gpu_ns + dur


def us(ns):
    """ns as Kineto writes microseconds: three decimals, exactly."""
    return float(f"{ns // 1000}.{ns % 1000:03d}")


def gen_step(g, step, t):
    """One training step starting at t (ns); returns its end."""
    step_start = t
    t += g.ns(1000, 5000)
    g.x("python_function", "train.py(42): train_step", PID, TID_MAIN, t, 0, {"Python id": step})
    py = g.events[-1]
    ops = []
    gpu_t = t + 20000
    # forward: linear layers
    with_region = g.x("user_annotation", "forward", PID, TID_MAIN, t, 0, {"External id": g.ext})
    region_start = t
    g.ext += 1
    for layer in range(3):
        op_ext = g.ext
        g.ext += 1
        op_start = t + g.ns(500, 2000)
        ev = g.x("cpu_op", "aten::addmm", PID, TID_MAIN, op_start, 0,
                 {"External id": op_ext, "Record function id": 0, "Sequence number": step * 10 + layer,
                  "Input Dims": [[64, 128], [64, 256], [256, 128]], "Input type": ["float"] * 3})
        g.memory(op_start + 100, 64 * 128 * 4, DEVICE, 1 << 20)
        gpu_t = max(gpu_t, op_start + 20000)
        gpu_t = g.launch(op_ext, op_start + 3000, gpu_t, "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>(Params)",
                         STREAMS[0], gpu_args={"registers per thread": 232, "shared memory": 73728,
                                               "blocks per SM": 0.6, "warps per SM": 2.4,
                                               "grid": [2, 32, 1], "block": [128, 1, 1],
                                               "est. achieved occupancy %": 6}) + g.ns(500, 3000)
        op_end = op_start + g.ns(15000, 40000)
        ev["dur"] = us(op_end - op_start)
        ops.append(ev)
        t = op_end
    with_region["dur"] = us(t - region_start)
    # the GPU side of the annotation
    g.x("gpu_user_annotation", "forward", DEVICE, STREAMS[0], region_start + 19999, gpu_t - region_start - 19999,
        {"External id": with_region["args"]["External id"]})
    # a copy and a set, launched by aten::copy_ and aten::zero_
    for opname, runtime, cat, name, extra in (
            ("aten::copy_", "cudaMemcpyAsync", "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)",
             {"bytes": 1 << 20, "memory bandwidth (GB/s)": 10.5}),
            ("aten::zero_", "cudaMemsetAsync", "gpu_memset", "Memset (Device)",
             {"bytes": 4096, "memory bandwidth (GB/s)": 1.5})):
        op_ext = g.ext
        g.ext += 1
        op_start = t + g.ns(500, 2000)
        ev = g.x("cpu_op", opname, PID, TID_MAIN, op_start, 0, {"External id": op_ext})
        gpu_t = g.launch(op_ext, op_start + 1000, max(gpu_t, op_start + 10000), name, STREAMS[0],
                         runtime=runtime, cat=cat, gpu_args=extra, gpu_dur=g.ns(1000, 50000))
        op_end = op_start + g.ns(5000, 12000)
        ev["dur"] = us(op_end - op_start)
        t = op_end
    # backward on its own thread, with a driver launch
    bwd_start = t + 1000
    op_ext = g.ext
    g.ext += 1
    g.x("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", PID, TID_BWD, bwd_start,
        g.ns(30000, 60000), {"External id": op_ext, "Fwd thread id": TID_MAIN})
    g.corr += 1
    g.x("cuda_driver", "cuLaunchKernel", PID, TID_MAIN, t + 500, g.ns(1000, 3000),
        {"cbid": 307, "correlation": g.corr})
    gpu_t = max(gpu_t, t + 5000)
    d = g.ns(10000, 80000)
    g.x("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)",
        DEVICE, STREAMS[0], gpu_t, d, {"device": DEVICE, "context": 1, "stream": STREAMS[0],
                                       "correlation": g.corr, "registers per thread": 16,
                                       "shared memory": 0, "grid": [160, 1, 1], "block": [128, 1, 1]})
    gpu_t += d
    # the all-reduce of DDP: an NCCL kernel on its own stream
    op_ext = g.ext
    g.ext += 1
    op_start = bwd_start + 2000
    ev = g.x("cpu_op", "nccl:all_reduce", PID, TID_BWD, op_start, g.ns(3000, 9000), {"External id": op_ext})
    g.launch(op_ext, op_start + 500, gpu_t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
             STREAMS[1], gpu_args={"registers per thread": 96, "shared memory": 0,
                                   "grid": [2, 1, 1], "block": [512, 1, 1]}, gpu_dur=g.ns(50000, 150000))
    g.memory(t + 50, -(64 * 128 * 4), DEVICE, 1 << 19)
    g.memory(t + 60, 256, -1, 0)
    t = max(t, bwd_start + 60000)
    py["dur"] = us(t - py_start(py))
    step_end = t + g.ns(1000, 3000)
    g.x("user_annotation", f"ProfilerStep#{step}", PID, TID_MAIN, step_start, step_end - step_start,
        {"External id": g.ext})
    g.ext += 1
    return step_end


def py_start(e):
    return round(e["ts"] * 1000)


def generate(steps, seed, rank, world):
    g = Gen(seed)
    t = 5_000_000
    for step in range(steps):
        t = gen_step(g, step, t) + 1000
    meta = [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": 0, "args": {"name": "python3 train.py"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": PID, "tid": 0, "args": {"labels": "CPU"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": TID_MAIN, "args": {"name": "thread 31337 (python3)"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": TID_BWD, "args": {"name": "thread 31400 (pt_autograd_0)"}},
        {"name": "process_name", "ph": "M", "ts": 0, "pid": DEVICE, "tid": 0, "args": {"name": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": DEVICE, "tid": 7, "args": {"name": "stream 7"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": DEVICE, "tid": 13, "args": {"name": "stream 13"}},
    ]
    tail = [
        {"ph": "X", "cat": "Trace", "ts": us(4_000_000), "dur": us(t - 4_000_000 + 2000), "pid": "Spans",
         "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
        {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
         "tid": "Trace PyTorch Profiler", "ts": us(4_000_000)},
        {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": us(t + 3000)},
    ]
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [{
            "id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85100068864,
            "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024,
            "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "regsPerMultiprocessor": 65536,
            "warpSize": 32, "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936,
            "numSms": 108, "sharedMemPerBlockOptin": 166912}],
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world},
        "with_stack": 0,
        "traceEvents": meta + g.events + tail,
        "traceName": "gen_kineto",
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1_700_000_000_000_000_000,
    }
    return doc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--world", type=int, default=2)
    a = ap.parse_args()
    doc = generate(a.steps, a.seed, a.rank, a.world)
    text = json.dumps(doc, indent=1)
    if a.out.endswith(".gz"):
        with gzip.open(a.out, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
