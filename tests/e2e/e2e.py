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
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

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
        self.torch2_python = args.torch2_python

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
        if name == "ProfileStep":  # exported under Kineto's name, ProfilerStep#N
            return [e for e in self.x if re.fullmatch(r"ProfilerStep#\d+", e["name"])]
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


def case_distinct_names(c):
    """A name of its own for every range (paced, so that no ring fills):
    each recorded once, with its own name, as one row of the summary."""
    n = 3000
    trace, p = c.record([c.prog("many_names"), str(n)], "distinct")
    eq(p.stdout, f"{n} ranges\n".encode(), "target stdout")
    m = re.search(rb"Events: (\d+) \((\d+) marks\), (\d+) dropped", p.stderr)
    check(m is not None, "no Events line from gprof-dl run")
    eq((int(m[1]), int(m[3])), (n, 0), "events and drops")
    ch = c.chrome(trace)
    names = {}
    for e in ch.x:
        names[e["name"]] = names.get(e["name"], 0) + 1
    eq(sum(1 for i in range(n) if names.get(f"range-{i}") == 1), n, "ranges named range-N once each")
    eq(len(names), n, "names in the export")
    rows = userdefined_rows(c.summary(trace))
    eq(sum(1 for i in range(n) if rows.get(f"range-{i}", {}).get("calls") == 1), n, "summary rows of one call")


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
    eq(sorted(e["name"] for e in ch.named("ProfileStep")),
       ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"], "steps numbered in the export")
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
    # 2.1: the trace says a signal killed it, not that it exited 128+N
    _, procs, _ = info(c, trace)
    eq([x["exit"] for x in procs], [f"killed:{int(sig)}"], "info: the exit of a killed target")


def case_killed(c):
    killed(c, signal.SIGKILL)


def case_exit_137(c):
    """A shell that exits 137 exited: no signal killed it."""
    trace, _ = c.record(["sh", "-c", "exit 137"], "exit137", status=137)
    _, procs, _ = info(c, trace)
    eq([x["exit"] for x in procs], ["137"], "info: the exit of a shell that exits 137")


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


# ---- distributed runs --------------------------------------------------------

def info(c, trace):
    """`gprof-dl info`: the header's fields and the process table's rows."""
    text = c.gprof("info", trace, check_status=0).stdout.decode()
    head, procs, in_procs = {}, [], False
    for line in text.splitlines():
        if line.startswith("processes:"):
            in_procs = True
            continue
        if in_procs:
            m = re.match(r"\s+(\d+)\s+(\d+)\s+(-|\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.*)$", line)
            if m:
                procs.append({"pid": int(m[1]), "ppid": int(m[2]), "rank": -1 if m[3] == "-" else int(m[3]),
                              "start": m[4], "end": m[5], "exit": m[6], "cmd": m[7]})
                continue
            if line.strip() and not line.strip().startswith("PID"):
                in_procs = False
        m = re.match(r"  (\S.*?)\s{2,}(.*)$", line)
        if m and not in_procs:
            head.setdefault(m[1], m[2])
    return head, procs, text


def ranks_reported(stderr):
    """The report's rank lines: rank -> (world, pid, status, path); and the launcher's."""
    ranks, launcher = {}, None
    for line in stderr.decode(errors="replace").splitlines():
        m = re.match(r"==\d+== Rank (\d+)(?: of (\d+))?: pid (\d+), (.+), (\S+)$", line)
        if m:
            ranks[int(m[1])] = (int(m[2] or -1), int(m[3]), m[4], m[5])
        m = re.match(r"==\d+== Launcher: pid (\d+), (.+), (\S+)$", line)
        if m:
            launcher = (int(m[1]), m[2], m[3])
    return ranks, launcher


def run_ranks(c, pattern, cmd, status=0, cwd=None, extra=(), env=None):
    p = c.gprof("run", *extra, "-o", pattern, "--", *cmd, check_status=status, cwd=cwd, env=env)
    return p, ranks_reported(p.stderr)


def check_rank_file(c, path, rank, world, pid):
    """A rank's file: its header, its processes (all of its rank), the
    rank's ranges and its worker's, on their own pids."""
    head, procs, text = info(c, path)
    eq(head.get("rank"), str(rank), f"{path}: header rank")
    eq(head.get("world size"), str(world), f"{path}: header world size")
    eq(head.get("local rank"), str(rank), f"{path}: header local rank")
    eq(head.get("pid"), str(pid), f"{path}: header pid")
    check(procs, f"{path}: no processes")
    eq({p["rank"] for p in procs}, {rank}, f"{path}: process ranks")
    ch = c.chrome(path)
    steps, loads = ch.named("rank-step"), ch.named("worker-load")
    eq(len(steps), 3, f"{path}: rank-step ranges")
    eq(len(loads), 2, f"{path}: worker-load ranges")
    eq(ch.count("launch"), 0, f"{path}: the launcher's range")
    eq({e["pid"] for e in steps}, {pid}, f"{path}: rank-step pid")
    workers = {e["pid"] for e in loads}
    eq(len(workers), 1, f"{path}: worker pids")
    check(pid not in workers, f"{path}: the worker's ranges on the rank's pid")
    return head, procs


def case_dist_files(c):
    """A launcher of 3 ranks, each forking a worker, under -o t-%q{RANK}.gpdl:
    a file per rank, the launcher's own without the ranks, every exit status
    known although the launcher, not gprof-dl, reaped the ranks."""
    d = tempfile.mkdtemp(dir=c.tmp)
    p, (ranks, launcher) = run_ranks(c, "t-%q{RANK}.gpdl", [c.prog("rank_launcher"), "3", "codes"], cwd=d)
    eq(sorted(os.listdir(d)), ["t-.gpdl", "t-0.gpdl", "t-1.gpdl", "t-2.gpdl"], "files")
    eq(sorted(ranks), [0, 1, 2], "ranks reported")
    for r in range(3):
        world, pid, status, path = ranks[r]
        eq((world, status, path), (3, f"exit {10 + r}", f"t-{r}.gpdl"), f"rank {r} reported")
        head, procs = check_rank_file(c, os.path.join(d, path), r, 3, pid)
        mine = [x for x in procs if x["pid"] == pid]
        eq(len(mine), 2, f"rank {r}: images of its pid (before and after the exec)")
        eq([x["exit"] for x in mine], [str(10 + r)] * 2, f"rank {r}: exit statuses")
        workers = [x for x in procs if x["pid"] != pid]
        eq([(x["ppid"], x["exit"]) for x in workers], [(pid, "0")], f"rank {r}: worker")
    check(launcher is not None, "no launcher line")
    eq(launcher[1:], ("exit 0", "t-.gpdl"), "launcher reported")
    head, procs, text = info(c, os.path.join(d, "t-.gpdl"))
    check(head.get("rank", "").startswith("none"), f"launcher file: header rank {head.get('rank')}")
    eq([(x["pid"], x["rank"], x["exit"]) for x in procs], [(launcher[0], -1, "0")], "launcher file: processes")
    ch = c.chrome(os.path.join(d, "t-.gpdl"))
    eq((ch.count("launch"), ch.count("rank-step"), ch.count("worker-load")), (1, 0, 0), "launcher file: ranges")
    check("EXIT ?" not in p.stderr.decode(), "an unknown exit status in the report")
    # 2.1: RANK alone names no job: the ranks take this run's own
    job = job_of_files(c, d, ["t-.gpdl", "t-0.gpdl", "t-1.gpdl", "t-2.gpdl"])
    check(re.fullmatch(rf"gprof-dl:{re.escape(socket.gethostname())}:\d+:\d{{19}}", job), f"the run's own job: {job!r}")


def case_dist_single_file(c):
    """Without a per-rank placeholder: one file, each process marked with its rank."""
    d = tempfile.mkdtemp(dir=c.tmp)
    p, (ranks, launcher) = run_ranks(c, "all.gpdl", [c.prog("rank_launcher"), "2", "codes"], cwd=d)
    eq(os.listdir(d), ["all.gpdl"], "files")
    eq({r: v[2:] for r, v in ranks.items()}, {0: ("exit 10", "all.gpdl"), 1: ("exit 11", "all.gpdl")}, "ranks reported")
    head, procs, text = info(c, os.path.join(d, "all.gpdl"))
    by_rank = collections.Counter(x["rank"] for x in procs)
    eq(dict(by_rank), {-1: 1, 0: 3, 1: 3}, "processes per rank")
    check("?" not in [x["exit"] for x in procs], f"an unknown exit status: {procs}")
    ch = c.chrome(os.path.join(d, "all.gpdl"))
    eq((ch.count("launch"), ch.count("rank-step"), ch.count("worker-load")), (1, 6, 4), "ranges")


def dist_killed(c, mode, want_status):
    d = tempfile.mkdtemp(dir=c.tmp)
    p, (ranks, launcher) = run_ranks(c, "t-%q{RANK}.gpdl", [c.prog("rank_launcher"), "2", mode], cwd=d)
    eq(sorted(os.listdir(d)), ["t-.gpdl", "t-0.gpdl", "t-1.gpdl"], "files")
    eq(ranks[0][2], "exit 0", "rank 0 reported")
    check(ranks[1][2] in want_status, f"rank 1 reported {ranks[1][2]!r}, expected one of {want_status}")
    path = os.path.join(d, "t-1.gpdl")
    ch = c.chrome(path)
    eq(ch.count("rank-step"), 3, "rank 1: its completed ranges")
    eq(ch.count("worker-load"), 2, "rank 1: its worker's ranges")
    doomed = ch.named("doomed")
    eq(len(doomed), 1, "rank 1: the range open when it was killed")
    check(ch.flagged(doomed[0], "open_at_exit"), "doomed not flagged open at exit")
    head, procs, text = info(c, path)
    mine = [x for x in procs if x["pid"] == ranks[1][1]]
    want_exit = {"killed by signal 9": "killed:9", "killed": "killed"}
    eq(mine[-1]["exit"], want_exit[ranks[1][2]], "rank 1: exit status in the file")
    check_rank_file(c, os.path.join(d, "t-0.gpdl"), 0, 2, ranks[0][1])


def case_dist_killed(c):
    """A rank SIGKILLed mid-run, its zombie left 0.5 s for gprof-dl to see."""
    dist_killed(c, "kill", ("killed by signal 9",))


def case_dist_killed_reaped(c):
    """The same, reaped at once: the signal may not be learnt, the death is."""
    dist_killed(c, "killnow", ("killed", "killed by signal 9"))


def case_dist_placeholders(c):
    """%p, %h, %n and collisions; bad patterns are usage errors."""
    d = tempfile.mkdtemp(dir=c.tmp)
    launch = [c.prog("rank_launcher"), "2", "codes"]
    # %p: each file by its process's pid, the launcher's by the root's
    p, (ranks, launcher) = run_ranks(c, "p-%p.gpdl", launch, cwd=d)
    root = int(re.search(rb"==(\d+)== gprof-dl", p.stderr)[1])
    want = {f"p-{root}.gpdl", f"p-{ranks[0][1]}.gpdl", f"p-{ranks[1][1]}.gpdl"}
    eq(set(os.listdir(d)), want, "%p files")
    eq(launcher, (root, "exit 0", f"p-{root}.gpdl"), "%p launcher")
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    # %h and two variables
    host = socket.gethostname()
    run_ranks(c, "%h-%q{RANK}-of-%q{WORLD_SIZE}.gpdl", launch, cwd=d)
    eq(sorted(os.listdir(d)), sorted([f"{host}--of-.gpdl", f"{host}-0-of-2.gpdl", f"{host}-1-of-2.gpdl"]),
       "%h files")
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    # %n: never overwriting, in one run and across runs (TAG: the same
    # value in every process, so that every file has the same name)
    tag = dict(os.environ, TAG="x")
    for run in range(2):
        p, (ranks, launcher) = run_ranks(c, "n%q{TAG}-%n.gpdl", launch, cwd=d, env=tag)
        eq(launcher[2], f"nx-{3 * run + 1}.gpdl", f"%n run {run}: launcher file")
        eq([ranks[r][3] for r in (0, 1)], [f"nx-{3 * run + 2}.gpdl", f"nx-{3 * run + 3}.gpdl"],
           f"%n run {run}: rank files")
    eq(len(os.listdir(d)), 6, "%n files")
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    # the same name for both ranks and the launcher, and a file already there
    with open(os.path.join(d, "q-x-1.gpdl"), "w") as f:
        f.write("precious")
    p, (ranks, launcher) = run_ranks(c, "q-%q{TAG}.gpdl", launch, cwd=d, env=tag)
    eq((launcher[2], ranks[0][3], ranks[1][3]), ("q-x.gpdl", "q-x-2.gpdl", "q-x-3.gpdl"), "collisions")
    check(b"written to 'q-x-2.gpdl'" in p.stderr, "no word of the collision")
    eq(open(os.path.join(d, "q-x-1.gpdl")).read(), "precious", "an existing file")
    head, _, _ = info(c, os.path.join(d, "q-x-3.gpdl"))
    eq(head.get("rank"), "1", "the rank in a file of a distinct name")
    # --force: a file there before the run is overwritten, as without ranks
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    with open(os.path.join(d, "f-1.gpdl"), "w") as f:
        f.write("old")
    p, (ranks, launcher) = run_ranks(c, "f-%q{RANK}.gpdl", launch, cwd=d)
    eq(ranks[1][3], "f-1-1.gpdl", "an existing file without --force")
    eq(open(os.path.join(d, "f-1.gpdl")).read(), "old", "an existing file without --force")
    p, (ranks, launcher) = run_ranks(c, "f-%q{RANK}.gpdl", launch, cwd=d, extra=("--force",))
    eq(ranks[1][3], "f-1.gpdl", "an existing file with --force")
    eq(info(c, os.path.join(d, "f-1.gpdl"))[0].get("rank"), "1", "the file --force overwrote")
    # bad patterns: a one-line message, status 2, nothing run
    marker = os.path.join(d, "ran")
    for pat, msg in (("t-%q{RANK.gpdl", b"unterminated '%q{'"), ("t-%x.gpdl", b"unknown placeholder '%x'"),
                     ("", b"empty file name"), ("t-%q{}.gpdl", b"empty variable name")):
        p = c.gprof("run", "-o", pat, "--", "touch", marker, check_status=2, cwd=d)
        check(msg in p.stderr, f"-o {pat!r}: {p.stderr!r}")
        eq(len([l for l in p.stderr.decode().splitlines() if l.startswith("gprof-dl")]), 1,
           f"-o {pat!r}: lines of message")
        check(not os.path.exists(marker), f"-o {pat!r}: the command ran")


def case_dist_refused_names(c):
    """-o's %q{VAR} values that may not name a file (unset, empty, '/',
    '..', a control character, more than NAME_MAX bytes): in gprof-dl's own
    environment a usage error naming the variable and why, nothing run; in
    a rank's, one line naming the rank, the variable and why, the rank kept
    in the launcher's file, status 1. A rank variable may be unset in
    gprof-dl's (it launches the ranks), unless its own file would lose a
    directory. An error about a 10,000-byte name keeps its reason."""
    d = tempfile.mkdtemp(dir=c.tmp)
    marker = os.path.join(d, "ran")
    cases = (("%q{NOPE}/p.gpdl", {}, "%q{NOPE} is unset"),
             ("t-%q{V}.gpdl", {"V": ""}, "%q{V} is empty"),
             ("t-%q{V}.gpdl", {"V": "../x"}, "%q{V} holds a '/'"),
             ("%q{V}/t.gpdl", {"V": ".."}, "%q{V} holds '..'"),
             ("t-%q{V}.gpdl", {"V": "a\nb"}, "%q{V} holds a control character"),
             ("t-%q{V}.gpdl", {"V": "v" * 256}, "%q{V} is longer than a file name may be (256 bytes, more "
              "than NAME_MAX 255)"),
             ("%q{RANK}/p.gpdl", {}, "%q{RANK} is unset in gprof-dl's environment, and its own file would then "
              "be '/p.gpdl'"))
    for pat, env, msg in cases:
        e = {k: v for k, v in os.environ.items() if k not in ("NOPE", "V", "RANK")}
        e.update(env)
        p = c.gprof("run", "-o", pat, "--", "touch", marker, check_status=2, cwd=d, env=e)
        lines = [x for x in p.stderr.decode().splitlines() if x.startswith("gprof-dl")]
        eq(len(lines), 1, f"-o {pat!r} {env}: lines of message: {p.stderr!r}")
        check(lines[0].startswith(f"gprof-dl: -o '{pat}': {msg}"), f"-o {pat!r} {env}: {lines[0]!r}")
        check(not os.path.exists(marker), f"-o {pat!r}: the command ran")
    eq(os.listdir(d), [], "files written by refused patterns")
    # a rank's own value refused: it stays in the launcher's file
    e = dict(os.environ, TAG="ok")
    launch = ["sh", "-c", "RANK=0 WORLD_SIZE=2 sleep 0.2 & RANK=1 WORLD_SIZE=2 TAG=../evil sleep 0.2 & wait"]
    p = c.gprof("run", "-o", "t-%q{RANK}-%q{TAG}.gpdl", "--", *launch, check_status=1, cwd=d, env=e)
    eq(sorted(os.listdir(d)), ["t--ok.gpdl", "t-0-ok.gpdl"], "files of a job with a rank refused")
    check(re.search(rb"gprof-dl: rank 1 \(pid \d+\): -o 't-%q\{RANK\}-%q\{TAG\}.gpdl': %q\{TAG\} holds a '/', in "
                    rb"its environment: the rank stays in 't--ok.gpdl'\n", p.stderr), f"rank refused: {p.stderr!r}")
    ranks, launcher = ranks_reported(p.stderr)
    eq((ranks[0][3], ranks[1][3]), ("t-0-ok.gpdl", "t--ok.gpdl"), "the ranks' files reported")
    _, procs, _ = info(c, os.path.join(d, "t--ok.gpdl"))
    eq(sorted({x["rank"] for x in procs}), [-1, 1], "ranks in the launcher's file")
    # a 10,000-byte name: cut in the middle, the reason kept whole
    p = c.gprof("run", "-o", "a" * 10000 + ".gpdl", "--", "true", check_status=1, cwd=d)
    err = p.stderr.decode()
    check(err.endswith(".gpdl': File name too long\n") and "..." in err and len(err) < 1200,
          f"a 10,000-byte name's message ({len(err)} bytes): {err[:80]!r} ... {err[-80:]!r}")


def case_dist_copy_per_rank(c):
    """mpirun's way: one gprof-dl per rank, side by side, each with its
    rank in the environment: two files, nothing shared."""
    d = tempfile.mkdtemp(dir=c.tmp)
    procs = []
    for r in (0, 1):
        env = dict(os.environ, OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE="2",
                   OMPI_COMM_WORLD_LOCAL_RANK=str(r))
        procs.append(subprocess.Popen([c.gpdl, "run", "-o", "t-%q{OMPI_COMM_WORLD_RANK}.gpdl", "--",
                                       c.prog("exit_code"), "0"], cwd=d, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for r, p in enumerate(procs):
        out, err = p.communicate(timeout=60)
        eq(p.returncode, 0, f"copy {r}: status ({err.decode(errors='replace')})")
        ranks, launcher = ranks_reported(err)
        eq(list(ranks), [r], f"copy {r}: ranks reported")
        eq(ranks[r][2:], ("exit 0", f"t-{r}.gpdl"), f"copy {r}: rank line")
        eq(launcher, None, f"copy {r}: the root is the rank: no launcher file")
    eq(sorted(os.listdir(d)), ["t-0.gpdl", "t-1.gpdl"], "files")
    for r in (0, 1):
        head, procs_, _ = info(c, os.path.join(d, f"t-{r}.gpdl"))
        eq((head.get("rank"), head.get("world size"), head.get("local rank")), (str(r), "2", str(r)),
           f"t-{r}.gpdl: header")
        eq([x["rank"] for x in procs_], [r], f"t-{r}.gpdl: processes")
        eq(c.chrome(os.path.join(d, f"t-{r}.gpdl")).count("work"), 5, f"t-{r}.gpdl: ranges")
        check(b"every rank writes" not in err, f"copy {r}: a per-rank -o was warned about")
    # the same copies with an -o that is not per rank: each says how to fix
    # it before they collide (the second copy then finds the file there)
    env = dict(os.environ, OMPI_COMM_WORLD_RANK="1", OMPI_COMM_WORLD_SIZE="2")
    p = subprocess.run([c.gpdl, "run", "-o", "same.gpdl", "--", c.prog("exit_code"), "0"], cwd=d, env=env,
                       capture_output=True, timeout=60)
    check(b"warning: this is rank 1 of 2 (OMPI_COMM_WORLD_RANK): every rank writes 'same.gpdl'; give each "
          b"its own file with -o 'same-%q{OMPI_COMM_WORLD_RANK}.gpdl'" in p.stderr,
          f"no advice for a shared -o under mpirun: {p.stderr.decode(errors='replace')}")


def case_dist_launcher_killed(c):
    """gprof-dl itself killed before the end: the recorded file is still a
    trace, and says which process was which rank."""
    d = tempfile.mkdtemp(dir=c.tmp)
    p = subprocess.Popen([c.gpdl, "run", "-o", "k-%q{RANK}.gpdl", "--", c.prog("rank_launcher"), "2", "long", "6"],
                         cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        time.sleep(2.5)  # the ranks are known, and a flush wrote them
        p.kill()
        p.wait(timeout=10)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
    # a SIGKILLed gprof-dl renames nothing: the run is in its temporary
    # file beside the name (gprof-dl-run(1), FILES), a trace all the same
    left = os.listdir(d)
    check(len(left) == 1 and left[0].startswith(".k-.gpdl.gpdl-tmp."), f"files: {left}")
    os.rename(os.path.join(d, left[0]), os.path.join(d, "k-.gpdl"))
    head, procs, text = info(c, os.path.join(d, "k-.gpdl"))
    check("damage" in text or "no END" in text, "the cut-short file is not reported as such")
    ranks = collections.Counter(x["rank"] for x in procs)
    check(ranks[0] >= 2 and ranks[1] >= 2 and ranks[-1] >= 1, f"ranks of the processes: {procs}")
    ch = c.chrome(os.path.join(d, "k-.gpdl"))
    check(ch.count("rank-step") >= 6, f"rank-step ranges: {ch.count('rank-step')}")


def case_dist_torchrun(c):
    """torch 2's torchrun, 2 ranks of DDP on gloo, under -o t-%q{RANK}.gpdl."""
    py = c.torch2_python
    torchrun = os.path.join(os.path.dirname(py or ""), "torchrun")
    if not py or not os.path.exists(torchrun):
        print(f"SKIP: no torch 2 venv with torchrun ({torchrun!r})")
        sys.exit(SKIP)
    d = tempfile.mkdtemp(dir=c.tmp)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = os.path.join(c.src, "progs", "ddp_gloo.py")
    p, (ranks, launcher) = run_ranks(c, "t-%q{RANK}.gpdl",
                                     [torchrun, "--nproc-per-node", "2", "--master-port", str(port), script],
                                     cwd=d)
    out = p.stdout.decode()
    for r in (0, 1):
        check(f"rank {r} of 2 (local {r}) done" in out, f"rank {r} did not finish: {out!r}")
    eq(sorted(os.listdir(d)), ["t-.gpdl", "t-0.gpdl", "t-1.gpdl"], "files")
    eq(sorted(ranks), [0, 1], "ranks reported")
    for r in (0, 1):
        world, pid, status, path = ranks[r]
        eq((world, status, path), (2, "exit 0", f"t-{r}.gpdl"), f"rank {r} reported")
        head, procs, _ = info(c, os.path.join(d, path))
        eq((head.get("rank"), head.get("world size"), head.get("local rank")), (str(r), "2", str(r)),
           f"{path}: header")
        eq({x["rank"] for x in procs}, {r}, f"{path}: process ranks")
        check(any(x["pid"] == pid and x["exit"] == "0" for x in procs), f"{path}: the rank's exit: {procs}")
        check(all(x["exit"] != "?" for x in procs), f"{path}: an unknown exit status: {procs}")
        # the rank's own CPU: torch's import and the steps are not nothing
        _, _, text = info(c, os.path.join(d, path))
        m = re.search(r"CPU\(Process\)\s+(\d+) samples.*mean ([\d.]+)%", text)
        check(m and int(m[1]) >= 5 and float(m[2]) > 5.0, f"{path}: the rank's CPU: {m and m[0]}")
    eq(launcher[1:], ("exit 0", "t-.gpdl"), "launcher reported")
    head, procs, _ = info(c, os.path.join(d, "t-.gpdl"))
    check(any("torchrun" in x["cmd"] and x["rank"] == -1 for x in procs), f"torchrun not in the launcher file: {procs}")
    eq({x["rank"] for x in procs}, {-1}, "launcher file: process ranks")
    # 2.1: one job, which torchrun's rendezvous names (its run id "none" names none)
    job = job_of_files(c, d, ["t-.gpdl", "t-0.gpdl", "t-1.gpdl"])
    check(job.startswith("torchelastic:") or (job.startswith("master:") and job.endswith(f":{port}")),
          f"torchrun's job: {job!r}")


def job_of_files(c, d, names):
    """The job every file in d names in its header (`gprof-dl info`'s job
    line): one, not empty."""
    jobs = {name: info(c, os.path.join(d, name))[0].get("job", "") for name in names}
    eq(len(set(jobs.values())), 1, f"one job in every file: {jobs}")
    job = next(iter(jobs.values()))
    check(job and job != "unknown", f"the files name no job: {jobs}")
    return job


def case_dist_job_ids(c):
    """The plain launcher of examples/ddp_train.py (its own port, RANK and
    MASTER_* for each rank), twice: every file of a run names the same job,
    and the two runs' jobs differ."""
    py = "/usr/bin/python3"
    if subprocess.run([py, "-c", "import torch"], capture_output=True).returncode != 0:
        print(f"SKIP: {py} has no torch")
        sys.exit(SKIP)
    script = os.path.join(os.path.dirname(os.path.dirname(c.src)), "examples", "ddp_train.py")
    jobs = []
    for run in range(2):
        d = tempfile.mkdtemp(dir=c.tmp)
        _, (ranks, launcher) = run_ranks(c, "t-%q{RANK}.gpdl", [py, script, "launch", "--world", "2", "--steps", "3"],
                                         cwd=d)
        eq({r: v[2:] for r, v in ranks.items()}, {0: ("exit 0", "t-0.gpdl"), 1: ("exit 0", "t-1.gpdl")},
           f"run {run}: ranks reported")
        jobs.append(job_of_files(c, d, ["t-.gpdl", "t-0.gpdl", "t-1.gpdl"]))
        check(re.fullmatch(r"master:127\.0\.0\.1:\d+", jobs[-1]), f"run {run}: the job {jobs[-1]!r}")
    check(jobs[0] != jobs[1], f"two runs, one job: {jobs}")


NEEDS_NVTX = {"installed", "ctypes", "threads", "distinct_names", "domains", "unbalanced", "exit_code", "killed", "killed_segv", "forker", "execer",
              "signals", "stdout_passthrough", "dist_files", "dist_single_file", "dist_killed",
              "dist_killed_reaped", "dist_placeholders", "dist_copy_per_rank", "dist_launcher_killed"}


def main(cases=None, needs_nvtx=None, prefix="gpdl-e2e-"):
    """Runs the case --case of CASES (a module's globals: its case_* functions),
    skipping when it needs NVTX (NEEDS_NVTX, or every case when NEEDS_NVTX is
    True) and the build has none. The temporary directory is world-readable:
    a case may run a program that drops its privileges."""
    cases = globals() if cases is None else cases
    needs_nvtx = NEEDS_NVTX if needs_nvtx is None else needs_nvtx
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--progs", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--have-nvtx", default="1")
    ap.add_argument("--nvtx-lib", default="")
    ap.add_argument("--build", default="")
    ap.add_argument("--torch2-python", default="")
    ap.add_argument("--case", required=True)
    args = ap.parse_args()
    if (needs_nvtx is True or args.case in needs_nvtx) and args.have_nvtx != "1":
        print("SKIP: built without NVTX headers (no CUDA toolkit)")
        return SKIP
    fn = cases.get("case_" + args.case)
    if not fn:
        print(f"unknown case {args.case}")
        return 1
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        os.chmod(tmp, 0o755)
        try:
            fn(Ctx(args, tmp))
        except Failure as e:
            print(f"FAIL {args.case}: {e}")
            return 1
    print(f"PASS {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
