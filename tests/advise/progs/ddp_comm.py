"""A 2-rank DDP job on gloo for the exposed-communication rule: a model of
two Linear layers IN -> WIDTH -> IN, BATCH samples a step, REPS forward and
backward passes a step of which only the last synchronises (the others
under no_sync(), accumulating). Wide and one pass: the gradients (2 x IN x
WIDTH floats) are all-reduced after a backward too short to hide them;
narrow and many passes: the step computes and its all-reduce is small.

    ddp_comm.py launch --world N [--width W --reps R --batch B --steps S]
    ddp_comm.py rank ...   (one rank, from RANK, WORLD_SIZE, MASTER_* set)

Each rank prints one JSON line: rank, steps, grad_bytes."""
import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys

IN = 16


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("launch", "rank"))
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--layers", type=int, default=0, help="more Linear(IN, IN) layers")
    ap.add_argument("--bucket-mb", type=float, default=25.0, help="DDP's bucket_cap_mb")
    return ap.parse_args()


def launch(args):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(args.world):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(args.world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        cmd = [sys.executable, os.path.abspath(__file__), "rank"] + sys.argv[2:]
        procs.append(subprocess.Popen(cmd, env=env))
    rc = 0
    for p in procs:
        rc = p.wait() or rc
    return rc


def rank(args):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    layers = [torch.nn.Linear(IN, args.width), torch.nn.ReLU(), torch.nn.Linear(args.width, IN)]
    for _ in range(args.layers):
        layers += [torch.nn.ReLU(), torch.nn.Linear(IN, IN)]
    model = DDP(torch.nn.Sequential(*layers), bucket_cap_mb=args.bucket_mb)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(args.batch, IN)
    for _ in range(args.steps):
        opt.zero_grad()
        for i in range(args.reps):
            ctx = model.no_sync() if i < args.reps - 1 else contextlib.nullcontext()
            with ctx:
                model(x).square().mean().backward()
        opt.step()
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    sys.stdout.write(json.dumps({"rank": dist.get_rank(), "steps": args.steps,
                                 "grad_bytes": grad_bytes}) + "\n")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    a = parse()
    sys.exit(launch(a) if a.mode == "launch" else rank(a))
