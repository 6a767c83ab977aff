"""The size limits of request bodies, applied before a body is read.

A label is a few hundred bytes; the app refuses a JSON or form body over
:attr:`~ragmeter.web.state.WebConfig.max_body` bytes (64 KiB unless configured) and a file
upload (``multipart/form-data``) over :attr:`~ragmeter.web.state.WebConfig.max_upload`
with ``413 Payload Too Large``: at once when ``Content-Length`` says so, and as soon as a body
sent without one (chunked) passes the limit. Nothing larger is ever held in memory.

An ASGI middleware wrapping ``receive``, so that a handler meets the limit wherever it reads
the body: the error it raises there is an ``HTTPException`` (413), answered like any other.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import HTTPException

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: the default limit of a JSON or form body (a label is a few hundred bytes)
MAX_BODY = 64 << 10
#: the default limit of a file upload body (the upload itself is read up to 20 MiB)
MAX_UPLOAD = 21 << 20


class BodyTooLarge(HTTPException):
    """A body passed its limit while being read (raised inside ``receive``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(413, too_large(limit))


def too_large(limit: int) -> str:
    return f"request body larger than {limit:,} bytes refused"


class HttpMiddleware:
    """A plain ASGI middleware that sees the HTTP requests (:meth:`http`, the subclass's) and
    passes everything else (lifespan, websockets) straight to ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


class BodyLimit(HttpMiddleware):
    """Refuse bodies over ``max_body`` bytes (``max_upload`` for multipart uploads)."""

    def __init__(self, app: ASGIApp, *, max_body: int, max_upload: int) -> None:
        super().__init__(app)
        self.max_body = max_body
        self.max_upload = max_upload

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or ())
        kind = headers.get(b"content-type", b"").decode("latin-1").lower()
        limit = self.max_upload if kind.startswith("multipart/form-data") else self.max_body
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                length = int(declared)
            except ValueError:
                await _reply(send, headers, 400, "Content-Length is not a number")
                return
            if length > limit:
                await _reply(send, headers, 413, too_large(limit))
                return
        received = 0

        async def capped() -> Message:
            nonlocal received
            message = await receive()
            if message.get("type") == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message.get("type") == "http.response.start"
            await send(message)

        try:
            await self.app(scope, capped, tracking_send)
        except BaseException as exc:
            # read outside a route (a middleware): possibly inside an exception group
            if started or not _too_large(exc):
                raise
            await _reply(send, headers, 413, too_large(limit))


def _too_large(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return any(_too_large(e) for e in exc.exceptions)
    return isinstance(exc, BodyTooLarge)


async def _reply(send: Send, headers: dict[bytes, bytes], status: int, message: str) -> None:
    """A short answer: JSON for scripts, text for people (no page: nothing was read)."""
    wants = (headers.get(b"accept", b"") + headers.get(b"content-type", b"")).decode("latin-1")
    if "application/json" in wants:
        body, kind = json.dumps({"error": message}).encode(), b"application/json"
    else:
        body, kind = f"{status}: {message}\n".encode(), b"text/plain; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
