"""VerifetchClient against a real verifetchd and a loopback origin."""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
import unittest

import fixture
from verifetch_client import (VerifetchClient, VerifetchConnectionError, VerifetchError,
                              VerifetchRequestError, VerifetchThrottledError)


def raw_lookup(socket_path: str, body: dict) -> dict:
    """POST /v1/lookup without the client (HTTP/1.0, read to EOF)."""
    data = json.dumps(body).encode()
    head = (b"POST /v1/lookup HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(data)}\r\n\r\n".encode())
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(60)
        s.connect(socket_path)
        s.sendall(head + data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    reply = b"".join(chunks)
    status_line, _, rest = reply.partition(b"\r\n")
    assert b" 200 " in status_line, status_line
    return json.loads(rest.partition(b"\r\n\r\n")[2])


class ClientAgainstDaemon(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.origin = fixture.Origin()
        try:
            cls.daemon = fixture.Daemon()
        except BaseException:
            cls.origin.close()
            raise
        cls.client = VerifetchClient(socket_path=cls.daemon.socket_path, timeout=60)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()
        cls.origin.close()

    def test_success_returns_tool_result_with_receipt_and_page_text(self) -> None:
        result = self.client.lookup(self.origin.url("/article"), must_contain=fixture.MARKER)
        self.assertEqual(result["status"], "success", result)
        receipt = result["content"][0]["json"]
        self.assertEqual(receipt["schema"], "verified_web_lookup.receipt/v1")
        self.assertIs(receipt["ok"], True)
        self.assertEqual(receipt["provider_used"], "direct")
        self.assertIsNone(receipt["failure_reason"])
        self.assertEqual(receipt["attempts_log"][0]["outcome"], "ok")
        self.assertIn(fixture.MARKER, result["content"][1]["text"])
        self.assertEqual(receipt["content_chars"], len(result["content"][1]["text"]))

    def test_result_is_the_brokers_json_unchanged(self) -> None:
        url = self.origin.url("/article")
        via_client = self.client.lookup(url, must_contain="About the client", max_attempts=2)
        direct = raw_lookup(self.daemon.socket_path, {"url": url, "must_contain": "About the client",
                                                      "min_chars": 40, "max_attempts": 2})
        # The wait for a worker slot is measured per lookup, in whole milliseconds: two
        # lookups may read 0 and 1. Everything else must be the same.
        for result in (via_client, direct):
            waited = result["content"][0]["json"].pop("queue_ms")
            self.assertIsInstance(waited, int)
            self.assertGreaterEqual(waited, 0)
        self.assertEqual(via_client, direct)

    def test_interstitial_is_an_error_result_not_an_exception(self) -> None:
        result = self.client.lookup(self.origin.url("/wall"))
        self.assertEqual(result["status"], "error")
        receipt = result["content"][0]["json"]
        self.assertIs(receipt["ok"], False)
        self.assertIn(receipt["failure_reason"], ("all_providers_failed", "attempt_budget_exhausted"))
        self.assertIsNone(receipt["provider_used"])
        self.assertEqual(receipt["attempts_log"][0]["outcome"], "unusable_content")
        self.assertIn("wall bot_challenge", receipt["attempts_log"][0]["detail"])
        self.assertEqual(receipt["attempts_log"][0]["wall"], "bot_challenge")
        text = result["content"][1]["text"]
        self.assertTrue(text.startswith("LOOKUP FAILED:"), text)
        self.assertNotIn("and cookies to continue.", text, "no page text on failure")

    def test_must_contain_missing_is_unusable(self) -> None:
        result = self.client.lookup(self.origin.url("/article"), must_contain="not on the page at all")
        self.assertEqual(result["status"], "error")
        self.assertEqual(result["content"][0]["json"]["attempts_log"][0]["outcome"], "unusable_content")

    def test_http_404_is_an_http_error_attempt(self) -> None:
        result = self.client.lookup(self.origin.url("/missing"))
        self.assertEqual(result["status"], "error")
        attempt = result["content"][0]["json"]["attempts_log"][0]
        self.assertEqual(attempt["outcome"], "http_error")
        self.assertEqual(attempt["http_status"], 404)

    def test_bad_url_raises_with_the_brokers_field_and_message(self) -> None:
        with self.assertRaises(VerifetchRequestError) as caught:
            self.client.lookup("ftp://example.com/file")
        err = caught.exception
        self.assertEqual(err.status, 400)
        self.assertEqual(err.field, "url")
        self.assertIn("http", err.message)
        self.assertIn("url:", str(err))

    def test_bad_numbers_and_empty_must_contain_name_their_field(self) -> None:
        url = self.origin.url("/article")
        for kwargs, field in (({"min_chars": -1}, "min_chars"), ({"min_chars": "forty"}, "min_chars"),
                              ({"must_contain": ""}, "must_contain"),
                              ({"max_attempts": 1.5}, "max_attempts")):
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(VerifetchRequestError) as caught:
                    self.client.lookup(url, **kwargs)
                self.assertEqual(caught.exception.status, 400)
                self.assertEqual(caught.exception.field, field)

    def test_unserialisable_input_is_refused_before_sending(self) -> None:
        with self.assertRaises(VerifetchRequestError) as caught:
            self.client.lookup(object())  # type: ignore[arg-type]
        self.assertIsNone(caught.exception.status)

    def test_health_and_tool_spec(self) -> None:
        self.assertEqual(self.client.health()["status"], "ok")
        spec = json.dumps(self.client.tool_spec())
        for name in ("url", "must_contain", "min_chars", "max_attempts"):
            self.assertIn(f'"{name}"', spec)


class ClientAgainstThrottledDaemon(unittest.TestCase):
    def test_quota_exhaustion_raises_throttled_with_retry_after(self) -> None:
        origin = fixture.Origin()
        try:
            daemon = fixture.Daemon(tenant_extra="quota = { requests_per_minute = 1; };")
        except BaseException:
            origin.close()
            raise
        try:
            client = VerifetchClient(socket_path=daemon.socket_path, timeout=60)
            first = client.lookup(origin.url("/article"))
            self.assertEqual(first["status"], "success", first)
            with self.assertRaises(VerifetchThrottledError) as caught:
                client.lookup(origin.url("/article"))
            err = caught.exception
            self.assertIsInstance(err, VerifetchRequestError)
            self.assertEqual(err.status, 429)
            self.assertGreaterEqual(err.retry_after, 1)
            self.assertIn("quota", err.message)
        finally:
            daemon.stop()
            origin.close()


class ClientWithoutDaemon(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="vf-py-nod-")

    def tearDown(self) -> None:
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)

    def test_missing_socket_raises_connection_error_naming_the_path(self) -> None:
        path = os.path.join(self.dir, "absent.sock")
        with self.assertRaises(VerifetchConnectionError) as caught:
            VerifetchClient(socket_path=path).lookup("http://127.0.0.1/")
        self.assertEqual(caught.exception.socket_path, path)
        self.assertIn(path, str(caught.exception))
        self.assertIn("no such socket", str(caught.exception))
        self.assertIsInstance(caught.exception, VerifetchError)
        self.assertIsInstance(caught.exception, ConnectionError)

    def test_stale_socket_file_is_connection_refused(self) -> None:
        path = os.path.join(self.dir, "stale.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)  # bound but never listening: what a crashed daemon leaves
        s.close()
        with self.assertRaises(VerifetchConnectionError) as caught:
            VerifetchClient(socket_path=path).health()
        self.assertIn("refused", caught.exception.reason)

    def test_daemon_hanging_up_without_answer_is_connection_error(self) -> None:
        path = os.path.join(self.dir, "rude.sock")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as srv:
            srv.bind(path)
            srv.listen(1)

            def hang_up() -> None:
                conn, _ = srv.accept()
                conn.recv(65536)
                conn.close()

            t = threading.Thread(target=hang_up)
            t.start()
            with self.assertRaises(VerifetchConnectionError) as caught:
                VerifetchClient(socket_path=path, timeout=10).lookup("http://127.0.0.1/")
            t.join()
        self.assertIn("connection lost", caught.exception.reason)

    def test_squatted_socket_directory_is_refused_before_connecting(self) -> None:
        # In a world-writable directory (like /tmp) a socket directory that
        # others can write, or that is a symlink, may be an impostor's.
        os.chmod(self.dir, 0o1777)  # stands in for /tmp
        shared = os.path.join(self.dir, "verifetch-open")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        path = os.path.join(shared, "verifetch.sock")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as srv:
            srv.bind(path)
            srv.listen(1)  # an impostor that would answer
            with self.assertRaises(VerifetchConnectionError) as caught:
                VerifetchClient(socket_path=path, timeout=5).health()
        os.unlink(path)
        self.assertIn("writable by group or others", caught.exception.reason)
        os.chmod(shared, 0o700)
        link = os.path.join(self.dir, "verifetch-link")
        os.symlink(shared, link)
        with self.assertRaises(VerifetchConnectionError) as caught:
            VerifetchClient(socket_path=os.path.join(link, "verifetch.sock"), timeout=5).health()
        self.assertIn("symlink", caught.exception.reason)
        os.unlink(link)
        os.rmdir(shared)

    def test_default_socket_honours_environment(self) -> None:
        from verifetch_client import default_socket_path
        saved = os.environ.get("VERIFETCH_SOCKET")
        os.environ["VERIFETCH_SOCKET"] = "/some/where/vf.sock"
        try:
            self.assertEqual(default_socket_path(), "/some/where/vf.sock")
            self.assertEqual(VerifetchClient().socket_path, "/some/where/vf.sock")
        finally:
            if saved is None:
                del os.environ["VERIFETCH_SOCKET"]
            else:
                os.environ["VERIFETCH_SOCKET"] = saved


if __name__ == "__main__":
    unittest.main()
