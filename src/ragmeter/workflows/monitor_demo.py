"""A week of synthetic production traffic for ``ragmeter monitor demo``: OTLP JSON traces of
a RAG service whose retrieval degrades on a chosen day, and the labels of its passages.

Twenty questions, each with ten passages: three relevant (grades 3, 2, 2 on UMBRELA's 0..3
scale) and seven off-topic (grade 0). Every request retrieves the question's ten passages;
before the degraded day each relevant passage lands in the top three with probability 0.9,
from that day on the relevant passages fall to ranks 4–10 and the retriever gets slower. The
traffic is seeded: the same seed writes the same files.

The labels are known by construction; their provenance sidecar says so (a ``human`` source
whose annotator is ``synthetic, by construction``), so that ``ragmeter monitor --labels``
needs no judge server. With a judge (``--base-url``, ``--model``) the passages' text is in
the traces too.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: 2026-01-05 00:00 UTC (a Monday), the first day of the demo week
WEEK_START_S = 1_767_571_200
QUESTIONS = 20
PASSAGES = 10
RELEVANT_GRADES = (3, 2, 2)
ANNOTATOR = "synthetic, by construction"


@dataclass(frozen=True)
class DemoFiles:
    traces: Path
    labels: Path
    requests: int


def _value(v: Any) -> dict[str, Any]:
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": str(v)}


def _span(
    trace: str, span: str, parent: str, kind: str, start_ns: int, ms: float, attrs: dict[str, Any]
) -> dict[str, Any]:
    attributes = {"openinference.span.kind": kind, **attrs}
    return {
        "traceId": trace,
        "spanId": span,
        "parentSpanId": parent,
        "name": kind.lower(),
        "kind": "SPAN_KIND_INTERNAL",
        "startTimeUnixNano": str(start_ns),
        "endTimeUnixNano": str(start_ns + int(ms * 1e6)),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
    }


def _ranking(rng: np.random.Generator, degraded: bool) -> list[int]:
    """Passage indices in rank order (0..2 are the relevant ones)."""
    order = list(rng.permutation(np.arange(3, PASSAGES)))
    for relevant in range(3):
        top = rng.random() < 0.9 and not degraded
        low, high = (0, 3) if top else (3, len(order) + 1)
        order.insert(int(rng.integers(low, min(high, len(order) + 1))), relevant)
    return [int(i) for i in order]


def _request(rng: np.random.Generator, n: int, start_ns: int, degraded: bool) -> dict[str, Any]:
    q = int(rng.integers(QUESTIONS))
    trace, root, ret, llm = (
        f"{n:032x}",
        f"{3 * n + 1:016x}",
        f"{3 * n + 2:016x}",
        f"{3 * n + 3:016x}",
    )
    retrieve_ms = float(rng.gamma(4.0, 5.0)) * (3.0 if degraded else 1.0)
    llm_ms = float(rng.gamma(9.0, 40.0))
    attrs: dict[str, Any] = {"input.value": f"Question {q}: how does feature {q} work?"}
    for rank, p in enumerate(_ranking(rng, degraded)):
        attrs[f"retrieval.documents.{rank}.document.id"] = f"q{q}-p{p}"
        attrs[f"retrieval.documents.{rank}.document.score"] = round(1.0 - rank / PASSAGES, 3)
        about = f"feature {q}" if p < 3 else f"an unrelated topic {p}"
        attrs[f"retrieval.documents.{rank}.document.content"] = f"Passage {p} about {about}."
    spans = [
        _span(trace, root, "", "CHAIN", start_ns, retrieve_ms + llm_ms + 3, {}),
        _span(trace, ret, root, "RETRIEVER", start_ns + 1_000_000, retrieve_ms, attrs),
        _span(
            trace,
            llm,
            root,
            "LLM",
            start_ns + int((retrieve_ms + 2) * 1e6),
            llm_ms,
            {"output.value": f"Feature {q} works like this."},
        ),
    ]
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "demo"}, "spans": spans}]}]}


def write_demo_week(
    out: str | os.PathLike[str],
    *,
    days: int = 7,
    degrade_day: int = 5,
    per_day: int = 60,
    seed: int = 0,
) -> DemoFiles:
    """Write ``traces.json`` (OTLP JSON lines) and ``labels.txt`` (TREC qrels, query ids as
    ``ragmeter`` derives them from the question text) with its provenance sidecar into
    ``out``; day ``degrade_day`` (1-based) and later are degraded."""
    from ragmeter.core.provenance import LabelProvenance, human_source
    from ragmeter.io._common import atomic_write_text
    from ragmeter.io.provenance import write_provenance
    from ragmeter.io.traces import query_hash

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    lines = []
    for day in range(days):
        offsets = np.sort(rng.uniform(0, 86400, size=per_day))
        for i, offset in enumerate(offsets):
            start_ns = int((WEEK_START_S + day * 86400 + float(offset)) * 1e9)
            n = day * per_day + i + 1
            lines.append(json.dumps(_request(rng, n, start_ns, day + 1 >= degrade_day)))
    traces = folder / "traces.json"
    atomic_write_text(traces, "\n".join(lines) + "\n")
    qrels = []
    for q in range(QUESTIONS):
        qid = query_hash(f"Question {q}: how does feature {q} work?")
        for p in range(PASSAGES):
            grade = RELEVANT_GRADES[p] if p < 3 else 0
            qrels.append(f"{qid} 0 q{q}-p{p} {grade}")
    labels = folder / "labels.txt"
    atomic_write_text(labels, "\n".join(qrels) + "\n")
    write_provenance(labels, LabelProvenance.single(human_source(ANNOTATOR)))
    return DemoFiles(traces, labels, len(lines))
