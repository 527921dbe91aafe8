#!/usr/bin/env python3
"""End-to-end tests of `gprof-dl run` as a launcher under stress: more
threads than ring slots, its own death (SIGKILL), many runs at once, a
target that drops its privileges, a trace that cannot be written in full.
Programs and helpers as in e2e.py, whose command line it takes.

Exit status: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE)."""
import concurrent.futures
import os
import re
import resource
import signal
import socket
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import SKIP, Failure, check, eq, info, ranks_reported  # noqa: E402
from e2e import main as e2e_main  # noqa: E402


def run_report(stderr):
    """The threads without a slot and their dropped events, from the run's report."""
    m = re.search(rb"Warning: (\d+) threads found every ring slot taken \(--max-threads (\d+)\): "
                  rb"their (\d+) events were dropped", stderr)
    return (int(m[1]), int(m[2]), int(m[3])) if m else (0, 0, 0)


def summary_counts(c, trace):
    """(calls of "work", events dropped) from summary --format json."""
    s = c.summary(trace)
    eq(len(s["traces"]), 1, "traces summarised")
    eq(s["traces"][0].get("damage"), None, "damage")
    calls = 0
    for sec in s["tables"]["userdefined"]["sections"]:
        if sec.get("title") == "Thread: All threads merged":
            calls = sum(r["calls"] for r in sec["rows"] if r["name"] == "work")
    return calls, s["events"]["dropped"]


def no_slot_track(c, trace):
    """The number in the name of the track of the threads without a slot, 0: none."""
    _, _, text = info(c, trace)
    m = re.search(r"<(\d+) threads? without a ring slot>", text)
    return int(m[1]) if m else 0


def case_many_threads(c):
    """More live threads than --max-threads: the launcher survives, the program's
    output and status are its own, and every lost event is counted."""
    prog = c.prog("many_threads")
    # 300 at once, 256 slots: main holds one, 255 workers record, 45 cannot
    trace, p = c.record([prog, "concurrent", "300"], "concurrent", status=5)
    eq(p.stdout, b"concurrent 300 threads, 3 ranges each\n", "target stdout")
    calls, dropped = summary_counts(c, trace)
    eq(calls, 255 * 3, "work ranges recorded")
    eq(dropped, 45 * 3, "events dropped")
    eq(run_report(p.stderr), (45, 256, 135), "run report of the threads without a slot")
    eq(no_slot_track(c, trace), 45, "threads without a slot, in the trace")
    # 1,000 one after the other: slots are reused; what is lost is counted exactly
    for opts in ((), ("--max-threads", "2")):
        out = os.path.join(c.tmp, "sequential.gpdl")
        p = c.gprof("run", "-o", out, "--force", *opts, "--", prog, "sequential", "1000", check_status=5)
        eq(p.stdout, b"sequential 1000 threads, 3 ranges each\n", "target stdout")
        calls, dropped = summary_counts(c, out)
        threads, _, events = run_report(p.stderr)
        eq(calls + dropped, 3000, f"{opts}: ranges recorded + dropped")
        eq(dropped, events, f"{opts}: dropped events are the slotless threads'")
        eq(events, 3 * threads, f"{opts}: 3 events per slotless thread")
        eq(no_slot_track(c, out), threads, f"{opts}: slotless threads in the trace")
        if not opts:
            eq(threads, 0, "sequential threads with 256 slots: none without a slot")


def proc_state(pid):
    """The state letter of /proc/PID/stat, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def launch_and_kill(c, keep):
    """Starts `sleep 60` under gprof-dl run, SIGKILLs gprof-dl; returns the target's pid."""
    out = os.path.join(c.tmp, "killed-launcher.gpdl")
    args = [c.gpdl, "run", "-o", out, "--force"] + (["--keep-target"] if keep else []) + ["--", "sleep", "60"]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    banner = p.stderr.readline()
    m = re.match(rb"==(\d+)== gprof-dl .* is profiling process (\d+)", banner)
    check(m, f"no banner: {banner!r}")
    target = int(m[2])
    time.sleep(0.3)  # the target is running sleep, not waiting for its start
    eq(proc_state(target) not in (None, "Z", "X"), True, "target running before the kill")
    p.kill()
    p.wait()
    return target


def case_launcher_killed(c):
    """gprof-dl SIGKILLed: its target goes with it, unless --keep-target."""
    target = launch_and_kill(c, keep=False)
    deadline = time.monotonic() + 2.0
    while proc_state(target) not in (None, "Z", "X") and time.monotonic() < deadline:
        time.sleep(0.02)
    state = proc_state(target)
    if state not in (None, "Z", "X"):
        os.kill(target, signal.SIGKILL)
        raise Failure(f"target {target} still running ({state}) 2 s after gprof-dl was killed")
    target = launch_and_kill(c, keep=True)
    time.sleep(1.0)
    state = proc_state(target)
    try:
        check(state not in (None, "Z", "X"), f"--keep-target: target {target} did not survive ({state})")
    finally:
        if state not in (None, "Z", "X"):
            os.kill(target, signal.SIGKILL)


def tree_run(c, i):
    """One run of fork_tree: (status, the tree it printed, the tree its trace holds)."""
    out = os.path.join(c.tmp, f"tree-{i}.gpdl")
    p = subprocess.run([c.gpdl, "run", "-q", "-o", out, "--", c.prog("fork_tree")], capture_output=True)
    real = {}
    for line in p.stdout.decode().splitlines():
        m = re.match(r"pid (\d+) ppid (\d+) exit (\d+)$", line)
        check(m, f"run {i}: unexpected output {line!r}")
        real[int(m[1])] = (int(m[2]), m[3])
    _, procs, text = info(c, out)
    got = [(pr["pid"], pr["ppid"], pr["exit"]) for pr in procs]
    return p.returncode, real, got, text


def case_concurrent_trees(c):
    """32 runs at once of a program that forks a known tree: every trace holds
    exactly that tree, each process once, with its parent and exit code."""
    n = 32
    with concurrent.futures.ThreadPoolExecutor(n) as ex:
        results = list(ex.map(lambda i: tree_run(c, i), range(n)))
    bad = []
    for i, (status, real, got, text) in enumerate(results):
        want = sorted((pid, ppid, code) for pid, (ppid, code) in real.items())
        if status != 4 or len(real) != 4 or sorted(got) != want:
            bad.append(f"run {i}: status {status}, printed {want}, trace {sorted(got)}\n{text}")
    eq(len(bad), 0, f"runs whose trace has another tree than the program's: {''.join(bad[:2])}")


def nobody_can_run(path):
    """Whether every directory above path can be searched, and path read and run, by others."""
    path = os.path.realpath(path)
    parts = path.split(os.sep)
    for k in range(2, len(parts)):
        if not os.stat(os.sep.join(parts[:k])).st_mode & stat.S_IXOTH:
            return False
    return os.stat(path).st_mode & (stat.S_IROTH | stat.S_IXOTH) == (stat.S_IROTH | stat.S_IXOTH)


def case_drop_privileges(c):
    """A target that becomes nobody keeps recording: on its threads, in a fork
    child, and in the image that child executes."""
    if os.geteuid() != 0:
        print("SKIP: dropping privileges needs root")
        sys.exit(SKIP)
    collector = os.environ.get("GPROF_DL_COLLECTOR") or ""
    for path in [c.prog("drop_privileges")] + ([collector] if collector else []):
        if not nobody_can_run(path):
            print(f"SKIP: {path} cannot be run by nobody (a directory above it is not searchable)")
            sys.exit(SKIP)
    trace, p = c.record([c.prog("drop_privileges")], "privileges")
    eq(p.stdout, b"uid 65534, child exited 6\n", "target stdout")
    ch = c.chrome(trace)
    for name in ("before", "after", "thread-after", "child", "exec-after"):
        eq(ch.count(name), 5, f"{name} ranges")
    eq({e["pid"] for e in ch.named("child")}, {e["pid"] for e in ch.named("exec-after")},
       "the exec'd image is the child's pid")


def case_full_disk(c):
    """The trace cannot be written past a file size limit: the run says what
    was lost, exits 1, and the trace reads up to its last whole chunk."""
    limit = 60000
    out = os.path.join(c.tmp, "full.gpdl")

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    # two small rings: the shared memory (a file too) stays under the limit
    p = subprocess.run([c.gpdl, "run", "--max-threads", "2", "--buffer-size", "4K", "-o", out, "--",
                        c.prog("many_names"), "40000"], capture_output=True, preexec_fn=limited)
    err = p.stderr.decode(errors="replace")
    eq(p.returncode, 1, f"status when the trace cannot be written (target exits 0); stderr: {err}")
    eq(p.stdout, b"40000 ranges\n", "target stdout")
    check("names were lost" not in err, f"names said to be lost: {err}")
    m = re.search(r"gprof-dl: cannot write '([^']+)': File too large: the trace is readable up to byte (\d+)"
                  r"(?:, before any event: all (\d+) events recorded were lost"
                  r"|; (\d+) of the (\d+) events recorded were lost, the (\d+) before it are whole)", err)
    check(m, f"no message naming what was lost: {err}")
    eq(m[1], out, "file named")
    at = int(m[2])
    if m[3]:
        kept, total = 0, int(m[3])
    else:
        kept, total = int(m[6]), int(m[5])
        eq(int(m[4]) + kept, total, "lost + kept")
    check(0 < total <= 40000, f"events recorded: {total}")
    size = os.path.getsize(out)
    check(at <= size <= limit, f"readable up to {at}, file {size} bytes, limit {limit}")
    s = c.summary(out)
    eq(s["traces"][0].get("damage", {}).get("offset"), at, "summary: where the trace is damaged")
    eq(s["events"]["total"], kept, "summary: events read")


def case_orphan_writer(c):
    """The command ends, a child it left behind records on without pause: the
    run ends all the same (the last drain is bounded), with the command's
    status and what the child wrote so far."""
    out = os.path.join(c.tmp, "orphan.gpdl")
    t0 = time.monotonic()
    p = subprocess.Popen([c.gpdl, "run", "-q", "-o", out, "--", c.prog("orphan_writer")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child = int(p.stdout.readline())
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        raise Failure("gprof-dl run still draining the orphan 15 s after the command ended")
    finally:
        os.kill(child, signal.SIGKILL)
    eq(p.returncode, 0, "status")
    check(time.monotonic() - t0 < 10, f"run took {time.monotonic() - t0:.1f} s")
    s = c.summary(out)
    eq(s["traces"][0].get("damage"), None, "damage")
    check(s["events"]["total"] > 0, "the orphan's events")


def clock_of(head, field):
    """A time of `gprof-dl info`'s header on the trace's clock, in ns:
    its start (the clock in parentheses) or its end (start + duration)."""
    start = int(round(float(re.search(r"\(clock ([\d.]+) s\)", head["start"])[1]) * 1e9))
    if field == "start":
        return start
    return start + int(round(float(head["duration"].split()[0]) * 1e9))


def pidfd_says_exit():
    """Whether the kernel tells a reaped process's exit through its pidfd
    (PIDFD_INFO_EXIT, Linux 6.15): then gprof-dl learns the signal of a
    rank its shell reaped at once."""
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return bool(m) and (int(m[1]), int(m[2])) >= (6, 15)


def case_shell_killed_rank(c):
    """A shell launcher forks a subshell per rank, which execs python (one
    pid, two images); rank 1 SIGKILLs itself, the shell reaps it at once,
    rank 0 exits with code 137 and so does the shell. The rank's end and
    exit are its python image's: the file's header ends and its root PROC
    record ends within 10 ms of the kill, killed by signal 9; an exit code
    of 137 is no signal; every file names the job the ranks' environment
    names."""
    d = os.path.join(c.tmp, "shell")
    os.mkdir(d)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    prog = os.path.join(c.src, "progs", "shell_rank.py")
    kill_file = os.path.join(d, "killed-at")
    with open(os.path.join(d, "launcher.sh"), "w") as f:
        f.write(f"for r in 0 1; do RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT={port} LOCAL_RANK=$r "
                f"{sys.executable} {prog} {kill_file} 137 & done\nwait\nexit 137\n")
    p = c.gprof("run", "-o", "t-%q{RANK}.gpdl", "--", "sh", "launcher.sh", cwd=d, check_status=137)
    ranks, launcher = ranks_reported(p.stderr)
    eq(sorted(ranks), [0, 1], "ranks reported")
    eq(ranks[0][2], "exit 137", "rank 0's exit code 137 is no signal")
    want = ("killed by signal 9",) if pidfd_says_exit() else ("killed by signal 9", "killed")
    check(ranks[1][2] in want, f"rank 1 reported {ranks[1][2]!r}, expected one of {want}")
    eq(launcher[1:], ("exit 137", "t-.gpdl"), "the launcher's exit code 137 is no signal")
    with open(kill_file) as f:
        killed_at = int(f.read().split()[0])
    head, procs, _ = info(c, os.path.join(d, "t-1.gpdl"))
    pid = ranks[1][1]
    images = [x for x in procs if x["pid"] == pid]
    eq(len(images), 2, f"the rank's images (the subshell, then python): {procs}")
    check(images[0]["cmd"].startswith("sh ") and "shell_rank.py" in images[1]["cmd"], f"images: {images}")
    start = clock_of(head, "start")
    end = clock_of(head, "end")
    check(abs(end - killed_at) <= 10_000_000, f"t-1.gpdl ends {(end - killed_at) / 1e6:.3f} ms from the kill")
    root_end = start + int(round(float(images[1]["end"]) * 1e9))
    check(abs(root_end - killed_at) <= 10_000_000,
          f"the rank's python image ends {(root_end - killed_at) / 1e6:.3f} ms from the kill")
    want_exit = ("killed:9",) if pidfd_says_exit() else ("killed:9", "killed")
    check(images[1]["exit"] in want_exit, f"the python image's exit: {images[1]['exit']}")
    eq(images[0]["exit"], images[1]["exit"], "the subshell image's exit is its process's")
    _, procs0, _ = info(c, os.path.join(d, "t-0.gpdl"))
    eq([x["exit"] for x in procs0], ["137", "137"], "rank 0's images: exit code 137")
    _, lprocs, _ = info(c, os.path.join(d, "t-.gpdl"))
    eq([(x["cmd"], x["exit"]) for x in lprocs], [("sh launcher.sh", "137")], "the launcher's process")
    jobs = {info(c, os.path.join(d, n))[0].get("job") for n in ("t-.gpdl", "t-0.gpdl", "t-1.gpdl")}
    eq(jobs, {f"master:127.0.0.1:{port}"}, "the files' job")


# ---- gprof-dl SIGKILLed: the command's whole tree ends with it ---------------------------------

TREE_BOUND = 5.0  # seconds from gprof-dl's SIGKILL to the last descendant's end


def tree_live(root):
    """The live descendants of ROOT (no zombies), but gprof-dl's own guard,
    from /proc: {pid: cmdline}."""
    kids = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{e}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        kids.setdefault(int(st[1]), []).append((int(e), st[0], cmd))
    out, todo = {}, [root]
    while todo:
        for pid, state, cmd in kids.get(todo.pop(), []):
            todo.append(pid)
            if state not in "ZX" and os.path.basename(cmd[0]) != b"gprof-dl":
                out[pid] = b" ".join(cmd).decode(errors="replace")
    return out


def alive(pids):
    return [p for p in pids if proc_state(p) not in (None, "Z", "X")]


def kill_during(c, cmd, want, keep, cwd):
    """Runs CMD under gprof-dl until WANT processes of its tree live,
    SIGKILLs gprof-dl; returns (the tree's pids, those still alive after
    TREE_BOUND s or, with KEEP, after 1 s, seconds until the last ended)."""
    args = [c.gpdl, "run", "-q", "-o", os.path.join(cwd, "t.gpdl"), "--force"] + (["--keep-target"] if keep else [])
    p = subprocess.Popen(args + ["--", *cmd], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree = {}
    try:
        deadline = time.monotonic() + 120
        while len(tree) < want and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.1)
            tree = tree_live(p.pid)
        eq(len(tree), want, f"{cmd[0]}: processes of the tree before the kill: {tree}")
        time.sleep(0.5)
        tree = tree_live(p.pid)
        p.kill()
        p.wait()
        t0 = time.monotonic()
        bound = 1.0 if keep else TREE_BOUND
        while alive(tree) and time.monotonic() - t0 < bound and not keep:
            time.sleep(0.02)
        took = time.monotonic() - t0
        if keep:
            time.sleep(bound)
        return sorted(tree), sorted(alive(tree)), took
    finally:
        if p.poll() is None:
            p.kill()
        for pid in alive(tree):
            os.kill(pid, signal.SIGKILL)


def kill_case(c, name, cmd, want, cwd):
    tree, left, took = kill_during(c, cmd, want, False, cwd)
    print(f"{name}: {len(tree)} processes, {len(left)} alive {TREE_BOUND:.0f} s after gprof-dl's SIGKILL; "
          f"the last ended after {took:.3f} s")
    eq(left, [], f"{name}: processes alive {TREE_BOUND} s after gprof-dl's SIGKILL")
    tree, left, _ = kill_during(c, cmd, want, True, cwd)
    print(f"{name} --keep-target: {len(left)} of {len(tree)} alive 1 s after gprof-dl's SIGKILL")
    eq(left, tree, f"{name} --keep-target: processes alive 1 s after gprof-dl's SIGKILL")


def case_launcher_killed_tree(c):
    """gprof-dl SIGKILLed under a shell launcher (`sh -c 'python a.py &
    python a.py & wait'`) and under a Python parent that forks 3 children,
    one of which starts a daemon (setsid, double fork: it leaves its tree
    for the subreaper): every process of the tree ends within TREE_BOUND s;
    with --keep-target every one runs on."""
    d = os.path.join(c.tmp, "tree")
    os.mkdir(d)
    py = sys.executable
    with open(os.path.join(d, "a.py"), "w") as f:
        f.write("import time\ntime.sleep(60)\n")
    with open(os.path.join(d, "fork.py"), "w") as f:
        f.write("import os, time\n"
                "for i in range(3):\n"
                "    if os.fork() == 0:\n"
                "        if i == 0 and os.fork() == 0:\n"
                "            os.setsid()\n"
                "            if os.fork() == 0:\n"
                "                time.sleep(60)\n"
                "            os._exit(0)\n"
                "        time.sleep(60)\n"
                "        os._exit(0)\n"
                "for i in range(3):\n"
                "    os.wait()\n")
    kill_case(c, "shell launcher", ["sh", "-c", f"{py} a.py & {py} a.py & wait"], 3, d)
    # the parent, its 3 children, the daemon
    kill_case(c, "python fork", [py, "fork.py"], 5, d)


def case_launcher_killed_torchrun(c):
    """The same under torch 2's torchrun: its agent and 2 ranks that sleep
    (no process group)."""
    py = c.torch2_python
    torchrun = os.path.join(os.path.dirname(py or ""), "torchrun")
    if not py or not os.path.exists(torchrun):
        print(f"SKIP: no torch 2 venv with torchrun ({torchrun!r})")
        sys.exit(SKIP)
    d = os.path.join(c.tmp, "torchrun")
    os.mkdir(d)
    with open(os.path.join(d, "a.py"), "w") as f:
        f.write("import time\ntime.sleep(60)\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kill_case(c, "torchrun", [torchrun, "--nproc-per-node", "2", "--master-port", str(port), "a.py"], 3, d)


if __name__ == "__main__":
    sys.exit(e2e_main(globals(), needs_nvtx=True, prefix="gpdl-launcher-"))
