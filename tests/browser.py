"""Headless Chromium driven over the DevTools protocol, for tests of the HTML report.

Why the protocol and not ``--dump-dom`` or ``--enable-logging``: the page has no
script of its own (its CSP forbids any), so a check inside the page is
impossible, and Chromium's stderr log mixes the page's console with the
browser's own noise (D-Bus, GPU). The protocol reports exactly what the page
did — console messages, uncaught exceptions, CSP violations and failed loads
(``Log.entryAdded``), every network request — and answers questions about the
rendered DOM (``Runtime.evaluate``) after layout and styles, then takes the
screenshot (``Page.captureScreenshot``). The websocket client is
``websocket-client``, which the kubernetes client already depends on.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websocket

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


def find_chromium() -> str | None:
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


@dataclass
class PageRun:
    """What loading one page produced."""

    errors: list[str] = field(default_factory=list)  # console errors, exceptions, CSP, failed loads
    requests: list[str] = field(default_factory=list)  # every URL the page asked for


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, width: int = 1280, height: int = 1600, timeout: float = 30.0) -> None:
        self.width, self.height, self.timeout = width, height, timeout
        self._profile = tempfile.mkdtemp(prefix="hcpscan-chromium-")
        self._ids = iter(range(1, 1_000_000))
        self.run = PageRun()

    def __enter__(self) -> Browser:
        binary = find_chromium()
        if binary is None:
            raise RuntimeError("no chromium on PATH (apt-get install chromium)")
        self._proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--no-first-run", "--remote-debugging-port=0", "--remote-allow-origins=*",
             f"--user-data-dir={self._profile}", f"--window-size={self.width},{self.height}",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            start_new_session=True)  # its helper processes in a group of their own, ended with it
        browser_url = self._wait_for_url()
        self._ws = websocket.create_connection(browser_url, timeout=self.timeout)
        target = self._call("Target.createTarget", url="about:blank")["targetId"]
        session = self._call("Target.attachToTarget", targetId=target, flatten=True)
        self._session = session["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self._call(f"{domain}.enable", session=True)
        self._call("Emulation.setDeviceMetricsOverride", session=True, width=self.width,
                   height=self.height, deviceScaleFactor=1, mobile=False)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._ws.close()
        finally:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            # Chromium's helpers (renderer, crash handler) may outlive it for a moment and go on
            # writing into the profile: the removal then failed with "Directory not empty"
            # (seen in CI). They are ended with the group, and the removal is tried again.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            for attempt in range(20):
                try:
                    shutil.rmtree(self._profile)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if attempt == 19:
                        raise
                    time.sleep(0.1)

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + self.timeout
        assert self._proc.stderr is not None
        while time.monotonic() < deadline:
            line = self._proc.stderr.readline()
            if not line and self._proc.poll() is not None:
                break
            found = _LISTENING.search(line)
            if found:
                return found.group(1)
        raise RuntimeError("chromium did not open its DevTools port")

    def _call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        self._ws.send(json.dumps(message))
        while True:
            reply = self._receive()
            if reply.get("id") == ident:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _receive(self) -> dict[str, Any]:
        reply = json.loads(self._ws.recv())
        self._record(reply.get("method", ""), reply.get("params", {}))
        return reply

    def _record(self, method: str, params: dict[str, Any]) -> None:
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.run.errors.append("console: " + " ".join(
                str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            self.run.errors.append("exception: " + str(params.get("exceptionDetails", {})))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.run.errors.append(f"{params['entry'].get('source')}: {params['entry'].get('text')}")
        elif method == "Network.requestWillBeSent":
            self.run.requests.append(params["request"]["url"])
        elif method == "Network.loadingFailed":
            self.run.errors.append(f"load failed: {params.get('errorText')}")

    def open(self, path: Path) -> PageRun:
        """Load a file and wait for its load event (and a moment for late console output)."""
        self.run = PageRun()
        self._call("Page.navigate", session=True, url=path.resolve().as_uri())
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self._receive().get("method") == "Page.loadEventFired":
                break
        else:
            raise RuntimeError(f"{path} did not finish loading")
        self.evaluate("1")  # drains the events sent before the answer
        return self.run

    def evaluate(self, expression: str) -> Any:
        result = self._call("Runtime.evaluate", session=True, expression=expression,
                            returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluation failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, out: Path) -> None:
        """The first ``width`` x ``height`` pixels of the page, as PNG."""
        data = self._call("Page.captureScreenshot", session=True, format="png")["data"]
        out.write_bytes(base64.b64decode(data))
