"""``python -m ragmeter.judges.testserver``, the stand-in judge server of the docs (no model,
no key): its replies to ragmeter's own prompts, worked out by hand from word overlap, and the
judge commands run against it end to end; ``--offline`` with UMBRELA's prompt refused in one
line."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.judges.tasks import make_task
from ragmeter.judges.testserver import best_sentence, make_server, overlap, reply

# query content words: tram, fares, weekday ("on", "a" too short; "are" a stop word)
QUERY = "Tram fares on a weekday"
PASSAGES = {
    "d1": "Tram fares on a weekday are low.",  # 3 of 3 → UMBRELA 3, relevance 5
    "d2": "Fares change.",  # 1 of 3 → UMBRELA round(1.0) = 1, relevance 1 + round(1.33) = 2
    "d3": "Nothing here.",  # 0 of 3 → 0 and 1
}


def user(task: str, **inputs: str) -> str:
    return make_task(task).messages(inputs)[-1]["content"]


def test_replies_from_word_overlap_by_hand() -> None:
    assert overlap(QUERY, PASSAGES["d2"]) == pytest.approx(1 / 3)
    for task, expected in (
        ("umbrela", {"d1": "##final score: 3", "d2": "##final score: 1", "d3": "##final score: 0"}),
        ("umbrela-fewshot", {"d1": "##final score: 3", "d2": "##final score: 1"}),
        ("relevance", {"d1": "5", "d2": "2", "d3": "1"}),
    ):
        for doc, text in expected.items():
            assert reply(user(task, query=QUERY, passage=PASSAGES[doc])) == text, (task, doc)
    passage = "The annual pass costs 560 euros. Trams run all night."
    question = "How much does the annual pass cost?"  # annual, pass shared with sentence 1
    assert best_sentence(passage, question) == "The annual pass costs 560 euros"
    assert reply(user("erag", query=question, passage=passage)) == (
        "The annual pass costs 560 euros"
    )
    assert reply("What is 2 + 2?") is None  # not one of ragmeter's prompts


def test_the_model_list_answers_so_a_script_can_wait_for_the_server(stand_in: str) -> None:
    import urllib.request

    with urllib.request.urlopen(f"{stand_in}/models", timeout=10) as answer:
        assert json.loads(answer.read())["data"][0]["id"] == "stand-in"


@pytest.fixture
def stand_in() -> Iterator[str]:
    server = make_server(port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def files(tmp_path: Path) -> list[str]:
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q1", "text": QUERY}) + "\n")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in PASSAGES.items()))
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\n")
    return ["--run", str(run), "--queries", str(queries), "--corpus", str(corpus)]


def invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize(
    ("prompt", "grades"), [("umbrela", ["3", "1", "0"]), ("relevance", ["5", "2", "1"])]
)
def test_judge_relevance_against_the_stand_in(
    stand_in: str, tmp_path: Path, prompt: str, grades: list[str]
) -> None:
    pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")
    out = tmp_path / "qrels.txt"
    args = ["judge", "relevance", *files(tmp_path), "--prompt", prompt, "--out", str(out)]
    args += ["--base-url", stand_in, "--model", "stand-in", "--cache", str(tmp_path / "c.db")]
    result = invoke([*args, "-q"])
    assert result.exit_code == 0, result.output
    assert [line.split()[3] for line in out.read_text().splitlines()] == grades
    assert '"model": "stand-in"' in (tmp_path / "qrels.txt.provenance.jsonl").read_text()


def test_a_prompt_the_stand_in_does_not_answer_fails_the_request(stand_in: str) -> None:
    import urllib.error
    import urllib.request

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    request = urllib.request.Request(
        f"{stand_in}/chat/completions", body.encode(), {"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400
    assert "answers ragmeter's relevance, umbrela" in caught.value.read().decode()


def test_offline_with_the_umbrela_prompt_is_one_clear_line(tmp_path: Path) -> None:
    out = tmp_path / "o.txt"
    args = ["judge", "relevance", *files(tmp_path), "--offline", "--prompt", "umbrela"]
    result = invoke([*args, "--out", str(out), "--cache", str(tmp_path / "c.db"), "-q"])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "--offline cannot judge with --prompt umbrela" in lines[0]
    assert "use an LLM judge (--base-url URL --model NAME)" in lines[0]
    assert "python -m ragmeter.judges.testserver" in lines[0]
    assert not out.exists()
