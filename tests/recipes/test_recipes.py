"""test_recipes.py - every SQL recipe of examples/recipes on DuckDB, Spark and
sqlite, against gprof-dl's own views on the same traces.

    test_recipes.py --gprof-dl BIN --gen GEN [--gen-verdict GEN] --venv DIR
                    [--torch2 PY --pydir DIR]
                    [--cache-dir DIR] [--no-real] [--keep]

Jobs:
  synthetic      8 ranks of tracebuild.h's gloo job (gen-recipe-job: 30 steps,
                 rank 3 slowed by 20 ms of computation, jitter, 2 hosts);
  synthetic-gpu  8 ranks of its nccl job (GPU kernels, rank 5 slowed by 15 ms);
                 the figures of both also worked out from the generator's
                 definition (recipelib.model_job);
  ddp        a real 2-rank gloo DDP job (examples/ddp_train.py under torchrun
             of torch 2, rank 1 slowed by 40 ms a step) under `gprof-dl run`;
             skipped, with a note, without --torch2;
  verdict *  gen-verdict-job's jobs of seeded noise (--gen-verdict), one per
             path of the straggler rule: nobody (noisy, or every rank
             alike: the costs tied), intermittent, consistent
             with an outlier step, by data loading, by time outside
             operators, busier within the noise, by CPU contention (a gloo
             job, and a GPU job whose contention outgrows its host time),
             by computation beside contention; DuckDB and sqlite only
             (the same SQL as on Spark), each against the view and what it
             is expected to say.
For each: `export --csv --partitioned`, the same with --gzip, and `export
--sqlite`; the same three with --no-events (the aggregate tables alone),
on which step_time, rank_time and straggler run with `run --aggregates`
(check_aggregates: DuckDB, sqlite; Spark for rank_time on the first job)
and equal the view as below (--aggregates-only: that alone, Spark for all
three); every recipe on DuckDB (plain and gzip partitions), on sqlite and
on Spark (one local[2] session for all, the plain partitions, and the gzip
ones of the first job for rank_time); every engine's rows equal DuckDB's; step_time,
rank_time and straggler equal `summary --view distributed --format json`
(ns after rounding, a tie either way; p and % within 1e-9), and the view's
straggler equals recipelib.verdict() (verdict.c in Python) on each
engine's step_time; the operator, kernel and collective
recipes are checked by check_ops.py (helper module of the same directory);
the row count of every table equals `gprof-dl info`'s record counts per
rank, drops and damage carried in ranks (a truncated trace too).
Exit status: 0 pass, 1 fail, 77 skip."""
import argparse
import csv
import glob
from gzip import open as gzip_open
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "pylib"))
import recipelib as rl  # noqa: E402
from torchharness import torch_version  # noqa: E402

SKIP = 77
# the synthetic jobs: gen-recipe-job's arguments (tracebuild.h's struct tb_job)
SYN = {"ranks": 8, "steps": 30, "gpu": 0, "slow_rank": 3, "slow_ms": 20, "jitter": 1, "hosts": 2}
SYN_GPU = {"ranks": 8, "steps": 30, "gpu": 1, "slow_rank": 5, "slow_ms": 15, "jitter": 1, "hosts": 1}
DDP_STEPS = 30
DDP_SLOW_MS = 40
# gen-verdict-job's jobs (8 ranks, seed 7, rank 2 the slow one): its
# scenario, steps, and what the view says of it: (straggler rank, cause,
# kind, candidate)
VERDICT_JOBS = {
    "noise": (30, (-1, -1, 0, None)),
    "even": (30, (-1, -1, 0, 0)),
    "intermittent": (50, (2, 0, 2, 2)),
    "stall": (30, (2, 0, 1, 2)),
    "data": (30, (2, 1, 1, 2)),
    "outside": (30, (2, 2, 1, 2)),
    "small": (30, (-1, -1, 0, 2)),
    "contention": (30, (2, 4, 1, 2)),
    "mixed": (30, (2, 0, 1, 2)),
    "flip": (50, (-1, -1, 0, 2)),
    "flipmany": (60, (2, 0, 1, 2)),
    "gpu": (30, (2, 4, 1, 2)),
}
FAILED = []
T0 = time.monotonic()


def log(msg):
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def fail(msgs):
    for m in msgs:
        print("FAIL:", m, flush=True)
    FAILED.extend(msgs)


def synthetic(args, tmp, name, job):
    keys = ("ranks", "steps", "gpu", "slow_rank", "slow_ms", "jitter", "hosts")
    p = subprocess.run([args.gen, name, *(str(job[k]) for k in keys)],
                       capture_output=True, check=True, cwd=tmp)
    made = p.stdout.decode().split()
    files = []
    os.makedirs(os.path.join(tmp, name))
    for f in made:  # tracebuild writes into a directory of its own
        files.append(shutil.copy(f, os.path.join(tmp, name)))
    shutil.rmtree(os.path.dirname(made[0]), ignore_errors=True)
    return files


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ddp_job(args, tmp):
    """The 2-rank gloo job's rank files, or None: those the fixture test
    recipes_ddp_job recorded into --ddp-dir, else recorded here."""
    if args.ddp_dir:
        files = [os.path.join(args.ddp_dir, f"t-{r}.gpdl") for r in range(2)]
        if not all(os.path.exists(f) for f in files):
            log(f"NOTE: no DDP job in {args.ddp_dir} (recipes_ddp_job): the real DDP job is left out")
            return None
        return files
    return record_ddp(args, os.path.join(tmp, "ddp"))


def record_ddp(args, d):
    """The 2-rank gloo job under gprof-dl run, recorded into the new
    directory d: its rank files, or None. Its rank 0 waits about
    DDP_SLOW_MS a step (check_ddp), so it runs alone (RUN_SERIAL); the
    recipes over it need not."""
    if not args.torch2 or not os.path.exists(args.torch2):
        log("NOTE: no torch 2 interpreter (--torch2): the real DDP job is left out")
        return None
    torchrun = os.path.join(os.path.dirname(args.torch2), "torchrun")
    # a half-made venv (a failed pip install) is no torch, as for tests/dist
    probe_dir = args.cache_dir or d
    os.makedirs(probe_dir, exist_ok=True)
    if not os.path.exists(torchrun) or not torch_version(args.torch2, probe_dir):
        log(f"NOTE: {args.torch2} has no working torch and torchrun: the real DDP job is left out")
        return None
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPROF_DL_", "OMPI_", "PMI_", "SLURM_", "PADDLE_"))
           and k not in ("PYTHONPATH", "LD_PRELOAD", "RANK", "WORLD_SIZE", "LOCAL_RANK",
                         "MASTER_ADDR", "MASTER_PORT")}
    env.update({"OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"})
    if args.cache_dir:
        os.makedirs(args.cache_dir, exist_ok=True)
        env["GPROF_DL_CACHE_DIR"] = args.cache_dir
    os.makedirs(d, exist_ok=True)
    cmd = [args.gprof_dl, "run", "-o", "t-%q{RANK}.gpdl", "--", torchrun, "--nproc-per-node", "2",
           "--master-port", str(free_port()), os.path.join(rl.SRC, "examples", "ddp_train.py"), "rank",
           "--steps", str(DDP_STEPS), "--slow-rank", "1", "--slow-ms", str(DDP_SLOW_MS)]
    p = subprocess.run(cmd, capture_output=True, cwd=d, env=env, timeout=300)
    files = [os.path.join(d, f"t-{r}.gpdl") for r in range(2)]
    if p.returncode != 0 or not all(os.path.exists(f) for f in files):
        fail([f"the DDP job: status {p.returncode}: {p.stderr.decode(errors='replace')[-2000:]}"])
        return None
    return files


class Engines:
    """The engines of one job's exports, the Spark session shared by all jobs."""

    def __init__(self, drv, ex, spark=None):
        self.drv = drv
        # the recipes Spark runs (None: all): each Spark query costs seconds
        # of planning, so the jobs after the first give Spark only the
        # recipes whose rows the first job leaves empty or few
        self.spark = spark
        self.open = [("duckdb", drv.DuckDB(ex["csv"])), ("duckdb-gzip", drv.DuckDB(ex["gzip"])),
                     ("sqlite", drv.SQLite(ex["sqlite"])), ("spark", drv.Spark(ex["csv"], cache=True))]
        self.ex = ex

    def close(self):
        for _, e in self.open:
            if e.name != "spark":
                e.close()


def run_all(drv, engines, job):
    """{recipe: {engine: rows}}: every recipe on every engine."""
    out = {}
    for name, path in rl.recipes().items():
        out[name] = {}
        for ename, e in engines.open:
            if ename == "spark" and engines.spark is not None and name not in engines.spark:
                continue
            t = time.monotonic()
            try:
                cols, rows = drv.run_recipe(e, path, {})
            except drv.RecipeError as err:
                fail([f"{job}: {err}"])
                continue
            out[name][ename] = rl.as_dicts(cols, rows)
            log(f"{job}: {name} on {ename}: {len(rows)} rows, {time.monotonic() - t:.1f}s")
    if job == "synthetic":  # Spark reads .csv.gz too (once: each Spark query costs seconds)
        gz = drv.Spark(engines.ex["gzip"], cache=False)
        cols, rows = drv.run_recipe(gz, rl.recipes()["rank_time"], {})
        out["rank_time"]["spark-gzip"] = rl.as_dicts(cols, rows)
    return out


def spark_for_small_jobs(drv):
    """The shared session, tuned for exports of a few MB: a query of these
    recipes plans dozens of stages, and on 2 cores their overhead, not the
    data, is the time (adaptive execution and whole-stage code generation
    off, one shuffle partition: about a third less)."""
    sp = drv.spark_session()
    sp.conf.set("spark.sql.adaptive.enabled", "false")
    sp.conf.set("spark.sql.codegen.wholeStage", "false")
    sp.conf.set("spark.sql.shuffle.partitions", "1")


def check_engines_agree(job, res):
    for name, by in res.items():
        base = by.get("duckdb")
        if base is None:
            continue
        for ename, rows in by.items():
            if ename != "duckdb":
                fail(rl.diff_rows(f"{job}: {name}: {ename} vs duckdb", base, rows))


def check_views(job, gpdl, files, res):
    rows, facts = rl.dist_of(rl.view(gpdl, files, "distributed"))
    for ename, got in res["rank_time"].items():
        fail([f"{job} {ename}: {m}" for m in rl.check_rank_time(got, rows)])
    for ename, got in res["straggler"].items():
        fail([f"{job} {ename}: {m}" for m in rl.check_straggler(got, facts)])
    for ename, got in res["step_time"].items():
        fail([f"{job} {ename}: {m}" for m in rl.check_step_time(got, rows)])
    return rows, facts


def check_ops_recipes(job, gpdl, files, res):
    """The operator, kernel and collective recipes, by check_ops.py."""
    try:
        import check_ops
    except ImportError as e:
        log(f"NOTE: no check_ops.py ({e}): the operator, kernel and collective recipes are "
            "compared across engines only")
        return
    views = check_ops.load_views(gpdl, files) if hasattr(check_ops, "load_views") else {
        "operator": rl.view(gpdl, files, "operator"),
        "kernel": rl.view(gpdl, files, "kernel"),
        "distributed": rl.view(gpdl, files, "distributed"),
    }
    for name in ("top_operators", "top_kernels", "collectives"):
        for ename, rows in res.get(name, {}).items():
            strs = [{k: ("" if v is None else str(v)) for k, v in r.items()} for r in rows]
            fail([f"{job} {name} on {ename}: {m}" for m in check_ops.check(name, strs, views, None)])


def check_counts(job, gpdl, files, engine):
    """Per rank: rows of every table = info's record counts; drops, damage."""
    for f in files:
        info = rl.info_counts(gpdl, f)
        rank = int(rl.gprof(gpdl, "info", f).split("\n  rank", 1)[1].split()[0])
        bad = []

        def count(table, where=""):
            return engine.query(f"SELECT COUNT(*) FROM {table} WHERE rank = {rank} {where}")[1][0][0]
        events = sum(count(t) for t in rl.EVENT_TABLES)
        if events != info["events"]:
            bad.append(f"events {events}, info {info['events']}")
        by_type = {}
        for t in rl.EVENT_TABLES:
            for ty, n in engine.query(f"SELECT type, COUNT(*) FROM {t} WHERE rank = {rank} GROUP BY type")[1]:
                by_type[ty] = by_type.get(ty, 0) + n
        if by_type != info["by_type"]:
            bad.append(f"by type {by_type}, info {info['by_type']}")
        for t in ("threads", "processes", "counters"):
            if count(t) != info[t]:
                bad.append(f"{t} {count(t)}, info {info[t]}")
        (drops, dmg, reason), = engine.query(
            f"SELECT drops, damage_offset, damage_reason FROM ranks WHERE rank = {rank}")[1]
        if (drops or 0) != info["drops"] or dmg != info["damage"] or (dmg is None) != (not reason):
            bad.append(f"ranks: drops {drops}, damage {dmg} {reason!r}; info {info['drops']}, {info['damage']}")
        fail([f"{job} {engine.name} rank {rank}: {m}" for m in bad])


def check_damaged(drv, gpdl, files, tmp):
    """A truncated rank file: its ranks row says where, its tables hold what
    info read up to there."""
    src = files[0]
    cut = os.path.join(tmp, "cut-0.gpdl")
    with open(src, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[:len(data) * 2 // 3])
    info = rl.info_counts(gpdl, cut)
    if info["damage"] is None:
        fail([f"info of the truncated file does not say it is damaged: {info}"])
        return
    out = os.path.join(tmp, "cut.sqlite")
    rl.gprof(gpdl, "export", "--sqlite", cut, "-o", out)
    part = os.path.join(tmp, "cut-part")
    rl.gprof(gpdl, "export", "--csv", "--partitioned", cut, "-o", part)
    for e in (drv.SQLite(out), drv.DuckDB(part)):
        check_counts("damaged", gpdl, [cut], e)
        e.close()


def check_model(job, syn, res, rows, facts):
    """A synthetic job against its figures worked out from tracebuild.h
    (recipelib.model_job, its straggler by recipelib.verdict): the recipe on
    DuckDB (every engine equals it) and the view alike."""
    want, want_facts = rl.model_job(syn["ranks"], syn["steps"], syn["slow_rank"], syn["slow_ms"],
                                    syn["jitter"], syn["gpu"])
    bad = []

    def same(who, got, hand):
        """The recipe's double within 1e-9 of the exact figure; the view's
        ns its rounding (a tie either way)."""
        if got is None or hand is None:
            return got is None and hand is None
        return rl.real_eq(got, hand) if who == "recipe" else rl.ns_eq(hand, got)
    for who, got in (("recipe", {r["rank"]: r for r in res["rank_time"]["duckdb"]}), ("view", rows)):
        if sorted(got) != sorted(want):
            bad.append(f"{who}: ranks {sorted(got)}, by hand {sorted(want)}")
            continue
        for r, w in want.items():
            for k, v in w.items():
                if k == "steps" and got[r]["steps"] != v:
                    bad.append(f"{who} rank {r}: steps {got[r]['steps']}, by hand {v}")
                elif k.endswith("_ns") and not same(who, got[r][k], v):
                    bad.append(f"{who} rank {r}: {k} {got[r][k]}, by hand {v}")
    for who, got in (("recipe", res["straggler"]["duckdb"][0]), ("view", facts)):
        for k in rl.FACTS_EXACT:
            if got[k] != want_facts[k]:
                bad.append(f"{who} straggler {k}: {got[k]}, by hand {want_facts[k]}")
        for k in rl.FACTS_NS + rl.FACTS_REAL:
            if not (rl.real_eq(got[k], want_facts[k]) if k in rl.FACTS_REAL else same(who, got[k], want_facts[k])):
                bad.append(f"{who} straggler {k}: {got[k]!r}, by hand {want_facts[k]!r}")
    # and in words: the slow rank named, consistent, by computation, about
    # slow_ms of excess, holding the job back in every compared step
    s = res["straggler"]["duckdb"][0]
    if (s["straggler_rank"], s["straggler_cause"], s["straggler_kind"]) != (syn["slow_rank"], 0, 1):
        bad.append(f"straggler {s['straggler_rank']} cause {s['straggler_cause']} kind "
                   f"{s['straggler_kind']}, expected rank {syn['slow_rank']} by computation (0), "
                   "consistent (1)")
    if abs(s["busy_excess_ns"] / 1e6 - syn["slow_ms"]) > 0.1:
        bad.append(f"busy excess {s['busy_excess_ns'] / 1e6} ms, expected {syn['slow_ms']} +- 0.1 (jitter)")
    if s["straggler_steps_held"] != 20 or s["steps_compared"] != 20:
        bad.append(f"held {s['straggler_steps_held']} of {s['steps_compared']} steps, expected 20 of 20")
    if len([r for r in res["step_time"]["duckdb"] if r["counted"] == 1]) != syn["ranks"] * 20:
        bad.append("step_time: not 20 counted steps per rank")
    fail([f"{job} by hand: {m}" for m in bad])


def steps_verdict(step_rows):
    """recipelib.verdict() (verdict.c in Python) on step_time.sql's rows:
    the compared steps' busy time, parts, wait and the job's time for each."""
    by_rank = {}
    for r in step_rows:
        if r["counted"] == 1:
            by_rank.setdefault(r["rank"], {})[r["step"]] = r
    ranks = sorted(by_rank)
    if not ranks:
        return rl.verdict([], [], [], [])
    g0 = max(min(v) for v in by_rank.values())
    g1 = min(max(v) for v in by_rank.values())
    steps = list(range(g0, g1 + 1))
    busy = [[float(by_rank[r][g]["busy_ns"]) for g in steps] for r in ranks]
    part = [[[float(by_rank[r][g][k] or 0) for k in ("computation_ns", "data_loading_ns", "outside_ns",
                                                   "communication_ns", "contention_ns")]
             for g in steps] for r in ranks]
    wait = [[float(by_rank[r][g]["wait_ns"]) for g in steps] for r in ranks]
    runq = [[float(by_rank[r][g].get("runq_ns") or 0) for g in steps] for r in ranks]
    job_step, prev = [], None
    for g in steps:
        end = max(by_rank[r][g]["start_ns"] + by_rank[r][g]["dur_ns"] for r in ranks)
        start = min(by_rank[r][g]["start_ns"] for r in ranks)
        job_step.append(max(0, end - (start if prev is None else prev)))
        prev = end
    facts = rl.verdict(busy, part, wait, job_step, runq)
    for k in ("straggler_rank", "candidate_rank"):  # index -> rank
        facts[k] = ranks[facts[k]] if facts[k] >= 0 else -1
    facts["steps_compared"] = len(steps)
    return facts


def check_steps_verdict(job, res, facts):
    """The view's straggler against verdict() on each engine's step_time."""
    for ename, rows in res["step_time"].items():
        want = steps_verdict(rows)
        bad = []
        for k in rl.FACTS_EXACT:
            if want[k] != facts[k]:
                bad.append(f"{k}: by verdict() on step_time {want[k]}, view {facts[k]}")
        for k in rl.FACTS_NS:
            if not rl.ns_eq(want[k], facts[k]):
                bad.append(f"{k}: by verdict() on step_time {want[k]}, view {facts[k]}")
        for k in rl.FACTS_REAL:
            if not rl.real_eq(want[k], facts[k]):
                bad.append(f"{k}: by verdict() on step_time {want[k]!r}, view {facts[k]!r}")
        fail([f"{job} {ename}: {m}" for m in bad])


def verdict_jobs(drv, args, tmp):
    """gen-verdict-job's scenarios: the straggler rule's paths (none, none
    with the costs tied, intermittent, consistent with an outlier, each
    cause, busier within the noise, CPU contention taken out of the
    parts), on DuckDB and sqlite against the view, and the view against
    verdict() on the recipe's steps."""
    for sc, (steps, (rank, cause, kind, cand)) in VERDICT_JOBS.items():
        d = os.path.join(tmp, "v-" + sc)
        os.makedirs(d)
        p = subprocess.run([args.gen_verdict, sc, "8", str(steps), "7", sc, "2"],
                           capture_output=True, check=True, cwd=d)
        files = [shutil.copy(f, d) for f in p.stdout.decode().split()]
        out = os.path.join(d, "ex")
        os.makedirs(out)
        ex = {"csv": os.path.join(out, "part"), "sqlite": os.path.join(out, "job.sqlite")}
        rl.gprof(args.gprof_dl, "export", "--csv", "--partitioned", *files, "-o", ex["csv"])
        rl.gprof(args.gprof_dl, "export", "--sqlite", *files, "-o", ex["sqlite"])
        engines = [("duckdb", drv.DuckDB(ex["csv"])), ("sqlite", drv.SQLite(ex["sqlite"]))]
        res = {}
        t = time.monotonic()
        for name in ("rank_time", "straggler", "step_time"):
            res[name] = {}
            for ename, e in engines:
                try:
                    res[name][ename] = rl.as_dicts(*drv.run_recipe(e, rl.recipes()[name], {}))
                except drv.RecipeError as err:
                    fail([f"verdict {sc}: {err}"])
        for _, e in engines:
            e.close()
        log(f"verdict {sc}: 3 recipes on duckdb and sqlite, {time.monotonic() - t:.1f}s")
        job = f"verdict {sc}"
        check_aggregates(drv, args.gprof_dl, files, os.path.join(d, "agg"), job, gzip=False)
        check_engines_agree(job, res)
        _, facts = check_views(job, args.gprof_dl, files, res)
        check_steps_verdict(job, res, facts)
        got = (facts["straggler_rank"], facts["straggler_cause"], facts["straggler_kind"])
        if got != (rank, cause, kind) or (cand is not None and facts["candidate_rank"] != cand):
            fail([f"{job}: the view names rank {got[0]} cause {got[1]} kind {got[2]} (candidate "
                  f"{facts['candidate_rank']}), expected {rank} {cause} {kind} ({cand})"])


def check_old_export(drv, ex, tmp, res):
    """An export without steps.cpu_ns and runq_ns (a gprof-dl before trace
    format 2.1's sched group): run reads them as NULL, the rows the same."""
    import json
    import sqlite3
    old = os.path.join(tmp, "old-export")
    shutil.copytree(ex["csv"], os.path.join(old, "part"))
    path = os.path.join(old, "part", "_schema.json")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    tables = doc["tables"]
    cols = tables["steps"]["columns"] if isinstance(tables, dict) else \
        next(t for t in tables if t["name"] == "steps")["columns"]
    name = (lambda c: c["name"] if isinstance(c, dict) else c[0])
    keep = [i for i, c in enumerate(cols) if name(c) not in ("cpu_ns", "runq_ns")]
    if len(keep) != len(cols) - 2:
        fail([f"the steps table has not cpu_ns and runq_ns: {[name(c) for c in cols]}"])
        return
    cols[:] = [cols[i] for i in keep]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    for d, _, fs in os.walk(os.path.join(old, "part", "steps")):
        for fn in fs:
            with open(os.path.join(d, fn), newline="", encoding="utf-8") as f:
                rows = list(csv.reader(f))
            with open(os.path.join(d, fn), "w", newline="", encoding="utf-8") as f:
                csv.writer(f, lineterminator="\r\n").writerows([[r[i] for i in keep] for r in rows])
    db = os.path.join(old, "job.sqlite")
    shutil.copy(ex["sqlite"], db)
    with sqlite3.connect(db) as c:
        c.execute("ALTER TABLE steps DROP COLUMN cpu_ns")
        c.execute("ALTER TABLE steps DROP COLUMN runq_ns")
    for ename, e in (("duckdb", drv.DuckDB(os.path.join(old, "part"))), ("sqlite", drv.SQLite(db))):
        for name in ("rank_time", "straggler", "step_time"):
            got = rl.as_dicts(*drv.run_recipe(e, rl.recipes()[name], {}))
            fail(rl.diff_rows(f"{name} on {ename} of an export without cpu_ns, runq_ns",
                              res[name][ename], got))
        e.close()


def check_ddp(rows, facts):
    """The real job in words: rank 1 is the straggler by computation, rank 0
    waits about the slowdown."""
    bad = []
    if facts["straggler_rank"] != 1 or facts["straggler_cause"] != 0:
        bad.append(f"straggler {facts['straggler_rank']} cause {facts['straggler_cause']}")
    if not 0.5 * DDP_SLOW_MS <= rows[0]["wait_ns"] / 1e6 <= 1.6 * DDP_SLOW_MS:
        bad.append(f"rank 0 waits {rows[0]['wait_ns'] / 1e6:.2f} ms per step, expected near {DDP_SLOW_MS}")
    if rows[0]["steps"] != DDP_STEPS - 10:
        bad.append(f"rank 0: {rows[0]['steps']} counted steps")
    fail([f"ddp: {m}" for m in bad])


AGG_RECIPES = ("rank_time", "straggler", "step_time", "job_ips", "top_operators", "top_kernels",
               "collectives")


def close_to(got, want):
    """got equals want as the view prints it: within 1e-9 of it, or equal
    once rounded to the decimals it was printed with."""
    if got is None or want is None:
        return got is None and want is None
    got, want = float(got), float(want)
    if abs(got - want) <= 1e-9 * max(1.0, abs(want)):
        return True
    dec = len(repr(want).split(".")[1]) if "." in repr(want) and "e" not in repr(want) else 0
    return dec < 9 and round(got, dec) == round(want, dec)


def check_job_ips(job, gpdl, files, res):
    """job_ips.sql against the job's Perf Summary (summary --view perf)."""
    perf = rl.view(gpdl, files, "perf")["tables"]["perf"]
    facts = perf["sections"][0]["facts"]
    rows = {r["name"]: r for sec in perf["sections"] for r in sec["rows"]}
    by_samples = 1 if any("samples/s" in (sec.get("label") or "") for sec in perf["sections"]) else 0
    for ename, got in res.get("job_ips", {}).items():
        bad = []
        if len(got) != 1:
            fail([f"{job} job_ips on {ename}: {len(got)} rows"])
            continue
        g = got[0]
        if g["job_steps"] != facts["counted"] or g["by_samples"] != by_samples:
            bad.append(f"job steps {g['job_steps']} by_samples {g['by_samples']}, view "
                       f"{facts['counted']} {by_samples}")
        b = rows["batch_cost"]
        for k in ("avg", "max", "min"):
            # the view rounds to whole ns, half away from zero; Python's
            # round() goes half to even, so compare within half a ns
            if abs(float(g[f"batch_cost_{k}_ns"]) - b[f"{k}_ns"]) > 0.5:
                bad.append(f"batch_cost {k}: {g[f'batch_cost_{k}_ns']}, view {b[f'{k}_ns']}")
            if not close_to(g[f"ips_{k}"], rows["ips"][k]):
                bad.append(f"ips {k}: {g[f'ips_{k}']!r}, view {rows['ips'][k]!r}")
        fail([f"{job} job_ips on {ename}: {m}" for m in bad])


def du(path):
    """The bytes of a file, or of the files under a directory."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def exact_quantiles(events, table):
    """{name: (p50, p95)} by nearest rank over every row of an events
    export's table (kernels: each run's dur_ns; operators: the Operator
    rows'), for check_ops.check_quantiles(); the jobs where it is used have
    all their calls inside their rank's steps."""
    durs = {}
    for path in glob.glob(os.path.join(events, table, "*", "*.csv*")):
        opener = gzip_open if path.endswith(".gz") else open
        with opener(path, "rt", newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                if table == "operators" and r.get("type") != "Operator":
                    continue
                durs.setdefault(r["name"], []).append(int(r["dur_ns"]))
    out = {}
    for name, v in durs.items():
        v.sort()
        n = len(v)
        out[name] = (v[(n + 1) // 2 - 1], v[-(-19 * n // 20) - 1])
    return out


def check_agg_names(job, gpdl, files, res, events):
    """aggregates/top_operators.sql and top_kernels.sql against each rank's
    own views summed, collectives.sql (agg_views.sql's coll_calls) against
    the job's Collective Summary, and the quantiles against the calls' (events) on
    the synthetic jobs, whose calls all lie in their rank's steps (a real
    job's operators run outside them too, and redispatch into themselves)."""
    import check_ops
    views = check_ops.load_views(gpdl, files)
    for name, table in (("top_operators", "operators"), ("top_kernels", "kernels"),
                        ("collectives", None)):
        exact = (exact_quantiles(events, table)
                 if table and events and job.startswith("synthetic") else None)
        for ename, rows in res.get(name, {}).items():
            strs = [{k: ("" if v is None else str(v)) for k, v in r.items()} for r in rows]
            fail([f"{job} {name} on {ename}: {m}"
                  for m in check_ops.check(name, strs, views, None, aggregates=True, exact=exact)])


def check_aggregates(drv, gpdl, files, out, job, events=None, spark=(), gzip=True):
    """The Distributed view's recipes over the aggregate tables alone
    (`export --no-events`, `run --aggregates`: agg_views.sql in the place of
    the views that read events), on DuckDB (plain and gzip partitions),
    sqlite and Spark for the recipes named in spark (each Spark query plans
    for tens of seconds on 2 cores): every engine's rows equal DuckDB's, and
    the view's (check_views), and the view's straggler verdict() on
    step_time's; events: the export with the events, whose size is logged
    beside the aggregates'."""
    os.makedirs(out)
    part, gz, db = (os.path.join(out, n) for n in ("agg", "agg-gz", "agg.sqlite"))
    rl.gprof(gpdl, "export", "--csv", "--partitioned", "--no-events", *files, "-o", part)
    rl.gprof(gpdl, "export", "--sqlite", "--no-events", *files, "-o", db)
    engines = [("duckdb", drv.DuckDB(part)), ("sqlite", drv.SQLite(db))]
    # run --parquet: the tables with parts converted once, again only when
    # _schema.json is newer; DuckDB over them is one more engine to agree
    made = drv.to_parquet(part)
    want = sorted(t for t in os.listdir(part) if t.startswith("agg_") and drv.csv_has(part, t))
    if sorted(made) != want or not want:
        fail([f"{job} aggregates: to_parquet made {sorted(made)}, not the tables with parts {want}"])
    again = drv.to_parquet(part)
    if again:
        fail([f"{job} aggregates: to_parquet converted {sorted(again)} again, not stale"])
    for t in want:
        os.utime(drv.parquet_path(part, t), (1, 1))
    again = drv.to_parquet(part)
    if sorted(again) != want:
        fail([f"{job} aggregates: to_parquet converted {sorted(again)}, not the stale {want}"])
    engines.append(("duckdb-parquet", drv.DuckDB(part, parquet=True)))
    if gzip:
        rl.gprof(gpdl, "export", "--csv", "--partitioned", "--gzip", "--no-events", *files, "-o", gz)
        engines.append(("duckdb-gzip", drv.DuckDB(gz)))
    if spark:
        engines.append(("spark", drv.Spark(part, cache=True)))
    res = {}
    t = time.monotonic()
    for name in AGG_RECIPES:
        res[name] = {}
        for ename, e in engines:
            if ename == "spark" and name not in spark:
                continue
            try:
                res[name][ename] = rl.as_dicts(*drv.run_recipe(e, rl.recipes()[name], {},
                                                               aggregates=True))
            except drv.RecipeError as err:
                fail([f"{job} aggregates: {err}"])
    sizes = ""
    if events:
        sizes = f"; {du(part)} bytes of aggregates, {du(events)} with the events"
    log(f"{job} aggregates: {len(AGG_RECIPES)} recipes on {len(engines)} engines, "
        f"{time.monotonic() - t:.1f}s{sizes}")
    jname = f"{job} aggregates"
    check_engines_agree(jname, res)
    _, facts = check_views(jname, gpdl, files, res)
    check_steps_verdict(jname, res, facts)
    check_job_ips(jname, gpdl, files, res)
    check_agg_names(jname, gpdl, files, res, events)
    for ename, e in engines:
        if ename != "spark":
            e.close()
    return res, facts


# the recipes Spark runs on each job (None: all)
SPARK_RECIPES = {"synthetic": None, "synthetic-gpu": ("top_kernels", "top_operators"),
                 "ddp": ("top_operators", "collectives")}


def do_job(drv, args, tmp, job, files):
    ex = rl.exports(args.gprof_dl, files, os.path.join(tmp, job))
    log(f"{job}: exported")
    engines = Engines(drv, ex, SPARK_RECIPES.get(job))
    res = run_all(drv, engines, job)
    check_engines_agree(job, res)
    rows, facts = check_views(job, args.gprof_dl, files, res)
    check_steps_verdict(job, res, facts)
    check_job_ips(job, args.gprof_dl, files, res)
    check_ops_recipes(job, args.gprof_dl, files, res)
    # the params CTE: another skip, as --skip-steps
    vrows, vfacts = rl.dist_of(rl.view(args.gprof_dl, files, "distributed", "--skip-steps", "4"))
    for name, e in engines.open[:3:2]:  # duckdb, sqlite
        for recipe, check, want in (("rank_time", rl.check_rank_time, vrows),
                                    ("straggler", rl.check_straggler, vfacts)):
            got = rl.as_dicts(*drv.run_recipe(e, rl.recipes()[recipe], {"skip_steps": "4"}))
            fail([f"{job} {name} skip_steps 4: {m}" for m in check(got, want)])
    for name, e in engines.open:
        if name in ("duckdb", "sqlite"):
            check_counts(job, args.gprof_dl, files, e)
    engines.close()
    check_aggregates(drv, args.gprof_dl, files, os.path.join(tmp, job + "-agg"), job,
                     events=ex["csv"], spark=("rank_time",) if job == "synthetic" else ())
    return res, rows, facts


def aggregates_only(drv, args, tmp):
    """check_aggregates() alone, on the synthetic jobs, the verdict jobs and
    the real DDP job (with their events' export for the sizes)."""
    for job, spec, spark in (("synthetic", SYN, AGG_RECIPES), ("synthetic-gpu", SYN_GPU, ())):
        files = synthetic(args, tmp, job, spec)
        ev = os.path.join(tmp, job + "-events")
        rl.gprof(args.gprof_dl, "export", "--csv", "--partitioned", *files, "-o", ev)
        check_aggregates(drv, args.gprof_dl, files, os.path.join(tmp, job + "-agg"), job,
                         events=ev, spark=spark)
    if args.gen_verdict:
        for sc, (steps, _) in VERDICT_JOBS.items():
            d = os.path.join(tmp, "v-" + sc)
            os.makedirs(d)
            p = subprocess.run([args.gen_verdict, sc, "8", str(steps), "7", sc, "2"],
                               capture_output=True, check=True, cwd=d)
            files = [shutil.copy(f, d) for f in p.stdout.decode().split()]
            check_aggregates(drv, args.gprof_dl, files, os.path.join(d, "agg"), f"verdict {sc}",
                             gzip=False)
    if not args.no_real:
        ddp = ddp_job(args, tmp)
        if ddp:
            ev = os.path.join(tmp, "ddp-events")
            rl.gprof(args.gprof_dl, "export", "--csv", "--partitioned", *ddp, "-o", ev)
            check_aggregates(drv, args.gprof_dl, ddp, os.path.join(tmp, "ddp-agg"), "ddp",
                             events=ev)
    log(f"{len(FAILED)} failures")
    return 1 if FAILED else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--gen-verdict", default="")
    ap.add_argument("--venv", default="")
    ap.add_argument("--torch2", default="")
    ap.add_argument("--pydir", default="")
    ap.add_argument("--cache-dir", default="")
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--ddp-dir", default="",
                    help="the DDP job's rank files, as --record-ddp wrote them")
    ap.add_argument("--record-ddp", default="", metavar="DIR",
                    help="only record the DDP job into DIR (made anew), for --ddp-dir")
    ap.add_argument("--aggregates-only", action="store_true",
                    help="only the recipes over the aggregate tables (check_aggregates)")
    args = ap.parse_args()
    args.gprof_dl, args.gen = os.path.abspath(args.gprof_dl), os.path.abspath(args.gen)
    args.gen_verdict = os.path.abspath(args.gen_verdict) if args.gen_verdict else ""
    if args.record_ddp:
        shutil.rmtree(args.record_ddp, ignore_errors=True)
        if not args.torch2 or not os.path.exists(args.torch2):
            print(f"SKIP: no torch 2 interpreter (--torch2 '{args.torch2}')")
            return SKIP
        files = record_ddp(args, args.record_ddp)
        if files:
            log(f"ddp: recorded {' '.join(files)}")
        return 1 if FAILED else 0 if files else SKIP
    try:
        import duckdb  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as e:
        print(f"SKIP: {e} (tests/recipes/setup-venv)")
        return SKIP
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        print("SKIP: no Java runtime for Spark")
        return SKIP
    drv = rl.load_driver()
    spark_for_small_jobs(drv)
    log("spark: started")
    tmp = tempfile.mkdtemp(prefix="gpdl-recipes-")
    if args.aggregates_only:
        try:
            return aggregates_only(drv, args, tmp)
        finally:
            if not args.keep:
                shutil.rmtree(tmp, ignore_errors=True)
    try:
        files = synthetic(args, tmp, "syn", SYN)
        res, rows, facts = do_job(drv, args, tmp, "synthetic", files)
        check_model("synthetic", SYN, res, rows, facts)
        check_old_export(drv, rl.exports_of(tmp, "synthetic"), tmp, res)
        check_damaged(drv, args.gprof_dl, files, tmp)
        gfiles = synthetic(args, tmp, "gsyn", SYN_GPU)
        res, rows, facts = do_job(drv, args, tmp, "synthetic-gpu", gfiles)
        check_model("synthetic-gpu", SYN_GPU, res, rows, facts)
        if args.gen_verdict:
            verdict_jobs(drv, args, tmp)
        else:
            log("NOTE: no --gen-verdict: the straggler rule's scenarios are left out")
        if not args.no_real:
            ddp = ddp_job(args, tmp)
            if ddp:
                log("ddp: recorded")
                _, rows, facts = do_job(drv, args, tmp, "ddp", ddp)
                check_ddp(rows, facts)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    log(f"{len(FAILED)} failures")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
