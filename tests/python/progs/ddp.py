"""DistributedDataParallel on gloo, with no gprof-dl code, started three ways:

    ddp.py launch [--world N] [--steps S]   a plain launcher: picks a free port,
                                            starts N copies of this script with
                                            RANK, WORLD_SIZE, LOCAL_RANK,
                                            MASTER_ADDR and MASTER_PORT set
    ddp.py spawn [--world N] [--steps S]    torch.multiprocessing.spawn: the
                                            ranks are known only from
                                            init_process_group's arguments
    ddp.py single [--steps S]               the same training loop without
                                            torch.distributed (the reference
                                            for the operator counts)

Each rank trains a small MLP for S steps (DDP's bucketed all_reduce: one bucket,
since the model is far below DDP's first bucket size, which is asserted), then
makes one of each explicit call whose bytes it knows (all_reduce, all_reduce
with async_op and wait(), broadcast, all_gather, barrier, send/recv between
ranks 0 and 1), starts one Python thread named THREAD_NAME, and prints one JSON
line with what a trace of it must hold: its rank, pid, main thread id, the
gradient bytes and the explicit calls' names, bytes and element types."""
import argparse
import gc
import json
import os
import socket
import subprocess
import sys
import threading

IN, HIDDEN, CLASSES, BATCH = 32, 64, 10, 16
LINEAR_LAYERS = 3  # aten::addmm calls per forward
THREAD_NAME = "gpdl-test-thread"


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("launch", "spawn", "single", "rank"))
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--steps", type=int, default=6)
    return ap.parse_args()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train(rank, world, steps, distributed):
    import torch
    import torch.nn.functional as F

    if distributed:
        import torch.distributed as dist

        if os.environ.get("RANK") is not None:
            dist.init_process_group("gloo")  # env://: RANK, WORLD_SIZE, MASTER_*
        else:
            dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, CLASSES))
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    if distributed:
        from torch.nn.parallel import DistributedDataParallel

        # One bucket: the first one DDP makes is _DEFAULT_FIRST_BUCKET_BYTES,
        # the later ones bucket_cap_mb; the model is far below both.
        assert grad_bytes < dist._DEFAULT_FIRST_BUCKET_BYTES, grad_bytes
        model = DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(steps, BATCH, IN)
    y = torch.randint(0, CLASSES, (steps, BATCH))
    for i in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(x[i]), y[i]).backward()
        opt.step()

    calls = []
    if distributed:
        def call(name, t):
            calls.append({"name": name, "bytes": t.numel() * t.element_size(), "dtype": str(t.dtype)})

        t = torch.ones(1000)
        dist.all_reduce(t)
        call("gloo:all_reduce", t)
        dist.all_reduce(t, async_op=True).wait()
        call("gloo:all_reduce", t)
        t = torch.zeros(300, dtype=torch.float64)
        dist.broadcast(t, src=0)
        call("gloo:broadcast", t)
        t = torch.arange(50)
        dist.all_gather([torch.zeros_like(t) for _ in range(world)], t)
        call("gloo:all_gather", t)
        dist.barrier()
        calls.append({"name": "gloo:barrier", "bytes": 0, "dtype": ""})
        t = torch.ones(123, dtype=torch.int32)
        if rank == 0:
            dist.send(t, dst=1)
            call("gloo:send", t)
        elif rank == 1:
            dist.recv(t, src=0)
            call("gloo:recv", t)

    named = {}

    def in_thread():
        named["tid"] = threading.get_native_id()

    th = threading.Thread(target=in_thread, name=THREAD_NAME)
    th.start()
    th.join()
    if distributed:
        dist.barrier()
        calls.append({"name": "gloo:barrier", "bytes": 0, "dtype": ""})
    out = {"rank": rank, "world": world, "pid": os.getpid(), "main_tid": threading.get_native_id(),
           "thread": {"name": THREAD_NAME, "tid": named["tid"]}, "steps": steps, "grad_bytes": grad_bytes,
           "grad_dtype": "torch.float32", "layers": LINEAR_LAYERS, "calls": calls}
    # One write of less than PIPE_BUF: the ranks share the pipe, and print()
    # writes the line and its end separately under PYTHONUNBUFFERED.
    sys.stdout.flush()
    os.write(1, (json.dumps(out, sort_keys=True) + "\n").encode())
    if distributed:
        # The DDP model goes first: when its Reducer holds the last reference to
        # the gloo process group, torch 1.13 destroys the group holding the GIL
        # and joins its worker threads, while a worker may be freeing a finished
        # work's tensor that Python let go of, which needs the GIL: a deadlock
        # at exit, seen with and without gprof-dl under load.
        del model, opt
        gc.collect()
        dist.destroy_process_group()


def spawned(rank, world, steps):
    train(rank, world, steps, True)


def main():
    a = parse()
    if a.mode == "single":
        train(0, 1, a.steps, False)
    elif a.mode == "rank":
        train(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), a.steps, True)
    elif a.mode == "launch":
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(a.world))
        ps = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "rank", "--steps", str(a.steps)],
                               env=dict(env, RANK=str(r), LOCAL_RANK=str(r))) for r in range(a.world)]
        sys.exit(max(p.wait() for p in ps))
    else:
        import torch.multiprocessing as mp

        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(free_port())
        mp.spawn(spawned, args=(a.world, a.steps), nprocs=a.world)


if __name__ == "__main__":
    main()
