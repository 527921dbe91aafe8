#!/usr/bin/env python3
"""check_house.py ROOT - the layout rules of issue 29, checked on the source
tree: no file in cmd/ over 600 lines; no C function outside tests/ over 150
lines (from the line of its opening brace at column 0 to its closing brace at
column 0); no header of lib/analysis/store that includes a header of
lib/analysis/views (the store is below the views). Prints each breach on a
line and exits 1, else a line with what it read and exits 0."""
import os
import re
import sys

CMD_MAX_LINES = 600
FUNC_MAX_LINES = 150
SKIP_DIRS = {"tests", "build", ".git", ".ci"}


def c_files(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        top = rel.split(os.sep)[0]
        if top in SKIP_DIRS or top.startswith("build"):
            dirs[:] = []
            continue
        for f in files:
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def long_functions(path):
    """[(name, first line, lines)] of the functions in path over the limit:
    a body opens with '{' alone at column 0 after a line that ends a
    declarator, and closes with '}' at column 0."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    out = []
    start = name = None
    for i, line in enumerate(lines):
        if start is None and line == "{" and i > 0 and lines[i - 1].rstrip().endswith(")"):
            start = i
            k = i - 1
            while k > 0 and not re.match(r"^[A-Za-z_]", lines[k]):
                k -= 1
            m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", lines[k])
            name = m.group(1) if m else "?"
        elif start is not None and line.startswith("}"):
            n = i - start + 1
            if n > FUNC_MAX_LINES:
                out.append((name, start + 1, n))
            start = None
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = []
    nfiles = nfuncs = 0
    for path in sorted(c_files(root)):
        rel = os.path.relpath(path, root)
        nfiles += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        nlines = text.count("\n")
        if rel.startswith("cmd" + os.sep) and nlines > CMD_MAX_LINES:
            bad.append(f"{rel}: {nlines} lines (cmd/ files: at most {CMD_MAX_LINES})")
        if path.endswith(".c"):
            nfuncs += text.count("\n{\n")
            for name, line, n in long_functions(path):
                bad.append(f"{rel}:{line}: {name}() is {n} lines (at most {FUNC_MAX_LINES})")
        if rel.startswith(os.path.join("lib", "analysis", "store")) and path.endswith(".h"):
            for m in re.finditer(r'#include\s+"([^"]+)"', text):
                if "views/" in m.group(1):
                    bad.append(f"{rel}: includes {m.group(1)} (the store is below the views)")
    for b in bad:
        print(b)
    if nfiles < 100 or nfuncs < 1000:
        print(f"check_house: only {nfiles} files and {nfuncs} functions read under {root}")
        return 1
    print(f"check_house: {nfiles} files, {nfuncs} functions: {len(bad)} breaches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
