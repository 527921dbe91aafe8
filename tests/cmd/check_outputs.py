#!/usr/bin/env python3
"""Every output of gprof-dl written one way (issue 25, items 1, 2 and 4).

  check_outputs.py GPROF_DL GEN_TRACE [TRAIN_LOOP]

1. an output that is one of the inputs (the same file, a hard link to it, a
   symbolic link to it) is refused, even with --force: exit 1, one line, the
   input unchanged (summary, diff, report, export --chrome/--csv/--sqlite,
   import);
2. an output is whole or absent: summary -o never overwrites without
   --force; a planted NAME.tmp symbolic link is never written through; a
   symbolic link at -o is refused without --force and replaced itself (not
   its target) with it; an export killed by SIGINT, SIGTERM (no file left
   but the old one) or SIGKILL (the final name untouched) mid-write; a full
   disk (RLIMIT_FSIZE: EFBIG) gives one line with the reason, no partial
   file, and with --force the old output kept;
4. two `run -f -o same.gpdl` at once never damage the trace; without -f
   the second takes another name; a SIGKILLed run leaves its temporary
   file, readable.

Every failed check is printed (with the figure seen) before the exit status
1, so that a run on an unchanged build lists what it gets wrong.
"""
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

GPDL, GEN = sys.argv[1], sys.argv[2]
TRAIN = sys.argv[3] if len(sys.argv) > 3 and os.path.exists(sys.argv[3]) else None
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    return cond


def run(*args, limit=None, timeout=120):
    def pre():
        if limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    return subprocess.run([GPDL, *args], capture_output=True, text=True, errors="replace",
                          preexec_fn=pre, timeout=timeout)


def digest(path):
    """The content of a file, or of a directory's files but the temporary ones."""
    if os.path.isdir(path):
        return {n: digest(os.path.join(path, n)) for n in sorted(os.listdir(path))
                if ".gpdl-tmp." not in n}
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def temps(d):
    """Temporary files of the helper left in d (recursively)."""
    left = []
    for root, _, files in os.walk(d):
        left += [os.path.join(root, f) for f in files if ".gpdl-tmp." in f]
    return left


def lines(err):
    return [l for l in err.splitlines() if l.strip()]


def one_line(r, want, what):
    ls = lines(r.stderr)
    check(r.returncode == 1, f"{what}: exit {r.returncode}, want 1 ({r.stderr.strip()[:300]})")
    check(len(ls) == 1, f"{what}: {len(ls)} error lines, want 1: {ls[:3]}")
    check(want in r.stderr, f"{what}: '{want}' not in: {r.stderr.strip()[:300]}")


def main():
    tmp = tempfile.mkdtemp(prefix="gpdl-outputs-")
    try:
        os.chdir(tmp)
        small, other = "t.gpdl", "u.gpdl"
        subprocess.run([GEN, small, "2000"], check=True, capture_output=True)
        subprocess.run([GEN, other, "3000"], check=True, capture_output=True)
        item1(small, other)
        # (a build that overwrote the inputs must not fail every later check)
        subprocess.run([GEN, small, "2000"], check=True, capture_output=True)
        item2_links(small)
        subprocess.run([GEN, small, "2000"], check=True, capture_output=True)
        item2_signals()
        item2_full_disk(small)
        if TRAIN:
            item4()
        else:
            print("no train_loop: the concurrent runs are not checked")
    finally:
        os.chdir("/")
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


# ---- 1. an output never replaces an input --------------------------------------

def item1(small, other):
    r = run("export", "--chrome", small, "-o", "in.json")
    check(r.returncode == 0, f"export --chrome: {r.stderr}")
    os.link(small, "hard.gpdl")
    os.symlink(small, "soft.gpdl")
    os.link("in.json", "hard.json")
    os.symlink("in.json", "soft.json")
    for out in (small, "hard.gpdl", "soft.gpdl"):
        cmds = {
            "summary": ["summary", small, "-o", out, "--force"],
            "diff": ["diff", small, other, "-o", out, "--force"],
            "report": ["report", small, "-o", out, "--force"],
            "export --chrome": ["export", "--chrome", small, "-o", out, "--force"],
            "export --sqlite": ["export", "--sqlite", small, "-o", out, "--force"],
        }
        for name, args in cmds.items():
            before = digest(small)
            r = run(*args)
            one_line(r, "is the input", f"{name} -o {out} (the input)")
            check(digest(small) == before, f"{name} -o {out}: the input was changed")
            check(os.path.islink("soft.gpdl") and os.stat("hard.gpdl").st_ino == os.stat(small).st_ino,
                  f"{name} -o {out}: a link to the input was replaced")
    for out in ("in.json", "hard.json", "soft.json"):
        before = digest("in.json")
        r = run("import", "in.json", "-o", out, "--force")
        one_line(r, "is the input", f"import -o {out} (the input)")
        check(digest("in.json") == before, f"import -o {out}: the input was changed")
    print("1: outputs that are inputs refused")


# ---- 2. one way to write an output -------------------------------------------------

def item2_links(small):
    # summary -o never overwrites without --force
    with open("old.txt", "w") as f:
        f.write("keep me\n")
    r = run("summary", small, "-o", "old.txt")
    one_line(r, "exists; use --force", "summary -o EXISTING")
    check(open("old.txt").read() == "keep me\n", "summary -o EXISTING overwrote it")
    r = run("summary", small, "-o", "old.txt", "--force")
    check(r.returncode == 0 and "keep me" not in open("old.txt").read(),
          f"summary -o EXISTING --force: exit {r.returncode}, not replaced")
    r = run("diff", small, small, "-o", "old.txt")
    one_line(r, "exists; use --force", "diff -o EXISTING")

    # a planted NAME.tmp symbolic link is never written through
    with open("victim.txt", "w") as f:
        f.write("victim\n")
    os.symlink("victim.txt", "x.html.tmp")
    r = run("report", small, "-o", "x.html")
    check(r.returncode == 0, f"report -o x.html: {r.stderr}")
    check(open("victim.txt").read() == "victim\n",
          f"report wrote through the planted x.html.tmp ({os.path.getsize('victim.txt')} bytes in victim.txt)")
    check(os.path.islink("x.html.tmp"), "report replaced the planted x.html.tmp")

    # a dangling symbolic link at -o: refused without --force, the link
    # itself replaced with it (its target never created)
    os.symlink("nowhere.html", "dangling.html")
    r = run("report", small, "-o", "dangling.html")
    one_line(r, "exists; use --force", "report -o DANGLING-LINK")
    check(os.path.islink("dangling.html") and not os.path.exists("nowhere.html"),
          "report -o DANGLING-LINK: replaced the link or wrote its target without --force")
    r = run("report", small, "-o", "dangling.html", "--force")
    check(r.returncode == 0 and not os.path.islink("dangling.html") and not os.path.exists("nowhere.html"),
          "report -o DANGLING-LINK --force: the link is not replaced by the page")
    # a link to a file: with --force the link is replaced, the file kept
    os.symlink("victim.txt", "tolink.json")
    r = run("export", "--chrome", small, "-o", "tolink.json", "--force")
    check(r.returncode == 0 and open("victim.txt").read() == "victim\n" and not os.path.islink("tolink.json"),
          "export --chrome -o LINK --force wrote into the link's target")
    check(not temps("."), f"temporary files left: {temps('.')}")
    print("2: links and existing files")


def wait_growing(paths_of, min_bytes, proc, deadline=20.0):
    """Polls until some file (from paths_of()) holds min_bytes, or proc ends."""
    end = time.monotonic() + deadline
    while time.monotonic() < end and proc.poll() is None:
        for p in paths_of():
            try:
                if os.path.getsize(p) >= min_bytes:
                    return True
            except OSError:
                pass
        time.sleep(0.0005)
    return False


def item2_signals():
    subprocess.run([GEN, "big.gpdl", "1500000"], check=True, capture_output=True)
    kinds = {
        "chrome": (["--chrome"], "big.json"),
        "sqlite": (["--sqlite"], "big.sqlite"),
        "csv": (["--csv", "--no-summary"], "big-csv"),
    }
    figures = []
    for kind, (opts, out) in kinds.items():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            for force in (0, 1):
                d = f"sig-{kind}-{sig.name}-{force}"
                os.mkdir(d)
                final = os.path.join(d, out)
                old = None
                if force:
                    if kind == "csv":
                        os.mkdir(final)
                        with open(os.path.join(final, "ranges.csv"), "w") as f:
                            f.write("old\n")
                    else:
                        with open(final, "w") as f:
                            f.write("old\n")
                    old = digest(final)
                args = [GPDL, "export", *opts, "big.gpdl", "-o", final] + (["--force"] if force else [])
                caught = False
                for _ in range(4):  # until the signal lands mid-write
                    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

                    def files():
                        return [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs]
                    caught = wait_growing(files, 1 << 20, p)
                    if caught:
                        p.send_signal(sig)
                    p.communicate(timeout=120)
                    if caught:
                        break
                    shutil.rmtree(final, ignore_errors=True) if kind == "csv" and not force else None
                    if not force and os.path.exists(final) and not os.path.isdir(final):
                        os.unlink(final)
                if not check(caught, f"export --{kind} {sig.name}: the export ended before the signal"):
                    continue
                what = f"export --{kind} {'--force ' if force else ''}killed by {sig.name}"
                check(p.returncode == -sig, f"{what}: exit {p.returncode}, want the signal's")
                if force:
                    now = digest(final) if os.path.exists(final) else None
                    check(now == old, f"{what}: the old output changed")
                else:
                    left = 0
                    if os.path.isdir(final):
                        left = sum(os.path.getsize(os.path.join(final, f)) for f in os.listdir(final)
                                   if ".gpdl-tmp." not in f)
                    elif os.path.exists(final):
                        left = os.path.getsize(final)
                    figures.append(f"{kind}/{sig.name}: {left} bytes under the final name")
                    check(left == 0, f"{what}: {left} bytes left under the final name")
                if sig != signal.SIGKILL:
                    check(not temps(d), f"{what}: temporary files left: {temps(d)}")
                shutil.rmtree(d)
    print("2: signals:", "; ".join(figures) or "ok")


def item2_full_disk(small):
    """A full disk as RLIMIT_FSIZE makes one (EFBIG): one line with the
    reason, no partial file, the old output kept with --force."""
    os.mkdir("full")
    subprocess.run([GPDL, "export", "--chrome", small, "-o", "full/in.json"], check=True,
                   capture_output=True)
    cases = {
        "summary": (["summary", small, "--format", "csv"], "full/s.csv"),
        "diff": (["diff", small, small, "--format", "csv", "--top", "0"], "full/d.csv"),
        "report": (["report", small], "full/r.html"),
        "export --chrome": (["export", "--chrome", small], "full/c.json"),
        "export --csv": (["export", "--csv", small], "full/c-csv"),
        "export --sqlite": (["export", "--sqlite", small], "full/c.sqlite"),
        "import": (["import", "full/in.json"], "full/i.gpdl"),
    }
    reason = os.strerror(27)  # EFBIG: "File too large"
    for name, (args, out) in cases.items():
        for force in (0, 1):
            old = None
            if force:
                if name == "export --csv":
                    os.makedirs(out, exist_ok=True)
                    with open(os.path.join(out, "ranges.csv"), "w") as f:
                        f.write("old\n")
                else:
                    with open(out, "w") as f:
                        f.write("old\n")
                old = digest(out)
            r = run(*args, "-o", out, *(["--force"] if force else []), limit=2000)
            what = f"{name}{' --force' if force else ''} on a full disk"
            one_line(r, reason, what)
            if force:
                check(os.path.exists(out) and digest(out) == old, f"{what}: the old output was not kept")
            else:
                left = os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out))
                check(not left, f"{what}: a partial output is left ({out})")
            check(not temps("full"), f"{what}: temporary files left: {temps('full')}")
            if os.path.isdir(out):
                shutil.rmtree(out)
            elif os.path.exists(out):
                os.unlink(out)
    print("2: full disk")


# ---- 4. two runs of one -o at once -------------------------------------------------

def info_damage(path):
    r = subprocess.run([GPDL, "info", path], capture_output=True, text=True, errors="replace")
    for l in r.stdout.splitlines():
        if l.strip().startswith("damage"):
            return l.split(None, 1)[1].strip()
    return f"info failed: {r.stderr.strip()}"


def item4():
    damaged = 0
    rounds = 5
    for i in range(rounds):
        a = subprocess.Popen([GPDL, "run", "-q", "-f", "-o", "same.gpdl", "--", TRAIN, "200"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        b = subprocess.Popen([GPDL, "run", "-q", "-f", "-o", "same.gpdl", "--", TRAIN, "200"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        ea, eb = a.communicate(timeout=120)[1], b.communicate(timeout=120)[1]
        check(a.returncode == 0 and b.returncode == 0,
              f"round {i}: exits {a.returncode} {b.returncode}: {ea.strip()} {eb.strip()}")
        dmg = info_damage("same.gpdl")
        damaged += dmg != "none"
    check(damaged == 0, f"two `run -f -o same.gpdl` at once: {damaged} of {rounds} traces damaged")
    check(not temps("."), f"temporary files left: {temps('.')}")
    # without -f: the second to end takes another name, both whole
    os.unlink("same.gpdl")
    a = subprocess.Popen([GPDL, "run", "-q", "-o", "same.gpdl", "--", TRAIN, "200"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    b = subprocess.Popen([GPDL, "run", "-q", "-o", "same.gpdl", "--", TRAIN, "200"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ea, eb = a.communicate(timeout=120)[1], b.communicate(timeout=120)[1]
    names = sorted(f for f in os.listdir(".") if f.startswith("same"))
    check(names == ["same-1.gpdl", "same.gpdl"], f"two `run -o same.gpdl` at once made {names}")
    for n in names:
        check(info_damage(n) == "none", f"two `run -o same.gpdl` at once: {n} is damaged")
    check("appeared while this run recorded" in ea + eb, f"no warning about the other run: {ea} {eb}")
    # SIGKILL of gprof-dl run: the final name never sees a partial trace;
    # what was recorded is in the temporary file, readable
    p = subprocess.Popen([GPDL, "run", "-q", "-o", "killed.gpdl", "--", TRAIN, "2500"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(2.5)  # the recorder flushes every second
    p.kill()
    p.wait()
    try:
        os.killpg(p.pid, signal.SIGKILL)  # the target, if still in the launcher's group
    except ProcessLookupError:
        pass
    left = [f for f in os.listdir(".") if f.startswith(".killed.gpdl.gpdl-tmp.")]
    check(not os.path.exists("killed.gpdl"), "SIGKILL of run: a trace under the final name")
    if check(len(left) == 1, f"SIGKILL of run: temporary files {left}, want 1"):
        r = subprocess.run([GPDL, "info", left[0]], capture_output=True, text=True, errors="replace")
        ev = [l for l in r.stdout.splitlines() if l.strip().startswith("events")]
        n = int(ev[0].split()[1]) if ev else 0
        check(r.returncode == 0 and n > 0, f"SIGKILL of run: the temporary file holds {n} events")
        os.unlink(left[0])
    print(f"4: {damaged} of {rounds} concurrent runs damaged")


if __name__ == "__main__":
    sys.exit(main())
