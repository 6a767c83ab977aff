"""eRAG labels (Salemi & Zamani, "Evaluating Retrieval Quality in Retrieval-Augmented
Generation", SIGIR 2024): each of a query's top-K passages is given *alone* to the generator
with the query, and the generated answer's score against the query's gold answers is the
passage's label.

For passage ``d`` of query ``q`` with the generator's answer ``a(q, d)`` and gold answers
``G(q)``::

    label(q, d) = max over g in G(q) of metric(a(q, d), g)

``metric`` is one of ragmeter's answer metrics (:mod:`ragmeter.metrics.answers`): ``em``
(exact match, 0/1) or ``f1`` (token F1), after SQuAD's normalisation, or ``rougeL`` (ROUGE-L
F on rouge-score's tokens); each is already the maximum over the gold answers. With
``binarize=T`` the label is ``1 if score ≥ T else 0``.

Integer labels (``em``, or any metric binarized) are written as TREC qrels, on which every
measure family runs; continuous scores (``f1``, ``rougeL`` unbinarized) cannot be qrels (their
grades are integers) and are written as a utilities file (``qid docid score`` lines, or JSONL
rows ``{query_id, doc_id, utility}`` for ``.jsonl``) that ``ragmeter evaluate --utilities``
reads. eRAG's own code aggregates continuous labels with precision (their mean over the top k)
and success (their maximum) only.

A query without gold answers is not sent to the generator: its pairs stay unlabelled, and the
count is reported (NA, never 0). A gold answer that normalises to nothing ("The": SQuAD's
normalisation, on the NFKC form, drops articles and punctuation) is no gold answer, as for
``answer_recall``: it would match every empty answer. The generated answers are cached
(task ``erag``); the metric and threshold are applied when the labels are shaped, so
changing them asks nothing again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.core.gold_answers import GoldAnswers
from ragmeter.io._common import atomic_write_text
from ragmeter.judges.api import Job, TaskResult, _ok, pair_items
from ragmeter.judges.tasks import make_task
from ragmeter.judges.types import JudgeItem, Judgment

#: the answer metrics a label can be computed with (``--metric``)
ERAG_METRICS = ("em", "f1", "rougeL")


def score_answer(answer: str, gold: Sequence[str], metric: str) -> float:
    """``metric`` of ``answer`` against the gold answers, the maximum over them (see the
    module docstring). Raises ValueError for an unknown metric or no gold answer."""
    from ragmeter.metrics import answers as am

    if metric not in ERAG_METRICS:
        choices = ", ".join(ERAG_METRICS)
        raise ValueError(f"unknown eRAG metric {metric!r}; expected one of {choices}")
    usable = usable_gold(gold)
    if not usable:
        raise ValueError("no gold answer to score against (none normalises to a word)")
    if metric == "em":
        value: float | None = am.exact_match(answer, usable)
    elif metric == "f1":
        value = am.token_f1(answer, usable)
    else:
        value = am.rouge_l(answer, usable)
    assert value is not None  # gold is not empty
    return float(value)


def usable_gold(gold: Sequence[str] | None) -> list[str]:
    """The gold answers a label can be scored against: those that keep a word after the
    answer normalisation shared with ``answer_recall`` and the answer metrics
    (:func:`ragmeter.metrics.answers.normalize_answer`, NFKC first). "The" is no gold answer:
    its normalised form is empty and would match every empty answer."""
    from ragmeter.metrics.answers import normalize_answer

    return [g for g in gold or () if normalize_answer(g)]


def label_of(score: float, binarize: float | None) -> float | int:
    """The label of a score: 1/0 at threshold ``binarize`` (score ≥ T), else the score (an
    int when it is 0 or 1, as exact match's)."""
    if binarize is not None:
        return int(score >= binarize)
    return int(score) if score in (0.0, 1.0) else score


@dataclass
class EragLabels:
    """Each pair's label ``{qid: {docid: label}}`` and the generated answers it was scored on;
    ``integer``: every label is 0/1 (written as qrels), else continuous (a utilities file)."""

    labels: dict[str, dict[str, float | int]]
    answers: dict[str, dict[str, str]]
    integer: bool
    #: queries of the run left out for want of gold answers
    no_gold: list[str] = field(default_factory=list)
    queries: int = 0


def erag_job(
    runs: Sequence[Any] | Any,
    queries: Any,
    corpus: Any,
    gold: GoldAnswers,
    *,
    depth: int | None = 10,
    metric: str = "em",
    binarize: float | None = None,
    max_tokens: int | None = None,
) -> Job:
    """The eRAG task's items (the top ``depth`` passages of the run(s), queries with gold
    answers only) and shaping into :class:`EragLabels` (see the module docstring)."""
    from ragmeter.judges.errors import JudgeConfigError

    if metric not in ERAG_METRICS:
        choices = ", ".join(ERAG_METRICS)
        raise JudgeConfigError(f"unknown --metric {metric!r}; expected one of {choices}")
    if binarize is not None and not 0.0 <= binarize <= 1.0:
        raise JudgeConfigError(f"--binarize must lie in [0, 1], got {binarize}")
    every = pair_items(runs, queries, corpus, depth=depth)
    asked = list(dict.fromkeys(item.ident[0] for item in every))
    no_gold = [q for q in asked if not usable_gold(gold.answers_of(q))]
    without = set(no_gold)
    items = [item for item in every if item.ident[0] not in without]

    def shape(items: Sequence[JudgeItem], results: Sequence[Judgment | None]) -> EragLabels:
        labels: dict[str, dict[str, float | int]] = {}
        answers: dict[str, dict[str, str]] = {}
        for item, j in zip(items, results, strict=True):
            if j is None or not _ok(j):
                continue
            q, d = item.ident
            answer = str(j.value)
            score = score_answer(answer, gold.answers_of(q) or (), metric)
            labels.setdefault(q, {})[d] = label_of(score, binarize)
            answers.setdefault(q, {})[d] = answer
        integer = metric == "em" or binarize is not None
        return EragLabels(labels, answers, integer, no_gold, len(asked))

    return EragJob(
        make_task("erag", max_tokens=max_tokens), items, shape, metric=metric, binarize=binarize
    )


@dataclass
class EragJob(Job):
    """A :class:`~ragmeter.judges.api.Job` whose result's source records the scoring and
    whose notes count the queries without gold answers."""

    metric: str = "em"
    binarize: float | None = None

    def execute(self, judge: Any, **options: Any) -> TaskResult:
        return with_scoring(super().execute(judge, **options), self.metric, self.binarize)


def describe_scoring(metric: str, binarize: float | None) -> str:
    """How the labels were made, for the provenance sidecar's ``aggregation``."""
    how = f"eRAG: {metric} of the answer from the passage alone vs the gold answers (max)"
    return how if binarize is None else f"{how}, 1 when ≥ {binarize:g}"


def notes(result: TaskResult) -> list[str]:
    """The report's lines: the queries without gold answers (NA) and what was written."""
    labels: EragLabels = result.labels
    out = []
    if labels.no_gold:
        shown = ", ".join(labels.no_gold[:5]) + (" …" if len(labels.no_gold) > 5 else "")
        with_gold = labels.queries - len(labels.no_gold)
        out.append(
            f"gold answers: none for {len(labels.no_gold)} of {labels.queries} queries "
            f"({shown}): their passages are unlabelled (NA, n={with_gold}/{labels.queries}; "
            "an answer that normalises to nothing, such as 'The', is none)"
        )
    kind = "qrels (0/1 labels)" if labels.integer else "utilities (continuous scores in [0, 1])"
    out.append(f"eRAG labels written as {kind}")
    return out


def write_erag(labels: EragLabels, path: str | os.PathLike[str]) -> None:
    """0/1 labels as TREC qrels ``qid 0 docid label``; continuous scores as utilities
    (``qid docid score`` lines; JSONL rows ``{query_id, doc_id, utility}`` for ``.jsonl``)."""
    from ragmeter.judges.api import write_qrels

    if labels.integer:
        write_qrels(
            {q: {d: int(v) for d, v in ds.items()} for q, ds in labels.labels.items()}, path
        )
        return
    jsonl = Path(path).suffix.lower() == ".jsonl"
    lines = []
    for q, docs in labels.labels.items():
        for d, score in docs.items():
            value = round(float(score), 12)
            if jsonl:
                row = {"query_id": q, "doc_id": d, "utility": value}
                lines.append(json.dumps(row, ensure_ascii=False) + "\n")
            else:
                lines.append(f"{q} {d} {value!r}\n")
    atomic_write_text(path, "".join(lines))


def judge_erag(
    runs: Sequence[Any] | Any,
    queries: Any,
    corpus: Any,
    gold: GoldAnswers,
    *,
    judge: Any,
    cache: Any = ":memory:",
    depth: int | None = 10,
    metric: str = "em",
    binarize: float | None = None,
    max_tokens: int | None = None,
    refresh: bool = False,
) -> TaskResult:
    """Run :func:`erag_job` (cached) with ``judge`` as the generator: ``labels`` is an
    :class:`EragLabels`; the source records the scoring (``aggregation``)."""
    job = erag_job(
        runs,
        queries,
        corpus,
        gold,
        depth=depth,
        metric=metric,
        binarize=binarize,
        max_tokens=max_tokens,
    )
    return job.execute(judge, cache=cache, refresh=refresh)


def with_scoring(result: TaskResult, metric: str, binarize: float | None) -> TaskResult:
    """``result`` with its source's ``aggregation`` saying how the labels were scored, and
    the report's notes."""
    from dataclasses import replace

    if result.source is not None:
        result.source = replace(result.source, aggregation=describe_scoring(metric, binarize))
    result.notes += notes(result)
    return result


__all__ = [
    "ERAG_METRICS",
    "EragJob",
    "EragLabels",
    "describe_scoring",
    "erag_job",
    "judge_erag",
    "label_of",
    "score_answer",
    "usable_gold",
    "with_scoring",
    "write_erag",
]
