"""test_spark_standalone.py - the recipes on a Spark cluster, not local[2]:
a standalone master and two workers (one core each) started here on
127.0.0.1, so that the tables are read and the queries run by executors
of their own; examples/recipes/run pointed at it by GPDL_SPARK_MASTER, as
a user points it at theirs. The synthetic 8-rank gloo job (gen-recipe-job)
exported with --no-events; rank_time.sql (and with --recipes
rank_time,straggler the straggler too: each Spark query plans for tens of
seconds on 2 cores, and CI's time is short) through `run --aggregates`,
equal to `summary --view distributed`.

    test_spark_standalone.py --gprof-dl BIN --gen GEN --venv DIR [--recipes A,B]

Exit status: 0 pass, 1 fail, 77 skip (no pyspark, no Java)."""
import argparse
import csv
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "pylib"))
import recipelib as rl  # noqa: E402
import test_recipes as tr  # noqa: E402

SKIP = 77


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rows_of(text):
    r = list(csv.reader(io.StringIO(text)))
    out = []
    for row in r[1:]:
        d = {}
        for k, v in zip(r[0], row):
            if v == "":
                d[k] = None
                continue
            try:
                d[k] = int(v)
            except ValueError:
                try:
                    d[k] = float(v)
                except ValueError:
                    d[k] = v
        out.append(d)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--venv", required=True)
    ap.add_argument("--recipes", default="rank_time")
    args = ap.parse_args()
    py = os.path.join(args.venv, "bin", "python")
    if not os.access(py, os.X_OK) or subprocess.run([py, "-c", "import pyspark"],
                                                    capture_output=True).returncode:
        print(f"SKIP: no pyspark in '{args.venv}' (tests/recipes/setup-venv)")
        return SKIP
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        print("SKIP: no Java runtime for Spark")
        return SKIP
    home = subprocess.run([py, "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    spark_class = os.path.join(home, "bin", "spark-class")
    tmp = tempfile.mkdtemp(prefix="gpdl-spark-standalone-")
    procs = []
    env = dict(os.environ, SPARK_HOME=home, SPARK_LOCAL_IP="127.0.0.1",
               SPARK_DAEMON_MEMORY="256m", SPARK_WORKER_DIR=os.path.join(tmp, "work"),
               SPARK_LOG_DIR=os.path.join(tmp, "logs"))
    failed = []
    try:
        port, ui = free_port(), free_port()
        master = f"spark://127.0.0.1:{port}"

        def start(name, argv):
            log = open(os.path.join(tmp, name + ".log"), "w")
            procs.append(subprocess.Popen([spark_class] + argv, stdout=log, stderr=log, env=env,
                                          start_new_session=True))

        start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", str(port), "--webui-port", str(ui)])
        for w in range(2):
            start(f"worker{w}", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                 "--cores", "1", "--memory", "1g",
                                 "--webui-port", str(free_port()), master])
        alive, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < 120:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as f:
                    alive = sum(1 for w in json.load(f).get("workers", []) if w.get("state") == "ALIVE")
            except OSError:
                pass
            if alive == 2:
                break
            time.sleep(1)
        if alive != 2:
            tails = ""
            for n in ("master", "worker0", "worker1"):
                with open(os.path.join(tmp, n + ".log")) as f:
                    tails += f"\n--- {n}\n" + f.read()[-1500:]
            print(f"FAIL: {alive} of 2 workers registered with {master} in 120 s{tails}")
            return 1
        print(f"[{time.monotonic() - t0:5.1f}s] {master}: 2 workers", flush=True)
        targs = argparse.Namespace(gen=args.gen)
        files = tr.synthetic(targs, tmp, "syn", tr.SYN)
        part = os.path.join(tmp, "agg")
        rl.gprof(args.gprof_dl, "export", "--csv", "--partitioned", "--no-events", *files, "-o", part)
        rows, facts = rl.dist_of(rl.view(args.gprof_dl, files, "distributed"))
        # tuned for an export of a few hundred KB, as test_recipes.py's
        # spark_for_small_jobs(): planning, not data, is the time
        renv = dict(os.environ, GPDL_SPARK_MASTER=master, SPARK_LOCAL_IP="127.0.0.1",
                    PYSPARK_SUBMIT_ARGS="--conf spark.sql.adaptive.enabled=false "
                    "--conf spark.sql.codegen.wholeStage=false pyspark-shell")
        checks = {"rank_time": (rl.check_rank_time, rows), "straggler": (rl.check_straggler, facts)}
        for name in args.recipes.split(","):
            check, want = checks[name]
            t = time.monotonic()
            p = subprocess.run([py, os.path.join(rl.SRC, "examples", "recipes", "run"), "--engine",
                                "spark", "--aggregates",
                                os.path.join(rl.SRC, "examples", "recipes", name + ".sql"), part],
                               capture_output=True, text=True, env=renv, timeout=600)
            if p.returncode != 0:
                failed.append(f"{name} on {master}: status {p.returncode}: {p.stderr[-2000:]}")
                continue
            bad = check(rows_of(p.stdout), want)
            failed += [f"{name} on {master}: {m}" for m in bad]
            print(f"{name} on {master}: {time.monotonic() - t:.1f}s, "
                  f"{'equal to summary' if not bad else 'DIFFERS'}", flush=True)
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    for m in failed:
        print("FAIL:", m)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
