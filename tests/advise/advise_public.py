#!/usr/bin/env python3
"""`gprof-dl advise` on real GPU traces (tests/data/kineto-public) and on
made-up Kineto traces: the fp32-matmul rule's figures against sums over the
JSON, the clean traces where it must not fire, --fail-on's exit statuses,
--rules, the JSON document's schema, the text's width and escaping.

  gpu_idle the gpu-starved rule's figures on a host-bound A100 rank against
           the JSON, three traces where it must not fire, and launch-bound on
           made-up traces of tiny kernels (fires) and of longer ones (not)

  data_parallel  a made-up process driving 2 GPUs (fires, saving from their busy
           times), one GPU (not), two real DDP ranks (not)

    advise_public.py --gprof-dl PATH --case fp32|gate|hostile|gpu_idle|data_parallel
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "kineto-public")
sys.path.insert(0, os.path.join(HERE, "..", "pylib"))
from kineto import load, merge, ns  # noqa: E402

TC = ("tensorop", "hmma", "xmma", "1688", "884", "16816", "wmma")
failed = []


def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        failed.append(msg)


def advise(g, *args, status=(0,)):
    r = subprocess.run([g, "advise", *args], capture_output=True, text=True, timeout=120)
    if r.returncode not in status:
        print(f"FAIL: advise {args}: exit {r.returncode}: {r.stderr.strip()}")
        sys.exit(1)
    return r


def fp32(name):
    n = name.lower()
    return ("sgemm" in n or "scudnn" in n) and not any(t in n for t in TC)


def expected_fp32(path):
    """(kernels' time on cc >= 7 GPUs launched in the steps, the fp32 ones', steps, median counted step)."""
    doc = load(path)
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    cc = {d["id"]: d.get("computeMajor", 0) for d in doc.get("deviceProperties", [])}
    steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev
                   if e["name"].startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation")
    calls = {e["args"]["correlation"]: ns(e["ts"]) for e in ev
             if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    total = mine = 0
    for e in ev:
        if e.get("cat") != "kernel" or cc.get(e["args"].get("device"), 0) < 7:
            continue
        t = calls.get(e["args"].get("correlation"))
        if t is None or not any(a <= t < b for a, b in steps):
            continue
        if "nccl" in e["name"].lower():
            continue  # communication kernels are not Kernel typed in an import
        total += ns(e["dur"])
        if fp32(e["name"]):
            mine += ns(e["dur"])
    skip = min(10, len(steps) // 2)
    counted = sorted(b - a for a, b in steps[skip:])
    k = len(counted)
    median = counted[k // 2] if k % 2 else (counted[k // 2 - 1] + counted[k // 2]) // 2
    return total, mine, len(steps), median, k


def case_fp32(g):
    path = os.path.join(DATA, "ns_resolution_rank-0.json.gz")
    total, mine, nsteps, median, k = expected_fp32(path)
    doc = json.loads(advise(g, path, "--format", "json").stdout)
    check(doc["schema"] == "gprof-dl-advise/1", "schema gprof-dl-advise/1")
    check(doc["step_ns"] == median and doc["steps"] == k, f"median counted step {median} ns over {k}")
    f = [x for x in doc["findings"] if x["rule"] == "fp32-matmul"]
    check(len(f) == 1, "ns_resolution (V100, volta_sgemm): fp32-matmul fires")
    if f:
        f = f[0]
        share = 100.0 * mine / total
        want = mine / nsteps / 2
        check(f"{share:.1f} %" in f["what"], f"its share {share:.1f} % of the kernel time ({mine} of {total} ns)")
        check(abs(f["saving_ns"] - want) <= 1, f"saving {f['saving_ns']} ns == half of {mine} ns / {nsteps} steps")
        sev = "high" if want >= 0.10 * median else "medium" if want >= 0.03 * median else "low"
        check(f["severity"] == sev, f"severity {f['severity']} == {sev}")
        check(any(e.startswith("volta_sgemm") for e in f["evidence"]), "the kernels named in the evidence")
        check("--view kernel" in f["command"] and path in f["command"], "the command behind it")
        for key in ("rule", "severity", "saving_ns", "share_pct", "what", "evidence", "try", "threshold",
                    "command"):
            check(key in f, f"finding key {key}")
    for clean in ("nccl_data.json.gz", "sampled_rank-0.json.gz", "mi250_minitoy_train.json.gz"):
        p = os.path.join(DATA, clean)
        total, mine, *_ = expected_fp32(p)
        doc = json.loads(advise(g, p, "--format", "json").stdout)
        got = [x for x in doc["findings"] if x["rule"] == "fp32-matmul"]
        check(not got and mine < 0.10 * max(total, 1),
              f"{clean}: no fp32-matmul ({mine} of {total} ns on the CUDA cores)")


def measure(iv):
    return sum(b - a for a, b in iv)


def intersect(x, y):
    out, i, j = [], 0, 0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if b > a:
            out.append([a, b])
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(x, y):
    out = []
    for a, b in x:
        cur = a
        for c, d in y:
            if d <= cur or c >= b:
                continue
            if c > cur:
                out.append([cur, c])
            cur = max(cur, d)
        if cur < b:
            out.append([cur, b])
    return out


def starvation(path):
    """(idle, host busy in it, counted steps) over the counted steps, from the JSON."""
    doc = load(path)
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    steps = sorted([ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])] for e in ev
                   if e["name"].startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation")
    counted = merge(steps[min(10, len(steps) // 2):])
    gpu = merge([ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])] for e in ev
                if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and ns(e["dur"]) > 0)
    # the importer's operators, CUDA calls, data loading and Python ranges: torch's
    # optimizer and DataLoader record_functions are operators and data loading
    host = merge([ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])] for e in ev
                 if (e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver", "python_function") or
                     (e.get("cat") == "user_annotation" and e["name"].startswith(
                         ("Optimizer.step#", "Optimizer.zero_grad#", "enumerate(DataLoader)#"))))
                 and ns(e["dur"]) > 0)
    idle = subtract(counted, gpu)
    return measure(idle), measure(intersect(idle, host)), len(counted), measure(counted)


def case_gpu_idle(g):
    # nccl_data: 2 counted steps of a host-bound A100 rank
    path = os.path.join(DATA, "nccl_data.json.gz")
    idle, host, k, total = starvation(path)
    doc = json.loads(advise(g, path, "--format", "json").stdout)
    f = [x for x in doc["findings"] if x["rule"] == "gpu-starved"]
    check(len(f) == 1, f"nccl_data: gpu-starved (idle {idle} of {total} ns, the host busy in {host})")
    if f:
        check(f"{100.0 * idle / total:.1f} %" in f[0]["what"], f"idle share {100.0 * idle / total:.1f} %")
        check(abs(f[0]["saving_ns"] - idle / k) <= 1, f"saving {f[0]['saving_ns']} == idle per step {idle / k:.0f}")
        check(f"{100.0 * host / idle:.0f} % of the idle time" in f[0]["evidence"][0],
              f"the host busy in {100.0 * host / idle:.0f} % of it")
        check(any("aten::" in e for e in f[0]["evidence"]), "the host's operators in the gaps named")
    # clean: the GPU busy (V100, 2 steps), or the host idle too
    for clean in ("ns_resolution_rank-0.json.gz", "sampled_rank-0.json.gz", "backward_thread.json"):
        p = os.path.join(DATA, clean)
        idle, host, k, total = starvation(p)
        doc = json.loads(advise(g, p, "--format", "json").stdout)
        got = [x for x in doc["findings"] if x["rule"] == "gpu-starved"]
        check(not got and (idle < 0.2 * total or 2 * host < idle),
              f"{clean}: no gpu-starved (idle {idle} of {total} ns, host busy in {host})")
    # launch-bound: made-up traces, 4 steps of 200 kernels each launched by a 5 us call
    for kdur, want in ((2, True), (50, False)):
        ev = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1,
               "ts": 1000 + 20000 * i, "dur": 19000} for i in range(4)]
        c = 0
        for i in range(4):
            for j in range(200):
                t = 1010 + 20000 * i + 60 * j
                c += 1
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                           "ts": t, "dur": 5, "args": {"correlation": c}})
                ev.append({"ph": "X", "cat": "kernel", "name": "tiny", "pid": 0, "tid": 7, "ts": t + 6,
                           "dur": kdur, "args": {"device": 0, "stream": 7, "correlation": c}})
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, "launch.json")
            with open(p, "w") as fh:
                json.dump({"traceEvents": ev}, fh)
            doc = json.loads(advise(g, p, "--format", "json").stdout)
        lb = [x for x in doc["findings"] if x["rule"] == "launch-bound"]
        if want:
            check(len(lb) == 1 and lb[0]["what"].startswith("100 % of the kernels") and
                  lb[0]["saving_ns"] == 200 * 5000, f"2 us kernels after 5 us launches: launch-bound ({lb})")
        else:
            check(not lb, "50 us kernels: not launch-bound")


def dp_trace(path, devices):
    """4 steps of 10 ms of one process; per step 8 ms of kernels on GPU 0 and 4 ms on GPU 1."""
    ev = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1,
           "ts": 1000 + 10000 * i, "dur": 10000} for i in range(4)]
    c = 0
    for i in range(4):
        for d, busy in ((0, 8000), (1, 4000))[:devices]:
            c += 1
            t = 1000 + 10000 * i + 100
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": t, "dur": 10, "args": {"correlation": c}})
            ev.append({"ph": "X", "cat": "kernel", "name": "replica_kernel", "pid": d, "tid": 7 + d,
                       "ts": t + 20, "dur": busy, "args": {"device": d, "stream": 7 + d, "correlation": c}})
    props = [{"id": d, "name": "GPU", "computeMajor": 8, "computeMinor": 0, "totalGlobalMem": 1 << 34,
              "numSms": 8} for d in range(2)]
    with open(path, "w") as f:
        json.dump({"deviceProperties": props, "traceEvents": ev}, f)


def case_data_parallel(g):
    with tempfile.TemporaryDirectory() as tmp:
        two, one = os.path.join(tmp, "dp.json"), os.path.join(tmp, "single.json")
        dp_trace(two, 2)
        dp_trace(one, 1)
        doc = json.loads(advise(g, two, "--format", "json", "--skip-steps", "0").stdout)
        f = [x for x in doc["findings"] if x["rule"] == "data-parallel"]
        check(len(f) == 1 and f[0]["what"].startswith("one process drives 2 GPUs"),
              "one process, kernels on 2 GPUs: data-parallel")
        if f:
            # busiest 8 ms, other 4 ms: (2 x 8 - 12) / 2 = 2 ms per step
            check(f[0]["saving_ns"] == 2000000, f"saving {f[0]['saving_ns']} == 2 ms per step")
            check("GPU0: busy 8.00 ms per step" in f[0]["evidence"] and
                  "GPU1: busy 4.00 ms per step" in f[0]["evidence"], "each GPU's busy time")
        doc = json.loads(advise(g, one, "--format", "json", "--skip-steps", "0").stdout)
        check(not [x for x in doc["findings"] if x["rule"] == "data-parallel"], "one GPU: no data-parallel")
    # a 2-rank job, a GPU each: not DataParallel
    pair = [os.path.join(DATA, f"sampled_rank-{r}.json.gz") for r in (0, 1)]
    doc = json.loads(advise(g, *pair, "--format", "json").stdout)
    check(not [x for x in doc["findings"] if x["rule"] == "data-parallel"],
          "two ranks of a DDP job: no data-parallel")


def case_gate(g):
    path = os.path.join(DATA, "ns_resolution_rank-0.json.gz")
    clean = os.path.join(DATA, "mi250_minitoy_train.json.gz")
    check(advise(g, path, "--fail-on", "high", status=(0, 1)).returncode == 1, "--fail-on high: exit 1")
    check(advise(g, path, "--fail-on", "fp32-matmul", status=(0, 1)).returncode == 1,
          "--fail-on fp32-matmul: exit 1")
    check(advise(g, clean, "--fail-on", "low", status=(0, 1)).returncode == 0,
          "a trace without findings, --fail-on low: exit 0")
    r = advise(g, path, "--fail-on", "hihg", status=(2,))
    check("did you mean 'high'" in r.stderr, "--fail-on hihg: a usage error with the near miss")
    r = advise(g, "/nonexistent/t.gpdl", status=(1,))
    check("/nonexistent/t.gpdl" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
          "a missing file: one line naming it, exit 1")
    r = advise(g, "--rules")
    ids = re.findall(r"(?m)^([a-z0-9-]+): ", r.stdout)
    check("fp32-matmul" in ids and len(ids) == len(set(ids)) and len(ids) >= 3, f"--rules lists {ids}")
    check(not re.search(r"(?m)^  (Definition|Threshold|Why): *$", r.stdout), "--rules: no empty field")
    check("never fires" not in r.stdout, "--rules: no rule unwritten")
    with open(os.path.join(HERE, "..", "..", "man", "gprof-dl-advise.1")) as f:
        man = f.read()
    missing = [i for i in ids if f".It Cm {i}\n" not in man]
    check(not missing, f"every rule has its section in gprof-dl-advise(1) (missing: {missing})")
    r = advise(g, path)
    check(all(len(line) <= 100 for line in r.stdout.splitlines()), "text within 100 columns")
    check("1. [high] fp32-matmul:" in r.stdout, "text: the finding ranked first")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "advice.json")
        advise(g, path, "--format", "json", "-o", out)
        check(json.load(open(out))["findings"][0]["rule"] == "fp32-matmul", "-o writes the document")
        r = advise(g, path, "-o", out, status=(1,))
        check("exists" in r.stderr or "--force" in r.stderr, "-o an existing file without --force: refused")


def case_hostile(g):
    """A kernel name with terminal escapes and a CSV-breaking quote, on a made-up A100 trace."""
    name = 'ampere_sgemm_128x64_nn\x1b]0;pwned\x07\x1b[2J",=cmd|x'
    ev = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1,
           "ts": 1000 + 10000 * i, "dur": 9000} for i in range(4)]
    for i in range(4):
        t = 1100 + 10000 * i
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": t, "dur": 10, "args": {"correlation": 100 + i}})
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": t + 20, "dur": 5000,
                   "args": {"device": 0, "stream": 7, "correlation": 100 + i}})
    doc = {"deviceProperties": [{"id": 0, "name": "A100", "computeMajor": 8, "computeMinor": 0,
                                 "totalGlobalMem": 42000000000, "numSms": 108}],
           "traceEvents": ev}
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "hostile.json")
        with open(p, "w") as f:
            json.dump(doc, f)
        r = advise(g, p, "--skip-steps", "0")
        check("\x1b" not in r.stdout and "\x07" not in r.stdout, "text: no terminal control from a name")
        check("fp32-matmul" in r.stdout, "the hostile name's kernels still found")
        d = json.loads(advise(g, p, "--skip-steps", "0", "--format", "json").stdout)
        ev_ = [e for x in d["findings"] for e in x["evidence"] if e.startswith("ampere_sgemm")]
        check(ev_ and ev_[0].startswith(name), "JSON: the name as it is, escaped by JSON")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--case", required=True)
    a = ap.parse_args()
    {"fp32": case_fp32, "gate": case_gate, "hostile": case_hostile,
     "gpu_idle": case_gpu_idle, "data_parallel": case_data_parallel}[a.case](a.gprof_dl)
    if failed:
        sys.exit(f"{len(failed)} checks failed")
    print("PASS")


if __name__ == "__main__":
    main()
