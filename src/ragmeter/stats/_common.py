"""Helpers shared by the statistics modules: scipy on demand, ranks, NA filtering."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ragmeter.errors import RagmeterError

FloatArray = npt.NDArray[np.float64]


class OptionalDependencyError(RagmeterError, ImportError):
    """An optional dependency needed by a feature is not installed."""


def as_columns(values: npt.ArrayLike, nan_error: str) -> FloatArray:
    """``values`` as a float matrix, one column per series (a 1-D input is one column); a NaN
    in it is a ``ValueError`` saying ``nan_error``."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        v = v[:, None]
    if np.isnan(v).any():
        raise ValueError(nan_error)
    return v


def scipy_special() -> Any:
    """``scipy.special``, imported on first use (the ``stats`` extra)."""
    try:
        import scipy.special
    except ImportError as exc:  # pragma: no cover - scipy is in the dev extra
        from ragmeter.errors import install_hint

        raise OptionalDependencyError(
            "this statistic needs scipy for its distribution; "
            f"install it with: {install_hint('stats')}"
        ) from exc
    return scipy.special


def normal_two_sided(z: float) -> float:
    """Two-sided p-value of a standard normal statistic: p = 2·Φ(−|z|) = erfc(|z|/√2)."""
    import math

    if np.isnan(z):
        return float("nan")
    return float(math.erfc(abs(z) / math.sqrt(2.0)))


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (modified Lentz's method)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
            last = d * c
        if abs(last - 1.0) < 1e-16:
            break
    return h


def betainc_regularized(a: float, b: float, x: float, y: float | None = None) -> float:
    """I_x(a, b) = B(x; a, b) / B(a, b), by its continued fraction (pure Python).

    I_x(a, b) = x^a (1 − x)^b / (a·B(a, b)) · CF(a, b, x) for x < (a + 1)/(a + b + 2), else
    1 − I_{1−x}(b, a) (the fraction converges fast on that side); ``y`` = 1 − x when the
    caller has it to more digits than ``1 − x`` would give.
    """
    import math

    y = 1.0 - x if y is None else y
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = (
        math.lgamma(a + b)
        - math.lgamma(a)
        - math.lgamma(b)
        + a * (math.log1p(-y) if y < 0.5 else math.log(x))
        + b * (math.log1p(-x) if x < 0.5 else math.log(y))
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, y) / b


def t_two_sided(t: float, df: float) -> float:
    """Two-sided p-value of Student's t with ``df`` degrees of freedom: p = 2·F_df(−|t|).

    2·F_df(−|t|) = I_{df/(df + t²)}(df/2, 1/2) (regularized incomplete beta), computed here
    without scipy so that the t-test and Spearman's large-n p-value need no extra.
    """
    import math

    if np.isnan(t) or df <= 0:
        return float("nan")
    if math.isinf(t):
        return 0.0
    t2 = t * t
    # 1 − x = t²/(df + t²) computed directly keeps the digits of p near 1
    return float(min(1.0, betainc_regularized(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2))))


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
