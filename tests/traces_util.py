"""OTLP JSON and Phoenix span records written by hand for the trace tests, after the
OpenTelemetry protocol's JSON mapping (ids as hex strings, int64 times as strings, attributes
as key/AnyValue pairs) and the OpenInference semantic conventions."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: 2026-01-05 00:00:00 UTC, in nanoseconds
DAY0_NS = 1_767_571_200 * 1_000_000_000
HOUR_NS = 3600 * 1_000_000_000


def any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def otlp_span(
    trace_id: str,
    span_id: str,
    kind: str | None,
    start_ns: int,
    duration_ms: float,
    attributes: Mapping[str, Any],
    *,
    parent: str = "",
    name: str | None = None,
) -> dict[str, Any]:
    attrs = dict(attributes)
    if kind is not None:
        attrs = {"openinference.span.kind": kind, **attrs}
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name or (kind or "span").lower(),
        "kind": "SPAN_KIND_INTERNAL",
        "startTimeUnixNano": str(start_ns),
        "endTimeUnixNano": str(start_ns + int(duration_ms * 1e6)),
        "attributes": [{"key": k, "value": any_value(v)} for k, v in attrs.items()],
        "status": {},
    }


def retriever_attributes(
    query: str, docs: Sequence[str], texts: Sequence[str] | None = None, **extra: Any
) -> dict[str, Any]:
    attrs: dict[str, Any] = {"input.value": query, **extra}
    for i, doc in enumerate(docs):
        attrs[f"retrieval.documents.{i}.document.id"] = doc
        attrs[f"retrieval.documents.{i}.document.score"] = float(len(docs) - i)
        if texts is not None:
            attrs[f"retrieval.documents.{i}.document.content"] = texts[i]
    return attrs


def request(spans: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One ExportTraceServiceRequest holding ``spans``."""
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "rag"}}]
                },
                "scopeSpans": [{"scope": {"name": "openinference"}, "spans": list(spans)}],
            }
        ]
    }


def write_lines(path: Path, records: Sequence[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def rag_trace(
    n: int,
    query: str,
    docs: Sequence[str],
    start_ns: int,
    *,
    texts: Sequence[str] | None = None,
    retrieve_ms: float = 20.0,
    llm_ms: float = 300.0,
    answer: str = "an answer",
) -> list[dict[str, Any]]:
    """The spans of one request: a chain, its retriever and its LLM call."""
    trace = f"{n:032x}"
    root, ret, llm = f"{3 * n + 1:016x}", f"{3 * n + 2:016x}", f"{3 * n + 3:016x}"
    return [
        otlp_span(trace, root, "CHAIN", start_ns, retrieve_ms + llm_ms + 5, {"input.value": query}),
        otlp_span(
            trace,
            ret,
            "RETRIEVER",
            start_ns + 1_000_000,
            retrieve_ms,
            retriever_attributes(query, docs, texts),
            parent=root,
        ),
        otlp_span(
            trace,
            llm,
            "LLM",
            start_ns + int((retrieve_ms + 2) * 1e6),
            llm_ms,
            {"output.value": answer},
            parent=root,
        ),
    ]
