"""Anytime-valid confidence sequences for means and differences of means of per-query values.

A :class:`ConfidenceSequence` holds an interval after every value: the chance that **any** of
them misses the true mean is at most α, however many times it is looked at and whenever the
looking stops (:mod:`ragmeter.stats.confseq_core` has the formulas and references). This is
what a monitor re-checked every day, or a gate re-run on every commit, needs: a fixed-n
interval or test re-read at each look misses far more often than its nominal level.

* :func:`confidence_sequence` — the mean of values in known bounds (``"empirical-bernstein"``,
  nonasymptotic; the default) or of any finite values (``"asymptotic"``).
* :func:`paired_difference_sequence` — the mean of per-query differences a − b (the same
  queries in both, in the order they arrive).
* :func:`difference_from_reference` — the mean of a stream minus the mean of a fixed
  reference sample (unpaired): the reference's interval at α/2 (a CS read at its own n is a
  valid interval there) and the stream's CS at α/2, combined by a union bound, so the
  difference's sequence misses with probability at most α.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ragmeter.stats import confseq_core as core

FloatArray = npt.NDArray[np.float64]
Method = Literal["empirical-bernstein", "asymptotic"]
METHODS: tuple[Method, ...] = ("empirical-bernstein", "asymptotic")
#: the asymptotic CS's default time t* at which its boundary is tightest (fixed in advance:
#: choosing it from the data would void the guarantee)
DEFAULT_OPTIMISED_AT = 100
#: the asymptotic CS's intervals are infinite before this many values (its guarantee is
#: asymptotic: a variance estimated from a few values is too small too often)
ASYMPTOTIC_BURN_IN = 30


@dataclass(frozen=True)
class ConfidenceSequence:
    """Intervals after each of ``n`` values: ``lower[t-1] ≤ μ ≤ upper[t-1]`` for every t at once
    with probability at least 1 − ``alpha`` (running intersection: they never widen)."""

    lower: FloatArray
    upper: FloatArray
    alpha: float
    method: Method

    @property
    def n(self) -> int:
        """How many values the sequence has seen."""
        return len(self.lower)

    def at(self, t: int) -> tuple[float, float]:
        """The interval after the first ``t`` values (1-based)."""
        if not 1 <= t <= self.n:
            raise ValueError(f"t must be in 1..{self.n}, got {t}")
        return float(self.lower[t - 1]), float(self.upper[t - 1])

    @property
    def last(self) -> tuple[float, float]:
        """The interval after every value."""
        return self.at(self.n)

    def first_below(self, threshold: float) -> int | None:
        """The first t (1-based) whose whole interval lies below ``threshold``, or ``None``."""
        hits = np.flatnonzero(self.upper < threshold)
        return int(hits[0]) + 1 if len(hits) else None

    def first_above(self, threshold: float) -> int | None:
        """The first t (1-based) whose whole interval lies above ``threshold``, or ``None``."""
        hits = np.flatnonzero(self.lower > threshold)
        return int(hits[0]) + 1 if len(hits) else None


def _level(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(alpha)


def _values(values: npt.ArrayLike, what: str) -> FloatArray:
    x = np.asarray(values, dtype=np.float64).ravel()
    if len(x) == 0:
        raise ValueError(f"{what}: no values")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what}: NaN or infinite values (drop undefined values first)")
    return x


def _bounded(x: FloatArray, bounds: tuple[float, float], what: str) -> FloatArray:
    low, high = bounds
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"bounds must be finite with low < high, got {bounds!r}")
    outside = np.flatnonzero((x < low) | (x > high))
    if len(outside):
        i = int(outside[0])
        raise ValueError(
            f"{what}: value {float(x[i])!r} (number {i + 1}) is outside [{low}, {high}]"
        )
    return (x - low) / (high - low)


def confidence_sequence(
    values: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    method: Method = "empirical-bernstein",
    bounds: tuple[float, float] = (0.0, 1.0),
    optimised_at: float = DEFAULT_OPTIMISED_AT,
) -> ConfidenceSequence:
    """A two-sided confidence sequence for the mean of ``values``, in the order given.

    ``"empirical-bernstein"``: values in ``bounds`` (rescaled to [0, 1] and back),
    nonasymptotic; ``"asymptotic"``: any finite values, valid as ``optimised_at`` (t*) grows,
    infinite before :data:`ASYMPTOTIC_BURN_IN` values.
    Undefined values must be dropped (and said) before: NaN is an error here."""
    level = _level(alpha)
    x = _values(values, "values")
    if method == "empirical-bernstein":
        low, high = bounds
        lower, upper = core.empirical_bernstein_cs(_bounded(x, bounds, "values"), level)
        lower, upper = low + (high - low) * lower, low + (high - low) * upper
    elif method == "asymptotic":
        if not optimised_at >= 1:
            raise ValueError(f"optimised_at must be ≥ 1, got {optimised_at!r}")
        lower, upper = core.asymptotic_cs(x, level, float(optimised_at), ASYMPTOTIC_BURN_IN)
    else:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    lower, upper = core.running_intersection(lower, upper)
    return ConfidenceSequence(lower, upper, level, method)


def paired_difference_sequence(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    method: Method = "empirical-bernstein",
    bounds: tuple[float, float] = (0.0, 1.0),
    optimised_at: float = DEFAULT_OPTIMISED_AT,
) -> ConfidenceSequence:
    """A confidence sequence for the mean of a_i − b_i (each pair one query, in arrival order);
    with values in [lo, hi] the differences lie in [lo − hi, hi − lo]."""
    x, y = _values(a, "a"), _values(b, "b")
    if len(x) != len(y):
        raise ValueError(f"paired values differ in length: {len(x)} and {len(y)}")
    width = bounds[1] - bounds[0]
    return confidence_sequence(
        x - y, alpha=alpha, method=method, bounds=(-width, width), optimised_at=optimised_at
    )


def difference_from_reference(
    reference: npt.ArrayLike,
    stream: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    method: Method = "empirical-bernstein",
    bounds: tuple[float, float] = (0.0, 1.0),
    optimised_at: float = DEFAULT_OPTIMISED_AT,
) -> ConfidenceSequence:
    """A confidence sequence for mean(stream) − mean(reference), the reference a fixed sample
    and the stream read value by value (unpaired):

        [L_t − U_ref,  U_t − L_ref],

    (L_t, U_t) the stream's CS at α/2, (L_ref, U_ref) the reference's CS at α/2 read after all
    its values. P(some interval misses) ≤ α/2 + α/2 = α."""
    half = _level(alpha) / 2.0

    def sequence(values: npt.ArrayLike) -> ConfidenceSequence:
        return confidence_sequence(
            values, alpha=half, method=method, bounds=bounds, optimised_at=optimised_at
        )

    ref_low, ref_high = sequence(reference).last
    new = sequence(stream)
    return ConfidenceSequence(new.lower - ref_high, new.upper - ref_low, float(alpha), method)


@dataclass(frozen=True)
class Reading:
    """One interval for mean(values since look ``start``) − mean(reference) at a look."""

    lower: float
    upper: float
    start: int


@dataclass(frozen=True)
class ChangeScan:
    """Per look t (1-based in :attr:`looks`), the sharpest readings of a change from the
    reference over every start s ≤ t: ``lowest_upper[t-1]`` the reading whose upper bound is
    smallest (evidence of a drop), ``highest_lower[t-1]`` the one whose lower bound is largest
    (evidence of a rise)."""

    lowest_upper: tuple[Reading, ...]
    highest_lower: tuple[Reading, ...]
    alpha: float
    method: Method

    @property
    def looks(self) -> int:
        return len(self.lowest_upper)


def start_level(alpha: float, start: int) -> float:
    """α_s = (α/2) · 6 / (π² s²): the level of the sequence started at look s (Σ_s α_s = α/2)."""
    return (alpha / 2.0) * 6.0 / (np.pi**2 * start * start)


def scan_from_reference(
    reference: npt.ArrayLike,
    looks: Sequence[npt.ArrayLike],
    *,
    alpha: float = 0.05,
    method: Method = "empirical-bernstein",
    bounds: tuple[float, float] = (0.0, 1.0),
    optimised_at: float = DEFAULT_OPTIMISED_AT,
) -> ChangeScan:
    """Anytime-valid readings of a change from a fixed reference, for a stream read in looks
    (windows) whose change may start at any look.

    The reference gets its interval at α/2 (read after all its values). For every start s, the
    values from look s on get a confidence sequence at α_s = (α/2)·6/(π²s²) (so Σ α_s = α/2),
    and the change since s is read at each later look t as
    [L_{s,t} − U_ref, U_{s,t} − L_ref]. On a stream with no change every one of these covers
    the true difference 0 at every look with probability ≥ 1 − α (a union bound), so a rule
    that fires when any reading lies wholly past its threshold fires falsely with probability
    ≤ α over all looks; a change that starts at look c is read on the values since c alone,
    undiluted by the looks before it.
    """
    level = _level(alpha)
    ref_low, ref_high = confidence_sequence(
        reference, alpha=level / 2.0, method=method, bounds=bounds, optimised_at=optimised_at
    ).last
    parts = [np.asarray(p, dtype=np.float64).ravel() for p in looks]
    ends = np.cumsum([len(p) for p in parts])
    low_up: list[Reading | None] = [None] * len(parts)
    high_low: list[Reading | None] = [None] * len(parts)
    for s in range(len(parts)):
        since = np.concatenate(parts[s:])
        if len(since) == 0:
            continue
        cs = confidence_sequence(
            since,
            alpha=start_level(level, s + 1),
            method=method,
            bounds=bounds,
            optimised_at=optimised_at,
        )
        begin = int(ends[s] - len(parts[s]))
        for t in range(s, len(parts)):
            seen = int(ends[t]) - begin
            if seen == 0:
                continue
            reading = Reading(
                float(cs.lower[seen - 1] - ref_high), float(cs.upper[seen - 1] - ref_low), s + 1
            )
            best = low_up[t]
            if best is None or reading.upper < best.upper:
                low_up[t] = reading
            best = high_low[t]
            if best is None or reading.lower > best.lower:
                high_low[t] = reading
    empty = Reading(-np.inf, np.inf, 0)
    return ChangeScan(
        tuple(r or empty for r in low_up), tuple(r or empty for r in high_low), level, method
    )


__all__ = [
    "ASYMPTOTIC_BURN_IN",
    "DEFAULT_OPTIMISED_AT",
    "METHODS",
    "ChangeScan",
    "ConfidenceSequence",
    "Method",
    "Reading",
    "confidence_sequence",
    "difference_from_reference",
    "paired_difference_sequence",
    "scan_from_reference",
    "start_level",
]
