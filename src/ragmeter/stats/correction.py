"""Corrections of p-values for many comparisons: Bonferroni and Holm bound the family-wise
error rate (the chance of any false positive); Benjamini–Hochberg bounds the false discovery
rate (the expected share of false positives among the significant results)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import numpy.typing as npt

from ragmeter.stats._common import FloatArray

Correction = Literal["holm", "bonferroni", "bh", "none"]
CORRECTIONS: tuple[Correction, ...] = ("holm", "bonferroni", "bh", "none")


def bonferroni(pvalues: npt.ArrayLike) -> FloatArray:
    """Bonferroni: p̃_i = min(1, m·p_i), m = number of defined p-values (NaN stays NaN)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = int(np.sum(~np.isnan(p)))
    return np.minimum(1.0, p * m)


def _step(
    pvalues: npt.ArrayLike, adjust_sorted: Callable[[FloatArray, int], FloatArray]
) -> FloatArray:
    """The p-values adjusted by ``adjust_sorted(p_(1..m), m)`` over the defined ones sorted
    ascending (ties in input order), capped at 1; NaN stays NaN."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    defined = np.flatnonzero(~np.isnan(p))
    m = defined.shape[0]
    if m == 0:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    out[order] = np.minimum(1.0, adjust_sorted(p[order], m))
    return out


def holm(pvalues: npt.ArrayLike) -> FloatArray:
    """Holm's step-down: with p_(1) ≤ … ≤ p_(m) sorted,
    p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)); m = number of defined p-values.

    Uniformly more powerful than Bonferroni with the same family-wise guarantee. NaN stays NaN.
    """
    return _step(pvalues, lambda sorted_p, m: np.maximum.accumulate((m - np.arange(m)) * sorted_p))


def benjamini_hochberg(pvalues: npt.ArrayLike) -> FloatArray:
    """Benjamini–Hochberg step-up: with p_(1) ≤ … ≤ p_(m) sorted,
    p̃_(i) = min_{j ≥ i} min(1, m·p_(j) / j); m = number of defined p-values.

    Rejecting every p̃ ≤ α keeps the false discovery rate at most α for independent (or
    positively dependent) tests (Benjamini & Hochberg 1995). NaN stays NaN.
    """

    def step_up(sorted_p: FloatArray, m: int) -> FloatArray:
        scaled = m * sorted_p / np.arange(1, m + 1)
        return np.minimum.accumulate(scaled[::-1])[::-1]

    return _step(pvalues, step_up)


def adjust(pvalues: npt.ArrayLike, method: Correction = "holm") -> FloatArray:
    """Adjusted p-values by ``method`` (``holm``, ``bonferroni``, ``bh`` or ``none``)."""
    if method == "holm":
        return holm(pvalues)
    if method == "bh":
        return benjamini_hochberg(pvalues)
    if method == "bonferroni":
        return bonferroni(pvalues)
    if method == "none":
        return np.asarray(pvalues, dtype=np.float64).copy()
    raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")


def smallest_adjusted(smallest: npt.ArrayLike, method: Correction = "holm") -> FloatArray:
    """A lower bound of each adjusted p-value, from the smallest p-value each test can give.

    With s_i the smallest p test i can reach and K the number of defined tests: p̃_i ≥ s_i
    (``none``, ``bh``: K·p_(j)/j ≥ p_(j) ≥ p_(i) for j ≥ i), K·s_i (``bonferroni``), and
    max(s_i, K·min_j s_j) (``holm``: p̃_(i) ≥ K·p_(1) and ≥ p_(i)). When the bound is above α
    no data on these queries can make the difference significant. NaN stays NaN.
    """
    s = np.asarray(smallest, dtype=np.float64)
    k = int(np.sum(~np.isnan(s)))
    if method in ("none", "bh") or k == 0:
        return s.copy()
    if method == "bonferroni":
        return np.minimum(1.0, k * s)
    if method == "holm":
        return np.minimum(1.0, np.maximum(s, k * float(np.nanmin(s))))
    raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
