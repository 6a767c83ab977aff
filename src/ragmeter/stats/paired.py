"""Paired significance tests of two runs on the same queries, and paired effect sizes.

All tests take the per-query values ``x`` (a run) and ``y`` (the baseline) of the same queries
and test whether the differences d_i = x_i − y_i are centred on 0 (two-sided). Pairs where
either value is NA (NaN) are dropped first.

* :func:`paired_t_test` — Student's t on the differences (the t distribution is computed here,
  no scipy needed).
* :func:`randomization_test` — Fisher's paired randomization test: under H0 each d_i is as
  likely to be −d_i, so the observed |Σ d_i| is compared with |Σ s_i d_i| for random sign
  vectors s ∈ {−1, +1}ⁿ (exact enumeration of all 2^m sign vectors when that is no more than
  the permutations asked for; m = number of non-zero differences).
* :func:`wilcoxon_test` — Wilcoxon's signed-rank test (zeros dropped, average ranks for ties),
  with scipy's choice of method: exact null distribution for n ≤ 50 without ties or zeros,
  exact enumeration of the signs for n ≤ 13 otherwise, else the tie-corrected normal
  approximation without continuity correction. No scipy needed.
* :func:`cohens_d` (d_z = mean(d)/sd(d)) and :func:`rank_biserial`
  (r = (W⁺ − W⁻)/(W⁺ + W⁻)), the effect sizes of the paired t and Wilcoxon tests.

Where every difference is 0 the tests return p = 1 (no evidence of any difference) and the
effect sizes 0; scipy returns NaN there.

:func:`smallest_pvalue` says how small a p-value a test can give at all on n pairs: the
randomization and the exact Wilcoxon tests never go below 2/2^m (m non-zero differences), so
with m ≤ 5 no difference can be significant at α = 0.05, whatever the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ragmeter.stats._common import (
    FloatArray,
    as_columns,
    average_ranks,
    defined_pairs,
    normal_two_sided,
    t_two_sided,
)

TestName = Literal["randomization", "t", "wilcoxon"]
TESTS: tuple[TestName, ...] = ("randomization", "t", "wilcoxon")

#: bytes of ±1 sign matrix (as float64) materialised at once by the randomization test
_CHUNK_BYTES = 64 << 20
#: relative tolerance when comparing a permuted statistic with the observed one
_RTOL = 1e-9


@dataclass(frozen=True)
class PairedTest:
    """Result of a paired test.

    Attributes:
        test: ``t``, ``randomization`` or ``wilcoxon``.
        statistic: t; mean(d) (randomization); min(W⁺, W⁻) (Wilcoxon, as scipy).
        pvalue: two-sided p-value (NaN when there are too few pairs).
        n: pairs used (both values defined).
        method: ``t``, ``exact``, ``monte-carlo`` or ``asymptotic``.
        direction: sign of the effect the test measured (+1: x above y, −1: below, 0: none):
            of mean(d) for t and randomization, of W⁺ − W⁻ for Wilcoxon.
    """

    test: TestName
    statistic: float
    pvalue: float
    n: int
    method: str
    direction: int


def _sign(v: float) -> int:
    return 0 if v == 0 or math.isnan(v) else (1 if v > 0 else -1)


# -- t --------------------------------------------------------------------------------------


def paired_t_test(x: npt.ArrayLike, y: npt.ArrayLike) -> PairedTest:
    """Paired Student's t-test (as ``scipy.stats.ttest_rel(x, y)``).

    t = d̄ / (s_d / √n), s_d² = Σ (d_i − d̄)² / (n − 1), p = 2·F_{n−1}(−|t|) (Student's t
    by the regularized incomplete beta, :func:`ragmeter.stats._common.t_two_sided`).
    """
    a, b = defined_pairs(x, y)
    return _t_from_differences(a - b)


def _t_from_differences(d: FloatArray) -> PairedTest:
    n = d.shape[0]
    if n < 2:
        return PairedTest("t", float("nan"), float("nan"), n, "t", 0)
    mean = float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    if sd == 0.0:
        if mean == 0.0:
            return PairedTest("t", float("nan"), 1.0, n, "t", 0)
        return PairedTest("t", math.copysign(math.inf, mean), 0.0, n, "t", _sign(mean))
    t = mean / (sd / math.sqrt(n))
    return PairedTest("t", t, t_two_sided(t, n - 1), n, "t", _sign(mean))


def smallest_pvalue(test: PairedTest, differences: npt.ArrayLike, permutations: int) -> float:
    """The smallest two-sided p-value ``test`` could give on these pairs, over every
    assignment of signs to the same |d_i| (what the data could show at best).

    * ``t`` (n ≥ 2): 0 — t grows without bound as the differences agree.
    * randomization, exact, and Wilcoxon, exact: 2/2^m with m the non-zero differences —
      only the two sign vectors that make every difference agree reach the extreme statistic
      (for Wilcoxon: W⁺ = Σ R_i is reached by one sign vector, doubled for two sides).
    * randomization, Monte Carlo: 1/(B + 1), B = ``permutations``.
    * Wilcoxon, asymptotic: 2·Φ(−z_max), z_max = (m(m+1)/4) / σ with the test's tie-corrected
      σ (W⁺ at its maximum Σ R_i = m(m+1)/2).

    1 when every difference is 0 (m = 0); NaN when the test has no p-value (too few pairs).
    """
    d = np.asarray(differences, dtype=np.float64).reshape(-1)
    if math.isnan(test.pvalue):
        return float("nan")
    nz = d[d != 0]
    m = nz.shape[0]
    if test.test == "t":
        return 1.0 if m == 0 else 0.0
    if m == 0:
        return 1.0
    if test.method == "monte-carlo":
        return 1.0 / (permutations + 1.0)
    if test.method == "asymptotic":
        _, ties = average_ranks(np.abs(nz))
        tie_term = float(np.sum(ties.astype(np.float64) ** 3 - ties))
        var = (m * (m + 1) * (2 * m + 1) - tie_term / 2.0) / 24.0
        return normal_two_sided(m * (m + 1) / 4.0 / math.sqrt(var))
    return min(1.0, 2.0 / float(2**m))


# -- randomization --------------------------------------------------------------------------


def _all_signs(m: int) -> FloatArray:
    """All 2^m sign vectors (rows) over m positions, ±1 as float64."""
    bits = (np.arange(1 << m, dtype=np.int64)[:, None] >> np.arange(m, dtype=np.int64)) & 1
    return np.asarray(2.0 * bits - 1.0, dtype=np.float64)


def randomization_pvalues(
    differences: npt.ArrayLike,
    *,
    permutations: int = 10_000,
    seed: int | None = 0,
) -> tuple[FloatArray, list[str]]:
    """Two-sided paired randomization (sign-flip) p-values of many columns at once.

    ``differences`` is n × k (a 1-d array is one column); a pair that does not count (an NA
    on either side) must be 0 there, which no sign flip changes. For each column j, with
    T_j = Σ_i d_ij and m_j non-zero differences:

    * if 2^m_j ≤ ``permutations``: p = #{s ∈ {±1}^m : |Σ s_i d_ij| ≥ |T_j|} / 2^m (exact);
    * else p = (1 + #{b : |Σ_i s_bi d_ij| ≥ |T_j|}) / (1 + B), B = ``permutations`` random
      sign vectors s_b drawn once from ``seed`` and shared by every column (Monte Carlo; the
      +1 counts the observed labelling, so p is never 0; Phipson & Smyth 2010).

    "≥" allows a relative tolerance of 1e-9 of Σ|d| for rounding. The random signs come in
    chunks as bits (``Generator.bytes``); T for a chunk of signs is one matrix product
    2·B·D − Σ D with B ∈ {0, 1}, so memory stays bounded and the work is BLAS.

    Returns the p-values (NaN for an empty column) and each column's method.
    """
    d = as_columns(differences, "differences must not be NaN; put 0 where a pair does not count")
    if permutations < 1:
        raise ValueError(f"permutations must be ≥ 1, got {permutations}")
    n, k = d.shape
    observed = np.abs(d.sum(axis=0))
    tol = _RTOL * np.abs(d).sum(axis=0)
    nonzero = (d != 0).sum(axis=0)
    pvalues = np.full(k, np.nan)
    methods = ["none"] * k
    random_cols: list[int] = []
    for j in range(k):
        m = int(nonzero[j])
        if m == 0:
            pvalues[j] = 1.0 if n else np.nan
            methods[j] = "exact" if n else "none"
        elif (1 << m) <= permutations:
            values = d[d[:, j] != 0, j]
            sums = np.abs(_all_signs(m) @ values)
            pvalues[j] = float(np.mean(sums >= observed[j] - tol[j]))
            methods[j] = "exact"
        else:
            random_cols.append(j)
    if random_cols:
        cols = np.asarray(random_cols)
        dm = np.ascontiguousarray(d[:, cols])
        total = dm.sum(axis=0)
        threshold = observed[cols] - tol[cols]
        hits = np.zeros(cols.shape[0], dtype=np.int64)
        rng = np.random.default_rng(seed)
        n_bytes = (n + 7) // 8
        chunk = max(1, min(permutations, _CHUNK_BYTES // (8 * n)))
        done = 0
        while done < permutations:
            c = min(chunk, permutations - done)
            raw = np.frombuffer(rng.bytes(c * n_bytes), dtype=np.uint8).reshape(c, n_bytes)
            bits = np.unpackbits(raw, axis=1, count=n).astype(np.float64)
            sums = np.abs(2.0 * (bits @ dm) - total)
            hits += np.count_nonzero(sums >= threshold, axis=0)
            done += c
        pvalues[cols] = (hits + 1.0) / (permutations + 1.0)
        for j in random_cols:
            methods[j] = "monte-carlo"
    return pvalues, methods


def randomization_test(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    *,
    permutations: int = 10_000,
    seed: int | None = 0,
) -> PairedTest:
    """Paired randomization (sign-flip permutation) test of mean(x − y) = 0.

    See :func:`randomization_pvalues`; the statistic is T = Σ d_i (equivalently the mean
    difference: n is fixed under the permutations); the reported statistic is mean(d).
    """
    a, b = defined_pairs(x, y)
    d = a - b
    n = d.shape[0]
    if n == 0:
        return PairedTest("randomization", float("nan"), float("nan"), 0, "none", 0)
    p, methods = randomization_pvalues(d, permutations=permutations, seed=seed)
    mean = float(d.mean())
    return PairedTest("randomization", mean, float(p[0]), n, methods[0], _sign(mean))


# -- Wilcoxon -------------------------------------------------------------------------------


def _signed_rank_counts(m: int) -> FloatArray:
    """counts[w] = #{subsets of {1..m} with sum w}, w = 0..m(m+1)/2: the null distribution
    of W⁺ without ties, times 2^m (coefficients of Π_{i=1..m} (1 + x^i))."""
    top = m * (m + 1) // 2
    counts = np.zeros(top + 1)
    counts[0] = 1.0
    for i in range(1, m + 1):
        counts[i:] = counts[i:] + counts[: top + 1 - i].copy()
    return counts


def _two_sided(null: FloatArray, observed: float) -> float:
    """p = 2·min(P(T ≤ t), P(T ≥ t)) over equally likely null values, clipped to 1."""
    tol = 1e-9 * max(1.0, abs(observed))
    low = float(np.mean(null <= observed + tol))
    high = float(np.mean(null >= observed - tol))
    return min(1.0, 2.0 * min(low, high))


def wilcoxon_test(x: npt.ArrayLike, y: npt.ArrayLike) -> PairedTest:
    """Wilcoxon signed-rank test of the differences d = x − y (as ``scipy.stats.wilcoxon``).

    Zeros are dropped (Wilcoxon's method); the m remaining |d_i| get average ranks R_i;
    W⁺ = Σ_{d_i > 0} R_i, W⁻ = Σ_{d_i < 0} R_i. p-value (two-sided):

    * no ties, no zeros and n ≤ 50: exact, 2·min(P(W ≤ W⁺), P(W ≥ W⁺)) over the 2^m
      equally likely sign patterns;
    * ties or zeros and n ≤ 13: the same by enumerating the 2^m sign patterns of the ranks;
    * else z = (W⁺ − m(m+1)/4) / √((m(m+1)(2m+1) − Σ (t³ − t)/2) / 24) over the tie groups
      of sizes t, p = 2·Φ(−|z|) (no continuity correction).

    The statistic is min(W⁺, W⁻).
    """
    a, b = defined_pairs(x, y)
    d = a - b
    n = d.shape[0]
    if n == 0:
        return PairedTest("wilcoxon", float("nan"), float("nan"), 0, "none", 0)
    nz = d[d != 0]
    m = nz.shape[0]
    if m == 0:
        return PairedTest("wilcoxon", 0.0, 1.0, n, "exact", 0)
    ranks, ties = average_ranks(np.abs(nz))
    w_plus = float(ranks[nz > 0].sum())
    w_minus = float(ranks[nz < 0].sum())
    statistic = min(w_plus, w_minus)
    direction = _sign(w_plus - w_minus)
    has_ties = bool(np.any(ties > 1))
    if not has_ties and m == n and n <= 50:
        counts = _signed_rank_counts(m)
        total = counts.sum()
        w = round(w_plus)
        p = 2.0 * min(counts[: w + 1].sum(), counts[w:].sum()) / total
        return PairedTest("wilcoxon", statistic, min(1.0, float(p)), n, "exact", direction)
    if n <= 13:
        null = _all_signs(m) @ ranks  # Σ s_i R_i = W⁺ − W⁻ = 2W⁺ − Σ R
        return PairedTest(
            "wilcoxon",
            statistic,
            _two_sided((null + ranks.sum()) / 2.0, w_plus),
            n,
            "exact",
            direction,
        )
    tie_term = float(np.sum(ties.astype(np.float64) ** 3 - ties))
    var = (m * (m + 1) * (2 * m + 1) - tie_term / 2.0) / 24.0
    z = (w_plus - m * (m + 1) / 4.0) / math.sqrt(var)
    return PairedTest("wilcoxon", statistic, normal_two_sided(z), n, "asymptotic", direction)


# -- effect sizes ---------------------------------------------------------------------------


def cohens_d(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Paired Cohen's d (d_z) = mean(d) / sd(d), d = x − y, sd with n − 1.

    0 when every difference is 0; NaN for fewer than 2 pairs or a constant non-zero d.
    """
    a, b = defined_pairs(x, y)
    return _cohens_d(a - b)


def _cohens_d(d: FloatArray) -> float:
    if d.shape[0] < 2:
        return float("nan")
    mean = float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    if sd == 0.0:
        return 0.0 if mean == 0.0 else float("nan")
    return mean / sd


def rank_biserial(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Matched-pairs rank-biserial correlation r = (W⁺ − W⁻) / (W⁺ + W⁻) (Kerby 2014).

    Signed ranks as in :func:`wilcoxon_test` (zeros dropped, average ranks). In [−1, 1]:
    the share of rank mass favouring x minus the share favouring y. 0 when every difference
    is 0; NaN without pairs.
    """
    a, b = defined_pairs(x, y)
    return _rank_biserial(a - b)


def _rank_biserial(d: FloatArray) -> float:
    if d.shape[0] == 0:
        return float("nan")
    nz = d[d != 0]
    if nz.shape[0] == 0:
        return 0.0
    ranks, _ = average_ranks(np.abs(nz))
    return float((ranks[nz > 0].sum() - ranks[nz < 0].sum()) / ranks.sum())
