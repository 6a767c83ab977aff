"""What the web app labels: queries, passages, the pool of each query, sub-questions and the
qrels files to review against.

The pool of a query is the union of the top ``depth`` passages of each run, ordered by their
best rank in any run (then doc id), followed by the passages that the given qrels judge and
no run retrieved (in doc id order). A labelling queue (``ragmeter sample``,
:mod:`ragmeter.io.label_queue`) replaces the pools: exactly its queries, in its order, each
with exactly its passages; runs and qrels are then not pooled (the runs still feed the
evaluation page, the qrels are reviewed against). Texts come from the queries and corpus
files; a missing text is shown as missing, never invented.

No web-stack import here: the collection is plain data, read with :mod:`ragmeter.io`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.core.data import Qrels, Run
from ragmeter.core.judgments import Judgments
from ragmeter.errors import InputError
from ragmeter.io.label_queue import LabelQueue


@dataclass(frozen=True)
class QrelsSource:
    """A qrels file (or upload) to review labels against: ``{(qid, doc): grade}``."""

    name: str
    grades: dict[tuple[str, str], int]
    #: what :func:`ragmeter.analysis.calibration.describe_labels` says of the file's labels
    #: (their provenance when a judge made some, a calibration's figures), shown beside
    #: numbers computed on them
    label_notes: tuple[str, ...] = ()
    #: the file read (``None`` for an upload)
    path: Path | None = None

    @classmethod
    def from_qrels(cls, qrels: Qrels, *, name: str, path: Path | None = None) -> QrelsSource:
        from ragmeter.analysis.calibration import describe_labels

        grades = {(q, d): g for q, docs in qrels.to_dict().items() for d, g in docs.items()}
        judged = [pair for pair, g in grades.items() if g >= 0]
        notes = describe_labels(path, pairs=judged) if path is not None else []
        return cls(name, grades, tuple(notes), path)


@dataclass
class Collection:
    """Queries, passages and pools to label.

    Attributes:
        query_ids: the queries to label, in display order.
        query_texts: text of each query (absent: shown by id).
        doc_texts: passage texts by doc id.
        pools: passages to label per query, in display order.
        subquestions: sub-question texts per query (1-based numbers in the UI and exports).
        qrels_sources: qrels to review against, by name (the given qrels and compare files).
        judgment_sources: sub-question ratings to review against, by name:
            ``{(qid, doc, question): rating}`` (question 1-based).
        runs: the runs the pools came from (for the evaluation page).
        nuggets: per query, its nuggets ``(id, text, importance)`` (1-based numbers in the UI).
        nugget_targets: per query, the texts its nuggets are assigned to, ``(target, text)``:
            each run's answer (``answer:RUN``) and each assessed passage (its doc id).
        assignment_sources: nugget assignments to review against, by name:
            ``{(qid, target, nugget number): 0 | 1 | 2}``.
        llm_source: the name (in ``qrels_sources``) of the LLM labels the calibration page
            sets the human labels against (``--llm-qrels``); ``None`` when not given.
        queue: the labelling queue served (``--queue``), whose inclusion probabilities
            weight the labelled queries of the calibration page's estimates.
    """

    query_ids: list[str]
    query_texts: dict[str, str] = field(default_factory=dict)
    doc_texts: dict[str, str] = field(default_factory=dict)
    pools: dict[str, list[str]] = field(default_factory=dict)
    subquestions: dict[str, list[str]] = field(default_factory=dict)
    qrels_sources: dict[str, QrelsSource] = field(default_factory=dict)
    judgment_sources: dict[str, dict[tuple[str, str, int], int]] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)
    nuggets: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    nugget_targets: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)
    assignment_sources: dict[str, dict[tuple[str, str, int], int]] = field(default_factory=dict)
    llm_source: str | None = None
    queue: LabelQueue | None = None

    def __post_init__(self) -> None:
        self._pool_sets = {q: set(docs) for q, docs in self.pools.items()}

    def missing_texts(self) -> list[str]:
        """What the pages cannot show, one sentence each: queries or passages without a text
        (no ``--queries`` / ``--corpus``, or ids those files lack). Empty when every text is
        there; ``ragmeter serve`` prints these at start."""
        out: list[str] = []
        passages = sorted({d for docs in self.pools.values() for d in docs})
        for what, option, ids, texts in (
            ("queries", "--queries", self.query_ids, self.query_texts),
            ("passages", "--corpus", passages, self.doc_texts),
        ):
            lacking = [i for i in ids if i not in texts]
            if not lacking:
                continue
            if not texts:
                out.append(
                    f"no {option} given: the {len(ids)} {what} show their ids only, "
                    f"without text (give {option} FILE.jsonl with {{id, text}} rows)"
                )
                continue
            shown = ", ".join(lacking[:5]) + (", …" if len(lacking) > 5 else "")
            out.append(
                f"{option} has no text for {len(lacking)} of the {len(ids)} {what} to "
                f"label ({shown}): they show their ids only"
            )
        return out

    def has_query(self, query_id: str) -> bool:
        return query_id in self._pool_sets

    def in_pool(self, query_id: str, doc_id: str) -> bool:
        return doc_id in self._pool_sets.get(query_id, ())

    def is_target(self, query_id: str, target: str) -> bool:
        """Whether ``target`` is a text the nuggets of ``query_id`` are assigned to."""
        return any(t == target for t, _ in self.nugget_targets.get(query_id, ()))

    def n_questions(self, query_id: str) -> int:
        return len(self.subquestions.get(query_id, ()))

    def neighbours(self, query_id: str) -> tuple[str | None, str | None]:
        """The previous and next query (for navigation)."""
        i = self.query_ids.index(query_id)
        before = self.query_ids[i - 1] if i > 0 else None
        after = self.query_ids[i + 1] if i + 1 < len(self.query_ids) else None
        return before, after


def build_pools(runs: Sequence[Run], qrels: Sequence[Qrels], *, depth: int) -> dict[str, list[str]]:
    """Per query: the top ``depth`` of every run by best rank (ties by doc id), then the
    judged passages no run retrieved there (by doc id)."""
    best: dict[str, dict[str, int]] = {}
    for run in runs:
        for q, docs in run.ranked().items():
            ranks = best.setdefault(q, {})
            for rank, d in enumerate(docs[:depth], start=1):
                ranks[d] = min(rank, ranks.get(d, rank))
    pools = {q: sorted(ranks, key=lambda d: (ranks[d], d)) for q, ranks in best.items()}
    for qr in qrels:
        for q, grades in qr.to_dict().items():
            pool = pools.setdefault(q, [])
            seen = set(pool)
            pool.extend(sorted(d for d in grades if d not in seen))
    return pools


def load_collection(
    *,
    queries: Path | None = None,
    corpus: Path | None = None,
    runs: Sequence[Path] = (),
    qrels: Sequence[Path] = (),
    compare_qrels: Sequence[Path] = (),
    compare_judgments: Sequence[Path] = (),
    subquestions: Path | None = None,
    depth: int = 10,
    nuggets: Path | None = None,
    nugget_assignments: Sequence[Path] = (),
    rag_answers: Path | None = None,
    queue: Path | None = None,
    llm_qrels: Path | None = None,
) -> Collection:
    """Read the inputs of ``ragmeter serve`` into a :class:`Collection`.

    The queries to label are those of the pools (runs and ``qrels``), in the order of the
    queries file when given (then the rest by id); ``compare_qrels`` are only reviewed
    against, never pooled, and so are ``compare_judgments`` (sub-question ratings, read with
    the sub-questions when given). With ``nuggets``, the nuggets of each query are assigned
    on their own page to the answers of ``rag_answers`` and to the passages the
    ``nugget_assignments`` assess (an LLM's assignments, reviewed against). With ``queue``,
    its queries and passages, in its order, are what is labelled (the module docstring).
    ``llm_qrels`` (an LLM judge's qrels) are reviewed against too, and are the LLM labels of
    the calibration page.
    """
    from ragmeter.io.judgments import read_corpus, read_judgments, read_questions
    from ragmeter.io.readers import read_qrels, read_run

    if depth < 1:
        raise InputError(f"depth {depth} < 1; expected the number of passages per query")
    run_objs = [read_run(p) for p in runs]
    pooled = [read_qrels(p) for p in qrels]
    if not run_objs and not pooled and queue is None:
        raise InputError("nothing to label: give --run (pools) and/or --qrels, or --queue")
    query_texts: dict[str, str] = {}
    if queries is not None:
        table = read_corpus(queries, name="queries")
        query_texts = dict(zip(table.doc_ids.to_pylist(), table.texts.to_pylist(), strict=True))
    queued = None
    if queue is not None:
        from ragmeter.io.label_queue import read_label_queue

        queued = read_label_queue(queue)
        pools = queued.docs()
        order = list(pools)
    else:
        pools = build_pools(run_objs, pooled, depth=depth)
        order = [q for q in query_texts if q in pools] + sorted(
            q for q in pools if q not in query_texts
        )
    doc_texts: dict[str, str] = {}
    if corpus is not None:
        table = read_corpus(corpus)
        doc_texts = dict(zip(table.doc_ids.to_pylist(), table.texts.to_pylist(), strict=True))
    sources: dict[str, QrelsSource] = {}
    for path, obj in [
        *zip(qrels, pooled, strict=True),
        *((p, read_qrels(p)) for p in compare_qrels),
    ]:
        name = unique_name(Path(path).name, sources)
        sources[name] = QrelsSource.from_qrels(obj, name=name, path=Path(path))
    llm_source = llm_source_name(llm_qrels, sources) if llm_qrels is not None else None
    questions = read_questions(subquestions) if subquestions is not None else {}
    rated: dict[str, dict[tuple[str, str, int], int]] = {}
    for path in compare_judgments:
        judged = read_judgments(path, questions=questions or None)
        rated[unique_name(Path(path).name, rated)] = judgment_cells(judged)
    if nuggets is None and (nugget_assignments or rag_answers is not None):
        raise InputError("--nugget-assignments and --rag-answers need --nuggets")
    extra = (
        load_nuggets(nuggets, nugget_assignments, rag_answers, doc_texts)
        if nuggets is not None
        else {}
    )
    return Collection(
        query_ids=order,
        query_texts=query_texts,
        doc_texts=doc_texts,
        pools=pools,
        subquestions=questions,
        qrels_sources=sources,
        judgment_sources=rated,
        runs=run_objs,
        llm_source=llm_source,
        queue=queued,
        **extra,
    )


def llm_source_name(path: Path, sources: dict[str, QrelsSource]) -> str:
    """The name of the LLM qrels ``path`` among ``sources``: the source already read from
    the same file (given as ``--compare-qrels`` too), else a new one added to ``sources``."""
    from ragmeter.io.readers import read_qrels

    for name, held in sources.items():
        if held.path is not None and held.path.resolve() == path.resolve():
            return name
    name = unique_name(path.name, sources)
    sources[name] = QrelsSource.from_qrels(read_qrels(path), name=name, path=path)
    return name


def load_nuggets(
    nuggets: Path, assignments: Sequence[Path], answers: Path | None, doc_texts: Mapping[str, str]
) -> dict[str, Any]:
    """The nugget fields of a :class:`Collection`: the nuggets, the texts they are assigned
    to (the answers of ``answers``, a TREC RAG answer file, then every passage an assignment
    file assesses) and each assignment file as a source to review against."""
    from ragmeter.io.nuggets import read_assignments, read_nuggets, read_rag_answers

    read = read_nuggets(nuggets)
    numbers = {q: {n.id: i for i, n in enumerate(ns, start=1)} for q, ns in read.by_query.items()}
    targets: dict[str, dict[str, str | None]] = {q: {} for q in read.by_query}
    if answers is not None:
        for a in read_rag_answers(answers).answers:
            if a.query_id in targets:
                targets[a.query_id][f"answer:{a.run_id}"] = a.text
    sources: dict[str, dict[tuple[str, str, int], int]] = {}
    for path in assignments:
        given = read_assignments(path, read)
        cells: dict[tuple[str, str, int], int] = {}
        for (run, q), codes in given.answers.items():
            targets[q].setdefault(f"answer:{run}", None)
            cells.update({(q, f"answer:{run}", numbers[q][n]): c for n, c in codes.items()})
        for (q, doc), codes in given.passages.items():
            targets[q].setdefault(doc, doc_texts.get(doc))
            cells.update({(q, doc, numbers[q][n]): c for n, c in codes.items()})
        sources[unique_name(Path(path).name, sources)] = cells
    return {
        "nuggets": {
            q: [(n.id, n.text, n.importance) for n in ns] for q, ns in read.by_query.items()
        },
        "nugget_targets": {q: list(t.items()) for q, t in targets.items() if t},
        "assignment_sources": sources,
    }


def judgment_cells(judgments: Judgments) -> dict[tuple[str, str, int], int]:
    """Every rating of ``judgments`` as ``{(qid, doc, question 1..n): rating}``."""
    docs = judgments.doc_ids.to_pylist()
    ratings = judgments.ratings.tolist()
    bounds = judgments.rating_offsets.tolist()
    cells: dict[tuple[str, str, int], int] = {}
    for i, q in enumerate(judgments.query_ids.tolist()):
        for row in range(int(judgments.offsets[i]), int(judgments.offsets[i + 1])):
            for n, value in enumerate(ratings[bounds[row] : bounds[row + 1]], start=1):
                cells[(q, docs[row], n)] = value
    return cells


def unique_name(name: str, taken: Mapping[str, object]) -> str:
    """``name``, or ``name (2)``, ``name (3)``… when taken."""
    if name not in taken:
        return name
    n = 2
    while f"{name} ({n})" in taken:
        n += 1
    return f"{name} ({n})"
