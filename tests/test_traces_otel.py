"""Traces made by the real OpenTelemetry SDK with the OpenInference semantic conventions,
encoded as the OTLP exporter encodes them and written as OTLP JSON (protobuf's JSON mapping,
one ``ExportTraceServiceRequest`` per line), then read back. Skipped where the SDK is not
installed (it is no dependency of ragmeter)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

trace_sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="opentelemetry-sdk")
memory = pytest.importorskip(
    "opentelemetry.sdk.trace.export.in_memory_span_exporter", reason="opentelemetry-sdk"
)
export = pytest.importorskip("opentelemetry.sdk.trace.export", reason="opentelemetry-sdk")
encoder = pytest.importorskip(
    "opentelemetry.exporter.otlp.proto.common.trace_encoder",
    reason="opentelemetry-exporter-otlp-proto-common",
)
json_format = pytest.importorskip("google.protobuf.json_format", reason="protobuf")
semconv = pytest.importorskip("openinference.semconv.trace", reason="openinference")

from ragmeter.io.readers import read_run  # noqa: E402
from ragmeter.io.traces import query_hash, read_traces  # noqa: E402

SpanAttributes = semconv.SpanAttributes
DocumentAttributes = semconv.DocumentAttributes
Kind = semconv.OpenInferenceSpanKindValues


def answer(tracer: object, question: str, docs: list[tuple[str, float, str]]) -> None:
    """One request as an instrumented RAG app traces it: a chain, its retriever, its LLM."""
    with tracer.start_as_current_span("query") as chain:  # type: ignore[attr-defined]
        chain.set_attribute(SpanAttributes.OPENINFERENCE_SPAN_KIND, Kind.CHAIN.value)
        chain.set_attribute(SpanAttributes.INPUT_VALUE, question)
        with tracer.start_as_current_span("retrieve") as retriever:  # type: ignore[attr-defined]
            retriever.set_attribute(SpanAttributes.OPENINFERENCE_SPAN_KIND, Kind.RETRIEVER.value)
            retriever.set_attribute(SpanAttributes.INPUT_VALUE, question)
            for i, (doc, score, text) in enumerate(docs):
                prefix = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{i}"
                retriever.set_attribute(f"{prefix}.{DocumentAttributes.DOCUMENT_ID}", doc)
                retriever.set_attribute(f"{prefix}.{DocumentAttributes.DOCUMENT_SCORE}", score)
                retriever.set_attribute(f"{prefix}.{DocumentAttributes.DOCUMENT_CONTENT}", text)
        with tracer.start_as_current_span("generate") as llm:  # type: ignore[attr-defined]
            llm.set_attribute(SpanAttributes.OPENINFERENCE_SPAN_KIND, Kind.LLM.value)
            llm.set_attribute(SpanAttributes.OUTPUT_VALUE, f"the answer to {question}")


def test_sdk_traces_read_back(tmp_path: Path) -> None:
    exporter = memory.InMemorySpanExporter()
    provider = trace_sdk.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("rag-app")
    answer(tracer, "What is RAG?", [("d1", 0.9, "one"), ("d7", 0.5, "seven")])
    answer(tracer, "who  wrote it", [("d3", 2.0, "three")])
    spans = exporter.get_finished_spans()
    request = encoder.encode_spans(spans)
    line = json.dumps(json_format.MessageToDict(request))
    path = tmp_path / "traces.json"
    path.write_text(line + "\n")

    traces = read_traces(path)
    assert traces.spans == 6
    by_query = {r.query: r for r in traces.retrievals}
    assert by_query["What is RAG?"].doc_ids == ("d1", "d7")
    assert by_query["What is RAG?"].scores == (0.9, 0.5)
    assert by_query["What is RAG?"].texts == ("one", "seven")
    retrievers = [s for s in spans if s.name == "retrieve"]
    assert sorted(r.start_ns for r in traces.retrievals) == sorted(s.start_time for s in retrievers)
    assert sorted(r.duration_ms for r in traces.retrievals) == sorted(
        (s.end_time - s.start_time) / 1e6 for s in retrievers
    )
    assert set(traces.answers.values()) == {
        "the answer to What is RAG?",
        "the answer to who  wrote it",
    }
    assert read_run(path).ranked() == {
        query_hash("what is rag?"): ["d1", "d7"],
        query_hash("Who wrote it"): ["d3"],
    }
