"""Compare runs on the same queries: means with bootstrap CIs, paired differences, paired tests
with a correction for many comparisons, and effect sizes.

:func:`compare` takes an :class:`~ragmeter.evaluation.Evaluation` (any measure family: it
works on the per-query values) and returns a :class:`Comparison` that the renderers in
:mod:`ragmeter.report.comparison` print; nothing is computed there.

Rules:

* Runs are aligned by query id. A pair counts only where both runs have the query and both
  values are defined (not NA); ``n_dropped`` counts the other queries of either run.
* Each run's mean, standard deviation and CI are over its own defined values (the mean is
  the one ``evaluate`` reports: one name, one number). Count measures (``num_ret``,
  ``NumRet``…, aggregated by sum as trec_eval's "all" line and ir_measures do) show the sum
  and a CI of the sum (n × the mean's, n fixed by the resampling); the standard deviation
  stays that of the per-query values.
* The difference is run − baseline over the paired queries; its CI is a paired bootstrap
  (the same resampled queries for both runs). For a count measure it is the difference of
  the sums over the paired queries (n × the mean difference); tests and effect sizes are
  those of the per-query differences either way.
* Geometric-mean measures (``gm_map``, ``gm_bpref``) are compared on log(max(v, 10⁻⁵)): the
  tests and effect sizes use those logs; means and CIs are back-transformed (exp), and the
  difference is gm(run) − gm(baseline) per bootstrap replicate.
* All p-values of one comparison (every run against the baseline, every measure) are
  adjusted together (Holm by default).
* Small n is said, not hidden: each difference carries the smallest p-value its test can
  reach on its pairs and the bound that puts on the adjusted p-value
  (:func:`~ragmeter.stats.paired.smallest_pvalue`,
  :func:`~ragmeter.stats.correction.smallest_adjusted`); when that bound is above α the
  difference cannot be significant whatever the data, and :attr:`Comparison.notes` says so.
  Bootstrap intervals are NaN below :func:`~ragmeter.stats.bootstrap.min_bootstrap_n`
  values (4 at 95%), with a note.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ragmeter.core import sums
from ragmeter.measures import MIN_GEO_MEAN, Measure
from ragmeter.stats._common import FloatArray
from ragmeter.stats.bootstrap import bootstrap_means, min_bootstrap_n, percentile_interval
from ragmeter.stats.correction import CORRECTIONS, Correction, adjust, smallest_adjusted
from ragmeter.stats.paired import (
    TESTS,
    PairedTest,
    TestName,
    _cohens_d,
    _rank_biserial,
    _t_from_differences,
    randomization_pvalues,
    smallest_pvalue,
    wilcoxon_test,
)

if TYPE_CHECKING:  # an Evaluation is read, never built, here (it lives a layer above)
    from ragmeter.evaluation.results import Evaluation, RunResult

Verdict = Literal["better", "worse", "up", "down", "ns", "na"]

#: families where a lower value is better
LOWER_IS_BETTER = frozenset({"harm", "num_nonrel_judged_ret"})
#: families that describe a run or its judgments rather than its quality
NEUTRAL = frozenset(
    {
        "num_ret",
        "num_rel",
        "num_unjudged_ret",
        "idcg",
        "judged",
        "unjudged",
        "rbp_resid",
        "relstring",
    }
)


def direction(measure: Measure) -> int:
    """+1 when higher is better, −1 when lower is better, 0 when neither (counts of items…).

    A family may declare ``higher_is_better`` (True / False / None); else the tables above.
    """
    declared = getattr(measure.spec, "higher_is_better", "unset")
    if declared is True:
        return 1
    if declared is False:
        return -1
    if declared is None:
        return 0
    if measure.family in LOWER_IS_BETTER:
        return -1
    if measure.family in NEUTRAL:
        return 0
    return 1


def _clean(v: float) -> float | None:
    return None if v is None or math.isnan(v) else float(v)


@dataclass(frozen=True)
class MetricSummary:
    """One run on one measure.

    Attributes:
        mean: the measure's aggregate over defined values: the mean (geometric for gm_*
            measures; NaN if none), or the sum for count measures (0 if none).
        sd: sample standard deviation of the per-query values (n − 1; NaN below 2).
        ci_low, ci_high: percentile bootstrap CI of the mean (NaN below
            :func:`~ragmeter.stats.bootstrap.min_bootstrap_n` defined values).
        n: queries evaluated; n_defined: queries where the value is defined.
    """

    run: str
    measure: str
    mean: float
    sd: float
    ci_low: float
    ci_high: float
    n: int
    n_defined: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "measure": self.measure,
            "mean": _clean(self.mean),
            "sd": _clean(self.sd),
            "ci": [_clean(self.ci_low), _clean(self.ci_high)],
            "n": self.n,
            "n_defined": self.n_defined,
        }


@dataclass(frozen=True)
class Difference:
    """One run against the baseline on one measure.

    Attributes:
        difference: run − baseline over the paired queries (of geometric means for gm_*,
            of sums for count measures).
        ci_low, ci_high: paired percentile bootstrap CI of the difference (NaN below
            :func:`~ragmeter.stats.bootstrap.min_bootstrap_n` pairs).
        statistic, p_value, method: the paired test (see :class:`~ragmeter.stats.paired.
            PairedTest`); p_adjusted: after the correction across the comparison.
        min_p: the smallest p-value the test can give on these pairs; min_p_adjusted: the
            bound that puts on p_adjusted; can_be_significant: min_p_adjusted ≤ alpha (False:
            n too small for this test and correction, whatever the data).
        cohens_d: paired d_z = mean(d)/sd(d); rank_biserial: (W⁺ − W⁻)/(W⁺ + W⁻).
        n: paired queries (both runs defined); n_dropped: queries of either run left out.
        wins, ties, losses: of the n paired queries, those where the run beats the baseline,
            ties it (|run − baseline| ≤ the comparison's ``tie_tolerance``) or loses
            (:func:`win_tie_loss`).
        significant: p_adjusted ≤ alpha.
        verdict: ``better`` / ``worse`` (significant, by the measure's direction), ``up`` /
            ``down`` (significant, measure without a direction), ``ns``, or ``na``.
    """

    run: str
    baseline: str
    measure: str
    difference: float
    ci_low: float
    ci_high: float
    statistic: float
    p_value: float
    p_adjusted: float
    method: str
    cohens_d: float
    rank_biserial: float
    n: int
    n_dropped: int
    significant: bool
    verdict: Verdict
    min_p: float = 0.0
    min_p_adjusted: float = 0.0
    #: False when no data on these pairs could bring the adjusted p to alpha
    can_be_significant: bool = True
    #: paired queries where the run is better / within the tie tolerance / worse
    wins: int = 0
    ties: int = 0
    losses: int = 0

    @property
    def effect_size(self) -> float:
        """Rank-biserial for a Wilcoxon test, Cohen's d otherwise (see ``Comparison``)."""
        return self.rank_biserial if self.method.startswith("wilcoxon") else self.cohens_d

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "baseline": self.baseline,
            "measure": self.measure,
            "difference": _clean(self.difference),
            "ci": [_clean(self.ci_low), _clean(self.ci_high)],
            "statistic": _clean(self.statistic),
            "p_value": _clean(self.p_value),
            "p_adjusted": _clean(self.p_adjusted),
            "method": self.method,
            "cohens_d": _clean(self.cohens_d),
            "rank_biserial": _clean(self.rank_biserial),
            "n": self.n,
            "n_dropped": self.n_dropped,
            "significant": self.significant,
            "verdict": self.verdict,
            "min_p": _clean(self.min_p),
            "min_p_adjusted": _clean(self.min_p_adjusted),
            "can_be_significant": self.can_be_significant,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
        }


@dataclass(frozen=True, eq=False)
class Comparison:
    """Runs compared with a baseline: what the ``compare`` command prints.

    ``summaries`` holds every run (baseline first) × measure; ``differences`` every other
    run × measure, in run then measure order.
    """

    baseline: str
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    summaries: tuple[MetricSummary, ...]
    differences: tuple[Difference, ...]
    test: TestName
    correction: Correction
    alpha: float
    confidence: float
    permutations: int
    bootstrap: int
    seed: int | None
    directions: tuple[int, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    #: per measure, whether it counts (num_ret, num_rel: a sum), printed as an integer
    counts: tuple[bool, ...] = ()
    #: |run − baseline| ≤ this on a query is a tie in the win/tie/loss counts
    tie_tolerance: float = 0.0
    #: what the labels are (the ``to_json()`` of
    #: :class:`ragmeter.analysis.calibration.LabelsDescription`), when the workflow knows
    labels: Mapping[str, Any] | None = None

    @property
    def effect_name(self) -> str:
        return "rank_biserial" if self.test == "wilcoxon" else "cohens_d"

    @property
    def min_bootstrap_n(self) -> int:
        """The fewest values a bootstrap interval is computed from at this confidence."""
        return min_bootstrap_n(self.confidence)

    @property
    def notes(self) -> tuple[str, ...]:
        """What small n keeps this comparison from showing: the differences that cannot be
        significant whatever the data, and the means and differences without an interval."""
        notes: list[str] = []
        groups: dict[tuple[int, float, float], list[str]] = {}
        for d in self.differences:
            if not math.isnan(d.p_value) and not d.can_be_significant:
                groups.setdefault((d.n, d.min_p, d.min_p_adjusted), []).append(
                    f"{d.measure} {d.run}"
                )
        test = {"randomization": "randomization test", "t": "t-test"}.get(self.test, self.test)
        for (n, low, low_adj), where in groups.items():
            after = "" if low_adj == low else f" ({low_adj:.4g} after the correction)"
            notes.append(
                f"n too small for significance: on {n} paired quer{'y' if n == 1 else 'ies'} "
                f"the smallest p the {test} can give is {low:.4g}{after} > α = {self.alpha:g} "
                f"({', '.join(where)})"
            )
        k = self.min_bootstrap_n
        short = [f"{s.measure} {s.run}" for s in self.summaries if 0 < s.n_defined < k]
        short += [f"Δ {d.measure} {d.run}" for d in self.differences if 0 < d.n < k]
        if short and len(short) == len(self.summaries) + len(self.differences):
            short = ["every mean and Δ"]
        if short:
            notes.append(
                f"n too small for an interval: a {self.confidence * 100:g}% bootstrap "
                f"interval needs n ≥ {k} values ({', '.join(short)})"
            )
        return tuple(notes)

    def summary(self, run: str, measure: str) -> MetricSummary:
        for s in self.summaries:
            if s.run == run and s.measure == measure:
                return s
        raise KeyError(f"no summary of run '{run}' on '{measure}'")

    def difference(self, run: str, measure: str) -> Difference:
        for d in self.differences:
            if d.run == run and d.measure == measure:
                return d
        raise KeyError(f"no difference of run '{run}' on '{measure}'")

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (NA is ``None``, never NaN)."""
        return {
            "baseline": self.baseline,
            "runs": list(self.runs),
            "measures": list(self.measures),
            "settings": {
                "test": self.test,
                "correction": self.correction,
                "alpha": self.alpha,
                "confidence": self.confidence,
                "permutations": self.permutations,
                "bootstrap": self.bootstrap,
                "seed": self.seed,
                "effect_size": self.effect_name,
                "min_bootstrap_n": self.min_bootstrap_n,
                "tie_tolerance": self.tie_tolerance,
            },
            "summaries": [s.to_dict() for s in self.summaries],
            "differences": [d.to_dict() for d in self.differences],
            "notes": list(self.notes),
            "warnings": list(self.warnings),
            **({"labels": dict(self.labels)} if self.labels is not None else {}),
        }


# -- computation ----------------------------------------------------------------------------


def win_tie_loss(
    run: FloatArray, baseline: FloatArray, *, tolerance: float = 0.0, sense: int = 1
) -> tuple[int, int, int]:
    """Queries where ``run`` wins, ties and loses against ``baseline`` (same queries; pairs
    with an NA on either side are left out).

    With d_q = run_q − baseline_q and s the measure's sense (−1 where lower is better, else
    +1): win ⇔ s·d_q > τ, tie ⇔ |d_q| ≤ τ, loss ⇔ s·d_q < −τ, τ = ``tolerance`` (default 0:
    a tie is exact equality).
    """
    if tolerance < 0 or math.isnan(tolerance):
        raise ValueError(f"tie tolerance must be ≥ 0, got {tolerance}")
    d = np.asarray(run, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    d = d[~np.isnan(d)] * (-1.0 if sense < 0 else 1.0)
    return (
        int(np.sum(d > tolerance)),
        int(np.sum(np.abs(d) <= tolerance)),
        int(np.sum(d < -tolerance)),
    )


def _union_values(
    runs: Sequence[RunResult], measures: Sequence[Measure]
) -> tuple[FloatArray, list[np.ndarray]]:
    """Values U × runs × measures over the sorted union of the runs' query ids (NaN where a
    run lacks the query or the value is NA), and for each run which of the U it has."""
    own = [np.asarray(r.query_ids, dtype=object).astype(str) for r in runs]
    ids = np.unique(np.concatenate(own))
    values = np.full((ids.shape[0], len(runs), len(measures)), np.nan)
    present = []
    for i, r in enumerate(runs):
        rows = np.searchsorted(ids, own[i])
        cols = [r._index(m) for m in measures]
        values[rows, i, :] = r.values[:, cols]
        has = np.zeros(ids.shape[0], dtype=bool)
        has[rows] = True
        present.append(has)
    return values, present


def _resolve_baseline(evaluation: Evaluation, baseline: str | int | None) -> int:
    if baseline is None:
        return 0
    if isinstance(baseline, int):
        if not -len(evaluation.runs) <= baseline < len(evaluation.runs):
            raise KeyError(f"no run {baseline}; have {len(evaluation.runs)}")
        return baseline % len(evaluation.runs)
    names = [r.name for r in evaluation.runs]
    if baseline in names:
        return names.index(baseline)
    raise KeyError(f"no run named '{baseline}'; have {names}")


class _Bootstrap:
    """Bootstrap jobs grouped by the set of queries they resample (shared draws)."""

    def __init__(self, replicates: int, seed: int | None) -> None:
        self.replicates = replicates
        self.seed = seed
        self._groups: dict[bytes, tuple[np.ndarray, list[FloatArray]]] = {}
        self._where: list[tuple[bytes, int]] = []

    def add(self, mask: np.ndarray, column: FloatArray) -> int:
        key = np.packbits(mask).tobytes() + mask.shape[0].to_bytes(8, "little")
        group = self._groups.setdefault(key, (mask, []))
        group[1].append(column[mask])
        self._where.append((key, len(group[1]) - 1))
        return len(self._where) - 1

    def run(self) -> list[FloatArray]:
        """Replicate means of every job, in the order added."""
        results: dict[bytes, FloatArray] = {}
        for key, (mask, cols) in self._groups.items():
            if not mask.any():
                results[key] = np.full((self.replicates, len(cols)), np.nan)
                continue
            results[key] = bootstrap_means(
                np.column_stack(cols), replicates=self.replicates, seed=self.seed
            )
        return [results[key][:, j] for key, j in self._where]


@dataclass(frozen=True)
class _Table:
    """The compared runs (baseline first), measures and per-query values of a comparison:
    ``values[query, run, measure]`` (NaN: NA), ``scaled`` on the averaged scale (log for
    geometric means), ``present[run]`` the queries each run has."""

    runs: list[RunResult]
    measures: list[Measure]
    values: FloatArray
    present: list[np.ndarray]
    scaled: FloatArray
    defined: np.ndarray
    geometric: list[bool]


@dataclass(frozen=True)
class _Jobs:
    """The bootstrap replicates of every summary and difference, drawn in one pass, and the
    paired differences (one column per run × measure against the baseline)."""

    summary_jobs: list[list[int]]
    diff_jobs: list[list[tuple[int, ...]]]
    diff_columns: list[FloatArray]
    pair_masks: list[np.ndarray]
    reps: list[FloatArray]


def _check_options(test: str, correction: str, alpha: float) -> None:
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def _table(
    evaluation: Evaluation, baseline: str | int | None, measures: Sequence[str | Measure] | None
) -> _Table:
    if len(evaluation.runs) < 2:
        raise ValueError("compare needs at least two runs")
    names = [r.name for r in evaluation.runs]
    if len(set(names)) != len(names):
        raise ValueError(f"run names must be distinct to compare runs, got {names}")
    base = _resolve_baseline(evaluation, baseline)
    order = [base] + [i for i in range(len(evaluation.runs)) if i != base]
    runs = [evaluation.runs[i] for i in order]
    if measures is None:
        measure_list = list(evaluation.measures)
    else:
        probe = evaluation.runs[0]
        measure_list = [probe.measures[probe._index(m)] for m in measures]
    values, present = _union_values(runs, measure_list)
    geometric = [m.spec.aggregate == "gmean" for m in measure_list]

    # values on the scale that is averaged: log for geometric means
    scaled = values.copy()
    for j, geo in enumerate(geometric):
        if geo:
            with np.errstate(invalid="ignore"):
                scaled[:, :, j] = np.log(np.maximum(values[:, :, j], MIN_GEO_MEAN))
    defined = ~np.isnan(values)
    return _Table(runs, measure_list, values, present, scaled, defined, geometric)


def _schedule(t: _Table, bootstrap: int, seed: int | None) -> _Jobs:
    scaled, defined, geometric = t.scaled, t.defined, t.geometric
    n_runs, n_meas = len(t.runs), len(t.measures)
    boot = _Bootstrap(bootstrap, seed)
    summary_jobs = [
        [boot.add(defined[:, r, j], scaled[:, r, j]) for j in range(n_meas)] for r in range(n_runs)
    ]
    diff_jobs: list[list[tuple[int, ...]]] = []
    diff_columns: list[FloatArray] = []
    pair_masks: list[np.ndarray] = []
    for r in range(1, n_runs):
        row: list[tuple[int, ...]] = []
        for j in range(n_meas):
            mask = defined[:, 0, j] & defined[:, r, j]
            pair_masks.append(mask)
            d = np.where(mask, scaled[:, r, j] - scaled[:, 0, j], 0.0)
            diff_columns.append(d)
            if geometric[j]:
                row.append((boot.add(mask, scaled[:, 0, j]), boot.add(mask, scaled[:, r, j])))
            else:
                row.append((boot.add(mask, d),))
        diff_jobs.append(row)
    reps = boot.run()
    return _Jobs(summary_jobs, diff_jobs, diff_columns, pair_masks, reps)


def _summaries(t: _Table, jobs: _Jobs, confidence: float) -> list[MetricSummary]:
    """Mean, SD and bootstrap CI of every run × measure."""
    values, present = t.values, t.present
    runs, measure_list, geometric = t.runs, t.measures, t.geometric
    summary_jobs, reps = jobs.summary_jobs, jobs.reps
    summaries: list[MetricSummary] = []
    for r, run in enumerate(runs):
        for j, m in enumerate(measure_list):
            col = values[:, r, j][present[r]]
            ok = col[~np.isnan(col)]
            rep = reps[summary_jobs[r][j]]
            if geometric[j]:
                rep = np.exp(rep)
                mean = sums.geometric_mean(ok) if ok.size else math.nan
            elif m.spec.aggregate == "sum":  # evaluate's number: the sum, added in order
                rep = rep * ok.size
                mean = sums.sequential_sum(ok) if ok.size else 0.0
            else:
                mean = sums.sequential_mean(ok) if ok.size else math.nan
            low, high = percentile_interval(rep, confidence)
            if ok.shape[0] < min_bootstrap_n(confidence):
                low[:] = high[:] = math.nan
            summaries.append(
                MetricSummary(
                    run=run.name,
                    measure=str(m),
                    mean=mean,
                    sd=float(np.std(ok, ddof=1)) if ok.size > 1 else math.nan,
                    ci_low=float(low[0]),
                    ci_high=float(high[0]),
                    n=int(col.shape[0]),
                    n_defined=int(ok.shape[0]),
                )
            )
    return summaries


def _paired_tests(
    t: _Table, jobs: _Jobs, test: str, permutations: int, seed: int | None
) -> tuple[FloatArray, list[PairedTest]]:
    """The paired differences and the test of every run × measure against the baseline."""
    values, diff_columns, pair_masks = t.values, jobs.diff_columns, jobs.pair_masks
    # paired tests: all columns at once for the randomization test
    diffs = np.column_stack(diff_columns) if diff_columns else np.empty((values.shape[0], 0))
    tests: list[PairedTest] = []
    if test == "randomization":
        pvals, methods = randomization_pvalues(diffs, permutations=permutations, seed=seed)
        for c in range(diffs.shape[1]):
            d = diffs[pair_masks[c], c]
            total = float(d.sum())
            sign = 0 if total == 0 else (1 if total > 0 else -1)
            stat = float(np.mean(d)) if d.size else math.nan
            tests.append(
                PairedTest("randomization", stat, float(pvals[c]), d.size, methods[c], sign)
            )
    else:
        for c in range(diffs.shape[1]):
            d = diffs[pair_masks[c], c]
            if test == "t":
                tests.append(_t_from_differences(d))
            else:
                tests.append(wilcoxon_test(d, np.zeros_like(d)))
    return diffs, tests


def _differences(
    table: _Table,
    work: _Jobs,
    diffs: FloatArray,
    tests: list[PairedTest],
    adjusted: tuple[FloatArray, FloatArray, FloatArray],
    directions: tuple[Any, ...],
    confidence: float,
    alpha: float,
    tie_tolerance: float = 0.0,
) -> list[Difference]:
    """The difference of every run × measure with the baseline: point, CI, tests, effects."""
    runs, measure_list, present = table.runs, table.measures, table.present
    scaled, geometric = table.scaled, table.geometric
    n_runs, pair_masks, diff_jobs, reps = len(runs), work.pair_masks, work.diff_jobs, work.reps
    p_adjusted, smallest, smallest_adj = adjusted
    differences: list[Difference] = []
    c = 0
    for r in range(1, n_runs):
        either = present[0] | present[r]
        for j, m in enumerate(measure_list):
            t = tests[c]
            mask = pair_masks[c]
            d = diffs[mask, c]
            jobs = diff_jobs[r - 1][j]
            if geometric[j]:
                rep = np.exp(reps[jobs[1]]) - np.exp(reps[jobs[0]])
                point = (
                    float(np.exp(scaled[mask, r, j].mean()) - np.exp(scaled[mask, 0, j].mean()))
                    if mask.any()
                    else math.nan
                )
            elif m.spec.aggregate == "sum":  # the difference of the sums
                rep = reps[jobs[0]] * d.size
                point = sums.sequential_sum(d) if d.size else math.nan
            else:
                rep = reps[jobs[0]]
                point = float(d.mean()) if d.size else math.nan
            low, high = percentile_interval(rep, confidence)
            if d.size < min_bootstrap_n(confidence):
                low[:] = high[:] = math.nan
            p_adj = float(p_adjusted[c])
            bound = float(smallest_adj[c])
            significant = bool(not math.isnan(p_adj) and p_adj <= alpha)
            wins, ties, losses = win_tie_loss(
                table.values[mask, r, j],
                table.values[mask, 0, j],
                tolerance=tie_tolerance,
                sense=directions[j],
            )
            differences.append(
                Difference(
                    run=runs[r].name,
                    baseline=runs[0].name,
                    measure=str(m),
                    difference=point,
                    ci_low=float(low[0]),
                    ci_high=float(high[0]),
                    statistic=t.statistic,
                    p_value=t.pvalue,
                    p_adjusted=p_adj,
                    method=f"{t.test}:{t.method}" if t.test != "t" else "t",
                    cohens_d=_cohens_d(d),
                    rank_biserial=_rank_biserial(d),
                    n=int(d.size),
                    n_dropped=int(np.sum(either)) - int(d.size),
                    significant=significant,
                    verdict=_verdict(significant, t, directions[j]),
                    min_p=float(smallest[c]),
                    min_p_adjusted=bound,
                    can_be_significant=bool(not math.isnan(bound) and bound <= alpha),
                    wins=wins,
                    ties=ties,
                    losses=losses,
                )
            )
            c += 1
    return differences


def compare(
    evaluation: Evaluation,
    *,
    baseline: str | int | None = None,
    measures: Sequence[str | Measure] | None = None,
    test: TestName = "randomization",
    correction: Correction = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    permutations: int = 10_000,
    bootstrap: int = 10_000,
    seed: int | None = 0,
    tie_tolerance: float = 0.0,
) -> Comparison:
    """Compare every run of ``evaluation`` with the ``baseline`` run (default: the first).

    Args:
        evaluation: the per-query values of two or more runs (from :func:`ragmeter.evaluate`).
        baseline: the baseline run, by name or position.
        measures: a subset of the evaluated measures (default: all).
        test: ``randomization`` (paired sign-flip, default), ``t`` (paired t-test) or
            ``wilcoxon`` (signed-rank).
        correction: ``holm`` (default), ``bonferroni``, ``bh`` (Benjamini–Hochberg, false
            discovery rate) or ``none``, across all the run × measure comparisons of this call.
        alpha: significance level for the adjusted p-values (significant ⇔ p̃ ≤ alpha).
        confidence: level of the percentile bootstrap intervals.
        permutations: random sign vectors of the randomization test.
        bootstrap: bootstrap replicates.
        seed: seed of the bootstrap and randomization draws (same seed, same numbers).
        tie_tolerance: a query where |run − baseline| ≤ this is a tie in each difference's
            ``wins`` / ``ties`` / ``losses`` (default 0: exact equality).

    Example:
        >>> import ragmeter
        >>> from ragmeter.stats import compare
        >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
        >>> runs = {
        ...     "base": ragmeter.Run.from_lists({"q1": ["x", "a"], "q2": ["b"], "q3": ["x", "c"]}),
        ...     "new": ragmeter.Run.from_lists({"q1": ["a"], "q2": ["b"], "q3": ["c"]}),
        ... }
        >>> c = compare(ragmeter.evaluate(runs, qrels, ["mrr"]), bootstrap=1000)
        >>> d = c.difference("new", "mrr")
        >>> round(d.difference, 4), d.n, round(d.p_value, 2), d.method
        (0.3333, 3, 0.5, 'randomization:exact')
        >>> d.min_p, d.can_be_significant  # 2 non-zero differences: p ≥ 2/2² whatever they are
        (0.5, False)
        >>> d.wins, d.ties, d.losses  # q1 and q3 better, q2 the same
        (2, 1, 0)
    """
    _check_options(test, correction, alpha)
    if not tie_tolerance >= 0:
        raise ValueError(f"tie_tolerance must be ≥ 0, got {tie_tolerance}")
    table = _table(evaluation, baseline, measures)
    runs, measure_list = table.runs, table.measures
    directions = tuple(direction(m) for m in measure_list)
    jobs = _schedule(table, bootstrap, seed)
    summaries = _summaries(table, jobs, confidence)
    diffs, tests = _paired_tests(table, jobs, test, permutations, seed)
    adjusted = adjust([t.pvalue for t in tests], correction)
    masks = jobs.pair_masks
    smallest = np.array(
        [smallest_pvalue(t, diffs[masks[c], c], permutations) for c, t in enumerate(tests)]
    )
    bounds = (adjusted, smallest, smallest_adjusted(smallest, correction))
    differences = _differences(
        table, jobs, diffs, tests, bounds, directions, confidence, alpha, tie_tolerance
    )
    return Comparison(
        baseline=runs[0].name,
        runs=tuple(r.name for r in runs),
        measures=tuple(str(m) for m in measure_list),
        summaries=tuple(summaries),
        differences=tuple(differences),
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        permutations=permutations,
        bootstrap=bootstrap,
        seed=seed,
        directions=directions,
        warnings=tuple(evaluation.warnings),
        counts=tuple(m.spec.aggregate == "sum" for m in measure_list),
        tie_tolerance=tie_tolerance,
    )


def _verdict(significant: bool, t: PairedTest, sense: int) -> Verdict:
    if math.isnan(t.pvalue):
        return "na"
    if not significant or t.direction == 0:
        return "ns"
    if sense == 0:
        return "up" if t.direction > 0 else "down"
    return "better" if t.direction * sense > 0 else "worse"
