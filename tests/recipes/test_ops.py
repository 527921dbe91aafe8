#!/usr/bin/env python3
"""test_ops - the operator, kernel and collective recipes on the job of their
corner cases (gen-ops-job, see gen_ops_job.c: folded calls, operators half in
the window, a rank without steps, kernels launched outside the window or with
no call, a mismatched collective, one matched by order, point-to-point), on
DuckDB over `export --csv --partitioned` and on sqlite over `export --sqlite`:

  - every figure equals gprof-dl's own views (check_ops.check());
  - the figures worked out by hand from gen_ops_job.c are there;
  - check_ops finds a figure one off, so that the first check means something.

    test_ops.py --gprof-dl BIN --gen GEN_OPS_JOB [--venv DIR]

Runs itself again under DIR/bin/python when this Python has no duckdb; exit
77 (skip) when neither has it, 1 on a failure."""
import argparse
import copy
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RECIPES = os.path.join(ROOT, "examples", "recipes")
SKIP = 77
sys.path.insert(0, HERE)

# (recipe, key columns and values, column, value), from gen_ops_job.c: 3
# ranks x 14 steps; ranks 0 and 1 count 7 steps for the collectives (never
# more than half skipped), rank 2, without steps, all 14.
HAND = [
    ("top_operators", {"name": "div_"}, "calls", 42),        # inner div_ folded
    ("top_operators", {"name": "div_"}, "total_ns", 42 * 18_000_000),
    ("top_operators", {"name": "copy_"}, "calls", 84),       # two children: not folded
    ("top_operators", {"name": "copy_"}, "gpu_total_ns", 84 * 2_000_000),
    ("top_operators", {"name": "noop"}, "calls", 42),        # the one in the gap is out
    ("top_operators", {"name": "gap_op"}, "total_ns", 42 * 5_000_000),
    ("top_operators", {"name": "gap_op"}, "rank_max_ns", 14 * 10_000_000),  # rank 2: whole run
    ("top_operators", {"name": "gap_op"}, "max_rank", 2),
    ("top_operators", {"name": "gap_op"}, "gpu_total_ns", 42 * 3_000_000),
    ("top_kernels", {"name": "orphan"}, "calls", 42),        # the one in the gap is out
    ("top_kernels", {"name": "gemm"}, "calls", 4 * 42),      # incl. the one past the step
    ("collectives", {"collective": "all_reduce", "rank": ""}, "calls", 14),
    ("collectives", {"collective": "all_reduce", "rank": "2"}, "calls", 13),
    ("collectives", {"collective": "broadcast", "rank": ""}, "calls", 0),   # the mismatch
    ("collectives", {"collective": "broadcast", "rank": ""}, "wait_ns", 0),
    ("collectives", {"collective": "all_gather", "rank": ""}, "calls", 7),  # by order
    ("collectives", {"collective": "send", "rank": ""}, "calls", 7),
    ("collectives", {"collective": "recv", "rank": ""}, "calls", 0),        # rank 0's send has it
]
NOT_THERE = [("top_operators", "init"), ("top_operators", "inner"), ("top_kernels", "late_kernel")]

FAILED = []


def fail(msg):
    print("FAIL:", msg, flush=True)
    FAILED.append(msg)


def load_driver():
    from importlib.machinery import SourceFileLoader
    from importlib.util import module_from_spec, spec_from_loader
    loader = SourceFileLoader("recipes_run", os.path.join(RECIPES, "run"))
    mod = module_from_spec(spec_from_loader("recipes_run", loader))
    loader.exec_module(mod)
    return mod


def as_text(cols, rows):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    return list(csv.DictReader(io.StringIO(out.getvalue())))


def make_job(gpdl, gen, tmp, name, gpu):
    p = subprocess.run([gen, name, gpu], capture_output=True, check=True)
    files = []
    for f in p.stdout.decode().split():
        files.append(shutil.copy(f, tmp))
        os.unlink(f)
    os.rmdir(os.path.dirname(p.stdout.decode().split()[0]))
    out = {"csv": os.path.join(tmp, name + "-part"), "sqlite": os.path.join(tmp, name + ".sqlite")}
    for args in (["--csv", "--partitioned", *files, "-o", out["csv"]],
                 ["--sqlite", *files, "-o", out["sqlite"]]):
        subprocess.run([gpdl, "export", *args], check=True, capture_output=True)
    return files, out


def num(v):
    return None if v == "" else float(v)


def check_hand(label, recipe, rows):
    for rec, keys, col, want in HAND:
        if rec != recipe:
            continue
        got = [r for r in rows if all(r.get(k) == v for k, v in keys.items())]
        if len(got) != 1:
            fail(f"{label}: {len(got)} rows with {keys}")
        elif num(got[0][col]) != want:
            fail(f"{label}: {keys} {col} {got[0][col]!r}, worked out by hand {want}")
    for rec, name in NOT_THERE:
        if rec == recipe and any(r.get("name") == name for r in rows):
            fail(f"{label}: a row '{name}', which never counts")


def check_mutant(label, recipe, rows, views, check_ops):
    """One figure one off must fail: the check is not vacuous."""
    cols = [c for c in rows[0] if c not in ("name", "collective", "backend", "rank")]
    for col in cols:
        for i, r in enumerate(rows):
            if r[col] == "":
                continue
            m = copy.deepcopy(rows)
            m[i][col] = str(float(r[col]) + 1)
            if not check_ops.check(recipe, m, views):
                fail(f"{label}: check_ops misses {col} of row {i + 1} one off")
            break


def check_views(drv, label, e):
    """views.sql as temporary views, then each recipe as it is (what a user
    of the sqlite3 CLI or spark-sql does), gives the driver's rows; the
    driver's params reach the shared views; views.sql is no recipe."""
    names = sorted(f[:-4] for f in os.listdir(RECIPES)
                   if f.endswith(".sql") and f not in ("views.sql", "agg_views.sql"))
    params = {"skip_steps": "2", "top_n": "0"}
    drv.make_views(e, params)
    for recipe in names:
        path = os.path.join(RECIPES, recipe + ".sql")
        by_hand = e.query(drv.recipe_text(path, {}))
        got = drv.run_recipe(e, path, params)
        if by_hand != got:
            fail(f"{label}: {recipe}: views.sql then the recipe: {len(by_hand[1])} rows, "
                 f"the driver {len(got[1])}, or other values")
    if len(names) != 7:
        fail(f"{label}: {len(names)} recipes beside views.sql, 7 expected")
    counted = {}
    for skip in ("0", "2"):
        cols, rows = drv.run_recipe(e, os.path.join(RECIPES, "step_time.sql"), {"skip_steps": skip})
        counted[skip] = sum(1 for r in rows if r[cols.index("counted")] == 1)
    steps = len(rows)
    if counted["0"] != steps or counted["2"] != steps - 2 * len({r[0] for r in rows}):
        fail(f"{label}: step_time counted {counted} of {steps} steps with --skip-steps 0 and 2")
    try:
        drv.run_recipe(e, os.path.join(RECIPES, "step_time.sql"), {"no_such": "1"})
        fail(f"{label}: an unknown parameter was taken")
    except drv.RecipeError as err:
        if "no parameter no_such" not in str(err):
            fail(f"{label}: unknown parameter: {err}")
    print(f"{label}: views.sql by hand: {len(names)} recipes agree; counted {counted}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--venv", default="")
    a = ap.parse_args()
    try:
        import duckdb  # noqa: F401
    except ImportError:
        py = os.path.join(a.venv, "bin", "python")
        if a.venv and os.access(py, os.X_OK) and not os.environ.get("GPDL_TEST_OPS_VENV"):
            os.environ["GPDL_TEST_OPS_VENV"] = "1"  # once: the venv's Python may lack it too
            os.execv(py, [py, *sys.argv])
        print(f"SKIP: no duckdb (tests/recipes/setup-venv '{a.venv}')")
        return SKIP
    import check_ops
    drv = load_driver()
    tmp = tempfile.mkdtemp(prefix="gpdl-recipes-ops-")
    try:
        for name, gpu in (("gloo", "0"), ("nccl", "1")):
            files, ex = make_job(a.gprof_dl, a.gen, tmp, name, gpu)
            views = check_ops.load_views(a.gprof_dl, files)
            engines = [("duckdb", drv.DuckDB(ex["csv"])), ("sqlite", drv.SQLite(ex["sqlite"]))]
            for ename, e in engines:
                for recipe in ("top_operators", "top_kernels", "collectives"):
                    params = {"top_n": "0"} if recipe != "collectives" else {}
                    cols, raw = drv.run_recipe(e, os.path.join(RECIPES, recipe + ".sql"), params)
                    rows = as_text(cols, raw)
                    label = f"{name} {recipe} on {ename}"
                    for m in check_ops.check(recipe, rows, views):
                        fail(f"{label}: {m}")
                    if name == "gloo":
                        check_hand(label, recipe, rows)
                    if ename == "duckdb" and rows:
                        check_mutant(label, recipe, rows, views, check_ops)
                    print(f"{label}: {len(rows)} rows checked", flush=True)
                check_views(drv, f"{name} on {ename}", e)
                e.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(FAILED)} failures")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
