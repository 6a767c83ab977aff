"""The stages and steps of a trace: which ranking of a request is evaluated.

A trace (one request, its spans sharing a trace id) may rank documents more than once:

* **steps** — its ``RETRIEVER`` spans, in order of start time (then span name): an agent that
  retrieves twice for one question has two steps, each with its own query text;
* **the reranker** — a ``RERANKER`` span's output documents
  (``reranker.output_documents.N.document.*``), reranking its input documents
  (``reranker.input_documents.N.document.*``, else the retriever's documents): the
  *candidates*.

A **stage** names one ranking per trace (:data:`STAGES`):

* ``retriever`` — the retriever's documents: its one step, or with several steps their union
  (as ``gathered``);
* ``reranker`` — the (last) reranker's output, its candidates the pool of ``proc@K``;
* ``step:N`` — the N-th retriever step (1-based); a trace with fewer steps has none;
* ``gathered`` — every retriever step's documents, each kept once, in first-retrieved order
  (step 1's ranking, then the documents step 2 added, …): the context an agent gathered.

The default (``None``) is the ranking that reached the LLM: the reranker's output where the
trace has a reranker, else its retriever's documents (the union where it has several steps).
All the rankings of a trace share one query id (:mod:`ragmeter.io.traces`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragmeter.errors import InputError

#: the stages a trace's ranking can be taken from (and ``step:N``)
STAGES: tuple[str, ...] = ("retriever", "reranker", "step:N", "gathered")
_STEP = re.compile(r"^step:(\d+)$")


@dataclass(frozen=True, slots=True)
class Retrieval:
    """One ranking span (a retriever's, or a reranker's output) read as a ranking, documents
    in rank order. ``stage`` is ``retriever`` or ``reranker``; ``step`` the 1-based retriever
    step within its trace (0 for a reranker); ``candidates`` a reranker's input documents
    (``None`` when it recorded none, and for a retriever)."""

    trace_id: str
    span_id: str
    query_id: str
    query: str
    start_ns: int
    duration_ms: float
    doc_ids: tuple[str, ...]
    scores: tuple[float | None, ...]
    texts: tuple[str | None, ...]
    line: int
    stage: str = "retriever"
    step: int = 0
    candidates: tuple[str, ...] | None = None
    name: str = ""


def resolve_stage(value: str | None) -> str | None:
    """``value`` checked and normalised (``step 2`` → ``step:2``); ``None`` stays ``None``
    (the default stage)."""
    if value is None:
        return None
    text = value.strip().lower().replace(" ", ":")
    if text in ("retriever", "reranker", "gathered"):
        return text
    m = _STEP.match(text)
    if m and int(m[1]) >= 1:
        return f"step:{int(m[1])}"
    raise InputError(
        f"--stage {value!r}: expected retriever, reranker, gathered or step:N (N ≥ 1)",
        field="stage",
    )


def stage_label(stage: str) -> str:
    """How a stage is named in a run's name: ``retriever``, ``step 2``."""
    return stage.replace(":", " ")


@dataclass(frozen=True)
class TraceRankings:
    """The rankings of one trace: its retriever steps in order and its rerankers."""

    trace_id: str
    query_id: str
    start_ns: int
    steps: tuple[Retrieval, ...]
    rerankers: tuple[Retrieval, ...]

    def ranking(self, stage: str | None) -> Retrieval | None:
        """The ranking of ``stage`` (see the module docstring); ``None`` when the trace has
        none (no reranker, fewer steps)."""
        if stage is None:
            return self.ranking("reranker") or self.ranking("retriever")
        if stage == "reranker":
            return self.rerankers[-1] if self.rerankers else None
        if stage == "retriever":
            return self.steps[0] if len(self.steps) == 1 else self.ranking("gathered")
        if stage == "gathered":
            return gathered(self.steps) if self.steps else None
        m = _STEP.match(stage)
        if m is None:
            raise ValueError(f"not a stage: {stage!r}")
        n = int(m[1])
        return self.steps[n - 1] if n <= len(self.steps) else None

    def candidates(self) -> tuple[str, ...] | None:
        """What the reranker chose from: its input documents, else the retriever's."""
        if not self.rerankers:
            return None
        own = self.rerankers[-1].candidates
        if own is not None:
            return own
        retrieved = self.ranking("retriever")
        return retrieved.doc_ids if retrieved is not None else None


def gathered(steps: Sequence[Retrieval]) -> Retrieval:
    """The union of ``steps``' documents, each once, in first-retrieved order (scores
    dropped: they come from different queries)."""
    seen: dict[str, str | None] = {}
    for step in steps:
        for doc, text in zip(step.doc_ids, step.texts, strict=True):
            if doc not in seen:
                seen[doc] = text
    first = steps[0]
    return Retrieval(
        trace_id=first.trace_id,
        span_id=first.span_id,
        query_id=first.query_id,
        query=first.query,
        start_ns=first.start_ns,
        duration_ms=sum(s.duration_ms for s in steps),
        doc_ids=tuple(seen),
        scores=(None,) * len(seen),
        texts=tuple(seen.values()),
        line=first.line,
        stage="gathered",
        step=0,
    )


def stages_of(traces: Sequence[TraceRankings]) -> list[str]:
    """The stages a set of traces holds, as ``ragmeter evaluate`` lists them: the retriever
    steps (``step:1`` …, then ``gathered``) where some trace has several, else
    ``retriever``; then ``reranker`` where some trace has one."""
    most = max((len(t.steps) for t in traces), default=0)
    out: list[str] = []
    if most > 1:
        out = [f"step:{n}" for n in range(1, most + 1)] + ["gathered"]
    elif most == 1:
        out = ["retriever"]
    if any(t.rerankers for t in traces):
        out.append("reranker")
    return out
