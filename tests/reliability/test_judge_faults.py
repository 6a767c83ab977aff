"""The judge against a server that misbehaves in every way we know of, at a 30 % fault rate:
429 with Retry-After, 500/502/503, hangs past the timeout, truncated JSON, short bodies,
empty ``choices``, ``content: null`` or empty, wrong types, HTML, a 204, an interim 100
Continue, connection resets and drops. The labels must equal a fault-free run's, no answered
pair may be asked twice, and a reply that is not a completion is never cached."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")

from typer.testing import CliRunner

from judge_server import FAULTS, NOT_COMPLETIONS, FakeServer, stable_grade
from ragmeter.judges import JudgeConfig, judge_relevance, make_task, write_qrels
from ragmeter.judges.cache import JudgmentCache
from ragmeter.judges.llm import LLMJudge
from ragmeter.judges.runner import run_judgments
from ragmeter.judges.types import JudgeItem

FAULT_RATE = 0.3


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        yield s


def config(url: str, **changes: Any) -> JudgeConfig:
    base: dict[str, Any] = {
        "model": "m",
        "concurrency": 8,
        "max_retries": 6,
        "timeout": 2.0,  # far above a reply's latency on a loaded machine: only hangs time out
        "backoff_base": 0.01,
        "backoff_cap": 0.05,
    }
    return JudgeConfig(base_urls=(url,), **(base | changes))


def collection(
    n_queries: int, depth: int
) -> tuple[dict[str, list[str]], dict[str, str], dict[str, str]]:
    run = {f"q{i}": [f"d{(7 * i + r) % 97}" for r in range(depth)] for i in range(n_queries)}
    queries = {f"q{i}": f"what about topic {i}?" for i in range(n_queries)}
    corpus = {f"d{j}": f"passage {j} on topic {j % 11}" for j in range(97)}
    return run, queries, corpus


def faulty(server: FakeServer) -> FakeServer:
    server.state.fault_rate = FAULT_RATE
    server.state.fault_seed = 20
    return server


def test_labels_under_30_percent_faults_equal_a_fault_free_run(tmp_path: Path) -> None:
    run, queries, corpus = collection(12, 20)  # 240 pairs
    with FakeServer() as clean:
        reference = judge_relevance(run, queries, corpus, judge=config(clean.url))
    assert reference.complete and len(reference.missing) == 0
    with FakeServer() as server:
        faulty(server)
        cache = tmp_path / "c.sqlite"
        judge = LLMJudge(config(server.url))
        out = judge_relevance(run, queries, corpus, judge=judge, cache=cache)
        state = server.state
        assert sum(state.injected.values()) >= 60  # the faults did happen, of every kind
        assert set(state.injected) == {f[0] for f in FAULTS}
        assert out.complete, out.missing[:5]
        assert out.labels == reference.labels
        assert out.summary.left_out == {} and out.summary.failures == 0
        # each fault cost a retry, but a 100 Continue (skipped); a connection closed or reset
        # before any byte of the answer costs one, or none where the pool reopens it
        silent = state.injected["continue"] + state.injected["drop"] + state.injected["reset"]
        assert out.summary.retries >= sum(state.injected.values()) - silent
        # every pair answered exactly once, and never asked again after its answer
        assert len(state.answered) == 240 and set(state.answered.values()) == {1}
        assert state.asked_after_answer == 0
        # a rerun asks nothing and is still complete
        asked = sum(state.seen.values())
        again = judge_relevance(run, queries, corpus, judge=config(server.url), cache=cache)
        assert sum(state.seen.values()) == asked
        assert again.complete and again.labels == reference.labels
    write_qrels(out.labels, tmp_path / "faulty.txt")
    write_qrels(reference.labels, tmp_path / "clean.txt")
    assert (tmp_path / "faulty.txt").read_text() == (tmp_path / "clean.txt").read_text()


def test_cli_under_faults_writes_the_fault_free_qrels_and_exits_0(tmp_path: Path) -> None:
    from ragmeter.cli import app

    run, queries, corpus = collection(3, 20)  # 60 pairs
    files = {}
    for name, texts in (("queries", queries), ("corpus", corpus)):
        files[name] = tmp_path / f"{name}.jsonl"
        files[name].write_text(
            "".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in texts.items())
        )
    files["run"] = tmp_path / "run.txt"
    files["run"].write_text(
        "".join(
            f"{q} Q0 {d} {r + 1} {100 - r} s\n" for q, ds in run.items() for r, d in enumerate(ds)
        )
    )

    def judge(server: FakeServer, name: str) -> tuple[Any, str]:
        out = tmp_path / f"{name}.txt"
        args = [
            "judge",
            "relevance",
            "--run",
            str(files["run"]),
            "--queries",
            str(files["queries"]),
        ]
        args += ["--corpus", str(files["corpus"]), "--out", str(out), "--base-url", server.url]
        args += ["--model", "m", "--cache", str(tmp_path / f"{name}.sqlite"), "--quiet"]
        args += ["--timeout", "2", "-j", "8"]
        result = CliRunner().invoke(app, args, catch_exceptions=False)
        return result, out.read_text()

    with FakeServer() as clean:
        ok, reference = judge(clean, "clean")
    assert ok.exit_code == 0, ok.output
    with FakeServer() as server:
        result, qrels = judge(faulty(server), "faulty")
        assert sum(server.state.injected.values()) >= 10
        assert server.state.asked_after_answer == 0
    assert result.exit_code == 0, result.output
    assert "labelled 60 of 60 items" in result.output
    assert qrels == reference and len(qrels.splitlines()) == 60


@pytest.mark.parametrize(
    "fault",
    [f for f in FAULTS if f[0] in NOT_COMPLETIONS or f[0] in ("short", "reset", "malformed")],
    ids=lambda f: "-".join(str(x) for x in f),
)
def test_each_reply_that_is_not_a_completion_is_retried(server: FakeServer, fault: Any) -> None:
    item = JudgeItem(("q", "d"), {"query": "what?", "passage": "this."})
    server.state.script.append(fault)
    cache = JudgmentCache(":memory:")
    run = run_judgments(make_task("relevance"), [item], LLMJudge(config(server.url)), cache=cache)
    j = run.results[0]
    assert j is not None and j.status == "ok" and j.retries == 1, run.summary.errors
    prompt = make_task("relevance").messages(item.inputs)[-1]["content"]
    assert j.value == stable_grade(prompt) and run.complete


def test_interim_100_continue_is_skipped(server: FakeServer) -> None:
    item = JudgeItem(("q", "d"), {"query": "what?", "passage": "this."})
    server.state.script.append(("continue",))
    run = run_judgments(
        make_task("relevance"),
        [item],
        LLMJudge(config(server.url)),
        cache=JudgmentCache(":memory:"),
    )
    j = run.results[0]
    assert j is not None and j.status == "ok" and j.retries == 0


@pytest.mark.parametrize("kind", ["null", "empty", "no_choices"])
def test_a_persistent_non_completion_fails_the_pair_uncached(
    server: FakeServer, tmp_path: Path, kind: str
) -> None:
    """The reported loss: such replies used to be cached as unparsed (−1) and never asked
    again. Now the pair fails, is not cached, is listed as missing, and a rerun asks it."""
    run, queries, corpus = collection(1, 3)
    victim = "passage 7 on"  # q0's first passage is d0; d7 is its second
    run["q0"] = ["d0", "d7", "d14"]
    server.state.rules.append((victim, (kind,)))
    cache = tmp_path / "c.sqlite"
    cfg = config(server.url, max_retries=2)
    out = judge_relevance(run, queries, corpus, judge=cfg, cache=cache)
    assert not out.complete and out.summary.left_out == {"failed": 1}
    [missing] = out.missing
    assert missing.ident == ("q0", "d7") and missing.reason == "failed"
    assert "not a completion" in missing.detail and "gave up after 2 retries" in missing.detail
    assert out.labels == {"q0": {"d0": out.labels["q0"]["d0"], "d14": out.labels["q0"]["d14"]}}
    with JudgmentCache(cache) as opened:
        assert len(opened) == 2  # the failed pair is not cached
    lines = "\n".join(out.summary.lines())
    assert "INCOMPLETE: 1 of 3 items have no label" in lines and "failed 1" in lines
    server.state.rules.clear()
    again = judge_relevance(run, queries, corpus, judge=cfg, cache=cache)
    assert (
        again.complete
        and again.summary.calls == 1
        and set(again.labels["q0"])
        == {
            "d0",
            "d7",
            "d14",
        }
    )
