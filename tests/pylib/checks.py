"""What the Python end-to-end harnesses (tests/python, tests/gpu) check with.

A failed check() is recorded in FAILED and the case goes on, so that one run
shows every difference; must() stops the case where what follows depends on
it. The harness reports FAILED at the end."""


class Failure(Exception):
    pass


class Skip(Exception):
    pass


FAILED = []


def check(cond, msg):
    if not cond:
        FAILED.append(msg)
    return bool(cond)


def must(cond, msg):
    if not cond:
        raise Failure(msg)


def short(v, limit=1500):
    r = repr(v)
    return r if len(r) <= limit else r[:limit] + f"... ({len(r)} characters)"


def eq(actual, expected, what):
    return check(actual == expected, f"{what}: expected {short(expected)}, got {short(actual)}")


def near(actual, expected, rel, what):
    return check(isinstance(actual, (int, float)) and expected > 0 and abs(actual - expected) <= rel * expected,
                 f"{what}: {actual!r} is not within {rel:.1%} of {expected!r}")


def text(b):
    return b.decode(errors="replace")


SKIP = 77  # ctest's SKIP_RETURN_CODE in both harnesses


def run_case(name, fn, make_ctx, prefix, label=""):
    """Runs one case in a fresh temporary directory: 0 pass, 1 fail, SKIP skip,
    with one line saying which (and every failed check)."""
    import subprocess
    import tempfile
    import traceback
    suffix = f" ({label})" if label else ""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        try:
            fn(make_ctx(tmp))
        except Skip as e:
            print(f"SKIP {name}: {e}")
            return SKIP
        except Failure as e:
            FAILED.append(f"{e} (the case stopped here)")
        except (KeyError, TypeError, ValueError, IndexError, subprocess.TimeoutExpired):
            FAILED.append(f"the case stopped on an exception:\n{traceback.format_exc()}")
    if FAILED:
        print(f"FAIL {name}{suffix}:")
        for f in FAILED:
            print("  - " + f)
        return 1
    print(f"PASS {name}{suffix}")
    return 0


# A command that outlives this many seconds is hung: no case takes a tenth of
# it, even under the sanitizers, and ctest's own limit (600 s) would kill the
# harness with no word of where it hung.
HANG_S = 300


def _session_processes(sid):
    """(pid, ppid, state, wchan, command line) of the live processes of session SID."""
    import os
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                st = f.read().decode(errors="replace")
            fields = st[st.rindex(")") + 2:].split()
            if int(fields[3]) != sid:  # state ppid pgrp session ...
                continue
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            try:
                with open(f"/proc/{d}/wchan") as f:
                    wchan = f.read().strip()
            except OSError:
                wchan = "?"
            out.append((int(d), int(fields[1]), fields[0], wchan, cmd))
        except (OSError, ValueError, IndexError):
            continue
    return sorted(out)


def _hang_report(sid):
    """Where every process of session SID is: its state, kernel wait channel,
    and its threads' stacks (gdb, where installed)."""
    import shutil
    import subprocess
    lines = []
    procs = _session_processes(sid)
    for pid, ppid, state, wchan, cmd in procs:
        lines.append(f"pid {pid} ppid {ppid} state {state} wchan {wchan}: {cmd[:200]}")
    gdb = shutil.which("gdb")
    for pid, _, _, _, cmd in procs:
        if not gdb:
            lines.append("(no gdb: no stacks)")
            break
        try:
            g = subprocess.run([gdb, "-p", str(pid), "-batch", "-nx", "-ex", "thread apply all bt 30"],
                               capture_output=True, timeout=60)
            bt = [x for x in text(g.stdout).splitlines() if x.startswith(("#", "Thread "))]
            lines.append(f"--- stacks of pid {pid} ({cmd[:80]}):")
            lines.extend(bt[:400])
        except (OSError, subprocess.TimeoutExpired) as e:
            lines.append(f"--- no stacks of pid {pid}: {e}")
    return "\n".join(lines)


def run_bounded(cmd, env=None, cwd=None, timeout=HANG_S):
    """subprocess.run(cmd, capture_output=True) in a session of its own, for
    at most TIMEOUT seconds. A hang is a failure that says where each process
    of the command was (_hang_report), after which the whole session is
    killed: subprocess.run's own timeout kills the child alone and then waits
    for the pipes that its descendants still hold."""
    import os
    import signal
    import subprocess
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        report = _hang_report(p.pid)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        for pid, *_ in _session_processes(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        out, err = p.communicate()
        raise Failure(f"{' '.join(map(str, cmd))[:300]}: still running after {timeout} s, killed\n"
                      f"stderr: {text(err)[-3000:]}\n{report}")
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)
