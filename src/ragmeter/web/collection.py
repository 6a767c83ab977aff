"""What the web app labels: queries, passages, the pool of each query, sub-questions and the
qrels files to review against.

The pool of a query is the union of the top ``depth`` passages of each run, ordered by their
best rank in any run (then doc id), followed by the passages that the given qrels judge and
no run retrieved (in doc id order). Texts come from the queries and corpus files; a missing
text is shown as missing, never invented.

No web-stack import here: the collection is plain data, read with :mod:`ragmeter.io`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragmeter.core.data import Qrels, Run
from ragmeter.core.judgments import Judgments
from ragmeter.errors import InputError


@dataclass(frozen=True)
class QrelsSource:
    """A qrels file (or upload) to review labels against: ``{(qid, doc): grade}``."""

    name: str
    grades: dict[tuple[str, str], int]

    @classmethod
    def from_qrels(cls, qrels: Qrels, *, name: str) -> QrelsSource:
        return cls(
            name,
            {(q, d): g for q, docs in qrels.to_dict().items() for d, g in docs.items()},
        )


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
    """

    query_ids: list[str]
    query_texts: dict[str, str] = field(default_factory=dict)
    doc_texts: dict[str, str] = field(default_factory=dict)
    pools: dict[str, list[str]] = field(default_factory=dict)
    subquestions: dict[str, list[str]] = field(default_factory=dict)
    qrels_sources: dict[str, QrelsSource] = field(default_factory=dict)
    judgment_sources: dict[str, dict[tuple[str, str, int], int]] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)

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
) -> Collection:
    """Read the inputs of ``ragmeter serve`` into a :class:`Collection`.

    The queries to label are those of the pools (runs and ``qrels``), in the order of the
    queries file when given (then the rest by id); ``compare_qrels`` are only reviewed
    against, never pooled, and so are ``compare_judgments`` (sub-question ratings, read with
    the sub-questions when given).
    """
    from ragmeter.io.judgments import read_corpus, read_judgments, read_questions
    from ragmeter.io.readers import read_qrels, read_run

    if depth < 1:
        raise InputError(f"depth {depth} < 1; expected the number of passages per query")
    run_objs = [read_run(p) for p in runs]
    pooled = [read_qrels(p) for p in qrels]
    if not run_objs and not pooled:
        raise InputError("nothing to label: give --run (pools) and/or --qrels")
    pools = build_pools(run_objs, pooled, depth=depth)
    query_texts: dict[str, str] = {}
    if queries is not None:
        table = read_corpus(queries, name="queries")
        query_texts = dict(zip(table.doc_ids.to_pylist(), table.texts.to_pylist(), strict=True))
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
        sources[name] = QrelsSource.from_qrels(obj, name=name)
    questions = read_questions(subquestions) if subquestions is not None else {}
    rated: dict[str, dict[tuple[str, str, int], int]] = {}
    for path in compare_judgments:
        judged = read_judgments(path, questions=questions or None)
        rated[unique_name(Path(path).name, rated)] = judgment_cells(judged)
    return Collection(
        query_ids=order,
        query_texts=query_texts,
        doc_texts=doc_texts,
        pools=pools,
        subquestions=questions,
        qrels_sources=sources,
        judgment_sources=rated,
        runs=run_objs,
    )


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
