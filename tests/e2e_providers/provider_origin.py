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
  /echo-base64-json
              the same text as {"httpResponseBody": <base64>}, as Zyte API
              returns a page's bytes
  /leaky      an HTML article quoting credential-shaped strings next to prose
  /echo-smuggle?how=lf|1xx|chunked
              the echo with a coding hidden where only a CRLF-line reader
              misses it: gzip announced on an LF-only line, gzip in the head
              after an interim "100 Continue", or chunking (the key split
              across chunks) announced on an LF-only line
  and the paid-API fakes of paid_api_fakes.py (their POST bodies logged as
  BODY <json text>).
"""

import base64
import gzip
import json
import os
import secrets
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "origin"))
from origin_base import EventLog, OriginServer, RouteHandler, arg_parser, guard, serve, tls_context  # noqa: E402
import paid_api_fakes  # noqa: E402

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

_log = EventLog()


def echo_text(handler, nonce):
    lines = ["ECHO-NONCE " + nonce, handler.requestline]
    lines += ["%s: %s" % (k, v) for k, v in handler.headers.items()]
    return "\n".join(lines) + "\n"


class Handler(RouteHandler):
    server_version = "verifetch-provider-origin/1"
    NOT_FOUND = (404, "text/plain", b"not found\n")
    body = None   # the POST body, read by do_POST

    def before_route(self, parsed):
        """Every request is recorded; /echo* answers also record their nonce."""
        record = ["REQ " + self.requestline]
        record += ["HDR %s: %s" % (k, v) for k, v in self.headers.items()]
        record += ["QRY %s=%s" % (k, v)
                   for k, v in urllib.parse.parse_qsl(parsed.query, keep_blank_values=True)]
        if self.body is not None:
            record.append("BODY " + self.body.decode("utf-8", "replace"))
        self.nonce = None
        if parsed.path in ("/echo", "/echo-json", "/echo-gzip", "/echo-smuggle", "/echo-base64-json"):
            self.nonce = secrets.token_hex(16)
            record.append("NONCE " + self.nonce)
        _log.write(*record)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(min(n, 1 << 20))
        self.do_GET()

    def r_echo(self, q):
        self.send_body(200, "text/plain; charset=utf-8", echo_text(self, self.nonce).encode())

    def r_echo_json(self, q):
        body = json.dumps({"data": {"content": echo_text(self, self.nonce)}}).replace("/", "\\/")
        self.send_body(200, "application/json", body.encode())

    def r_echo_base64_json(self, q):
        page = base64.b64encode(echo_text(self, self.nonce).encode()).decode("ascii")
        self.send_body(200, "application/json", json.dumps({"httpResponseBody": page}).encode())

    def r_echo_gzip(self, q):
        self.send_body(200, "text/plain; charset=utf-8", gzip.compress(echo_text(self, self.nonce).encode()),
                       {"Content-Encoding": "gzip"})

    def r_echo_smuggle(self, q):
        text = echo_text(self, self.nonce).encode()
        how = q.get("how", [""])[0]
        if how == "chunked":
            body = b"".join(b"%x\r\n%s\r\n" % (len(text[i:i + 5]), text[i:i + 5])
                            for i in range(0, len(text), 5)) + b"0\r\n\r\n"
            head = b"HTTP/1.1 200 OK\r\nX-Pad: a\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
        else:
            body = gzip.compress(text)
            coded = b"Content-Encoding: gzip\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body)
            if how == "1xx":
                head = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n" + coded
            else:
                head = b"HTTP/1.1 200 OK\r\nX-Pad: a\n" + coded
        self.wfile.write(head + body)
        self.close_connection = True

    def r_leaky(self, q):
        self.send_body(200, "text/html; charset=utf-8", LEAKY_HTML.encode())


Handler.ROUTES = {
    "/echo": Handler.r_echo,
    "/echo-json": Handler.r_echo_json,
    "/echo-gzip": Handler.r_echo_gzip,
    "/echo-base64-json": Handler.r_echo_base64_json,
    "/echo-smuggle": Handler.r_echo_smuggle,
    "/leaky": Handler.r_leaky,
}
Handler.ROUTES.update(paid_api_fakes.ROUTES)


def main():
    global _log
    ap = arg_parser(__doc__, max_lifetime=120.0, log_required=True)
    ap.add_argument("--no-close-notify", action="store_true")
    args = ap.parse_args()
    guard(args.max_lifetime)
    _log = EventLog(args.log)
    server = OriginServer((args.bind, args.port), Handler, tls_context(args.tls),
                          tls_close="abrupt" if args.no_close_notify else "close_notify")
    serve(server)


if __name__ == "__main__":
    main()
