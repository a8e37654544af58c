"""verifetchd started the way verifetch.socket starts it (LISTEN_FDS=1 on
fd 3), driven by systemd-socket-activate, which execs the daemon in place on
the first connection. Skipped where that tool is missing, or while
verifetchd does not yet link broker/socket_activation.c."""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import fixture
from verifetch_client import VerifetchClient

SO_ACCEPTCON = 0x10000  # /proc/net/unix "Flags": the socket is listening


def listening(path: str) -> bool:
    with open("/proc/net/unix", encoding="utf-8") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if len(fields) >= 8 and fields[7] == path and int(fields[3], 16) & SO_ACCEPTCON:
                return True
    return False

ACTIVATOR = shutil.which("systemd-socket-activate")
# Present in the binary only when socket_activation.o is linked in.
INTEGRATION_MARK = b"socket activation: "


def daemon_or_skip() -> str:
    if not ACTIVATOR:
        raise unittest.SkipTest("systemd-socket-activate is not installed")
    daemon = fixture.verifetchd_path()
    with open(daemon, "rb") as f:
        if INTEGRATION_MARK not in f.read():
            raise unittest.SkipTest("verifetchd is not built with socket activation yet")
    return daemon


class SocketActivated(unittest.TestCase):
    def setUp(self) -> None:
        self.daemon = daemon_or_skip()
        self.dir = tempfile.mkdtemp(prefix="vf-act-")
        self.activated = os.path.join(self.dir, "activated.sock")
        # The config names another path: the inherited socket must win.
        self.configured = os.path.join(self.dir, "configured.sock")
        self.config = os.path.join(self.dir, "verifetch.conf")
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(f'listen = {{ socket = "{self.configured}"; }};\n'
                    'tenants = ( { name = "t"; egress = { allow = [ "127.0.0.1/32" ]; any_port = true; }; } );\n')
        self.log = open(os.path.join(self.dir, "stderr"), "w+b")
        self.proc: subprocess.Popen[bytes] | None = None

    def tearDown(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def activate(self, *listen: str) -> None:
        args = [ACTIVATOR]
        for path in listen:
            args += ["-l", path]
        self.proc = subprocess.Popen(args + [self.daemon, "--config", self.config],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.log)
        deadline = time.monotonic() + 10
        while not all(os.path.exists(p) for p in listen):
            self.assertLess(time.monotonic(), deadline, "activator did not create its sockets")
            time.sleep(0.02)
        # The file appears at bind(); a connect before the activator's listen()
        # is refused. Wait for listen() without connecting (a connection would
        # start verifetchd): /proc/net/unix shows the socket as listening.
        for path in listen:
            while not listening(path):
                self.assertLess(time.monotonic(), deadline, f"activator never listened on {path}")
                time.sleep(0.02)

    def stderr_text(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def test_serves_on_the_inherited_socket_and_leaves_it_on_exit(self) -> None:
        origin = fixture.Origin()
        try:
            self.activate(self.activated)
            client = VerifetchClient(socket_path=self.activated, timeout=30)
            # The first connection is what makes the activator exec verifetchd.
            self.assertEqual(client.health()["status"], "ok")
            assert self.proc is not None and self.proc.stdout is not None
            ready, _, _ = select.select([self.proc.stdout], [], [], 10)
            self.assertTrue(ready, "verifetchd printed no listening line")
            line = self.proc.stdout.readline().decode().strip()
            # Either the documented "listening on unix:<path>" naming the
            # inherited socket, or a line that says the socket came from systemd.
            self.assertIn(line, (f"verifetchd: listening on unix:{self.activated}",
                                 "verifetchd: listening on the socket systemd passed"))
            result = client.lookup(origin.url("/article"), must_contain=fixture.MARKER)
            self.assertEqual(result["status"], "success", result)
        finally:
            origin.close()
        self.assertFalse(os.path.exists(self.configured), "the daemon bound its own socket as well")
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(timeout=20), 0, self.stderr_text())
        self.assertTrue(os.path.exists(self.activated), "an inherited socket's path belongs to systemd")

    def test_two_sockets_is_a_broken_activation(self) -> None:
        second = os.path.join(self.dir, "second.sock")
        self.activate(self.activated, second)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self.activated)  # triggers the exec
            assert self.proc is not None
            self.assertEqual(self.proc.wait(timeout=20), 1)
        self.assertIn("expected exactly 1 socket, systemd passed 2", self.stderr_text())
        self.assertFalse(os.path.exists(self.configured))


if __name__ == "__main__":
    unittest.main()
