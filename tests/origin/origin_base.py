"""The loopback origin server shared by the end-to-end tests (stdlib only).

One server, several route tables: tests/origin/origin.py (an ordinary site),
tests/e2e_hostile/hostile_origin.py (pages that misbehave) and
tests/e2e_providers/provider_origin.py (a recording provider endpoint) each
subclass RouteHandler with their ROUTES and call serve(). Every origin prints
"PORT <n>" once listening, then serves until stdin reaches EOF, SIGTERM
arrives, or the hard lifetime runs out, so a crashed test never leaves one
behind."""

import argparse
import os
import signal
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class EventLog:
    """Lines appended to a file, whole and in order across threads; a no-op without a path."""

    def __init__(self, path=None):
        self._lock = threading.Lock()
        self._file = open(path, "a", encoding="utf-8") if path else None

    def write(self, *lines):
        if self._file is None:
            return
        with self._lock:
            for line in lines:
                self._file.write(line + "\n")
            self._file.flush()


class RouteHandler(BaseHTTPRequestHandler):
    """Dispatches on the path to ROUTES[path](handler, query); NOT_FOUND otherwise."""

    protocol_version = "HTTP/1.1"
    ROUTES = {}
    NOT_FOUND = (404, "text/html", b"<html><body><h1>404 Not Found</h1></body></html>\n")

    def log_message(self, fmt, *args):  # keep the test output clean
        pass

    def send_body(self, code, ctype, body, extra=None):
        self.send_response(code)
        if ctype is not None:
            self.send_header("Content-Type", ctype)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def redirect(self, location, code=302):
        self.send_body(code, "text/plain", b"redirecting\n", {"Location": location})

    def before_route(self, parsed):
        """Hook for origins that record requests."""

    def do_GET(self):
        parsed = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
        self.before_route(parsed)
        route = self.ROUTES.get(parsed.path)
        try:
            if route is None:
                self.send_body(*self.NOT_FOUND)
            else:
                route(self, query)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True

    def do_HEAD(self):
        self.do_GET()

    def do_POST(self):
        self.do_GET()


def int_arg(q, name, default, lo, hi):
    """Query parameter name as an int clamped to [lo, hi]; default when absent or not a number."""
    try:
        v = int(q.get(name, [str(default)])[0])
    except ValueError:
        v = default
    return min(max(v, lo), hi)


class OriginServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, handler, tls_ctx=None, tls_close=None, on_connect=None):
        """tls_close: None leaves closing to the server; "close_notify" ends each
        TLS connection with close_notify; "abrupt" just closes the TCP connection."""
        self.tls_ctx = tls_ctx
        self.tls_close = tls_close
        self.on_connect = on_connect
        super().__init__(addr, handler)

    def get_request(self):
        sock, peer = super().get_request()
        if self.on_connect is not None:
            self.on_connect(peer)
        return sock, peer

    def finish_request(self, request, client_address):
        # TLS handshake here, in the per-connection thread, so a client that
        # never completes it cannot stall the accept loop.
        if self.tls_ctx is not None:
            request.settimeout(10)
            try:
                request = self.tls_ctx.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                return
            request.settimeout(None)
        try:
            super().finish_request(request, client_address)
        finally:
            if self.tls_ctx is not None and self.tls_close is not None:
                self.end_tls(request)

    def end_tls(self, request):
        try:
            if self.tls_close == "close_notify":
                request.settimeout(2)
                request.unwrap()
        except (OSError, ssl.SSLError, ValueError):
            pass
        finally:
            request.close()

    def handle_error(self, request, client_address):
        pass  # broken pipes, aborted transfers and handshakes are expected in tests


def arg_parser(doc, max_lifetime=300.0, log_required=False):
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--log", required=log_required)
    ap.add_argument("--max-lifetime", type=float, default=max_lifetime)
    ap.add_argument("--owner", help="opaque tag (the test build root) so leftovers can be told apart")
    return ap


def tls_context(tls):
    if not tls:
        return None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tls[0], tls[1])
    return ctx


def _watch_stdin():
    try:
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    os._exit(0)


def _lifetime_limit(seconds):
    time.sleep(seconds)
    os._exit(3)


def guard(max_lifetime):
    """Exit on SIGTERM or after max_lifetime seconds; call before anything slow."""
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    threading.Thread(target=_lifetime_limit, args=(max_lifetime,), daemon=True).start()


def serve(server, banner=()):
    """Announce the port (and banner lines), exit on stdin EOF, serve forever."""
    sys.stdout.write("".join("%s\n" % line for line in
                             ["PORT %d" % server.server_address[1]] + list(banner)))
    sys.stdout.flush()
    threading.Thread(target=_watch_stdin, daemon=True).start()
    server.serve_forever(poll_interval=0.2)
