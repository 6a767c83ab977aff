"""Prediction-powered estimates of every per-query measure: what the human labels would give,
from a few human-labelled queries and LLM labels everywhere.

The runs are evaluated twice by the one evaluation path (:func:`ragmeter.evaluate`): under
the LLM labels on every query (``Ŷ``), and under the *merged* labels on the labelled queries
(``Y``). The merged labels of a labelled query are the human label where the human labelled
the pair and the LLM label elsewhere: a query with human labels on only some of its pairs is
labelled, and its unlabelled pairs keep the judge's grade (a human who labels a query's top
passages leaves the rest to the judge, and its ``Y`` is the measure under that mix). The
estimate per measure is :func:`ragmeter.stats.ppi.ppi_mean`; a paired difference between two
runs is the same estimate on the per-query differences (as
:func:`ragmeter.stats.ppi.ppi_paired_difference`), its p-values corrected over the pairs by
:func:`ragmeter.stats.correction.adjust`. Sub-question ratings and nugget assignments are
merged as grades are (:func:`merge_judgments`, :func:`merge_assignments`).

A query where a measure is NA (undefined) under either labels is left out of that measure's
estimate, and counted (``n_na``): NA never enters a mean.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.stats.ppi import (
    DEFAULT_ESTIMATOR,
    Estimator,
    PPIError,
    PPIEstimate,
    clt_interval,
    estimator_name,
    ppi_mean,
)

if TYPE_CHECKING:
    from ragmeter.core.data import Qrels
    from ragmeter.core.judgments import Judgments
    from ragmeter.core.nuggets import NuggetAssignments
    from ragmeter.evaluation.results import Evaluation, RunResult
    from ragmeter.measures import Measure
    from ragmeter.stats.correction import Correction

#: the labels a family reads (its ``needs``) → what the human labels of that kind are called
LABEL_KINDS: dict[str, str] = {
    "qrels": "human qrels",
    "judgments": "human sub-question ratings",
    "nuggets": "human nugget assignments",
    "citations": "human citation support",
}


@dataclass(frozen=True)
class Labelled:
    """The human-labelled queries, and their inclusion probabilities ``π`` when they were
    drawn by a design (stratified or active sampling; ``None``: a uniform sample)."""

    query_ids: tuple[str, ...]
    inclusion: Mapping[str, float] | None = None
    #: the stratum of each labelled query of a stratified sample (``π = n_h/N_h``): the
    #: estimators with one λ (PPI, PPI++) then use the exact stratified variance
    strata: Mapping[str, int] | None = None

    def strata_of(
        self, query_ids: Sequence[str], estimator: Estimator | None, lam: float | None
    ) -> list[int] | None:
        """The strata of ``query_ids`` where the estimate can use them: not for cross-fit
        PPI++, whose λ varies within a stratum (it keeps the conservative ``var(Z)/M``)."""
        if self.strata is None or self.inclusion is None:
            return None
        if lam is None and (estimator or DEFAULT_ESTIMATOR) == "crossfit":
            return None
        return [self.strata[q] for q in query_ids]

    def weights(self, query_ids: Sequence[str]) -> np.ndarray | None:
        """``1/π`` of ``query_ids`` (``None`` for a uniform sample)."""
        if self.inclusion is None:
            return None
        return np.array([1.0 / self.inclusion[q] for q in query_ids], dtype=np.float64)


def labelled_queries(
    human: Qrels | Judgments | NuggetAssignments,
    listed: Sequence[str] | None = None,
    inclusion: Mapping[str, float] | None = None,
    strata: Mapping[str, int] | None = None,
) -> Labelled:
    """The labelled queries: those of ``listed`` (each must have human labels), else every
    query of the human labels (qrels, sub-question ratings or nugget assignments)."""
    from ragmeter.core.nuggets import NuggetAssignments

    if isinstance(human, NuggetAssignments):
        have = set(assignment_queries(human))
        name = human.source
    else:
        have = {str(q) for q in human.query_ids}
        name = human.name
    if listed is None:
        return Labelled(tuple(sorted(have)), inclusion, strata)
    unlabelled = [q for q in listed if q not in have]
    if unlabelled:
        raise PPIError(
            f"query {unlabelled[0]!r} is listed as labelled but has no human label in "
            f"{name} ({len(unlabelled)} such queries)"
        )
    return Labelled(tuple(listed), inclusion, strata)


def merge_qrels(llm: Qrels, human: Qrels, queries: Collection[str]) -> Qrels:
    """The merged labels of ``queries``: the human grade where the human labelled the pair,
    the LLM grade elsewhere (pairs only the human labelled are added). Other queries are
    left out: only the labelled queries are evaluated under these labels."""
    from ragmeter.core.data import Qrels

    wanted = set(queries)
    llm_rows = {q: g for q, g in llm.to_dict().items() if q in wanted}
    merged: dict[str, dict[str, int]] = {}
    for q, grades in human.to_dict().items():
        if q in wanted:
            merged[q] = {**llm_rows.get(q, {}), **grades}
    return Qrels.from_dict(merged, name=f"{human.name} over {llm.name}")


def method_name(
    lam: float | None, weighted: bool, estimator: Estimator | None = None, strata: bool = False
) -> str:
    """``cross-fit PPI++`` (the default), ``PPI++`` (power-tuned λ), ``PPI`` (λ = 1) or
    ``PPI, λ = x``; weighted when the labelled queries came with inclusion probabilities,
    with the exact stratified variance when they came with strata."""
    chosen: Estimator = "fixed" if lam is not None else estimator or DEFAULT_ESTIMATOR
    name = estimator_name(chosen, lam)
    if strata:
        return name + ", stratified (exact variance)"
    return name + (", inverse-probability weighted" if weighted else "")


def _stratified(labelled: Labelled, estimator: Estimator | None, lam: float | None) -> bool:
    """Whether the estimates use the exact stratified variance."""
    return labelled.strata_of(labelled.query_ids, estimator, lam) is not None


def judgments_rows(judgments: Judgments) -> dict[str, dict[str, list[int]]]:
    """``{qid: {doc_id: [rating per sub-question]}}`` of ``judgments``."""
    docs = judgments.doc_ids.to_pylist()
    ratings = judgments.ratings.tolist()
    bounds = judgments.rating_offsets.tolist()
    out: dict[str, dict[str, list[int]]] = {}
    for i, q in enumerate(judgments.query_ids):
        rows = range(int(judgments.offsets[i]), int(judgments.offsets[i + 1]))
        out[str(q)] = {docs[r]: ratings[bounds[r] : bounds[r + 1]] for r in rows}
    return out


def merge_judgments(llm: Judgments, human: Judgments, queries: Collection[str]) -> Judgments:
    """The sub-question ratings of the labelled ``queries`` merged as :func:`merge_qrels`
    merges grades: the human's ratings of a passage where the human rated it, the LLM's
    elsewhere; the other queries keep the LLM's ratings. A labelled query must have the same
    number of sub-questions in both."""
    from ragmeter.core.judgments import Judgments

    wanted = set(queries)
    merged = judgments_rows(llm)
    widths = {str(q): int(w) for q, w in zip(llm.query_ids, llm.widths, strict=True)}
    for q, rows in judgments_rows(human).items():
        if q not in wanted:
            continue
        for doc, ratings in rows.items():
            if q in widths and len(ratings) != widths[q]:
                raise PPIError(
                    f"{human.name}: query {q!r} has {len(ratings)} sub-questions, "
                    f"{widths[q]} in {llm.name}; the human and LLM ratings must be on the same "
                    "sub-questions"
                )
            merged.setdefault(q, {})[doc] = ratings
    questions = None
    if llm.questions is not None:
        texts = {str(q): t for q, t in zip(llm.query_ids, llm.questions, strict=True)}
        questions = {q: t for q, t in texts.items() if t is not None}
    return _judgments_from(merged, questions, f"{human.name} over {llm.name}", Judgments)


def merge_assignments(
    llm: NuggetAssignments, human: NuggetAssignments, queries: Collection[str]
) -> NuggetAssignments:
    """The nugget assignments of the labelled ``queries`` merged as :func:`merge_qrels`
    merges grades: the human's code of a (text, nugget) where the human assigned it, the
    LLM's elsewhere (to answers and to passages alike); other queries keep the LLM's."""
    from ragmeter.core.nuggets import NuggetAssignments

    wanted = set(queries)
    answers = {key: dict(codes) for key, codes in llm.answers.items()}
    passages = {key: dict(codes) for key, codes in llm.passages.items()}
    for key, codes in human.answers.items():
        if key[1] in wanted:
            answers.setdefault(key, {}).update(codes)
    for key, codes in human.passages.items():
        if key[0] in wanted:
            passages.setdefault(key, {}).update(codes)
    return NuggetAssignments(answers, passages, f"{human.source} over {llm.source}")


def assignment_queries(assignments: NuggetAssignments) -> list[str]:
    """The queries with at least one assignment (to an answer or a passage), sorted."""
    return sorted({q for _, q in assignments.answers} | {q for q, _ in assignments.passages})


def _judgments_from(
    rows: dict[str, dict[str, list[int]]],
    questions: Mapping[str, Sequence[str]] | None,
    name: str,
    cls: type[Judgments],
) -> Judgments:
    qids = [q for q, inner in rows.items() for _ in inner]
    docs = [d for inner in rows.values() for d in inner]
    ratings = [r for inner in rows.values() for r in inner.values()]
    return cls.from_rows(qids, docs, ratings, questions=questions or None, name=name)


@dataclass(frozen=True)
class MeasurePPI:
    """The estimate of one measure of one run, or why there is none (``reason``)."""

    measure: str
    estimate: PPIEstimate | None
    reason: str | None = None
    #: labelled (unlabelled) queries left out because the measure is NA there
    n_na: int = 0

    def to_dict(self) -> dict[str, Any]:
        if self.estimate is None:
            return {"estimate": None, "reason": self.reason}
        return {**self.estimate.to_dict(), "n_na": self.n_na}


@dataclass(frozen=True)
class RunPPI:
    """The estimates of one run, one per measure."""

    name: str
    measures: tuple[MeasurePPI, ...]

    def __getitem__(self, measure: str) -> MeasurePPI:
        for m in self.measures:
            if m.measure == measure:
                return m
        raise KeyError(
            f"measure '{measure}' has no estimate; have {[m.measure for m in self.measures]}"
        )


@dataclass(frozen=True)
class PPIEvaluation:
    """Prediction-powered estimates of every run and measure, with how they were made.

    ``labels`` says which labels the numbers rest on (the LLM labels, and the human ones).
    """

    runs: tuple[RunPPI, ...]
    labelled: Labelled
    alpha: float
    lam: float | None
    labels: str
    warnings: tuple[str, ...] = field(default=())
    estimator: Estimator | None = None

    def __getitem__(self, run: str) -> RunPPI:
        from ragmeter.evaluation.results import named

        return named(self.runs, run)

    @property
    def method(self) -> str:
        """The method's name, as :func:`method_name`."""
        return method_name(
            self.lam,
            self.labelled.inclusion is not None,
            self.estimator,
            _stratified(self.labelled, self.estimator, self.lam),
        )

    def to_dict(self) -> dict[str, Any]:
        """``{run: {measure: ppi object}}`` with the method and labels."""
        return {
            "method": self.method,
            "alpha": self.alpha,
            "labels": self.labels,
            "labelled_queries": len(self.labelled.query_ids),
            "runs": {r.name: {m.measure: m.to_dict() for m in r.measures} for r in self.runs},
            "warnings": list(self.warnings),
        }


def ppi_evaluation(
    llm: Evaluation,
    human: Evaluation,
    labelled: Labelled,
    *,
    alpha: float = 0.1,
    lam: float | None = None,
    human_kinds: Collection[str] = ("qrels",),
    labels: str = "LLM labels, corrected by human labels",
    estimator: Estimator | None = None,
) -> PPIEvaluation:
    """The PPI estimate of every measure of every run of ``llm`` (evaluated under the LLM
    labels on every query), with ``human`` the same runs evaluated under the merged labels
    on the labelled queries; ``human_kinds``: the kinds of labels the human gave (a measure
    reading another kind gets no estimate, and says why); ``estimator`` chooses λ
    (:func:`ragmeter.stats.ppi.ppi_mean`)."""
    runs = []
    warnings = list(llm.warnings)
    for run in llm.runs:
        human_run = human[run.name]
        shared = [q for q in labelled.query_ids if q in _positions(run)]
        if not shared:
            raise PPIError(f"the human labels share no query with run {run.name!r}")
        if len(shared) < len(labelled.query_ids):
            warnings.append(
                f"{len(labelled.query_ids) - len(shared)} of the {len(labelled.query_ids)} "
                f"labelled queries are not evaluated for run {run.name!r}: left out"
            )
        runs.append(
            RunPPI(
                run.name,
                tuple(
                    _measure_ppi(
                        run, human_run, m, shared, labelled, (alpha, lam, estimator), human_kinds
                    )
                    for m in run.measures
                ),
            )
        )
    return PPIEvaluation(tuple(runs), labelled, alpha, lam, labels, tuple(warnings), estimator)


def _positions(run: RunResult) -> dict[str, int]:
    return {str(q): i for i, q in enumerate(run.query_ids)}


def _why_not(measure: Measure, human_kinds: Collection[str]) -> str | None:
    if measure.spec.aggregate != "mean":
        return f"aggregated as a {measure.spec.aggregate}, not a mean"
    kinds = [k for k in LABEL_KINDS if k in measure.needs]
    if not kinds:
        return "reads no labels"
    missing = [LABEL_KINDS[k] for k in kinds if k not in human_kinds]
    if missing:
        return f"needs {' and '.join(missing)}"
    return None


@dataclass(frozen=True)
class _Columns:
    """One measure's values: ``y``/``yhat`` on the labelled queries, ``yhat_u`` elsewhere."""

    y: np.ndarray
    yhat: np.ndarray
    yhat_u: np.ndarray
    labelled: list[str]
    n_na: int


def _columns(
    llm_ids: Iterable[Any],
    llm_values: np.ndarray,
    human_ids: Iterable[Any],
    human_values: np.ndarray,
    shared: Sequence[str],
) -> _Columns:
    at = {str(q): i for i, q in enumerate(llm_ids)}
    human_at = {str(q): i for i, q in enumerate(human_ids)}
    y = np.array([human_values[human_at[q]] if q in human_at else np.nan for q in shared])
    yhat = np.array([llm_values[at[q]] for q in shared])
    rest = np.ones(len(llm_values), dtype=bool)
    rest[[at[q] for q in shared]] = False
    yhat_u = llm_values[rest]
    keep = ~(np.isnan(y) | np.isnan(yhat))
    n_na = int((~keep).sum() + np.isnan(yhat_u).sum())
    return _Columns(
        y[keep],
        yhat[keep],
        yhat_u[~np.isnan(yhat_u)],
        [q for q, k in zip(shared, keep, strict=True) if k],
        n_na,
    )


def _estimate(
    cols: _Columns, labelled: Labelled, options: tuple[float, float | None, Estimator | None]
) -> PPIEstimate:
    """The prediction-powered mean of ``cols`` (a measure, or a paired difference) with the
    labelled queries' weights and strata; ``options`` are (alpha, λ, estimator)."""
    alpha, lam, estimator = options
    return ppi_mean(
        cols.y,
        cols.yhat,
        cols.yhat_u,
        alpha=alpha,
        lam=lam,
        weights=labelled.weights(cols.labelled),
        estimator=estimator,
        strata=labelled.strata_of(cols.labelled, estimator, lam),
    )


def _measure_ppi(
    run: RunResult,
    human_run: RunResult,
    measure: Measure,
    shared: Sequence[str],
    labelled: Labelled,
    options: tuple[float, float | None, Estimator | None],
    human_kinds: Collection[str],
) -> MeasurePPI:
    why = _why_not(measure, human_kinds)
    if why is not None:
        return MeasurePPI(str(measure), None, why)
    cols = _columns(
        run.query_ids, run.column(measure), human_run.query_ids, human_run.column(measure), shared
    )
    if cols.y.shape[0] == 0:
        return MeasurePPI(str(measure), None, "NA on every labelled query", cols.n_na)
    estimate = _estimate(cols, labelled, options)
    return MeasurePPI(
        str(measure), _with_llm_aggregate(estimate, run, measure, options[0]), None, cols.n_na
    )


def _with_llm_aggregate(
    estimate: PPIEstimate, run: RunResult, measure: Measure, alpha: float
) -> PPIEstimate:
    """The LLM-only mean is the evaluation's own aggregate (one name, one number), over every
    query where the measure is defined."""
    values = run.column(measure)
    values = values[~np.isnan(values)]
    _, interval = clt_interval(values, alpha)
    mean = run.aggregate(measure).mean
    if mean is None or interval is None:
        return estimate
    half = (interval[1] - interval[0]) / 2.0
    return replace(estimate, llm_mean=mean, llm_ci=(mean - half, mean + half))


# -- paired differences --------------------------------------------------------------------


@dataclass(frozen=True)
class PPIDifference:
    """The PPI estimate of ``run − baseline`` on one measure, with its corrected p-value."""

    run: str
    baseline: str
    measure: str
    estimate: PPIEstimate | None
    pvalue_adjusted: float | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"run": self.run, "baseline": self.baseline, "measure": self.measure}
        if self.estimate is None:
            return out | {"estimate": None, "reason": self.reason}
        return out | {
            **self.estimate.to_dict(),
            "pvalue": self.estimate.pvalue,
            "pvalue_adjusted": self.pvalue_adjusted,
        }


@dataclass(frozen=True)
class PPIComparison:
    """Paired differences of runs, estimated by PPI, p-values corrected over the pairs of
    each measure."""

    differences: tuple[PPIDifference, ...]
    correction: str
    alpha: float
    lam: float | None
    labels: str
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "alpha": self.alpha,
            "correction": self.correction,
            "labels": self.labels,
            "differences": [d.to_dict() for d in self.differences],
        }


def ppi_comparison(
    llm: Evaluation,
    human: Evaluation,
    labelled: Labelled,
    pairs: Sequence[tuple[str, str]],
    *,
    alpha: float = 0.1,
    lam: float | None = None,
    correction: Correction = "holm",
    human_kinds: Collection[str] = ("qrels",),
    labels: str = "LLM labels, corrected by human labels",
    estimator: Estimator | None = None,
) -> PPIComparison:
    """PPI estimates of the paired differences ``run − baseline`` for each ``(run,
    baseline)`` of ``pairs`` and each measure; the p-values of a measure's pairs corrected
    together by ``correction``."""
    from ragmeter.stats.correction import adjust

    out: list[PPIDifference] = []
    for measure in llm.measures:
        row = [
            _difference(llm, human, labelled, a, b, measure, (alpha, lam, estimator), human_kinds)
            for a, b in pairs
        ]
        pvalues = [
            d.estimate.pvalue if d.estimate and d.estimate.pvalue is not None else np.nan
            for d in row
        ]
        adjusted = adjust(pvalues, correction)
        out.extend(
            replace(d, pvalue_adjusted=None if np.isnan(p) else float(p))
            for d, p in zip(row, adjusted, strict=True)
        )
    strata = _stratified(labelled, estimator, lam)
    method = method_name(lam, labelled.inclusion is not None, estimator, strata)
    return PPIComparison(tuple(out), correction, alpha, lam, labels, method)


def _difference(
    llm: Evaluation,
    human: Evaluation,
    labelled: Labelled,
    run: str,
    baseline: str,
    measure: Measure,
    options: tuple[float, float | None, Estimator | None],
    human_kinds: Collection[str],
) -> PPIDifference:
    why = _why_not(measure, human_kinds)
    if why is not None:
        return PPIDifference(run, baseline, str(measure), None, reason=why)
    a, b = llm[run], llm[baseline]
    if list(a.query_ids) != list(b.query_ids):
        return PPIDifference(
            run, baseline, str(measure), None, reason="the runs differ in their queries"
        )
    at = _positions(a)
    shared = [q for q in labelled.query_ids if q in at]
    if not shared:
        raise PPIError(f"the human labels share no query with run {run!r}")
    human_a, human_b = human[run], human[baseline]
    if list(human_a.query_ids) != list(human_b.query_ids):
        return PPIDifference(
            run, baseline, str(measure), None, reason="the runs differ in their queries"
        )
    cols = _columns(
        a.query_ids,
        a.column(measure) - b.column(measure),
        human_a.query_ids,
        human_a.column(measure) - human_b.column(measure),
        shared,
    )
    if not cols.labelled:
        return PPIDifference(run, baseline, str(measure), None, reason="NA on every labelled query")
    estimate = _estimate(cols, labelled, options)
    return PPIDifference(run, baseline, str(measure), estimate)


# -- labels arriving one by one ------------------------------------------------------------


@dataclass(frozen=True)
class MeasureSequence:
    """One measure's anytime-valid intervals after the ``n`` labelled queries so far, in the
    order they arrived: the PPI confidence sequence
    (:func:`ragmeter.stats.ppi.ppi_confidence_sequence`) and, beside it, the human labels'
    own (:func:`ragmeter.stats.ppi.human_confidence_sequence`). ``ci``/``human_ci`` are
    ``None`` while infinite (fewer than ``burn_in`` labelled queries); ``reason`` says why
    there is no sequence at all."""

    measure: str
    n: int = 0
    estimate: float | None = None
    ci: tuple[float, float] | None = None
    human_mean: float | None = None
    human_ci: tuple[float, float] | None = None
    correlation: float | None = None
    burn_in: int = 0
    reason: str | None = None
    #: labelled queries left out because the measure is NA there
    n_na: int = 0

    @property
    def weak_judge(self) -> str | None:
        """The finite-sample note of every PPI view (:func:`ragmeter.stats.ppi.
        weak_judge_note`): the judge's correlation with people below 1/√(n − 2)."""
        from ragmeter.stats.ppi import weak_judge_note

        return None if self.reason is not None else weak_judge_note(self.n, self.correlation)

    @property
    def pending(self) -> str | None:
        """Why the intervals are still infinite, or ``None``."""
        if self.reason is not None or self.n >= self.burn_in:
            return None
        return f"anytime-valid from {self.burn_in} labelled queries; {self.n} so far"

    def to_dict(self) -> dict[str, Any]:
        if self.reason is not None:
            return {"n": self.n, "reason": self.reason}
        return {
            "n": self.n,
            "estimate": self.estimate,
            "ci": None if self.ci is None else list(self.ci),
            "human_mean": self.human_mean,
            "human_ci": None if self.human_ci is None else list(self.human_ci),
            "judge_correlation": self.correlation,
            "weak_judge": self.weak_judge,
            "pending": self.pending,
            "n_na": self.n_na,
        }


@dataclass(frozen=True)
class SequenceEvaluation:
    """Every run's :class:`MeasureSequence` per measure (``{run: (sequences…)}``)."""

    runs: Mapping[str, tuple[MeasureSequence, ...]]
    alpha: float
    burn_in: int
    optimised_at: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "burn_in": self.burn_in,
            "optimised_at": self.optimised_at,
            "runs": {r: {m.measure: m.to_dict() for m in ms} for r, ms in self.runs.items()},
        }


def ppi_sequences(
    llm: Evaluation,
    human: Evaluation,
    arrived: Sequence[str],
    *,
    alpha: float = 0.1,
    human_kinds: Collection[str] = ("qrels",),
) -> SequenceEvaluation:
    """The anytime-valid intervals of every measure of every run after the labelled queries
    ``arrived`` (in the order they were labelled): ``llm`` and ``human`` as for
    :func:`ppi_evaluation` (the runs under the LLM labels on every query, and under the
    merged labels on the labelled ones). The labels are taken as a uniform stream (no
    weights); a query where the measure is NA is left out, and counted."""
    from ragmeter.stats.ppi import CS_BURN_IN, CS_OPTIMISED_AT

    runs: dict[str, tuple[MeasureSequence, ...]] = {}
    for run in llm.runs:
        human_run = human[run.name]
        shared = [q for q in arrived if q in _positions(run)]
        runs[run.name] = tuple(
            _measure_sequence(run, human_run, m, shared, alpha, human_kinds) for m in run.measures
        )
    return SequenceEvaluation(runs, alpha, CS_BURN_IN, CS_OPTIMISED_AT)


def _measure_sequence(
    run: RunResult,
    human_run: RunResult,
    measure: Measure,
    shared: Sequence[str],
    alpha: float,
    human_kinds: Collection[str],
) -> MeasureSequence:
    from ragmeter.stats.ppi import (
        CS_BURN_IN,
        correlation,
        human_confidence_sequence,
        ppi_confidence_sequence,
    )

    why = _why_not(measure, human_kinds)
    if why is None and not shared:
        why = f"the human labels share no query with run {run.name!r}"
    if why is not None:
        return MeasureSequence(str(measure), reason=why)
    cols = _columns(
        run.query_ids, run.column(measure), human_run.query_ids, human_run.column(measure), shared
    )
    n = int(cols.y.shape[0])
    if n == 0:
        return MeasureSequence(str(measure), reason="NA on every labelled query", n_na=cols.n_na)
    try:
        cs = ppi_confidence_sequence(cols.y, cols.yhat, cols.yhat_u, alpha=alpha)
        own = human_confidence_sequence(cols.y, alpha=alpha)
    except PPIError as exc:
        return MeasureSequence(str(measure), n, reason=str(exc), n_na=cols.n_na)
    return MeasureSequence(
        str(measure),
        n,
        float(cs.estimate[-1]),
        _finite(cs.lower[-1], cs.upper[-1]),
        float(own.estimate[-1]),
        _finite(own.lower[-1], own.upper[-1]),
        correlation(cols.y, cols.yhat),
        CS_BURN_IN,
        n_na=cols.n_na,
    )


def _finite(low: float, high: float) -> tuple[float, float] | None:
    return (float(low), float(high)) if np.isfinite(low) and np.isfinite(high) else None
