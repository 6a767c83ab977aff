"""Rank correlation of two scorings: Kendall τ-b and Spearman ρ with exact small-sample
p-values, and the rank correlation of every metric with a target over systems.

Do two metrics (or two judges) rank the same systems in the same order? With a handful of
systems the answer hangs on exact null distributions: three systems in perfect agreement give
p = 1/3 for both coefficients (2 of the 3! orderings are as extreme), never a small p. Each
result says how its p-value was obtained and the smallest p-value its n allows.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragmeter.stats._common import (
    FloatArray,
    average_ranks,
    defined_pairs,
    dense_codes,
    normal_two_sided,
    t_two_sided,
)

__all__ = [
    "KENDALL_EXACT_MAX_N",
    "SPEARMAN_EXACT_MAX_N",
    "Correlation",
    "kendall_tau_b",
    "rank_correlations",
    "spearman_rho",
]

#: Kendall's p is exact (Mahonian distribution) without ties up to this n.
KENDALL_EXACT_MAX_N = 50
#: Spearman's p is exact (all n! permutations, 362,880 at n = 9) up to this n.
SPEARMAN_EXACT_MAX_N = 9


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with its two-sided p-value (NaN where undefined).

    Attributes:
        statistic: the coefficient, in [−1, 1].
        pvalue: two-sided p-value of "no association".
        n: number of pairs used (both values defined).
        method: how the p-value was obtained: ``exact`` (Kendall: the Mahonian distribution;
            Spearman: all n! permutations), ``asymptotic`` (Kendall: normal approximation with
            the tie-corrected variance), ``t`` (Spearman: Student's t with n − 2 degrees of
            freedom) or ``none``.
        min_pvalue: the smallest p-value the exact null distribution can give at this n (and
            these ties), NaN for an approximation — when it exceeds the significance level,
            no outcome could be significant.
    """

    statistic: float
    pvalue: float
    n: int
    method: str
    min_pvalue: float = float("nan")

    def to_dict(self) -> dict[str, Any]:
        def clean(v: float) -> float | None:
            return None if math.isnan(v) else v

        return {
            "statistic": clean(self.statistic),
            "pvalue": clean(self.pvalue),
            "n": self.n,
            "method": self.method,
            "min_pvalue": clean(self.min_pvalue),
        }


# -- Kendall τ-b ---------------------------------------------------------------------------


def _count_inversions(values: npt.NDArray[np.int64]) -> int:
    """#{i < j : v_i > v_j} (strict), by a bottom-up merge sort done level by level in numpy.

    At the level with blocks of width w, the two sorted halves of each 2w-block are merged;
    every right-half element r adds the number of left-half elements greater than r, found by
    ``searchsorted`` on keys (block pair, value). O(n log² n), no Python loop over elements.
    """
    a = np.asarray(values, dtype=np.int64).copy()
    n = a.shape[0]
    if n < 2:
        return 0
    a -= a.min()
    span = int(a.max()) + 1
    idx = np.arange(n, dtype=np.int64)
    total = 0
    width = 1
    while width < n:
        pair = idx // (2 * width)
        is_right = (idx // width) % 2 == 1
        keys = pair * span + a
        left = keys[~is_right]  # sorted: pairs ascend, each left half is sorted
        right_pair = pair[is_right]
        not_greater = np.searchsorted(left, keys[is_right], side="right")
        left_end = np.searchsorted(left, (right_pair + 1) * span, side="left")
        total += int(np.sum(left_end - not_greater))
        keys.sort(kind="stable")  # merges the two sorted runs of each 2w-block
        a = keys - pair * span
        width *= 2
    return total


def _tie_sums(codes: npt.NDArray[np.intp]) -> tuple[int, float, float]:
    """Σ t(t−1)/2, Σ t(t−1)(t−2) and Σ t(t−1)(2t+5) over the tie groups of sizes t."""
    t = np.bincount(codes).astype(np.float64)
    t = t[t > 1]
    return (
        int(np.sum(t * (t - 1) // 2)),
        float(np.sum(t * (t - 1) * (t - 2))),
        float(np.sum(t * (t - 1) * (2 * t + 5))),
    )


def _kendall_exact_p(n: int, concordant: int) -> float:
    """Exact two-sided p-value of Kendall's statistic without ties.

    Under H0 the number of discordant pairs follows the Mahonian distribution (inversions of
    a random permutation), the coefficients of Π_{j=1..n} (1 + x + … + x^{j−1}) / n!;
    p = 2·P(C ≤ min(c, N − c)), N = n(n−1)/2, built by the recurrence of Kendall (1970).
    """
    tot = n * (n - 1) // 2
    c = min(concordant, tot - concordant)
    if n <= 2 or 4 * c == n * (n - 1):
        return 1.0
    # counts[k]·2/j! after step j = P(inversions = k)·2 over permutations of j items
    counts = np.zeros(c + 1)
    counts[0 : min(2, c + 1)] = 1.0
    for j in range(3, n + 1):
        counts = np.cumsum(counts) / j
        if j <= c:
            counts[j:] -= counts[: c + 1 - j]
    return float(np.clip(np.sum(counts), 0.0, 1.0))


def kendall_tau_b(x: npt.ArrayLike, y: npt.ArrayLike) -> Correlation:
    """Kendall's τ-b of paired scores, with its two-sided p-value.

    τ_b = (n_c − n_d) / √((N − T_x)(N − T_y)), N = n(n−1)/2, T_x = Σ t(t−1)/2 over the tie
    groups of x (likewise T_y); n_c, n_d: concordant and discordant pairs. The p-value is
    exact (Mahonian distribution) without ties when n ≤ 50, else from the normal
    approximation of S = n_c − n_d with the tie-corrected variance

        Var S = (v₀ − v_x − v_y)/18 + 2·T_x·T_y/(n(n−1)) + t_x·t_y/(9·n(n−1)(n−2)),

    v₀ = n(n−1)(2n+5), v_x = Σ t(t−1)(2t+5), t_x = Σ t(t−1)(t−2) — as ``scipy.stats.kendalltau``.
    NaN when n < 2 or either side is constant. Pairs with a NaN are dropped.
    """
    a, b = defined_pairs(x, y)
    n = a.shape[0]
    if n < 2:
        return Correlation(float("nan"), float("nan"), n, "none")
    xc, yc = dense_codes(a), dense_codes(b)
    order = np.lexsort((yc, xc))
    xs, ys = xc[order], yc[order]
    discordant = _count_inversions(ys.astype(np.int64))
    boundary = np.r_[True, (xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1]), True]
    joint = np.diff(np.flatnonzero(boundary)).astype(np.int64)
    n_joint = int(np.sum(joint * (joint - 1) // 2))
    x_tie, x0, x1 = _tie_sums(xc)
    y_tie, y0, y1 = _tie_sums(yc)
    tot = n * (n - 1) // 2
    if x_tie == tot or y_tie == tot:
        return Correlation(float("nan"), float("nan"), n, "none")
    s = tot - x_tie - y_tie + n_joint - 2 * discordant
    tau = float(np.clip(s / math.sqrt(tot - x_tie) / math.sqrt(tot - y_tie), -1.0, 1.0))
    # as scipy's "auto": also exact at any n when the outcome is (next to) the most extreme
    if (
        x_tie == 0
        and y_tie == 0
        and (n <= KENDALL_EXACT_MAX_N or min(discordant, tot - discordant) <= 1)
    ):
        exact = _kendall_exact_p(n, tot - discordant)
        return Correlation(tau, exact, n, "exact", _kendall_exact_p(n, tot))
    m = n * (n - 1.0)
    var = (m * (2 * n + 5) - x1 - y1) / 18 + 2.0 * x_tie * y_tie / m
    if n > 2:
        var += x0 * y0 / (9 * m * (n - 2))
    return Correlation(tau, normal_two_sided(s / math.sqrt(var)), n, "asymptotic")


# -- Spearman ρ ----------------------------------------------------------------------------


def _permutations(n: int) -> npt.NDArray[np.int8]:
    """All n! orderings of 0..n−1 (n! × n), built once per n."""
    got = _PERMUTATIONS.get(n)
    if got is None:
        got = np.array(list(itertools.permutations(range(n))), dtype=np.int8).reshape(-1, n)
        _PERMUTATIONS[n] = got
    return got


_PERMUTATIONS: dict[int, npt.NDArray[np.int8]] = {}


def _spearman_exact(
    ra: FloatArray, rb: FloatArray, denom: float, rho: float
) -> tuple[float, float]:
    """Exact two-sided permutation p-value of ρ and the smallest attainable one.

    Under H0 every pairing of the (centered, average) ranks is equally likely: over the n!
    permutations π, p = #{π : |ρ_π| ≥ |ρ|} / n!, ties included (a tie's permutations count
    separately, which leaves the proportions unchanged). min p = #{π : |ρ_π| = max |ρ_π|} / n!.
    """
    perms = _permutations(ra.shape[0])
    null = np.abs(rb[perms] @ ra) / denom
    eps = 1e-12
    p = float(np.mean(null >= abs(rho) - eps))
    return min(1.0, p), float(np.mean(null >= null.max() - eps))


def spearman_rho(x: npt.ArrayLike, y: npt.ArrayLike) -> Correlation:
    """Spearman's ρ: Pearson's correlation of the average ranks, with its two-sided p-value.

    ρ = Σ (r_i − r̄)(s_i − s̄) / √(Σ (r_i − r̄)² Σ (s_i − s̄)²). The p-value is exact for
    n ≤ 9 (all n! pairings of the ranks, ties included: method ``exact``, as
    ``scipy.stats.permutation_test``); beyond, from t = ρ·√((n − 2)/(1 − ρ²)) with n − 2
    degrees of freedom (method ``t``, as ``scipy.stats.spearmanr``). NaN when n < 2 or either
    side is constant. Pairs with a NaN are dropped.
    """
    a, b = defined_pairs(x, y)
    n = a.shape[0]
    if n < 2:
        return Correlation(float("nan"), float("nan"), n, "none")
    ra, _ = average_ranks(a)
    rb, _ = average_ranks(b)
    ra -= ra.mean()
    rb -= rb.mean()
    denom = math.sqrt(float(np.dot(ra, ra)) * float(np.dot(rb, rb)))
    if denom == 0.0:
        return Correlation(float("nan"), float("nan"), n, "none")
    rho = float(np.clip(np.dot(ra, rb) / denom, -1.0, 1.0))
    if n <= SPEARMAN_EXACT_MAX_N:
        p, min_p = _spearman_exact(ra, rb, denom, rho)
        return Correlation(rho, p, n, "exact", min_p)
    df = n - 2
    if df <= 0:
        return Correlation(rho, float("nan"), n, "t")
    with np.errstate(divide="ignore"):
        t = rho * math.sqrt(df / ((1.0 - rho) * (1.0 + rho))) if abs(rho) < 1 else math.inf
    return Correlation(rho, t_two_sided(t, df), n, "t")


def rank_correlations(
    systems: Mapping[str, Mapping[str, float]], target: str, *, alpha: float = 0.05
) -> list[dict[str, Any]]:
    """Kendall τ-b and Spearman ρ of every metric's system ranking against ``target``'s.

    ``systems`` maps a system to its metric values (NaN: not measured). One row per metric
    other than the target, sorted by name: ``n_systems``, the two coefficients, their p-values,
    ``*_method`` (``exact``, ``asymptotic``, ``t``) and ``*_min_p``; ``too_small`` is true when
    even the most extreme outcome could not reach ``alpha`` (min p > alpha for both).
    Raises ``KeyError`` naming the available metrics when no system has ``target``.
    """
    names = sorted(systems)
    if not any(target in systems[s] for s in names):
        have = sorted({m for s in names for m in systems[s]})
        raise KeyError(f"target metric '{target}' not in the results; have {', '.join(have)}")
    y = np.array([systems[s].get(target, math.nan) for s in names], dtype=np.float64)
    metrics = sorted({m for s in names for m in systems[s]} - {target})
    out: list[dict[str, Any]] = []
    for metric in metrics:
        x = np.array([systems[s].get(metric, math.nan) for s in names], dtype=np.float64)
        tau = kendall_tau_b(x, y).to_dict()
        rho = spearman_rho(x, y).to_dict()
        mins = [v for v in (tau["min_pvalue"], rho["min_pvalue"]) if v is not None]
        out.append(
            {
                "metric": metric,
                "n_systems": tau["n"],
                "kendall_tau_b": tau["statistic"],
                "kendall_p": tau["pvalue"],
                "kendall_method": tau["method"],
                "kendall_min_p": tau["min_pvalue"],
                "spearman_rho": rho["statistic"],
                "spearman_p": rho["pvalue"],
                "spearman_method": rho["method"],
                "spearman_min_p": rho["min_pvalue"],
                "too_small": bool(mins) and min(mins) > alpha,
            }
        )
    return out
