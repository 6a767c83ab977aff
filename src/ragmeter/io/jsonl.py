"""Runs and qrels as JSON rows: JSONL files (one object per line) or JSON arrays of objects.

* run rows: ``{"query_id": "q1", "doc_id": "d3", "score": 12.5}`` (``rank`` instead of
  ``score`` orders by rank; with neither, rows keep their order within a query), optional
  ``text``.
* qrels rows: ``{"query_id": "q1", "doc_id": "d3", "relevance": 2}``.
* a TREC RAG answer file (Ragnarök's JSONL, ``topic_id`` and ``answer``) is read as the run
  of each answer's references (:func:`ragmeter.io.nuggets.read_rag_run`).

Column-name variants (``qid``, ``docid``, ``grade``, ``rel``…) are those of
:mod:`ragmeter.io._columns`. Large regular files go through Arrow's JSON reader; anything it
cannot read, and every error, goes through a line-by-line path that names the line and field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np
import pyarrow as pa

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io import _columns as cols
from ragmeter.io._common import (
    MAX_ARROW_JSON_DEPTH,
    PathLike,
    atomic_write_text,
    check_text,
    json_id,
    json_kind,
    json_nesting_depth,
    read_bytes,
)
from ragmeter.io._documents import first_jsonl_value, parse_jsonl
from ragmeter.io.nuggets import is_rag_answer
from ragmeter.io.samples import is_sample, samples_from_document

#: JSON string literal of a Python string (the C encoder ``json.dumps`` itself uses).
_str: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]

Record = tuple[Any, int | None]


class _Roles(NamedTuple):
    """The keys of one row shape that hold each role."""

    query: str
    doc: str
    value: str | None
    text: str | None
    kind: str  # "score", "rank", "grade" or "" (rows in given order)


def _roles(names: list[str], *, qrels: bool, source: str, line: int | None) -> _Roles:
    def find(variants: tuple[str, ...], role: str, required: bool) -> str | None:
        return cols.find_column(
            names, variants, role=role, source=source, required=required, line=line
        )

    q = find(cols.QUERY, "query id", True)
    d = find(cols.DOC, "doc id", True)
    assert q is not None and d is not None
    if qrels:
        return _Roles(q, d, find(cols.GRADE, "relevance grade", True), None, "grade")
    text = find(cols.TEXT, "text", False)
    score = find(cols.SCORE, "score", False)
    if score is not None:
        return _Roles(q, d, score, text, "score")
    rank = find(cols.RANK, "rank", False)
    return _Roles(q, d, rank, text, "rank" if rank is not None else "")


def _where(line: int | None, index: int) -> str:
    """The prefix naming a row that has no line number (rows given in memory)."""
    return "" if line is not None else f"row {index}: "


def _scalar(value: Any, field: str, source: str, line: int | None, index: int) -> Any:
    if isinstance(value, Mapping | list):
        kind = "an object" if isinstance(value, Mapping) else "an array"
        raise InputError(
            f"{_where(line, index)}value is {kind}; expected a string or a number",
            source=source,
            line=line,
            field=field,
        )
    return value


def _id_text(value: Any, field: str, source: str, line: int | None, index: int) -> str:
    return json_id(value, source=source, line=line, field=field, where=_where(line, index))


def _number(value: Any, field: str, source: str, line: int | None, index: int) -> float:
    """The finite number a row's score, rank or grade holds (a number or a numeric string)."""
    where = _where(line, index)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise InputError(
                f"{where}{value!r} is not a number", source=source, line=line, field=field
            ) from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(
            f"{where}value is {json_kind(value)}; expected a number",
            source=source,
            line=line,
            field=field,
        )
    number = float(value)
    if not math.isfinite(number):
        raise InputError(
            f"{where}value is {number!r}; expected a finite number",
            source=source,
            line=line,
            field=field,
        )
    return number


def _text(value: Any, field: str, source: str, line: int | None) -> str | None:
    """A row's passage text: a string or null."""
    if value is not None and not isinstance(value, str):
        raise InputError(
            f"text is {type(value).__name__}; expected a string",
            source=source,
            line=line,
            field=field,
        )
    return value


def _rows_table(
    records: Sequence[Record], source: str, *, qrels: bool
) -> tuple[pa.Table, np.ndarray | None]:
    """Validate JSON row objects and gather them into a table with canonical column names."""
    qids: list[str] = []
    docs: list[str] = []
    values: list[float] = []
    texts: list[str | None] = []
    lines: list[int] = []
    value_kind: str | None = None  # "score", "rank", "grade" or "" (none) — fixed by row 1
    cache: dict[tuple[str, ...], _Roles] = {}
    first: _Roles | None = None
    for index, (rec, line) in enumerate(records, start=1):
        if not isinstance(rec, Mapping):
            raise InputError(
                f"{_where(line, index)}row is {type(rec).__name__}; expected a JSON object",
                source=source,
                line=line,
            )
        key = tuple(str(k) for k in rec)
        roles = cache.get(key)
        if roles is None:
            if qrels:
                cols.refuse_span_labels(key, source, line)
            roles = _roles(list(key), qrels=qrels, source=source, line=line)
            cache[key] = roles
        q, d, v, t, kind = roles
        if first is None:
            first = roles
        if value_kind is None:
            value_kind = kind
        elif kind != value_kind:
            raise InputError(
                f"row has {('no score or rank' if not kind else repr(v))} but the first row "
                f"has {('no score or rank' if not value_kind else 'a ' + value_kind)}; "
                "expected every row to order documents the same way",
                source=source,
                line=line,
                field=v or "score",
            )
        qids.append(_id_text(_scalar(rec[q], q, source, line, index), q, source, line, index))
        docs.append(_id_text(_scalar(rec[d], d, source, line, index), d, source, line, index))
        if v is not None:
            values.append(_number(_scalar(rec[v], v, source, line, index), v, source, line, index))
        texts.append(_text(rec[t], t, source, line) if t is not None else None)
        lines.append(line if line is not None else -1)
    if not records:
        raise InputError("no rows; expected one JSON object per line", source=source)
    # Columns keep the first row's key names, so that errors name the user's fields.
    assert first is not None
    columns: dict[str, Any] = {
        first.query: pa.array(qids, type=pa.string()),
        first.doc: pa.array(docs, type=pa.string()),
    }
    if first.value is not None:
        columns[first.value] = pa.array(values, type=pa.float64())
    if any(x is not None for x in texts):
        columns[first.text or "text"] = pa.array(texts, type=pa.string())
    line_arr = None if any(x < 0 for x in lines) else np.asarray(lines, dtype=np.int64)
    return pa.table(columns), line_arr


def run_from_records(records: Sequence[Record], *, source: str, name: str) -> Run:
    """A run from ``(row object, line)`` pairs."""
    table, lines = _rows_table(records, source, qrels=False)
    return cols.run_from_table(table, source=source, name=name, lines=lines)


def qrels_from_records(records: Sequence[Record], *, source: str, name: str) -> Qrels:
    """Qrels from ``(row object, line)`` pairs."""
    table, lines = _rows_table(records, source, qrels=True)
    return cols.qrels_from_table(table, source=source, name=name, lines=lines)


def _fast_table(data: bytes) -> pa.Table:
    """Arrow's multi-threaded JSON reader; raises on anything irregular (the caller then
    takes the line-by-line path, which reads it or names the problem)."""
    import pyarrow.json as pajson

    if json_nesting_depth(data) > MAX_ARROW_JSON_DEPTH:
        raise ValueError("nested too deeply for Arrow's reader")
    return pajson.read_json(pa.py_buffer(data), read_options=pajson.ReadOptions(block_size=1 << 24))


def _load(path: PathLike) -> tuple[bytes, str, bool]:
    """The file's bytes, its source name, and whether it holds samples rather than rows."""
    source = str(path)
    data = read_bytes(path)
    check_text(data, source, what="one JSON object per line")
    first = first_jsonl_value(data, source)
    return data, source, is_sample(first)


_T = TypeVar("_T", Run, Qrels)


def _from_rows(
    data: bytes,
    source: str,
    name: str,
    from_table: Callable[..., _T],
    from_records: Callable[..., _T],
) -> _T:
    """Row objects read by the columnar fast path, else (a problem there) record by record,
    which names the line and field of a bad row."""
    try:
        return from_table(_fast_table(data), source=source, name=name)
    except (InputError, pa.ArrowException, ValueError, TypeError):
        pass
    doc = parse_jsonl(data, source)
    assert doc.records is not None
    return from_records(doc.records, source=source, name=name)


def read_jsonl_run(path: PathLike, *, name: str | None = None) -> Run:
    """Read a run from a JSONL file of row objects (or of samples: their retrieved lists)."""
    data, source, samples = _load(path)
    run_name = name or Path(path).name
    if is_rag_answer(first_jsonl_value(data, source)):
        from ragmeter.io.nuggets import read_rag_run

        return read_rag_run(path, name=run_name)
    if samples:
        doc = parse_jsonl(data, source)
        return samples_from_document(doc, name=run_name, need_qrels=False).run
    return _from_rows(data, source, run_name, cols.run_from_table, run_from_records)


def read_jsonl_qrels(path: PathLike, *, name: str | None = None) -> Qrels:
    """Read qrels from a JSONL file of row objects (or of samples: their expected output)."""
    data, source, samples = _load(path)
    qrels_name = name or Path(path).name
    if samples:
        doc = parse_jsonl(data, source)
        return samples_from_document(doc, name=qrels_name, need_run=False).qrels
    return _from_rows(data, source, qrels_name, cols.qrels_from_table, qrels_from_records)


def write_jsonl_run(run: Run, path: PathLike) -> None:
    """Write ``run`` as JSONL rows ``{"query_id", "doc_id", "rank", "score"[, "text"]}``,
    rank order, atomically. Scores are written exactly (shortest round-trip form)."""
    docs = [_str(d) for d in run.doc_ids.to_pylist()]
    texts = None
    if run.texts is not None:
        texts = ["null" if t is None else _str(t) for t in run.texts.to_pylist()]
    scores = run.scores.tolist()
    out: list[str] = []
    for i, q in enumerate(run.query_ids):
        qid = _str(str(q))
        a, b = int(run.offsets[i]), int(run.offsets[i + 1])
        for rank, j in enumerate(range(a, b), start=1):
            tail = "}" if texts is None else f', "text": {texts[j]}}}'
            out.append(
                f'{{"query_id": {qid}, "doc_id": {docs[j]}, "rank": {rank}, '
                f'"score": {_float(scores[j])}{tail}'
            )
    atomic_write_text(path, "\n".join(out) + ("\n" if out else ""))


def write_jsonl_qrels(qrels: Qrels, path: PathLike) -> None:
    """Write ``qrels`` as JSONL rows ``{"query_id", "doc_id", "relevance"}``, atomically."""
    docs = [_str(d) for d in qrels.doc_ids.to_pylist()]
    grades = qrels.grades.tolist()
    out: list[str] = []
    for i, q in enumerate(qrels.query_ids):
        qid = _str(str(q))
        for j in range(int(qrels.offsets[i]), int(qrels.offsets[i + 1])):
            out.append(f'{{"query_id": {qid}, "doc_id": {docs[j]}, "relevance": {grades[j]}}}')
    atomic_write_text(path, "\n".join(out) + ("\n" if out else ""))


def _float(value: float) -> str:
    """A finite float in JSON: Python's shortest round-trip ``repr``."""
    if not math.isfinite(value):
        raise InputError(f"score {value!r} cannot be written as JSON; expected a finite number")
    return repr(value)
