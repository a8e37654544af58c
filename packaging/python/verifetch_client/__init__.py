"""verifetch_client: stdlib-only client for verifetchd, the sandboxed,
verified web-lookup sidecar.

    from verifetch_client import VerifetchClient
    result = VerifetchClient().lookup("https://www.debian.org/", must_contain="Debian")
    receipt = result["content"][0]["json"]

For a Strands Agents tool use ``verifetch_client.strands_tool.verified_web_lookup``;
importing this package never imports strands.
"""

from .client import DEFAULT_TIMEOUT_S, SYSTEM_SOCKET, VerifetchClient, default_socket_path
from .errors import (VerifetchConnectionError, VerifetchError, VerifetchRequestError,
                     VerifetchResponseError, VerifetchThrottledError)

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "SYSTEM_SOCKET",
    "VerifetchClient",
    "VerifetchConnectionError",
    "VerifetchError",
    "VerifetchRequestError",
    "VerifetchResponseError",
    "VerifetchThrottledError",
    "default_socket_path",
]
__version__ = "0.1.0"
