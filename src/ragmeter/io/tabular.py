"""CSV, TSV and Parquet files with named columns (read through pyarrow).

CSV and TSV files need a header row naming the columns (see :mod:`ragmeter.io._columns` for the
accepted names, e.g. ``query_id,doc_id,score`` or ``qid,docid,relevance``); other columns are
ignored. Ids are always read as strings (``007`` stays ``007``). TSV fields are not quoted;
CSV fields may be, with ``"``. Errors name the file, the line and the column. A RAGAS or
DeepEval dataset (``user_input``, ``retrieved_contexts``…) is read as samples
(:mod:`ragmeter.io.ragas`).
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.csv as pacsv

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io import _columns as cols
from ragmeter.io._common import (
    PathLike,
    atomic_write,
    check_text,
    csv_cells,
    decode,
    read_bytes,
)

Delimited = Literal["csv", "tsv"]


def _delimiter(kind: Delimited) -> str:
    return "\t" if kind == "tsv" else ","


def _header(text: str, kind: Delimited, source: str) -> tuple[list[str], int]:
    """Column names of the first non-blank line and that line's number."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            if kind == "tsv":
                names = line.rstrip("\r").split("\t")
            else:
                with csv_cells(source, functools.partial(int, number)):
                    names = next(csv.reader([line.rstrip("\r")]))
            return [n.strip() for n in names], number
    raise InputError("file is empty; expected a header row", source=source)


def _row_lines(data: bytes, header_line: int) -> npt.NDArray[np.int64]:
    """Line numbers of the data rows: every non-empty line after the header (Arrow skips
    empty lines)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    starts = np.concatenate([[0], ends + 1])
    ends = np.concatenate([ends, [len(raw)]])
    length = ends - starts
    # A line holding only "\r" (CRLF files) is empty too.
    cr_only = (length == 1) & (raw[np.minimum(starts, max(len(raw) - 1, 0))] == 13)
    nonempty = (length > 0) & ~cr_only
    numbers = np.flatnonzero(nonempty) + 1
    return numbers[numbers > header_line].astype(np.int64)


def _check_row_widths(text: str, kind: Delimited, source: str, names: list[str]) -> None:
    """Find the first line whose field count differs from the header's (slow, for errors)."""
    width = len(names)
    lines = text.split("\n")
    if kind == "tsv":
        rows = ((i, line.rstrip("\r").split("\t")) for i, line in enumerate(lines, start=1))
    else:
        reader = csv.reader(io.StringIO(text, newline=""))
        rows = ((reader.line_num, r) for r in reader)
    with csv_cells(source, lambda: reader.line_num if kind != "tsv" else None):
        _check_widths(rows, width, names, source)


def _check_widths(
    rows: Iterator[tuple[int, list[str]]], width: int, names: list[str], source: str
) -> None:
    seen_header = False
    for number, fields in rows:
        if not fields or fields == [""]:
            continue
        if not seen_header:
            seen_header = True
            continue
        if len(fields) != width:
            raise InputError(
                f"{len(fields)} field(s); expected {width} as in the header: {', '.join(names)}",
                source=source,
                line=number,
            )


def _read_delimited(
    path: PathLike, kind: Delimited
) -> tuple[pa.Table, str, npt.NDArray[np.int64], int]:
    source = str(path)
    data = read_bytes(path)
    check_text(data, source, what="a header row and data rows")
    text = decode(data, source)
    names, header_line = _header(text, kind, source)
    empty = [i for i, n in enumerate(names) if not n]
    if empty:
        raise InputError(
            f"column {empty[0] + 1} of the header has no name; expected a name for every column",
            source=source,
            line=header_line,
        )
    if not any(cols.normalize(n) in cols.QUERY for n in names):
        raise InputError(
            f"the header row ({', '.join(repr(n) for n in names)}) names no query id column; "
            f"expected a header naming the columns, with one of {', '.join(cols.QUERY)} "
            "(for the headerless TREC layout, use format='trec'; for qrels on the command "
            "line, --qrels-format trec)",
            source=source,
            line=header_line,
            field="query_id",
        )
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(
            f"column {dupes[0]!r} appears twice in the header; expected unique names",
            source=source,
            line=header_line,
        )
    try:
        table = pacsv.read_csv(
            pa.py_buffer(data),
            read_options=pacsv.ReadOptions(block_size=1 << 24),
            parse_options=pacsv.ParseOptions(
                delimiter=_delimiter(kind),
                quote_char=False if kind == "tsv" else '"',
                double_quote=kind != "tsv",
                newlines_in_values=kind != "tsv",
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid as exc:
        _check_row_widths(text, kind, source, names)
        raise InputError(f"cannot parse: {exc}", source=source) from None
    lines = _row_lines(data, header_line)
    if len(lines) != table.num_rows:
        lines = None  # type: ignore[assignment]
    return table, source, lines, header_line


def _rag_rows(
    path: PathLike, kind: Delimited | Literal["parquet"]
) -> list[tuple[Any, int | None]] | None:
    """The rows of a RAGAS or DeepEval dataset (with their line numbers), else ``None``."""
    from ragmeter.io.ragas import dataset_kind

    if kind == "parquet":
        table, _ = _read_parquet(path)
        if dataset_kind(dict.fromkeys(table.column_names)) is None:
            return None
        return [(row, None) for row in table.to_pylist()]
    source = str(path)
    data = read_bytes(path)
    check_text(data, source, what="a header row and data rows")
    text = decode(data, source)
    names, _ = _header(text, kind, source)
    if dataset_kind(dict.fromkeys(names)) is None:
        return None
    # strict: a stray quote is an error, not a cell running on to the end of the file
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=_delimiter(kind), strict=True)
    rows: list[tuple[Any, int | None]] = []
    with csv_cells(source, lambda: reader.reader.line_num):  # DictReader's lags a row
        for row in reader:
            rows.append(({k: (v if v != "" else None) for k, v in row.items()}, reader.line_num))
    return rows


def is_rag_dataset(path: PathLike, kind: Delimited | Literal["parquet"]) -> bool:
    """Whether the table at ``path`` is a RAGAS or DeepEval dataset (judged by its columns)."""
    from ragmeter.io.ragas import dataset_kind

    if kind == "parquet":
        import pyarrow.parquet as pq

        names = pq.read_schema(path).names
    else:
        source = str(path)
        data = read_bytes(path)
        check_text(data, source, what="a header row and data rows")
        names, _ = _header(decode(data, source), kind, source)
    return dataset_kind(dict.fromkeys(names)) is not None


def _rag_samples(
    path: PathLike, kind: Delimited | Literal["parquet"], name: str | None, *, run: bool
) -> Any:
    """The run (``run``) or qrels of a RAGAS/DeepEval table; ``None`` if it is not one."""
    rows = _rag_rows(path, kind)
    if rows is None:
        return None
    from ragmeter.io.samples import samples_from_records

    label = name or Path(path).name
    samples = samples_from_records(
        rows, source=str(path), name=label, need_run=run, need_qrels=not run
    )
    return samples.run if run else samples.qrels


def _read_parquet(path: PathLike) -> tuple[pa.Table, str]:
    import pyarrow.parquet as pq

    source = str(path)
    data = read_bytes(path, lines=False)
    if not data:
        raise InputError("file is empty; expected a Parquet file", source=source)
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"not a readable Parquet file: {exc}", source=source) from None
    return table, source


_D = TypeVar("_D", Run, Qrels)


def _read_table(
    path: PathLike,
    kind: Delimited | Literal["parquet"],
    name: str | None,
    from_table: Callable[..., _D],
) -> _D:
    """A run or qrels (``from_table`` says which) of a table file: a RAGAS/DeepEval dataset's
    samples, else the rows of its named columns (errors name the line, or the row)."""
    rag = _rag_samples(path, kind, name, run=from_table is cols.run_from_table)
    if rag is not None:
        return rag  # type: ignore[no-any-return]
    where: dict[str, Any] = {}
    if kind == "parquet":
        table, source = _read_parquet(path)
    else:
        table, source, lines, header = _read_delimited(path, kind)
        where = {"lines": lines, "header_line": header}
    return from_table(table, source=source, name=name or Path(path).name, **where)


def read_csv_run(path: PathLike, *, name: str | None = None, delimiter: Delimited = "csv") -> Run:
    """Read a run from a CSV (or TSV) file with a header row."""
    return _read_table(path, delimiter, name, cols.run_from_table)


def read_csv_qrels(
    path: PathLike, *, name: str | None = None, delimiter: Delimited = "csv"
) -> Qrels:
    """Read qrels from a CSV (or TSV) file with a header row."""
    return _read_table(path, delimiter, name, cols.qrels_from_table)


def read_parquet_run(path: PathLike, *, name: str | None = None) -> Run:
    """Read a run from a Parquet file with named columns (errors name the row)."""
    return _read_table(path, "parquet", name, cols.run_from_table)


def read_parquet_qrels(path: PathLike, *, name: str | None = None) -> Qrels:
    """Read qrels from a Parquet file with named columns (errors name the row)."""
    return _read_table(path, "parquet", name, cols.qrels_from_table)


def run_table(run: Run) -> pa.Table:
    """A run as a table ``query_id, doc_id, rank, score`` (+ ``text``), rank order."""
    lengths = run.lengths()
    qids = np.repeat(run.query_ids, lengths).astype(object)
    ranks = np.arange(len(run), dtype=np.int64) - np.repeat(run.offsets[:-1], lengths) + 1
    columns: dict[str, pa.Array] = {
        "query_id": pa.array(qids.tolist(), type=pa.string()),
        "doc_id": run.doc_ids,
        "rank": pa.array(ranks),
        "score": pa.array(run.scores),
    }
    if run.texts is not None:
        columns["text"] = run.texts
    return pa.table(columns)


def qrels_table(qrels: Qrels) -> pa.Table:
    """Qrels as a table ``query_id, doc_id, relevance``."""
    lengths = np.diff(qrels.offsets)
    qids = np.repeat(qrels.query_ids, lengths).astype(object)
    return pa.table(
        {
            "query_id": pa.array(qids.tolist(), type=pa.string()),
            "doc_id": qrels.doc_ids,
            "relevance": pa.array(qrels.grades.astype(np.int64)),
        }
    )


def write_table(table: pa.Table, path: PathLike, *, fmt: Literal["csv", "tsv", "parquet"]) -> None:
    """Write ``table`` as CSV, TSV or Parquet, atomically."""

    def write(tmp: Path) -> None:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, tmp)
            return
        if fmt == "tsv":
            _check_tsv_safe(table)
            tmp.write_bytes(_tsv_bytes(table))
            return
        pacsv.write_csv(table, tmp, write_options=pacsv.WriteOptions(quoting_style="needed"))

    atomic_write(path, write)


def _tsv_bytes(table: pa.Table) -> bytes:
    """``table`` as TSV: a header, then one line per row, values unquoted; floats in their
    shortest round-trip form, nulls empty."""
    columns: list[list[str]] = []
    for name in table.column_names:
        col = table.column(name)
        values = col.to_pylist()
        if pa.types.is_floating(col.type):
            columns.append(["" if v is None else repr(float(v)) for v in values])
        else:
            columns.append(["" if v is None else str(v) for v in values])
    lines = ["\t".join(table.column_names)]
    lines.extend("\t".join(row) for row in zip(*columns, strict=True))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _check_tsv_safe(table: pa.Table) -> None:
    import pyarrow.compute as pc

    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            bad = pc.any(pc.match_substring_regex(col, r"[\t\n\r]")).as_py()
            if bad:
                raise InputError(
                    "a value contains a tab or line break; TSV cannot hold it (use CSV)",
                    field=name,
                )
