"""Capacity ramp (issue 14): c concurrent clients, one lookup of a 10 KiB loopback page each, on
the unix socket of a fresh verifetchd (max_concurrent 64). Counts every outcome: HTTP statuses,
and client-side errors (connect refused/EAGAIN, reset, no answer) that must stay at zero.
Usage: python3 tests/bench/ramp_serving.py BUILD_DIR TAG LEVELS   e.g.  build new 1,64,1024
Run it against two build dirs in the same session to compare."""
import asyncio, json, os, resource, shutil, subprocess, sys, tempfile, time, statistics
build, tag = os.path.abspath(sys.argv[1]), sys.argv[2]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
origin = subprocess.Popen([sys.executable, src + "/tests/origin/origin.py", "--max-lifetime", "600"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
port = int(origin.stdout.readline().split()[1])
d = tempfile.mkdtemp(prefix="vf-ramp-"); sock = f"{d}/{tag}.sock"; conf = f"{d}/{tag}.conf"
open(conf, "w").write(f'''listen = {{ socket = "{sock}"; mode = 0600; }};
worker = {{ path = "{build}/worker/verifetch-worker"; ca_file = "/etc/ssl/certs/ca-certificates.crt"; max_concurrent = 64; }};
tenants = ( {{ name = "ramp"; attempt_ceiling = 1; timeout_ms = 20000; egress = {{ allow = [ "127.0.0.1/32" ]; any_port = true; }}; }} );
''')
err = open(f"{d}/{tag}.err", "w")
broker = subprocess.Popen([build + "/broker/verifetchd", "--config", conf], stdout=subprocess.PIPE, stderr=err, text=True)
while "listening" not in broker.stdout.readline():
    pass
seq = 0
async def one(i):
    global seq
    seq += 1
    body = json.dumps({"url": f"http://127.0.0.1:{port}/big?bytes=10240&r={tag}{seq}"}).encode()
    t0 = time.monotonic()
    try:
        r, w = await asyncio.wait_for(asyncio.open_unix_connection(sock), 30)
        w.write(b"POST /v1/lookup HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await w.drain()
        data = await asyncio.wait_for(r.read(), 60)
        w.close()
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else "noanswer"
    except Exception as e:
        status = type(e).__name__
    return status, (time.monotonic() - t0) * 1000
async def level(c):
    t0 = time.monotonic()
    res = await asyncio.gather(*[one(i) for i in range(c)])
    secs = time.monotonic() - t0
    counts = {}
    for s, _ in res:
        counts[s] = counts.get(s, 0) + 1
    ok = sorted(ms for s, ms in res if s == 200)
    p50 = statistics.median(ok) if ok else 0
    p99 = ok[int(0.99 * (len(ok) - 1))] if ok else 0
    print(f"{tag} c={c}: {counts} ok/s={len(ok)/secs:.0f} p50={p50:.0f}ms p99={p99:.0f}ms", flush=True)
for c in [int(x) for x in sys.argv[3].split(",")]:
    asyncio.run(level(c))
broker.terminate(); broker.wait(30); origin.stdin.close(); origin.wait(10)
shutil.rmtree(d, ignore_errors=True)
