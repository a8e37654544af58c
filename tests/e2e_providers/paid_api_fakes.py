"""Loopback fakes of paid fetch APIs, mounted by provider_origin.py.

Each fake checks the request the way the real API would reject a wrong one
(method, JSON body shape, where the key travels) and answers in that API's
response shape, so the example configs in packaging/examples/providers/ are
tested against the shapes they claim:

  POST /firecrawl/v1/scrape   Firecrawl v1: {url, formats:[..."markdown"...]}, Bearer key
                              -> {success, data: {markdown, metadata: {title, sourceURL, ...}}}
  POST /tavily/extract        Tavily: {urls: str | [str]}, Bearer key
                              -> {results: [{url, raw_content}], failed_results, response_time}
  POST /jina/                 Jina Reader: {url}, Bearer key, Accept: application/json
                              -> {code, status, data: {title, url, content}}
  GET  /scrapingbee/api/v1/   ScrapingBee: ?api_key=&url=, -> the page as text/html
  POST /zyte/v1/extract       Zyte API: {url, httpResponseBody: true | browserHtml: true},
  POST /zyte-browser/v1/extract   HTTP Basic with the key as user name and an empty password
                              -> {url, statusCode, httpResponseBody: base64 | browserHtml: html}

A target URL containing "echo-key" makes the answer quote the credential the
fake received, so a test can prove the broker masks it. Wrong requests get
the API's error status (400 bad body, 401 no key), which the broker reports
as a failed attempt.
"""

import base64
import binascii
import json
import urllib.parse

ARTICLE = (
    "The harbour town keeps its lighthouse lit through the winter months, and the "
    "keepers write a short log of every ship that passes the northern rocks. "
    "This page was produced by the %s fake for %s, so a test can tell which "
    "provider answered and for which target."
)


def article(api, url):
    return "# Harbour notes\n\n" + ARTICLE % (api, url) + "\n\nSecond paragraph: the log is read aloud each spring.\n"


def _bearer(h):
    auth = h.headers.get("Authorization", "")
    return auth[len("Bearer "):] if auth.startswith("Bearer ") and len(auth) > 8 else None


def _json_body(h):
    if h.command != "POST" or not h.headers.get("Content-Type", "").startswith("application/json"):
        return None
    try:
        return json.loads(h.body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None


def _reply(h, code, obj):
    h.send_body(code, "application/json", json.dumps(obj).encode())


def _content(h, api, url, key):
    text = article(api, url)
    if "echo-key" in url:
        text += "\nDebug: the request carried credential %s here.\n" % key
    return text


def firecrawl(h, q):
    key, body = _bearer(h), _json_body(h)
    if key is None:
        return _reply(h, 401, {"success": False, "error": "Unauthorized: Invalid token"})
    if (not isinstance(body, dict) or not isinstance(body.get("url"), str)
            or "markdown" not in body.get("formats", [])
            or not isinstance(body.get("timeout", 30000), int)):
        return _reply(h, 400, {"success": False, "error": "Bad Request"})
    url = body["url"]
    _reply(h, 200, {"success": True, "data": {
        "markdown": _content(h, "firecrawl", url, key),
        "metadata": {"title": "Harbour notes", "description": "A harbour log", "language": "en",
                     "sourceURL": url, "statusCode": 200}}})


def tavily(h, q):
    key, body = _bearer(h), _json_body(h)
    if key is None:
        return _reply(h, 401, {"detail": {"error": "Unauthorized: missing or invalid API key."}})
    urls = body.get("urls") if isinstance(body, dict) else None
    if isinstance(urls, str):
        urls = [urls]
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        return _reply(h, 400, {"detail": {"error": "urls is required"}})
    ok = [u for u in urls if "fail-extract" not in u]
    _reply(h, 200, {"results": [{"url": u, "raw_content": _content(h, "tavily", u, key), "images": []}
                                for u in ok],
                    "failed_results": [{"url": u, "error": "Failed to fetch url"}
                                       for u in urls if u not in ok],
                    "response_time": 0.42})


def jina(h, q):
    key, body = _bearer(h), _json_body(h)
    if key is None:
        return _reply(h, 401, {"code": 401, "name": "AuthenticationRequiredError"})
    if not isinstance(body, dict) or not isinstance(body.get("url"), str):
        return _reply(h, 400, {"code": 400, "name": "ParamValidationError"})
    url = body["url"]
    content = _content(h, "jina", url, key)
    if "application/json" not in h.headers.get("Accept", ""):
        return h.send_body(200, "text/plain; charset=utf-8",
                           ("Title: Harbour notes\n\nURL Source: %s\n\nMarkdown Content:\n%s" % (url, content)).encode())
    _reply(h, 200, {"code": 200, "status": 20000, "data": {
        "title": "Harbour notes", "description": "", "url": url, "content": content,
        "usage": {"tokens": 120}}})


def _page_html(text):
    return ("<html><head><title>Harbour notes</title></head><body><article><h1>Harbour notes</h1>"
            + "".join("<p>%s</p>" % p for p in text.split("\n\n") if p.strip())
            + "</article></body></html>")


def _basic_user(h):
    """The user name of an HTTP Basic header with an empty password (Zyte's key), else None."""
    auth = h.headers.get("Authorization", "")
    if not auth.startswith("Basic "):
        return None
    try:
        user, sep, password = base64.b64decode(auth[6:], validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return user if sep and user and password == "" else None


def zyte(h, q):
    key, body = _basic_user(h), _json_body(h)
    if key is None:
        return _reply(h, 401, {"type": "/auth/key-not-found", "title": "Authentication Key Not Found",
                               "status": 401})
    outputs = [k for k in ("httpResponseBody", "browserHtml") if isinstance(body, dict) and body.get(k) is True]
    if not isinstance(body, dict) or not isinstance(body.get("url"), str) or len(outputs) != 1:
        return _reply(h, 400, {"type": "/request/invalid", "title": "Invalid Request", "status": 400})
    url = body["url"]
    api = h.path.split("/")[1]   # "zyte" or "zyte-browser": the example that asked
    text = _content(h, api, url, key).replace("# Harbour notes\n\n", "")
    if "echo-key" in url:   # Zyte-style debugging echo of the header as received
        text += "\n\nDebug: Authorization: %s\n" % h.headers.get("Authorization", "")
    html = _page_html(text)
    answer = {"url": url, "statusCode": 200}
    if outputs[0] == "browserHtml":
        answer["browserHtml"] = html
    else:
        answer["httpResponseBody"] = base64.b64encode(html.encode("utf-8")).decode("ascii")
    _reply(h, 200, answer)


def scrapingbee(h, q):
    key = q.get("api_key", [None])[0]
    url = q.get("url", [None])[0]
    if h.command != "GET" or not key:
        return h.send_body(401, "application/json", b'{"message": "Invalid api key"}')
    if not url:
        return h.send_body(400, "application/json", b'{"message": "url is required"}')
    text = _content(h, "scrapingbee", url, key).replace("# Harbour notes\n\n", "")
    h.send_body(200, "text/html; charset=utf-8", _page_html(text).encode())


ROUTES = {
    "/firecrawl/v1/scrape": firecrawl,
    "/tavily/extract": tavily,
    "/jina/": jina,
    "/scrapingbee/api/v1/": scrapingbee,
    "/zyte/v1/extract": zyte,
    "/zyte-browser/v1/extract": zyte,
}
