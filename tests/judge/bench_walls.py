#!/usr/bin/env python3
"""Wall-corpus benchmark: the real verifetchd and workers judge every page of
tests/judge/corpus (manifest.json) served from a loopback origin, once at
status 200 (as a fetch API relays it) and once at the page's real status
with its real headers. Prints a confusion matrix per family and a summary:

  walls caught at 200 / at real status, family named correctly, false
  rejections of genuine pages.

Usage: bench_walls.py BUILD_DIR [--json OUT]   (python3 standard library only)
Exit 0 when measured (the numbers are the result); 2 on setup failure.
"""

import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


def load_manifest():
    return json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))["pages"]


def serve(pages):
    by_file = {p["file"]: p for p in pages}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            name, _, mode = self.path.lstrip("/").partition("?")
            page = by_file.get(name)
            if not page:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = (CORPUS / name).read_bytes()
            real = mode == "real"
            self.send_response(page["status"] if real else 200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            if real:
                for k, v in page["headers"].items():
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.path)
        self.sock = s


def call(sock, method, path, body=None, timeout=30):
    c = UnixHTTPConnection(sock, timeout)
    try:
        c.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def start_daemon(build, work):
    sock = os.path.join(work, "vf.sock")
    conf = os.path.join(work, "vf.conf")
    Path(conf).write_text(
        f'listen = {{ socket = "{sock}"; }};\n'
        'tenants = ( { name = "bench"; egress = { allow = [ "127.0.0.1/32" ]; any_port = true; }; } );\n')
    log = open(os.path.join(work, "daemon.log"), "wb")
    proc = subprocess.Popen([os.path.join(build, "broker", "verifetchd"), "--config", conf],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    for _ in range(200):
        if proc.poll() is not None:
            break
        try:
            if call(sock, "GET", "/v1/health", timeout=1)[0] == 200:
                return proc, sock
        except OSError:
            pass
        time.sleep(0.1)
    proc.kill()
    sys.exit("bench_walls: verifetchd did not start; see " + log.name)


def label(r):
    """The verdict's family; a soft 404 served with its real 404 is named by
    the status itself ("HTTP 404", no soft_404), which is the right answer."""
    if r["wall"]:
        return r["wall"]
    if r["expect"] == "soft_404" and r["detail"] in ("HTTP 404", "HTTP 410"):
        return "soft_404"
    return "ok" if r["ok"] else "other"


def judge(sock, url):
    status, raw = call(sock, "POST", "/v1/lookup", json.dumps({"url": url}).encode())
    doc = json.loads(raw)
    receipt = doc["content"][0]["json"]
    last = receipt["attempts_log"][-1] if receipt["attempts_log"] else {}
    return receipt["ok"], last.get("wall"), last.get("detail", ""), receipt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--json")
    args = ap.parse_args()
    pages = load_manifest()
    srv = serve(pages)
    port = srv.server_address[1]
    work = tempfile.mkdtemp(prefix="vfwalls.")
    proc, sock = start_daemon(args.build, work)
    rows = []
    try:
        for p in pages:
            modes = ["200", "real"] if p["expect"] != "ok" else ["200"]
            for mode in modes:
                url = f"http://127.0.0.1:{port}/{p['file']}" + ("?real" if mode == "real" else "")
                ok, wall, detail, _ = judge(sock, url)
                rows.append({"file": p["file"], "expect": p["expect"], "lang": p["lang"], "mode": mode,
                             "ok": ok, "wall": wall, "detail": detail})
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        srv.shutdown()

    for mode in ("200", "real"):
        sub = [r for r in rows if r["mode"] == mode]
        fams = sorted({r["expect"] for r in sub})
        got_labels = sorted({label(r) for r in sub})
        print(f"\n== served at {'status 200' if mode == '200' else 'real status + headers'}: rows = expected, columns = verdict")
        print(f"{'expected':<14}" + "".join(f"{g[:9]:>10}" for g in got_labels) + f"{'caught':>9}")
        for f in fams:
            fr = [r for r in sub if r["expect"] == f]
            cnt = Counter(label(r) for r in fr)
            caught = sum(1 for r in fr if (not r["ok"]) == (f != "ok"))
            print(f"{f:<14}" + "".join(f"{cnt.get(g, 0):>10}" for g in got_labels) + f"{caught:>6}/{len(fr)}")
    walls = [r for r in rows if r["expect"] != "ok"]
    content = [r for r in rows if r["expect"] == "ok"]
    print()
    for mode in ("200", "real"):
        w = [r for r in walls if r["mode"] == mode]
        caught = sum(1 for r in w if not r["ok"])
        named = sum(1 for r in w if label(r) == r["expect"])
        print(f"walls at {mode:>4}: caught {caught}/{len(w)} ({100.0 * caught / len(w):.1f}%), "
              f"family named {named}/{len(w)} ({100.0 * named / len(w):.1f}%)")
    false_rej = [r for r in content if not r["ok"]]
    print(f"genuine pages: false rejections {len(false_rej)}/{len(content)}")
    for r in [r for r in rows if (not r["ok"]) != (r["expect"] != "ok") or (r["expect"] != "ok" and label(r) != r["expect"])]:
        print(f"  miss: {r['file']} @{r['mode']}: expected {r['expect']}, got {label(r)}: {r['detail'][:120]}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
