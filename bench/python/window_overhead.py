#!/usr/bin/env python3
"""What the program pays outside a capture window, against --timer-only.

    bench/python/window_overhead.py --gprof-dl build/bin/gprof-dl \
        [--python /usr/bin/python3] [--rounds 7] [-- ARGS FOR examples/train.py]
    cmake --build build --target bench-python-window   # the same, torch 1.13 and torch 2

Runs the bundled example (examples/train.py, as timer_only_overhead.py does)
ROUNDS times under each of: `gprof-dl run --timer-only`; `--capture-range=nvtx
--nvtx-capture NEVER`, a capture range the program never opens, so that the
whole run is outside the window; and `--schedule` with an active step past
the end (wait=1000000,active=1), the same for the schedule. The order of the
three rotates each round. Issue 17 asks that outside the window the collector
cost what --timer-only costs: the medians of the script's own ips, and their
ratios to --timer-only's, say how near; on a busy machine the best of each
side holds better than the median. (Outside the window the Python package
still looks at the window at each phase, forward, backward and optimizer
step, which --timer-only does not hook.)

Prints figures, never fails on time."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.normpath(os.path.join(HERE, "..", "..", "examples", "train.py"))
DEFAULT_ARGS = ["--steps", "200", "--epochs", "2", "--batch-size", "64", "--hidden", "512", "--threads", "1"]
THROUGHPUT = re.compile(rb"throughput: ([0-9.]+) samples/s")
SIDES = (
    ("--timer-only", ["--timer-only"]),
    ("capture never opened", ["--capture-range=nvtx", "--nvtx-capture", "gprof-dl-bench-never"]),
    ("schedule never active", ["--schedule", "wait=1000000,active=1"]),
)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cache-dir", default="", help="GPROF_DL_CACHE_DIR for the package")
    ap.add_argument("args", nargs="*", help="examples/train.py arguments (after --)")
    a = ap.parse_args()
    args = a.args or DEFAULT_ARGS
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPROF_DL_") and k != "PYTHONPATH"}
    if a.cache_dir:
        env["GPROF_DL_CACHE_DIR"] = a.cache_dir
    ver = subprocess.run([a.python, "-c", "import torch; print(torch.__version__)"], capture_output=True, env=env)
    if ver.returncode:
        print(f"{a.python} cannot import torch: skipped")
        return 0
    print(f"window overhead: torch {ver.stdout.decode().strip()}, {a.python} {EXAMPLE} {' '.join(args)}")
    ips = {name: [] for name, _ in SIDES}
    with tempfile.TemporaryDirectory(prefix="gpdl-bench-") as tmp:
        out = os.path.join(tmp, "t.gpdl")
        for r in range(a.rounds):
            line = []
            for k in range(len(SIDES)):
                name, opts = SIDES[(k + r) % len(SIDES)]
                p = subprocess.run([a.gprof_dl, "run", "-q", "-o", out, "--force", *opts, "--", a.python,
                                    EXAMPLE, *args], capture_output=True, env=env)
                m = THROUGHPUT.search(p.stdout)
                if p.returncode != 0 or not m:
                    sys.exit(f"{name} failed (status {p.returncode}):\n{p.stdout.decode()}\n"
                             f"{p.stderr.decode()[-4000:]}")
                ips[name].append(float(m[1]))
                line.append(f"{name} {float(m[1]):9.1f}")
            print(f"  round {r + 1:2}: " + ",  ".join(line) + " samples/s", flush=True)
    base = statistics.median(ips[SIDES[0][0]])
    best = max(ips[SIDES[0][0]])
    for name, _ in SIDES:
        med, top = statistics.median(ips[name]), max(ips[name])
        print(f"{name:22} median ips {med:9.1f}, ratio to --timer-only {med / base:.4f} ({(med / base - 1) * 100:+.2f}%); "
              f"best {top:9.1f}, ratio {top / best:.4f} ({(top / best - 1) * 100:+.2f}%)")
    spread = max(ips[SIDES[0][0]]) / min(ips[SIDES[0][0]]) - 1
    print(f"noise: the --timer-only runs' ips spread {spread * 100:.1f}% from slowest to fastest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
