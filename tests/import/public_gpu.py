#!/usr/bin/env python3
"""Real GPU traces that others recorded (tests/data/kineto-public, README
there), read by `gprof-dl summary` as a new user would; every figure checked
against a sum taken here over the JSON itself, in integer nanoseconds.

Cases:
  backward   the Model view's Backward GPU time: the GPU work whose launching
             call starts inside the step's Backward (the first to the last end
             of the autograd::engine::evaluate_function ranges that start in
             the step, on any thread of the process: import_phases.c), on
             whichever thread the call ran (PyTorch's autograd thread); the
             step's GPU time is all the counted work; Others the rest.
  kernel_row the Overview's Kernel row: every kernel in the window (the NCCL
             ones too, as the Kernel table counts them), merged and clipped.
  totals     the two GPU totals (by launch, clipped to the steps) and the note
             that says by how much they differ; --window gpu (the GPU's own
             span): one total, the span's length, no such note.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pylib"))
from kineto import clipped, load, merge, ns  # noqa: E402
DATA = os.path.join(HERE, "..", "data", "kineto-public")
EVAL_FN = "autograd::engine::evaluate_function: "
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg}")


class Trace:
    def __init__(self, name):
        path = os.path.join(DATA, name)
        doc = load(path)
        self.path = path
        self.ev = []
        for e in doc["traceEvents"]:
            if e.get("ph") != "X" or "dur" not in e:
                continue
            s = ns(e["ts"])
            self.ev.append(dict(e, s=s, e=s + ns(e["dur"])))
        self.steps = [(e["s"], e["e"], e["pid"]) for e in self.ev
                      if e.get("cat") not in GPU_CATS + ("gpu_user_annotation",)
                      and e["name"].startswith("ProfilerStep#")]
        self.calls = {}
        for e in self.ev:
            if e.get("cat") in ("cuda_runtime", "cuda_driver"):
                c = e.get("args", {}).get("correlation")
                if c is not None:
                    self.calls[c] = e
        self.work = [e for e in self.ev if e.get("cat") in GPU_CATS]

    def call_of(self, w):
        return self.calls.get(w.get("args", {}).get("correlation"))

    def in_steps(self, t, pid):
        return any(a <= t < b for a, b, p in self.steps if p == pid)

    def counted(self):
        """GPU work whose call starts in the steps (else: work with no call that overlaps them)."""
        out = []
        for w in self.work:
            c = self.call_of(w)
            if c is not None:
                if self.in_steps(c["s"], c["pid"]):
                    out.append((w, c))
            elif any(min(w["e"], b) > max(w["s"], a) for a, b, _ in self.steps):
                out.append((w, None))
        return out

    def backward_windows(self):
        out = []
        for a, b, p in self.steps:
            ins = [(e["s"], e["e"]) for e in self.ev
                   if e["pid"] == p and e["name"].startswith(EVAL_FN) and a <= e["s"] < b]
            if ins:
                out.append((min(x for x, _ in ins), min(b, max(y for _, y in ins)), p))
        return out


def summary(gprof, path, *args):
    r = subprocess.run([gprof, "summary", path, "--format", "json", "--top", "0", *args],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"summary {path} {args}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def rows(table):
    out = []

    def walk(rs):
        for r in rs:
            out.append(r)
            walk(r.get("children", []))
    for sec in table["sections"]:
        walk(sec.get("rows", []))
    return out


def row(table, key, name):
    for r in rows(table):
        if r.get(key) == name:
            return r
    fail(f"no row {name!r} in {table['title']}")


def case_backward(gprof):
    for name, backward_min_share in (("nccl_data.json.gz", 0.7),
                                     ("mi250_minitoy_train.json.gz", 0.3),
                                     ("backward_thread.json", 0.99)):
        tr = Trace(name)
        counted = tr.counted()
        bw = tr.backward_windows()
        total = sum(w["e"] - w["s"] for w, _ in counted)
        back = 0
        other_thread = 0
        for w, c in counted:
            if c is not None and any(a <= c["s"] < b for a, b, p in bw if p == c["pid"]):
                back += w["e"] - w["s"]
                step_tids = {e["tid"] for e in tr.ev if e["name"].startswith("ProfilerStep#")}
                other_thread += c["tid"] not in step_tids
        doc = summary(gprof, tr.path, "--view", "model")
        m = doc["tables"]["model"]
        step, bwd = row(m, "name", "ProfileStep"), row(m, "name", "Backward")
        print(f"{name}: counted GPU work {total} ns, Backward's {back} ns "
              f"({other_thread} pieces launched off the step's thread)")
        check(bwd["gpu_total_ns"] == back,
              f"{name}: Backward GPU {bwd['gpu_total_ns']} ns == {back} ns summed over the JSON")
        check(back >= backward_min_share * total and other_thread > 0,
              f"{name}: Backward holds {back / total:.1%} of the GPU work, launched off the step's thread")
        check(step["gpu_total_ns"] == total,
              f"{name}: ProfileStep GPU {step['gpu_total_ns']} ns == all counted work {total} ns")
        others = row(m, "name", "Others")
        check(others["gpu_total_ns"] < total - back + 1,
              f"{name}: Others GPU {others['gpu_total_ns']} ns <= the work outside Backward")


def case_kernel_row(gprof):
    tr = Trace("nccl_data.json.gz")
    win = [(a, b) for a, b, _ in tr.steps]
    kernels = [e for e in tr.ev if e.get("cat") == "kernel"]
    inwin = [k for k in kernels if any(min(k["e"], b) > max(k["s"], a) for a, b in merge(win))]
    nccl = [k for k in inwin if "nccl" in k["name"].lower()]
    union = clipped([(k["s"], k["e"]) for k in kernels], win)
    doc = summary(gprof, tr.path, "--view", "overview", "--view", "kernel")
    ov = doc["tables"]["overview"]
    kr = row(ov, "event_type", "Kernel")
    check(len(nccl) > 0, f"nccl_data: {len(nccl)} NCCL kernels in the window")
    check(kr["calls"] == len(inwin), f"Overview Kernel calls {kr['calls']} == {len(inwin)} (NCCL's included)")
    check(kr["gpu_time_ns"] == union, f"Overview Kernel GPU {kr['gpu_time_ns']} ns == union {union} ns")
    calls = sum(r["calls"] for r in rows(doc["tables"]["kernel"]) if r["depth"] == 0)
    check(calls == len(inwin), f"Kernel table calls {calls} == the Overview's {len(inwin)}")


def case_totals(gprof):
    tr = Trace("ns_resolution_rank-0.json.gz")
    win = merge([(a, b) for a, b, _ in tr.steps])
    counted = tr.counted()
    full = sum(w["e"] - w["s"] for w, _ in counted)
    outside = sum((w["e"] - w["s"]) - clipped([(w["s"], w["e"])], win) for w, _ in counted)
    kernels = [e for e in tr.ev if e.get("cat") == "kernel"]
    by_launch = sum(w["e"] - w["s"] for w, _ in counted if w.get("cat") == "kernel")
    in_steps = clipped([(k["s"], k["e"]) for k in kernels], win)
    doc = summary(gprof, tr.path, "--view", "overview", "--view", "kernel", "--time-unit", "ns")
    ov, kt = doc["tables"]["overview"], doc["tables"]["kernel"]
    print(f"ns_resolution: kernels by launch {by_launch} ns, clipped to the steps {in_steps} ns; "
          f"work launched in the steps {full} ns, {outside} ns of it outside them")
    check(row(ov, "event_type", "Kernel")["gpu_time_ns"] == in_steps, "Overview Kernel: clipped to the steps")
    ksum = sum(r["gpu_total_ns"] for r in rows(kt) if r["depth"] == 0)
    check(ksum == by_launch, f"Kernel table {ksum} ns == kernels by launch {by_launch} ns")
    note = f"Two GPU totals: the Kernel, Memory Manipulation and nvprof tables and the GPU columns " \
           f"count the GPU work launched in the window, each piece in full ({full}.00 ns in all)"
    for t in ("overview", "kernel"):
        check(any(n.startswith(note) and f"{outside}.00 ns of the work launched in the window ran outside it" in n
                  for n in doc["tables"][t]["notes"]), f"{t}: the two totals' note, {full} and {outside} ns")

    # --window gpu: the GPU's own span
    gpu = tr.work + [e for e in tr.ev if e.get("cat") == "kernel" and e not in tr.work]
    lo, hi = min(w["s"] for w in gpu), max(w["e"] for w in gpu)
    doc = summary(gprof, tr.path, "--view", "overview", "--view", "kernel", "--view", "model",
                  "--window", "gpu", "--time-unit", "ns")
    check(doc["window"]["source"] == "gpu span" and doc["window"]["total_ns"] == hi - lo,
          f"--window gpu: the window is the GPU's span, {hi - lo} ns")
    ov, kt = doc["tables"]["overview"], doc["tables"]["kernel"]
    allk = clipped([(k["s"], k["e"]) for k in kernels], [(lo, hi)])
    check(row(ov, "event_type", "Kernel")["gpu_time_ns"] == allk and
          row(ov, "event_type", "Kernel")["calls"] == len(kernels),
          f"--window gpu: Overview Kernel {len(kernels)} calls, {allk} ns")
    ksum = sum(r["gpu_total_ns"] for r in rows(kt) if r["depth"] == 0)
    check(ksum == sum(k["e"] - k["s"] for k in kernels), f"--window gpu: Kernel table {ksum} ns, every kernel")
    check(row(doc["tables"]["model"], "name", "GPU span")["gpu_total_ns"] ==
          sum(w["e"] - w["s"] for w in tr.work), "--window gpu: the Model's first row holds all GPU work")
    check(not any("Two GPU totals" in n for t in doc["tables"].values() for n in t["notes"]),
          "--window gpu: one GPU total, no note")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--case", required=True)
    args = ap.parse_args()
    {"backward": case_backward, "kernel_row": case_kernel_row, "totals": case_totals}[args.case](args.gprof_dl)
    print("PASS")


if __name__ == "__main__":
    main()
