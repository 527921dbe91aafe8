"""check_thread_names.py - threads carry their names in a real torch run.

    python3 check_thread_names.py GPROF_DL PYTHON

Runs a torch program under `GPROF_DL run` with PYTHON (exit 77, a skip, when
it has no torch): its main thread, a threading.Thread named "loader" that
runs a backward pass, and torch's inter-op pool (a scripted fork runs its
matmul on a thread that torch names "PTThreadPool" through
pthread_setname_np); on a CUDA build with a GPU, also a backward pass on the
GPU, which torch runs on its autograd thread "pt_autograd_0". The program
ends with os._exit: no thread end is written, so every name must have been
recorded when it was given.

Then each name must appear where a user looks: `info` (the threads table),
`summary --view operator --thread-sep --format json` (each thread's section
names its thread) and `export --chrome` (thread_name metadata), and no host
thread that has events may be left under the kernel's inherited "python3".
Exit status: 0 all there, 1 a name missing (each one printed), 77 no torch.
"""
import json
import os
import subprocess
import sys
import tempfile

PROGRAM = r'''
import os, sys, threading
import torch

@torch.jit.script
def forked(x):
    fut = torch.jit._fork(torch.mm, x, x)
    return torch.jit._wait(fut)

def work():
    x = torch.randn(64, 64, requires_grad=True)
    for _ in range(5):
        (x @ x).sum().backward()

t = threading.Thread(target=work, name="loader")
t.start()
t.join()
for _ in range(3):
    forked(torch.randn(32, 32))
if torch.cuda.is_available():
    y = torch.randn(256, 256, device="cuda", requires_grad=True)
    (y @ y).sum().backward()
    torch.cuda.synchronize()
    print("cuda")
sys.stdout.flush()
os._exit(0)
'''

failures = []


def check(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def main():
    gpdl, python = sys.argv[1], sys.argv[2]
    if not python or not os.access(python, os.X_OK) or \
            subprocess.run([python, "-c", "import torch"], capture_output=True).returncode != 0:
        print(f"SKIP: '{python}' has no torch")
        return 77
    with tempfile.TemporaryDirectory(prefix="gpdl-threads-") as work:
        prog = os.path.join(work, "threads.py")
        trace = os.path.join(work, "t.gpdl")
        with open(prog, "w") as f:
            f.write(PROGRAM)
        r = subprocess.run([gpdl, "run", "-q", "-o", trace, "--", python, prog],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            return 1
        cuda = "cuda" in r.stdout.split()
        want = ["MainThread", "loader", "PTThreadPool"] + (["pt_autograd_0"] if cuda else [])

        info = subprocess.run([gpdl, "info", trace], capture_output=True, text=True, check=True).stdout
        rows = info.split("threads:", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
        names = [row.split()[-1] for row in rows if len(row.split()) == 8]
        for n in want:
            check(f"info lists a thread named {n!r} (threads: {names})", n in names)

        s = subprocess.run([gpdl, "summary", trace, "--view", "operator", "--thread-sep",
                            "--format", "json"], capture_output=True, text=True, check=True)
        sections = json.loads(s.stdout)["tables"]["operator"]["sections"]
        named = [sec["thread"]["name"] for sec in sections if sec.get("thread")]
        # the threads that ran operators: the main thread, loader, the pool
        for n in ["MainThread", "loader", "PTThreadPool"]:
            check(f"summary's operator sections name {n!r} (sections: {named})", n in named)
        check(f"no section is left as 'python3' ({named})", "python3" not in named)

        out = os.path.join(work, "t.json")
        subprocess.run([gpdl, "export", "--chrome", trace, "-o", out], capture_output=True,
                       check=True)
        with open(out) as f:
            events = json.load(f)["traceEvents"]
        meta = [e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"]
        for n in want:
            check(f"chrome thread_name {n!r} (names: {meta})", n in meta)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
