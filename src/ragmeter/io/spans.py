"""Readers of span labels and chunk tables (:mod:`ragmeter.core.spans`).

Offsets are character indexes into the document's text as Python indexes a ``str`` (code
points, not bytes), end exclusive: the span ``[start, end)`` is ``text[start:end]``.

**Span labels** (``--spans``): JSONL / JSON rows, CSV / TSV with a header, or Parquet, with
``query_id, doc_id, start, end`` and optional ``grade`` (an integer, 1 by default) and
``text`` (the span's text, checked against the corpus when one is given). Also read:
``qid``/``docid``/``corpus_id``, ``start_index``/``end_index``, ``content``.

chunking_evaluation's ``questions_df.csv`` is read as written: columns ``question``,
``references`` (a JSON list of ``{"content", "start_index", "end_index"}``) and
``corpus_id``; a row's query id is its 0-based row number as a string (as that tool numbers
its questions), each reference one span of the document ``corpus_id``.

**Chunk tables** (``--chunks``): rows ``chunk_id, doc_id, start, end`` in the same formats;
and JSONL exports of LangChain documents (``{"id", "page_content", "metadata":
{"start_index", "source"}}``, ``end = start_index + len(page_content)``, the chunk id from
``id`` or ``metadata.chunk_id``/``metadata.id``, the doc id from ``metadata.doc_id``/
``metadata.source``) and of LlamaIndex nodes (``{"id_", "start_char_idx", "end_char_idx",
"ref_doc_id"}``, the doc id else from ``relationships["1"].node_id``, the source node).

Errors name the file, the line (the 1-based row for Parquet) and the field: an offset that is
not an integer, a negative start, ``end < start`` (or an empty span), a chunk id with two
different extents; a span of a document without chunks in the run's chunk table
(:func:`check_span_documents`). With a corpus (:func:`check_spans`, :func:`check_chunks`): a
span of an unknown document or past its document's end is an error; a span whose ``text``
differs from the corpus text at its offsets, and chunks of documents absent from the corpus,
are counted and reported as warnings.

Spans marked more than once are counted once (:func:`ragmeter.core.spans.combine_spans`): a
span given twice is one span; in a file that names annotators (``annotator``, as the web
app's export), the spans of each (query, document) are combined as the union of their
character ranges. A warning says how many rows were combined.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.core.spans import (
    MAX_GRADE,
    MAX_OFFSET,
    ChunkTable,
    SpanLabels,
    check_extent,
    combine_spans,
)
from ragmeter.errors import InputError
from ragmeter.io._common import PathLike, decode, format_suffix, read_bytes

if TYPE_CHECKING:
    from ragmeter.core.judgments import Corpus

Record = tuple[dict[str, Any], int]

_QUERY = ("query_id", "qid", "query")
_DOC = ("doc_id", "docid", "corpus_id", "document_id")
_START = ("start", "start_index", "start_char_idx")
_END = ("end", "end_index", "end_char_idx")
_CHUNK = ("chunk_id", "id", "id_", "node_id")
_DIGITS = re.compile(r"\s*[+-]?\d+\s*")


def _records(path: PathLike) -> Iterator[Record]:
    """The rows of a JSONL / JSON / CSV / TSV / Parquet file with their lines."""
    source = str(path)
    suffix = format_suffix(source)
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(source)
        except (OSError, ValueError) as exc:
            raise InputError(f"not a readable Parquet file ({exc})", source=source) from None
        for i, row in enumerate(table.to_pylist(), start=1):
            yield row, i
        return
    if suffix in (".csv", ".tsv"):
        text = decode(read_bytes(path), source)
        reader = csv.DictReader(io.StringIO(text), delimiter="\t" if suffix == ".tsv" else ",")
        for row in reader:
            if None in row:
                raise InputError(
                    "more fields than the header names", source=source, line=reader.line_num
                )
            yield dict(row), reader.line_num
        return
    from ragmeter.io._documents import load_json, load_jsonl

    doc = load_json(path) if suffix == ".json" else load_jsonl(path)
    if doc.records is None:
        raise InputError("expected rows (one JSON object per line, or a JSON array)", source=source)
    for record, line in doc.records:
        if not isinstance(record, dict):
            raise InputError("expected a JSON object", source=source, line=line)
        yield record, line if line is not None else 0


def _pick(record: dict[str, Any], names: tuple[str, ...]) -> tuple[str, Any] | None:
    for name in names:
        if name in record and record[name] is not None and record[name] != "":
            return name, record[name]
    return None


def _need(
    record: dict[str, Any], names: tuple[str, ...], source: str, line: int
) -> tuple[str, Any]:
    found = _pick(record, names)
    if found is None:
        raise InputError(
            f"missing; expected one of {', '.join(names)}", source=source, line=line, field=names[0]
        )
    return found


def _id(value: Any, field: str, source: str, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"id {value!r} is not a string", source=source, line=line, field=field)
    return str(value)


def _id_of(record: dict[str, Any], names: tuple[str, ...], source: str, line: int) -> str:
    name, value = _need(record, names, source, line)
    return _id(value, name, source, line)


def _offset_of(record: dict[str, Any], names: tuple[str, ...], source: str, line: int) -> int:
    name, value = _need(record, names, source, line)
    return offset(value, name, source, line)


def offset(value: Any, field: str, source: str, line: int) -> int:
    """A character offset: an integer (or, in text formats, its decimal digits) no larger
    than :data:`~ragmeter.core.spans.MAX_OFFSET`."""
    return _integer(value, "offset", MAX_OFFSET, field, source, line)


def _integer(value: Any, what: str, largest: int, field: str, source: str, line: int) -> int:
    """An integer ``what`` (or, in text formats, its decimal digits) of at most ``largest``:
    anything else is an error naming ``field`` (never an overflow further on)."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _DIGITS.fullmatch(value):
        number = int(value)
    else:
        raise InputError(
            f"{what} {value!r} is not an integer", source=source, line=line, field=field
        )
    if number > largest:
        raise InputError(
            f"{what} {number} is too large (at most {largest:,})",
            source=source,
            line=line,
            field=field,
        )
    return number


def _grade(record: dict[str, Any], source: str, line: int) -> int:
    found = _pick(record, ("grade", "relevance"))
    if found is None:
        return 1
    grade = _integer(found[1], "grade", MAX_GRADE, found[0], source, line)
    if grade < 1:
        raise InputError(
            f"grade {grade} of a span: expected ≥ 1 (a span marks evidence)",
            source=source,
            line=line,
            field=found[0],
        )
    return grade


def read_spans(path: PathLike, *, corpus: Corpus | None = None) -> SpanLabels:
    """Read span labels (see the module docstring); with ``corpus``, check them against it
    (:func:`check_spans`)."""
    source = str(path)
    rows: list[tuple[str, str, int, int, int, str | None, int]] = []
    annotators: list[str | None] = []
    for number, (record, line) in enumerate(_records(path)):
        if "references" in record and "question" in record:
            found = _question_rows(record, number, source, line)
            rows.extend(found)
            annotators.extend([None] * len(found))
            continue
        q = _id_of(record, _QUERY, source, line)
        d = _id_of(record, _DOC, source, line)
        start = _offset_of(record, _START, source, line)
        end = _offset_of(record, _END, source, line)
        check_extent(start, end, source, line, span=True)
        text = _pick(record, ("text", "content"))
        rows.append((q, d, start, end, _grade(record, source, line), _text(text), line))
        annotators.append(_text(_pick(record, ("annotator",))))
    spans = _span_labels(rows, source)
    if any(a is not None for a in annotators):
        spans = replace(spans, annotators=tuple(annotators))
    if corpus is not None:
        spans = check_spans(spans, corpus)
    # duplicates (and, across annotators, overlaps) counted once, after each row's checks
    return combine_spans(spans)


def _text(found: tuple[str, Any] | None) -> str | None:
    return None if found is None else str(found[1])


def _question_rows(
    record: dict[str, Any], number: int, source: str, line: int
) -> list[tuple[str, str, int, int, int, str | None, int]]:
    """The spans of one row of chunking_evaluation's ``questions_df.csv``."""
    doc = _id_of(record, ("corpus_id",), source, line)
    refs = record["references"]
    if isinstance(refs, str):
        try:
            refs = json.loads(refs)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not JSON ({exc.msg})", source=source, line=line, field="references"
            ) from None
    if not isinstance(refs, list):
        raise InputError("expected a JSON list", source=source, line=line, field="references")
    out: list[tuple[str, str, int, int, int, str | None, int]] = []
    for i, ref in enumerate(refs):
        where = f"references[{i}]"
        if not isinstance(ref, dict):
            raise InputError("expected an object", source=source, line=line, field=where)
        start = offset(ref.get("start_index"), f"{where}.start_index", source, line)
        end = offset(ref.get("end_index"), f"{where}.end_index", source, line)
        check_extent(start, end, source, line, span=True)
        content = ref.get("content")
        out.append(
            (str(number), doc, start, end, 1, None if content is None else str(content), line)
        )
    return out


def _span_labels(
    rows: list[tuple[str, str, int, int, int, str | None, int]], source: str
) -> SpanLabels:
    texts = tuple(r[5] for r in rows)
    return SpanLabels(
        np.array([r[0] for r in rows], dtype=object),
        np.array([r[1] for r in rows], dtype=object),
        np.array([r[2] for r in rows], dtype=np.int64),
        np.array([r[3] for r in rows], dtype=np.int64),
        np.array([r[4] for r in rows], dtype=np.int32),
        texts if any(t is not None for t in texts) else None,
        source,
        np.array([r[6] for r in rows], dtype=np.int64),
    )


def _corpus_texts(corpus: Corpus) -> dict[str, str]:
    return dict(zip(corpus.doc_ids.to_pylist(), corpus.texts.to_pylist(), strict=True))


def check_spans(spans: SpanLabels, corpus: Corpus) -> SpanLabels:
    """``spans`` checked against the corpus texts: a span of a document the corpus lacks or
    past its document's end is an error; spans whose text differs from the corpus text at
    their offsets are reported (a warning naming the first)."""
    texts = _corpus_texts(corpus)
    mismatched: list[int] = []
    for i, (doc, start, end) in enumerate(
        zip(spans.doc_ids.tolist(), spans.starts.tolist(), spans.ends.tolist(), strict=True)
    ):
        text = texts.get(doc)
        if text is None:
            raise InputError(
                f"document '{doc}' is not in the corpus {corpus.name}",
                source=spans.source,
                line=spans.where(i),
                field="doc_id",
            )
        if end > len(text):
            raise InputError(
                f"end {end} is past the end of document '{doc}' ({len(text)} characters)",
                source=spans.source,
                line=spans.where(i),
                field="end",
            )
        given = spans.texts[i] if spans.texts is not None else None
        if given is not None and text[start:end] != given:
            mismatched.append(i)
    if not mismatched:
        return spans
    first = mismatched[0]
    line = spans.where(first)
    note = (
        f"{spans.source}: {len(mismatched)} span(s) whose text differs from the corpus text at "
        f"their offsets (first: line {line}, document '{spans.doc_ids[first]}' "
        f"[{spans.starts[first]}, {spans.ends[first]}))"
    )
    return replace(spans, warnings=(*spans.warnings, note))


def check_span_documents(spans: SpanLabels, chunks: ChunkTable) -> None:
    """Every span's document must have chunks in the chunk table: a span of a document the
    chunking never saw (a typo, another corpus) is an error naming its line."""
    known = set(chunks.doc_ids.tolist())
    for i, doc in enumerate(spans.doc_ids.tolist()):
        if doc not in known:
            raise InputError(
                f"document '{doc}' has no chunk in the chunk table {chunks.source}",
                source=spans.source,
                line=spans.where(i),
                field="doc_id",
            )


#: the key of the chunking's record in its sidecar file
CHUNKING_KEY = "chunking"


def chunking_sidecar(path: PathLike) -> Path:
    """Where the chunking's record of a chunk table lies: ``FILE.chunking.json`` beside it
    (the table itself stays rows only, for any tool that reads it)."""
    return Path(f"{path}.chunking.json")


def read_chunks(path: PathLike, *, corpus: Corpus | None = None) -> ChunkTable:
    """Read a chunk table (see the module docstring); with ``corpus``, check it
    (:func:`check_chunks`). The chunking's record (``ragmeter chunk`` writes it beside the
    table, :func:`chunking_sidecar`) is read into :attr:`ChunkTable.chunking`, and the rows
    are checked against its digest; a table without one is read as before."""
    source = str(path)
    records = list(_records(path))
    rows = [_chunk_row(record, source, line) for record, line in records]
    table = ChunkTable.from_rows(rows, source=source, lines=[line for _, line in records])
    chunking = _sidecar_record(path)
    if chunking is not None:
        table = replace(table, chunking=chunking)
        if chunking.get("rows") != table.rows_digest():
            raise InputError(
                f"the rows differ from those its chunking's record {chunking_sidecar(path)} "
                f"describes (chunking {table.chunking_id}, rows {chunking.get('rows')}): the "
                "table was edited or the record is another table's; cut the documents again "
                "with 'ragmeter chunk', or delete the record if the edit was meant",
                source=source,
                field=CHUNKING_KEY,
            )
    return check_chunks(table, corpus) if corpus is not None else table


def _sidecar_record(path: PathLike) -> dict[str, Any] | None:
    sidecar = chunking_sidecar(path)
    if not sidecar.is_file():
        return None
    source = str(sidecar)
    try:
        loaded = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not a readable JSON file ({exc})", source=source) from None
    value = loaded.get(CHUNKING_KEY) if isinstance(loaded, dict) else None
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        raise InputError(
            'expected {"chunking": {...}}, the chunking\'s record with an "id" string',
            source=source,
            field=CHUNKING_KEY,
        )
    return value


def _chunk_row(record: dict[str, Any], source: str, line: int) -> tuple[str, str, int, int]:
    meta = record.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    if "page_content" in record:  # a LangChain document
        chunk = _pick(record, ("id",)) or _need(meta, ("chunk_id", "id"), source, line)
        doc = _need(meta, ("doc_id", "source"), source, line)
        start = offset(
            _need(meta, ("start_index",), source, line)[1], "metadata.start_index", source, line
        )
        text = record["page_content"]
        if not isinstance(text, str):
            raise InputError("expected a string", source=source, line=line, field="page_content")
        return (
            _id(chunk[1], chunk[0], source, line),
            _id(doc[1], doc[0], source, line),
            start,
            start + len(text),
        )
    chunk = _need(record, _CHUNK, source, line)
    found = (
        _pick(record, (*_DOC, "ref_doc_id"))
        or _pick(meta, ("doc_id", "source"))
        or _source_node(record)
    )
    if found is None:
        raise InputError(
            f"missing; expected one of {', '.join(_DOC)}", source=source, line=line, field="doc_id"
        )
    doc = found
    start = _offset_of(record, _START, source, line)
    end = _offset_of(record, _END, source, line)
    return _id(chunk[1], chunk[0], source, line), _id(doc[1], doc[0], source, line), start, end


def _source_node(record: dict[str, Any]) -> tuple[str, Any] | None:
    """A LlamaIndex node's source document: ``relationships["1"]["node_id"]``."""
    relations = record.get("relationships")
    source = relations.get("1") if isinstance(relations, dict) else None
    if isinstance(source, dict) and source.get("node_id") is not None:
        return "relationships.1.node_id", source["node_id"]
    return None


def check_chunks(chunks: ChunkTable, corpus: Corpus) -> ChunkTable:
    """``chunks`` checked against the corpus: a chunk past its document's end is an error;
    chunks of documents absent from the corpus are counted and reported (a warning)."""
    texts = _corpus_texts(corpus)
    absent = 0
    for i, (chunk, doc, end) in enumerate(
        zip(chunks.chunk_ids.tolist(), chunks.doc_ids.tolist(), chunks.ends.tolist(), strict=True)
    ):
        text = texts.get(doc)
        if text is None:
            absent += 1
        elif end > len(text):
            raise InputError(
                f"chunk '{chunk}': end {end} is past the end of document '{doc}' "
                f"({len(text)} characters)",
                source=chunks.source,
                line=chunks.where(i),
                field="end",
            )
    if not absent:
        return chunks
    note = f"{chunks.source}: {absent} chunk(s) of documents absent from the corpus {corpus.name}"
    return replace(chunks, warnings=(*chunks.warnings, note))


def write_chunks(table: ChunkTable, path: PathLike) -> None:
    """Write a chunk table atomically: Parquet or CSV by extension, else JSONL rows
    ``{"chunk_id", "doc_id", "start", "end"}``; and the chunking's record where the table
    has one, beside it (:func:`chunking_sidecar`; a stale record there is removed)."""
    import pyarrow as pa

    from ragmeter.io._common import atomic_write, atomic_write_text

    columns = {
        "chunk_id": pa.array(table.chunk_ids.tolist(), type=pa.string()),
        "doc_id": pa.array(table.doc_ids.tolist(), type=pa.string()),
        "start": pa.array(table.starts, type=pa.int64()),
        "end": pa.array(table.ends, type=pa.int64()),
    }
    suffix = format_suffix(str(path))
    if suffix in (".parquet", ".csv"):
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        data = pa.table(columns)
        write = pq.write_table if suffix == ".parquet" else pacsv.write_csv
        atomic_write(path, lambda target: write(data, str(target)))
    else:
        rows = zip(*(c.to_pylist() for c in columns.values()), strict=True)
        lines = (
            json.dumps(dict(zip(columns, row, strict=True)), ensure_ascii=False) for row in rows
        )
        atomic_write_text(path, "".join(line + "\n" for line in lines))
    sidecar = chunking_sidecar(path)
    if table.chunking is not None:
        record = json.dumps({CHUNKING_KEY: dict(table.chunking)}, ensure_ascii=False, indent=1)
        atomic_write_text(sidecar, record + "\n")
    elif sidecar.is_file():
        sidecar.unlink()  # another table's record would not fit these rows


def write_texts(rows: list[dict[str, str]], path: PathLike) -> None:
    """Write ``{"id", "text"}`` rows as JSONL, atomically."""
    from ragmeter.io._common import atomic_write_text

    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
