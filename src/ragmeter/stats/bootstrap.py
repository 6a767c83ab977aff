"""Seeded percentile bootstrap of means, vectorized over replicates and columns.

A replicate draws n queries with replacement; its mean of column j is Σ_i c_i·v_ij / n with
c_i the number of times query i was drawn. The counts of a block of replicates form a matrix
C (replicates × n, from one ``bincount`` of a resampled-indices matrix), so the means of
every column are one product C·V — no Python loop per replicate. Columns resampled together
share their draws (a paired bootstrap), and the draws depend only on ``seed`` and n.

A percentile interval needs a few values: with n values, a resample that repeats one value n
times has probability n·(1/n)ⁿ = n^(1−n), and once (1/n)ⁿ — one given extreme value drawn n
times — reaches the tail (1 − c)/2, the interval's ends are the smallest and largest values
themselves: the range of the data, not an interval at level c. :func:`min_bootstrap_n` is
the smallest n with (1/n)ⁿ < (1 − c)/2 (4 at 95%); :func:`bootstrap_ci` gives no interval
(NaN) below it, and ``compare`` says so.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ragmeter.stats._common import FloatArray, as_columns

#: int64 resampled indices materialised at once
_CHUNK_BYTES = 32 << 20


def min_bootstrap_n(confidence: float = 0.95) -> int:
    """Smallest n with (1/n)ⁿ < (1 − confidence)/2: the fewest values a percentile bootstrap
    interval is computed from (4 at 95% and 99%, 5 at 99.9%)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    tail = (1.0 - confidence) / 2.0
    n = 1
    while n**-n >= tail:  # n^-n falls faster than geometrically: a handful of steps
        n += 1
    return n


def bootstrap_means(
    values: npt.ArrayLike,
    *,
    replicates: int = 10_000,
    seed: int | None = 0,
) -> FloatArray:
    """Means of ``replicates`` bootstrap resamples of the rows of ``values`` (n × k, no NaN).

    Returns a replicates × k array (a 1-d input gives replicates × 1). Replicate b draws
    indices i_b1..i_bn uniformly from 0..n−1 (``numpy.random.default_rng(seed)``) and its
    mean of column j is (1/n) Σ_t v[i_bt, j].
    """
    v = as_columns(values, "bootstrap values must not be NaN; drop NA queries first")
    if replicates < 1:
        raise ValueError(f"replicates must be ≥ 1, got {replicates}")
    n, k = v.shape
    out = np.full((replicates, k), np.nan)
    if n == 0:
        return out
    rng = np.random.default_rng(seed)
    chunk = max(1, min(replicates, _CHUNK_BYTES // (8 * n)))
    done = 0
    while done < replicates:
        c = min(chunk, replicates - done)
        idx = rng.integers(0, n, size=(c, n), dtype=np.int64)
        idx += (np.arange(c, dtype=np.int64) * n)[:, None]
        counts = np.bincount(idx.reshape(-1), minlength=c * n).reshape(c, n)
        out[done : done + c] = (counts.astype(np.float64) @ v) / n
        done += c
    return out


def percentile_interval(
    replicates: npt.ArrayLike, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """Percentile interval per column: the (1 − c)/2 and (1 + c)/2 quantiles of the replicate
    statistics (linear interpolation, ``numpy.quantile``'s default)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    r = np.asarray(replicates, dtype=np.float64)
    if r.ndim == 1:
        r = r[:, None]
    if r.shape[0] == 0 or np.isnan(r).all():
        nan = np.full(r.shape[1], np.nan)
        return nan, nan.copy()
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(r, [alpha, 1.0 - alpha], axis=0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def bootstrap_ci(
    values: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    replicates: int = 10_000,
    seed: int | None = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of ``values`` (NaN = NA, dropped).

    (NaN, NaN) when fewer than :func:`min_bootstrap_n` values are defined (none, or too few
    for an interval at this level).
    """
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    v = v[~np.isnan(v)]
    if v.shape[0] < min_bootstrap_n(confidence):
        return float("nan"), float("nan")
    means = bootstrap_means(v, replicates=replicates, seed=seed)
    low, high = percentile_interval(means, confidence)
    return float(low[0]), float(high[0])


def paired_bootstrap_ci(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    replicates: int = 10_000,
    seed: int | None = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of mean(x − y) over the queries where both are defined."""
    from ragmeter.stats._common import defined_pairs

    a, b = defined_pairs(x, y)
    return bootstrap_ci(a - b, confidence=confidence, replicates=replicates, seed=seed)
