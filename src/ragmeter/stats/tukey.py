"""Tukey's honestly significant difference for runs measured on the same queries.

The variant is the **repeated-measures** (randomised complete block) one that IR evaluation
uses (Carterette 2012; Sakai 2014): the queries are blocks, the runs the treatment, and the
error term is that of the two-way ANOVA without interaction. For an n × k matrix X (n queries
defined for every run, k runs) with row means x̄_i·, column means x̄_·j and grand mean x̄:

    SSE = Σ_ij (x_ij − x̄_i· − x̄_·j + x̄)²,   df = (n − 1)(k − 1),   MSE = SSE / df
    q_ab = |x̄_·a − x̄_·b| / √(MSE / n),          p_ab = P(Q_{k, df} ≥ q_ab)

with Q_{k, df} the studentized range of k means on df degrees of freedom
(``scipy.stats.studentized_range``; the ``stats`` extra). For k = 2 this is the paired t-test:
q = √2·|t| on n − 1 degrees of freedom, the same p. Tukey's p-values are already adjusted for
all k(k − 1)/2 pairs (the family-wise error rate of the family of pairs).

The one-way (independent groups, Tukey–Kramer) variant of ``scipy.stats.tukey_hsd`` and
statsmodels' ``pairwise_tukeyhsd`` ignores that every run answered the same queries: its error
term keeps the between-query variance and its df is k(n − 1). :func:`tukey_hsd` offers it as
``variant="independent"`` for reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ragmeter.errors import MissingExtraError
from ragmeter.stats._common import FloatArray

TukeyVariant = Literal["repeated", "independent"]

#: how the HSD of ragmeter's all-pairs comparison is computed, in words
REPEATED_MEASURES = (
    "repeated-measures Tukey HSD: queries as blocks, error of the two-way ANOVA without "
    "interaction, df = (n − 1)(k − 1), on the queries every run defines"
)


def _studentized_range() -> Any:
    try:
        from scipy.stats import studentized_range
    except ImportError:  # pragma: no cover - scipy is in the dev extra
        raise MissingExtraError(
            "Tukey's HSD (the studentized range distribution)", package="scipy", extra="stats"
        ) from None
    return studentized_range


@dataclass(frozen=True)
class TukeyHSD:
    """Tukey's HSD over k runs.

    Attributes:
        means: the k column means.
        statistic: k × k studentized range statistics q_ab (0 on the diagonal).
        pvalue: k × k p-values (1 on the diagonal); NaN when n is too small.
        mse: the error mean square; df: its degrees of freedom; n: queries used.
        variant: ``repeated`` (queries as blocks) or ``independent`` (one-way).
    """

    means: FloatArray
    statistic: FloatArray
    pvalue: FloatArray
    mse: float
    df: int
    n: int
    variant: TukeyVariant


def tukey_hsd(values: npt.ArrayLike, *, variant: TukeyVariant = "repeated") -> TukeyHSD:
    """Tukey's HSD of the k columns of ``values`` (n queries × k runs, no NaN).

    ``repeated``: the formula of the module docs. ``independent``: the one-way Tukey test on
    equal groups, MSE = Σ_ij (x_ij − x̄_·j)² / (k(n − 1)), q_ab = |x̄_·a − x̄_·b| / √(MSE / n),
    as ``scipy.stats.tukey_hsd``.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"values must be n × k with k ≥ 2, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("values must not be NaN; keep only the queries every run defines")
    n, k = x.shape
    means = x.mean(axis=0)
    if variant == "repeated":
        resid = x - x.mean(axis=1, keepdims=True) - means[None, :] + x.mean()
        df = (n - 1) * (k - 1)
    elif variant == "independent":
        resid = x - means[None, :]
        df = k * (n - 1)
    else:
        raise ValueError(f"variant must be 'repeated' or 'independent', got {variant!r}")
    gaps = np.abs(means[:, None] - means[None, :])
    if df < 1:
        nan = np.full((k, k), np.nan)
        np.fill_diagonal(nan, 1.0)
        return TukeyHSD(means, np.full((k, k), np.nan), nan, math.nan, df, n, variant)
    mse = float(np.sum(resid * resid) / df)
    # rounding leaves |resid| ~ 1e-17 where the runs differ by a constant: treat as 0
    if mse <= 1e-24 * max(1.0, float(np.max(np.abs(x))) ** 2):
        mse = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = gaps / math.sqrt(mse / n) if mse > 0 else np.where(gaps > 0, np.inf, 0.0)
    p = np.ones((k, k))
    dist = _studentized_range()
    for a in range(k):
        for b in range(a + 1, k):
            if math.isinf(q[a, b]):
                p[a, b] = 0.0
            elif q[a, b] > 0:
                p[a, b] = float(min(1.0, dist.sf(q[a, b], k, df)))
            p[b, a] = p[a, b]
    np.fill_diagonal(q, 0.0)
    return TukeyHSD(means, q, p, mse, df, n, variant)
