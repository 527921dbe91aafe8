#!/usr/bin/env python3
"""End-to-end tests of gprof-dl: real NVTX programs run under `gprof-dl run`;
the trace is read back through `summary --format json` and `export --chrome`,
both parsed with Python's json module, and exact counts, nesting, flags and
exit statuses are asserted.

Exit status: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE)."""
import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile

SKIP = 77


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def eq(actual, expected, what):
    check(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")


class Ctx:
    def __init__(self, args, tmp):
        self.gpdl = args.gprof_dl
        self.progs = args.progs
        self.src = args.src
        self.nvtx_lib = args.nvtx_lib
        self.tmp = tmp
        self.build = args.build

    def prog(self, name):
        return os.path.join(self.progs, "e2e_" + name)

    def gprof(self, *args, check_status=None, **kw):
        p = subprocess.run([self.gpdl, *args], capture_output=True, **kw)
        if check_status is not None and p.returncode != check_status:
            raise Failure(f"gprof-dl {' '.join(args)}: status {p.returncode}, expected {check_status}\n"
                          f"stdout: {p.stdout.decode(errors='replace')}\n"
                          f"stderr: {p.stderr.decode(errors='replace')}")
        return p

    def record(self, cmd, name, status=0):
        out = os.path.join(self.tmp, name + ".gpdl")
        p = self.gprof("run", "-o", out, "--force", "--", *cmd, check_status=status)
        check(os.path.exists(out), f"no trace written at {out}")
        return out, p

    def chrome(self, trace):
        out = trace + ".json"
        self.gprof("export", "--chrome", trace, "-o", out, "--force", check_status=0)
        with open(out, encoding="utf-8") as f:
            return Chrome(json.load(f))

    def summary(self, trace, *extra):
        p = self.gprof("summary", trace, "--format", "json", "--time-unit", "us", *extra, check_status=0)
        return json.loads(p.stdout)


class Chrome:
    """The parts of a chrome trace the tests look at."""

    def __init__(self, doc):
        check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "not an object-form trace")
        self.doc = doc
        self.events = doc["traceEvents"]
        self.x = [e for e in self.events if e.get("ph") == "X"]
        self.marks = [e for e in self.events if e.get("ph") in ("i", "I")]
        self.meta = [e for e in self.events if e.get("ph") == "M"]

    def count(self, name, ph="X"):
        evs = self.x if ph == "X" else self.marks
        return sum(1 for e in evs if e["name"] == name)

    def named(self, name):
        return [e for e in self.x if e["name"] == name]

    def thread_names(self):
        return {(e["pid"], e["tid"]): e["args"]["name"] for e in self.meta if e["name"] == "thread_name"}

    def process_pids(self):
        return {e["pid"] for e in self.meta if e["name"] == "process_name"}

    def flagged(self, e, flag):
        args = e.get("args", {})
        flags = args.get("flags", [])
        return flag in flags or args.get(flag) is True


def contained(inner, outer):
    return (inner["pid"], inner["tid"]) == (outer["pid"], outer["tid"]) and \
        outer["ts"] <= inner["ts"] + 1e-9 and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-3


def every_nested(ch, inner_name, outer_name):
    outers = ch.named(outer_name)
    for e in ch.named(inner_name):
        check(any(contained(e, o) for o in outers), f"'{inner_name}' at {e['ts']} is not inside an '{outer_name}'")


def find_view(summary, key):
    tables = summary.get("tables", {})
    check(key in tables, f"summary has no {key} table: {list(tables)}")
    return tables[key]


def flatten(rows, prefix=""):
    """Rows nest through "children"; yields (path, row) with paths like outer/inner."""
    for row in rows:
        name = row.get("name", row.get("event_type"))
        path = prefix + name
        yield path, row
        yield from flatten(row.get("children", []), path + "/")


def userdefined_rows(summary, section="Thread: All threads merged"):
    view = find_view(summary, "userdefined")
    for sec in view["sections"]:
        if sec.get("title") == section:
            return dict(flatten(sec["rows"]))
    raise Failure(f"no section {section!r} in UserDefined: {[x.get('title') for x in view['sections']]}")


def overview_rows(summary):
    view = find_view(summary, "overview")
    return {path.split("/")[-1]: row for sec in view["sections"] for path, row in flatten(sec["rows"])}


# ---- cases -----------------------------------------------------------------

def case_threads(c):
    trace, p = c.record([c.prog("nvtx_threads")], "threads")
    eq(p.stdout, b"threads done\n", "target stdout")
    ch = c.chrome(trace)
    eq(ch.count("outer"), 400, "outer ranges")
    eq(ch.count("inner"), 800, "inner ranges")
    eq(ch.count("main"), 1, "main ranges")
    eq(ch.count("tick", "i"), 40, "tick marks")
    every_nested(ch, "inner", "outer")
    tids = {(e["pid"], e["tid"]) for e in ch.named("outer")}
    eq(len(tids), 4, "threads with outer ranges")
    names = sorted(n for n in ch.thread_names().values() if n.startswith("worker-"))
    eq(names, ["worker-0", "worker-1", "worker-2", "worker-3"], "worker thread names")
    s = c.summary(trace)
    rows = userdefined_rows(s)
    eq(rows["outer"]["calls"], 400, "summary: outer calls")
    eq(rows["outer/inner"]["calls"], 800, "summary: inner calls under outer")
    eq(rows["main"]["calls"], 1, "summary: main calls")
    check(rows["outer/inner"]["cpu_total"] <= rows["outer"]["cpu_total"], "inner total exceeds outer total")
    s2 = c.summary(trace, "--thread-sep")
    per_thread = [dict(flatten(sec["rows"])) for sec in find_view(s2, "userdefined")["sections"]]
    with_outer = [rows for rows in per_thread if "outer" in rows]
    eq(len(with_outer), 4, "--thread-sep: sections with outer")
    check(all(rows["outer"]["calls"] == 100 and rows["outer/inner"]["calls"] == 200 for rows in with_outer),
          "--thread-sep: per-thread counts")


def case_domains(c):
    trace, _ = c.record([c.prog("nvtx_domains")], "domains")
    ch = c.chrome(trace)
    for name, n, min_us in (("ProfileStep", 3, 10000), ("Dataloader", 3, 2000), ("Forward", 3, 3000),
                            ("Backward", 3, 4000), ("Optimization", 3, 1000)):
        evs = ch.named(name)
        eq(len(evs), n, f"{name} ranges")
        check(all(e["dur"] >= min_us for e in evs), f"{name} shorter than {min_us} us: {[e['dur'] for e in evs]}")
        check(all(e.get("cat") == name or e["args"].get("type") == name for e in evs), f"{name}: wrong type")
    every_nested(ch, "Forward", "ProfileStep")
    reg = ch.named("reg-range")
    eq(len(reg), 7, "registered-string ranges")
    eq(reg[0]["args"].get("domain"), "mylib", "registered range's domain")
    eq(reg[0]["args"].get("category"), "io", "named category in a domain")
    eq(ch.count("wide-\u00fcn\u00ef"), 2, "wide-string ranges")
    cat = ch.named("in-cat-a")
    eq(len(cat), 1, "range in a named default-domain category")
    eq(cat[0]["args"].get("category"), "cat-a", "default-domain category name")
    eq(ch.count("in-cat-a", "i"), 1, "domain mark")
    s = c.summary(trace)
    ov = overview_rows(s)
    for name in ("ProfileStep", "Dataloader", "Forward", "Backward", "Optimization"):
        eq(ov[name]["calls"], 3, f"overview {name} calls")
    check(ov["Forward"]["cpu_time"] >= 9000, "overview Forward time")
    eq(ov["ProfileStep"]["ratio"], 100.0, "overview ProfileStep ratio")
    for name in ("Dataloader", "Forward", "Backward", "Optimization"):
        check(0 < ov[name]["ratio"] < 100, f"overview {name} ratio {ov[name]['ratio']}")


def case_unbalanced(c):
    trace, _ = c.record([c.prog("nvtx_unbalanced")], "unbalanced")
    ch = c.chrome(trace)
    pops = [e for e in ch.marks if ch.flagged(e, "unbalanced_pop")]
    eq(len(pops), 3, "unbalanced pops")
    eq(ch.count("balanced"), 1, "balanced range")
    cross = ch.named("cross-thread")
    eq(len(cross), 1, "cross-thread start/end range")
    check(not ch.flagged(cross[0], "open_at_exit"), "cross-thread range marked open")
    for name in ("never-ended", "left-open", "left-open-inner"):
        evs = ch.named(name)
        eq(len(evs), 1, f"{name} recorded")
        check(ch.flagged(evs[0], "open_at_exit"), f"{name} not flagged open at exit")
    every_nested(ch, "left-open-inner", "left-open")


def case_exit_code(c):
    trace, _ = c.record([c.prog("exit_code"), "7"], "exit7", status=7)
    eq(c.chrome(trace).count("work"), 5, "ranges before exit(7)")


def killed(c, sig):
    trace, _ = c.record([c.prog("killed"), str(sig)], f"killed{sig}", status=128 + sig)
    ch = c.chrome(trace)
    eq(ch.count("done"), 10, "finished ranges of a killed target")
    for name in ("doomed", "inner-doomed"):
        evs = ch.named(name)
        eq(len(evs), 1, f"{name} recovered")
        check(ch.flagged(evs[0], "open_at_exit"), f"{name} not flagged open at exit")
        check(evs[0]["dur"] >= 15000, f"{name} ends before the target died: {evs[0]['dur']} us")
    every_nested(ch, "inner-doomed", "doomed")
    info = c.gprof("info", trace, check_status=0).stdout.decode()
    check("137" in info or str(128 + sig) in info, "info does not show the exit status")


def case_killed(c):
    killed(c, signal.SIGKILL)


def case_killed_segv(c):
    killed(c, signal.SIGSEGV)


def case_forker(c):
    trace, p = c.record([c.prog("forker")], "forker")
    eq(p.stdout, b"child exited 3\n", "target stdout")
    ch = c.chrome(trace)
    parent = {e["pid"] for e in ch.named("parent-work")}
    child = {e["pid"] for e in ch.named("child-work")}
    eq(len(parent), 1, "parent pids")
    eq(len(child), 1, "child pids")
    check(parent != child, "child's ranges recorded under the parent's pid")
    eq(ch.count("parent-work"), 3, "parent ranges")
    eq(ch.count("child-work"), 4, "child ranges")
    eq(ch.count("around-fork"), 1, "range around fork")
    check(not ch.flagged(ch.named("around-fork")[0], "open_at_exit"), "around-fork flagged open")
    check(parent | child <= ch.process_pids(), "process metadata missing")


def case_execer(c):
    trace, _ = c.record([c.prog("execer"), c.prog("exit_code"), "5"], "execer", status=5)
    ch = c.chrome(trace)
    eq(ch.count("before-exec"), 1, "range before exec")
    eq(ch.count("work"), 5, "ranges after exec")
    opened = ch.named("open-across-exec")
    eq(len(opened), 1, "range open across exec")
    check(ch.flagged(opened[0], "open_at_exit"), "range open across exec not flagged")
    eq({e["pid"] for e in ch.named("before-exec")}, {e["pid"] for e in ch.named("work")}, "exec keeps the pid")


def case_signals(c):
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        out = os.path.join(c.tmp, f"sig{int(sig)}.gpdl")
        p = subprocess.Popen([c.gpdl, "run", "-o", out, "--force", "--", c.prog("wait_signal")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = p.stdout.readline()
        eq(line, b"ready\n", "target ready")
        p.send_signal(sig)  # to the launcher only: it must forward
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            raise Failure(f"{sig.name} was not forwarded to the target")
        eq(p.returncode, 40 + int(sig), f"status after {sig.name}")
        evs = c.chrome(out).named("waiting")
        eq(len(evs), 1, "range open when the signal came")
        check(Chrome.flagged(None, evs[0], "open_at_exit"), "waiting not flagged open")


def case_stdout_passthrough(c):
    bare = subprocess.run([c.prog("exit_code"), "0"], capture_output=True)
    trace, p = c.record([c.prog("exit_code"), "0"], "passthrough")
    eq(p.stdout, bare.stdout, "target stdout under gprof-dl")
    check(b"to stderr\n" in p.stderr, "target stderr lost")
    check(p.stderr.startswith(b"=="), "banner missing at the start of stderr")
    # Default output names never overwrite: two runs, two files.
    d = tempfile.mkdtemp(dir=c.tmp)
    for _ in range(2):
        c.gprof("run", "-q", "--", c.prog("exit_code"), cwd=d, check_status=0)
    eq(sorted(os.listdir(d)), ["e2e_exit_code-1.gpdl", "e2e_exit_code-2.gpdl"], "default trace names")


def case_not_found(c):
    out = os.path.join(c.tmp, "nf.gpdl")
    p = c.gprof("run", "-o", out, "--", "/nonexistent/program", check_status=127)
    check(b"command not found" in p.stderr, f"no clear message: {p.stderr!r}")
    check(not os.path.exists(out), "trace left behind for a command that never ran")
    p = c.gprof("run", "-o", out, "--", "/dev/null", check_status=126)
    p = c.gprof("run", check_status=2)
    check(b"gprof-dl run --help" in p.stderr, "usage error without a pointer to --help")


def case_existing_output(c):
    out = os.path.join(c.tmp, "exists.gpdl")
    marker = os.path.join(c.tmp, "marker")
    with open(out, "w") as f:
        f.write("precious")
    p = c.gprof("run", "-o", out, "--", "sh", "-c", f"touch {marker}", check_status=1)
    check(b"exists" in p.stderr, f"no clear message: {p.stderr!r}")
    check(not os.path.exists(marker), "target ran although the output existed")
    eq(open(out).read(), "precious", "existing file")
    c.gprof("run", "-q", "-o", out, "--force", "--", "sh", "-c", f"touch {marker}", check_status=0)
    check(os.path.exists(marker), "target did not run with --force")


def case_ctypes(c):
    if not c.nvtx_lib or not os.path.exists(c.nvtx_lib):
        print("SKIP: no libnvtx3interop.so from the CUDA toolkit for ctypes")
        sys.exit(SKIP)
    trace, p = c.record([sys.executable, os.path.join(c.src, "progs", "nvtx_ctypes.py"), c.nvtx_lib], "ctypes")
    eq(p.stdout, b"ctypes done\n", "python stdout")
    ch = c.chrome(trace)
    eq(ch.count("py-outer"), 3, "python outer ranges")
    eq(ch.count("py-inner"), 6, "python inner ranges")
    eq(ch.count("py-mark", "i"), 1, "python mark")
    every_nested(ch, "py-inner", "py-outer")


def case_no_nvtx_program(c):
    trace, _ = c.record(["sh", "-c", "exit 3"], "sh3", status=3)
    ch = c.chrome(trace)
    eq(len(ch.x), 0, "ranges from a program without NVTX")
    check(ch.process_pids(), "process missing")
    c.gprof("info", trace, check_status=0)
    c.gprof("summary", trace, check_status=0)


def case_installed(c):
    """`cmake --install` lays out bin/ and the collector so the installed
    gprof-dl finds its collector with no environment help."""
    prefix = os.path.join(c.tmp, "prefix")
    p = subprocess.run(["cmake", "--install", c.build, "--prefix", prefix], capture_output=True)
    eq(p.returncode, 0, f"cmake --install: {p.stderr.decode(errors='replace')}")
    gpdl = os.path.join(prefix, "bin", "gprof-dl")
    env = {k: v for k, v in os.environ.items() if k != "GPROF_DL_COLLECTOR"}
    out = os.path.join(c.tmp, "installed.gpdl")
    p = subprocess.run([gpdl, "run", "-q", "-o", out, "--", c.prog("exit_code"), "4"], capture_output=True, env=env)
    eq(p.returncode, 4, f"installed gprof-dl run: {p.stderr.decode(errors='replace')}")
    eq(c.chrome(out).count("work"), 5, "ranges recorded by the installed collector")
    for page in ("man1/gprof-dl.1", "man1/gprof-dl-run.1", "man5/gprof-dl-trace.5"):
        check(os.path.exists(os.path.join(prefix, "share", "man", page)), f"{page} not installed")


NEEDS_NVTX = {"installed", "ctypes", "threads", "domains", "unbalanced", "exit_code", "killed", "killed_segv", "forker", "execer",
              "signals", "stdout_passthrough"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--progs", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--have-nvtx", default="1")
    ap.add_argument("--nvtx-lib", default="")
    ap.add_argument("--build", default="")
    ap.add_argument("--case", required=True)
    args = ap.parse_args()
    if args.case in NEEDS_NVTX and args.have_nvtx != "1":
        print("SKIP: built without NVTX headers (no CUDA toolkit)")
        return SKIP
    fn = globals().get("case_" + args.case)
    if not fn:
        print(f"unknown case {args.case}")
        return 1
    with tempfile.TemporaryDirectory(prefix="gpdl-e2e-") as tmp:
        try:
            fn(Ctx(args, tmp))
        except Failure as e:
            print(f"FAIL {args.case}: {e}")
            return 1
    print(f"PASS {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
