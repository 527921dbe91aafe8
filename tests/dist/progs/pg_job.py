"""pg_job.py - a DDP job on gloo with a second process group: each step, DDP's
all_reduce of the gradients on the world group, then an all_reduce of a
small tensor on a group of some of the ranks (dist.new_group; ranks outside
it make no call); after the steps, point-to-point calls on both groups and a
world all_reduce after them. No gprof-dl code in it: tests/dist/pg_e2e.py
profiles it.

    pg_job.py launch --world N [options]   a plain launcher (torch 1.13: Debian's
                                           torchrun fails on this Python): starts N
                                           copies with RANK, WORLD_SIZE, LOCAL_RANK,
                                           MASTER_ADDR and MASTER_PORT set
    pg_job.py rank [options]               one rank (torchrun starts it so)

Options: --steps S; --subset 0,2 (the second group's ranks); --sub-numel N
(the elements of its float all_reduce).

Each rank prints one JSON line (one write): rank, pid, steps, grad_bytes
(DDP's one bucket), sub_bytes, subset, p2p (what it sent and received: op,
peer, group)."""
import argparse
import datetime
import gc
import json
import os
import socket
import subprocess
import sys
import time

IN, HIDDEN, CLASSES, BATCH = 32, 64, 10, 16


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("launch", "rank"))
    ap.add_argument("--world", type=int, default=4)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--subset", default="0,2")
    ap.add_argument("--sub-numel", type=int, default=100)
    return ap.parse_args()


def rank_main(args):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader, TensorDataset

    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    subset = [int(r) for r in args.subset.split(",")]
    sub = dist.new_group(subset)  # every rank calls it; only members get a group
    torch.manual_seed(rank)
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES))
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    model = DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = TensorDataset(torch.randn(args.steps * BATCH, IN), torch.randint(0, CLASSES, (args.steps * BATCH,)))
    loader = DataLoader(data, batch_size=BATCH)
    extra = torch.ones(args.sub_numel)
    done = 0
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if rank in subset:
            dist.all_reduce(extra, group=sub)
        done += 1
    # point-to-point on both groups: world 0 -> 1, then subset[0] -> subset[1];
    # then a world all_reduce whose sequence number must still agree
    p2p = []
    t = torch.zeros(7)
    if rank == 0:
        dist.send(t, 1)
        p2p.append(["send", 1, "world"])
    elif rank == 1:
        dist.recv(t, 0)
        p2p.append(["recv", 0, "world"])
    if rank == subset[0]:
        dist.send(t, subset[1], group=sub)
        p2p.append(["send", subset[1], "sub"])
    elif rank == subset[1]:
        dist.recv(t, subset[0], group=sub)
        p2p.append(["recv", subset[0], "sub"])
    dist.all_reduce(torch.ones(3))
    dist.barrier()
    line = json.dumps({"rank": rank, "world": world, "pid": os.getpid(), "steps": done, "grad_bytes": grad_bytes,
                       "sub_bytes": extra.numel() * extra.element_size(), "subset": subset, "p2p": p2p}) + "\n"
    sys.stdout.flush()
    os.write(1, line.encode())
    # the DDP model before the groups (see examples/ddp_train.py)
    del model, opt, loader
    gc.collect()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args):
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(args.world))
    argv = [a for a in sys.argv[1:] if a != "launch"]
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "rank"] + argv,
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r))) for r in range(args.world)]
    status, alive = 0, list(procs)
    while alive:
        for p in list(alive):
            rc = p.poll()
            if rc is None:
                continue
            alive.remove(p)
            if rc != 0:
                status = status or (rc if rc > 0 else 128 - rc)
                for q in alive:
                    q.terminate()
        time.sleep(0.05)
    return status


def main():
    args = parse()
    if args.mode == "launch":
        return launch(args)
    rank_main(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
