"""The hooks into torch, installed by gprof-dl's sitecustomize right after the
program imports torch: Dataloader, Forward, Backward and Optimization ranges,
the events the step inference needs (_steps), and operators (_ops).

- Dataloader: _BaseDataLoaderIter.__next__ (every DataLoader, with or without
  workers): the time to fetch a batch, recorded once the batch is there (the
  fetch that ends an epoch with StopIteration is not a Dataloader range).
- Forward: the outermost nn.Module call on the thread; a loss module
  (nn.modules.loss._Loss) called outside a forward is not a Forward.
- Backward: Tensor.backward and torch.autograd.backward, outermost call.
- Optimization: step() of every torch.optim.Optimizer class (wrapped when its
  first instance is made), named Optimization#<class>.step. zero_grad() of
  optimizers and of modules (outside a forward) is watched for the steps but
  is no range of its own (_ZERO_GRAD_RANGES).

- Distributed: torch.distributed.init_process_group, once it has returned,
  reports the process's rank, world size and backend to the collector (the
  rank of an mp.spawn child is known only then), and on CUDA builds turns on
  the recording of communication calls (_ops). Every process group made is
  registered with the observer, and send, recv, isend and irecv are wrapped,
  so that communication calls say their group, sequence number and peer
  (_ops.Groups).
- Memory (--profile-memory): the allocations and frees of torch's allocators
  as Memory events, through the observer (_ops.Memory), started here, on the
  thread that imported torch, before the program can start a profiler.
- Threads: a Python thread names its OS thread in the trace with its
  threading name as it starts (the main thread keeps the process's name).

Every wrapper calls straight through when torch.compile is tracing it, and pops
its range in a finally clause, so an exception leaves no range open. Nothing is
recorded inside a batch fetch but the fetch (a module used as a transform is no
Forward). DataLoader workers undo every hook and record nothing of their own.
Under --timer-only only what steps and Dataloader ranges need is installed.
"""

import atexit
import functools
import os
import sys
import threading

from . import _native as _n
from . import _steps

_steps_state = _steps.state
_patches = []  # (owner, attribute, original), undone in DataLoader workers
_ops = None
_memory = None  # --profile-memory: _ops.Memory
_groups = None  # _ops.Groups, once torch.distributed is hooked
# zero_grad() as Optimization ranges of their own: off, so that the Model
# Summary counts one Optimization call per optimizer step, as Paddle's does
# (zero_grad's time shows as torch's Optimizer.zero_grad#... operator).
_ZERO_GRAD_RANGES = False


# What each thread is inside of, as bits of _State.bits: a phase is recorded at
# its outermost call only, and none is recorded inside a batch fetch.
_FWD, _BWD, _OPT, _FETCH = 1, 2, 4, 8


class _State(threading.local):
    bits = 0


_tls = _State()


def _patch(owner, attr, wrapper):
    _patches.append((owner, attr, owner.__dict__.get(attr)))
    setattr(owner, attr, wrapper)


def _unpatch_all():
    for owner, attr, orig in reversed(_patches):
        try:
            if orig is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, orig)
        except (AttributeError, TypeError):
            pass
    del _patches[:]


def _compiling_check(torch):
    """A cheap function that torch.compile's tracer sees as True; None without
    torch.compile."""
    compiler = getattr(torch, "compiler", None)
    for name in ("is_dynamo_compiling", "is_compiling"):
        f = getattr(compiler, name, None)
        if f is not None:
            return f
    dynamo = sys.modules.get("torch._dynamo")
    return getattr(dynamo, "is_compiling", None)


def _batch_samples(batch, tensor_type):
    """size(0) of the first tensor found in BATCH: the batch itself, the first
    element of a tuple or list, the first value of a dict, a few levels down."""
    b = batch
    for _ in range(4):
        if isinstance(b, tensor_type):
            try:
                return int(b.shape[0]) if b.dim() > 0 else 0
            except Exception:
                return 0
        if isinstance(b, (tuple, list)):
            if not b:
                return 0
            b = b[0]
        elif isinstance(b, dict):
            b = next(iter(b.values()), None)
        else:
            return 0
    return 0


def _hook_dataloader(torch):
    from torch.utils.data import dataloader

    base = dataloader._BaseDataLoaderIter
    orig = base.__next__
    tls, steps = _tls, _steps_state
    now, rng, cat, name = _n.now, _n.range, _n.CAT_DATALOADER, _n.string("Dataloader")
    tensor = torch.Tensor

    @functools.wraps(orig)
    def __next__(self):
        bits = tls.bits
        if bits & _FETCH:
            return orig(self)
        steps.fetch_start(self)
        tls.bits = bits | _FETCH
        t0 = now()
        try:
            batch = orig(self)
        except StopIteration:
            tls.bits = bits
            steps.fetch_exhausted(self)
            raise
        except BaseException:
            tls.bits = bits
            rng(cat, name, t0, now(), 0)
            raise
        tls.bits = bits
        rng(cat, name, t0, now(), 0)
        steps.fetch_end(self, _batch_samples(batch, tensor))
        return batch

    _patch(base, "__next__", __next__)

    # Workers record no steps and no operators of their own, and pay nothing.
    from torch.utils.data._utils import worker

    orig_loop = worker._worker_loop

    @functools.wraps(orig_loop)
    def _worker_loop(*args, **kwargs):
        _enter_worker()
        return orig_loop(*args, **kwargs)

    _patch(worker, "_worker_loop", _worker_loop)


def _enter_worker():
    _steps_state.worker = True
    _steps_state.pending = None
    if _ops is not None:
        _ops.close()
    if _memory is not None:
        _memory.close()
    _unpatch_all()
    from . import _gc

    _gc.uninstall()


def _backward_wrapper(orig, compiling, on_start):
    """Tensor.backward and torch.autograd.backward: one Backward range for the
    outermost call (Tensor.backward calls autograd.backward)."""
    tls = _tls
    push, pop, cat, name = _n.push, _n.pop, _n.CAT_BACKWARD, _n.string("Backward")
    dyn = compiling is not None

    @functools.wraps(orig)
    def backward(*args, **kwargs):
        if dyn and compiling():
            return orig(*args, **kwargs)
        bits = tls.bits
        if bits & (_BWD | _FETCH):
            return orig(*args, **kwargs)
        tls.bits = bits | _BWD
        on_start()
        push(cat, name)
        try:
            return orig(*args, **kwargs)
        finally:
            pop()
            tls.bits = bits

    backward._gprof_dl = True
    return backward


def _hook_forward(torch, compiling, on_start):
    """Module.__call__: every module call goes through this, so it is kept short;
    without torch.compile (torch 1.x) it does not even ask whether it is traced."""
    nn = torch.nn
    orig = nn.Module.__call__
    tls = _tls
    push, pop, cat, name = _n.push, _n.pop, _n.CAT_FORWARD, _n.string("Forward")
    # A loss module called on the model's output is not a forward of its own.
    loss = getattr(getattr(nn.modules, "loss", None), "_Loss", ())

    def outermost(self, bits, args, kwargs):
        if isinstance(self, loss):
            return orig(self, *args, **kwargs)
        tls.bits = bits | _FWD
        on_start()
        push(cat, name)
        try:
            return orig(self, *args, **kwargs)
        finally:
            pop()
            tls.bits = bits

    if compiling is None:

        def __call__(self, *args, **kwargs):
            bits = tls.bits
            if bits & (_FWD | _FETCH):
                return orig(self, *args, **kwargs)
            return outermost(self, bits, args, kwargs)

    else:

        def __call__(self, *args, **kwargs):
            if compiling():
                return orig(self, *args, **kwargs)
            bits = tls.bits
            if bits & (_FWD | _FETCH):
                return orig(self, *args, **kwargs)
            return outermost(self, bits, args, kwargs)

    functools.update_wrapper(__call__, orig)
    __call__._gprof_dl = True
    _patch(nn.Module, "__call__", __call__)


def _hook_backward(torch, compiling, on_start):
    _patch(torch.Tensor, "backward", _backward_wrapper(torch.Tensor.backward, compiling, on_start))
    _patch(torch.autograd, "backward", _backward_wrapper(torch.autograd.backward, compiling, on_start))


def _optimization_wrapper(orig, kind, compiling, on_start, ranges):
    """Optimizer.step / zero_grad and Module.zero_grad: Optimization ranges named
    Optimization#<class>.<kind>; a step() that returns is reported to _steps.
    zero_grad inside a forward is part of that Forward."""
    tls, steps = _tls, _steps_state
    push, pop, cat = _n.push, _n.pop, _n.CAT_OPTIMIZATION
    is_step = kind == "step"
    blockers = _OPT | _FETCH if is_step else _OPT | _FETCH | _FWD
    dyn = compiling is not None
    names = {}

    def name_of(cls):
        i = names.get(cls)
        if i is None:
            i = names[cls] = _n.string("Optimization#%s.%s" % (cls.__name__, kind))
        return i

    @functools.wraps(orig)
    def wrapper(self, *args, **kwargs):
        if dyn and compiling():
            return orig(self, *args, **kwargs)
        bits = tls.bits
        if bits & blockers:
            return orig(self, *args, **kwargs)
        tls.bits = bits | _OPT
        on_start()
        if ranges:
            push(cat, name_of(type(self)))
        try:
            r = orig(self, *args, **kwargs)
        finally:
            if ranges:
                pop()
            tls.bits = bits
        if is_step:
            steps.optimizer_stepped(self)
        return r

    wrapper._gprof_dl = True
    return wrapper


def _hook_optimizers(torch, compiling, on_start, ranges):
    import torch.optim

    base = torch.optim.Optimizer
    hooked = set()

    def hook_class(cls):
        if cls in hooked:
            return
        hooked.add(cls)
        for kind in ("step", "zero_grad"):
            f = getattr(cls, kind, None)
            if f is None or getattr(f, "_gprof_dl", False):
                continue
            r = ranges and (kind == "step" or _ZERO_GRAD_RANGES)
            try:
                _patch(cls, kind, _optimization_wrapper(f, kind, compiling, on_start, r))
            except (AttributeError, TypeError):
                pass

    orig_init = base.__init__

    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        hook_class(type(self))

    _patch(base, "__init__", __init__)
    if ranges:
        nn = torch.nn
        _patch(
            nn.Module,
            "zero_grad",
            _optimization_wrapper(nn.Module.zero_grad, "zero_grad", compiling, on_start, _ZERO_GRAD_RANGES),
        )


def _hook_distributed(torch):
    """init_process_group: what it returns or raises is the program's; the
    rank is reported after it returned."""
    dist = sys.modules.get("torch.distributed")
    orig = getattr(dist, "init_process_group", None)
    if orig is None or getattr(orig, "_gprof_dl", False):
        return
    c10d = sys.modules.get("torch.distributed.distributed_c10d")

    @functools.wraps(orig)
    def init_process_group(*args, **kwargs):
        r = orig(*args, **kwargs)
        try:
            _process_group_made(dist)
        except Exception:  # never the program's failure
            pass
        return r

    init_process_group._gprof_dl = True
    _patch(dist, "init_process_group", init_process_group)
    if c10d is not None and getattr(c10d, "init_process_group", None) is orig:
        _patch(c10d, "init_process_group", init_process_group)
    global _groups
    if _ops is not None and _groups is None:
        from . import _ops as ops_module

        _groups = ops_module.Groups(torch, _patch)
        try:
            _groups.install()
        except Exception:  # never the program's failure: its calls without groups
            pass


def _process_group_made(dist):
    try:
        local = int(os.environ.get("LOCAL_RANK", ""))
    except ValueError:
        local = -1
    backend = str(dist.get_backend())
    _n.rank(dist.get_rank(), local if local >= 0 else -1, dist.get_world_size(), _n.string(backend))
    if _ops is not None:
        _ops.want_comm()
    if _groups is not None:
        _groups.scan()  # the default group (after want_comm(), which may build the observer)


def _hook_threads():
    """Thread._bootstrap_inner runs first in every new Python thread."""
    orig = getattr(threading.Thread, "_bootstrap_inner", None)
    if orig is None or getattr(orig, "_gprof_dl", False):
        return
    name_thread = _n.name_thread

    @functools.wraps(orig)
    def _bootstrap_inner(self):
        try:
            name_thread(str(self.name))
        except Exception:
            pass
        return orig(self)

    _bootstrap_inner._gprof_dl = True
    _patch(threading.Thread, "_bootstrap_inner", _bootstrap_inner)


def install(torch):
    """Hook TORCH (the module, just imported)."""
    global _ops, _memory
    if not _n.available():
        return
    opts = _n.options()
    if opts & _n.OPT_NO_PYTHON:
        return
    timer_only = bool(opts & _n.OPT_TIMER_ONLY)
    compiling = _compiling_check(torch)
    steps = _steps_state

    if not timer_only and not (opts & _n.OPT_TIME_WINDOW):
        on_start = steps.phase_start
    elif not timer_only:
        # --delay/--duration: detail changes with the clock, seen at phases
        # (now() brings the collector's window up to date).
        def on_start():
            _n.now()
            steps.phase_start()
            _ops.sync()

    else:
        on_start = steps.phase_start

    _hook_threads()
    _hook_dataloader(torch)
    _hook_optimizers(torch, compiling, on_start, not timer_only)
    if not timer_only:
        _hook_forward(torch, compiling, on_start)
        _hook_backward(torch, compiling, on_start)
        from . import _ops as ops_module

        _ops = ops_module.Operators(torch, bool(opts & _n.OPT_RECORD_SHAPES))
        steps.on_begin = _ops.sync
        _ops.sync()
        if opts & getattr(_n, "OPT_PROFILE_MEMORY", 0):
            _memory = ops_module.Memory(torch, _ops)
    _hook_distributed(torch)
    atexit.register(_at_exit)


def _at_exit():
    _steps_state.exit()
    if _ops is not None:
        _ops.close()  # torch warns of a profiler left on at exit
    if _memory is not None:
        _memory.close()


def _after_fork_in_child():
    _tls.bits = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
