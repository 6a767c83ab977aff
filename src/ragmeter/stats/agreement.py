"""Agreement: rank correlation of two scorings, and agreement of two labelers.

* **Kendall τ-b** and **Spearman ρ** with two-sided p-values — do two metrics (or two judges)
  rank the same systems in the same order?
* **Cohen's κ** (unweighted, linear or quadratic weights), the **confusion matrix** and
  per-class **precision / recall** — does an LLM judge label like the human assessors?
* **Krippendorff's α** (nominal, ordinal, interval; missing labels allowed).
* **Relabelling before agreement** (:func:`relabel`): LLM judges emit grades outside the
  scale (a 5 or a 10 on 0–3); published studies map or clip them first. A grade map
  (``"4:3,5:3"``) is applied, then clipping to ``LO..HI``, and every change is counted
  (:class:`Relabel`) so the report says what was altered.

Everything is vectorized numpy (the rank correlations live in :mod:`ragmeter.stats.correlation`
and are re-exported here). Pairs where either value is NA (NaN, or ``None`` for labels)
are left out, and each result says how many pairs it used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from ragmeter.stats._common import FloatArray
from ragmeter.stats.correlation import Correlation, kendall_tau_b, spearman_rho

KappaWeights = Literal["linear", "quadratic"] | None

__all__ = [
    "ConfusionMatrix",
    "Correlation",
    "Disagreement",
    "LabelAgreement",
    "Relabel",
    "cohen_kappa",
    "confusion_matrix",
    "kendall_tau_b",
    "krippendorff_alpha",
    "label_agreement",
    "parse_clip",
    "parse_label_map",
    "read_label_map",
    "relabel",
    "spearman_rho",
]


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


# -- relabelling: grade map, then clipping ------------------------------------------------


@dataclass(frozen=True)
class Relabel:
    """``count`` labels of labeling ``side`` (``a``: the reference, ``b``: the compared one)
    changed from ``grade`` to ``to``, by the grade
    map (``how = "map"``) or by clipping (``how = "clip"``; a mapped grade that is then
    clipped counts once, as ``clip``, from its original grade)."""

    side: str
    grade: int
    to: int
    count: int
    how: Literal["map", "clip"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "side": self.side,
            "from": self.grade,
            "to": self.to,
            "count": self.count,
            "how": self.how,
        }


def parse_clip(text: str) -> tuple[int, int]:
    """``"LO:HI"`` (integers, LO ≤ HI) → ``(LO, HI)``; ValueError naming what is wrong."""
    lo, sep, hi = text.partition(":")
    try:
        if not sep:
            raise ValueError
        bounds = (int(lo), int(hi))
    except ValueError:
        raise ValueError(
            f"clip must look like LO:HI with integers, e.g. 0:3 (got {text!r})"
        ) from None
    if bounds[0] > bounds[1]:
        raise ValueError(f"clip {text!r}: LO must not exceed HI")
    return bounds


def parse_label_map(text: str, *, source: str = "grade map") -> dict[int, int]:
    """``"4:3,5:3"`` → ``{4: 3, 5: 3}``: items ``FROM:TO`` of integers, separated by commas,
    semicolons or new lines; ``#`` starts a comment (for a file). ValueError naming ``source``,
    the line and the item."""
    mapping: dict[int, int] = {}
    for line_no, line in enumerate(text.splitlines() or [""], start=1):
        where = f"{source}, line {line_no}" if "\n" in text.strip() else source
        body = line.split("#", 1)[0]
        for part in (p.strip() for p in body.replace(";", ",").split(",")):
            if not part:
                continue
            src, sep, dst = part.partition(":")
            try:
                if not sep:
                    raise ValueError
                a, b = int(src), int(dst)
            except ValueError:
                raise ValueError(
                    f"{where}: item {part!r} must be FROM:TO with integers, e.g. 4:3,5:3"
                ) from None
            if a in mapping:
                raise ValueError(f"{where}: maps {a} twice")
            mapping[a] = b
    if not mapping:
        raise ValueError(f"{source}: no FROM:TO item (e.g. 4:3,5:3)")
    return mapping


def read_label_map(value: str) -> dict[int, int]:
    """A grade map given inline (``"4:3,5:3"``) or, as ``@PATH``, in a file of the same
    items (one or more per line, ``#`` comments): see :func:`parse_label_map`."""
    if not value.startswith("@"):
        return parse_label_map(value, source="grade map")
    from pathlib import Path

    path = Path(value[1:])
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"grade map file {path}: {exc}") from None
    return parse_label_map(text, source=str(path))


def relabel(
    labels: Mapping[_Item, int],
    *,
    side: str = "",
    grade_map: Mapping[int, int] | None = None,
    clip: tuple[int, int] | None = None,
) -> tuple[dict[_Item, int], list[Relabel]]:
    """``labels`` with ``grade_map`` applied, then clipped to ``clip`` = (LO, HI): g ↦
    min(HI, max(LO, map(g))); and the changes, counted per (original grade, new grade).

    Grades the map does not name stay as they are.
    """
    gmap = dict(grade_map or {})
    out: dict[_Item, int] = {}
    counts: dict[tuple[int, int, str], int] = {}
    for key, g in labels.items():
        mapped = gmap.get(g, g)
        new = mapped if clip is None else min(clip[1], max(clip[0], mapped))
        out[key] = new
        if new != g:
            how = "clip" if new != mapped else "map"
            counts[(g, new, how)] = counts.get((g, new, how), 0) + 1
    changes = [
        Relabel(side, g, to, n, how)  # type: ignore[arg-type]
        for (g, to, how), n in sorted(counts.items())
    ]
    return out, changes


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
    #: Krippendorff's α of the two labelings (``nominal``, ``ordinal``, ``interval``)
    alpha: dict[str, float] = field(default_factory=dict)
    #: the grade map and clipping applied before comparing, and what they changed
    grade_map: dict[int, int] = field(default_factory=dict)
    clip: tuple[int, int] | None = None
    relabelled: tuple[Relabel, ...] = ()
    #: a map of one side only (in place of ``grade_map`` there)
    grade_map_a: dict[int, int] = field(default_factory=dict)
    grade_map_b: dict[int, int] = field(default_factory=dict)

    def changed(self, side: str) -> int:
        """How many labels of ``side`` (``a`` or ``b``) the grade map or clipping changed."""
        return sum(r.count for r in self.relabelled if r.side == side)

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
    grade_map: Mapping[int, int] | None = None,
    clip: tuple[int, int] | None = None,
    grade_map_a: Mapping[int, int] | None = None,
    grade_map_b: Mapping[int, int] | None = None,
) -> LabelAgreement:
    """How labeling ``b`` agrees with the reference ``a`` (e.g. an LLM judge vs people).

    Items are keyed ``(query, doc)`` or ``(query, doc, sub-question)``; only the items both
    label count. The label scale is every integer from the lowest to the highest label seen,
    at least ``scale`` (1..5 for grades, 0..5 for ratings), so that weighted κ counts the
    distance between labels even when a value never occurs. Returns Cohen's κ (unweighted,
    linear, quadratic: see :func:`cohen_kappa`), the confusion matrix, per-label precision and
    recall of ``b`` against ``a``, the same at a binary threshold, the disagreements, and
    Krippendorff's α (nominal, ordinal, interval; see :func:`krippendorff_alpha`).

    ``grade_map`` and ``clip`` relabel both labelings first (:func:`relabel`: map, then
    clip to LO..HI); with ``clip`` the scale is LO..HI. ``grade_map_a`` / ``grade_map_b``
    relabel one side only, in place of ``grade_map`` there (labelings on two scales — 0–3
    against 1–5 — each need their own map). ``relabelled`` counts the changes of every
    label of each side (``n_a``, ``n_b``), not only the common items.

    Example:
        >>> r = label_agreement({("q", "d1"): 5, ("q", "d2"): 1}, {("q", "d1"): 4, ("q", "d2"): 1})
        >>> r.n, r.accuracy, r.binary_accuracy
        (2, 0.5, 1.0)
    """
    changes: list[Relabel] = []
    map_a, map_b = grade_map_a or grade_map, grade_map_b or grade_map
    if map_a or map_b or clip is not None:
        a, changed_a = relabel(a, side="a", grade_map=map_a, clip=clip)
        b, changed_b = relabel(b, side="b", grade_map=map_b, clip=clip)
        changes = changed_a + changed_b
        scale = clip if clip is not None else scale
    common = sorted(set(a) & set(b))
    ga = [a[k] for k in common]
    gb = [b[k] for k in common]
    seen = set(ga) | set(gb) | set(scale)
    values = tuple(range(min(seen), max(seen) + 1))
    if clip is not None:  # the clipped scale, even when the other grades are never seen
        values = tuple(range(clip[0], clip[1] + 1))
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
        alpha={
            level: krippendorff_alpha([ga, gb], level)
            for level in ("nominal", "ordinal", "interval")
        },
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
        grade_map=dict(grade_map or {}),
        clip=clip,
        relabelled=tuple(changes),
        grade_map_a=dict(grade_map_a or {}),
        grade_map_b=dict(grade_map_b or {}),
    )


def krippendorff_alpha(
    data: npt.ArrayLike, level: Literal["nominal", "ordinal", "interval"] = "nominal"
) -> float:
    """Krippendorff's α of a raters × units matrix of numeric labels (NaN: missing).

    Units with fewer than two labels are left out. From the coincidence matrix
    o_ck = Σ_u Σ_{i≠j} [v_ui = c][v_uj = k] / (m_u − 1) (m_u labels in unit u), n_c = Σ_k o_ck,
    n = Σ_c n_c: α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck with δ² = [c ≠ k] (nominal),
    (c − k)² (interval) or (Σ_{g=c..k} n_g − (n_c + n_k)/2)² (ordinal) — Krippendorff (2011),
    "Computing Krippendorff's alpha-reliability", as the ``krippendorff`` package.
    NaN when nothing is pairable or every label is the same.
    """
    v = np.asarray(data, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"data must be raters × units, got shape {v.shape}")
    values = np.unique(v[~np.isnan(v)])
    k = values.shape[0]
    if k == 0:
        return float("nan")
    counts = np.zeros((v.shape[1], k))  # units × values
    rows, cols = np.nonzero(~np.isnan(v))
    np.add.at(counts, (cols, np.searchsorted(values, v[rows, cols])), 1.0)
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    if counts.shape[0] == 0:
        return float("nan")
    o = (counts.T / (m - 1)) @ counts - np.diag(np.sum(counts.T / (m - 1), axis=1))
    n_c = o.sum(axis=1)
    n = float(n_c.sum())
    c, j = np.indices((k, k))
    if level == "nominal":
        d2 = (c != j).astype(np.float64)
    elif level == "interval":
        d2 = (values[c] - values[j]) ** 2
    elif level == "ordinal":
        cum = np.cumsum(n_c)
        lo, hi = np.minimum(c, j), np.maximum(c, j)
        d2 = (cum[hi] - np.where(lo > 0, cum[lo - 1], 0.0) - (n_c[c] + n_c[j]) / 2) ** 2
    else:
        raise ValueError(f"level must be nominal, ordinal or interval, got {level!r}")
    expected = float(np.sum(np.outer(n_c, n_c) * d2))
    if expected == 0.0:
        return float("nan")
    return 1.0 - (n - 1.0) * float(np.sum(o * d2)) / expected
