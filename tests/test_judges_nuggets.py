"""``ragmeter judge nuggets create|score|assign`` and ``ragmeter judge citations`` end to end
against the local test server (a responder that reads each prompt), and the parsers of the
TREC RAG tasks."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.judges.tasks import make_task, parse_importance, parse_nuggets, parse_support

pytest.importorskip("aiohttp", reason="the LLM judge needs the 'judges' extra (aiohttp)")

from judge_server import FakeServer, prompt_of
from ragmeter.cli import app
from ragmeter.data import example_path


def responder(request: dict[str, Any]) -> str:
    """Nuggets: the first sentence of each passage; importance: vital for a nugget naming a
    price ("euros"); support: whether the text holds the nugget's first four words."""
    prompt = prompt_of(request)
    if prompt.rstrip().endswith("numbered 1., 2., and so on."):
        passages = re.findall(r"^\[\d+\] (.+)$", prompt, re.MULTILINE)
        firsts = [p.split(". ")[0].rstrip(".") for p in passages[:3]]
        return "\n".join(f"{i}. {f}" for i, f in enumerate(firsts, start=1))
    if "vital or okay" in prompt:
        nugget = prompt.split("Nugget: ", 1)[1].split("\n", 1)[0]
        return "vital" if "euros" in nugget else "Okay."
    if "Nugget: " in prompt:
        text = prompt.split("Text: ", 1)[1].split("\n\nNugget: ", 1)[0]
        nugget = prompt.split("Nugget: ", 1)[1].split("\n", 1)[0]
        head = " ".join(nugget.split()[:4])
        return "support" if head.lower() in text.lower() else "not_support"
    if "Cited passage: " in prompt:
        return "partial support" if "euros" in prompt else "not_support"
    return "?"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(responder) as s:
        yield s


def invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args, catch_exceptions=False)


def common(server: FakeServer, cache: Path) -> list[str]:
    return ["--base-url", server.url, "--model", "m", "--cache", str(cache), "--quiet"]


def test_create_score_assign_evaluate(server: FakeServer, tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    qrels = tmp_path / "qrels.txt"  # two queries of the example, their decisive passages
    qrels.write_text("q01 0 p152 5\nq01 0 p289 5\nq01 0 p074 3\nq06 0 p192 5\nq06 0 p273 5\n")
    texts = tmp_path / "texts.jsonl"
    args = ["judge", "nuggets", "create", "--queries", str(example_path("queries.jsonl"))]
    args += ["--qrels", str(qrels), "--corpus", str(example_path("corpus.jsonl"))]
    args += ["--rel-level", "4", "--out", str(texts)]
    result = invoke(args + common(server, cache))
    assert result.exit_code == 0, result.output
    created = [json.loads(line) for line in texts.read_text().splitlines()]
    assert [r["qid"] for r in created] == ["q01", "q06"]
    assert [n["text"] for n in created[0]["nuggets"]] == [
        "A monthly pass for zones A and B costs 58 euros and covers unlimited rides on trams, "
        "buses and the harbour ferry for one calendar month",
        "Riders who commit for a whole year pay 560 euros for the annual pass, the same as "
        "about nine and a half monthly passes",
    ]  # p074 (grade 3) is below --rel-level 4

    nuggets = tmp_path / "nuggets.jsonl"
    args = ["judge", "nuggets", "score", "--nuggets", str(texts)]
    args += ["--queries", str(example_path("queries.jsonl")), "--out", str(nuggets)]
    result = invoke(args + common(server, cache))
    assert result.exit_code == 0, result.output
    scored = {r["qid"]: r["nuggets"] for r in map(json.loads, nuggets.read_text().splitlines())}
    assert [n["importance"] for n in scored["q01"]] == ["vital", "vital"]
    assert [n["importance"] for n in scored["q06"]] == ["okay", "okay"]

    assignments = tmp_path / "assignments.jsonl"
    args = ["judge", "nuggets", "assign", "--nuggets", str(nuggets)]
    args += ["--answers", str(example_path("rag_answers.jsonl")), "--out", str(assignments)]
    result = invoke(args + common(server, cache))
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in assignments.read_text().splitlines()]
    assert [(r["run_id"], r["qid"]) for r in rows] == [
        ("vellmar-rag", "q01"),
        ("vellmar-rag", "q06"),
    ]
    # q01's answer names neither nugget's first four words; q06's holds "Night buses N1 to"
    # but not "Saturday nights have a"
    assert [n["assignment"] for n in rows[0]["nuggets"]] == ["not_support", "not_support"]
    assert [n["assignment"] for n in rows[1]["nuggets"]] == ["support", "not_support"]

    # the files read back: nugget_all of q06 = 1/2, of q01 = 0 → mean 0.25
    result = invoke(
        [
            "evaluate",
            str(example_path("rag_answers.jsonl")),
            "--nuggets",
            str(nuggets),
            "--assignments",
            str(assignments),
            "-m",
            "nugget_all",
            "--format",
            "json",
        ]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"][0]["metrics"]["nugget_all"]["mean"] == 0.25

    # resumable: a second run asks nothing
    before = sum(server.state.seen.values())
    result = invoke(args + common(server, cache))
    assert result.exit_code == 0 and sum(server.state.seen.values()) == before


def test_assign_to_passages(server: FakeServer, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q06 Q0 p192 1 3 r\nq06 Q0 p055 2 2 r\nq01 Q0 p152 1 1 r\n")
    out = tmp_path / "a.jsonl"
    args = ["judge", "nuggets", "assign", "--nuggets", str(example_path("nuggets.jsonl"))]
    args += ["--run", str(run), "--corpus", str(example_path("corpus.jsonl"))]
    args += ["--queries", str(example_path("queries.jsonl")), "--out", str(out)]
    args += ["--summary-json", str(tmp_path / "s.json")]
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["qid"], r["docid"]) for r in rows] == [
        ("q01", "p152"),
        ("q06", "p192"),
        ("q06", "p055"),
    ]
    assert json.loads((tmp_path / "s.json").read_text())["calls"] == 5 + 5 + 5
    # "Night buses N1 to" is in p192; nothing else matches its first four words exactly
    assert [n["assignment"] for n in rows[1]["nuggets"]][:1] == ["support"]


def test_dry_run_counts_one_call_per_nugget_and_text(server: FakeServer, tmp_path: Path) -> None:
    args = ["judge", "nuggets", "assign", "--nuggets", str(example_path("nuggets.jsonl"))]
    args += ["--answers", str(example_path("rag_answers.jsonl")), "--out", str(tmp_path / "a")]
    result = invoke([*args, "--dry-run", "--price", "1,2", *common(server, tmp_path / "c")])
    assert result.exit_code == 0, result.output
    # 5 + 5 + 6 + 5 nuggets, one answer each
    assert "21 calls to make" in result.output and "cost $" in result.output
    assert sum(server.state.seen.values()) == 0


def test_citations(server: FakeServer, tmp_path: Path) -> None:
    out = tmp_path / "support.jsonl"
    args = ["judge", "citations", "--answers", str(example_path("rag_answers.jsonl"))]
    args += ["--corpus", str(example_path("corpus.jsonl")), "--out", str(out)]
    result = invoke(args + common(server, tmp_path / "c.sqlite"))
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # q01 2 + q02 2 + q03 3 + q06 3 sentences; a sentence citing nothing keeps its line
    assert len(rows) == 10
    assert rows[1]["citations"] == []
    # q01's first sentence names euros: "partial support" → partial_support
    assert rows[0]["citations"] == [{"docid": "p203", "support": "partial_support"}]


def test_unreadable_replies_leave_items_out_and_exit_1(tmp_path: Path) -> None:
    with FakeServer(lambda _: "maybe") as s:
        out = tmp_path / "n.jsonl"
        args = ["judge", "nuggets", "score", "--nuggets", str(example_path("nuggets.jsonl"))]
        args += ["--queries", str(example_path("queries.jsonl")), "--out", str(out)]
        result = invoke(args + common(s, tmp_path / "c.sqlite"))
    assert result.exit_code == 1
    assert "INCOMPLETE" in result.output
    assert all(not r["nuggets"] for r in map(json.loads, out.read_text().splitlines()))


def test_assign_needs_one_target(tmp_path: Path) -> None:
    args = ["judge", "nuggets", "assign", "--nuggets", str(example_path("nuggets.jsonl"))]
    result = invoke([*args, "--out", str(tmp_path / "a")])
    assert result.exit_code == 2 and "--answers" in result.output


# -- parsers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "value", "status"),
    [
        ("support", "support", "ok"),
        ("Partial_Support.", "partial_support", "ok"),
        ("not support", "not_support", "ok"),
        ("The text does not support it.", "not_support", "lenient"),
        ("It is partially supported by the text.", "partial_support", "lenient"),
        ("support or not_support?", None, "unparsed"),
        ("unclear", None, "unparsed"),
    ],
)
def test_parse_support(reply: str, value: str | None, status: str) -> None:
    assert parse_support(reply) == (value, status)


@pytest.mark.parametrize(
    ("reply", "value", "status"),
    [
        ("vital", "vital", "ok"),
        ("**Okay**", "okay", "ok"),
        ("I would say it is vital.", "vital", "lenient"),
        ("vital or okay", None, "unparsed"),
        ("important", None, "unparsed"),
    ],
)
def test_parse_importance(reply: str, value: str | None, status: str) -> None:
    assert parse_importance(reply) == (value, status)


def test_parse_nuggets() -> None:
    assert parse_nuggets("1. a fact\n2. another", 5) == (["a fact", "another"], "ok")
    assert parse_nuggets("- a\n- b\n- A\n- c", 2) == (["a", "b"], "lenient")
    assert parse_nuggets('{"nuggets": ["x", "y"]}', 5) == (["x", "y"], "lenient")
    assert parse_nuggets("nothing here", 5) == (None, "unparsed")


def test_prompts_are_versioned_and_fill() -> None:
    for name in ("nuggets", "nugget_importance", "nugget_support", "citation_support"):
        task = make_task(name)
        assert task.prompt.version == "1"
        (user,) = [m for m in task.messages({f: "XYZ" for f in task.fields}) if m["role"] == "user"]
        assert user["content"].count("XYZ") == len(task.fields)
