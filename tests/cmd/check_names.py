"""check_names.py - reads a JSON or CSV output of gprof-dl back with Python's
strict parsers and checks that names came through in their documented form.

    check_names.py json FILE HEX...   json.loads of the bytes decoded as
                                      strict UTF-8; every name must be one of
                                      the document's strings (keys included)
    check_names.py csv PATH HEX...    every CSV in PATH (a file or a directory)
                                      through the csv module, strict UTF-8;
                                      every name must be a cell, once its
                                      indentation and " (mark)" are dropped

Each HEX is the expected string's UTF-8 bytes in hex (argv cannot carry all
bytes). Exit status 0 when every name is found, 1 with what is missing.
"""
import csv
import io
import json
import os
import sys


def strings(v, out):
    if isinstance(v, str):
        out.add(v)
    elif isinstance(v, dict):
        for k, x in v.items():
            out.add(k)
            strings(x, out)
    elif isinstance(v, list):
        for x in v:
            strings(x, out)
    return out


def strict_json(text):
    def no_constant(name):
        raise ValueError("not JSON: " + name)
    return json.loads(text, parse_constant=no_constant)


def json_strings(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="strict")
    found = set()
    # chrome export frames one event per line inside one document; summary
    # writes one document; either parses whole
    strings(strict_json(text), found)
    return found


def csv_cells(path):
    files = [path]
    if os.path.isdir(path):
        files = sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".csv"))
    if not files:
        raise SystemExit("no CSV files in " + path)
    found = set()
    for name in files:
        with open(name, "rb") as f:
            text = f.read().decode("utf-8", errors="strict")
        for row in csv.reader(io.StringIO(text, newline=""), strict=True):
            for cell in row:
                cell = cell.strip(" ")
                if cell.endswith(" (mark)"):
                    cell = cell[: -len(" (mark)")]
                found.add(cell)
    return found


def main():
    mode, path, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    found = json_strings(path) if mode == "json" else csv_cells(path)
    missing = [bytes.fromhex(h).decode("utf-8") for h in names]
    missing = [n for n in missing if n not in found]
    if missing:
        print("%s: not found: %r" % (path, missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
