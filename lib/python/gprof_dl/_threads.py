"""Python's thread names in the trace: "MainThread", "Thread-1 (worker)", the
name a program gave threading.Thread ("loader"), instead of the kernel's
("python3", inherited by every thread Python starts).

The names go into the trace only (through the collector's NVTX entry,
nvtxNameOsThread), never to the OS: the program's threads keep their own
names, as ps and the program itself see them. install() names the threads
alive at that moment and wraps Thread._bootstrap_inner, the first thing each
new Python thread runs, which costs one call per thread started and nothing
per event. A thread renamed after it started keeps its first name.
"""

import functools
import threading

from . import _native as _n


def _name_live_threads():
    for t in threading.enumerate():
        tid = getattr(t, "native_id", None)
        if tid:
            _n.name_thread(str(t.name), tid)


def install():
    """Name the live threads, and every Python thread that starts from now on."""
    if _n.options() & _n.OPT_NO_PYTHON:
        return  # gprof-dl run --no-python: Python is left alone
    orig = getattr(threading.Thread, "_bootstrap_inner", None)
    if orig is None or getattr(orig, "_gprof_dl", False):
        return  # installed already (or by gprof_dl._torch)
    name_thread = _n.name_thread

    @functools.wraps(orig)
    def _bootstrap_inner(self):
        try:
            name_thread(str(self.name))
        except Exception:  # never the program's failure
            pass
        return orig(self)

    _bootstrap_inner._gprof_dl = True
    threading.Thread._bootstrap_inner = _bootstrap_inner
    try:
        _name_live_threads()
    except Exception:
        pass
