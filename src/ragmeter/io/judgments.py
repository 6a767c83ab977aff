"""Readers and writers of sub-question judgments, corpora and rated answers (SPEC §4).

Judgments, three formats (chosen by ``format=`` or the file extension):

* ``jsonl`` (``.jsonl``, ``.json``): one passage per line,
  ``{"query_id": "q1", "doc_id": "d3", "ratings": [r_1, …, r_n]}``; the released CRUX field
  names ``example_id``, ``pid`` and ``rating`` are read too.
* ``tsv`` (``.tsv``): long form, one cell per line, ``qid qnum docid rating`` with ``qnum``
  the 1-based sub-question number; a cell not listed rates 0.
* ``diversity`` (any other extension: ``.txt``, ``.qrels``): TREC diversity qrels
  ``qid subtopic docid judgment``; a positive judgment rates 5 (answerable at any τ ≤ 5), any
  other 0. Subtopic ``s`` is sub-question ``s``; a query whose subtopics start at 0 or below
  (ir_measures writes the qrels' iteration column, which ndeval reads as the subtopic, and
  it is 0 in most qrels) has them shifted so that its smallest is sub-question 1.

Ratings are integers in −1..5 (−1 = unparseable judge output, never answerable). A ratings
vector whose length differs from the query's other lines (or from its sub-questions), a rating
out of range, or a doc judged twice with different ratings is an :class:`InputError` naming
the file and line.

Also: sub-questions JSONL ``{"query_id", "questions": [...]}``, corpora JSONL
``{"id", "text"}`` and rated answers JSONL ``{"query_id", "ratings": [...], "text": ...}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from ragmeter.core.judgments import Answers, Corpus, Judgments
from ragmeter.errors import InputError
from ragmeter.io._common import (
    MAX_ARROW_JSON_DEPTH,
    PathLike,
    atomic_write,
    check_text,
    decode,
    format_suffix,
    json_id,
    json_kind,
    json_nesting_depth,
    read_bytes,
)
from ragmeter.io._documents import parse_jsonl

JudgmentsFormat = Literal["jsonl", "tsv", "diversity"]

_QUERY_KEYS = ("query_id", "example_id", "qid")
_DOC_KEYS = ("doc_id", "pid", "docid")
_RATING_KEYS = ("ratings", "rating")
#: the largest judgment of diversity qrels, as for a TREC qrels grade (a C ``int``)
_MAX_JUDGMENT = 2**31 - 1


def detect_judgments_format(path: PathLike) -> JudgmentsFormat:
    suffix = format_suffix(path)
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix == ".tsv":
        return "tsv"
    return "diversity"


#: a line break followed by a blank line (or by blanks up to the end)
_BREAK_BEFORE_BLANK = re.compile(rb"\n(?=[ \t\r]*(?:\n|\Z))")
_BLANK_START = re.compile(rb"[ \t\r]*(?:\n|\Z)")


def _non_blank_lines(data: bytes) -> int:
    """Lines holding more than blanks: the pieces between line breaks, less the blank ones."""
    blank = len(_BREAK_BEFORE_BLANK.findall(data)) + bool(_BLANK_START.match(data))
    return data.count(b"\n") + 1 - blank


def _arrow_table(data: bytes) -> pa.Table | None:
    """Arrow's multi-threaded JSON reader on ``data``, or ``None`` where it refuses.

    ``None`` also when Arrow read more rows than there are non-blank lines (it takes two
    objects on one line, which JSON Lines does not allow): the line-by-line reader then
    reads the file or names the bad line, so both paths accept exactly the same files.
    """
    import pyarrow.json as pajson

    if json_nesting_depth(data) > MAX_ARROW_JSON_DEPTH:
        return None  # Arrow's parser recurses: 100,000 nested arrays overflow the C stack
    try:
        table = pajson.read_json(
            pa.py_buffer(data), read_options=pajson.ReadOptions(block_size=1 << 24)
        )
    except (pa.ArrowException, ValueError):
        return None
    if table.num_rows == 0 or table.num_rows != _non_blank_lines(data):
        return None
    return table


def _arrow_ids(table: pa.Table, keys: Sequence[str]) -> pa.Array | None:
    """The one id column of ``keys`` present, as strings; ``None`` unless it is a column of
    strings or integers without a gap (anything else goes to the line-by-line reader)."""
    present = [k for k in keys if k in table.column_names]
    if len(present) != 1:
        return None
    try:
        column = table.column(present[0]).combine_chunks()
    except pa.ArrowException:
        return None
    if column.null_count or not (
        pa.types.is_string(column.type)
        or pa.types.is_large_string(column.type)
        or pa.types.is_int64(column.type)
    ):
        return None
    return column if not pa.types.is_int64(column.type) else column.cast(pa.string())


def _arrow_lists(
    table: pa.Table, keys: Sequence[str], value: pa.DataType
) -> tuple[np.ndarray, pa.Array] | None:
    """The one list column of ``keys``: per-row lengths and the flat values, or ``None``
    unless every row has a list (possibly empty) of ``value`` without nulls."""
    present = [k for k in keys if k in table.column_names]
    if len(present) != 1:
        return None
    chunked = table.column(present[0])
    if not pa.types.is_list(chunked.type) or chunked.type.value_type != value:
        return None
    try:
        column = chunked.combine_chunks()
        if column.null_count or column.values.null_count:
            return None
        offsets = column.offsets.to_numpy()
        values = column.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    except pa.ArrowException:  # seen on lists with nulls: leave them to the other reader
        return None
    if values.null_count:
        return None
    return np.diff(offsets).astype(np.int64), values


def _fast_judgments(
    data: bytes, questions: Mapping[str, Sequence[str]] | None, name: str, source: str
) -> Judgments | None:
    """Judgments JSONL through Arrow; ``None`` wherever the line-by-line reader must decide.

    Every check of that reader holds here column-wise: one id field per role, ids strings
    or integers, ratings integers in −1..5; an irregular file (missing field, null, float or
    boolean rating, mixed types) and every error are left to it, so both paths give the same
    judgments, warnings and messages.
    """
    table = _arrow_table(data)
    if table is None:
        return None
    qids = _arrow_ids(table, _QUERY_KEYS)
    docs = _arrow_ids(table, _DOC_KEYS) if qids is not None else None
    ratings = _arrow_lists(table, _RATING_KEYS, pa.int64()) if docs is not None else None
    if qids is None or docs is None or ratings is None:
        return None
    lengths, values = ratings
    flat = values.to_numpy()
    if len(flat) and (flat.min() < -1 or flat.max() > 5):
        return None
    try:
        return Judgments.from_flat(
            qids, docs, lengths, flat, questions=questions, name=name, source=source
        )
    except InputError:
        return None  # the line-by-line reader names the line


def _fast_questions(data: bytes) -> dict[str, list[str]] | None:
    """Sub-questions JSONL through Arrow; ``None`` wherever the line-by-line reader must
    decide (as :func:`_fast_judgments`), including a query listed twice."""
    table = _arrow_table(data)
    if table is None:
        return None
    qids = _arrow_ids(table, _QUERY_KEYS)
    lists = _arrow_lists(table, ("questions",), pa.string()) if qids is not None else None
    if qids is None or lists is None:
        return None
    lengths, values = lists
    texts = values.to_pylist()
    bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    out = {q: texts[bounds[i] : bounds[i + 1]] for i, q in enumerate(qids.to_pylist())}
    return out if len(out) == len(qids) else None


def _records(path: PathLike, what: str, data: bytes | None = None) -> list[tuple[Any, int]]:
    source = str(path)
    if data is None:
        data = read_bytes(path)
        check_text(data, source, what=what)
    doc = parse_jsonl(data, source)
    assert doc.records is not None
    out = []
    for value, line in doc.records:
        if not isinstance(value, dict):
            raise InputError(
                f"line holds {type(value).__name__}; expected a JSON object ({what})",
                source=source,
                line=line,
            )
        out.append((value, int(line or 0)))
    return out


def _key(record: Mapping[str, Any], keys: Sequence[str], source: str, line: int) -> str:
    found = [k for k in keys if k in record]
    if not found:
        raise InputError(
            f"no {keys[0]!r} field (also read: {', '.join(repr(k) for k in keys[1:])}); "
            f"fields here: {', '.join(sorted(map(str, record))) or 'none'}",
            source=source,
            line=line,
            field=keys[0],
        )
    if len(found) > 1:
        raise InputError(
            f"both {found[0]!r} and {found[1]!r} given; expected one",
            source=source,
            line=line,
            field=found[0],
        )
    return found[0]


def _id(record: Mapping[str, Any], keys: Sequence[str], source: str, line: int) -> str:
    key = _key(record, keys, source, line)
    value = json_id(record[key], source=source, line=line, field=key)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                f"id {value!r} holds an unpaired surrogate escape (\\ud800-\\udfff); "
                "expected text that UTF-8 can hold",
                source=source,
                line=line,
                field=key,
            ) from None
    return value


def _ratings(record: Mapping[str, Any], source: str, line: int) -> list[Any]:
    key = _key(record, _RATING_KEYS, source, line)
    value = record[key]
    if not isinstance(value, list):
        raise InputError(
            f"ratings are {json_kind(value)}; "
            "expected an array of integers −1..5, one per sub-question",
            source=source,
            line=line,
            field=key,
        )
    return value


def read_questions(path: PathLike) -> dict[str, list[str]]:
    """Sub-questions JSONL: ``{"query_id": "q1", "questions": ["…", …]}`` per line."""
    source = str(path)
    data = read_bytes(path)
    check_text(data, source, what="one {query_id, questions} object per line")
    fast = _fast_questions(data)
    if fast is not None:
        return fast
    out: dict[str, list[str]] = {}
    lines: dict[str, int] = {}
    for record, line in _records(path, "one {query_id, questions} object per line", data):
        q = _id(record, _QUERY_KEYS, source, line)
        questions = record.get("questions")
        if not isinstance(questions, list) or not all(isinstance(t, str) for t in questions):
            raise InputError(
                "expected an array of question strings", source=source, line=line, field="questions"
            )
        _once(lines, q, "query", "query_id", source, line)
        out[q] = questions
    return out


def _once(seen: dict[str, int], key: str, what: str, field: str, source: str, line: int) -> None:
    """Note that ``key`` stands on ``line``: an error naming the first line when an earlier
    line had it."""
    if key in seen:
        raise InputError(
            f"{what} '{key}' listed twice (first on line {seen[key]})",
            source=source,
            line=line,
            field=field,
        )
    seen[key] = line


def read_judgments(
    path: PathLike,
    *,
    format: JudgmentsFormat | None = None,
    questions: PathLike | Mapping[str, Sequence[str]] | None = None,
    name: str | None = None,
) -> Judgments:
    """Read judgments (see the module docstring for the formats).

    ``questions`` (a sub-questions JSONL file or ``{qid: [texts]}``) fixes each query's number
    of sub-questions and keeps their texts.
    """
    fmt = format or detect_judgments_format(path)
    qmap: Mapping[str, Sequence[str]] | None
    if questions is None or isinstance(questions, Mapping):
        qmap = questions
    else:
        qmap = read_questions(questions)
    label = name or Path(path).stem
    if fmt == "jsonl":
        return _read_jsonl(path, qmap, label)
    if fmt in ("tsv", "diversity"):
        return _read_long(path, qmap, label, diversity=fmt == "diversity")
    raise ValueError(f"unknown judgments format {fmt!r}; expected jsonl, tsv or diversity")


def _read_jsonl(
    path: PathLike, questions: Mapping[str, Sequence[str]] | None, name: str
) -> Judgments:
    source = str(path)
    data = read_bytes(path)
    check_text(data, source, what="one {query_id, doc_id, ratings} object per line")
    fast = _fast_judgments(data, questions, name, source)
    if fast is not None:
        return fast
    qids: list[str] = []
    docs: list[str] = []
    ratings: list[list[Any]] = []
    lines: list[int] = []
    for record, line in _records(path, "one {query_id, doc_id, ratings} object per line", data):
        qids.append(_id(record, _QUERY_KEYS, source, line))
        docs.append(_id(record, _DOC_KEYS, source, line))
        ratings.append(_ratings(record, source, line))
        lines.append(line)
    return Judgments.from_rows(
        qids, docs, ratings, questions=questions, name=name, source=source, lines=lines
    )


def _read_long(
    path: PathLike,
    questions: Mapping[str, Sequence[str]] | None,
    name: str,
    *,
    diversity: bool,
) -> Judgments:
    """``qid qnum docid rating`` (or ``qid subtopic docid judgment``) lines → rows."""
    source = str(path)
    data = read_bytes(path)
    check_text(data, source, what="lines 'qid qnum docid rating'")
    text = decode(data, source)
    cells: dict[tuple[str, str], dict[int, tuple[int, int]]] = {}
    first_line: dict[tuple[str, str], int] = {}
    width: dict[str, int] = {}
    lowest: dict[str, int] = {}  # a query's smallest subtopic (diversity qrels may start at 0)
    what = "subtopic" if diversity else "qnum"
    for number, raw in enumerate(text.split("\n"), start=1):
        fields = raw.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(
                f"{len(fields)} fields; expected 4: qid {what} docid "
                f"{'judgment' if diversity else 'rating'}",
                source=source,
                line=number,
            )
        q, num_text, d, value_text = fields
        try:
            num = int(num_text)
        except ValueError:
            raise InputError(
                f"{num_text!r} is not an integer", source=source, line=number, field=what
            ) from None
        if num < 1 and not diversity:
            raise InputError(
                f"{what} {num} < 1; sub-questions are numbered from 1",
                source=source,
                line=number,
                field=what,
            )
        try:
            value = int(value_text)
        except ValueError:
            raise InputError(
                f"{value_text!r} is not an integer", source=source, line=number, field="rating"
            ) from None
        if diversity:
            if abs(value) > _MAX_JUDGMENT:  # as a TREC qrels grade
                raise InputError(
                    f"judgment {value_text} out of range; expected at most {_MAX_JUDGMENT} "
                    "in magnitude",
                    source=source,
                    line=number,
                    field="judgment",
                )
            value = 5 if value > 0 else 0
        elif not -1 <= value <= 5:
            raise InputError(
                f"rating {value} is outside −1..5 (−1 = unparseable judge output)",
                source=source,
                line=number,
                field="rating",
            )
        key = (q, d)
        row = cells.setdefault(key, {})
        first_line.setdefault(key, number)
        if num in row and row[num][0] != value:
            raise InputError(
                f"query '{q}' doc '{d}' {what} {num} rated {value} here but {row[num][0]} on "
                f"line {row[num][1]}; expected one rating per (query, doc, sub-question)",
                source=source,
                line=number,
                field="rating",
            )
        row.setdefault(num, (value, number))
        width[q] = max(width.get(q, num), num)
        lowest[q] = min(lowest.get(q, 1), num)
    qids: list[str] = []
    docs: list[str] = []
    ratings: list[list[int]] = []
    lines: list[int] = []
    for (q, d), row in cells.items():
        # subtopics numbered from 0 (ir_measures' iteration column, which ndeval reads as
        # the subtopic) or below are shifted so that the query's smallest is sub-question 1
        shift = 1 - lowest[q]
        n = width[q] + shift
        if questions is not None and q in questions:
            n_q = len(questions[q])
            if n > n_q:
                bad = max(row.items(), key=lambda kv: kv[0])
                raise InputError(
                    f"{what} {bad[0]} but query '{q}' has {n_q} sub-questions",
                    source=source,
                    line=bad[1][1],
                    field=what,
                )
            n = n_q
        vec = [0] * n
        for num, (value, _) in row.items():
            vec[num + shift - 1] = value
        qids.append(q)
        docs.append(d)
        ratings.append(vec)
        lines.append(first_line[(q, d)])
    return Judgments.from_rows(
        qids, docs, ratings, questions=questions, name=name, source=source, lines=lines
    )


def read_corpus(path: PathLike, *, name: str | None = None) -> Corpus:
    """Passage texts, JSONL ``{"id": "d3", "text": "…"}`` (``doc_id``/``pid``/``_id`` and
    ``contents`` are read too). A repeated id is an error."""
    source = str(path)
    ids: list[str] = []
    texts: list[str] = []
    seen: dict[str, int] = {}
    for record, line in _records(path, "one {id, text} object per line"):
        d = _id(record, ("id", "doc_id", "pid", "_id", "docid"), source, line)
        key = _key(record, ("text", "contents"), source, line)
        text = record[key]
        if not isinstance(text, str):
            raise InputError(
                f"text is {type(text).__name__}; expected a string",
                source=source,
                line=line,
                field=key,
            )
        _once(seen, d, "id", "id", source, line)
        ids.append(d)
        texts.append(text)
    return Corpus(
        pa.array(ids, type=pa.string()), pa.array(texts, type=pa.string()), name=name or source
    )


def read_answers(path: PathLike) -> Answers:
    """Rated answers, JSONL ``{"query_id": "q1", "ratings": [...], "text": "…"}``."""
    source = str(path)
    qids: list[str] = []
    ratings: list[list[Any]] = []
    texts: list[str | None] = []
    lines: list[int] = []
    for record, line in _records(path, "one {query_id, ratings, text} object per line"):
        qids.append(_id(record, _QUERY_KEYS, source, line))
        ratings.append(_ratings(record, source, line))
        text = record.get("text")
        if text is not None and not isinstance(text, str):
            raise InputError(
                f"text is {type(text).__name__}; expected a string",
                source=source,
                line=line,
                field="text",
            )
        texts.append(text)
        lines.append(line)
    return Answers.from_rows(qids, ratings, texts, source=source, lines=lines)


def write_crux_qrels(
    judgments: Judgments,
    *,
    graded: PathLike | None = None,
    diversity: PathLike | None = None,
    tau: int = 3,
) -> int:
    """Write graded qrels (``qid 0 docid label``: required 3, partially redundant 2, fully
    redundant 1) and diversity qrels (``qid subtopic docid 0/1``, 1 ⇔ rating ≥ τ), atomically.

    Queries without any answerable sub-question are left out of both files (as the released
    CRUX code does); their number is returned.
    """
    keep_q = judgments.n_answerable(tau) > 0
    row_q = judgments.row_query
    keep_rows = keep_q[row_q]
    docs = judgments.doc_ids.to_pylist()
    qids = judgments.query_ids.tolist()
    if graded is not None:
        labels = judgments.labels(tau).tolist()
        graded_text = "".join(
            f"{qids[row_q[r]]} 0 {docs[r]} {labels[r]}\n"
            for r in np.flatnonzero(keep_rows).tolist()
        )
        _write(graded, graded_text)
    if diversity is not None:
        rows, numbers, answerable = judgments.diversity_rows(tau)
        keep = keep_rows[rows]
        rows_l = rows[keep].tolist()
        nums = numbers[keep].tolist()
        ans = answerable[keep].astype(np.int64).tolist()
        div_text = "".join(
            f"{qids[row_q[r]]} {n} {docs[r]} {a}\n"
            for r, n, a in zip(rows_l, nums, ans, strict=True)
        )
        _write(diversity, div_text)
    return int((~keep_q).sum())


def format_judgments(judgments: Judgments) -> str:
    """``judgments`` as JSONL, one ``{"query_id", "doc_id", "ratings"}`` object per passage
    (queries in byte order, passages in their order): what :func:`read_judgments` reads."""
    import json

    docs = judgments.doc_ids.to_pylist()
    ratings = judgments.ratings.tolist()
    bounds = judgments.rating_offsets.tolist()
    out = []
    for i, q in enumerate(judgments.query_ids.tolist()):
        for r in range(int(judgments.offsets[i]), int(judgments.offsets[i + 1])):
            row = {"query_id": q, "doc_id": docs[r], "ratings": ratings[bounds[r] : bounds[r + 1]]}
            out.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(out)


def write_judgments(judgments: Judgments, path: PathLike) -> None:
    """Write ``judgments`` as JSONL (:func:`format_judgments`), atomically."""
    _write(path, format_judgments(judgments))


def _write(path: PathLike, text: str) -> None:
    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)

    atomic_write(path, write)


__all__ = [
    "detect_judgments_format",
    "format_judgments",
    "read_answers",
    "read_corpus",
    "read_judgments",
    "read_questions",
    "write_crux_qrels",
    "write_judgments",
]
