"""Agreement of two labelings for the review page, with :mod:`ragmeter.stats.agreement`.

A *source* of grades is named by a string:

* ``annotator:NAME`` — that annotator's current labels in the label database;
* ``rule:latest`` / ``rule:majority`` — every annotator's labels combined (see
  :func:`ragmeter.web.labels.aggregate`);
* ``qrels:NAME`` — a qrels file given to the server (``--qrels``, ``--compare-qrels``) or
  uploaded on the review page.

Items are the (query, passage) pairs both sources grade; a negative qrels grade ("in the pool,
not judged") is no grade. The grade scale is every integer from the lowest to the highest grade
seen, at least 1..5, so that weighted κ counts the distance between grades even when a grade
never occurs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import InputError
from ragmeter.web.collection import Collection
from ragmeter.web.labels import LabelDB

Pair = tuple[str, str]


@dataclass(frozen=True)
class Disagreement:
    query_id: str
    doc_id: str
    a: int
    b: int


@dataclass(frozen=True)
class Review:
    """Agreement of source ``a`` (reference, rows) and ``b`` (compared, columns)."""

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
    binary_kappa: float
    binary_accuracy: float
    disagreements: list[Disagreement]

    @property
    def n(self) -> int:
        return sum(map(sum, self.matrix))


def source_names(db: LabelDB, collection: Collection, uploads: Mapping[str, Any]) -> list[str]:
    """Every source the review page offers, annotators first."""
    names = [f"annotator:{a}" for a in db.annotators()]
    names += ["rule:latest", "rule:majority"]
    names += [f"qrels:{n}" for n in collection.qrels_sources]
    names += [f"qrels:{n}" for n in uploads if n not in collection.qrels_sources]
    return names


def source_grades(
    source: str,
    db: LabelDB,
    collection: Collection,
    uploads: Mapping[str, Mapping[Pair, int]],
) -> dict[Pair, int]:
    """The grades of a named source, ``{(qid, doc): grade}`` (unjudged pool entries left out)."""
    from ragmeter.web.export import select_labels

    kind, _, name = source.partition(":")
    if kind == "annotator" and name:
        labels = select_labels(db, "grade", annotator=name)
    elif kind == "rule" and name in ("latest", "majority"):
        labels = select_labels(db, "grade", rule=name)  # type: ignore[arg-type]
    elif kind == "qrels" and name in collection.qrels_sources:
        return {k: g for k, g in collection.qrels_sources[name].grades.items() if g >= 0}
    elif kind == "qrels" and name in uploads:
        return {k: g for k, g in uploads[name].items() if g >= 0}
    else:
        raise InputError(f"unknown label source {source!r}", field="source")
    return {(q, d): g for (q, d, _), g in labels.items()}


def review(
    a_name: str,
    b_name: str,
    a: Mapping[Pair, int],
    b: Mapping[Pair, int],
    *,
    threshold: int = 4,
) -> Review:
    """Cohen's κ (unweighted, linear, quadratic), the confusion matrix, per-grade precision and
    recall of ``b`` against ``a``, the same at a binary threshold (relevant ⇔ grade ≥
    ``threshold``), and the pairs where they differ."""
    from ragmeter.stats.agreement import confusion_matrix

    common = sorted(set(a) & set(b))
    ga = [a[k] for k in common]
    gb = [b[k] for k in common]
    seen = set(ga) | set(gb) | {1, 5}
    scale = tuple(range(min(seen), max(seen) + 1))
    cm = confusion_matrix(ga, gb, labels=scale)
    binary = confusion_matrix(
        [g >= threshold for g in ga], [g >= threshold for g in gb], labels=[False, True]
    )
    return Review(
        a=a_name,
        b=b_name,
        n_a=len(a),
        n_b=len(b),
        scale=scale,
        matrix=cm.matrix.tolist(),
        kappa={
            "unweighted": cm.kappa(None),
            "linear": cm.kappa("linear"),
            "quadratic": cm.kappa("quadratic"),
        },
        accuracy=cm.accuracy(),
        per_grade=cm.per_class(),
        threshold=threshold,
        binary_kappa=binary.kappa(None),
        binary_accuracy=binary.accuracy(),
        disagreements=[
            Disagreement(q, d, x, y) for (q, d), x, y in zip(common, ga, gb, strict=True) if x != y
        ],
    )
