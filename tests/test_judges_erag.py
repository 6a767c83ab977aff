"""``ragmeter judge erag``: eRAG labels (each passage alone to the generator, its answer scored
against the gold answers) with the local test server as the generator; side by side with
eRAG's own ``eval`` (ported below, MIT licence) on the same generator outputs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")

from judge_server import FakeServer, prompt_of
from ragmeter.cli import app
from ragmeter.judges.erag import label_of, score_answer
from ragmeter.judges.tasks import parse_answer

# -- the generator: the fake server answers with the text after "the answer is" -------------

_PROMPT = re.compile(r"Passage: (?P<passage>.*?)\n\nQuestion: (?P<query>.*?)\n\n", re.DOTALL)


def generate(query: str, passage: str) -> str:
    """The fake generator's answer to (query, passage): what follows "the answer is" in the
    passage, else "no idea"."""
    _, found, rest = passage.partition("the answer is ")
    return rest.rstrip(".") if found else "no idea"


def respond(request: dict[str, Any]) -> str:
    match = _PROMPT.search(prompt_of(request))
    assert match is not None, prompt_of(request)
    return generate(match["query"], match["passage"])


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(respond) as s:
        yield s


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


ANSWERS = ["red", "red car", "blue", "the Blue", "green", "no answer here"]
GOLD = {"q0": ["red"], "q1": ["blue car", "blue"], "q2": ["green"]}


def collection(tmp: Path) -> dict[str, Path]:
    """Four queries ranking the six passages in turn; q3 has no gold answers (listed empty)
    and q4 is absent from the gold file: both are NA."""
    corpus = [
        {
            "id": f"d{j}",
            "text": f"note {j}: the answer is {a}." if a != "no answer here" else "nothing",
        }
        for j, a in enumerate(ANSWERS)
    ]
    queries = [{"id": f"q{i}", "text": f"question {i}?"} for i in range(5)]
    run = "".join(
        f"q{i} Q0 d{(i + r) % 6} {r + 1} {10 - r} sys\n" for i in range(5) for r in range(4)
    )
    (tmp / "run.txt").write_text(run)
    gold = [{"query_id": q, "answers": a} for q, a in GOLD.items()]
    gold.append({"query_id": "q3", "answers": []})
    return {
        "run": tmp / "run.txt",
        "queries": write_jsonl(tmp / "queries.jsonl", queries),
        "corpus": write_jsonl(tmp / "corpus.jsonl", corpus),
        "gold": write_jsonl(tmp / "gold.jsonl", gold),
    }


def invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args, catch_exceptions=False)


def erag_args(files: dict[str, Path], server: FakeServer, tmp: Path, out: Path) -> list[str]:
    args = ["judge", "erag", "--run", str(files["run"]), "--queries", str(files["queries"])]
    args += ["--corpus", str(files["corpus"]), "--gold-answers", str(files["gold"])]
    args += ["--depth", "3", "--out", str(out), "--base-url", server.url, "--model", "gen"]
    return [*args, "--cache", str(tmp / "c.sqlite"), "--quiet"]


# -- units ------------------------------------------------------------------------------------


def test_parse_answer_strips_thinking_and_an_answer_prefix() -> None:
    assert parse_answer("  Paris \n") == ("Paris", "ok")
    assert parse_answer("<think>hmm</think>Answer: Paris") == ("Paris", "lenient")
    assert parse_answer("<think>only thoughts</think>  ") == (None, "unparsed")


def test_scores_by_hand() -> None:
    # SQuAD normalisation drops the article and the punctuation: an exact match
    assert score_answer("The Eiffel Tower.", ["Tour Eiffel", "eiffel tower"], "em") == 1.0
    assert score_answer("red car", ["red"], "em") == 0.0
    # token F1: P = 1/2, R = 1 → 2/3; the max over the gold answers
    assert score_answer("red car", ["blue", "red"], "f1") == pytest.approx(2 / 3)
    # ROUGE-L: LCS("the cat sat on the mat", "the cat on a mat") = 4; P = 4/6, R = 4/5
    assert score_answer("the cat sat on the mat", ["the cat on a mat"], "rougeL") == (
        pytest.approx(2 * (4 / 6) * (4 / 5) / (4 / 6 + 4 / 5))
    )
    assert label_of(2 / 3, 0.5) == 1 and label_of(2 / 3, 0.7) == 0 and label_of(1.0, None) == 1
    with pytest.raises(ValueError):
        score_answer("x", [], "em")


# -- the command -----------------------------------------------------------------------------


def test_erag_writes_qrels_with_provenance_and_counts_na(
    server: FakeServer, tmp_path: Path
) -> None:
    from ragmeter.io.provenance import read_provenance
    from ragmeter.io.readers import read_qrels

    files = collection(tmp_path)
    out = tmp_path / "erag.qrels"
    result = invoke(erag_args(files, server, tmp_path, out))
    assert result.exit_code == 0, result.output
    # q0 ranks d0 d1 d2: answers "red" (EM 1), "red car" (0), "blue" (0)
    # q1 ranks d1 d2 d3: "red car" 0, "blue" 1 (gold "blue"), "the Blue" 1 (article dropped)
    # q2 ranks d2 d3 d4: "blue" 0, "the Blue" 0, "green" 1
    assert out.read_text().splitlines() == [
        "q0 0 d0 1", "q0 0 d1 0", "q0 0 d2 0",
        "q1 0 d1 0", "q1 0 d2 1", "q1 0 d3 1",
        "q2 0 d2 0", "q2 0 d3 0", "q2 0 d4 1",
    ]  # fmt: skip
    assert read_qrels(out).n_queries == 3
    # q3 (no gold answers) and q4 (absent) are never sent: 9 requests, not 15
    assert sum(server.state.seen.values()) == 9
    assert "none for 2 of 5 queries (q3, q4)" in result.output
    assert "NA, n=3/5" in result.output
    prov = read_provenance(out)
    assert prov is not None and prov.has_llm
    (source,) = prov.sources.values()
    assert source.model == "gen" and source.prompt_id == "erag"
    assert source.prompt_sha256 and "em of the answer" in (source.aggregation or "")


def test_another_metric_reuses_the_cached_answers(server: FakeServer, tmp_path: Path) -> None:
    from ragmeter.io.utilities import read_utilities

    files = collection(tmp_path)
    assert invoke(erag_args(files, server, tmp_path, tmp_path / "em.qrels")).exit_code == 0
    asked = sum(server.state.seen.values())
    out = tmp_path / "f1.txt"
    result = invoke([*erag_args(files, server, tmp_path, out), "--metric", "f1"])
    assert result.exit_code == 0, result.output
    assert sum(server.state.seen.values()) == asked  # every answer came from the cache
    assert "utilities" in result.output
    # "red car" against q1's gold "blue car": P = R = 1/2 → 1/2; against "red" (q0): 2/3
    scores = {
        (q, d): float(u) for q, d, u in (line.split() for line in out.read_text().splitlines())
    }
    assert scores[("q0", "d1")] == pytest.approx(2 / 3)
    assert scores[("q1", "d1")] == pytest.approx(0.5)
    assert scores[("q0", "d0")] == 1.0 and scores[("q0", "d2")] == 0.0
    assert set(read_utilities(out).query_ids.to_pylist()) == {"q0", "q1", "q2"}
    binary = tmp_path / "f1.qrels"
    result = invoke(
        [*erag_args(files, server, tmp_path, binary), "--metric", "f1", "--binarize", "0.6"]
    )
    assert result.exit_code == 0, result.output
    lines = dict(
        (f"{q} {d}", g) for q, _, d, g in (line.split() for line in binary.read_text().splitlines())
    )
    assert lines["q0 d1"] == "1" and lines["q1 d1"] == "0"


def test_bad_options_exit_2(server: FakeServer, tmp_path: Path) -> None:
    files = collection(tmp_path)
    out = tmp_path / "x"
    result = invoke([*erag_args(files, server, tmp_path, out), "--metric", "bleu"])
    assert result.exit_code == 2 and "unknown --metric 'bleu'" in result.output
    result = invoke([*erag_args(files, server, tmp_path, out), "--binarize", "2"])
    assert result.exit_code == 2 and "--binarize must lie in [0, 1]" in result.output
    (tmp_path / "bad.jsonl").write_text('{"query_id": "q0", "answers": [1]}\n')
    args = erag_args(files, server, tmp_path, out)
    args[args.index(str(files["gold"]))] = str(tmp_path / "bad.jsonl")
    result = invoke(args)
    assert result.exit_code == 2 and "line 1" in result.output and "answers[0]" in result.output
    assert sum(server.state.seen.values()) == 0
