#!/usr/bin/env python3
"""Extraction benchmark: quality, CPU and worker memory of the HTML text stage.

Usage: bench_extract.py BUILD [--baseline-build DIR] [--kit DIR] [--rounds N]
                        [--pages N] [--no-kit] [--json OUT]

1. Quality: the article-extraction kit (KIT/run.sh, default shared/bench/article-
   extraction beside the checkout or its parent) in text mode against BUILD, and
   against --baseline-build when given; prints the kit's line plus the
   median of the per-page F1.
2. Cost per page: the real worker binary (under its real confinement) is run
   once per page by BUILD/tests/bench/verifetch-bench-worker-rss, which
   reaps it with wait4(): CPU = the worker's user+system time, peak = its
   ru_maxrss. Pages: --pages kit pages spread over the size range, plus
   synthetic article pages of 1 KiB (the idle floor), 1 MiB and 8 MiB, all
   served by a loopback origin in this process. Contenders:
     main   BUILD's worker, text of the main content (the default request)
     page   BUILD's worker, text of the whole pruned page (extract=page: the
            same parse and render without the main-content pick), the
            same-run baseline
     base   --baseline-build's worker, main content (when given)
   Rounds are interleaved: every round runs every page, the contenders in an
   order rotated by round and page. Figures are medians over rounds, then
   medians (or sums) over pages.

Memory is reported as peak RSS, as peak RSS / page size, and as (peak -
peak on the 1 KiB page) / page size: what the page itself costs on top of
the worker's libraries.

Python 3 standard library only. Exit 0 measured, 2 setup failure.
"""

import argparse
import gzip
import http.server
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
RENDER_TEXT, RENDER_PAGE = 1, 2
MAX_BODY = 16 << 20
SYNTHETIC = (("syn-1k", 1 << 10), ("syn-1m", 1 << 20), ("syn-8m", 8 << 20))


def synthetic_page(size, seed=7):
    """Navigation, an article of paragraphs (inline links and emphasis,
    a heading, list and table every twentieth block), related links, footer."""
    rnd = random.Random(seed)
    words = ("the council said work took longer than planned cost more budgeted and left "
             "neighbourhood without its usual route for most of summer engineers replaced "
             "cables deck lighting traffic expected return normal within week").split()
    head = ('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Long article'
            '</title></head><body><header><nav><ul>'
            + "".join(f'<li><a href="/s{i}">Section {i}</a></li>' for i in range(30))
            + '</ul></nav></header><div class="layout"><article class="story"><h1>Long article</h1>')
    tail = ('</article><aside class="related"><ul>'
            + "".join(f'<li><a href="/r{i}">Related story {i}</a></li>' for i in range(20))
            + '</ul></aside></div><footer>Copyright</footer></body></html>')
    out, n, i = [head], len(head) + len(tail), 0
    while n < size:
        if i % 20 == 19:
            block = (f"<h2>Part {i}</h2><ul>"
                     + "".join(f"<li>Item {j} of part {i} with some words</li>" for j in range(5))
                     + "</ul><table><tr><th>Year</th><th>Cost</th></tr>"
                     + "".join(f"<tr><td>{2000 + j}</td><td>{j * 17}</td></tr>" for j in range(4))
                     + "</table>\n")
        else:
            w = [rnd.choice(words) for _ in range(rnd.randint(40, 90))]
            k = rnd.randint(5, len(w) - 5)
            w[k] = f'<a href="/story/{i}">{w[k]}</a>'
            w[k - 3] = f"<em>{w[k - 3]}</em>"
            block = f"<p>Paragraph {i}: {' '.join(w).capitalize()}.</p>\n"
        out.append(block)
        n += len(block)
        i += 1
    out.append(tail)
    body = "".join(out).encode()
    return body[:size]


def serve(directory):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(directory), **kw)

        def guess_type(self, path):
            return "text/html; charset=utf-8"

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def run_kit(kit, build, out_dir, tag):
    env = dict(os.environ, OUT=str(out_dir / f"aeb-{tag}.json"))
    p = subprocess.run(["bash", str(kit / "run.sh"), str(build), '{"format":"text"}'],
                       capture_output=True, text=True, env=env, timeout=900)
    line = next((l for l in p.stdout.splitlines()[::-1] if l.startswith("aeb:")), None)
    if line is None:
        sys.exit(f"kit run failed for {build}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    pages = [json.loads(l) for l in open(out_dir / f"aeb-{tag}.pages.jsonl")]
    fig = dict(zip(line.split()[1::2], line.split()[2::2]))
    fig["median_page_f1"] = round(statistics.median(p["f1"] for p in pages), 4)
    return line, fig


def measure(launcher, worker, port, name, render):
    p = subprocess.run([str(launcher), str(worker), f"http://127.0.0.1:{port}/{name}",
                        "127.0.0.1", str(port), str(MAX_BODY), "-", str(render)],
                       capture_output=True, text=True, timeout=60)
    kv = dict(re.findall(r"(\w+)=(\S+)", p.stdout))
    if p.returncode != 0 or kv.get("status") != "200":
        raise RuntimeError(f"{name}: {p.stdout.strip()} {p.stderr.strip()}")
    return int(kv["cpu_us"]), int(kv["maxrss_kib"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--baseline-build")
    ap.add_argument("--kit", default=next((str(d / "shared/bench/article-extraction") for d in
                                           (ROOT.parent, ROOT.parent.parent)
                                           if (d / "shared/bench/article-extraction").is_dir()),
                                          "../shared/bench/article-extraction"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pages", type=int, default=60, help="kit pages to time (0: all)")
    ap.add_argument("--no-kit", action="store_true", help="skip the quality runs")
    ap.add_argument("--json")
    a = ap.parse_args()
    build = Path(a.build).resolve()
    kit = Path(a.kit).resolve()
    launcher = build / "tests/bench/verifetch-bench-worker-rss"
    contenders = [("main", build / "worker/verifetch-worker", RENDER_TEXT),
                  ("page", build / "worker/verifetch-worker", RENDER_TEXT | RENDER_PAGE)]
    if a.baseline_build:
        contenders.append(("base", Path(a.baseline_build).resolve() / "worker/verifetch-worker",
                           RENDER_TEXT))
    for path in [launcher] + [c[1] for c in contenders]:
        if not path.exists():
            sys.exit(f"missing {path} (build it first)")
    report = {"rounds": a.rounds}

    with tempfile.TemporaryDirectory(prefix="vf-bench-extract-") as tmp:
        tmp = Path(tmp)
        if not a.no_kit:
            builds = [("build", build)] + ([("baseline", Path(a.baseline_build).resolve())]
                                           if a.baseline_build else [])
            report["kit"] = {}
            for tag, b in builds:
                line, fig = run_kit(kit, b, tmp, tag)
                report["kit"][tag] = fig
                print(f"quality {tag:8} {line}  median_page_F1 {fig['median_page_f1']}")

        pages_dir = tmp / "pages"
        pages_dir.mkdir()
        kit_files = sorted((kit / "data" / "html").glob("*.html.gz"))
        if not kit_files:
            sys.exit(f"no kit pages under {kit}/data/html (use --kit)")
        sizes = {}
        for f in kit_files:
            body = gzip.decompress(f.read_bytes())
            name = f.name[:-3]
            (pages_dir / name).write_bytes(body)
            sizes[name] = len(body)
        by_size = sorted(sizes, key=sizes.get)
        if a.pages and a.pages < len(by_size):
            step = len(by_size) / a.pages
            by_size = [by_size[int(i * step)] for i in range(a.pages)]
        for name, size in SYNTHETIC:
            (pages_dir / f"{name}.html").write_bytes(synthetic_page(size))
            sizes[f"{name}.html"] = size
        names = by_size + [f"{n}.html" for n, _ in SYNTHETIC]
        srv = serve(pages_dir)
        port = srv.server_address[1]
        samples = {c[0]: {n: [] for n in names} for c in contenders}
        try:
            for r in range(a.rounds):
                for i, name in enumerate(names):
                    k = (r + i) % len(contenders)
                    for tag, worker, render in contenders[k:] + contenders[:k]:
                        samples[tag][name].append(measure(launcher, worker, port, name, render))
                print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
        finally:
            srv.shutdown()

    def med(tag, name, i):
        return statistics.median(s[i] for s in samples[tag][name])

    kit_names = [n for n in names if not n.startswith("syn-")]
    kit_mib = sum(sizes[n] for n in kit_names) / (1 << 20)
    report["pages_timed"] = len(kit_names)
    report["kit_page_bytes_median"] = statistics.median(sizes[n] for n in kit_names)
    print(f"\ncost per page: {len(kit_names)} kit pages (median {report['kit_page_bytes_median'] / 1024:.0f} KiB),"
          f" {a.rounds} interleaved rounds, medians")
    print(f"{'':6} {'cpu ms/page':>12} {'idle ms':>8} {'(cpu-idle) ms/MiB':>18} {'peak MiB':>9}"
          f" {'1 MiB: cpu ms':>14} {'peak MiB':>9} {'8 MiB: cpu ms':>14} {'peak MiB':>9}"
          f" {'peak/size':>10} {'(peak-idle)/size':>17}")
    report["contenders"] = {}
    idle = {}
    for tag, _, _ in contenders:
        cpu = [med(tag, n, 0) / 1000 for n in kit_names]
        peak = [med(tag, n, 1) / 1024 for n in kit_names]
        idle[tag] = med(tag, "syn-1k.html", 1) / 1024
        idle_cpu = med(tag, "syn-1k.html", 0) / 1000  # exec, confinement, fetch of 1 KiB
        fig = {
            "cpu_ms_per_page_median": round(statistics.median(cpu), 2),
            "idle_cpu_ms": round(idle_cpu, 2),
            "cpu_ms_per_mib": round(sum(cpu) / kit_mib, 1),
            "cpu_ms_per_mib_over_idle": round(sum(c - idle_cpu for c in cpu) / kit_mib, 1),
            "peak_mib_median": round(statistics.median(peak), 1),
            "idle_peak_mib": round(idle[tag], 1),
        }
        for n, size in SYNTHETIC[1:]:
            p = med(tag, f"{n}.html", 1) / 1024
            fig[n] = {"cpu_ms": round(med(tag, f"{n}.html", 0) / 1000, 1), "peak_mib": round(p, 1),
                      "peak_over_size": round(p / (size / (1 << 20)), 2),
                      "page_cost_over_size": round((p - idle[tag]) / (size / (1 << 20)), 2)}
        report["contenders"][tag] = fig
        m1, m8 = fig["syn-1m"], fig["syn-8m"]
        print(f"{tag:6} {fig['cpu_ms_per_page_median']:12.2f} {fig['idle_cpu_ms']:8.2f}"
              f" {fig['cpu_ms_per_mib_over_idle']:18.1f}"
              f" {fig['peak_mib_median']:9.1f} {m1['cpu_ms']:14.1f} {m1['peak_mib']:9.1f}"
              f" {m8['cpu_ms']:14.1f} {m8['peak_mib']:9.1f} {m8['peak_over_size']:10.2f}"
              f" {m8['page_cost_over_size']:17.2f}")
    c = report["contenders"]
    for other in [t for t in c if t != "main"]:
        ratio = c["main"]["cpu_ms_per_mib_over_idle"] / c[other]["cpu_ms_per_mib_over_idle"]
        r8 = c["main"]["syn-8m"]["cpu_ms"] / c[other]["syn-8m"]["cpu_ms"]
        report[f"main_over_{other}_cpu"] = round(ratio, 3)
        print(f"main/{other}: CPU above idle per MiB of kit pages x{ratio:.2f}, 8 MiB page x{r8:.2f}")
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
