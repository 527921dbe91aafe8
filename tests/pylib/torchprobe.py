"""Which torch an interpreter has, for the harnesses that run real torch
(tests/python, tests/dist). Importing torch takes seconds, so a successful
probe is remembered in the cache, keyed by the interpreter and torch's
__init__.py and its mtime."""
import hashlib
import os
import subprocess


def torch_version(py, cache_dir):
    """torch's version for interpreter PY, or None when it cannot import torch."""
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
