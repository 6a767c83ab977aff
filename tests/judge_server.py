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
a reply text no parser can read), ``("reply", text)``.

Every request's prompt is counted (``seen``) so that tests can check how often each pair was
asked. Run it in a thread (:class:`FakeServer`) or as a process::

    python tests/judge_server.py --port 0 --latency 0.005   # prints "PORT <n>" when ready
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import threading
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

Action = tuple[Any, ...]
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

    def action_for(self, prompt: str) -> Action:
        with self.lock:
            for needle, action in self.rules:
                if needle in prompt:
                    return action
            if self.script:
                return self.script.popleft()
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
    lines = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}"]
    lines.append("Content-Type: application/json")
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


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
            finally:
                state.active -= 1
            if kind == "drop":
                writer.close()
                return
            if kind == "status":
                headers = action[2] if len(action) > 2 else {}
                payload = json.dumps({"error": {"message": f"injected {action[1]}"}})
                writer.write(_response(action[1], payload.encode(), headers))
            elif kind == "malformed":
                writer.write(_response(200, b'{"choices": [{"message": {"content": "4"'))
            elif kind == "garbage":
                writer.write(_response(200, _completion(state, request, "~~ ??? ~~")))
            elif kind == "reply":
                writer.write(_response(200, _completion(state, request, action[1])))
            else:
                writer.write(_response(200, _completion(state, request, state.responder(request))))
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
    args = parser.parse_args()
    state = ServerState(latency=args.latency)
    state.keep_requests = False

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
