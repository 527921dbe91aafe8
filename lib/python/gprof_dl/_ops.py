"""Operators: every aten operator (and every record_function scope) as an
Operator range with its sequence number, and input shapes with --record-shapes,
recorded only while the collector records full detail; and communication:
c10d's work ("gloo:all_reduce", ...) as Communication events with bytes and
element type.

Every build of torch records them through a RecordFunction observer
(_observer.cpp) that calls the collector directly. It must be compiled against
the running torch's headers, so it is built at first use and cached per torch
version, C++ ABI and source. The same observer records communication calls
(its second callback).

CUDA builds of torch can also emit NVTX ranges themselves (what emit_nvtx turns
on), which the collector's NVTX injection records when told to read their
"aten::addmm, seq = 12, op_id = 3, sizes = [...]" form as Operator ranges: the
way CUDA builds are recorded when the observer cannot be built there, or with
GPROF_DL_TORCH_OPERATORS=nvtx. Torch formats a string per operator for it, so
it costs more than the observer. Communication calls are then recorded through
the observer's second callback alone once the program calls
init_process_group (_torch.py), and the collector is told to leave the NVTX
copies of those calls out (GPROF_DL_TORCH_NVTX_NO_COMM); where the observer
cannot be built, the NVTX copies stay, which the recorder types Communication
by their name (without bytes).

With --profile-memory the observer also receives the allocations and frees
of torch's allocators, as torch.profiler's profile_memory does (Memory).

Communication calls get their process group, its size, their sequence number
in it and, for send and receive, the other rank: the package registers every
group the program makes with the observer, and marks the point-to-point calls
it makes through torch.distributed (Groups; how the observer tells a call's
group: _observer.cpp, "Groups").

When operators cannot be recorded, one line on stderr says why and what fixes
it, and the rest of the profile goes on; likewise for communication calls and
allocations.
"""

import hashlib
import os
import sys
import threading

from . import _native as _n

_HERE = os.path.dirname(os.path.abspath(__file__))


def _say(cause, fix, what="operators not recorded"):
    sys.stderr.write("gprof-dl: %s: %s (%s)\n" % (what, cause, fix))
    sys.stderr.flush()


# gpdl_observer_add's and _remove's WHAT bits (_observer.cpp)
OPS, COMM = 1, 2



def _yield_to_profiler(tag, suspend, resume):
    """Wraps torch's profiler switches where the program's profilers find
    them, so that what gprof-dl holds (operators, memory) steps aside while
    the program's own profiler runs: suspend() before it starts (True: it
    held something, to resume if the start fails), resume() once it stops.
    TAG marks a switch as wrapped, once per kind of holding."""
    import functools

    def wrap(mod, on, off):
        en, dis = getattr(mod, on, None), getattr(mod, off, None)
        if en is None or dis is None or getattr(en, tag, False):
            return

        @functools.wraps(en)
        def enable(*args, **kwargs):
            held = suspend()
            try:
                return en(*args, **kwargs)
            except BaseException:
                if held:
                    resume()
                raise

        @functools.wraps(dis)
        def disable(*args, **kwargs):
            try:
                return dis(*args, **kwargs)
            finally:
                resume()

        setattr(enable, tag, True)
        setattr(disable, tag, True)
        setattr(mod, on, enable)
        setattr(mod, off, disable)

    for name in ("torch.autograd", "torch.autograd.profiler", "torch.autograd.profiler_legacy"):
        mod = sys.modules.get(name)
        if mod is not None:
            wrap(mod, "_enable_profiler", "_disable_profiler")
            wrap(mod, "_enable_profiler_legacy", "_disable_profiler_legacy")

class _Unavailable(Exception):
    def __init__(self, cause, fix):
        Exception.__init__(self, cause)
        self.cause, self.fix = cause, fix


# ---- CUDA builds, the alternative: torch's NVTX emission ------------------------


class _Nvtx:
    """torch's NVTX emission takes the thread's one profiler slot, which the
    program's own torch.profiler (or emit_nvtx) needs too: gprof-dl lets it have
    it, and takes it back when the program's profiler stops."""

    per_thread = True  # switched on and off on one thread

    def __init__(self, torch, shapes):
        self.flags = 1  # torch_nvtx's argument: 1, or 1 | TORCH_NVTX_NO_COMM
        ag = torch.autograd
        self.enable_profiler, self.disable_profiler = ag._enable_profiler, ag._disable_profiler
        try:
            from torch._C._profiler import ProfilerConfig, ProfilerState
        except ImportError:
            from torch.autograd import ProfilerConfig, ProfilerState
        flags = (ProfilerState.NVTX, shapes, False, False, False, False)
        try:
            from torch._C._profiler import _ExperimentalConfig

            self.config = ProfilerConfig(*flags, _ExperimentalConfig())
        except (ImportError, TypeError):
            self.config = ProfilerConfig(*flags)

    def enable(self):
        _n.torch_nvtx(self.flags)
        try:
            self.enable_profiler(self.config, set())
        except BaseException:
            _n.torch_nvtx(0)
            raise

    def disable(self):
        try:
            self.disable_profiler()
        finally:
            _n.torch_nvtx(0)

    def yield_to_programs_profiler(self, torch, ops):
        """Wrap torch's profiler switches where the program's profilers find them."""

        def suspend():
            ops.suspend()
            return True

        _yield_to_profiler("_gprof_dl", suspend, ops.resume)


# ---- every build: a RecordFunction observer -----------------------------------


def _cache_dir():
    d = os.environ.get("GPROF_DL_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "gprof-dl")
    try:
        os.makedirs(d, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    import tempfile

    d = os.path.join(tempfile.gettempdir(), "gprof-dl-%d" % os.getuid())
    os.makedirs(d, exist_ok=True)
    return d


def _loaded_libraries(names):
    """Paths of the loaded shared libraries named NAMES (libtorch_cpu, ...), from
    /proc/self/maps: the observer links against exactly these."""
    found = {}
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                i = line.find("/")
                if i < 0:
                    continue
                path = line[i:].rstrip("\n")
                base = os.path.basename(path)
                for n in names:
                    if n not in found and (base == n + ".so" or base.startswith(n + ".so.")):
                        found[n] = path
    except OSError:
        pass
    return [found[n] for n in names if n in found]


def _compiler():
    import shlex
    import shutil

    cxx = os.environ.get("CXX")
    if cxx:
        return shlex.split(cxx)
    for c in ("c++", "g++", "clang++"):
        p = shutil.which(c)
        if p:
            return [p]
    return None


def _child_env():
    """The environment for the compiler: without the collector, so that the
    compiler's processes are not profiled."""
    env = dict(os.environ)
    for k in ("GPROF_DL_SHM", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"):
        env.pop(k, None)
    pre = [p for p in env.get("LD_PRELOAD", "").replace(" ", ":").split(":") if p]
    pre = [p for p in pre if "gprof-dl-collector" not in os.path.basename(p)]
    if pre:
        env["LD_PRELOAD"] = ":".join(pre)
    else:
        env.pop("LD_PRELOAD", None)
    return env


def _build_observer(torch, src=None):
    """The path of the observer library for this torch, compiled if need be
    (SRC: another RecordFunction observer built the same way, such as the
    benchmarks' do-nothing one)."""
    src = src or os.path.join(_HERE, "_observer.cpp")
    stem = os.path.splitext(os.path.basename(src))[0].lstrip("_")
    header = os.path.join(_HERE, "gprof-dl-api.h")
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    include = os.path.join(torch_dir, "include")
    if not os.path.isfile(os.path.join(include, "ATen", "record_function.h")):
        raise _Unavailable(
            "torch %s has no C++ headers in %s" % (torch.__version__, include),
            "install torch with its headers, e.g. Debian's libtorch-dev",
        )
    libs = _loaded_libraries(["libtorch_cpu", "libc10"])
    if len(libs) != 2:
        raise _Unavailable("libtorch_cpu and libc10 are not loaded", "a torch build without them is not supported")
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    h = hashlib.sha256()
    for p in (src, header):
        with open(p, "rb") as f:
            h.update(f.read())
    # NDEBUG as torch was built: its inline accessors check debug-only state otherwise.
    flags = ["-O2", "-std=c++17", "-shared", "-fPIC", "-DNDEBUG", "-D_GLIBCXX_USE_CXX11_ABI=%d" % abi]
    h.update(("\0".join([torch.__version__, torch_dir] + flags + libs)).encode())
    version = "".join(c if c.isalnum() or c in ".+-_" else "_" for c in torch.__version__)
    name = "%s-torch%s-abi%d-%s.so" % (stem, version, abi, h.hexdigest()[:16])
    cache = _cache_dir()
    path = os.path.join(cache, name)
    if os.path.exists(path):
        return path

    cxx = _compiler()
    if not cxx:
        raise _Unavailable("no C++ compiler to build the observer for a CPU build of torch", "install g++, or set CXX")
    tmp = "%s.%d.tmp" % (path, os.getpid())
    log = os.path.join(cache, name[:-3] + ".log")
    cmd = cxx + flags + ["-isystem", include, "-I", _HERE, src, "-o", tmp] + libs
    import subprocess

    try:
        r = subprocess.run(cmd, env=_child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    except OSError as e:
        raise _Unavailable("cannot run %s: %s" % (cxx[0], e.strerror), "install g++, or set CXX")
    if r.returncode != 0:
        try:
            with open(log, "wb") as f:
                f.write((" ".join(cmd) + "\n").encode() + r.stdout)
        except OSError:
            log = "its output is lost: %s is not writable" % cache
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise _Unavailable("the observer did not compile against torch %s" % torch.__version__, "see " + log)
    os.replace(tmp, path)  # atomic: concurrent runs each write their own tmp
    return path


_lib = None  # the loaded observer: (add, remove)
_memory = None  # its gpdl_memory_start, _stop, _suspend and _resume (Memory)
_groups = None  # its gpdl_pg_register, _capture_begin, _capture_end, _p2p_begin, _p2p_end (Groups)


def _observer_lib(torch):
    """gpdl_observer_add and gpdl_observer_remove of the observer for TORCH,
    compiled and loaded once per process."""
    global _lib
    if _lib is None:
        import ctypes

        path = _build_observer(torch)
        try:
            lib = ctypes.CDLL(path)
            add, remove = lib.gpdl_observer_add, lib.gpdl_observer_remove
        except (OSError, AttributeError) as e:
            raise _Unavailable("cannot load the observer: %s" % e, "remove it from the cache to rebuild it")
        add.argtypes, add.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        remove.argtypes, remove.restype = [ctypes.c_int], None
        global _memory
        fns = lib.gpdl_memory_start, lib.gpdl_memory_stop, lib.gpdl_memory_suspend, lib.gpdl_memory_resume
        for f in fns:
            f.argtypes, f.restype = [], ctypes.c_int
        _memory = fns
        global _groups
        c_char_p, size_t, c_int = ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int
        fns = (lib.gpdl_pg_register, lib.gpdl_pg_capture_begin, lib.gpdl_pg_capture_end,
               lib.gpdl_pg_p2p_begin, lib.gpdl_pg_p2p_end)
        for f, args, res in zip(fns, ([c_char_p, size_t], [], [c_char_p, size_t], [c_int, c_int], [c_int, c_int]),
                                (c_int, c_int, c_int, None, None)):
            f.argtypes, f.restype = args, res
        _groups = fns
        _lib = add, remove
    return _lib


class Memory:
    """--profile-memory: the allocations and frees of torch's allocators, CPU
    and CUDA, reported to the observer's profiler state (_observer.cpp) as
    torch.profiler's profile_memory gets them, each a Memory event on the
    allocating thread. Started once, on the thread that installs the hooks,
    before the program can start a profiler of its own; the collector keeps
    what falls inside the recording window.

    torch's profilers refuse to start while another profiler state is on the
    thread, ours included: the program's profiler switches are wrapped so that
    ours steps aside while the program's runs (which then gets the reports)
    and comes back when it stops."""

    def __init__(self, torch, ops=None):
        self.on = False
        what = "allocations not recorded"
        if ops is not None and isinstance(ops.mech, _Nvtx):
            # torch's NVTX emission is a profiler state of its own on this
            # thread, switched on and off with the window: ours cannot share it
            _say("operators are recorded from torch's NVTX ranges, which hold torch's profiler slot",
                 "let gprof-dl build its observer: unset GPROF_DL_TORCH_OPERATORS", what)
            return
        try:
            _observer_lib(torch)
            r = _memory[0]()
        except _Unavailable as e:
            _say(e.cause, e.fix, what)
            return
        except Exception as e:
            _say("torch %s: %s: %s" % (torch.__version__, type(e).__name__, e),
                 "a gprof-dl bug: please report it", what)
            return
        if r == 0:
            _say("the collector has no memory interface", "use gprof-dl's own Python package", what)
        elif r < 0:
            _say("a profiler already runs on this thread", "start torch.profiler after gprof-dl's hooks", what)
        self.on = r > 0
        if self.on:
            self._yield_to_programs_profiler()

    def _yield_to_programs_profiler(self):
        _yield_to_profiler("_gprof_dl_memory", _memory[2], _memory[3])

    def close(self):
        if self.on:
            _memory[1]()
            self.on = False


class _Observer:
    """Operators and communication calls, both through the observer."""

    per_thread = False  # global callbacks: every thread's operators

    def __init__(self, torch, shapes):
        self.add, self.remove = _observer_lib(torch)
        self.shapes = 1 if shapes else 0

    def enable(self):
        if self.add(self.shapes, OPS | COMM) < 0:
            raise _Unavailable("the observer found no collector", "run the program under gprof-dl run")

    def disable(self):
        self.remove(OPS | COMM)


class _CommObserver:
    """Communication calls alone, on CUDA builds: the observer's second
    callback, and the collector told to leave torch's NVTX copies out."""

    def __init__(self, torch, nvtx):
        self.add, self.remove = _observer_lib(torch)
        self.nvtx = nvtx

    def enable(self):
        """Before torch's NVTX emission is switched on (or while it is on)."""
        bits = self.add(0, COMM)
        if bits >= 0 and bits & COMM and _n.has_comm():
            self.nvtx.flags = 1 | _n.TORCH_NVTX_NO_COMM
        return bits

    def disable(self):
        self.nvtx.flags = 1
        self.remove(COMM)


# ---- the switch ---------------------------------------------------------------


class Operators:
    """Operator recording, on exactly while the collector records full detail."""

    def __init__(self, torch, shapes):
        self.on = False
        self.suspended = 0  # the program's own profiler runs (NVTX)
        self.thread = None  # the thread that turned recording on (NVTX is per thread)
        self.mech = None
        self.comm = None  # CUDA builds: _CommObserver once asked for, False when unavailable
        self.torch = torch
        version = getattr(torch, "version", None)
        cuda = getattr(version, "cuda", None) and not getattr(version, "hip", None)
        # observer (the default) | nvtx: torch's own NVTX emission, on CUDA
        # builds only, slower per operator (torch formats a string for each);
        # CUDA builds fall back to it when the observer cannot be built.
        how = os.environ.get("GPROF_DL_TORCH_OPERATORS", "")
        try:
            if how != "nvtx":
                try:
                    self.mech = _Observer(torch, shapes)
                except _Unavailable as e:
                    if not cuda or how == "observer":
                        raise
                    _say(e.cause, e.fix, "operators recorded from torch's NVTX ranges")
            if self.mech is None:
                self.mech = _Nvtx(torch, shapes)
                self.mech.yield_to_programs_profiler(torch, self)
        except _Unavailable as e:
            _say(e.cause, e.fix)
        except Exception as e:
            _say("torch %s: %s: %s" % (torch.__version__, type(e).__name__, e), "a gprof-dl bug: please report it")

    def sync(self):
        """Match recording to the collector's detail flag."""
        if self.mech is None:
            return
        want = _n.detail() and not self.suspended
        if want == self.on:
            return
        if self.mech.per_thread and self.thread is not None and self.thread != threading.get_ident():
            return  # torch's NVTX emission is switched on the thread that enabled it
        try:
            if want:
                if self.comm:
                    self.comm.enable()
                self.mech.enable()
                self.thread = threading.get_ident()
            else:
                self.mech.disable()
                if self.comm:
                    self.comm.disable()
            self.on = want
        except _Unavailable as e:
            self.mech = None
            _say(e.cause, e.fix)
        except Exception as e:
            self.mech = None
            _say("%s: %s" % (type(e).__name__, e), "is another profiler running?")

    def want_comm(self):
        """The program made a process group: on CUDA builds, record its
        communication calls through the observer from now on (CPU builds do
        already, with the operators)."""
        if self.comm is not None or self.mech is None or not isinstance(self.mech, _Nvtx):
            return
        what = "communication calls recorded from torch's NVTX ranges, without bytes"
        try:
            self.comm = _CommObserver(self.torch, self.mech)
        except _Unavailable as e:
            self.comm = False
            _say(e.cause, e.fix, what)
            return
        except Exception as e:
            self.comm = False
            _say("torch %s: %s: %s" % (self.torch.__version__, type(e).__name__, e),
                 "a gprof-dl bug: please report it", what)
            return
        if self.on:
            # NVTX stays on: the collector reads the new flags at once.
            self.comm.enable()
            _n.torch_nvtx(self.mech.flags)

    def suspend(self):
        self.suspended += 1
        self.sync()

    def resume(self):
        if self.suspended:
            self.suspended -= 1
        self.sync()

    def close(self):
        """For good: a DataLoader worker, the end of the process."""
        mine = self.mech is not None and (not self.mech.per_thread or self.thread in (None, threading.get_ident()))
        if self.mech is not None and self.on and mine:
            try:
                self.mech.disable()
                if self.comm:
                    self.comm.disable()
            except Exception:
                pass
        self.mech = None
        self.comm = None
        self.on = False


# ---- process groups ---------------------------------------------------------------


class Groups:
    """The program's process groups, registered with the observer as they are
    made (by their torch group name, "0" for the default group, "1", "2", ...
    for new_group's: the same on every member rank, distinct within a job),
    so that each communication call records its group, the group's size and
    its sequence number there; and torch.distributed's send, recv, isend and
    irecv, wrapped to tell the observer which group and which rank (global)
    each point-to-point call is for, and to count them per group whatever the
    recording window (torch 2.x's gloo counts them in its sequence numbers).

    torch 2.x finds a group by name in its registry. torch 1.13 has none:
    the observer takes the group from the inputs of a c10d op the package
    calls on it, a gloo broadcast from root -1, which gloo refuses before it
    does anything (its sequence number unchanged); groups of other backends,
    and gloo groups under TORCH_DISTRIBUTED_DEBUG=DETAIL (whose wrapper would
    check the call with the other ranks first), stay unregistered there, and
    their calls without a group."""

    def __init__(self, torch, patch):
        self.torch = torch
        self.patch = patch
        self.fns = None  # the observer's gpdl_pg_* once loaded; False: it cannot be
        self.slots = {}  # group -> its slot in the observer, -1 none
        self.tls = threading.local()  # .busy: inside a wrapped point-to-point call
        self.dist = sys.modules.get("torch.distributed")
        self.c10d = sys.modules.get("torch.distributed.distributed_c10d")

    def _fns(self):
        """The observer, loaded when the first group is made (its build, if it
        fails, is tried once): not before, so that a program that makes no
        group never waits for it."""
        if self.fns is None:
            try:
                _observer_lib(self.torch)
                self.fns = _groups
            except Exception:  # why is said once already, for operators or communication
                self.fns = False
        return self.fns

    def install(self):
        c10d, dist = self.c10d, self.dist
        if c10d is None or dist is None:
            return
        helper = getattr(c10d, "_new_process_group_helper", None)
        if helper is not None and not getattr(helper, "_gprof_dl", False):
            self.patch(c10d, "_new_process_group_helper", self._after(helper))
        for name, peer, group_peer in (("send", "dst", "group_dst"), ("isend", "dst", "group_dst"),
                                       ("recv", "src", "group_src"), ("irecv", "src", "group_src")):
            orig = getattr(c10d, name, None)
            if orig is None or getattr(orig, "_gprof_dl", False):
                continue
            wrapper = self._p2p(orig, peer, group_peer)
            for mod in (c10d, dist):
                if getattr(mod, name, None) is orig:
                    self.patch(mod, name, wrapper)

    def _after(self, orig):
        """A group maker: the groups it made are registered once it returns."""
        import functools

        @functools.wraps(orig)
        def wrapper(*args, **kwargs):
            r = orig(*args, **kwargs)
            try:
                self.scan()
            except Exception:  # never the program's failure
                pass
            return r

        wrapper._gprof_dl = True
        return wrapper

    def scan(self):
        """Registers the groups torch knows of that are not yet."""
        if not self._fns():
            return
        c10d = self.c10d
        names = getattr(getattr(c10d, "_world", None), "pg_names", None)
        if names is None:
            names = getattr(c10d, "_pg_names", None)  # torch 1.x
        for pg, name in list((names or {}).items()):
            if pg not in self.slots:
                self.slots[pg] = self._register(pg, str(name))

    def _register(self, pg, name):
        register, capture_begin, capture_end = self.fns[:3]
        b = name.encode()
        slot = register(b, len(b))
        if slot != -2:
            return slot
        # no registry: capture it from a c10d op that gloo refuses at once
        try:
            backend = str(pg.name())
        except Exception:
            backend = ""
        if backend != "gloo" or os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper() == "DETAIL":
            return -1
        opts = self.dist.BroadcastOptions()
        opts.rootRank, opts.rootTensor = -1, 0
        if not capture_begin():
            return -1
        try:
            pg.broadcast([self.torch.zeros(1)], opts)
        except Exception:
            pass  # "invalid root rank: -1", as meant
        finally:
            slot = capture_end(b, len(b))
        return slot

    def _p2p(self, orig, peer_arg, group_peer_arg):
        import functools
        import inspect

        sig = inspect.signature(orig)
        tls, c10d = self.tls, self.c10d

        def target(args, kwargs):
            a = sig.bind(*args, **kwargs).arguments
            group = a.get("group")
            if group is None:
                group = c10d._get_default_group()
            slot = self.slots.get(group)
            if slot is None:
                self.scan()
                slot = self.slots.get(group, -1)
            peer = a.get(peer_arg)
            if peer is None and a.get(group_peer_arg) is not None:
                peer = c10d.get_global_rank(group, a[group_peer_arg])
            return slot, -1 if peer is None else int(peer)

        @functools.wraps(orig)
        def wrapper(*args, **kwargs):
            if getattr(tls, "busy", False):
                return orig(*args, **kwargs)  # send() calling isend(): the outer one counts
            try:
                slot, peer = target(args, kwargs)
            except Exception:
                slot, peer = -1, -1
            if slot < 0:
                return orig(*args, **kwargs)
            p2p_begin, p2p_end = self.fns[3:]
            tls.busy = True
            p2p_begin(slot, peer)
            ok = 0
            try:
                r = orig(*args, **kwargs)
                ok = 1
                return r
            finally:
                p2p_end(slot, ok)
                tls.busy = False

        wrapper._gprof_dl = True
        return wrapper
