"""The figures of the web app's calibration page: how the human labels made in the app agree
with the LLM labels (``--llm-qrels``), and what each run's measures would be under human
labels, estimated by prediction-powered inference (PPI++).

* **Agreement**: Cohen's κ (unweighted, linear, quadratic) and Krippendorff's α of the human
  labels (the reference) against the LLM labels, on the pairs both grade —
  :func:`ragmeter.stats.agreement.label_agreement` through :func:`ragmeter.web.review.review`,
  the very figures of the Review page.
* **Estimates**: the runs are evaluated (:func:`evaluate_grades`, the Evaluate page's
  evaluation) under the LLM labels on every query, and under the merged labels
  (:func:`ragmeter.analysis.ppi.merge_qrels`: the human grade where a person graded the
  pair, the LLM grade elsewhere) on the labelled queries; each measure's estimate is
  :func:`ragmeter.analysis.ppi.ppi_evaluation` — as ``ragmeter evaluate --ppi``.

**Labelled queries** are those with at least one human grade. Without a queue they are taken
as a uniform sample of the queries (unweighted PPI++). With a queue (``serve --queue``) only
the queue's queries count, weighted by ``1/π`` with the queue's inclusion probabilities when
it gives them (the inverse-probability estimator of active inference); human labels of other
queries are left out of the estimates, and said so.

The module reads no web stack: it takes the collection and the labels as plain data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.analysis.ppi import Labelled, PPIEvaluation
    from ragmeter.core.data import Qrels, Run
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.stats.agreement import LabelAgreement
    from ragmeter.web.collection import Collection
    from ragmeter.web.labels import ItemKey

#: the app's grade scale: LLM grades outside it cannot be merged with the human ones
APP_SCALE = (1, 5)


@dataclass(frozen=True)
class CalibrationView:
    """What the calibration page shows.

    Attributes:
        human_source: the human labels (``rule:latest``, ``annotator:NAME`` …).
        llm_source: the LLM labels' name, ``None`` without ``--llm-qrels``.
        n_pairs, n_queries: the pairs people graded, and the queries they are in.
        agreement: κ and α of the human against the LLM labels (``None`` when either is
            missing).
        estimates: every run's PPI estimates (``None`` when they cannot be made: ``missing``
            says why).
        labels: which labels the estimates rest on, as every view prints it.
        provenance: who made the LLM labels (their provenance sidecar, a calibration).
        missing: what is missing for the page's figures, one sentence each.
        notes: what to bear in mind when reading them, one sentence each.
    """

    human_source: str
    llm_source: str | None
    n_pairs: int
    n_queries: int
    agreement: LabelAgreement | None = None
    estimates: PPIEvaluation | None = None
    labels: str | None = None
    provenance: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The page's figures as JSON (``Accept: application/json``)."""
        agreement = self.agreement
        return {
            "human": self.human_source,
            "llm": self.llm_source,
            "human_pairs": self.n_pairs,
            "human_queries": self.n_queries,
            "common_pairs": agreement.n if agreement is not None else 0,
            "kappa": _defined(agreement.kappa) if agreement is not None else None,
            "krippendorff_alpha": _defined(agreement.alpha) if agreement is not None else None,
            "labels": self.labels,
            "provenance": list(self.provenance),
            "ppi": self.estimates.to_dict() if self.estimates is not None else None,
            "missing": list(self.missing),
            "notes": list(self.notes),
        }


def _defined(values: Mapping[str, float]) -> dict[str, float | None]:
    """NaN (undefined: too few pairs, every label the same) as ``None``, JSON's null."""
    return {k: None if math.isnan(v) else v for k, v in values.items()}


def grade_qrels(grades: Mapping[ItemKey, int]) -> dict[str, dict[str, int]]:
    """``{(qid, doc, 0): grade}`` as ``{qid: {doc: grade}}`` (negative grades: no label)."""
    qrels: dict[str, dict[str, int]] = {}
    for (q, d, _), g in grades.items():
        if g >= 0:
            qrels.setdefault(q, {})[d] = g
    return qrels


def evaluate_grades(
    runs: Sequence[Run], qrels: Mapping[str, Mapping[str, int]] | Qrels, measures: Sequence[str]
) -> Evaluation:
    """The runs evaluated against graded labels: the one evaluation of the app's pages
    (:func:`ragmeter.evaluate` with its default settings), so that a measure has the same
    value on the Evaluate and the Calibration page."""
    from ragmeter.evaluation import evaluate

    return evaluate(list(runs), qrels, list(measures))


def calibration_view(
    coll: Collection,
    human_source: str,
    human: Mapping[ItemKey, int],
    measures: Sequence[str],
    *,
    alpha: float | None = None,
) -> CalibrationView:
    """The calibration page's figures for the human labels ``human`` (named
    ``human_source``) of the collection, the runs' ``measures`` at the error level
    ``alpha`` (by default that of ``ragmeter evaluate --ppi``)."""
    from ragmeter.web.review import review

    human_grades = {k: g for k, g in human.items() if g >= 0}
    view = CalibrationView(
        human_source, coll.llm_source, len(human_grades), len({k[0] for k in human_grades})
    )
    if coll.llm_source is None:
        return replace(view, missing=(NO_LLM_QRELS,))
    held = coll.qrels_sources[coll.llm_source]
    llm = {(q, d, 0): g for (q, d), g in held.grades.items() if g >= 0}
    view = replace(
        view, provenance=held.label_notes or (_unknown_origin(coll.llm_source, held.path),)
    )
    if not human_grades:
        return replace(view, missing=(f"no human labels in {human_source} yet: grade passages",))
    agreement = review(human_source, coll.llm_source, human_grades, llm, kind="grade")
    view = replace(view, agreement=agreement)
    if agreement.n == 0:
        view = replace(view, notes=("the human and the LLM labels share no pair yet: no κ",))
    off_scale = _off_scale(llm)
    if off_scale is not None:
        return replace(view, missing=(off_scale,))
    if not coll.runs:
        return replace(view, missing=("no runs were given to the server (--run): no estimate",))
    return _estimated(view, coll, human_grades, llm, measures, alpha)


#: what the page says without LLM labels
NO_LLM_QRELS = (
    "no LLM labels: start the server with --llm-qrels FILE (an LLM judge's qrels of every "
    "query, e.g. written by 'ragmeter judge') to set the human labels against them"
)


def _unknown_origin(name: str, path: Path | None) -> str:
    from ragmeter.io.provenance import read_provenance

    provenance = read_provenance(path) if path is not None else None
    if provenance is None:
        return (
            f"{name} has no provenance sidecar: who made its labels is unknown (labels "
            "written by 'ragmeter judge' carry one)"
        )
    return f"{name}: its provenance sidecar names no judge, only people"


def _off_scale(llm: Mapping[ItemKey, int]) -> str | None:
    """Why the LLM grades cannot be merged with the app's 1–5 grades, or ``None``."""
    if not llm:
        return None
    low, high = min(llm.values()), max(llm.values())
    if APP_SCALE[0] <= low and high <= APP_SCALE[1]:
        return None
    return (
        f"the LLM labels grade {low}..{high}, the app {APP_SCALE[0]}..{APP_SCALE[1]}: merged "
        "labels would mix two scales, so no estimate (give LLM qrels on the 1–5 scale; κ "
        "above compares the grades as they are)"
    )


def _estimated(
    view: CalibrationView,
    coll: Collection,
    human: Mapping[ItemKey, int],
    llm: Mapping[ItemKey, int],
    measures: Sequence[str],
    alpha: float | None,
) -> CalibrationView:
    from ragmeter.analysis.ppi import merge_qrels, ppi_evaluation
    from ragmeter.core.data import Qrels
    from ragmeter.workflows.ppi import PPIRequest

    assert view.llm_source is not None
    alpha = PPIRequest.alpha if alpha is None else alpha
    llm_qrels = Qrels.from_dict(grade_qrels(llm), name=view.llm_source)
    human_qrels = Qrels.from_dict(grade_qrels(human), name=view.human_source)
    try:
        labelled, notes = _design(coll, human_qrels)
        llm_evaluation = evaluate_grades(coll.runs, llm_qrels, measures)
        merged = merge_qrels(llm_qrels, human_qrels, labelled.query_ids)
        human_evaluation = evaluate_grades(coll.runs, merged, measures)
        labels = (
            f"computed on LLM labels ({view.llm_source}), corrected by human labels "
            f"({view.human_source}) on {len(labelled.query_ids)} queries"
        )
        estimates = ppi_evaluation(
            llm_evaluation,
            human_evaluation,
            labelled,
            alpha=alpha,
            labels=labels,
            estimator="plusplus",  # the page's PPI++ as before the cross-fit default
        )
    except RagmeterError as exc:
        return replace(view, missing=(f"no estimate: {exc}",))
    return replace(view, estimates=estimates, labels=labels, notes=(*view.notes, *notes))


def _design(coll: Collection, human: Qrels) -> tuple[Labelled, tuple[str, ...]]:
    """The labelled queries and their inclusion probabilities (the module docstring), with
    what the reader should know of the design."""
    from ragmeter.analysis.ppi import labelled_queries

    if coll.queue is None:
        note = (
            "the labelled queries are taken as a uniform random sample of the queries "
            "(serve a queue of 'ragmeter sample' for a designed sample)"
        )
        return labelled_queries(human), (note,)
    have = {str(q) for q in human.query_ids}
    queued = coll.queue.probabilities()
    listed = [q for q in queued if q in have]
    if not listed:
        raise RagmeterError("no query of the queue has a human label yet")
    notes: list[str] = []
    outside = len(have - set(queued))
    if outside:
        notes.append(
            f"{outside} labelled queries outside the queue are left out of the estimates "
            "(their inclusion probability is unknown)"
        )
    if len(listed) < len(queued):
        notes.append(
            f"{len(listed)} of the queue's {len(queued)} queries have human labels: the "
            "design assumes the whole queue is labelled, so the estimates are provisional "
            "until it is"
        )
    given = {q: queued[q] for q in listed if queued[q] is not None}
    if not given:
        notes.append("the queue gives no inclusion probabilities: the queries are unweighted")
        return labelled_queries(human, listed), tuple(notes)
    if len(given) < len(listed):
        raise RagmeterError(
            f"the queue gives inclusion probabilities for {len(given)} of the {len(listed)} "
            "labelled queries: the labels cannot all be weighted"
        )
    inclusion = {q: float(p) for q, p in given.items() if p is not None}
    notes.append("each labelled query is weighted by 1/π, its inclusion probability in the queue")
    return labelled_queries(human, listed, inclusion), tuple(notes)


__all__ = ["CalibrationView", "calibration_view", "evaluate_grades", "grade_qrels"]
