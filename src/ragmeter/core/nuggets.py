"""Nuggets, nugget assignments and citation support (TREC 2024 RAG track, AutoNuggetizer).

Per query, a list of **nuggets**: atomic facts a good answer contains, each ``vital`` or
``okay``. An **assignment** says how far a text supports a nugget: ``support``,
``partial_support`` or ``not_support``. Assignments are made to a generated answer of a run
(keyed ``(run, query)``) or to a retrieved passage (keyed ``(query, doc)``: nuggetizer's
retrieval mode, for nugget coverage of the context). **Citation support** says, for each
sentence of an answer, how far each segment it cites supports it (the same three labels).

The measures over these live in :mod:`ragmeter.metrics.nuggets`; the readers in
:mod:`ragmeter.io.nuggets`. :func:`nugget_view` joins them onto one run's evaluated queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter.core.data import IntArray, Qrels
from ragmeter.errors import InputError, MissingInputError

_V = TypeVar("_V")

SupportLabel = Literal["not_support", "partial_support", "support"]
Importance = Literal["vital", "okay"]

#: the assignment labels, in the order of their codes 0, 1, 2
SUPPORT_LABELS: tuple[SupportLabel, ...] = ("not_support", "partial_support", "support")
IMPORTANCE_LEVELS: tuple[Importance, ...] = ("vital", "okay")
#: the code of each label (0 = not, 1 = partial, 2 = full support)
SUPPORT_CODE: Mapping[str, int] = {label: i for i, label in enumerate(SUPPORT_LABELS)}

CodeArray = npt.NDArray[np.int8]


@dataclass(frozen=True)
class Nugget:
    """One nugget of a query: its id (unique within the query), text and importance."""

    id: str
    text: str
    importance: Importance

    @property
    def vital(self) -> bool:
        return self.importance == "vital"


@dataclass(frozen=True, eq=False)
class Nuggets:
    """The nuggets of each query, in their given order."""

    by_query: Mapping[str, tuple[Nugget, ...]]
    source: str = "<nuggets>"

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Sequence[tuple[str, str] | tuple[str, str, str]]]
    ) -> Nuggets:
        """Nuggets from ``{qid: [(text, importance), ...]}`` (ids ``"1"``, ``"2"``, … in
        order) or ``{qid: [(id, text, importance), ...]}``."""
        by_query: dict[str, tuple[Nugget, ...]] = {}
        for q, items in data.items():
            nuggets = []
            for i, item in enumerate(items, start=1):
                nid, text, imp = (str(i), *item) if len(item) == 2 else item
                nuggets.append(Nugget(str(nid), str(text), check_importance(imp, "<dict>")))
            by_query[str(q)] = tuple(nuggets)
        out = cls(by_query, "<dict>")
        out.check()
        return out

    def check(self) -> None:
        """Nugget ids are unique within each query."""
        for q, nuggets in self.by_query.items():
            ids = [n.id for n in nuggets]
            if len(set(ids)) != len(ids):
                dup = next(i for i in ids if ids.count(i) > 1)
                raise InputError(f"query '{q}': nugget id '{dup}' given twice", source=self.source)

    @property
    def query_ids(self) -> list[str]:
        return list(self.by_query)

    def __len__(self) -> int:
        return sum(len(n) for n in self.by_query.values())

    def query_qrels(self) -> Qrels:
        """Qrels naming the queries with nuggets and no judgment: what an evaluation of the
        nugget measures alone aligns against."""
        return query_qrels(self.by_query, self.source)


def query_qrels(queries: Iterable[str], name: str) -> Qrels:
    """Qrels naming ``queries`` (in byte order) without any judgment."""
    ordered = sorted(set(queries), key=lambda q: q.encode("utf-8"))
    return Qrels(
        query_ids=np.array(ordered, dtype=object),
        offsets=np.zeros(len(ordered) + 1, dtype=np.int64),
        doc_ids=pa.array([], type=pa.string()),
        grades=np.zeros(0, dtype=np.int32),
        name=name,
    )


def check_importance(value: object, source: str, line: int | None = None) -> Importance:
    """``value`` as an importance (``vital`` / ``okay``, any case), else an error."""
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text == "vital":
        return "vital"
    if text == "okay":
        return "okay"
    raise InputError(f"importance {value!r}: expected 'vital' or 'okay'", source=source, line=line)


def check_label(value: object, source: str, line: int | None = None, *, what: str) -> int:
    """The code of an assignment label (``support`` / ``partial_support`` / ``not_support``)."""
    text = value.strip().lower() if isinstance(value, str) else None
    if text is None or text not in SUPPORT_CODE:
        raise InputError(
            f"{what} {value!r}: expected one of {', '.join(SUPPORT_LABELS)}",
            source=source,
            line=line,
        )
    return SUPPORT_CODE[text]


@dataclass(frozen=True, eq=False)
class NuggetAssignments:
    """Assignment codes (0 not, 1 partial, 2 full support) of nuggets to texts.

    ``answers[(run, qid)][nugget_id]``: to the answer of ``run`` (``""``: a file that names no
    run) for query ``qid``; ``passages[(qid, doc)][nugget_id]``: to a retrieved passage.
    """

    answers: Mapping[tuple[str, str], Mapping[str, int]] = field(default_factory=dict)
    passages: Mapping[tuple[str, str], Mapping[str, int]] = field(default_factory=dict)
    source: str = "<assignments>"

    @property
    def run_ids(self) -> list[str]:
        """The runs whose answers are assigned, in first-seen order."""
        return list(dict.fromkeys(r for r, _ in self.answers))

    def for_run(self, run: str) -> dict[str, Mapping[str, int]]:
        """``{qid: {nugget_id: code}}`` of the answers of ``run``: the assignments naming it,
        else those of a file that names no run (its answers are whatever run is evaluated)."""
        return _of_run(self.answers, run, "nugget assignments", f"{self.source} assigns")

    @staticmethod
    def merge(parts: Iterable[NuggetAssignments]) -> NuggetAssignments:
        """Several files' assignments as one; a key given twice is an error."""
        answers: dict[tuple[str, str], Mapping[str, int]] = {}
        passages: dict[tuple[str, str], Mapping[str, int]] = {}
        sources = []
        for part in parts:
            sources.append(part.source)
            for target, given in ((answers, part.answers), (passages, part.passages)):
                for k, v in given.items():
                    if k in target:
                        raise InputError(f"assignments of {k} given twice", source=part.source)
                    target[k] = v
        return NuggetAssignments(answers, passages, " + ".join(sources))


def _of_run(answers: Mapping[tuple[str, str], _V], run: str, kind: str, by: str) -> dict[str, _V]:
    """``{qid: value}`` of the ``(run, qid)`` keys naming ``run``, else of a file that names no
    run (``""``); none when there are no answers. ``kind`` and ``by`` (the source and its verb)
    word the error for a run the answers do not name."""
    runs = list(dict.fromkeys(r for r, _ in answers))
    key = run if run in runs else ("" if runs == [""] else None)
    if key is None:
        if not runs:
            return {}
        raise MissingInputError(
            f"no {kind} for run '{run}'; {by} the answers of {', '.join(repr(r) for r in runs)}"
        )
    return {q: v for (r, q), v in answers.items() if r == key}


@dataclass(frozen=True)
class SentenceSupport:
    """One answer sentence: its cited doc ids and the support code of each (``line``: the
    support file's line, for errors; not compared)."""

    citations: tuple[str, ...]
    codes: tuple[int, ...]
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True, eq=False)
class CitationSupport:
    """Per ``(run, qid)``: the sentences of the answer, in order, with their citations'
    support (``""`` as run: a file that names no run)."""

    answers: Mapping[tuple[str, str], tuple[SentenceSupport, ...]]
    source: str = "<citation support>"

    def for_run(self, run: str) -> dict[str, tuple[SentenceSupport, ...]]:
        """``{qid: sentences}`` of ``run`` (the same rule as :meth:`NuggetAssignments.for_run`)."""
        return _of_run(self.answers, run, "citation support", f"{self.source} judges")

    def query_qrels(self) -> Qrels:
        """Qrels naming the queries with judged answers (see :meth:`Nuggets.query_qrels`)."""
        return query_qrels((q for _, q in self.answers), self.source)


@dataclass(frozen=True, eq=False)
class NuggetView:
    """One run's nugget inputs joined onto its evaluated queries (see :func:`nugget_view`).

    Attributes:
        vital: per evaluated query, a boolean array over its nuggets (``None``: no nuggets).
        answer: per evaluated query, the codes of its nuggets in the run's answer
            (``None``: the run's answer to the query is not assessed).
        items: per evaluated query, the codes of (retrieved item × nugget) in rank order,
            0 where a passage has no assignment (``None`` without nuggets).
        sentences: per evaluated query, the citation support of the answer's sentences
            (``None``: not judged).
    """

    vital: list[npt.NDArray[np.bool_] | None]
    answer: list[CodeArray | None]
    items: list[npt.NDArray[np.int8] | None]
    sentences: list[tuple[SentenceSupport, ...] | None]
    has_nuggets: bool
    has_passages: bool
    has_citations: bool


def _answer_codes(
    q: str, nuggets: tuple[Nugget, ...], given: Mapping[str, int], source: str
) -> CodeArray:
    missing = [n.id for n in nuggets if n.id not in given]
    if missing:
        raise InputError(
            f"query '{q}': the answer has no assignment for nugget '{missing[0]}'"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
            source=source,
        )
    unknown = set(given) - {n.id for n in nuggets}
    if unknown:
        raise InputError(
            f"query '{q}': assignment to unknown nugget '{sorted(unknown)[0]}'", source=source
        )
    return np.array([given[n.id] for n in nuggets], dtype=np.int8)


def check_run_names(
    n_runs: int,
    assignments: NuggetAssignments | None,
    citations: CitationSupport | None,
) -> None:
    """A file that names no run holds the answers of one run: evaluating several runs with it
    would give each the same answers' labels, so it is an error."""
    if n_runs < 2:
        return
    for given, what in ((assignments, "nugget assignments"), (citations, "citation support")):
        if given is None:
            continue
        keys = given.answers
        if keys and {r for r, _ in keys} == {""}:
            raise InputError(
                f"the {what} name no run_id, so they are one run's; {n_runs} runs are "
                "evaluated: give each line its run_id (the run's name)",
                source=given.source,
            )


def nugget_view(
    run_name: str,
    query_ids: Sequence[str],
    item_docs: Sequence[Sequence[str]],
    *,
    nuggets: Nuggets | None = None,
    assignments: NuggetAssignments | None = None,
    citations: CitationSupport | None = None,
) -> NuggetView:
    """Join the nugget inputs onto a run's evaluated ``query_ids`` (with the doc ids each
    retrieves, in rank order, in ``item_docs``). A query whose nuggets lack an assignment in an
    assessed answer, or an assignment to a nugget the query does not have, is an error."""
    n = len(query_ids)
    vital: list[npt.NDArray[np.bool_] | None] = [None] * n
    answer: list[CodeArray | None] = [None] * n
    items: list[npt.NDArray[np.int8] | None] = [None] * n
    sentences: list[tuple[SentenceSupport, ...] | None] = [None] * n
    if nuggets is not None:
        answers = assignments.for_run(run_name) if assignments is not None else {}
        source = assignments.source if assignments is not None else ""
        passages = assignments.passages if assignments is not None else {}
        for i, q in enumerate(query_ids):
            own = nuggets.by_query.get(q)
            if own is None:
                continue
            vital[i] = np.array([x.vital for x in own], dtype=bool)
            if q in answers:
                answer[i] = _answer_codes(q, own, answers[q], source)
            grid = np.zeros((len(item_docs[i]), len(own)), dtype=np.int8)
            for j, doc in enumerate(item_docs[i]):
                given = passages.get((q, doc))
                if given:
                    grid[j] = [given.get(x.id, 0) for x in own]
            items[i] = grid
    if citations is not None:
        judged = citations.for_run(run_name)
        for i, q in enumerate(query_ids):
            sentences[i] = judged.get(q)
    return NuggetView(
        vital,
        answer,
        items,
        sentences,
        has_nuggets=nuggets is not None and assignments is not None,
        has_passages=assignments is not None and bool(assignments.passages),
        has_citations=citations is not None,
    )


def split_items(doc_ids: Sequence[str], offsets: IntArray) -> list[list[str]]:
    """``doc_ids`` cut into per-query lists by CSR ``offsets``."""
    bounds = offsets.tolist()
    return [list(doc_ids[a:b]) for a, b in pairwise(bounds)]


@dataclass(frozen=True)
class AnswerSentence:
    """A sentence of a generated answer and the doc ids it cites, in order."""

    text: str
    citations: tuple[str, ...] = ()


@dataclass(frozen=True)
class RagAnswer:
    """A run's answer to a query as TREC RAG submits it (Ragnarök's format): sentences with
    citations, and the references (segment ids) the answer was generated from, in order."""

    run_id: str
    query_id: str
    sentences: tuple[AnswerSentence, ...]
    references: tuple[str, ...] = ()
    query: str = ""
    line: int | None = None

    @property
    def text(self) -> str:
        """The answer's text: its sentences joined by spaces."""
        return " ".join(s.text.strip() for s in self.sentences if s.text.strip())


@dataclass(frozen=True, eq=False)
class RagAnswers:
    """The answers of a TREC RAG answer file (one or several runs)."""

    answers: tuple[RagAnswer, ...]
    source: str = "<answers>"

    @property
    def run_ids(self) -> list[str]:
        return list(dict.fromkeys(a.run_id for a in self.answers))


__all__ = [
    "IMPORTANCE_LEVELS",
    "SUPPORT_CODE",
    "SUPPORT_LABELS",
    "AnswerSentence",
    "CitationSupport",
    "Nugget",
    "NuggetAssignments",
    "NuggetView",
    "Nuggets",
    "RagAnswer",
    "RagAnswers",
    "SentenceSupport",
    "check_importance",
    "check_label",
    "check_run_names",
    "nugget_view",
    "query_qrels",
    "split_items",
]
