"""Haystack traced by OpenInference's own instrumentor, read back by ragmeter.

The example collection's 30 questions go through a Haystack ``Pipeline`` holding an
``InMemoryBM25Retriever`` over an ``InMemoryDocumentStore`` (Haystack's own BM25, nothing
downloaded; its telemetry is switched off by its documented variable). Every per-query
ranking and value must be the one of the ranking the pipeline itself returned (see
``frameworks_util``).

Skipped where the ``frameworks`` extra is not installed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Haystack sends anonymous usage events (PostHog) unless this is set before it is imported
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"
haystack = pytest.importorskip("haystack", reason="the frameworks extra (haystack-ai)")
oi_haystack = pytest.importorskip(
    "openinference.instrumentation.haystack",
    reason="the frameworks extra (openinference-instrumentation-haystack)",
)

from haystack.components.retrievers.in_memory import InMemoryBM25Retriever  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402

from frameworks_util import (  # noqa: E402
    QUERY_ID_FROM,
    Collection,
    Rankings,
    Traced,
    assert_same_values,
    example_collection,
    instrumented,
    query_id,
    ragmeter_values,
    reference_values,
    write_otlp,
    write_trec,
)
from ragmeter.io.readers import read_run  # noqa: E402


@pytest.fixture(scope="module")
def collection() -> Collection:
    return example_collection()


@pytest.fixture(scope="module")
def traced(collection: Collection, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Traced]:
    store = InMemoryDocumentStore()
    store.write_documents(
        [haystack.Document(id=pid, content=text) for pid, text in collection.passages.items()]
    )
    pipeline = haystack.Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=10))
    with instrumented(oi_haystack.HaystackInstrumentor()) as exporter:
        rankings: Rankings = {}
        for qid, text in collection.queries.items():
            with query_id(qid):
                result = pipeline.run({"retriever": {"query": text}})
            rankings[qid] = [d.id for d in result["retriever"]["documents"]]
        spans = exporter.get_finished_spans()
    path = tmp_path_factory.mktemp("haystack") / "pipeline.json"
    yield Traced(write_otlp(spans, path), rankings)


def test_the_retriever_span_holds_document_ids(traced: Traced) -> None:
    text = traced.path.read_text(encoding="utf-8")
    assert "RETRIEVER" in text and "retrieval.documents.0.document.id" in text


def test_pipeline_rankings_and_values_are_haystack_own(
    traced: Traced, collection: Collection, tmp_path: Path
) -> None:
    run = read_run(traced.path, query_id_from=QUERY_ID_FROM)
    assert run.ranked() == traced.rankings
    from_trace = ragmeter_values(run, collection.qrels_path)
    assert_same_values(from_trace, reference_values(traced.rankings, collection.qrels))
    trec = write_trec(traced.rankings, tmp_path / "own.trec")
    assert ragmeter_values(trec, collection.qrels_path) == from_trace
