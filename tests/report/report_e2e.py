#!/usr/bin/env python3
"""report_e2e.py - `gprof-dl report` end to end in a real browser: Debian's
chromium, headless, with the network off (cdp.py), on the reports of real
runs; every figure on the page checked against the JSON that `gprof-dl
summary` (and `gprof-dl diff`) print for the same traces, run separately.

    report_e2e.py --gprof-dl BIN --src DIR --shots DIR --case CASE
                  [--python PY --pydir DIR --cache-dir DIR] [--chromium PATH]
                  [--fake-cupti LIB --gpu-target BIN]

Cases:
  torch1    examples/train.py under `gprof-dl run --profile-memory` (torch 1.13)
  torch2    the same under torch 2.x (GPDL_TORCH2_PYTHON; skips without)
  job4      a 4-rank DDP job over gloo (examples/ddp_train.py, tests/dist's
            launcher): 4 rank files, one report; the Distributed section has
            4 ranks' bars and the straggler sentence of the Distributed view
  gpu       gpu-target under the CUPTI test double: kernels and devices drawn
  baseline  `report B --baseline A` of two imported Kineto traces: the diff
            section's numbers are `gprof-dl diff`'s
  hostile   a trace whose names are markup and bidi controls: shown as text
            (controls and bidi overrides as \\u{XXXX}), no error, no request,
            no dialog
  damaged   a trace cut short: reported up to the damage, which the page names
  firefox   the baseline report in Firefox (headless, a screenshot): no error,
            every chart Chromium draws drawn (skips without firefox)
  harness   the harness catches a console error, an exception and requests
            on a hand-written page, none on a quiet one, and a hung page
            fails in time

Checks on every report (check_report): it loads with no console error or
warning, no exception, no error in the log and no request for any URL but its
own; window.gprofDlReport.errors is empty; the JSON read back from the file
(REPORT-FORMAT.md's way) has the summary that its own "command" prints when
run again (equal as parsed JSON); the sections come in the contract's order,
each ok (with content) or empty (saying why, no canvas); every gp-chart was
drawn by Chart.js (data-rendered="1", pixels on its canvas, elements in its
datasets), each dataset's values are a column of the JSON part at its
data-src, and each point is exactly the value its gpPointers (gpXPointers)
entry names; a click on a header of a flat table sorts it both ways, with
aria-sort; every gp-num's data-value is String() of the value at its data-src
in the independently printed JSON, its data-kind the column's kind, its text
gpFormat(kind, value) (the contract's rules, in Python below); every
gp-table's rows are its part's rows, names as text. A screenshot of each
section, as loaded, goes to --shots as CASE-SECTION.png, and must have
painted pixels. The browser lives at most BROWSER_S seconds. Exit status:
0 pass, 1 fail, 77 skip (no chromium, no torch)."""
import argparse
import json
import math
import os
import pathlib
import re
import shutil
import struct
import sys
import types
from decimal import ROUND_HALF_UP, Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pylib"))
sys.path.insert(0, HERE)
from cdp import Browser, CdpError  # noqa: E402
from checks import FAILED, SKIP, Failure, Skip, check, eq, must, run_bounded, run_case, text  # noqa: E402

SECTIONS = ["advice", "overview", "steps", "operators", "kernels", "memory", "devices", "distributed", "diff"]
# report.js's vis(): what the page shows of a name, each control and bidi
# formatting character as the text "\u{202E}" (REPORT-FORMAT.md)
HIDDEN = re.compile("[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown_as(name):
    return HIDDEN.sub(lambda m: "\\u{%04X}" % ord(m.group(0)), name)


HOSTILE = ["</script><img src=x onerror=alert(1)>", "evil\u202egnp.exe<b>&amp;</b>",
           "</SCRIPT ><script>window.pwned=1</script>"]
BROWSER_S = 55  # a browser that has not finished by then is hung: the test fails in < 60 s


# --- gpFormat and String(), as the contract defines them ----------------------

def intl(v, minfd, maxfd):
    """value.toLocaleString("en-US", {minimumFractionDigits: minfd,
    maximumFractionDigits: maxfd}): ICU rounds the shortest decimal that
    reads back as the double (repr's, not the double's exact value: 0.4715
    gives 0.472 though the double is 0.47149999...) half away from zero,
    groups by 3 with ",", and keeps a "-" on a value that rounds to zero."""
    d = Decimal(v) if isinstance(v, int) else Decimal(repr(float(v)))
    d = d.quantize(Decimal(1).scaleb(-maxfd), rounding=ROUND_HALF_UP)
    s = f"{abs(d):,.{maxfd}f}"
    if maxfd > minfd and "." in s:
        whole, frac = s.split(".")
        frac = frac.rstrip("0")
        frac += "0" * (minfd - len(frac))
        s = whole + ("." + frac if frac else "")
    return ("-" if d.is_signed() else "") + s


def bytes_text(v):
    """table_bytes_text() of lib/analysis/table/table.c."""
    b = int(v)
    mag = abs(b)
    if mag < 1000:
        return f"{b} B"
    x = mag / 1000.0
    units = ["kB", "MB", "GB", "TB"]
    u = 0
    while x >= 1000.0 and u + 1 < len(units):
        x /= 1000.0
        u += 1
    return f"{'-' if b < 0 else ''}{x:.2f} {units[u]}"


def gp_format(kind, v):
    if kind == "time":
        m, d = abs(v), 3
        if 0 < m < 0.001:
            d = min(9, 1 - math.floor(math.log10(m)))
        return intl(v, d, d)
    if kind == "count":
        return intl(v, 0, 3)
    if kind == "percent":
        return intl(v, 2, 2) + " %"
    if kind == "bytes":
        return bytes_text(v)
    if kind == "real":
        return intl(v, 2, 2)
    raise ValueError(f"no gpFormat kind {kind!r}")


def js_string(v):
    """String(v) in JavaScript, for a JSON value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, int) and abs(v) < 2**53:
        return str(v)
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "0"
    # the shortest digits that read back as v (repr's and JS's), placed as
    # Number::toString places them
    sign = "-" if v < 0 else ""
    _, digits, exp = Decimal(repr(abs(v))).normalize().as_tuple()
    ds = "".join(map(str, digits))
    k, n = len(ds), exp + len(ds)
    if k <= n <= 21:
        return sign + ds + "0" * (n - k)
    if 0 < n <= 21:
        return sign + ds[:n] + "." + ds[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + ds
    e = n - 1
    es = f"e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + (ds if k == 1 else ds[0] + "." + ds[1:]) + es


def self_test():
    """The Python gpFormat against a few values worked out by hand (and by
    Chromium: the report case also compares it with the page)."""
    for kind, v, want in [("time", 1234.5, "1,234.500"), ("time", 1.0625, "1.063"), ("time", -0.0001, "-0.00010"),
                          ("time", 0.4715, "0.472"), ("time", 0.000345, "0.00035"), ("time", 0.0004, "0.00040"),
                          ("time", 0.0005, "0.00050"), ("time", 0.001, "0.001"),
                          ("count", 1234567, "1,234,567"), ("count", 2.5, "2.5"), ("percent", 35.2, "35.20 %"),
                          ("percent", 100, "100.00 %"), ("bytes", 999, "999 B"), ("bytes", -512, "-512 B"),
                          ("bytes", 1500 * 1000, "1.50 MB"), ("bytes", 1152, "1.15 kB"),
                          ("bytes", 798740, "798.74 kB"), ("real", 5617.27537, "5,617.28")]:
        eq(gp_format(kind, v), want, f"gp_format({kind}, {v})")
    for v, want in [(1e21, "1e+21"), (1e-7, "1e-7"), (0.000001, "0.000001"), (123.456, "123.456"), (-2.5e-8, "-2.5e-8"),
                    (1.5e20, "150000000000000000000"), (12, "12")]:
        eq(js_string(v), want, f"js_string({v})")


# --- the document and JSON pointers ------------------------------------------

def pointer(doc, ptr):
    """The value at JSON pointer ptr (RFC 6901); KeyError when there is none."""
    if ptr == "":
        return doc
    if not ptr.startswith("/"):
        raise KeyError(f"not a JSON pointer: {ptr!r}")
    cur = doc
    for tok in ptr[1:].split("/"):
        tok = tok.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, list):
            if not re.fullmatch(r"0|[1-9][0-9]*", tok) or int(tok) >= len(cur):
                raise KeyError(f"{ptr}: no index {tok}")
            cur = cur[int(tok)]
        elif isinstance(cur, dict):
            if tok not in cur:
                raise KeyError(f"{ptr}: no member {tok!r}")
            cur = cur[tok]
        else:
            raise KeyError(f"{ptr}: {tok!r} under a {type(cur).__name__}")
    return cur


def read_back(html):
    """The document of a report, read as REPORT-FORMAT.md says a script reads
    it: the text of <script type="application/json" id="gprof-dl-data">,
    JSON.parse'd (its \\u003c etc. are JSON escapes)."""
    m = re.search(r'<script type="application/json" id="gprof-dl-data">(.*?)</script>', html, re.S)
    must(m, 'no <script type="application/json" id="gprof-dl-data"> in the report')
    body = m.group(1)
    for ch in "<>&":
        check(ch not in body, f"the embedded JSON holds a raw {ch!r} (the contract writes it \\u00{ord(ch):02x})")
    return json.loads(body)


def part_rows(part):
    """Every row under a JSON value (a table, a part, a list of rows), nested
    rows flattened in pre-order, with the columns that describe each."""
    out = []

    def rows(rs, cols):
        for r in rs:
            out.append((r, cols))
            rows(r.get("children", []), cols)
    if isinstance(part, dict) and "sections" in part:
        for s in part["sections"]:
            rows(s.get("rows", []), s.get("columns") or part.get("columns") or [])
    elif isinstance(part, dict) and "rows" in part:
        rows(part["rows"], part.get("columns") or [])
    elif isinstance(part, list):
        rows([r for r in part if isinstance(r, dict)], [])
    return out


def column_kind(doc, ptr):
    """The kind of the column a row cell's pointer names
    (.../sections/S/rows/R[/children/C...]/KEY), from the part's or the
    table's columns; None when ptr is no row cell."""
    m = re.fullmatch(r"(.*)/sections/(\d+)/rows/.*/([^/]+)", ptr)
    if not m:
        return None
    table = pointer(doc, m.group(1))
    sec = table["sections"][int(m.group(2))]
    key = m.group(3).replace("~1", "/").replace("~0", "~")
    for c in sec.get("columns") or table.get("columns") or []:
        if c.get("key") == key:
            k = c.get("kind")
            return "real" if k == "number" else k  # gpFormat's kinds
    return None


# --- the page ------------------------------------------------------------------

PAGE_FACTS = r"""(function () {
  function rect(el) { var r = el.getBoundingClientRect();
    return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height}; }
  var R = window.gprofDlReport;
  var out = {errors: (R.errors || []).map(String), sections: [], nav: [], charts: [], nums: [], tables: [],
             imgs: document.images.length, pwned: window.pwned === 1};
  document.querySelectorAll('nav a[href^="#"]').forEach(function (a) { out.nav.push(a.getAttribute('href')); });
  document.querySelectorAll('section.gp-section').forEach(function (s) {
    var e = s.querySelector('p.gp-empty');
    out.sections.push({id: s.id, state: s.getAttribute('data-state'), h2: (s.querySelector('h2') || {}).textContent || '',
      empty: e ? e.textContent : null, canvases: s.querySelectorAll('canvas').length,
      charts: s.querySelectorAll('figure.gp-chart').length, tables: s.querySelectorAll('table.gp-table').length,
      text: s.textContent, rect: rect(s)});
  });
  document.querySelectorAll('figure.gp-chart').forEach(function (f) {
    var cv = f.querySelectorAll('canvas'), painted = -1, w = 0, h = 0;
    if (cv.length === 1) {
      w = cv[0].width; h = cv[0].height;
      var d = cv[0].getContext('2d').getImageData(0, 0, w, h).data; painted = 0;
      for (var i = 3; i < d.length; i += 4) if (d[i] !== 0) painted++;
    }
    var name = f.id.replace(/^chart-/, ''), ch = R.charts && R.charts[name], sets = null, labels = null, elems = 0;
    if (ch) {
      labels = ch.data.labels || null;
      sets = ch.data.datasets.map(function (ds, i) {
        var meta = ch.getDatasetMeta(i); elems += meta.data.length;
        return {label: ds.label, data: ds.data, pointers: ds.gpPointers || null, xpointers: ds.gpXPointers || null,
                kind: ds.gpKind || null, stack: ds.stack === undefined ? null : String(ds.stack)};
      });
    }
    var cap = f.querySelector('figcaption');
    out.charts.push({id: f.id, name: name, src: f.getAttribute('data-src'), rendered: f.getAttribute('data-rendered'),
      canvases: cv.length, width: w, height: h, painted: painted, caption: cap ? cap.textContent : null,
      captionNums: cap ? cap.querySelectorAll('.gp-num').length : 0, datasets: sets, labels: labels, elements: elems,
      section: f.closest('section') ? f.closest('section').id : null});
  });
  document.querySelectorAll('.gp-num').forEach(function (n) {
    out.nums.push({tag: n.tagName, src: n.getAttribute('data-src'), kind: n.getAttribute('data-kind'),
                   value: n.getAttribute('data-value'), text: n.textContent});
  });
  document.querySelectorAll('table.gp-table').forEach(function (t, ti) {
    var rows = [];
    t.querySelectorAll('tbody tr[data-row]').forEach(function (tr) {
      var nm = tr.querySelector('td.gp-name');
      rows.push({row: tr.getAttribute('data-row'), name: nm ? nm.textContent : null});
    });
    out.tables.push({index: ti, src: t.getAttribute('data-src'), rows: rows,
                     heads: t.querySelectorAll('thead th').length});
  });
  // the page's helpers on fixed input: round byte ticks, all-zero GPU columns hidden
  out.bytesTicks = window.gpBytesTicks ? [[0, 3.8e6], [0, 512000], [0, 2.5e9], [0, 7]].map(function (x) {
    return window.gpBytesTicks(x[0], x[1]).labels; }) : null;
  out.shownColumns = window.gpShownColumns ? window.gpShownColumns(
    [{key: 'name', kind: 'text'}, {key: 'cpu_total', kind: 'time'}, {key: 'gpu_total', kind: 'time'},
     {key: 'gpu_ratio', kind: 'percent'}, {key: 'self_total', kind: 'time'}],
    [{name: 'a', cpu_total: 1, gpu_total: 0, gpu_ratio: 0, self_total: 1,
      children: [{name: 'b', cpu_total: 1, gpu_total: 0, gpu_ratio: 2, self_total: 0}]}]).map(function (c) {
      return c.key; }) : null;
  out.hidden = Array.prototype.map.call(document.querySelectorAll('table.gp-table'), function (t) {
    return t.getAttribute('data-hidden'); });
  out.traces = Array.prototype.map.call(document.querySelectorAll('.gp-trace'),
                                      function (e) { return e.textContent; });
  return out;
})()"""

# Sorts table TI by its header cell HI (a click), twice: what each click
# showed (the gp-num data-values of that column, top to bottom, and aria-sort).
SORT_JS = r"""(function (ti, hi) {
  var t = document.querySelectorAll('table.gp-table')[ti], th = t.querySelectorAll('thead th')[hi], res = [];
  for (var k = 0; k < 2; k++) {
    th.click();
    var vals = [];
    t.querySelectorAll('tbody tr[data-row]').forEach(function (tr) {
      var c = tr.children[hi]; var n = c && (c.classList.contains('gp-num') ? c : c.querySelector('.gp-num'));
      vals.push(n ? n.getAttribute('data-value') : null);
    });
    res.push({aria: th.getAttribute('aria-sort'), values: vals});
  }
  return res;
})(%d, %d)"""


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    must(head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG")
    return struct.unpack(">II", head[16:24])


class Ctx:
    def __init__(self, args, tmp):
        self.a = args
        self.gpdl = os.path.abspath(args.gprof_dl)
        self.tmp = tmp
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GPROF_DL_", "OMPI_", "PMI_", "SLURM_", "PADDLE_"))
               and k not in ("PYTHONPATH", "LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH",
                             "FAKE_CUPTI_SCENARIO", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
        if args.cache_dir:
            env["GPROF_DL_CACHE_DIR"] = args.cache_dir
        env["PYTHONUNBUFFERED"] = "1"
        env["OMP_NUM_THREADS"] = "1"
        self.env = env
        self.points = 0

    def path(self, name):
        return os.path.join(self.tmp, name)

    def gprof(self, *args, status=0, env=None):
        p = run_bounded([self.gpdl, *args], env=env or self.env, cwd=self.tmp)
        if status is not None and p.returncode != status:
            raise Failure(f"gprof-dl {' '.join(args)}: status {p.returncode}, expected {status}\n"
                          f"stdout: {text(p.stdout)[-3000:]}\nstderr: {text(p.stderr)[-3000:]}")
        return p

    def need_torch(self):
        from torchharness import torch_version
        py = self.a.python
        if not py or not os.path.exists(py):
            raise Skip(f"no torch interpreter ({py!r})")
        if not os.path.exists(os.path.join(self.a.pydir or "", "sitecustomize.py")):
            raise Skip(f"the gprof_dl Python package is not built in {self.a.pydir} (it needs python3-dev)")
        os.makedirs(self.a.cache_dir, exist_ok=True)
        v = torch_version(py, self.a.cache_dir)
        if not v:
            raise Skip(f"{py} cannot import torch")
        return v

    def kineto(self, name, seed, steps, rename=None):
        """A Kineto trace from tests/import/gen_kineto.py, imported; rename
        maps event names to others before the import."""
        src = self.path(name + ".json")
        p = run_bounded([sys.executable, os.path.join(self.a.src, "tests", "import", "gen_kineto.py"), src,
                         "--steps", str(steps), "--seed", str(seed)])
        must(p.returncode == 0, f"gen_kineto.py: {text(p.stderr)}")
        if rename:
            with open(src, encoding="utf-8") as f:
                d = json.load(f)
            evs = d["traceEvents"] if isinstance(d, dict) else d
            n = 0
            for e in evs:
                if e.get("name") in rename:
                    e["name"] = rename[e["name"]]
                    n += 1
            must(n > 0, f"none of {list(rename)} in the Kineto trace")
            with open(src, "w", encoding="utf-8") as f:
                json.dump(d, f)
        out = self.path(name + ".gpdl")
        self.gprof("import", "-q", "--force", src, "-o", out)
        return out

    # --- the report and its checks -----------------------------------------

    def report(self, files, *opts):
        out = self.path("report.html")
        p = self.gprof("report", *files, "-o", out, *opts)
        size = os.path.getsize(out)
        check(f"wrote {out} ({size} bytes)" in text(p.stderr) or f"({size} bytes)" in text(p.stderr),
              f"report's stderr does not say it wrote {size} bytes: {text(p.stderr)!r}")
        eq(text(p.stdout), "", "report's stdout")
        return out

    def independent(self, command):
        """What a command of the document prints when run again here (its
        argv[0] "gprof-dl" is this build's)."""
        must(isinstance(command, list) and command and command[0] == "gprof-dl",
             f"the document's command is {command!r}")
        return json.loads(self.gprof(*command[1:]).stdout)

    def check_report(self, case, html_path, files, expect, baseline=False, shots=True):
        """Every check of the module docstring on one report; expect maps a
        section id to "ok" or "empty". Returns (document, page facts)."""
        with open(html_path, encoding="utf-8") as f:
            html = f.read()
        for bad in (r"<link\b", r"\bsrc\s*=\s*[\"']?(https?:|//)", r"@import", r"url\(\s*[\"']?https?:"):
            check(not re.search(bad, html, re.I), f"the report holds {bad!r}: not self-contained")
        doc = read_back(html)
        eq(doc.get("gprof_dl_report"), 1, "the document's gprof_dl_report")
        summary = self.independent(doc.get("command"))
        eq(doc.get("summary"), summary, "the embedded summary against its command run again")
        for f in files:
            check(any(os.path.basename(f) == os.path.basename(x) or x == f for x in doc["command"]),
                  f"the document's command does not name {f}: {doc['command']}")
        ref = {"summary": summary, "baseline": doc.get("baseline")}
        if baseline:
            b = doc.get("baseline")
            must(isinstance(b, dict), f"--baseline: the document's baseline is {b!r}")
            diff = self.independent(b.get("command"))
            eq(b.get("diff"), diff, "the embedded diff against its command run again")
            ref["baseline"] = dict(b, diff=diff)
        else:
            eq(doc.get("baseline"), None, "the document's baseline without --baseline")
        full = dict(doc, **ref)

        url = pathlib.Path(os.path.abspath(html_path)).as_uri()
        with Browser(self.a.chromium, lifetime=BROWSER_S) as b:
            try:
                page = b.open(url, ready="window.gprofDlReport && document.readyState === 'complete'", timeout=25)
                # every chart drawn (or the wait ends, and the check below says which not)
                page.eval("""new Promise(function (ok) { var t0 = Date.now(); (function w() {
                    if (!document.querySelector('figure.gp-chart:not([data-rendered="1"])') || Date.now() - t0 > 10000)
                      ok(true); else setTimeout(w, 50); })(); })""", timeout=15)
                facts = page.eval(PAGE_FACTS, timeout=30)
                shots = self.screenshots(b, page, case, facts) if shots else []  # as loaded, before a sort
                sorts = self.check_sorting(page, facts, full)
                problems = page.problems()
                dialogs = [e for e in b.events if e.get("method") == "Page.javascriptDialogOpening"]
            except CdpError as e:
                raise Failure(f"the browser: {e}")
        eq(problems, [], "console errors, exceptions, log errors and requests of the page")
        eq(dialogs, [], "dialogs the page opened")
        eq(facts["errors"], [], "window.gprofDlReport.errors")
        check(not facts["pwned"], "a script from the trace's names ran")
        self.check_sections(facts, expect)
        nc = self.check_charts(facts, full)
        nn, kinds = self.check_nums(facts, full)
        nt, nrows = self.check_tables(facts, full)
        print(f"{case}: report {os.path.getsize(html_path)} bytes; {len(facts['sections'])} sections "
              f"({', '.join(s['id'] + '=' + str(s['state']) for s in facts['sections'])}); {nc} charts; "
              f"{nn} gp-num checked ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}); "
              f"{self.points} chart points checked by pointer; {nt} tables, {nrows} rows; {sorts} sorts; "
              f"{len(shots)} screenshots in {self.a.shots}: " + ", ".join(f"{i} {w}x{h} ({n} px painted)" for i, w, h, n in shots))
        return doc, facts

    def check_sections(self, facts, expect):
        ids = [s["id"] for s in facts["sections"]]
        want = [s for s in SECTIONS if s in ids]
        eq(ids, want, "the sections' order")
        for s in SECTIONS[:-1]:
            check(s in ids, f"no section {s}")
        for s in facts["sections"]:
            check(s["h2"].strip() != "", f"section {s['id']}: no <h2>")
            check(f"#{s['id']}" in facts["nav"], f"section {s['id']}: no #{s['id']} link in the nav bar {facts['nav']}")
            check(s["state"] in ("ok", "empty"), f"section {s['id']}: data-state {s['state']!r}")
            if s["state"] == "empty":
                check(s["empty"] and s["empty"].strip(), f"section {s['id']}: empty without a p.gp-empty saying why")
                eq(s["canvases"], 0, f"section {s['id']} (empty): canvases")
            else:
                check(s["empty"] is None, f"section {s['id']} (ok) has a p.gp-empty: {s['empty']!r}")
                check(s["charts"] + s["tables"] > 0, f"section {s['id']} (ok): no chart and no table")
        for sid, state in expect.items():
            got = next((s["state"] for s in facts["sections"] if s["id"] == sid), None)
            eq(got, state, f"section {sid}'s data-state")

    def check_charts(self, facts, doc):
        n = 0
        for c in facts["charts"]:
            what = f"chart {c['id']}"
            n += 1
            check(c["id"].startswith("chart-"), f"{what}: id not chart-NAME")
            eq(c["rendered"], "1", f"{what}: data-rendered")
            eq(c["canvases"], 1, f"{what}: canvases")
            check(c["caption"] and c["caption"].strip(), f"{what}: no caption text")
            # the key figures as text: quoted from the document through gp-num
            check(c["captionNums"] > 0, f"{what}: its caption quotes no figure (gp-num): {c['caption']!r}")
            # painted: more than the axes' ticks alone would be is not knowable
            # in general; at least a few hundred pixels of a 1280-wide page
            check(c["painted"] >= 200, f"{what}: {c['painted']} painted pixels on a {c['width']}x{c['height']} canvas")
            must(c["datasets"] is not None, f"{what}: no window.gprofDlReport.charts[{c['name']!r}]")
            check(c["elements"] > 0, f"{what}: Chart.js drew no element")
            try:
                part = pointer(doc, c["src"] or "")
            except KeyError as e:
                check(False, f"{what}: data-src {c['src']!r}: {e}")
                continue
            rows = [r for r, _ in part_rows(part)]
            check(rows, f"{what}: data-src {c['src']} has no rows")
            self.check_datasets(what, c, rows)
            self.check_points(what, c, doc)
        return n

    def check_points(self, what, c, doc):
        """Where a dataset names the JSON value of each point (gpPointers,
        gpXPointers for the x of a line), the point is that value exactly,
        and the value lies under the chart's data-src."""
        for ds in c["datasets"]:
            for key, axis in (("pointers", "y"), ("xpointers", "x")):
                ptrs = ds.get(key)
                if ptrs is None:
                    continue
                data = ds["data"] or []
                eq(len(ptrs), len(data), f"{what} {ds['label']!r}: {key} against points")
                for i, (ptr, p) in enumerate(zip(ptrs, data)):
                    v = p.get(axis) if isinstance(p, dict) else p
                    if ptr is None:
                        check(v is None, f"{what} {ds['label']!r} point {i}: {v!r} with no pointer")
                        continue
                    try:
                        want = pointer(doc, ptr)
                    except KeyError as e:
                        check(False, f"{what} {ds['label']!r} point {i}: {e}")
                        continue
                    self.points += 1
                    eq(v, want, f"{what} {ds['label']!r} point {i} ({axis}) against {ptr}")

    def check_datasets(self, what, c, rows):
        """Each dataset's values are one column of the part's rows: the
        same key for all its points, and where the chart's labels are the
        rows' names, the value of the row of that name."""
        by_name = {}
        for r in rows:
            if isinstance(r.get("name"), str):
                by_name.setdefault(r["name"], r)
        labels = c["labels"] or []
        for ds in c["datasets"]:
            pts = ds["data"] or []
            vals = []
            for i, p in enumerate(pts):
                if isinstance(p, dict):
                    for axis in ("x", "y"):
                        if isinstance(p.get(axis), (int, float)):
                            vals.append((None, p[axis], axis))
                elif isinstance(p, (int, float)) and not isinstance(p, bool):
                    lab = labels[i] if i < len(labels) else None
                    vals.append((lab if isinstance(lab, str) else None, p, "v"))
            if not vals:
                check(False, f"{what}: dataset {ds['label']!r} holds no number")
                continue
            keys = {k for r in rows for k, v in r.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
            fits = []
            for key in sorted(keys):
                col = [r[key] for r in rows if key in r]
                ok = True
                for lab, v, axis in vals:
                    if axis == "x":
                        continue  # an x is a row's start, checked with the y's key below when it fits
                    if lab is not None and lab in by_name and key in by_name[lab]:
                        ok = by_name[lab][key] == v
                    else:
                        ok = v in col
                    if not ok:
                        break
                if ok:
                    fits.append(key)
            xs = [v for _, v, a in vals if a == "x"]
            if xs:
                xcol = {r[k] for r in rows for k in r if isinstance(r[k], (int, float))}
                check(all(x in xcol for x in xs), f"{what}: dataset {ds['label']!r}: x values not in the part: {xs[:5]}")
            check(fits, f"{what}: dataset {ds['label']!r}: its values {[v for _, v, _ in vals][:8]} are no column of "
                        f"{c['src']} ({len(rows)} rows)")

    def check_nums(self, facts, doc):
        kinds = {}
        for n in facts["nums"]:
            what = f"gp-num {n['src']!r} ({n['text']!r})"
            must(n["src"] is not None, f"a gp-num without data-src: {n}")
            try:
                v = pointer(doc, n["src"])
            except KeyError as e:
                check(False, f"{what}: {e}")
                continue
            kinds[n["kind"]] = kinds.get(n["kind"], 0) + 1
            check(isinstance(v, (int, float)) and not isinstance(v, bool), f"{what}: the value there is {v!r}")
            if not isinstance(v, (int, float)):
                continue
            eq(n["value"], js_string(v), f"{what}: data-value against String() of the summary's value")
            ck = column_kind(doc, n["src"])
            if ck:
                eq(n["kind"], ck, f"{what}: data-kind against the column's kind")
            try:
                want = gp_format(n["kind"], v)
            except ValueError as e:
                check(False, f"{what}: {e}")
                continue
            eq(n["text"], want, f"{what}: text against gpFormat({n['kind']}, {v!r})")
        check(len(facts["nums"]) > 0, "no gp-num on the page")
        return len(facts["nums"]), kinds

    def check_tables(self, facts, doc):
        nrows = 0
        for t in facts["tables"]:
            what = f"table {t['index']} ({t['src']})"
            try:
                part = pointer(doc, t["src"] or "")
            except KeyError as e:
                check(False, f"{what}: {e}")
                continue
            rows = part_rows(part)
            check(t["rows"], f"{what}: no tr[data-row]")
            check(len(t["rows"]) <= len(rows), f"{what}: {len(t['rows'])} rows, its part has {len(rows)}")
            seen = set()
            for r in t["rows"]:
                i = int(r["row"])
                check(i not in seen, f"{what}: data-row {i} twice")
                seen.add(i)
                if i >= len(rows):
                    check(False, f"{what}: data-row {i} past its part's {len(rows)} rows")
                    continue
                row, cols = rows[i]
                name = row.get("name")
                if name is None:  # the part's first text column names its rows
                    key = next((c["key"] for c in cols if c.get("kind") == "text"), None)
                    name = row.get(key) if key else None
                if r["name"] is not None and isinstance(name, str):
                    eq(r["name"].strip(), shown_as(name).strip(), f"{what}: row {i}'s name")
            nrows += len(t["rows"])
        return len(facts["tables"]), nrows

    def check_sorting(self, page, facts, doc):
        """The first flat table (a tree sorts within its parents) with a
        numeric column: a click sorts by it one way, the next the other way,
        aria-sort saying which."""
        for t in facts["tables"]:
            if len(t["rows"]) < 3:
                continue
            try:
                rows = part_rows(pointer(doc, t["src"] or ""))
            except KeyError:
                continue
            if any(r.get("children") for r, _ in rows):
                continue
            for hi in range(1, t["heads"]):
                res = page.eval(SORT_JS % (t["index"], hi))
                vals = [float(v) for v in res[0]["values"] if v not in (None, "null")]
                if len(vals) < 3 or len(set(vals)) < 2:
                    continue
                a = [float(v) for v in res[0]["values"] if v not in (None, "null")]
                b = [float(v) for v in res[1]["values"] if v not in (None, "null")]
                asc = res[0]["aria"] == "ascending"
                check(res[0]["aria"] in ("ascending", "descending"), f"table {t['index']}: aria-sort {res[0]['aria']!r}")
                eq(a, sorted(a, reverse=not asc), f"table {t['index']} sorted by column {hi} ({res[0]['aria']})")
                eq(b, sorted(b, reverse=asc), f"table {t['index']} sorted again by column {hi} ({res[1]['aria']})")
                check(res[1]["aria"] != res[0]["aria"], "a second click does not turn the order")
                return 1
        return 0

    def screenshots(self, b, page, case, facts):
        """A PNG of each section, the viewport as tall as the page (a clip
        beyond the viewport is not always painted: blank images), each with
        painted pixels (counted by a second, blank page)."""
        os.makedirs(self.a.shots, exist_ok=True)
        height = page.eval("document.documentElement.scrollHeight")
        page.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": min(int(height), 30000), "deviceScaleFactor": 1, "mobile": False})
        page.eval("new Promise(function (ok) { requestAnimationFrame(function () { requestAnimationFrame(ok); }); })")
        rects = page.eval("""Array.prototype.map.call(document.querySelectorAll('section.gp-section'), function (s) {
            var r = s.getBoundingClientRect();
            return {id: s.id, x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}; })""")
        out, pngs = [], []
        for r in rects:
            if r["width"] < 1 or r["height"] < 1:
                check(False, f"section {r['id']}: not laid out ({r})")
                continue
            clip = {"x": r["x"], "y": r["y"], "width": r["width"], "height": r["height"]}
            p = os.path.join(self.a.shots, f"{case}-{r['id']}.png")
            png = page.screenshot(p, clip, beyond=False)
            w, h = png_size(p)
            check(w >= 100 and h >= 20, f"{p}: {w}x{h}")
            pngs.append((r["id"], w, h, p, png))
        # a page in the background paints nothing: the decoder comes after
        decoder = b.open("about:blank")
        for sid, w, h, p, png in pngs:
            n = decoder.painted(png)
            check(n >= 200, f"{p}: {n} painted pixels: blank")
            out.append((sid, w, h, n))
        return out


# --- cases -------------------------------------------------------------------

def case_torch1(c):
    v = c.need_torch()
    print(f"torch {v}")
    t = c.path("train.gpdl")
    c.gprof("run", "-q", "--profile-memory", "-o", t, "--", c.a.python,
            os.path.join(c.a.src, "examples", "train.py"), "--steps", "200")
    c.check_report("torch1", c.report([t]), [t],
                   {"overview": "ok", "steps": "ok", "operators": "ok", "memory": "ok", "kernels": "empty",
                    "devices": "empty", "distributed": "empty"})


def case_torch2(c):
    """torch1's run under torch 2.x (--python: GPDL_TORCH2_PYTHON)."""
    v = c.need_torch()
    print(f"torch {v}")
    t = c.path("train.gpdl")
    c.gprof("run", "-q", "--profile-memory", "-o", t, "--", c.a.python,
            os.path.join(c.a.src, "examples", "train.py"), "--steps", "200")
    c.check_report("torch2", c.report([t]), [t],
                   {"overview": "ok", "steps": "ok", "operators": "ok", "memory": "ok", "distributed": "empty"})


def case_job4(c):
    c.need_torch()
    sys.path.insert(0, os.path.join(c.a.src, "tests", "dist"))
    import job_e2e
    args = types.SimpleNamespace(gprof_dl=c.gpdl, python=c.a.python, torch="1",
                                 example=os.path.join(c.a.src, "examples", "ddp_train.py"), cache_dir=c.a.cache_dir)
    j = job_e2e.Ctx(args, c.tmp)
    world, slow = 4, 2
    ranks, err = j.job(world, "--slow-rank", str(slow), "--slow-ms", "40")
    must(sorted(ranks) == list(range(world)), f"the ranks' lines: {ranks}\n{err[-2000:]}")
    files = job_e2e.rank_files(j, world)
    doc, facts = c.check_report("job4", c.report(files), files,
                                {"overview": "ok", "steps": "ok", "operators": "ok", "distributed": "ok",
                                 "kernels": "empty"})
    s = doc["summary"]["tables"]["distributed"]
    rows = s["sections"][0]["rows"]
    eq(sorted(r["rank"] for r in rows), list(range(world)), "the Distributed view's ranks")
    sentence = next((n for n in s["notes"] if n.startswith("Straggler:") or n.startswith("No straggler")), None)
    must(sentence, f"no straggler sentence in the Distributed view's notes: {s['notes']}")
    sec = next(x for x in facts["sections"] if x["id"] == "distributed")
    flat = re.sub(r"\s+", " ", sec["text"])
    check(re.sub(r"\s+", " ", sentence) in flat,
          f"the distributed section does not say the Distributed view's sentence {sentence!r}")
    bars = [ch for ch in facts["charts"] if ch["section"] == "distributed"]
    must(bars, "no chart in the distributed section")
    per_rank = [ch for ch in bars if ch["labels"] and len(ch["labels"]) == world and len(ch["datasets"]) >= 4]
    check(per_rank, f"no chart of {world} ranks' bars with 4 stacked datasets (wait and busy's parts): "
                    f"{[(ch['id'], ch['labels'], len(ch['datasets'])) for ch in bars]}")
    for ch in per_rank:
        for ds in ch["datasets"]:
            nums = [v for v in ds["data"] if isinstance(v, (int, float))]
            check(len(nums) == world, f"{ch['id']} {ds['label']!r}: {len(nums)} ranks' values, expected {world}")
    # a stack of bars is one step: wait, computation, data loading, time
    # outside operators, own communication (and contention where measured)
    # add up to the rank's step time (each dataset's values are the view's)
    for ch in per_rank:
        stacks = {}
        for ds in ch["datasets"]:
            stacks.setdefault(ds.get("stack"), []).append(ds)
        for st, dss in stacks.items():
            if len(dss) < 2:
                continue
            for i, r in enumerate(rows):
                total = sum(d["data"][i] for d in dss if isinstance(d["data"][i], (int, float)))
                check(abs(total - r["step_mean"]) <= 0.01 * r["step_mean"],
                      f"{ch['id']}: rank {r['rank']}'s stacked bar {[d['label'] for d in dss]} is {total:.3f}, "
                      f"its step {r['step_mean']:.3f} ({s['time_unit']})")
    sfacts = s["sections"][0].get("facts", {})
    eq(sfacts.get("straggler_rank"), slow, "the straggler (rank 2 computes 40 ms more a step)")
    check(sentence.startswith(f"Straggler: rank {slow} held the job back"), f"the straggler sentence: {sentence!r}")
    for ch in per_rank:  # its bar marked: the straggler's label says so, no other's
        marked = [i for i, lab in enumerate(ch["labels"]) if "straggler" in str(lab).lower()]
        want = [i for i, r in enumerate(rows) if r["rank"] == slow]
        eq(marked, want, f"{ch['id']}: the bars whose label marks the straggler ({ch['labels']})")
    print(f"job4: {sentence}")


def case_gpu(c):
    if not (c.a.fake_cupti and c.a.gpu_target):
        raise Skip("no CUPTI test double in this build (GPDL_HAVE_CUPTI and NVTX off)")
    t = c.path("gpu.gpdl")
    c.gprof("run", "-q", "-o", t, "--cupti-lib", c.a.fake_cupti, "--", c.a.gpu_target, "ops",
            env=dict(c.env, FAKE_CUPTI_SCENARIO="launches"))
    doc, facts = c.check_report("gpu", c.report([t]), [t],
                                {"overview": "ok", "operators": "ok", "kernels": "ok", "devices": "ok"})
    ker = [ch for ch in facts["charts"] if ch["section"] == "kernels"]
    dev = [ch for ch in facts["charts"] if ch["section"] == "devices"]
    check(ker and dev, f"charts: kernels {len(ker)}, devices {len(dev)}")


def case_baseline(c):
    a = c.kineto("a", 1, 20)
    b = c.kineto("b", 2, 20)
    doc, facts = c.check_report("baseline", c.report([b], "--baseline", a), [b],
                                {"overview": "ok", "diff": "ok", "kernels": "ok"}, baseline=True)
    on_diff = [n for n in facts["nums"] if (n["src"] or "").startswith("/baseline/diff/")]
    check(len(on_diff) >= 10, f"{len(on_diff)} gp-num from the diff, expected at least 10")
    check([ch for ch in facts["charts"] if ch["section"] == "diff"], "no chart in the diff section")
    # axes of bytes: ticks at 1, 2 or 5 x 10^n of one SI unit (not 1.91 MB, 488.28 kB)
    eq(facts["bytesTicks"], [["0.0 MB", "0.5 MB", "1.0 MB", "1.5 MB", "2.0 MB", "2.5 MB", "3.0 MB", "3.5 MB", "4.0 MB"],
                             ["0 kB", "100 kB", "200 kB", "300 kB", "400 kB", "500 kB", "600 kB"],
                             ["0.0 GB", "0.5 GB", "1.0 GB", "1.5 GB", "2.0 GB", "2.5 GB"],
                             ["0 B", "1 B", "2 B", "3 B", "4 B", "5 B", "6 B", "7 B"]], "gpBytesTicks' labels")
    # GPU columns 0 in every row are not shown; one nonzero anywhere (a child) keeps its column
    eq(facts["shownColumns"], ["name", "cpu_total", "gpu_ratio", "self_total"], "gpShownColumns")
    print(f"baseline: {len(on_diff)} gp-num from `gprof-dl diff`'s JSON")


def case_hostile(c):
    t = c.kineto("h", 3, 12, rename={"aten::addmm": HOSTILE[0], "aten::copy_": HOSTILE[1],
                                     "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>(Params)": HOSTILE[2]})
    html = c.report([t])
    doc, facts = c.check_report("hostile", html, [t], {"overview": "ok", "operators": "ok", "kernels": "ok"})
    with open(html, encoding="utf-8") as f:
        raw = f.read()
    for name in HOSTILE:
        check(name not in raw, f"the name {name!r} stands raw in the file")
        shown = [r["name"] for t_ in facts["tables"] for r in t_["rows"]
                 if r["name"] and shown_as(name) in r["name"]]
        check(shown, f"the name {name!r} is shown as text in no table")
    # the right-to-left override is shown, not obeyed: in no table cell or
    # chart label
    labels = [lab for ch in facts["charts"] for lab in (ch["labels"] or []) if isinstance(lab, str)]
    check(not any("\u202e" in lab for lab in labels), "a chart label holds a raw U+202E")
    check(any("\\u{202E}" in lab for lab in labels), "no chart label shows U+202E as \\u{202E}")
    check(not any("\u202e" in (r["name"] or "") for t_ in facts["tables"] for r in t_["rows"]),
          "a table cell holds a raw U+202E")
    eq(facts["imgs"], 0, "images in the page")


FIREFOX_PREFS = """user_pref("network.proxy.type", 1);
user_pref("network.proxy.http", "127.0.0.1");
user_pref("network.proxy.http_port", 9);
user_pref("network.proxy.ssl", "127.0.0.1");
user_pref("network.proxy.ssl_port", 9);
user_pref("network.proxy.allow_hijacking_localhost", true);
user_pref("network.captive-portal-service.enabled", false);
user_pref("app.update.auto", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("browser.shell.checkDefaultBrowser", false);
"""

# Added to a copy of the report for Firefox, whose headless mode gives a
# screenshot and nothing else: every error is counted (window's error event,
# before the report's scripts; gprofDlReport.errors after them), and once the
# report has drawn, two bars at the top left say what came of it, in colours
# nothing else uses: magenta 10 px wide per chart drawn (+5), cyan 10 px per
# error (+5), each 5 px high. Pixels counted exactly: 5 x (10 n + 5).
FIREFOX_PRE = ("<script>window.gpErr = []; window.addEventListener('error', function (e) "
               "{ window.gpErr.push(String(e.message)); });</script>")
FIREFOX_POST = """<script>(function () {
  function mark() {
    var R = window.gprofDlReport || {errors: ['no gprofDlReport']};
    var n = document.querySelectorAll('figure.gp-chart[data-rendered="1"]').length;
    var e = (R.errors || []).length + window.gpErr.length;
    [[0, n, 'rgb(255, 0, 255)'], [5, e, 'rgb(0, 255, 255)']].forEach(function (b) {
      var d = document.createElement('div');
      d.style.cssText = 'position:fixed;left:0;top:' + b[0] + 'px;height:5px;width:' + (10 * b[1] + 5) +
                        'px;background:' + b[2] + ';z-index:2147483647;margin:0;padding:0;border:0';
      document.body.appendChild(d);
    });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mark); else mark();
})();</script>"""


def case_damaged(c):
    """A trace cut short: the report is of what it holds up to the damage,
    and the page says where the damage is, as summary warns."""
    t = c.kineto("d", 5, 12)
    with open(t, "rb") as f:
        data = f.read()
    cut = c.path("cut.gpdl")
    with open(cut, "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    p = c.gprof("report", cut, "-o", c.path("cut.html"))
    check("damaged at offset" in text(p.stderr), f"report does not warn of the damage: {text(p.stderr)!r}")
    doc, facts = c.check_report("damaged", c.path("cut.html"), [cut], {"overview": "ok"}, shots=False)
    dmg = doc["summary"]["traces"][0]["damage"]
    must(dmg and dmg["offset"] > 0, f"the document's trace has no damage: {doc['summary']['traces'][0]}")
    want = f"damaged at offset {dmg['offset']:,}: {dmg['reason']}; read up to there"
    check(any(want in t_ for t_ in facts["traces"]), f"the page does not say {want!r}: {facts['traces']}")
    check(doc["summary"]["events"]["total"] > 0, "nothing read before the damage")
    print(f"damaged: {doc['summary']['events']['total']} events read up to offset {dmg['offset']}")


def case_firefox(c):
    """The report of case baseline in Firefox (headless: a screenshot is all
    it gives): the report's script runs with no error and draws every chart
    Chromium draws, the network off by its preferences."""
    ff = shutil.which("firefox") or shutil.which("firefox-esr")
    if not ff:
        raise Skip("no firefox")
    a = c.kineto("a", 1, 20)
    b = c.kineto("b", 2, 20)
    html = c.report([b], "--baseline", a)
    doc, facts = c.check_report("firefox-chromium", html, [b], {"diff": "ok"}, baseline=True, shots=False)
    charts = len(facts["charts"])
    with open(html, encoding="utf-8") as f:
        page = f.read()
    must(page.count("<body>") == 1 and page.count("</body>") == 1, "the report has not one <body>...</body>")
    marked = c.path("firefox.html")
    with open(marked, "w", encoding="utf-8") as f:
        f.write(page.replace("<body>", "<body>" + FIREFOX_PRE).replace("</body>", FIREFOX_POST + "</body>"))
    profile = c.path("ff-profile")
    os.makedirs(profile)
    with open(os.path.join(profile, "user.js"), "w") as f:
        f.write(FIREFOX_PREFS)
    shot = os.path.join(c.a.shots, "firefox-page.png")
    os.makedirs(c.a.shots, exist_ok=True)
    if os.path.exists(shot):
        os.remove(shot)
    env = dict(c.env, MOZ_HEADLESS="1", HOME=c.tmp)
    p = run_bounded([ff, "--headless", "--no-remote", "--profile", profile, "--screenshot", shot,
                     "--window-size=1280,4000", pathlib.Path(marked).as_uri()], env=env, timeout=90)
    must(p.returncode == 0 and os.path.exists(shot), f"firefox --screenshot: status {p.returncode}, "
         f"{text(p.stderr)[-1500:]}")
    with open(shot, "rb") as f:
        png = f.read()
    with Browser(c.a.chromium, lifetime=BROWSER_S) as br:
        dec = br.open("about:blank")
        magenta, cyan = dec.pixels(png, [[255, 0, 255], [0, 255, 255]])
        painted = dec.painted(png)
    drawn, errors = (magenta / 5 - 5) / 10, (cyan / 5 - 5) / 10
    eq(errors, 0, f"errors in Firefox (cyan pixels {cyan})")
    eq(drawn, charts, f"charts Firefox drew (magenta pixels {magenta}), against Chromium's")
    check(painted > 100000, f"Firefox painted {painted} pixels of a 1280x4000 window")
    print(f"firefox: {drawn:g} of Chromium's {charts} charts drawn, {errors:g} errors, {painted} pixels painted: "
          f"{shot}")


def case_harness(c):
    """The harness itself: a page that logs an error, throws, loads an
    image and fetches over the network has each of them caught; a quiet page
    has none; a page that never loads fails in time."""
    bad = c.path("bad.html")
    with open(bad, "w", encoding="utf-8") as f:
        f.write("<!doctype html><meta charset=utf-8><body><h1>x</h1>"
                "<img src='http://192.0.2.1/pixel.png'>"
                "<script>console.error('harness: an error');"
                "fetch('https://192.0.2.1/data.json').catch(function () {});"
                "window.gprofDlReport = {errors: []}; setTimeout(function () { null.x; }, 0);</script>")
    good = c.path("good.html")
    with open(good, "w", encoding="utf-8") as f:
        f.write("<!doctype html><meta charset=utf-8><body><p>quiet</p><script>window.gprofDlReport = {errors: []};"
                "</script>")
    hang = c.path("hang.html")
    with open(hang, "w", encoding="utf-8") as f:
        f.write("<!doctype html><script>for (;;) {}</script>")
    import time
    with Browser(c.a.chromium, lifetime=BROWSER_S) as b:
        page = b.open(pathlib.Path(bad).as_uri(), ready="window.gprofDlReport")
        page.eval("new Promise(function (ok) { setTimeout(ok, 300); })")
        got = page.problems()
        quiet = b.open(pathlib.Path(good).as_uri(), ready="window.gprofDlReport").problems()
    want = ["console.error: harness: an error", "exception: ", "request: http://192.0.2.1/pixel.png",
            "request: https://192.0.2.1/data.json"]
    for w in want:
        check(any(g.startswith(w) for g in got), f"the harness missed {w!r}: it saw {got}")
    eq(quiet, [], "problems of a quiet page")
    t0 = time.monotonic()
    try:
        with Browser(c.a.chromium, lifetime=8) as b:
            b.open(pathlib.Path(hang).as_uri(), ready="window.gprofDlReport", timeout=60)
        check(False, "a page that never loads was taken as loaded")
    except CdpError as e:
        took = time.monotonic() - t0
        check(took < 20, f"a hung page failed after {took:.1f} s, its browser's lifetime 8 s: {e}")
    print(f"harness: caught {len(got)} problems of the bad page ({'; '.join(g[:60] for g in got)}); "
          f"the quiet page none; a hung page failed in {time.monotonic() - t0:.1f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gprof-dl", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--shots", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--python", default="")
    ap.add_argument("--pydir", default="")
    ap.add_argument("--cache-dir", default="")
    ap.add_argument("--fake-cupti", default="")
    ap.add_argument("--gpu-target", default="")
    args = ap.parse_args()
    args.src = os.path.abspath(args.src)
    args.shots = os.path.abspath(args.shots)
    for a in ("fake_cupti", "gpu_target"):
        if getattr(args, a):
            setattr(args, a, os.path.abspath(getattr(args, a)))
    fn = globals().get("case_" + args.case)
    if not fn:
        print(f"unknown case {args.case}")
        return 1
    self_test()
    if FAILED:
        print("FAIL: the Python gpFormat:\n  - " + "\n  - ".join(FAILED))
        return 1
    if not (args.chromium and os.access(args.chromium, os.X_OK)):
        print(f"SKIP: no chromium ({args.chromium!r}): apt-get install chromium")
        return SKIP
    return run_case(args.case, fn, lambda tmp: Ctx(args, tmp), "gpdl-report-")


if __name__ == "__main__":
    sys.exit(main())
