"""Agreement of two labelings for the review page, with :mod:`ragmeter.stats.agreement`.

Three kinds of labels are reviewed: relevance grades of (query, passage), sub-question
ratings of (query, passage, sub-question) and nugget assignments 0–2 of (query, answer or
passage, nugget). A *source* of labels is named by a string:

* ``annotator:NAME`` — that annotator's current labels in the label database;
* ``rule:latest`` / ``rule:majority`` — every annotator's labels combined (see
  :func:`ragmeter.web.labels.aggregate`);
* ``qrels:NAME`` (grades) — a qrels file given to the server (``--qrels``,
  ``--compare-qrels``) or uploaded on the review page;
* ``judgments:NAME`` (ratings) — a judgments file (``--compare-judgments``, e.g. an LLM
  judge's answerability ratings) or an uploaded one;
* ``assignments:NAME`` (nuggets) — a nugget assignments file (``--nugget-assignments``, e.g.
  ``ragmeter judge nuggets assign``'s): LLM against human agreement.

Items are those both sources label; a negative label (a qrels "in the pool, not judged", a
judge's −1 "unparseable") is no label. The scale is every integer from the lowest to the
highest label seen, at least 1..5 for grades, 0..5 for ratings and 0..2 for nuggets, so that
weighted κ counts
the distance between labels even when a value never occurs. As ``ragmeter agreement``, the page
can map grades (``4:3,5:3``) and clip them to ``LO:HI`` first, and says what that changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from ragmeter.errors import InputError
from ragmeter.stats.agreement import LabelAgreement, label_agreement
from ragmeter.web.collection import Collection
from ragmeter.web.labels import ItemKey, LabelDB, LabelKind

#: the prefix of the file sources of each kind
FILE_SOURCE = {"grade": "qrels", "rating": "judgments", "nugget": "assignments"}
SCALE = {"grade": (1, 5), "rating": (0, 5), "nugget": (0, 2)}
_Key = TypeVar("_Key", bound=tuple[Any, ...])


#: the review of two label sources (kept under its historical name)
Review = LabelAgreement


def source_names(
    db: LabelDB,
    collection: Collection,
    uploads: Mapping[str, Any],
    kind: LabelKind = "grade",
) -> list[str]:
    """Every source the review page offers for ``kind``, annotators first."""
    prefix = FILE_SOURCE[kind]
    files: list[str] = list(
        collection.qrels_sources
        if kind == "grade"
        else collection.judgment_sources
        if kind == "rating"
        else collection.assignment_sources
    )
    names = [f"annotator:{a}" for a in db.annotators()]
    names += ["rule:latest", "rule:majority"]
    names += [f"{prefix}:{n}" for n in files]
    names += [n for n in uploads if n.startswith(f"{prefix}:") and n not in names]
    return names


def source_labels(
    source: str,
    db: LabelDB,
    collection: Collection,
    uploads: Mapping[str, Mapping[ItemKey, int]],
    kind: LabelKind = "grade",
) -> dict[ItemKey, int]:
    """The labels of a named source, ``{(qid, doc, question or 0): value}`` (negative values
    left out)."""
    from ragmeter.web.export import select_labels

    family, _, name = source.partition(":")
    if family == "annotator" and name:
        return select_labels(db, kind, annotator=name)
    if family == "rule" and name in ("latest", "majority"):
        return select_labels(db, kind, rule=name)  # type: ignore[arg-type]
    if family == FILE_SOURCE[kind]:
        if kind == "grade" and name in collection.qrels_sources:
            grades = collection.qrels_sources[name].grades
            return {(q, d, 0): g for (q, d), g in grades.items() if g >= 0}
        if kind == "rating" and name in collection.judgment_sources:
            return {k: v for k, v in collection.judgment_sources[name].items() if v >= 0}
        if kind == "nugget" and name in collection.assignment_sources:
            return dict(collection.assignment_sources[name])
        if source in uploads:
            return {k: v for k, v in uploads[source].items() if v >= 0}
    raise InputError(f"unknown {kind} source {source!r}", field="source")


def review(
    a_name: str,
    b_name: str,
    a: Mapping[_Key, int],
    b: Mapping[_Key, int],
    *,
    kind: LabelKind = "grade",
    threshold: int = 4,
    grade_map: str = "",
    clip: str = "",
) -> Review:
    """The agreement of source ``b`` with source ``a`` on the scale of ``kind``
    (:func:`ragmeter.stats.agreement.label_agreement`), after the grade map and clipping
    given as text (``"4:3,5:3"``, ``"0:3"``; empty: none). A malformed one is an
    :class:`~ragmeter.errors.InputError` naming its field."""
    from ragmeter.stats.agreement import parse_clip, parse_label_map

    try:
        mapping = parse_label_map(grade_map) if grade_map.strip() else None
    except ValueError as exc:
        raise InputError(str(exc), field="map") from None
    try:
        bounds = parse_clip(clip.strip()) if clip.strip() else None
    except ValueError as exc:
        raise InputError(str(exc), field="clip") from None
    return label_agreement(
        a,
        b,
        a_name=a_name,
        b_name=b_name,
        kind=kind,
        scale=SCALE[kind],
        threshold=threshold,
        grade_map=mapping,
        clip=bounds,
    )
