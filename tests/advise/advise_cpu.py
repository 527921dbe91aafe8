#!/usr/bin/env python3
"""`gprof-dl advise`'s cpu-contention rule on a real torch CPU loop
(tests/advise/progs/leak.py, no leak): beside 2 x the machine's CPUs of
processes that spin, the training thread waits for a core and the rule must
fire (its share at least 10 %, the run-queue figure in the evidence); alone
(the test runs serially), twice, no rule may fire at all.

    advise_cpu.py --gprof-dl PATH --python PY
"""
import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
failed = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failed.append(msg)


def spin():
    while True:
        pass


def run(g, py, trace):
    args = [g, "run", "-q", "-o", trace, "--force", "--", py, os.path.join(HERE, "progs", "leak.py")]
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        sys.exit(f"FAIL: {args}: exit {r.returncode}: {r.stderr[-2000:]}")
    r = subprocess.run([g, "advise", trace, "--format", "json"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"FAIL: advise: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    a = ap.parse_args()
    if subprocess.run([a.python, "-c", "import torch"], capture_output=True).returncode != 0:
        print(f"SKIP: no torch for {a.python}")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(2):
            doc = run(a.gprof_dl, a.python, os.path.join(tmp, f"clean{k}.gpdl"))
            check(doc["findings"] == [], f"alone, run {k + 1}: no finding "
                  f"({[f['rule'] + ': ' + f['what'] for f in doc['findings']]})")
        hogs = [multiprocessing.Process(target=spin, daemon=True)
                for _ in range(2 * (os.cpu_count() or 1))]
        for h in hogs:
            h.start()
        try:
            doc = run(a.gprof_dl, a.python, os.path.join(tmp, "loaded.gpdl"))
        finally:
            for h in hogs:
                h.terminate()
        f = [x for x in doc["findings"] if x["rule"] == "cpu-contention"]
        check(len(f) == 1, f"beside {len(hogs)} spinning processes: cpu-contention")
        if f:
            check(f[0]["share_pct"] >= 10.0 and "run-queue time" in f[0]["evidence"][0],
                  f"its share {f[0]['share_pct']} % of the step, the run-queue time in the evidence")
    if failed:
        sys.exit(f"{len(failed)} checks failed")
    print("PASS")


if __name__ == "__main__":
    main()
