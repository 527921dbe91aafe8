#!/usr/bin/env python3
"""check_dist.py - the Distributed view of a 2-rank job against figures
worked out by hand, and against Holistic Trace Analysis.

    python check_dist.py GPROF_DL [--hta]

Writes the synthetic Kineto traces of gen_dist_kineto.py (one per rank,
with distributedInfo, compute and NCCL kernels, record_param_comms with
Seq) into a temporary directory, imports them through
`gprof-dl summary rank-0.json rank-1.json --view distributed --format json`
and checks each rank's per-step figures below, and the job's timeline
(`export --chrome`: a process per rank, the ranks' clocks aligned although
their baseTimeNanoseconds differ, a flow per all_reduce). With --hta (run by the
Python of a venv with HolisticTraceAnalysis) it also runs HTA's
TraceAnalysis(trace_dir).get_comm_comp_overlap() on the same files: HTA's
overlap percentage (overlap / communication time, per rank) must agree with
ours (overlap / comm_total) within 1 %.

Every step of a rank is the same; its GPU timeline, in us after the step's
start s (the ProfilerStep range is [s, s+10000)):

  rank 0   K1 [1000,4000)  K2 [4500,6500)   NCCL [3000,7000)
  rank 1   K1 [1000,5500)  K2 [6000,8500)   NCCL [5000,8000)

per step, by hand (Paddle's unions, which HTA's overlap shares):
  comm_total = |NCCL|:                   r0 4000               r1 3000
  overlap = |NCCL n (K1 u K2)|:          r0 [3000,4000)+[4500,6500) = 3000
                                         r1 [5000,5500)+[6000,8000) = 2500
  overlap / comm_total:                  r0 75.00 %            r1 83.33 %
and the Distributed view's disjoint parts of a step:
  wait = the call's duration - the fastest rank's for the same call (Seq k),
         at its start:                   r0 [3000,4000) = 1000 r1 0
  computation = |(K1 u K2) - wait|:      r0 2000+2000 = 4000   r1 4500+2500 = 7000
  communication = |NCCL - wait - comp.|: r0 [4000,4500)+[6500,7000) = 1000
                                         r1 [5500,6000) = 500
  outside = the rest:                    r0 4000               r1 2500
  busy = 10000 - wait:                   r0 9000               r1 10000

Exit status: 0 pass, 1 a difference (each printed), 77 skip (the job's
Distributed view has no per-rank rows in this build; no HTA with --hta).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
US = 1000  # ns

# rank -> per-step figures in ns, worked out above
WANT = {
    0: {"computation": 4000, "communication": 1000, "comm_total": 4000, "overlap": 3000,
        "wait": 1000, "outside": 4000, "busy": 9000, "step_mean": 10000},
    1: {"computation": 7000, "communication": 500, "comm_total": 3000, "overlap": 2500,
        "wait": 0, "outside": 2500, "busy": 10000, "step_mean": 10000},
}
WANT_OVERLAP_PCT = {0: 75.00, 1: 83.33}

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")
    else:
        print(f"ok   {what}: {got!r}")


def ours(gpdl, files):
    out = subprocess.run([gpdl, "summary", *files, "--view", "distributed", "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    table = doc.get("tables", {}).get("distributed", {})
    rows = [r for s in table.get("sections", []) for r in s.get("rows", []) if "rank" in r]
    return doc, {int(r["rank"]): r for r in rows}


def check_timeline(gpdl, files, work):
    """`export --chrome` of the job: a process per rank, the ranks' steps at
    one time (their bases differ by 2 s, their wall times not), and a flow
    per all_reduce from rank 0's NCCL kernel (s + 3 ms) to rank 1's (s + 5
    ms), 2 ms later."""
    out = os.path.join(work, "job.json")
    subprocess.run([gpdl, "export", "--chrome", *files, "-o", out], check=True)
    with open(out) as f:
        ev = json.load(f)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e["name"] == "process_name"}
    check("processes", names, {4000: "rank 0 (pid 4000)", 4001: "rank 1 (pid 4001)"})
    steps = {(e["pid"], e["name"]): e["ts"] for e in ev
             if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")}
    check("steps of both ranks at one time (us)",
          [steps[(4001, f"ProfilerStep#{k}")] for k in range(5)],
          [steps[(4000, f"ProfilerStep#{k}")] for k in range(5)])
    flows = {}
    for e in ev:
        if e.get("cat") == "collective":
            flows.setdefault(e["id"], {})[e["ph"]] = e
    check("collective flows", len(flows), 5)
    check("each from rank 0 to rank 1, 2 ms later (us)",
          sorted({(f["s"]["pid"], f["f"]["pid"], round(f["f"]["ts"] - f["s"]["ts"], 3))
                  for f in flows.values()}), [(4000, 4001, 2000.0)])


def hta_overlap(trace_dir):
    from hta.trace_analysis import TraceAnalysis
    analysis = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True)
    df = analysis.get_comm_comp_overlap(visualize=False)
    return {int(r["rank"]): float(r["comp_comm_overlap_pctg"]) for _, r in df.iterrows()}


def main():
    gpdl = sys.argv[1]
    with_hta = "--hta" in sys.argv[2:]
    if with_hta:
        try:
            import hta.trace_analysis  # noqa: F401
        except ImportError:
            print("SKIP: no Holistic Trace Analysis for this Python (tests/hta/setup-venv)")
            return SKIP
    work = tempfile.mkdtemp(prefix="gpdl-hta-dist-")
    try:
        subprocess.run([sys.executable, os.path.join(HERE, "gen_dist_kineto.py"), work],
                       check=True)
        files = [os.path.join(work, "rank-%d.json" % r) for r in sorted(WANT)]
        doc, rows = ours(gpdl, files)
        if sorted(rows) != sorted(WANT):
            print("SKIP: `summary --view distributed --format json` has no per-rank rows for "
                  "this job in this build (got ranks %s)" % sorted(rows))
            return SKIP
        check("job ranks", doc.get("job", {}).get("ranks"), 2)
        for rank, want in WANT.items():
            for key, ns in want.items():
                check(f"rank {rank} {key} per step (ns)", int(rows[rank][key + "_ns"]), ns * US)
        ratio = {r: 100.0 * rows[r]["overlap_ns"] / rows[r]["comm_total_ns"] for r in rows}
        check_timeline(gpdl, files, work)
        for rank, pct in WANT_OVERLAP_PCT.items():
            check(f"rank {rank} overlap / comm_total (%)", round(ratio[rank], 2), pct)
        if with_hta:
            os.unlink(os.path.join(work, "job.json"))  # the rank files only
            got = hta_overlap(work)
            for rank, pct in WANT_OVERLAP_PCT.items():
                check(f"HTA rank {rank} comp_comm_overlap_pctg", round(got[rank], 2), pct)
                agree = abs(got[rank] - ratio[rank]) <= 0.01 * ratio[rank]
                check(f"HTA and gprof-dl agree within 1% on rank {rank} "
                      f"({got[rank]:.2f} vs {ratio[rank]:.2f})", agree, True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
