#!/usr/bin/env python3
"""What recording one PyTorch operator costs, in microseconds per op.

    bench/python/op_overhead.py --gprof-dl build/bin/gprof-dl \
        [--python /usr/bin/python3] [--python /path/to/torch2/bin/python] [--ops 100000] [--rounds 3]
    cmake --build build --target bench-python-op-overhead   # torch 1.13 and torch 2

For each interpreter: bench/python/op_loop.py (torch.add on 4-element tensors
in a Python loop, best of 5) bare, under `gprof-dl run` with full detail, with
--record-shapes, with --timer-only, and under torch.profiler, each mode once per
round, ROUNDS rounds interleaved, the best run of each mode counting (the least
disturbed by the rest of the machine); prints the time per op of each,
the microseconds each mode adds per op, and how many operator ranges the trace
holds and how many records were dropped (a dropped record costs less than a
written one, so drops would flatter the figure). The mechanism is the gprof_dl
package's: its RecordFunction observer on CPU builds of torch (Debian's
1.13), torch's own NVTX emission on CUDA builds (PyPI's 2.x). For comparison,
users report about 3-4 us per op for torch.profiler; the line "torch.profiler"
measures that on the same loop. Prints figures, never fails on time."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "op_loop.py")
NS = re.compile(rb"([0-9.]+) ns per op")
EVENTS = re.compile(rb"Events: (\d+)[^\n]*?(\d+) dropped")
PROFILER = """
import runpy, sys
from torch.profiler import profile, ProfilerActivity
sys.argv = [sys.argv[1]] + sys.argv[2:]
with profile(activities=[ProfilerActivity.CPU]):
    runpy.run_path(sys.argv[0], run_name="__main__")
"""


def ns_of(p, what):
    m = NS.search(p.stdout)
    if not m:
        sys.exit(f"{what} failed (status {p.returncode}):\n{p.stdout.decode()}\n{p.stderr.decode()[-4000:]}")
    return float(m[1])


def op_calls(gpdl, trace, env):
    p = subprocess.run([gpdl, "summary", trace, "--view", "operator", "--format", "json"], capture_output=True,
                       env=env)
    if p.returncode:
        return None
    for sec in json.loads(p.stdout)["tables"]["operator"]["sections"]:
        return sum(r["calls"] for r in sec["rows"] if r["name"] == "aten::add")
    return 0


MODES = (("gprof-dl run", []), ("gprof-dl run --record-shapes", ["--record-shapes"]),
         ("gprof-dl run --timer-only", ["--timer-only"]))


def bench(a, py, env, tmp):
    probe = subprocess.run([py, "-c", "import torch; print(torch.__version__, torch.version.cuda or '')"],
                           capture_output=True, env=env)
    if probe.returncode:
        print(f"{py}: cannot import torch, skipped")
        return
    version, _, cuda = probe.stdout.decode().strip().partition(" ")
    mech = f"torch's NVTX emission (CUDA {cuda} build)" if cuda else "the package's RecordFunction observer (CPU build)"
    print(f"torch {version} ({py}): operators through {mech}", flush=True)
    loop = [py, LOOP, str(a.ops)]
    out = os.path.join(tmp, "op.gpdl")
    best = {}
    notes = {}
    # Every mode once per round, rounds interleaved; the best of each mode is
    # the run least disturbed by the rest of the machine.
    for _ in range(a.rounds):
        best["bare"] = min(best.get("bare", 1e18), ns_of(subprocess.run(loop, capture_output=True, env=env), "bare run"))
        for name, opts in MODES:
            p = subprocess.run([a.gprof_dl, "run", "--buffer-size", "64M", "-o", out, "--force", *opts, "--", *loop],
                               capture_output=True, env=env)
            best[name] = min(best.get(name, 1e18), ns_of(p, name))
            ev = EVENTS.search(p.stderr)
            calls = op_calls(a.gprof_dl, out, env)
            note = f"aten::add ranges {calls}" if calls is not None else "no summary"
            if ev:
                note += f", {int(ev[2])} records dropped"
            notes[name] = note
        p = subprocess.run([py, "-c", PROFILER, LOOP, str(a.ops)], capture_output=True, env=env)
        best["torch.profiler (CPU)"] = min(best.get("torch.profiler (CPU)", 1e18), ns_of(p, "torch.profiler"))
    bare = best["bare"]
    print(f"  {'bare':28} {bare:8.1f} ns per op")
    for name in [m[0] for m in MODES] + ["torch.profiler (CPU)"]:
        note = f"   ({notes[name]})" if name in notes else ""
        print(f"  {name:28} {best[name]:8.1f} ns per op   {(best[name] - bare) / 1000:+7.3f} us per op{note}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--python", action="append", help="an interpreter with torch (repeatable)")
    ap.add_argument("--ops", type=int, default=100000, help="torch.add calls per timed repeat (5 repeats)")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each mode, interleaved; the best counts")
    ap.add_argument("--cache-dir", default="", help="GPROF_DL_CACHE_DIR for the package")
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPROF_DL_") and k != "PYTHONPATH"}
    if a.cache_dir:
        env["GPROF_DL_CACHE_DIR"] = a.cache_dir
    print(f"per-operator overhead: {a.ops} torch.add calls on tiny tensors per repeat, best of 5 repeats "
          f"and of {a.rounds} runs "
          f"(Python's own loop and dispatch are in every line; the differences are what recording adds)")
    with tempfile.TemporaryDirectory(prefix="gpdl-bench-") as tmp:
        for py in a.python or ["/usr/bin/python3"]:
            if py:
                bench(a, py, env, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
