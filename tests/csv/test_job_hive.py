#!/usr/bin/env python3
"""`export --csv` of a job names every part's folder with one hive key:
rank=R for a rank, rank=-1 for its launcher (a part of no rank), as the
partitioned export does, so that DuckDB's hive_partitioning reads them all
(a pid=N folder beside rank=R ones made it fail: "Hive partition
mismatch"). The job: gen-recipe-job's two ranks and their launcher in one
file, and a third rank's file. The DuckDB part runs with this interpreter's duckdb or a --venv's,
and is skipped, said so, without one.

    test_job_hive.py --gprof-dl BIN --gen-job BIN [--venv DIR]..."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

DUCK = """
import duckdb, json, sys
q = "select rank, count(*) from read_csv(?, hive_partitioning=true) group by rank order by rank"
print(json.dumps(duckdb.sql(q.replace("?", repr(sys.argv[1]))).fetchall()))
"""


def run(*cmd):
    p = subprocess.run(list(cmd), capture_output=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: status {p.returncode}\n{p.stderr.decode(errors='replace')}")
    return p.stdout.decode()


def duck_python(venvs):
    for py in [sys.executable] + [os.path.join(v, "bin", "python") for v in venvs]:
        if os.path.exists(py) and subprocess.run([py, "-c", "import duckdb"],
                                                 capture_output=True).returncode == 0:
            return py
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--gen-job", required=True)
    ap.add_argument("--venv", action="append", default=[])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpdl-hive-") as tmp:
        # ranks 0 and 1 with their launcher in one file, and rank 2 of
        # another job's files (--mixed-jobs: their world sizes differ)
        merged = run(a.gen_job, "hive", "2", "4", "0", "-1", "0", "0", "1", "merged").split()
        three = run(a.gen_job, "hive3", "3", "4", "0", "-1", "0", "0", "1").split()
        if len(merged) != 1 or len(three) != 3:
            sys.exit(f"FAIL: gen-recipe-job: {merged} {three}")
        traces = [shutil.copy(merged[0], tmp), shutil.copy(three[2], tmp)]
        for f in (merged[0], three[0]):
            shutil.rmtree(os.path.dirname(f), ignore_errors=True)
        out = os.path.join(tmp, "job-csv")
        run(a.gprof_dl, "export", "--csv", *traces, "-o", out, "--no-summary", "--mixed-jobs")
        names = sorted(os.listdir(out))
        if names != ["rank=-1", "rank=0", "rank=1", "rank=2"]:
            print(f"FAIL: the job's CSV folders are {names}, not rank=-1, rank=0, rank=1, rank=2")
            return 1
        py = duck_python(a.venv)
        if not py:
            print("PASS (folder names); SKIP of the DuckDB read: no duckdb here nor in "
                  f"{a.venv} (tests/recipes/setup-venv makes one)")
            return 0
        p = subprocess.run([py, "-c", DUCK, os.path.join(out, "*", "threads.csv")],
                           capture_output=True)
        if p.returncode != 0:
            print(f"FAIL: DuckDB's hive_partitioning read: {p.stderr.decode(errors='replace')[-800:]}")
            return 1
        ranks = [r for r, _ in __import__("json").loads(p.stdout)]
        if ranks != [-1, 0, 1, 2]:
            print(f"FAIL: DuckDB read the ranks {ranks}, not [-1, 0, 1, 2]")
            return 1
    print("PASS: one hive key in every folder; DuckDB reads ranks -1, 0, 1, 2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
