#!/usr/bin/env python3
"""The "same program" matrix: a program run bare and under `gprof-dl run -q`
must look the same to the world: the same stdout, stderr and exit status,
and when it is killed by signal N, the status run(1) documents for that
(128+N) with the trace saying that its process ended so. Each case runs
same_prog (same_prog.c) both ways and prints one verdict line per thing
compared; exit 0 when all are the same, 1 when one differs, 77 when the case
cannot run here (it says why).

    same.py --gprof-dl BIN --prog same_prog --tmp DIR --case NAME
"""
import argparse
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import termios

SKIP = 77
TIMEOUT = 60


class Skip(Exception):
    pass


class Outcome:
    """What a run showed: stdout, stderr, exit code or terminating signal."""

    def __init__(self, out, err, returncode):
        self.out, self.err = out, err
        self.code = returncode if returncode >= 0 else None
        self.signal = -returncode if returncode < 0 else None

    def status(self):
        if self.signal is not None:
            return f"killed by {signal.Signals(self.signal).name}"
        return f"exit {self.code}"


class Case:
    def __init__(self, args):
        self.gpdl, self.prog = args.gprof_dl, args.prog
        self.have_nvtx = args.have_nvtx == "1"
        self.tmp = tempfile.mkdtemp(prefix=f"same-{args.case}-", dir=args.tmp)
        self.trace = os.path.join(self.tmp, "t.gpdl")
        self.diffs = 0
        self.dropped = 0

    def under(self, argv):
        return [self.gpdl, "run", "-q", "-f", "-o", self.trace, "--"] + argv

    def run(self, argv, **kw):
        p = subprocess.run(argv, capture_output=True, timeout=TIMEOUT, **kw)
        return Outcome(p.stdout, p.stderr, p.returncode)

    def verdict(self, what, bare, profiled):
        same = bare == profiled
        self.diffs += not same
        print(f"{'same' if same else 'DIFFERS'}: {what}: {shorten(bare)}"
              + ("" if same else f" bare, {shorten(profiled)} under gprof-dl"))

    def info(self):
        """The trace's root process: (its exit status as info shows it, the
        number of events)."""
        p = subprocess.run([self.gpdl, "info", self.trace], capture_output=True, timeout=TIMEOUT)
        if p.returncode != 0:
            return (f"gprof-dl info failed: {p.stderr.decode(errors='replace').strip()}", 0)
        text = p.stdout.decode(errors="replace")
        pid = re.search(r"^  pid +(\d+)$", text, re.M)
        events = re.search(r"^  events +(\d+)$", text, re.M)
        drops = re.search(r"^  drops +(\d+) records lost", text, re.M)
        self.dropped = int(drops.group(1)) if drops else 0
        rows = re.findall(r"^ +(\d+) +\d+ +\S+ +\S+ +\S+ +(\S+)  ", text, re.M)
        exit_status = dict(rows).get(pid.group(1)) if pid else None
        return (exit_status, int(events.group(1)) if events else 0)

    def compare(self, bare, prof, events=True):
        """Stdout, stderr, and the status: equal, or 128+N for signal N."""
        self.verdict("stdout", bare.out, prof.out)
        self.verdict("stderr", bare.err, prof.err)
        if bare.signal is not None:
            self.verdict("launcher's status (128+N for a target killed by signal N)",
                         128 + bare.signal, prof.code)
            # trace format 2.1 says which signal, and info shows it
            self.verdict("exit status of the trace's process", f"killed:{bare.signal}",
                         self.info()[0])
        else:
            self.verdict("exit status", bare.status(), prof.status())
        if events and self.have_nvtx:
            n = self.info()[1]
            print(f"{'same' if n > 0 else 'DIFFERS'}: the collector recorded {n} events")
            self.diffs += n == 0

    def same(self, args, events=True, **kw):
        argv = [self.prog] + args
        self.compare(self.run(argv, **kw), self.run(self.under(argv), **kw), events)

    def signalled(self, mode, sig, terminal=False):
        """Starts mode, waits for "ready", sends sig: to the program bare, to
        the launcher under gprof-dl (which forwards it); or, with terminal,
        types Control-C on the terminal the program runs on (a new pty whose
        foreground process group it is in, launcher and target alike)."""
        results = []
        for argv in ([self.prog, mode], self.under([self.prog, mode])):
            master, tty = os.openpty() if terminal else (None, subprocess.DEVNULL)
            p = subprocess.Popen(argv, stdin=tty, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True,
                                 preexec_fn=take_terminal if terminal else None)
            ready = p.stdout.readline()
            if ready != b"ready\n":
                p.kill()
                raise RuntimeError(f"{argv}: not ready: {ready!r}")
            if terminal:
                os.write(master, bytes([termios.tcgetattr(master)[6][termios.VINTR][0]]))
            else:
                p.send_signal(sig)
            try:
                out, err = p.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
                err += b"(timed out: the signal did not end it)"
            results.append(Outcome(ready + out, err, p.returncode))
            if terminal:
                os.close(master)
                os.close(tty)
        self.compare(*results, events=False)


def take_terminal():
    """In the child, a session leader: stdin, a pty, becomes its terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def shorten(v):
    s = repr(v)
    return s if len(s) <= 200 else s[:200] + f"... ({len(v)} bytes)"


def need_root(why):
    if os.geteuid() != 0:
        raise Skip(f"needs root ({why}); running as uid {os.geteuid()}")


# ---- the cases ---------------------------------------------------------------

def case_exit_0(c):
    c.same(["exit", "0"])


def case_exit_3(c):
    c.same(["exit", "3"])


def case_threads(c):
    c.same(["threads"])


def case_fork(c):
    c.same(["fork"])


def case_exec(c):
    c.same(["exec"])


def case_setuid_drop(c):
    need_root("it drops to uid 65534")
    c.same(["setuid_drop"])


def case_setuid_exec(c):
    """A set-user-ID program (owned by nobody, run by root: a secure
    execution, where ld.so ignores LD_PRELOAD) behaves the same, though the
    collector cannot be in it."""
    need_root("it makes a set-user-ID copy of the program owned by uid 65534")
    d = tempfile.mkdtemp(dir=c.tmp)
    os.chmod(c.tmp, 0o755)
    os.chmod(d, 0o755)
    if os.statvfs(d).f_flag & os.ST_NOSUID:
        raise Skip(f"{d} is on a file system mounted nosuid")
    prog = os.path.join(d, "same_prog_setuid")
    shutil.copy(c.prog, prog)
    os.chown(prog, 65534, 65534)
    os.chmod(prog, 0o4755)
    bare = c.run([prog, "ids"])
    if not bare.out.startswith(b"uid 0 euid 65534 secure 1\n"):
        raise Skip(f"the set-user-ID bit did not take: {bare.out[:40]!r}")
    c.compare(bare, c.run(c.under([prog, "ids"])), events=False)


def case_handler(c):
    c.same(["handler"], events=False)


def case_sigint_forwarded(c):
    c.signalled("wait_signal", signal.SIGINT)


def case_sigterm_forwarded(c):
    c.signalled("wait_signal", signal.SIGTERM)


def case_sighup_forwarded(c):
    c.signalled("wait_signal", signal.SIGHUP)


def case_sigint_terminal(c):
    """Control-C on the terminal: the foreground process group gets SIGINT;
    the program must see it once, not once from the terminal and once
    forwarded by the launcher."""
    c.signalled("wait_signal", signal.SIGINT, terminal=True)


def case_sigterm_default(c):
    c.signalled("wait_default", signal.SIGTERM)


def case_killed_sigterm(c):
    c.same(["die", str(int(signal.SIGTERM))])


def case_killed_sigkill(c):
    c.same(["die", str(int(signal.SIGKILL))])


def case_killed_segv(c):
    c.same(["segv"], events=False)


def case_killed_abort(c):
    c.same(["abort"], events=False)


def case_sigaltstack_main(c):
    c.same(["sigaltstack", "main"], events=False)


def case_sigaltstack_thread(c):
    c.same(["sigaltstack", "thread"], events=False)


def case_vfork(c):
    c.same(["vfork"])


def case_posix_spawn(c):
    c.same(["spawn"])


def closed(c, fds):
    reports = []
    for n, wrap in ((0, lambda a: a), (1, c.under)):
        report = os.path.join(c.tmp, f"report-{n}")
        argv = wrap([c.prog, "closed_stdio", report])
        p = subprocess.run(argv, preexec_fn=lambda: [os.close(fd) for fd in fds],
                           timeout=TIMEOUT)
        text = open(report, "rb").read() if os.path.exists(report) else b"(no report)"
        reports.append((text, Outcome(b"", b"", p.returncode)))
    (bare, bst), (prof, pst) = reports
    c.verdict("what the program found (open fds 0-2, write(1), a new file's fd)", bare, prof)
    c.verdict("exit status", bst.status(), pst.status())


def case_closed_stdin(c):
    closed(c, [0])


def case_closed_stdout(c):
    closed(c, [1])


def case_closed_all(c):
    closed(c, [0, 1, 2])


def case_huge_argv(c):
    """Arguments filling ARG_MAX but for the environment and what gprof-dl
    adds (its own arguments, the collector's variables): 16 KiB."""
    env_bytes = sum(len(k) + len(v) + 2 + 8 for k, v in os.environ.items())
    room = os.sysconf("SC_ARG_MAX") - env_bytes - 16384 - len(c.prog) - 16
    args, i = [], 0
    while room > 1024:
        n = min(100000, room - 9)  # + its NUL and its pointer
        args.append(chr(ord("a") + i % 26) * n)
        room -= n + 9
        i += 1
    print(f"{len(args)} arguments of {sum(map(len, args))} bytes, "
          f"ARG_MAX {os.sysconf('SC_ARG_MAX')}")
    c.same(["args"] + args, events=False)


def case_burst_1000(c):
    """1000 threads alive at once, each recording one range: every range is
    in the trace or counted as dropped (more threads than --max-threads)."""
    c.same(["burst", "1000"])
    if not c.have_nvtx:
        return
    events = c.info()[1]
    c.verdict("ranges recorded + ranges counted as dropped", 1000, events + c.dropped)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--have-nvtx", default="1", help="same_prog records NVTX ranges (1) or not (0)")
    args = ap.parse_args()
    fn = globals().get("case_" + args.case)
    if not fn:
        print(f"same.py: no case '{args.case}'", file=sys.stderr)
        return 2
    c = Case(args)
    try:
        fn(c)
    except Skip as e:
        print(f"SKIPPED {args.case}: {e}")
        return SKIP
    finally:
        shutil.rmtree(c.tmp, ignore_errors=True)
    print(f"{args.case}: {'the same' if not c.diffs else f'{c.diffs} difference(s)'}")
    return 1 if c.diffs else 0


if __name__ == "__main__":
    sys.exit(main())
