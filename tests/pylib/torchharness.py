"""What the harnesses that run real torch (tests/python, tests/dist) share:
which torch an interpreter has, and their command line, skips and case
runner."""
import argparse
import hashlib
import os
import socket
import subprocess

from checks import SKIP, Failure, run_bounded, run_case, text


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


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now (a job's master)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JobCtx:
    """A case's context for a job of torch ranks: the environment holds
    nothing of the caller's job, launcher or collector, so that each case
    starts its ranks and names its job itself."""

    def __init__(self, args, tmp):
        self.gpdl = args.gprof_dl
        self.py = args.python
        self.torch = args.torch
        self.tmp = tmp
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GPROF_DL_", "OMPI_", "PMI_", "SLURM_", "PADDLE_", "TORCH_DISTRIBUTED_"))
               and k not in ("PYTHONPATH", "LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH",
                             "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
        env["GPROF_DL_CACHE_DIR"] = args.cache_dir
        env["PYTHONUNBUFFERED"] = "1"
        env["OMP_NUM_THREADS"] = "1"
        self.env = env

    def path(self, name):
        return os.path.join(self.tmp, name)

    def gprof(self, *args, status=0):
        """gprof-dl ARGS in the case's folder; its exit status must be STATUS
        (None: any)."""
        p = run_bounded([self.gpdl, *args], env=self.env, cwd=self.tmp)
        if status is not None and p.returncode != status:
            raise Failure(f"gprof-dl {' '.join(args)}: status {p.returncode}, expected {status}\n"
                          f"stdout: {text(p.stdout)[-3000:]}\nstderr: {text(p.stderr)[-3000:]}")
        return p


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
