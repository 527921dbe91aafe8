#!/usr/bin/env python3
"""The Distributed view over real GPU traces (tests/data/kineto-public,
recorded by others; README there), checked against figures taken from the
JSON itself (issue 26):

  comm_none   ns_resolution_rank-0: a world-size-1 V100 run whose
              c10d::allreduce_ ranges launch no NCCL kernel: Communication
              and Overlap are 0 (the host ranges only enqueue), Computation
              the union of its kernels inside the ProfilerStep ranges
  comm_synthetic  the same rule on a made-up one-rank Kineto trace: kernels
              and a c10d::allreduce_ range without NCCL work (0), with NCCL work
              (its union alone), and without GPU work (the host range's)
  pair        sampled_rank-0/1: two ranks with 2 ProfilerSteps each, so one
              counted step (the default skip, at most half): no straggler
              nor candidate, and why (text, JSON, CSV); the clock they are on
              (CLOCK_REALTIME: imported Kineto traces) in the Trace Summary,
              the ranks' table and the JSON; the mismatch note's exact text,
              its place computed from the nccl:* ranges in order

    check_public_dist.py --gprof-dl PATH --data DIR --case NAME
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from kineto import clipped, load, merge, ns  # noqa: E402


def run(g, *args):
    p = subprocess.run([g, "summary", *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("gprof-dl summary %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def expect(cond, what, got=None):
    if not cond:
        sys.exit("FAIL: %s%s" % (what, "" if got is None else "\n--- got:\n%s" % got))


def row(rows, name):
    for r in rows:
        if r["name"] == name:
            return r
        found = row(r.get("children", []), name)
        if found:
            return found
    return None


def case_comm_none(g, data):
    path = data + "/ns_resolution_rank-0.json.gz"
    ev = [e for e in load(path)["traceEvents"] if e.get("ph") == "X"]
    steps = merge([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev
                   if e["name"].startswith("ProfilerStep#")])
    kernels = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev if e.get("cat") == "kernel"]
    nccl = [e for e in ev if e.get("cat") == "kernel" and "nccl" in e["name"].lower()]
    c10d = [e for e in ev if e["name"].startswith("c10d::")]
    expect(not nccl and c10d, "the trace has c10d:: ranges and no NCCL kernel")
    comp = clipped(kernels, steps)
    out = json.loads(run(g, path, "--view", "distributed", "--format", "json"))
    t = out["tables"]["distributed"]
    rows = t["sections"][0]["rows"]
    expect(row(rows, "ProfileStep")["total_time_ns"] == clipped(steps, steps), "the window")
    expect(row(rows, "Communication")["total_time_ns"] == 0, "no communication", rows)
    expect(row(rows, "Overlap")["total_time_ns"] == 0, "no overlap", rows)
    got = row(rows, "Computation")["total_time_ns"]
    expect(got == comp, "Computation %d ns, the kernels' union %d ns" % (got, comp))
    notes = " ".join(t["notes"])
    expect("count no communication: they only enqueue the GPU's, and none of its GPU work is "
           "communication" in notes, "the note says the rule", notes)
    text = run(g, path, "--view", "distributed")
    expect("  Communication  0.00            0.00" in text, "text: Communication 0", text)
    print("ok: Communication 0, Computation %d ns = the kernels' union" % comp)


def synthetic(tmp, kernels, nccl, gloo=()):
    """A Kineto trace of one rank: ProfilerStep#0 [1000, 11000) us; host
    c10d::allreduce_ [3000, 5000) with record_param_comms inside; kernels
    on stream 7 and NCCL work on stream 13 as given, (start, end) in us;
    gloo:all_reduce executions on a gloo thread, as given."""
    base = 1700000000000000000
    ev = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1,
         "ts": 1000, "dur": 10000},
        {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1,
         "ts": 3000, "dur": 2000},
        {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
         "ts": 3100, "dur": 1500},
    ]
    for i, (s, e) in enumerate(kernels):
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm%d" % i, "pid": 0, "tid": 7,
                   "ts": s, "dur": e - s, "args": {"device": 0, "stream": 7}})
    for s, e in nccl:
        ev.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                   "pid": 0, "tid": 13, "ts": s, "dur": e - s,
                   "args": {"device": 0, "stream": 13}})
    for s, e in gloo:
        ev.append({"ph": "X", "cat": "cpu_op", "name": "gloo:all_reduce", "pid": 1, "tid": 2,
                   "ts": s, "dur": e - s})
    path = "%s/synthetic-%d-%d-%d.json" % (tmp, len(kernels), len(nccl), len(gloo))
    with open(path, "w") as f:
        json.dump({"baseTimeNanoseconds": base, "traceEvents": ev}, f)
    return path


def case_comm_synthetic(g, data):
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        # (kernels, NCCL work, gloo executions, communication, computation,
        # overlap) in us
        cases = [
            ([(2000, 4000), (4500, 6000)], [], [], 0, 3500, 0),    # GPU work, no NCCL: none
            ([(2000, 4000)], [(3500, 5500)], [], 2000, 2000, 500), # the NCCL work alone
            ([], [], [], 2000, 0, 0),                               # no GPU work: the host's
            # gloo on CUDA tensors: its executions, not the c10d enqueue
            ([(2000, 4000), (4500, 6000)], [], [(5500, 8000)], 2500, 3500, 500),
        ]
        for kernels, nccl, gloo, comm, comp, both in cases:
            path = synthetic(tmp, kernels, nccl, gloo)
            out = json.loads(run(g, path, "--view", "distributed", "--format", "json"))
            rows = out["tables"]["distributed"]["sections"][0]["rows"]
            got = [row(rows, n)["total_time_ns"] for n in ("Communication", "Computation",
                                                           "Overlap")]
            want = [comm * 1000, comp * 1000, both * 1000]
            expect(got == want, "%s / %s / %s: %s, want %s" % (kernels, nccl, gloo, got, want))
    print("ok: communication is the GPU's where there is GPU work, else the host's")


def nccl_calls(path):
    ev = [e for e in load(path)["traceEvents"] if e.get("ph") == "X"]
    return ([e["name"] for e in sorted(ev, key=lambda e: ns(e["ts"]))
             if e["name"].startswith("nccl:")],
            sum(e["name"].startswith("ProfilerStep#") for e in ev))


def case_pair(g, data):
    paths = [data + "/sampled_rank-%d.json.gz" % r for r in (0, 1)]
    (c0, s0), (c1, s1) = nccl_calls(paths[0]), nccl_calls(paths[1])
    expect(s0 == 2 and s1 == 2, "2 ProfilerSteps a rank")
    diff = [i for i in range(min(len(c0), len(c1))) if c0[i] != c1[i]]
    expect(diff, "the ranks' calls differ somewhere")
    first = diff[0]
    note = ("%d communication calls did not match across ranks (their ops differ at the same "
            "call: rank 1's call %d in order is %s where rank 0's is %s); they count no wait."
            % (len(diff), first + 1, c1[first], c0[first]))
    clock = "the wall clock they were recorded on (CLOCK_REALTIME, Unix time)"
    for skip in ([], ["--skip-steps", "1"], ["--skip-steps", "0"]):
        counted = 1 if skip != ["--skip-steps", "0"] else 2
        text = run(g, *paths, "--view", "distributed", "--wide", *skip)
        flat = " ".join(text.split())
        expect("Clock: " + clock in text, "the ranks' clock", text)
        expect("2 traces are summarised together, on " + clock + "." in flat,
               "the Trace Summary's clock", text)
        expect("MONOTONIC" not in text, "no CLOCK_MONOTONIC", text)
        expect(note in flat, "the mismatch note: " + note, text)
        expect("No straggler: only %d step%s compared across the ranks (at least 3 are needed)."
               % (counted, "" if counted == 1 else "s") in flat, "no straggler, and why", text)
        expect("Straggler:" not in text and "straggler: " not in text.replace(
            "No straggler: ", ""), "no rank named", text)
        out = json.loads(run(g, *paths, "--view", "distributed", "--format", "json", *skip))
        expect(out["job"]["clock"] == "CLOCK_REALTIME", "JSON job clock", out["job"])
        t = out["tables"]["distributed"]
        sec = t["sections"][0]
        facts = sec["facts"]
        expect(facts["steps_compared"] == counted and facts["straggler_rank"] == -1
               and facts["candidate_rank"] == -1 and facts["mismatches"] == len(diff),
               "JSON facts", facts)
        expect(sec["title"] == "Clock: " + clock, "JSON section title", sec["title"])
        expect(all(r["note"] == "" for r in sec["rows"]), "no rank's note names it", sec["rows"])
        expect(note in " ".join(t["notes"]), "JSON mismatch note", t["notes"])
        rows = list(csv.DictReader(io.StringIO(
            run(g, *paths, "--view", "distributed", "--format", "csv", *skip).split("\n\n")[0])))
        expect(len(rows) == 2 and all(r["straggler_rank"] == "-1" and r["candidate_rank"] == "-1"
                                       and r["note"] == "" and r["steps"] == str(counted)
                                       for r in rows), "CSV", rows)
    print("ok: %s; no straggler over 1 or 2 steps; %s" % (clock, note))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--data", required=True)
    cases = {"comm_none": case_comm_none, "comm_synthetic": case_comm_synthetic,
             "pair": case_pair}
    ap.add_argument("--case", required=True, choices=sorted(cases))
    a = ap.parse_args()
    cases[a.case](a.gprof_dl, a.data)


if __name__ == "__main__":
    main()
