#!/usr/bin/env python3
"""Loopback origin server for the verifetch end-to-end tests (stdlib only).

Usage: origin.py --port 0 [--bind ADDR] [--tls CERT KEY] [--log FILE] [--max-lifetime S]
                 [--owner TAG]

Prints "PORT <n>" on stdout once listening, then serves until stdin reaches
EOF, SIGTERM arrives, or the hard lifetime runs out, so a crashed test can
never leave it behind. With --log, every accepted connection ("CONNECT ip")
and every request ("REQ <request line>") is appended to FILE, which lets a
test prove that nothing ever connected.
"""

import argparse
import gzip
import os
import select
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARTICLE_TEXT = (
    "This is the verifetch origin article. It exists so that the end-to-end "
    "tests have a realistic page to fetch through the broker and the confined "
    "worker. The page has a heading, several paragraphs of ordinary prose, an "
    "inline script and a style sheet; neither the script nor the style may "
    "appear in the extracted text. Authentication: required. That sentence is "
    "plain prose and must survive redaction untouched. The rest of this "
    "paragraph is filler that makes the article comfortably longer than four "
    "hundred characters, which is the size of a short but genuine answer."
)

PAGE_HTML = (
    "<!DOCTYPE html>\n<html><head><title>Verifetch origin</title>\n"
    "<style>.scriptless { color: red; } /* STYLE_MARKER_7f3a */</style>\n"
    "<script>var SCRIPT_MARKER_9c2e = 'must not be extracted';</script>\n"
    "</head><body>\n<h1>Origin heading for verifetch</h1>\n"
    "<p>" + ARTICLE_TEXT + "</p>\n"
    "<p>Second paragraph: the quick brown fox jumps over the lazy dog.</p>\n"
    "</body></html>\n"
)

# A page that carries a well-known token shape; the broker must redact it.
SECRET_HTML = (
    "<html><body><h1>Leaky page</h1><p>Deploy notes for the verifetch origin "
    "article. The access key id is AKIAIOSFODNN7EXAMPLE and it should never be "
    "shown to a model. Authentication: required. More filler prose follows "
    "so that the page is long enough to count as usable content.</p></body></html>\n"
)

INTERSTITIAL_HTML = (
    "<html><head><title>Just a moment...</title></head><body>"
    "<p>Just a moment... Enable JavaScript and cookies to continue.</p>"
    "</body></html>\n"
)

JSON_BODY = (
    '{"data": {"content": "verifetch json content: the origin article served '
    'through a JSON API response, long enough to be usable."}, "meta": {"n": 1}}'
)

# 1x1 transparent PNG.
PNG_BYTES = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000"
    "000049454e44ae426082"
)

MAX_BIG = 64 * 1024 * 1024
MAX_SLOW_MS = 60_000
HANG_LIMIT_S = 60
MAX_HOPS = 50

_log_lock = threading.Lock()
_log_file = None


def log_event(line):
    if _log_file is None:
        return
    with _log_lock:
        _log_file.write(line + "\n")
        _log_file.flush()


def big_body(n):
    """n bytes of word-separated ASCII prose that never ends in whitespace."""
    unit = b"verifetch big body words "
    body = (unit * (n // len(unit) + 1))[:n]
    if n and body[-1:] == b" ":
        body = body[:-1] + b"x"
    return body


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "verifetch-origin/1"

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

    def do_HEAD(self):
        self.do_GET()

    def do_POST(self):
        self.do_GET()

    def do_GET(self):
        log_event("REQ " + self.requestline)
        parsed = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
        route = ROUTES.get(parsed.path)
        if route is None:
            self.send_body(404, "text/html", b"<html><body><h1>404 Not Found</h1></body></html>\n")
            return
        route(self, query)

    # --- routes -----------------------------------------------------------

    def r_page(self, q):
        self.send_body(200, "text/html; charset=utf-8", PAGE_HTML.encode())

    def r_secret(self, q):
        self.send_body(200, "text/html; charset=utf-8", SECRET_HTML.encode())

    def r_interstitial(self, q):
        self.send_body(200, "text/html", INTERSTITIAL_HTML.encode())

    def r_short(self, q):
        self.send_body(200, "text/plain", b"tiny")

    def r_500(self, q):
        self.send_body(500, "text/html", b"<html><body>internal error at the origin</body></html>\n")

    def r_image(self, q):
        self.send_body(200, "image/png", PNG_BYTES)

    def r_slow(self, q):
        ms = min(max(int(q.get("ms", ["1000"])[0]), 0), MAX_SLOW_MS)
        time.sleep(ms / 1000.0)
        self.r_page(q)

    def r_hang(self, q):
        # Never answer; return once the client goes away or the limit passes.
        conn = self.connection
        deadline = time.monotonic() + HANG_LIMIT_S
        while time.monotonic() < deadline:
            ready, _, _ = select.select([conn], [], [], 0.2)
            if ready:
                try:
                    if not conn.recv(1):
                        break
                except (OSError, ssl.SSLError):
                    break
        self.close_connection = True

    def r_redirect(self, q):
        target = q.get("to", ["/page"])[0]
        code = int(q.get("status", ["302"])[0])
        self.redirect(target, code if code in (301, 302, 303, 307, 308) else 302)

    def r_redirect_chain(self, q):
        n = min(max(int(q.get("n", ["1"])[0]), 0), MAX_HOPS)
        self.redirect("/page" if n <= 1 else "/redirect-chain?n=%d" % (n - 1))

    def r_redirect_loop(self, q):
        self.redirect("/redirect-loop")

    def r_gzip(self, q):
        self.send_body(200, "text/html; charset=utf-8", gzip.compress(PAGE_HTML.encode()),
                       {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"})

    def r_json(self, q):
        self.send_body(200, "application/json", JSON_BODY.encode())

    def r_echo(self, q):
        lines = [self.requestline] + ["%s: %s" % (k, v) for k, v in self.headers.items()]
        self.send_body(200, "text/plain; charset=utf-8", ("\n".join(lines) + "\n").encode())

    def r_big(self, q):
        n = min(max(int(q.get("bytes", ["1000"])[0]), 0), MAX_BIG)
        self.send_body(200, "text/plain", big_body(n))

    def r_cache_control(self, q):
        # /cc?v=no-store: the page with that Cache-Control (lookup cache tests)
        value = q.get("v", [""])[0][:200]
        self.send_body(200, "text/html; charset=utf-8", PAGE_HTML.encode(),
                       {"Cache-Control": value} if value else None)


ROUTES = {
    "/page": Handler.r_page,
    "/secret-page": Handler.r_secret,
    "/interstitial": Handler.r_interstitial,
    "/short": Handler.r_short,
    "/500": Handler.r_500,
    "/image": Handler.r_image,
    "/slow": Handler.r_slow,
    "/hang": Handler.r_hang,
    "/redirect": Handler.r_redirect,
    "/redirect-chain": Handler.r_redirect_chain,
    "/redirect-loop": Handler.r_redirect_loop,
    "/gzip": Handler.r_gzip,
    "/json": Handler.r_json,
    "/echo": Handler.r_echo,
    "/big": Handler.r_big,
    "/cc": Handler.r_cache_control,
}


class OriginServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, addr, tls_ctx):
        self.tls_ctx = tls_ctx
        super().__init__(addr, Handler)

    def get_request(self):
        sock, peer = super().get_request()
        log_event("CONNECT %s" % peer[0])
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
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        pass  # broken pipes and aborted handshakes are expected in tests


def watch_stdin():
    try:
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    os._exit(0)


def lifetime_limit(seconds):
    time.sleep(seconds)
    os._exit(3)


def main():
    global _log_file
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--log")
    ap.add_argument("--max-lifetime", type=float, default=300.0)
    ap.add_argument("--owner", help="opaque tag (the test build root) so leftovers can be told apart")
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    threading.Thread(target=lifetime_limit, args=(args.max_lifetime,), daemon=True).start()

    if args.log:
        _log_file = open(args.log, "a", encoding="utf-8")

    tls_ctx = None
    if args.tls:
        tls_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls_ctx.load_cert_chain(args.tls[0], args.tls[1])

    server = OriginServer((args.bind, args.port), tls_ctx)
    sys.stdout.write("PORT %d\n" % server.server_address[1])
    sys.stdout.flush()
    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever(poll_interval=0.2)


if __name__ == "__main__":
    main()
