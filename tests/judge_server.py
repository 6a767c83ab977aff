"""A small deterministic OpenAI-compatible chat-completions server for the judge tests.

Raw asyncio HTTP/1.1 with keep-alive, no framework: it answers ``POST .../chat/completions``
with a reply computed from the request (by default a grade derived from a hash of the last user
message, so the same prompt always gets the same answer) and can inject faults:

* ``script``: actions for the next requests, one consumed per request (in arrival order);
* ``rules``: ``(substring, action)`` applied to every request whose prompt contains the
  substring.

Actions: ``("ok",)``, ``("delay", seconds)``, ``("status", code)`` /
``("status", code, {"Retry-After": "1"})``, ``("drop",)`` (close the connection without
answering), ``("malformed",)`` (200 with a body that is not JSON), ``("garbage",)`` (200 with
a reply text no parser can read), ``("reply", text)``, and the replies that are not a
completion (:data:`NOT_COMPLETIONS`, each a 200 unless said): ``("null",)`` (``content:
null``), ``("empty",)`` (``content: ""``), ``("no_choices",)``, ``("wrong_types", n)`` (the
n-th of :data:`WRONG_TYPES`), ``("html",)``, ``("no_content",)`` (a 204), ``("short",)``
(fewer body bytes than ``Content-Length``, then close), ``("continue",)`` (an interim ``100
Continue`` before the real answer — a completion), ``("reset",)`` (a TCP reset, no answer),
``("hang",)`` (no answer until the client hangs up), ``("big", n)`` (a completion padded
to n bytes) and ``("bomb", n)`` (a gzip body that inflates to n bytes: a completion padded
with spaces inside the JSON object).

**Random faults**: with ``fault_rate`` > 0, each request gets, with that probability, one of
``faults`` — drawn from a hash of (prompt, how often it was asked, ``fault_seed``), so a run
is reproducible whatever the order requests arrive in — but never more than
``max_faults_per_prompt`` in a row for one prompt (every pair is answered within a client's
retries).

Every request's prompt is counted (``seen``) so that tests can check how often each pair was
asked; ``answered`` counts the completions sent per prompt and ``asked_after_answer`` the
requests for a prompt that had already been answered. Run it in a thread
(:class:`FakeServer`) or as a process::

    python tests/judge_server.py --port 0 --latency 0.005   # prints "PORT <n>" when ready
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import socket
import struct
import threading
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

Action = tuple[Any, ...]

#: 200 bodies that carry no completion text of the right type
WRONG_TYPES: tuple[Any, ...] = (
    {"choices": [{"message": {"role": "assistant", "content": 4}}]},
    {"choices": "4"},
    {"choices": [None]},
    {"choices": [{"message": ["4"]}]},
    {"choices": [{"message": {"role": "assistant", "content": ["4"]}}]},
    [{"choices": [{"message": {"content": "4"}}]}],
    {"error": {"message": "overloaded", "type": "server_error"}},
)

#: every fault the server can inject (for random fault runs)
FAULTS: tuple[Action, ...] = (
    ("status", 429, {"Retry-After": "0.2"}),
    ("status", 500),
    ("status", 502),
    ("status", 503),
    ("hang",),
    ("malformed",),
    ("no_choices",),
    ("null",),
    ("empty",),
    *(("wrong_types", i) for i in range(len(WRONG_TYPES))),
    ("html",),
    ("reset",),
    ("drop",),
    ("short",),
    ("no_content",),
    ("continue",),
)
NOT_COMPLETIONS = ("null", "empty", "no_choices", "wrong_types", "html", "no_content")

Responder = Callable[[dict[str, Any]], str]


def prompt_of(request: dict[str, Any]) -> str:
    """The last user message of a chat request."""
    messages = request.get("messages") or []
    for message in reversed(messages):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def stable_grade(text: str, low: int = 1, high: int = 5) -> int:
    """A grade in low..high fixed by the text (the same prompt always gets the same grade)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return low + int.from_bytes(digest[:4], "big") % (high - low + 1)


def default_responder(request: dict[str, Any]) -> str:
    return str(stable_grade(prompt_of(request)))


class ServerState:
    """What the server does (script, rules, latency, responder) and what it saw."""

    def __init__(self, responder: Responder = default_responder, latency: float = 0.0) -> None:
        self.responder = responder
        self.latency = latency
        self.script: deque[Action] = deque()
        self.rules: list[tuple[str, Action]] = []
        self.seen: Counter[str] = Counter()
        self.requests: list[dict[str, Any]] = []
        self.keep_requests = True
        self.send_usage = True
        self.active = 0
        self.max_active = 0
        self.logprobs: Callable[[dict[str, Any]], list[tuple[str, float]]] | None = None
        self.lock = threading.Lock()
        self.fault_rate = 0.0
        self.faults: tuple[Action, ...] = FAULTS
        self.fault_seed = 0
        self.max_faults_per_prompt = 4
        self.answered: Counter[str] = Counter()
        self.asked_after_answer = 0
        self.injected: Counter[str] = Counter()
        self._streak: Counter[str] = Counter()

    def action_for(self, prompt: str) -> Action:
        with self.lock:
            for needle, action in self.rules:
                if needle in prompt:
                    return action
            if self.script:
                return self.script.popleft()
            if self.fault_rate > 0 and self._streak[prompt] < self.max_faults_per_prompt:
                key = f"{self.fault_seed}|{self.seen[prompt]}|{prompt}".encode()
                draw = int.from_bytes(hashlib.sha256(key).digest()[:8], "big")
                if (draw >> 16) / 2.0**48 < self.fault_rate:
                    self._streak[prompt] += 1
                    action = self.faults[draw % len(self.faults)]
                    self.injected[action[0]] += 1
                    return action
            self._streak[prompt] = 0
        return ("ok",)


def _completion(state: ServerState, request: dict[str, Any], text: str) -> bytes:
    prompt = prompt_of(request)
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "stop",
    }
    if request.get("logprobs") and state.logprobs is not None:
        top = state.logprobs(request)
        choice["logprobs"] = {
            "content": [
                {
                    "token": top[0][0],
                    "logprob": top[0][1],
                    "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top],
                }
            ]
        }
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": request.get("model", "test"),
        "choices": [choice],
        "usage": {
            "prompt_tokens": math.ceil(len(prompt) / 4),
            "completion_tokens": 1,
            "total_tokens": math.ceil(len(prompt) / 4) + 1,
        },
    }
    if not state.send_usage:
        del body["usage"]
    return json.dumps(body).encode("utf-8")


def _response(status: int, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    reason = {200: "OK", 404: "Not Found", 429: "Too Many Requests"}.get(status, "Status")
    headers = {"Content-Type": "application/json", **(headers or {})}
    lines = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}"]
    for name, value in headers.items():
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _reset(writer: asyncio.StreamWriter) -> None:
    """Abort the connection with a TCP reset (RST), not an orderly close."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def _reply(state: ServerState, request: dict[str, Any], action: Action) -> bytes | None:
    """The bytes of a reply that is not a completion (None: the action answers)."""
    kind = action[0]
    if kind == "status":
        headers = action[2] if len(action) > 2 else {}
        payload = json.dumps({"error": {"message": f"injected {action[1]}"}})
        return _response(action[1], payload.encode(), headers)
    if kind == "malformed":
        return _response(200, b'{"choices": [{"message": {"content": "4"')
    if kind in ("null", "empty"):
        body = json.loads(_completion(state, request, ""))
        body["choices"][0]["message"]["content"] = None if kind == "null" else ""
        return _response(200, json.dumps(body).encode())
    if kind == "no_choices":
        body = json.loads(_completion(state, request, ""))
        body["choices"] = []
        return _response(200, json.dumps(body).encode())
    if kind == "wrong_types":
        return _response(200, json.dumps(WRONG_TYPES[action[1]]).encode())
    if kind == "html":
        page = b"<html><body><h1>Service Unavailable</h1></body></html>"
        return _response(200, page, {"Content-Type": "text/html"})
    if kind == "no_content":
        return b"HTTP/1.1 204 No Content\r\n\r\n"
    if kind == "big":
        body = _completion(state, request, "2")
        return _response(200, body[:-1] + b" " * max(0, action[1] - len(body)) + b"}")
    if kind == "bomb":
        return _response(200, _bomb(_completion(state, request, "2"), action[1]),
                         {"Content-Encoding": "gzip"})  # fmt: skip
    return None


def _bomb(body: bytes, size: int) -> bytes:
    """``body`` gzip-compressed with spaces before its closing brace, ``size`` bytes inflated
    (compressed 1:1000, built a MiB at a time)."""
    import zlib

    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [z.compress(body[:-1])]
    left = max(0, size - len(body))
    block = b" " * (1 << 20)
    while left > 0:
        out.append(z.compress(block[: min(left, len(block))]))
        left -= len(block)
    out.append(z.compress(b"}"))
    out.append(z.flush())
    return b"".join(out)


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, bytes] | None:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = await reader.readexactly(length) if length else b""
    return path, body


async def _handle(
    state: ServerState, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        while True:
            try:
                got = await _read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            if got is None:
                return
            path, body = got
            if not path.rstrip("/").endswith("/chat/completions"):
                writer.write(_response(404, b'{"error": "not found"}'))
                await writer.drain()
                continue
            request = json.loads(body)
            prompt = prompt_of(request)
            action = state.action_for(prompt)
            with state.lock:
                state.seen[prompt] += 1
                if state.answered[prompt]:
                    state.asked_after_answer += 1
                if state.keep_requests:
                    state.requests.append(request)
            state.active += 1
            state.max_active = max(state.max_active, state.active)
            try:
                if state.latency:
                    await asyncio.sleep(state.latency)
                kind = action[0]
                if kind == "delay":
                    await asyncio.sleep(action[1])
                    kind = "ok"
                elif kind == "hang":
                    # no answer until the client gives up and closes (or 30 s)
                    with contextlib.suppress(TimeoutError, ConnectionError):
                        await asyncio.wait_for(reader.read(1), 30.0)
                    kind = "drop"
            finally:
                state.active -= 1
            if kind == "drop":
                writer.close()
                return
            if kind == "reset":
                _reset(writer)
                return
            if kind == "short":
                whole = _response(200, _completion(state, request, state.responder(request)))
                writer.write(whole[: len(whole) - 10])
                await writer.drain()
                writer.close()
                return
            reply = _reply(state, request, action)
            if reply is None:
                if kind == "continue":
                    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                text = action[1] if kind == "reply" else None
                if kind == "garbage":
                    text = "~~ ??? ~~"
                reply = _response(
                    200, _completion(state, request, text or state.responder(request))
                )
                with state.lock:
                    state.answered[prompt] += 1
            writer.write(reply)
            await writer.drain()
    except asyncio.CancelledError:
        pass
    finally:
        writer.close()


class FakeServer:
    """The server on 127.0.0.1 (a free port) in a background thread with its own event loop."""

    def __init__(self, responder: Responder = default_responder, latency: float = 0.0) -> None:
        self.state = ServerState(responder, latency)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = 0

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> asyncio.Server:
            return await asyncio.start_server(
                lambda r, w: _handle(self.state, r, w), "127.0.0.1", 0
            )

        server = self._loop.run_until_complete(start())
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()
        pending = asyncio.all_tasks(self._loop)
        for task in pending:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.run_until_complete(server.wait_closed())
        self._loop.close()

    def start(self) -> FakeServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of faulty replies")
    parser.add_argument(
        "--faults",
        default="",
        help="comma-separated fault kinds to draw from (default: every one), e.g. null,empty",
    )
    parser.add_argument(
        "--max-faults-per-prompt", type=int, default=4, help="consecutive faults per prompt"
    )
    args = parser.parse_args()
    state = ServerState(latency=args.latency)
    state.keep_requests = False
    state.fault_rate = args.fault_rate
    state.max_faults_per_prompt = args.max_faults_per_prompt
    if args.faults:
        kinds = set(args.faults.split(","))
        state.faults = tuple(f for f in FAULTS if f[0] in kinds)

    async def serve() -> None:
        server = await asyncio.start_server(
            lambda r, w: _handle(state, r, w), "127.0.0.1", args.port, backlog=1024
        )
        print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
        async with server:
            await server.serve_forever()

    try:
        import uvloop  # type: ignore[import-not-found]

        uvloop.install()
    except ImportError:
        pass
    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
