"""Python's garbage collections as PythonOp ranges named "Python GC
(generation N)", on the thread that ran each one, from the collection's start to
its end: time the program spent collecting, holding the GIL.

One function appended to gc.callbacks (after the callbacks already there, so
theirs keep their order and run as before); CPython calls it at the start and
at the end of every collection, on the collecting thread, with the GIL held,
and never runs two collections at once. The range is pushed at the start and
popped at the end through the collector, so it nests with the thread's other
ranges and is recorded only while detail is (the collector's window). A
collection that began before install() (or a stop after uninstall()) is left
alone: the end pops only what the start pushed.

Not installed under --timer-only or --no-python; a DataLoader worker takes it
out (_torch), as it does every hook. The callback never raises.
"""

import gc

from . import _native as _n

_NAMES = ("Python GC (generation 0)", "Python GC (generation 1)", "Python GC (generation 2)")
_cb = None


def _make():
    push, pop, string = _n.push, _n.pop, _n.string
    cat = _n.CAT_PYTHON_OP
    ids = [0, 0, 0]
    open_ = [False]  # a range of ours is open: pop it at the stop

    def _gprof_dl_gc(phase, info):
        try:
            if phase == "start":
                g = info.get("generation", 2)
                if not 0 <= g <= 2:
                    g = 2
                i = ids[g]
                if not i:
                    i = ids[g] = string(_NAMES[g])
                push(cat, i)
                open_[0] = True
            elif open_[0]:
                open_[0] = False
                pop()
        except Exception:  # never the program's failure
            pass

    return _gprof_dl_gc


def install():
    """Record every collection from now on (once per process)."""
    global _cb
    opts = _n.options()
    if opts & (_n.OPT_NO_PYTHON | _n.OPT_TIMER_ONLY) or _cb is not None:
        return
    _cb = _make()
    gc.callbacks.append(_cb)


def uninstall():
    """No more collections recorded (a DataLoader worker records nothing)."""
    global _cb
    cb, _cb = _cb, None
    if cb is None:
        return
    try:
        gc.callbacks.remove(cb)
    except ValueError:  # the program took it out itself
        pass
