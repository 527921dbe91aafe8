#!/usr/bin/env python3
"""The speed suite's smoke test: `bench/speed/run --quick` prints every figure
of issue 15's table as a number (or "not available" where this machine lacks
what the figure needs, which the test checks on its own), the header, and a
JSON with every key. It asserts nothing about the figures' values.

    smoke_test.py --run bench/speed/run --build BUILD
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

# Every figure the issue asks for, by the JSON key the suite gives it.
NVTX = [f"nvtx_{m}_{t}t_{x}" for m in ("fixed", "distinct") for t in (1, 4) for x in ("ns", "dropped")] + \
       [f"nvtx_distinct_{t}t_drop_pct" for t in (1, 4)] + [f"nvtx_distinct_cost_ratio_{t}t" for t in (1, 4)]
TORCH = [f"torch{v}_{x}" for v in (1, 2) for x in ("op_us", "profiler_op_us", "vs_profiler", "throughput")]
ANALYSIS = ["trace_bytes_per_event", "trace_gpu_bytes_per_event", "summary_mevents_per_s", "summary_rss_vs_file",
            "chrome_mb_per_s", "chrome_rss_mb", "csv_s", "sqlite_mrows_per_s", "import_mb_per_s", "import_rss_mb",
            "import_rss_growth"]
HEADER = ("machine", "commit", "build", "torch 1", "torch 2")
NUMBER = r"-?[0-9]+(?:\.[0-9]+)?"
MEASURED = re.compile(rf"^({NUMBER}) [^\[]*\[({NUMBER}), ({NUMBER})\] n=([0-9]+)$")
EVENTS = re.compile(r"Events: (\d+) \((\d+) marks\), (\d+) dropped")


def cache(build, var):
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith(var + ":"):
                return line.split("=", 1)[1].strip()
    return ""


def imports_torch(py):
    return bool(py) and subprocess.run([py, "-c", "import torch"], capture_output=True).returncode == 0


def nvtx_events(build, tmp, args):
    """Events recorded of bench-nvtx ARGS under gprof-dl run, or None when it
    cannot run so."""
    p = subprocess.run([os.path.join(build, "bin", "gprof-dl"), "run", "-f", "-o", os.path.join(tmp, "p.gpdl"),
                        "--", os.path.join(build, "bench", "bench-nvtx"), *args], capture_output=True, text=True)
    m = EVENTS.search(p.stderr)
    return int(m[1]) + int(m[3]) if p.returncode == 0 and m else None


def required(build, tmp):
    """The keys this machine must give a number for: what the suite could
    skip is checked here independently of it."""
    need = set(ANALYSIS) | {"nvtx_fixed_1t_ns", "nvtx_fixed_1t_dropped"}
    one = {m: nvtx_events(build, tmp, ["20000", m]) for m in ("plain", "distinct")}
    for mode, tag in (("plain", "fixed"), ("distinct", "distinct")):
        if one[mode] is None:
            continue
        need |= {k for k in NVTX if k.startswith(f"nvtx_{tag}_1t")}
        four = nvtx_events(build, tmp, ["20000", mode, "4"])
        if four is not None and four >= 2.5 * one[mode]:
            need |= {k for k in NVTX if k.startswith(f"nvtx_{tag}_4t")}
            if mode == "distinct" and one["plain"] is not None:
                need.add("nvtx_distinct_cost_ratio_4t")
        if mode == "distinct" and one["plain"] is not None:
            need.add("nvtx_distinct_cost_ratio_1t")
    for v, py in (("1", cache(build, "GPDL_TORCH1_PYTHON") or "/usr/bin/python3"),
                  ("2", cache(build, "GPDL_TORCH2_PYTHON"))):
        if imports_torch(py):  # the profiler ratio may lack samples: profiler no slower than bare
            need |= {f"torch{v}_{x}" for x in ("op_us", "profiler_op_us", "throughput")}
    return need


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    errors = []
    with tempfile.TemporaryDirectory(prefix="gpdl-speed-smoke-") as tmp:
        need = required(a.build, tmp)
        out = os.path.join(tmp, "figures.json")
        p = subprocess.run([sys.executable, a.run, "--quick", "--build", a.build, "--json", out],
                           capture_output=True, text=True)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        if p.returncode != 0:
            errors.append(f"the suite exited {p.returncode}")
        try:
            with open(out) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"smoke: no JSON: {e}")
            return 1
    lines = p.stdout.splitlines()
    for h in HEADER:
        if not any(ln.startswith(f"  {h}:") and ln.split(":", 1)[1].strip() for ln in lines):
            errors.append(f"no header line '{h}'")
        if not doc.get("header", {}).get(h):
            errors.append(f"no '{h}' in the JSON header")
    rows = [[c.strip() for c in ln.split("|")[1:]] for ln in lines if ln.startswith("| ")][1:]
    by_label = {r[0]: r for r in rows}
    keys = NVTX + TORCH + ANALYSIS
    if len(rows) != len(keys):
        errors.append(f"{len(rows)} figure lines, expected {len(keys)}")
    for k in keys:
        fig = doc["figures"].get(k)
        if fig is None:
            errors.append(f"no '{k}' in the JSON")
            continue
        row = by_label.get(fig["label"].strip())
        if row is None:
            errors.append(f"no table line for '{k}' ({fig['label'].strip()})")
            continue
        m = MEASURED.match(row[1])
        if m:
            med = fig["median"]
            if not (isinstance(med, (int, float)) and math.isfinite(med) and
                    float(m[2]) <= float(m[1]) <= float(m[3]) and int(m[4]) == len(fig["samples"]) > 0):
                errors.append(f"'{k}': line '{row[1]}' and JSON median {med} disagree")
            if row[3] not in ("met", "not met", "-") or not row[4]:
                errors.append(f"'{k}': no met/not met or no command: {row}")
        elif row[1] == "not available" and fig["median"] is None and fig["why"] and row[4].startswith("why: "):
            if k in need:
                errors.append(f"'{k}' not available here, though it can be measured: {fig['why']}")
        else:
            errors.append(f"'{k}': neither a figure nor 'not available' with a reason: {row}")
    for e in errors:
        print(f"smoke: {e}")
    print(f"smoke: {len(keys)} figures, {len(need)} required as numbers, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
