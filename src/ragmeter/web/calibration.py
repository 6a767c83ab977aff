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

**The learned judge** (``serve --learned MODEL_DIR``, a model of ``ragmeter judge
learn``): its grades of the pairs people graded, set against theirs — κ (unweighted and
quadratic), Krippendorff's ordinal α and the number of pairs, by the same
:func:`~ragmeter.web.review.review` — so that its agreement is seen to grow (or not) as
labels come in. Each pair is graded once while the server runs (:class:`LearnedGrader`).

**As labels arrive** (:func:`ragmeter.analysis.ppi.ppi_sequences`): for each run and measure,
the PPI confidence sequence after the labelled queries so far, in the order they were first
labelled, with the human labels' own beside it — intervals that may be re-read after every
label, unlike the fixed-n ones. Only for an unweighted design (no queue, or one without
inclusion probabilities).

The module reads no web stack: it takes the collection and the labels as plain data.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.analysis.ppi import Labelled, PPIEvaluation, SequenceEvaluation
    from ragmeter.core.data import Qrels, Run
    from ragmeter.evaluation.results import Evaluation
    from ragmeter.io.label_queue import LabelQueue
    from ragmeter.judges.learned import LearnedJudge
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
        learned_source: the learned judge's name (``None`` without ``--learned``).
        learned: its agreement with the human labels (``None`` when it cannot be given:
            ``learned_notes`` says why).
        learned_notes: what to bear in mind about it, one sentence each.
        sequences: the anytime-valid intervals after each label (``None`` when not made:
            ``sequence_notes`` says why).
        sequence_notes: what to bear in mind about them.
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
    learned_source: str | None = None
    learned: LabelAgreement | None = None
    learned_notes: tuple[str, ...] = ()
    sequences: SequenceEvaluation | None = None
    sequence_notes: tuple[str, ...] = ()

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
            "learned": self._learned_dict(),
            "sequence": {
                **(self.sequences.to_dict() if self.sequences is not None else {}),
                "notes": list(self.sequence_notes),
            },
        }

    def _learned_dict(self) -> dict[str, object] | None:
        if self.learned_source is None:
            return None
        a = self.learned
        return {
            "source": self.learned_source,
            "n": a.n if a is not None else 0,
            "kappa": _defined(a.kappa) if a is not None else None,
            "krippendorff_alpha": _defined(a.alpha) if a is not None else None,
            "notes": list(self.learned_notes),
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
    learned: LearnedGrader | None = None,
    arrival: Sequence[str] = (),
) -> CalibrationView:
    """The calibration page's figures for the human labels ``human`` (named
    ``human_source``) of the collection, the runs' ``measures`` at the error level
    ``alpha`` (by default that of ``ragmeter evaluate --ppi``); ``learned``: a learned
    judge to set against them; ``arrival``: the labelled queries in the order they were
    first labelled (:func:`arrival_order`), for the intervals as labels arrive."""
    from ragmeter.web.review import review

    human_grades = {k: g for k, g in human.items() if g >= 0}
    view = CalibrationView(
        human_source, coll.llm_source, len(human_grades), len({k[0] for k in human_grades})
    )
    if learned is not None:
        view = _with_learned(view, coll, human_grades, learned)
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
    return _estimated(view, coll, human_grades, llm, measures, alpha, arrival)


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
    arrival: Sequence[str] = (),
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
    view = replace(view, estimates=estimates, labels=labels, notes=(*view.notes, *notes))
    return _with_sequences(view, labelled, llm_evaluation, human_evaluation, arrival, alpha)


def _with_sequences(
    view: CalibrationView,
    labelled: Labelled,
    llm: Evaluation,
    human: Evaluation,
    arrival: Sequence[str],
    alpha: float,
) -> CalibrationView:
    """The anytime-valid intervals (module docstring) for an unweighted design."""
    from ragmeter.analysis.ppi import ppi_sequences

    if labelled.inclusion is not None:
        return replace(
            view,
            sequence_notes=(
                "no interval as labels arrive: the queue weights its queries by 1/π, and "
                "the confidence sequence takes an unweighted stream",
            ),
        )
    first = {q: i for i, q in enumerate(arrival)}
    # a query the clock does not know (none, in the app) goes last, in id order
    ordered = sorted(labelled.query_ids, key=lambda q: (first.get(q, len(first)), q))
    sequences = ppi_sequences(llm, human, ordered, alpha=alpha)
    note = (
        "the queries in the order they were first labelled; each one's value is its "
        "measure under its labels now (grading more of a query's passages changes it)"
    )
    return replace(view, sequences=sequences, sequence_notes=(note,))


def arrival_order(
    clock: Mapping[tuple[str, ItemKey], int],
    human: Mapping[ItemKey, int],
    annotator: str | None = None,
) -> list[str]:
    """The queries of the labels ``human`` in the order they were first labelled: by the
    earliest event (``clock``: :meth:`~ragmeter.web.labels.LabelDB.latest_times`) among the
    current labels of their graded pairs — ``annotator``'s only, when the labels are one
    annotator's."""
    first: dict[str, int] = {}
    for (who, key), t in clock.items():
        if key in human and human[key] >= 0 and (annotator is None or who == annotator):
            q = key[0]
            first[q] = min(t, first.get(q, t))
    return sorted(first, key=lambda q: (first[q], q))


class LearnedGrader:
    """A learned judge's grades of the app's pairs (:mod:`ragmeter.judges.learned`), each
    (query, passage) text pair embedded once while the server runs (the model is fixed)."""

    def __init__(self, judge: LearnedJudge, name: str) -> None:
        self.judge = judge
        self.name = name
        self._grades: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    @classmethod
    def load(cls, directory: str | Path) -> LearnedGrader:
        """The model directory read and checked now (an error before the server starts)."""
        from ragmeter.judges.learned import LearnedJudge

        return cls(LearnedJudge.from_directory(directory), f"learned:{Path(directory).name}")

    @property
    def scale(self) -> tuple[int, int]:
        return self.judge.scale

    def grades(self, texts: Sequence[tuple[str, str]]) -> list[int]:
        """The judge's grade of each (query text, passage text), as ``judge relevance
        --learned`` gives it (:func:`ragmeter.judges.learned.predict_grades`)."""
        from ragmeter.judges.learned import predict_grades

        with self._lock:  # one page computes the new pairs; the next finds them
            new = list(dict.fromkeys(t for t in texts if t not in self._grades))
            if new:
                found = predict_grades(self.judge.learned, new, encoder=self.judge.encoder)
                self._grades.update(zip(new, found, strict=True))
            return [self._grades[t] for t in texts]


def _with_learned(
    view: CalibrationView, coll: Collection, human: Mapping[ItemKey, int], grader: LearnedGrader
) -> CalibrationView:
    """The learned judge's agreement with the human labels (module docstring)."""
    from ragmeter.web.review import review

    view = replace(view, learned_source=grader.name)
    lo, hi = grader.scale
    if not (APP_SCALE[0] <= lo and hi <= APP_SCALE[1]):
        why = (
            f"the learned judge grades {lo}..{hi}, the app {APP_SCALE[0]}..{APP_SCALE[1]}: "
            "its κ against the people's grades would compare two scales (fit it on 1–5 labels)"
        )
        return replace(view, learned_notes=(why,))
    keys = [k for k in human if k[0] in coll.query_texts and k[1] in coll.doc_texts]
    notes = []
    if len(keys) < len(human):
        notes.append(
            f"{len(human) - len(keys)} graded pairs have no query or passage text (give "
            "--queries and --corpus): the learned judge cannot grade them"
        )
    if not keys:
        return replace(view, learned_notes=(*notes, "no graded pair it can grade yet"))
    texts = [(coll.query_texts[k[0]], coll.doc_texts[k[1]]) for k in keys]
    try:
        predicted = grader.grades(texts)
    except RagmeterError as exc:
        return replace(view, learned_notes=(*notes, f"no grades from the learned judge: {exc}"))
    grades = dict(zip(keys, predicted, strict=True))
    agreement = review(view.human_source, grader.name, {k: human[k] for k in keys}, grades)
    notes.append(
        "where the judge was fitted on some of these labels, its agreement on them is "
        "in-sample (too good): read it on labels made since, and 'judge learn's held-out "
        "figures"
    )
    if coll.queue is not None and _chosen_queue(coll.queue) is not None:
        notes.append(
            "the queue asks for the pairs the judge is least sure of: its agreement on them "
            "understates its agreement on pairs at large"
        )
    return replace(view, learned=agreement, learned_notes=tuple(notes))


def _chosen_queue(queue: LabelQueue) -> str | None:
    """The strategy of a queue that chose its pairs rather than drew them, or ``None``."""
    from ragmeter.io.label_queue import CHOSEN

    return next((e.strategy for e in queue.entries if e.strategy in CHOSEN), None)


def _design(coll: Collection, human: Qrels) -> tuple[Labelled, tuple[str, ...]]:
    """The labelled queries and their inclusion probabilities (the module docstring), with
    what the reader should know of the design."""
    from ragmeter.analysis.ppi import labelled_queries

    if coll.queue is not None and (chosen := _chosen_queue(coll.queue)) is not None:
        raise RagmeterError(
            f"the queue ({chosen}) lists the pairs a learned judge is least sure of: chosen, "
            "not drawn, so its labels are no sample and an estimate on them would be biased"
        )
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


__all__ = [
    "CalibrationView",
    "LearnedGrader",
    "arrival_order",
    "calibration_view",
    "evaluate_grades",
    "grade_qrels",
]
