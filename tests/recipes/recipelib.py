"""recipelib.py - what the recipe tests share: the driver
(examples/recipes/run) loaded as a module, gprof-dl's exports and views of a
job, the comparison of figures, and a model of tracebuild.h's synthetic
jobs from their definition.

Figures are compared as gprof-dl prints them: a time in ns is the recipe's
value rounded to the nearest ns (the view's JSON `*_ns` is llround of the
same double), a percentage within 1e-9, a count exactly."""
import importlib.machinery
import importlib.util
import json
import math
import os
import re
import subprocess
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
RECIPES = os.path.join(SRC, "examples", "recipes")


def load_driver():
    """examples/recipes/run as a module (it has no .py suffix)."""
    path = os.path.join(RECIPES, "run")
    loader = importlib.machinery.SourceFileLoader("gpdl_recipes_run", path)
    spec = importlib.util.spec_from_loader("gpdl_recipes_run", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def recipes():
    """Every recipe: {name: path}, by name."""
    return {f[:-4]: os.path.join(RECIPES, f) for f in sorted(os.listdir(RECIPES))
            if f.endswith(".sql") and f != "views.sql"}


def gprof(gpdl, *args, cwd=None):
    p = subprocess.run([gpdl, *args], capture_output=True, cwd=cwd, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"gprof-dl {' '.join(args)}: status {p.returncode}: "
                           f"{p.stderr.decode(errors='replace')[-2000:]}")
    return p.stdout.decode()


def view(gpdl, files, name, *opts):
    return json.loads(gprof(gpdl, "summary", *files, "--view", name, "--format", "json", *opts))


def exports(gpdl, files, out):
    """The job's SQL exports under out: {'csv': DIR, 'gzip': DIR, 'sqlite': FILE}."""
    got = {"csv": os.path.join(out, "part"), "gzip": os.path.join(out, "part-gz"),
           "sqlite": os.path.join(out, "job.sqlite")}
    gprof(gpdl, "export", "--csv", "--partitioned", *files, "-o", got["csv"])
    gprof(gpdl, "export", "--csv", "--partitioned", "--gzip", *files, "-o", got["gzip"])
    gprof(gpdl, "export", "--sqlite", *files, "-o", got["sqlite"])
    return got


def value(v):
    """An engine's value, comparable across engines: int, float, str or None."""
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, bool):
        return int(v)
    return v


def as_dicts(cols, rows):
    return [dict(zip(cols, (value(v) for v in r))) for r in rows]


def same_value(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return str(a) == str(b)
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)), abs(float(b)))


def diff_rows(what, a, b):
    """Failures where result b differs from result a (lists of dicts)."""
    out = []
    if len(a) != len(b):
        return [f"{what}: {len(a)} rows vs {len(b)}"]
    for i, (x, y) in enumerate(zip(a, b)):
        if list(x) != list(y):
            return [f"{what}: columns {list(x)} vs {list(y)}"]
        for k in x:
            if not same_value(x[k], y[k]):
                out.append(f"{what}: row {i} {k}: {x[k]!r} vs {y[k]!r}")
    return out[:20]


def ns(v):
    """A time as the view prints it in ns: llround (half away from zero)."""
    if v is None:
        return None
    v = float(v)
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def dist_of(view_json):
    t = view_json["tables"]["distributed"]
    sec = t["sections"][0]
    return {r["rank"]: r for r in sec["rows"]}, sec["facts"]


TIMES = ("step_mean", "step_median", "step_p95", "computation", "communication", "overlap",
         "exposed", "wait", "idle", "busy")
PCTS = ("computation", "communication", "overlap", "exposed", "wait", "idle")


def check_rank_time(rows, view_rows):
    bad = []
    got = {r["rank"]: r for r in rows}
    if sorted(got) != sorted(view_rows):
        return [f"rank_time: ranks {sorted(got)}, the view's {sorted(view_rows)}"]
    for rank, v in view_rows.items():
        r = got[rank]
        if r["steps"] != v["steps"] or r["host"] != v["host"]:
            bad.append(f"rank_time rank {rank}: steps/host {r['steps']}/{r['host']}, view {v['steps']}/{v['host']}")
        for k in TIMES:
            if ns(r[k + "_ns"]) != v.get(k + "_ns"):
                bad.append(f"rank_time rank {rank}: {k} {ns(r[k + '_ns'])} ns, view {v.get(k + '_ns')}")
        for k in PCTS:
            if abs(float(r[k + "_pct"]) - v[k + "_pct"]) > 1e-9 * max(1, v[k + "_pct"]):
                bad.append(f"rank_time rank {rank}: {k}_pct {r[k + '_pct']}, view {v[k + '_pct']}")
    return bad


FACTS_EXACT = ("straggler_rank", "straggler_cause")
FACTS_NS = ("straggler_excess_ns", "busy_excess_ns", "others_median_busy_ns", "others_wait_ns")


def check_straggler(rows, facts):
    if len(rows) != 1:
        return [f"straggler: {len(rows)} rows, expected 1"]
    r, bad = rows[0], []
    for k in FACTS_EXACT:
        if r[k] != facts[k]:
            bad.append(f"straggler: {k} {r[k]}, view {facts[k]}")
    for k in FACTS_NS:
        if ns(r[k]) != facts[k]:
            bad.append(f"straggler: {k} {ns(r[k])}, view {facts[k]}")
    return bad


def check_step_time(rows, view_rows):
    """Per rank: the counted steps, their mean wait and busy, against the view."""
    bad = []
    for rank, v in view_rows.items():
        mine = [r for r in rows if r["rank"] == rank]
        counted = [r for r in mine if r["counted"] == 1]
        if [r["step"] for r in mine] != list(range(len(mine))):
            bad.append(f"step_time rank {rank}: steps not numbered 0.. in order")
        if len(counted) != v["steps"]:
            bad.append(f"step_time rank {rank}: {len(counted)} counted steps, view {v['steps']}")
            continue
        n = len(counted)
        for k, col in (("wait", "wait_ns"), ("busy", "busy_ns"), ("step_mean", "dur_ns")):
            got = ns(sum(float(r[col]) for r in counted) / n)
            if got != v[k + "_ns"]:
                bad.append(f"step_time rank {rank}: mean {col} {got}, view {k} {v[k + '_ns']}")
    return bad


# ---- the synthetic jobs of tracebuild.h, from their definition ----------------------------

def model_job(ranks, steps, slow_rank, slow_ms, jitter, gpu=0, skip=10):
    """tb_job_write's job (tracebuild.h), worked out; rank r's step k lasts
    100 ms, x = slow_ms on the slow rank, j = (k + r) % 3 with jitter:
      gloo (gpu 0): matmul [s, s+c), c = 40 + x + j, then c10d::allreduce_
        [s+c, s+c+1) and on the gloo thread gloo:all_reduce [s+c, s+95) of
        seq k: computation c, communication 95 - c, idle 5;
      nccl (gpu 1): kernel gemm [s+5, s+5+c), c = 50 + x + j, then the NCCL
        kernel [s+5+c, s+95) of the host call nccl:all_reduce of seq k:
        computation c, communication 90 - c, idle 10.
    No overlap. The all_reduce lasts the communication, the fastest the rank
    with the largest c: wait = max c - c, busy = 100 - wait. Returns per rank
    {steps, computation_ns, ...} per step, and the straggler's facts."""
    ms = 1000000
    base, busy_len = (50, 90) if gpu else (40, 95)
    counted = range(min(skip, steps // 2), steps)
    n = len(counted)

    def c(r, k):
        return base + (slow_ms if r == slow_rank else 0) + ((k + r) % 3 if jitter else 0)
    out = {}
    for r in range(ranks):
        waits = [max(c(o, k) for o in range(ranks)) - c(r, k) for k in counted]
        busy = [100 - w for w in waits]
        out[r] = {"steps": n,
                  "computation_ns": sum(c(r, k) for k in counted) * ms / n,
                  "communication_ns": sum(busy_len - c(r, k) for k in counted) * ms / n,
                  "idle_ns": (100 - busy_len) * ms, "overlap_ns": 0,
                  "wait_ns": sum(waits) * ms / n, "busy_ns": sum(busy) * ms / n,
                  "busy_var": _var_of_mean([b * ms for b in busy])}

    def median(v):
        v = sorted(v)
        h = len(v) // 2
        return v[h] if len(v) % 2 else (v[h - 1] + v[h]) / 2
    best = None
    for r in range(ranks):
        others = [o for o in range(ranks) if o != r]
        m = median(out[o]["busy_ns"] for o in others)
        if best is None or out[r]["busy_ns"] - m > best[1]:
            best = (r, out[r]["busy_ns"] - m, m, others)
    r, excess, m, others = best
    wait = sum(out[o]["wait_ns"] for o in others) / len(others)
    se = math.sqrt(out[r]["busy_var"] + median(out[o]["busy_var"] for o in others))
    named = excess > 3 * se and excess > 0.02 * m and wait >= excess / 2
    comp_excess = out[r]["computation_ns"] - median(out[o]["computation_ns"] for o in others)
    facts = {"straggler_rank": r if named else -1, "busy_excess_ns": excess,
             "others_median_busy_ns": m, "others_wait_ns": wait,
             "straggler_excess_ns": comp_excess if named else 0}
    return out, facts


def _var_of_mean(v):
    n = len(v)
    if n < 2:
        return 0.0
    mean = sum(v) / n
    return sum((x - mean) ** 2 for x in v) / (n - 1) / n


# ---- gprof-dl info's record counts ------------------------------------------------------------

def info_counts(gpdl, path):
    """What `gprof-dl info` says of a trace: events, threads, processes,
    counters, drops (records lost, 0 none), damage offset (None: none) and
    the events by type."""
    out = gprof(gpdl, "info", path)
    got = {"by_type": {}, "damage": None, "drops": 0, "counters": 0}
    section = None
    for line in out.splitlines():
        s = line.strip()
        m = re.match(r"(processes|threads): (\d+)$", s)
        if m:
            got[m.group(1)] = int(m.group(2))
            continue
        if s == "by type":
            section = "by_type"
            continue
        if s in ("counters", "records"):
            section = s
            continue
        m = re.match(r"events\s+(\d+)$", s)
        if m and section == "records":
            got["events"] = int(m.group(1))
            continue
        m = re.match(r"([A-Za-z]+)\s+(\d+)$", s)
        if m and section == "by_type" and line.startswith("    "):
            got["by_type"][m.group(1)] = int(m.group(2))
            continue
        if section == "by_type" and not line.startswith("    "):
            section = None
        m = re.match(r"drops\s+(\d+) records lost", s)
        if m:
            got["drops"] = int(m.group(1))
        m = re.match(r"damage\s+.* at offset (\d+)", s)
        if m:
            got["damage"] = int(m.group(1))
        m = re.search(r"\s(\d+) samples", s)
        if section == "counters" and m:
            got["counters"] += int(m.group(1))
    return got


EVENT_TABLES = ("ranges", "operators", "runtime", "marks", "kernels", "memcpy", "memset", "memory",
                "communication")
