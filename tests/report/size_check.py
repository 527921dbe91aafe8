#!/usr/bin/env python3
"""size_check.py - the report's size is bounded by aggregates, not events:
bench-report (bench/report) writes a trace of EVENTS events with 50,000
operator names, 5,000 kernel names, 2,000 steps and memory events, and runs
`gprof-dl report` on it; this checks that the report is under the budget
and that what it holds is the bounded summary of all of it: every event
counted, the operator, kernel and memory tables cut at the report's --top
(100), the 2,000 steps bucketed into at most 500 rows, 5,000 time bins a part.

    size_check.py BENCH_REPORT EVENTS MAX_BYTES
Exit status: 0 pass, 1 fail."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BENCH, EVENTS, MAX = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
OPS, KERNELS, STEPS, TOP = 50000, 5000, 2000, 100
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)


def rows(table):
    return sum(len(s.get("rows", [])) for s in table.get("sections", []))


tmp = tempfile.mkdtemp(prefix="gpdl-report-size-")
try:
    keep = os.path.join(tmp, "run")
    p = subprocess.run([BENCH, "-n", str(EVENTS), "--ops", str(OPS), "--kernels", str(KERNELS),
                        "--steps", str(STEPS), "--max-bytes", str(MAX), "--keep", keep],
                       capture_output=True, text=True, timeout=540)
    print(p.stdout, end="")
    check(p.returncode == 0, f"bench-report: status {p.returncode}: {p.stderr.strip()}")
    m = re.search(r"trace: (\d+) events", p.stdout)
    events = int(m.group(1)) if m else -1
    check(events > EVENTS * 0.99, f"the trace has {events} events, asked for {EVENTS}")
    html_path = os.path.join(keep, "report.html")
    size = os.path.getsize(html_path) if os.path.exists(html_path) else -1
    check(0 < size < MAX, f"the report is {size} bytes, the budget {MAX}")
    with open(html_path, encoding="utf-8") as f:
        html = f.read()
    m = re.search(r'<script type="application/json" id="gprof-dl-data">(.*?)</script>', html, re.S)
    doc = json.loads(m.group(1)) if m else {}
    s = doc.get("summary", {})
    t = s.get("tables", {})
    check(s.get("events", {}).get("total") == events, f"summary events {s.get('events')} against the {events} written")
    for name in ("operator", "kernel", "memory"):
        check(name in t and rows(t[name]) == TOP, f"{name} table: {rows(t.get(name, {}))} rows, expected --top {TOP} "
                                                  f"of {OPS if name != 'kernel' else KERNELS} names")
    st = t.get("steps", {}).get("sections", [{}])
    facts = st[0].get("facts", {}) if st else {}
    n = rows(t.get("steps", {}))
    check(facts.get("steps") == STEPS, f"steps view: {facts.get('steps')} steps, expected {STEPS}")
    check(0 < n <= 500 and facts.get("per_row", 0) * n >= STEPS,
          f"steps view: {n} rows of {facts.get('per_row')} steps for {STEPS} steps (at most 500 rows)")
    tl = t.get("timeline", {}).get("sections", [])
    # a run with steps: bins of a tenth of a step, bounded by 10,000 bins in all
    check(len(tl) == 2 and all(len(x.get("rows", [])) == 5000 for x in tl),
          f"timeline: {[len(x.get('rows', [])) for x in tl]} bins per part, expected 2 parts (GPU0, memory) "
          f"of 5,000 (10,000 in all)")
    print(f"size_check: {events} events -> report {size} bytes (budget {MAX}), its JSON {len(m.group(1)) if m else 0} "
          f"bytes; operator/kernel/memory rows {[rows(t.get(x, {})) for x in ('operator', 'kernel', 'memory')]}, "
          f"steps {n} rows x {facts.get('per_row')}, timeline {[len(x.get('rows', [])) for x in tl]} bins")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
