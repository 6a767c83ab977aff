"""Bad input: every error names the file, the line (where line oriented) and the field, and
says what was expected. Nothing is half-written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ragmeter import InputError, Run
from ragmeter.io.dicts import qrels_from_dict, run_from_dict
from ragmeter.io.frames import qrels_from_frame, run_from_frame
from ragmeter.io.readers import read_qrels, read_run, read_samples, write_run

READERS: dict[str, Callable[..., Any]] = {
    "run": read_run,
    "qrels": read_qrels,
    "samples": read_samples,
}


def _sample(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "q1", "retrieved": ["a", "b"], "expected_output": ["a"]}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def _samples_json(*samples: dict[str, Any]) -> str:
    return json.dumps(list(samples), indent=2)


# (reader, file name, content, line or None, field or None, words the message must contain)
CASES: list[tuple[str, str, str, int | None, str | None, tuple[str, ...]]] = [
    # -- TREC --------------------------------------------------------------------------
    ("run", "cols.trec", "q Q0 a 1 1.0 t\nq Q0 b 2 t\n", 2, None, ("expected 6", "score")),
    ("run", "score.trec", "q Q0 a 1 1.0 t\nq Q0 b 2 abc t\n", 2, "score", ("'abc'", "number")),
    ("run", "nan.trec", "q Q0 a 1 1.0 t\nq Q0 b 2 nan t\n", 2, "score", ("finite",)),
    ("run", "inf.trec", "q Q0 a 1 1.0 t\n\nq Q0 b 2 inf t\n", 3, "score", ("finite",)),
    ("run", "empty.trec", "", None, None, ("expected",)),
    ("run", "comments.trec", "# nothing here\n\n", None, None, ("no data",)),
    ("qrels", "conflict.qrels", "q 0 a 1\nq 0 b 0\nq 0 a 2\n", 3, "grade", ("line 1", "one grade")),
    ("qrels", "grade.qrels", "q 0 a 1\nq 0 b high\n", 2, "grade", ("'high'", "integer")),
    ("qrels", "frac.qrels", "q 0 a 1\nq 0 b 1.5\n", 2, "grade", ("integer",)),
    ("qrels", "cols.qrels", "q 0 a\n", 1, None, ("expected 4",)),
    ("run", "bom.trec", "\ufeffq Q0 a 1 1.0 t\n", 1, None, ("byte-order mark",)),
    # -- CSV / TSV ---------------------------------------------------------------------
    ("run", "bom.csv", "\ufeffqid,docid,score\nq,a,1\n", 1, None, ("byte-order mark",)),
    ("run", "width.csv", "qid,docid,score\nq,a,1\nq,b\n", 3, None, ("2 field", "expected 3")),
    ("run", "score.csv", "qid,docid,score\nq,a,1\n\nq,b,x\n", 4, "score", ("'x'", "number")),
    ("run", "nan.csv", "qid,docid,score\nq,a,1\nq,b,NaN\n", 3, "score", ("finite",)),
    ("run", "noscore.tsv", "qid\tdocid\tscore\nq\ta\t\n", 2, "score", ("number",)),
    ("run", "emptyid.csv", "qid,docid,score\nq,a,1\nq,,2\n", 3, "docid", ("empty id",)),
    ("run", "nodoc.csv", "qid,doc,score\nq,a,1\n", 1, "doc_id", ("'docid'", "found")),
    ("run", "noheader.tsv", "q1\tQ0\td1\t1\n", 1, "query_id", ("header", "format='trec'")),
    ("run", "empty.csv", "", None, None, ("empty",)),
    ("run", "header_only.csv", "qid,docid,score\n", None, None, ("no rows",)),
    ("qrels", "conflict.csv", "qid,docid,rel\nq,a,1\nq,b,0\nq,a,2\n", 4, "grade", ("line 2",)),
    ("qrels", "nograde.csv", "qid,docid\nq,a\n", 1, "relevance", ("'grade'",)),
    ("qrels", "frac.tsv", "qid\tdocid\tgrade\nq\ta\t0.5\n", 2, "grade", ("integer",)),
    # -- JSON rows ---------------------------------------------------------------------
    (
        "run",
        "score.jsonl",
        '{"qid":"q","docid":"a","score":1}\n{"qid":"q","docid":"b","score":"hi"}\n',
        2,
        "score",
        ("'hi'", "number"),
    ),
    ("run", "null.jsonl", '{"qid":"q","docid":"a","score":null}\n', 1, "score", ("number",)),
    (
        "run",
        "nodoc.jsonl",
        '{"qid":"q","docid":"a","score":1}\n\n{"qid":"q","score":2}\n',
        3,
        "doc_id",
        ("doc id",),
    ),
    (
        "run",
        "bad.jsonl",
        '{"qid":"q","docid":"a","score":1}\n{"qid":"q","docid":"b" "score":1}\n',
        2,
        None,
        ("invalid JSON", "column 24"),
    ),
    ("run", "extra.jsonl", '{"qid":"q","docid":"a","score":1} {}\n', 1, None, ("extra data",)),
    (
        "run",
        "mixed.jsonl",
        '{"qid":"q","docid":"a","score":1}\n{"qid":"q","docid":"b"}\n',
        2,
        "score",
        ("first row",),
    ),
    ("run", "objid.jsonl", '{"qid":"q","docid":{"x":1},"score":1}\n', 1, "docid", ("object",)),
    ("qrels", "frac.jsonl", '{"qid":"q","docid":"a","rel":1.5}\n', 1, "rel", ("integer",)),
    (
        "qrels",
        "conflict.jsonl",
        '{"qid":"q","docid":"a","rel":1}\n{"qid":"q","docid":"a","rel":0}\n',
        2,
        "grade",
        ("line 1",),
    ),
    ("run", "bom.jsonl", '\ufeff{"qid":"q","docid":"a","score":1}\n', 1, None, ("byte-order",)),
    ("run", "inf.json", '[{"qid":"q","docid":"a","score":1e999}]', 1, "score", ("finite",)),
    # -- JSON / YAML documents ---------------------------------------------------------
    (
        "run",
        "bad.json",
        '[\n  {"id": "q", "retrieved": ["a",]}\n]',
        2,
        None,
        ("invalid JSON", "column"),
    ),
    ("run", "empty.json", "  \n", None, None, ("empty",)),
    ("run", "scalar.json", "5", None, None, ("a number", "expected")),
    ("run", "norecords.json", "[]", None, None, ("no records",)),
    ("run", "nested.json", '{"q": {"a": "x"}}', None, "score", ("not a number",)),
    ("run", "nestedtype.json", '{"q": 5}', None, "q", ("expected",)),
    ("run", "bom.json", '\ufeff[{"qid":"q","docid":"a","score":1}]', 1, None, ("byte-order",)),
    (
        "samples",
        "bad.yaml",
        "- id: q1\n  retrieved: [a\n  expected_output: [a]\n",
        3,
        None,
        ("invalid YAML", "column"),
    ),
    # -- samples -----------------------------------------------------------------------
    (
        "samples",
        "noexpected.json",
        _samples_json(_sample(), _sample(id="q2", expected_output=None)),
        12,
        "expected_output",
        ("sample 2", "'q2'", "list of relevant ids"),
    ),
    (
        "qrels",
        "noexpected.jsonl",
        json.dumps(_sample()) + "\n" + json.dumps(_sample(id="q2", expected_output=None)) + "\n",
        2,
        "expected_output",
        ("missing",),
    ),
    (
        "samples",
        "noexpected.yaml",
        "samples:\n  - id: q1\n    retrieved: [a]\n    expected_output: [a]\n"
        "  - id: q2\n    retrieved: [a]\n",
        5,
        "expected_output",
        ("'q2'",),
    ),
    (
        "samples",
        "noretrieved.json",
        _samples_json(_sample(retrieved=None)),
        2,
        "actual_output",
        ("retrieved",),
    ),
    ("samples", "noid.json", _samples_json(_sample(id=None)), 2, "id", ("no id",)),
    (
        "samples",
        "dupid.jsonl",
        json.dumps(_sample()) + "\n" + json.dumps(_sample()) + "\n",
        2,
        "id",
        ("duplicate", "line 1"),
    ),
    (
        "samples",
        "exptype.json",
        _samples_json(_sample(expected_output=5)),
        2,
        "expected_output",
        ("a number", "list of relevant ids"),
    ),
    (
        "samples",
        "gain.json",
        _samples_json(_sample(expected_output={"a": "high"})),
        2,
        "expected_output.a",
        ("integer",),
    ),
    (
        "samples",
        "fracgain.json",
        _samples_json(_sample(expected_output={"a": 0.5})),
        2,
        "expected_output.a",
        ("integer",),
    ),
    (
        "samples",
        "k.json",
        _samples_json(_sample(metadata={"k": "five"})),
        2,
        "metadata.k",
        ("positive integer",),
    ),
    (
        "samples",
        "k0.json",
        _samples_json(_sample(metadata={"k": 0})),
        2,
        "metadata.k",
        ("positive integer",),
    ),
    ("samples", "meta.json", _samples_json(_sample(metadata=[1])), 2, "metadata", ("object",)),
    (
        "samples",
        "item.json",
        _samples_json(_sample(retrieved=[{"text": "x"}])),
        2,
        "retrieved[0]",
        ("no 'id'",),
    ),
    (
        "samples",
        "itemtext.json",
        _samples_json(_sample(retrieved=[{"id": "a", "text": 3}])),
        2,
        "retrieved[0].text",
        ("string",),
    ),
    (
        "samples",
        "actual.json",
        _samples_json(_sample(retrieved=None, actual_output="not json")),
        2,
        "actual_output",
        ("not valid JSON", '{"retrieved": [...]}'),
    ),
    (
        "samples",
        "actualobj.json",
        _samples_json(_sample(retrieved=None, actualOutput={"docs_list": []})),
        2,
        "actualOutput",
        ("no 'retrieved'",),
    ),
    (
        "samples",
        "actualnum.json",
        _samples_json(_sample(retrieved=7)),
        2,
        "retrieved",
        ("a number",),
    ),
    (
        "samples",
        "both.json",
        _samples_json(_sample(actual_output=["a"])),
        2,
        "actual_output",
        ("expected one",),
    ),
    (
        "samples",
        "boolid.yaml",
        "- id: q1\n  retrieved: [a, no]\n  expected_output: [a]\n",
        1,
        "retrieved[1]",
        ("boolean", "quote"),
    ),
    (
        "samples",
        "paddedid.json",
        _samples_json(_sample(retrieved=[" a"])),
        2,
        "retrieved[0]",
        ("white space",),
    ),
    ("samples", "notobject.json", json.dumps([_sample(), 5]), 1, None, ("sample 2", "object")),
    ("samples", "rows.json", '{"q": {"a": 1}}', None, None, ("'samples'",)),
]


@pytest.mark.parametrize(
    ("reader", "name", "content", "line", "field", "words"),
    CASES,
    ids=[c[1] for c in CASES],
)
def test_bad_input_is_named_precisely(
    tmp_path: Path,
    reader: str,
    name: str,
    content: str,
    line: int | None,
    field: str | None,
    words: tuple[str, ...],
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        READERS[reader](path)
    err = info.value
    message = str(err)
    assert name in message
    assert err.source == str(path)
    assert err.line == line, message
    if line is not None:
        assert f"line {line}" in message
    assert err.field == field, message
    if field is not None:
        assert f"field '{field}'" in message
    for word in words:
        assert word in message, message


def test_parquet_errors_name_the_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    pq.write_table(
        pa.table({"qid": ["q", "q"], "docid": ["a", "b"], "score": [1.0, float("nan")]}), path
    )
    with pytest.raises(InputError, match=r"bad\.parquet, field 'score': row 2: .*finite"):
        read_run(path)
    pq.write_table(pa.table({"qid": ["q", None], "docid": ["a", "b"], "rel": [1, 0]}), path)
    with pytest.raises(InputError, match=r"field 'qid': row 2: missing value"):
        read_qrels(path)
    pq.write_table(pa.table({"qid": ["q"], "docid": ["a"], "score": [True]}), path)
    with pytest.raises(InputError, match=r"field 'score'.*boolean"):
        read_run(path)
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match=r"junk\.parquet: not a readable Parquet file"):
        read_run(tmp_path / "junk.parquet")


MISSING_CASES = [
    (reader, ext)
    for reader in (read_run, read_qrels, read_samples)
    for ext in ("trec", "json", "jsonl", "yaml", "csv", "tsv", "parquet")
    if reader is not read_samples or ext in ("json", "jsonl", "yaml")
]


@pytest.mark.parametrize(("reader", "ext"), MISSING_CASES)
def test_missing_file_and_directory(tmp_path: Path, reader: Callable[..., Any], ext: str) -> None:
    missing = tmp_path / f"missing.{ext}"
    with pytest.raises(InputError, match=rf"missing\.{ext}: no such file"):
        reader(missing)
    folder = tmp_path / f"folder.{ext}"
    folder.mkdir()
    with pytest.raises(InputError, match=rf"folder\.{ext}: is a directory; expected a file"):
        reader(folder)


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(
        b'{"qid":"q","docid":"a","score":1}\n{"qid":"q","docid":"caf\xe9","score":1}\n'
    )
    with pytest.raises(InputError, match=r"latin1\.jsonl, line 2: invalid UTF-8"):
        read_run(path)


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"field 'format'.*unknown format 'xml'"):
        read_run(tmp_path / "x.txt", format="xml")
    with pytest.raises(InputError, match=r"field 'format'.*cannot write yaml"):
        write_run(Run.from_lists({"q": ["a"]}), tmp_path / "x.yaml")


def test_frames_and_dicts_name_the_field() -> None:
    frame = pd.DataFrame({"qid": ["q", "q"], "docid": ["a", "b"], "score": [1.0, float("inf")]})
    with pytest.raises(InputError, match=r"<frame>, field 'score': row 2: .*finite"):
        run_from_frame(frame)
    frame = pd.DataFrame({"qid": ["q"], "docid": ["a"], "grade": [0.5]})
    with pytest.raises(InputError, match=r"field 'grade': row 1: .*not an integer"):
        qrels_from_frame(frame)
    frame = pd.DataFrame({"qid": ["q"], "docid": [[1, 2]], "score": [1.0]})
    with pytest.raises(InputError, match=r"field 'docid'"):
        run_from_frame(frame)
    with pytest.raises(InputError, match=r"no query id column"):
        run_from_frame(pd.DataFrame({"docid": ["a"], "score": [1.0]}))
    with pytest.raises(InputError, match=r"not a DataFrame"):
        run_from_frame([1, 2])
    with pytest.raises(InputError, match=r"field 'score'.*not a number"):
        run_from_dict({"q": {"a": "high"}})  # type: ignore[dict-item]
    with pytest.raises(InputError, match=r"one shape"):
        run_from_dict({"q": {"a": 1.0}, "p": ["a"]})
    with pytest.raises(InputError, match=r"field 'q'.*maps to int"):
        qrels_from_dict({"q": 5})  # type: ignore[dict-item]


def test_crlf_is_not_an_error(tmp_path: Path) -> None:
    # trec_eval reads CRLF files; so do we, with a warning (TREC) or silently (JSON, CSV).
    trec = tmp_path / "crlf.qrels"
    trec.write_bytes(b"q 0 a 1\r\nq 0 b 0\r\n")
    qrels = read_qrels(trec)
    assert qrels.to_dict() == {"q": {"a": 1, "b": 0}}
    assert any("CRLF" in w for w in qrels.warnings)
    jsonl = tmp_path / "crlf.jsonl"
    jsonl.write_bytes(b'{"qid":"q","docid":"a","rel":1}\r\n{"qid":"q","docid":"b","rel":0}\r\n')
    assert read_qrels(jsonl).to_dict() == qrels.to_dict()


def test_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "out.tsv"
    path.write_text("old\n")
    with pytest.raises(InputError, match="tab or line break"):
        write_run(Run.from_lists({"q": ["a\nb"]}), path)
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]
