"""What the framework tests share: the example collection, a tracer provider whose spans an
in-memory exporter keeps, the spans written as OTLP JSON lines (as the OTLP exporter encodes
them: protobuf's JSON mapping of ``ExportTraceServiceRequest``, one request per line), and the
expected values of a framework's own ranking.

The expected values are computed without ragmeter: the framework's ranking is given scores
n − rank + 1 (so that trec_eval's order, score descending, is the framework's order) and
evaluated by pytrec_eval (trec_eval's own code). ragmeter's values of the same ranking as a
TREC run (its TREC path) and of the trace must be those.

Importing this module skips the importing test module where the OpenTelemetry SDK, its OTLP
encoder, OpenInference's instrumentation helpers or pytrec_eval are missing."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

trace_sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="opentelemetry-sdk")
span_export = pytest.importorskip("opentelemetry.sdk.trace.export", reason="opentelemetry-sdk")
memory = pytest.importorskip(
    "opentelemetry.sdk.trace.export.in_memory_span_exporter", reason="opentelemetry-sdk"
)
encoder = pytest.importorskip(
    "opentelemetry.exporter.otlp.proto.common.trace_encoder",
    reason="opentelemetry-exporter-otlp-proto-common",
)
json_format = pytest.importorskip("google.protobuf.json_format", reason="protobuf")
oi = pytest.importorskip("openinference.instrumentation", reason="openinference-instrumentation")
pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier (the reference)")

from ragmeter.data import EXAMPLE_DIR  # noqa: E402

#: the measures compared; the example collection's binary measures count grades >= 3 as
#: relevant (its README), nDCG gains the grades themselves
MEASURES = ("ndcg@10", "recall@10")
REL_LEVEL = 3
#: ragmeter's measure name -> pytrec_eval's
TREC_EVAL_NAMES = {
    "ndcg@5": "ndcg_cut_5",
    "ndcg@10": "ndcg_cut_10",
    "recall@5": "recall_5",
    "recall@10": "recall_10",
    "recall@20": "recall_20",
}
#: the query id the tests set with ``using_metadata`` and ragmeter reads back
QUERY_ID_FROM = "metadata.query_id"

Rankings = dict[str, list[str]]


@dataclass(frozen=True)
class Traced:
    """A framework's traced run: the OTLP JSON file and the framework's own rankings."""

    path: Path
    rankings: Rankings


@dataclass(frozen=True)
class Collection:
    """The example collection: passages ``{id: text}``, queries ``{id: text}``, qrels."""

    passages: dict[str, str]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    qrels_path: Path


def example_collection() -> Collection:
    def jsonl(name: str) -> dict[str, str]:
        lines = (EXAMPLE_DIR / name).read_text(encoding="utf-8").splitlines()
        return {r["id"]: r["text"] for r in map(json.loads, lines)}

    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    qrels_path = EXAMPLE_DIR / "qrels.txt"
    for line in qrels_path.read_text(encoding="utf-8").splitlines():
        qid, _, doc, grade = line.split()
        qrels[qid][doc] = int(grade)
    return Collection(jsonl("corpus.jsonl"), jsonl("queries.jsonl"), dict(qrels), qrels_path)


@contextmanager
def instrumented(instrumentor: Any) -> Iterator[Any]:
    """``instrumentor`` (an OpenInference instrumentor) sending its spans to an in-memory
    exporter, which is yielded; uninstrumented on leaving."""
    exporter = memory.InMemorySpanExporter()
    provider = trace_sdk.TracerProvider()
    provider.add_span_processor(span_export.SimpleSpanProcessor(exporter))
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        instrumentor.uninstrument()


@contextmanager
def query_id(qid: str) -> Iterator[None]:
    """The documented way to give the spans of one request their query id."""
    with oi.using_metadata({"query_id": qid}):
        yield


def write_otlp(spans: Sequence[Any], path: Path) -> Path:
    """``spans`` as OTLP JSON lines: one ``ExportTraceServiceRequest`` per trace, encoded by
    the OTLP exporter's own encoder and written in protobuf's JSON mapping."""
    by_trace: dict[int, list[Any]] = defaultdict(list)
    for span in spans:
        by_trace[span.context.trace_id].append(span)
    lines = [
        json.dumps(json_format.MessageToDict(encoder.encode_spans(group)))
        for group in by_trace.values()
    ]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def write_trec(rankings: Mapping[str, Sequence[str]], path: Path, tag: str = "framework") -> Path:
    """``rankings`` as a TREC run, scores n − rank + 1 (trec_eval's order is the ranking's)."""
    with path.open("w", encoding="utf-8") as out:
        for qid, docs in rankings.items():
            for rank, doc in enumerate(docs, 1):
                out.write(f"{qid} Q0 {doc} {rank} {len(docs) - rank + 1} {tag}\n")
    return path


def reference_values(
    rankings: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
    measures: Sequence[str] = MEASURES,
) -> dict[str, dict[str, float]]:
    """``{qid: {measure: value}}`` of ``rankings`` by pytrec_eval (trec_eval's code), each
    ranking scored n − rank + 1; queries without qrels are left out, as trec_eval does."""
    run = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in rankings.items()}
    return reference_of_run(run, qrels, measures)


def reference_of_run(
    run: Mapping[str, Mapping[str, float]],
    qrels: Mapping[str, Mapping[str, int]],
    measures: Sequence[str] = MEASURES,
) -> dict[str, dict[str, float]]:
    """``{qid: {measure: value}}`` of a ``{qid: {doc: score}}`` run by pytrec_eval, which
    orders it as trec_eval does (score descending, ties by doc id descending)."""
    names = {TREC_EVAL_NAMES[m] for m in measures}
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: dict(j) for q, j in qrels.items()}, names, relevance_level=REL_LEVEL
    )
    got = evaluator.evaluate({q: dict(docs) for q, docs in run.items()})
    # a judged query the run lacks scores 0 (ragmeter's default, --missing zero)
    return {
        q: {m: float(got.get(q, {}).get(TREC_EVAL_NAMES[m], 0.0)) for m in measures} for q in qrels
    }


def ragmeter_values(
    run: Any, qrels_path: Path, measures: Sequence[str] = MEASURES
) -> dict[str, dict[str, float | None]]:
    """``{qid: {measure: value}}`` by ragmeter of a run (a Run or a run file's path)."""
    import ragmeter

    evaluation = ragmeter.evaluate(run, str(qrels_path), list(measures), rel_level=REL_LEVEL)
    return evaluation.run.per_query()


def means(values: Mapping[str, Mapping[str, float | None]]) -> dict[str, float]:
    """The mean of each measure over the queries of ``values``."""
    names = next(iter(values.values())).keys()
    return {m: sum(float(v[m] or 0.0) for v in values.values()) / len(values) for m in names}


def assert_same_values(
    got: Mapping[str, Mapping[str, float | None]],
    expected: Mapping[str, Mapping[str, float]],
) -> None:
    """Per query and measure, ``got`` equals ``expected`` (to 1e-12: pytrec_eval sums in
    another order)."""
    assert set(got) == set(expected)
    for qid, row in expected.items():
        for measure, value in row.items():
            assert got[qid][measure] == pytest.approx(value, abs=1e-12), (qid, measure)
