"""Helpers shared by the statistics modules: scipy on demand, ranks, NA filtering."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ragmeter.errors import RagmeterError

FloatArray = npt.NDArray[np.float64]


class OptionalDependencyError(RagmeterError, ImportError):
    """An optional dependency needed by a feature is not installed."""


def scipy_special() -> Any:
    """``scipy.special``, imported on first use (the ``stats`` extra)."""
    try:
        import scipy.special
    except ImportError as exc:  # pragma: no cover - scipy is in the dev extra
        raise OptionalDependencyError(
            "this statistic needs scipy for its distribution; "
            'install it with: pip install "ragmeter[stats]"'
        ) from exc
    return scipy.special


def normal_two_sided(z: float) -> float:
    """Two-sided p-value of a standard normal statistic: p = 2·Φ(−|z|) = erfc(|z|/√2)."""
    import math

    if np.isnan(z):
        return float("nan")
    return float(math.erfc(abs(z) / math.sqrt(2.0)))


def t_two_sided(t: float, df: float) -> float:
    """Two-sided p-value of Student's t with ``df`` degrees of freedom: p = 2·F_df(−|t|)."""
    if np.isnan(t) or df <= 0:
        return float("nan")
    return float(2.0 * scipy_special().stdtr(df, -abs(t)))


def average_ranks(values: npt.ArrayLike) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Ranks 1..n with ties sharing their average rank, and the sizes of the tie groups.

    rank(x_i) = (first + last) / 2 over the positions (1-based) of x_i's group in sorted order.
    """
    x = np.asarray(values)
    n = x.shape[0]
    if n == 0:
        return np.empty(0), np.empty(0, dtype=np.int64)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    sizes = np.diff(np.r_[starts, n]).astype(np.int64)
    group_rank = starts + (sizes + 1) / 2.0  # average of positions start+1 .. start+size
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.repeat(group_rank, sizes)
    return ranks, sizes


def dense_codes(values: npt.ArrayLike) -> npt.NDArray[np.intp]:
    """Dense ranks 0..m−1 of ``values`` (equal values share a code; order preserved)."""
    _, inverse = np.unique(np.asarray(values), return_inverse=True)
    return np.asarray(inverse, dtype=np.intp).reshape(-1)


def defined_pairs(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """``x``, ``y`` as float arrays restricted to positions where both are defined (not NaN)."""
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    b = np.asarray(y, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"x and y differ in length ({a.shape[0]} and {b.shape[0]})")
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]
