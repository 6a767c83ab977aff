"""Leaderboard agreement: do the runs rank alike under two label sets (e.g. human and LLM)?

:func:`leaderboard_agreement` takes the two evaluations of the same runs — one per label set,
both made by :func:`ragmeter.evaluate`, so each score is the number ``ragmeter evaluate``
prints for that run on those labels — and reports per measure the two rankings, Kendall's τ-b
and Spearman's ρ (:mod:`ragmeter.stats.correlation`), τ_AP with label set a as the truth
(τ_AP-b when a score list holds a tie; :mod:`ragmeter.stats.rank_agreement`), the overlap of
the top 1, 3 and 5 runs, the largest rank change, and percentile bootstrap intervals.

The bootstrap resamples queries: replicate r draws n queries with replacement from the union
of the queries either evaluation covers (the same draws for both label sets and every run),
and a run's replicate score under a label set is its measure's aggregate over the drawn
queries that label set evaluated and where the value is defined, each counted as often as it
was drawn (mean: Σ c_q v_q / Σ c_q; sum: Σ c_q v_q; geometric mean: exp(Σ c_q log max(v_q,
10⁻⁵) / Σ c_q)). A replicate where a coefficient is undefined (a constant score list) is
left out of that interval and counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ragmeter.errors import RagmeterError
from ragmeter.stats.correlation import Correlation, kendall_tau_b, spearman_rho
from ragmeter.stats.rank_agreement import (
    RankChange,
    TauAP,
    kendall_tau_b_rows,
    rank_changes,
    ranking,
    spearman_rho_rows,
    tau_ap_or_b,
    top_k_overlap,
)

if TYPE_CHECKING:
    from ragmeter.evaluation.results import Evaluation, RunResult
    from ragmeter.measures import Measure

TOP_KS = (1, 3, 5)
COEFFICIENTS = ("kendall_tau", "spearman", "tau_ap")


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval of one coefficient; ``undefined`` replicates left out."""

    low: float
    high: float
    undefined: int = 0

    def to_list(self) -> list[float | None]:
        return [_clean(self.low), _clean(self.high)]


@dataclass(frozen=True)
class MeasureAgreement:
    """How the runs rank under label sets a and b on one measure."""

    measure: str
    scores_a: dict[str, float]
    scores_b: dict[str, float]
    ranking_a: list[str]
    ranking_b: list[str]
    kendall_tau: Correlation
    spearman: Correlation
    tau_ap: TauAP
    top_overlap: dict[int, float]
    changes: list[RankChange]
    ci: dict[str, Interval]

    @property
    def largest_change(self) -> RankChange:
        return self.changes[0]

    def to_dict(self, *, level: float, resamples: int, seed: int) -> dict[str, Any]:
        big = self.largest_change
        return {
            "measure": self.measure,
            "n_runs": len(self.ranking_a),
            "kendall_tau": _clean(self.kendall_tau.statistic),
            "kendall_p": _clean(self.kendall_tau.pvalue),
            "spearman": _clean(self.spearman.statistic),
            "spearman_p": _clean(self.spearman.pvalue),
            "tau_ap": _clean(self.tau_ap.value),
            "tau_ap_variant": self.tau_ap.variant,
            "ci": {
                "level": level,
                "resamples": resamples,
                "seed": seed,
                **{name: self.ci[name].to_list() for name in COEFFICIENTS},
                "undefined": {name: self.ci[name].undefined for name in COEFFICIENTS},
            },
            "top_overlap": {str(k): v for k, v in self.top_overlap.items()},
            "largest_rank_change": {
                "run": big.name,
                "rank_a": big.rank_a,
                "rank_b": big.rank_b,
                "shift": big.shift,
            },
            "ranking_a": self.ranking_a,
            "ranking_b": self.ranking_b,
            "scores_a": self.scores_a,
            "scores_b": self.scores_b,
        }


@dataclass(frozen=True)
class QueryCoverage:
    """Which queries each label set evaluated, and the queries each run does not rank."""

    only_a: int
    only_b: int
    both: int
    #: run name → (queries of a it does not rank, queries of b it does not rank)
    unranked: dict[str, tuple[int, int]] = field(default_factory=dict)

    def notes(self, a_name: str, b_name: str) -> list[str]:
        """What a reader must know: nothing is dropped silently."""
        out = []
        if self.only_a or self.only_b:
            out.append(
                f"{self.only_a} queries are judged only in {a_name} and {self.only_b} only in "
                f"{b_name} ({self.both} in both): each leaderboard averages over its own "
                "queries; the bootstrap draws from all of them"
            )
        for run, (in_a, in_b) in self.unranked.items():
            if in_a or in_b:
                out.append(
                    f"run {run} ranks nothing for {in_a} queries of {a_name} and {in_b} of "
                    f"{b_name} (scored as empty rankings)"
                )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "only_a": self.only_a,
            "only_b": self.only_b,
            "both": self.both,
            "unranked": {run: {"a": a, "b": b} for run, (a, b) in self.unranked.items()},
        }


@dataclass(frozen=True)
class LeaderboardAgreement:
    """Per measure, the agreement of the two leaderboards; the query coverage; the settings."""

    measures: list[MeasureAgreement]
    coverage: QueryCoverage
    level: float
    resamples: int
    seed: int
    warnings: tuple[str, ...] = ()

    def to_list(self) -> list[dict[str, Any]]:
        """The JSON of ``ragmeter agreement``'s ``"leaderboard"`` key."""
        return [
            m.to_dict(level=self.level, resamples=self.resamples, seed=self.seed)
            for m in self.measures
        ]


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else value


def leaderboard_agreement(
    eval_a: Evaluation,
    eval_b: Evaluation,
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    measures: Sequence[Measure] | None = None,
) -> LeaderboardAgreement:
    """The agreement of the leaderboards of ``eval_a`` (the reference) and ``eval_b``: the
    same runs evaluated on the same measures under two label sets (see the module
    docstring), on ``measures`` (default: all of ``eval_a``'s). Raises
    :class:`RagmeterError` for fewer than two runs, runs that differ between the two, or a
    run without any defined value of a measure."""
    names = [r.name for r in eval_a.runs]
    if len(names) < 2:
        raise RagmeterError("leaderboard agreement needs at least two runs (--runs R1 R2 …)")
    if sorted(names) != sorted(r.name for r in eval_b.runs):
        raise RagmeterError("the two evaluations hold different runs")
    if resamples < 1:
        raise RagmeterError(f"--resamples must be ≥ 1, got {resamples}")
    if not 0.0 < level < 1.0:
        raise RagmeterError(f"the interval level must be in (0, 1), got {level}")
    queries = _union_queries(eval_a, eval_b)
    counts = _draw_counts(len(queries), resamples, seed)
    per_measure = [
        _measure_agreement(m, eval_a, eval_b, queries, counts, level)
        for m in (eval_a.measures if measures is None else measures)
    ]
    coverage = _coverage(eval_a, eval_b)
    return LeaderboardAgreement(per_measure, coverage, level, resamples, seed)


def rankable(eval_a: Evaluation, eval_b: Evaluation) -> list[Measure]:
    """The measures every run has a defined value of under both label sets."""
    return [
        m
        for m in eval_a.measures
        if all(r.aggregate(m).value is not None for ev in (eval_a, eval_b) for r in ev.runs)
    ]


def _union_queries(eval_a: Evaluation, eval_b: Evaluation) -> list[str]:
    seen: dict[str, None] = {}
    for ev in (eval_a, eval_b):
        for run in ev.runs:
            seen.update(dict.fromkeys(str(q) for q in run.query_ids))
    return list(seen)


def _draw_counts(n: int, resamples: int, seed: int) -> npt.NDArray[np.float64]:
    """resamples × n: how often each query was drawn in each replicate."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(resamples, n))
    offsets = (np.arange(resamples) * n)[:, None]
    flat = np.bincount((draws + offsets).ravel(), minlength=resamples * n)
    return flat.reshape(resamples, n).astype(np.float64)


def _score(run: RunResult, measure: Measure, label_set: str) -> float:
    value = run.aggregate(measure).value
    if value is None:
        raise RagmeterError(
            f"run {run.name} has no defined value of {measure} under {label_set}: "
            "it cannot be ranked"
        )
    return value


def _aligned(run: RunResult, measure: Measure, queries: Sequence[str]) -> npt.NDArray[np.float64]:
    """The run's per-query values in the order of ``queries`` (NaN: not evaluated / NA)."""
    index = {str(q): i for i, q in enumerate(run.query_ids)}
    column = run.column(measure)
    out = np.full(len(queries), np.nan)
    for j, q in enumerate(queries):
        i = index.get(q)
        if i is not None:
            out[j] = column[i]
    return out


def _replicate_scores(
    values: npt.NDArray[np.float64], counts: npt.NDArray[np.float64], rule: str
) -> npt.NDArray[np.float64]:
    """resamples scores of one run from its aligned per-query ``values``."""
    defined = ~np.isnan(values)
    v = np.where(defined, values, 0.0)
    weights = counts * defined
    total = weights.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if rule == "sum":
            return np.asarray(weights @ v)
        if rule == "gmean":
            logs = np.where(defined, np.log(np.maximum(v, 1e-5)), 0.0)
            return np.asarray(np.where(total > 0, np.exp((weights @ logs) / total), np.nan))
        return np.asarray(np.where(total > 0, (weights @ v) / total, np.nan))


def _measure_agreement(
    measure: Measure,
    eval_a: Evaluation,
    eval_b: Evaluation,
    queries: Sequence[str],
    counts: npt.NDArray[np.float64],
    level: float,
) -> MeasureAgreement:
    names = [r.name for r in eval_a.runs]
    scores_a = {n: _score(eval_a[n], measure, "label set a") for n in names}
    scores_b = {n: _score(eval_b[n], measure, "label set b") for n in names}
    xa = np.array([scores_a[n] for n in names])
    xb = np.array([scores_b[n] for n in names])
    rank_a, rank_b = ranking(scores_a), ranking(scores_b)
    rule = measure.spec.aggregate
    rep_a = np.column_stack(
        [_replicate_scores(_aligned(eval_a[n], measure, queries), counts, rule) for n in names]
    )
    rep_b = np.column_stack(
        [_replicate_scores(_aligned(eval_b[n], measure, queries), counts, rule) for n in names]
    )
    return MeasureAgreement(
        measure=str(measure),
        scores_a=scores_a,
        scores_b=scores_b,
        ranking_a=rank_a,
        ranking_b=rank_b,
        kendall_tau=kendall_tau_b(xa, xb),
        spearman=spearman_rho(xa, xb),
        tau_ap=tau_ap_or_b(xa, xb),
        top_overlap={k: top_k_overlap(rank_a, rank_b, k) for k in TOP_KS if k <= len(names)},
        changes=rank_changes(rank_a, rank_b),
        ci=_intervals(rep_a, rep_b, level),
    )


def _intervals(
    rep_a: npt.NDArray[np.float64], rep_b: npt.NDArray[np.float64], level: float
) -> dict[str, Interval]:
    usable = ~(np.isnan(rep_a).any(axis=1) | np.isnan(rep_b).any(axis=1))
    tau_ap = np.full(rep_a.shape[0], np.nan)
    for r in np.flatnonzero(usable):
        tau_ap[r] = tau_ap_or_b(rep_a[r], rep_b[r]).value
    values = {
        "kendall_tau": np.where(usable, kendall_tau_b_rows(rep_a, rep_b), np.nan),
        "spearman": np.where(usable, spearman_rho_rows(rep_a, rep_b), np.nan),
        "tau_ap": tau_ap,
    }
    return {name: _percentile(v, level) for name, v in values.items()}


def _percentile(values: npt.NDArray[np.float64], level: float) -> Interval:
    defined = values[~np.isnan(values)]
    undefined = int(values.shape[0] - defined.shape[0])
    if defined.shape[0] == 0:
        return Interval(math.nan, math.nan, undefined)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return Interval(float(low), float(high), undefined)


def _coverage(eval_a: Evaluation, eval_b: Evaluation) -> QueryCoverage:
    qa = {str(q) for r in eval_a.runs for q in r.query_ids}
    qb = {str(q) for r in eval_b.runs for q in r.query_ids}
    unranked = {
        r.name: (r.n_missing + r.n_skipped, eval_b[r.name].n_missing + eval_b[r.name].n_skipped)
        for r in eval_a.runs
    }
    return QueryCoverage(len(qa - qb), len(qb - qa), len(qa & qb), unranked)
