"""A regression gate re-checked on every commit against one fixed baseline: α spent by look.

What ``ragmeter check --sequential --history STORE`` decides. The plain gate
(:func:`ragmeter.analysis.gate.check_evaluation`) holds at level α *at one look*; re-run on
every commit against the same baseline it gets a new chance at a false alarm each time, and
after 30 commits that change nothing its chance of having failed at least once is far above α
(``tests/test_check_sequential.py`` measures it). Here the history of looks is recorded, and
look ``s`` spends only a share of α.

**The spending.** Look s (the s-th distinct run checked in a history, 1-based) reads each
significant rule on a two-sided Student t interval for the mean per-query change
``run − baseline`` (on the queries both define, ``n − 1`` degrees of freedom, the unbiased
variance) at level ``1 − α_s / r``, with

    α_s = α · 6 / (π² s²)        (Σ_{s≥1} α_s = α)

and r the number of significant rules (Bonferroni). The interval is turned into the rule's
direction (a drop reads baseline − run) and unit (a relative rule divides by the baseline's
mean, a fixed number since the baseline does not change); the rule breaks at look s when the
whole interval lies past the threshold (lower bound > amount, ≥ for ``>=``). Per-query changes
that are all equal give the point interval (no spread: the change is what it is on every
query, as :func:`ragmeter.analysis.monitor.welch_test` reads equal windows).

**The guarantee.** Let μ_s be the true mean change of look s's run against the baseline (over
the population the evaluation queries are drawn from). Whatever the runs are — each commit is
another system — P(some significant rule ever breaks at a look whose μ_s is within the rule's
threshold) ≤ Σ_s Σ_rules α_s / r = α, over any number of looks: a union bound over every
interval of every look, which needs no independence between looks (they re-use the same
queries). This is a stronger null than the plain gate's "no change": a true change that is
not zero but within the threshold may not fail the gate either. It rests on (1) the t
interval's coverage, approximate as the t test's (the per-query changes of a look taken as
independent draws); (2) each run fixed before it is looked at: a run tuned on the evaluation
queries after seeing earlier looks is no fresh draw, and no test on those queries holds.

**Why not one confidence sequence over the looks** (:mod:`ragmeter.stats.confseq`): a
confidence sequence follows one mean as new values arrive, while here every look re-reads the
same queries (no new values) for another run (another mean).

**The price.** α_s shrinks as 1/s² (α = 0.05: 0.0304 at look 1, 0.0076 at look 2, 0.0003 at
look 10, 3.4·10⁻⁵ at look 30), so later looks need a larger change, or more queries, to break
a rule; a rerun of a run already checked (the same file, by its sha256) re-reads its look and
spends nothing. Rules without ``significant`` compare the means, as the plain gate does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ragmeter.errors import RagmeterError

if TYPE_CHECKING:
    from ragmeter.analysis.gate import GateResult, Rule, RuleOutcome
    from ragmeter.evaluation.results import Evaluation, RunResult

#: what the sequential check's significant rules read (the table's and JSON's ``test``)
SEQUENTIAL_TEST = "t interval, α spent by look"


def look_alpha(alpha: float, look: int) -> float:
    """α_s = α · 6 / (π² s²): the share of α that look ``look`` (1-based) spends."""
    if look < 1:
        raise ValueError(f"a look is numbered from 1, got {look}")
    return alpha * 6.0 / (math.pi**2 * look * look)


def alpha_spent(alpha: float, looks: int) -> float:
    """Σ_{s ≤ looks} α_s: what the first ``looks`` looks have spent of α (less than α)."""
    return math.fsum(look_alpha(alpha, s) for s in range(1, looks + 1))


def t_interval(differences: npt.ArrayLike, alpha: float) -> tuple[float, float]:
    """The two-sided ``1 − alpha`` Student t interval for the mean of ``differences``:
    mean ± t_{1−α/2, n−1} · s / √n (s with divisor n − 1); the point interval when every
    difference is equal; at least 2 values."""
    d = np.asarray(differences, dtype=np.float64)
    if len(d) < 2:
        raise ValueError(f"a t interval needs 2 values, got {len(d)}")
    mean = float(d.mean())
    spread = float(d.std(ddof=1))
    if spread <= 1e-12 * max(1.0, float(np.abs(d).max())):  # equal up to rounding
        return mean, mean
    half = _t_multiplier(alpha, len(d) - 1) * spread / math.sqrt(len(d))
    return mean - half, mean + half


@lru_cache(maxsize=1024)
def _t_multiplier(alpha: float, df: int) -> float:
    """t_{1−α/2, df} (a bisection: cached, as a history's looks repeat the same levels)."""
    from ragmeter.stats.seeds import t_quantile

    return t_quantile(1.0 - alpha / 2.0, df)


@dataclass(frozen=True)
class Look:
    """Where a check stands in its history: the look's number, what it spends and what the
    looks so far have spent, the history's location, whether this run was checked before
    (then nothing more is spent), and the earlier looks that failed."""

    number: int
    alpha: float
    history: str
    repeated: bool = False
    failed_before: tuple[int, ...] = field(default_factory=tuple)

    @property
    def spends(self) -> float:
        """α_s of this look."""
        return look_alpha(self.alpha, self.number)

    @property
    def spent(self) -> float:
        """Σ α_s over the looks up to this one."""
        return alpha_spent(self.alpha, self.number)

    def to_dict(self) -> dict[str, Any]:
        return {
            "history": self.history,
            "look": self.number,
            "alpha_look": self.spends,
            "alpha_spent": self.spent,
            "repeated": self.repeated,
            "failed_before": list(self.failed_before),
        }


def check_look(
    evaluation: Evaluation,
    rules: Sequence[Rule],
    look: Look,
    *,
    baseline: int | str = 0,
) -> GateResult:
    """Check ``rules`` on an evaluation of the baseline and one run, as look ``look`` of a
    history (the module docs): significant rules on t intervals at α_s / r."""
    from ragmeter.analysis.gate import GateResult

    if len(evaluation.runs) != 2:
        raise RagmeterError(f"a gate compares two runs, got {len(evaluation.runs)}")
    if not 0.0 < look.alpha < 1.0:
        raise RagmeterError(f"--alpha must be in (0, 1), got {look.alpha}")
    base = evaluation[baseline]
    run = next(r for r in evaluation.runs if r is not base)
    tested = sum(1 for r in rules if r.significant)
    level = look.spends / max(tested, 1)
    outcomes = tuple(_outcome(rule, base, run, level, look) for rule in rules)
    return GateResult(
        run.name,
        base.name,
        outcomes,
        SEQUENTIAL_TEST,
        look.alpha,
        evaluation.warnings,
        correction="bonferroni",
        look=look.to_dict(),
    )


def _outcome(rule: Rule, base: RunResult, run: RunResult, level: float, look: Look) -> RuleOutcome:
    from ragmeter.analysis.gate import RuleOutcome, SequentialReading

    mu_base, mu_run = _mean(base, rule.measure), _mean(run, rule.measure)
    change = rule.change(mu_base, mu_run)
    past = rule.passes_threshold(change)
    sign = 0 if mu_run == mu_base else (1 if mu_run > mu_base else -1)
    if not rule.significant:
        return RuleOutcome(rule, mu_base, mu_run, change, past, math.nan, math.nan, sign, 0, past)
    changes = paired_changes(base, run, rule.measure)
    low, high = t_interval(changes, level)
    if rule.direction == "drop":
        low, high = -high, -low
    # + 0.0: a negated 0 reads -0.0
    low, high = _in_unit(rule, mu_base, low) + 0.0, _in_unit(rule, mu_base, high) + 0.0
    fired = low >= rule.amount if rule.inclusive else low > rule.amount
    reading = SequentialReading(
        "t",
        level,
        low,
        high,
        look.number,
        f"look {look.number}" if fired else None,
    )
    return RuleOutcome(
        rule, mu_base, mu_run, change, past, math.nan, math.nan, sign, len(changes), fired, reading
    )


def _in_unit(rule: Rule, base_mean: float, change: float) -> float:
    """A change in the rule's unit: itself, or in percent of the baseline's mean (from a mean
    of 0 a rise is +∞ %, as :meth:`~ragmeter.analysis.gate.Rule.change` reads it)."""
    if not rule.relative:
        return change
    if base_mean == 0.0:
        return math.inf if change > 0 else (0.0 if change == 0 else -math.inf)
    return 100.0 * change / abs(base_mean)


def paired_changes(base: RunResult, run: RunResult, measure: str) -> npt.NDArray[np.float64]:
    """run − baseline of ``measure`` on the queries both define, in the baseline's order; an
    error below two such queries, or for a measure not averaged over queries."""
    column = run.measures[run._index(measure)]
    if column.spec.aggregate != "mean":
        raise RagmeterError(
            f"{measure} is aggregated by its {column.spec.aggregate}, not its mean: a "
            "sequential significant rule reads the mean of the per-query changes (drop "
            "'significant' from it)"
        )
    theirs = dict(zip((str(q) for q in run.query_ids), run.column(measure).tolist(), strict=True))
    pairs = [
        (theirs[str(q)], b)
        for q, b in zip(base.query_ids, base.column(measure).tolist(), strict=True)
        if str(q) in theirs
    ]
    d = np.array([r - b for r, b in pairs if not (math.isnan(r) or math.isnan(b))])
    if len(d) < 2:
        raise RagmeterError(
            f"{measure}: {len(d)} quer{'y is' if len(d) == 1 else 'ies are'} defined in both "
            f"{base.name!r} and {run.name!r}; a significant rule needs 2"
        )
    return d


def _mean(result: RunResult, measure: str) -> float:
    from ragmeter.analysis.gate import _mean as gate_mean

    return gate_mean(result, measure)


def per_query_values(result: RunResult, measures: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``{measure: {query: value or None}}``: what a look records of a run (NA is None)."""
    out: dict[str, dict[str, Any]] = {}
    for m in measures:
        column = result.column(m).tolist()
        out[m] = {
            str(q): (None if math.isnan(v) else float(v))
            for q, v in zip(result.query_ids, column, strict=True)
        }
    return out


def values_digest(values: Mapping[str, Mapping[str, Any]]) -> str:
    """The sha256 of per-query values (:func:`per_query_values`), to know a baseline again."""
    import hashlib
    import json

    text = json.dumps(values, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


__all__ = [
    "SEQUENTIAL_TEST",
    "Look",
    "alpha_spent",
    "check_look",
    "look_alpha",
    "paired_changes",
    "per_query_values",
    "t_interval",
    "values_digest",
]
