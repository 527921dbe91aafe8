#!/usr/bin/env python3
"""The gc-pauses rule of `gprof-dl advise` (lib/analysis/advise/rules_gc.c) on
real torch CPU programs run under `gprof-dl run` (which records each Python
garbage collection as a PythonOp range "Python GC (generation N)"), read back
with `gprof-dl advise --format json`:

- gc_pauses: progs/gc_loop.py, a loop of 6 forward and backward passes a step
  (about 10 ms on an idle machine; a fixed number, so that the runs compared
  do the same work whatever the load when they start) that
  keeps a graph of 300000 live lists and makes 8000 reference cycles a step
  (kept 2 steps, so that they reach generation 2, whose collections then walk
  the graph every few steps): gc-pauses fires, with generation-2 collections
  in the evidence (collections per step by generation, the GC time per step,
  the longest pause, generation 2, and its step); the saving checked as the
  issue asks: the same program with gc.freeze(); gc.disable() is faster per
  step by the estimated saving within 25 %, over five pairs of runs (each
  an on run and the off run right after it), the median over the pairs of
  the gain over the saving within 25 % of 1. The step's time compared is
  its own time: the mean batch_cost (`gprof-dl bench`) less the step
  thread's wait for a CPU (runnable, not running: schedstat, steps.csv's
  runq_ns), and the saving's own part is the saving times the on run's own
  time over its batch_cost. On a 2-core machine shared with other jobs the
  wait moves batch_cost between runs by as much as the saving (a pair's
  gain in batch_cost was 0.41 to 1.45 of the saving beside two burners,
  and the median of five pairs failed 1 run in 3), its own time by little;
  the batch_cost figures are printed;
- gc_clean: progs/steps_loop.py, an ordinary torch loop (40 steps of 4
  forward and backward passes of an MLP), three runs: gc-pauses never fires,
  though the collector recorded its collections (the trace has them).

Exit status: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE)."""
import csv
import json
import os
import shlex
import sys
from statistics import median

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from checks import Failure, Skip, check, eq, must, near, run_bounded, text  # noqa: E402
from torchharness import torch_main  # noqa: E402

PROGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs")
STEPS, SKIP_STEPS = 40, 10
TOL = 0.25  # the "within 25 %"
PAIRS = 5
CLEAN_RUNS = 3
GC_ARGS = ("--graph", "300000", "--cycles", "8000", "--keep", "2", "--reps", "6")


class Ctx:
    def __init__(self, args, tmp):
        self.gpdl = args.gprof_dl
        self.py = args.python
        self.advise_cmd = shlex.split(args.advise) if args.advise else [args.gprof_dl, "advise"]
        self.tmp = tmp
        self.n = 0
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GPROF_DL_") and k not in ("PYTHONPATH", "LD_PRELOAD", "NVTX_INJECTION64_PATH",
                                                              "CUDA_INJECTION64_PATH")}
        env["GPROF_DL_CACHE_DIR"] = args.cache_dir
        env["PYTHONHASHSEED"] = "0"
        env["PYTHONUNBUFFERED"] = "1"
        env["OMP_NUM_THREADS"] = "1"  # steadier step times
        self.env = env
        p = run_bounded([*self.advise_cmd, "--rules"], env=self.env)
        if "gc-pauses" not in text(p.stdout):
            raise Skip(f"this gprof-dl has no gc-pauses rule: {text(p.stderr).strip()[:200]}")

    def gprof(self, *args, status=0):
        p = run_bounded([self.gpdl, *args], env=self.env)
        if status is not None and p.returncode != status:
            raise Failure(f"gprof-dl {' '.join(args)}: status {p.returncode}, expected {status}\n"
                          f"stderr: {text(p.stderr)[-3000:]}")
        return p

    def record(self, prog, *prog_args):
        """PROG (in progs/) under `gprof-dl run -q`; the trace's path."""
        self.n += 1
        out = os.path.join(self.tmp, f"t{self.n}.gpdl")
        p = self.gprof("run", "-q", "-o", out, "--force", "--", self.py, os.path.join(PROGS, prog),
                       "--steps", str(STEPS), *prog_args)
        print(f"{prog} {' '.join(prog_args)}: {text(p.stdout).strip()}")
        must(os.path.exists(out), f"no trace written at {out}")
        return out

    def advise(self, trace):
        p = run_bounded([*self.advise_cmd, trace, "--format", "json", "--skip-steps", str(SKIP_STEPS)], env=self.env)
        if p.returncode != 0:
            raise Failure(f"advise {trace}: status {p.returncode}\nstderr: {text(p.stderr)[-3000:]}")
        return json.loads(p.stdout)

    def batch_ms(self, trace):
        """The mean batch_cost of the counted steps, ms (`gprof-dl bench`)."""
        d = json.loads(self.gprof("bench", trace, "--format", "json", "--skip", str(SKIP_STEPS)).stdout)
        eq(d["counted"], STEPS - SKIP_STEPS, f"{trace}: counted steps")
        return d["batch_cost"]["avg"] * 1e3

    def own_ms(self, trace):
        """The counted steps' mean time less their wait for a CPU (schedstat:
        runnable, not running), ms: the step's own time, which the machine's
        load changes little; and that over their mean length."""
        out = os.path.join(self.tmp, f"own{self.n}")
        self.gprof("export", "--csv", trace, "-o", out, "--force", "--no-summary")
        with open(os.path.join(out, "steps.csv"), newline="") as f:
            rows = list(csv.DictReader(f))[SKIP_STEPS:]
        eq(len(rows), STEPS - SKIP_STEPS, f"{trace}: counted steps in steps.csv")
        must(all(int(r["cpu_ns"]) > 0 for r in rows), f"{trace}: steps without schedstat")
        dur = sum(int(r["dur_ns"]) for r in rows)
        own = sum(int(r["dur_ns"]) - int(r["runq_ns"]) for r in rows)
        return own / len(rows) / 1e6, own / dur

    def collections(self, trace):
        """The trace's "Python GC (generation N)" PythonOp ranges: {N: count}."""
        out = os.path.join(self.tmp, f"csv{self.n}")
        self.gprof("export", "--csv", trace, "-o", out, "--force")
        by = {}
        with open(os.path.join(out, "ranges.csv"), newline="") as f:
            for r in csv.DictReader(f):
                if r["type"] == "PythonOp" and r["name"].startswith("Python GC (generation "):
                    g = int(r["name"][len("Python GC (generation "):-1])
                    by[g] = by.get(g, 0) + 1
        return by


def gc_findings(adv):
    return [f for f in adv["findings"] if f["rule"] == "gc-pauses"]


def case_gc_pauses(c):
    ratios, own_ratios = [], []
    for k in range(PAIRS):
        on = c.record("gc_loop.py", "--gc", "on", *GC_ARGS)
        adv = c.advise(on)
        eq(adv["steps"], STEPS - SKIP_STEPS, "counted steps")
        got = gc_findings(adv)
        must(len(got) == 1, f"gc-pauses: expected one finding, got {json.dumps(adv, indent=1)[:3000]}")
        f = got[0]
        saving = f["saving_ns"] / 1e6
        print(f"pair {k + 1}: gc-pauses saving {saving:.2f} ms a step, {f['what']}")
        for e in f["evidence"]:
            print(f"  {e}")
        ev = f["evidence"]
        check(ev[0].endswith(" per step") and f"in {STEPS - SKIP_STEPS} counted steps" in ev[0],
              f"evidence: collections per step: {ev[0]}")
        gen2 = float(ev[0].split("generation 2 ")[1].split()[0])
        check(gen2 > 0, f"evidence: generation-2 collections in the steps: {ev[0]}")
        check(ev[1].startswith(f"GC {saving:.2f} ms per step: generation 0 "), f"evidence: GC ms per step: {ev[1]}")
        check(ev[2].startswith("the longest pause: ") and "(generation 2), in step " in ev[2],
              f"evidence: the longest pause, a full collection, and its step: {ev[2]}")
        check("counted steps collected; the most: " in ev[3], f"evidence: the steps affected: {ev[3]}")
        check(f["share_pct"] >= 5.0, f"share {f['share_pct']} % of the step")
        check("gc.freeze()" in f["try"] and "gc.disable()" in f["try"], f"try: {f['try']}")
        off = c.record("gc_loop.py", "--gc", "off", *GC_ARGS)
        eq(gc_findings(c.advise(off)), [], "gc.disable(): gc-pauses findings")
        b_on, b_off = c.batch_ms(on), c.batch_ms(off)
        print(f"pair {k + 1}: the step with gc.disable() is {b_on - b_off:.2f} ms faster "
              f"({b_on:.2f} -> {b_off:.2f} ms); estimated {saving:.2f} ms: {(b_on - b_off) / saving:.2f} of it")
        ratios.append((b_on - b_off) / saving)
        (o_on, share), (o_off, _) = c.own_ms(on), c.own_ms(off)
        own_ratios.append((o_on - o_off) / (saving * share))
        print(f"pair {k + 1}: own time (less the wait for a CPU) {o_on:.2f} -> {o_off:.2f} ms, "
              f"saving {saving * share:.2f} ms of it: {own_ratios[-1]:.2f}")
    print(f"over {PAIRS} pairs, batch_cost: the gain is {median(ratios):.2f} of the estimated saving "
          f"(median; {[round(r, 2) for r in ratios]}); not asserted: the load moves it")
    ratio = median(own_ratios)
    print(f"over {PAIRS} pairs, own time: the gain is {ratio:.2f} of the saving's own part "
          f"(median; {[round(r, 2) for r in own_ratios]})")
    near(ratio, 1.0, TOL, "gc-pauses: own time gained per step with the collector off, over the saving's own "
                          "part (median of the pairs)")


def case_gc_clean(c):
    for k in range(CLEAN_RUNS):
        t = c.record("steps_loop.py")
        adv = c.advise(t)
        eq(gc_findings(adv), [], f"steps_loop.py run {k + 1}: gc-pauses findings")
        by = c.collections(t)
        print(f"run {k + 1}: collections recorded by generation {by}")
        check(by.get(0, 0) > 0, f"run {k + 1}: the collector recorded generation-0 collections: {by}")


def add_args(ap):
    ap.add_argument("--advise", default="",
                    help="the command that prints the findings (default: GPROF_DL advise)")


if __name__ == "__main__":
    sys.exit(torch_main(globals(), Ctx, "gpdl-advise-gc-", add_args))
