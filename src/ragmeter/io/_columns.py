"""Named columns → :class:`Run` / :class:`Qrels`, shared by JSONL, CSV, Parquet and frames.

Column names are matched case-insensitively, with ``-`` and spaces read as ``_`` (so
``query-id``, ``Query ID`` and ``queryId`` all name the query id):

* query id: ``query_id``, ``qid``, ``queryid``, ``topic_id``, ``topic``
* doc id: ``doc_id``, ``docid``, ``docno``, ``document_id``, ``passage_id``, ``pid``,
  ``corpus_id``
* run score: ``score``; run rank: ``rank`` (used only when there is no score; rank 1 first)
* qrels grade: ``relevance``, ``grade``, ``rel``, ``label``, ``judgment``, ``judgement``, then
  ``score`` (BEIR's qrels column)
* passage text (runs, optional): ``text``, ``passage``, ``contents``

A run with a score column is ordered by score (ties by doc id descending, as TREC runs); with
only a rank column, by rank; with neither, rows keep their given order within each query.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io._common import SCORE_SYNTAX

QUERY = ("query_id", "qid", "queryid", "topic_id", "topic")
DOC = ("doc_id", "docid", "docno", "document_id", "passage_id", "pid", "corpus_id")
SCORE = ("score",)
RANK = ("rank",)
GRADE = ("relevance", "grade", "rel", "label", "judgment", "judgement", "score")
TEXT = ("text", "passage", "contents")


def normalize(name: str) -> str:
    """Canonical spelling of a column name: lower case, ``-`` and spaces as ``_``."""
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def find_column(
    names: Sequence[str],
    variants: Sequence[str],
    *,
    role: str,
    source: str,
    required: bool,
    line: int | None = None,
) -> str | None:
    """The column of ``names`` that plays ``role`` (the first variant present), or ``None``.

    Two columns matching different variants of the same role is an error (which one was meant
    is unclear), and so is a missing required role.
    """
    by_norm: dict[str, list[str]] = {}
    for n in names:
        by_norm.setdefault(normalize(str(n)), []).append(str(n))
    found = [(v, by_norm[v]) for v in variants if v in by_norm]
    if not found:
        if required:
            raise InputError(
                f"no {role} column; expected one named {_alternatives(variants)} "
                f"(found: {', '.join(repr(str(n)) for n in names) or 'none'})",
                source=source,
                line=line,
                field=variants[0],
            )
        return None
    matches = [m for _, ms in found for m in ms]
    if len(matches) > 1:
        raise InputError(
            f"columns {' and '.join(repr(m) for m in matches)} both name the {role}; "
            "expected exactly one",
            source=source,
            line=line,
            field=matches[0],
        )
    return matches[0]


def _alternatives(variants: Sequence[str]) -> str:
    quoted = [f"'{v}'" for v in variants]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


class Locator:
    """Says where row ``i`` of a column came from: a line of a file, or a row number."""

    def __init__(self, source: str, lines: npt.NDArray[np.int64] | None) -> None:
        self.source = source
        self.lines = lines

    def error(self, i: int, field: str, reason: str) -> InputError:
        """An :class:`InputError` about row ``i`` (0-based) and ``field``."""
        if self.lines is not None:
            return InputError(reason, source=self.source, line=int(self.lines[i]), field=field)
        return InputError(f"row {i + 1}: {reason}", source=self.source, field=field)


def id_column(col: Any, field: str, loc: Locator) -> pa.Array:
    """An id column as an Arrow string array; null or empty ids are errors."""
    arr = _as_array(col)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if arr.null_count:
        i = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise loc.error(i, field, "missing value; expected an id")
    if pa.types.is_floating(arr.type) or pa.types.is_boolean(arr.type):
        raise loc.error(0, field, f"ids are {arr.type}; expected strings or integers")
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        try:
            arr = pc.cast(arr, pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise loc.error(0, field, f"ids are {arr.type}; expected strings") from None
    empty = pc.equal(pc.utf8_length(arr), 0)
    if pc.any(empty).as_py():
        i = int(np.flatnonzero(empty.to_numpy(zero_copy_only=False))[0])
        raise loc.error(i, field, "empty id; expected a non-empty string")
    padded = pc.not_equal(pc.utf8_trim_whitespace(arr), arr)
    if pc.any(padded).as_py():
        i = int(np.flatnonzero(padded.to_numpy(zero_copy_only=False))[0])
        raise loc.error(
            i,
            field,
            f"id {arr[i].as_py()!r} has leading or trailing white space; expected a trimmed id",
        )
    return arr


def text_column(col: Any, field: str, loc: Locator) -> pa.Array:
    """A passage-text column as an Arrow string array (null texts become empty strings)."""
    arr = _as_array(col)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        raise loc.error(0, field, f"texts are {arr.type}; expected strings")
    return pc.fill_null(arr, "")


def number_column(col: Any, field: str, loc: Locator, *, integer: bool) -> npt.NDArray[Any]:
    """A numeric column as float64 (scores) or int32 (grades), every value checked.

    Strings are parsed; a non-numeric, missing, NaN or infinite value is an error naming its
    row, and so is a fractional or out-of-range grade.
    """
    arr = _as_array(col)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    kind = "an integer" if integer else "a number"
    if arr.null_count:
        i = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise loc.error(i, field, f"missing value; expected {kind}")
    if pa.types.is_boolean(arr.type):
        raise loc.error(0, field, f"value is a boolean; expected {kind}")
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        values = _parse_strings(arr, field, loc, kind)
    elif pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type):
        values = arr.to_numpy(zero_copy_only=False).astype(np.float64)
        if integer and pa.types.is_integer(arr.type):
            ints = arr.to_numpy(zero_copy_only=False).astype(np.int64)
            return _check_int_range(ints, field, loc)
    else:
        raise loc.error(0, field, f"column type is {arr.type}; expected {kind}")
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        i = int(bad[0])
        raise loc.error(i, field, f"value is {float(values[i])!r}; expected a finite number")
    if integer:
        frac = np.flatnonzero(values != np.round(values))
        if len(frac):
            i = int(frac[0])
            raise loc.error(
                i, field, f"value {float(values[i])!r} is not an integer; expected {kind}"
            )
        # beyond int64 the cast below is undefined: name the value as written
        huge = np.flatnonzero(np.abs(values) > np.iinfo(np.int32).max)
        if len(huge):
            i = int(huge[0])
            raise loc.error(
                i, field, f"grade {arr[i].as_py()} out of range; expected a 32-bit integer"
            )
        return _check_int_range(values.astype(np.int64), field, loc)
    return values


def _check_int_range(
    ints: npt.NDArray[np.int64], field: str, loc: Locator
) -> npt.NDArray[np.int32]:
    limit = np.iinfo(np.int32)
    bad = np.flatnonzero((ints > limit.max) | (ints <= limit.min))
    if len(bad):
        i = int(bad[0])
        raise loc.error(i, field, f"grade {int(ints[i])} out of range; expected a 32-bit integer")
    return ints.astype(np.int32)


def _parse_strings(arr: pa.Array, field: str, loc: Locator, kind: str) -> npt.NDArray[np.float64]:
    """Numbers written as strings, in decimal notation only (:data:`SCORE_SYNTAX`).

    Python's ``float`` also reads ``1_0``, non-ASCII digits and ``infinity``, Arrow reads
    ``0x1`` as an integer: values C's ``atof`` would read differently (or not) are refused.
    """
    valid = pc.match_substring_regex(arr, f"^{SCORE_SYNTAX}$")
    if not pc.all(valid).as_py():
        i = int(np.flatnonzero(~valid.to_numpy(zero_copy_only=False))[0])
        raise loc.error(
            i,
            field,
            f"{arr[i].as_py()!r} is not {kind}; expected "
            + (
                "ASCII digits (0, 1, -1)"
                if kind == "an integer"
                else "a finite number in decimal notation (1, -0.5, 2e-3)"
            ),
        )
    cast: npt.NDArray[np.float64] = pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False)
    return cast


def _as_array(col: Any) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks()
    if isinstance(col, pa.Array):
        return col
    return pa.array(col)


def given_scores(query_ids: pa.Array) -> npt.NDArray[np.float64]:
    """Scores for rows kept in given order: ``n, n-1, …, 1`` within each query's rows.

    Exact in every format (small integers), and they sort the rows back into their given
    order, so a given-order run written to a TREC file reads back unchanged.
    """
    n = len(query_ids)
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    codes = pc.dictionary_encode(query_ids).indices.to_numpy(zero_copy_only=False)
    codes = codes.astype(np.int64)
    counts = np.bincount(codes)
    pos = np.empty(n, dtype=np.int64)
    # Position of each row within its query, vectorized through a stable sort by query.
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pos[order] = np.arange(n, dtype=np.int64) - starts[sorted_codes]
    out: npt.NDArray[np.float64] = (counts[codes] - pos).astype(np.float64)
    return out


def run_from_table(
    table: pa.Table,
    *,
    source: str,
    name: str,
    lines: npt.NDArray[np.int64] | None = None,
    header_line: int | None = None,
) -> Run:
    """A run from a table with named columns (see the module docstring for the names)."""
    names = table.column_names
    loc = Locator(source, lines)
    qcol = find_column(
        names, QUERY, role="query id", source=source, required=True, line=header_line
    )
    dcol = find_column(names, DOC, role="doc id", source=source, required=True, line=header_line)
    scol = find_column(names, SCORE, role="score", source=source, required=False, line=header_line)
    rcol = None
    if scol is None:
        rcol = find_column(
            names, RANK, role="rank", source=source, required=False, line=header_line
        )
    tcol = find_column(names, TEXT, role="text", source=source, required=False, line=header_line)
    if table.num_rows == 0:
        raise InputError("no rows; expected one row per retrieved document", source=source)
    assert qcol is not None and dcol is not None
    qids = id_column(table.column(qcol), qcol, loc)
    docs = id_column(table.column(dcol), dcol, loc)
    texts = text_column(table.column(tcol), tcol, loc) if tcol is not None else None
    if scol is not None:
        scores = number_column(table.column(scol), scol, loc, integer=False)
        order = "score"
    elif rcol is not None:
        scores = -number_column(table.column(rcol), rcol, loc, integer=False)
        order = "score"
    else:
        scores = given_scores(qids)
        order = "given"
    return Run.from_columns(
        qids,
        docs,
        scores,
        name=name,
        order=order,  # type: ignore[arg-type]
        source=source,
        lines=lines,
        texts=texts,
    )


#: columns that make rows span labels (character offsets of evidence), not qrels
_SPAN_COLUMNS = (
    ("start", "end"),
    ("start_index", "end_index"),
    ("start_char_idx", "end_char_idx"),
    ("question", "references"),  # chunking_evaluation's questions_df.csv
)


def refuse_span_labels(names: Sequence[str], source: str, line: int | None = None) -> None:
    """Rows with character offsets (``start``/``end``) are span labels, not qrels: read as
    qrels they would grade whole documents and score a chunk run 0. An error that says
    where they go (``--spans``)."""
    lowered = {str(n).lower() for n in names}
    if {"chunk_id", "start", "end"} <= lowered:
        raise InputError(
            "these rows have 'chunk_id', 'start' and 'end': a chunk table, not qrels; give "
            "it with --chunks (and the span labels with --spans)",
            source=source,
            line=line,
        )
    for pair in _SPAN_COLUMNS:
        if set(pair) <= lowered:
            raise InputError(
                f"these rows have {pair[0]!r} and {pair[1]!r}: span labels (character "
                "offsets of evidence), not qrels; give them with --spans (and --chunks, the "
                "chunk table of the run's chunking), or make chunk qrels with "
                "'ragmeter spans to-qrels'",
                source=source,
                line=line,
            )


def qrels_from_table(
    table: pa.Table,
    *,
    source: str,
    name: str,
    lines: npt.NDArray[np.int64] | None = None,
    header_line: int | None = None,
) -> Qrels:
    """Qrels from a table with named columns (see the module docstring for the names); span
    labels are refused (:func:`refuse_span_labels`)."""
    names = table.column_names
    refuse_span_labels(names, source, header_line)
    loc = Locator(source, lines)
    qcol = find_column(
        names, QUERY, role="query id", source=source, required=True, line=header_line
    )
    dcol = find_column(names, DOC, role="doc id", source=source, required=True, line=header_line)
    gcol = find_column(
        names, GRADE, role="relevance grade", source=source, required=True, line=header_line
    )
    if table.num_rows == 0:
        raise InputError("no rows; expected one row per judgment", source=source)
    assert qcol is not None and dcol is not None and gcol is not None
    qids = id_column(table.column(qcol), qcol, loc)
    docs = id_column(table.column(dcol), dcol, loc)
    grades = number_column(table.column(gcol), gcol, loc, integer=True)
    return Qrels.from_columns(qids, docs, grades, name=name, source=source, lines=lines)
