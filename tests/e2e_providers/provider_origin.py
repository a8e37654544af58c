#!/usr/bin/env python3
"""Loopback origin for the provider end-to-end tests (stdlib only).

Usage: provider_origin.py --log FILE [--tls CERT KEY [--no-close-notify]] [--max-lifetime S]

Prints "PORT <n>" once listening; serves until stdin reaches EOF, SIGTERM, or
the lifetime runs out. Unlike tests/origin/origin.py it records what each
request carried, so a test can prove the broker injected a credential:

  REQ <request line>
  HDR <name>: <value>        every request header, as received
  QRY <name>=<value>         every query parameter, percent-decoded
  NONCE <hex>                fresh per /echo answer; it is the first body line

A TLS connection ends with close_notify, unless --no-close-notify: then the
TCP connection is just closed after the answer (Content-Length framed), as
many real servers and load balancers do.

Routes:
  /echo       text/plain: "ECHO-NONCE <hex>", the request line and all headers
  /echo-json  the same text as {"data": {"content": ...}}, every "/" written
              "\\/" as PHP's json_encode does by default
  /echo-gzip  the same text gzip-compressed, whatever Accept-Encoding said
  /leaky      an HTML article quoting credential-shaped strings next to prose
"""

import argparse
import gzip
import json
import os
import secrets
import signal
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LEAKY_HTML = (
    "<html><head><title>Leaky deploy notes</title></head><body>"
    "<h1>Deploy notes</h1>"
    "<p>Authentication: required. Call the billing API as "
    "https://billing.example/v1/charges?api_key=sk_live_abcdef1234567890&amp;limit=5 "
    "and send the header Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456 "
    "with every request. The rest of this paragraph is ordinary prose about the "
    "deployment, long enough to count as a usable page.</p>"
    "</body></html>\n"
)

_log_lock = threading.Lock()
_log_file = None


def log_lines(lines):
    with _log_lock:
        for line in lines:
            _log_file.write(line + "\n")
        _log_file.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "verifetch-provider-origin/1"

    def log_message(self, fmt, *args):
        pass

    def send_body(self, code, ctype, body, encoding=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parsed = urllib.parse.urlsplit(self.path)
        record = ["REQ " + self.requestline]
        record += ["HDR %s: %s" % (k, v) for k, v in self.headers.items()]
        record += ["QRY %s=%s" % (k, v)
                   for k, v in urllib.parse.parse_qsl(parsed.query, keep_blank_values=True)]
        if parsed.path in ("/echo", "/echo-json", "/echo-gzip"):
            nonce = secrets.token_hex(16)
            record.append("NONCE " + nonce)
            log_lines(record)
            lines = ["ECHO-NONCE " + nonce, self.requestline]
            lines += ["%s: %s" % (k, v) for k, v in self.headers.items()]
            text = "\n".join(lines) + "\n"
            if parsed.path == "/echo-json":
                body = json.dumps({"data": {"content": text}}).replace("/", "\\/")
                self.send_body(200, "application/json", body.encode())
            elif parsed.path == "/echo-gzip":
                self.send_body(200, "text/plain; charset=utf-8", gzip.compress(text.encode()), "gzip")
            else:
                self.send_body(200, "text/plain; charset=utf-8", text.encode())
        elif parsed.path == "/leaky":
            log_lines(record)
            self.send_body(200, "text/html; charset=utf-8", LEAKY_HTML.encode())
        else:
            log_lines(record)
            self.send_body(404, "text/plain", b"not found\n")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, tls_ctx, close_notify):
        self.tls_ctx = tls_ctx
        self.close_notify = close_notify
        super().__init__(addr, Handler)

    def finish_request(self, request, client_address):
        # Handshake in the connection's thread: a stuck client cannot stall accept.
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
            if self.tls_ctx is not None:
                self.end_tls(request)

    def end_tls(self, request):
        try:
            if self.close_notify:
                request.settimeout(2)
                request.unwrap()
        except (OSError, ssl.SSLError, ValueError):
            pass
        finally:
            request.close()

    def handle_error(self, request, client_address):
        pass


def exit_on_stdin_eof():
    try:
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    os._exit(0)


def exit_after(seconds):
    time.sleep(seconds)
    os._exit(3)


def main():
    global _log_file
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--no-close-notify", action="store_true")
    ap.add_argument("--max-lifetime", type=float, default=120.0)
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    threading.Thread(target=exit_after, args=(args.max_lifetime,), daemon=True).start()
    _log_file = open(args.log, "a", encoding="utf-8")

    tls_ctx = None
    if args.tls:
        tls_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls_ctx.load_cert_chain(args.tls[0], args.tls[1])

    server = Server(("127.0.0.1", 0), tls_ctx, not args.no_close_notify)
    sys.stdout.write("PORT %d\n" % server.server_address[1])
    sys.stdout.flush()
    threading.Thread(target=exit_on_stdin_eof, daemon=True).start()
    server.serve_forever(poll_interval=0.2)


if __name__ == "__main__":
    main()
