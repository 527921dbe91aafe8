"""A bursty CPU load beside a test's job: real processes that compete for the
machine's cores the way another program's bursts do.

    from load import BurstyLoad
    with BurstyLoad(procs=1, seed=1):
        ... run the job beside the load ...

Each of the PROCS processes alternates busy (a spin of BUSY_MS, uniform at
random) and idle (a sleep of IDLE_MS, uniform at random), from its own seeded
generator (seed + its index), so a run's bursts are the same from one run to
the next but fall at other points of the job. They are started on entering
the block and stopped (SIGTERM, then SIGKILL) on leaving it; a process whose
parent has gone exits by itself, so none outlives a killed test.

    python load.py [--procs N] [--seed S] [--seconds T]   the load alone, for T s
                                                          (forever without --seconds)
"""
import os
import random
import signal
import subprocess
import sys
import time

BUSY_MS = (20.0, 150.0)
IDLE_MS = (20.0, 150.0)


def _worker(seed, busy_ms, idle_ms, seconds, parent):
    rng = random.Random(seed)
    stop = time.monotonic() + seconds if seconds > 0 else float("inf")
    x = 0
    while time.monotonic() < stop:
        end = time.perf_counter() + rng.uniform(*busy_ms) / 1000.0
        while time.perf_counter() < end:
            for i in range(500):
                x = (x * 33 + i) & 0xFFFFFFFF
        if os.getppid() != parent:
            return  # the test that started the load is gone
        time.sleep(rng.uniform(*idle_ms) / 1000.0)


class BurstyLoad:
    """PROCS processes of bursty CPU load while the block runs (see the module)."""

    def __init__(self, procs=1, seed=1, busy_ms=BUSY_MS, idle_ms=IDLE_MS):
        self.procs = procs
        self.seed = seed
        self.busy_ms = busy_ms
        self.idle_ms = idle_ms
        self.p = []

    def start(self):
        for i in range(self.procs):
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--seed", str(self.seed + i),
                   "--busy", f"{self.busy_ms[0]},{self.busy_ms[1]}",
                   "--idle", f"{self.idle_ms[0]},{self.idle_ms[1]}", "--parent", str(os.getpid())]
            self.p.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL))
        return self

    def stop(self):
        for p in self.p:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.p:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.p = []

    def pids(self):
        return [p.pid for p in self.p]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def main():
    import argparse
    ap = argparse.ArgumentParser(description="bursty CPU load (tests/pylib/load.py)")
    ap.add_argument("--procs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=0.0)
    ap.add_argument("--busy", default=f"{BUSY_MS[0]},{BUSY_MS[1]}", help="MIN,MAX ms")
    ap.add_argument("--idle", default=f"{IDLE_MS[0]},{IDLE_MS[1]}", help="MIN,MAX ms")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--parent", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    busy = tuple(float(v) for v in a.busy.split(","))
    idle = tuple(float(v) for v in a.idle.split(","))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if a.worker:
        _worker(a.seed, busy, idle, a.seconds, a.parent or os.getppid())
        return 0
    with BurstyLoad(a.procs, a.seed, busy, idle) as load:
        print(f"bursty load: pids {load.pids()}", flush=True)
        try:
            if a.seconds > 0:
                time.sleep(a.seconds)
            else:
                while True:
                    time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
