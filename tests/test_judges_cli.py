"""``ragmeter judge …`` end to end against the local test server: outputs the rest of
ragmeter reads, dry runs, input errors, and a ``kill -9`` in the middle of a 2,000-pair job
followed by a resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")

from judge_server import FakeServer, prompt_of, stable_grade
from ragmeter.cli import app

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as s:
        yield s


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def collection(tmp: Path, n_queries: int, n_docs: int) -> dict[str, Path]:
    """Queries, passages and a TREC run ranking ``n_docs`` passages per query."""
    queries = write_jsonl(
        tmp / "queries.jsonl",
        [{"id": f"q{i}", "text": f"what about topic {i}?"} for i in range(n_queries)],
    )
    corpus = write_jsonl(
        tmp / "corpus.jsonl",
        [{"id": f"d{j}", "text": f"passage {j} on topic {j % 7}"} for j in range(n_docs + 5)],
    )
    run = tmp / "run.txt"
    run.write_text(
        "".join(
            f"q{i} Q0 d{(i + r) % (n_docs + 5)} {r + 1} {100 - r} sys\n"
            for i in range(n_queries)
            for r in range(n_docs)
        )
    )
    return {"queries": queries, "corpus": corpus, "run": run}


def invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args, catch_exceptions=False)


def common(server: FakeServer, cache: Path) -> list[str]:
    return ["--base-url", server.url, "--model", "m", "--cache", str(cache), "--quiet"]


def test_relevance_writes_qrels_that_read_back(server: FakeServer, tmp_path: Path) -> None:
    from ragmeter.io.readers import read_qrels

    files = collection(tmp_path, 3, 4)
    out = tmp_path / "qrels.txt"
    args = ["judge", "relevance", "--run", str(files["run"]), "--queries", str(files["queries"])]
    args += ["--corpus", str(files["corpus"]), "--depth", "3", "--out", str(out)]
    args += ["--summary-json", str(tmp_path / "summary.json")]
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["calls"], summary["cached"], summary["judged"]) == (9, 0, 9)
    assert summary["cost"] is None and summary["failures"] == 0 and summary["unique"] == 9
    lines = out.read_text().splitlines()
    assert len(lines) == 9  # 3 queries × depth 3
    for line in lines:
        _q, zero, _d, grade = line.split()
        assert zero == "0" and 1 <= int(grade) <= 5
    # the grade is the server's answer to that pair's prompt
    prompts = {prompt_of(r): r for r in server.state.requests}
    assert len(prompts) == 9
    qrels = read_qrels(out)
    assert qrels.n_queries == 3
    grades = sorted(int(line.split()[3]) for line in lines)
    assert grades == sorted(stable_grade(p) for p in prompts)
    assert "cache hits 0, calls 9" in result.output


def test_dry_run_sends_nothing_and_counts_cache_hits(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path, 2, 5)
    out = tmp_path / "qrels.txt"
    base = ["judge", "relevance", "--run", str(files["run"]), "--queries", str(files["queries"])]
    base += ["--corpus", str(files["corpus"]), "--depth", "5", "--out", str(out)]
    cache = tmp_path / "c.sqlite"
    result = invoke([*base, "--dry-run", "--price", "1,2", *common(server, cache)])
    assert result.exit_code == 0
    assert "10 calls to make" in result.output and "0 cached" in result.output
    assert "cost $" in result.output
    assert sum(server.state.seen.values()) == 0 and not out.exists()
    assert invoke(base + common(server, cache)).exit_code == 0
    again = invoke([*base, "--dry-run", *common(server, cache)])
    assert "10 cached, 0 calls to make" in again.output
    assert "cost unknown" in again.output


def test_dry_run_needs_no_out_and_a_run_needs_one(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path, 2, 5)
    base = ["judge", "relevance", "--run", str(files["run"]), "--queries", str(files["queries"])]
    base += ["--corpus", str(files["corpus"]), "--depth", "5"]
    cache = tmp_path / "c.sqlite"
    dry = invoke([*base, "--dry-run", *common(server, cache)])
    assert dry.exit_code == 0, dry.output
    assert "10 calls to make" in dry.output
    ensemble = ["--judge", f"url={server.url},model=a", "--judge", f"url={server.url},model=b"]
    dry_many = invoke([*base, "--dry-run", *ensemble, "--cache", str(cache), "--quiet"])
    assert dry_many.exit_code == 0, dry_many.output
    assert "judge 2: " in dry_many.output
    real = invoke(base + common(server, cache))
    assert real.exit_code == 2 and "--out FILE is needed" in real.output
    assert sum(server.state.seen.values()) == 0  # refused before any call


def test_unparsed_pairs_stay_unjudged_and_are_reported(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path, 1, 3)
    server.state.rules.append(("passage 1 on", ("garbage",)))
    out = tmp_path / "qrels.txt"
    args = ["judge", "relevance", "--run", str(files["run"]), "--queries", str(files["queries"])]
    args += ["--corpus", str(files["corpus"]), "--out", str(out)]
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 1  # the output is incomplete: said, not silent
    assert "unparsed 1" in result.output
    assert "INCOMPLETE: 1 of 3 items have no label" in result.output
    docs = [line.split()[2] for line in out.read_text().splitlines()]
    assert docs == ["d0", "d2"]  # d1 left unjudged, never written as 0
    # a rerun asks nothing but still counts the cached unparsed pair and exits 1
    before = sum(server.state.seen.values())
    again = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert again.exit_code == 1 and sum(server.state.seen.values()) == before
    assert "unparsed 1, 1 of them from the cache" in again.output
    assert "--retry-unparsed" in again.output
    # --retry-unparsed asks it again; a readable reply completes the output
    server.state.rules.clear()
    fixed = invoke([*args, "--retry-unparsed", *common(server, tmp_path / "c.sqlite")])
    assert fixed.exit_code == 0, fixed.output
    assert "cache hits 2, calls 1" in fixed.output and "labelled 3 of 3 items" in fixed.output
    assert [line.split()[2] for line in out.read_text().splitlines()] == ["d0", "d1", "d2"]


def test_failures_exit_1_and_write_the_rest(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path, 1, 3)
    server.state.rules.append(("passage 2 on", ("status", 500)))
    out = tmp_path / "qrels.txt"
    args = ["judge", "relevance", "--run", str(files["run"]), "--queries", str(files["queries"])]
    args += ["--corpus", str(files["corpus"]), "--out", str(out), "--max-retries", "1"]
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 1
    assert "failures 1" in result.output and "rerun to retry" in result.output
    assert len(out.read_text().splitlines()) == 2


def test_input_errors_name_file_line_and_field(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path, 2, 2)
    bad = tmp_path / "bad_queries.jsonl"
    bad.write_text('{"id": "q0", "text": "a"}\n{"id": "q1", "txt": "b"}\n')
    args = ["judge", "relevance", "--run", str(files["run"]), "--queries", str(bad)]
    args += ["--corpus", str(files["corpus"]), "--out", str(tmp_path / "o.txt")]
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 2
    assert "bad_queries.jsonl, line 2, field 'text'" in result.output
    missing = write_jsonl(tmp_path / "q_missing.jsonl", [{"id": "q0", "text": "a"}])
    args[5] = str(missing)
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 2 and "no text for query 'q1'" in result.output
    args[5] = str(files["queries"])
    result = invoke([*args, "--base-url", "ftp://x", "--model", "m"])
    assert result.exit_code == 2 and "expected http" in result.output
    no_server = [*args, "--model", "m", "--config", str(tmp_path / "none.toml")]
    assert "no such config file" in invoke(no_server).output


def test_config_file_and_environment(
    server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = collection(tmp_path, 1, 2)
    config = tmp_path / "ragmeter.toml"
    config.write_text(
        f'[judge]\nbase_url = ["{server.url}"]\nmodel = "from-config"\n'
        f'cache = "{tmp_path / "cfg.sqlite"}"\n[judge.prices]\n"from-config" = [1.0, 4.0]\n'
    )
    monkeypatch.setenv("MY_KEY", "sekret")
    out = tmp_path / "q.txt"
    args = ["judge", "relevance", "--run", str(files["run"]), "--queries", str(files["queries"])]
    args += ["--corpus", str(files["corpus"]), "--out", str(out), "--quiet"]
    args += ["--config", str(config), "--api-key-env", "MY_KEY"]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    assert server.state.requests[0]["model"] == "from-config"
    assert (tmp_path / "cfg.sqlite").exists()
    assert "cost $" in result.output
    monkeypatch.setenv("RAGMETER_MODEL", "from-env")
    invoke(args)
    assert server.state.requests[-1]["model"] == "from-env"


def test_answerability_writes_judgments_the_coverage_reader_reads(
    server: FakeServer, tmp_path: Path
) -> None:
    from ragmeter.io.judgments import read_answers, read_judgments

    files = collection(tmp_path, 2, 3)
    questions = write_jsonl(
        tmp_path / "qs.jsonl",
        [
            {"query_id": "q0", "questions": ["who?", "when?"]},
            {"query_id": "q1", "questions": ["where?", "why?", "how?"]},
        ],
    )
    server.state.responder = lambda r: str(stable_grade(prompt_of(r), 0, 5))
    server.state.rules.append(("Question: why?", ("garbage",)))
    out = tmp_path / "judgments.jsonl"
    args = ["judge", "answerability", "--questions", str(questions), "--run", str(files["run"])]
    args += ["--corpus", str(files["corpus"]), "--depth", "2", "--out", str(out)]
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 1, result.output  # two cells unparsed: incomplete
    assert "unparsed 2" in result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["query_id"], r["doc_id"]) for r in rows] == [
        ("q0", "d0"),
        ("q0", "d1"),
        ("q1", "d1"),
        ("q1", "d2"),
    ]
    assert all(r["ratings"][1] == -1 for r in rows if r["query_id"] == "q1")  # unparsed
    judgments = read_judgments(out, questions=questions)
    assert judgments.query_ids.tolist() == ["q0", "q1"]
    # a generated answer as the passage
    answers = write_jsonl(tmp_path / "answers.jsonl", [{"id": "q0", "text": "Ann, in 1999."}])
    rated = tmp_path / "rated.jsonl"
    args = ["judge", "answerability", "--questions", str(questions), "--answers", str(answers)]
    result = invoke([*args, "--out", str(rated), *common(server, tmp_path / "c.sqlite")])
    assert result.exit_code == 0, result.output
    got = read_answers(rated)
    assert len(got.query_ids) == 1


def test_subquestions_writes_what_the_crux_reader_reads(server: FakeServer, tmp_path: Path) -> None:
    from ragmeter.io.judgments import read_questions

    queries = write_jsonl(tmp_path / "q.jsonl", [{"id": "q0", "text": "Tell me about X."}])
    refs = write_jsonl(tmp_path / "r.jsonl", [{"id": "q0", "text": "X was born in 1900."}])
    server.state.responder = lambda r: "1. When was X born?\n2. Where was X born?\n3. Who is X?"
    out = tmp_path / "qs.jsonl"
    args = ["judge", "subquestions", "--queries", str(queries), "--references", str(refs)]
    result = invoke([*args, "--n", "3", "--out", str(out), *common(server, tmp_path / "c.sqlite")])
    assert result.exit_code == 0, result.output
    assert read_questions(out) == {"q0": ["When was X born?", "Where was X born?", "Who is X?"]}
    assert server.state.requests[0]["max_tokens"] == 48 * 3 + 16


def test_correctness_beside_keyword_overlap(server: FakeServer, tmp_path: Path) -> None:
    samples = tmp_path / "s.json"
    samples.write_text(
        json.dumps(
            [
                {
                    "id": "a",
                    "query": "capital of France?",
                    "context": ["Paris is the capital."],
                    "generated_answer": "Paris is the capital of France",
                    "reference_answer": "The capital of France is Paris",
                    "label": 1,
                },
                {
                    "id": "b",
                    "query": "capital of Spain?",
                    "context": ["Madrid."],
                    "generated_answer": "Barcelona",
                    "reference_answer": "Madrid is the capital of Spain",
                    "label": 0,
                },
            ]
        )
    )

    def verdict(request: dict[str, Any]) -> str:
        return (
            "CORRECT\nSame fact."
            if "Paris is the capital of France" in prompt_of(request)
            else "INCORRECT\nWrong city."
        )

    server.state.responder = verdict
    out = tmp_path / "correct.json"
    args = ["judge", "correctness", "--samples", str(samples), "--out", str(out)]
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    rows = {r["id"]: r for r in report["per_sample"]}
    assert rows["a"]["llm_correct"] == 1 and rows["a"]["reason"] == "Same fact."
    assert rows["b"]["llm_correct"] == 0
    # keyword overlap: kw(ref a) = {the, capital, of, france, is, paris} all in gen → 1.0
    assert rows["a"]["keyword_overlap"] == 1.0 and rows["a"]["keyword_correct"] is True
    assert rows["b"]["keyword_correct"] is False
    assert report["agreement"]["llm_vs_label"]["accuracy"] == 1.0


def test_udcg_utilities_from_first_token_logprobs(server: FakeServer, tmp_path: Path) -> None:
    import math

    from ragmeter.io.utilities import read_utilities

    files = collection(tmp_path, 1, 2)

    def logprobs(request: dict[str, Any]) -> list[tuple[str, float]]:
        if "passage 0 on" in prompt_of(request):
            return [("NO", math.log(0.6)), ("No", math.log(0.1)), ("The", math.log(0.3))]
        return [("The", math.log(0.9)), ("NO", math.log(0.05))]

    server.state.logprobs = logprobs
    out = tmp_path / "u.jsonl"
    args = ["judge", "udcg", "--run", str(files["run"]), "--queries", str(files["queries"])]
    args += ["--corpus", str(files["corpus"]), "--out", str(out)]
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 0, result.output
    assert server.state.requests[0]["logprobs"] is True
    assert server.state.requests[0]["top_logprobs"] == 20
    utilities = read_utilities(out)
    got = dict(zip(utilities.doc_ids.to_pylist(), utilities.values.tolist(), strict=True))
    assert got["d0"] == pytest.approx(1 - 0.7) and got["d1"] == pytest.approx(1 - 0.05)


# -- kill -9 and resume ---------------------------------------------------------------------


def _judge_process(files: dict[str, Path], server: FakeServer, cache: Path, out: Path) -> Any:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    args = [sys.executable, "-m", "ragmeter", "judge", "relevance", "--run", str(files["run"])]
    args += ["--queries", str(files["queries"]), "--corpus", str(files["corpus"])]
    args += ["--depth", "20", "--out", str(out), "--base-url", server.url, "--model", "m"]
    args += ["--cache", str(cache), "--concurrency", "8", "--quiet"]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_kill_9_mid_job_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    files = collection(tmp_path, 100, 20)  # 2,000 pairs
    concurrency = 8
    with FakeServer(latency=0.002) as server:
        cache = tmp_path / "resumed.sqlite"
        out = tmp_path / "resumed.txt"
        proc = _judge_process(files, server, cache, out)
        deadline = time.monotonic() + 60
        while sum(server.state.seen.values()) < 700 and time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"the judge ended before the kill: {proc.stdout.read()!r}")  # type: ignore[union-attr]
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert not out.exists()  # output is written only at the end
        seen_at_kill = sum(server.state.seen.values())
        assert 700 <= seen_at_kill < 2000
        resumed = _judge_process(files, server, cache, out)
        log = resumed.communicate(timeout=120)[0].decode()
        assert resumed.returncode == 0, log
        counts = list(server.state.seen.values())
    # every pair asked; at most the `concurrency` pairs in flight at the kill asked twice
    assert len(counts) == 2000 and max(counts) <= 2
    assert sum(counts) - 2000 <= concurrency
    cached_before = int(log.split("cache hits ")[1].split(",")[0])
    assert cached_before >= seen_at_kill - concurrency
    with FakeServer() as fresh:  # the same deterministic answers, an empty cache
        clean_out = tmp_path / "clean.txt"
        args = ["judge", "relevance", "--run", str(files["run"])]
        args += ["--queries", str(files["queries"]), "--corpus", str(files["corpus"])]
        args += ["--depth", "20", "--out", str(clean_out), "--concurrency", "32"]
        assert invoke(args + common(fresh, tmp_path / "clean.sqlite")).exit_code == 0
        assert sum(fresh.state.seen.values()) == 2000
    resumed_lines = out.read_text().splitlines()
    assert resumed_lines == clean_out.read_text().splitlines()
    pairs = [tuple(line.split()[:3]) for line in resumed_lines]
    assert len(pairs) == 2000 and len(set(pairs)) == 2000  # none lost, none duplicated


def test_ctrl_c_keeps_what_was_judged_and_exits_130(tmp_path: Path) -> None:
    import sqlite3

    files = collection(tmp_path, 50, 20)  # 1,000 pairs: ≥ 0.5 s of work left at the signal
    cache = tmp_path / "c.sqlite"

    def cached() -> int:
        try:
            with sqlite3.connect(cache) as db:
                return int(db.execute("SELECT count(*) FROM judgments").fetchone()[0])
        except sqlite3.Error:
            return 0

    with FakeServer(latency=0.005) as server:
        proc = _judge_process(files, server, cache, tmp_path / "out.txt")
        deadline = time.monotonic() + 60
        while cached() < 50 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        log = proc.communicate(timeout=60)[0].decode()
    assert proc.returncode == 130, log
    assert "interrupted: every judgment so far is cached" in log
    assert not (tmp_path / "out.txt").exists()
    judged = int(log.split("judged ")[1].split(" ")[0])
    assert judged == cached() >= 50


def test_example_collection_judged_then_evaluated(server: FakeServer, tmp_path: Path) -> None:
    """The chain docs/judges.md shows: judge the example collection, evaluate with the labels,
    compare the judge with the human qrels."""
    from ragmeter.data import example_path

    # a run: each query's judged pool in file order, cut by --depth 5 when judged
    pools: dict[str, list[str]] = {}
    for line in example_path("qrels.txt").read_text().splitlines():
        q, _, d, _ = line.split()
        pools.setdefault(q, []).append(d)
    run = tmp_path / "run.txt"
    run.write_text(
        "".join(
            f"{q} Q0 {d} {r + 1} {100 - r} pool\n"
            for q, docs in pools.items()
            for r, d in enumerate(docs[:10])
        )
    )
    server.state.responder = lambda r: str(stable_grade(prompt_of(r), 0, 5))
    cache = tmp_path / "c.sqlite"
    qrels = tmp_path / "llm_qrels.txt"
    server.state.responder = lambda r: str(stable_grade(prompt_of(r)))
    args = [
        "judge",
        "relevance",
        "--run",
        str(run),
        "--queries",
        str(example_path("queries.jsonl")),
    ]
    args += ["--corpus", str(example_path("corpus.jsonl")), "--depth", "5", "--out", str(qrels)]
    assert invoke(args + common(server, cache)).exit_code == 0
    assert len(qrels.read_text().splitlines()) == 30 * 5
    result = invoke(["evaluate", str(run), "--qrels", str(qrels), "-m", "ra_nwg@5", "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["metrics"]["ra_nwg@5"]["n"] == 30
    result = invoke(["agreement", str(example_path("qrels.txt")), str(qrels), "-f", "json"])
    assert result.exit_code == 0 and json.loads(result.output)["n_common"] == 150

    server.state.responder = lambda r: str(stable_grade(prompt_of(r), 0, 5))
    judgments = tmp_path / "judgments.jsonl"
    questions = str(example_path("subquestions.jsonl"))
    args = ["judge", "answerability", "--questions", questions, "--run", str(run)]
    args += ["--corpus", str(example_path("corpus.jsonl")), "--depth", "5"]
    assert invoke([*args, "--out", str(judgments), *common(server, cache)]).exit_code == 0
    result = invoke(
        [
            "evaluate",
            str(run),
            "--judgments",
            str(judgments),
            "--questions",
            questions,
            "-f",
            "json",
        ]
    )
    assert result.exit_code == 0, result.output
    assert "coverage" in json.loads(result.output)["runs"][0]["metrics"]


def test_a_reply_past_max_reply_bytes_fails_with_a_clear_line(
    server: FakeServer, tmp_path: Path
) -> None:
    files = collection(tmp_path, 1, 3)
    server.state.rules.append(("passage 2 on", ("big", 50_000)))
    out = tmp_path / "qrels.txt"
    args = ["judge", "relevance", "--run", str(files["run"]), "--queries", str(files["queries"])]
    args += ["--corpus", str(files["corpus"]), "--out", str(out), "--max-reply-bytes", "10000"]
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 1
    assert "failures 1" in result.output
    assert "reply too large" in result.output and "cap of 10,000 bytes" in result.output
    assert len(out.read_text().splitlines()) == 2
