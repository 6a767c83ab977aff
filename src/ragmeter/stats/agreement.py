"""Agreement: rank correlation of two scorings, and agreement of two labelers.

* **Kendall τ-b** and **Spearman ρ** with two-sided p-values — do two metrics (or two judges)
  rank the same systems in the same order?
* **Cohen's κ** (unweighted, linear or quadratic weights), the **confusion matrix** and
  per-class **precision / recall** — does an LLM judge label like the human assessors?

Everything is vectorized numpy; scipy is imported only for the t distribution of Spearman's
p-value (the ``stats`` extra). Pairs where either value is NA (NaN, or ``None`` for labels)
are left out, and each result says how many pairs it used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

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

KappaWeights = Literal["linear", "quadratic"] | None

__all__ = [
    "ConfusionMatrix",
    "Correlation",
    "Disagreement",
    "LabelAgreement",
    "cohen_kappa",
    "confusion_matrix",
    "kendall_tau_b",
    "label_agreement",
    "spearman_rho",
]


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with its two-sided p-value (NaN where undefined).

    Attributes:
        statistic: the coefficient, in [−1, 1].
        pvalue: two-sided p-value of "no association".
        n: number of pairs used (both values defined).
        method: how the p-value was obtained (``exact``, ``asymptotic`` or ``t``).
    """

    statistic: float
    pvalue: float
    n: int
    method: str

    def to_dict(self) -> dict[str, Any]:
        def clean(v: float) -> float | None:
            return None if math.isnan(v) else v

        return {
            "statistic": clean(self.statistic),
            "pvalue": clean(self.pvalue),
            "n": self.n,
            "method": self.method,
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
    exact (Mahonian distribution) without ties when n ≤ 33, else from the normal
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
    if x_tie == 0 and y_tie == 0 and (n <= 33 or min(discordant, tot - discordant) <= 1):
        return Correlation(tau, _kendall_exact_p(n, tot - discordant), n, "exact")
    m = n * (n - 1.0)
    var = (m * (2 * n + 5) - x1 - y1) / 18 + 2.0 * x_tie * y_tie / m
    if n > 2:
        var += x0 * y0 / (9 * m * (n - 2))
    return Correlation(tau, normal_two_sided(s / math.sqrt(var)), n, "asymptotic")


# -- Spearman ρ ----------------------------------------------------------------------------


def spearman_rho(x: npt.ArrayLike, y: npt.ArrayLike) -> Correlation:
    """Spearman's ρ: Pearson's correlation of the average ranks, with its two-sided p-value.

    ρ = Σ (r_i − r̄)(s_i − s̄) / √(Σ (r_i − r̄)² Σ (s_i − s̄)²); p from
    t = ρ·√((n − 2)/(1 − ρ²)) with n − 2 degrees of freedom (as ``scipy.stats.spearmanr``;
    needs scipy). NaN when n < 2 or either side is constant. Pairs with a NaN are dropped.
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
    df = n - 2
    if df <= 0:
        return Correlation(rho, float("nan"), n, "t")
    with np.errstate(divide="ignore"):
        t = rho * math.sqrt(df / ((1.0 - rho) * (1.0 + rho))) if abs(rho) < 1 else math.inf
    return Correlation(rho, t_two_sided(t, df), n, "t")


# -- labels: confusion matrix, κ, precision and recall -----------------------------------


def _is_missing(values: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    if values.dtype.kind == "f":
        return np.asarray(np.isnan(values), dtype=bool)
    if values.dtype.kind == "O":
        return np.fromiter(
            (v is None or (isinstance(v, float) and math.isnan(v)) for v in values),
            dtype=bool,
            count=values.shape[0],
        )
    return np.zeros(values.shape[0], dtype=bool)


def _encode(values: npt.NDArray[Any], labels: npt.NDArray[Any], side: str) -> npt.NDArray[np.intp]:
    """Position of each value in ``labels``; an error for a value not among them."""
    sorter = np.argsort(labels, kind="stable")
    pos = np.searchsorted(labels, values, sorter=sorter)
    pos = np.minimum(pos, labels.shape[0] - 1)
    codes = sorter[pos]
    bad = labels[codes] != values
    if np.any(bad):
        unknown = sorted({str(v) for v in values[bad]})[:5]
        raise ValueError(f"{side}: label(s) {', '.join(unknown)} not in labels")
    return np.asarray(codes, dtype=np.intp)


@dataclass(frozen=True, eq=False)
class ConfusionMatrix:
    """Counts of (reference label, predicted label) pairs.

    Attributes:
        labels: the classes, in the order of rows and columns.
        matrix: ``matrix[i, j]`` = #pairs with reference ``labels[i]`` and prediction
            ``labels[j]`` (int64, k × k).
        n_dropped: pairs left out because either label was missing.
    """

    labels: tuple[Any, ...]
    matrix: npt.NDArray[np.int64]
    n_dropped: int = 0

    @property
    def n(self) -> int:
        return int(self.matrix.sum())

    def support(self) -> npt.NDArray[np.int64]:
        """Reference count of each class (row sums)."""
        return np.asarray(self.matrix.sum(axis=1), dtype=np.int64)

    def precision(self) -> FloatArray:
        """precision_c = C[c, c] / Σ_i C[i, c] (NaN when nothing was predicted as c)."""
        col = self.matrix.sum(axis=0).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(col > 0, np.diag(self.matrix) / col, np.nan)

    def recall(self) -> FloatArray:
        """recall_c = C[c, c] / Σ_j C[c, j] (NaN when class c never occurs in the reference)."""
        row = self.matrix.sum(axis=1).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(row > 0, np.diag(self.matrix) / row, np.nan)

    def accuracy(self) -> float:
        """Observed agreement p_o = Σ_c C[c, c] / n (NaN for no pairs)."""
        return float(np.trace(self.matrix) / self.n) if self.n else float("nan")

    def kappa(self, weights: KappaWeights = None) -> float:
        """Cohen's κ of the two labelings (see :func:`cohen_kappa`)."""
        k = len(self.labels)
        n = self.n
        if n == 0:
            return float("nan")
        observed = self.matrix.astype(np.float64) / n
        expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
        i, j = np.indices((k, k))
        if weights is None:
            w = (i != j).astype(np.float64)
        elif weights == "linear":
            w = np.abs(i - j).astype(np.float64)
        elif weights == "quadratic":
            w = ((i - j) ** 2).astype(np.float64)
        else:
            raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
        disagreement_expected = float(np.sum(w * expected))
        if disagreement_expected == 0.0:
            return float("nan")
        return 1.0 - float(np.sum(w * observed)) / disagreement_expected

    def per_class(self) -> dict[Any, dict[str, float | int | None]]:
        """``{label: {"precision", "recall", "support"}}``; NA is ``None``."""
        p, r, s = self.precision(), self.recall(), self.support()
        return {
            label: {
                "precision": None if np.isnan(p[c]) else float(p[c]),
                "recall": None if np.isnan(r[c]) else float(r[c]),
                "support": int(s[c]),
            }
            for c, label in enumerate(self.labels)
        }


def confusion_matrix(
    reference: npt.ArrayLike,
    predicted: npt.ArrayLike,
    *,
    labels: Sequence[Any] | None = None,
) -> ConfusionMatrix:
    """The confusion matrix of two labelings of the same items (e.g. human vs LLM grades).

    Rows are the reference labels, columns the predicted ones. ``labels`` fixes the classes
    and their order (and so the weights of a weighted κ); by default the sorted union of the
    labels seen. Pairs where either label is missing (NaN or ``None``) are dropped.
    """
    a = np.asarray(reference)
    b = np.asarray(predicted)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"labelings must be 1-d of equal length, got {a.shape} and {b.shape}")
    keep = ~(_is_missing(a) | _is_missing(b))
    a, b = a[keep], b[keep]
    if labels is None:
        classes = np.unique(np.concatenate([a, b])) if a.size else np.empty(0, dtype=a.dtype)
    else:
        classes = np.asarray(list(labels))
        if np.unique(classes).shape[0] != classes.shape[0]:
            raise ValueError("labels must be distinct")
    k = classes.shape[0]
    if k == 0:
        matrix = np.zeros((0, 0), dtype=np.int64)
    else:
        ia = _encode(a, classes, "reference")
        ib = _encode(b, classes, "predicted")
        matrix = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k).astype(np.int64)
    return ConfusionMatrix(tuple(classes.tolist()), matrix, int(np.sum(~keep)))


def cohen_kappa(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    weights: KappaWeights = None,
    labels: Sequence[Any] | None = None,
) -> float:
    """Cohen's κ between two labelings of the same items.

    κ = 1 − Σ_ij w_ij O_ij / Σ_ij w_ij E_ij, O the observed proportions (confusion matrix / n),
    E_ij = O_i· × O_·j the proportions expected by chance, and disagreement weights
    w_ij = [i ≠ j] (unweighted: κ = (p_o − p_e)/(1 − p_e)), |i − j| (linear) or (i − j)²
    (quadratic), i and j being positions in ``labels`` (default: the sorted labels seen —
    pass the full grade scale, e.g. ``labels=range(4)``, when a grade may be absent).
    NaN when chance disagreement is 0 (a single class). Same as
    ``sklearn.metrics.cohen_kappa_score``.
    """
    return confusion_matrix(a, b, labels=labels).kappa(weights)


_Item = TypeVar("_Item", bound=tuple[Any, ...])


@dataclass(frozen=True)
class Disagreement:
    """One item two labelings label differently: ``a`` the reference's label, ``b`` the other's.

    ``question`` is the sub-question number of a (query, passage, sub-question) item, else 0.
    """

    query_id: str
    doc_id: str
    question: int
    a: int
    b: int


@dataclass(frozen=True)
class LabelAgreement:
    """Agreement of labeling ``b`` (columns) with the reference labeling ``a`` (rows).

    ``matrix`` is the confusion matrix over ``scale``; ``kappa`` holds Cohen's κ unweighted,
    linear and quadratic; ``per_grade`` the precision / recall / support of each label;
    ``binary_*`` the same at the threshold (positive ⇔ label ≥ ``threshold``).
    """

    kind: str
    a: str
    b: str
    n_a: int
    n_b: int
    scale: tuple[int, ...]
    matrix: list[list[int]]
    kappa: dict[str, float]
    accuracy: float
    per_grade: dict[Any, dict[str, float | int | None]]
    threshold: int
    binary_matrix: list[list[int]]
    binary_kappa: float
    binary_accuracy: float
    binary_per_class: dict[Any, dict[str, float | int | None]]
    disagreements: list[Disagreement]

    @property
    def n(self) -> int:
        """Items both labelings label."""
        return sum(map(sum, self.matrix))


def label_agreement(
    a: Mapping[_Item, int],
    b: Mapping[_Item, int],
    *,
    a_name: str = "A",
    b_name: str = "B",
    kind: str = "grade",
    scale: tuple[int, int] = (1, 5),
    threshold: int = 4,
) -> LabelAgreement:
    """How labeling ``b`` agrees with the reference ``a`` (e.g. an LLM judge vs people).

    Items are keyed ``(query, doc)`` or ``(query, doc, sub-question)``; only the items both
    label count. The label scale is every integer from the lowest to the highest label seen,
    at least ``scale`` (1..5 for grades, 0..5 for ratings), so that weighted κ counts the
    distance between labels even when a value never occurs. Returns Cohen's κ (unweighted,
    linear, quadratic: see :func:`cohen_kappa`), the confusion matrix, per-label precision and
    recall of ``b`` against ``a``, the same at a binary threshold, and the disagreements.

    Example:
        >>> r = label_agreement({("q", "d1"): 5, ("q", "d2"): 1}, {("q", "d1"): 4, ("q", "d2"): 1})
        >>> r.n, r.accuracy, r.binary_accuracy
        (2, 0.5, 1.0)
    """
    common = sorted(set(a) & set(b))
    ga = [a[k] for k in common]
    gb = [b[k] for k in common]
    seen = set(ga) | set(gb) | set(scale)
    values = tuple(range(min(seen), max(seen) + 1))
    graded = confusion_matrix(ga, gb, labels=values)
    binary = confusion_matrix(
        [g >= threshold for g in ga], [g >= threshold for g in gb], labels=[False, True]
    )
    return LabelAgreement(
        kind=kind,
        a=a_name,
        b=b_name,
        n_a=len(a),
        n_b=len(b),
        scale=values,
        matrix=graded.matrix.tolist(),
        kappa={
            "unweighted": graded.kappa(None),
            "linear": graded.kappa("linear"),
            "quadratic": graded.kappa("quadratic"),
        },
        accuracy=graded.accuracy(),
        per_grade=graded.per_class(),
        threshold=threshold,
        binary_matrix=binary.matrix.tolist(),
        binary_kappa=binary.kappa(None),
        binary_accuracy=binary.accuracy(),
        binary_per_class=binary.per_class(),
        disagreements=[
            Disagreement(str(key[0]), str(key[1]), int(key[2]) if len(key) > 2 else 0, x, y)
            for key, x, y in zip(common, ga, gb, strict=True)
            if x != y
        ],
    )
