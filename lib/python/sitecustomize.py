"""gprof-dl's sitecustomize, first on PYTHONPATH under `gprof-dl run`.

It costs nothing measurable at start-up and never imports torch: it puts a
finder on sys.meta_path that notices when the program (or anyone) imports torch,
lets that import finish, and then hooks torch (gprof_dl._torch). Then it runs the
sitecustomize that Python would have run without it (the next one on sys.path:
the user's own, or the distribution's), once, treating its errors as Python's
site module does. GPROF_DL_NO_PYTHON=1 (gprof-dl run --no-python) leaves torch
alone.
"""

import os as _os
import sys as _sys


class _GprofDlTorchFinder:
    """Hooks torch once its import has finished; never imports it."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        meta = _sys.meta_path
        try:
            i = meta.index(self)
        except ValueError:
            return None
        spec = None
        for finder in meta[i + 1 :]:
            find = getattr(finder, "find_spec", None)
            if find is not None:
                spec = find(name, path, target)
                if spec is not None:
                    break
        if spec is None:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec
        del meta[i]

        def exec_and_hook(module):
            if getattr(module, "__name__", None) != "torch":  # a loader shared with others
                return exec_module(module)
            try:
                exec_module(module)
            finally:
                try:
                    del loader.exec_module
                except AttributeError:
                    pass
            _hook_torch(module)

        try:
            loader.exec_module = exec_and_hook
        except (AttributeError, TypeError):
            pass
        return spec


def _hook_torch(torch):
    try:
        import gprof_dl

        if gprof_dl._native is None:
            if "GPROF_DL_SHM" not in _os.environ:
                return  # not under gprof-dl run: nothing to say
            if _sys.version_info < (3, 10):
                why = "the gprof_dl package needs Python 3.10 or newer, this is %d.%d" % _sys.version_info[:2]
            else:
                why = "the gprof_dl extension did not load: %s" % gprof_dl._native_error
            _sys.stderr.write("gprof-dl: torch not profiled: %s\n" % why)
            return
        from gprof_dl import _torch

        _torch.install(torch)
    except Exception as e:  # never the program's failure
        _sys.stderr.write("gprof-dl: torch not profiled: %s: %s\n" % (type(e).__name__, e))


def _chain(here):
    """Run the next sitecustomize on sys.path after HERE, as site.py would have."""
    paths = _sys.path
    try:
        rest = paths[paths.index(here) + 1 :]
    except ValueError:
        rest = [p for p in paths if p != here]
    finders = [f for f in _sys.meta_path if getattr(f, "__name__", "") == "PathFinder"]
    if not finders:
        return
    spec = finders[0].find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    bootstrap = _sys.modules.get("importlib._bootstrap") or _sys.modules["_frozen_importlib"]
    mine = _sys.modules.get("sitecustomize")
    try:
        try:
            module = bootstrap.module_from_spec(spec)
            _sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
        except ImportError as exc:
            if exc.name != "sitecustomize":
                raise
            _sys.modules["sitecustomize"] = mine
    except Exception as err:
        _sys.modules["sitecustomize"] = mine
        if _sys.flags.verbose:
            _sys.excepthook(*_sys.exc_info())
        else:
            _sys.stderr.write(
                "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                "%s: %s\n" % (err.__class__.__name__, err)
            )


def _setup():
    if _os.environ.get("GPROF_DL_NO_PYTHON", "") in ("", "0") and not any(
        type(f).__name__ == "_GprofDlTorchFinder" for f in _sys.meta_path
    ):
        if "torch" in _sys.modules:
            _hook_torch(_sys.modules["torch"])
        else:
            _sys.meta_path.insert(0, _GprofDlTorchFinder())
    _chain(_os.path.dirname(_os.path.abspath(__file__)))


_setup()
