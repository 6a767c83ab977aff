"""Judgments and sub-questions JSONL: Arrow's reader and the line-by-line reader agree.

Arrow reads well-formed files; anything it refuses, and every error, goes to the
line-by-line reader. Each case below is read both ways (the line-by-line way forced by
turning Arrow off) and must give the same judgments, warnings, or error message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.core.judgments import Judgments
from ragmeter.errors import InputError
from ragmeter.io import judgments as jio


def _state(j: Judgments) -> dict[str, Any]:
    return {
        "query_ids": j.query_ids.tolist(),
        "offsets": j.offsets.tolist(),
        "doc_ids": j.doc_ids.to_pylist(),
        "widths": j.widths.tolist(),
        "ratings": j.ratings.tolist(),
        "rating_dtype": str(j.ratings.dtype),
        "rating_offsets": j.rating_offsets.tolist(),
        "questions": j.questions,
        "warnings": j.warnings,
    }


def _both(read: Any, path: Path, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[Any, Any]:
    """(result or error text, with Arrow) and (the same, line by line)."""

    def outcome() -> Any:
        try:
            value = read(path, **kw)
        except InputError as exc:
            return ("error", str(exc))
        return _state(value) if isinstance(value, Judgments) else value

    fast = outcome()
    with monkeypatch.context() as m:
        m.setattr(jio, "_arrow_table", lambda data: None)
        slow = outcome()
    return fast, slow


def _write(tmp_path: Path, text: str | bytes, name: str = "j.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def _lines(*rows: Any) -> str:
    return "".join(
        (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows
    )


ROW = {"query_id": "q1", "doc_id": "d1", "ratings": [3, 0, -1]}

JUDGMENT_CASES = {
    "plain": _lines(ROW, {"query_id": "q1", "doc_id": "d2", "ratings": [5, 5, 5]}),
    "integer ids": _lines(
        {"query_id": 7, "doc_id": -3, "ratings": [1]}, {"query_id": 7, "doc_id": 0, "ratings": [2]}
    ),
    "crux names": _lines({"example_id": "e", "pid": "p", "rating": [4, 2]}),
    "unicode": _lines(
        {"query_id": "café 😀", "doc_id": "文書\n1", "ratings": [1]},
        {"query_id": "\u212a", "doc_id": "\ufeffx", "ratings": [2]},
    ),
    "escapes": '{"query_id": "caf\\u00e9 \\ud83d\\ude00", "doc_id": "d", "ratings": [1]}\n',
    "lone surrogate": '{"query_id": "\\ud800", "doc_id": "d", "ratings": [1]}\n',
    "blank lines and crlf": "\n"
    + _lines(ROW).replace("\n", "\r\n")
    + "\n  \n"
    + _lines({"query_id": "q2", "doc_id": "d", "ratings": [0]}),
    "no final newline": json.dumps(ROW),
    "two objects on a line": json.dumps(ROW) + " " + json.dumps(ROW) + "\n",
    "missing field": _lines(ROW, {"query_id": "q1", "ratings": [1, 1, 1]}),
    "null id": _lines(ROW, {"query_id": None, "doc_id": "d", "ratings": [1, 1, 1]}),
    "null ratings": _lines(ROW, {"query_id": "q1", "doc_id": "d", "ratings": None}),
    "null rating": _lines({"query_id": "q1", "doc_id": "d", "ratings": [1, None]}),
    "mixed id types": _lines(
        {"query_id": 1, "doc_id": "d", "ratings": [1]},
        {"query_id": "1", "doc_id": "e", "ratings": [1]},
    ),
    "float id": _lines({"query_id": 1.5, "doc_id": "d", "ratings": [1]}),
    "huge integer id": '{"query_id": 123456789012345678901234567890, "doc_id": "d", '
    '"ratings": [1]}\n',
    "boolean id": _lines({"query_id": True, "doc_id": "d", "ratings": [1]}),
    "date-like ids": _lines(
        {"query_id": "2020-01-01", "doc_id": "2020-01-02T03:04:05", "ratings": [1]}
    ),
    "float ratings": _lines({"query_id": "q", "doc_id": "d", "ratings": [1.0, 2]}),
    "fractional rating": _lines({"query_id": "q", "doc_id": "d", "ratings": [1.5]}),
    "boolean rating": _lines({"query_id": "q", "doc_id": "d", "ratings": [True]}),
    "rating out of range": _lines(ROW, {"query_id": "q1", "doc_id": "d2", "ratings": [6, 0, 0]}),
    "rating below -1": _lines({"query_id": "q1", "doc_id": "d2", "ratings": [-2]}),
    "ratings not a list": _lines({"query_id": "q1", "doc_id": "d2", "ratings": 3}),
    "empty ratings": _lines({"query_id": "q1", "doc_id": "d2", "ratings": []}),
    "width mismatch": _lines(ROW, {"query_id": "q1", "doc_id": "d2", "ratings": [1]}),
    "repeat identical": _lines(ROW, ROW),
    "repeat different": _lines(ROW, {**ROW, "ratings": [0, 0, 0]}),
    "both id names": _lines({"query_id": "q", "qid": "q", "doc_id": "d", "ratings": [1]}),
    "names vary by line": _lines(
        {"query_id": "q", "doc_id": "d", "ratings": [1]},
        {"qid": "q", "doc_id": "e", "ratings": [1]},
    ),
    "duplicate key": '{"query_id": "a", "query_id": "b", "doc_id": "d", "ratings": [1]}\n',
    "extra fields": _lines({**ROW, "note": {"x": [1, "a"]}, "score": 0.5}),
    "array line": _lines(ROW, [1, 2]),
    "invalid json": _lines(ROW) + '{"query_id": "q", "doc_id": \n',
    "NaN rating": '{"query_id": "q", "doc_id": "d", "ratings": [NaN]}\n',
    "empty file": "\n \n",
}


@pytest.mark.parametrize("case", sorted(JUDGMENT_CASES))
def test_judgments_same_both_ways(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, JUDGMENT_CASES[case])
    fast, slow = _both(jio.read_judgments, path, monkeypatch)
    assert fast == slow


def test_arrow_reads_the_plain_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path is taken where it should be: the line-by-line reader is never called."""
    path = _write(tmp_path, JUDGMENT_CASES["plain"] + JUDGMENT_CASES["plain"])

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("line-by-line reader used")

    monkeypatch.setattr(jio, "_records", refuse)
    j = jio.read_judgments(path)
    # by hand: q1 has d1 [3, 0, -1] and d2 [5, 5, 5]; the repeats are dropped with a warning
    assert _state(j)["doc_ids"] == ["d1", "d2"]
    assert j.ratings.tolist() == [3, 0, -1, 5, 5, 5]
    assert j.warnings and "2 repeated identical" in j.warnings[0]


def test_with_questions_same_both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, JUDGMENT_CASES["plain"])
    for questions in ({"q1": ["a", "b", "c"], "q9": ["x"]}, {"q1": ["a"]}):
        fast, slow = _both(jio.read_judgments, path, monkeypatch, questions=questions)
        assert fast == slow


QUESTION_CASES = {
    "plain": _lines(
        {"query_id": "q1", "questions": ["a?", "b?"]}, {"query_id": 2, "questions": []}
    ),
    "unicode": _lines({"query_id": "q1", "questions": ["¿qué?", "何?"]}),
    "twice": _lines({"query_id": "q1", "questions": ["a"]}, {"query_id": "q1", "questions": ["b"]}),
    "null text": _lines({"query_id": "q1", "questions": ["a", None]}),
    "number text": _lines({"query_id": "q1", "questions": ["a", 1]}),
    "missing": _lines({"query_id": "q1", "questions": ["a"]}, {"query_id": "q2"}),
    "not a list": _lines({"query_id": "q1", "questions": "a"}),
    "all empty": _lines({"query_id": "q1", "questions": []}),
}


@pytest.mark.parametrize("case", sorted(QUESTION_CASES))
def test_questions_same_both_ways(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, QUESTION_CASES[case])
    fast, slow = _both(jio.read_questions, path, monkeypatch)
    assert fast == slow


ids = st.one_of(st.text(max_size=4), st.integers(-5, 5), st.none(), st.booleans())
ratings = st.one_of(
    st.lists(st.integers(-2, 6), max_size=3),
    st.lists(st.sampled_from([0, 1.0, None, True]), max_size=2),
    st.none(),
)
rows = st.lists(
    st.fixed_dictionaries(
        {"query_id": st.sampled_from(["q1", "q2", 3]), "doc_id": ids, "ratings": ratings}
    )
    | st.fixed_dictionaries(
        {"query_id": st.sampled_from(["q1", "q2"]), "doc_id": st.sampled_from(["a", "b"])},
        optional={"ratings": st.lists(st.integers(0, 5), min_size=2, max_size=2)},
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(rows)
def test_random_files_same_both_ways(records: list[dict[str, Any]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        path = _write(Path(tmp), _lines(*records))
        fast, slow = _both(jio.read_judgments, path, mp)
        assert fast == slow


def test_rating_dtype_and_values_by_hand(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        _lines(
            {"query_id": "b", "doc_id": "x", "ratings": [-1, 5]},
            {"query_id": "a", "doc_id": "y", "ratings": [2]},
        ),
    )
    j = jio.read_judgments(path)
    assert j.query_ids.tolist() == ["a", "b"]  # byte order
    assert j.ratings.dtype == np.int8 and j.ratings.tolist() == [2, -1, 5]


@given(st.text(alphabet=" \t\r\nab{}", max_size=40))
def test_non_blank_line_count_as_the_line_reader_counts(text: str) -> None:
    expected = sum(1 for line in text.split("\n") if line.strip())
    assert jio._non_blank_lines(text.encode()) == expected


def test_json_nested_deeper_than_arrow_can_parse_is_left_to_the_line_reader(
    tmp_path: Path,
) -> None:
    """Arrow's JSON parser recurses (100,000 nested arrays crash it); such files go to the
    line-by-line readers, which name the line, whatever line it is on."""
    from ragmeter.io.readers import read_run

    deep = "[" * 100_000 + "]" * 100_000
    # { [ [ ] ] then the string's three [ inside the object: 1 + 3 = 4 (strings count too)
    assert jio.json_nesting_depth(b'{"a": [[1]], "b": "[[["}') == 4
    run = _write(tmp_path, '{"qid": "q", "docid": "a", "score": 1}\n{"qid": ' + deep + "}\n")
    with pytest.raises(InputError) as failed:
        read_run(run)
    assert failed.value.line == 2
    judged = _write(
        tmp_path, _lines(ROW) + '{"query_id": "q", "ratings": ' + deep + "}\n", "j2.jsonl"
    )
    with pytest.raises(InputError) as failed:
        jio.read_judgments(judged)
    assert failed.value.line == 2
