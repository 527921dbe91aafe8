"""The table CSVs load as typed tables (formats/CSV-SCHEMA.md, "The table
CSVs"; issue 17 part 2): every CSV table that `gprof-dl summary --format csv
--view V` prints and every summary-*.csv that `gprof-dl export --csv` writes

  - has exactly one header row, the first line, and then rows of its width
    numbered 1..N (row), with no empty line inside;
  - has its numbers unquoted and its text quoted;
  - loads with pandas.read_csv and DuckDB's read_csv_auto with a numeric
    type (int or float; never object, str or VARCHAR) for every numeric
    column: a table with no row is counted and said, not type-checked;
  - holds the figures of `gprof-dl summary --format json` (the same
    analysis): every row, in order, every value (times exact in ns, within
    half a unit of the last decimal in ms; percentages and other numbers
    within their two decimals), depth and parent (a row's parent is the
    nearest row above it one level up), sections and facts; and the Trace
    Summary the JSON's traces.

Cases (--case): synthetic (a generated GPU training trace, also with
--op-detail and --thread-sep), torch1 (a real torch 1.13 loop recorded by
`gprof-dl run`; skips, 77, without an interpreter that imports torch or the
built gprof_dl package), job (a generated 4-rank job: the Distributed view's
two tables, and export's rank=R directories). The whole test skips (77) when
neither this interpreter nor a venv ($GPDL_RECIPES_VENV, else each --venv)
has pandas and duckdb (tests/recipes/setup-venv makes it)."""
import argparse
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
NUMERIC_DUCK = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL")
DERIVED_NUMERIC = ("row", "depth", "parent", "mark", "pid", "tid")
VIEWS = ("perf", "device", "overview", "model", "distributed", "operator", "kernel", "memory-manipulation",
         "userdefined", "memory", "nvprof", "steps", "timeline", "advice")

FAILED = []
STATS = {"tables": 0, "rows": 0, "values": 0, "numeric_columns": 0, "empty_tables": 0}


def check(cond, msg):
    if not cond:
        FAILED.append(msg)
    return bool(cond)


def ensure_libraries(venvs):
    try:
        import duckdb  # noqa: F401
        import pandas  # noqa: F401
        return
    except ImportError:
        pass
    # as tests/recipes take it: $GPDL_RECIPES_VENV, else the build tree's, else
    # the source tree's build/ (that of .ci/run, for its sanitizer build)
    venvs = [os.environ.get("GPDL_RECIPES_VENV")] + venvs
    for venv in (v for v in venvs if v):
        py = os.path.join(venv, "bin", "python")
        if os.path.exists(py) and not os.environ.get("GPDL_TABLECSV_REEXEC"):
            os.environ["GPDL_TABLECSV_REEXEC"] = "1"  # once: a venv without them skips
            os.execv(py, [py, *sys.argv])
    print(f"SKIP: no pandas and duckdb here nor in a venv of {[v for v in venvs if v]} "
          "(tests/recipes/setup-venv makes one)")
    sys.exit(SKIP)


def run(*cmd, env=None):
    p = subprocess.run(list(cmd), capture_output=True, env=env, timeout=500)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)}: status {p.returncode}\n{p.stderr.decode(errors='replace')[-3000:]}")
    return p.stdout.decode()


# ---- reading a CSV table as text --------------------------------------------

def fields(line):
    """A CSV line (no newline inside a field here) as [(text, quoted)]."""
    out, i, n = [], 0, len(line)
    while True:
        if i < n and line[i] == '"':
            j, buf = i + 1, []
            while True:
                k = line.index('"', j)
                buf.append(line[j:k])
                if k + 1 < n and line[k + 1] == '"':
                    buf.append('"')
                    j = k + 2
                    continue
                i = k + 1
                break
            out.append(("".join(buf), True))
        else:
            k = line.find(",", i)
            k = n if k < 0 else k
            out.append((line[i:k], False))
            i = k
        if i >= n:
            return out
        assert line[i] == ",", f"junk after a quoted field in {line!r}"
        i += 1


def split_tables(text):
    """summary's stdout: CSV tables, each followed by an empty line."""
    check(text.endswith("\r\n\r\n") or text == "", "stdout: the last table is not followed by an empty line")
    return [t + "\r\n" for t in text.split("\r\n\r\n") if t]


# ---- the JSON side ----------------------------------------------------------

def flat(rows):
    for r in rows:
        yield r
        yield from flat(r.get("children", []))


def slug(label):
    m = re.search(r"[A-Za-z0-9]+", label or "")
    return m.group(0).lower() if m else ""


def json_sections(table, header, values):
    """The JSON sections a CSV table holds: those named in its section
    column; else those of no name or a thread's (the CSV says no more)."""
    secs = table.get("sections", [])
    if "section" in header:
        return [s for s in secs if s.get("label") in values]
    return [s for s in secs if s.get("label") is None or s.get("thread") or
            (s.get("label") or "").startswith("Thread: ")]


def json_value(row, col, unit):
    """The JSON value of CSV column col in row, or KeyError."""
    for suffix in ("_" + unit,):
        if col.endswith(suffix):
            base = col[:-len(suffix)]
            if unit == "ns":
                if base + "_ns" in row:
                    return row[base + "_ns"]
            elif base in row:
                return row[base]
    for cand in (col, col[:-6] if col.endswith("_bytes") else None, col[:-4] if col.endswith("_pct") else None,
                 col[:-5] if col.endswith("_gbps") else None):
        if cand and cand in row:
            return row[cand]
    raise KeyError(col)


def close(csv_text, want, unit, col):
    if want is None:
        return csv_text == ""
    if isinstance(want, str):
        return csv_text == want
    if isinstance(want, bool):
        return csv_text == str(int(want))
    got = float(csv_text) if csv_text != "" else math.nan
    decimals = len(csv_text.split(".")[1]) if "." in csv_text else 0
    tol = 0.5 * 10 ** -decimals + 1e-9 * abs(want)
    return abs(got - want) <= tol


# ---- one CSV table ----------------------------------------------------------

def check_table(where, text, path, unit, json_tables):
    """One CSV table: text is its content, path a file holding it."""
    import duckdb
    import pandas as pd
    STATS["tables"] += 1
    lines = text.split("\r\n")
    check(lines[-1] == "", f"{where}: does not end in CRLF")
    lines = lines[:-1]
    check("" not in lines, f"{where}: an empty line inside the table")
    header = [f for f, q in fields(lines[0])]
    check(all(not q for f, q in fields(lines[0])), f"{where}: a quoted header name")
    check(all(re.fullmatch(r"[a-z][a-z0-9_]*", h) for h in header), f"{where}: header names {header}")
    check(len(set(header)) == len(header), f"{where}: a header name twice: {header}")
    check(header[0] == "row" and "depth" in header and "parent" in header, f"{where}: row/depth/parent: {header}")
    check(lines.count(lines[0]) == 1, f"{where}: the header row more than once")
    rows = [fields(line) for line in lines[1:]]
    for i, r in enumerate(rows):
        check(len(r) == len(header), f"{where}: row {i + 1} has {len(r)} fields, the header {len(header)}")
        check(r[0] == (str(i + 1), False), f"{where}: row {i + 1} numbered {r[0]}")
    STATS["rows"] += len(rows)
    # which JSON table and sections: the one whose rows match in number
    cands = []
    for jt in json_tables:
        if jt is None:
            continue
        secvals = [r[header.index("section")][0] for r in rows] if "section" in header else []
        jrows = []
        for s in json_sections(jt, header, secvals):
            for jr in flat(s["rows"]):
                jrows.append((s, jr))
        if len(jrows) == len(rows):
            cands.append((jt, jrows))
    if not check(cands, f"{where}: no JSON table with its {len(rows)} rows"):
        return
    jt, jrows = cands[0]
    if len(cands) > 1:  # several with as many rows: the one whose first text matches
        for c in cands:
            if rows and c[1] and any(isinstance(v, str) and (v, True) in rows[0] for v in c[1][0][1].values()):
                jt, jrows = c
                break
    text_cols = {"section", "thread"}
    facts = set()
    for s, _ in jrows:
        facts.update(s.get("facts", {}).keys())
    for ci, col in enumerate(header):
        if col in text_cols or col in DERIVED_NUMERIC:
            continue
        fact = col[len("section_"):] if col.startswith("section_") else col
        vals = []
        for s, jr in jrows:
            try:
                if col.startswith("section_") and fact in facts:
                    raise KeyError(col)
                vals.append(json_value(jr, col, unit))
            except KeyError:
                vals.append(s.get("facts", {}).get(fact) if fact in facts else KeyError)
        if any(isinstance(v, str) for v in vals):
            text_cols.add(col)
        if not check(KeyError not in vals, f"{where}: column {col} has no JSON value in some row"):
            continue
        for i, (r, want) in enumerate(zip(rows, vals)):
            got, quoted = r[ci]
            STATS["values"] += 1
            check(close(got, want, unit, col), f"{where}: row {i + 1} {col}: CSV {got!r}, JSON {want!r}")
            if isinstance(want, str):
                check(quoted, f"{where}: row {i + 1} {col}: text {got!r} not quoted")
            else:
                check(not quoted, f"{where}: row {i + 1} {col}: number {got!r} quoted")
    # depth and parent
    stack = {}
    for i, r in enumerate(rows):
        depth = int(r[header.index("depth")][0])
        parent = int(r[header.index("parent")][0])
        if i < len(jrows):
            check(depth == jrows[i][1].get("depth", 0), f"{where}: row {i + 1} depth {depth}, JSON {jrows[i][1].get('depth')}")
        want = stack.get(depth - 1, 0) if depth else 0
        if i and jrows[i][0] is not jrows[i - 1][0]:
            stack = {}
            want = 0
        check(parent == want, f"{where}: row {i + 1} parent {parent}, expected {want}")
        stack[depth] = i + 1
        for d in [k for k in stack if k > depth]:
            del stack[d]
    # types
    numeric = [c for c in header if c not in text_cols]
    if not rows:
        STATS["empty_tables"] += 1
        print(f"note: {where}: no row, its types not inferred")
        return
    df = pd.read_csv(path)
    check(list(df.columns) == header, f"{where}: pandas columns {list(df.columns)}")
    check(len(df) == len(rows), f"{where}: pandas reads {len(df)} rows, not {len(rows)}")
    rel = duckdb.sql(f"select * from read_csv_auto('{path}', hive_partitioning = false)")
    duck = dict(zip(rel.columns, (str(t) for t in rel.types)))
    check(list(rel.columns) == header, f"{where}: DuckDB columns {rel.columns}")
    check(len(rel.fetchall()) == len(rows), f"{where}: DuckDB reads another row count")
    for c in numeric:
        STATS["numeric_columns"] += 1
        check(df[c].dtype.kind in "iuf", f"{where}: pandas reads {c} as {df[c].dtype}")
        check(duck.get(c, "").split("(")[0] in NUMERIC_DUCK, f"{where}: DuckDB reads {c} as {duck.get(c)}")


def check_trace_table(where, text, path, j):
    """The Trace Summary against the JSON's traces."""
    lines = text.split("\r\n")[:-1]
    header = [f for f, q in fields(lines[0])]
    rows = [dict(zip(header, (f for f, q in fields(line)))) for line in lines[1:]]
    traces = j["traces"]
    if not check(len(rows) == len(traces), f"{where}: {len(rows)} rows, {len(traces)} traces"):
        return
    for r, t in zip(rows, traces):
        for k in ("pid", "events", "marks", "open_at_exit", "unbalanced_pops", "dropped"):
            STATS["values"] += 1
            check(r.get(k) == str(t[k]), f"{where}: {k} {r.get(k)!r}, JSON {t[k]}")
    check_types_only(where, path, header, ("file", "damage"))


def check_types_only(where, path, header, text_cols):
    import duckdb
    import pandas as pd
    STATS["tables"] += 1
    df = pd.read_csv(path)
    rel = duckdb.sql(f"select * from read_csv_auto('{path}', hive_partitioning = false)")
    duck = dict(zip(rel.columns, (str(t) for t in rel.types)))
    for c in header:
        if c in text_cols:
            continue
        STATS["numeric_columns"] += 1
        check(df[c].dtype.kind in "iuf", f"{where}: pandas reads {c} as {df[c].dtype}")
        check(duck.get(c, "").split("(")[0] in NUMERIC_DUCK, f"{where}: DuckDB reads {c} as {duck.get(c)}")


# ---- a trace, or a job ------------------------------------------------------

def check_traces(a, tmp, tag, files, extra=(), export_dirs=None):
    """summary --format csv per view (ms) and export --csv (ns) of files."""
    gp = a.gprof_dl
    j_ms = json.loads(run(gp, "summary", *files, "--format", "json", "--time-unit", "ms", "--view", "all", *extra))
    tables_ms = j_ms["tables"]
    # without --view: the Trace Summary, then every default view's
    whole = split_tables(run(gp, "summary", *files, "--format", "csv", *extra))
    check(len(whole) >= 2, f"{tag}: summary --format csv printed {len(whole)} tables")
    p = os.path.join(tmp, f"{tag}-trace.csv")
    with open(p, "w", newline="") as f:
        f.write(whole[0])
    check_trace_table(f"{tag}: summary (Trace Summary)", whole[0], p, j_ms)
    for v in VIEWS:
        out = run(gp, "summary", *files, "--format", "csv", "--view", v, *extra)
        chunks = split_tables(out)
        jts = [tables_ms.get(v)] + ([tables_ms.get("collectives")] if v == "distributed" else [])
        if jts[0] is None:
            check(not chunks, f"{tag}: --view {v}: CSV tables but no JSON table")
            continue
        check(chunks, f"{tag}: --view {v}: no CSV table")
        for k, chunk in enumerate(chunks):
            p = os.path.join(tmp, f"{tag}-{v}-{k}.csv")
            with open(p, "w", newline="") as f:
                f.write(chunk)
            if len(chunks) == 1:  # one table on stdout loads as it is
                check(out == chunk + "\r\n", f"{tag}: --view {v}: stdout is not its one table")
            check_table(f"{tag}: summary --view {v} table {k + 1}/{len(chunks)}", chunk, p, "ms", jts)
    if export_dirs is None:
        return
    for d, part_files in export_dirs:
        j_ns = json.loads(run(gp, "summary", *part_files, "--format", "json", "--time-unit", "ns",
                              "--view", "all"))
        paths = sorted(glob.glob(os.path.join(d, "summary-*.csv")))
        names = [os.path.basename(x) for x in paths]
        for v in ("trace",) + VIEWS:
            check(f"summary-{v}.csv" in names, f"{tag}: export wrote no summary-{v}.csv in {d}")
        for p in paths:
            name = os.path.basename(p)
            with open(p, newline="") as f:
                text = f.read()
            where = f"{tag}: export {os.path.relpath(p, tmp)}"
            if name == "summary-trace.csv":
                check_trace_table(where, text, p, j_ns)
                continue
            v = next((v for v in sorted(VIEWS, key=len, reverse=True) if name.startswith(f"summary-{v}")), None)
            jts = [j_ns["tables"].get(v)] if v else []
            if v == "distributed":
                jts.append(j_ns["tables"].get("collectives"))
            if not check(jts and jts[0] is not None, f"{where}: no such JSON table"):
                continue
            check_table(where, text, p, "ns", jts)


def case_synthetic(a, tmp):
    trace = os.path.join(tmp, "gen.gpdl")
    run(a.gen_trace, "--gpu", trace, "20000", "4")
    out = os.path.join(tmp, "gen-csv")
    run(a.gprof_dl, "export", "--csv", trace, "-o", out)
    check_traces(a, tmp, "synthetic", [trace], export_dirs=[(out, [trace])])
    check_traces(a, tmp, "synthetic-op-detail", [trace], extra=("--op-detail",))
    check_traces(a, tmp, "synthetic-thread-sep", [trace], extra=("--thread-sep",))
    # nesting and thread columns are there, not just allowed
    t = run(a.gprof_dl, "summary", trace, "--format", "csv", "--view", "operator", "--op-detail")
    deep = [line for line in t.split("\r\n")[1:] if line and fields(line)[-2][0] not in ("0", "")]
    check(len(deep) > 10, f"synthetic: --op-detail: {len(deep)} nested rows with a parent")
    t = run(a.gprof_dl, "summary", trace, "--format", "csv", "--view", "operator", "--thread-sep")
    check(t.startswith("row,pid,tid,thread,name,"), f"synthetic: --thread-sep header {t[:60]!r}")


def case_torch1(a, tmp):
    if not a.torch_python or subprocess.run([a.torch_python, "-c", "import torch"], capture_output=True).returncode:
        print(f"SKIP: '{a.torch_python}' cannot import torch")
        return SKIP
    if not os.path.exists(os.path.join(a.pydir, "sitecustomize.py")):
        print(f"SKIP: the gprof_dl Python package is not built in {a.pydir}")
        return SKIP
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPROF_DL_") and k != "PYTHONPATH"}
    env.update(GPROF_DL_CACHE_DIR=a.cache_dir, OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    trace = os.path.join(tmp, "torch.gpdl")
    p = subprocess.run([a.gprof_dl, "run", "-q", "-o", trace, "--force", "--", a.torch_python,
                        os.path.join(a.progs, "loop.py"), "--batches", "12", "--eval", "2"],
                       capture_output=True, env=env, timeout=500)
    if p.returncode != 0 or not os.path.exists(trace):
        raise SystemExit(f"FAIL: gprof-dl run: status {p.returncode}\n{p.stderr.decode(errors='replace')[-3000:]}")
    j = json.loads(run(a.gprof_dl, "summary", trace, "--format", "json", "--view", "operator"))
    ops = [r["name"] for s in j["tables"]["operator"]["sections"] for r in s["rows"]]
    check(len(ops) >= 20 and "aten::addmm" in ops, f"torch1: the Operator view has {len(ops)} rows: {ops[:8]}")
    out = os.path.join(tmp, "torch-csv")
    run(a.gprof_dl, "export", "--csv", trace, "-o", out)
    check_traces(a, tmp, "torch1", [trace], export_dirs=[(out, [trace])])
    check_traces(a, tmp, "torch1-op-detail", [trace], extra=("--op-detail",))
    return 0


def case_job(a, tmp):
    made = run(a.gen_job, "job", "4", "24", "1", "2", "30", "1", "1").split()
    check(len(made) == 4, f"job: {len(made)} traces, not 4")
    files = [shutil.copy(f, tmp) for f in made]  # tracebuild writes into a directory of its own
    shutil.rmtree(os.path.dirname(made[0]), ignore_errors=True)
    out = os.path.join(tmp, "job-csv")
    run(a.gprof_dl, "export", "--csv", *files, "-o", out)
    dirs = sorted(glob.glob(os.path.join(out, "rank=*")))
    check(len(dirs) == 4, f"job: export wrote {len(dirs)} rank directories")
    check_traces(a, tmp, "job", files, export_dirs=[(d, [files[int(d.rsplit("=", 1)[1])]]) for d in dirs[:2]])
    t = run(a.gprof_dl, "summary", *files, "--format", "csv", "--view", "distributed")
    chunks = split_tables(t)
    check(len(chunks) == 2 and chunks[0].startswith("row,section,rank,host,steps,"),
          f"job: --view distributed: {len(chunks)} tables, {chunks[0][:50]!r}")
    rows = chunks[0].split("\r\n")[1:-1]
    check(len(rows) == 4, f"job: the Distributed view's CSV has {len(rows)} rank rows, not 4")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--gen-trace", default="")
    ap.add_argument("--gen-job", default="")
    ap.add_argument("--venv", action="append", default=[])
    ap.add_argument("--torch-python", default="")
    ap.add_argument("--pydir", default="")
    ap.add_argument("--progs", default="")
    ap.add_argument("--cache-dir", default="")
    ap.add_argument("--case", required=True, choices=("synthetic", "torch1", "job"))
    a = ap.parse_args()
    ensure_libraries(a.venv)
    with tempfile.TemporaryDirectory(prefix="gpdl-tablecsv-") as tmp:
        rc = globals()["case_" + a.case](a, tmp)
    if rc == SKIP:
        return SKIP
    stats = ", ".join(f"{v} {k}" for k, v in STATS.items())
    if FAILED:
        for m in FAILED[:60]:
            print("FAIL:", m)
        print(f"{a.case}: {len(FAILED)} failed checks ({stats})")
        return 1
    if STATS["tables"] <= 5 or STATS["numeric_columns"] <= 20:
        print(f"FAIL: {a.case}: too little checked ({stats})")
        return 1
    print(f"{a.case}: ok ({stats})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
