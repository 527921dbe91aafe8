"""cdp.py - a small client of Chromium's DevTools protocol, for the report
tests: one headless browser on --remote-debugging-pipe, one page, the network
off, and a record of everything the page said or asked for.

    with Browser(chromium) as b:
        page = b.open("file:///tmp/report.html", ready="!!window.gprofDlReport")
        page.eval("document.title")
        page.screenshot("/tmp/shot.png", clip)
        page.problems()      # console errors, exceptions, log errors, requests

The pipe (Python's standard library only): the browser reads commands on its
fd 3 and writes replies and events on its fd 4, each message one JSON text
ended by a NUL byte. Every wait has a deadline, and the whole browser lives at
most `lifetime` seconds (a timer kills it), so a hung browser fails a test in
well under a minute instead of hanging ctest; it is always killed at the end.
"""
import base64
import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
    "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-default-apps", "--mute-audio",
    "--disable-extensions", "--hide-scrollbars", "--force-color-profile=srgb",
    # nothing can leave the machine even if the emulated offline mode let a
    # request through: every proxied request goes to a closed port, and
    # loopback too (<-loopback> takes it out of the implicit bypass list)
    "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
]


class CdpError(Exception):
    pass


class Browser:
    def __init__(self, chromium, lifetime=90, log=None):
        self.chromium = chromium
        self.lifetime = lifetime
        self.profile = tempfile.mkdtemp(prefix="gpdl-chromium-")
        self.log_path = log or os.path.join(self.profile, "chromium.log")
        self.proc = None
        self.next_id = 0
        self.replies = {}
        self.events = []
        self.cond = threading.Condition()
        self.closed = False
        self.killer = None
        self.expired = False

    # --- the process and the pipe ------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # the child's ends moved above 2..4 so that the dup2s below cannot
        # overwrite one with the other
        cr = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        cw = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def child():
            os.dup2(cr, 3)
            os.dup2(cw, 4)
        logf = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(
                [self.chromium, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, pass_fds=(3, 4),
                preexec_fn=child, start_new_session=True)
        finally:
            logf.close()
            os.close(cr)
            os.close(cw)
        self.wfd = to_browser_w
        self.rfd = from_browser_r
        self.killer = threading.Timer(self.lifetime, self._expire)
        self.killer.daemon = True
        self.killer.start()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _expire(self):
        # every wait ends now, not when the pipe reads end of file: a child
        # of the browser that outlives the kill (or a loaded machine slow to
        # reap it) can hold the pipe open for many more seconds
        with self.cond:
            self.expired = True
            self.closed = True
            self.cond.notify_all()
        self.kill()

    def kill(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass

    def close(self):
        if self.killer:
            self.killer.cancel()
        if self.proc and self.proc.poll() is None:
            try:  # a polite end first: it flushes nothing we need, so no wait
                self._send_raw({"id": 10**9, "method": "Browser.close"})
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        if self.proc:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for fd in ("wfd", "rfd"):
            try:
                os.close(getattr(self, fd))
            except (OSError, AttributeError):
                pass
            setattr(self, fd, -1)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self.rfd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self.cond:
                    self.closed = True
                    self.cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                try:
                    m = json.loads(msg)
                except ValueError:
                    continue
                with self.cond:
                    if "id" in m:
                        self.replies[m["id"]] = m
                    else:
                        self.events.append(m)
                    self.cond.notify_all()

    def _send_raw(self, msg):
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self.wfd, data)
            data = data[n:]

    def call(self, method, params=None, session=None, timeout=60):
        """The result of one command; CdpError on an error reply, a dead
        browser or no reply within timeout seconds."""
        self.next_id += 1
        i = self.next_id
        msg = {"id": i, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        try:
            self._send_raw(msg)
        except OSError as e:
            raise CdpError(f"{method}: cannot write to the browser: {e} ({self.tail()})")
        end = time.monotonic() + timeout
        with self.cond:
            while i not in self.replies:
                left = end - time.monotonic()
                if self.closed or left <= 0:
                    why = self._gone() if self.closed else f"no reply in {timeout} s"
                    raise CdpError(f"{method}: {why} ({self.tail()})")
                self.cond.wait(left)
            m = self.replies.pop(i)
        if "error" in m:
            raise CdpError(f"{method}: {m['error'].get('message')} {m['error'].get('data', '')}")
        return m.get("result", {})

    def wait_event(self, pred, timeout, what, start=0):
        """The first event from the start'th on (in arrival order) for which
        pred(event) holds."""
        end = time.monotonic() + timeout
        with self.cond:
            seen = start
            while True:
                for e in self.events[seen:]:
                    if pred(e):
                        return e
                seen = len(self.events)
                left = end - time.monotonic()
                if self.closed or left <= 0:
                    why = self._gone() if self.closed else f"not within {timeout} s"
                    raise CdpError(f"waiting for {what}: {why} ({self.tail()})")
                self.cond.wait(left)

    def _gone(self):
        if self.expired:
            return f"the browser was killed at the end of its lifetime of {self.lifetime} s"
        return "the browser went away"

    def tail(self):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - 600))
                return "chromium's log ends: " + f.read().decode(errors="replace").strip()[-600:]
        except OSError:
            return "no chromium log"

    # --- a page -------------------------------------------------------------

    def open(self, url, ready=None, timeout=30, width=1280, height=900):
        """A new page with the network off, navigated to url: waits for its
        load event, then (ready: a JS expression) until ready is true."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session, url)
        for m in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            page.call(m)
        page.call("Network.emulateNetworkConditions",
                  {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        page.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        mark = len(self.events)
        nav = page.call("Page.navigate", {"url": url})
        if nav.get("errorText"):
            raise CdpError(f"navigating to {url}: {nav['errorText']}")
        self.wait_event(lambda e: e.get("sessionId") == session and e.get("method") == "Page.loadEventFired",
                        timeout, f"the load event of {url}", start=mark)
        if ready:
            end = time.monotonic() + timeout
            while not page.eval(f"Boolean({ready})"):
                if time.monotonic() > end:
                    raise CdpError(f"{url}: {ready} still false {timeout} s after the load event")
                time.sleep(0.1)
        return page


class Page:
    def __init__(self, browser, session, url):
        self.b = browser
        self.session = session
        self.url = url

    def call(self, method, params=None, timeout=60):
        return self.b.call(method, params, self.session, timeout)

    def eval(self, expr, timeout=60):
        """The value of a JS expression (awaited when a promise), by value;
        CdpError when it throws."""
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True},
                      timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise CdpError(f"evaluating {expr[:120]!r}: {d.get('exception', {}).get('description') or d.get('text')}")
        return r["result"].get("value")

    def screenshot(self, path, clip, beyond=True):
        """A PNG of the page rectangle clip {x, y, width, height} (page
        coordinates; beyond the viewport too unless beyond is False);
        returns its bytes."""
        c = dict(clip, scale=1)
        r = self.call("Page.captureScreenshot", {"format": "png", "clip": c, "captureBeyondViewport": beyond},
                      timeout=30)
        data = base64.b64decode(r["data"])
        with open(path, "wb") as f:
            f.write(data)
        return data

    def painted(self, png):
        """How many pixels of a PNG (bytes) are not near-white, decoded by
        this page (an about:blank one: it is not the page under test)."""
        b64 = base64.b64encode(png).decode()
        return self.eval("""(async function () {
          var img = new Image(); img.src = 'data:image/png;base64,%s'; await img.decode();
          var c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
          var x = c.getContext('2d'); x.drawImage(img, 0, 0);
          var d = x.getImageData(0, 0, c.width, c.height).data, n = 0;
          for (var i = 0; i < d.length; i += 4) if (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240) n++;
          return n; })()""" % b64, timeout=30)

    def pixels(self, png, colors):
        """How many pixels of a PNG (bytes) have each exact [r, g, b] of
        colors, decoded by this page."""
        b64 = base64.b64encode(png).decode()
        return self.eval("""(async function (want) {
          var img = new Image(); img.src = 'data:image/png;base64,%s'; await img.decode();
          var c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
          var x = c.getContext('2d'); x.drawImage(img, 0, 0);
          var d = x.getImageData(0, 0, c.width, c.height).data, n = want.map(function () { return 0; });
          for (var i = 0; i < d.length; i += 4)
            for (var k = 0; k < want.length; k++)
              if (d[i] === want[k][0] && d[i + 1] === want[k][1] && d[i + 2] === want[k][2]) n[k]++;
          return n; })(%s)""" % (b64, json.dumps(colors)), timeout=30)

    def problems(self, allow_urls=()):
        """What the page did wrong, one line each: console errors and
        warnings, uncaught exceptions, error log entries (a failed load among
        them), and every request for a URL other than the page's own."""
        out = []
        allow = {self.url, *allow_urls}
        with self.b.cond:
            events = [e for e in self.b.events if e.get("sessionId") == self.session]
        for e in events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                out.append(f"console.{p['type']}: {args}")
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                en = p["entry"]
                out.append(f"log {en.get('source')} {en['level']}: {en.get('text')} {en.get('url', '')}".rstrip())
            elif m == "Network.requestWillBeSent":
                u = p.get("request", {}).get("url", "")
                if u not in allow:
                    out.append(f"request: {u[:200]}")
        return out
