"""What a report shows, computed from one evaluation: the model :mod:`ragmeter.report.html`
renders.

Every number of the model comes from the evaluation it is built from, or from the same runs
evaluated again with the same inputs (the K-sweep): the report only lays them out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack

from ragmeter.analysis.diagnosis import Diagnosis, diagnose
from ragmeter.analysis.queries import (
    SubquestionCoverage,
    WorstQuery,
    subquestion_coverage,
    worst_queries,
)
from ragmeter.errors import RagmeterError
from ragmeter.evaluation import Evaluation, RunResult, Sweep, sweep_evaluation, sweepable

if TYPE_CHECKING:
    from ragmeter.analysis.leaderboard import LeaderboardAgreement
    from ragmeter.analysis.ppi import PPIEvaluation
    from ragmeter.core.data import Qrels, Run
    from ragmeter.core.judgments import Judgments
    from ragmeter.stats.allpairs import AllPairs
    from ragmeter.stats.comparison import Comparison


def set_measures_apply(qrels: Qrels | None, grade_map: str | None) -> bool:
    """Whether the set-based measures make sense: a grade map is given, or the judged grades
    already lie on the 1..5 utility scale and reach 4 (with only 0..3 or binary grades,
    RA-nWG would weigh nothing)."""
    if grade_map:
        return True
    if qrels is None or not len(qrels):
        return False
    grades = qrels.grades[qrels.grades >= 0]
    return bool(grades.size and grades.min() >= 1 and grades.max() <= 5 and grades.max() >= 4)


def summary_sweep(
    evaluation: Evaluation, names: Sequence[str], ks: Sequence[int] | str
) -> Sweep | None:
    """The K-sweep of the summary's own measures: each one written with ``@K`` (parameters
    kept: ``ndcg@10(rel_level=3)`` sweeps ``ndcg(rel_level=3)``), evaluated with the runs and
    inputs of ``evaluation`` (:func:`ragmeter.evaluation.sweep_evaluation`), so each curve
    passes through the summary's value at its K. ``None`` when no summary measure has a
    cutoff or a run's inputs are not at hand (results loaded from a store)."""
    chosen = [r for r in evaluation.runs if r.name in names]
    measures = sweepable(m for m in evaluation.measures if m.k is not None)
    if not chosen or not measures or any(r.source is None and r.run_file is None for r in chosen):
        return None
    part = Evaluation(tuple(chosen), evaluation.measures, evaluation.warnings)
    return sweep_evaluation(part, ks, measures)


def coverage_context(
    evaluation: Evaluation, given: int | Literal["oracle"] | None
) -> int | Literal["oracle"] | None:
    """The context of the sub-question table: the summary's coverage measure's (``@K``, or
    the oracle ``|P*|`` without one), else ``given``."""
    for m in evaluation.measures:
        if m.family == "coverage":
            return "oracle" if m.k is None else int(m.k)
    return given


def primary_measure(evaluation: Evaluation, k: int) -> str:
    """The measure the worst queries are ranked by: ``ra_nwg@K`` when evaluated, else the
    first one."""
    names = [str(m) for m in evaluation.measures]
    preferred = f"ra_nwg@{k}"
    return preferred if preferred in names else names[0]


@dataclass(frozen=True)
class WorstOfRun:
    """One run's worst queries on ``measure``, with their diagnosis categories (if any)."""

    run: str
    queries: tuple[WorstQuery, ...]
    categories: Mapping[str, str] | None = None


@dataclass(frozen=True)
class ReportModel:
    """Everything a report shows; ``None`` (or empty) where its inputs were not given."""

    evaluation: Evaluation
    comparison: Comparison | None = None
    sweep: Sweep | None = None
    diagnoses: tuple[Diagnosis, ...] = ()
    coverage: SubquestionCoverage | None = None
    worst: tuple[WorstOfRun, ...] = ()
    worst_measure: str | None = None
    worst_count: int = 0
    k: int = 10
    rel_level: int = 1
    top_grade: int = 1
    bootstrap: int = 10_000
    seed: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: every run against every other (three runs or more), with the comparison's test
    all_pairs: AllPairs | None = None


@dataclass(frozen=True)
class ReportOptions:
    """What a report is drawn from besides the evaluation, and how: one value, built once
    and handed whole from :func:`ragmeter.report.html.write_html_report` to
    :func:`build_report` (see ``write_html_report`` for each field). ``title``, ``inputs``,
    ``labels_against`` and ``ppi`` are the page's own: the model does not read them."""

    runs: Sequence[Run] | None = None
    qrels: Qrels | None = None
    judgments: Judgments | None = None
    comparison: Comparison | None = None
    sweep: Sweep | None = None
    diagnoses: Sequence[Diagnosis] | None = None
    baseline: str | int | None = None
    grade_map: str | None = None
    k: int = 10
    sweep_ks: Sequence[int] | str = "1:20"
    pool: Run | None = None
    pool_depth: int | None = None
    pools: Mapping[str, Run | tuple[Run, int | None]] | None = None
    rel_level: int = 1
    context_k: int | Literal["oracle"] | None = "oracle"
    tau: int = 3
    worst: int = 10
    seed: int = 0
    bootstrap: int = 10_000
    permutations: int = 10_000
    title: str = "ragmeter report"
    inputs: Sequence[tuple[str, str]] = ()
    labels_against: tuple[LeaderboardAgreement, str, str] | None = None
    ppi: PPIEvaluation | None = None

    def pool_of(self, name: str) -> dict[str, Any]:
        """The PROC pool of one run: its entry in ``pools``, else ``pool``."""
        chosen = (self.pools or {}).get(name)
        if chosen is None:
            return {"pool": self.pool, "pool_depth": self.pool_depth}
        if isinstance(chosen, tuple):
            return {"pool": chosen[0], "pool_depth": chosen[1]}
        return {"pool": chosen, "pool_depth": self.pool_depth}


class ReportKeywords(TypedDict, total=False):
    """The fields of :class:`ReportOptions` as keywords of the report's functions (a test
    holds the two lists equal)."""

    runs: Sequence[Run] | None
    qrels: Qrels | None
    judgments: Judgments | None
    comparison: Comparison | None
    sweep: Sweep | None
    diagnoses: Sequence[Diagnosis] | None
    baseline: str | int | None
    grade_map: str | None
    k: int
    sweep_ks: Sequence[int] | str
    pool: Run | None
    pool_depth: int | None
    pools: Mapping[str, Run | tuple[Run, int | None]] | None
    rel_level: int
    context_k: int | Literal["oracle"] | None
    tau: int
    worst: int
    seed: int
    bootstrap: int
    permutations: int
    title: str
    inputs: Sequence[tuple[str, str]]
    labels_against: tuple[LeaderboardAgreement, str, str] | None
    ppi: PPIEvaluation | None


def report_options(
    options: ReportOptions | None, keywords: ReportKeywords, caller: str = "build_report"
) -> ReportOptions:
    """``options`` (the defaults when ``None``) with ``keywords`` in place of its fields; an
    unknown keyword is refused as Python refuses it, naming ``caller``."""
    unknown = sorted(set(keywords) - set(ReportKeywords.__annotations__))
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}")
    return replace(options or ReportOptions(), **keywords)


def build_report(
    evaluation: Evaluation,
    options: ReportOptions | None = None,
    **keywords: Unpack[ReportKeywords],
) -> ReportModel:
    """The report's model (see :func:`ragmeter.report.html.write_html_report` for the
    options): the comparison of the evaluation, the K-sweep of its measures
    (:func:`summary_sweep`), the PROC diagnoses, the sub-question coverage and the worst
    queries. Given ``comparison``, ``sweep`` or ``diagnoses`` are used as they are."""
    o = report_options(options, keywords)
    runs, qrels, judgments, comparison = o.runs, o.qrels, o.judgments, o.comparison
    sweep, diagnoses, k, worst = o.sweep, o.diagnoses, o.k, o.worst
    if not evaluation.runs:
        raise RagmeterError("nothing to report: the evaluation has no run")
    by_name = {r.name: r for r in runs} if runs is not None else {}
    paired = [(res, by_name[res.name]) for res in evaluation.runs if res.name in by_name]
    if comparison is None and len(evaluation.runs) > 1:
        from ragmeter.stats.comparison import compare

        comparison = compare(
            evaluation,
            baseline=o.baseline,
            seed=o.seed,
            bootstrap=o.bootstrap,
            permutations=o.permutations,
        )
    table = _all_pairs(evaluation, comparison)
    if sweep is None and paired:
        sweep = summary_sweep(evaluation, [res.name for res, _ in paired], o.sweep_ks)
    if (
        diagnoses is None
        and paired
        and qrels is not None
        and set_measures_apply(qrels, o.grade_map)
    ):
        diagnoses = [
            diagnose(run, qrels, k=k, grade_map=o.grade_map, worst=0, **o.pool_of(run.name))
            for _, run in paired
        ]
    coverage = None
    if judgments is not None and paired:
        coverage = subquestion_coverage(
            [run for _, run in paired],
            judgments,
            context_k=coverage_context(evaluation, o.context_k),
            tau=o.tau,
        )
    truth = qrels if qrels is not None or judgments is None else judgments.graded_qrels(o.tau)
    worst_lists: list[WorstOfRun] = []
    measure = None
    if truth is not None and paired and worst > 0:
        measure = primary_measure(evaluation, k)
        worst_lists = _worst(paired, truth, measure, k, worst, o.rel_level, diagnoses)
    top = int(truth.grades.max()) if truth is not None and len(truth) else 1
    return ReportModel(
        evaluation=evaluation,
        comparison=comparison,
        sweep=sweep,
        diagnoses=tuple(diagnoses or ()),
        coverage=coverage,
        worst=tuple(worst_lists),
        worst_measure=measure,
        worst_count=worst,
        k=k,
        rel_level=o.rel_level,
        top_grade=top,
        bootstrap=o.bootstrap,
        seed=o.seed,
        all_pairs=table,
    )


def _all_pairs(evaluation: Evaluation, comparison: Comparison | None) -> AllPairs | None:
    """Every pair of three runs or more, with the comparison's test, correction and seed."""
    if comparison is None or len(comparison.runs) < 3:
        return None
    from ragmeter.stats.allpairs import all_pairs

    return all_pairs(
        evaluation,
        measures=list(comparison.measures),
        test=comparison.test,
        correction=comparison.correction,
        alpha=comparison.alpha,
        permutations=comparison.permutations,
        seed=comparison.seed,
    )


def _worst(
    paired: Sequence[tuple[RunResult, Run]],
    qrels: Qrels,
    measure: str,
    k: int,
    worst: int,
    rel_level: int,
    diagnoses: Sequence[Diagnosis] | None,
) -> list[WorstOfRun]:
    categories: dict[str, dict[str, str]] = {}
    for d in diagnoses or ():
        categories[d.run] = {q.query_id: q.category for q in d.queries}
    out = []
    for result, run in paired:
        listed = worst_queries(
            result, run, qrels, measure=measure, k=k, worst=worst, rel_level=rel_level
        )
        out.append(WorstOfRun(result.name, tuple(listed), categories.get(result.name)))
    return out
