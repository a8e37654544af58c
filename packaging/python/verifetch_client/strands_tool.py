"""The Strands Agents tool ``verified_web_lookup``, backed by verifetchd.

The tool returns the broker's ToolResult dict unchanged. Because it carries
both ``status`` and ``content``, Strands passes it through as the tool result
instead of stamping it "success", so a cookie wall reaches the model as an
error with a receipt that says why.

Only url and the pass criteria are parameters: the socket, providers, keys
and timeouts are not model-facing (the socket comes from $VERIFETCH_SOCKET or
the daemon's default path).

strands is imported here, not by ``verifetch_client``; without strands
installed ``verified_web_lookup`` is the same function, undecorated, and
still returns the ToolResult dict when called directly.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from .client import VerifetchClient

DEFAULT_MAX_ATTEMPTS = 3


def verified_web_lookup_function(
    url: str,
    must_contain: str | None = None,
    min_chars: int = 40,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> dict[str, Any]:
    """Fetch a web page through verifetch and report whether it is usable.

    The result's first content block is a JSON receipt (ok, attempts,
    provider_used, failure_reason, attempts_log); the second is the page text
    on success, or one line starting with "LOOKUP FAILED:" on failure.

    Args:
        url: Absolute http:// or https:// URL of the page to read.
        must_contain: Text the page must contain to count as usable.
        min_chars: Minimum length of the extracted page text.
        max_attempts: How many providers to try at most (clamped by policy).

    Returns:
        A ToolResult dict with "status" and "content".
    """
    return VerifetchClient().lookup(url, must_contain=must_contain, min_chars=min_chars,
                                    max_attempts=max_attempts)


def _strands_tool_decorator() -> Callable[..., Any] | None:
    try:
        strands = importlib.import_module("strands")
    except ImportError:
        return None
    return getattr(strands, "tool", None)


def _build() -> Callable[..., Any]:
    decorate = _strands_tool_decorator()
    if decorate is None:
        return verified_web_lookup_function
    return decorate(name="verified_web_lookup")(verified_web_lookup_function)


verified_web_lookup = _build()
STRANDS_AVAILABLE = verified_web_lookup is not verified_web_lookup_function

__all__ = ["DEFAULT_MAX_ATTEMPTS", "STRANDS_AVAILABLE", "verified_web_lookup",
           "verified_web_lookup_function"]
