"""Capacity ramp (issue 14): at each level c = 1, 2, 4, ..., 1024, c clients
look up a 10 KiB loopback page over and over (one fresh connection per
lookup, a new URL each time so nothing is served from a cache) for
--seconds, on the unix socket of a fresh verifetchd (max_concurrent 64). A
client told 503/429 waits its Retry-After (as a well-behaved client does)
before the next try. Per level: every HTTP status, connection errors
(refused, EAGAIN, reset, no answer), 200s per second and p50/p99 latency of
the 200s, counted in the level's window (it opens once every client has
had an answer), and the daemon's CPU time (its zygote's and workers'
included) per 200: the figure this shared host's noise does not move.
The load client's own CPU (this process) and the origin's per 200 are shown
beside it: they share the host's cores with the daemon.

Targets (issue 14): 0 connection errors at every level; 200s/s at c=1024 at
least 90% of the best level's; p99 at c=64 at most 3x its p50. Exits 1 when
a target is missed.

Several builds (TAG=BUILD_DIR ...) each get their own daemon and take turns
level by level, so their figures come from the same minutes of a shared
host. Usage:
  python3 tests/bench/ramp_serving.py [--seconds 4] [--levels 1,2,...] new=build main=/work/main/build
"""
import argparse, asyncio, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

WARMUP_S = 1.0
MAX_CONCURRENT = 64
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Daemon:
    """A verifetchd of one build on its own socket, one tenant allowed to reach the origin."""

    def __init__(self, tag, build, port, workdir):
        self.tag, self.port, self.seq = tag, port, 0
        self.sock, conf = f"{workdir}/{tag}.sock", f"{workdir}/{tag}.conf"
        with open(conf, "w") as f:
            f.write(f'''listen = {{ socket = "{self.sock}"; mode = 0600; }};
worker = {{ path = "{build}/worker/verifetch-worker"; ca_file = "/etc/ssl/certs/ca-certificates.crt"; max_concurrent = {MAX_CONCURRENT}; }};
tenants = ( {{ name = "ramp"; attempt_ceiling = 1; timeout_ms = 20000; egress = {{ allow = [ "127.0.0.1/32" ]; any_port = true; }}; }} );
''')
        self.err = open(f"{workdir}/{tag}.err", "w")
        self.proc = subprocess.Popen([build + "/broker/verifetchd", "--config", conf], stdout=subprocess.PIPE,
                                     stderr=self.err, text=True)
        while "listening" not in self.proc.stdout.readline():
            if self.proc.poll() is not None:
                sys.exit(f"{tag}: verifetchd exited at start-up (see {workdir}/{tag}.err)")

    def cpu_s(self):
        """CPU seconds: the daemon's own, of the workers it exec'd and reaped, and of its live
        children (the zygote and the workers it forked and reaped)."""
        own, execd = proc_cpu_s(self.proc.pid)
        kids = sum(sum(proc_cpu_s(pid)) for pid in children(self.proc.pid))
        return (own, execd, kids)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)
        self.err.close()


def proc_cpu_s(pid):
    """(utime + stime, cutime + cstime) of pid in seconds; zeros once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            t = [int(x) / os.sysconf("SC_CLK_TCK") for x in f.read().rsplit(")", 1)[1].split()[11:15]]
    except OSError:
        return (0.0, 0.0)
    return (t[0] + t[1], t[2] + t[3])


def children(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


async def one_lookup(d):
    """(status or error name, latency ms, retry-after s)."""
    d.seq += 1
    body = json.dumps({"url": f"http://127.0.0.1:{d.port}/big?bytes=10240&r={d.tag}{d.seq}"}).encode()
    t0 = time.monotonic()
    try:
        r, w = await asyncio.wait_for(asyncio.open_unix_connection(d.sock), 30)
        w.write(b"POST /v1/lookup HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await w.drain()
        data = await asyncio.wait_for(r.read(), 60)
        w.close()
    except Exception as e:
        return type(e).__name__, (time.monotonic() - t0) * 1000, 0
    if not data.startswith(b"HTTP/"):
        return "no answer", (time.monotonic() - t0) * 1000, 0
    head = data.split(b"\r\n\r\n", 1)[0].lower()
    retry = 0
    for line in head.split(b"\r\n"):
        if line.startswith(b"retry-after:"):
            retry = int(line.split(b":", 1)[1].strip() or 0)
    return int(data.split(b" ", 2)[1]), (time.monotonic() - t0) * 1000, retry


def own_cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def level(d, c, seconds, origin_pid):
    """The window opens once every client has had its first answer (the
    opening burst is over) and WARMUP_S has passed, and lasts seconds."""
    window = {"start": None, "end": None, "cpu": (0.0, 0.0, 0.0), "side": (0.0, 0.0)}
    first = asyncio.Event()
    answered = 0
    done = []   # (status, ms) of lookups finished inside the window

    async def opener():
        await asyncio.sleep(WARMUP_S)
        await first.wait()
        window["start"], window["end"] = time.monotonic(), time.monotonic() + seconds
        window["cpu"] = d.cpu_s()
        window["side"] = (own_cpu_s(), proc_cpu_s(origin_pid)[0])
        await asyncio.sleep(seconds)
        window["cpu"] = tuple(b - a for a, b in zip(window["cpu"], d.cpu_s()))
        window["side"] = tuple(b - a for a, b in zip(window["side"], (own_cpu_s(), proc_cpu_s(origin_pid)[0])))

    async def client():
        nonlocal answered
        first_answer = True
        while window["end"] is None or time.monotonic() < window["end"]:
            status, ms, retry = await one_lookup(d)
            now = time.monotonic()
            if window["start"] is not None and now < window["end"]:
                done.append((status, ms))
            if first_answer:
                first_answer = False
                answered += 1
                if answered == c:
                    first.set()
            if retry and (window["end"] is None or now < window["end"]):
                await asyncio.sleep(retry if window["end"] is None else min(retry, window["end"] - now))

    await asyncio.gather(opener(), *[client() for _ in range(c)])
    counts = {}
    for s, _ in done:
        counts[s] = counts.get(s, 0) + 1
    ok = sorted(ms for s, ms in done if s == 200)
    return {
        "c": c, "counts": counts,
        "errors": sum(n for s, n in counts.items() if not isinstance(s, int)),
        "ok_per_s": len(ok) / seconds,
        "p50": statistics.median(ok) if ok else 0.0,
        "p99": ok[int(0.99 * (len(ok) - 1))] if ok else 0.0,
        "cpu_ms_per_ok": [1000 * x / len(ok) if ok else 0.0 for x in window["cpu"]],
        "side_ms_per_ok": [1000 * x / len(ok) if ok else 0.0 for x in window["side"]],
    }


def show(tag, r):
    other = {k: v for k, v in r["counts"].items() if k not in (200, 429, 503)}
    print(f"{tag:>6} c={r['c']:<5} 200={r['counts'].get(200, 0):<6} 429={r['counts'].get(429, 0):<5} "
          f"503={r['counts'].get(503, 0):<6} conn_errors={r['errors']:<4} ok/s={r['ok_per_s']:<7.1f} "
          f"p50={r['p50']:.0f}ms p99={r['p99']:.0f}ms cpu/200={sum(r['cpu_ms_per_ok']):.1f}ms"
          f" (broker {r['cpu_ms_per_ok'][0]:.1f} exec'd {r['cpu_ms_per_ok'][1]:.1f} zygote {r['cpu_ms_per_ok'][2]:.1f})"
          f" client {r['side_ms_per_ok'][0]:.1f} origin {r['side_ms_per_ok'][1]:.1f}"
          f"{' other=' + str(other) if other else ''}", flush=True)


def verdict(tag, results):
    peak = max(results, key=lambda r: r["ok_per_s"])
    misses = [f"c={r['c']}: {r['errors']} connection errors" for r in results if r["errors"]]
    top = next((r for r in results if r["c"] == 1024), None)
    if top and top["ok_per_s"] < 0.9 * peak["ok_per_s"]:
        misses.append(f"c=1024: {top['ok_per_s']:.1f} ok/s < 90% of the peak {peak['ok_per_s']:.1f} (c={peak['c']})")
    mid = next((r for r in results if r["c"] == 64), None)
    if mid and mid["p99"] > 3 * mid["p50"]:
        misses.append(f"c=64: p99 {mid['p99']:.0f} ms > 3x p50 {mid['p50']:.0f} ms")
    ratio = f"{top['ok_per_s'] / peak['ok_per_s']:.2f}" if top and peak["ok_per_s"] else "-"
    p99r = f"{mid['p99'] / mid['p50']:.2f}" if mid and mid["p50"] else "-"
    print(f"{tag}: peak {peak['ok_per_s']:.1f} ok/s at c={peak['c']}; c=1024/peak {ratio}; c=64 p99/p50 {p99r}; "
          + ("targets met" if not misses else "MISSED: " + "; ".join(misses)), flush=True)
    return not misses


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=4.0, help="measured seconds per level (after 1 s warm-up)")
    ap.add_argument("--levels", default=",".join(str(1 << i) for i in range(11)))
    ap.add_argument("builds", nargs="+", metavar="TAG=BUILD_DIR")
    a = ap.parse_args()
    builds = [(b.split("=", 1)[0], os.path.abspath(b.split("=", 1)[1])) for b in a.builds]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    origin = subprocess.Popen([sys.executable, SRC + "/tests/origin/origin.py", "--max-lifetime", "3600"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(origin.stdout.readline().split()[1])
    workdir = tempfile.mkdtemp(prefix="vf-ramp-")
    daemons = [Daemon(tag, build, port, workdir) for tag, build in builds]
    print(f"load average at start: {os.getloadavg()}", flush=True)
    results = {d.tag: [] for d in daemons}
    try:
        for c in [int(x) for x in a.levels.split(",")]:
            for d in daemons:   # turns, level by level
                r = asyncio.run(level(d, c, a.seconds, origin.pid))
                results[d.tag].append(r)
                show(d.tag, r)
    finally:
        for d in daemons:
            d.stop()
        origin.stdin.close()
        origin.wait(10)
    print(f"load average at end: {os.getloadavg()}", flush=True)
    ok = all([verdict(d.tag, results[d.tag]) for d in daemons])
    shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
