"""An ASGI wrapper that every request passes first: request bodies are size-limited (413), and
every response gets the security headers (a strict Content-Security-Policy: the page loads
nothing but its own files) and, under ``/api/``, ``Cache-Control: no-store``.

The body is read whole (it is small) before the app sees it, so a chunked upload without a
``Content-Length`` is limited too.
"""

from __future__ import annotations

import json

#: the largest request body accepted, in bytes (a move is about 60)
MAX_BODY = 16 * 1024

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


class Guard:
    """Wraps an ASGI app (see the module docstring)."""

    def __init__(self, app, max_body: int = MAX_BODY) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope, receive, send) -> None:
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

        length = dict(scope.get("headers", [])).get(b"content-length")
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
