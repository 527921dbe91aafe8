"""Two ranks that all_reduce on NCCL, for tests/gpu/device-kit's check.

    nccl_allreduce.py launch [--world 2] [--iters 20] [--backend nccl]
        starts WORLD copies of itself ("rank") with RANK, WORLD_SIZE,
        LOCAL_RANK, MASTER_ADDR and MASTER_PORT set, all on GPU 0 when there
        is one GPU (NCCL may refuse two ranks on one device: the launcher then
        fails with the ranks' messages); when a rank fails the others are
        killed. Exit status: the first failing rank's, else 0.
    nccl_allreduce.py rank ...
        one rank: ITERS all_reduce of 4 MiB (float32) each, checked, then
        one JSON line {"rank", "world", "iters", "sum_ok", "device"}.

Exit status 77 without CUDA."""
import argparse
import json
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(a):
    port = str(free_port())
    procs = []
    for r in range(a.world):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(a.world), LOCAL_RANK=str(r),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "rank", "--iters", str(a.iters),
                                       "--backend", a.backend], env=env))
    status = 0
    live = list(procs)
    while live:
        for p in list(live):
            rc = p.poll()
            if rc is None:
                continue
            live.remove(p)
            if rc != 0 and status == 0:
                status = rc if rc > 0 else 128 - rc
                for q in live:
                    q.kill()
        time.sleep(0.05)
    return status


def rank(a):
    import torch
    import torch.distributed as dist

    if not torch.cuda.is_available():
        sys.stderr.write("nccl_allreduce: no CUDA device\n")
        return 77
    r, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", r % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    dist.init_process_group(a.backend, rank=r, world_size=world)
    x = torch.full((1 << 20,), float(r + 1), device=dev)
    want = float(sum(range(1, world + 1)))
    ok = True
    for _ in range(a.iters):
        y = x.clone()
        dist.all_reduce(y)
        torch.cuda.synchronize()
        ok = ok and bool((y == want).all())
    dist.barrier()
    dist.destroy_process_group()
    line = json.dumps({"rank": r, "world": world, "iters": a.iters, "sum_ok": ok, "device": str(dev)})
    os.write(1, (line + "\n").encode())
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("launch", "rank"))
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--backend", default="nccl")
    a = ap.parse_args()
    return launch(a) if a.what == "launch" else rank(a)


if __name__ == "__main__":
    sys.exit(main())
