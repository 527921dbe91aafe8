#!/usr/bin/env python3
"""read_ahead.py - a trace over 16 MB is read ahead on a second thread
(formats/trace/trace_reader.c); with GPDL_THREADS=1 it is read plainly. Both
must give the same summary, to the byte, of the trace whole and of copies
damaged in the ways the reader reports (a checksum, a truncated chunk, a
length over the maximum, bytes after END!), each damage at its offset.

    read_ahead.py --gprof-dl BIN --gen GEN
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile


def run(gpdl, path, threads):
    env = dict(os.environ, GPDL_THREADS=str(threads))
    p = subprocess.run([gpdl, "summary", path, "--view", "all", "--format", "json"],
                       capture_output=True, env=env)
    return p.returncode, p.stdout, p.stderr


def chunk_starts(data):
    off, out = 32, []
    while off + 16 <= len(data):
        out.append(off)
        off += 16 + struct.unpack_from("<I", data, off + 4)[0]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--gen", required=True)
    a = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        whole = os.path.join(tmp, "big.gpdl")
        subprocess.run([a.gen, whole, "1600000"], check=True, capture_output=True)
        data = open(whole, "rb").read()
        if len(data) < 17 << 20:
            print(f"FAIL: the trace is {len(data)} bytes, too small to be read ahead")
            return 1
        starts = chunk_starts(data)
        mid = next(o for o in starts if o > len(data) // 2)
        flip = mid + 100
        bad_len = bytearray(data)
        struct.pack_into("<I", bad_len, mid + 4, 0x7fffffff)
        cases = {
            "whole": (data, None),
            "checksum": (data[:flip] + bytes([data[flip] ^ 0xff]) + data[flip + 1:],
                         (mid, "checksum mismatch")),
            "truncated": (data[:mid + 50], (mid, "truncated chunk")),
            "length": (bytes(bad_len), (mid, "chunk length 2147483647 over the maximum")),
            "after END": (data + b"xyz", (len(data), "data after the END chunk")),
        }
        for name, (content, damage) in cases.items():
            path = os.path.join(tmp, "t.gpdl")
            with open(path, "wb") as f:
                f.write(content)
            plain, ahead = run(a.gprof_dl, path, 1), run(a.gprof_dl, path, 2)
            if plain != ahead:
                print(f"FAIL: {name}: read ahead, the summary differs from the plain read's")
                failed += 1
                continue
            rc, out, _ = ahead
            trace = json.loads(out)["traces"][0] if rc == 0 else None
            got = trace and trace["damage"]
            if rc != 0:
                print(f"FAIL: {name}: exit {rc}")
                failed += 1
            elif damage is None and (got or trace["events"] != 1600000):
                print(f"FAIL: {name}: damage {got}, {trace['events']} events")
                failed += 1
            elif damage and not (got and got["offset"] == damage[0] and got["reason"].startswith(damage[1])):
                print(f"FAIL: {name}: damage {got}, expected {damage}")
                failed += 1
            else:
                print(f"ok: {name}: {got['reason'] + ' at ' + str(got['offset']) if got else 'whole'}, "
                      f"{trace['events']} events, the same read ahead or not")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
