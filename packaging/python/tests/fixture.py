"""A real verifetchd and a loopback origin for the client tests.

The daemon comes from $VERIFETCH_BUILD_ROOT/broker/verifetchd (meson sets it).
Everything listens on loopback or in a private temporary directory and is
stopped by the test that started it.
"""

from __future__ import annotations

import http.server
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

MARKER = "verifetch-python-client-marker"

ARTICLE = (
    "<!doctype html><html><head><title>Client test article</title></head><body>"
    "<h1>About the client</h1>"
    f"<p>This page exists so the Python client has something real to read: {MARKER}.</p>"
    "<p>It is long enough to pass the default min_chars threshold comfortably.</p>"
    "</body></html>"
)
# The seed's cookie wall, padded past min_chars so only the marker check can reject it.
WALL = (
    "<!doctype html><html><head><title>Just a moment...</title></head><body>"
    "<p>Just a moment... Enable JavaScript and cookies to continue.</p>"
    "<p>Checking your browser before accessing the site, this takes a few seconds.</p>"
    "</body></html>"
)
START_TIMEOUT_S = 15.0


class _Origin(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        pages = {"/article": ARTICLE, "/wall": WALL}
        page = pages.get(self.path)
        body = (page or "not here").encode()
        self.send_response(200 if page else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt: str, *args: object) -> None:
        pass


class Origin:
    """http.server on 127.0.0.1, an ephemeral port, in a thread."""

    def __init__(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Origin)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def verifetchd_path() -> str:
    root = os.environ.get("VERIFETCH_BUILD_ROOT")
    if not root:
        raise unittest.SkipTest("VERIFETCH_BUILD_ROOT is not set (run through meson test)")
    path = os.path.join(root, "broker", "verifetchd")
    if not os.access(path, os.X_OK):
        # Under meson the daemon must exist: a missing binary is a failure.
        raise AssertionError(f"verifetchd not built at {path}")
    return path


def _config(socket_path: str, worker: str | None, tenant_extra: str) -> str:
    worker_group = f'worker = {{ path = "{worker}"; max_concurrent = 8; }};\n' if worker else ""
    return (
        f'listen = {{ socket = "{socket_path}"; mode = 0600; }};\n'
        + worker_group
        + "tenants = (\n"
        "  { name = \"test\"; attempt_ceiling = 5; timeout_ms = 10000;\n"
        "    egress = { allow = [ \"127.0.0.1/32\" ]; any_port = true; };\n"
        "    providers = ( { name = \"direct\"; kind = \"direct\"; } );\n"
        f"    {tenant_extra} }}\n"
        ");\n"
    )


class Daemon:
    """verifetchd with a generated config, stopped with SIGTERM."""

    def __init__(self, tenant_extra: str = "") -> None:
        binary = verifetchd_path()
        self.dir = tempfile.mkdtemp(prefix="vf-py-")
        self.socket_path = os.path.join(self.dir, "vf.sock")
        worker = os.path.join(os.path.dirname(os.path.dirname(binary)), "worker", "verifetch-worker")
        self.config_path = os.path.join(self.dir, "verifetch.conf")
        with open(self.config_path, "w", encoding="utf-8") as f:
            f.write(_config(self.socket_path, worker if os.access(worker, os.X_OK) else None,
                            tenant_extra))
        # stderr goes to a file: the daemon logs every lookup and must never
        # block on a pipe nobody drains.
        self.log_path = os.path.join(self.dir, "verifetchd.log")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([binary, "--config", self.config_path],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log)
        try:
            self._wait_listening()
        except BaseException:
            self.stop()
            raise

    def _wait_listening(self) -> None:
        want = f"verifetchd: listening on unix:{self.socket_path}"
        deadline = time.monotonic() + START_TIMEOUT_S
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if ready:
                line = self.proc.stdout.readline().decode(errors="replace").strip()
                if line == want:
                    return
                if not line and self.proc.poll() is not None:
                    break
        with open(self.log_path, encoding="utf-8", errors="replace") as log:
            err = log.read()[-2000:]
        raise AssertionError(f"verifetchd did not start within {START_TIMEOUT_S} s: {err.strip()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)
