"""Traces as input: OpenTelemetry (OTLP JSON) and Arize Phoenix span exports read as runs.

Two shapes of traces are read, line by line (a file is streamed, never read whole):

* **OTLP JSON** — one ``ExportTraceServiceRequest`` per line, as the OpenTelemetry
  Collector's file exporter writes it: ``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``,
  each span with ``traceId``, ``spanId``, ``parentSpanId``, ``name``,
  ``startTimeUnixNano``/``endTimeUnixNano`` and ``attributes`` as ``[{"key", "value":
  {"stringValue" | "intValue" | "doubleValue" | "boolValue" | "arrayValue" | "kvlistValue"}}]``.
* **Phoenix span exports** — one span per JSONL line or Parquet row, with ``context``
  (``trace_id``, ``span_id``), ``parent_id``, ``span_kind``, ``start_time``/``end_time`` (ISO 8601
  or timestamps) and ``attributes`` (nested objects, or flat ``attributes.*`` columns as in
  Phoenix's span dataframe).

Spans follow the OpenInference semantic conventions: ``openinference.span.kind`` (or Phoenix's
``span_kind``) says what a span is. A ``RETRIEVER`` span is one ranking: the query is its
``input.value``, its documents ``retrieval.documents.N.document.id`` / ``.score`` /
``.content`` / ``.metadata`` in the order of N (rank 1 first). A ``RERANKER`` span's ranking
is its ``reranker.output_documents.N.document.*``, chosen from its
``reranker.input_documents.N.document.*``. The rankings of one trace are its stages and
steps (:mod:`ragmeter.io.trace_stages`). An ``LLM`` span's ``output.value`` is the answer of
its trace. Every span's duration is a latency of its stage (its kind in lower case, or its
name when it has no kind).

**Document ids.** ``doc_id_from`` says where a document's id comes from: ``document.id``;
``metadata.KEY``, a key of the document's ``document.metadata`` (a JSON object as
OpenInference writes it, or flattened keys); ``content``, ``c`` followed by the first 16 hex
digits of the SHA-256 of its content (:func:`content_id`). ``None`` (the default) takes
``document.id``, else the first of the metadata keys :data:`AUTO_METADATA_KEYS` the document
has, else the content hash, and the notes say how many documents took their ids from where.

**Order.** A ranking is in the order the retriever returned it (N), whatever its scores; a
TREC file of the same scores would be ordered by score, ties by doc id (trec_eval's order).
A run read from traces carries scores that give trec_eval the ranking's own order
(:func:`trec_scores`: its own scores where they strictly decrease, else n..1), so that
:func:`write_traces_run` writes a TREC file with the trace's numbers; the notes count the
rankings with tied scores.

**Query ids.** A ranking's query id comes from ``query_id_from``:

* ``"hash"`` (the default): ``q`` followed by the first 16 hex digits of the SHA-256 of the
  normalised query text — Unicode NFKC, case folded, runs of white space made one space, ends
  stripped — so that a question asked again, even as "What is RAG? " or "what is rag?",
  gets the same id and meets its qrels (:func:`query_hash`);
* ``"text"``: the query text itself;
* any other value names a span attribute (``session.id``, ``metadata.query_id``; a key inside
  the JSON object of the ``metadata`` attribute is found too). A trace none of whose ranking
  spans has it is an error naming the file, the line and the attribute.

All the rankings of a trace share one query id: its first retriever step's (the first span
of the trace that has the attribute). As a run (:func:`traces_run`) each query keeps its
latest trace (by start time), at one stage; repeated queries are counted in the run's
warnings. ``ragmeter evaluate TRACES`` reads every stage a file holds as a run of its own
(:func:`read_trace_stages`). ``query_id_from`` is a parameter of the readers (``read_run(path,
query_id_from=...)``, ``ragmeter evaluate --query-id-from``); when none is given,
``$RAGMETER_QUERY_ID_FROM`` is the default (a user's setting, read, never written).

**Bad input.** A malformed line is an error naming the file, the line and the field. Retriever
spans without documents are counted, not read. A last line without its newline that does not
parse is taken for a file still being written: what was complete is read and a note says which
line was left. Spans may come in any order of time: the rankings (without their passages'
texts, for a run) are held until the file is read, then grouped by trace.

**Speed.** OTLP lines are parsed by orjson where it is installed (the ``traces`` extra), by
:func:`json.loads` otherwise, with the same values either way (:func:`_fast_json`).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from ragmeter.errors import InputError
from ragmeter.io._common import PathLike, format_suffix, open_binary
from ragmeter.io.trace_stages import (
    Retrieval as Retrieval,  # re-exported: the rankings' type, as before
)
from ragmeter.io.trace_stages import (
    TraceRankings,
    resolve_stage,
    stage_label,
    stages_of,
)

if TYPE_CHECKING:
    from ragmeter.core.data import Run

#: the environment variable giving the default ``query_id_from`` (a user's setting)
QUERY_ID_ENV = "RAGMETER_QUERY_ID_FROM"
TraceKind = Literal["otlp", "phoenix"]

#: how much of a file :func:`sniff_traces` reads
_SNIFF_BYTES = 1 << 20
_OTLP_HEAD = re.compile(rb'^\{\s*"resourceSpans"\s*:')


@dataclass(frozen=True, slots=True)
class Span:
    """One span: ids, OpenInference kind (upper case, ``""`` when not given), times in
    nanoseconds since the epoch, flat attributes (dotted keys) and the line it was read from."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    line: int

    @property
    def duration_ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6

    @property
    def stage(self) -> str:
        """The stage whose latency this span measures: its kind, else its name."""
        return self.kind.lower() if self.kind else self.name


@dataclass
class Traces:
    """What a trace file held: its rankings, answers (by trace id), per-stage latencies in
    milliseconds, and notes (counts of what was not read, an incomplete last line)."""

    source: str
    retrievals: list[Retrieval] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    spans: int = 0
    without_documents: int = 0
    rerankers_without_documents: int = 0
    notes: list[str] = field(default_factory=list)
    #: with ``latest_only``: traces that repeated a query, and those queries
    repeated: int = 0
    repeated_queries: set[str] = field(default_factory=set)
    #: with ``keep_spans``: every span as (span id, trace id, stage, start ns, duration ms)
    span_rows: list[tuple[str, str, str, int, float]] = field(default_factory=list)
    #: each trace's rankings (retriever steps and rerankers), sharing its query id
    traces: list[TraceRankings] = field(default_factory=list)
    #: how many documents took their id from where: ``document.id``, ``metadata.KEY``,
    #: ``content``
    id_sources: dict[str, int] = field(default_factory=dict)
    #: where the documents' ids were asked to come from (``None``: automatic)
    doc_id_from: str | None = None

    @property
    def content_ids(self) -> int:
        """Documents identified by a hash of their content."""
        return self.id_sources.get("content", 0)

    def describe(self) -> list[str]:
        """The notes of the read, one line each: what was left out, where documents without
        a ``document.id`` took their ids from, an incomplete last line."""
        lines: list[str] = []
        if self.without_documents:
            lines.append(
                f"{self.source}: {self.without_documents} retriever span(s) without "
                "documents left out"
            )
        if self.rerankers_without_documents:
            lines.append(
                f"{self.source}: {self.rerankers_without_documents} reranker span(s) without "
                "output documents left out"
            )
        if self.doc_id_from is None:
            for used, n in sorted(self.id_sources.items()):
                if used.startswith("metadata."):
                    lines.append(
                        f"{self.source}: {n} document(s) without a document.id identified by "
                        f"their metadata's {used[len('metadata.') :]!r} (--doc-id-from {used})"
                    )
            if self.content_ids:
                lines.append(
                    f"{self.source}: {self.content_ids} document(s) without an id identified "
                    "by a hash of their content (--doc-id-from takes ids from elsewhere: "
                    "metadata.KEY)"
                )
        return lines + self.notes


# -- query ids ----------------------------------------------------------------------------


def normalise_query(text: str) -> str:
    """NFKC, case folded, white space runs made one space, ends stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@functools.lru_cache(maxsize=1 << 16)  # questions repeat in production traffic
def query_hash(text: str) -> str:
    """The default query id: ``q`` + 16 hex digits of SHA-256 of the normalised text.

    >>> query_hash("What is RAG? ") == query_hash("what  is rag?")
    True
    """
    return "q" + hashlib.sha256(normalise_query(text).encode("utf-8")).hexdigest()[:16]


def default_query_id_from() -> str:
    """``$RAGMETER_QUERY_ID_FROM``, else ``"hash"``."""
    return os.environ.get(QUERY_ID_ENV, "").strip() or "hash"


def resolve_query_id_from(value: str | None) -> str:
    """``value`` stripped (an empty one is an error), else :func:`default_query_id_from`."""
    if value is None:
        return default_query_id_from()
    if not value.strip():
        raise InputError("--query-id-from is empty; expected hash, text or an attribute name")
    return value.strip()


def _attribute(attrs: Mapping[str, Any], key: str) -> Any:
    """``attrs[key]``, or a key inside an attribute holding a JSON object (``metadata``)."""
    if key in attrs:
        return attrs[key]
    head, _, rest = key.partition(".")
    while rest:
        holder = attrs.get(head)
        if isinstance(holder, str) and holder.startswith("{"):
            try:
                inner = json.loads(holder)
            except ValueError:
                inner = None
            if isinstance(inner, Mapping) and rest in inner:
                return inner[rest]
        step, _, rest = rest.partition(".")
        head = f"{head}.{step}"
    return None


# -- attribute values -----------------------------------------------------------------------


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    """Nested objects and lists as dotted keys (``retrieval.documents.0.document.id``)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list | tuple) and prefix.endswith("documents"):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value


class _LossyNumber(Exception):
    """An integer field read by orjson as a float: the line is read again by json.loads."""


def _otlp_number(
    value: Mapping[str, Any],
    kind: str,
    convert: Callable[[Any], int | float],
    what: str,
    source: str,
    line: int,
    key: str,
) -> int | float:
    """``value[kind]`` as a number (OTLP JSON writes an int64 as a string)."""
    try:
        return convert(value[kind])
    except (TypeError, ValueError):
        raise InputError(
            f"{kind} {value[kind]!r} is not {what}", source=source, line=line, field=key
        ) from None


def _otlp_value(value: Any, source: str, line: int, key: str, lossy: bool = False) -> Any:
    """The Python value of an OTLP JSON ``AnyValue`` (``lossy``: parsed by orjson, which
    reads an integer past 64 bits as a float)."""
    if not isinstance(value, Mapping):
        raise InputError(
            "attribute value is not an AnyValue object", source=source, line=line, field=key
        )
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:  # int64 is a string in OTLP JSON
        if lossy and type(value["intValue"]) is float:
            raise _LossyNumber
        return _otlp_number(value, "intValue", int, "an integer", source, line, key)
    if "doubleValue" in value:
        return _otlp_number(value, "doubleValue", float, "a number", source, line, key)
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        items = (value["arrayValue"] or {}).get("values") or []
        return [_otlp_value(v, source, line, key, lossy) for v in items]
    if "kvlistValue" in value:
        items = (value["kvlistValue"] or {}).get("values") or []
        return {
            kv.get("key"): _otlp_value(kv.get("value"), source, line, key, lossy) for kv in items
        }
    return None  # an empty AnyValue or bytesValue: no value ragmeter reads


def _otlp_attributes(items: Any, source: str, line: int, lossy: bool = False) -> dict[str, Any]:
    if items is None:
        return {}
    if type(items) is not list:
        raise InputError(
            "attributes is not a list of key/value objects",
            source=source,
            line=line,
            field="attributes",
        )
    out: dict[str, Any] = {}
    for kv in items:
        # the common case first, without a call: a string or a double (millions per file)
        key = kv.get("key") if type(kv) is dict else None
        if type(key) is not str:
            raise InputError(
                "an attribute has no string key", source=source, line=line, field="attributes"
            )
        value = kv.get("value")
        if type(value) is dict and len(value) == 1:
            text = value.get("stringValue")
            if type(text) is str:
                out[key] = text
                continue
            number = value.get("doubleValue")
            if type(number) is float:
                out[key] = number
                continue
        parsed = _otlp_value(value, source, line, key, lossy)
        if isinstance(parsed, dict):
            _flatten(parsed, key, out)
        else:
            out[key] = parsed
    return out


def _nanos(value: Any, source: str, line: int, key: str) -> int:
    """Nanoseconds since the epoch from an OTLP integer (or its string), an ISO 8601 text or
    a datetime."""
    if type(value) is str and value.isascii() and value.isdigit():  # OTLP's int64 text
        return int(value)
    if isinstance(value, datetime):
        return _datetime_ns(value)
    if isinstance(value, bool) or value is None:
        raise InputError("no time given", source=source, line=line, field=key)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    if isinstance(value, str):
        if value.isdigit():
            return int(value)
        try:
            return _datetime_ns(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            pass
    raise InputError(
        f"{value!r} is not a time (nanoseconds since the epoch or ISO 8601)",
        source=source,
        line=line,
        field=key,
    )


def _datetime_ns(value: datetime) -> int:
    from datetime import UTC

    if value.tzinfo is None:  # Phoenix writes naive UTC times in its dataframes
        value = value.replace(tzinfo=UTC)
    return int(value.timestamp()) * 1_000_000_000 + value.microsecond * 1000


def _text(value: Any, source: str, line: int, key: str, *, required: bool = True) -> str:
    if isinstance(value, str) and value:
        return value
    if value is None and not required:
        return ""
    raise InputError(
        f"expected a non-empty string, got {value!r}", source=source, line=line, field=key
    )


# -- the two shapes ---------------------------------------------------------------------------


def _otlp_spans(request: Any, source: str, line: int, lossy: bool = False) -> Iterator[Span]:
    """The spans of one ``ExportTraceServiceRequest``."""
    if not isinstance(request, Mapping) or not isinstance(request.get("resourceSpans"), list):
        raise InputError(
            "expected an ExportTraceServiceRequest object with a resourceSpans list",
            source=source,
            line=line,
            field="resourceSpans",
        )
    for resource in request["resourceSpans"]:
        for scope in (resource or {}).get("scopeSpans") or []:
            spans = (scope or {}).get("spans") or []
            if not isinstance(spans, list):
                raise InputError(
                    "spans is not a list", source=source, line=line, field="scopeSpans.spans"
                )
            for raw in spans:
                yield _otlp_span(raw, source, line, lossy)


def _otlp_span(raw: Any, source: str, line: int, lossy: bool = False) -> Span:
    if not isinstance(raw, Mapping):
        raise InputError("a span is not an object", source=source, line=line, field="spans")
    attrs = _otlp_attributes(raw.get("attributes"), source, line, lossy)
    start, end = raw.get("startTimeUnixNano"), raw.get("endTimeUnixNano")
    if lossy and (type(start) is float or type(end) is float):
        raise _LossyNumber
    return Span(
        trace_id=_text(raw.get("traceId"), source, line, "traceId"),
        span_id=_text(raw.get("spanId"), source, line, "spanId"),
        parent_id=raw.get("parentSpanId") or None,
        name=str(raw.get("name") or ""),
        kind=str(attrs.get("openinference.span.kind") or "").upper(),
        start_ns=_nanos(start, source, line, "startTimeUnixNano"),
        end_ns=_nanos(end, source, line, "endTimeUnixNano"),
        attributes=attrs,
        line=line,
    )


def _phoenix_span(record: Any, source: str, line: int) -> Span:
    """One span of a Phoenix export: nested (``context``, ``attributes`` objects) or flat
    (``context.span_id``, ``attributes.input.value`` columns)."""
    if not isinstance(record, Mapping):
        raise InputError("expected a span object", source=source, line=line)
    flat: dict[str, Any] = {}
    _flatten(record, "", flat)
    attrs: dict[str, Any] = {}
    for key, value in flat.items():
        if key.startswith("attributes."):
            if isinstance(value, list | tuple) and key.endswith("documents"):
                _flatten(list(value), key[len("attributes.") :], attrs)
            elif value is not None:
                attrs[key[len("attributes.") :]] = value
    kind = flat.get("span_kind") or attrs.get("openinference.span.kind") or ""
    return Span(
        trace_id=_text(flat.get("context.trace_id"), source, line, "context.trace_id"),
        span_id=_text(flat.get("context.span_id"), source, line, "context.span_id"),
        parent_id=flat.get("parent_id") or None,
        name=str(flat.get("name") or ""),
        kind=str(kind).upper(),
        start_ns=_nanos(flat.get("start_time"), source, line, "start_time"),
        end_ns=_nanos(flat.get("end_time"), source, line, "end_time"),
        attributes=attrs,
        line=line,
    )


def trace_kind_of(record: Any) -> TraceKind | None:
    """``otlp`` or ``phoenix`` when a JSON record (or a table's column names) is a span
    record of that shape, else ``None``."""
    if isinstance(record, Mapping):
        if "resourceSpans" in record:
            return "otlp"
        context = record.get("context")
        if isinstance(context, Mapping) and "span_id" in context:
            return "phoenix"
        if "context.span_id" in record:
            return "phoenix"
    return None


def sniff_traces(path: PathLike) -> TraceKind | None:
    """What trace shape the file at ``path`` holds (``None``: not traces): the first line of
    a JSON/JSONL file, the column names of a Parquet file."""
    if format_suffix(path) in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        try:
            names = pq.read_schema(os.fspath(path)).names
        except (OSError, ValueError):
            return None
        return "phoenix" if "context.span_id" in names else None
    try:
        with open_binary(path) as fh:
            head = fh.read(_SNIFF_BYTES)
    except (OSError, InputError):
        return None
    head = head.lstrip()
    first, newline, _ = head.partition(b"\n")
    if not newline:  # one long line (or a document) beyond the sniffed bytes: only OTLP's
        return "otlp" if _OTLP_HEAD.match(head) else None
    if not first.startswith(b"{"):
        return None
    try:
        return trace_kind_of(json.loads(first))
    except (ValueError, RecursionError):  # not traces; the reader of the file says why
        return None


# -- reading --------------------------------------------------------------------------------


def iter_spans(path: PathLike, notes: list[str] | None = None) -> Iterator[Span]:
    """Every span of a trace file, streamed (see the module docstring)."""
    source = str(path)
    if format_suffix(path) in (".parquet", ".pq"):
        yield from _parquet_spans(path, source)
        return
    kind: TraceKind | None = None
    with open_binary(path) as fh:
        pending: tuple[int, bytes] | None = None
        for number, raw in enumerate(_lines(fh, source), start=1):
            if pending is not None:
                yield from _line_spans(*pending, source, kind)
            if not raw.strip():
                pending = None
                continue
            if kind is None:
                kind = _first_kind(raw, source, number)
            pending = (number, raw)
        if pending is None:
            return
        number, raw = pending
        try:
            spans = list(_line_spans(number, raw, source, kind))
        except InputError:
            if raw.endswith(b"\n"):
                raise
            # a last line cut short: the exporter is still writing it
            if notes is not None:
                notes.append(
                    f"{source}: line {number} is incomplete (the file is still being "
                    f"written?); read up to line {number - 1}"
                )
            return
        yield from spans


def _lines(fh: Any, source: str) -> Iterator[bytes]:
    """The lines of a (possibly decompressing) binary stream, newline kept, read in chunks;
    a line longer than :func:`~ragmeter.io._common.max_line_bytes` is an error."""
    from ragmeter.io._common import READ_CHUNK, line_too_long, max_line_bytes

    cap = max_line_bytes()
    rest = b""
    number = 0
    while chunk := fh.read(READ_CHUNK):
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        for part in parts:
            number += 1
            yield part + b"\n"
        if len(rest) > cap:
            raise line_too_long(source, number + 1, cap)
    if rest:
        yield rest


def _first_kind(raw: bytes, source: str, line: int) -> TraceKind:
    from ragmeter.io._documents import loads

    kind = trace_kind_of(loads(raw.decode("utf-8", "replace"), source, line))
    if kind is None:
        raise InputError(
            "not a span record: expected an OTLP ExportTraceServiceRequest (resourceSpans) "
            "or a Phoenix span (context.span_id)",
            source=source,
            line=line,
        )
    return kind


def _fast_json() -> Callable[[bytes], Any] | None:
    """orjson's ``loads`` where orjson is installed (the ``traces`` extra), else ``None``.

    orjson reads strict RFC 8259 JSON, a subset of what :func:`json.loads` reads, into the
    same values, at about three times the speed. A line it refuses (``NaN``, an integer past
    64 bits, a lone surrogate, a syntax error) is read again by :func:`json.loads`, whose value
    or error is the answer: the result never depends on whether orjson is installed."""
    global _ORJSON_LOADS
    if _ORJSON_LOADS is _UNLOADED:
        try:
            import orjson

            _ORJSON_LOADS = orjson.loads
        except ImportError:
            _ORJSON_LOADS = None
    return _ORJSON_LOADS  # type: ignore[no-any-return]


_UNLOADED: Any = object()
#: orjson.loads, None without orjson, _UNLOADED before the first line (tests set None)
_ORJSON_LOADS: Any = _UNLOADED


def _exact_record(number: int, raw: bytes, source: str) -> Any:
    """The JSON value of one line by :func:`json.loads` (an error names the file, the line
    and the column)."""
    from ragmeter.io._documents import loads

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("line is not UTF-8 text", source=source, line=number) from None
    return loads(text, source, number)


def _line_spans(number: int, raw: bytes, source: str, kind: TraceKind | None) -> Iterator[Span]:
    fast = _fast_json() if kind == "otlp" else None
    if fast is not None:
        try:
            record = fast(raw)
        except ValueError:  # orjson.JSONDecodeError: json.loads has the last word
            pass
        else:
            try:
                yield from list(_otlp_spans(record, source, number, lossy=True))
                return
            except (_LossyNumber, InputError):
                pass  # read again exactly: the same spans, or the error json.loads's value gives
    record = _exact_record(number, raw, source)
    if kind == "otlp":
        yield from _otlp_spans(record, source, number)
    else:
        yield _phoenix_span(record, source, number)


def _parquet_spans(path: PathLike, source: str) -> Iterator[Span]:
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(os.fspath(path))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read Parquet: {exc}", source=source) from None
    row = 0
    for batch in table.iter_batches(batch_size=8192):
        for record in batch.to_pylist():
            row += 1
            yield _phoenix_span(record, f"{source} (row {row})", row)


# -- documents ------------------------------------------------------------------------------

#: where a span keeps its ranked documents: the retriever's, a reranker's input and output
_DOC_GROUPS = {
    "retrieval.documents.": 0,
    "reranker.input_documents.": 1,
    "reranker.output_documents.": 2,
}
_GROUP_PREFIX = {group: prefix for prefix, group in _DOC_GROUPS.items()}
#: a document's fields, and where each is kept while its span is read
_DOC_FIELDS = {"id": 0, "score": 1, "content": 2, "metadata": 3}
#: the metadata keys a document's id is looked for in, in this order, when it has no
#: ``document.id`` and no ``doc_id_from`` is given
AUTO_METADATA_KEYS: tuple[str, ...] = ("id", "doc_id", "document_id")

#: what each attribute key seen is: ``(group, rank index, field slot, metadata key)`` of a
#: document, or ``None``; the same few dozen keys come back in every span, so each is taken
#: apart once (bounded: cleared when full)
_DocKey = tuple[int, int, int, str | None]
_DOC_KEYS: dict[str, _DocKey | None] = {}
_DOC_KEYS_MAX = 1 << 16


def _doc_key(key: str) -> _DocKey | None:
    """Where ``key`` (``retrieval.documents.N.document.FIELD``, a reranker's
    ``reranker.input_documents.N.document.FIELD`` …) puts its value; a flattened metadata
    object's ``…document.metadata.KEY`` keeps its KEY."""
    for prefix, group in _DOC_GROUPS.items():
        if key.startswith(prefix):
            number, _, rest = key[len(prefix) :].partition(".document.")
            if not number.isdigit():
                return None
            if rest in _DOC_FIELDS:
                return group, int(number), _DOC_FIELDS[rest], None
            if rest.startswith("metadata."):
                return group, int(number), 3, rest[len("metadata.") :]
            return None
    return None


def resolve_doc_id_from(value: str | None) -> str | None:
    """``value`` checked: ``document.id``, ``metadata.KEY`` or ``content``; ``None`` (or
    ``auto``) is the automatic choice (see the module docstring)."""
    if value is None or value.strip() == "auto":
        return None
    text = value.strip()
    if text in ("document.id", "content") or (text.startswith("metadata.") and text[9:]):
        return text
    raise InputError(
        f"--doc-id-from {value!r}: expected document.id, metadata.KEY (a key of the "
        "document's metadata) or content",
        field="doc_id_from",
    )


_CONTENT_ID = re.compile(r"^c[0-9a-f]{16}$")


def made_from_content(doc_ids: Iterable[str]) -> bool:
    """Whether judged documents' ids are all content hashes (:func:`content_id`): qrels made
    from traces whose documents had no id (a monitor's labels, an export). The automatic
    choice of ids then takes the same hashes."""
    seen = False
    for doc in doc_ids:
        if not _CONTENT_ID.match(doc):
            return False
        seen = True
    return seen


def doc_id_from_for(doc_id_from: str | None, judged: Iterable[str]) -> str | None:
    """``doc_id_from``, or where it is automatic and the ``judged`` documents' ids are all
    content hashes, ``content``."""
    if resolve_doc_id_from(doc_id_from) is None and made_from_content(judged):
        return "content"
    return doc_id_from


def content_id(content: str) -> str:
    """A document's id made from its text: ``c`` + 16 hex digits of its SHA-256."""
    return "c" + hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]


def _metadata(value: Any) -> Mapping[str, Any]:
    """A document's metadata: an object (flattened keys, Phoenix), or the JSON text of one
    (OpenInference writes ``document.metadata`` as JSON)."""
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            inner = json.loads(value)
        except ValueError:
            return {}
        return inner if isinstance(inner, Mapping) else {}
    return {}


def _id_text(value: Any) -> str | None:
    """An id value as text (a non-empty string or an integer), else ``None``."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _doc_id(fields: list[Any], how: str | None) -> tuple[str | None, str]:
    """A document's id by ``how`` (``None``: automatic) and where it came from."""
    raw_id, _, content, meta = fields
    if how is None:
        own = _id_text(raw_id)
        if own is not None:
            return own, "document.id"
        held = _metadata(meta)
        for key in AUTO_METADATA_KEYS:
            value = _id_text(held.get(key))
            if value is not None:
                return value, f"metadata.{key}"
        return (content_id(content), "content") if isinstance(content, str) else (None, "")
    if how == "document.id":
        return _id_text(raw_id), how
    if how == "content":
        return (content_id(content), how) if isinstance(content, str) else (None, how)
    return _id_text(_metadata(meta).get(how[len("metadata.") :])), how


@dataclass
class _Docs:
    """A span's documents, by group: ``(rank index, id, score, content)`` in rank order."""

    groups: dict[int, list[tuple[int, str, float | None, str | None]]]
    #: how many documents took their id from where (``document.id``, ``metadata.id``, …)
    sources: dict[str, int]


def _documents(span: Span, source: str, how: str | None) -> _Docs:
    """The documents of a retriever or reranker span, ids taken by ``how``."""
    found: dict[tuple[int, int], list[Any]] = {}  # (group, index): [id, score, content, meta]
    known = _DOC_KEYS
    if len(known) > _DOC_KEYS_MAX:
        known.clear()
    for key, value in span.attributes.items():
        try:
            hit = known[key]
        except KeyError:
            hit = known[key] = _doc_key(key)
        if hit is not None:
            fields = found.get(hit[:2])
            if fields is None:
                fields = found[hit[:2]] = [None, None, None, None]
            if hit[3] is None:
                fields[hit[2]] = value
            else:  # a flattened metadata object
                if not isinstance(fields[3], dict):
                    fields[3] = {}
                fields[3][hit[3]] = value
    docs = _Docs({}, {})
    for group, index in sorted(found):
        fields = found[(group, index)]
        doc_id, used = _doc_id(fields, how)
        where = f"{_GROUP_PREFIX[group]}{index}.document"
        if doc_id is None:
            raise InputError(_no_id_message(span, index, how), source=source, line=span.line,
                             field=f"{where}.{_field_of(how)}")  # fmt: skip
        score = fields[1]
        if (
            score is not None
            and type(score) is not float
            and (isinstance(score, bool) or not isinstance(score, int | float))
        ):
            raise InputError(
                f"score {score!r} is not a number",
                source=source,
                line=span.line,
                field=f"{where}.score",
            )
        content = fields[2] if isinstance(fields[2], str) else None
        docs.groups.setdefault(group, []).append(
            (index, doc_id, None if score is None else float(score), content)
        )
        docs.sources[used] = docs.sources.get(used, 0) + 1
    return docs


def _field_of(how: str | None) -> str:
    return "id" if how is None else how.removeprefix("document.")


def _no_id_message(span: Span, index: int, how: str | None) -> str:
    what = f"{span.kind.lower() or 'ranking'} span {span.span_id}: document {index}"
    if how is None:
        return (
            f"{what} has neither an id (document.id, or metadata "
            f"{', '.join(AUTO_METADATA_KEYS)}) nor content"
        )
    return f"{what} has no {how} to take its id from (--doc-id-from {how})"


def _ranking(
    docs: Sequence[tuple[int, str, float | None, str | None]], keep_texts: bool
) -> tuple[tuple[str, ...], tuple[float | None, ...], tuple[str | None, ...]]:
    """Ids, scores and texts in rank order; a repeated document keeps its best rank."""
    seen: set[str] = set()
    ids: list[str] = []
    scores: list[float | None] = []
    texts: list[str | None] = []
    for _, doc_id, score, text in docs:
        if doc_id not in seen:
            seen.add(doc_id)
            ids.append(doc_id)
            scores.append(score)
            texts.append(text if keep_texts else None)
    return tuple(ids), tuple(scores), tuple(texts)


def _own_query_id(span: Span, query: str, how: str) -> str | None:
    """The query id a span gives by itself (``None``: it lacks the attribute, or the text)."""
    if how == "hash":
        return query_hash(query) if query else None
    if how == "text":
        return query or None
    value = _attribute(span.attributes, how)
    if value is None or isinstance(value, bool | Mapping | list) or value == "":
        return None
    return str(value)


def retrieval_of(
    span: Span,
    source: str,
    query_id_from: str,
    doc_id_from: str | None = None,
    *,
    keep_texts: bool = True,
) -> tuple[Retrieval | None, dict[str, int]]:
    """The ranking of a retriever span, or of a reranker span's output (``None`` without
    documents), and where its documents' ids came from (counts). Its ``query_id`` is the
    one the span gives by itself (``""`` when it lacks it): a trace's rankings share the
    trace's (:func:`read_traces`)."""
    docs = _documents(span, source, doc_id_from)
    reranker = span.kind == "RERANKER"
    ranked = docs.groups.get(2 if reranker else 0)
    if not ranked:
        return None, docs.sources
    if reranker:
        query = span.attributes.get("reranker.query") or span.attributes.get("input.value")
        query_text = query if isinstance(query, str) else ""
    else:
        query_text = _text(span.attributes.get("input.value"), source, span.line, "input.value")
    ids, scores, texts = _ranking(ranked, keep_texts)
    inputs = docs.groups.get(1)
    return (
        Retrieval(
            trace_id=span.trace_id,
            span_id=span.span_id,
            query_id=_own_query_id(span, query_text, query_id_from) or "",
            query=query_text,
            start_ns=span.start_ns,
            duration_ms=span.duration_ms,
            doc_ids=ids,
            scores=scores,
            texts=texts,
            line=span.line,
            stage="reranker" if reranker else "retriever",
            candidates=_ranking(inputs, False)[0] if reranker and inputs else None,
            name=span.name,
        ),
        docs.sources,
    )


def read_traces(
    paths: PathLike | Iterable[PathLike],
    query_id_from: str | None = None,
    *,
    doc_id_from: str | None = None,
    stage: str | None = None,
    keep_spans: bool = False,
    latest_only: bool = False,
) -> Traces:
    """Read trace files (see the module docstring): rankings, answers and latencies.

    ``traces.traces`` holds each trace's rankings (:class:`TraceRankings`: retriever steps
    and rerankers, sharing the trace's query id); ``traces.retrievals`` every retriever
    span's ranking (each step), or with ``stage`` each trace's ranking of that stage
    (:mod:`ragmeter.io.trace_stages`). ``doc_id_from``: where documents take their ids
    (``None``: automatic). ``keep_spans`` also keeps every span's ids, stage and times
    (``span_rows``); ``latest_only`` keeps only the latest trace of each query (``repeated``
    counts the others) and no passage texts."""
    path_list = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    how = resolve_query_id_from(query_id_from)
    ids = resolve_doc_id_from(doc_id_from)
    wanted = resolve_stage(stage)
    traces = Traces(source=", ".join(str(p) for p in path_list))
    read: list[Retrieval] = []
    for path in path_list:
        source = str(path)
        for span in iter_spans(path, traces.notes):
            traces.spans += 1
            traces.latencies.setdefault(span.stage, []).append(span.duration_ms)
            if keep_spans:
                traces.span_rows.append(
                    (span.span_id, span.trace_id, span.stage, span.start_ns, span.duration_ms)
                )
            if span.kind in ("RETRIEVER", "RERANKER"):
                retrieval, sources = retrieval_of(
                    span, source, how, ids, keep_texts=not latest_only
                )
                for used, n in sources.items():
                    traces.id_sources[used] = traces.id_sources.get(used, 0) + n
                if retrieval is not None:
                    read.append(retrieval)
                elif span.kind == "RETRIEVER":
                    traces.without_documents += 1
                else:
                    traces.rerankers_without_documents += 1
            elif span.kind == "LLM":
                answer = span.attributes.get("output.value")
                if isinstance(answer, str):
                    traces.answers[span.trace_id] = answer
    traces.doc_id_from = ids
    traces.traces = _by_trace(read, how, traces.source)
    if latest_only:
        traces.traces = _latest_per_query(traces.traces, traces)
    traces.retrievals = _retrievals(traces.traces, wanted)
    return traces


def _by_trace(read: list[Retrieval], how: str, source: str) -> list[TraceRankings]:
    """The rankings grouped by trace: retriever steps numbered in order of start time (then
    span name), every ranking given the trace's query id."""
    groups: dict[str, list[Retrieval]] = {}
    for r in read:
        groups.setdefault(r.trace_id, []).append(r)
    out: list[TraceRankings] = []
    for trace_id, rankings in groups.items():
        rankings.sort(key=lambda r: (r.start_ns, r.name, r.span_id))
        steps = [r for r in rankings if r.stage == "retriever"]
        rerankers = [r for r in rankings if r.stage == "reranker"]
        qid = next((r.query_id for r in (*steps, *rerankers) if r.query_id), None)
        if qid is None:
            first = (steps or rerankers)[0]
            raise InputError(
                f"{first.stage} span {first.span_id} has no attribute {how!r} to take its "
                "query id from (--query-id-from), and no other span of its trace has",
                source=source,
                line=first.line,
                field=how,
            )
        steps = [replace(r, query_id=qid, step=n) for n, r in enumerate(steps, start=1)]
        rerankers = [replace(r, query_id=qid) for r in rerankers]
        out.append(
            TraceRankings(trace_id, qid, rankings[0].start_ns, tuple(steps), tuple(rerankers))
        )
    return out


def _latest_per_query(found: list[TraceRankings], traces: Traces) -> list[TraceRankings]:
    """Each query's latest trace (by start time); the others counted in ``traces``."""
    latest: dict[str, TraceRankings] = {}
    for t in found:
        held = latest.get(t.query_id)
        if held is not None:
            traces.repeated += 1
            traces.repeated_queries.add(t.query_id)
        if held is None or t.start_ns >= held.start_ns:
            latest[t.query_id] = t
    return list(latest.values())


def _retrievals(found: list[TraceRankings], stage: str | None) -> list[Retrieval]:
    if stage is None:
        return [r for t in found for r in t.steps]
    return [r for t in found if (r := t.ranking(stage)) is not None]


# -- runs -----------------------------------------------------------------------------------


def trec_scores(r: Retrieval) -> list[float]:
    """Scores under which trec_eval's order (score descending, ties by doc id descending)
    is the ranking's own order: its scores where they strictly decrease, else ``n - rank +
    1`` (n, n-1, …, 1)."""
    own = [s for s in r.scores if s is not None]
    if len(own) == len(r.scores) and all(a > b for a, b in itertools.pairwise(own)):
        return own
    n = len(r.doc_ids)
    return [float(n - i) for i in range(n)]


def has_tied_scores(r: Retrieval) -> bool:
    """Whether two of the ranking's documents share a score (trec_eval would order them by
    doc id, not as the retriever did)."""
    given = [s for s in r.scores if s is not None]
    return len(set(given)) < len(given)


def traces_run(traces: Traces, name: str, stage: str | None = None) -> Run:
    """The run of ``traces`` at ``stage`` (:mod:`ragmeter.io.trace_stages`; ``None``: the
    ranking that reached the LLM): each query's latest trace (by start time), ranked in the
    retriever's (or reranker's) order, with scores that give trec_eval the same order
    (:func:`trec_scores`)."""
    from ragmeter.core.data import Run

    wanted = resolve_stage(stage)
    latest = _latest_per_query(traces.traces, traces)
    if not latest:
        raise InputError(
            "no retriever span with documents; expected OpenInference RETRIEVER spans "
            "(retrieval.documents.N.document.id)",
            source=traces.source,
        )
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    pool: dict[str, tuple[str, ...]] = {}
    tied = 0
    for t in latest:
        r = t.ranking(wanted)
        if r is None:
            continue
        qids.extend([t.query_id] * len(r.doc_ids))
        docs.extend(r.doc_ids)
        scores.extend(trec_scores(r))
        tied += has_tied_scores(r)
        candidates = t.candidates() if r.stage == "reranker" else None
        if candidates is not None:
            pool[t.query_id] = candidates
    if not qids:
        raise InputError(
            f"no trace has a {stage_label(wanted or 'retriever')} ranking "
            f"(this file holds: {', '.join(stages_of(latest)) or 'none'})",
            source=traces.source,
            field="stage",
        )
    run = Run.from_columns(qids, docs, scores, name=name, order="given", source=traces.source)
    notes = [*traces.describe(), *_stage_notes(traces, latest, wanted, len(set(qids)))]
    if tied:
        notes.append(
            f"{traces.source}: {tied} ranking(s) have tied scores; their order is the "
            "retriever's (trec_eval would order tied documents by doc id; ragmeter traces "
            "to-run writes a TREC run that keeps the retriever's order)"
        )
    if traces.repeated:
        notes.append(
            f"{traces.source}: {traces.repeated} trace(s) repeat a query of "
            f"{len(traces.repeated_queries)} quer(ies); each query keeps its latest trace"
        )
    candidates_run = Run.from_lists(pool, name=f"{name} candidates") if pool else None
    return replace(
        run,
        warnings=(*run.warnings, *notes),
        stage=wanted or "default",
        candidates=candidates_run,
    )


def _stage_notes(
    traces: Traces, latest: list[TraceRankings], stage: str | None, n_queries: int
) -> list[str]:
    """What stage was read, where the file holds more than one ranking per trace, and how
    many traces had none of it."""
    held = stages_of(latest)
    out: list[str] = []
    if held != ["retriever"] and stage is None:
        rerank = sum(1 for t in latest if t.rerankers)
        what = (
            f"the reranker's output ({rerank} trace(s)), else the retriever's documents"
            if rerank
            else "the retriever steps' gathered documents"
        )
        out.append(
            f"{traces.source}: stage read: {what} (the file holds {', '.join(held)}; "
            "choose one with --stage)"
        )
    lacking = len(latest) - n_queries
    if lacking:
        out.append(
            f"{traces.source}: {lacking} trace(s) have no {stage_label(stage or '')} "
            "ranking; their queries are absent from this run"
        )
    return out


def read_traces_run(
    path: PathLike,
    name: str | None = None,
    query_id_from: str | None = None,
    *,
    doc_id_from: str | None = None,
    stage: str | None = None,
) -> Run:
    """The run of a trace file (see :func:`traces_run`), named after the file by default."""
    from pathlib import Path

    traces = read_traces(path, query_id_from, doc_id_from=doc_id_from, latest_only=True)
    return traces_run(traces, name or Path(path).name, stage)


def read_trace_stages(
    path: PathLike,
    name: str | None = None,
    query_id_from: str | None = None,
    *,
    doc_id_from: str | None = None,
) -> list[Run]:
    """One run per stage the trace file holds (:func:`~ragmeter.io.trace_stages.stages_of`),
    named ``NAME [stage]``; a file of plain one-retriever traces is one run, named ``NAME``,
    as :func:`read_traces_run` reads it."""
    from pathlib import Path

    base = name or Path(path).name
    traces = read_traces(path, query_id_from, doc_id_from=doc_id_from, latest_only=True)
    held = stages_of(traces.traces)
    if held in (["retriever"], []):
        return [traces_run(traces, base)]
    runs = [traces_run(traces, stage_run_name(base, stage), stage) for stage in held]
    shared = set(runs[0].warnings)
    for run in runs[1:]:
        shared &= set(run.warnings)
    said = (f"{traces.source}: read as {len(runs)} runs, one per stage: {_stages_said(held)}",)
    # the notes of the read once (on the first run), each run's own with it
    return [
        replace(run, warnings=(*said, *run.warnings) if i == 0 else tuple(
            w for w in run.warnings if w not in shared))
        for i, run in enumerate(runs)
    ]  # fmt: skip


def stage_run_name(base: str, stage: str) -> str:
    """The name of a stage's run: ``traces.jsonl (reranker)``, ``traces.jsonl (step 2)``
    (parentheses, not brackets: tables read brackets as markup)."""
    return f"{base} ({stage_label(stage)})"


def _stages_said(held: Sequence[str]) -> str:
    """What each stage's run holds, in words."""
    said = {
        "retriever": "the retriever spans' documents",
        "reranker": "the reranker spans' output (its input documents the pool of proc@K)",
        "gathered": "every retriever step's documents, each once, in first-retrieved order",
    }
    parts = [
        f"({stage_label(s)}) = "
        + (said[s] if s in said else f"retriever span {s[5:]} of each trace, by start time")
        for s in held
    ]
    return "; ".join(parts) + " (--stage reads one)"


@dataclass(frozen=True)
class TraceContents:
    """What a trace file holds: its spans, traces, queries, the stages its rankings can be
    read at, and how many traces have each (``step:N``: N retriever steps or more)."""

    spans: int
    traces: int
    queries: int
    stages: tuple[str, ...]
    traces_with: Mapping[str, int]
    notes: tuple[str, ...]


def trace_contents(
    path: PathLike, query_id_from: str | None = None, *, doc_id_from: str | None = None
) -> TraceContents:
    """List what the trace file at ``path`` holds (stages and steps)."""
    traces = read_traces(path, query_id_from, doc_id_from=doc_id_from, latest_only=True)
    held = stages_of(traces.traces)
    return TraceContents(
        spans=traces.spans,
        traces=len(traces.traces) + traces.repeated,
        queries=len({t.query_id for t in traces.traces}),
        stages=tuple(held),
        traces_with={s: sum(1 for t in traces.traces if t.ranking(s) is not None) for s in held},
        notes=tuple(traces.describe()),
    )


def write_traces_run(
    path: PathLike,
    output: PathLike,
    query_id_from: str | None = None,
    *,
    doc_id_from: str | None = None,
    stage: str | None = None,
) -> Run:
    """Write the run of a trace file at ``stage`` as a TREC run whose trec_eval order is the
    trace's order (:func:`trec_scores`): evaluated as a TREC file, it gives the numbers the
    trace gives. The run tag is the file's stem (and the stage: ``traces-reranker``)."""
    from pathlib import Path

    from ragmeter.io.trec import write_trec_run

    run = read_traces_run(path, None, query_id_from, doc_id_from=doc_id_from, stage=stage)
    wanted = resolve_stage(stage)
    tag = Path(path).name.split(".")[0] or "traces"
    if wanted is not None:
        tag = f"{tag}-{wanted.replace(':', '')}"
    write_trec_run(run, output, tag=tag)
    return run
