"""check_help_man.py - every command's --help against its man page.

    python check_help_man.py --gprof-dl BIN --man-dir DIR [--count]

For each man/gprof-dl-CMD.1: the options `gprof-dl CMD --help` lists (the
lines of its option list, each an option's spellings up to its text) and the
options of the man page's OPTIONS section (every `.It Fl ...` item there,
nested lists included) must be the same set; an option spelt two ways (-o,
--output) counts as both. The usage lines must name each listed option (one
spelling of it is enough) unless they say "[options]" or "[...]"; -h and
--help need not be there. Prints one line per mismatch; exit 0 when there is
none, 1 otherwise (--count: prints the number of mismatches only)."""

import argparse
import os
import re
import subprocess
import sys

OPT = re.compile(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)")


def help_text(gprof, cmd):
    p = subprocess.run([gprof, cmd, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=30)
    if p.returncode != 0:
        raise SystemExit(f"'{cmd} --help' exited {p.returncode}")
    return p.stdout.decode()


def help_options(text):
    """The usage (the lines before the first blank line) and the option
    list's entries: a list of sets of spellings."""
    lines = text.splitlines()
    blank = lines.index("") if "" in lines else len(lines)
    usage = "\n".join(lines[:blank])
    entries = []
    for line in lines[blank:]:
        if not re.match(r"^ +-", line):
            continue
        # the spellings end where the text begins: at two spaces, or at
        # the first word after the option's own arguments (upper case,
        # A:B, =...)
        spec = re.split(r"\s{2,}", line.strip())[0]
        names = set()
        for tok in spec.split():
            tok = tok.rstrip(",")
            m = re.match(r"^(--?[A-Za-z][A-Za-z0-9-]*)", tok)
            if m:
                names.add(m.group(1))
            elif not re.match(r"^[A-Z\[<|]|^[a-z]+[=:|,]|^[A-Z0-9:.\-\[\]@|=,]+$", tok):
                break  # the text began after a single space
        if names:
            entries.append(names)
    return usage, entries


def man_options(path):
    section = None
    names = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith(".Sh "):
                section = line[4:].strip()
                continue
            if section != "OPTIONS" or not line.startswith(".It "):
                continue
            toks = line.split()
            if len(toks) < 3 or toks[1] != "Fl":
                continue
            for i, t in enumerate(toks[:-1]):
                if t == "Fl":
                    names.add("-" + toks[i + 1].split("=")[0])
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--man-dir", required=True)
    ap.add_argument("--count", action="store_true")
    a = ap.parse_args()
    problems = []
    pages = sorted(f for f in os.listdir(a.man_dir) if re.match(r"^gprof-dl-[a-z]+\.1$", f))
    if not pages:
        raise SystemExit(f"no gprof-dl-*.1 in '{a.man_dir}'")
    for page in pages:
        cmd = page[len("gprof-dl-"):-2]
        usage, entries = help_options(help_text(a.gprof_dl, cmd))
        listed = set().union(*entries) if entries else set()
        documented = man_options(os.path.join(a.man_dir, page))
        for o in sorted(listed - documented):
            problems.append(f"{cmd}: {o} is in --help but not in {page}'s OPTIONS")
        for o in sorted(documented - listed):
            problems.append(f"{cmd}: {o} is in {page}'s OPTIONS but not in --help")
        if "[options]" in usage or "[...]" in usage:
            continue
        in_usage = set(OPT.findall(usage))
        for names in entries:
            if names & {"-h", "--help"} or names & in_usage:
                continue
            problems.append(f"{cmd}: {'/'.join(sorted(names))} is not in the usage lines")
    if a.count:
        print(len(problems))
        return 0
    for p in problems:
        print(p)
    print(f"{len(pages)} commands, {len(problems)} mismatches")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
