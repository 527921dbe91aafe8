"""recipelib.py - what the recipe tests share: the driver
(examples/recipes/run) loaded as a module, gprof-dl's exports and views of a
job, the comparison of figures, and a model of tracebuild.h's synthetic
jobs from their definition.

Figures are compared as gprof-dl prints them: a time in ns is the recipe's
value rounded to the nearest ns (the view's JSON `*_ns` is llround of the
same double; a tie, x.5, may round either way: ns_eq), a real (a p-value,
a percentage) within 1e-9 of it, a count exactly."""
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
    """Every recipe: {name: path}, by name (views.sql and agg_views.sql are
    the views the driver puts before them)."""
    return {f[:-4]: os.path.join(RECIPES, f) for f in sorted(os.listdir(RECIPES))
            if f.endswith(".sql") and f not in ("views.sql", "agg_views.sql")}


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
    got = exports_of(os.path.dirname(out), os.path.basename(out))
    gprof(gpdl, "export", "--csv", "--partitioned", *files, "-o", got["csv"])
    gprof(gpdl, "export", "--csv", "--partitioned", "--gzip", *files, "-o", got["gzip"])
    gprof(gpdl, "export", "--sqlite", *files, "-o", got["sqlite"])
    return got


def exports_of(tmp, job):
    """The paths exports() gave the job exported under tmp/job."""
    out = os.path.join(tmp, job)
    return {"csv": os.path.join(out, "part"), "gzip": os.path.join(out, "part-gz"),
            "sqlite": os.path.join(out, "job.sqlite")}


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


def ns_eq(v, want):
    """A recipe's time v equals the view's `*_ns` want (llround of its own
    double): rounded as the view rounds, or, where v is a tie (x.5 to
    within 1e-6 ns) that the view's sum in another order may have rounded
    the other way, either neighbour. None equals None only."""
    if v is None or want is None:
        return v is None and want is None
    v = float(v)
    if ns(v) == want:
        return True
    frac = abs(v) - math.floor(abs(v))
    return abs(frac - 0.5) < 1e-6 and want in (math.floor(v), math.ceil(v))


def real_eq(v, want, rel=1e-9):
    return abs(float(v) - float(want)) <= rel * max(1.0, abs(float(want)))


# the per-rank columns of the view (rank_row() of view_distributed.c), each per step
TIMES = ("step_mean", "step_median", "step_p95", "busy", "wait", "computation", "data_loading",
         "outside", "communication", "contention", "comm_total", "overlap")
PARTS = ("computation", "data_loading", "outside", "communication", "contention")


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
            if k + "_ns" not in v:
                bad.append(f"rank_time rank {rank}: the view has no {k}_ns")
            elif not ns_eq(r[k + "_ns"], v[k + "_ns"]):
                bad.append(f"rank_time rank {rank}: {k} {r[k + '_ns']} ns, view {v[k + '_ns']}")
        parts = sum(float(r[k + "_ns"] or 0) for k in PARTS)
        if abs(parts - float(r["busy_ns"])) > 1e-6 * max(1.0, float(r["busy_ns"])):
            bad.append(f"rank_time rank {rank}: the parts add up to {parts}, busy {r['busy_ns']}")
    return bad


FACTS_EXACT = ("straggler_rank", "straggler_cause", "straggler_kind", "straggler_steps_held",
               "candidate_rank", "steps_compared")
FACTS_NS = ("straggler_excess_ns", "busy_excess_ns", "part_computation_ns", "part_data_loading_ns",
            "part_host_ns", "part_communication_ns", "part_contention_ns", "others_median_busy_ns",
            "others_wait_ns", "cost_ns", "job_step_ns", "noise_ns")
FACTS_REAL = ("straggler_p", "cost_pct")


def check_straggler(rows, facts):
    if len(rows) != 1:
        return [f"straggler: {len(rows)} rows, expected 1"]
    r, bad = rows[0], []
    for k in FACTS_EXACT + FACTS_NS + FACTS_REAL:
        if k not in facts:
            bad.append(f"straggler: the view has no fact {k}")
        elif k not in r:
            bad.append(f"straggler: no column {k}")
        elif k in FACTS_EXACT and r[k] != facts[k]:
            bad.append(f"straggler: {k} {r[k]}, view {facts[k]}")
        elif k in FACTS_NS and not ns_eq(r[k], facts[k]):
            bad.append(f"straggler: {k} {r[k]}, view {facts[k]}")
        elif k in FACTS_REAL and not real_eq(r[k], facts[k]):
            bad.append(f"straggler: {k} {r[k]!r}, view {facts[k]!r}")
    parts = sum(float(r[k]) for k in FACTS_NS if k.startswith("part_"))
    if abs(parts - float(r["busy_excess_ns"])) > 1e-6 * max(1.0, abs(float(r["busy_excess_ns"]))):
        bad.append(f"straggler: the parts add up to {parts}, busy_excess_ns {r['busy_excess_ns']}")
    return bad


def check_step_time(rows, view_rows):
    """Per rank: the counted steps, their mean wait, busy and parts, against
    the view; the parts of each step add up to its busy time."""
    bad = []
    cols = {"wait": "wait_ns", "busy": "busy_ns", "step_mean": "dur_ns"}
    cols.update((k, k + "_ns") for k in PARTS)
    for rank, v in view_rows.items():
        mine = [r for r in rows if r["rank"] == rank]
        counted = [r for r in mine if r["counted"] == 1]
        if [r["step"] for r in mine] != list(range(len(mine))):
            bad.append(f"step_time rank {rank}: steps not numbered 0.. in order")
        if len(counted) != v["steps"]:
            bad.append(f"step_time rank {rank}: {len(counted)} counted steps, view {v['steps']}")
            continue
        n = len(counted)
        for k, col in cols.items():
            vals = [r[col] for r in counted]
            got = None if all(x is None for x in vals) else sum(float(x or 0) / n for x in vals)
            if not ns_eq(got, v[k + "_ns"]):
                bad.append(f"step_time rank {rank}: mean {col} {got}, view {k} {v[k + '_ns']}")
        for r in counted:
            parts = sum(float(r[k + "_ns"] or 0) for k in PARTS)
            if abs(parts - float(r["busy_ns"])) > 1e-6 * max(1.0, float(r["busy_ns"])):
                bad.append(f"step_time rank {rank} step {r['step']}: parts {parts}, busy {r['busy_ns']}")
                break
        for r in mine:
            if r["counted"] == 0 and any(r[c] is not None for c in ("wait_ns", "busy_ns", "computation_ns")):
                bad.append(f"step_time rank {rank} step {r['step']}: figures for a step not counted")
                break
    return bad


# ---- the synthetic jobs of tracebuild.h, from their definition ----------------------------

def model_job(ranks, steps, slow_rank, slow_ms, jitter, gpu=0, skip=10):
    """tb_job_write's job (tracebuild.h), worked out; rank r's step k lasts
    100 ms from s, x = slow_ms on the slow rank, j = (k + r) % 3 with
    jitter, c its computation:
      gloo (gpu 0): matmul [s, s+c), c = 40 + x + j, then c10d::allreduce_
        [s+c, s+c+1) and on the gloo thread gloo:all_reduce [s+c, s+95) of
        seq k, the call;
      nccl (gpu 1): kernel gemm [s+5, s+5+c), c = 50 + x + j, then the NCCL
        kernel [s+5+c, s+95) of the host call nccl:all_reduce of seq k, the
        call.
    Every rank's call ends at s+95 (e = 95, nccl: 95 too), the fastest (the
    rank of the largest c, cmax) lasting e - cmax: wait = cmax - c, lying at
    [s+c, s+cmax). So per step: computation c, wait cmax - c, communication
    (its own, after the wait) e - cmax, outside 100 - e + (nccl: the 5 ms
    before the gemm) = 5 (gloo) or 10 (nccl), data loading 0, contention
    none (unknown); busy = 100 - wait; comm_total e - c - (nccl: 5), overlap
    0. Returns per rank {steps, *_ns} per step (the view's columns) and
    the straggler's facts by verdict() on the same steps."""
    ms = 1000000
    base, start = (50, 5) if gpu else (40, 0)
    counted = list(range(min(skip, steps // 2), steps))
    n = len(counted)

    def c(r, k):
        return base + (slow_ms if r == slow_rank else 0) + ((k + r) % 3 if jitter else 0)
    out, busy, part, wait = {}, [], [], []
    for r in range(ranks):
        b_r, p_r, w_r = [], [], []
        for k in counted:
            cmax = max(c(o, k) for o in range(ranks))
            w = (cmax - c(r, k)) * ms
            # computation, data loading, outside, communication, contention
            p = [c(r, k) * ms, 0, (5 + start) * ms, (95 - start - cmax) * ms, 0]
            b_r.append(100 * ms - w)
            p_r.append(p)
            w_r.append(w)
        busy.append(b_r)
        part.append(p_r)
        wait.append(w_r)
        out[r] = {"steps": n, "step_mean_ns": 100 * ms, "step_median_ns": 100 * ms,
                  "step_p95_ns": 100 * ms,
                  "busy_ns": sum(b_r) / n, "wait_ns": sum(w_r) / n,
                  "computation_ns": sum(p[0] / n for p in p_r),
                  "data_loading_ns": 0, "outside_ns": (5 + start) * ms,
                  "communication_ns": sum(p[3] / n for p in p_r), "contention_ns": None,
                  "comm_total_ns": sum((95 - start - c(r, k)) * ms for k in counted) / n,
                  "overlap_ns": 0}
    facts = verdict(busy, part, wait, [100 * ms] * n)
    facts["steps_compared"] = n
    return out, facts


# ---- the straggler rule (lib/analysis/dist/verdict.c), in Python ----------------------------

ALPHA, MATERIAL, THETA_REL, THETA_SIGMAS, OUTLIER_SIGMAS, MIN_STEPS = 0.05, 0.05, 0.05, 4.0, 5.0, 3
CONTENTION_MISSED = 1.0
CONTENTION_EFFECT = 0.5  # of a rank's own work, the most its contention counts for
STARVED = 1.5
PLAIN_SHARE, PLAIN_REL = 0.9, 0.5
COMP, DATA, HOST, COMM, CONT = range(5)


def _median(v):
    v = sorted(v)
    h = len(v) // 2
    if not v:
        return 0.0
    return v[h] if len(v) % 2 else (v[h - 1] + v[h]) / 2


def binom_sf(s, m):
    """P(X >= s), X ~ Binomial(m, 1/2), exactly."""
    if s <= 0:
        return 1.0
    if s > m:
        return 0.0
    return min(1.0, sum(math.comb(m, i) for i in range(s, m + 1)) / 2 ** m)


def signflip_sf(x):
    """dist_signflip_sf(): exact over the 16 largest of x by size (the
    earlier first on a tie): the share of their 2^16 sign patterns whose
    sum of s_i |x_i| is at least their sum."""
    top = sorted(range(len(x)), key=lambda i: (-abs(x[i]), i))[:16]
    if not top:
        return 1.0
    t = 0.0
    for i in top:
        t += x[i]
    tol = 1e-9 * (abs(t) + 1)
    ax = [abs(x[i]) for i in top]
    m, ge = len(ax), 0
    for pat in range(1 << m):
        s = 0.0
        for i in range(m):
            s += ax[i] if pat >> i & 1 else -ax[i]
        ge += s >= t - tol
    return ge / (1 << m)


def _middle(order, pos, n):
    """The ranks of the middle one or two of the n - 1 others of the rank at
    place pos of order (ranks by busy time), and the largest of them."""
    m = n - 1
    at = lambda j: order[j if j < pos else j + 1]  # noqa: E731
    return at((m - 1) // 2), at(m // 2), at(n - 2)


def _rule(b, part, job_step, own, runq):
    n, k = len(b), len(b[0])
    e = [[0.0] * k for _ in range(n)]
    sav = [[0.0] * k for _ in range(n)]
    for g in range(k):
        order = sorted(range(n), key=lambda r: (b[r][g], r))
        for pos, r in enumerate(order):
            x, y, top = _middle(order, pos, n)
            e[r][g] = b[r][g] - (b[x][g] + b[y][g]) / 2
            sav[r][g] = max(0.0, b[r][g] - b[top][g])
    dev = []
    for r in range(n):
        med = _median(e[r])
        dev.extend(abs(x - med) for x in e[r])
    sigma = 1.4826 * _median(dev)
    med_busy = _median([x for row in b for x in row])
    theta = max(THETA_REL * med_busy, THETA_SIGMAS * sigma)
    cost = [sum(sav[r]) / k for r in range(n)]
    c = max(range(n), key=lambda r: (cost[r], -r))
    ec, sc = e[c], sav[c]
    step_cont = [max(min(part[r][g][CONT], CONTENTION_EFFECT * max(b[r][g], 0.0)) for r in range(n))
                 for g in range(k)]
    others_runq = [max([runq[r][g] for r in range(n) if r != c] or [0.0]) for g in range(k)]

    def contended(g):
        return ((step_cont[g] > 0 and CONTENTION_MISSED * step_cont[g] >= abs(ec[g]))
                or (others_runq[g] > 0 and STARVED * others_runq[g] >= abs(ec[g])))
    kept = [g for g in range(k) if not (own and contended(g))]
    pos_n, neg_n = sum(ec[g] > 0 for g in kept), sum(ec[g] < 0 for g in kept)
    big = [ec[g] for g in kept if abs(ec[g]) > theta]
    held = [ec[g] for g in kept if ec[g] > theta]
    p_sign = min(1.0, n * binom_sf(pos_n, pos_n + neg_n))
    p_big = min(1.0, n * signflip_sf(big))
    material = cost[c] > 0 and cost[c] >= MATERIAL * job_step
    beyond = sum(x > theta for x in ec)
    s_all, s_max = sum(sc), max(sc)
    s_big = sum(sc[g] for g in range(k) if ec[g] > theta)
    typical = _median(ec)
    floor = max(2 * sigma, THETA_REL * med_busy)
    sig = p_sign < ALPHA or p_big < ALPHA
    sporadic = (beyond * 2 < k and beyond > 1 and (s_big - s_max) * 2 > s_all - s_max
                and typical < 0.5 * _median(held))
    if sporadic:
        kind = 2 if p_big < ALPHA else 0
    elif sig and (typical > floor or (kept and pos_n >= PLAIN_SHARE * len(kept)
                                       and typical > PLAIN_REL * med_busy)):
        kind = 1
    elif p_big < ALPHA:
        kind = 2
    else:
        kind = 0
    p = p_big if kind == 2 else min(p_sign, p_big)
    return {"e": e, "sav": sav, "theta": theta, "floor": floor, "cand": c, "kind": kind, "p": p,
            "named": kind != 0 and material}


def _take(u, busy, part, wait, with_contention):
    n, k = len(busy), len(busy[0])
    c, e = u["cand"], u["e"][u["cand"]]
    if u["kind"] == 2:
        used = [g for g in range(k) if e[g] > u["theta"]]
    else:
        med = _median(e)
        fence = max(OUTLIER_SIGMAS * 1.4826 * _median([abs(x - med) for x in e]), u["theta"])
        used = [g for g in range(k) if abs(e[g] - med) <= fence]
    f = {"busy": 0.0, "median": 0.0, "wait": 0.0, "part": [0.0] * 5}
    for g in used:
        order = sorted(range(n), key=lambda r: (busy[r][g], r))
        x, y, _ = _middle(order, order.index(c), n)
        f["busy"] += busy[c][g]
        f["median"] += (busy[x][g] + busy[y][g]) / 2
        for q in range(5):
            f["part"][q] += part[c][g][q] - (part[x][g][q] + part[y][g][q]) / 2
        f["wait"] += sum(wait[r][g] for r in range(n) if r != c) / (n - 1)
    div = len(used) or 1
    parts = [x / div for x in f["part"]]
    cause = COMP
    for q in range(5):
        if parts[q] > parts[cause] and (q != CONT or with_contention):
            cause = q
    return {"cand": c, "kind": u["kind"], "p": u["p"], "theta": u["theta"], "parts": parts,
            "excess": sum(parts), "median": f["median"] / div, "others_wait": f["wait"] / div,
            "cause": cause,
            "held": sum(u["sav"][c][g] > (u["floor"] if u["kind"] == 1 else u["theta"])
                        for g in range(k))}


def verdict(busy, part, wait, job_step, runq=None):
    """The facts of the view's straggler (verdict.h) from per-step figures:
    busy[r][g], part[r][g][computation, data loading, host, communication,
    contention] (adding up to busy), wait[r][g], job_step[g], runq[r][g]
    (the step thread's whole run-queue time; None: 0); rank r is the
    r-th."""
    n, k = len(busy), len(busy[0]) if busy else 0
    keys = ("straggler_excess_ns", "busy_excess_ns", "part_computation_ns", "part_data_loading_ns",
            "part_host_ns", "part_communication_ns", "part_contention_ns",
            "others_median_busy_ns", "others_wait_ns", "cost_ns", "cost_pct", "job_step_ns",
            "noise_ns", "straggler_kind", "straggler_steps_held")
    facts = {x: 0 for x in keys}
    facts.update(straggler_rank=-1, straggler_cause=-1, candidate_rank=-1, straggler_p=1.0)
    if n < 2 or k < MIN_STEPS:
        return facts
    mean_step = sum(job_step) / k
    if runq is None:
        runq = [[0.0] * k for _ in range(n)]
    # busy less communication beyond the step's least (paced), and the
    # rank's own work: that less contention
    least = [min(part[r][g][COMM] for r in range(n)) for g in range(k)]
    paced = [[busy[r][g] - (part[r][g][COMM] - least[g]) for g in range(k)] for r in range(n)]
    own = [[paced[r][g] - part[r][g][CONT] for g in range(k)] for r in range(n)]
    u = _rule(own, part, mean_step, True, runq)
    v = _take(u, busy, part, wait, False)
    named = u["named"]
    total = _rule(paced, part, mean_step, False, runq)
    if not named and total["named"]:
        w = _take(total, busy, part, wait, True)
        if w["cause"] == CONT:
            v, named = w, True
    cost = sum(total["sav"][v["cand"]]) / k
    code_named = named and v["others_wait"] >= v["excess"] / 2
    facts.update(candidate_rank=v["cand"], straggler_p=v["p"], busy_excess_ns=v["excess"],
                 others_median_busy_ns=v["median"], others_wait_ns=v["others_wait"], cost_ns=cost,
                 cost_pct=100 * cost / mean_step if mean_step > 0 else 0, job_step_ns=mean_step,
                 noise_ns=v["theta"])
    for q, key in enumerate(("part_computation_ns", "part_data_loading_ns", "part_host_ns",
                             "part_communication_ns", "part_contention_ns")):
        facts[key] = v["parts"][q]
    if code_named:
        facts.update(straggler_rank=v["cand"], straggler_cause=v["cause"], straggler_kind=v["kind"],
                     straggler_steps_held=v["held"], straggler_excess_ns=v["parts"][v["cause"]])
    return facts


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
