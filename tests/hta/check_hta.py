"""check_hta.py - Holistic Trace Analysis reads gprof-dl's chrome export.

    python check_hta.py TRACE_DIR WRITTEN.json

TRACE_DIR holds the export of the GPU fixture and nothing else; WRITTEN.json
is what gen-hta-trace wrote into the trace. From it this script works out, on
its own, what HTA must compute, and compares:

  - the rank and its metadata (distributedInfo, deviceProperties);
  - the iterations, from the ProfilerStep#N ranges;
  - every GPU event tied to its runtime call by correlation;
  - the temporal breakdown: idle, compute and non-compute time;
  - the kernel breakdown: time per kernel type, overlaps split out, and
    sum/max/min/mean per kernel name;
  - the launch statistics: per correlation id, the runtime call's and the GPU
    work's durations and the delay between them;
  - the share of communication overlapped by computation.

The kernel types come from what the test wrote (Kernel, Communication,
Memcpy/Memset), not from HTA's name patterns, so a mismatch means the export
named or placed something so that HTA sees it as something else.
Exit status: 0 all equal, 1 a difference (each one printed).
"""
import json
import sys

from hta.trace_analysis import TraceAnalysis

COPY_KINDS = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD",
              7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP"}
MEMORY_KINDS = {1: "Pageable", 2: "Pinned", 3: "Device", 4: "Array", 5: "Managed",
                6: "Device Static", 7: "Managed Static"}
# HTA's kernel types, in the order it names overlaps
KERNEL_TYPES = {"Kernel": "COMPUTATION", "Communication": "COMMUNICATION",
                "Memcpy": "MEMORY", "Memset": "MEMORY"}
TYPE_ORDER = ["COMPUTATION", "COMMUNICATION", "MEMORY"]

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: HTA says {got!r}, the test wrote {want!r}")
    else:
        print(f"ok   {what}: {got!r}")


def exported_name(e):
    """The name the PyTorch profiler (and so our export) gives GPU work."""
    if e["type"] == "Memcpy" and e["copy_kind"]:
        return "Memcpy %s (%s -> %s)" % (COPY_KINDS.get(e["copy_kind"], "Unknown"),
                                         MEMORY_KINDS.get(e["src_kind"], "Unknown"),
                                         MEMORY_KINDS.get(e["dst_kind"], "Unknown"))
    if e["type"] == "Memset" and e["dst_kind"]:
        return "Memset (%s)" % MEMORY_KINDS.get(e["dst_kind"], "Unknown")
    return e["name"]


def union(intervals):
    """Sorted, merged [start, end) intervals."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def measure(intervals):
    return sum(e - s for s, e in union(intervals))


def intersect(a, b):
    """The measure of union(a) & union(b)."""
    total = 0
    for s1, e1 in union(a):
        for s2, e2 in union(b):
            total += max(0, min(e1, e2) - max(s1, s2))
    return total


def type_partition(gpu):
    """Time in each combination of kernel types running, as HTA labels it."""
    cuts = sorted({t for e in gpu for t in (e["ts_us"], e["ts_us"] + e["dur_us"])})
    totals = {}
    for a, b in zip(cuts, cuts[1:]):
        running = {KERNEL_TYPES[e["type"]] for e in gpu
                   if e["ts_us"] <= a and b <= e["ts_us"] + e["dur_us"]}
        if running:
            label = " overlapping ".join(t for t in TYPE_ORDER if t in running)
            totals[label] = totals.get(label, 0) + (b - a)
    return totals


def expected(written):
    gpu = [e for e in written["events"] if e["stream"] is not None]
    spans = [(e["ts_us"], e["ts_us"] + e["dur_us"]) for e in gpu]
    kernel_time = max(e for _, e in spans) - min(s for s, _ in spans)
    idle = kernel_time - measure(spans)
    compute = measure([(e["ts_us"], e["ts_us"] + e["dur_us"]) for e in gpu
                       if KERNEL_TYPES[e["type"]] == "COMPUTATION"])
    per_name = {}
    for e in gpu:
        per_name.setdefault(exported_name(e), []).append(e["dur_us"])
    steps = sorted(int(e["name"].split("#")[1]) for e in written["events"]
                   if e["type"] == "ProfileStep")
    calls = {e["correlation"]: e for e in written["events"]
             if e["stream"] is None and e["correlation"]}
    launches = {}
    for e in gpu:
        c = calls[e["correlation"]]
        launches[e["correlation"]] = (float(c["dur_us"]), float(e["dur_us"]),
                                      float(e["ts_us"] - c["ts_us"] - c["dur_us"]))
    comm = [(e["ts_us"], e["ts_us"] + e["dur_us"]) for e in gpu
            if KERNEL_TYPES[e["type"]] == "COMMUNICATION"]
    comp = [(e["ts_us"], e["ts_us"] + e["dur_us"]) for e in gpu
            if KERNEL_TYPES[e["type"]] == "COMPUTATION"]
    return {
        "gpu": gpu,
        "kernel_time": kernel_time,
        "idle": idle,
        "compute": compute,
        "non_compute": kernel_time - compute - idle,
        "types": type_partition(gpu),
        "per_name": {n: (sum(d), max(d), min(d), sum(d) / len(d)) for n, d in per_name.items()},
        "steps": steps,
        "launches": launches,
        "overlap_pct": round(100 * intersect(comm, comp) / measure(comm), 2),
    }


def check_correlation(analysis, want):
    df = analysis.t.get_trace(0)
    gpu = df[df["stream"].ge(0)]
    check("GPU events", len(gpu), len(want["gpu"]))
    check("GPU events per stream",
          {int(k): int(v) for k, v in gpu.groupby("stream").size().items()},
          {s: sum(1 for e in want["gpu"] if e["stream"] == s)
           for s in {e["stream"] for e in want["gpu"]}})
    linked = gpu[gpu["index_correlation"].gt(0)]
    check("GPU events tied to their launch", len(linked), len(want["gpu"]))
    same = all(df.loc[i, "correlation"] == c
               for i, c in zip(linked["index_correlation"], linked["correlation"]))
    check("each tie joins equal correlation ids", same, True)


def check_temporal(analysis, want):
    row = analysis.get_temporal_breakdown(visualize=False).iloc[0]
    check("rank", int(row["rank"]), 0)
    check("kernel_time(us)", float(row["kernel_time(us)"]), float(want["kernel_time"]))
    check("idle_time(us)", float(row["idle_time(us)"]), float(want["idle"]))
    check("compute_time(us)", float(row["compute_time(us)"]), float(want["compute"]))
    check("non_compute_time(us)", float(row["non_compute_time(us)"]), float(want["non_compute"]))


def check_kernels(analysis, want):
    by_type, by_name = analysis.get_gpu_kernel_breakdown(visualize=False,
                                                         include_memory_kernels=True)
    check("time per kernel type (us)",
          {r["kernel_type"]: int(r["sum"]) for _, r in by_type.iterrows()},
          want["types"])
    got = {r["name"]: (float(r["sum (us)"]), float(r["max (us)"]), float(r["min (us)"]),
                       float(r["mean (us)"])) for _, r in by_name.iterrows()}
    check("sum/max/min/mean per kernel (us)", got,
          {n: tuple(float(v) for v in s) for n, s in want["per_name"].items()})


def check_launches(analysis, want):
    stats = analysis.get_cuda_kernel_launch_stats(visualize=False)[0]
    check("launch stats per correlation (cpu, gpu, delay us)",
          {int(r["correlation"]): (float(r["cpu_duration"]), float(r["gpu_duration"]),
                                   float(r["launch_delay"])) for _, r in stats.iterrows()},
          want["launches"])


def check_overlap(analysis, want):
    row = analysis.get_comm_comp_overlap(visualize=False).iloc[0]
    check("communication overlapped by computation (%)",
          round(float(row["comp_comm_overlap_pctg"]), 2), want["overlap_pct"])


def main():
    trace_dir, written_path = sys.argv[1], sys.argv[2]
    with open(written_path) as f:
        written = json.load(f)
    want = expected(written)
    analysis = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True)
    check("ranks", analysis.t.get_ranks(), [written["rank"]])
    meta = analysis.t.meta_data[0]
    check("distributedInfo", meta.get("distributedInfo"),
          {"rank": written["rank"], "world_size": written["world_size"],
           "backend": written["backend"]})
    check("deviceProperties numSms", meta["deviceProperties"][0]["numSms"], written["sm_count"])
    check("iterations", [int(i) for i in analysis.t.get_iterations()], want["steps"])
    check_correlation(analysis, want)
    check_temporal(analysis, want)
    check_kernels(analysis, want)
    check_launches(analysis, want)
    check_overlap(analysis, want)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
