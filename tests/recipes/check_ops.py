#!/usr/bin/env python3
"""check_ops - checks what the recipes examples/recipes/top_operators.sql,
top_kernels.sql and collectives.sql print against gprof-dl's own views of the
same traces, `gprof-dl summary --format json --time-unit ns`: counts and
whole-ns figures equal, real figures (averages, medians, means, bandwidths)
to a relative 1e-9 of the view's unrounded values.

    import check_ops
    views = check_ops.load_views(GPROF_DL, FILES)
    failures = check_ops.check("top_operators", rows, views)   # [] = pass

check(recipe, rows, views, tol=None):
  recipe  "top_operators", "top_kernels" or "collectives" (a path or a name
          ending in .sql is taken by its base name);
  rows    the recipe's output as examples/recipes/run prints it, read back
          with csv.DictReader: a list of {column: text}, "" for NULL;
  views   {"job": J, "ranks": {rank: R}}:
          J  the parsed JSON of `gprof-dl summary FILES... --format json
             --view operator --view kernel --view distributed` over all the
             job's traces (only the views the recipe needs must be there:
             "operator", "kernel", or "collectives", the Distributed view's
             second table; a job of fewer than 2 ranks has no collectives);
          R  the parsed JSON of `gprof-dl summary FILE --format json --view
             operator --view kernel` of rank R's trace alone, for the spread
             columns (ranks, rank_min_ns, rank_median_ns, rank_max_ns,
             max_rank); without "ranks" (or None) the spread is not checked;
  tol     the largest difference in ns allowed for a real time (an average,
          a median, a mean) where the summary's JSON was not in ns and gives
          it rounded to whole ns (None: 0.5); in ns (load_views) the real
          figures are compared with its unrounded values to a relative 1e-9,
          as are bandwidths; integers must be equal.
  Returns a list of one-line failures, empty when every row of the view is
  in the recipe's output (all of them, or, when the recipe printed its top
  N, every row longer than its shortest) with every figure equal, and the
  recipe printed no row the view does not have.

  collectives: the rows with an empty rank are the Collective Summary's rows
  (matched by collective, backend, group size); the rows of one rank each
  must add up to them: their mean total_ns and wait_ns are the row's Total
  and Wait per Rank, their total / their calls the row's Mean, and their
  bytes the row's Bytes per Call x their calls (within a byte a call: bytes
  per call are rounded down); each has whole-ns total_ns and wait_ns,
  mean_ns = total_ns / calls, and bandwidth_gbps = its buffers / total_ns.

load_views(gprof_dl, files, rank_files=None): runs those summaries (with
--time-unit ns) and returns views; rank_files {rank: path} defaults to each
file whose header names a rank (the "rank" of its entry in the job's
"traces"), and a rank whose trace holds other ranks too is left out.

As a command (exit 0 pass, 1 failures, 2 usage):
    check_ops.py --gprof-dl BIN --rows OUT.csv RECIPE TRACE...
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys

RECIPES = ("top_operators", "top_kernels", "collectives")
REL = 1e-9


def recipe_name(recipe):
    base = os.path.basename(recipe)
    return base[:-4] if base.endswith(".sql") else base


def num(text):
    """A printed number: int where it is one, else float; None for ""."""
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return float(text)


def table_rows(doc, key):
    """The depth-0 rows of table `key` of a summary JSON, or None."""
    t = (doc or {}).get("tables", {}).get(key)
    if t is None:
        return None
    return [r for s in t.get("sections", []) for r in s.get("rows", [])
            if r.get("depth", 0) == 0]


class Checker:
    def __init__(self, tol):
        self.tol = tol
        self.fails = []

    def fail(self, msg):
        self.fails.append(msg)

    def int_eq(self, where, col, got, want):
        g = num(got) if isinstance(got, str) else got
        if want is None:
            if g is not None:
                self.fail(f"{where}: {col} {got!r}, the view has none")
            return
        if g is None or not float(g).is_integer() or int(g) != int(want):
            self.fail(f"{where}: {col} {got!r}, the view {want}")

    def real_eq(self, where, col, got, want, rel=False, exact=None):
        """A real figure: against the view's unrounded value `exact` where
        the summary was in ns (to a relative 1e-9), else against `want`
        (its *_ns, rounded to whole ns) to within tol; rel: `want` is a
        ratio such as a bandwidth, compared to a relative 1e-9."""
        g = num(got) if isinstance(got, str) else got
        if exact is not None:
            want, rel = exact, True
        if want is None:
            if g is not None:
                self.fail(f"{where}: {col} {got!r}, the view has none")
            return
        lim = max(abs(want) * REL, 1e-6) if rel else self.tol
        if g is None or not math.isfinite(float(g)) or abs(float(g) - float(want)) > lim:
            self.fail(f"{where}: {col} {got!r}, the view {want}")


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def check_top(c, rows, vrows, key_total, cols, what, ns):
    """Rows by name against the view's rows (key_total: its total's key)."""
    view = {r["name"]: r for r in vrows}
    seen = set()
    last = None
    for i, r in enumerate(rows):
        name = r.get("name")
        where = f"{what} row {i + 1} '{name}'"
        if name in seen:
            c.fail(f"{where}: printed twice")
            continue
        seen.add(name)
        v = view.get(name)
        if v is None:
            c.fail(f"{where}: not in the view")
            continue
        for col, vkey, real in cols:
            if real:
                c.real_eq(where, col, r.get(col), v.get(vkey),
                          exact=v.get(vkey[:-3]) if ns else None)
            else:
                c.int_eq(where, col, r.get(col), v.get(vkey))
        total = num(r.get("total_ns"))
        if last is not None and total is not None and total > last:
            c.fail(f"{where}: total_ns {total} after {last}: not longest first")
        last = total if total is not None else last
    if not rows:
        shortest = None
    else:
        totals = [num(r.get("total_ns")) for r in rows if num(r.get("total_ns")) is not None]
        shortest = min(totals) if totals else None
    for v in vrows:
        if v["name"] in seen:
            continue
        if not rows or len(rows) >= len(vrows) or (shortest is not None and v[key_total] > shortest):
            c.fail(f"{what}: the view's row '{v['name']}' ({v[key_total]} ns) is not printed")


def check_spread(c, rows, rank_views, table, key_total, what):
    """The spread columns against each rank's own view."""
    per = {}
    for rank, doc in rank_views.items():
        vr = table_rows(doc, table)
        if vr is None:
            c.fail(f"{what}: rank {rank}'s summary has no '{table}' table")
            continue
        for v in vr:
            per.setdefault(v["name"], {})[int(rank)] = v[key_total]
    for i, r in enumerate(rows):
        name = r.get("name")
        where = f"{what} row {i + 1} '{name}'"
        got = per.get(name, {})
        if not got:
            for col in ("ranks", "rank_min_ns", "rank_median_ns", "rank_max_ns", "max_rank"):
                if num(r.get(col)) not in (None, 0):
                    c.fail(f"{where}: {col} {r.get(col)!r}, no rank's view has the name")
            continue
        vals = list(got.values())
        top = max(vals)
        c.int_eq(where, "ranks", r.get("ranks"), len(vals))
        c.int_eq(where, "rank_min_ns", r.get("rank_min_ns"), min(vals))
        c.real_eq(where, "rank_median_ns", r.get("rank_median_ns"), None, exact=median(vals))
        c.int_eq(where, "rank_max_ns", r.get("rank_max_ns"), top)
        c.int_eq(where, "max_rank", r.get("max_rank"), min(k for k, v in got.items() if v == top))


OP_COLS = [("calls", "calls", False), ("total_ns", "cpu_total_ns", False),
           ("avg_ns", "cpu_avg_ns", True), ("max_ns", "cpu_max_ns", False),
           ("min_ns", "cpu_min_ns", False), ("gpu_total_ns", "gpu_total_ns", False),
           ("gpu_avg_ns", "gpu_avg_ns", True), ("gpu_max_ns", "gpu_max_ns", False),
           ("gpu_min_ns", "gpu_min_ns", False)]
KERNEL_COLS = [("calls", "calls", False), ("total_ns", "gpu_total_ns", False),
               ("avg_ns", "gpu_avg_ns", True), ("max_ns", "gpu_max_ns", False),
               ("min_ns", "gpu_min_ns", False)]


def check_rank_row(c, where, p, op, group):
    """One rank's row of a collective: whole ns, its mean and bandwidth
    from its own figures (its bytes within one byte a call: the bytes per
    call are rounded down)."""
    calls, total = num(p.get("calls")), num(p.get("total_ns"))
    if not calls or total is None:
        c.fail(f"{where}: calls {p.get('calls')!r}, total_ns {p.get('total_ns')!r}")
        return
    for col in ("total_ns", "wait_ns"):
        x = num(p.get(col))
        if x is None or not float(x).is_integer():
            c.fail(f"{where}: {col} {p.get(col)!r} is not a whole number of ns")
    c.real_eq(where, "mean_ns", p.get("mean_ns"), None, exact=total / calls)
    bpc = num(p.get("bytes_per_call"))
    bw = num(p.get("bandwidth_gbps"))
    if not bpc or not total:
        if bw is not None:
            c.fail(f"{where}: bandwidth_gbps {bw} without bytes or time")
        return
    norm = "".join(ch for ch in op.lower() if ch.isalnum())
    f = (group or 1) if "allgather" in norm else 1
    lo, hi = bpc * calls * f, (bpc + 1) * calls * f
    if bw is None or not (lo / total - 1e-12 <= bw < hi / total):
        c.fail(f"{where}: bandwidth_gbps {p.get('bandwidth_gbps')!r}, its bytes / its time "
               f"{lo / total}")


def check_collectives(c, rows, vrows, ns):
    def key(r):
        return (r.get("collective"), (r.get("backend") or ""), num(r.get("group_size")))
    view = {(v["collective"], v["backend"] or "", v["group_size"]): v for v in vrows}
    job = [r for r in rows if num(r.get("rank")) is None]
    ranks = {}
    for r in rows:
        if num(r.get("rank")) is not None:
            ranks.setdefault(key(r), []).append(r)
    seen = set()
    last = None
    for i, r in enumerate(job):
        k = key(r)
        where = f"collectives row '{k[0]}' {k[1]} {k[2]}"
        if k in seen:
            c.fail(f"{where}: printed twice")
            continue
        seen.add(k)
        v = view.get(k)
        if v is None:
            c.fail(f"{where}: not in the view")
            continue
        c.int_eq(where, "calls", r.get("calls"), v["calls"])
        c.int_eq(where, "bytes_per_call", r.get("bytes_per_call"), v.get("bytes_per_call"))
        def ex(k):
            return v.get(k) if ns else None
        c.real_eq(where, "total_ns", r.get("total_ns"), v["total_per_rank_ns"], exact=ex("total_per_rank"))
        c.real_eq(where, "mean_ns", r.get("mean_ns"), v["mean_ns"], exact=ex("mean"))
        c.real_eq(where, "wait_ns", r.get("wait_ns"), v["wait_per_rank_ns"], exact=ex("wait_per_rank"))
        c.real_eq(where, "algbw", r.get("algbw"), v.get("algbw"), rel=True)
        c.real_eq(where, "busbw", r.get("busbw"), v.get("busbw"), rel=True)
        total = num(r.get("total_ns"))
        if last is not None and total is not None and total > last + c.tol:
            c.fail(f"{where}: total_ns {total} after {last}: not longest first")
        last = total if total is not None else last
        per = ranks.get(k, [])
        if not per:
            c.fail(f"{where}: no row of a rank")
            continue
        n = len(per)
        for p in per:
            check_rank_row(c, f"{where} rank {p.get('rank')}", p, k[0], k[2])
        calls = sum(num(p.get("calls")) or 0 for p in per)
        dur = sum(num(p.get("total_ns")) or 0 for p in per)
        byts = sum((num(p.get("bytes_per_call")) or 0) * (num(p.get("calls")) or 0) for p in per)
        c.real_eq(where + " (its ranks' mean)", "total_ns", dur / n, v["total_per_rank_ns"],
                  exact=ex("total_per_rank"))
        c.real_eq(where + " (its ranks' mean)", "wait_ns",
                  sum(num(p.get("wait_ns")) or 0 for p in per) / n, v["wait_per_rank_ns"],
                  exact=ex("wait_per_rank"))
        if calls:
            c.real_eq(where + " (its ranks' calls)", "mean_ns", dur / calls, v["mean_ns"],
                      exact=ex("mean"))
        if v.get("bytes_per_call") is not None and calls:
            # each rank's bytes per call is rounded down: allow one byte a call
            if abs(byts / calls - v["bytes_per_call"]) > 1:
                c.fail(f"{where}: its ranks' bytes / calls {byts / calls}, "
                       f"the view {v['bytes_per_call']}")
    for k in ranks:
        if k not in seen:
            c.fail(f"collectives: rows of ranks for '{k[0]}' {k[1]} {k[2]} without its row")
    for k, v in view.items():
        if k not in seen:
            c.fail(f"collectives: the view's row '{k[0]}' {k[1]} {k[2]} is not printed")


def summed_view(rank_views, table):
    """The rows each rank's own view gives, summed by name as the aggregate
    recipes (examples/recipes/aggregates/) sum them: calls and totals added,
    min and max over the ranks, averages the sums over the calls (in the
    view's keys, *_ns and unrounded)."""
    by = {}
    for doc in rank_views.values():
        for v in table_rows(doc, table) or []:
            s = by.setdefault(v["name"], {"name": v["name"], "calls": 0})
            s["calls"] += v["calls"]
            for k in ("cpu", "gpu", "self"):
                if v.get(f"{k}_total_ns") is None:
                    continue
                s[f"{k}_total_ns"] = s.get(f"{k}_total_ns", 0) + v[f"{k}_total_ns"]
                for m, f in (("max", max), ("min", min)):
                    if v.get(f"{k}_{m}_ns") is not None:
                        old = s.get(f"{k}_{m}_ns")
                        s[f"{k}_{m}_ns"] = v[f"{k}_{m}_ns"] if old is None else f(old, v[f"{k}_{m}_ns"])
    for s in by.values():
        for k in ("cpu", "gpu"):
            if s.get(f"{k}_total_ns") is not None and s["calls"]:
                s[f"{k}_avg"] = s[f"{k}_total_ns"] / s["calls"]
                s[f"{k}_avg_ns"] = round(s[f"{k}_avg"])
    total = "cpu_total_ns" if table == "operator" else "gpu_total_ns"
    return sorted(by.values(), key=lambda r: (-r.get(total, 0), r["name"]))


def check_quantiles(c, rows, what, exact=None):
    """p50_ns and p95_ns of an aggregate recipe: min_ns <= p50 <= p95 <=
    max_ns; with exact {name: (p50, p95)} (nearest rank over the calls),
    each is the true value or at most 1/8 above it (a bucket's width)."""
    for i, r in enumerate(rows):
        where = f"{what} row {i + 1} '{r.get('name')}'"
        lo, hi = num(r.get("min_ns")), num(r.get("max_ns"))
        p50, p95 = num(r.get("p50_ns")), num(r.get("p95_ns"))
        if None in (lo, hi, p50, p95) or not lo <= p50 <= p95 <= hi:
            c.fail(f"{where}: min {lo}, p50 {p50}, p95 {p95}, max {hi}: not in order")
            continue
        if exact and r.get("name") in exact:
            for col, got, want in (("p50_ns", p50, exact[r["name"]][0]),
                                   ("p95_ns", p95, exact[r["name"]][1])):
                if not want <= got <= want + want / 8 + 1:
                    c.fail(f"{where}: {col} {got}, the calls' {want} (at most 1/8 above)")


def check(recipe, rows, views, tol=None, aggregates=False, exact=None):
    """The failures of the recipe's rows against the views (see the top);
    aggregates: the rows of examples/recipes/aggregates/'s version, against
    the ranks' own views summed (summed_view()), with Self and the
    quantiles (check_quantiles(), exact {name: (p50, p95)} where known)."""
    name = recipe_name(recipe)
    c = Checker(0.5 if tol is None else tol)
    job = (views or {}).get("job")
    rank_views = (views or {}).get("ranks")
    if name not in RECIPES:
        return [f"check_ops: no check for recipe '{recipe}'"]
    ns = (job or {}).get("time_unit") == "ns"
    if aggregates and name != "collectives":
        table, cols, total = (("operator", OP_COLS + [("self_ns", "self_total_ns", False)],
                               "cpu_total_ns") if name == "top_operators"
                              else ("kernel", KERNEL_COLS, "gpu_total_ns"))
        check_top(c, rows, summed_view(rank_views or {}, table), total, cols, name, True)
        check_spread(c, rows, rank_views or {}, table, total, name)
        check_quantiles(c, rows, name, exact)
        return c.fails
    if name == "collectives":
        vrows = table_rows(job, "collectives")
        if vrows is None:
            return ["collectives: the job's summary has no 'collectives' table"]
        check_collectives(c, rows, vrows, ns)
        return c.fails
    table, cols, total = (("operator", OP_COLS, "cpu_total_ns") if name == "top_operators"
                          else ("kernel", KERNEL_COLS, "gpu_total_ns"))
    vrows = table_rows(job, table)
    if vrows is None:
        return [f"{name}: the job's summary has no '{table}' table"]
    check_top(c, rows, vrows, total, cols, name, ns)
    if rank_views is not None:
        check_spread(c, rows, rank_views, table, total, name)
    return c.fails


def summary_json(gprof_dl, files, views):
    cmd = [gprof_dl, "summary", *files, "--format", "json", "--time-unit", "ns"]
    for v in views:
        cmd += ["--view", v]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def load_views(gprof_dl, files, rank_files=None):
    """views for check(): the job's summary and each rank's alone."""
    files = list(files)
    job = summary_json(gprof_dl, files, ["operator", "kernel"])
    traces = job.get("traces", [])
    nranks = len({t["rank"] for t in traces if isinstance(t.get("rank"), int) and t["rank"] >= 0})
    if nranks >= 2 or "job" in job:
        dist = summary_json(gprof_dl, files, ["distributed"])
        job["tables"].update(dist.get("tables", {}))
    if rank_files is None:
        rank_files = {}
        for t, path in zip(traces, files):
            r = t.get("rank")
            if r is not None and r >= 0:
                rank_files[r] = path
    ranks = {r: summary_json(gprof_dl, [p], ["operator", "kernel"])
             for r, p in sorted(rank_files.items())}
    return {"job": job, "ranks": ranks}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="check_ops", description=__doc__.split("\n")[0])
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--rows", required=True, help="the recipe's CSV output")
    ap.add_argument("--tol", type=float, default=0.5)
    ap.add_argument("recipe")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args(argv)
    with open(a.rows, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    fails = check(a.recipe, rows, load_views(a.gprof_dl, a.traces), a.tol)
    for m in fails:
        print(f"check_ops: {m}", file=sys.stderr)
    print(f"check_ops: {recipe_name(a.recipe)}: {len(rows)} rows, {len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
