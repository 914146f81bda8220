"""An ASGI wrapper that every request passes first: the ``Host`` header must name a host the
server is served as (400 otherwise: a page of another site that a DNS rebinding points at this
server is refused), request bodies are size-limited (413), and every response gets the security
headers (a strict Content-Security-Policy: the page loads nothing but its own files) and, under
``/api/``, ``Cache-Control: no-store``.

The body is read whole (it is small) before the app sees it, so a chunked upload without a
``Content-Length`` is limited too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

#: the largest request body accepted, in bytes (a move is about 60)
MAX_BODY = 16 * 1024
#: the names of this machine's loopback interface
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def host_name(header: str) -> str:
    """The host of a ``Host`` header, without its port, lower-case (``[::1]:8000`` -> ``::1``)."""
    h = header.strip().lower()
    if h.startswith("["):  # an IPv6 address
        end = h.find("]")
        return h[1:end] if end > 0 else h
    if h.count(":") == 1:
        h = h.split(":", 1)[0]
    return h.rstrip(".")


def normalize_hosts(hosts: Iterable[str]) -> frozenset[str]:
    return frozenset(host_name(h) for h in hosts if h.strip())


SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]


async def _answer(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + SECURITY_HEADERS})
    await send({"type": "http.response.body", "body": body})


def origin_host(origin: str) -> str:
    """The host of an ``Origin`` header (``http://127.0.0.1:8000`` -> ``127.0.0.1``)."""
    rest = origin.strip().split("://", 1)[-1]
    return host_name(rest.split("/", 1)[0])


class Guard:
    """Wraps an ASGI app (see the module docstring). A WebSocket is refused (closed before it is
    accepted) unless its ``Host``, and its ``Origin`` when a browser sends one, name a host the
    server is served as: a page of another site cannot open a table's socket."""

    def __init__(self, app, max_body: int = MAX_BODY, allowed_hosts: Iterable[str] = LOOPBACK_HOSTS) -> None:
        self.app = app
        self.max_body = max_body
        self.allowed_hosts = normalize_hosts(allowed_hosts)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = scope.get("path", "").startswith("/api/")

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                extra = SECURITY_HEADERS + ([(b"cache-control", b"no-store")] if api else [])
                names = {k for k, _ in extra}
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": headers + extra}
            await send(message)

        headers = dict(scope.get("headers", []))
        host = headers.get(b"host")
        if host is None or host_name(host.decode("latin-1")) not in self.allowed_hosts:
            await _answer(send_with_headers, 400, "this server does not answer to that Host header")
            return
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                await _answer(send_with_headers, 400, "bad Content-Length")
                return
            if int(length) > self.max_body:
                await _answer(send_with_headers, 413, f"request body over {self.max_body} bytes")
                return
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await _answer(send_with_headers, 413, f"request body over {self.max_body} bytes")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body, given = b"".join(chunks), False

        async def replay():
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send_with_headers)

    async def _websocket(self, scope, receive, send) -> None:
        headers = dict(scope.get("headers", []))
        host = headers.get(b"host")
        origin = headers.get(b"origin")
        ok = host is not None and host_name(host.decode("latin-1")) in self.allowed_hosts
        if ok and origin is not None:
            ok = origin_host(origin.decode("latin-1")) in self.allowed_hosts
        if not ok:
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)
