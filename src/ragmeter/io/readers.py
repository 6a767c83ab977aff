"""Format dispatch: read or write a run or qrels in any supported format.

The format comes from the file extension unless ``format=`` names it:

* ``.txt .trec .run .qrels`` and any other extension: ``trec`` — ``qid Q0 doc rank score tag``
  runs, ``qid 0 doc grade`` qrels.
* ``.json``: ``json`` — samples, an array of row objects, or ``{qid: {doc: score}}`` /
  ``{qid: [docs]}``.
* ``.jsonl .ndjson``: ``jsonl`` — one sample or one row object per line; a TREC RAG answer
  file (Ragnarök's ``topic_id`` + ``answer``) is read as the run of its ``references``
  (:mod:`ragmeter.io.nuggets`).
* ``.yaml .yml``: ``yaml`` — as JSON (needs PyYAML).
* ``.csv`` / ``.tsv``: ``csv`` / ``tsv`` — named columns, header row required.
* ``.parquet .pq``: ``parquet`` — named columns.
* traces — ``otlp`` (OpenTelemetry, one ``ExportTraceServiceRequest`` per line) and
  ``phoenix`` (Arize Phoenix span exports, JSONL or Parquet), recognised by content in
  ``.json``, ``.jsonl`` and ``.parquet`` files, read as the run of their retriever spans
  (:mod:`ragmeter.io.traces`); they hold no qrels.

A JSON/JSONL/YAML file holds *samples* when its records have a retrieved list or an
``expected_output`` (:mod:`ragmeter.io.samples`), *rows* when they have query and doc id
columns (:mod:`ragmeter.io.jsonl`). Files with an unknown extension are read as TREC, as
trec_eval does (``qrels.test``, ``results.test``).

The formats are one table, :data:`ragmeter.io.formats.FORMATS_REGISTRY`; a new format is
registered there. A folder or a glob of files partitioned by query is read by
:mod:`ragmeter.io.partitions`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ragmeter._accel import check_large_input
from ragmeter.core.data import Qrels, Run
from ragmeter.errors import InputError
from ragmeter.io._common import is_partitioned
from ragmeter.io.formats import FORMATS_REGISTRY, FileFormat

if TYPE_CHECKING:
    from ragmeter.io.samples import Samples, read_samples

Format = Literal["trec", "json", "jsonl", "yaml", "parquet", "csv", "tsv", "otlp", "phoenix"]
#: the names of the formats read (see :data:`ragmeter.io.formats.FORMATS_REGISTRY`)
FORMATS: tuple[str, ...] = FORMATS_REGISTRY.names()

PathLike = str | os.PathLike[str]


def detect_format(path: PathLike, format: str | None = None) -> Format:
    """The format of ``path``: ``format`` if given (validated), else from the extension."""
    return FORMATS_REGISTRY.for_path(path, format).name  # type: ignore[return-value]


def read_run(
    path: PathLike,
    *,
    format: str | None = None,
    name: str | None = None,
    query_id_from: str | None = None,
    doc_id_from: str | None = None,
    stage: str | None = None,
) -> Run:
    """Read a run from a file in any supported format (see the module docstring).

    ``name`` defaults to the file name. TREC runs are ordered by score (ties by doc id
    descending); sample files keep the given order. A folder or a glob of files partitioned
    by query is read whole (:mod:`ragmeter.io.partitions`), named after the folder.
    ``query_id_from``: where a trace file's rankings take their query ids
    (:mod:`ragmeter.io.traces`; ``None``: ``$RAGMETER_QUERY_ID_FROM``, else ``hash``);
    ``doc_id_from``: where a trace file's documents take their ids (``document.id``,
    ``metadata.KEY``, ``content``; ``None``: ``document.id``, else the metadata's ``id``,
    ``doc_id`` or ``document_id``, else a hash of the content, said in the run's warnings);
    ``stage``: which ranking of each trace (``retriever``, ``reranker``, ``step:N``,
    ``gathered``; ``None``: the one that reached the LLM, :mod:`ragmeter.io.trace_stages`).
    Files that are not traces have their own ids and rankings and ignore the three.
    """
    if is_partitioned(path):
        from ragmeter.io.partitions import read_partitioned_run

        return read_partitioned_run(path, format=format, name=name)
    fmt = FORMATS_REGISTRY.for_path(path, format)
    asked = (query_id_from, doc_id_from, stage) != (None, None, None)
    if asked and is_traces(path, fmt.name):
        from pathlib import Path

        from ragmeter.io.traces import read_traces_run

        run = read_traces_run(
            path,
            name or Path(path).name,
            query_id_from,
            doc_id_from=doc_id_from,
            stage=stage,
        )
    else:
        run = fmt.read_run(path, name)
    check_large_input(len(run), str(path))
    return run


def read_qrels(path: PathLike, *, format: str | None = None, name: str | None = None) -> Qrels:
    """Read qrels from a file in any supported format (see the module docstring), a folder
    or glob of files partitioned by query (:mod:`ragmeter.io.partitions`), or an
    ir_datasets dataset named ``irds:DATASET_ID`` (:mod:`ragmeter.io.irds`)."""
    from ragmeter.io.irds import is_irds, read_irds_qrels

    if is_irds(path):
        return read_irds_qrels(path, name=name)
    if is_partitioned(path):
        from ragmeter.io.partitions import read_partitioned_qrels

        return read_partitioned_qrels(path, format=format, name=name)
    qrels = FORMATS_REGISTRY.for_path(path, format).read_qrels(path, name)
    check_large_input(len(qrels), str(path))
    return qrels


def is_traces(path: PathLike, format: str) -> bool:
    """Whether ``path``, of format ``format``, holds traces: an ``otlp`` or ``phoenix`` file,
    or a JSON, JSONL or Parquet file whose content is spans."""
    if format in ("otlp", "phoenix"):
        return True
    if format in ("json", "jsonl", "parquet"):
        from ragmeter.io.traces import sniff_traces

        return sniff_traces(path) is not None
    return False


def holds_samples(path: PathLike, *, format: str | None = None) -> bool:
    """Whether the file at ``path`` holds samples, which carry their own judgments
    (``expected_output``; a RAGAS or DeepEval dataset's reference contexts), rather than a run
    alone: a TREC run, row objects or table rows with a score, or a ``{qid: {doc: score}}``
    map. Only samples may be evaluated without separate qrels; a run read as its own qrels
    would score itself perfect."""
    fmt = detect_format(path, format)
    if is_traces(path, fmt):
        return False
    if fmt in ("json", "yaml"):
        from ragmeter.io.formats import document_kind
        from ragmeter.io.samples import load_document

        return document_kind(load_document(path, fmt)) == "samples"
    if fmt == "jsonl":
        from ragmeter.io._common import check_text, read_bytes
        from ragmeter.io._documents import first_jsonl_value
        from ragmeter.io.samples import is_sample

        data = read_bytes(path)
        check_text(data, str(path), what="one JSON object per line")
        return is_sample(first_jsonl_value(data, str(path)))
    if fmt in ("csv", "tsv", "parquet"):
        from ragmeter.io.tabular import is_rag_dataset

        return is_rag_dataset(path, fmt)
    return False


_D = TypeVar("_D", Run, Qrels)


def _coerce(
    obj: Any,
    cls: type[_D],
    read: Callable[..., _D],
    from_dict: Callable[..., _D],
    from_frame: Callable[..., _D],
    name: str | None,
) -> _D:
    """``obj`` as ``cls``: itself, read from a path, or converted from a ``{qid: ...}``
    mapping or a DataFrame (named ``name``, else the kind: ``run`` or ``qrels``)."""
    if isinstance(obj, cls):
        return obj
    if isinstance(obj, str | os.PathLike):
        return read(obj, name=name)
    if isinstance(obj, Mapping):
        return from_dict(obj, name=name or cls.__name__.lower())
    return from_frame(obj, name=name or cls.__name__.lower())


def as_run(obj: Any, *, name: str | None = None) -> Run:
    """A :class:`Run` from anything: a run, a path, a ``{qid: ...}`` mapping, a DataFrame."""
    from ragmeter.io.dicts import run_from_dict
    from ragmeter.io.frames import run_from_frame

    return _coerce(obj, Run, read_run, run_from_dict, run_from_frame, name)


def as_qrels(obj: Any, *, name: str | None = None) -> Qrels:
    """:class:`Qrels` from anything: qrels, a path, a ``{qid: ...}`` mapping, a DataFrame."""
    from ragmeter.io.dicts import qrels_from_dict
    from ragmeter.io.frames import qrels_from_frame

    return _coerce(obj, Qrels, read_qrels, qrels_from_dict, qrels_from_frame, name)


WriteFormat = Literal["trec", "jsonl", "csv", "tsv", "parquet"]


def _write_format(path: PathLike, format: str | None) -> FileFormat:
    fmt = FORMATS_REGISTRY.for_path(path, format)
    if fmt.write_run is None or fmt.write_qrels is None:
        raise InputError(
            f"cannot write {fmt.name}; expected one of {', '.join(FORMATS_REGISTRY.writable())}",
            source=str(path),
            field="format",
        )
    return fmt


def write_run(run: Run, path: PathLike, *, format: str | None = None) -> None:
    """Write ``run`` atomically as TREC, JSONL rows, CSV, TSV or Parquet (by extension)."""
    writer = _write_format(path, format).write_run
    assert writer is not None
    writer(run, path)


def write_qrels(qrels: Qrels, path: PathLike, *, format: str | None = None) -> None:
    """Write ``qrels`` atomically as TREC, JSONL rows, CSV, TSV or Parquet (by extension)."""
    writer = _write_format(path, format).write_qrels
    assert writer is not None
    writer(qrels, path)


__all__ = [
    "FORMATS",
    "Samples",
    "as_qrels",
    "as_run",
    "detect_format",
    "holds_samples",
    "read_qrels",
    "read_run",
    "read_samples",
    "write_qrels",
    "write_run",
]


def __getattr__(name: str) -> Any:
    """``Samples`` and ``read_samples`` load on first use: reading TREC files needs neither."""
    if name in ("Samples", "read_samples"):
        from ragmeter.io import samples

        return getattr(samples, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
