"""A DDP training job on gloo with no gprof-dl code in it: the bundled
example of a distributed job (README, "Distributed jobs"), and the job that
tests/dist profiles: a known straggler, a balanced job, a rank that dies.

    ddp_train.py launch --world N [options]   a plain launcher: picks a free
                                            port and starts N copies of this
                                            script with RANK, WORLD_SIZE,
                                            LOCAL_RANK, MASTER_ADDR and
                                            MASTER_PORT set (what Debian's
                                            torch 1.13 needs: its torchrun
                                            fails on this Python); when a rank
                                            fails, the others are stopped, as
                                            torchrun's agent does
    ddp_train.py rank [options]               one rank, from that environment
                                            (torchrun starts it so)

Options:
    --steps S         training steps (batches) per rank
    --slow-rank R     rank R takes --slow-ms more per step, of the kind
    --slow-ms MS      --slow-kind says (the work kinds: as much work as took
                      MS on this machine at the rank's start, the fastest of
                      tries over 0.4 s, so that a busy machine stretches it,
                      as it would more work):
    --slow-kind KIND    matmul         matrix products between forward and
                                       backward (computation; the default)
                        collate-sleep  a time.sleep in the DataLoader's
                                       collate_fn (data loading)
                        python         pure-Python integer arithmetic in the
                                       step, outside any torch operator (host
                                       time outside operators)
                        hook           matrix products inside backward, from
                                       a tensor hook on an activation
                                       (computation inside Backward)
    --slow-every K    the slow rank's extra cost only on steps k with
                      k % K == K - 1 (every Kth step: an intermittent
                      straggler); 1, the default: every step
    --stall-step S    one stall: the slow rank sleeps MS ms at step S
    --stall-ms MS     (between forward and backward), once
    --die-rank R      rank R kills itself with SIGKILL at the start of step
    --die-step K      K (0-based)
    --kill-time-file F  before that SIGKILL, rank R writes the time
                      (time.monotonic_ns(), one line) to F

Each rank prints one JSON line (in one write, so that ranks sharing a pipe
never interleave): rank, pid, steps done, batch size, the bytes of
one gradient all_reduce (one DDP bucket: asserted), the slow milliseconds it
added per step and their kind, slow_wall_ms (what that extra work took, on
average over the steps it slowed, by its clock: calibrated at the start, it
takes more or less when the load changes), and the job's own clock: t0, the
time.perf_counter() just before its first batch fetch, and step_end, the
time.perf_counter() at the end of each step (after opt.step()), in seconds.
perf_counter is CLOCK_MONOTONIC on Linux, the clock of gprof-dl's traces, so
a job's throughput over steps a..b is the ranks' samples of those steps over
max(step_end[b]) - min(step_end[a - 1]) (t0 for a = 0)."""
import argparse
import datetime
import gc
import json
import os
import signal
import socket
import subprocess
import sys
import time

IN, HIDDEN, CLASSES, BATCH = 64, 128, 10, 32
SLOW_KINDS = ("matmul", "collate-sleep", "python", "hook")


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("launch", "rank"))
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow-ms", type=float, default=0.0)
    ap.add_argument("--slow-kind", choices=SLOW_KINDS, default="matmul")
    ap.add_argument("--slow-every", type=int, default=1)
    ap.add_argument("--stall-step", type=int, default=-1)
    ap.add_argument("--stall-ms", type=float, default=0.0)
    ap.add_argument("--die-rank", type=int, default=-1)
    ap.add_argument("--die-step", type=int, default=-1)
    ap.add_argument("--kill-time-file", default="")
    return ap.parse_args()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def matmuls(torch, n):
    """n matrix products."""
    a = torch.randn(96, 96)
    for _ in range(n):
        a = torch.tanh(a @ a)


def python_work(n):
    """n rounds of pure-Python integer arithmetic: no torch operator runs."""
    x = 1
    for _ in range(n):
        for i in range(200):
            x = (x * 31 + i) % 1000003
    return x


def calibrate(work, ms):
    """How many rounds of work(n) take ms on this machine: the fastest of a
    few tries (a busy machine slows some of them), so that a slowed rank
    does a fixed amount of extra work, as a rank given more work does, which
    contention then stretches, not a fixed time."""
    best = float("inf")
    for _ in range(12):  # over 0.4 s: some try falls outside a burst of load
        t = time.perf_counter()
        work(20)
        best = min(best, (time.perf_counter() - t) / 20)
        time.sleep(0.03)
    return max(1, int(round(ms / 1000.0 / best)))


def rank_main(args):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader, TensorDataset
    try:
        from torch.utils.data import default_collate
    except ImportError:  # torch < 1.11
        from torch.utils.data.dataloader import default_collate

    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, CLASSES))
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    assert grad_bytes < dist._DEFAULT_FIRST_BUCKET_BYTES, grad_bytes  # one bucket
    model = DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = TensorDataset(torch.randn(args.steps * BATCH, IN),
                         torch.randint(0, CLASSES, (args.steps * BATCH,)))
    slow = args.slow_ms if rank == args.slow_rank else 0.0
    every = max(1, args.slow_every)
    kind = args.slow_kind
    rounds = 0
    if slow and kind in ("matmul", "hook"):
        rounds = calibrate(lambda n: matmuls(torch, n), slow)
    elif slow and kind == "python":
        rounds = calibrate(python_work, slow)
    state = {"step": 0}  # the step being made: its batch is fetched first

    def slowed(step):
        return slow > 0 and step % every == every - 1

    def collate(batch):
        # runs in this process (no workers), inside the fetch of batch state["step"]
        if kind == "collate-sleep" and slowed(state["step"]):
            timed(time.sleep, slow / 1000.0)
        return default_collate(batch)

    slow_wall = []  # the wall time of each step's extra work, s

    def timed(work, *a):
        t = time.perf_counter()
        work(*a)
        slow_wall.append(time.perf_counter() - t)

    def grad_hook(grad):
        if slowed(state["step"]):
            timed(matmuls, torch, rounds)

    def on_forward(mod, inp, out):
        out.register_hook(grad_hook)  # returns None: the output stays as it is

    if kind == "hook" and slow:
        # a tensor hook on the first ReLU's output: it runs inside backward,
        # before the gradients of the first Linear, so before DDP's all_reduce
        model.module[1].register_forward_hook(on_forward)
    loader = DataLoader(data, batch_size=BATCH, collate_fn=collate)
    done = 0
    step_end = []
    t0 = time.perf_counter()
    for step, (x, y) in enumerate(loader):
        if rank == args.die_rank and step == args.die_step:
            if args.kill_time_file:
                with open(args.kill_time_file, "w") as f:
                    f.write(f"{time.monotonic_ns()}\n")
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if slowed(step):
            if kind == "matmul":
                timed(matmuls, torch, rounds)
            elif kind == "python":
                timed(python_work, rounds)
        if rank == args.slow_rank and step == args.stall_step and args.stall_ms > 0:
            time.sleep(args.stall_ms / 1000.0)
        loss.backward()
        opt.step()
        step_end.append(time.perf_counter())
        done += 1
        state["step"] = step + 1
    dist.barrier()
    line = json.dumps({"rank": rank, "world": world, "pid": os.getpid(), "steps": done, "batch": BATCH,
                       "grad_bytes": grad_bytes, "slow_ms": slow, "slow_kind": kind, "slow_every": every,
                       "slow_wall_ms": 1000.0 * sum(slow_wall) / len(slow_wall) if slow_wall else 0.0,
                       "t0": t0, "step_end": step_end}) + "\n"
    sys.stdout.flush()
    os.write(1, line.encode())  # one write: the ranks share the pipe, and lines must not interleave
    # The DDP model before the process group: were its Reducer the group's last
    # holder, torch 1.13 would destroy the group holding the GIL and join the
    # gloo workers, one of which may need the GIL to free a finished work's
    # tensor (a deadlock at exit).
    del model, opt, loader
    gc.collect()
    dist.destroy_process_group()


def launch(args):
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
               WORLD_SIZE=str(args.world))
    argv = [a for a in sys.argv[1:] if a != "launch"]
    procs = []
    for r in range(args.world):
        e = dict(env, RANK=str(r), LOCAL_RANK=str(r))
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "rank"] + argv[0:], env=e))
    status = 0
    alive = list(procs)
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
