"""TREC run and qrels files.

* run: ``qid Q0 docid rank score tag`` — whitespace separated; the rank column is ignored
  and fields after ``tag`` are ignored, as trec_eval does.
* qrels: ``qid iter docid grade`` — grade an integer (negative: in the pool, not judged).

Lines whose first non-blank character is ``#`` are comments; a ``#`` inside a doc id is part
of the id. Blank lines are skipped. CRLF line endings are read like LF (trec_eval treats
``\\r`` as white space) with a warning; a UTF-8 byte-order mark is an error, because trec_eval
would silently make it part of the first query id.

Reading has three paths that give identical results: the C accelerator (``ragmeter._native``,
when built) for ASCII files with exactly the expected fields, Arrow's CSV parser for other
regular single-delimiter files, and a line-by-line one that handles every other layout and
produces the precise error (file, line, field, what was expected) for malformed input. Each
fast path declines (returns ``None`` / raises ``ValueError``) rather than guess.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter import _accel
from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io._common import atomic_write_text

RUN_FIELDS = ("qid", "Q0", "docid", "rank", "score", "tag")
QRELS_FIELDS = ("qid", "iter", "docid", "grade")
_BOM = b"\xef\xbb\xbf"


#: files at least this large are memory-mapped, so the C parser can drop parsed pages
MAP_THRESHOLD = 64 << 20


def _read_bytes(path: str | os.PathLike[str]) -> bytes | mmap.mmap:
    """The file's content: bytes, or a read-only memory map for a large file."""
    p = Path(path)
    if p.is_dir():
        raise InputError("is a directory; expected a file", source=str(p))
    try:
        with p.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            data: bytes | mmap.mmap
            if size >= MAP_THRESHOLD and _accel.native is not None:
                data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            else:
                data = fh.read()
    except FileNotFoundError:
        raise InputError("no such file", source=str(p)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=str(p)) from None
    if data[:3] == _BOM:
        raise InputError(
            "file starts with a UTF-8 byte-order mark (BOM); expected plain UTF-8 — "
            "save it without the BOM",
            source=str(p),
            line=1,
        )
    return data


def _detect_delimiter(data: bytes | mmap.mmap) -> str | None:
    """The single delimiter of a regular file, or None if the layout needs the slow path."""
    if b"\r" in data[:65536]:
        return None
    head = data[:65536].split(b"\n", 1)[0]
    if not head or head[:1] in (b" ", b"\t", b"#"):
        return None
    has_tab, has_space = b"\t" in head, b" " in head
    if has_tab and not has_space:
        return "\t"
    if has_space and not has_tab and b"  " not in head:
        return " "
    return None


def _native_columns(
    data: bytes | mmap.mmap, kind: int
) -> tuple[npt.NDArray[np.int32], pa.Array, pa.Array, bytes, str | None] | None:
    """Codes, query dictionary, doc ids, raw values and last tag, via the C parser; or None."""
    native = _accel.native
    if native is None:
        return None
    parsed = native.parse_trec(data, kind, isinstance(data, mmap.mmap))
    if parsed is None:
        return None
    qid_offsets, qid_data, qcode, doc_offsets, doc_data, values, tag, wide = parsed
    codes = np.frombuffer(qcode, dtype=np.int32)
    docs = pa.Array.from_buffers(
        pa.large_string() if wide else pa.string(),
        len(codes),
        [None, pa.py_buffer(doc_offsets), pa.py_buffer(doc_data)],
    )
    # Query ids are few: narrow their offsets here rather than through Array.cast, which
    # would import pyarrow.compute (0.1 s) on the fast path.
    offsets64 = np.frombuffer(qid_offsets, dtype=np.int64)
    if offsets64[-1] < 2**31:
        dictionary = pa.Array.from_buffers(
            pa.string(),
            len(offsets64) - 1,
            [None, pa.py_buffer(offsets64.astype(np.int32)), pa.py_buffer(qid_data)],
        )
    else:
        dictionary = pa.Array.from_buffers(
            pa.large_string(),
            len(offsets64) - 1,
            [None, pa.py_buffer(qid_offsets), pa.py_buffer(qid_data)],
        )
    return codes, dictionary, docs, values, (tag.decode("ascii") if tag is not None else None)


def _fast_table(
    data: bytes | mmap.mmap, names: tuple[str, ...], types: dict[str, pa.DataType]
) -> pa.Table:
    delimiter = _detect_delimiter(data)
    if delimiter is None:
        raise ValueError("irregular layout")
    import pyarrow.compute as pc  # imported here: it costs 0.1 s, and the C path never needs it
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(
        pa.py_buffer(data),
        read_options=pacsv.ReadOptions(column_names=list(names), block_size=1 << 24),
        parse_options=pacsv.ParseOptions(
            delimiter=delimiter, quote_char=False, escape_char=False, double_quote=False
        ),
        convert_options=pacsv.ConvertOptions(
            column_types=types,
            include_columns=list(types),
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )
    qid = table.column(names[0])
    if table.num_rows == 0:
        raise ValueError("empty")
    # A comment line that happens to have the right number of fields parses as a row.
    if pc.any(pc.starts_with(qid, "#")).as_py():
        raise ValueError("comments")
    zero = pa.scalar(0, pa.int32())  # a pyarrow scalar: a Python 0 would import pandas
    for col in types:
        if (
            types[col] == pa.string()
            and pc.any(pc.equal(pc.utf8_length(table.column(col)), zero)).as_py()
        ):
            raise ValueError("empty field")
    if "grade" in types:
        grades = table.column("grade")
        limit = pa.scalar(2**31 - 1, pa.int64())
        if pc.max(pc.abs(grades)).as_py() > limit.as_py():
            raise ValueError("grade out of range")  # the line-by-line path reports it
    return table


def _split_lines(data: bytes, source: str) -> tuple[list[list[str]], list[int], bool]:
    """Fields of every content line, their 1-based line numbers, and whether CRLF was seen."""
    rows: list[list[str]] = []
    lines: list[int] = []
    crlf = False
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.endswith(b"\r"):
            crlf = True
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"invalid UTF-8 at byte {exc.start}; expected UTF-8 text",
                source=source,
                line=number,
            ) from None
        fields = text.split()
        if not fields or fields[0].startswith("#"):
            continue
        rows.append(fields)
        lines.append(number)
    return rows, lines, crlf


def _slow_columns(
    data: bytes | mmap.mmap, source: str, expected: tuple[str, ...], allow_extra: bool
) -> tuple[list[list[str]], np.ndarray, list[str]]:
    rows, lines, crlf = _split_lines(bytes(data), source)
    warnings: list[str] = []
    if not rows:
        raise InputError(f"no data lines; expected lines of '{' '.join(expected)}'", source=source)
    n_fields = len(expected)
    extra = 0
    for fields, number in zip(rows, lines, strict=True):
        if len(fields) < n_fields or (len(fields) > n_fields and not allow_extra):
            raise InputError(
                f"{len(fields)} field(s); expected {n_fields}: '{' '.join(expected)}'",
                source=source,
                line=number,
            )
        if len(fields) > n_fields:
            extra += 1
    columns = [[f[i] for f in rows] for i in range(n_fields)]
    if crlf:
        warnings.append(f"{source}: CRLF line endings read as LF (as trec_eval does)")
    if extra:
        warnings.append(
            f"{source}: {extra} line(s) with fields after '{expected[-1]}'; ignored (as trec_eval)"
        )
    return columns, np.asarray(lines, dtype=np.int64), warnings


def _parse_numbers(
    values: list[str], lines: np.ndarray, source: str, field: str, integer: bool
) -> np.ndarray:
    out = np.empty(len(values), dtype=np.int64 if integer else np.float64)
    for i, text in enumerate(values):
        try:
            out[i] = int(text) if integer else float(text)
        except ValueError:
            kind = "an integer" if integer else "a number"
            raise InputError(
                f"'{text}' is not {kind}", source=source, line=int(lines[i]), field=field
            ) from None
    return out


def read_trec_run(path: str | os.PathLike[str], *, name: str | None = None) -> Run:
    """Read a TREC run file; ordered by score descending, ties by doc id descending."""
    source = str(path)
    data = _read_bytes(path)
    run_name = name or Path(path).name
    native = _native_columns(data, 0)
    if native is not None:
        del data  # the parsed columns replace the file's bytes
        codes, dictionary, docs, values, tag = native
        run = Run._from_encoded(
            codes,
            dictionary,
            docs,
            np.frombuffer(values, dtype=np.float64),
            name=run_name,
            order="score",
            source=source,
        )
        return replace(run, tag=tag)
    try:
        table = _fast_table(
            data,
            RUN_FIELDS,
            {"qid": pa.string(), "docid": pa.string(), "score": pa.float64(), "tag": pa.string()},
        )
        tag_col = table.column("tag")
        tag = tag_col[len(tag_col) - 1].as_py()
        run = Run.from_columns(
            table.column("qid"),
            table.column("docid"),
            table.column("score").to_numpy(),
            name=run_name,
            source=source,
        )
        return replace(run, tag=tag)
    except (ValueError, pa.ArrowInvalid):
        pass
    columns, lines, warnings = _slow_columns(data, source, RUN_FIELDS, allow_extra=True)
    scores = _parse_numbers(columns[4], lines, source, "score", integer=False)
    run = Run.from_columns(
        columns[0], columns[2], scores, name=run_name, source=source, lines=lines
    )
    return replace(run, tag=columns[5][-1], warnings=(*warnings, *run.warnings))


def read_trec_qrels(path: str | os.PathLike[str], *, name: str | None = None) -> Qrels:
    """Read a TREC qrels file ``qid iter docid grade``."""
    source = str(path)
    data = _read_bytes(path)
    qrels_name = name or Path(path).name
    native = _native_columns(data, 1)
    if native is not None:
        codes, dictionary, docs, values, _ = native
        # Grades are within ±(2**31 - 1): the parser declines anything else.
        grades = np.frombuffer(values, dtype=np.int64).astype(np.int32)
        qrels = Qrels._native_from_encoded(codes, dictionary, docs, grades, name=qrels_name)
        if qrels is not None:
            return qrels
        # Repeated judgments: the line-by-line path reports them with line numbers.
    try:
        if native is not None:
            raise ValueError("repeated judgments")
        table = _fast_table(
            data, QRELS_FIELDS, {"qid": pa.string(), "docid": pa.string(), "grade": pa.int64()}
        )
        return Qrels.from_columns(
            table.column("qid"),
            table.column("docid"),
            table.column("grade").to_numpy(),
            name=qrels_name,
            source=source,
        )
    except (ValueError, pa.ArrowInvalid):
        pass
    columns, lines, warnings = _slow_columns(data, source, QRELS_FIELDS, allow_extra=False)
    grades = _parse_numbers(columns[3], lines, source, "grade", integer=True)
    if len(grades) and (grades.max() > np.iinfo(np.int32).max or grades.min() < -(2**31) + 1):
        i = int(np.argmax(np.abs(grades)))
        raise InputError(
            f"grade {grades[i]} out of range", source=source, line=int(lines[i]), field="grade"
        )
    qrels = Qrels.from_columns(
        columns[0], columns[2], grades, name=qrels_name, source=source, lines=lines
    )
    return replace(qrels, warnings=(*warnings, *qrels.warnings))


def write_trec_run(run: Run, path: str | os.PathLike[str], *, tag: str | None = None) -> None:
    """Write ``run`` as ``qid Q0 docid rank score tag`` lines, rank order, atomically."""
    label = tag or run.tag or run.name
    docs = run.doc_ids.to_pylist()
    lines = []
    for i, q in enumerate(run.query_ids):
        a, b = int(run.offsets[i]), int(run.offsets[i + 1])
        for rank, j in enumerate(range(a, b), start=1):
            lines.append(f"{q} Q0 {docs[j]} {rank} {float(run.scores[j])!r} {label}\n")
    atomic_write_text(path, "".join(lines))


def format_trec_qrels(qrels: Qrels) -> str:
    """``qrels`` as the text of a TREC qrels file: ``qid 0 docid grade`` lines, queries and
    doc ids in byte order."""
    docs = qrels.doc_ids.to_pylist()
    lines = []
    for i, q in enumerate(qrels.query_ids):
        for j in range(int(qrels.offsets[i]), int(qrels.offsets[i + 1])):
            lines.append(f"{q} 0 {docs[j]} {int(qrels.grades[j])}\n")
    return "".join(lines)


def write_trec_qrels(qrels: Qrels, path: str | os.PathLike[str]) -> None:
    """Write ``qrels`` as ``qid 0 docid grade`` lines, atomically."""
    atomic_write_text(path, format_trec_qrels(qrels))
