#!/usr/bin/env python3
"""The SQL benchmark's smoke test: `bench/sql/run --quick` (4 ranks x 20 k
events, rank 3 slowed) measures every part and its figures hold together:
the job's event count, summary's straggler (rank 3, as generated), every
export measured with status 0 and its bytes on disk, gzip smaller than plain,
the sqlite file's row count at least the events, each recipe on each engine
run (a row per rank from rank_time, per step from step_time), the engines
agreeing and the straggler recipe finding rank 3, the estimate's storage equal to its
arithmetic; the aggregate tables' export and the recipes over them (run
--aggregates) run, and find rank 3. Nothing about time. Without the engines' Python, the recipes'
part is left out (and said); --engines picks them (default duckdb,sqlite:
Spark's start-up is 15 s a recipe).

    smoke_test.py --run bench/sql/run --build BUILD [--python PY] [--engines E]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--run", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--python")
    p.add_argument("--engines", default="duckdb,sqlite")
    a = p.parse_args()
    have_py = bool(a.python) and os.access(a.python, os.X_OK) and subprocess.run(
        [a.python, "-c", "import duckdb"], capture_output=True).returncode == 0
    engines = a.engines.split(",") if have_py else []
    if not have_py:
        print("no engines' Python with duckdb (%s): the recipes are left out" % a.python)
    bad = []

    def check(ok, what):
        if not ok:
            bad.append(what)
            print("FAIL: " + what)

    with tempfile.TemporaryDirectory(prefix="gpdl-bench-sql-smoke-") as tmp:
        out = os.path.join(tmp, "figures.json")
        argv = [sys.executable, a.run, "--quick", "--build", a.build, "--json", out,
                "--engines", ",".join(engines) or "duckdb"]
        if have_py:
            argv += ["--python", a.python]
        else:
            argv += ["--python", "/nonexistent"]
        r = subprocess.run(argv, capture_output=True, text=True)
        print(r.stdout[-6000:])
        print(r.stderr[-2000:], file=sys.stderr)
        check(r.returncode == 0, "bench/sql/run --quick exits 0 (got %d)" % r.returncode)
        if not os.path.exists(out):
            print("no JSON written")
            return 1
        with open(out) as f:
            doc = json.load(f)
        F = doc["figures"]
        check(doc["ranks"] == 4, "4 ranks (got %s)" % doc["ranks"])
        check(doc["events"] == 80000, "80000 events (got %s)" % doc["events"])
        check(F.get("summary", {}).get("straggler") == 3,
              "summary's straggler is rank 3 (got %s)" % F.get("summary", {}).get("straggler"))
        for key in ("summary", "summary_half", "rank", "rank_gz", "csv", "csv_gz", "sqlite"):
            check(key in F and F[key]["status"] == 0 and F[key]["seconds"] > 0 and F[key]["rss_mib"] > 0,
                  "%s measured, status 0, time and peak RSS > 0" % key)
        for key in ("rank", "rank_gz", "csv", "csv_gz", "sqlite"):
            check(F.get(key, {}).get("bytes_per_event", 0) > 0, "%s: bytes per event > 0" % key)
        if "csv" in F and "csv_gz" in F:
            check(F["csv_gz"]["bytes"] < F["csv"]["bytes"],
                  "gzip smaller than plain (%s vs %s)" % (F["csv_gz"]["bytes"], F["csv"]["bytes"]))
            # one rank of four: about a quarter of the job's bytes
            check(0.15 < F["rank"]["bytes"] / F["csv"]["bytes"] < 0.35,
                  "one rank's CSV is about a quarter of the job's (%s of %s)"
                  % (F["rank"]["bytes"], F["csv"]["bytes"]))
        if "sqlite" in F:
            check(F["sqlite"]["rows"] >= 80000, "sqlite rows >= events (got %s)" % F["sqlite"]["rows"])
        est = F.get("estimate", {})
        if "csv_gz" in F:
            want = F["csv_gz"]["bytes_per_event"] * 20000 * 4096
            check(abs(est.get("bytes_csv_gz", 0) - want) < 1, "the estimate's gzip storage is "
                  "bytes/event x events x 4096 (%s vs %s)" % (est.get("bytes_csv_gz"), want))
        recipes = sorted(os.path.basename(x)[:-4] for x in glob.glob(os.path.join(ROOT, "examples", "recipes", "*.sql"))
                         if os.path.basename(x) not in ("views.sql", "agg_views.sql"))
        for e in engines:
            labels = ("sqlite",) if e == "sqlite" else ("csv", "csv.gz")
            for name in recipes:
                for label in labels:
                    key = "recipe:%s:%s:%s" % (name, e, label)
                    check(key in F and F[key]["result_rows"] >= 0, "%s ran (status 0)" % key)
                    # the job has 4 ranks of 100 steps (bench-job's default)
                    want = {"rank_time": 4, "step_time": 400}.get(name)
                    if want is not None and key in F:
                        check(F[key]["result_rows"] == want, "%s: %d rows (got %d)"
                              % (key, want, F[key]["result_rows"]))
        check("DIFFER" not in r.stdout, "the engines' results agree, and their straggler is summary's")
        if "straggler" in recipes:
            for e in engines:
                label = "sqlite" if e == "sqlite" else "csv.gz"
                check("straggler on %s over %s: rank 3 (the same)" % (e, label) in r.stdout,
                      "the straggler recipe on %s finds rank 3" % e)
        # the aggregate tables' path (export --no-events, run --aggregates)
        for key in ("agg_rank", "agg_csv", "agg_sqlite"):
            check(key in F and F[key].get("status") == 0, "%s measured (status 0)" % key)
        for e in engines:
            labels = ["sqlite"] if e == "sqlite" else ["csv", "parquet"]
            for label in labels:
                for name in recipes:
                    key = "agg_recipe:%s:%s:%s" % (name, e, label)
                    check(key in F, "%s ran (status 0)" % key)
                check("straggler on %s over aggregates (%s): rank 3 (the same)" % (e, label) in r.stdout,
                      "the straggler recipe over the aggregates (%s) on %s finds rank 3" % (label, e))
        if engines:
            check(F.get("agg_parquet", {}).get("status") == 0 and F["agg_parquet"].get("bytes", 0) > 0,
                  "run --to-parquet measured, its files' bytes > 0")
            check("recipe %s --aggregates: the same result on" % "step_time" in r.stdout,
                  "step_time over the aggregates: the same result over every source")
        goals = r.stdout.partition("Issue 28's goals")[2].splitlines()[1:]
        goals = [g for g in goals if re.match(r"- .* (met|NOT MET|not measured)( \[.*\])?$", g)]
        check(len(goals) == 7, "issue 28's 7 goals printed, each with its verdict (got %d)" % len(goals))
        check(engines == [] or sum(1 for g in goals if " met" in g or "NOT MET" in g) >= 6,
              "the goals measured here have a verdict")
        share = F.get("agg_rank", {}).get("share_of_events")
        check(share is not None and 0 < share < 1,
              "one rank's aggregate tables, a share of its event tables' bytes (got %s)" % share)
        check(("Estimate for 4096 ranks" in r.stdout) and ("Where each is the better choice" in r.stdout),
              "the verdicts and the estimate are printed")
    print("%d check(s) failed" % len(bad) if bad else "all checks passed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
