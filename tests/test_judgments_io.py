"""Readers of sub-question judgments, sub-questions, corpora and rated answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter.core.judgments import Judgments
from ragmeter.errors import InputError
from ragmeter.io.judgments import (
    read_answers,
    read_corpus,
    read_judgments,
    read_questions,
    write_crux_qrels,
)


def write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def as_dict(j: Judgments) -> dict[str, dict[str, list[int]]]:
    docs = j.doc_ids.to_pylist()
    out: dict[str, dict[str, list[int]]] = {}
    for q in range(j.n_queries):
        inner = out.setdefault(str(j.query_ids[q]), {})
        for r in range(int(j.offsets[q]), int(j.offsets[q + 1])):
            a, b = int(j.rating_offsets[r]), int(j.rating_offsets[r + 1])
            inner[docs[r]] = j.ratings[a:b].tolist()
    return out


def test_jsonl_and_crux_field_names(tmp_path: Path) -> None:
    path = write(
        tmp_path / "j.jsonl",
        [
            {"query_id": "q2", "doc_id": "b", "ratings": [0, 5]},
            {"example_id": "q1", "pid": "z", "rating": [3, -1, 0]},
            {"query_id": "q2", "doc_id": "a", "ratings": [1, 2]},
        ],
    )
    j = read_judgments(path)
    assert list(j.query_ids) == ["q1", "q2"]  # byte order
    assert as_dict(j) == {"q1": {"z": [3, -1, 0]}, "q2": {"b": [0, 5], "a": [1, 2]}}
    assert list(as_dict(j)["q2"]) == ["b", "a"]  # input order kept within a query
    assert j.widths.tolist() == [3, 2]


def test_long_tsv_and_diversity(tmp_path: Path) -> None:
    tsv = write(tmp_path / "j.tsv", ["q1 1 a 5", "q1 3 a 4", "q1 2 b -1", "", "q2 1 c 2"])
    assert as_dict(read_judgments(tsv)) == {
        "q1": {"a": [5, 0, 4], "b": [0, -1, 0]},
        "q2": {"c": [2]},
    }
    div = write(tmp_path / "d.qrels", ["q1 1 a 1", "q1 2 a 0", "q1 2 b 2", "q1 1 b -2"])
    assert as_dict(read_judgments(div)) == {"q1": {"a": [5, 0], "b": [0, 5]}}


def test_questions_fix_width_and_keep_texts(tmp_path: Path) -> None:
    qs = write(tmp_path / "q.jsonl", [{"query_id": "q1", "questions": ["A?", "B?", "C?"]}])
    assert read_questions(qs) == {"q1": ["A?", "B?", "C?"]}
    tsv = write(tmp_path / "j.tsv", ["q1 1 a 5"])
    j = read_judgments(tsv, questions=qs)
    assert as_dict(j) == {"q1": {"a": [5, 0, 0]}}
    assert j.questions == (("A?", "B?", "C?"),)


def test_repeated_identical_judgment_is_dropped_with_warning(tmp_path: Path) -> None:
    path = write(
        tmp_path / "j.jsonl",
        [{"query_id": "q", "doc_id": "a", "ratings": [1]}] * 2,
    )
    j = read_judgments(path)
    assert len(j) == 1 and "repeated identical" in j.warnings[0]


@pytest.mark.parametrize(
    ("lines", "line", "match"),
    [
        (
            [
                {"query_id": "q", "doc_id": "a", "ratings": [1, 2]},
                {"query_id": "q", "doc_id": "b", "ratings": [1, 2, 3]},
            ],
            2,
            "3 ratings for doc 'b', but query 'q' has 2 ratings on line 1",
        ),
        ([{"query_id": "q", "doc_id": "a", "ratings": [1, 6]}], 1, "rating 6 is outside −1..5"),
        ([{"query_id": "q", "doc_id": "a", "ratings": [-2]}], 1, "outside −1..5"),
        ([{"query_id": "q", "doc_id": "a", "ratings": [1.5]}], 1, "not an integer"),
        ([{"query_id": "q", "doc_id": "a", "ratings": ["3"]}], 1, "not an integer"),
        ([{"query_id": "q", "doc_id": "a", "ratings": 3}], 1, "expected an array"),
        ([{"query_id": "q", "doc_id": "a"}], 1, "no 'ratings' field"),
        ([{"doc_id": "a", "ratings": [1]}], 1, "no 'query_id' field"),
        ([{"query_id": None, "doc_id": "a", "ratings": [1]}], 1, "id is null"),
        (
            [
                {"query_id": "q", "doc_id": "a", "ratings": [1]},
                {"query_id": "q", "doc_id": "b", "ratings": [1]},
                {"query_id": "q", "doc_id": "a", "ratings": [2]},
            ],
            3,
            r"rated \[2\] here but \[1\] on line 1",
        ),
        (['{"query_id": "q"'], 1, "invalid JSON"),
        (["[1, 2]"], 1, "expected a JSON object"),
    ],
)
def test_jsonl_errors_name_file_and_line(
    tmp_path: Path, lines: list[object], line: int, match: str
) -> None:
    path = write(tmp_path / "bad.jsonl", lines)
    with pytest.raises(InputError, match=match) as info:
        read_judgments(path)
    assert info.value.source == str(path)
    assert info.value.line == line


def test_width_against_questions(tmp_path: Path) -> None:
    qs = write(tmp_path / "q.jsonl", [{"query_id": "q", "questions": ["A?", "B?"]}])
    path = write(tmp_path / "j.jsonl", [{"query_id": "q", "doc_id": "a", "ratings": [1, 2, 3]}])
    with pytest.raises(InputError, match="query 'q' has 2 sub-questions") as info:
        read_judgments(path, questions=qs)
    assert info.value.line == 1
    tsv = write(tmp_path / "j.tsv", ["q 1 a 1", "q 3 a 1"])
    with pytest.raises(InputError, match="qnum 3 but query 'q' has 2 sub-questions") as info:
        read_judgments(tsv, questions=qs)
    assert info.value.line == 2


@pytest.mark.parametrize(
    ("lines", "line", "match"),
    [
        (["q 1 a"], 1, "3 fields; expected 4"),
        (["q x a 1"], 1, "'x' is not an integer"),
        (["q 0 a 1"], 1, "qnum 0 < 1"),
        (["q 1 a 7"], 1, "rating 7 is outside"),
        (["q 1 a 3", "q 1 a 2"], 2, "rated 2 here but 3 on line 1"),
    ],
)
def test_tsv_errors(tmp_path: Path, lines: list[str], line: int, match: str) -> None:
    path = write(tmp_path / "bad.tsv", lines)
    with pytest.raises(InputError, match=match) as info:
        read_judgments(path)
    assert (info.value.source, info.value.line) == (str(path), line)


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError, match="empty"):
        read_judgments(empty)
    with pytest.raises(InputError, match="no such file"):
        read_judgments(tmp_path / "nope.jsonl")


def test_corpus_and_answers(tmp_path: Path) -> None:
    corpus = write(tmp_path / "c.jsonl", [{"id": "a", "text": "x y"}, {"id": "b", "text": "z"}])
    c = read_corpus(corpus)
    assert c.doc_ids.to_pylist() == ["a", "b"]
    dup = write(tmp_path / "d.jsonl", [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}])
    with pytest.raises(InputError, match="listed twice") as info:
        read_corpus(dup)
    assert info.value.line == 2
    answers = write(
        tmp_path / "a.jsonl",
        [{"query_id": "q", "ratings": [5, 0], "text": "t"}, {"query_id": "q", "ratings": [1, 1]}],
    )
    with pytest.raises(InputError, match="answered twice") as info:
        read_answers(answers)
    assert info.value.line == 2


def test_answers_width_checked_at_evaluation(tmp_path: Path) -> None:
    from ragmeter import Run, evaluate

    answers = write(tmp_path / "a.jsonl", [{"query_id": "q", "ratings": [5], "text": "t"}])
    j = Judgments.from_dict({"q": {"a": [5, 0]}})
    with pytest.raises(InputError, match="1 ratings for query 'q', which has 2") as info:
        evaluate(
            Run.from_lists({"q": ["a"]}),
            None,
            ["answer_coverage"],
            judgments=j,
            answers=read_answers(answers),
        )
    assert (info.value.source, info.value.line) == (str(answers), 1)


def test_write_crux_qrels_round_trip(tmp_path: Path) -> None:
    j = Judgments.from_dict({"q1": {"p1": [5, 0], "p2": [0, 4], "p3": [4, 0]}, "q2": {"x": [1, 2]}})
    graded, div = tmp_path / "g.txt", tmp_path / "d.txt"
    assert write_crux_qrels(j, graded=graded, diversity=div) == 1  # q2 has nothing answerable
    assert graded.read_text().splitlines() == ["q1 0 p1 3", "q1 0 p2 3", "q1 0 p3 1"]
    again = read_judgments(div, format="diversity")
    assert as_dict(again) == {"q1": {"p1": [5, 0], "p2": [0, 5], "p3": [5, 0]}}
