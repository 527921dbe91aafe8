#!/usr/bin/env python3
"""What gprof-dl's GPU collection costs a kernel launch, in ns per launch.

    bench/gpu/launch_cost.py --gprof-dl build/bin/gprof-dl --bin build/bench/launch-cost \
        [--runs 5] [--launches 200000]
    cmake --build build --target bench-gpu-launch   # the same, with the defaults

Runs launch-cost (launch_cost.cu: an empty kernel launched N times in a loop,
timed with CLOCK_MONOTONIC around the loop and the final
cudaDeviceSynchronize) RUNS times each way, in turn so that every way sees the
same machine:

  bare          no gprof-dl
  --no-gpu      under `gprof-dl run --no-gpu`: the collector preloaded, CUPTI not
  gprof-dl      under `gprof-dl run`: CUPTI records every launch (a runtime API
                record and a kernel record) and the collector converts them

and prints the median and best ns per launch of each, and the difference from
bare. The first run of gprof-dl also says how many kernels the trace holds
against how many were launched, and how many records were dropped. Figures
only: it never passes or fails on time. Without a CUDA device it prints
"no CUDA device: skipped" and exits 0."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

LINE = re.compile(rb"launches (\d+) total_ns (\d+) ns_per_launch ([0-9.]+)")
WARMUP = 1000  # launch_cost.cu's warm-up launches, recorded too


def run_once(cmd):
    p = subprocess.run(cmd, capture_output=True, timeout=600)
    if p.returncode == 77:
        return None, p
    m = LINE.search(p.stdout)
    if p.returncode != 0 or not m:
        sys.exit(f"launch-cost failed (status {p.returncode}): {' '.join(cmd)}\n"
                 f"{p.stdout.decode(errors='replace')}\n{p.stderr.decode(errors='replace')[-4000:]}")
    return float(m[3]), p


def recorded(gprof_dl, trace):
    """(kernels named 'empty' in the trace, events dropped)."""
    p = subprocess.run([gprof_dl, "summary", trace, "--view", "kernel", "--format", "json"],
                       capture_output=True, timeout=600)
    if p.returncode != 0:
        return None, None
    doc = json.loads(p.stdout)
    kernels = 0
    for sec in doc["tables"]["kernel"].get("sections", []):
        for row in sec.get("rows", []):
            if row.get("name", "").split("(")[0].split()[-1:] == ["empty"]:
                kernels += row.get("calls", 0)
    return kernels, doc.get("events", {}).get("dropped")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--bin", required=True, help="the launch-cost program")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--launches", type=int, default=200000)
    a = ap.parse_args()
    if not os.path.exists(a.bin):
        print(f"launch-cost is not built ({a.bin}): it needs nvcc and GPDL_BUILD_CUDA_TESTS=ON")
        return 0
    first, p = run_once([a.bin, "1000"])
    if first is None:
        print(f"no CUDA device: skipped ({p.stderr.decode(errors='replace').strip()})")
        return 0

    ways = {"bare": [], "--no-gpu": [], "gprof-dl": []}
    with tempfile.TemporaryDirectory(prefix="gpdl-bench-gpu-") as tmp:
        trace = os.path.join(tmp, "launch.gpdl")
        checked = False
        for r in range(a.runs):
            order = list(ways) if r % 2 == 0 else list(reversed(ways))
            for way in order:
                cmd = [a.bin, str(a.launches)]
                if way == "--no-gpu":
                    cmd = [a.gprof_dl, "run", "-q", "--no-gpu", "-o", trace, "--force", "--", *cmd]
                elif way == "gprof-dl":
                    cmd = [a.gprof_dl, "run", "-q", "-o", trace, "--force", "--", *cmd]
                ns, _ = run_once(cmd)
                ways[way].append(ns)
                if way == "gprof-dl" and not checked:
                    checked = True
                    kernels, dropped = recorded(a.gprof_dl, trace)
                    size = os.path.getsize(trace)
                    print(f"gprof-dl's trace: {kernels} 'empty' kernels of {a.launches + WARMUP} launched, "
                          f"{dropped} events dropped, {size / 1e6:.1f} MB")

    print(f"ns per launch of an empty kernel, {a.launches} launches, {a.runs} runs each (median / best):")
    bare_med, bare_best = statistics.median(ways["bare"]), min(ways["bare"])
    for way, v in ways.items():
        med, best = statistics.median(v), min(v)
        diff = "" if way == "bare" else f"   {med - bare_med:+8.1f} / {best - bare_best:+8.1f} over bare"
        print(f"  {way:10s} {med:8.1f} / {best:8.1f}{diff}")
    print("  spread of the bare runs: " + ", ".join(f"{x:.1f}" for x in ways["bare"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
