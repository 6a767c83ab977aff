"""Do two leaderboards rank the same systems alike? τ_AP, τ_AP-b, top-k overlap, rank changes.

Kendall's τ-b and Spearman's ρ (with p-values) are in :mod:`ragmeter.stats.correlation`; this
module adds what information retrieval uses beside them to compare a leaderboard computed on
one label set (``a``, e.g. human labels: the reference) with one computed on another (``b``,
e.g. LLM labels):

* **τ_AP** (Yilmaz, Aslam & Robertson, SIGIR 2008, "A new rank correlation coefficient for
  information retrieval"): a top-weighted τ. ``a`` is the truth; walking down ``b``'s
  ranking, C(i) counts the systems above position i in ``b`` that ``a`` also ranks above the
  system at position i:

      τ_AP = 2/(n − 1) · Σ_{i=2..n} C(i)/(i − 1) − 1.

  It is 1 for identical rankings, −1 for reversed ones, and not symmetric: swapping at the
  top costs more than swapping at the bottom, and which list is the truth matters.
* **τ_AP-b** (Urbano & Marrero, ICTIR 2017, "The Treatment of Ties in AP Correlation"): the
  version for two rankings that may both hold ties (two observers, as two label sets are).
  One direction walks down ``y`` item by item, skipping the items tied at the top of ``y``;
  p(i) = #items strictly above i in ``y``, c(i) = #items strictly above i in ``y`` that ``x``
  also ranks strictly above i (a tie in ``x`` is no concordance), and

      τ_AP^y(x) = 2/|{i : p(i) > 0}| · Σ_{i : p(i) > 0} c(i)/p(i) − 1;

  τ_AP-b = (τ_AP^y(x) + τ_AP^x(y)) / 2 is symmetric. Without ties one direction is τ_AP.
* :func:`tau_ap_or_b` — what ``ragmeter agreement`` reports under the name ``tau_ap``:
  τ_AP with ``a`` as the truth when neither score list holds a tie, else τ_AP-b (a tie in
  the truth leaves C(i) undefined, so τ_AP itself does not exist); the result names which.
* :func:`ranking` (names best first, ties broken by name), :func:`top_k_overlap` and
  :func:`rank_changes`.

Everything is numpy, O(n²) in the number of systems (leaderboards hold tens to hundreds);
the ``*_rows`` variants compute τ-b and ρ for many bootstrap replicates at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragmeter.stats._common import FloatArray

__all__ = [
    "RankChange",
    "TauAP",
    "has_ties",
    "kendall_tau_b_rows",
    "rank_changes",
    "ranking",
    "spearman_rho_rows",
    "tau_ap",
    "tau_ap_b",
    "tau_ap_or_b",
    "top_k_overlap",
]


def _vector(values: npt.ArrayLike, name: str) -> FloatArray:
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-d, got shape {v.shape}")
    if np.isnan(v).any():
        raise ValueError(f"{name} holds NaN: a system without a score cannot be ranked")
    return v


def _pair(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    x, y = _vector(a, "a"), _vector(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"a and b must have equal length, got {x.shape[0]} and {y.shape[0]}")
    return x, y


def has_ties(values: npt.ArrayLike) -> bool:
    """Whether two of ``values`` are equal."""
    v = np.asarray(values, dtype=np.float64)
    return bool(np.unique(v).shape[0] < v.shape[0])


def tau_ap(truth: npt.ArrayLike, estimate: npt.ArrayLike) -> float:
    """τ_AP of the ranking by ``estimate`` against the true ranking by ``truth`` (higher
    score = better): 2/(n − 1) · Σ_{i=2..n} C(i)/(i − 1) − 1, i running down the estimated
    ranking, C(i) = #systems above position i there that ``truth`` also ranks above it
    (Yilmaz, Aslam & Robertson 2008). NaN for n < 2; ``ValueError`` when either list holds a
    tie (use :func:`tau_ap_b`)."""
    x, y = _pair(truth, estimate)
    n = x.shape[0]
    if n < 2:
        return math.nan
    if has_ties(x) or has_ties(y):
        raise ValueError("τ_AP is undefined with tied scores; use tau_ap_b")
    t = x[np.argsort(-y, kind="stable")]  # the truth's scores in the estimated order
    above = np.tril(t[None, :] > t[:, None], k=-1)  # [i, j]: j < i and truth ranks j above i
    c = above.sum(axis=1)[1:]
    return float(2.0 / (n - 1) * np.sum(c / np.arange(1, n)) - 1.0)


def _tau_ap_one_way(x: FloatArray, y: FloatArray) -> float:
    """τ_AP^y(x) of the module docstring: down ``y``'s ranking, ties in both allowed."""
    y_above = y[None, :] > y[:, None]  # [i, j]: y ranks j strictly above i
    x_above = x[None, :] > x[:, None]
    p = y_above.sum(axis=1)
    c = (y_above & x_above).sum(axis=1)
    counted = p > 0
    if not counted.any():
        return math.nan  # every item tied at the top of y
    return float(2.0 / counted.sum() * np.sum(c[counted] / p[counted]) - 1.0)


def tau_ap_b(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """τ_AP-b = (τ_AP^y(x) + τ_AP^x(y)) / 2 (Urbano & Marrero 2017; see the module docstring
    for one direction): symmetric, ties allowed in both lists. NaN for n < 2 or when either
    list is constant."""
    a, b = _pair(x, y)
    if a.shape[0] < 2:
        return math.nan
    return (_tau_ap_one_way(a, b) + _tau_ap_one_way(b, a)) / 2.0


@dataclass(frozen=True)
class TauAP:
    """``value`` of the coefficient ``variant`` (``tau_ap`` or ``tau_ap_b``)."""

    value: float
    variant: str


def tau_ap_or_b(a: npt.ArrayLike, b: npt.ArrayLike) -> TauAP:
    """τ_AP with ``a`` as the truth when neither list holds a tie, else τ_AP-b."""
    x, y = _pair(a, b)
    if has_ties(x) or has_ties(y):
        return TauAP(tau_ap_b(x, y), "tau_ap_b")
    return TauAP(tau_ap(x, y), "tau_ap")


def ranking(scores: Mapping[str, float]) -> list[str]:
    """The names, best (highest score) first; equal scores in name order."""
    return sorted(scores, key=lambda name: (-scores[name], name))


def top_k_overlap(ranking_a: Sequence[str], ranking_b: Sequence[str], k: int) -> float:
    """|top k of a ∩ top k of b| / k (k capped at the number of systems): the share of the
    best k systems both rankings agree on, whatever their order."""
    k = min(k, len(ranking_a), len(ranking_b))
    if k < 1:
        return math.nan
    return len(set(ranking_a[:k]) & set(ranking_b[:k])) / k


@dataclass(frozen=True)
class RankChange:
    """System ``name`` is at ``rank_a`` in ranking a and ``rank_b`` in b (1 = best)."""

    name: str
    rank_a: int
    rank_b: int

    @property
    def shift(self) -> int:
        """Places lost under b (negative: gained)."""
        return self.rank_b - self.rank_a


def rank_changes(ranking_a: Sequence[str], ranking_b: Sequence[str]) -> list[RankChange]:
    """Every system's rank under a and under b, the largest |shift| first (then rank a)."""
    if sorted(ranking_a) != sorted(ranking_b):
        raise ValueError("the two rankings must hold the same systems")
    pos_b = {name: i + 1 for i, name in enumerate(ranking_b)}
    changes = [RankChange(name, i + 1, pos_b[name]) for i, name in enumerate(ranking_a)]
    return sorted(changes, key=lambda c: (-abs(c.shift), c.rank_a))


# -- many replicates at once ---------------------------------------------------------------


def _signs(m: FloatArray) -> npt.NDArray[np.int8]:
    """rows × n × n: sign(m[r, i] − m[r, j])."""
    return np.sign(m[:, :, None] - m[:, None, :]).astype(np.int8)


def kendall_tau_b_rows(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """Kendall's τ-b of each row pair of two rows × n matrices:
    τ_b = Σ_{i<j} s^a_ij s^b_ij / √(#{i<j: s^a_ij ≠ 0} · #{i<j: s^b_ij ≠ 0}), s_ij = sign of
    the difference — :func:`ragmeter.stats.correlation.kendall_tau_b` without its p-value.
    NaN for a row where either side is constant."""
    x, y = (
        np.atleast_2d(np.asarray(a, dtype=np.float64)),
        np.atleast_2d(np.asarray(b, dtype=np.float64)),
    )
    sx, sy = _signs(x), _signs(y)
    s = (sx * sy).sum(axis=(1, 2), dtype=np.int64) / 2.0  # int8 products: signs
    untied_x = np.count_nonzero(sx, axis=(1, 2)) / 2.0
    untied_y = np.count_nonzero(sy, axis=(1, 2)) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = s / np.sqrt(untied_x * untied_y)
    return np.asarray(np.clip(np.where((untied_x > 0) & (untied_y > 0), tau, np.nan), -1, 1))


def _average_ranks_rows(m: FloatArray) -> FloatArray:
    """Average ranks within each row: #smaller + (#equal + 1)/2."""
    less = (m[:, None, :] < m[:, :, None]).sum(axis=2)
    equal = (m[:, None, :] == m[:, :, None]).sum(axis=2)
    return np.asarray(less + (equal + 1) / 2.0, dtype=np.float64)


def spearman_rho_rows(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """Spearman's ρ (Pearson's correlation of the average ranks) of each row pair —
    :func:`ragmeter.stats.correlation.spearman_rho` without its p-value. NaN for a row where
    either side is constant."""
    x, y = (
        np.atleast_2d(np.asarray(a, dtype=np.float64)),
        np.atleast_2d(np.asarray(b, dtype=np.float64)),
    )
    rx, ry = _average_ranks_rows(x), _average_ranks_rows(y)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    denom = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (rx * ry).sum(axis=1) / denom
    return np.asarray(np.clip(np.where(denom > 0, rho, np.nan), -1, 1))
