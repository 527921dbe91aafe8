#!/usr/bin/env python3
"""Cut a Kineto trace after its first N ProfilerStep ranges, keeping it whole
otherwise: every host event that starts before the end of step N, all the GPU
work those host events launched (by correlation id, wherever it ran: the
work queued in a step that runs past it stays), the GPU work without a call
that starts before the cut, their flow events, and all metadata. The slice
is the same program's trace, shorter; nothing in it is made up.

    slice.py IN.json.gz OUT.json.gz N
"""
import gzip
import json
import sys

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"}


def main():
    src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    steps = sorted(e["ts"] + e["dur"] for e in ev
                   if e.get("ph") == "X" and e.get("cat") not in GPU_CATS
                   and e["name"].startswith("ProfilerStep#"))
    cut = steps[n - 1]
    host = [e for e in ev if e.get("ph") == "X" and e.get("cat") not in GPU_CATS and e["ts"] < cut]
    corr = {e["args"]["correlation"] for e in host if "correlation" in e.get("args", {})}

    def keep(e):
        ph = e.get("ph")
        if ph == "M":
            return True
        if ph in ("s", "f"):
            return e.get("id") in corr
        if ph == "X" and e.get("cat") in GPU_CATS:
            c = e.get("args", {}).get("correlation")
            return c in corr if c not in (None, 0, -1) else e["ts"] < cut
        return e.get("ts", cut) < cut
    doc["traceEvents"] = [e for e in ev if keep(e)]
    with gzip.open(dst, "wt", compresslevel=9) as f:
        json.dump(doc, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
