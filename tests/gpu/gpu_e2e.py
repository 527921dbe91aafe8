#!/usr/bin/env python3
"""End-to-end tests of gprof-dl's GPU collection (CUPTI), on a GPU:

  sample_counts  sample.cu's kernels, copies, sets, allocations and API calls,
                 exactly as many as it made, on the streams it used, each tied to
                 the call that launched it and to the NVTX range around that
                 call; the device's properties; the end-of-run nvprof tables;
                 stdout and exit status as in a bare run.
  cupti_absent   CUPTI that cannot be loaded: one line says so and what to do,
                 and the host data is still recorded.
  torch_cuda     a PyTorch CUDA training loop (torch_loop.py): kernels under
                 their operators, and the kernels of steps 10-29 against
                 torch.profiler's of the same steps in a run of their own.
  injection_env  what `gprof-dl run` puts in the target's environment for the
                 CUDA driver (CUDA_INJECTION64_PATH, --no-gpu, --cupti-lib): needs
                 no GPU.

The trace is read back through `gprof-dl export --csv` (csv module) and
`gprof-dl summary --format json` (json module). Exit status: 0 pass, 1 fail,
77 skip (ctest SKIP_RETURN_CODE) with a line saying why: no CUDA device, no
nvcc (the sample is not built), no torch 2 interpreter. Without a GPU the CUDA
driver never calls the collector (CUDA_INJECTION64_PATH is read at cuInit,
which needs libcuda.so), so nothing of CUPTI can be tested there; what can
(a CUDA program that finds no device runs under gprof-dl as without it) is
checked before the skip."""
import argparse
import collections
import csv
import json
import os
import re
import sys

MIB = 1 << 20


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from checks import FAILED, SKIP, Failure, Skip, check, eq, must, near, run_bounded, run_case, text  # noqa: E402


def kernel_base(name):
    """'void ns::scale<float>(float*, float, int)' -> 'scale'."""
    head = name.replace("(anonymous namespace)", "anon").split("(")[0].strip()
    head = re.sub(r"<.*>$", "", head).split()
    return head[-1].split("::")[-1] if head else ""


class Ctx:
    def __init__(self, args, tmp):
        self.a = args
        self.gpdl = args.gprof_dl
        self.tmp = tmp
        self.n = 0
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GPROF_DL_") and k not in ("PYTHONPATH", "LD_PRELOAD", "NVTX_INJECTION64_PATH",
                                                              "CUDA_INJECTION64_PATH")}
        env["GPROF_DL_CACHE_DIR"] = args.cache_dir
        env["PYTHONHASHSEED"] = "0"
        env["PYTHONUNBUFFERED"] = "1"
        self.env = env

    def path(self, name):
        self.n += 1
        return os.path.join(self.tmp, f"{self.n}-{name}")

    def bare(self, cmd, env=None):
        return run_bounded(cmd, env=env or self.env)

    def gprof(self, *args, status=0, env=None):
        p = run_bounded([self.gpdl, *args], env=env or self.env)
        if status is not None and p.returncode != status:
            raise Failure(f"gprof-dl {' '.join(args)}: status {p.returncode}, expected {status}\n"
                          f"stdout: {text(p.stdout)[-3000:]}\nstderr: {text(p.stderr)[-3000:]}")
        return p

    def record(self, cmd, opts=(), status=0, env=None):
        out = self.path("trace.gpdl")
        p = self.gprof("run", "-o", out, "--force", *opts, "--", *cmd, status=status, env=env)
        must(os.path.exists(out), f"no trace written at {out}")
        return out, p

    def summary(self, trace, *extra):
        p = self.gprof("summary", trace, "--format", "json", "--time-unit", "ns", *extra)
        return json.loads(p.stdout)

    def csv(self, trace):
        """{file stem: [row dict]} of `export --csv`."""
        out = self.path("csv")
        self.gprof("export", "--csv", trace, "-o", out, "--force", "--no-summary")
        tables = {}
        for f in os.listdir(out):
            if f.endswith(".csv"):
                with open(os.path.join(out, f), newline="", encoding="utf-8") as fh:
                    tables[f[:-4]] = list(csv.DictReader(fh))
        return tables


def num(v):
    return int(v) if v not in (None, "") else None


def table_rows(summary, key, section=None):
    """The rows of a summary table, flattened: [(path, row)]."""
    tables = summary.get("tables", {})
    must(key in tables, f"summary has no {key} table: {list(tables)}")
    out = []
    for sec in tables[key].get("sections", []):
        if section is not None and sec.get("title") not in (None, section):
            continue
        out.extend(flatten(sec.get("rows", [])))
    return out


def flatten(rows, prefix=""):
    for row in rows:
        path = prefix + str(row.get("name"))
        yield path, row
        yield from flatten(row.get("children", []), path + "/")


# nvprof-style lines of the end-of-run summary: "[Type:]  12.34%  1.2345ms  10  ...  Name"
NVPROF_ROW = re.compile(r"^\s*(?:[A-Za-z ]+:)?\s*([0-9.]+)%\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.+?)\s*$")


def cupti_warnings(stderr):
    """gprof-dl's own lines (not the table lines, "==PID== ...") that mention
    CUPTI: the line that says why collection is off or degraded."""
    return [ln for ln in stderr.splitlines() if "CUPTI" in ln and ln.startswith("gprof-dl")]


def nvprof_calls(stderr):
    """{name: calls} of every row of the nvprof tables printed by `gprof-dl run`."""
    calls = collections.Counter()
    for line in stderr.splitlines():
        m = NVPROF_ROW.match(line)
        if m:
            calls[m[7]] += int(m[3])
    return calls


# ---- the CUDA sample -----------------------------------------------------------

def sample_or_skip(c):
    """Runs the sample bare: its JSON report, or Skip without a device (after
    checking that under gprof-dl it finds no device either, and exits and
    prints the same)."""
    if not c.a.sample:
        raise Skip("the CUDA sample is not built: no nvcc, or GPDL_BUILD_CUDA_TESTS=OFF")
    bare = c.bare([c.a.sample])
    if bare.returncode == SKIP:
        why = text(bare.stderr).strip()
        check(why.startswith("sample: no CUDA device"), f"the sample's message without a device: {why!r}")
        _, p = c.record([c.a.sample], status=SKIP)
        eq(text(p.stdout), text(bare.stdout), "stdout of the sample without a device, under gprof-dl")
        check(why in text(p.stderr), f"the sample's message under gprof-dl: {text(p.stderr)[-2000:]}")
        if FAILED:
            raise Failure("without a device, the sample did not run under gprof-dl as without it")
        raise Skip(f"no CUDA device: skipped ({why})")
    must(bare.returncode == 0, f"bare run of the sample: status {bare.returncode}\n{text(bare.stderr)}")
    eq(text(bare.stderr), "", "the sample's stderr")
    rep = json.loads(bare.stdout)
    must(rep.get("verified") is True, f"the sample's results are wrong: {rep}")
    for key, want in (("scale", 10), ("add_one", 5), ("htod", 3), ("dtoh", 2), ("copy_bytes", MIB),
                      ("memsets", 4), ("memset_bytes", 65536), ("allocs", 3), ("alloc_bytes", MIB),
                      ("grid", 1024), ("block", 256)):
        eq(rep.get(key), want, f"the sample's own count {key}")
    return bare, rep


def join_api(api_by_corr, pid, corr, what):
    """The one runtime call (cuda*, not a driver call cu*) with WHAT's
    correlation id."""
    calls = [r for r in api_by_corr.get((pid, corr), []) if r["name"].startswith("cuda")]
    eq(len(calls), 1, f"{what}: runtime calls with its correlation id {corr}")
    return calls[0] if calls else None


def case_sample_counts(c):
    bare, rep = sample_or_skip(c)
    trace, p = c.record([c.a.sample])
    eq(p.returncode, bare.returncode, "the sample's exit status under gprof-dl")
    eq(text(p.stdout), text(bare.stdout), "the sample's stdout under gprof-dl")
    err = text(p.stderr)
    eq(cupti_warnings(err), [], "gprof-dl's warnings about CUPTI")
    check_sample_trace(c, trace, rep, err)


def check_sample_trace(c, trace, rep, err):
    """What the trace of the sample must hold: rep is the sample's report, err
    what `gprof-dl run` printed on stderr."""
    t = c.csv(trace)
    procs = [r for r in t["processes"] if "gpu_sample" in r["command_line"]]
    must(len(procs) == 1, f"processes.csv: the sample's process: {t['processes']}")
    pid = int(procs[0]["pid"])
    eq(procs[0]["exit_status"], "0", "processes.csv: the sample's exit status")

    # Device properties, as the sample read them.
    devs = t["devices"]
    eq([d["name"] for d in devs], [rep["device"]], "devices.csv: names")
    if devs:
        eq(int(devs[0]["sm_count"]), rep["sm_count"], "devices.csv: sm_count")
        eq((int(devs[0]["cc_major"]), int(devs[0]["cc_minor"])), tuple(rep["cc"]), "devices.csv: compute capability")
        eq(int(devs[0]["total_memory_bytes"]), rep["total_memory"], "devices.csv: total memory")
    info = c.gprof("info", trace)
    check(rep["device"] in text(info.stdout), f"gprof-dl info does not show the device {rep['device']!r}:\n"
          f"{text(info.stdout)}")

    # API calls: the sample's own, exactly.
    api = [r for r in t["runtime"] if int(r["pid"]) == pid]
    names = collections.Counter(r["name"] for r in api)
    for name, n in (("cudaLaunchKernel", 15), ("cudaMemcpy", 4), ("cudaMemcpyAsync", 1), ("cudaMemset", 4),
                    ("cudaMalloc", 3), ("cudaFree", 3), ("cudaMallocHost", 1), ("cudaFreeHost", 1),
                    ("cudaStreamCreate", 2), ("cudaStreamDestroy", 2), ("cudaStreamSynchronize", 1)):
        eq(names.get(name, 0), n, f"runtime.csv: {name} calls")
    check(all(int(r["tid"]) == pid for r in api), f"runtime calls off the sample's one thread: "
          f"{sorted({r['tid'] for r in api})} (pid {pid})")
    api_by_corr = collections.defaultdict(list)
    for r in api:
        if r["correlation"]:
            api_by_corr[(pid, int(r["correlation"]))].append(r)

    # Kernels: 10 scale on one stream, 5 add_one on another, each after its launch.
    kernels = [r for r in t["kernels"] if int(r["pid"]) == pid]
    by_name = collections.defaultdict(list)
    for k in kernels:
        by_name[kernel_base(k["name"])].append(k)
    eq({n: len(v) for n, v in by_name.items()}, {"scale": 10, "add_one": 5}, "kernels by name")
    streams = {n: {(k["device"], k["stream"]) for k in v} for n, v in by_name.items()}
    eq(len(streams.get("scale", ())), 1, "streams of the scale kernels")
    eq(len(streams.get("add_one", ())), 1, "streams of the add_one kernels")
    sa = next(iter(streams.get("scale", [None])))
    sb = next(iter(streams.get("add_one", [None])))
    check(sa != sb, f"scale and add_one on the same stream {sa}")
    for k in kernels:
        what = f"kernel {k['name']} at {k['start_ns']}"
        eq((int(k["grid_x"]), int(k["block_x"])), (rep["grid"], rep["block"]), f"{what}: grid and block")
        call = join_api(api_by_corr, pid, num(k["correlation"]), what)
        if call:
            check(call["name"].startswith("cudaLaunchKernel"), f"{what}: launched by {call['name']}")
            check(int(k["start_ns"]) >= int(call["start_ns"]),
                  f"{what}: starts before its launch call ({call['start_ns']})")

    # Copies and sets: 3 HtoD and 1 DtoH sync on the default stream, 1 DtoH async
    # on stream A into pinned memory, 4 sets of 64 KiB on the default stream.
    copies = [r for r in t["memcpy"] if int(r["pid"]) == pid]
    sets = [r for r in t["memset"] if int(r["pid"]) == pid]
    kinds = collections.Counter((r["copy_kind"], int(r["bytes"])) for r in copies)
    eq(dict(kinds), {("HtoD", MIB): 3, ("DtoH", MIB): 2}, "copies by direction and size")
    eq(sorted(int(r["bytes"]) for r in sets), [65536] * 4, "memset sizes")
    async_copies = [r for r in copies if r["async"] == "1"]
    eq([(r["copy_kind"], r["dst_kind"]) for r in async_copies], [("DtoH", "Pinned")], "async copies")
    if async_copies:
        eq((async_copies[0]["device"], async_copies[0]["stream"]), sa, "the async copy's stream (stream A)")
    sync_streams = {(r["device"], r["stream"]) for r in copies if r["async"] != "1"} | \
                   {(r["device"], r["stream"]) for r in sets}
    eq(len(sync_streams), 1, f"streams of the sync copies and the sets {sorted(sync_streams)}")
    s0 = next(iter(sync_streams), None)
    check(s0 not in (sa, sb), f"the default stream {s0} is stream A or B")
    for r in copies + sets:
        what = f"{r['name']} at {r['start_ns']}"
        call = join_api(api_by_corr, pid, num(r["correlation"]), what)
        if call:
            want = "cudaMemset" if r["type"] == "Memset" else \
                "cudaMemcpyAsync" if r["async"] == "1" else "cudaMemcpy"
            eq(call["name"], want, f"{what}: its call")
            check(int(r["start_ns"]) >= int(call["start_ns"]), f"{what}: starts before its call")
    work_streams = {(r["device"], r["stream"]) for r in kernels + copies + sets}
    eq(len(work_streams), 3, f"streams with GPU work {sorted(work_streams)}")
    tracks = {(r["device"], r["stream"]) for r in t["threads"] if r["kind"] == "stream" and int(r["pid"]) == pid}
    check(work_streams <= tracks, f"threads.csv: stream tracks {sorted(tracks)} miss some of {sorted(work_streams)}")

    # Device memory: 3 cudaMalloc of 1 MiB and their 3 cudaFree.
    mem = [r for r in t["memory"] if int(r["pid"]) == pid and r["memory_kind"] == "Device"]
    eq(sorted(int(r["bytes"]) for r in mem), [-MIB] * 3 + [MIB] * 3, "device memory events (bytes)")
    for r in mem:
        what = f"{'allocation' if int(r['bytes']) > 0 else 'free'} at {r['start_ns']}"
        call = join_api(api_by_corr, pid, num(r["correlation"]), what)
        if call:
            eq(call["name"], "cudaMalloc" if int(r["bytes"]) > 0 else "cudaFree", f"{what}: its call")
    allocs = {r["address"] for r in mem if int(r["bytes"]) > 0}
    frees = {r["address"] for r in mem if int(r["bytes"]) < 0}
    eq(frees, allocs, "addresses freed against those allocated")
    pinned = [(r["memory_kind"], r["bytes"]) for r in t["memory"] if int(r["pid"]) == pid and r["memory_kind"] != "Device"]
    print(f"note: host memory events (not checked): {pinned}")

    # The GPU work launched inside each NVTX range, as the UserDefined view credits it.
    s = c.summary(trace, "--view", "userdefined")
    eq(s["events"]["dropped"], 0, "events dropped")
    ud = dict(table_rows(s, "userdefined", "Thread: All threads merged"))
    for path, rows in (("sample/launch_a", by_name.get("scale", [])), ("sample/launch_b", by_name.get("add_one", [])),
                       ("sample/upload", [r for r in copies if r["copy_kind"] == "HtoD"] + sets),
                       ("sample/download", [r for r in copies if r["copy_kind"] == "DtoH"])):
        row = ud.get(path)
        if check(row is not None, f"UserDefined: no row {path}: {list(ud)}"):
            eq(row["calls"], 1, f"UserDefined {path}: calls")
            near(row.get("gpu_total_ns"), sum(int(r["dur_ns"]) for r in rows), 0.01,
                 f"UserDefined {path}: GPU time launched inside it, against its work's durations")

    # The Kernel and Memory Manipulation views.
    s = c.summary(trace, "--view", "kernel", "--view", "memory-manipulation")
    kv = collections.Counter()
    for _, r in table_rows(s, "kernel"):
        kv[kernel_base(r["name"])] += r["calls"]
    eq(dict(kv), {"scale": 10, "add_one": 5}, "Kernel Summary: calls")
    mm = table_rows(s, "memory-manipulation", "Thread: All threads merged")
    for word, n in (("HtoD", 3), ("DtoH", 2), ("Memset", 4)):
        eq(sum(r["calls"] for p_, r in mm if "/" not in p_ and word in r["name"]), n,
           f"Memory Manipulation Summary: calls of rows naming {word}")

    # The end-of-run nvprof tables on stderr.
    check("GPU activities" in err and "API calls" in err, f"no nvprof tables at the end of the run:\n{err[-4000:]}")
    nv = nvprof_calls(err)
    nvk = collections.Counter()
    for name, n in nv.items():
        nvk[kernel_base(name)] += n
    eq(nvk.get("scale"), 10, f"end-of-run summary: the scale kernel's calls (rows {dict(nv)})")
    eq(nvk.get("add_one"), 5, "end-of-run summary: the add_one kernel's calls")
    eq(nv.get("cudaLaunchKernel"), 15, "end-of-run summary: cudaLaunchKernel calls")


def case_cupti_absent(c):
    bare, rep = sample_or_skip(c)
    env = dict(c.env, GPROF_DL_CUPTI_PATH="/nonexistent/libcupti.so")
    trace, p = c.record([c.a.sample], env=env)
    eq(p.returncode, bare.returncode, "the sample's exit status when CUPTI is missing")
    eq(text(p.stdout), text(bare.stdout), "the sample's stdout when CUPTI is missing")
    lines = [ln for ln in text(p.stderr).splitlines() if "CUPTI" in ln]
    eq(len(lines), 1, f"lines about CUPTI in gprof-dl's output {lines}")
    if lines:
        ln = lines[0]
        check(ln.startswith("gprof-dl: "), f"the CUPTI line is not gprof-dl's: {ln!r}")
        check("/nonexistent/libcupti.so" in ln or "--cupti-lib" in ln or "install" in ln.lower(),
              f"the CUPTI line names neither the library nor a fix: {ln!r}")
    t = c.csv(trace)
    procs = [r for r in t["processes"] if "gpu_sample" in r["command_line"]]
    eq([r["exit_status"] for r in procs], ["0"], "processes.csv: the sample's process and status")
    eq(len(t["kernels"]) + len(t["memcpy"]) + len(t["memset"]) + len(t["runtime"]), 0,
       "GPU work and API calls recorded without CUPTI")
    ranges = collections.Counter(r["name"] for r in t["ranges"])
    eq({n: ranges.get(n) for n in ("sample", "upload", "launch_a", "launch_b", "download")},
       {"sample": 1, "upload": 1, "launch_a": 1, "launch_b": 1, "download": 1}, "NVTX ranges without CUPTI")


# ---- PyTorch ------------------------------------------------------------------

IPS = re.compile(r"ips: ([0-9.]+) samples/s over steps (\d+)-(\d+)")


def torch_or_skip(c):
    if not c.a.python:
        raise Skip("no torch 2 interpreter: configure with -DGPDL_TORCH2_PYTHON=/path/to/venv/bin/python "
                   "(tests/python/setup-torch2-venv makes one)")
    if not os.path.exists(os.path.join(c.a.pydir, "sitecustomize.py")):
        raise Skip(f"the gprof_dl Python package is not built in {c.a.pydir} (it needs python3-dev)")
    p = c.bare([c.a.python, "-c", "import torch; print(torch.__version__, torch.cuda.is_available())"])
    if p.returncode != 0:
        raise Skip(f"{c.a.python} cannot import torch: {text(p.stderr).strip()[-500:]}")
    version, avail = text(p.stdout).split()
    if avail != "True":
        raise Skip(f"no CUDA device: skipped (torch {version}: torch.cuda.is_available() is False)")
    return version


def ips_of(p, what):
    m = IPS.search(text(p.stdout))
    must(m, f"{what}: no ips line in the loop's output: {text(p.stdout)[-2000:]}")
    return float(m[1]), int(m[2]), int(m[3])


def case_torch_cuda(c):
    """The loop's kernels of steps 10-29 (launched inside its 'gpdl_window'
    NVTX range) against those torch.profiler records of the same steps in a
    run of its own (one CUPTI client per process): the same count, exactly (the
    loop is deterministic and synchronises at the end of every step, so no
    kernel crosses a step), and the same total time within 2%. The times come
    from different runs of the same kernels on the same idle GPU: after 10
    warm-up steps, clocks and caches are steady enough for that, but a busy or
    throttling GPU may not be."""
    version = torch_or_skip(c)
    loop = os.path.join(c.a.src, "torch_loop.py")
    steps, window = 30, 10
    args = [loop, "--steps", str(steps), "--window", str(window)]
    bare = c.bare([c.a.python, *args])
    must(bare.returncode == 0, f"bare run of the loop: status {bare.returncode}\n{text(bare.stderr)[-3000:]}")
    bare_ips = ips_of(bare, "bare run")

    ref_path = c.path("torch-profiler.json")
    tp = c.bare([c.a.python, *args, "--torch-profiler", ref_path])
    must(tp.returncode == 0, f"the loop under torch.profiler: status {tp.returncode}\n{text(tp.stderr)[-3000:]}")
    tp_ips = ips_of(tp, "torch.profiler run")
    with open(ref_path, encoding="utf-8") as f:
        ref = json.load(f)

    trace, p = c.record([c.a.python, *args])
    gp_ips = ips_of(p, "gprof-dl run")
    eq(cupti_warnings(text(p.stderr)), [], "gprof-dl's warnings about CUPTI")

    check_torch_trace(c, trace, ref, window, steps)
    b = bare_ips[0]
    print(f"ips (samples/s, torch {version}, steps {bare_ips[1]}-{bare_ips[2]}, synchronised every step): "
          f"bare {b:.1f}, gprof-dl {gp_ips[0]:.1f} ({(gp_ips[0] / b - 1) * 100:+.1f}%), "
          f"torch.profiler {tp_ips[0]:.1f} ({(tp_ips[0] / b - 1) * 100:+.1f}%)")


def check_torch_trace(c, trace, ref, window, steps):
    """The loop's trace against torch.profiler's figures (ref, torch_loop.py
    --torch-profiler) for the same steps."""
    t = c.csv(trace)
    win = [r for r in t["ranges"] if r["name"] == "gpdl_window"]
    must(len(win) == 1, f"ranges.csv: the 'gpdl_window' range: {win}")
    pid, ws, we = int(win[0]["pid"]), int(win[0]["start_ns"]), int(win[0]["end_ns"])
    in_window = {int(r["correlation"]) for r in t["runtime"]
                 if int(r["pid"]) == pid and r["correlation"] and ws <= int(r["start_ns"]) <= we}
    kernels = [r for r in t["kernels"] if int(r["pid"]) == pid and num(r["correlation"]) in in_window]
    count, total = len(kernels), sum(int(r["dur_ns"]) for r in kernels)
    ref_count, ref_total = ref["kernels"], ref["kernel_ns"]
    print(f"kernels of steps {window}-{steps - 1}: gprof-dl {count} ({total} ns), "
          f"torch.profiler {ref_count} ({ref_total} ns; its key_averages() counts "
          f"{ref.get('key_averages_cuda_events')} CUDA events, copies and sets included)")
    mine = collections.Counter(r["name"] for r in kernels)
    theirs = collections.Counter(ref["by_name"])
    if mine != theirs:
        print(f"note: kernels by name differ (gprof-dl, torch.profiler): "
              f"{ {n: (mine.get(n), theirs.get(n)) for n in set(mine) | set(theirs) if mine.get(n) != theirs.get(n)} }")
    check(ref_count > 0, "torch.profiler recorded no kernels in the window")
    eq(count, ref_count, f"kernels launched in steps {window}-{steps - 1}, against torch.profiler")
    near(total, ref_total, 0.02, f"total kernel time of steps {window}-{steps - 1}, against torch.profiler")
    dropped = sum(int(r["dropped"] or 0) for r in t["threads"])
    eq(dropped, 0, "records dropped")

    # Kernels under the operators that launched them.
    s = c.summary(trace, "--view", "operator", "--op-detail")
    rows = table_rows(s, "operator", "Thread: All threads merged")
    for op in ("aten::addmm", "aten::mm"):
        under = [(path, r) for path, r in rows if path.split("/")[-1] == op]
        if not check(under, f"Operator Summary: no {op} row"):
            continue
        calls = sum(r["calls"] for _, r in under)
        gpu_rows = [ch for _, r in under for ch in r.get("children", [])
                    if ch.get("cpu_total") is None and not ch["name"].startswith(("Memcpy", "Memset"))]
        launched = sum(ch["calls"] for ch in gpu_rows)
        check(launched >= calls, f"--op-detail: {launched} kernels under {calls} calls of {op}: "
              f"{[(ch['name'], ch['calls']) for ch in gpu_rows]}")
    ops_with_kernels = sorted({path.split("/")[-1] for path, r in rows
                               if any(ch.get("cpu_total") is None for ch in r.get("children", []))})
    print(f"operators with kernels under them: {ops_with_kernels}")


# ---- the launcher's environment (no GPU needed) -------------------------------

ENV_KEYS = ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "GPROF_DL_NO_GPU", "GPROF_DL_CUPTI_PATH")


def case_injection_env(c):
    probe = [sys.executable, "-c",
             "import json, os; print(json.dumps({k: os.environ.get(k) for k in %r}))" % (ENV_KEYS,)]
    collector = os.path.realpath(c.a.collector)
    real = lambda v: os.path.realpath(v) if v else v

    def seen(opts=(), env=None):
        _, p = c.record(probe, opts=("--no-python", *opts), env=env)
        return json.loads(p.stdout), text(p.stderr)

    got, err = seen()
    eq(real(got["NVTX_INJECTION64_PATH"]), collector, "NVTX_INJECTION64_PATH")
    if c.a.have_cupti == "1":
        eq(real(got["CUDA_INJECTION64_PATH"]), collector, "CUDA_INJECTION64_PATH")
    else:
        eq(got["CUDA_INJECTION64_PATH"], None, "CUDA_INJECTION64_PATH of a build without CUPTI headers")
    eq(got["GPROF_DL_NO_GPU"], None, "GPROF_DL_NO_GPU")

    got, _ = seen(("--no-gpu",))
    eq(got["CUDA_INJECTION64_PATH"], None, "--no-gpu: CUDA_INJECTION64_PATH")
    eq(real(got["NVTX_INJECTION64_PATH"]), collector, "--no-gpu: NVTX_INJECTION64_PATH")
    eq(got["GPROF_DL_NO_GPU"], "1", "--no-gpu: GPROF_DL_NO_GPU")

    # Another tool's injection library: replaced, with a warning; kept with --no-gpu.
    other = "/opt/other-tool/libinject.so"
    got, err = seen(env=dict(c.env, CUDA_INJECTION64_PATH=other))
    if c.a.have_cupti == "1":
        eq(real(got["CUDA_INJECTION64_PATH"]), collector, "CUDA_INJECTION64_PATH set before: replaced")
        eq(len([ln for ln in err.splitlines() if other in ln]), 1, f"warnings naming {other}: {err[-2000:]}")
    got, err = seen(("--no-gpu",), env=dict(c.env, CUDA_INJECTION64_PATH=other))
    eq(got["CUDA_INJECTION64_PATH"], other, "--no-gpu: CUDA_INJECTION64_PATH set before is kept")
    eq([ln for ln in err.splitlines() if other in ln], [], "--no-gpu: warnings naming the other library")

    # An outer run's --no-gpu does not reach this run's target.
    got, _ = seen(env=dict(c.env, GPROF_DL_NO_GPU="1"))
    eq(got["GPROF_DL_NO_GPU"], None, "GPROF_DL_NO_GPU from the environment")
    if c.a.have_cupti == "1":
        eq(real(got["CUDA_INJECTION64_PATH"]), collector, "CUDA_INJECTION64_PATH with GPROF_DL_NO_GPU outside")

    got, _ = seen(("--cupti-lib", "/somewhere/libcupti.so.12"))
    eq(got["GPROF_DL_CUPTI_PATH"], "/somewhere/libcupti.so.12", "--cupti-lib: GPROF_DL_CUPTI_PATH")
    p = c.gprof("run", "-o", c.path("t.gpdl"), "--cupti-lib", "", "--", *probe, status=2)
    lines = text(p.stderr).strip().splitlines()
    check(lines and "--cupti-lib" in lines[0], f"--cupti-lib '': the usage error {lines}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--collector", required=True)
    ap.add_argument("--sample", default="", help="the built sample.cu (empty: not built)")
    ap.add_argument("--src", required=True, help="tests/gpu")
    ap.add_argument("--python", default="", help="the interpreter with torch 2 (CUDA build)")
    ap.add_argument("--pydir", required=True, help="the built gprof_dl Python package's directory")
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--have-cupti", default="1")
    ap.add_argument("--case", required=True)
    args = ap.parse_args()
    fn = globals().get("case_" + args.case)
    if not fn:
        print(f"unknown case {args.case}")
        return 1
    os.makedirs(args.cache_dir, exist_ok=True)
    return run_case(args.case, fn, lambda tmp: Ctx(args, tmp), "gpdl-gpu-")


if __name__ == "__main__":
    sys.exit(main())
