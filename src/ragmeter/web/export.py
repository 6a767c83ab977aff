"""Exports of the web app's labels: TREC qrels and CRUX judgments JSONL.

Which labels: one annotator's current labels, or every annotator's combined by a rule
(:func:`ragmeter.web.labels.aggregate`: ``latest`` or ``majority``).

* qrels: ``qid 0 docid grade`` per labelled (query, passage), grades 1–5, queries and doc ids
  in byte order (:func:`ragmeter.io.trec.format_trec_qrels`);
* judgments: ``{"query_id", "doc_id", "ratings"}`` per passage with at least one rated
  sub-question, one rating per sub-question of the query (a sub-question not rated is 0,
  as in the long TSV form), passages in pool order (:func:`ragmeter.io.judgments.format_judgments`);
* assignments: one line per labelled (query, answer or passage, nugget),
  ``{"run_id" or "docid", "qid", "nugget_id", "assignment"}``, the ``--assignments`` of
  ``ragmeter evaluate`` (:mod:`ragmeter.io.nuggets`);
* spans: one line per evidence span selected in a passage, ``{"query_id", "doc_id",
  "start", "end", "grade", "text", "annotator"}``, the ``--spans`` of ``ragmeter evaluate``
  (:mod:`ragmeter.io.spans`): every span of every annotator (or of one), each naming who
  made it; offsets index the passage's text as Python does (code points).

Every export carries its provenance (:mod:`ragmeter.io.provenance`): written beside the
file as ``NAME.provenance.jsonl``, or downloaded as ``qrels.txt.provenance.jsonl`` (…). The
labels are human: one annotator's export names that annotator; a combined export names, per
(query, passage) — for a nugget label the passage or ``answer:RUN`` —, the annotator whose
label won (``latest``), or, when several annotators' labels made it (``majority``, or
``latest`` over sub-questions or nuggets labelled by different people), a ``human`` source
whose note lists them (:func:`export_provenance`). The sidecar records the digest of the
exported labels (:func:`export_sidecar`: qrels by their (query, doc, grade) triples, the
others by their lines), so a download of the sidecar matches the labels downloaded with the
same choice while nobody labels in between — and says so when they do not.

Files are written only inside the server's export directory, under a plain file name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from ragmeter.core.data import Qrels
from ragmeter.core.judgments import Judgments
from ragmeter.core.provenance import LabelProvenance, LabelSource, RowsKind, human_source
from ragmeter.errors import InputError
from ragmeter.web.collection import Collection
from ragmeter.web.labels import AggregationRule, ItemKey, LabelDB, LabelKind, aggregate

ExportKind = Literal["qrels", "judgments", "assignments", "spans"]

#: a plain file name: no directory part, no leading dot, nothing a shell or a URL mangles
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def select_labels(
    db: LabelDB,
    kind: LabelKind,
    *,
    annotator: str | None = None,
    rule: AggregationRule = "latest",
) -> dict[ItemKey, int]:
    """One annotator's current labels, or everyone's combined by ``rule``."""
    if annotator is not None:
        return db.current(kind, annotator=annotator).get(annotator, {})
    labels = db.current(kind)
    clock = db.latest_times(kind) if rule == "latest" else None
    return aggregate(labels, rule, clock=clock)


def export_provenance(
    kind: LabelKind,
    db: LabelDB,
    *,
    annotator: str | None = None,
    rule: AggregationRule = "latest",
) -> LabelProvenance | None:
    """Who made each exported label (module docstring); ``None`` when nothing is labelled."""
    if annotator is not None:
        return LabelProvenance.single(human_source(annotator), "human")
    labels = db.current(kind)
    if not labels:
        return None
    clock = db.latest_times(kind) if rule == "latest" else None
    makers: dict[tuple[str, str], set[str]] = {}
    winner: dict[ItemKey, tuple[int, str]] = {}
    for name, items in labels.items():
        for key in items:
            if clock is None:
                makers.setdefault((key[0], key[1]), set()).add(name)
            elif key not in winner or clock[(name, key)] > winner[key][0]:
                winner[key] = (clock[(name, key)], name)
    for key, (_, name) in winner.items():
        makers.setdefault((key[0], key[1]), set()).add(name)
    sources: dict[str, LabelSource] = {}
    pairs: dict[tuple[str, str], str] = {}
    for pair, names in makers.items():
        ordered = sorted(names)
        sid = "human:" + "+".join(ordered)
        if sid not in sources:
            sources[sid] = (
                human_source(ordered[0])
                if len(ordered) == 1
                else LabelSource(kind="human", note=f"{rule} of annotators {', '.join(ordered)}")
            )
        pairs[pair] = sid
    most = max(sources, key=lambda s: (sum(1 for v in pairs.values() if v == s), s))
    return LabelProvenance(sources, {p: s for p, s in pairs.items() if s != most}, default=most)


def export_rows(kind: ExportKind) -> RowsKind:
    """What the sidecar of an export hashes (:mod:`ragmeter.io.provenance`): the (query,
    doc, grade) triples of qrels, the lines of anything else."""
    return "qrels" if kind == "qrels" else "records"


def export_sidecar(
    kind: ExportKind,
    db: LabelDB,
    collection: Collection,
    *,
    annotator: str | None = None,
    rule: AggregationRule = "latest",
) -> str | None:
    """The text of the provenance sidecar of the export :func:`export_text` gives for the
    same arguments, bound to it by its digest; ``None`` when nothing is labelled."""
    from ragmeter.core.provenance import rows_digest
    from ragmeter.io.provenance import format_provenance, label_rows

    prov = export_provenance(_LABEL_KIND[kind], db, annotator=annotator, rule=rule)
    if prov is None:
        return None
    text = export_text(kind, db, collection, annotator=annotator, rule=rule)
    rows = export_rows(kind)
    return format_provenance(prov, rows_digest(rows, label_rows(text, rows, f"{kind} export")))


#: the label kind an export holds
_LABEL_KIND: dict[str, LabelKind] = {
    "qrels": "grade",
    "judgments": "rating",
    "assignments": "nugget",
}


def qrels_from_labels(labels: dict[ItemKey, int], *, name: str = "labels") -> Qrels:
    """Graded labels ``{(qid, doc, 0): grade}`` as :class:`~ragmeter.core.data.Qrels`."""
    keys = list(labels)
    return Qrels.from_columns(
        [k[0] for k in keys], [k[1] for k in keys], [labels[k] for k in keys], name=name
    )


def judgments_from_labels(
    labels: dict[ItemKey, int], collection: Collection, *, name: str = "labels"
) -> Judgments:
    """Sub-question ratings ``{(qid, doc, question): rating}`` as
    :class:`~ragmeter.core.judgments.Judgments` (unrated sub-questions of a rated passage: 0)."""
    rows: dict[tuple[str, str], list[int]] = {}
    for (q, d, question), value in labels.items():
        width = collection.n_questions(q)
        if not 1 <= question <= width:
            continue  # the sub-questions file changed since; such a rating has no column
        rows.setdefault((q, d), [0] * width)[question - 1] = value
    position = {(q, d): i for q, docs in collection.pools.items() for i, d in enumerate(docs)}
    keys = sorted(rows, key=lambda k: (k[0], position.get(k, len(position)), k[1]))
    questions = {q: collection.subquestions[q] for q in {k[0] for k in keys}}
    return Judgments.from_rows(
        [k[0] for k in keys],
        [k[1] for k in keys],
        [rows[k] for k in keys],
        questions=questions,
        name=name,
    )


def export_text(
    kind: ExportKind,
    db: LabelDB,
    collection: Collection,
    *,
    annotator: str | None = None,
    rule: AggregationRule = "latest",
) -> str:
    """The text of a qrels or judgments export (empty when nothing is labelled)."""
    from ragmeter.io.judgments import format_judgments
    from ragmeter.io.trec import format_trec_qrels

    if kind == "qrels":
        graded = select_labels(db, "grade", annotator=annotator, rule=rule)
        return format_trec_qrels(qrels_from_labels(graded)) if graded else ""
    if kind == "spans":
        return spans_text(db, collection, annotator=annotator)
    if kind == "assignments":
        return assignments_text(
            select_labels(db, "nugget", annotator=annotator, rule=rule), collection
        )
    rated = select_labels(db, "rating", annotator=annotator, rule=rule)
    if not rated:
        return ""
    judged = judgments_from_labels(rated, collection)
    return format_judgments(judged) if len(judged) else ""


def spans_text(db: LabelDB, collection: Collection, *, annotator: str | None = None) -> str:
    """The live evidence spans as span-label JSONL rows, each with its annotator."""
    import json

    lines = []
    for span in db.spans(annotator):
        text = collection.doc_texts.get(span.doc_id, "")
        row = {
            "query_id": span.query_id,
            "doc_id": span.doc_id,
            "start": span.start,
            "end": span.end,
            "grade": span.grade,
            "text": text[span.start : span.end],
            "annotator": span.annotator,
        }
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(lines)


def assignments_text(labels: dict[ItemKey, int], collection: Collection) -> str:
    """Nugget labels ``{(qid, target, number): 0..2}`` as assignment lines (a nugget number
    the nuggets file no longer has is left out)."""
    import json

    from ragmeter.core.nuggets import SUPPORT_LABELS

    lines = []
    for (q, target, number), value in sorted(labels.items()):
        nuggets = collection.nuggets.get(q, [])
        if not 1 <= number <= len(nuggets):
            continue
        where = (
            {"run_id": target.removeprefix("answer:")}
            if target.startswith("answer:")
            else {"docid": target}
        )
        row = {**where, "qid": q, "nugget_id": nuggets[number - 1][0]}
        row["assignment"] = SUPPORT_LABELS[value]
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(lines)


def safe_export_path(directory: Path, filename: str) -> Path:
    """``directory / filename`` for a plain file name; anything that could leave the
    directory (separators, ``..``, a leading dot, absolute paths, links) is refused."""
    if not _SAFE_NAME.fullmatch(filename) or ".." in filename:
        raise InputError(
            f"export file name {filename!r} refused; expected a plain name such as "
            "'qrels.txt' (letters, digits, '.', '_', '-'; no directories)",
            field="filename",
        )
    root = directory.resolve()
    target = (root / filename).resolve()
    if target.parent != root:
        raise InputError(f"export file name {filename!r} leaves the export directory")
    return target
