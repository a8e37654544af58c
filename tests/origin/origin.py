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

import gzip
import json
import os
import select
import ssl
import time

from origin_base import EventLog, OriginServer, RouteHandler, arg_parser, guard, int_arg, serve, tls_context

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

_robots_status = [200]   # what /robots.txt answers; set by /robots-status
_robots_delay_ms = [0]   # how long /robots.txt waits before answering; set by /robots-delay

# For the robots.txt tests (tests/e2e/test_robots.c): /members is closed to
# everyone but /members/open; a crawler named StrictBot may fetch only /page.
ROBOTS_TXT = (
    "# robots.txt of the verifetch test origin\n"
    "User-agent: *\n"
    "Disallow: /members\n"
    "Allow: /members/open$\n"
    "\n"
    "User-agent: StrictBot\n"
    "Disallow: /\n"
    "Allow: /page$\n"
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

# A page that quotes a signed URL; the broker redacts the token value.
TOKEN_HTML = (
    "<html><body><h1>Download notes</h1><p>The nightly build is at "
    "https://downloads.example.com/nightly.tar.gz?token=Zq8Xw3Rt5Yu7Io9Pa1Sd "
    "and the link is valid for one day. More filler prose follows so that the "
    "page is long enough to count as usable content.</p></body></html>\n"
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

_log = EventLog()


def big_body(n):
    """n bytes of word-separated ASCII prose that never ends in whitespace."""
    unit = b"verifetch big body words "
    body = (unit * (n // len(unit) + 1))[:n]
    if n and body[-1:] == b" ":
        body = body[:-1] + b"x"
    return body


class Handler(RouteHandler):
    server_version = "verifetch-origin/1"

    def before_route(self, parsed):
        _log.write("REQ " + self.requestline)

    # --- routes -----------------------------------------------------------

    def r_page(self, q):
        self.send_body(200, "text/html; charset=utf-8", PAGE_HTML.encode())

    def r_charset(self, q):
        # The article, labelled with the charset the test names (header only).
        label = q.get("label", ["utf-8"])[0]
        self.send_body(200, "text/html; charset=" + label, PAGE_HTML.encode())

    def r_secret(self, q):
        self.send_body(200, "text/html; charset=utf-8", SECRET_HTML.encode())

    def r_interstitial(self, q):
        self.send_body(200, "text/html", INTERSTITIAL_HTML.encode())

    def r_short(self, q):
        self.send_body(200, "text/plain", b"tiny")

    def r_500(self, q):
        self.send_body(500, "text/html", b"<html><body>internal error at the origin</body></html>\n")

    def r_corpus(self, q):
        """/corpus?file=NAME[&real=1]: a page of tests/judge/corpus, at status
        200 or (real=1) at its real status with its real headers."""
        import json
        corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "judge", "corpus")
        name = q.get("file", [""])[0]
        with open(os.path.join(corpus, "manifest.json"), encoding="utf-8") as f:
            pages = {p["file"]: p for p in json.load(f)["pages"]}
        page = pages.get(name)
        if page is None:
            self.send_body(404, "text/plain", b"no such corpus page\n")
            return
        with open(os.path.join(corpus, name), "rb") as f:
            body = f.read()
        real = q.get("real", ["0"])[0] == "1"
        self.send_body(page["status"] if real else 200, "text/html; charset=utf-8", body,
                       page["headers"] if real else None)

    def r_token_page(self, q):
        self.send_body(200, "text/html; charset=utf-8", TOKEN_HTML.encode())

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

    def r_robots(self, q):
        time.sleep(_robots_delay_ms[0] / 1000.0)
        if _robots_status[0] != 200:
            self.send_body(_robots_status[0], "text/plain; charset=utf-8", b"robots.txt unavailable\n")
            return
        self.send_body(200, "text/plain; charset=utf-8", ROBOTS_TXT.encode())

    def r_robots_status(self, q):
        # /robots-status?answer=503: later /robots.txt requests answer that status
        # (the robots tests' 4xx and 5xx cases); answers the article page.
        code = int(q.get("answer", ["200"])[0])
        _robots_status[0] = code if 200 <= code <= 599 else 200
        self.send_body(200, "text/html; charset=utf-8", PAGE_HTML.encode())

    def r_robots_delay(self, q):
        # /robots-delay?ms=700&answer=503: later /robots.txt requests wait that
        # long, then answer that status (the single-flight test asks directly).
        _robots_delay_ms[0] = int_arg(q, "ms", 0, 0, MAX_SLOW_MS)
        _robots_status[0] = int_arg(q, "answer", 200, 200, 599)
        self.send_body(200, "text/plain", b"ok\n")

    def r_big(self, q):
        n = min(max(int(q.get("bytes", ["1000"])[0]), 0), MAX_BIG)
        self.send_body(200, "text/plain", big_body(n))

    def r_cache_control(self, q):
        # /cc?v=no-store: the page with that Cache-Control (lookup cache tests)
        value = q.get("v", [""])[0][:200]
        self.send_body(200, "text/html; charset=utf-8", PAGE_HTML.encode(),
                       {"Cache-Control": value} if value else None)


Handler.ROUTES = {
    "/page": Handler.r_page,
    "/charset": Handler.r_charset,
    "/secret-page": Handler.r_secret,
    "/interstitial": Handler.r_interstitial,
    "/short": Handler.r_short,
    "/500": Handler.r_500,
    "/image": Handler.r_image,
    "/corpus": Handler.r_corpus,
    "/token-page": Handler.r_token_page,
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
    "/robots.txt": Handler.r_robots,
    "/robots-status": Handler.r_robots_status,
    "/robots-delay": Handler.r_robots_delay,
    "/members/open": Handler.r_page,
    "/members/list": Handler.r_page,
}


def main():
    global _log
    args = arg_parser(__doc__).parse_args()
    guard(args.max_lifetime)
    _log = EventLog(args.log)
    server = OriginServer((args.bind, args.port), Handler, tls_context(args.tls),
                          on_connect=lambda peer: _log.write("CONNECT %s" % peer[0]))
    serve(server)


if __name__ == "__main__":
    main()
