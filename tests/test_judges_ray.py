"""``ragmeter judge`` fanned out over a local Ray cluster: each task talks to one of the fake
servers of the judge tests, chunks dealt to the servers in turn; the one cache gets every
judgment (no loss), cached items are never sent and no item is asked twice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")

from judge_server import FakeServer, prompt_of
from ragmeter.evaluation.partitioned import Engine
from ragmeter.io.readers import read_run
from ragmeter.judges.api import relevance_job
from ragmeter.judges.cache import JudgmentCache
from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.fanout import run_judgments_on_ray
from ragmeter.judges.llm import LLMJudge
from test_judges_cli import collection, invoke


@pytest.fixture
def servers() -> Iterator[tuple[FakeServer, FakeServer]]:
    with FakeServer() as a, FakeServer() as b:
        yield a, b


def _job(tmp: Path, n_queries: int, n_docs: int, depth: int | None = None) -> object:
    """The relevance job of the top ``depth`` (default: all) of a collection's run."""
    from ragmeter.io.judgments import read_corpus

    files = collection(tmp, n_queries, n_docs)
    return relevance_job(
        [read_run(files["run"])],
        read_corpus(files["queries"]),
        read_corpus(files["corpus"]),
        depth=depth if depth is not None else n_docs,
    )


def test_fan_out_asks_each_uncached_item_once(
    ray_cluster: object, servers: tuple[FakeServer, FakeServer], tmp_path: Path
) -> None:
    a, b = servers
    config = JudgeConfig(base_urls=(a.url, b.url), model="m", concurrency=4)
    cache_path = tmp_path / "judgments.sqlite"
    # 6 queries × 5 passages; the top 2 of each judged first, here, by server a
    with JudgmentCache(cache_path) as cache:
        first = _job(tmp_path, 6, 5, depth=2)
        done = first.execute(LLMJudge(config.with_(base_urls=(a.url,))), cache=cache)  # type: ignore[attr-defined]
        assert done.complete and len(cache) == 12
    cached_prompts = set(a.state.seen)
    a.state.seen.clear()
    job = _job(tmp_path, 6, 5)
    with JudgmentCache(cache_path) as cache:
        run = run_judgments_on_ray(
            job.task,  # type: ignore[attr-defined]
            job.items,  # type: ignore[attr-defined]
            LLMJudge(config),
            cache=cache,
            engine=Engine("ray"),
            chunk_size=3,
        )
        assert len(cache) == 30  # no loss: every pair is in the one cache
    summary = run.summary
    assert run.complete and (summary.cached, summary.calls, summary.judged) == (12, 18, 18)
    asked = a.state.seen + b.state.seen
    assert sum(asked.values()) == 18 and set(asked.values()) == {1}  # each pair once
    assert not set(asked) & cached_prompts  # the cached pairs are never sent
    # 6 chunks of 3 dealt to the two servers in turn
    assert sum(a.state.seen.values()) == 9 and sum(b.state.seen.values()) == 9
    # the same labels as a run in this process with an empty cache (the servers answer
    # each prompt with the same grade)
    with FakeServer() as fresh:
        local = job.execute(LLMJudge(config.with_(base_urls=(fresh.url,))))  # type: ignore[attr-defined]
    assert [j.value for j in run.results] == [j.value for j in local.run.results]  # type: ignore[union-attr]


def test_a_refusing_server_stops_only_its_chunks(
    ray_cluster: object, servers: tuple[FakeServer, FakeServer], tmp_path: Path
) -> None:
    a, b = servers
    b.state.rules.append(("", ("status", 401)))  # every request to b is refused
    job = _job(tmp_path, 4, 4)
    config = JudgeConfig(base_urls=(a.url, b.url), model="m", max_retries=0)
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        run = run_judgments_on_ray(
            job.task,  # type: ignore[attr-defined]
            job.items,  # type: ignore[attr-defined]
            LLMJudge(config),
            cache=cache,
            engine=Engine("ray"),
            chunk_size=2,
        )
        assert len(cache) == 8  # a's 4 chunks of 2
    assert run.summary.fatal and "401" in run.summary.fatal
    reasons = [m.reason for m in run.missing]
    assert len(reasons) == 8 and set(reasons) <= {"failed", "not judged"}
    assert sum(a.state.seen.values()) == 8


def test_cli_judge_engine_ray(
    ray_cluster: object, servers: tuple[FakeServer, FakeServer], tmp_path: Path
) -> None:
    a, b = servers
    files = collection(tmp_path, 5, 4)
    out, cache = tmp_path / "qrels.txt", tmp_path / "c.sqlite"
    args = ["judge", "relevance", "--run", str(files["run"]), "--queries", str(files["queries"])]
    args += ["--corpus", str(files["corpus"]), "--depth", "4", "--out", str(out), "--quiet"]
    args += ["--base-url", a.url, "--base-url", b.url, "--model", "m", "--cache", str(cache)]
    args += ["--summary-json", str(tmp_path / "s.json")]
    result = invoke([*args, "--engine", "ray"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert (summary["calls"], summary["judged"], summary["complete"]) == (20, 20, True)
    assert len(out.read_text().splitlines()) == 20
    assert sum((a.state.seen + b.state.seen).values()) == 20
    # again: everything is cached, nothing is sent
    again = invoke([*args, "--engine", "ray"])
    assert again.exit_code == 0 and sum((a.state.seen + b.state.seen).values()) == 20
    assert {prompt_of(r) for r in a.state.requests + b.state.requests} == set(
        (a.state.seen + b.state.seen).keys()
    )
