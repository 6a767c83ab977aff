"""Monte Carlo coverage of confidence intervals, each rate with its standard error: the one
loop of the coverage studies (``benchmarks/ppi_coverage.py``) and of the tests that check an
interval covers about as often as it says.

A draw that gives no interval counts as a miss: an estimator that declines to give an
interval has not covered the truth.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

Interval = tuple[float, float] | None


@dataclass(frozen=True)
class Coverage:
    """How often intervals held the truth over ``draws`` draws.

    Attributes:
        hits: draws whose interval held the truth.
        draws: the number of draws.
        missing: draws without an interval (counted as misses).
        mean_width: the mean width of the intervals given (NaN when none was).
    """

    hits: int
    draws: int
    missing: int
    mean_width: float

    @property
    def rate(self) -> float:
        """The share of draws whose interval held the truth, ``hits / draws``."""
        return self.hits / self.draws

    @property
    def se(self) -> float:
        """Its Monte Carlo standard error, ``√(rate·(1 − rate)/draws)`` (binomial)."""
        return math.sqrt(self.rate * (1.0 - self.rate) / self.draws)

    def text(self) -> str:
        """``89.6 % ± 0.7``: the rate and its standard error, in percent."""
        return f"{100 * self.rate:.1f} % ± {100 * self.se:.1f}"


def tally(intervals: list[Interval], truth: float) -> Coverage:
    """The coverage of ``truth`` by ``intervals`` (``None``: no interval, a miss)."""
    given = [ci for ci in intervals if ci is not None]
    hits = sum(1 for low, high in given if low <= truth <= high)
    widths = [high - low for low, high in given]
    mean_width = float(np.mean(widths)) if widths else math.nan
    return Coverage(hits, len(intervals), len(intervals) - len(given), mean_width)


def coverages(
    draw: Callable[[np.random.Generator], Mapping[str, Interval]],
    truth: float,
    *,
    draws: int,
    seed: int,
) -> dict[str, Coverage]:
    """The coverage of ``truth`` by each named interval ``draw`` returns, over ``draws``
    draws from one generator seeded with ``seed`` (every interval of a draw sees the same
    data, so the estimators are compared on the same samples)."""
    rng = np.random.default_rng(seed)
    seen: dict[str, list[Interval]] = {}
    for _ in range(draws):
        for name, interval in draw(rng).items():
            seen.setdefault(name, []).append(interval)
    return {name: tally(intervals, truth) for name, intervals in seen.items()}


def coverage(
    draw: Callable[[np.random.Generator], Interval], truth: float, *, draws: int, seed: int
) -> Coverage:
    """The share of draws whose interval holds ``truth``, with its Monte Carlo standard
    error (:class:`Coverage`)."""
    return coverages(lambda rng: {"": draw(rng)}, truth, draws=draws, seed=seed)[""]
