"""The lean HTTP/1.1 transport against a raw asyncio server: keep-alive reuse, chunked bodies,
``Connection: close``, bodies read to EOF, an idle connection the server closed, and errors
mapped to httpx's (so the client retries them)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

httpx = pytest.importorskip("httpx", reason="the LLM judge needs the 'judges' extra (httpx)")

from ragmeter.judges.transport import LeanTransport  # noqa: E402


async def serve(replies: list[bytes]) -> tuple[asyncio.Server, dict[str, Any]]:
    """Answer the n-th request with ``replies[n]``; ``b"CLOSE"`` closes without answering,
    a reply ending in ``b"|CLOSE"`` closes after it."""
    state: dict[str, Any] = {"n": 0, "connections": 0, "bodies": []}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state["connections"] += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                state["bodies"].append(await reader.readexactly(length))
                reply = replies[state["n"]]
                state["n"] += 1
                if reply == b"CLOSE":
                    break
                close = reply.endswith(b"|CLOSE")
                writer.write(reply.removesuffix(b"|CLOSE"))
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, state


def ok(body: bytes, *extra: bytes) -> bytes:
    head = [b"HTTP/1.1 200 OK", b"Content-Length: %d" % len(body), *extra]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


def test_keep_alive_chunked_close_and_eof() -> None:
    replies = [
        ok(b'{"a": 1}'),
        b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"b"\r\n4\r\n: 2}\r\n0\r\n\r\n',
        ok(b'{"c": 3}', b"Connection: close") + b"|CLOSE",
        b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{"d": 4}|CLOSE',
        ok(b"{}"),
    ]

    async def go() -> tuple[list[Any], dict[str, Any]]:
        server, state = await serve(replies)
        port = server.sockets[0].getsockname()[1]
        transport = LeanTransport()
        got = []
        for i in range(5):
            request = httpx.Request("POST", f"http://127.0.0.1:{port}/x", content=b"body%d" % i)
            response = await transport.handle_async_request(request)
            got.append(response.json())
        await transport.aclose()
        server.close()
        return got, state

    got, state = asyncio.run(go())
    assert got == [{"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}, {}]
    assert state["bodies"] == [b"body0", b"body1", b"body2", b"body3", b"body4"]
    assert state["connections"] == 3  # reused, then reopened after each close


def test_idle_connection_closed_by_the_server_is_reopened_once() -> None:
    async def go() -> tuple[int, dict[str, Any]]:
        server, state = await serve([ok(b"{}") + b"|CLOSE", ok(b'{"x": 1}')])
        port = server.sockets[0].getsockname()[1]
        transport = LeanTransport()
        url = f"http://127.0.0.1:{port}/x"
        # the first reply claims keep-alive but the server closes: the next request finds a
        # dead connection and must reconnect transparently
        await transport.handle_async_request(httpx.Request("POST", url, content=b"1"))
        await asyncio.sleep(0.05)
        response = await transport.handle_async_request(httpx.Request("POST", url, content=b"2"))
        await transport.aclose()
        server.close()
        return response.json()["x"], state

    value, state = asyncio.run(go())
    assert value == 1 and state["connections"] == 2


def test_errors_are_httpx_errors() -> None:
    async def go() -> list[type[BaseException]]:
        server, _ = await serve(
            [b"CLOSE", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}|CLOSE"]
        )
        port = server.sockets[0].getsockname()[1]
        url = f"http://127.0.0.1:{port}/x"
        raised = []
        for _ in range(2):
            transport = LeanTransport()
            try:
                await transport.handle_async_request(httpx.Request("POST", url, content=b"."))
            except httpx.TransportError as exc:
                raised.append(type(exc))
            await transport.aclose()
        server.close()
        transport = LeanTransport()
        try:  # nothing listens there any more
            await transport.handle_async_request(httpx.Request("POST", url, content=b"."))
        except httpx.TransportError as exc:
            raised.append(type(exc))
        return raised

    raised = asyncio.run(go())
    assert raised == [httpx.RemoteProtocolError, httpx.RemoteProtocolError, httpx.ConnectError]


def test_interim_1xx_is_skipped_and_204_has_no_body() -> None:
    async def go() -> list[tuple[int, bytes]]:
        server, state = await serve(
            [
                b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b'{"a": 1}'),
                b"HTTP/1.1 204 No Content\r\n\r\n",  # no Content-Length: still no body
                ok(b'{"b": 2}'),
            ]
        )
        port = server.sockets[0].getsockname()[1]
        transport = LeanTransport()
        got = []
        for i in range(3):
            request = httpx.Request("POST", f"http://127.0.0.1:{port}/x", content=b"%d" % i)
            response = await asyncio.wait_for(transport.handle_async_request(request), 2.0)
            got.append((response.status_code, response.content))
        await transport.aclose()
        server.close()
        assert state["connections"] == 1  # the 204 left the connection usable
        return got

    assert asyncio.run(go()) == [(200, b'{"a": 1}'), (204, b""), (200, b'{"b": 2}')]


def test_a_response_cut_short_on_a_kept_alive_connection_is_not_sent_again() -> None:
    """Reopening is only for a connection that died before any byte of the answer: a server
    that had started answering has the request, and asking twice could pay twice."""

    async def go() -> tuple[type[BaseException] | None, dict[str, Any]]:
        server, state = await serve(
            [ok(b"{}"), b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}|CLOSE", ok(b"{}")]
        )
        port = server.sockets[0].getsockname()[1]
        url = f"http://127.0.0.1:{port}/x"
        transport = LeanTransport()
        await transport.handle_async_request(httpx.Request("POST", url, content=b"1"))
        raised: type[BaseException] | None = None
        try:
            await transport.handle_async_request(httpx.Request("POST", url, content=b"2"))
        except httpx.TransportError as exc:
            raised = type(exc)
        await transport.aclose()
        server.close()
        return raised, state

    raised, state = asyncio.run(go())
    assert raised is httpx.RemoteProtocolError
    assert state["bodies"] == [b"1", b"2"]  # the second request was sent once
