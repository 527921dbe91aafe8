#!/usr/bin/env python3
"""ctest's checks of tests/gpu/device-kit (label device-kit):

  test_device_kit.py build KIT   `device-kit build KIT` succeeds and prints
                                 the kit's size, at most 60 MiB; then, checked
                                 here on its own: every ELF file of the kit
                                 resolves each library (`env -i ldd`) inside
                                 the kit or to glibc/libgcc, every RUNPATH is
                                 $ORIGIN-relative, no script or text file
                                 names this source tree's path, and the kit
                                 holds gprof-dl, its collector and the check
                                 scripts.
  test_device_kit.py check KIT   `device-kit check OUT --kit KIT` on a machine
                                 without a GPU: exit status 0 within 60 s,
                                 OUT/device-kit.txt written, the non-GPU parts
                                 PASS, every GPU part "SKIP <part>: no CUDA
                                 device (...)", and the final count line.
                                 With a CUDA device: skipped (77).
"""
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KIT_SCRIPT = os.path.join(HERE, "..", "device-kit")
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
BASIC = {"linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
         "librt.so.1", "libutil.so.1", "libgcc_s.so.1", "libresolv.so.2"}
FAILED = []


def check(cond, msg):
    if not cond:
        FAILED.append(msg)
        print(f"FAIL {msg}")
    return cond


def files(kit):
    for d, _, fs in os.walk(kit):
        for f in fs:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                yield p


def test_build(kit):
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, KIT_SCRIPT, "build", kit, "--jobs", "2"], capture_output=True, text=True)
    print(p.stdout[-3000:], p.stderr[-3000:], sep="\n")
    print(f"device-kit build: {time.monotonic() - t0:.1f} s")
    check(p.returncode == 0, f"device-kit build: status {p.returncode}")
    m = re.search(r"^device-kit: size ([0-9.]+) MiB", p.stdout, re.M)
    if check(m, "device-kit build printed no size line"):
        check(float(m[1]) <= 60, f"the kit is {m[1]} MiB, more than 60")
        real = sum(os.path.getsize(f) for f in files(kit)) / (1 << 20)
        check(abs(real - float(m[1])) < 0.1, f"the size printed, {m[1]} MiB, is not the kit's, {real:.2f} MiB")
    for rel in ("bin/gprof-dl", "lib/libgprof-dl-collector.so", "tests/gpu/device-kit", "tests/gpu/gpu_e2e.py",
                "tests/gpu/kit/train_cuda.py", "tests/pylib/checks.py", "KIT.txt"):
        check(os.path.exists(os.path.join(kit, rel)), f"the kit has no {rel}")
    elves = 0
    for f in files(kit):
        rel = os.path.relpath(f, kit)
        with open(f, "rb") as fh:
            data = fh.read()
        if data[:4] != b"\x7fELF":
            check(ROOT.encode() + b"/" not in data and kit.encode() not in data,
                  f"{rel} names a path of this machine ({ROOT} or {kit})")
            continue
        elves += 1
        out = subprocess.run(["env", "-i", "ldd", f], capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => (\S+)", line)
            if not m:
                continue
            check(m[2] != "not", f"{rel}: {m[1]} not found")
            inside = os.path.realpath(m[2]).startswith(os.path.realpath(kit) + "/")
            check(m[2] == "not" or inside or m[1] in BASIC, f"{rel}: {m[1]} resolved outside the kit: {m[2]}")
        dyn = subprocess.run(["readelf", "-d", f], capture_output=True, text=True).stdout
        for val in re.findall(r"\((?:RPATH|RUNPATH)\)\s+Library \w+: \[(.*)\]", dyn):
            check(all(e.startswith("$ORIGIN") for e in val.split(":")), f"{rel}: RUNPATH {val}")
        if rel == "bin/gprof-dl":
            check("$ORIGIN/../lib" in dyn, f"bin/gprof-dl has no RUNPATH $ORIGIN/../lib: {dyn[-800:]}")
    check(elves >= 3, f"{elves} ELF files in the kit")
    return 1 if FAILED else 0


GPU_PARTS = ("sample_counts", "cupti_absent", "torch", "nccl", "torch_e2e")


def test_check(kit, python):
    sample = os.path.join(kit, "cuda", "gpu_sample")
    if os.path.exists(sample) and subprocess.run([sample], capture_output=True).returncode == 0:
        print("SKIP device_kit_check_nogpu: this machine has a CUDA device: run `tests/gpu/device-kit check` itself")
        return 77
    with tempfile.TemporaryDirectory(prefix="gpdl-kit-test-") as out:
        t0 = time.monotonic()
        cmd = [sys.executable, KIT_SCRIPT, "check", out, "--kit", kit] + (["--python", python] if python else [])
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        secs = time.monotonic() - t0
        print(p.stdout[-6000:], p.stderr[-3000:], sep="\n")
        check(p.returncode == 0, f"device-kit check: status {p.returncode}")
        check(secs < 60, f"device-kit check took {secs:.0f} s without a GPU")
        path = os.path.join(out, "device-kit.txt")
        if not check(os.path.exists(path), "no OUT/device-kit.txt"):
            return 1
        with open(path, encoding="utf-8") as f:
            summary = f.read()
        check(summary.strip() == p.stdout.strip(), "OUT/device-kit.txt is not what check printed")
        check(os.listdir(out) == ["device-kit.txt"], f"OUT holds more than the summary: {os.listdir(out)}")
        for part in ("environment", "kit", "injection_env"):
            check(re.search(rf"^PASS {part}: ", summary, re.M), f"no 'PASS {part}:' line")
        for part in GPU_PARTS:
            check(re.search(rf"^SKIP {part}: no CUDA device \(.+\)$", summary, re.M),
                  f"no 'SKIP {part}: no CUDA device (...)' line")
        check(not re.search(r"^FAIL ", summary, re.M), "a FAIL line")
        m = re.search(r"^device-kit: (\d+) passed, (\d+) failed, (\d+) skipped in (\d+) s$", summary.splitlines()[-1])
        if check(m, f"the last line is not the count: {summary.splitlines()[-1:]}"):
            check((int(m[1]), int(m[2]), int(m[3])) == (3, 0, len(GPU_PARTS)),
                  f"counts {m.groups()[:3]}, expected 3 passed, 0 failed, {len(GPU_PARTS)} skipped")
    return 1 if FAILED else 0


def main():
    what, kit = sys.argv[1], os.path.abspath(sys.argv[2])
    if what == "build":
        return test_build(kit)
    return test_check(kit, sys.argv[3] if len(sys.argv) > 3 else "")


if __name__ == "__main__":
    sys.exit(main())
