#!/usr/bin/env python3
"""`gprof-dl advise`'s memory rules.

  growth   tests/advise/progs/leak.py under `gprof-dl run --profile-memory`
           (torch on the CPU): with --leak each step keeps 2 MiB (512 x 1024
           floats), and memory-growth must fire on the host's memory with a
           median of 2 MiB a step (within 10 %) over every counted step; run
           bare of the leak twice, there must be no finding at all (the
           clean run: no rule may fire on it) but cpu-contention, which is a
           claim about the machine (the test's neighbours, when the machine
           is busy), not the program, and has its own test (advise_cpu.py).
  peak     made-up Kineto traces of a GPU of 1 GiB whose [memory] instants
           reach 980 MiB (memory-peak fires, high: 95.7 %) and 500 MiB (no
           finding).

    advise_memory.py --gprof-dl PATH --python PY --case growth|peak
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1024 * 1024
failed = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failed.append(msg)


def advise(g, path, *args):
    r = subprocess.run([g, "advise", path, "--format", "json", *args], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        sys.exit(f"FAIL: advise {path}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def case_growth(g, py, tmp):
    r = subprocess.run([py, "-c", "import torch"], capture_output=True)
    if r.returncode != 0:
        print(f"SKIP: no torch for {py}")
        sys.exit(77)
    for leak in (True, False, False):
        t = os.path.join(tmp, f"leak-{leak}.gpdl")
        args = [g, "run", "-q", "--profile-memory", "-o", t, "--force", "--", py,
                os.path.join(HERE, "progs", "leak.py")] + (["--leak"] if leak else [])
        r = subprocess.run(args, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            sys.exit(f"FAIL: {args}: exit {r.returncode}: {r.stderr[-2000:]}")
        doc = advise(g, t)
        found = [f for f in doc["findings"] if f["rule"] != "cpu-contention"]
        if not leak:
            check(found == [], f"the clean run: no finding ({[f['rule'] + ': ' + f['what'] for f in found]})")
            continue
        grow = [f for f in found if f["rule"] == "memory-growth"]
        check(len(grow) == 1 and grow[0]["what"].startswith("Host:"), "the leak: memory-growth on the host")
        if grow:
            f = grow[0]
            med = float(f["what"].split("grows step over step, ")[1].split(" MiB")[0])
            check(abs(med - 2.0) <= 0.2, f"median growth {med} MiB a step, 2 kept")
            steps = doc["steps"]
            check(f"{steps - 1} of {steps - 1} steps ended higher" in " ".join(f["evidence"]),
                  f"every one of the {steps} counted steps rose")
            check(f["severity"] == "medium" and f["saving_ns"] == 0, "medium, no time saving")
        others = [f["rule"] for f in found if f["rule"] != "memory-growth"]
        check(others == [], f"the leak: no other rule fires ({others})")


def gpu_trace(path, peak_mib):
    """Four steps of 10 ms; in step 1, [memory] allocations on GPU 0 up to peak_mib, freed in step 3."""
    ev = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1,
           "ts": 1000 + 10000 * i, "dur": 9000} for i in range(4)]
    chunks = [peak_mib // 4] * 3 + [peak_mib - 3 * (peak_mib // 4)]
    t, total = 11000, 0
    for k, c in enumerate(chunks):
        total += c * MIB
        ev.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1,
                   "ts": t + 100 * k, "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096 * (k + 1),
                                               "Bytes": c * MIB, "Total Allocated": total}})
    for k, c in enumerate(chunks):
        total -= c * MIB
        ev.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1,
                   "ts": 31000 + 100 * k, "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096 * (k + 1),
                                                   "Bytes": -c * MIB, "Total Allocated": total}})
    ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 11500, "dur": 100,
               "args": {"device": 0, "stream": 7}})
    doc = {"deviceProperties": [{"id": 0, "name": "Small GPU", "computeMajor": 8, "computeMinor": 0,
                                 "totalGlobalMem": 1024 * MIB, "numSms": 8}], "traceEvents": ev}
    with open(path, "w") as f:
        json.dump(doc, f)


def case_peak(g, py, tmp):
    full, half = os.path.join(tmp, "full.json"), os.path.join(tmp, "half.json")
    gpu_trace(full, 980)
    gpu_trace(half, 500)
    doc = advise(g, full, "--skip-steps", "0")
    pk = [f for f in doc["findings"] if f["rule"] == "memory-peak"]
    check(len(pk) == 1 and pk[0]["what"] == "GPU0: peak 980.0 MiB in use, 95.7 % of its 1024.0 MiB",
          f"980 of 1024 MiB: memory-peak ({[f['what'] for f in pk]})")
    check(pk and pk[0]["severity"] == "high", "95.7 %: high")
    doc = advise(g, half, "--skip-steps", "0")
    check(not [f for f in doc["findings"] if f["rule"] == "memory-peak"], "500 of 1024 MiB: no memory-peak")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--case", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        {"growth": case_growth, "peak": case_peak}[a.case](a.gprof_dl, a.python, tmp)
    if failed:
        sys.exit(f"{len(failed)} checks failed")
    print("PASS")


if __name__ == "__main__":
    main()
