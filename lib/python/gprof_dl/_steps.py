"""Training steps (ProfileStep#N), inferred from the loop's structure or marked
explicitly with gprof_dl.step(); one Steps object per process.

A step is known to be one only once it has ended, so each is recorded after
the fact with the collector's range() call; step(n) is called on the collector
when step n begins, which moves the --steps window. The rule (gprof-dl-run(1)):

Loader mode. A fetch from a DataLoader iterator opens a pending step at the
fetch's start. The pending step becomes a step when an optimizer step()
completes inside it; it is then closed at the start of the next fetch (from any
iterator), at the StopIteration fetch of its iterator (at that fetch's start),
or at process exit / gprof_dl.stop() (at the end of its last optimizer step).
Fetches that come while the pending step has no optimizer step yet join it when
they come from the same iterator (gradient accumulation: K micro-batches are one
step, their samples summed); a fetch from another iterator discards it (an
evaluation loop makes no steps) and opens a new one. StopIteration of its
iterator discards a pending step without optimizer step.

Optimizer mode (no fetch since the last step closed). A step ends when the
anchor optimizer's step() returns: the anchor is the first optimizer object that
steps in the process (the next one to step once it is garbage), so several
optimizers per iteration make one step per iteration. The step starts where the
previous one ended; the first one at the start of the process's first Forward,
Backward or Optimization range or zero_grad() call.

Explicit mode. The first gprof_dl.step() turns inference off in the process for
good: each call ends the current step (samples: its argument, or 0) and begins
the next. The first step begins at gprof_dl.start() if it was called, else at
the first DataLoader fetch or phase range, else at that first call, which then
only begins it. A step that optimizer mode inferred is the first call's own
when that call comes before the next optimizer step (steps are recorded one
step late in optimizer mode for that reason): `opt.step(); gprof_dl.step()`
makes exactly one step per iteration.

Steps count from 0 in each process; a forked child starts again from 0, and
DataLoader workers make no steps.
"""

import os
import weakref

from . import _native as _n

_CAT_STEP = _n.CAT_PROFILE_STEP


class _Pending:
    """A loader-mode step that is not known to be one yet."""

    __slots__ = ("it", "start", "samples", "opt_end")

    def __init__(self, it, start):
        self.it = it  # weak reference to the iterator that opened it
        self.start = start
        self.samples = 0
        self.opt_end = None  # end of its last optimizer step(), None: none yet


class Steps:
    def __init__(self):
        self.on_begin = None  # called after the collector's step(n): detail may change
        self.reset()

    def reset(self):
        self.n = 0  # number of the step being made (steps closed so far)
        self.begun = -1  # the last n given to the collector's step()
        self.explicit = False
        self.worker = False  # a DataLoader worker: no steps of its own
        self.pending = None
        self.cur_start = None  # optimizer and explicit modes: start of the current step
        self.last_end = None  # end of the last step closed
        self.first_phase = None  # start of the process's first phase range
        self.first_fetch = None  # start of its first DataLoader fetch
        self.started = None  # time of the first gprof_dl.start()
        self.anchor = None  # weak reference to the anchor optimizer
        # An optimizer-mode step is recorded one step late (at the next anchor
        # step, fetch, stop or exit): a gprof_dl.step() that comes first takes
        # it back, so that a script marking its steps gets exactly its steps.
        self.deferred = None  # (n, start, end, samples, last_end before it)

    # ---- what the hooks report --------------------------------------------

    def fetch_start(self, it):
        """A fetch from DataLoader iterator IT begins."""
        if self.explicit or self.worker:
            if self.first_fetch is None:
                self.first_fetch = _n.now()
            return
        p = self.pending
        if p is not None and p.opt_end is None and p.it() is it:
            return  # another micro-batch of the same step
        t = _n.now()
        if self.first_fetch is None:
            self.first_fetch = t
        self._flush()
        if p is not None and p.opt_end is not None:
            self._close(p.start, t, p.samples)
        # else a pending step of another iterator without optimizer step is not
        # a step (an evaluation loop, say): dropped with the new one below.
        self.cur_start = None
        self.pending = _Pending(weakref.ref(it), t)
        self._begin()

    def fetch_end(self, it, samples):
        """A fetch from IT returned a batch of SAMPLES samples."""
        p = self.pending
        if p is not None and p.it() is it:
            p.samples += samples

    def fetch_exhausted(self, it):
        """A fetch from IT raised StopIteration. fetch_start has closed any step of
        IT that had an optimizer step, and opened a pending one: discard it."""
        p = self.pending
        if p is not None and p.it() is it:
            self.pending = None

    def phase_start(self):
        """An outermost Forward, Backward or Optimization range begins."""
        if self.first_phase is None:
            self.first_phase = _n.now()
        if self.pending is not None or self.cur_start is not None or self.explicit or self.worker:
            return
        self.cur_start = self.last_end if self.last_end is not None else self.first_phase
        self._begin()

    def optimizer_stepped(self, opt):
        """OPT's step() returned."""
        if self.explicit or self.worker:
            return
        a = self.anchor() if self.anchor is not None else None
        if a is None:
            self.anchor = weakref.ref(opt)
            a = opt
        p = self.pending
        if p is not None:
            p.opt_end = _n.now()
            return
        if a is not opt:
            return
        end = _n.now()
        start = self.cur_start
        if start is None:
            start = self.last_end if self.last_end is not None else end
        self._close(start, end, 0, defer=True)
        self.cur_start = end
        self._begin()

    # ---- the explicit API ---------------------------------------------------

    def step(self, samples):
        """gprof_dl.step(num_samples)."""
        t = _n.now()
        if not self.explicit:
            self.explicit = True
            self.pending = None
            d, self.deferred = self.deferred, None
            if d is not None:  # the step inferred last is this call's step
                self.n, self.last_end = d[0], d[4]
            start = self.started
            if start is None:
                firsts = [x for x in (self.first_phase, self.first_fetch) if x is not None]
                start = min(firsts) if firsts else None
            if start is not None and self.last_end is not None and start < self.last_end:
                start = self.last_end
            if start is None:
                self.cur_start = t
                self._begin()
                return
            self.cur_start = start
        self._close(self.cur_start, t, samples)
        self.cur_start = t
        self._begin()

    def start(self):
        """gprof_dl.start()."""
        if self.started is None:
            self.started = _n.now()
        if self.on_begin is not None:
            self.on_begin()

    def stop(self):
        """gprof_dl.stop(): a pending step with an optimizer step ends at its end."""
        self._flush()
        p = self.pending
        if p is not None and p.opt_end is not None:
            self._close(p.start, p.opt_end, p.samples)
            self.pending = None
        if self.on_begin is not None:
            self.on_begin()

    def exit(self):
        """The process exits: close what is known to be a step, drop the rest."""
        if self.worker:
            return
        self._flush()
        p = self.pending
        self.pending = None
        if p is not None and p.opt_end is not None:
            self._close(p.start, p.opt_end, p.samples)

    # ---- the collector ------------------------------------------------------

    def _close(self, start, end, samples, defer=False):
        self._flush()
        rec = (self.n, start, end if end > start else start, samples, self.last_end)
        self.last_end = end
        self.pending = None
        self.n += 1
        if defer:
            self.deferred = rec
        else:
            self._record(rec)

    def _flush(self):
        d = self.deferred
        if d is not None:
            self.deferred = None
            self._record(d)

    @staticmethod
    def _record(rec):
        n, start, end, samples, _ = rec
        _n.range(_CAT_STEP, _n.string("ProfileStep#%d" % n), start, end, samples)

    def _begin(self):
        if self.begun == self.n:
            return
        self.begun = self.n
        _n.step(self.n)
        if self.on_begin is not None:
            self.on_begin()


state = Steps()


def _after_fork_in_child():
    state.reset()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
