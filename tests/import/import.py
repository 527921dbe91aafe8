#!/usr/bin/env python3
"""End-to-end tests of `gprof-dl import`: JSON traces made here (a
Kineto-style GPU trace from gen_kineto.py, real traces of torch.profiler)
are imported with the built gprof-dl, read back through `gprof-dl export
--chrome` and `summary --format json`, and compared with what the JSON
itself says, computed here independently of the C code: per event name and
type, the count and the total duration in nanoseconds.

Cases: kineto_gen, cli, summary_roundtrip, summary_json, torch,
torch_shapes, torch_phases and torch_ops (with --python: the torch to profile
with), fixes, zero_dur, many_threads, phases_order,
drops.
Exit status: 0 pass, 1 fail, 77 skip (no torch)."""
import argparse
import collections
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))

# The category -> type table of gprof-dl-import(1), written out again here so
# that the C code is checked against the documentation, not against itself.
KINETO_TYPES = {
    "cpu_op": "Operator", "user_annotation": "UserDefined", "python_function": "PythonOp",
    "cuda_runtime": "CudaRuntime", "cuda_driver": "CudaRuntime", "kernel": "Kernel",
    "gpu_memcpy": "Memcpy", "gpu_memset": "Memset", "gpu_user_annotation": "UserDefined",
}
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"}
# torch's c10d names a collective's work BACKEND:OP; such a host op is
# Communication (gprof-dl-import(1))
COMM_CALL = re.compile(r"(?i)(gloo|nccl|mpi|ucc):.")
# Kineto's span of the profiler's own window: the trace's recorded interval,
# no event (gprof-dl-import(1))
PROFILER_SPAN = re.compile(r"PyTorch Profiler \(\d+\)$")
# torch.optim's record_functions: Operators, as in gprof-dl's own traces
OPTIM_OPS = ("Optimizer.step#", "Optimizer.zero_grad#")
# the phases an import recovers from a torch.profiler trace (not in its JSON)
PHASES = ("Forward", "Backward", "Optimization")


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def eq(actual, expected, what):
    check(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")


def ns(us):
    """A JSON microsecond value as nanoseconds (three decimals at most)."""
    return round(us * 1000)


class Ctx:
    def __init__(self, args, tmp):
        self.gpdl = args.gprof_dl
        self.tmp = tmp
        self.example_prog = args.example_prog
        self.python = args.python
        self.sanitized = args.sanitized

    def path(self, name):
        return os.path.join(self.tmp, name)

    def run(self, *args, status=0):
        p = subprocess.run([self.gpdl, *args], capture_output=True)
        if status is not None and p.returncode != status:
            raise Failure(f"gprof-dl {' '.join(args)}: status {p.returncode}, expected {status}\n"
                          f"stdout: {p.stdout.decode(errors='replace')}\n"
                          f"stderr: {p.stderr.decode(errors='replace')}")
        return p

    def import_(self, src, out=None, *extra):
        out = out or self.path(os.path.basename(src).split(".json")[0] + ".gpdl")
        self.run("import", src, "-o", out, "--force", *extra)
        return out

    def chrome(self, trace):
        out = trace + ".export.json"
        self.run("export", "--chrome", trace, "-o", out, "--force")
        with open(out, encoding="utf-8") as f:
            return json.load(f)

    def summary(self, trace):
        p = self.run("summary", trace, "--format", "json", "--time-unit", "ns")
        return json.loads(p.stdout)


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def events_of(doc):
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def expected_kineto(doc):
    """(name, type) -> [count, total ns] of what an import must hold."""
    want = collections.defaultdict(lambda: [0, 0])
    for e in events_of(doc):
        ph = e.get("ph")
        if ph == "X":
            cat = e.get("cat")
            typ = KINETO_TYPES.get(cat, "UserDefined")
            name = e["name"]
            if PROFILER_SPAN.match(name):
                continue
            if typ == "UserDefined" and cat not in GPU_CATS and name.startswith(OPTIM_OPS):
                typ = "Operator"
            if cat == "kernel" and "nccl" in name.lower():
                typ = "Communication"
            if cat in ("cpu_op", "user_annotation") and COMM_CALL.match(name):
                typ = "Communication"
            if cat in ("user_annotation", "cpu_op") and name.startswith("ProfilerStep#"):
                typ = "ProfileStep"
            want[(name, typ)][0] += 1
            want[(name, typ)][1] += ns(e.get("dur", 0))
        elif ph == "i" and e.get("s") != "g" and e.get("name") == "[memory]":
            want[("[memory]", "Memory")][0] += 1
    return want


def imported(chrome, phases=False):
    """(name, type) -> [count, total ns] from gprof-dl's export of an import:
    of the file's events, or (phases) of the phases the import recovered."""
    got = collections.defaultdict(lambda: [0, 0])
    for e in chrome["traceEvents"]:
        if e.get("ph") not in ("X", "i"):
            continue
        typ = e.get("args", {}).get("type")
        if (typ in PHASES) != phases:
            continue
        name = e.get("args", {}).get("recorded_name", e["name"])
        got[(name, typ)][0] += 1
        got[(name, typ)][1] += ns(e.get("dur", 0))
    return got


def compare_counts(got, want, what):
    missing = {k: v for k, v in want.items() if got.get(k) != v}
    extra = {k: v for k, v in got.items() if k not in want}
    if missing or extra:
        lines = [f"  {k}: expected {v}, got {got.get(k)}" for k, v in sorted(missing.items())]
        lines += [f"  unexpected {k}: {v}" for k, v in sorted(extra.items())]
        raise Failure(f"{what}:\n" + "\n".join(lines[:30]))


# ---- cases -------------------------------------------------------------------

def gen(c, name, steps=6, **kw):
    out = c.path(name)
    args = [sys.executable, os.path.join(HERE, "gen_kineto.py"), out, "--steps", str(steps)]
    for k, v in kw.items():
        args += [f"--{k}", str(v)]
    subprocess.run(args, check=True)
    return out


def case_kineto_gen(c):
    src = gen(c, "gen.json", steps=8, rank=1, world=4)
    doc = load_json(src)
    want = expected_kineto(doc)
    for path in (src, gen(c, "gen.json.gz", steps=8, rank=1, world=4)):
        trace = c.import_(path)
        ch = c.chrome(trace)
        compare_counts(imported(ch), want, f"import of {os.path.basename(path)}")
        other = ch["otherData"]
        eq(other["rank"], 1, "rank")
        eq(ch.get("distributedInfo", {}).get("world_size"), 4, "world size")
        eq(other["pid"], 31337, "pid")
        eq(len(ch.get("deviceProperties", [])), 1, "devices")
        eq(ch["deviceProperties"][0]["numSms"], 108, "SMs")
        # every GPU event on a stream of device 0, every host event on 31337
        for e in ch["traceEvents"]:
            if e.get("ph") != "X":
                continue
            if e["cat"] in GPU_CATS:
                eq((e["pid"], e["args"].get("device")), (0, 0), f"{e['name']}: device")
                check(e["tid"] in (7, 13), f"{e['name']}: stream {e['tid']}")
            elif e["cat"] != "user_annotation" or e["name"] != "PyTorch Profiler (0)":
                eq(e["pid"], 31337, f"{e['name']}: pid")
        # correlation ids tie each launch to its GPU work
        launches = {e["args"]["correlation"] for e in ch["traceEvents"]
                    if e.get("ph") == "X" and e["cat"] == "cuda_runtime" and "correlation" in e["args"]}
        work = {e["args"]["correlation"] for e in ch["traceEvents"]
                if e.get("ph") == "X" and e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset")}
        eq(launches & work, launches, "every runtime launch has its GPU work")
        kern = [e for e in ch["traceEvents"] if e.get("name", "").startswith("void cutlass")]
        eq(kern[0]["args"]["grid"], [2, 32, 1], "grid")
        eq(kern[0]["args"]["registers per thread"], 232, "registers")
        # the summary reads it
        s = c.summary(trace)
        eq(s["window"]["source"], "ProfileStep", "window from the ProfilerStep ranges")
        eq(s["window"]["steps"], 8, "steps")
    info = c.run("info", trace).stdout.decode()
    check("Kernel" in info and "Communication" in info and "Memcpy" in info, "info by type")


def case_cli(c):
    src = gen(c, "cli.json", steps=2)
    gz = gen(c, "cli2.json.gz", steps=2)
    d = tempfile.mkdtemp(dir=c.tmp)
    a = shutil.copy(src, os.path.join(d, "run.json"))
    b = shutil.copy(gz, os.path.join(d, "run2.json.gz"))
    p = c.run("import", a)
    check(b"imported" in p.stderr and b"PyTorch profiler" in p.stderr, f"no summary line: {p.stderr!r}")
    c.run("import", "-q", b)
    eq(sorted(os.listdir(d)), ["run.gpdl", "run.json", "run2.gpdl", "run2.json.gz"], "default names")
    p = c.run("import", a, status=1)
    check(b"exists" in p.stderr and b"--force" in p.stderr, f"overwrote without --force: {p.stderr!r}")
    c.run("import", a, "--force", "-q")
    odd = shutil.copy(src, os.path.join(d, "trace.data"))
    c.run("import", "-q", odd)
    check(os.path.exists(os.path.join(d, "trace.data.gpdl")), "default name of an odd file")
    bad = os.path.join(d, "bad.json")
    with open(bad, "w") as f:
        f.write('{"traceEvents": [{"ph": "X", "name": nope}]}')
    p = c.run("import", bad, status=1)
    err = p.stderr.decode()
    check("bad.json" in err and "byte 37" in err, f"bad JSON message: {err!r}")
    check(not os.path.exists(os.path.join(d, "bad.gpdl")), "output left behind for bad JSON")
    p = c.run("import", status=2)
    check(b"gprof-dl import --help" in p.stderr, "usage error without a pointer to --help")
    c.run("import", a, "b", status=2)
    c.run("import", a, "-o", "-", status=2)
    p = c.run("import", "--help")
    check(b"usage: gprof-dl import" in p.stdout, "help")


def normalized(summary):
    for t in summary.get("traces", []):
        t.pop("path", None)
        t.pop("size", None)
    return summary


def roundtrip(c, trace):
    s1 = normalized(c.summary(trace))
    j = trace + ".rt.json"
    c.run("export", "--chrome", trace, "-o", j, "--force")
    back = c.import_(j, trace + ".rt.gpdl")
    s2 = normalized(c.summary(back))
    if s1 != s2:
        a = json.dumps(s1, indent=1, sort_keys=True).splitlines()
        b = json.dumps(s2, indent=1, sort_keys=True).splitlines()
        import difflib
        diff = "\n".join(list(difflib.unified_diff(a, b, lineterm=""))[:60])
        raise Failure(f"summary of {os.path.basename(trace)} changed through export and import:\n{diff}")


def case_summary_roundtrip(c):
    if c.example_prog:  # a trace recorded by gprof-dl run itself
        recorded = c.path("example.gpdl")
        c.run("run", "-q", "-o", recorded, "--", c.example_prog, "6")
        roundtrip(c, recorded)
    else:
        print("note: the bundled example is not built (no NVTX headers): round trip of generated traces only")
    roundtrip(c, c.import_(gen(c, "rt.json", steps=4)))


def case_summary_json(c):
    """`summary FILE.json` reads the JSON directly (trace_open_any)."""
    src = gen(c, "direct.json.gz", steps=3)
    p = c.run("summary", src, "--format", "json", "--time-unit", "ns", status=None)
    if p.returncode != 0 and b"not a gprof-dl trace" in p.stderr:
        print("SKIP: summary does not open JSON traces yet (trace_open_any not wired in)")
        sys.exit(SKIP)
    eq(p.returncode, 0, f"summary of a JSON trace: {p.stderr.decode(errors='replace')}")
    direct = normalized(json.loads(p.stdout))
    via = normalized(c.summary(c.import_(src)))
    eq(direct, via, "summary of the JSON and of its import")


# ---- torch.profiler ----------------------------------------------------------

TORCH_PROG = os.path.join(HERE, "torch_prog.py")


def torch_python():
    """An interpreter that has torch: this one, or Debian's."""
    for py in (sys.executable, "/usr/bin/python3"):
        if py and os.path.exists(py) and subprocess.run(
                [py, "-c", "import torch"], capture_output=True).returncode == 0:
            return py
    return None


def torch_case(c, shapes):
    py = torch_python()
    if not py:
        print("SKIP: torch is not installed (apt-get install python3-torch)")
        sys.exit(SKIP)
    out = c.path("torch.json")
    meta = c.path("torch-meta.json")
    args = [py, TORCH_PROG, out, meta] + (["--record-shapes"] if shapes else [])
    p = subprocess.run(args, capture_output=True)
    if p.returncode != 0:
        raise Failure(f"torch program failed: {p.stderr.decode(errors='replace')}")
    with open(meta) as f:
        torch_counts = json.load(f)
    doc = load_json(out)
    evs = events_of(doc)
    check(len(evs) > 100, f"too few events from torch.profiler: {len(evs)}")
    # what the JSON says, per name: count and total duration
    want = collections.defaultdict(lambda: [0, 0])
    legacy = isinstance(doc, list)
    for e in evs:
        if e.get("ph") != "X":
            continue
        name = e["name"]
        if PROFILER_SPAN.match(name):
            continue
        if legacy or e.get("cat") == "cpu_op":
            typ = "ProfileStep" if name.startswith("ProfilerStep#") else "Operator"
        else:
            typ = KINETO_TYPES.get(e.get("cat"), "UserDefined")
            if typ == "UserDefined" and name.startswith(OPTIM_OPS):
                typ = "Operator"
            if typ in ("UserDefined", "Operator") and name.startswith("ProfilerStep#"):
                typ = "ProfileStep"
        want[(name, typ)][0] += 1
        want[(name, typ)][1] += ns(e["dur"])
    trace = c.import_(out)
    ch = c.chrome(trace)
    got = imported(ch)
    got.pop(("[memory]", "Memory"), None)
    compare_counts(got, want, "torch.profiler trace")
    # torch's own table agrees on the operator everyone looks at
    addmm = sum(v[0] for (n, _), v in got.items() if n == "aten::addmm")
    eq(addmm, torch_counts["aten::addmm"], "aten::addmm calls: import vs key_averages()")
    check(addmm >= 6, f"aten::addmm calls: {addmm}")
    steps = sum(v[0] for (n, t), v in got.items() if t == "ProfileStep")
    eq(steps, torch_counts["steps"], "ProfilerStep ranges")
    total_ops = sum(v[1] for (n, t), v in want.items() if t == "Operator")
    s = c.summary(trace)
    phases = sum(v[0] for v in imported(ch, phases=True).values())
    eq(phases, 3 * torch_counts["steps"], "Forward, Backward and Optimization ranges recovered")
    check(s["events"]["total"] == sum(v[0] for v in want.values()) + phases,
          "summary's event count")
    check(total_ops > 0, "no operator time")


def case_torch(c):
    torch_case(c, False)


def rows_of(summary, view):
    """name -> row of a view of `summary --format json`, at any depth."""
    rows = {}

    def walk(rs):
        for r in rs:
            rows[r["name"]] = r
            walk(r.get("children", []))

    for sec in summary["tables"][view]["sections"]:
        walk(sec["rows"])
    return rows


def case_torch_phases(c):
    """A real torch.profiler trace of a training loop with a schedule, by the
    torch given with --python (1.13's legacy array or 2.x's Kineto JSON):
    the profiler's span is the window, no UserDefined row; torch.optim's
    record_functions are operators; the Model view has the phases."""
    py = c.python or torch_python()
    if not py or subprocess.run([py, "-c", "import torch"], capture_output=True).returncode:
        print(f"SKIP: no torch for {py or 'python'}")
        sys.exit(SKIP)
    for flags in ([], ["--zero-grad-after"]):
        torch_phases(c, py, flags)


def model_forward_ns(doc):
    """The model's forward in a torch_prog.py trace, per step, from the
    file: from the first start to the last end of its modules' top
    operators (aten::linear, aten::relu) on the step's thread."""
    xs = [e for e in events_of(doc) if e.get("ph") == "X"]
    total = 0
    for s in (e for e in xs if e["name"].startswith("ProfilerStep#")):
        m = [e for e in xs if (e["pid"], e["tid"]) == (s["pid"], s["tid"])
             and s["ts"] <= e["ts"] < s["ts"] + s["dur"] and e["name"] in ("aten::linear", "aten::relu")]
        check(m, f"no forward in {s['name']}")
        total += ns(max(e["ts"] + e["dur"] for e in m) - min(e["ts"] for e in m))
    return total


def torch_phases(c, py, flags):
    out, meta = c.path("phases.json"), c.path("phases-meta.json")
    p = subprocess.run([py, TORCH_PROG, out, meta, *flags], capture_output=True)
    if p.returncode != 0:
        raise Failure(f"torch program failed: {p.stderr.decode(errors='replace')}")
    with open(meta) as f:
        steps = json.load(f)["steps"]
    doc = load_json(out)
    spans = [e for e in events_of(doc) if e.get("ph") == "X" and PROFILER_SPAN.match(e["name"])]
    trace = c.import_(out)
    s = c.run("summary", trace, "--format", "json", "--time-unit", "ns", "--view", "model",
              "--view", "operator", "--view", "userdefined")
    s = json.loads(s.stdout)
    ud = rows_of(s, "userdefined")
    check(not [n for n in ud if "PyTorch Profiler" in n], f"a UserDefined profiler row: {list(ud)}")
    eq(s["window"]["steps"], steps, "steps")
    if isinstance(doc, dict):  # Kineto: its span is the recorded interval
        eq(len(spans), 1, "the profiler's span in the JSON")
        other = c.chrome(trace)["otherData"]
        eq(other["duration_ns"], ns(spans[0]["dur"]), "recorded interval = the span's duration")
        eq(other["start_ns"], doc["baseTimeNanoseconds"] + ns(spans[0]["ts"]),
           "recorded interval's start = the span's")
    ops = rows_of(s, "operator")
    for name in ("Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad"):
        check(name in ops, f"{name} not in the Operator view: {sorted(ops)[:20]}")
        eq(ops[name]["calls"], steps, f"{name} calls")
    model = rows_of(s, "model")
    step = model["ProfileStep"]
    eq(step["calls"], steps, "ProfileStep calls")
    total = 0
    for phase in ("Forward", "Backward", "Optimization"):
        check(phase in model, f"no {phase} row in the Model view: {sorted(model)}")
        eq(model[phase]["calls"], steps, f"{phase} calls")
        check(model[phase]["cpu_total_ns"] > 0, f"{phase}: no time")
        total += model[phase]["cpu_total_ns"]
    check(total <= step["cpu_total_ns"],
          f"Forward + Backward + Optimization {total} > the steps' {step['cpu_total_ns']}")
    # the Optimization range is the optimizer step's own extent
    eq(model["Optimization"]["cpu_total_ns"], ops["Optimizer.step#SGD.step"]["cpu_total_ns"],
       "Optimization time = Optimizer.step's")
    # the forward is where the model ran, zero_grad() before it or after
    fwd, want = model["Forward"]["cpu_total_ns"], model_forward_ns(doc)
    print(f"note: {' '.join(flags) or 'zero_grad first'}: Forward {fwd / 1e6:.3f} ms, "
          f"the model's forward in the file {want / 1e6:.3f} ms")
    check(fwd >= 0.8 * want, f"{' '.join(flags) or 'zero_grad first'}: Forward {fwd} ns, "
          f"less than 80 % of the model's forward {want} ns")


def case_fixes(c):
    """What an import drops or repairs is counted by reason, and info and
    summary say so (D11); a UTF-8 byte order mark is no error."""
    src = c.path("fixes.json")
    evs = [
        {"ph": "X", "cat": "cpu_op", "name": "ok", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
        {"ph": "X", "cat": "cpu_op", "name": "neg", "pid": 1, "tid": 1, "ts": 11, "dur": -1},
        {"ph": "X", "cat": "cpu_op", "name": "neg", "pid": 1, "tid": 2, "ts": 12, "dur": -2},
        {"ph": "X", "cat": "cpu_op", "name": "far", "pid": 1, "tid": 1, "ts": 1e300, "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "nan", "pid": 1, "tid": 1, "ts": "soon", "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "long", "pid": 1, "tid": 1, "ts": 13, "dur": 1e300},
    ]
    with open(src, "wb") as f:
        f.write(b"\xef\xbb\xbf" + json.dumps({"traceEvents": evs}).encode())
    trace = c.import_(src)
    s = c.summary(trace)
    eq(s["traces"][0]["drop_reasons"], {"timestamp out of range": 1, "timestamp not a number": 1,
                                        "negative duration": 2, "duration out of range": 1},
       "summary's drop reasons")
    eq(s["events"]["dropped"], 2, "events dropped")
    eq(s["events"]["total"], 4, "events kept")
    info = c.run("info", trace).stdout.decode()
    for line in ("dropped            1 event: timestamp out of range",
                 "dropped            1 event: timestamp not a number",
                 "repaired           2 events: negative duration",
                 "repaired           1 event: duration out of range",
                 "drops              2 records lost in 1 thread, 0 of them to a full ring"):
        check(line in info, f"info lacks {line!r}:\n{info}")
    text = c.run("summary", trace).stdout.decode()
    check("2 events repaired by its import: negative duration" in text, f"summary text:\n{text}")
    check("full ring" not in text, "the import's drops said to be a full ring's")


def operator_calls(c, trace):
    """name -> calls in the Operator view of `summary --format json`."""
    p = c.run("summary", trace, "--format", "json", "--view", "operator", "--top", "0")
    calls = collections.Counter()

    def walk(rs):
        for r in rs:
            calls[r["name"]] += r["calls"]
            walk(r.get("children", []))

    for sec in json.loads(p.stdout)["tables"]["operator"]["sections"]:
        walk(sec["rows"])
    return calls


def file_operators(doc):
    """name -> "X" events of each host operator in a torch.profiler JSON."""
    return collections.Counter(
        e["name"] for e in events_of(doc)
        if e.get("ph") == "X" and e.get("cat", "cpu_op") == "cpu_op"
        and not e["name"].startswith("ProfilerStep#"))


def case_zero_dur(c):
    """Ranges of duration 0 are never parents (torch's rule): siblings that
    share a whole-microsecond timestamp are not each other's calls, and are
    not folded together as a call that redispatches to itself."""
    src = c.path("zero.json")
    evs = [
        {"ph": "X", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
        {"ph": "X", "name": "aten::resolve_conj", "pid": 1, "tid": 1, "ts": 15, "dur": 0},
        {"ph": "X", "name": "aten::resolve_conj", "pid": 1, "tid": 1, "ts": 15, "dur": 0},
        {"ph": "X", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 30, "dur": 0},
        {"ph": "X", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 30, "dur": 0},
        {"ph": "X", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 30, "dur": 0},
        # a real redispatch still folds: div_ in div_, its only child
        {"ph": "X", "name": "aten::div_", "pid": 1, "tid": 1, "ts": 40, "dur": 5},
        {"ph": "X", "name": "aten::div_", "pid": 1, "tid": 1, "ts": 41, "dur": 3},
    ]
    with open(src, "w") as f:
        json.dump(evs, f)
    calls = operator_calls(c, c.import_(src))
    eq(dict(calls), {"aten::addmm": 1, "aten::resolve_conj": 2, "aten::empty": 3,
                     "aten::div_": 1}, "operator calls")


def case_torch_ops(c):
    """A real torch.profiler trace of the whole loop (no schedule, so every
    operator is in the window): each operator's calls in the summary are
    the file's "X" events of its name. torch 1.13 writes whole microseconds,
    so short siblings share a timestamp with duration 0."""
    py = c.python or torch_python()
    if not py or subprocess.run([py, "-c", "import torch"], capture_output=True).returncode:
        print(f"SKIP: no torch for {py or 'python'}")
        sys.exit(SKIP)
    out, meta = c.path("ops.json"), c.path("ops-meta.json")
    p = subprocess.run([py, TORCH_PROG, out, meta, "--no-schedule"], capture_output=True)
    if p.returncode != 0:
        raise Failure(f"torch program failed: {p.stderr.decode(errors='replace')}")
    doc = load_json(out)
    want = file_operators(doc)
    zero = sum(1 for e in events_of(doc) if e.get("ph") == "X" and e.get("dur") == 0)
    print(f"note: {zero} events of duration 0 in the file")
    got = operator_calls(c, c.import_(out))
    if isinstance(doc, dict):
        # Kineto: torch 2 records a redispatch twice (aten::div_ in
        # aten::div_), which torch's tables and gprof-dl fold alike
        for name in ("aten::div_",):
            want.pop(name, None)
            got.pop(name, None)
    bad = {n: (k, got.get(n)) for n, k in want.items() if got.get(n) != k}
    check(not bad, "calls in the summary vs the file's events: " +
          ", ".join(f"{n} {g} instead of {k}" for n, (k, g) in sorted(bad.items())))
    eq(got["aten::addmm"], json.load(open(meta))["aten::addmm"], "aten::addmm vs key_averages()")


def peak_kib(*cmd):
    """Runs cmd; its peak resident memory (KiB), of that child alone."""
    pid = os.spawnv(os.P_NOWAIT, cmd[0], list(cmd))
    _, status, ru = os.wait4(pid, 0)
    check(os.waitstatus_to_exitcode(status) == 0, f"{' '.join(cmd)}: status {status}")
    return ru.ru_maxrss


def case_many_threads(c):
    """The summary of an import of N one-event threads grows by at most 1 KiB
    a thread (8 KiB in a sanitizer build: ASan's redzones): 13 KiB a thread before (the
    store's first 1,024 events of room on every thread, the host walk's
    16 frames)."""
    def threads(n):
        src = c.path(f"threads{n}.json")
        with open(src, "w") as f:
            json.dump({"traceEvents": [
                {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": t + 1,
                 "ts": 10 + t, "dur": 1} for t in range(n)]}, f)
        out = c.path(f"threads{n}.gpdl")
        imp = peak_kib(c.gpdl, "import", "-q", "-f", src, "-o", out)
        null = os.open(os.devnull, os.O_WRONLY)
        saved = os.dup(1)
        os.dup2(null, 1)
        try:
            summ = peak_kib(c.gpdl, "summary", out)
        finally:
            os.dup2(saved, 1)
            os.close(null)
            os.close(saved)
        eq(c.run("info", out).stdout.decode().count("\n") > n, True, f"info of {n} threads")
        return imp, summ

    small, large, n = 1000, 20000, 19000
    (i0, s0), (i1, s1) = threads(small), threads(large)
    bound = 8192 if c.sanitized else 1024
    per_import, per_summary = (i1 - i0) * 1024 / n, (s1 - s0) * 1024 / n
    print(f"note: import {i0} -> {i1} KiB ({per_import:.0f} B a thread), "
          f"summary {s0} -> {s1} KiB ({per_summary:.0f} B a thread)")
    check(per_summary <= bound, f"summary: {per_summary:.0f} B a thread, more than {bound}")
    check(per_import <= bound, f"import: {per_import:.0f} B a thread, more than {bound}")


def case_phases_order(c):
    """The forward is found where the model ran, not after the last
    zero_grad: DistributedDataParallel.forward, then zero_grad(), the loss
    and the backward (the Forward was the loss's 0.05 ms)."""
    def x(name, cat, ts, dur, tid=1):
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}
    evs = []
    for k in range(2):
        t = k * 100000
        evs += [
            x(f"ProfilerStep#{k}", "user_annotation", t, 100000),
            x("DistributedDataParallel.forward", "user_annotation", t + 1000, 44000),
            x("aten::linear", "cpu_op", t + 2000, 40000),
            x("Optimizer.zero_grad#SGD.zero_grad", "user_annotation", t + 46000, 100),
            x("aten::zero_", "cpu_op", t + 46010, 50),
            x("aten::mse_loss", "cpu_op", t + 46200, 50),
            x("autograd::engine::evaluate_function: MseLossBackward0", "cpu_op", t + 47000, 30000),
            x("Optimizer.step#SGD.step", "user_annotation", t + 80000, 5000),
        ]
    # and zero_grad() first: the forward after it
    t = 200000
    evs += [
        x("ProfilerStep#2", "user_annotation", t, 100000),
        x("aten::zeros", "cpu_op", t + 100, 10),
        x("Optimizer.zero_grad#SGD.zero_grad", "user_annotation", t + 200, 100),
        x("DistributedDataParallel.forward", "user_annotation", t + 1000, 44000),
        x("aten::mse_loss", "cpu_op", t + 46200, 50),
        x("autograd::engine::evaluate_function: MseLossBackward0", "cpu_op", t + 47000, 30000),
        x("Optimizer.step#SGD.step", "user_annotation", t + 80000, 5000),
    ]
    src = c.path("order.json")
    with open(src, "w") as f:
        json.dump({"traceEvents": evs}, f)
    ch = c.chrome(c.import_(src))
    fwd = sorted((e["ts"], e["dur"]) for e in ch["traceEvents"]
                 if e.get("ph") == "X" and e.get("args", {}).get("type") == "Forward")
    eq([(round(ts), round(d * 1000)) for ts, d in fwd],
       [(1000, 45250000), (101000, 45250000), (201000, 45250000)],
       "Forward ranges (ts us, dur ns): from DistributedDataParallel.forward to the loss")


def case_drops(c):
    """Every event an import does not take as it is, counted with its
    reason in import's last line, info and summary: "E" events with no "B"
    (which gave "imported 1 events" and nothing else), members of the wrong
    types; "B"/"E" pairs are ranges."""
    src = c.path("ends.json")
    evs = [{"ph": "E", "pid": 1, "tid": 1, "ts": 10 + i} for i in range(1000)]
    evs.append({"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 5, "dur": 1})
    with open(src, "w") as f:
        json.dump({"traceEvents": evs}, f)
    out = c.path("ends.gpdl")
    p = c.run("import", src, "-o", out)
    last = p.stderr.decode().splitlines()[-1]
    check(last.startswith("gprof-dl: imported 1 events on 1 tracks") and
          last.endswith("; dropped 1000: 1000 end without begin"), f"import's last line: {last!r}")
    s = c.summary(out)
    eq(s["traces"][0]["drop_reasons"], {"end without begin": 1000}, "summary's drop reasons")
    eq(s["events"]["dropped"], 1000, "summary: events dropped")
    info = c.run("info", out).stdout.decode()
    check("dropped            1000 events: end without begin" in info, f"info:\n{info}")

    x = {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "dur": 1}
    evs = [
        dict(x, name="ok", ts=1),
        dict(x, name="ts a string", ts="soon"),    # dropped: not a number
        dict(x, name="ts an object", ts={"a": 1}),  # dropped: not a number
        dict(x, name="dur negative", ts=2, dur=-1),  # kept, duration 0
        dict(x, name="dur an object", ts=3, dur={"a": 1}),  # kept, duration 0
        dict(x, name=7, ts=4),                     # kept, named "7"
        dict(x, name=["x"], ts=4),                 # kept, named ""
        dict(x, name="ph unknown", ph="Q", ts=5),  # dropped
        dict(x, name="ph a number", ph=7, ts=5),   # dropped
        dict(x, name="args an array", ts=6, args=[1]),  # kept, no args
        dict(x, name="pid an object", ts=7, pid={"a": 1}),  # kept on pid 0
        dict(x, name="tid null", ts=8, tid=None),  # kept on tid 0
        {"ph": "B", "name": "pair", "pid": 1, "tid": 2, "ts": 10},
        {"ph": "B", "name": "inner", "pid": 1, "tid": 2, "ts": 11},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 12},
        {"ph": "E", "pid": 1, "tid": 2, "ts": 20},
        {"ph": "B", "name": "never ends", "pid": 1, "tid": 3, "ts": 10},
        {"ph": "s", "name": "flow", "pid": 1, "tid": 1, "ts": 1, "id": 1},  # ignored
    ]
    src = c.path("types.json")
    with open(src, "w") as f:
        json.dump({"traceEvents": evs}, f)
    out = c.path("types.gpdl")
    p = c.run("import", src, "-o", out)
    last = p.stderr.decode().splitlines()[-1]
    want = ("; dropped 5: 2 timestamp not a number, 2 phase not imported, 1 begin without end; "
            "repaired 6: 1 negative duration, 1 duration not a number, 1 name not a string, "
            "2 pid or tid not an integer or a string, 1 args not an object")
    check(last.endswith(want), f"import's last line: {last!r}, not ending {want!r}")
    check("imported 10 events" in last, f"import's last line: {last!r}")
    s = c.summary(out)
    eq(s["traces"][0]["drop_reasons"], {
        "timestamp not a number": 2, "phase not imported": 2, "begin without end": 1,
        "negative duration": 1, "duration not a number": 1, "name not a string": 1,
        "pid or tid not an integer or a string": 2, "args not an object": 1}, "drop reasons")
    eq(s["events"]["dropped"], 5, "events dropped")
    eq(s["events"]["total"], 10, "events kept")
    ch = c.chrome(out)
    pairs = sorted((e["name"], e["dur"]) for e in ch["traceEvents"]
                   if e.get("ph") == "X" and e["name"] in ("pair", "inner"))
    eq(pairs, [("inner", 1), ("pair", 10)], "B/E pairs as ranges (name, dur us)")


def case_torch_shapes(c):
    torch_case(c, True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--example-prog", default="")
    ap.add_argument("--case", required=True)
    ap.add_argument("--python", default="", help="torch_phases: the Python whose torch to use")
    ap.add_argument("--sanitized", action="store_true",
                    help="gprof-dl is built with ASan: memory bounds are looser")
    args = ap.parse_args()
    fn = globals().get("case_" + args.case)
    if not fn:
        print(f"unknown case {args.case}")
        return 1
    with tempfile.TemporaryDirectory(prefix="gpdl-import-") as tmp:
        try:
            fn(Ctx(args, tmp))
        except Failure as e:
            print(f"FAIL {args.case}: {e}")
            return 1
    print(f"PASS {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
