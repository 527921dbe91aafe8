"""gprof_dl: mark what gprof-dl cannot infer in a training program.

    import gprof_dl

    for batch in data:
        with gprof_dl.RecordEvent("preprocess"):     # a UserDefined range
            batch = prepare(batch)
        train_step(batch)
        gprof_dl.step(num_samples=len(batch))        # one ProfileStep per call

    @gprof_dl.RecordEvent("evaluate")                  # also a decorator
    def evaluate(model): ...

    gprof_dl.start(); ...; gprof_dl.stop()             # full detail only in between
                                                       # (with gprof-dl run --paused)

Under `gprof-dl run` a PyTorch program needs none of this: steps, phases and
operators are recorded without a change (gprof-dl-run(1)). Elsewhere every
function here is a cheap no-op, so the calls can stay in production code;
importing the package never imports torch.
"""

__all__ = ["RecordEvent", "enabled", "start", "step", "stop"]

try:
    from . import _native
except ImportError as e:  # the package without its extension: nothing to record to
    _native, _native_error = None, e

_on = _native is not None and _native.available()
if _on:
    from ._steps import state as _state
    from ._threads import install as _name_threads
    from ._gc import install as _record_gc

    _name_threads()  # Python's thread names in the trace ("MainThread", "loader")
    _record_gc()  # garbage collections as PythonOp ranges

    _push, _pop, _string = _native.push, _native.pop, _native.string
_ids = {}  # name -> the collector's id


def enabled():
    """True when the program runs under `gprof-dl run`, which records these calls."""
    return _on


def step(num_samples=None):
    """End the current training step and begin the next one.

    The first call turns gprof-dl's step inference off in this process for good:
    every call then ends a step (num_samples: its samples, for ips in samples/s).
    The first step begins at start() if it was called, else at the first
    DataLoader fetch or Forward, Backward or Optimization range, else at this
    first call (which then only begins it)."""
    if _on:
        _state.step(int(num_samples) if num_samples else 0)


def start():
    """Record full detail from now on (see gprof-dl run --paused)."""
    if _on:
        _native.start()
        _state.start()


def stop():
    """Stop recording full detail; step timing goes on."""
    if _on:
        _native.stop()
        _state.stop()


def _intern(name):
    i = _ids.get(name)
    if i is None:
        i = _ids[name] = _string(name)
    return i


class RecordEvent:
    """A UserDefined range named NAME: `with RecordEvent(name):`, a decorator,
    or begin() and end() as Paddle's RecordEvent. Nests with every other range
    of the thread."""

    __slots__ = ("name",)

    def __init__(self, name, event_type=None):
        del event_type  # Paddle's argument: the range is UserDefined
        self.name = str(name)

    def begin(self):
        if _on:
            _push(0, _intern(self.name))

    def end(self):
        if _on:
            _pop()

    def __enter__(self):
        if _on:
            _push(0, _intern(self.name))
        return self

    def __exit__(self, exc_type, exc, tb):
        if _on:
            _pop()
        return False

    def __call__(self, fn):
        if not _on:
            return fn
        import functools

        name = self.name

        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            _push(0, _intern(name))
            try:
                return fn(*args, **kwargs)
            finally:
                _pop()

        return recorded
