#!/usr/bin/env python3
"""What recording one PyTorch operator costs, in microseconds per op.

    bench/python/op_overhead.py --gprof-dl build/bin/gprof-dl \
        [--python /usr/bin/python3] [--python /path/to/torch2/bin/python] \
        [--ops 20000] [--rounds 3] [--json OUT]
    cmake --build build --target bench-python-op-overhead   # torch 1.13 and torch 2

For each interpreter, bench/python/op_loop.py (torch.add on 4-element tensors
in a Python loop, 5 repeats, the median repeat; the loop's own CPU time, so
that other processes on a shared machine do not count) runs in every mode
once per round, ROUNDS rounds, the modes interleaved round by round:

  bare                        no profiler
  noop observer               a RecordFunction callback that does nothing
                              (noop_observer.cpp): torch's own price of any
                              callback, the floor under gprof-dl's observer
  gprof-dl                    `gprof-dl run`, full detail (operators through
                              the gprof_dl package's RecordFunction observer)
  gprof-dl --record-shapes    the same with input shapes
  gprof-dl --timer-only       steps and Dataloader only: no operator
  gprof-dl nvtx               CUDA builds only: operators through torch's own
                              NVTX emission (GPROF_DL_TORCH_OPERATORS=nvtx)
  torch.profiler              CPU activity, shapes, stack and memory off: the
                              detail of the gprof-dl line

It prints each mode's median time per op with the spread of the rounds
(min..max), the microseconds it adds per op over bare, the loop's throughput
against bare (bare's time per op / the mode's), and for the gprof-dl modes
the aten::add ranges the last run's trace holds (against those the loop
made) and the records dropped in all runs (a dropped record costs less than
a written one, so drops would flatter the figure). --json OUT writes the
figures as {"python": {"torch1": {...}, "torch2": {...}}} (the key: torch's
major version), each with per_op_us, overhead_us and throughput_vs_bare
(mode -> figure), ops_recorded and dropped (mode -> count), ops_expected,
torch_version and mechanism. Prints figures, never fails on time."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "op_loop.py")
NOOP_SRC = os.path.join(HERE, "noop_observer.cpp")
NS = re.compile(rb"([0-9.]+) ns per op")
EVENTS = re.compile(rb"Events: (\d+)[^\n]*?(\d+) dropped")
REPEATS = 5
WARMUP = 1000  # op_loop.py's torch.add calls before the timed repeats
PROFILER = """
import runpy, sys
from torch.profiler import profile, ProfilerActivity
sys.argv = [sys.argv[1]] + sys.argv[2:]
with profile(activities=[ProfilerActivity.CPU], record_shapes=False, with_stack=False, profile_memory=False):
    runpy.run_path(sys.argv[0], run_name="__main__")
"""
# Builds noop_observer.cpp as the package builds its observer (same flags and
# cache); prints the library's path.
BUILD_NOOP = """
import sys, torch
sys.path.insert(0, sys.argv[1])
from gprof_dl import _ops
print(_ops._build_observer(torch, sys.argv[2]))
"""


def ns_of(p, what):
    m = NS.search(p.stdout)
    if not m:
        sys.exit(f"{what} failed (status {p.returncode}):\n{p.stdout.decode()}\n{p.stderr.decode()[-4000:]}")
    return float(m[1])


def add_calls(gpdl, trace, env):
    p = subprocess.run([gpdl, "summary", trace, "--view", "operator", "--format", "json"], capture_output=True,
                       env=env)
    if p.returncode:
        return None
    for sec in json.loads(p.stdout)["tables"]["operator"]["sections"]:
        return sum(r["calls"] for r in sec["rows"] if r["name"] == "aten::add")
    return 0


def package_dir(gpdl):
    """The gprof_dl package beside the gprof-dl executable (build or install tree)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(gpdl)))
    for lib in ("lib", "lib64", "lib/x86_64-linux-gnu"):
        d = os.path.join(root, lib, "gprof-dl", "python")
        if os.path.isdir(os.path.join(d, "gprof_dl")):
            return d
    return None


def noop_observer(a, py, env):
    pkg = package_dir(a.gprof_dl)
    if not pkg:
        return None, "no gprof_dl package beside " + a.gprof_dl
    p = subprocess.run([py, "-c", BUILD_NOOP, pkg, NOOP_SRC], capture_output=True, env=env)
    if p.returncode:
        return None, p.stderr.decode().strip().splitlines()[-1:]
    return p.stdout.decode().strip(), None


def modes_of(cuda):
    """(name, gprof-dl run options or None, extra environment)."""
    m = [("bare", None, {}), ("noop observer", None, {}), ("gprof-dl", [], {}),
         ("gprof-dl --record-shapes", ["--record-shapes"], {}), ("gprof-dl --timer-only", ["--timer-only"], {})]
    if cuda:
        m.append(("gprof-dl nvtx", [], {"GPROF_DL_TORCH_OPERATORS": "nvtx"}))
    m.append(("torch.profiler", None, {}))
    return m


def bench(a, py, env, tmp):
    probe = subprocess.run([py, "-c", "import torch; print(torch.__version__, torch.version.cuda or '')"],
                           capture_output=True, env=env)
    if probe.returncode:
        print(f"{py}: cannot import torch, skipped")
        return None
    version, _, cuda = probe.stdout.decode().strip().partition(" ")
    build = f"CUDA {cuda} build" if cuda else "CPU build"
    print(f"torch {version} ({py}, {build}): operators through the package's RecordFunction observer", flush=True)
    loop = [py, LOOP, str(a.ops), str(REPEATS)]
    noop, why = noop_observer(a, py, env)
    modes = [m for m in modes_of(cuda) if m[0] != "noop observer" or noop]
    if not noop:
        print(f"  noop observer: not built ({why})")
    out = os.path.join(tmp, "op.gpdl")
    times = {m[0]: [] for m in modes}
    dropped = {}
    recorded = {}
    for r in range(a.rounds):
        for name, opts, extra in modes:
            run_env = dict(env, **extra)
            if name == "bare":
                p = subprocess.run(loop, capture_output=True, env=run_env)
            elif name == "noop observer":
                p = subprocess.run(loop + ["--noop-observer", noop], capture_output=True, env=run_env)
            elif name == "torch.profiler":
                p = subprocess.run([py, "-c", PROFILER] + loop[1:], capture_output=True, env=run_env)
            else:
                p = subprocess.run([a.gprof_dl, "run", "--buffer-size", "64M", "-o", out, "--force", *opts, "--",
                                    *loop], capture_output=True, env=run_env)
                ev = EVENTS.search(p.stderr)
                dropped[name] = dropped.get(name, 0) + (int(ev[2]) if ev else 0)
                if r == a.rounds - 1:
                    recorded[name] = add_calls(a.gprof_dl, out, env)
            times[name].append(ns_of(p, name))
    med = {k: statistics.median(v) for k, v in times.items()}
    bare = med["bare"]
    expected = WARMUP + a.ops * REPEATS
    for name, _, _ in modes:
        v = times[name]
        line = f"  {name:26} {med[name] / 1000:6.3f} us per op ({min(v) / 1000:.3f}..{max(v) / 1000:.3f})"
        if name != "bare":
            line += f"  {(med[name] - bare) / 1000:+6.3f} us   x{bare / med[name]:.3f} of bare"
        if name in recorded:
            line += f"   aten::add ranges {recorded[name]} of {expected}, {dropped[name]} dropped"
        print(line, flush=True)
    return {
        "torch_version": version,
        "mechanism": "observer",
        "per_op_us": {k: round(v / 1000, 4) for k, v in med.items()},
        "overhead_us": {k: round((v - bare) / 1000, 4) for k, v in med.items() if k != "bare"},
        "throughput_vs_bare": {k: round(bare / v, 4) for k, v in med.items() if k != "bare"},
        "spread_us": {k: [round(min(v) / 1000, 4), round(max(v) / 1000, 4)] for k, v in times.items()},
        "ops_recorded": recorded,
        "ops_expected": expected,
        "dropped": dropped,
        "rounds": a.rounds,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--python", action="append", help="an interpreter with torch (repeatable)")
    ap.add_argument("--ops", type=int, default=20000, help=f"torch.add calls per timed repeat ({REPEATS} repeats)")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each mode, interleaved; the median counts")
    ap.add_argument("--cache-dir", default="", help="GPROF_DL_CACHE_DIR for the package")
    ap.add_argument("--json", default="", help="write the figures to this file")
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPROF_DL_") and k != "PYTHONPATH"}
    if a.cache_dir:
        env["GPROF_DL_CACHE_DIR"] = a.cache_dir
    print(f"per-operator cost: {a.ops} torch.add calls on tiny tensors per repeat, the median of {REPEATS} repeats "
          f"in CPU time, the median of {a.rounds} rounds (spread min..max) "
          f"(Python's own loop and dispatch are in every line; the differences are what recording adds)")
    figures = {}
    with tempfile.TemporaryDirectory(prefix="gpdl-bench-") as tmp:
        for py in a.python or ["/usr/bin/python3"]:
            if py:
                f = bench(a, py, env, tmp)
                if f:
                    figures["torch" + f["torch_version"].split(".")[0]] = f
    if a.json:
        with open(a.json, "w", encoding="utf-8") as out:
            json.dump({"python": figures}, out, indent=1)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
