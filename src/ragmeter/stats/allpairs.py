"""Compare every run with every other: the all-pairs table of papers, with ranx's letters.

:func:`all_pairs` takes an :class:`~ragmeter.evaluation.Evaluation` of k ≥ 2 runs and tests
each of the k(k − 1)/2 pairs on each measure; :mod:`ragmeter.report.allpairs` prints it
(each run gets a letter a, b, c…; its mean carries, as superscripts, the letters of the runs
it is significantly better than).

Rules:

* Each run's mean is the one ``evaluate`` reports (over its defined values; geometric for
  gm_* measures).
* A pair is tested on the queries both runs define (pairs where either is NA are dropped),
  with the paired test of :func:`ragmeter.stats.compare`: ``randomization`` (sign flips,
  seeded), ``t`` or ``wilcoxon``; gm_* measures on log(max(v, 10⁻⁵)), as ``compare``.
* The correction's family is every pair of one measure (m = k(k − 1)/2 p-values):
  ``holm``, ``bonferroni``, ``bh`` (Benjamini–Hochberg, false discovery rate) or ``none``
  adjust the paired tests' p-values; ``tukey`` replaces the paired test by Tukey's HSD
  (:mod:`ragmeter.stats.tukey`, the repeated-measures variant) on the queries *every* run
  defines, whose p-values are adjusted for the family by construction.
* Run a is significantly better than run b on a measure when p̃_ab ≤ α and the test's
  direction favours a by the measure's sense (higher is better, or lower for ``harm``…; for a
  measure without a better direction, such as ``num_ret``, "higher").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ragmeter.core import sums
from ragmeter.measures import Measure
from ragmeter.stats._common import FloatArray
from ragmeter.stats.comparison import _check_options, _clean, _table, direction, win_tie_loss
from ragmeter.stats.correction import adjust
from ragmeter.stats.paired import (
    PairedTest,
    TestName,
    _t_from_differences,
    randomization_pvalues,
    wilcoxon_test,
)
from ragmeter.stats.tukey import REPEATED_MEASURES, tukey_hsd

if TYPE_CHECKING:  # an Evaluation is read, never built, here (it lives a layer above)
    from ragmeter.evaluation.results import Evaluation

PairsCorrection = Literal["holm", "bonferroni", "bh", "none", "tukey"]
PAIRS_CORRECTIONS: tuple[PairsCorrection, ...] = ("holm", "bonferroni", "bh", "none", "tukey")


def letters(k: int) -> tuple[str, ...]:
    """The letters of k runs: a … z, then aa, ab … (as spreadsheet columns, lower case)."""
    out = []
    for i in range(k):
        name, j = "", i + 1
        while j:
            j, rest = divmod(j - 1, 26)
            name = chr(ord("a") + rest) + name
        out.append(name)
    return tuple(out)


@dataclass(frozen=True)
class RunMean:
    """One run's mean on one measure (over its defined values; geometric for gm_*)."""

    run: str
    measure: str
    mean: float
    n: int
    n_defined: int

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "mean": _clean(self.mean)}


@dataclass(frozen=True)
class Pair:
    """Runs ``run`` and ``other`` (``run`` comes first in the runs' order) on one measure.

    Attributes:
        difference: mean(run) − mean(other) over the n queries tested (of geometric means for
            gm_*).
        statistic, p_value, method: the paired test (t; mean difference for randomization;
            min(W⁺, W⁻) for Wilcoxon) or Tukey's q; p_adjusted: after the correction (Tukey's
            p as it is).
        n: queries tested (both runs defined; with Tukey, every run defined).
        significant: p_adjusted ≤ alpha; better: the significantly better run, else ``None``.
        wins, ties, losses: queries (both runs defined) where ``run`` beats ``other``, ties
            (|difference| ≤ the tie tolerance) or loses, by the measure's sense
            (:func:`~ragmeter.stats.comparison.win_tie_loss`).
    """

    run: str
    other: str
    measure: str
    difference: float
    statistic: float
    p_value: float
    p_adjusted: float
    method: str
    n: int
    significant: bool
    better: str | None
    wins: int = 0
    ties: int = 0
    losses: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "other": self.other,
            "measure": self.measure,
            "difference": _clean(self.difference),
            "statistic": _clean(self.statistic),
            "p_value": _clean(self.p_value),
            "p_adjusted": _clean(self.p_adjusted),
            "method": self.method,
            "n": self.n,
            "significant": self.significant,
            "better": self.better,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
        }


@dataclass(frozen=True, eq=False)
class AllPairs:
    """Every run against every other on each measure: what ``compare --all-pairs`` prints.

    ``means`` holds every run × measure (run then measure order); ``pairs`` every pair
    (i < j in the runs' order) × measure, measure by measure.
    """

    runs: tuple[str, ...]
    measures: tuple[str, ...]
    means: tuple[RunMean, ...]
    pairs: tuple[Pair, ...]
    test: TestName
    correction: PairsCorrection
    alpha: float
    permutations: int
    seed: int | None
    directions: tuple[int, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    tie_tolerance: float = 0.0
    #: what the labels are (the ``to_json()`` of
    #: :class:`ragmeter.analysis.calibration.LabelsDescription`), when the workflow knows
    labels: Mapping[str, Any] | None = None

    @property
    def letters(self) -> tuple[str, ...]:
        """The letter of each run, in the runs' order."""
        return letters(len(self.runs))

    def letter(self, run: str) -> str:
        return self.letters[self.runs.index(run)]

    def mean(self, run: str, measure: str) -> RunMean:
        for m in self.means:
            if m.run == run and m.measure == measure:
                return m
        raise KeyError(f"no mean of run '{run}' on '{measure}'")

    def pair(self, run: str, other: str, measure: str) -> Pair:
        """The pair of two runs on a measure, in either order (``difference`` is that of the
        stored order: see :attr:`Pair.run`)."""
        for p in self.pairs:
            if p.measure == measure and {p.run, p.other} == {run, other} and run != other:
                return p
        raise KeyError(f"no pair of runs '{run}' and '{other}' on '{measure}'")

    def better_than(self, run: str, measure: str) -> tuple[str, ...]:
        """The runs ``run`` is significantly better than on ``measure``, in the runs' order."""
        beaten = {
            (p.other if p.run == run else p.run)
            for p in self.pairs
            if p.measure == measure and p.better == run
        }
        return tuple(r for r in self.runs if r in beaten)

    def superscript(self, run: str, measure: str) -> str:
        """The letters of the runs ``run`` is significantly better than (``"bc"``)."""
        return "".join(self.letter(r) for r in self.better_than(run, measure))

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (NA is ``None``, never NaN)."""
        return {
            "runs": list(self.runs),
            "letters": dict(zip(self.runs, self.letters, strict=True)),
            "measures": list(self.measures),
            "settings": {
                "test": "tukey" if self.correction == "tukey" else self.test,
                "correction": self.correction,
                "family": "every pair of runs on one measure",
                "alpha": self.alpha,
                "permutations": self.permutations,
                "seed": self.seed,
                "tie_tolerance": self.tie_tolerance,
                **({"tukey": REPEATED_MEASURES} if self.correction == "tukey" else {}),
            },
            "means": [
                {**m.to_dict(), "better_than": list(self.better_than(m.run, m.measure))}
                for m in self.means
            ],
            "pairs": [p.to_dict() for p in self.pairs],
            "warnings": list(self.warnings),
            **({"labels": dict(self.labels)} if self.labels is not None else {}),
        }


def _run_means(values: FloatArray, present: list[np.ndarray], geometric: bool) -> list[RunMean]:
    """The mean of each column of ``values`` (one measure) over its run's defined values."""
    out = []
    for r in range(values.shape[1]):
        col = values[present[r], r]
        ok = col[~np.isnan(col)]
        if not ok.size:
            mean = math.nan
        else:
            mean = sums.geometric_mean(ok) if geometric else sums.sequential_mean(ok)
        out.append(RunMean("", "", mean, int(col.shape[0]), int(ok.shape[0])))
    return out


def _pair_tests(
    scaled: FloatArray, test: TestName, permutations: int, seed: int | None
) -> tuple[list[tuple[int, int]], list[PairedTest], list[np.ndarray]]:
    """The paired test of every pair of columns of ``scaled`` (one measure), on the queries
    both define."""
    k = scaled.shape[1]
    index = [(a, b) for a in range(k) for b in range(a + 1, k)]
    defined = ~np.isnan(scaled)
    masks = [defined[:, a] & defined[:, b] for a, b in index]
    columns = [
        np.where(mask, scaled[:, a] - scaled[:, b], 0.0)
        for (a, b), mask in zip(index, masks, strict=True)
    ]
    diffs = np.column_stack(columns) if columns else np.empty((scaled.shape[0], 0))
    tests: list[PairedTest] = []
    if test == "randomization":
        pvals, methods = randomization_pvalues(diffs, permutations=permutations, seed=seed)
        for c, mask in enumerate(masks):
            d = diffs[mask, c]
            stat = float(np.mean(d)) if d.size else math.nan
            sign = int(np.sign(d.sum())) if d.size else 0
            tests.append(
                PairedTest("randomization", stat, float(pvals[c]), d.size, methods[c], sign)
            )
    else:
        for c, mask in enumerate(masks):
            d = diffs[mask, c]
            tests.append(
                _t_from_differences(d) if test == "t" else wilcoxon_test(d, np.zeros_like(d))
            )
    return index, tests, masks


def _tukey_tests(
    scaled: FloatArray,
) -> tuple[list[tuple[int, int]], list[PairedTest], list[np.ndarray]]:
    """Tukey's HSD of every pair, on the queries every column defines."""
    k = scaled.shape[1]
    index = [(a, b) for a in range(k) for b in range(a + 1, k)]
    every: np.ndarray = np.asarray(~np.isnan(scaled).any(axis=1))
    x = scaled[every]
    if x.shape[0] < 2:
        nan = PairedTest("t", math.nan, math.nan, int(x.shape[0]), "tukey-hsd", 0)
        return index, [nan] * len(index), [every] * len(index)
    hsd = tukey_hsd(x, variant="repeated")
    tests = []
    for a, b in index:
        gap = float(hsd.means[a] - hsd.means[b])
        sign = 0 if gap == 0 else (1 if gap > 0 else -1)
        q, p = float(hsd.statistic[a, b]), float(hsd.pvalue[a, b])
        tests.append(PairedTest("t", q, p, int(x.shape[0]), "tukey-hsd", sign))
    return index, tests, [every] * len(index)


def _difference(
    values: FloatArray, scaled: FloatArray, a: int, b: int, mask: np.ndarray, geo: bool
) -> float:
    if not mask.any():
        return math.nan
    if geo:
        return float(np.exp(scaled[mask, a].mean()) - np.exp(scaled[mask, b].mean()))
    return float(values[mask, a].mean() - values[mask, b].mean())


def _measure_pairs(
    names: Sequence[str],
    measure: str,
    values: FloatArray,
    scaled: FloatArray,
    geo: bool,
    sense: int,
    options: dict[str, Any],
) -> list[Pair]:
    """Every pair of runs on one measure (values: queries × runs)."""
    correction, alpha = options["correction"], options["alpha"]
    if correction == "tukey":
        index, tests, masks = _tukey_tests(scaled)
        adjusted = np.array([t.pvalue for t in tests])
    else:
        index, tests, masks = _pair_tests(
            scaled, options["test"], options["permutations"], options["seed"]
        )
        adjusted = adjust([t.pvalue for t in tests], correction)
    pairs = []
    for c, ((a, b), t) in enumerate(zip(index, tests, strict=True)):
        p_adj = float(adjusted[c])
        significant = bool(not math.isnan(p_adj) and p_adj <= alpha and t.direction != 0)
        favour = t.direction * (sense if sense else 1)
        better = (names[a] if favour > 0 else names[b]) if significant else None
        both = ~np.isnan(values[:, a]) & ~np.isnan(values[:, b])
        wins, ties, losses = win_tie_loss(
            values[both, a], values[both, b], tolerance=options["tie_tolerance"], sense=sense
        )
        method = (
            t.method
            if correction == "tukey"
            else (f"{t.test}:{t.method}" if t.test != "t" else "t")
        )
        pairs.append(
            Pair(
                run=names[a],
                other=names[b],
                measure=measure,
                difference=_difference(values, scaled, a, b, masks[c], geo),
                statistic=t.statistic,
                p_value=t.pvalue,
                p_adjusted=p_adj,
                method=method,
                n=int(masks[c].sum()),
                significant=significant,
                better=better,
                wins=wins,
                ties=ties,
                losses=losses,
            )
        )
    return pairs


def all_pairs(
    evaluation: Evaluation,
    *,
    measures: Sequence[str | Measure] | None = None,
    test: TestName = "randomization",
    correction: PairsCorrection = "holm",
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int | None = 0,
    tie_tolerance: float = 0.0,
) -> AllPairs:
    """Compare every run of ``evaluation`` with every other (see the module docs).

    Args:
        evaluation: the per-query values of two or more runs (from :func:`ragmeter.evaluate`).
        measures: a subset of the evaluated measures (default: all).
        test: ``randomization`` (paired sign flips, default), ``t`` or ``wilcoxon``.
        correction: ``holm`` (default), ``bonferroni``, ``bh``, ``none`` over the pairs of
            each measure, or ``tukey`` (Tukey's HSD instead of the paired test).
        alpha: significance level of the adjusted p-values.
        permutations: random sign vectors of the randomization test.
        seed: seed of the randomization test's draws.
        tie_tolerance: |difference| ≤ this on a query is a tie in each pair's win/tie/loss
            counts (default 0: equal values).

    Example:
        >>> import ragmeter
        >>> from ragmeter.stats import all_pairs
        >>> qrels = {f"q{i}": {"a": 1} for i in range(8)}
        >>> runs = {
        ...     "good": ragmeter.Run.from_lists({f"q{i}": ["a"] for i in range(8)}),
        ...     "half": ragmeter.Run.from_lists({f"q{i}": ["x", "a"] for i in range(8)}),
        ...     "bad": ragmeter.Run.from_lists({f"q{i}": ["x"] * 1 for i in range(8)}),
        ... }
        >>> table = all_pairs(ragmeter.evaluate(runs, qrels, ["mrr"]), test="t")
        >>> tuple(table.superscript(r, "mrr") for r in table.runs)
        ('bc', 'c', '')
    """
    if correction not in PAIRS_CORRECTIONS:
        raise ValueError(
            f"correction must be one of {', '.join(PAIRS_CORRECTIONS)}, got {correction!r}"
        )
    _check_options(test, "holm" if correction == "tukey" else correction, alpha)
    if not tie_tolerance >= 0:
        raise ValueError(f"tie_tolerance must be ≥ 0, got {tie_tolerance}")
    table = _table(evaluation, 0, measures)
    names = [r.name for r in table.runs]
    options = {
        "test": test,
        "correction": correction,
        "alpha": alpha,
        "permutations": permutations,
        "seed": seed,
        "tie_tolerance": tie_tolerance,
    }
    directions = tuple(direction(m) for m in table.measures)
    means: list[RunMean] = []
    pairs: list[Pair] = []
    for j, m in enumerate(table.measures):
        values, scaled = table.values[:, :, j], table.scaled[:, :, j]
        for r, rm in enumerate(_run_means(values, table.present, table.geometric[j])):
            means.append(RunMean(names[r], str(m), rm.mean, rm.n, rm.n_defined))
        pairs += _measure_pairs(
            names, str(m), values, scaled, table.geometric[j], directions[j], options
        )
    order = {name: i for i, name in enumerate(names)}
    means.sort(key=lambda x: (order[x.run], [str(m) for m in table.measures].index(x.measure)))
    return AllPairs(
        runs=tuple(names),
        measures=tuple(str(m) for m in table.measures),
        means=tuple(means),
        pairs=tuple(pairs),
        test=test,
        correction=correction,
        alpha=alpha,
        permutations=permutations,
        seed=seed,
        directions=directions,
        warnings=tuple(evaluation.warnings),
        tie_tolerance=tie_tolerance,
    )
