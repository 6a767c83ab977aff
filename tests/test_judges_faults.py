"""The judge client and runner against a real local server that injects faults: 429 with
Retry-After, 5xx, dropped connections, timeouts, malformed JSON, garbage replies, fatal 401;
caching and resume; several servers; client-side rate limits."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")

from judge_server import FakeServer, prompt_of, stable_grade
from ragmeter.judges import JudgeConfig, JudgeItem, make_task
from ragmeter.judges.cache import JudgmentCache
from ragmeter.judges.client import parse_retry_after
from ragmeter.judges.llm import LLMJudge
from ragmeter.judges.ratelimit import TokenBucket
from ragmeter.judges.runner import run_judgments


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        yield s


def config(*urls: str, **changes: Any) -> JudgeConfig:
    base = {
        "model": "test-model",
        "concurrency": 1,
        "max_retries": 3,
        "timeout": 5.0,
        "backoff_base": 0.01,
        "backoff_cap": 0.05,
    }
    base.update(changes)
    return JudgeConfig(base_urls=tuple(urls), **base)


def items(n: int, prefix: str = "") -> list[JudgeItem]:
    return [
        JudgeItem((f"q{i}", f"d{i}"), {"query": f"{prefix}query {i}", "passage": f"passage {i}"})
        for i in range(n)
    ]


def expected_grade(item: JudgeItem) -> int:
    """What the server answers: a grade fixed by the rendered user prompt."""
    return stable_grade(make_task("relevance").messages(item.inputs)[-1]["content"])


def judge_all(cfg: JudgeConfig, its: list[JudgeItem], cache: JudgmentCache, **kw: Any) -> Any:
    return run_judgments(make_task("relevance"), its, LLMJudge(cfg), cache=cache, **kw)


# -- retries -------------------------------------------------------------------------------


def test_429_with_retry_after_seconds_is_honoured(server: FakeServer) -> None:
    server.state.script.extend([("status", 429, {"Retry-After": "1"})])
    cache = JudgmentCache(":memory:")
    started = time.monotonic()
    run = judge_all(config(server.url), items(1), cache)
    elapsed = time.monotonic() - started
    assert run.results[0] is not None and run.results[0].status == "ok"
    assert run.results[0].value == expected_grade(items(1)[0])
    assert run.results[0].retries == 1 and run.summary.retries == 1
    assert elapsed >= 1.0  # waited as told, not the 10 ms backoff
    assert sum(server.state.seen.values()) == 2


def test_retry_after_http_date() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 7, usegmt=True)
    assert parse_retry_after(date, now=now) == pytest.approx(7.0)
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    assert parse_retry_after("-3") == 0.0


def test_5xx_then_success(server: FakeServer) -> None:
    server.state.script.extend([("status", 500), ("status", 503), ("status", 502)])
    run = judge_all(config(server.url), items(1), JudgmentCache(":memory:"))
    assert run.results[0] is not None and run.results[0].status == "ok"
    assert run.results[0].retries == 3


def test_dropped_connection_is_retried(server: FakeServer) -> None:
    server.state.script.extend([("drop",), ("drop",)])
    run = judge_all(config(server.url), items(1), JudgmentCache(":memory:"))
    assert run.results[0] is not None and run.results[0].status == "ok"
    assert run.results[0].retries == 2


def test_timeout_is_retried(server: FakeServer) -> None:
    server.state.script.extend([("delay", 3.0)])
    started = time.monotonic()
    run = judge_all(config(server.url, timeout=0.3), items(1), JudgmentCache(":memory:"))
    assert run.results[0] is not None and run.results[0].status == "ok"
    assert run.results[0].retries == 1
    assert time.monotonic() - started < 2.5  # did not wait for the slow reply


def test_malformed_json_body_is_retried(server: FakeServer) -> None:
    server.state.script.extend([("malformed",)])
    run = judge_all(config(server.url), items(1), JudgmentCache(":memory:"))
    assert run.results[0] is not None and run.results[0].status == "ok"
    assert run.results[0].retries == 1


def test_exhausted_retries_fail_without_caching_then_rerun_succeeds(
    server: FakeServer, tmp_path: Path
) -> None:
    its = items(3)
    bad = its[1].inputs["query"]
    server.state.rules.append((bad + "\n", ("status", 500)))
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        run = judge_all(config(server.url, max_retries=2), its, cache)
        assert run.summary.failures == 1 and run.summary.judged == 2
        assert run.results[1] is None  # nothing stored for the failed pair
        assert len(cache) == 2
        assert any("gave up after 2 retries" in e for e in run.summary.errors)
    server.state.rules.clear()
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        run = judge_all(config(server.url), its, cache)
    assert run.summary.cached == 2 and run.summary.calls == 1 and run.summary.failures == 0
    assert [j.value for j in run.results if j is not None] == [expected_grade(i) for i in its]


def test_garbage_reply_is_unparsed_minus_one_with_raw_text_and_cached(
    server: FakeServer, tmp_path: Path
) -> None:
    server.state.script.extend([("garbage",)])
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        run = judge_all(config(server.url), items(1), cache)
        j = run.results[0]
        assert j is not None and j.value == -1 and j.status == "unparsed"
        assert j.raw == "~~ ??? ~~"
        assert run.summary.unparsed == 1
        row = cache.rows("relevance")[0]
        assert row["value"] == "-1" and row["raw"] == "~~ ??? ~~" and row["status"] == "unparsed"
        assert row["answered_by"] == "test-model" and row["input_tokens"] > 0
    before = sum(server.state.seen.values())
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        again = judge_all(config(server.url), items(1), cache)
    assert again.summary.cached == 1 and sum(server.state.seen.values()) == before


def test_lenient_parse_is_counted(server: FakeServer) -> None:
    server.state.script.extend([("reply", "Grade: **4** (highly relevant)")])
    run = judge_all(config(server.url), items(1), JudgmentCache(":memory:"))
    assert run.results[0] is not None and run.results[0].value == 4
    assert run.results[0].status == "lenient" and run.summary.lenient == 1


def test_401_stops_the_run(server: FakeServer) -> None:
    server.state.rules.append(("query", ("status", 401)))
    run = judge_all(config(server.url), items(5), JudgmentCache(":memory:"))
    assert run.summary.fatal is not None and "401" in run.summary.fatal
    assert run.summary.judged == 0
    assert sum(server.state.seen.values()) == 1  # no retry of a fatal status
    # the refused request is a failure (the summary never says "failures 0" here)
    assert run.summary.failures == 1 and run.summary.calls == 1
    assert run.summary.left_out == {"failed": 1, "not judged": 4} and not run.complete
    assert sorted(m.reason for m in run.missing) == ["failed"] + ["not judged"] * 4
    assert "401" in next(m.detail for m in run.missing if m.reason == "failed")


def test_unreachable_server_stops_the_run() -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = config(f"http://127.0.0.1:{port}/v1", max_retries=1, concurrency=2)
    run = judge_all(cfg, items(50), JudgmentCache(":memory:"))
    assert run.summary.fatal is not None and "cannot reach" in run.summary.fatal
    assert run.summary.judged == 0 and run.summary.calls <= 2
    # each request that stopped the run is counted as failed, with its reason
    assert 1 <= run.summary.failures <= 2
    assert run.summary.left_out["failed"] == run.summary.failures
    assert run.summary.left_out["not judged"] == 50 - run.summary.failures
    lines = "\n".join(run.summary.lines())
    assert "failures 0" not in lines and "cannot reach" in lines


def test_400_fails_that_request_only(server: FakeServer) -> None:
    its = items(3)
    server.state.rules.append((its[0].inputs["query"] + "\n", ("status", 400)))
    run = judge_all(config(server.url), its, JudgmentCache(":memory:"))
    assert run.summary.failures == 1 and run.summary.judged == 2 and run.summary.retries == 0


# -- request, tokens, cost ------------------------------------------------------------------


def test_request_carries_temperature_zero_seed_and_model(server: FakeServer) -> None:
    judge_all(config(server.url, seed=123), items(1), JudgmentCache(":memory:"))
    request = server.state.requests[0]
    assert request["temperature"] == 0 and request["seed"] == 123
    assert request["model"] == "test-model" and request["max_tokens"] == 8
    assert request["messages"][0]["role"] == "system"


def test_usage_from_server_else_estimated(server: FakeServer) -> None:
    from ragmeter.judges.config import Price

    its = items(2)
    run = judge_all(config(server.url), its, JudgmentCache(":memory:"), price=Price(1.0, 2.0))
    # the server reports prompt_tokens = ceil(len(user prompt)/4), completion_tokens = 1
    prompts = [make_task("relevance").messages(i.inputs)[-1]["content"] for i in its]
    expected_in = sum(-(-len(p) // 4) for p in prompts)
    assert run.summary.input_tokens == expected_in and run.summary.output_tokens == 2
    assert not run.summary.tokens_estimated
    assert run.summary.cost == pytest.approx((expected_in * 1.0 + 2 * 2.0) / 1e6)
    server.state.send_usage = False
    more = judge_all(config(server.url), items(1, "other "), JudgmentCache(":memory:"))
    assert more.summary.tokens_estimated
    assert more.summary.cost is None  # no price known: unknown, never 0
    assert "cost unknown" in "\n".join(more.summary.lines())


# -- cache keys -----------------------------------------------------------------------------


def test_changed_model_or_seed_is_a_new_judgment(server: FakeServer, tmp_path: Path) -> None:
    its = items(2)
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        assert judge_all(config(server.url), its, cache).summary.calls == 2
        assert judge_all(config(server.url), its, cache).summary.calls == 0
        assert judge_all(config(server.url, model="other"), its, cache).summary.calls == 2
        assert judge_all(config(server.url, seed=7), its, cache).summary.calls == 2
        assert judge_all(config(server.url, temperature=0.5), its, cache).summary.calls == 2
        assert judge_all(config(server.url), its, cache).summary.cached == 2
        assert judge_all(config(server.url), its, cache, refresh=True).summary.calls == 2


def test_duplicate_items_are_asked_once(server: FakeServer) -> None:
    its = items(3) + items(3)
    run = judge_all(config(server.url), its, JudgmentCache(":memory:"))
    assert run.summary.calls == 3 and run.summary.unique == 3
    assert [j.value for j in run.results if j] == [expected_grade(i) for i in its]


# -- several servers, concurrency, limits ---------------------------------------------------


def test_requests_spread_over_servers_and_retries_move_to_a_healthy_one() -> None:
    with FakeServer(latency=0.01) as a, FakeServer(latency=0.01) as b:
        run = judge_all(config(a.url, b.url, concurrency=8), items(80), JudgmentCache(":memory:"))
        assert run.summary.judged == 80
        na, nb = sum(a.state.seen.values()), sum(b.state.seen.values())
        assert na + nb == 80 and min(na, nb) >= 20
        a.state.rules.append(("", ("status", 503)))  # a is down
        run = judge_all(
            config(a.url, b.url, concurrency=4, max_retries=2),
            items(20, "x "),
            JudgmentCache(":memory:"),
        )
        assert run.summary.judged == 20 and run.summary.failures == 0


def test_concurrency_is_bounded(server: FakeServer) -> None:
    server.state.latency = 0.05
    started = time.monotonic()
    run = judge_all(config(server.url, concurrency=5), items(20), JudgmentCache(":memory:"))
    assert run.summary.judged == 20
    assert server.state.max_active == 5  # never more than 5 requests in flight
    assert time.monotonic() - started >= 0.2  # 20 requests of 50 ms, 5 at a time


def test_rpm_limit_spaces_requests(server: FakeServer) -> None:
    cfg = config(server.url, concurrency=8, rpm=1200)  # 20/s, bursts of 20
    started = time.monotonic()
    run = judge_all(cfg, items(40), JudgmentCache(":memory:"))
    assert run.summary.judged == 40
    assert time.monotonic() - started >= 0.9  # 20 at once, then 20 more over ~1 s


def test_token_bucket_waits_for_tokens() -> None:
    async def go() -> float:
        bucket = TokenBucket(60 * 100)  # 100 tokens/s, capacity 100
        started = time.monotonic()
        await bucket.acquire(100)
        await bucket.acquire(50)  # needs 0.5 s of refill
        bucket.adjust(-50)  # the last request used 50 fewer than reserved
        await bucket.acquire(50)  # available at once
        return time.monotonic() - started

    elapsed = asyncio.run(go())
    assert 0.4 <= elapsed < 1.0


def test_inside_a_running_event_loop(server: FakeServer) -> None:
    from ragmeter.judges.runner import arun_judgments

    async def in_a_notebook() -> Any:
        judge = LLMJudge(config(server.url, concurrency=4))
        return await arun_judgments(
            make_task("relevance"), items(10), judge, cache=JudgmentCache(":memory:")
        )

    run = asyncio.run(in_a_notebook())
    assert [j.value for j in run.results if j] == [expected_grade(i) for i in items(10)]


def test_prompt_the_server_sees_contains_the_inputs(server: FakeServer) -> None:
    judge_all(config(server.url), items(1), JudgmentCache(":memory:"))
    prompt = prompt_of(server.state.requests[0])
    assert "Query: query 0" in prompt and "Passage: passage 0" in prompt


# -- the size of a reply ---------------------------------------------------------------------


def test_a_reply_past_the_size_cap_fails_uncached_and_is_not_retried(
    server: FakeServer, tmp_path: Path
) -> None:
    its = items(3)
    server.state.rules.append(("query 1", ("big", 5000)))
    cfg = config(server.url, max_reply_bytes=2000)
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        run = judge_all(cfg, its, cache)
        assert [m.ident for m in run.missing] == [("q1", "d1")]
        assert run.missing[0].reason == "failed"
        assert "reply too large" in run.missing[0].detail
        assert "Content-Length 5,000 bytes, more than the cap of 2,000 bytes" in (
            run.missing[0].detail
        )
        assert run.summary.failures == 1 and run.summary.retries == 0
        # not retried (the same reply would be read again), not cached
        prompt = make_task("relevance").messages(its[1].inputs)[-1]["content"]
        assert server.state.seen[prompt] == 1
        assert len(cache) == 2
    # under the cap the same reply is an ordinary completion
    with JudgmentCache(":memory:") as cache:
        assert judge_all(config(server.url, max_reply_bytes=6000), its, cache).complete


def test_a_gzip_bomb_is_stopped_at_the_cap_never_inflated_whole(server: FakeServer) -> None:
    import tracemalloc

    its = items(2)
    inflated = 64 << 20  # 64 MiB of spaces in a ~64 KB gzip body
    server.state.rules.append(("query", ("bomb", inflated)))
    cfg = config(server.url, max_reply_bytes=64 << 10, max_retries=0)
    tracemalloc.start()
    try:
        with JudgmentCache(":memory:") as cache:
            run = judge_all(cfg, its, cache)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [m.reason for m in run.missing] == ["failed", "failed"]
    assert all(
        "more bytes (decompressed) than the cap of 65,536 bytes" in m.detail for m in run.missing
    )
    assert peak < 16 << 20, f"peak {peak / 2**20:.0f} MiB: the body was inflated whole"


def test_max_reply_bytes_from_the_config_file_and_refused_when_not_whole(tmp_path: Path) -> None:
    from ragmeter.judges.config import DEFAULT_MAX_REPLY_BYTES, resolve_config
    from ragmeter.judges.errors import JudgeConfigError

    base = {"base_urls": ["http://127.0.0.1:1/v1"], "model": "m", "environ": {}}
    assert resolve_config(**base).max_reply_bytes == DEFAULT_MAX_REPLY_BYTES == 4 * 2**20
    toml = tmp_path / "ragmeter.toml"
    toml.write_text("[judge]\nmax_reply_bytes = 10000\n")
    assert resolve_config(**base, config_file=toml).max_reply_bytes == 10000
    assert resolve_config(**base, config_file=toml, max_reply_bytes=5).max_reply_bytes == 5
    toml.write_text('[judge]\nmax_reply_bytes = "4MB"\n')
    with pytest.raises(JudgeConfigError, match="max_reply_bytes must be a whole number"):
        resolve_config(**base, config_file=toml)
    with pytest.raises(JudgeConfigError, match="max reply bytes must be ≥ 1"):
        resolve_config(**base, max_reply_bytes=0)
