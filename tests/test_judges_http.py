"""The judge's HTTP client (aiohttp) on the wire: against uvicorn, the server vLLM runs on
(204, chunked bodies, ``Connection: close``, keep-alive reuse, slow headers), and against a
raw asyncio server for what uvicorn never sends (an interim ``100 Continue``, a body read to
EOF, a reply cut short, an idle connection the server closed)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn (the web extra) is not installed")

from ragmeter.judges import JudgeConfig  # noqa: E402
from ragmeter.judges.client import ChatClient, ChatResult  # noqa: E402
from ragmeter.judges.errors import RequestFailed  # noqa: E402

MESSAGES = [{"role": "user", "content": "grade this"}]


def completion(text: str = "4") -> bytes:
    body = {"model": "m", "choices": [{"message": {"role": "assistant", "content": text}}]}
    return json.dumps(body).encode()


def config(url: str, **changes: Any) -> JudgeConfig:
    base: dict[str, Any] = {
        "model": "m",
        "concurrency": 1,
        "max_retries": 3,
        "timeout": 2.0,
        "backoff_base": 0.001,
        "backoff_cap": 0.002,
    }
    return JudgeConfig(base_urls=(url,), **(base | changes))


async def ask(url: str, n: int = 1, **changes: Any) -> tuple[list[ChatResult], ChatClient]:
    async with ChatClient(config(url, **changes)) as client:
        results = [await client.chat(MESSAGES) for _ in range(n)]
    return results, client


# -- uvicorn ----------------------------------------------------------------------------------

Send = Callable[[dict[str, Any]], Awaitable[None]]
Handler = Callable[[int, Send], Awaitable[None]]


class Uvicorn:
    """uvicorn in a thread, answering the n-th request with ``handler(n, send)``; it records
    each request's client port (one port per TCP connection)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.ports: list[int] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        cfg = uvicorn.Config(
            self.app, log_level="error", lifespan="off", access_log=False, interface="asgi3"
        )
        self.server = uvicorn.Server(cfg)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    async def app(self, scope: dict[str, Any], receive: Any, send: Send) -> None:
        assert scope["type"] == "http"
        while (await receive()).get("more_body"):
            pass
        self.ports.append(scope["client"][1])
        await self.handler(len(self.ports) - 1, send)

    def __enter__(self) -> Uvicorn:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


async def reply(
    send: Send, status: int, parts: list[bytes], headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers or []})
    for i, part in enumerate(parts):
        await send({"type": "http.response.body", "body": part, "more_body": i < len(parts) - 1})
    if not parts:
        await send({"type": "http.response.body", "body": b""})


def length(body: bytes) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]


@pytest.fixture
def plain() -> Iterator[Uvicorn]:
    async def handler(n: int, send: Send) -> None:
        body = completion(str(n))
        await reply(send, 200, [body], length(body))

    with Uvicorn(handler) as server:
        yield server


def test_keep_alive_reuses_one_connection(plain: Uvicorn) -> None:
    results, client = asyncio.run(ask(plain.url, 5))
    assert [r.text for r in results] == ["0", "1", "2", "3", "4"]
    assert len(set(plain.ports)) == 1 and client.stats.retries == 0


def test_a_204_is_retried_at_once_not_after_the_timeout() -> None:
    async def handler(n: int, send: Send) -> None:
        if n == 0:
            await reply(send, 204, [])
        else:
            body = completion()
            await reply(send, 200, [body], length(body))

    with Uvicorn(handler) as server:
        started = time.perf_counter()
        results, client = asyncio.run(ask(server.url, timeout=5.0))
        elapsed = time.perf_counter() - started
    assert results[0].text == "4" and results[0].retries == 1
    assert client.stats.by_reason == {"malformed": 1}
    assert elapsed < 2.5  # a client waiting for a 204's body would take the full 5 s
    assert len(set(server.ports)) == 1  # the 204 left the connection usable


def test_chunked_bodies() -> None:
    async def handler(n: int, send: Send) -> None:
        body = completion(f"chunked {n}")
        # no Content-Length: uvicorn sends Transfer-Encoding: chunked, one chunk per part
        await reply(send, 200, [body[:7], b"", body[7:20], body[20:]])

    with Uvicorn(handler) as server:
        results, _ = asyncio.run(ask(server.url, 3))
    assert [r.text for r in results] == ["chunked 0", "chunked 1", "chunked 2"]
    assert len(set(server.ports)) == 1


def test_connection_close_opens_a_new_connection() -> None:
    async def handler(n: int, send: Send) -> None:
        body = completion(str(n))
        await reply(send, 200, [body], [*length(body), (b"connection", b"close")])

    with Uvicorn(handler) as server:
        results, client = asyncio.run(ask(server.url, 3))
    assert [r.text for r in results] == ["0", "1", "2"] and client.stats.retries == 0
    assert len(set(server.ports)) == 3


def test_slow_headers_within_the_timeout_then_past_it() -> None:
    async def handler(n: int, send: Send) -> None:
        await asyncio.sleep(0.4 if n == 0 else (3.0 if n == 1 else 0.0))
        body = completion(str(n))
        await reply(send, 200, [body], length(body))

    with Uvicorn(handler) as server:
        results, client = asyncio.run(ask(server.url, 2, timeout=1.0))
    assert results[0].text == "0" and results[0].retries == 0 and results[0].latency_s >= 0.4
    # the second request's headers come after 3 s: timed out at 1 s, asked again
    assert results[1].text == "2" and results[1].retries == 1
    assert client.stats.by_reason == {"timeout": 1}


def test_retry_after_and_error_status() -> None:
    async def handler(n: int, send: Send) -> None:
        if n == 0:
            body = b'{"error": "slow down"}'
            await reply(send, 429, [body], [*length(body), (b"retry-after", b"0.3")])
        elif n == 2:
            await reply(send, 400, [b"bad request: no model"])
        else:
            body = completion()
            await reply(send, 200, [body], length(body))

    with Uvicorn(handler) as server:

        async def go() -> tuple[float, str]:
            async with ChatClient(config(server.url)) as client:
                started = time.perf_counter()
                await client.chat(MESSAGES)
                waited = time.perf_counter() - started
                with pytest.raises(RequestFailed, match=r"HTTP 400 .*bad request") as failed:
                    await client.chat(MESSAGES)
                return waited, str(failed.value)

        waited, _ = asyncio.run(go())
    assert waited >= 0.3  # Retry-After beat the 2 ms backoff


def test_concurrency_is_bounded_and_connections_pooled(plain: Uvicorn) -> None:
    async def go() -> list[ChatResult]:
        async with ChatClient(config(plain.url, concurrency=4)) as client:
            return await asyncio.gather(*(client.chat(MESSAGES) for _ in range(40)))

    results = asyncio.run(go())
    assert sorted(int(r.text) for r in results) == list(range(40))
    assert len(set(plain.ports)) <= 4


# -- a raw asyncio server: replies uvicorn never sends ----------------------------------------


async def serve(replies: list[bytes]) -> tuple[asyncio.Server, dict[str, Any]]:
    """Answer the n-th request with ``replies[n]``; a reply ending in ``b"|CLOSE"`` closes
    the connection after it."""
    state: dict[str, Any] = {"n": 0, "connections": 0, "bodies": []}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state["connections"] += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                size = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        size = int(line.split(b":")[1])
                state["bodies"].append(await reader.readexactly(size))
                answer = replies[state["n"]]
                state["n"] += 1
                writer.write(answer.removesuffix(b"|CLOSE"))
                await writer.drain()
                if answer.endswith(b"|CLOSE"):
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


def raw(replies: list[bytes], n: int) -> tuple[list[ChatResult], ChatClient, dict[str, Any]]:
    async def go() -> tuple[list[ChatResult], ChatClient, dict[str, Any]]:
        server, state = await serve(replies)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        async with ChatClient(config(url)) as client:
            results = []
            for _ in range(n):
                results.append(await client.chat(MESSAGES))
                await asyncio.sleep(0.02)  # let a closing server's FIN arrive
        server.close()
        return results, client, state

    return asyncio.run(go())


def test_interim_100_continue_is_skipped() -> None:
    results, client, _ = raw([b"HTTP/1.1 100 Continue\r\n\r\n" + ok(completion("3"))], 1)
    assert results[0].text == "3" and client.stats.retries == 0


def test_a_body_read_to_eof_and_an_idle_connection_the_server_closed() -> None:
    replies = [
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + completion("1") + b"|CLOSE",
        ok(completion("2")) + b"|CLOSE",  # claims keep-alive, then closes while idle
        ok(completion("3")),
    ]
    results, client, state = raw(replies, 3)
    assert [r.text for r in results] == ["1", "2", "3"] and client.stats.retries == 0
    assert state["connections"] == 3


def test_a_reply_cut_short_is_asked_again_and_counted() -> None:
    cut = b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n" + completion()[:20] + b"|CLOSE"
    results, client, state = raw([ok(completion("1")), cut, ok(completion("2"))], 2)
    assert [r.text for r in results] == ["1", "2"]
    assert results[1].retries == 1 and client.stats.by_reason == {"connection": 1}
    assert len(state["bodies"]) == 3  # sent again only by the counted retry


def test_proxies_from_the_environment_never_for_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragmeter.judges.client import env_proxy

    for name in ("http_proxy", "https_proxy", "no_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    assert env_proxy("https://api.example.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "internal.example")
    assert env_proxy("https://api.example.com/v1/chat/completions") == "http://proxy.example:3128"
    assert env_proxy("https://internal.example/v1") is None
    assert env_proxy("http://api.example.com/v1") is None  # HTTP_PROXY not set
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert env_proxy("http://127.0.0.1:8080/v1") is None
    assert env_proxy("http://localhost:8080/v1") is None
    assert env_proxy("http://gpu-box:8000/v1") == "http://proxy.example:3128"
