"""TREC run and qrels files.

* run: ``qid Q0 docid rank score tag`` — whitespace separated; the rank column is ignored
  and fields after ``tag`` are ignored, as trec_eval does.
* qrels: ``qid iter docid grade`` — grade an integer (negative: in the pool, not judged).

Fields are separated by C white space only — space, ``\\t``, ``\\v``, ``\\f``, ``\\r`` — as
trec_eval's ``isspace`` splits them: a no-break space or any other non-ASCII character is part of
an id. Lines whose first non-blank character is ``#`` are comments; a ``#`` inside a doc id is
part of the id. Blank lines are skipped. CRLF line endings are read like LF (trec_eval treats
``\\r`` as white space) with a warning; a UTF-8 byte-order mark is an error, because trec_eval
would silently make it part of the first query id, and so is a NUL byte (binary input).

Numbers are read only where C and Python agree on their value: a grade is ASCII
``[+-]?[0-9]+`` within ±(2**31 - 1), a score C's decimal floating-point syntax
``[+-]?(d+[.d*]|.d+)[(e|E)[+-]d+]`` and finite. Anything else (``1_0``, ``0x1``, ``1.5`` as a
grade, non-ASCII digits, ``inf``, ``nan``) is an error naming file, line and field, where
trec_eval's ``atol``/``atof`` would silently read another value than Python or Arrow.

Reading has three paths that give identical results: the C accelerator (``ragmeter._native``,
when built) for ASCII files with exactly the expected fields, Arrow's CSV parser for other
regular single-delimiter files, and a line-by-line one that handles every other layout and
produces the precise error (file, line, field, what was expected) for malformed input. Each
fast path declines (returns ``None`` / raises ``ValueError``) rather than guess. Qrels that
list each query's judgments together are read by the C accelerator in two passes over the
text (each query's stretch of lines, then its judgments into their final rows), each in two
threads; any other qrels file takes its general parser.
"""

from __future__ import annotations

import mmap
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter import _accel
from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io._common import (
    GRADE_SYNTAX,
    SCORE_SYNTAX,
    atomic_write_text,
    check_line_lengths,
    compression_of,
    decompress,
    read_errors,
)

RUN_FIELDS = ("qid", "Q0", "docid", "rank", "score", "tag")
QRELS_FIELDS = ("qid", "iter", "docid", "grade")
_BOM = b"\xef\xbb\xbf"

_GRADE_RE = re.compile(GRADE_SYNTAX)
_SCORE_RE = re.compile(SCORE_SYNTAX)
#: the largest grade magnitude (trec_eval keeps grades in a C ``long`` but sizes arrays by them)
MAX_GRADE = 2**31 - 1


#: files at least this large are memory-mapped, so the C parser can drop parsed pages
MAP_THRESHOLD = 64 << 20


def _read_bytes(path: str | os.PathLike[str]) -> bytes | mmap.mmap:
    """The file's content: bytes, or a read-only memory map for a large file."""
    p = Path(path)
    if p.is_dir():
        raise InputError("is a directory; expected a file", source=str(p))
    data: bytes | mmap.mmap
    with read_errors(str(p)), p.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        compressed = compression_of(fh.peek(10)[:10]) is not None
        if size >= MAP_THRESHOLD and _accel.native is not None and not compressed:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        else:
            data = fh.read()
    if isinstance(data, bytes) and compressed:
        return decompress(data, str(p))  # streamed: lines capped
    check_line_lengths(data, str(p))
    return data


def _check_bom(data: bytes | mmap.mmap, source: str) -> None:
    """Refuse a leading UTF-8 byte-order mark."""
    if data[:3] == _BOM:
        raise InputError(
            "file starts with a UTF-8 byte-order mark (BOM); expected plain UTF-8 — "
            "save it without the BOM",
            source=source,
            line=1,
        )


def _check_nul(data: bytes | mmap.mmap, source: str) -> None:
    """Refuse a NUL byte. Called once the C parser has declined (it declines NUL bytes), so
    a large memory-mapped file is not read through twice."""
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputError(
            f"NUL byte at byte {nul}: binary input; expected a text file",
            source=source,
            line=data[:nul].count(b"\n") + 1,
        )


def _detect_delimiter(data: bytes | mmap.mmap) -> str | None:
    """The single delimiter of a regular file, or None if the layout needs the slow path.

    Arrow's parser splits on one byte and ends lines at ``\\r`` too, while C white space is
    six bytes: a file qualifies only when the chosen delimiter is the only white space in it
    besides ``\\n`` (checked over the whole file; each ``find`` is a memchr).
    """
    head = data[:65536].split(b"\n", 1)[0]
    if not head or head[:1] in (b" ", b"\t", b"#"):
        return None
    has_tab, has_space = b"\t" in head, b" " in head
    if has_tab and not has_space:
        delimiter = b"\t"
    elif has_space and not has_tab and b"  " not in head:
        delimiter = b" "
    else:
        return None
    for other in b" \t\v\f\r":
        byte = bytes([other])
        if byte != delimiter and data.find(byte) >= 0:
            return None
    return delimiter.decode()


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
    dictionary = _query_dictionary(qid_offsets, qid_data)
    return codes, dictionary, docs, values, (tag.decode("ascii") if tag is not None else None)


def _query_dictionary(qid_offsets: Any, qid_data: Any) -> pa.Array:
    """The C parsers' query ids (int64 offsets, bytes) as an Arrow string array."""
    # Query ids are few: narrow their offsets here rather than through Array.cast, which
    # would import pyarrow.compute (0.1 s) on the fast path.
    offsets64 = np.frombuffer(qid_offsets, dtype=np.int64)
    if offsets64[-1] < 2**31:
        return pa.Array.from_buffers(
            pa.string(),
            len(offsets64) - 1,
            [None, pa.py_buffer(offsets64.astype(np.int32)), pa.py_buffer(qid_data)],
        )
    return pa.Array.from_buffers(
        pa.large_string(),
        len(offsets64) - 1,
        [None, pa.py_buffer(qid_offsets), pa.py_buffer(qid_data)],
    )


#: where the C reader of qrels listed query by query splits the text for its two threads: a
#: byte position (the part after it starts on the next line), or None for the middle of a
#: file of 1 MB or more (a smaller one is read in one part). Tests set it low.
LISTED_SPLIT: int | None = None


def _native_listed(data: bytes | mmap.mmap, name: str) -> Qrels | Literal["declined", "repeated"]:
    """Qrels whose queries each have one stretch of lines, read by the C reader's two passes
    (``qrels_stretches``, then ``Qrels._native_listed``); ``"declined"`` for any other file,
    which ``parse_trec``'s path then reads, ``"repeated"`` where a judgment repeats (the
    line-by-line path reports it)."""
    native = _accel.native
    if native is None:
        return "declined"
    split = -1 if LISTED_SPLIT is None else LISTED_SPLIT
    found = native.qrels_stretches(data, isinstance(data, mmap.mmap), split)
    if found is None:
        return "declined"
    dictionary = _query_dictionary(found[0], found[1])
    # a list holding the only reference: the stretches are let go once placed
    stretches = [found[2]]
    del found
    return Qrels._native_listed(dictionary, stretches, text=data, name=name, split_at=split)


def _fast_table(
    data: bytes | mmap.mmap, names: tuple[str, ...], columns: tuple[str, ...], value: str
) -> tuple[pa.Table, npt.NDArray[Any]]:
    """The string ``columns`` of a regular file via Arrow's CSV parser, and the ``value``
    column's numbers (int64 grades or float64 scores); ``ValueError`` declines the file.

    Values are read as strings and checked against :data:`GRADE_SYNTAX` / :data:`SCORE_SYNTAX`
    before Arrow converts them: Arrow alone reads ``0x1`` as 1, ``nan`` as null and ``inf``.
    """
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
            column_types=dict.fromkeys(columns, pa.string()),
            include_columns=list(columns),
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
    for col in columns:
        if pc.any(pc.equal(pc.utf8_length(table.column(col)), zero)).as_py():
            raise ValueError("empty field")
    integer = value == "grade"
    text = table.column(value)
    syntax = "^" + (GRADE_SYNTAX if integer else SCORE_SYNTAX) + "$"
    if not pc.all(pc.match_substring_regex(text, syntax)).as_py():
        raise ValueError("number syntax")  # the line-by-line path reports it
    numbers = pc.cast(text, pa.int64() if integer else pa.float64()).to_numpy()
    if integer and len(numbers) and np.abs(numbers).max() > MAX_GRADE:
        raise ValueError("grade out of range")
    if not integer and not np.isfinite(numbers).all():
        raise ValueError("score out of range")
    return table, numbers


def _split_lines(data: bytes, source: str) -> tuple[list[list[str]], list[int], bool]:
    """Fields of every content line, their 1-based line numbers, and whether CRLF was seen.

    ``bytes.split()`` splits on exactly C's white space (space, ``\\t \\n \\v \\f \\r``);
    ``str.split()`` would also split on a no-break space and other Unicode white space.
    """
    rows: list[list[str]] = []
    lines: list[int] = []
    crlf = False
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.endswith(b"\r"):
            crlf = True
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"invalid UTF-8 at byte {exc.start}; expected UTF-8 text",
                source=source,
                line=number,
            ) from None
        parts = raw.split()
        if not parts or parts[0].startswith(b"#"):
            continue
        rows.append([f.decode("utf-8") for f in parts])
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
                f"{len(fields)} field(s); expected {n_fields}: '{' '.join(expected)}'"
                + _swapped_hint(fields, expected),
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


def _swapped_hint(fields: list[str], expected: tuple[str, ...]) -> str:
    """A hint when a line of the other TREC file was read: a qrels line where a run was
    expected, or a run line where qrels were (the two files given in the wrong order)."""
    if (
        expected == RUN_FIELDS
        and len(fields) == len(QRELS_FIELDS)
        and _GRADE_RE.fullmatch(fields[3])
    ):
        return (
            "; this looks like a qrels file (qid iter docid grade): are the run and the "
            "qrels swapped?"
        )
    if (
        expected == QRELS_FIELDS
        and len(fields) == len(RUN_FIELDS)
        and _GRADE_RE.fullmatch(fields[3])
        and _SCORE_RE.fullmatch(fields[4])
    ):
        return (
            "; this looks like a run file (qid Q0 docid rank score tag): are the run and "
            "the qrels swapped?"
        )
    return ""


def _parse_numbers(
    values: list[str], lines: np.ndarray, source: str, field: str, integer: bool
) -> np.ndarray:
    """Grades (``[+-]?[0-9]+`` within ±MAX_GRADE) or scores (finite C decimal notation)."""
    out = np.empty(len(values), dtype=np.int64 if integer else np.float64)
    syntax = _GRADE_RE if integer else _SCORE_RE
    for i, text in enumerate(values):
        if syntax.fullmatch(text) is None:
            reason = (
                "is not an integer; expected ASCII digits [+-]?[0-9]+"
                if integer
                else "is not a number in decimal notation; expected a finite number such as "
                "12, -0.5 or 1.5e-3"
            )
            raise InputError(f"'{text}' {reason}", source=source, line=int(lines[i]), field=field)
        number = int(text) if integer else float(text)
        if integer and abs(number) > MAX_GRADE:
            raise InputError(
                f"grade {text} out of range; expected at most {MAX_GRADE} in magnitude",
                source=source,
                line=int(lines[i]),
                field=field,
            )
        if not integer and not np.isfinite(number):
            raise InputError(
                f"score {text} overflows a double; expected a finite number",
                source=source,
                line=int(lines[i]),
                field=field,
            )
        out[i] = number
    return out


def read_trec_run(path: str | os.PathLike[str], *, name: str | None = None) -> Run:
    """Read a TREC run file; ordered by score descending, ties by doc id descending."""
    return parse_trec_run(_read_bytes(path), source=str(path), name=name or Path(path).name)


def parse_trec_run(data: bytes | mmap.mmap, *, source: str, name: str) -> Run:
    """A TREC run from the file's content ``data`` (``source`` names it in messages)."""
    _check_bom(data, source)
    native = _native_columns(data, 0)
    if native is not None:
        del data  # the parsed columns replace the file's bytes
        codes, dictionary, docs, values, tag = native
        run = Run._from_encoded(
            codes,
            dictionary,
            docs,
            np.frombuffer(values, dtype=np.float64),
            name=name,
            order="score",
            source=source,
        )
        return replace(run, tag=tag)
    _check_nul(data, source)
    try:
        table, scores = _fast_table(data, RUN_FIELDS, ("qid", "docid", "score", "tag"), "score")
    except (ValueError, pa.ArrowInvalid):
        pass
    else:
        tag_col = table.column("tag")
        run = Run.from_columns(
            table.column("qid"), table.column("docid"), scores, name=name, source=source
        )
        return replace(run, tag=tag_col[len(tag_col) - 1].as_py())
    columns, lines, warnings = _slow_columns(data, source, RUN_FIELDS, allow_extra=True)
    scores = _parse_numbers(columns[4], lines, source, "score", integer=False)
    run = Run.from_columns(columns[0], columns[2], scores, name=name, source=source, lines=lines)
    return replace(run, tag=columns[5][-1], warnings=(*warnings, *run.warnings))


def read_trec_qrels(path: str | os.PathLike[str], *, name: str | None = None) -> Qrels:
    """Read a TREC qrels file ``qid iter docid grade``."""
    return parse_trec_qrels(_read_bytes(path), source=str(path), name=name or Path(path).name)


def parse_trec_qrels(data: bytes | mmap.mmap, *, source: str, name: str) -> Qrels:
    """TREC qrels from the file's content ``data`` (``source`` names it in messages)."""
    _check_bom(data, source)
    listed = _native_listed(data, name)
    if isinstance(listed, Qrels):
        return listed
    native = _native_columns(data, 1) if listed == "declined" else None
    # parsed by C but not returned below: only repeated judgments make the C path decline
    parsed_natively = native is not None or listed == "repeated"
    if native is not None:
        codes, dictionary, docs, values, _ = native
        parsed = [codes, dictionary, docs, np.frombuffer(values, dtype=np.int32)]
        # The list holds the only references, so the columns are freed as they are used.
        del native, codes, dictionary, docs, values
        if isinstance(data, mmap.mmap):  # parsed: its pages leave the resident set (re-read
            data.madvise(mmap.MADV_DONTNEED)  # from the file if the slow path needs them)
            _accel.release_free_heap()  # and so do the parser's growing buffers' old blocks
        qrels = Qrels._native_from_encoded(parsed, name=name, text=data)
        if qrels is not None:
            return qrels
        del parsed
        # Repeated judgments: the line-by-line path reports them with line numbers.
    _check_nul(data, source)
    try:
        if parsed_natively:
            raise ValueError("repeated judgments")
        table, grades = _fast_table(data, QRELS_FIELDS, ("qid", "docid", "grade"), "grade")
    except (ValueError, pa.ArrowInvalid):
        pass
    else:
        return Qrels.from_columns(
            table.column("qid"), table.column("docid"), grades, name=name, source=source
        )
    columns, lines, warnings = _slow_columns(data, source, QRELS_FIELDS, allow_extra=False)
    grades = _parse_numbers(columns[3], lines, source, "grade", integer=True)
    qrels = Qrels.from_columns(
        columns[0], columns[2], grades, name=name, source=source, lines=lines
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
