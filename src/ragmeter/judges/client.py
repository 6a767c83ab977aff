"""An asyncio client for OpenAI-compatible chat completions (vLLM, llama.cpp server, Ollama,
hosted APIs), built on one ``aiohttp.ClientSession`` for ``http://`` and ``https://`` alike.

* **HTTP**: aiohttp (llhttp's parser): keep-alive connections pooled per server, chunked
  bodies, ``Connection: close``, interim ``1xx`` replies skipped, a 204 without a body, TLS
  with the system's certificates, the environment's proxies (``HTTPS_PROXY``, ``NO_PROXY``;
  never for localhost). Why aiohttp: httpx's pool (httpcore over anyio) costs
  several times the client CPU per request at 64 connections (about 10× fewer requests/s
  on a 2-core machine, see ``benchmarks/README.md``), and a hand-written HTTP/1.1 client
  was one more parser to get right.
* **Bounded concurrency**: at most ``concurrency`` requests in flight (a semaphore), each
  on a pooled connection to the server it goes to.
* **Timeout** per request (total wall time, connect to last byte).
* **Retries** on 408/409/425/429, every 5xx, timeouts and dropped connections, and on every
  2xx that is not a completion (a body that is not JSON, no ``choices``, a ``content`` that
  is null, empty or not a string: a glitch, a content filter, a tool call), up to
  ``max_retries`` times, sleeping ``uniform(0, min(cap, base·2^attempt))`` ("full jitter")
  — or the server's ``Retry-After`` (seconds or an HTTP date) when that is longer. 401, 403
  and 404 stop the run (:class:`FatalJudgeError`), and so does a request that cannot connect
  after its retries before any server ever answered (a wrong URL or a server that is down,
  rather than hours of backoff over every pair); any other 4xx fails that request only.
* **Client-side limits**: requests per minute and tokens per minute (token buckets; a request
  reserves chars/4 of its prompt + ``max_tokens`` and is corrected by the reported ``usage``).
* **Several servers**: each request goes to the base URL with the fewest requests in flight
  (round robin among ties); a retry prefers another server.
* ``temperature`` (0) and ``seed`` are sent with every request.
* **Reply size**: a body is read in the chunks aiohttp hands over (decompressed a bounded
  step at a time) and reading stops at ``max_reply_bytes`` (4 MiB by default), counted after
  decompression — a 2 MB gzip body that inflates to 2 GiB is stopped at the cap, never held
  whole. A reply past the cap (or announcing a ``Content-Length`` past it) fails that request
  at once, not retried: a judge's answer is a few bytes, so such a reply is a misconfigured
  server or proxy, and asking again would read it again.

Needs the ``judges`` extra (aiohttp); nothing else in ragmeter imports this module eagerly.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.errors import FatalJudgeError, RequestFailed
from ragmeter.judges.ratelimit import TokenBucket

try:
    import aiohttp
except ImportError as exc:  # pragma: no cover - depends on the environment
    from ragmeter.errors import install_hint

    raise ImportError(
        f"the LLM judge needs aiohttp; install it with: {install_hint('judges')}"
    ) from exc


def yarl_url(url: str) -> Any:
    """``url`` parsed once (aiohttp takes a ``yarl.URL`` without parsing it again)."""
    from yarl import URL

    return URL(url)


_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTP_PROXY``/``HTTPS_PROXY``, minus
    ``NO_PROXY``), or ``None``; a server on this machine (localhost) is always reached
    directly."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or host in _LOOPBACK or urllib.request.proxy_bypass(host):
        return None
    return proxy


RETRY_STATUS = frozenset({408, 409, 425, 429})
FATAL_STATUS = frozenset({401, 403, 404})
RETRY_AFTER_CAP = 600.0


def estimate_tokens(text: str) -> int:
    """A rough token count: ⌈characters / 4⌉ (English averages about 4 characters a token)."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class ChatResult:
    """A completion: its text, the first token's top log-probabilities when asked for, token
    counts (``estimated`` when the server sent no ``usage``), latency and retries."""

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    estimated: bool
    latency_s: float
    retries: int
    top_logprobs: tuple[tuple[str, float], ...] | None = None


@dataclass
class ClientStats:
    """Counters over the client's life."""

    requests: int = 0
    retries: int = 0
    failures: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)

    def count_retry(self, reason: str) -> None:
        self.retries += 1
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP)


class _TooLarge(Exception):
    """A reply body past ``max_reply_bytes`` (what was seen: announced or read)."""


async def read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    """The body of ``response``, at most ``cap`` bytes after decompression; raises
    :class:`_TooLarge` as soon as the body (or its ``Content-Length``) passes ``cap``,
    without reading further."""
    announced = response.content_length
    if announced is not None and announced > cap:
        raise _TooLarge(f"Content-Length {announced:,} bytes, more than")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > cap:
            raise _TooLarge("more bytes (decompressed) than")
        chunks.append(chunk)
    return b"".join(chunks)


class _Retry(Exception):
    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def _completion_fields(
    data: Any, model: str
) -> tuple[str, str, Mapping[str, Any] | None, tuple[tuple[str, float], ...] | None]:
    """(text, model, usage, first-token top logprobs) of a completion body.

    Raises _Retry when the body is not a completion: no ``choices`` list, a first choice that
    is not an object, a ``message.content`` (or legacy ``text``) that is missing, null, empty
    or not a string. Servers send such 200s on a glitch, a content filter, a tool call or a
    reply cut at ``max_tokens`` inside a reasoning block; none of them is the model's answer
    to the prompt, so none may be stored as one (it would be cached as unparsed and never
    asked again)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        error = data.get("error") if isinstance(data, dict) else None
        why = f"an error body: {str(error)[:120]}" if error else "no choices"
        raise _Retry(f"not a completion: {why}")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise _Retry(f"not a completion: choices[0] is {type(choice).__name__}")
    message = choice.get("message")
    if message is not None and not isinstance(message, dict):
        raise _Retry(f"not a completion: message is {type(message).__name__}")
    text = message.get("content") if message is not None else choice.get("text")
    if not isinstance(text, str) or not text:
        finish = choice.get("finish_reason")
        what = "null" if text is None else ("empty" if text == "" else type(text).__name__)
        raise _Retry(
            f"not a completion: content {what}"
            + (f" (finish_reason {finish})" if isinstance(finish, str) else "")
            + (": the reply budget ran out, raise --max-tokens" if finish == "length" else "")
        )
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
    return text, str(data.get("model") or model), usage, _first_top_logprobs(choice)


def _first_top_logprobs(choice: Mapping[str, Any]) -> tuple[tuple[str, float], ...] | None:
    """The first token's top alternatives (token, logprob), None when absent or malformed."""
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return None
    first = content[0]
    entries = first.get("top_logprobs") or [first]
    if not isinstance(entries, list):
        return None
    top: list[tuple[str, float]] = []
    for e in entries:
        if isinstance(e, dict):
            lp = e.get("logprob", -math.inf)
            if isinstance(lp, int | float) and not isinstance(lp, bool):
                top.append((str(e.get("token", "")), float(lp)))
    return tuple(top)


class ChatClient:
    """Use as ``async with ChatClient(config) as client: await client.chat(messages)``."""

    def __init__(self, config: JudgeConfig, *, rng: random.Random | None = None) -> None:
        self.config = config
        self._answered = False  # has any server answered yet? (a dead server stops the run)
        self.stats = ClientStats()
        self._rng = rng or random.Random()
        self._session: aiohttp.ClientSession | None = None
        self._slots: asyncio.Semaphore | None = None
        self._in_flight = [0] * len(config.base_urls)
        self._next = 0
        self._urls = [u.rstrip("/") + "/chat/completions" for u in config.base_urls]
        self._parsed = [yarl_url(u) for u in self._urls]
        self._proxies = [env_proxy(u) for u in self._urls]
        self._rpm = TokenBucket(config.rpm) if config.rpm else None
        self._tpm = (
            TokenBucket(config.tpm, burst=max(1.0, config.tpm / 60.0)) if config.tpm else None
        )
        headers = {"Content-Type": "application/json", **dict(config.extra_headers)}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._headers = headers

    async def __aenter__(self) -> ChatClient:
        # the semaphore bounds the requests in flight, so the pool needs no limit of its
        # own: each server keeps at most ``concurrency`` connections alive
        connector = aiohttp.TCPConnector(limit=0, limit_per_host=0)
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers=self._headers,
            # the deadline is asyncio.timeout's in _once (one clock for every phase)
            timeout=aiohttp.ClientTimeout(total=None),
            # the environment's proxies are looked up once per server (env_proxy), not by
            # aiohttp on every request, and no cookies are kept: together they were half
            # the client's CPU per judgment (benchmarks/judge_bench.py)
            trust_env=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            raise_for_status=False,
        )
        self._slots = asyncio.Semaphore(self.config.concurrency)
        return self

    async def __aexit__(self, *exc: object) -> None:
        session, self._session, self._slots = self._session, None, None
        if session is not None:
            await session.close()

    def _pick(self, avoid: int | None) -> int:
        """The server with the fewest requests in flight (round robin among ties), avoiding
        ``avoid`` (the one that just failed) when there is a choice."""
        n = len(self._urls)
        if n == 1:
            return 0
        start = self._next
        self._next = (start + 1) % n
        best = -1
        for step in range(n):
            i = (start + step) % n
            if i == avoid:
                continue
            if best < 0 or self._in_flight[i] < self._in_flight[best]:
                best = i
        return best if best >= 0 else 0

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        cfg = self.config
        jitter = self._rng.uniform(0.0, min(cfg.backoff_cap, cfg.backoff_base * 2.0**attempt))
        return max(jitter, retry_after) if retry_after is not None else jitter

    def request_body(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        top_logprobs: int | None = None,
        options: Mapping[str, Any] | None = None,
        seed_offset: int = 0,
    ) -> dict[str, Any]:
        """The request: ``options`` are further fields sent as they are (a task's own, e.g.
        ``top_p``); ``seed_offset`` is added to the configured seed (sample i of a repeated
        prompt asks with seed + i, so that the samples differ and stay reproducible)."""
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": list(messages),
            "temperature": self.config.temperature,
            "max_tokens": max_tokens,
            **dict(options or {}),
        }
        if self.config.seed is not None:
            body["seed"] = self.config.seed + seed_offset
        if top_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = top_logprobs
        return body

    async def chat(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int = 16,
        top_logprobs: int | None = None,
        options: Mapping[str, Any] | None = None,
        seed_offset: int = 0,
    ) -> ChatResult:
        """One completion, retried as the module docstring says. Raises :class:`RequestFailed`
        after the last retry, :class:`FatalJudgeError` on 401/403/404."""
        slots, session = self._slots, self._session
        if slots is None or session is None:
            raise RuntimeError("use ChatClient inside 'async with'")
        payload = json.dumps(
            self.request_body(
                messages,
                max_tokens=max_tokens,
                top_logprobs=top_logprobs,
                options=options,
                seed_offset=seed_offset,
            )
        ).encode("utf-8")
        prompt_chars = sum(len(m.get("content", "")) for m in messages)
        reserve = math.ceil(prompt_chars / 4) + max_tokens
        attempt = 0
        avoid: int | None = None
        async with slots:
            while True:
                if self._rpm is not None:
                    await self._rpm.acquire(1)
                if self._tpm is not None:
                    await self._tpm.acquire(reserve)
                server = self._pick(avoid)
                try:
                    return await self._once(
                        session, server, payload, prompt_chars, reserve, attempt
                    )
                except _Retry as retry:
                    if attempt >= self.config.max_retries:
                        self.stats.failures += 1
                        if not self._answered and retry.reason.startswith("connection"):
                            raise FatalJudgeError(
                                f"cannot reach {', '.join(self.config.base_urls)}: "
                                f"{retry.reason} (after {attempt} retries; is the server up?)"
                            ) from None
                        raise RequestFailed(
                            f"{retry.reason} (gave up after {attempt} retries)", retries=attempt
                        ) from None
                    self.stats.count_retry(retry.reason.split(":")[0])
                    await asyncio.sleep(self._backoff(attempt, retry.retry_after))
                    attempt += 1
                    avoid = server

    async def _once(
        self,
        session: aiohttp.ClientSession,
        server: int,
        payload: bytes,
        prompt_chars: int,
        reserve: int,
        attempt: int,
    ) -> ChatResult:
        self._in_flight[server] += 1
        self.stats.requests += 1
        started = time.perf_counter()
        try:
            try:
                async with (
                    asyncio.timeout(self.config.timeout),
                    session.post(
                        self._parsed[server], data=payload, proxy=self._proxies[server]
                    ) as response,
                ):
                    status, headers = response.status, response.headers
                    try:
                        content = await read_capped(response, self.config.max_reply_bytes)
                    except _TooLarge:
                        response.close()  # the connection is dropped, not reused
                        raise
            except TimeoutError:
                raise _Retry(f"timeout: no answer within {self.config.timeout:g} s") from None
            except aiohttp.ClientError as exc:
                raise _Retry(f"connection: {type(exc).__name__}: {exc}") from None
            except _TooLarge as exc:
                self.stats.failures += 1
                raise RequestFailed(
                    f"reply too large: HTTP {status} from {self._urls[server]}: {exc} the "
                    f"cap of {self.config.max_reply_bytes:,} bytes (--max-reply-bytes, "
                    "config max_reply_bytes); not read further, not retried",
                    retries=attempt,
                ) from None
        finally:
            self._in_flight[server] -= 1
        latency = time.perf_counter() - started
        self._answered = True
        if status // 100 != 2:
            detail = content[:800].decode("utf-8", "replace")[:200].strip()
            if status in RETRY_STATUS or status >= 500:
                raise _Retry(
                    f"http {status}: {detail}", parse_retry_after(headers.get("retry-after"))
                )
            message = f"HTTP {status} from {self._urls[server]}: {detail}"
            if status in FATAL_STATUS:
                raise FatalJudgeError(
                    message + " (check --base-url, --model and the API key variable)"
                )
            self.stats.failures += 1
            raise RequestFailed(message, retries=attempt)
        try:
            # any 2xx (a 204 too) must carry a completion; what does not is retried
            data = json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            kind = headers.get("content-type", "no content type").split(";")[0]
            raise _Retry(
                f"malformed: http {status} body is not JSON ({kind}, {len(content)} bytes)"
            ) from None
        text, model, usage, top = _completion_fields(data, self.config.model)
        tokens_in = usage.get("prompt_tokens") if usage else None
        tokens_out = usage.get("completion_tokens") if usage else None
        estimated = not (isinstance(tokens_in, int) and isinstance(tokens_out, int))
        if estimated:
            tokens_in = math.ceil(prompt_chars / 4)
            tokens_out = estimate_tokens(text)
        assert isinstance(tokens_in, int) and isinstance(tokens_out, int)
        if self._tpm is not None:
            self._tpm.adjust(tokens_in + tokens_out - reserve)
        return ChatResult(text, model, tokens_in, tokens_out, estimated, latency, attempt, top)


__all__ = [
    "ChatClient",
    "ChatResult",
    "ClientStats",
    "estimate_tokens",
    "parse_retry_after",
    "read_capped",
]
