#!/usr/bin/env python3
"""gen_dist_kineto.py - a synthetic distributed PyTorch profiler (Kineto)
trace: one JSON file per rank, as torch.profiler writes them for a 2-rank
NCCL job, for tests/hta/check_dist.py.

    python gen_dist_kineto.py DIR

writes DIR/rank-0.json and DIR/rank-1.json. Every step is the same, so each
figure per step is worked out once, by hand, in check_dist.py (the layout
is drawn there); nothing here computes a figure.

Each rank: distributedInfo (rank, world size 2, nccl, pg_config), device
properties, and per step k (step k starts at s = 5 s + 10 ms x k after
1700000000 s of Unix time, at the same wall time on both ranks; rank 1's
baseTimeNanoseconds is 2 s later than rank 0's, and its ts 2 s less):
  host thread:  ProfilerStep#k [s, s+10000) us
                aten::mm [s+900, s+950) launching K1 (cudaLaunchKernel)
                aten::mm [s+1200, s+1250) launching K2
                c10d::allreduce_ [s+1950, s+2300)
                  record_param_comms [s+1990, s+2200): allreduce, Seq k,
                    group "0" of 2, 262144 Float
                    nccl:all_reduce [s+2000, s+2100)
                      cudaLaunchKernel [s+2010, s+2020) -> the NCCL kernel
  stream 7:     K1 and K2, compute kernels
  stream 13:    ncclDevKernel_AllReduce_Sum_f32_RING_LL
with the GPU times of each rank in GPU below (us after s).
"""
import json
import os
import sys

STEPS = 5
STEP_US = 10000
BASE_US = 5_000_000
# Kineto's ts count from baseTimeNanoseconds, which each process chooses:
# rank 1's base is 2 s later and its ts 2 s less, the same wall times
WALL_NS = 1_700_000_000_000_000_000
SKEW_US = {0: 0, 1: 2_000_000}
# per rank: K1, K2 (stream 7) and the NCCL kernel (stream 13), [start, end) us after s
GPU = {
    0: {"k1": (1000, 4000), "k2": (4500, 6500), "nccl": (3000, 7000)},
    1: {"k1": (1000, 5500), "k2": (6000, 8500), "nccl": (5000, 8000)},
}
NCCL_KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
GEMM = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)"


def x(cat, name, pid, tid, ts, dur, args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
            "ts": ts, "dur": dur, "args": args}


def rank_trace(rank):
    pid, tid, dev = 4000 + rank, 4000 + rank, rank
    ev = []
    ext, corr = 1, 1
    for k in range(STEPS):
        s = BASE_US - SKEW_US[rank] + k * STEP_US
        g = GPU[rank]
        ev.append(x("user_annotation", f"ProfilerStep#{k}", pid, tid, s, STEP_US,
                    {"External id": ext}))
        ext += 1
        for name, op_at in (("k1", 900), ("k2", 1200)):
            ev.append(x("cpu_op", "aten::mm", pid, tid, s + op_at, 50, {"External id": ext}))
            ev.append(x("cuda_runtime", "cudaLaunchKernel", pid, tid, s + op_at + 10, 10,
                        {"External id": ext, "correlation": corr}))
            a, b = g[name]
            ev.append(x("kernel", GEMM, dev, 7, s + a, b - a,
                        {"External id": ext, "device": dev, "context": 1, "stream": 7,
                         "correlation": corr, "registers per thread": 128,
                         "shared memory": 49152, "grid": [8, 8, 1], "block": [128, 1, 1]}))
            ev.append({"ph": "s", "id": corr, "pid": pid, "tid": tid, "ts": s + op_at + 10,
                       "cat": "ac2g", "name": "ac2g"})
            ev.append({"ph": "f", "id": corr, "pid": dev, "tid": 7, "ts": s + a,
                       "cat": "ac2g", "name": "ac2g", "bp": "e"})
            ext += 1
            corr += 1
        ev.append(x("cpu_op", "c10d::allreduce_", pid, tid, s + 1950, 350, {"External id": ext}))
        ev.append(x("cpu_op", "record_param_comms", pid, tid, s + 1990, 210, {
            "External id": ext + 1, "Collective name": "allreduce", "dtype": "Float",
            "In msg nelems": 262144, "Out msg nelems": 262144, "In split size": "[]",
            "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1,
            "Group size": 2, "Process Group Name": "0", "Process Group Description": "default_pg",
            "Process Group Ranks": "[0, 1]", "Rank": rank, "Seq": k}))
        ev.append(x("cpu_op", "nccl:all_reduce", pid, tid, s + 2000, 100, {
            "External id": ext + 2, "Input Dims": [[262144]], "Input type": ["float"]}))
        ev.append(x("cuda_runtime", "cudaLaunchKernel", pid, tid, s + 2010, 10,
                    {"External id": ext + 2, "correlation": corr}))
        a, b = g["nccl"]
        ev.append(x("kernel", NCCL_KERNEL, dev, 13, s + a, b - a,
                    {"External id": ext + 2, "device": dev, "context": 1, "stream": 13,
                     "correlation": corr, "registers per thread": 96, "shared memory": 0,
                     "grid": [2, 1, 1], "block": [512, 1, 1]}))
        ext += 3
        corr += 1
    ev.append({"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
               "args": {"name": "python"}})
    ev.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": tid,
               "args": {"name": "thread %d (python)" % tid}})
    return {
        "schemaVersion": 1,
        "deviceProperties": [{
            "id": dev, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85198045184,
            "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024,
            "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
            "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
            "sharedMemPerMultiprocessor": 167936, "numSms": 108,
            "sharedMemPerBlockOptin": 166912}],
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2, "pg_count": 1,
                            "pg_config": [{"pg_name": "0", "pg_desc": "default_pg",
                                           "backend_config": "cuda:nccl", "pg_size": 2,
                                           "ranks": [0, 1]}],
                            "nccl_version": "2.18.1"},
        "record_shapes": 1,
        "traceEvents": ev,
        "traceName": "rank-%d.json" % rank,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": WALL_NS + SKEW_US[rank] * 1000,
    }


def main():
    out = sys.argv[1]
    for rank in GPU:
        with open(os.path.join(out, "rank-%d.json" % rank), "w") as f:
            json.dump(rank_trace(rank), f, indent=1)


if __name__ == "__main__":
    main()
