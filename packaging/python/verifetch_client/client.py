"""HTTP/1.1 + JSON client for verifetchd's unix-socket API (stdlib only)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import stat
from typing import Any

from .errors import (VerifetchConnectionError, VerifetchRequestError, VerifetchResponseError,
                     VerifetchThrottledError)

SYSTEM_SOCKET = "/run/verifetch/verifetch.sock"
# sun_path holds 108 bytes including the terminating NUL.
_SUN_PATH_MAX = 107
# Same cap as the verifetch CLI: a ToolResult carries at most one page of text.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
# A lookup may try several providers, each with its own timeout (15 s by
# default) plus redirects; the client must outwait the broker, not race it.
DEFAULT_TIMEOUT_S = 180.0


def _per_user_socket() -> str:
    uid = os.geteuid()
    if uid == 0:
        return SYSTEM_SOCKET
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        path = runtime.rstrip("/") + "/verifetch.sock"
        if len(os.fsencode(path)) <= _SUN_PATH_MAX:
            return path
    return f"/tmp/verifetch-{uid}/verifetch.sock"


def default_socket_path() -> str:
    """Where verifetchd listens when nobody said otherwise.

    $VERIFETCH_SOCKET wins. Otherwise the daemon's own default for this user
    (as verifetchd computes it); when that socket does not exist but the
    system one (systemd unit, sidecar volume) does, the system one.
    """
    explicit = os.environ.get("VERIFETCH_SOCKET")
    if explicit:
        return explicit
    mine = _per_user_socket()
    if not os.path.exists(mine) and os.path.exists(SYSTEM_SOCKET):
        return SYSTEM_SOCKET
    return mine


def socket_dir_problem(socket_path: str) -> str | None:
    """Why connecting to socket_path could reach an impostor, or None.

    The same rule as verifetchd and the CLI (policy/socket_dir.c): when the
    socket's directory sits in a world-writable directory such as /tmp,
    anyone could have created it first, so it must be a real directory (not
    a symlink) owned by us or root and not writable by group or others; a
    socket placed right in such a directory must be owned by us or root.
    """
    path = os.path.abspath(socket_path)
    directory = os.path.dirname(path)
    parent = os.path.dirname(directory)
    me = os.geteuid()

    def world_writable(p: str) -> bool:
        try:
            return bool(os.stat(p).st_mode & stat.S_IWOTH)
        except OSError:
            return False

    if not world_writable(parent):
        if world_writable(directory):
            try:
                st = os.lstat(path)
            except OSError:
                return None
            if st.st_uid not in (me, 0):
                return f"socket {path} is owned by uid {st.st_uid}, not {me}; refusing it"
        return None
    try:
        lst = os.lstat(directory)
    except OSError as exc:
        return f"socket directory {directory}: {exc.strerror}"
    if stat.S_ISLNK(lst.st_mode):
        return f"socket directory {directory} is a symlink; refusing it (another user may own it)"
    if not stat.S_ISDIR(lst.st_mode):
        return f"socket directory {directory} is not a directory"
    if lst.st_uid not in (me, 0):
        return f"socket directory {directory} is owned by uid {lst.st_uid}, not {me}; refusing it"
    if lst.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"socket directory {directory} is writable by group or others "
                f"(mode {lst.st_mode & 0o777:03o}); refusing it")
    return None


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTPConnection whose transport is a unix stream socket."""

    def __init__(self, socket_path: str, timeout: float) -> None:
        # The host only fills the Host header; the broker ignores it.
        super().__init__("localhost", timeout=timeout)
        self.socket_path = socket_path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.socket_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def _connect_reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such socket (is verifetchd running? set VERIFETCH_SOCKET or socket_path)"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused (stale socket file; verifetchd is not running)"
    if isinstance(exc, PermissionError):
        return "permission denied (the caller needs write access to the socket, e.g. its group)"
    if isinstance(exc, TimeoutError):
        return "timed out connecting"
    return exc.strerror or str(exc)


class VerifetchClient:
    """A connection-per-call client; safe to share between threads."""

    def __init__(self, socket_path: str | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.socket_path = socket_path if socket_path is not None else default_socket_path()
        self.timeout = timeout

    def lookup(
        self,
        url: str,
        must_contain: str | None = None,
        min_chars: int = 40,
        max_attempts: int | None = None,
    ) -> dict[str, Any]:
        """POST /v1/lookup. Returns the broker's ToolResult dict unchanged:
        {"status": "success"|"error", "content": [{"json": receipt}, {"text": ...}]}.

        A failed lookup is a ToolResult with status "error", not an exception.
        Raises VerifetchRequestError on HTTP 4xx (bad input: the broker names
        the field), its subclass VerifetchThrottledError on 429 (quota; with
        the broker's retry_after), VerifetchConnectionError when the daemon
        is unreachable, VerifetchResponseError when the answer is not a
        ToolResult.
        """
        body: dict[str, Any] = {"url": url, "min_chars": min_chars}
        if must_contain is not None:
            body["must_contain"] = must_contain
        if max_attempts is not None:
            body["max_attempts"] = max_attempts
        result = self._call("POST", "/v1/lookup", body)
        if not _is_tool_result(result):
            raise VerifetchResponseError(200, "the answer is JSON but not a ToolResult")
        return result

    def health(self) -> dict[str, Any]:
        """GET /v1/health: {"status": "ok", "confinement": {layer: bool, ...}}."""
        return self._call("GET", "/v1/health", None)

    def tool_spec(self) -> dict[str, Any]:
        """GET /v1/tool-spec: the model-facing input schema."""
        return self._call("GET", "/v1/tool-spec", None)

    def _call(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        try:
            data = None if body is None else json.dumps(body).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise VerifetchRequestError(None, "", f"request is not JSON-serialisable: {exc}") from exc
        problem = socket_dir_problem(self.socket_path)
        if problem:
            raise VerifetchConnectionError(self.socket_path, f"not connecting: {problem}")
        conn = _UnixHTTPConnection(self.socket_path, self.timeout)
        try:
            try:
                conn.connect()
            except OSError as exc:
                raise VerifetchConnectionError(self.socket_path, _connect_reason(exc)) from exc
            status, raw = self._exchange(conn, method, path, data)
        finally:
            conn.close()
        return _decode(status, raw)

    def _exchange(self, conn: _UnixHTTPConnection, method: str, path: str,
                  data: bytes | None) -> tuple[int, bytes]:
        headers = {"Accept": "application/json", "Connection": "close"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read(MAX_RESPONSE_BYTES + 1)
        except TimeoutError as exc:
            raise VerifetchConnectionError(
                self.socket_path, f"no answer within {self.timeout:g} s") from exc
        except (ConnectionError, http.client.RemoteDisconnected) as exc:
            raise VerifetchConnectionError(
                self.socket_path, f"connection lost before the answer: {exc}") from exc
        except http.client.HTTPException as exc:
            raise VerifetchResponseError(None, f"malformed HTTP: {type(exc).__name__}: {exc}") from exc
        if len(raw) > MAX_RESPONSE_BYTES:
            raise VerifetchResponseError(response.status, f"answer is larger than {MAX_RESPONSE_BYTES} bytes")
        return response.status, raw


def _is_tool_result(doc: Any) -> bool:
    return (isinstance(doc, dict) and doc.get("status") in ("success", "error")
            and isinstance(doc.get("content"), list))


def _decode(status: int, raw: bytes) -> Any:
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        doc = None
    if 400 <= status < 500:
        error = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(error, dict):
            field = error.get("field") if isinstance(error.get("field"), str) else ""
            message = error.get("message") if isinstance(error.get("message"), str) else "no message"
        else:
            field, message = "", raw[:200].decode("utf-8", "replace") or "no message"
        if status == 429:
            hint = error.get("retry_after") if isinstance(error, dict) else None
            retry_after = hint if isinstance(hint, int) and not isinstance(hint, bool) and hint > 0 else 1
            raise VerifetchThrottledError(field, message, retry_after)
        raise VerifetchRequestError(status, field, message)
    if status != 200:
        raise VerifetchResponseError(status, raw[:200].decode("utf-8", "replace") or "empty body")
    if doc is None:
        raise VerifetchResponseError(status, "the answer is not valid UTF-8 JSON")
    return doc
