"""The file formats ragmeter reads and writes, in one table (as measures have a registry).

A :class:`FileFormat` names a format, the extensions that select it and its reader and
writer functions for runs and qrels; :data:`FORMATS_REGISTRY` holds them.
:func:`ragmeter.io.readers.read_run` and friends look the format up here (by ``format=`` or
by the file's extension; an unknown extension is TREC, as trec_eval reads ``qrels.test``).
JSON and YAML documents are sniffed by content: samples, row objects or a
``{qid: ...}`` map (:func:`document_kind`).

A new format is one :class:`FileFormat` registered with :meth:`FormatRegistry.register`,
its functions importing their dependencies when called (the registry is imported at start-up).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from ragmeter.errors import InputError
from ragmeter.io._common import format_suffix

if TYPE_CHECKING:
    from ragmeter.core.data import Qrels, Run
    from ragmeter.io._documents import Document

PathLike = str | os.PathLike[str]
#: ``read(path, name)``: ``name`` as given (``None``: the reader's default, the file name)
RunReader = Callable[[PathLike, "str | None"], "Run"]
QrelsReader = Callable[[PathLike, "str | None"], "Qrels"]
RunWriter = Callable[["Run", PathLike], None]
QrelsWriter = Callable[["Qrels", PathLike], None]


@dataclass(frozen=True)
class FileFormat:
    """A file format: its name, aliases, extensions (lower case, with the dot), a summary,
    and its readers and writers (``None``: not written)."""

    name: str
    extensions: tuple[str, ...]
    summary: str
    read_run: RunReader
    read_qrels: QrelsReader
    write_run: RunWriter | None = None
    write_qrels: QrelsWriter | None = None
    aliases: tuple[str, ...] = ()


class FormatRegistry:
    """Formats by name, alias and extension; ``default`` serves unknown extensions."""

    def __init__(self, default: str) -> None:
        self._formats: dict[str, FileFormat] = {}
        self._names: dict[str, str] = {}
        self._extensions: dict[str, str] = {}
        self._default = default

    def register(self, fmt: FileFormat) -> FileFormat:
        """Add ``fmt``; a name, alias or extension already taken is an error."""
        for key in (fmt.name, *fmt.aliases):
            if key in self._names:
                raise ValueError(f"format name {key!r} is already registered")
        for ext in fmt.extensions:
            if ext in self._extensions:
                raise ValueError(f"extension {ext!r} is already registered")
        self._formats[fmt.name] = fmt
        self._names.update(dict.fromkeys((fmt.name, *fmt.aliases), fmt.name))
        self._extensions.update(dict.fromkeys(fmt.extensions, fmt.name))
        return fmt

    def __iter__(self) -> Iterator[FileFormat]:
        return iter(self._formats.values())

    def names(self) -> tuple[str, ...]:
        """The format names, in registration order."""
        return tuple(self._formats)

    def writable(self) -> tuple[str, ...]:
        """The names of the formats that runs and qrels can be written in."""
        return tuple(f.name for f in self if f.write_run is not None)

    def get(self, name: str, *, source: str | None = None) -> FileFormat:
        """The format called ``name`` (or an alias; case and a leading dot ignored)."""
        key = name.lower().lstrip(".")
        if key not in self._names:
            raise InputError(
                f"unknown format {name!r}; expected one of {', '.join(self.names())}",
                source=source,
                field="format",
            )
        return self._formats[self._names[key]]

    def for_path(self, path: PathLike, format: str | None = None) -> FileFormat:
        """``format`` if given, else the format of the file's extension (else the default)."""
        if format is not None:
            return self.get(format, source=str(path))
        name = self._extensions.get(format_suffix(path), self._default)
        return self._formats[name]


# -- the readers and writers (imported when called) -----------------------------------------


def _trec_run(path: PathLike, name: str | None) -> Run:
    from ragmeter.io.trec import read_trec_run

    return read_trec_run(path, name=name)


def _trec_qrels(path: PathLike, name: str | None) -> Qrels:
    from ragmeter.io.trec import read_trec_qrels

    return read_trec_qrels(path, name=name)


def _write_trec_run(run: Run, path: PathLike) -> None:
    from ragmeter.io.trec import write_trec_run

    write_trec_run(run, path)


def _write_trec_qrels(qrels: Qrels, path: PathLike) -> None:
    from ragmeter.io.trec import write_trec_qrels

    write_trec_qrels(qrels, path)


def _default_name(path: PathLike, name: str | None) -> str:
    return name or Path(path).name


def _jsonl_run(path: PathLike, name: str | None) -> Run:
    from ragmeter.io.jsonl import read_jsonl_run

    traces = _traces_run(path, name)
    if traces is not None:
        return traces
    return read_jsonl_run(path, name=_default_name(path, name))


def _traces_run(path: PathLike, name: str | None) -> Run | None:
    """The run of a trace file (OTLP JSON or a Phoenix span export), sniffed by content;
    ``None`` when the file holds no spans."""
    from ragmeter.io.traces import read_traces_run, sniff_traces

    if sniff_traces(path) is None:
        return None
    return read_traces_run(path, _default_name(path, name))


def _spans_run(path: PathLike, name: str | None) -> Run:
    from ragmeter.io.traces import read_traces_run

    return read_traces_run(path, _default_name(path, name))


def _no_qrels(path: PathLike, name: str | None) -> Qrels:
    raise InputError(
        "this is a trace file: it holds rankings (a run), not relevance judgments. Give it "
        "as a run (ragmeter evaluate TRACES --qrels QRELS, ragmeter monitor TRACES) and the "
        "judgments as qrels (TREC 'query_id 0 doc_id grade' lines, JSONL, CSV, …)",
        source=str(path),
        field="format",
    )


def _refuse_traces(path: PathLike) -> None:
    """A trace file found where qrels are read is refused by :func:`_no_qrels` (read as
    JSON it would fail on its second line, a message that says nothing of the mix-up)."""
    from ragmeter.io.traces import sniff_traces

    if sniff_traces(path) is not None:
        _no_qrels(path, None)


def _jsonl_qrels(path: PathLike, name: str | None) -> Qrels:
    from ragmeter.io.jsonl import read_jsonl_qrels

    _refuse_traces(path)
    return read_jsonl_qrels(path, name=_default_name(path, name))


def _write_jsonl_run(run: Run, path: PathLike) -> None:
    from ragmeter.io.jsonl import write_jsonl_run

    write_jsonl_run(run, path)


def _write_jsonl_qrels(qrels: Qrels, path: PathLike) -> None:
    from ragmeter.io.jsonl import write_jsonl_qrels

    write_jsonl_qrels(qrels, path)


def _delimited(delimiter: Literal["csv", "tsv"]) -> tuple[RunReader, QrelsReader]:
    def run(path: PathLike, name: str | None) -> Run:
        from ragmeter.io.tabular import read_csv_run

        return read_csv_run(path, name=_default_name(path, name), delimiter=delimiter)

    def qrels(path: PathLike, name: str | None) -> Qrels:
        from ragmeter.io.tabular import read_csv_qrels

        return read_csv_qrels(path, name=_default_name(path, name), delimiter=delimiter)

    return run, qrels


def _parquet_run(path: PathLike, name: str | None) -> Run:
    from ragmeter.io.tabular import read_parquet_run

    traces = _traces_run(path, name)
    if traces is not None:
        return traces
    return read_parquet_run(path, name=_default_name(path, name))


def _parquet_qrels(path: PathLike, name: str | None) -> Qrels:
    from ragmeter.io.tabular import read_parquet_qrels

    _refuse_traces(path)
    return read_parquet_qrels(path, name=_default_name(path, name))


def _table_writers(fmt: Literal["csv", "tsv", "parquet"]) -> tuple[RunWriter, QrelsWriter]:
    def run(value: Run, path: PathLike) -> None:
        from ragmeter.io.tabular import run_table, write_table

        write_table(run_table(value), path, fmt=fmt)

    def qrels(value: Qrels, path: PathLike) -> None:
        from ragmeter.io.tabular import qrels_table, write_table

        write_table(qrels_table(value), path, fmt=fmt)

    return run, qrels


_D = TypeVar("_D", "Run", "Qrels")


def _from_document(
    path: PathLike,
    kind: Literal["json", "yaml"],
    name: str | None,
    from_samples: Callable[[Document, str], _D],
    from_records: Callable[..., _D],
    from_dict: Callable[..., _D],
) -> _D:
    """A run or qrels from the JSON or YAML document at ``path``: samples, row objects or a
    ``{qid: ...}`` map; ``name`` as a reader is given it (``None``: the file name)."""
    from ragmeter.io.samples import load_document

    doc_name = _default_name(path, name)
    doc = load_document(path, kind)
    found = document_kind(doc)
    if found == "samples":
        return from_samples(doc, doc_name)
    if found == "rows":
        assert doc.records is not None
        return from_records(doc.records, source=doc.source, name=doc_name)
    return from_dict(doc.value, name=doc_name, source=doc.source)


def _samples_run(doc: Document, name: str) -> Run:
    """The run of a document of samples (their expected outputs may be missing)."""
    from ragmeter.io.samples import samples_from_document

    return samples_from_document(doc, name=name, need_qrels=False).run


def _samples_qrels(doc: Document, name: str) -> Qrels:
    """The qrels of a document of samples (their retrieved lists may be missing)."""
    from ragmeter.io.samples import samples_from_document

    return samples_from_document(doc, name=name, need_run=False).qrels


def _document_readers(kind: Literal["json", "yaml"]) -> tuple[RunReader, QrelsReader]:
    """Readers of a JSON or YAML document: samples, row objects or a ``{qid: ...}`` map."""

    def run(path: PathLike, name: str | None) -> Run:
        traces = _traces_run(path, name) if kind == "json" else None
        if traces is not None:  # the Collector's file exporter writes JSON lines to .json
            return traces
        from ragmeter.io.dicts import run_from_dict
        from ragmeter.io.jsonl import run_from_records

        return _from_document(path, kind, name, _samples_run, run_from_records, run_from_dict)

    def qrels(path: PathLike, name: str | None) -> Qrels:
        if kind == "json":
            _refuse_traces(path)
        from ragmeter.io.dicts import qrels_from_dict
        from ragmeter.io.jsonl import qrels_from_records

        return _from_document(path, kind, name, _samples_qrels, qrels_from_records, qrels_from_dict)

    return run, qrels


def document_kind(doc: Document) -> Literal["samples", "rows", "nested"]:
    """What a JSON/JSONL/YAML document holds: samples, row objects, or a ``{qid: ...}`` map."""
    from ragmeter.io._common import describe
    from ragmeter.io.samples import is_sample

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


def _build() -> FormatRegistry:
    registry = FormatRegistry(default="trec")
    csv_read, tsv_read = _delimited("csv"), _delimited("tsv")
    csv_write, tsv_write = _table_writers("csv"), _table_writers("tsv")
    parquet_write = _table_writers("parquet")
    json_read, yaml_read = _document_readers("json"), _document_readers("yaml")
    for fmt in (
        FileFormat(
            "trec",
            (".txt", ".trec", ".run", ".qrels"),
            "qid Q0 doc rank score tag runs, qid 0 doc grade qrels (any unknown extension)",
            _trec_run,
            _trec_qrels,
            _write_trec_run,
            _write_trec_qrels,
        ),
        FileFormat(
            "json",
            (".json",),
            "samples, an array of row objects, or {qid: {doc: score}} / {qid: [docs]}",
            *json_read,
        ),
        FileFormat(
            "jsonl",
            (".jsonl", ".ndjson"),
            "one sample, row object or TREC RAG answer (its references) per line",
            _jsonl_run,
            _jsonl_qrels,
            _write_jsonl_run,
            _write_jsonl_qrels,
        ),
        FileFormat(
            "yaml", (".yaml", ".yml"), "as JSON (needs PyYAML)", *yaml_read, aliases=("yml",)
        ),
        FileFormat(
            "parquet",
            (".parquet", ".pq"),
            "named columns",
            _parquet_run,
            _parquet_qrels,
            *parquet_write,
        ),
        FileFormat("csv", (".csv",), "named columns, header row required", *csv_read, *csv_write),
        FileFormat("tsv", (".tsv",), "named columns, header row required", *tsv_read, *tsv_write),
        FileFormat(
            "otlp",
            (),
            "OpenTelemetry traces, one ExportTraceServiceRequest per line (read as a run; "
            ".json and .jsonl files are recognised by content)",
            _spans_run,
            _no_qrels,
            aliases=("traces",),
        ),
        FileFormat(
            "phoenix",
            (),
            "Arize Phoenix span exports, JSONL or Parquet (read as a run; recognised by content)",
            _spans_run,
            _no_qrels,
        ),
    ):
        registry.register(fmt)
    return registry


#: every file format ragmeter reads
FORMATS_REGISTRY = _build()
