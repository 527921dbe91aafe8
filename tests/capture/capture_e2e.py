#!/usr/bin/env python3
"""--capture-range=nvtx end to end: gprof-dl run on progs/nvtx_capture.c,
then the ranges each trace kept (export --csv's ranges.csv), counted by
name, against where the program put them; and the window options' usage
errors.

Usage: capture_e2e.py GPROF_DL NVTX_CAPTURE CASE
"""
import collections
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

GPROF, PROG, CASE = sys.argv[1:4]
# every range of the program, by name (progs/nvtx_capture.c)
ALL = {"before": 2, "train": 3, "in1": 3, "in1w": 1, "between": 2, "in2": 4, "dop": 5, "after": 1}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def run(args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPROF_DL_")}
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)


def record(tmp, opts, prog_args=()):
    trace = os.path.join(tmp, "t%d.gpdl" % len(os.listdir(tmp)))
    r = run([GPROF, "run", "-q", "-o", trace, "--no-gpu"] + opts + ["--", PROG] + list(prog_args))
    check(r.returncode == 0 and r.stderr == "", f"{opts}: status {r.returncode}: {r.stderr}")
    out = trace + ".csv"
    r = run([GPROF, "export", "--csv", trace, "-o", out])
    check(r.returncode == 0, f"export: {r.stderr}")
    with open(os.path.join(out, "ranges.csv")) as f:
        names = collections.Counter(row["name"] for row in csv.DictReader(f))
    info = run([GPROF, "info", trace]).stdout
    return names, info


def expect(tmp, opts, want, recorded, prog_args=()):
    names, info = record(tmp, opts, prog_args)
    got = {k: names.get(k, 0) for k in ALL}
    check(got == {k: want.get(k, 0) for k in ALL}, f"{opts}: ranges kept {got}, want {want}")
    m = re.search(r"\n  recorded {5,}(.*)\n", info)
    check(m and m.group(1).startswith(recorded), f"{opts}: info says {m.group(1) if m else None!r}, "
          f"want {recorded!r}...")
    return got


def case_nvtx(tmp):
    # no window: everything
    names, info = record(tmp, [])
    check({k: names.get(k, 0) for k in ALL} == ALL, f"no capture: {dict(names)}")
    check(not re.search(r"\n  recorded {5,}", info), "no capture: info says a window")
    # the first "train" of the default domain only (nsys's default), itself included
    expect(tmp, ["--capture-range=nvtx", "--nvtx-capture", "train"], {"train": 1, "in1": 3, "in1w": 1},
           "inside NVTX 'train' (1 range, ")
    # any domain: still the first one
    expect(tmp, ["--capture-range=nvtx", "--nvtx-capture", "train@*"], {"train": 1, "in1": 3, "in1w": 1},
           "inside NVTX 'train@*' (1 range, ")
    # a name that never comes: nothing but the always-recorded
    expect(tmp, ["--capture-range=nvtx", "--nvtx-capture", "nope"], {},
           "nothing: the program never opened the capture range (inside NVTX 'nope')")


def case_nvtx_repeat(tmp):
    expect(tmp, ["--capture-range=nvtx", "--nvtx-capture", "train", "--capture-range-end=repeat"],
           {"train": 2, "in1": 3, "in1w": 1, "in2": 4}, "inside NVTX 'train' (2 ranges, ")


def case_nvtx_domain(tmp):
    expect(tmp, ["--capture-range=nvtx", "--nvtx-capture", "train@mydom"], {"train": 1, "dop": 5},
           "inside NVTX 'train@mydom' (1 range, ")


def case_nvtx_startend(tmp):
    expect(tmp, ["--capture-range=nvtx", "--nvtx-capture", "train"], {"train": 1, "in1": 3},
           "inside NVTX 'train' (1 range, ", ["startend"])


def case_schedule(tmp):
    """--schedule over a C program's NVTX steps (20, each one "op"):
    torch.profiler.schedule's active steps only, one trace per cycle with -o
    t-%n.gpdl; summary --cycle N."""
    spec = "wait=2,warmup=1,active=3,repeat=2,skip-first=1"
    names, info = record(tmp, ["--schedule", spec], ["steps"])
    check(names.get("op", 0) == 6, f"--schedule: {names.get('op', 0)} op ranges, want 6 (steps 4-6, 10-12)")
    m = re.search(r"\n  recorded {5,}(.*)\n", info)
    check(m and m.group(1) == f"steps 4-6, 10-12 (schedule {spec})", f"--schedule: info {m and m.group(1)!r}")
    d = os.path.join(tmp, "cycles")
    os.mkdir(d)
    r = run([GPROF, "run", "-o", os.path.join(d, "t-%n.gpdl"), "--no-gpu", "--schedule", spec, "--", PROG, "steps"])
    check(r.returncode == 0, f"-o t-%n.gpdl: {r.stderr}")
    check(sorted(os.listdir(d)) == ["t-1.gpdl", "t-2.gpdl"], f"-o t-%n.gpdl: files {sorted(os.listdir(d))}")
    check("cycle 0 (ProfilerCycle#0): " + os.path.join(d, "t-1.gpdl") in r.stderr and
          "cycle 1 (ProfilerCycle#1): " + os.path.join(d, "t-2.gpdl") in r.stderr, f"banner: {r.stderr}")
    for k, want in ((1, "4-6"), (2, "10-12")):
        f = os.path.join(d, f"t-{k}.gpdl")
        info = run([GPROF, "info", f]).stdout
        m = re.search(r"\n  recorded {5,}(.*)\n", info)
        check(m and m.group(1) == f"steps {want} (schedule {spec})", f"t-{k}.gpdl: info {m and m.group(1)!r}")
        out = f + ".csv"
        run([GPROF, "export", "--csv", f, "-o", out])
        with open(os.path.join(out, "ranges.csv")) as fh:
            rows = [row["name"] for row in csv.DictReader(fh)]
        check(rows.count("op") == 3 and sum(n.startswith("ProfileStep#") for n in rows) == 3,
              f"t-{k}.gpdl: ranges {collections.Counter(rows)}")
    # summary --cycle N of the one-file trace
    whole = os.path.join(tmp, "t0.gpdl")
    for k in (0, 1):
        r = run([GPROF, "summary", whole, "--cycle", str(k), "--view", "userdefined", "--format", "json"])
        rows = {} if r.returncode else {row["name"]: row["calls"] for sec in
                                         json.loads(r.stdout)["tables"]["userdefined"]["sections"]
                                         for row in sec["rows"]}
        check(rows.get("op") == 3, f"summary --cycle {k}: rows {rows} {r.stderr}")
    # export --cycle N: the events of that cycle only
    for k, want in ((0, {4, 5, 6}), (1, {10, 11, 12})):
        out = os.path.join(tmp, f"c{k}.json")
        r = run([GPROF, "export", "--chrome", whole, "--cycle", str(k), "-o", out])
        check(r.returncode == 0, f"export --cycle {k}: {r.stderr}")
        if r.returncode == 0:
            with open(out) as fh:
                ev = [e for e in json.load(fh)["traceEvents"] if e.get("ph") == "X"]
            steps = {int(e["name"].split("#")[1]) for e in ev if "Step#" in e["name"]}
            ops = sum(e["name"] == "op" for e in ev)
            check(steps <= want and ops == 3, f"export --cycle {k}: steps {sorted(steps)}, {ops} op ranges")
    r = run([GPROF, "export", "--chrome", whole, "--cycle", "2", "-o", os.path.join(tmp, "c2.json")])
    check(r.returncode == 1 and "no cycle 2: its cycles are 0 to 1" in r.stderr, f"export --cycle 2: {r.stderr!r}")
    r = run([GPROF, "summary", whole, "--cycle", "5"])
    check(r.returncode == 1 and r.stderr.strip() == f"gprof-dl: '{whole}': no cycle 5: its cycles are 0 to 1",
          f"summary --cycle 5: {r.returncode} {r.stderr!r}")


def case_steps_time(tmp):
    """--steps and --delay/--duration: the trace says them too (no cycles)."""
    names, info = record(tmp, ["--steps", "3:5"], ["steps"])
    check(names.get("op", 0) == 2, f"--steps 3:5: {names.get('op', 0)} op ranges")
    m = re.search(r"\n  recorded {5,}(.*)\n", info)
    check(m and m.group(1) == "steps 3-4 (--steps 3:5)", f"--steps 3:5: info {m and m.group(1)!r}")
    names, info = record(tmp, ["--delay", "0.25", "--duration", "1.5"], ["steps"])
    m = re.search(r"\n  recorded {5,}(.*)\n", info)
    check(m and m.group(1) == "from 0.250 s after the start for 1.500 s (--delay, --duration)",
          f"--delay/--duration: info {m and m.group(1)!r}")
    trace = os.path.join(tmp, "t0.gpdl")
    r = run([GPROF, "summary", trace, "--cycle", "0"])
    check(r.returncode == 1 and "no cycles: it was not recorded with --schedule or --capture-range" in r.stderr,
          f"summary --cycle of a --steps trace: {r.stderr!r}")


def case_usage(tmp):
    out = os.path.join(tmp, "u.gpdl")
    for opts, msg in (
        (["--capture-range=nvtx"], "--capture-range=nvtx needs --nvtx-capture"),
        (["--nvtx-capture", "train"], "--nvtx-capture needs --capture-range=nvtx"),
        (["--capture-range=cuda"], "--capture-range: 'cuda' is not cudaProfilerApi or nvtx"),
        (["--capture-range=nvtx", "--capture-range=cudaProfilerApi", "--nvtx-capture", "t"],
         "--capture-range: one capture range at a time"),
        (["--capture-range=cudaProfilerApi", "--capture-range-end=twice"], "--capture-range-end: 'twice'"),
        (["--capture-range-end=repeat"], "--capture-range-end needs --capture-range"),
        (["--capture-range=nvtx", "--nvtx-capture", "train@"], "--nvtx-capture: 'train@'"),
        (["--schedule", "active=0"], "--schedule: active must be at least 1"),
        (["--schedule", "wait=1,active=2,bogus=1"], "--schedule: unknown key 'bogus'"),
        (["--schedule", "wait=-2,active=1"], "--schedule: wait='-2'"),
        (["--steps", "1:3", "--schedule", "active=1"], "--schedule and --steps"),
        (["--capture-range=cudaProfilerApi", "--no-gpu"], "--capture-range=cudaProfilerApi needs CUPTI"),
    ):
        r = run([GPROF, "run", "-q", "-o", out] + opts + ["--", "true"])
        first = r.stderr.splitlines()[0] if r.stderr else ""
        check(r.returncode == 2 and first.startswith("gprof-dl: " + msg), f"{opts}: {r.returncode} {r.stderr!r}")
        check(not os.path.exists(out), f"{opts}: a trace was written")


with tempfile.TemporaryDirectory() as tmp:
    fn = globals().get("case_" + CASE)
    if not fn:
        sys.exit(f"unknown case {CASE}")
    fn(tmp)
if failures:
    sys.exit(f"{len(failures)} checks failed")
print(f"{CASE}: ok")
