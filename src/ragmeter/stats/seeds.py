"""Several seeds (or folds) of one system: the mean across seeds with a t-interval.

A system trained with s seeds gives s runs; each is evaluated as usual and its mean over the
queries taken (the mean ``evaluate`` reports). Across the s seed means m_1 … m_s:

    m̄ = Σ m_i / s,   sd = √(Σ (m_i − m̄)² / (s − 1)),
    CI = m̄ ± t_{(1 + c)/2, s − 1} · sd / √s

(Student's t-interval over the seed means at confidence c: the seeds are the sample, so the
interval says how much the system's score moves from seed to seed, not from query to query).
A seed whose mean is undefined (no query defines the measure) is left out and counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ragmeter.stats._common import t_two_sided

if TYPE_CHECKING:  # an Evaluation is read, never built, here (it lives a layer above)
    from ragmeter.evaluation.results import Evaluation


def t_quantile(probability: float, df: float) -> float:
    """The ``probability`` quantile of Student's t with ``df`` degrees of freedom (for
    probability ≥ 0.5), by bisection on the two-sided tail 2·(1 − F(t)) = 2·(1 − p)."""
    if not 0.5 <= probability < 1.0 or df <= 0:
        raise ValueError(f"need 0.5 ≤ probability < 1 and df > 0, got {probability}, {df}")
    tail = 2.0 * (1.0 - probability)
    low, high = 0.0, 1.0
    while t_two_sided(high, df) > tail:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_two_sided(mid, df) > tail:
            low = mid
        else:
            high = mid
        if high - low <= 1e-13 * max(1.0, high):
            break
    return (low + high) / 2.0


def seed_interval(
    seed_means: npt.ArrayLike, confidence: float = 0.95
) -> tuple[float, float, float, float]:
    """(mean, sd, low, high) of the seed means: the t-interval of the module docs.

    NaN seed means are left out; sd and the interval are NaN below two seeds.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    m = np.asarray(seed_means, dtype=np.float64)
    m = m[~np.isnan(m)]
    s = m.shape[0]
    if s == 0:
        return math.nan, math.nan, math.nan, math.nan
    mean = float(m.mean())
    if s < 2:
        return mean, math.nan, math.nan, math.nan
    sd = float(np.std(m, ddof=1))
    half = t_quantile((1.0 + confidence) / 2.0, s - 1) * sd / math.sqrt(s)
    return mean, sd, mean - half, mean + half


@dataclass(frozen=True)
class SeedSummary:
    """One system over its seeds on one measure.

    Attributes:
        group: the system's name; seeds: its runs; seed_means: each run's mean (NaN: none).
        mean, sd: of the defined seed means; ci_low, ci_high: the t-interval at
            ``confidence`` (NaN below two seeds); n_seeds: seeds with a defined mean.
    """

    group: str
    measure: str
    seeds: tuple[str, ...]
    seed_means: tuple[float, ...]
    mean: float
    sd: float
    ci_low: float
    ci_high: float
    confidence: float
    n_seeds: int

    def to_dict(self) -> dict[str, Any]:
        def clean(v: float) -> float | None:
            return None if math.isnan(v) else v

        return {
            "group": self.group,
            "measure": self.measure,
            "seeds": list(self.seeds),
            "seed_means": [clean(v) for v in self.seed_means],
            "mean": clean(self.mean),
            "sd": clean(self.sd),
            "ci": [clean(self.ci_low), clean(self.ci_high)],
            "confidence": self.confidence,
            "n_seeds": self.n_seeds,
            "interval": "t over seed means",
        }


def check_groups(names: Sequence[str], groups: Mapping[str, Sequence[str]]) -> None:
    """Each group names runs of ``names``, none twice, and no group takes the name of a run
    outside it (clear errors naming the group and run)."""
    seen: dict[str, str] = {}
    for group, members in groups.items():
        if not members:
            raise ValueError(f"group {group!r} has no runs")
        for run in members:
            if run not in names:
                raise KeyError(f"group {group!r}: no run named {run!r}; have {list(names)}")
            if run in seen:
                raise ValueError(f"run {run!r} is in groups {seen[run]!r} and {group!r}")
            seen[run] = group
        if group in names and group not in members:
            raise ValueError(f"group {group!r} has the name of a run outside it")


def seed_summaries(
    evaluation: Evaluation,
    groups: Mapping[str, Sequence[str]],
    *,
    measures: Sequence[str] | None = None,
    confidence: float = 0.95,
) -> tuple[SeedSummary, ...]:
    """Mean ± t-interval across the seeds of each group (group name → its runs' names), for
    each measure (default: all evaluated), group then measure order.

    Example:
        >>> import ragmeter
        >>> qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
        >>> runs = {
        ...     "s1": ragmeter.Run.from_lists({"q1": ["a"], "q2": ["a"]}),
        ...     "s2": ragmeter.Run.from_lists({"q1": ["x", "a"], "q2": ["a"]}),
        ... }
        >>> [s] = seed_summaries(ragmeter.evaluate(runs, qrels, ["mrr"]), {"sys": ["s1", "s2"]})
        >>> s.seed_means, s.mean, round(s.ci_low, 4), round(s.ci_high, 4)
        ((1.0, 0.75), 0.875, -0.7133, 2.4633)
    """
    names = [r.name for r in evaluation.runs]
    check_groups(names, groups)
    chosen = list(measures) if measures is not None else [str(m) for m in evaluation.measures]
    out = []
    for group, members in groups.items():
        first = evaluation[members[0]]
        for measure in chosen:
            label = str(first.measures[first._index(measure)])  # the evaluated measure's name
            means = []
            for run in members:
                agg = evaluation[run].aggregate(measure)
                means.append(math.nan if agg.mean is None else float(agg.mean))
            mean, sd, low, high = seed_interval(means, confidence)
            out.append(
                SeedSummary(
                    group=group,
                    measure=label,
                    seeds=tuple(members),
                    seed_means=tuple(means),
                    mean=mean,
                    sd=sd,
                    ci_low=low,
                    ci_high=high,
                    confidence=confidence,
                    n_seeds=int(np.sum(~np.isnan(np.asarray(means)))),
                )
            )
    return tuple(out)
