#!/usr/bin/env python3
"""`gprof-dl run` on a CUDA-like program, end to end, without a GPU.

gpu-target does what the CUDA driver does at cuInit (it calls the collector's
InitializeInjection) and then, in mode "ops", runs 4 steps whose Operator
ranges report launches to the CUPTI test double (scenario "launches"): each
step has an "aten::mm" that launches the gemm kernel twice and an
"aten::copy_" that copies host to device once. The double hands the
collector the CUPTI activity records such a program would produce: real
CUpti_ActivityAPI / Kernel10 / Memcpy6 / Device5 structs. Everything after
that is the product: the collector's conversion, the rings, the recorder,
the trace, the views, the exports and the end-of-run report.

Usage: run_e2e.py GPROF_DL GPU_TARGET FAKE_CUPTI CASE
"""
import json
import re
import os
import subprocess
import sys
import tempfile

GPROF, TARGET, FAKE, CASE = sys.argv[1:5]
GEMM = "gemm(float const*, float const*, float*, int)"
STEPS, GEMMS_PER_STEP, COPIES_PER_STEP = 4, 2, 1
COPY_BYTES = 4096  # FAKE_COPY_BYTES
LEN_NS = 500       # FAKE_LEN_NS: each piece of GPU work
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(args, env_extra=None, **kw):
    env = dict(os.environ)
    for k in ("CUDA_INJECTION64_PATH", "GPROF_DL_CUPTI_PATH", "FAKE_CUPTI_SCENARIO"):
        env.pop(k, None)
    env.update(env_extra or {})
    return subprocess.run(args, env=env, capture_output=True, text=True, **kw)


def summary_json(trace, *views):
    args = [GPROF, "summary", trace, "--format", "json", "--time-unit", "ns"]
    for v in views:
        args += ["--view", v]
    r = run(args + ["--op-detail"])
    check(r.returncode == 0, f"summary {views}: status {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def rows(doc, table):
    """Every row of a table, op-detail children flattened after their parent."""
    out = []

    def walk(rs):
        for r in rs:
            out.append(r)
            walk(r.get("children", []))
    for sec in doc["tables"][table]["sections"]:
        walk(sec["rows"])
    return out


def report_table(err, heading):
    """Rows (name -> calls) of one nvprof table of the end-of-run report."""
    lines = err.splitlines()
    out = {}
    for i, line in enumerate(lines):
        if line.endswith(heading):
            for row in lines[i + 2:]:
                parts = row.split(None, 6)
                if len(parts) < 7 or not parts[0].endswith("%"):
                    break
                out[parts[6]] = int(parts[2])
    return out


def case_ops(tmp):
    env = {"GPROF_DL_CUPTI_PATH": FAKE, "FAKE_CUPTI_SCENARIO": "launches"}
    bare = run([TARGET, "ops"], env)
    trace = os.path.join(tmp, "ops.gpdl")
    r = run([GPROF, "run", "-o", trace, "--cupti-lib", FAKE, "--", TARGET, "ops"],
            {"FAKE_CUPTI_SCENARIO": "launches"})
    check(r.returncode == bare.returncode == 0, f"status: bare {bare.returncode}, run {r.returncode}")
    check(r.stdout == bare.stdout, f"stdout changed:\n{bare.stdout}---\n{r.stdout}")
    check("GPU data off" not in r.stderr, f"collection refused:\n{r.stderr}")

    # nvprof's two tables at the end of the run
    gpu = report_table(r.stderr, "Profiling result (GPU activities):")
    api = report_table(r.stderr, "API calls:")
    check(gpu.get(GEMM) == STEPS * GEMMS_PER_STEP, f"GPU activities: {gpu}")
    check(gpu.get("[CUDA memcpy HtoD]") == STEPS * COPIES_PER_STEP, f"GPU activities: {gpu}")
    check(api.get("cudaLaunchKernel") == STEPS * GEMMS_PER_STEP and
          api.get("cudaMemcpy") == STEPS * COPIES_PER_STEP, f"API calls: {api}")

    # kernels and copies under the operator that launched them
    ops = rows(summary_json(trace, "operator"), "operator")
    by = {}
    parent = None
    for row in ops:
        if row["depth"] == 0:
            parent = row["name"]
        by[(parent, row["name"], row["depth"])] = row
    mm, gemm = by.get(("aten::mm", "aten::mm", 0)), by.get(("aten::mm", GEMM, 1))
    cp = by.get(("aten::copy_", "aten::copy_", 0))
    cpk = [v for (p, n, d), v in by.items() if p == "aten::copy_" and d == 1]
    check(mm and mm["calls"] == STEPS and mm["gpu_total_ns"] == STEPS * GEMMS_PER_STEP * LEN_NS,
          f"aten::mm row: {mm}")
    check(gemm and gemm["calls"] == STEPS * GEMMS_PER_STEP, f"gemm under aten::mm: {gemm}")
    check(cp and cp["gpu_total_ns"] == STEPS * COPIES_PER_STEP * LEN_NS, f"aten::copy_ row: {cp}")
    check(len(cpk) == 1 and cpk[0]["calls"] == STEPS and "HtoD" in cpk[0]["name"],
          f"copy under aten::copy_: {cpk}")

    # the Kernel Summary computes occupancy from the device's properties
    kern = rows(summary_json(trace, "kernel"), "kernel")
    k = [x for x in kern if x["name"] == GEMM]
    check(len(k) == 1 and k[0]["calls"] == STEPS * GEMMS_PER_STEP, f"kernel view: {kern}")

    # the device, and the stream track
    info = run([GPROF, "info", trace]).stdout
    check("\ndevices: 1\n" in info and "Fake GPU" in info and " 132 " in info, f"info:\n{info}")
    check("GPU0 stream 7" in info, f"info: no stream track:\n{info}")

    # chrome: every launch has its flow to its work
    ch = run([GPROF, "export", "--chrome", trace, "-o", "-"])
    ev = json.loads(ch.stdout)["traceEvents"]
    flows = [e for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "s"]
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    check(len(flows) == STEPS * (GEMMS_PER_STEP + COPIES_PER_STEP), f"{len(flows)} launch flows")
    check(len(kernels) == STEPS * GEMMS_PER_STEP, f"{len(kernels)} kernels in the chrome export")
    for kv in kernels:
        check(kv["args"].get("grid") == [4, 1, 1] and kv["args"].get("block") == [256, 1, 1],
              f"kernel args: {kv['args']}")
        break

    # the copies' sizes, and every call before its work
    csv_dir = os.path.join(tmp, "csv")
    run([GPROF, "export", "--csv", trace, "-o", csv_dir])
    import csv
    with open(os.path.join(csv_dir, "memcpy.csv")) as f:
        cps = list(csv.DictReader(f))
    check(len(cps) == STEPS and all(int(c["bytes"]) == COPY_BYTES for c in cps), f"memcpy.csv: {cps}")
    with open(os.path.join(csv_dir, "runtime.csv")) as f:
        calls = {int(c["correlation"]): c for c in csv.DictReader(f)}
    with open(os.path.join(csv_dir, "kernels.csv")) as f:
        for kr in csv.DictReader(f):
            call = calls.get(int(kr["correlation"]))
            check(call is not None and int(call["end_ns"]) <= int(kr["start_ns"]),
                  f"kernel {kr['correlation']} not after its call")


def case_autograd(tmp):
    """Backward's kernels launched from another thread (PyTorch's autograd
    engine) while the step's thread has Backward open: Backward's GPU time,
    in a recorded trace as in an imported one."""
    env = {"GPROF_DL_CUPTI_PATH": FAKE, "FAKE_CUPTI_SCENARIO": "launches"}
    bare = run([TARGET, "autograd"], env)
    trace = os.path.join(tmp, "autograd.gpdl")
    r = run([GPROF, "run", "-o", trace, "--cupti-lib", FAKE, "--", TARGET, "autograd"],
            {"FAKE_CUPTI_SCENARIO": "launches"})
    check(r.returncode == bare.returncode == 0, f"status: bare {bare.returncode}, run {r.returncode}")
    check(r.stdout == bare.stdout, f"stdout changed:\n{bare.stdout}---\n{r.stdout}")
    model = {row["name"]: row for row in rows(summary_json(trace, "model"), "model")}
    fwd, bwd = model.get("Forward"), model.get("Backward")
    step, others = model.get("ProfileStep"), model.get("Others")
    check(fwd and fwd["calls"] == STEPS and fwd["gpu_total_ns"] == STEPS * 2 * LEN_NS,
          f"Forward: {fwd}")
    check(bwd and bwd["calls"] == STEPS and bwd["gpu_total_ns"] == STEPS * 3 * LEN_NS and
          bwd["gpu_min_ns"] == 3 * LEN_NS, f"Backward (launched on the autograd thread): {bwd}")
    check(step and step["gpu_total_ns"] == STEPS * 5 * LEN_NS, f"ProfileStep: {step}")
    check(others and others["gpu_total_ns"] == 0, f"Others: {others}")
    # the operator keeps its own thread's rule: its kernels, launched inside it
    ops = {row["name"]: row for row in rows(summary_json(trace, "operator"), "operator")
           if row["depth"] == 0}
    ev = ops.get("autograd::engine::evaluate_function: MmBackward0")
    check(ev and ev["calls"] == STEPS and ev["gpu_total_ns"] == STEPS * 3 * LEN_NS,
          f"evaluate_function: {ev}")
    # two threads in the trace: the launches really came from another one
    info = run([GPROF, "info", trace]).stdout
    m = re.search(r"(?m)^threads: (\d+)$", info)
    check(m and int(m.group(1)) >= STEPS + 2, f"info: the autograd threads are not there:\n{info}")


def csv_rows(tmp, trace, name):
    out = os.path.join(tmp, os.path.basename(trace) + ".csv")
    if not os.path.isdir(out):
        r = run([GPROF, "export", "--csv", trace, "-o", out])
        check(r.returncode == 0, f"export --csv {trace}: {r.stderr}")
    import csv
    with open(os.path.join(out, name)) as f:
        return list(csv.DictReader(f))


def case_capture(tmp):
    """--capture-range=cudaProfilerApi: gpu-target's mode "capture" runs 6
    steps, cudaProfilerStart before step 2, Stop after step 3, Start again
    before step 5 and Stop after it. Only the first range is recorded (as
    nsys), every one with --capture-range-end=repeat; steps always."""
    env = {"FAKE_CUPTI_SCENARIO": "capture"}
    bare = run([TARGET, "capture"], {"GPROF_DL_CUPTI_PATH": FAKE, **env})
    for extra, steps_in in (([], 6), (["--capture-range=cudaProfilerApi"], 2),
                            (["--capture-range=cudaProfilerApi", "--capture-range-end=repeat"], 3)):
        trace = os.path.join(tmp, "cap%d.gpdl" % len(extra))
        r = run([GPROF, "run", "-q", "-o", trace, "--cupti-lib", FAKE] + extra + ["--", TARGET, "capture"], env)
        check(r.returncode == bare.returncode == 0 and r.stdout == bare.stdout,
              f"{extra}: status {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr}")
        ops = csv_rows(tmp, trace, "operators.csv")
        names = [o["name"] for o in ops]
        check(names.count("aten::mm") == steps_in and names.count("aten::copy_") == steps_in,
              f"{extra}: operators {names}")
        kernels = csv_rows(tmp, trace, "kernels.csv")
        check(len(kernels) == steps_in * GEMMS_PER_STEP, f"{extra}: {len(kernels)} kernels")
        copies = csv_rows(tmp, trace, "memcpy.csv")
        check(len(copies) == steps_in * COPIES_PER_STEP, f"{extra}: {len(copies)} copies")
        calls = csv_rows(tmp, trace, "runtime.csv")
        check(len(calls) == steps_in * (GEMMS_PER_STEP + COPIES_PER_STEP), f"{extra}: {len(calls)} API calls")
        steps = csv_rows(tmp, trace, "steps.csv")
        check(len(steps) == 6, f"{extra}: {len(steps)} steps (always recorded)")
        # the kept operators are those of the steps inside
        want = {2, 3} if steps_in == 2 else {2, 3, 5} if steps_in == 3 else set(range(6))
        bounds = sorted((int(s["start_ns"]), int(s["end_ns"])) for s in steps)
        got = set()
        for o in ops:
            t = int(o["start_ns"])
            for i, (a, b) in enumerate(bounds):
                if a <= t <= b:
                    got.add(i)
        check(got == want, f"{extra}: operators in steps {sorted(got)}, want {sorted(want)}")
        marks = [m["name"] for m in csv_rows(tmp, trace, "marks.csv")]
        if extra:
            check(marks.count("window off") == steps_in // 2 + steps_in % 2 and
                  "window: cudaProfilerApi" + (" repeat" if steps_in == 3 else "") in marks,
                  f"{extra}: window marks {marks}")
            info = run([GPROF, "info", trace]).stdout
            check(re.search(r"\n  recorded +between cudaProfilerStart and cudaProfilerStop \(%d ranges?, " % (1 + (steps_in == 3)), info), f"info:\n{info}")


def case_refused(tmp, scenario, expect):
    trace = os.path.join(tmp, "r.gpdl")
    bare = run([TARGET])
    r = run([GPROF, "run", "-o", trace, "--cupti-lib", FAKE, "--", TARGET],
            {"FAKE_CUPTI_SCENARIO": scenario})
    lines = [l for l in r.stderr.splitlines() if "GPU data" in l]
    check(r.returncode == bare.returncode and r.stdout == bare.stdout, "program changed")
    check(len(lines) == 1 and expect in lines[0] and lines[0].startswith("gprof-dl: "),
          f"status lines: {lines}")
    info = run([GPROF, "info", trace]).stdout
    check("processes: 1" in info and "devices:" not in info, f"info:\n{info}")


def case_absent(tmp):
    case_refused_path(tmp, "/nonexistent/libcupti.so.13", "cannot load CUPTI '/nonexistent/libcupti.so.13'")


def case_refused_path(tmp, path, expect):
    trace = os.path.join(tmp, "a.gpdl")
    bare = run([TARGET])
    r = run([GPROF, "run", "-o", trace, "--cupti-lib", path, "--", TARGET])
    lines = [l for l in r.stderr.splitlines() if "CUPTI" in l]
    check(r.returncode == bare.returncode and r.stdout == bare.stdout, "program changed")
    check(len(lines) == 1 and expect in lines[0] and "--cupti-lib" in lines[0], f"lines: {lines}")


def case_no_gpu(tmp):
    trace = os.path.join(tmp, "n.gpdl")
    r = run([GPROF, "run", "-o", trace, "--no-gpu", "--cupti-lib", FAKE, "--", TARGET],
            {"FAKE_CUPTI_SCENARIO": "basic"})
    check(r.returncode == 0 and "CUPTI" not in r.stderr and "GPU activities" not in r.stderr,
          f"--no-gpu:\n{r.stderr}")


with tempfile.TemporaryDirectory() as tmp:
    if CASE == "ops":
        case_ops(tmp)
    elif CASE == "capture":
        case_capture(tmp)
    elif CASE == "autograd":
        case_autograd(tmp)
    elif CASE == "subscriber":
        case_refused(tmp, "subscriber", "another CUPTI client")
    elif CASE == "privileges":
        case_refused(tmp, "refuse-privileges", "NVreg_RestrictProfilingToAdminUsers=0")
    elif CASE == "absent":
        case_absent(tmp)
    elif CASE == "no_gpu":
        case_no_gpu(tmp)
    else:
        sys.exit(f"unknown case {CASE}")
if failures:
    sys.exit(f"{len(failures)} checks failed")
print(f"{CASE}: ok")
