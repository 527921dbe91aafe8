"""What the harnesses that run real torch (tests/python, tests/dist) share:
which torch an interpreter has, and their command line, skips and case
runner."""
import argparse
import hashlib
import os
import subprocess

from checks import SKIP, run_case


def torch_version(py, cache_dir):
    """torch's version for interpreter PY, or None when it cannot import torch.
    Importing torch takes seconds, so a successful probe is remembered in the
    cache, keyed by the interpreter and torch's __init__.py and its mtime."""
    p = subprocess.run([py, "-c", "import importlib.util as u; s = u.find_spec('torch'); print(s.origin if s else '')"],
                       capture_output=True)
    origin = p.stdout.decode().strip() if p.returncode == 0 else ""
    if not origin:
        return None
    key = f"{os.path.realpath(py)} {origin} {os.stat(origin).st_mtime_ns}"
    stamp = os.path.join(cache_dir, "torch-probe-" + hashlib.sha1(key.encode()).hexdigest()[:16])
    try:
        with open(stamp, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        pass
    p = subprocess.run([py, "-c", "import torch; print(torch.__version__)"], capture_output=True)
    if p.returncode != 0:
        return None
    version = p.stdout.decode().strip()
    tmp = f"{stamp}.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(version)
    os.replace(tmp, stamp)
    return version


def torch_main(cases, make_ctx, prefix, add_args):
    """Runs the case --case names (cases["case_" + name]) against --python's
    torch: 0 pass, 1 fail, SKIP when there is no such interpreter, no built
    gprof_dl package or no torch, saying why. add_args(ap) adds the harness's
    own options; make_ctx(args, tmp) makes a case's context."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--pydir", required=True, help="the built gprof_dl package's directory")
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--python", default="", help="the interpreter with torch")
    ap.add_argument("--torch", required=True, choices=("1", "2"))
    ap.add_argument("--case", required=True)
    add_args(ap)
    args = ap.parse_args()
    fn = cases.get("case_" + args.case)
    if not fn:
        print(f"unknown case {args.case}")
        return 1
    if not args.python:
        print("SKIP: no torch 2 interpreter: configure with -DGPDL_TORCH2_PYTHON=/path/to/venv/bin/python "
              "(tests/python/setup-torch2-venv makes one)")
        return SKIP
    if not os.path.exists(os.path.join(args.pydir, "sitecustomize.py")):
        print(f"SKIP: the gprof_dl Python package is not built in {args.pydir} (it needs python3-dev)")
        return SKIP
    os.makedirs(args.cache_dir, exist_ok=True)
    version = torch_version(args.python, args.cache_dir)
    if not version:
        print(f"SKIP: {args.python} cannot import torch")
        return SKIP
    return run_case(args.case, fn, lambda tmp: make_ctx(args, tmp), prefix, f"torch {version}")
