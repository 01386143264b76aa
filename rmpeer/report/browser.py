"""Headless Chromium, driven the way a person uses the report: open it, click, read what is
shown, take a screenshot, and list every request the page made.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON
messages ended by a NUL byte on file descriptors 3 and 4), so no port is opened and no
websocket library is needed. Used by tests/report/test_report.py and for the README's screenshots."""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from rmpeer.safewrite import write_file

# Everything Chromium would do on its own on the network is off: a report must be judged on
# the requests it makes itself, and the test host may be offline.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars"]
LOCAL_SCHEMES = ("data:", "file:", "blob:", "about:", "chrome:", "devtools:")


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class BrowserError(RuntimeError):
    pass


class Browser:
    """One page of headless Chromium. Use as a context manager."""

    def __init__(self, width: int = 1440, height: int = 900, executable: str | None = None):
        exe = executable or chromium_path()
        if not exe:
            raise BrowserError("no Chromium: apt-get install chromium")
        self.profile = tempfile.mkdtemp(prefix="rmpeer-chromium-")
        to_chrome, self._w = os.pipe()
        self._r, from_chrome = os.pipe()
        # The protocol pipe must be fds 3 (commands in) and 4 (replies out) in Chromium.
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{to_chrome} 4>&{from_chrome}', "chromium", exe, *FLAGS,
             f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"],
            pass_fds=(to_chrome, from_chrome), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome)
        os.close(from_chrome)
        self._id, self._buf, self.requests = 0, b"", []
        try:
            target = self._call("Target.createTarget", url="about:blank")["targetId"]
            self._session = self._call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            for domain in ("Page.enable", "Runtime.enable", "Network.enable"):
                self._call(domain, session=True)
            self._call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                       deviceScaleFactor=1, mobile=False)
        except BaseException:
            self.close()
            raise

    # -- the protocol ----------------------------------------------------------------------
    def _recv(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium exited")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        msg = json.loads(raw)
        if msg.get("method") == "Network.requestWillBeSent":
            self.requests.append(msg["params"]["request"]["url"])
        return msg

    def _call(self, method: str, session: bool = False, timeout: float = 30, **params) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self._session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._recv(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply["result"]

    # -- what a person does ----------------------------------------------------------------
    def eval(self, expression: str, timeout: float = 30):
        """The value of a JavaScript expression (awaited when it is a promise)."""
        r = self._call("Runtime.evaluate", session=True, timeout=timeout, expression=expression,
                       awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in r:
            raise BrowserError(f"{expression[:80]}: {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r["result"].get("value")

    def open(self, url: str) -> None:
        self._call("Page.navigate", session=True, url=url)
        self.wait_for("document.readyState === 'complete'")

    def wait_for(self, condition: str, timeout: float = 30) -> None:
        """Until a JavaScript condition holds: the report renders after its load event."""
        deadline = time.monotonic() + timeout
        while not self.eval(f"!!({condition})"):
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {condition}")
            time.sleep(0.1)

    def click(self, selector: str) -> None:
        if not self.eval(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                         "if (!e) return false; e.scrollIntoView({block: 'center'}); e.click(); return true; })()"):
            raise BrowserError(f"nothing to click at {selector}")

    def text(self, selector: str = "body") -> str:
        """What is shown, as a person reads it (innerText: rendered text only)."""
        return self.eval(f"document.querySelector({json.dumps(selector)})?.innerText ?? ''")

    def screenshot(self, path) -> Path:
        data = self._call("Page.captureScreenshot", session=True, format="png")["data"]
        path = Path(path)

        write_file(path, base64.b64decode(data))
        return path

    def outside_requests(self) -> list[str]:
        """Requests the page made to anywhere but itself (data:, file:, blob: ...)."""
        return [u for u in self.requests if not u.startswith(LOCAL_SCHEMES)]

    def close(self) -> None:
        try:
            self._call("Browser.close", timeout=5)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._r, self._w):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
