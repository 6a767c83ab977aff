"""Per-query details of the HTML report: the worst queries with what they missed, and which
sub-questions each run's context covers.

* :func:`worst_queries`: the queries with the lowest value of a measure, each with its
  relevant documents (grade ≥ ``rel_level``) that did not reach the top K — retrieved lower
  (with their rank) or not retrieved at all — highest grade first.
* :func:`subquestion_coverage`: per judged query and sub-question, whether the sub-question
  is answerable (some judged passage rates it ≥ τ) and whether each run's context (its top
  k, by default ``|P*|``) answers it — the cells behind the ``coverage`` measure, whose value
  is the covered share of the answerable ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ragmeter.core.data import Qrels, Run
from ragmeter.core.judgments import DEFAULT_TAU, Judgments
from ragmeter.evaluation.results import RunResult


@dataclass(frozen=True)
class Missed:
    """A relevant document absent from the top K: its grade, and its rank (None: not
    retrieved)."""

    doc_id: str
    grade: int
    rank: int | None


@dataclass(frozen=True)
class WorstQuery:
    """One of the worst queries of a run on ``measure``."""

    query_id: str
    value: float
    missed: tuple[Missed, ...]
    n_relevant: int


def _segment_index(query_ids: np.ndarray) -> dict[str, int]:
    return {str(q): i for i, q in enumerate(query_ids.tolist())}


def worst_queries(
    result: RunResult,
    run: Run,
    qrels: Qrels,
    *,
    measure: str,
    k: int,
    worst: int = 10,
    rel_level: int = 1,
) -> list[WorstQuery]:
    """The ``worst`` queries of ``result`` with the lowest ``measure`` (NA left out; ties by
    query id), each with its relevant documents missing from the top ``k`` of ``run``.

    Example:
        >>> from ragmeter import Run, Qrels, evaluate
        >>> run = Run.from_lists({"q1": ["a", "b", "c"], "q2": ["d"]})
        >>> qrels = Qrels.from_dict({"q1": {"c": 2, "e": 1}, "q2": {"d": 1}})
        >>> result = evaluate(run, qrels, ["recall@1"]).run
        >>> [(w.query_id, [(m.doc_id, m.grade, m.rank) for m in w.missed])
        ...  for w in worst_queries(result, run, qrels, measure="recall@1", k=1, worst=1)]
        [('q1', [('c', 2, 3), ('e', 1, None)])]
    """
    column = result.column(measure)
    ids = [str(q) for q in result.query_ids.tolist()]
    defined = [i for i in range(len(ids)) if not math.isnan(column[i])]
    order = sorted(defined, key=lambda i: (column[i], ids[i]))[: max(worst, 0)]
    run_index = _segment_index(run.query_ids)
    qrels_index = _segment_index(qrels.query_ids)
    out = []
    for i in order:
        qid = ids[i]
        ranks: dict[str, int] = {}
        if qid in run_index:
            j = run_index[qid]
            docs = run.doc_ids.slice(
                int(run.offsets[j]), int(run.offsets[j + 1] - run.offsets[j])
            ).to_pylist()
            ranks = {d: r for r, d in enumerate(docs, start=1)}
        missed: list[Missed] = []
        n_relevant = 0
        if qid in qrels_index:
            j = qrels_index[qid]
            lo, hi = int(qrels.offsets[j]), int(qrels.offsets[j + 1])
            docs = qrels.doc_ids.slice(lo, hi - lo).to_pylist()
            for doc, grade in zip(docs, qrels.grades[lo:hi].tolist(), strict=True):
                if grade < max(rel_level, 0):
                    continue
                n_relevant += 1
                rank = ranks.get(doc)
                if rank is None or rank > k:
                    missed.append(Missed(doc, int(grade), rank))
        missed.sort(key=lambda m: (-m.grade, m.rank if m.rank is not None else math.inf, m.doc_id))
        out.append(WorstQuery(qid, float(column[i]), tuple(missed), n_relevant))
    return out


Cell = Literal["covered", "missed", "unanswerable"]


@dataclass(frozen=True)
class QuestionRow:
    """One sub-question of one query: its text (if given) and, per run, its cell."""

    query_id: str
    number: int
    text: str | None
    answerable: bool
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class SubquestionCoverage:
    """Which sub-questions each run's context covers (see the module docstring)."""

    runs: tuple[str, ...]
    rows: tuple[QuestionRow, ...]
    tau: int
    context: str

    def per_query(self) -> dict[str, dict[str, float | None]]:
        """``{query: {run: covered share of the answerable sub-questions}}`` (None if no
        sub-question is answerable): the ``coverage`` measure."""
        grouped: dict[str, list[QuestionRow]] = {}
        for row in self.rows:
            grouped.setdefault(row.query_id, [])
            if row.answerable:
                grouped[row.query_id].append(row)
        return {
            qid: {
                run: sum(r.cells[j] == "covered" for r in rows) / len(rows) if rows else None
                for j, run in enumerate(self.runs)
            }
            for qid, rows in grouped.items()
        }


def subquestion_coverage(
    runs: Sequence[Run],
    judgments: Judgments,
    *,
    context_k: int | Literal["oracle"] | None = None,
    tau: int = DEFAULT_TAU,
    queries: Sequence[str] | None = None,
) -> SubquestionCoverage:
    """Per judged query (or those of ``queries``) and sub-question: answerable, and covered by
    each run's context (top ``context_k``; ``"oracle"``/None: ``|P*|`` of the query), with
    the alignment and the coverage computation of :func:`ragmeter.evaluate`."""
    from ragmeter.evaluation import EvalInputs, prepare, resolve_measures
    from ragmeter.metrics.coverage import covered_questions

    answerable = judgments.answerable(tau)
    starts = judgments.question_offsets
    k = None if context_k in (None, "oracle") else int(context_k)
    inputs = EvalInputs(judgments.query_qrels(), judgments=judgments, tau=tau, context_k=k)
    measures = resolve_measures(["coverage"], default_k=1, context_k=k)
    flags = []
    for run in runs:
        al = prepare(run, inputs, measures).aligned
        flags.append(covered_questions(al, tau=tau, k=k))
    index = judgments.index()
    chosen = list(index) if queries is None else [q for q in queries if q in index]
    rows = []
    for qid in chosen:
        q = index[qid]
        texts = judgments.questions[q] if judgments.questions is not None else None
        for number, g in enumerate(range(int(starts[q]), int(starts[q + 1])), start=1):
            cells: tuple[Cell, ...]
            if not answerable[g]:
                cells = tuple("unanswerable" for _ in runs)
            else:
                cells = tuple("covered" if f[g] else "missed" for f in flags)
            text = texts[number - 1] if texts is not None else None
            rows.append(QuestionRow(qid, number, text, bool(answerable[g]), cells))
    context = "|P*| (oracle)" if context_k in (None, "oracle") else f"top {context_k}"
    return SubquestionCoverage(tuple(r.name for r in runs), tuple(rows), tau, context)
