"""A stand-in judge server: try ``ragmeter judge`` without a model, a GPU or an API key.

``python -m ragmeter.judges.testserver`` serves an OpenAI-compatible chat-completions
endpoint on ``http://127.0.0.1:8099/v1`` (``--port``, ``--host``) that answers ragmeter's
prompts **without any model**, deterministically, from word overlap:

* **relevance** (``--prompt relevance``, grades 1–5) and **UMBRELA** (``--prompt umbrela`` /
  ``umbrela-fewshot``, grades 0–3): with *s* the share of the query's words (three letters
  or more, a few stop words left out) found in the passage, the grade is
  ``1 + round(4·s)`` on 1–5 and ``round(3·s)`` on 0–3, replied in the form the prompt asks
  for (a digit; ``##final score: N``);
* **eRAG** (``ragmeter judge erag``): the "generated answer" is the passage's sentence that
  shares the most words with the question (the first of equals), without its final stop;
* any other prompt: HTTP 400 naming the prompts it answers (the request fails, counted).

It exercises everything around the judge — the cache and resume, the summary, the exit
status, the files and their provenance sidecars (whose ``model`` is the ``--model`` you
give: name it ``stand-in``) — but its labels are **not judgments**: word overlap is a weak
proxy of relevance. Use it to learn the commands and to test a pipeline, never to report
numbers. Every reply is a pure function of the prompt, so a rerun gives the same labels.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_PORT = 8099
#: the largest request body read (a prompt with its passage is a few KB)
MAX_REQUEST_BYTES = 1 << 20

_STOP = frozenset(
    "the and for are was were with that this from what which who how why when where does "  # noqa: SIM905
    "did can could should would will not but you your its his her their our has have had "
    "into onto about than then them they there these those any all".split()
)
_UMBRELA = re.compile(r"Query: (.*?)\nPassage: (.*?)\n\nSplit this problem into steps:", re.S)
_RELEVANCE = re.compile(r"Query: (.*?)\n\nPassage: (.*?)\n\nIf the language model saw", re.S)
_ERAG = re.compile(r"Passage: (.*?)\n\nQuestion: (.*?)\n\nAnswer the question using", re.S)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def content_words(text: str) -> set[str]:
    """The lower-cased words of ``text`` of three letters or more, stop words left out."""
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) >= 3 and w not in _STOP}


def overlap(query: str, passage: str) -> float:
    """The share of the query's content words found in the passage (0 for an empty query)."""
    q = content_words(query)
    return len(q & content_words(passage)) / len(q) if q else 0.0


def _round(x: float) -> int:
    return math.floor(x + 0.5)  # half up (Python's round() goes half to even)


def best_sentence(passage: str, question: str) -> str:
    """The passage's sentence sharing the most content words with the question (the first
    of equals), without its final full stop."""
    q = content_words(question)
    sentences = [s.strip() for s in _SENTENCE.split(passage) if s.strip()] or [""]
    best = max(sentences, key=lambda s: len(q & content_words(s)))  # max keeps the first
    return best.rstrip(".")


def reply(prompt: str) -> str | None:
    """The stand-in's reply to a user message, None for a prompt it does not answer."""
    if (found := _UMBRELA.findall(prompt)) and "##final score" in prompt:
        query, passage = found[-1]  # the few-shot prompt's examples come first
        return f"##final score: {_round(3 * overlap(query, passage))}"
    if m := _RELEVANCE.search(prompt):
        return str(1 + _round(4 * overlap(m.group(1), m.group(2))))
    if m := _ERAG.search(prompt):
        return best_sentence(m.group(1), m.group(2)) or "unknown"
    return None


def _user_message(body: Any) -> str:
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


class _Handler(BaseHTTPRequestHandler):
    server_version = "ragmeter-stand-in-judge"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: one line at start
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        """The model list (``/v1/models``): what a script polls to know the server is up."""
        if not self.path.rstrip("/").endswith("/models"):
            self._send(404, {"error": {"message": f"no such endpoint {self.path}"}})
            return
        self._send(200, {"object": "list", "data": [{"id": "stand-in", "object": "model"}]})

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no such endpoint {self.path}"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            self._send(413, {"error": {"message": "request too large"}})
            return
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._send(400, {"error": {"message": "the request body is not JSON"}})
            return
        prompt = _user_message(body)
        text = reply(prompt)
        if text is None:
            message = (
                "the stand-in judge answers ragmeter's relevance, umbrela, umbrela-fewshot "
                "and erag prompts only"
            )
            self._send(400, {"error": {"message": message}})
            return
        self._send(200, _completion(body, prompt, text))


def _completion(body: Any, prompt: str, text: str) -> dict[str, Any]:
    prompt_tokens = math.ceil(len(prompt) / 4)
    completion_tokens = math.ceil(len(text) / 4)
    return {
        "id": "chatcmpl-stand-in",
        "object": "chat.completion",
        "model": str(body.get("model") or "stand-in"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def make_server(host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> ThreadingHTTPServer:
    """The server, bound (``port`` 0: a free port, ``server.server_address[1]``); call
    ``serve_forever()`` (in a thread to use it from Python) and ``shutdown()``."""
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    return server


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m ragmeter.judges.testserver",
        description="A stand-in judge server (no model, no key): word-overlap grades for "
        "trying `ragmeter judge`; its labels are not judgments.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0: a free port")
    args = parser.parse_args(argv)
    try:
        server = make_server(args.host, args.port)
    except OSError as exc:
        print(f"cannot listen on {args.host}:{args.port}: {exc.strerror}", file=sys.stderr)
        return 1
    host, port = str(server.server_address[0]), int(server.server_address[1])
    print(
        f"stand-in judge on http://{host}:{port}/v1 (word overlap, not a model): "
        f"--base-url http://{host}:{port}/v1 --model stand-in; Ctrl-C stops it",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
