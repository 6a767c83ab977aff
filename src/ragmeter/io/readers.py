"""Format dispatch: read or write a run or qrels in any supported format.

The format comes from the file extension unless ``format=`` names it:

* ``.txt .trec .run .qrels`` and any other extension: ``trec`` — ``qid Q0 doc rank score tag``
  runs, ``qid 0 doc grade`` qrels.
* ``.json``: ``json`` — samples, an array of row objects, or ``{qid: {doc: score}}`` /
  ``{qid: [docs]}``.
* ``.jsonl .ndjson``: ``jsonl`` — one sample or one row object per line.
* ``.yaml .yml``: ``yaml`` — as JSON (needs PyYAML).
* ``.csv`` / ``.tsv``: ``csv`` / ``tsv`` — named columns, header row required.
* ``.parquet .pq``: ``parquet`` — named columns.

A JSON/JSONL/YAML file holds *samples* when its records have a retrieved list or an
``expected_output`` (:mod:`ragmeter.io.samples`), *rows* when they have query and doc id
columns (:mod:`ragmeter.io.jsonl`). Files with an unknown extension are read as TREC, as
trec_eval does (``qrels.test``, ``results.test``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io._documents import Document
from ragmeter.io.samples import (
    Samples,
    describe,
    is_sample,
    load_document,
    read_samples,
    samples_from_document,
)

Format = Literal["trec", "json", "jsonl", "yaml", "parquet", "csv", "tsv"]
FORMATS: tuple[str, ...] = ("trec", "json", "jsonl", "yaml", "parquet", "csv", "tsv")

_EXTENSIONS: dict[str, Format] = {
    ".txt": "trec",
    ".trec": "trec",
    ".run": "trec",
    ".qrels": "trec",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
}

PathLike = str | os.PathLike[str]


def detect_format(path: PathLike, format: str | None = None) -> Format:
    """The format of ``path``: ``format`` if given (validated), else from the extension."""
    if format is not None:
        fmt = format.lower().lstrip(".")
        if fmt == "yml":
            fmt = "yaml"
        if fmt not in FORMATS:
            raise InputError(
                f"unknown format {format!r}; expected one of {', '.join(FORMATS)}",
                source=str(path),
                field="format",
            )
        return fmt  # type: ignore[return-value]
    return _EXTENSIONS.get(Path(path).suffix.lower(), "trec")


def read_run(path: PathLike, *, format: str | None = None, name: str | None = None) -> Run:
    """Read a run from a file in any supported format (see the module docstring).

    ``name`` defaults to the file name. TREC runs are ordered by score (ties by doc id
    descending); sample files keep the given order.
    """
    fmt = detect_format(path, format)
    run_name = name or Path(path).name
    if fmt == "trec":
        from ragmeter.io.trec import read_trec_run

        return read_trec_run(path, name=name)
    if fmt in ("csv", "tsv"):
        from ragmeter.io.tabular import read_csv_run

        return read_csv_run(path, name=run_name, delimiter=fmt)  # type: ignore[arg-type]
    if fmt == "parquet":
        from ragmeter.io.tabular import read_parquet_run

        return read_parquet_run(path, name=run_name)
    if fmt == "jsonl":
        from ragmeter.io.jsonl import read_jsonl_run

        return read_jsonl_run(path, name=run_name)
    doc = load_document(path, fmt)  # type: ignore[arg-type]
    kind = _document_kind(doc)
    if kind == "samples":
        return samples_from_document(doc, name=run_name, need_qrels=False).run
    if kind == "rows":
        from ragmeter.io.jsonl import run_from_records

        assert doc.records is not None
        return run_from_records(doc.records, source=doc.source, name=run_name)
    from ragmeter.io.dicts import run_from_dict

    return run_from_dict(doc.value, name=run_name, source=doc.source)


def read_qrels(path: PathLike, *, format: str | None = None, name: str | None = None) -> Qrels:
    """Read qrels from a file in any supported format (see the module docstring)."""
    fmt = detect_format(path, format)
    qrels_name = name or Path(path).name
    if fmt == "trec":
        from ragmeter.io.trec import read_trec_qrels

        return read_trec_qrels(path, name=name)
    if fmt in ("csv", "tsv"):
        from ragmeter.io.tabular import read_csv_qrels

        return read_csv_qrels(path, name=qrels_name, delimiter=fmt)  # type: ignore[arg-type]
    if fmt == "parquet":
        from ragmeter.io.tabular import read_parquet_qrels

        return read_parquet_qrels(path, name=qrels_name)
    if fmt == "jsonl":
        from ragmeter.io.jsonl import read_jsonl_qrels

        return read_jsonl_qrels(path, name=qrels_name)
    doc = load_document(path, fmt)  # type: ignore[arg-type]
    kind = _document_kind(doc)
    if kind == "samples":
        return samples_from_document(doc, name=qrels_name, need_run=False).qrels
    if kind == "rows":
        from ragmeter.io.jsonl import qrels_from_records

        assert doc.records is not None
        return qrels_from_records(doc.records, source=doc.source, name=qrels_name)
    from ragmeter.io.dicts import qrels_from_dict

    return qrels_from_dict(doc.value, name=qrels_name, source=doc.source)


def _document_kind(doc: Document) -> Literal["samples", "rows", "nested"]:
    """What a JSON/JSONL/YAML document holds: samples, row objects, or a ``{qid: ...}`` map."""
    if doc.records is None:
        if isinstance(doc.value, Mapping):
            if not doc.value:
                raise InputError("document is an empty object; expected data", source=doc.source)
            return "nested"
        raise InputError(
            f"document is {describe(doc.value)}; expected a list of samples, a list "
            "of row objects, or a {query_id: {doc_id: value}} object",
            source=doc.source,
        )
    if not doc.records:
        raise InputError("document has no records; expected samples or rows", source=doc.source)
    first, line = doc.records[0]
    if not isinstance(first, Mapping):
        raise InputError(
            f"record is {describe(first)}; expected an object (a sample or a row)",
            source=doc.source,
            line=line,
        )
    if isinstance(doc.value, Mapping) or is_sample(first):
        return "samples"
    return "rows"


def as_run(obj: Any, *, name: str | None = None) -> Run:
    """A :class:`Run` from anything: a run, a path, a ``{qid: ...}`` mapping, a DataFrame."""
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, str | os.PathLike):
        return read_run(obj, name=name)
    if isinstance(obj, Mapping):
        from ragmeter.io.dicts import run_from_dict

        return run_from_dict(obj, name=name or "run")
    from ragmeter.io.frames import run_from_frame

    return run_from_frame(obj, name=name or "run")


def as_qrels(obj: Any, *, name: str | None = None) -> Qrels:
    """:class:`Qrels` from anything: qrels, a path, a ``{qid: ...}`` mapping, a DataFrame."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, str | os.PathLike):
        return read_qrels(obj, name=name)
    if isinstance(obj, Mapping):
        from ragmeter.io.dicts import qrels_from_dict

        return qrels_from_dict(obj, name=name or "qrels")
    from ragmeter.io.frames import qrels_from_frame

    return qrels_from_frame(obj, name=name or "qrels")


WriteFormat = Literal["trec", "jsonl", "csv", "tsv", "parquet"]


def _write_format(path: PathLike, format: str | None) -> str:
    fmt = detect_format(path, format)
    if fmt in ("json", "yaml"):
        raise InputError(
            f"cannot write {fmt}; expected one of trec, jsonl, csv, tsv, parquet",
            source=str(path),
            field="format",
        )
    return fmt


def write_run(run: Run, path: PathLike, *, format: str | None = None) -> None:
    """Write ``run`` atomically as TREC, JSONL rows, CSV, TSV or Parquet (by extension)."""
    fmt = _write_format(path, format)
    if fmt == "trec":
        from ragmeter.io.trec import write_trec_run

        write_trec_run(run, path)
    elif fmt == "jsonl":
        from ragmeter.io.jsonl import write_jsonl_run

        write_jsonl_run(run, path)
    else:
        from ragmeter.io.tabular import run_table, write_table

        write_table(run_table(run), path, fmt=fmt)  # type: ignore[arg-type]


def write_qrels(qrels: Qrels, path: PathLike, *, format: str | None = None) -> None:
    """Write ``qrels`` atomically as TREC, JSONL rows, CSV, TSV or Parquet (by extension)."""
    fmt = _write_format(path, format)
    if fmt == "trec":
        from ragmeter.io.trec import write_trec_qrels

        write_trec_qrels(qrels, path)
    elif fmt == "jsonl":
        from ragmeter.io.jsonl import write_jsonl_qrels

        write_jsonl_qrels(qrels, path)
    else:
        from ragmeter.io.tabular import qrels_table, write_table

        write_table(qrels_table(qrels), path, fmt=fmt)  # type: ignore[arg-type]


__all__ = [
    "FORMATS",
    "Samples",
    "as_qrels",
    "as_run",
    "detect_format",
    "read_qrels",
    "read_run",
    "read_samples",
    "write_qrels",
    "write_run",
]
