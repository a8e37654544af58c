"""Exceptions raised by the verifetch client.

A lookup that ran but failed (cookie wall, 404, timeout, ...) is NOT an
exception: the broker answers with a ToolResult whose status is "error" and
whose receipt says why. Exceptions mean the request itself did not get a
ToolResult: no daemon, a refused request, or a broken answer.
"""

from __future__ import annotations


class VerifetchError(Exception):
    """Base class for every error this package raises."""


class VerifetchConnectionError(VerifetchError, ConnectionError):
    """verifetchd could not be reached on its unix socket, or hung up."""

    def __init__(self, socket_path: str, reason: str) -> None:
        self.socket_path = socket_path
        self.reason = reason
        super().__init__(f"cannot reach verifetchd at {socket_path}: {reason}")


class VerifetchRequestError(VerifetchError, ValueError):
    """verifetchd refused the request (HTTP 4xx): bad input, unknown caller.
    ``status`` is None when the client refused it before sending (not JSON).

    ``field`` names the offending request field ("" when the whole request was
    refused) and ``message`` is the broker's explanation.
    """

    def __init__(self, status: int | None, field: str, message: str) -> None:
        self.status = status
        self.field = field
        self.message = message
        where = f"{field}: " if field else ""
        if status is None:  # refused before it was sent
            super().__init__(f"invalid lookup request: {where}{message}")
        else:
            super().__init__(f"verifetchd refused the request (HTTP {status}): {where}{message}")


class VerifetchResponseError(VerifetchError):
    """verifetchd answered with something that is not a ToolResult (5xx,
    invalid JSON, oversized or truncated body)."""

    def __init__(self, status: int | None, reason: str) -> None:
        self.status = status
        self.reason = reason
        prefix = f"HTTP {status}: " if status is not None else ""
        super().__init__(f"unusable answer from verifetchd: {prefix}{reason}")


class VerifetchThrottledError(VerifetchRequestError):
    """HTTP 429: the tenant's quota (concurrent lookups or requests per
    minute) is used up. ``retry_after`` is the broker's hint in seconds."""

    def __init__(self, field: str, message: str, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(429, field, f"{message} (retry after {retry_after} s)")
        self.message = message
