"""Corrections of p-values for many comparisons (family-wise error rate)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from ragmeter.stats._common import FloatArray

Correction = Literal["holm", "bonferroni", "none"]
CORRECTIONS: tuple[Correction, ...] = ("holm", "bonferroni", "none")


def bonferroni(pvalues: npt.ArrayLike) -> FloatArray:
    """Bonferroni: p̃_i = min(1, m·p_i), m = number of defined p-values (NaN stays NaN)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = int(np.sum(~np.isnan(p)))
    return np.minimum(1.0, p * m)


def holm(pvalues: npt.ArrayLike) -> FloatArray:
    """Holm's step-down: with p_(1) ≤ … ≤ p_(m) sorted,
    p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)); m = number of defined p-values.

    Uniformly more powerful than Bonferroni with the same family-wise guarantee. NaN stays NaN.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    defined = np.flatnonzero(~np.isnan(p))
    m = defined.shape[0]
    if m == 0:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    scaled = (m - np.arange(m)) * p[order]
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


def adjust(pvalues: npt.ArrayLike, method: Correction = "holm") -> FloatArray:
    """Adjusted p-values by ``method`` (``holm``, ``bonferroni`` or ``none``)."""
    if method == "holm":
        return holm(pvalues)
    if method == "bonferroni":
        return bonferroni(pvalues)
    if method == "none":
        return np.asarray(pvalues, dtype=np.float64).copy()
    raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
